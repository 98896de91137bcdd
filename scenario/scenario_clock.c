/* The clock's limits (see sim_scenario_check_clock in scenario.h).
 *
 * The simulated clock is an int64_t count of nanoseconds. Every single value a scenario gives
 * is already at most SIM_SCENARIO_MAX_NS (1e18 ns, about 31.7 years), but products of values
 * are not: an iteration lasts base / speed * slowdowns, a transfer bits / bandwidth. Here the
 * worst case of each product is bounded by the same 1e18 ns, so that a run never meets a
 * duration the clock cannot hold (the engine and the network would stop it with a message
 * naming neither file nor key) or one it must clamp (an iteration that never ends).
 *
 * The worst case is taken over everything that may coincide, whether or not it does:
 *   - an iteration of worker w: base / speed_w times every fixed, random and window
 *     slowdown that selects w and the largest slowdown of each trace for w (the jitter is
 *     left out: a draw has mean 1, and the cluster clamps the rare absurd one);
 *   - a transfer: the largest message through the slowest link, shared with every host
 *     (workers and servers), the link's bandwidth reduced by every link rule selecting it.
 * Path latencies: each NIC's is at most 1e18 ns, and so must be the extra latencies of the
 * link rules selecting a worker, which add up (ten rules of 1e12 ms, each in range, failed
 * the run with "net: cannot schedule a message"); a path sums a few of them.
 * An iteration's base over the worker's speed must also last at least the clock's 1 ns (as
 * iteration_ms must): below it the cluster would take 1 ns, so that speeds of 1e7 and 1e12
 * ran the same; slowdowns only lengthen it, and a short jitter draw is clamped.
 * The error names the value that takes the product over the limit, in file order.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "scenario/scenario.h"
#include "sim/cfg.h"
#include "sim/err.h"

/* The loader's bound on any single time (SIM_SCENARIO_MAX_NS of its internal header), which
 * leaves room for sums of a few within int64_t. */
#define MAX_NS  1e18
#define LIMIT_S (MAX_NS * 1e-9)

static int too_long_iteration(char *path, uint32_t w, double ns, sim_err *err)
{
    return sim_err_set(err, SIM_ESCENARIO, path,
                       "makes worker %u's iteration take up to %.3g s, more than the clock's "
                       "limit of %.0e s",
                       w, ns * 1e-9, LIMIT_S);
}

static int too_short_iteration(const char *path, uint32_t w, double ns, sim_err *err)
{
    return sim_err_set(err, SIM_ESCENARIO, path,
                       "makes worker %u's iteration take %.3g ns, less than the clock's "
                       "resolution of 1 ns: lower the speed or lengthen the base time",
                       w, ns);
}

/* Multiplies t[w] by each straggler's slowdown for w, in file order. */
static int apply_slowdowns(const sim_scenario *sc, double *t, double *m, sim_err *err)
{
    char path[96];
    for (size_t k = 0; k < sc->nstragglers; k++) {
        const sim_straggler *s = &sc->stragglers[k];
        if (s->kind == SIM_STRAG_FIXED || s->kind == SIM_STRAG_RANDOM ||
            s->kind == SIM_STRAG_WINDOW) {
            snprintf(path, sizeof(path), "$.stragglers[%zu].slowdown", k);
            for (size_t i = 0; i < s->nworkers; i++) {
                uint32_t w = s->workers[i];
                t[w] *= s->slowdown;
                if (!(t[w] <= MAX_NS))
                    return too_long_iteration(path, w, t[w], err);
            }
        } else if (s->kind == SIM_STRAG_TRACE) {
            snprintf(path, sizeof(path), "$.stragglers[%zu].file", k);
            for (size_t i = 0; i < s->ntrace; i++) {
                uint32_t w = s->trace[i].worker;
                m[w] = fmax(m[w], s->trace[i].slowdown);
            }
            for (size_t i = 0; i < s->ntrace; i++) {
                uint32_t w = s->trace[i].worker;
                t[w] *= m[w];
                m[w] = 1.0; /* once per worker */
                if (!(t[w] <= MAX_NS))
                    return too_long_iteration(path, w, t[w], err);
            }
        }
    }
    return 0;
}

static int check_compute(sim_scenario *sc, double base_ns, const char *base_path, sim_err *err)
{
    char path[96];
    if (!(base_ns <= MAX_NS))
        return sim_err_set(err, SIM_ESCENARIO, base_path,
                           "makes an iteration take %.3g s, more than the clock's limit of %.0e s",
                           base_ns * 1e-9, LIMIT_S);
    size_t nspeeds = 0;
    sim_cfg *compute = NULL;
    int rc = sim_cfg_child(sc->root, "compute", &compute, err);
    if (rc == 0 && compute != NULL)
        rc = sim_cfg_array_len(compute, "speeds", &nspeeds, err);
    double *t = calloc(2 * (size_t)sc->workers, sizeof(*t));
    if (rc != 0 || t == NULL) {
        free(t);
        return rc != 0 ? rc : sim_err_set(err, SIM_ENOMEM, NULL, "out of memory");
    }
    double *m = t + sc->workers; /* a trace's largest slowdown per worker */
    for (uint32_t w = 0; w < sc->workers && rc == 0; w++) {
        t[w] = base_ns / sc->speeds[w];
        m[w] = 1.0;
        if (t[w] <= MAX_NS && t[w] >= 1.0)
            continue;
        /* The path only for an error: a snprintf per worker was most of a million workers'
         * check (4.3 s of a fuzz input under the sanitizers). */
        snprintf(path, sizeof(path), "$.compute.speeds[%u]", nspeeds == sc->workers ? w : 0);
        if (!(t[w] <= MAX_NS))
            rc = too_long_iteration(path, w, t[w], err);
        else
            rc = too_short_iteration(base_ns < 1.0 ? base_path : path, w, t[w], err);
    }
    if (rc == 0)
        rc = apply_slowdowns(sc, t, m, err);
    free(t);
    return rc;
}

/* A transfer of `bits` at `bps` shared by `hosts` flows must end within the limit. */
static int check_link(const char *path, double bits, uint32_t hosts, double bps, double bytes,
                      sim_err *err)
{
    double ns = bits * hosts / bps * 1e9;
    if (ns <= MAX_NS)
        return 0;
    return sim_err_set(err, SIM_ESCENARIO, path,
                       "a %.0f-byte message on a link shared by %u hosts would take %.3g s at %.3g "
                       "bits/s, more than the clock's limit of %.0e s",
                       bytes, hosts, ns * 1e-9, bps, LIMIT_S);
}

/* Reads back a bandwidth of `c` (NaN when absent) and checks it. */
static int check_gbps(sim_cfg *c, const char *key, double bits, uint32_t hosts, double bytes,
                      sim_err *err)
{
    char path[160];
    double gbps = NAN;
    int rc = sim_cfg_double(c, key, -INFINITY, INFINITY, &gbps, err);
    if (rc != 0 || isnan(gbps))
        return rc;
    snprintf(path, sizeof(path), "%s.%s", sim_cfg_path(c), key);
    return check_link(path, bits, hosts, gbps * 1e9, bytes, err);
}

static int check_network(sim_scenario *sc, uint64_t message_bytes, sim_err *err)
{
    char path[96];
    uint32_t hosts = sc->workers + sc->servers;
    double bytes = (double)message_bytes, bits = 8.0 * bytes;
    sim_cfg *net = NULL;
    size_t n = 0;
    int rc = sim_cfg_child(sc->root, "network", &net, err);
    if (rc != 0 || net == NULL)
        return rc;
    if ((rc = check_gbps(net, "bandwidth_gbps", bits, hosts, bytes, err)) != 0 ||
        (rc = check_gbps(net, "uplink_bandwidth_gbps", bits, hosts, bytes, err)) != 0 ||
        (rc = check_gbps(net, "host_fabric_bandwidth_gbps", bits, hosts, bytes, err)) != 0 ||
        (rc = sim_cfg_array_len(net, "overrides", &n, err)) != 0)
        return rc;
    /* A fat-tree's edge-to-aggregation links carry the switch bandwidth / oversubscription. */
    if (sc->net.topology == SIM_TOPO_FAT_TREE && sc->net.oversubscription > 1.0 &&
        (rc = check_link("$.network.oversubscription", bits, hosts,
                         sc->net.uplink_bandwidth_bps / sc->net.oversubscription, bytes, err)) != 0)
        return rc;
    for (size_t i = 0; i < n && rc == 0; i++) {
        sim_cfg *o = NULL;
        if ((rc = sim_cfg_at(net, "overrides", i, &o, err)) == 0)
            rc = check_gbps(o, "bandwidth_gbps", bits, hosts, bytes, err);
    }
    double *bps = rc == 0 ? calloc(sc->workers, sizeof(*bps)) : NULL;
    if (rc != 0 || bps == NULL)
        return rc != 0 ? rc : sim_err_set(err, SIM_ENOMEM, NULL, "out of memory");
    for (uint32_t w = 0; w < sc->workers; w++)
        bps[w] = sc->bandwidth_bps[w];
    for (size_t k = 0; k < sc->nstragglers && rc == 0; k++) {
        const sim_straggler *s = &sc->stragglers[k];
        if (s->kind != SIM_STRAG_LINK || s->bandwidth_factor == 1.0)
            continue;
        snprintf(path, sizeof(path), "$.stragglers[%zu].bandwidth_factor", k);
        for (size_t i = 0; i < s->nworkers && rc == 0; i++) {
            uint32_t w = s->workers[i];
            bps[w] *= s->bandwidth_factor;
            rc = check_link(path, bits, hosts, bps[w], bytes, err);
        }
    }
    free(bps);
    return rc;
}

/* Adds up each worker's extra latencies of link rules, in file order. */
static int check_latency(const sim_scenario *sc, sim_err *err)
{
    double *lat = calloc(sc->workers, sizeof(*lat));
    if (lat == NULL)
        return sim_err_set(err, SIM_ENOMEM, NULL, "out of memory");
    int rc = 0;
    for (size_t k = 0; k < sc->nstragglers && rc == 0; k++) {
        const sim_straggler *s = &sc->stragglers[k];
        if (s->kind != SIM_STRAG_LINK || s->extra_latency_ns == 0)
            continue;
        for (size_t i = 0; i < s->nworkers && rc == 0; i++) {
            uint32_t w = s->workers[i];
            lat[w] += (double)s->extra_latency_ns;
            if (!(lat[w] <= MAX_NS)) {
                char path[96];
                snprintf(path, sizeof(path), "$.stragglers[%zu].extra_latency_ms", k);
                rc = sim_err_set(err, SIM_ESCENARIO, path,
                                 "makes worker %u's link latency up to %.3g s, more than the "
                                 "clock's limit of %.0e s",
                                 w, lat[w] * 1e-9, LIMIT_S);
            }
        }
    }
    free(lat);
    return rc;
}

int sim_scenario_check_clock(sim_scenario *sc, double base_ns, const char *base_path,
                             uint64_t message_bytes, sim_err *err)
{
    int rc = base_path != NULL ? check_compute(sc, base_ns, base_path, err) : 0;
    if (rc == 0)
        rc = check_latency(sc, err);
    if (rc == 0 && message_bytes > 0)
        rc = check_network(sc, message_bytes, err);
    return rc != 0 ? sim_err_file(err, sc->file) : 0;
}
