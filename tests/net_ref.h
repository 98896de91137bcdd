/* The network model as it was before batching (one max-min recomputation per start, end or
 * capacity change, every flow re-rated one at a time): a frozen copy of net/net_model.c kept as the
 * reference of the differential test (test_net_diff.c). Same types and semantics as net/net.h,
 * with ref_net_ names. Not part of the simulator. */
#ifndef NET_REF_H
#define NET_REF_H

#include "net/net.h"

typedef struct ref_net ref_net;

/* Validates `cfg` (SIM_EINVAL naming the bad field) and builds the links. Arrays in `cfg`
 * are copied. `eng` must outlive the network. Returns NULL and fills `err` on failure. */
ref_net *ref_net_create(const sim_net_config *cfg, sim_engine *eng, sim_err *err);

/* Frees the network and everything in flight. NULL is a no-op. */
void ref_net_destroy(ref_net *net);

/* Sends `msg` (src, dst, bytes, tag, arg, payload; sent_ns is filled in) now. src == dst and
 * zero-byte messages are allowed: they take the path latency only (src == dst: none at all,
 * delivered at the current time through an event). Returns 0, SIM_EINVAL for a bad host or
 * a sender that is down, or SIM_ENOMEM if the flow pool cannot grow. */
int ref_net_send(ref_net *net, const sim_net_msg *msg, sim_err *err);

/* Handles one of the network's own events (SIM_EV_NET_*). Returns 1 and fills *out when a
 * message was delivered by this event, 0 when not, or a negative SIM_E* code. */
int ref_net_handle(ref_net *net, const sim_event *ev, sim_net_msg *out, sim_err *err);

/* Marks a host down (aborting its flows and dropping its messages in flight, which are
 * counted as dropped) or up again. */
void ref_net_set_host_down(ref_net *net, uint32_t host, bool down);
bool ref_net_host_down(const ref_net *net, uint32_t host);

/* Adds `extra_ns` (>= 0) to the latency of every message sent from or to `host` from now on;
 * 0 restores the configured latency. Messages already sent keep the latency they had. */
void ref_net_set_extra_latency(ref_net *net, uint32_t host, sim_time extra_ns);

/* Multiplies the configured bandwidth of both directions of `host`'s NIC by `factor` in
 * (0, 1] from now on (1 restores it); flows in progress are re-rated at once. */
int ref_net_set_bandwidth_factor(ref_net *net, uint32_t host, double factor, sim_err *err);

/* The path latency (without extra latency) and bottleneck bandwidth from src to dst. */
sim_time ref_net_path_latency(const ref_net *net, uint32_t src, uint32_t dst);
double ref_net_path_bandwidth_bps(const ref_net *net, uint32_t src, uint32_t dst);

/* Installs the drop callback (NULL: none). */
void ref_net_set_drop_fn(ref_net *net, sim_net_drop_fn fn, void *ud);

/* Messages from or to `host` that are sent and neither delivered nor dropped yet. */
uint32_t ref_net_host_inflight(const ref_net *net, uint32_t host);

/* Bytes of messages a host sent (counted when sent) and received (counted when delivered). */
void ref_net_host_bytes(const ref_net *net, uint32_t host, uint64_t *sent, uint64_t *received);

/* The current rate of the flow carrying a message, for tests: the rate in bits/s of the
 * n-th active flow (in no particular order) and its endpoints. Returns false past the end. */
bool ref_net_flow_at(const ref_net *net, size_t n, uint32_t *src, uint32_t *dst, double *rate_bps);

void ref_net_stats_get(const ref_net *net, sim_net_stats *stats);

/* Test only: whether the message last delivered was re-rated in a way a per-instant solver
 * cannot see, each of which re-reads its remaining bytes and so can move its end by a
 * rounding: at some instant its rate changed and changed back, or its rate changed at the
 * very instant its last byte was due (an event ordered before its end at that instant),
 * which reschedules the end from a fraction of a byte and may push it 1 ns later. */
bool ref_net_last_reverted(const ref_net *net);

#endif
