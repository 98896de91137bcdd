/* Issue 38, the twentieth probe (classes 7 to 12: sums of user numbers, non-finite totals,
 * goldens, results depending on every_s or --threads, report and plot --by reading damaged
 * results, JSON oddities). Each case failed before its fix.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "harness.h"

typedef harness_result result;

/* A sweep of two learning rates, two seeds each (5 and 6). */
static const char base_json[] =
    "{\"seed\": 5, \"workers\": 3, \"compute\": {\"iteration_ms\": 20},"
    " \"workload\": {\"dataset\": {\"name\": \"synthetic\", \"samples\": 400,"
    " \"test_samples\": 50}, \"model\": {\"name\": \"softmax\"}, \"batch\": 8, \"lr\": 0.05},"
    " \"protocol\": {\"name\": \"allreduce\"}, \"stop\": {\"time_s\": 0.2},"
    " \"eval\": {\"every_s\": 0.1, \"samples\": 50}}";
static const char lr_sweep[] =
    "{\"base\": \"s.json\", \"grid\": {\"workload.lr\": [0.05, 0.1]}, \"seeds\": 2}\n";

/* `report --by workload.lr` and `plot --by workload.lr` of the sweep `o` (figures into
 * DIR/figs): both exit 2 naming each of `want` (NULL-ended), or, with want NULL, both exit 0.
 * `what` names the case. */
static void both(const char *dir, const char *o, const char *const *want, const char *what)
{
    char figs[700];
    snprintf(figs, sizeof(figs), "%s/figs", dir);
    const char *const *cmds[] = {
        (const char *[]){ "report", o, "--by", "workload.lr", NULL },
        (const char *[]){ "plot", "--by", "workload.lr", o, "-o", figs, NULL },
    };
    for (size_t c = 0; c < 2; c++) {
        result res = harness_hetsim(cmds[c]);
        ck_assert_msg(res.status == (want != NULL ? 2 : 0), "%s, %s: exit %d\n%s%s", what,
                      cmds[c][0], res.status, res.out, res.err);
        for (size_t k = 0; want != NULL && want[k] != NULL; k++)
            ck_assert_msg(strstr(res.err, want[k]) != NULL, "%s, %s: no \"%s\" in\n%s", what,
                          cmds[c][0], want[k], res.err);
    }
}

/* text with the first `find` replaced by `by` (which must be there), malloc'd. */
static char *replaced(const char *text, const char *find, const char *by)
{
    const char *at = strstr(text, find);
    ck_assert_msg(at != NULL, "no \"%s\" in\n%.400s", find, text);
    size_t n = strlen(text) - strlen(find) + strlen(by) + 1;
    char *out = malloc(n);
    ck_assert_ptr_nonnull(out);
    snprintf(out, n, "%.*s%s%s", (int)(at - text), text, by, at + strlen(find));
    return out;
}

/* A point's run.json without its swept "lr" (renamed "Lr") beside its index cell emptied: the
 * empty cell was skipped, the row read silently as a group "" of one run whose rate nobody
 * knows, exit 0 (the cell alone emptied is refused). No sweep writes an empty cell (a string
 * value must not be empty): refused now, exit 2, naming the key and the run.json. */
START_TEST(an_empty_cell_does_not_hide_a_key_missing_from_run_json)
{
    char *dir = harness_tmpdir("probe64");
    char sw[600], o[600], run[800];
    harness_write(dir, "s.json", base_json);
    harness_sweep_in(dir, NULL, lr_sweep, sw, o, sizeof(sw));
    snprintf(run, sizeof(run), "%s/workload.lr=0.1,seed=6", o);
    char *text = harness_slurp(run, "run.json"), *index = harness_slurp(o, "index.csv");
    char *renamed = replaced(text, "\"lr\": 0.1", "\"Lr\": 0.1");
    char *emptied = replaced(index, ",0.1,6,", ",,6,");
    harness_write(run, "run.json", renamed);
    harness_write(o, "index.csv", emptied);
    const char *const want[] = { "index.csv: line 5: workload.lr (\"\"; no such key there)",
                                 "workload.lr=0.1,seed=6/run.json", NULL };
    both(dir, o, want, "lr renamed Lr, its cell emptied");
    harness_write(run, "run.json", text);
    harness_write(o, "index.csv", index);
    both(dir, o, NULL, "as written");
    free(renamed);
    free(emptied);
    free(text);
    free(index);
    harness_cleanup(dir);
}
END_TEST

/* `csv` with field `col` (from 0) of its line `line` (the header is line 0) replaced by `by`,
 * malloc'd. */
static char *field_replaced(const char *csv, int line, int col, const char *by)
{
    const char *at = csv;
    for (int l = 0; l < line; l++) {
        at = strchr(at, '\n');
        ck_assert_ptr_nonnull(at);
        at++;
    }
    for (int c = 0; c < col; c++) {
        at = strchr(at, ',');
        ck_assert_ptr_nonnull(at);
        at++;
    }
    size_t len = strcspn(at, ",\n"), n = strlen(csv) - len + strlen(by) + 1;
    char *out = malloc(n);
    ck_assert_ptr_nonnull(out);
    snprintf(out, n, "%.*s%s%s", (int)(at - csv), csv, by, at + len);
    return out;
}

/* A point's workers.csv whose first worker's samples (or iterations) were edited: report's
 * bytes sent/sample moved (a timing-only sweep's gossip 62.5 -> 61 +- 14 for samples 288 ->
 * 320), exit 0, and plot --by and plot RUN drew it, beside a summary.json whose iterations and
 * samples, the workers' totals in every run, say otherwise. Refused now, exit 2, naming the
 * column, both totals and the files. */
START_TEST(workers_counts_that_are_not_the_runs_are_refused)
{
    char *dir = harness_tmpdir("probe64");
    char sw[600], o[600], run[800], figs[800];
    harness_write(dir, "s.json", base_json);
    harness_sweep_in(dir, NULL, lr_sweep, sw, o, sizeof(sw));
    snprintf(run, sizeof(run), "%s/workload.lr=0.1,seed=6", o);
    snprintf(figs, sizeof(figs), "%s/figs1", dir);
    char *text = harness_slurp(run, "workers.csv");
    static const char *const cols[] = { "iterations", "samples" };
    for (int k = 0; k < 2; k++) {
        char *bad = field_replaced(text, 1, 2 + k, "1000");
        harness_write(run, "workers.csv", bad);
        char want[80];
        snprintf(want, sizeof(want), "workers.csv: %s: the workers' total", cols[k]);
        const char *const wants[] = { want, "summary.json): a damaged file, or another run's",
                                      NULL };
        both(dir, o, wants, cols[k]);
        result res = harness_hetsim((const char *[]){ "plot", run, "-o", figs, NULL });
        ck_assert_msg(res.status == 2 && strstr(res.err, want) != NULL, "plot RUN, %s: exit %d\n%s",
                      cols[k], res.status, res.err);
        free(bad);
    }
    harness_write(run, "workers.csv", text);
    both(dir, o, NULL, "as written");
    free(text);
    harness_cleanup(dir);
}
END_TEST

/* A point's metrics.csv whose last row (the run's end) was edited, its counts still
 * increasing: samples 216 -> 100000 were drawn by `plot --by workload.lr --x samples`, exit 0,
 * beside a summary.json saying 216. The last row is written with the counts summary.json
 * reports: refused now, exit 2, naming the column and both figures. */
START_TEST(a_last_row_that_is_not_the_runs_end_is_refused)
{
    char *dir = harness_tmpdir("probe64");
    char sw[600], o[600], run[800];
    harness_write(dir, "s.json", base_json);
    harness_sweep_in(dir, NULL, lr_sweep, sw, o, sizeof(sw));
    snprintf(run, sizeof(run), "%s/workload.lr=0.1,seed=6", o);
    char *text = harness_slurp(run, "metrics.csv");
    int last = (int)harness_count_lines(text) - 1;
    static const char *const cols[] = { "iterations", "samples" };
    static const char *const by[] = { "1000", "100000" };
    for (int k = 0; k < 2; k++) {
        char *bad = field_replaced(text, last, 1 + k, by[k]);
        harness_write(run, "metrics.csv", bad);
        char want[80];
        snprintf(want, sizeof(want), "metrics.csv: %s: the last row's %s", cols[k], by[k]);
        const char *const wants[] = { want, "a damaged file, or another run's", NULL };
        both(dir, o, wants, cols[k]);
        free(bad);
    }
    harness_write(run, "metrics.csv", text);
    both(dir, o, NULL, "as written");
    free(text);
    harness_cleanup(dir);
}
END_TEST

/* A sweep whose runs all end at 0 s (every worker down from 0: stalled at once): plot --by
 * drew breakdown-by-KEY.png with no bar and no word why, exit 0 (its CSV NaN, where report
 * prints "-"). It is not drawn now, said as the other figures not drawn are. */
START_TEST(a_breakdown_of_runs_without_time_is_not_drawn_empty)
{
    static const char zero_json[] =
        "{\"seed\": 5, \"workers\": 3, \"compute\": {\"iteration_ms\": 20},"
        " \"stragglers\": [{\"kind\": \"failure\", \"workers\": [0, 1, 2], \"at_s\": 0}],"
        " \"workload\": {\"model\": {\"name\": \"none\"}, \"message_bytes\": 1000},"
        " \"protocol\": {\"name\": \"gossip\"}, \"stop\": {\"time_s\": 0.2},"
        " \"eval\": {\"every_s\": 0.1}}";
    static const char sweep[] =
        "{\"base\": \"s.json\", \"grid\": {\"protocol.name\": [\"gossip\", \"allreduce\"]},"
        " \"seeds\": 1}\n";
    char *dir = harness_tmpdir("probe64");
    char sw[600], o[600], figs[700], png[800];
    harness_write(dir, "s.json", zero_json);
    harness_sweep_in(dir, NULL, sweep, sw, o, sizeof(sw));
    snprintf(figs, sizeof(figs), "%s/figs", dir);
    snprintf(png, sizeof(png), "%s/breakdown-by-protocol.name.png", figs);
    result res =
        harness_hetsim((const char *[]){ "plot", "--by", "protocol.name", o, "-o", figs, NULL });
    ck_assert_msg(res.status == 0, "plot: exit %d\n%s", res.status, res.err);
    ck_assert_msg(strstr(res.err, "no breakdown-by-protocol.name.png: no run's workers had time "
                                  "to share") != NULL,
                  "%s", res.err);
    FILE *f = fopen(png, "rb");
    ck_assert_msg(f == NULL, "an empty breakdown was drawn");
    harness_cleanup(dir);
}
END_TEST

Suite *test_suite(void)
{
    Suite *s = suite_create("probe64");
    TCase *results = tcase_create("results");
    tcase_add_test(results, an_empty_cell_does_not_hide_a_key_missing_from_run_json);
    tcase_add_test(results, workers_counts_that_are_not_the_runs_are_refused);
    tcase_add_test(results, a_last_row_that_is_not_the_runs_end_is_refused);
    tcase_add_test(results, a_breakdown_of_runs_without_time_is_not_drawn_empty);
    tcase_set_timeout(results, 120);
    suite_add_tcase(s, results);
    return s;
}
