/* The parameter-server engine's iterations (kit/ps_server.h, ps_server_state.h): the
 * messages, a worker's pull, compute and push, and the shards' answers and rounds, as
 * described at the top of kit/ps_server_run.c, which calls these (pss_*) for its
 * failures, mode changes and the events it dispatches. Calls nothing of ps_server_run.c. */
#include <stdbool.h>
#include <stdint.h>

#include "kit/msg.h"
#include "kit/ps_server.h"
#include "kit/ps_server_state.h"
#include "sim/tensor.h"

/* Message kinds (the header's kind; the channel is the shard). */
enum {
    MSG_PULL = 1,  /* worker -> shard, seq = the round wanted (bsp) */
    MSG_SLICE = 2, /* shard -> worker, seq = the shard's round; carries the slice */
    MSG_PUSH = 3   /* worker -> shard, seq = the worker's round; carries the gradient slice */
};

enum {
    PULL_REQUEST_BYTES = 64
};

/* Messages travel on the channel of their shard, with the round as sequence number. */
static msg_hdr hdr(int kind, uint32_t k, uint64_t round)
{
    msg_hdr h = { .channel = k, .kind = (uint32_t)kind, .seq = round };
    return h;
}

int pss_broken(sim_err *err, const char *what, uint32_t w, uint32_t k)
{
    return sim_err_set(err, SIM_EINVAL, NULL, "ps: %s (worker %u, shard %u)", what, w, k);
}

/* The rates of an update of shard k now (bsp: of its open round, once per round). */
static void rates(ps_server *s, sim_ctx *ctx, const ps_shard *sh, double *lr, double *momentum)
{
    if (s->mode == PS_BSP && s->rate_round == sh->round) {
        *lr = s->rate_lr;
        *momentum = s->rate_momentum;
        return;
    }
    uint64_t step = s->mode == PS_BSP ? sh->round - s->phase_round : sh->phase_updates;
    if (s->hooks.rates != NULL) {
        s->hooks.rates(s->hooks.ud, ctx, s->mode, step, lr, momentum);
    } else {
        *lr = sim_ctx_rates(ctx).lr;
        *momentum = sim_ctx_rates(ctx).momentum;
    }
    if (s->mode == PS_BSP) {
        s->rate_round = sh->round;
        s->rate_lr = *lr;
        s->rate_momentum = *momentum;
    }
}

/* One optimizer step on shard k's slice with the gradient slice g. */
static void update(ps_server *s, sim_ctx *ctx, ps_shard *sh, const float *g)
{
    if (g != NULL) {
        double lr, momentum;
        rates(s, ctx, sh, &lr, &momentum);
        sim_ctx_step(ctx,
                     (sim_target){ .kind = SIM_TARGET_BLOCK,
                                   .params = s->x + sh->off,
                                   .velocity = s->v != NULL ? s->v + sh->off : NULL,
                                   .n = sh->len },
                     &(sim_step){ .lr = lr, .momentum = momentum }, g);
    }
    s->stats.updates++;
    sh->updates++;
    sh->phase_updates++;
}

/* ---- clocks (ssp gating, the gap statistic) ---- */

/* Recomputes the smallest clock of a live worker and how many hold it. Returns true if it
 * rose. */
bool pss_rescan_min(ps_server *s)
{
    uint64_t before = s->min_clock;
    s->min_clock = UINT64_MAX;
    s->at_min = 0;
    for (uint32_t w = 0; w < s->n; w++) {
        if (s->w[w].phase == W_DOWN)
            continue;
        if (s->w[w].clock < s->min_clock) {
            s->min_clock = s->w[w].clock;
            s->at_min = 1;
        } else if (s->w[w].clock == s->min_clock) {
            s->at_min++;
        }
    }
    return s->min_clock != UINT64_MAX && s->min_clock > before;
}

/* Worker w (live) leaves the clock bookkeeping, its clock advanced by one, or it went down:
 * called after the change with its clock before it. Returns true if the minimum rose. */
bool pss_clock_left(ps_server *s, uint64_t old)
{
    if (old != s->min_clock || --s->at_min > 0)
        return false;
    return pss_rescan_min(s);
}

static bool allowed(const ps_server *s, uint32_t w)
{
    return s->mode != PS_SSP || s->w[w].clock <= s->min_clock + (uint64_t)s->staleness;
}

/* ---- messages ---- */

int pss_request(ps_server *s, sim_ctx *ctx, uint32_t w, uint32_t k, sim_err *err)
{
    const ps_shard *sh = &s->sh[k];
    if (pss_host_down(ctx, sh->host))
        return SIM_OK; /* sent when the shard's host recovers */
    return msg_post(ctx, w, sh->host, PULL_REQUEST_BYTES, hdr(MSG_PULL, k, s->w[w].round),
                    msg_none(), err);
}

static int reply(ps_server *s, sim_ctx *ctx, uint32_t k, uint32_t w, sim_err *err)
{
    const ps_shard *sh = &s->sh[k];
    s->version[(size_t)w * s->K + k] = sh->updates;
    return msg_post(ctx, sh->host, w, sh->bytes, hdr(MSG_SLICE, k, sh->round),
                    msg_copy(s->x != NULL ? s->x + sh->off : NULL, sh->len), err);
}

/* Pushes slice k of worker w's gradient, computed on the model of `round` (bsp). */
int pss_push(ps_server *s, sim_ctx *ctx, uint32_t w, uint32_t k, uint64_t round, sim_err *err)
{
    const ps_shard *sh = &s->sh[k];
    uint8_t *l = pss_link(s, w, k);
    if (pss_host_down(ctx, sh->host)) {
        if (s->mode == PS_BSP)
            *l |= L_PUSH_OUT; /* sent when the shard's host recovers */
        else
            s->stats.lost++;
        return SIM_OK;
    }
    const float *g = sim_ctx_grad(ctx, w);
    *l |= L_PUSH_OUT;
    return msg_post(ctx, w, sh->host, sh->bytes, hdr(MSG_PUSH, k, round),
                    msg_copy(g != NULL ? g + sh->off : NULL, sh->len), err);
}

/* ---- workers ---- */

static int start_pull(ps_server *s, sim_ctx *ctx, uint32_t w, sim_err *err)
{
    ps_worker *pw = &s->w[w];
    pw->phase = W_PULL;
    pw->need = s->K;
    pw->req_ns = sim_ctx_now(ctx);
    pw->ready_ns = 0;
    for (uint32_t k = 0; k < s->K; k++) {
        *pss_link(s, w, k) |= L_AWAIT;
        int rc = pss_request(s, ctx, w, k, err);
        if (rc != SIM_OK)
            return rc;
    }
    return SIM_OK;
}

int pss_try_start(ps_server *s, sim_ctx *ctx, uint32_t w, sim_err *err)
{
    if (s->draining) {
        s->w[w].phase = W_HOLD;
        return SIM_OK;
    }
    if (!allowed(s, w)) {
        s->w[w].phase = W_BLOCKED;
        return SIM_OK;
    }
    return start_pull(s, ctx, w, err);
}

/* ssp: the slowest worker advanced; blocked workers it now allows start, in id order. */
int pss_wake(ps_server *s, sim_ctx *ctx, sim_err *err)
{
    for (uint32_t w = 0; w < s->n && !s->draining; w++) {
        if (s->w[w].phase != W_BLOCKED || !allowed(s, w))
            continue;
        int rc = start_pull(s, ctx, w, err);
        if (rc != SIM_OK)
            return rc;
    }
    return SIM_OK;
}

/* overlap: pushes, from the last slice down, worker w's slices whose gradient backward has
 * produced by now (the layer holding the slice's first byte is done), and sets a timer for
 * the next; slices that hold layer 0 are pushed when the iteration ends (on_computed). */
static int push_ready(ps_server *s, sim_ctx *ctx, uint32_t w, sim_err *err)
{
    ps_worker *pw = &s->w[w];
    sim_time now = sim_ctx_now(ctx);
    while (pw->unpushed > 0 && s->first_layer[pw->unpushed - 1] > 0) {
        uint32_t k = pw->unpushed - 1;
        sim_time t = sim_ctx_layer_ns(ctx, w, s->first_layer[k], SIM_LAYER_GRAD_READY);
        if (t > now)
            return sim_ctx_timer(ctx, t - now, PS_SERVER_EV_PUSH, (int32_t)w, pw->starts, NULL,
                                 err);
        int rc = pss_push(s, ctx, w, k, pw->round, err);
        if (rc != SIM_OK)
            return rc;
        pw->unpushed--;
    }
    return SIM_OK;
}

/* overlap: worker w's timer for its next slices; one of an iteration that is over (the
 * worker failed, or the iteration ended at the same instant) is ignored. */
int pss_on_push_timer(ps_server *s, sim_ctx *ctx, uint32_t w, uint64_t starts, sim_err *err)
{
    if (w >= s->n || s->first_layer == NULL || s->w[w].phase != W_COMPUTE ||
        s->w[w].starts != starts)
        return SIM_OK;
    return push_ready(s, ctx, w, err);
}

/* overlap: when worker w's iteration, just started now that its last slice is in, could
 * have begun: its forward pass runs the layers in order, and the pass of the layer holding a
 * slice's first byte (the first to need it) cannot start before the slice came in. The
 * latest of arrive_k - (that pass's offset in the iteration), the offsets being those of the
 * duration just drawn: the first slice's arrival at the earliest (its layer 0 starts the
 * pass), now at the latest (the slice that came last had its layer's turn by then). */
static sim_time forward_start(const ps_server *s, sim_ctx *ctx, uint32_t w)
{
    sim_time now = sim_ctx_now(ctx), start = 0;
    const sim_time *a = s->arrive + (size_t)w * s->K;
    for (uint32_t k = 0; k < s->K; k++) {
        sim_time t =
            a[k] - (sim_ctx_layer_ns(ctx, w, s->first_layer[k], SIM_LAYER_FORWARD_START) - now);
        start = k == 0 || t > start ? t : start;
    }
    return start;
}

/* Worker w, whose pull is complete, starts its iteration now; with overlap and `backdate`, dated
 * back to when its forward pass could have begun (forward_start). */
static int start_compute(ps_server *s, sim_ctx *ctx, uint32_t w, bool backdate, sim_err *err)
{
    ps_worker *pw = &s->w[w];
    if (s->budget != UINT64_MAX)
        s->budget--;
    uint64_t gap = pw->clock + 1 - s->min_clock;
    if (gap > s->stats.max_gap)
        s->stats.max_gap = gap;
    pw->phase = W_COMPUTE;
    pw->got = 0;
    pw->starts++;
    pw->unpushed = s->K;
    int rc = sim_ctx_compute(ctx, w, 0, err);
    if (rc != SIM_OK || s->first_layer == NULL)
        return rc;
    if (backdate)
        rc = sim_ctx_backdate(ctx, w, forward_start(s, ctx, w), err);
    return rc != SIM_OK ? rc : push_ready(s, ctx, w, err);
}

static int on_slice(ps_server *s, sim_ctx *ctx, uint32_t k, uint32_t w, uint64_t round,
                    sim_err *err)
{
    const ps_shard *sh = &s->sh[k];
    ps_worker *pw = &s->w[w];
    uint8_t *l = pss_link(s, w, k);
    if (!(*l & L_AWAIT) || (s->mode == PS_BSP && round != pw->round))
        return pss_broken(err, "a slice nobody asked for", w, k);
    *l &= (uint8_t)~L_AWAIT;
    const float *p = sim_ctx_held(ctx, SIM_CTX_PAYLOAD);
    if (p != NULL)
        sim_tensor_copy(sim_ctx_params(ctx, w) + sh->off, p, sh->len);
    if (s->arrive != NULL)
        s->arrive[(size_t)w * s->K + k] = sim_ctx_now(ctx);
    if (--pw->need > 0)
        return SIM_OK;
    s->stats.pulls++;
    if (s->budget == 0)
        s->draining = true;
    /* A bsp member of the round in flight computes it: the round completes. */
    if (s->draining && (s->mode != PS_BSP || pw->round > s->drain_round)) {
        pw->phase = W_HOLD;
        return SIM_OK;
    }
    if (s->mode == PS_BSP && s->sync_ns > 0) { /* its iteration starts when the wait is over */
        pw->phase = W_SYNC;
        return sim_ctx_timer(ctx, s->sync_ns, PS_SERVER_EV_SYNC, (int32_t)w, ++pw->syncs, NULL,
                             err);
    }
    return start_compute(s, ctx, w, true, err);
}

/* bsp: worker w's synchronization overhead is over: it starts its iteration then, on the model
 * it pulled (its forward pass no earlier: nothing to date back). A timer of a wait that is
 * over (the worker failed, and maybe pulls again) is ignored. */
int pss_on_sync_timer(ps_server *s, sim_ctx *ctx, uint32_t w, uint64_t syncs, sim_err *err)
{
    if (w >= s->n || s->w[w].phase != W_SYNC || s->w[w].syncs != syncs)
        return SIM_OK;
    return start_compute(s, ctx, w, false, err);
}

int pss_on_computed(ps_server *s, sim_ctx *ctx, uint32_t w, sim_err *err)
{
    ps_worker *pw = &s->w[w];
    pw->iter_ns = pw->ready_ns > pw->req_ns ? pw->ready_ns : pw->req_ns;
    /* The slices not pushed during backward (all of them without overlap). */
    uint32_t left = s->first_layer != NULL ? pw->unpushed : s->K;
    pw->unpushed = 0;
    for (uint32_t k = 0; k < left; k++) {
        int rc = pss_push(s, ctx, w, k, pw->round, err);
        if (rc != SIM_OK)
            return rc;
    }
    sim_ctx_count(ctx, w, 1);
    s->stats.pushes++;
    if (s->hooks.counted != NULL)
        s->hooks.counted(s->hooks.ud, ctx, w, s->mode);
    if (s->mode == PS_BSP && pw->round >= s->drain_round)
        s->draining = true;
    bool rose = pss_clock_left(s, pw->clock++);
    pw->round++;
    int rc = pss_try_start(s, ctx, w, err);
    return rc != SIM_OK || !rose ? rc : pss_wake(s, ctx, err);
}

/* ---- shards ---- */

static uint32_t members(const ps_server *s, uint64_t round)
{
    uint32_t m = 0;
    for (uint32_t w = 0; w < s->n; w++)
        if (s->w[w].phase != W_DOWN && s->w[w].joined <= round)
            m++;
    return m;
}

/* bsp: completes shard k's open round if every live member has pushed (and something was
 * pushed, or a rejoined worker waits for the next round), then answers the queued pulls. */
int pss_close_round(ps_server *s, sim_ctx *ctx, uint32_t k, sim_err *err)
{
    ps_shard *sh = &s->sh[k];
    if (sh->pending > 0 || (sh->npushed == 0 && sh->nqueued == 0) || pss_host_down(ctx, sh->host))
        return SIM_OK;
    size_t m = 0;
    for (uint32_t w = 0; w < s->n; w++) {
        uint8_t *l = pss_link(s, w, k);
        if (!(*l & L_PUSHED))
            continue;
        *l &= (uint8_t)~L_PUSHED;
        if (s->grads != NULL)
            s->ptrs[m] = s->grads + (size_t)w * s->P + sh->off;
        m++;
    }
    if (m > 0) {
        sim_tensor_mean(s->mean + sh->off, s->ptrs, m, sh->len);
        update(s, ctx, sh, s->mean + sh->off);
    }
    sh->round++;
    sh->npushed = 0;
    sh->pending = members(s, sh->round);
    sh->nqueued = 0;
    for (uint32_t w = 0; w < s->n; w++) {
        uint8_t *l = pss_link(s, w, k);
        if (!(*l & L_QUEUED))
            continue;
        *l &= (uint8_t)~L_QUEUED;
        s->w[w].ready_ns = sim_ctx_now(ctx);
        int rc = reply(s, ctx, k, w, err);
        if (rc != SIM_OK)
            return rc;
    }
    return SIM_OK;
}

static int on_pull(ps_server *s, sim_ctx *ctx, uint32_t k, uint32_t w, uint64_t round, sim_err *err)
{
    ps_shard *sh = &s->sh[k];
    uint8_t *l = pss_link(s, w, k);
    if (s->mode == PS_BSP) {
        if (round == sh->round)
            return reply(s, ctx, k, w, err);
        if (round != sh->round + 1 || (*l & L_QUEUED))
            return pss_broken(err, "a pull request for a round out of reach", w, k);
    } else if (!(*l & L_PUSH_OUT)) {
        return reply(s, ctx, k, w, err);
    }
    *l |= L_QUEUED;
    sh->nqueued++;
    return s->mode == PS_BSP ? pss_close_round(s, ctx, k, err) : SIM_OK;
}

/* A gradient slice of worker w reached its shard: when it is the last of its push, the
 * owner hears how long the iteration took on w's side. */
static int arrived(ps_server *s, sim_ctx *ctx, uint32_t w, sim_err *err)
{
    ps_worker *pw = &s->w[w];
    if (++pw->got < s->K || s->hooks.arrived == NULL)
        return SIM_OK;
    return s->hooks.arrived(s->hooks.ud, ctx, w, sim_ctx_now(ctx) - pw->iter_ns, err);
}

static int on_push(ps_server *s, sim_ctx *ctx, uint32_t k, uint32_t w, uint64_t round, sim_err *err)
{
    ps_shard *sh = &s->sh[k];
    uint8_t *l = pss_link(s, w, k);
    const float *g = sim_ctx_held(ctx, SIM_CTX_PAYLOAD);
    *l &= (uint8_t)~L_PUSH_OUT;
    if (s->mode == PS_BSP) {
        if (round != sh->round || (*l & L_PUSHED) || sh->pending == 0)
            return pss_broken(err, "a gradient for a round not open", w, k);
        if (g != NULL)
            sim_tensor_copy(s->grads + (size_t)w * s->P + sh->off, g, sh->len);
        *l |= L_PUSHED;
        sh->npushed++;
        sh->pending--;
        int rc = pss_close_round(s, ctx, k, err);
        return rc != SIM_OK ? rc : arrived(s, ctx, w, err);
    }
    uint64_t stale = sh->updates - s->version[(size_t)w * s->K + k];
    s->stats.stale_n++;
    s->stats.stale_sum += stale;
    s->stats.stale_max = stale > s->stats.stale_max ? stale : s->stats.stale_max;
    update(s, ctx, sh, g);
    int rc = SIM_OK;
    if (*l & L_QUEUED) {
        *l &= (uint8_t)~L_QUEUED;
        sh->nqueued--;
        rc = reply(s, ctx, k, w, err);
    }
    return rc != SIM_OK ? rc : arrived(s, ctx, w, err);
}

int pss_on_message(ps_server *s, sim_ctx *ctx, const sim_event *ev, sim_err *err)
{
    uint32_t src = (uint32_t)ev->src, dst = (uint32_t)ev->dst;
    msg_hdr h = msg_read(ev);
    uint32_t k = h.channel;
    uint64_t arg = h.seq;
    if (k >= s->K)
        return pss_broken(err, "a message for no shard", src, k);
    switch (h.kind) {
    case MSG_PULL:
        return on_pull(s, ctx, k, src, arg, err);
    case MSG_SLICE:
        return on_slice(s, ctx, k, dst, arg, err);
    case MSG_PUSH:
        return on_push(s, ctx, k, src, arg, err);
    default:
        return pss_broken(err, "a message of no known kind", src, k);
    }
}
