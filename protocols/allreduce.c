/* All-Reduce SGD over a ring (PROTOCOLS §1.1).
 *
 * Each iteration every live worker computes, then the ring all-reduce runs: N-1
 * reduce-scatter steps and N-1 all-gather steps, in each of which a worker sends one chunk
 * of S/N bytes to its successor. A worker sends step s+1 once it has received step s from
 * its predecessor, has finished computing, and its step s has been delivered: like NCCL or
 * Gloo, it sends its chunks in order over one connection, never several at once. So the
 * collective starts only when the slowest worker is ready, and with one flow per link a
 * round takes exactly 2(N-1) * (path latency + (S/N)/B). A worker whose round is complete
 * (everything sent delivered, everything expected received) counts an iteration and starts
 * computing the next.
 *
 * With a real model, the collective's result is the mean of the members' gradients, summed
 * in worker order once per round (so every replica gets the same bits) and applied by each
 * worker when its round completes: replicas that start equal stay bitwise identical.
 *
 * Failures: the ring is rebuilt over the live workers (a new generation); messages of older
 * generations are ignored, and workers that had finished computing restart the collective
 * of their current round in the new ring. A recovered worker rejoins by computing.
 */
#include <inttypes.h>
#include <stdlib.h>

#include "protocols/proto.h"
#include "sim/tensor.h"

typedef struct ar_worker {
    uint32_t round; /* collectives completed in this generation */
    uint32_t sent;  /* steps of the current round sent */
    uint32_t recv;  /* steps of the current round received */
    uint32_t early; /* steps of the next round received (predecessor ahead) */
    bool ready;     /* finished computing this round's gradient */
    bool busy;      /* a step it sent is still on its way */
} ar_worker;

typedef struct allreduce {
    uint32_t n;     /* workers */
    ar_worker *w;   /* (n) */
    uint32_t *ring; /* (n) live workers in id order; the first nlive are valid */
    uint32_t *pos;  /* (n) position of each worker in the ring, UINT32_MAX if down */
    uint32_t nlive;
    uint32_t gen;        /* ring generation, bumped at every membership change */
    uint64_t bytes;      /* S: bytes all-reduced per round */
    uint64_t restarts;   /* membership changes */
    size_t nparams;      /* floats per model, 0 for the timing-only model */
    float *mean;         /* (nparams) mean gradient of the round in mean_round */
    const float **grads; /* (n) scratch: the ring members' gradients */
    uint32_t mean_gen, mean_round;
    bool mean_valid;
} allreduce;

enum {
    NO_POS = UINT32_MAX
};

static int ar_configure(void *state, sim_cfg *cfg, const sim_scenario *sc, sim_err *err)
{
    allreduce *st = state;
    char name[32];
    int rc = sim_cfg_string(cfg, "name", name, sizeof(name), err);
    if (rc != SIM_OK)
        return rc;
    st->n = sc->workers;
    st->w = calloc(st->n, sizeof(*st->w));
    st->ring = calloc(st->n, sizeof(*st->ring));
    st->pos = calloc(st->n, sizeof(*st->pos));
    if (st->w == NULL || st->ring == NULL || st->pos == NULL)
        return sim_err_set(err, SIM_ENOMEM, NULL, "out of memory");
    return SIM_OK;
}

static void ar_fini(void *state)
{
    allreduce *st = state;
    free(st->w);
    free(st->ring);
    free(st->pos);
    free(st->grads);
    sim_tensor_free(st->mean);
}

static uint64_t tag_of(uint32_t gen, uint32_t round)
{
    return (uint64_t)gen << 32 | round;
}

static uint32_t steps(const allreduce *st)
{
    return 2 * (st->nlive - 1);
}

/* Bytes of the chunk worker at ring position r sends in step s: chunks split S as evenly as
 * whole bytes allow, the first S mod n chunks one byte larger. */
static uint64_t chunk_bytes(const allreduce *st, uint32_t r, uint32_t s)
{
    uint32_t n = st->nlive;
    uint32_t c = s < n - 1 ? (r + n - s % n) % n : (r + 1 + n - (s - (n - 1)) % n) % n;
    return st->bytes / n + (c < st->bytes % n ? 1 : 0);
}

static int try_send(allreduce *st, sim_ctx *ctx, uint32_t w, sim_err *err)
{
    ar_worker *a = &st->w[w];
    uint32_t r = st->pos[w];
    uint32_t succ = st->ring[(r + 1) % st->nlive];
    if (!a->ready || a->busy || a->sent >= steps(st) || a->recv < a->sent)
        return SIM_OK;
    int rc = sim_ctx_send(ctx, w, succ, chunk_bytes(st, r, a->sent), tag_of(st->gen, a->round),
                          a->sent, err);
    if (rc != SIM_OK)
        return rc;
    a->sent++;
    a->busy = true;
    return SIM_OK;
}

/* The mean gradient of the current round, computed by the first member to finish it. Every
 * member is ready then (none can finish before all have sent), so all gradients are this
 * round's. */
static const float *round_mean(allreduce *st, sim_ctx *ctx, uint32_t round)
{
    if (!st->mean_valid || st->mean_gen != st->gen || st->mean_round != round) {
        for (uint32_t i = 0; i < st->nlive; i++)
            st->grads[i] = sim_ctx_grad(ctx, st->ring[i]);
        sim_tensor_mean(st->mean, st->grads, st->nlive, st->nparams);
        st->mean_gen = st->gen;
        st->mean_round = round;
        st->mean_valid = true;
    }
    return st->mean;
}

static int try_finish(allreduce *st, sim_ctx *ctx, uint32_t w, sim_err *err)
{
    ar_worker *a = &st->w[w];
    if (!a->ready || a->busy || a->sent < steps(st) || a->recv < steps(st))
        return SIM_OK;
    if (st->nparams > 0)
        sim_ctx_apply(ctx, w, round_mean(st, ctx, a->round));
    sim_ctx_count(ctx, w, 1);
    a->round++;
    a->recv = a->early;
    a->early = 0;
    a->sent = 0;
    a->ready = false;
    return sim_ctx_compute(ctx, w, a->round, err);
}

/* Rebuilds the ring over the live workers and restarts every round in progress. */
static int rebuild(allreduce *st, sim_ctx *ctx, sim_err *err)
{
    st->gen++;
    st->nlive = 0;
    for (uint32_t w = 0; w < st->n; w++) {
        st->pos[w] = NO_POS;
        if (sim_ctx_down(ctx, w))
            continue;
        st->pos[w] = st->nlive;
        st->ring[st->nlive++] = w;
        ar_worker *a = &st->w[w];
        a->round = a->sent = a->recv = a->early = 0;
        a->busy = false;
    }
    for (uint32_t i = 0; i < st->nlive; i++) {
        uint32_t w = st->ring[i];
        int rc = try_send(st, ctx, w, err);
        if (rc == SIM_OK)
            rc = try_finish(st, ctx, w, err);
        if (rc != SIM_OK)
            return rc;
    }
    return SIM_OK;
}

static int ar_start(void *state, sim_ctx *ctx, sim_err *err)
{
    allreduce *st = state;
    st->bytes = sim_ctx_model_bytes(ctx);
    st->nparams = sim_ctx_num_params(ctx);
    if (st->nparams > 0) {
        st->mean = sim_tensor_alloc(st->nparams);
        st->grads = calloc(st->n, sizeof(*st->grads));
        if (st->mean == NULL || st->grads == NULL)
            return sim_err_set(err, SIM_ENOMEM, NULL, "out of memory");
    }
    int rc = rebuild(st, ctx, err);
    for (uint32_t i = 0; i < st->nlive && rc == SIM_OK; i++)
        rc = sim_ctx_compute(ctx, st->ring[i], 0, err);
    return rc;
}

/* The sender's step arrived: it may send its next one, or finish its round. */
static int on_delivered(allreduce *st, sim_ctx *ctx, uint32_t src, sim_err *err)
{
    st->w[src].busy = false;
    int rc = try_send(st, ctx, src, err);
    return rc != SIM_OK ? rc : try_finish(st, ctx, src, err);
}

static int on_message(allreduce *st, sim_ctx *ctx, const sim_event *ev, sim_err *err)
{
    uint32_t w = (uint32_t)ev->dst, src = (uint32_t)ev->src;
    uint32_t gen = (uint32_t)(ev->arg[0] >> 32), round = (uint32_t)ev->arg[0];
    if (gen != st->gen || st->pos[w] == NO_POS || st->pos[src] == NO_POS)
        return SIM_OK; /* sent in a ring that no longer exists */
    int rc = on_delivered(st, ctx, src, err);
    if (rc != SIM_OK)
        return rc;
    ar_worker *a = &st->w[w];
    if (round == a->round)
        a->recv++;
    else if (round == a->round + 1)
        a->early++;
    else
        return sim_err_set(err, SIM_EINVAL, NULL,
                           "allreduce: worker %u in round %u got a message of round %u", w,
                           a->round, round);
    rc = try_send(st, ctx, w, err);
    return rc != SIM_OK ? rc : try_finish(st, ctx, w, err);
}

static int ar_on_event(void *state, sim_ctx *ctx, const sim_event *ev, sim_err *err)
{
    allreduce *st = state;
    switch (ev->kind) {
    case SIM_EV_COMPUTED: {
        uint32_t w = (uint32_t)ev->dst;
        st->w[w].ready = true;
        int rc = try_send(st, ctx, w, err);
        return rc != SIM_OK ? rc : try_finish(st, ctx, w, err);
    }
    case SIM_EV_MSG:
        return on_message(st, ctx, ev, err);
    case SIM_EV_WORKER_DOWN:
        st->w[ev->dst].ready = false;
        st->restarts++;
        return rebuild(st, ctx, err);
    case SIM_EV_WORKER_UP: {
        st->restarts++;
        st->w[ev->dst].ready = false;
        int rc = rebuild(st, ctx, err);
        return rc != SIM_OK ? rc : sim_ctx_compute(ctx, (uint32_t)ev->dst, 0, err);
    }
    default:
        return sim_err_set(err, SIM_EINVAL, NULL, "allreduce: unexpected event kind %u", ev->kind);
    }
}

static void ar_report(const void *state, sim_report *out)
{
    const allreduce *st = state;
    sim_report_add(out, "ring_restarts", (double)st->restarts);
}

const proto_ops proto_allreduce = {
    .name = "allreduce",
    .summary = "ring all-reduce SGD: reduce-scatter and all-gather, 2(N-1) steps of S/N bytes",
    .state_size = sizeof(allreduce),
    .configure = ar_configure,
    .start = ar_start,
    .on_event = ar_on_event,
    .report = ar_report,
    .fini = ar_fini,
};
