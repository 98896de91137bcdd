/* Solos: messages alone on their links, one engine event each (see sim/net_solo.h).
 *
 * A lone flow's end is known when it is sent: nothing shares its links, so its rate from its
 * start is the smallest capacity on its path, and its end is start + bytes * 8e9 / rate
 * rounded once, what sim_net_set_rate would schedule at the START (net_end_at, the same
 * formula). A solo schedules that end when sent and claims its links, so that anything that
 * would change the answer (another flow joining one of them, a capacity change, a failure)
 * finds the claim and resolves it first (sim/net_model.c).
 *
 * The place of a start. A lone flow's START changes the active and peak flows, the rating
 * counters and the join order, and it comes at (start time, sequence) in the engine's order.
 * A solo has no START; its DONE, scheduled when the START would have been, has the sequence
 * the START would have had. So every message whose start is to come without an event of its
 * own (a solo, or a demoted one: see sim/net_solo.h) waits in a binary min-heap by (start
 * time, DONE sequence), and each network call first takes out what lies at or before the
 * place it stands at: a network event its own (time, seq); the end-of-instant flush and the
 * queries the end of the instant; a failure or a capacity change the start of its instant
 * (the runner schedules those before any message is sent, so a message starting at that very
 * ns comes after it). Starts are thus counted, and demoted messages started, in the order
 * their STARTs would have run among the network's events. */
#include "sim/net_solo.h"

#include <math.h>
#include <stdlib.h>

#include "sim/net_state.h"

/* ---- the heap of solos not yet counted -------------------------------------------------- */

static bool sless(const sim_net *net, uint32_t a, uint32_t b)
{
    const net_slot *fa = &net->slots[a], *fb = &net->slots[b];
    return fa->last_ns < fb->last_ns || (fa->last_ns == fb->last_ns && fa->solo_seq < fb->solo_seq);
}

static void sput(sim_net *net, uint32_t i, uint32_t s)
{
    net->solo_heap[i] = s;
    net->slots[s].solo_pos = (int32_t)i;
}

/* Restores the heap order around position i after its solo changed either way. */
static void sfix(sim_net *net, uint32_t i)
{
    uint32_t s = net->solo_heap[i];
    while (i > 0 && sless(net, s, net->solo_heap[(i - 1) / 2])) {
        sput(net, i, net->solo_heap[(i - 1) / 2]);
        i = (i - 1) / 2;
    }
    for (;;) {
        uint32_t c = 2 * i + 1;
        if (c >= net->solo_n)
            break;
        if (c + 1 < net->solo_n && sless(net, net->solo_heap[c + 1], net->solo_heap[c]))
            c++;
        if (!sless(net, net->solo_heap[c], s))
            break;
        sput(net, i, net->solo_heap[c]);
        i = c;
    }
    sput(net, i, s);
}

/* Takes solo s out of the heap. */
static void sremove(sim_net *net, uint32_t s)
{
    uint32_t i = (uint32_t)net->slots[s].solo_pos;
    net->slots[s].solo_pos = -1;
    uint32_t last = net->solo_heap[--net->solo_n];
    if (i < net->solo_n) {
        sput(net, i, last);
        sfix(net, i);
    }
}

int sim_net_solo_grow(sim_net *net, size_t cap)
{
    uint32_t *h = realloc(net->solo_heap, cap * sizeof(*h));
    if (h == NULL)
        return SIM_ENOMEM;
    net->solo_heap = h;
    return SIM_OK;
}

void sim_net_solo_enable(sim_net *net, bool on)
{
    net->solo_off = !on;
}

/* ---- solos -------------------------------------------------------------------------------- */

bool sim_net_solo_try(sim_net *net, uint32_t s, sim_time t_start)
{
    net_slot *f = &net->slots[s];
    if (net->solo_off || f->msg.bytes == 0 || f->nlinks == 0 || net->hosts[f->msg.dst].down)
        return false;
    double rate = INFINITY;
    for (uint32_t k = 0; k < f->nlinks; k++) {
        const net_link *l = &net->links[f->links[k]];
        if (l->nflows != 0 || l->solo != NO_SLOT)
            return false;
        if (l->cap_bps < rate)
            rate = l->cap_bps;
    }
    /* An end past the end of time is reported by the START, as for any message. An end at the
     * start's very ns is left to the START too: the DONE, scheduled at the send, would come
     * before every network event scheduled meanwhile for that ns (the START of a message sent
     * with it to the same place, say), where the START and DONE path has it after them. */
    sim_time at;
    if (t_start == SIM_TIME_NEVER || !net_end_at((double)f->msg.bytes, rate, t_start, &at) ||
        at == t_start)
        return false;
    f->solo_seq = sim_engine_next_seq(net->eng);
    sim_event ev = sim_net_slot_event(SIM_EV_NET_DONE, s, f);
    if (sim_engine_schedule_at(net->eng, at, &ev, &f->ev) != SIM_OK)
        return false; /* out of memory: the START's scheduling reports it */
    for (uint32_t k = 0; k < f->nlinks; k++)
        net->links[f->links[k]].solo = (int32_t)s;
    f->state = SLOT_SOLO;
    f->rate_bps = rate;
    f->remaining_bytes = (double)f->msg.bytes;
    f->last_ns = t_start;
    sput(net, net->solo_n++, s);
    sfix(net, net->solo_n - 1);
    return true;
}

/* Solo s starts: what on_start and sim_net_rate_alone do for a lone flow, but joining its
 * links. Its join order and flush stamp are those its START would have given it: the drain
 * runs before any other flow starts and before any flush at or after its place in the
 * engine's order, and none ran between that place and the drain (every start and every flush
 * drains first), so net->starts and net->flushes are what they were there. */
static void count_started(sim_net *net, uint32_t s)
{
    net_slot *f = &net->slots[s];
    f->join_seq = net->starts++;
    f->stamp_flush = net->flushes + 1;
    net->nsolo_active++;
    if (net_active_flows(net) > net->stats.peak_flows)
        net->stats.peak_flows = net_active_flows(net);
    net->stats.recomputes++;
    net->stats.rerates++;
}

int32_t sim_net_solo_next(sim_net *net, sim_time now, uint64_t seq)
{
    if (net->solo_n == 0)
        return NO_SLOT;
    uint32_t s = net->solo_heap[0];
    const net_slot *f = &net->slots[s];
    if (f->last_ns > now || (f->last_ns == now && f->solo_seq > seq))
        return NO_SLOT;
    sremove(net, s);
    if (f->state == SLOT_SOLO)
        count_started(net, s);
    return (int32_t)s;
}

bool sim_net_solo_unclaim(sim_net *net, uint32_t s)
{
    net_slot *f = &net->slots[s];
    for (uint32_t k = 0; k < f->nlinks; k++)
        net->links[f->links[k]].solo = NO_SLOT;
    if (f->solo_pos >= 0)
        return false;
    net->nsolo_active--;
    return true;
}

void sim_net_solo_forget(sim_net *net, uint32_t s)
{
    if (net->slots[s].solo_pos >= 0)
        sremove(net, s);
}

size_t sim_net_solo_uncounted(const sim_net *net, sim_time now)
{
    size_t n = 0;
    for (uint32_t i = 0; i < net->solo_n; i++)
        n += net->slots[net->solo_heap[i]].last_ns <= now;
    return n;
}
