/* Shared helpers of the cfg suites (tests/harness_cfg.h). */
#include "harness_cfg.h"

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

sim_cfg *cfgt_parse_ok(const char *text)
{
    sim_err err;
    sim_err_clear(&err);
    sim_cfg *cfg = sim_cfg_parse(text, strlen(text), "dir/t.json", &err);
    ck_assert_msg(cfg != NULL, "parse failed: %s: %s", err.path, err.msg);
    return cfg;
}

void cfgt_check_err(const sim_err *err, int code, const char *path, const char *msg)
{
    ck_assert_int_eq(err->code, code);
    ck_assert_str_eq(err->path, path);
    ck_assert_str_eq(err->msg, msg);
}

void cfgt_check_print(const sim_cfg *cfg, const char *expected)
{
    char *text = sim_cfg_print(cfg, false);
    ck_assert_ptr_nonnull(text);
    ck_assert_str_eq(text, expected);
    free(text);
}
