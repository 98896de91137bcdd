/* AD-PSGD's pairwise exchanges and pending gradients (see protocols/adpsgd.c). */
#include <assert.h>

#include "protocols/adpsgd_state.h"
#include "protocols/msg.h"
#include "sim/tensor.h"

/* ---- gradients ---- */

void ad_add_gradient(adpsgd *st, sim_ctx *ctx, uint32_t w)
{
    ad_worker *a = sim_ctx_worker(ctx, w);
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
void ad_apply_pending(adpsgd *st, sim_ctx *ctx, uint32_t w)
{
    ad_worker *a = sim_ctx_worker(ctx, w);
    if (a->pending == 0)
        return;
    if (st->acc != NULL)
        sim_ctx_step(ctx, (sim_target){ .w = w }, NULL, st->acc[w]);
    a->pending = 0;
}

/* ---- exchanges ---- */

/* True while active worker a (its state) waits for passive worker j to serve its attempt `seq`.
 * Passive workers read their requesters' states so (sim_ctx_peer), as if a requester that gave
 * up had closed its connection. */
static bool waits_for(const ad_worker *a, uint32_t j, uint32_t seq)
{
    return a->exchanging && a->peer == j && a->seq == seq;
}

/* Sends active worker i's request to a neighbour drawn uniformly from its stream: any
 * neighbour for a new exchange, any but the last peer for a retry. */
int ad_start_exchange(adpsgd *st, sim_ctx *ctx, uint32_t i, bool retry, sim_err *err)
{
    ad_worker *a = sim_ctx_worker(ctx, i);
    uint32_t deg = ad_degree(st, i);
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
    (void)st;
    ad_worker *p = sim_ctx_worker(ctx, j);
    p->serving = i;
    p->serving_seq = seq;
    p->serve_ns = sim_ctx_now(ctx);
    msg_hdr h = { .kind = MSG_REPLY, .seq = seq };
    return msg_post(ctx, j, i, st->bytes, h, msg_params(j), err); /* copied on write: never here */
}

/* Passive worker j is free: it serves the first queued requester still waiting, or applies
 * its pending gradients if there is none. */
int ad_serve_next(adpsgd *st, sim_ctx *ctx, uint32_t j, sim_err *err)
{
    ad_worker *p = sim_ctx_worker(ctx, j);
    const ad_request *q = st->queue + st->g.off[j];
    sim_time served = sim_ctx_now(ctx) - p->serve_ns;
    st->max_serve_ns = served > st->max_serve_ns ? served : st->max_serve_ns;
    p->serving = AD_NOBODY;
    while (p->qlen > 0) {
        ad_request r = q[p->qhead];
        p->qhead = (p->qhead + 1) % ad_degree(st, j);
        p->qlen--;
        if (waits_for(sim_ctx_peer(ctx, r.from), j, r.seq))
            return serve(st, ctx, j, r.from, r.seq, err);
        st->stale_requests++;
    }
    ad_apply_pending(st, ctx, j);
    return SIM_OK;
}

/* Queues a request at busy passive worker j, first dropping the requests given up. Each
 * live entry is a distinct neighbour other than i, so the queue never overflows. */
static void enqueue(adpsgd *st, sim_ctx *ctx, uint32_t j, uint32_t i, uint32_t seq)
{
    ad_worker *p = sim_ctx_worker(ctx, j);
    ad_request *q = st->queue + st->g.off[j];
    uint32_t cap = ad_degree(st, j), kept = 0;
    for (uint32_t k = 0; k < p->qlen; k++) {
        ad_request r = q[(p->qhead + k) % cap];
        if (waits_for(sim_ctx_peer(ctx, r.from), j, r.seq))
            q[(p->qhead + kept++) % cap] = r;
        else
            st->stale_requests++;
    }
    assert(kept < cap);
    q[(p->qhead + kept) % cap] = (ad_request){ .from = i, .seq = seq };
    p->qlen = kept + 1;
    st->max_queue = p->qlen > st->max_queue ? p->qlen : st->max_queue;
}

int ad_on_request(adpsgd *st, sim_ctx *ctx, uint32_t j, uint32_t i, uint32_t seq, sim_err *err)
{
    if (!ad_passive(j))
        return sim_err_set(err, SIM_EINVAL, NULL, "adpsgd: active worker %u got a request", j);
    if (!waits_for(sim_ctx_peer(ctx, i), j, seq)) {
        st->stale_requests++;
        return SIM_OK;
    }
    if (((ad_worker *)sim_ctx_worker(ctx, j))->serving == AD_NOBODY)
        return serve(st, ctx, j, i, seq, err);
    enqueue(st, ctx, j, i, seq);
    return SIM_OK;
}

/* The exchange of active worker i with passive worker j commits (see the file comment). */
static int commit(adpsgd *st, sim_ctx *ctx, uint32_t i, uint32_t j, sim_err *err)
{
    ad_worker *a = sim_ctx_worker(ctx, i);
    ad_worker *p = sim_ctx_peer(ctx, j); /* both ends commit at once */
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
                                       .peer_grad = p->pending > 0 ? st->acc[j] : NULL },
                         NULL, a->pending > 0 ? st->acc[i] : NULL);
            a->pending = p->pending = 0;
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
    st->cross += !ad_passive(i) && ad_passive(j) ? 1 : 0;
    st->exchange_s += (double)(now - a->sent_ns) / 1e9;
    st->max_wait_ns = now - a->wait_ns > st->max_wait_ns ? now - a->wait_ns : st->max_wait_ns;
    ad_apply_pending(st, ctx, i);
    ad_apply_pending(st, ctx, j);
    return SIM_OK;
}

int ad_on_reply(adpsgd *st, sim_ctx *ctx, uint32_t i, uint32_t j, uint32_t seq, sim_err *err)
{
    const ad_worker *p = sim_ctx_peer(ctx, j); /* the reply ends j's service */
    if (p->serving != i || p->serving_seq != seq) {
        /* Sent before i failed and recovered; j was released when i failed. */
        st->stale_replies++;
        return SIM_OK;
    }
    int rc = SIM_OK;
    ad_worker *a = sim_ctx_worker(ctx, i);
    bool committed = waits_for(a, j, seq);
    if (committed)
        rc = commit(st, ctx, i, j, err);
    else
        st->stale_replies++;
    if (rc == SIM_OK)
        rc = ad_serve_next(st, ctx, j, err);
    /* An iteration that started during the exchange gets its own at once. */
    if (rc == SIM_OK && committed && a->owed)
        rc = ad_start_exchange(st, ctx, i, false, err);
    return rc;
}

int ad_on_timeout(adpsgd *st, sim_ctx *ctx, uint32_t i, uint32_t seq, sim_err *err)
{
    ad_worker *a = sim_ctx_worker(ctx, i);
    if (!a->exchanging || a->seq != seq)
        return SIM_OK;
    st->timeouts++;
    a->exchanging = false;
    return ad_start_exchange(st, ctx, i, true, err);
}
