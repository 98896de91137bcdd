/* Helpers shared by the scenario suites (tests/test_scenario.c, tests/test_scenario_bad.c): their
 * scenarios, runs and checks. */
#ifndef HETSIM_TESTS_HARNESS_SCENARIO_H
#define HETSIM_TESTS_HARNESS_SCENARIO_H

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <check.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>

#include "harness.h"
#include "runtime/run.h"
#include "scenario/scenario.h"
#include "sim/cfg.h"
#include "sim/engine.h"
#include "sim/err.h"
#include "sim/rng.h"

#define FULL "tests/scenarios_ok/full.json"

#define MINIMAL "tests/scenarios_ok/minimal.json"

void sct_setup(void);

sim_scenario *sct_load_ok(const char *file, const char *const *sets, size_t nsets);

void sct_check_ids(const sim_straggler *st, const uint32_t *ids, size_t n);

#endif
