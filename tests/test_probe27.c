/* Issue 38, thirteenth probe, classes 1-6 and the admission deadlock (probe38x). A plot
 * --style copy whose terminal is not the figure's format (`set terminal svg` in a copy drawing
 * a PNG) was refused as "gnuplot cut it short at N bytes, no PNG signature at the start (a
 * full disk or a file-size limit)", exit 1, naming no copy: a cause that was not it. A figure
 * of another format is bad input naming the copy, exit 2. A golden's path holding U+FFFE or
 * U+FFFF (UTF-8, but no XML character) was written raw into a check's JUnit report, which was
 * then no XML. A swept straggler rule selecting its workers by "count" made report and plot
 * --by refuse the sweep just written (its run.json holds the drawn workers and "count": null).
 * A --junit report into a folder not made yet was lost after the whole check, exit 1.
 * A sweep over a grid path of an array's item (stragglers[0].slowdown) could not be drawn by
 * plot --by ('[' refused in its figures' names). Every case failed before its fix.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <check.h>

#include "harness.h"

typedef harness_result result;

/* A copy of convergence.gp that sets a terminal of another format (svg, dumb) before
 * `set output out`, plot RUN drawing PNG: the figure is no PNG from its first byte, named as
 * such with the copy, exit 2, no figure left. */
START_TEST(a_style_copy_drawing_another_format_is_named)
{
    char *dir = harness_tmpdir("probe27");
    char s[600], r[600], gp[700], p[600];
    harness_run_in(dir, harness_quick_json, s, r, sizeof(s));
    const char *const copies[] = { "set terminal svg\nset output out\nplot sin(x)\n",
                                   "set terminal dumb\nset output out\nplot 3 * x\n" };
    for (int c = 0; c < 2; c++) {
        result res = harness_plot_style_copy(dir, r, c, copies[c], gp, p, sizeof(p));
        char want[1600];
        snprintf(want, sizeof(want),
                 "gnuplot wrote no PNG figure to %s/convergence.png.tmp (no PNG signature at "
                 "the start",
                 p);
        ck_assert_msg(res.status == 2, "case %d: exit %d\n%s", c, res.status, res.err);
        ck_assert_msg(strstr(res.err, want) != NULL, "case %d: %s", c, res.err);
        snprintf(want, sizeof(want), "(the --style copy %s)", gp);
        ck_assert_msg(strstr(res.err, want) != NULL, "case %d: %s", c, res.err);
        ck_assert_msg(strstr(res.err, "full disk") == NULL, "case %d: %s", c, res.err);
        char png[700];
        snprintf(png, sizeof(png), "%s/convergence.png", p);
        ck_assert_msg(!harness_exists(png), "case %d: %s drawn", c, png);
    }
    harness_cleanup(dir);
}
END_TEST

/* A golden moved to a path holding U+FFFE or U+FFFF, UTF-8 but no XML character: the JUnit
 * report names it \uFFFE, \uFFFF (written raw, the report was no XML: xmllint's "Char 0xFFFE
 * out of allowed range"). */
START_TEST(a_junit_report_of_a_golden_path_holding_no_xml_character_is_xml)
{
    char *dir = harness_tmpdir("probe27");
    char s[600], g[600], moved[700], j[700], o[700];
    harness_golden_in(dir, harness_quick_json, s, g, sizeof(s));
    const char *const names[] = { "g\xef\xbf\xbeq", "g\xef\xbf\xbfq" };
    const char *const wants[] = { "/g\\uFFFEq\" tests=\"", "/g\\uFFFFq\" tests=\"" };
    for (int c = 0; c < 2; c++) {
        snprintf(moved, sizeof(moved), "%s/%s", dir, names[c]);
        ck_assert_int_eq(rename(g, moved), 0);
        snprintf(j, sizeof(j), "%s/j%d.xml", dir, c);
        snprintf(o, sizeof(o), "%s/o%d", dir, c);
        result res = harness_hetsim(
            (const char *[]){ "check", s, "--golden", moved, "--junit", j, "-o", o, NULL });
        ck_assert_msg(res.status == 0, "case %d: exit %d\n%s", c, res.status, res.err);
        size_t n = 0;
        char *xml = harness_read(j, &n);
        ck_assert_ptr_nonnull(xml);
        ck_assert_msg(strstr(xml, "\xef\xbf\xbe") == NULL && strstr(xml, "\xef\xbf\xbf") == NULL,
                      "case %d: no XML character written raw:\n%s", c, xml);
        ck_assert_msg(strstr(xml, wants[c]) != NULL, "case %d: %s", c, xml);
        free(xml);
        ck_assert_int_eq(rename(moved, g), 0);
    }
    harness_cleanup(dir);
}
END_TEST

/* --junit into a folder not made yet, named directly or by a link to a place not made yet:
 * the folder is made as -o's are, the report written, exit 0, the link left as it was (the
 * check ran every seed, then said "(no JUnit report: cannot write new/deep/j.xml.tmp: No
 * such file or directory)", exit 1: a regression to CI). */
START_TEST(a_junit_report_into_a_folder_not_made_yet_is_written)
{
    char *dir = harness_tmpdir("probe27");
    char s[600], g[600], j[700], o[700], link[700], target[700], got[700];
    harness_golden_in(dir, harness_quick_json, s, g, sizeof(s));
    snprintf(link, sizeof(link), "%s/jl.xml", dir);
    ck_assert_int_eq(symlink("away/j.xml", link), 0);
    snprintf(target, sizeof(target), "%s/away/j.xml", dir);
    for (int c = 0; c < 2; c++) {
        snprintf(j, sizeof(j), "%s/new%d/deep/j.xml", dir, c);
        snprintf(o, sizeof(o), "%s/o%d", dir, c);
        result res = harness_hetsim((const char *[]){ "check", s, "--golden", g, "--junit",
                                                      c == 0 ? j : link, "-o", o, NULL });
        ck_assert_msg(res.status == 0, "case %d: exit %d\n%s", c, res.status, res.err);
        size_t n = 0;
        char *xml = harness_read(c == 0 ? j : target, &n);
        ck_assert_msg(xml != NULL && strncmp(xml, "<?xml", 5) == 0, "case %d: no report", c);
        free(xml);
    }
    ssize_t len = readlink(link, got, sizeof(got) - 1);
    ck_assert_int_eq(len, 10);
    got[len] = '\0';
    ck_assert_str_eq(got, "away/j.xml");
    harness_cleanup(dir);
}
END_TEST

/* A swept straggler rule that selects its workers by "count": the run draws them, and its
 * run.json holds the rule with the drawn "workers" (docs/scenario.md; beside its count since
 * probe40, with "count": null before).
 * report and plot --by read the sweep just written (they said "stragglers differ from the
 * run's", exit 2); an index whose count is not the number of workers drawn is still refused. */
START_TEST(a_swept_rule_of_a_worker_count_is_read_back_as_the_run_drew_it)
{
    char *dir = harness_tmpdir("probe27");
    char sw[600], o[600], dest[700];
    harness_sweep_in(dir, harness_quick_json,
                     "{\"base\": \"s.json\", \"grid\": {\"stragglers\": [[],"
                     " [{\"kind\": \"random\", \"probability\": 0.273, \"slowdown\": 3.1,"
                     " \"count\": 2}],"
                     " [{\"kind\": \"fixed\", \"count\": 1, \"slowdown\": 1.7},"
                     " {\"kind\": \"failure\", \"count\": 1, \"at_s\": 0.113}]]}}",
                     sw, o, sizeof(sw));
    snprintf(dest, sizeof(dest), "%s/p", dir);
    result rep = harness_hetsim(
        (const char *[]){ "report", o, "--by", "stragglers", "--format", "csv", NULL });
    ck_assert_msg(rep.status == 0, "report: exit %d\n%s", rep.status, rep.err);
    result plot =
        harness_hetsim((const char *[]){ "plot", o, "--by", "stragglers", "-o", dest, NULL });
    ck_assert_msg(plot.status == 0, "plot --by: exit %d\n%s", plot.status, plot.err);
    harness_poke_index(o, "\"\"count\"\":2}", 11,
                       '3'); /* two workers drawn, the index says three */
    result bad = harness_hetsim(
        (const char *[]){ "report", o, "--by", "stragglers", "--format", "csv", NULL });
    ck_assert_msg(bad.status == 2, "edited: exit %d\n%s", bad.status, bad.err);
    ck_assert_msg(strstr(bad.err, "stragglers differ from the run's") != NULL, "%s", bad.err);
    harness_cleanup(dir);
}
END_TEST

static const char count_json[] =
    "{\"seed\": 5, \"workers\": 3, \"compute\": {\"iteration_ms\": 10},\n"
    " \"workload\": {\"model\": {\"name\": \"none\"}, \"message_bytes\": 4000},\n"
    " \"stragglers\": [{\"kind\": \"fixed\", \"count\": 1, \"slowdown\": 2.3}],\n"
    " \"protocol\": {\"name\": \"allreduce\"}, \"stop\": {\"time_s\": 0.2},\n"
    " \"eval\": {\"every_s\": 0.05}}\n";

/* The same count swept by its own grid path, "stragglers[0].count": report reads the sweep
 * just written (it said "stragglers differ from the run's", exit 2); an index whose count
 * cell is not the number of workers drawn is still refused. */
START_TEST(a_swept_worker_count_path_is_read_back_as_the_run_drew_it)
{
    char *dir = harness_tmpdir("probe27");
    char sw[600], o[600];
    harness_sweep_in(dir, count_json,
                     "{\"base\": \"s.json\", \"grid\": {\"stragglers[0].count\": [1, 2]}}", sw, o,
                     sizeof(sw));
    const char *const by = "stragglers[0].count";
    result rep =
        harness_hetsim((const char *[]){ "report", o, "--by", by, "--format", "csv", NULL });
    ck_assert_msg(rep.status == 0, "report: exit %d\n%s", rep.status, rep.err);
    harness_poke_index(o, "seed=5\",2,5,", 8, '3'); /* two workers drawn, the index says three */
    result bad =
        harness_hetsim((const char *[]){ "report", o, "--by", by, "--format", "csv", NULL });
    ck_assert_msg(bad.status == 2, "edited: exit %d\n%s", bad.status, bad.err);
    ck_assert_msg(strstr(bad.err, "stragglers differ from the run's") != NULL, "%s", bad.err);
    harness_cleanup(dir);
}
END_TEST

/* plot --by a grid path of an array's item ("stragglers[0].slowdown", a documented grid path):
 * the figures are named after the key with '[' and ']' written '_', as the sweep names its
 * points' directories (plot --by refused the key, "contains '[', which cannot be passed to
 * gnuplot", exit 2: such a sweep could not be drawn). */
START_TEST(plot_by_a_grid_path_of_an_array_item_draws_it)
{
    char *dir = harness_tmpdir("probe27");
    char sw[600], o[600], dest[700], fig[800], csv[800];
    harness_sweep_in(dir, count_json,
                     "{\"base\": \"s.json\", \"grid\": {\"stragglers[0].slowdown\": [1.7, 2.9]}}",
                     sw, o, sizeof(sw));
    snprintf(dest, sizeof(dest), "%s/p", dir);
    result plot = harness_hetsim(
        (const char *[]){ "plot", o, "--by", "stragglers[0].slowdown", "-o", dest, NULL });
    ck_assert_msg(plot.status == 0, "plot --by: exit %d\n%s", plot.status, plot.err);
    snprintf(fig, sizeof(fig), "%s/breakdown-by-stragglers_0_.slowdown.png", dest);
    snprintf(csv, sizeof(csv), "%s/breakdown-by-stragglers_0_.slowdown.csv", dest);
    ck_assert_msg(harness_exists(fig) && harness_exists(csv), "%s: no figure\n%s", fig, plot.err);
    harness_cleanup(dir);
}
END_TEST

Suite *test_suite(void)
{
    Suite *s = suite_create("probe27");
    TCase *style = tcase_create("style");
    tcase_add_test(style, a_style_copy_drawing_another_format_is_named);
    tcase_set_timeout(style, 120);
    suite_add_tcase(s, style);
    TCase *junit = tcase_create("junit");
    tcase_add_test(junit, a_junit_report_of_a_golden_path_holding_no_xml_character_is_xml);
    tcase_add_test(junit, a_junit_report_into_a_folder_not_made_yet_is_written);
    tcase_set_timeout(junit, 120);
    suite_add_tcase(s, junit);
    TCase *read_back = tcase_create("read_back");
    tcase_add_test(read_back, a_swept_rule_of_a_worker_count_is_read_back_as_the_run_drew_it);
    tcase_add_test(read_back, a_swept_worker_count_path_is_read_back_as_the_run_drew_it);
    tcase_add_test(read_back, plot_by_a_grid_path_of_an_array_item_draws_it);
    tcase_set_timeout(read_back, 120);
    suite_add_tcase(s, read_back);
    return s;
}
