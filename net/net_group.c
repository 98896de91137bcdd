/* Shared-bottleneck groups: flows that all share one link c, each alone on its other links,
 * rated c->cap_bps / n by a virtual clock instead of one by one (see net/net.h).
 *
 * The clock: g_vclock_bytes is the number of bytes each member received from the clock's
 * origin up to g_anchor_ns, the last time the members' rate changed; a member's finishing
 * point is the clock's reading when it joined plus its size, so that its bytes left at the
 * anchor are finish - vclock, and it ends at anchor + (finish - vclock) * 8e9 / rate, rounded
 * to the ns once, the very formula of the per-flow solver. The members sit in a binary heap
 * by (finishing point, join order); only a prefix of it has DONE events ("armed"): every
 * member that ends at the earliest end time, plus possibly members armed earlier at later
 * correct times. A prefix of a heap by key is a subtree holding the root, so it is visited in
 * time proportional to its size. A start or end changes n, hence the rate: one heap operation
 * and one clock update, then at the flush the armed prefix moves. */
#include "net/net_group.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "net/net_state.h"

/* Past this reading the clock is moved back to 0 (every finishing point with it, O(n), at
 * most once per this many bytes served per member), so that finish - vclock keeps its
 * precision. */
static const double REBASE_BYTES = 67108864.0;

/* ---- the heap of members ------------------------------------------------------------------ */

static bool member_less(const void *ud, const void *a, const void *b)
{
    const sim_net *net = ud;
    const net_slot *fa = &net->slots[*(const uint32_t *)a], *fb = &net->slots[*(const uint32_t *)b];
    return fa->finish_bytes < fb->finish_bytes ||
           (fa->finish_bytes == fb->finish_bytes && fa->join_seq < fb->join_seq);
}

static void member_moved(void *ud, const void *item, uint32_t pos)
{
    sim_net *net = ud;
    net->slots[*(const uint32_t *)item].gpos = pos;
}

static const sim_heap_ops member_ops = { .size = sizeof(uint32_t),
                                         .less = member_less,
                                         .moved = member_moved };

/* The member at position i of c's heap. */
static inline uint32_t member(const net_link *c, uint32_t i)
{
    return *(const uint32_t *)sim_heap_at(&c->members, i);
}

/* Makes room for `n` members in c's heap (amortized doubling, kept until destroy). */
static bool greserve(net_link *c, uint32_t n)
{
    if (n <= c->members.cap)
        return true;
    uint32_t cap = c->members.cap < 16 ? 16 : c->members.cap;
    while (cap < n)
        cap *= 2;
    return sim_heap_reserve(&c->members, cap) == SIM_OK;
}

void sim_net_group_init(sim_net *net, uint32_t l)
{
    sim_heap_init(&net->links[l].members, &member_ops, net);
}

/* The keys to schedule are sorted by a heap in the reverse order, whose heapsort leaves them
 * from the least to the greatest by (stamp, rev_seq). */
static bool gkey_greater(const void *ud, const void *a, const void *b)
{
    (void)ud;
    const net_gkey *x = a, *y = b;
    return y->stamp < x->stamp || (y->stamp == x->stamp && y->rev_seq < x->rev_seq);
}

static const sim_heap_ops gkey_ops = { .size = sizeof(net_gkey), .less = gkey_greater };

int sim_net_group_grow(sim_net *net, size_t cap)
{
    uint32_t *q = realloc(net->gqueue, cap * sizeof(*q));
    if (q == NULL)
        return SIM_ENOMEM;
    net->gqueue = q;
    if (net->gkeys.ops == NULL) /* the first call, at creation */
        sim_heap_init(&net->gkeys, &gkey_ops, NULL);
    return cap > UINT32_MAX ? SIM_ENOMEM : sim_heap_reserve(&net->gkeys, (uint32_t)cap);
}

/* ---- the clock ---------------------------------------------------------------------------- */

/* The clock's reading at `now`, computed as the per-flow solver brings bytes up to date. */
static double vclock_at(const net_link *c, sim_time now)
{
    if (now <= c->g_anchor_ns)
        return c->g_vclock_bytes;
    return c->g_vclock_bytes + c->g_rate_bps * (double)(now - c->g_anchor_ns) / NS_BITS;
}

static double left_bytes(const net_link *c, const net_slot *f)
{
    double rem = f->finish_bytes - c->g_vclock_bytes;
    return rem > 0.0 ? rem : 0.0;
}

static sim_time end_ns(const net_link *c, const net_slot *f)
{
    return c->g_anchor_ns + llround(left_bytes(c, f) * NS_BITS / c->g_rate_bps);
}

/* The key that orders member s's event among events at one time as the per-flow solver
 * would have: rated at a later flush means scheduled later; within one flush, hop order. */
static net_gkey gkey(const net_link *c, const net_slot *f, uint32_t s)
{
    net_gkey k = { .stamp = f->stamp_flush > c->g_rated_flush ? f->stamp_flush : c->g_rated_flush,
                   .rev_seq = UINT64_MAX - f->join_seq,
                   .slot = s };
    return k;
}

/* Schedules (or moves) the DONE events of the members in net->gkeys, sorted first; empties
 * net->gkeys. The keys are distinct (join_seq is unique). */
static int schedule_sorted(sim_net *net, const net_link *c, sim_err *err)
{
    uint32_t n = net->gkeys.n;
    sim_heap_sort(&net->gkeys);
    const net_gkey *keys = net->gkeys.items;
    sim_time now = sim_engine_now(net->eng);
    for (uint32_t i = 0; i < n; i++) {
        uint32_t s = keys[i].slot;
        net_slot *f = &net->slots[s];
        double delay = left_bytes(c, f) * NS_BITS / c->g_rate_bps;
        if (!(c->g_anchor_ns - now + delay < 0.5 * (double)(SIM_TIME_NEVER - now)))
            return sim_err_set(err, SIM_ENUMERIC, NULL,
                               "net: a flow from %u to %u at %g bits/s would end after the end "
                               "of time",
                               f->msg.src, f->msg.dst, c->g_rate_bps);
        sim_time at = end_ns(c, f);
        if (at < now)
            at = now; /* cannot happen: the earliest finishers are always armed */
        if (f->ev != 0 && sim_engine_reschedule(net->eng, f->ev, at) == SIM_OK)
            continue;
        sim_event ev = sim_net_slot_event(SIM_EV_NET_DONE, s, f);
        int rc = sim_engine_schedule_at(net->eng, at, &ev, &f->ev);
        if (rc != SIM_OK)
            return sim_err_set(err, rc, NULL, "net: cannot schedule the end of a flow");
    }
    return SIM_OK;
}

/* Arms every member that ends at the earliest end time. After a rate change (`moved`) every
 * armed member moves: those still first are rescheduled in order, the others are cancelled
 * (they are armed again when they come first). Visits only the prefix of the heap that is
 * armed or first, a subtree holding the root. */
static int arm(sim_net *net, net_link *c, bool moved, sim_err *err)
{
    if (c->members.n == 0)
        return SIM_OK;
    sim_time first = end_ns(c, &net->slots[member(c, 0)]);
    uint32_t nq = 0;
    net->gqueue[nq++] = 0;
    net->gkeys.n = 0;
    for (uint32_t i = 0; i < nq; i++) {
        uint32_t s = member(c, net->gqueue[i]);
        net_slot *f = &net->slots[s];
        if (end_ns(c, f) == first) {
            if (moved || f->ev == 0) {
                net_gkey k = gkey(c, f, s);
                sim_heap_append(&net->gkeys, &k);
            }
        } else if (moved) {
            sim_engine_cancel(net->eng, f->ev);
            f->ev = 0;
        }
        for (uint32_t k = 2 * net->gqueue[i] + 1; k <= 2 * net->gqueue[i] + 2 && k < c->members.n;
             k++) {
            const net_slot *g = &net->slots[member(c, k)];
            if (g->ev != 0 || end_ns(c, g) == first)
                net->gqueue[nq++] = k;
        }
    }
    return schedule_sorted(net, c, err);
}

static void rebase(sim_net *net, net_link *c)
{
    for (uint32_t i = 0; i < c->members.n; i++)
        net->slots[member(c, i)].finish_bytes -= c->g_vclock_bytes;
    c->g_vclock_bytes = 0.0;
}

/* ---- joining, leaving, forming, dissolving ------------------------------------------------- */

/* The group link l belongs to (as center or as a link some members cross), or -1. Only
 * members of one group share a link with members, but for a flow that just joined l and
 * failed to join: the first two flows on l tell. */
static int32_t group_of(const sim_net *net, uint32_t l)
{
    const net_link *k = &net->links[l];
    if (k->grouped)
        return (int32_t)l;
    int32_t hop = k->head;
    for (int i = 0; i < 2 && hop != NO_HOP; i++) {
        const net_slot *f = &net->slots[hop_slot(hop)];
        if (f->group >= 0)
            return f->group;
        hop = f->hop_next[hop_pos(hop)];
    }
    return -1;
}

void sim_net_group_dissolve_at(sim_net *net, uint32_t l)
{
    int32_t c = group_of(net, l);
    if (c >= 0)
        sim_net_group_dissolve(net, (uint32_t)c);
}

/* Whether flow s, which crosses group center cl, may join it: on each of its other links
 * every other flow is a member. Writes the smallest fair share of those links. */
static bool may_join(const sim_net *net, uint32_t s, uint32_t cl, double *min_other)
{
    const net_slot *f = &net->slots[s];
    *min_other = INFINITY;
    for (uint32_t k = 0; k < f->nlinks; k++) {
        if (f->links[k] == cl)
            continue;
        const net_link *l = &net->links[f->links[k]];
        for (int32_t hop = l->head; hop != NO_HOP;) {
            const net_slot *g = &net->slots[hop_slot(hop)];
            if (hop_slot(hop) != s && g->group != (int32_t)cl)
                return false;
            hop = g->hop_next[hop_pos(hop)];
        }
        double share = l->cap_bps / l->nflows;
        if (share < *min_other)
            *min_other = share;
    }
    return true;
}

bool sim_net_group_try_join(sim_net *net, uint32_t s)
{
    net_slot *f = &net->slots[s];
    int32_t center = -1;
    uint32_t ncenters = 0;
    for (uint32_t k = 0; k < f->nlinks; k++) {
        if (net->links[f->links[k]].grouped) {
            center = (int32_t)f->links[k];
            ncenters++;
        }
    }
    double other;
    if (ncenters == 1 && may_join(net, s, (uint32_t)center, &other) &&
        greserve(&net->links[center], net->links[center].members.n + 1)) {
        net_link *c = &net->links[center];
        f->group = center;
        f->finish_bytes = vclock_at(c, sim_engine_now(net->eng)) + (double)f->msg.bytes;
        sim_heap_push(&c->members, &s);
        c->g_joined += f->nb;
        c->g_flows += f->nb;
        net->stats.grouped += f->nb;
        if (other < c->g_min_other_bps)
            c->g_min_other_bps = other;
        sim_net_mark_dirty(net, (uint32_t)center);
        return true;
    }
    for (uint32_t k = 0; k < f->nlinks; k++)
        if (net->links[f->links[k]].nflows > 1)
            sim_net_group_dissolve_at(net, f->links[k]);
    return false;
}

bool sim_net_group_leave(sim_net *net, uint32_t s)
{
    net_slot *f = &net->slots[s];
    uint32_t cl = (uint32_t)f->group;
    net_link *c = &net->links[cl];
    sim_heap_remove(&c->members, f->gpos);
    c->g_flows -= f->nb;
    f->group = -1;
    f->rate_bps = c->g_rate_bps;
    if (c->members.n == 0) {
        net->ngrouped -= c->grouped;
        c->grouped = false; /* a flow that comes next is rated like any other */
    }
    if (c->nflows == 0)
        return true;
    sim_net_mark_dirty(net, cl);
    return false;
}

void sim_net_group_leave_one(sim_net *net, uint32_t s)
{
    uint32_t cl = (uint32_t)net->slots[s].group;
    net->links[cl].g_flows--;
    sim_net_mark_dirty(net, cl);
}

void sim_net_group_dissolve(sim_net *net, uint32_t cl)
{
    net_link *c = &net->links[cl];
    net->gkeys.n = 0;
    /* Members that joined since the last flush were never rated: they stay as they started
     * (rate 0, no event) for the flush that comes, which marked center fills. */
    for (uint32_t i = 0; i < c->members.n; i++) {
        uint32_t s = member(c, i);
        net_slot *f = &net->slots[s];
        if (f->ev == 0 && f->stamp_flush <= c->g_resolved_flush) {
            net_gkey k = gkey(c, f, s);
            sim_heap_append(&net->gkeys, &k);
        }
    }
    /* A plain flow's state as the per-flow solver keeps it: bytes left as of its last rating. */
    sim_err err;
    int rc = schedule_sorted(net, c, &err);
    if (rc != SIM_OK && net->pending_err == SIM_OK)
        net->pending_err = rc;
    for (uint32_t i = 0; i < c->members.n; i++) {
        net_slot *f = &net->slots[member(c, i)];
        f->group = -1;
        if (f->stamp_flush > c->g_resolved_flush)
            continue;
        f->remaining_bytes = left_bytes(c, f);
        f->last_ns = c->g_anchor_ns;
        f->rate_bps = c->g_rate_bps;
    }
    c->members.n = 0;
    c->g_flows = 0;
    net->ngrouped -= c->grouped;
    c->grouped = false;
}

/* Whether the flows on center c, rated `share` now, would all change rate and would not all
 * end at one ns, and whether they are all the flows of the component (a star), in one walk
 * of c's flows: a path crosses a link at most once (net/net_topo.h), so the sum of their
 * nlinks - 1 (nb times for a bundle) counts their hops on the component's other links, which equals
 * the component's hops there (other_hops) exactly when no other flow is in the component. Bytes
 * left are computed, not stored: a star turned down for the tie is then filled at `share`, a new
 * rate for every flow, which brings each up to date by the very same formula. */
static bool star_moves_apart(const sim_net *net, const net_link *c, double share,
                             uint64_t other_hops)
{
    sim_time now = sim_engine_now(net->eng);
    double lo = INFINITY, hi = 0.0;
    uint64_t hops = 0;
    for (int32_t hop = c->head; hop != NO_HOP;) {
        const net_slot *f = &net->slots[hop_slot(hop)];
        if (f->rate_bps == share)
            return false;
        double rem = net_left_at(f, now);
        lo = rem < lo ? rem : lo; /* fmin, fmax inlined: rem is never NaN nor -0 */
        hi = rem > hi ? rem : hi;
        hops += (uint64_t)f->nb * (f->nlinks - 1u);
        hop = f->hop_next[hop_pos(hop)];
    }
    /* Flows that all end at one ns (a synchronized incast) gain nothing from a group: every
     * one would be armed. The filling rates them. */
    if (llround(lo * NS_BITS / share) == llround(hi * NS_BITS / share))
        return false;
    return hops == other_hops;
}

/* Whether the component in net->comp is one link c that every flow of it crosses, whose
 * fair share is below that of every other link, differs from every flow's rate now, and would
 * not end every flow at one ns. Writes c to *center and the smallest fair share of the other
 * links to *min_other. Every test only reads, so their order changes no answer: the cheapest
 * come first. c and the hop count come from the walk that collected the component; then one
 * walk of c's flows rejects a synchronized incast (the tie), a component with other flows
 * (the hop count) or an unchanged rate; only a star that passes pays the scan of the links
 * for min_other. */
static bool is_new_star(const sim_net *net, const net_comp *comp, uint32_t *center,
                        double *min_other)
{
    uint32_t c = comp->busiest;
    if (c == UINT32_MAX)
        return false;
    const net_link *k = &net->links[c];
    double share = k->cap_bps / k->nflows;
    if (!star_moves_apart(net, k, share, comp->hops - k->nflows))
        return false;
    *min_other = INFINITY;
    for (uint32_t i = 0; i < comp->n; i++) {
        const net_link *l = &net->links[net->comp[i]];
        if (net->comp[i] != c && l->nflows > 0 && l->cap_bps / l->nflows < *min_other)
            *min_other = l->cap_bps / l->nflows;
    }
    if (!(share < *min_other))
        return false;
    *center = c;
    return true;
}

int sim_net_group_form(sim_net *net, const net_comp *comp, sim_err *err)
{
    uint32_t cl;
    double min_other;
    if (!is_new_star(net, comp, &cl, &min_other))
        return 0;
    net_link *c = &net->links[cl];
    if (!greserve(c, c->nflows))
        return 0;
    sim_time now = sim_engine_now(net->eng);
    /* Bytes left now, brought up to date exactly as the per-flow solver does. */
    for (int32_t hop = c->head; hop != NO_HOP;) {
        net_slot *f = &net->slots[hop_slot(hop)];
        hop = f->hop_next[hop_pos(hop)];
        f->remaining_bytes = net_left_at(f, now);
        f->last_ns = now;
    }
    double share = c->cap_bps / c->nflows;
    c->g_rate_bps = share;
    c->g_vclock_bytes = 0.0;
    c->g_anchor_ns = now;
    c->g_rated_flush = net->flushes;
    c->g_resolved_flush = net->flushes;
    c->g_min_other_bps = min_other;
    c->g_joined = 0;
    c->g_flows = c->nflows;
    c->members.n = 0;
    for (int32_t hop = c->head; hop != NO_HOP;) {
        uint32_t s = hop_slot(hop);
        net_slot *f = &net->slots[s];
        hop = f->hop_next[hop_pos(hop)];
        f->finish_bytes = f->remaining_bytes;
        f->group = (int32_t)cl;
        sim_heap_append(&c->members, &s);
    }
    sim_heap_build(&c->members);
    /* Plain flows have events anywhere in the heap: only the first finishers keep theirs. */
    sim_time first = end_ns(c, &net->slots[member(c, 0)]);
    for (uint32_t i = 0; i < c->members.n; i++) {
        net_slot *f = &net->slots[member(c, i)];
        if (f->ev != 0 && end_ns(c, f) != first) {
            sim_engine_cancel(net->eng, f->ev);
            f->ev = 0;
        }
    }
    net->ngrouped += !c->grouped;
    c->grouped = true;
    net->stats.rerates += c->g_flows;
    net->stats.grouped += c->g_flows;
    int rc = arm(net, c, true, err);
    return rc != SIM_OK ? rc : 1;
}

int sim_net_group_resolve(sim_net *net, uint32_t cl, sim_err *err)
{
    net_link *c = &net->links[cl];
    c->flush_mark = net->flushes;
    double share = c->g_flows >= 2 ? c->cap_bps / c->g_flows : 0.0;
    if (c->g_flows < 2 || !(share < c->g_min_other_bps)) {
        sim_net_group_dissolve(net, cl);
        c->flush_mark = 0;
        return 1;
    }
    uint32_t joined = c->g_joined;
    c->g_joined = 0;
    c->g_resolved_flush = net->flushes;
    if (share == c->g_rate_bps) {
        net->stats.rerates += joined;
        return arm(net, c, false, err);
    }
    sim_time now = sim_engine_now(net->eng);
    c->g_vclock_bytes = vclock_at(c, now);
    c->g_anchor_ns = now;
    c->g_rate_bps = share;
    c->g_rated_flush = net->flushes;
    if (c->g_vclock_bytes > REBASE_BYTES)
        rebase(net, c);
    net->stats.rerates += c->g_flows;
    return arm(net, c, true, err);
}
