/* Rates: max-min fair sharing by progressive filling, solved once per instant for the
 * components of the links that changed (see net/net.h and net/net_state.h). */
#include "net/net_solver.h"

#include <math.h>
#include <string.h>

#include "net/net_group.h"
#include "net/net_state.h"

/* Brings remaining_bytes up to now at the current rate. */
static void advance(net_slot *f, sim_time now)
{
    f->remaining_bytes = net_left_at(f, now);
    f->last_ns = now;
}

/* Gives flow s the rate `rate_bps` from now on: a flow whose rate is unchanged keeps its
 * completion event; otherwise its bytes are brought up to now and the event moves. */
int sim_net_set_rate(sim_net *net, uint32_t s, double rate_bps, sim_err *err)
{
    net_slot *f = &net->slots[s];
    if (rate_bps == f->rate_bps)
        return SIM_OK;
    sim_time now = sim_engine_now(net->eng);
    advance(f, now);
    f->rate_bps = rate_bps;
    net->stats.rerates += f->nb;
    bool stalled = !(rate_bps > 0.0); /* until a later recompute: never divide by zero */
    sim_time at = now;
    bool too_late = !stalled && !net_end_at(f->remaining_bytes, rate_bps, now, &at);
    if (stalled || too_late) {
        if (f->ev != 0)
            sim_engine_cancel(net->eng, f->ev);
        f->ev = 0;
        if (stalled)
            return SIM_OK;
        return sim_err_set(err, SIM_ENUMERIC, NULL,
                           "net: a flow from %u to %u at %g bits/s would end after the end of time",
                           f->msg.src, f->msg.dst, rate_bps);
    }
    /* A pending end moves in place: the same order as a cancel and a schedule would give. */
    if (f->ev != 0 && sim_engine_reschedule(net->eng, f->ev, at) == SIM_OK)
        return SIM_OK;
    sim_event ev = sim_net_slot_event(SIM_EV_NET_DONE, s, f);
    int rc = sim_engine_schedule_at(net->eng, at, &ev, &f->ev);
    if (rc != SIM_OK)
        return sim_err_set(err, rc, NULL, "net: cannot schedule the end of a flow");
    return SIM_OK;
}

/* ---- the heap of a filling's links, by (fair share, index) ------------------------------- */

static bool link_less(const void *ud, const void *a, const void *b)
{
    const sim_net *net = ud;
    uint32_t la = *(const uint32_t *)a, lb = *(const uint32_t *)b;
    double ka = net->links[la].share_bps, kb = net->links[lb].share_bps;
    return ka < kb || (ka == kb && la < lb);
}

static void link_moved(void *ud, const void *item, uint32_t pos)
{
    sim_net *net = ud;
    net->links[*(const uint32_t *)item].heap_pos = (int32_t)pos;
}

static const sim_heap_ops fill_ops = { .size = sizeof(uint32_t),
                                       .less = link_less,
                                       .moved = link_moved };

int sim_net_solver_init(sim_net *net)
{
    sim_heap_init(&net->fill, &fill_ops, net);
    return sim_heap_reserve(&net->fill, net->nlinks);
}

/* Appends link l, just reached, to net->comp and to what *comp knows of the component. */
static void take_link(sim_net *net, net_comp *comp, uint32_t l)
{
    const net_link *k = &net->links[l];
    net->comp[comp->n++] = l;
    comp->hops += k->nflows;
    if (k->nflows > 1 &&
        (comp->busiest == UINT32_MAX || k->nflows > net->links[comp->busiest].nflows))
        comp->busiest = l;
}

/* Collects into net->comp every link reachable from the seeds through shared flows, marking
 * links and flows with the current epoch (no clearing). Returns the number of links, the
 * busiest and the hops (net_comp), which the group check would otherwise scan for again. */
static net_comp collect_component(sim_net *net, const uint32_t *seeds, uint32_t nseeds)
{
    uint64_t epoch = net->epoch;
    net_comp comp = { .n = 0, .busiest = UINT32_MAX, .hops = 0 };
    for (uint32_t i = 0; i < nseeds; i++) {
        if (net->links[seeds[i]].seen_epoch != epoch) {
            net->links[seeds[i]].seen_epoch = epoch;
            take_link(net, &comp, seeds[i]);
        }
    }
    for (uint32_t i = 0; i < comp.n; i++) {
        for (int32_t hop = net->links[net->comp[i]].head; hop != NO_HOP;) {
            net_slot *f = &net->slots[hop_slot(hop)];
            hop = f->hop_next[hop_pos(hop)];
            if (f->seen_epoch == epoch)
                continue;
            f->seen_epoch = epoch;
            for (uint32_t k = 0; k < f->nlinks; k++) {
                net_link *l = &net->links[f->links[k]];
                if (l->seen_epoch != epoch) {
                    l->seen_epoch = epoch;
                    take_link(net, &comp, f->links[k]);
                }
            }
        }
    }
    return comp;
}

/* Freezes the unfrozen flows of link l at its share and charges them to their other links: a
 * bundle of nb messages nb times, one subtraction each, as its messages one after the other on
 * l's hop list would be charged. */
static int freeze_link(sim_net *net, uint32_t l, sim_err *err)
{
    double share = net->links[l].share_bps;
    for (int32_t hop = net->links[l].head; hop != NO_HOP;) {
        uint32_t s = hop_slot(hop);
        net_slot *f = &net->slots[s];
        hop = f->hop_next[hop_pos(hop)];
        if (f->frozen_epoch == net->epoch)
            continue;
        f->frozen_epoch = net->epoch;
        for (uint32_t k = 0; k < f->nlinks; k++) {
            uint32_t m = f->links[k];
            net_link *o = &net->links[m];
            if (m == l)
                continue;
            o->rem_bps -= share;
            for (uint32_t i = 1; i < f->nb; i++)
                o->rem_bps -= share;
            o->unfrozen -= f->nb - 1;
            if (--o->unfrozen == 0) {
                net->heap_live--; /* left in the heap, skipped when it comes up */
                continue;
            }
            o->share_bps = (o->rem_bps > 0.0 ? o->rem_bps : 0.0) / o->unfrozen;
            sim_heap_fix(&net->fill, (uint32_t)o->heap_pos);
        }
        int rc = sim_net_set_rate(net, s, share, err);
        if (rc != SIM_OK)
            return rc;
    }
    return SIM_OK;
}

/* Recomputes max-min fair rates (progressive filling) for the flows connected to the seed
 * link: repeatedly the link with the smallest fair share freezes its flows at that share.
 * Costs O(L + F * MAX_HOPS * log L) for a component of L links and F flows: the heap is
 * built bottom-up, and a link all of whose flows were frozen elsewhere stays in the heap,
 * dead, until it comes up (the order of the live links is untouched, (share, index) being a
 * total order), so the filling stops as soon as no live link is left: the 1024 single-flow
 * NIC links of an incast cost nothing once the shared link froze their flows. The
 * component's links get the current flush mark, so that a flush fills each component
 * once. */
int sim_net_fill(sim_net *net, uint32_t seed, sim_err *err)
{
    net->epoch++;
    net_comp comp = collect_component(net, &seed, 1);
    uint32_t n = comp.n;
    for (uint32_t i = 0; i < n; i++)
        net->links[net->comp[i]].flush_mark = net->flushes;
    /* No link with two flows: no group (the common case of links left empty by ends). */
    int formed = comp.busiest != UINT32_MAX ? sim_net_group_form(net, &comp, err) : 0;
    if (formed != 0)
        return formed < 0 ? formed : SIM_OK;
    net->fill.n = 0;
    for (uint32_t i = 0; i < n; i++) {
        net_link *l = &net->links[net->comp[i]];
        if (l->nflows == 0)
            continue;
        l->rem_bps = l->cap_bps;
        l->unfrozen = l->nflows;
        l->share_bps = l->cap_bps / l->nflows;
        sim_heap_append(&net->fill, &net->comp[i]);
    }
    sim_heap_build(&net->fill);
    net->heap_live = net->fill.n;
    while (net->heap_live > 0) {
        uint32_t l = *(const uint32_t *)sim_heap_at(&net->fill, 0);
        net->links[l].heap_pos = -1;
        sim_heap_pop(&net->fill, NULL);
        if (net->links[l].unfrozen == 0)
            continue; /* dead: already discounted from heap_live */
        net->heap_live--;
        int rc = freeze_link(net, l, err);
        if (rc != SIM_OK)
            return rc; /* the next recompute starts from an empty heap anyway */
    }
    return SIM_OK;
}

/* The one recomputation of an instant: fills the component of each changed link, in the order
 * the links changed, skipping links already reached from an earlier one. Every flow ends the
 * instant with the rate max-min gives its final component, as if each change had been
 * recomputed at once (the last recompute of a component is the one that counts). */
int sim_net_solve(sim_net *net, sim_err *err)
{
    if (net->ndirty == 0)
        return SIM_OK;
    net->stats.recomputes++;
    net->flushes++;
    int rc = SIM_OK;
    for (uint32_t i = 0; i < net->ndirty; i++) {
        uint32_t l = net->dirty[i];
        net_link *k = &net->links[l];
        k->dirty = false;
        if (rc != SIM_OK || k->flush_mark == net->flushes)
            continue;
        /* A group is reached through its center only: a member's other link leads to it. */
        uint32_t c = l;
        if (!k->grouped && k->nflows >= 1 && net->slots[hop_slot(k->head)].group >= 0)
            c = (uint32_t)net->slots[hop_slot(k->head)].group;
        if (net->links[c].grouped) {
            if (net->links[c].flush_mark != net->flushes)
                rc = sim_net_group_resolve(net, c, err);
            if (rc == 1) /* dissolved */
                rc = sim_net_fill(net, c, err);
        } else {
            rc = sim_net_fill(net, l, err);
        }
    }
    net->ndirty = 0;
    return rc;
}

/* Rates flow s, which just joined its links, when it is alone on every one of them: no other
 * flow can change, and max-min gives it the smallest capacity on its path (progressive
 * filling freezes it at cap / 1 on that link). Returns false when the flow shares a link. */
bool sim_net_rate_alone(sim_net *net, uint32_t s, int *rc, sim_err *err)
{
    net_slot *f = &net->slots[s];
    double rate = INFINITY;
    for (uint32_t k = 0; k < f->nlinks; k++) {
        const net_link *l = &net->links[f->links[k]];
        if (l->nflows != 1)
            return false;
        if (l->cap_bps < rate)
            rate = l->cap_bps;
    }
    net->stats.recomputes++;
    *rc = sim_net_set_rate(net, s, rate, err);
    return true;
}

double sim_net_flow_rate(const sim_net *net, uint32_t s)
{
    const net_slot *f = &net->slots[s];
    return f->group >= 0 ? net->links[f->group].g_rate_bps : f->rate_bps;
}
