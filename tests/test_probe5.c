/* Issue 38's sixth probe: files hetsim reads that never end, the places a check writes, and
 * values written into CSV files and read back. Every case failed before its fix. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <check.h>

#include "harness.h"

typedef harness_result result;

/* A timing-only scenario of three workers for 0.2 simulated seconds: quick runs. */
static const char scenario_json[] =
    "{\"seed\": 3, \"workers\": 3, \"compute\": {\"iteration_ms\": 10},\n"
    " \"workload\": {\"model\": {\"name\": \"none\"}, \"message_bytes\": 4000},\n"
    " \"protocol\": {\"name\": \"allreduce\"}, \"stop\": {\"time_s\": 0.2},\n"
    " \"eval\": {\"every_s\": 0.05}}\n";

/* DIR with s.json and its run DIR/r. */
static char *with_a_run(void)
{
    char *dir = harness_tmpdir("probe5");
    char s[512], r[512];
    harness_run_in(dir, scenario_json, s, r, sizeof(s));
    return dir;
}

/* A --style script that never ends (a link to /dev/zero) was read until memory ran out (a
 * machine with a limit on memory looped for ever), and one with a NUL byte was cut there and
 * drawn, "gnuplot wrote nothing", exit 1. Both are refused as bad input naming the script, exit
 * 2, and no figure is made. */
START_TEST(a_style_script_that_never_ends_or_holds_a_nul_byte_is_refused)
{
    char *dir = with_a_run();
    char style[512], gp[600], r[512], out[512];
    snprintf(style, sizeof(style), "%s/style", dir);
    snprintf(gp, sizeof(gp), "%s/convergence.gp", style);
    snprintf(r, sizeof(r), "%s/r", dir);
    snprintf(out, sizeof(out), "%s/figs", dir);
    ck_assert_int_eq(mkdir(style, 0777), 0);
    for (int c = 0; c < 2; c++) {
        if (c == 0) {
            ck_assert_int_eq(symlink("/dev/zero", gp), 0);
        } else {
            ck_assert_int_eq(unlink(gp), 0);
            FILE *f = fopen(gp, "wb");
            ck_assert_ptr_nonnull(f);
            fwrite("print 1\n\0junk\n", 1, 14, f);
            ck_assert_int_eq(fclose(f), 0);
        }
        result res =
            harness_hetsim((const char *[]){ "plot", r, "-o", out, "--style", style, NULL });
        ck_assert_msg(res.status == 2, "case %d: exit %d\n%s", c, res.status, res.err);
        ck_assert_msg(strstr(res.err, "convergence.gp: a NUL byte") != NULL, "%s", res.err);
        ck_assert_int_ne(access(out, F_OK), 0);
    }
    harness_cleanup(dir);
}
END_TEST

/* --junit naming the check's own -o directory, or a place in one of its seed runs, passed the
 * checks made before the check ran (they knew only the files check.csv, check.png, seed-S): the
 * check ran its seeds and wrote its output, then refused the report, exit 2. Refused first now:
 * exit 2, the output directory never made. A report beside check.csv is the check's own. */
START_TEST(a_junit_report_in_the_checks_own_output_or_its_runs_is_refused_first)
{
    char *dir = with_a_run();
    char s[512], g[512], co[512], junit[600];
    harness_golden_in(dir, NULL, s, g, sizeof(s));
    snprintf(co, sizeof(co), "%s/co", dir);
    result res;
    static const char *const places[] = { "", "/.", "/seed-6/run.json", "/seed-7/report.xml",
                                          "/sub/report.xml" };
    for (size_t i = 0; i < sizeof(places) / sizeof(places[0]); i++) {
        snprintf(junit, sizeof(junit), "%s%s", co, places[i]);
        res = harness_hetsim((const char *[]){ "check", s, "--golden", g, "--seeds", "4", "-o", co,
                                               "--junit", junit, NULL });
        ck_assert_msg(res.status == 2, "%s: exit %d\n%s", junit, res.status, res.err);
        ck_assert_msg(access(co, F_OK) != 0, "%s: the check ran first", junit);
        ck_assert_msg(strstr(res.err, "is the check's own output") != NULL, "%s", res.err);
    }
    snprintf(junit, sizeof(junit), "%s/report.xml", co);
    res = harness_hetsim((const char *[]){ "check", s, "--golden", g, "--seeds", "4", "-o", co,
                                           "--junit", junit, NULL });
    ck_assert_msg(res.status == 0, "exit %d\n%s", res.status, res.err);
    ck_assert_int_eq(access(junit, F_OK), 0);
    harness_cleanup(dir);
}
END_TEST

/* A sweep's point directory replaced by a symbolic link to another run (a run of its own, or
 * another sweep's point): the sweep ran the point through it and replaced that run, exit 0 (its
 * owner token named the point's path, which the link led elsewhere). The point is refused (the
 * sweep fails it, exit 1) and the run the link names is unchanged. */
START_TEST(a_sweep_never_runs_a_point_through_a_link_to_another_run)
{
    char *dir = with_a_run();
    char sw[512], out[512], point[600], r[512], before[4096], after[4096];
    harness_sweep_in(dir, NULL,
                     "{\"base\": \"s.json\", \"grid\": {\"workers\": [2, 3]}, \"seeds\": 1}\n", sw,
                     out, sizeof(sw));
    snprintf(r, sizeof(r), "%s/r", dir);
    snprintf(point, sizeof(point), "%s/workers=2,seed=3", out);
    char cmd[1400];
    snprintf(cmd, sizeof(cmd), "rm -r '%s' && ln -s ../r '%s'", point, point);
    ck_assert_int_eq(system(cmd), 0);
    harness_tree_digest(r, before, sizeof(before));
    result res = harness_hetsim((const char *[]){ "sweep", sw, "-o", out, "--quiet", NULL });
    harness_tree_digest(r, after, sizeof(after));
    ck_assert_msg(strcmp(before, after) == 0, "the run behind the link changed (exit %d)",
                  res.status);
    ck_assert_msg(res.status == 1, "exit %d\n%s", res.status, res.err);
    ck_assert_msg(strstr(res.err, "is a symbolic link") != NULL, "%s", res.err);
    harness_cleanup(dir);
}
END_TEST

/* The same with a link to the point's own run moved out of the sweep: that run has the point's
 * scenario, so the sweep run again took it as the point's finished run and put it in its
 * index, exit 0, a run the sweep did not make and does not own. The point is not done. */
START_TEST(a_sweep_takes_no_run_behind_a_link_as_its_points)
{
    char *dir = with_a_run();
    char sw[512], point[600], moved[512], out[512], before[4096], after[4096], cmd[1800];
    harness_sweep_in(dir, NULL,
                     "{\"base\": \"s.json\", \"grid\": {\"workers\": [2, 3]}, \"seeds\": 1}\n", sw,
                     out, sizeof(sw));
    snprintf(point, sizeof(point), "%s/workers=2,seed=3", out);
    snprintf(moved, sizeof(moved), "%s/moved", dir);
    snprintf(cmd, sizeof(cmd), "mv '%s' '%s' && ln -s ../moved '%s'", point, moved, point);
    ck_assert_int_eq(system(cmd), 0);
    harness_tree_digest(moved, before, sizeof(before));
    result res = harness_hetsim((const char *[]){ "sweep", sw, "-o", out, "--quiet", NULL });
    harness_tree_digest(moved, after, sizeof(after));
    ck_assert_msg(strcmp(before, after) == 0, "the run behind the link changed (exit %d)",
                  res.status);
    ck_assert_msg(res.status == 1, "exit %d\n%s", res.status, res.err);
    ck_assert_msg(strstr(res.err, "is a symbolic link") != NULL, "%s", res.err);
    harness_cleanup(dir);
}
END_TEST

/* A check run again into its own output, whose seed run's directory was replaced by a symbolic
 * link to another run: the check ran that seed through the link and replaced the run, exit 0.
 * Refused before anything runs, exit 2, the run behind the link unchanged. */
START_TEST(a_check_never_runs_a_seed_through_a_link_to_another_run)
{
    char *dir = with_a_run();
    char s[512], g[512], co[512], r[512], before[4096], after[4096], cmd[1400];
    harness_golden_in(dir, NULL, s, g, sizeof(s));
    snprintf(co, sizeof(co), "%s/co", dir);
    snprintf(r, sizeof(r), "%s/r", dir);
    result res = harness_hetsim((const char *[]){ "check", s, "--golden", g, "-o", co, NULL });
    ck_assert_msg(res.status == 0, "check: exit %d\n%s", res.status, res.err);
    snprintf(cmd, sizeof(cmd), "rm -r '%s/seed-6' && ln -s ../r '%s/seed-6'", co, co);
    ck_assert_int_eq(system(cmd), 0);
    harness_tree_digest(r, before, sizeof(before));
    res = harness_hetsim((const char *[]){ "check", s, "--golden", g, "-o", co, NULL });
    harness_tree_digest(r, after, sizeof(after));
    ck_assert_msg(strcmp(before, after) == 0, "the run behind the link changed (exit %d)",
                  res.status);
    ck_assert_msg(res.status == 2, "exit %d\n%s", res.status, res.err);
    ck_assert_msg(strstr(res.err, "seed-6 is a symbolic link") != NULL, "%s", res.err);
    harness_cleanup(dir);
}
END_TEST

Suite *test_suite(void)
{
    Suite *s = suite_create("probe5");
    TCase *tc = tcase_create("reads");
    tcase_add_test(tc, a_style_script_that_never_ends_or_holds_a_nul_byte_is_refused);
    tcase_set_timeout(tc, 120);
    suite_add_tcase(s, tc);
    TCase *places = tcase_create("places");
    tcase_add_test(places, a_junit_report_in_the_checks_own_output_or_its_runs_is_refused_first);
    tcase_add_test(places, a_sweep_never_runs_a_point_through_a_link_to_another_run);
    tcase_add_test(places, a_sweep_takes_no_run_behind_a_link_as_its_points);
    tcase_add_test(places, a_check_never_runs_a_seed_through_a_link_to_another_run);
    tcase_set_timeout(places, 300);
    suite_add_tcase(s, places);
    return s;
}
