/* HPSGD / HLSGD (PROTOCOLS §7): the all-reduce of a gradient accumulation overlapped with
 * local steps on a replica, merged into the global model when it has finished.
 *
 * Per worker: x (the replica: the worker's parameters, which train), x̄ (its copy of the global
 * model, `xbar`), G (`acc`, gradients since the last launch) and A (`red`, the accumulation
 * the ring is reducing). Every iteration each live worker computes g on x, then arrives at a
 * barrier (the kit's, a zero-byte message to a coordinator and back). When released:
 *   - right after a merge (`init`) x̄ := x; then, as long as the reduction launched last has not
 *     finished (or right after a merge), G += g and x -= lr g (a local step);
 *   - otherwise A_new := G + g; if a reduction has finished, the merge x := x̄ - lr * mean(A)
 *     (its sum over members divided by their number), else (the very first launch) x -= lr g;
 *     then A := A_new, G := 0 and A is all-reduced by the kit's ring on its own channel while
 *     the workers go on computing.
 * "Finished" is decided once per barrier round, when the coordinator releases it: every live
 * member had completed its ring round when it arrived (the flag travels with the arrival; the
 * kit's barrier carries no payload, so the protocol reads the members' flags at that moment).
 * Every member thus takes the same branch, merges the same reduced mean (coll_mean: summed in
 * ring order once per round) with the learning rate the barrier read once for the round, and
 * all x̄ stay bitwise identical (with momentum too: the merges' velocity sees only the merged
 * means, see below). With lr constant and momentum 0 a merge moves x̄ by exactly -lr times the
 * members' mean accumulation.
 *
 * End of an epoch (when the samples of the barrier rounds reach a multiple of the training set;
 * never with the timing-only model): the last iteration of the epoch flushes synchronously.
 * After the usual x̄ := x (if just merged) and G += g, the worker waits for the reduction in
 * flight; with `flush: both` (default) it merges it (x̄ advances), with `newest` it drops it
 * (the authors' code, PROTOCOLS §7.2 note); then it all-reduces G at once, waits, and merges
 * that: x := x̄ - lr * mean(G). Nothing is in flight afterwards and the next epoch starts as the
 * first (a local step, then the first launch). (The released code also re-applies the flushed
 * accumulation at the next epoch's first launch and, when the flush follows a merge at once,
 * resets to the x̄ before that merge; neither is reproduced: the spec's note names only the
 * drop.)
 *
 * The optimizer is the authors' (`optim.SGD(momentum=0)`, through which their merges go too):
 * SGD with the protocol's own `momentum` m (default 0, not the workload's, which hpsgd does not
 * use: the run says so in a note when the two differ), one step x := x - lr v, v := m v + g'
 * (g' = g plus weight decay), for local steps (g) and merges (x := x̄, then the step with
 * g = mean(A)); with m = 0 a merge is exactly x̄ - lr A / N (plus weight decay). With m > 0
 * the merges keep their own velocity u (a buffer of the protocol's per worker, equal on all),
 * so that each gradient enters the global model's velocity once, through the merged mean: a
 * merge after k local steps is u := m^(k+1) u + mean(A), x := x̄ - lr u (u decays once per
 * step since the last merge, as the authors' one optimizer would decay it), and the local
 * steps go on from it (v := u). One velocity for both (the authors' single optimizer, had it
 * momentum) takes each gradient in twice: in its local step, and again in the merged mean on
 * top of a velocity that kept the local steps' share (issue 39). A worker admitted after a
 * recovery, or one starting over alone, starts with u = v = 0 (a fresh optimizer).
 *
 * Failures and admissions: protocols/hpsgd_members.c.
 */
#include <math.h>
#include <stdlib.h>

#include "kit/coll.h"
#include "kit/rejoin.h"
#include "protocols/hpsgd_state.h"
#include "runtime/proto.h"
#include "sim/tensor.h"

static const float *accumulation(void *ud, sim_ctx *ctx, uint32_t w)
{
    (void)ctx;
    hpsgd *st = ud;
    return row(st->red, st, w);
}

/* One step of an optimizer (see the header) on worker w's replica with gradient g: the local
 * steps' (velocity `vel`, coefficient m) or the merges' (`mvel`, m^k). */
static void step(hpsgd *st, sim_ctx *ctx, uint32_t w, float *vel, double m, const float *g,
                 double lr)
{
    if (st->momentum == 0)
        sim_ctx_step(ctx, (sim_target){ .w = w }, &(sim_step){ .lr = lr, .momentum = 0.0 }, g);
    else
        sim_ctx_step(ctx,
                     (sim_target){ .kind = SIM_TARGET_BLOCK,
                                   .params = sim_ctx_params(ctx, w),
                                   .velocity = row(vel, st, w),
                                   .n = st->P },
                     &(sim_step){ .lr = lr, .momentum = m }, g);
}

/* The merge on worker w: x := x̄, then a step with the mean (x̄ - lr * mean without momentum),
 * with init set (x̄ := x at the next release). */
static void hps_merge(hpsgd *st, sim_ctx *ctx, uint32_t w, double lr)
{
    float *x = sim_ctx_params(ctx, w);
    sim_tensor_copy(x, row(st->xbar, st, w), st->P);
    /* A round that admitted workers (zero blocks) is the mean over its contributors: the
     * rate scaled without momentum, the mean itself with (the velocity keeps its scale). */
    const float *mean = coll_mean_last(st->mean);
    double scale = hw(ctx, w)->fly_scale;
    if (scale != 1.0 && st->momentum == 0) {
        lr *= scale;
    } else if (scale != 1.0) {
        sim_tensor_copy(st->scaled, mean, st->P);
        sim_tensor_scale(st->scaled, (float)scale, st->P);
        mean = st->scaled;
    }
    /* The merges' velocity decays once per step taken since the last merge, this one too. */
    double decay = pow(st->momentum, (double)(hw(ctx, w)->since + 1));
    step(st, ctx, w, st->mvel, decay, mean, lr);
    hw(ctx, w)->since = 0;
    if (st->momentum > 0)
        sim_tensor_copy(row(st->vel, st, w), row(st->mvel, st, w), st->P);
    st->merge_events++;
    st->merged_steps += hw(ctx, w)->fly_steps;
    st->stale_sum += hw(ctx, w)->wm - hw(ctx, w)->fly_base;
    if (++hw(ctx, w)->wm > st->merges)
        st->merges = hw(ctx, w)->wm;
    hw(ctx, w)->inflight = false;
    hw(ctx, w)->init = true;
}

/* Adds g to G (the first gradient of a window records which global model it started from). */
static void accumulate(hpsgd *st, sim_ctx *ctx, uint32_t w)
{
    if (hw(ctx, w)->win_steps++ == 0)
        hw(ctx, w)->win_base = hw(ctx, w)->start_wm;
    sim_tensor_axpy(row(st->acc, st, w), 1.0f, sim_ctx_grad(ctx, w), st->P);
}

/* A local step of worker w with gradient g: the replica and the local steps' velocity. */
static void local_step(hpsgd *st, sim_ctx *ctx, uint32_t w, const float *g, double lr)
{
    step(st, ctx, w, st->vel, st->momentum, g, lr);
    hw(ctx, w)->since++;
}

/* Worker w has finished its iteration: counted, a round boundary if it was the last live
 * worker to finish this one (no active worker's count is behind it in the tally), and its next
 * computation. */
static int hps_settle(hpsgd *st, sim_ctx *ctx, uint32_t w, sim_err *err)
{
    sim_ctx_count(ctx, w, 1);
    uint64_t k = hw(ctx, w)->settled + 1;
    hps_set(st, ctx, w, hw(ctx, w)->phase, k);
    if (none_behind(st, k))
        sim_ctx_round_end(ctx);
    return compute_next(ctx, w, err);
}

/* The flush's second half: the all-reduce of G (its first half dealt with the one in flight). */
static int hps_flush_launch(hpsgd *st, sim_ctx *ctx, uint32_t w, sim_err *err)
{
    hw(ctx, w)->phase = PH_FLUSH_FINAL;
    return hps_launch(st, ctx, w, err);
}

/* The reduction launched before the flush is done for w: merged (both) or dropped (newest). */
static void hps_flush_previous(hpsgd *st, sim_ctx *ctx, uint32_t w)
{
    if (st->flush == FLUSH_BOTH) {
        hps_merge(st, ctx, w, coll_mean_lr(st->mean));
        sim_tensor_copy(row(st->xbar, st, w), sim_ctx_params_view(ctx, w), st->P);
        hw(ctx, w)->init = false;
    } else {
        hw(ctx, w)->inflight = false;
        if (w == coll_barrier_coordinator(st->barrier))
            st->dropped++;
    }
}

/* The last iteration of an epoch, after the barrier. */
static int flush_begin(hpsgd *st, sim_ctx *ctx, uint32_t w, sim_err *err)
{
    if (hw(ctx, w)->init)
        sim_tensor_copy(row(st->xbar, st, w), sim_ctx_params_view(ctx, w), st->P);
    hw(ctx, w)->init = false;
    accumulate(st, ctx, w);
    if (w == coll_barrier_coordinator(st->barrier))
        st->flushes++;
    if (hw(ctx, w)->inflight && !hw(ctx, w)->ring_done) {
        hw(ctx, w)->phase = PH_FLUSH_WAIT;
        return SIM_OK;
    }
    if (hw(ctx, w)->inflight)
        hps_flush_previous(st, ctx, w);
    return hps_flush_launch(st, ctx, w, err);
}

/* A flush waiting for a reduction goes on once that reduction is over for w: completed
 * (ring_done) or abandoned (no longer in flight); nothing otherwise. */
static int hps_flush_go_on(hpsgd *st, sim_ctx *ctx, uint32_t w, sim_err *err)
{
    if (hw(ctx, w)->phase == PH_FLUSH_WAIT) {
        if (hw(ctx, w)->inflight)
            hps_flush_previous(st, ctx, w);
        return hps_flush_launch(st, ctx, w, err);
    }
    if (hw(ctx, w)->phase == PH_FLUSH_FINAL && hw(ctx, w)->ring_done) {
        hps_merge(st, ctx, w, coll_mean_lr(st->mean));
        hw(ctx, w)->phase = PH_RUN;
        return hps_settle(st, ctx, w, err);
    }
    if (hw(ctx, w)->phase == PH_FLUSH_FINAL && !hw(ctx, w)->inflight)
        return hps_flush_launch(st, ctx, w, err);
    return SIM_OK;
}

/* The ring's round is over for w, then a flush waiting for it goes on. Completed by w (its mean
 * computed, once per round), or ended by a member's failure (COLL_RING_END) after some member
 * had completed it: done. Ended with nobody having completed it (the ring's verdict,
 * coll_info.ended; counted once per failure in its coll_stats.abandoned): abandoned, A goes
 * back into G, with its window's bookkeeping, to be sent at the next launch. Either way an
 * ended round holds back no barrier round w is waiting in. */
static int on_ring_done(void *ud, sim_ctx *ctx, uint32_t w, const coll_info *info, sim_err *err)
{
    hpsgd *st = ud;
    hps_worker *x = hw(ctx, w);
    if (info->ended == 0)
        coll_mean_of(st->mean, st->ring, ctx, info->round, accumulation, st);
    if (info->ended == COLL_ENDED_ABANDONED) {
        sim_tensor_axpy(row(st->acc, st, w), 1.0f, row(st->red, st, w), st->P);
        if (x->fly_steps > 0 && (x->win_steps == 0 || x->fly_base < x->win_base))
            x->win_base = x->fly_base;
        x->win_steps += x->fly_steps;
        x->inflight = false;
        st->void_launches = st->decided;
    } else {
        x->ring_done = true;
    }
    x->arrived_done |= info->ended != 0 && x->waiting;
    return hps_flush_go_on(st, ctx, w, err);
}

/* Once per barrier round, when its coordinator releases it: did every reduction in flight
 * finish before its member arrived, and does the round end an epoch? */
static void decide(hpsgd *st, sim_ctx *ctx, uint64_t round, double lr)
{
    uint32_t live = 0;
    bool reduced = true;
    for (uint32_t w = 0; w < st->n; w++) {
        if (!active(ctx, w))
            continue;
        live++;
        reduced &= hw(ctx, w)->arrived_done;
    }
    st->reduced = reduced;
    st->last_lr = lr;
    st->decided = round + 1; /* not a count: a barrier restarted over a worker alone after every
                              * member failed skips the round that none finished, and a count one
                              * behind decided the next round twice (an epoch's end for some) */
    st->samples += (uint64_t)live * sim_ctx_budget(ctx).batch;
    st->epoch_end = false;
    while (st->train > 0 && st->samples >= st->next_epoch) {
        st->epoch_end = true;
        st->next_epoch += st->train;
    }
}

/* Worker w is released from barrier round `round`: the iteration's update (PROTOCOLS §7.2). */
static int hps_released(hpsgd *st, sim_ctx *ctx, uint32_t w, uint64_t round, double lr,
                        sim_err *err)
{
    if (round >= st->decided) {
        decide(st, ctx, round, lr);
        int rc = hps_maybe_admit(st, ctx, w, err);
        if (rc != SIM_OK)
            return rc;
    }
    hw(ctx, w)->waiting = false;
    if (!active(ctx, w))
        return SIM_OK;
    if (st->epoch_end)
        return flush_begin(st, ctx, w, err);
    lr = st->last_lr;
    const float *g = sim_ctx_grad(ctx, w);
    if (hw(ctx, w)->init || (hw(ctx, w)->inflight && !st->reduced)) {
        if (hw(ctx, w)->init)
            sim_tensor_copy(row(st->xbar, st, w), sim_ctx_params_view(ctx, w), st->P);
        hw(ctx, w)->init = false;
        accumulate(st, ctx, w);
        local_step(st, ctx, w, g, lr);
        int rc = hps_settle(st, ctx, w, err);
        if (rc == SIM_OK && st->admitting) /* an epoch's first round (x̄ the global model) */
            rc = hps_admit(st, ctx, w, err);
        return rc;
    }
    accumulate(st, ctx, w); /* G + g is the accumulation launched below */
    if (hw(ctx, w)->inflight)
        hps_merge(st, ctx, w, lr);
    else
        local_step(st, ctx, w, g, lr);
    /* A member released after a failure abandoned this round's launches keeps its G, as they
     * did: its launch alone was one ahead of theirs, paired with their next, and stalled. */
    int rc = round + 1 == st->void_launches ? SIM_OK : hps_launch(st, ctx, w, err);
    if (rc == SIM_OK)
        rc = hps_settle(st, ctx, w, err);
    if (rc == SIM_OK && st->admitting)
        rc = hps_admit(st, ctx, w, err);
    return rc;
}

static int on_barrier_done(void *ud, sim_ctx *ctx, uint32_t w, const coll_info *info, sim_err *err)
{
    return hps_released(ud, ctx, w, info->round, info->lr, err);
}

/* w arrives at the barrier (held by the kit until the restart that takes it in if admitted). */
static int on_computed(hpsgd *st, sim_ctx *ctx, uint32_t w, sim_err *err)
{
    hw(ctx, w)->arrived_done = !hw(ctx, w)->inflight || hw(ctx, w)->ring_done;
    hw(ctx, w)->waiting = true;
    return coll_barrier_arrive(st->barrier, ctx, w, err);
}

/* The ops table's buffers: hpsgd's own (hps_buffers), then the kit's objects, whose callbacks
 * are this file's: the rejoin service, the hub, the ring, the barrier and the ring's mean. */
static void hps_arena(void *state, sim_arena *a, size_t num_params)
{
    hpsgd *st = state;
    hps_buffers(state, a, num_params);
    st->rj = rejoin_create(a, st->n, NULL);
    st->hub = coll_hub_create(a, 2, 0);
    st->ring = coll_ring_create(a, st->hub, st->n, st->n, on_ring_done, st);
    st->barrier = coll_barrier_create(a, st->hub, st->n, st->n, on_barrier_done, st);
    st->mean = coll_mean_create(a, num_params, st->n);
}

static int hps_start(void *state, sim_ctx *ctx, sim_err *err)
{
    hpsgd *st = state;
    st->P = sim_ctx_num_params(ctx);
    st->train = sim_ctx_budget(ctx).train_samples;
    st->next_epoch = st->train;
    double wm = sim_ctx_budget(ctx).momentum;
    if (st->momentum != wm)
        sim_ctx_note(ctx,
                     "hpsgd uses protocol.momentum %g (the authors' optimizer, default 0), not "
                     "workload.momentum %g, for its local steps and merges",
                     st->momentum, wm);
    int rc = coll_hub_check(st->hub, err);
    if (rc == SIM_OK)
        coll_ring_on_failure(st->ring, COLL_RING_END);
    for (uint32_t w = 0; w < st->n; w++) {
        fresh(st, ctx, w);
        hw(ctx, w)->phase = PH_OUT; /* not yet in the tally */
        hps_set(st, ctx, w, sim_ctx_down(ctx, w) ? PH_OUT : PH_RUN, 0);
    }
    if (rc == SIM_OK)
        rejoin_owner(st->rj, &hps_rejoin, st);
    st->launch_scale = 1.0;
    if (rc == SIM_OK)
        rc = hps_ring_reset_active(st, ctx, err);
    uint32_t m = hps_active_list(st, ctx);
    if (rc == SIM_OK && m > 0)
        rc = coll_barrier_start(st->barrier, ctx, st->members, m, 0, err);
    for (uint32_t i = 0; i < m && rc == SIM_OK; i++)
        rc = sim_ctx_compute(ctx, st->members[i], 0, err);
    return rc;
}

static int hps_on_event(void *state, sim_ctx *ctx, const sim_event *ev, sim_err *err)
{
    hpsgd *st = state;
    uint32_t w = (uint32_t)ev->dst;
    switch (ev->kind) {
    case SIM_EV_COMPUTED:
        return hw(ctx, w)->phase == PH_OUT ? SIM_OK : on_computed(st, ctx, w, err);
    case SIM_EV_MSG: {
        bool handled;
        int rc = coll_hub_on_event(st->hub, ctx, ev, &handled, err);
        if (rc == SIM_OK && !handled)
            rc = hps_on_fetched(st, ctx, w, (uint32_t)ev->src, err);
        return rc;
    }
    case SIM_EV_WORKER_DOWN:
        return hps_on_down(st, ctx, w, err);
    case SIM_EV_WORKER_UP: /* it waits to be admitted, or starts over alone if nobody is active */
        return rejoin_up(st->rj, ctx, w, err);
    default:
        return sim_err_set(err, SIM_EINVAL, NULL, "hpsgd: unexpected event kind %u", ev->kind);
    }
}

const proto_ops proto_hpsgd = {
    .name = "hpsgd",
    .summary = "HPSGD: local steps on a replica while the gradient accumulation is all-reduced, "
               "then merged into the global model",
    .state_size = sizeof(hpsgd),
    .worker_size = sizeof(hps_worker),
    .rounds = true,
    .configure = hps_configure,
    .start = hps_start,
    .on_event = hps_on_event,
    .report = hps_report,
    .memory = hps_memory,
    .buffers = hps_arena,
};
