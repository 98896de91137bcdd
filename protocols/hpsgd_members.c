/* HPSGD's failures and admissions (hpsgd.c has the rest; both include the internal
 * protocols/hpsgd_state.h). The ring and the barrier follow the kit's failure policy
 * (protocols/coll.h); recovered workers wait in the kit's rejoin service (protocols/rejoin.h).
 *
 * Failures: a failed worker leaves the barrier (counted as arrived; if it coordinated, the
 * barrier restarts over the survivors, and releases it had sent but that had not landed are
 * given at the restart, a shortcut of one barrier latency) and the ring (restarted over the
 * survivors). Its G, and its share of a reduction no member has completed, are lost. A
 * reduction that some member had already completed counts as completed for every survivor at
 * once (its mean, computed then, includes the failed worker's share: a shortcut of the steps
 * the others had left); one that nobody had completed is abandoned: each survivor puts its A
 * back into G, to be sent at the next launch, so no survivor's gradient is lost or applied
 * twice. A recovered worker waits to be admitted
 * at the next round that merges and launches (not an epoch's last): the ring is idle then, so
 * it restarts with the newcomer, which joins the round just launched with a zero accumulation
 * (that round's merge is rescaled to the mean over its contributors) and is sent the new global
 * model (a full-model message from the coordinator) before it computes; it joins the barrier
 * once every member has been released from the admitting round. A recovered worker that finds
 * nobody active (or whose last active peer fails before admitting it) starts over alone, its
 * iteration count set to the barrier's next round.
 */
#include <stdbool.h>
#include <stdint.h>

#include "protocols/hpsgd_state.h"
#include "sim/tensor.h"

/* Admission waits for a round that merges and launches (so the ring is idle and the model the
 * coordinator holds after its update is the new global model) and does not end an epoch. */
int hps_maybe_admit(hpsgd *st, sim_ctx *ctx, uint32_t coord, sim_err *err)
{
    if (!rejoin_any_pending(st->rj, ctx) || !st->reduced || st->epoch_end || !st->inflight[coord] ||
        st->init[coord])
        return SIM_OK;
    for (uint32_t w = rejoin_next_pending(st->rj, ctx, 0); w != REJOIN_NONE;
         w = rejoin_next_pending(st->rj, ctx, w + 1)) {
        st->phase[w] = PH_FETCH;
        coll_ring_leave(st->ring, w);
    }
    st->admitting = true;
    st->admit_round = st->decided - 1;
    return st->run->ring_reset_active(st, ctx, err);
}

/* After the coordinator's update in an admitting round: each pending worker joins the round
 * just launched with a zero block and is sent the new global model. */
int hps_admit(hpsgd *st, sim_ctx *ctx, uint32_t coord, sim_err *err)
{
    st->admitting = false;
    st->barrier_stale = true;
    uint32_t zeros = 0;
    int rc = SIM_OK;
    for (uint32_t w = 0; w < st->n && rc == SIM_OK; w++) {
        if (st->phase[w] != PH_FETCH || !rejoin_pending(st->rj, w))
            continue;
        rejoin_settle(st->rj, w, true);
        st->outside[w] = true;
        zeros++;
        st->init[w] = true;
        st->inflight[w] = true;
        st->ring_done[w] = false;
        st->waiting[w] = false;
        st->launches[w] = st->launches[coord];
        st->wm[w] = st->wm[coord];
        st->settled[w] = st->settled[coord];
        st->win_steps[w] = st->fly_steps[w] = 0;
        st->fly_base[w] = st->wm[w]; /* its zero block: a merge of staleness 0 */
        sim_tensor_zero(row(st->acc, st, w), st->P);
        sim_tensor_zero(row(st->red, st, w), st->P);
        if (st->vel != NULL)
            sim_tensor_zero(row(st->vel, st, w), st->P);
        rc = coll_ring_join(st->ring, ctx, w, err);
        msg_hdr h = { .channel = 0, .kind = KIND_FETCH, .seq = st->settled[w] };
        if (rc == SIM_OK)
            rc = rejoin_send(st->rj, ctx, coord, w, h, err);
    }
    st->zero_launch = st->launches[coord];
    uint32_t n = coll_ring_size(st->ring);
    st->zero_scale = (double)n / (double)(n - zeros);
    return rc;
}

/* Starts the barrier again over the active workers, its first round the next undecided one,
 * keeping who waits (coll_barrier_restart): the admitted that computed arrive too. */
int hps_restart_barrier(hpsgd *st, sim_ctx *ctx, sim_err *err)
{
    st->barrier_stale = false;
    for (uint32_t w = 0; w < st->n; w++)
        st->outside[w] = false;
    uint32_t m = st->run->active_list(st, ctx);
    return coll_barrier_restart(st->barrier, ctx, st->members, m, st->waiting, err);
}

/* Worker w (up, pending) starts over alone: nobody else is active. */
static int start_alone(hpsgd *st, sim_ctx *ctx, uint32_t w, sim_err *err)
{
    rejoin_settle(st->rj, w, true);
    st->phase[w] = PH_RUN;
    st->init[w] = true;
    st->inflight[w] = false;
    st->waiting[w] = false;
    st->win_steps[w] = 0;
    sim_tensor_zero(row(st->acc, st, w), st->P);
    if (st->vel != NULL)
        sim_tensor_zero(row(st->vel, st, w), st->P);
    coll_ring_leave(st->ring, w);
    /* Its iterations are counted in the barrier's rounds (the round it waits in is
     * settled[w]): the barrier starts again at the next undecided round, so does w. */
    st->settled[w] = st->decided;
    int rc = st->run->ring_reset_active(st, ctx, err);
    if (rc == SIM_OK)
        rc = hps_restart_barrier(st, ctx, err);
    st->start_wm[w] = st->wm[w];
    return rc != SIM_OK ? rc : sim_ctx_compute(ctx, w, st->settled[w], err);
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

/* Worker w failed: see the header for what happens to the reductions in flight (nothing when
 * it was waiting to be admitted). */
int hps_on_down(hpsgd *st, sim_ctx *ctx, uint32_t w, sim_err *err)
{
    bool coordinated = coll_barrier_coordinator(st->barrier) == w, abandoned = false;
    bool out = st->phase[w] == PH_OUT;
    rejoin_worker_down(st->rj, w);
    if (out)
        return SIM_OK;
    st->phase[w] = PH_OUT;
    st->outside[w] = false;
    st->waiting[w] = false;
    st->inflight[w] = false;
    for (uint32_t v = 0; v < st->n; v++) {
        if (!active(st, ctx, v) || !st->inflight[v] || st->ring_done[v])
            continue;
        coll_ring_leave(st->ring, v);
        if (st->cached != 0 && st->cached == st->launches[v]) {
            st->ring_done[v] = true; /* a member completed it: its mean is known */
        } else {
            sim_tensor_axpy(row(st->acc, st, v), 1.0f, row(st->red, st, v), st->P);
            if (st->fly_steps[v] > 0 &&
                (st->win_steps[v] == 0 || st->fly_base[v] < st->win_base[v]))
                st->win_base[v] = st->fly_base[v];
            st->win_steps[v] += st->fly_steps[v];
            st->inflight[v] = false;
            abandoned = true;
        }
        if (st->waiting[v])
            st->arrived_done[v] = true;
    }
    st->abandoned += abandoned;
    int rc = coll_ring_worker_down(st->ring, ctx, w, err); /* over the other active workers */
    /* Flushes waiting for a reduction now completed or abandoned go on. */
    for (uint32_t v = 0; v < st->n && rc == SIM_OK; v++)
        if (active(st, ctx, v))
            rc = st->run->flush_go_on(st, ctx, v, err);
    if (rc == SIM_OK && coordinated && st->barrier_stale) /* the admitted join its restart */
        rc = hps_restart_barrier(st, ctx, err);
    else if (rc == SIM_OK)
        rc = coll_hub_worker_down(st->hub, ctx, w, err);
    return rc != SIM_OK ? rc : hps_after_down(st, ctx, err);
}

/* The global model reached an admitted worker: it starts computing on it. */
int hps_on_fetched(hpsgd *st, sim_ctx *ctx, uint32_t w, uint32_t src, sim_err *err)
{
    if (st->phase[w] != PH_FETCH || !rejoin_adopt(st->rj, ctx, w, src))
        return SIM_OK; /* failed since: its fetch is void */
    st->phase[w] = PH_RUN;
    st->start_wm[w] = st->wm[w];
    return sim_ctx_compute(ctx, w, st->settled[w], err);
}

/* Worker w recovered: it waits to be admitted (maybe_admit); if nobody else is left, it starts
 * over alone at once. */
int hps_on_up(hpsgd *st, sim_ctx *ctx, uint32_t w, sim_err *err)
{
    rejoin_recovered(st->rj, w);
    return st->run->active_list(st, ctx) > 0 ? SIM_OK : start_alone(st, ctx, w, err);
}
