/* Shared by the libFuzzer targets in tests/fuzz: an input written to a scratch file (the
 * readers under test take paths), and the split of an input into parts.
 *
 * Each target keeps one scratch file per process (or named files in a scratch directory),
 * in $TMPDIR or /tmp, rewritten for every input and removed at exit. Not part of hetsim: built only
 * with -Dfuzz=true (clang).
 */
#ifndef HETSIM_FUZZ_UTIL_H
#define HETSIM_FUZZ_UTIL_H

#include <stddef.h>
#include <stdint.h>

/* Writes data[0..size) to scratch file `slot` (0..3) of this process and returns its path
 * (valid until the next call for that slot). Aborts if the file cannot be written: that is
 * the harness failing, not the code under test. */
const char *fuzz_file(int slot, const uint8_t *data, size_t size);

/* Writes data[0..size) to the file `name` (a plain file name, or one folder and a file name:
 * "run/metrics.csv") in this process's scratch directory, made at the first call in $TMPDIR
 * or /tmp, and returns its path (valid until the next call); with data NULL, removes that
 * file instead. The directory, its folders and the files written in it (at most 8 names)
 * are removed at exit. Aborts if the file cannot be written or removed. For readers that take
 * a path relative to another file (a sweep's base, a sweep's run directories). */
const char *fuzz_dir_file(const char *name, const uint8_t *data, size_t size);

/* Splits data at the first occurrence of `sep` (not included): *head gets the part before,
 * the return value points after it (data + size when absent, with *tail_size 0). */
const uint8_t *fuzz_split(const uint8_t *data, size_t size, const char *sep, size_t *head,
                          size_t *tail_size);

#endif
