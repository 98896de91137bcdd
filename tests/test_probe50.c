/* Issue 38, the leftovers of probe45: protocols whose handling of many workers failing at one
 * instant still walked every worker, butterfly or group slot per failure. Each family's run of
 * 60,000 failures at one instant (tools/failures_scenario.py's scenario) now takes a small share
 * of the CPU time it took: moshpit walked every worker (its followers waiting for a BEGIN, its
 * floor) and every butterfly of its pool per failure, ripples every slot of its group table
 * (4N+16).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "harness.h"

typedef harness_result result;

enum {
    WORKERS = 60001
};

/* The CPU seconds a run of `protocol` (with the protocol keys `extra`, "" or starting with a
 * comma) took with workers 1..WORKERS-1 failing at 0.5 ms. */
static double failures_cpu_s(const char *protocol, const char *extra)
{
    char head[200], tail[500], *sum = NULL;
    snprintf(head, sizeof(head),
             "{\"seed\": 1, \"workers\": %d, \"compute\": {\"iteration_ms\": 1},\n"
             " \"stragglers\": [{\"kind\": \"failure\", \"at_s\": 0.0005, \"workers\": [",
             WORKERS);
    snprintf(tail, sizeof(tail),
             "]}],\n \"network\": {\"bandwidth_gbps\": 10, \"latency_us\": 5},\n"
             " \"workload\": {\"model\": {\"name\": \"none\"}, \"message_bytes\": 1000},\n"
             " \"protocol\": {\"name\": \"%s\"%s}, \"stop\": {\"time_s\": 0.0025},\n"
             " \"eval\": {\"every_s\": 0.0025}}\n",
             protocol, extra);
    double cpu = harness_run_listing(protocol, WORKERS, head, tail, &sum);
    ck_assert_msg(strstr(sum, "\"stop_reason\": \"time\"") != NULL, "%s: %.300s", protocol, sum);
    free(sum);
    return cpu;
}

/* The bound: 3 CPU seconds for 60,000 failures (debugoptimized build); the figures before and
 * after are at each test. */
static const double bound_s = 3.0;

static void check_linear(const char *protocol, const char *extra)
{
    double cpu = failures_cpu_s(protocol, extra);
    ck_assert_msg(cpu < bound_s,
                  "%s%s: 60,000 failures at one instant took %.2f CPU s (bound %.1f)", protocol,
                  extra, cpu, bound_s);
}

/* Moshpit's failure visited every butterfly of its pool (the hub's walk), every worker (for
 * followers waiting for the failed leader's BEGIN) and, without global rounds, every worker
 * again for the floor and every butterfly for those to give back. It now visits the
 * butterflies listing the failed worker, their members, and walks the workers for the floor
 * only when no live worker is left at it. A grid of side 4 keeps the butterflies small (the
 * default grid's side of 245 would take gigabytes). Before: more than 300 s (the test timed out);
 * after: 0.5 s. */
START_TEST(moshpit_visits_the_butterflies_of_the_failed_worker_alone)
{
    check_linear("moshpit", ", \"grid\": [4, 4, 4, 4, 4, 4, 4, 4]");
}
END_TEST

/* Ripples' failure walked the 4N+16 slots of its group table; it now walks the groups the
 * failed worker has not passed, a list kept per worker. Before: 15.2 CPU s; after:
 * 0.3 s. */
START_TEST(ripples_visits_the_groups_of_the_failed_worker_alone)
{
    check_linear("ripples", "");
}
END_TEST

Suite *test_suite(void)
{
    Suite *s = suite_create("probe50");
    TCase *moshpit = tcase_create("moshpit");
    tcase_add_test(moshpit, moshpit_visits_the_butterflies_of_the_failed_worker_alone);
    tcase_set_timeout(moshpit, 300);
    suite_add_tcase(s, moshpit);
    TCase *ripples = tcase_create("ripples");
    tcase_add_test(ripples, ripples_visits_the_groups_of_the_failed_worker_alone);
    tcase_set_timeout(ripples, 300);
    suite_add_tcase(s, ripples);
    return s;
}
