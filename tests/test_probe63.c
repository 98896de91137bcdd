/* Issue 38, a leftover of probe45 and probe50: Moshpit's matchmaking (the key form) was
 * quadratic. Each attempt of a follower to find a leader (mp_try_next) walked every worker,
 * and a failure walked every worker for those who asked the failed one; with many workers
 * failing at one instant every follower of each looks further, and again. The walk's reads
 * are counted in summary.json (peer_reads) and still are, as the walk counted them: the test
 * pins those figures as well as the CPU time.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "harness.h"

typedef harness_result result;

enum {
    WORKERS = 10000
};

/* Runs Moshpit with workers 1..WORKERS-1 failing at 1.05 ms (during the first round's
 * matchmaking); stops 2 ms later. Returns the child's CPU seconds, and its summary.json in
 * *sum (to free). */
static double failures_cpu_s(char **sum)
{
    char head[200];
    snprintf(head, sizeof(head),
             "{\"seed\": 1, \"workers\": %d, \"compute\": {\"iteration_ms\": 1},\n"
             " \"stragglers\": [{\"kind\": \"failure\", \"at_s\": 0.00105, \"workers\": [",
             WORKERS);
    static const char tail[] =
        "]}],\n \"network\": {\"bandwidth_gbps\": 10, \"latency_us\": 5},\n"
        " \"workload\": {\"model\": {\"name\": \"none\"}, \"message_bytes\": 1000},\n"
        " \"protocol\": {\"name\": \"moshpit\"}, \"stop\": {\"time_s\": 0.00305},\n"
        " \"eval\": {\"every_s\": 0.00305}}\n";
    return harness_run_listing("moshpit", WORKERS, head, tail, sum);
}

/* The bound: 4 CPU seconds for 10,000 workers, 9,999 failing (debugoptimized build). Before:
 * 13.5 CPU s (release), 5,000,510,196 peer reads; after: 1.4 CPU s, the same reads counted,
 * the same requests, events and everything else. */
static const double bound_s = 4.0;

START_TEST(moshpit_matchmaking_under_mass_failures_is_linear)
{
    char *sum = NULL;
    double cpu = failures_cpu_s(&sum);
    ck_assert_msg(strstr(sum, "\"stop_reason\": \"time\"") != NULL, "%.300s", sum);
    ck_assert_msg(strstr(sum, "\"peer_reads\": 5000510196,") != NULL, "%.2000s", sum);
    ck_assert_msg(strstr(sum, "\"events\": 559453,") != NULL, "%.2000s", sum);
    ck_assert_msg(strstr(sum, "\"requests\": 490149,") != NULL, "%.2000s", sum);
    free(sum);
    ck_assert_msg(cpu < harness_cpu_bound(bound_s),
                  "10,000 workers, 9,999 failing: %.2f CPU s (bound %.1f)", cpu,
                  harness_cpu_bound(bound_s));
}
END_TEST

Suite *test_suite(void)
{
    Suite *s = suite_create("probe63");
    TCase *match = tcase_create("matchmaking");
    tcase_add_test(match, moshpit_matchmaking_under_mass_failures_is_linear);
    tcase_set_timeout(match, 300);
    suite_add_tcase(s, match);
    return s;
}
