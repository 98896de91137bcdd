/* Text files hetsim reads: the rules every reader shares.
 *
 * A UTF-8 byte-order mark (EF BB BF) may open any text file hetsim reads, and is no part of
 * its first line: a scenario's (cJSON skips it), a layer profile's (sim/layers.c), a trace's
 * (scenario/scenario_stragglers.c), a LIBSVM file's (models/data_libsvm.c) and a results
 * file's (outputs/csv.c), each through sim_text_bom. Header only.
 */
#ifndef SIM_TEXT_H
#define SIM_TEXT_H

#include <stddef.h>
#include <string.h>

/* The UTF-8 byte-order mark. */
#define SIM_TEXT_BOM "\xef\xbb\xbf"

/* The length of the byte-order mark that opens s[0..len): 3, or 0 when none does. */
static inline size_t sim_text_bom(const char *s, size_t len)
{
    return len >= 3 && memcmp(s, SIM_TEXT_BOM, 3) == 0 ? 3 : 0;
}

#endif
