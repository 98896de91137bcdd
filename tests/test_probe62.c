/* Issue 38, the leftover of probe57: a failure of the members of a joined kit ring was
 * quadratic in the messages in flight. Each run here has workers 1..WORKERS-1 fail at one
 * instant after the ring's members joined (tools/failures_scenario.py's scenario at 1.01 ms)
 * and is bounded in CPU time; the figures before and after are at each test.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "harness.h"

typedef harness_result result;

enum {
    WORKERS = 2000
};

/* The CPU seconds a run of `protocol` took with workers 1..WORKERS-1 failing at 1.01 ms, in
 * the first iteration's exchange; it stops 2 ms later. */
static double failures_cpu_s(const char *protocol)
{
    char head[200], tail[400], *sum = NULL;
    snprintf(head, sizeof(head),
             "{\"seed\": 1, \"workers\": %d, \"compute\": {\"iteration_ms\": 1},\n"
             " \"stragglers\": [{\"kind\": \"failure\", \"at_s\": 0.00101, \"workers\": [",
             WORKERS);
    snprintf(tail, sizeof(tail),
             "]}],\n \"network\": {\"bandwidth_gbps\": 10, \"latency_us\": 5},\n"
             " \"workload\": {\"model\": {\"name\": \"none\"}, \"message_bytes\": 1000},\n"
             " \"protocol\": {\"name\": \"%s\"}, \"stop\": {\"time_s\": 0.00301},\n"
             " \"eval\": {\"every_s\": 0.00301}}\n",
             protocol);
    double cpu = harness_run_listing(protocol, WORKERS, head, tail, &sum);
    ck_assert_msg(strstr(sum, "\"stop_reason\": \"time\"") != NULL, "%s: %.300s", protocol, sum);
    free(sum);
    return cpu;
}

/* The bound: 5 CPU seconds for 1,999 failures (debugoptimized build). */
static const double bound_s = 5.0;

/* Allreduce (one bucket): each failure restarts the joined ring, whose messages (N per restart)
 * are in flight when the next member fails, and the network scanned its whole message pool for
 * every host going down. It now takes the host's messages from a list of its own, in slot
 * order. Before: 16.4 CPU s (release build of the commit before the fix); after: 1.4 CPU s
 * (debugoptimized), 2,000 restarts and their 2 million messages, all dropped. */
START_TEST(allreduce_joined_ring_failures_drop_each_hosts_messages_only)
{
    double cpu = failures_cpu_s("allreduce");
    ck_assert_msg(cpu < bound_s, "%d failures at one instant took %.2f CPU s (bound %.1f)",
                  WORKERS - 1, cpu, bound_s);
}
END_TEST

Suite *test_suite(void)
{
    Suite *s = suite_create("probe62");
    TCase *allreduce = tcase_create("allreduce");
    tcase_add_test(allreduce, allreduce_joined_ring_failures_drop_each_hosts_messages_only);
    tcase_set_timeout(allreduce, 600);
    suite_add_tcase(s, allreduce);
    return s;
}
