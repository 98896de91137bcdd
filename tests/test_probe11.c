/* Issue 38's ninth probe, classes 13-19: a LaTeX table's check of its rows' names, cubic in
 * the rows; plot --by --target drawing a sweep whose point has no run.json; a check seed that
 * fails without its seed or directory named; a figure label cut inside a UTF-8 character; a
 * sweep file's and a network's valid keys listed without their optional keys. Every case failed
 * before its fix.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <check.h>

#include "app/report_state.h"
#include "harness.h"

typedef harness_result result;

/* A softmax on synthetic clusters, 4 workers for 0.5 s: at lr 1000 and momentum 0.99 its
 * loss passes 1000 times its first within 20 iterations (the run diverges). */
static const char learning_json[] =
    "{\"seed\": 5, \"workers\": 4, \"compute\": {\"iteration_ms\": 10},\n"
    " \"workload\": {\"dataset\": {\"name\": \"synthetic\", \"samples\": 2000, \"dim\": 8,\n"
    "   \"classes\": 3}, \"model\": {\"name\": \"softmax\"}, \"batch\": 16, \"lr\": 0.1},\n"
    " \"protocol\": {\"name\": \"allreduce\"}, \"stop\": {\"time_s\": 0.5},\n"
    " \"eval\": {\"every_s\": 0.1}}\n";

/* ---- A LaTeX table's row names ------------------------------------------------------------ */

/* A report of n rows, one --by key, row g's value `vals[g]`. */
static rp_report rows_of(const char **vals, size_t n, app_report_options *o)
{
    rp_report rp;
    memset(&rp, 0, sizeof(rp));
    memset(o, 0, sizeof(*o));
    rp.o = o;
    rp.sel.nby = 1;
    rp.sel.by_key[0] = "workload.lr";
    rp.sel.ngroups = n;
    rp.sel.groups = calloc(n, sizeof(*rp.sel.groups));
    ck_assert_ptr_nonnull(rp.sel.groups);
    for (size_t g = 0; g < n; g++)
        rp.sel.groups[g].value = &vals[g];
    return rp;
}

/* rp_check_tex_names made every row's name again for each earlier row and compared the two:
 * 1,600 rows with --names took 3.1 s, 400 took 0.08 s (cubic with the names' lookups). 40,000
 * rows are checked in well under the case's 10 s now (the build before: timeout). */
START_TEST(many_rows_of_a_tex_table_are_checked_without_comparing_every_pair)
{
    const size_t nrows = 40000;
    char(*text)[16] = calloc(nrows, sizeof(*text));
    const char **vals = calloc(nrows, sizeof(*vals));
    ck_assert(text != NULL && vals != NULL);
    for (size_t g = 0; g < nrows; g++) {
        snprintf(text[g], sizeof(text[g]), "0.%zu", 7919 * g % nrows + 1);
        vals[g] = text[g];
    }
    app_report_options o;
    rp_report rp = rows_of(vals, nrows, &o);
    sim_err err;
    sim_err_clear(&err);
    ck_assert_msg(rp_check_tex_names(&rp, &err) == SIM_OK, "%s", err.msg);
    free(rp.sel.groups);
    free(vals);
    free(text);
}
END_TEST

/* Two names given twice: the pair named is the one the rows' order meets first (rows 900 and
 * 901, not 7 and 3001), as before the check was made linear. */
START_TEST(the_first_pair_of_rows_under_one_name_is_named)
{
    const size_t nrows = 4000;
    char(*text)[16] = calloc(nrows, sizeof(*text));
    const char **vals = calloc(nrows, sizeof(*vals));
    ck_assert(text != NULL && vals != NULL);
    for (size_t g = 0; g < nrows; g++) {
        snprintf(text[g], sizeof(text[g]), "0.%zu", g + 1);
        vals[g] = text[g];
    }
    vals[3001] = vals[7];
    vals[901] = vals[900];
    app_report_options o;
    rp_report rp = rows_of(vals, nrows, &o);
    sim_err err;
    sim_err_clear(&err);
    ck_assert_int_eq(rp_check_tex_names(&rp, &err), SIM_EINVAL);
    ck_assert_msg(strstr(err.msg, "two rows would be named \"0.901\" (0.901 and 0.901)") != NULL,
                  "%s", err.msg);
    free(rp.sel.groups);
    free(vals);
    free(text);
}
END_TEST

/* ---- Incomplete run directories and failing seeds ----------------------------------------- */

/* plot --by reads each run's run.json for its stop target, but with --target it read none: a
 * point whose run.json was removed or emptied was drawn, exit 0, where report and plot --by
 * without --target say it is an incomplete run directory. Refused the same, nothing drawn. */
START_TEST(plot_by_with_a_target_refuses_a_point_without_its_run_json)
{
    char *dir = harness_tmpdir("probe11");
    char s[600], o[600], rj[900], figs[700];
    harness_sweep_in(
        dir, harness_quick_json,
        "{\"base\": \"s.json\", \"grid\": {\"workload.lr\": [0.05, 0.1]}, \"seeds\": 1}\n", s, o,
        sizeof(s));
    snprintf(figs, sizeof(figs), "%s/figs", dir);
    snprintf(rj, sizeof(rj), "%s/workload.lr=0.1,seed=5/run.json", o);
    for (int c = 0; c < 2; c++) {
        if (c == 0) {
            ck_assert_int_eq(unlink(rj), 0);
        } else {
            FILE *f = fopen(rj, "wb");
            ck_assert_ptr_nonnull(f);
            fclose(f);
        }
        result res = harness_hetsim((const char *[]){ "plot", o, "--by", "workload.lr", "--target",
                                                      "0.5", "-o", figs, NULL });
        ck_assert_msg(res.status == 2, "case %d: exit %d\n%s", c, res.status, res.err);
        ck_assert_msg(strstr(res.err, "an incomplete run directory") != NULL, "%s", res.err);
        ck_assert_msg(strstr(res.err, c == 0 ? "no file " : "empty file ") != NULL, "%s", res.err);
        ck_assert(!harness_exists(figs));
    }
    harness_cleanup(dir);
}
END_TEST

/* A check's seed run that failed (a divergence) printed the run's message alone ("worker 3:
 * the training loss ... diverged"), naming neither the seed nor its directory, in an update
 * and in a check; a sweep names its point. Both now say "seed S (DIR): ...", exit 1. */
START_TEST(a_failing_check_seed_is_named_with_its_directory)
{
    char *dir = harness_tmpdir("probe11");
    char s[600], g[600], o[600], want[900];
    harness_write(dir, "s.json", learning_json);
    snprintf(s, sizeof(s), "%s/s.json", dir);
    snprintf(g, sizeof(g), "%s/g", dir);
    snprintf(o, sizeof(o), "%s/o", dir);
    result res = harness_hetsim((const char *[]){ "check", s, "--golden", g, "--update", "--seeds",
                                                  "3", "--set", "workload.lr=1000", "--set",
                                                  "workload.momentum=0.99", NULL });
    ck_assert_msg(res.status == 1, "exit %d\n%s", res.status, res.err);
    snprintf(want, sizeof(want), "hetsim: seed 5 (%s/seed-5): worker ", g);
    ck_assert_msg(strstr(res.err, want) != NULL, "%s", res.err);
    ck_assert_msg(strstr(res.err, "diverged") != NULL, "%s", res.err);
    harness_golden_in(dir, NULL, s, g, sizeof(s));
    res = harness_hetsim((const char *[]){ "check", s, "--golden", g, "-o", o, "--set",
                                           "workload.lr=1000", "--set", "workload.momentum=0.99",
                                           NULL });
    ck_assert_msg(res.status == 1, "exit %d\n%s", res.status, res.err);
    snprintf(want, sizeof(want), "hetsim: seed 8 (%s/seed-8): worker ", o);
    ck_assert_msg(strstr(res.err, want) != NULL, "%s", res.err);
    harness_cleanup(dir);
}
END_TEST

/* ---- Long labels -------------------------------------------------------------------------- */

/* Whether the n bytes at s are whole UTF-8 characters. */
static int utf8_whole(const unsigned char *s, size_t n)
{
    for (size_t i = 0; i < n;) {
        size_t k = s[i] < 0x80 ? 1 : s[i] >= 0xf0 ? 4 : s[i] >= 0xe0 ? 3 : s[i] >= 0xc0 ? 2 : 0;
        if (k == 0 || i + k > n)
            return 0;
        for (size_t j = 1; j < k; j++)
            if ((s[i + j] & 0xc0) != 0x80)
                return 0;
        i += k;
    }
    return 1;
}

/* A --label of 199 bytes (an "a" and 66 euro signs; up to 200 are taken) is cut to a figure's
 * room, but was cut inside a euro sign: breakdown-by-KEY.csv held invalid UTF-8, which pandas
 * refused. Cut before the character that does not fit whole. */
START_TEST(a_long_label_is_cut_between_utf8_characters)
{
    char *dir = harness_tmpdir("probe11");
    char s[600], o[600], figs[700], csv[800], label[300] = "0.05=a";
    for (int i = 0; i < 66; i++)
        strcat(label, "\xe2\x82\xac");
    harness_sweep_in(dir, harness_quick_json,
                     "{\"base\": \"s.json\", \"grid\": {\"workload.lr\": [0.05]}, \"seeds\": 1}\n",
                     s, o, sizeof(s));
    snprintf(figs, sizeof(figs), "%s/figs", dir);
    snprintf(csv, sizeof(csv), "%s/breakdown-by-workload.lr.csv", figs);
    result res = harness_hetsim(
        (const char *[]){ "plot", o, "--by", "workload.lr", "--label", label, "-o", figs, NULL });
    ck_assert_msg(res.status == 0, "%s", res.err);
    size_t n = 0;
    char *text = harness_read(csv, &n);
    ck_assert_ptr_nonnull(text);
    char *row = strchr(text, '\n');
    ck_assert_ptr_nonnull(row);
    size_t len = strcspn(row + 1, ",");
    ck_assert_msg(len > 100 && strncmp(row + 1, label + 5, len) == 0, "%.*s", (int)len, row + 1);
    ck_assert_msg(utf8_whole((const unsigned char *)row + 1, len), "%.*s", (int)len, row + 1);
    free(text);
    /* A byte that leads a character without its continuation bytes (taken whole with the
     * quote after it, it reached gnuplot) is no UTF-8: such a display name is refused
     * (probe12), and in a value drawn it becomes '_', the quote after it made typographic. */
    res = harness_hetsim((const char *[]){ "plot", o, "--by", "workload.lr", "--label",
                                           "0.05=\xc3'x", "-o", figs, NULL });
    ck_assert_msg(res.status == 2, "%s", res.err);
    ck_assert_msg(strstr(res.err, "bytes of UTF-8") != NULL, "%s", res.err);
    harness_cleanup(dir);
}
END_TEST

/* ---- Messages ----------------------------------------------------------------------------- */

/* A sweep file's unknown key is refused with the keys that are valid, but a file without
 * "seeds" listed "base, grid, output": seeds were asked about without being marked read. */
START_TEST(a_sweep_files_unknown_key_lists_seeds_among_the_valid_keys)
{
    char *dir = harness_tmpdir("probe11");
    char s[600];
    harness_sweep_file(
        dir, harness_quick_json,
        "{\"base\": \"s.json\", \"grid\": {\"workload.lr\": [0.05]}, \"sedes\": 3}\n", s,
        sizeof(s));
    result res = harness_hetsim((const char *[]){ "sweep", s, "--list", NULL });
    ck_assert_msg(res.status == 2, "exit %d\n%s", res.status, res.err);
    ck_assert_msg(strstr(res.err, "sw.json: $.sedes: unknown key (valid: base, grid, output, "
                                  "seeds)") != NULL,
                  "%s", res.err);
    harness_cleanup(dir);
}
END_TEST

/* The same in a scenario's network: a misspelt nics_per_host was refused with "valid:
 * topology, bandwidth_gbps, latency_us, overrides", the keys read whether present or not. */
START_TEST(a_misspelt_network_key_lists_the_optional_keys_among_the_valid_ones)
{
    char *dir = harness_tmpdir("probe11");
    char s[600];
    harness_write(dir, "s.json",
                  "{\"seed\": 5, \"workers\": 4, \"network\": {\"nic_per_host\": 2},\n"
                  " \"workload\": {\"model\": {\"name\": \"none\"}, \"message_bytes\": 4000},\n"
                  " \"protocol\": {\"name\": \"allreduce\"}}\n");
    snprintf(s, sizeof(s), "%s/s.json", dir);
    result res = harness_hetsim((const char *[]){ "validate", s, NULL });
    ck_assert_msg(res.status == 2, "exit %d\n%s", res.status, res.err);
    ck_assert_msg(strstr(res.err, "$.network.nic_per_host: unknown key (valid: topology, "
                                  "bandwidth_gbps, latency_us, overrides, fabric, nics_per_host, "
                                  "gpus_per_host, host_fabric, host_fabric_bandwidth_gbps, "
                                  "host_fabric_latency_us)") != NULL,
                  "%s", res.err);
    harness_cleanup(dir);
}
END_TEST

/* localsgd's algorithm and a LIBSVM data set's test_file are read only when given, and were
 * left out of the valid keys of a misspelt one ("valid: name, local_steps"). */
START_TEST(a_misspelt_optional_key_of_a_protocol_or_data_set_is_listed)
{
    static const struct {
        const char *workload, *protocol, *want;
    } cases[] = {
        { "\"model\": {\"name\": \"none\"}, \"message_bytes\": 4000",
          "\"name\": \"localsgd\", \"algoritm\": \"tree\"",
          "$.protocol.algoritm: unknown key (valid: name, local_steps, algorithm)" },
        { "\"model\": {\"name\": \"softmax\"}, \"batch\": 2, \"dataset\": {\"name\": \"libsvm\", "
          "\"file\": \"d.svm\", \"testfile\": \"d.svm\"}",
          "\"name\": \"allreduce\"",
          "$.workload.dataset.testfile: unknown key (valid: name, partition, train_samples, file, "
          "test_file, test_fraction, max_features)" },
    };
    char *dir = harness_tmpdir("probe11");
    char s[600], text[1024];
    harness_write(dir, "d.svm",
                  "0 1:0.5 2:1\n1 1:1.5 2:-1\n0 1:0.25 2:2\n1 1:2 2:-2\n"
                  "0 1:0.75 2:1.5\n1 1:1.25 2:-0.5\n");
    snprintf(s, sizeof(s), "%s/s.json", dir);
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        snprintf(text, sizeof(text),
                 "{\"seed\": 5, \"workers\": 2, \"workload\": {%s}, \"protocol\": {%s}}\n",
                 cases[i].workload, cases[i].protocol);
        harness_write(dir, "s.json", text);
        result res = harness_hetsim((const char *[]){ "validate", s, NULL });
        ck_assert_msg(res.status == 2, "case %zu: exit %d\n%s", i, res.status, res.err);
        ck_assert_msg(strstr(res.err, cases[i].want) != NULL, "%s", res.err);
    }
    harness_cleanup(dir);
}
END_TEST

Suite *test_suite(void)
{
    Suite *s = suite_create("probe11");
    TCase *scale = tcase_create("scale");
    tcase_add_test(scale, many_rows_of_a_tex_table_are_checked_without_comparing_every_pair);
    tcase_add_test(scale, the_first_pair_of_rows_under_one_name_is_named);
    tcase_set_timeout(scale, 10);
    suite_add_tcase(s, scale);
    TCase *runs = tcase_create("runs");
    tcase_add_test(runs, plot_by_with_a_target_refuses_a_point_without_its_run_json);
    tcase_add_test(runs, a_failing_check_seed_is_named_with_its_directory);
    tcase_set_timeout(runs, 120);
    suite_add_tcase(s, runs);
    TCase *messages = tcase_create("messages");
    tcase_add_test(messages, a_long_label_is_cut_between_utf8_characters);
    tcase_add_test(messages, a_sweep_files_unknown_key_lists_seeds_among_the_valid_keys);
    tcase_add_test(messages, a_misspelt_network_key_lists_the_optional_keys_among_the_valid_ones);
    tcase_add_test(messages, a_misspelt_optional_key_of_a_protocol_or_data_set_is_listed);
    tcase_set_timeout(messages, 60);
    suite_add_tcase(s, messages);
    return s;
}
