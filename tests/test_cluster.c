/* Cluster: compute times, straggler rules, jitter and limits.
 *
 * Scenarios are built by hand (sim_scenario is plain data), so these tests do not depend on
 * the loader. Expected durations are worked out by hand as exact integers wherever the
 * factors allow; random draws are checked against a replay on a fresh mt19937 seeded with
 * the same derived seed.
 */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include <check.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>

#include "harness_cluster.h"
#include "scenario/cluster.h"
#include "sim/rng.h"
#include "suite.h"

/* The longest duration sim_cluster_iteration_ns returns, as documented in scenario/cluster.c. */
static const sim_time max_iteration_ns = INT64_C(1) << 62;

/* ---- compute ---- */

START_TEST(plain_worker_takes_base_over_speed)
{
    fixture f;
    clt_fixture_init(&f, 1, 2385, 120 * ms);
    f.speeds[0] = 2.385;
    sim_cluster *cl = clt_make(&f);
    ck_assert_uint_eq(sim_cluster_workers(cl), 1);
    // 120e6 / 2.385 = 50314465.41 ns, rounded once to the nearest ns.
    for (uint64_t k = 0; k < 5; k++)
        ck_assert_int_eq(sim_cluster_iteration_ns(cl, 0, (sim_time)k * 7 * sec, k), 50314465);
    ck_assert(clt_untouched(&f, cl, 0)); /* no rule, no jitter: no draw */
    sim_cluster_destroy(cl);
}
END_TEST

START_TEST(speeds_scale_each_worker)
{
    fixture f;
    clt_fixture_init(&f, 4, 77, 97300000);
    const double speeds[4] = { 1.0, 0.5, 2.385, 3.7 };
    memcpy(f.speeds, speeds, sizeof(speeds));
    sim_cluster *cl = clt_make(&f);
    // 97.3 ms divided by each speed: 40796645.70 rounds up, 26297297.30 down.
    const sim_time expect[4] = { 97300000, 194600000, 40796646, 26297297 };
    for (uint32_t w = 0; w < 4; w++)
        ck_assert_int_eq(sim_cluster_iteration_ns(cl, w, 0, 0), expect[w]);
    sim_cluster_destroy(cl);
}
END_TEST

START_TEST(fixed_rule_slows_only_selected_workers)
{
    fixture f;
    clt_fixture_init(&f, 4, 78, 80 * ms);
    f.speeds[3] = 1.6;
    clt_add_rule(&f, SIM_STRAG_FIXED, (uint32_t[]){ 1, 3 }, 2)->slowdown = 2.75;
    sim_cluster *cl = clt_make(&f);
    const sim_time expect[4] = { 80 * ms, 220 * ms, 80 * ms, 137500000 };
    for (uint32_t w = 0; w < 4; w++) {
        ck_assert_int_eq(sim_cluster_iteration_ns(cl, w, 3 * sec, 9), expect[w]);
        ck_assert(clt_untouched(&f, cl, w));
    }
    sim_cluster_destroy(cl);
}
END_TEST

START_TEST(two_fixed_rules_multiply)
{
    fixture f;
    clt_fixture_init(&f, 4, 79, 80 * ms);
    clt_add_rule(&f, SIM_STRAG_FIXED, (uint32_t[]){ 0, 1 }, 2)->slowdown = 2.75;
    clt_add_rule(&f, SIM_STRAG_FIXED, (uint32_t[]){ 1, 2 }, 2)->slowdown = 1.375;
    sim_cluster *cl = clt_make(&f);
    // Worker 1: 80 ms * 2.75 * 1.375 = 302.5 ms, exact in binary.
    const sim_time expect[4] = { 220 * ms, 302500000, 110 * ms, 80 * ms };
    for (uint32_t w = 0; w < 4; w++)
        ck_assert_int_eq(sim_cluster_iteration_ns(cl, w, 0, 0), expect[w]);
    ck_assert_double_eq(sim_cluster_static_slowdown(cl, 1, 0), 2.75 * 1.375);
    sim_cluster_destroy(cl);
}
END_TEST

START_TEST(window_includes_from_and_excludes_to)
{
    fixture f;
    clt_fixture_init(&f, 3, 80, 50 * ms);
    sim_straggler *r = clt_add_rule(&f, SIM_STRAG_WINDOW, (uint32_t[]){ 2 }, 1);
    r->slowdown = 3.4;
    r->from_ns = 1500 * ms;
    r->to_ns = 4250 * ms;
    sim_cluster *cl = clt_make(&f);
    // 50 ms * 3.4 = 170 ms (3.4 is inexact, but the error is far below half a ns).
    ck_assert_int_eq(sim_cluster_iteration_ns(cl, 2, 0, 0), 50 * ms);
    ck_assert_int_eq(sim_cluster_iteration_ns(cl, 2, 1500 * ms - 1, 1), 50 * ms);
    ck_assert_int_eq(sim_cluster_iteration_ns(cl, 2, 1500 * ms, 2), 170 * ms);
    ck_assert_int_eq(sim_cluster_iteration_ns(cl, 2, 2718 * ms, 3), 170 * ms);
    ck_assert_int_eq(sim_cluster_iteration_ns(cl, 2, 4250 * ms - 1, 4), 170 * ms);
    ck_assert_int_eq(sim_cluster_iteration_ns(cl, 2, 4250 * ms, 5), 50 * ms);
    ck_assert_int_eq(sim_cluster_iteration_ns(cl, 0, 2718 * ms, 0), 50 * ms);
    ck_assert_double_eq(sim_cluster_static_slowdown(cl, 2, 1500 * ms), 3.4);
    ck_assert_double_eq(sim_cluster_static_slowdown(cl, 2, 4250 * ms), 1.0);
    ck_assert(clt_untouched(&f, cl, 2));
    sim_cluster_destroy(cl);
}
END_TEST

/* Runs `iters` iterations of worker 0 under one random rule and checks every duration. */
static void run_random(double probability, sim_time expect, int iters)
{
    fixture f;
    clt_fixture_init(&f, 2, 81, 30 * ms);
    sim_straggler *r = clt_add_rule(&f, SIM_STRAG_RANDOM, (uint32_t[]){ 0 }, 1);
    r->probability = probability;
    r->slowdown = 4.5;
    sim_cluster *cl = clt_make(&f);
    for (int k = 0; k < iters; k++)
        ck_assert_int_eq(sim_cluster_iteration_ns(cl, 0, k * 30 * ms, (uint64_t)k), expect);
    // The stream advanced by one uniform draw per iteration, whatever the probability.
    gsl_rng *fresh = clt_replay_rng(&f, 0);
    for (int k = 0; k < iters; k++)
        (void)gsl_rng_uniform(fresh);
    ck_assert(clt_same_position(sim_cluster_worker_rng(cl, 0), fresh));
    ck_assert(clt_untouched(&f, cl, 1));
    gsl_rng_free(fresh);
    sim_cluster_destroy(cl);
}

START_TEST(random_rule_with_probability_zero_never_slows_but_draws)
{
    run_random(0.0, 30 * ms, 57);
}
END_TEST

START_TEST(random_rule_with_probability_one_always_slows_and_draws)
{
    run_random(1.0, 135 * ms, 57);
}
END_TEST

START_TEST(random_rules_match_a_replay_of_the_draws_in_file_order)
{
    fixture f;
    clt_fixture_init(&f, 3, 82, 64 * ms);
    sim_straggler *a = clt_add_rule(&f, SIM_STRAG_RANDOM, (uint32_t[]){ 0, 1 }, 2);
    a->probability = 0.3;
    a->slowdown = 3.125;
    sim_straggler *b = clt_add_rule(&f, SIM_STRAG_RANDOM, (uint32_t[]){ 1 }, 1);
    b->probability = 0.55;
    b->slowdown = 1.5;
    sim_cluster *cl = clt_make(&f);
    gsl_rng *r0 = clt_replay_rng(&f, 0), *r1 = clt_replay_rng(&f, 1);
    int slowed = 0;
    for (int k = 0; k < 400; k++) {
        sim_time now = k * 64 * ms;
        // 64 ms times 3.125 and 1.5 are whole ns: 200 ms, 96 ms, 300 ms.
        sim_time e0 = gsl_rng_uniform(r0) < 0.3 ? 200 * ms : 64 * ms;
        sim_time e1 = 64 * ms;
        if (gsl_rng_uniform(r1) < 0.3)
            e1 = 200 * ms;
        if (gsl_rng_uniform(r1) < 0.55)
            e1 = e1 * 3 / 2;
        slowed += e0 != 64 * ms;
        ck_assert_int_eq(sim_cluster_iteration_ns(cl, 0, now, (uint64_t)k), e0);
        ck_assert_int_eq(sim_cluster_iteration_ns(cl, 1, now, (uint64_t)k), e1);
        ck_assert_int_eq(sim_cluster_iteration_ns(cl, 2, now, (uint64_t)k), 64 * ms);
    }
    // Both outcomes occur (about 120 of 400 are slowed), so the replay compared both.
    ck_assert_int_gt(slowed, 60);
    ck_assert_int_lt(slowed, 180);
    ck_assert(clt_same_position(sim_cluster_worker_rng(cl, 0), r0));
    ck_assert(clt_same_position(sim_cluster_worker_rng(cl, 1), r1));
    ck_assert(clt_untouched(&f, cl, 2)); /* not selected: never drawn from */
    gsl_rng_free(r0);
    gsl_rng_free(r1);
    sim_cluster_destroy(cl);
}
END_TEST

START_TEST(trace_lookup_before_between_and_after_points)
{
    fixture f;
    clt_fixture_init(&f, 4, 83, 40 * ms);
    clt_add_trace(&f, clt_trace_points, 6);
    sim_cluster *cl = clt_make(&f);
    struct {
        sim_time now;
        sim_time expect;
    } w0[] = { { 0, 40 * ms },          { 1 * sec - 1, 40 * ms }, { 1 * sec, 100 * ms },
               { 2999 * ms, 100 * ms }, { 3 * sec, 160 * ms },    { 5499 * ms, 160 * ms },
               { 5500 * ms, 40 * ms },  { 900 * sec, 40 * ms } };
    for (size_t i = 0; i < sizeof(w0) / sizeof(w0[0]); i++)
        ck_assert_int_eq(sim_cluster_iteration_ns(cl, 0, w0[i].now, i), w0[i].expect);
    ck_assert_double_eq(sim_cluster_static_slowdown(cl, 0, 3 * sec), 4.0);
    ck_assert(clt_untouched(&f, cl, 0));
    sim_cluster_destroy(cl);
}
END_TEST

START_TEST(trace_lookup_keeps_interleaved_workers_apart)
{
    fixture f;
    clt_fixture_init(&f, 4, 84, 40 * ms);
    clt_add_trace(&f, clt_trace_points, 6);
    sim_cluster *cl = clt_make(&f);
    // Worker 1: 1.75 from 2 s, 3.5 from 6 s; worker 2: 1.25 from 3 s; worker 3: no points.
    ck_assert_int_eq(sim_cluster_iteration_ns(cl, 1, 1999 * ms, 0), 40 * ms);
    ck_assert_int_eq(sim_cluster_iteration_ns(cl, 1, 2 * sec, 1), 70 * ms);
    ck_assert_int_eq(sim_cluster_iteration_ns(cl, 1, 5999 * ms, 2), 70 * ms);
    ck_assert_int_eq(sim_cluster_iteration_ns(cl, 1, 6 * sec, 3), 140 * ms);
    ck_assert_int_eq(sim_cluster_iteration_ns(cl, 2, 2999 * ms, 0), 40 * ms);
    ck_assert_int_eq(sim_cluster_iteration_ns(cl, 2, 3 * sec, 1), 50 * ms);
    ck_assert_int_eq(sim_cluster_iteration_ns(cl, 2, 60 * sec, 2), 50 * ms);
    for (sim_time t = 0; t < 10 * sec; t += 500 * ms)
        ck_assert_int_eq(sim_cluster_iteration_ns(cl, 3, t, 0), 40 * ms);
    sim_cluster_destroy(cl);
}
END_TEST

START_TEST(trace_rules_multiply)
{
    fixture f;
    clt_fixture_init(&f, 4, 85, 40 * ms);
    clt_add_trace(&f, clt_trace_points, 6);
    const sim_trace_point second[] = { { 0, 0, 1.2 }, { 4000000000, 3, 2.0 } };
    clt_add_trace(&f, second, 2);
    sim_cluster *cl = clt_make(&f);
    // 40 ms * 2.5 * 1.2 = 120 ms: 1.2 is inexact, but the error is far below half a ns.
    ck_assert_int_eq(sim_cluster_iteration_ns(cl, 0, 0, 0), 48 * ms);
    ck_assert_int_eq(sim_cluster_iteration_ns(cl, 0, 1 * sec, 1), 120 * ms);
    ck_assert_int_eq(sim_cluster_iteration_ns(cl, 3, 3999 * ms, 0), 40 * ms);
    ck_assert_int_eq(sim_cluster_iteration_ns(cl, 3, 4 * sec, 1), 80 * ms);
    sim_cluster_destroy(cl);
}
END_TEST

START_TEST(static_slowdown_leaves_out_random_rules_and_draws_nothing)
{
    fixture f;
    clt_fixture_init(&f, 2, 86, 8 * ms);
    clt_add_rule(&f, SIM_STRAG_FIXED, (uint32_t[]){ 0 }, 1)->slowdown = 1.5;
    sim_straggler *rnd = clt_add_rule(&f, SIM_STRAG_RANDOM, (uint32_t[]){ 0 }, 1);
    rnd->probability = 1.0;
    rnd->slowdown = 7.0;
    sim_straggler *win = clt_add_rule(&f, SIM_STRAG_WINDOW, (uint32_t[]){ 0 }, 1);
    win->slowdown = 2.25;
    win->from_ns = 1 * sec;
    win->to_ns = 2 * sec;
    const sim_trace_point pts[] = { { 500000000, 0, 3.0 } };
    clt_add_trace(&f, pts, 1);
    sim_cluster *cl = clt_make(&f);
    ck_assert_double_eq(sim_cluster_static_slowdown(cl, 0, 0), 1.5);
    ck_assert_double_eq(sim_cluster_static_slowdown(cl, 0, 1500 * ms), 10.125);
    ck_assert_double_eq(sim_cluster_static_slowdown(cl, 0, 2500 * ms), 4.5);
    ck_assert_double_eq(sim_cluster_static_slowdown(cl, 1, 1500 * ms), 1.0);
    ck_assert(clt_untouched(&f, cl, 0));
    // With the random factor: 8 ms * 1.5 * 7 * 2.25 * 3 = 567 ms, exact in binary.
    ck_assert_int_eq(sim_cluster_iteration_ns(cl, 0, 1500 * ms, 0), 567 * ms);
    sim_cluster_destroy(cl);
}
END_TEST

START_TEST(jitter_mean_is_within_three_standard_errors_of_the_base)
{
    fixture f;
    clt_fixture_init(&f, 1, 87, 100 * ms);
    const double sigma = 0.2;
    f.sc.jitter_sigma = sigma;
    sim_cluster *cl = clt_make(&f);
    const int n = 20000;
    double sum = 0.0;
    for (int k = 0; k < n; k++)
        sum += (double)sim_cluster_iteration_ns(cl, 0, 0, (uint64_t)k) / (double)(100 * ms);
    // The jitter is lognormal(-sigma^2/2, sigma): mean exactly 1, variance exp(sigma^2) - 1,
    // so the mean of n draws has standard error sqrt((exp(sigma^2) - 1) / n) = 0.00143.
    // Rounding to whole ns moves each ratio by at most 5e-9, far below that. A wrong
    // location (e.g. zeta = 0, mean 1.02) is off by 14 standard errors. The seed is fixed,
    // so the check is deterministic; 3 standard errors is what a correct sampler passes
    // for 99.7% of seeds.
    double se = sqrt(expm1(sigma * sigma) / n);
    ck_assert_double_eq_tol(sum / n, 1.0, 3.0 * se);
    sim_cluster_destroy(cl);
}
END_TEST

START_TEST(jitter_replays_lognormal_draws_after_the_random_draws)
{
    fixture f;
    clt_fixture_init(&f, 2, 88, 100 * ms);
    const double sigma = 0.35;
    f.sc.jitter_sigma = sigma;
    sim_straggler *r = clt_add_rule(&f, SIM_STRAG_RANDOM, (uint32_t[]){ 0 }, 1);
    r->probability = 0.3;
    r->slowdown = 3.125;
    sim_cluster *cl = clt_make(&f);
    gsl_rng *r0 = clt_replay_rng(&f, 0), *r1 = clt_replay_rng(&f, 1);
    for (int k = 0; k < 300; k++) {
        double f0 = gsl_rng_uniform(r0) < 0.3 ? 3.125 : 1.0;
        double j0 = gsl_ran_lognormal(r0, -0.5 * sigma * sigma, sigma);
        double j1 = gsl_ran_lognormal(r1, -0.5 * sigma * sigma, sigma);
        // The same double operations in the same order as the module: base / speed *
        // slowdown * jitter, with speed 1, so the integers must agree exactly.
        sim_time e0 = (sim_time)llround(1e8 / 1.0 * f0 * j0);
        sim_time e1 = (sim_time)llround(1e8 / 1.0 * 1.0 * j1);
        ck_assert_int_eq(sim_cluster_iteration_ns(cl, 0, 0, (uint64_t)k), e0);
        ck_assert_int_eq(sim_cluster_iteration_ns(cl, 1, 0, (uint64_t)k), e1);
    }
    ck_assert(clt_same_position(sim_cluster_worker_rng(cl, 0), r0));
    ck_assert(clt_same_position(sim_cluster_worker_rng(cl, 1), r1));
    gsl_rng_free(r0);
    gsl_rng_free(r1);
    sim_cluster_destroy(cl);
}
END_TEST

START_TEST(huge_slowdown_product_clamps_without_undefined_behaviour)
{
    fixture f;
    clt_fixture_init(&f, 5, 89, 100 * ms);
    clt_add_rule(&f, SIM_STRAG_FIXED, (uint32_t[]){ 0 }, 1)->slowdown = 1e300;
    clt_add_rule(&f, SIM_STRAG_FIXED, (uint32_t[]){ 0, 1 }, 2)->slowdown = 1e300;      /* 0: inf */
    clt_add_rule(&f, SIM_STRAG_FIXED, (uint32_t[]){ 2 }, 1)->slowdown = 1.073741824e9; /* 2^30 */
    clt_add_rule(&f, SIM_STRAG_FIXED, (uint32_t[]){ 3 }, 1)->slowdown = nan("");
    f.sc.iteration_ns = INT64_C(1) << 31;
    f.speeds[4] = 1e12; /* 2^31 ns / 1e12 rounds to 0: clamped up to 1 ns */
    sim_cluster *cl = clt_make(&f);
    ck_assert_int_eq(sim_cluster_iteration_ns(cl, 0, 0, 0), max_iteration_ns);
    ck_assert_int_eq(sim_cluster_iteration_ns(cl, 1, 0, 0), max_iteration_ns);
    ck_assert_int_eq(sim_cluster_iteration_ns(cl, 2, 0, 0), INT64_C(1) << 61);
    ck_assert_int_eq(sim_cluster_iteration_ns(cl, 3, 0, 0), max_iteration_ns);
    ck_assert_int_eq(sim_cluster_iteration_ns(cl, 4, 0, 0), 1);
    sim_cluster_destroy(cl);
}
END_TEST

START_TEST(wild_jitter_stays_within_the_clamp)
{
    fixture f;
    clt_fixture_init(&f, 2, 90, INT64_C(1) << 61);
    f.sc.jitter_sigma = 1.0;
    f.speeds[1] = 1e19; /* base / speed = 0.23 ns: most draws round below 1 ns */
    sim_cluster *cl = clt_make(&f);
    // Worker 0 exceeds 2^62 ns whenever the jitter exceeds 2 (about 12% of draws).
    int low = 0, high = 0;
    for (int k = 0; k < 2000; k++) {
        for (uint32_t w = 0; w < 2; w++) {
            sim_time t = sim_cluster_iteration_ns(cl, w, 0, (uint64_t)k);
            ck_assert_int_ge(t, 1);
            ck_assert_int_le(t, max_iteration_ns);
            low += t == 1;
            high += t == max_iteration_ns;
        }
    }
    ck_assert_int_gt(low, 0);
    ck_assert_int_gt(high, 0);
    sim_cluster_destroy(cl);
}
END_TEST

Suite *test_suite(void)
{
    Suite *su = suite_create("cluster");
    TCase *tc = tcase_create("compute");
    tcase_add_test(tc, plain_worker_takes_base_over_speed);
    tcase_add_test(tc, speeds_scale_each_worker);
    tcase_add_test(tc, fixed_rule_slows_only_selected_workers);
    tcase_add_test(tc, two_fixed_rules_multiply);
    tcase_add_test(tc, window_includes_from_and_excludes_to);
    tcase_add_test(tc, random_rule_with_probability_zero_never_slows_but_draws);
    tcase_add_test(tc, random_rule_with_probability_one_always_slows_and_draws);
    tcase_add_test(tc, random_rules_match_a_replay_of_the_draws_in_file_order);
    tcase_add_test(tc, trace_lookup_before_between_and_after_points);
    tcase_add_test(tc, trace_lookup_keeps_interleaved_workers_apart);
    tcase_add_test(tc, trace_rules_multiply);
    tcase_add_test(tc, static_slowdown_leaves_out_random_rules_and_draws_nothing);
    suite_add_tcase(su, tc);

    tc = tcase_create("jitter_and_limits");
    tcase_add_test(tc, jitter_mean_is_within_three_standard_errors_of_the_base);
    tcase_add_test(tc, jitter_replays_lognormal_draws_after_the_random_draws);
    tcase_add_test(tc, huge_slowdown_product_clamps_without_undefined_behaviour);
    tcase_add_test(tc, wild_jitter_stays_within_the_clamp);
    suite_add_tcase(su, tc);
    return su;
}
