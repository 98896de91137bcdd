/* Local SGD: H local steps then a model all-reduce; exact timing, identical replicas after
 * every averaging round, and the ring shared with all-reduce. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>
#include <gsl/gsl_errno.h>

#include "harness.h"
#include "runtime/ctx.h"
#include "runtime/run.h"
#include "scenario/scenario.h"
#include "sim/tensor.h"

static const char real_json[] = "tests/scenarios/localsgd/real.json";

typedef struct seen {
    int evaluations;
    int all_equal;     /* evaluations at which every replica had the same bits */
    uint64_t last_sum; /* checksum of worker 0 at the end */
} seen;

static void observe(void *ud, sim_ctx *ctx)
{
    seen *s = ud;
    size_t P = sim_ctx_num_params(ctx);
    uint64_t first = sim_tensor_checksum(sim_ctx_params(ctx, 0), P);
    int equal = 1;
    for (uint32_t w = 1; w < sim_ctx_workers(ctx); w++)
        equal &= sim_tensor_checksum(sim_ctx_params(ctx, w), P) == first;
    s->evaluations++;
    s->all_equal += equal;
    s->last_sum = first;
}

START_TEST(localsgd_round_is_h_computations_then_a_ring_allreduce)
{
    /* Timing only, 4 workers: H = 3 steps of 10 ms, then 6 ring steps of
     * 2 * 50 us + (40 MB / 4) * 8 / 10 Gbit/s = 8.1 ms. Two rounds. */
    static const char json[] =
        "tests/scenarios/localsgd/localsgd_round_is_h_computations_then_a_ring_allreduce.json";
    const char *sets[] = { "stop={\"iterations\": 24}" };
    sim_scenario *sc = harness_load_file(json, sets, 1);
    seen s = { 0 };
    sim_run_summary sum = harness_run(sc, NULL, observe, &s);
    /* The 24th iteration is counted when the second round's last local step ends, and the
     * run stops at the next round boundary, when that round's all-reduce has ended for
     * every worker: two rounds of 30 ms + 48.6 ms. */
    ck_assert_int_eq(sum.sim_ns, 2 * (30000000 + 6 * 8100000));
    ck_assert_uint_eq(sum.iterations, 24);
    sim_scenario_destroy(sc);
}
END_TEST

START_TEST(localsgd_replicas_are_identical_after_each_averaging_round)
{
    /* 3 workers, no jitter: 3 local steps of 7 ms, then a ring of 4 steps of about 100 us
     * (the 147-parameter model is tiny), so round k ends at about k * 21.4 ms and the next
     * local step at k * 21.4 + 7 ms. Evaluations every 21.5 ms all fall in between: every
     * replica must hold the same bits there. */
    const char *sets[] = { "compute.jitter_sigma=0", "workers=3", "eval.every_s=0.0215",
                           "stop={\"time_s\": 0.086}" };
    sim_scenario *sc = harness_load_file(real_json, sets, 4);
    seen s = { 0 };
    harness_run(sc, NULL, observe, &s);
    /* 0, 21.5, 43, 64.5 ms, and the end of the run at 86 ms (no evaluation is due at the
     * stop: the end is evaluated after the events of its instant). */
    ck_assert_int_eq(s.evaluations, 5);
    ck_assert_int_eq(s.all_equal, s.evaluations);
    sim_scenario_destroy(sc);

    /* The control: at 10.5 ms, between local steps, the replicas have diverged. */
    const char *mid[] = { "compute.jitter_sigma=0", "workers=3", "eval.every_s=0.0105",
                          "stop={\"time_s\": 0.0105}" };
    sc = harness_load_file(real_json, mid, 4);
    seen t = { 0 };
    harness_run(sc, NULL, observe, &t);
    ck_assert_int_eq(t.evaluations, 2); /* 0 and the end, at 10.5 ms */
    ck_assert_int_eq(t.all_equal, 1);   /* only at time 0 */
    sim_scenario_destroy(sc);
}
END_TEST

START_TEST(localsgd_with_one_step_and_one_worker_trains)
{
    const char *sets[] = { "workers=1", "protocol.local_steps=1" };
    sim_scenario *sc = harness_load_file(real_json, sets, 2);
    seen s = { 0 };
    sim_run_summary sum = harness_run(sc, NULL, observe, &s);
    ck_assert_str_eq(sum.stop_reason, "time");
    ck_assert_uint_gt(sum.iterations, 200);
    ck_assert_int_eq(s.all_equal, s.evaluations); /* one worker: trivially */
    sim_scenario_destroy(sc);
}
END_TEST

START_TEST(localsgd_rejects_bad_local_steps)
{
    const char *sets[] = { "protocol.local_steps=0" };
    sim_err err;
    sim_scenario *sc = sim_scenario_load(real_json, sets, 1, &err);
    ck_assert_ptr_nonnull(sc);
    ck_assert_int_eq(harness_check(sc, &err), SIM_ESCENARIO);
    ck_assert_str_eq(err.path, "$.protocol.local_steps");
    ck_assert_str_eq(err.msg, "must be an integer in [1, 1000000], got 0");
    sim_scenario_destroy(sc);
}
END_TEST

Suite *test_suite(void)
{
    Suite *s = suite_create("localsgd");
    TCase *tc = tcase_create("localsgd");
    tcase_add_test(tc, localsgd_round_is_h_computations_then_a_ring_allreduce);
    tcase_add_test(tc, localsgd_replicas_are_identical_after_each_averaging_round);
    tcase_add_test(tc, localsgd_with_one_step_and_one_worker_trains);
    tcase_add_test(tc, localsgd_rejects_bad_local_steps);
    tcase_set_timeout(tc, 120);
    suite_add_tcase(s, tc);
    return s;
}
