/* Evaluation curves of finished runs (their metrics.csv), bands over several of them, and
 * the totals of their workers.csv.
 *
 * Shared by `hetsim check` (a golden band against a run), `hetsim plot SWEEP_DIR --by` (the
 * seeds of one value of a key) and `hetsim report`. Rows are matched by position: runs of one
 * scenario evaluate at the same simulated times. Columns are found by their header names,
 * never by position (columns are only ever appended or inserted).
 */
#ifndef APP_CURVES_H
#define APP_CURVES_H

#include <stdbool.h>
#include <stddef.h>

#include "sim/err.h"

/* The columns read, by their metrics.csv names (DESIGN §9). */
enum app_curve_col {
    APP_CURVE_TIME = 0, /* time_s */
    APP_CURVE_SAMPLES,  /* samples */
    APP_CURVE_EPOCH,    /* epoch */
    APP_CURVE_LOSS,     /* test_loss */
    APP_CURVE_ACC,      /* test_accuracy */
    APP_CURVE_TP,       /* throughput_sps */
    APP_CURVE_NCOLS
};

typedef struct app_curve {
    size_t n;                     /* rows */
    double *col[APP_CURVE_NCOLS]; /* (n) each; NaN for an empty field; owned */
} app_curve;

/* The metrics.csv names of the columns, indexed by app_curve_col. */
extern const char *const app_curve_names[APP_CURVE_NCOLS];

/* The error of a run directory's file that is missing: SIM_EINVAL, "an incomplete run
 * directory (files removed, or copied in part): run it again ...: no file PATH", the hint
 * first, before a path that may fill the message. Returns SIM_EINVAL. */
int app_run_file_missing(const char *path, sim_err *err);

/* The same for a file that is empty: "...: empty file PATH". Returns SIM_EINVAL. */
int app_run_file_empty(const char *path, sim_err *err);

/* Reads dir/metrics.csv into `c` with the one strict reader of results files (outputs/csv.h,
 * sim_csv_metrics): a line cut short (no end of line), a row whose field count is not the
 * header's, a field of a known column that is not a finite number in its range ("inf",
 * "nan", "1e400", a negative time or loss, an accuracy above 1) are SIM_EINVAL naming the
 * file and line, as is a missing column. SIM_EINVAL also when the file is missing (an
 * incomplete run directory: the message says to run it again); SIM_EIO if it cannot be read
 * otherwise; SIM_ENOMEM. `c` is zeroed on error. */
int app_curve_read(const char *dir, app_curve *c, sim_err *err);

/* Frees what `c` owns and zeroes it. */
void app_curve_fini(app_curve *c);

/* The simulated time (time_s) of the first evaluation whose test accuracy is at least
 * `target`, or NaN if none is: the time to target read from the curve, whether or not the
 * run stopped there. */
double app_curve_time_to(const app_curve *c, double target);

/* The simulated time of the last evaluation (0 without rows): how long a run that never
 * reached its target was observed. */
double app_curve_last_time(const app_curve *c);

/* How a time to target is read from a curve (docs/compare.md, "Time to target"), the
 * definitions papers use:
 *   APP_TTT_FIRST      the first evaluation at test accuracy >= target (a run's own stop,
 *                      summary.json's and index.csv's time_to_target_s);
 *   APP_TTT_MOVAVG     the first evaluation at which the mean test accuracy of the last k
 *                      evaluations (that one and the k - 1 before it) is >= target;
 *   APP_TTT_SUSTAINED  the first evaluation from which every evaluation to the end of the run
 *                      is >= target (a run that ends below it has not reached it). */
typedef enum app_ttt_kind {
    APP_TTT_FIRST = 0,
    APP_TTT_MOVAVG,
    APP_TTT_SUSTAINED,
} app_ttt_kind;

typedef struct app_ttt_rule {
    app_ttt_kind kind;
    size_t k; /* APP_TTT_MOVAVG's window, in evaluations (2 to APP_TTT_MAX_K) */
} app_ttt_rule;

#define APP_TTT_MAX_K 1000

/* Parses "first", "movavg:K" (K in [2, APP_TTT_MAX_K]) or "sustained" into *rule; false for
 * anything else. */
bool app_ttt_parse(const char *text, app_ttt_rule *rule);

/* The rule as a phrase for captions ("the first evaluation at test accuracy >= 0.8"), and as
 * the option's value ("movavg:3"), into buf[size]. */
void app_ttt_describe(const app_ttt_rule *rule, double target, char *buf, size_t size);
void app_ttt_name(const app_ttt_rule *rule, char *buf, size_t size);

/* The time to `target` of curve c under `rule`, or NaN when it is not reached. */
double app_curve_time_to_rule(const app_curve *c, double target, const app_ttt_rule *rule);

/* What the band around a mean curve spans. */
enum app_curve_band {
    APP_CURVE_BAND_CI95 = 0, /* the 95% Student-t interval of the mean (app/stats.h) */
    APP_CURVE_BAND_MINMAX,   /* the minimum and maximum */
};

/* Writes dir/name (atomically), a CSV with the columns x, acc_mean, acc_lo, acc_hi,
 * loss_mean, loss_lo, loss_hi, tp_mean, tp_lo, tp_hi, n, acc_drop, loss_drop, tp_drop, ends:
 * per row index, the mean over the `n` curves that have that row, the band's ends (`band`;
 * with one value, lo = hi = mean), how many curves have the row (x: the mean of column
 * `x_col`), and, at a row that is the last of `ends` curves but not of every one (runs that
 * stopped early, at their target: the mean is over fewer runs after it), the three means
 * again (NaN elsewhere), for a figure to mark where runs drop out. */
int app_curve_write_band(const char *dir, const char *name, const app_curve *curves, size_t n,
                         enum app_curve_col x_col, enum app_curve_band band, sim_err *err);

/* The totals of a run's workers.csv, summed over its workers. */
typedef struct app_workers {
    size_t n;          /* worker rows */
    double samples;    /* samples */
    double compute_s;  /* compute_s */
    double comm_s;     /* comm_s */
    double wait_s;     /* wait_s */
    double down_s;     /* down_s (0 without the column) */
    double bytes_sent; /* bytes_sent */
    double overlap_s;  /* comm_overlap_s: communication that overlapped the worker's own
                        * computation (0 without the column) */
    bool has_overlap;  /* the file has a comm_overlap_s column */
} app_workers;

/* Reads dir/workers.csv into `w` with the strict reader (outputs/csv.h, sim_csv_workers),
 * finding its columns by name (samples, compute_s, comm_s, wait_s and bytes_sent required;
 * down_s and comm_overlap_s optional); an empty field counts as 0. SIM_EINVAL: missing (as
 * app_curve_read), not in the reader's form, a required column absent, a field that is not a
 * non-negative finite number (naming the file and line); SIM_EIO; SIM_ENOMEM. */
int app_workers_read(const char *dir, app_workers *w, sim_err *err);

#endif
