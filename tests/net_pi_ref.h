/* The network model as it was before shared-bottleneck groups (the per-instant solver: one
 * max-min recomputation per instant, every flow of a changed component re-rated one at a
 * time): a frozen copy of net/net_model.c kept as the reference of the differential test
 * test_net_group.c. Same types and semantics as net/net.h, with pi_net_ names. Not part of
 * the simulator. */
#ifndef NET_PI_REF_H
#define NET_PI_REF_H

#include "net/net.h"

typedef struct pi_net pi_net;

pi_net *pi_net_create(const sim_net_config *cfg, sim_engine *eng, sim_err *err);
void pi_net_destroy(pi_net *net);
int pi_net_send(pi_net *net, const sim_net_msg *msg, sim_err *err);
int pi_net_handle(pi_net *net, const sim_event *ev, sim_net_msg *out, sim_err *err);
void pi_net_set_host_down(pi_net *net, uint32_t host, bool down);
bool pi_net_host_down(const pi_net *net, uint32_t host);
void pi_net_set_extra_latency(pi_net *net, uint32_t host, sim_time extra_ns);
int pi_net_set_bandwidth_factor(pi_net *net, uint32_t host, double factor, sim_err *err);
sim_time pi_net_path_latency(const pi_net *net, uint32_t src, uint32_t dst);
double pi_net_path_bandwidth_bps(const pi_net *net, uint32_t src, uint32_t dst);
void pi_net_set_drop_fn(pi_net *net, sim_net_drop_fn fn, void *ud);
uint32_t pi_net_host_inflight(const pi_net *net, uint32_t host);
void pi_net_host_bytes(const pi_net *net, uint32_t host, uint64_t *sent, uint64_t *received);
bool pi_net_flow_at(pi_net *net, size_t n, uint32_t *src, uint32_t *dst, double *rate_bps);
void pi_net_stats_get(const pi_net *net, sim_net_stats *stats);

#endif
