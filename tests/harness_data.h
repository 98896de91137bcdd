/* Helpers shared by the data suites (tests/test_data.c, tests/test_data_sampling.c): their
 * scenarios, runs and checks. */
#ifndef HETSIM_TESTS_HARNESS_DATA_H
#define HETSIM_TESTS_HARNESS_DATA_H

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <check.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_rng.h>

#include "harness.h"
#include "models/data.h"
#include "sim/rng.h"
#include "suite.h"

/* Checks the code and the whole formatted message ("file: message"). */
void datat_expect_err(const sim_err *err, int code, const char *text);

void datat_expect_empty(const data_set *ds);

#endif
