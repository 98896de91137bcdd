/* Plots: figures drawn for one and several runs, atomic writes, input checks, gnuplot
 * missing or failing, and the embedded scripts against the files in plots/. Run from the source
 * root (fixtures in tests/data/plot_runs: "real", a fake real-model run with accuracy rising over
 * 20 evaluations, and "timing", a timing-only run with empty accuracy fields). */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <check.h>

#include "harness.h"
#include "sim/plot.h"

static const char real_dir[] = "tests/data/plot_runs/real";
static const char timing_dir[] = "tests/data/plot_runs/timing";
static const char *const pngs[] = { "convergence.png", "throughput.png", "breakdown.png" };

static char *path_in(const char *dir, const char *name)
{
    size_t n = strlen(dir) + strlen(name) + 2;
    char *p = malloc(n);
    ck_assert_ptr_nonnull(p);
    snprintf(p, n, "%s/%s", dir, name);
    return p;
}

static void write_file(const char *dir, const char *name, const char *text)
{
    char *p = path_in(dir, name);
    FILE *f = fopen(p, "w");
    ck_assert_ptr_nonnull(f);
    ck_assert_int_ge(fputs(text, f), 0);
    ck_assert_int_eq(fclose(f), 0);
    free(p);
}

static void copy_file(const char *from_dir, const char *to_dir, const char *name)
{
    char *from = path_in(from_dir, name);
    char *text = harness_read(from, NULL);
    write_file(to_dir, name, text);
    free(text);
    free(from);
}

static bool exists(const char *dir, const char *name)
{
    char *p = path_in(dir, name);
    struct stat st;
    bool ok = stat(p, &st) == 0;
    free(p);
    return ok;
}

/* Checks that dir/name is a non-empty PNG and that no dir/name.tmp is left. */
static void assert_png(const char *dir, const char *name)
{
    static const unsigned char sig[8] = { 0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n' };
    char *p = path_in(dir, name);
    size_t n = 0;
    char *data = harness_read(p, &n);
    ck_assert_msg(n > 8, "%s is empty or truncated (%zu bytes)", p, n);
    ck_assert_msg(memcmp(data, sig, 8) == 0, "%s does not start with the PNG signature", p);
    free(data);
    free(p);
    char tmp[64];
    snprintf(tmp, sizeof(tmp), "%s.tmp", name);
    ck_assert_msg(!exists(dir, tmp), "%s/%s was left behind", dir, tmp);
}

static int plot(const char *const *dirs, size_t n, const char *out, sim_err *err)
{
    sim_err_clear(err);
    return sim_plot_runs(dirs, n, out, err);
}

START_TEST(plot_draws_three_pngs_for_one_real_run)
{
    char *out = harness_tmpdir("plot");
    const char *dirs[] = { real_dir };
    sim_err err;
    ck_assert_msg(plot(dirs, 1, out, &err) == SIM_OK, "plot: %s", err.msg);
    for (size_t i = 0; i < 3; i++)
        assert_png(out, pngs[i]);
    harness_cleanup(out);
}
END_TEST

START_TEST(plot_draws_three_pngs_comparing_a_real_and_a_timing_run)
{
    char *out = harness_tmpdir("plot");
    const char *dirs[] = { real_dir, timing_dir };
    sim_err err;
    ck_assert_msg(plot(dirs, 2, out, &err) == SIM_OK, "plot: %s", err.msg);
    for (size_t i = 0; i < 3; i++)
        assert_png(out, pngs[i]);
    harness_cleanup(out);
}
END_TEST

START_TEST(plot_draws_timing_only_runs_that_have_no_accuracy)
{
    char *out = harness_tmpdir("plot");
    const char *dirs[] = { timing_dir, timing_dir };
    sim_err err;
    ck_assert_msg(plot(dirs, 2, out, &err) == SIM_OK, "plot: %s", err.msg);
    for (size_t i = 0; i < 3; i++)
        assert_png(out, pngs[i]);
    harness_cleanup(out);
}
END_TEST

START_TEST(plot_creates_a_missing_output_directory)
{
    char *base = harness_tmpdir("plot");
    char *mid = path_in(base, "figs");
    char *out = path_in(mid, "run-1");
    const char *dirs[] = { real_dir };
    sim_err err;
    ck_assert_msg(plot(dirs, 1, out, &err) == SIM_OK, "plot: %s", err.msg);
    for (size_t i = 0; i < 3; i++)
        assert_png(out, pngs[i]);
    free(out);
    free(mid);
    harness_cleanup(base);
}
END_TEST

START_TEST(plot_accepts_a_run_without_summary_json)
{
    char *run = harness_tmpdir("plot");
    copy_file(real_dir, run, "metrics.csv");
    copy_file(real_dir, run, "workers.csv");
    char *out = path_in(run, "figs");
    const char *dirs[] = { run };
    sim_err err;
    ck_assert_msg(plot(dirs, 1, out, &err) == SIM_OK, "plot: %s", err.msg);
    assert_png(out, "convergence.png");
    free(out);
    harness_cleanup(run);
}
END_TEST

START_TEST(plot_rejects_a_missing_metrics_csv_by_name)
{
    char *run = harness_tmpdir("plot");
    copy_file(real_dir, run, "workers.csv");
    char *out = path_in(run, "figs");
    const char *dirs[] = { real_dir, run };
    sim_err err;
    ck_assert_int_eq(plot(dirs, 2, out, &err), SIM_EINVAL);
    ck_assert_int_eq(err.code, SIM_EINVAL);
    char *missing = path_in(run, "metrics.csv");
    ck_assert_msg(strstr(err.msg, missing) != NULL, "message does not name %s: %s", missing,
                  err.msg);
    ck_assert_msg(!exists(run, "figs"), "the output directory was created before the check");
    free(missing);
    free(out);
    harness_cleanup(run);
}
END_TEST

START_TEST(plot_rejects_a_missing_workers_csv_by_name)
{
    char *run = harness_tmpdir("plot");
    copy_file(real_dir, run, "metrics.csv");
    const char *dirs[] = { run };
    sim_err err;
    ck_assert_int_eq(plot(dirs, 1, run, &err), SIM_EINVAL);
    ck_assert_msg(strstr(err.msg, "workers.csv") != NULL, "message: %s", err.msg);
    harness_cleanup(run);
}
END_TEST

START_TEST(plot_rejects_metrics_with_only_a_header)
{
    char *run = harness_tmpdir("plot");
    write_file(run, "metrics.csv",
               "time_s,iterations,samples,epoch,train_loss,test_loss,test_accuracy,consensus,"
               "throughput_sps\n");
    copy_file(real_dir, run, "workers.csv");
    const char *dirs[] = { run };
    sim_err err;
    ck_assert_int_eq(plot(dirs, 1, run, &err), SIM_EINVAL);
    ck_assert_msg(strstr(err.msg, "metrics.csv has a header but no rows") != NULL, "message: %s",
                  err.msg);
    harness_cleanup(run);
}
END_TEST

START_TEST(plot_rejects_an_empty_metrics_file_and_a_missing_column)
{
    char *run = harness_tmpdir("plot");
    copy_file(real_dir, run, "workers.csv");
    write_file(run, "metrics.csv", "");
    const char *dirs[] = { run };
    sim_err err;
    ck_assert_int_eq(plot(dirs, 1, run, &err), SIM_EINVAL);
    ck_assert_msg(strstr(err.msg, "is empty (no header row)") != NULL, "message: %s", err.msg);

    write_file(run, "metrics.csv", "time_s,test_loss,test_accuracy\n0,2.385,0.1\n");
    ck_assert_int_eq(plot(dirs, 1, run, &err), SIM_EINVAL);
    ck_assert_msg(strstr(err.msg, "no column \"throughput_sps\"") != NULL, "message: %s", err.msg);
    harness_cleanup(run);
}
END_TEST

START_TEST(plot_rejects_paths_gnuplot_cannot_take)
{
    const char *bad[] = { "tests/data/plot runs/real", "runs/it's", "runs/\"q\"", "runs/a\\b",
                          "runs/new\nline" };
    sim_err err;
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        const char *dirs[] = { bad[i] };
        ck_assert_int_eq(plot(dirs, 1, "out", &err), SIM_EINVAL);
        ck_assert_msg(strstr(err.msg, "cannot be passed to gnuplot") != NULL, "message: %s",
                      err.msg);
        ck_assert_msg(strchr(err.msg, '\n') == NULL, "message spans lines: %s", err.msg);
    }
    const char *dirs[] = { real_dir };
    ck_assert_int_eq(plot(dirs, 1, "figures/it's", &err), SIM_EINVAL);
    ck_assert_msg(strstr(err.msg, "output directory \"figures/it's\" contains '''") != NULL,
                  "message: %s", err.msg);
}
END_TEST

START_TEST(plot_rejects_no_runs_and_too_many_runs)
{
    sim_err err;
    const char *dirs[SIM_PLOT_MAX_RUNS + 1];
    for (size_t i = 0; i < SIM_PLOT_MAX_RUNS + 1; i++)
        dirs[i] = real_dir;
    ck_assert_int_eq(plot(dirs, 0, "out", &err), SIM_EINVAL);
    ck_assert_int_eq(plot(NULL, 1, "out", &err), SIM_EINVAL);
    ck_assert_int_eq(plot(dirs, SIM_PLOT_MAX_RUNS + 1, "out", &err), SIM_EINVAL);
    ck_assert_msg(strstr(err.msg, "at most 8 runs") != NULL, "message: %s", err.msg);
}
END_TEST

START_TEST(plot_reports_gnuplot_missing_from_path_clearly)
{
    ck_assert_int_eq(setenv("PATH", "/nonexistent", 1), 0);
    char *base = harness_tmpdir("plot");
    char *out = path_in(base, "figs");
    const char *dirs[] = { real_dir };
    sim_err err;
    ck_assert_int_eq(plot(dirs, 1, out, &err), SIM_EIO);
    ck_assert_str_eq(err.msg, "gnuplot not found on PATH (install the gnuplot-nox package)");
    ck_assert_msg(!exists(base, "figs"), "the output directory was created without gnuplot");
    ck_assert_int_eq(unsetenv("PATH"), 0);
    ck_assert_int_eq(plot(dirs, 1, out, &err), SIM_EIO);
    free(out);
    harness_cleanup(base);
}
END_TEST

/* Puts an executable "gnuplot" shell script with `body` first on PATH, in `dir`. */
static void fake_gnuplot(const char *dir, const char *body)
{
    char text[512];
    snprintf(text, sizeof(text), "#!/bin/sh\n%s\n", body);
    write_file(dir, "gnuplot", text);
    char *p = path_in(dir, "gnuplot");
    ck_assert_int_eq(chmod(p, 0755), 0);
    free(p);
    const char *old = getenv("PATH");
    char path[4096];
    snprintf(path, sizeof(path), "%s:%s", dir, old != NULL ? old : "");
    ck_assert_int_eq(setenv("PATH", path, 1), 0);
}

START_TEST(plot_quotes_gnuplot_s_first_error_line_and_removes_the_temporary)
{
    char *dir = harness_tmpdir("plot");
    fake_gnuplot(dir, "read -r vars\n"
                      "cat >/dev/null\n"
                      "echo 'gnuplot> plot foo' >&2\n"
                      "echo '         ^' >&2\n"
                      "echo '         line 0: warning: Skipping data file' >&2\n"
                      "echo '         line 12: all points y value undefined!' >&2\n"
                      "echo 'later noise' >&2\n"
                      "out=$(printf '%s' \"$vars\" | sed -n \"s/.*out='\\([^']*\\)'.*/\\1/p\")\n"
                      "echo partial > \"$out\"\n"
                      "exit 1");
    const char *dirs[] = { real_dir };
    sim_err err;
    ck_assert_int_eq(plot(dirs, 1, dir, &err), SIM_EIO);
    ck_assert_str_eq(err.msg,
                     "gnuplot failed drawing convergence.png: all points y value undefined!");
    ck_assert_msg(!exists(dir, "convergence.png.tmp"), "the temporary was left behind");
    ck_assert_msg(!exists(dir, "convergence.png"), "a failed figure was renamed into place");
    harness_cleanup(dir);
}
END_TEST

START_TEST(plot_survives_gnuplot_exiting_before_reading_its_script)
{
    char *dir = harness_tmpdir("plot");
    fake_gnuplot(dir, "exec 0<&-\necho 'line 3: gave up early' >&2\nexit 3");
    const char *dirs[] = { real_dir };
    sim_err err;
    ck_assert_int_eq(plot(dirs, 1, dir, &err), SIM_EIO);
    ck_assert_str_eq(err.msg, "gnuplot failed drawing convergence.png: gave up early");
    harness_cleanup(dir);
}
END_TEST

START_TEST(plot_reports_a_gnuplot_that_writes_no_figure)
{
    char *dir = harness_tmpdir("plot");
    fake_gnuplot(dir, "cat >/dev/null\nexit 0");
    const char *dirs[] = { real_dir };
    sim_err err;
    ck_assert_int_eq(plot(dirs, 1, dir, &err), SIM_EIO);
    ck_assert_msg(strstr(err.msg, "gnuplot wrote nothing to") != NULL, "message: %s", err.msg);
    ck_assert_msg(!exists(dir, "convergence.png"), "an empty figure was renamed into place");
    harness_cleanup(dir);
}
END_TEST

START_TEST(plot_scripts_are_embedded_verbatim)
{
    ck_assert_uint_eq(sim_plot_nscripts, 6);
    const char *expected[] = { "convergence.gp", "throughput.gp", "breakdown.gp",
                               "bands.gp",       "bars.gp",       "check.gp" };
    for (size_t i = 0; i < 6; i++) {
        const char *text = sim_plot_script(expected[i]);
        ck_assert_msg(text != NULL, "%s is not embedded", expected[i]);
        ck_assert_uint_gt(strlen(text), 100);
        char *path = path_in("plots", expected[i]);
        size_t n = 0;
        char *file = harness_read(path, &n);
        ck_assert_uint_eq(strlen(text), n);
        ck_assert_msg(memcmp(text, file, n) == 0, "embedded %s differs from %s", expected[i], path);
        free(file);
        free(path);
    }
    for (size_t i = 0; i < sim_plot_nscripts; i++)
        ck_assert_ptr_eq(sim_plot_script(sim_plot_script_names[i]), sim_plot_scripts[i]);
    ck_assert_ptr_null(sim_plot_script("missing.gp"));
}
END_TEST

Suite *test_suite(void)
{
    Suite *s = suite_create("plot");

    TCase *draw = tcase_create("drawing");
    tcase_set_timeout(draw, 120); /* three gnuplot runs per test, slower under sanitizers */
    tcase_add_test(draw, plot_draws_three_pngs_for_one_real_run);
    tcase_add_test(draw, plot_draws_three_pngs_comparing_a_real_and_a_timing_run);
    tcase_add_test(draw, plot_draws_timing_only_runs_that_have_no_accuracy);
    tcase_add_test(draw, plot_creates_a_missing_output_directory);
    tcase_add_test(draw, plot_accepts_a_run_without_summary_json);
    suite_add_tcase(s, draw);

    TCase *inputs = tcase_create("inputs");
    tcase_add_test(inputs, plot_rejects_a_missing_metrics_csv_by_name);
    tcase_add_test(inputs, plot_rejects_a_missing_workers_csv_by_name);
    tcase_add_test(inputs, plot_rejects_metrics_with_only_a_header);
    tcase_add_test(inputs, plot_rejects_an_empty_metrics_file_and_a_missing_column);
    tcase_add_test(inputs, plot_rejects_paths_gnuplot_cannot_take);
    tcase_add_test(inputs, plot_rejects_no_runs_and_too_many_runs);
    suite_add_tcase(s, inputs);

    TCase *gp = tcase_create("gnuplot");
    tcase_set_timeout(gp, 60);
    tcase_add_test(gp, plot_reports_gnuplot_missing_from_path_clearly);
    tcase_add_test(gp, plot_quotes_gnuplot_s_first_error_line_and_removes_the_temporary);
    tcase_add_test(gp, plot_survives_gnuplot_exiting_before_reading_its_script);
    tcase_add_test(gp, plot_reports_a_gnuplot_that_writes_no_figure);
    suite_add_tcase(s, gp);

    TCase *scripts = tcase_create("scripts");
    tcase_add_test(scripts, plot_scripts_are_embedded_verbatim);
    suite_add_tcase(s, scripts);

    return s;
}
