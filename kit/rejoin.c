/* The kit's membership-and-rejoin service (kit/rejoin.h). */
#include "kit/rejoin.h"

#include "sim/tensor.h"

struct rejoin {
    uint32_t workers;
    uint32_t *source;  /* (workers) the peer whose model each worker waits for, REJOIN_NONE */
    uint32_t state;    /* the held snapshot every model is sent as (rejoin_hold_state) */
    bool has_state;    /* ... since rejoin_hold_state, until rejoin_release_state */
    msg_hdr *hdr;      /* (workers) the header of an admitted worker's model, sent again if
                          its sender fails */
    bool *pending;     /* (workers) recovered, waiting to be admitted */
    uint32_t npending; /* workers pending (set_pending): none, and no walk looks for one */
    uint32_t nsource;  /* workers whose source is a peer (set_source): none, and a failure's
                        * walk for those waiting for it is skipped (issue 38: N failures at one
                        * instant walked every worker N times) */
    uint64_t admitted;
    /* serving (rejoin_serve) */
    const rejoin_ops *ops; /* the owner's, or NULL */
    const graph *g;        /* the owner's graph */
    void *owner;
    bool served;       /* tables for serving were asked for (rejoin_create) */
    uint64_t edges;    /* of the graph they were sized for */
    uint64_t *seq;     /* (workers) the tag of each worker's requests */
    uint32_t *waiting; /* (workers) REJOIN_EACH: answers still awaited */
    uint8_t *asked;    /* (edges, by in-slot) REJOIN_EACH: this in-neighbour was asked */
    uint64_t fetched;  /* models adopted (REJOIN_AHEAD) */
};

static void set_pending(rejoin *rj, uint32_t w, bool on)
{
    rj->npending += (uint32_t)on - (uint32_t)rj->pending[w];
    rj->pending[w] = on;
}

static void set_source(rejoin *rj, uint32_t w, uint32_t peer)
{
    rj->nsource += (uint32_t)(peer != REJOIN_NONE) - (uint32_t)(rj->source[w] != REJOIN_NONE);
    rj->source[w] = peer;
}

rejoin *rejoin_create(sim_arena *a, uint32_t workers, const graph_spec *served)
{
    rejoin *rj = sim_arena_alloc(a, 1, sizeof(*rj));
    uint32_t *source = sim_arena_alloc(a, workers, sizeof(*source));
    msg_hdr *hdr = sim_arena_alloc(a, workers, sizeof(*hdr));
    bool *pending = sim_arena_alloc(a, workers, sizeof(*pending));
    uint64_t *seq = NULL, edges = 0;
    uint32_t *waiting = NULL;
    uint8_t *asked = NULL;
    if (served != NULL) {
        edges = graph_edge_count(served);
        seq = sim_arena_alloc(a, workers, sizeof(*seq));
        waiting = sim_arena_alloc(a, workers, sizeof(*waiting));
        asked = sim_arena_alloc(a, edges, sizeof(*asked));
    }
    if (rj == NULL)
        return NULL; /* the sizing arena (or an overrun, which fails the run) */
    rj->workers = workers;
    rj->source = source;
    rj->state = SIM_CTX_NO_SNAPSHOT;
    rj->hdr = hdr;
    rj->pending = pending;
    rj->served = served != NULL;
    rj->edges = edges;
    rj->seq = seq;
    rj->waiting = waiting;
    rj->asked = asked;
    for (uint32_t w = 0; w < workers && source != NULL; w++)
        rj->source[w] = REJOIN_NONE;
    return rj;
}

void rejoin_recovered(rejoin *rj, uint32_t w)
{
    set_pending(rj, w, true);
}

bool rejoin_pending(const rejoin *rj, uint32_t w)
{
    return rj->pending[w];
}

bool rejoin_any_pending(const rejoin *rj, const sim_ctx *ctx)
{
    return rejoin_next_pending(rj, ctx, 0) != REJOIN_NONE;
}

void rejoin_settle(rejoin *rj, uint32_t w, bool admitted)
{
    set_pending(rj, w, false);
    rj->admitted += admitted ? 1 : 0;
}

uint32_t rejoin_next_pending(const rejoin *rj, const sim_ctx *ctx, uint32_t from)
{
    if (rj->npending == 0)
        return REJOIN_NONE;
    for (uint32_t w = from; w < rj->workers; w++)
        if (rj->pending[w] && !sim_ctx_down(ctx, w))
            return w;
    return REJOIN_NONE;
}

void rejoin_worker_down(rejoin *rj, uint32_t w)
{
    set_pending(rj, w, false);
    set_source(rj, w, REJOIN_NONE);
}

uint64_t rejoin_admitted(const rejoin *rj)
{
    return rj->admitted;
}

int rejoin_send(rejoin *rj, sim_ctx *ctx, uint32_t peer, uint32_t w, msg_hdr h, sim_err *err)
{
    set_source(rj, w, peer);
    sim_payload p = rj->has_state ? msg_held(rj->state) : msg_params(peer);
    return msg_post(ctx, peer, w, sim_ctx_layer_bytes(ctx, SIM_LAYERS_ALL), h, p, err);
}

int rejoin_hold_state(rejoin *rj, sim_ctx *ctx, const float *block, size_t n, sim_err *err)
{
    rejoin_release_state(rj, ctx);
    rj->has_state = true;
    return sim_ctx_snapshot(ctx, block, n, &rj->state, err);
}

void rejoin_release_state(rejoin *rj, sim_ctx *ctx)
{
    sim_ctx_release(ctx, rj->state);
    rj->state = SIM_CTX_NO_SNAPSHOT;
    rj->has_state = false;
}

bool rejoin_adopt(rejoin *rj, sim_ctx *ctx, uint32_t w, uint32_t src)
{
    if (rj->source[w] != src || src == REJOIN_NONE)
        return false;
    set_source(rj, w, REJOIN_NONE);
    const float *x = sim_ctx_held(ctx, SIM_CTX_PAYLOAD);
    if (x != NULL)
        sim_tensor_copy(sim_ctx_params(ctx, w), x, sim_ctx_num_params(ctx));
    return true;
}

/* The running peer furthest ahead among adj[off[w]..off[w+1]) (the first among equals), its
 * progress in *k; REJOIN_NONE (and *k untouched) if none runs. */
static uint32_t ahead(const uint32_t *off, const uint32_t *adj, sim_ctx *ctx, uint32_t w,
                      rejoin_progress_fn progress, uint64_t *k)
{
    uint32_t best = REJOIN_NONE;
    uint64_t best_k = 0, kj = 0;
    for (uint32_t e = off[w]; e < off[w + 1]; e++) {
        if (progress(ctx, adj[e], &kj) && (best == REJOIN_NONE || kj > best_k)) {
            best = adj[e];
            best_k = kj;
        }
    }
    if (best != REJOIN_NONE)
        *k = best_k;
    return best;
}

uint32_t rejoin_ahead(const graph *g, sim_ctx *ctx, uint32_t w, rejoin_progress_fn progress,
                      uint64_t *k)
{
    return ahead(g->off, g->adj, ctx, w, progress, k);
}

/* ---- serving ---- */

int rejoin_serve(rejoin *rj, const rejoin_ops *ops, const graph *g, void *owner, sim_err *err)
{
    if (!rj->served || g->edges > rj->edges)
        return sim_err_set(err, SIM_EINVAL, NULL,
                           "%s: the rejoin service was sized for %llu edges, the graph has %llu",
                           ops->name, (unsigned long long)(rj->served ? rj->edges : 0),
                           (unsigned long long)g->edges);
    rejoin_owner(rj, ops, owner);
    rj->g = g;
    return SIM_OK;
}

/* REJOIN_EACH: w asks every in-neighbour that is up (rj->waiting[w] of them). */
static int ask_each(rejoin *rj, sim_ctx *ctx, uint32_t w, msg_hdr h, sim_err *err)
{
    const graph *g = rj->g;
    rj->waiting[w] = 0;
    for (uint32_t e = g->in_off[w]; e < g->in_off[w + 1]; e++) {
        rj->asked[e] = 0;
        if (sim_ctx_down(ctx, g->in_adj[e]))
            continue;
        rj->asked[e] = 1;
        rj->waiting[w]++;
        int rc = msg_post(ctx, w, g->in_adj[e], rj->ops->ask_bytes, h, msg_none(), err);
        if (rc != SIM_OK)
            return rc;
    }
    return SIM_OK;
}

int rejoin_fetch(rejoin *rj, sim_ctx *ctx, uint32_t w, uint64_t seq, sim_err *err)
{
    const rejoin_ops *ops = rj->ops;
    msg_hdr h = { .channel = 0, .kind = ops->ask, .seq = seq };
    rj->seq[w] = seq;
    set_source(rj, w, REJOIN_NONE);
    if (ops->mode == REJOIN_EACH) {
        int rc = ask_each(rj, ctx, w, h, err);
        if (rc != SIM_OK || rj->waiting[w] > 0)
            return rc;
    } else {
        uint64_t k;
        uint32_t peer = ahead(rj->g->in_off, rj->g->in_adj, ctx, w, ops->progress, &k);
        if (peer != REJOIN_NONE) {
            set_source(rj, w, peer);
            return msg_post(ctx, w, peer, ops->ask_bytes, h, msg_none(), err);
        }
    }
    return ops->alone(rj->owner, ctx, w, err);
}

int rejoin_on_ask(rejoin *rj, sim_ctx *ctx, const sim_event *ev, sim_err *err)
{
    uint32_t p = (uint32_t)ev->dst, w = (uint32_t)ev->src;
    msg_hdr h;
    if (!rj->ops->reply(ctx, p, &h))
        return sim_err_set(err, SIM_EINVAL, NULL,
                           "%s: worker %u got an unexpected request from %u (tag %llu)",
                           rj->ops->name, p, w, (unsigned long long)msg_read(ev).seq);
    return rejoin_send(rj, ctx, p, w, h, err); /* (REJOIN_EACH reads no source) */
}

int rejoin_on_answer(rejoin *rj, sim_ctx *ctx, const sim_event *ev, sim_err *err)
{
    const rejoin_ops *ops = rj->ops;
    uint32_t w = (uint32_t)ev->dst, src = (uint32_t)ev->src;
    msg_hdr h = msg_read(ev);
    if (ops->mode == REJOIN_AHEAD) {
        if (!rejoin_adopt(rj, ctx, w, src))
            return sim_err_set(err, SIM_EINVAL, NULL,
                               "%s: worker %u got an unexpected reply from %u (tag %llu)",
                               ops->name, w, src, (unsigned long long)h.seq);
        rj->fetched++;
        return ops->fetched(rj->owner, ctx, w, err);
    }
    uint32_t e = graph_in_slot(rj->g, w, src);
    if (e == GRAPH_NONE || rj->asked[e] == 0)
        return SIM_OK; /* a worker that failed since, or an answer it no longer waits for */
    rj->asked[e] = 0;
    ops->answer(rj->owner, ctx, w, e, h);
    return --rj->waiting[w] == 0 ? ops->fetched(rj->owner, ctx, w, err) : SIM_OK;
}

int rejoin_worker_failed(rejoin *rj, sim_ctx *ctx, uint32_t d, sim_err *err)
{
    const rejoin_ops *ops = rj->ops;
    const graph *g = rj->g;
    bool each = ops->mode == REJOIN_EACH;
    bool ran = each ? rj->waiting[d] == 0 : rj->source[d] == REJOIN_NONE;
    rejoin_worker_down(rj, d);
    if (each) {
        rj->waiting[d] = 0;
        for (uint32_t e = g->in_off[d]; e < g->in_off[d + 1]; e++)
            rj->asked[e] = 0;
    }
    for (uint32_t e = g->off[d]; e < g->off[d + 1]; e++) {
        uint32_t w = g->adj[e], s = g->rev[e];
        int rc = ops->notice != NULL ? ops->notice(rj->owner, ctx, w, s, ran, err) : SIM_OK;
        if (rc == SIM_OK && !each && rj->source[w] == d) {
            rc = rejoin_fetch(rj, ctx, w, rj->seq[w], err); /* it asks another */
        } else if (rc == SIM_OK && each && rj->asked[s] != 0) {
            rj->asked[s] = 0;
            if (--rj->waiting[w] == 0)
                rc = ops->fetched(rj->owner, ctx, w, err);
        }
        if (rc != SIM_OK)
            return rc;
    }
    return SIM_OK;
}

uint64_t rejoin_fetched(const rejoin *rj)
{
    return rj->fetched;
}

/* ---- admitting ---- */

void rejoin_owner(rejoin *rj, const rejoin_ops *ops, void *owner)
{
    rj->ops = ops;
    rj->owner = owner;
}

/* Whether worker v runs, and how far (the owner's progress, else the service's own view: up
 * and not waiting to be admitted, all equal). */
static bool runs(const rejoin *rj, sim_ctx *ctx, uint32_t v, uint64_t *k)
{
    if (rj->ops->progress != NULL)
        return rj->ops->progress(ctx, v, k);
    *k = 0;
    return !rj->pending[v] && !sim_ctx_down(ctx, v);
}

/* If no worker runs, w (up, waiting; REJOIN_NONE: nobody) starts alone. */
static int alone_if_idle(rejoin *rj, sim_ctx *ctx, uint32_t w, sim_err *err)
{
    uint64_t k;
    for (uint32_t v = 0; v < rj->workers; v++)
        if (runs(rj, ctx, v, &k))
            return SIM_OK;
    if (w == REJOIN_NONE)
        return SIM_OK;
    rejoin_settle(rj, w, true);
    return rj->ops->alone(rj->owner, ctx, w, err);
}

int rejoin_up(rejoin *rj, sim_ctx *ctx, uint32_t w, sim_err *err)
{
    rejoin_recovered(rj, w);
    return alone_if_idle(rj, ctx, w, err);
}

/* The running worker furthest ahead (the first in id order among equals) that is neither w
 * nor waiting for a model nor to be admitted, REJOIN_NONE if none. */
static uint32_t sender(const rejoin *rj, sim_ctx *ctx, uint32_t w)
{
    uint32_t best = REJOIN_NONE;
    uint64_t best_k = 0, k = 0;
    for (uint32_t v = 0; v < rj->workers; v++) {
        if (v == w || rj->source[v] != REJOIN_NONE || rj->pending[v] || !runs(rj, ctx, v, &k) ||
            (best != REJOIN_NONE && k <= best_k))
            continue;
        best = v;
        best_k = k;
    }
    return best;
}

/* Each admitted worker waiting for d's model (lost with d) is sent it by another running
 * peer, with the same header; with none, it waits to be admitted again (the owner's requeue). */
static int send_again(rejoin *rj, sim_ctx *ctx, uint32_t d, sim_err *err)
{
    int rc = SIM_OK;
    for (uint32_t w = 0; w < rj->workers && rc == SIM_OK && rj->nsource > 0; w++) {
        if (rj->source[w] != d)
            continue;
        uint32_t p = sender(rj, ctx, w);
        if (p != REJOIN_NONE) {
            rc = rejoin_send(rj, ctx, p, w, rj->hdr[w], err);
            continue;
        }
        set_source(rj, w, REJOIN_NONE);
        set_pending(rj, w, true);
        rj->admitted--;
        if (rj->ops->requeue != NULL)
            rc = rj->ops->requeue(rj->owner, ctx, w, err);
    }
    return rc;
}

int rejoin_down(rejoin *rj, sim_ctx *ctx, uint32_t d, sim_err *err)
{
    rejoin_worker_down(rj, d);
    int rc = send_again(rj, ctx, d, err);
    return rc != SIM_OK ? rc : alone_if_idle(rj, ctx, rejoin_next_pending(rj, ctx, 0), err);
}

int rejoin_admit(rejoin *rj, sim_ctx *ctx, uint32_t peer, msg_hdr h, uint32_t *n, sim_err *err)
{
    int rc = SIM_OK;
    *n = 0;
    for (uint32_t w = rejoin_next_pending(rj, ctx, 0); w != REJOIN_NONE && rc == SIM_OK;
         w = rejoin_next_pending(rj, ctx, w + 1)) {
        rejoin_settle(rj, w, true);
        (*n)++;
        if (rj->ops->admit != NULL)
            rc = rj->ops->admit(rj->owner, ctx, w, peer, err);
        rj->hdr[w] = h;
        if (rc == SIM_OK)
            rc = rejoin_send(rj, ctx, peer, w, h, err);
    }
    return rc;
}

/* ---- rejoining a lockstep graph ---- */

uint64_t rejoin_reopen(const graph *g, sim_ctx *ctx, uint32_t w, rejoin_progress_fn progress,
                       uint64_t k, uint64_t *act)
{
    uint64_t kj;
    if (rejoin_ahead(g, ctx, w, progress, &kj) != REJOIN_NONE && kj + 1 > k)
        k = kj + 1;
    for (uint32_t e = g->off[w]; e < g->off[w + 1]; e++) {
        act[e] = k;
        if (progress(ctx, g->adj[e], &kj))
            act[g->rev[e]] = kj + 1;
    }
    return k;
}
