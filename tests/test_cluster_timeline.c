/* Cluster: the timeline, streams and up/down state.
 *
 * Scenarios are built by hand (sim_scenario is plain data), so these tests do not depend on
 * the loader (helpers in tests/harness_cluster.h).
 */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>

#include "harness_cluster.h"
#include "scenario/cluster.h"
#include "sim/rng.h"
#include "suite.h"

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
    clt_fixture_init(&f, 3, 91, 10 * ms);
    clt_add_rule(&f, SIM_STRAG_FIXED, (uint32_t[]){ 1 }, 1)->slowdown = 2.5;
    sim_cluster *cl = clt_make(&f);
    size_t n = 99;
    (void)sim_cluster_timeline(cl, &n);
    ck_assert_uint_eq(n, 0);
    sim_cluster_destroy(cl);
}
END_TEST

START_TEST(failures_with_and_without_recovery)
{
    fixture f;
    clt_fixture_init(&f, 4, 92, 10 * ms);
    clt_add_rule(&f, SIM_STRAG_FAILURE, (uint32_t[]){ 1, 3 }, 2)->at_ns = 2500 * ms;
    sim_straggler *r = clt_add_rule(&f, SIM_STRAG_FAILURE, (uint32_t[]){ 0 }, 1);
    r->at_ns = 1250 * ms;
    r->recover_ns = 4750 * ms;
    sim_cluster *cl = clt_make(&f);
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

/* A worker is down while any failure rule holds it down: the timeline had every rule's DOWN
 * and UP, so the first recovery brought it back, even from a failure for good (worker 1 up at
 * 2.5 s, probe38h). */
START_TEST(overlapping_failures_keep_a_worker_down_until_the_last_recovers)
{
    fixture f;
    clt_fixture_init(&f, 2, 93, 10 * ms);
    sim_straggler *a = clt_add_rule(&f, SIM_STRAG_FAILURE, (uint32_t[]){ 0 }, 1);
    a->at_ns = 1 * sec;
    a->recover_ns = 5 * sec;
    sim_straggler *b = clt_add_rule(&f, SIM_STRAG_FAILURE, (uint32_t[]){ 0, 1 }, 2);
    b->at_ns = 2 * sec;
    b->recover_ns = 3 * sec;
    sim_straggler *good = clt_add_rule(&f, SIM_STRAG_FAILURE, (uint32_t[]){ 1 }, 1);
    good->at_ns = 1 * sec;
    good->recover_ns = SIM_TIME_NEVER;
    sim_cluster *cl = clt_make(&f);
    size_t n;
    const sim_change *c = sim_cluster_timeline(cl, &n);
    ck_assert_uint_eq(n, 3);
    check_change(&c[0], 1 * sec, SIM_CHANGE_DOWN, 0);
    check_change(&c[1], 1 * sec, SIM_CHANGE_DOWN, 1);
    check_change(&c[2], 5 * sec, SIM_CHANGE_UP, 0);
    sim_cluster_destroy(cl);
}
END_TEST

START_TEST(overlapping_link_rules_add_latency_and_multiply_bandwidth)
{
    fixture f;
    clt_fixture_init(&f, 3, 94, 10 * ms);
    sim_straggler *a = clt_add_rule(&f, SIM_STRAG_LINK, (uint32_t[]){ 1 }, 1);
    a->from_ns = 1 * sec;
    a->to_ns = 5 * sec;
    a->extra_latency_ns = 2 * ms;
    a->bandwidth_factor = 0.5;
    sim_straggler *b = clt_add_rule(&f, SIM_STRAG_LINK, (uint32_t[]){ 1, 2 }, 2);
    b->from_ns = 3 * sec;
    b->extra_latency_ns = 750000;
    b->bandwidth_factor = 0.25;
    sim_cluster *cl = clt_make(&f);
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
    clt_fixture_init(&f, 3, 95, 10 * ms);
    sim_straggler *a = clt_add_rule(&f, SIM_STRAG_LINK, (uint32_t[]){ 0 }, 1);
    a->to_ns = 2 * sec; /* from 0: a change at time 0 */
    a->extra_latency_ns = 1 * ms;
    a->bandwidth_factor = 0.8;
    sim_straggler *b = clt_add_rule(&f, SIM_STRAG_LINK, (uint32_t[]){ 0 }, 1);
    b->from_ns = 2 * sec; /* takes over with the same state: no change at 2 s */
    b->to_ns = 4 * sec;
    b->extra_latency_ns = 1 * ms;
    b->bandwidth_factor = 0.8;
    sim_straggler *empty = clt_add_rule(&f, SIM_STRAG_LINK, (uint32_t[]){ 1 }, 1);
    empty->from_ns = 1 * sec; /* an empty interval */
    empty->to_ns = 1 * sec;
    empty->extra_latency_ns = 3 * ms;
    sim_straggler *noop = clt_add_rule(&f, SIM_STRAG_LINK, (uint32_t[]){ 2 }, 1);
    noop->from_ns = 1 * sec; /* no extra latency, factor 1 */
    sim_cluster *cl = clt_make(&f);
    size_t n;
    const sim_change *c = sim_cluster_timeline(cl, &n);
    ck_assert_uint_eq(n, 2);
    check_link(&c[0], 0, 0, 1 * ms, 0.8);
    check_link(&c[1], 4 * sec, 0, 0, 1.0);
    sim_cluster_destroy(cl);
}
END_TEST

/* 200,000 link rules on worker 1, windows of 2 us every 1 us (each overlapping the next): the
 * set-up tested every rule at every boundary, 0.26 s at 8,000 rules and 2.54 s at 32,000 in a
 * release build (about 25 s at 100,000, probe38h); its case has a 10 s timeout, which the
 * build before exceeds. The changes are the active rules' sums and products in rule order, as
 * before. */
START_TEST(many_link_rules_on_one_worker_set_up_in_linear_time)
{
    enum {
        N = 200000
    };
    static const uint32_t one[] = { 1 };
    fixture f;
    clt_fixture_init(&f, 2, 94, 10 * ms);
    sim_straggler *rules = calloc(N, sizeof(*rules));
    ck_assert_ptr_nonnull(rules);
    for (size_t i = 0; i < N; i++)
        rules[i] = (sim_straggler){ .kind = SIM_STRAG_LINK,
                                    .workers = (uint32_t *)one,
                                    .nworkers = 1,
                                    .slowdown = 1.0,
                                    .from_ns = (sim_time)i * 1000,
                                    .to_ns = (sim_time)i * 1000 + 2000,
                                    .extra_latency_ns = 1000 + (sim_time)(i % 7),
                                    .bandwidth_factor = 1.0 - (double)(i % 5) * 0.1 };
    f.sc.stragglers = rules;
    f.sc.nstragglers = N;
    sim_cluster *cl = clt_make(&f);
    size_t n;
    const sim_change *c = sim_cluster_timeline(cl, &n);
    ck_assert_uint_eq(n, N + 2);
    check_link(&c[0], 0, 1, 1000, 1.0);
    for (size_t k = 2; k < N; k += 9973)
        check_link(&c[k], (sim_time)k * 1000, 1,
                   rules[k - 1].extra_latency_ns + rules[k].extra_latency_ns,
                   rules[k - 1].bandwidth_factor * rules[k].bandwidth_factor);
    check_link(&c[N], (sim_time)N * 1000, 1, rules[N - 1].extra_latency_ns,
               rules[N - 1].bandwidth_factor);
    check_link(&c[N + 1], (sim_time)(N + 1) * 1000, 1, 0, 1.0);
    sim_cluster_destroy(cl);
    free(rules);
}
END_TEST

START_TEST(timeline_ties_follow_rule_order_then_worker)
{
    fixture f;
    clt_fixture_init(&f, 5, 96, 10 * ms);
    sim_straggler *r0 = clt_add_rule(&f, SIM_STRAG_LINK, (uint32_t[]){ 2 }, 1);
    r0->from_ns = 3 * sec;
    r0->extra_latency_ns = 1500000;
    sim_straggler *r1 = clt_add_rule(&f, SIM_STRAG_FAILURE, (uint32_t[]){ 0, 4 }, 2);
    r1->at_ns = 3 * sec;
    r1->recover_ns = 8 * sec;
    sim_straggler *r2 = clt_add_rule(&f, SIM_STRAG_LINK, (uint32_t[]){ 0, 1 }, 2);
    r2->to_ns = 3 * sec;
    r2->extra_latency_ns = 250000;
    r2->bandwidth_factor = 0.6;
    sim_straggler *r3 = clt_add_rule(&f, SIM_STRAG_FAILURE, (uint32_t[]){ 1 }, 1);
    r3->recover_ns = 3 * sec;
    sim_cluster *cl = clt_make(&f);
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
    clt_fixture_init(f, 3, 97, 25 * ms);
    f->sc.jitter_sigma = 0.15;
    f->speeds[1] = 0.75;
    sim_straggler *r = clt_add_rule(f, SIM_STRAG_RANDOM, (uint32_t[]){ 0, 2 }, 2);
    r->probability = 0.2;
    r->slowdown = 2.5;
    sim_straggler *win = clt_add_rule(f, SIM_STRAG_WINDOW, (uint32_t[]){ 1 }, 1);
    win->slowdown = 1.8;
    win->from_ns = 2 * sec;
    win->to_ns = 6 * sec;
    clt_add_trace(f, clt_trace_points, 6);
}

START_TEST(clusters_from_the_same_scenario_give_identical_sequences)
{
    fixture f;
    busy_scenario(&f);
    sim_cluster *a = clt_make(&f), *b = clt_make(&f);
    for (int k = 0; k < 600; k++) {
        uint32_t w = (uint32_t)(k % 3);
        sim_time now = (sim_time)k * 17 * ms;
        ck_assert_int_eq(sim_cluster_iteration_ns(a, w, now, (uint64_t)k),
                         sim_cluster_iteration_ns(b, w, now, (uint64_t)k));
    }
    for (int id = SIM_STREAM_NET; id <= SIM_STREAM_PROTO; id++)
        ck_assert(clt_same_position(sim_cluster_stream(a, id), sim_cluster_stream(b, id)));
    sim_cluster_destroy(a);
    sim_cluster_destroy(b);
}
END_TEST

START_TEST(streams_are_seeded_from_the_derived_seeds)
{
    fixture f;
    busy_scenario(&f);
    sim_cluster *cl = clt_make(&f);
    for (uint32_t w = 0; w < 3; w++)
        ck_assert(clt_untouched(&f, cl, w));
    for (int id = SIM_STREAM_NET; id <= SIM_STREAM_PROTO; id++) {
        gsl_rng *fresh = sim_rng_create(f.seeds[id]);
        ck_assert(clt_same_position(sim_cluster_stream(cl, id), fresh));
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
    sim_cluster *cl = clt_make(&f);
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
    clt_fixture_init(&g, 2, 98, 25 * ms);
    g.sc.jitter_sigma = 0.15;
    sim_cluster *cg = clt_make(&g);
    ck_assert_int_ne(sim_cluster_iteration_ns(cg, 0, 0, 0), sim_cluster_iteration_ns(cg, 1, 0, 0));
    sim_cluster_destroy(cg);
    sim_cluster_destroy(cl);
}
END_TEST

START_TEST(workers_start_up_and_set_down_tracks_the_live_count)
{
    fixture f;
    clt_fixture_init(&f, 4, 99, 10 * ms);
    sim_cluster *cl = clt_make(&f);
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
    clt_fixture_init(&f, 4, 100, 10 * ms);
    clt_add_rule(&f, SIM_STRAG_FIXED, (uint32_t[]){ 1 }, 1)->slowdown = 2.0;
    clt_add_rule(&f, SIM_STRAG_WINDOW, (uint32_t[]){ 2, 4 }, 2)->slowdown = 2.0;
    sim_err err;
    sim_err_clear(&err);
    ck_assert_ptr_null(sim_cluster_create(&f.sc, &err));
    ck_assert_int_eq(err.code, SIM_EINVAL);
    ck_assert_str_eq(err.path, "$.stragglers[1].workers[1]");
    ck_assert_str_eq(err.msg, "worker id must be < 4, got 4");

    const sim_trace_point pts[] = { { 0, 0, 2.0 }, { 5, 7, 2.0 } };
    f.rules[1].workers[1] = 3;
    clt_add_trace(&f, pts, 2);
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
    Suite *su = suite_create("cluster_timeline");
    TCase *tc = tcase_create("timeline");
    tcase_add_test(tc, no_time_rules_give_an_empty_timeline);
    tcase_add_test(tc, failures_with_and_without_recovery);
    tcase_add_test(tc, overlapping_failures_keep_a_worker_down_until_the_last_recovers);
    tcase_add_test(tc, overlapping_link_rules_add_latency_and_multiply_bandwidth);
    tcase_add_test(tc, link_boundaries_without_a_change_are_skipped);
    tcase_add_test(tc, timeline_ties_follow_rule_order_then_worker);
    suite_add_tcase(su, tc);

    tc = tcase_create("scale");
    tcase_add_test(tc, many_link_rules_on_one_worker_set_up_in_linear_time);
    tcase_set_timeout(tc, 10);
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
