/* AD-PSGD: asynchronous decentralized parallel SGD (PROTOCOLS §2, Lian et al., ICML 2018).
 *
 * Graph. Even workers are passive, odd workers active. Edges join workers at ring offsets ±1
 * and, with graph "exponential" (the default), ±(1 + 2^m) for m = 1..floor(log2(N-1)): the
 * bipartite exponential graph of the SGP reproduction. Graph "ring" keeps ±1 only. All offsets
 * are odd, so for even N every edge joins an active and a passive worker. For odd N the ring
 * wraps from N-1 to 0, both even, and some offsets join workers of equal parity: those edges
 * are dropped, which keeps the graph bipartite (every active worker w keeps w-1). Both are
 * the kit's graphs (kit/graph.h: bipartite exponential, and the ring with its bipartite
 * filter), checked by configure and built by start. An active worker picks its peer uniformly
 * among its neighbours, from its own stream.
 *
 * Order of an update (PROTOCOLS 2.1, the paper's per-worker loop): read x-hat = x_i, compute
 * g on it, average x_i with a neighbour, x_i <- x_i - lr g; the next x-hat is read after that.
 * The average runs while g is computed (its exchange starts when the iteration does), so
 * computation never waits. When an iteration ends the worker counts it (the throughput is that
 * of gradient computation), applies the gradient at once, in an exchange or not, and starts
 * the next iteration at once, on its parameters as they are then: x-hat always holds the
 * worker's own last gradient, whatever the message size. An exchange averages the two models
 * as they were sent, each end keeping the steps it took since on top (below). (Earlier, a
 * gradient ready during an exchange waited in a pending sum for the commit, so with messages
 * slower than an iteration the next gradient was taken on a model without it: 190k samples to
 * 0.82 against 84k with 1 MB, issue 39; and before that the exchange started when the
 * gradient was ready, which did the same at any size: see docs/comparisons.md.)
 *
 * Exchanges. An active worker sends a request of S bytes, its model x_i as it is then, to a
 * passive neighbour when it starts an iteration, or, if its previous exchange is still open then,
 * when that one commits. A passive worker serves one requester at a time (the others wait in its
 * FIFO queue: the atomicity lock) by replying with its model x_j, S bytes. The exchange commits
 * when the reply is delivered: with the models as sent, s_i and s_j, and a = (s_i + s_j) * 0.5,
 * the active worker sets x_i := a + (x_i - s_i) and the passive one x_j := a + (x_j - s_j): the
 * pair's average, each end keeping the steps it took since it sent (a gradient applied during
 * the exchange is applied after the average, as the paper's order has it). A real passive worker
 * would average when the request arrives; here both models change together at the commit, so
 * every average preserves the sum of the models (up to rounding) at every instant, failures
 * included. The snapshots cost a copy only when needed: the active worker keeps a copy of x_i as
 * it sent it (sim_ctx_snapshot) before its first step during the exchange, none if it takes no
 * step; the reply carries an alias of x_j (a SIM_PAYLOAD_PARAMS send), which the runtime copies
 * only if j steps while it is in flight, and confirms in O(1) at the commit otherwise. When
 * neither end stepped, both take the same bits a ((x_j + x_i) * 0.5 would give them too: float
 * addition commutes) in one pass (sim_ctx_step of a pair). Passive workers never initiate. An
 * active worker has at most one exchange per iteration, so averaging keeps pace with computation.
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
 * its requester gave up changes neither model. A failed worker loses its exchange and its
 * queue; it computes again when it recovers.
 */
#include <math.h>
#include <stdlib.h>

#include "kit/msg.h"
#include "protocols/adpsgd_state.h"
#include "runtime/proto.h"
#include "sim/tensor.h"

/* ---- buffers ---- */

/* The run's arena: the kit's graph and the passive workers' queues, one slot per edge. */
static void ad_buffers(void *state, sim_arena *a, size_t num_params)
{
    adpsgd *st = state;
    (void)num_params;
    graph_reserve(&st->g, a, &st->spec);
    st->queue = sim_arena_alloc(a, graph_edge_count(&st->spec), sizeof(*st->queue));
}

/* ---- configuration and start ---- */

static int ad_configure(void *state, sim_cfg *cfg, const proto_setup *setup, sim_err *err)
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
    st->n = setup->workers;
    /* AD-PSGD's graphs: the bipartite exponential one, or the ring with the edge joining
     * N-1 and 0 dropped for odd N (equal parities). */
    st->spec = st->graph == 0 ? (graph_spec){ .kind = GRAPH_BIPARTITE_EXPONENTIAL, .n = st->n }
                              : (graph_spec){ .kind = GRAPH_RING, .n = st->n, .bipartite = true };
    return graph_spec_check(&st->spec, err);
}

/* Outside the arena: each active worker's snapshot of its model as its request sent it. */
static uint64_t ad_memory(const void *state, size_t num_params)
{
    const adpsgd *st = state;
    return (uint64_t)(st->n / 2) * proto_snapshot_bytes(num_params);
}

/* Each passive worker's reply (an alias of its model) is copied if it steps while the reply is
 * in flight: one at a time per passive worker. */
static uint64_t ad_copies(const void *state)
{
    const adpsgd *st = state;
    return (st->n + 1) / 2;
}

/* One transfer of S bytes alone over the graph edge whose path is slowest: its latency plus S at
 * its bandwidth, the longest latency and the lowest bandwidth of any edge taken. */
static double slowest_transfer_ns(const adpsgd *st, const sim_ctx *ctx)
{
    sim_time lat = 0;
    double bw = INFINITY;
    for (uint32_t i = 0; i < st->n; i++)
        for (uint32_t k = st->g.off[i]; k < st->g.off[i + 1]; k++) {
            uint32_t j = st->g.adj[k];
            sim_path p = sim_ctx_path(ctx, i, j);
            lat = p.latency_ns > lat ? p.latency_ns : lat;
            bw = fmin(bw, p.bandwidth_bps);
        }
    return (double)lat + (double)st->bytes * 8.0 / bw * 1e9;
}

/* 4 (d + 1) transfers of S bytes at the slowest path bandwidth of an edge, plus the longest
 * path latency of an edge, or 1 ms if that is shorter (see the file comment). */
static sim_time auto_timeout(const adpsgd *st, const sim_ctx *ctx)
{
    uint32_t d = 0;
    for (uint32_t w = 0; w < st->n; w += 2)
        d = ad_degree(st, w) > d ? ad_degree(st, w) : d;
    double t = 4.0 * (d + 1.0) * slowest_transfer_ns(st, ctx);
    return t < 1e6 ? 1000000 : t > 1e18 ? (sim_time)1e18 : (sim_time)llround(t);
}

/* The timeout in force: exchange_timeout_ms, which must leave room for a request and its reply
 * over the slowest edge alone (shorter, no exchange over it could ever commit: every attempt
 * would be abandoned and retried while its messages still flow), or the automatic one. */
static int set_timeout(adpsgd *st, const sim_ctx *ctx, sim_err *err)
{
    if (st->timeout_ms <= 0) {
        st->timeout_ns = auto_timeout(st, ctx);
        return SIM_OK;
    }
    st->timeout_ns = (sim_time)llround(st->timeout_ms * 1e6);
    double pair = st->n > 1 ? 2.0 * slowest_transfer_ns(st, ctx) : 0.0;
    if ((double)st->timeout_ns < pair)
        return sim_err_set(err, SIM_ESCENARIO, "$.protocol.exchange_timeout_ms",
                           "%g ms is shorter than a request and its reply over the slowest edge "
                           "alone (%.6g ms): no exchange over it could commit; give at least "
                           "that, or leave it out (automatic)",
                           st->timeout_ms, pair / 1e6);
    return SIM_OK;
}

static int begin_iteration(adpsgd *st, sim_ctx *ctx, uint32_t w, sim_err *err);

static int ad_start(void *state, sim_ctx *ctx, sim_err *err)
{
    adpsgd *st = state;
    int rc = graph_build(&st->g, &st->spec, NULL, err);
    if (rc != SIM_OK)
        return rc;
    for (uint32_t w = 0; w < st->n; w++) {
        ad_worker *a = sim_ctx_worker(ctx, w);
        a->serving = AD_NOBODY;
        a->peer = AD_NOBODY;
        a->snap = SIM_CTX_NO_SNAPSHOT;
    }
    st->bytes = sim_ctx_layer_bytes(ctx, SIM_LAYERS_ALL);
    st->nparams = sim_ctx_num_params(ctx);
    rc = set_timeout(st, ctx, err);
    if (rc != SIM_OK)
        return rc;
    for (uint32_t w = 0; w < st->n; w++) {
        if (sim_ctx_down(ctx, w))
            continue;
        rc = begin_iteration(st, ctx, w, err);
        if (rc != SIM_OK)
            return rc;
    }
    return SIM_OK;
}

/* Worker w starts an iteration on its model as it is now (x-hat); an active worker starts
 * the iteration's exchange with it, unless one is still open (then at its commit). */
static int begin_iteration(adpsgd *st, sim_ctx *ctx, uint32_t w, sim_err *err)
{
    ad_worker *a = sim_ctx_worker(ctx, w);
    int rc = sim_ctx_compute(ctx, w, 0, err);
    if (rc != SIM_OK || ad_passive(w))
        return rc;
    a->owed = true;
    return a->exchanging ? SIM_OK : ad_start_exchange(st, ctx, w, false, err);
}

/* A gradient is ready: applied at once, in an exchange or not (see the file comment). */
static int on_computed(adpsgd *st, sim_ctx *ctx, uint32_t w, sim_err *err)
{
    sim_ctx_count(ctx, w, 1);
    int rc = ad_apply_gradient(st, ctx, w, err);
    return rc != SIM_OK ? rc : begin_iteration(st, ctx, w, err);
}

/* Worker w failed: its exchange and queue are gone. A passive worker replying to it has lost
 * its reply with it and serves its next requester. */
static int on_down(adpsgd *st, sim_ctx *ctx, uint32_t w, sim_err *err)
{
    ad_worker *a = sim_ctx_worker(ctx, w);
    if (ad_passive(w)) {
        a->serving = AD_NOBODY;
        a->qhead = a->qlen = 0;
        return SIM_OK;
    }
    if (a->exchanging)
        sim_ctx_cancel(ctx, a->timer);
    ad_end_exchange(ctx, w);
    for (uint32_t k = st->g.off[w]; k < st->g.off[w + 1]; k++) {
        uint32_t j = st->g.adj[k];
        if (((ad_worker *)sim_ctx_worker(ctx, j))->serving == w) {
            int rc = ad_serve_next(st, ctx, j, err);
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
            return ad_on_request(st, ctx, w, (uint32_t)ev->src, (uint32_t)h.seq, err);
        if (h.kind == MSG_REPLY)
            return ad_on_reply(st, ctx, w, (uint32_t)ev->src, (uint32_t)h.seq, err);
        break;
    }
    case EV_TIMEOUT:
        return ad_on_timeout(st, ctx, w, (uint32_t)ev->arg[0], err);
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
        const ad_worker *a = sim_ctx_worker(ctx, w);
        /* Exchanges and services still open at the end count too. */
        if (a->exchanging && st->now_ns - a->wait_ns > wait)
            wait = st->now_ns - a->wait_ns;
        if (a->serving != AD_NOBODY && st->now_ns - a->serve_ns > serve)
            serve = st->now_ns - a->serve_ns;
        if (ad_passive(w))
            max_passive = ad_degree(st, w) > max_passive ? ad_degree(st, w) : max_passive;
        else
            min_active = ad_degree(st, w) < min_active ? ad_degree(st, w) : min_active;
    }
    sim_report_add(out, "exchanges", (double)st->exchanges);
    sim_report_add(out, "cross_parity_exchanges", (double)st->cross);
    sim_report_add(out, "timeouts", (double)st->timeouts);
    sim_report_add(out, "max_queue", st->max_queue);
    sim_report_add(out, "stale_requests", (double)st->stale_requests);
    sim_report_add(out, "stale_replies", (double)st->stale_replies);
    sim_report_add(out, "moved_exchange_ends", (double)st->moved_ends);
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
    .worker_size = sizeof(ad_worker),
    .configure = ad_configure,
    .start = ad_start,
    .on_event = ad_on_event,
    .buffers = ad_buffers,
    .report = ad_report,
    .memory = ad_memory,
    .copies = ad_copies,
};
