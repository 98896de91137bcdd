/* Sweeps: many runs of one base scenario (DESIGN §10).
 *
 * A sweep file names a base scenario (relative to the sweep file), a grid of `--set` paths
 * with value lists (their cartesian product; paths under "zip" vary together), seeds (a list,
 * or a count: the base seed and the next ones) and an output directory:
 *
 *     { "base": "../scenarios/quickstart.json",
 *       "grid": { "protocol.name": ["allreduce", "dpsgd"],
 *                 "zip": { "workers": [4, 8], "workload.batch": [64, 32] } },
 *       "seeds": 3,
 *       "output": { "dir": "out/compare" } }
 *
 * app_sweep_load reads the file strictly and validates every point (base plus overrides) as
 * `hetsim validate` would, before anything runs (an `--index` task: its own point); an error names
 * the sweep file and the JSON path of the grid entry (or $.base) at fault. Points are ordered with
 * the last grid entry varying fastest and the seed innermost. A point's run directory is named from
 * its overrides ("protocol.name=dpsgd,workers=8,workload.batch=32,seed=9"). A point is done when
 * its summary.json and run.json exist and run.json's scenario hash is the point's: a sweep
 * run again runs only the points that are not done. Each point is run by a child process
 * (this binary, `hetsim run`), so a crash or a failed run stays in its point.
 *
 * The sweep's directory is marked as hetsim's by a file ".hetsim-sweep" (or, written by an
 * older hetsim, an index.csv of hetsim); app_sweep_open_dir refuses a directory that is not
 * empty and holds no such mark, and one inside a run, work, sweep or golden directory. A
 * whole sweep (app_sweep_run, or rank 0 of an MPI sweep) holds the directory's lock
 * (outputs/rundir.h, "DIR.lock" beside it) from then until app_sweep_destroy, so a second sweep
 * into the same directory is refused; each point's run locks its own run directory, so the
 * processes of one sweep (`--index` tasks, MPI ranks) write side by side.
 *
 * A sweep's points are its own: `hetsim run` refuses an output directory inside a sweep's
 * (the ownership rule, outputs/rundir.h), but for the run a sweep starts into its point. The
 * sweep tells it so by an owner token in the child's environment, APP_SWEEP_POINT_ENV =
 * "PID:DIR": the sweep's process id, the child's parent, and the point's directory as given
 * to -o (app_sweep_owns). The token is in that child's environment alone, not the sweep's own,
 * and names the child's parent: a user's run into a point is refused.
 */
#ifndef APP_SWEEP_H
#define APP_SWEEP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "sim/err.h"

/* The most points a sweep may have; a larger one is refused before any point is made,
 * naming its count. Each point is a run directory in the sweep's one directory (four files or
 * more, tens of kilobytes at least), a row of index.csv and a child process; every point's
 * scenario is loaded to validate it (about 0.1 ms) before anything runs. A million points is
 * already a million entries in one directory, gigabytes of outputs and a 100 MB index, and
 * about two minutes of validation: larger studies are split into several sweeps. */
#define APP_SWEEP_MAX_POINTS 1000000

/* The environment variable of a point's owner token (see above). */
#define APP_SWEEP_POINT_ENV "HETSIM_SWEEP_POINT"

/* The environment variable, beside the owner token, of what the point's validation read (its
 * compute.profile's bytes, its traces' points, its LIBSVM data's bytes: the text of
 * sim_scenario_inputs_text), which the run holds its own load to: a file the scenario names,
 * edited since the sweep validated its points, fails the point, named (app_sweep_inputs). */
#define APP_SWEEP_INPUTS_ENV "HETSIM_SWEEP_INPUTS"

typedef struct app_sweep app_sweep;

typedef struct app_sweep_options {
    const char *out_dir; /* overrides $.output.dir when not NULL */
    const char *exe;     /* the hetsim binary the points run with */
    unsigned jobs;       /* local processes at once, >= 1 */
    unsigned threads;    /* threads of each run (hetsim run --threads); 0: one */
    bool progress;       /* a progress line on stderr */
    size_t max_points;   /* a lower limit than APP_SWEEP_MAX_POINTS (the fuzz target), or 0 */
    bool one;            /* an --index task: only point `index` is validated (see below) */
    size_t index;        /* with `one`: the task's point */
} app_sweep_options;

/* Loads and validates `file`, in time linear in its number of points. Returns NULL and fills
 * `err` (SIM_ESCENARIO naming the sweep file and path, SIM_EIO, SIM_ENOMEM). With opt->one (an
 * `--index K` task of an array job) only the whole sweep's cheap checks are made (its keys, the
 * grid's shape and count, the run directories' names distinct, the base loading with the
 * first values of the grid) and point opt->index alone is validated as `hetsim validate`
 * would (none when the sweep has no such point, which the caller refuses): every task
 * validated every point, 47.7 s per task at 100,000 points, an array job's time quadratic in
 * its points. Another point's fault is then its own task's refusal; two points that are one
 * run (the same resolved scenario) are told apart only by a whole sweep. */
app_sweep *app_sweep_load(const char *file, const app_sweep_options *opt, sim_err *err);

/* Releases the directory's lock if held. NULL is a no-op. */
void app_sweep_destroy(app_sweep *sw);

/* The number of points. */
size_t app_sweep_size(const app_sweep *sw);

/* The output directory of the sweep. */
const char *app_sweep_dir(const app_sweep *sw);

/* Prints one line per point: index, run directory, overrides (tab separated). Returns 0 or
 * SIM_ENOMEM. */
int app_sweep_list(const app_sweep *sw, FILE *f, sim_err *err);

/* True if this process is a run a sweep started into its point `out_dir` (the -o it was
 * given): the owner token in the environment names our parent process and `out_dir`. */
bool app_sweep_owns(const char *out_dir);

/* For the run of a sweep's point (app_sweep_owns(out_dir)): what its validation read, the
 * child's APP_SWEEP_INPUTS_ENV, which the run holds its load to; NULL for any other run. */
const char *app_sweep_inputs(const char *out_dir);

/* True if point k is done (see above). */
bool app_sweep_done(const app_sweep *sw, size_t k);

/* Fills todo[] (room for every point) with the points not done, in order; returns how many. */
size_t app_sweep_todo(const app_sweep *sw, size_t *todo);

/* A point's run in a child process, until it is reaped. */
typedef struct app_sweep_child {
    long pid;  /* the child's, or -1 */
    size_t k;  /* its point */
    FILE *log; /* its standard error, a temporary file; NULL: it writes to ours */
} app_sweep_child;

/* Starts point k as a child process (`hetsim run` with its overrides, output to its run
 * directory), its standard error kept in a temporary file (or, without one, ours); fills
 * *child and returns its pid, or -1 with `err` filled. */
long app_sweep_spawn(const app_sweep *sw, size_t k, app_sweep_child *child, sim_err *err);

/* After `child` ended with the wait(2) status `status`: prints what it wrote on standard
 * error to `log`, each line naming the point and its directory ("hetsim: point 3
 * (out/sw/workload.lr=1000,seed=7): worker 2: the training loss ... diverged ...", its own
 * "hetsim: " replaced), and, for a run that failed without a word, "hetsim: point K (DIR):
 * failed (exit status N)" or "(killed by signal S)"; `fresh` first clears a progress line.
 * Closes its file. Returns its exit status (128 + signal if killed). */
int app_sweep_reap(const app_sweep *sw, app_sweep_child *child, int status, bool fresh, FILE *log);

/* Waits for `child` and reaps it (app_sweep_reap); returns its exit status (127 if it cannot
 * be waited for). */
int app_sweep_wait(const app_sweep *sw, app_sweep_child *child, FILE *log);

/* Checks the output directory as above, with `lock` takes its lock (kept until
 * app_sweep_destroy), and creates it with its mark. Errors: SIM_ESCENARIO (a directory that
 * is not a sweep's, or one locked by another process: nothing changed), SIM_EIO. */
int app_sweep_open_dir(app_sweep *sw, bool lock, sim_err *err);

/* Opens the directory with its lock (app_sweep_open_dir), runs the points not done yet, `jobs` at a
 * time, printing progress when asked; then writes index.csv. `*ran` and `*failed` receive how many
 * points were run and how many of them failed. Returns 0 or SIM_E* (SIM_EIO when index.csv cannot
 * be written). */
int app_sweep_run(app_sweep *sw, size_t *ran, size_t *failed, sim_err *err);

/* ---- Under MPI (app/sweep_mpi.c) ----
 *
 * Every rank loads the sweep itself (the points' run directories, scenarios and what their
 * validations read), and each runs the points it is given with its own load: a base scenario, a
 * compute.profile or a trace saved between two ranks' loads made points run on other inputs
 * than rank 0's, which writes the index (its check compared scenario_hash only). So each rank's
 * load is held to rank 0's before anything runs (app_sweep_mpi_agree): rank 0 broadcasts a
 * digest of its load (the output directory, the base's path and bytes, and per point its run
 * directory, scenario hash and sim_scenario_inputs_text), and a rank whose own differs refuses,
 * naming the file (the sweep file, the base, or the point's profile or trace, found by loading the
 * point again held to rank 0's inputs), exit 2; then every rank stops, nothing run. */

/* What app_sweep_mpi_agree found. */
enum {
    APP_SWEEP_AGREE = 0, /* every rank loaded what rank 0 did: run */
    APP_SWEEP_SAY = 1,   /* stop, and report `err` (this rank's refusal, or rank 0's load's) */
    APP_SWEEP_QUIET = 2  /* stop: another rank says why */
};

/* Called by every rank after its app_sweep_load (`sw` NULL when it failed, `err` filled): holds
 * this rank's load to rank 0's (above). A load that failed on rank 0 is said by rank 0 alone; one
 * that failed on another rank only is said by that rank, naming it; when another rank refused,
 * rank 0 says so. Returns an APP_SWEEP_ value. */
int app_sweep_mpi_agree(const app_sweep *sw, int rank, sim_err *err);

/* The test hook of the rule above: with APP_SWEEP_MPI_EDIT_ENV set to a path P, the other ranks
 * load the sweep only after rank 0 has loaded it and renamed "P.next" over P, so that a test
 * edits an input between the ranks' loads deterministically. Every rank calls it before its load
 * (`loaded` false) and after (true). No user setting. */
#define APP_SWEEP_MPI_EDIT_ENV "HETSIM_TEST_MPI_EDIT"
void app_sweep_mpi_test_hook(int rank, bool loaded);

/* Writes index.csv: a row per point in point order (run directory, overrides, seed, then
 * the summary figures; points without a summary get stop_reason "missing"); then
 * curves.csv, tidy data for a data frame: a row per evaluation of every point with results
 * (point, a column per grid path with its value, seed, then metrics.csv's columns time_s,
 * iterations, samples, epoch, train_loss, test_loss, test_accuracy, consensus,
 * throughput_sps). Each file is written whole or not at all (sim_file). */
int app_sweep_write_index(const app_sweep *sw, sim_err *err);

#endif
