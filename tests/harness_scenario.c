/* Shared helpers of the scenario suites (tests/harness_scenario.h). */
#include "harness_scenario.h"

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

void sct_setup(void)
{
}

sim_scenario *sct_load_ok(const char *file, const char *const *sets, size_t nsets)
{
    sim_err err;
    sim_scenario *sc = sim_scenario_load(file, sets, nsets, &err);
    ck_assert_msg(sc != NULL, "%s: %s: %s", err.file, err.path, err.msg);
    return sc;
}

void sct_check_ids(const sim_straggler *st, const uint32_t *ids, size_t n)
{
    ck_assert_uint_eq(st->nworkers, n);
    for (size_t i = 0; i < n; i++)
        ck_assert_uint_eq(st->workers[i], ids[i]);
}
