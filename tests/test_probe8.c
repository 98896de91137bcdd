/* Issue 38's eighth probe: a golden's fingerprint, read by check --exact, that is a FIFO or
 * holds a NUL byte; a LaTeX table with two rows under one name; a --style copy that is a FIFO
 * or a directory; a sweep point's summary.json that does not parse. Every case failed before its
 * fix.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <check.h>

#include "harness.h"

typedef harness_result result;

/* check --exact reads the golden's seed-5/fingerprint: a FIFO there hung the check (it
 * waited for a writer), and a NUL byte appended to it was read as the end of the text, the
 * damaged golden passing (exit 0). Both are refused, exit 2, naming the file. */
START_TEST(a_fingerprint_that_is_a_fifo_or_holds_a_nul_byte_is_refused)
{
    char *dir = harness_tmpdir("probe8");
    char s[600], g[600], o[600], fp[700];
    harness_golden_in(dir, harness_quick_json, s, g, sizeof(s));
    snprintf(o, sizeof(o), "%s/o", dir);
    snprintf(fp, sizeof(fp), "%s/seed-5/fingerprint", g);
    result res =
        harness_hetsim((const char *[]){ "check", s, "--golden", g, "--exact", "-o", o, NULL });
    ck_assert_msg(res.status == 0, "%s", res.err);
    FILE *f = fopen(fp, "ab");
    ck_assert_ptr_nonnull(f);
    fputc('\0', f);
    fputs("metrics.csv 0123456789abcdef\n", f);
    fclose(f);
    res = harness_hetsim((const char *[]){ "check", s, "--golden", g, "--exact", "-o", o, NULL });
    ck_assert_msg(res.status == 2, "exit %d\n%s", res.status, res.err);
    ck_assert_msg(strstr(res.err, "fingerprint: holds a NUL byte") != NULL, "%s", res.err);
    unlink(fp);
    ck_assert_int_eq(mkfifo(fp, 0666), 0);
    res = harness_hetsim((const char *[]){ "check", s, "--golden", g, "--exact", "-o", o, NULL });
    ck_assert_msg(res.status == 2, "exit %d\n%s", res.status, res.err);
    ck_assert_msg(strstr(res.err, "fingerprint: not a regular file") != NULL, "%s", res.err);
    harness_cleanup(dir);
}
END_TEST

/* report --format tex names each row by its values' display names: --names mapping
 * allreduce and dpsgd to one text printed two rows named "AR", which no reader can tell
 * apart, exit 0 (plot --by refuses this since issue 38's sixth probe). Refused, exit 2, naming
 * the text and both values, nothing printed; Markdown keeps index.csv's values and runs. */
START_TEST(a_tex_table_with_two_rows_under_one_name_is_refused)
{
    char *dir = harness_tmpdir("probe8");
    char sw[600], o[600], nf[600];
    harness_sweep_in(dir, harness_quick_json, harness_protocols_sweep, sw, o, sizeof(sw));
    harness_write(dir, "names", "# one text for two protocols\nallreduce=AR\ndpsgd=AR\n");
    snprintf(nf, sizeof(nf), "%s/names", dir);
    result res = harness_hetsim((const char *[]){ "report", o, "--by", "protocol.name", "--names",
                                                  nf, "--format", "tex", NULL });
    ck_assert_msg(res.status == 2, "exit %d\n%s", res.status, res.err);
    ck_assert_msg(strstr(res.err, "two rows would be named \"AR\" (allreduce and dpsgd)") != NULL,
                  "%s", res.err);
    ck_assert_msg(strstr(res.out, "tabular") == NULL, "%s", res.out);
    res = harness_hetsim(
        (const char *[]){ "report", o, "--by", "protocol.name", "--names", nf, NULL });
    ck_assert_msg(res.status == 0, "%s", res.err);
    harness_cleanup(dir);
}
END_TEST

/* A --style copy that is a FIFO hung plot (it waited for a writer); one that is a directory
 * was refused as a failure to read, exit 1. Both are bad input: refused naming the file,
 * exit 2, nothing drawn. */
START_TEST(a_style_copy_that_is_a_fifo_or_a_directory_is_refused)
{
    char *dir = harness_tmpdir("probe8");
    char s[600], r[600], st[600], gp[700], o[600];
    harness_run_in(dir, harness_quick_json, s, r, sizeof(s));
    snprintf(st, sizeof(st), "%s/style", dir);
    snprintf(gp, sizeof(gp), "%s/convergence.gp", st);
    snprintf(o, sizeof(o), "%s/o", dir);
    ck_assert_int_eq(mkdir(st, 0777), 0);
    for (int c = 0; c < 2; c++) {
        if (c == 0)
            ck_assert_int_eq(mkfifo(gp, 0666), 0);
        else
            ck_assert_int_eq(mkdir(gp, 0777), 0);
        result res = harness_hetsim((const char *[]){ "plot", r, "--style", st, "-o", o, NULL });
        ck_assert_msg(res.status == 2, "case %d: exit %d\n%s", c, res.status, res.err);
        ck_assert_msg(strstr(res.err, "convergence.gp: not a regular file") != NULL, "%s", res.err);
        ck_assert(!harness_exists(o));
        if (c == 0)
            unlink(gp);
    }
    harness_cleanup(dir);
}
END_TEST

/* A --style copy that opens with a UTF-8 byte-order mark (an editor's) is drawn, as any text
 * file hetsim reads; gnuplot read the mark as a command ("invalid command"), and its message
 * named no file. A copy gnuplot fails on is named, exit 2 (issue 38, ninth probe). */
START_TEST(a_style_copy_with_a_byte_order_mark_draws_and_a_broken_one_is_named)
{
    static const char script[] = "set terminal pngcairo size 320,240\nset output out\n"
                                 "plot sin(x) title 'copy'\n";
    char *dir = harness_tmpdir("probe8");
    char s[600], r[600], st[600], text[200], o[600], png[700];
    harness_run_in(dir, harness_quick_json, s, r, sizeof(s));
    snprintf(st, sizeof(st), "%s/style", dir);
    snprintf(o, sizeof(o), "%s/o", dir);
    snprintf(png, sizeof(png), "%s/convergence.png", o);
    ck_assert_int_eq(mkdir(st, 0777), 0);
    snprintf(text, sizeof(text), "\xef\xbb\xbf%s", script);
    harness_write(st, "convergence.gp", text);
    result res = harness_hetsim((const char *[]){ "plot", r, "--style", st, "-o", o, NULL });
    ck_assert_msg(res.status == 0, "exit %d\n%s", res.status, res.err);
    ck_assert(harness_exists(png));
    harness_write(st, "convergence.gp", "set no_such_option 3\nset output out\n");
    snprintf(o, sizeof(o), "%s/o2", dir);
    res = harness_hetsim((const char *[]){ "plot", r, "--style", st, "-o", o, NULL });
    ck_assert_msg(res.status == 2, "exit %d\n%s", res.status, res.err);
    ck_assert_msg(strstr(res.err, "gnuplot failed drawing convergence.png") != NULL &&
                      strstr(res.err, "(the --style copy ") != NULL &&
                      strstr(res.err, "style/convergence.gp)") != NULL,
                  "%s", res.err);
    harness_cleanup(dir);
}
END_TEST

/* report and plot --by hold each index.csv row's results to its run's summary.json; a
 * summary.json that does not parse (cut mid-file, or a number such as 1e999 past a double)
 * skipped that check, and both read the sweep, exit 0. Refused, exit 2, naming the row and
 * the file, nothing drawn. */
START_TEST(a_points_summary_that_does_not_parse_is_refused)
{
    static const char *const damage[] = { "{\n  \"hetsim_version\": \"0.1",
                                          "{\"stop_reason\": \"time\", \"sim_time_s\": 1e999}\n" };
    char *dir = harness_tmpdir("probe8");
    char s[600], o[600], sum[900], figs[700];
    harness_sweep_in(dir, harness_quick_json,
                     "{\"base\": \"s.json\", \"grid\": {\"workload.lr\": [0.05]}, \"seeds\": 2}\n",
                     s, o, sizeof(s));
    snprintf(figs, sizeof(figs), "%s/figs", dir);
    snprintf(sum, sizeof(sum), "%s/workload.lr=0.05,seed=6/summary.json", o);
    for (size_t c = 0; c < 2; c++) {
        FILE *f = fopen(sum, "wb");
        ck_assert_ptr_nonnull(f);
        fputs(damage[c], f);
        fclose(f);
        result res = harness_hetsim((const char *[]){ "report", o, "--by", "workload.lr", NULL });
        ck_assert_msg(res.status == 2, "case %zu: exit %d\n%s", c, res.status, res.err);
        ck_assert_msg(strstr(res.err, "line 3: not its run's results: its summary.json does "
                                      "not parse") != NULL,
                      "%s", res.err);
        res =
            harness_hetsim((const char *[]){ "plot", o, "--by", "workload.lr", "-o", figs, NULL });
        ck_assert_msg(res.status == 2, "case %zu: exit %d\n%s", c, res.status, res.err);
        ck_assert(!harness_exists(figs));
    }
    harness_cleanup(dir);
}
END_TEST

Suite *test_suite(void)
{
    Suite *s = suite_create("probe8");
    TCase *golden = tcase_create("golden");
    tcase_add_test(golden, a_fingerprint_that_is_a_fifo_or_holds_a_nul_byte_is_refused);
    tcase_set_timeout(golden, 60);
    suite_add_tcase(s, golden);
    TCase *names = tcase_create("names");
    tcase_add_test(names, a_tex_table_with_two_rows_under_one_name_is_refused);
    tcase_add_test(names, a_style_copy_that_is_a_fifo_or_a_directory_is_refused);
    tcase_add_test(names, a_style_copy_with_a_byte_order_mark_draws_and_a_broken_one_is_named);
    tcase_add_test(names, a_points_summary_that_does_not_parse_is_refused);
    tcase_set_timeout(names, 60);
    suite_add_tcase(s, names);
    return s;
}
