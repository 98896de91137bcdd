/* A finished sweep's index.csv, read whole: `hetsim report` and `hetsim plot --by` (DESIGN
 * §10).
 *
 * index.csv (app/sweep.h) has the columns point, dir, one per grid path (the swept keys),
 * seed, stop_reason and the summary's figures; a point without results has stop_reason
 * "missing". It is read by the one strict reader of results files (outputs/csv.h): a cell is
 * valid until app_index_fini.
 */
#ifndef APP_INDEX_H
#define APP_INDEX_H

#include <stdbool.h>
#include <stddef.h>

#include "outputs/csv.h"
#include "sim/err.h"

/* The results columns of index.csv after stop_reason, in order: the sweep writes them
 * (sweep_index.c, the last, wall_s, from summary.json's "wall") and app_index_read requires
 * each. */
#define APP_INDEX_NRESULTS 6
extern const char *const app_index_results[APP_INDEX_NRESULTS];

typedef struct app_index {
    sim_csv csv;          /* the file: csv.head, csv.nrows, csv.path (SWEEP_DIR/index.csv) */
    size_t nkeys;         /* the swept keys: columns 2 .. 2 + nkeys - 1 */
    size_t unlisted;      /* run directories of the sweep's that no row names */
    char *unlisted_first; /* the first of them in name order (its name); owned */
} app_index;

/* The longest sweep directory read, as app/sweep.c writes one (a point's paths hold it). */
#define APP_INDEX_DIR_MAX 767

/* Reads sweep_dir/index.csv into `ix`. SIM_EINVAL when it is missing (a hint says what the
 * directory is: a run directory to plot without --by, or no sweep at all), has no header of
 * hetsim's (point, dir, ..., seed, stop_reason), is not in the strict reader's form (a row
 * cut short, a field count not the header's), or holds a cell hetsim does not write: a point
 * that is not a whole number, a dir that is not a plain name (empty, with a '/', "." or
 * ".."), a seed that is not digits, an empty stop_reason, a figure that is not a finite
 * number in its range (sim_time_s, time_to_target_s, mean_throughput_sps and wall_s in [0,
 * SIM_CSV_HUGE], the accuracies in [0, 1]; empty for null), or a point or dir listed twice; each
 * naming the file and line. SIM_ENOMEM. `ix` is zeroed on error. */
int app_index_read(const char *sweep_dir, app_index *ix, sim_err *err);

/* Frees what `ix` owns and zeroes it. */
void app_index_fini(app_index *ix);

/* The column named `name`, or -1. */
int app_index_column(const app_index *ix, const char *name);

/* The text of row r, column c. */
const char *app_index_cell(const app_index *ix, size_t r, size_t c);

/* True if row r has results (its stop_reason is not "missing"). */
bool app_index_has_results(const app_index *ix, size_t r);

/* The columns a grouping may name (the swept keys, then "seed"), comma separated, into
 * buf[size] (cut if too long). */
void app_index_keys(const app_index *ix, char *buf, size_t size);

/* SIM_EINVAL "<index>: no column "<key>" (valid: ...)" unless `key` names a swept key or
 * "seed"; *col receives its column. */
int app_index_key_column(const app_index *ix, const char *key, int *col, sim_err *err);

/* The stop target the runs with results share (their run.json's
 * scenario.stop.target_accuracy) into *target, NaN when none has one. SIM_EINVAL naming two
 * runs when they differ ("choose one with --target"). */
int app_index_stop_target(const app_index *ix, const char *sweep_dir, double *target, sim_err *err);

/* The same over the rows r with use[r] true only (use NULL: every row with results). */
int app_index_stop_target_of(const app_index *ix, const char *sweep_dir, const bool *use,
                             double *target, sim_err *err);

/* The stop target of the run in `dir` (run.json's scenario.stop.target_accuracy) into
 * *target and its evaluation interval (scenario.eval.every_s) into *every, each NaN when it
 * has none (absent or null). A missing or empty run.json is an incomplete run directory (its
 * fix said: app_run_file_missing, app_run_file_empty); one that is not JSON, has no
 * scenario.stop or a target that is not a number in [0, 1] is refused naming the file
 * (SIM_EINVAL); SIM_EIO, SIM_ENOMEM. report, plot --by and plot RUN read run.json so. */
int app_index_run_facts(const char *dir, double *target, double *every, sim_err *err);

/* The smallest and largest eval.every_s (run.json's scenario.eval.every_s) of the rows r with
 * use[r] (NULL: every row with results) into *lo and *hi, NaN when none says. Errors as
 * app_index_stop_target's reading of run.json. */
int app_index_eval_every(const app_index *ix, const char *sweep_dir, const bool *use, double *lo,
                         double *hi, sim_err *err);

#endif
