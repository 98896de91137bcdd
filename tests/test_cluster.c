/* Cluster: compute times, straggler rules, the timeline, streams and up/down state.
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

#include "scenario/cluster.h"
#include "sim/rng.h"
#include "suite.h"

enum {
    MAXW = 8,
    MAXR = 8
};

/* The longest duration sim_cluster_iteration_ns returns, as documented in scenario/cluster.c. */
static const sim_time max_iteration_ns = INT64_C(1) << 62;

static const sim_time ms = 1000000;     /* ns per millisecond */
static const sim_time sec = 1000000000; /* ns per second */

/* A hand-built scenario with room for MAXW workers and MAXR rules. Not to be copied: the
 * scenario points into the fixture. */
typedef struct fixture {
    sim_scenario sc;
    uint32_t seeds[SIM_STREAM_WORKER + MAXW];
    double speeds[MAXW];
    sim_straggler rules[MAXR];
    uint32_t ids[32]; /* the rules' worker lists */
    size_t nids;
    sim_trace_point points[16]; /* the trace rules' points */
    size_t npoints;
} fixture;

static void fixture_init(fixture *f, uint32_t n, uint64_t seed, sim_time iteration_ns)
{
    ck_assert_uint_le(n, MAXW);
    memset(f, 0, sizeof(*f));
    f->sc.seed = seed;
    f->sc.workers = n;
    f->sc.iteration_ns = iteration_ns;
    ck_assert_int_eq(sim_rng_derive(seed, SIM_STREAM_WORKER + n, f->seeds), SIM_OK);
    f->sc.stream_seeds = f->seeds;
    for (uint32_t w = 0; w < n; w++)
        f->speeds[w] = 1.0;
    f->sc.speeds = f->speeds;
    f->sc.stragglers = f->rules;
}

/* Appends a rule with neutral parameters; the caller sets the ones that matter. The worker
 * ids are copied into the fixture. */
static sim_straggler *add_rule(fixture *f, sim_straggler_kind kind, const uint32_t *workers,
                               size_t nworkers)
{
    ck_assert_uint_lt(f->sc.nstragglers, MAXR);
    ck_assert_uint_le(f->nids + nworkers, 32);
    uint32_t *copy = f->ids + f->nids;
    if (nworkers > 0)
        memcpy(copy, workers, nworkers * sizeof(*workers));
    f->nids += nworkers;
    sim_straggler *r = &f->rules[f->sc.nstragglers++];
    *r = (sim_straggler){ .kind = kind,
                          .workers = nworkers > 0 ? copy : NULL,
                          .nworkers = nworkers,
                          .slowdown = 1.0,
                          .probability = 0.0,
                          .from_ns = 0,
                          .to_ns = SIM_TIME_NEVER,
                          .bandwidth_factor = 1.0,
                          .at_ns = 0,
                          .recover_ns = SIM_TIME_NEVER };
    return r;
}

static sim_cluster *make(const fixture *f)
{
    sim_err err;
    sim_err_clear(&err);
    sim_cluster *cl = sim_cluster_create(&f->sc, &err);
    ck_assert_msg(cl != NULL, "create failed: %s", err.msg);
    return cl;
}

/* A fresh stream with worker w's seed, to replay its draws. */
static gsl_rng *replay_rng(const fixture *f, uint32_t w)
{
    gsl_rng *r = sim_rng_create(f->seeds[SIM_STREAM_WORKER + w]);
    ck_assert_ptr_nonnull(r);
    return r;
}

/* Whether two streams are at the same point (consumes a few draws of each). */
static bool same_position(gsl_rng *a, gsl_rng *b)
{
    bool same = true;
    for (int i = 0; i < 4; i++)
        same = same && gsl_rng_get(a) == gsl_rng_get(b);
    return same;
}

/* Whether worker w's stream has not been drawn from. */
static bool untouched(const fixture *f, sim_cluster *cl, uint32_t w)
{
    gsl_rng *fresh = replay_rng(f, w);
    bool same = same_position(sim_cluster_worker_rng(cl, w), fresh);
    gsl_rng_free(fresh);
    return same;
}

/* ---- compute ---- */

START_TEST(plain_worker_takes_base_over_speed)
{
    fixture f;
    fixture_init(&f, 1, 2385, 120 * ms);
    f.speeds[0] = 2.385;
    sim_cluster *cl = make(&f);
    ck_assert_uint_eq(sim_cluster_workers(cl), 1);
    // 120e6 / 2.385 = 50314465.41 ns, rounded once to the nearest ns.
    for (uint64_t k = 0; k < 5; k++)
        ck_assert_int_eq(sim_cluster_iteration_ns(cl, 0, (sim_time)k * 7 * sec, k), 50314465);
    ck_assert(untouched(&f, cl, 0)); /* no rule, no jitter: no draw */
    sim_cluster_destroy(cl);
}
END_TEST

START_TEST(speeds_scale_each_worker)
{
    fixture f;
    fixture_init(&f, 4, 77, 97300000);
    const double speeds[4] = { 1.0, 0.5, 2.385, 3.7 };
    memcpy(f.speeds, speeds, sizeof(speeds));
    sim_cluster *cl = make(&f);
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
    fixture_init(&f, 4, 78, 80 * ms);
    f.speeds[3] = 1.6;
    add_rule(&f, SIM_STRAG_FIXED, (uint32_t[]){ 1, 3 }, 2)->slowdown = 2.75;
    sim_cluster *cl = make(&f);
    const sim_time expect[4] = { 80 * ms, 220 * ms, 80 * ms, 137500000 };
    for (uint32_t w = 0; w < 4; w++) {
        ck_assert_int_eq(sim_cluster_iteration_ns(cl, w, 3 * sec, 9), expect[w]);
        ck_assert(untouched(&f, cl, w));
    }
    sim_cluster_destroy(cl);
}
END_TEST

START_TEST(two_fixed_rules_multiply)
{
    fixture f;
    fixture_init(&f, 4, 79, 80 * ms);
    add_rule(&f, SIM_STRAG_FIXED, (uint32_t[]){ 0, 1 }, 2)->slowdown = 2.75;
    add_rule(&f, SIM_STRAG_FIXED, (uint32_t[]){ 1, 2 }, 2)->slowdown = 1.375;
    sim_cluster *cl = make(&f);
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
    fixture_init(&f, 3, 80, 50 * ms);
    sim_straggler *r = add_rule(&f, SIM_STRAG_WINDOW, (uint32_t[]){ 2 }, 1);
    r->slowdown = 3.4;
    r->from_ns = 1500 * ms;
    r->to_ns = 4250 * ms;
    sim_cluster *cl = make(&f);
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
    ck_assert(untouched(&f, cl, 2));
    sim_cluster_destroy(cl);
}
END_TEST

/* Runs `iters` iterations of worker 0 under one random rule and checks every duration. */
static void run_random(double probability, sim_time expect, int iters)
{
    fixture f;
    fixture_init(&f, 2, 81, 30 * ms);
    sim_straggler *r = add_rule(&f, SIM_STRAG_RANDOM, (uint32_t[]){ 0 }, 1);
    r->probability = probability;
    r->slowdown = 4.5;
    sim_cluster *cl = make(&f);
    for (int k = 0; k < iters; k++)
        ck_assert_int_eq(sim_cluster_iteration_ns(cl, 0, k * 30 * ms, (uint64_t)k), expect);
    // The stream advanced by one uniform draw per iteration, whatever the probability.
    gsl_rng *fresh = replay_rng(&f, 0);
    for (int k = 0; k < iters; k++)
        (void)gsl_rng_uniform(fresh);
    ck_assert(same_position(sim_cluster_worker_rng(cl, 0), fresh));
    ck_assert(untouched(&f, cl, 1));
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
    fixture_init(&f, 3, 82, 64 * ms);
    sim_straggler *a = add_rule(&f, SIM_STRAG_RANDOM, (uint32_t[]){ 0, 1 }, 2);
    a->probability = 0.3;
    a->slowdown = 3.125;
    sim_straggler *b = add_rule(&f, SIM_STRAG_RANDOM, (uint32_t[]){ 1 }, 1);
    b->probability = 0.55;
    b->slowdown = 1.5;
    sim_cluster *cl = make(&f);
    gsl_rng *r0 = replay_rng(&f, 0), *r1 = replay_rng(&f, 1);
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
    ck_assert(same_position(sim_cluster_worker_rng(cl, 0), r0));
    ck_assert(same_position(sim_cluster_worker_rng(cl, 1), r1));
    ck_assert(untouched(&f, cl, 2)); /* not selected: never drawn from */
    gsl_rng_free(r0);
    gsl_rng_free(r1);
    sim_cluster_destroy(cl);
}
END_TEST

static const sim_trace_point trace_points[] = {
    { 1000000000, 0, 2.5 },  { 2000000000, 1, 1.75 }, { 3000000000, 0, 4.0 },
    { 3000000000, 2, 1.25 }, { 5500000000, 0, 1.0 },  { 6000000000, 1, 3.5 },
};

/* Appends a trace rule with the given points, copied into the fixture. */
static void add_trace(fixture *f, const sim_trace_point *pts, size_t n)
{
    ck_assert_uint_le(f->npoints + n, 16);
    sim_straggler *r = add_rule(f, SIM_STRAG_TRACE, NULL, 0);
    r->trace = f->points + f->npoints;
    r->ntrace = n;
    memcpy(r->trace, pts, n * sizeof(*pts));
    f->npoints += n;
}

START_TEST(trace_lookup_before_between_and_after_points)
{
    fixture f;
    fixture_init(&f, 4, 83, 40 * ms);
    add_trace(&f, trace_points, 6);
    sim_cluster *cl = make(&f);
    struct {
        sim_time now;
        sim_time expect;
    } w0[] = { { 0, 40 * ms },          { 1 * sec - 1, 40 * ms }, { 1 * sec, 100 * ms },
               { 2999 * ms, 100 * ms }, { 3 * sec, 160 * ms },    { 5499 * ms, 160 * ms },
               { 5500 * ms, 40 * ms },  { 900 * sec, 40 * ms } };
    for (size_t i = 0; i < sizeof(w0) / sizeof(w0[0]); i++)
        ck_assert_int_eq(sim_cluster_iteration_ns(cl, 0, w0[i].now, i), w0[i].expect);
    ck_assert_double_eq(sim_cluster_static_slowdown(cl, 0, 3 * sec), 4.0);
    ck_assert(untouched(&f, cl, 0));
    sim_cluster_destroy(cl);
}
END_TEST

START_TEST(trace_lookup_keeps_interleaved_workers_apart)
{
    fixture f;
    fixture_init(&f, 4, 84, 40 * ms);
    add_trace(&f, trace_points, 6);
    sim_cluster *cl = make(&f);
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
    fixture_init(&f, 4, 85, 40 * ms);
    add_trace(&f, trace_points, 6);
    const sim_trace_point second[] = { { 0, 0, 1.2 }, { 4000000000, 3, 2.0 } };
    add_trace(&f, second, 2);
    sim_cluster *cl = make(&f);
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
    fixture_init(&f, 2, 86, 8 * ms);
    add_rule(&f, SIM_STRAG_FIXED, (uint32_t[]){ 0 }, 1)->slowdown = 1.5;
    sim_straggler *rnd = add_rule(&f, SIM_STRAG_RANDOM, (uint32_t[]){ 0 }, 1);
    rnd->probability = 1.0;
    rnd->slowdown = 7.0;
    sim_straggler *win = add_rule(&f, SIM_STRAG_WINDOW, (uint32_t[]){ 0 }, 1);
    win->slowdown = 2.25;
    win->from_ns = 1 * sec;
    win->to_ns = 2 * sec;
    const sim_trace_point pts[] = { { 500000000, 0, 3.0 } };
    add_trace(&f, pts, 1);
    sim_cluster *cl = make(&f);
    ck_assert_double_eq(sim_cluster_static_slowdown(cl, 0, 0), 1.5);
    ck_assert_double_eq(sim_cluster_static_slowdown(cl, 0, 1500 * ms), 10.125);
    ck_assert_double_eq(sim_cluster_static_slowdown(cl, 0, 2500 * ms), 4.5);
    ck_assert_double_eq(sim_cluster_static_slowdown(cl, 1, 1500 * ms), 1.0);
    ck_assert(untouched(&f, cl, 0));
    // With the random factor: 8 ms * 1.5 * 7 * 2.25 * 3 = 567 ms, exact in binary.
    ck_assert_int_eq(sim_cluster_iteration_ns(cl, 0, 1500 * ms, 0), 567 * ms);
    sim_cluster_destroy(cl);
}
END_TEST

START_TEST(jitter_mean_is_within_three_standard_errors_of_the_base)
{
    fixture f;
    fixture_init(&f, 1, 87, 100 * ms);
    const double sigma = 0.2;
    f.sc.jitter_sigma = sigma;
    sim_cluster *cl = make(&f);
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
    fixture_init(&f, 2, 88, 100 * ms);
    const double sigma = 0.35;
    f.sc.jitter_sigma = sigma;
    sim_straggler *r = add_rule(&f, SIM_STRAG_RANDOM, (uint32_t[]){ 0 }, 1);
    r->probability = 0.3;
    r->slowdown = 3.125;
    sim_cluster *cl = make(&f);
    gsl_rng *r0 = replay_rng(&f, 0), *r1 = replay_rng(&f, 1);
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
    ck_assert(same_position(sim_cluster_worker_rng(cl, 0), r0));
    ck_assert(same_position(sim_cluster_worker_rng(cl, 1), r1));
    gsl_rng_free(r0);
    gsl_rng_free(r1);
    sim_cluster_destroy(cl);
}
END_TEST

START_TEST(huge_slowdown_product_clamps_without_undefined_behaviour)
{
    fixture f;
    fixture_init(&f, 5, 89, 100 * ms);
    add_rule(&f, SIM_STRAG_FIXED, (uint32_t[]){ 0 }, 1)->slowdown = 1e300;
    add_rule(&f, SIM_STRAG_FIXED, (uint32_t[]){ 0, 1 }, 2)->slowdown = 1e300;      /* 0: inf */
    add_rule(&f, SIM_STRAG_FIXED, (uint32_t[]){ 2 }, 1)->slowdown = 1.073741824e9; /* 2^30 */
    add_rule(&f, SIM_STRAG_FIXED, (uint32_t[]){ 3 }, 1)->slowdown = nan("");
    f.sc.iteration_ns = INT64_C(1) << 31;
    f.speeds[4] = 1e12; /* 2^31 ns / 1e12 rounds to 0: clamped up to 1 ns */
    sim_cluster *cl = make(&f);
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
    fixture_init(&f, 2, 90, INT64_C(1) << 61);
    f.sc.jitter_sigma = 1.0;
    f.speeds[1] = 1e19; /* base / speed = 0.23 ns: most draws round below 1 ns */
    sim_cluster *cl = make(&f);
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

/* ---- timeline ---- */

static void check_change(const sim_change *c, sim_time t, sim_change_kind kind, uint32_t w)
{
    ck_assert_int_eq(c->time_ns, t);
    ck_assert_int_eq(c->kind, kind);
    ck_assert_uint_eq(c->worker, w);
}

static void check_link(const sim_change *c, sim_time t, uint32_t w, sim_time lat, double bw)
{
    check_change(c, t, SIM_CHANGE_LINK, w);
    ck_assert_int_eq(c->extra_latency_ns, lat);
    ck_assert_double_eq(c->bandwidth_factor, bw);
}

START_TEST(no_time_rules_give_an_empty_timeline)
{
    fixture f;
    fixture_init(&f, 3, 91, 10 * ms);
    add_rule(&f, SIM_STRAG_FIXED, (uint32_t[]){ 1 }, 1)->slowdown = 2.5;
    sim_cluster *cl = make(&f);
    size_t n = 99;
    (void)sim_cluster_timeline(cl, &n);
    ck_assert_uint_eq(n, 0);
    sim_cluster_destroy(cl);
}
END_TEST

START_TEST(failures_with_and_without_recovery)
{
    fixture f;
    fixture_init(&f, 4, 92, 10 * ms);
    add_rule(&f, SIM_STRAG_FAILURE, (uint32_t[]){ 1, 3 }, 2)->at_ns = 2500 * ms;
    sim_straggler *r = add_rule(&f, SIM_STRAG_FAILURE, (uint32_t[]){ 0 }, 1);
    r->at_ns = 1250 * ms;
    r->recover_ns = 4750 * ms;
    sim_cluster *cl = make(&f);
    size_t n;
    const sim_change *c = sim_cluster_timeline(cl, &n);
    ck_assert_uint_eq(n, 4);
    check_change(&c[0], 1250 * ms, SIM_CHANGE_DOWN, 0);
    check_change(&c[1], 2500 * ms, SIM_CHANGE_DOWN, 1);
    check_change(&c[2], 2500 * ms, SIM_CHANGE_DOWN, 3);
    check_change(&c[3], 4750 * ms, SIM_CHANGE_UP, 0);
    // Failures do not touch compute.
    ck_assert_int_eq(sim_cluster_iteration_ns(cl, 1, 3 * sec, 0), 10 * ms);
    sim_cluster_destroy(cl);
}
END_TEST

START_TEST(overlapping_failures_are_emitted_as_given)
{
    fixture f;
    fixture_init(&f, 2, 93, 10 * ms);
    sim_straggler *a = add_rule(&f, SIM_STRAG_FAILURE, (uint32_t[]){ 0 }, 1);
    a->at_ns = 1 * sec;
    a->recover_ns = 5 * sec;
    sim_straggler *b = add_rule(&f, SIM_STRAG_FAILURE, (uint32_t[]){ 0 }, 1);
    b->at_ns = 2 * sec;
    b->recover_ns = 3 * sec;
    sim_cluster *cl = make(&f);
    size_t n;
    const sim_change *c = sim_cluster_timeline(cl, &n);
    ck_assert_uint_eq(n, 4);
    check_change(&c[0], 1 * sec, SIM_CHANGE_DOWN, 0);
    check_change(&c[1], 2 * sec, SIM_CHANGE_DOWN, 0);
    check_change(&c[2], 3 * sec, SIM_CHANGE_UP, 0);
    check_change(&c[3], 5 * sec, SIM_CHANGE_UP, 0);
    sim_cluster_destroy(cl);
}
END_TEST

START_TEST(overlapping_link_rules_add_latency_and_multiply_bandwidth)
{
    fixture f;
    fixture_init(&f, 3, 94, 10 * ms);
    sim_straggler *a = add_rule(&f, SIM_STRAG_LINK, (uint32_t[]){ 1 }, 1);
    a->from_ns = 1 * sec;
    a->to_ns = 5 * sec;
    a->extra_latency_ns = 2 * ms;
    a->bandwidth_factor = 0.5;
    sim_straggler *b = add_rule(&f, SIM_STRAG_LINK, (uint32_t[]){ 1, 2 }, 2);
    b->from_ns = 3 * sec;
    b->extra_latency_ns = 750000;
    b->bandwidth_factor = 0.25;
    sim_cluster *cl = make(&f);
    size_t n;
    const sim_change *c = sim_cluster_timeline(cl, &n);
    ck_assert_uint_eq(n, 4);
    check_link(&c[0], 1 * sec, 1, 2 * ms, 0.5);
    check_link(&c[1], 3 * sec, 1, 2750000, 0.125);
    check_link(&c[2], 3 * sec, 2, 750000, 0.25);
    check_link(&c[3], 5 * sec, 1, 750000, 0.25);
    // Link rules do not touch compute.
    ck_assert_int_eq(sim_cluster_iteration_ns(cl, 1, 4 * sec, 0), 10 * ms);
    sim_cluster_destroy(cl);
}
END_TEST

START_TEST(link_boundaries_without_a_change_are_skipped)
{
    fixture f;
    fixture_init(&f, 3, 95, 10 * ms);
    sim_straggler *a = add_rule(&f, SIM_STRAG_LINK, (uint32_t[]){ 0 }, 1);
    a->to_ns = 2 * sec; /* from 0: a change at time 0 */
    a->extra_latency_ns = 1 * ms;
    a->bandwidth_factor = 0.8;
    sim_straggler *b = add_rule(&f, SIM_STRAG_LINK, (uint32_t[]){ 0 }, 1);
    b->from_ns = 2 * sec; /* takes over with the same state: no change at 2 s */
    b->to_ns = 4 * sec;
    b->extra_latency_ns = 1 * ms;
    b->bandwidth_factor = 0.8;
    sim_straggler *empty = add_rule(&f, SIM_STRAG_LINK, (uint32_t[]){ 1 }, 1);
    empty->from_ns = 1 * sec; /* an empty interval */
    empty->to_ns = 1 * sec;
    empty->extra_latency_ns = 3 * ms;
    sim_straggler *noop = add_rule(&f, SIM_STRAG_LINK, (uint32_t[]){ 2 }, 1);
    noop->from_ns = 1 * sec; /* no extra latency, factor 1 */
    sim_cluster *cl = make(&f);
    size_t n;
    const sim_change *c = sim_cluster_timeline(cl, &n);
    ck_assert_uint_eq(n, 2);
    check_link(&c[0], 0, 0, 1 * ms, 0.8);
    check_link(&c[1], 4 * sec, 0, 0, 1.0);
    sim_cluster_destroy(cl);
}
END_TEST

START_TEST(timeline_ties_follow_rule_order_then_worker)
{
    fixture f;
    fixture_init(&f, 5, 96, 10 * ms);
    sim_straggler *r0 = add_rule(&f, SIM_STRAG_LINK, (uint32_t[]){ 2 }, 1);
    r0->from_ns = 3 * sec;
    r0->extra_latency_ns = 1500000;
    sim_straggler *r1 = add_rule(&f, SIM_STRAG_FAILURE, (uint32_t[]){ 0, 4 }, 2);
    r1->at_ns = 3 * sec;
    r1->recover_ns = 8 * sec;
    sim_straggler *r2 = add_rule(&f, SIM_STRAG_LINK, (uint32_t[]){ 0, 1 }, 2);
    r2->to_ns = 3 * sec;
    r2->extra_latency_ns = 250000;
    r2->bandwidth_factor = 0.6;
    sim_straggler *r3 = add_rule(&f, SIM_STRAG_FAILURE, (uint32_t[]){ 1 }, 1);
    r3->recover_ns = 3 * sec;
    sim_cluster *cl = make(&f);
    size_t n;
    const sim_change *c = sim_cluster_timeline(cl, &n);
    ck_assert_uint_eq(n, 11);
    check_link(&c[0], 0, 0, 250000, 0.6);
    check_link(&c[1], 0, 1, 250000, 0.6);
    check_change(&c[2], 0, SIM_CHANGE_DOWN, 1);
    check_link(&c[3], 3 * sec, 2, 1500000, 1.0);
    check_change(&c[4], 3 * sec, SIM_CHANGE_DOWN, 0);
    check_change(&c[5], 3 * sec, SIM_CHANGE_DOWN, 4);
    check_link(&c[6], 3 * sec, 0, 0, 1.0);
    check_link(&c[7], 3 * sec, 1, 0, 1.0);
    check_change(&c[8], 3 * sec, SIM_CHANGE_UP, 1);
    check_change(&c[9], 8 * sec, SIM_CHANGE_UP, 0);
    check_change(&c[10], 8 * sec, SIM_CHANGE_UP, 4);
    sim_cluster_destroy(cl);
}
END_TEST

/* ---- streams and state ---- */

/* A scenario that uses every kind of draw. */
static void busy_scenario(fixture *f)
{
    fixture_init(f, 3, 97, 25 * ms);
    f->sc.jitter_sigma = 0.15;
    f->speeds[1] = 0.75;
    sim_straggler *r = add_rule(f, SIM_STRAG_RANDOM, (uint32_t[]){ 0, 2 }, 2);
    r->probability = 0.2;
    r->slowdown = 2.5;
    sim_straggler *win = add_rule(f, SIM_STRAG_WINDOW, (uint32_t[]){ 1 }, 1);
    win->slowdown = 1.8;
    win->from_ns = 2 * sec;
    win->to_ns = 6 * sec;
    add_trace(f, trace_points, 6);
}

START_TEST(clusters_from_the_same_scenario_give_identical_sequences)
{
    fixture f;
    busy_scenario(&f);
    sim_cluster *a = make(&f), *b = make(&f);
    for (int k = 0; k < 600; k++) {
        uint32_t w = (uint32_t)(k % 3);
        sim_time now = (sim_time)k * 17 * ms;
        ck_assert_int_eq(sim_cluster_iteration_ns(a, w, now, (uint64_t)k),
                         sim_cluster_iteration_ns(b, w, now, (uint64_t)k));
    }
    for (int id = SIM_STREAM_NET; id <= SIM_STREAM_PROTO; id++)
        ck_assert(same_position(sim_cluster_stream(a, id), sim_cluster_stream(b, id)));
    sim_cluster_destroy(a);
    sim_cluster_destroy(b);
}
END_TEST

START_TEST(streams_are_seeded_from_the_derived_seeds)
{
    fixture f;
    busy_scenario(&f);
    sim_cluster *cl = make(&f);
    for (uint32_t w = 0; w < 3; w++)
        ck_assert(untouched(&f, cl, w));
    for (int id = SIM_STREAM_NET; id <= SIM_STREAM_PROTO; id++) {
        gsl_rng *fresh = sim_rng_create(f.seeds[id]);
        ck_assert(same_position(sim_cluster_stream(cl, id), fresh));
        gsl_rng_free(fresh);
    }
    ck_assert_ptr_null(sim_cluster_stream(cl, SIM_STREAM_PROTO + 1));
    ck_assert_ptr_null(sim_cluster_stream(cl, -1));
    sim_cluster_destroy(cl);
}
END_TEST

START_TEST(distinct_workers_streams_differ)
{
    fixture f;
    busy_scenario(&f);
    sim_cluster *cl = make(&f);
    gsl_rng *r0 = sim_cluster_worker_rng(cl, 0);
    gsl_rng *r1 = sim_cluster_worker_rng(cl, 1);
    gsl_rng *r2 = sim_cluster_worker_rng(cl, 2);
    ck_assert_ptr_ne(r0, r1);
    int equal = 0;
    for (int i = 0; i < 64; i++) {
        unsigned long a = gsl_rng_get(r0), b = gsl_rng_get(r1), c = gsl_rng_get(r2);
        equal += (a == b) + (b == c) + (a == c);
    }
    ck_assert_int_eq(equal, 0); /* 32-bit outputs: a chance equality is about 4e-8 */
    // Same base, speeds and rules on both workers, yet the jitter differs.
    fixture g;
    fixture_init(&g, 2, 98, 25 * ms);
    g.sc.jitter_sigma = 0.15;
    sim_cluster *cg = make(&g);
    ck_assert_int_ne(sim_cluster_iteration_ns(cg, 0, 0, 0), sim_cluster_iteration_ns(cg, 1, 0, 0));
    sim_cluster_destroy(cg);
    sim_cluster_destroy(cl);
}
END_TEST

START_TEST(workers_start_up_and_set_down_tracks_the_live_count)
{
    fixture f;
    fixture_init(&f, 4, 99, 10 * ms);
    sim_cluster *cl = make(&f);
    ck_assert_uint_eq(sim_cluster_live(cl), 4);
    for (uint32_t w = 0; w < 4; w++)
        ck_assert(!sim_cluster_down(cl, w));
    sim_cluster_set_down(cl, 2, true);
    ck_assert(sim_cluster_down(cl, 2));
    ck_assert_uint_eq(sim_cluster_live(cl), 3);
    sim_cluster_set_down(cl, 2, true); /* already down: no change */
    ck_assert_uint_eq(sim_cluster_live(cl), 3);
    sim_cluster_set_down(cl, 0, true);
    ck_assert_uint_eq(sim_cluster_live(cl), 2);
    sim_cluster_set_down(cl, 2, false);
    sim_cluster_set_down(cl, 3, false); /* already up: no change */
    ck_assert(!sim_cluster_down(cl, 2));
    ck_assert_uint_eq(sim_cluster_live(cl), 3);
    sim_cluster_destroy(cl);
}
END_TEST

START_TEST(create_rejects_a_worker_id_out_of_range)
{
    fixture f;
    fixture_init(&f, 4, 100, 10 * ms);
    add_rule(&f, SIM_STRAG_FIXED, (uint32_t[]){ 1 }, 1)->slowdown = 2.0;
    add_rule(&f, SIM_STRAG_WINDOW, (uint32_t[]){ 2, 4 }, 2)->slowdown = 2.0;
    sim_err err;
    sim_err_clear(&err);
    ck_assert_ptr_null(sim_cluster_create(&f.sc, &err));
    ck_assert_int_eq(err.code, SIM_EINVAL);
    ck_assert_str_eq(err.path, "$.stragglers[1].workers[1]");
    ck_assert_str_eq(err.msg, "worker id must be < 4, got 4");

    const sim_trace_point pts[] = { { 0, 0, 2.0 }, { 5, 7, 2.0 } };
    f.rules[1].workers[1] = 3;
    add_trace(&f, pts, 2);
    sim_err_clear(&err);
    ck_assert_ptr_null(sim_cluster_create(&f.sc, &err));
    ck_assert_int_eq(err.code, SIM_EINVAL);
    ck_assert_str_eq(err.path, "$.stragglers[2].trace[1]");
}
END_TEST

START_TEST(destroy_null_is_a_no_op)
{
    sim_cluster_destroy(NULL);
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

    tc = tcase_create("timeline");
    tcase_add_test(tc, no_time_rules_give_an_empty_timeline);
    tcase_add_test(tc, failures_with_and_without_recovery);
    tcase_add_test(tc, overlapping_failures_are_emitted_as_given);
    tcase_add_test(tc, overlapping_link_rules_add_latency_and_multiply_bandwidth);
    tcase_add_test(tc, link_boundaries_without_a_change_are_skipped);
    tcase_add_test(tc, timeline_ties_follow_rule_order_then_worker);
    suite_add_tcase(su, tc);

    tc = tcase_create("streams_and_state");
    tcase_add_test(tc, clusters_from_the_same_scenario_give_identical_sequences);
    tcase_add_test(tc, streams_are_seeded_from_the_derived_seeds);
    tcase_add_test(tc, distinct_workers_streams_differ);
    tcase_add_test(tc, workers_start_up_and_set_down_tracks_the_live_count);
    tcase_add_test(tc, create_rejects_a_worker_id_out_of_range);
    tcase_add_test(tc, destroy_null_is_a_no_op);
    suite_add_tcase(su, tc);
    return su;
}
