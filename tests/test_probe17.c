/* Issue 38's eleventh probe, classes 7-12 (numbers at their limits, foreign goldens, stalls,
 * damaged results, JSON strings): a recovery at the stop instant that kept a stalled run
 * going to its stop. Every case failed before its fix.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "harness.h"

typedef harness_result result;

/* ---- Stalls ------------------------------------------------------------------------------ */

/* A scenario of three workers for 20 simulated seconds, evaluated every 1000 s, with the
 * protocol `protocol` and the straggler rules `stragglers`. */
static void write_stalling(const char *dir, const char *protocol, const char *stragglers)
{
    char text[1200];
    snprintf(text, sizeof(text),
             "{\"seed\": 5, \"workers\": 3, \"compute\": {\"iteration_ms\": 10},\n"
             " \"workload\": {\"model\": {\"name\": \"none\"}, \"message_bytes\": 4000},\n"
             " \"protocol\": %s, \"stop\": {\"time_s\": 20},\n"
             " \"stragglers\": %s, \"eval\": {\"every_s\": 1000}}\n",
             protocol, stragglers);
    harness_write(dir, "s.json", text);
}

/* A run stalls when no worker is up and no recovery is to come before the stop time
 * (docs/scenario.md), but a recovery at the stop instant counted as one to come: every
 * worker down from 0.3 s for good but for a recovery at 20 s, the stop, ran on to 20 s
 * ("time", a throughput over 20 s), as did a parameter server whose colocated shard's host
 * (failover_s 0) recovers at the stop. Both stall when they stop making progress, at 0.3 s
 * and once the work in flight has drained; a recovery 10 ms before the stop still runs the
 * run on to its stop. */
START_TEST(a_recovery_at_the_stop_instant_does_not_keep_a_stalled_run_going)
{
    static const struct {
        const char *protocol, *stragglers, *reason;
        double lo, hi; /* sim_time_s */
    } cases[] = {
        { "{\"name\": \"allreduce\"}",
          "[{\"kind\": \"failure\", \"at_s\": 0.3, \"recover_s\": 20}]", "stalled", 0.3, 0.3 },
        { "{\"name\": \"ps\", \"placement\": \"colocated\", \"failover_s\": 0}",
          "[{\"kind\": \"failure\", \"at_s\": 0.3, \"workers\": [1], \"recover_s\": 20}]",
          "stalled", 0.3, 0.31 }, /* the pulls and pushes in flight drain first */
        { "{\"name\": \"allreduce\"}",
          "[{\"kind\": \"failure\", \"at_s\": 0.3, \"recover_s\": 19.99}]", "time", 20, 20 },
    };
    for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
        char *dir = harness_tmpdir("probe17");
        char s[600], r[600], summary[700], want[64];
        write_stalling(dir, cases[c].protocol, cases[c].stragglers);
        harness_run_in(dir, NULL, s, r, sizeof(s));
        snprintf(summary, sizeof(summary), "%s/summary.json", r);
        char *json = harness_read(summary, NULL);
        ck_assert_ptr_nonnull(json);
        snprintf(want, sizeof(want), "\"stop_reason\": \"%s\"", cases[c].reason);
        ck_assert_msg(strstr(json, want) != NULL, "case %zu: %s", c, json);
        const char *t = strstr(json, "\"sim_time_s\": ");
        ck_assert_ptr_nonnull(t);
        double time = strtod(t + strlen("\"sim_time_s\": "), NULL);
        ck_assert_msg(time >= cases[c].lo - 1e-12 && time <= cases[c].hi + 1e-12,
                      "case %zu: sim_time_s %.17g", c, time);
        free(json);
        harness_cleanup(dir);
    }
}
END_TEST

Suite *test_suite(void)
{
    Suite *s = suite_create("probe17");
    TCase *stalls = tcase_create("stalls");
    tcase_add_test(stalls, a_recovery_at_the_stop_instant_does_not_keep_a_stalled_run_going);
    tcase_set_timeout(stalls, 120);
    suite_add_tcase(s, stalls);
    return s;
}
