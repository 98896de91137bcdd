/* AD-PSGD's pairwise exchanges and the gradients' steps (see protocols/adpsgd.c). */
#include <assert.h>

#include "kit/msg.h"
#include "protocols/adpsgd_state.h"
#include "sim/tensor.h"

/* ---- gradients ---- */

int ad_apply_gradient(adpsgd *st, sim_ctx *ctx, uint32_t w, sim_err *err)
{
    ad_worker *a = sim_ctx_worker(ctx, w);
    if (st->nparams == 0)
        return SIM_OK;
    /* A passive worker's reply in flight is an alias of its model: the runtime copies it on
     * this write, and the commit reads the copy (its model as sent). */
    if (!ad_passive(w) && a->exchanging && a->snap == SIM_CTX_NO_SNAPSHOT) {
        int rc = sim_ctx_snapshot(ctx, sim_ctx_params_view(ctx, w), st->nparams, &a->snap, err);
        if (rc != SIM_OK)
            return rc;
    }
    sim_ctx_step(ctx, (sim_target){ .w = w }, NULL, sim_ctx_grad(ctx, w));
    return SIM_OK;
}

void ad_end_exchange(sim_ctx *ctx, uint32_t w)
{
    ad_worker *a = sim_ctx_worker(ctx, w);
    a->exchanging = false;
    sim_ctx_release(ctx, a->snap);
    a->snap = SIM_CTX_NO_SNAPSHOT;
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

/* Passive worker j is free: it serves the first queued requester still waiting, if any. */
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

/* x := a + (x - s) and y := a + (y - t), a = (s + t) * 0.5, element by element: the average
 * of the two models as sent, s and t (NULL: that end has not moved, its model is its own
 * snapshot), with each end's steps since kept on top. */
static void average_sent(float *restrict x, const float *s, float *restrict y, const float *t,
                         size_t n)
{
    for (size_t e = 0; e < n; e++) {
        float xs = s != NULL ? s[e] : x[e], ys = t != NULL ? t[e] : y[e];
        float a = (xs + ys) * 0.5f;
        x[e] = a + (x[e] - xs);
        y[e] = a + (y[e] - ys);
    }
}

/* The exchange of active worker i with passive worker j commits (see the file comment). */
static int commit(adpsgd *st, sim_ctx *ctx, uint32_t i, uint32_t j, sim_err *err)
{
    ad_worker *a = sim_ctx_worker(ctx, i);
    if (st->nparams > 0) {
        const float *xj = sim_ctx_held(ctx, SIM_CTX_PAYLOAD);
        if (xj == NULL)
            return sim_err_set(err, SIM_EINVAL, NULL, "adpsgd: a reply without a model");
        /* Still an alias of x_j: j has not stepped since it replied (never copied then). */
        bool j_moved = !sim_ctx_payload_is_params(ctx, j);
        if (!j_moved) {
            sim_ctx_release(ctx, SIM_CTX_PAYLOAD);
            xj = NULL;
        }
        if (a->snap == SIM_CTX_NO_SNAPSHOT && !j_moved) {
            /* Neither end moved: both take the average in one pass. */
            sim_ctx_step(ctx, (sim_target){ .kind = SIM_TARGET_PAIR, .w = i, .peer = j }, NULL,
                         NULL);
        } else {
            const float *xi = a->snap != SIM_CTX_NO_SNAPSHOT ? sim_ctx_held(ctx, a->snap) : NULL;
            average_sent(sim_ctx_params(ctx, i), xi, sim_ctx_params(ctx, j), xj, st->nparams);
            st->moved_ends += (xi != NULL ? 1 : 0) + (j_moved ? 1 : 0);
        }
    }
    sim_time now = sim_ctx_now(ctx);
    sim_ctx_cancel(ctx, a->timer);
    ad_end_exchange(ctx, i);
    st->exchanges++;
    st->cross += !ad_passive(i) && ad_passive(j) ? 1 : 0;
    st->exchange_s += (double)(now - a->sent_ns) / 1e9;
    st->max_wait_ns = now - a->wait_ns > st->max_wait_ns ? now - a->wait_ns : st->max_wait_ns;
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
    ad_end_exchange(ctx, i);
    return ad_start_exchange(st, ctx, i, true, err);
}
