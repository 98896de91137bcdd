/* Comparison tables of a finished sweep: `hetsim report SWEEP_DIR --by KEY[,KEY2...]
 * [--where KEY=VALUE]... [--best-over KEY[,KEY2]] [--tune-seeds LIST] [--grid] [--target ACC]
 * [--ttt first|movavg:K|sustained] [--baseline KEY=VALUE] [--format md|csv|tex]
 * [--label FROM=TO]... [--names FILE]` (docs/compare.md).
 *
 * The runs are chosen and grouped by app/select.h: a row per group (a tuple of the --by keys'
 * values), at its best setting with --best-over (tuned on --tune-seeds and reported on the
 * others when given); a group that mixes values of a swept key that is neither grouped by nor
 * tuned over is refused. Each row gives, over its runs:
 *   runs            the runs shown
 *   time to target  the time to test accuracy ACC read from each run's curve under the rule
 *                   (--ttt, default first: the first evaluation at or above ACC): mean and
 *                   95% Student-t interval over the runs that reached it, and how many did.
 *                   A run that never reached it is censored at its last evaluation T: "> T",
 *                   never a number (with none reached, the cell is "> T", T the shortest run)
 *   speed-up        with --baseline KEY=VALUE (KEY one of the --by keys): the baseline row's
 *                   mean time to target over this row's (with the same other --by values), or
 *                   without a target this row's mean throughput over the baseline's; Fieller's
 *                   95% interval for a ratio of two independent means (app/stats.h)
 *   final and best test accuracy, throughput (summary.json's mean), bytes sent per sample
 *                   (workers.csv: all bytes_sent over all samples), and the shares of the
 *                   workers' time spent waiting and communicating (wait_s and comm_s over
 *                   compute_s + comm_s + wait_s, summed over workers), and, when workers.csv
 *                   has a comm_overlap_s column, "comm. incl. overlap": comm_s +
 *                   comm_overlap_s over the same total: each a mean and 95% Student-t
 *                   interval over the row's runs (no interval for one run)
 * A caption line says what the numbers are: the seeds, the interval method, how censored runs
 * count, the time-to-target definition and the evaluation interval (its resolution), the
 * tuning. --format tex prints a booktabs table (human units: %, s, k samples/s, kB or MB a
 * sample; one precision per column) with that caption; --grid prints instead the tuning grid
 * (a row per group and tuned value, the figures the choice compared, the chosen one marked).
 * Markdown and LaTeX show display names (app/names.h); CSV keeps index.csv's values.
 */
#ifndef APP_REPORT_H
#define APP_REPORT_H

#include <stdbool.h>
#include <stdio.h>

#include "app/names.h"
#include "app/select.h"
#include "sim/err.h"

typedef enum app_report_format {
    APP_REPORT_MD,  /* a Markdown table, then a line saying what the numbers are */
    APP_REPORT_CSV, /* a header and a row per group: means, half-widths, counts */
    APP_REPORT_TEX, /* a LaTeX table (booktabs) with its caption */
} app_report_format;

typedef struct app_report_options {
    const char *sweep_dir;  /* the sweep's output directory */
    app_select_options sel; /* which runs, grouped and tuned how */
    const char *baseline;   /* NULL, or "KEY=VALUE": the row speed-ups are measured against */
    bool grid;              /* print the tuning grid instead of the table */
    const app_names *names; /* display names (NULL: none) */
    app_report_format format;
} app_report_options;

/* Prints the table to `out`, the points left out and warnings to `log` (NULL: silent).
 * SIM_EINVAL: app_select_read's errors, a --baseline that is not KEY=VALUE with KEY a --by
 * key or whose row does not exist, --grid without --best-over; SIM_EIO: a file cannot be
 * read; SIM_ENOMEM. Nothing is printed to `out` on error. */
int app_report_print(const app_report_options *o, FILE *out, FILE *log, sim_err *err);

#endif
