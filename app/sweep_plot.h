/* Figures of a finished sweep: `hetsim plot SWEEP_DIR --by KEY [--x time|epoch|samples]
 * [--band ci|minmax] [--target ACC]`.
 *
 * Reads SWEEP_DIR/index.csv (app/index.h) and the metrics.csv of every run it lists, groups
 * the runs by the value of the column KEY (a swept key, or "seed"), and draws (PNG, or PDF or
 * SVG with --format):
 *   by-KEY.png            test accuracy, test loss and throughput against x, a line per value
 *                         of KEY at the mean over its runs (its seeds, and any other grid
 *                         entry) with a band: the 95% Student-t interval of the mean (default)
 *                         or the min-max over the runs (plots/bands.gp); up to
 *                         APP_SWEEP_PLOT_MAX_VALUES values, colours and dash patterns cycled,
 *                         the legend outside the panels;
 *   breakdown-by-KEY.png  where the workers' time went per value of KEY, a stacked bar of
 *                         shares: compute, the computation that communication overlapped
 *                         (workers.csv's comm_overlap_s, when the files have it),
 *                         communication, waiting, and down time (when a worker was down), each
 *                         the mean over the value's runs of the run's share of its workers'
 *                         summed time (plots/shares.gp; workers.csv read by its header names);
 *   ttt-by-KEY.png        time to test accuracy ACC per value of KEY, read from the curves
 *                         whether or not the runs stopped there: a bar at the mean over the
 *                         runs that reached it with its 95% interval, "k/n reached" when some
 *                         did not, "not reached (> T s)" when none did (plots/bars.gp); the
 *                         title states ACC. ACC defaults to the runs' stop.target_accuracy;
 *                         without either, or when no run reached it, the figure is not drawn
 *                         and the log says why.
 * The data of each figure is written next to it as CSV (by-KEY-<i>.csv for the i-th value in
 * the order of the legend, breakdown-by-KEY.csv, ttt-by-KEY.csv; a label holding a comma, any
 * array value, quoted by sim_output_csv_field, which gnuplot reads whole); the gnuplot
 * scripts compute nothing. Points without results (stop_reason "missing": a run that failed,
 * or was not run) are left out, and said so on the log.
 */
#ifndef APP_SWEEP_PLOT_H
#define APP_SWEEP_PLOT_H

#include <stdio.h>

#include "app/curves.h"
#include "sim/err.h"
#include "sim/plot.h"

/* The most values of KEY drawn: by-KEY's legend grows 51 pixels a line past 16, and Cairo,
 * which draws gnuplot's PNG figures, refuses an image taller than 32767 pixels (about 636
 * values); the other two figures' bars widen 45 pixels each (about 715). More values are
 * refused before anything is written, in every format. */
#define APP_SWEEP_PLOT_MAX_VALUES 600

typedef struct app_sweep_plot_options {
    const char *sweep_dir;    /* the sweep's output directory */
    const char *key;          /* the column to group by */
    enum app_curve_col x;     /* APP_CURVE_TIME, _SAMPLES or _EPOCH */
    enum app_curve_band band; /* the bands of by-KEY.png */
    double target;            /* the target accuracy, or NaN: the runs' stop target */
    sim_plot_format format;   /* the figures' format (PNG, PDF or SVG) */
    const char *out_dir;      /* where the figures go */
} app_sweep_plot_options;

/* Draws the figures, naming the points left out and a time-to-target figure not drawn on
 * `log` (NULL: silent). SIM_EINVAL: no index.csv (with a hint), KEY not one of its columns
 * (the message lists them), runs with different stop targets and no --target, no point with
 * results, the metrics.csv or workers.csv of a run with results missing (app/curves.h: the
 * message says to run it again) or damaged (sim/csv.h: the file and line), more than
 * APP_SWEEP_PLOT_MAX_VALUES values of KEY (nothing written); SIM_EIO (gnuplot, files);
 * SIM_ENOMEM. */
int app_sweep_plot(const app_sweep_plot_options *o, FILE *log, sim_err *err);

/* Labels for `hetsim plot RUN...`: labels[i] receives, for a run that is a point of a sweep
 * (its parent directory's index.csv lists its directory), its overrides "KEY=VALUE,..." (the
 * swept keys and seed) that differ between the sweep points among `dirs`, or all of them
 * when none differ; NULL for any other run. The caller frees each label. SIM_ENOMEM only (an
 * unreadable index leaves the label NULL). */
int app_sweep_point_labels(const char *const *dirs, size_t n, char **labels, sim_err *err);

#endif
