/* Figures of a finished sweep: `hetsim plot SWEEP_DIR --by KEY[,KEY2...] [--where KEY=VALUE]...
 * [--best-over KEY] [--tune-seeds LIST] [--x time|epoch|samples] [--band ci|minmax]
 * [--target ACC] [--ttt RULE] [--size column|page|WxH] [--title TEXT] [--label FROM=TO]...
 * [--names FILE]` (docs/compare.md).
 *
 * The runs are chosen, grouped and tuned by app/select.h (a group that mixes values of a swept
 * key neither grouped by nor tuned over is refused), and drawn (PNG, or PDF or SVG with
 * --format), KEYS the --by text:
 *   by-KEYS.png           test accuracy, test loss and throughput against x, a line per group
 *                         at the mean over its runs with a band: the 95% Student-t interval of
 *                         the mean (default) or the min-max over the runs (plots/bands.gp); a
 *                         colour, a dash pattern and a marker per line (with two --by keys, the
 *                         colour and marker follow the first key's value and the dash pattern
 *                         the second's), so that lines stay apart in greyscale; the legend
 *                         names each group by display names (app/names.h) with its runs,
 *                         "(n=5)"; a mean over fewer runs after some stopped (at their target)
 *                         is marked where they drop out;
 *   breakdown-by-KEYS.png where the workers' time went per group, a stacked bar of shares:
 *                         compute, the computation that communication overlapped (workers.csv's
 *                         comm_overlap_s, when the files have it), communication, waiting, and
 *                         down time (when a worker was down), each the mean over the group's
 *                         runs of the run's share of its workers' summed time (plots/shares.gp);
 *   ttt-by-KEYS.png       time to test accuracy ACC per group, read from the curves under the
 *                         rule whether or not the runs stopped there: a bar at the mean over the
 *                         runs that reached it with its 95% interval, "k/n" when some did not,
 *                         "not reached (> T s)" when none did (plots/bars.gp). Without a target,
 *                         or when no run reached it, the figure is not drawn and the log says
 *                         why.
 * Screen figures (the default) are about 1000 pixels wide with a title; paper figures
 * (--size: column 3.5 inches wide, page 7, or W x H inches) are drawn at that size with text
 * of APP_SWEEP_PLOT_FONT_PT points at that size, one legend under the panels, and no title
 * unless --title gives one. The data of each figure is written next to it as CSV
 * (by-KEYS-<i>.csv for the i-th group, breakdown-by-KEYS.csv, ttt-by-KEYS.csv; a label holding
 * a comma quoted by sim_output_csv_field, which gnuplot reads whole); the gnuplot scripts
 * compute nothing.
 */
#ifndef APP_SWEEP_PLOT_H
#define APP_SWEEP_PLOT_H

#include <stdio.h>

#include "app/curves.h"
#include "app/names.h"
#include "app/select.h"
#include "outputs/plot.h"
#include "sim/err.h"

/* The most groups drawn: by-KEY's legend grows 51 pixels a line past 16, and Cairo, which
 * draws gnuplot's PNG figures, refuses an image taller than 32767 pixels (about 636 values);
 * the other two figures' bars widen 45 pixels each (about 715). More groups are refused
 * before anything is written, in every format. */
#define APP_SWEEP_PLOT_MAX_VALUES 600

/* Paper figures: the widths of --size column and page (inches), and their text's and title's
 * size in points at that size. */
#define APP_SWEEP_PLOT_COLUMN_IN 3.5
#define APP_SWEEP_PLOT_PAGE_IN   7.0
#define APP_SWEEP_PLOT_FONT_PT   8
#define APP_SWEEP_PLOT_TITLE_PT  9

typedef struct app_sweep_plot_options {
    const char *sweep_dir;    /* the sweep's output directory */
    app_select_options sel;   /* which runs, grouped and tuned how */
    enum app_curve_col x;     /* APP_CURVE_TIME, _SAMPLES or _EPOCH */
    enum app_curve_band band; /* the bands of by-KEYS */
    sim_plot_format format;   /* the figures' format (PNG, PDF or SVG) */
    const char *out_dir;      /* where the figures go */
    double width_in;          /* 0: screen figures; else paper figures this wide (inches) */
    double height_in;         /* with width_in: 0 for each figure's height at that width */
    const char *title;        /* NULL: a title on screen, none on paper; else this one */
    const app_names *names;   /* display names (NULL: none) */
} app_sweep_plot_options;

/* Parses --size's value: "column", "page" or "WxH" (inches, each in [1, 50]) into *w and *h
 * (h 0 for column and page: each figure's own height). False for anything else. */
bool app_sweep_plot_size(const char *text, double *w, double *h);

/* Draws the figures, naming the points left out and a time-to-target figure not drawn on
 * `log` (NULL: silent). SIM_EINVAL: app_select_read's errors (no index.csv, a key that is not
 * swept, a group that pools values of an unreduced key, ...), more than
 * APP_SWEEP_PLOT_MAX_VALUES groups (nothing written), a run's files missing or damaged;
 * SIM_EIO (gnuplot, files); SIM_ENOMEM. */
int app_sweep_plot(const app_sweep_plot_options *o, FILE *log, sim_err *err);

/* Labels for `hetsim plot RUN...`: labels[i] receives, for a run that is a point of a sweep
 * (its parent directory's index.csv lists its directory), its overrides "KEY=VALUE,..." (the
 * swept keys and seed) that differ between the sweep points among `dirs`, or all of them
 * when none differ; NULL for any other run. The caller frees each label. SIM_ENOMEM only (an
 * unreadable index leaves the label NULL). app/sweep_labels.c. */
int app_sweep_point_labels(const char *const *dirs, size_t n, char **labels, sim_err *err);

#endif
