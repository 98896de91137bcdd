/* The network: hosts on full-duplex NIC links, messages as flows under max-min sharing.
 *
 * Hosts are the workers (ids 0..N-1) followed by the server hosts. Each host has an up and a
 * down link of its own bandwidth and latency. `star`: every NIC on one ideal switch; the
 * path h->g crosses up(h) and down(g) with latency L_h + L_g. `racks`: host h sits in rack
 * h / rack_size behind a top-of-rack switch whose full-duplex uplink has its own bandwidth
 * and latency; a path between racks also crosses the source rack's uplink-up and the
 * destination rack's uplink-down, and adds both uplink latencies. `fat_tree`: a k-ary fat-tree
 * (k pods of k/2 edge and k/2 aggregation switches, (k/2)^2 core switches, k^3/4 host ports)
 * whose switch-to-switch links have the uplink bandwidth and latency, the edge-to-aggregation
 * ones divided by the oversubscription; a path climbs only as high as it must, through
 * switches chosen from its endpoints (net/net_topo.h gives the exact rule), and adds one
 * uplink latency per switch-to-switch link.
 *
 * A message of S bytes first spends its path latency (plus any extra latency set on either
 * endpoint when it is sent), then becomes a flow that transfers S bytes at the rate max-min
 * fair sharing gives it among the flows active on the links of its path. A flow start or
 * end, or a capacity change, marks the links it touches; before the engine's clock leaves the
 * instant (the engine's end-of-instant hook, installed at creation), max-min is solved once,
 * for the components connected to the marked links through shared links, each in the order
 * its first link was marked. N pushes that reach a server together thus cost one
 * recomputation, not N. A flow alone on all its links at its start is rated at once (the
 * smallest capacity on its path) and its end re-rates nobody: a ring step costs O(1) per
 * flow. A flow whose rate does not change keeps its completion event. The rates at the end of
 * an instant are those a recomputation after every single change would have left (each
 * component's last recomputation is the one that counts; tests/test_net_diff.c checks this
 * against a frozen copy of that older solver; the exceptions, counted there, are the order of
 * ends that tie to the ns and a rounding the older solver made when it re-rated a flow twice
 * within one instant). With one flow per link a message takes exactly latency + S/B (to the
 * nanosecond: each completion time is rounded to the nearest ns once).
 *
 * Solos (net/net_solo.c): a message sent while no flow and no other solo is on any link of its
 * path (with bytes, a path, its destination up and a transfer of at least 1 ns) will start as
 * a lone flow unless something touches those links first, so its end is known when it is
 * sent: start + S * 8e9 / (smallest capacity on its path), rounded once, the time a lone
 * flow's START would schedule. Its DONE is scheduled then, its one engine event (instead of a
 * START and a DONE), and it claims its links. Whatever would touch a claimed link resolves the
 * claim first: a flow starting on it (also one joining a group), a capacity change of it, the
 * listing of flows (sim_net_flow_at). A solo whose start has not come becomes an ordinary
 * message again, started at the place among the network's events its START would have had;
 * one whose start has come becomes the lone flow it stands for, joined to its links, rated
 * from its start, its DONE kept. A failure of an endpoint drops it like any message. It is an
 * active flow from its start to its end (active and peak flows, the rating counters), counted
 * by the first network call after its start in the engine's (time, seq) order, its start
 * taking its DONE's sequence (sim_engine_current_seq tells where a call stands). Every end is
 * that of the START and DONE path to the ns (tests/test_net_solo.c runs random message sets
 * both ways); only the order of events at one ns can differ: a solo's DONE carries the
 * sequence of its send, so at the ns of its end it comes before the network events
 * scheduled during its latency phase, which the START and DONE path ran first (the starts
 * without an event, of other solos, are still counted before it). Where such an event is the
 * START of a message on its links (a transfer shorter than that message's latency), the
 * message starts alone rather than beside it: the counters differ, not the rates.
 *
 * Costs: a solo one engine event, O(hops) when sent and when it ends, and O(log M) in the
 * heap of the M solos not yet started; a bundle two events for its n messages, O(hops) for
 * each when sent and when delivered, its flow rated once for all; any other message two
 * events. A lone flow O(1) at its start and end. An instant with changes on shared links costs
 * O(L + F * MAX_HOPS * log L) for the L links and F flows of the touched components (a heap
 * built bottom-up; single-flow links whose flow froze elsewhere are never popped), plus one
 * in-place move of the completion event of each flow whose rate changed.
 *
 * Shared bottlenecks (net/net_group.c): when a component is one link c that every flow of it
 * crosses, whose fair share cap / n is below that of every other link (the incast: n pushes
 * into one server's down link), max-min gives all n flows cap / n, and the component becomes
 * a group on c, unless all n would end at one ns (a synchronized incast: nothing to gain).
 * The filling's walk of the component finds c; the check then walks c's flows once (their
 * rates, the tie, and a count of hops that tells whether any other flow is in the component)
 * and scans the links only for a star that passes all that. The group keeps a virtual clock,
 * the bytes each member received since an
 * origin, brought up to date only when the rate changes, and each member its finishing point
 * (the clock's reading when it joined plus its size) in a binary heap; bytes left = finishing
 * point - clock, and an end is anchor + left * 8e9 / rate rounded to the ns once, as above.
 * Only the members that end first have a DONE event (those tied to the ns, scheduled in the
 * order the per-flow solver would have given them). A start or end of a member costs one heap
 * operation and, at the flush, one clock update plus moving the first finishers' events:
 * O(log n + ties), not O(n). A flow joins a group at its start if it crosses the center and
 * every other flow on its other links is a member; a change the group cannot absorb (another
 * flow on a member's link, a capacity change, a host failure, the share no longer smallest,
 * fewer than 2 members) dissolves it back into plain flows, O(n), and the filling above
 * takes over (and may form a group again). Ends are those of the per-flow solver but for a
 * rounding: a group subtracts the clock from the finishing point where the per-flow solver
 * subtracts each interval's bytes from the bytes left, so an end whose exact value lies
 * within about 1e-7 ns of a half ns may move by 1 ns (tests/test_net_group.c counts these
 * against a frozen copy of the per-flow solver: about 1 random flow set in 100).
 *
 * Bundles (net/net_bundle.c; config.bundles): identical messages sent one right after the
 * other, with nothing scheduled between their sends (the same path, bytes, send ns and start
 * ns, a destination up), would have adjacent STARTs at their start ns, join their links one
 * after the other, get equal rates and ends, and have their ends scheduled one after the other
 * by every rating (progressive filling freezes them together, a group arms them together): on
 * the START and DONE path their events are consecutive. So the first of them that is no solo
 * carries the others: one START and one DONE for the lot, its flow counting once per message
 * on its links and in every count. Its DONE delivers them one at a time (sim_net_next), the
 * last sent first, as their DONEs came, each leaving its links before it is delivered. A
 * failure drops a message of a bundle like any other (the next one carries the flow when the
 * carrier's own message goes). A bundle that would start alone on its links with a transfer
 * under half a ns starts as its messages one by one (the first one's START would have ended
 * it before the others started). What a caller sees is the START and DONE path's: every end,
 * its place among the events of its ns, the counts, the peak; only the engine's events are
 * fewer (a host's 8 GPUs sending to their peers on the next host in a hierarchical
 * all-reduce: 3 events instead of 15, the first message being a solo).
 *
 * The network schedules its own events (SIM_EV_NET_*) on the engine given at creation, which
 * must outlive it; the runner hands those events back through sim_net_handle, which reports
 * delivered messages. A message to or from a host that is down is dropped: flows in progress
 * when a host goes down are aborted, and messages reaching a down host are not delivered.
 * Message payloads (tensor snapshots) are identified by an opaque 32-bit handle the network
 * carries but never reads.
 */
#ifndef NET_NET_H
#define NET_NET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sim/engine.h"
#include "sim/err.h"

/* The network's own event kinds, below the runtime's (runtime/events.h). */
enum sim_net_event_kind {
    SIM_EV_NET_START = 1, /* a message's latency phase ended, its flow starts */
    SIM_EV_NET_DONE = 2   /* a flow's last byte arrived */
};

typedef enum sim_topology {
    SIM_TOPO_STAR = 0,
    SIM_TOPO_RACKS = 1,
    SIM_TOPO_FAT_TREE = 2
} sim_topology;

#define SIM_NET_NO_PAYLOAD UINT32_MAX

/* The largest latency of a switch-to-switch link (uplink_latency_ns) or of a host's link to
 * its node's fabric (fabric_latency_ns) the network takes: a path sums up to 16 such latencies
 * and NIC latencies (at most SIM_TIME_NEVER / 8) without overflow. */
#define SIM_NET_MAX_HOP_LATENCY_NS (SIM_TIME_NEVER / 16)

typedef struct sim_net_config {
    sim_topology topology;
    uint32_t nhosts;             /* workers then server hosts */
    const double *bandwidth_bps; /* (nhosts) NIC bandwidth per direction, bits/s, > 0 */
    const sim_time *latency_ns;  /* (nhosts) NIC latency, >= 0 */
    uint32_t rack_size;          /* racks: hosts per rack (>= 1) */
    double uplink_bandwidth_bps; /* racks: each direction of a rack's uplink, bits/s;
                                    fat_tree: of each switch-to-switch link */
    sim_time uplink_latency_ns;  /* racks: latency of a rack's uplink; fat_tree: of each
                                    switch-to-switch link */
    uint32_t k;                  /* fat_tree: switch radix, even, k^3 / 4 >= nhosts */
    double oversubscription;     /* fat_tree: >= 1, edge-to-aggregation links carry
                                    uplink_bandwidth_bps / oversubscription */
    /* Nodes: machines holding several hosts (GPUs). NULL node_of: every host is a node of its
     * own, on its own NIC. Otherwise host h sits on node node_of[h] (0..nnodes-1, every node
     * holding at least one host, nondecreasing in h) and shares that node's NIC with the node's
     * other hosts: bandwidth_bps and latency_ns are then its node's NIC's (equal for the hosts
     * of a node), and the topology (racks, fat_tree) places nodes where it placed hosts. A path
     * between two hosts of one node crosses only their links to the node's fabric: the up link
     * of the source and the down link of the destination, each direction fabric_bps[h], with
     * latency fabric_latency_ns[src] + fabric_latency_ns[dst]. */
    uint32_t nnodes;                   /* nodes when node_of is set */
    const uint32_t *node_of;           /* (nhosts) or NULL */
    const double *fabric_bps;          /* (nhosts) with node_of: fabric link bandwidth, bits/s */
    const sim_time *fabric_latency_ns; /* (nhosts) with node_of: fabric link latency, >= 0 */
    bool bundles; /* identical messages sent together share their events (see above); the
                     caller then takes every message of an event (sim_net_next) */
} sim_net_config;

typedef struct sim_net_msg {
    uint32_t src, dst; /* hosts */
    uint64_t bytes;    /* size on the wire */
    uint64_t tag;      /* the sender's, passed through */
    uint64_t arg;      /* the sender's, passed through */
    uint32_t payload;  /* opaque handle, or SIM_NET_NO_PAYLOAD */
    sim_time sent_ns;  /* time of sim_net_send */
} sim_net_msg;

typedef struct sim_net_stats {
    uint64_t sent;       /* messages sent */
    uint64_t delivered;  /* messages delivered */
    uint64_t dropped;    /* messages dropped because an endpoint was down */
    uint64_t between;    /* messages sent between hosts of different nodes (config.node_of; every
                            message between two hosts without nodes) */
    uint64_t rerates;    /* flow rate assignments made by max-min recomputations */
    uint64_t recomputes; /* max-min recomputations: one per instant with changes to shared
                            links, plus one per start or end of a flow alone on its links */
    uint64_t grouped;    /* flows rated as members of a shared-bottleneck group (at its
                            forming or when they joined it) */
    uint64_t bundled;    /* messages sent into the bundle of another (config.bundles) */
    size_t active_flows; /* flows now in their bandwidth phase */
    size_t peak_flows;   /* most flows ever in their bandwidth phase at once */
    size_t in_flight;    /* messages sent and neither delivered nor dropped */
} sim_net_stats;

typedef struct sim_net sim_net;

/* Called for every message the network drops (an endpoint down), with the message as sent,
 * so that its owner can release the payload. Must not call back into the network. */
typedef void (*sim_net_drop_fn)(void *ud, const sim_net_msg *msg);

/* Validates `cfg` (SIM_EINVAL naming the bad field) and builds the links. Arrays in `cfg`
 * are copied. `eng` must outlive the network. Returns NULL and fills `err` on failure. */
sim_net *sim_net_create(const sim_net_config *cfg, sim_engine *eng, sim_err *err);

/* Frees the network and everything in flight. NULL is a no-op. */
void sim_net_destroy(sim_net *net);

/* Bytes sim_net_create allocates per link for `cfg` (sim_net_topo_nlinks: the NICs' and every
 * switch-to-switch link of the topology, whatever the hosts use; a fat_tree has k^3 of them):
 * the link table and the solver's per-link scratch. A valid `cfg` is assumed; paths are
 * computed, so there is no routing table. For the run's memory check. */
uint64_t sim_net_links_bytes(const sim_net_config *cfg);

/* Sends `msg` (src, dst, bytes, tag, arg, payload; sent_ns is filled in) now. src == dst and
 * zero-byte messages are allowed: they take the path latency only (src == dst: none at all,
 * delivered at the current time through an event). Returns 0, SIM_EINVAL for a bad host or
 * a sender that is down, or SIM_ENOMEM if the flow pool cannot grow. */
int sim_net_send(sim_net *net, const sim_net_msg *msg, sim_err *err);

/* Handles one of the network's own events (SIM_EV_NET_*). Returns 1 and fills *out when a
 * message was delivered by this event, 0 when not, or a negative SIM_E* code. With bundles,
 * an event may deliver several: it returns 2 when more are to come, which sim_net_next gives. */
int sim_net_handle(sim_net *net, const sim_event *ev, sim_net_msg *out, sim_err *err);

/* The next message of the event last handled (a bundle's DONE delivers its messages one at a
 * time, as their own DONEs would have come): fills *out and returns 2 when more are to come
 * after it, 1 for the last, or 0 when there is none (nothing to deliver, or bundles off). A
 * caller may send between the calls, as it would while handling those DONEs; one that stops
 * calling (its run stopped) leaves the rest in flight, due at once: their DONE is scheduled
 * again, at that ns, by the next network call but a send. */
int sim_net_next(sim_net *net, sim_net_msg *out, sim_err *err);

/* Marks a host down (aborting its flows and dropping its messages in flight, which are
 * counted as dropped) or up again. */
void sim_net_set_host_down(sim_net *net, uint32_t host, bool down);
bool sim_net_host_down(const sim_net *net, uint32_t host);

/* Adds `extra_ns` (>= 0) to the latency of every message sent from or to `host` from now on;
 * 0 restores the configured latency. Messages already sent keep the latency they had. */
void sim_net_set_extra_latency(sim_net *net, uint32_t host, sim_time extra_ns);

/* Multiplies the configured bandwidth of both directions of `host`'s NIC by `factor` in
 * (0, 1] from now on (1 restores it); flows in progress are re-rated at once. A NIC that
 * several hosts share (config.node_of) runs at the smallest factor set on any of them. */
int sim_net_set_bandwidth_factor(sim_net *net, uint32_t host, double factor, sim_err *err);

/* The path latency (without extra latency) and bottleneck bandwidth from src to dst. */
sim_time sim_net_path_latency(const sim_net *net, uint32_t src, uint32_t dst);
double sim_net_path_bandwidth_bps(const sim_net *net, uint32_t src, uint32_t dst);

/* Installs the drop callback (NULL: none). */
void sim_net_set_drop_fn(sim_net *net, sim_net_drop_fn fn, void *ud);

/* Messages from or to `host` that are sent and neither delivered nor dropped yet. */
uint32_t sim_net_host_inflight(const sim_net *net, uint32_t host);

/* Bytes of messages a host sent (counted when sent) and received (counted when delivered),
 * modulo 2^64: sim_net_host_wraps gives the 2^64s above them (a count is wraps x 2^64 + it). */
void sim_net_host_bytes(const sim_net *net, uint32_t host, uint64_t *sent, uint64_t *received);
void sim_net_host_wraps(const sim_net *net, uint32_t host, uint64_t *sent, uint64_t *received);

/* The current rate of the flow carrying a message, for tests: the rate in bits/s of the
 * n-th active flow (in no particular order) and its endpoints. Settles the current instant
 * first: the solos that have started by now join their links as the flows they stand for, and
 * the pending recomputation runs (sim_engine_flush). Returns false past the end. */
bool sim_net_flow_at(sim_net *net, size_t n, uint32_t *src, uint32_t *dst, double *rate_bps);

void sim_net_stats_get(const sim_net *net, sim_net_stats *stats);

/* sim_net_stats_get as of `end`, at or after the current time: a run stopped by time ends at
 * its stop, after its last event, and the lone flows that started by then (solos, which have
 * no start event of their own) are active in it; they were counted only when a network call
 * or an evaluation came after their start, so that peak_flows changed with eval.every_s. */
void sim_net_stats_until(const sim_net *net, sim_time end, sim_net_stats *stats);

#endif
