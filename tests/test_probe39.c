/* Issue 38, a leftover of class 10 (results that depend on eval.every_s): an evaluation due at
 * an instant ran before or after that instant's other events by the order they were
 * scheduled in, which every_s set. An evaluation now comes after every other event of its
 * instant (sim_engine_schedule_late_at), so a row at t shows the state after all of t's
 * events whatever every_s, and a run stopped by iterations at an evaluation's instant ends on
 * one row, its final state's. Each case failed before its fix.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "harness.h"

typedef harness_result result;

/* Four workers of 10 ms an iteration without jitter (and a server host, for easgd's centre),
 * stopped at 200 iterations: 50 per worker, at 0.5 s, an evaluation's instant for every_s
 * 0.05. */
static const char iters_json[] =
    "{\"seed\": 7, \"workers\": 4, \"servers\": 1,\n"
    " \"compute\": {\"iteration_ms\": 10, \"jitter_sigma\": 0},\n"
    " \"workload\": {\"dataset\": {\"name\": \"synthetic\", \"samples\": 400,\n"
    "   \"test_samples\": 50}, \"model\": {\"name\": \"softmax\"}, \"batch\": 8, \"lr\": 0.1},\n"
    " \"protocol\": {\"name\": \"adpsgd\"}, \"stop\": {\"iterations\": 200},\n"
    " \"eval\": {\"samples\": 50}}\n";

/* The same with iterations of 75 ms, stopped at 1 s: iterations end at 0.3, 0.6 and 0.9 s,
 * instants of an evaluation for every_s 0.05 and 0.1 both. */
static const char time_json[] =
    "{\"seed\": 7, \"workers\": 4, \"servers\": 1,\n"
    " \"compute\": {\"iteration_ms\": 75, \"jitter_sigma\": 0},\n"
    " \"workload\": {\"dataset\": {\"name\": \"synthetic\", \"samples\": 400,\n"
    "   \"test_samples\": 50}, \"model\": {\"name\": \"softmax\"}, \"batch\": 8, \"lr\": 0.1},\n"
    " \"protocol\": {\"name\": \"adpsgd\"}, \"stop\": {\"time_s\": 1},\n"
    " \"eval\": {\"samples\": 50}}\n";

/* A row's columns that every_s must not change: all but train_loss and throughput_sps, means
 * over the interval since the row before, which every_s sets. */
static const char *const state_cols[] = { "time_s",    "iterations",    "samples",  "epoch",
                                          "test_loss", "test_accuracy", "consensus" };
#define NSTATE (sizeof(state_cols) / sizeof(state_cols[0]))

/* Runs scenario `s` with protocol p and eval.every_s `every` into DIR/P-TAG; its metrics.csv. */
static harness_csv run_metrics(const char *dir, const char *s, const char *p, const char *every,
                               const char *tag, char *out, size_t size)
{
    char set_p[80], set_e[80];
    snprintf(out, size, "%s/%s-%s", dir, p, tag);
    snprintf(set_p, sizeof(set_p), "protocol.name=%s", p);
    snprintf(set_e, sizeof(set_e), "eval.every_s=%s", every);
    result res = harness_hetsim(
        (const char *[]){ "run", s, "-o", out, "--set", set_p, "--set", set_e, "--quiet", NULL });
    ck_assert_msg(res.status == 0, "%s, every_s %s: exit %d\n%s", p, every, res.status, res.err);
    return harness_csv_read(out, "metrics.csv");
}

/* AD-PSGD stopped at 200 iterations, at 0.5 s: with every_s 0.05 the evaluation due at 0.5 s
 * ran before the iterations ending then and wrote a row of 196 iterations and accuracy 0.60;
 * the stop came at the next iteration, at the evaluated instant, and was not evaluated again:
 * the last row said 196 iterations and final_accuracy 0.60, summary.json 200 iterations; with
 * every_s 1000, 200 and 0.62. For every protocol, the last row is now the same whatever
 * every_s, written once, and is summary.json's iterations, samples, time and accuracy. */
START_TEST(a_run_stopped_by_iterations_at_an_evaluation_ends_on_one_row_whatever_every_s)
{
    char *dir = harness_tmpdir("probe39");
    harness_write(dir, "s.json", iters_json);
    char s[600], r[2][700], name[64];
    snprintf(s, sizeof(s), "%s/s.json", dir);
    static const char *const everys[] = { "0.05", "1000" };
    for (size_t i = 0; i < harness_protocols(); i++) {
        const char *p = harness_protocol(i, name, sizeof(name));
        harness_csv m[2];
        for (size_t e = 0; e < 2; e++) {
            m[e] = run_metrics(dir, s, p, everys[e], everys[e], r[e], sizeof(r[e]));
            size_t last = m[e].nrows - 1;
            ck_assert_msg(harness_summary_number(r[e], "iterations") ==
                                  harness_csv_num(&m[e], last, "iterations") &&
                              harness_summary_number(r[e], "samples") ==
                                  harness_csv_num(&m[e], last, "samples") &&
                              harness_summary_number(r[e], "sim_time_s") ==
                                  harness_csv_num(&m[e], last, "time_s") &&
                              harness_summary_number(r[e], "final_accuracy") ==
                                  harness_csv_num(&m[e], last, "test_accuracy"),
                          "%s, every_s %s: the last row (%s iterations, accuracy %s) is not "
                          "summary.json's (%.17g, %.17g)",
                          p, everys[e], harness_csv_text(&m[e], last, "iterations"),
                          harness_csv_text(&m[e], last, "test_accuracy"),
                          harness_summary_number(r[e], "iterations"),
                          harness_summary_number(r[e], "final_accuracy"));
            ck_assert_msg(last == 0 || strcmp(harness_csv_text(&m[e], last - 1, "time_s"),
                                              harness_csv_text(&m[e], last, "time_s")) != 0,
                          "%s, every_s %s: two rows at %s s", p, everys[e],
                          harness_csv_text(&m[e], last, "time_s"));
        }
        for (size_t c = 0; c < NSTATE; c++) {
            const char *a = harness_csv_text(&m[0], m[0].nrows - 1, state_cols[c]);
            const char *b = harness_csv_text(&m[1], m[1].nrows - 1, state_cols[c]);
            ck_assert_msg(strcmp(a, b) == 0,
                          "%s: the last row's %s: %s with every_s 0.05, %s with 1000", p,
                          state_cols[c], a, b);
        }
        harness_csv_free(&m[0]);
        harness_csv_free(&m[1]);
    }
    harness_cleanup(dir);
}
END_TEST

/* AD-PSGD of 75 ms an iteration: the row at 0.3 s showed 16 iterations with every_s 0.05
 * (its evaluation scheduled at 0.25 s, after the iterations ending at 0.3 s, which started at
 * 0.225 s) and 12 with every_s 0.1 (scheduled at 0.2 s, before them); 0.6 and 0.9 s likewise.
 * For every protocol, a row at an instant both every_s evaluate is now the same. */
START_TEST(a_row_at_an_instant_two_every_s_share_is_the_same)
{
    char *dir = harness_tmpdir("probe39");
    harness_write(dir, "s.json", time_json);
    char s[600], r[2][700], name[64];
    snprintf(s, sizeof(s), "%s/s.json", dir);
    for (size_t i = 0; i < harness_protocols(); i++) {
        const char *p = harness_protocol(i, name, sizeof(name));
        harness_csv fine = run_metrics(dir, s, p, "0.05", "fine", r[0], sizeof(r[0]));
        harness_csv coarse = run_metrics(dir, s, p, "0.1", "coarse", r[1], sizeof(r[1]));
        ck_assert_msg(fine.nrows == 21 && coarse.nrows == 11, "%s: %zu and %zu rows", p, fine.nrows,
                      coarse.nrows);
        for (size_t row = 0; row < coarse.nrows; row++)
            for (size_t c = 0; c < NSTATE; c++) {
                const char *a = harness_csv_text(&fine, 2 * row, state_cols[c]);
                const char *b = harness_csv_text(&coarse, row, state_cols[c]);
                ck_assert_msg(strcmp(a, b) == 0,
                              "%s: the row at %s s: %s %s with every_s 0.05, %s with 0.1", p,
                              harness_csv_text(&coarse, row, "time_s"), state_cols[c], a, b);
            }
        harness_csv_free(&fine);
        harness_csv_free(&coarse);
    }
    harness_cleanup(dir);
}
END_TEST

/* The target accuracy is tested at evaluations, so a run stops at an evaluation's instant.
 * AD-PSGD of 75 ms an iteration, stop.target_accuracy 0.14: the row at 0.6 s reached it with
 * every_s 0.05 (32 iterations) but not with 0.1 (28: its evaluation came before the
 * iterations ending at 0.6 s), which stopped at 0.7 s. Both now stop at 0.6 s, on the same
 * row, time_to_target_s 0.6. */
START_TEST(a_target_reached_at_an_instant_two_every_s_share_stops_both_there)
{
    char *dir = harness_tmpdir("probe39");
    harness_write(dir, "s.json", time_json);
    char s[600], r[700], set_e[40];
    snprintf(s, sizeof(s), "%s/s.json", dir);
    static const char *const everys[] = { "0.05", "0.1" };
    for (size_t e = 0; e < 2; e++) {
        snprintf(r, sizeof(r), "%s/target-%s", dir, everys[e]);
        snprintf(set_e, sizeof(set_e), "eval.every_s=%s", everys[e]);
        result res =
            harness_hetsim((const char *[]){ "run", s, "-o", r, "--set", set_e, "--set",
                                             "stop.target_accuracy=0.14", "--quiet", NULL });
        ck_assert_msg(res.status == 0, "every_s %s: exit %d\n%s", everys[e], res.status, res.err);
        char *sum = harness_slurp(r, "summary.json");
        ck_assert_msg(strstr(sum, "\"stop_reason\": \"target_accuracy\"") != NULL, "%s", sum);
        free(sum);
        double t = harness_summary_number(r, "time_to_target_s");
        double end = harness_summary_number(r, "sim_time_s");
        ck_assert_msg(t == 0.6 && end == 0.6,
                      "every_s %s: time_to_target_s %.17g, sim_time_s %.17g, not 0.6", everys[e], t,
                      end);
        harness_csv m = harness_csv_read(r, "metrics.csv");
        ck_assert_msg(harness_csv_num(&m, m.nrows - 1, "iterations") == 32.0 &&
                          harness_csv_num(&m, m.nrows - 1, "time_s") == 0.6,
                      "every_s %s: the last row at %s s, %s iterations", everys[e],
                      harness_csv_text(&m, m.nrows - 1, "time_s"),
                      harness_csv_text(&m, m.nrows - 1, "iterations"));
        harness_csv_free(&m);
    }
    harness_cleanup(dir);
}
END_TEST

Suite *test_suite(void)
{
    Suite *s = suite_create("probe39");
    TCase *tc = tcase_create("every_s");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc,
                   a_run_stopped_by_iterations_at_an_evaluation_ends_on_one_row_whatever_every_s);
    tcase_add_test(tc, a_row_at_an_instant_two_every_s_share_is_the_same);
    tcase_add_test(tc, a_target_reached_at_an_instant_two_every_s_share_stops_both_there);
    suite_add_tcase(s, tc);
    return s;
}
