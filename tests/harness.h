/* Plumbing shared by the end-to-end test suites: load a scenario (from text or a file, with
 * `--set` overrides) that must pass sim_run_check, make a temporary run directory, run into
 * it, read its files back, and remove it. Every function fails the calling Check test with a
 * message naming the file (and JSON path) at fault instead of returning an error, so it may
 * be called only from inside a Check test. Strings and directories returned are malloc'd and
 * belong to the caller: free the strings, hand the directories to harness_cleanup.
 */
#ifndef HETSIM_TESTS_HARNESS_H
#define HETSIM_TESTS_HARNESS_H

#include <stdbool.h>
#include <stddef.h>

#include "protocols/registry.h"
#include "runtime/arena.h"
#include "runtime/run.h"
#include "scenario/scenario.h"
#include "suite.h"

/* Parses `json` as if read from `file` (used in messages and for relative paths), applies the
 * `nsets` overrides "PATH=VALUE", and runs sim_run_check; fails the test if either refuses.
 * The caller destroys the scenario. */
sim_scenario *harness_load(const char *json, const char *file, const char *const *sets,
                           size_t nsets);

/* The same for the scenario file at `path`. */
sim_scenario *harness_load_file(const char *path, const char *const *sets, size_t nsets);

/* Parses `json` (as `file`) with `sets`, which must load but fail sim_run_check with
 * SIM_ESCENARIO, naming `file`, the JSON path `path` and the message `msg` exactly. */
void harness_expect_rejected(const char *json, const char *file, const char *const *sets,
                             size_t nsets, const char *path, const char *msg);

/* harness_load_file for `spec` naming a file (it does not start with '{'), else harness_load
 * of the JSON text `spec` itself as "generated.json": for suites that run both their
 * scenario files and scenarios they generate (randomized stress). */
sim_scenario *harness_load_spec(const char *spec, const char *const *sets, size_t nsets);

/* harness_expect_rejected for the scenario file at `file`. */
void harness_expect_rejected_file(const char *file, const char *const *sets, size_t nsets,
                                  const char *path, const char *msg);

/* What `hetsim validate` does after loading: looks up $.protocol.name in the registry and runs
 * sim_run_check; returns its code (0 or SIM_E*) with `err` filled. */
int harness_check(sim_scenario *sc, sim_err *err);

/* A generated scenario that tests a protocol against chaos, for `seed`: 12 workers
 * (timing-only with 1.5 MB messages, or with `real` a small synthetic softmax), random
 * speeds, jitter, random 4x slowdowns, a link straggler that reorders messages from 0.3 to
 * 0.9 s, and 8 failures in the first 1.2 s, each recovering within 0.4 s or, one in six,
 * never: from 1.6 s on every worker is up or down for good. `protocol` is the protocol's JSON
 * object. Runs 2 simulated seconds. The text is malloc'd; the caller frees it. */
char *harness_chaos_json(unsigned seed, bool real, const char *protocol);

/* The suites' protocol lists are the registry's (protocols/registry.h): a suite that runs every
 * protocol loops over its harness_protocols() registered ones at their defaults, then over its
 * own extra variants (each checked with harness_expect_registered), so that a new protocol
 * runs in every such suite without a line there. harness_protocol writes the i-th registered
 * protocol's $.protocol object at its defaults, {"name": "NAME"}, into buf and returns the
 * name. The defaults run with HARNESS_PROTOCOL_SERVERS server host: ps's shards, easgd's
 * centre and ripples' group generator sit there, the other protocols leave it idle. */
#define HARNESS_PROTOCOL_SERVERS     1
#define HARNESS_PROTOCOL_SERVERS_SET "servers=1" /* the same, as an override */
size_t harness_protocols(void);
const char *harness_protocol(size_t i, char *buf, size_t size);

/* Fails the test unless the $.protocol object `json` ({"name": "NAME", ...}) names a
 * registered protocol: a suite's extra variant of a protocol that was renamed or removed. */
void harness_expect_registered(const char *json);

/* Every worker's model at each evaluation (sim_run_observe_fn harness_observe_models, its `ud`
 * a harness_models, calloc'd: about 0.6 MB): the first HARNESS_OBS_MAX evaluations of runs of
 * at most HARNESS_OBS_WORKERS workers and HARNESS_OBS_PARAMS parameters (larger runs fail the
 * test), with their sums and consensus distance in double. */
enum {
    HARNESS_OBS_MAX = 256,
    HARNESS_OBS_WORKERS = 16,
    HARNESS_OBS_PARAMS = 32
};
typedef struct harness_models {
    size_t n, p, w;                  /* observations, parameters, workers */
    long long t_ns[HARNESS_OBS_MAX]; /* when */
    /* every worker's model, down ones included */
    float x[HARNESS_OBS_MAX][HARNESS_OBS_WORKERS][HARNESS_OBS_PARAMS];
    double sum[HARNESS_OBS_MAX][HARNESS_OBS_PARAMS]; /* sum over all workers, in double */
    double consensus[HARNESS_OBS_MAX]; /* mean over workers of ||x_w - mean||^2, in double */
    double max_abs;                    /* largest |x| seen */
} harness_models;
void harness_observe_models(void *ud, struct sim_ctx *ctx);

/* The run's number of workers and of parameters, each asserted at most `max` (the size of the
 * calling test's arrays). */
uint32_t harness_workers_within(const struct sim_ctx *ctx, uint32_t max);
size_t harness_params_within(const struct sim_ctx *ctx, size_t max);

/* Both at once, into *n and *p: what a protocol spy's start records. */
void harness_sizes_within(const struct sim_ctx *ctx, uint32_t max_w, size_t max_p, uint32_t *n,
                          size_t *p);

/* Runs the scenario `spec` (harness_load_spec) with `sets` into a temporary directory,
 * observing every worker's model into obs unless it is NULL, and returns the summary, with
 * summary.json's text in *summary (malloc'd) unless summary is NULL. */
sim_run_summary harness_run_models(const char *spec, const char *const *sets, size_t n,
                                   harness_models *obs, char **summary);

/* The number under `key` in the protocol_report of summary.json's text `summary`; fails the
 * test if there is none. */
double harness_report_in(const char *summary, const char *key);

/* Runs the scenario file `file` with the protocol `ops` (a test-only one, not registered) and
 * the failures `stragglers` (a JSON list), for 0.5 simulated s, into a temporary directory it
 * removes; fails the test if sim_run_check refuses it. Returns sim_run's code, its message in
 * `msg` (256 bytes). */
int harness_run_ops(const char *file, const proto_ops *ops, const char *stragglers, char *msg);

/* Names, inodes, types and sizes of everything under `dir`, then the files' md5 sums, each
 * list sorted, into out[size]: equal digests before and after a command mean it changed
 * nothing there. Fails the test if the listing fails. */
void harness_tree_digest(const char *dir, char *out, size_t size);

/* Fails the test unless `hetsim` refuses each of the n argument lists `cases` (each
 * NULL-terminated) as bad usage: exit status 2, nothing on standard output, a message on
 * standard error. */
void harness_expect_usage_errors(const char *const *const *cases, size_t n);

/* The number of newlines in s. */
size_t harness_count_lines(const char *s);

/* Creates a fresh directory "/tmp/hetsim-TAG-XXXXXX" and returns its malloc'd path. */
char *harness_tmpdir(const char *tag);

/* Runs `sc` into `dir`, calling `observe(ud, ...)` at every evaluation if it is not NULL;
 * fails the test if the run fails. With `dir` NULL the run goes to a temporary directory
 * that is removed afterwards, for tests that need only the summary or the observations. */
sim_run_summary harness_run(sim_scenario *sc, const char *dir, sim_run_observe_fn observe,
                            void *ud);

/* harness_run with the protocol table `ops` instead of the registered protocol sc names: a
 * test's copy of a protocol's table with hooks of its own (a spy's start or on_event). */
sim_run_summary harness_run_with(sim_scenario *sc, const proto_ops *ops, const char *dir,
                                 sim_run_observe_fn observe, void *ud);

/* Runs `sc` on `threads` threads into TMP/run, TMP a fresh harness_tmpdir(tag), calling
 * `observe(ud, ...)` at every evaluation if it is not NULL; fails the test, naming the thread
 * count, if the run fails. Stores the summary in *sum unless it is NULL and returns TMP, for
 * harness_cleanup. */
char *harness_run_threads(sim_scenario *sc, const char *tag, unsigned threads,
                          sim_run_observe_fn observe, void *ud, sim_run_summary *sum);

/* summary.json's wall.memory_estimate_bytes of the run in `dir`/run (harness_run_threads'). */
double harness_memory_estimate(const char *dir);

/* Reads the whole file at `path` into a NUL-terminated malloc'd buffer, failing the test if
 * it cannot be read; stores its size in `*n` unless `n` is NULL. */
char *harness_read(const char *path, size_t *n);

/* harness_read of the file `name` in the directory `dir`. */
char *harness_slurp(const char *dir, const char *name);

/* The resolved scenario in the text of a run.json (`run_json`, cut in place after it): the
 * object under "scenario", which loads again to the same run. Fails the test without one. */
char *harness_run_scenario(char *run_json);

/* Cuts the "wall" line (wall-clock figures) out of summary.json's text `summary`, so that
 * the rest can be compared between runs; fails the test if there is none. */
void harness_strip_wall(char *summary);

/* Fails the test unless the run directories `a` and `b` hold byte-identical run.json,
 * metrics.csv, workers.csv and summary.json (its wall line aside). */
void harness_expect_same_outputs(const char *a, const char *b);

/* The same, and events.csv byte-identical too. */
void harness_expect_same_trace(const char *a, const char *b);

/* Runs sa and sb (then destroys them) into two new directories named for `tag`, fails the test
 * unless their outputs are the same (harness_expect_same_outputs), and returns sa's summary.
 * With dirs, the directories are left in dirs[0] and dirs[1] for the caller to read and
 * harness_cleanup_pair; with NULL, removed. */
sim_run_summary harness_run_pair(sim_scenario *sa, sim_scenario *sb, const char *tag, char **dirs);
void harness_cleanup_pair(char **dirs);

/* Worker w's iterations and down_s on the workers.csv text `csv` (its header first); fails
 * the test if the row is not there or not whole. */
void harness_worker_row(const char *csv, unsigned w, unsigned long *iters, double *down_s);

/* The number under `key` in the summary.json of run directory `dir`: a top-level figure
 * ("final_accuracy") or one of protocol_report's. Fails the test if there is none; NaN for
 * a null. */
double harness_summary_number(const char *dir, const char *key);

/* The number under `key` in the protocol_report of run directory `dir`'s summary.json; NaN
 * when the report has no such key (a protocol that reports it only in some modes). */
double harness_report_value(const char *dir, const char *key);

/* A CSV output of a run (metrics.csv, workers.csv) read whole: its header's
 * column names and its rows of cells as text. */
typedef struct harness_csv {
    size_t ncols, nrows;
    char **cols;  /* (ncols) names from the header row */
    char **cells; /* (nrows, ncols) each row's fields, "" for an empty one */
    char *text;   /* the file, cut into the strings above */
} harness_csv;

/* Reads `name` in run directory `dir`; fails the test if it is missing, has no header, or
 * has a row with another number of fields than the header. */
harness_csv harness_csv_read(const char *dir, const char *name);

/* The index of column `col`; fails the test if there is none. */
size_t harness_csv_col(const harness_csv *t, const char *col);

/* The cell (row, col) as text, and as a number (NaN for an empty field; fails the test if
 * the field is not a number). */
const char *harness_csv_text(const harness_csv *t, size_t row, const char *col);
double harness_csv_num(const harness_csv *t, size_t row, const char *col);

/* Frees what harness_csv_read allocated. */
void harness_csv_free(harness_csv *t);

/* The field named `col` of the row of the CSV text `csv` whose first `nkey` fields, joined by
 * ',', are `key`, as a number (NaN for an empty field); fails the test if there is no such
 * column or row. */
double harness_csv_field(const char *csv, const char *key, size_t nkey, const char *col);

/* Runs sc (then destroys it) in a temporary directory and returns the columns cols[0..n) of
 * every row of its workers.csv, separated by spaces, a line a row (malloc'd): e.g.
 * "iterations" and "params_fnv", the final state two runs must share. With summary, the text
 * of its summary.json in *summary (malloc'd). */
char *harness_run_columns(sim_scenario *sc, const char *const *cols, size_t n, char **summary);

/* What a run of the built binary left: its exit status (128 + signal if killed) and what it
 * printed, cut to the buffers' sizes. */
typedef struct harness_result {
    int status;
    char out[16384];
    char err[8192];
} harness_result;

/* Runs $HETSIM (the built binary; fails the test if the variable is not set) with `args`
 * (NULL-terminated, at most 30), standard output and error captured through temporary
 * files, and waits for it. */
harness_result harness_hetsim(const char *const *args);

/* The processor time (user and system) of the children waited for so far, in seconds: a run's
 * cost, which the load of other processes on the machine leaves nearly alone (take it before
 * and after a harness_hetsim). */
double harness_children_cpu_s(void);

/* A bound of `s` processor seconds, set on the debugoptimized build, for this build: five
 * times as much under AddressSanitizer (the CI's sanitizer stage), where a run takes 3 to 10
 * times as long; a quadratic cost still passes it many times over. */
double harness_cpu_bound(double s);

/* Runs a scenario that lists workers 1..n-1 in one array (a failure rule's, say): `head`, the
 * list, then `tail`, written and run in a temporary directory named after `name`. Fails the
 * test unless the run exits 0; returns its processor seconds (harness_children_cpu_s), and
 * its summary.json in *summary (to free) when summary is not NULL. */
double harness_run_listing(const char *name, int n, const char *head, const char *tail,
                           char **summary);

/* harness_hetsim beside a writer that opens the FIFO at `fifo`, writes `text` once and ends, as
 * a program piping a file in would; the writer, which waits on the FIFO until a reader opens
 * it, is killed once the run has ended. */
harness_result harness_hetsim_fifo(const char *fifo, const char *text, const char *const *args);

/* A change a child process makes to a test's files while a command runs (an edit saved, a
 * directory swapped in), once a marker of the command's progress is there: it counts when it
 * was made while the command still ran and before `until` existed (with `until` NULL: while
 * the marker was still there), the window in which the command must see it. */
typedef int (*harness_change_fn)(void *arg); /* 0 once made, -1 if it failed */
typedef void (*harness_again_fn)(void *arg, bool changed);
typedef struct harness_race {
    const char *marker;       /* the path whose existence starts the change */
    const char *until;        /* the path whose existence ends the window, or NULL */
    harness_change_fn change; /* called in the child with arg; must not assert */
    harness_again_fn again;   /* before a new attempt: undo the change if `changed`, remove
                                 the attempt's outputs; NULL when there is nothing to do */
    void *arg;
} harness_race;

/* The attempts harness_hetsim_racing makes before it fails the test. */
enum {
    HARNESS_RACE_TRIES = 5
};

/* harness_hetsim with `args` beside a child process that makes race's change once its marker
 * is there. The child polls only while the command runs: it ends when the command has ended,
 * changed or not. An attempt whose change did not come in time (late, or never) is run again
 * after race->again, up to HARNESS_RACE_TRIES attempts, then fails the test, as does a change
 * that failed: the result returned is that of an attempt in which the change came in time. */
harness_result harness_hetsim_racing(const char *const *args, const harness_race *race);

/* Writes `text` to DIR/NAME.new and renames it over DIR/NAME, as an editor saving the file
 * does; returns 0, or -1 if it could not. Asserts nothing: for a race's change. */
int harness_save(const char *dir, const char *name, const char *text);

/* A race's change that edits a file: DIR/NAME saved as `text` (harness_save) while a command
 * runs, `original` before it; `out`, the command's output (or NULL), is removed before the
 * command is run again. */
typedef struct harness_edit {
    const char *dir, *name, *text, *original, *out;
} harness_edit;

/* harness_race's change and again for a harness_edit `arg`: the save, and its undo (the file
 * as it was, no output of the last attempt). */
int harness_edit_save(void *arg);
void harness_edit_undo(void *arg, bool changed);

/* Reads at most size - 1 bytes of the file at `path` into buf, NUL-terminated: "" for a file
 * that does not exist or cannot be read (a command's empty output, for instance). */
void harness_read_into(const char *path, char *buf, size_t size);

/* Writes `text` to the file `name` in `dir`; fails the test if it cannot. */
void harness_write(const char *dir, const char *name, const char *text);

/* The set-ups the suites of the built binary repeat in a temporary directory `dir` (a
 * harness_tmpdir): each writes `scenario` to DIR/s.json unless it is NULL (the file is there),
 * runs one command and fails the test, with its exit status and standard error, unless it
 * exits 0; it stores the paths it names in its buffers, each of `size` bytes. */

/* `hetsim run DIR/s.json -o DIR/r --quiet`: DIR/s.json in s, the run DIR/r in r. */
void harness_run_in(const char *dir, const char *scenario, char *s, char *r, size_t size);

/* Writes `text` as SWEEP/index.csv, a sweep made by hand of harness_fake_run's dirs, and gives
 * each row's run.json (where there is one) the row's swept keys and seed, as a sweep's run.json
 * holds them: a cell that is no JSON text is a string's (the sweep writes a string without its
 * quotes). Rows with results alone; a row of another count of fields is left as it is. */
void harness_fake_index(const char *sweep, const char *text);

/* Edits SWEEP/index.csv by hand: the byte `offset` bytes into the first occurrence of `find`
 * (which must be there) becomes `byte`. */
void harness_poke_index(const char *sweep, const char *find, size_t offset, char byte);

/* `hetsim plot RUN --style DIR/stC -o DIR/pC` with `copy` as DIR/stC/convergence.gp (stC
 * made afresh): the copy's path in gp, the output DIR/pC in p, each of `size` bytes. */
harness_result harness_plot_style_copy(const char *dir, const char *run, int c, const char *copy,
                                       char *gp, char *p, size_t size);

/* Writes `sweep` to DIR/sw.json (and `scenario` to DIR/s.json unless it is NULL), stores
 * DIR/sw.json in sw and runs nothing: a sweep file the test runs itself (one refused, or run
 * with options of its own). */
void harness_sweep_file(const char *dir, const char *scenario, const char *sweep, char *sw,
                        size_t size);

/* Writes `sweep` to DIR/sw.json and runs `hetsim sweep DIR/sw.json -o DIR/o --quiet`:
 * DIR/sw.json in sw, the sweep's output DIR/o in o. */
void harness_sweep_in(const char *dir, const char *scenario, const char *sweep, char *sw, char *o,
                      size_t size);

/* Writes DIR/sw.json, a sweep of DIR/s.json (there already) over the grid `grid` (a JSON
 * object's text), and runs `hetsim sweep DIR/sw.json -o DIR/o --quiet`, the sweep's output
 * DIR/o in o, whatever its exit: returns what the run left, for a test of a grid refused. */
harness_result harness_sweep_grid(const char *dir, const char *grid, char *o, size_t size);

/* `hetsim check DIR/s.json --golden DIR/g --update --seeds 3`, a golden of 3 seeds: DIR/s.json
 * in s, the golden DIR/g in g. */
void harness_golden_in(const char *dir, const char *scenario, char *s, char *g, size_t size);

/* The folders of a long path: makes `depth` folders DIR/NAME/NAME/... below `dir`, NAME
 * HARNESS_DEEP_NAME times `letter` (201 bytes of path a folder), the deepest's path in
 * deep[size]; returns its length. Fails the test if a folder cannot be made or the path does
 * not fit. */
enum {
    HARNESS_DEEP_NAME = 200
};
size_t harness_deep_dir(const char *dir, char letter, int depth, char *deep, size_t size);

/* A made-up run directory for the readers of results (report, groups, figures): makes the
 * directory `name` under `sweep` (its path written to `dir`), and writes its metrics.csv from
 * `curve`, "t:acc t:acc ...": a row per point with time_s t, iterations 10 t, samples 100 t and
 * test_accuracy acc; test_loss 1 and throughput_sps 100, or with `varied` test_loss 2 - acc
 * and throughput_sps 3000 + 100 t. The caller writes workers.csv and run.json. */
void harness_fake_run(char *dir, size_t size, const char *sweep, const char *name,
                      const char *curve, bool varied);

/* workers.csv of one worker (10 iterations, 1000 samples), for harness_fake_run's dirs. */
extern const char harness_fake_workers[];

/* index.csv's header row, for the sweeps made of harness_fake_run's dirs. */
extern const char harness_fake_index_head[];

/* A small synthetic scenario (4 workers, softmax, allreduce, 4 simulated seconds): a run takes
 * a few milliseconds; the base of the sweeps the sweep and report suites write. */
extern const char harness_small_json[];

/* A timing-only scenario of three workers (seed 5, model none) for 0.2 simulated seconds,
 * evaluated every 0.05 s: a run takes milliseconds; the base of the probe suites' runs. */
extern const char harness_quick_json[];

/* A sweep file over harness_quick_json in s.json: protocol.name allreduce and dpsgd, 2 seeds
 * (5 and 6), 4 points: the sweep of the suites that report, plot or name two protocols. */
extern const char harness_protocols_sweep[];

/* True if `path` exists (stat succeeds). */
bool harness_exists(const char *path);

/* The canonical form of scenarios (sim_scenario_canonical), each text of the pairs parsed and
 * made canonical: fails the test unless each pair of same[nsame] is one scenario (no key
 * differs) and each of other[nother] is not, naming the pair and the keys. */
void harness_canonical_pairs(const char *const (*same)[2], size_t nsame,
                             const char *const (*other)[2], size_t nother);

/* A kit graph's room as a protocol gets it: the run's arena for the graph of `spec`, sized by
 * a sizing pass as the runtime sizes it, with g's arrays reserved in it (graph_reserve), for
 * graph_build to fill. Fails the test if the arena cannot be made or the reserve did not fit.
 * The caller destroys the arena, which frees the graph's arrays. */
struct graph;
struct graph_spec;
sim_arena *harness_graph_arena(struct graph *g, const struct graph_spec *spec);

/* The chaos scenario (harness_chaos_json, seed `seed` + i, a real model) for the i-th registered
 * protocol at its defaults: its name in *name, and in *hosts the defaults' server host
 * (HARNESS_PROTOCOL_SERVERS_SET), which gives ps's server, ripples's group generator and easgd's
 * centre a host no failure takes down. The caller frees the text. */
char *harness_protocol_chaos(int i, unsigned seed, const char **name, const char **hosts);

/* Fails unless the run directories `a`/run and `b`/run hold the same files (at least 5), byte
 * for byte (summary.json without its wall line); `what` names the case in messages. */
void harness_expect_same_files(const char *a, const char *b, const char *what);

/* Removes `dir` and everything below it (symbolic links are removed, never followed), then
 * frees `dir`. Refuses (fails the test) any path outside "/tmp/hetsim-*", as a guard against
 * deleting fixtures. NULL is a no-op. */
void harness_cleanup(char *dir);

#endif
