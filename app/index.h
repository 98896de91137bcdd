/* A finished sweep's index.csv, read whole: `hetsim report` and `hetsim plot --by` (DESIGN
 * §10).
 *
 * index.csv (app/sweep.h) has the columns point, dir, one per grid path (the swept keys),
 * seed, stop_reason and the summary's figures; a point without results has stop_reason
 * "missing". The reader keeps the file's text and splits it in place: a cell is valid until
 * app_index_fini.
 */
#ifndef APP_INDEX_H
#define APP_INDEX_H

#include <stdbool.h>
#include <stddef.h>

#include "sim/err.h"

typedef struct app_index {
    char *text;      /* the file's bytes, split in place; owned */
    char **cell;     /* (nrows * ncols) row r, column c at cell[r * ncols + c]; owned */
    char **head;     /* (ncols) the header's names; owned */
    size_t ncols;    /* columns */
    size_t nrows;    /* rows after the header */
    size_t nkeys;    /* the swept keys: columns 2 .. 2 + nkeys - 1 */
    char path[1024]; /* SWEEP_DIR/index.csv, for messages */
} app_index;

/* Reads sweep_dir/index.csv into `ix`. SIM_EINVAL when it is missing (a hint says what the
 * directory is: a run directory to plot without --by, or no sweep at all), has no header of
 * hetsim's (point, dir, ..., seed, stop_reason), or a row whose field count is not the
 * header's (naming the file and line); SIM_ENOMEM. `ix` is zeroed on error. */
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

#endif
