/* The kit's ring and butterfly collectives (kit/coll.h), driven by the test-only protocol of
 * tests/harness_coll.h: ring timing over subsets and disjoint groups, butterfly timing, means
 * worked out by hand, failed senders and reducers. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>
#include <gsl/gsl_errno.h>

#include "harness.h"
#include "harness_coll.h"
#include "kit/coll.h"
#include "kit/coll_state.h"
#include "kit/graph.h"
#include "kit/rejoin.h"
#include "runtime/arena.h"
#include "runtime/proto.h"
#include "runtime/run.h"
#include "scenario/scenario.h"

/* ---- Ring ---- */

START_TEST(ring_over_a_subset_matches_the_alpha_beta_formula)
{
    /* Members 5, 2, 7 of 8: 2(n-1) = 4 steps of 10 MB, each 2L + 10e6 * 8 / 1e10 s =
     * 100 us + 8 ms, so every member is done at 4 * 8.1 ms = 32.4 ms. */
    plan *p = hcoll_new_plan();
    hcoll_add_group(p, T_RING, (const uint32_t[]){ 5, 2, 7 }, 3);
    sim_run_summary sum = hcoll_run(hcoll_timing_json, NULL, 0);
    ck_assert_int_eq(sum.sim_ns, 32400000);
    for (uint32_t w = 0; w < 8; w++)
        ck_assert_uint_eq(p->ndone[w], w == 5 || w == 2 || w == 7);
    ck_assert_int_eq(p->done_ns[2], 32400000);
    ck_assert_uint_eq(p->channel[0], 1);
    free(p);
}
END_TEST

START_TEST(two_disjoint_rings_take_the_time_of_one)
{
    /* Groups {5, 2, 7} and {0, 3, 6} share no link: both end at 32.4 ms, as one alone. */
    plan *p = hcoll_new_plan();
    hcoll_add_group(p, T_RING, (const uint32_t[]){ 5, 2, 7 }, 3);
    hcoll_add_group(p, T_RING, (const uint32_t[]){ 0, 3, 6 }, 3);
    const char *sets[] = { "stop.iterations=6" };
    sim_run_summary sum = hcoll_run(hcoll_timing_json, sets, 1);
    ck_assert_int_eq(sum.sim_ns, 32400000);
    for (uint32_t w = 0; w < 8; w++)
        ck_assert_int_eq(p->done_ns[w], w == 1 || w == 4 ? 0 : 32400000);
    ck_assert_uint_eq(p->channel[0], 1);
    ck_assert_uint_eq(p->channel[1], 2);
    free(p);
}
END_TEST

/* The next two tests' ring {0, 1, 2, 3}, told of failures (with COLL_RING_END if
 * end_on_failure), whose worker 2 fails at at_s (a JSON number), to 3 iterations. Returns its
 * plan after checking what both see: 2 never done, the others done once, each told that 2
 * failed and of nothing else. */
static plan *ring_with_2_failing(const char *at_s, bool end_on_failure)
{
    plan *p = hcoll_new_plan();
    p->compute_first = true;
    p->notify_down = true;
    p->end_on_failure = end_on_failure;
    hcoll_add_group(p, T_RING, (const uint32_t[]){ 0, 1, 2, 3 }, 4);
    char strag[128];
    snprintf(strag, sizeof(strag),
             "stragglers=[{\"kind\": \"failure\", \"workers\": [2], \"at_s\": %s}]", at_s);
    const char *sets[] = { strag, "stop.iterations=3" };
    hcoll_run(hcoll_timing_json, sets, 2);
    ck_assert_uint_eq(p->ndone[2], 0);
    for (uint32_t w = 0; w < 4; w++)
        if (w != 2) {
            ck_assert_uint_eq(p->ndone[w], 1);
            ck_assert_uint_eq(p->nfailed[w], 1);
            ck_assert_uint_eq(p->failed[w][0], 2);
        }
    return p;
}

START_TEST(ring_told_of_a_failure_restarts_over_the_survivors_and_lists_it)
{
    /* Ring {0, 1, 2, 3}; worker 2 fails at 5 ms and the kit is told: the ring restarts over
     * {0, 1, 3}, whose members join at 10 ms and finish 4 steps of 10 MB later (32.4 ms, as
     * any ring of three), each told that 2 failed. */
    plan *p = ring_with_2_failing("0.005", false);
    for (uint32_t w = 0; w < 4; w++)
        if (w != 2)
            ck_assert_int_eq(p->done_ns[w], 10000000 + 32400000);
    free(p);
}
END_TEST

START_TEST(ring_that_ends_rounds_on_a_failure_tells_the_survivors_it_was_abandoned)
{
    /* Ring {0, 1, 2, 3} with COLL_RING_END; everyone joins at 10 ms, worker 2 fails at 15 ms,
     * before any member has completed the round (6 steps of 7.5 MB): each survivor is told at
     * once that its round was abandoned (and that 2 failed), and the ring does not start it
     * again (nobody has joined its new generation). Counted once. */
    plan *p = ring_with_2_failing("0.015", true);
    for (uint32_t w = 0; w < 4; w++)
        if (w != 2) {
            ck_assert_int_eq(p->done_ns[w], 15000000);
            ck_assert_int_eq(p->ended[w], COLL_ENDED_ABANDONED);
        }
    ck_assert_uint_eq(p->abandoned[0], 1);
    free(p);
}
END_TEST

START_TEST(ring_that_ends_rounds_on_a_failure_tells_the_survivors_a_member_completed_it)
{
    /* Ring {0, 1, 2, 3} with COLL_RING_END, worker 1's NIC 2 ms slower: worker 3 completes the
     * round first (FIRST), the others later; worker 3 fails just after: the others' round ends
     * at once as completed (a member had completed it), and nothing is counted as abandoned.
     * Without the failure the others complete it later, by themselves. */
    plan *p = hcoll_new_plan();
    p->compute_first = true;
    p->notify_down = true;
    p->end_on_failure = true;
    hcoll_add_group(p, T_RING, (const uint32_t[]){ 0, 1, 2, 3 }, 4);
    const char *net = "network.overrides=[{\"workers\": [1], \"latency_us\": 2050}]";
    const char *sets0[] = { net, "stop.iterations=3" };
    hcoll_run(hcoll_timing_json, sets0, 2);
    sim_time first = p->done_ns[3], last = 0;
    for (uint32_t w = 0; w < 3; w++) {
        ck_assert_int_eq(p->ended[w], 0);
        ck_assert_int_gt(p->done_ns[w], first);
        last = p->done_ns[w] > last ? p->done_ns[w] : last;
    }
    char fail[160];
    snprintf(fail, sizeof(fail),
             "stragglers=[{\"kind\": \"failure\", \"workers\": [3], \"at_s\": %.9f}]",
             (double)(first + 1000) / 1e9);
    free(p);
    p = hcoll_new_plan();
    p->compute_first = true;
    p->notify_down = true;
    p->end_on_failure = true;
    hcoll_add_group(p, T_RING, (const uint32_t[]){ 0, 1, 2, 3 }, 4);
    const char *sets[] = { net, fail, "stop.iterations=3" };
    hcoll_run(hcoll_timing_json, sets, 3);
    ck_assert_uint_eq(p->ndone[3], 1);
    ck_assert_int_eq(p->ended[3], 0);
    for (uint32_t w = 0; w < 3; w++) {
        ck_assert_uint_eq(p->ndone[w], 1);
        ck_assert_int_eq(p->done_ns[w], first + 1000);
        ck_assert_int_lt(p->done_ns[w], last);
        ck_assert_int_eq(p->ended[w], COLL_ENDED_COMPLETED);
    }
    ck_assert_uint_eq(p->abandoned[0], 0);
    free(p);
}
END_TEST

/* ---- Butterfly ---- */

START_TEST(butterfly_of_four_takes_two_hops)
{
    /* M = 4, S = 40 MB: every uplink and downlink carries M-1 = 3 flows of S/M = 10 MB at
     * B/3 in each phase, so a round takes 2 * (2L + 3 * 10e6 * 8 / 1e10 s) =
     * 2 * (100 us + 24 ms) = 48.2 ms. */
    plan *p = hcoll_new_plan();
    hcoll_add_group(p, T_BFLY, (const uint32_t[]){ 0, 1, 2, 3 }, 4);
    const char *sets[] = { "workload.message_bytes=40000000", "stop.iterations=4" };
    sim_run_summary sum = hcoll_run(hcoll_timing_json, sets, 2);
    ck_assert_int_eq(sum.sim_ns, 48200000);
    for (uint32_t w = 0; w < 4; w++) {
        ck_assert_int_eq(p->done_ns[w], 48200000);
        ck_assert_uint_eq(p->nfailed[w], 0);
    }
    free(p);
}
END_TEST

START_TEST(butterfly_mean_of_three_is_exact_and_bitwise_equal)
{
    /* Sums over workers 0..2: 3.5, 3, -1.5, 1.5, 10.5, 3.5; over 3: */
    static const float want[6] = { (float)(3.5 / 3), 1.0f, -0.5f, 0.5f, 3.5f, (float)(3.5 / 3) };
    plan *p = hcoll_new_plan();
    hcoll_set_init(p);
    hcoll_add_group(p, T_BFLY, (const uint32_t[]){ 0, 1, 2 }, 3);
    const char *sets[] = { "stop.iterations=3" };
    hcoll_run(hcoll_tensor_json, sets, 1);
    for (uint32_t w = 0; w < 3; w++) {
        ck_assert_mem_eq(p->out[w], want, sizeof(want));
        ck_assert_uint_eq(p->nfailed[w], 0);
    }
    ck_assert_uint_eq(p->ndone[3], 0);
    ck_assert_uint_eq(p->complete[0], 1); /* at the last member's callback only */
    free(p);
}
END_TEST

/* A butterfly made for 2 members started over 3 grows (counted once) and gives the same
 * exact mean as one made for 3. */
START_TEST(butterfly_grows_for_a_larger_round)
{
    static const float want[6] = { (float)(3.5 / 3), 1.0f, -0.5f, 0.5f, 3.5f, (float)(3.5 / 3) };
    plan *p = hcoll_new_plan();
    hcoll_set_init(p);
    p->bfly_cap = 2;
    hcoll_add_group(p, T_BFLY, (const uint32_t[]){ 0, 1, 2 }, 3);
    const char *sets[] = { "stop.iterations=3" };
    hcoll_run(hcoll_tensor_json, sets, 1);
    ck_assert_uint_eq(p->grown[0], 1);
    for (uint32_t w = 0; w < 3; w++) {
        ck_assert_mem_eq(p->out[w], want, sizeof(want));
        ck_assert_uint_eq(p->nfailed[w], 0);
    }
    free(p);
}
END_TEST

START_TEST(butterfly_weighted_mean_of_four_with_uneven_parts)
{
    /* Weights 1, 2, 1, 4 (sum 8); 6 floats in 4 parts of 2, 2, 1, 1. Weighted sums:
     * 1.5 + 5 - 0.5 + 18 = 24; -2.25 + 0.5 + 5 - 12 = -8.75; 3 - 12 + 1.5 + 2 = -5.5;
     * 0.125 + 0.75 + 1 + 10 = 11.875; 7 + 2 + 2.5 - 34 = -22.5; -1 + 8 + 0.5 + 2 = 9.5. */
    static const double weights[4] = { 1, 2, 1, 4 };
    static const float want[6] = { 3.0f, -8.75f / 8, -5.5f / 8, 11.875f / 8, -22.5f / 8, 9.5f / 8 };
    plan *p = hcoll_new_plan();
    hcoll_set_init(p);
    hcoll_add_group(p, T_BFLY, (const uint32_t[]){ 0, 1, 2, 3 }, 4);
    p->g[0].weights = weights;
    hcoll_run(hcoll_tensor_json, NULL, 0);
    for (uint32_t w = 0; w < 4; w++)
        ck_assert_mem_eq(p->out[w], want, sizeof(want));
    free(p);
}
END_TEST

/* Parts of 6 floats over 4 members: [0,2) [2,4) [4,5) [5,6). Means of workers 0..2. */
static const float mean3[6] = { (float)(3.5 / 3), 1.0f, -0.5f, 0.5f, 3.5f, (float)(3.5 / 3) };

/* Fails unless workers 0..2 of a butterfly over {0, 1, 2, 3} that worker 3 failed or left end
 * with the means of three on parts 0..2 and their own values on part 3, and know 3 failed. */
static void expect_means_of_three(const plan *p)
{
    for (uint32_t w = 0; w < 3; w++) {
        ck_assert_mem_eq(p->out[w], mean3, 5 * sizeof(float));
        hcoll_same_bits(p->out[w][5], hcoll_init4[w][5]); /* part 3 kept */
        ck_assert_uint_eq(p->failed[w][0], 3);
    }
}

/* The next two tests' butterfly over {0, 1, 2, 3} (sender timeout 20 ms, reducer timeout
 * 40 ms), told of failures if notify, whose worker 3 fails at 5 ms, before its first
 * computation ends, to 3 iterations. Returns its plan (and the run's summary in *sum) after
 * checking what both see (expect_means_of_three). */
static plan *bfly_with_3_failing(bool notify, sim_run_summary *sum)
{
    plan *p = hcoll_new_plan();
    hcoll_set_init(p);
    p->compute_first = true;
    p->notify_down = notify;
    p->sender_timeout = 20000000;
    p->reducer_timeout = 40000000;
    hcoll_add_group(p, T_BFLY, (const uint32_t[]){ 0, 1, 2, 3 }, 4);
    const char *sets[] = { "stragglers=[{\"kind\": \"failure\", \"workers\": [3], \"at_s\": "
                           "0.005}]",
                           "stop.iterations=3" };
    *sum = hcoll_run(hcoll_tensor_json, sets, 2);
    expect_means_of_three(p);
    return p;
}

START_TEST(butterfly_drops_a_sender_that_times_out_and_keeps_a_dead_reducers_part)
{
    /* Worker 3 fails at 5 ms, before its first computation ends; the others join at 10 ms.
     * Nobody is told: reducers 0..2 drop worker 3 when their sender timeout (20 ms) expires,
     * so parts 0..2 are means over workers 0..2 (denominator 3); part 3 never comes back
     * and each member keeps its own values for it at its reducer timeout (40 ms). */
    sim_run_summary sum;
    plan *p = bfly_with_3_failing(false, &sum);
    ck_assert_int_eq(sum.sim_ns, 50000000);
    for (uint32_t w = 0; w < 3; w++)
        ck_assert_uint_eq(p->nfailed[w], 1);
    free(p);
}
END_TEST

START_TEST(butterfly_told_of_a_failure_drops_the_sender_at_once)
{
    /* As above, but the failure is passed to the kit: nobody waits for worker 3, and the round
     * ends two small hops after 10 ms, long before any timeout. */
    sim_run_summary sum;
    plan *p = bfly_with_3_failing(true, &sum);
    ck_assert_int_lt(sum.sim_ns, 10300000);
    free(p);
}
END_TEST

START_TEST(butterfly_member_that_leaves_is_dropped_like_a_failed_one_and_gets_nothing)
{
    /* Worker 3 leaves (it never learnt of the round) when it would have joined, at 10 ms:
     * nobody waits for it, the others end as when they are told of its failure (the mean of
     * three on parts 0..2, part 3 each member's own), and worker 3 is called back for nothing
     * and keeps its parameters. */
    plan *p = hcoll_new_plan();
    hcoll_set_init(p);
    p->compute_first = true;
    p->sender_timeout = 20000000;
    p->reducer_timeout = 40000000;
    p->leave[3] = true;
    hcoll_add_group(p, T_BFLY, (const uint32_t[]){ 0, 1, 2, 3 }, 4);
    const char *sets[] = { "stop.iterations=3" };
    sim_run_summary sum = hcoll_run(hcoll_tensor_json, sets, 1);
    ck_assert_int_lt(sum.sim_ns, 10300000);
    expect_means_of_three(p);
    for (uint32_t w = 0; w < 3; w++)
        ck_assert_uint_eq(p->nfailed[w], 1);
    ck_assert_uint_eq(p->ndone[3], 0);
    ck_assert_uint_eq(p->complete[0], 1);
    free(p);
}
END_TEST

START_TEST(butterfly_with_a_failed_reducer_keeps_each_members_own_part)
{
    /* Worker 2 is three times slower (joins at 30 ms); worker 3 joins at 10 ms, its parts are
     * delivered at once, and it fails at 20 ms, before it can reduce part 3. Parts 0..2 are
     * means over all four (its contribution had arrived); part 3 is each member's own. */
    static const float want[5] = { 8.0f / 4, 0.0f, -1.0f / 4, 4.0f / 4, 2.0f / 4 };
    plan *p = hcoll_new_plan();
    hcoll_set_init(p);
    p->compute_first = true;
    p->notify_down = true;
    hcoll_add_group(p, T_BFLY, (const uint32_t[]){ 0, 1, 2, 3 }, 4);
    const char *sets[] = { "stragglers=[{\"kind\": \"fixed\", \"workers\": [2], \"slowdown\": 3},"
                           " {\"kind\": \"failure\", \"workers\": [3], \"at_s\": 0.02}]",
                           "stop.iterations=3" };
    hcoll_run(hcoll_tensor_json, sets, 2);
    for (uint32_t w = 0; w < 3; w++) {
        ck_assert_mem_eq(p->out[w], want, sizeof(want));
        hcoll_same_bits(p->out[w][5], hcoll_init4[w][5]);
        ck_assert_uint_eq(p->nfailed[w], 1);
    }
    free(p);
}
END_TEST

/* A butterfly's bytes are sized by its room and vectors alone: the same for 100,000
 * workers as for 1,000 (a member's position was a table over every worker: 4 bytes each). */
START_TEST(butterfly_memory_does_not_grow_with_the_workers)
{
    ck_assert_uint_eq(coll_bfly_memory(100000, 50, 16), coll_bfly_memory(1000, 50, 16));
    ck_assert_uint_eq(coll_bfly_memory(70001, 7, 0), coll_bfly_memory(7, 7, 0));
}
END_TEST

/* The arena a ring for `workers` workers and room for `cap` members asks for. */
static uint64_t ring_bytes(uint32_t workers, uint32_t cap)
{
    sim_err err;
    sim_arena *a = sim_arena_create_sizing(&err);
    ck_assert_ptr_nonnull(a);
    ck_assert_ptr_null(coll_ring_create(a, NULL, workers, cap, NULL, NULL));
    uint64_t bytes = sim_arena_bytes(a);
    sim_arena_destroy(a);
    return bytes;
}

/* A ring with room for fewer members than the workers (one of ripples' pool of n / 2 group
 * rings) holds nothing sized by the workers (issue 38): its position and joined tables over
 * every worker made the pool quadratic in them, 5 n^2 / 2 bytes. A ring over all the workers
 * keeps its tables by worker id. */
START_TEST(a_narrow_ring_takes_no_memory_sized_by_the_workers)
{
    ck_assert_uint_eq(ring_bytes(1000000, 4), ring_bytes(5, 4));
    ck_assert_uint_eq(ring_bytes(70001, 17), ring_bytes(18, 17));
    ck_assert_uint_ge(ring_bytes(100000, 100000), (uint64_t)100000 * 5);
}
END_TEST

Suite *test_suite(void)
{
    Suite *s = suite_create("coll");
    TCase *tc = tcase_create("ring");
    tcase_add_test(tc, ring_over_a_subset_matches_the_alpha_beta_formula);
    tcase_add_test(tc, two_disjoint_rings_take_the_time_of_one);
    tcase_add_test(tc, ring_told_of_a_failure_restarts_over_the_survivors_and_lists_it);
    tcase_add_test(tc, ring_that_ends_rounds_on_a_failure_tells_the_survivors_it_was_abandoned);
    tcase_add_test(tc,
                   ring_that_ends_rounds_on_a_failure_tells_the_survivors_a_member_completed_it);
    tcase_add_test(tc, a_narrow_ring_takes_no_memory_sized_by_the_workers);
    suite_add_tcase(s, tc);
    tc = tcase_create("butterfly");
    tcase_add_test(tc, butterfly_of_four_takes_two_hops);
    tcase_add_test(tc, butterfly_mean_of_three_is_exact_and_bitwise_equal);
    tcase_add_test(tc, butterfly_grows_for_a_larger_round);
    tcase_add_test(tc, butterfly_weighted_mean_of_four_with_uneven_parts);
    tcase_add_test(tc, butterfly_drops_a_sender_that_times_out_and_keeps_a_dead_reducers_part);
    tcase_add_test(tc, butterfly_told_of_a_failure_drops_the_sender_at_once);
    tcase_add_test(tc, butterfly_member_that_leaves_is_dropped_like_a_failed_one_and_gets_nothing);
    tcase_add_test(tc, butterfly_with_a_failed_reducer_keeps_each_members_own_part);
    tcase_add_test(tc, butterfly_memory_does_not_grow_with_the_workers);
    suite_add_tcase(s, tc);
    return s;
}
