/* The kit's group collectives (kit/coll.h), driven by a test-only protocol: ring timing
 * over subsets and disjoint groups, butterfly timing, means worked out by hand, failed senders
 * and reducers, the barrier, and several collectives at once on their own channels. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>
#include <gsl/gsl_errno.h>

#include "harness.h"
#include "kit/coll.h"
#include "kit/coll_state.h"
#include "kit/graph.h"
#include "kit/rejoin.h"
#include "runtime/arena.h"
#include "runtime/proto.h"
#include "runtime/run.h"
#include "scenario/scenario.h"

/* ---- A test-only protocol: groups of members, each running one collective ---- */

enum {
    MAXW = 8,
    MAXG = 4,
    MAXP = 8
};
typedef enum {
    T_RING,
    T_BFLY,
    T_BARRIER
} tkind;

typedef struct tgroup {
    tkind kind;
    uint32_t n;
    uint32_t members[MAXW];
    const double *weights; /* butterfly weights, NULL: all 1 */
} tgroup;

/* What a test asks for and what the protocol saw; tests run in forked processes, so the
 * protocol reaches it through one pointer set by the test. */
typedef struct plan {
    uint32_t ngroups;
    tgroup g[MAXG];
    bool compute_first;  /* members join when their first computation ends (else at start) */
    bool notify_down;    /* SIM_EV_WORKER_DOWN goes to coll_hub_worker_down */
    bool end_on_failure; /* rings: coll_ring_on_failure(COLL_RING_END) */
    bool repeat;         /* a member computes again when done, then joins the next round */
    bool restart_on_up;  /* a recovered worker: its barrier restarts over its members that are up
                            (coll_barrier_restart with `arrived`), then it computes unless arrived */
    bool admit_on_up;    /* a recovered worker is admitted to its barrier (coll_barrier_admit) and
                            computes */
    bool arrived[MAXW];
    bool leave[MAXW]; /* a butterfly member that leaves (coll_bfly_leave) instead of joining */
    sim_time sender_timeout, reducer_timeout;
    uint32_t bfly_cap;    /* a butterfly's room at init (0: its members' count) */
    uint64_t grown[MAXG]; /* seen: a butterfly's growths */
    bool set_init;
    float init[MAXW][MAXP]; /* initial parameters, written at start when set_init */
    /* seen */
    uint32_t channel[MAXG];
    uint32_t complete[MAXG]; /* butterfly rounds seen complete by a done callback */
    sim_time done_ns[MAXW];
    sim_time first_done_ns[MAXW];
    uint32_t ndone[MAXW];
    float out[MAXW][MAXP];
    uint32_t nfailed[MAXW];
    uint32_t failed[MAXW][MAXW];
    int ended[MAXW];          /* coll_info.ended of the last completion */
    uint64_t abandoned[MAXG]; /* rings: coll_stats.abandoned at fini */
} plan;

static plan *P;

typedef struct tproto {
    coll_hub *hub;
    coll_ring *ring[MAXG];
    coll_bfly *bfly[MAXG];
    coll_barrier *barrier[MAXG];
    int32_t group_of[MAXW];
    uint32_t n; /* workers */
} tproto;

static int t_configure(void *state, sim_cfg *cfg, const proto_setup *setup, sim_err *err)
{
    tproto *st = state;
    st->n = setup->workers;
    (void)cfg;
    (void)err;
    return SIM_OK;
}

static const float *t_input(void *ud, sim_ctx *ctx, uint32_t w)
{
    (void)ud;
    return sim_ctx_params(ctx, w);
}

static float *t_output(void *ud, sim_ctx *ctx, uint32_t w)
{
    (void)ud;
    return sim_ctx_params(ctx, w);
}

static int t_done(void *ud, sim_ctx *ctx, uint32_t w, const coll_info *info, sim_err *err)
{
    tproto *st = ud;
    int32_t g = st->group_of[w];
    if (P->g[g].kind == T_BFLY && coll_bfly_round_complete(st->bfly[g]))
        P->complete[g]++;
    P->channel[g] = info->channel;
    P->done_ns[w] = sim_ctx_now(ctx);
    if (P->ndone[w]++ == 0)
        P->first_done_ns[w] = P->done_ns[w];
    size_t np = sim_ctx_num_params(ctx);
    if (np > 0)
        memcpy(P->out[w], sim_ctx_params(ctx, w), (np < MAXP ? np : MAXP) * sizeof(float));
    P->nfailed[w] = info->nfailed;
    P->ended[w] = info->ended;
    for (uint32_t i = 0; i < info->nfailed && i < MAXW; i++)
        P->failed[w][i] = info->failed[i];
    sim_ctx_count(ctx, w, 1);
    return P->repeat ? sim_ctx_compute(ctx, w, 0, err) : SIM_OK;
}

static int t_join(tproto *st, sim_ctx *ctx, uint32_t w, sim_err *err)
{
    int32_t g = st->group_of[w];
    switch (P->g[g].kind) {
    case T_RING:
        return coll_ring_join(st->ring[g], ctx, w, err);
    case T_BFLY:
        if (P->leave[w])
            return coll_bfly_leave(st->bfly[g], ctx, w, err);
        return coll_bfly_join(st->bfly[g], ctx, w, err);
    default:
        return coll_barrier_arrive(st->barrier[g], ctx, w, err);
    }
}

/* The hub, the rings and the barriers, in the run's arena, in group order (channels 1, 2, ...;
 * the butterflies, on the heap, take the next ones at start). */
static void t_buffers(void *state, sim_arena *a, size_t num_params)
{
    (void)num_params;
    tproto *st = state;
    st->hub = coll_hub_create(a, MAXG, SIM_EV_USER);
    for (uint32_t g = 0; g < P->ngroups; g++) {
        if (P->g[g].kind == T_RING)
            st->ring[g] = coll_ring_create(a, st->hub, st->n, P->g[g].n, t_done, st);
        else if (P->g[g].kind == T_BARRIER)
            st->barrier[g] = coll_barrier_create(a, st->hub, st->n, P->g[g].n, t_done, st);
    }
}

static int t_start(void *state, sim_ctx *ctx, sim_err *err)
{
    tproto *st = state;
    uint32_t nw = sim_ctx_workers(ctx);
    size_t np = sim_ctx_num_params(ctx);
    int rc = coll_hub_check(st->hub, err);
    for (uint32_t w = 0; w < MAXW; w++)
        st->group_of[w] = -1;
    for (uint32_t g = 0; g < P->ngroups && rc == SIM_OK; g++) {
        tgroup *gr = &P->g[g];
        for (uint32_t i = 0; i < gr->n; i++)
            st->group_of[gr->members[i]] = (int32_t)g;
        if (gr->kind == T_RING) {
            if (P->end_on_failure)
                coll_ring_on_failure(st->ring[g], COLL_RING_END);
            rc = coll_ring_reset(st->ring[g], ctx, gr->members, gr->n,
                                 sim_ctx_layer_bytes(ctx, SIM_LAYERS_ALL), err);
        } else if (gr->kind == T_BFLY) {
            st->bfly[g] = coll_bfly_create(st->hub, nw, P->bfly_cap > 0 ? P->bfly_cap : gr->n, np,
                                           sim_ctx_layer_bytes(ctx, SIM_LAYERS_ALL), t_input,
                                           t_output, t_done, st, err);
            if (st->bfly[g] == NULL)
                return err->code;
            coll_bfly_set_timeouts(st->bfly[g], P->sender_timeout, P->reducer_timeout);
            rc = coll_bfly_start(st->bfly[g], ctx, gr->members, gr->weights, gr->n, 0, err);
            coll_stats s;
            coll_bfly_stats(st->bfly[g], &s);
            P->grown[g] = s.grown;
        } else {
            rc = coll_barrier_start(st->barrier[g], ctx, gr->members, gr->n, 0, err);
        }
    }
    for (uint32_t w = 0; w < nw && w < MAXW && P->set_init; w++)
        memcpy(sim_ctx_params(ctx, w), P->init[w], (np < MAXP ? np : MAXP) * sizeof(float));
    for (uint32_t w = 0; w < nw && w < MAXW && rc == SIM_OK; w++) {
        if (st->group_of[w] < 0)
            continue;
        rc = P->compute_first ? sim_ctx_compute(ctx, w, 0, err) : t_join(st, ctx, w, err);
    }
    return rc;
}

/* Worker w recovered: its group's barrier restarts over the members that are up, in the
 * group's order; w computes then, unless P->arrived says it arrived meanwhile. */
static int t_restart(tproto *st, sim_ctx *ctx, uint32_t w, sim_err *err)
{
    int32_t g = st->group_of[w];
    uint32_t up[MAXW], n = 0;
    for (uint32_t i = 0; i < P->g[g].n; i++)
        if (!sim_ctx_down(ctx, P->g[g].members[i]))
            up[n++] = P->g[g].members[i];
    int rc = coll_barrier_restart(st->barrier[g], ctx, up, n, P->arrived, err);
    return rc != SIM_OK || P->arrived[w] ? rc : sim_ctx_compute(ctx, w, 0, err);
}

/* Worker w recovered: it is admitted to its group's barrier and computes. */
static int t_admit(tproto *st, sim_ctx *ctx, uint32_t w, sim_err *err)
{
    int rc = coll_barrier_admit(st->barrier[st->group_of[w]], w, err);
    return rc != SIM_OK ? rc : sim_ctx_compute(ctx, w, 0, err);
}

static int t_on_event(void *state, sim_ctx *ctx, const sim_event *ev, sim_err *err)
{
    tproto *st = state;
    bool handled;
    int rc = coll_hub_on_event(st->hub, ctx, ev, &handled, err);
    if (rc != SIM_OK || handled)
        return rc;
    switch (ev->kind) {
    case SIM_EV_COMPUTED:
        return t_join(st, ctx, (uint32_t)ev->dst, err);
    case SIM_EV_WORKER_DOWN:
        return P->notify_down ? coll_hub_worker_down(st->hub, ctx, (uint32_t)ev->dst, err) : SIM_OK;
    case SIM_EV_WORKER_UP:
        if (P->admit_on_up)
            return t_admit(st, ctx, (uint32_t)ev->dst, err);
        return P->restart_on_up ? t_restart(st, ctx, (uint32_t)ev->dst, err) : SIM_OK;
    default:
        return sim_err_set(err, SIM_EINVAL, NULL, "colltest: unexpected event %u", ev->kind);
    }
}

static void t_fini(void *state)
{
    tproto *st = state;
    for (uint32_t g = 0; g < MAXG; g++) {
        if (st->ring[g] != NULL) {
            coll_stats r;
            coll_ring_stats(st->ring[g], &r);
            P->abandoned[g] = r.abandoned;
        }
        coll_bfly_destroy(st->bfly[g]);
    }
}

static const proto_ops proto_colltest = {
    .name = "colltest",
    .summary = "test-only: collectives over groups",
    .state_size = sizeof(tproto),
    .rounds = false,
    .configure = t_configure,
    .start = t_start,
    .on_event = t_on_event,
    .buffers = t_buffers,
    .fini = t_fini,
};

/* Runs `json` with the test protocol; returns the summary. */
static sim_run_summary run(const char *json, const char *const *sets, size_t nsets)
{
    sim_err err;
    sim_err_clear(&err);
    sim_scenario *sc = sim_scenario_load(json, sets, nsets, &err);
    ck_assert_msg(sc != NULL, "load: %s %s", err.path, err.msg);
    ck_assert_msg(sim_run_check(sc, &proto_colltest, &err) == 0, "check: %s", err.msg);
    char *dir = harness_tmpdir("coll");
    sim_run_options opt = { .out_dir = dir };
    sim_run_summary sum;
    ck_assert_msg(sim_run(sc, &proto_colltest, &opt, &sum, &err) == 0, "run: %s", err.msg);
    harness_cleanup(dir);
    sim_scenario_destroy(sc);
    return sum;
}

static plan *new_plan(void)
{
    P = calloc(1, sizeof(*P));
    ck_assert_ptr_nonnull(P);
    return P;
}

static void add_group(plan *p, tkind kind, const uint32_t *members, uint32_t n)
{
    tgroup *g = &p->g[p->ngroups++];
    g->kind = kind;
    g->n = n;
    memcpy(g->members, members, n * sizeof(*members));
}

/* Timing only on a star: bandwidth B = 10 Gbit/s, NIC latency L = 50 us (path 2L). */
static const char timing_json[] = "tests/scenarios/coll/timing.json";

/* A real model of 6 floats (softmax, 2 features, 2 classes): the members' parameters are set
 * by hand at start; nothing trains. */
static const char tensor_json[] = "tests/scenarios/coll/tensor.json";

/* Fails the test unless a and b have the same bits. */
static void same_bits(float a, float b)
{
    ck_assert_mem_eq(&a, &b, sizeof(a));
}

/* ---- Ring ---- */

START_TEST(ring_over_a_subset_matches_the_alpha_beta_formula)
{
    /* Members 5, 2, 7 of 8: 2(n-1) = 4 steps of 10 MB, each 2L + 10e6 * 8 / 1e10 s =
     * 100 us + 8 ms, so every member is done at 4 * 8.1 ms = 32.4 ms. */
    plan *p = new_plan();
    add_group(p, T_RING, (const uint32_t[]){ 5, 2, 7 }, 3);
    sim_run_summary sum = run(timing_json, NULL, 0);
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
    plan *p = new_plan();
    add_group(p, T_RING, (const uint32_t[]){ 5, 2, 7 }, 3);
    add_group(p, T_RING, (const uint32_t[]){ 0, 3, 6 }, 3);
    const char *sets[] = { "stop.iterations=6" };
    sim_run_summary sum = run(timing_json, sets, 1);
    ck_assert_int_eq(sum.sim_ns, 32400000);
    for (uint32_t w = 0; w < 8; w++)
        ck_assert_int_eq(p->done_ns[w], w == 1 || w == 4 ? 0 : 32400000);
    ck_assert_uint_eq(p->channel[0], 1);
    ck_assert_uint_eq(p->channel[1], 2);
    free(p);
}
END_TEST

START_TEST(ring_told_of_a_failure_restarts_over_the_survivors_and_lists_it)
{
    /* Ring {0, 1, 2, 3}; worker 2 fails at 5 ms and the kit is told: the ring restarts over
     * {0, 1, 3}, whose members join at 10 ms and finish 4 steps of 10 MB later (32.4 ms, as
     * any ring of three), each told that 2 failed. */
    plan *p = new_plan();
    p->compute_first = true;
    p->notify_down = true;
    add_group(p, T_RING, (const uint32_t[]){ 0, 1, 2, 3 }, 4);
    const char *sets[] = {
        "stragglers=[{\"kind\": \"failure\", \"workers\": [2], \"at_s\": 0.005}]",
        "stop.iterations=3"
    };
    run(timing_json, sets, 2);
    ck_assert_uint_eq(p->ndone[2], 0);
    for (uint32_t w = 0; w < 4; w++)
        if (w != 2) {
            ck_assert_uint_eq(p->ndone[w], 1);
            ck_assert_int_eq(p->done_ns[w], 10000000 + 32400000);
            ck_assert_uint_eq(p->nfailed[w], 1);
            ck_assert_uint_eq(p->failed[w][0], 2);
        }
    free(p);
}
END_TEST

START_TEST(ring_that_ends_rounds_on_a_failure_tells_the_survivors_it_was_abandoned)
{
    /* Ring {0, 1, 2, 3} with COLL_RING_END; everyone joins at 10 ms, worker 2 fails at 15 ms,
     * before any member has completed the round (6 steps of 7.5 MB): each survivor is told at
     * once that its round was abandoned (and that 2 failed), and the ring does not start it
     * again (nobody has joined its new generation). Counted once. */
    plan *p = new_plan();
    p->compute_first = true;
    p->notify_down = true;
    p->end_on_failure = true;
    add_group(p, T_RING, (const uint32_t[]){ 0, 1, 2, 3 }, 4);
    const char *sets[] = {
        "stragglers=[{\"kind\": \"failure\", \"workers\": [2], \"at_s\": 0.015}]",
        "stop.iterations=3"
    };
    run(timing_json, sets, 2);
    ck_assert_uint_eq(p->ndone[2], 0);
    for (uint32_t w = 0; w < 4; w++)
        if (w != 2) {
            ck_assert_uint_eq(p->ndone[w], 1);
            ck_assert_int_eq(p->done_ns[w], 15000000);
            ck_assert_int_eq(p->ended[w], COLL_ENDED_ABANDONED);
            ck_assert_uint_eq(p->nfailed[w], 1);
            ck_assert_uint_eq(p->failed[w][0], 2);
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
    plan *p = new_plan();
    p->compute_first = true;
    p->notify_down = true;
    p->end_on_failure = true;
    add_group(p, T_RING, (const uint32_t[]){ 0, 1, 2, 3 }, 4);
    const char *net = "network.overrides=[{\"workers\": [1], \"latency_us\": 2050}]";
    const char *sets0[] = { net, "stop.iterations=3" };
    run(timing_json, sets0, 2);
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
    p = new_plan();
    p->compute_first = true;
    p->notify_down = true;
    p->end_on_failure = true;
    add_group(p, T_RING, (const uint32_t[]){ 0, 1, 2, 3 }, 4);
    const char *sets[] = { net, fail, "stop.iterations=3" };
    run(timing_json, sets, 3);
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
    plan *p = new_plan();
    add_group(p, T_BFLY, (const uint32_t[]){ 0, 1, 2, 3 }, 4);
    const char *sets[] = { "workload.message_bytes=40000000", "stop.iterations=4" };
    sim_run_summary sum = run(timing_json, sets, 2);
    ck_assert_int_eq(sum.sim_ns, 48200000);
    for (uint32_t w = 0; w < 4; w++) {
        ck_assert_int_eq(p->done_ns[w], 48200000);
        ck_assert_uint_eq(p->nfailed[w], 0);
    }
    free(p);
}
END_TEST

/* Member w's hand-set parameters (all exact in binary). */
static const float init4[4][6] = {
    { 1.5f, -2.25f, 3.0f, 0.125f, 7.0f, -1.0f },
    { 2.5f, 0.25f, -6.0f, 0.375f, 1.0f, 4.0f },
    { -0.5f, 5.0f, 1.5f, 1.0f, 2.5f, 0.5f },
    { 4.5f, -3.0f, 0.5f, 2.5f, -8.5f, 0.5f },
};

static void set_init(plan *p)
{
    p->set_init = true;
    memcpy(p->init, init4, sizeof(init4));
    for (uint32_t w = 0; w < 4; w++)
        memcpy(p->init[w], init4[w], sizeof(init4[w]));
}

START_TEST(butterfly_mean_of_three_is_exact_and_bitwise_equal)
{
    /* Sums over workers 0..2: 3.5, 3, -1.5, 1.5, 10.5, 3.5; over 3: */
    static const float want[6] = { (float)(3.5 / 3), 1.0f, -0.5f, 0.5f, 3.5f, (float)(3.5 / 3) };
    plan *p = new_plan();
    set_init(p);
    add_group(p, T_BFLY, (const uint32_t[]){ 0, 1, 2 }, 3);
    const char *sets[] = { "stop.iterations=3" };
    run(tensor_json, sets, 1);
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
    plan *p = new_plan();
    set_init(p);
    p->bfly_cap = 2;
    add_group(p, T_BFLY, (const uint32_t[]){ 0, 1, 2 }, 3);
    const char *sets[] = { "stop.iterations=3" };
    run(tensor_json, sets, 1);
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
    plan *p = new_plan();
    set_init(p);
    add_group(p, T_BFLY, (const uint32_t[]){ 0, 1, 2, 3 }, 4);
    p->g[0].weights = weights;
    run(tensor_json, NULL, 0);
    for (uint32_t w = 0; w < 4; w++)
        ck_assert_mem_eq(p->out[w], want, sizeof(want));
    free(p);
}
END_TEST

/* Parts of 6 floats over 4 members: [0,2) [2,4) [4,5) [5,6). Means of workers 0..2. */
static const float mean3[6] = { (float)(3.5 / 3), 1.0f, -0.5f, 0.5f, 3.5f, (float)(3.5 / 3) };

START_TEST(butterfly_drops_a_sender_that_times_out_and_keeps_a_dead_reducers_part)
{
    /* Worker 3 fails at 5 ms, before its first computation ends; the others join at 10 ms.
     * Nobody is told: reducers 0..2 drop worker 3 when their sender timeout (20 ms) expires,
     * so parts 0..2 are means over workers 0..2 (denominator 3); part 3 never comes back
     * and each member keeps its own values for it at its reducer timeout (40 ms). */
    plan *p = new_plan();
    set_init(p);
    p->compute_first = true;
    p->sender_timeout = 20000000;
    p->reducer_timeout = 40000000;
    add_group(p, T_BFLY, (const uint32_t[]){ 0, 1, 2, 3 }, 4);
    const char *sets[] = { "stragglers=[{\"kind\": \"failure\", \"workers\": [3], \"at_s\": "
                           "0.005}]",
                           "stop.iterations=3" };
    sim_run_summary sum = run(tensor_json, sets, 2);
    ck_assert_int_eq(sum.sim_ns, 50000000);
    for (uint32_t w = 0; w < 3; w++) {
        ck_assert_mem_eq(p->out[w], mean3, 5 * sizeof(float));
        same_bits(p->out[w][5], init4[w][5]); /* part 3 kept */
        ck_assert_uint_eq(p->nfailed[w], 1);
        ck_assert_uint_eq(p->failed[w][0], 3);
    }
    free(p);
}
END_TEST

START_TEST(butterfly_told_of_a_failure_drops_the_sender_at_once)
{
    /* As above, but the failure is passed to the kit: nobody waits for worker 3, and the round
     * ends two small hops after 10 ms, long before any timeout. */
    plan *p = new_plan();
    set_init(p);
    p->compute_first = true;
    p->notify_down = true;
    p->sender_timeout = 20000000;
    p->reducer_timeout = 40000000;
    add_group(p, T_BFLY, (const uint32_t[]){ 0, 1, 2, 3 }, 4);
    const char *sets[] = { "stragglers=[{\"kind\": \"failure\", \"workers\": [3], \"at_s\": "
                           "0.005}]",
                           "stop.iterations=3" };
    sim_run_summary sum = run(tensor_json, sets, 2);
    ck_assert_int_lt(sum.sim_ns, 10300000);
    for (uint32_t w = 0; w < 3; w++) {
        ck_assert_mem_eq(p->out[w], mean3, 5 * sizeof(float));
        same_bits(p->out[w][5], init4[w][5]);
        ck_assert_uint_eq(p->failed[w][0], 3);
    }
    free(p);
}
END_TEST

START_TEST(butterfly_member_that_leaves_is_dropped_like_a_failed_one_and_gets_nothing)
{
    /* Worker 3 leaves (it never learnt of the round) when it would have joined, at 10 ms:
     * nobody waits for it, the others end as when they are told of its failure (the mean of
     * three on parts 0..2, part 3 each member's own), and worker 3 is called back for nothing
     * and keeps its parameters. */
    plan *p = new_plan();
    set_init(p);
    p->compute_first = true;
    p->sender_timeout = 20000000;
    p->reducer_timeout = 40000000;
    p->leave[3] = true;
    add_group(p, T_BFLY, (const uint32_t[]){ 0, 1, 2, 3 }, 4);
    const char *sets[] = { "stop.iterations=3" };
    sim_run_summary sum = run(tensor_json, sets, 1);
    ck_assert_int_lt(sum.sim_ns, 10300000);
    for (uint32_t w = 0; w < 3; w++) {
        ck_assert_mem_eq(p->out[w], mean3, 5 * sizeof(float));
        same_bits(p->out[w][5], init4[w][5]);
        ck_assert_uint_eq(p->nfailed[w], 1);
        ck_assert_uint_eq(p->failed[w][0], 3);
    }
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
    plan *p = new_plan();
    set_init(p);
    p->compute_first = true;
    p->notify_down = true;
    add_group(p, T_BFLY, (const uint32_t[]){ 0, 1, 2, 3 }, 4);
    const char *sets[] = { "stragglers=[{\"kind\": \"fixed\", \"workers\": [2], \"slowdown\": 3},"
                           " {\"kind\": \"failure\", \"workers\": [3], \"at_s\": 0.02}]",
                           "stop.iterations=3" };
    run(tensor_json, sets, 2);
    for (uint32_t w = 0; w < 3; w++) {
        ck_assert_mem_eq(p->out[w], want, sizeof(want));
        same_bits(p->out[w][5], init4[w][5]);
        ck_assert_uint_eq(p->nfailed[w], 1);
    }
    free(p);
}
END_TEST

/* ---- Barrier and channels ---- */

START_TEST(barrier_releases_everyone_after_the_last_arrival)
{
    /* Worker 3 computes 5 times longer (50 ms); coordinator 0 hears of it 2L later (50.1 ms)
     * and is released then; the others get its release another 2L later (50.2 ms). */
    plan *p = new_plan();
    p->compute_first = true;
    add_group(p, T_BARRIER, (const uint32_t[]){ 0, 1, 2, 3 }, 4);
    const char *sets[] = { "stragglers=[{\"kind\": \"fixed\", \"workers\": [3], \"slowdown\": 5}]",
                           "stop.iterations=4" };
    sim_run_summary sum = run(timing_json, sets, 2);
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
    plan *p = new_plan();
    p->compute_first = true;
    p->repeat = true;
    add_group(p, T_BARRIER, (const uint32_t[]){ 0, 1, 2, 3 }, 4);
    const char *sets[] = { "stragglers=[{\"kind\": \"fixed\", \"workers\": [3], \"slowdown\": 5}]",
                           "stop.iterations=12" };
    sim_run_summary sum = run(timing_json, sets, 2);
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
    plan *p = new_plan();
    p->compute_first = true;
    p->notify_down = true;
    add_group(p, T_BARRIER, (const uint32_t[]){ 0, 1, 2, 3 }, 4);
    const char *sets[] = {
        "stragglers=[{\"kind\": \"failure\", \"workers\": [2], \"at_s\": 0.005}]",
        "stop.iterations=3"
    };
    run(timing_json, sets, 2);
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
    plan *p = new_plan();
    p->compute_first = true;
    p->notify_down = true;
    add_group(p, T_BARRIER, (const uint32_t[]){ 0, 1, 2, 3 }, 4);
    const char *sets[] = { "stragglers=[{\"kind\": \"fixed\", \"workers\": [3], \"slowdown\": 5},"
                           " {\"kind\": \"failure\", \"workers\": [0], \"at_s\": 0.03}]",
                           "stop.iterations=3" };
    run(timing_json, sets, 2);
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
    plan *p = new_plan();
    p->compute_first = true;
    p->notify_down = true;
    add_group(p, T_BARRIER, (const uint32_t[]){ 0, 1, 2, 3 }, 4);
    const char *sets[] = { "stragglers=[{\"kind\": \"fixed\", \"workers\": [3], \"slowdown\": 5},"
                           " {\"kind\": \"failure\", \"workers\": [0], \"at_s\": 0.05015}]",
                           "stop.iterations=4" };
    run(timing_json, sets, 2);
    ck_assert_int_eq(p->done_ns[0], 50100000);
    for (uint32_t w = 1; w < 4; w++) {
        ck_assert_uint_eq(p->ndone[w], 1);
        ck_assert_int_eq(p->done_ns[w], 50150000);
        ck_assert_uint_eq(p->failed[w][0], 0);
    }
    free(p);
}
END_TEST

START_TEST(barrier_restarted_in_an_open_round_keeps_the_waiting_and_takes_the_newcomer_in)
{
    /* 3 fails at 5 ms; 1 and 2 arrive at 10 ms and wait in round 0 for 0 (5 times slower).
     * 3 recovers at 20 ms: the barrier restarts over {0, 1, 2, 3}; 1 and 2 arrive again, 3
     * computes and arrives at 30 ms; 0 arrives last, at 50 ms, and is released at once, the
     * others 2L later. Without the restart 1 and 2 would still be released (3 counted as
     * failed), 3 never. */
    plan *p = new_plan();
    p->compute_first = true;
    p->notify_down = true;
    p->restart_on_up = true;
    add_group(p, T_BARRIER, (const uint32_t[]){ 0, 1, 2, 3 }, 4);
    const char *sets[] = { "stragglers=[{\"kind\": \"fixed\", \"workers\": [0], \"slowdown\": 5},"
                           " {\"kind\": \"failure\", \"workers\": [3], \"at_s\": 0.005,"
                           " \"recover_s\": 0.02}]",
                           "stop.iterations=5" };
    run(timing_json, sets, 2);
    ck_assert_int_eq(p->done_ns[0], 50000000);
    for (uint32_t w = 1; w < 4; w++) {
        ck_assert_uint_eq(p->ndone[w], 1);
        ck_assert_int_eq(p->done_ns[w], 50100000);
        ck_assert_uint_eq(p->nfailed[w], 0); /* failures since the restart */
    }
    free(p);
}
END_TEST

START_TEST(barrier_restarted_with_a_newcomer_that_arrived_counts_its_arrival)
{
    /* As above, but 3 recovers at 45 ms and has arrived for the owner (arrived[3]): it arrives
     * at the restart, at 45 ms, instead of computing until 55 ms; so 0, arriving at 50 ms,
     * releases everyone then. */
    plan *p = new_plan();
    p->compute_first = true;
    p->notify_down = true;
    p->restart_on_up = true;
    p->arrived[3] = true;
    add_group(p, T_BARRIER, (const uint32_t[]){ 0, 1, 2, 3 }, 4);
    const char *sets[] = { "stragglers=[{\"kind\": \"fixed\", \"workers\": [0], \"slowdown\": 5},"
                           " {\"kind\": \"failure\", \"workers\": [3], \"at_s\": 0.005,"
                           " \"recover_s\": 0.045}]",
                           "stop.iterations=5" };
    run(timing_json, sets, 2);
    ck_assert_int_eq(p->done_ns[0], 50000000);
    for (uint32_t w = 1; w < 4; w++) {
        ck_assert_uint_eq(p->ndone[w], 1);
        ck_assert_int_eq(p->done_ns[w], 50100000);
    }
    free(p);
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
    plan *p = new_plan();
    p->compute_first = true;
    p->notify_down = true;
    p->repeat = true;
    p->admit_on_up = true;
    add_group(p, T_BARRIER, (const uint32_t[]){ 0, 1, 2, 3 }, 4);
    const char *sets[] = { "stragglers=[{\"kind\": \"fixed\", \"workers\": [0], \"slowdown\": 5},"
                           " {\"kind\": \"failure\", \"workers\": [3], \"at_s\": 0.005,"
                           " \"recover_s\": 0.006}]",
                           "stop.time_s=0.12", "stop.iterations=1000" };
    run(timing_json, sets, 3);
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
    plan *p = new_plan();
    p->compute_first = true;
    p->notify_down = true;
    p->repeat = true;
    p->admit_on_up = true;
    add_group(p, T_BARRIER, (const uint32_t[]){ 0, 1, 2, 3 }, 4);
    const char *sets[] = { "stragglers=[{\"kind\": \"failure\", \"workers\": [3], \"at_s\": 0.005,"
                           " \"recover_s\": 0.01025}, {\"kind\": \"window\", \"workers\": [3],"
                           " \"from_s\": 0.01, \"to_s\": 0.02, \"slowdown\": 2}]",
                           "network.overrides=[{\"workers\": [2], \"latency_us\": 150}]",
                           "stop.time_s=0.031", "stop.iterations=1000" };
    run(timing_json, sets, 4);
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
    plan *p = new_plan();
    p->compute_first = true;
    p->notify_down = true;
    p->admit_on_up = true;
    add_group(p, T_BARRIER, (const uint32_t[]){ 0, 1, 2, 3 }, 4);
    const char *sets[] = { "stragglers=[{\"kind\": \"failure\", \"workers\": [3], \"at_s\": 0.005,"
                           " \"recover_s\": 0.006}, {\"kind\": \"failure\", \"workers\": [0],"
                           " \"at_s\": 0.008}]",
                           "stop.time_s=0.03", "stop.iterations=1000" };
    run(timing_json, sets, 3);
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
    plan *p = new_plan();
    p->compute_first = true;
    p->notify_down = true;
    p->repeat = true;
    p->admit_on_up = true;
    add_group(p, T_BARRIER, (const uint32_t[]){ 0, 1, 2, 3 }, 4);
    const char *sets[] = { "stragglers=[{\"kind\": \"failure\", \"workers\": [3], \"at_s\": 0.005,"
                           " \"recover_s\": 0.006}, {\"kind\": \"failure\", \"workers\": [3],"
                           " \"at_s\": 0.008}]",
                           "stop.time_s=0.025", "stop.iterations=1000" };
    run(timing_json, sets, 3);
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
    plan *p = new_plan();
    p->compute_first = true;
    p->notify_down = true;
    p->restart_on_up = true;
    add_group(p, T_BARRIER, (const uint32_t[]){ 0, 1, 2, 3 }, 4);
    const char *sets[] = { "stragglers=[{\"kind\": \"fixed\", \"workers\": [0], \"slowdown\": 5},"
                           " {\"kind\": \"failure\", \"workers\": [3], \"at_s\": 0.005,"
                           " \"recover_s\": 0.05005}]",
                           "stop.iterations=4" };
    run(timing_json, sets, 2);
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
    plan *p = new_plan();
    set_init(p);
    add_group(p, T_BFLY, (const uint32_t[]){ 0, 2 }, 2);
    add_group(p, T_BFLY, (const uint32_t[]){ 1, 3 }, 2);
    add_group(p, T_RING, (const uint32_t[]){ 4, 5 }, 2);
    const char *sets[] = { "workers=6", "stop.iterations=6" };
    run(tensor_json, sets, 2);
    for (uint32_t e = 0; e < 6; e++) {
        same_bits(p->out[0][e], (init4[0][e] + init4[2][e]) / 2);
        same_bits(p->out[1][e], (init4[1][e] + init4[3][e]) / 2);
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
    *ring = coll_ring_create(a, *hub, A_WORKERS, A_CAP, t_done, NULL);
    *mean = coll_mean_create(a, A_FLOATS, A_CAP);
    *barrier = coll_barrier_create(a, *hub, A_WORKERS, A_CAP, t_done, NULL);
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
    want += line(1, sizeof(coll_ring)) + line(c, sizeof(coll_ring_pos)) + 3 * line(c, 4) +
            line(w, 4) + line(w, 1); /* m; order, scratch, failed; pos; joined */
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
        ck_assert_uint_eq(ring->pos[v], COLL_NONE);
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
    ck_assert_ptr_nonnull(coll_ring_create(a, hub, A_WORKERS, A_CAP, t_done, NULL));
    ck_assert_int_eq(coll_hub_check(hub, &err), SIM_OK);
    ck_assert_ptr_null(coll_barrier_create(a, hub, A_WORKERS, A_CAP, t_done, NULL));
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
    Suite *s = suite_create("coll");
    TCase *tc = tcase_create("ring");
    tcase_add_test(tc, ring_over_a_subset_matches_the_alpha_beta_formula);
    tcase_add_test(tc, two_disjoint_rings_take_the_time_of_one);
    tcase_add_test(tc, ring_told_of_a_failure_restarts_over_the_survivors_and_lists_it);
    tcase_add_test(tc, ring_that_ends_rounds_on_a_failure_tells_the_survivors_it_was_abandoned);
    tcase_add_test(tc,
                   ring_that_ends_rounds_on_a_failure_tells_the_survivors_a_member_completed_it);
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
    suite_add_tcase(s, tc);
    tc = tcase_create("barrier and channels");
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
