/* Comparisons of a sweep's runs as a paper needs them, through the built binary ($HETSIM):
 * `hetsim report` (intervals against a hand computation, censored runs, --best-over, bad
 * usage), the sweep's tidy curves.csv, and `hetsim plot --by`. Most cases read a sweep
 * directory written here by hand (index.csv, and each run's metrics.csv, workers.csv and
 * run.json), so every number is known. */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <check.h>

#include "harness.h"

/* A run directory `name` under `sweep`: metrics.csv from "t:acc t:acc ..." (time_s and
 * test_accuracy; the other columns made up), workers.csv of two workers with the given
 * totals split evenly (the counts, samples and bytes, as whole numbers), run.json with the stop
 * target (NaN: none). */
static void fake_run(const char *sweep, const char *name, const char *curve, double samples,
                     double compute, double comm, double wait, double bytes, double target)
{
    char dir[1024], text[8192];
    harness_fake_run(dir, sizeof(dir), sweep, name, curve, false);
    snprintf(text, sizeof(text),
             "worker,speed,iterations,samples,compute_s,comm_s,wait_s,bytes_sent,"
             "bytes_received,down_s,params_fnv\n"
             "0,1,1,%.17g,%.17g,%.17g,%.17g,%.17g,0,0,0\n"
             "1,1,1,%.17g,%.17g,%.17g,%.17g,%.17g,0,0,0\n",
             samples - floor(samples / 2), compute / 2, comm / 2, wait / 2,
             bytes - floor(bytes / 2), floor(samples / 2), compute / 2, comm / 2, wait / 2,
             floor(bytes / 2));
    harness_write(dir, "workers.csv", text);
    if (isnan(target))
        snprintf(text, sizeof(text), "{ \"scenario\": { \"stop\": { \"time_s\": 10 } } }\n");
    else
        snprintf(text, sizeof(text),
                 "{ \"scenario\": { \"stop\": { \"time_s\": 10, \"target_accuracy\": %g } } }\n",
                 target);
    harness_write(dir, "run.json", text);
}

/* The field named `col` of the CSV row whose first field is `key`, as a number (NaN for an
 * empty field). */
static double csv_get(const char *csv, const char *key, const char *col)
{
    return harness_csv_field(csv, key, 1, col);
}

/* The sweep of the first cases: protocol "a" (lr 0.1) reaches 0.8 at 2, 3 and 5 s in three
 * of its four runs, the fourth is observed until 6 s without reaching it; protocol "b" (lr
 * 0.1) never reaches it (observed until 6 and 4 s). */
static char *hand_sweep(void)
{
    char *dir = harness_tmpdir("report");
    fake_run(dir, "a1", "0:0.1 1:0.5 2:0.8 3:0.81", 100, 1, 1, 2, 2000, 0.8);
    fake_run(dir, "a2", "0:0.1 2:0.7 3:0.85 4:0.82", 100, 2, 1, 1, 2000, 0.8);
    fake_run(dir, "a3", "0:0.1 4:0.79 5:0.9 6:0.85", 200, 1, 0, 3, 2000, 0.8);
    fake_run(dir, "a4", "0:0.1 3:0.75 6:0.7", 200, 4, 0, 0, 2000, 0.8);
    fake_run(dir, "b1", "0:0.1 3:0.6 6:0.7", 100, 1, 1, 2, 500, 0.8);
    fake_run(dir, "b2", "0:0.1 4:0.6", 100, 1, 1, 2, 500, 0.8);
    char text[4096];
    snprintf(text, sizeof(text),
             "%s0,a1,a,0.1,1,target,3,0.81,0.81,2,1000,0.1\n"
             "1,a2,a,0.1,2,time,4,0.82,0.85,3,2000,0.1\n"
             "2,a3,a,0.1,3,time,6,0.85,0.9,5,3000,0.1\n"
             "3,a4,a,0.1,4,time,6,0.7,0.75,,4000,0.1\n"
             "4,b1,b,0.1,1,time,6,0.7,0.7,,500,0.1\n"
             "5,b2,b,0.1,2,time,4,0.6,0.6,,700,0.1\n"
             "6,gone,b,0.1,3,missing,,,,,,\n",
             harness_fake_index_head);
    harness_fake_index(dir, text);
    return dir;
}

/* The t quantiles of a two-sided 95% interval, from a table: t(0.975, df). */
static const double t975[] = { NAN, 12.7062047361747, 4.30265272974946, 3.18244630528371 };

/* Mean and 95% half-width of x[0..n), computed here from the definition. */
static void hand_ci(const double *x, size_t n, double *mean, double *half)
{
    double s = 0, ss = 0;
    for (size_t i = 0; i < n; i++)
        s += x[i];
    *mean = s / (double)n;
    for (size_t i = 0; i < n; i++)
        ss += (x[i] - *mean) * (x[i] - *mean);
    *half = t975[n - 1] * sqrt(ss / (double)(n - 1)) / sqrt((double)n);
}

static void near(double got, double want, const char *what)
{
    ck_assert_msg(fabs(got - want) <= 1e-7 * fmax(1.0, fabs(want)), "%s: %.12g, expected %.12g",
                  what, got, want);
}

START_TEST(report_intervals_match_a_hand_computation_and_censored_runs_count_as_more_than_t)
{
    char *dir = hand_sweep();
    harness_result r =
        harness_hetsim((const char *[]){ "report", dir, "--by", "proto", "--format", "csv", NULL });
    ck_assert_msg(r.status == 0, "%s", r.err);
    ck_assert_ptr_nonnull(strstr(r.err, "left out 1 point without results"));
    ck_assert_ptr_eq(strstr(r.out, "proto,runs,target,reached,ttt_mean_s,ttt_ci95_s,"
                                   "censored_after_s,final_accuracy_mean,final_accuracy_ci95,"),
                     r.out);
    double m, h;
    /* Time to target from the curves (a2 reached it at 3 s whatever its stop reason). */
    hand_ci((const double[]){ 2, 3, 5 }, 3, &m, &h);
    near(csv_get(r.out, "a", "ttt_mean_s"), m, "a: ttt mean");
    near(csv_get(r.out, "a", "ttt_ci95_s"), h, "a: ttt half-width");
    near(h, 3.7945830336, "a: ttt half-width by hand");
    ck_assert_double_eq(csv_get(r.out, "a", "reached"), 3);
    ck_assert_double_eq(csv_get(r.out, "a", "runs"), 4);
    ck_assert_double_eq(csv_get(r.out, "a", "censored_after_s"), 6);
    near(csv_get(r.out, "a", "target"), 0.8, "target from run.json");
    hand_ci((const double[]){ 0.81, 0.82, 0.85, 0.7 }, 4, &m, &h);
    near(csv_get(r.out, "a", "final_accuracy_mean"), m, "a: final mean");
    near(csv_get(r.out, "a", "final_accuracy_ci95"), h, "a: final half-width");
    hand_ci((const double[]){ 1000, 2000, 3000, 4000 }, 4, &m, &h);
    near(csv_get(r.out, "a", "throughput_sps_ci95"), h, "a: throughput half-width");
    hand_ci((const double[]){ 20, 20, 10, 10 }, 4, &m, &h);
    near(csv_get(r.out, "a", "bytes_per_sample_mean"), m, "a: bytes per sample");
    hand_ci((const double[]){ 0.5, 0.25, 0.75, 0 }, 4, &m, &h);
    near(csv_get(r.out, "a", "wait_share_mean"), m, "a: wait share");
    near(csv_get(r.out, "a", "wait_share_ci95"), h, "a: wait share half-width");
    hand_ci((const double[]){ 0.25, 0.25, 0, 0 }, 4, &m, &h);
    near(csv_get(r.out, "a", "comm_share_mean"), m, "a: comm share");
    /* b never reached it: no number, censored after its shortest observation. */
    ck_assert(isnan(csv_get(r.out, "b", "ttt_mean_s")));
    ck_assert(isnan(csv_get(r.out, "b", "ttt_ci95_s")));
    ck_assert_double_eq(csv_get(r.out, "b", "reached"), 0);
    ck_assert_double_eq(csv_get(r.out, "b", "censored_after_s"), 4);
    hand_ci((const double[]){ 0.7, 0.6 }, 2, &m, &h);
    near(csv_get(r.out, "b", "final_accuracy_ci95"), h, "b: final half-width (1 df)");
    /* The Markdown table says the same. */
    r = harness_hetsim((const char *[]){ "report", dir, "--by", "proto", NULL });
    ck_assert_msg(r.status == 0, "%s", r.err);
    ck_assert_msg(strstr(r.out, "| proto | runs | time to 0.8 (s) | reached | final accuracy |") ==
                      r.out,
                  "%s", r.out);
    ck_assert_msg(strstr(r.out, "| a | 4 | 3.3 ± 3.8 | 3/4 (others > 6) | 0.79 ± 0.10 |") != NULL,
                  "%s", r.out);
    ck_assert_msg(strstr(r.out, "| b | 2 | > 4 | 0/2 | 0.65 ± 0.64 |") != NULL, "%s", r.out);
    /* Another target, from the curves: 0.7 is reached by every run of a, and by b1 at 6 s. */
    r = harness_hetsim((const char *[]){ "report", dir, "--by", "proto", "--target", "0.7",
                                         "--format", "csv", NULL });
    ck_assert_msg(r.status == 0, "%s", r.err);
    hand_ci((const double[]){ 2, 2, 4, 3 }, 4, &m, &h);
    near(csv_get(r.out, "a", "ttt_mean_s"), m, "a at 0.7");
    ck_assert_double_eq(csv_get(r.out, "b", "ttt_mean_s"), 6);
    ck_assert(isnan(csv_get(r.out, "b", "ttt_ci95_s"))); /* one run: no interval */
    ck_assert_double_eq(csv_get(r.out, "b", "censored_after_s"), 4);
    harness_cleanup(dir);
}
END_TEST

/* --best-over: per group, the value with the most runs reaching the target, then the
 * shortest mean time, then the best final accuracy. */
START_TEST(report_best_over_picks_each_groups_best_value)
{
    char *dir = harness_tmpdir("report");
    /* a: lr 0.1 fast in one run of two, lr 0.2 slower in both (wins: all reached);
     *    lr 0.3 as fast as 0.2 with a worse final accuracy.
     * b: no lr reaches it; lr 0.3 ends best. */
    fake_run(dir, "a1", "0:0 1:0.9", 1, 1, 0, 0, 1, 0.8);
    fake_run(dir, "a2", "0:0 2:0.5", 1, 1, 0, 0, 1, 0.8);
    fake_run(dir, "a3", "0:0 3:0.8", 1, 1, 0, 0, 1, 0.8);
    fake_run(dir, "a4", "0:0 3:0.8", 1, 1, 0, 0, 1, 0.8);
    fake_run(dir, "a5", "0:0 3:0.8", 1, 1, 0, 0, 1, 0.8);
    fake_run(dir, "a6", "0:0 3:0.8", 1, 1, 0, 0, 1, 0.8);
    fake_run(dir, "b1", "0:0 3:0.5", 1, 1, 0, 0, 1, 0.8);
    fake_run(dir, "b2", "0:0 3:0.6", 1, 1, 0, 0, 1, 0.8);
    char text[4096];
    snprintf(text, sizeof(text),
             "%s0,a1,a,0.1,1,time,3,0.9,0.9,,1,0\n1,a2,a,0.1,2,time,3,0.5,0.5,,1,0\n"
             "2,a3,a,0.2,1,time,3,0.85,0.85,,1,0\n3,a4,a,0.2,2,time,3,0.85,0.85,,1,0\n"
             "4,a5,a,0.3,1,time,3,0.8,0.8,,1,0\n5,a6,a,0.3,2,time,3,0.8,0.8,,1,0\n"
             "6,b1,b,0.2,1,time,3,0.5,0.5,,1,0\n7,b2,b,0.3,1,time,3,0.6,0.6,,1,0\n",
             harness_fake_index_head);
    harness_fake_index(dir, text);
    harness_result r = harness_hetsim((const char *[]){
        "report", dir, "--by", "proto", "--best-over", "lr", "--format", "csv", NULL });
    ck_assert_msg(r.status == 0, "%s", r.err);
    ck_assert_ptr_eq(strstr(r.out, "proto,lr,runs,"), r.out);
    ck_assert_double_eq(csv_get(r.out, "a", "lr"), 0.2);
    ck_assert_double_eq(csv_get(r.out, "a", "ttt_mean_s"), 3);
    ck_assert_double_eq(csv_get(r.out, "a", "runs"), 2);
    ck_assert_double_eq(csv_get(r.out, "b", "lr"), 0.3);
    r = harness_hetsim(
        (const char *[]){ "report", dir, "--by", "proto", "--best-over", "lr", NULL });
    ck_assert_msg(r.status == 0, "%s", r.err);
    ck_assert_ptr_nonnull(strstr(r.out, "| proto | best lr | runs |"));
    ck_assert_ptr_nonnull(strstr(r.out, "| a | 0.2 | 2 | 3.000 ± 0 |"));
    ck_assert_ptr_nonnull(strstr(r.out, "| b | 0.3 | 1 | > 3 | 0/1 |"));
    harness_cleanup(dir);
}
END_TEST

START_TEST(report_refuses_bad_usage_with_exit_code_2_and_prints_nothing)
{
    char *dir = hand_sweep(), run[1100], other[1100];
    snprintf(run, sizeof(run), "%s/a1", dir);
    const char *const *cases[] = {
        (const char *[]){ "report", NULL },
        (const char *[]){ "report", dir, NULL },
        (const char *[]){ "report", dir, "--by", NULL },
        (const char *[]){ "report", dir, "--by", "nosuch", NULL },
        (const char *[]){ "report", dir, "--by", "final_accuracy", NULL },
        (const char *[]){ "report", dir, "--by", "proto", "--format", "xls", NULL },
        (const char *[]){ "report", dir, "--by", "proto", "--target", "0", NULL },
        (const char *[]){ "report", dir, "--by", "proto", "--target", "1.5", NULL },
        (const char *[]){ "report", dir, "--by", "proto", "--target", "0.8x", NULL },
        (const char *[]){ "report", dir, "--by", "proto", "--best-over", "proto", NULL },
        (const char *[]){ "report", dir, "--by", "proto", "--best-over", "nope", NULL },
        (const char *[]){ "report", dir, "--by", "proto", "--bogus", NULL },
        (const char *[]){ "report", dir, dir, "--by", "proto", NULL },
        (const char *[]){ "report", run, "--by", "proto", NULL },
        (const char *[]){ "report", "no/such/dir", "--by", "proto", NULL },
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        harness_result r = harness_hetsim(cases[i]);
        ck_assert_msg(r.status == 2, "case %zu exited %d: %s", i, r.status, r.err);
        ck_assert_str_eq(r.out, "");
        ck_assert_msg(strlen(r.err) > 0, "case %zu said nothing", i);
    }
    harness_result r = harness_hetsim((const char *[]){ "report", dir, "--by", "nosuch", NULL });
    ck_assert_ptr_nonnull(
        strstr(r.err, "index.csv: no column \"nosuch\" (valid: proto, lr, seed)"));
    r = harness_hetsim((const char *[]){ "report", run, "--by", "proto", NULL });
    ck_assert_ptr_nonnull(strstr(r.err, "is a run directory, not a sweep's"));
    /* Runs that stop at different targets: --target says which. b2's run.json holds its
     * row's proto, lr and seed, as a sweep's does. */
    snprintf(other, sizeof(other), "%s/b2/run.json", dir);
    remove(other);
    snprintf(other, sizeof(other), "%s/b2", dir);
    harness_write(other, "run.json",
                  "{ \"scenario\": { \"proto\": \"b\", \"lr\": 0.1, \"seed\": 2, \"stop\": "
                  "{ \"target_accuracy\": 0.9 } } }");
    r = harness_hetsim((const char *[]){ "report", dir, "--by", "proto", NULL });
    ck_assert_int_eq(r.status, 2);
    ck_assert_ptr_nonnull(strstr(r.err, "different target accuracies (0.8 in a1, 0.9 in b2): "
                                        "choose one with --target"));
    r = harness_hetsim((const char *[]){ "report", dir, "--by", "proto", "--target", "0.8", NULL });
    ck_assert_int_eq(r.status, 0);
    /* A sweep's directory without index.csv yet (the sweep was killed, or is running). */
    char unfinished[1200];
    snprintf(unfinished, sizeof(unfinished), "%s/unfinished", dir);
    ck_assert_int_eq(mkdir(unfinished, 0777), 0);
    harness_write(unfinished, ".hetsim-sweep", "");
    r = harness_hetsim((const char *[]){ "report", unfinished, "--by", "proto", NULL });
    ck_assert_int_eq(r.status, 2);
    ck_assert_msg(strstr(r.err, "unfinished: no index.csv yet: its sweep has not finished (run "
                                "the same `hetsim sweep` again") != NULL,
                  "%s", r.err);
    /* An index.csv that is not hetsim's (empty, or another header) is named in the message
     * (found by the index fuzz target: the path was cleared before the message was made). */
    char expect[1300];
    static const char *const bad[] = { "", "point,dir,x\n0,a,1\n" };
    static const char *const why[] = { "empty file (no header row)", "not an index of hetsim" };
    for (size_t i = 0; i < 2; i++) {
        harness_write(dir, "index.csv", bad[i]);
        r = harness_hetsim((const char *[]){ "report", dir, "--by", "proto", NULL });
        ck_assert_int_eq(r.status, 2);
        snprintf(expect, sizeof(expect), "%s/index.csv: %s", dir, why[i]);
        ck_assert_msg(strstr(r.err, expect) != NULL, "case %zu: %s", i, r.err);
    }
    /* Lone "\r" line ends (found by the index fuzz target: rows were counted by "\n" only,
     * and a file of carriage returns wrote past the table): not line ends of hetsim's, so the
     * file is one line cut short (exit 2 naming it), under the sanitizers too. */
    harness_write(dir, "index.csv",
                  "point,dir,proto,seed,stop_reason\r0,a,x,1,time\r1,b,x,2,time\r2,c,x,3,time\r"
                  "3,d,x,4,time\r4,e\r");
    r = harness_hetsim((const char *[]){ "report", dir, "--by", "proto", NULL });
    ck_assert_int_eq(r.status, 2);
    ck_assert_msg(strstr(r.err, "index.csv: line 1: truncated (no end of line)") != NULL, "%s",
                  r.err);
    harness_cleanup(dir);
}
END_TEST

/* The value in column `col` of data row `row` (0 = first after the header) of a CSV. */
static double csv_at(const char *csv, size_t row, const char *col)
{
    char key[32];
    snprintf(key, sizeof(key), "%zu", row);
    /* csv_get keys rows by their first field: prefix each row with its number. */
    size_t len = strlen(csv) * 2 + 64, k = 0, r = 0;
    char *text = malloc(len);
    k += (size_t)snprintf(text, len, "row,");
    for (const char *p = csv; *p != '\0'; p++) {
        text[k++] = *p;
        if (*p == '\n' && p[1] != '\0')
            k += (size_t)snprintf(text + k, len - k, "%zu,", r++);
    }
    text[k] = '\0';
    double v = csv_get(text, key, col);
    free(text);
    return v;
}

/* plot --by: bands at the 95% interval of the mean (or min-max), time to target from the
 * curves with the groups that did not reach it marked, any number of groups. */
START_TEST(plot_by_draws_intervals_and_time_to_target_from_the_curves)
{
    char *dir = hand_sweep(), out[1100], path[1300];
    snprintf(out, sizeof(out), "%s/fig", dir);
    harness_result r =
        harness_hetsim((const char *[]){ "plot", dir, "--by", "proto", "-o", out, NULL });
    ck_assert_msg(r.status == 0, "%s", r.err);
    char *band = harness_slurp(out, "by-proto-0.csv"),
         *ttt = harness_slurp(out, "ttt-by-proto.csv");
    double m, h;
    /* Row 1 of a's curves: 0.5, 0.7, 0.79, 0.75. */
    hand_ci((const double[]){ 0.5, 0.7, 0.79, 0.75 }, 4, &m, &h);
    near(csv_at(band, 1, "acc_mean"), m, "band mean");
    near(csv_at(band, 1, "acc_lo"), m - h, "band lo");
    near(csv_at(band, 1, "acc_hi"), m + h, "band hi");
    ck_assert_double_eq(csv_at(band, 1, "n"), 4);
    ck_assert_double_eq(csv_at(band, 3, "n"), 3); /* a4 has three rows */
    hand_ci((const double[]){ 2, 3, 5 }, 3, &m, &h);
    near(csv_get(ttt, "a", "mean"), m, "ttt mean");
    near(csv_get(ttt, "a", "hi"), m + h, "ttt hi");
    ck_assert_ptr_nonnull(strstr(ttt, ",3/4,NaN,-\n"));
    ck_assert(isnan(csv_get(ttt, "b", "mean")));
    ck_assert_ptr_nonnull(strstr(ttt, "\nb,NaN,NaN,NaN,0,2,NaN,-,0,not reached (> 4 s)\n"));
    snprintf(path, sizeof(path), "%s/ttt-by-proto.png", out);
    ck_assert(harness_exists(path));
    free(band);
    free(ttt);
    /* --band minmax, another target. */
    r = harness_hetsim((const char *[]){ "plot", dir, "--by", "proto", "-o", out, "--band",
                                         "minmax", "--target", "0.7", NULL });
    ck_assert_msg(r.status == 0, "%s", r.err);
    band = harness_slurp(out, "by-proto-0.csv");
    ttt = harness_slurp(out, "ttt-by-proto.csv");
    ck_assert_double_eq(csv_at(band, 1, "acc_lo"), 0.5);
    ck_assert_double_eq(csv_at(band, 1, "acc_hi"), 0.79);
    near(csv_get(ttt, "a", "mean"), 2.75, "ttt at 0.7");
    free(band);
    free(ttt);
    /* A target no run reached: no time-to-target figure, and the log says why. */
    r = harness_hetsim(
        (const char *[]){ "plot", dir, "--by", "proto", "-o", out, "--target", "0.99", NULL });
    ck_assert_msg(r.status == 0, "%s", r.err);
    ck_assert_ptr_nonnull(strstr(r.err, "no ttt-by-proto.png: no run reached test accuracy 0.99"));
    r = harness_hetsim((const char *[]){ "plot", dir, "--by", "proto", "--band", "sd", NULL });
    ck_assert_int_eq(r.status, 2);
    r = harness_hetsim((const char *[]){ "plot", dir, "--by", "proto", "--target", "2", NULL });
    ck_assert_int_eq(r.status, 2);
    harness_cleanup(dir);
}
END_TEST

/* Twenty values of a key in one figure (the limit was eight). */
START_TEST(plot_by_draws_twenty_groups_in_one_figure)
{
    char *dir = harness_tmpdir("report"), name[32], out[1100], path[1300];
    char *index = malloc(65536);
    size_t len = (size_t)snprintf(index, 65536, "%s", harness_fake_index_head);
    for (int i = 0; i < 40; i++) {
        snprintf(name, sizeof(name), "r%d", i);
        fake_run(dir, name, i % 2 ? "0:0.1 1:0.6 2:0.9" : "0:0.1 1:0.5 2:0.85", 1, 1, 0, 0, 1, 0.8);
        len += (size_t)snprintf(index + len, 65536 - len,
                                "%d,%s,p%02d,0.1,%d,time,2,0.9,0.9,,1,0\n", i, name, i / 2, i % 2);
    }
    harness_fake_index(dir, index);
    free(index);
    snprintf(out, sizeof(out), "%s/fig", dir);
    harness_result r =
        harness_hetsim((const char *[]){ "plot", dir, "--by", "proto", "-o", out, NULL });
    ck_assert_msg(r.status == 0, "%s", r.err);
    snprintf(path, sizeof(path), "%s/by-proto-19.csv", out);
    ck_assert(harness_exists(path));
    snprintf(path, sizeof(path), "%s/by-proto.png", out);
    ck_assert(harness_exists(path));
    snprintf(path, sizeof(path), "%s/ttt-by-proto.png", out);
    ck_assert(harness_exists(path));
    snprintf(path, sizeof(path), "%s/breakdown-by-proto.png", out);
    ck_assert(harness_exists(path));
    char *b = harness_slurp(out, "breakdown-by-proto.csv");
    size_t lines = 0;
    for (const char *p = b; *p != '\0'; p++)
        lines += *p == '\n';
    ck_assert_uint_eq(lines, 21); /* the header and a row per group */
    ck_assert_ptr_nonnull(strstr(b, "\np19,"));
    free(b);
    harness_cleanup(dir);
}
END_TEST

/* A run whose workers.csv has the column comm_overlap_s (communication that overlapped the
 * worker's own computation) after down_s and before params_fnv, as hetsim writes it now:
 * two workers, each "compute comm wait overlap" given in `w0` and `w1`. */
static void overlap_run(const char *sweep, const char *name, const double *w0, const double *w1)
{
    char dir[1024], text[2048];
    snprintf(dir, sizeof(dir), "%s/%s", sweep, name);
    ck_assert_int_eq(mkdir(dir, 0777), 0);
    harness_write(dir, "metrics.csv",
                  "time_s,iterations,samples,epoch,train_loss,test_loss,test_accuracy,consensus,"
                  "throughput_sps\n0,0,0,0,1,1,0.1,0,0\n1,10,100,0,1,1,0.6,0,100\n");
    snprintf(text, sizeof(text),
             "worker,speed,iterations,samples,compute_s,comm_s,wait_s,bytes_sent,"
             "bytes_received,down_s,comm_overlap_s,params_fnv\n"
             "0,1,5,50,%g,%g,%g,1000,1000,0,%g,9f2c41d07a31b6e5\n"
             "1,1,5,50,%g,%g,%g,1000,1000,0,%g,9f2c41d07a31b6e5\n",
             w0[0], w0[1], w0[2], w0[3], w1[0], w1[1], w1[2], w1[3]);
    harness_write(dir, "workers.csv", text);
    harness_write(dir, "run.json", "{ \"scenario\": { \"stop\": { \"time_s\": 1 } } }\n");
}

/* workers.csv is read by its header's names, wherever a column stands: with comm_overlap_s
 * the report adds "comm. incl. overlap" (comm_s + comm_overlap_s over compute_s + comm_s +
 * wait_s) and the breakdown figure splits compute into what communication overlapped and
 * what it did not; without it, neither appears. */
START_TEST(report_and_breakdown_show_communication_that_overlapped_computation)
{
    char *dir = harness_tmpdir("report"), out[1100], path[1300];
    /* o1: compute 5, comm 1.5, wait 1.5, overlap 2 (of 8 s); o2: 8, 4, 4, 2 (of 16 s). */
    overlap_run(dir, "o1", (const double[]){ 3, 1, 0.5, 1.5 }, (const double[]){ 2, 0.5, 1, 0.5 });
    overlap_run(dir, "o2", (const double[]){ 4, 2, 2, 1 }, (const double[]){ 4, 2, 2, 1 });
    fake_run(dir, "p1", "0:0.1 1:0.6", 100, 6, 2, 0, 1000, NAN);
    char text[1024];
    snprintf(text, sizeof(text),
             "%s0,o1,over,0.1,1,time,1,0.6,0.6,,100,0.1\n1,o2,over,0.1,2,time,1,0.6,0.6,,100,0.1\n"
             "2,p1,plain,0.1,1,time,1,0.6,0.6,,100,0.1\n",
             harness_fake_index_head);
    harness_fake_index(dir, text);
    harness_result r =
        harness_hetsim((const char *[]){ "report", dir, "--by", "proto", "--format", "csv", NULL });
    ck_assert_msg(r.status == 0, "%s", r.err);
    double m, h;
    hand_ci((const double[]){ 1.5 / 8, 4.0 / 16 }, 2, &m, &h);
    near(csv_get(r.out, "over", "comm_share_mean"), m, "comm share");
    near(csv_get(r.out, "over", "comm_share_ci95"), h, "comm share interval");
    hand_ci((const double[]){ 3.5 / 8, 6.0 / 16 }, 2, &m, &h);
    near(csv_get(r.out, "over", "comm_incl_overlap_share_mean"), m, "comm incl. overlap");
    near(csv_get(r.out, "over", "comm_incl_overlap_share_ci95"), h, "its interval");
    near(csv_get(r.out, "over", "wait_share_mean"), (1.5 / 8 + 4.0 / 16) / 2, "wait share");
    near(csv_get(r.out, "over", "bytes_per_sample_mean"), 20, "bytes per sample");
    /* A run without the column: nothing overlapped. */
    near(csv_get(r.out, "plain", "comm_incl_overlap_share_mean"), 0.25, "plain run");
    r = harness_hetsim((const char *[]){ "report", dir, "--by", "proto", NULL });
    ck_assert_msg(r.status == 0, "%s", r.err);
    ck_assert_ptr_nonnull(strstr(r.out, "| communicating (%) | comm. incl. overlap (%) |\n"));
    /* The breakdown figure: mean shares in percent over the group's runs. */
    snprintf(out, sizeof(out), "%s/fig", dir);
    r = harness_hetsim((const char *[]){ "plot", dir, "--by", "proto", "-o", out, NULL });
    ck_assert_msg(r.status == 0, "%s", r.err);
    char *b = harness_slurp(out, "breakdown-by-proto.csv");
    ck_assert_ptr_eq(strstr(b, "label,compute,overlap,comm,wait,down\n"), b);
    near(csv_get(b, "over", "compute"), 37.5, "compute not overlapped");
    near(csv_get(b, "over", "overlap"), (25 + 12.5) / 2, "compute overlapped");
    near(csv_get(b, "over", "comm"), (18.75 + 25) / 2, "communication");
    near(csv_get(b, "over", "wait"), (18.75 + 25) / 2, "waiting");
    near(csv_get(b, "over", "down"), 0, "down");
    near(csv_get(b, "plain", "compute"), 75, "plain compute");
    near(csv_get(b, "plain", "comm"), 25, "plain communication");
    free(b);
    snprintf(path, sizeof(path), "%s/breakdown-by-proto.png", out);
    ck_assert(harness_exists(path));
    /* Without the column anywhere: no overlap column in the report. */
    char *plain = harness_tmpdir("report");
    fake_run(plain, "p1", "0:0.1 1:0.6", 100, 6, 2, 0, 1000, NAN);
    snprintf(text, sizeof(text), "%s0,p1,plain,0.1,1,time,1,0.6,0.6,,100,0.1\n",
             harness_fake_index_head);
    harness_fake_index(plain, text);
    r = harness_hetsim((const char *[]){ "report", plain, "--by", "proto", NULL });
    ck_assert_msg(r.status == 0, "%s", r.err);
    ck_assert_ptr_null(strstr(r.out, "overlap"));
    r = harness_hetsim(
        (const char *[]){ "report", plain, "--by", "proto", "--format", "csv", NULL });
    ck_assert_ptr_null(strstr(r.out, "overlap"));
    harness_cleanup(plain);
    harness_cleanup(dir);
}
END_TEST

/* plot RUN...: arguments that are not runs are skipped with a warning; a sweep's directory
 * is pointed to --by. */
START_TEST(plot_runs_skips_non_runs_and_points_a_sweep_to_by)
{
    char *dir = hand_sweep(), a1[1100], a2[1100], junk[1100], out[1100];
    snprintf(a1, sizeof(a1), "%s/a1", dir);
    snprintf(a2, sizeof(a2), "%s/a2", dir);
    snprintf(junk, sizeof(junk), "%s/index.csv", dir);
    snprintf(out, sizeof(out), "%s/fig", dir);
    harness_result r = harness_hetsim((const char *[]){ "plot", a1, junk, a2, "-o", out, NULL });
    ck_assert_msg(r.status == 0, "%s", r.err);
    ck_assert_ptr_nonnull(strstr(r.err, "index.csv: not a run directory (no metrics.csv)"));
    r = harness_hetsim((const char *[]){ "plot", dir, "-o", out, NULL });
    ck_assert_int_eq(r.status, 2);
    ck_assert_msg(strstr(r.err, "is a sweep's directory: draw its runs with `hetsim plot") != NULL,
                  "%s", r.err);
    ck_assert_ptr_nonnull(strstr(r.err, "--by KEY"));
    r = harness_hetsim((const char *[]){ "plot", junk, NULL });
    ck_assert_int_eq(r.status, 2);
    harness_cleanup(dir);
}
END_TEST

/* Every "cannot read" a user can cause names its fix: a run directory missing a file (removed,
 * or copied in part) says to run it again, for report, plot --by and plot RUN alike, with exit
 * code 2 (it used to be exit 1 and "DIR/metrics.csv: cannot read"); the work directory of a
 * run that was cut short is skipped saying so. */
START_TEST(missing_run_files_are_named_with_their_fix)
{
    char *dir = hand_sweep(), path[1300], a1[1100], a2[1100], out[1100];
    snprintf(a1, sizeof(a1), "%s/a1", dir);
    snprintf(a2, sizeof(a2), "%s/a2", dir);
    snprintf(out, sizeof(out), "%s/fig", dir);
    snprintf(path, sizeof(path), "%s/b2/metrics.csv", dir);
    ck_assert_int_eq(remove(path), 0);
    static const char hint[] = "an incomplete run directory (files removed, or copied in part): "
                               "run it again";
    const char *const *cases[] = {
        (const char *[]){ "report", dir, "--by", "proto", NULL },
        (const char *[]){ "plot", dir, "--by", "proto", "-o", out, NULL },
    };
    for (size_t i = 0; i < 2; i++) {
        harness_result r = harness_hetsim(cases[i]);
        ck_assert_msg(r.status == 2, "case %zu exited %d: %s", i, r.status, r.err);
        ck_assert_msg(strstr(r.err, hint) != NULL, "case %zu: %s", i, r.err);
        ck_assert_msg(strstr(r.err, "b2/metrics.csv") != NULL, "case %zu: %s", i, r.err);
        ck_assert_str_eq(r.out, "");
    }
    snprintf(path, sizeof(path), "%s/a2/workers.csv", dir);
    ck_assert_int_eq(remove(path), 0);
    harness_result r = harness_hetsim((const char *[]){ "plot", a1, a2, "-o", out, NULL });
    ck_assert_msg(r.status == 2, "%s", r.err);
    ck_assert_msg(strstr(r.err, hint) != NULL && strstr(r.err, "a2/workers.csv") != NULL, "%s",
                  r.err);
    /* plot RUN: a run directory without metrics.csv, and a run's work directory, skipped. */
    char b2[1100], part[1100];
    snprintf(b2, sizeof(b2), "%s/b2", dir);
    snprintf(part, sizeof(part), "%s/c.partial", dir);
    ck_assert_int_eq(mkdir(part, 0777), 0);
    harness_write(part, ".hetsim-partial", "");
    harness_write(part, "metrics.csv", "time_s,test_accuracy\n0,0.1\n");
    r = harness_hetsim((const char *[]){ "plot", a1, b2, part, "-o", out, NULL });
    ck_assert_msg(r.status == 0, "%s", r.err);
    ck_assert_msg(strstr(r.err, "b2: a run directory without metrics.csv (files removed, or "
                                "copied in part): run it again") != NULL,
                  "%s", r.err);
    ck_assert_msg(strstr(r.err, "c.partial: the work directory of a run that was cut short "
                                "(killed before it finished): run it again") != NULL,
                  "%s", r.err);
    harness_cleanup(dir);
}
END_TEST

/* The file dir/name is a whole figure of its format: a PNG's last chunk is IEND, a PDF
 * starts with %PDF- and ends with %%EOF, an SVG parses as XML (python3's parser). */
static void whole_figure(const char *dir, const char *name)
{
    size_t n = 0;
    char path[1300];
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    char *d = harness_read(path, &n);
    const char *ext = strrchr(name, '.');
    if (strcmp(ext, ".png") == 0) {
        ck_assert_msg(n > 20 && memcmp(d, "\x89PNG\r\n\x1a\n", 8) == 0, "%s: no PNG", path);
        ck_assert_msg(memcmp(d + n - 8, "IEND", 4) == 0, "%s: no IEND chunk at the end", path);
    } else if (strcmp(ext, ".pdf") == 0) {
        ck_assert_msg(n > 20 && memcmp(d, "%PDF-", 5) == 0, "%s: no PDF header", path);
        while (n > 0 && (d[n - 1] == '\n' || d[n - 1] == '\r'))
            n--;
        ck_assert_msg(n > 5 && memcmp(d + n - 5, "%%EOF", 5) == 0, "%s: no %%%%EOF", path);
    } else {
        char cmd[1500];
        snprintf(cmd, sizeof(cmd),
                 "python3 -c 'import sys, xml.etree.ElementTree as E; "
                 "sys.exit(E.parse(sys.argv[1]).getroot().tag.endswith(\"svg\") == False)' '%s'",
                 path);
        ck_assert_msg(system(cmd) == 0, "%s: not an SVG document", path);
    }
    free(d);
}

/* --format png|pdf|svg: every figure of plot --by and plot RUN... in that format, whole. */
START_TEST(plot_writes_whole_png_pdf_and_svg_figures)
{
    static const char *const formats[] = { "png", "pdf", "svg" };
    char *dir = hand_sweep(), out[1100], a1[1100], b1[1100], name[64];
    snprintf(out, sizeof(out), "%s/fig", dir);
    snprintf(a1, sizeof(a1), "%s/a1", dir);
    snprintf(b1, sizeof(b1), "%s/b1", dir);
    for (size_t i = 0; i < 3; i++) {
        const char *f = formats[i];
        harness_result r = harness_hetsim(
            (const char *[]){ "plot", dir, "--by", "proto", "-o", out, "--format", f, NULL });
        ck_assert_msg(r.status == 0, "%s: %s", f, r.err);
        r = harness_hetsim((const char *[]){ "plot", a1, b1, "-o", out, "--format", f, NULL });
        ck_assert_msg(r.status == 0, "%s: %s", f, r.err);
        static const char *const figs[] = { "by-proto",    "ttt-by-proto", "breakdown-by-proto",
                                            "convergence", "throughput",   "breakdown" };
        for (size_t k = 0; k < 6; k++) {
            snprintf(name, sizeof(name), "%s.%s", figs[k], f);
            whole_figure(out, name);
        }
    }
    harness_result r = harness_hetsim((const char *[]){ "plot", a1, "--format", "eps", NULL });
    ck_assert_int_eq(r.status, 2);
    ck_assert_ptr_nonnull(strstr(r.err, "--format takes png, pdf or svg"));
    harness_cleanup(dir);
}
END_TEST

/* --style DIR: the scripts found there replace the built-in ones (any subset). */
START_TEST(plot_style_draws_with_the_users_copies_of_the_scripts)
{
    char *dir = hand_sweep(), style[1100], empty[1100], a1[1100], out[1100];
    snprintf(style, sizeof(style), "%s/style", dir);
    snprintf(empty, sizeof(empty), "%s/empty", dir);
    snprintf(a1, sizeof(a1), "%s/a1", dir);
    snprintf(out, sizeof(out), "%s/fig", dir);
    ck_assert_int_eq(mkdir(style, 0777), 0);
    ck_assert_int_eq(mkdir(empty, 0777), 0);
    harness_write(style, "convergence.gp", "this is not gnuplot\n");
    /* The broken copy is used: the run figures fail, naming gnuplot's complaint and the copy,
     * as bad input (exit 2). */
    harness_result r =
        harness_hetsim((const char *[]){ "plot", a1, "-o", out, "--style", style, NULL });
    ck_assert_msg(r.status == 2, "exit %d: %s", r.status, r.err);
    ck_assert_ptr_nonnull(strstr(r.err, "gnuplot failed drawing convergence.png"));
    ck_assert_ptr_nonnull(strstr(r.err, "style/convergence.gp)"));
    /* The sweep figures' scripts are not in the style: built in, they draw. */
    r = harness_hetsim(
        (const char *[]){ "plot", dir, "--by", "proto", "-o", out, "--style", style, NULL });
    ck_assert_msg(r.status == 0, "%s", r.err);
    r = harness_hetsim((const char *[]){ "plot", a1, "-o", out, "--style", empty, NULL });
    ck_assert_int_eq(r.status, 2);
    ck_assert_ptr_nonnull(strstr(r.err, "holds none of hetsim's plot scripts"));
    r = harness_hetsim((const char *[]){ "plot", a1, "-o", out, "--style", a1, NULL });
    ck_assert_int_eq(r.status, 2);
    harness_cleanup(dir);
}
END_TEST

/* curves.csv: a row per (point, evaluation), a column per swept key, then seed and the
 * metrics, each row's metrics those of its run's metrics.csv; index.csv a column per key. */
START_TEST(sweep_writes_tidy_curves_and_index_with_a_column_per_swept_key)
{
    char *dir = harness_tmpdir("report"), file[1100], out[1100], run[1300];
    harness_write(dir, "base.json", harness_small_json);
    snprintf(out, sizeof(out), "%s/out", dir);
    char text[2048];
    snprintf(text, sizeof(text),
             "{ \"base\": \"base.json\", \"grid\": { \"protocol.name\": [\"allreduce\", "
             "\"dpsgd\"], \"zip\": { \"workers\": [4], \"workload.lr\": [0.1] } }, "
             "\"seeds\": 2, \"output\": { \"dir\": \"%s\" } }\n",
             out);
    harness_write(dir, "sw.json", text);
    snprintf(file, sizeof(file), "%s/sw.json", dir);
    harness_result r =
        harness_hetsim((const char *[]){ "sweep", file, "-j", "2", "--quiet", NULL });
    ck_assert_msg(r.status == 0, "%s", r.err);
    char *index = harness_slurp(out, "index.csv"), *curves = harness_slurp(out, "curves.csv");
    ck_assert_ptr_eq(strstr(index, "point,dir,protocol.name,workers,workload.lr,seed,stop_reason,"),
                     index);
    ck_assert_ptr_eq(strstr(curves, "point,protocol.name,workers,workload.lr,seed,time_s,"
                                    "iterations,samples,epoch,train_loss,test_loss,"
                                    "test_accuracy,consensus,throughput_sps\n"),
                     curves);
    ck_assert_uint_eq(harness_count_lines(curves), 1 + 4 * 5); /* 4 points, evaluations at 0..4 s */
    /* Point 3 (dpsgd, seed 6): its rows are its metrics.csv's, behind its keys. */
    snprintf(run, sizeof(run), "%s/protocol.name=dpsgd,workers=4,workload.lr=0.1,seed=6", out);
    char *metrics = harness_slurp(run, "metrics.csv"), *save = NULL;
    strtok_r(metrics, "\n", &save);
    for (char *line = strtok_r(NULL, "\n", &save); line != NULL;
         line = strtok_r(NULL, "\n", &save)) {
        char want[600];
        snprintf(want, sizeof(want), "\n3,dpsgd,4,0.1,6,%s\n", line);
        ck_assert_msg(strstr(curves, want) != NULL, "no row %s in %s", want, curves);
    }
    free(metrics);
    /* A report of the real runs. */
    r = harness_hetsim(
        (const char *[]){ "report", out, "--by", "protocol.name", "--target", "0.5", NULL });
    ck_assert_msg(r.status == 0, "%s", r.err);
    ck_assert_ptr_nonnull(strstr(r.out, "| allreduce | 2 | "));
    ck_assert_ptr_nonnull(strstr(r.out, "| dpsgd | 2 | "));
    free(index);
    free(curves);
    harness_cleanup(dir);
}
END_TEST

Suite *test_suite(void)
{
    Suite *s = suite_create("report");
    TCase *tc = tcase_create("report");
    tcase_add_test(
        tc, report_intervals_match_a_hand_computation_and_censored_runs_count_as_more_than_t);
    tcase_add_test(tc, report_best_over_picks_each_groups_best_value);
    tcase_add_test(tc, report_refuses_bad_usage_with_exit_code_2_and_prints_nothing);
    tcase_add_test(tc, sweep_writes_tidy_curves_and_index_with_a_column_per_swept_key);
    tcase_add_test(tc, plot_by_draws_intervals_and_time_to_target_from_the_curves);
    tcase_add_test(tc, plot_by_draws_twenty_groups_in_one_figure);
    tcase_add_test(tc, report_and_breakdown_show_communication_that_overlapped_computation);
    tcase_add_test(tc, plot_runs_skips_non_runs_and_points_a_sweep_to_by);
    tcase_add_test(tc, missing_run_files_are_named_with_their_fix);
    tcase_add_test(tc, plot_writes_whole_png_pdf_and_svg_figures);
    tcase_add_test(tc, plot_style_draws_with_the_users_copies_of_the_scripts);
    tcase_set_timeout(tc, 240);
    suite_add_tcase(s, tc);
    return s;
}
