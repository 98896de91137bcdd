/* Scenario loading and validation (see scenario.h). Straggler rules and trace files are in
 * scenario/scenario_stragglers.c.
 *
 * Each section is read through sim_cfg: a reader checks type and range and writes the
 * default of an absent key into the tree, and sim_cfg_check_unused then rejects the keys no
 * reader asked for. Missing sections that have defaults are created first, so the tree ends
 * up as the fully resolved scenario that run.json records and the hash covers.
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "scenario/scenario.h"
#include "scenario/scenario_read.h"
#include "scenario/scenario_stragglers.h"
#include "sim/cfg.h"
#include "sim/err.h"
#include "sim/file.h"
#include "sim/fnv.h"
#include "sim/rng.h"

/* 2^53: counts (stop.iterations, rounds) stay within it, where a JSON number that reads as an
 * integer is the one written (seeds stop at SIM_SCENARIO_SEED_MAX). */
#define MAX_COUNT      9007199254740992.0
#define MAX_BATCH      (INT64_C(1) << 20)
#define MAX_LR         1e3
#define MAX_SAMPLES    INT64_C(10000000)
#define MAX_GBPS       1e9 /* an exabit per second: beyond it, bits/s lose meaning */
#define DEFAULT_STOP_S 60.0

static const char *const topologies[] = { "star", "racks", "fat_tree" };

/* The object `key` of the root, created empty when absent or null (it has defaults). */
static int section(sim_cfg *root, const char *key, sim_cfg **out, sim_err *err)
{
    int rc = sim_cfg_child(root, key, out, err);
    if (rc != 0 || *out != NULL)
        return rc;
    if ((rc = sim_scenario_write(root, err, "%s={}", key)) != 0)
        return rc;
    return sim_cfg_child(root, key, out, err);
}

/* The object `key` of `c`, which must be present and not null. */
static int required_object(sim_cfg *c, const char *key, sim_cfg **out, sim_err *err)
{
    char path[512];
    int rc = sim_cfg_require(c, key, err);
    if (rc == 0)
        rc = sim_cfg_child(c, key, out, err);
    if (rc != 0 || *out != NULL)
        return rc;
    snprintf(path, sizeof(path), "%s.%s", sim_cfg_path(c), key);
    return sim_err_set(err, SIM_ESCENARIO, path, "expected an object, got null");
}

/* The scenario's name by default: the file's base name without ".json", printable. */
static void default_name(const char *file, char *name, size_t size)
{
    const char *base = strrchr(file, '/');
    base = base != NULL ? base + 1 : file;
    size_t len = strlen(base);
    if (len > 5 && strcmp(base + len - 5, ".json") == 0)
        len -= 5;
    if (len == 0 || strcmp(base, ".json") == 0) {
        snprintf(name, size, "scenario");
        return;
    }
    if (len > size - 1)
        len = size - 1;
    for (size_t i = 0; i < len; i++)
        name[i] = base[i] >= 0x20 && base[i] < 0x7f ? base[i] : '_';
    name[len] = '\0';
}

/* name, seed, workers, servers and the stream seeds. */
static int read_top(sim_scenario *sc, sim_cfg *root, sim_err *err)
{
    int64_t seed = -1, workers = 0, servers = 0;
    default_name(sc->file, sc->name, sizeof(sc->name));
    sc->name_given = sim_cfg_has(root, "name");
    int rc = sim_cfg_string(root, "name", sc->name, sizeof(sc->name), err);
    if (rc != 0)
        return rc;
    for (const char *p = sc->name; *p != '\0'; p++)
        if (*p < 0x20 || *p >= 0x7f)
            return sim_err_set(err, SIM_ESCENARIO, "$.name",
                               "must contain only printable ASCII characters");
    if ((rc = sim_cfg_require(root, "seed", err)) != 0 ||
        (rc = sim_cfg_int(root, "seed", 0, (int64_t)SIM_SCENARIO_SEED_MAX, &seed, err)) != 0 ||
        (rc = sim_cfg_require(root, "workers", err)) != 0 ||
        (rc = sim_cfg_int(root, "workers", 1, SIM_MAX_WORKERS, &workers, err)) != 0 ||
        (rc = sim_cfg_int(root, "servers", 0, SIM_MAX_SERVERS, &servers, err)) != 0)
        return rc;
    sc->seed = (uint64_t)seed;
    sc->workers = (uint32_t)workers;
    sc->servers = (uint32_t)servers;
    sc->stream_seeds = calloc(SIM_STREAM_WORKER + (size_t)sc->workers, sizeof(uint32_t));
    if (sc->stream_seeds == NULL ||
        sim_rng_derive(sc->seed, SIM_STREAM_WORKER + (size_t)sc->workers, sc->stream_seeds) != 0)
        return sim_err_set(err, SIM_ENOMEM, NULL, "out of memory");
    return 0;
}

static int read_compute(sim_scenario *sc, sim_cfg *c, sim_cfg *root, sim_err *err)
{
    double iteration_ms = 100.0;
    size_t n = 0;
    sc->gflops = 0.0;
    sc->jitter_sigma = 0.0;
    sc->iteration_given = sim_cfg_has(c, "iteration_ms");
    /* With a device the base time is the device's (sim_scenario_read_accel refuses the two
     * keys): their defaults are not written, or the resolved scenario (run.json) would hold
     * keys that its own reload refuses. */
    bool device = sim_cfg_has(c, "device");
    int rc = 0;
    if (device && !sc->iteration_given)
        sc->iteration_ns = (sim_time)llround(iteration_ms * 1e6);
    else
        rc = sim_scenario_read_time(c, "iteration_ms", 0.0, true, 1e6, &iteration_ms,
                                    &sc->iteration_ns, err);
    if (rc == 0 && (!device || sim_cfg_has(c, "gflops")))
        rc = sim_cfg_double(c, "gflops", 0.0, INFINITY, &sc->gflops, err);
    if (rc != 0 || (rc = sim_cfg_double(c, "jitter_sigma", 0.0, 2.0, &sc->jitter_sigma, err)) != 0)
        return rc;
    bool given = sim_cfg_has(c, "speeds");
    if ((rc = sim_cfg_array_len(c, "speeds", &n, err)) != 0)
        return rc;
    if (!given) {
        if ((rc = sim_scenario_write(root, err, "compute.speeds=[1]")) != 0)
            return rc;
        n = 1;
    }
    if (n != 1 && n != sc->workers)
        return sim_err_set(err, SIM_ESCENARIO, "$.compute.speeds",
                           "must have 1 or %u entries (one per worker), got %zu", sc->workers, n);
    if ((sc->speeds = calloc(sc->workers, sizeof(*sc->speeds))) == NULL)
        return sim_err_set(err, SIM_ENOMEM, NULL, "out of memory");
    for (size_t i = 0; i < n; i++)
        if ((rc = sim_cfg_at_double(c, "speeds", i, nextafter(0.0, 1.0), INFINITY, false,
                                    &sc->speeds[i], err)) != 0)
            return rc;
    for (size_t i = n; i < sc->workers; i++)
        sc->speeds[i] = sc->speeds[0];
    if ((rc = sim_scenario_read_accel(sc, c, err)) != 0)
        return rc;
    return sim_cfg_check_unused(c, err);
}

/* network.overrides[i]: hosts and the bandwidth and/or latency they get. `seen` has one
 * zeroed byte per host and `ids` room for every host; `seen` is left zeroed. */
static int read_net_override(sim_scenario *sc, sim_cfg *o, unsigned char *seen, uint32_t *ids,
                             sim_err *err)
{
    char path[512];
    size_t n = 0, i = 0;
    uint32_t nhosts = sc->workers + sc->servers;
    double gbps = NAN, latency_us = NAN;
    sim_time latency_ns = 0;
    int rc = sim_cfg_require(o, "workers", err);
    if (rc != 0 || (rc = sim_cfg_array_len(o, "workers", &n, err)) != 0)
        return rc;
    snprintf(path, sizeof(path), "%s.workers", sim_cfg_path(o));
    if (n == 0)
        return sim_err_set(err, SIM_ESCENARIO, path, "must not be empty");
    for (; i < n; i++) { /* ids[0..i) are distinct, so i never exceeds nhosts */
        double id = 0.0;
        rc = sim_cfg_at_double(o, "workers", i, 0.0, (double)nhosts - 1.0, true, &id, err);
        if (rc == 0 && seen[(uint32_t)id] != 0) {
            snprintf(path, sizeof(path), "%s.workers[%zu]", sim_cfg_path(o), i);
            rc = sim_err_set(err, SIM_ESCENARIO, path, "duplicate host %u", (uint32_t)id);
        }
        if (rc != 0)
            break;
        ids[i] = (uint32_t)id;
        seen[ids[i]] = 1;
    }
    for (size_t k = 0; k < i; k++)
        seen[ids[k]] = 0;
    if (rc != 0 ||
        (rc = sim_scenario_read_num(o, "bandwidth_gbps", 0.0, true, MAX_GBPS, &gbps, err)) != 0 ||
        (rc = sim_scenario_read_time(o, "latency_us", 0.0, false, 1e3, &latency_us, &latency_ns,
                                     err)) != 0)
        return rc;
    if (isnan(gbps) && isnan(latency_us))
        return sim_err_set(err, SIM_ESCENARIO, sim_cfg_path(o),
                           "must set bandwidth_gbps or latency_us");
    if ((rc = sim_cfg_check_unused(o, err)) != 0)
        return rc;
    for (i = 0; i < n; i++) {
        if (!isnan(gbps))
            sc->bandwidth_bps[ids[i]] = gbps * 1e9;
        if (!isnan(latency_us))
            sc->latency_ns[ids[i]] = latency_ns;
    }
    return 0;
}

/* Rejects a key of `keys` that the topology does not use. */
static int reject_keys(sim_cfg *c, const char *const *keys, size_t n, const char *only,
                       sim_err *err)
{
    for (size_t i = 0; i < n; i++) {
        if (!sim_cfg_has(c, keys[i]))
            continue;
        char path[512];
        snprintf(path, sizeof(path), "$.network.%s", keys[i]);
        return sim_err_set(err, SIM_ESCENARIO, path, "only valid with topology %s", only);
    }
    return 0;
}

/* fat_tree: the radix k (required, even, with k^3 / 4 host ports for every host) and the
 * oversubscription of the edge-to-aggregation links. */
static int read_fat_tree(sim_scenario *sc, sim_cfg *c, uint32_t ports, sim_err *err)
{
    int64_t k = 2;
    double over = 1.0;
    int rc;
    if ((rc = sim_cfg_require(c, "k", err)) != 0 ||
        (rc = sim_cfg_int(c, "k", 2, 1024, &k, err)) != 0 ||
        (rc = sim_scenario_read_num(c, "oversubscription", 1.0, false, 1e6, &over, err)) != 0)
        return rc;
    if (k % 2 != 0)
        return sim_err_set(err, SIM_ESCENARIO, "$.network.k", "must be even, got %lld",
                           (long long)k);
    if ((uint64_t)k * (uint64_t)k * (uint64_t)k / 4 < ports)
        return sim_err_set(err, SIM_ESCENARIO, "$.network.k",
                           "a fat_tree with k = %lld has %llu host ports, fewer than the %u hosts",
                           (long long)k, (unsigned long long)(k * k * k / 4), ports);
    sc->net.k = (uint32_t)k;
    sc->net.oversubscription = over;
    return 0;
}

static int read_network(sim_scenario *sc, sim_cfg *c, sim_err *err)
{
    static const char *const racks_only[] = { "rack_size" };
    static const char *const fat_tree_only[] = { "k", "oversubscription" };
    static const char *const uplink_keys[] = { "uplink_bandwidth_gbps", "uplink_latency_us" };
    int topology = SIM_TOPO_STAR;
    double gbps = 10.0, latency_us = 50.0;
    sim_time latency_ns = 0;
    uint32_t nhosts = sc->workers + sc->servers, ports = nhosts;
    int rc = sim_cfg_choice(c, "topology", topologies, 3, &topology, err);
    if (rc != 0 || (rc = sim_scenario_read_fabric(c, &gbps, &latency_us, err)) != 0 ||
        (rc = sim_scenario_read_gpus(sc, c, &ports, err)) != 0 ||
        (rc = sim_scenario_read_num(c, "bandwidth_gbps", 0.0, true, MAX_GBPS, &gbps, err)) != 0 ||
        (rc = sim_scenario_read_time(c, "latency_us", 0.0, false, 1e3, &latency_us, &latency_ns,
                                     err)) != 0)
        return rc;
    sc->net.topology = (sim_topology)topology;
    sc->net.nhosts = nhosts;
    sc->net.rack_size = 1; /* star: unused */
    sc->net.uplink_bandwidth_bps = gbps * 1e9;
    sc->net.uplink_latency_ns = latency_ns;
    sc->net.oversubscription = 1.0;
    if (topology != SIM_TOPO_RACKS && (rc = reject_keys(c, racks_only, 1, "racks", err)) != 0)
        return rc;
    if (topology != SIM_TOPO_FAT_TREE &&
        (rc = reject_keys(c, fat_tree_only, 2, "fat_tree", err)) != 0)
        return rc;
    if (topology == SIM_TOPO_STAR)
        rc = reject_keys(c, uplink_keys, 2, "racks or fat_tree", err);
    if (rc == 0 && topology == SIM_TOPO_RACKS) {
        int64_t rack_size = 1;
        if ((rc = sim_cfg_require(c, "rack_size", err)) != 0 ||
            (rc = sim_cfg_int(c, "rack_size", 1, SIM_MAX_WORKERS + SIM_MAX_SERVERS, &rack_size,
                              err)) != 0)
            return rc;
        sc->net.rack_size = (uint32_t)rack_size;
    }
    if (rc == 0 && topology == SIM_TOPO_FAT_TREE)
        rc = read_fat_tree(sc, c, ports, err);
    if (rc == 0 && topology != SIM_TOPO_STAR) {
        double up_gbps = gbps, up_latency_us = latency_us;
        bool up_given = sim_cfg_has(c, "uplink_latency_us");
        if ((rc = sim_scenario_read_num(c, "uplink_bandwidth_gbps", 0.0, true, MAX_GBPS, &up_gbps,
                                        err)) != 0 ||
            (rc = sim_scenario_read_time(c, "uplink_latency_us", 0.0, false, 1e3, &up_latency_us,
                                         &sc->net.uplink_latency_ns, err)) != 0 ||
            (rc = sim_scenario_check_hop_latency(c, up_given ? "uplink_latency_us" : "latency_us",
                                                 up_latency_us, sc->net.uplink_latency_ns, err)) !=
                0)
            return rc;
        sc->net.uplink_bandwidth_bps = up_gbps * 1e9;
    }
    if (rc != 0)
        return rc;
    sc->bandwidth_bps = calloc(nhosts, sizeof(*sc->bandwidth_bps));
    sc->latency_ns = calloc(nhosts, sizeof(*sc->latency_ns));
    unsigned char *seen = calloc(nhosts, 1);
    uint32_t *ids = calloc(nhosts, sizeof(*ids));
    if (sc->bandwidth_bps == NULL || sc->latency_ns == NULL || seen == NULL || ids == NULL) {
        free(seen);
        free(ids);
        return sim_err_set(err, SIM_ENOMEM, NULL, "out of memory");
    }
    for (size_t h = 0; h < nhosts; h++) {
        sc->bandwidth_bps[h] = gbps * 1e9;
        sc->latency_ns[h] = latency_ns;
    }
    size_t n = 0;
    rc = sim_cfg_array_len(c, "overrides", &n, err);
    for (size_t i = 0; i < n && rc == 0; i++) {
        sim_cfg *o = NULL;
        if ((rc = sim_cfg_at(c, "overrides", i, &o, err)) == 0)
            rc = read_net_override(sc, o, seen, ids, err);
    }
    free(seen);
    free(ids);
    sc->net.bandwidth_bps = sc->bandwidth_bps;
    sc->net.latency_ns = sc->latency_ns;
    if (rc == 0)
        rc = sim_scenario_read_hosts(sc, c, err);
    return rc != 0 ? rc : sim_cfg_check_unused(c, err);
}

static int read_workload(sim_scenario *sc, sim_cfg *c, sim_cfg *root, sim_err *err)
{
    static const char *const inits[] = { "same", "independent" };
    int64_t batch = 32, message_bytes = 0;
    int init = 0;
    sc->lr = 0.05;
    sc->momentum = 0.0;
    sc->weight_decay = 0.0;
    int rc = sim_cfg_child(c, "dataset", &sc->dataset_cfg, err);
    if (rc == 0)
        rc = sim_cfg_child(c, "lr_schedule", &sc->schedule_cfg, err);
    if (rc != 0 || (rc = required_object(c, "model", &sc->model_cfg, err)) != 0 ||
        (rc = sim_cfg_require(sc->model_cfg, "name", err)) != 0 ||
        (rc = sim_cfg_string(sc->model_cfg, "name", sc->model, sizeof(sc->model), err)) != 0)
        return rc;
    bool none = strcmp(sc->model, "none") == 0;
    bool vector = strcmp(sc->model, "vector") == 0;  /* averaging-only: no data */
    if ((vector || none) && sc->dataset_cfg != NULL) /* it was read by no one, unchecked */
        return sim_err_set(err, SIM_ESCENARIO, "$.workload.dataset",
                           vector ? "not allowed with model \"vector\" (averaging only, no data)"
                                  : "not allowed with model \"none\" (timing only, no data)");
    if (sc->dataset_cfg != NULL && ((rc = sim_cfg_require(sc->dataset_cfg, "name", err)) != 0 ||
                                    (rc = sim_cfg_string(sc->dataset_cfg, "name", sc->dataset,
                                                         sizeof(sc->dataset), err)) != 0))
        return rc;
    bool torch = strcmp(sc->model, "torch") == 0; /* may bring its own data */
    if (sc->dataset_cfg == NULL && !none && !vector && (!torch || sim_cfg_has(c, "dataset")))
        return sim_cfg_has(c, "dataset")
                   ? sim_err_set(err, SIM_ESCENARIO, "$.workload.dataset",
                                 "expected an object, got null")
                   : sim_err_set(err, SIM_ESCENARIO, "$.workload.dataset",
                                 "missing required key (only models \"none\" and \"vector\" run "
                                 "without data, and \"torch\" on its module's)");
    if ((rc = sim_cfg_int(c, "batch", 1, MAX_BATCH, &batch, err)) != 0 ||
        (rc = sim_cfg_double(c, "lr", 0.0, MAX_LR, &sc->lr, err)) != 0 ||
        (rc = sim_cfg_choice(c, "init", inits, 2, &init, err)) != 0 ||
        (rc = sim_cfg_double(c, "momentum", 0.0, nextafter(1.0, 0.0), &sc->momentum, err)) != 0 ||
        (rc = sim_cfg_double(c, "weight_decay", 0.0, INFINITY, &sc->weight_decay, err)) != 0)
        return rc;
    sc->batch = (uint32_t)batch;
    sc->init_independent = init == 1;
    bool given = sim_cfg_has(c, "message_bytes");
    if (!sim_cfg_is_null(c, "message_bytes") &&
        (rc = sim_cfg_int(c, "message_bytes", 1, (int64_t)SIM_MAX_MESSAGE_BYTES, &message_bytes,
                          err)) != 0)
        return rc;
    if (!given && (rc = sim_scenario_write(root, err, "workload.message_bytes=null")) != 0)
        return rc;
    sc->message_bytes = (uint64_t)message_bytes;
    if (none && message_bytes == 0 && sc->profile[0] == '\0')
        return sim_err_set(err, SIM_ESCENARIO, "$.workload.message_bytes",
                           "required (an integer >= 1) when model is \"none\"");
    return sim_cfg_check_unused(c, err);
}

static int read_stop(sim_scenario *sc, sim_cfg *c, sim_err *err)
{
    static const char *const need_model[] = { "epochs", "target_accuracy" };
    double time_s = NAN;
    int64_t iterations = 0, rounds = 0;
    sc->stop_ns = SIM_TIME_NEVER;
    sc->stop_epochs = NAN;
    sc->target_accuracy = NAN;
    sc->stop_consensus = NAN;
    int rc = sim_scenario_read_time(c, "time_s", 0.0, true, 1e9, &time_s, &sc->stop_ns, err);
    if (rc != 0 ||
        (rc = sim_cfg_int(c, "iterations", 1, (int64_t)MAX_COUNT, &iterations, err)) != 0 ||
        (rc = sim_cfg_double(c, "epochs", nextafter(0.0, 1.0), INFINITY, &sc->stop_epochs, err)) !=
            0 ||
        (rc = sim_cfg_double(c, "target_accuracy", nextafter(0.0, 1.0), 1.0, &sc->target_accuracy,
                             err)) != 0 ||
        (rc = sim_cfg_double(c, "consensus", nextafter(0.0, 1.0), INFINITY, &sc->stop_consensus,
                             err)) != 0 ||
        (rc = sim_cfg_int(c, "rounds", 1, (int64_t)MAX_COUNT, &rounds, err)) != 0)
        return rc;
    sc->stop_iterations = (uint64_t)iterations;
    sc->stop_rounds = (uint64_t)rounds;
    if (strcmp(sc->model, "none") == 0 && sim_cfg_has(c, "consensus"))
        return sim_err_set(err, SIM_ESCENARIO, "$.stop.consensus",
                           "needs a model (model is \"none\")");
    for (size_t i = 0; i < 2 && strcmp(sc->model, "none") == 0; i++) {
        if (!sim_cfg_has(c, need_model[i]))
            continue;
        char path[64];
        snprintf(path, sizeof(path), "$.stop.%s", need_model[i]);
        return sim_err_set(err, SIM_ESCENARIO, path, "needs a model (model is \"none\")");
    }
    if (isnan(time_s) && iterations == 0 && isnan(sc->stop_epochs) && isnan(sc->target_accuracy) &&
        isnan(sc->stop_consensus) && rounds == 0) {
        time_s = DEFAULT_STOP_S; /* nothing given: a minute, written into the tree */
        if ((rc = sim_scenario_read_time(c, "time_s", 0.0, true, 1e9, &time_s, &sc->stop_ns,
                                         err)) != 0)
            return rc;
    }
    return sim_cfg_check_unused(c, err);
}

/* A run stopped by time evaluates at most SIM_MAX_EVALS times (stop.time_s / every_s), checked
 * before it starts, even when a stall or another stop would end it sooner (which no loader can
 * know: every worker failing for good at 0.3 s with stop.time_s 20000 is refused at every_s
 * 0.0137 and stalls at 0.3 s at 1000, the message said nothing of it); the runtime holds a run
 * stopped otherwise to the same count as it goes. */
static int check_eval_count(const sim_scenario *sc, double every_s, sim_err *err)
{
    if (sc->stop_ns == SIM_TIME_NEVER ||
        (double)sc->stop_ns / (double)sc->eval_every_ns <= SIM_MAX_EVALS)
        return 0;
    return sim_err_set(err, SIM_ESCENARIO, "$.eval.every_s",
                       "must be at least %.9g (stop.time_s / %.0f evaluations, the most a run "
                       "stopped by time may make, even if a stall or another stop ends it "
                       "sooner), got %.9g",
                       (double)sc->stop_ns * 1e-9 / SIM_MAX_EVALS, (double)SIM_MAX_EVALS, every_s);
}

static int read_eval_output(sim_scenario *sc, sim_cfg *eval, sim_cfg *out, sim_err *err)
{
    double every_s = 1.0;
    int64_t samples = 1000;
    sc->plots = false;
    sc->events = false;
    snprintf(sc->out_dir, sizeof(sc->out_dir), "out/%s", sc->name);
    int rc =
        sim_scenario_read_time(eval, "every_s", 0.0, true, 1e9, &every_s, &sc->eval_every_ns, err);
    if (rc != 0 || (rc = sim_cfg_int(eval, "samples", 1, MAX_SAMPLES, &samples, err)) != 0 ||
        (rc = sim_cfg_check_unused(eval, err)) != 0)
        return rc;
    sc->eval_samples = (uint32_t)samples;
    if ((rc = check_eval_count(sc, every_s, err)) != 0)
        return rc;
    if ((rc = sim_cfg_string(out, "dir", sc->out_dir, sizeof(sc->out_dir), err)) != 0 ||
        (rc = sim_cfg_bool(out, "plots", &sc->plots, err)) != 0 ||
        (rc = sim_cfg_bool(out, "events", &sc->events, err)) != 0)
        return rc;
    return sim_cfg_check_unused(out, err);
}

/* A check tolerance's bound, the largest figure a results file holds (outputs/csv.h): abs +
 * rel x |mean| stays finite (1e308 each made the band and check.csv's floor inf). */
#define MAX_TOLERANCE 1e150

/* $.check, read only when present so that scenarios without it keep their hash: defaults
 * are applied here, not written into the tree (NaN sentinels). */
static int read_check(sim_scenario *sc, sim_cfg *root, sim_err *err)
{
    static const char *const keys[] = { "accuracy_abs", "accuracy_rel",   "loss_abs",
                                        "loss_rel",     "throughput_abs", "throughput_rel" };
    double *out[] = {
        &sc->check_accuracy_abs, &sc->check_accuracy_rel,   &sc->check_loss_abs,
        &sc->check_loss_rel,     &sc->check_throughput_abs, &sc->check_throughput_rel
    };
    const double def[] = { 0.002, 0.0, 0.0, 0.005, 0.0, 0.002 };
    sim_cfg *c = NULL;
    int rc = sim_cfg_child(root, "check", &c, err);
    for (size_t i = 0; i < 6 && rc == 0; i++) {
        double v = NAN;
        if (c != NULL)
            rc = sim_cfg_double(c, keys[i], 0.0, MAX_TOLERANCE, &v, err);
        *out[i] = isnan(v) ? def[i] : v;
    }
    return rc != 0 || c == NULL ? rc : sim_cfg_check_unused(c, err);
}

/* Every section in order; the root's unknown keys are reported once all its keys are known
 * and before the sections' contents are checked. */
static int read_all(sim_scenario *sc, sim_cfg *root, sim_err *err)
{
    sim_cfg *compute = NULL, *network = NULL, *workload = NULL, *stop = NULL, *eval = NULL,
            *output = NULL;
    size_t nstragglers = 0;
    int rc = read_top(sc, root, err);
    if (rc != 0 || (rc = section(root, "compute", &compute, err)) != 0 ||
        (rc = sim_cfg_array_len(root, "stragglers", &nstragglers, err)) != 0 ||
        (rc = section(root, "network", &network, err)) != 0 ||
        (rc = required_object(root, "workload", &workload, err)) != 0 ||
        (rc = required_object(root, "protocol", &sc->protocol_cfg, err)) != 0 ||
        (rc = section(root, "stop", &stop, err)) != 0 ||
        (rc = section(root, "eval", &eval, err)) != 0 ||
        (rc = section(root, "output", &output, err)) != 0 ||
        (rc = read_check(sc, root, err)) != 0 || (rc = sim_cfg_check_unused(root, err)) != 0)
        return rc;
    if ((rc = read_compute(sc, compute, root, err)) != 0 ||
        (rc = sim_scenario_read_stragglers(sc, root, err)) != 0 ||
        (rc = read_network(sc, network, err)) != 0 ||
        (rc = read_workload(sc, workload, root, err)) != 0 ||
        (rc = sim_cfg_require(sc->protocol_cfg, "name", err)) != 0 ||
        (rc = sim_cfg_string(sc->protocol_cfg, "name", sc->protocol, sizeof(sc->protocol), err)) !=
            0 ||
        (rc = read_stop(sc, stop, err)) != 0 ||
        (rc = read_eval_output(sc, eval, output, err)) != 0 ||
        (rc = sim_scenario_resolve_profile(sc, err)) != 0)
        return rc;
    /* The base: the workload's FLOPs (checked by its reader), the profile's (with a device,
     * gflops or measured times), or iteration_ms. */
    bool profile = sc->profile[0] != '\0';
    bool flops = sc->gflops > 0 && strcmp(sc->model, "none") != 0 && !profile;
    const char *base = "$.compute.iteration_ms";
    if (flops)
        base = NULL;
    else if (sc->devices != NULL)
        base = "$.compute.device";
    else if (profile && (sc->gflops > 0 || (sc->layers.measured && !sc->iteration_given)))
        base = "$.compute.profile";
    if ((rc = sim_scenario_check_clock(sc, (double)sc->iteration_ns, base, sc->message_bytes,
                                       err)) != 0)
        return rc;
    char *text = sim_cfg_print(root, false);
    if (text == NULL)
        return sim_err_set(err, SIM_ENOMEM, NULL, "out of memory");
    sc->hash = sim_fnv_text(SIM_FNV_OFFSET, text);
    free(text);
    return 0;
}

sim_scenario *sim_scenario_parse(const char *text, size_t len, const char *file,
                                 const char *const *sets, size_t nsets, sim_err *err)
{
    sim_err_clear(err);
    file = file != NULL ? file : "";
    sim_scenario *sc = calloc(1, sizeof(*sc));
    if (sc == NULL) {
        sim_err_set(err, SIM_ENOMEM, NULL, "out of memory");
        sim_err_file(err, file);
        return NULL;
    }
    snprintf(sc->file, sizeof(sc->file), "%s", file);
    if ((sc->root = sim_cfg_parse(text, len, file, err)) == NULL)
        goto fail_destroy;
    /* A sweep file given where a scenario goes said "$.seed: missing required key". */
    if (sim_cfg_has(sc->root, "base") && sim_cfg_has(sc->root, "grid") &&
        !sim_cfg_has(sc->root, "workers")) {
        sim_err_set(err, SIM_ESCENARIO, "$",
                    "a sweep file (it has base and grid), not a scenario: run it with "
                    "`hetsim sweep FILE`");
        goto fail_destroy;
    }
    for (size_t i = 0; i < nsets; i++)
        if (sim_cfg_override(sc->root, sets[i], err) != 0)
            goto fail_destroy;
    if (read_all(sc, sc->root, err) != 0)
        goto fail_destroy;
    return sc;
fail_destroy:
    sim_err_file(err, file);
    sim_scenario_destroy(sc);
    return NULL;
}

/* The scenario's bytes, read whole (sim_file_read_all: at most the cap of a text input). */
char *sim_scenario_read(const char *file, size_t *len, sim_err *err)
{
    sim_err_clear(err);
    char *text = NULL;
    *len = 0;
    FILE *f = sim_file_open_text(file);
    if (f == NULL) {
        sim_err_set(err, SIM_EIO, NULL, "cannot open: %s", strerror(errno));
        sim_err_file(err, file);
        return NULL;
    }
    int rc = sim_file_read_all(f, &text, len);
    fclose(f);
    if (rc == ENOMEM)
        sim_err_set(err, SIM_ENOMEM, NULL, "out of memory");
    else if (rc == EFBIG) /* a FIFO fed by `yes` grew the buffer without bound */
        sim_err_set(err, SIM_ESCENARIO, NULL, "%s", sim_file_cap_text());
    else if (rc != 0)
        sim_err_set(err, SIM_EIO, NULL, "cannot read: %s", strerror(rc));
    if (rc != 0)
        sim_err_file(err, file);
    return text;
}

sim_scenario *sim_scenario_load(const char *file, const char *const *sets, size_t nsets,
                                sim_err *err)
{
    size_t len = 0;
    char *text = sim_scenario_read(file, &len, err);
    if (text == NULL)
        return NULL;
    sim_scenario *sc = sim_scenario_parse(text, len, file, sets, nsets, err);
    free(text);
    return sc;
}

int sim_scenario_inputs_regular(const sim_scenario *sc, const char *who, sim_err *err)
{
    struct stat st;
    for (size_t i = 0; i < sc->ninputs; i++)
        if (stat(sc->inputs[i], &st) == 0 && !S_ISREG(st.st_mode))
            return sim_err_set(err, SIM_ESCENARIO, NULL,
                               "%s: not a regular file (%s), which %s reads again for each of "
                               "its runs: copy it into a file",
                               sc->inputs[i], sim_file_kind(st.st_mode), who);
    return SIM_OK;
}

void sim_scenario_destroy(sim_scenario *sc)
{
    if (sc == NULL)
        return;
    for (size_t i = 0; i < sc->ninputs; i++)
        free(sc->inputs[i]);
    free(sc->inputs);
    for (size_t i = 0; i < sc->nstragglers; i++) {
        free(sc->stragglers[i].workers);
        if (!sc->stragglers[i].trace_shared)
            free(sc->stragglers[i].trace);
    }
    free(sc->stragglers);
    free(sc->stream_seeds);
    free(sc->speeds);
    free(sc->devices);
    sim_layers_fini(&sc->layers);
    if (sc->model_probe_free != NULL)
        sc->model_probe_free(sc->model_probe);
    free(sc->bandwidth_bps);
    free(sc->latency_ns);
    free(sc->node_of);
    free(sc->fabric_bps);
    free(sc->fabric_latency_ns);
    sim_cfg_destroy(sc->root);
    free(sc);
}

void sim_scenario_rehash(sim_scenario *sc)
{
    char *text = sim_cfg_print(sc->root, false);
    if (text != NULL) /* out of memory: the old hash stays */
        sc->hash = sim_fnv_text(SIM_FNV_OFFSET, text);
    free(text);
}

char *sim_scenario_resolved(const sim_scenario *sc, bool pretty)
{
    return sim_cfg_print(sc->root, pretty);
}
