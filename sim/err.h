/* Error values and messages shared by every module.
 *
 * Fallible functions return 0 (SIM_OK) or a negative SIM_E* code and take a `sim_err *`
 * last, which they fill with the code, the JSON path of the offending value (if any) and a
 * message in lower case without a trailing period. `err` may be NULL when the caller does
 * not want the text. The table below is the only list of codes (libuv style).
 */
#ifndef SIM_ERR_H
#define SIM_ERR_H

#include <stdio.h>

#define SIM_ERRORS(X)                    \
    X(OK, 0, "success")                  \
    X(ENOMEM, -1, "out of memory")       \
    X(EINVAL, -2, "invalid argument")    \
    X(ESCENARIO, -3, "invalid scenario") \
    X(EIO, -4, "input/output error")     \
    X(ENUMERIC, -5, "numerical failure")

enum sim_err_code {
#define SIM_ERR_ENUM(name, value, text) SIM_##name = (value),
    SIM_ERRORS(SIM_ERR_ENUM)
#undef SIM_ERR_ENUM
};

/* Room for an error's parts, each cut between UTF-8 characters when it does not fit. A file is
 * a path as the system takes it (docs/usage.md allows 4,000 bytes); a JSON path up to 511
 * bytes (a key of 200 bytes of "é" was cut at 159), a longer one cut and ended with "..."; a
 * message holds two file paths and its text (a check names the scenario and the golden's
 * run.json). A sim_err is about 15 KB: declared on the stack a frame or two deep, copied only
 * once it failed. */
enum {
    SIM_ERR_FILE_MAX = 4096,
    SIM_ERR_PATH_MAX = 512,
    SIM_ERR_MSG_MAX = 10240,
    /* sim_err_format's whole text: "file: path: message" */
    SIM_ERR_TEXT_MAX = SIM_ERR_FILE_MAX + SIM_ERR_PATH_MAX + SIM_ERR_MSG_MAX + 8,
};

typedef struct sim_err {
    int code;                    /* SIM_OK or a negative SIM_E* code */
    char file[SIM_ERR_FILE_MAX]; /* file the error is about (scenario, dataset, trace), or "" */
    char path[SIM_ERR_PATH_MAX]; /* JSON path such as "$.workers[2].speed", or "" */
    char msg[SIM_ERR_MSG_MAX];   /* lower case, no trailing period */
} sim_err;

/* Clears `err` to SIM_OK with empty strings. Accepts NULL. */
void sim_err_clear(sim_err *err);

/* Fills `err` (if not NULL) with `code`, `path` (NULL for none) and a printf-style message,
 * truncating what does not fit (a path cut ends with "..."). Returns `code`, so that
 * `return sim_err_set(...)` works. */
int sim_err_set(sim_err *err, int code, const char *path, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* Sets the JSON path the error is about to `path`, cut as sim_err_set cuts one (a caller
 * that names the section above a path it was given). Accepts NULL. */
void sim_err_path(sim_err *err, const char *path);

/* Sets the file name the error is about, unless one is already set. Returns err->code. */
int sim_err_file(sim_err *err, const char *file);

/* Formats `err` as "file: path: message" (parts that are empty are left out) into `buf`;
 * SIM_ERR_TEXT_MAX bytes hold the whole of it. */
void sim_err_format(const sim_err *err, char *buf, unsigned long size);

/* Writes "hetsim: " and the printf-style text to `log` (if not NULL) as a line, its control
 * bytes and bytes that are no UTF-8 escaped as sim_err_set escapes a message's: for warnings
 * that quote names (a directory is any bytes). */
void sim_err_warn(FILE *log, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The same without "hetsim: ": a status line that quotes names (the sweep's index, plot's
 * directory) to `out`, as a message shows them. */
void sim_err_line(FILE *out, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The fixed description of a code, or "unknown error". */
const char *sim_strerror(int code);

#endif
