/* Tensor kernels against naive double references, bitwise symmetry of averaging, the order
 * of summation in means, and the buffer pool. */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>

#include "sim/rng.h"
#include "sim/tensor.h"
#include "suite.h"

/* Unit roundoff of float and double. */
#define U_F 0x1p-24
#define U_D 0x1p-53

/* Lengths: empty, one, a short odd tail, and a long odd one that spans many mean blocks. */
static const size_t LENGTHS[] = { 0, 1, 7, 1000003 };
/* Offsets in floats from a 64-byte boundary: aligned, and two unaligned starts. */
static const size_t OFFSETS[] = { 0, 1, 3 };

/* A buffer of n + 3 floats filled with N(0, 2.385^2) values, and a view at `off`. */
static float *noise(gsl_rng *r, size_t n, size_t off, float **view)
{
    float *p = sim_tensor_alloc(n + 4);
    ck_assert_ptr_nonnull(p);
    for (size_t i = 0; i < n + 4; i++)
        p[i] = (float)gsl_ran_gaussian(r, 2.385);
    *view = p + off;
    return p;
}

static gsl_rng *rng(uint64_t stream)
{
    gsl_rng *r = sim_rng_create(sim_rng_seed(0x5eed2385u, stream));
    ck_assert_ptr_nonnull(r);
    return r;
}

START_TEST(alloc_rounds_up_aligns_and_zero_fills)
{
    for (size_t n = 1; n < 40; n += 3) {
        float *p = sim_tensor_alloc(n);
        ck_assert_ptr_nonnull(p);
        ck_assert_uint_eq((uintptr_t)p % 64, 0);
        size_t padded = (n * sizeof(float) + 63) / 64 * 64 / sizeof(float);
        for (size_t i = 0; i < padded; i++) /* the rounded-up tail is zeroed too */
            ck_assert_uint_eq(p[i] == 0.0f && !signbit(p[i]), 1);
        sim_tensor_free(p);
    }
}
END_TEST

START_TEST(alloc_returns_null_for_overflowing_sizes_and_a_block_for_zero)
{
    float *none = sim_tensor_alloc(0); /* a model of zero floats allocates like any other */
    ck_assert_ptr_nonnull(none);
    ck_assert_uint_eq((uintptr_t)none % 64, 0);
    sim_tensor_free(none);
    ck_assert_ptr_null(sim_tensor_alloc(SIZE_MAX / 2));
    ck_assert_ptr_null(sim_tensor_alloc(SIZE_MAX));
    sim_tensor_free(NULL);
}
END_TEST

START_TEST(elementwise_kernels_match_double_references_on_odd_lengths)
{
    gsl_rng *r = rng(1);
    const float a = -0.7391f;
    for (size_t li = 0; li < sizeof(LENGTHS) / sizeof(LENGTHS[0]); li++)
        for (size_t oi = 0; oi < sizeof(OFFSETS) / sizeof(OFFSETS[0]); oi++) {
            size_t n = LENGTHS[li], off = OFFSETS[oi];
            float *x, *y, *z, *out;
            float *px = noise(r, n, off, &x), *py = noise(r, n, off, &y);
            float *pz = noise(r, n, (off + 1) % 4, &z), *po = noise(r, n, off, &out);
            /* copy and zero are exact */
            sim_tensor_copy(out, x, n);
            ck_assert_int_eq(n == 0 || memcmp(out, x, n * sizeof(float)) == 0, 1);
            sim_tensor_zero(out, n);
            size_t bad = 0; /* elements out of tolerance (one assertion per loop: Check
                             * reports every assertion to its parent process) */
            for (size_t i = 0; i < n; i++)
                bad += out[i] != 0.0f;
            ck_assert_uint_eq(bad, 0);
            /* y += a x: two roundings (product, sum), each within U_F of its result, so the
             * error is below 2 U_F (|y| + |a x|) */
            memcpy(out, y, n * sizeof(float));
            sim_tensor_axpy(out, a, x, n);
            for (size_t i = 0; i < n; i++) {
                double ref = (double)y[i] + (double)a * (double)x[i];
                double tol = 2 * U_F * (fabs((double)y[i]) + fabs((double)a * (double)x[i]));
                bad += !(fabs((double)out[i] - ref) <= tol);
            }
            ck_assert_uint_eq(bad, 0);
            /* x *= a: one rounding */
            memcpy(out, x, n * sizeof(float));
            sim_tensor_scale(out, a, n);
            for (size_t i = 0; i < n; i++)
                bad += !(fabs((double)out[i] - (double)a * (double)x[i]) <=
                         U_F * fabs((double)a * (double)x[i]));
            ck_assert_uint_eq(bad, 0);
            /* (x + z) * 0.5: one rounding in the sum; halving is exact for these normals */
            sim_tensor_average(out, x, z, n);
            for (size_t i = 0; i < n; i++) {
                double ref = 0.5 * ((double)x[i] + (double)z[i]);
                bad += !(fabs((double)out[i] - ref) <= U_F * fabs(ref));
            }
            ck_assert_uint_eq(bad, 0);
            /* triad a = b + s c: as axpy */
            sim_tensor_triad(out, y, z, a, n);
            for (size_t i = 0; i < n; i++) {
                double ref = (double)y[i] + (double)a * (double)z[i];
                double tol = 2 * U_F * (fabs((double)y[i]) + fabs((double)a * (double)z[i]));
                bad += !(fabs((double)out[i] - ref) <= tol);
            }
            ck_assert_uint_eq(bad, 0);
            sim_tensor_free(px);
            sim_tensor_free(py);
            sim_tensor_free(pz);
            sim_tensor_free(po);
        }
    gsl_rng_free(r);
}
END_TEST

START_TEST(reductions_match_double_references_on_odd_lengths)
{
    gsl_rng *r = rng(2);
    for (size_t li = 0; li < sizeof(LENGTHS) / sizeof(LENGTHS[0]); li++)
        for (size_t oi = 0; oi < sizeof(OFFSETS) / sizeof(OFFSETS[0]); oi++) {
            size_t n = LENGTHS[li], off = OFFSETS[oi];
            float *x, *y;
            float *px = noise(r, n, off, &x), *py = noise(r, n, 3 - off, &y);
            double dot = 0, dot_abs = 0, nn = 0, sd = 0, sum = 0, sum_abs = 0;
            for (size_t i = 0; i < n; i++) {
                double p = (double)x[i] * (double)y[i];
                double d = (double)x[i] - (double)y[i];
                dot += p;
                dot_abs += fabs(p);
                nn += (double)x[i] * (double)x[i];
                sd += d * d;
                sum += (double)x[i];
                sum_abs += fabs((double)x[i]);
            }
            /* Float products and differences are exact in double; the kernels differ from
             * the naive loop only in summation order, so each result is within
             * 2 n U_D sum|terms| of it (twice the bound of either order). */
            double g = 2.0 * (double)n * U_D;
            ck_assert_double_le(fabs(sim_tensor_dot(x, y, n) - dot), g * dot_abs);
            ck_assert_double_le(fabs(sim_tensor_norm2(x, n) - nn), g * nn);
            ck_assert_double_le(fabs(sim_tensor_sqdist(x, y, n) - sd), g * sd);
            ck_assert_double_le(fabs(sim_tensor_sum(x, n) - sum), g * sum_abs);
            ck_assert_double_eq(sim_tensor_sqdist(x, x, n), 0.0);
            sim_tensor_free(px);
            sim_tensor_free(py);
        }
    gsl_rng_free(r);
}
END_TEST

START_TEST(average_gives_identical_bits_for_both_argument_orders)
{
    gsl_rng *r = rng(3);
    size_t n = 100003;
    float *a, *b, *ab, *ba, *into;
    float *pa = noise(r, n, 1, &a), *pb = noise(r, n, 2, &b);
    float *p1 = noise(r, n, 0, &ab), *p2 = noise(r, n, 3, &ba), *p3 = noise(r, n, 1, &into);
    sim_tensor_average(ab, a, b, n);
    sim_tensor_average(ba, b, a, n);
    ck_assert_int_eq(memcmp(ab, ba, n * sizeof(float)), 0);
    memcpy(into, a, n * sizeof(float));
    sim_tensor_average_into(into, b, n);
    ck_assert_int_eq(memcmp(into, ab, n * sizeof(float)), 0);
    memcpy(into, b, n * sizeof(float));
    sim_tensor_average_into(into, a, n);
    ck_assert_int_eq(memcmp(into, ab, n * sizeof(float)), 0);
    ck_assert_uint_eq(sim_tensor_checksum(ab, n), sim_tensor_checksum(ba, n));
    /* the mean of two is the same operation */
    const float *xs[2] = { b, a };
    sim_tensor_mean(into, xs, 2, n);
    ck_assert_int_eq(memcmp(into, ab, n * sizeof(float)), 0);
    sim_tensor_free(pa);
    sim_tensor_free(pb);
    sim_tensor_free(p1);
    sim_tensor_free(p2);
    sim_tensor_free(p3);
    gsl_rng_free(r);
}
END_TEST

/* Checks sim_tensor_mean and sim_tensor_weighted_mean for k vectors of length n against the
 * documented order (float, vector index then element) bit for bit, and the sum against a
 * double reference. */
static void check_means(gsl_rng *r, size_t k, size_t n)
{
    float *buf[17], *x[17], *out, *wout;
    const float *xs[17];
    float w[17];
    for (size_t v = 0; v < k; v++) {
        buf[v] = noise(r, n, v % 4, &x[v]);
        xs[v] = x[v];
        w[v] = (float)gsl_rng_uniform_pos(r) / (float)k;
    }
    float *po = noise(r, n, 1, &out), *pw = noise(r, n, 2, &wout);
    sim_tensor_mean(out, xs, k, n);
    sim_tensor_weighted_mean(wout, xs, w, k, n);
    double total = 0, total_mean = 0, slack = 0;
    size_t bad = 0; /* elements that differ from the stated order */
    for (size_t i = 0; i < n; i++) {
        float s = xs[0][i], ws = w[0] * xs[0][i];
        double abs_sum = fabs((double)xs[0][i]);
        total += (double)xs[0][i];
        for (size_t v = 1; v < k; v++) {
            s = s + xs[v][i];
            ws = ws + w[v] * xs[v][i];
            abs_sum += fabs((double)xs[v][i]);
            total += (double)xs[v][i];
        }
        bad += out[i] != s / (float)k;
        bad += wout[i] != ws;
        total_mean += (double)out[i] * (double)k;
        /* k - 1 float additions and one division, each within U_F of its result: the
         * element's k-fold mean is within (k + 1) U_F sum_v |x_v| of the exact sum */
        slack += (double)(k + 1) * U_F * abs_sum;
    }
    ck_assert_uint_eq(bad, 0);
    ck_assert_double_le(fabs(total_mean - total), slack + 1e-300);
    sim_tensor_free(po);
    sim_tensor_free(pw);
    for (size_t v = 0; v < k; v++)
        sim_tensor_free(buf[v]);
}

START_TEST(mean_of_k_follows_the_stated_order_and_preserves_the_sum)
{
    gsl_rng *r = rng(4);
    const size_t ks[] = { 1, 2, 3, 4, 5, 7, 16, 17 };
    const size_t ns[] = { 0, 1, 7, 8192 + 13, 3 * 8192 };
    for (size_t a = 0; a < sizeof(ks) / sizeof(ks[0]); a++)
        for (size_t b = 0; b < sizeof(ns) / sizeof(ns[0]); b++)
            check_means(r, ks[a], ns[b]);
    check_means(r, 16, 1000003);
    gsl_rng_free(r);
}
END_TEST

/* In place, over any of its inputs, the mean has sim_tensor_mean's bits; so does the pair
 * average with sim_tensor_average_into followed by a copy. Lengths cross the 8192-float blocks
 * and leave a scalar tail. */
START_TEST(mean_over_an_input_and_average_pair_keep_the_bits)
{
    enum {
        N = 2 * 8192 + 37,
        K = 6
    };
    float *x[K], *want = sim_tensor_alloc(N);
    ck_assert(want != NULL);
    for (size_t v = 0; v < K; v++) {
        x[v] = sim_tensor_alloc(N);
        ck_assert(x[v] != NULL);
    }
    for (size_t k = 1; k <= K; k++)
        for (size_t at = 0; at < k; at++) {
            for (size_t v = 0; v < k; v++)
                for (size_t i = 0; i < N; i++)
                    x[v][i] = 0.37f * (float)((i * (v + 3)) % 101) - 9.1f / (float)(v + 1);
            sim_tensor_mean(want, (const float *const *)x, k, N);
            sim_tensor_mean_over(x[at], (const float *const *)x, k, N);
            ck_assert_msg(memcmp(x[at], want, N * sizeof(float)) == 0, "k %zu, out = x[%zu]", k,
                          at);
        }
    for (size_t i = 0; i < N; i++)
        x[0][i] = 0.1f * (float)(i % 7) - 0.3f, x[1][i] = 1.3f - 0.07f * (float)(i % 11);
    sim_tensor_copy(want, x[0], N);
    sim_tensor_average_into(want, x[1], N);
    sim_tensor_average_pair(x[0], x[1], N);
    ck_assert(memcmp(x[0], want, N * sizeof(float)) == 0);
    ck_assert(memcmp(x[1], want, N * sizeof(float)) == 0);
    for (size_t v = 0; v < K; v++)
        sim_tensor_free(x[v]);
    sim_tensor_free(want);
}
END_TEST

START_TEST(mean_of_zero_vectors_leaves_the_output_unchanged)
{
    float out[3] = { 2.385f, -1.25f, 7.0f };
    sim_tensor_mean(out, NULL, 0, 3);
    sim_tensor_weighted_mean(out, NULL, NULL, 0, 3);
    ck_assert_double_eq((double)out[0], (double)2.385f);
    ck_assert_double_eq((double)out[2], 7.0);
}
END_TEST

START_TEST(checksum_is_fnv1a_over_the_bytes)
{
    const float x[3] = { 2.385f, -0.5f, 1e-3f };
    ck_assert_uint_eq(sim_tensor_checksum(x, 0), 0xcbf29ce484222325ULL);
    ck_assert_uint_eq(sim_tensor_checksum(x, 3), 0xf31bc9cc496e3b1eULL); /* from Python */
    float y[3];
    memcpy(y, x, sizeof(y));
    y[1] = -0.50000006f; /* one bit of difference */
    ck_assert_uint_ne(sim_tensor_checksum(y, 3), sim_tensor_checksum(x, 3));
}
END_TEST

START_TEST(all_finite_finds_nan_and_infinity_anywhere)
{
    size_t n = 1037;
    float *x = sim_tensor_alloc(n);
    for (size_t i = 0; i < n; i++)
        x[i] = (float)i * 0.37f - 150.0f;
    x[5] = FLT_MAX;
    x[6] = -FLT_MAX;
    x[7] = FLT_MIN / 8.0f; /* subnormal */
    ck_assert(sim_tensor_all_finite(x, n));
    ck_assert(sim_tensor_all_finite(x, 0));
    const size_t where[] = { 0, 15, 16, 1023, 1030, 1036 };
    const float bad[] = { NAN, INFINITY, -INFINITY };
    for (size_t a = 0; a < 6; a++)
        for (size_t b = 0; b < 3; b++) {
            float keep = x[where[a]];
            x[where[a]] = bad[b];
            ck_assert(!sim_tensor_all_finite(x, n));
            ck_assert(sim_tensor_all_finite(x, where[a])); /* the bad one just outside */
            x[where[a]] = keep;
        }
    sim_tensor_free(x);
}
END_TEST

START_TEST(pool_hands_out_aligned_buffers_lowest_handle_first)
{
    sim_err err = { 0 };
    sim_tensor_pool *pool = sim_tensor_pool_create(37, 3, &err);
    ck_assert_ptr_nonnull(pool);
    uint32_t h[3];
    for (uint32_t i = 0; i < 3; i++) {
        ck_assert_int_eq(sim_tensor_pool_get(pool, &h[i], &err), SIM_OK);
        ck_assert_uint_eq(h[i], i);
        float *p = sim_tensor_pool_data(pool, h[i]);
        ck_assert_uint_eq((uintptr_t)p % 64, 0);
        for (size_t j = 0; j < 37; j++)
            ck_assert_uint_eq(p[j] == 0.0f, 1);
    }
    ck_assert_ptr_ne(sim_tensor_pool_data(pool, 0), sim_tensor_pool_data(pool, 1));
    sim_tensor_pool_put(pool, h[1]);
    uint32_t again;
    ck_assert_int_eq(sim_tensor_pool_get(pool, &again, &err), SIM_OK);
    ck_assert_uint_eq(again, h[1]); /* LIFO */
    sim_tensor_pool_destroy(pool);
    sim_tensor_pool_destroy(NULL);
}
END_TEST

/* A reserve that grows the pool hands out the free buffers it had first (written, resident)
 * and the new ones after them, lowest first: a grown pool does not take fresh pages while
 * written ones are free. */
START_TEST(pool_reserve_keeps_the_written_free_buffers_on_top)
{
    sim_err err = { 0 };
    sim_tensor_pool *pool = sim_tensor_pool_create(37, 2, &err);
    ck_assert_ptr_nonnull(pool);
    uint32_t a, b;
    ck_assert_int_eq(sim_tensor_pool_get(pool, &a, &err), SIM_OK);
    ck_assert_int_eq(sim_tensor_pool_get(pool, &b, &err), SIM_OK);
    sim_tensor_pool_put(pool, a);
    ck_assert_int_eq(sim_tensor_pool_reserve(pool, 3, &err), SIM_OK);
    sim_tensor_pool_stats st;
    sim_tensor_pool_get_stats(pool, &st);
    ck_assert_uint_eq(st.capacity, 4);
    ck_assert_uint_eq(st.grows, 1);
    uint32_t h[3];
    for (size_t i = 0; i < 3; i++)
        ck_assert_int_eq(sim_tensor_pool_get(pool, &h[i], &err), SIM_OK);
    ck_assert_uint_eq(h[0], a);
    ck_assert_uint_eq(h[1], 2);
    ck_assert_uint_eq(h[2], 3);
    ck_assert_int_eq(sim_tensor_pool_reserve(pool, 0, &err), SIM_OK);
    sim_tensor_pool_destroy(pool);
}
END_TEST

START_TEST(pool_doubles_when_empty_and_keeps_buffers_in_place)
{
    sim_err err = { 0 };
    sim_tensor_pool *pool = sim_tensor_pool_create(1001, 2, &err);
    ck_assert_ptr_nonnull(pool);
    uint32_t h[9];
    float *p[9];
    for (size_t i = 0; i < 9; i++) {
        ck_assert_int_eq(sim_tensor_pool_get(pool, &h[i], &err), SIM_OK);
        p[i] = sim_tensor_pool_data(pool, h[i]);
        for (size_t j = 0; j < 1001; j++)
            p[i][j] = (float)(i * 1001 + j) * 0.125f;
    }
    sim_tensor_pool_stats st;
    sim_tensor_pool_get_stats(pool, &st);
    ck_assert_uint_eq(st.capacity, 16); /* 2 -> 4 -> 8 -> 16 */
    ck_assert_uint_eq(st.grows, 3);
    ck_assert_uint_eq(st.in_use, 9);
    ck_assert_uint_eq(st.peak_inuse, 9);
    ck_assert_uint_eq(st.gets, 9);
    ck_assert_uint_eq(st.puts, 0);
    ck_assert_uint_eq(st.n_floats, 1001);
    ck_assert_uint_eq(st.bytes, 16 * 1008 * sizeof(float)); /* 1001 rounded up to 16 */
    for (size_t i = 0; i < 9; i++) {
        ck_assert_ptr_eq(sim_tensor_pool_data(pool, h[i]), p[i]);
        for (size_t j = 0; j < 1001; j++)
            ck_assert_double_eq((double)p[i][j], (double)(i * 1001 + j) * 0.125);
    }
    for (size_t i = 0; i < 9; i++)
        sim_tensor_pool_put(pool, h[i]);
    /* steady state: cycling within capacity never grows */
    for (int round = 0; round < 1000; round++) {
        uint32_t a, b;
        ck_assert_int_eq(sim_tensor_pool_get(pool, &a, &err), SIM_OK);
        ck_assert_int_eq(sim_tensor_pool_get(pool, &b, &err), SIM_OK);
        sim_tensor_pool_put(pool, a);
        sim_tensor_pool_put(pool, b);
    }
    sim_tensor_pool_get_stats(pool, &st);
    ck_assert_uint_eq(st.grows, 3);
    ck_assert_uint_eq(st.in_use, 0);
    ck_assert_uint_eq(st.peak_inuse, 9);
    ck_assert_uint_eq(st.gets, 2009);
    ck_assert_uint_eq(st.puts, 2009);
    sim_tensor_pool_destroy(pool);
}
END_TEST

START_TEST(pool_create_rejects_empty_sizes)
{
    sim_err err = { 0 };
    sim_err_clear(&err);
    ck_assert_ptr_null(sim_tensor_pool_create(0, 4, &err));
    ck_assert_int_eq(err.code, SIM_EINVAL);
    ck_assert_str_eq(err.msg, "tensor pool needs n_floats > 0 and count > 0, got 0 and 4");
    ck_assert_ptr_null(sim_tensor_pool_create(16, 0, &err));
    ck_assert_int_eq(err.code, SIM_EINVAL);
    ck_assert_ptr_null(sim_tensor_pool_create(SIZE_MAX / 2, 1, &err));
    ck_assert_int_eq(err.code, SIM_EINVAL);
}
END_TEST

START_TEST(consensus_is_zero_for_equal_vectors_and_matches_a_hand_count)
{
    /* Eight equal vectors of awkward values: a float mean could be off by an ulp, the
     * consensus must still be exactly 0. */
    enum {
        N = 1037
    };
    static float a[N], b[N], c[N];
    const float *same[8];
    for (size_t j = 0; j < N; j++)
        a[j] = 0.1f * (float)j + 1.0f / 3.0f;
    for (size_t i = 0; i < 8; i++)
        same[i] = a;
    ck_assert_double_eq(sim_tensor_consensus(same, 8, N), 0.0);
    /* Worked by hand: b = a + 1.5 and c = a - 1.5 around the mean a, in every element:
     * each deviation squared is 2.25, so the mean over the two vectors is 2.25 N. Exact:
     * the deviations are small multiples of a power of two apart. */
    for (size_t j = 0; j < N; j++) {
        b[j] = (float)j + 1.5f;
        c[j] = (float)j - 1.5f;
    }
    const float *two[2] = { b, c };
    ck_assert_double_eq(sim_tensor_consensus(two, 2, N), 2.25 * N);
    ck_assert_double_eq(sim_tensor_consensus(two, 0, N), 0.0);
}
END_TEST

Suite *test_suite(void)
{
    Suite *s = suite_create("tensor");
    TCase *tc = tcase_create("alloc");
    tcase_add_test(tc, alloc_rounds_up_aligns_and_zero_fills);
    tcase_add_test(tc, alloc_returns_null_for_overflowing_sizes_and_a_block_for_zero);
    suite_add_tcase(s, tc);
    tc = tcase_create("kernels");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, elementwise_kernels_match_double_references_on_odd_lengths);
    tcase_add_test(tc, reductions_match_double_references_on_odd_lengths);
    tcase_add_test(tc, average_gives_identical_bits_for_both_argument_orders);
    tcase_add_test(tc, mean_of_k_follows_the_stated_order_and_preserves_the_sum);
    tcase_add_test(tc, mean_of_zero_vectors_leaves_the_output_unchanged);
    tcase_add_test(tc, mean_over_an_input_and_average_pair_keep_the_bits);
    tcase_add_test(tc, checksum_is_fnv1a_over_the_bytes);
    tcase_add_test(tc, consensus_is_zero_for_equal_vectors_and_matches_a_hand_count);
    tcase_add_test(tc, all_finite_finds_nan_and_infinity_anywhere);
    suite_add_tcase(s, tc);
    tc = tcase_create("pool");
    tcase_add_test(tc, pool_hands_out_aligned_buffers_lowest_handle_first);
    tcase_add_test(tc, pool_doubles_when_empty_and_keeps_buffers_in_place);
    tcase_add_test(tc, pool_reserve_keeps_the_written_free_buffers_on_top);
    tcase_add_test(tc, pool_create_rejects_empty_sizes);
    suite_add_tcase(s, tc);
    return s;
}
