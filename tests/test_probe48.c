/* Issue 38, the seventeenth probe's admission class: two workers failing at one instant stalled
 * hpsgd, depending on the order of their rules. The barrier's handling of the first failure
 * completed its round and released the coordinator at once; the coordinator launched into the
 * ring that still listed the second, whose failure then ended that round for the coordinator
 * alone, while the others, released by message later, launched into the restarted ring: one
 * ring round apart, they waited for each other at the epoch's flush ("stalled" at 0.669 s with
 * four workers up). A barrier completed by a failure now releases its coordinator by a message
 * to itself, after the instant's other failures.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "harness.h"

typedef harness_result result;

/* Workers 5 and 1 (in that order of rules) fail for good at 0.534 s, worker 5 slowed; the run
 * reaches its stop time, 6 s, whichever rule comes first. */
START_TEST(two_failures_at_one_instant_stall_no_hpsgd_run)
{
    static const char *const orders[] = { "[5]", "[1]" };
    for (int k = 0; k < 2; k++) {
        char json[2048], s[700], r[700];
        snprintf(json, sizeof(json),
                 "{\"seed\": 1, \"workers\": 6,\n"
                 " \"compute\": {\"iteration_ms\": 40, \"jitter_sigma\": 0.1},\n"
                 " \"network\": {\"bandwidth_gbps\": 10, \"latency_us\": 20},\n"
                 " \"workload\": {\"dataset\": {\"name\": \"synthetic\", \"samples\": 240, "
                 "\"dim\": 4, \"classes\": 2}, \"model\": {\"name\": \"softmax\"}, \"batch\": 4, "
                 "\"message_bytes\": 1000000},\n"
                 " \"protocol\": {\"name\": \"hpsgd\", \"flush\": \"newest\"},\n"
                 " \"stragglers\": [{\"kind\": \"failure\", \"workers\": %s, \"at_s\": 0.534},\n"
                 "  {\"kind\": \"failure\", \"workers\": %s, \"at_s\": 0.534},\n"
                 "  {\"kind\": \"fixed\", \"workers\": [5], \"slowdown\": 1.5}],\n"
                 " \"stop\": {\"time_s\": 6}, \"eval\": {\"every_s\": 0.25, \"samples\": 40}}\n",
                 orders[k], orders[1 - k]);
        char *dir = harness_tmpdir("probe48");
        harness_run_in(dir, json, s, r, sizeof(s));
        char *summary = harness_slurp(r, "summary.json");
        ck_assert_msg(strstr(summary, "\"stop_reason\": \"time\"") != NULL,
                      "rules %s then %s:\n%.600s", orders[k], orders[1 - k], summary);
        free(summary);
        harness_cleanup(dir);
    }
}
END_TEST

Suite *test_suite(void)
{
    Suite *s = suite_create("probe48");
    TCase *t = tcase_create("admission");
    tcase_add_test(t, two_failures_at_one_instant_stall_no_hpsgd_run);
    tcase_set_timeout(t, 120);
    suite_add_tcase(s, t);
    return s;
}
