/* The frozen per-instant solver's rates (tests/net_pi_ref_state.h): a flow's progress and its
 * rate, the links' heap by fair share, the components of changed links and their progressive
 * filling, as net/net_solver.c was before shared-bottleneck groups. */
#include <assert.h>
#include <math.h>
#include <string.h>

#include "net_pi_ref_state.h"

/* 8 bits per byte times 1e9 ns per s: bytes * NS_BITS / (bits/s) = ns. */
static const double NS_BITS = 8e9;

/* Brings remaining_bytes up to now at the current rate. */
static void advance(net_slot *f, sim_time now)
{
    if (f->rate_bps > 0.0 && now > f->last_ns) {
        f->remaining_bytes -= f->rate_bps * (double)(now - f->last_ns) / NS_BITS;
        if (f->remaining_bytes < 0.0)
            f->remaining_bytes = 0.0;
    }
    f->last_ns = now;
}

sim_event pi_net_slot_event(uint32_t kind, uint32_t s, const net_slot *f)
{
    sim_event ev;
    memset(&ev, 0, sizeof(ev));
    ev.kind = kind;
    ev.src = (int32_t)f->msg.src;
    ev.dst = (int32_t)f->msg.dst;
    ev.arg[0] = s;
    ev.arg[1] = f->gen;
    return ev;
}

/* Gives flow s the rate `rate_bps` from now on: a flow whose rate is unchanged keeps its
 * completion event; otherwise its bytes are brought up to now and the event moves. */
static int set_rate(pi_net *net, uint32_t s, double rate_bps, sim_err *err)
{
    net_slot *f = &net->slots[s];
    if (rate_bps == f->rate_bps)
        return SIM_OK;
    sim_time now = sim_engine_now(net->eng);
    advance(f, now);
    f->rate_bps = rate_bps;
    net->stats.rerates++;
    bool stalled = !(rate_bps > 0.0); /* until a later recompute: never divide by zero */
    double delay = stalled ? 0.0 : f->remaining_bytes * NS_BITS / rate_bps;
    bool too_late = !stalled && !(delay < 0.5 * (double)(SIM_TIME_NEVER - now));
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
    if (f->ev != 0 && sim_engine_reschedule(net->eng, f->ev, now + llround(delay)) == SIM_OK)
        return SIM_OK;
    sim_event ev = pi_net_slot_event(SIM_EV_NET_DONE, s, f);
    int rc = sim_engine_schedule(net->eng, llround(delay), &ev, &f->ev);
    if (rc != SIM_OK)
        return sim_err_set(err, rc, NULL, "net: cannot schedule the end of a flow");
    return SIM_OK;
}

static bool heap_less(const pi_net *net, uint32_t a, uint32_t b)
{
    double ka = net->links[a].share_bps, kb = net->links[b].share_bps;
    return ka < kb || (ka == kb && a < b);
}

static void heap_put(pi_net *net, uint32_t i, uint32_t l)
{
    net->heap[i] = l;
    net->links[l].heap_pos = (int32_t)i;
}

/* Moves the link at position i down to its place below it. */
static void heap_down(pi_net *net, uint32_t i)
{
    uint32_t l = net->heap[i];
    for (;;) {
        uint32_t c = 2 * i + 1;
        if (c >= net->heap_n)
            break;
        if (c + 1 < net->heap_n && heap_less(net, net->heap[c + 1], net->heap[c]))
            c++;
        if (!heap_less(net, net->heap[c], l))
            break;
        heap_put(net, i, net->heap[c]);
        i = c;
    }
    heap_put(net, i, l);
}

/* Restores the heap order around position i after its key changed either way. */
static void heap_fix(pi_net *net, uint32_t i)
{
    uint32_t l = net->heap[i];
    while (i > 0 && heap_less(net, l, net->heap[(i - 1) / 2])) {
        heap_put(net, i, net->heap[(i - 1) / 2]);
        i = (i - 1) / 2;
    }
    for (;;) {
        uint32_t c = 2 * i + 1;
        if (c >= net->heap_n)
            break;
        if (c + 1 < net->heap_n && heap_less(net, net->heap[c + 1], net->heap[c]))
            c++;
        if (!heap_less(net, net->heap[c], l))
            break;
        heap_put(net, i, net->heap[c]);
        i = c;
    }
    heap_put(net, i, l);
}

static void heap_remove(pi_net *net, uint32_t l)
{
    uint32_t i = (uint32_t)net->links[l].heap_pos;
    net->links[l].heap_pos = -1;
    uint32_t last = net->heap[--net->heap_n];
    if (i < net->heap_n) {
        heap_put(net, i, last);
        heap_fix(net, i);
    }
}

/* Collects into net->comp every link reachable from the seeds through shared flows, marking
 * links and flows with the current epoch (no clearing). Returns the number of links. */
static uint32_t collect_component(pi_net *net, const uint32_t *seeds, uint32_t nseeds)
{
    uint64_t epoch = net->epoch;
    uint32_t n = 0;
    for (uint32_t i = 0; i < nseeds; i++) {
        if (net->links[seeds[i]].seen_epoch != epoch) {
            net->links[seeds[i]].seen_epoch = epoch;
            net->comp[n++] = seeds[i];
        }
    }
    for (uint32_t i = 0; i < n; i++) {
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
                    net->comp[n++] = f->links[k];
                }
            }
        }
    }
    return n;
}

/* Freezes the unfrozen flows of link l at its share and charges them to their other links. */
static int freeze_link(pi_net *net, uint32_t l, sim_err *err)
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
            if (--o->unfrozen == 0) {
                net->heap_live--; /* left in the heap, skipped when it comes up */
                continue;
            }
            o->share_bps = (o->rem_bps > 0.0 ? o->rem_bps : 0.0) / o->unfrozen;
            heap_fix(net, (uint32_t)o->heap_pos);
        }
        int rc = set_rate(net, s, share, err);
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
static int fill_component(pi_net *net, uint32_t seed, sim_err *err)
{
    net->epoch++;
    uint32_t n = collect_component(net, &seed, 1);
    net->heap_n = 0;
    for (uint32_t i = 0; i < n; i++) {
        net_link *l = &net->links[net->comp[i]];
        l->flush_mark = net->flushes;
        if (l->nflows == 0)
            continue;
        l->rem_bps = l->cap_bps;
        l->unfrozen = l->nflows;
        l->share_bps = l->cap_bps / l->nflows;
        heap_put(net, net->heap_n++, net->comp[i]);
    }
    for (uint32_t i = net->heap_n / 2; i-- > 0;)
        heap_down(net, i);
    net->heap_live = net->heap_n;
    while (net->heap_live > 0) {
        uint32_t l = net->heap[0];
        heap_remove(net, l);
        if (net->links[l].unfrozen == 0)
            continue; /* dead: already discounted from heap_live */
        net->heap_live--;
        int rc = freeze_link(net, l, err);
        if (rc != SIM_OK)
            return rc; /* the next recompute starts from an empty heap anyway */
    }
    return SIM_OK;
}

/* Marks link l as changed at this instant; the engine then calls flush_hook before its clock
 * moves on. */
void pi_net_mark_dirty(pi_net *net, uint32_t l)
{
    if (net->links[l].dirty)
        return;
    net->links[l].dirty = true;
    net->dirty[net->ndirty++] = l;
    sim_engine_request_flush(net->eng);
}

/* The one recomputation of an instant: fills the component of each changed link, in the order
 * the links changed, skipping links already reached from an earlier one. Every flow ends the
 * instant with the rate max-min gives its final component, as if each change had been
 * recomputed at once (the last recompute of a component is the one that counts). */
int pi_net_solve(pi_net *net, sim_err *err)
{
    if (net->ndirty == 0)
        return SIM_OK;
    net->stats.recomputes++;
    net->flushes++;
    int rc = SIM_OK;
    for (uint32_t i = 0; i < net->ndirty; i++) {
        uint32_t l = net->dirty[i];
        net->links[l].dirty = false;
        if (rc == SIM_OK && net->links[l].flush_mark != net->flushes)
            rc = fill_component(net, l, err);
    }
    net->ndirty = 0;
    return rc;
}

/* Rates flow s, which just joined its links, when it is alone on every one of them: no other
 * flow can change, and max-min gives it the smallest capacity on its path (progressive
 * filling freezes it at cap / 1 on that link). Returns false when the flow shares a link. */
bool pi_net_rate_alone(pi_net *net, uint32_t s, int *rc, sim_err *err)
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
    *rc = set_rate(net, s, rate, err);
    return true;
}
