/* All-Reduce SGD over a ring (PROTOCOLS §1.1).
 *
 * Each iteration every live worker computes its gradient, then joins a ring all-reduce of
 * S bytes (protocols/coll.h: 2(N-1) steps of S/N bytes, chunks sent in order), so the
 * collective starts only when the slowest worker is ready: with one flow per link a round
 * takes exactly 2(N-1) * (path latency + (S/N)/B) after the last worker finishes
 * computing. A worker whose round is complete counts an iteration and starts the next.
 *
 * With a real model, the collective's result is the mean of the members' gradients, summed
 * in worker order once per round (so every replica gets the same bits) and applied by each
 * worker when its round completes: replicas that start equal stay bitwise identical.
 *
 * Averaging-only runs (model "vector", PROTOCOLS 1.5): the ring reduces the models instead
 * of the (zero) gradients, and every member takes the mean, unless some member sat the round
 * out (a dropout rule): then nothing changes that round.
 *
 * Failures: the ring is rebuilt over the live workers (a new generation); messages of older
 * generations are ignored, and workers that had finished computing restart the collective
 * of their current round in the new ring. A recovered worker rejoins by computing.
 */
#include <stdlib.h>

#include "protocols/coll.h"
#include "runtime/proto.h"
#include "sim/tensor.h"

typedef struct allreduce {
    coll_hub *hub; /* one channel: the ring's (1) */
    coll_ring *ring;
    uint32_t n;      /* workers */
    coll_mean *mean; /* the round's mean gradient (real models only) */
    /* Averaging-only runs: the models' mean, unless someone sat the round out. */
    uint64_t avg_round;  /* averaging rounds completed (the dropout draws' round) */
    bool decided;        /* whether someone sat out avg_round is known */
    bool any_out;        /* someone did: the round changes nothing */
    uint64_t rounds_out; /* rounds without progress */
} allreduce;

static int ar_configure(void *state, sim_cfg *cfg, const sim_scenario *sc, sim_err *err)
{
    (void)cfg;
    (void)err;
    allreduce *st = state;
    st->n = sc->workers;
    return SIM_OK;
}

static void ar_fini(void *state)
{
    allreduce *st = state;
    coll_ring_destroy(st->ring);
    coll_mean_destroy(st->mean);
    coll_hub_destroy(st->hub);
}

static const float *gradient(void *ud, sim_ctx *ctx, uint32_t w)
{
    (void)ud;
    return sim_ctx_grad(ctx, w);
}

static const float *model(void *ud, sim_ctx *ctx, uint32_t w)
{
    (void)ud;
    return sim_ctx_params_view(ctx, w);
}

/* Averaging only (PROTOCOLS 1.5): every member gets the mean of the models, or, if any
 * member sat the round out, nothing changes. */
static void average(allreduce *st, sim_ctx *ctx, uint32_t w, uint64_t round)
{
    if (!st->decided) {
        st->any_out = false;
        for (uint32_t i = 0; i < coll_ring_size(st->ring);
             i++) /* one draw per member, ring order */
            st->any_out =
                sim_ctx_dropped(ctx, coll_ring_member(st->ring, i), st->avg_round) || st->any_out;
        st->decided = true;
        st->rounds_out += st->any_out ? 1 : 0;
    }
    if (!st->any_out) {
        const float *m = coll_mean_of(st->mean, st->ring, ctx, round, model, st);
        sim_tensor_copy(sim_ctx_params(ctx, w), m, sim_ctx_num_params(ctx));
    }
}

static int on_done(void *ud, sim_ctx *ctx, uint32_t w, const coll_info *info, sim_err *err)
{
    allreduce *st = ud;
    uint64_t round = info->round;
    if (st->mean != NULL && sim_ctx_averaging_only(ctx)) {
        average(st, ctx, w, round);
    } else if (st->mean != NULL) {
        /* One mean per ring generation and round: that pair is the step's key, so the
         * replicas, which share their storage while equal, compute the step once. */
        const float *g = coll_mean_of(st->mean, st->ring, ctx, round, gradient, st);
        uint64_t key = (uint64_t)coll_ring_generation(st->ring) << 40 ^ round;
        sim_ctx_apply_keyed(ctx, w, g, coll_mean_lr(st->mean), sim_ctx_momentum(ctx), key);
    }
    sim_ctx_count(ctx, w, 1);
    if (coll_ring_round_complete(st->ring, round)) {
        st->avg_round++;
        st->decided = false;
        sim_ctx_round_end(ctx);
    }
    return sim_ctx_compute(ctx, w, round + 1, err);
}

static int ar_start(void *state, sim_ctx *ctx, sim_err *err)
{
    allreduce *st = state;
    st->hub = coll_hub_create(1, 0, err);
    if (st->hub == NULL)
        return err->code;
    st->ring = coll_ring_create(st->hub, st->n, st->n, on_done, st, err);
    if (st->ring == NULL)
        return err->code;
    if (sim_ctx_num_params(ctx) > 0 &&
        (st->mean = coll_mean_create(sim_ctx_num_params(ctx), st->n, err)) == NULL)
        return err->code;
    int rc = coll_ring_reset_live(st->ring, ctx, sim_ctx_model_bytes(ctx), err);
    for (uint32_t i = 0; i < coll_ring_size(st->ring) && rc == SIM_OK; i++)
        rc = sim_ctx_compute(ctx, coll_ring_member(st->ring, i), 0, err);
    return rc;
}

static int ar_on_event(void *state, sim_ctx *ctx, const sim_event *ev, sim_err *err)
{
    allreduce *st = state;
    uint32_t w = (uint32_t)ev->dst;
    switch (ev->kind) {
    case SIM_EV_COMPUTED:
        return coll_ring_join(st->ring, ctx, w, err);
    case SIM_EV_MSG: {
        bool handled;
        int rc = coll_hub_on_event(st->hub, ctx, ev, &handled, err);
        if (rc == SIM_OK && !handled)
            rc = sim_err_set(err, SIM_EINVAL, NULL, "allreduce: message on no ring");
        return rc;
    }
    case SIM_EV_WORKER_DOWN:
        return coll_hub_worker_down(st->hub, ctx, w, err);
    case SIM_EV_WORKER_UP: {
        int rc = coll_ring_worker_changed(st->ring, ctx, w, sim_ctx_model_bytes(ctx), err);
        return rc != SIM_OK ? rc : sim_ctx_compute(ctx, w, 0, err);
    }
    default:
        return sim_err_set(err, SIM_EINVAL, NULL, "allreduce: unexpected event kind %u", ev->kind);
    }
}

/* The ring's member arrays and the round's mean (one model). */
static uint64_t ar_memory(const void *state, const sim_scenario *sc, size_t num_params)
{
    (void)state;
    return coll_ring_memory(sc->workers, sc->workers) + (uint64_t)sc->workers * sizeof(float *) +
           (uint64_t)num_params * 4;
}

static coll_stats ring_stats(const allreduce *st)
{
    coll_stats s;
    coll_ring_stats(st->ring, &s);
    return s;
}

static void ar_report(const void *state, const sim_ctx *ctx, sim_report *out)
{
    (void)ctx;
    const allreduce *st = state;
    sim_report_add(out, "ring_restarts", (double)ring_stats(st).restarts);
    sim_report_add(out, "stale_messages", (double)ring_stats(st).stale);
    if (st->rounds_out > 0)
        sim_report_add(out, "rounds_sat_out", (double)st->rounds_out);
}

const proto_ops proto_allreduce = {
    .name = "allreduce",
    .summary = "ring all-reduce SGD: reduce-scatter and all-gather, 2(N-1) steps of S/N bytes",
    .state_size = sizeof(allreduce),
    .rounds = true,
    .configure = ar_configure,
    .start = ar_start,
    .on_event = ar_on_event,
    .report = ar_report,
    .memory = ar_memory,
    .fini = ar_fini,
};
