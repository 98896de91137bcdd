/* Gossip: synchronous ring gossip (PROTOCOLS §1.5, the Moshpit averaging benchmark's
 * baseline), for training and for averaging-only runs (lr 0).
 *
 * Worker i, iteration k: it computes its gradient on x_i, takes one optimizer step
 * (sim_ctx_step), sends the stepped model x'_i to its left and right neighbours on the
 * ring (the kit's ring graph: one neighbour when N = 2, none when N = 1) and waits for
 * theirs; then x_i = the mean of x'_i and the models received, equal weights renormalised
 * over the neighbours that took part (live ones). The mean is summed in float in worker-id
 * order and divided once (sim_tensor_mean), so three live workers give
 * ((x_a + x_b) + x_c) / 3 with a < b < c. With zero gradients and no failure the mixing
 * matrix is circulant with rows (1/3, 1/3, 1/3): doubly stochastic, so the sum of the
 * models is kept (to rounding) and the disagreement shrinks.
 *
 * Lockstep. A worker cannot finish iteration k without its live neighbours' iteration-k
 * models, each sent when that neighbour's step k is done, so neighbours differ by at most
 * one iteration (one exchange, after rejoins: below); received models are held
 * (sim_ctx_hold) per edge and by the receiver's iteration parity until mixed. The protocol declares
 * rounds: iterations and epochs stops take effect when every live worker has finished the same
 * iteration (the smallest iteration among live workers grows).
 *
 * Dropouts (averaging-only runs, PROTOCOLS 1.5): a worker that sits out iteration k
 * (sim_ctx_dropped) keeps its value, and its model of k is sent marked idle (the lockstep
 * holds) and left out of its neighbours' means, which are renormalised over the rest.
 *
 * Failures. A down worker keeps its value (the runtime keeps its parameters) and loses the
 * iteration it was computing. Its neighbours stop waiting for it at once and mix without
 * it (renormalised over the rest); a model for their current iteration that arrived before
 * the failure is still mixed (what arrived is data), one for their next iteration is
 * dropped. On recovery the worker keeps its value and rejoins at once, at iteration K (one
 * past its most advanced running neighbour's current one, or its own if larger). Each edge
 * to it is used again from K at its end and from the neighbour's next iteration at the
 * other: every edge keeps the first iteration it is used at each end, and a message's
 * iteration is translated from the sender's numbering to the receiver's by their
 * difference, so two parts of the ring whose iteration counts drifted apart while it was
 * cut (by two failures) join without waiting for each other. Per edge the exchanges stay
 * in lockstep (one end at most one exchange ahead), so no deadlock: the running worker
 * with the fewest exchanges on its edges waits only for models sent or on their way.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#include "kit/graph.h"
#include "kit/msg.h"
#include "kit/rejoin.h"
#include "runtime/proto.h"
#include "sim/tensor.h"

enum {
    MSG_MODEL = 0, /* seq = the sender's iteration; S bytes and the stepped model */
    MSG_IDLE = 1   /* the same from a sender that sits out the iteration (dropout): not mixed */
};

/* Per directed edge flags (at the receiving end's slot), by the receiver's iteration. */
enum {
    GOT_EVEN = 1,  /* the neighbour's model for the even iteration in play is held */
    GOT_ODD = 2,   /* ... for the odd one */
    IDLE_SHIFT = 2 /* GOT_* << IDLE_SHIFT: that model's sender sat the iteration out */
};

/* A worker's state (proto_ops.worker_size, sim_ctx_worker). */
typedef struct gs_worker {
    uint64_t k;    /* current iteration */
    uint32_t need; /* neighbours' models of iteration k still expected */
    bool running;  /* up (down workers keep their value and take no part) */
    bool computed; /* the step of iteration k is done and its model sent */
} gs_worker;

typedef struct gossip {
    uint32_t n;           /* workers */
    graph_spec spec;      /* the ring */
    graph g;              /* (arena) built by start */
    uint8_t *flags;       /* (edges, arena) GOT_EVEN | GOT_ODD */
    uint64_t *act;        /* (edges, arena) first iteration of this end that uses the edge */
    uint32_t *held;       /* (edges, 2, arena) held snapshots by iteration parity */
    size_t nparams;       /* floats per model, 0 when timing-only */
    uint64_t bytes;       /* S */
    uint64_t floor;       /* smallest iteration among running workers */
    uint32_t at_floor;    /* running workers at that iteration */
    uint64_t scans;       /* update_floor's walks (on_down walks only when they are needed) */
    uint64_t mixes;       /* iterations completed */
    uint64_t degraded;    /* of which mixed without some neighbour */
    uint64_t models_sent; /* model messages */
    uint64_t stale;       /* models that arrived for nobody (ignored) */
    uint64_t rejoins;     /* recoveries */
    uint64_t round_ends;  /* times every live worker had finished a further iteration */
    uint64_t sat_out;     /* iterations a worker sat out (dropout: kept its value) */
} gossip;

static uint8_t got_bit(uint64_t k)
{
    return (k & 1) != 0 ? GOT_ODD : GOT_EVEN;
}

/* Worker w's state, for the handler acting for w (sim_ctx_worker). */
static gs_worker *own(const sim_ctx *ctx, uint32_t w)
{
    return sim_ctx_worker(ctx, w);
}

/* Neighbour j's state, read without a message (sim_ctx_peer): whether it runs, its iteration. */
static const gs_worker *peer(sim_ctx *ctx, uint32_t j)
{
    return sim_ctx_peer(ctx, j);
}

static uint32_t *held_of(gossip *st, uint32_t e, uint64_t k)
{
    return &st->held[2 * (size_t)e + (k & 1)];
}

/* The model held at edge slot e for iteration k's parity goes (none held: nothing). */
static void drop_model(gossip *st, sim_ctx *ctx, uint32_t e, uint64_t k)
{
    uint8_t got = got_bit(k);
    uint32_t *h = held_of(st, e, k);
    sim_ctx_release(ctx, *h);
    *h = SIM_CTX_NO_SNAPSHOT;
    st->flags[e] &= (uint8_t) ~(got | got << IDLE_SHIFT);
}

/* Whether neighbour j runs, and its iteration in *k (sim_ctx_peer): for the models a worker
 * expects, and the kit's lockstep rejoin (rejoin_reopen). */
static bool progress(sim_ctx *ctx, uint32_t j, uint64_t *k)
{
    const gs_worker *b = peer(ctx, j);
    *k = b->k;
    return b->running;
}

static int gs_configure(void *state, sim_cfg *cfg, const proto_setup *setup, sim_err *err)
{
    (void)cfg;
    gossip *st = state;
    st->n = setup->workers;
    st->spec = (graph_spec){ .kind = GRAPH_RING, .n = st->n };
    return graph_spec_check(&st->spec, err);
}

/* The run's arena: the kit's ring and the edges' state. The models are the runtime's; the
 * mean is formed in place. */
static void gs_buffers(void *state, sim_arena *a, size_t num_params)
{
    (void)num_params;
    gossip *st = state;
    uint64_t edges = graph_edge_count(&st->spec);
    graph_reserve(&st->g, a, &st->spec);
    st->flags = sim_arena_alloc(a, edges, sizeof(*st->flags));
    st->act = sim_arena_alloc(a, edges, sizeof(*st->act));
    st->held = sim_arena_alloc(a, 2 * edges, sizeof(*st->held));
}

/* A worker's stepped model goes to its neighbours as an alias, copied when the worker writes
 * the mean before both have read it: one copy per worker at most (lockstep). */
static uint64_t gs_copies(const void *state)
{
    const gossip *st = state;
    return st->n;
}

/* ---- rounds ---- */

/* Recomputes the smallest iteration among running workers; a rise ends a round. */
static void update_floor(gossip *st, sim_ctx *ctx)
{
    uint64_t f = UINT64_MAX;
    uint32_t at = 0;
    st->scans++;
    for (uint32_t w = 0; w < st->n; w++) {
        const gs_worker *a = own(ctx, w); /* the run's observer, not a worker */
        if (!a->running)
            continue;
        if (a->k < f) {
            f = a->k;
            at = 0;
        }
        at += a->k == f ? 1 : 0;
    }
    if (f == UINT64_MAX) {
        st->at_floor = 0; /* nobody runs: the floor waits (on_up walks again) */
        return;
    }
    bool rose = f > st->floor;
    st->floor = f;
    st->at_floor = at;
    if (rose) {
        st->round_ends++;
        sim_ctx_round_end(ctx);
    }
}

/* ---- iterations ---- */

static int send_model(gossip *st, sim_ctx *ctx, uint32_t i, uint32_t j, sim_err *err)
{
    uint64_t k = own(ctx, i)->k;
    uint32_t kind = sim_ctx_dropped(ctx, i, k) ? MSG_IDLE : MSG_MODEL;
    msg_hdr h = { .channel = 0, .kind = kind, .seq = k };
    st->models_sent++;
    return msg_post(ctx, i, j, st->bytes, h, msg_params(i), err);
}

/* Starts iteration k on worker i: counts the models it waits for and starts the gradient. */
static int start_iteration(gossip *st, sim_ctx *ctx, uint32_t i, uint64_t k, sim_err *err)
{
    gs_worker *a = own(ctx, i);
    a->k = k;
    a->computed = false;
    a->need = 0;
    uint64_t kj;
    for (uint32_t e = st->g.off[i]; e < st->g.off[i + 1]; e++)
        if (progress(ctx, st->g.adj[e], &kj) && st->act[e] <= k && (st->flags[e] & got_bit(k)) == 0)
            a->need++;
    return sim_ctx_compute(ctx, i, k, err);
}

/* Finishes worker i's iteration when its step is done and every expected model is in:
 * the mean over itself and the models held for this iteration, in worker-id order. */
static int try_finish(gossip *st, sim_ctx *ctx, uint32_t i, sim_err *err)
{
    gs_worker *a = own(ctx, i);
    if (!a->running || !a->computed || a->need > 0)
        return SIM_OK;
    const float *xs[3];
    size_t c = 0;
    bool mine = false, missing = false;
    uint8_t got = got_bit(a->k), idle = (uint8_t)(got << IDLE_SHIFT);
    bool out = sim_ctx_dropped(ctx, i, a->k); /* sits out: keeps its value */
    float *params = sim_ctx_params(ctx, i);
    for (uint32_t e = st->g.off[i]; e < st->g.off[i + 1] && !out; e++) {
        uint32_t j = st->g.adj[e];
        if (!mine && j > i) {
            xs[c++] = params;
            mine = true;
        }
        if ((st->flags[e] & got) == 0 || (st->flags[e] & idle) != 0) {
            missing = true;
            continue;
        }
        uint32_t *h = held_of(st, e, a->k);
        if (st->nparams > 0)
            xs[c++] = sim_ctx_held(ctx, *h);
        else
            c++;
    }
    if (!mine && !out)
        xs[c++] = params;
    if (st->nparams > 0 && c > 1) {
        sim_tensor_mean_over(params, xs, c, st->nparams);
    }
    for (uint32_t e = st->g.off[i]; e < st->g.off[i + 1]; e++)
        drop_model(st, ctx, e, a->k);
    st->mixes++;
    st->sat_out += out ? 1 : 0;
    st->degraded += missing ? 1 : 0;
    sim_ctx_count(ctx, i, 1);
    bool was_floor = a->k == st->floor;
    int rc = start_iteration(st, ctx, i, a->k + 1, err);
    if (rc == SIM_OK && was_floor && --st->at_floor == 0)
        update_floor(st, ctx);
    return rc;
}

/* Worker i waits for one model fewer (it arrived, or its sender failed): it finishes the
 * iteration if that was the last. */
static int one_fewer(gossip *st, sim_ctx *ctx, uint32_t i, sim_err *err)
{
    own(ctx, i)->need--;
    return try_finish(st, ctx, i, err);
}

/* Worker i's step of iteration k is done: it sends its stepped model to each running
 * neighbour on the edges it uses at k. */
static int on_computed(gossip *st, sim_ctx *ctx, uint32_t i, sim_err *err)
{
    gs_worker *a = own(ctx, i);
    if (st->nparams > 0)
        sim_ctx_step(ctx, (sim_target){ .w = i }, NULL, sim_ctx_grad(ctx, i));
    a->computed = true;
    for (uint32_t e = st->g.off[i]; e < st->g.off[i + 1]; e++) {
        uint32_t j = st->g.adj[e];
        if (!peer(ctx, j)->running || st->act[e] > a->k)
            continue;
        int rc = send_model(st, ctx, i, j, err);
        if (rc != SIM_OK)
            return rc;
    }
    return try_finish(st, ctx, i, err);
}

/* Worker j's model of its iteration mj reached i: held for i's matching iteration. */
static int on_model(gossip *st, sim_ctx *ctx, uint32_t i, uint32_t j, uint64_t mj, bool idle,
                    sim_err *err)
{
    gs_worker *a = own(ctx, i);
    uint32_t e = graph_slot(&st->g, i, j);
    uint32_t back = e != GRAPH_NONE ? st->g.rev[e] : 0;
    if (!a->running || e == GRAPH_NONE || !peer(ctx, j)->running || mj < st->act[back]) {
        st->stale++;
        return SIM_OK;
    }
    uint64_t m = mj - st->act[back] + st->act[e];
    if (m != a->k && m != a->k + 1) {
        st->stale++;
        return SIM_OK;
    }
    uint8_t got = got_bit(m);
    if ((st->flags[e] & got) != 0 || (m == a->k && a->need == 0))
        return sim_err_set(err, SIM_EINVAL, NULL,
                           "gossip: worker %u got a second model of iteration %llu from %u", i,
                           (unsigned long long)m, j);
    st->flags[e] |= (uint8_t)(idle ? got | got << IDLE_SHIFT : got);
    *held_of(st, e, m) = sim_ctx_hold(ctx);
    if (m != a->k)
        return SIM_OK; /* one iteration ahead: kept for the next */
    return one_fewer(st, ctx, i, err);
}

/* Worker d failed: its held models go, its neighbours stop waiting for it. The floor and its
 * count then hold every running worker's iteration but d's, unless a walk (update_floor, from
 * one_fewer) took d out already: d is taken out of them without a walk of every worker when
 * others remain at the floor or d was above it (a rule failing N workers at one instant walked
 * them N times, issue 38). */
static int on_down(gossip *st, sim_ctx *ctx, uint32_t d, sim_err *err)
{
    bool counted = own(ctx, d)->running && own(ctx, d)->k == st->floor; /* in at_floor */
    uint64_t scans = st->scans;
    *own(ctx, d) = (gs_worker){ .k = own(ctx, d)->k }; /* not running, waits for nothing */
    for (uint32_t e = st->g.off[d]; e < st->g.off[d + 1]; e++) {
        drop_model(st, ctx, e, 0);
        drop_model(st, ctx, e, 1);
    }
    for (uint32_t e = st->g.off[d]; e < st->g.off[d + 1]; e++) {
        uint32_t i = st->g.adj[e], back = st->g.rev[e];
        gs_worker *b = own(ctx, i); /* it notices that d failed */
        if (!b->running)
            continue;
        drop_model(st, ctx, back, b->k + 1); /* d's model of i's next iteration */
        if (st->act[back] <= b->k && (st->flags[back] & got_bit(b->k)) == 0) {
            int rc = one_fewer(st, ctx, i, err); /* it no longer waits for d */
            if (rc != SIM_OK)
                return rc;
        }
    }
    if (st->scans != scans || (counted && st->at_floor <= 1))
        update_floor(st, ctx);
    else
        st->at_floor -= counted ? 1 : 0;
    return SIM_OK;
}

/* Worker r recovered: it rejoins at once (the kit's rejoin_reopen), each edge used from its
 * iteration K and the neighbour's next one. The floor moves only when r is the first to run
 * or starts below it (a walk); at it, r is counted there, above it nothing changes: a rule
 * recovering N workers at one instant walked them N times (issue 38; 27,000 of 30,000: 9.5 s). */
static int on_up(gossip *st, sim_ctx *ctx, uint32_t r, sim_err *err)
{
    gs_worker *a = own(ctx, r);
    uint64_t k = rejoin_reopen(&st->g, ctx, r, progress, a->k, st->act);
    a->running = true;
    st->rejoins++;
    int rc = start_iteration(st, ctx, r, k, err);
    if (rc == SIM_OK && (st->at_floor == 0 || k < st->floor))
        update_floor(st, ctx);
    else if (rc == SIM_OK)
        st->at_floor += k == st->floor ? 1 : 0;
    return rc;
}

static int gs_start(void *state, sim_ctx *ctx, sim_err *err)
{
    gossip *st = state;
    int rc = graph_build(&st->g, &st->spec, NULL, err);
    if (rc != SIM_OK)
        return rc;
    for (size_t h = 0; h < 2 * (size_t)st->g.edges; h++)
        st->held[h] = SIM_CTX_NO_SNAPSHOT;
    st->bytes = sim_ctx_layer_bytes(ctx, SIM_LAYERS_ALL);
    st->nparams = sim_ctx_num_params(ctx);
    for (uint32_t w = 0; w < st->n; w++)
        own(ctx, w)->running = !sim_ctx_down(ctx, w);
    for (uint32_t w = 0; w < st->n; w++) {
        if (!own(ctx, w)->running)
            continue;
        rc = start_iteration(st, ctx, w, 0, err);
        if (rc != SIM_OK)
            return rc;
    }
    update_floor(st, ctx);
    return SIM_OK;
}

static int gs_on_event(void *state, sim_ctx *ctx, const sim_event *ev, sim_err *err)
{
    gossip *st = state;
    uint32_t w = (uint32_t)ev->dst;
    switch (ev->kind) {
    case SIM_EV_COMPUTED:
        if (!own(ctx, w)->running || ev->arg[0] != own(ctx, w)->k)
            return sim_err_set(err, SIM_EINVAL, NULL,
                               "gossip: worker %u finished an unexpected iteration %llu", w,
                               (unsigned long long)ev->arg[0]);
        return on_computed(st, ctx, w, err);
    case SIM_EV_MSG: {
        msg_hdr h = msg_read(ev);
        if (h.channel == 0 && (h.kind == MSG_MODEL || h.kind == MSG_IDLE))
            return on_model(st, ctx, w, (uint32_t)ev->src, h.seq, h.kind == MSG_IDLE, err);
        break;
    }
    case SIM_EV_WORKER_DOWN:
        return on_down(st, ctx, w, err);
    case SIM_EV_WORKER_UP:
        return on_up(st, ctx, w, err);
    }
    return sim_err_set(err, SIM_EINVAL, NULL, "gossip: unexpected event kind %u", ev->kind);
}

static void gs_report(const void *state, const sim_ctx *ctx, sim_report *out)
{
    (void)ctx;
    const gossip *st = state;
    sim_report_add(out, "rounds", (double)st->floor);
    sim_report_add(out, "mixes", (double)st->mixes);
    sim_report_add(out, "degraded_mixes", (double)st->degraded);
    sim_report_add(out, "models_sent", (double)st->models_sent);
    sim_report_add(out, "stale_models", (double)st->stale);
    sim_report_add(out, "rejoins", (double)st->rejoins);
    if (st->sat_out > 0)
        sim_report_add(out, "sat_out", (double)st->sat_out);
}

const proto_ops proto_gossip = {
    .name = "gossip",
    .summary = "gossip: synchronous ring averaging with the live left and right neighbours",
    .state_size = sizeof(gossip),
    .worker_size = sizeof(gs_worker),
    .rounds = true,
    .configure = gs_configure,
    .start = gs_start,
    .on_event = gs_on_event,
    .report = gs_report,
    .buffers = gs_buffers,
    .copies = gs_copies,
};
