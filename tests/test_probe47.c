/* Issue 38, leftovers of classes 9 and 12: one scenario spelt two ways ([1, 1, 1] for [1],
 * "stragglers": [] for none, "./t.csv" for "t.csv") is one scenario to a golden's check, to a
 * sweep's grid and to a sweep's resume (the canonical form, sim_scenario_canonical); labels
 * and display names that differ only by Unicode normalization (a precomposed "é" and "e" with
 * a combining accent) are one name on the page. Each case failed before its fix.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <check.h>

#include "harness.h"

typedef harness_result result;

/* harness_quick_json spelt out: three workers of speed 1, no straggler rule. */
static const char spelt_json[] =
    "{\"seed\": 5, \"workers\": 3, \"compute\": {\"iteration_ms\": 10, \"speeds\": [1, 1, 1]},\n"
    " \"stragglers\": [],\n"
    " \"workload\": {\"model\": {\"name\": \"none\"}, \"message_bytes\": 4000},\n"
    " \"protocol\": {\"name\": \"allreduce\"}, \"stop\": {\"time_s\": 0.2},\n"
    " \"eval\": {\"every_s\": 0.05}}\n";

/* A golden of the scenario spelt out, checked with harness_quick_json (the same resolved
 * cluster): "the scenario differs from the golden's (...) in 2 keys: compute.speeds,
 * stragglers", exit 2, for --exact and the statistical check alike. Both pass now; run.json
 * still records the scenario as written (its keys are compared in canonical form). */
START_TEST(a_golden_takes_its_scenario_spelt_otherwise)
{
    char *dir = harness_tmpdir("probe47");
    char s[600], g[600], o[700];
    harness_golden_in(dir, spelt_json, s, g, sizeof(s));
    harness_write(dir, "s.json", harness_quick_json);
    snprintf(o, sizeof(o), "%s/exact", dir);
    result res =
        harness_hetsim((const char *[]){ "check", s, "--golden", g, "--exact", "-o", o, NULL });
    ck_assert_msg(res.status == 0, "--exact: exit %d\n%s%s", res.status, res.out, res.err);
    ck_assert_msg(strstr(res.out, "ok, every output as in") != NULL, "%s", res.out);
    snprintf(o, sizeof(o), "%s/stat", dir);
    res = harness_hetsim(
        (const char *[]){ "check", s, "--golden", g, "--seeds", "3", "-o", o, NULL });
    ck_assert_msg(res.status == 0, "check: exit %d\n%s%s", res.status, res.out, res.err);
    char run[800];
    snprintf(run, sizeof(run), "%s/seed-5", g);
    char *json = harness_slurp(run, "run.json");
    ck_assert_msg(strstr(json, "\"stragglers\": []") != NULL, "%s", json);
    free(json);
    /* Another value is still another scenario. */
    res = harness_hetsim((const char *[]){ "check", s, "--golden", g, "--exact", "-o", o, "--set",
                                           "compute.speeds=[1,2,1]", NULL });
    ck_assert_msg(res.status == 2, "exit %d\n%s", res.status, res.err);
    ck_assert_msg(strstr(res.err, "compute.speeds") != NULL, "%s", res.err);
    harness_cleanup(dir);
}
END_TEST

/* A trace named "t.csv" by the golden's scenario and ".//sub/./.././t.csv" by the checked one
 * (sub a folder): the same file, refused as another scenario (exit 2, "stragglers"). Passes
 * now; ".." is kept in the canonical form (sim_file_clean_path's rule: what it means depends on
 * links), so a check that names the golden's trace through it is refused (probe51). */
START_TEST(a_golden_takes_a_file_spelt_otherwise)
{
    static const char traced[] =
        "{\"seed\": 5, \"workers\": 3, \"compute\": {\"iteration_ms\": 10},\n"
        " \"stragglers\": [{\"kind\": \"trace\", \"file\": \"t.csv\"}],\n"
        " \"workload\": {\"model\": {\"name\": \"none\"}, \"message_bytes\": 4000},\n"
        " \"protocol\": {\"name\": \"allreduce\"}, \"stop\": {\"time_s\": 0.2},\n"
        " \"eval\": {\"every_s\": 0.05}}\n";
    char *dir = harness_tmpdir("probe47");
    char s[600], g[600], o[700], sub[700];
    harness_write(dir, "t.csv", "time_s,worker,slowdown\n0.05,1,2\n");
    snprintf(sub, sizeof(sub), "%s/sub", dir);
    ck_assert(mkdir(sub, 0755) == 0);
    harness_golden_in(dir, traced, s, g, sizeof(s));
    snprintf(o, sizeof(o), "%s/exact", dir);
    result res = harness_hetsim((const char *[]){ "check", s, "--golden", g, "--exact", "-o", o,
                                                  "--set", "stragglers[0].file=.//./t.csv", NULL });
    ck_assert_msg(res.status == 0, "exit %d\n%s%s", res.status, res.out, res.err);
    res = harness_hetsim((const char *[]){ "check", s, "--golden", g, "--exact", "-o", o, "--set",
                                           "stragglers[0].file=./sub/../t.csv", NULL });
    ck_assert_msg(res.status == 2 && strstr(res.err, "stragglers") != NULL, "exit %d\n%s",
                  res.status, res.err);
    harness_cleanup(dir);
}
END_TEST

/* Two grid values that spell one scenario ran the one run twice, under two directories,
 * exit 0. Refused before anything runs, exit 2, naming the key and both values. */
START_TEST(a_grid_of_two_spellings_of_one_value_is_refused)
{
    static const char *const grids[] = {
        "{\"compute.speeds\": [[1], [1, 1, 1]]}",
        "{\"stragglers\": [[], [{\"kind\": \"fixed\", \"workers\": [1], \"slowdown\": 2}]], "
        "\"compute.speeds\": [[2], [2, 2, 2]]}",
    };
    char *dir = harness_tmpdir("probe47");
    char o[700];
    harness_write(dir, "s.json", harness_quick_json);
    for (size_t c = 0; c < sizeof(grids) / sizeof(grids[0]); c++) {
        result res = harness_sweep_grid(dir, grids[c], o, sizeof(o));
        ck_assert_msg(res.status == 2, "case %zu: exit %d\n%s", c, res.status, res.err);
        ck_assert_msg(strstr(res.err, "$.grid: points 0 (") != NULL &&
                          strstr(res.err, "are one run: \"compute.speeds\"") != NULL,
                      "%s", res.err);
        ck_assert_msg(strstr(res.err, c == 0 ? "[1] and [1,1,1]" : "[2] and [2,2,2]") != NULL, "%s",
                      res.err);
        ck_assert(!harness_exists(o));
    }
    harness_cleanup(dir);
}
END_TEST

/* A sweep run again after its base was saved with its keys in another order and respelt
 * (speeds [1, 1, 1], "stragglers": []) ran every point again ("4 run now"): each point's
 * scenario_hash had moved. It keeps its finished points now ("0 run now"), and index.csv
 * still lists their results. */
START_TEST(a_resumed_sweep_keeps_its_points_after_its_base_is_respelt)
{
    static const char respelt[] =
        "{\"eval\": {\"every_s\": 0.05}, \"stop\": {\"time_s\": 0.2},\n"
        " \"protocol\": {\"name\": \"allreduce\"}, \"stragglers\": [],\n"
        " \"workload\": {\"message_bytes\": 4000, \"model\": {\"name\": \"none\"}},\n"
        " \"compute\": {\"speeds\": [1, 1, 1], \"iteration_ms\": 10}, \"workers\": 3, "
        "\"seed\": 5}\n";
    char *dir = harness_tmpdir("probe47");
    char sw[600], o[600];
    harness_sweep_in(dir, harness_quick_json, harness_protocols_sweep, sw, o, sizeof(sw));
    harness_write(dir, "s.json", respelt);
    result res = harness_hetsim((const char *[]){ "sweep", sw, "-o", o, NULL });
    ck_assert_msg(res.status == 0, "exit %d\n%s", res.status, res.err);
    ck_assert_msg(strstr(res.out, "4 points, 0 run now") != NULL, "%s", res.out);
    char *index = harness_slurp(o, "index.csv");
    ck_assert_msg(strstr(index, "missing") == NULL && strstr(index, ",time,") != NULL, "%s", index);
    free(index);
    harness_cleanup(dir);
}
END_TEST

/* The canonical form itself: what is one scenario and what is not. */
START_TEST(the_canonical_form_makes_spellings_of_one_scenario_one)
{
    static const char *const same[][2] = {
        { "{\"compute\": {\"speeds\": [2, 2, 2, 2]}}", "{\"compute\": {\"speeds\": [2]}}" },
        { "{\"compute\": {\"device\": [{\"device\": \"v100\", \"count\": 2}, {\"device\": "
          "\"v100\", \"count\": 3}]}}",
          "{\"compute\": {\"device\": \"v100\"}}" },
        { "{\"compute\": {\"device\": [{\"device\": \"a\", \"count\": 1}, {\"count\": 2, "
          "\"device\": \"a\"}, {\"device\": \"b\", \"count\": 1}]}}",
          "{\"compute\": {\"device\": [{\"device\": \"a\", \"count\": 3}, {\"device\": \"b\", "
          "\"count\": 1}]}}" },
        { "{\"stragglers\": [], \"network\": {\"overrides\": []}}", "{\"network\": {}}" },
        { "{\"compute\": {\"profile\": \"./p.csv\"}}", "{\"compute\": {\"profile\": \"p.csv\"}}" },
        { "{\"compute\": {\"profile\": \"a/../p/./q.csv\"}}",
          "{\"compute\": {\"profile\": \"a/..//p//q.csv\"}}" },
        { "{\"compute\": {\"profile\": \"./x/../resnet\"}}",
          "{\"compute\": {\"profile\": \"x/./../resnet\"}}" },
        { "{\"workload\": {\"dataset\": {\"file\": \"/d/./a/x.svm\"}, \"model\": {\"module\": "
          "\"./m/./net.py\"}}}",
          "{\"workload\": {\"dataset\": {\"file\": \"/d/a//x.svm\"}, \"model\": {\"module\": "
          "\"m/net.py\"}}}" },
        { "{\"stragglers\": [{\"file\": \"../t.csv\"}]}",
          "{\"stragglers\": [{\"file\": \"./../t.csv\"}]}" },
    };
    static const char *const other[][2] = {
        { "{\"compute\": {\"speeds\": [1, 2]}}", "{\"compute\": {\"speeds\": [1]}}" },
        { "{\"compute\": {\"profile\": \"./resnet\"}}",
          "{\"compute\": {\"profile\": \"resnet\"}}" },
        { "{\"compute\": {\"profile\": \"../p.csv\"}}", "{\"compute\": {\"profile\": \"p.csv\"}}" },
        { "{\"stragglers\": [{\"file\": \"/t.csv\"}]}",
          "{\"stragglers\": [{\"file\": \"t.csv\"}]}" },
        { "{\"compute\": {\"device\": [{\"device\": \"a\", \"count\": 1}, {\"device\": \"b\", "
          "\"count\": 1}]}}",
          "{\"compute\": {\"device\": \"a\"}}" },
    };
    harness_canonical_pairs(same, sizeof(same) / sizeof(same[0]), other,
                            sizeof(other) / sizeof(other[0]));
}
END_TEST

/* Display names that differ only by Unicode normalization: "café" with a precomposed "é"
 * (U+00E9) beside "cafe" and a combining acute accent (U+0301), and the Hangul syllable "한"
 * beside its three jamo. plot --by drew two groups named alike and report --format tex printed
 * two rows of one name, exit 0. Both are refused now, exit 2 (names are compared in NFC); a
 * combining mark that composes with nothing ("q" and an accent) is kept, a name of its own. */
START_TEST(display_names_that_differ_only_by_normalization_are_one_name)
{
    static const char *const pairs[][2] = {
        { "caf\xc3\xa9", "cafe\xcc\x81" },
        { "\xed\x95\x9c", "\xe1\x84\x92\xe1\x85\xa1\xe1\x86\xab" },
    };
    char *dir = harness_tmpdir("probe47");
    harness_write(dir, "s.json", harness_small_json);
    char out[600], figs[700], la[64], lb[64];
    result res = harness_sweep_grid(dir, "{\"protocol.name\": [\"allreduce\", \"gossip\"]}", out,
                                    sizeof(out));
    ck_assert_msg(res.status == 0, "sweep: exit %d\n%s", res.status, res.err);
    snprintf(figs, sizeof(figs), "%s/figs", dir);
    for (size_t i = 0; i < sizeof(pairs) / sizeof(pairs[0]); i++) {
        snprintf(la, sizeof(la), "allreduce=%s", pairs[i][0]);
        snprintf(lb, sizeof(lb), "gossip=%s", pairs[i][1]);
        res = harness_hetsim((const char *[]){ "plot", out, "--by", "protocol.name", "--label", la,
                                               "--label", lb, "-o", figs, NULL });
        ck_assert_msg(res.status == 2 && strstr(res.err, "two groups would be drawn as") != NULL,
                      "pair %zu: plot exit %d\n%s", i, res.status, res.err);
        ck_assert_msg(!harness_exists(figs), "pair %zu: figures drawn", i);
        res = harness_hetsim((const char *[]){ "report", out, "--by", "protocol.name", "--label",
                                               la, "--label", lb, "--format", "tex", NULL });
        ck_assert_msg(res.status == 2 && strstr(res.err, "two rows would be named") != NULL,
                      "pair %zu: report exit %d\n%s%s", i, res.status, res.out, res.err);
    }
    res = harness_hetsim((const char *[]){ "report", out, "--by", "protocol.name", "--label",
                                           "allreduce=q", "--label", "gossip=q\xcc\x81", "--format",
                                           "tex", NULL });
    ck_assert_msg(res.status == 0, "a combining mark: exit %d\n%s", res.status, res.err);
    /* One key mapped twice, spelt composed then decomposed: refused as a key mapped twice. */
    res = harness_hetsim((const char *[]){ "report", out, "--by", "protocol.name", "--label",
                                           "caf\xc3\xa9=A", "--label", "cafe\xcc\x81=B", NULL });
    ck_assert_msg(res.status == 2 && strstr(res.err, "a display name twice") != NULL,
                  "a key mapped twice: exit %d\n%s", res.status, res.err);
    harness_cleanup(dir);
}
END_TEST

Suite *test_suite(void)
{
    Suite *s = suite_create("probe47");
    TCase *golden = tcase_create("golden");
    tcase_add_test(golden, a_golden_takes_its_scenario_spelt_otherwise);
    tcase_add_test(golden, a_golden_takes_a_file_spelt_otherwise);
    tcase_set_timeout(golden, 120);
    suite_add_tcase(s, golden);
    TCase *sweep = tcase_create("sweep");
    tcase_add_test(sweep, a_grid_of_two_spellings_of_one_value_is_refused);
    tcase_add_test(sweep, a_resumed_sweep_keeps_its_points_after_its_base_is_respelt);
    tcase_set_timeout(sweep, 120);
    suite_add_tcase(s, sweep);
    TCase *names = tcase_create("names");
    tcase_add_test(names, display_names_that_differ_only_by_normalization_are_one_name);
    tcase_set_timeout(names, 120);
    suite_add_tcase(s, names);
    TCase *canon = tcase_create("canonical");
    tcase_add_test(canon, the_canonical_form_makes_spellings_of_one_scenario_one);
    suite_add_tcase(s, canon);
    return s;
}
