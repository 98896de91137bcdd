/* Issue 38's tenth probe, classes 7-12 (numbers at their limits, foreign goldens, stalls,
 * damaged results, JSON strings): grid values that differ by a -0 alone; a run's summary.json
 * that does not parse, which let plot RUN draw a row past the run's end; a display name that
 * is no UTF-8; an error's JSON path cut inside a UTF-8 character; an empty --tune-seeds; a
 * bare --set number past a double refused without its cause; a run.json of 0 workers; a
 * golden's control characters written raw in a message. Every case failed before its fix.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <check.h>

#include "harness.h"

typedef harness_result result;

/* A sweep refused two scalar values 0 and -0 (one run directory), but inside an object a
 * number -0 was recorded as -0 by the loader (an integer's was made 0): {"latency_us": 0}
 * and {"latency_us": -0}, or a protocol's bucket_mb or a jitter of 0 and -0.0, ran the one
 * run twice, exit 0, under two run directories. Refused before anything runs, exit 2, naming
 * both points; run.json records -0 as 0. */
START_TEST(grid_values_that_differ_by_a_negative_zero_are_one_run)
{
    static const char *const grids[] = {
        "{\"network\": [{\"latency_us\": 0}, {\"latency_us\": -0}]}",
        "{\"protocol\": [{\"name\": \"allreduce\", \"bucket_mb\": 0}, {\"name\": "
        "\"allreduce\", \"bucket_mb\": -0}]}",
        "{\"compute\": [{\"iteration_ms\": 10, \"jitter_sigma\": -0.0}, {\"iteration_ms\": 10, "
        "\"jitter_sigma\": 0}]}",
    };
    char *dir = harness_tmpdir("probe12");
    char s[600], o[600], run[700];
    harness_write(dir, "s.json", harness_quick_json);
    for (size_t c = 0; c < sizeof(grids) / sizeof(grids[0]); c++) {
        result res = harness_sweep_grid(dir, grids[c], o, sizeof(o));
        ck_assert_msg(res.status == 2, "case %zu: exit %d\n%s", c, res.status, res.err);
        ck_assert_msg(strstr(res.err, "are one run") != NULL, "%s", res.err);
        ck_assert(!harness_exists(o));
    }
    snprintf(s, sizeof(s), "%s/s.json", dir);
    result res = harness_hetsim(
        (const char *[]){ "run", s, "--set", "network.latency_us=-0", "-o", o, "--quiet", NULL });
    ck_assert_msg(res.status == 0, "%s", res.err);
    snprintf(run, sizeof(run), "%s/run.json", o);
    char *json = harness_read(run, NULL);
    ck_assert_ptr_nonnull(json);
    ck_assert_msg(strstr(json, "\"latency_us\": 0,") != NULL, "%s", json);
    free(json);
    harness_cleanup(dir);
}
END_TEST

/* plot RUN holds metrics.csv's last row to sim_time_s in the run's summary.json, but read a
 * summary.json that does not parse as none at all: a row appended at 99 s to a 0.2 s run with
 * its summary.json cut mid-file (or its sim_time_s a string, or left out) was drawn, exit 0
 * (report and plot --by refuse such a summary.json by its index.csv row). Each is refused,
 * exit 2, naming summary.json, nothing drawn; without a summary.json (a run written by hand)
 * the figures are drawn as before. */
START_TEST(a_summary_json_that_does_not_parse_is_refused_by_plot)
{
    static const char *const summaries[][2] = {
        { "{\n  \"name\": \"s\",\n  \"sim_time_s\": 0.2", "unexpected end of file" },
        { "{\"name\": \"s\", \"sim_time_s\": \"0.2\"}\n", "$.sim_time_s: must be a number" },
        { "{\"name\": \"s\"}\n", "$.sim_time_s: missing" },
    };
    char *dir = harness_tmpdir("probe12");
    char s[600], run[600], figs[600], path[700];
    harness_write(dir, "s.json", harness_quick_json);
    snprintf(s, sizeof(s), "%s/s.json", dir);
    snprintf(run, sizeof(run), "%s/run", dir);
    snprintf(figs, sizeof(figs), "%s/figs", dir);
    result res = harness_hetsim((const char *[]){ "run", s, "-o", run, "--quiet", NULL });
    ck_assert_msg(res.status == 0, "%s", res.err);
    snprintf(path, sizeof(path), "%s/metrics.csv", run);
    FILE *f = fopen(path, "ab");
    ck_assert_ptr_nonnull(f);
    fputs("99,9999,99999,,,,,,4800\n", f);
    fclose(f);
    for (size_t c = 0; c < sizeof(summaries) / sizeof(summaries[0]); c++) {
        harness_write(run, "summary.json", summaries[c][0]);
        res = harness_hetsim((const char *[]){ "plot", run, "-o", figs, NULL });
        ck_assert_msg(res.status == 2, "case %zu: exit %d\n%s", c, res.status, res.err);
        ck_assert_msg(strstr(res.err, "run/summary.json: ") != NULL, "%s", res.err);
        ck_assert_msg(strstr(res.err, summaries[c][1]) != NULL, "%s", res.err);
        ck_assert(!harness_exists(figs));
    }
    snprintf(path, sizeof(path), "%s/summary.json", run);
    ck_assert_int_eq(unlink(path), 0);
    res = harness_hetsim((const char *[]){ "plot", run, "-o", figs, NULL });
    ck_assert_msg(res.status == 0, "%s", res.err);
    harness_cleanup(dir);
}
END_TEST

/* True when the n bytes at s are well-formed UTF-8 (a check of its own, not hetsim's). */
static bool utf8_ok(const char *s, size_t n)
{
    const unsigned char *p = (const unsigned char *)s;
    for (size_t i = 0; i < n;) {
        size_t k = p[i] < 0x80             ? 1
                   : (p[i] & 0xe0) == 0xc0 ? 2
                   : (p[i] & 0xf0) == 0xe0 ? 3
                   : (p[i] & 0xf8) == 0xf0 ? 4
                                           : 0;
        if (k == 0 || (k > 1 && p[i] < 0xc2) || i + k > n)
            return false;
        for (size_t j = 1; j < k; j++)
            if ((p[i + j] & 0xc0) != 0x80)
                return false;
        i += k;
    }
    return true;
}

/* A display name went into the bar charts' CSVs as it was given: --label allreduce=$'\xff' (or
 * a --names line holding a byte that is no UTF-8, an overlong form, a surrogate) wrote
 * breakdown-by-KEY.csv with that byte, which pandas.read_csv refused, exit 0. Refused, exit 2,
 * naming the option or the file's line, nothing drawn; a name of whole UTF-8 characters is
 * drawn. */
START_TEST(a_display_name_that_is_no_utf8_is_refused)
{
    static const char *const lines[] = { "dpsgd=\xc3\x28\n", "allreduce=\xed\xa0\x80x\n",
                                         "allreduce=\xc0\xaf\n", "\xff=x\n" };
    char *dir = harness_tmpdir("probe12");
    char s[600], o[600], figs[600], names[600];
    harness_sweep_in(dir, harness_quick_json, harness_protocols_sweep, s, o, sizeof(s));
    snprintf(figs, sizeof(figs), "%s/figs", dir);
    snprintf(names, sizeof(names), "%s/names.txt", dir);
    result res = harness_hetsim((const char *[]){ "plot", o, "--by", "protocol.name", "--label",
                                                  "allreduce=\xff", "-o", figs, NULL });
    ck_assert_msg(res.status == 2, "exit %d\n%s", res.status, res.err);
    ck_assert_msg(strstr(res.err, "bytes of UTF-8") != NULL, "%s", res.err);
    ck_assert(!harness_exists(figs));
    for (size_t c = 0; c < sizeof(lines) / sizeof(lines[0]); c++) {
        harness_write(dir, "names.txt", lines[c]);
        res = harness_hetsim((const char *[]){ "plot", o, "--by", "protocol.name", "--names", names,
                                               "-o", figs, NULL });
        ck_assert_msg(res.status == 2, "case %zu: exit %d\n%s", c, res.status, res.err);
        ck_assert_msg(strstr(res.err, "names.txt: line 1: not FROM=TO") != NULL, "%s", res.err);
        ck_assert(!harness_exists(figs));
    }
    res = harness_hetsim((const char *[]){ "plot", o, "--by", "protocol.name", "--label",
                                           "allreduce=\xe2\x82\xac ours", "-o", figs, NULL });
    ck_assert_msg(res.status == 0, "%s", res.err);
    size_t n = 0;
    char csv[700];
    snprintf(csv, sizeof(csv), "%s/breakdown-by-protocol.name.csv", figs);
    char *text = harness_read(csv, &n);
    ck_assert_ptr_nonnull(text);
    ck_assert_msg(utf8_ok(text, n) && strstr(text, "\xe2\x82\xac ours") != NULL, "%s", text);
    free(text);
    harness_cleanup(dir);
}
END_TEST

/* An error's JSON path has room for 159 bytes: a key of a hundred euro signs, unknown, was
 * named by a path cut between the bytes of a character, and the message on stderr was no
 * UTF-8. Cut before the first character that does not fit whole, in a scenario file and from
 * --set. */
START_TEST(an_error_path_is_cut_between_utf8_characters)
{
    char key[400] = "", set[500], text[900], s[600], o[600];
    for (size_t i = 0; i < 100; i++)
        strcat(key, "\xe2\x82\xac");
    char *dir = harness_tmpdir("probe12");
    snprintf(text, sizeof(text),
             "{\"seed\": 5, \"workers\": 3, \"compute\": {\"iteration_ms\": 10, \"%s\": 1},\n"
             " \"workload\": {\"model\": {\"name\": \"none\"}, \"message_bytes\": 4000},\n"
             " \"protocol\": {\"name\": \"allreduce\"}}\n",
             key);
    harness_write(dir, "euro.json", text);
    harness_write(dir, "s.json", harness_quick_json);
    snprintf(s, sizeof(s), "%s/euro.json", dir);
    result res = harness_hetsim((const char *[]){ "validate", s, NULL });
    ck_assert_msg(res.status == 2, "exit %d\n%s", res.status, res.err);
    ck_assert_msg(strstr(res.err, "unknown key") != NULL, "%s", res.err);
    ck_assert_msg(utf8_ok(res.err, strlen(res.err)), "%s", res.err);
    snprintf(s, sizeof(s), "%s/s.json", dir);
    snprintf(o, sizeof(o), "%s/o", dir);
    snprintf(set, sizeof(set), "compute.%s=1", key);
    res = harness_hetsim((const char *[]){ "run", s, "--set", set, "-o", o, "--quiet", NULL });
    ck_assert_msg(res.status == 2, "exit %d\n%s", res.status, res.err);
    ck_assert_msg(strstr(res.err, "unknown key") != NULL, "%s", res.err);
    ck_assert_msg(utf8_ok(res.err, strlen(res.err)), "%s", res.err);
    ck_assert(!harness_exists(o));
    harness_cleanup(dir);
}
END_TEST

/* --tune-seeds "" tuned on no seed: report and plot --by went on as if untuned, exit 0 (a
 * trailing comma, "5,", was read as "5", and ",5" refused). Each is refused, exit 2, nothing
 * printed or drawn; "5,6" is read. */
START_TEST(an_empty_tune_seeds_list_is_refused)
{
    static const char *const lists[] = { "", "5,", "5,,6" };
    char *dir = harness_tmpdir("probe12");
    char s[600], o[600], figs[600];
    harness_sweep_in(dir, harness_quick_json,
                     "{\"base\": \"s.json\", \"grid\": {\"protocol.name\": [\"allreduce\", "
                     "\"dpsgd\"], \"workload.message_bytes\": [4000, 8000]}, \"seeds\": 3}\n",
                     s, o, sizeof(s));
    snprintf(figs, sizeof(figs), "%s/figs", dir);
    result res;
    for (size_t c = 0; c < sizeof(lists) / sizeof(lists[0]); c++) {
        res = harness_hetsim((const char *[]){ "report", o, "--by", "protocol.name", "--best-over",
                                               "workload.message_bytes", "--tune-seeds", lists[c],
                                               NULL });
        ck_assert_msg(res.status == 2, "case %zu: exit %d\n%s", c, res.status, res.err);
        ck_assert_msg(strstr(res.err, "--tune-seeds takes seeds") != NULL, "%s", res.err);
        ck_assert_msg(res.out[0] == '\0', "%s", res.out);
        res = harness_hetsim((const char *[]){ "plot", o, "--by", "protocol.name", "--best-over",
                                               "workload.message_bytes", "--tune-seeds", lists[c],
                                               "-o", figs, NULL });
        ck_assert_msg(res.status == 2, "case %zu: exit %d\n%s", c, res.status, res.err);
        ck_assert(!harness_exists(figs));
    }
    res = harness_hetsim((const char *[]){ "report", o, "--by", "protocol.name", "--best-over",
                                           "workload.message_bytes", "--tune-seeds", "5,6", NULL });
    ck_assert_msg(res.status == 0, "%s", res.err);
    harness_cleanup(dir);
}
END_TEST

/* A bare --set value that is no JSON number is taken as text: --set workload.lr=1e-400 (too
 * small for a double: JSON's number, cJSON's 0) was refused as "must be a number in [0, 1000],
 * got \"1e-400\"", a value within the range, naming no cause (a file's 1e-400 is named at its
 * line and column). The cause is said after the text; a key that takes a string takes it. */
START_TEST(a_bare_set_number_past_a_double_names_its_cause)
{
    static const char *const sets[][2] = {
        { "workload.lr=1e-400", "got \"1e-400\": 1e-400 is too small for a double (read as 0)" },
        { "workload.lr=1.7976931348623159e308", "is too large for a double (read as infinity)" },
        { "workers=08", "got \"08\": 08 is not a JSON number" },
    };
    char *dir = harness_tmpdir("probe12");
    char s[600], o[600];
    harness_write(dir, "s.json", harness_quick_json);
    snprintf(s, sizeof(s), "%s/s.json", dir);
    snprintf(o, sizeof(o), "%s/o", dir);
    for (size_t c = 0; c < sizeof(sets) / sizeof(sets[0]); c++) {
        result res = harness_hetsim(
            (const char *[]){ "run", s, "--set", sets[c][0], "-o", o, "--quiet", NULL });
        ck_assert_msg(res.status == 2, "case %zu: exit %d\n%s", c, res.status, res.err);
        ck_assert_msg(strstr(res.err, sets[c][1]) != NULL, "%s", res.err);
        ck_assert(!harness_exists(o));
    }
    result res = harness_hetsim(
        (const char *[]){ "run", s, "--set", "name=1e-400", "-o", o, "--quiet", NULL });
    ck_assert_msg(res.status == 0, "%s", res.err);
    harness_cleanup(dir);
}
END_TEST

/* workers.csv must have a row per worker of its run.json's scenario.workers, but a count that
 * was no integer >= 1 counted as none: a run.json edited to "workers": 0 (or -0, or 1e300) let
 * report, plot --by and plot RUN read the three rows of workers.csv, exit 0. Refused, exit 2,
 * naming run.json, nothing drawn. */
START_TEST(a_run_json_worker_count_of_zero_is_refused)
{
    static const char *const counts[] = { "0", "-0", "1e300" };
    char *dir = harness_tmpdir("probe12");
    char s[600], o[600], figs[600], run[700], text[900];
    harness_sweep_in(dir, harness_quick_json, harness_protocols_sweep, s, o, sizeof(s));
    snprintf(figs, sizeof(figs), "%s/figs", dir);
    snprintf(run, sizeof(run), "%s/protocol.name=dpsgd,seed=6", o);
    result res;
    snprintf(text, sizeof(text), "%s/run.json", run);
    char *json = harness_read(text, NULL);
    ck_assert_ptr_nonnull(json);
    char *at = strstr(json, "\"workers\": 3,");
    ck_assert_ptr_nonnull(at);
    for (size_t c = 0; c < sizeof(counts) / sizeof(counts[0]); c++) {
        snprintf(text, sizeof(text), "%.*s\"workers\": %s,%s", (int)(at - json), json, counts[c],
                 at + strlen("\"workers\": 3,"));
        harness_write(run, "run.json", text);
        const char *const *cmds[] = {
            (const char *[]){ "report", o, "--by", "protocol.name", NULL },
            (const char *[]){ "plot", o, "--by", "protocol.name", "-o", figs, NULL },
            (const char *[]){ "plot", run, "-o", figs, NULL },
        };
        for (size_t k = 0; k < 3; k++) {
            res = harness_hetsim(cmds[k]);
            ck_assert_msg(res.status == 2, "%s, command %zu: exit %d\n%s", counts[c], k, res.status,
                          res.err);
            ck_assert_msg(strstr(res.err, "run.json: $.scenario.workers: must be an integer") !=
                              NULL,
                          "%s", res.err);
            ck_assert(!harness_exists(figs));
        }
    }
    free(json);
    harness_cleanup(dir);
}
END_TEST

/* True when s holds no control character but line ends. */
static bool no_controls(const char *s)
{
    for (const unsigned char *p = (const unsigned char *)s; *p != '\0'; p++)
        if ((*p < 0x20 && *p != '\n') || *p == 0x7f)
            return false;
    return true;
}

/* A message quoting a string of a file wrote its control characters as they were: a
 * golden.json whose hetsim_version is "0.1.0\u001b[31m" (or a protocol named so by --set)
 * sent the terminal that escape sequence on stderr (and a "\n" broke the message's line),
 * where a value described by the loader is escaped ("got \"a\u001b[31mb\""). Every message
 * writes them as JSON escapes them, exit 2 as before. */
START_TEST(a_message_writes_a_files_control_characters_escaped)
{
    char *dir = harness_tmpdir("probe12");
    char s[600], g[600], o[600], gj[700];
    harness_golden_in(dir, harness_quick_json, s, g, sizeof(s));
    snprintf(o, sizeof(o), "%s/o", dir);
    snprintf(gj, sizeof(gj), "%s/golden.json", g);
    char *text = harness_read(gj, NULL);
    ck_assert_ptr_nonnull(text);
    char *at = strstr(text, "\"0.1.0\"");
    ck_assert_ptr_nonnull(at);
    char edited[1200];
    snprintf(edited, sizeof(edited), "%.*s\"0.1.0\\u0001\\u001b[31m\\nx\"%s", (int)(at - text),
             text, at + strlen("\"0.1.0\""));
    harness_write(g, "golden.json", edited);
    free(text);
    result res = harness_hetsim((const char *[]){ "check", s, "--golden", g, "-o", o, NULL });
    ck_assert_msg(res.status == 2, "exit %d\n%s", res.status, res.err);
    ck_assert_msg(strstr(res.err, "golden.json says 0.1.0\\u0001\\u001b[31m\\u000ax (seeds") !=
                      NULL,
                  "%s", res.err);
    ck_assert_msg(no_controls(res.err), "%s", res.err);
    res = harness_hetsim((const char *[]){ "run", s, "--set", "protocol.name=\"a\\u001b[31mb\"",
                                           "-o", o, "--quiet", NULL });
    ck_assert_msg(res.status == 2, "exit %d\n%s", res.status, res.err);
    ck_assert_msg(strstr(res.err, "unknown protocol \"a\\u001b[31mb\"") != NULL, "%s", res.err);
    ck_assert_msg(no_controls(res.err), "%s", res.err);
    ck_assert(!harness_exists(o));
    harness_cleanup(dir);
}
END_TEST

Suite *test_suite(void)
{
    Suite *s = suite_create("probe12");
    TCase *sums = tcase_create("sums");
    tcase_add_test(sums, grid_values_that_differ_by_a_negative_zero_are_one_run);
    tcase_set_timeout(sums, 60);
    suite_add_tcase(s, sums);
    TCase *results = tcase_create("results");
    tcase_add_test(results, a_summary_json_that_does_not_parse_is_refused_by_plot);
    tcase_add_test(results, a_run_json_worker_count_of_zero_is_refused);
    tcase_set_timeout(results, 60);
    suite_add_tcase(s, results);
    TCase *json = tcase_create("json");
    tcase_add_test(json, a_display_name_that_is_no_utf8_is_refused);
    tcase_add_test(json, an_error_path_is_cut_between_utf8_characters);
    tcase_add_test(json, an_empty_tune_seeds_list_is_refused);
    tcase_add_test(json, a_bare_set_number_past_a_double_names_its_cause);
    tcase_set_timeout(json, 60);
    suite_add_tcase(s, json);
    TCase *golden = tcase_create("golden");
    tcase_add_test(golden, a_message_writes_a_files_control_characters_escaped);
    tcase_set_timeout(golden, 60);
    suite_add_tcase(s, golden);
    return s;
}
