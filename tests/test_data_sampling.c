/* Data sets: synthetic clusters, partitions and the minibatch sampler.
 *
 * Paths are relative to the source root unless HETSIM_TEST_DATA names the directory. */
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
#include "harness_data.h"
#include "models/data.h"
#include "sim/rng.h"
#include "suite.h"

static gsl_rng *rng(uint64_t root, uint64_t stream)
{
    gsl_rng *r = sim_rng_create(sim_rng_seed(root, stream));
    ck_assert_ptr_nonnull(r);
    return r;
}

/* ---- Synthetic ---- */

START_TEST(synthetic_data_is_deterministic_for_a_seed)
{
    data_synthetic_config cfg = { .n = 777, .dim = 13, .classes = 7, .separation = 3.25 };
    data_set a, b, c;
    sim_err err = { 0 };
    gsl_rng *r1 = rng(2385, SIM_STREAM_DATA), *r2 = rng(2385, SIM_STREAM_DATA);
    gsl_rng *r3 = rng(2386, SIM_STREAM_DATA);
    ck_assert_int_eq(data_synthetic(&cfg, r1, &a, &err), SIM_OK);
    ck_assert_int_eq(data_synthetic(&cfg, r2, &b, &err), SIM_OK);
    ck_assert_int_eq(data_synthetic(&cfg, r3, &c, &err), SIM_OK);
    ck_assert_int_eq(memcmp(a.x, b.x, a.n * a.dim * sizeof(float)), 0);
    ck_assert_int_eq(memcmp(a.y, b.y, a.n), 0);
    ck_assert_int_ne(memcmp(a.x, c.x, a.n * a.dim * sizeof(float)), 0);
    ck_assert_uint_eq(a.classes, 7);
    ck_assert_uint_eq(a.w, 13);
    data_fini(&a);
    data_fini(&b);
    data_fini(&c);
    gsl_rng_free(r1);
    gsl_rng_free(r2);
    gsl_rng_free(r3);
}
END_TEST

START_TEST(synthetic_classes_are_balanced_and_separated_as_configured)
{
    const double sep = 4.5;
    data_synthetic_config cfg = { .n = 5003, .dim = 200, .classes = 5, .separation = sep };
    data_set ds;
    sim_err err = { 0 };
    gsl_rng *r = rng(2385, SIM_STREAM_DATA);
    ck_assert_int_eq(data_synthetic(&cfg, r, &ds, &err), SIM_OK);
    size_t count[5] = { 0 };
    double *mean = calloc(5 * 200, sizeof(double));
    for (size_t i = 0; i < ds.n; i++) {
        count[ds.y[i]]++;
        for (size_t j = 0; j < 200; j++)
            mean[ds.y[i] * 200 + j] += (double)ds.x[i * 200 + j];
    }
    for (size_t c = 0; c < 5; c++) {
        ck_assert(count[c] == 1000 || count[c] == 1001); /* 5003 = 5 * 1000 + 3 */
        for (size_t j = 0; j < 200; j++)
            mean[c * 200 + j] /= (double)count[c];
    }
    double within = 0, between = 0;
    for (size_t i = 0; i < ds.n; i++)
        for (size_t j = 0; j < 200; j++) {
            double d = (double)ds.x[i * 200 + j] - mean[ds.y[i] * 200 + j];
            within += d * d;
        }
    within /= (double)(ds.n * 200);
    for (size_t a = 0; a < 5; a++)
        for (size_t b = a + 1; b < 5; b++)
            for (size_t j = 0; j < 200; j++) {
                double d = mean[a * 200 + j] - mean[b * 200 + j];
                between += d * d / 10.0; /* mean over the 10 pairs */
            }
    /* Noise variance 1 per coordinate, estimated from 1e6 values: within 1%. The squared
     * centre distance has mean 2 sep^2 and relative spread sqrt(2 / dim) = 0.1 per pair,
     * about 0.04 over 10 pairs: allow 15%. */
    ck_assert_double_eq_tol(within, 1.0, 0.01);
    ck_assert_double_eq_tol(between / (2 * sep * sep), 1.0, 0.15);
    free(mean);
    data_fini(&ds);
    gsl_rng_free(r);
}
END_TEST

START_TEST(synthetic_rejects_bad_configurations)
{
    data_set ds;
    sim_err err = { 0 };
    gsl_rng *r = rng(2385, SIM_STREAM_DATA);
    data_synthetic_config cfg = { .n = 10, .dim = 3, .classes = 1, .separation = 1.0 };
    ck_assert_int_eq(data_synthetic(&cfg, r, &ds, &err), SIM_EINVAL);
    datat_expect_err(&err, SIM_EINVAL, "synthetic classes must be 2..256, got 1");
    cfg.classes = 3;
    cfg.separation = -0.5;
    ck_assert_int_eq(data_synthetic(&cfg, r, &ds, &err), SIM_EINVAL);
    datat_expect_err(&err, SIM_EINVAL, "synthetic separation must be finite and >= 0, got -0.5");
    cfg.separation = 1.0;
    cfg.n = (size_t)1 << 40;
    ck_assert_int_eq(data_synthetic(&cfg, r, &ds, &err), SIM_EINVAL);
    datat_expect_err(&err, SIM_EINVAL,
                     "data set of 1099511627776 examples of 3 features is out of range (1 to "
                     "1073741824 floats in all)");
    datat_expect_empty(&ds);
    gsl_rng_free(r);
}
END_TEST

START_TEST(standardizing_gives_zero_mean_and_unit_deviation)
{
    data_synthetic_config cfg = { .n = 300, .dim = 17, .classes = 3, .separation = 6.0 };
    data_set ds;
    sim_err err = { 0 };
    gsl_rng *r = rng(2385, SIM_STREAM_DATA);
    ck_assert_int_eq(data_synthetic(&cfg, r, &ds, &err), SIM_OK);
    double mean, sd;
    data_moments(&ds, &mean, &sd);
    data_standardize(&ds, mean, sd);
    data_moments(&ds, &mean, &sd);
    /* float storage of values of size ~3 rounds each by ~2e-7 */
    ck_assert_double_eq_tol(mean, 0.0, 1e-6);
    ck_assert_double_eq_tol(sd, 1.0, 1e-6);
    data_fini(&ds);
    gsl_rng_free(r);
}
END_TEST

/* ---- Partitions ---- */

/* A label-only set of n examples: label of i drawn uniformly from 0..classes-1. */
static void label_set(data_set *ds, size_t n, uint32_t classes, gsl_rng *r)
{
    sim_err err = { 0 };
    ck_assert_int_eq(data_set_alloc(ds, n, 1, &err), SIM_OK);
    ds->classes = classes;
    for (size_t i = 0; i < n; i++) {
        ds->y[i] = (uint8_t)gsl_rng_uniform_int(r, classes);
        ds->x[i] = (float)i;
    }
}

/* Every example exactly once, every worker non-empty, ids ascending within each worker. */
static void check_cover(const data_partition *p, size_t n, size_t workers)
{
    ck_assert_uint_eq(p->workers, workers);
    ck_assert_uint_eq(p->n, n);
    ck_assert_uint_eq(p->offset[0], 0);
    ck_assert_uint_eq(p->offset[workers], n);
    unsigned char *seen = calloc(n, 1);
    size_t bad = 0;
    for (size_t w = 0; w < workers; w++) {
        bad += p->offset[w + 1] <= p->offset[w]; /* empty or inverted */
        for (size_t k = p->offset[w]; k < p->offset[w + 1]; k++) {
            bad += p->index[k] >= n || seen[p->index[k]]++ != 0;
            bad += k > p->offset[w] && p->index[k] <= p->index[k - 1];
        }
    }
    for (size_t i = 0; i < n; i++)
        bad += seen[i] != 1;
    ck_assert_uint_eq(bad, 0);
    free(seen);
}

/* Mean over workers of the largest share one class has in the worker's examples. */
static double skew(const data_partition *p, const data_set *ds)
{
    double total = 0;
    for (size_t w = 0; w < p->workers; w++) {
        size_t count[DATA_MAX_CLASSES] = { 0 }, most = 0;
        for (size_t k = p->offset[w]; k < p->offset[w + 1]; k++) {
            size_t c = ds->y[p->index[k]];
            if (++count[c] > most)
                most = count[c];
        }
        total += (double)most / (double)(p->offset[w + 1] - p->offset[w]);
    }
    return total / (double)p->workers;
}

START_TEST(iid_partition_covers_every_example_once_in_near_equal_shares)
{
    gsl_rng *r = rng(2385, SIM_STREAM_DATA);
    data_set ds;
    label_set(&ds, 10007, 10, r);
    data_partition p, q;
    sim_err err = { 0 };
    ck_assert_int_eq(data_partition_iid(&ds, 16, r, &p, &err), SIM_OK);
    check_cover(&p, 10007, 16);
    for (size_t w = 0; w < 16; w++) {
        size_t size = p.offset[w + 1] - p.offset[w];
        ck_assert(size == 625 || size == 626); /* 10007 / 16 = 625.4 */
    }
    ck_assert_double_lt(skew(&p, &ds), 0.15); /* ~0.1 plus sampling noise */
    gsl_rng *r2 = rng(2385, SIM_STREAM_DATA);
    data_set ds2;
    label_set(&ds2, 10007, 10, r2);
    ck_assert_int_eq(data_partition_iid(&ds2, 16, r2, &q, &err), SIM_OK);
    ck_assert_int_eq(memcmp(p.offset, q.offset, 17 * sizeof(size_t)), 0);
    ck_assert_int_eq(memcmp(p.index, q.index, 10007 * sizeof(size_t)), 0);
    data_partition_fini(&p);
    data_partition_fini(&q);
    data_partition_fini(&q);
    data_fini(&ds);
    data_fini(&ds2);
    gsl_rng_free(r);
    gsl_rng_free(r2);
}
END_TEST

/* Skew of a Dirichlet partition of `ds` over 16 workers, drawn from a fresh stream. */
static double dirichlet_skew(const data_set *ds, double alpha)
{
    gsl_rng *r = rng(2385, SIM_STREAM_PROTO);
    data_partition p;
    sim_err err = { 0 };
    ck_assert_int_eq(data_partition_dirichlet(ds, 16, alpha, r, &p, &err), SIM_OK);
    check_cover(&p, ds->n, 16);
    double s = skew(&p, ds);
    data_partition_fini(&p);
    gsl_rng_free(r);
    return s;
}

START_TEST(dirichlet_partition_covers_every_example_and_skews_with_small_alpha)
{
    gsl_rng *r = rng(2385, SIM_STREAM_DATA);
    data_set ds;
    label_set(&ds, 20011, 10, r);
    /* Mean largest class share per worker, measured with these seeds: 0.91 at alpha 0.01,
     * 0.67 at 0.1, 0.30 at 1, 0.107 at 1000, against 0.1 plus noise for iid data. The
     * thresholds leave a margin around each. */
    double s001 = dirichlet_skew(&ds, 0.01), s01 = dirichlet_skew(&ds, 0.1);
    double s1 = dirichlet_skew(&ds, 1.0), s1000 = dirichlet_skew(&ds, 1000.0);
    ck_assert_double_gt(s001, 0.8);
    ck_assert_double_gt(s01, 0.5);
    ck_assert_double_lt(s1, 0.45);
    ck_assert_double_lt(s1000, 0.15);
    ck_assert_double_gt(s001, s01);
    ck_assert_double_gt(s01, s1);
    ck_assert_double_gt(s1, s1000);
    data_fini(&ds);
    gsl_rng_free(r);
}
END_TEST

START_TEST(dirichlet_partition_fills_empty_workers)
{
    gsl_rng *r = rng(2385, SIM_STREAM_DATA);
    data_set ds;
    label_set(&ds, 23, 3, r);
    for (int round = 0; round < 20; round++) {
        data_partition p;
        sim_err err = { 0 };
        /* 3 classes over 23 workers at alpha 0.01: most workers get nothing before the
         * fix-up, and with 23 examples each ends with exactly one */
        ck_assert_int_eq(data_partition_dirichlet(&ds, 23, 0.01, r, &p, &err), SIM_OK);
        check_cover(&p, 23, 23);
        data_partition_fini(&p);
        ck_assert_int_eq(data_partition_dirichlet(&ds, 7, 0.01, r, &p, &err), SIM_OK);
        check_cover(&p, 23, 7);
        data_partition_fini(&p);
    }
    data_fini(&ds);
    gsl_rng_free(r);
}
END_TEST

START_TEST(partitions_reject_bad_worker_counts_and_alpha)
{
    gsl_rng *r = rng(2385, SIM_STREAM_DATA);
    data_set ds;
    label_set(&ds, 5, 2, r);
    data_partition p;
    sim_err err = { 0 };
    ck_assert_int_eq(data_partition_iid(&ds, 6, r, &p, &err), SIM_EINVAL);
    datat_expect_err(&err, SIM_EINVAL,
                     "cannot partition 5 examples over 6 workers: each needs at least one");
    ck_assert_ptr_null(p.offset);
    ck_assert_int_eq(data_partition_iid(&ds, 0, r, &p, &err), SIM_EINVAL);
    ck_assert_int_eq(data_partition_dirichlet(&ds, 2, 0.0, r, &p, &err), SIM_EINVAL);
    datat_expect_err(&err, SIM_EINVAL, "dirichlet alpha must be finite and > 0, got 0");
    ck_assert_int_eq(data_partition_dirichlet(&ds, 2, NAN, r, &p, &err), SIM_EINVAL);
    ck_assert_int_eq(data_partition_dirichlet(&ds, 6, 1.0, r, &p, &err), SIM_EINVAL);
    data_partition_fini(NULL);
    data_fini(&ds);
    gsl_rng_free(r);
}
END_TEST

/* ---- Sampler ---- */

/* Draws `batches` batches and checks that each run of n ids is a permutation of idx and
 * that the features and labels are the examples' own. */
static void check_sampler(const data_set *ds, const size_t *idx, size_t n, size_t batch,
                          size_t batches, uint64_t seed)
{
    sim_err err = { 0 };
    data_sampler *s = data_sampler_create(ds, idx, n, batch, &err);
    ck_assert_ptr_nonnull(s);
    ck_assert_uint_eq(data_sampler_epoch(s), 0);
    gsl_rng *r = rng(seed, SIM_STREAM_WORKER + 3);
    size_t total = batch * batches;
    size_t *ids = malloc(total * sizeof(size_t));
    float *x = malloc(batch * ds->dim * sizeof(float));
    uint8_t *y = malloc(batch);
    size_t bad = 0;
    for (size_t b = 0; b < batches; b++) {
        data_sampler_next(s, r, x, y, ids + b * batch);
        for (size_t k = 0; k < batch; k++) {
            size_t id = ids[b * batch + k];
            bad += y[k] != ds->y[id] || x[k * ds->dim] != ds->x[id * ds->dim];
        }
    }
    ck_assert_uint_eq(bad, 0);
    ck_assert_uint_eq(data_sampler_epoch(s), (total + n - 1) / n);
    unsigned char *seen = calloc(ds->n, 1);
    for (size_t e = 0; e + 1 <= total / n; e++) {
        memset(seen, 0, ds->n);
        for (size_t k = 0; k < n; k++)
            seen[ids[e * n + k]]++;
        for (size_t k = 0; k < n; k++)
            bad += seen[idx[k]] != 1;
    }
    ck_assert_uint_eq(bad, 0);
    free(seen);
    free(ids);
    free(x);
    free(y);
    gsl_rng_free(r);
    data_sampler_destroy(s);
}

START_TEST(sampler_deals_each_example_once_per_epoch)
{
    gsl_rng *r = rng(2385, SIM_STREAM_DATA);
    data_set ds;
    label_set(&ds, 211, 7, r);
    size_t idx[37];
    for (size_t k = 0; k < 37; k++)
        idx[k] = 5 * k + 3;
    check_sampler(&ds, idx, 37, 5, 23, 11); /* batches straddle epochs */
    check_sampler(&ds, idx, 3, 8, 9, 12);   /* a batch larger than the worker's share */
    check_sampler(&ds, idx, 37, 37, 4, 13); /* one batch per epoch */
    data_fini(&ds);
    gsl_rng_free(r);
}
END_TEST

START_TEST(sampler_order_depends_only_on_the_worker_stream)
{
    gsl_rng *r = rng(2385, SIM_STREAM_DATA);
    data_set ds;
    label_set(&ds, 64, 4, r);
    size_t idx[64], a[64 * 2], b[64 * 2];
    for (size_t k = 0; k < 64; k++)
        idx[k] = k;
    float x[16 * 1];
    uint8_t y[16];
    sim_err err = { 0 };
    for (int pass = 0; pass < 2; pass++) {
        data_sampler *s = data_sampler_create(&ds, idx, 64, 16, &err);
        gsl_rng *wr = rng(99, SIM_STREAM_WORKER + 1);
        for (size_t k = 0; k < 8; k++)
            data_sampler_next(s, wr, x, y, (pass == 0 ? a : b) + 16 * k);
        data_sampler_destroy(s);
        gsl_rng_free(wr);
    }
    ck_assert_int_eq(memcmp(a, b, sizeof(a)), 0);
    ck_assert_int_ne(memcmp(a, a + 64, 64 * sizeof(size_t)), 0); /* reshuffled */
    ck_assert_int_ne(memcmp(a, idx, 64 * sizeof(size_t)), 0);    /* shuffled */
    ck_assert_ptr_null(data_sampler_create(&ds, idx, 0, 4, &err));
    datat_expect_err(&err, SIM_EINVAL,
                     "sampler needs at least one example and a batch >= 1, got 0 and 4");
    idx[5] = 64;
    ck_assert_ptr_null(data_sampler_create(&ds, idx, 64, 4, &err));
    datat_expect_err(&err, SIM_EINVAL, "sampler example id 64 is not below 64");
    data_sampler_destroy(NULL);
    data_fini(&ds);
    gsl_rng_free(r);
}
END_TEST

Suite *test_suite(void)
{
    Suite *s = suite_create("data_sampling");
    TCase *tc = tcase_create("synthetic");
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, synthetic_data_is_deterministic_for_a_seed);
    tcase_add_test(tc, synthetic_classes_are_balanced_and_separated_as_configured);
    tcase_add_test(tc, synthetic_rejects_bad_configurations);
    tcase_add_test(tc, standardizing_gives_zero_mean_and_unit_deviation);
    suite_add_tcase(s, tc);
    tc = tcase_create("partition");
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, iid_partition_covers_every_example_once_in_near_equal_shares);
    tcase_add_test(tc, dirichlet_partition_covers_every_example_and_skews_with_small_alpha);
    tcase_add_test(tc, dirichlet_partition_fills_empty_workers);
    tcase_add_test(tc, partitions_reject_bad_worker_counts_and_alpha);
    suite_add_tcase(s, tc);
    tc = tcase_create("sampler");
    tcase_add_test(tc, sampler_deals_each_example_once_per_epoch);
    tcase_add_test(tc, sampler_order_depends_only_on_the_worker_stream);
    suite_add_tcase(s, tc);
    return s;
}
