/* Gossip end to end: with zero gradients the sum of the models is kept and the disagreement
 * shrinks; one round's means worked out by hand, with and without a failed worker (which
 * keeps its value); failures mid-round never stall the ring, recoveries rejoin; runs are
 * deterministic. Runs use a tiny synthetic data set or the timing-only model. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "harness.h"
#include "runtime/ctx.h"
#include "runtime/run.h"
#include "scenario/scenario.h"

/* Float unit roundoff. */
static const double U = 0x1p-24;

/* Real tensors, zero gradients (lr 0): softmax on 8 features and 3 classes (27 parameters),
 * each worker drawing its own initial model, no jitter. A round is 10 ms of compute and a
 * 108-byte model to each neighbour (about 0.1 ms), so round k ends at about k * 10.1 ms
 * for every worker at once; evaluations every 7 ms never coincide with one. */
static const char zero_json[] = "tests/scenarios/gossip/zero.json";

/* Timing-only: 8 workers, 10 ms of compute, 5 MB models (4 ms on 10 Gbit/s). */
static const char timing_json[] = "tests/scenarios/gossip/timing.json";

/* Every worker's model at each evaluation (tests/harness.h). */
typedef harness_models observer;

static double messages_dropped(const char *summary)
{
    const char *at = strstr(summary, "\"dropped\": ");
    ck_assert_ptr_nonnull(at);
    return strtod(at + 11, NULL);
}

/* The mean sim_tensor_mean computes: summed in float in the order given, divided once. */
static float mean_of(const float *const *xs, size_t k, size_t i)
{
    float s = xs[0][i];
    for (size_t v = 1; v < k; v++)
        s = s + xs[v][i];
    return s / (float)k;
}

/* ---- averaging with zero gradients ---- */

START_TEST(zero_gradients_keep_the_sum_and_shrink_the_disagreement)
{
    const char *sets[] = { "workers=8", "stop.time_s=0.6", "eval.every_s=0.0137" };
    observer *obs = calloc(1, sizeof(*obs));
    char *summary;
    harness_run_models(zero_json, sets, 3, obs, &summary);
    ck_assert_uint_ge(obs->n, 40);
    ck_assert_double_ge(harness_report_in(summary, "rounds"), 58);
    ck_assert_double_eq(harness_report_in(summary, "degraded_mixes"), 0);
    ck_assert_double_eq(harness_report_in(summary, "stale_models"), 0);
    for (size_t k = 1; k < obs->n; k++) {
        /* A round's mean of three errs by at most (2 + 3 / 3 + 1) U max|x| < 3 U max|x| per
         * element and worker (the two float sums, then the division), so the sum over 8
         * workers drifts by at most 8 * 3 U max|x| per round; round r ends at r * 10.1 ms. */
        double rounds = floor((double)obs->t_ns[k] / 1.01e7);
        double tol = rounds * 8 * 3 * U * obs->max_abs + 1e-300;
        for (size_t i = 0; i < obs->p; i++)
            ck_assert_msg(fabs(obs->sum[k][i] - obs->sum[0][i]) <= tol,
                          "t %lld, param %zu: %.9g vs %.9g (tol %.3g)", obs->t_ns[k], i,
                          obs->sum[k][i], obs->sum[0][i], tol);
        /* Each round is a doubly stochastic averaging: the disagreement never grows (but by
         * rounding, once it is down at float resolution). */
        double floor_noise = 8 * (4 * U * obs->max_abs) * (4 * U * obs->max_abs) * obs->p;
        ck_assert_double_le(obs->consensus[k], obs->consensus[k - 1] + floor_noise);
    }
    /* Ring of 8: |lambda_2| = 1/3 + 2/3 cos(pi / 4) = 0.805, so 59 rounds shrink the
     * consensus by 0.805^(2 * 59), about 1e-11. */
    ck_assert_double_gt(obs->consensus[0], 0.0);
    ck_assert_double_le(obs->consensus[obs->n - 1], obs->consensus[0] * 1e-8);
    free(summary);
    free(obs);
}
END_TEST

START_TEST(one_round_is_the_mean_of_each_worker_and_its_two_neighbours_by_hand)
{
    /* 5 workers: observations at 0, 7 and 14 ms; round 1 ends at about 10.1 ms. */
    observer *obs = calloc(1, sizeof(*obs));
    harness_run_models(zero_json, NULL, 0, obs, NULL);
    ck_assert_int_eq(obs->t_ns[2], 14000000);
    float(*x0)[HARNESS_OBS_PARAMS] = obs->x[0], (*x1)[HARNESS_OBS_PARAMS] = obs->x[2];
    ck_assert_mem_eq(obs->x[1], obs->x[0], sizeof(obs->x[0])); /* nothing before 10 ms */
    for (size_t i = 0; i < obs->p; i++) {
        /* Worker 2: ((x1 + x2) + x3) / 3; worker 0 (neighbours 4 and 1): ((x0 + x1) + x4)
         * / 3, in id order; worker 4: ((x0 + x3) + x4) / 3. */
        const float *m2[] = { x0[1], x0[2], x0[3] }, *m0[] = { x0[0], x0[1], x0[4] },
                    *m4[] = { x0[0], x0[3], x0[4] };
        ck_assert(x1[2][i] == mean_of(m2, 3, i));
        ck_assert(x1[0][i] == mean_of(m0, 3, i));
        ck_assert(x1[4][i] == mean_of(m4, 3, i));
        /* Worked by hand from the numbers on the first parameter. */
        if (i == 0) {
            float s = x0[1][0] + x0[2][0];
            s = s + x0[3][0];
            ck_assert(x1[2][0] == s / 3.0f);
            ck_assert_double_eq_tol((double)x1[2][0],
                                    ((double)x0[1][0] + (double)x0[2][0] + (double)x0[3][0]) / 3.0,
                                    4 * U * obs->max_abs);
        }
    }
    free(obs);
}
END_TEST

START_TEST(a_down_worker_keeps_its_value_and_its_neighbours_renormalise)
{
    /* Worker 2 fails at 5 ms, during its first computation, for good: 1 and 3 mix only with
     * their other neighbour, (x0 + x1) / 2 and (x3 + x4) / 2, and 2 keeps its value. */
    const char *sets[] = {
        "stragglers=[{\"kind\": \"failure\", \"workers\": [2], \"at_s\": 0.005}]"
    };
    observer *obs = calloc(1, sizeof(*obs));
    char *summary;
    harness_run_models(zero_json, sets, 1, obs, &summary);
    float(*x0)[HARNESS_OBS_PARAMS] = obs->x[0], (*x1)[HARNESS_OBS_PARAMS] = obs->x[2];
    for (size_t i = 0; i < obs->p; i++) {
        const float *m1[] = { x0[0], x0[1] }, *m3[] = { x0[3], x0[4] },
                    *m0[] = { x0[0], x0[1], x0[4] };
        ck_assert(x1[1][i] == mean_of(m1, 2, i));
        ck_assert(x1[3][i] == mean_of(m3, 2, i));
        ck_assert(x1[0][i] == mean_of(m0, 3, i));
    }
    for (size_t k = 0; k < obs->n; k++)
        ck_assert_mem_eq(obs->x[k][2], obs->x[0][2], obs->p * sizeof(float));
    ck_assert_double_eq(harness_report_in(summary, "stale_models"), 0);
    /* 1 and 3 mix without 2 in each of the 5 rounds up to 60 ms. */
    ck_assert_double_eq(harness_report_in(summary, "degraded_mixes"), 10);
    free(summary);
    free(obs);
}
END_TEST

/* ---- failures never stall ---- */

START_TEST(a_worker_failing_mid_round_does_not_stall_its_neighbours)
{
    /* Worker 3 fails at 12 ms, while its 5 MB models of round 0 are on their way to 2 and
     * 4 (two flows sharing its uplink: 10 to 18 ms): both are dropped, and 2 and 4 must
     * stop waiting for them. The run reaches its 400 iterations (about 57 rounds of the 7
     * others, 18 ms each) in about 1.05 s, long before 5 s. */
    const char *forever[] = { "stragglers=[{\"kind\": \"failure\", \"workers\": [3], "
                              "\"at_s\": 0.012}]" };
    char *summary;
    sim_run_summary sum = harness_run_models(timing_json, forever, 1, NULL, &summary);
    ck_assert_str_eq(sum.stop_reason, "iterations");
    ck_assert_uint_ge(sum.iterations, 400);
    ck_assert_double_ge(messages_dropped(summary), 2);
    ck_assert_double_ge(harness_report_in(summary, "degraded_mixes"), 2);
    ck_assert_int_lt(sum.sim_ns, 1200000000);
    free(summary);
    /* The same failure, recovering at 55.5 ms: it rejoins and the ring runs on. */
    const char *back[] = { "stragglers=[{\"kind\": \"failure\", \"workers\": [3], "
                           "\"at_s\": 0.012, \"recover_s\": 0.0555}]" };
    sum = harness_run_models(timing_json, back, 1, NULL, &summary);
    ck_assert_str_eq(sum.stop_reason, "iterations");
    ck_assert_double_eq(harness_report_in(summary, "rejoins"), 1);
    ck_assert_double_eq(harness_report_in(summary, "stale_models"), 0);
    ck_assert_int_lt(sum.sim_ns, 1200000000);
    free(summary);
}
END_TEST

/* Random failures and recoveries for `seed` (harness_chaos_json), run by gossip. */
static char *chaos_json(unsigned seed, bool real)
{
    return harness_chaos_json(seed, real, "{\"name\": \"gossip\"}");
}

static char *run_csv(const char *json, const char *const *sets, size_t n, char **summary)
{
    sim_scenario *sc = harness_load_spec(json, sets, n);
    char *dir = harness_tmpdir("gossip");
    sim_run_summary sum = harness_run(sc, dir, NULL, NULL);
    ck_assert_str_eq(sum.stop_reason, "time");
    char *csv = harness_slurp(dir, "workers.csv");
    *summary = harness_slurp(dir, "summary.json");
    harness_cleanup(dir);
    sim_scenario_destroy(sc);
    return csv;
}

/* Runs chaos_json(seed) to 1.7 s and to 2 s: every worker up after 1.6 s finished
 * iterations in between (none waits for good). */
static void check_chaos(unsigned seed, bool real, double *rejoins)
{
    char *json = chaos_json(seed, real), *sa, *sb;
    const char *early[] = { "stop.time_s=1.7" };
    char *a = run_csv(json, early, 1, &sa), *b = run_csv(json, NULL, 0, &sb);
    for (unsigned w = 0; w < 12; w++) {
        unsigned long ia, ib;
        double da, db;
        harness_worker_row(a, w, &ia, &da);
        harness_worker_row(b, w, &ib, &db);
        if (db - da < 1e-9)
            ck_assert_msg(ib > ia, "seed %u: worker %u stuck at %lu iterations", seed, w, ib);
        else
            ck_assert_double_eq_tol(db - da, 0.3, 1e-9); /* down for good */
    }
    ck_assert_double_eq(harness_report_in(sb, "stale_models"), 0);
    *rejoins += harness_report_in(sb, "rejoins");
    free(a);
    free(b);
    free(sa);
    free(sb);
    free(json);
}

START_TEST(random_failures_and_recoveries_never_stall)
{
    double rejoins = 0;
    for (unsigned seed = 1; seed <= 10; seed++)
        check_chaos(seed, false, &rejoins);
    for (unsigned seed = 11; seed <= 12; seed++)
        check_chaos(seed, true, &rejoins);
    ck_assert_double_gt(rejoins, 20);
}
END_TEST

START_TEST(runs_with_failures_are_deterministic)
{
    char *json = chaos_json(4, true), *sa, *sb, *sc;
    char *a = run_csv(json, NULL, 0, &sa), *b = run_csv(json, NULL, 0, &sb);
    ck_assert_str_eq(a, b);
    harness_strip_wall(sa);
    harness_strip_wall(sb);
    ck_assert_str_eq(sa, sb);
    const char *sets[] = { "seed=5" };
    char *c = run_csv(json, sets, 1, &sc);
    ck_assert_str_ne(a, c);
    free(a);
    free(b);
    free(c);
    free(sa);
    free(sb);
    free(sc);
    free(json);
}
END_TEST

START_TEST(the_example_scenario_validates_and_the_protocol_takes_no_parameters)
{
    sim_scenario *sc = harness_load_file("scenarios/gossip.json", NULL, 0);
    sim_scenario_destroy(sc);
    const char *sets[] = { "protocol.graph=ring" };
    harness_expect_rejected_file(timing_json, sets, 1, "$.protocol.graph",
                                 "unknown key (valid: name)");
}
END_TEST

Suite *test_suite(void)
{
    Suite *s = suite_create("gossip");
    TCase *tc = tcase_create("averaging");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, zero_gradients_keep_the_sum_and_shrink_the_disagreement);
    tcase_add_test(tc, one_round_is_the_mean_of_each_worker_and_its_two_neighbours_by_hand);
    tcase_add_test(tc, a_down_worker_keeps_its_value_and_its_neighbours_renormalise);
    suite_add_tcase(s, tc);
    tc = tcase_create("failures");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, a_worker_failing_mid_round_does_not_stall_its_neighbours);
    tcase_add_test(tc, random_failures_and_recoveries_never_stall);
    tcase_add_test(tc, runs_with_failures_are_deterministic);
    tcase_add_test(tc, the_example_scenario_validates_and_the_protocol_takes_no_parameters);
    suite_add_tcase(s, tc);
    return s;
}
