/* Shared-bottleneck groups (net/net_group.c), for the network's own files: a group is a link c
 * whose every flow is alone on its other links, each of which is faster than c's fair share,
 * so that max-min gives all of them c->cap_bps / c->nflows (see net/net.h). A bundle
 * (net/net_bundle.h) is one member, counted nb times (net_link.g_flows). The solver
 * (net/net_solver.c) and net/net_model.c call these; they call nothing of either. Not a
 * public header. */
#ifndef NET_NET_GROUP_H
#define NET_NET_GROUP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "net/net_state.h"
#include "sim/err.h"

/* Flow s just joined its links and shares some: adds it to the group of the one link it
 * shares if it can (returns true; the center is marked dirty), else dissolves every group it
 * touches and returns false. */
bool sim_net_group_try_join(sim_net *net, uint32_t s);

/* Member s leaves its group (its links already left): marks the center dirty unless s was the
 * last flow on its links (returns true then, like a lone flow). */
bool sim_net_group_leave(sim_net *net, uint32_t s);

/* One message of member s, a bundle, leaves (the bundle's others stay): marks the center
 * dirty. */
void sim_net_group_leave_one(sim_net *net, uint32_t s);

/* Turns the members of c's group back into plain flows with their own rates and events. */
void sim_net_group_dissolve(sim_net *net, uint32_t c);

/* Dissolves the group link l belongs to, as center or as a member's other link, if any. */
void sim_net_group_dissolve_at(sim_net *net, uint32_t l);

/* Forms a group of the component just collected into net->comp (described by *comp) if it is
 * a star whose every flow changes rate now; returns 1 if it did, 0 if not, or an error. */
int sim_net_group_form(sim_net *net, const net_comp *comp, sim_err *err);

/* The flush's work for a dirty group center c: its new rate and the events of its first
 * finishers (returns 0), or, when it no longer qualifies, dissolution (returns 1: the caller
 * fills c's component plainly), or an error. */
int sim_net_group_resolve(sim_net *net, uint32_t c, sim_err *err);

/* Grows the group scratch arrays to `cap` entries. */
int sim_net_group_grow(sim_net *net, size_t cap);

/* Makes link l's heap of members empty, with no storage (at the network's creation). */
void sim_net_group_init(sim_net *net, uint32_t l);

#endif
