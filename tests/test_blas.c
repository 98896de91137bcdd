/* The project declares CBLAS through <gsl/gsl_cblas.h> (OpenBLAS's own cblas.h clashes with
 * GSL's headers; the ABI is the same) and links OpenBLAS.
 *
 * Link order: OpenBLAS, not GSL's reference CBLAS, must answer every cblas_* call, both the
 * project's own and those GSL's gsl_blas_* functions make (resolved in the global scope). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>
#include <gsl/gsl_blas.h>
#include <gsl/gsl_cblas.h>

#include "suite.h"

static const char *library_of(const void *fn)
{
    Dl_info info;
    if (dladdr(fn, &info) == 0 || info.dli_fname == NULL)
        return "";
    return info.dli_fname;
}

START_TEST(blas_cblas_sgemm_is_served_by_openblas)
{
    void *global = dlsym(RTLD_DEFAULT, "cblas_sgemm");
    ck_assert_ptr_nonnull(global);
    ck_assert_msg(strstr(library_of(global), "openblas") != NULL, "cblas_sgemm comes from %s",
                  library_of(global));
}
END_TEST

START_TEST(blas_gsl_blas_sgemm_computes_through_cblas)
{
    /* (2x3)(3x2) worked out by hand: [[1.5,2,-1],[0.25,4,3]] x [[2,1],[0.5,-2],[1,0.75]]. */
    float a[] = { 1.5f, 2.0f, -1.0f, 0.25f, 4.0f, 3.0f };
    float b[] = { 2.0f, 1.0f, 0.5f, -2.0f, 1.0f, 0.75f };
    float c[4] = { 0 };
    gsl_matrix_float_view A = gsl_matrix_float_view_array(a, 2, 3);
    gsl_matrix_float_view B = gsl_matrix_float_view_array(b, 3, 2);
    gsl_matrix_float_view C = gsl_matrix_float_view_array(c, 2, 2);
    ck_assert_int_eq(
        gsl_blas_sgemm(CblasNoTrans, CblasNoTrans, 1.0f, &A.matrix, &B.matrix, 0.0f, &C.matrix), 0);
    /* Exact in float: every product and sum is a short binary fraction. */
    ck_assert_double_eq((double)c[0], 3.0);
    ck_assert_double_eq((double)c[1], -3.25);
    ck_assert_double_eq((double)c[2], 5.5);
    ck_assert_double_eq((double)c[3], -5.5);
}
END_TEST

Suite *test_suite(void)
{
    Suite *s = suite_create("blas");
    TCase *tc = tcase_create("link");
    tcase_add_test(tc, blas_cblas_sgemm_is_served_by_openblas);
    tcase_add_test(tc, blas_gsl_blas_sgemm_computes_through_cblas);
    suite_add_tcase(s, tc);
    return s;
}
