/* The reference of the network's differential tests (tests/test_net_diff.c, test_net_group.c):
 * max-min fair sharing worked out in the plainest way, written apart from net/ so that a test
 * of one against the other checks two formulations, not one copy against itself. It keeps
 * each message in a place of one array and the flows in the order they started; a path is
 * worked out from the topology's numbering of links (net/net_topo.h), the same numbers, by
 * its own arithmetic; rates come from progressive filling by plain loops: the links that
 * share flows with a changed one, and those that share flows with them, are found by
 * sweeping over the flows until none is added; then, again and again, the link with the
 * smallest fair share (what capacity it has left over the flows not yet rated, the lower
 * number first on a tie) rates its flows at that share, the latest to start first. No
 * heaps, no lists threaded through the links, no epochs: quadratic, and fast enough at test
 * sizes. Star, racks and fat tree, hosts without nodes; no extra latency.
 *
 * Two timings, two networks as they were:
 * - REF_EACH_CHANGE, the model before per-instant batching: the rates are worked out again
 *   at every start, end, capacity change or failure, every flow re-rated one at a time;
 * - REF_PER_INSTANT, the model before shared-bottleneck groups: the links changed at an
 *   instant are settled once, when the clock leaves it (the engine's flush), each group of
 *   connected links once, in the order its first link changed; a flow that starts or ends
 *   alone on its links is rated (or leaves) at once.
 * A flow's bytes left are brought up to date at each change of its rate, and its end is
 * scheduled again from them (cancelled and scheduled, an unchanged rate keeping its end).
 * Same types and errors as net/net.h for what the tests call. Not part of the simulator. */
#ifndef HETSIM_TESTS_NET_REF_H
#define HETSIM_TESTS_NET_REF_H

#include <stdbool.h>
#include <stdint.h>

#include "net/net.h"
#include "sim/engine.h"
#include "sim/err.h"

typedef enum ref_mode {
    REF_EACH_CHANGE = 0, /* rates worked out at every change */
    REF_PER_INSTANT = 1  /* rates worked out once per instant */
} ref_mode;

typedef struct ref_net ref_net;

/* A network of the star, racks or fat tree of `cfg` (which the model must accept; nodes are
 * refused with SIM_EINVAL). `eng` must outlive it; REF_PER_INSTANT installs its flush hook.
 * Returns NULL and fills `err` on failure. */
ref_net *ref_net_create(const sim_net_config *cfg, sim_engine *eng, ref_mode mode, sim_err *err);

/* Frees the network and all it carries. NULL is a no-op. */
void ref_net_destroy(ref_net *net);

/* Sends `msg` now (its sent_ns is filled in): it starts after the path latency, which is all
 * a zero-byte message or one to its own host takes. Returns 0, SIM_EINVAL for a bad host or a
 * sender that is down, SIM_ENOMEM, or an error an earlier failure left pending. */
int ref_net_send(ref_net *net, const sim_net_msg *msg, sim_err *err);

/* Handles one of its own events (SIM_EV_NET_START or SIM_EV_NET_DONE): 1 with *out filled when
 * it delivers a message, 0 when not (a drop, a start, a stale event), or a negative SIM_E*. */
int ref_net_handle(ref_net *net, const sim_event *ev, sim_net_msg *out, sim_err *err);

/* Takes a host down, dropping every message from or to it (the drop function is told), or
 * brings it up. */
void ref_net_set_host_down(ref_net *net, uint32_t host, bool down);
bool ref_net_host_down(const ref_net *net, uint32_t host);

/* Both links of `host`'s NIC get `factor` in (0, 1] times their configured capacity. */
int ref_net_set_bandwidth_factor(ref_net *net, uint32_t host, double factor, sim_err *err);

/* Installs the function told of each dropped message (NULL: none). */
void ref_net_set_drop_fn(ref_net *net, sim_net_drop_fn fn, void *ud);

/* sent, delivered, dropped, rerates (rates that changed), recomputes (REF_EACH_CHANGE: one per
 * start, end and capacity change, and per failure that stopped a flow; REF_PER_INSTANT: one per
 * instant with changed links, plus one per start or end alone on its links), active_flows,
 * peak_flows and in_flight; the rest 0. */
void ref_net_stats_get(const ref_net *net, sim_net_stats *stats);

/* Whether the message last delivered was re-rated in a way a solver that settles each instant
 * once does not see: at some instant its rate changed and changed back, or changed at the very
 * instant its end was due. Each change re-reads its bytes left, so its end may move by a
 * rounding (1 ns). Meaningful with REF_EACH_CHANGE. */
bool ref_net_last_reverted(const ref_net *net);

#endif
