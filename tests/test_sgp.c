/* SGP (PROTOCOLS 1.6): push-sum keeps the sums of numerators and weights, so with zero
 * gradients every de-biased model tends to the initial mean, with or without dropouts; and
 * it trains. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "harness.h"
#include "runtime/ctx.h"
#include "runtime/run.h"
#include "scenario/scenario.h"

enum {
    MAX_W = 64,
    MAX_P = 4
};

typedef struct observer {
    size_t calls, n, p;
    double first_mean[MAX_P];
    float first[MAX_W][MAX_P], last[MAX_W][MAX_P];
} observer;

static void observe(void *ud, struct sim_ctx *ctx)
{
    observer *o = ud;
    o->n = harness_workers_within(ctx, MAX_W);
    o->p = harness_params_within(ctx, MAX_P);
    for (size_t i = 0; i < o->p; i++) {
        double sum = 0.0;
        for (uint32_t w = 0; w < o->n; w++) {
            float x = sim_ctx_params(ctx, w)[i];
            sum += (double)x;
            o->last[w][i] = x;
            if (o->calls == 0)
                o->first[w][i] = x;
        }
        if (o->calls == 0)
            o->first_mean[i] = sum / (double)o->n;
    }
    o->calls++;
}

static void run_to_mean(const char *extra, unsigned peers, const char *tag)
{
    char json[1024];
    snprintf(json, sizeof(json),
             "{\"seed\": 2385, \"workers\": 48, \"compute\": {\"iteration_ms\": 1},"
             " \"network\": {\"bandwidth_gbps\": 1, \"latency_us\": 50}, %s"
             " \"workload\": {\"model\": {\"name\": \"vector\", \"dim\": 3}, \"lr\": 0},"
             " \"protocol\": {\"name\": \"sgp\", \"peers\": %u},"
             " \"stop\": {\"rounds\": 80, \"time_s\": 100}, \"eval\": {\"every_s\": 10}}",
             extra, peers);
    sim_scenario *sc = harness_load(json, "sgp.json", NULL, 0);
    char *dir = harness_tmpdir(tag);
    observer *o = calloc(1, sizeof(*o));
    sim_run_summary s = harness_run(sc, dir, observe, o);
    ck_assert_str_eq(s.stop_reason, "rounds");
    /* The sum of the weights is the worker count (to double rounding of 80 mixes). */
    char *sum = harness_slurp(dir, "summary.json");
    ck_assert_ptr_nonnull(strstr(sum, "\"weight_sum\": 48"));
    free(sum);
    for (size_t i = 0; i < o->p; i++)
        for (size_t w = 0; w < o->n; w++)
            /* 80 rounds of mixing over 48 workers: geometric convergence far below 1e-4;
             * float rounding of the numerators ~1e-6. */
            ck_assert_double_eq_tol((double)o->last[w][i], o->first_mean[i], 1e-4);
    free(o);
    harness_cleanup(dir);
    sim_scenario_destroy(sc);
}

START_TEST(zero_gradients_converge_to_the_initial_mean)
{
    run_to_mean("", 1, "sgp-mean");
    run_to_mean("", 2, "sgp-mean2");
}
END_TEST

START_TEST(choosing_out_peers_reads_whether_they_sit_out_as_peer_reads)
{
    /* With one peer and nobody down, every worker checks its one out-peer each round without a
     * message (does it sit out?): 48 reads a round, counted in summary.json's peer_reads. */
    const char *json = "{\"seed\": 2385, \"workers\": 48, \"compute\": {\"iteration_ms\": 1},"
                       " \"workload\": {\"model\": {\"name\": \"vector\", \"dim\": 3}, \"lr\": 0},"
                       " \"protocol\": {\"name\": \"sgp\"}, \"stop\": {\"rounds\": 10}}";
    sim_scenario *sc = harness_load(json, "sgp-peer.json", NULL, 0);
    char *dir = harness_tmpdir("sgp-peer");
    harness_run(sc, dir, NULL, NULL);
    double rounds = harness_summary_number(dir, "rounds");
    ck_assert_double_eq(harness_summary_number(dir, "peer_reads"), 48 * rounds);
    harness_cleanup(dir);
    sim_scenario_destroy(sc);
}
END_TEST

START_TEST(dropouts_keep_the_sums_and_the_limit)
{
    run_to_mean("\"stragglers\": [{\"kind\": \"dropout\", \"probability\": 0.2}],", 1, "sgp-drop");
}
END_TEST

START_TEST(sgp_trains_a_softmax)
{
    const char *json = "{\"seed\": 4127, \"workers\": 6, \"compute\": {\"iteration_ms\": 10},"
                       " \"network\": {\"bandwidth_gbps\": 10, \"latency_us\": 50},"
                       " \"workload\": {\"dataset\": {\"name\": \"synthetic\", \"samples\": 1200,"
                       " \"test_samples\": 300, \"dim\": 8, \"classes\": 3, \"separation\": 3},"
                       " \"model\": {\"name\": \"softmax\"}, \"batch\": 16, \"lr\": 0.1},"
                       " \"protocol\": {\"name\": \"sgp\"}, \"stop\": {\"time_s\": 1.5},"
                       " \"eval\": {\"every_s\": 0.5, \"samples\": 300}}";
    sim_scenario *sc = harness_load(json, "sgp-train.json", NULL, 0);
    char *dir = harness_tmpdir("sgp-train");
    harness_run(sc, dir, NULL, NULL);
    harness_csv t = harness_csv_read(dir, "metrics.csv");
    double first = harness_csv_num(&t, 0, "test_loss");
    double last = harness_csv_num(&t, t.nrows - 1, "test_loss");
    ck_assert_double_lt(last, 0.5 * first);
    ck_assert_double_gt(harness_csv_num(&t, t.nrows - 1, "test_accuracy"), 0.8);
    harness_csv_free(&t);
    harness_cleanup(dir);
    sim_scenario_destroy(sc);
}
END_TEST

/* Workers 0 and 1 of 4 down for good: on the exponential graph worker 3's peers are 0 and 1,
 * so with down peers merely left out nobody sent to worker 2, whose weight halved every other
 * round until its model diverged (the run failed). A down peer's share now goes to the next
 * live worker: the survivors mix with each other, their weights stay bounded, and they learn. */
START_TEST(survivors_whose_peers_failed_keep_mixing)
{
    const char *json = "{\"seed\": 779742, \"workers\": 4, \"compute\": {\"iteration_ms\": 5},"
                       " \"workload\": {\"dataset\": {\"name\": \"synthetic\", \"samples\": 400,"
                       " \"dim\": 4, \"classes\": 3}, \"model\": {\"name\": \"softmax\"},"
                       " \"batch\": 4}, \"protocol\": {\"name\": \"sgp\"},"
                       " \"stragglers\": [{\"kind\": \"failure\", \"workers\": [0, 1],"
                       " \"at_s\": 0.319}], \"stop\": {\"time_s\": 2},"
                       " \"eval\": {\"every_s\": 0.5, \"samples\": 100}}";
    sim_scenario *sc = harness_load(json, "sgp-survivors.json", NULL, 0);
    char *dir = harness_tmpdir("sgp-survivors");
    sim_run_summary sum = harness_run(sc, dir, NULL, NULL);
    ck_assert_str_eq(sum.stop_reason, "time");
    ck_assert_double_gt(harness_summary_number(dir, "final_accuracy"), 0.8);
    harness_cleanup(dir);
    sim_scenario_destroy(sc);
}
END_TEST

/* `schedule` "moshpit-averager" on 5 workers (2 matrices, shifts 2^h and 2^(h+1); the
 * matrices of test_graph.c's moshpit_averager_matrices_are_the_flattened_rolls): round 0
 * applies matrix 1, round 1 matrix 0, each row renormalised (x_i := the mean of its row's
 * entries); the weights stay 1, and the mean over workers is not kept. */
START_TEST(moshpit_averager_applies_the_authors_rows)
{
    static const double m1[5][5] = { { 1, 1, 1, 1, 1 },
                                     { 0, 1, 0, 1, 0 },
                                     { 1, 0, 1, 0, 1 },
                                     { 0, 1, 0, 1, 0 },
                                     { 1, 0, 1, 0, 1 } };
    static const double m0[5][5] = { { 2, 2, 1, 0, 0 },
                                     { 0, 1, 1, 1, 0 },
                                     { 0, 0, 1, 1, 1 },
                                     { 0, 0, 0, 1, 1 },
                                     { 1, 0, 0, 0, 1 } };
    const double(*mats[2])[5] = { m1, m0 };
    for (unsigned rounds = 1; rounds <= 2; rounds++) {
        char json[1024];
        snprintf(json, sizeof(json),
                 "{\"seed\": 31, \"workers\": 5, \"compute\": {\"iteration_ms\": 1},"
                 " \"workload\": {\"model\": {\"name\": \"vector\", \"dim\": 2, \"init\": "
                 "\"normal\"}, \"lr\": 0},"
                 " \"protocol\": {\"name\": \"sgp\", \"peers\": 2, \"schedule\": "
                 "\"moshpit-averager\"},"
                 " \"stop\": {\"rounds\": %u}, \"eval\": {\"every_s\": 10}}",
                 rounds);
        sim_scenario *sc = harness_load(json, "sgp-mavg.json", NULL, 0);
        char *dir = harness_tmpdir("sgp-mavg");
        observer *o = calloc(1, sizeof(*o));
        harness_run(sc, dir, observe, o);
        ck_assert_double_eq(harness_summary_number(dir, "weight_sum"), 5.0);
        for (size_t i = 0; i < o->p; i++) {
            double x[5], y[5];
            for (int w = 0; w < 5; w++)
                x[w] = (double)o->first[w][i];
            for (unsigned r = 0; r < rounds; r++) {
                for (int a = 0; a < 5; a++) {
                    double num = 0.0, den = 0.0;
                    for (int b = 0; b < 5; b++) {
                        num += mats[r][a][b] * x[b];
                        den += mats[r][a][b];
                    }
                    y[a] = num / den;
                }
                memcpy(x, y, sizeof(x));
            }
            for (int w = 0; w < 5; w++) /* float arithmetic of two means: ~1e-7 */
                ck_assert_double_eq_tol((double)o->last[w][i], x[w], 1e-5);
        }
        free(o);
        harness_cleanup(dir);
        sim_scenario_destroy(sc);
    }
    harness_expect_rejected("{\"seed\": 1, \"workers\": 2, \"workload\": {\"model\": {\"name\": "
                            "\"vector\"}}, \"protocol\": {\"name\": \"sgp\", \"schedule\": "
                            "\"moshpit-averager\"}}",
                            "sgp-mavg2.json", NULL, 0, "$.protocol.schedule",
                            "\"moshpit-averager\" needs 3 or more workers (its cycle of "
                            "floor(log2(N - 1)) matrices is empty), got 2");
}
END_TEST

Suite *test_suite(void)
{
    Suite *s = suite_create("sgp");
    TCase *t = tcase_create("push_sum");
    tcase_set_timeout(t, 60);
    tcase_add_test(t, zero_gradients_converge_to_the_initial_mean);
    tcase_add_test(t, dropouts_keep_the_sums_and_the_limit);
    tcase_add_test(t, choosing_out_peers_reads_whether_they_sit_out_as_peer_reads);
    tcase_add_test(t, sgp_trains_a_softmax);
    tcase_add_test(t, survivors_whose_peers_failed_keep_mixing);
    tcase_add_test(t, moshpit_averager_applies_the_authors_rows);
    suite_add_tcase(s, t);
    return s;
}
