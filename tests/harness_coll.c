/* Shared helpers of the coll suites (tests/harness_coll.h). */
#include "harness_coll.h"

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

static plan *P;

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

int hcoll_t_done(void *ud, sim_ctx *ctx, uint32_t w, const coll_info *info, sim_err *err)
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
            st->ring[g] = coll_ring_create(a, st->hub, st->n, P->g[g].n, hcoll_t_done, st);
        else if (P->g[g].kind == T_BARRIER)
            st->barrier[g] = coll_barrier_create(a, st->hub, st->n, P->g[g].n, hcoll_t_done, st);
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
                                           t_output, hcoll_t_done, st, err);
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

sim_run_summary hcoll_run(const char *json, const char *const *sets, size_t nsets)
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

plan *hcoll_new_plan(void)
{
    P = calloc(1, sizeof(*P));
    ck_assert_ptr_nonnull(P);
    return P;
}

void hcoll_add_group(plan *p, tkind kind, const uint32_t *members, uint32_t n)
{
    tgroup *g = &p->g[p->ngroups++];
    g->kind = kind;
    g->n = n;
    memcpy(g->members, members, n * sizeof(*members));
}

const char hcoll_timing_json[] = "tests/scenarios/coll/timing.json";

const char hcoll_tensor_json[] = "tests/scenarios/coll/tensor.json";

void hcoll_same_bits(float a, float b)
{
    ck_assert_mem_eq(&a, &b, sizeof(a));
}

const float hcoll_init4[4][6] = {
    { 1.5f, -2.25f, 3.0f, 0.125f, 7.0f, -1.0f },
    { 2.5f, 0.25f, -6.0f, 0.375f, 1.0f, 4.0f },
    { -0.5f, 5.0f, 1.5f, 1.0f, 2.5f, 0.5f },
    { 4.5f, -3.0f, 0.5f, 2.5f, -8.5f, 0.5f },
};

void hcoll_set_init(plan *p)
{
    p->set_init = true;
    memcpy(p->init, hcoll_init4, sizeof(hcoll_init4));
    for (uint32_t w = 0; w < 4; w++)
        memcpy(p->init[w], hcoll_init4[w], sizeof(hcoll_init4[w]));
}
