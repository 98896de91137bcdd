/* Bundles (net/net_bundle.c): identical messages sent one after the other share one START and
 * one DONE, carried by the first of them that is no solo (see net/net.h). For the network's own
 * files: net/net_model.c calls these; they call nothing of the solver, the groups or the solos.
 * Not a public header.
 *
 * Why the START and DONE path would give the messages of a bundle consecutive events: they are
 * sent with nothing scheduled between their sends, so their STARTs are adjacent in the
 * engine's order at their start ns, and no network call comes between them; each joins the head
 * of its links' hop lists, so they lie together on every list, in send order from the tail; and
 * whatever rates one of them rates them all at once, one after the other, to the same end:
 * progressive filling freezes flows on the same links together (the hop list of the link that
 * freezes them), a group sorts its members' events by (flush, join order), which theirs share
 * but for the join order, and nothing else can tell them apart (a failure drops one of them, and
 * the rest stay as they were). Their DONEs thus come one after the other, the last sent first,
 * and a bundle's one DONE delivers them in that order. */
#ifndef NET_NET_BUNDLE_H
#define NET_NET_BUNDLE_H

#include <stdbool.h>
#include <stdint.h>

#include "net/net_state.h"

/* Makes message s, just sent (its slot filled as SLOT_LATENCY, starting at t_start, no solo), a
 * member of the bundle of the message sent just before it if it may join it: bundles on, that
 * message a carrier in its latency (the last noted, sim_net_bundle_note), no event scheduled
 * since (the engine's next sequence unchanged), the same path, bytes, send and start ns, and s
 * fit to carry one too (bytes, links, its destination up). Returns true: s needs no event. */
bool sim_net_bundle_join(sim_net *net, uint32_t s, sim_time t_start);

/* Message s was just sent and its START scheduled, starting at t_start, bundles on: the next
 * send may join it, if it can carry a bundle. A send that schedules something else (a solo's
 * DONE) sets net->btail to NO_SLOT: the next one joins nothing. */
void sim_net_bundle_note(sim_net *net, uint32_t s, sim_time t_start);

/* Takes out of carrier c's bundle the member it delivers next (the last sent) and returns it;
 * c's nb goes down by one. c must have a member (nb > 1). */
uint32_t sim_net_bundle_pop(sim_net *net, uint32_t c);

/* Message m of a bundle (a member, or a carrier with members) is being dropped: a member leaves
 * its carrier's list; a carrier hands its flow over to its earliest member (the flow's place on
 * its links, in net->active, in its group and its event move to that slot). Returns the carrier
 * of the rest, whose nb went down by one: the caller takes one message off its links if it is a
 * flow, then drops m as a message. */
uint32_t sim_net_bundle_drop(sim_net *net, uint32_t m);

/* Undoes carrier c's bundle before its flow starts: c and its members become plain messages
 * (SLOT_LATENCY, nb 1, no event), each member's bnext the next in send order. Returns the first
 * member in send order (the one after c), or NO_SLOT. */
int32_t sim_net_bundle_split(sim_net *net, uint32_t c);

#endif
