/* Solos (net/net_solo.c): messages that are alone on every link of their path when sent, and
 * so cost one engine event (their DONE, scheduled at once) instead of a START and a DONE. For
 * the network's own files: net/net_model.c calls these; they call nothing of the solver or
 * the groups. Not a public header, but for sim_net_solo_enable, which tests use.
 *
 * A solo claims its links (net_link.solo) from its send to its end. Whatever would look at or
 * change a claimed link first resolves the claim (net/net_model.c): a solo that has not
 * started yet becomes an ordinary message again ("demoted"), one that has becomes the flow it
 * would be had it started as a lone flow ("promoted"). "Started" follows the engine's order:
 * a solo starts at (start time, sequence of its DONE), the place its START event would have
 * taken, and is counted as started (active and peak flows, the rating counters, its join
 * order) by the first network call that comes after that place. A demoted message keeps that
 * place: it starts there, before any network call that follows it, as its START would have
 * (a START event at its start time, scheduled when it is demoted, only makes sure that a
 * network call comes by then). */
#ifndef NET_NET_SOLO_H
#define NET_NET_SOLO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "net/net.h"
#include "net/net_state.h"

/* Makes message s, just sent (its slot filled as SLOT_LATENCY) and starting at t_start, a solo
 * if it can be one: bytes > 0, a path of links none of which carries a flow or a claim, its
 * destination up, and an end before the end of time. Then it claims its links, is rated the
 * smallest capacity on its path and its DONE is scheduled, exactly when the START of a lone
 * flow would have scheduled it; returns true. Returns false, changing nothing, otherwise. */
bool sim_net_solo_try(sim_net *net, uint32_t s, sim_time t_start);

/* Whether the place (t, seq) comes before the place (u, useq) in the engine's order. */
static inline bool net_place_before(sim_time t, uint64_t seq, sim_time u, uint64_t useq)
{
    return t < u || (t == u && seq < useq);
}

/* Whether wait entry w's place lies at or before (now, seq). */
static inline bool net_wait_by(const net_wait *w, sim_time now, uint64_t seq)
{
    return !net_place_before(now, seq, w->t, w->seq);
}

/* The first entry of the wait queue (the smaller of the ring's head and the heap's top), or
 * NULL; *in_fifo tells which of the two it is. */
static inline const net_wait *net_wait_first(const sim_net *net, bool *in_fifo)
{
    const net_wait *a = net->wait_nfifo > 0 ? &net->wait_fifo[net->wait_head] : NULL;
    const net_wait *b = net->wait_heap.n > 0 ? (const net_wait *)net->wait_heap.items : NULL;
    *in_fifo = b == NULL || (a != NULL && net_place_before(a->t, a->seq, b->t, b->seq));
    return *in_fifo ? a : b;
}

/* Whether the first place in the queue of starts to come lies at or before (now, seq) in the
 * engine's order: the cheap test that spares most network calls sim_net_solo_next. */
static inline bool sim_net_solo_due(const sim_net *net, sim_time now, uint64_t seq)
{
    return (net->wait_nfifo > 0 && net_wait_by(&net->wait_fifo[net->wait_head], now, seq)) ||
           (net->wait_heap.n > 0 && net_wait_by(net->wait_heap.items, now, seq));
}

/* Takes out the first message in the queue whose place (start time, DONE sequence) is at or
 * before (now, seq) in the engine's order and returns it, or NO_SLOT if there is none. A solo
 * (SLOT_SOLO) is counted as started: an active flow, rated as a lone flow at its start (one
 * recomputation, one rating), with the join order and flush stamp its START would have given
 * it; it keeps its claims. A demoted message (SLOT_LATENCY) is the caller's to start now. */
int32_t sim_net_solo_next(sim_net *net, sim_time now, uint64_t seq);

/* Releases solo s's claims; returns whether it had started (it is then no longer counted as
 * active: the caller joins it to its links or ends it). One that had not keeps its place in
 * the heap, for the start of the ordinary message it becomes (demoted). The slot's state and
 * event are the caller's to change. */
bool sim_net_solo_unclaim(sim_net *net, uint32_t s);

/* Takes message s (a solo or a demoted one, being dropped) out of the heap if it is there. */
void sim_net_solo_forget(sim_net *net, uint32_t s);

/* Solos and demoted messages whose place is at or before (now, seq) but that no network call
 * has taken out yet. */
size_t sim_net_solo_uncounted(const sim_net *net, sim_time now, uint64_t seq);

/* Grows the solo heap to `cap` entries. Returns 0 or SIM_ENOMEM. */
int sim_net_solo_grow(sim_net *net, size_t cap);

/* For tests only: with `on` false, no message becomes a solo from now on (every message takes
 * the START and DONE path), so that both paths can be compared. On by default. */
void sim_net_solo_enable(sim_net *net, bool on);

#endif
