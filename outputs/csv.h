/* CSV files of results read back: one strict reader for every results file hetsim writes and
 * reads again (a run's metrics.csv and workers.csv, a sweep's index.csv), so that a damaged
 * file is refused naming its line, never read as data.
 *
 * Fields are as sim_output_csv_field writes them: bare, or quoted with "" escapes (a quoted
 * field may hold commas, quotes and line ends). sim_csv_read takes the file whole and holds
 * it to that form: a header row, then records each ending with a line end ("\n", or
 * "\r\n"), so a file cut mid-row is refused; every record has the header's field count; no
 * blank line, no NUL byte, no quote inside a bare field or text after a closing quote. Then
 * every field of a column named in `rules` is checked: a finite decimal number in the
 * rule's range ("inf", "nan", "1e400", "0x10", " 1" are not), or empty where the rule allows
 * it, and above the row before's where the rule says so. Columns the rules do not name are kept as
 * text. Errors are SIM_EINVAL naming the file and line ("out/a/metrics.csv: line 7:
 * test_accuracy: 1.5 is above 1").
 *
 * The table keeps the file's text and splits it in place: every cell is a string valid until
 * sim_csv_fini. sim_csv_metrics and sim_csv_workers are the rules of a run's two CSV files
 * (DESIGN §9); a caller with another file passes its own.
 */
#ifndef OUTPUTS_CSV_H
#define OUTPUTS_CSV_H

#include <stdbool.h>
#include <stddef.h>

#include "sim/err.h"

/* The largest number of a results file: far above any count, time or rate a run writes
 * (bytes sent stay below 1e20), and small enough that the statistics computed from them
 * (sums, squares) stay finite. */
#define SIM_CSV_HUGE 1e150

/* What the fields of one column may hold. */
typedef struct sim_csv_rule {
    const char *name; /* the column's header name */
    double lo, hi;    /* a number's range, both ends included */
    bool empty;       /* an empty field is allowed (read as NaN) */
    bool increasing;  /* each row's number above the row before's (no row repeated) */
    bool row_index;   /* each row's number its row's index, 0 on the first (a worker's id) */
    bool growing;     /* each row's number at least the row before's (a count so far) */
} sim_csv_rule;

/* The rules of one file: `n` columns. */
typedef struct sim_csv_rules {
    const sim_csv_rule *rule; /* (n) */
    size_t n;
} sim_csv_rules;

/* A CSV file read whole. */
typedef struct sim_csv {
    char *text;                  /* the file's bytes, split in place; owned */
    char **head;                 /* (ncols) the header's names; owned */
    char **cell;                 /* (nrows * ncols) row r, column c at cell[r * ncols + c]; owned */
    size_t *line;                /* (nrows) the file line each row starts on, for messages; owned */
    size_t ncols;                /* fields of the header */
    size_t nrows;                /* records after the header */
    char path[SIM_ERR_FILE_MAX]; /* the file, for messages: a path whole (docs/usage.md) */
    int open_errno;              /* after sim_csv_read failed to open the file: its errno, else 0 */
} sim_csv;

/* The rules of a run's metrics.csv: time_s (increasing: a row per evaluation), iterations
 * and samples numbers in [0, SIM_CSV_HUGE] (growing, as epoch: counts so far); epoch, the losses,
 * the consensus distance and throughput_sps the same or empty; test_accuracy in [0, 1] or empty. */
extern const sim_csv_rules sim_csv_metrics;

/* The rules of a run's workers.csv: worker (increasing: a row per worker), speed, iterations,
 * samples, the seconds (compute_s, comm_s, wait_s, down_s, comm_overlap_s) and the byte counts
 * numbers in [0, SIM_CSV_HUGE], the seconds and byte counts also empty (read as 0 by its readers);
 * params_fnv is text. */
extern const sim_csv_rules sim_csv_workers;

/* A run's workers.csv `t` has a row per worker of the run: the count its run.json (the file
 * `run_json`) gives as scenario.workers. A file cut at a row's end is well formed but short:
 * SIM_EINVAL naming the file and the first missing row's line ("out/a/workers.csv: line 4:
 * no row for worker 2 (3 workers, out/a/run.json): cut short"), or rows past the count; a
 * count that is no integer >= 1 ("workers": 0 or 1e300) is SIM_EINVAL naming run.json. A
 * run.json that cannot be read or names no worker count is its readers' to refuse: SIM_OK.
 * Each row's counts (iterations, samples, bytes_sent, bytes_received) are whole numbers and its
 * comm_overlap_s at most its compute_s, and its compute_s, comm_s, wait_s and down_s add up
 * to at most sim_time_s of the summary.json beside `run_json` (when there), else SIM_EINVAL
 * naming the file, line and column. */
int sim_csv_check_workers(const sim_csv *t, const char *run_json, sim_err *err);

/* A run's metrics.csv `t` holds the rows its run wrote, none removed or added: its rows'
 * times (column `time_col`) sit on the run's evaluation grid, 0 and every eval.every_s of its
 * run.json (the file `run_json`) but the last, which may come before the next point of the grid
 * (a stop or a stall between two evaluations), and the last row's time is sim_time_s in the
 * run's summary.json (the file `summary_json`): the run evaluates at its end. A row removed
 * (moving the next off the grid, or leaving the last before the end), or appended past the end
 * (at 99 s to a 3 s run), is SIM_EINVAL naming the file and line; so is a summary.json that does
 * not parse or names no end (no number sim_time_s >= 0), or a run.json whose eval.every_s is no
 * number in (0, 1e9]. A run whose summary.json is absent, no regular file (never opened) or
 * empty was written by hand: its rows are held to nothing, SIM_OK; so are they to no grid when
 * its run.json cannot be read or names no eval.every_s. */
int sim_csv_check_metrics(const sim_csv *t, size_t time_col, const char *summary_json,
                          const char *run_json, sim_err *err);

/* Reads the file at `path` into `t` and checks it as above (`rules` NULL: the form only).
 * SIM_EIO when it cannot be read (t->open_errno then tells why: ENOENT for a missing file),
 * SIM_EINVAL for a file not in that form, naming the file and line, SIM_ENOMEM. `t` is
 * zeroed on error but for path and open_errno. */
int sim_csv_read(sim_csv *t, const char *path, const sim_csv_rules *rules, sim_err *err);

/* As sim_csv_read, for the `len` bytes `text` (malloc'd, zero-terminated; `t` takes them
 * over, also on error) read from `path`. */
int sim_csv_parse(sim_csv *t, char *text, size_t len, const char *path, const sim_csv_rules *rules,
                  sim_err *err);

/* Frees what `t` owns and zeroes it. */
void sim_csv_fini(sim_csv *t);

/* The first column named `name`, or -1. */
int sim_csv_column(const sim_csv *t, const char *name);

/* Finds the `n` columns `names` into col[]; SIM_EINVAL "PATH: no column NAME" for the first
 * one the header lacks. */
int sim_csv_require(const sim_csv *t, const char *const *names, size_t n, size_t *col,
                    sim_err *err);

/* The text of row r, column c. */
const char *sim_csv_cell(const sim_csv *t, size_t r, size_t c);

/* The number in row r, column c (NaN for an empty field): for a column the rules checked. */
double sim_csv_number(const sim_csv *t, size_t r, size_t c);

/* True if `s` is a whole finite decimal number (digits, a sign, a point, an exponent; no
 * blank, "inf", "nan" or hexadecimal), stored into *x. */
bool sim_csv_parse_number(const char *s, double *x);

#endif
