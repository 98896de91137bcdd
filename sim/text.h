/* Text files hetsim reads: the rules every reader shares.
 *
 * A UTF-8 byte-order mark (EF BB BF) may open any text file hetsim reads, and is no part of
 * its first line: a scenario's (cJSON skips it), a layer profile's (sim/layers.c), a trace's
 * (scenario/scenario_stragglers.c), a LIBSVM file's (models/data_libsvm.c) and a results
 * file's (outputs/csv.c), each through sim_text_bom. Their numbers are decimal, one rule for
 * every reader (sim_text_decimal). Texts shown (display names, error messages) are UTF-8,
 * checked and cut by whole characters (sim_text_utf8_len). Header only.
 */
#ifndef SIM_TEXT_H
#define SIM_TEXT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* The UTF-8 byte-order mark. */
#define SIM_TEXT_BOM "\xef\xbb\xbf"

/* The length of the byte-order mark that opens s[0..len): 3, or 0 when none does. */
static inline size_t sim_text_bom(const char *s, size_t len)
{
    return len >= 3 && memcmp(s, SIM_TEXT_BOM, 3) == 0 ? 3 : 0;
}

/* True when s[0..len) opens with a byte-order mark of UTF-16 or UTF-32: FF FE (UTF-16LE, and
 * UTF-32LE's FF FE 00 00), FE FF (UTF-16BE) or 00 00 FE FF (UTF-32BE, told where the reader has
 * the bytes past the NUL that opens it: a line reader stops there and says "NUL byte"). A text
 * saved so (Windows PowerShell 5's `>`, a spreadsheet's "Unicode text") holds NUL bytes beside
 * its ASCII. Its readers refuse it as such, with SIM_TEXT_WIDE_TEXT (it was "line 1: a NUL
 * byte", or "column 4: unexpected NUL byte"; UTF-32LE was named "UTF-16 text"). */
static inline bool sim_text_wide(const char *s, size_t len)
{
    const unsigned char *p = (const unsigned char *)s;
    return (len >= 2 && ((p[0] == 0xff && p[1] == 0xfe) || (p[0] == 0xfe && p[1] == 0xff))) ||
           (len >= 4 && p[0] == 0 && p[1] == 0 && p[2] == 0xfe && p[3] == 0xff);
}

#define SIM_TEXT_WIDE_TEXT                                                                     \
    "UTF-16 or UTF-32 text (a UTF-16 or UTF-32 byte-order mark opens the file): hetsim reads " \
    "UTF-8 (save the file as UTF-8)"

/* True when the field s is written in decimal: not empty, and digits, signs, a point and an
 * exponent only. strtod alone also reads hexadecimal ("0x1p3" is 8), "inf", "nan" and
 * "infinity"; a profile's, a trace's and a results file's numbers are refused so (the LIBSVM
 * reader, whose tokens are not fields, refuses an 'x' in a number the same way). The value
 * is strtod's, read after this check. */
static inline bool sim_text_decimal(const char *s)
{
    return s[0] != '\0' && s[strspn(s, "0123456789+-.eE")] == '\0';
}

/* The length of the well-formed UTF-8 character that opens p (1 for an ASCII byte, 2 to 4),
 * or 0 when none does: a stray continuation byte, a byte that opens no character (0xc0,
 * 0xc1, 0xf5 and above), an overlong form, a surrogate, a code point past U+10FFFF, or a
 * character cut short (by the string's end). */
static inline size_t sim_text_utf8_len(const char *s)
{
    const unsigned char *p = (const unsigned char *)s;
    if (p[0] < 0x80)
        return 1;
    size_t n = p[0] >= 0xc2 && p[0] <= 0xdf   ? 2
               : p[0] >= 0xe0 && p[0] <= 0xef ? 3
               : p[0] >= 0xf0 && p[0] <= 0xf4 ? 4
                                              : 0;
    for (size_t i = 1; i < n; i++)
        if ((p[i] & 0xc0) != 0x80)
            return 0;
    if ((p[0] == 0xe0 && p[1] < 0xa0) || (p[0] == 0xed && p[1] >= 0xa0) ||
        (p[0] == 0xf0 && p[1] < 0x90) || (p[0] == 0xf4 && p[1] >= 0x90))
        return 0;
    return n;
}

/* The code point of the n-byte UTF-8 character at s (n from sim_text_utf8_len, 1 to 4). */
static inline unsigned sim_text_code_point(const char *s, size_t n)
{
    static const unsigned lead_mask[] = { 0, 0x7f, 0x1f, 0x0f, 0x07 };
    const unsigned char *p = (const unsigned char *)s;
    unsigned c = p[0] & lead_mask[n];
    for (size_t i = 1; i < n; i++)
        c = (c << 6) | (p[i] & 0x3fu);
    return c;
}

/* Unicode's space separators (Zs) but U+0020: a reader takes each for a plain space. */
static inline bool sim_text_wide_space(unsigned c)
{
    return c == 0xa0 || c == 0x1680 || (c >= 0x2000 && c <= 0x200a) || c == 0x202f || c == 0x205f ||
           c == 0x3000;
}

/* The invisible format characters a terminal acts on or a page hides: U+00AD, U+061C,
 * U+180E, U+200B-U+200F (zero width, marks), U+2028-U+202E (line and paragraph separators,
 * bidirectional embeddings and overrides), U+2060-U+2064, U+2066-U+206F (isolates), U+FEFF (a
 * byte-order mark) and U+FFF9-U+FFFB. Messages escape them (sim/err.c); display names are
 * compared without them (app/names.c). */
static inline bool sim_text_invisible(unsigned c)
{
    return c == 0xad || c == 0x61c || c == 0x180e || (c >= 0x200b && c <= 0x200f) ||
           (c >= 0x2028 && c <= 0x202e) || (c >= 0x2060 && c <= 0x2064) ||
           (c >= 0x2066 && c <= 0x206f) || c == 0xfeff || (c >= 0xfff9 && c <= 0xfffb);
}

/* True when the n-byte character at s (n from sim_text_utf8_len) is U+FFFE or U+FFFF:
 * well-formed UTF-8 but no character of XML, so that a JUnit report or an SVG figure holding
 * one is no XML (Python's parser: "not well-formed (invalid token)"). */
static inline bool sim_text_xml_nonchar(const char *s, size_t n)
{
    const unsigned char *p = (const unsigned char *)s;
    return n == 3 && p[0] == 0xef && p[1] == 0xbf && p[2] >= 0xbe;
}

/* True when the zero-terminated s is well-formed UTF-8 throughout. */
static inline bool sim_text_utf8(const char *s)
{
    for (size_t n; *s != '\0'; s += n)
        if ((n = sim_text_utf8_len(s)) == 0)
            return false;
    return true;
}

/* The offset of the first byte of s[0..len) that opens no well-formed UTF-8 character (see
 * sim_text_utf8_len; s[len] must be readable, a NUL), or SIZE_MAX when there is none. */
static inline size_t sim_text_utf8_bad(const char *s, size_t len)
{
    for (size_t i = 0, n; i < len; i += n)
        if ((n = sim_text_utf8_len(s + i)) == 0 || n > len - i)
            return i;
    return SIZE_MAX;
}

/* Cuts the zero-terminated s before a UTF-8 character that a cut to its size left incomplete
 * at its end (snprintf cuts between bytes): the text keeps whole characters only. */
static inline void sim_text_utf8_trim(char *s)
{
    size_t n = strlen(s), lead = n;
    while (lead > 0 && n - lead < 4 && ((unsigned char)s[lead - 1] & 0xc0) == 0x80)
        lead--;
    if (lead > 0 && (unsigned char)s[lead - 1] >= 0xc0 && sim_text_utf8_len(s + lead - 1) == 0)
        s[lead - 1] = '\0';
}

/* The decimals (1 to 9) that print need and limit apart with "%.*f": a need one past a limit
 * read "about 18.8 GiB, more than ... (18.8 GiB)" at one decimal. */
static inline int sim_text_decimals_apart(double need, double limit)
{
    for (int d = 1; d < 9; d++) {
        char a[64], b[64];
        snprintf(a, sizeof(a), "%.*f", d, need);
        snprintf(b, sizeof(b), "%.*f", d, limit);
        if (strcmp(a, b) != 0)
            return d;
    }
    return 9;
}

#endif
