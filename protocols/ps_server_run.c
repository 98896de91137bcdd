/* The parameter-server engine (protocols/ps_server.h; PROTOCOLS §1.3): BSP, ASP and SSP over
 * K shards, the mode switchable at run time.
 *
 * The model of P floats is split into K contiguous slices, as even as whole floats allow
 * (the first P mod K one float longer); shard k owns slice k of one server model (a copy of
 * the workers' initial parameters, which evaluation reads) with its own momentum buffer and
 * updates it with the run's optimizer. With placement "servers" shard k lives on server
 * host workers + k, with "colocated" on worker k. Every message to or from shard k carries
 * S/K bytes of the S-byte model (the first S mod K shards one byte more), or a 64-byte
 * pull request.
 *
 * A worker's iteration: it sends a pull request to every shard, each answers with its
 * slice, which the worker copies into its parameters; when all K slices are in, it computes
 * (so the gradient is taken on the pulled model), pushes the K slices of its gradient,
 * counts the iteration, and sends its next pull requests at once. With `overlap` (the
 * default), slice k of the gradient is pushed as soon as backward has produced it instead:
 * when the layer holding its first byte (first_layer[k], sim_ctx_layers) is done
 * (sim_ctx_grad_ready_ns; the runtime computes the whole gradient when the iteration starts,
 * so its bits are there), from the last slice down, by a timer per worker for the next
 * slices (PS_SERVER_EV_PUSH, which carries the iteration's number so that a timer of an
 * iteration lost to a failure is ignored); the slices that hold layer 0 go at
 * SIM_EV_COMPUTED. Pulls stay whole: the next iteration starts when all K slices are in.
 * Requests of one worker
 * to one shard are handled in the order it sent them, as on one connection: a pull request
 * that overtakes the worker's own push on the wire waits at the shard for that push.
 *
 * Modes:
 *   bsp  shard k, in round t, stores the gradient slices of round t until every live
 *        member has pushed, then applies their mean (summed in worker order, then divided,
 *        as the ring all-reduce does) once and answers the pull requests for round t+1 it
 *        has queued. Every worker pulls the same model in a round, so replicas are bitwise
 *        identical at round boundaries. Shards run their rounds independently; no shard can
 *        complete round t+1 before every shard has completed round t.
 *   asp  a shard applies each gradient slice when it arrives and answers pulls at once.
 *   ssp  as asp, but a worker that has pushed c iterations starts its next one only when
 *        every live worker has pushed at least c - s; otherwise it waits (blocked) until the
 *        slowest catches up. So a worker that starts computing iteration c+1 sees every
 *        live worker past c - s: the number of iterations started by any worker minus the
 *        number finished by the slowest live one never exceeds s + 1 (reported as
 *        max_clock_gap, measured whenever a worker starts computing; bsp keeps it <= 1).
 *
 * Failures. A failed worker's messages in flight are dropped by the network; its requests
 * queued at shards are forgotten, and in bsp its gradients not yet applied are discarded,
 * so a round completes when every live member has pushed. A member is a live worker that
 * joined at or before the round: a recovered worker rejoins by pulling the newest round any
 * shard has reached (the simulator reads it from the shards instead of modelling a query),
 * and a round whose members all failed before pushing completes without an update once a
 * rejoined worker waits for the next one. A recovered worker's clock is raised to the
 * slowest live worker's, so that it does not hold the others back under ssp.
 *   A colocated shard shares its worker's host: while the worker is down the shard is
 * unreachable (the network drops messages to a down host) and every pull waits for it, so
 * training stalls until the worker recovers. The shard's state survives; on recovery the
 * workers retry what was lost, as clients reconnecting: pull requests not answered, and in
 * bsp pushes not received (their gradients are still the workers' last ones, as no worker
 * can compute before the round is complete). In asp and ssp a push lost with its shard is
 * lost (counted as lost_pushes).
 *   Failover [R]: a colocated shard whose host has been down for `failover_s` (a failure
 * detector's timeout) moves, state and all (as a replica or checkpoint would hold it), to
 * the next live worker after its host in id order (or, if none is live, to the first worker
 * that recovers), and the workers retry what was lost as on a recovery. It stays there: a
 * host may then hold several shards, and they move on together when it fails. So a worker
 * that fails for good stalls training for failover_s, not for the rest of the run; with
 * failover_s 0 it does (the run ends as "stalled").
 *
 * Switching mode (a drain). While draining, a worker that pushes does not pull again, and a
 * worker whose pull completes holds its model without computing, except in BSP a member of
 * the round in flight (the lowest round open on a shard), which computes it so that the
 * round completes; every ASP push is applied. When every live
 * worker holds and no message of the engine is in flight, the owner's `drained` hook runs;
 * ps_server_resume then sets the new mode, restarts the BSP round bookkeeping at the newest
 * round (every live worker a member), and makes every live worker pull afresh. A worker that
 * recovers during a drain holds until the resume.
 *
 * Rates. A BSP round's update uses one learning rate and momentum coefficient, read once
 * per round (by the first shard to close it; no iteration can be counted before the last
 * shard has closed it, so the schedule could not have moved anyway); an ASP or SSP update
 * reads them when it is applied. The owner's `rates` hook may replace both (ps has none:
 * the schedule's rate and the workload's momentum).
 *
 * Staleness. Each (worker, shard) pair remembers how many updates the shard had applied when
 * it sent the worker its slice; an ASP or SSP gradient slice applied later has staleness =
 * the shard's updates since then (its own excluded).
 *
 * With the timing-only model the same messages flow without tensors.
 *
 * Files: this one holds the run (messages, workers, shards, failures, mode changes);
 * protocols/ps_server_setup.c the configuration, creation, destruction and queries,
 * protocols/ps_server_state.h the state they share.
 */
#include <stdbool.h>
#include <stdint.h>

#include "protocols/msg.h"
#include "protocols/ps_server.h"
#include "protocols/ps_server_state.h"
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

static uint8_t *link_of(ps_server *s, uint32_t w, uint32_t k)
{
    return &s->link[(size_t)w * s->K + k];
}

/* Messages travel on the channel of their shard, with the round as sequence number. */
static msg_hdr hdr(int kind, uint32_t k, uint64_t round)
{
    msg_hdr h = { .channel = k, .kind = (uint32_t)kind, .seq = round };
    return h;
}

static bool host_down(sim_ctx *ctx, uint32_t host)
{
    return host < sim_ctx_workers(ctx) && sim_ctx_down(ctx, host);
}

static int broken(sim_err *err, const char *what, uint32_t w, uint32_t k)
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
static bool rescan_min(ps_server *s)
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
static bool clock_left(ps_server *s, uint64_t old)
{
    if (old != s->min_clock || --s->at_min > 0)
        return false;
    return rescan_min(s);
}

static bool allowed(const ps_server *s, uint32_t w)
{
    return s->mode != PS_SSP || s->w[w].clock <= s->min_clock + (uint64_t)s->staleness;
}

/* ---- messages ---- */

static int request(ps_server *s, sim_ctx *ctx, uint32_t w, uint32_t k, sim_err *err)
{
    const ps_shard *sh = &s->sh[k];
    if (host_down(ctx, sh->host))
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
static int push(ps_server *s, sim_ctx *ctx, uint32_t w, uint32_t k, uint64_t round, sim_err *err)
{
    const ps_shard *sh = &s->sh[k];
    uint8_t *l = link_of(s, w, k);
    if (host_down(ctx, sh->host)) {
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
        *link_of(s, w, k) |= L_AWAIT;
        int rc = request(s, ctx, w, k, err);
        if (rc != SIM_OK)
            return rc;
    }
    return SIM_OK;
}

static int try_start(ps_server *s, sim_ctx *ctx, uint32_t w, sim_err *err)
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
static int wake(ps_server *s, sim_ctx *ctx, sim_err *err)
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
        sim_time t = sim_ctx_grad_ready_ns(ctx, w, s->first_layer[k]);
        if (t > now)
            return sim_ctx_timer(ctx, t - now, PS_SERVER_EV_PUSH, (int32_t)w, pw->starts, NULL,
                                 err);
        int rc = push(s, ctx, w, k, pw->round, err);
        if (rc != SIM_OK)
            return rc;
        pw->unpushed--;
    }
    return SIM_OK;
}

/* overlap: worker w's timer for its next slices; one of an iteration that is over (the
 * worker failed, or the iteration ended at the same instant) is ignored. */
static int on_push_timer(ps_server *s, sim_ctx *ctx, uint32_t w, uint64_t starts, sim_err *err)
{
    if (w >= s->n || s->first_layer == NULL || s->w[w].phase != W_COMPUTE ||
        s->w[w].starts != starts)
        return SIM_OK;
    return push_ready(s, ctx, w, err);
}

static int on_slice(ps_server *s, sim_ctx *ctx, uint32_t k, uint32_t w, uint64_t round,
                    sim_err *err)
{
    const ps_shard *sh = &s->sh[k];
    ps_worker *pw = &s->w[w];
    uint8_t *l = link_of(s, w, k);
    if (!(*l & L_AWAIT) || (s->mode == PS_BSP && round != pw->round))
        return broken(err, "a slice nobody asked for", w, k);
    *l &= (uint8_t)~L_AWAIT;
    const float *p = sim_ctx_held(ctx, SIM_CTX_PAYLOAD);
    if (p != NULL)
        sim_tensor_copy(sim_ctx_params(ctx, w) + sh->off, p, sh->len);
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
    return rc != SIM_OK || s->first_layer == NULL ? rc : push_ready(s, ctx, w, err);
}

static int on_computed(ps_server *s, sim_ctx *ctx, uint32_t w, sim_err *err)
{
    ps_worker *pw = &s->w[w];
    pw->iter_ns = pw->ready_ns > pw->req_ns ? pw->ready_ns : pw->req_ns;
    /* The slices not pushed during backward (all of them without overlap). */
    uint32_t left = s->first_layer != NULL ? pw->unpushed : s->K;
    pw->unpushed = 0;
    for (uint32_t k = 0; k < left; k++) {
        int rc = push(s, ctx, w, k, pw->round, err);
        if (rc != SIM_OK)
            return rc;
    }
    sim_ctx_count(ctx, w, 1);
    s->stats.pushes++;
    if (s->hooks.counted != NULL)
        s->hooks.counted(s->hooks.ud, ctx, w, s->mode);
    if (s->mode == PS_BSP && pw->round >= s->drain_round)
        s->draining = true;
    bool rose = clock_left(s, pw->clock++);
    pw->round++;
    int rc = try_start(s, ctx, w, err);
    return rc != SIM_OK || !rose ? rc : wake(s, ctx, err);
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
static int close_round(ps_server *s, sim_ctx *ctx, uint32_t k, sim_err *err)
{
    ps_shard *sh = &s->sh[k];
    if (sh->pending > 0 || (sh->npushed == 0 && sh->nqueued == 0) || host_down(ctx, sh->host))
        return SIM_OK;
    size_t m = 0;
    for (uint32_t w = 0; w < s->n; w++) {
        uint8_t *l = link_of(s, w, k);
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
        uint8_t *l = link_of(s, w, k);
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
    uint8_t *l = link_of(s, w, k);
    if (s->mode == PS_BSP) {
        if (round == sh->round)
            return reply(s, ctx, k, w, err);
        if (round != sh->round + 1 || (*l & L_QUEUED))
            return broken(err, "a pull request for a round out of reach", w, k);
    } else if (!(*l & L_PUSH_OUT)) {
        return reply(s, ctx, k, w, err);
    }
    *l |= L_QUEUED;
    sh->nqueued++;
    return s->mode == PS_BSP ? close_round(s, ctx, k, err) : SIM_OK;
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
    uint8_t *l = link_of(s, w, k);
    const float *g = sim_ctx_held(ctx, SIM_CTX_PAYLOAD);
    *l &= (uint8_t)~L_PUSH_OUT;
    if (s->mode == PS_BSP) {
        if (round != sh->round || (*l & L_PUSHED) || sh->pending == 0)
            return broken(err, "a gradient for a round not open", w, k);
        if (g != NULL)
            sim_tensor_copy(s->grads + (size_t)w * s->P + sh->off, g, sh->len);
        *l |= L_PUSHED;
        sh->npushed++;
        sh->pending--;
        int rc = close_round(s, ctx, k, err);
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

/* ---- failures ---- */

/* Shard k's host went down: in asp and ssp the pushes in flight to it are lost, and the
 * pull requests that waited for them are answered by nobody (retried on recovery). */
static void shard_lost(ps_server *s, uint32_t k)
{
    if (s->mode == PS_BSP)
        return;
    for (uint32_t w = 0; w < s->n; w++) {
        uint8_t *l = link_of(s, w, k);
        if (*l & L_PUSH_OUT)
            s->stats.lost++;
        if (*l & L_QUEUED)
            s->sh[k].nqueued--;
        *l &= (uint8_t) ~(L_PUSH_OUT | L_QUEUED);
    }
}

/* Shard k's host is back: the workers resend what it lost, then a bsp round may close. */
static int shard_back(ps_server *s, sim_ctx *ctx, uint32_t k, sim_err *err)
{
    for (uint32_t w = 0; w < s->n; w++) {
        uint8_t l = *link_of(s, w, k);
        int rc = SIM_OK;
        if (s->w[w].phase == W_DOWN)
            continue;
        if ((l & L_PUSH_OUT) && s->w[w].phase == W_COMPUTE) /* overlap: during backward */
            rc = push(s, ctx, w, k, s->w[w].round, err);
        else if (l & L_PUSH_OUT)
            rc = s->w[w].phase == W_PULL || s->w[w].phase == W_HOLD
                     ? push(s, ctx, w, k, s->w[w].round - 1, err)
                     : broken(err, "a lost push with its gradient gone", w, k);
        if (rc == SIM_OK && (l & L_AWAIT) && !(l & L_QUEUED))
            rc = request(s, ctx, w, k, err);
        if (rc != SIM_OK)
            return rc;
    }
    return s->mode == PS_BSP ? close_round(s, ctx, k, err) : SIM_OK;
}

/* Colocated shard k's host went down now: its failover is due failover_ns later. */
static int host_lost(ps_server *s, sim_ctx *ctx, uint32_t k, sim_err *err)
{
    s->sh[k].down_since = sim_ctx_now(ctx);
    if (s->failover_ns == 0)
        return SIM_OK;
    return sim_ctx_timer(ctx, s->failover_ns, PS_SERVER_EV_FAILOVER, SIM_NOBODY, k, NULL, err);
}

/* Moves colocated shard k, down for failover_ns, to live worker v; the workers retry. */
static int take_over(ps_server *s, sim_ctx *ctx, uint32_t k, uint32_t v, sim_err *err)
{
    s->sh[k].host = v;
    s->stats.failovers++;
    return shard_back(s, ctx, k, err);
}

static bool failover_due(const ps_server *s, sim_ctx *ctx, uint32_t k)
{
    const ps_shard *sh = &s->sh[k];
    return s->placement == PS_PLACE_COLOCATED && s->failover_ns > 0 && host_down(ctx, sh->host) &&
           sim_ctx_now(ctx) - sh->down_since >= s->failover_ns;
}

/* Shard k's failover timer: if its host is still down (since the timer was set), the next
 * live worker after the host takes it over; with none live, the first to recover will. */
static int failover(ps_server *s, sim_ctx *ctx, uint32_t k, sim_err *err)
{
    if (k >= s->K)
        return sim_err_set(err, SIM_EINVAL, NULL, "ps: a failover for no shard (%u)", k);
    if (!failover_due(s, ctx, k))
        return SIM_OK; /* recovered (and maybe down again: a later timer is set) */
    for (uint32_t i = 1; i < s->n; i++) {
        uint32_t v = (s->sh[k].host + i) % s->n;
        if (s->w[v].phase != W_DOWN)
            return take_over(s, ctx, k, v, err);
    }
    return SIM_OK;
}

static int worker_down(ps_server *s, sim_ctx *ctx, uint32_t w, sim_err *err)
{
    ps_worker *pw = &s->w[w];
    if (pw->phase == W_DOWN)
        return SIM_OK;
    for (uint32_t k = 0; k < s->K; k++) {
        ps_shard *sh = &s->sh[k];
        uint8_t *l = link_of(s, w, k);
        if (s->mode == PS_BSP && pw->joined <= sh->round) {
            if (*l & L_PUSHED)
                sh->npushed--; /* its gradient is discarded */
            else
                sh->pending--;
        }
        if (*l & L_QUEUED)
            sh->nqueued--;
        *l = 0;
    }
    pw->phase = W_DOWN;
    bool rose = clock_left(s, pw->clock);
    for (uint32_t k = 0; k < s->K && s->placement == PS_PLACE_COLOCATED; k++) {
        if (s->sh[k].host != w)
            continue;
        shard_lost(s, k);
        int rc = host_lost(s, ctx, k, err);
        if (rc != SIM_OK)
            return rc;
    }
    for (uint32_t k = 0; k < s->K && s->mode == PS_BSP; k++) {
        int rc = close_round(s, ctx, k, err);
        if (rc != SIM_OK)
            return rc;
    }
    return rose ? wake(s, ctx, err) : SIM_OK;
}

static uint64_t newest_round(const ps_server *s)
{
    uint64_t newest = 0;
    for (uint32_t k = 0; k < s->K; k++)
        newest = s->sh[k].round > newest ? s->sh[k].round : newest;
    return newest;
}

/* Worker w joins (at the start, or recovered): its clock rises to the slowest live
 * worker's, in bsp it becomes a member from the newest round any shard has reached, and it
 * starts an iteration. While draining it only holds: the resume makes it a member. */
static int join(ps_server *s, sim_ctx *ctx, uint32_t w, sim_err *err)
{
    ps_worker *pw = &s->w[w];
    if (s->min_clock != UINT64_MAX && pw->clock < s->min_clock)
        pw->clock = s->min_clock;
    pw->phase = W_BLOCKED;
    if (s->min_clock == UINT64_MAX)
        rescan_min(s);
    else if (pw->clock == s->min_clock)
        s->at_min++;
    if (s->mode == PS_BSP && !s->draining) {
        uint64_t newest = newest_round(s);
        pw->joined = pw->round = newest;
        for (uint32_t k = 0; k < s->K; k++)
            if (s->sh[k].round == newest)
                s->sh[k].pending++;
    }
    return try_start(s, ctx, w, err);
}

static int worker_up(ps_server *s, sim_ctx *ctx, uint32_t w, sim_err *err)
{
    if (s->w[w].phase != W_DOWN)
        return SIM_OK;
    for (uint32_t k = 0; k < s->K && s->placement == PS_PLACE_COLOCATED; k++) {
        int rc = SIM_OK;
        if (s->sh[k].host == w)
            rc = shard_back(s, ctx, k, err);
        else if (failover_due(s, ctx, k)) /* its failover found nobody live */
            rc = take_over(s, ctx, k, w, err);
        if (rc != SIM_OK)
            return rc;
    }
    return join(s, ctx, w, err);
}

/* ---- mode changes ---- */

/* Runs the `drained` hook once the drain is complete: every live worker holds (or, ssp, is
 * blocked), no slice, push or request is outstanding, and no bsp gradient waits. */
static int check_drained(ps_server *s, sim_ctx *ctx, sim_err *err)
{
    if (!s->draining || s->idle)
        return SIM_OK;
    for (uint32_t w = 0; w < s->n; w++)
        if (s->w[w].phase != W_DOWN && s->w[w].phase != W_HOLD && s->w[w].phase != W_BLOCKED)
            return SIM_OK;
    for (size_t i = 0; i < (size_t)s->n * s->K; i++)
        if (s->link[i] & (L_AWAIT | L_PUSH_OUT | L_QUEUED | L_PUSHED))
            return SIM_OK;
    s->idle = true;
    return s->hooks.drained != NULL ? s->hooks.drained(s->hooks.ud, ctx, err) : SIM_OK;
}

int ps_server_drain(ps_server *s, sim_ctx *ctx, sim_err *err)
{
    if (s->mode == PS_BSP) { /* the lowest round still open on some shard completes */
        uint64_t open = UINT64_MAX;
        for (uint32_t k = 0; k < s->K; k++)
            open = s->sh[k].round < open ? s->sh[k].round : open;
        s->drain_round = open < s->drain_round ? open : s->drain_round;
    }
    s->draining = true;
    return check_drained(s, ctx, err);
}

int ps_server_resume(ps_server *s, sim_ctx *ctx, int mode, sim_err *err)
{
    if (!s->idle)
        return sim_err_set(err, SIM_EINVAL, NULL, "ps: resumed before the drain completed");
    uint64_t newest = newest_round(s);
    s->mode = mode;
    s->draining = s->idle = false;
    s->drain_round = s->budget = UINT64_MAX;
    s->phase_round = newest;
    s->rate_round = UINT64_MAX;
    for (uint32_t k = 0; k < s->K; k++) {
        ps_shard *sh = &s->sh[k];
        sh->round = newest;
        sh->npushed = sh->nqueued = 0;
        sh->pending = 0;
        sh->phase_updates = 0;
    }
    for (uint32_t w = 0; w < s->n; w++) {
        if (s->w[w].phase == W_DOWN)
            continue;
        s->w[w].joined = s->w[w].round = newest;
        for (uint32_t k = 0; k < s->K && mode == PS_BSP; k++)
            s->sh[k].pending++;
    }
    for (uint32_t w = 0; w < s->n; w++) {
        if (s->w[w].phase == W_DOWN)
            continue;
        int rc = try_start(s, ctx, w, err);
        if (rc != SIM_OK)
            return rc;
    }
    return SIM_OK;
}

/* ---- the run ---- */

int ps_server_start(ps_server *s, sim_ctx *ctx, sim_err *err)
{
    for (uint32_t k = 0; k < s->K && s->placement == PS_PLACE_COLOCATED; k++) {
        if (!host_down(ctx, s->sh[k].host))
            continue;
        int rc = host_lost(s, ctx, k, err); /* down from the start */
        if (rc != SIM_OK)
            return rc;
    }
    for (uint32_t w = 0; w < s->n; w++) {
        if (sim_ctx_down(ctx, w))
            continue;
        int rc = join(s, ctx, w, err);
        if (rc != SIM_OK)
            return rc;
    }
    return check_drained(s, ctx, err);
}

static int on_message(ps_server *s, sim_ctx *ctx, const sim_event *ev, sim_err *err)
{
    uint32_t src = (uint32_t)ev->src, dst = (uint32_t)ev->dst;
    msg_hdr h = msg_read(ev);
    uint32_t k = h.channel;
    uint64_t arg = h.seq;
    if (k >= s->K)
        return broken(err, "a message for no shard", src, k);
    switch (h.kind) {
    case MSG_PULL:
        return on_pull(s, ctx, k, src, arg, err);
    case MSG_SLICE:
        return on_slice(s, ctx, k, dst, arg, err);
    case MSG_PUSH:
        return on_push(s, ctx, k, src, arg, err);
    default:
        return broken(err, "a message of no known kind", src, k);
    }
}

int ps_server_on_event(ps_server *s, sim_ctx *ctx, const sim_event *ev, sim_err *err)
{
    int rc;
    switch (ev->kind) {
    case SIM_EV_COMPUTED:
        rc = on_computed(s, ctx, (uint32_t)ev->dst, err);
        break;
    case SIM_EV_MSG:
        rc = on_message(s, ctx, ev, err);
        break;
    case SIM_EV_WORKER_DOWN:
        rc = worker_down(s, ctx, (uint32_t)ev->dst, err);
        break;
    case SIM_EV_WORKER_UP:
        rc = worker_up(s, ctx, (uint32_t)ev->dst, err);
        break;
    case PS_SERVER_EV_FAILOVER:
        rc = failover(s, ctx, (uint32_t)ev->arg[0], err);
        break;
    case PS_SERVER_EV_PUSH:
        rc = on_push_timer(s, ctx, (uint32_t)ev->dst, ev->arg[0], err);
        break;
    default:
        return sim_err_set(err, SIM_EINVAL, NULL, "ps: unexpected event kind %u", ev->kind);
    }
    return rc != SIM_OK ? rc : check_drained(s, ctx, err);
}
