/* Comparison tables of a finished sweep: `hetsim report SWEEP_DIR --by KEY [--target ACC]
 * [--best-over PATH] [--format md|csv]` (README "Comparing protocols").
 *
 * Reads SWEEP_DIR/index.csv (app/index.h) and, for every run with results, its metrics.csv
 * and workers.csv; groups the runs by the value of KEY (a swept key or "seed") and prints a
 * row per group, in the order the groups first appear in the index:
 *   runs            the runs with results in the group (their seeds, and any other grid
 *                   entry that varies)
 *   time to target  the simulated time of the first evaluation at test accuracy >= ACC, read
 *                   from the curve whether or not the run stopped there: mean and 95%
 *                   Student-t interval over the runs that reached it, and how many did. A run
 *                   that never reached it is censored at its last evaluation T: it counts as
 *                   "> T", never as a number (with none reached, the cell is "> T", T the
 *                   shortest such run)
 *   final and best test accuracy, throughput (summary.json's mean), bytes sent per sample
 *                   (workers.csv: all bytes_sent over all samples), and the shares of the
 *                   workers' time spent waiting and communicating (wait_s and comm_s over
 *                   compute_s + comm_s + wait_s, summed over workers), and, when workers.csv
 *                   has a comm_overlap_s column (communication that overlapped the worker's
 *                   own computation), a column "comm. incl. overlap": comm_s + comm_overlap_s
 *                   over the same total: each the mean and 95% Student-t interval over the
 *                   group's runs (no interval for one run). workers.csv's columns are found by
 *                   their header names.
 * ACC defaults to the runs' stop.target_accuracy (run.json); without either there is no time
 * to target. With --best-over PATH (another swept key), each group's runs are split by the
 * value of PATH and the row is that of the value with the most runs reaching the target
 * (as a share), then the shortest mean time to target, then the best mean final accuracy:
 * each group at its best setting, a tuned comparison. Points without results are left out
 * and counted on `log`.
 */
#ifndef APP_REPORT_H
#define APP_REPORT_H

#include <stdio.h>

#include "sim/err.h"

typedef enum app_report_format {
    APP_REPORT_MD,  /* a Markdown table, then a line saying what the numbers are */
    APP_REPORT_CSV, /* a header and a row per group: means, half-widths, counts */
} app_report_format;

typedef struct app_report_options {
    const char *sweep_dir; /* the sweep's output directory */
    const char *key;       /* the column to group by */
    double target;         /* the target test accuracy, or NaN: the runs' stop target */
    const char *best_over; /* NULL, or a swept key to pick the best value of per group */
    app_report_format format;
} app_report_options;

/* Prints the table to `out`, a line about the points left out to `log` (NULL: silent).
 * SIM_EINVAL: no index.csv (with a hint), KEY or PATH not a swept key (the message lists
 * them), PATH equal to KEY, runs with different stop targets and no --target, no run with
 * results, a run's metrics.csv or workers.csv missing (app/curves.h: the message says to run
 * it again); SIM_EIO: one cannot be read; SIM_ENOMEM. Nothing
 * is printed to `out` on error. */
int app_report_print(const app_report_options *o, FILE *out, FILE *log, sim_err *err);

#endif
