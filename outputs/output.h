/* Output files: atomic writes, number formatting, extra summary values.
 *
 * Every output file is written to "<name>.tmp" in its run directory and renamed over
 * "<name>" only when complete (sim_file_commit), so an interrupted or failed run never
 * leaves a truncated file under the final name; sim_file_abort removes the temporary.
 * Numbers follow DESIGN §9: floats "%.9g", doubles "%.17g", the C locale (nothing here
 * calls setlocale); JSON has no NaN or infinity, so those are written as null.
 */
#ifndef OUTPUTS_OUTPUT_H
#define OUTPUTS_OUTPUT_H

#include <stddef.h>
#include <stdio.h>

#include "sim/err.h"

typedef struct sim_file sim_file;

/* Creates `dir` and its missing parents (mode 0777 before umask); a symbolic link to a
 * directory not made yet (a link to nothing) gets its target made. SIM_EIO naming the
 * directory on failure (for example a path component that is a file). */
int sim_output_mkdirs(const char *dir, sim_err *err);

/* "dir/name" followed by `suffix` ("" for none) in a fresh string (free it), NULL when out
 * of memory. */
char *sim_output_join(const char *dir, const char *name, const char *suffix);

/* Makes the temporary `tmp` (a name hetsim writes by, then renames) afresh and returns its
 * descriptor, open for writing; -1 and `err` (SIM_EIO) if it cannot. Whatever held the name
 * (a temporary a killed command left, a symbolic link, a hard link, a FIFO) loses it, and
 * nothing behind it is opened or changed; a directory there is an error. */
int sim_output_tmp_open(const char *tmp, sim_err *err);

/* Opens dir/name.tmp for writing (made afresh: sim_output_tmp_open). Returns NULL and fills
 * `err` (SIM_EIO, SIM_ENOMEM). */
sim_file *sim_file_open(const char *dir, const char *name, sim_err *err);

/* The stream to write to; valid until commit or abort. */
FILE *sim_file_stream(sim_file *f);

/* Flushes, closes and renames the temporary to its final name, then frees `f`. On a write
 * error the temporary is removed and SIM_EIO returned. */
int sim_file_commit(sim_file *f, sim_err *err);

/* Closes and removes the temporary, then frees `f`. NULL is a no-op. */
void sim_file_abort(sim_file *f);

/* Writes `text` to dir/name atomically. */
int sim_output_write(const char *dir, const char *name, const char *text, sim_err *err);

/* Reads the file at `path` whole into a malloc'd, zero-terminated string, its length (without
 * the zero) in *len when len is not NULL; NULL with errno set if it cannot be opened or read,
 * on ENOMEM, or EFBIG past the cap of a text input (sim_file_read_all: a FIFO fed forever;
 * sim_file_strerror names the cap). Reading stops after the block that holds a NUL byte, which
 * the text then holds (its reader refuses it): /dev/zero, or a file of NUL bytes growing, ends
 * there. */
char *sim_output_read(const char *path, size_t *len);

/* sim_output_read, but a regular file is read to its size at open, past the cap of a text input
 * (sim_file_read_sized): a results file (a long run's metrics.csv) may pass 1 GiB. */
char *sim_output_read_sized(const char *path, size_t *len);

/* sim_output_read for a file hetsim wrote into one of its outputs (a run's run.json or
 * summary.json): one that exists and is no regular file (a FIFO, whose open waited for a
 * writer forever; a device; a symbolic link, which hetsim never writes there: a point's
 * run.json linked to another's was read by plot RUN) is not opened: NULL with errno EINVAL. */
char *sim_output_read_own(const char *path, size_t *len);

/* Writes a CSV field: as it is, or quoted with "" escapes when it holds a comma, a quote or a
 * line end ('\n' or '\r'); outputs/csv.h reads it back. */
void sim_output_csv_field(FILE *f, const char *s);

/* Room for any sim_output_format_g result and its terminating zero. */
#define SIM_OUTPUT_G_MAX 32

/* Formats x into buf[SIM_OUTPUT_G_MAX] exactly as snprintf's "%.*g" with `digits` (1 .. 17)
 * significant digits in the C locale, and returns the length. Integral values of fewer than
 * `digits` digits (counts, whole seconds) skip printf's exact decimal conversion. */
size_t sim_output_format_g(char *buf, double x, int digits);

/* Writes a double as "%.17g", or "null" for NaN and infinities. */
void sim_output_json_double(FILE *f, double x);

/* Writes a JSON string literal with the needed escapes. */
void sim_output_json_string(FILE *f, const char *s);

/* Writes compact JSON text `json` indented by two spaces per level, starting at `level`
 * (the first line is not indented: it continues the current one). Arrays that hold no
 * object or array stay on one line. The text must be valid JSON (as cJSON prints it). */
void sim_output_json_pretty(FILE *f, const char *json, int level);

/* Extra values a protocol adds to summary.json under "protocol" (report hook). Keys must be
 * string literals (they are not copied); values past SIM_REPORT_MAX are ignored. */
#define SIM_REPORT_MAX 32
typedef struct sim_report {
    size_t n;
    const char *key[SIM_REPORT_MAX];
    double value[SIM_REPORT_MAX];
} sim_report;

void sim_report_add(sim_report *r, const char *key, double value);

#endif
