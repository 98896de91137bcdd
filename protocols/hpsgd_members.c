/* HPSGD's ring members (its generation over the active workers, a worker's launch into it),
 * failures and admissions (hpsgd.c has the rest and calls these; both include the internal
 * protocols/hpsgd_state.h). The ring and the barrier follow the kit's failure policy
 * (kit/coll.h); recovered workers wait in the kit's rejoin service (kit/rejoin.h),
 * which admits them (rejoin_admit) and starts one over alone when nobody is active.
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
 * lost or applied twice; a survivor whose release from the round that launched it lands after
 * the failure launches nothing in that round either (it had not joined the abandoned launch:
 * its launch alone would be one ahead of the others', paired with their next, and the ring
 * stalled), so the survivors launch together again.
 * A recovered worker waits to be admitted at the next round that merges
 * and launches (not an epoch's last): the ring is idle then, so it restarts with the newcomer,
 * which joins the round just launched with a zero accumulation (that round's merge is rescaled to
 * the mean over its contributors: each member records the scale at its launch, fly_scale) and is
 * sent the new global model (a full-model message from the coordinator) before it computes; or
 * at an epoch's first round (the ring idle, every member holding the global model its flush
 * merged), which launches nothing: the newcomer joins no ring round, is sent x̄ (the global model,
 * held by the rejoin service, since the members' parameters take a local step) and launches its
 * own gradient with the members at the next round (issue 38: with epochs of three rounds or fewer
 * no round merges and launches, and a recovered worker waited to the run's end); the kit's barrier
 * admits it (coll_barrier_admit), holding its arrival until every member has been released from the
 * admitting round, when the barrier restarts with it. If the coordinator fails before the global
 * model lands, the kit has the active worker furthest ahead send it again: no member is released
 * from the round after the admitting one before the newcomer arrives, so that worker's parameters
 * are still the admitting round's merge (bitwise the coordinator's without momentum); with nobody
 * active left the admission is undone (unadmit). A recovered worker that finds nobody active (or
 * whose last active peer fails before admitting it) starts over alone, its iteration count set to
 * the barrier's next round.
 */
#include <assert.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "protocols/hpsgd_state.h"

/* ---- the tally of the active workers' iterations ---- */

/* The active workers' iteration counts are a few neighbours (the barrier holds each round until
 * every member has finished the one before; an admitted worker takes the coordinator's), so the
 * tally's entries are few and its updates walk a few of them from the least. */

/* The index of count k in the tally, or where it goes. */
static uint32_t tally_find(hpsgd *st, uint64_t k)
{
    uint32_t i = 0;
    while (i < st->ntally && st->tally[i].settled < k)
        i++;
    st->tallied += i + 1;
    return i;
}

static void tally_add(hpsgd *st, uint64_t k)
{
    uint32_t i = tally_find(st, k);
    if (i == st->ntally || st->tally[i].settled != k) {
        memmove(st->tally + i + 1, st->tally + i, (st->ntally - i) * sizeof(*st->tally));
        st->tally[i] = (hps_count){ .settled = k, .workers = 0 };
        st->ntally++;
    }
    st->tally[i].workers++;
}

static void tally_remove(hpsgd *st, uint64_t k)
{
    uint32_t i = tally_find(st, k);
    assert(i < st->ntally && st->tally[i].settled == k);
    if (--st->tally[i].workers > 0)
        return;
    st->ntally--;
    memmove(st->tally + i, st->tally + i + 1, (st->ntally - i) * sizeof(*st->tally));
}

void hps_set(hpsgd *st, sim_ctx *ctx, uint32_t w, uint8_t phase, uint64_t settled)
{
    hps_worker *x = hw(ctx, w);
    if (x->phase != PH_OUT)
        tally_remove(st, x->settled);
    x->phase = phase;
    x->settled = settled;
    if (phase != PH_OUT)
        tally_add(st, settled);
}

/* ---- the ring's members ---- */

/* The active workers in id order, into st->members; their number. */
uint32_t hps_active_list(hpsgd *st, const sim_ctx *ctx)
{
    uint32_t m = 0;
    for (uint32_t w = 0; w < st->n; w++)
        if (active(ctx, w))
            st->members[m++] = w;
    return m;
}

/* A new ring generation over the active workers (none of them joined to a round). */
int hps_ring_reset_active(hpsgd *st, sim_ctx *ctx, sim_err *err)
{
    uint32_t m = hps_active_list(st, ctx);
    return coll_ring_reset(st->ring, ctx, st->members, m, sim_ctx_layer_bytes(ctx, SIM_LAYERS_ALL),
                           err);
}

/* A := G, G := 0, and w joins the ring's next round with A (launches[w] + 1). */
int hps_launch(hpsgd *st, sim_ctx *ctx, uint32_t w, sim_err *err)
{
    sim_tensor_copy(row(st->red, st, w), row(st->acc, st, w), st->P);
    sim_tensor_zero(row(st->acc, st, w), st->P);
    hw(ctx, w)->fly_steps = hw(ctx, w)->win_steps;
    hw(ctx, w)->fly_base = hw(ctx, w)->win_base;
    hw(ctx, w)->fly_scale = st->launch_scale;
    hw(ctx, w)->win_steps = 0;
    hw(ctx, w)->inflight = true;
    hw(ctx, w)->ring_done = false;
    hw(ctx, w)->launches++;
    return coll_ring_join(st->ring, ctx, w, err);
}

/* ---- admissions ---- */

/* Admission waits for a round that does not end an epoch, its coordinator active, and either
 * merges and launches (the ring is idle, and the model the coordinator holds after its update is
 * the new global model) or launches nothing, every active member just merged with nothing in
 * flight (an epoch's first round, after its flush or an abandoned launch: the ring is idle, and
 * x̄ after the release is the global model). The global model held for an earlier admission is
 * released: the workers it admitted have all arrived since (or failed). */
int hps_maybe_admit(hpsgd *st, sim_ctx *ctx, uint32_t coord, sim_err *err)
{
    rejoin_release_state(st->rj, ctx);
    st->launch_scale = 1.0;
    uint32_t w = rejoin_next_pending(st->rj, ctx, 0);
    if (w == REJOIN_NONE || st->epoch_end || !active(ctx, coord))
        return SIM_OK;
    bool merges = st->reduced && hw(ctx, coord)->inflight && !hw(ctx, coord)->init, idle = !merges;
    for (uint32_t j = 0; j < st->n && idle; j++) /* every member just merged, none joined */
        idle = !active(ctx, j) || (hw(ctx, j)->init && !hw(ctx, j)->inflight);
    if (!merges && !idle)
        return SIM_OK;
    uint32_t zeros = 0;
    for (; w != REJOIN_NONE; w = rejoin_next_pending(st->rj, ctx, w + 1), zeros++)
        hps_set(st, ctx, w, PH_FETCH, hw(ctx, w)->settled); /* active, not joined to the ring */
    st->admitting = true;
    st->admit_idle = idle;
    int rc = hps_ring_reset_active(st, ctx, err);
    if (merges) /* every launch of this round, the admitted's zero blocks too, is rescaled */
        st->launch_scale =
            (double)coll_ring_size(st->ring) / (double)(coll_ring_size(st->ring) - zeros);
    return rc;
}

/* After the coordinator's update in an admitting round: the kit admits each pending worker
 * (admit_worker) and the coordinator sends it the new global model: its parameters after a
 * merge, else (an epoch's first round, its parameters a local step past it) its x̄, held by the
 * rejoin service for every send, a resend by a member that stepped too. */
int hps_admit(hpsgd *st, sim_ctx *ctx, uint32_t coord, sim_err *err)
{
    msg_hdr h = { .channel = 0, .kind = KIND_FETCH, .seq = hw(ctx, coord)->settled };
    uint32_t n;
    st->admitting = false;
    int rc = st->admit_idle ? rejoin_hold_state(st->rj, ctx, row(st->xbar, st, coord), st->P, err)
                            : SIM_OK;
    return rc != SIM_OK ? rc : rejoin_admit(st->rj, ctx, coord, h, &n, err);
}

/* The admission of w (rejoin_admit): from a fresh state with the coordinator's counters. After
 * a merge it joins the round just launched as launch() does with G = 0 (a zero block: a merge of
 * staleness 0); in an epoch's first round it joins none and takes x̄ := x when its model lands
 * (not init: at its first release it launches with the members, its G its one gradient). It
 * holds back no round decided before it arrives; the kit's barrier takes it in once every
 * member has been released from the admitting round. */
static int admit_worker(void *owner, sim_ctx *ctx, uint32_t w, uint32_t coord, sim_err *err)
{
    hpsgd *st = owner;
    hps_worker *x = hw(ctx, w);
    const hps_worker *c = hw(ctx, coord);
    fresh(st, ctx, w);
    x->launches = st->admit_idle ? c->launches : c->launches - 1;
    x->init = !st->admit_idle;
    x->wm = x->win_base = c->wm;
    hps_set(st, ctx, w, PH_FETCH, c->settled);
    x->arrived_done = true;
    int rc = coll_barrier_admit(st->barrier, w, err);
    return rc != SIM_OK || st->admit_idle ? rc : hps_launch(st, ctx, w, err);
}

/* The rejoin service's `alone` (rejoin_up, rejoin_down): nobody else is active, w starts over
 * alone from a fresh state. Its iterations are counted in the barrier's rounds (the round it
 * waits in is settled[w]): the barrier starts again at the next undecided round, so does w. */
static int start_alone(void *owner, sim_ctx *ctx, uint32_t w, sim_err *err)
{
    hpsgd *st = owner;
    fresh(st, ctx, w);
    hps_set(st, ctx, w, PH_RUN, st->decided);
    int rc = hps_ring_reset_active(st, ctx, err);
    rc = rc != SIM_OK ? rc : coll_barrier_restart(st->barrier, ctx, &w, 1, NULL, err);
    return rc != SIM_OK ? rc : compute_next(ctx, w, err);
}

/* The rejoin service undid w's admission (the coordinator sending it the global model failed
 * with nobody active left to send it again): it waits again, out of the group, so that the
 * first waiting worker starts over alone. */
static int unadmit(void *owner, sim_ctx *ctx, uint32_t w, sim_err *err)
{
    (void)err;
    hps_set(owner, ctx, w, PH_OUT, hw(ctx, w)->settled);
    return SIM_OK;
}

bool hps_runs(sim_ctx *ctx, uint32_t j, uint64_t *k)
{
    *k = hw(ctx, j)->settled;
    return active(ctx, j);
}

const rejoin_ops hps_rejoin = {
    .name = "hpsgd",
    .progress = hps_runs,
    .alone = start_alone,
    .admit = admit_worker,
    .requeue = unadmit,
};

/* Worker w failed: see the header for what happens to the reductions in flight (the ring ends
 * them, on_ring_done takes each survivor's back or as done; nothing when w was waiting to be
 * admitted); the rejoin service then starts a waiting worker over alone if nobody is left. */
int hps_on_down(hpsgd *st, sim_ctx *ctx, uint32_t w, sim_err *err)
{
    hps_worker *x = hw(ctx, w);
    int rc = SIM_OK;
    if (x->phase != PH_OUT) {
        hps_set(st, ctx, w, PH_OUT, x->settled);
        x->waiting = x->inflight = false;
        rc = coll_hub_worker_down(st->hub, ctx, w, err); /* the ring's first (channel 1) */
    }
    return rc != SIM_OK ? rc : rejoin_down(st->rj, ctx, w, err);
}

/* The global model reached an admitted worker: it starts computing on it. A worker that failed
 * since: its fetch is void. One admitted in an epoch's first round (not init) takes the model it
 * adopts as x̄ too. */
int hps_on_fetched(hpsgd *st, sim_ctx *ctx, uint32_t w, uint32_t src, sim_err *err)
{
    if (hw(ctx, w)->phase != PH_FETCH || !rejoin_adopt(st->rj, ctx, w, src))
        return SIM_OK;
    if (!hw(ctx, w)->init)
        sim_tensor_copy(row(st->xbar, st, w), sim_ctx_params_view(ctx, w), st->P);
    hw(ctx, w)->phase = PH_RUN;
    return compute_next(ctx, w, err);
}
