/* The kit's rejoin service admitting recovered workers for an owner's group (kit/rejoin.h:
 * rejoin_owner, rejoin_up, rejoin_down, rejoin_admit), driven by a test-only protocol: who
 * waits, who starts alone, who is admitted, in which order, with whose model or the state the
 * owner chooses, and an admission whose sender fails before the model lands (sent again by
 * another running peer, or undone). Serving fetches is tests/test_rejoin.c's. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "harness.h"
#include "kit/msg.h"
#include "kit/rejoin.h"
#include "runtime/proto.h"
#include "runtime/run.h"
#include "scenario/scenario.h"

/* ---- A test-only protocol: recovered workers admitted through the service ---- */

enum {
    MAXW = 8,
    MAXP = 8,
    T_KIND = 6, /* the admitted's model: the owner's kind and tag */
    T_SEQ = 7
};

/* What a test asks for and what the protocol saw; tests run in forked processes, so the
 * protocol reaches it through one pointer set by the test. */
typedef struct plan {
    uint64_t iter[MAXW];    /* each worker's progress, as the owner reads it */
    bool admit_on_up[MAXW]; /* after its recovery, the waiting are admitted */
    bool use_state;         /* the state sent: `block` (rejoin_hold_state), not a peer's model */
    bool own_view;          /* no progress, admit or requeue: the service's view of who runs */
    float block[MAXP];
    /* seen */
    bool running[MAXW];   /* the owner's: runs (up from the start, started alone, admitted) */
    uint32_t alone[MAXW]; /* `alone` callbacks */
    uint32_t order[MAXW]; /* the admitted, in the order of the `admit` callbacks */
    uint32_t nadmit;
    uint32_t peer[MAXW];         /* the peer whose model each admitted was sent */
    uint32_t last_n;             /* rejoin_admit's count, the last time */
    uint32_t adopted_from[MAXW]; /* 1 + the sender of the model adopted, 0: none */
    float out[MAXW][MAXP];       /* parameters once the model was adopted */
    uint32_t requeued[MAXW];     /* `requeue` callbacks */
    uint64_t admitted;           /* rejoin_admitted at the end */
} plan;

static plan *P;

typedef struct tproto {
    rejoin *rj;
    uint32_t n; /* workers */
} tproto;

static bool a_progress(sim_ctx *ctx, uint32_t j, uint64_t *k)
{
    *k = P->iter[j];
    return P->running[j] && !sim_ctx_down(ctx, j);
}

static int a_alone(void *owner, sim_ctx *ctx, uint32_t w, sim_err *err)
{
    (void)owner;
    (void)ctx;
    (void)err;
    P->running[w] = true;
    P->alone[w]++;
    return SIM_OK;
}

static int a_admit(void *owner, sim_ctx *ctx, uint32_t w, uint32_t peer, sim_err *err)
{
    (void)owner;
    (void)ctx;
    (void)err;
    P->running[w] = true;
    P->order[P->nadmit++] = w;
    P->peer[w] = peer;
    return SIM_OK;
}

static int a_requeue(void *owner, sim_ctx *ctx, uint32_t w, sim_err *err)
{
    (void)owner;
    (void)ctx;
    (void)err;
    P->running[w] = false; /* waits again */
    P->requeued[w]++;
    return SIM_OK;
}

static const rejoin_ops a_ops = {
    .name = "admittest",
    .progress = a_progress,
    .alone = a_alone,
    .admit = a_admit,
    .requeue = a_requeue,
};

/* The owner that keeps no view of its own: who runs is the service's (up, not waiting). */
static const rejoin_ops a_own_ops = {
    .name = "admittest",
    .alone = a_alone,
};

/* Nothing to configure but the workers' count. */
static int a_configure(void *state, sim_cfg *cfg, const proto_setup *setup, sim_err *err)
{
    tproto *st = state;
    st->n = setup->workers;
    (void)cfg;
    (void)err;
    return SIM_OK;
}

/* The service, in the run's arena, serving no graph. */
static void a_buffers(void *state, sim_arena *a, size_t num_params)
{
    (void)num_params;
    tproto *st = state;
    st->rj = rejoin_create(a, st->n, NULL);
}

static int a_start(void *state, sim_ctx *ctx, sim_err *err)
{
    (void)err;
    tproto *st = state;
    uint32_t n = sim_ctx_workers(ctx);
    for (uint32_t w = 0; w < n; w++)
        P->running[w] = !sim_ctx_down(ctx, w);
    rejoin_owner(st->rj, P->own_view ? &a_own_ops : &a_ops, st);
    return SIM_OK;
}

/* A recovery with admit_on_up: the waiting are admitted with the lowest running worker's model. */
static int a_admit_all(tproto *st, sim_ctx *ctx, sim_err *err)
{
    uint64_t k;
    for (uint32_t p = 0; p < sim_ctx_workers(ctx); p++) {
        if (!a_progress(ctx, p, &k))
            continue;
        msg_hdr h = { .channel = 0, .kind = T_KIND, .seq = T_SEQ };
        int rc = P->use_state
                     ? rejoin_hold_state(st->rj, ctx, P->block, sim_ctx_num_params(ctx), err)
                     : SIM_OK;
        return rc != SIM_OK ? rc : rejoin_admit(st->rj, ctx, p, h, &P->last_n, err);
    }
    return SIM_OK;
}

static int a_on_event(void *state, sim_ctx *ctx, const sim_event *ev, sim_err *err)
{
    tproto *st = state;
    uint32_t w = (uint32_t)ev->dst;
    int rc;
    switch (ev->kind) {
    case SIM_EV_MSG:
        if (rejoin_adopt(st->rj, ctx, w, (uint32_t)ev->src))
            P->adopted_from[w] = (uint32_t)ev->src + 1;
        if (P->adopted_from[w] != 0 && sim_ctx_num_params(ctx) > 0)
            memcpy(P->out[w], sim_ctx_params(ctx, w), sim_ctx_num_params(ctx) * sizeof(float));
        return SIM_OK;
    case SIM_EV_WORKER_DOWN:
        P->running[w] = false;
        return rejoin_down(st->rj, ctx, w, err);
    case SIM_EV_WORKER_UP:
        rc = rejoin_up(st->rj, ctx, w, err);
        return rc == SIM_OK && P->admit_on_up[w] ? a_admit_all(st, ctx, err) : rc;
    default:
        return sim_err_set(err, SIM_EINVAL, NULL, "admittest: unexpected event %u", ev->kind);
    }
}

static void a_fini(void *state)
{
    tproto *st = state;
    if (st->rj != NULL)
        P->admitted = rejoin_admitted(st->rj);
}

static const proto_ops proto_admittest = {
    .name = "admittest",
    .summary = "test-only: recovered workers are admitted through the kit's rejoin service",
    .state_size = sizeof(tproto),
    .configure = a_configure,
    .start = a_start,
    .on_event = a_on_event,
    .buffers = a_buffers,
    .fini = a_fini,
};

/* Runs `file` with the test protocol and the failures `stragglers` (harness_run_ops). */
static int run(const char *file, const char *stragglers, char *msg)
{
    return harness_run_ops(file, &proto_admittest, stragglers, msg);
}

static plan *new_plan(void)
{
    P = calloc(1, sizeof(*P));
    ck_assert_ptr_nonnull(P);
    return P;
}

/* Timing only, 8 workers on a star: B = 10 Gbit/s, L = 50 us; a model is 30 MB, so it takes
 * 24.1 ms on the wire. */
static const char timing_json[] = "tests/scenarios/coll/timing.json";

/* A real model of 6 floats (softmax, 2 features, 2 classes), 4 workers. */
static const char tensor_json[] = "tests/scenarios/coll/tensor.json";

START_TEST(admit_takes_every_waiting_worker_in_id_order_with_the_peers_model)
{
    /* Workers 2, 3, 5 and 6 fail at 1 ms while the others run; 5 recovers at 2 ms, 2 at 2.5 ms
     * (and fails again at 3.5 ms), 3 at 3 ms: they wait. 6 recovers at 4 ms and the owner
     * admits the waiting with worker 0's model: 3, 5 and 6, in id order, not 2. */
    plan *p = new_plan();
    p->admit_on_up[6] = true;
    char msg[256];
    ck_assert_int_eq(
        run(timing_json,
            "[{\"kind\": \"failure\", \"workers\": [5], \"at_s\": 0.001, \"recover_s\": 0.002},"
            " {\"kind\": \"failure\", \"workers\": [2], \"at_s\": 0.001, \"recover_s\": 0.0025},"
            " {\"kind\": \"failure\", \"workers\": [3], \"at_s\": 0.001, \"recover_s\": 0.003},"
            " {\"kind\": \"failure\", \"workers\": [6], \"at_s\": 0.001, \"recover_s\": 0.004},"
            " {\"kind\": \"failure\", \"workers\": [2], \"at_s\": 0.0035}]",
            msg),
        0);
    ck_assert_uint_eq(p->nadmit, 3);
    ck_assert_uint_eq(p->last_n, 3);
    ck_assert_uint_eq(p->order[0], 3);
    ck_assert_uint_eq(p->order[1], 5);
    ck_assert_uint_eq(p->order[2], 6);
    for (uint32_t w = 3; w <= 6; w += w == 3 ? 2 : 1) {
        ck_assert_uint_eq(p->peer[w], 0);
        ck_assert_uint_eq(p->adopted_from[w], 1); /* worker 0's model landed and was adopted */
    }
    ck_assert_uint_eq(p->adopted_from[2], 0);
    ck_assert_uint_eq(p->admitted, 3);
    for (uint32_t w = 0; w < 8; w++)
        ck_assert_uint_eq(p->alone[w], 0);
    free(p);
}
END_TEST

START_TEST(with_nobody_running_the_recovered_or_first_waiting_worker_starts_alone)
{
    /* Everybody fails at 1 ms. 2 recovers at 2 ms: nobody runs, it starts alone. 6 and 4
     * recover at 3 and 3.5 ms: 2 runs, they wait. 2 fails at 4 ms: 4, the first waiting,
     * starts alone; 4 fails at 5 ms: 6 does; 6 fails at 6 ms: nobody waits any more. */
    plan *p = new_plan();
    char msg[256];
    ck_assert_int_eq(
        run(timing_json,
            "[{\"kind\": \"failure\", \"workers\": [0, 1, 3, 5, 7], \"at_s\": 0.001},"
            " {\"kind\": \"failure\", \"workers\": [2], \"at_s\": 0.001, \"recover_s\": 0.002},"
            " {\"kind\": \"failure\", \"workers\": [6], \"at_s\": 0.001, \"recover_s\": 0.003},"
            " {\"kind\": \"failure\", \"workers\": [4], \"at_s\": 0.001, \"recover_s\": 0.0035},"
            " {\"kind\": \"failure\", \"workers\": [2], \"at_s\": 0.004},"
            " {\"kind\": \"failure\", \"workers\": [4], \"at_s\": 0.005},"
            " {\"kind\": \"failure\", \"workers\": [6], \"at_s\": 0.006}]",
            msg),
        0);
    for (uint32_t w = 0; w < 8; w++)
        ck_assert_uint_eq(p->alone[w], w == 2 || w == 4 || w == 6 ? 1 : 0);
    ck_assert_uint_eq(p->nadmit, 0);
    ck_assert_uint_eq(p->admitted, 3); /* starting alone counts */
    free(p);
}
END_TEST

START_TEST(an_admitted_workers_model_is_sent_again_by_another_running_peer_if_its_sender_fails)
{
    /* 5 and 6 fail at 1 ms; 5 recovers at 2 ms and waits, 6 at 4 ms and both are admitted with
     * worker 0's model (24.1 ms on the wire). 0 fails at 10 ms: the running peer furthest ahead
     * that waits for no model sends both theirs again: 3 (iteration 5; 5, at 9, waits for one;
     * 4 is at 5 too but comes later). Before issue 38 the models were lost with 0. */
    plan *p = new_plan();
    uint64_t iter[8] = { 7, 2, 1, 5, 5, 9, 0, 3 };
    memcpy(p->iter, iter, sizeof(iter));
    p->admit_on_up[6] = true;
    char msg[256];
    ck_assert_int_eq(
        run(timing_json,
            "[{\"kind\": \"failure\", \"workers\": [5], \"at_s\": 0.001, \"recover_s\": 0.002},"
            " {\"kind\": \"failure\", \"workers\": [6], \"at_s\": 0.001, \"recover_s\": 0.004},"
            " {\"kind\": \"failure\", \"workers\": [0], \"at_s\": 0.010}]",
            msg),
        0);
    ck_assert_uint_eq(p->nadmit, 2);
    ck_assert_uint_eq(p->peer[5], 0);
    ck_assert_uint_eq(p->peer[6], 0);
    ck_assert_uint_eq(p->adopted_from[5], 4); /* from worker 3 */
    ck_assert_uint_eq(p->adopted_from[6], 4);
    ck_assert_uint_eq(p->admitted, 2);
    for (uint32_t w = 0; w < 8; w++)
        ck_assert_uint_eq(p->alone[w] + p->requeued[w], 0);
    free(p);
}
END_TEST

/* The undone admission of the next two tests: 1, 2, 3, 4 and 7 fail for good at 1 ms, 5 and 6
 * fail then and recover at 2 and 4 ms (6 is admitted on its recovery), 0 fails at 10 ms, with
 * nobody running to send 5 and 6 their models; own_view: the owner keeps no view. Returns the
 * plan of a run that succeeded, after checking what both tests see: 5 and 6 wait again, adopt
 * nothing, and 5, the first waiting, starts alone (counted as admitted). */
static plan *admission_undone(bool own_view)
{
    plan *p = new_plan();
    p->admit_on_up[6] = true;
    p->own_view = own_view;
    char msg[256];
    ck_assert_int_eq(
        run(timing_json,
            "[{\"kind\": \"failure\", \"workers\": [1, 2, 3, 4, 7], \"at_s\": 0.001},"
            " {\"kind\": \"failure\", \"workers\": [5], \"at_s\": 0.001, \"recover_s\": 0.002},"
            " {\"kind\": \"failure\", \"workers\": [6], \"at_s\": 0.001, \"recover_s\": 0.004},"
            " {\"kind\": \"failure\", \"workers\": [0], \"at_s\": 0.010}]",
            msg),
        0);
    ck_assert_uint_eq(p->alone[5], 1);
    ck_assert_uint_eq(p->alone[6], 0);
    ck_assert_uint_eq(p->adopted_from[5] + p->adopted_from[6], 0);
    ck_assert_uint_eq(p->admitted, 1); /* 5 starting alone */
    return p;
}

START_TEST(an_admission_whose_sender_fails_with_nobody_running_is_undone)
{
    /* As above, but 1, 3, 4 and 7 are down for good from 1 ms: when 0 fails at 10 ms nobody
     * runs to send 5 and 6 their models. Both wait again (requeue, in id order; no longer
     * counted as admitted) and 5, the first waiting, starts alone. */
    plan *p = admission_undone(false);
    ck_assert_uint_eq(p->nadmit, 2);
    ck_assert_uint_eq(p->requeued[5], 1);
    ck_assert_uint_eq(p->requeued[6], 1);
    free(p);
}
END_TEST

START_TEST(without_a_progress_callback_the_service_s_view_decides_and_undoes_admissions)
{
    /* The undone admission above with an owner that keeps no view (no progress, admit or
     * requeue): 0 runs, 5 and 6 wait, are admitted at 4 ms with 0's model; 0 fails at 10 ms with
     * nobody else up: both wait again, by the service alone, and 5 starts alone. Before, 5 and
     * 6, up and no longer waiting, counted as running: nobody would have started. */
    plan *p = admission_undone(true);
    ck_assert_uint_eq(p->last_n, 2);
    ck_assert_uint_eq(p->nadmit + p->requeued[5] + p->requeued[6], 0); /* no callbacks */
    free(p);
}
END_TEST

START_TEST(an_admitted_worker_is_sent_the_state_its_owner_chooses)
{
    /* Worker 3 is admitted at 2 ms with worker 0's header, but the state sent is the owner's
     * (a copy of a block of its own), not worker 0's parameters. */
    plan *p = new_plan();
    p->admit_on_up[3] = true;
    p->use_state = true;
    const float block[6] = { 2.385f, -0.917f, 13.06f, 0.0042f, -7.5f, 1e-3f };
    memcpy(p->block, block, sizeof(block));
    char msg[256];
    ck_assert_int_eq(
        run(tensor_json,
            "[{\"kind\": \"failure\", \"workers\": [3], \"at_s\": 0.001, \"recover_s\": 0.002}]",
            msg),
        0);
    ck_assert_uint_eq(p->adopted_from[3], 1);
    ck_assert_mem_eq(p->out[3], block, sizeof(block));
    free(p);
}
END_TEST

Suite *test_suite(void)
{
    Suite *s = suite_create("rejoin_admit");
    TCase *tc = tcase_create("admit");
    tcase_add_test(tc, admit_takes_every_waiting_worker_in_id_order_with_the_peers_model);
    tcase_add_test(tc, with_nobody_running_the_recovered_or_first_waiting_worker_starts_alone);
    tcase_add_test(tc,
                   without_a_progress_callback_the_service_s_view_decides_and_undoes_admissions);
    suite_add_tcase(s, tc);
    tc = tcase_create("sender_fails");
    tcase_add_test(
        tc, an_admitted_workers_model_is_sent_again_by_another_running_peer_if_its_sender_fails);
    tcase_add_test(tc, an_admission_whose_sender_fails_with_nobody_running_is_undone);
    suite_add_tcase(s, tc);
    tc = tcase_create("state");
    tcase_add_test(tc, an_admitted_worker_is_sent_the_state_its_owner_chooses);
    suite_add_tcase(s, tc);
    return s;
}
