#include "sim/net_topo.h"

#include <math.h>

static uint32_t half(const sim_net_config *cfg)
{
    return cfg->k / 2;
}

int sim_net_topo_check(const sim_net_config *cfg, sim_err *err)
{
    const sim_time max_lat = SIM_TIME_NEVER / 16;
    if (cfg->topology == SIM_TOPO_STAR)
        return SIM_OK;
    if (cfg->topology == SIM_TOPO_RACKS && cfg->rack_size == 0)
        return sim_err_set(err, SIM_EINVAL, NULL, "net: rack_size must be >= 1, got 0");
    if (cfg->topology == SIM_TOPO_FAT_TREE) {
        if (cfg->k < 2 || cfg->k % 2 != 0 || cfg->k > 1024)
            return sim_err_set(err, SIM_EINVAL, NULL,
                               "net: fat_tree k must be even and in [2, 1024], got %u", cfg->k);
        uint64_t hosts = (uint64_t)cfg->k * cfg->k * cfg->k / 4;
        if (cfg->nhosts > hosts)
            return sim_err_set(err, SIM_EINVAL, NULL,
                               "net: a fat_tree with k = %u has %llu hosts, fewer than %u", cfg->k,
                               (unsigned long long)hosts, cfg->nhosts);
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

uint32_t sim_net_topo_nlinks(const sim_net_config *cfg)
{
    uint32_t n = 2 * cfg->nhosts;
    if (cfg->topology == SIM_TOPO_RACKS)
        n += 2 * ((cfg->nhosts + cfg->rack_size - 1) / cfg->rack_size);
    else if (cfg->topology == SIM_TOPO_FAT_TREE)
        n += 4 * cfg->k * half(cfg) * half(cfg); /* edge-agg and agg-core pairs */
    return n;
}

double sim_net_topo_link_bps(const sim_net_config *cfg, uint32_t l)
{
    if (l < 2 * cfg->nhosts)
        return cfg->bandwidth_bps[l / 2];
    if (cfg->topology == SIM_TOPO_FAT_TREE &&
        l < 2 * cfg->nhosts + 2 * cfg->k * half(cfg) * half(cfg))
        return cfg->uplink_bandwidth_bps / cfg->oversubscription; /* edge-agg */
    return cfg->uplink_bandwidth_bps;
}

/* Fat-tree: writes the switch links of src -> dst (between the NICs) to out; returns their
 * number (0, 2 or 4). */
static uint8_t fat_tree_path(const sim_net_config *cfg, uint32_t src, uint32_t dst, uint32_t *out)
{
    uint32_t h = half(cfg), pod_hosts = h * h;
    uint32_t ps = src / pod_hosts, pd = dst / pod_hosts;
    uint32_t es = (src / h) % h, ed = (dst / h) % h;
    if (ps == pd && es == ed)
        return 0;
    uint32_t sum = src + dst; /* < 2^32: nhosts <= k^3 / 4 <= 2^28 */
    uint32_t a = sum % h, c = (sum / h) % h;
    uint32_t ea = 2 * cfg->nhosts, ac = ea + 2 * cfg->k * h * h;
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
    uint8_t n = 0;
    out[n++] = 2 * src;
    if (cfg->topology == SIM_TOPO_RACKS && src / cfg->rack_size != dst / cfg->rack_size) {
        out[n++] = 2 * cfg->nhosts + 2 * (src / cfg->rack_size);
        out[n++] = 2 * cfg->nhosts + 2 * (dst / cfg->rack_size) + 1;
    } else if (cfg->topology == SIM_TOPO_FAT_TREE) {
        n += fat_tree_path(cfg, src, dst, &out[n]);
    }
    out[n++] = 2 * dst + 1;
    return n;
}

sim_time sim_net_topo_fabric_latency(const sim_net_config *cfg, uint32_t src, uint32_t dst)
{
    if (src == dst)
        return 0;
    if (cfg->topology == SIM_TOPO_RACKS)
        return src / cfg->rack_size != dst / cfg->rack_size ? 2 * cfg->uplink_latency_ns : 0;
    if (cfg->topology == SIM_TOPO_FAT_TREE) {
        uint32_t out[4];
        return fat_tree_path(cfg, src, dst, out) * cfg->uplink_latency_ns;
    }
    return 0;
}
