/* The estimate behind the memory check (sim_run_check refuses a run estimated above 80% of
 * the machine's memory) against the peak resident set a run really reaches: every protocol
 * and its main variants on one medium real-model scenario, 100 workers training an MLP
 * [256, 256] (270k parameters, 1 MiB a model) on a synthetic data set of Fashion-MNIST's
 * shape (784 inputs, 12000 examples) with minibatches of 1, over a network on which a
 * model's transfer takes 0.6 of an iteration (as 7.5 MB models over 10 Gb/s do): the
 * estimate must be within 10% of the peak summary.json reports, on both sides. Each run
 * stops after 500 iterations (5 a worker; 10 simulated s at most): the runtime writes a
 * protocol's worst case of snapshot copies (proto_ops.copies) at set-up, so the peak is there
 * before the first iteration, and five iterations a worker are enough for anything that grows
 * past it in steady state to show (the densest graphs copy a model per neighbour in each) and
 * for every protocol's default period to come round (easgd's exchange every tau = 4 steps: a
 * difference in flight to each worker; with 2 a worker its peak was 0.71 of its estimate).
 * Each run is a Check child of its own (fork mode), so the peak is that run's, plus the
 * test binary. The runs: every registered protocol at its defaults (the registry's list, with
 * one server host), then the variants below. A few seconds a run (syncswitch's about a
 * minute), 42 runs: in the slow suite.
 *
 * The peak is meaningless under AddressSanitizer (shadow memory, quarantine) and across
 * runs in one process (CK_FORK=no): the test says so and checks nothing there. Snapshot
 * checking (HETSIM_CHECK_SNAPSHOTS=1, set for every test) keeps a copy per alias that a
 * normal run does not have: it is turned off for these runs. */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "harness.h"
#include "runtime/run.h"
#include "scenario/scenario.h"

#if defined(__SANITIZE_ADDRESS__)
#define MEMORY_UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define MEMORY_UNDER_ASAN 1
#endif
#endif
#ifndef MEMORY_UNDER_ASAN
#define MEMORY_UNDER_ASAN 0
#endif

static const char scenario[] =
    "{\"name\": \"memory\", \"seed\": 3, \"workers\": 100,\n"
    " \"compute\": {\"iteration_ms\": 10, \"jitter_sigma\": 0.2},\n"
    " \"network\": {\"bandwidth_gbps\": 1.5, \"latency_us\": 50},\n"
    " \"workload\": {\"dataset\": {\"name\": \"synthetic\", \"samples\": 12000,\n"
    "                              \"test_samples\": 2000, \"dim\": 784},\n"
    "              \"model\": {\"name\": \"mlp\", \"hidden\": [256, 256]},\n"
    "              \"batch\": 1, \"lr\": 0.01},\n"
    " \"protocol\": {\"name\": \"allreduce\"},\n"
    " \"stop\": {\"iterations\": 500, \"time_s\": 10},\n"
    " \"eval\": {\"every_s\": 100, \"samples\": 100}}\n";

/* The registry's protocols at their defaults (with one server host, harness_protocol), then
 * these variants: the protocol object and the server hosts it needs. */
static const struct {
    const char *protocol;
    const char *servers;
} extras[] = {
    { "{\"name\": \"allreduce\", \"bucket_mb\": 0.25}", "0" },
    { "{\"name\": \"easgd\", \"tau\": 1}", "1" },
    { "{\"name\": \"ps\", \"mode\": \"asp\"}", "1" },
    { "{\"name\": \"ps\", \"mode\": \"ssp\"}", "1" },
    { "{\"name\": \"ps\", \"shards\": 4}", "4" },
    { "{\"name\": \"ps\", \"mode\": \"asp\", \"shards\": 8, \"placement\": \"colocated\"}", "0" },
    { "{\"name\": \"ps\", \"shards\": 100, \"placement\": \"colocated\"}", "0" },
    { "{\"name\": \"syncswitch\", \"shards\": 8, \"placement\": \"colocated\"}", "0" },
    { "{\"name\": \"syncswitch\", \"shards\": 100, \"placement\": \"colocated\"}", "0" },
    { "{\"name\": \"dpsgd\", \"graph\": \"torus\"}", "0" },
    { "{\"name\": \"dpsgd\", \"graph\": \"exponential\"}", "0" },
    { "{\"name\": \"dpsgd\", \"graph\": \"complete\"}", "0" },
    { "{\"name\": \"dpsgd\", \"graph\": \"star\"}", "0" },
    { "{\"name\": \"adpsgd\", \"graph\": \"ring\"}", "0" },
    { "{\"name\": \"hop\", \"backup_workers\": 0, \"max_iteration_gap\": 0}", "0" },
    { "{\"name\": \"hop\", \"graph\": \"exponential\", \"queue_capacity\": 4, \"staleness\": 2}",
      "0" },
    { "{\"name\": \"hop\", \"graph\": \"double_ring\", \"skip\": true, \"late_updates\": \"drop\"}",
      "0" },
    { "{\"name\": \"hop\", \"graph\": \"directed_torus\"}", "0" },
    { "{\"name\": \"hpsgd\", \"flush\": \"newest\"}", "0" },
    { "{\"name\": \"ripples\", \"groups\": \"random\"}", "0" },
    { "{\"name\": \"ripples\", \"groups\": \"buffer\"}", "0" },
    { "{\"name\": \"ripples\", \"groups\": \"division\", \"group_size\": 4}", "0" },
    { "{\"name\": \"ripples\", \"groups\": \"static\", \"grid\": [10, 10]}", "0" },
    { "{\"name\": \"moshpit\", \"grid\": [10, 10]}", "0" },
    { "{\"name\": \"moshpit\", \"groups\": \"random\", \"group_size\": 16}", "0" },
    { "{\"name\": \"moshpit\", \"grid\": [10, 10], \"form\": \"keys\", \"matchmaking_ms\": 20}",
      "0" },
    { "{\"name\": \"sgp\", \"peers\": 4}", "0" },
    { "{\"name\": \"diloco\", \"outer_lr\": 1, \"outer_momentum\": 0}", "0" },
};
#define NEXTRAS (sizeof(extras) / sizeof(extras[0]))

/* Why the peak cannot be compared here, or NULL. */
static const char *no_measure(void)
{
    if (MEMORY_UNDER_ASAN)
        return "AddressSanitizer's shadow memory and quarantine are in the peak resident set";
    const char *fork = getenv("CK_FORK");
    if (fork != NULL && strcmp(fork, "no") == 0)
        return "CK_FORK=no: all runs share one process and its peak";
    return NULL;
}

START_TEST(every_protocol_s_memory_estimate_is_within_10_percent_of_its_peak)
{
    const char *why = no_measure();
    if (why != NULL) {
        printf("memory: skipped (%s)\n", why);
        return;
    }
    setenv("HETSIM_CHECK_SNAPSHOTS", "0", 1); /* this child's runs only */
    char protocol[256], servers[64], json[128];
    size_t nreg = harness_protocols(), i = (size_t)_i;
    const char *object = json;
    if (i < nreg) {
        harness_protocol(i, json, sizeof(json));
        snprintf(servers, sizeof(servers), "servers=%d", HARNESS_PROTOCOL_SERVERS);
    } else {
        object = extras[i - nreg].protocol;
        harness_expect_registered(object);
        snprintf(servers, sizeof(servers), "servers=%s", extras[i - nreg].servers);
    }
    snprintf(protocol, sizeof(protocol), "protocol=%s", object);
    const char *sets[] = { protocol, servers };
    sim_scenario *sc = harness_load(scenario, "memory.json", sets, 2);
    char *dir = harness_tmpdir("memory");
    sim_run_summary sum = harness_run(sc, dir, NULL, NULL);
    double est = (double)sum.memory_estimate_bytes, peak = (double)sum.peak_rss_bytes;
    printf("%-90s estimate %7.1f MiB, peak %7.1f MiB, peak/estimate %.3f\n", object,
           est / 1048576.0, peak / 1048576.0, peak / est);
    /* summary.json's wall line carries the same estimate, next to the peak. */
    char *summary = harness_slurp(dir, "summary.json");
    char field[64];
    snprintf(field, sizeof(field), "\"memory_estimate_bytes\": %llu",
             (unsigned long long)sum.memory_estimate_bytes);
    ck_assert_msg(strstr(summary, field) != NULL, "summary.json has no %s", field);
    free(summary);
    ck_assert_msg(peak >= 0.9 * est && peak <= 1.1 * est,
                  "%s: estimate %.1f MiB, peak resident set %.1f MiB (peak/estimate %.3f)", object,
                  est / 1048576.0, peak / 1048576.0, peak / est);
    harness_cleanup(dir);
    sim_scenario_destroy(sc);
}
END_TEST

Suite *test_suite(void)
{
    Suite *s = suite_create("memory");
    TCase *tc = tcase_create("estimate");
    tcase_add_loop_test(tc, every_protocol_s_memory_estimate_is_within_10_percent_of_its_peak, 0,
                        (int)(harness_protocols() + NEXTRAS));
    tcase_set_timeout(tc, 300); /* syncswitch: 115 s of 500 iterations at load average 17 */
    suite_add_tcase(s, tc);
    return s;
}
