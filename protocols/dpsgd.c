/* D-PSGD: synchronous decentralized SGD over a fixed graph (PROTOCOLS §1.4).
 *
 * Worker i, iteration k: it sends a snapshot of its model x_{k,i} (S bytes) to every
 * neighbour and starts computing its gradient g on x_{k,i} at once. It finishes the
 * iteration when the gradient is done and every neighbour's iteration-k model has arrived:
 * x_{k+1,i} = W_ii x_{k,i} + sum_j W_ij x_{k,j}, then one optimizer step with g through
 * sim_ctx_step (so momentum, when configured, is per worker), and iteration k+1 begins.
 *
 * Graphs (parameter "graph"; neighbour lists are sorted and deduplicated, self excluded):
 *   ring         i-1 and i+1 (mod N): one neighbour when N = 2, none when N = 1.
 *   torus        rows x cols with wrap-around, worker w at (w / cols, w % cols); "rows"
 *                defaults to the largest divisor of N not above sqrt(N) (16: 4 x 4, 12: 3 x 4;
 *                a prime N gives 1 x N, the ring) and must divide N when given.
 *   exponential  i +- 2^m (mod N) for m = 0..floor(log2(N-1)), undirected.
 *   complete     every other worker.
 *   star         worker 0 linked to every other worker (irregular: hub degree N-1).
 * Weights (parameter "weights"): "metropolis" gives W_ij = 1/(1 + max(d_i, d_j)) on each
 * edge, "uniform" 1/(d+1) and needs every degree equal; W_ii = 1 - sum_j W_ij. Both are
 * symmetric and doubly stochastic, and equal 1/3 on the ring. Each W_ij is rounded to float
 * once from the same formula on both ends, so the float matrix stays exactly symmetric.
 *
 * Accumulators: a neighbour can be one iteration ahead, never more (below), so a message
 * carries iteration k or k+1 of its receiver, and each worker keeps two accumulators
 * indexed by iteration parity; W_ij x_j is added as each model arrives (in arrival order,
 * which is deterministic), and W_ii x_i last. Nothing is allocated after start.
 *
 * Gap bound: on an edge both ends have joined (below), neither end can finish iteration m
 * without the other's iteration-m model, which is sent when that end starts m; so the ends
 * never differ by more than one iteration, and two workers by more than their graph
 * distance. Each start checks its joined edges; the report's max_neighbour_gap is the
 * largest gap seen.
 *
 * Failures. A worker that goes down loses its iteration and its accumulators. Its
 * neighbours stop waiting for it at once: for as long as it is down (and while it
 * rejoins) they mix without it, W_ii absorbing its weight, so rows still sum to 1 and W
 * restricted to the live workers stays symmetric: with zero gradients the mean over live
 * workers is invariant while membership does not change. A model that arrived before the
 * failure is still mixed (what arrived is data).
 *
 * Recovery. The recovered worker asks its most advanced running neighbour (highest
 * iteration, then lowest id) for its current model, with a zero-byte request answered by
 * an S-byte reply; if that neighbour fails first, it asks another; with no running
 * neighbour it runs alone (plain SGD) from its own iteration. It adopts the model it gets
 * (keeping its own momentum buffer) and rejoins: the edge to each running neighbour j is
 * used again from j's next iteration, or the one after if j already holds the worker's
 * model of that next iteration, sent before the failure (j will mix that one); the worker
 * resumes at the smallest of these iterations. A neighbour can then be more than one
 * iteration ahead of it: such a neighbour holds its model back until the worker is within
 * one iteration (flow control that never triggers without failures; deferred_sends in the
 * report) and waits for it, as behind a straggler. No deadlock: the running worker with the
 * smallest iteration has every model it waits for sent or on its way, so it finishes, and
 * a run stalls only when every worker is down.
 *
 * The graphs and weights are the kit's (kit/graph.h); configure checks the graph's
 * size and degrees without building it, start builds it. Limits: at most MAX_SLOTS directed
 * edges in all (the complete graph on 5793 workers).
 */
#include <stdint.h>

#include "kit/msg.h"
#include "kit/rejoin.h"
#include "protocols/dpsgd_state.h"
#include "runtime/proto.h"
#include "sim/tensor.h"

/* Messages are the protocol's own (channel 0), with the sender's iteration as sequence. */
static msg_hdr hdr(uint32_t kind, uint64_t k)
{
    msg_hdr h = { .channel = 0, .kind = kind, .seq = k };
    return h;
}

/* ---- the protocol ---- */

static uint8_t got_bit(uint64_t k)
{
    return (k & 1) != 0 ? GOT_ODD : GOT_EVEN;
}

/* Worker w's state, for the handler acting for w (sim_ctx_worker). */
static dp_worker *own(sim_ctx *ctx, uint32_t w)
{
    return sim_ctx_worker(ctx, w);
}

/* Neighbour j's state, read without a message (sim_ctx_peer): whether it runs and its
 * iteration, for flow control and rejoins. */
static const dp_worker *peer(sim_ctx *ctx, uint32_t j)
{
    return sim_ctx_peer(ctx, j);
}

static bool running(const dp_worker *a)
{
    return a->state == DP_RUNNING;
}

/* The end at edge slot e waits for its neighbour's model of iteration k: the edge is used at k
 * and that model is not in. */
static bool awaits(const dpsgd *st, uint32_t e, uint64_t k)
{
    return st->act[e] <= k && (st->flags[e] & got_bit(k)) == 0;
}

/* Whether neighbour j runs, and its iteration in *k (sim_ctx_peer): for flow control, and the
 * kit's choice of the neighbour a recovered worker asks (dp_rejoin). */
static bool progress(sim_ctx *ctx, uint32_t j, uint64_t *k)
{
    const dp_worker *b = peer(ctx, j);
    *k = b->k;
    return running(b);
}

static float *acc_of(dpsgd *st, uint32_t i, uint64_t k)
{
    return st->acc + ((size_t)i * 2 + (size_t)(k & 1)) * st->nparams;
}

/* Sends worker i's current model (that of its iteration k) to j, tagged k. */
static int send_model(dpsgd *st, sim_ctx *ctx, uint32_t i, uint32_t j, sim_err *err)
{
    st->models_sent++;
    return msg_post(ctx, i, j, st->bytes, hdr(MSG_MODEL, own(ctx, i)->k), msg_params(i), err);
}

/* Starts iteration k on worker i: counts the models it waits for, sends its own (or holds
 * it back from a neighbour more than one iteration behind), releases the neighbours' models
 * held back for it, and starts the gradient. */
static int start_iteration(dpsgd *st, sim_ctx *ctx, uint32_t i, uint64_t k, sim_err *err)
{
    dp_worker *a = own(ctx, i);
    a->k = k;
    a->computed = false;
    a->need = 0;
    for (uint32_t e = st->g.off[i]; e < st->g.off[i + 1]; e++) {
        uint32_t j = st->g.adj[e];
        uint64_t kj;
        if (!progress(ctx, j, &kj))
            continue;
        int rc = SIM_OK;
        if (st->act[e] <= k) {
            a->need += awaits(st, e, k) ? 1 : 0;
            if (kj + 1 >= k) {
                rc = send_model(st, ctx, i, j, err);
            } else {
                st->flags[e] |= DEFERRED;
                st->deferred++;
            }
            uint64_t gap = k > kj ? k - kj : kj - k;
            if (kj >= st->act[e] && gap > st->max_gap)
                st->max_gap = gap;
        }
        uint32_t back = st->g.rev[e];
        if (rc == SIM_OK && (st->flags[back] & DEFERRED) != 0 && kj <= k + 1) {
            st->flags[back] &= (uint8_t)~DEFERRED;
            rc = send_model(st, ctx, j, i, err);
        }
        if (rc != SIM_OK)
            return rc;
    }
    return sim_ctx_compute(ctx, i, k, err);
}

/* Finishes worker i's iteration if its gradient is done and every expected model is in:
 * mixes (the weight of every neighbour whose model is missing goes to W_ii), steps, counts,
 * and starts the next iteration. */
static int try_finish(dpsgd *st, sim_ctx *ctx, uint32_t i, sim_err *err)
{
    dp_worker *a = own(ctx, i);
    if (a->state != DP_RUNNING || !a->computed || a->need > 0)
        return SIM_OK;
    uint8_t got = got_bit(a->k);
    double missing = 0.0;
    size_t arrived = 0;
    for (uint32_t e = st->g.off[i]; e < st->g.off[i + 1]; e++) {
        if ((st->flags[e] & got) != 0) {
            arrived++;
            st->flags[e] &= (uint8_t)~got;
        } else {
            missing += (double)st->weight[e];
        }
    }
    if (missing > 0.0)
        st->degraded++;
    if (st->nparams > 0) {
        float *params = sim_ctx_params(ctx, i);
        if (arrived > 0) { /* else W_ii is 1: nothing to mix */
            float *acc = acc_of(st, i, a->k);
            sim_tensor_axpy(acc, (float)((double)st->self[i] + missing), params, st->nparams);
            sim_tensor_copy(params, acc, st->nparams);
            sim_tensor_zero(acc, st->nparams);
        }
        sim_ctx_step(ctx, (sim_target){ .w = i }, NULL, sim_ctx_grad(ctx, i));
    }
    st->mixes++;
    sim_ctx_count(ctx, i, 1);
    return start_iteration(st, ctx, i, a->k + 1, err);
}

/* ---- failures: the kit's rejoin service (dp_rejoin) fetches a recovered worker's model ---- */

/* The reply of neighbour j, which runs, to a recovered worker: its iteration as the tag. */
static bool reply_to_rejoin(sim_ctx *ctx, uint32_t j, msg_hdr *h)
{
    *h = hdr(MSG_REPLY, own(ctx, j)->k);
    return running(own(ctx, j));
}

/* Recovered worker r adopted its neighbour's model: set each edge's first iteration, resume. */
static int rejoin_at(void *owner, sim_ctx *ctx, uint32_t r, sim_err *err)
{
    dpsgd *st = owner;
    uint64_t k = UINT64_MAX;
    for (uint32_t e = st->g.off[r]; e < st->g.off[r + 1]; e++) {
        uint32_t back = st->g.rev[e];
        uint64_t kj;
        if (!progress(ctx, st->g.adj[e], &kj))
            continue;
        uint64_t from = kj + 1 + ((st->flags[back] & got_bit(kj + 1)) != 0 ? 1 : 0);
        st->act[e] = st->act[back] = from;
        k = from < k ? from : k;
    }
    if (k == UINT64_MAX)
        k = own(ctx, r)->k; /* not reached: the source is running */
    own(ctx, r)->state = DP_RUNNING;
    return start_iteration(st, ctx, r, k, err);
}

/* Recovered worker r has no running neighbour: it runs alone from its own iteration. */
static int rejoin_alone(void *st, sim_ctx *ctx, uint32_t r, sim_err *err)
{
    own(ctx, r)->state = DP_RUNNING;
    return start_iteration(st, ctx, r, own(ctx, r)->k, err);
}

/* Neighbour i (its slot `back` toward d) is told that d failed: it takes back a model it held
 * back from d, and if d ran, no longer waits for d's model. */
static int notice_down(void *owner, sim_ctx *ctx, uint32_t i, uint32_t back, bool ran, sim_err *err)
{
    dpsgd *st = owner;
    dp_worker *b = own(ctx, i);
    st->flags[back] &= (uint8_t)~DEFERRED;
    if (!ran || b->state != DP_RUNNING || !awaits(st, back, b->k))
        return SIM_OK;
    b->need--;
    return try_finish(st, ctx, i, err);
}

static const rejoin_ops dp_rejoin = {
    .name = "dpsgd",
    .mode = REJOIN_AHEAD,
    .ask = MSG_FETCH,
    .ask_bytes = 0,
    .progress = progress,
    .reply = reply_to_rejoin,
    .fetched = rejoin_at,
    .alone = rejoin_alone,
    .notice = notice_down,
};

/* Worker d failed: it loses its iteration and accumulators; the kit tells its neighbours
 * (notice_down), and those fetching from it ask another. */
static int on_down(dpsgd *st, sim_ctx *ctx, uint32_t d, sim_err *err)
{
    dp_worker *a = own(ctx, d);
    *a = (dp_worker){ .k = a->k, .state = DP_DOWN }; /* computes nothing, waits for nothing */
    if (st->nparams > 0)
        sim_tensor_zero(acc_of(st, d, 0), 2 * st->nparams);
    for (uint32_t e = st->g.off[d]; e < st->g.off[d + 1]; e++)
        st->flags[e] = 0;
    return rejoin_worker_failed(st->rj, ctx, d, err);
}

static int protocol_error(sim_err *err, const char *what, uint32_t w, uint32_t src, uint64_t tag)
{
    return sim_err_set(err, SIM_EINVAL, NULL,
                       "dpsgd: worker %u got an unexpected %s from %u (tag %llu)", w, what, src,
                       (unsigned long long)tag);
}

static int on_model(dpsgd *st, sim_ctx *ctx, uint32_t i, uint32_t j, uint64_t m, sim_err *err)
{
    dp_worker *a = own(ctx, i);
    uint32_t e = graph_slot(&st->g, i, j);
    uint8_t got = got_bit(m);
    if (a->state != DP_RUNNING || e == GRAPH_NONE || (m != a->k && m != a->k + 1) ||
        (st->flags[e] & got) != 0 || (m == a->k && a->need == 0))
        return protocol_error(err, "model", i, j, m);
    st->flags[e] |= got;
    if (st->nparams > 0)
        sim_tensor_axpy(acc_of(st, i, m), st->weight[e], sim_ctx_held(ctx, SIM_CTX_PAYLOAD),
                        st->nparams);
    if (m != a->k)
        return SIM_OK; /* one iteration ahead: kept for the next */
    a->need--;
    return try_finish(st, ctx, i, err);
}

static int on_message(dpsgd *st, sim_ctx *ctx, const sim_event *ev, sim_err *err)
{
    uint32_t dst = (uint32_t)ev->dst, src = (uint32_t)ev->src;
    msg_hdr h = msg_read(ev);
    switch (h.kind) {
    case MSG_MODEL:
        return on_model(st, ctx, dst, src, h.seq, err);
    case MSG_FETCH:
        return rejoin_on_ask(st->rj, ctx, ev, err);
    case MSG_REPLY:
        return rejoin_on_answer(st->rj, ctx, ev, err);
    default:
        return protocol_error(err, "message", dst, src, h.seq);
    }
}

static int dp_start(void *state, sim_ctx *ctx, sim_err *err)
{
    dpsgd *st = state;
    int rc = dp_build_graph(st, err);
    if (rc != SIM_OK)
        return rc;
    st->bytes = sim_ctx_layer_bytes(ctx, SIM_LAYERS_ALL);
    st->nparams = sim_ctx_num_params(ctx);
    rc = rejoin_serve(st->rj, &dp_rejoin, &st->g, st, err);
    if (rc != SIM_OK)
        return rc;
    for (uint32_t w = 0; w < st->n; w++)
        own(ctx, w)->state = sim_ctx_down(ctx, w) ? DP_DOWN : DP_RUNNING;
    for (uint32_t w = 0; w < st->n; w++) {
        if (!running(own(ctx, w)))
            continue;
        rc = start_iteration(st, ctx, w, 0, err);
        if (rc != SIM_OK)
            return rc;
    }
    return SIM_OK;
}

static int dp_on_event(void *state, sim_ctx *ctx, const sim_event *ev, sim_err *err)
{
    dpsgd *st = state;
    uint32_t w = (uint32_t)ev->dst;
    switch (ev->kind) {
    case SIM_EV_COMPUTED:
        if (!running(own(ctx, w)) || ev->arg[0] != own(ctx, w)->k)
            return protocol_error(err, "gradient", w, w, ev->arg[0]);
        own(ctx, w)->computed = true;
        return try_finish(st, ctx, w, err);
    case SIM_EV_MSG:
        return on_message(st, ctx, ev, err);
    case SIM_EV_WORKER_DOWN:
        return on_down(st, ctx, w, err);
    case SIM_EV_WORKER_UP: /* it fetches a neighbour's model, or runs alone */
        own(ctx, w)->state = DP_FETCHING;
        return rejoin_fetch(st->rj, ctx, w, own(ctx, w)->k, err);
    default:
        return sim_err_set(err, SIM_EINVAL, NULL, "dpsgd: unexpected event kind %u", ev->kind);
    }
}

static void dp_report(const void *state, const sim_ctx *ctx, sim_report *out)
{
    (void)ctx;
    const dpsgd *st = state;
    sim_report_add(out, "max_neighbour_gap", (double)st->max_gap);
    sim_report_add(out, "mixes", (double)st->mixes);
    sim_report_add(out, "degraded_mixes", (double)st->degraded);
    sim_report_add(out, "models_sent", (double)st->models_sent);
    sim_report_add(out, "deferred_sends", (double)st->deferred);
    sim_report_add(out, "rejoins", st->rj != NULL ? (double)rejoin_fetched(st->rj) : 0.0);
    sim_report_add(out, "edges", (double)(st->g.edges / 2));
    sim_report_add(out, "max_degree", (double)st->max_degree);
    if (dp_graph_kinds[st->graph] == GRAPH_TORUS) {
        sim_report_add(out, "torus_rows", (double)st->rows);
        sim_report_add(out, "torus_cols", (double)st->cols);
    }
}

const proto_ops proto_dpsgd = {
    .name = "dpsgd",
    .summary = "D-PSGD: synchronous gossip, mix neighbours' models with W each iteration",
    .state_size = sizeof(dpsgd),
    .worker_size = sizeof(dp_worker),
    .configure = dp_configure,
    .start = dp_start,
    .on_event = dp_on_event,
    .buffers = dp_buffers,
    .report = dp_report,
    .copies = dp_copies,
};
