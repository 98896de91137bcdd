/* Output helpers: the number formatter writes exactly what printf writes. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <check.h>
#include <gsl/gsl_rng.h>

#include "outputs/output.h"
#include "suite.h"

static void check_same(double x, int digits)
{
    char fast[SIM_OUTPUT_G_MAX], ref[64];
    size_t n = sim_output_format_g(fast, x, digits);
    snprintf(ref, sizeof(ref), "%.*g", digits, x);
    ck_assert_str_eq(fast, ref);
    ck_assert_uint_eq(n, strlen(ref));
}

/* Integers at and around the fast path's bounds, signed zeros, fractions, huge and tiny
 * values, non-finite ones, and seconds made from nanosecond counts as the runner makes them. */
START_TEST(format_g_writes_what_printf_writes)
{
    const double fixed[] = { 0.0,
                             -0.0,
                             1.0,
                             -1.0,
                             2.0,
                             9.0,
                             10.0,
                             123456789.0,
                             999999999.0,
                             1e9,
                             -1e9,
                             1234567890.0,
                             99999999999999984.0, /* the largest double below 1e17 */
                             1e16,
                             1e17,
                             -1e17,
                             1e18,
                             9007199254740993.0,
                             0.5,
                             2.385,
                             -2.385,
                             1e-9,
                             1.0000000000000002,
                             1e300,
                             -1e-300,
                             INFINITY,
                             -INFINITY,
                             NAN };
    for (size_t i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++)
        for (int digits = 1; digits <= 17; digits++)
            check_same(fixed[i], digits);
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 2385);
    for (int i = 0; i < 50000; i++) {
        int64_t ns = (int64_t)(gsl_rng_get(r) % 4000000000000ULL);
        if (i % 3 == 0)
            ns -= ns % 1000000000; /* whole seconds */
        check_same((double)ns * 1e-9, 17);
        check_same((double)ns / 1e9, 17);
        check_same((double)ns, 17);
        check_same((double)(float)((double)ns * 1e-12), 9);
        check_same((double)(int64_t)(gsl_rng_uniform(r) * 2e9) - 1e9, 9);
    }
    gsl_rng_free(r);
}
END_TEST

Suite *test_suite(void)
{
    Suite *s = suite_create("output");
    TCase *tc = tcase_create("format");
    tcase_add_test(tc, format_g_writes_what_printf_writes);
    tcase_set_timeout(tc, 30);
    suite_add_tcase(s, tc);
    return s;
}
