/* Helpers shared by the parameter server suites (tests/test_ps.c, tests/test_ps_modes.c): their
 * scenarios, runs and checks. */
#ifndef HETSIM_TESTS_HARNESS_PS_H
#define HETSIM_TESTS_HARNESS_PS_H

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_rng.h>

#include "harness.h"
#include "runtime/ctx.h"
#include "runtime/run.h"
#include "scenario/scenario.h"
#include "sim/layers.h"

/* A timing-only workload for the same cluster. */
extern const char pst_none_json[];

/* The iterations and params_fnv of each workers.csv row. */
size_t pst_worker_rows(const char *dir, uint64_t *iters, uint64_t *fnv, size_t max);

#endif
