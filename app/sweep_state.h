/* Sweeps, internal (see sweep.h): the sweep's state and the helpers its four files share.
 * Included only by app/sweep.c (loading, validation, naming, listing), app/sweep_run.c
 * (points run as child processes, the output directory), app/sweep_index.c (index.csv,
 * curves.csv), app/sweep_repeat.c (repeats, JSON scanning, the runs' canonical hashes, small
 * helpers) and app/sweep_mpi.c (ranks held to rank 0's load); calls run one way: sweep_run.c ->
 * sweep_index.c -> sweep.c -> sweep_repeat.c (each may call the files after it), and
 * sweep_mpi.c -> sweep.c. */
#ifndef APP_SWEEP_STATE_H
#define APP_SWEEP_STATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "app/sweep.h"
#include "outputs/rundir.h"
#include "sim/cfg.h"
#include "sim/err.h"

#define NAME_MAX_ 200  /* a run directory's name, bytes */
#define PATH_TEXT 1024 /* a path */

/* One grid entry: a `--set` path and its values as JSON text. Entries of one axis (a plain
 * entry, or the paths of "zip") have the same number of values and are adjacent in cols[]. */
typedef struct column {
    char *path;    /* "protocol.name"; owned */
    char **values; /* (nvalues) JSON text; owned */
    size_t nvalues;
    size_t axis;    /* the axis it belongs to */
    bool zipped;    /* under $.grid.zip */
    sim_cfg *from;  /* the grid or zip object it is read from, while loading; borrowed */
    size_t max_len; /* the longest of its values, bytes */
} column;

/* A point's `--set` assignments are made from the columns when needed, not kept. */
typedef struct point {
    char *name;      /* run directory under the sweep's directory; owned */
    uint64_t hash;   /* the resolved scenario's hash, as run.json records it */
    uint64_t run;    /* its canonical form's, keys in any order (sw_run_of); 0: none */
    char *inputs;    /* what its validation's load read (sim_scenario_inputs_text), which its run
                        is held to (APP_SWEEP_INPUTS_ENV), NULL when it read no file; owned */
    bool has_traces; /* its scenario has a trace rule (validated): run.json's traces_fnv ... */
    uint64_t traces; /* ... is this (sim_scenario_traces_fnv) */
} point;

struct app_sweep {
    char file[PATH_TEXT]; /* the sweep file */
    char base[PATH_TEXT]; /* the base scenario, relative to the working directory */
    char dir[PATH_TEXT];  /* output directory */
    app_sweep_options opt;
    size_t max_points; /* opt.max_points, or APP_SWEEP_MAX_POINTS */
    char *base_text;   /* the base scenario's bytes, read once; owned */
    size_t base_len;
    column *cols; /* (ncols) */
    size_t ncols;
    size_t *axis_len; /* (naxes) */
    size_t naxes;
    uint64_t *seeds; /* (nseeds) */
    size_t nseeds;
    size_t set_size; /* bytes that hold any point's assignments, NULs included */
    point *points;   /* (npoints) */
    size_t npoints;
    sim_rundir_lock *lock; /* the output directory's, once taken (app_sweep_open_dir) */
};

/* What one point's assignments are made in: value indices, pointers and text. */
typedef struct scratch {
    size_t *vi;        /* (ncols + 1) value index of each column */
    const char **sets; /* (ncols + 1) "path=value", then "seed=S" */
    char *text;        /* (set_size) */
} scratch;

/* The grid values of point k: vi[c] is the value index of column c; returns the seed. The
 * seed varies fastest, then the last axis. */
uint64_t sw_decompose(const app_sweep *sw, size_t k, size_t *vi);

/* A scratch for one point's assignments, sized for any point; SIM_ENOMEM. */
int sw_scratch_init(const app_sweep *sw, scratch *s, sim_err *err);
void sw_scratch_fini(scratch *s);

/* Point k's assignments into s: the grid's, then its seed; returns how many. */
size_t sw_point_sets(const app_sweep *sw, size_t k, scratch *s);

/* ---- app/sweep_repeat.c ---- */

/* SIM_ENOMEM "out of memory"; returns it. */
int sw_oom(sim_err *err);

/* "a/b" into out[size]; a path too long for it is cut (sizes are checked at loading). */
void sw_join(char *out, size_t size, const char *a, const char *b);

/* A JSON value as plain text: strings lose their quotes. */
void sw_plain_value(const char *json, char *out, size_t size);

/* dir/name parsed as JSON, or NULL (absent, unreadable, not JSON). */
sim_cfg *sw_read_json(const char *dir, const char *name);

/* The end of the compact JSON value (cJSON's unformatted print: no blank outside strings)
 * starting at p. */
const char *sw_json_end(const char *p);

typedef uint64_t (*key_hash_fn)(const void *keys, size_t i);
typedef bool (*key_same_fn)(const void *keys, size_t i, size_t j);

/* The first key i (of n) equal to an earlier key j, with *earlier = j; n if none. Expected
 * time linear in n: an open-addressing table of a power of two >= 2n slots. SIZE_MAX when
 * out of memory. */
size_t sw_first_repeat(const void *keys, size_t n, key_hash_fn hash, key_same_fn same,
                       size_t *earlier);

/* Keys for sw_first_repeat: seeds (uint64_t), points by run directory name and points by
 * their run (point.run). */
uint64_t sw_seed_hash(const void *keys, size_t i);
bool sw_seed_same(const void *keys, size_t i, size_t j);
uint64_t sw_name_hash(const void *keys, size_t i);
bool sw_name_same(const void *keys, size_t i, size_t j);
uint64_t sw_run_key(const void *keys, size_t i);
bool sw_run_same(const void *keys, size_t i, size_t j);

/* The hash of a resolved scenario's compact JSON with every object's keys in any order: two
 * points with equal ones are one run. */
uint64_t sw_run_hash(const char *json);

/* The run of a resolved scenario `tree` (a point's sc->root, or the "scenario" object of a
 * run.json read back), point.run: sw_run_hash of its canonical form (sim_scenario_canonical:
 * [1, 1, 1, 1] for [1], [] for an absent list, "./p.csv" for "p.csv"), into which `tree` is
 * rewritten (its owner is done with it: a copy cost a third of a point's validation). 0 when
 * out of memory. */
uint64_t sw_run_of(sim_cfg *tree);

/* Whether `run`, a run.json read back (NULL: none), is a run of point `p`'s scenario: its
 * scenario_hash is the point's, or its scenario's canonical form is (sw_run_of equal to
 * p->run, when the point was validated; `run`'s scenario is then left in that form). */
bool sw_run_is(sim_cfg *run, const point *p);

#endif
