/* Bundles: identical messages sent together share their events (see net/net_bundle.h and
 * net/net.h).
 *
 * A carrier's slot holds the flow (its place on the hop lists, in net->active, in a group, its
 * START or DONE) and its own message; nb counts it and its members, which keep their slots
 * (SLOT_MEMBER), so that slots are taken and freed exactly as on the START and DONE path, where
 * each message has one from its send to its end: a failure scans the pool in slot order and a
 * send reuses the slot its DONE freed last. The members hang from the carrier in a list, the
 * last sent first, the order in which their DONEs would have come; the carrier's own message,
 * the first sent, comes last. */
#include "net/net_bundle.h"

#include <string.h>

#include "net/net_state.h"

/* Whether message f, starting at t_start, may carry a bundle or join one: it starts (not past
 * the end of time) as a flow of bytes on links, its destination up. */
static bool may_carry(const sim_net *net, const net_slot *f, sim_time t_start)
{
    return f->msg.bytes > 0 && f->nlinks > 0 && !net->hosts[f->msg.dst].down &&
           t_start != SIM_TIME_NEVER;
}

bool sim_net_bundle_join(sim_net *net, uint32_t s, sim_time t_start)
{
    if (net->btail == NO_SLOT || sim_engine_next_seq(net->eng) != net->bmark ||
        t_start != net->bstart_ns)
        return false;
    uint32_t c = (uint32_t)net->btail;
    net_slot *k = &net->slots[c], *f = &net->slots[s];
    if (k->gen != net->btail_gen || k->state != SLOT_LATENCY || k->msg.bytes != f->msg.bytes ||
        k->msg.sent_ns != f->msg.sent_ns || k->nlinks != f->nlinks || !may_carry(net, f, t_start) ||
        memcmp(k->links, f->links, f->nlinks * sizeof(f->links[0])) != 0)
        return false;
    f->state = SLOT_MEMBER;
    f->carrier = (int32_t)c;
    f->bnext = k->bnext;
    f->ev = 0;
    k->bnext = (int32_t)s;
    k->nb++;
    net->stats.bundled++;
    return true;
}

void sim_net_bundle_note(sim_net *net, uint32_t s, sim_time t_start)
{
    const net_slot *f = &net->slots[s];
    if (!may_carry(net, f, t_start)) {
        net->btail = NO_SLOT;
        return;
    }
    net->btail = (int32_t)s;
    net->btail_gen = f->gen;
    net->bmark = sim_engine_next_seq(net->eng);
    net->bstart_ns = t_start;
}

uint32_t sim_net_bundle_pop(sim_net *net, uint32_t c)
{
    net_slot *k = &net->slots[c];
    uint32_t m = (uint32_t)k->bnext;
    k->bnext = net->slots[m].bnext;
    k->nb--;
    return m;
}

/* Moves carrier c's flow to slot n: every field but n's own message, generation and places on
 * its hosts' lists (net/net_pool.h), n's hops taking the places of c's on the hop lists (a
 * flow), n the place of c in net->active and in its group's heap, c's event retargeted to n. */
static void hand_over(sim_net *net, uint32_t c, uint32_t n)
{
    net_slot *k = &net->slots[c], *f = &net->slots[n];
    sim_net_msg msg = f->msg;
    uint32_t gen = f->gen;
    int32_t host_next[2] = { f->host_next[0], f->host_next[1] };
    int32_t host_prev[2] = { f->host_prev[0], f->host_prev[1] };
    *f = *k;
    f->msg = msg;
    f->gen = gen;
    memcpy(f->host_next, host_next, sizeof(host_next));
    memcpy(f->host_prev, host_prev, sizeof(host_prev));
    if (f->state == SLOT_FLOW) {
        for (uint32_t i = 0; i < f->nlinks; i++) {
            int32_t hop = (int32_t)(n * MAX_HOPS + i), prev = f->hop_prev[i], next = f->hop_next[i];
            if (prev != NO_HOP)
                net->slots[hop_slot(prev)].hop_next[hop_pos(prev)] = hop;
            else
                net->links[f->links[i]].head = hop;
            if (next != NO_HOP)
                net->slots[hop_slot(next)].hop_prev[hop_pos(next)] = hop;
        }
        net->active[f->active_pos] = n;
    }
    if (f->group >= 0)
        *(uint32_t *)sim_heap_at(&net->links[f->group].members, f->gpos) = n;
    if (f->ev != 0) {
        sim_event ev =
            sim_net_slot_event(f->state == SLOT_LATENCY ? SIM_EV_NET_START : SIM_EV_NET_DONE, n, f);
        sim_engine_retarget(net->eng, f->ev, &ev);
    }
    k->ev = 0;
    k->nb = 1;
    k->bnext = NO_SLOT;
    k->group = -1;
}

uint32_t sim_net_bundle_drop(sim_net *net, uint32_t m)
{
    net_slot *f = &net->slots[m];
    if (f->state != SLOT_MEMBER) {
        /* The carrier's own message goes: its earliest member, the list's last, carries on. */
        int32_t *link = &f->bnext;
        while (net->slots[*link].bnext != NO_SLOT)
            link = &net->slots[*link].bnext;
        uint32_t n = (uint32_t)*link;
        *link = NO_SLOT;
        hand_over(net, m, n);
        net->slots[n].nb--;
        net->slots[n].carrier = NO_SLOT;
        for (int32_t r = net->slots[n].bnext; r != NO_SLOT; r = net->slots[r].bnext)
            net->slots[r].carrier = (int32_t)n;
        if (net->btail == (int32_t)m)
            net->btail = NO_SLOT;
        return n;
    }
    uint32_t c = (uint32_t)f->carrier;
    int32_t *link = &net->slots[c].bnext;
    while (*link != (int32_t)m)
        link = &net->slots[*link].bnext;
    *link = f->bnext;
    net->slots[c].nb--;
    return c;
}

int32_t sim_net_bundle_split(sim_net *net, uint32_t c)
{
    net_slot *k = &net->slots[c];
    int32_t first = NO_SLOT; /* the list reversed: send order */
    for (int32_t m = k->bnext; m != NO_SLOT;) {
        net_slot *f = &net->slots[m];
        int32_t next = f->bnext;
        f->bnext = first;
        f->state = SLOT_LATENCY;
        f->carrier = NO_SLOT;
        first = m;
        m = next;
    }
    k->bnext = NO_SLOT;
    k->nb = 1;
    return first;
}
