/* Issue 38's tenth probe, its leftovers of classes 6, 11 and 19 (fix38n): a metrics.csv missing
 * a row; a --names line with spaces around its '='; a --label value holding '='; a run
 * directory about 2,600 bytes deep read by plot; a JSON path of long UTF-8 keys in an error.
 * Every case failed before its fix.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "harness.h"
#include "sim/text.h"

typedef harness_result result;

/* Removes line `n` (1 the header) of the file at `path`, as an edit by hand would. */
static void drop_line(const char *path, size_t n)
{
    size_t len = 0;
    char *text = harness_read(path, &len);
    ck_assert_ptr_nonnull(text);
    char *at = text;
    for (size_t i = 1; i < n && at != NULL; i++)
        at = (at = strchr(at, '\n')) != NULL ? at + 1 : NULL;
    ck_assert_msg(at != NULL && *at != '\0', "%s has no line %zu", path, n);
    char *next = strchr(at, '\n');
    ck_assert_ptr_nonnull(next);
    memmove(at, next + 1, strlen(next + 1) + 1);
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    ck_assert_int_ge(fputs(text, f), 0);
    ck_assert_int_eq(fclose(f), 0);
    free(text);
}

/* Exit 2 and `want` in standard error for hetsim `args`; `what` names the case. */
static void expect_refused(const char *const *args, const char *want, const char *what)
{
    result res = harness_hetsim(args);
    ck_assert_msg(res.status == 2, "%s: exit %d\n%s", what, res.status, res.err);
    ck_assert_msg(strstr(res.err, want) != NULL, "%s: %s", what, res.err);
}

/* A metrics.csv with a middle row removed by hand (rows at 0, 0.05, 0.15, 0.2 s of a run
 * evaluated every 0.05 s) is well formed, its times increasing: report, plot --by and plot RUN
 * drew it, exit 0. Its rows sit on the run's evaluation grid (eval.every_s of run.json, from
 * 0), the last at the run's end (sim_time_s of summary.json): a row removed in the middle, or
 * at the end, is refused naming the file and line, exit 2. */
START_TEST(a_metrics_file_missing_a_row_is_refused)
{
    char *dir = harness_tmpdir("probe16");
    char sw[600], o[600], run[700], last[700], plots[600];
    harness_sweep_in(dir, harness_quick_json,
                     "{\"base\": \"s.json\", \"grid\": {\"protocol.name\": [\"allreduce\", "
                     "\"dpsgd\"]}, \"seeds\": 1}\n",
                     sw, o, sizeof(sw));
    snprintf(run, sizeof(run), "%s/protocol.name=dpsgd,seed=5", o);
    snprintf(last, sizeof(last), "%s/protocol.name=allreduce,seed=5/metrics.csv", o);
    snprintf(plots, sizeof(plots), "%s/plots", dir);
    char metrics[800];
    snprintf(metrics, sizeof(metrics), "%s/metrics.csv", run);
    drop_line(metrics, 4); /* the row at 0.1 s */
    const char *want = "metrics.csv: line 4: time_s 0.15 where the run's evaluations, every 0.05 s";
    expect_refused((const char *[]){ "report", o, "--by", "protocol.name", NULL }, want, "report");
    expect_refused((const char *[]){ "plot", "--by", "protocol.name", o, "-o", plots, NULL }, want,
                   "plot --by");
    expect_refused((const char *[]){ "plot", run, "-o", plots, NULL }, want, "plot RUN");
    ck_assert(!harness_exists(plots));
    drop_line(last, 6); /* the row at 0.2 s, the run's end */
    *strrchr(last, '/') = '\0';
    expect_refused((const char *[]){ "plot", last, "-o", plots, NULL },
                   "metrics.csv: line 5: the last row, at time_s 0.15, is before the run's end, "
                   "sim_time_s 0.2",
                   "plot RUN, the last row removed");
    harness_cleanup(dir);
}
END_TEST

/* A --names line `allreduce = AR` mapped "allreduce " (a space kept before '=') to " AR":
 * it named no value, and report showed All-Reduce, exit 0, as if the line were not there. A
 * key that starts or ends with a space is refused, in a --names file naming it and its line,
 * and in --label, exit 2; the text keeps its spaces ("AR (ours)", and " #2" of probe9). */
START_TEST(a_display_name_with_spaces_around_its_equals_sign_is_refused)
{
    static const struct {
        const char *line, *want;
    } cases[] = {
        { "allreduce = AR\n", "line 2: not FROM=TO" },
        { "allreduce = AR\n", "the key ends with a space" },
        { " allreduce=AR\n", "the key starts with a space" },
    };
    char *dir = harness_tmpdir("probe16");
    char sw[600], o[600], names[600], text[400];
    harness_sweep_in(dir, harness_quick_json,
                     "{\"base\": \"s.json\", \"grid\": {\"protocol.name\": [\"allreduce\", "
                     "\"dpsgd\"]}, \"seeds\": 1}\n",
                     sw, o, sizeof(sw));
    snprintf(names, sizeof(names), "%s/names.txt", dir);
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        snprintf(text, sizeof(text), "# display names\n%s", cases[i].line);
        harness_write(dir, "names.txt", text);
        expect_refused((const char *[]){ "report", o, "--by", "protocol.name", "--names", names,
                                         "--format", "tex", NULL },
                       cases[i].want, cases[i].line);
    }
    expect_refused((const char *[]){ "report", o, "--by", "protocol.name", "--label",
                                     "allreduce =AR", "--format", "tex", NULL },
                   "the key ends with a space", "--label");
    harness_write(dir, "names.txt", "allreduce=AR (ours)\n");
    result res = harness_hetsim((const char *[]){ "report", o, "--by", "protocol.name", "--names",
                                                  names, "--format", "tex", NULL });
    ck_assert_msg(res.status == 0, "%s", res.err);
    ck_assert_msg(strstr(res.out, "AR (ours) &") != NULL, "%s", res.out);
    harness_cleanup(dir);
}
END_TEST

/* --label FROM=TO split at the first '=': `--label 'k=3=K3'` mapped "k" to "3=K3", and the
 * value k=3 (a swept name) could not be named at all, exit 0. A FROM writes '=' as `\=`
 * (index.csv never holds that pair: it writes a backslash as `\\`), and the split is at
 * the first '=' not so escaped: the text after it may hold '=' as before ("H=4"). */
START_TEST(a_display_name_can_name_a_value_holding_an_equals_sign)
{
    char *dir = harness_tmpdir("probe16");
    char sw[600], o[600], names[600];
    harness_sweep_in(dir, harness_quick_json,
                     "{\"base\": \"s.json\", \"grid\": {\"name\": [\"k=3\", \"plain\"]}, "
                     "\"seeds\": 1}\n",
                     sw, o, sizeof(sw));
    result res =
        harness_hetsim((const char *[]){ "report", o, "--by", "name", "--label", "k\\=3=K 3",
                                         "--label", "plain=H=4", "--format", "tex", NULL });
    ck_assert_msg(res.status == 0, "%s", res.err);
    ck_assert_msg(strstr(res.out, "\nK 3 &") != NULL, "%s", res.out);
    ck_assert_msg(strstr(res.out, "\nH=4 &") != NULL, "%s", res.out);
    harness_write(dir, "names.txt", "k\\=3=three\n");
    snprintf(names, sizeof(names), "%s/names.txt", dir);
    res = harness_hetsim(
        (const char *[]){ "report", o, "--by", "name", "--names", names, "--format", "tex", NULL });
    ck_assert_msg(res.status == 0, "%s", res.err);
    ck_assert_msg(strstr(res.out, "\nthree &") != NULL, "%s", res.out);
    harness_cleanup(dir);
}
END_TEST

/* `run -o` takes a path of up to 4,000 bytes (docs/usage.md), but plot RUN refused the run it
 * wrote 2,600 bytes deep: "path too long" (run.json's path held in 2,048 bytes), exit 2; and a
 * message about such a run's metrics.csv named its path cut at 1,023 bytes. The run is drawn,
 * and a row removed from it is refused naming its whole path. */
START_TEST(plot_draws_a_run_written_deep_and_names_its_whole_path)
{
    char *dir = harness_tmpdir("probe16");
    char s[600], r[600], deep[2800], name[201], figs[600], metrics[2900];
    harness_run_in(dir, harness_quick_json, s, r, sizeof(s)); /* s.json */
    memset(name, 'd', 200);
    name[200] = '\0';
    size_t len = (size_t)snprintf(deep, sizeof(deep), "%s", dir);
    for (int i = 0; i < 13; i++)
        len += (size_t)snprintf(deep + len, sizeof(deep) - len, "/%s", name);
    len += (size_t)snprintf(deep + len, sizeof(deep) - len, "/run");
    ck_assert_uint_gt(len, 2600);
    snprintf(figs, sizeof(figs), "%s/figs", dir);
    result res =
        harness_hetsim((const char *[]){ "run", s, "-o", deep, "--quiet", NULL }); /* mkdir -p */
    ck_assert_msg(res.status == 0, "run: exit %d\n%.300s", res.status, res.err);
    res = harness_hetsim((const char *[]){ "plot", deep, "-o", figs, NULL });
    ck_assert_msg(res.status == 0, "plot: exit %d\n%.300s", res.status, res.err);
    ck_assert(harness_exists(figs));
    snprintf(metrics, sizeof(metrics), "%s/metrics.csv", deep);
    drop_line(metrics, 4);
    strcat(metrics, ": line 4: time_s 0.15");
    snprintf(figs, sizeof(figs), "%s/figs2", dir);
    expect_refused((const char *[]){ "plot", deep, "-o", figs, NULL }, metrics, "a row removed");
    ck_assert(!harness_exists(figs));
    harness_cleanup(dir);
}
END_TEST

/* True when the n bytes of s are well-formed UTF-8. */
static bool utf8_ok(const char *s, size_t n)
{
    for (size_t i = 0, k; i < n; i += k)
        if ((k = sim_text_utf8_len(s + i)) == 0)
            return false;
    return true;
}

/* An error's JSON path had room for 159 bytes: an unknown key of 200 bytes of "é" was named
 * `$.compute["éé...é` cut at the room's end, with no sign of the cut (its closing `"]` lost,
 * as if the key ended there). A path of up to 511 bytes is held whole; a longer one (a key of
 * 800 bytes) is cut between characters and ends with "...", in a scenario file and from --set. */
START_TEST(an_error_path_is_held_whole_or_cut_with_an_ellipsis)
{
    static const size_t sizes[] = { 100, 400 }; /* "é"s: 200 and 800 bytes */
    char key[1000], set[1100], text[1600], s[600], o[600], want[1100];
    char *dir = harness_tmpdir("probe16");
    harness_write(dir, "s.json", harness_quick_json);
    snprintf(o, sizeof(o), "%s/o", dir);
    for (size_t c = 0; c < 2; c++) {
        key[0] = '\0';
        for (size_t i = 0; i < sizes[c]; i++)
            strcat(key, "\xc3\xa9");
        snprintf(text, sizeof(text),
                 "{\"seed\": 5, \"workers\": 3, \"compute\": {\"iteration_ms\": 10, \"%s\": 1},\n"
                 " \"workload\": {\"model\": {\"name\": \"none\"}, \"message_bytes\": 4000},\n"
                 " \"protocol\": {\"name\": \"allreduce\"}}\n",
                 key);
        harness_write(dir, "e.json", text);
        if (c == 0)
            snprintf(want, sizeof(want), "$.compute[\"%s\"]: unknown key", key);
        else
            snprintf(want, sizeof(want), "\xc3\xa9...: unknown key");
        snprintf(s, sizeof(s), "%s/e.json", dir);
        result res = harness_hetsim((const char *[]){ "validate", s, NULL });
        ck_assert_msg(res.status == 2, "exit %d\n%s", res.status, res.err);
        ck_assert_msg(strstr(res.err, want) != NULL, "case %zu: %s", c, res.err);
        ck_assert_msg(utf8_ok(res.err, strlen(res.err)), "%s", res.err);
        snprintf(s, sizeof(s), "%s/s.json", dir);
        snprintf(set, sizeof(set), "compute.%s=1", key);
        res = harness_hetsim((const char *[]){ "run", s, "--set", set, "-o", o, "--quiet", NULL });
        ck_assert_msg(res.status == 2, "exit %d\n%s", res.status, res.err);
        ck_assert_msg(strstr(res.err, c == 0 ? key : "\xc3\xa9...") != NULL, "--set %zu: %s", c,
                      res.err);
        ck_assert_msg(utf8_ok(res.err, strlen(res.err)), "%s", res.err);
        ck_assert(!harness_exists(o));
    }
    harness_cleanup(dir);
}
END_TEST

Suite *test_suite(void)
{
    Suite *s = suite_create("probe16");
    TCase *reads = tcase_create("reads");
    tcase_add_test(reads, a_metrics_file_missing_a_row_is_refused);
    tcase_add_test(reads, a_display_name_with_spaces_around_its_equals_sign_is_refused);
    tcase_add_test(reads, a_display_name_can_name_a_value_holding_an_equals_sign);
    tcase_add_test(reads, plot_draws_a_run_written_deep_and_names_its_whole_path);
    tcase_add_test(reads, an_error_path_is_held_whole_or_cut_with_an_ellipsis);
    tcase_set_timeout(reads, 120);
    suite_add_tcase(s, reads);
    return s;
}
