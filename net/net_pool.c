/* The network's lifecycle and its message pool: creation, destruction and the pool's growth
 * (net/net_pool.h). */
#include "net/net_pool.h"

#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "net/net.h"
#include "net/net_group.h"
#include "net/net_solo.h"
#include "net/net_solver.h"
#include "net/net_state.h"

static int check_config(const sim_net_config *cfg, sim_err *err)
{
    if (cfg->topology != SIM_TOPO_STAR && cfg->topology != SIM_TOPO_RACKS &&
        cfg->topology != SIM_TOPO_FAT_TREE)
        return sim_err_set(err, SIM_EINVAL, NULL,
                           "net: topology must be star, racks or fat_tree, got %d",
                           (int)cfg->topology);
    if (cfg->nhosts == 0 || cfg->nhosts > (UINT32_MAX - 8) / 4)
        return sim_err_set(err, SIM_EINVAL, NULL, "net: nhosts must be in [1, %u], got %u",
                           (UINT32_MAX - 8) / 4, cfg->nhosts);
    if (cfg->bandwidth_bps == NULL || cfg->latency_ns == NULL)
        return sim_err_set(err, SIM_EINVAL, NULL, "net: bandwidth_bps and latency_ns are required");
    /* Latencies are capped so that the sum along any path cannot overflow. */
    const sim_time max_lat = SIM_TIME_NEVER / 8;
    for (uint32_t h = 0; h < cfg->nhosts; h++) {
        double b = cfg->bandwidth_bps[h];
        if (!(isfinite(b) && b > 0.0))
            return sim_err_set(err, SIM_EINVAL, NULL,
                               "net: bandwidth_bps[%u] must be finite and > 0, got %g", h, b);
        if (cfg->latency_ns[h] < 0 || cfg->latency_ns[h] > max_lat)
            return sim_err_set(err, SIM_EINVAL, NULL,
                               "net: latency_ns[%u] must be in [0, %lld], got %lld", h,
                               (long long)max_lat, (long long)cfg->latency_ns[h]);
    }
    return sim_net_topo_check(cfg, err);
}

/* Threads slots [from, to) onto the free list, lowest index first. */
static void free_range(sim_net *net, size_t from, size_t to)
{
    for (size_t i = to; i-- > from;) {
        net->slots[i].state = SLOT_FREE;
        net->slots[i].next_free = net->free_head;
        net->free_head = (int32_t)i;
    }
}

static void init_links(sim_net *net, const sim_net_config *cfg)
{
    for (uint32_t l = 0; l < net->nlinks; l++) {
        net_link *k = &net->links[l];
        k->base_bps = sim_net_topo_link_bps(cfg, l);
        k->cap_bps = k->base_bps;
        k->head = NO_HOP;
        k->heap_pos = -1;
        k->solo = NO_SLOT;
        sim_net_group_init(net, l);
    }
    for (uint32_t h = 0; h < cfg->nhosts; h++) {
        net->hosts[h].latency_ns = cfg->latency_ns[h];
        net->hosts[h].bw_factor = 1.0;
        net->hosts[h].msgs = NO_HOP;
        if (cfg->node_of != NULL)
            net->hosts[h].fabric_latency_ns = cfg->fabric_latency_ns[h];
    }
}

sim_net *sim_net_create(const sim_net_config *cfg, sim_engine *eng, sim_err *err)
{
    assert(cfg != NULL && eng != NULL);
    if (check_config(cfg, err) != SIM_OK)
        return NULL;
    sim_net *net = calloc(1, sizeof(*net));
    if (net == NULL)
        goto fail;
    net->eng = eng;
    net->bundles = cfg->bundles;
    net->btail = NO_SLOT;
    net->delivering = NO_SLOT;
    net->topology = cfg->topology;
    net->nhosts = cfg->nhosts;
    net->topo = *cfg;
    net->topo.bandwidth_bps = NULL;
    net->topo.latency_ns = NULL;
    net->topo.fabric_bps = NULL;
    net->topo.fabric_latency_ns = NULL;
    net->topo.node_of = NULL;
    if (cfg->node_of != NULL) {
        net->node_of = calloc(cfg->nhosts, sizeof(*net->node_of));
        if (net->node_of == NULL)
            goto fail_free_net;
        memcpy(net->node_of, cfg->node_of, cfg->nhosts * sizeof(*net->node_of));
        net->topo.node_of = net->node_of;
    }
    net->nlinks = sim_net_topo_nlinks(cfg);
    net->cap = INITIAL_SLOTS > 2 * (size_t)cfg->nhosts ? INITIAL_SLOTS : 2 * (size_t)cfg->nhosts;
    net->hosts = calloc(cfg->nhosts, sizeof(*net->hosts));
    net->links = calloc(net->nlinks, sizeof(*net->links));
    net->comp = calloc(net->nlinks, sizeof(*net->comp));
    net->dirty = calloc(net->nlinks, sizeof(*net->dirty));
    net->slots = calloc(net->cap, sizeof(*net->slots));
    net->active = calloc(net->cap, sizeof(*net->active));
    net->hslots = calloc(net->cap, sizeof(*net->hslots));
    if (net->hosts == NULL || net->links == NULL || net->comp == NULL ||
        sim_net_solver_init(net) != SIM_OK || net->dirty == NULL || net->slots == NULL ||
        net->active == NULL || net->hslots == NULL || sim_net_group_grow(net, net->cap) != SIM_OK ||
        sim_net_solo_grow(net, net->cap) != SIM_OK)
        goto fail_free_net;
    init_links(net, cfg);
    net->free_head = NO_SLOT;
    free_range(net, 0, net->cap);
    sim_engine_set_flush(eng, sim_net_flush_hook, net);
    return net;

fail_free_net:
    sim_net_destroy(net);
fail:
    sim_err_set(err, SIM_ENOMEM, NULL, "net: out of memory for %u hosts", cfg->nhosts);
    return NULL;
}

void sim_net_destroy(sim_net *net)
{
    if (net == NULL)
        return;
    sim_engine_set_flush(net->eng, NULL, NULL);
    if (net->links != NULL)
        for (uint32_t l = 0; l < net->nlinks; l++)
            sim_heap_fini(&net->links[l].members);
    sim_heap_fini(&net->wait_heap);
    free(net->wait_fifo);
    sim_heap_fini(&net->gkeys);
    free(net->gqueue);
    free(net->hslots);
    free(net->active);
    free(net->slots);
    free(net->dirty);
    sim_heap_fini(&net->fill);
    free(net->comp);
    free(net->links);
    free(net->hosts);
    free(net->node_of);
    free(net);
}

int sim_net_pool_grow(sim_net *net, sim_err *err)
{
    size_t cap = net->cap * 2;
    if (cap > (size_t)INT32_MAX / MAX_HOPS)
        return sim_err_set(err, SIM_ENOMEM, NULL, "net: message pool full at %zu", net->cap);
    net_slot *slots = realloc(net->slots, cap * sizeof(*slots));
    if (slots == NULL)
        return sim_err_set(err, SIM_ENOMEM, NULL, "net: cannot grow message pool to %zu", cap);
    net->slots = slots;
    uint32_t *active = realloc(net->active, cap * sizeof(*active));
    if (active == NULL)
        return sim_err_set(err, SIM_ENOMEM, NULL, "net: cannot grow message pool to %zu", cap);
    net->active = active;
    uint32_t *hslots = realloc(net->hslots, cap * sizeof(*hslots));
    if (hslots == NULL)
        return sim_err_set(err, SIM_ENOMEM, NULL, "net: cannot grow message pool to %zu", cap);
    net->hslots = hslots;
    if (sim_net_group_grow(net, cap) != SIM_OK || sim_net_solo_grow(net, cap) != SIM_OK)
        return sim_err_set(err, SIM_ENOMEM, NULL, "net: cannot grow message pool to %zu", cap);
    memset(&net->slots[net->cap], 0, (cap - net->cap) * sizeof(*slots));
    free_range(net, net->cap, cap);
    net->cap = cap;
    net->grows++;
    return SIM_OK;
}

static int cmp_slot(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

size_t sim_net_host_slots(sim_net *net, uint32_t h)
{
    size_t n = 0;
    for (int32_t id = net->hosts[h].msgs; id != NO_HOP;) {
        uint32_t s = (uint32_t)id / 2;
        net->hslots[n++] = s;
        id = net->slots[s].host_next[(uint32_t)id % 2];
    }
    qsort(net->hslots, n, sizeof(*net->hslots), cmp_slot);
    return n;
}
