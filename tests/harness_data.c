/* Shared helpers of the data suites (tests/harness_data.h). */
#include "harness_data.h"

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

void datat_expect_err(const sim_err *err, int code, const char *text)
{
    char buf[800];
    sim_err_format(err, buf, sizeof(buf));
    ck_assert_str_eq(buf, text);
    ck_assert_int_eq(err->code, code);
}

void datat_expect_empty(const data_set *ds)
{
    ck_assert_ptr_null(ds->x);
    ck_assert_ptr_null(ds->y);
    ck_assert_uint_eq(ds->n, 0);
}
