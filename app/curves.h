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

/* Reads dir/metrics.csv into `c` with the one strict reader of results files (sim/csv.h,
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

/* What the band around a mean curve spans. */
enum app_curve_band {
    APP_CURVE_BAND_CI95 = 0, /* the 95% Student-t interval of the mean (app/stats.h) */
    APP_CURVE_BAND_MINMAX,   /* the minimum and maximum */
};

/* Writes dir/name (atomically), a CSV with the columns x, acc_mean, acc_lo, acc_hi,
 * loss_mean, loss_lo, loss_hi, tp_mean, tp_lo, tp_hi, n: per row index, the mean over the
 * `n` curves that have that row, the band's ends (`band`; with one value, lo = hi = mean) and
 * how many curves have the row (x: the mean of column `x_col`). */
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

/* Reads dir/workers.csv into `w` with the strict reader (sim/csv.h, sim_csv_workers),
 * finding its columns by name (samples, compute_s, comm_s, wait_s and bytes_sent required;
 * down_s and comm_overlap_s optional); an empty field counts as 0. SIM_EINVAL: missing (as
 * app_curve_read), not in the reader's form, a required column absent, a field that is not a
 * non-negative finite number (naming the file and line); SIM_EIO; SIM_ENOMEM. */
int app_workers_read(const char *dir, app_workers *w, sim_err *err);

#endif
