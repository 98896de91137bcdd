/* Issue 38, fourteenth probe, classes 7-12 (probe38y). A scenario number one ulp past a bound
 * that the scenario's time and range readers check (stop.time_s 1000000000.0000001, a
 * recovery 0.5000000000000001 after a failure at 0.5) was refused as "must be at most
 * 1000000000, got 1000000000" or "must be at least 1 ns greater than 0.5, got 0.5": both
 * printed with %.15g, the value shown as the bound it passes. A --set or grid path's index
 * written with a leading zero (stragglers[01]) was read as stragglers[1], so that a sweep
 * over both "stragglers[1].bandwidth_factor" [0.5] and "stragglers[01].bandwidth_factor"
 * [0.1] ran 0.1 and its report showed 0.5 under stragglers[1].bandwidth_factor, exit 0 (the
 * same path given twice, as "$.workload.lr" beside "workload.lr" is refused). A scenario
 * holding only a byte-order mark (and blanks), as an editor saves an empty file, was "line 1,
 * column 1: invalid JSON" where the empty file is "unexpected end of file", and a blank line
 * after it lost a column: the mark was counted as text. An index.csv whose swept number was
 * respelt by hand (0.05 as 0.050 or 5e-2 on one row) passed the read-back, which compares
 * numbers, and report grouped by the text: one grid value as two rows of one run each,
 * exit 0. A display name holding a C1 control character (U+0080-U+009F: NEL, CSI), which
 * --label and --names refuse as "no control character" for C0 and DEL, went into the TeX
 * table and the figures as it was, exit 0; and a message quoting a key or a string that holds
 * one wrote it raw to the terminal, where C0 controls are escaped ("\u001b"). Every case
 * failed before its fix.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "harness.h"

typedef harness_result result;

static const char base_json[] =
    "{\"name\": \"p28\", \"seed\": 5, \"workers\": 4, \"compute\": {\"iteration_ms\": 20},"
    " \"workload\": {\"dataset\": {\"name\": \"synthetic\"}, \"model\": {\"name\": \"softmax\"},"
    " \"batch\": 16, \"lr\": 0.05}, \"protocol\": {\"name\": \"allreduce\"},"
    " \"stop\": {\"time_s\": 1}, \"eval\": {\"every_s\": 1000, \"samples\": 200}}";

/* Each --set passes its bound by the least a double can (the next double after it, as its
 * shortest decimal writes it): refused, exit 2, the message showing the value as written. */
START_TEST(a_value_one_ulp_past_its_bound_is_shown_as_written)
{
    static const struct {
        const char *set, *got;
    } cases[] = {
        { "stop.time_s=1000000000.0000001", "got 1000000000.0000001" },
        { "network.latency_us=1000000000000000.1", "got 1000000000000000.1" },
        { "compute.iteration_ms=1000000000000.0001", "got 1000000000000.0001" },
        { "stragglers=[{\"kind\":\"failure\",\"at_s\":0.5,\"recover_s\":0.5000000000000001}]",
          "got 0.5000000000000001" },
        { "stragglers=[{\"kind\":\"window\",\"from_s\":0.25,\"to_s\":0.25000000000000006,"
          "\"slowdown\":2}]",
          "got 0.25000000000000006" },
    };
    char *dir = harness_tmpdir("probe28");
    harness_write(dir, "s.json", base_json);
    char s[600];
    snprintf(s, sizeof(s), "%s/s.json", dir);
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        result res = harness_hetsim((const char *[]){ "validate", s, "--set", cases[i].set, NULL });
        ck_assert_msg(res.status == 2, "%s: exit %d\n%s", cases[i].set, res.status, res.err);
        ck_assert_msg(strstr(res.err, cases[i].got) != NULL, "%s: no \"%s\" in\n%s", cases[i].set,
                      cases[i].got, res.err);
    }
    harness_cleanup(dir);
}
END_TEST

static const char rules_json[] =
    "{\"name\": \"p28\", \"seed\": 5, \"workers\": 4, \"compute\": {\"iteration_ms\": 20},"
    " \"stragglers\": [{\"kind\": \"fixed\", \"workers\": [1], \"slowdown\": 2},"
    " {\"kind\": \"link\", \"workers\": [2], \"bandwidth_factor\": 0.5}],"
    " \"workload\": {\"dataset\": {\"name\": \"synthetic\"}, \"model\": {\"name\": \"softmax\"},"
    " \"batch\": 16, \"lr\": 0.05}, \"protocol\": {\"name\": \"allreduce\"},"
    " \"stop\": {\"time_s\": 0.2}, \"eval\": {\"every_s\": 0.1, \"samples\": 100}}";

/* An index is written as --update writes a seed, decimal digits without a leading zero:
 * "[01]" and "[007]" are no path (exit 2, nothing run), "[0]" and "[1]" are. */
START_TEST(an_index_with_a_leading_zero_is_no_path)
{
    char *dir = harness_tmpdir("probe28");
    harness_write(dir, "s.json", rules_json);
    char s[600], sweep[700], out[700];
    snprintf(s, sizeof(s), "%s/s.json", dir);
    static const char *const bad[] = { "stragglers[01].bandwidth_factor=0.1",
                                       "stragglers[00].slowdown=3",
                                       "stragglers[1].workers[007]=3" };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        result res = harness_hetsim((const char *[]){ "validate", s, "--set", bad[i], NULL });
        ck_assert_msg(res.status == 2, "%s: exit %d\n%s", bad[i], res.status, res.err);
        ck_assert_msg(strstr(res.err, "invalid path") != NULL, "%s:\n%s", bad[i], res.err);
    }
    result ok = harness_hetsim(
        (const char *[]){ "validate", s, "--set", "stragglers[1].workers[0]=3", NULL });
    ck_assert_msg(ok.status == 0, "[1] and [0]: exit %d\n%s", ok.status, ok.err);
    snprintf(out, sizeof(out), "%s/sw", dir);
    char text[1400];
    snprintf(text, sizeof(text),
             "{\"base\": \"s.json\", \"grid\": {\"stragglers[1].bandwidth_factor\": [0.5],"
             " \"stragglers[01].bandwidth_factor\": [0.1]}, \"seeds\": 1,"
             " \"output\": {\"dir\": \"%s\"}}",
             out);
    harness_write(dir, "sweep.json", text);
    snprintf(sweep, sizeof(sweep), "%s/sweep.json", dir);
    result res = harness_hetsim((const char *[]){ "sweep", sweep, "--quiet", NULL });
    ck_assert_msg(res.status == 2, "sweep: exit %d\n%s", res.status, res.err);
    ck_assert_msg(!harness_exists(out), "the sweep ran");
    harness_cleanup(dir);
}
END_TEST

/* Each file with and without a byte-order mark opening it: the same message. */
START_TEST(a_byte_order_mark_alone_is_an_empty_file)
{
    static const char *const bodies[] = { "", "   ", "  \n ", "{\"name\": \"b\"" };
    char *dir = harness_tmpdir("probe28");
    char s[600], with[8192];
    snprintf(s, sizeof(s), "%s/s.json", dir);
    for (size_t i = 0; i < sizeof(bodies) / sizeof(bodies[0]); i++) {
        harness_write(dir, "s.json", bodies[i]);
        result plain = harness_hetsim((const char *[]){ "validate", s, NULL });
        snprintf(with, sizeof(with), "\xef\xbb\xbf%s", bodies[i]);
        harness_write(dir, "s.json", with);
        result bom = harness_hetsim((const char *[]){ "validate", s, NULL });
        ck_assert_msg(plain.status == 2 && bom.status == 2, "body %zu: exit %d and %d", i,
                      plain.status, bom.status);
        ck_assert_msg(strstr(plain.err, "unexpected end of file") != NULL, "body %zu: %s", i,
                      plain.err);
        ck_assert_msg(strcmp(plain.err, bom.err) == 0, "body %zu:\n%swith a mark:\n%s", i,
                      plain.err, bom.err);
    }
    harness_cleanup(dir);
}
END_TEST

/* A sweep of one lr over two seeds; its index.csv's first row respelt: refused naming the
 * row, the key and the spelling, exit 2, for report and plot --by alike. */
START_TEST(a_swept_value_respelt_in_the_index_is_refused)
{
    static const char *const spellings[] = { ",0.050,", ",5e-2,", ",5.0e-2," };
    char *dir = harness_tmpdir("probe28");
    harness_write(dir, "s.json", base_json);
    char sweep[600], out[600], index[700], text[1200], figs[700];
    snprintf(out, sizeof(out), "%s/sw", dir);
    snprintf(text, sizeof(text),
             "{\"base\": \"s.json\", \"grid\": {\"workload.lr\": [0.05]}, \"seeds\": 2,"
             " \"output\": {\"dir\": \"%s\"}}",
             out);
    harness_write(dir, "sweep.json", text);
    snprintf(sweep, sizeof(sweep), "%s/sweep.json", dir);
    result res = harness_hetsim((const char *[]){ "sweep", sweep, "--quiet", NULL });
    ck_assert_msg(res.status == 0, "sweep: exit %d\n%s", res.status, res.err);
    snprintf(index, sizeof(index), "%s/index.csv", out);
    snprintf(figs, sizeof(figs), "%s/figs", dir);
    size_t n = 0;
    char *orig = harness_read(index, &n);
    char *at = strstr(orig, ",0.05,"); /* the first row's: the header holds no number */
    ck_assert_ptr_nonnull(at);
    for (size_t i = 0; i < sizeof(spellings) / sizeof(spellings[0]); i++) {
        char edited[8192];
        snprintf(edited, sizeof(edited), "%.*s%s%s", (int)(at - orig), orig, spellings[i],
                 at + strlen(",0.05,"));
        harness_write(out, "index.csv", edited);
        res = harness_hetsim((const char *[]){ "report", out, "--by", "workload.lr", NULL });
        ck_assert_msg(res.status == 2, "%s: report exit %d\n%s%s", spellings[i], res.status,
                      res.out, res.err);
        ck_assert_msg(strstr(res.err, "line 2: workload.lr") != NULL &&
                          strstr(res.err, "not as the sweep writes it") != NULL,
                      "%s: %s", spellings[i], res.err);
        res = harness_hetsim(
            (const char *[]){ "plot", out, "--by", "workload.lr", "-o", figs, NULL });
        ck_assert_msg(res.status == 2, "%s: plot exit %d\n%s", spellings[i], res.status, res.err);
        ck_assert_msg(!harness_exists(figs), "%s: figures drawn", spellings[i]);
    }
    harness_write(out, "index.csv", orig);
    res = harness_hetsim((const char *[]){ "report", out, "--by", "workload.lr", NULL });
    ck_assert_msg(res.status == 0, "as written: exit %d\n%s", res.status, res.err);
    free(orig);
    harness_cleanup(dir);
}
END_TEST

/* U+0085 (NEL) and U+009B (CSI) in a --label's key or text and in a --names line: refused as
 * a control character, exit 2, nothing on stdout; U+00A0, the next character, is text. */
START_TEST(a_c1_control_character_is_no_display_name)
{
    char *dir = harness_tmpdir("probe28");
    harness_write(dir, "s.json", base_json);
    char sweep[600], out[600], text[1200], names[700];
    snprintf(out, sizeof(out), "%s/sw", dir);
    snprintf(text, sizeof(text),
             "{\"base\": \"s.json\", \"grid\": {\"protocol.name\": [\"allreduce\"]},"
             " \"seeds\": 2, \"output\": {\"dir\": \"%s\"}}",
             out);
    harness_write(dir, "sweep.json", text);
    snprintf(sweep, sizeof(sweep), "%s/sweep.json", dir);
    result res = harness_hetsim((const char *[]){ "sweep", sweep, "--quiet", NULL });
    ck_assert_msg(res.status == 0, "sweep: exit %d\n%s", res.status, res.err);
    static const char *const bad[] = { "allreduce=a\xc2\x85"
                                       "b",
                                       "allreduce=\xc2\x9b"
                                       "1m",
                                       "all\xc2\x85reduce=AR" };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        res = harness_hetsim((const char *[]){ "report", out, "--by", "protocol.name", "--format",
                                               "tex", "--label", bad[i], NULL });
        ck_assert_msg(res.status == 2 && res.out[0] == '\0', "label %zu: exit %d\n%s", i,
                      res.status, res.out);
        ck_assert_msg(strstr(res.err, "control character") != NULL, "label %zu: %s", i, res.err);
        snprintf(text, sizeof(text), "%s\n", bad[i]);
        harness_write(dir, "names.txt", text);
        snprintf(names, sizeof(names), "%s/names.txt", dir);
        res = harness_hetsim((const char *[]){ "report", out, "--by", "protocol.name", "--format",
                                               "tex", "--names", names, NULL });
        ck_assert_msg(res.status == 2 && strstr(res.err, "control character") != NULL,
                      "names %zu: exit %d\n%s", i, res.status, res.err);
    }
    res = harness_hetsim((const char *[]){ "report", out, "--by", "protocol.name", "--format",
                                           "tex", "--label",
                                           "allreduce=a\xc2\xa0"
                                           "b",
                                           NULL });
    ck_assert_msg(res.status == 0, "U+00A0: exit %d\n%s", res.status, res.err);
    harness_cleanup(dir);
}
END_TEST

/* A scenario key holding U+009B (CSI) then "[31m", and one holding U+0085: the message
 * escapes each as \u009b and \u0085, as it does ESC; and U+00A0, a space a reader takes for U+0020,
 * as \u00a0 (probe37). */
START_TEST(a_message_escapes_c1_control_characters)
{
    static const struct {
        const char *key, *shown;
    } cases[] = {
        { "a\\u009b[31mb", "a\\u009b[31mb" },
        { "\\u0085", "\\u0085" },
        { "x\\u001by", "x\\u001by" },
        { "n\\u00a0b", "n\\u00a0b" }, /* a space that is not U+0020, shown as one (probe37) */
    };
    char *dir = harness_tmpdir("probe28");
    char s[600], text[1400];
    snprintf(s, sizeof(s), "%s/s.json", dir);
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        snprintf(text, sizeof(text), "%.*s, \"%s\": 1}", (int)strlen(base_json) - 1, base_json,
                 cases[i].key);
        harness_write(dir, "s.json", text);
        result res = harness_hetsim((const char *[]){ "validate", s, NULL });
        ck_assert_msg(res.status == 2, "%s: exit %d\n%s", cases[i].key, res.status, res.err);
        ck_assert_msg(strstr(res.err, cases[i].shown) != NULL, "%s: no %s in\n%s", cases[i].key,
                      cases[i].shown, res.err);
        ck_assert_msg(strstr(res.err, "\xc2\x9b") == NULL && strstr(res.err, "\xc2\x85") == NULL,
                      "%s: a C1 control raw in\n%s", cases[i].key, res.err);
    }
    harness_cleanup(dir);
}
END_TEST

Suite *test_suite(void)
{
    Suite *s = suite_create("probe28");
    TCase *limits = tcase_create("limits");
    tcase_add_test(limits, a_value_one_ulp_past_its_bound_is_shown_as_written);
    tcase_set_timeout(limits, 120);
    suite_add_tcase(s, limits);
    TCase *paths = tcase_create("paths");
    tcase_add_test(paths, an_index_with_a_leading_zero_is_no_path);
    tcase_add_test(paths, a_byte_order_mark_alone_is_an_empty_file);
    tcase_set_timeout(paths, 120);
    suite_add_tcase(s, paths);
    TCase *index = tcase_create("index");
    tcase_add_test(index, a_swept_value_respelt_in_the_index_is_refused);
    tcase_set_timeout(index, 120);
    suite_add_tcase(s, index);
    TCase *names = tcase_create("names");
    tcase_add_test(names, a_c1_control_character_is_no_display_name);
    tcase_add_test(names, a_message_escapes_c1_control_characters);
    tcase_set_timeout(names, 120);
    suite_add_tcase(s, names);
    return s;
}
