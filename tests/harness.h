/* Plumbing shared by the end-to-end test suites: load a scenario (from text or a file, with
 * `--set` overrides) that must pass sim_run_check, make a temporary run directory, run into
 * it, read its files back, and remove it. Every function fails the calling Check test with a
 * message naming the file (and JSON path) at fault instead of returning an error, so it may
 * be called only from inside a Check test. Strings and directories returned are malloc'd and
 * belong to the caller: free the strings, hand the directories to harness_cleanup.
 */
#ifndef HETSIM_TESTS_HARNESS_H
#define HETSIM_TESTS_HARNESS_H

#include <stddef.h>

#include "protocols/registry.h"
#include "runtime/run.h"
#include "sim/scenario.h"
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

/* What `hetsim validate` does after loading: looks up $.protocol.name in the registry and runs
 * sim_run_check; returns its code (0 or SIM_E*) with `err` filled. */
int harness_check(sim_scenario *sc, sim_err *err);

/* Creates a fresh directory "/tmp/hetsim-TAG-XXXXXX" and returns its malloc'd path. */
char *harness_tmpdir(const char *tag);

/* Runs `sc` into `dir`, calling `observe(ud, ...)` at every evaluation if it is not NULL;
 * fails the test if the run fails. With `dir` NULL the run goes to a temporary directory
 * that is removed afterwards, for tests that need only the summary or the observations. */
sim_run_summary harness_run(sim_scenario *sc, const char *dir, sim_run_observe_fn observe,
                            void *ud);

/* Reads the whole file at `path` into a NUL-terminated malloc'd buffer, failing the test if
 * it cannot be read; stores its size in `*n` unless `n` is NULL. */
char *harness_read(const char *path, size_t *n);

/* harness_read of the file `name` in the directory `dir`. */
char *harness_slurp(const char *dir, const char *name);

/* Cuts the "wall" line (wall-clock figures) out of summary.json's text `summary`, so that
 * the rest can be compared between runs; fails the test if there is none. */
void harness_strip_wall(char *summary);

/* Removes `dir` and everything below it (symbolic links are removed, never followed), then
 * frees `dir`. Refuses (fails the test) any path outside "/tmp/hetsim-*", as a guard against
 * deleting fixtures. NULL is a no-op. */
void harness_cleanup(char *dir);

#endif
