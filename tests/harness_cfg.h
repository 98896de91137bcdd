/* Helpers shared by the cfg suites (tests/test_cfg.c, tests/test_cfg_structure.c): their scenarios,
 * runs and checks. */
#ifndef HETSIM_TESTS_HARNESS_CFG_H
#define HETSIM_TESTS_HARNESS_CFG_H

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "sim/cfg.h"
#include "sim/cfg_state.h"
#include "sim/err.h"
#include "suite.h"

sim_cfg *cfgt_parse_ok(const char *text);

void cfgt_check_err(const sim_err *err, int code, const char *path, const char *msg);

void cfgt_check_print(const sim_cfg *cfg, const char *expected);

#endif
