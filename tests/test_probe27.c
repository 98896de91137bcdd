/* Issue 38, thirteenth probe, classes 1-6 and the admission deadlock (probe38x). A plot
 * --style copy whose terminal is not the figure's format (`set terminal svg` in a copy drawing
 * a PNG) was refused as "gnuplot cut it short at N bytes, no PNG signature at the start (a
 * full disk or a file-size limit)", exit 1, naming no copy: a cause that was not it. A figure
 * of another format is bad input naming the copy, exit 2. A golden's path holding U+FFFE or
 * U+FFFF (UTF-8, but no XML character) was written raw into a check's JUnit report, which was
 * then no XML. Every case failed before its fix.
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
    char s[600], r[600], st[600], gp[700], p[600];
    harness_run_in(dir, harness_quick_json, s, r, sizeof(s));
    const char *const copies[] = { "set terminal svg\nset output out\nplot sin(x)\n",
                                   "set terminal dumb\nset output out\nplot 3 * x\n" };
    for (int c = 0; c < 2; c++) {
        snprintf(st, sizeof(st), "%s/st%d", dir, c);
        snprintf(p, sizeof(p), "%s/p%d", dir, c);
        ck_assert_int_eq(mkdir(st, 0777), 0);
        ck_assert_int_eq(harness_save(st, "convergence.gp", copies[c]), 0);
        snprintf(gp, sizeof(gp), "%s/convergence.gp", st);
        result res = harness_hetsim((const char *[]){ "plot", r, "--style", st, "-o", p, NULL });
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

Suite *test_suite(void)
{
    Suite *s = suite_create("probe27");
    TCase *style = tcase_create("style");
    tcase_add_test(style, a_style_copy_drawing_another_format_is_named);
    tcase_set_timeout(style, 120);
    suite_add_tcase(s, style);
    TCase *junit = tcase_create("junit");
    tcase_add_test(junit, a_junit_report_of_a_golden_path_holding_no_xml_character_is_xml);
    tcase_set_timeout(junit, 120);
    suite_add_tcase(s, junit);
    return s;
}
