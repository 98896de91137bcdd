/* The kit's rejoin service serving fetches (kit/rejoin.h: rejoin_serve and the calls
 * after it), driven by a test-only protocol on a ring: whom a recovered worker asks, the model
 * it adopts, a source that fails while asked, nobody to ask, both fetch modes, the neighbours
 * told of a failure, a request that cannot be answered; and rejoin_reopen. Admitting is
 * tests/test_rejoin_admit.c's. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "harness.h"
#include "kit/graph.h"
#include "kit/msg.h"
#include "kit/rejoin.h"
#include "runtime/proto.h"
#include "runtime/run.h"
#include "scenario/scenario.h"

/* ---- A test-only protocol: a ring whose recovered workers fetch through the service ---- */

enum {
    MAXW = 8,
    MAXP = 8,
    T_ASK = 5, /* the owner's kinds, as a protocol's own */
    T_REPLY = 6,
    T_SEQ = 7 /* every request's tag */
};

/* What a test asks for and what the protocol saw; tests run in forked processes, so the
 * protocol reaches it through one pointer set by the test. */
typedef struct plan {
    rejoin_mode mode;
    uint64_t iter[MAXW]; /* each worker's progress, as the owner reads it */
    bool refuse[MAXW];   /* the worker cannot answer a request */
    bool set_init;
    float init[MAXW][MAXP]; /* initial parameters (the tensor scenario) */
    /* seen */
    bool fetching[MAXW];          /* recovered, its fetch not over */
    uint32_t answered[MAXW];      /* requests the worker answered */
    uint32_t fetched[MAXW];       /* `fetched` callbacks */
    uint32_t alone[MAXW];         /* `alone` callbacks */
    uint32_t nanswers[MAXW];      /* REJOIN_EACH answers taken */
    uint32_t answers[MAXW][MAXW]; /* the answering peers, in order */
    uint64_t answer_seq[MAXW];    /* the last answer's tag */
    uint32_t notices[MAXW];       /* told that a neighbour failed */
    uint32_t notice_slot[MAXW];   /* the last such neighbour, by its in-slot */
    bool ran[MAXW];               /* the last notice's `ran` */
    sim_time fetched_ns[MAXW];
    float out[MAXW][MAXP]; /* parameters when the fetch was over */
    uint64_t adopted;      /* rejoin_fetched at the end */
} plan;

static plan *P;

typedef struct tproto {
    graph_spec spec; /* a ring over the workers */
    graph g;
    rejoin *rj;
} tproto;

static bool t_progress(sim_ctx *ctx, uint32_t j, uint64_t *k)
{
    *k = P->iter[j];
    return !sim_ctx_down(ctx, j) && !P->fetching[j];
}

static bool t_reply(sim_ctx *ctx, uint32_t p, msg_hdr *h)
{
    (void)ctx;
    *h = (msg_hdr){ .channel = 0, .kind = T_REPLY, .seq = P->iter[p] };
    P->answered[p] += P->refuse[p] ? 0 : 1;
    return !P->refuse[p];
}

static void t_answer(void *owner, sim_ctx *ctx, uint32_t w, uint32_t slot, msg_hdr h)
{
    tproto *st = owner;
    (void)ctx;
    P->answers[w][P->nanswers[w]++] = st->g.in_adj[slot];
    P->answer_seq[w] = h.seq;
}

static int t_fetched(void *owner, sim_ctx *ctx, uint32_t w, sim_err *err)
{
    (void)owner;
    (void)err;
    P->fetching[w] = false;
    P->fetched[w]++;
    P->fetched_ns[w] = sim_ctx_now(ctx);
    size_t np = sim_ctx_num_params(ctx);
    if (np > 0)
        memcpy(P->out[w], sim_ctx_params(ctx, w), (np < MAXP ? np : MAXP) * sizeof(float));
    return SIM_OK;
}

static int t_alone(void *owner, sim_ctx *ctx, uint32_t w, sim_err *err)
{
    (void)owner;
    (void)ctx;
    (void)err;
    P->fetching[w] = false;
    P->alone[w]++;
    return SIM_OK;
}

static int t_notice(void *owner, sim_ctx *ctx, uint32_t w, uint32_t slot, bool ran, sim_err *err)
{
    (void)owner;
    (void)ctx;
    (void)err;
    P->notices[w]++;
    P->notice_slot[w] = slot;
    P->ran[w] = ran;
    return SIM_OK;
}

static const rejoin_ops t_ops[2] = {
    [REJOIN_AHEAD] = { .name = "rejointest",
                       .mode = REJOIN_AHEAD,
                       .ask = T_ASK,
                       .ask_bytes = 0,
                       .progress = t_progress,
                       .reply = t_reply,
                       .fetched = t_fetched,
                       .alone = t_alone,
                       .notice = t_notice },
    [REJOIN_EACH] = { .name = "rejointest",
                      .mode = REJOIN_EACH,
                      .ask = T_ASK,
                      .ask_bytes = 64,
                      .reply = t_reply,
                      .answer = t_answer,
                      .fetched = t_fetched,
                      .alone = t_alone,
                      .notice = t_notice },
};

static int t_configure(void *state, sim_cfg *cfg, const proto_setup *setup, sim_err *err)
{
    (void)cfg;
    (void)err;
    tproto *st = state;
    st->spec = (graph_spec){ .kind = GRAPH_RING, .n = setup->workers };
    return SIM_OK;
}

/* The ring and the service serving it, in the run's arena. */
static void t_buffers(void *state, sim_arena *a, size_t num_params)
{
    (void)num_params;
    tproto *st = state;
    graph_reserve(&st->g, a, &st->spec);
    st->rj = rejoin_create(a, st->spec.n, &st->spec);
}

static int t_start(void *state, sim_ctx *ctx, sim_err *err)
{
    tproto *st = state;
    uint32_t n = sim_ctx_workers(ctx);
    int rc = graph_build(&st->g, &st->spec, NULL, err);
    if (rc != SIM_OK)
        return rc;
    rc = rejoin_serve(st->rj, &t_ops[P->mode], &st->g, st, err);
    size_t np = sim_ctx_num_params(ctx);
    for (uint32_t w = 0; w < n && w < MAXW && P->set_init; w++)
        memcpy(sim_ctx_params(ctx, w), P->init[w], (np < MAXP ? np : MAXP) * sizeof(float));
    return rc;
}

static int t_on_event(void *state, sim_ctx *ctx, const sim_event *ev, sim_err *err)
{
    tproto *st = state;
    uint32_t w = (uint32_t)ev->dst;
    switch (ev->kind) {
    case SIM_EV_MSG:
        if (msg_read(ev).kind == T_ASK)
            return rejoin_on_ask(st->rj, ctx, ev, err);
        return rejoin_on_answer(st->rj, ctx, ev, err);
    case SIM_EV_WORKER_DOWN:
        P->fetching[w] = false;
        return rejoin_worker_failed(st->rj, ctx, w, err);
    case SIM_EV_WORKER_UP:
        P->fetching[w] = true;
        return rejoin_fetch(st->rj, ctx, w, T_SEQ, err);
    default:
        return sim_err_set(err, SIM_EINVAL, NULL, "rejointest: unexpected event %u", ev->kind);
    }
}

static void t_fini(void *state)
{
    tproto *st = state;
    if (st->rj != NULL)
        P->adopted = rejoin_fetched(st->rj);
}

static const proto_ops proto_rejointest = {
    .name = "rejointest",
    .summary = "test-only: recovered workers fetch through the kit's rejoin service",
    .state_size = sizeof(tproto),
    .configure = t_configure,
    .start = t_start,
    .on_event = t_on_event,
    .buffers = t_buffers,
    .fini = t_fini,
};

/* Runs `file` with the test protocol and the failures `stragglers` (harness_run_ops). */
static int run(const char *file, const char *stragglers, char *msg)
{
    return harness_run_ops(file, &proto_rejointest, stragglers, msg);
}

static plan *new_plan(rejoin_mode mode)
{
    P = calloc(1, sizeof(*P));
    ck_assert_ptr_nonnull(P);
    P->mode = mode;
    return P;
}

/* Timing only, 8 workers on a star: B = 10 Gbit/s, L = 50 us; a model is 30 MB, so an answer
 * takes 24.1 ms and a request 0.1 ms. */
static const char timing_json[] = "tests/scenarios/coll/timing.json";

/* A real model of 6 floats (softmax, 2 features, 2 classes), 4 workers. */
static const char tensor_json[] = "tests/scenarios/coll/tensor.json";

/* ---- REJOIN_AHEAD ---- */

START_TEST(ahead_asks_the_running_neighbour_furthest_ahead_and_adopts_its_model)
{
    /* Ring of 4: worker 1's neighbours are 0 (iteration 5) and 2 (9): it asks 2 and ends with
     * 2's parameters; 0 and 2 are told of its failure, which it ran into. */
    plan *p = new_plan(REJOIN_AHEAD);
    uint64_t iter[4] = { 5, 0, 9, 3 };
    memcpy(p->iter, iter, sizeof(iter));
    p->set_init = true;
    for (uint32_t w = 0; w < 4; w++)
        for (uint32_t i = 0; i < 6; i++)
            p->init[w][i] = (float)(10 * w + i);
    char msg[256];
    ck_assert_int_eq(
        run(tensor_json,
            "[{\"kind\": \"failure\", \"workers\": [1], \"at_s\": 0.001, \"recover_s\": 0.002}]",
            msg),
        0);
    ck_assert_uint_eq(p->answered[2], 1);
    ck_assert_uint_eq(p->answered[0], 0);
    ck_assert_uint_eq(p->fetched[1], 1);
    ck_assert_uint_eq(p->alone[1], 0);
    ck_assert_uint_eq(p->adopted, 1);
    for (uint32_t i = 0; i < 6; i++)
        ck_assert_mem_eq(&p->out[1][i], &p->init[2][i], sizeof(float));
    ck_assert_uint_eq(p->notices[0], 1);
    ck_assert_uint_eq(p->notices[2], 1);
    ck_assert_uint_eq(p->notices[3], 0);
    ck_assert(p->ran[0] && p->ran[2]);
    free(p);
}
END_TEST

/* The next two tests' runs: worker 3 (neighbours 2 at iteration 20 and 4 at 40, REJOIN_AHEAD)
 * fails at 1 ms and recovers at 2 ms, 4 fails at 5 ms, then the failures `more` (straggler
 * objects, each after a comma). Returns the plan of a run that succeeded. */
static plan *ahead_with_4_failing(const char *more)
{
    plan *p = new_plan(REJOIN_AHEAD);
    p->iter[2] = 20;
    p->iter[4] = 40;
    char stragglers[512], msg[256];
    snprintf(stragglers, sizeof(stragglers),
             "[{\"kind\": \"failure\", \"workers\": [3], \"at_s\": 0.001, \"recover_s\": 0.002},"
             " {\"kind\": \"failure\", \"workers\": [4], \"at_s\": 0.005}%s]",
             more);
    ck_assert_msg(run(timing_json, stragglers, msg) == 0, "%s", msg);
    return p;
}

START_TEST(ahead_asks_the_next_neighbour_when_its_source_fails_while_asked)
{
    /* Worker 3 (neighbours 2 at 20 and 4 at 40) recovers at 2 ms and asks 4, which fails at
     * 5 ms before its answer lands: 3 asks 2, whose answer lands 24.1 ms later. */
    plan *p = ahead_with_4_failing("");
    ck_assert_uint_eq(p->answered[4], 1);
    ck_assert_uint_eq(p->answered[2], 1);
    ck_assert_uint_eq(p->fetched[3], 1);
    ck_assert_uint_eq(p->alone[3], 0);
    ck_assert_int_ge(p->fetched_ns[3], 29000000);
    ck_assert_uint_eq(p->notices[3], 1); /* told of 4, and 3 was fetching when 4 failed */
    free(p);
}
END_TEST

START_TEST(ahead_runs_alone_when_nobody_is_left_to_ask)
{
    /* As above, and 2 fails too at 8 ms: 3 has nobody to ask and runs alone. Worker 5
     * recovers at 9 ms with 4 down and asks 6, then fails at 10 ms while fetching: 6 is told
     * that 5 did not run. */
    plan *p = ahead_with_4_failing(
        ", {\"kind\": \"failure\", \"workers\": [2], \"at_s\": 0.008},"
        " {\"kind\": \"failure\", \"workers\": [5], \"at_s\": 0.0085, \"recover_s\": 0.009},"
        " {\"kind\": \"failure\", \"workers\": [5], \"at_s\": 0.010}");
    ck_assert_uint_eq(p->fetched[3], 0);
    ck_assert_uint_eq(p->alone[3], 1);
    ck_assert_uint_eq(p->answered[6], 1);
    ck_assert_uint_eq(p->fetched[5], 0);
    ck_assert_uint_eq(p->notices[6], 2);
    ck_assert(!p->ran[6]); /* 5 was fetching when it failed the second time */
    ck_assert_uint_eq(p->adopted, 0);
    free(p);
}
END_TEST

START_TEST(a_request_that_cannot_be_answered_is_a_protocol_error)
{
    plan *p = new_plan(REJOIN_AHEAD);
    p->iter[2] = 9;
    p->refuse[2] = true;
    char msg[256];
    ck_assert_int_ne(
        run(timing_json,
            "[{\"kind\": \"failure\", \"workers\": [1], \"at_s\": 0.001, \"recover_s\": 0.002}]",
            msg),
        0);
    ck_assert_str_eq(msg, "rejointest: worker 2 got an unexpected request from 1 (tag 7)");
    free(p);
}
END_TEST

/* ---- REJOIN_EACH ---- */

START_TEST(each_asks_every_up_in_neighbour_and_is_over_after_the_last_answer)
{
    plan *p = new_plan(REJOIN_EACH);
    p->iter[2] = 20;
    p->iter[4] = 40;
    char msg[256];
    ck_assert_int_eq(
        run(timing_json,
            "[{\"kind\": \"failure\", \"workers\": [3], \"at_s\": 0.001, \"recover_s\": 0.002}]",
            msg),
        0);
    ck_assert_uint_eq(p->answered[2], 1);
    ck_assert_uint_eq(p->answered[4], 1);
    ck_assert_uint_eq(p->nanswers[3], 2);
    ck_assert_uint_ne(p->answers[3][0], p->answers[3][1]);
    ck_assert(p->answers[3][0] == 2 || p->answers[3][0] == 4);
    ck_assert(p->answers[3][1] == 2 || p->answers[3][1] == 4);
    ck_assert_uint_eq(p->fetched[3], 1);
    ck_assert_uint_eq(p->alone[3], 0);
    ck_assert_int_ge(p->fetched_ns[3], 48000000); /* both answers share 3's link */
    ck_assert_uint_eq(p->adopted, 0);             /* nothing adopted: the owner took them */
    free(p);
}
END_TEST

START_TEST(each_stops_waiting_for_a_neighbour_that_fails_while_asked)
{
    /* 4 fails at 5 ms: 3 takes 2's answer only. 7 recovers at 20 ms with both its
     * in-neighbours (6 and 0) down: nobody to ask. */
    plan *p = new_plan(REJOIN_EACH);
    p->iter[2] = 20;
    char msg[256];
    ck_assert_int_eq(
        run(timing_json,
            "[{\"kind\": \"failure\", \"workers\": [3], \"at_s\": 0.001, \"recover_s\": 0.002},"
            " {\"kind\": \"failure\", \"workers\": [4], \"at_s\": 0.005},"
            " {\"kind\": \"failure\", \"workers\": [6, 0], \"at_s\": 0.015},"
            " {\"kind\": \"failure\", \"workers\": [7], \"at_s\": 0.016, \"recover_s\": 0.02}]",
            msg),
        0);
    ck_assert_uint_eq(p->nanswers[3], 1);
    ck_assert_uint_eq(p->answers[3][0], 2);
    ck_assert_uint_eq(p->answer_seq[3], 20);
    ck_assert_uint_eq(p->fetched[3], 1);
    ck_assert_uint_eq(p->fetched[7], 0);
    ck_assert_uint_eq(p->alone[7], 1);
    ck_assert_uint_eq(p->nanswers[7], 0);
    free(p);
}
END_TEST

START_TEST(each_is_over_when_its_last_awaited_neighbour_fails)
{
    /* 3 asks 2 and 4; both fail before answering: the fetch is over with no answer. */
    plan *p = new_plan(REJOIN_EACH);
    char msg[256];
    ck_assert_int_eq(
        run(timing_json,
            "[{\"kind\": \"failure\", \"workers\": [3], \"at_s\": 0.001, \"recover_s\": 0.002},"
            " {\"kind\": \"failure\", \"workers\": [4], \"at_s\": 0.005},"
            " {\"kind\": \"failure\", \"workers\": [2], \"at_s\": 0.006}]",
            msg),
        0);
    ck_assert_uint_eq(p->nanswers[3], 0);
    ck_assert_uint_eq(p->fetched[3], 1);
    ck_assert_int_eq(p->fetched_ns[3], 6000000);
    ck_assert_uint_eq(p->alone[3], 0);
    free(p);
}
END_TEST

START_TEST(each_counts_an_answer_once_even_if_its_sender_fails_afterwards)
{
    /* 4's link runs at a tenth: 2's answer lands at about 27 ms, 4's at about 240 ms; 2 fails
     * at 40 ms, after answering: 3 still waits for 4. */
    plan *p = new_plan(REJOIN_EACH);
    char msg[256];
    ck_assert_int_eq(
        run(timing_json,
            "[{\"kind\": \"link\", \"workers\": [4], \"bandwidth_factor\": 0.1},"
            " {\"kind\": \"failure\", \"workers\": [3], \"at_s\": 0.001, \"recover_s\": 0.002},"
            " {\"kind\": \"failure\", \"workers\": [2], \"at_s\": 0.04}]",
            msg),
        0);
    ck_assert_uint_eq(p->nanswers[3], 2);
    ck_assert_uint_eq(p->answers[3][0], 2);
    ck_assert_uint_eq(p->answers[3][1], 4);
    ck_assert_uint_eq(p->fetched[3], 1);
    ck_assert_int_gt(p->fetched_ns[3], 200000000);
    free(p);
}
END_TEST

/* ---- rejoin_reopen ---- */

static bool r_running[6];
static uint64_t r_iter[6];
static uint32_t r_reads;

static bool r_progress(sim_ctx *ctx, uint32_t j, uint64_t *k)
{
    (void)ctx;
    r_reads++;
    *k = r_iter[j];
    return r_running[j];
}

START_TEST(reopen_resumes_one_past_the_neighbour_furthest_ahead_and_sets_both_ends)
{
    /* Ring of 6: worker 0's neighbours are 1 (iteration 4) and 5 (9). */
    graph_spec spec = { .kind = GRAPH_RING, .n = 6 };
    graph g;
    sim_arena *a = harness_graph_arena(&g, &spec);
    sim_err err = { 0 };
    ck_assert_int_eq(graph_build(&g, &spec, NULL, &err), SIM_OK);
    uint64_t act[12] = { 0 };
    uint32_t s1 = graph_slot(&g, 0, 1), s5 = graph_slot(&g, 0, 5);
    uint32_t b1 = graph_slot(&g, 1, 0), b5 = graph_slot(&g, 5, 0);
    r_iter[1] = 4;
    r_iter[5] = 9;
    r_running[1] = r_running[5] = true;
    r_reads = 0;
    ck_assert_uint_eq(rejoin_reopen(&g, NULL, 0, r_progress, 3, act), 10);
    ck_assert_uint_eq(act[s1], 10);
    ck_assert_uint_eq(act[s5], 10);
    ck_assert_uint_eq(act[b1], 5);
    ck_assert_uint_eq(act[b5], 10);
    ck_assert_uint_eq(r_reads, 4); /* each neighbour read twice */
    /* Its own iteration is further: K is its own. */
    ck_assert_uint_eq(rejoin_reopen(&g, NULL, 0, r_progress, 20, act), 20);
    ck_assert_uint_eq(act[s1], 20);
    ck_assert_uint_eq(act[b1], 5);
    /* 5 is down: its end is left as it was. */
    r_running[5] = false;
    act[b5] = 77;
    ck_assert_uint_eq(rejoin_reopen(&g, NULL, 0, r_progress, 3, act), 5);
    ck_assert_uint_eq(act[s5], 5);
    ck_assert_uint_eq(act[b5], 77);
    sim_arena_destroy(a);
}
END_TEST

Suite *test_suite(void)
{
    Suite *s = suite_create("rejoin");
    TCase *tc = tcase_create("ahead");
    tcase_add_test(tc, ahead_asks_the_running_neighbour_furthest_ahead_and_adopts_its_model);
    tcase_add_test(tc, ahead_asks_the_next_neighbour_when_its_source_fails_while_asked);
    tcase_add_test(tc, ahead_runs_alone_when_nobody_is_left_to_ask);
    tcase_add_test(tc, a_request_that_cannot_be_answered_is_a_protocol_error);
    suite_add_tcase(s, tc);
    tc = tcase_create("each");
    tcase_add_test(tc, each_asks_every_up_in_neighbour_and_is_over_after_the_last_answer);
    tcase_add_test(tc, each_stops_waiting_for_a_neighbour_that_fails_while_asked);
    tcase_add_test(tc, each_is_over_when_its_last_awaited_neighbour_fails);
    tcase_add_test(tc, each_counts_an_answer_once_even_if_its_sender_fails_afterwards);
    suite_add_tcase(s, tc);
    tc = tcase_create("reopen");
    tcase_add_test(tc, reopen_resumes_one_past_the_neighbour_furthest_ahead_and_sets_both_ends);
    suite_add_tcase(s, tc);
    return s;
}
