/* Issue 38, the eighteenth probe's leftovers of class 11 (report and plot --by reading damaged
 * results silently), decided after it: a sweep point without its summary.json and a worker's
 * times that add up short of the run's. Each case failed before its fix.
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
 * DIR/figs): both exit 2 naming each of `want` (up to 3, NULL-ended), or, with want NULL,
 * both exit 0. `what` names the case. */
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

/* A sweep point whose summary.json was removed (or emptied), its index row's throughput edited
 * by hand (5120 -> 9999): report and plot --by read the row, exit 0, compared with nothing,
 * where the sweep takes that point as not done and a missing run.json is "an incomplete run
 * directory". Refused the same way now, exit 2, naming the file; the sweep run again runs the
 * point, and both read it. */
START_TEST(a_sweep_point_without_its_summary_is_an_incomplete_run_directory)
{
    char *dir = harness_tmpdir("probe55");
    char sw[600], o[600], run[800], file[900];
    harness_write(dir, "s.json", base_json);
    harness_sweep_in(dir, NULL, lr_sweep, sw, o, sizeof(sw));
    snprintf(run, sizeof(run), "%s/workload.lr=0.1,seed=6", o);
    snprintf(file, sizeof(file), "%s/summary.json", run);
    char *summary = harness_slurp(run, "summary.json");
    static const char *const cases[] = { "removed", "emptied" };
    for (size_t k = 0; k < 2; k++) {
        if (k == 0)
            ck_assert_int_eq(remove(file), 0);
        else
            harness_write(run, "summary.json", "");
        const char *const want[] = { "an incomplete run directory", "summary.json",
                                     k == 0 ? "no file" : "empty file", NULL };
        both(dir, o, want, cases[k]);
    }
    harness_write(run, "summary.json", summary);
    both(dir, o, NULL, "as written");
    ck_assert_int_eq(remove(file), 0);
    result res = harness_hetsim((const char *[]){ "sweep", sw, "-o", o, "--quiet", NULL });
    ck_assert_msg(res.status == 0, "sweep again: exit %d\n%s", res.status, res.err);
    both(dir, o, NULL, "run again");
    free(summary);
    harness_cleanup(dir);
}
END_TEST

/* A worker's compute_s, comm_s, wait_s and down_s zeroed in a run's workers.csv: they add up
 * short of the run's sim_time_s, which only a sum past it was refused for, and that worker
 * dropped out of report's shares, exit 0 (plot RUN drew its breakdown). Refused now, exit 2,
 * naming the file and line: they split the run's time, within a relative 1e-9. */
START_TEST(a_workers_times_short_of_the_runs_time_are_refused)
{
    char *dir = harness_tmpdir("probe55");
    char sw[600], o[600], run[800], figs[700];
    harness_write(dir, "s.json", base_json);
    harness_sweep_in(dir, NULL, lr_sweep, sw, o, sizeof(sw));
    snprintf(run, sizeof(run), "%s/workload.lr=0.1,seed=6", o);
    snprintf(figs, sizeof(figs), "%s/figs", dir);
    char *orig = harness_slurp(run, "workers.csv");
    size_t len = strlen(orig);
    char *edited = malloc(len + 64), *line = strstr(orig, "\n1,");
    ck_assert_ptr_nonnull(edited);
    ck_assert_ptr_nonnull(line);
    /* worker 1's row: worker, speed, iterations, samples, then compute_s, comm_s and wait_s
     * zeroed (its bytes and down_s 0 kept, its down_s already 0) */
    const char *f = line + 1;
    for (int k = 0; k < 4; k++)
        f = strchr(f, ',') + 1;
    const char *after = f;
    for (int k = 0; k < 3; k++)
        after = strchr(after, ',') + 1;
    snprintf(edited, len + 64, "%.*s0,0,0,%s", (int)(f - orig), orig, after);
    harness_write(run, "workers.csv", edited);
    const char *const want[] = { "workers.csv: line 3: compute_s, comm_s, wait_s and down_s add "
                                 "up to 0 s, short of the run's",
                                 NULL };
    both(dir, o, want, "a row zeroed");
    result res = harness_hetsim((const char *[]){ "plot", run, "-o", figs, NULL });
    ck_assert_msg(res.status == 2 && strstr(res.err, "short of the run's") != NULL,
                  "plot RUN: exit %d\n%s", res.status, res.err);
    harness_write(run, "workers.csv", orig);
    both(dir, o, NULL, "as written");
    free(edited);
    free(orig);
    harness_cleanup(dir);
}
END_TEST

Suite *test_suite(void)
{
    Suite *s = suite_create("probe55");
    TCase *results = tcase_create("results");
    tcase_add_test(results, a_sweep_point_without_its_summary_is_an_incomplete_run_directory);
    tcase_add_test(results, a_workers_times_short_of_the_runs_time_are_refused);
    tcase_set_timeout(results, 120);
    suite_add_tcase(s, results);
    return s;
}
