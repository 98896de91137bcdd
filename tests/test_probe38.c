/* Issue 38, the sixteenth probe (classes 1-6 and the admission deadlock, probe38ag): what it
 * found. Each case failed before its fix.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <check.h>

#include "harness.h"

typedef harness_result result;

/* A sweep's point directories are named KEY=VALUE,...,seed=S, and only the sweep makes them;
 * but a plot's or a check's output may go into a folder of its own in a sweep's directory, and
 * one named as a point that was missing (a run removed, or not run yet: a sweep killed) was
 * taken: `plot RUN -o SW/POINT` (or `SW/POINT/x`) and `check -o SW/POINT` exited 0, and every
 * later run of the sweep failed the point, "not empty and holds no hetsim run". Each is refused,
 * exit 2, nothing made, and the sweep runs the point again; a folder of another name (myseed=6)
 * and a plot of the point's own run into itself still are drawn. */
START_TEST(a_plot_or_a_check_into_a_sweeps_missing_point_is_refused)
{
    char *dir = harness_tmpdir("probe38");
    char s[600], r[600], sw[600], o[600], g[600];
    harness_sweep_in(dir, harness_quick_json, harness_protocols_sweep, sw, o, sizeof(sw));
    harness_run_in(dir, NULL, s, r, sizeof(s));
    harness_golden_in(dir, NULL, s, g, sizeof(s));
    char point[700], other[700], sub[800], mine[700], cmd[1000];
    snprintf(point, sizeof(point), "%s/protocol.name=dpsgd,seed=6", o);
    snprintf(other, sizeof(other), "%s/protocol.name=dpsgd,seed=5", o);
    snprintf(sub, sizeof(sub), "%s/x", point);
    snprintf(mine, sizeof(mine), "%s/myseed=6", o);
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", point);
    ck_assert_int_eq(system(cmd), 0);
    const char *const *cases[] = {
        (const char *[]){ "plot", r, "-o", point, NULL },
        (const char *[]){ "plot", r, "-o", sub, NULL },
        (const char *[]){ "check", s, "--golden", g, "-o", point, NULL },
    };
    for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
        result res = harness_hetsim(cases[c]);
        ck_assert_msg(res.status == 2 && strstr(res.err, "named as a point of the sweep") != NULL,
                      "case %zu: exit %d\n%.600s", c, res.status, res.err);
        ck_assert_msg(!harness_exists(point), "case %zu made %s", c, point);
    }
    result res = harness_hetsim((const char *[]){ "sweep", sw, "-o", o, "--quiet", NULL });
    ck_assert_msg(res.status == 0 && harness_exists(point), "sweep again: exit %d\n%.600s",
                  res.status, res.err);
    res = harness_hetsim((const char *[]){ "plot", r, "-o", mine, NULL });
    ck_assert_msg(res.status == 0, "plot -o myseed=6: exit %d\n%.600s", res.status, res.err);
    res = harness_hetsim((const char *[]){ "plot", other, NULL });
    ck_assert_msg(res.status == 0, "plot POINT: exit %d\n%.600s", res.status, res.err);
    free(dir);
}
END_TEST

/* hetsim `args` run from the folder `cwd` (the tests' processes are their own: the folder they
 * ran from is taken back after). */
static result hetsim_in(const char *cwd, const char *const *args)
{
    char *back = getcwd(NULL, 0);
    ck_assert_msg(back != NULL && chdir(cwd) == 0, "cannot go to %s", cwd);
    result res = harness_hetsim(args);
    ck_assert_int_eq(chdir(back), 0);
    free(back);
    return res;
}

/* An output is the place its path names, but "." kept its text: its lock and work directory
 * were "..lock" and "..partial" inside it. `run -o .` in an empty folder said "output directory
 * . is not empty and holds no hetsim run" (its own lock file there), exit 2, as did `sweep -o .`;
 * in a sweep's directory `sweep -o .` (a resume) was "inside" the sweep itself, exit 2; each ran
 * when the folder was named by its path. Now "." is the current folder by its real path: each
 * runs, and a second `run -o .` replaces the run. */
START_TEST(an_output_named_dot_is_the_current_folder)
{
    char *dir = harness_tmpdir("probe38");
    char s[600], r[800], sw[600], o[600], e[700], f[700];
    harness_sweep_in(dir, harness_quick_json, harness_protocols_sweep, sw, o, sizeof(sw));
    snprintf(s, sizeof(s), "%s/s.json", dir);
    snprintf(e, sizeof(e), "%s/e", dir);
    snprintf(f, sizeof(f), "%s/f", dir);
    ck_assert_int_eq(mkdir(e, 0777), 0);
    ck_assert_int_eq(mkdir(f, 0777), 0);
    for (int k = 0; k < 2; k++) {
        result res =
            hetsim_in(e, (const char *[]){ "run", s, "-o", k == 0 ? "." : "./", "--quiet", NULL });
        ck_assert_msg(res.status == 0, "run -o . (%d): exit %d\n%.600s", k, res.status, res.err);
        snprintf(r, sizeof(r), "%s/run.json", e);
        ck_assert_msg(harness_exists(r), "no run in %s", e);
    }
    result res = hetsim_in(f, (const char *[]){ "sweep", sw, "-o", ".", "--quiet", NULL });
    ck_assert_msg(res.status == 0, "sweep -o . (empty): exit %d\n%.600s", res.status, res.err);
    res = hetsim_in(o, (const char *[]){ "sweep", sw, "-o", ".", "--quiet", NULL });
    ck_assert_msg(res.status == 0, "sweep -o . (resume): exit %d\n%.600s", res.status, res.err);
    char lock[800];
    snprintf(lock, sizeof(lock), "%s/..lock", e);
    ck_assert_msg(!harness_exists(lock), "%s left", lock);
    free(dir);
}
END_TEST

/* A softmax over LIBSVM data of two features, its test set in a file of its own. */
static const char libsvm_json[] =
    "{\"seed\": 5, \"workers\": 2, \"compute\": {\"iteration_ms\": 1},\n"
    " \"workload\": {\"model\": {\"name\": \"softmax\"}, \"batch\": 2,\n"
    "  \"dataset\": {\"name\": \"libsvm\", \"file\": \"d.svm\", \"test_file\": \"t.svm\"}},\n"
    " \"protocol\": {\"name\": \"allreduce\"}, \"stop\": {\"time_s\": 2},\n"
    " \"eval\": {\"every_s\": 0.5}}\n";

static const char svm_text[] = "0 1:0.5 2:1\n1 1:1.5 2:-1\n0 1:0.25 2:2\n1 1:2 2:-2\n"
                               "0 1:0.75 2:1.5\n1 1:1.25 2:-0.5\n0 1:0.6 2:1.2\n1 1:1.7 2:-1.1\n";

/* `check --junit FILE` refused a FILE the scenario reads, but knew of a compute.profile and
 * traces alone: with FILE the scenario's LIBSVM data (`file` or `test_file`) the report replaced
 * the data, exit 0, and every later check failed, "d.svm: line 1, column 1: bad label
 * \"<?xml\"" (so did Fashion-MNIST's IDX files in its `dir`, and a torch module). Each is
 * refused, exit 2, the file unchanged, as the profile is. */
START_TEST(a_junit_report_never_replaces_the_data_the_scenario_reads)
{
    char *dir = harness_tmpdir("probe38");
    harness_write(dir, "d.svm", svm_text);
    harness_write(dir, "t.svm", svm_text);
    char s[600], g[600];
    harness_golden_in(dir, libsvm_json, s, g, sizeof(s));
    const char *const names[] = { "d.svm", "t.svm" };
    for (size_t i = 0; i < 2; i++) {
        char file[700], text[512];
        snprintf(file, sizeof(file), "%s/%s", dir, names[i]);
        result res =
            harness_hetsim((const char *[]){ "check", s, "--golden", g, "--junit", file, NULL });
        ck_assert_msg(res.status == 2 && strstr(res.err, "a file the scenario reads") != NULL,
                      "--junit %s: exit %d\n%.600s", names[i], res.status, res.err);
        harness_read_into(file, text, sizeof(text));
        ck_assert_msg(strcmp(text, svm_text) == 0, "%s changed: %.100s", names[i], text);
    }
    free(dir);
}
END_TEST

Suite *test_suite(void)
{
    Suite *s = suite_create("probe38");
    TCase *places = tcase_create("places");
    tcase_add_test(places, a_plot_or_a_check_into_a_sweeps_missing_point_is_refused);
    tcase_add_test(places, an_output_named_dot_is_the_current_folder);
    tcase_set_timeout(places, 120);
    suite_add_tcase(s, places);
    TCase *junit = tcase_create("junit");
    tcase_add_test(junit, a_junit_report_never_replaces_the_data_the_scenario_reads);
    tcase_set_timeout(junit, 120);
    suite_add_tcase(s, junit);
    return s;
}
