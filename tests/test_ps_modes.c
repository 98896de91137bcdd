/* The parameter server (protocols/ps.c) through full runs, its modes and failures: ASP loses
 * only a slow worker's share; SSP never lets the clock gap exceed s + 1; runs with failures
 * never stall unless a colocated shard's host is gone for good (helpers in
 * tests/harness_ps.h). */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_rng.h>

#include "harness.h"
#include "harness_ps.h"
#include "runtime/ctx.h"
#include "runtime/run.h"
#include "scenario/scenario.h"
#include "sim/layers.h"

/* Samples per simulated second of a timing-only run. */
static double throughput(const char *json, const char *const *sets, size_t n)
{
    sim_scenario *sc = harness_load(json, "ps.json", sets, n);
    sim_run_summary sum = harness_run(sc, NULL, NULL, NULL);
    ck_assert_str_eq(sum.stop_reason, "time");
    sim_scenario_destroy(sc);
    return (double)sum.samples / ((double)sum.sim_ns / 1e9);
}

START_TEST(asp_loses_only_the_slow_workers_share_of_throughput)
{
    /* 8 workers of C = 100 ms (jitter 0.05), one of them 4x slower. Under ASP nobody waits
     * for it, so throughput falls to (7 + 1/4) / 8 = 0.90625 of the full one (measured:
     * 0.90622). Tolerance 0.005: a 60 s run counts whole iterations, cutting off at most
     * one per worker at the stop (8 of ~4600, 0.17%, in each of the two runs), the jitter's
     * sampling error is about 0.05 / sqrt(4600) = 0.07%, and the pull and push (~0.2 ms
     * against 100 ms of compute) slow both runs alike; together under 0.45% of 0.906. Under
     * BSP every round waits for the slow worker: throughput falls to about 1/4 (measured
     * 0.271: the fast rounds also wait for the slowest of 8 jittered workers). */
    static const char json[] =
        "{\"seed\": 4242, \"workers\": 8, \"servers\": 2,"
        " \"compute\": {\"iteration_ms\": 100, \"jitter_sigma\": 0.05},"
        " \"network\": {\"bandwidth_gbps\": 10, \"latency_us\": 5},"
        " \"workload\": {\"model\": {\"name\": \"none\"}, \"message_bytes\": 100000},"
        " \"protocol\": {\"name\": \"ps\", \"mode\": \"asp\", \"shards\": 2},"
        " \"stop\": {\"time_s\": 60}, \"eval\": {\"every_s\": 10}}";
    const char *slow = "stragglers=[{\"kind\": \"fixed\", \"workers\": [3], \"slowdown\": 4}]";
    const char *asp_slow[] = { slow };
    double ratio = throughput(json, asp_slow, 1) / throughput(json, NULL, 0);
    ck_assert_double_eq_tol(ratio, 7.25 / 8.0, 0.005);
    const char *bsp[] = { "protocol.mode=bsp" }, *bsp_slow[] = { "protocol.mode=bsp", slow };
    double bsp_ratio = throughput(json, bsp_slow, 2) / throughput(json, bsp, 1);
    ck_assert_double_lt(bsp_ratio, 0.3);
    ck_assert_double_gt(bsp_ratio, 0.25);
}
END_TEST

/* ---- SSP ------------------------------------------------------------------------------ */

/* Replays events.csv: at every "computed" event (worker w finishes, and pushes, its
 * iteration c_w + 1) the gap c_w + 1 - min_v c_v, before the push. Returns its maximum. */
static uint64_t replay_gap(const char *dir, uint32_t n)
{
    char *s = harness_slurp(dir, "events.csv");
    uint64_t clock[16] = { 0 }, gap = 0;
    for (char *line = strchr(s, '\n'); line != NULL && line[1] != '\0';
         line = strchr(line + 1, '\n')) {
        long long t, w;
        char what[16];
        if (sscanf(line + 1, "%lld,%15[a-z],%lld", &t, what, &w) != 3 ||
            strcmp(what, "computed") != 0)
            continue;
        ck_assert_int_lt(w, n);
        uint64_t lo = UINT64_MAX;
        for (uint32_t v = 0; v < n; v++)
            lo = clock[v] < lo ? clock[v] : lo;
        gap = clock[w] + 1 - lo > gap ? clock[w] + 1 - lo : gap;
        clock[w]++;
    }
    free(s);
    return gap;
}

START_TEST(ssp_never_lets_the_clock_gap_exceed_staleness_plus_one)
{
    /* 20 clusters drawn here: 3..8 workers of random speeds, one or two fixed stragglers
     * (1.5x..6x), random slowdowns, heavy jitter, 1..3 shards, staleness 0..3. The gap
     * between the iterations a worker has started and those the slowest has finished is at
     * most s + 1 (the protocol's own count and a replay of the trace agree), and reaches it:
     * the stragglers make the gate bind. The same clusters under ASP drift past it. */
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 2385);
    for (int seed = 0; seed < 20; seed++) {
        uint32_t n = 3 + (uint32_t)gsl_rng_uniform_int(r, 6);
        uint32_t s = (uint32_t)gsl_rng_uniform_int(r, 4);
        uint32_t K = 1 + (uint32_t)gsl_rng_uniform_int(r, 3);
        char json[1024], speeds[256] = "";
        size_t len = 0;
        for (uint32_t w = 0; w < n; w++)
            len += (size_t)snprintf(speeds + len, sizeof(speeds) - len, "%s%.3f", w ? ", " : "",
                                    0.5 + gsl_rng_uniform(r));
        uint32_t a = (uint32_t)gsl_rng_uniform_int(r, n), b = (uint32_t)gsl_rng_uniform_int(r, n);
        double fa = 1.5 + 4.5 * gsl_rng_uniform(r), fb = 1.5 + 4.5 * gsl_rng_uniform(r);
        char second[96] = "";
        if (b != a)
            snprintf(second, sizeof(second),
                     ", {\"kind\": \"fixed\", \"workers\": [%u], \"slowdown\": %.3f}", b, fb);
        snprintf(json, sizeof(json),
                 "{\"seed\": %d, \"workers\": %u, \"servers\": %u,"
                 " \"compute\": {\"iteration_ms\": 10, \"jitter_sigma\": 0.3, \"speeds\": [%s]},"
                 " \"stragglers\": [{\"kind\": \"fixed\", \"workers\": [%u], \"slowdown\": %.3f}%s,"
                 "  {\"kind\": \"random\", \"probability\": 0.1, \"slowdown\": 3}],"
                 " \"network\": {\"bandwidth_gbps\": 1, \"latency_us\": 40},"
                 " \"workload\": {\"model\": {\"name\": \"none\"}, \"message_bytes\": 200000},"
                 " \"protocol\": {\"name\": \"ps\", \"mode\": \"ssp\", \"staleness\": %u,"
                 " \"shards\": %u}, \"stop\": {\"time_s\": 2}, \"output\": {\"events\": true}}",
                 1000 + seed, n, K, speeds, a, fa, second, s, K);
        sim_scenario *sc = harness_load(json, "ps.json", NULL, 0);
        char *dir = harness_tmpdir("ps");
        harness_run(sc, dir, NULL, NULL);
        double reported = harness_report_value(dir, "max_clock_gap");
        ck_assert_msg(reported == s + 1.0, "seed %d: s = %u, max_clock_gap = %g", seed, s,
                      reported);
        ck_assert_uint_le(replay_gap(dir, n), s + 1);
        sim_scenario_destroy(sc);
        const char *asp[] = { "protocol={\"name\": \"ps\", \"mode\": \"asp\"}" };
        sc = harness_load(json, "ps.json", asp, 1);
        harness_run(sc, dir, NULL, NULL);
        ck_assert_uint_gt(replay_gap(dir, n), s + 1);
        sim_scenario_destroy(sc);
        harness_cleanup(dir);
    }
    gsl_rng_free(r);
}
END_TEST

START_TEST(ssp_with_zero_staleness_keeps_workers_in_lockstep)
{
    /* s = 0: nobody starts iteration c + 1 before every worker has pushed c, so at any
     * moment finished counts differ by at most one, despite a 5x straggler. */
    const char *sets[] = { "workers=6",
                           "stragglers=[{\"kind\": \"fixed\", \"workers\": [4], \"slowdown\": 5}]",
                           "compute.jitter_sigma=0.4",
                           "protocol={\"name\": \"ps\", \"mode\": \"ssp\", \"staleness\": 0}",
                           "stop={\"time_s\": 1.337}" };
    sim_scenario *sc = harness_load(pst_none_json, "ps.json", sets, 5);
    char *dir = harness_tmpdir("ps");
    harness_run(sc, dir, NULL, NULL);
    uint64_t it[6], fnv[6], lo = UINT64_MAX, hi = 0;
    ck_assert_uint_eq(pst_worker_rows(dir, it, fnv, 6), 6);
    for (size_t w = 0; w < 6; w++) {
        lo = it[w] < lo ? it[w] : lo;
        hi = it[w] > hi ? it[w] : hi;
    }
    ck_assert_uint_ge(lo, 5);
    ck_assert_uint_le(hi - lo, 1);
    ck_assert_double_eq(harness_report_value(dir, "max_clock_gap"), 1);
    sim_scenario_destroy(sc);
    harness_cleanup(dir);
}
END_TEST

/* ---- failures ------------------------------------------------------------------------- */

static const char *const modes[] = { "bsp", "asp", "ssp" };

START_TEST(randomized_runs_with_failures_never_stall)
{
    /* For each mode and placement, 4 clusters with one or two workers failing and
     * recovering at random times (a colocated failure takes a shard down with its worker,
     * stalling every pull until it is back), random slowdowns and jitter. Every run must
     * end by time, none as stalled, and keep training afterwards. Odd rounds use the real
     * model (tensors through failures), even ones the timing-only model. */
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 9001);
    for (int i = 0; i < 24; i++) {
        const char *mode = modes[i % 3];
        bool colocated = (i / 3) % 2 == 1, real = (i / 6) % 2 == 1;
        uint32_t n = 2 + (uint32_t)gsl_rng_uniform_int(r, 5);
        uint32_t K = 1 + (uint32_t)gsl_rng_uniform_int(r, n < 3 ? n : 3);
        uint32_t a = (uint32_t)gsl_rng_uniform_int(r, n), b = (uint32_t)gsl_rng_uniform_int(r, n);
        double a0 = 0.05 + 0.3 * gsl_rng_uniform(r), a1 = a0 + 0.02 + 0.3 * gsl_rng_uniform(r);
        double b0 = 0.05 + 0.6 * gsl_rng_uniform(r), b1 = b0 + 0.02 + 0.3 * gsl_rng_uniform(r);
        char second[128] = "", json[1400];
        if (b != a)
            snprintf(second, sizeof(second),
                     "{\"kind\": \"failure\", \"workers\": [%u], \"at_s\": %.4f, "
                     "\"recover_s\": %.4f},",
                     b, b0, b1);
        snprintf(json, sizeof(json),
                 "{\"seed\": %d, \"workers\": %u, \"servers\": %u,"
                 " \"compute\": {\"iteration_ms\": 7, \"jitter_sigma\": 0.4},"
                 " \"stragglers\": [{\"kind\": \"failure\", \"workers\": [%u], \"at_s\": %.4f,"
                 " \"recover_s\": %.4f}, %s"
                 " {\"kind\": \"random\", \"probability\": 0.2, \"slowdown\": 3}],"
                 " \"network\": {\"bandwidth_gbps\": 1, \"latency_us\": 30},"
                 " \"workload\": %s,"
                 " \"protocol\": {\"name\": \"ps\", \"mode\": \"%s\", \"shards\": %u,"
                 " \"placement\": \"%s\"},"
                 " \"stop\": {\"time_s\": 1.5}, \"eval\": {\"every_s\": 0.1, \"samples\": 200}}",
                 500 + i, n, K, a, a0, a1, second,
                 real ? "{\"dataset\": {\"name\": \"synthetic\", \"samples\": 2000, "
                        "\"test_samples\": 200, \"dim\": 10, \"classes\": 3}, \"model\": "
                        "{\"name\": \"mlp\", \"hidden\": [8]}, \"batch\": 8, \"lr\": 0.05, "
                        "\"momentum\": 0.5}"
                      : "{\"model\": {\"name\": \"none\"}, \"message_bytes\": 300000}",
                 mode, K, colocated ? "colocated" : "servers");
        sim_scenario *sc = harness_load(json, "ps.json", NULL, 0);
        char *dir = harness_tmpdir("ps");
        sim_run_summary sum = harness_run(sc, dir, NULL, NULL);
        ck_assert_msg(strcmp(sum.stop_reason, "time") == 0, "run %d (%s): %s", i, mode,
                      sum.stop_reason);
        /* Training went on after the last recovery: the last evaluation interval counted
         * iterations. */
        char *m = harness_slurp(dir, "metrics.csv");
        char *last = m + strlen(m) - 1;
        while (last > m && last[-1] != '\n')
            last--;
        double sps = strtod(strrchr(last, ',') + 1, NULL);
        ck_assert_msg(sps > 0, "run %d (%s): no progress at the end", i, mode);
        free(m);
        sim_scenario_destroy(sc);
        harness_cleanup(dir);
    }
    gsl_rng_free(r);
}
END_TEST

/* The samples per second of metrics.csv's last row (its last column). */
static double last_sps(const char *dir)
{
    char *m = harness_slurp(dir, "metrics.csv");
    char *last = m + strlen(m) - 1;
    while (last > m && last[-1] != '\n')
        last--;
    double sps = strtod(strrchr(last, ',') + 1, NULL);
    free(m);
    return sps;
}

START_TEST(a_colocated_shard_whose_worker_never_recovers_moves_after_failover_s)
{
    /* Shard 1 lives on worker 1, which fails for good at 0.25 s: every pull needs its
     * slice. With failover_s 0 nothing can happen after the work in flight drains, and the
     * run stops as stalled then, in every mode, at the same time whether evaluations are
     * 0.5 s or 7 s apart (it stalled at the next evaluation), and worker 0's link window at
     * 2 s, which changes nothing with no message in flight, does not hold it off. By default
     * (1 s) worker 2, the next live one, takes the shard over at 1.25 s and training goes on
     * to the end. With the shards on server hosts the same failure only removes a worker. */
    for (int m = 0; m < 3; m++) {
        char proto[160], dflt[160];
        snprintf(proto, sizeof(proto),
                 "protocol={\"name\": \"ps\", \"mode\": \"%s\", \"shards\": 2, "
                 "\"placement\": \"colocated\", \"failover_s\": 0}",
                 modes[m]);
        snprintf(dflt, sizeof(dflt),
                 "protocol={\"name\": \"ps\", \"mode\": \"%s\", \"shards\": 2, "
                 "\"placement\": \"colocated\"}",
                 modes[m]);
        const char *sets[] = {
            proto,
            "stragglers=[{\"kind\": \"failure\", \"workers\": [1], \"at_s\": 0.25}, {\"kind\": "
            "\"link\", \"workers\": [0], \"from_s\": 2, \"to_s\": 3, \"extra_latency_ms\": 5}]",
            "eval.every_s=0.5", "stop.time_s=10"
        };
        sim_scenario *sc = harness_load(pst_none_json, "ps.json", sets, 4);
        char *dir = harness_tmpdir("ps");
        sim_run_summary sum = harness_run(sc, dir, NULL, NULL);
        ck_assert_str_eq(sum.stop_reason, "stalled");
        ck_assert_int_gt(sum.sim_ns, 250000000);
        ck_assert_int_lt(sum.sim_ns, 500000000);
        ck_assert_double_eq(harness_report_value(dir, "shard_failovers"), 0);
        sim_scenario_destroy(sc);
        sets[2] = "eval.every_s=7";
        sc = harness_load(pst_none_json, "ps.json", sets, 4);
        sim_run_summary rare = harness_run(sc, dir, NULL, NULL);
        ck_assert_str_eq(rare.stop_reason, "stalled");
        ck_assert_int_eq(rare.sim_ns, sum.sim_ns);
        ck_assert_uint_eq(rare.samples, sum.samples);
        sim_scenario_destroy(sc);
        sets[2] = "eval.every_s=0.5";
        sets[0] = dflt;
        sc = harness_load(pst_none_json, "ps.json", sets, 4);
        sum = harness_run(sc, dir, NULL, NULL);
        ck_assert_str_eq(sum.stop_reason, "time");
        ck_assert_double_eq(harness_report_value(dir, "shard_failovers"), 1);
        ck_assert_double_gt(last_sps(dir), 0);
        sim_scenario_destroy(sc);
        sets[0] = "protocol.mode=bsp";
        sets[3] = "servers=1";
        sc = harness_load(pst_none_json, "ps.json", sets, 4);
        sum = harness_run(sc, dir, NULL, NULL);
        ck_assert_str_eq(sum.stop_reason, "time");
        sim_scenario_destroy(sc);
        harness_cleanup(dir);
    }
}
END_TEST

START_TEST(failovers_chain_wait_for_a_live_worker_and_survive_recoveries)
{
    /* 4 workers, one colocated shard each, every mode:
     * (a) worker 1 fails at 0.25 s and recovers at 2 s, after its shard moved to worker 2
     *     (1.25 s), which keeps it; worker 2 fails for good at 2.5 s and both its shards
     *     move to worker 3 at 3.5 s: 3 failovers, training to the end.
     * (b) 2 workers: worker 1 fails for good at 0.25 s, worker 0 is down from 0.5 s to 2 s:
     *     at 1.25 s nobody is live to take shard 1; worker 0, recovering, takes it: 1
     *     failover, training to the end. */
    const char *chain = "stragglers=[{\"kind\": \"failure\", \"workers\": [1], \"at_s\": 0.25,"
                        " \"recover_s\": 2}, {\"kind\": \"failure\", \"workers\": [2],"
                        " \"at_s\": 2.5}]";
    const char *none_live = "stragglers=[{\"kind\": \"failure\", \"workers\": [1], \"at_s\": 0.25},"
                            " {\"kind\": \"failure\", \"workers\": [0], \"at_s\": 0.5,"
                            " \"recover_s\": 2}]";
    for (int m = 0; m < 3; m++) {
        char mode[64];
        snprintf(mode, sizeof(mode), "protocol.mode=%s", modes[m]);
        for (int c = 0; c < 2; c++) {
            const char *sets[] = { "servers=0",
                                   mode,
                                   c == 0 ? chain : none_live,
                                   c == 0 ? "workers=4" : "workers=2",
                                   "eval.every_s=0.25",
                                   "stop.time_s=5" };
            sim_scenario *sc = harness_load(pst_none_json, "ps.json", sets, 6);
            char *dir = harness_tmpdir("ps");
            sim_run_summary sum = harness_run(sc, dir, NULL, NULL);
            ck_assert_msg(strcmp(sum.stop_reason, "time") == 0, "%s, case %d: %s", modes[m], c,
                          sum.stop_reason);
            ck_assert_double_eq(harness_report_value(dir, "shard_failovers"), c == 0 ? 3 : 1);
            ck_assert_msg(last_sps(dir) > 0, "%s, case %d: no progress at the end", modes[m], c);
            sim_scenario_destroy(sc);
            harness_cleanup(dir);
        }
    }
}
END_TEST

START_TEST(bsp_rounds_go_on_with_the_live_workers)
{
    /* Worker 2 of 4 fails at 55 ms, while its round-0 gradient is on the wire (a round
     * takes about 90 ms): the push is lost, round 0 closes with the three live workers'
     * gradients, and later rounds have three members until worker 2 returns at 0.5 s and
     * rejoins. */
    const char *sets[] = { "stragglers=[{\"kind\": \"failure\", \"workers\": [2], \"at_s\": 0.055, "
                           "\"recover_s\": 0.5}]",
                           "stop.time_s=1" };
    sim_scenario *sc = harness_load(pst_none_json, "ps.json", sets, 2);
    char *dir = harness_tmpdir("ps");
    sim_run_summary sum = harness_run(sc, dir, NULL, NULL);
    ck_assert_str_eq(sum.stop_reason, "time");
    uint64_t it[4], fnv[4];
    ck_assert_uint_eq(pst_worker_rows(dir, it, fnv, 4), 4);
    double rounds = harness_report_value(dir, "rounds");
    ck_assert_uint_eq(it[0], it[1]);
    ck_assert_uint_eq(it[0], it[3]);
    ck_assert_uint_lt(it[2], it[0]); /* it missed the rounds while it was down */
    ck_assert_uint_ge(it[2], 3);     /* and came back */
    ck_assert_double_ge(rounds, (double)it[0] - 1);
    ck_assert_double_le(rounds, (double)it[0]);
    sim_scenario_destroy(sc);
    harness_cleanup(dir);
}
END_TEST

START_TEST(overlap_survives_failures_with_a_layered_profile)
{
    /* Failures of workers and colocated shards while slices are pushed during backward:
     * runs end by time, keep training, and are deterministic. */
    for (int i = 0; i < 6; i++) {
        char json[1200];
        snprintf(json, sizeof(json),
                 "{\"seed\": %d, \"workers\": 5, \"servers\": %d,"
                 " \"compute\": {\"iteration_ms\": 7, \"jitter_sigma\": 0.4, \"profile\":"
                 " \"tests/data/profile_buckets.csv\"},"
                 " \"stragglers\": [{\"kind\": \"failure\", \"workers\": [1], \"at_s\": 0.%d3,"
                 " \"recover_s\": 0.%d7}, {\"kind\": \"failure\", \"workers\": [3], \"at_s\": 0.31,"
                 " \"recover_s\": 0.52}],"
                 " \"network\": {\"bandwidth_gbps\": 10, \"latency_us\": 30},"
                 " \"workload\": {\"dataset\": {\"name\": \"synthetic\", \"samples\": 2000,"
                 " \"test_samples\": 200, \"dim\": 10, \"classes\": 3}, \"model\":"
                 " {\"name\": \"mlp\", \"hidden\": [8]}, \"batch\": 8, \"lr\": 0.05},"
                 " \"protocol\": {\"name\": \"ps\", \"mode\": \"%s\"},"
                 " \"stop\": {\"time_s\": 1}, \"eval\": {\"every_s\": 0.1, \"samples\": 200}}",
                 700 + i, i % 2 == 0 ? 0 : 3, 1 + i, 2 + i, modes[i % 3]);
        char *dirs[2];
        sim_run_summary sum = harness_run_pair(harness_load(json, "ps.json", NULL, 0),
                                               harness_load(json, "ps.json", NULL, 0), "ps", dirs);
        ck_assert_msg(strcmp(sum.stop_reason, "time") == 0, "run %d: %s", i, sum.stop_reason);
        ck_assert_msg(last_sps(dirs[0]) > 0, "run %d: no progress at the end", i);
        harness_cleanup_pair(dirs);
    }
}
END_TEST

START_TEST(a_lost_shard_stalls_the_run_at_once_whatever_timers_or_failures_come)
{
    /* Worker 2, host of shard 2 (colocated, failover_s 0), fails for good at 0.1371 s: every
     * pull needs shard 2, so nothing can compute once the work in flight has drained, and the
     * run stalls then (issue 38, item 10). Sync-Switch's switch timer (bsp_fraction 0.5 of
     * 4 s: 2 s) cannot revive it: its drain waits for the pulls that wait for the shard. Nor
     * can a failure to come (worker 1 at 2.731 s): it removes a worker, never a lost shard.
     * Both stopped at the timer or the failure before. A recovery of worker 2 at 2.731 s
     * can: that run goes on to its stop time. */
    const char *protos[] = {
        "protocol={\"name\": \"syncswitch\", \"placement\": \"colocated\", \"failover_s\": 0, "
        "\"bsp_fraction\": 0.5}",
        "protocol={\"name\": \"ps\", \"placement\": \"colocated\", \"failover_s\": 0}",
    };
    const char *rules[] = {
        "stragglers=[{\"kind\": \"failure\", \"workers\": [2], \"at_s\": 0.1371}]",
        "stragglers=[{\"kind\": \"failure\", \"workers\": [2], \"at_s\": 0.1371}, {\"kind\": "
        "\"failure\", \"workers\": [1], \"at_s\": 2.731}]",
        "stragglers=[{\"kind\": \"failure\", \"workers\": [2], \"at_s\": 0.1371, \"recover_s\": "
        "2.731}]",
    };
    char *dir = harness_tmpdir("ps");
    for (size_t p = 0; p < 2; p++) {
        sim_run_summary first = { 0 };
        for (size_t r = 0; r < 3; r++) {
            const char *sets[] = { protos[p], rules[r], "stop.time_s=4" };
            sim_scenario *sc = harness_load(pst_none_json, "ps.json", sets, 3);
            sim_run_summary sum = harness_run(sc, dir, NULL, NULL);
            sim_scenario_destroy(sc);
            if (r == 2) {
                ck_assert_str_eq(sum.stop_reason, "time");
                continue;
            }
            ck_assert_str_eq(sum.stop_reason, "stalled");
            ck_assert_int_gt(sum.sim_ns, 137100000);
            ck_assert_int_lt(sum.sim_ns, 500000000);
            if (p == 0)
                ck_assert_double_eq(harness_report_value(dir, "switch_s"), -1);
            if (r == 0)
                first = sum;
            ck_assert_int_eq(sum.sim_ns, first.sim_ns);
            ck_assert_uint_eq(sum.samples, first.samples);
        }
    }
    harness_cleanup(dir);
}
END_TEST

Suite *test_suite(void)
{
    Suite *s = suite_create("ps_modes");
    TCase *modes_tc = tcase_create("modes");
    tcase_add_test(modes_tc, asp_loses_only_the_slow_workers_share_of_throughput);
    tcase_add_test(modes_tc, ssp_never_lets_the_clock_gap_exceed_staleness_plus_one);
    tcase_add_test(modes_tc, ssp_with_zero_staleness_keeps_workers_in_lockstep);
    tcase_set_timeout(modes_tc, 240);
    suite_add_tcase(s, modes_tc);
    TCase *fail = tcase_create("failures");
    tcase_add_test(fail, randomized_runs_with_failures_never_stall);
    tcase_add_test(fail, a_colocated_shard_whose_worker_never_recovers_moves_after_failover_s);
    tcase_add_test(fail, failovers_chain_wait_for_a_live_worker_and_survive_recoveries);
    tcase_add_test(fail, bsp_rounds_go_on_with_the_live_workers);
    tcase_add_test(fail, overlap_survives_failures_with_a_layered_profile);
    tcase_add_test(fail, a_lost_shard_stalls_the_run_at_once_whatever_timers_or_failures_come);
    tcase_set_timeout(fail, 240);
    suite_add_tcase(s, fail);
    return s;
}
