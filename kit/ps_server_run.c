/* The parameter-server engine (kit/ps_server.h; PROTOCOLS §1.3): BSP, ASP and SSP over
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
 * (sim_ctx_layer_ns at SIM_LAYER_GRAD_READY; the runtime computes the whole gradient when the
 * iteration starts, so its bits are there), from the last slice down, by a timer per worker for the
 * next slices (PS_SERVER_EV_PUSH, which carries the iteration's number so that a timer of an
 * iteration lost to a failure is ignored); the slices that hold layer 0 go at
 * SIM_EV_COMPUTED. The pull is per slice as well: the forward pass runs the layers in
 * order, and each layer's pass waits only for the slices it needs (the layer holding a
 * slice's first byte is the first to need it), so the iteration begins at
 *   s = max_k (arrive_k - fwd_k),
 * fwd_k the offset of that layer's forward pass in the iteration (sim_ctx_layer_ns at
 * SIM_LAYER_FORWARD_START), between the first slice's arrival (it holds layer 0) and the last's;
 * the pull of a slice overlaps the forward pass of the layers before it. The engine starts the
 * iteration when the last slice is in, so that the gradient is taken on the whole pulled model, and
 * dates it back to s (sim_ctx_backdate): it ends at s + d, its slices are pushed from s on. With
 * one shard, or slices that all hold layer 0, s is the last arrival, the whole pull's start.
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
 * Synchronization overhead (`sync_overhead_ms`, opt-in). In bsp a worker whose pull is complete
 * waits sync_ns (W_SYNC, a timer carrying its count of waits, so that one of a wait lost to a
 * failure is ignored) before its iteration starts, not dated back: the per-step cost of a real
 * synchronous parameter server beyond the network (TensorFlow's synchronous replicas'
 * accumulators and tokens). A waiting worker is a member of the round in flight: a drain waits
 * for it to compute.
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
 * Files: this one holds failures, mode changes and the dispatch of events;
 * kit/ps_server_iter.c the iterations (messages, workers, shards: pss_*, which this one
 * calls); kit/ps_server_setup.c the configuration, creation, destruction and queries;
 * kit/ps_server_state.h the state they share.
 */
#include <stdbool.h>
#include <stdint.h>

#include "kit/ps_server.h"
#include "kit/ps_server_state.h"

/* ---- failures ---- */

/* Shard k's host went down: in asp and ssp the pushes in flight to it are lost, and the
 * pull requests that waited for them are answered by nobody (retried on recovery). */
static void shard_lost(ps_server *s, uint32_t k)
{
    if (s->mode == PS_BSP)
        return;
    for (uint32_t w = 0; w < s->n; w++) {
        uint8_t *l = pss_link(s, w, k);
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
        uint8_t l = *pss_link(s, w, k);
        int rc = SIM_OK;
        if (s->w[w].phase == W_DOWN)
            continue;
        if ((l & L_PUSH_OUT) && s->w[w].phase == W_COMPUTE) /* overlap: during backward */
            rc = pss_push(s, ctx, w, k, s->w[w].round, err);
        else if (l & L_PUSH_OUT)
            rc = s->w[w].phase == W_PULL || s->w[w].phase == W_HOLD
                     ? pss_push(s, ctx, w, k, s->w[w].round - 1, err)
                     : pss_broken(err, "a lost push with its gradient gone", w, k);
        if (rc == SIM_OK && (l & L_AWAIT) && !(l & L_QUEUED))
            rc = pss_request(s, ctx, w, k, err);
        if (rc != SIM_OK)
            return rc;
    }
    return s->mode == PS_BSP ? pss_close_round(s, ctx, k, err) : SIM_OK;
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
    return s->placement == PS_PLACE_COLOCATED && s->failover_ns > 0 &&
           pss_host_down(ctx, sh->host) && sim_ctx_now(ctx) - sh->down_since >= s->failover_ns;
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
        uint8_t *l = pss_link(s, w, k);
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
    bool rose = pss_clock_left(s, pw->clock);
    for (uint32_t k = 0; k < s->K && s->placement == PS_PLACE_COLOCATED; k++) {
        if (s->sh[k].host != w)
            continue;
        shard_lost(s, k);
        int rc = host_lost(s, ctx, k, err);
        if (rc != SIM_OK)
            return rc;
    }
    for (uint32_t k = 0; k < s->K && s->mode == PS_BSP; k++) {
        int rc = pss_close_round(s, ctx, k, err);
        if (rc != SIM_OK)
            return rc;
    }
    return rose ? pss_wake(s, ctx, err) : SIM_OK;
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
 * starts an iteration. While draining it only holds: the resume makes it a member, and a failure
 * before then takes it out of no round (it was counted out of the drain's round when it failed). */
static int join(ps_server *s, sim_ctx *ctx, uint32_t w, sim_err *err)
{
    ps_worker *pw = &s->w[w];
    if (s->min_clock != UINT64_MAX && pw->clock < s->min_clock)
        pw->clock = s->min_clock;
    pw->phase = W_BLOCKED;
    if (s->min_clock == UINT64_MAX)
        pss_rescan_min(s);
    else if (pw->clock == s->min_clock)
        s->at_min++;
    if (s->mode == PS_BSP && !s->draining) {
        uint64_t newest = newest_round(s);
        pw->joined = pw->round = newest;
        for (uint32_t k = 0; k < s->K; k++)
            if (s->sh[k].round == newest)
                s->sh[k].pending++;
    } else if (s->draining) {
        pw->joined = UINT64_MAX; /* a member of no round before the resume: not counted out */
    }
    return pss_try_start(s, ctx, w, err);
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

/* Whether shard k is lost for good: its host is down and it never moves (failover_s 0, or a
 * failover due after the stop). */
static bool shard_gone(const ps_server *s, const sim_ctx *ctx, uint32_t k)
{
    uint32_t host = s->sh[k].host;
    bool never = s->failover_ns == 0 || s->sh[k].down_since > s->stop_ns - s->failover_ns;
    return s->placement == PS_PLACE_COLOCATED && never && host < sim_ctx_workers(ctx) &&
           sim_ctx_down(ctx, host);
}

/* Whether live worker w can compute before a lost shard comes back: it computes or is about
 * to, or its pull waits for no lost shard. A worker that holds or is blocked pulls afresh. */
static bool may_compute(const ps_server *s, const sim_ctx *ctx, uint32_t w)
{
    uint8_t phase = s->w[w].phase;
    if (phase == W_COMPUTE || phase == W_SYNC)
        return true;
    if (phase != W_PULL)
        return false;
    for (uint32_t k = 0; k < s->K; k++)
        if ((s->link[(size_t)w * s->K + k] & L_AWAIT) && shard_gone(s, ctx, k))
            return false;
    return true;
}

bool ps_server_stuck(const ps_server *s, const sim_ctx *ctx)
{
    bool gone = false;
    for (uint32_t k = 0; k < s->K && !gone; k++)
        gone = shard_gone(s, ctx, k);
    for (uint32_t w = 0; w < s->n && gone; w++)
        if (s->w[w].phase != W_DOWN && may_compute(s, ctx, w))
            return false;
    return gone;
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
        int rc = pss_try_start(s, ctx, w, err);
        if (rc != SIM_OK)
            return rc;
    }
    return SIM_OK;
}

/* ---- the run ---- */

int ps_server_start(ps_server *s, sim_ctx *ctx, sim_err *err)
{
    for (uint32_t k = 0; k < s->K && s->placement == PS_PLACE_COLOCATED; k++) {
        if (!pss_host_down(ctx, s->sh[k].host))
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

int ps_server_on_event(ps_server *s, sim_ctx *ctx, const sim_event *ev, sim_err *err)
{
    int rc;
    switch (ev->kind) {
    case SIM_EV_COMPUTED:
        rc = pss_on_computed(s, ctx, (uint32_t)ev->dst, err);
        break;
    case SIM_EV_MSG:
        rc = pss_on_message(s, ctx, ev, err);
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
        rc = pss_on_push_timer(s, ctx, (uint32_t)ev->dst, ev->arg[0], err);
        break;
    case PS_SERVER_EV_SYNC:
        rc = pss_on_sync_timer(s, ctx, (uint32_t)ev->dst, ev->arg[0], err);
        break;
    default:
        return sim_err_set(err, SIM_EINVAL, NULL, "ps: unexpected event kind %u", ev->kind);
    }
    return rc != SIM_OK ? rc : check_drained(s, ctx, err);
}
