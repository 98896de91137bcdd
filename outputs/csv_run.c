/* A results file held to its run (see outputs/csv.h): workers.csv's totals, counts and times,
 * metrics.csv's evaluation grid, accuracies and last row, each against the run's run.json and
 * summary.json. The reading of the files is outputs/csv.c's. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "outputs/csv.h"
#include "outputs/output.h"
#include "sim/cfg.h"

/* Each number column's total over the workers is at most SIM_CSV_HUGE, as each number: report
 * sums them, and 24,000 workers of bytes_sent 1e150 (with one sample) made bytes sent/sample
 * 2.4e154 and its interval over two runs "inf", exit 0. */
static int check_worker_totals(const sim_csv *t, sim_err *err)
{
    static const char *const summed[] = { "iterations",     "samples", "compute_s",
                                          "comm_s",         "wait_s",  "bytes_sent",
                                          "bytes_received", "down_s",  "comm_overlap_s" };
    for (size_t k = 0; k < sizeof(summed) / sizeof(summed[0]); k++) {
        int c = sim_csv_column(t, summed[k]);
        double sum = 0.0;
        for (size_t r = 0; c >= 0 && r < t->nrows; r++) {
            double v = sim_csv_number(t, r, (size_t)c);
            sum += isnan(v) ? 0.0 : v;
        }
        if (sum > SIM_CSV_HUGE)
            return sim_err_set(err, SIM_EINVAL, NULL,
                               "%s: %s: the workers' total %g is above %g (each number, and each "
                               "column's total, at most that)",
                               t->path, summed[k], sum, SIM_CSV_HUGE);
    }
    return SIM_OK;
}

/* Row r's columns `counts` (those present) are whole numbers, as the run writes its counts. */
static int whole_counts(const sim_csv *t, size_t r, const char *const *counts, size_t n,
                        sim_err *err)
{
    for (size_t k = 0; k < n; k++) {
        int c = sim_csv_column(t, counts[k]);
        double v = c >= 0 ? sim_csv_number(t, r, (size_t)c) : 0.0;
        if (v != floor(v))
            return sim_err_set(err, SIM_EINVAL, NULL,
                               "%s: line %zu: %s: %s is not a whole number (a count)", t->path,
                               t->line[r], counts[k], sim_csv_cell(t, r, (size_t)c));
    }
    return SIM_OK;
}

/* Each row's counts are whole numbers, as the run writes them, and its comm_overlap_s a part of
 * its compute_s: samples of 1e-300 made report's bytes sent/sample inf, and compute_s 1e-320
 * below the overlap its comm. incl. overlap (a ratio past any bound), exit 0. */
static int check_worker_rows(const sim_csv *t, sim_err *err)
{
    static const char *const counts[] = { "iterations", "samples", "bytes_sent", "bytes_received" };
    int compute = sim_csv_column(t, "compute_s"), overlap = sim_csv_column(t, "comm_overlap_s");
    for (size_t r = 0; r < t->nrows; r++) {
        int rc = whole_counts(t, r, counts, sizeof(counts) / sizeof(counts[0]), err);
        if (rc != SIM_OK)
            return rc;
        if (compute >= 0 && overlap >= 0 &&
            sim_csv_number(t, r, (size_t)overlap) > sim_csv_number(t, r, (size_t)compute))
            return sim_err_set(err, SIM_EINVAL, NULL,
                               "%s: line %zu: comm_overlap_s: %s is above compute_s %s (the "
                               "part of the computing that overlapped communication)",
                               t->path, t->line[r], sim_csv_cell(t, r, (size_t)overlap),
                               sim_csv_cell(t, r, (size_t)compute));
    }
    return SIM_OK;
}

static int run_end(const char *summary_json, double *end, sim_err *err);
static double summary_number(const char *path, const char *key, bool *null);

/* `got` (`what` of t's column `col`) is `key` of the summary.json `summary` when that holds a
 * number: exactly below 2^53, where a double adds whole numbers exactly. */
static int same_as_run(const sim_csv *t, const char *col, const char *what, double got,
                       const char *summary, const char *key, sim_err *err)
{
    bool null = false;
    double want = isnan(got) ? (double)NAN : summary_number(summary, key, &null);
    bool exact = got < 9007199254740992.0 && want < 9007199254740992.0;
    if (isnan(want) || (exact ? got == want : fabs(got - want) <= 1e-12 * want))
        return SIM_OK;
    return sim_err_set(err, SIM_EINVAL, NULL,
                       "%s: %s: %s %.17g is not the run's %.17g (%s in %s): a damaged file, or "
                       "another run's",
                       t->path, col, what, got, want, key, summary);
}

/* The workers' iterations and samples add up to the run's (in 442 runs they did): one row's
 * samples edited (288 -> 320) moved bytes sent/sample from 62.5 to 61 +- 14, exit 0. */
static int check_worker_counts(const sim_csv *t, const char *summary, sim_err *err)
{
    static const char *const counts[] = { "iterations", "samples" };
    int rc = SIM_OK;
    for (size_t k = 0; k < sizeof(counts) / sizeof(counts[0]) && rc == SIM_OK; k++) {
        int c = sim_csv_column(t, counts[k]);
        double sum = 0.0;
        for (size_t r = 0; c >= 0 && r < t->nrows; r++) {
            double v = sim_csv_number(t, r, (size_t)c);
            sum += isnan(v) ? 0.0 : v;
        }
        if (c >= 0)
            rc = same_as_run(t, counts[k], "the workers' total", sum, summary, counts[k], err);
    }
    return rc;
}

/* Each row's compute_s, comm_s, wait_s and down_s split the run's time (docs/usage.md): their
 * sum is sim_time_s of the summary.json beside `run_json` within a relative 1e-9 (none there:
 * not checked; in 9,460 rows of 1,361 runs they were within 1e-9). A compute_s of 5 s in a run
 * of 0.5 s made report's waiting "8 +- 67" %, and a row zeroed dropped out of the shares, exit
 * 0. */
static int check_worker_times(const sim_csv *t, const char *run_json, sim_err *err)
{
    static const char *const parts[] = { "compute_s", "comm_s", "wait_s", "down_s" };
    const char *slash = strrchr(run_json, '/');
    int dir_len = slash != NULL ? (int)(slash - run_json) + 1 : 0;
    char summary[SIM_ERR_FILE_MAX + 16];
    snprintf(summary, sizeof(summary), "%.*ssummary.json", dir_len, run_json);
    double end = NAN;
    int rc = run_end(summary, &end, err);
    for (size_t r = 0; rc == SIM_OK && !isnan(end) && r < t->nrows; r++) {
        double sum = 0.0;
        for (size_t k = 0; k < sizeof(parts) / sizeof(parts[0]); k++) {
            int c = sim_csv_column(t, parts[k]);
            double v = c >= 0 ? sim_csv_number(t, r, (size_t)c) : 0.0;
            sum += isnan(v) ? 0.0 : v;
        }
        if (fabs(sum - end) > 1e-9 * end)
            rc = sim_err_set(err, SIM_EINVAL, NULL,
                             "%s: line %zu: compute_s, comm_s, wait_s and down_s add up to %.17g "
                             "s, %s the run's %.17g s (sim_time_s in %s): they split the run's "
                             "time",
                             t->path, t->line[r], sum, sum > end ? "past" : "short of", end,
                             summary);
    }
    return rc == SIM_OK && !isnan(end) ? check_worker_counts(t, summary, err) : rc;
}

int sim_csv_check_workers(const sim_csv *t, const char *run_json, sim_err *err)
{
    int rows = check_worker_rows(t, err);
    if (rows == SIM_OK)
        rows = check_worker_totals(t, err);
    if (rows == SIM_OK)
        rows = check_worker_times(t, run_json, err);
    if (rows != SIM_OK)
        return rows;
    size_t len = 0;
    char *text = sim_output_read_own(run_json, &len);
    sim_cfg *root = text != NULL ? sim_cfg_parse(text, len, run_json, NULL) : NULL, *sc = NULL;
    free(text);
    int64_t n = -1;
    sim_err bad;
    sim_err_clear(&bad);
    if (root != NULL && sim_cfg_child(root, "scenario", &sc, NULL) == SIM_OK && sc != NULL &&
        sim_cfg_has(sc, "workers") && sim_cfg_int(sc, "workers", 1, INT64_MAX, &n, &bad) != SIM_OK)
        n = -1;
    sim_cfg_destroy(root);
    if (bad.code != SIM_OK) { /* "workers": 0 (or 1e300) held workers.csv's rows to nothing */
        char why[SIM_ERR_TEXT_MAX];
        sim_err_file(&bad, run_json);
        sim_err_format(&bad, why, sizeof(why));
        return sim_err_set(err, SIM_EINVAL, NULL, "%s (no run.json hetsim wrote: run it again)",
                           why);
    }
    if (n < 0 || t->nrows == (size_t)n)
        return SIM_OK;
    if (t->nrows > (size_t)n)
        return sim_err_set(err, SIM_EINVAL, NULL,
                           "%s: line %zu: a row past the run's %" PRId64 " workers (%s)", t->path,
                           t->line[n], n, run_json);
    size_t line = t->nrows > 0 ? t->line[t->nrows - 1] + 1 : 2;
    return sim_err_set(err, SIM_EINVAL, NULL,
                       "%s: line %zu: no row for worker %zu (%" PRId64 " workers, %s): cut short",
                       t->path, line, t->nrows, n, run_json);
}

/* The run's end, sim_time_s in `summary_json`, into *end: NaN for a summary.json that is
 * absent, no regular file or empty (a run written by hand has none); one that does not parse
 * or names no end is SIM_EINVAL (plot RUN, which no index.csv check precedes, drew a row past
 * the run's end when its summary.json was cut short). */
static int run_end(const char *summary_json, double *end, sim_err *err)
{
    size_t len = 0;
    *end = NAN;
    char *text = sim_output_read_own(summary_json, &len);
    if (text == NULL || len == 0) {
        free(text);
        return SIM_OK;
    }
    sim_err perr;
    sim_err_clear(&perr);
    sim_cfg *s = sim_cfg_parse(text, len, summary_json, &perr);
    free(text);
    if (s == NULL && perr.code == SIM_ENOMEM)
        return sim_err_set(err, SIM_ENOMEM, NULL, "out of memory");
    int rc = s != NULL ? sim_cfg_double(s, "sim_time_s", 0.0, INFINITY, end, &perr) : perr.code;
    if (rc == SIM_OK && !sim_cfg_has(s, "sim_time_s"))
        rc = sim_err_set(&perr, SIM_EINVAL, "$.sim_time_s", "missing");
    sim_cfg_destroy(s);
    if (rc == SIM_OK)
        return SIM_OK;
    *end = NAN;
    char why[SIM_ERR_TEXT_MAX];
    sim_err_file(&perr, summary_json);
    sim_err_format(&perr, why, sizeof(why));
    return sim_err_set(err, SIM_EINVAL, NULL,
                       "%s (no summary.json hetsim wrote: the run's end cannot be read; run it "
                       "again)",
                       why);
}

/* The run's evaluation interval, eval.every_s in `run_json` (its scenario as resolved), in ns
 * into *every_ns as the loader rounds it: 0 for a run.json that cannot be read or names none
 * (its readers refuse it); one that is no number of at least 1 ns is SIM_EINVAL naming it. */
static int run_every(const char *run_json, int64_t *every_ns, sim_err *err)
{
    size_t len = 0;
    *every_ns = 0;
    char *text = sim_output_read_own(run_json, &len);
    sim_cfg *root = text != NULL ? sim_cfg_parse(text, len, run_json, NULL) : NULL, *sc = NULL;
    sim_cfg *eval = NULL;
    free(text);
    double every = NAN;
    sim_err bad;
    sim_err_clear(&bad);
    if (root != NULL && sim_cfg_child(root, "scenario", &sc, NULL) == SIM_OK && sc != NULL &&
        sim_cfg_child(sc, "eval", &eval, NULL) == SIM_OK && eval != NULL &&
        sim_cfg_has(eval, "every_s"))
        sim_cfg_double(eval, "every_s", 0.0, 1e9, &every, &bad);
    sim_cfg_destroy(root);
    /* The run's interval is a whole number of ns, at least 1: one that rounds to 0 (1e-300)
     * held no row to the grid, and report printed "evaluations every 1e-300 s or more". */
    if (bad.code == SIM_OK && every > 0.0 && llround(every * 1e9) == 0)
        sim_err_set(&bad, SIM_EINVAL, "$.scenario.eval.every_s",
                    "%.17g s is below the clock's resolution of 1 ns", every);
    /* 0 (or -0) is no interval a run has: it held no row to the grid, and report printed
     * "evaluations every 0 s or more", exit 0. */
    if (bad.code == SIM_OK && every == 0.0)
        sim_err_set(&bad, SIM_EINVAL, "$.scenario.eval.every_s",
                    "0 s: a run evaluates every 1 ns or more");
    if (bad.code == SIM_OK && !(every > 0.0)) /* absent: no grid to hold the rows to */
        return bad.code;
    if (bad.code == SIM_OK) {
        *every_ns = (int64_t)llround(every * 1e9); /* scenario/scenario_read.c's rounding */
        return SIM_OK;
    }
    char why[SIM_ERR_TEXT_MAX];
    sim_err_file(&bad, run_json);
    sim_err_format(&bad, why, sizeof(why));
    return sim_err_set(err, SIM_EINVAL, NULL, "%s (no run.json hetsim wrote: run it again)", why);
}

/* Row r's time on the evaluation grid, r x every_ns printed as the run prints its clock. */
static double grid_time(size_t r, int64_t every_ns)
{
    if ((uint64_t)r > (uint64_t)INT64_MAX / (uint64_t)every_ns)
        return (double)INFINITY;
    return (double)((int64_t)r * every_ns) / 1e9;
}

/* Both times are the run's clock printed to 17 digits or fewer: a relative 1e-12 is rounding. */
static bool later(double a, double b)
{
    return a > b * (1.0 + 1e-12) + 1e-12;
}

/* t's rows sit on the run's evaluation grid: an evaluation at 0 and every every_ns, and a last
 * one at the run's end, on the grid or before its next point (a stop or a stall between two
 * evaluations). A row removed moves every later one off the grid. */
static int check_grid(const sim_csv *t, size_t time_col, int64_t every_ns, const char *run_json,
                      sim_err *err)
{
    for (size_t r = 0; r < t->nrows; r++) {
        double at = sim_csv_number(t, r, time_col), want = grid_time(r, every_ns);
        bool last = r + 1 == t->nrows;
        if (!later(at, want) && (last || !later(want, at)))
            continue;
        return sim_err_set(err, SIM_EINVAL, NULL,
                           "%s: line %zu: time_s %.9g where the run's evaluations, every %.9g "
                           "s from 0 (eval.every_s in %s), put that row at %.9g%s: a row "
                           "removed, or one the run did not write",
                           t->path, t->line[r], at, (double)every_ns / 1e9, run_json, want,
                           last ? " at the latest" : "");
    }
    return SIM_OK;
}

/* The number at `key` of the summary.json `path` (already read whole by run_end), NaN when it
 * is absent, null or unreadable; *null says whether it is there and null. */
static double summary_number(const char *path, const char *key, bool *null)
{
    size_t len = 0;
    double x = NAN;
    char *text = sim_output_read_own(path, &len);
    sim_cfg *s = text != NULL ? sim_cfg_parse(text, len, path, NULL) : NULL;
    free(text);
    *null = s != NULL && sim_cfg_has(s, key) && sim_cfg_is_null(s, key);
    if (s != NULL && sim_cfg_has(s, key) && !*null)
        sim_cfg_double(s, key, -INFINITY, INFINITY, &x, NULL);
    sim_cfg_destroy(s);
    return x;
}

/* Column `name` of t empty in every row or in none (`why` says so in the message); in none
 * when the summary.json `summary_json` has a number at `key`, the run's figure of it, and in
 * every row when it has null there (the run had no such figure at any evaluation). */
static int all_or_none(const sim_csv *t, const char *name, const char *why,
                       const char *summary_json, const char *key, sim_err *err)
{
    int c = sim_csv_column(t, name);
    size_t empty = 0, first = 0;
    bool null = false;
    for (size_t r = 0; c >= 0 && r < t->nrows; r++)
        if (sim_csv_cell(t, r, (size_t)c)[0] == '\0' && empty++ == 0)
            first = r;
    if (empty < t->nrows && empty > 0)
        return sim_err_set(err, SIM_EINVAL, NULL,
                           "%s: line %zu: %s: empty, where the run's other rows have one (%s)",
                           t->path, t->line[first], name, why);
    double total = summary_number(summary_json, key, &null);
    if (empty == 0 && c >= 0 && null)
        return sim_err_set(err, SIM_EINVAL, NULL,
                           "%s: %s: a value in every row, where %s has %s null (a run that had "
                           "none writes none: a damaged file, or another run's)",
                           t->path, name, summary_json, key);
    if (empty == 0 || isnan(total))
        return SIM_OK;
    return sim_err_set(err, SIM_EINVAL, NULL, "%s: %s: empty in every row, where %s has %s %.17g",
                       t->path, name, summary_json, key, total);
}

/* A run scores every evaluation or none (a model without a test set, the timing-only one):
 * test_accuracy is empty in every row or in none, and in none when its summary.json has a
 * final_accuracy, in every row when it has none (null: a timing-only run's accuracies filled in
 * by hand made report --target read a time to target for a run that never scored one, exit 0).
 * One run's accuracies emptied made report --target read it as not reached
 * ("2/3 (others > 1)") beside its summary's final_accuracy 0.58, exit 0. A run counts epochs
 * likewise (in no row without training data, where summary.json's epochs is null): one row's
 * epoch emptied, or every row's, made plot --by --x epoch draw the group's curve at x = nan,
 * exit 0. */
static int check_accuracies(const sim_csv *t, const char *summary_json, sim_err *err)
{
    int rc = all_or_none(t, "test_accuracy", "a run scores every evaluation or none", summary_json,
                         "final_accuracy", err);
    if (rc == SIM_OK)
        rc = all_or_none(t, "epoch", "a run with training data counts epochs in every row",
                         summary_json, "epochs", err);
    return rc;
}

/* An evaluation writes a row's test loss and accuracy together: a row with one alone is
 * refused (plot RUN refused it, but plot --by drew the row's mean loss over the other runs
 * under n = all of them, exit 0). */
static int check_evaluation(const sim_csv *t, size_t r, sim_err *err)
{
    int l = sim_csv_column(t, "test_loss"), a = sim_csv_column(t, "test_accuracy");
    if (l < 0 || a < 0)
        return SIM_OK;
    bool loss = sim_csv_cell(t, r, (size_t)l)[0] != '\0';
    if (loss == (sim_csv_cell(t, r, (size_t)a)[0] != '\0'))
        return SIM_OK;
    return sim_err_set(err, SIM_EINVAL, NULL,
                       "%s: line %zu: %s without %s (an evaluation writes both: a damaged file, "
                       "or a test loss that was not a number)",
                       t->path, t->line[r], loss ? "test_loss" : "test_accuracy",
                       loss ? "test_accuracy" : "test_loss");
}

/* The last row's test_accuracy and epoch are the run's final_accuracy and epochs, within the 9
 * digits metrics.csv writes, in a summary.json of today's hetsim (one with `iterations`: an
 * older one's final_accuracy was not always its last row's). The last row's accuracy edited
 * from 0.26 to 0.9 made report say "reached 1/2" beside a final accuracy of 0.26, exit 0. */
static int last_scores(const sim_csv *t, const char *summary_json, sim_err *err)
{
    static const char *const pairs[][2] = { { "test_accuracy", "final_accuracy" },
                                            { "epoch", "epochs" } };
    bool null = false;
    if (isnan(summary_number(summary_json, "iterations", &null)))
        return SIM_OK;
    for (size_t k = 0; k < 2; k++) {
        int c = sim_csv_column(t, pairs[k][0]);
        double got = c >= 0 ? sim_csv_number(t, t->nrows - 1, (size_t)c) : (double)NAN;
        double want = isnan(got) ? (double)NAN : summary_number(summary_json, pairs[k][1], &null);
        if (!isnan(want) && !(fabs(got - want) <= 1e-8 * fabs(want)))
            return sim_err_set(err, SIM_EINVAL, NULL,
                               "%s: line %zu: %s %.9g is not the run's %.9g (%s in %s): a "
                               "damaged file, or another run's",
                               t->path, t->line[t->nrows - 1], pairs[k][0], got, want, pairs[k][1],
                               summary_json);
    }
    return SIM_OK;
}

int sim_csv_check_metrics(const sim_csv *t, size_t time_col, const char *summary_json,
                          const char *run_json, sim_err *err)
{
    /* iterations and samples are counts: a samples of 192.5 was drawn by plot --x samples. */
    static const char *const counts[] = { "iterations", "samples" };
    double end = NAN;
    int64_t every_ns = 0;
    int rc = SIM_OK;
    for (size_t r = 0; r < t->nrows && rc == SIM_OK; r++)
        rc = whole_counts(t, r, counts, 2, err);
    if (rc == SIM_OK)
        rc = run_end(summary_json, &end, err);
    if (rc == SIM_OK && t->nrows > 0 && !isnan(end)) /* no end: a run written by hand */
        rc = check_accuracies(t, summary_json, err);
    for (size_t r = 0; r < t->nrows && rc == SIM_OK; r++)
        rc = check_evaluation(t, r, err);
    if (rc != SIM_OK || t->nrows == 0 || isnan(end))
        return rc;
    double last = sim_csv_number(t, t->nrows - 1, time_col);
    if (later(last, end))
        return sim_err_set(
            err, SIM_EINVAL, NULL,
            "%s: line %zu: time_s %.9g is past the run's end, sim_time_s %.9g in %s: "
            "a row the run did not write",
            t->path, t->line[t->nrows - 1], last, end, summary_json);
    if ((rc = run_every(run_json, &every_ns, err)) != SIM_OK ||
        (every_ns > 0 && (rc = check_grid(t, time_col, every_ns, run_json, err)) != SIM_OK))
        return rc;
    if (later(end, last)) /* the run evaluates at its end */
        return sim_err_set(err, SIM_EINVAL, NULL,
                           "%s: line %zu: the last row, at time_s %.9g, is before the run's end, "
                           "sim_time_s %.9g in %s, where the run writes its last: a row removed",
                           t->path, t->line[t->nrows - 1], last, end, summary_json);
    /* ... with the counts summary.json reports (in 886 runs it did): its samples edited (216 ->
     * 100000) were drawn by plot --by --x samples, exit 0. */
    for (size_t k = 0; k < 2 && rc == SIM_OK; k++) {
        int c = sim_csv_column(t, counts[k]);
        double v = c >= 0 ? sim_csv_number(t, t->nrows - 1, (size_t)c) : (double)NAN;
        rc = same_as_run(t, counts[k], "the last row's", v, summary_json, counts[k], err);
    }
    return rc == SIM_OK ? last_scores(t, summary_json, err) : rc;
}
