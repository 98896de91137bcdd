/* Issue 38's eleventh probe, class 10 (a stall is reported when it happens), the two cases it
 * left: a protocol timer due after the stop that kept a stalled run going to its stop, and
 * rounds of no simulated time that changed nothing, repeated at one instant without end.
 * Every case failed before its fix (the second timed out). The runs are in-process, so that a
 * run that never ends dies with its test.
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

/* ---- Rounds of no time ------------------------------------------------------------------- */

/* Moshpit averaging alone (local_steps 0): a round that forms no group takes no simulated
 * time and changes nothing. With dropout probability 1 every round is one, so 1e12 rounds
 * ran at t = 0, about 3 million a second, for days (grid, random groups, the key form with
 * and without global rounds); so did the one survivor of four after 0.3 s. No round can form
 * a group until a worker recovers: the run has stalled at that instant. With a recovery to
 * come the rounds wait for it and go on (5000 rounds end at 1.7 s). */
START_TEST(rounds_of_no_time_that_change_nothing_stall_the_run)
{
    static const struct {
        const char *protocol, *stragglers, *reason;
        double stop_rounds, t, rounds; /* rounds: the summary's */
    } cases[] = {
        { "{\"name\": \"moshpit\", \"local_steps\": 0}",
          "{\"kind\": \"dropout\", \"probability\": 1}", "stalled", 1e12, 0, 1 },
        { "{\"name\": \"moshpit\", \"local_steps\": 0, \"groups\": \"random\", "
          "\"group_size\": 4}",
          "{\"kind\": \"dropout\", \"probability\": 1}", "stalled", 1e12, 0, 1 },
        { "{\"name\": \"moshpit\", \"local_steps\": 0, \"form\": \"keys\"}",
          "{\"kind\": \"dropout\", \"probability\": 1}", "stalled", 1e12, 0, 1 },
        { "{\"name\": \"moshpit\", \"local_steps\": 0, \"form\": \"keys\", \"sync\": false}",
          "{\"kind\": \"dropout\", \"probability\": 1}", "stalled", 1e12, 0, 0 },
        { "{\"name\": \"moshpit\", \"local_steps\": 0}",
          "{\"kind\": \"failure\", \"at_s\": 0.3, \"workers\": [1, 2, 3]}", "stalled", 1e12, 0.3,
          1500 },
        { "{\"name\": \"moshpit\", \"local_steps\": 0}",
          "{\"kind\": \"failure\", \"at_s\": 0.3, \"workers\": [1, 2, 3], \"recover_s\": 1}",
          "rounds", 5000, 1.700069992, 5000 },
    };
    for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
        char json[900];
        snprintf(json, sizeof(json),
                 "{\"seed\": 5, \"workers\": %d, \"compute\": {\"iteration_ms\": 5},\n"
                 " \"stragglers\": [%s],\n"
                 " \"workload\": {\"model\": {\"name\": \"vector\", \"dim\": 4, \"init\": "
                 "\"normal\"}, \"lr\": 0},\n"
                 " \"protocol\": %s, \"stop\": {\"rounds\": %.17g}}\n",
                 c < 4 ? 16 : 4, cases[c].stragglers, cases[c].protocol, cases[c].stop_rounds);
        double r = expect_stop(c, json, cases[c].reason, cases[c].t, cases[c].t, true);
        ck_assert_msg(r == cases[c].rounds, "case %zu: rounds %.17g", c, r);
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
    TCase *rounds = tcase_create("rounds");
    tcase_add_test(rounds, rounds_of_no_time_that_change_nothing_stall_the_run);
    tcase_set_timeout(rounds, 30); /* the build before spun at t = 0 for days: a timeout */
    suite_add_tcase(s, rounds);
    return s;
}
