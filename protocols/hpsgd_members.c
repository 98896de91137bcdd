/* HPSGD's failures and admissions (hpsgd.c has the rest; both include the internal
 * protocols/hpsgd_state.h). The ring and the barrier follow the kit's failure policy
 * (protocols/coll.h); recovered workers wait in the kit's rejoin service (protocols/rejoin.h).
 *
 * Failures: a failed worker leaves the barrier (counted as arrived; if it coordinated, the
 * barrier restarts over the survivors, and releases it had sent but that had not landed are
 * given at the restart, a shortcut of one barrier latency) and the ring (restarted over the
 * survivors, ending the round in flight for them, COLL_RING_END: hpsgd.c's on_ring_done
 * takes it as completed or abandoned). Its G, and its share of a reduction no member has
 * completed, are lost. A reduction that some member had already completed counts as completed
 * for every survivor at once (its mean, computed then, includes the failed worker's share: a
 * shortcut of the steps the others had left); one that nobody had completed is abandoned: each
 * survivor puts its A back into G, to be sent at the next launch, so no survivor's gradient is
 * lost or applied twice. A recovered worker waits to be admitted at the next round that merges
 * and launches (not an epoch's last): the ring is idle then, so it restarts with the newcomer,
 * which joins the round just launched with a zero accumulation (that round's merge is rescaled to
 * the mean over its contributors) and is sent the new global model (a full-model message from the
 * coordinator) before it computes; the kit's barrier admits it (coll_barrier_admit), holding its
 * arrival until every member has been released from the admitting round, when the barrier restarts
 * with it. A recovered worker that finds nobody active (or whose last active peer fails before
 * admitting it) starts over alone, its iteration count set to the barrier's next round.
 */
#include <stdbool.h>
#include <stdint.h>

#include "protocols/hpsgd_state.h"
#include "sim/tensor.h"

/* Admission waits for a round that merges and launches (so the ring is idle and the model the
 * coordinator holds after its update is the new global model) and does not end an epoch. */
int hps_maybe_admit(hpsgd *st, sim_ctx *ctx, uint32_t coord, sim_err *err)
{
    if (!rejoin_any_pending(st->rj, ctx) || !st->reduced || st->epoch_end ||
        !hw(ctx, coord)->inflight || hw(ctx, coord)->init)
        return SIM_OK;
    for (uint32_t w = rejoin_next_pending(st->rj, ctx, 0); w != REJOIN_NONE;
         w = rejoin_next_pending(st->rj, ctx, w + 1)) {
        hw(ctx, w)->phase = PH_FETCH;
        coll_ring_leave(st->ring, w);
    }
    st->admitting = true;
    return st->run->ring_reset_active(st, ctx, err);
}

/* After the coordinator's update in an admitting round: each pending worker joins the round
 * just launched with a zero block and is sent the new global model. */
int hps_admit(hpsgd *st, sim_ctx *ctx, uint32_t coord, sim_err *err)
{
    st->admitting = false;
    uint32_t zeros = 0;
    int rc = SIM_OK;
    for (uint32_t w = 0; w < st->n && rc == SIM_OK; w++) {
        if (hw(ctx, w)->phase != PH_FETCH || !rejoin_pending(st->rj, w))
            continue;
        rejoin_settle(st->rj, w, true);
        rc = coll_barrier_admit(st->barrier, w, err); /* a member once the admitting round ends */
        zeros++;
        hps_worker *x = hw(ctx, w);
        const hps_worker *c = hw(ctx, coord);
        x->init = true;
        x->inflight = true;
        x->ring_done = false;
        x->waiting = false;
        x->launches = c->launches;
        x->wm = c->wm;
        x->settled = c->settled;
        x->win_steps = x->fly_steps = 0;
        x->fly_base = x->wm;    /* its zero block: a merge of staleness 0 */
        x->arrived_done = true; /* holds back no round decided before it arrives */
        sim_tensor_zero(row(st->acc, st, w), st->P);
        sim_tensor_zero(row(st->red, st, w), st->P);
        if (st->momentum > 0)
            sim_tensor_zero(row(st->vel, st, w), st->P);
        if (rc == SIM_OK)
            rc = coll_ring_join(st->ring, ctx, w, err);
        msg_hdr h = { .channel = 0, .kind = KIND_FETCH, .seq = x->settled };
        if (rc == SIM_OK)
            rc = rejoin_send(st->rj, ctx, coord, w, h, err);
    }
    st->zero_launch = hw(ctx, coord)->launches;
    uint32_t n = coll_ring_size(st->ring);
    st->zero_scale = (double)n / (double)(n - zeros);
    return rc;
}

/* Worker w (up, pending) starts over alone: nobody else is active. */
static int start_alone(hpsgd *st, sim_ctx *ctx, uint32_t w, sim_err *err)
{
    hps_worker *x = hw(ctx, w);
    rejoin_settle(st->rj, w, true);
    x->phase = PH_RUN;
    x->init = true;
    x->inflight = false;
    x->waiting = false;
    x->win_steps = 0;
    sim_tensor_zero(row(st->acc, st, w), st->P);
    if (st->momentum > 0)
        sim_tensor_zero(row(st->vel, st, w), st->P);
    coll_ring_leave(st->ring, w);
    /* Its iterations are counted in the barrier's rounds (the round it waits in is
     * settled[w]): the barrier starts again at the next undecided round, so does w. */
    x->settled = st->decided;
    int rc = st->run->ring_reset_active(st, ctx, err);
    if (rc == SIM_OK)
        rc = coll_barrier_restart(st->barrier, ctx, &w, 1, NULL, err);
    x->start_wm = x->wm;
    return rc != SIM_OK ? rc : sim_ctx_compute(ctx, w, x->settled, err);
}

/* The last active worker failed while recovered ones wait to be admitted (no round will admit
 * them any more): the first of them starts over alone, the others wait for its admissions. */
static int hps_after_down(hpsgd *st, sim_ctx *ctx, sim_err *err)
{
    if (st->run->active_list(st, ctx) > 0)
        return SIM_OK;
    uint32_t w = rejoin_next_pending(st->rj, ctx, 0);
    return w == REJOIN_NONE ? SIM_OK : start_alone(st, ctx, w, err);
}

/* Worker w failed: see the header for what happens to the reductions in flight (the ring ends
 * them, on_ring_done takes each survivor's back or as done; nothing when w was waiting to be
 * admitted). */
int hps_on_down(hpsgd *st, sim_ctx *ctx, uint32_t w, sim_err *err)
{
    bool out = hw(ctx, w)->phase == PH_OUT;
    rejoin_worker_down(st->rj, w);
    if (out)
        return SIM_OK;
    hw(ctx, w)->phase = PH_OUT;
    hw(ctx, w)->waiting = false;
    hw(ctx, w)->inflight = false;
    int rc = coll_hub_worker_down(st->hub, ctx, w, err); /* the ring's first (channel 1) */
    return rc != SIM_OK ? rc : hps_after_down(st, ctx, err);
}

/* The global model reached an admitted worker: it starts computing on it. */
int hps_on_fetched(hpsgd *st, sim_ctx *ctx, uint32_t w, uint32_t src, sim_err *err)
{
    if (hw(ctx, w)->phase != PH_FETCH || !rejoin_adopt(st->rj, ctx, w, src))
        return SIM_OK; /* failed since: its fetch is void */
    hw(ctx, w)->phase = PH_RUN;
    hw(ctx, w)->start_wm = hw(ctx, w)->wm;
    return sim_ctx_compute(ctx, w, hw(ctx, w)->settled, err);
}

/* Worker w recovered: it waits to be admitted (maybe_admit); if nobody else is left, it starts
 * over alone at once. */
int hps_on_up(hpsgd *st, sim_ctx *ctx, uint32_t w, sim_err *err)
{
    rejoin_recovered(st->rj, w);
    return st->run->active_list(st, ctx) > 0 ? SIM_OK : start_alone(st, ctx, w, err);
}
