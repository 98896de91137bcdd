/* Randomized runs of every registered protocol: random cluster sizes, speeds, jitter,
 * topologies, message sizes, stragglers and a failure with recovery. Each run must end
 * without error, never stall, and every worker must keep making progress in the second half
 * of the run (a protocol that deadlocks part of the cluster fails here even when the rest
 * goes on). The failure window closes before the second half starts. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_rng.h>

#include "harness.h"
#include "runtime/ctx.h"
#include "runtime/proto.h"
#include "runtime/run.h"
#include "scenario/scenario.h"

#define SEEDS   12
#define MAX_W   12
#define HALF_NS 10000000000LL /* the run lasts 20 simulated seconds */

typedef struct progress {
    uint32_t workers;
    uint64_t at_half[MAX_W]; /* iterations of each worker at the evaluation at 10 s */
    uint64_t at_end[MAX_W];
    bool seen_half;
} progress;

static void observe(void *ud, sim_ctx *ctx)
{
    progress *p = ud;
    for (uint32_t w = 0; w < p->workers; w++) {
        if (sim_ctx_now(ctx) == HALF_NS)
            p->at_half[w] = sim_ctx_count(ctx, w, 0);
        p->at_end[w] = sim_ctx_count(ctx, w, 0);
    }
    p->seen_half |= sim_ctx_now(ctx) == HALF_NS;
}

/* Writes a random scenario for `protocol` into buf. */
static void random_scenario(char *buf, size_t size, const char *protocol, gsl_rng *r,
                            uint32_t workers, bool real)
{
    char speeds[256] = "", stragglers[512] = "", workload[256];
    for (uint32_t w = 0; w < workers; w++) {
        size_t used = strlen(speeds);
        snprintf(speeds + used, sizeof(speeds) - used, "%s%.3f", w > 0 ? ", " : "",
                 0.3 + 1.7 * gsl_rng_uniform(r));
    }
    uint32_t failed = (uint32_t)gsl_rng_uniform_int(r, workers);
    double at = 0.5 + 3.0 * gsl_rng_uniform(r), back = at + 0.5 + 3.0 * gsl_rng_uniform(r);
    double prob = 0.2 * gsl_rng_uniform(r), slowdown = 1.0 + 5.0 * gsl_rng_uniform(r);
    uint32_t link_worker = (uint32_t)gsl_rng_uniform_int(r, workers);
    double extra_ms = 20.0 * gsl_rng_uniform(r), factor = 0.05 + 0.95 * gsl_rng_uniform(r);
    snprintf(stragglers, sizeof(stragglers),
             "{\"kind\": \"random\", \"probability\": %.3f, \"slowdown\": %.2f},"
             "{\"kind\": \"link\", \"workers\": [%u], \"from_s\": 1, \"to_s\": 6,"
             " \"extra_latency_ms\": %.2f, \"bandwidth_factor\": %.2f},"
             "{\"kind\": \"failure\", \"workers\": [%u], \"at_s\": %.3f, \"recover_s\": %.3f}",
             prob, slowdown, link_worker, extra_ms, factor, failed, at, back);
    if (real)
        snprintf(workload, sizeof(workload),
                 "{\"dataset\": {\"name\": \"synthetic\", \"samples\": 600, \"dim\": 6,"
                 " \"classes\": 3}, \"model\": {\"name\": \"softmax\"}, \"batch\": 4}");
    else
        snprintf(workload, sizeof(workload),
                 "{\"model\": {\"name\": \"none\"}, \"message_bytes\": %lu}",
                 1000ul + gsl_rng_uniform_int(r, 5000000));
    bool racks = gsl_rng_uniform(r) < 0.5;
    unsigned long seed = gsl_rng_get(r);
    double iter_ms = 5.0 + 50.0 * gsl_rng_uniform(r), jitter = 0.3 * gsl_rng_uniform(r);
    double gbps = 1.0 + 24.0 * gsl_rng_uniform(r), lat_us = 1.0 + 200.0 * gsl_rng_uniform(r);
    snprintf(buf, size,
             "{\"seed\": %lu, \"workers\": %u, \"servers\": 2,"
             " \"compute\": {\"iteration_ms\": %.2f, \"jitter_sigma\": %.2f, \"speeds\": [%s]},"
             " \"stragglers\": [%s],"
             " \"network\": {\"topology\": \"%s\", %s \"bandwidth_gbps\": %.2f,"
             " \"latency_us\": %.1f},"
             " \"workload\": %s, \"protocol\": {\"name\": \"%s\"},"
             " \"stop\": {\"time_s\": 20}, \"eval\": {\"every_s\": 1, \"samples\": 100}}",
             seed, workers, iter_ms, jitter, speeds, stragglers, racks ? "racks" : "star",
             racks ? "\"rack_size\": 3," : "", gbps, lat_us, workload, protocol);
}

static void run_one(const char *protocol, unsigned long seed, bool real)
{
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, seed);
    uint32_t workers = 2 + (uint32_t)gsl_rng_uniform_int(r, MAX_W - 1);
    char json[4096];
    random_scenario(json, sizeof(json), protocol, r, workers, real);
    gsl_rng_free(r);
    sim_err err;
    sim_err_clear(&err);
    sim_scenario *sc = sim_scenario_parse(json, strlen(json), "stress.json", NULL, 0, &err);
    ck_assert_msg(sc != NULL, "%s seed %lu: %s: %s", protocol, seed, err.path, err.msg);
    ck_assert_msg(harness_check(sc, &err) == 0, "%s seed %lu: %s: %s", protocol, seed, err.path,
                  err.msg);
    char *dir = harness_tmpdir("stress");
    progress p = { .workers = workers };
    sim_run_options opt = { .out_dir = dir, .observe = observe, .observe_ud = &p };
    sim_run_summary sum;
    int rc = sim_run(sc, proto_find(sc->protocol), &opt, &sum, &err);
    ck_assert_msg(rc == 0, "%s seed %lu: %s\n%s", protocol, seed, err.msg, json);
    ck_assert_msg(strcmp(sum.stop_reason, "time") == 0, "%s seed %lu: stopped: %s\n%s", protocol,
                  seed, sum.stop_reason, json);
    ck_assert(p.seen_half);
    if (getenv("HETSIM_STRESS_VERBOSE") != NULL)
        printf("%s seed %lu: %u workers, %" PRIu64 " iterations, %" PRIu64 " events\n", protocol,
               seed, workers, sum.iterations, sum.events);
    for (uint32_t w = 0; w < workers; w++)
        ck_assert_msg(p.at_end[w] > p.at_half[w],
                      "%s seed %lu: worker %u made no progress after 10 s (%" PRIu64 ")\n%s",
                      protocol, seed, w, p.at_end[w], json);
    harness_cleanup(dir);
    sim_scenario_destroy(sc);
}

START_TEST(every_protocol_survives_random_clusters_without_deadlock)
{
    size_t n;
    const proto_ops *const *all = proto_list(&n);
    ck_assert_int_lt(_i, (int)n);
    for (unsigned long seed = 1; seed <= SEEDS; seed++)
        run_one(all[_i]->name, 7919 * seed + (unsigned long)_i, false);
    /* A few with real tensors, to exercise the snapshot paths under failures too. */
    for (unsigned long seed = 1; seed <= 3; seed++)
        run_one(all[_i]->name, 104729 * seed + (unsigned long)_i, true);
}
END_TEST

Suite *test_suite(void)
{
    size_t n;
    proto_list(&n);
    Suite *s = suite_create("stress");
    TCase *tc = tcase_create("random");
    tcase_add_loop_test(tc, every_protocol_survives_random_clusters_without_deadlock, 0, (int)n);
    tcase_set_timeout(tc, 600);
    suite_add_tcase(s, tc);
    return s;
}
