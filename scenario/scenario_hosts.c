/* The network's hosts and fabrics (scenario/scenario_read.h): network.fabric, gpus_per_host,
 * nics_per_host, host_fabric and its bandwidth and latency. Every key here is read only when
 * present (or, for the host fabric, when a host holds several GPUs), so that scenarios
 * without them resolve exactly as before.
 *
 * With gpus_per_host G > 1 worker w sits on host w / G with its G - 1 neighbours in id order,
 * each server on a host of its own; the hosts are the network's nodes (net/net.h): they share
 * their NIC, and the topology places hosts, not workers. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "net/fabric.h"
#include "scenario/scenario_read.h"

#define MAX_GBPS            1e9 /* as network.bandwidth_gbps */
#define MAX_NICS            64
#define DEFAULT_HOST_FABRIC "pcie3"

/* Reads `key` of `c` as a fabric of the catalogue of the given kind into *out; the error lists
 * the valid names. */
static int read_fabric_name(sim_cfg *c, const char *key, bool host, const sim_fabric **out,
                            sim_err *err)
{
    char name[32] = "", valid[512];
    int rc = sim_cfg_string(c, key, name, sizeof(name), err);
    if (rc != 0)
        return rc;
    const sim_fabric *f = sim_fabric_find(name);
    if (f != NULL && f->host == host) {
        *out = f;
        return 0;
    }
    sim_fabric_list(host, valid, sizeof(valid));
    return sim_cfg_fail(c, key, err, "must be one of %s, got \"%s\"", valid, name);
}

int sim_scenario_read_fabric(sim_cfg *c, double *gbps, double *latency_us, sim_err *err)
{
    const sim_fabric *f = NULL;
    if (!sim_cfg_has(c, "fabric"))
        return 0;
    int rc = read_fabric_name(c, "fabric", false, &f, err);
    if (rc != 0)
        return rc;
    *gbps = f->bandwidth_gbps;
    *latency_us = f->latency_us;
    return 0;
}

int sim_scenario_read_gpus(sim_scenario *sc, sim_cfg *c, uint32_t *ports, sim_err *err)
{
    int64_t g = 1;
    *ports = sc->workers + sc->servers;
    sc->gpus_per_host = 1;
    if (!sim_cfg_has(c, "gpus_per_host"))
        return 0;
    int rc = sim_cfg_int(c, "gpus_per_host", 1, sc->workers, &g, err);
    if (rc != 0)
        return rc;
    if (sc->workers % (uint32_t)g != 0)
        return sim_cfg_fail(c, "gpus_per_host", err,
                            "must divide workers (%u) into whole hosts, got %lld", sc->workers,
                            (long long)g);
    sc->gpus_per_host = (uint32_t)g;
    *ports = sc->workers / sc->gpus_per_host + sc->servers;
    return 0;
}

/* An override naming some workers of a host but not all of them would give the host's shared
 * NIC two values: refused, naming two workers that differ. */
static int check_shared_nics(const sim_scenario *sc, sim_err *err)
{
    for (uint32_t w = 1; w < sc->workers; w++) {
        if (w % sc->gpus_per_host == 0)
            continue;
        if (sc->bandwidth_bps[w] != sc->bandwidth_bps[w - 1] ||
            sc->latency_ns[w] != sc->latency_ns[w - 1])
            return sim_err_set(err, SIM_ESCENARIO, "$.network.overrides",
                               "workers %u and %u share a host (gpus_per_host %u) and its NIC, "
                               "but get different bandwidths or latencies: an override names "
                               "every worker of a host or none of them",
                               w - 1, w, sc->gpus_per_host);
    }
    return 0;
}

/* host_fabric and its bandwidth and latency; with G > 1 the nodes: every worker's link to its
 * host's fabric (servers are alone on their hosts: their fabric links carry nothing). */
static int read_host_fabric(sim_scenario *sc, sim_cfg *c, sim_err *err)
{
    const sim_fabric *f = sim_fabric_find(DEFAULT_HOST_FABRIC);
    char key[16] = DEFAULT_HOST_FABRIC;
    int rc = sim_cfg_has(c, "host_fabric")
                 ? read_fabric_name(c, "host_fabric", true, &f, err)
                 : sim_cfg_string(c, "host_fabric", key, sizeof(key), err);
    double gbps = f->bandwidth_gbps, latency_us = f->latency_us;
    sim_time latency_ns = 0;
    if (rc != 0 ||
        (rc = sim_scenario_read_num(c, "host_fabric_bandwidth_gbps", 0.0, true, MAX_GBPS, &gbps,
                                    err)) != 0 ||
        (rc = sim_scenario_read_time(c, "host_fabric_latency_us", 0.0, false, 1e3, &latency_us,
                                     &latency_ns, err)) != 0 ||
        (rc = sim_scenario_check_hop_latency(c, "host_fabric_latency_us", latency_us, latency_ns,
                                             err)) != 0)
        return rc;
    if (sc->gpus_per_host <= 1)
        return 0;
    uint32_t nhosts = sc->workers + sc->servers;
    sc->node_of = calloc(nhosts, sizeof(*sc->node_of));
    sc->fabric_bps = calloc(nhosts, sizeof(*sc->fabric_bps));
    sc->fabric_latency_ns = calloc(nhosts, sizeof(*sc->fabric_latency_ns));
    if (sc->node_of == NULL || sc->fabric_bps == NULL || sc->fabric_latency_ns == NULL)
        return sim_err_set(err, SIM_ENOMEM, NULL, "out of memory");
    uint32_t hosts = sc->workers / sc->gpus_per_host;
    for (uint32_t h = 0; h < nhosts; h++) {
        sc->node_of[h] = h < sc->workers ? h / sc->gpus_per_host : hosts + (h - sc->workers);
        sc->fabric_bps[h] = gbps * 1e9;
        sc->fabric_latency_ns[h] = latency_ns;
    }
    sc->net.nnodes = hosts + sc->servers;
    sc->net.node_of = sc->node_of;
    sc->net.fabric_bps = sc->fabric_bps;
    sc->net.fabric_latency_ns = sc->fabric_latency_ns;
    return 0;
}

int sim_scenario_read_hosts(sim_scenario *sc, sim_cfg *c, sim_err *err)
{
    /* Read only when present, and listed among the valid keys of a misspelt one all the same
     * (the list was topology, bandwidth_gbps, latency_us, overrides) */
    static const char *const optional[] = { "fabric",
                                            "nics_per_host",
                                            "gpus_per_host",
                                            "host_fabric",
                                            "host_fabric_bandwidth_gbps",
                                            "host_fabric_latency_us" };
    int64_t nics = 1;
    int rc = 0;
    for (size_t i = 0; i < sizeof(optional) / sizeof(optional[0]) && rc == 0; i++)
        rc = sim_cfg_allow(c, optional[i], err);
    if (rc != 0)
        return rc;
    if (sim_cfg_has(c, "nics_per_host") &&
        (rc = sim_cfg_int(c, "nics_per_host", 1, MAX_NICS, &nics, err)) != 0)
        return rc;
    for (uint32_t h = 0; h < sc->workers + sc->servers; h++)
        sc->bandwidth_bps[h] *= (double)nics;
    if (sc->gpus_per_host > 1 && (rc = check_shared_nics(sc, err)) != 0)
        return rc;
    /* With one GPU a host the fabric keys are checked but unused (a sweep over gpus_per_host
     * keeps them): nothing is written without them. */
    bool given = sim_cfg_has(c, "host_fabric") || sim_cfg_has(c, "host_fabric_bandwidth_gbps") ||
                 sim_cfg_has(c, "host_fabric_latency_us");
    return sc->gpus_per_host > 1 || given ? read_host_fabric(sc, c, err) : 0;
}
