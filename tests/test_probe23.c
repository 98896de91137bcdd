/* Issue 38, twelfth probe, class 19 (messages): a plot --style copy that is empty (or a link to
 * /dev/null, or a byte-order mark alone) was taken as the figure's script and refused as "no
 * embedded script convergence.gp", exit 1, naming no copy; a copy that draws nothing into
 * `out` (no `set output out`) was "gnuplot wrote nothing to DIR/convergence.png.tmp", exit 1,
 * naming no copy either. Each is bad input naming the copy, exit 2. A check's --junit report
 * wrote a golden's path raw into its XML: a byte that is no UTF-8 made the file, which says
 * UTF-8, no XML. A run drawing its figures (output.plots) into a place gnuplot cannot be given
 * (a space, an '@') ran whole, then failed, exit 1, naming DIR.partial; a sweep into such a
 * directory ran every point and failed each. Every case failed before its fix.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <check.h>

#include "harness.h"
#include "sim/text.h"

typedef harness_result result;

/* An empty copy, one of a byte-order mark alone and a link to /dev/null: each is refused,
 * naming the copy and why, exit 2, nothing drawn. */
START_TEST(an_empty_style_copy_is_refused_naming_it)
{
    char *dir = harness_tmpdir("probe23");
    char s[600], r[600], st[600], gp[700], p[600];
    harness_run_in(dir, harness_quick_json, s, r, sizeof(s));
    snprintf(p, sizeof(p), "%s/p", dir);
    for (int c = 0; c < 3; c++) {
        snprintf(st, sizeof(st), "%s/st%d", dir, c);
        ck_assert_int_eq(mkdir(st, 0777), 0);
        snprintf(gp, sizeof(gp), "%s/convergence.gp", st);
        if (c == 2)
            ck_assert_int_eq(symlink("/dev/null", gp), 0);
        else
            ck_assert_int_eq(harness_save(st, "convergence.gp", c == 0 ? "" : "\xef\xbb\xbf"), 0);
        result res = harness_hetsim((const char *[]){ "plot", r, "--style", st, "-o", p, NULL });
        char want[800];
        snprintf(want, sizeof(want), "--style: %s: empty", gp);
        ck_assert_msg(res.status == 2, "case %d: exit %d\n%s", c, res.status, res.err);
        ck_assert_msg(strstr(res.err, want) != NULL, "case %d: %s", c, res.err);
        ck_assert(!harness_exists(p));
    }
    harness_cleanup(dir);
}
END_TEST

/* A copy that gnuplot runs without an error but that writes no figure to `out` (it prints,
 * or draws into a file of its own): the message names the copy, exit 2. */
START_TEST(a_style_copy_that_draws_nothing_is_named)
{
    char *dir = harness_tmpdir("probe23");
    char s[600], r[600], gp[700], p[600], own[800];
    harness_run_in(dir, harness_quick_json, s, r, sizeof(s));
    snprintf(own, sizeof(own), "set terminal pngcairo\nset output '%s/own-9.png'\nplot x\n", dir);
    const char *const copies[] = { "print 7\n", own };
    for (int c = 0; c < 2; c++) {
        result res = harness_plot_style_copy(dir, r, c, copies[c], gp, p, sizeof(p));
        char want[1600];
        snprintf(want, sizeof(want),
                 "gnuplot wrote nothing to %s/convergence.png.tmp (the --style "
                 "copy %s)",
                 p, gp);
        ck_assert_msg(res.status == 2, "case %d: exit %d\n%s", c, res.status, res.err);
        ck_assert_msg(strstr(res.err, want) != NULL, "case %d: %s", c, res.err);
    }
    harness_cleanup(dir);
}
END_TEST

/* A golden (moved, then checked) whose path holds a byte that is no UTF-8, usable or not: the
 * JUnit report is UTF-8 throughout, the byte written \xff as messages write it. */
START_TEST(a_junit_report_of_a_golden_path_that_is_no_utf8_is_utf8)
{
    char *dir = harness_tmpdir("probe23");
    char s[600], g[600], moved[700], j[700], o[700];
    harness_golden_in(dir, harness_quick_json, s, g, sizeof(s));
    snprintf(moved, sizeof(moved), "%s/g\xff\xc3z", dir);
    ck_assert_int_eq(rename(g, moved), 0);
    for (int c = 0; c < 2; c++) {
        snprintf(j, sizeof(j), "%s/j%d.xml", dir, c);
        snprintf(o, sizeof(o), "%s/o%d", dir, c);
        if (c == 1) /* no golden there: one test case in error */
            ck_assert_int_eq(rename(moved, g), 0);
        result res = harness_hetsim(
            (const char *[]){ "check", s, "--golden", moved, "--junit", j, "-o", o, NULL });
        ck_assert_msg(res.status == 2 * c, "case %d: exit %d\n%s", c, res.status, res.err);
        size_t n = 0;
        char *xml = harness_read(j, &n);
        ck_assert_ptr_nonnull(xml);
        ck_assert_msg(sim_text_utf8(xml), "case %d: no UTF-8:\n%s", c, xml);
        ck_assert_msg(strstr(xml, "<testsuite name=\"") != NULL &&
                          strstr(xml, "/g\\xff\\xc3z\" tests=\"") != NULL,
                      "case %d: %s", c, xml);
        free(xml);
    }
    harness_cleanup(dir);
}
END_TEST

static const char plots_json[] =
    "{\"seed\": 5, \"workers\": 3, \"compute\": {\"iteration_ms\": 10},\n"
    " \"workload\": {\"model\": {\"name\": \"none\"}, \"message_bytes\": 4000},\n"
    " \"protocol\": {\"name\": \"allreduce\"}, \"stop\": {\"time_s\": 0.2},\n"
    " \"eval\": {\"every_s\": 0.05}, \"output\": {\"plots\": true}}\n";

/* run -o "DIR/my run", a scenario's output.dir "o@q" and sweep -o "DIR/s q", each of a scenario
 * that draws its figures: refused before anything runs, naming the place, exit 2, nothing
 * made. */
START_TEST(a_run_into_a_place_gnuplot_cannot_take_is_refused_before_it_runs)
{
    char *dir = harness_tmpdir("probe23");
    char s[600], sw[600], o[700], o2[700], q[700], set[800];
    harness_sweep_file(dir, plots_json, harness_protocols_sweep, sw, sizeof(sw));
    snprintf(s, sizeof(s), "%s/s.json", dir);
    snprintf(o, sizeof(o), "%s/my run", dir);
    snprintf(o2, sizeof(o2), "%s/s q", dir);
    snprintf(q, sizeof(q), "%s/o@q", dir);
    snprintf(set, sizeof(set), "output.dir=\"%s\"", q);
    const char *const *cmds[] = {
        (const char *[]){ "run", s, "-o", o, "--quiet", NULL },
        (const char *[]){ "run", s, "--set", set, "--quiet", NULL },
        (const char *[]){ "sweep", sw, "-o", o2, "--quiet", NULL },
    };
    const char *const wants[] = { "/my run\" contains ' ', which cannot be passed to gnuplot",
                                  "/o@q\" contains '@', which cannot be passed to gnuplot",
                                  "point 0 (protocol.name=allreduce,seed=5) draws figures "
                                  "(output.plots): sweep directory" };
    char before[16384], after[16384]; /* the whole listing: 128 bytes held its first lines */
    for (size_t c = 0; c < 3; c++) {
        harness_tree_digest(dir, before, sizeof(before));
        result res = harness_hetsim(cmds[c]);
        harness_tree_digest(dir, after, sizeof(after));
        ck_assert_msg(res.status == 2, "case %zu: exit %d\n%s", c, res.status, res.err);
        ck_assert_msg(strstr(res.err, wants[c]) != NULL, "case %zu: %s", c, res.err);
        ck_assert_msg(strcmp(before, after) == 0, "case %zu: the tree changed", c);
    }
    ck_assert(!harness_exists(q));
    harness_cleanup(dir);
}
END_TEST

Suite *test_suite(void)
{
    Suite *s = suite_create("probe23");
    TCase *messages = tcase_create("messages");
    tcase_add_test(messages, an_empty_style_copy_is_refused_naming_it);
    tcase_add_test(messages, a_style_copy_that_draws_nothing_is_named);
    tcase_add_test(messages, a_junit_report_of_a_golden_path_that_is_no_utf8_is_utf8);
    tcase_add_test(messages, a_run_into_a_place_gnuplot_cannot_take_is_refused_before_it_runs);
    tcase_set_timeout(messages, 120);
    suite_add_tcase(s, messages);
    return s;
}
