/* The canonical form of a resolved scenario (see scenario.h, sim_scenario_canonical): the one
 * place that says which spellings of a scenario are one run. A golden's check and a sweep's
 * points and resume compare scenarios in this form; run.json and scenario_hash keep the
 * scenario as it was written, so that no golden's fingerprint moves.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scenario/scenario.h"
#include "sim/cfg.h"
#include "sim/err.h"
#include "sim/file.h"

#define CANON_PATH_MAX 4096
#define CANON_GROUP    128 /* a device group as written: {"device": "NAME", "count": K}, */

/* `key` of `c`, a string naming a file, set to its plain spelling: the one rule of a path
 * written the one way (sim_file_clean_path: no "." component, no empty one; ".." stays, for what
 * it means depends on links, and the data and module files are not compared by their bytes);
 * `keep_slash`: a spelling that lost its '/' keeps "./" (a compute.profile without one is a
 * shipped profile's name, unless it ends in ".csv"). */
static int plain_key(sim_cfg *c, const char *key, bool keep_slash, sim_err *err)
{
    /* json: each byte of the path at most 6 (\u0001), in quotes */
    char text[CANON_PATH_MAX], plain[CANON_PATH_MAX], json[6 * CANON_PATH_MAX + 8];
    if (c == NULL || !sim_cfg_has(c, key) ||
        sim_cfg_string(c, key, text, sizeof(text), NULL) != SIM_OK)
        return SIM_OK; /* no string (null, a hand-made run.json): compared as it is */
    char *clean = sim_file_clean_path(text);
    if (clean == NULL)
        return sim_err_set(err, SIM_ENOMEM, NULL, "out of memory");
    size_t len = strlen(clean);
    bool slash = keep_slash && strchr(clean, '/') == NULL &&
                 !(len > 4 && strcmp(clean + len - 4, ".csv") == 0);
    bool fits =
        snprintf(plain, sizeof(plain), "%s%s", slash ? "./" : "", clean) < (int)sizeof(plain);
    free(clean);
    if (!fits)
        return SIM_OK;
    size_t n = 0;
    json[n++] = '"';
    for (const unsigned char *p = (const unsigned char *)plain; *p != '\0'; p++) {
        if (*p == '"' || *p == '\\')
            json[n++] = '\\';
        if (*p < 0x20)
            n += (size_t)snprintf(json + n, 7, "\\u%04x", *p);
        else
            json[n++] = (char)*p;
    }
    json[n++] = '"';
    json[n] = '\0';
    return strcmp(text, plain) != 0 ? sim_cfg_set_json(c, key, json, err) : SIM_OK;
}

/* compute.speeds of equal factors as the one factor they broadcast ([1, 1, 1, 1] is [1]). */
static int broadcast_speeds(sim_cfg *c, sim_err *err)
{
    size_t n = 0;
    double first = 0.0, v = 0.0;
    if (c == NULL || sim_cfg_array_len(c, "speeds", &n, NULL) != SIM_OK || n < 2 ||
        sim_cfg_at_double(c, "speeds", 0, -1e308, 1e308, false, &first, NULL) != SIM_OK)
        return SIM_OK;
    for (size_t i = 1; i < n; i++)
        if (sim_cfg_at_double(c, "speeds", i, -1e308, 1e308, false, &v, NULL) != SIM_OK ||
            v != first)
            return SIM_OK;
    char *item = NULL, json[64];
    int rc = sim_cfg_at_json(c, "speeds", 0, &item, err);
    if (rc == SIM_OK && snprintf(json, sizeof(json), "[%s]", item) < (int)sizeof(json))
        rc = sim_cfg_set_json(c, "speeds", json, err);
    free(item);
    return rc;
}

/* compute.device as a list of groups [{"device": D, "count": K}, ...]: adjacent groups of one
 * device as one, and a single group (every worker's) as the name alone, "D". A list holding
 * anything else is left as it is. */
static int one_device(sim_cfg *c, sim_err *err)
{
    size_t n = 0;
    if (c == NULL || sim_cfg_array_len(c, "device", &n, NULL) != SIM_OK || n == 0)
        return SIM_OK;
    char *json = malloc(n * CANON_GROUP + 4), name[64], last[64] = "";
    if (json == NULL)
        return sim_err_set(err, SIM_ENOMEM, NULL, "out of memory");
    size_t len = 0, groups = 0;
    int64_t count = 0, sum = 0;
    bool plain = true;
    json[len++] = '[';
    for (size_t i = 0; i <= n && plain; i++) {
        sim_cfg *g = NULL;
        if (i < n)
            plain = sim_cfg_at(c, "device", i, &g, NULL) == SIM_OK && g != NULL &&
                    sim_cfg_nkeys(g) == 2 &&
                    sim_cfg_string(g, "device", name, sizeof(name), NULL) == SIM_OK &&
                    strchr(name, '"') == NULL && strchr(name, '\\') == NULL &&
                    sim_cfg_int(g, "count", 1, INT32_MAX, &count, NULL) == SIM_OK;
        if (plain && i > 0 && (i == n || strcmp(name, last) != 0)) { /* `last` ends */
            len += (size_t)sprintf(json + len, "%s{\"device\": \"%s\", \"count\": %lld}",
                                   groups > 0 ? ", " : "", last, (long long)sum);
            groups++;
            sum = 0;
        }
        if (plain && i < n) {
            snprintf(last, sizeof(last), "%s", name);
            sum += count;
        }
    }
    int rc = SIM_OK;
    if (plain && groups == 1)
        snprintf(json, n * CANON_GROUP + 4, "\"%s\"", last);
    else if (plain)
        snprintf(json + len, n * CANON_GROUP + 4 - len, "]");
    if (plain && (groups < n || groups == 1))
        rc = sim_cfg_set_json(c, "device", json, err);
    free(json);
    return rc;
}

/* True if `key` of `c` is present and prints (compactly) as `json`. */
static bool holds(sim_cfg *c, const char *key, const char *json)
{
    char *text = NULL;
    bool same = c != NULL && sim_cfg_has(c, key) && sim_cfg_json(c, key, &text, NULL) == SIM_OK &&
                text != NULL && strcmp(text, json) == 0;
    free(text);
    return same;
}

/* The network's keys that the loader writes only when given, as absent when they change
 * nothing: nics_per_host 1 and gpus_per_host 1 (the defaults); the three host fabric keys
 * with one GPU a host (checked, unused); `fabric` and `host_fabric`, whose only effect is
 * the defaults of bandwidths and latencies that the resolved scenario holds anyway. */
static int network_defaults(sim_cfg *net, sim_err *err)
{
    static const char *const host[] = { "host_fabric_bandwidth_gbps", "host_fabric_latency_us" };
    int rc = SIM_OK;
    if (net == NULL)
        return rc;
    if (holds(net, "nics_per_host", "1"))
        rc = sim_cfg_remove(net, "nics_per_host", err);
    if (rc == SIM_OK && holds(net, "gpus_per_host", "1"))
        rc = sim_cfg_remove(net, "gpus_per_host", err);
    bool one = !sim_cfg_has(net, "gpus_per_host");
    for (size_t i = 0; i < 2 && rc == SIM_OK && one; i++)
        rc = sim_cfg_remove(net, host[i], err);
    if (rc == SIM_OK && (one || (sim_cfg_has(net, host[0]) && sim_cfg_has(net, host[1]))))
        rc = sim_cfg_remove(net, "host_fabric", err);
    if (rc == SIM_OK && sim_cfg_has(net, "bandwidth_gbps") && sim_cfg_has(net, "latency_us"))
        rc = sim_cfg_remove(net, "fabric", err);
    return rc;
}

/* The keys of the other sections that the loader writes only when given, as absent when they
 * change nothing: compute.layout at 32 bits (it acts on fp16 and bf16 alone); a learning-rate
 * schedule that is constant without warm-up, or any schedule of the timing-only model (checked,
 * unused), and a warm-up's start factor without warm-up; an mlp's hidden layers as its default
 * [256] when absent; localsgd's algorithm "ring" (the flat ring of its absence); ps's and
 * syncswitch's sync_overhead_ms 0 (none, as its absence: a 0 spelt out was "the scenario
 * differs ... in 1 key: protocol.sync_overhead_ms" of one run). */
static int other_defaults(sim_cfg *compute, sim_cfg *workload, sim_cfg *model, sim_cfg *protocol,
                          sim_err *err)
{
    int rc = SIM_OK;
    if (holds(compute, "precision", "\"fp32\"") || holds(compute, "precision", "\"tf32\""))
        rc = sim_cfg_remove(compute, "layout", err);
    sim_cfg *schedule = NULL;
    if (workload != NULL && sim_cfg_child(workload, "lr_schedule", &schedule, NULL) != SIM_OK)
        schedule = NULL; /* not an object: compared as it is */
    if (rc == SIM_OK && holds(schedule, "warmup_epochs", "0"))
        rc = sim_cfg_remove(schedule, "warmup_start_factor", err);
    bool none = holds(model, "name", "\"none\"");
    if (rc == SIM_OK && workload != NULL &&
        (none || holds(workload, "lr_schedule", "null") ||
         holds(workload, "lr_schedule", "{\"kind\":\"constant\",\"warmup_epochs\":0}") ||
         holds(workload, "lr_schedule", "{\"warmup_epochs\":0,\"kind\":\"constant\"}")))
        rc = sim_cfg_remove(workload, "lr_schedule", err);
    if (rc == SIM_OK && holds(model, "name", "\"mlp\""))
        rc = sim_cfg_default_json(model, "hidden", "[256]", err);
    if (rc == SIM_OK && holds(protocol, "name", "\"localsgd\"") &&
        holds(protocol, "algorithm", "\"ring\""))
        rc = sim_cfg_remove(protocol, "algorithm", err);
    if (rc == SIM_OK && holds(protocol, "sync_overhead_ms", "0"))
        rc = sim_cfg_remove(protocol, "sync_overhead_ms", err);
    return rc;
}

int sim_scenario_canonical(sim_cfg *tree, sim_err *err)
{
    sim_cfg *compute = NULL, *network = NULL, *workload = NULL, *dataset = NULL, *model = NULL,
            *protocol = NULL;
    sim_cfg_child(tree, "compute", &compute, NULL);
    sim_cfg_child(tree, "protocol", &protocol, NULL);
    sim_cfg_child(tree, "network", &network, NULL);
    sim_cfg_child(tree, "workload", &workload, NULL);
    if (workload != NULL) {
        sim_cfg_child(workload, "dataset", &dataset, NULL);
        sim_cfg_child(workload, "model", &model, NULL);
    }
    int rc = broadcast_speeds(compute, err);
    if (rc == SIM_OK)
        rc = one_device(compute, err);
    /* Lists whose default is empty: absent is []. */
    if (rc == SIM_OK && !sim_cfg_has(tree, "stragglers"))
        rc = sim_cfg_default_json(tree, "stragglers", "[]", err);
    if (rc == SIM_OK && network != NULL && !sim_cfg_has(network, "overrides"))
        rc = sim_cfg_default_json(network, "overrides", "[]", err);
    if (rc == SIM_OK)
        rc = network_defaults(network, err);
    if (rc == SIM_OK)
        rc = other_defaults(compute, workload, model, protocol, err);
    /* The files it names. */
    char profile[CANON_PATH_MAX] = "";
    if (compute != NULL && sim_cfg_has(compute, "profile"))
        sim_cfg_string(compute, "profile", profile, sizeof(profile), NULL);
    size_t plen = strlen(profile);
    if (rc == SIM_OK &&
        (strchr(profile, '/') != NULL || (plen > 4 && strcmp(profile + plen - 4, ".csv") == 0)))
        rc = plain_key(compute, "profile", true, err);
    static const char *const data_keys[] = { "file", "test_file", "dir" };
    for (size_t i = 0; i < 3 && rc == SIM_OK; i++)
        rc = plain_key(dataset, data_keys[i], false, err);
    if (rc == SIM_OK)
        rc = plain_key(model, "module", false, err);
    size_t n = 0;
    if (sim_cfg_array_len(tree, "stragglers", &n, NULL) != SIM_OK)
        n = 0;
    for (size_t i = 0; i < n && rc == SIM_OK; i++) {
        sim_cfg *rule = NULL;
        if (sim_cfg_at(tree, "stragglers", i, &rule, NULL) == SIM_OK)
            rc = plain_key(rule, "file", false, err);
    }
    return rc;
}
