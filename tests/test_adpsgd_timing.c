/* AD-PSGD end to end, its timing: exchanges worked out by hand, timeouts and retries, the
 * bipartite graph, wait-free throughput under a slow worker and randomized runs that never
 * stall (helpers in tests/harness_adpsgd.h). */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_rng.h>

#include "harness.h"
#include "harness_adpsgd.h"
#include "protocols/adpsgd_state.h"
#include "runtime/ctx.h"
#include "runtime/run.h"
#include "scenario/scenario.h"
#include "sim/tensor.h"

/* True if the trace holds the message (t, dst, src, kind, bytes) at index i of m (any index
 * if i is SIZE_MAX); *at receives its index. bytes 0 matches any size. */
static bool has_msg(const msg_line *m, size_t n, int64_t t, uint32_t dst, uint32_t src,
                    uint64_t kind, uint64_t bytes, size_t *at)
{
    for (size_t i = 0; i < n; i++)
        if (m[i].t == t && m[i].dst == dst && m[i].src == src && m[i].tag == kind &&
            (bytes == 0 || m[i].bytes == bytes)) {
            if (at != NULL)
                *at = i;
            return true;
        }
    return false;
}

/* Fails unless the trace of the run in dir holds the messages want[0..n), each (t, dst, src,
 * kind, bytes) as has_msg reads them. */
static void expect_messages(const char *dir, const uint64_t (*want)[5], size_t n)
{
    size_t nm;
    msg_line *ml = adpt_messages(dir, &nm);
    for (size_t k = 0; k < n; k++)
        ck_assert_msg(has_msg(ml, nm, (int64_t)want[k][0], (uint32_t)want[k][1],
                              (uint32_t)want[k][2], want[k][3], want[k][4], NULL),
                      "no message %zu", k);
    free(ml);
}

/* The spec's graph, worked out independently of protocols/adpsgd.c: offsets 1 and, for the
 * exponential graph, 1 + 2^m with 2^m <= N - 1; edges only between different parities. */
static bool edge(uint32_t n, bool ring, uint32_t a, uint32_t b)
{
    if (a % 2 == b % 2)
        return false;
    uint32_t diff = a > b ? a - b : b - a;
    if (diff == 1 || n - diff == 1)
        return true;
    for (uint32_t m = 1; !ring && ((uint64_t)1 << m) <= (uint64_t)n - 1; m++) {
        uint64_t d = (1 + ((uint64_t)1 << m)) % n;
        if (diff == d || n - diff == d)
            return true;
    }
    return false;
}

START_TEST(two_workers_exchange_in_two_transfers_worked_out_by_hand)
{
    /* At 0, 10, 20 and 30 ms worker 1 starts an iteration and sends its request; it arrives
     * 1.05 ms later and the reply 1.05 ms after that: commits at 2.1, 12.1, 22.1, 32.1 ms,
     * before the iteration's gradient is ready. */
    sim_scenario *sc = harness_load_file(adpt_pair_json, NULL, 0);
    char *dir = harness_tmpdir("adpsgd");
    sim_run_summary sum = harness_run(sc, dir, NULL, NULL);
    ck_assert_uint_eq(sum.iterations, 6);
    char *ev = harness_slurp(dir, "events.csv");
    static const uint64_t want[][5] = {
        { 1050000, 0, 1, 1, 1000000 },  { 2100000, 1, 0, 2, 1000000 },
        { 11050000, 0, 1, 1, 1000000 }, { 12100000, 1, 0, 2, 1000000 },
        { 21050000, 0, 1, 1, 1000000 }, { 22100000, 1, 0, 2, 1000000 },
        { 31050000, 0, 1, 1, 1000000 }, { 32100000, 1, 0, 2, 1000000 },
    };
    expect_messages(dir, want, 8);
    size_t nmsg;
    free(adpt_messages(dir, &nmsg));
    ck_assert_uint_eq(nmsg, 8);
    ck_assert_double_eq(adpt_report(dir, "exchanges"), 4);
    ck_assert_double_eq_tol(adpt_report(dir, "mean_exchange_s"), 0.0021, 1e-15);
    ck_assert_double_eq_tol(adpt_report(dir, "max_wait_s"), 0.0021, 1e-15);
    /* Default timeout: 4 (d + 1) transfers with d = 1: 8 * 1.05 ms. */
    ck_assert_double_eq_tol(adpt_report(dir, "exchange_timeout_s"), 0.0084, 1e-15);
    /* Both compute throughout, and each exchange (2.1 ms, four of them) overlaps their
     * computation: workers.csv's comm_overlap_s, part of compute_s. */
    harness_csv t = harness_csv_read(dir, "workers.csv");
    for (size_t w = 0; w < 2; w++) {
        ck_assert_double_eq_tol(harness_csv_num(&t, w, "compute_s"), 0.035, 1e-15);
        ck_assert_double_eq_tol(harness_csv_num(&t, w, "comm_overlap_s"), 4 * 0.0021, 1e-15);
    }
    harness_csv_free(&t);
    free(ev);
    sim_scenario_destroy(sc);
    harness_cleanup(dir);
}
END_TEST

START_TEST(requests_to_a_failed_passive_time_out_until_it_recovers)
{
    /* Worker 0 is down from 5 to 30 ms; the timeout is 3 ms. Worker 1's exchange of 0 ms
     * commits at 2.1 ms; at 10 ms it asks again, and again after each timeout (13, 16, ...,
     * 28 ms): seven requests dropped. The timeout at 31 ms (the seventh) sends a request
     * that 0, up since 30 ms, answers: commit at 31 + 2.1 ms. The iterations of 20 and 30
     * ms had none: one more exchange starts at that commit (done at 35.2 ms), and the
     * iteration of 40 ms commits at 42.1 ms. */
    const char *sets[] = { ("stragglers=[{\"kind\": \"failure\", \"workers\": [0], \"at_s\": "
                            "0.005, \"recover_s\": 0.03}]"),
                           "protocol.exchange_timeout_ms=3", "stop.time_s=0.045" };
    sim_scenario *sc = harness_load_file(adpt_pair_json, sets, 3);
    char *dir = harness_tmpdir("adpsgd");
    sim_run_summary sum = harness_run(sc, dir, NULL, NULL);
    ck_assert_uint_eq(sum.iterations, 5); /* worker 1 at 10-40 ms, worker 0 at 40 ms */
    ck_assert_double_eq(adpt_report(dir, "timeouts"), 7);
    ck_assert_double_eq(adpt_report(dir, "exchanges"), 4);
    ck_assert_double_eq(adpt_report(dir, "dropped"), 7);
    ck_assert_double_eq_tol(adpt_report(dir, "max_wait_s"), 0.0231, 1e-15);
    char *ev = harness_slurp(dir, "events.csv");
    {
        size_t nm, at;
        msg_line *ml = adpt_messages(dir, &nm);
        ck_assert(has_msg(ml, nm, 32050000, 0, 1, 1, 1000000, &at));
        ck_assert(at + 1 < nm && ml[at + 1].t == 33100000 && ml[at + 1].dst == 1 &&
                  ml[at + 1].src == 0 && ml[at + 1].tag == 2);
        ck_assert(has_msg(ml, nm, 34150000, 0, 1, 1, 1000000, NULL));
        ck_assert(has_msg(ml, nm, 35200000, 1, 0, 2, 1000000, NULL));
        free(ml);
    }
    {
        size_t nm;
        msg_line *ml = adpt_messages(dir, &nm);
        ck_assert(has_msg(ml, nm, 41050000, 0, 1, 1, 1000000, NULL));
        free(ml);
    }
    {
        size_t nm;
        msg_line *ml = adpt_messages(dir, &nm);
        ck_assert(has_msg(ml, nm, 42100000, 1, 0, 2, 1000000, NULL));
        free(ml);
    }
    free(ev);
    sim_scenario_destroy(sc);
    harness_cleanup(dir);
}
END_TEST

START_TEST(a_passive_serving_a_failed_active_serves_the_next_one)
{
    /* The exchange of 0 ms commits at 2.1 ms. Worker 1 fails at 11.5 ms, while worker 0's
     * reply (11.05 to 12.1 ms) is on its way to it: the reply is dropped and worker 0 is
     * free at once. Worker 1 recovers at 15 ms and asks again as it starts computing
     * (commit at 17.1 ms), and again at 25 ms: served at 26.05 ms, commit at 27.1 ms. */
    const char *sets[] = { "stragglers=[{\"kind\": \"failure\", \"workers\": [1], \"at_s\": "
                           "0.0115, \"recover_s\": 0.015}]",
                           "stop.time_s=0.03" };
    sim_scenario *sc = harness_load_file(adpt_pair_json, sets, 2);
    char *dir = harness_tmpdir("adpsgd");
    harness_run(sc, dir, NULL, NULL);
    ck_assert_double_eq(adpt_report(dir, "exchanges"), 3);
    ck_assert_double_eq(adpt_report(dir, "dropped"), 1);
    /* The cut service lasted 0.45 ms; the other one 1.05 ms. */
    ck_assert_double_eq_tol(adpt_report(dir, "max_serve_s"), 0.00105, 1e-15);
    char *ev = harness_slurp(dir, "events.csv");
    {
        size_t nm, at;
        msg_line *ml = adpt_messages(dir, &nm);
        ck_assert(has_msg(ml, nm, 26050000, 0, 1, 1, 1000000, &at));
        ck_assert(at + 1 < nm && ml[at + 1].t == 27100000 && ml[at + 1].dst == 1 &&
                  ml[at + 1].src == 0 && ml[at + 1].tag == 2);
        free(ml);
    }
    free(ev);
    sim_scenario_destroy(sc);
    harness_cleanup(dir);
}
END_TEST

START_TEST(an_iteration_that_starts_during_an_exchange_gets_its_own_at_the_commit)
{
    /* 6 MB messages take 6.05 ms, an exchange 12.1 ms: longer than an iteration. The
     * iteration of 10 ms starts during the first exchange (0 to 12.1 ms), so its exchange
     * starts at that commit, and so on (its gradient, ready at 20 ms during the second
     * exchange, is applied at once). */
    const char *sets[] = { "workload.message_bytes=6000000", "stop.time_s=0.05" };
    sim_scenario *sc = harness_load_file(adpt_pair_json, sets, 2);
    char *dir = harness_tmpdir("adpsgd");
    harness_run(sc, dir, NULL, NULL);
    char *ev = harness_slurp(dir, "events.csv");
    static const uint64_t want[][5] = {
        { 6050000, 0, 1, 1, 6000000 },  { 12100000, 1, 0, 2, 6000000 },
        { 18150000, 0, 1, 1, 6000000 }, { 24200000, 1, 0, 2, 6000000 },
        { 30250000, 0, 1, 1, 6000000 }, { 36300000, 1, 0, 2, 6000000 },
        { 42350000, 0, 1, 1, 6000000 }, { 48400000, 1, 0, 2, 6000000 },
    };
    expect_messages(dir, want, 8);
    ck_assert_double_eq(adpt_report(dir, "exchanges"), 4);
    free(ev);
    sim_scenario_destroy(sc);
    harness_cleanup(dir);
}
END_TEST

START_TEST(a_timed_out_request_is_retried_with_another_neighbour)
{
    /* Four workers; passive 0 is down for good, so a request to it times out after 3 ms and
     * the retry must go to passive 2, the other neighbour. An exchange takes 0.3 ms (0.45 ms
     * behind the other active worker's): no exchange can wait 6 ms, which two timeouts in a
     * row would take. */
    const char *sets[] = { "workers=4",
                           ("stragglers=[{\"kind\": \"failure\", \"workers\": [0], \"at_s\": "
                            "0.005}]"),
                           "protocol.exchange_timeout_ms=3",
                           "workload.message_bytes=100000",
                           "compute.jitter_sigma=0.3",
                           "stop.time_s=2" };
    sim_scenario *sc = harness_load_file(adpt_pair_json, sets, 6);
    char *dir = harness_tmpdir("adpsgd");
    harness_run(sc, dir, NULL, NULL);
    ck_assert_double_gt(adpt_report(dir, "timeouts"), 100); /* about half of 400 exchanges */
    ck_assert_double_gt(adpt_report(dir, "exchanges"), 350);
    ck_assert_double_lt(adpt_report(dir, "max_wait_s"), 0.006);
    sim_scenario_destroy(sc);
    harness_cleanup(dir);
}
END_TEST

START_TEST(timing_only_runs_send_the_same_messages_as_real_ones)
{
    /* With two workers there is no peer to draw, so the real model's minibatch draws cannot
     * change the schedule: the traces must match byte for byte, timeouts included. */
    const char *fail[] = { ("stragglers=[{\"kind\": \"failure\", \"workers\": [0], \"at_s\": "
                            "0.005, \"recover_s\": 0.03}]"),
                           "protocol.exchange_timeout_ms=3", "stop.time_s=0.1" };
    sim_scenario *none = harness_load_file(adpt_pair_json, fail, 3);
    char *a = harness_tmpdir("adpsgd");
    harness_run(none, a, NULL, NULL);
    const char *real[] = { fail[0], fail[1], fail[2],
                           "workload={\"dataset\": {\"name\": \"synthetic\", \"samples\": 500, "
                           "\"dim\": 6, \"classes\": 2}, \"model\": {\"name\": \"softmax\"}, "
                           "\"message_bytes\": 1000000}" };
    sim_scenario *sc = harness_load_file(adpt_pair_json, real, 4);
    char *b = harness_tmpdir("adpsgd");
    harness_run(sc, b, NULL, NULL);
    char *ea = harness_slurp(a, "events.csv"), *eb = harness_slurp(b, "events.csv");
    ck_assert_str_eq(ea, eb);
    ck_assert_double_eq(adpt_report(a, "exchanges"), adpt_report(b, "exchanges"));
    ck_assert_double_gt(adpt_report(b, "exchanges"), 5);
    free(ea);
    free(eb);
    sim_scenario_destroy(none);
    sim_scenario_destroy(sc);
    harness_cleanup(a);
    harness_cleanup(b);
}
END_TEST

/* ---- graph ---- */

static const char graph_json[] = "tests/scenarios/adpsgd/graph.json";

START_TEST(every_exchange_joins_an_odd_active_and_an_even_passive_neighbour)
{
    /* About 200 exchanges per active worker over at most 8 neighbours: every edge gets used
     * (a given one is missed with probability below (7/8)^200 = 3e-12), and no other pair
     * ever talks. Degrees: N = 16 has all 8 odd offsets; N = 13 loses the edges that wrap
     * between even workers; the ring has 2. */
    static const struct {
        const char *set[2];
        uint32_t n, min_active, max_passive;
        bool ring;
    } cases[] = {
        { { "workers=16", "protocol.graph=\"exponential\"" }, 16, 8, 8, false },
        { { "workers=13", "protocol.graph=\"exponential\"" }, 13, 5, 6, false },
        { { "workers=10", "protocol.graph=\"ring\"" }, 10, 2, 2, true },
        { { "workers=11", "protocol.graph=\"ring\"" }, 11, 2, 2, true },
    };
    for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
        sim_scenario *sc = harness_load_file(graph_json, cases[c].set, 2);
        char *dir = harness_tmpdir("adpsgd");
        harness_run(sc, dir, NULL, NULL);
        uint32_t n = cases[c].n;
        double K = adpt_report(dir, "exchanges");
        ck_assert_double_gt(K, 100.0 * (n / 2));
        ck_assert_double_eq(adpt_report(dir, "cross_parity_exchanges"), K);
        ck_assert_double_eq(adpt_report(dir, "min_active_degree"), cases[c].min_active);
        ck_assert_double_eq(adpt_report(dir, "max_passive_degree"), cases[c].max_passive);
        bool seen[MAX_W][MAX_W] = { { false } };
        size_t nmsg;
        msg_line *m = adpt_messages(dir, &nmsg);
        for (size_t i = 0; i < nmsg; i++) {
            uint32_t act = m[i].tag == 1 ? m[i].src : m[i].dst;
            uint32_t pas = m[i].tag == 1 ? m[i].dst : m[i].src;
            ck_assert_msg(act % 2 == 1 && pas % 2 == 0, "N=%u: %u <-> %u", n, act, pas);
            ck_assert_msg(edge(n, cases[c].ring, act, pas), "N=%u: %u-%u is no edge", n, act, pas);
            seen[act][pas] = true;
        }
        for (uint32_t a = 1; a < n; a += 2)
            for (uint32_t p = 0; p < n; p += 2)
                ck_assert_msg(seen[a][p] == edge(n, cases[c].ring, a, p), "N=%u: edge %u-%u", n, a,
                              p);
        free(m);
        sim_scenario_destroy(sc);
        harness_cleanup(dir);
    }
}
END_TEST

START_TEST(the_graph_has_the_documented_degrees_at_1024_and_1_workers)
{
    /* 1024: offsets 1, 3, 5, 9, ..., 513 (m up to 9), all distinct mod 1024 in both
     * directions: 20 neighbours each. A lone worker is passive, has none, and trains. */
    const char *big[] = { "workers=1024", "stop.time_s=0.015" };
    sim_scenario *sc = harness_load_file(graph_json, big, 2);
    char *dir = harness_tmpdir("adpsgd");
    harness_run(sc, dir, NULL, NULL);
    ck_assert_double_eq(adpt_report(dir, "min_active_degree"), 20);
    ck_assert_double_eq(adpt_report(dir, "max_passive_degree"), 20);
    ck_assert_double_eq(adpt_report(dir, "exchanges"), adpt_report(dir, "cross_parity_exchanges"));
    sim_scenario_destroy(sc);
    harness_cleanup(dir);
    const char *one[] = { "workers=1", "compute.jitter_sigma=0" };
    sc = harness_load_file(graph_json, one, 2);
    dir = harness_tmpdir("adpsgd");
    sim_run_summary sum = harness_run(sc, dir, NULL, NULL);
    ck_assert_uint_eq(sum.iterations, 200);
    ck_assert_double_eq(adpt_report(dir, "exchanges"), 0);
    ck_assert_double_eq(adpt_report(dir, "max_passive_degree"), 0);
    sim_scenario_destroy(sc);
    harness_cleanup(dir);
}
END_TEST

/* ---- throughput and stalls ---- */

static double iterations_with(const char *straggler, double *compute_min)
{
    /* Messages of 20 MB at 10 Gbit/s take 16 ms, longer than an iteration: communication
     * is the bottleneck, yet no worker ever stops computing. */
    const char *sets[] = {
        "compute.jitter_sigma=0.1", "compute.speeds=[1]",     "workload.message_bytes=20000000",
        "workload.lr=0.05",         "workload.init=\"same\"", "stop.time_s=2",
        "eval.every_s=1",           "output.events=false",    straggler
    };
    sim_scenario *sc = harness_load_file(adpt_avg_json, sets, straggler != NULL ? 9 : 8);
    char *dir = harness_tmpdir("adpsgd");
    sim_run_summary sum = harness_run(sc, dir, NULL, NULL);
    ck_assert_double_gt(adpt_report(dir, "mean_exchange_s"), 0.01);
    char *w = harness_slurp(dir, "workers.csv");
    *compute_min = INFINITY;
    for (char *line = strchr(w, '\n'); line != NULL && line[1] != '\0';
         line = strchr(line + 1, '\n')) {
        unsigned id, it, samples;
        double speed, comp;
        ck_assert_int_eq(sscanf(line + 1, "%u,%lf,%u,%u,%lf", &id, &speed, &it, &samples, &comp),
                         5);
        *compute_min = fmin(*compute_min, comp);
    }
    free(w);
    sim_scenario_destroy(sc);
    harness_cleanup(dir);
    return (double)sum.iterations;
}

START_TEST(a_four_times_slower_worker_costs_only_its_share_of_throughput)
{
    /* Expected ratio (15 + 1/4) / 16 = 1 - (1 - 1/4) / 16 = 0.953125. Counts are renewal
     * counts: about 200 per fast worker with jitter of relative sd 0.1, so sd 0.1 sqrt(200)
     * = 1.4 per worker and 5.7 over 16 (0.18% of 3200), 0.25% on the ratio; the iteration
     * cut off by the stop shifts each count by under 1 (0.5% at most, mostly cancelling in
     * the ratio). A tolerance of 0.015 is over 4 of those, and far from the 0.75 drop of a
     * protocol that waits for its slowest worker. */
    double cmin0, cmin1;
    double base = iterations_with(NULL, &cmin0);
    double slow = iterations_with(
        "stragglers=[{\"kind\": \"fixed\", \"workers\": [5], \"slowdown\": 4}]", &cmin1);
    ck_assert_double_eq_tol(base, 3200, 40);
    ck_assert_double_eq_tol(slow / base, 1.0 - 0.75 / 16, 0.015);
    /* Every worker computed all the time (times are whole ns summed exactly). */
    ck_assert_double_eq_tol(cmin0, 2.0, 1e-12);
    ck_assert_double_eq_tol(cmin1, 2.0, 1e-12);
}
END_TEST

START_TEST(randomized_runs_with_stragglers_and_failures_never_stall)
{
    /* 20 seeds: 6 to 21 workers, random speeds, random and fixed stragglers, a slow link,
     * 2 MB messages (an exchange takes about 3.3 ms, so requests queue), and failures: two
     * long ones and one for good, each containing an evaluation (every second), and in every
     * second a short one (1 to 50 ms, over by mid-second) at a random time, which catches
     * exchanges in progress. At most two workers are down at once and an active worker has
     * at least 3 neighbours, so it always has a live one. An iteration lasts at most
     * 10 ms / 0.6 * 4 * 3 = 200 ms before jitter (0.2: a factor 2 is 3.5 sigma), so an
     * active worker up at two consecutive evaluations finished gradients at least 0.3 s
     * before the second, each followed by an exchange within a few timeouts (26 ms or more
     * each). A waits-for cycle would leave exchanges open longer than max_wait_s allows (open
     * ones count), and a passive worker stuck serving would show in max_serve_s; with lr > 0
     * an active worker's model changes at each of its gradients and commits, so a worker that
     * stopped would be frozen between evaluations. */
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    double stale = 0, timeouts = 0;
    for (unsigned seed = 1; seed <= 20; seed++) {
        gsl_rng_set(r, 9000 + seed);
        uint32_t n = 6 + (uint32_t)gsl_rng_uniform_int(r, 16);
        char speeds[512] = "compute.speeds=[";
        for (uint32_t w = 0; w < n; w++)
            snprintf(speeds + strlen(speeds), sizeof(speeds) - strlen(speeds), "%s%.3f",
                     w > 0 ? ", " : "", 0.6 + 1.4 * gsl_rng_uniform(r));
        strcat(speeds, "]");
        uint32_t f1 = (uint32_t)gsl_rng_uniform_int(r, n), f2 = (f1 + 1) % n;
        uint32_t f3 = (f1 + 2 + (uint32_t)gsl_rng_uniform_int(r, n - 2)) % n;
        char strag[2048], nstr[32], seedstr[32];
        double p_random = 0.05 + 0.2 * gsl_rng_uniform(r);
        unsigned slow = 2 + (unsigned)gsl_rng_uniform_int(r, 3);
        int len = snprintf(
            strag, sizeof(strag),
            "stragglers=[{\"kind\": \"random\", \"probability\": %.2f, \"slowdown\": 3},"
            " {\"kind\": \"fixed\", \"count\": 1, \"slowdown\": %u},"
            " {\"kind\": \"link\", \"count\": 1, \"extra_latency_ms\": 0.2, "
            "\"bandwidth_factor\": 0.5},"
            " {\"kind\": \"failure\", \"workers\": [%u], \"at_s\": 0.8, \"recover_s\": 1.3},"
            " {\"kind\": \"failure\", \"workers\": [%u], \"at_s\": 2.7, \"recover_s\": 3.3},"
            " {\"kind\": \"failure\", \"workers\": [%u], \"at_s\": 3.8}",
            p_random, slow, f1, f2, f3);
        for (unsigned k = 0; k < 5; k++) {
            double at = k + 0.05 + 0.4 * gsl_rng_uniform(r), d = 0.001 + 0.049 * gsl_rng_uniform(r);
            unsigned who = (unsigned)gsl_rng_uniform_int(r, n);
            len += snprintf(strag + len, sizeof(strag) - (size_t)len,
                            ", {\"kind\": \"failure\", \"workers\": [%u], \"at_s\": %.6f, "
                            "\"recover_s\": %.6f}",
                            who, at, at + d);
        }
        snprintf(strag + len, sizeof(strag) - (size_t)len, "]");
        snprintf(nstr, sizeof(nstr), "workers=%u", n);
        snprintf(seedstr, sizeof(seedstr), "seed=%u", seed);
        const char *sets[] = { nstr,
                               seedstr,
                               speeds,
                               strag,
                               "workload.lr=0.05",
                               "workload.message_bytes=2000000",
                               "stop.time_s=5",
                               "eval.every_s=1",
                               "output.events=false" };
        sim_scenario *sc = harness_load_file(adpt_avg_json, sets, 9);
        char *dir = harness_tmpdir("adpsgd");
        probe pr = { 0 };
        sim_run_summary sum = harness_run(sc, dir, adpt_observe, &pr);
        ck_assert_str_eq(sum.stop_reason, "time");
        ck_assert_double_ge(adpt_report(dir, "min_active_degree"), 3);
        ck_assert_double_lt(adpt_report(dir, "max_wait_s"), 0.3);
        ck_assert_double_lt(adpt_report(dir, "max_serve_s"), 0.01); /* a reply takes < 4 ms */
        stale += adpt_report(dir, "stale_replies") + adpt_report(dir, "stale_requests");
        timeouts += adpt_report(dir, "timeouts");
        ck_assert_uint_eq(pr.k, 6); /* 0, 1, ..., 4 s and the end, at 5 s */
        for (size_t k = 1; k < pr.k; k++)
            for (uint32_t a = 1; a < n && pr.t[k] > pr.t[k - 1]; a += 2)
                if (!pr.down[k - 1][a] && !pr.down[k][a])
                    ck_assert_msg(pr.fnv[k][a] != pr.fnv[k - 1][a],
                                  "seed %u: worker %u stuck between evaluations %zu and %zu", seed,
                                  a, k - 1, k);
        free(pr.sum0);
        sim_scenario_destroy(sc);
        harness_cleanup(dir);
    }
    /* The failure paths were taken. */
    ck_assert_double_gt(stale, 0);
    ck_assert_double_gt(timeouts, 100);
    gsl_rng_free(r);
}
END_TEST

Suite *test_suite(void)
{
    Suite *s = suite_create("adpsgd_timing");
    TCase *timing = tcase_create("timing");
    tcase_add_test(timing, two_workers_exchange_in_two_transfers_worked_out_by_hand);
    tcase_add_test(timing, requests_to_a_failed_passive_time_out_until_it_recovers);
    tcase_add_test(timing, a_passive_serving_a_failed_active_serves_the_next_one);
    tcase_add_test(timing, an_iteration_that_starts_during_an_exchange_gets_its_own_at_the_commit);
    tcase_add_test(timing, a_timed_out_request_is_retried_with_another_neighbour);
    tcase_add_test(timing, timing_only_runs_send_the_same_messages_as_real_ones);
    tcase_set_timeout(timing, 60);
    suite_add_tcase(s, timing);
    TCase *graphs = tcase_create("graph");
    tcase_add_test(graphs, every_exchange_joins_an_odd_active_and_an_even_passive_neighbour);
    tcase_add_test(graphs, the_graph_has_the_documented_degrees_at_1024_and_1_workers);
    tcase_set_timeout(graphs, 120);
    suite_add_tcase(s, graphs);
    TCase *robust = tcase_create("robustness");
    tcase_add_test(robust, a_four_times_slower_worker_costs_only_its_share_of_throughput);
    tcase_add_test(robust, randomized_runs_with_stragglers_and_failures_never_stall);
    tcase_set_timeout(robust, 300);
    suite_add_tcase(s, robust);
    return s;
}
