/* The network's topologies: which links a path crosses, the fabric latency it adds, and each
 * link's configured capacity. Internal to the network (net/net_model.c); plain functions of the
 * configuration, no state of their own.
 *
 * Links: host h has its NIC's up link 2h and down link 2h + 1. `racks`: rack r's uplink-up is
 * 2 * nhosts + 2r and its uplink-down 2 * nhosts + 2r + 1. `fat_tree` (k-ary, k even, h = k/2):
 * k pods of h edge and h aggregation switches, h * h core switches, host x in pod
 * x / (h * h) under edge switch (x / h) mod h of its pod. After the host links come, for each
 * pod p, edge e and aggregation switch a, the pair (edge->agg, agg->edge) at
 * 2 * nhosts + 2 * ((p * h + e) * h + a), then, for each pod p, aggregation switch a and core
 * switch c of core group a, the pair (agg->core, core->agg) at
 * 2 * nhosts + 2 * k * h * h + 2 * ((p * h + a) * h + c). A path between two hosts under one
 * edge switch crosses their NICs only; within a pod it climbs to aggregation switch
 * a = (src + dst) mod h; between pods it climbs to a, then to core switch
 * c = ((src + dst) / h) mod h of group a, and comes down through the destination pod's
 * switch a: a deterministic ECMP-style choice from the endpoints, which spreads an
 * all-to-all evenly over the aggregation and core switches.
 *
 * Nodes (config.node_of set): the NICs, racks and fat-tree ports above are the nodes', node n
 * taking the place of host n (its NIC's up link 2n, down link 2n + 1, and so on), and after
 * every link above come the hosts' links to their node's fabric: host h's up link at
 * F + 2h and down link at F + 2h + 1, F being the number of links above. A path between hosts
 * of one node crosses those two links only; one between nodes, its nodes' NICs and the
 * switches between them. Without node_of every host is its own node and nothing changes. */
#ifndef NET_NET_TOPO_H
#define NET_NET_TOPO_H

#include <stdint.h>

#include "net/net.h"
#include "sim/engine.h"
#include "sim/err.h"

enum {
    NET_MAX_HOPS = 6 /* links on the longest path (fat_tree, between pods) */
};

/* Validates the topology fields of `cfg` (SIM_EINVAL naming the bad field), the nodes
 * included. */
int sim_net_topo_check(const sim_net_config *cfg, sim_err *err);

/* The node of host h (h itself without nodes). */
static inline uint32_t sim_net_topo_node(const sim_net_config *cfg, uint32_t h)
{
    return cfg->node_of != NULL ? cfg->node_of[h] : h;
}

/* The up link of host h's NIC (its node's; the down link is the next one). */
uint32_t sim_net_topo_nic(const sim_net_config *cfg, uint32_t h);

/* The number of links of the topology. */
uint32_t sim_net_topo_nlinks(const sim_net_config *cfg);

/* The configured capacity of link l in bits/s. */
double sim_net_topo_link_bps(const sim_net_config *cfg, uint32_t l);

/* Writes the links of the path src -> dst to out and returns their number (0 if src == dst).
 * No link comes twice: a path climbs on up links and descends on down links (the groups of
 * net/net_group.c count hops on that). */
uint8_t sim_net_topo_path(const sim_net_config *cfg, uint32_t src, uint32_t dst,
                          uint32_t out[NET_MAX_HOPS]);

/* The latency a path adds beyond its two NICs (racks: both uplinks between racks; fat_tree:
 * one uplink latency per switch-to-switch link crossed); 0 between hosts of one node. */
sim_time sim_net_topo_fabric_latency(const sim_net_config *cfg, uint32_t src, uint32_t dst);

#endif
