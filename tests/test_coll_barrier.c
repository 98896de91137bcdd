/* The kit's barrier (kit/coll.h), several collectives at once on their own channels, the kit's
 * objects in the run's arena and the rejoin service's choice of a peer, driven by the
 * test-only protocol of tests/harness_coll.h. */
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

/* ---- Barrier and channels ---- */

/* What a barrier_plan's workers do beyond computing before they arrive. */
enum {
    NOTIFY = 1, /* are told of failures (notify_down) */
    REPEAT = 2, /* arrive again after each release (repeat) */
    ADMIT = 4,  /* admit a recovered worker (admit_on_up) */
    RESTART = 8 /* restart the barrier at a recovery (restart_on_up) */
};

/* A plan of one barrier over workers 0 to 3, each computing before it arrives. */
static plan *barrier_plan(unsigned what)
{
    plan *p = hcoll_new_plan();
    p->compute_first = true;
    p->notify_down = (what & NOTIFY) != 0;
    p->repeat = (what & REPEAT) != 0;
    p->admit_on_up = (what & ADMIT) != 0;
    p->restart_on_up = (what & RESTART) != 0;
    hcoll_add_group(p, T_BARRIER, (const uint32_t[]){ 0, 1, 2, 3 }, 4);
    return p;
}

START_TEST(barrier_releases_everyone_after_the_last_arrival)
{
    /* Worker 3 computes 5 times longer (50 ms); coordinator 0 hears of it 2L later (50.1 ms)
     * and is released then; the others get its release another 2L later (50.2 ms). */
    plan *p = barrier_plan(0);
    const char *sets[] = { "stragglers=[{\"kind\": \"fixed\", \"workers\": [3], \"slowdown\": 5}]",
                           "stop.iterations=4" };
    sim_run_summary sum = hcoll_run(hcoll_timing_json, sets, 2);
    ck_assert_int_eq(sum.sim_ns, 50200000);
    ck_assert_int_eq(p->done_ns[0], 50100000);
    for (uint32_t w = 1; w < 4; w++)
        ck_assert_int_eq(p->done_ns[w], 50200000);
    free(p);
}
END_TEST

START_TEST(barrier_rounds_follow_one_another)
{
    /* A barrier every iteration: members compute 10 ms (worker 3: 50 ms) and arrive again as
     * soon as they are released. Worker 3 is released 2L * 2 = 200 us after it arrives and
     * computes again, so round k releases the others at k * 50.2 ms; three rounds. */
    plan *p = barrier_plan(REPEAT);
    const char *sets[] = { "stragglers=[{\"kind\": \"fixed\", \"workers\": [3], \"slowdown\": 5}]",
                           "stop.iterations=12" };
    sim_run_summary sum = hcoll_run(hcoll_timing_json, sets, 2);
    ck_assert_int_eq(sum.sim_ns, 3 * 50200000);
    for (uint32_t w = 0; w < 4; w++)
        ck_assert_uint_eq(p->ndone[w], 3);
    ck_assert_int_eq(p->done_ns[0], 3 * 50200000 - 100000);
    free(p);
}
END_TEST

START_TEST(barrier_counts_a_failed_member_as_arrived)
{
    /* Worker 2 fails at 5 ms and the kit is told; the others arrive at 10 ms and are released
     * 2L (coordinator) and 4L later, with worker 2 reported. */
    plan *p = barrier_plan(NOTIFY);
    const char *sets[] = {
        "stragglers=[{\"kind\": \"failure\", \"workers\": [2], \"at_s\": 0.005}]",
        "stop.iterations=3"
    };
    hcoll_run(hcoll_timing_json, sets, 2);
    ck_assert_int_eq(p->done_ns[0], 10100000);
    ck_assert_int_eq(p->done_ns[1], 10200000);
    ck_assert_int_eq(p->done_ns[3], 10200000);
    ck_assert_uint_eq(p->ndone[2], 0);
    for (uint32_t w = 0; w < 4; w++)
        if (w != 2) {
            ck_assert_uint_eq(p->nfailed[w], 1);
            ck_assert_uint_eq(p->failed[w][0], 2);
        }
    free(p);
}
END_TEST

START_TEST(barrier_whose_coordinator_fails_in_an_open_round_starts_again_without_it)
{
    /* Coordinator 0 fails at 30 ms, while 1 and 2 wait in round 0 and 3 (5 times slower)
     * computes: the barrier starts again over {1, 2, 3}, 1 coordinating; 2 arrives again, 3
     * arrives at 50 ms and reaches 1 2L later: 1 is released at 50.1 ms, 2 and 3 at 50.2 ms,
     * each told that 0 failed. */
    plan *p = barrier_plan(NOTIFY);
    const char *sets[] = { "stragglers=[{\"kind\": \"fixed\", \"workers\": [3], \"slowdown\": 5},"
                           " {\"kind\": \"failure\", \"workers\": [0], \"at_s\": 0.03}]",
                           "stop.iterations=3" };
    hcoll_run(hcoll_timing_json, sets, 2);
    ck_assert_uint_eq(p->ndone[0], 0);
    ck_assert_int_eq(p->done_ns[1], 50100000);
    ck_assert_int_eq(p->done_ns[2], 50200000);
    ck_assert_int_eq(p->done_ns[3], 50200000);
    for (uint32_t w = 1; w < 4; w++) {
        ck_assert_uint_eq(p->ndone[w], 1);
        ck_assert_uint_eq(p->nfailed[w], 1);
        ck_assert_uint_eq(p->failed[w][0], 0);
    }
    free(p);
}
END_TEST

START_TEST(barrier_whose_coordinator_fails_after_deciding_releases_the_waiting_at_once)
{
    /* Coordinator 0 decides round 0 and is released at 50.1 ms (3 arrived last); it fails at
     * 50.15 ms, before its releases land (50.2 ms), so they are lost: the barrier starts again
     * over {1, 2, 3} and releases them at once, at 50.15 ms. */
    plan *p = barrier_plan(NOTIFY);
    const char *sets[] = { "stragglers=[{\"kind\": \"fixed\", \"workers\": [3], \"slowdown\": 5},"
                           " {\"kind\": \"failure\", \"workers\": [0], \"at_s\": 0.05015}]",
                           "stop.iterations=4" };
    hcoll_run(hcoll_timing_json, sets, 2);
    ck_assert_int_eq(p->done_ns[0], 50100000);
    for (uint32_t w = 1; w < 4; w++) {
        ck_assert_uint_eq(p->ndone[w], 1);
        ck_assert_int_eq(p->done_ns[w], 50150000);
        ck_assert_uint_eq(p->failed[w][0], 0);
    }
    free(p);
}
END_TEST

/* The restarts at 3's recovery of the next two tests: 0 is 5 times slower, 3 fails at 5 ms and
 * recovers at recover_s (a JSON number), having arrived for the owner meanwhile if arrived.
 * Either way 0 arrives last, at 50 ms, and is released at once, 1 to 3 once each, 2L later. */
static plan *restarted_and_released_at_50_ms(const char *recover_s, bool arrived)
{
    plan *p = barrier_plan(NOTIFY | RESTART);
    p->arrived[3] = arrived;
    char strag[192];
    snprintf(strag, sizeof(strag),
             "stragglers=[{\"kind\": \"fixed\", \"workers\": [0], \"slowdown\": 5},"
             " {\"kind\": \"failure\", \"workers\": [3], \"at_s\": 0.005,"
             " \"recover_s\": %s}]",
             recover_s);
    const char *sets[] = { strag, "stop.iterations=5" };
    hcoll_run(hcoll_timing_json, sets, 2);
    ck_assert_int_eq(p->done_ns[0], 50000000);
    for (uint32_t w = 1; w < 4; w++) {
        ck_assert_uint_eq(p->ndone[w], 1);
        ck_assert_int_eq(p->done_ns[w], 50100000);
    }
    return p;
}

START_TEST(barrier_restarted_in_an_open_round_keeps_the_waiting_and_takes_the_newcomer_in)
{
    /* 3 fails at 5 ms; 1 and 2 arrive at 10 ms and wait in round 0 for 0 (5 times slower).
     * 3 recovers at 20 ms: the barrier restarts over {0, 1, 2, 3}; 1 and 2 arrive again, 3
     * computes and arrives at 30 ms; 0 arrives last, at 50 ms, and is released at once, the
     * others 2L later. Without the restart 1 and 2 would still be released (3 counted as
     * failed), 3 never. */
    plan *p = restarted_and_released_at_50_ms("0.02", false);
    for (uint32_t w = 1; w < 4; w++)
        ck_assert_uint_eq(p->nfailed[w], 0); /* failures since the restart */
    free(p);
}
END_TEST

START_TEST(barrier_restarted_with_a_newcomer_that_arrived_counts_its_arrival)
{
    /* As above, but 3 recovers at 45 ms and has arrived for the owner (arrived[3]): it arrives
     * at the restart, at 45 ms, instead of computing until 55 ms; so 0, arriving at 50 ms,
     * releases everyone then. */
    free(restarted_and_released_at_50_ms("0.045", true));
}
END_TEST

START_TEST(barrier_admitted_worker_that_arrived_is_counted_when_the_round_ends)
{
    /* 3 fails at 5 ms and recovers at 6 ms: admitted while round 0 is open, it computes and
     * arrives at 16 ms (held: not a member yet). 1 and 2 arrive at 10 ms, 0 (5 times slower)
     * at 50 ms: round 0 is decided (3 counted as failed) and 0 is released; the barrier then
     * restarts over {0, 1, 2, 3}: 1 and 2, whose round is decided, are released at once
     * (50 ms, not 50.1), and 3's held arrival counts in round 1, which 0's arrival at 100 ms
     * completes: 3 is released at 100.1 ms. */
    plan *p = barrier_plan(NOTIFY | REPEAT | ADMIT);
    const char *sets[] = { "stragglers=[{\"kind\": \"fixed\", \"workers\": [0], \"slowdown\": 5},"
                           " {\"kind\": \"failure\", \"workers\": [3], \"at_s\": 0.005,"
                           " \"recover_s\": 0.006}]",
                           "stop.time_s=0.12", "stop.iterations=1000" };
    hcoll_run(hcoll_timing_json, sets, 3);
    ck_assert_int_eq(p->first_done_ns[0], 50000000);
    ck_assert_int_eq(p->first_done_ns[1], 50000000);
    ck_assert_int_eq(p->first_done_ns[2], 50000000);
    ck_assert_uint_eq(p->ndone[3], 1);
    ck_assert_int_eq(p->first_done_ns[3], 100100000);
    free(p);
}
END_TEST

START_TEST(barrier_admitted_worker_becomes_a_member_once_the_decided_round_is_released)
{
    /* 3 fails at 5 ms; worker 2's latency is 3L. Round 0 ({0, 1, 2}) is decided at 10.2 ms
     * (2's arrival), 0 released then, 1 at 10.3 ms, 2 at 10.4 ms. 3 recovers and is admitted at
     * 10.25 ms: the barrier restarts after the last of those releases (a restart at the
     * admission, or at 1's release, would release 2 at once, at 10.25 or 10.3 ms). Round 1
     * then waits for 3, which computes twice as long, until 30.25 ms, and reaches 0 at
     * 30.35 ms: 0 is released then, 1 and 3 2L later, 2 4L later. */
    plan *p = barrier_plan(NOTIFY | REPEAT | ADMIT);
    const char *sets[] = { "stragglers=[{\"kind\": \"failure\", \"workers\": [3], \"at_s\": 0.005,"
                           " \"recover_s\": 0.01025}, {\"kind\": \"window\", \"workers\": [3],"
                           " \"from_s\": 0.01, \"to_s\": 0.02, \"slowdown\": 2}]",
                           "network.overrides=[{\"workers\": [2], \"latency_us\": 150}]",
                           "stop.time_s=0.031", "stop.iterations=1000" };
    hcoll_run(hcoll_timing_json, sets, 4);
    ck_assert_int_eq(p->first_done_ns[0], 10200000);
    ck_assert_int_eq(p->first_done_ns[1], 10300000);
    ck_assert_int_eq(p->first_done_ns[2], 10400000);
    ck_assert_uint_eq(p->ndone[0], 2);
    ck_assert_uint_eq(p->ndone[3], 1);
    ck_assert_int_eq(p->done_ns[0], 30350000);
    ck_assert_int_eq(p->done_ns[1], 30450000);
    ck_assert_int_eq(p->done_ns[2], 30550000);
    ck_assert_int_eq(p->done_ns[3], 30450000);
    free(p);
}
END_TEST

START_TEST(barrier_whose_coordinator_fails_takes_the_admitted_in)
{
    /* 3 fails at 5 ms and is admitted at 6 ms (its arrival at 16 ms held); coordinator 0 fails
     * at 8 ms, round 0 open: the barrier restarts over {1, 2, 3}, 1 coordinating, with 3's
     * arrival once it comes. 1 and 2 arrive at 10 ms, 3 at 16 ms: 1 is released at 16.1 ms,
     * 2 and 3 at 16.2 ms. Without taking 3 in, 1 and 2 would be released at 10.1 / 10.2 ms. */
    plan *p = barrier_plan(NOTIFY | ADMIT);
    const char *sets[] = { "stragglers=[{\"kind\": \"failure\", \"workers\": [3], \"at_s\": 0.005,"
                           " \"recover_s\": 0.006}, {\"kind\": \"failure\", \"workers\": [0],"
                           " \"at_s\": 0.008}]",
                           "stop.time_s=0.03", "stop.iterations=1000" };
    hcoll_run(hcoll_timing_json, sets, 3);
    ck_assert_uint_eq(p->ndone[0], 0);
    ck_assert_int_eq(p->done_ns[1], 16100000);
    ck_assert_int_eq(p->done_ns[2], 16200000);
    ck_assert_int_eq(p->done_ns[3], 16200000);
    free(p);
}
END_TEST

START_TEST(barrier_admitted_worker_that_fails_again_is_not_taken_in)
{
    /* 3 fails at 5 ms, is admitted at 6 ms and fails again at 8 ms: the restart after round 0
     * (decided at 10.1 ms) is over {0, 1, 2}, so round 1 ends without 3 (at 20.3 ms for 0). A
     * barrier taking it in would wait for it for good. */
    plan *p = barrier_plan(NOTIFY | REPEAT | ADMIT);
    const char *sets[] = { "stragglers=[{\"kind\": \"failure\", \"workers\": [3], \"at_s\": 0.005,"
                           " \"recover_s\": 0.006}, {\"kind\": \"failure\", \"workers\": [3],"
                           " \"at_s\": 0.008}]",
                           "stop.time_s=0.025", "stop.iterations=1000" };
    hcoll_run(hcoll_timing_json, sets, 3);
    ck_assert_uint_eq(p->ndone[3], 0);
    ck_assert_uint_eq(p->ndone[0], 2);
    ck_assert_int_eq(p->done_ns[0], 20300000);
    free(p);
}
END_TEST

START_TEST(barrier_restarted_after_a_decided_round_releases_the_waiting_at_once)
{
    /* 0 (5 times slower) arrives last at 50 ms, decides round 0 (3, failed at 5 ms, counted)
     * and is released; its releases to 1 and 2 would land at 50.1 ms. 3 recovers at 50.05 ms:
     * the restart releases 1 and 2 at once (their round was decided), and the releases of the
     * earlier start are ignored when they land. */
    plan *p = barrier_plan(NOTIFY | RESTART);
    const char *sets[] = { "stragglers=[{\"kind\": \"fixed\", \"workers\": [0], \"slowdown\": 5},"
                           " {\"kind\": \"failure\", \"workers\": [3], \"at_s\": 0.005,"
                           " \"recover_s\": 0.05005}]",
                           "stop.iterations=4" };
    hcoll_run(hcoll_timing_json, sets, 2);
    ck_assert_int_eq(p->done_ns[0], 50000000);
    for (uint32_t w = 1; w < 3; w++) {
        ck_assert_uint_eq(p->ndone[w], 1);
        ck_assert_int_eq(p->done_ns[w], 50050000);
    }
    ck_assert_uint_eq(p->ndone[3], 0); /* computing in round 1 */
    free(p);
}
END_TEST

START_TEST(collectives_on_different_channels_do_not_mix)
{
    /* Six workers: a butterfly over {0, 2}, one over {1, 3} and a ring over {4, 5}, all at
     * once on channels 2, 3 and 1 (the ring, in the arena, is created first, in the buffers
     * hook): each butterfly's members get their own group's mean, bitwise equal, and the ring's
     * members (whose parameters the ring does not touch) finish too. */
    plan *p = hcoll_new_plan();
    hcoll_set_init(p);
    hcoll_add_group(p, T_BFLY, (const uint32_t[]){ 0, 2 }, 2);
    hcoll_add_group(p, T_BFLY, (const uint32_t[]){ 1, 3 }, 2);
    hcoll_add_group(p, T_RING, (const uint32_t[]){ 4, 5 }, 2);
    const char *sets[] = { "workers=6", "stop.iterations=6" };
    hcoll_run(hcoll_tensor_json, sets, 2);
    for (uint32_t e = 0; e < 6; e++) {
        hcoll_same_bits(p->out[0][e], (hcoll_init4[0][e] + hcoll_init4[2][e]) / 2);
        hcoll_same_bits(p->out[1][e], (hcoll_init4[1][e] + hcoll_init4[3][e]) / 2);
    }
    ck_assert_mem_eq(p->out[0], p->out[2], sizeof(p->out[0]));
    ck_assert_mem_eq(p->out[1], p->out[3], sizeof(p->out[1]));
    ck_assert_uint_eq(p->ndone[4], 1);
    ck_assert_uint_eq(p->ndone[5], 1);
    ck_assert_uint_eq(p->channel[0], 2);
    ck_assert_uint_eq(p->channel[1], 3);
    ck_assert_uint_eq(p->channel[2], 1);
    free(p);
}
END_TEST

/* ---- The kit's objects in the run's arena ---- */

/* Bytes of n elements of `size` in an arena: rounded up to its alignment. */
static uint64_t line(size_t n, size_t size)
{
    return ((uint64_t)n * size + SIM_ARENA_ALIGN - 1) / SIM_ARENA_ALIGN * SIM_ARENA_ALIGN;
}

enum {
    A_WORKERS = 10,
    A_CAP = 4,
    A_CHANNELS = 3,
    A_FLOATS = 100
};

/* A hub, a ring, a mean and a barrier in `a`, as a protocol's buffers hook asks for them. */
static void kit_objects(sim_arena *a, coll_hub **hub, coll_ring **ring, coll_mean **mean,
                        coll_barrier **barrier)
{
    *hub = coll_hub_create(a, A_CHANNELS, 0);
    *ring = coll_ring_create(a, *hub, A_WORKERS, A_CAP, hcoll_t_done, NULL);
    *mean = coll_mean_create(a, A_FLOATS, A_CAP);
    *barrier = coll_barrier_create(a, *hub, A_WORKERS, A_CAP, hcoll_t_done, NULL);
}

START_TEST(kit_objects_take_what_the_sizing_arena_counted_their_real_sizes)
{
    sim_err err;
    sim_err_clear(&err);
    sim_arena *s = sim_arena_create_sizing(&err);
    coll_hub *hub;
    coll_ring *ring;
    coll_mean *mean;
    coll_barrier *barrier;
    kit_objects(s, &hub, &ring, &mean, &barrier);
    ck_assert_ptr_null(hub); /* the sizing arena builds nothing */
    ck_assert_ptr_null(ring);
    ck_assert_ptr_null(mean);
    ck_assert_ptr_null(barrier);
    size_t w = A_WORKERS, c = A_CAP;
    uint64_t want = line(1, sizeof(coll_hub)) + line(A_CHANNELS + 1, sizeof(coll_slot));
    /* A narrow ring (room 4 of 10 workers): m; order, scratch, failed; its index of 8 slots;
     * joined, carry. Nothing sized by the workers. */
    want += line(1, sizeof(coll_ring)) + line(c, sizeof(coll_ring_pos)) + 3 * line(c, 4) +
            line((size_t)1 << coll_bfly_bits(A_CAP), 8) + 2 * line(c, 1);
    want += line(1, sizeof(coll_mean)) + line(A_FLOATS, sizeof(float)) + line(c, sizeof(float *));
    want += line(1, sizeof(coll_barrier)) + 5 * line(c, 4) + 2 * line(c, 1) + line(w, 4) +
            2 * line(w, sizeof(bool)); /* members, mround, failed, old_*; states; pos; flags */
    ck_assert_uint_eq(sim_arena_bytes(s), want);
    /* The run's arena of that size holds them all, built and registered. */
    sim_arena *a = sim_arena_create(sim_arena_bytes(s), &err);
    ck_assert_ptr_nonnull(a);
    kit_objects(a, &hub, &ring, &mean, &barrier);
    ck_assert(!sim_arena_overrun(a));
    ck_assert_uint_eq(sim_arena_bytes(a), want);
    ck_assert_ptr_nonnull(hub);
    ck_assert_ptr_nonnull(ring);
    ck_assert_ptr_nonnull(mean);
    ck_assert_ptr_nonnull(barrier);
    ck_assert_int_eq(coll_hub_check(hub, &err), SIM_OK);
    ck_assert_uint_eq(ring->channel, 1);
    ck_assert_uint_eq(barrier->channel, 2);
    ck_assert_uint_eq(coll_ring_size(ring), 0);
    for (uint32_t v = 0; v < A_WORKERS; v++) {
        ck_assert_uint_eq(coll_ring_find(ring, v), COLL_NONE);
        ck_assert(!coll_barrier_has(barrier, v));
    }
    ck_assert_uint_eq(coll_barrier_coordinator(barrier), COLL_NONE);
    ck_assert_uint_eq(mean->nfloats, A_FLOATS);
    ck_assert_uint_eq((uintptr_t)mean->mean % SIM_ARENA_ALIGN, 0);
    sim_arena_destroy(a);
    sim_arena_destroy(s);
}
END_TEST

START_TEST(kit_object_on_a_full_hub_is_not_created_and_the_hub_check_says_so)
{
    sim_err err;
    sim_err_clear(&err);
    sim_arena *a = sim_arena_create(1 << 16, &err);
    coll_hub *hub = coll_hub_create(a, 1, 0);
    ck_assert_ptr_nonnull(coll_ring_create(a, hub, A_WORKERS, A_CAP, hcoll_t_done, NULL));
    ck_assert_int_eq(coll_hub_check(hub, &err), SIM_OK);
    ck_assert_ptr_null(coll_barrier_create(a, hub, A_WORKERS, A_CAP, hcoll_t_done, NULL));
    ck_assert_int_eq(coll_hub_check(hub, &err), SIM_EINVAL);
    ck_assert_ptr_nonnull(strstr(err.msg, "2 instances on a hub of 1 channels"));
    ck_assert(!sim_arena_overrun(a));
    sim_arena_destroy(a);
}
END_TEST

START_TEST(rejoin_service_takes_what_the_sizing_arena_counted_and_serves_only_its_graph)
{
    sim_err err;
    sim_err_clear(&err);
    graph_spec ring = { .kind = GRAPH_RING, .n = A_WORKERS };
    graph_spec complete = { .kind = GRAPH_COMPLETE, .n = A_WORKERS };
    sim_arena *s = sim_arena_create_sizing(&err);
    ck_assert_ptr_null(rejoin_create(s, A_WORKERS, NULL));
    uint64_t bare = sim_arena_bytes(s);
    ck_assert_ptr_null(rejoin_create(s, A_WORKERS, &ring));
    uint64_t served = sim_arena_bytes(s) - bare;
    /* Serving adds a tag and a count per worker and a flag per edge (20 of a ring's). */
    ck_assert_uint_eq(served, bare + line(A_WORKERS, 8) + line(A_WORKERS, 4) + line(20, 1));
    ck_assert_uint_ge(bare, line(A_WORKERS, 4) + line(A_WORKERS, sizeof(bool)));
    sim_arena *a = sim_arena_create(sim_arena_bytes(s), &err);
    rejoin *plain = rejoin_create(a, A_WORKERS, NULL);
    rejoin *rj = rejoin_create(a, A_WORKERS, &ring);
    ck_assert(!sim_arena_overrun(a));
    ck_assert_ptr_nonnull(plain);
    ck_assert_ptr_nonnull(rj);
    ck_assert(!rejoin_pending(rj, 3));
    graph g, k;
    sim_arena *ga = harness_graph_arena(&g, &ring), *ka = harness_graph_arena(&k, &complete);
    ck_assert_int_eq(graph_build(&g, &ring, NULL, &err), SIM_OK);
    ck_assert_int_eq(graph_build(&k, &complete, NULL, &err), SIM_OK);
    static const rejoin_ops ops = { .name = "t" };
    ck_assert_int_eq(rejoin_serve(plain, &ops, &g, NULL, &err), SIM_EINVAL);
    ck_assert_int_eq(rejoin_serve(rj, &ops, &k, NULL, &err), SIM_EINVAL);
    ck_assert_ptr_nonnull(strstr(err.msg, "sized for 20 edges, the graph has 90"));
    ck_assert_int_eq(rejoin_serve(rj, &ops, &g, NULL, &err), SIM_OK);
    sim_arena_destroy(ga);
    sim_arena_destroy(ka);
    sim_arena_destroy(a);
    sim_arena_destroy(s);
}
END_TEST

/* ---- The rejoin service's choice of a live neighbour ---- */

static bool t_running[6];

static uint64_t t_iter[6];

static uint32_t t_reads;

static bool t_progress(sim_ctx *ctx, uint32_t j, uint64_t *k)
{
    (void)ctx;
    t_reads++;
    *k = t_iter[j];
    return t_running[j];
}

START_TEST(rejoin_ahead_picks_the_running_neighbour_furthest_ahead)
{
    graph_spec spec = { .kind = GRAPH_COMPLETE, .n = 6 };
    graph g;
    sim_arena *a = harness_graph_arena(&g, &spec);
    sim_err err = { 0 };
    ck_assert_int_eq(graph_build(&g, &spec, NULL, &err), SIM_OK);
    uint64_t iters[6] = { 9, 4, 7, 7, 12, 3 };
    bool up[6] = { true, true, true, true, false, true };
    memcpy(t_iter, iters, sizeof(iters));
    memcpy(t_running, up, sizeof(up));
    uint64_t k = 0;
    t_reads = 0;
    /* Worker 0's neighbours 1..5: 4 is furthest ahead but down; 2 and 3 tie, 2 comes first. */
    ck_assert_uint_eq(rejoin_ahead(&g, NULL, 0, t_progress, &k), 2);
    ck_assert_uint_eq(k, 7);
    ck_assert_uint_eq(t_reads, 5); /* each neighbour read once */
    /* Nobody runs: none, and k untouched. */
    memset(t_running, 0, sizeof(t_running));
    k = 42;
    ck_assert_uint_eq(rejoin_ahead(&g, NULL, 5, t_progress, &k), REJOIN_NONE);
    ck_assert_uint_eq(k, 42);
    sim_arena_destroy(a);
}
END_TEST

Suite *test_suite(void)
{
    Suite *s = suite_create("coll_barrier");
    TCase *tc = tcase_create("barrier and channels");
    tcase_add_test(tc, barrier_releases_everyone_after_the_last_arrival);
    tcase_add_test(tc, barrier_rounds_follow_one_another);
    tcase_add_test(tc, barrier_counts_a_failed_member_as_arrived);
    tcase_add_test(tc, barrier_whose_coordinator_fails_in_an_open_round_starts_again_without_it);
    tcase_add_test(tc, barrier_whose_coordinator_fails_after_deciding_releases_the_waiting_at_once);
    tcase_add_test(tc,
                   barrier_restarted_in_an_open_round_keeps_the_waiting_and_takes_the_newcomer_in);
    tcase_add_test(tc, barrier_restarted_with_a_newcomer_that_arrived_counts_its_arrival);
    tcase_add_test(tc, barrier_restarted_after_a_decided_round_releases_the_waiting_at_once);
    tcase_add_test(tc, barrier_admitted_worker_that_arrived_is_counted_when_the_round_ends);
    tcase_add_test(tc, barrier_admitted_worker_becomes_a_member_once_the_decided_round_is_released);
    tcase_add_test(tc, barrier_whose_coordinator_fails_takes_the_admitted_in);
    tcase_add_test(tc, barrier_admitted_worker_that_fails_again_is_not_taken_in);
    tcase_add_test(tc, collectives_on_different_channels_do_not_mix);
    suite_add_tcase(s, tc);
    tc = tcase_create("arena");
    tcase_add_test(tc, kit_objects_take_what_the_sizing_arena_counted_their_real_sizes);
    tcase_add_test(tc, kit_object_on_a_full_hub_is_not_created_and_the_hub_check_says_so);
    tcase_add_test(tc,
                   rejoin_service_takes_what_the_sizing_arena_counted_and_serves_only_its_graph);
    suite_add_tcase(s, tc);
    tc = tcase_create("rejoin");
    tcase_add_test(tc, rejoin_ahead_picks_the_running_neighbour_furthest_ahead);
    suite_add_tcase(s, tc);
    return s;
}
