/* AD-PSGD: asynchronous decentralized parallel SGD (PROTOCOLS §2, Lian et al., ICML 2018).
 *
 * Graph. Even workers are passive, odd workers active. Edges join workers at ring offsets ±1
 * and, with graph "exponential" (the default), ±(1 + 2^m) for m = 1..floor(log2(N-1)): the
 * bipartite exponential graph of the SGP reproduction. Graph "ring" keeps ±1 only. All offsets
 * are odd, so for even N every edge joins an active and a passive worker. For odd N the ring
 * wraps from N-1 to 0, both even, and some offsets join workers of equal parity: those edges
 * are dropped, which keeps the graph bipartite (every active worker w keeps w-1). Both are
 * the kit's graphs (protocols/graph.h: bipartite exponential, and the ring with its bipartite
 * filter), checked by configure and built by start. An active worker picks its peer uniformly
 * among its neighbours, from its own stream.
 *
 * Order of an update (PROTOCOLS 2.1, the paper's per-worker loop): read x-hat = x_i, compute
 * g on it, average x_i with a neighbour, x_i <- x_i - lr g; the next x-hat is read after that.
 * The average runs while g is computed (its exchange starts when the iteration does), so
 * computation never waits. When an iteration ends the worker counts it (the throughput is that
 * of gradient computation) and applies the gradient at once if it is not in an exchange; else
 * the gradient waits in its pending sum for the commit (a slow network, or a passive worker
 * serving). Then it starts the next iteration at once, on its parameters as they are then:
 * with exchanges shorter than an iteration, x-hat holds the worker's own last gradient. (An
 * earlier version started the exchange when the gradient was ready and applied the gradient
 * at the commit, so every gradient of an active worker was taken on a model without its
 * previous one: with momentum 0.9 that doubled the samples needed to reach a target accuracy,
 * see README.)
 *
 * Exchanges. An active worker sends a request of S bytes to a passive neighbour when it starts
 * an iteration, or, if its previous exchange is still open then, when that one commits. A passive
 * worker serves one requester at a time (the others wait in its FIFO queue: the atomicity lock) by
 * replying with a snapshot of its model, S bytes. The exchange commits when the reply is delivered:
 * the active worker sets x_i = (x_i + x_j) * 0.5 from the snapshot, the passive worker takes the
 * same bits (which (x_j + x_i) * 0.5 would give: float addition commutes), and each applies its
 * pending gradient sum in one optimizer step. A real passive worker would average when the request
 * arrives; here both models change together at the commit, so every average preserves the sum of
 * the models (up to rounding) at every instant, failures included. No copy of the request's model
 * is needed for that: x_i cannot change while its exchange is open (an active worker's model
 * changes only at its own commits and, outside exchanges, when a gradient is ready), so the request
 * travels without a snapshot (same bytes on the wire, half the snapshots in flight). Likewise a
 * serving passive worker leaves its model alone (its gradients wait in its pending sum), so the
 * snapshot it sent is still its model at the commit: the reply carries an alias of x_j
 * (SIM_PAYLOAD_PARAMS sends), never copied, which the runtime confirms in O(1) at the commit, and
 * both ends average and apply their pending sums in one pass (sim_ctx_step of a pair). (A passive
 * worker that failed and recovered while its reply was in flight may have written x_j: the
 * runtime then copied the reply on that write, and the commit averages with the copy.) Passive
 * workers never initiate: they apply their gradients after each average they serve, when they stop
 * serving with nobody queued, and directly at the end of an iteration while not serving. An active
 * worker has at most one exchange per iteration, so averaging keeps pace with computation.
 *
 * Deadlock freedom: active workers wait only for passive ones, which never wait. Failures
 * cannot stall it either. An exchange not committed within exchange_timeout_ms is abandoned and
 * the active worker retries with another neighbour (the same one if it has only one). The
 * default timeout is 4 (d + 1) transfers, d being the most active neighbours a passive worker
 * has and a transfer S bytes at the slowest path bandwidth of a graph edge plus the longest
 * path latency of one (at least 1 ms; paths as the context reports them, whatever the
 * topology): room for a full queue of d replies and d concurrent requests, twice over. Slower links
 * (link stragglers) need a larger value. A passive worker skips a queued request whose
 * requester has given up (as if it had closed its connection), and a reply that arrives after
 * its requester gave up changes neither model. A failed worker loses its pending gradients, its
 * exchange and its queue; it computes again when it recovers.
 */
#include <assert.h>
#include <math.h>
#include <stdlib.h>

#include "protocols/graph.h"
#include "protocols/msg.h"
#include "runtime/proto.h"
#include "sim/tensor.h"

enum {
    MSG_REQUEST = 1, /* active -> passive, S bytes; seq = the active's exchange number */
    MSG_REPLY = 2    /* passive -> active, S bytes and a snapshot of x_j; the same seq */
};

enum {
    EV_TIMEOUT = SIM_EV_USER /* dst = active worker, arg[0] = its exchange number */
};

enum {
    FLOAT_ALIGN = 16 /* floats per 64 bytes: accumulator rows stay aligned */
};

static const uint32_t NOBODY = UINT32_MAX;

typedef struct ad_request {
    uint32_t from; /* active worker */
    uint32_t seq;  /* its exchange number */
} ad_request;

typedef struct ad_worker {
    uint32_t pending; /* gradients summed in the accumulator, not yet applied */
    /* An active worker's exchange. */
    bool exchanging;
    uint32_t peer;      /* the passive worker asked */
    uint32_t seq;       /* attempts started so far; names messages and timers */
    bool owed;          /* the iteration in progress has had no exchange started yet */
    sim_time sent_ns;   /* when the attempt's request left */
    sim_time wait_ns;   /* when the exchange's first attempt left (retries keep it) */
    sim_event_id timer; /* the attempt's timeout */
    /* A passive worker's service. */
    uint32_t serving;     /* the requester whose reply is on its way, or NOBODY */
    uint32_t serving_seq; /* that requester's exchange number */
    sim_time serve_ns;    /* when the reply left */
    uint32_t qhead, qlen; /* FIFO in queue[g.off[w]..g.off[w+1]) */
} ad_worker;

typedef struct adpsgd {
    uint32_t n;              /* workers */
    int graph;               /* 0: bipartite exponential, 1: ring (bipartite) */
    graph_spec spec;         /* the graph, checked by configure */
    double timeout_ms;       /* exchange_timeout_ms as configured, 0: automatic */
    sim_time timeout_ns;     /* the timeout in force, set at start */
    graph g;                 /* built by start: neighbours ascending, other parity */
    ad_request *queue;       /* (g.edges) a passive worker's FIFO, one slot per neighbour */
    ad_worker *w;            /* (n) */
    size_t nparams;          /* floats per model, 0 when timing-only */
    float **acc;             /* (n) pending gradient sums, each nparams; NULL when timing-only */
    uint64_t bytes;          /* S */
    sim_time now_ns;         /* time of the last event handled */
    uint64_t exchanges;      /* committed exchanges */
    uint64_t cross;          /* ... between an odd active and an even passive worker */
    uint64_t timeouts;       /* attempts abandoned */
    uint64_t stale_requests; /* requests dropped because their requester had given up */
    uint64_t stale_replies;  /* replies that arrived after their requester gave up */
    uint64_t lost_gradients; /* pending gradients lost by failed workers */
    uint32_t max_queue;      /* longest queue of waiting requesters */
    sim_time max_wait_ns;    /* longest exchange, from its first request to its commit */
    sim_time max_serve_ns;   /* longest service, from the reply leaving to its end */
    double exchange_s;       /* summed duration of the committed attempts */
} adpsgd;

static bool is_passive(uint32_t w)
{
    return (w & 1) == 0;
}

static uint32_t degree(const adpsgd *st, uint32_t w)
{
    return graph_out_degree(&st->g, w);
}

/* ---- graph ---- */

/* Builds the graph and the per-worker state and queues. */
static int build_graph(adpsgd *st, sim_err *err)
{
    int rc = graph_init(&st->g, &st->spec, NULL, err);
    if (rc != SIM_OK)
        return rc;
    st->w = calloc(st->n, sizeof(*st->w));
    st->queue = calloc(st->g.edges > 0 ? st->g.edges : 1, sizeof(*st->queue));
    if (st->w == NULL || st->queue == NULL)
        return sim_err_set(err, SIM_ENOMEM, NULL, "out of memory");
    for (uint32_t w = 0; w < st->n; w++) {
        st->w[w].serving = NOBODY;
        st->w[w].peer = NOBODY;
    }
    return SIM_OK;
}

/* ---- configuration and start ---- */

static int ad_configure(void *state, sim_cfg *cfg, const sim_scenario *sc, sim_err *err)
{
    adpsgd *st = state;
    static const char *const graphs[] = { "exponential", "ring" };
    st->graph = 0;
    int rc = sim_cfg_choice(cfg, "graph", graphs, 2, &st->graph, err);
    st->timeout_ms = 0.0;
    if (rc == SIM_OK)
        rc = sim_cfg_double(cfg, "exchange_timeout_ms", 0.0, 3.6e6, &st->timeout_ms, err);
    if (rc != SIM_OK)
        return rc;
    st->n = sc->workers;
    /* AD-PSGD's graphs: the bipartite exponential one, or the ring with the edge joining
     * N-1 and 0 dropped for odd N (equal parities). */
    st->spec = st->graph == 0 ? (graph_spec){ .kind = GRAPH_BIPARTITE_EXPONENTIAL, .n = st->n }
                              : (graph_spec){ .kind = GRAPH_RING, .n = st->n, .bipartite = true };
    return graph_spec_check(&st->spec, err);
}

/* The graph, the queues, the workers and the pending-gradient accumulators. */
static uint64_t ad_memory(const void *state, const sim_scenario *sc, size_t num_params)
{
    const adpsgd *st = state;
    uint64_t stride = ((uint64_t)num_params + FLOAT_ALIGN - 1) / FLOAT_ALIGN * FLOAT_ALIGN;
    return graph_memory(&st->spec) + graph_edge_count(&st->spec) * sizeof(ad_request) +
           (uint64_t)sc->workers * (sizeof(ad_worker) + stride * sizeof(float));
}

static void ad_fini(void *state)
{
    adpsgd *st = state;
    graph_fini(&st->g);
    free(st->queue);
    free(st->w);
    for (uint32_t w = 0; st->acc != NULL && w < st->n; w++)
        sim_tensor_free(st->acc[w]);
    free(st->acc);
}

/* 4 (d + 1) transfers of S bytes at the slowest path bandwidth of an edge, plus the longest
 * path latency of an edge, or 1 ms if that is shorter (see the file comment). */
static sim_time auto_timeout(const adpsgd *st, const sim_ctx *ctx)
{
    sim_time lat = 0;
    double bw = INFINITY;
    for (uint32_t i = 0; i < st->n; i++)
        for (uint32_t k = st->g.off[i]; k < st->g.off[i + 1]; k++) {
            uint32_t j = st->g.adj[k];
            sim_time l = sim_ctx_path(ctx, i, j).latency_ns;
            lat = l > lat ? l : lat;
            bw = fmin(bw, sim_ctx_path(ctx, i, j).bandwidth_bps);
        }
    uint32_t d = 0;
    for (uint32_t w = 0; w < st->n; w += 2)
        d = degree(st, w) > d ? degree(st, w) : d;
    double t = 4.0 * (d + 1.0) * ((double)lat + (double)st->bytes * 8.0 / bw * 1e9);
    return t < 1e6 ? 1000000 : t > 1e18 ? (sim_time)1e18 : (sim_time)llround(t);
}

static int begin_iteration(adpsgd *st, sim_ctx *ctx, uint32_t w, sim_err *err);

static int ad_start(void *state, sim_ctx *ctx, sim_err *err)
{
    adpsgd *st = state;
    int rc = build_graph(st, err);
    if (rc != SIM_OK)
        return rc;
    st->bytes = sim_ctx_model_bytes(ctx);
    st->nparams = sim_ctx_num_params(ctx);
    st->timeout_ns =
        st->timeout_ms > 0 ? (sim_time)llround(st->timeout_ms * 1e6) : auto_timeout(st, ctx);
    if (st->nparams > 0) {
        st->acc = calloc(st->n, sizeof(*st->acc));
        if (st->acc == NULL)
            return sim_err_set(err, SIM_ENOMEM, NULL, "out of memory");
        for (uint32_t w = 0; w < st->n; w++)
            if ((st->acc[w] = sim_tensor_alloc(st->nparams)) == NULL)
                return sim_err_set(err, SIM_ENOMEM, NULL, "out of memory");
    }
    for (uint32_t w = 0; w < st->n; w++) {
        if (sim_ctx_down(ctx, w))
            continue;
        rc = begin_iteration(st, ctx, w, err);
        if (rc != SIM_OK)
            return rc;
    }
    return SIM_OK;
}

/* ---- gradients ---- */

static void add_gradient(adpsgd *st, sim_ctx *ctx, uint32_t w)
{
    ad_worker *a = &st->w[w];
    if (st->acc != NULL) {
        /* The first gradient is taken, not copied: the accumulator's buffer becomes the one
         * the next gradient is computed into. */
        if (a->pending == 0)
            st->acc[w] = sim_ctx_take_grad(ctx, w, st->acc[w]);
        else
            sim_tensor_axpy(st->acc[w], 1.0f, sim_ctx_grad(ctx, w), st->nparams);
    }
    a->pending++;
}

/* One optimizer step with worker w's pending gradient sum, if it has one. */
static void apply_pending(adpsgd *st, sim_ctx *ctx, uint32_t w)
{
    if (st->w[w].pending == 0)
        return;
    if (st->acc != NULL)
        sim_ctx_step(ctx, (sim_target){ .w = w }, NULL, st->acc[w]);
    st->w[w].pending = 0;
}

/* ---- exchanges ---- */

/* True while active worker i waits for passive worker j to serve its attempt `seq`. */
static bool waits_for(const adpsgd *st, uint32_t i, uint32_t j, uint32_t seq)
{
    const ad_worker *a = &st->w[i];
    return a->exchanging && a->peer == j && a->seq == seq;
}

/* Sends active worker i's request to a neighbour drawn uniformly from its stream: any
 * neighbour for a new exchange, any but the last peer for a retry. */
static int start_exchange(adpsgd *st, sim_ctx *ctx, uint32_t i, bool retry, sim_err *err)
{
    ad_worker *a = &st->w[i];
    uint32_t deg = degree(st, i);
    const uint32_t *nb = st->g.adj + st->g.off[i];
    if (deg == 0)
        return SIM_OK;
    uint32_t skip = deg, k = 0;
    for (uint32_t s = 0; retry && deg > 1 && s < deg; s++)
        if (nb[s] == a->peer)
            skip = s;
    gsl_rng *r = sim_ctx_rng(ctx, i);
    if (skip < deg) {
        k = (uint32_t)gsl_rng_uniform_int(r, deg - 1);
        k += k >= skip ? 1 : 0;
    } else if (deg > 1) {
        k = (uint32_t)gsl_rng_uniform_int(r, deg);
    }
    sim_time now = sim_ctx_now(ctx);
    a->peer = nb[k];
    a->seq++;
    a->exchanging = true;
    if (!retry)
        a->owed = false;
    a->sent_ns = now;
    if (!retry)
        a->wait_ns = now;
    msg_hdr h = { .kind = MSG_REQUEST, .seq = a->seq };
    int rc = msg_post(ctx, i, a->peer, st->bytes, h, msg_none(), err);
    if (rc == SIM_OK)
        rc = sim_ctx_timer(ctx, st->timeout_ns, EV_TIMEOUT, (int32_t)i, a->seq, &a->timer, err);
    return rc;
}

static int serve(adpsgd *st, sim_ctx *ctx, uint32_t j, uint32_t i, uint32_t seq, sim_err *err)
{
    st->w[j].serving = i;
    st->w[j].serving_seq = seq;
    st->w[j].serve_ns = sim_ctx_now(ctx);
    msg_hdr h = { .kind = MSG_REPLY, .seq = seq };
    return msg_post(ctx, j, i, st->bytes, h, msg_params(j), err); /* copied on write: never here */
}

/* Passive worker j is free: it serves the first queued requester still waiting, or applies
 * its pending gradients if there is none. */
static int serve_next(adpsgd *st, sim_ctx *ctx, uint32_t j, sim_err *err)
{
    ad_worker *p = &st->w[j];
    const ad_request *q = st->queue + st->g.off[j];
    sim_time served = sim_ctx_now(ctx) - p->serve_ns;
    st->max_serve_ns = served > st->max_serve_ns ? served : st->max_serve_ns;
    p->serving = NOBODY;
    while (p->qlen > 0) {
        ad_request r = q[p->qhead];
        p->qhead = (p->qhead + 1) % degree(st, j);
        p->qlen--;
        if (waits_for(st, r.from, j, r.seq))
            return serve(st, ctx, j, r.from, r.seq, err);
        st->stale_requests++;
    }
    apply_pending(st, ctx, j);
    return SIM_OK;
}

/* Queues a request at busy passive worker j, first dropping the requests given up. Each
 * live entry is a distinct neighbour other than i, so the queue never overflows. */
static void enqueue(adpsgd *st, uint32_t j, uint32_t i, uint32_t seq)
{
    ad_worker *p = &st->w[j];
    ad_request *q = st->queue + st->g.off[j];
    uint32_t cap = degree(st, j), kept = 0;
    for (uint32_t k = 0; k < p->qlen; k++) {
        ad_request r = q[(p->qhead + k) % cap];
        if (waits_for(st, r.from, j, r.seq))
            q[(p->qhead + kept++) % cap] = r;
        else
            st->stale_requests++;
    }
    assert(kept < cap);
    q[(p->qhead + kept) % cap] = (ad_request){ .from = i, .seq = seq };
    p->qlen = kept + 1;
    st->max_queue = p->qlen > st->max_queue ? p->qlen : st->max_queue;
}

static int on_request(adpsgd *st, sim_ctx *ctx, uint32_t j, uint32_t i, uint32_t seq, sim_err *err)
{
    if (!is_passive(j))
        return sim_err_set(err, SIM_EINVAL, NULL, "adpsgd: active worker %u got a request", j);
    if (!waits_for(st, i, j, seq)) {
        st->stale_requests++;
        return SIM_OK;
    }
    if (st->w[j].serving == NOBODY)
        return serve(st, ctx, j, i, seq, err);
    enqueue(st, j, i, seq);
    return SIM_OK;
}

/* The exchange of active worker i with passive worker j commits (see the file comment). */
static int commit(adpsgd *st, sim_ctx *ctx, uint32_t i, uint32_t j, sim_err *err)
{
    ad_worker *a = &st->w[i];
    if (st->nparams > 0) {
        const float *xj = sim_ctx_held(ctx, SIM_CTX_PAYLOAD);
        if (xj == NULL)
            return sim_err_set(err, SIM_EINVAL, NULL, "adpsgd: a reply without a model");
        if (sim_ctx_payload_is_params(ctx, j)) {
            /* The reply is still an alias of x_j (a serving passive worker writes nothing):
             * both ends take the average and apply their pending sums in one pass, and x_j
             * is never copied. */
            sim_ctx_release(ctx, SIM_CTX_PAYLOAD);
            sim_ctx_step(ctx,
                         (sim_target){ .kind = SIM_TARGET_PAIR,
                                       .w = i,
                                       .peer = j,
                                       .peer_grad = st->w[j].pending > 0 ? st->acc[j] : NULL },
                         NULL, st->w[i].pending > 0 ? st->acc[i] : NULL);
            st->w[i].pending = st->w[j].pending = 0;
        } else {
            /* x_j changed since the reply left (j failed and recovered meanwhile): the
             * snapshot counts, and j takes the same bits. */
            float *xi = sim_ctx_params(ctx, i);
            sim_tensor_average_into(xi, xj, st->nparams);
            sim_tensor_copy(sim_ctx_params(ctx, j), xi, st->nparams);
        }
    }
    sim_time now = sim_ctx_now(ctx);
    sim_ctx_cancel(ctx, a->timer);
    a->exchanging = false;
    st->exchanges++;
    st->cross += !is_passive(i) && is_passive(j) ? 1 : 0;
    st->exchange_s += (double)(now - a->sent_ns) / 1e9;
    st->max_wait_ns = now - a->wait_ns > st->max_wait_ns ? now - a->wait_ns : st->max_wait_ns;
    apply_pending(st, ctx, i);
    apply_pending(st, ctx, j);
    return SIM_OK;
}

static int on_reply(adpsgd *st, sim_ctx *ctx, uint32_t i, uint32_t j, uint32_t seq, sim_err *err)
{
    ad_worker *p = &st->w[j];
    if (p->serving != i || p->serving_seq != seq) {
        /* Sent before i failed and recovered; j was released when i failed. */
        st->stale_replies++;
        return SIM_OK;
    }
    int rc = SIM_OK;
    bool committed = waits_for(st, i, j, seq);
    if (committed)
        rc = commit(st, ctx, i, j, err);
    else
        st->stale_replies++;
    if (rc == SIM_OK)
        rc = serve_next(st, ctx, j, err);
    /* An iteration that started during the exchange gets its own at once. */
    if (rc == SIM_OK && committed && st->w[i].owed)
        rc = start_exchange(st, ctx, i, false, err);
    return rc;
}

static int on_timeout(adpsgd *st, sim_ctx *ctx, uint32_t i, uint32_t seq, sim_err *err)
{
    ad_worker *a = &st->w[i];
    if (!a->exchanging || a->seq != seq)
        return SIM_OK;
    st->timeouts++;
    a->exchanging = false;
    return start_exchange(st, ctx, i, true, err);
}

/* Worker w starts an iteration on its model as it is now (x-hat); an active worker starts
 * the iteration's exchange with it, unless one is still open (then at its commit). */
static int begin_iteration(adpsgd *st, sim_ctx *ctx, uint32_t w, sim_err *err)
{
    ad_worker *a = &st->w[w];
    int rc = sim_ctx_compute(ctx, w, 0, err);
    if (rc != SIM_OK || is_passive(w))
        return rc;
    a->owed = true;
    return a->exchanging ? SIM_OK : start_exchange(st, ctx, w, false, err);
}

/* A gradient is ready. It is applied at once unless its worker is in an exchange (an active
 * worker waiting for its reply, a passive one serving): then it waits in the pending sum for
 * the commit. */
static int on_computed(adpsgd *st, sim_ctx *ctx, uint32_t w, sim_err *err)
{
    ad_worker *a = &st->w[w];
    sim_ctx_count(ctx, w, 1);
    bool busy = is_passive(w) ? a->serving != NOBODY : a->exchanging;
    if (!busy && a->pending == 0) {
        if (st->acc != NULL)
            sim_ctx_step(ctx, (sim_target){ .w = w }, NULL, sim_ctx_grad(ctx, w));
    } else {
        add_gradient(st, ctx, w);
        if (!busy)
            apply_pending(st, ctx, w);
    }
    return begin_iteration(st, ctx, w, err);
}

/* Worker w failed: its pending gradients, exchange and queue are gone. A passive worker
 * replying to it has lost its reply with it and serves its next requester. */
static int on_down(adpsgd *st, sim_ctx *ctx, uint32_t w, sim_err *err)
{
    ad_worker *a = &st->w[w];
    st->lost_gradients += a->pending;
    a->pending = 0;
    if (is_passive(w)) {
        a->serving = NOBODY;
        a->qhead = a->qlen = 0;
        return SIM_OK;
    }
    if (a->exchanging)
        sim_ctx_cancel(ctx, a->timer);
    a->exchanging = false;
    for (uint32_t k = st->g.off[w]; k < st->g.off[w + 1]; k++) {
        uint32_t j = st->g.adj[k];
        if (st->w[j].serving == w) {
            int rc = serve_next(st, ctx, j, err);
            if (rc != SIM_OK)
                return rc;
        }
    }
    return SIM_OK;
}

static int ad_on_event(void *state, sim_ctx *ctx, const sim_event *ev, sim_err *err)
{
    adpsgd *st = state;
    uint32_t w = (uint32_t)ev->dst;
    st->now_ns = sim_ctx_now(ctx);
    switch (ev->kind) {
    case SIM_EV_COMPUTED:
        return on_computed(st, ctx, w, err);
    case SIM_EV_MSG: {
        msg_hdr h = msg_read(ev);
        if (h.kind == MSG_REQUEST)
            return on_request(st, ctx, w, (uint32_t)ev->src, (uint32_t)h.seq, err);
        if (h.kind == MSG_REPLY)
            return on_reply(st, ctx, w, (uint32_t)ev->src, (uint32_t)h.seq, err);
        break;
    }
    case EV_TIMEOUT:
        return on_timeout(st, ctx, w, (uint32_t)ev->arg[0], err);
    case SIM_EV_WORKER_DOWN:
        return on_down(st, ctx, w, err);
    case SIM_EV_WORKER_UP:
        return begin_iteration(st, ctx, w, err);
    default:
        break;
    }
    return sim_err_set(err, SIM_EINVAL, NULL, "adpsgd: unexpected event kind %u", ev->kind);
}

static void ad_report(const void *state, const sim_ctx *ctx, sim_report *out)
{
    (void)ctx;
    const adpsgd *st = state;
    sim_time wait = st->max_wait_ns, serve = st->max_serve_ns;
    uint32_t min_active = UINT32_MAX, max_passive = 0;
    for (uint32_t w = 0; w < st->n; w++) {
        const ad_worker *a = &st->w[w];
        /* Exchanges and services still open at the end count too. */
        if (a->exchanging && st->now_ns - a->wait_ns > wait)
            wait = st->now_ns - a->wait_ns;
        if (a->serving != NOBODY && st->now_ns - a->serve_ns > serve)
            serve = st->now_ns - a->serve_ns;
        if (is_passive(w))
            max_passive = degree(st, w) > max_passive ? degree(st, w) : max_passive;
        else
            min_active = degree(st, w) < min_active ? degree(st, w) : min_active;
    }
    sim_report_add(out, "exchanges", (double)st->exchanges);
    sim_report_add(out, "cross_parity_exchanges", (double)st->cross);
    sim_report_add(out, "timeouts", (double)st->timeouts);
    sim_report_add(out, "max_queue", st->max_queue);
    sim_report_add(out, "stale_requests", (double)st->stale_requests);
    sim_report_add(out, "stale_replies", (double)st->stale_replies);
    sim_report_add(out, "lost_gradients", (double)st->lost_gradients);
    sim_report_add(out, "mean_exchange_s",
                   st->exchanges > 0 ? st->exchange_s / (double)st->exchanges : 0.0);
    sim_report_add(out, "max_wait_s", (double)wait / 1e9);
    sim_report_add(out, "max_serve_s", (double)serve / 1e9);
    sim_report_add(out, "exchange_timeout_s", (double)st->timeout_ns / 1e9);
    sim_report_add(out, "min_active_degree", min_active == UINT32_MAX ? 0.0 : min_active);
    sim_report_add(out, "max_passive_degree", max_passive);
}

const proto_ops proto_adpsgd = {
    .name = "adpsgd",
    .summary = "AD-PSGD: wait-free pairwise gossip averaging on a bipartite exponential graph",
    .state_size = sizeof(adpsgd),
    .configure = ad_configure,
    .start = ad_start,
    .on_event = ad_on_event,
    .report = ad_report,
    .memory = ad_memory,
    .fini = ad_fini,
};
