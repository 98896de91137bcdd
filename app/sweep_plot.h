/* Figures of a finished sweep: `hetsim plot SWEEP_DIR --by KEY [--x time|epoch|samples]`.
 *
 * Reads SWEEP_DIR/index.csv and the metrics.csv of every run it lists, groups the runs by
 * the value of the column KEY (an override path of the grid, or "seed"), and draws:
 *   by-KEY.png      test accuracy, test loss and throughput against x, a line per value of
 *                   KEY at the mean over its runs (its seeds, and any other grid entry)
 *                   with a min-max band (plots/bands.gp);
 *   ttt-by-KEY.png  time to target accuracy per value of KEY: a bar at the mean over the
 *                   runs that reached it, with a min-max error bar (plots/bars.gp); not
 *                   drawn when no run reached its target (or had none).
 * The data of each figure is written next to it as CSV (by-KEY-<i>.csv, ttt-by-KEY.csv);
 * the gnuplot scripts compute nothing. Points without results (stop_reason "missing": a run
 * that failed, or was not run) are left out, and said so on a log (stderr).
 */
#ifndef APP_SWEEP_PLOT_H
#define APP_SWEEP_PLOT_H

#include <stdio.h>

#include "app/curves.h"
#include "sim/err.h"

/* At most this many values of KEY (one colour each). */
#define APP_SWEEP_PLOT_MAX_VALUES 8

/* Draws the figures of `sweep_dir` into `out_dir`, naming the points left out on `log` (a
 * line each for the first ten, then how many more; NULL: silent). SIM_EINVAL: no
 * index.csv, KEY not one of its columns (the message lists them), more than
 * APP_SWEEP_PLOT_MAX_VALUES values, no point with results, the metrics.csv of a run with
 * results missing; SIM_EIO (gnuplot, files); SIM_ENOMEM. */
int app_sweep_plot(const char *sweep_dir, const char *key, enum app_curve_col x,
                   const char *out_dir, FILE *log, sim_err *err);

#endif
