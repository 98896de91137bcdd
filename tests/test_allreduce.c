/* All-Reduce with gradient buckets (bucket_mb, as PyTorch DDP): each bucket's ring round
 * starts when backward has produced it and the previous bucket's round is complete. Exact
 * iteration ends against the closed form for 1, 2 and 8 buckets, with and without a
 * straggler; training bits that do not depend on the buckets; failures. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "harness.h"
#include "runtime/run.h"
#include "scenario/scenario.h"
#include "sim/layers.h"

/* 4 workers of 30 ms on a star of 10 Gbit/s and 50 us NICs, timed by an eight-layer profile
 * (tests/data/profile_buckets.csv) whose every layer holds over 1 MiB of gradient; two
 * rounds (8 iterations). */
static const char buckets_json[] = "tests/scenarios/allreduce/buckets.json";
static const char profile_csv[] = "tests/data/profile_buckets.csv";

enum {
    N = 4,
    ROUNDS = 2
};

/* The closed form of the run's end. Buckets: the layers' gradient bytes (4 per parameter:
 * message_bytes defaults to the profile's fp32 size, so each layer's share is exact) in
 * backward order, a bucket closing once it holds cap_mib MiB or more, the first once it holds
 * DDP's 1 MiB (first_bucket_mb) or more: here the last layer alone. Bucket b is ready at
 * t_b, the latest worker's end of the backward pass of the bucket's lowest layer (iteration
 * d_w = 30 ms x slowdown_w). The ring moves bucket b in 2(N-1) steps of
 * L + (S_b/N)/B: path latency L = 2 x 50 us, and (S_b/4) bytes x 8 / `gbps` bit/ns = 2 S_b / gbps
 * ns whole for these sizes, so no step is rounded. Rings are queued: E_b = max(t_b, E_{b-1}) +
 * 2(N-1)(L + S_b/(N B)); every worker finishes the last bucket at E_B, where the next round starts.
 * *nb receives the number of buckets, *overlap the time worker 0 computes while a ring is running
 * (from max(t_b, E_{b-1}) to E_b: for workers that join together, every member has a step in flight
 * throughout its rounds). */
static sim_time closed_form(double cap_mib, const double *slowdown, int64_t gbps, size_t *nb,
                            sim_time *overlap)
{
    sim_layers l = { 0 };
    sim_err err = { 0 };
    ck_assert_int_eq(sim_layers_read_csv(&l, profile_csv, "$.compute.profile", &err), SIM_OK);
    uint64_t cap = (uint64_t)llround(cap_mib * 1048576.0), first = 1048576;
    const sim_time d = 30000000, L = 100000;
    sim_time start = 0;
    *overlap = 0;
    for (int k = 0; k < ROUNDS; k++) {
        sim_time end = start;
        uint64_t acc = 0;
        *nb = 0;
        for (size_t i = l.n; i-- > 0;) {
            acc += 4 * l.layer[i].params;
            if (!(cap_mib > 0 && acc >= (*nb == 0 ? first : cap)) && i > 0)
                continue;
            sim_time t = 0;
            for (int w = 0; w < N; w++) {
                sim_time dw = (sim_time)llround((double)d * slowdown[w]);
                sim_time tw = sim_layers_ready_offset_ns(&l, dw, i);
                t = tw > t ? tw : t;
            }
            ck_assert_uint_eq(acc * 2 % (uint64_t)gbps, 0); /* 2 S_b / gbps ns is whole */
            sim_time step = L + (sim_time)(acc * 2 / (uint64_t)gbps);
            sim_time from = start + t > end ? start + t : end;
            end = from + 2 * (N - 1) * step;
            sim_time busy_to = start + (sim_time)llround((double)d * slowdown[0]);
            *overlap += (end < busy_to ? end : busy_to) - from > 0
                            ? (end < busy_to ? end : busy_to) - from
                            : 0;
            acc = 0;
            (*nb)++;
        }
        start = end;
    }
    sim_layers_fini(&l);
    return start;
}

static const double even[N] = { 1, 1, 1, 1 };
static const double slow2[N] = { 1, 1, 3, 1 };
static const char straggler_set[] =
    "stragglers=[{\"kind\": \"fixed\", \"workers\": [2], \"slowdown\": 3}]";

/* Runs buckets.json with bucket_mb = `cap_mib` (and a straggler's set, or NULL); checks the
 * end against the closed form and the protocol's count of buckets against `expect_nb`. */
static void check_closed_form(double cap_mib, const char *straggler, const double *slowdown,
                              size_t expect_nb)
{
    char set[64];
    snprintf(set, sizeof(set), "protocol.bucket_mb=%.17g", cap_mib);
    const char *sets[] = { set, straggler };
    sim_scenario *sc = harness_load_file(buckets_json, sets, straggler != NULL ? 2 : 1);
    char *dir = harness_tmpdir("allreduce");
    sim_run_summary sum = harness_run(sc, dir, NULL, NULL);
    size_t nb;
    sim_time overlap;
    sim_time expected = closed_form(cap_mib, slowdown, 10, &nb, &overlap);
    ck_assert_uint_eq(nb, expect_nb);
    /* workers.csv: comm_overlap_s (part of compute_s) is the rings' time during backward (none
     * with one bucket; with a straggler, the others' first steps reach it while it computes,
     * so only the bound is checked). Sums of whole ns printed with 17 digits: exact to 1e-12 s. */
    harness_csv t = harness_csv_read(dir, "workers.csv");
    for (size_t w = 0; w < N; w++) {
        double ov = harness_csv_num(&t, w, "comm_overlap_s");
        ck_assert_double_le(ov, harness_csv_num(&t, w, "compute_s"));
        if (slowdown == even)
            ck_assert_double_eq_tol(ov, (double)overlap / 1e9, 1e-12);
    }
    harness_csv_free(&t);
    ck_assert_str_eq(sum.stop_reason, "iterations");
    ck_assert_uint_eq(sum.iterations, N * ROUNDS);
    ck_assert_int_eq(sum.sim_ns, expected);
    if (expect_nb > 1)
        ck_assert_double_eq(harness_summary_number(dir, "buckets"), (double)expect_nb);
    sim_scenario_destroy(sc);
    harness_cleanup(dir);
}

START_TEST(one_bucket_is_compute_then_one_ring)
{
    /* bucket_mb 0: the round starts when backward ends, as before buckets: each round is
     * 30 ms + 6 (100 us + 0.2 x 9.8e6 ns) = 42.36 ms. A bucket larger than the model holds all
     * but the last layer, which DDP's first bucket of 1 MiB takes alone. */
    check_closed_form(0, NULL, even, 1);
    check_closed_form(100, NULL, even, 2);
    size_t nb;
    sim_time ov;
    ck_assert_int_eq(closed_form(0, even, 10, &nb, &ov), 2 * (30000000 + 6 * (100000 + 1960000)));
    ck_assert_int_eq(ov, 0);
}
END_TEST

START_TEST(three_buckets_end_at_the_closed_form)
{
    /* 4 MiB: layer 7 (1.08 MB, at DDP's first cap of 1 MiB), layers 6..3 (4.96 MB), then 2..0
     * (3.76 MB). */
    check_closed_form(4, NULL, even, 3);
}
END_TEST

START_TEST(the_first_bucket_closes_at_first_bucket_mb)
{
    /* first_bucket_mb 4 with bucket_mb 4: layers 7..4 (4.84 MB) then 3..0 (4.96 MB), as DDP
     * with its first cap set to the others'; the closed form with 1 MiB gives three. */
    const char *sets[] = { "protocol.bucket_mb=4", "protocol.first_bucket_mb=4" };
    sim_scenario *sc = harness_load_file(buckets_json, sets, 2);
    char *dir = harness_tmpdir("allreduce");
    harness_run(sc, dir, NULL, NULL);
    ck_assert_double_eq(harness_summary_number(dir, "buckets"), 2);
    sim_scenario_destroy(sc);
    harness_cleanup(dir);
}
END_TEST

START_TEST(eight_buckets_end_at_the_closed_form)
{
    /* 1 MiB: every layer is a bucket of its own. */
    check_closed_form(1, NULL, even, 8);
}
END_TEST

START_TEST(buckets_wait_for_a_straggler_as_the_closed_form_says)
{
    /* Worker 2 three times slower: each bucket is ready when the straggler's backward has
     * produced it; the others' rings wait for it. */
    check_closed_form(0, straggler_set, slow2, 1);
    check_closed_form(4, straggler_set, slow2, 3);
    check_closed_form(1, straggler_set, slow2, 8);
}
END_TEST

START_TEST(buckets_overlap_backward_and_save_time)
{
    /* Overlap: the bucketed iteration is shorter than compute + one ring. */
    size_t nb;
    sim_time ov;
    ck_assert_int_lt(closed_form(1, even, 10, &nb, &ov), closed_form(0, even, 10, &nb, &ov));
}
END_TEST

START_TEST(a_recovered_worker_computes_before_it_joins_the_first_bucket)
{
    /* At 1 Gbit/s, where the rings take longer than backward: worker 3 fails at 2 ms and
     * recovers at 8 ms, before anyone has produced a bucket (nothing in flight). The ring
     * restarts over all four, and worker 3 joins bucket 0 when its own backward has produced
     * it, 8 ms after the others': its buckets are the latest in every ring, so the run ends
     * 8 ms after the closed form's. Joined to bucket 0 at the recovery, before computing, it
     * counted its joins one ring round behind, and the rings ran from 8 ms on, ahead of its
     * backward: the run ended about 8 ms early. */
    const char *sets[] = { "protocol.bucket_mb=1", "network.bandwidth_gbps=1",
                           "stragglers=[{\"kind\": \"failure\", \"workers\": [3], "
                           "\"at_s\": 0.002, \"recover_s\": 0.008}]" };
    sim_scenario *sc = harness_load_file(buckets_json, sets, 3);
    char *dir = harness_tmpdir("allreduce");
    sim_run_summary sum = harness_run(sc, dir, NULL, NULL);
    size_t nb;
    sim_time ov;
    ck_assert_str_eq(sum.stop_reason, "iterations");
    ck_assert_uint_eq(sum.iterations, N * ROUNDS);
    ck_assert_int_eq(sum.sim_ns, 8000000 + closed_form(1, even, 1, &nb, &ov));
    ck_assert_double_eq(harness_summary_number(dir, "ring_restarts"), 2);
    sim_scenario_destroy(sc);
    harness_cleanup(dir);
}
END_TEST

/* workers.csv's params_fnv column, and the iterations, of a run of `json` with `set`. */
static char *final_bits(const char *json, const char *set, char **summary)
{
    const char *sets[] = { set };
    static const char *const cols[] = { "iterations", "params_fnv" };
    return harness_run_columns(harness_load_file(json, sets, 1), cols, 2, summary);
}

START_TEST(training_bits_do_not_depend_on_the_buckets)
{
    /* A real mlp whose 30 MB message makes three buckets of 3 MiB: the mean gradient is the
     * same element-wise sum in worker order, so every replica ends with the same bits as
     * with one bucket, while the run itself is shorter. */
    static const char json[] = "tests/scenarios/allreduce/real.json";
    char *s0, *s3, *s1;
    char *b0 = final_bits(json, "protocol.bucket_mb=0", &s0);
    char *b3 = final_bits(json, "protocol.bucket_mb=3", &s3);
    char *b1 = final_bits(json, "protocol.bucket_mb=0.5", &s1);
    ck_assert_ptr_nonnull(strstr(s3, "\"buckets\": 3"));
    ck_assert_ptr_null(strstr(s0, "\"buckets\""));
    ck_assert_str_eq(b0, b3);
    ck_assert_str_eq(b0, b1);
    ck_assert_ptr_nonnull(strstr(b0, "40 ")); /* 200 iterations over 5 workers */
    free(b0);
    free(b3);
    free(b1);
    free(s0);
    free(s3);
    free(s1);
}
END_TEST

START_TEST(buckets_survive_failures_and_recoveries)
{
    /* Chaos (harness_chaos_json) with the eight-layer profile and 0.1 MiB buckets (the first
     * too): rings
     * restarted mid-iteration start their buckets again; every worker up at the end keeps
     * finishing iterations, and the run is deterministic. */
    for (unsigned seed = 1; seed <= 3; seed++) {
        char *json = harness_chaos_json(seed, seed != 2,
                                        "{\"name\": \"allreduce\", \"bucket_mb\": 0.1, "
                                        "\"first_bucket_mb\": 0.1}");
        const char *sets[] = { "compute.profile=\"tests/data/profile_buckets.csv\"" };
        char *d[2];
        sim_run_summary sa = harness_run_pair(harness_load_spec(json, sets, 1),
                                              harness_load_spec(json, sets, 1), "allreduce", d);
        ck_assert_str_eq(sa.stop_reason, "time");
        ck_assert_uint_gt(sa.iterations, 100);
        ck_assert_double_eq(harness_summary_number(d[0], "buckets"), 8);
        ck_assert_double_gt(harness_summary_number(d[0], "ring_restarts"), 0);
        harness_csv t = harness_csv_read(d[0], "workers.csv");
        for (size_t w = 0; w < t.nrows; w++) /* the overlap is part of the computing time */
            ck_assert_double_le(harness_csv_num(&t, w, "comm_overlap_s"),
                                harness_csv_num(&t, w, "compute_s"));
        harness_csv_free(&t);
        harness_cleanup_pair(d);
        free(json);
    }
}
END_TEST

Suite *test_suite(void)
{
    Suite *s = suite_create("allreduce");
    TCase *exact = tcase_create("exact");
    tcase_add_test(exact, one_bucket_is_compute_then_one_ring);
    tcase_add_test(exact, three_buckets_end_at_the_closed_form);
    tcase_add_test(exact, the_first_bucket_closes_at_first_bucket_mb);
    tcase_add_test(exact, eight_buckets_end_at_the_closed_form);
    tcase_add_test(exact, buckets_wait_for_a_straggler_as_the_closed_form_says);
    tcase_add_test(exact, buckets_overlap_backward_and_save_time);
    tcase_add_test(exact, a_recovered_worker_computes_before_it_joins_the_first_bucket);
    suite_add_tcase(s, exact);
    TCase *bits = tcase_create("bits");
    tcase_set_timeout(bits, 60);
    tcase_add_test(bits, training_bits_do_not_depend_on_the_buckets);
    tcase_add_test(bits, buckets_survive_failures_and_recoveries);
    suite_add_tcase(s, bits);
    return s;
}
