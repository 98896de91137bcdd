/* Issue 38, the fifteenth probe, classes 7-12 (probe38ab). An evaluation due at the stop time
 * was made before the iterations that end at that instant, so a run stopped by time gave
 * another final_accuracy whether eval.every_s divides stop.time_s or not. Each case failed
 * before its fix. An index.csv whose results column was renamed (or removed) was read as
 * a sweep without that result, and a workers.csv whose seconds add up past the run's time as
 * a run that spent them, or a metrics.csv count that is no whole number; check --exact against the
 * golden of another scenario reported a REGRESSION.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "harness.h"

typedef harness_result result;

/* AD-PSGD on six workers of 10 ms iterations without jitter, stopped at 1 s: every worker's
 * 100th iteration ends at the stop instant. */
static const char at_stop_json[] =
    "{\"seed\": 54, \"workers\": 6, \"compute\": {\"iteration_ms\": 10, \"jitter_sigma\": 0},\n"
    " \"workload\": {\"dataset\": {\"name\": \"synthetic\", \"samples\": 400,\n"
    "   \"test_samples\": 50}, \"model\": {\"name\": \"softmax\"}, \"batch\": 8, \"lr\": 0.1},\n"
    " \"protocol\": {\"name\": \"adpsgd\"}, \"stop\": {\"time_s\": 1},\n"
    " \"eval\": {\"samples\": 50}}\n";

/* With every_s 0.05 the evaluation at 1 s was due at the stop, made before the iterations
 * that end then: its row read 594 iterations where summary.json reads 600, and final_accuracy
 * was 0.74; with every_s 1000 the run's end is evaluated after them: 600 and 0.76. The row at
 * the stop instant is now the run's end, whatever every_s. */
START_TEST(a_run_stopped_by_time_ends_with_the_same_row_whatever_every_s)
{
    char *dir = harness_tmpdir("probe32");
    harness_write(dir, "s.json", at_stop_json);
    static const char *const everys[] = { "eval.every_s=0.05", "eval.every_s=1000" };
    char s[600], r[2][700];
    snprintf(s, sizeof(s), "%s/s.json", dir);
    double final[2];
    harness_csv m[2];
    for (size_t e = 0; e < 2; e++) {
        snprintf(r[e], sizeof(r[e]), "%s/r%zu", dir, e);
        result res = harness_hetsim(
            (const char *[]){ "run", s, "-o", r[e], "--set", everys[e], "--quiet", NULL });
        ck_assert_msg(res.status == 0, "%s: exit %d\n%s", everys[e], res.status, res.err);
        final[e] = harness_summary_number(r[e], "final_accuracy");
        m[e] = harness_csv_read(r[e], "metrics.csv");
        double its = harness_summary_number(r[e], "iterations");
        ck_assert_msg(harness_csv_num(&m[e], m[e].nrows - 1, "iterations") == its,
                      "%s: the last row's iterations %s, summary.json's %.17g", everys[e],
                      harness_csv_text(&m[e], m[e].nrows - 1, "iterations"), its);
    }
    ck_assert_msg(final[0] == final[1], "final_accuracy %.17g with every_s 0.05, %.17g with 1000",
                  final[0], final[1]);
    static const char *const cols[] = { "time_s",    "iterations",    "samples",
                                        "test_loss", "test_accuracy", "consensus" };
    for (size_t c = 0; c < sizeof(cols) / sizeof(cols[0]); c++) {
        const char *a = harness_csv_text(&m[0], m[0].nrows - 1, cols[c]);
        const char *b = harness_csv_text(&m[1], m[1].nrows - 1, cols[c]);
        ck_assert_msg(strcmp(a, b) == 0, "last row's %s: %s and %s", cols[c], a, b);
    }
    harness_csv_free(&m[0]);
    harness_csv_free(&m[1]);
    harness_cleanup(dir);
}
END_TEST

static const char sweep_base_json[] =
    "{\"seed\": 5, \"workers\": 3, \"compute\": {\"iteration_ms\": 20},"
    " \"workload\": {\"dataset\": {\"name\": \"synthetic\", \"samples\": 400,"
    " \"test_samples\": 50}, \"model\": {\"name\": \"softmax\"}, \"batch\": 8, \"lr\": 0.05},"
    " \"protocol\": {\"name\": \"allreduce\"}, \"stop\": {\"time_s\": 0.5},"
    " \"eval\": {\"every_s\": 0.1, \"samples\": 50}}";

/* index.csv's header with final_accuracy respelt Final_accuracy (as with the column removed)
 * gave report's final accuracy "-" for every row, exit 0, and plot --by drew the sweep; so did
 * mean_throughput_sps for samples/s. Refused now, exit 2, naming the column; as written it
 * still reads. */
START_TEST(an_index_without_a_results_column_is_refused)
{
    static const char *const cols[] = { "final_accuracy", "mean_throughput_sps" };
    char *dir = harness_tmpdir("probe32");
    harness_write(dir, "s.json", sweep_base_json);
    char out[600], figs[700], want[100];
    result res = harness_sweep_grid(dir, "{\"workload.lr\": [0.05, 0.1]}", out, sizeof(out));
    ck_assert_msg(res.status == 0, "sweep: exit %d\n%s", res.status, res.err);
    snprintf(figs, sizeof(figs), "%s/figs", dir);
    size_t n = 0;
    char index[700];
    snprintf(index, sizeof(index), "%s/index.csv", out);
    char *orig = harness_read(index, &n);
    for (size_t i = 0; i < sizeof(cols) / sizeof(cols[0]); i++) {
        harness_poke_index(out, cols[i], 0, cols[i][0] - 'a' + 'A');
        res = harness_hetsim((const char *[]){ "report", out, "--by", "workload.lr", NULL });
        snprintf(want, sizeof(want), "no column %s", cols[i]);
        ck_assert_msg(res.status == 2 && strstr(res.err, want) != NULL, "%s: report exit %d\n%s%s",
                      cols[i], res.status, res.out, res.err);
        res = harness_hetsim(
            (const char *[]){ "plot", out, "--by", "workload.lr", "-o", figs, NULL });
        ck_assert_msg(res.status == 2, "%s: plot exit %d\n%s", cols[i], res.status, res.err);
        ck_assert_msg(!harness_exists(figs), "%s: figures drawn", cols[i]);
        harness_write(out, "index.csv", orig);
    }
    res = harness_hetsim((const char *[]){ "report", out, "--by", "workload.lr", NULL });
    ck_assert_msg(res.status == 0, "as written: exit %d\n%s", res.status, res.err);
    free(orig);
    harness_cleanup(dir);
}
END_TEST

/* A worker's compute_s, comm_s, wait_s and down_s split the run's time: one row's compute_s
 * edited to 5 s in a run of 0.5 s made report's waiting "8 +- 67" % (plot RUN drew its
 * breakdown), exit 0. Refused now, exit 2, naming the file and line; as written it reads. */
START_TEST(a_workers_file_past_the_runs_time_is_refused)
{
    char *dir = harness_tmpdir("probe32");
    harness_write(dir, "s.json", sweep_base_json);
    char out[600], run[800], figs[700];
    result res = harness_sweep_grid(dir, "{\"workload.lr\": [0.05]}", out, sizeof(out));
    ck_assert_msg(res.status == 0, "sweep: exit %d\n%s", res.status, res.err);
    snprintf(run, sizeof(run), "%s/workload.lr=0.05,seed=5", out);
    snprintf(figs, sizeof(figs), "%s/figs", dir);
    char *orig = harness_slurp(run, "workers.csv");
    char *line = strstr(orig, "\n0,"), edited[4096];
    ck_assert_ptr_nonnull(line);
    char *f = line + 1;
    for (int k = 0; k < 4; k++) /* worker, speed, iterations, samples: then compute_s */
        f = strchr(f, ',') + 1;
    snprintf(edited, sizeof(edited), "%.*s5%s", (int)(f - orig), orig, strchr(f, ','));
    harness_write(run, "workers.csv", edited);
    res = harness_hetsim((const char *[]){ "report", out, "--by", "workload.lr", NULL });
    ck_assert_msg(res.status == 2 && strstr(res.err, "workers.csv: line 2: compute_s") != NULL &&
                      res.out[0] == '\0',
                  "report exit %d\n%s%s", res.status, res.out, res.err);
    res = harness_hetsim((const char *[]){ "plot", run, "-o", figs, NULL });
    ck_assert_msg(res.status == 2, "plot RUN exit %d\n%s", res.status, res.err);
    ck_assert_msg(!harness_exists(figs), "figures drawn");
    harness_write(run, "workers.csv", orig);
    res = harness_hetsim((const char *[]){ "report", out, "--by", "workload.lr", NULL });
    ck_assert_msg(res.status == 0, "as written: exit %d\n%s", res.status, res.err);
    free(orig);
    harness_cleanup(dir);
}
END_TEST

/* metrics.csv's iterations and samples are counts: a samples of 192.5 (or iterations 24.5)
 * was read as it came, and plot --by --x samples drew the group's curve at 192.25, exit 0,
 * where workers.csv's counts are held to whole numbers. Refused now, exit 2, naming the file,
 * line and column. */
START_TEST(a_metrics_count_that_is_no_whole_number_is_refused)
{
    static const char *const cols[] = { "samples", "iterations" };
    char *dir = harness_tmpdir("probe32");
    harness_write(dir, "s.json", sweep_base_json);
    char out[600], run[800], figs[700], want[120];
    result res = harness_sweep_grid(dir, "{\"workload.lr\": [0.05]}", out, sizeof(out));
    ck_assert_msg(res.status == 0, "sweep: exit %d\n%s", res.status, res.err);
    snprintf(run, sizeof(run), "%s/workload.lr=0.05,seed=5", out);
    snprintf(figs, sizeof(figs), "%s/figs", dir);
    char *orig = harness_slurp(run, "metrics.csv");
    for (size_t i = 0; i < 2; i++) {
        char *row = strchr(strchr(orig, '\n') + 1, '\n') + 1, edited[8192]; /* the second row */
        char *f = strchr(row, ',') + 1;                                     /* iterations */
        if (i == 0)
            f = strchr(f, ',') + 1; /* samples */
        char *end = strchr(f, ',');
        snprintf(edited, sizeof(edited), "%.*s.5%s", (int)(end - orig), orig, end);
        harness_write(run, "metrics.csv", edited);
        res = harness_hetsim((const char *[]){ "plot", out, "--by", "workload.lr", "--x", "samples",
                                               "-o", figs, NULL });
        snprintf(want, sizeof(want), "metrics.csv: line 3: %s", cols[i]);
        ck_assert_msg(res.status == 2 && strstr(res.err, want) != NULL, "%s: plot exit %d\n%s",
                      cols[i], res.status, res.err);
        ck_assert_msg(!harness_exists(figs), "%s: figures drawn", cols[i]);
        res = harness_hetsim((const char *[]){ "report", out, "--by", "workload.lr", NULL });
        ck_assert_msg(res.status == 2, "%s: report exit %d\n%s", cols[i], res.status, res.err);
    }
    harness_write(run, "metrics.csv", orig);
    res = harness_hetsim((const char *[]){ "report", out, "--by", "workload.lr", NULL });
    ck_assert_msg(res.status == 0, "as written: exit %d\n%s", res.status, res.err);
    free(orig);
    harness_cleanup(dir);
}
END_TEST

/* check --exact ran the scenario's seed and compared its bytes with the golden's alone: a
 * scenario of another name (or lr) than the golden's was "REGRESSION: outputs differ", exit 1,
 * a change of the code, where the statistical check refuses it as a golden of another scenario,
 * exit 2. --exact now says so too, naming the keys; the golden's own scenario is still ok. */
START_TEST(an_exact_check_of_another_scenario_is_no_regression)
{
    char *dir = harness_tmpdir("probe32");
    char s[700], g[700], o[700], other[700];
    harness_golden_in(dir, sweep_base_json, s, g, sizeof(s));
    snprintf(o, sizeof(o), "%s/out", dir);
    char *text = harness_slurp(dir, "s.json"), renamed[4096];
    snprintf(renamed, sizeof(renamed), "{\"name\": \"s2\", %s", strchr(text, '{') + 1);
    harness_write(dir, "s2.json", renamed);
    snprintf(other, sizeof(other), "%s/s2.json", dir);
    result res =
        harness_hetsim((const char *[]){ "check", other, "--golden", g, "--exact", "-o", o, NULL });
    ck_assert_msg(res.status == 2 && strstr(res.err, "differs from the golden's") != NULL &&
                      strstr(res.err, "name") != NULL,
                  "another name: exit %d\n%s%s", res.status, res.out, res.err);
    res = harness_hetsim((const char *[]){ "check", s, "--golden", g, "--exact", "-o", o, "--set",
                                           "workload.lr=0.2", NULL });
    ck_assert_msg(res.status == 2 && strstr(res.err, "workload.lr") != NULL,
                  "another lr: exit %d\n%s%s", res.status, res.out, res.err);
    res = harness_hetsim((const char *[]){ "check", s, "--golden", g, "--exact", "-o", o, NULL });
    ck_assert_msg(res.status == 0, "its own scenario: exit %d\n%s%s", res.status, res.out, res.err);
    free(text);
    harness_cleanup(dir);
}
END_TEST

Suite *test_suite(void)
{
    Suite *s = suite_create("probe32");
    TCase *stop = tcase_create("stop_instant");
    tcase_add_test(stop, a_run_stopped_by_time_ends_with_the_same_row_whatever_every_s);
    tcase_set_timeout(stop, 120);
    suite_add_tcase(s, stop);
    TCase *index = tcase_create("index");
    tcase_add_test(index, an_index_without_a_results_column_is_refused);
    tcase_add_test(index, a_workers_file_past_the_runs_time_is_refused);
    tcase_add_test(index, a_metrics_count_that_is_no_whole_number_is_refused);
    tcase_set_timeout(index, 120);
    suite_add_tcase(s, index);
    TCase *golden = tcase_create("golden");
    tcase_add_test(golden, an_exact_check_of_another_scenario_is_no_regression);
    tcase_set_timeout(golden, 240);
    suite_add_tcase(s, golden);
    return s;
}
