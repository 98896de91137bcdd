/* Text files hetsim reads: the rules every reader shares.
 *
 * A UTF-8 byte-order mark (EF BB BF) may open any text file hetsim reads, and is no part of
 * its first line: a scenario's (cJSON skips it), a layer profile's (sim/layers.c), a trace's
 * (scenario/scenario_stragglers.c), a LIBSVM file's (models/data_libsvm.c) and a results
 * file's (outputs/csv.c), each through sim_text_bom. Their numbers are decimal, one rule for
 * every reader (sim_text_decimal). Header only.
 */
#ifndef SIM_TEXT_H
#define SIM_TEXT_H

#include <stdbool.h>
#include <stddef.h>
#include <string.h>

/* The UTF-8 byte-order mark. */
#define SIM_TEXT_BOM "\xef\xbb\xbf"

/* The length of the byte-order mark that opens s[0..len): 3, or 0 when none does. */
static inline size_t sim_text_bom(const char *s, size_t len)
{
    return len >= 3 && memcmp(s, SIM_TEXT_BOM, 3) == 0 ? 3 : 0;
}

/* True when the field s is written in decimal: not empty, and digits, signs, a point and an
 * exponent only. strtod alone also reads hexadecimal ("0x1p3" is 8), "inf", "nan" and
 * "infinity"; a profile's, a trace's and a results file's numbers are refused so (the LIBSVM
 * reader, whose tokens are not fields, refuses an 'x' in a number the same way). The value
 * is strtod's, read after this check. */
static inline bool sim_text_decimal(const char *s)
{
    return s[0] != '\0' && s[strspn(s, "0123456789+-.eE")] == '\0';
}

#endif
