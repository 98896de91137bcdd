/* Issue 38's sixth probe: numbers at the ends of the simulated clock. An iteration is its
 * base time over the worker's speed, and the clock counts whole nanoseconds up to about
 * 9.2e18: a speed that makes an iteration shorter than 1 ns is refused when the scenario is
 * loaded, as an iteration_ms below 1 ns is; a run with no time limit whose clock reaches its
 * end fails naming the clock and what to do, not only the event it could not schedule; an
 * AD-PSGD timeout shorter than any exchange is refused before its retries pile up. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "harness.h"

typedef harness_result result;

/* A timing-only scenario of four workers: the overrides below make it what each test needs. */
static const char scenario_json[] =
    "{\"seed\": 3, \"workers\": 4, \"compute\": {\"iteration_ms\": 10},\n"
    " \"workload\": {\"model\": {\"name\": \"none\"}, \"message_bytes\": 100000},\n"
    " \"protocol\": {\"name\": \"allreduce\"}, \"stop\": {\"time_s\": 2},\n"
    " \"eval\": {\"every_s\": 0.5}}\n";

/* Runs DIR/s.json into DIR/out with three --set overrides. */
static result run_with(const char *dir, const char *set1, const char *set2, const char *set3)
{
    char s[512], out[512];
    snprintf(s, sizeof(s), "%s/s.json", dir);
    snprintf(out, sizeof(out), "%s/out", dir);
    return harness_hetsim((const char *[]){ "run", s, "-o", out, "--quiet", "--set", set1, "--set",
                                            set2, "--set", set3, NULL });
}

/* Speeds of 1e7 and 1e12 made a 10 ms iteration 1e-6 and 1e-11 ms, both taken as 1 ns: the
 * two runs gave the same throughput, exit 0. Each is refused at the speed that makes it, and
 * the iteration's 1 ns itself (speed 1e7 of a 10 ms base) still runs. */
START_TEST(a_speed_that_makes_an_iteration_shorter_than_a_nanosecond_is_refused)
{
    static const char *const cases[][3] = {
        { "compute.speeds=[1e12]", "$.compute.speeds[0]",
          "makes worker 0's iteration take 1e-05 ns, less than the clock's resolution of 1 ns" },
        { "compute.speeds=[1, 2, 3.5e7, 1]", "$.compute.speeds[2]",
          "makes worker 2's iteration take 0.286 ns, less than the clock's resolution of 1 ns" },
    };
    char *dir = harness_tmpdir("probe6");
    char out[512];
    snprintf(out, sizeof(out), "%s/out", dir);
    harness_write(dir, "s.json", scenario_json);
    for (size_t i = 0; i < 2; i++) {
        result r = run_with(dir, cases[i][0], "stop.time_s=0.001", "eval.every_s=0.001");
        ck_assert_msg(r.status == 2, "%s: exit %d\n%s", cases[i][0], r.status, r.err);
        ck_assert_msg(strstr(r.err, cases[i][1]) != NULL && strstr(r.err, cases[i][2]) != NULL,
                      "%s", r.err);
        ck_assert(!harness_exists(out));
    }
    result r = run_with(dir, "compute.speeds=[1e7]", "stop.time_s=0.001", "eval.every_s=0.001");
    ck_assert_msg(r.status == 0, "1 ns: exit %d\n%s", r.status, r.err);
    harness_cleanup(dir);
}
END_TEST

/* Iterations of 1e9 s (iteration_ms at its limit, 1e12) stopped by 200 iterations: the
 * clock passed its end at the 36th round and the run failed with "cannot schedule worker
 * 2's iteration", naming neither the clock nor a way out. Nothing is written either way. */
START_TEST(a_run_whose_clock_reaches_its_end_says_so_and_what_to_do)
{
    char *dir = harness_tmpdir("probe6");
    char out[512];
    snprintf(out, sizeof(out), "%s/out", dir);
    harness_write(dir, "s.json", scenario_json);
    /* An evaluation every 1e9 s: every 0.5 s would make billions of metrics.csv rows. */
    result r = run_with(dir, "compute.iteration_ms=1e12", "stop={\"iterations\": 200}",
                        "eval.every_s=1e9");
    ck_assert_msg(r.status == 1, "exit %d\n%s", r.status, r.err);
    ck_assert_msg(strstr(r.err, "cannot schedule worker ") != NULL &&
                      strstr(r.err, "the simulated clock cannot go past 9.22e+09 s") != NULL &&
                      strstr(r.err, "stop the run earlier (stop.time_s") != NULL,
                  "%s", r.err);
    ck_assert(!harness_exists(out));
    harness_cleanup(dir);
}
END_TEST

/* A run stopped by iterations alone was held to no count of evaluations: iterations of 1e9 s
 * made 2,000,003 metrics.csv rows at every_s 0.5 (and 1e12 s about 4e9, never finishing),
 * where a run stopped by time is held to 1,000,000 when loaded. The run now stops at that
 * count, naming the file, $.eval.every_s and what to do, exit 2, nothing written. */
START_TEST(a_run_without_a_time_limit_makes_at_most_a_million_evaluations)
{
    char *dir = harness_tmpdir("probe6");
    char out[512];
    snprintf(out, sizeof(out), "%s/out", dir);
    harness_write(dir, "s.json", scenario_json);
    result r =
        run_with(dir, "compute.iteration_ms=1e9", "stop={\"iterations\": 1}", "eval.every_s=0.5");
    ck_assert_msg(r.status == 2, "exit %d\n%s", r.status, r.err);
    ck_assert_msg(strstr(r.err, "s.json: $.eval.every_s: 1000000 evaluations (metrics.csv rows) "
                                "by 499999.5 simulated s and the run goes on") != NULL,
                  "%s", r.err);
    ck_assert(!harness_exists(out));
    harness_cleanup(dir);
}
END_TEST

/* AD-PSGD with exchange_timeout_ms 1 us, shorter than one 100 kB transfer (80 us at 10 Gbit/s
 * plus 100 us of latency): every attempt was abandoned and retried while its request still
 * flowed, so flows piled up (3,802 at 2 ms of simulated time, 15,802 at 8 ms), the wall time
 * grew with their square (12.8 s for 8 ms) and no exchange ever committed, exit 0. A timeout
 * shorter than a request and its reply over the slowest edge alone is refused, naming the file,
 * the path and that bound; one just long enough runs. */
START_TEST(an_adpsgd_timeout_no_exchange_could_meet_is_refused)
{
    char *dir = harness_tmpdir("probe6");
    char out[512];
    snprintf(out, sizeof(out), "%s/out", dir);
    harness_write(dir, "s.json", scenario_json);
    const char *net = "network={\"bandwidth_gbps\": 10, \"latency_us\": 50}";
    result r = run_with(dir, "protocol={\"name\": \"adpsgd\", \"exchange_timeout_ms\": 1e-3}", net,
                        "stop.time_s=0.008");
    ck_assert_msg(r.status == 2, "exit %d\n%s", r.status, r.err);
    ck_assert_msg(strstr(r.err, "s.json: $.protocol.exchange_timeout_ms: 0.001 ms is shorter "
                                "than a request and its reply over the slowest edge alone "
                                "(0.36 ms)") != NULL,
                  "%s", r.err);
    ck_assert(!harness_exists(out));
    r = run_with(dir, "protocol={\"name\": \"adpsgd\", \"exchange_timeout_ms\": 0.5}", net,
                 "stop.time_s=0.008");
    ck_assert_msg(r.status == 0, "0.5 ms: exit %d\n%s", r.status, r.err);
    harness_cleanup(dir);
}
END_TEST

/* A sweep file given to run or validate was refused as "$.seed: missing required key", which
 * sends the user to add a seed to a sweep (probe38h). It is named as a sweep file, with the
 * command that runs it. */
START_TEST(a_sweep_file_given_as_a_scenario_is_named_so)
{
    char *dir = harness_tmpdir("probe6");
    char sw[512];
    harness_sweep_file(dir, scenario_json,
                       "{\"base\": \"s.json\", \"grid\": {\"workers\": [2, 3]}, \"seeds\": 1}\n",
                       sw, sizeof(sw));
    static const char *const cmds[] = { "run", "validate" };
    for (size_t i = 0; i < 2; i++) {
        result r = harness_hetsim((const char *[]){ cmds[i], sw, NULL });
        ck_assert_msg(r.status == 2, "%s: exit %d\n%s", cmds[i], r.status, r.err);
        ck_assert_msg(strstr(r.err, "sw.json: $: a sweep file (it has base and grid), not a "
                                    "scenario: run it with `hetsim sweep FILE`") != NULL,
                      "%s: %s", cmds[i], r.err);
    }
    harness_cleanup(dir);
}
END_TEST

/* Replaces the first `from` of DIR/NAME by `to`. */
static void edit(const char *dir, const char *name, const char *from, const char *to)
{
    char path[600];
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    size_t n = 0;
    char *text = harness_read(path, &n);
    char *at = strstr(text, from);
    ck_assert_msg(at != NULL, "%s holds no %s", path, from);
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fprintf(f, "%.*s%s%s", (int)(at - text), text, to, at + strlen(from));
    ck_assert_int_eq(fclose(f), 0);
    free(text);
}

/* index.csv's results are its runs' summary.json's: a mean_throughput_sps edited by hand
 * (5120 to 9999) made report's throughput 7559.5 +- 31000 for two runs that measured 5120,
 * a time_to_target_s written into a timing-only run's row or a stop_reason changed were read
 * as they were, exit 0. report and plot --by refuse each naming the line, the value the run
 * wrote and the fix; the sweep run again writes the index whole. */
START_TEST(index_results_that_are_not_the_runs_are_refused)
{
    static const char *const cases[][3] = {
        { "5120,", "9999,", "mean_throughput_sps is 5120 in its summary.json" },
        { "time,0.050000000000000003,,,,", "time,0.050000000000000003,,,5,",
          "time_to_target_s is empty in its summary.json" },
        { ",time,", ",stalled,", "stop_reason is time in its summary.json" },
    };
    char *dir = harness_tmpdir("probe6");
    char sweep[512], sw[512];
    harness_write(dir, "s.json",
                  "{\"seed\": 3, \"workers\": 4, \"compute\": {\"iteration_ms\": 10},\n"
                  " \"workload\": {\"model\": {\"name\": \"none\"}, \"message_bytes\": 100000},\n"
                  " \"protocol\": {\"name\": \"allreduce\"}, \"stop\": {\"time_s\": 0.05},\n"
                  " \"eval\": {\"every_s\": 0.05}}\n");
    harness_sweep_file(dir, NULL,
                       "{\"base\": \"s.json\", \"grid\": {\"workers\": [2, 4]}, \"seeds\": 2,\n"
                       " \"output\": {\"dir\": \"unused\"}}\n",
                       sweep, sizeof(sweep));
    snprintf(sw, sizeof(sw), "%s/sw", dir);
    for (size_t i = 0; i < 3; i++) {
        result r = harness_hetsim(
            (const char *[]){ "sweep", sweep, "-o", sw, "-j", "1", "--quiet", NULL });
        ck_assert_msg(r.status == 0, "sweep: exit %d\n%s", r.status, r.err);
        result ok = harness_hetsim((const char *[]){ "report", sw, "--by", "workers", NULL });
        ck_assert_msg(ok.status == 0, "report: exit %d\n%s", ok.status, ok.err);
        edit(sw, "index.csv", cases[i][0], cases[i][1]);
        result a = harness_hetsim((const char *[]){ "report", sw, "--by", "workers", NULL });
        result b = harness_hetsim((const char *[]){ "plot", sw, "--by", "workers", NULL });
        for (int k = 0; k < 2; k++) {
            result *x = k == 0 ? &a : &b;
            ck_assert_msg(x->status == 2, "%s, %d: exit %d\n%s", cases[i][1], k, x->status, x->err);
            ck_assert_msg(strstr(x->err, "index.csv: line 2: not its run's results: ") != NULL &&
                              strstr(x->err, cases[i][2]) != NULL &&
                              strstr(x->err, "run the sweep again") != NULL,
                          "%s", x->err);
        }
    }
    harness_cleanup(dir);
}
END_TEST

/* A golden.json that is there but no JSON (cut, or nested past the parser's limit) was
 * "golden.json: golden.json: missing or unreadable (a golden of an older hetsim? ...)": the
 * parser's line and column were replaced by a cause that is not the file's. */
START_TEST(a_golden_json_that_does_not_parse_is_named_at_its_line_and_column)
{
    static const char *const cases[][2] = {
        { "{\"format\": 2, ", "golden.json: line 1, column 15: unexpected end of file" },
        { "{\"format\": 2e999}",
          "golden.json: line 1, column 12: 2e999 is too large for a double" },
    };
    char *dir = harness_tmpdir("probe6");
    char s[512], g[512];
    harness_write(dir, "s.json", scenario_json);
    snprintf(s, sizeof(s), "%s/s.json", dir);
    snprintf(g, sizeof(g), "%s/golden", dir);
    result r = harness_hetsim((const char *[]){ "check", s, "--golden", g, "--update", "--seeds",
                                                "3", "--set", "stop.time_s=0.05", NULL });
    ck_assert_msg(r.status == 0, "update: exit %d\n%s", r.status, r.err);
    for (size_t i = 0; i < 2; i++) {
        harness_write(g, "golden.json", cases[i][0]);
        r = harness_hetsim((const char *[]){ "check", s, "--golden", g, "--seeds", "3", "--set",
                                             "stop.time_s=0.05", NULL });
        ck_assert_msg(r.status == 2, "%s: exit %d\n%s", cases[i][0], r.status, r.err);
        ck_assert_msg(strstr(r.err, cases[i][1]) != NULL &&
                          strstr(r.err, "write the golden again with --update") != NULL &&
                          strstr(r.err, "missing") == NULL,
                      "%s", r.err);
    }
    harness_cleanup(dir);
}
END_TEST

Suite *test_suite(void)
{
    Suite *s = suite_create("probe6");
    TCase *clock = tcase_create("clock");
    tcase_set_timeout(clock, 120);
    tcase_add_test(clock, a_speed_that_makes_an_iteration_shorter_than_a_nanosecond_is_refused);
    tcase_add_test(clock, a_run_whose_clock_reaches_its_end_says_so_and_what_to_do);
    tcase_add_test(clock, an_adpsgd_timeout_no_exchange_could_meet_is_refused);
    tcase_add_test(clock, a_run_without_a_time_limit_makes_at_most_a_million_evaluations);
    tcase_add_test(clock, a_sweep_file_given_as_a_scenario_is_named_so);
    suite_add_tcase(s, clock);
    TCase *results = tcase_create("results");
    tcase_set_timeout(results, 240);
    tcase_add_test(results, index_results_that_are_not_the_runs_are_refused);
    tcase_add_test(results, a_golden_json_that_does_not_parse_is_named_at_its_line_and_column);
    suite_add_tcase(s, results);
    return s;
}
