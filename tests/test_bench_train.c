/* The whole-iteration lines of `hetsim bench kernels` (app/bench_train.h), run on a tiny
 * configuration, and the lines of `hetsim bench overlap` and `collectives`: their form, never their
 * timings (a shared machine makes any bound on a time flaky), and that nothing is left behind. */
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app/bench_train.h"
#include "harness.h"
#include "sim/err.h"
#include "suite.h"

/* Entries of `dir` other than . and .. */
static size_t entries(const char *dir)
{
    DIR *d = opendir(dir);
    ck_assert_ptr_nonnull(d);
    size_t n = 0;
    for (struct dirent *e = readdir(d); e != NULL; e = readdir(d))
        n += strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0;
    closedir(d);
    return n;
}

/* 4 workers, an mlp of 16 hidden units, batch 8, 64 iterations, synthetic data. */
static app_bench_train_config tiny(const char *tmp_dir)
{
    app_bench_train_config cfg;
    app_bench_train_default(&cfg);
    cfg.workers = 4;
    cfg.hidden = 16;
    cfg.batch = 8;
    cfg.iterations = 64;
    cfg.reference_reps = 5;
    cfg.synthetic = true;
    cfg.tmp_dir = tmp_dir;
    return cfg;
}

/* Runs the benchmark with `cfg` into a memory stream and returns its text (malloc'd). */
static char *run_to_text(const app_bench_train_config *cfg, int *rc, sim_err *err)
{
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    ck_assert_ptr_nonnull(out);
    sim_err_clear(err);
    *rc = app_bench_train_run(out, cfg, err);
    ck_assert_int_eq(fclose(out), 0);
    return text;
}

/* Checks one bench line: well formed, named `name` in `unit`, value and reference finite and
 * positive, the ratio their quotient (printed with 4 decimals, value and reference with 6
 * digits). Returns the ratio. */
static double check_line(const char *line, const char *name_want, const char *unit_want)
{
    char name[64], unit[16];
    double value, ref, ratio;
    int end = 0;
    int got = sscanf(line,
                     "{\"name\": \"%63[^\"]\", \"value\": %lf, \"unit\": \"%15[^\"]\", "
                     "\"reference\": %lf, \"ratio\": %lf}%n",
                     name, &value, unit, &ref, &ratio, &end);
    ck_assert_msg(got == 5 && line[end] == '\0', "malformed line: %s", line);
    ck_assert_str_eq(name, name_want);
    ck_assert_str_eq(unit, unit_want);
    ck_assert_msg(isfinite(value) && value > 0, "%s", line);
    ck_assert_msg(isfinite(ref) && ref > 0, "%s", line);
    ck_assert_msg(isfinite(ratio) && ratio > 0, "%s", line);
    ck_assert_double_eq_tol(ratio, ref / value, 1e-4 + 1e-5 * ratio);
    return ratio;
}

/* A bench line expected: its name and unit. */
typedef struct line_want {
    const char *name, *unit;
} line_want;

/* Checks that `text` (cut up in place) is the lines want[0..n), in that order and no more,
 * each well formed (check_line) with a ratio below max_ratio; then frees it. */
static void expect_lines(char *text, const line_want *want, size_t n, double max_ratio)
{
    char *save = NULL;
    size_t k = 0;
    for (char *line = strtok_r(text, "\n", &save); line != NULL;
         line = strtok_r(NULL, "\n", &save)) {
        ck_assert_msg(k < n, "an extra line: %s", line);
        double ratio = check_line(line, want[k].name, want[k].unit);
        ck_assert_msg(ratio < max_ratio, "%s", line);
        k++;
    }
    ck_assert_uint_eq(k, n);
    free(text);
}

/* Runs `bench` (app_bench_overlap_run or app_bench_collectives_run) with a new temporary
 * directory named for `tmp_name`, and checks that it succeeds, prints the lines want[0..n)
 * and leaves nothing in the directory. */
static void expect_bench(int (*bench)(FILE *, const char *, sim_err *), const char *tmp_name,
                         const line_want *want, size_t n)
{
    char *tmp = harness_tmpdir(tmp_name);
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    ck_assert_ptr_nonnull(out);
    sim_err err;
    sim_err_clear(&err);
    int rc = bench(out, tmp, &err);
    ck_assert_int_eq(fclose(out), 0);
    ck_assert_msg(rc == SIM_OK, "%s: %s", err.path, err.msg);
    expect_lines(text, want, n, HUGE_VAL);
    ck_assert_uint_eq(entries(tmp), 0);
    harness_cleanup(tmp);
}

START_TEST(bench_prints_one_well_formed_line_per_family_and_leaves_nothing)
{
    static const line_want lines[] = { { "kernels.iteration_allreduce", "us" },
                                       { "kernels.iteration_gossip", "us" },
                                       { "kernels.iteration_adpsgd", "us" } };
    char *tmp = harness_tmpdir("bench-train");
    app_bench_train_config cfg = tiny(tmp);
    int rc;
    sim_err err;
    char *text = run_to_text(&cfg, &rc, &err);
    ck_assert_msg(rc == SIM_OK, "%s: %s", err.path, err.msg);
    expect_lines(text, lines, 3, 1.5);
    ck_assert_uint_eq(entries(tmp), 0); /* its temporary directory is gone */
    harness_cleanup(tmp);
}
END_TEST

START_TEST(bench_names_a_bad_field_and_prints_nothing)
{
    char *tmp = harness_tmpdir("bench-train");
    struct {
        const char *field;
        app_bench_train_config cfg;
    } cases[] = {
        { "workers", tiny(tmp) },    { "hidden", tiny(tmp) },         { "batch", tiny(tmp) },
        { "iterations", tiny(tmp) }, { "reference_reps", tiny(tmp) },
    };
    cases[0].cfg.workers = 1;
    cases[1].cfg.hidden = 0;
    cases[2].cfg.batch = 4097;
    cases[3].cfg.iterations = 3; /* fewer than the 4 workers */
    cases[4].cfg.reference_reps = 0;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        int rc;
        sim_err err;
        char *text = run_to_text(&cases[i].cfg, &rc, &err);
        ck_assert_int_eq(rc, SIM_EINVAL);
        ck_assert_str_eq(err.path, cases[i].field);
        ck_assert_ptr_nonnull(strstr(err.msg, "must be in ["));
        ck_assert_str_eq(text, "");
        free(text);
    }
    ck_assert_uint_eq(entries(tmp), 0);
    harness_cleanup(tmp);
}
END_TEST

START_TEST(bench_refuses_a_missing_temporary_directory)
{
    char *tmp = harness_tmpdir("bench-train");
    char missing[512];
    snprintf(missing, sizeof(missing), "%s/absent", tmp);
    app_bench_train_config cfg = tiny(missing);
    int rc;
    sim_err err;
    char *text = run_to_text(&cfg, &rc, &err);
    ck_assert_int_eq(rc, SIM_EIO);
    ck_assert_ptr_nonnull(strstr(err.msg, "cannot create a temporary directory in"));
    ck_assert_ptr_nonnull(strstr(err.msg, missing));
    ck_assert_str_eq(text, "");
    free(text);
    harness_cleanup(tmp);
}
END_TEST

START_TEST(bench_overlap_prints_its_three_lines_and_leaves_nothing)
{
    static const line_want lines[] = {
        { "overlap.allreduce_resnet50_16_iteration", "ms" },
        { "overlap.buckets_1000_workers_cpu", "s" },
        { "overlap.buckets_1000_workers_cpu_per_event", "ns" },
    };
    expect_bench(app_bench_overlap_run, "bench-overlap", lines, 3);
}
END_TEST

START_TEST(bench_collectives_prints_its_four_lines_and_leaves_nothing)
{
    static const line_want lines[] = {
        { "collectives.hierarchical_256_events_per_iteration", "events" },
        { "collectives.hierarchical_256_cpu_per_iteration", "s" },
        { "collectives.hierarchical_1024_events_per_iteration", "events" },
        { "collectives.hierarchical_1024_cpu_per_iteration", "s" },
    };
    expect_bench(app_bench_collectives_run, "bench-collectives", lines, 4);
}
END_TEST

Suite *test_suite(void)
{
    Suite *s = suite_create("bench_train");
    TCase *tc = tcase_create("lines");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, bench_prints_one_well_formed_line_per_family_and_leaves_nothing);
    suite_add_tcase(s, tc);

    tc = tcase_create("overlap");
    tcase_set_timeout(tc, 300); /* two rounds of 1000 workers: seconds, more under sanitizers */
    tcase_add_test(tc, bench_overlap_prints_its_three_lines_and_leaves_nothing);
    suite_add_tcase(s, tc);

    tc = tcase_create("collectives");
    tcase_set_timeout(tc, 600); /* a round of a 1,024-GPU flat ring: seconds, minutes sanitized */
    tcase_add_test(tc, bench_collectives_prints_its_four_lines_and_leaves_nothing);
    suite_add_tcase(s, tc);

    tc = tcase_create("errors");
    tcase_add_test(tc, bench_names_a_bad_field_and_prints_nothing);
    tcase_add_test(tc, bench_refuses_a_missing_temporary_directory);
    suite_add_tcase(s, tc);
    return s;
}
