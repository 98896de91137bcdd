/* Ripples / Prague: partial all-reduce among generated groups (PROTOCOLS §4; Luo, He, Zhuo,
 * Qian, ASPLOS 2020, arXiv 1909.08029).
 *
 * Worker loop (§4.2). A worker computes its gradient, takes one local optimizer step with it
 * (sim_ctx_step: momentum as configured), counts the iteration, then synchronizes: it executes
 * its next group (in its list's order), and only then computes again. Any group counts, the
 * one it asked for or one another worker's request pulled it into: one P-Reduce per local
 * step. It asks the generator for a group only when it knows of none pending and has not asked
 * since it last learnt of one; otherwise its pending group is its synchronization.
 *
 * P-Reduce (§4.1). A group starts when its slowest member is ready for it: the kit's ring
 * all-reduce over its members (kit/coll.h), taken from a pool of rings (each ring its own
 * channel, one coll_ring_reset per group), so groups on disjoint members run at the same time.
 * With a real model every member's model becomes the group mean, computed once in the group's
 * ring order (coll_mean) and copied: the members end bitwise equal, non-members are untouched.
 *
 * Group sources ($.protocol.groups):
 *   random    the Group Generator (GG) draws, for a requester i, group_size - 1 other live
 *             workers uniformly (§4.3), whatever groups they have pending;
 *   buffer    the GG keeps every worker's buffer of pending groups (issued, not yet passed;
 *             §4.4 Group Buffer) and uses it twice: a request from a worker whose buffer
 *             already holds a group (pulled in while its request was on its way) forms
 *             nothing, and the requester's partners are drawn uniformly among the live workers
 *             with the fewest pending groups, free ones first, never one whose buffer holds
 *             buffer_depth groups (the group is smaller then). Fewer conflicts, slightly less
 *             randomness;
 *   division  (the default) the GG forms groups from batches that partition workers at
 *             random (§4.4 Group Division: a batch's groups never conflict), a remainder of one
 *             worker joining the batch's last group, and a requester with a group pending
 *             forms nothing. With "batch": "free" (the default) it keeps the Group Buffer's
 *             ledger too and uses both as the paper does, to avoid conflicts: a request from a
 *             worker whose buffer is empty draws a batch over the live workers whose buffers
 *             are empty, and issues all its groups at once into their buffers; a worker with
 *             a group pending is in no new batch, so no conflict can arise, and a slow worker
 *             delays only the group it is in (on a homogeneous cluster every worker is free
 *             when a batch is drawn, and the groups are those of "all" below). With "batch":
 *             "all" (the literal division, the default before issue 39) a batch partitions
 *             every live worker and a request issues the requester's group of the current
 *             batch, or starts a new batch when that group was issued already; "busy" then
 *             says what happens to members that still have a group of an earlier batch
 *             pending: "join" (default) issues the group whole, so batches pile groups on a
 *             slow worker and its partners wait behind them, "skip" (a design choice of ours,
 *             [R]) leaves them out;
 *   static    no GG: a periodic schedule every worker knows (§4.5): the lines of the grid
 *             $.protocol.grid along axis t mod d at iteration t ("static": "grid"), or
 *             ("static": "racks") intra-rack groups at even iterations and inter-rack groups
 *             (the j-th worker of every rack) at odd ones.
 *
 * The GG is a process of the simulation: it runs on the first server host when the scenario
 * has servers, else on worker 0 (which must then not fail). Requests (worker -> GG) and
 * notices (GG -> every member) are 64-byte messages on the simulated network. Every group
 * has a global sequence number; the GG also gives each member its local index (how many
 * groups it gave that member before), and a worker executes its groups strictly in that order
 * (§4.3): the lowest-numbered unfinished group is at the head of all its members' lists, so no
 * waits-for cycle can form. A conflict (§4.3.4) is a member that, when the GG forms a group,
 * already has a group pending: it executes the new group only after the other.
 *
 * Test-only switch ("order": "arrival", groups "random" only): there is no GG; a requester
 * draws its group itself, puts it first in its own list at once and sends 64-byte invitations
 * to the other members, and every worker executes groups in the order they reach it. This is
 * the design without the global order that §4.8.3 says can deadlock: A may wait in its own
 * group for B while B waits in C's for C and C in A's... The run then stops as "stalled".
 *
 * Failures. When a member goes down every unfinished group it belongs to
 * fails: a running ring is abandoned (a new generation makes its messages stale), the other
 * members keep their models and skip the group (a group that had already finished on some
 * members leaves those with the mean), and it is counted as failed. The GG does not choose a
 * down worker until it recovers (it sees the cluster's up/down state at once). A down worker
 * forgets its pending groups and the GG restarts its local numbering; on recovery it computes
 * again. In the static schedule a recovered worker rejoins one past the most advanced live
 * worker's iteration, and members found ahead of a group (rejoined past it) are left out of it.
 *
 * Files: this one holds failures and the run; protocols/ripples_reduce.c P-Reduce (a worker's
 * advance to its next group, the group's ring and its end), protocols/ripples_gg.c the Group
 * Generator, protocols/ripples_groups.c the group table and the static schedule,
 * protocols/ripples_config.c the configuration, protocols/ripples_state.h the state they share.
 * Calls run one way: this file calls the Group Generator, which calls P-Reduce, which calls
 * the group table; none calls back up.
 *
 * State. Each worker's (rp_worker, proto_ops.worker_size) holds its progress, its head group,
 * its row of pending groups and the GG's ledger of it; the group table, the ring pool's
 * arrays, the division's batch and the static schedule are the run's arena buffers, sized in
 * configure from the scenario alone (rp_buffers), and so are the kit's hub, rings and means
 * (rp_arena). Reads of another worker's state made on purpose without a message go through
 * sim_ctx_peer (rp_peer, counted in peer_reads): the GG's reads of a worker's pending groups
 * where it decides on them (the buffer's draw, a redundant request, a free batch's draw,
 * "busy": "skip"), and the
 * static schedule's reads of other workers' positions (members ahead of a new group, and a
 * rejoining worker's scan).
 */
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "kit/coll.h"
#include "kit/msg.h"
#include "protocols/ripples_state.h"
#include "runtime/proto.h"
#include "sim/tensor.h"

/* ---- failures ---- */

/* Group s fails (a member went down): its ring is abandoned and its waiting members freed. */
static int fail_group(ripples *st, sim_ctx *ctx, uint32_t s, sim_err *err)
{
    rp_group *g = &st->grp[s];
    if (g->failed)
        return SIM_OK;
    g->failed = true;
    st->failed++;
    if (g->ring != RP_NONE) {
        int rc = coll_ring_dissolve(st->rings[g->ring], ctx, err);
        if (rc != SIM_OK)
            return rc;
        st->freer[st->nfreer++] = g->ring;
        g->ring = RP_NONE;
    }
    const uint32_t *m = members_of(st, s);
    for (uint32_t i = 0; i < g->n; i++) {
        rp_worker *x = rp_w(ctx, m[i]);
        if (x->head == s)
            x->head = RP_NONE;
    }
    return SIM_OK;
}

static int worker_down(ripples *st, sim_ctx *ctx, uint32_t w, sim_err *err)
{
    rp_worker *x = rp_w(ctx, w);
    x->computing = false;
    x->head = RP_NONE;
    uint32_t nfreed = 0; /* st->freed: try_advance reuses st->list */
    /* The table's slots in order, those that list w unpassed alone (a failure walked all of
     * them: quadratic in the failures of one instant, issue 38). */
    for (uint32_t s = rp_next_unpassed(st, w, RP_NONE); s != RP_NONE;
         s = rp_next_unpassed(st, w, s)) {
        if (!st->grp[s].used)
            continue;
        uint32_t i = index_of(st, s, w);
        if (i == RP_NONE || st->gpassed[(size_t)s * st->cap + i])
            continue;
        int rc = fail_group(st, ctx, s, err);
        if (rc != SIM_OK)
            return rc;
        /* Its members are freed; they skip the group in try_advance. */
        const uint32_t *m = members_of(st, s);
        for (uint32_t j = 0; j < st->grp[s].n; j++)
            if (m[j] != w) {
                bool seen = false;
                for (uint32_t q = 0; q < nfreed && !seen; q++)
                    seen = st->freed[q] == m[j];
                if (!seen)
                    st->freed[nfreed++] = m[j];
            }
        rp_pass_slot(st, s, i);
    }
    x->plist = RP_END; /* its arrived groups forgotten */
    x->next = x->assigned;
    x->pending = 0;
    x->known = 0;
    x->asked = false;
    x->need = x->done;
    x->sync_ns = -1;
    for (uint32_t j = 0; j < nfreed; j++) {
        int rc = rp_advance(st, ctx, st->freed[j], err);
        if (rc != SIM_OK)
            return rc;
    }
    return SIM_OK;
}

static int worker_up(ripples *st, sim_ctx *ctx, uint32_t w, sim_err *err)
{
    rp_worker *x = rp_w(ctx, w);
    x->computing = false;
    x->head = RP_NONE;
    if (st->mode == MODE_STATIC) {
        /* Rejoin one past the most advanced live worker's position in the schedule: groups
         * up to there may have been formed without it; none past it has. Each live worker's
         * position is read on purpose. */
        uint64_t t = x->done;
        bool other = false;
        for (uint32_t v = 0; v < st->n; v++) {
            if (v == w || sim_ctx_down(ctx, v))
                continue;
            uint64_t done = rp_peer(ctx, v)->done;
            if (done + 1 > t) {
                t = done + 1;
                other = true;
            }
        }
        x->done = other ? t : x->done;
    }
    x->need = x->done;
    x->sync_ns = -1;
    return rp_advance(st, ctx, w, err);
}

/* ---- run ---- */

static int computed(ripples *st, sim_ctx *ctx, uint32_t w, sim_err *err)
{
    rp_worker *x = rp_w(ctx, w);
    x->computing = false;
    if (st->nparams > 0)
        sim_ctx_step(ctx, (sim_target){ .w = w }, NULL, sim_ctx_grad(ctx, w));
    sim_ctx_count(ctx, w, 1);
    st->steps++;
    x->need++;
    x->sync_ns = sim_ctx_now(ctx);
    /* A worker asks for a group only when it knows of none pending and has not asked since
     * it last learnt of one: a group it was pulled into is its synchronization for this step. */
    bool ask = st->mode != MODE_STATIC && x->known == 0 && !x->asked;
    if (ask) {
        int rc = rp_request(st, ctx, w, err);
        if (rc != SIM_OK)
            return rc;
    }
    return rp_advance(st, ctx, w, err);
}

static int on_message(ripples *st, sim_ctx *ctx, const sim_event *ev, sim_err *err)
{
    msg_hdr h = msg_read(ev);
    uint32_t dst = (uint32_t)ev->dst, src = (uint32_t)ev->src;
    switch (h.kind) {
    case MSG_REQUEST:
        return rp_gg_request(st, ctx, src, err);
    case MSG_NOTICE:
    case MSG_INVITE: {
        /* A failed group is still learnt (and then skipped) by members that have not passed
         * it: their local order has a place for it. */
        uint32_t s = rp_find_group(st, h.seq);
        if (s == RP_NONE) {
            st->stale++;
            return SIM_OK;
        }
        return rp_learn(st, ctx, dst, s, err);
    }
    default:
        return sim_err_set(err, SIM_EINVAL, NULL, "ripples: unexpected message kind %u", h.kind);
    }
}

static int rp_on_event(void *state, sim_ctx *ctx, const sim_event *ev, sim_err *err)
{
    ripples *st = state;
    uint32_t w = (uint32_t)ev->dst;
    switch (ev->kind) {
    case SIM_EV_COMPUTED:
        return computed(st, ctx, w, err);
    case SIM_EV_MSG: {
        bool handled;
        int rc = coll_hub_on_event(st->hub, ctx, ev, &handled, err);
        return rc != SIM_OK || handled ? rc : on_message(st, ctx, ev, err);
    }
    case SIM_EV_WORKER_DOWN:
        return worker_down(st, ctx, w, err);
    case SIM_EV_WORKER_UP:
        return worker_up(st, ctx, w, err);
    default:
        return sim_err_set(err, SIM_EINVAL, NULL, "ripples: unexpected event kind %u", ev->kind);
    }
}

static int rp_start(void *state, sim_ctx *ctx, sim_err *err)
{
    ripples *st = state;
    st->nparams = sim_ctx_num_params(ctx);
    st->bytes = sim_ctx_layer_bytes(ctx, SIM_LAYERS_ALL);
    st->gg = sim_ctx_host(ctx, st->n).kind == SIM_HOST_SERVER ? st->n : 0;
    int rc = coll_hub_check(st->hub, err);
    if (rc == SIM_OK && st->mode == MODE_STATIC)
        rc = rp_static_build(st, ctx, err);
    for (uint32_t r = 0; r < st->nrings; r++)
        st->freer[st->nrings - 1 - r] = r;
    if (rc != SIM_OK)
        return rc;
    st->nfreer = st->nrings;
    for (uint32_t s = 0; s < st->slots; s++)
        st->freeg[st->slots - 1 - s] = s;
    st->nfreeg = st->slots;
    for (uint32_t v = 0; v < st->n; v++) {
        rp_worker *x = rp_w(ctx, v);
        x->head = RP_NONE;
        x->sync_ns = -1;
        x->plist = RP_END;
        if (st->bgroup != NULL)
            st->bgroup[v] = RP_NONE;
    }
    for (uint32_t v = 0; v < st->n && rc == SIM_OK; v++)
        if (!sim_ctx_down(ctx, v))
            rc = rp_advance(st, ctx, v, err);
    return rc;
}

static void rp_report(const void *state, const sim_ctx *ctx, sim_report *out)
{
    (void)ctx;
    const ripples *st = state;
    sim_report_add(out, "groups_formed", (double)st->formed);
    sim_report_add(out, "groups_done", (double)st->finished);
    sim_report_add(out, "groups_failed", (double)st->failed);
    sim_report_add(out, "mean_group_wait_s",
                   st->executions > 0 ? st->wait_s / (double)st->executions : 0.0);
    sim_report_add(out, "mean_sync_s", st->syncs > 0 ? st->sync_s / (double)st->syncs : 0.0);
    sim_report_add(out, "conflicts", (double)st->conflicts);
    sim_report_add(out, "batches", (double)st->batches);
    sim_report_add(out, "group_executions", (double)st->executions);
    sim_report_add(out, "executions_per_step",
                   st->steps > 0 ? (double)st->executions / (double)st->steps : 0.0);
    sim_report_add(out, "requests", (double)st->requests);
    sim_report_add(out, "redundant_requests", (double)st->redundant);
    sim_report_add(out, "stale_notices", (double)st->stale);
}

const proto_ops proto_ripples = {
    .name = "ripples",
    .summary = "Ripples/Prague: partial all-reduce (ring) among groups from a group generator, "
               "buffer, division or a static schedule",
    .state_size = sizeof(ripples),
    .worker_size = sizeof(rp_worker),
    .rounds = false,
    .configure = rp_configure,
    .start = rp_start,
    .on_event = rp_on_event,
    .buffers = rp_arena,
    .report = rp_report,
};
