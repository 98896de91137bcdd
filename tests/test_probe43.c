/* Issue 38, seventeenth probe (classes 13-19 and the command line): new variants of the old
 * classes. Each case failed before its fix.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <check.h>

#include "harness.h"

typedef harness_result result;

/* ---- Lists a user can make long ----------------------------------------------------------- */

/* Each display name was looked up, and each new one checked against those before it, by a walk
 * of every mapping: `report --names FILE` of 100,000 lines took 15.8 s of CPU (10,000: 0.18 s),
 * 30,000 `--label`s 1.4 s (release build). A table by the key now finds them: 0.04 s. The
 * report of 100,000 lines (and of the same as --labels, the ones of a command line's room) must
 * take less than 3 s of CPU (debug build, under load: about 0.2 s). */
START_TEST(many_display_names_are_read_in_linear_time)
{
    enum {
        N = 100000
    };
    char *dir = harness_tmpdir("probe43");
    char sw[600], o[600], path[700];
    harness_sweep_in(dir, harness_quick_json, harness_protocols_sweep, sw, o, sizeof(sw));
    snprintf(path, sizeof(path), "%s/names.txt", dir);
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    for (int i = 0; i < N; i++)
        fprintf(f, "key%d=Key %d\n", i, i);
    fprintf(f, "dpsgd=Ours\n");
    ck_assert_int_eq(fclose(f), 0);
    double t0 = harness_children_cpu_s();
    result res = harness_hetsim((const char *[]){ "report", o, "--by", "protocol.name", "--names",
                                                  path, "--format", "tex", NULL });
    double cpu = harness_children_cpu_s() - t0;
    ck_assert_msg(res.status == 0 && strstr(res.out, "Ours &") != NULL, "exit %d\n%s\n%s",
                  res.status, res.out, res.err);
    ck_assert_msg(cpu < 3.0, "--names of %d lines: %.2f s of CPU", N, cpu);
    /* A key mapped twice is still refused, naming its line. */
    f = fopen(path, "a");
    ck_assert_ptr_nonnull(f);
    fprintf(f, "key77=Again\n");
    ck_assert_int_eq(fclose(f), 0);
    res = harness_hetsim(
        (const char *[]){ "report", o, "--by", "protocol.name", "--names", path, NULL });
    ck_assert_msg(res.status == 2 && strstr(res.err, "line 100002: the key \"key77\"") != NULL,
                  "exit %d\n%s", res.status, res.err);
    enum {
        L = 20000
    };
    const char **args = calloc(2 * L + 8, sizeof(*args));
    char **labels = calloc(L, sizeof(*labels));
    ck_assert(args != NULL && labels != NULL);
    size_t a = 0;
    args[a++] = "report";
    args[a++] = o;
    args[a++] = "--by";
    args[a++] = "protocol.name";
    for (int i = 0; i < L; i++) {
        labels[i] = malloc(32);
        ck_assert_ptr_nonnull(labels[i]);
        snprintf(labels[i], 32, "k%d=K%d", i, i);
        args[a++] = "--label";
        args[a++] = labels[i];
    }
    args[a] = NULL;
    t0 = harness_children_cpu_s();
    res = harness_hetsim(args);
    cpu = harness_children_cpu_s() - t0;
    ck_assert_msg(res.status == 0, "exit %d\n%s", res.status, res.err);
    ck_assert_msg(cpu < 3.0, "%d --labels: %.2f s of CPU", L, cpu);
    for (int i = 0; i < L; i++)
        free(labels[i]);
    free(labels);
    free(args);
    harness_cleanup(dir);
}
END_TEST

/* ---- Encoding oddities -------------------------------------------------------------------- */

/* A display name's key that opens or ends with an invisible character or a space other than
 * U+0020 names no value, as one with a plain space at either end, which was refused for that:
 * a --names file made by `cat a.txt b.txt`, b.txt opening with a byte-order mark, mapped
 * "\ufeffdpsgd" and the table showed dpsgd under its own name, exit 0; so did a --label whose
 * key ended with a zero width space or opened with a no-break space. Refused now, naming the
 * line, exit 2; the text shown may still hold them. */
START_TEST(a_display_names_key_with_an_invisible_end_is_refused)
{
    char *dir = harness_tmpdir("probe43");
    char sw[600], o[600], path[700];
    harness_sweep_in(dir, harness_quick_json, harness_protocols_sweep, sw, o, sizeof(sw));
    harness_write(dir, "names.txt",
                  "allreduce=AR\n\xef\xbb\xbf"
                  "dpsgd=Ours\n");
    snprintf(path, sizeof(path), "%s/names.txt", dir);
    result res = harness_hetsim((const char *[]){ "report", o, "--by", "protocol.name", "--names",
                                                  path, "--format", "tex", NULL });
    ck_assert_msg(res.status == 2 && strstr(res.err, "names.txt: line 2: ") != NULL &&
                      strstr(res.err, "the key starts with an invisible character") != NULL &&
                      res.out[0] == '\0',
                  "byte-order mark: exit %d\n%s\n%s", res.status, res.out, res.err);
    static const char *const labels[] = {
        "dpsgd\xe2\x80\x8b=Ours", /* a zero width space */
        "\xc2\xa0"
        "dpsgd=Ours",             /* a no-break space */
        "dpsgd\xe3\x80\x80=Ours", /* an ideographic space */
    };
    for (size_t i = 0; i < sizeof(labels) / sizeof(labels[0]); i++) {
        res = harness_hetsim((const char *[]){ "report", o, "--by", "protocol.name", "--label",
                                               labels[i], "--format", "tex", NULL });
        ck_assert_msg(res.status == 2 && strstr(res.err, "invisible character or a space other "
                                                         "than U+0020") != NULL,
                      "%s: exit %d\n%s\n%s", labels[i], res.status, res.out, res.err);
    }
    res = harness_hetsim((const char *[]){ "report", o, "--by", "protocol.name", "--label",
                                           "dpsgd=\xc2\xa0Ours\xe2\x80\x8b", "--format", "tex",
                                           NULL });
    ck_assert_msg(res.status == 0 && strstr(res.out, "Ours") != NULL, "text: exit %d\n%s",
                  res.status, res.err);
    harness_cleanup(dir);
}
END_TEST

/* A space other than U+0020 or an invisible format character outside a string (a no-break
 * space pasted from a web page, a second byte-order mark of two files joined, a zero width
 * space) was "line 1, column 12: invalid JSON", at a column an editor showed as a space or as
 * nothing. Named now, with its code point, at the same line and column, exit 2. */
START_TEST(an_odd_blank_outside_a_json_string_is_named)
{
    static const char *const cases[][2] = {
        { "{\"seed\": 1,\xc2\xa0\"workers\": 2}",
          "line 1, column 12: invalid JSON: U+00A0 (a space other than U+0020) outside a string" },
        { "\xef\xbb\xbf\xef\xbb\xbf{\"seed\": 1}",
          "line 1, column 1: invalid JSON: U+FEFF (a byte-order mark) outside a string" },
        { "{\"seed\": 1\n \xe2\x80\x8b}",
          "line 2, column 2: invalid JSON: U+200B (an invisible format character) outside a "
          "string" },
        { "{\"seed\":\xe3\x80\x80 1}",
          "line 1, column 9: invalid JSON: U+3000 (a space other than U+0020) outside a string" },
    };
    char *dir = harness_tmpdir("probe43");
    char path[700];
    snprintf(path, sizeof(path), "%s/s.json", dir);
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        harness_write(dir, "s.json", cases[i][0]);
        result res = harness_hetsim((const char *[]){ "validate", path, NULL });
        ck_assert_msg(res.status == 2 && strstr(res.err, cases[i][1]) != NULL, "%zu: exit %d\n%s",
                      i, res.status, res.err);
    }
    /* Any other character there is still "invalid JSON", as it was. */
    harness_write(dir, "s.json", "{\"seed\": 1, x}");
    result res = harness_hetsim((const char *[]){ "validate", path, NULL });
    ck_assert_msg(res.status == 2 && strstr(res.err, "line 1, column 13: invalid JSON\n") != NULL,
                  "x: exit %d\n%s", res.status, res.err);
    harness_cleanup(dir);
}
END_TEST

/* ---- Many groups -------------------------------------------------------------------------- */

/* A paper figure (--size) keeps its size, so its legend's rows take the room of the curves'
 * three panels: 40 groups at --size column (3.5 x 5.2 in, one legend column) drew the panels
 * on top of each other above a legend running off the figure, and 600 (the screen figure's
 * limit) did, exit 0. Refused now before anything is written, naming the most that fit (24:
 * each panel at least 2 lines tall) and the ways out; a taller --size draws them. */
START_TEST(a_paper_figure_too_small_for_its_legend_is_refused_first)
{
    char *dir = harness_tmpdir("probe43");
    char o[600], figs[700], grid[1024];
    size_t len = (size_t)snprintf(grid, sizeof(grid), "{\"workload.lr\": [");
    for (int i = 1; i <= 25; i++)
        len += (size_t)snprintf(grid + len, sizeof(grid) - len, "%s0.%03d", i > 1 ? ", " : "", i);
    snprintf(grid + len, sizeof(grid) - len, "]}");
    harness_write(dir, "s.json", harness_small_json);
    result res = harness_sweep_grid(dir, grid, o, sizeof(o));
    ck_assert_msg(res.status == 0, "sweep: exit %d\n%s", res.status, res.err);
    snprintf(figs, sizeof(figs), "%s/figs", dir);
    res = harness_hetsim(
        (const char *[]){ "plot", o, "--by", "workload.lr", "--size", "column", "-o", figs, NULL });
    ck_assert_msg(res.status == 2 &&
                      strstr(res.err, "25 groups of workload.lr, and a 3.5 x 5.2 in figure of the "
                                      "curves holds the legend of at most 24") != NULL &&
                      !harness_exists(figs),
                  "column: exit %d\n%s", res.status, res.err);
    res = harness_hetsim(
        (const char *[]){ "plot", o, "--by", "workload.lr", "--size", "3.5x8", "-o", figs, NULL });
    ck_assert_msg(res.status == 0, "3.5x8: exit %d\n%s", res.status, res.err);
    harness_cleanup(dir);
}
END_TEST

/* `text` as UTF-16LE with its byte-order mark into dir/name (ASCII text only). */
static void write_utf16(const char *dir, const char *name, const char *text)
{
    char path[700];
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    ck_assert_ptr_nonnull(f);
    fputs("\xff\xfe", f);
    for (const char *c = text; *c != '\0'; c++) {
        fputc(*c, f);
        fputc(0, f);
    }
    ck_assert_int_eq(fclose(f), 0);
}

/* A file saved as UTF-16 (Windows PowerShell 5's `>`, a spreadsheet's "Unicode text") was "line
 * 1, column 4: unexpected NUL byte" (a scenario, a sweep file) or "line 1: a NUL byte" (an
 * index.csv, a --names file): named now as UTF-16, with the fix, exit 2. */
START_TEST(a_utf16_file_is_named_as_such)
{
    static const char want[] = "UTF-16 or UTF-32 text (a UTF-16 or UTF-32 byte-order mark opens "
                               "the file): hetsim reads UTF-8 (save the file as UTF-8)";
    char *dir = harness_tmpdir("probe43");
    char sw[600], o[600], path[700];
    harness_sweep_in(dir, harness_quick_json, harness_protocols_sweep, sw, o, sizeof(sw));
    write_utf16(dir, "u.json", harness_quick_json);
    snprintf(path, sizeof(path), "%s/u.json", dir);
    result res = harness_hetsim((const char *[]){ "validate", path, NULL });
    ck_assert_msg(res.status == 2 && strstr(res.err, "u.json: line 1, column 1: UTF-16") != NULL &&
                      strstr(res.err, want) != NULL,
                  "scenario: exit %d\n%s", res.status, res.err);
    write_utf16(dir, "usw.json", harness_protocols_sweep);
    snprintf(path, sizeof(path), "%s/usw.json", dir);
    res = harness_hetsim((const char *[]){ "sweep", path, "--list", NULL });
    ck_assert_msg(res.status == 2 && strstr(res.err, want) != NULL, "sweep: exit %d\n%s",
                  res.status, res.err);
    write_utf16(dir, "names.txt", "dpsgd=Ours\n");
    snprintf(path, sizeof(path), "%s/names.txt", dir);
    res = harness_hetsim(
        (const char *[]){ "report", o, "--by", "protocol.name", "--names", path, NULL });
    ck_assert_msg(res.status == 2 && strstr(res.err, "names.txt: UTF-16") != NULL,
                  "names: exit %d\n%s", res.status, res.err);
    char *index = harness_slurp(o, "index.csv");
    write_utf16(o, "index.csv", index);
    free(index);
    res = harness_hetsim((const char *[]){ "report", o, "--by", "protocol.name", NULL });
    ck_assert_msg(res.status == 2 && strstr(res.err, "index.csv: UTF-16") != NULL,
                  "index.csv: exit %d\n%s", res.status, res.err);
    harness_cleanup(dir);
}
END_TEST

/* The same for a layer profile, a straggler trace and a --style copy, which were "p.csv:1: NUL
 * byte", "line 1: a NUL byte" and "--style: DIR/convergence.gp: a NUL byte (a gnuplot script is
 * text)", exit 2: named as UTF-16 now. */
START_TEST(a_utf16_profile_trace_or_style_copy_is_named_as_such)
{
    char *dir = harness_tmpdir("probe43");
    char s[700], r[700], st[700], p[700];
    write_utf16(dir, "p.csv", "name,params,forward_flops\nfc,1000,2000\n");
    write_utf16(dir, "tr.csv", "time_s,worker,slowdown\n0,0,1.5\n");
    static const char *const scenarios[] = {
        "{\"seed\": 5, \"workers\": 3, \"compute\": {\"profile\": \"p.csv\", \"gflops\": 100},\n"
        " \"workload\": {\"model\": {\"name\": \"none\"}}, \"protocol\": {\"name\": "
        "\"allreduce\"},\n"
        " \"stop\": {\"time_s\": 0.2}}\n",
        "{\"seed\": 5, \"workers\": 3, \"compute\": {\"iteration_ms\": 10},\n"
        " \"stragglers\": [{\"kind\": \"trace\", \"file\": \"tr.csv\"}],\n"
        " \"workload\": {\"model\": {\"name\": \"none\"}, \"message_bytes\": 4000},\n"
        " \"protocol\": {\"name\": \"allreduce\"}, \"stop\": {\"time_s\": 0.2}}\n",
    };
    static const char *const files[] = { "p.csv: UTF-16 or UTF-32 text",
                                         "tr.csv: $.stragglers[0].file: UTF-16 or UTF-32 text" };
    for (int c = 0; c < 2; c++) {
        harness_write(dir, "s.json", scenarios[c]);
        snprintf(s, sizeof(s), "%s/s.json", dir);
        result res = harness_hetsim((const char *[]){ "validate", s, NULL });
        ck_assert_msg(res.status == 2 && strstr(res.err, files[c]) != NULL, "%s: exit %d\n%s",
                      files[c], res.status, res.err);
    }
    harness_run_in(dir, harness_quick_json, s, r, sizeof(s));
    snprintf(st, sizeof(st), "%s/st", dir);
    snprintf(p, sizeof(p), "%s/p", dir);
    ck_assert_int_eq(mkdir(st, 0777), 0);
    write_utf16(st, "convergence.gp", "set output out\n");
    result res = harness_hetsim((const char *[]){ "plot", r, "--style", st, "-o", p, NULL });
    ck_assert_msg(res.status == 2 &&
                      strstr(res.err, "convergence.gp: UTF-16 or UTF-32 text") != NULL,
                  "--style: exit %d\n%s", res.status, res.err);
    harness_cleanup(dir);
}
END_TEST

/* A --where whose value no run has named no filter: `--where 'protocol.name=dpsgd<U+200B>'`
 * (a zero width space pasted in, invisible on the screen) said only "no runs with results pass
 * the --where filters (0 without results, 4 filtered out)", exit 2. The filter is named now,
 * its invisible character escaped. */
START_TEST(a_where_filter_matching_no_run_is_named)
{
    char *dir = harness_tmpdir("probe43");
    char sw[600], o[600];
    harness_sweep_in(dir, harness_quick_json, harness_protocols_sweep, sw, o, sizeof(sw));
    result res = harness_hetsim((const char *[]){ "report", o, "--by", "protocol.name", "--where",
                                                  "protocol.name=dpsgd\xe2\x80\x8b", NULL });
    ck_assert_msg(res.status == 2 &&
                      strstr(res.err, "no runs with results pass the --where filters: no run "
                                      "with results has protocol.name=dpsgd\\u200b") != NULL,
                  "exit %d\n%s", res.status, res.err);
    res = harness_hetsim((const char *[]){ "report", o, "--by", "protocol.name", "--where",
                                           "protocol.name=dpsgd", "--where", "seed=7", NULL });
    ck_assert_msg(res.status == 2 && strstr(res.err, "no run with results has seed=7") != NULL,
                  "seed: exit %d\n%s", res.status, res.err);
    harness_cleanup(dir);
}
END_TEST

Suite *test_suite(void)
{
    Suite *s = suite_create("probe43");
    TCase *linear = tcase_create("linear");
    tcase_add_test(linear, many_display_names_are_read_in_linear_time);
    tcase_set_timeout(linear, 240);
    suite_add_tcase(s, linear);
    TCase *many = tcase_create("many");
    tcase_add_test(many, a_paper_figure_too_small_for_its_legend_is_refused_first);
    tcase_set_timeout(many, 240);
    suite_add_tcase(s, many);
    TCase *enc = tcase_create("encoding");
    tcase_add_test(enc, a_display_names_key_with_an_invisible_end_is_refused);
    tcase_add_test(enc, an_odd_blank_outside_a_json_string_is_named);
    tcase_add_test(enc, a_utf16_file_is_named_as_such);
    tcase_add_test(enc, a_utf16_profile_trace_or_style_copy_is_named_as_such);
    tcase_add_test(enc, a_where_filter_matching_no_run_is_named);
    tcase_set_timeout(enc, 120);
    suite_add_tcase(s, enc);
    return s;
}
