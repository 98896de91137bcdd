#include "net/net_topo.h"

#include <math.h>

static uint32_t half(const sim_net_config *cfg)
{
    return cfg->k / 2;
}

/* What the topology places: the nodes, or the hosts without them. */
static uint32_t ports(const sim_net_config *cfg)
{
    return cfg->node_of != NULL ? cfg->nnodes : cfg->nhosts;
}

uint32_t sim_net_topo_nic(const sim_net_config *cfg, uint32_t h)
{
    return 2 * sim_net_topo_node(cfg, h);
}

/* The nodes: each holds a run of consecutive hosts, numbered from 0 up, its hosts sharing one
 * NIC (equal bandwidth and latency); every fabric link has a bandwidth and a latency. */
static int check_nodes(const sim_net_config *cfg, sim_err *err)
{
    const sim_time max_lat = SIM_NET_MAX_HOP_LATENCY_NS;
    if (cfg->node_of == NULL)
        return SIM_OK;
    if (cfg->fabric_bps == NULL || cfg->fabric_latency_ns == NULL || cfg->nnodes == 0)
        return sim_err_set(err, SIM_EINVAL, NULL,
                           "net: nodes need nnodes, fabric_bps and fabric_latency_ns");
    for (uint32_t h = 0; h < cfg->nhosts; h++) {
        uint32_t n = cfg->node_of[h], prev = h > 0 ? cfg->node_of[h - 1] : 0;
        if (n >= cfg->nnodes || (h == 0 && n != 0) || (h > 0 && n != prev && n != prev + 1))
            return sim_err_set(err, SIM_EINVAL, NULL,
                               "net: node_of[%u] = %u: nodes hold consecutive hosts, 0..%u", h, n,
                               cfg->nnodes - 1);
        if (h > 0 && n == prev &&
            (cfg->bandwidth_bps[h] != cfg->bandwidth_bps[h - 1] ||
             cfg->latency_ns[h] != cfg->latency_ns[h - 1]))
            return sim_err_set(err, SIM_EINVAL, NULL,
                               "net: hosts %u and %u share node %u but not its NIC's bandwidth "
                               "and latency",
                               h - 1, h, n);
        double b = cfg->fabric_bps[h];
        if (!(isfinite(b) && b > 0.0))
            return sim_err_set(err, SIM_EINVAL, NULL,
                               "net: fabric_bps[%u] must be finite and > 0, got %g", h, b);
        if (cfg->fabric_latency_ns[h] < 0 || cfg->fabric_latency_ns[h] > max_lat)
            return sim_err_set(err, SIM_EINVAL, NULL,
                               "net: fabric_latency_ns[%u] must be in [0, %lld], got %lld", h,
                               (long long)max_lat, (long long)cfg->fabric_latency_ns[h]);
    }
    if (cfg->node_of[cfg->nhosts - 1] != cfg->nnodes - 1)
        return sim_err_set(err, SIM_EINVAL, NULL, "net: %u nodes, but the hosts fill %u",
                           cfg->nnodes, cfg->node_of[cfg->nhosts - 1] + 1);
    return SIM_OK;
}

int sim_net_topo_check(const sim_net_config *cfg, sim_err *err)
{
    const sim_time max_lat = SIM_NET_MAX_HOP_LATENCY_NS;
    int rc = check_nodes(cfg, err);
    if (rc != SIM_OK || cfg->topology == SIM_TOPO_STAR)
        return rc;
    if (cfg->topology == SIM_TOPO_RACKS && cfg->rack_size == 0)
        return sim_err_set(err, SIM_EINVAL, NULL, "net: rack_size must be >= 1, got 0");
    if (cfg->topology == SIM_TOPO_FAT_TREE) {
        if (cfg->k < 2 || cfg->k % 2 != 0 || cfg->k > 1024)
            return sim_err_set(err, SIM_EINVAL, NULL,
                               "net: fat_tree k must be even and in [2, 1024], got %u", cfg->k);
        uint64_t hosts = (uint64_t)cfg->k * cfg->k * cfg->k / 4;
        if (ports(cfg) > hosts)
            return sim_err_set(err, SIM_EINVAL, NULL,
                               "net: a fat_tree with k = %u has %llu hosts, fewer than %u", cfg->k,
                               (unsigned long long)hosts, ports(cfg));
        if (!(isfinite(cfg->oversubscription) && cfg->oversubscription >= 1.0))
            return sim_err_set(err, SIM_EINVAL, NULL,
                               "net: oversubscription must be finite and >= 1, got %g",
                               cfg->oversubscription);
    }
    if (!(isfinite(cfg->uplink_bandwidth_bps) && cfg->uplink_bandwidth_bps > 0.0))
        return sim_err_set(err, SIM_EINVAL, NULL,
                           "net: uplink_bandwidth_bps must be finite and > 0, got %g",
                           cfg->uplink_bandwidth_bps);
    if (cfg->uplink_latency_ns < 0 || cfg->uplink_latency_ns > max_lat)
        return sim_err_set(err, SIM_EINVAL, NULL,
                           "net: uplink_latency_ns must be in [0, %lld], got %lld",
                           (long long)max_lat, (long long)cfg->uplink_latency_ns);
    return SIM_OK;
}

/* Links of the NICs and the topology's switches: where the fabric links start. */
static uint32_t switched_links(const sim_net_config *cfg)
{
    uint32_t p = ports(cfg), n = 2 * p;
    if (cfg->topology == SIM_TOPO_RACKS)
        n += 2 * ((p + cfg->rack_size - 1) / cfg->rack_size);
    else if (cfg->topology == SIM_TOPO_FAT_TREE)
        n += 4 * cfg->k * half(cfg) * half(cfg); /* edge-agg and agg-core pairs */
    return n;
}

uint32_t sim_net_topo_nlinks(const sim_net_config *cfg)
{
    return switched_links(cfg) + (cfg->node_of != NULL ? 2 * cfg->nhosts : 0);
}

/* The first host of node n (node_of is sorted). */
static uint32_t first_host(const sim_net_config *cfg, uint32_t n)
{
    uint32_t lo = 0, hi = cfg->nhosts;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (cfg->node_of[mid] < n)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

double sim_net_topo_link_bps(const sim_net_config *cfg, uint32_t l)
{
    uint32_t p = ports(cfg), fabric = switched_links(cfg);
    if (l >= fabric)
        return cfg->fabric_bps[(l - fabric) / 2];
    if (l < 2 * p)
        return cfg->bandwidth_bps[cfg->node_of != NULL ? first_host(cfg, l / 2) : l / 2];
    if (cfg->topology == SIM_TOPO_FAT_TREE && l < 2 * p + 2 * cfg->k * half(cfg) * half(cfg))
        return cfg->uplink_bandwidth_bps / cfg->oversubscription; /* edge-agg */
    return cfg->uplink_bandwidth_bps;
}

/* Fat-tree: writes the switch links of src -> dst (ports, between the NICs) to out; returns
 * their number (0, 2 or 4). */
static uint8_t fat_tree_path(const sim_net_config *cfg, uint32_t src, uint32_t dst, uint32_t *out)
{
    uint32_t h = half(cfg), pod_hosts = h * h;
    uint32_t ps = src / pod_hosts, pd = dst / pod_hosts;
    uint32_t es = (src / h) % h, ed = (dst / h) % h;
    if (ps == pd && es == ed)
        return 0;
    uint32_t sum = src + dst; /* < 2^32: ports <= k^3 / 4 <= 2^28 */
    uint32_t a = sum % h, c = (sum / h) % h;
    uint32_t ea = 2 * ports(cfg), ac = ea + 2 * cfg->k * h * h;
    if (ps == pd) {
        out[0] = ea + 2 * ((ps * h + es) * h + a);
        out[1] = ea + 2 * ((pd * h + ed) * h + a) + 1;
        return 2;
    }
    out[0] = ea + 2 * ((ps * h + es) * h + a);
    out[1] = ac + 2 * ((ps * h + a) * h + c);
    out[2] = ac + 2 * ((pd * h + a) * h + c) + 1;
    out[3] = ea + 2 * ((pd * h + ed) * h + a) + 1;
    return 4;
}

uint8_t sim_net_topo_path(const sim_net_config *cfg, uint32_t src, uint32_t dst,
                          uint32_t out[NET_MAX_HOPS])
{
    if (src == dst)
        return 0;
    uint32_t s = sim_net_topo_node(cfg, src), d = sim_net_topo_node(cfg, dst);
    if (s == d) { /* hosts of one node: through its fabric */
        uint32_t fabric = switched_links(cfg);
        out[0] = fabric + 2 * src;
        out[1] = fabric + 2 * dst + 1;
        return 2;
    }
    uint8_t n = 0;
    out[n++] = 2 * s;
    if (cfg->topology == SIM_TOPO_RACKS && s / cfg->rack_size != d / cfg->rack_size) {
        out[n++] = 2 * ports(cfg) + 2 * (s / cfg->rack_size);
        out[n++] = 2 * ports(cfg) + 2 * (d / cfg->rack_size) + 1;
    } else if (cfg->topology == SIM_TOPO_FAT_TREE) {
        n += fat_tree_path(cfg, s, d, &out[n]);
    }
    out[n++] = 2 * d + 1;
    return n;
}

sim_time sim_net_topo_fabric_latency(const sim_net_config *cfg, uint32_t src, uint32_t dst)
{
    uint32_t s = sim_net_topo_node(cfg, src), d = sim_net_topo_node(cfg, dst);
    if (s == d)
        return 0;
    if (cfg->topology == SIM_TOPO_RACKS)
        return s / cfg->rack_size != d / cfg->rack_size ? 2 * cfg->uplink_latency_ns : 0;
    if (cfg->topology == SIM_TOPO_FAT_TREE) {
        uint32_t out[4];
        return fat_tree_path(cfg, s, d, out) * cfg->uplink_latency_ns;
    }
    return 0;
}
