/* The network's queries, and its settings that touch no flow (net/net.h): hosts, paths, bytes and
 * counters. Calls nothing of net/net_model.c, the solver or the groups; the solos' count of starts
 * not yet taken out (net/net_solo.h) only. */
#include <assert.h>
#include <math.h>

#include "net/net.h"
#include "net/net_solo.h"
#include "net/net_state.h"

uint64_t sim_net_links_bytes(const sim_net_config *cfg)
{
    const sim_net *net = NULL; /* for the sizes of its arrays' items */
    uint64_t link = sizeof(*net->links) + sizeof(*net->comp) + sizeof(*net->dirty) +
                    sizeof(uint32_t); /* the link, component and dirty lists, fill heap */
    return (uint64_t)sim_net_topo_nlinks(cfg) * link;
}

bool sim_net_host_down(const sim_net *net, uint32_t host)
{
    assert(net != NULL);
    return !net_bad_host(net, host) && net->hosts[host].down;
}

void sim_net_set_extra_latency(sim_net *net, uint32_t host, sim_time extra_ns)
{
    assert(net != NULL && !net_bad_host(net, host) && extra_ns >= 0);
    if (net_bad_host(net, host))
        return;
    net->hosts[host].extra_ns = extra_ns > 0 ? extra_ns : 0;
}

double sim_net_path_bandwidth_bps(const sim_net *net, uint32_t src, uint32_t dst)
{
    assert(net != NULL);
    if (net_bad_host(net, src) || net_bad_host(net, dst))
        return 0.0;
    if (src == dst)
        return INFINITY;
    uint32_t links[MAX_HOPS];
    uint8_t n = sim_net_topo_path(&net->topo, src, dst, links);
    double b = INFINITY;
    for (uint8_t k = 0; k < n; k++)
        b = fmin(b, net->links[links[k]].cap_bps);
    return b;
}

void sim_net_host_bytes(const sim_net *net, uint32_t host, uint64_t *sent, uint64_t *received)
{
    assert(net != NULL);
    bool bad = net_bad_host(net, host);
    if (sent != NULL)
        *sent = bad ? 0 : net->hosts[host].sent_bytes;
    if (received != NULL)
        *received = bad ? 0 : net->hosts[host].received_bytes;
}

void sim_net_host_wraps(const sim_net *net, uint32_t host, uint64_t *sent, uint64_t *received)
{
    assert(net != NULL);
    bool bad = net_bad_host(net, host);
    if (sent != NULL)
        *sent = bad ? 0 : net->hosts[host].sent_wraps;
    if (received != NULL)
        *received = bad ? 0 : net->hosts[host].received_wraps;
}

void sim_net_set_drop_fn(sim_net *net, sim_net_drop_fn fn, void *ud)
{
    net->on_drop = fn;
    net->drop_ud = ud;
}

uint32_t sim_net_host_inflight(const sim_net *net, uint32_t host)
{
    assert(net != NULL);
    return net_bad_host(net, host) ? 0 : net->hosts[host].inflight;
}

void sim_net_stats_get(const sim_net *net, sim_net_stats *stats)
{
    sim_net_stats_until(net, sim_engine_now(net->eng), stats);
}

void sim_net_stats_until(const sim_net *net, sim_time end, sim_net_stats *stats)
{
    assert(net != NULL && stats != NULL);
    sim_time now = sim_engine_now(net->eng);
    /* Past the current instant every start by `end` counts: the engine ran every event up to
     * it (its sequence is past all of theirs). */
    uint64_t seq = end > now ? UINT64_MAX : sim_engine_current_seq(net->eng);
    *stats = net->stats;
    /* With the solos that have started but that no network call has counted yet. */
    stats->active_flows =
        net_active_flows(net) + sim_net_solo_uncounted(net, end > now ? end : now, seq);
    if (stats->active_flows > stats->peak_flows)
        stats->peak_flows = stats->active_flows;
}
