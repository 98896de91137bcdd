/* Helpers shared by the check suites (tests/test_check.c, tests/test_check_places.c): the
 * short scenario a check reads, the golden of 3 seeds made once for a suite, and the steps
 * their cases take (a check, a shell command, a copy of the golden). */
#ifndef HETSIM_TESTS_HARNESS_CHECK_H
#define HETSIM_TESTS_HARNESS_CHECK_H

#include <stdbool.h>
#include <stddef.h>

#include "harness.h"

/* The scenario file a check reads unless a case names another (chkt_scenario). */
#define CHKT_SCENARIO "tests/golden/curves/allreduce/scenario.json"

/* The scenario file a check reads; a case that changes it sets it back to CHKT_SCENARIO. */
extern const char *chkt_scenario;

/* Runs `hetsim check` of chkt_scenario, 2 simulated seconds evaluated every 0.25 s, with
 * `args` (NULL-terminated) after them. */
harness_result chkt_check(const char *const *args);

/* Runs the shell command `tmpl` with every "%s" in it replaced by `dir`; fails the test
 * unless it exits 0. */
void chkt_sh(const char *tmpl, const char *dir);

/* Whether `path` exists (followed through links). */
bool chkt_exists(const char *path);

/* A copy of the base golden at DIR/golden (DIR fresh); returns DIR (caller frees). */
char *chkt_copy_golden(void);

/* `dir`/`rest` into buf. */
void chkt_path_of(char *buf, size_t size, const char *dir, const char *rest);

/* A check of dir/golden into dir/out. */
harness_result chkt_check_golden(const char *dir);

/* The fixture of a TCase: makes the base golden (3 seeds) in a fresh directory, and removes
 * it. */
void chkt_setup_base(void);
void chkt_teardown_base(void);

#endif
