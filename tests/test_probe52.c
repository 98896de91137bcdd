/* Issue 38, the eighteenth probe, classes 7 to 12 (sums of user numbers, non-finite totals, a
 * golden's consistency, results that depend on eval.every_s or --threads, damaged results
 * files, JSON oddities). Each case failed before its fix.
 */
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "harness.h"
#include "sim/fnv.h"

typedef harness_result result;

static const char base_json[] =
    "{\"seed\": 5, \"workers\": 3, \"compute\": {\"iteration_ms\": 20},"
    " \"workload\": {\"dataset\": {\"name\": \"synthetic\", \"samples\": 400,"
    " \"test_samples\": 50}, \"model\": {\"name\": \"softmax\"}, \"batch\": 8, \"lr\": 0.05},"
    " \"protocol\": {\"name\": \"allreduce\"}, \"stop\": {\"time_s\": 0.2},"
    " \"eval\": {\"every_s\": 0.1, \"samples\": 50}}";

/* text with the first `find` replaced by `by` (which must be there), malloc'd. */
static char *replaced(const char *text, const char *find, const char *by)
{
    const char *at = strstr(text, find);
    ck_assert_msg(at != NULL, "no \"%s\" in\n%s", find, text);
    size_t n = strlen(text) - strlen(find) + strlen(by) + 1;
    char *out = malloc(n);
    ck_assert_ptr_nonnull(out);
    snprintf(out, n, "%.*s%s%s", (int)(at - text), text, by, at + strlen(find));
    return out;
}

/* Writes `text` as DIR/NAME, a golden seed's file, and its line of DIR/fingerprint again with
 * the text's FNV-1a hash, as --update writes it: an edit the fingerprint does not catch. */
static void golden_file(const char *dir, const char *name, const char *text)
{
    harness_write(dir, name, text);
    char *fp = harness_slurp(dir, "fingerprint"), *out = malloc(strlen(fp) + 1);
    ck_assert_ptr_nonnull(out);
    size_t n = strlen(name), len = 0;
    for (const char *line = fp; *line != '\0';) {
        const char *end = strchr(line, '\n');
        size_t l = end != NULL ? (size_t)(end - line) + 1 : strlen(line);
        if (strncmp(line, name, n) == 0 && line[n] == ' ')
            len += (size_t)sprintf(out + len, "%s %016" PRIx64 "\n", name,
                                   sim_fnv_bytes(SIM_FNV_OFFSET, text, strlen(text)));
        else
            len += (size_t)sprintf(out + len, "%.*s", (int)l, line);
        line += l;
    }
    harness_write(dir, "fingerprint", out);
    free(fp);
    free(out);
}

/* A run.json's text with a dataset "file" of 4,000 control characters (each written \u0001)
 * added to its scenario, malloc'd: a key the canonical form spells plainly. */
static char *with_control_file(const char *run)
{
    size_t n = 4000;
    char *by = malloc(6 * n + 64);
    ck_assert_ptr_nonnull(by);
    size_t len = (size_t)sprintf(by, "\"name\": \"synthetic\", \"file\": \"");
    for (size_t i = 0; i < n; i++)
        len += (size_t)sprintf(by + len, "\\u0001");
    sprintf(by + len, "\",");
    char *out = replaced(run, "\"name\": \"synthetic\",", by);
    free(by);
    return out;
}

/* The canonical form wrote a file's path, each control byte as \u00XX (6 bytes), into a
 * buffer of twice the path's room: a path of 4,000 control characters in a golden seed's
 * run.json (its fingerprint written again) overflowed the stack, and check died of SIGSEGV,
 * exit 139; a sweep run again over a point whose run.json held it (its scenario_hash edited,
 * so that the resume compared the canonical scenarios) died the same way. The check now
 * refuses the seed as a run of another scenario, exit 2, naming the key, and the sweep runs
 * that point again, exit 0. */
START_TEST(a_path_of_control_characters_in_a_run_json_is_no_crash)
{
    char *dir = harness_tmpdir("probe52");
    char s[600], g[600], seed[700], o[700];
    harness_golden_in(dir, base_json, s, g, sizeof(s));
    snprintf(seed, sizeof(seed), "%s/seed-5", g);
    snprintf(o, sizeof(o), "%s/o", dir);
    char *run = harness_slurp(seed, "run.json"), *bad = with_control_file(run);
    golden_file(seed, "run.json", bad);
    free(bad);
    free(run);
    result res = harness_hetsim((const char *[]){ "check", s, "--golden", g, "-o", o, NULL });
    ck_assert_msg(res.status == 2 && strstr(res.err, "workload.dataset.file") != NULL,
                  "check: exit %d\n%s", res.status, res.err);

    char sw[600], out[600], point[800];
    harness_sweep_in(dir, NULL, harness_protocols_sweep, sw, out, sizeof(sw));
    snprintf(point, sizeof(point), "%s/protocol.name=allreduce,seed=5", out);
    run = harness_slurp(point, "run.json");
    bad = with_control_file(run);
    char *edited = replaced(bad, "\"scenario_hash\": \"", "\"scenario_hash\": \"0");
    harness_write(point, "run.json", edited);
    free(edited);
    free(bad);
    free(run);
    res = harness_hetsim((const char *[]){ "sweep", sw, "-o", out, "--quiet", NULL });
    ck_assert_msg(res.status == 0, "sweep again: exit %d\n%s", res.status, res.err);
    run = harness_slurp(point, "run.json");
    ck_assert_msg(strstr(run, "\\u0001") == NULL, "the point was not run again:\n%.300s", run);
    free(run);
    harness_cleanup(dir);
}
END_TEST

/* text, a metrics.csv, with the field of column `col` emptied in data row `only` (1: the
 * first), or in every data row when `only` is 0. */
static char *emptied(const char *text, const char *col, size_t only)
{
    size_t c = 0;
    const char *h = text;
    for (const char *at = strstr(text, col); h < at; h++)
        c += *h == ',';
    char *out = malloc(strlen(text) + 1);
    ck_assert_ptr_nonnull(out);
    size_t len = 0, field = 0, row = 0;
    for (const char *p = text; *p != '\0'; p++) {
        if (row > 0 && (only == 0 || row == only) && field == c && *p != ',' && *p != '\n')
            continue;
        out[len++] = *p;
        field = *p == '\n' ? 0 : field + (*p == ',');
        row += *p == '\n';
    }
    out[len] = '\0';
    return out;
}

static const char lr_sweep[] =
    "{\"base\": \"s.json\", \"grid\": {\"workload.lr\": [0.05, 0.1]}, \"seeds\": 2}\n";

/* A run's metrics.csv with its epoch emptied in one row (an evaluation writes the epoch of a
 * run with training data in every row, of one without in none): plot --by workload.lr --x
 * epoch drew the group's curve at x = nan, exit 0 ("plots in ..."); with the epoch emptied in
 * every row beside its summary.json's epochs 0.5, the same. Both are refused now, exit 2,
 * naming the file (and the line); as written the sweep draws. */
START_TEST(a_run_whose_epochs_were_emptied_is_refused)
{
    char *dir = harness_tmpdir("probe52");
    char sw[600], o[600], run[800], figs[700];
    harness_write(dir, "s.json", base_json);
    harness_sweep_in(dir, NULL, lr_sweep, sw, o, sizeof(sw));
    snprintf(run, sizeof(run), "%s/workload.lr=0.1,seed=6", o);
    snprintf(figs, sizeof(figs), "%s/figs", dir);
    const char *const plot[] = {
        "plot", "--by", "workload.lr", o, "-o", figs, "--x", "epoch", NULL
    };
    result res = harness_hetsim(plot);
    ck_assert_msg(res.status == 0, "as written: exit %d\n%s", res.status, res.err);
    char *metrics = harness_slurp(run, "metrics.csv");
    static const size_t rows[] = { 2, 0 };
    static const char *const why[] = { "line 3: epoch: empty, where the run's other rows have one",
                                       "epoch: empty in every row, where" };
    for (size_t k = 0; k < 2; k++) {
        char *bad = emptied(metrics, "epoch", rows[k]);
        harness_write(run, "metrics.csv", bad);
        free(bad);
        snprintf(figs, sizeof(figs), "%s/figs%zu", dir, k);
        res = harness_hetsim(plot);
        ck_assert_msg(res.status == 2 && strstr(res.err, why[k]) != NULL &&
                          strstr(res.err, "metrics.csv") != NULL,
                      "epoch emptied in row %zu: exit %d\n%s", rows[k], res.status, res.err);
    }
    free(metrics);
    harness_cleanup(dir);
}
END_TEST

static const char failure_sweep[] =
    "{\"base\": \"s.json\", \"grid\": {\"stragglers\": [[], [{\"kind\": \"failure\", \"at_s\": "
    "0}]]}, \"seeds\": 2}\n";

/* A speed-up over a mean of 0: the baseline's throughput when every worker of its runs failed
 * at 0 (stalled at 0 s, 0 samples/s). report --baseline printed the other row's speed-up as
 * "inf", exit 0 (a ratio over nothing; with a target, a row whose runs reach it at the first
 * evaluation, at 0 s, was the same); it prints "-" now, the caption saying why, in every
 * format. */
START_TEST(a_speed_up_over_a_mean_of_zero_is_none)
{
    char *dir = harness_tmpdir("probe52");
    char sw[600], o[600];
    harness_write(dir, "s.json", base_json);
    harness_sweep_in(dir, NULL, failure_sweep, sw, o, sizeof(sw));
    static const char *const formats[] = { "md", "csv", "tex" };
    for (size_t f = 0; f < 3; f++) {
        result res = harness_hetsim((const char *[]){
            "report", o, "--by", "stragglers", "--baseline",
            "stragglers=[{\"kind\":\"failure\",\"at_s\":0}]", "--format", formats[f], NULL });
        ck_assert_msg(res.status == 0, "%s: exit %d\n%s", formats[f], res.status, res.err);
        ck_assert_msg(strstr(res.out, "inf") == NULL, "%s: a speed-up of inf\n%s", formats[f],
                      res.out);
        if (f == 0)
            ck_assert_msg(strstr(res.out, "| - |") != NULL &&
                              strstr(res.out, "(none, \"-\", where the baseline's throughput "
                                              "is 0)") != NULL,
                          "no \"-\" and its reason\n%s", res.out);
    }
    harness_cleanup(dir);
}
END_TEST

/* A run's eval.every_s in its run.json edited to 0 (or -0), an interval no run has (a scenario's
 * is at least 1 ns): report printed "evaluations every 0 s or more" under the table, exit 0,
 * and with --target held the run's rows to no grid. Refused now, exit 2, naming the run.json
 * and the key, by report (with and without a target) and plot --by. */
START_TEST(an_evaluation_interval_of_zero_is_refused)
{
    char *dir = harness_tmpdir("probe52");
    char sw[600], o[600], run[800], figs[700];
    harness_write(dir, "s.json", base_json);
    harness_sweep_in(dir, NULL, lr_sweep, sw, o, sizeof(sw));
    snprintf(run, sizeof(run), "%s/workload.lr=0.1,seed=6", o);
    snprintf(figs, sizeof(figs), "%s/figs", dir);
    char *text = harness_slurp(run, "run.json");
    static const char *const zeros[] = { "\"every_s\": 0", "\"every_s\": -0" };
    for (size_t z = 0; z < 2; z++) {
        char *bad = replaced(text, "\"every_s\": 0.1", zeros[z]);
        harness_write(run, "run.json", bad);
        free(bad);
        const char *const *cmds[] = {
            (const char *[]){ "report", o, "--by", "workload.lr", NULL },
            (const char *[]){ "report", o, "--by", "workload.lr", "--target", "0.5", NULL },
            (const char *[]){ "plot", "--by", "workload.lr", o, "-o", figs, NULL },
        };
        for (size_t c = 0; c < 3; c++) {
            result res = harness_hetsim(cmds[c]);
            ck_assert_msg(res.status == 2 && strstr(res.err, "run.json") != NULL &&
                              strstr(res.err, "every_s") != NULL,
                          "%s, command %zu: exit %d\n%s\n%s", zeros[z], c, res.status, res.err,
                          res.out);
        }
    }
    free(text);
    harness_cleanup(dir);
}
END_TEST

/* Every run's stop.target_accuracy in its run.json edited to 0 (or -0), a target no scenario
 * has (it is in (0, 1]): report took it as the sweep's target, "time to 0 (s)" of 0 +- 0,
 * every run reaching it at 0 s, exit 0; plot --by drew its bars. Refused now, exit 2, naming
 * the run.json and the key. */
START_TEST(a_target_accuracy_of_zero_is_refused)
{
    char *dir = harness_tmpdir("probe52");
    char sw[600], o[600], run[800], figs[700];
    char *base =
        replaced(base_json, "\"time_s\": 0.2}", "\"time_s\": 0.2, \"target_accuracy\": 0.9}");
    harness_write(dir, "s.json", base);
    free(base);
    harness_sweep_in(dir, NULL, lr_sweep, sw, o, sizeof(sw));
    snprintf(figs, sizeof(figs), "%s/figs", dir);
    static const char *const runs[] = { "workload.lr=0.05,seed=5", "workload.lr=0.05,seed=6",
                                        "workload.lr=0.1,seed=5", "workload.lr=0.1,seed=6" };
    static const char *const zeros[] = { "\"target_accuracy\": 0", "\"target_accuracy\": -0" };
    for (size_t z = 0; z < 2; z++) {
        for (size_t k = 0; k < 4; k++) {
            snprintf(run, sizeof(run), "%s/%s", o, runs[k]);
            char *text = harness_slurp(run, "run.json");
            char *bad = replaced(text, z == 0 ? "\"target_accuracy\": 0.9" : zeros[0], zeros[z]);
            harness_write(run, "run.json", bad);
            free(bad);
            free(text);
        }
        const char *const *cmds[] = {
            (const char *[]){ "report", o, "--by", "workload.lr", NULL },
            (const char *[]){ "plot", "--by", "workload.lr", o, "-o", figs, NULL },
        };
        for (size_t c = 0; c < 2; c++) {
            result res = harness_hetsim(cmds[c]);
            ck_assert_msg(res.status == 2 && strstr(res.err, "run.json") != NULL &&
                              strstr(res.err, "target_accuracy") != NULL,
                          "%s, command %zu: exit %d\n%s\n%s", zeros[z], c, res.status, res.err,
                          res.out);
        }
    }
    harness_cleanup(dir);
}
END_TEST

Suite *test_suite(void)
{
    Suite *s = suite_create("probe52");
    TCase *golden = tcase_create("golden");
    tcase_add_test(golden, a_path_of_control_characters_in_a_run_json_is_no_crash);
    tcase_set_timeout(golden, 240);
    suite_add_tcase(s, golden);
    TCase *results = tcase_create("results");
    tcase_add_test(results, a_run_whose_epochs_were_emptied_is_refused);
    tcase_add_test(results, a_speed_up_over_a_mean_of_zero_is_none);
    tcase_add_test(results, an_evaluation_interval_of_zero_is_refused);
    tcase_add_test(results, a_target_accuracy_of_zero_is_refused);
    tcase_set_timeout(results, 120);
    suite_add_tcase(s, results);
    return s;
}
