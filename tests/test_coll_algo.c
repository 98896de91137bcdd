/* The kit's all-reduce algorithms besides the flat ring (kit/coll_algo.c), through
 * allreduce's `algorithm`: hierarchical and the double binary trees end at their closed forms
 * on idle stars of hosts with several GPUs, degenerate to the flat ring where they should, move
 * the bytes their patterns say; auto picks as NCCL's tuning model; the training bits do not
 * depend on the algorithm; failures fall back or carry on, deterministically. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "harness.h"
#include "runtime/run.h"
#include "scenario/scenario.h"

/* 12 timing-only workers, 4 a host (3 hosts), 20 ms of compute, one 24 MB all-reduce after each
 * iteration, on a star of 10 Gbit/s NICs (5 us an end) and 80 Gbit/s fabric links (1 us an
 * end); two rounds. */
static const char hosts_json[] =
    "{\"seed\": 5, \"workers\": 12, \"compute\": {\"iteration_ms\": 20},"
    " \"network\": {\"bandwidth_gbps\": 10, \"latency_us\": 5, \"gpus_per_host\": 4,"
    " \"host_fabric_bandwidth_gbps\": 80, \"host_fabric_latency_us\": 1},"
    " \"workload\": {\"model\": {\"name\": \"none\"}, \"message_bytes\": 24000000},"
    " \"protocol\": {\"name\": \"allreduce\", \"bucket_mb\": 0}, \"stop\": {\"iterations\": 24}}";

/* Runs `json` with `sets`; returns its summary, its directory in *dir (for the caller to read
 * and clean up). */
static sim_run_summary run(const char *json, const char *const *sets, size_t nsets, char **dir)
{
    sim_scenario *sc = harness_load(json, "algo.json", sets, nsets);
    *dir = harness_tmpdir("coll-algo");
    sim_run_summary sum = harness_run(sc, *dir, NULL, NULL);
    sim_scenario_destroy(sc);
    return sum;
}

static sim_time xfer_ns(double bytes, double rate_bps)
{
    return llround(bytes * 8e9 / rate_bps);
}

START_TEST(hierarchical_ends_at_its_closed_form_on_an_idle_star)
{
    /* Each round: 20 ms, then 3 reduce-scatter steps around each host's ring of a 6 MB shard
     * (2 us + 6e6 B at 8e10 b/s, every fabric link carrying one flow), 4 steps around the hosts'
     * rings of a 2 MB chunk with the host's 4 rings sharing its NIC (10 us + 2e6 B at 1e10 / 4
     * b/s), 3 all-gather steps as the first. */
    const char *sets[] = { "protocol.algorithm=\"hierarchical\"" };
    char *dir;
    sim_run_summary sum = run(hosts_json, sets, 1, &dir);
    sim_time intra = 2000 + xfer_ns(6e6, 8e10), inter = 10000 + xfer_ns(2e6, 1e10 / 4.0);
    sim_time round = 20000000 + 6 * intra + 4 * inter;
    ck_assert_str_eq(sum.stop_reason, "iterations");
    ck_assert_int_eq(sum.sim_ns, 2 * round);
    ck_assert_double_eq(harness_summary_number(dir, "rounds_hierarchical"), 2);
    ck_assert_double_eq(harness_summary_number(dir, "rounds_ring"), 0);
    /* Bytes: each worker sends 3 + 3 shards of 6 MB and 4 chunks of 2 MB a round, as many as
     * the flat ring's 22 chunks of 2 MB. */
    harness_csv t = harness_csv_read(dir, "workers.csv");
    for (size_t w = 0; w < t.nrows; w++)
        ck_assert_double_eq(harness_csv_num(&t, w, "bytes_sent"), 2 * 44e6);
    harness_csv_free(&t);
    harness_cleanup(dir);
}
END_TEST

static void expect_same_timing(const char *const *a, size_t na, const char *const *b, size_t nb);

START_TEST(halving_doubling_ends_at_its_closed_form_on_four_hosts)
{
    /* 4 hosts of 2, each shard 12 MB in 4 chunks of 3 MB: a reduce-scatter step in the host
     * (12 MB over the fabric), exchanges of 2, 1, then 1, 2 chunks with the hosts 2 apart, 1
     * apart, 1 apart, 2 apart (the host's 2 flows sharing its NIC), an all-gather step in the
     * host. Each worker sends 12 + 12 MB in its host and 6 + 3 + 3 + 6 MB between hosts. */
    const char *sets[] = { "workers=8", "network.gpus_per_host=2",
                           "protocol.algorithm=\"halving_doubling\"", "stop.iterations=16" };
    char *dir;
    sim_run_summary sum = run(hosts_json, sets, 4, &dir);
    sim_time intra = 2000 + xfer_ns(12e6, 8e10);
    sim_time two = 10000 + xfer_ns(6e6, 1e10 / 2.0), one = 10000 + xfer_ns(3e6, 1e10 / 2.0);
    ck_assert_int_eq(sum.sim_ns, 2 * (20000000 + 2 * intra + 2 * two + 2 * one));
    ck_assert_double_eq(harness_summary_number(dir, "rounds_halving_doubling"), 2);
    harness_csv t = harness_csv_read(dir, "workers.csv");
    for (size_t w = 0; w < t.nrows; w++)
        ck_assert_double_eq(harness_csv_num(&t, w, "bytes_sent"), 2 * 42e6);
    harness_csv_free(&t);
    harness_cleanup(dir);
    /* 3 hosts are not a power of two: the ring between them (hierarchical's closed form). */
    const char *three[] = { "protocol.algorithm=\"halving_doubling\"" };
    const char *hier[] = { "protocol.algorithm=\"hierarchical\"" };
    expect_same_timing(three, 1, hier, 1);
}
END_TEST

/* sim_ns and each worker's bytes of two runs of hosts_json with the sets a and b. */
static void expect_same_timing(const char *const *a, size_t na, const char *const *b, size_t nb)
{
    char *da, *db;
    sim_run_summary sa = run(hosts_json, a, na, &da), sb = run(hosts_json, b, nb, &db);
    ck_assert_int_eq(sa.sim_ns, sb.sim_ns);
    ck_assert_uint_eq(sa.iterations, sb.iterations);
    harness_csv ta = harness_csv_read(da, "workers.csv"), tb = harness_csv_read(db, "workers.csv");
    ck_assert_uint_eq(ta.nrows, tb.nrows);
    for (size_t w = 0; w < ta.nrows; w++) {
        ck_assert_double_eq(harness_csv_num(&ta, w, "bytes_sent"),
                            harness_csv_num(&tb, w, "bytes_sent"));
        ck_assert_double_eq(harness_csv_num(&ta, w, "comm_s"), harness_csv_num(&tb, w, "comm_s"));
    }
    harness_csv_free(&ta);
    harness_csv_free(&tb);
    harness_cleanup(da);
    harness_cleanup(db);
}

START_TEST(hierarchical_on_one_host_or_one_gpu_a_host_is_the_flat_ring)
{
    const char *one_host[] = { "network.gpus_per_host=12", "protocol.algorithm=\"hierarchical\"" };
    const char *one_host_ring[] = { "network.gpus_per_host=12" };
    expect_same_timing(one_host, 2, one_host_ring, 1);
    const char *one_gpu[] = { "network.gpus_per_host=1", "protocol.algorithm=\"hierarchical\"" };
    const char *one_gpu_ring[] = { "network.gpus_per_host=1" };
    expect_same_timing(one_gpu, 2, one_gpu_ring, 1);
}
END_TEST

START_TEST(trees_on_two_single_gpu_hosts_are_the_ring)
{
    /* Two hosts of one GPU and 800 kB, one chunk a tree: each tree's half goes up to its root
     * (the two halves in opposite directions at once) and back down, 2 x (10 us + 4e5 B at
     * 1e10 b/s), the ring's two steps of S/2. */
    const char *tree[] = { "workers=2", "network.gpus_per_host=1", "workload.message_bytes=800000",
                           "protocol.algorithm=\"tree\"" };
    const char *ring[] = { "workers=2", "network.gpus_per_host=1",
                           "workload.message_bytes=800000" };
    char *dir;
    sim_run_summary sum = run(hosts_json, tree, 4, &dir);
    ck_assert_int_eq(sum.sim_ns, 24 / 2 * (20000000 + 2 * (10000 + xfer_ns(4e5, 1e10))));
    ck_assert_double_eq(harness_summary_number(dir, "rounds_tree"), 12);
    harness_cleanup(dir);
    expect_same_timing(tree, 4, ring, 3);
}
END_TEST

START_TEST(trees_move_each_half_up_and_down_once_per_link)
{
    /* Three hosts of four: in each tree every member but the root sends the tree's half (12 MB)
     * up once and receives it down once: 2 x 11 x 12 MB a tree and a round, in chunks of at most
     * 512 KiB (23 of them): 23 x 11 x 2 messages a tree and a round. Two trees, two rounds. */
    const char *sets[] = { "protocol.algorithm=\"tree\"" };
    char *dir;
    sim_run_summary sum = run(hosts_json, sets, 1, &dir);
    ck_assert_str_eq(sum.stop_reason, "iterations");
    harness_csv t = harness_csv_read(dir, "workers.csv");
    double total = 0;
    for (size_t w = 0; w < t.nrows; w++)
        total += harness_csv_num(&t, w, "bytes_sent");
    harness_csv_free(&t);
    ck_assert_double_eq(total, 2 * 2 * (2 * 11 * 12e6));
    char *summary = harness_slurp(dir, "summary.json");
    ck_assert_ptr_nonnull(strstr(summary, "\"sent\": 2024,"));
    free(summary);
    harness_cleanup(dir);
}
END_TEST

START_TEST(auto_takes_the_trees_for_small_rounds_on_many_hosts_and_the_ring_for_large_ones)
{
    /* NCCL's model on 16 single-GPU hosts with 64 KiB: the ring pays 30 network steps (14 us
     * each on ib-edr), the trees 2 x 4: trees. On 2 hosts with 256 MiB the latencies tie and
     * the ring's bandwidth (the bus) beats the trees' (half of 0.92 of it): the ring. */
    const char *small[] = { "workers=16",
                            "network.gpus_per_host=1",
                            "network.fabric=\"ib-edr\"",
                            "network.bandwidth_gbps=99.37",
                            "network.latency_us=7",
                            "workload.message_bytes=65536",
                            "protocol.algorithm=\"auto\"",
                            "stop.iterations=32" };
    char *dir;
    run(hosts_json, small, 8, &dir);
    ck_assert_double_eq(harness_summary_number(dir, "rounds_tree"), 2);
    ck_assert_double_eq(harness_summary_number(dir, "rounds_ring"), 0);
    harness_cleanup(dir);
    const char *large[] = { "workers=2",
                            "network.gpus_per_host=1",
                            "network.fabric=\"ib-edr\"",
                            "workload.message_bytes=268435456",
                            "protocol.algorithm=\"auto\"",
                            "stop.iterations=4" };
    run(hosts_json, large, 6, &dir);
    ck_assert_double_eq(harness_summary_number(dir, "rounds_ring"), 2);
    ck_assert_double_eq(harness_summary_number(dir, "rounds_tree"), 0);
    harness_cleanup(dir);
}
END_TEST

START_TEST(hierarchical_falls_back_to_the_ring_when_a_failure_unbalances_the_hosts)
{
    /* Worker 5 fails for good during the second round: the ring restarts over 11 members, 3 on
     * its host; that generation's rounds run as the flat ring. */
    const char *sets[] = { "protocol.algorithm=\"hierarchical\"", "stop.iterations=60",
                           "stragglers=[{\"kind\": \"failure\", \"workers\": [5], "
                           "\"at_s\": 0.06}]" };
    char *dir;
    run(hosts_json, sets, 3, &dir);
    ck_assert_double_gt(harness_summary_number(dir, "rounds_hierarchical"), 0);
    ck_assert_double_gt(harness_summary_number(dir, "rounds_ring"), 0);
    ck_assert_double_eq(harness_summary_number(dir, "ring_restarts"), 1);
    harness_cleanup(dir);
}
END_TEST

/* workers.csv's params_fnv column of tests/scenarios/allreduce/real.json on 6 workers, 3 a
 * host, with `algorithm` and `bucket_mb`. */
static char *final_bits(const char *algorithm, const char *bucket)
{
    char set[64];
    snprintf(set, sizeof(set), "protocol.algorithm=\"%s\"", algorithm);
    const char *sets[] = { "workers=6", "network.gpus_per_host=3", set, bucket };
    static const char *const cols[] = { "iterations", "params_fnv" };
    return harness_run_columns(harness_load_file("tests/scenarios/allreduce/real.json", sets, 4),
                               cols, 2, NULL);
}

START_TEST(training_bits_do_not_depend_on_the_algorithm)
{
    /* The mean gradient is one element-wise sum in worker order whatever carries the bytes. */
    static const char *const algos[] = { "hierarchical", "tree", "auto" };
    char *ring = final_bits("ring", "protocol.bucket_mb=0");
    for (size_t i = 0; i < 3; i++) {
        char *a = final_bits(algos[i], "protocol.bucket_mb=0");
        char *b = final_bits(algos[i], "protocol.bucket_mb=3");
        ck_assert_str_eq(a, ring);
        ck_assert_str_eq(b, ring);
        free(a);
        free(b);
    }
    free(ring);
}
END_TEST

/* params_fnv of real.json on 6 workers, 3 a host, run by localsgd with `protocol`. */
static char *localsgd_bits(const char *protocol)
{
    const char *sets[] = { "workers=6", "network.gpus_per_host=3", protocol };
    static const char *const cols[] = { "params_fnv" };
    return harness_run_columns(harness_load_file("tests/scenarios/allreduce/real.json", sets, 3),
                               cols, 1, NULL);
}

START_TEST(localsgd_averages_the_same_bits_whatever_the_algorithm)
{
    char *ring = localsgd_bits("protocol={\"name\": \"localsgd\", \"local_steps\": 2}");
    char *tree = localsgd_bits(
        "protocol={\"name\": \"localsgd\", \"local_steps\": 2, \"algorithm\": \"tree\"}");
    char *hier = localsgd_bits("protocol={\"name\": \"localsgd\", \"local_steps\": 2, "
                               "\"algorithm\": \"hierarchical\"}");
    ck_assert_str_eq(tree, ring);
    ck_assert_str_eq(hier, ring);
    free(ring);
    free(tree);
    free(hier);
}
END_TEST

START_TEST(algorithms_survive_failures_deterministically)
{
    /* Chaos (harness_chaos_json) on hosts of 3 with buckets: every algorithm finishes its rounds
     * through failures and recoveries, and twice the same run gives the same outputs. */
    static const char *const protos[] = {
        "{\"name\": \"allreduce\", \"algorithm\": \"hierarchical\", \"bucket_mb\": 0.5}",
        "{\"name\": \"allreduce\", \"algorithm\": \"tree\", \"bucket_mb\": 0.5}",
        "{\"name\": \"allreduce\", \"algorithm\": \"auto\"}",
        "{\"name\": \"allreduce\", \"algorithm\": \"halving_doubling\", \"bucket_mb\": 0.5}",
    };
    for (unsigned seed = 1; seed <= 4; seed++) {
        char *json = harness_chaos_json(seed, seed == 2, protos[seed - 1]);
        const char *sets[] = { "network.gpus_per_host=3", /* 4 hosts */
                               "compute.profile=\"tests/data/profile_buckets.csv\"" };
        char *d[2];
        sim_run_summary sa = harness_run_pair(harness_load_spec(json, sets, 2),
                                              harness_load_spec(json, sets, 2), "coll-algo", d);
        ck_assert_str_eq(sa.stop_reason, "time");
        ck_assert_uint_gt(sa.iterations, 50);
        static const char *const first[] = { "rounds_hierarchical", "rounds_tree", NULL,
                                             "rounds_halving_doubling" };
        /* Each algorithm ran rounds of its own, in the windows with every worker up (seed 1:
         * 4, worker 10 down for good from 0.75 s since a failure rule for good is no longer
         * undone by another rule's recovery; it was 42 when worker 10 came back at 1.02 s). */
        if (first[seed - 1] != NULL)
            ck_assert_double_gt(harness_summary_number(d[0], first[seed - 1]), 0);
        harness_cleanup_pair(d);
        free(json);
    }
}
END_TEST

Suite *test_suite(void)
{
    Suite *s = suite_create("coll_algo");
    TCase *exact = tcase_create("exact");
    tcase_add_test(exact, hierarchical_ends_at_its_closed_form_on_an_idle_star);
    tcase_add_test(exact, hierarchical_on_one_host_or_one_gpu_a_host_is_the_flat_ring);
    tcase_add_test(exact, halving_doubling_ends_at_its_closed_form_on_four_hosts);
    tcase_add_test(exact, trees_on_two_single_gpu_hosts_are_the_ring);
    tcase_add_test(exact, trees_move_each_half_up_and_down_once_per_link);
    suite_add_tcase(s, exact);
    TCase *choice = tcase_create("choice");
    tcase_add_test(choice,
                   auto_takes_the_trees_for_small_rounds_on_many_hosts_and_the_ring_for_large_ones);
    tcase_add_test(choice, hierarchical_falls_back_to_the_ring_when_a_failure_unbalances_the_hosts);
    suite_add_tcase(s, choice);
    TCase *bits = tcase_create("bits");
    tcase_set_timeout(bits, 120);
    tcase_add_test(bits, training_bits_do_not_depend_on_the_algorithm);
    tcase_add_test(bits, localsgd_averages_the_same_bits_whatever_the_algorithm);
    tcase_add_test(bits, algorithms_survive_failures_deterministically);
    suite_add_tcase(s, bits);
    return s;
}
