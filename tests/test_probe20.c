/* Issue 38's eleventh probe, class 10 (a stall is reported when it happens), a case it left:
 * a protocol timer due after the stop that kept a stalled run going to its stop. It failed
 * before its fix. The runs are in-process, so that a run that never ends dies with its test.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "harness.h"
#include "runtime/run.h"
#include "scenario/scenario.h"

/* Runs `json` (as s.json) and checks its stop reason and that its simulated time lies in
 * [lo, hi] seconds; returns the summary's `rounds` when `rounds` is set, else 0. */
static double expect_stop(size_t c, const char *json, const char *reason, double lo, double hi,
                          bool rounds)
{
    sim_scenario *sc = harness_load(json, "s.json", NULL, 0);
    char *dir = harness_tmpdir("probe20");
    sim_run_summary s = harness_run(sc, dir, NULL, NULL);
    double t = (double)s.sim_ns * 1e-9;
    ck_assert_msg(strcmp(s.stop_reason, reason) == 0, "case %zu: stop reason %s", c, s.stop_reason);
    /* 1e-12 s: the time is a count of nanoseconds, read as seconds */
    ck_assert_msg(t >= lo - 1e-12 && t <= hi + 1e-12, "case %zu: sim_time_s %.17g", c, t);
    double n = rounds ? harness_summary_number(dir, "rounds") : 0.0;
    harness_cleanup(dir);
    sim_scenario_destroy(sc);
    return n;
}

/* ---- A timer due after the stop ---------------------------------------------------------- */

/* A run stalls when no event left can let a worker compute or a message move, and ps and
 * syncswitch find theirs stuck when a colocated shard's host is down for good with failover_s
 * 0. With failover_s 1000 in a run of 100 s, worker 1 (its shard's host) lost for good at
 * 0.3 s, the failover timer, due at 1000.3 s, was taken as one that can revive the run: it
 * ran on to its stop ("time", a throughput over 100 s). A failover due after the stop is
 * none: both stall once their work in flight has drained, a Sync-Switch checkpoint pause
 * past the stop too. A failover due at the stop instant itself (99.7 s after 0.3 s) still
 * runs, one of 50 s revives the run, and a pause past the stop alone is a wait, not a stall
 * (as a matchmaking window past the stop, moshpit_overlap). */
START_TEST(a_protocol_timer_due_after_the_stop_does_not_keep_a_stalled_run_going)
{
    static const struct {
        const char *protocol, *reason;
        double lo, hi; /* sim_time_s */
    } cases[] = {
        { "{\"name\": \"syncswitch\", \"failover_s\": 1000}", "stalled", 0.3, 0.31 },
        { "{\"name\": \"ps\", \"placement\": \"colocated\", \"failover_s\": 1000}", "stalled", 0.3,
          0.31 },
        { "{\"name\": \"syncswitch\", \"failover_s\": 1000, \"switch_pause_s\": 200}", "stalled",
          0.3, 0.31 },
        { "{\"name\": \"syncswitch\", \"switch_pause_s\": 200}", "time", 100, 100 },
        { "{\"name\": \"syncswitch\", \"failover_s\": 99.7}", "time", 100, 100 },
        { "{\"name\": \"ps\", \"placement\": \"colocated\", \"failover_s\": 50}", "time", 100,
          100 },
    };
    for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
        char json[900];
        bool fails = c != 3; /* case 3: no failure, the pause alone */
        snprintf(json, sizeof(json),
                 "{\"seed\": 5, \"workers\": 3, \"compute\": {\"iteration_ms\": 10},\n"
                 " \"workload\": {\"model\": {\"name\": \"none\"}, \"message_bytes\": 4000},\n"
                 " \"protocol\": %s, \"stop\": {\"time_s\": 100},\n"
                 " \"stragglers\": [%s], \"eval\": {\"every_s\": 1000}}\n",
                 cases[c].protocol,
                 fails ? "{\"kind\": \"failure\", \"at_s\": 0.3, \"workers\": [1]}" : "");
        expect_stop(c, json, cases[c].reason, cases[c].lo, cases[c].hi, false);
    }
}
END_TEST

Suite *test_suite(void)
{
    Suite *s = suite_create("probe20");
    TCase *timers = tcase_create("timers");
    tcase_add_test(timers, a_protocol_timer_due_after_the_stop_does_not_keep_a_stalled_run_going);
    tcase_set_timeout(timers, 60);
    suite_add_tcase(s, timers);
    return s;
}
