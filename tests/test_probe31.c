/* Issue 38, leftovers of the thirteenth probe: a run whose workers are all down at its end
 * scores the model it ended with whatever eval.every_s; a worker down from 0 sends nothing; the
 * sweep's, plot's and select's messages escape the user's names; report says how many runs its
 * bytes sent/sample covers. Each case failed before its fix.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "harness.h"

typedef harness_result result;

/* Gossip whose five workers all fail for good at 0.064 s: the run stalls then. */
static const char stall_json[] =
    "{\"seed\": 7, \"workers\": 5, \"compute\": {\"iteration_ms\": 10, \"jitter_sigma\": 0.2},\n"
    " \"stragglers\": [{\"kind\": \"failure\", \"workers\": [0, 1, 2, 3, 4], \"at_s\": 0.064}],\n"
    " \"workload\": {\"dataset\": {\"name\": \"synthetic\", \"samples\": 400,\n"
    "   \"test_samples\": 50}, \"model\": {\"name\": \"softmax\"}, \"batch\": 8, \"lr\": 0.1},\n"
    " \"protocol\": {\"name\": \"gossip\"}, \"stop\": {\"time_s\": 1},\n"
    " \"eval\": {\"samples\": 50}}\n";

/* The stall's row of metrics.csv found no live worker to evaluate and left its accuracy
 * empty, so final_accuracy was the last evaluation's before the failure: 0.12 with every_s
 * 0.0137 (an evaluation at 0.0548 s), 0.06 with every_s 1000 (the untrained model at 0). The
 * stall's row now scores the model the workers left at their failure: the same test loss,
 * accuracy and consensus, and the same final_accuracy, whatever every_s (train_loss and
 * throughput_sps are means over the interval since the row before, which every_s sets). */
START_TEST(a_run_whose_workers_are_all_down_scores_its_last_model_whatever_every_s)
{
    char *dir = harness_tmpdir("probe31");
    harness_write(dir, "s.json", stall_json);
    static const char *const everys[] = { "eval.every_s=0.0137", "eval.every_s=1000" };
    static const char *const cols[] = { "time_s",    "iterations",    "samples",  "epoch",
                                        "test_loss", "test_accuracy", "consensus" };
    char s[600], r[2][700];
    snprintf(s, sizeof(s), "%s/s.json", dir);
    double final[2];
    harness_csv m[2];
    for (size_t e = 0; e < 2; e++) {
        snprintf(r[e], sizeof(r[e]), "%s/r%zu", dir, e);
        result res = harness_hetsim(
            (const char *[]){ "run", s, "-o", r[e], "--set", everys[e], "--quiet", NULL });
        ck_assert_msg(res.status == 0, "%s: exit %d\n%s", everys[e], res.status, res.err);
        char *sum = harness_slurp(r[e], "summary.json");
        ck_assert_msg(strstr(sum, "\"stop_reason\": \"stalled\"") != NULL, "%s", sum);
        free(sum);
        final[e] = harness_summary_number(r[e], "final_accuracy");
        m[e] = harness_csv_read(r[e], "metrics.csv");
    }
    ck_assert_msg(final[0] == final[1], "final_accuracy %.17g with every_s 0.0137, %.17g with 1000",
                  final[0], final[1]);
    for (size_t c = 0; c < sizeof(cols) / sizeof(cols[0]); c++) {
        const char *a = harness_csv_text(&m[0], m[0].nrows - 1, cols[c]);
        const char *b = harness_csv_text(&m[1], m[1].nrows - 1, cols[c]);
        ck_assert_msg(a[0] != '\0' && strcmp(a, b) == 0, "last row's %s: %s and %s", cols[c], a, b);
    }
    ck_assert_msg(harness_csv_num(&m[0], m[0].nrows - 1, "test_accuracy") == final[0],
                  "the last row's accuracy is final_accuracy");
    harness_csv_free(&m[0]);
    harness_csv_free(&m[1]);
    harness_cleanup(dir);
}
END_TEST

/* Four workers and a server host (easgd's centre), worker 1 failing for good at 0. */
static const char down0_json[] =
    "{\"seed\": 7, \"workers\": 4, \"servers\": 1,\n"
    " \"compute\": {\"iteration_ms\": 10, \"jitter_sigma\": 0.2},\n"
    " \"stragglers\": [{\"kind\": \"failure\", \"workers\": [1], \"at_s\": 0}],\n"
    " \"workload\": {\"dataset\": {\"name\": \"synthetic\", \"samples\": 400,\n"
    "   \"test_samples\": 50}, \"model\": {\"name\": \"softmax\"}, \"batch\": 8, \"lr\": 0.1},\n"
    " \"protocol\": {\"name\": \"adpsgd\"}, \"stop\": {\"time_s\": 0.2},\n"
    " \"eval\": {\"samples\": 50}}\n";

/* A failure at 0 came as an event after the protocol's start, which had sent from the worker
 * already: AD-PSGD's worker 1 showed 1,320 bytes_sent (a softmax model's) with 0 iterations,
 * D-PSGD's 2,640 (to its two neighbours), ps's 64 (its pull request) and syncswitch's 256. A
 * worker down from 0 is down when the protocol starts: it sends nothing, for every protocol. */
START_TEST(a_worker_down_from_the_start_sends_nothing)
{
    char *dir = harness_tmpdir("probe31");
    harness_write(dir, "s.json", down0_json);
    char s[600], r[700], set[80], name[64];
    snprintf(s, sizeof(s), "%s/s.json", dir);
    for (size_t i = 0; i < harness_protocols(); i++) {
        const char *p = harness_protocol(i, name, sizeof(name));
        snprintf(r, sizeof(r), "%s/%s", dir, p);
        snprintf(set, sizeof(set), "protocol.name=%s", p);
        result res =
            harness_hetsim((const char *[]){ "run", s, "-o", r, "--set", set, "--quiet", NULL });
        ck_assert_msg(res.status == 0, "%s: exit %d\n%s", p, res.status, res.err);
        harness_csv w = harness_csv_read(r, "workers.csv");
        ck_assert_msg(harness_csv_num(&w, 1, "iterations") == 0.0 &&
                          harness_csv_num(&w, 1, "bytes_sent") == 0.0 &&
                          harness_csv_num(&w, 1, "bytes_received") == 0.0,
                      "%s: worker 1 down from 0: %s iterations, %s bytes sent, %s received", p,
                      harness_csv_text(&w, 1, "iterations"), harness_csv_text(&w, 1, "bytes_sent"),
                      harness_csv_text(&w, 1, "bytes_received"));
        harness_csv_free(&w);
    }
    harness_cleanup(dir);
}
END_TEST

Suite *test_suite(void)
{
    Suite *s = suite_create("probe31");
    TCase *stall = tcase_create("stall");
    tcase_add_test(stall, a_run_whose_workers_are_all_down_scores_its_last_model_whatever_every_s);
    tcase_set_timeout(stall, 120);
    suite_add_tcase(s, stall);
    TCase *down = tcase_create("down_from_start");
    tcase_add_test(down, a_worker_down_from_the_start_sends_nothing);
    tcase_set_timeout(down, 120);
    suite_add_tcase(s, down);
    return s;
}
