/* Issue 38's fourth probe: the places the commands write, as the users name them, and the
 * files they read back. A check's output directory (its check.csv, check.png and seed runs) is
 * that check's alone: neither another check's JUnit report nor a golden may go into it. A
 * golden's files are the regular files hetsim wrote. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "harness.h"

typedef harness_result result;

/* A timing-only scenario of four workers for 0.5 simulated seconds: quick checks. */
static const char scenario_json[] =
    "{\"seed\": 3, \"workers\": 4, \"compute\": {\"iteration_ms\": 10},\n"
    " \"network\": {\"bandwidth_gbps\": 10, \"latency_us\": 5},\n"
    " \"workload\": {\"model\": {\"name\": \"none\"}, \"message_bytes\": 4000},\n"
    " \"protocol\": {\"name\": \"allreduce\"}, \"stop\": {\"time_s\": 0.5},\n"
    " \"eval\": {\"every_s\": 0.1}}\n";

static void path_of(char *buf, size_t size, const char *dir, const char *name)
{
    snprintf(buf, size, "%s/%s", dir, name);
}

/* Runs `hetsim check DIR/s.json` with `args` (at most 8). */
static result check_in(const char *dir, const char *const *args)
{
    char s[512];
    path_of(s, sizeof(s), dir, "s.json");
    const char *argv[12] = { "check", s };
    size_t n = 2;
    for (size_t i = 0; args[i] != NULL && n < 11; i++)
        argv[n++] = args[i];
    return harness_hetsim(argv);
}

/* DIR with s.json, a golden DIR/g of 3 seeds and a check's output DIR/co. */
static char *golden_and_check(void)
{
    char *dir = harness_tmpdir("probe4");
    char s[512], g[512], co[512];
    harness_golden_in(dir, scenario_json, s, g, sizeof(s));
    path_of(co, sizeof(co), dir, "co");
    result r = check_in(dir, (const char *[]){ "--golden", g, "--seeds", "3", "-o", co, NULL });
    ck_assert_msg(r.status == 0, "check: exit %d\n%s%s", r.status, r.out, r.err);
    return dir;
}

/* A check's report into another check's output replaced that check's figure or its
 * check.csv (the directory was then no check's, open to any run), exit 0; an update made a
 * golden inside it. Both are refused with exit 2, nothing changed; so is a report over the
 * check's own check.csv, whose refusal wrote the error's report there all the same. The
 * check's own output may still hold its report, checked again and again. */
START_TEST(no_report_nor_golden_goes_into_another_checks_output)
{
    char *dir = golden_and_check();
    char g[512], co[512], out[512], link[512], before[16384], after[16384];
    path_of(g, sizeof(g), dir, "g");
    path_of(co, sizeof(co), dir, "co");
    path_of(out, sizeof(out), dir, "out");
    path_of(link, sizeof(link), dir, "link.xml");
    char cmd[1200];
    snprintf(cmd, sizeof(cmd), "ln -s co/check.csv %s", link);
    ck_assert_int_eq(system(cmd), 0);
    harness_tree_digest(dir, before, sizeof(before));
    static const char *const reports[] = { "co/check.png", "co/check.csv", "co/report.xml",
                                           "link.xml" };
    for (size_t i = 0; i < sizeof(reports) / sizeof(reports[0]); i++) {
        char x[600];
        path_of(x, sizeof(x), dir, reports[i]);
        result r = check_in(
            dir, (const char *[]){ "--golden", g, "--seeds", "3", "-o", out, "--junit", x, NULL });
        ck_assert_msg(r.status == 2, "%s: exit %d\n%s%s", reports[i], r.status, r.out, r.err);
        ck_assert_msg(strstr(r.err, "inside another check's output directory") != NULL, "%s: %s",
                      reports[i], r.err);
        harness_tree_digest(dir, after, sizeof(after));
        ck_assert_msg(strcmp(before, after) == 0, "%s changed something", reports[i]);
    }
    char inner[600];
    path_of(inner, sizeof(inner), dir, "co/golden");
    result r =
        check_in(dir, (const char *[]){ "--golden", inner, "--update", "--seeds", "3", NULL });
    ck_assert_msg(r.status == 2, "update: exit %d\n%s%s", r.status, r.out, r.err);
    ck_assert_msg(strstr(r.err, "a hetsim check directory") != NULL, "%s", r.err);
    harness_tree_digest(dir, after, sizeof(after));
    ck_assert_msg(strcmp(before, after) == 0, "the update changed something");
    /* co's own check with its report over its own check.csv: refused, and no report of that
     * error either (it replaced check.csv, exit 2). */
    char own_csv[600];
    path_of(own_csv, sizeof(own_csv), dir, "co/check.csv");
    r = check_in(
        dir, (const char *[]){ "--golden", g, "--seeds", "3", "-o", co, "--junit", own_csv, NULL });
    ck_assert_msg(r.status == 2, "own check.csv: exit %d\n%s%s", r.status, r.out, r.err);
    harness_tree_digest(dir, after, sizeof(after));
    ck_assert_msg(strcmp(before, after) == 0, "a report over its own check.csv changed something");
    /* co's own check, twice: its report in its own output. */
    char own[600];
    path_of(own, sizeof(own), dir, "co/report.xml");
    for (int i = 0; i < 2; i++) {
        r = check_in(
            dir, (const char *[]){ "--golden", g, "--seeds", "3", "-o", co, "--junit", own, NULL });
        ck_assert_msg(r.status == 0, "own, %d: exit %d\n%s%s", i, r.status, r.out, r.err);
        ck_assert(harness_exists(own));
    }
    harness_cleanup(dir);
}
END_TEST

/* A plot's figures inside a check's output (a folder of its own there: -o CO/figs) were
 * written, exit 0, where a run, a sweep or another check's -o are refused: a check's output
 * is the check's alone. Refused with exit 2, nothing changed. */
START_TEST(no_plot_goes_into_a_checks_output)
{
    char *dir = golden_and_check();
    char run[512], figs[512], before[16384], after[16384];
    path_of(run, sizeof(run), dir, "co/seed-6"); /* the check's seeds follow the golden's */
    path_of(figs, sizeof(figs), dir, "co/figs");
    harness_tree_digest(dir, before, sizeof(before));
    result r = harness_hetsim((const char *[]){ "plot", run, "-o", figs, NULL });
    ck_assert_msg(r.status == 2, "exit %d\n%s%s", r.status, r.out, r.err);
    ck_assert_msg(strstr(r.err, "check") != NULL, "%s", r.err);
    harness_tree_digest(dir, after, sizeof(after));
    ck_assert_msg(strcmp(before, after) == 0, "the plot changed something");
    harness_cleanup(dir);
}
END_TEST

/* A golden's file that is a FIFO (or a directory) is refused naming it, without waiting: the
 * fingerprint's reader opened a seed's metrics.csv FIFO and waited for a writer forever
 * (check hung until killed); a seed of golden.json written 5.5 was read as 5 (exit 0). */
START_TEST(a_golden_file_that_is_no_regular_file_or_a_seed_not_whole_is_refused)
{
    char *dir = golden_and_check();
    char g[512], out[512], cmd[1200];
    path_of(g, sizeof(g), dir, "g");
    path_of(out, sizeof(out), dir, "out");
    static const char *const files[] = { "seed-4/metrics.csv", "seed-3/fingerprint", "seeds",
                                         "golden.json", "seed-5/run.json" };
    for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
        snprintf(cmd, sizeof(cmd), "cp -r %s %s/g2 && rm %s/g2/%s && mkfifo %s/g2/%s", g, dir, dir,
                 files[i], dir, files[i]);
        ck_assert_int_eq(system(cmd), 0);
        char g2[600];
        path_of(g2, sizeof(g2), dir, "g2");
        result r =
            check_in(dir, (const char *[]){ "--golden", g2, "--seeds", "3", "-o", out, NULL });
        ck_assert_msg(r.status == 2, "%s: exit %d\n%s%s", files[i], r.status, r.out, r.err);
        ck_assert_msg(strstr(r.err, files[i]) != NULL && strstr(r.err, "not a regular file"),
                      "%s: %s", files[i], r.err);
        snprintf(cmd, sizeof(cmd), "rm -rf %s/g2", dir);
        ck_assert_int_eq(system(cmd), 0);
    }
    snprintf(cmd, sizeof(cmd), "sed -i 's/\\[3, 4, 5\\]/[3, 4, 5.5]/' %s/golden.json", g);
    ck_assert_int_eq(system(cmd), 0);
    result r = check_in(dir, (const char *[]){ "--golden", g, "--seeds", "3", "-o", out, NULL });
    ck_assert_msg(r.status == 2, "5.5: exit %d\n%s%s", r.status, r.out, r.err);
    ck_assert_msg(strstr(r.err, "golden.json: $.seeds[2]: must be an integer") != NULL &&
                      strstr(r.err, "got 5.5") != NULL,
                  "%s", r.err);
    harness_cleanup(dir);
}
END_TEST

/* A run's run.json or summary.json that is a FIFO: every command that looked at the run's
 * folder (to tell a hetsim output: plot, report, a sweep resuming, any output place below it)
 * opened it and waited for a writer forever. Now no FIFO is read as a run's file: plot and
 * report refuse it naming the file (or draw with the directory's name for a label), a sweep
 * names the point's directory, which is no run. */
START_TEST(a_run_file_that_is_a_fifo_is_never_waited_on)
{
    char *dir = harness_tmpdir("probe4");
    char s[512], r[512], sw[512], swf[512], cmd[1600];
    harness_run_in(dir, scenario_json, s, r, sizeof(s));
    harness_sweep_in(dir, NULL,
                     "{\"base\": \"s.json\", \"grid\": {\"workers\": [2, 3]}, \"seeds\": 1}\n", swf,
                     sw, sizeof(swf));
    result res;
    static const char *const files[] = { "run.json", "summary.json" };
    for (size_t i = 0; i < 2; i++) {
        snprintf(cmd, sizeof(cmd),
                 "rm -rf %s/r2 %s/p && cp -r %s %s/r2 && rm %s/r2/%s && mkfifo %s/r2/%s", dir, dir,
                 r, dir, dir, files[i], dir, files[i]);
        ck_assert_int_eq(system(cmd), 0);
        char r2[600], p[600];
        path_of(r2, sizeof(r2), dir, "r2");
        path_of(p, sizeof(p), dir, "p");
        res = harness_hetsim((const char *[]){ "plot", r2, "-o", p, NULL });
        ck_assert_msg(res.status == 0 || res.status == 2, "plot, %s: exit %d\n%s", files[i],
                      res.status, res.err);
    }
    snprintf(cmd, sizeof(cmd),
             "rm '%s/workers=2,seed=3/run.json' && mkfifo '%s/workers=2,seed=3/run.json'", sw, sw);
    ck_assert_int_eq(system(cmd), 0);
    res = harness_hetsim((const char *[]){ "report", sw, "--by", "workers", NULL });
    ck_assert_msg(res.status == 2, "report: exit %d\n%s", res.status, res.err);
    ck_assert_msg(strstr(res.err, "run.json: not a regular file") != NULL, "%s", res.err);
    /* The sweep's point is no run (hetsim writes no FIFO): named, not replaced. */
    res = harness_hetsim((const char *[]){ "sweep", swf, "-o", sw, "-j", "1", "--quiet", NULL });
    ck_assert_msg(res.status == 1, "sweep again: exit %d\n%s", res.status, res.err);
    ck_assert_msg(strstr(res.err, "workers=2,seed=3 is not empty and holds no hetsim run") != NULL,
                  "%s", res.err);
    harness_cleanup(dir);
}
END_TEST

Suite *test_suite(void)
{
    Suite *s = suite_create("probe4");
    TCase *places = tcase_create("places");
    tcase_set_timeout(places, 240);
    tcase_add_test(places, no_report_nor_golden_goes_into_another_checks_output);
    tcase_add_test(places, no_plot_goes_into_a_checks_output);
    tcase_add_test(places, a_golden_file_that_is_no_regular_file_or_a_seed_not_whole_is_refused);
    tcase_add_test(places, a_run_file_that_is_a_fifo_is_never_waited_on);
    suite_add_tcase(s, places);
    return s;
}
