/* Issue 38, the leftovers of probe45 and probe50: failure handling still quadratic in the
 * workers failing at one instant. Each run here has workers 1..WORKERS-1 fail at one instant
 * (tools/failures_scenario.py's scenario, with the keys each test adds) and is bounded in CPU
 * time; the figures before and after are at each test.
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

/* The CPU seconds a run of `protocol` (with the protocol keys `extra` and the compute keys
 * `compute`, each "" or starting with a comma) took with workers 1..WORKERS-1 failing at
 * `at_s`; it stops 2 ms later. */
static double failures_cpu_s(const char *protocol, const char *extra, const char *compute,
                             double at_s)
{
    char head[300], tail[500], *sum = NULL;
    snprintf(head, sizeof(head),
             "{\"seed\": 1, \"workers\": %d, \"compute\": {\"iteration_ms\": 1%s},\n"
             " \"stragglers\": [{\"kind\": \"failure\", \"at_s\": %g, \"workers\": [",
             WORKERS, compute, at_s);
    snprintf(tail, sizeof(tail),
             "]}],\n \"network\": {\"bandwidth_gbps\": 10, \"latency_us\": 5},\n"
             " \"workload\": {\"model\": {\"name\": \"none\"}},\n"
             " \"protocol\": {\"name\": \"%s\"%s}, \"stop\": {\"time_s\": %g},\n"
             " \"eval\": {\"every_s\": %g}}\n",
             protocol, extra, at_s + 0.002, at_s + 0.002);
    double cpu = harness_run_listing(protocol, WORKERS, head, tail, &sum);
    ck_assert_msg(strstr(sum, "\"stop_reason\": \"time\"") != NULL, "%s: %.300s", protocol, sum);
    free(sum);
    return cpu;
}

/* The bound: 3 CPU seconds for 60,000 failures (debugoptimized build). */
static const double bound_s = 3.0;

/* Allreduce with buckets (resnet50's layers, 25 MiB buckets: 5 of them): every failure walked
 * every worker, and gave each one waiting for its first bucket (failures at 0.1 ms, during the
 * forward pass) one more timer, N² events in all (3,000 workers: 4.5 million events, 462 MB).
 * A failure now visits the workers the last one of its instant left doing something, and a
 * worker keeps one timer per time. Before: the run was killed by the kernel's OOM killer at
 * 10 GB (exit 137); after: 0.25 CPU s, 6,009 events at 3,000 workers. */
START_TEST(allreduce_with_buckets_visits_each_worker_once_an_instant)
{
    double cpu = failures_cpu_s("allreduce", "", ", \"profile\": \"resnet50\"", 0.0001);
    ck_assert_msg(cpu < bound_s, "60,000 failures at one instant took %.2f CPU s (bound %.1f)", cpu,
                  bound_s);
}
END_TEST

Suite *test_suite(void)
{
    Suite *s = suite_create("probe57");
    TCase *allreduce = tcase_create("allreduce");
    tcase_add_test(allreduce, allreduce_with_buckets_visits_each_worker_once_an_instant);
    tcase_set_timeout(allreduce, 300);
    suite_add_tcase(s, allreduce);
    return s;
}
