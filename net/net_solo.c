/* Solos: messages alone on their links, one engine event each (see net/net_solo.h).
 *
 * A lone flow's end is known when it is sent: nothing shares its links, so its rate from its
 * start is the smallest capacity on its path, and its end is start + bytes * 8e9 / rate
 * rounded once, what sim_net_set_rate would schedule at the START (net_end_at, the same
 * formula). A solo schedules that end when sent and claims its links, so that anything that
 * would change the answer (another flow joining one of them, a capacity change, a failure)
 * finds the claim and resolves it first (net/net_model.c).
 *
 * The place of a start. A lone flow's START changes the active and peak flows, the rating
 * counters and the join order, and it comes at (start time, sequence) in the engine's order.
 * A solo has no START; its DONE, scheduled when the START would have been, has the sequence
 * the START would have had. So every message whose start is to come without an event of its
 * own (a solo, or a demoted one: see net/net_solo.h) waits in a queue by (start time, DONE
 * sequence), and each network call (a send, a network event, a failure, a capacity change,
 * the end-of-instant flush, the queries) first takes out what lies at or before where the run
 * stands: the event being dispatched, or between events the end of the instant
 * (sim_engine_current_seq). A solo's own DONE stands where the DONE its START would have
 * scheduled would stand: at the sequence the engine was at when the solo was counted as
 * started (start_mark; exact, since sends drain too, so no message sent after its start
 * could come before). Starts without an event of their own are thus counted, and demoted
 * messages started, in the order the START and DONE path ran them among the network's calls;
 * what differs is the order of a solo's DONE event itself among the events of its ns. */
#include "net/net_solo.h"

#include <math.h>
#include <stdlib.h>

#include "net/net_state.h"

/* ---- the wait queue --------------------------------------------------------------------------
 *
 * Starts mostly come in the order of their keys (messages sent later start later when
 * latencies are alike), so an entry whose key is not below the last one pushed goes to a FIFO
 * ring, O(1), and only the others to a binary heap (sim/heap.h); the first entry is the smaller of
 * the two heads. Entries are not taken out when their message is dropped before its start: they die
 * (wait_live) and are skipped when they come up, or dropped by a compaction when a full array
 * must take one more (the live ones are at most the messages in the pool, of which the one
 * being pushed is not yet one, so a compaction frees a place). */

static bool wait_less(const net_wait *a, const net_wait *b)
{
    return net_place_before(a->t, a->seq, b->t, b->seq);
}

static bool wait_live(const sim_net *net, const net_wait *w)
{
    const net_slot *f = &net->slots[w->slot];
    return f->solo_wait && f->solo_seq == w->seq;
}

static uint32_t ring_next(const sim_net *net, uint32_t i)
{
    return i + 1 < net->cap ? i + 1 : 0;
}

static bool wait_less_ud(const void *ud, const void *a, const void *b)
{
    (void)ud;
    return wait_less(a, b);
}

static const sim_heap_ops wait_ops = { .size = sizeof(net_wait), .less = wait_less_ud };

static void fifo_pop(sim_net *net)
{
    net->wait_head = ring_next(net, net->wait_head);
    net->wait_nfifo--;
}

/* Keeps the live entries of the FIFO ring, in order, from index 0. */
static void fifo_compact(sim_net *net)
{
    uint32_t n = 0;
    for (uint32_t k = 0, i = net->wait_head; k < net->wait_nfifo; k++, i = ring_next(net, i))
        if (wait_live(net, &net->wait_fifo[i]))
            net->wait_fifo[n++] = net->wait_fifo[i]; /* n <= k: never ahead of the reads */
    net->wait_head = 0;
    net->wait_nfifo = n;
}

/* Keeps the live entries of the heap, heapified again. */
static void heap_compact(sim_net *net)
{
    net_wait *w = net->wait_heap.items;
    uint32_t n = 0;
    for (uint32_t i = 0; i < net->wait_heap.n; i++)
        if (wait_live(net, &w[i]))
            w[n++] = w[i];
    net->wait_heap.n = n;
    sim_heap_build(&net->wait_heap);
}

static void wait_push(sim_net *net, net_wait w)
{
    uint32_t tail = net->wait_nfifo == 0 ? 0 : (net->wait_head + net->wait_nfifo - 1) % net->cap;
    if (net->wait_nfifo == 0 || !wait_less(&w, &net->wait_fifo[tail])) {
        if (net->wait_nfifo == net->cap)
            fifo_compact(net);
        net->wait_fifo[(net->wait_head + net->wait_nfifo++) % net->cap] = w;
        return;
    }
    if (net->wait_heap.n == net->cap)
        heap_compact(net);
    sim_heap_push(&net->wait_heap, &w);
}

int sim_net_solo_grow(sim_net *net, size_t cap)
{
    /* The ring is copied in order from index 0 (at creation it is empty). net->cap is still
     * the old capacity, by which its indices wrap. */
    if (net->wait_heap.ops == NULL) /* the first call, at creation */
        sim_heap_init(&net->wait_heap, &wait_ops, NULL);
    net_wait *q = malloc(cap * sizeof(*q));
    if (q == NULL || cap > UINT32_MAX ||
        sim_heap_reserve(&net->wait_heap, (uint32_t)cap) != SIM_OK) {
        free(q);
        return SIM_ENOMEM;
    }
    for (uint32_t k = 0, i = net->wait_head; k < net->wait_nfifo; k++, i = ring_next(net, i))
        q[k] = net->wait_fifo[i];
    free(net->wait_fifo);
    net->wait_fifo = q;
    net->wait_head = 0;
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
    uint64_t seq = sim_engine_next_seq(net->eng); /* the DONE's */
    sim_event ev = sim_net_slot_event(SIM_EV_NET_DONE, s, f);
    if (sim_engine_schedule_at(net->eng, at, &ev, &f->ev) != SIM_OK)
        return false; /* out of memory: the START's scheduling reports it */
    f->solo_seq = seq;
    for (uint32_t k = 0; k < f->nlinks; k++)
        net->links[f->links[k]].solo = (int32_t)s;
    f->state = SLOT_SOLO;
    f->rate_bps = rate;
    f->remaining_bytes = (double)f->msg.bytes;
    f->last_ns = t_start;
    f->solo_wait = true;
    wait_push(net, (net_wait){ .t = t_start, .seq = f->solo_seq, .slot = s });
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
    f->start_mark = sim_engine_next_seq(net->eng);
    net->nsolo_active++;
    if (net_active_flows(net) > net->stats.peak_flows)
        net->stats.peak_flows = net_active_flows(net);
    net->stats.recomputes++;
    net->stats.rerates++;
}

int32_t sim_net_solo_next(sim_net *net, sim_time now, uint64_t seq)
{
    /* Keys first: most calls find nothing due and read no slot. */
    for (;;) {
        bool in_fifo;
        const net_wait *w = net_wait_first(net, &in_fifo);
        if (w == NULL || !net_wait_by(w, now, seq))
            return NO_SLOT;
        uint32_t s = w->slot;
        bool live = wait_live(net, w);
        if (in_fifo)
            fifo_pop(net);
        else
            sim_heap_pop(&net->wait_heap, NULL);
        if (!live)
            continue;
        net->slots[s].solo_wait = false;
        if (net->slots[s].state == SLOT_SOLO)
            count_started(net, s);
        return (int32_t)s;
    }
}

bool sim_net_solo_unclaim(sim_net *net, uint32_t s)
{
    net_slot *f = &net->slots[s];
    for (uint32_t k = 0; k < f->nlinks; k++)
        net->links[f->links[k]].solo = NO_SLOT;
    if (f->solo_wait)
        return false;
    net->nsolo_active--;
    return true;
}

void sim_net_solo_forget(sim_net *net, uint32_t s)
{
    net->slots[s].solo_wait = false; /* its entry dies */
}

/* Whether entry w is live and lies at or before (now, seq). */
static bool wait_by(const sim_net *net, const net_wait *w, sim_time now, uint64_t seq)
{
    return wait_live(net, w) && net_wait_by(w, now, seq);
}

size_t sim_net_solo_uncounted(const sim_net *net, sim_time now, uint64_t seq)
{
    size_t n = 0;
    for (uint32_t k = 0, i = net->wait_head; k < net->wait_nfifo; k++, i = ring_next(net, i))
        n += wait_by(net, &net->wait_fifo[i], now, seq);
    for (uint32_t i = 0; i < net->wait_heap.n; i++)
        n += wait_by(net, sim_heap_at(&net->wait_heap, i), now, seq);
    return n;
}
