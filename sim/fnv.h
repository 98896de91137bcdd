/* FNV-1a 64, the one byte hash of the project.
 *
 * It names what a file or a text was, so that a change is seen: a compute.profile's and a
 * LIBSVM file's bytes (sim/layers.c, models/), a trace's points (scenario/scenario_inputs.c),
 * a golden's fingerprint (app/check_golden.c), a resolved scenario (scenario_hash) and a
 * tensor's checksum. It catches an edit, not a forgery. The offset basis and the prime are
 * those of the FNV specification (Fowler, Noll and Vo, draft-eastlake-fnv). Header only.
 */
#ifndef SIM_FNV_H
#define SIM_FNV_H

#include <stddef.h>
#include <stdint.h>

#define SIM_FNV_OFFSET UINT64_C(0xcbf29ce484222325) /* 14695981039346656037 */
#define SIM_FNV_PRIME  UINT64_C(0x100000001b3)      /* 1099511628211 */

/* The offset basis a file's identity starts from (a compute.profile's bytes, a LIBSVM file's,
 * a trace's points): FNV's with its last digit left out, a slip of the first profile reader
 * kept because run.json's profile_fnv records it and a sweep's points are matched by it. */
#define SIM_FNV_FILE_OFFSET UINT64_C(1469598103934665603)

/* h with the byte b hashed in. */
static inline uint64_t sim_fnv_byte(uint64_t h, unsigned char b)
{
    return (h ^ b) * SIM_FNV_PRIME;
}

/* h with the n bytes at p hashed in. */
static inline uint64_t sim_fnv_bytes(uint64_t h, const void *p, size_t n)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++)
        h = sim_fnv_byte(h, b[i]);
    return h;
}

/* h with the bytes of the string s (without its NUL) hashed in. */
static inline uint64_t sim_fnv_text(uint64_t h, const char *s)
{
    for (; *s != '\0'; s++)
        h = sim_fnv_byte(h, (unsigned char)*s);
    return h;
}

#endif
