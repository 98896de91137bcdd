/* Issue 38, the seventeenth probe, classes 7 to 12 (sums of user numbers, non-finite totals, a
 * golden's consistency, results that depend on eval.every_s or --threads, damaged results
 * files, JSON oddities). Each case failed before its fix.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "harness.h"

typedef harness_result result;

/* A timing-only run of 3 workers on allreduce, for 10 ms, its compute `compute` and its
 * profile p.csv. */
#define TIMED(compute)                                                                  \
    "{\"seed\": 5, \"workers\": 3, \"compute\": {" compute ", \"profile\": \"p.csv\"}," \
    " \"workload\": {\"model\": {\"name\": \"none\"}, \"batch\": 8},"                   \
    " \"protocol\": {\"name\": \"allreduce\"}, \"stop\": {\"time_s\": 0.01},"           \
    " \"eval\": {\"every_s\": 0.01}}"

/* A base time a profile sets below the clock's 1 ns (measured times that sum to 0 ms, FLOPs
 * over a gflops or a device's efficiency that give 1e-28 s) was taken as 1 ns, exit 0, as
 * speeds and iteration_ms below it were before they were refused: gflops 1e300 and 1e200
 * ran the same, and an AD-PSGD run of such a profile ran 1-ns iterations for minutes (killed
 * at 20 s). Refused now, exit 2, naming the key and the clock's resolution. */
START_TEST(a_profiles_base_time_below_a_nanosecond_is_refused)
{
    static const struct {
        const char *profile, *scenario, *path;
    } cases[] = {
        { "name,params,forward_flops,forward_ms,backward_ms\nl0,1000,10,0,0\nl1,1000,10,0,0\n",
          TIMED("\"jitter_sigma\": 0"), "$.compute.profile" },
        { "name,params,forward_flops\nl0,1000,10\n", TIMED("\"gflops\": 1e300"),
          "$.compute.profile" },
        { "name,params,forward_flops\nl0,1000,1e-320\n", TIMED("\"gflops\": 1e-300"),
          "$.compute.profile" },
        { "name,params,forward_flops\nl0,1000,1e-300\n",
          TIMED("\"device\": \"v100\", \"efficiency\": 1"), "$.compute.efficiency" },
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char *dir = harness_tmpdir("probe42");
        harness_write(dir, "p.csv", cases[i].profile);
        harness_write(dir, "s.json", cases[i].scenario);
        char s[600], out[600], want[200];
        snprintf(s, sizeof(s), "%s/s.json", dir);
        snprintf(out, sizeof(out), "%s/out", dir);
        result res = harness_hetsim((const char *[]){ "run", s, "-o", out, "--quiet", NULL });
        snprintf(want, sizeof(want), "%s: an iteration would last", cases[i].path);
        ck_assert_msg(res.status == 2 && strstr(res.err, want) != NULL &&
                          strstr(res.err, "less than the clock's resolution of 1 ns") != NULL &&
                          !harness_exists(out),
                      "case %zu: exit %d, want 2 and \"%s ... 1 ns\"\n%.600s", i, res.status, want,
                      res.err);
        harness_cleanup(dir);
    }
}
END_TEST

/* A short run of softmax on synthetic data, `extra` added at its top level. */
#define SHORT(extra)                                                                           \
    "{\"name\": \"g\", \"seed\": 5, \"workers\": 3, \"compute\": {\"iteration_ms\": 20},"      \
    " \"workload\": {\"dataset\": {\"name\": \"synthetic\", \"samples\": 400,"                 \
    " \"test_samples\": 50}, \"model\": {\"name\": \"softmax\"}, \"batch\": 8, \"lr\": 0.05}," \
    " \"protocol\": {\"name\": \"allreduce\"}, \"stop\": {\"time_s\": 0.3},"                   \
    " \"eval\": {\"every_s\": 0.1, \"samples\": 50}" extra "}"

/* `check --exact` of the golden's scenario with another output section or check section (or
 * `--set check.loss_rel=0.1`, documented as a tolerance for one check), keys its scenario
 * comparison leaves out and that change no run, reported "REGRESSION: outputs differ ...
 * run.json differs (scenario.check)", exit 1. A pass now; another lr is still a regression's
 * scenario difference, exit 2. */
START_TEST(an_exact_check_ignores_the_output_and_check_sections)
{
    static const struct {
        const char *scenario, *set;
        int status;
    } cases[] = {
        { SHORT(", \"output\": {\"dir\": \"elsewhere\"}"), NULL, 0 },
        { SHORT(", \"check\": {\"loss_rel\": 0.1}"), NULL, 0 },
        { SHORT(", \"check\": {}"), NULL, 0 },
        { SHORT(""), "check.loss_rel=0.1", 0 },
        { SHORT(""), "output.plots=true", 0 },
        { SHORT(""), "workload.lr=0.06", 2 },
    };
    char *dir = harness_tmpdir("probe42");
    char s[600], g[600], w[700], out[700];
    harness_golden_in(dir, SHORT(""), s, g, sizeof(s));
    snprintf(w, sizeof(w), "%s/w.json", dir);
    snprintf(out, sizeof(out), "%s/out", dir);
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        harness_write(dir, "w.json", cases[i].scenario);
        const char *args[] = { "check", w, "--golden", g, "--exact", "-o", out, NULL, NULL, NULL };
        if (cases[i].set != NULL) {
            args[7] = "--set";
            args[8] = cases[i].set;
        }
        result res = harness_hetsim(args);
        ck_assert_msg(res.status == cases[i].status, "case %zu: exit %d, want %d\n%.400s\n%.600s",
                      i, res.status, cases[i].status, res.out, res.err);
    }
    harness_cleanup(dir);
}
END_TEST

/* Replaces the test_loss of metrics.csv's data row `row` (1: the first) in the run `run` by
 * "": the sixth field, the file written by hetsim as it is (no quoted field). */
static void empty_test_loss(const char *run, size_t row)
{
    size_t n = 0;
    char path[900];
    snprintf(path, sizeof(path), "%s/metrics.csv", run);
    char *text = harness_read(path, &n), *p = text;
    for (size_t r = 0; r < row; r++)
        p = strchr(p, '\n') + 1;
    for (int f = 0; f < 5; f++)
        p = strchr(p, ',') + 1;
    char *end = strchr(p, ',');
    memmove(p, end, strlen(end) + 1);
    FILE *f = fopen(path, "w");
    ck_assert(f != NULL);
    fputs(text, f);
    fclose(f);
    free(text);
}

/* A run's metrics.csv with one row's test_loss emptied (an evaluation writes its loss and its
 * accuracy together) was drawn by plot --by, exit 0: the row's mean loss and interval over the
 * other runs, under n = all of them; `plot RUN` alone refused it. Every reader of results
 * files refuses it now, exit 2, naming the file, the line and the column. */
START_TEST(a_row_with_a_test_accuracy_and_no_test_loss_is_refused_by_every_reader)
{
    char *dir = harness_tmpdir("probe42");
    harness_write(dir, "s.json", SHORT(""));
    char o[600], run[800], figs[700];
    result res = harness_sweep_grid(dir, "{\"workload.lr\": [0.05, 0.1]}", o, sizeof(o));
    ck_assert_msg(res.status == 0, "sweep: exit %d\n%s", res.status, res.err);
    snprintf(run, sizeof(run), "%s/workload.lr=0.1,seed=5", o);
    snprintf(figs, sizeof(figs), "%s/figs", dir);
    empty_test_loss(run, 3);
    const char *const *cmds[] = {
        (const char *[]){ "plot", o, "--by", "workload.lr", "-o", figs, NULL },
        (const char *[]){ "report", o, "--by", "workload.lr", NULL },
        (const char *[]){ "plot", run, "-o", figs, NULL },
    };
    for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
        res = harness_hetsim(cmds[i]);
        ck_assert_msg(res.status == 2 && strstr(res.err, "metrics.csv: line 4: test_accuracy "
                                                         "without test_loss") != NULL,
                      "%s: exit %d, want 2 naming line 4\n%.600s", cmds[i][0], res.status, res.err);
        ck_assert_msg(!harness_exists(figs), "%s: wrote %s", cmds[i][0], figs);
    }
    harness_cleanup(dir);
}
END_TEST

Suite *test_suite(void)
{
    Suite *s = suite_create("probe42");
    TCase *sums = tcase_create("sums");
    tcase_add_test(sums, a_profiles_base_time_below_a_nanosecond_is_refused);
    tcase_set_timeout(sums, 120);
    suite_add_tcase(s, sums);
    TCase *golden = tcase_create("golden");
    tcase_add_test(golden, an_exact_check_ignores_the_output_and_check_sections);
    tcase_set_timeout(golden, 120);
    suite_add_tcase(s, golden);
    TCase *results = tcase_create("results");
    tcase_add_test(results, a_row_with_a_test_accuracy_and_no_test_loss_is_refused_by_every_reader);
    tcase_set_timeout(results, 120);
    suite_add_tcase(s, results);
    return s;
}
