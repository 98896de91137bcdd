/* D-PSGD end to end: failures and recoveries, and determinism. Runs use tiny synthetic data
 * sets or the timing-only model (helpers in tests/harness_dpsgd.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>
#include <gsl/gsl_eigen.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_matrix.h>
#include <gsl/gsl_rng.h>
#include <gsl/gsl_sort_vector.h>
#include <gsl/gsl_vector.h>

#include "harness.h"
#include "harness_dpsgd.h"
#include "runtime/ctx.h"
#include "runtime/run.h"
#include "scenario/scenario.h"

/* ---- failures ---- */

START_TEST(a_failed_worker_is_mixed_out_then_rejoins_with_a_neighbours_model)
{
    /* Ring of 4, zero gradients, iterations ending every 10 ms, evaluations every 7 ms.
     * Worker 2 fails at 25 ms, in iteration 2, after its model reached 1 and 3 (at 20.1 ms),
     * who still mix it at 30 ms. From then on 1 and 3 mix without it, W_ii absorbing its
     * weight: on the path 3-0-1 W stays symmetric, so the live mean is kept at 35, 42 and
     * 49 ms (across the iteration ending at 40 ms). Worker 2 recovers at 52 ms, asks worker 1
     * (1 and 3 are both in iteration 5: the lower id) and adopts its model at 52.2 ms,
     * which worker 1 keeps until 60 ms: at 56 ms the two hold the same bits. */
    const char *sets[] = {
        "workers=4", "eval.every_s=0.007", "stop.time_s=0.0655",
        ("stragglers=[{\"kind\": \"failure\", \"workers\": [2], \"at_s\": 0.025, "
         "\"recover_s\": 0.052}]")
    };
    observer *obs = calloc(1, sizeof(*obs));
    outputs o = dpt_run_with(dpt_zero_json, sets, 4, dpt_observe, obs);
    ck_assert_uint_eq(obs->n, 11); /* 0, 7, ..., 63 ms and the end */
    ck_assert_int_eq(obs->t_ns[5], 35000000);
    double e = (2.0 * 2 + 2.0) * U * obs->max_abs;         /* per_iteration, degree 2 */
    ck_assert_double_le(dpt_mean_drift(obs, 3, 0), 2 * e); /* all four, two iterations */
    ck_assert_double_le(dpt_mean_drift(obs, 6, 5), 1 * e);
    ck_assert_double_le(dpt_mean_drift(obs, 7, 5), 1 * e);
    ck_assert_double_gt(dpt_mean_drift(obs, 5, 0), 1e3 * e); /* the failure did move it */
    ck_assert(!obs->same_21[7] && !obs->same_23[7]);
    ck_assert(obs->same_21[8] && !obs->same_23[8]);
    ck_assert(!obs->same_21[9]); /* mixing again */
    ck_assert_double_eq(dpt_report(&o, "rejoins"), 1);
    /* Workers 1 and 3 mixed without 2 in iterations 3, 4 and 5. */
    ck_assert_double_eq(dpt_report(&o, "degraded_mixes"), 6);
    ck_assert_double_eq(dpt_report(&o, "max_neighbour_gap"), 1);
    free(obs);
    dpt_outputs_free(&o);
}
END_TEST

START_TEST(a_model_sent_ahead_before_a_failure_is_mixed_once)
{
    /* Two workers, worker 1 four times slower (40 ms an iteration). Worker 0 finishes
     * iteration 0 at 10 ms and sends its iteration-1 model, which reaches worker 1 during
     * its iteration 0. Worker 0 fails at 20 ms and is back at 25 ms: worker 1, still in
     * iteration 0, already holds the old worker 0's model of iteration 1 and will mix it.
     * So the edge is used again from iteration 2, not 1 (a second model of iteration 1
     * would be a duplicate): worker 0 resumes at iteration 2, and its model is held back
     * until worker 1 starts iteration 1 at 40 ms. */
    const char *sets[] = {
        "workers=2", "stop.time_s=0.2",
        ("stragglers=[{\"kind\": \"fixed\", \"workers\": [1], \"slowdown\": 4},"
         " {\"kind\": \"failure\", \"workers\": [0], \"at_s\": 0.02, \"recover_s\": 0.025}]")
    };
    observer *obs = calloc(1, sizeof(*obs));
    outputs o = dpt_run_with(dpt_zero_json, sets, 3, dpt_observe, obs);
    ck_assert_double_eq(dpt_report(&o, "rejoins"), 1);
    ck_assert_double_eq(dpt_report(&o, "deferred_sends"), 1);
    ck_assert_double_eq(dpt_report(&o, "max_neighbour_gap"), 1);
    unsigned long it[2];
    ck_assert_uint_eq(dpt_iterations(&o, it, 2), 2);
    /* Worker 1 finishes every 40 ms: 5 by 200 ms. Worker 0 finished iteration 0, then 2, 3
     * and 4, each as worker 1's model of it arrives (0.1 ms after worker 1 starts it, at
     * 80, 120 and 160 ms); worker 1 starts iteration 5 at 200 ms, the end. */
    ck_assert_uint_eq(it[1], 5);
    ck_assert_uint_eq(it[0], 4);
    free(obs);
    dpt_outputs_free(&o);
}
END_TEST

START_TEST(a_worker_whose_source_fails_asks_another_neighbour)
{
    /* Ring of 4 with 5 MB messages (4 ms a flow alone). Worker 2 fails at 25 ms and is
     * back at 52 ms; it asks worker 1, whose reply takes several ms on the wire, and worker
     * 1 fails for good at 53 ms, losing it. Worker 2 then asks worker 3, adopts its model
     * and goes on with worker 3 alone (10 ms an iteration, about 14 more by 200 ms). */
    const char *sets[] = {
        "workers=4", "stop.time_s=0.2", "workload.message_bytes=5000000",
        ("stragglers=[{\"kind\": \"failure\", \"workers\": [2], \"at_s\": 0.025, "
         "\"recover_s\": 0.052}, {\"kind\": \"failure\", \"workers\": [1], \"at_s\": 0.053}]")
    };
    outputs o = dpt_run(dpt_zero_json, sets, 4);
    ck_assert_double_eq(dpt_report(&o, "rejoins"), 1);
    const char *at = strstr(o.summary, "\"dropped\": ");
    ck_assert_ptr_nonnull(at);
    ck_assert_double_ge(strtod(at + 11, NULL), 1); /* the reply */
    unsigned long it[4];
    ck_assert_uint_eq(dpt_iterations(&o, it, 4), 4);
    ck_assert_uint_ge(it[2], 2 + 12);
    ck_assert_str_eq(o.sum.stop_reason, "time");
    dpt_outputs_free(&o);
}
END_TEST

/* A scenario with random failures and recoveries for `seed`: 12 workers (a real model when
 * `real`), random speeds, jitter, random slowdowns and a link straggler that reorders
 * messages; 8 failures in the first 1.2 s, each recovering within 0.4 s or, one in six,
 * never. So from 1.6 s on every worker is either up for good or down for good. */
static char *chaos_json(unsigned seed, bool real)
{
    static const char *const graphs[] = { "ring", "torus", "exponential", "star", "complete" };
    char protocol[96];
    snprintf(protocol, sizeof(protocol), "{\"name\": \"dpsgd\", \"graph\": \"%s\"}",
             graphs[seed % 5]);
    return harness_chaos_json(seed, real, protocol);
}

/* Runs chaos_json(seed) to 1.7 s and to 2 s: both end by time, never stalled, and every
 * worker up after 1.6 s finished iterations between 1.7 and 2 s (none waits for good). */
static void check_chaos(unsigned seed, bool real, double *rejoins, double *deferred,
                        double *dropped)
{
    char *json = chaos_json(seed, real);
    const char *early[] = { "stop.time_s=1.7" };
    outputs a = dpt_run(json, early, 1);
    outputs b = dpt_run(json, NULL, 0);
    ck_assert_str_eq(a.sum.stop_reason, "time");
    ck_assert_str_eq(b.sum.stop_reason, "time");
    ck_assert_int_eq(b.sum.sim_ns, 2000000000);
    for (unsigned w = 0; w < 12; w++) {
        unsigned long ia, ib;
        double da, db;
        harness_worker_row(a.workers, w, &ia, &da);
        harness_worker_row(b.workers, w, &ib, &db);
        if (db - da < 1e-9)
            ck_assert_msg(ib > ia, "seed %u: worker %u stuck at %lu iterations", seed, w, ib);
        else
            ck_assert_double_eq_tol(db - da, 0.3, 1e-9); /* down for good */
    }
    ck_assert_double_le(dpt_report(&b, "max_neighbour_gap"), 1);
    *rejoins += dpt_report(&b, "rejoins");
    *deferred += dpt_report(&b, "deferred_sends");
    const char *at = strstr(b.summary, "\"dropped\": ");
    ck_assert_ptr_nonnull(at);
    *dropped += strtod(at + 11, NULL);
    if (real) {
        const char *acc = strstr(b.summary, "\"final_accuracy\": ");
        ck_assert_ptr_nonnull(acc);
        ck_assert_double_gt(strtod(acc + 18, NULL), 0.5); /* 3 classes: chance is 1/3 */
    }
    dpt_outputs_free(&a);
    dpt_outputs_free(&b);
    free(json);
}

START_TEST(random_failures_and_recoveries_never_stall)
{
    double rejoins = 0, deferred = 0, dropped = 0;
    for (unsigned seed = 1; seed <= 10; seed++)
        check_chaos(seed, false, &rejoins, &deferred, &dropped);
    /* The runs did exercise every path: rejoins, models held back, messages lost. */
    ck_assert_double_gt(rejoins, 20);
    ck_assert_double_gt(deferred, 0);
    ck_assert_double_gt(dropped, 0);
}
END_TEST

START_TEST(random_failures_with_real_tensors_never_stall)
{
    double rejoins = 0, deferred = 0, dropped = 0;
    for (unsigned seed = 11; seed <= 13; seed++)
        check_chaos(seed, true, &rejoins, &deferred, &dropped);
    ck_assert_double_gt(rejoins, 5);
}
END_TEST

START_TEST(runs_with_failures_are_deterministic)
{
    char *json = chaos_json(4, true);
    outputs a = dpt_run(json, NULL, 0), b = dpt_run(json, NULL, 0);
    ck_assert_str_eq(a.metrics, b.metrics);
    ck_assert_str_eq(a.workers, b.workers);
    harness_strip_wall(a.summary);
    harness_strip_wall(b.summary);
    ck_assert_str_eq(a.summary, b.summary);
    /* Another seed gives another run. */
    const char *sets[] = { "seed=5" };
    outputs c = dpt_run(json, sets, 1);
    ck_assert_str_ne(a.workers, c.workers);
    dpt_outputs_free(&a);
    dpt_outputs_free(&b);
    dpt_outputs_free(&c);
    free(json);
}
END_TEST

Suite *test_suite(void)
{
    Suite *s = suite_create("dpsgd_failures");
    TCase *tc = tcase_create("failures");
    tcase_add_test(tc, a_failed_worker_is_mixed_out_then_rejoins_with_a_neighbours_model);
    tcase_add_test(tc, a_model_sent_ahead_before_a_failure_is_mixed_once);
    tcase_add_test(tc, a_worker_whose_source_fails_asks_another_neighbour);
    tcase_add_test(tc, random_failures_and_recoveries_never_stall);
    tcase_add_test(tc, random_failures_with_real_tensors_never_stall);
    tcase_add_test(tc, runs_with_failures_are_deterministic);
    tcase_set_timeout(tc, 300);
    suite_add_tcase(s, tc);
    return s;
}
