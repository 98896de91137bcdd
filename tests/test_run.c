/* End-to-end runs of the timing-only ring all-reduce: exact timing against the alpha-beta
 * formula, straggler gating, failures, outputs and determinism. */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>
#include <gsl/gsl_errno.h>

#include "harness.h"
#include "runtime/run.h"
#include "scenario/scenario.h"

/* One round of N workers, S bytes, bandwidth B, NIC latency L on a star; every worker
 * computes for C first. The round ends at C + 2(N-1) * (2L + (S/N)/B). */
static const char ring_json[] = "tests/scenarios/run/ring.json";

START_TEST(ring_allreduce_round_matches_the_alpha_beta_formula)
{
    sim_scenario *sc = harness_load_file(ring_json, NULL, 0);
    char *dir = harness_tmpdir("run");
    sim_run_summary sum = harness_run(sc, dir, NULL, NULL);
    /* C = 10 ms; per step 2 * 50 us + 25e6 B * 8 / 1e10 b/s = 20.1 ms; 6 steps. */
    ck_assert_int_eq(sum.sim_ns, 10000000 + 6 * 20100000);
    ck_assert_str_eq(sum.stop_reason, "iterations");
    ck_assert_uint_eq(sum.iterations, 4);
    sim_scenario_destroy(sc);
    harness_cleanup(dir);
}
END_TEST

START_TEST(ring_allreduce_timing_holds_for_awkward_sizes)
{
    /* 5 workers, 1e6 bytes (200000 per chunk) at 7.3 Gbit/s, 37 us: a step takes
     * 74000 + 219178.08 ns, not a whole number of ns. Time is kept in whole nanoseconds and
     * each completion is rounded once to the nearest one, so the run may differ from the
     * formula by at most 0.5 ns per step (here 0.08 ns each, 0.66 ns in all). */
    static const char json[] =
        "tests/scenarios/run/ring_allreduce_timing_holds_for_awkward_sizes.json";
    sim_scenario *sc = harness_load_file(json, NULL, 0);
    char *dir = harness_tmpdir("run");
    sim_run_summary sum = harness_run(sc, dir, NULL, NULL);
    double expected = 125000.0 + 8.0 * (74000.0 + 200000.0 * 8.0 / 7.3e9 * 1e9);
    ck_assert_double_eq_tol((double)sum.sim_ns, expected, 8 * 0.5);
    ck_assert_int_eq(sum.sim_ns, 125000 + 8 * (74000 + 219178)); /* each step rounded once */
    sim_scenario_destroy(sc);
    harness_cleanup(dir);
}
END_TEST

START_TEST(a_slow_worker_gates_every_ring_iteration)
{
    /* 16 workers, worker 3 five times slower: every round waits for it, so each iteration
     * takes 5 C + T_ring exactly. Three rounds. */
    static const char json[] = "tests/scenarios/run/a_slow_worker_gates_every_ring_iteration.json";
    sim_scenario *sc = harness_load_file(json, NULL, 0);
    char *dir = harness_tmpdir("run");
    sim_run_summary sum = harness_run(sc, dir, NULL, NULL);
    /* Step: 100 us + 4e6 B * 8 / 1e10 = 3.3 ms; T_ring = 30 * 3.3 ms = 99 ms. */
    ck_assert_int_eq(sum.sim_ns, 3 * (100000000 + 99000000));
    char *workers = harness_slurp(dir, "workers.csv");
    /* Every worker did 3 iterations; the fast ones waited while worker 3 computed. */
    ck_assert_ptr_nonnull(strstr(workers, "\n3,1,3,96,0.29999999999999999,"));
    sim_scenario_destroy(sc);
    free(workers);
    harness_cleanup(dir);
}
END_TEST

START_TEST(a_failed_worker_leaves_a_smaller_ring)
{
    /* Worker 2 of 4 fails at 5 ms, during the first computation: the ring is rebuilt over
     * 3 workers, and every round from then on takes C + 4 steps of S/3. */
    static const char json[] = "tests/scenarios/run/a_failed_worker_leaves_a_smaller_ring.json";
    sim_scenario *sc = harness_load_file(json, NULL, 0);
    char *dir = harness_tmpdir("run");
    sim_run_summary sum = harness_run(sc, dir, NULL, NULL);
    /* Step: 100 us + 1e7 B * 8 / 1e10 = 8.1 ms; round = 10 + 4 * 8.1 = 42.4 ms; two. */
    ck_assert_int_eq(sum.sim_ns, 2 * 42400000);
    char *summary = harness_slurp(dir, "summary.json");
    ck_assert_ptr_nonnull(strstr(summary, "\"ring_restarts\": 1"));
    free(summary);
    sim_scenario_destroy(sc);
    harness_cleanup(dir);
}
END_TEST

START_TEST(a_run_whose_workers_all_fail_stops_as_stalled)
{
    static const char json[] =
        "tests/scenarios/run/a_run_whose_workers_all_fail_stops_as_stalled.json";
    /* Both fail for good at 0.5 s: the run stops then (it went on to the first evaluation
     * after the failure), with the same samples whether evaluations are 1 s or 1000 s apart
     * (the scenario stops on iterations only: no stop time bounds them). */
    const char *sets[] = { "eval.every_s=1000" };
    sim_run_summary sum[2];
    for (int i = 0; i < 2; i++) {
        sim_scenario *sc = harness_load_file(json, sets, (size_t)i);
        char *dir = harness_tmpdir("run");
        sum[i] = harness_run(sc, dir, NULL, NULL);
        ck_assert_str_eq(sum[i].stop_reason, "stalled");
        ck_assert_int_eq(sum[i].sim_ns, 500000000);
        sim_scenario_destroy(sc);
        harness_cleanup(dir);
    }
    ck_assert_uint_gt(sum[0].samples, 0);
    ck_assert_uint_eq(sum[1].samples, sum[0].samples);
}
END_TEST

START_TEST(the_same_scenario_and_seed_give_byte_identical_outputs)
{
    static const char json[] =
        "tests/scenarios/run/the_same_scenario_and_seed_give_byte_identical_outputs.json";
    char *dirs[2];
    for (int i = 0; i < 2; i++) {
        sim_scenario *sc = harness_load_file(json, NULL, 0);
        dirs[i] = harness_tmpdir("run");
        harness_run(sc, dirs[i], NULL, NULL);
        sim_scenario_destroy(sc);
    }
    harness_expect_same_trace(dirs[0], dirs[1]);
    /* A different seed changes the trace (the jitter draws differ). */
    sim_scenario *sc = harness_load_file(json, (const char *[]){ "seed=2386" }, 1);
    char *other = harness_tmpdir("run");
    harness_run(sc, other, NULL, NULL);
    char *a = harness_slurp(dirs[0], "events.csv"), *b = harness_slurp(other, "events.csv");
    ck_assert_str_ne(a, b);
    free(a);
    free(b);
    sim_scenario_destroy(sc);
    for (int i = 0; i < 2; i++)
        harness_cleanup(dirs[i]);
    harness_cleanup(other);
}
END_TEST

START_TEST(outputs_have_their_documented_columns)
{
    sim_scenario *sc = harness_load_file(ring_json, (const char *[]){ "stop={\"time_s\": 1}" }, 1);
    char *dir = harness_tmpdir("run");
    harness_run(sc, dir, NULL, NULL);
    char *m = harness_slurp(dir, "metrics.csv"), *w = harness_slurp(dir, "workers.csv"),
         *r = harness_slurp(dir, "run.json"), *s = harness_slurp(dir, "summary.json");
    ck_assert_ptr_eq(strstr(m, "time_s,iterations,samples,epoch,train_loss,test_loss,"
                               "test_accuracy,consensus,throughput_sps\n0,0,0,"),
                     m);
    /* Evaluations every second (the default) up to the 1 s stop: rows at 0 and 1. */
    ck_assert_ptr_nonnull(strstr(m, "\n1,"));
    ck_assert_ptr_eq(strstr(w, "worker,speed,iterations,samples,compute_s,comm_s,wait_s,"
                               "bytes_sent,bytes_received,down_s,comm_overlap_s,params_fnv\n0,1,"),
                     w);
    ck_assert_ptr_nonnull(strstr(r, "\"scenario_hash\""));
    ck_assert_ptr_nonnull(strstr(r, "\n  \"scenario\": {\n    \"seed\": 7,\n"));
    ck_assert_ptr_nonnull(strstr(r, "\"stop\": {\n      \"time_s\": 1\n    },"));
    ck_assert_ptr_nonnull(strstr(s, "\"stop_reason\": \"time\""));
    ck_assert_ptr_nonnull(strstr(s, "\"peak_rss_bytes\""));
    free(m);
    free(w);
    free(r);
    free(s);
    sim_scenario_destroy(sc);
    harness_cleanup(dir);
}
END_TEST

START_TEST(the_time_breakdown_adds_up_to_the_run_time)
{
    sim_scenario *sc =
        harness_load_file(ring_json, (const char *[]){ "stop={\"time_s\": 0.75}" }, 1);
    char *dir = harness_tmpdir("run");
    harness_run(sc, dir, NULL, NULL);
    harness_csv w = harness_csv_read(dir, "workers.csv");
    ck_assert_uint_eq(w.nrows, 4);
    for (size_t k = 0; k < 4; k++) {
        double iters = harness_csv_num(&w, k, "iterations");
        double comp = harness_csv_num(&w, k, "compute_s"), comm = harness_csv_num(&w, k, "comm_s");
        double wait = harness_csv_num(&w, k, "wait_s"), down = harness_csv_num(&w, k, "down_s");
        double sent = harness_csv_num(&w, k, "bytes_sent");
        double recv = harness_csv_num(&w, k, "bytes_received");
        /* Sums of whole nanoseconds printed with 17 digits: exact to well below 1 ns. */
        ck_assert_double_eq_tol(comp + comm + wait + down, 0.75, 1e-12);
        ck_assert_double_eq_tol(comp, 0.010 * iters + (iters < 6 ? 0.010 : 0.0), 0.0101);
        /* A ring: as much in as out, but for what is still on the wire at the stop. */
        ck_assert_double_le(recv, sent);
        ck_assert_double_le(sent - recv, 25000000);
    }
    harness_csv_free(&w);
    sim_scenario_destroy(sc);
    harness_cleanup(dir);
}
END_TEST

START_TEST(link_stragglers_change_ring_timing_exactly)
{
    /* Two workers: each step both send S/2 to each other. Worker 1's NIC gets 3 ms extra
     * latency (added to every message from or to it) and half its bandwidth from t = 0:
     * a step takes 2L + 3 ms + (S/2) / (B/2). */
    static const char json[] =
        "tests/scenarios/run/link_stragglers_change_ring_timing_exactly.json";
    sim_scenario *sc = harness_load_file(json, NULL, 0);
    char *dir = harness_tmpdir("run");
    sim_run_summary sum = harness_run(sc, dir, NULL, NULL);
    /* 1e6 B * 8 / 4e9 b/s = 2 ms; step = 50 us + 3 ms + 2 ms; two steps after 4 ms. */
    ck_assert_int_eq(sum.sim_ns, 4000000 + 2 * (50000 + 3000000 + 2000000));
    sim_scenario_destroy(sc);
    /* With the window closing at 5 ms: the first step is sent at 4 ms, inside the window,
     * so it keeps its 3 ms extra latency, but its flows start at 7.05 ms, after the window,
     * at full bandwidth (1 ms). The second step has no extra latency. */
    sc = harness_load_file(json, (const char *[]){ "stragglers[0].to_s=0.005" }, 1);
    sum = harness_run(sc, dir, NULL, NULL);
    ck_assert_int_eq(sum.sim_ns, 4000000 + (3050000 + 1000000) + (50000 + 1000000));
    sim_scenario_destroy(sc);
    harness_cleanup(dir);
}
END_TEST

/* A short run with a straggler and a failure, its events.csv checked against a trace kept in
 * tests/golden/. Set HETSIM_UPDATE_GOLDEN=1 to rewrite it after an intended change (and
 * review the diff). */
START_TEST(a_small_run_reproduces_its_golden_event_trace)
{
    static const char json[] =
        "tests/scenarios/run/a_small_run_reproduces_its_golden_event_trace.json";
    sim_scenario *sc = harness_load_file(json, NULL, 0);
    char *dir = harness_tmpdir("run");
    harness_run(sc, dir, NULL, NULL);
    char *got = harness_slurp(dir, "events.csv");
    const char *golden = "tests/golden/ring3-failure.events.csv";
    const char *update = getenv("HETSIM_UPDATE_GOLDEN");
    if (update != NULL && strcmp(update, "1") == 0) {
        FILE *f = fopen(golden, "w");
        ck_assert_ptr_nonnull(f);
        fputs(got, f);
        fclose(f);
    }
    char *want = harness_read(golden, NULL);
    ck_assert_msg(strcmp(got, want) == 0, "events.csv differs from %s", golden);
    ck_assert_ptr_nonnull(strstr(got, ",down,1,"));
    ck_assert_ptr_nonnull(strstr(got, ",up,1,"));
    free(got);
    free(want);
    sim_scenario_destroy(sc);
    harness_cleanup(dir);
}
END_TEST

/* Writes a two-layer profile CSV (the second layer's FLOPs `fc_flops`) and a scenario naming
 * it into `dir`, runs it, and returns its run.json text (malloc'd). */
static char *run_with_profile(const char *dir, const char *fc_flops)
{
    char csv[512], json[512], text[1024];
    snprintf(csv, sizeof(csv), "%s/p.csv", dir);
    snprintf(json, sizeof(json), "%s/s.json", dir);
    FILE *f = fopen(csv, "w");
    ck_assert_ptr_nonnull(f);
    fprintf(f, "name,params,forward_flops\nconv,3000,2.5e6\nfc,7000,%s\n", fc_flops);
    fclose(f);
    snprintf(text, sizeof(text),
             "{\"seed\": 5, \"workers\": 2, \"compute\": {\"iteration_ms\": 3, \"profile\":"
             " \"p.csv\"}, \"workload\": {\"model\": {\"name\": \"none\"}},"
             " \"protocol\": {\"name\": \"allreduce\"}, \"stop\": {\"iterations\": 4}}");
    sim_scenario *sc = harness_load(text, json, NULL, 0);
    char *out = harness_tmpdir("run");
    harness_run(sc, out, NULL, NULL);
    char *run = harness_slurp(out, "run.json");
    sim_scenario_destroy(sc);
    harness_cleanup(out);
    return run;
}

START_TEST(run_json_records_the_profiles_content_hash)
{
    /* The scenario names its profile; run.json's profile_fnv is the hash of the file's
     * bytes, so a profile edited between two runs shows, though the scenario hash stays. */
    char *dir = harness_tmpdir("run");
    char *a = run_with_profile(dir, "1.5e6"), *b = run_with_profile(dir, "1.5e6");
    char *c = run_with_profile(dir, "1.6e6");
    const char *pa = strstr(a, "\"profile_fnv\": \""), *pc = strstr(c, "\"profile_fnv\": \"");
    ck_assert_ptr_nonnull(pa);
    ck_assert_ptr_nonnull(pc);
    ck_assert_str_eq(a, b);
    ck_assert_int_ne(strncmp(pa, pc, 40), 0);
    const char *ha = strstr(a, "\"scenario_hash\""), *hc = strstr(c, "\"scenario_hash\"");
    ck_assert_int_eq(strncmp(ha, hc, 38), 0);
    /* Without a profile there is no such line. */
    sim_scenario *sc = harness_load_file(ring_json, NULL, 0);
    char *out = harness_tmpdir("run");
    harness_run(sc, out, NULL, NULL);
    char *r = harness_slurp(out, "run.json");
    ck_assert_ptr_null(strstr(r, "profile_fnv"));
    free(a);
    free(b);
    free(c);
    free(r);
    sim_scenario_destroy(sc);
    harness_cleanup(out);
    harness_cleanup(dir);
}
END_TEST

/* metrics.csv's throughput is a window aligned with completions: 4 workers, no jitter, rounds
 * of C = 411.6 ms and a ring of 6 steps of 2 * 50 us + 1e6 B * 8 / 1e10 b/s = 0.9 ms, so
 * R = 417 ms exactly and 4 * 32 samples a round: 128 / 0.417 = 306.954... samples/s. A 1 s
 * evaluation interval holds two or three round ends (256 or 384 samples: the rate over the
 * interval itself read 256 and 384 by turns); a row reads the samples since the previous
 * evaluation over the time between the last round end before each, the rate of whole
 * rounds, in every row. With 0.25 s between evaluations, a row after which no round ended
 * reads 0 and the next one the rounds' rate, not four times it. */
START_TEST(throughput_is_the_rate_of_whole_rounds_whatever_the_evaluation_interval)
{
    static const char json[] = "tests/scenarios/run/throughput_of_whole_rounds.json";
    const double rate = 128.0 / 0.417;
    sim_scenario *sc = harness_load_file(json, NULL, 0);
    char *dir = harness_tmpdir("run");
    harness_run(sc, dir, NULL, NULL);
    harness_csv m = harness_csv_read(dir, "metrics.csv");
    ck_assert_uint_eq(m.nrows, 11);
    bool two = false, three = false;
    for (size_t r = 1; r < m.nrows; r++) {
        double d = harness_csv_num(&m, r, "samples") - harness_csv_num(&m, r - 1, "samples");
        two = two || d == 256;
        three = three || d == 384;
        /* 1e-12: the %.17g text of one division */
        ck_assert_double_eq_tol(harness_csv_num(&m, r, "throughput_sps"), rate, 1e-12 * rate);
    }
    ck_assert(two && three); /* an interval that aliased */
    harness_csv_free(&m);
    sim_scenario_destroy(sc);
    sc = harness_load_file(json, (const char *[]){ "eval.every_s=0.25" }, 1);
    harness_run(sc, dir, NULL, NULL);
    m = harness_csv_read(dir, "metrics.csv");
    size_t zeros = 0, rates = 0;
    for (size_t r = 1; r < m.nrows; r++) {
        double v = harness_csv_num(&m, r, "throughput_sps");
        zeros += v == 0;
        rates += fabs(v - rate) <= 1e-12 * rate;
    }
    ck_assert_uint_eq(zeros + rates, m.nrows - 1);
    ck_assert_uint_eq(rates, 23); /* the rounds that ended by 10 s: floor(10 / 0.417) */
    harness_csv_free(&m);
    sim_scenario_destroy(sc);
    harness_cleanup(dir);
}
END_TEST

/* Cuts the line of `text` holding `key` out of it; fails the test if there is none. */
static void cut_line(char *text, const char *key)
{
    char *at = strstr(text, key);
    ck_assert_ptr_nonnull(at);
    char *start = at, *end = strchr(at, '\n');
    while (start > text && start[-1] != '\n')
        start--;
    end = end != NULL ? end + 1 : at + strlen(at);
    memmove(start, end, strlen(end) + 1);
}

/* Runs scenario `json` (with `sets`) with the network's bundles and without (plain_net): every
 * output file is the same byte for byte, events.csv included, but summary.json's events
 * processed and wall lines; returns the events of both runs. */
static void expect_bundles_change_nothing(const char *json, const char *const *sets, size_t nsets,
                                          uint64_t *events, uint64_t *plain_events)
{
    char *dir[2];
    for (int plain = 0; plain < 2; plain++) {
        sim_scenario *sc = harness_load(json, "bundles.json", sets, nsets);
        dir[plain] = harness_tmpdir("run");
        sim_run_options opt = { .out_dir = dir[plain], .plain_net = plain == 1 };
        sim_run_summary sum;
        sim_err err;
        sim_err_clear(&err);
        ck_assert_msg(sim_run(sc, proto_find(sc->protocol), &opt, &sum, &err) == 0, "run: %s",
                      err.msg);
        *(plain ? plain_events : events) = sum.events;
        sim_scenario_destroy(sc);
    }
    static const char *const names[] = { "run.json", "metrics.csv", "workers.csv", "events.csv",
                                         "summary.json" };
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        char *x = harness_slurp(dir[0], names[i]), *y = harness_slurp(dir[1], names[i]);
        if (i == 4) {
            harness_strip_wall(x);
            harness_strip_wall(y);
            cut_line(x, "\"events\":");
            cut_line(y, "\"events\":");
        }
        ck_assert_msg(strcmp(x, y) == 0, "%s differs with and without bundles", names[i]);
        free(x);
        free(y);
    }
    harness_cleanup(dir[0]);
    harness_cleanup(dir[1]);
}

/* 16 timing-only workers, 8 a host, 0.1 ms of compute, 100 MB models, on ib-hdr NICs and
 * NVLink 3: every exchange between hosts is a bundle of up to 8 identical messages. */
static const char hosts_json[] =
    "{\"seed\": 3, \"workers\": 16, \"compute\": {\"iteration_ms\": 0.1},"
    " \"network\": {\"fabric\": \"ib-hdr\", \"gpus_per_host\": 8, \"host_fabric\": \"nvlink3\"},"
    " \"workload\": {\"model\": {\"name\": \"none\"}, \"message_bytes\": 100000000},"
    " \"protocol\": {\"name\": \"allreduce\", \"algorithm\": \"hierarchical\"},"
    " \"stop\": {\"time_s\": 0.4}, \"output\": {\"events\": true}}";

/* Identical messages sent together share their events (net/net.h): the runs' outputs are those
 * of every message with its own, bundles forming in each. Hierarchical all-reduces with
 * failures in the middle of transfers between hosts, recoveries and a link window; halving
 * and doubling on 4 hosts of 4; D-PSGD on an exponential graph (GPU g sends to its peers on the
 * next hosts) stopped by its iteration count while a bundle's DONE is delivering (37, 99 and
 * 101 stop there: checked on a build that reported it); a real model's bits on 4 hosts of 3. */
START_TEST(bundles_change_no_output_but_the_events_processed)
{
    static const char *const failures =
        "stragglers=[{\"kind\": \"failure\", \"workers\": [9], \"at_s\": 0.0123,"
        " \"recover_s\": 0.05}, {\"kind\": \"failure\", \"workers\": [3, 12], \"at_s\": 0.1,"
        " \"recover_s\": 0.2}, {\"kind\": \"link\", \"workers\": [1, 2], \"from_s\": 0.02,"
        " \"to_s\": 0.15, \"bandwidth_factor\": 0.5, \"extra_latency_ms\": 0.05}]";
    static const char *const dpsgd = "protocol={\"name\": \"dpsgd\", \"graph\": \"exponential\"}";
    static const struct {
        const char *sets[4];
        size_t nsets;
    } cases[] = {
        { { failures }, 1 },
        { { "workers=16", "network.gpus_per_host=4", "protocol.algorithm=\"halving_doubling\"",
            failures },
          3 },
        { { "workers=32", dpsgd, "stop.iterations=37" }, 3 },
        { { "workers=32", dpsgd, "stop.iterations=99" }, 3 },
        { { "workers=32", dpsgd, "stop.iterations=101", failures }, 4 },
    };
    for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
        uint64_t events, plain;
        expect_bundles_change_nothing(hosts_json, cases[c].sets, cases[c].nsets, &events, &plain);
        ck_assert_uint_lt(events, plain);
    }
    const char *real[] = { "workers=12", "network.gpus_per_host=3", "stop.iterations=100",
                           "protocol.algorithm=\"hierarchical\"", "output.events=true" };
    char *text = harness_read("tests/scenarios/allreduce/real.json", NULL);
    uint64_t events, plain;
    expect_bundles_change_nothing(text, real, 5, &events, &plain);
    ck_assert_uint_lt(events, plain);
    free(text);
}
END_TEST

Suite *test_suite(void)
{
    Suite *s = suite_create("run");
    TCase *timing = tcase_create("timing");
    tcase_add_test(timing, ring_allreduce_round_matches_the_alpha_beta_formula);
    tcase_add_test(timing, ring_allreduce_timing_holds_for_awkward_sizes);
    tcase_add_test(timing, a_slow_worker_gates_every_ring_iteration);
    tcase_add_test(timing, a_failed_worker_leaves_a_smaller_ring);
    tcase_add_test(timing, a_run_whose_workers_all_fail_stops_as_stalled);
    tcase_add_test(timing, link_stragglers_change_ring_timing_exactly);
    tcase_set_timeout(timing, 60);
    suite_add_tcase(s, timing);
    TCase *out = tcase_create("outputs");
    tcase_add_test(out, the_same_scenario_and_seed_give_byte_identical_outputs);
    tcase_add_test(out, outputs_have_their_documented_columns);
    tcase_add_test(out, the_time_breakdown_adds_up_to_the_run_time);
    tcase_add_test(out, a_small_run_reproduces_its_golden_event_trace);
    tcase_add_test(out, run_json_records_the_profiles_content_hash);
    tcase_add_test(out, throughput_is_the_rate_of_whole_rounds_whatever_the_evaluation_interval);
    tcase_add_test(out, bundles_change_no_output_but_the_events_processed);
    tcase_set_timeout(out, 60);
    suite_add_tcase(s, out);
    return s;
}
