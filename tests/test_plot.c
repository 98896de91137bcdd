/* Plots: figures drawn for one and several runs, atomic writes, input checks, gnuplot
 * missing or failing, figures checked whole (PNG, PDF, SVG) before they get their names, under
 * a file-size limit too, and the embedded scripts against the files in plots/. Run from the
 * source root (fixtures in tests/data/plot_runs: "real", a fake real-model run with accuracy
 * rising over 20 evaluations, and "timing", a timing-only run with empty accuracy fields). */
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>

#include <check.h>
#include <zlib.h>

#include "harness.h"
#include "outputs/plot.h"

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

/* Checks that dir/name is a whole PNG and that no dir/name.tmp is left. */
static void assert_png(const char *dir, const char *name)
{
    static const unsigned char sig[8] = { 0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n' };
    char *p = path_in(dir, name);
    size_t n = 0;
    char *data = harness_read(p, &n);
    ck_assert_msg(n > 8, "%s is empty or truncated (%zu bytes)", p, n);
    ck_assert_msg(memcmp(data, sig, 8) == 0, "%s does not start with the PNG signature", p);
    const char *why = NULL;
    ck_assert_msg(sim_plot_whole(SIM_PLOT_PNG, (const unsigned char *)data, n, &why),
                  "%s is not whole: %s", p, why);
    free(data);
    free(p);
    char tmp[64];
    snprintf(tmp, sizeof(tmp), "%s.tmp", name);
    ck_assert_msg(!exists(dir, tmp), "%s/%s was left behind", dir, tmp);
}

static int plot(const char *const *dirs, size_t n, const char *out, sim_err *err)
{
    sim_err_clear(err);
    return sim_plot_runs(dirs, NULL, n, out, SIM_PLOT_PNG, err);
}

/* Plots the runs dirs[0..n) into a new directory and checks its three PNGs. */
static void plots_three_pngs(const char *const *dirs, size_t n)
{
    char *out = harness_tmpdir("plot");
    sim_err err;
    ck_assert_msg(plot(dirs, n, out, &err) == SIM_OK, "plot: %s", err.msg);
    for (size_t i = 0; i < 3; i++)
        assert_png(out, pngs[i]);
    harness_cleanup(out);
}

START_TEST(plot_draws_three_pngs_for_one_real_run)
{
    const char *dirs[] = { real_dir };
    plots_three_pngs(dirs, 1);
}
END_TEST

START_TEST(plot_draws_three_pngs_comparing_a_real_and_a_timing_run)
{
    const char *dirs[] = { real_dir, timing_dir };
    plots_three_pngs(dirs, 2);
}
END_TEST

START_TEST(plot_draws_timing_only_runs_that_have_no_accuracy)
{
    const char *dirs[] = { timing_dir, timing_dir };
    plots_three_pngs(dirs, 2);
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
    ck_assert_msg(strstr(err.msg, "metrics.csv: empty file (no header row)") != NULL, "message: %s",
                  err.msg);

    write_file(run, "metrics.csv", "time_s,test_loss,test_accuracy\n0,2.385,0.1\n");
    ck_assert_int_eq(plot(dirs, 1, run, &err), SIM_EINVAL);
    ck_assert_msg(strstr(err.msg, "metrics.csv: no column throughput_sps") != NULL, "message: %s",
                  err.msg);
    harness_cleanup(run);
}
END_TEST

/* An evaluation writes a row's test loss and accuracy together; a hand-edited accuracy in a
 * timing-only run (no loss anywhere) made gnuplot fail on the loss axis, exit 1. */
START_TEST(plot_rejects_a_row_with_a_test_accuracy_or_loss_alone)
{
    static const char *const rows[][2] = {
        { "1,396,12672,,,,0.5,,12677.5\n", "line 3: test_accuracy without test_loss" },
        { "1,396,12672,,,2.25,,,12677.5\n", "line 3: test_loss without test_accuracy" },
    };
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        char *run = harness_tmpdir("plot");
        copy_file(real_dir, run, "workers.csv");
        char text[512];
        snprintf(text, sizeof(text),
                 "time_s,iterations,samples,epoch,train_loss,test_loss,test_accuracy,consensus,"
                 "throughput_sps\n0,0,0,,,,,,0\n%s",
                 rows[i][0]);
        write_file(run, "metrics.csv", text);
        const char *dirs[] = { run };
        sim_err err;
        ck_assert_int_eq(plot(dirs, 1, run, &err), SIM_EINVAL);
        ck_assert_msg(strstr(err.msg, rows[i][1]) != NULL, "message: %s", err.msg);
        harness_cleanup(run);
    }
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
    ck_assert_msg(strstr(err.msg, "at most 64 runs") != NULL, "message: %s", err.msg);
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
    char text[2048];
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

/* ---- figures checked whole ------------------------------------------------------------ */

/* Appends a PNG chunk (length, type, data, CRC of type and data) at buf + *n. */
static void png_chunk(unsigned char *buf, size_t *n, const char *type, const char *data, size_t len)
{
    unsigned char *p = buf + *n;
    p[0] = (unsigned char)(len >> 24);
    p[1] = (unsigned char)(len >> 16);
    p[2] = (unsigned char)(len >> 8);
    p[3] = (unsigned char)len;
    memcpy(p + 4, type, 4);
    memcpy(p + 8, data, len);
    uLong crc = crc32(crc32(0L, Z_NULL, 0), p + 4, (uInt)len + 4);
    for (int i = 0; i < 4; i++)
        p[8 + len + (size_t)i] = (unsigned char)(crc >> (24 - 8 * i));
    *n += 12 + len;
}

/* A small PNG by its structure (the checker does not decode pixels): signature, IHDR, two
 * IDAT chunks, a tEXt chunk and IEND. Returns its length; buf holds 256 bytes. */
static size_t make_png(unsigned char *buf)
{
    static const unsigned char sig[8] = { 0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n' };
    static const char ihdr[13] = { 0, 0, 0, 3, 0, 0, 0, 2, 8, 2, 0, 0, 0 };
    memcpy(buf, sig, 8);
    size_t n = 8;
    png_chunk(buf, &n, "IHDR", ihdr, sizeof(ihdr));
    png_chunk(buf, &n, "IDAT", "\x78\x9c\x63\x60\x00\x02\x00\x00\x05\x00\x01", 11);
    png_chunk(buf, &n, "IDAT", "\x0d\x0a\x2d\xb4\x00\x00\x00\x00\x49\x45", 10);
    png_chunk(buf, &n, "tEXt", "Software\0gnuplot 2.385", 22);
    png_chunk(buf, &n, "IEND", "", 0);
    return n;
}

START_TEST(whole_png_needs_every_chunk_up_to_iend_at_the_end)
{
    unsigned char png[256], bad[260];
    size_t n = make_png(png);
    const char *why = NULL;
    ck_assert_msg(sim_plot_whole(SIM_PLOT_PNG, png, n, &why), "whole PNG refused: %s", why);
    ck_assert_ptr_null(why);
    /* Cut short anywhere, even at a chunk boundary or inside IEND's CRC: not whole. */
    for (size_t k = 0; k < n; k++) {
        why = NULL;
        ck_assert_msg(!sim_plot_whole(SIM_PLOT_PNG, png, k, &why), "%zu of %zu bytes pass", k, n);
        ck_assert_ptr_nonnull(why);
    }
    ck_assert(!sim_plot_whole(SIM_PLOT_PNG, png, 8 + 25, &why));
    ck_assert_str_eq(why, "no IEND chunk at the end");
    ck_assert(!sim_plot_whole(SIM_PLOT_PNG, png, n - 1, &why));
    ck_assert_str_eq(why, "no IEND chunk at the end");
    ck_assert(!sim_plot_whole(SIM_PLOT_PNG, png, 5, &why));
    ck_assert_str_eq(why, "no PNG signature at the start");
    /* A byte changed inside a chunk (an IDAT): its CRC no longer matches. */
    memcpy(bad, png, n);
    bad[8 + 25 + 8 + 3] ^= 0x40;
    ck_assert(!sim_plot_whole(SIM_PLOT_PNG, bad, n, &why));
    ck_assert_str_eq(why, "a chunk whose CRC does not match");
    /* Bytes lost in the middle (a write that failed, later ones that did not). */
    size_t cut = 8 + 25 + 4;
    memcpy(bad, png, cut);
    memcpy(bad + cut, png + cut + 6, n - cut - 6);
    ck_assert(!sim_plot_whole(SIM_PLOT_PNG, bad, n - 6, &why));
    /* Something after IEND, and a PNG that is no PNG. */
    memcpy(bad, png, n);
    memcpy(bad + n, "junk", 4);
    ck_assert(!sim_plot_whole(SIM_PLOT_PNG, bad, n + 4, &why));
    ck_assert_str_eq(why, "bytes after the IEND chunk");
    ck_assert(!sim_plot_whole(SIM_PLOT_PNG, (const unsigned char *)"%PDF-1.5\n%%EOF\n", 15, &why));
    ck_assert(!sim_plot_whole(SIM_PLOT_PNG, NULL, 0, &why));
    ck_assert_str_eq(why, "empty");
    ck_assert(sim_plot_whole(SIM_PLOT_PNG, png, n, NULL));
}
END_TEST

START_TEST(whole_pdf_needs_its_header_and_eof_trailer)
{
    static const char pdf[] = "%PDF-1.5\n%\xb5\xed\xae\xfb\n1 0 obj\n<< /Type /Catalog >>\nendobj\n"
                              "xref\n0 1\n0000000000 65535 f \ntrailer\n<< /Size 1 >>\n"
                              "startxref\n42\n%%EOF\r\n";
    const unsigned char *d = (const unsigned char *)pdf;
    size_t n = sizeof(pdf) - 1, end = (size_t)(strstr(pdf, "%%EOF") - pdf) + 5;
    const char *why = NULL;
    ck_assert_msg(sim_plot_whole(SIM_PLOT_PDF, d, n, &why), "whole PDF refused: %s", why);
    ck_assert(sim_plot_whole(SIM_PLOT_PDF, d, end, &why)); /* no end of line after %%EOF */
    for (size_t k = 0; k < end; k++)
        ck_assert_msg(!sim_plot_whole(SIM_PLOT_PDF, d, k, &why), "%zu of %zu bytes pass", k, n);
    ck_assert(!sim_plot_whole(SIM_PLOT_PDF, d, end - 1, &why));
    ck_assert_str_eq(why, "no %%EOF trailer at the end");
    ck_assert(!sim_plot_whole(SIM_PLOT_PDF, d + 1, n - 1, &why));
    ck_assert_str_eq(why, "no %PDF- header at the start");
}
END_TEST

START_TEST(whole_svg_needs_its_start_and_closing_tag)
{
    static const char svg[] = "\xef\xbb\xbf\n<?xml version=\"1.0\" encoding=\"utf-8\"?>\n"
                              "<svg width=\"238.5\" height=\"100\" xmlns=\"http://www.w3.org/2000/"
                              "svg\">\n<g><path d=\"M0 0L2.385 1\"/></g>\n</svg>\n\n";
    const unsigned char *d = (const unsigned char *)svg;
    size_t n = sizeof(svg) - 1, end = (size_t)(strstr(svg, "</svg>") - svg) + 6;
    const char *why = NULL;
    ck_assert_msg(sim_plot_whole(SIM_PLOT_SVG, d, n, &why), "whole SVG refused: %s", why);
    for (size_t k = 0; k < end; k++)
        ck_assert_msg(!sim_plot_whole(SIM_PLOT_SVG, d, k, &why), "%zu of %zu bytes pass", k, n);
    ck_assert(!sim_plot_whole(SIM_PLOT_SVG, d, end - 1, &why));
    ck_assert_str_eq(why, "no closing </svg> at the end");
    const char *bare = "<svg xmlns=\"http://www.w3.org/2000/svg\"></svg>";
    ck_assert(sim_plot_whole(SIM_PLOT_SVG, (const unsigned char *)bare, strlen(bare), &why));
    const char *html = "<html><svg></svg>";
    ck_assert(!sim_plot_whole(SIM_PLOT_SVG, (const unsigned char *)html, strlen(html), &why));
    ck_assert_str_eq(why, "no <?xml or <svg at the start");
}
END_TEST

START_TEST(figure_formats_follow_the_extension)
{
    ck_assert_int_eq(sim_plot_format_of("convergence.png"), SIM_PLOT_PNG);
    ck_assert_int_eq(sim_plot_format_of("out/by-seed.pdf"), SIM_PLOT_PDF);
    ck_assert_int_eq(sim_plot_format_of("a.svg"), SIM_PLOT_SVG);
    ck_assert_int_eq(sim_plot_format_of("check.png.tmp"), SIM_PLOT_UNKNOWN);
    ck_assert_int_eq(sim_plot_format_of("figure.PNG"), SIM_PLOT_UNKNOWN);
    ck_assert_int_eq(sim_plot_format_of(".png"), SIM_PLOT_UNKNOWN);
    ck_assert_int_eq(sim_plot_format_of(""), SIM_PLOT_UNKNOWN);
    ck_assert_int_eq(sim_plot_format_of(NULL), SIM_PLOT_UNKNOWN);
    ck_assert(!sim_plot_whole(SIM_PLOT_UNKNOWN, (const unsigned char *)"x", 1, NULL));
}
END_TEST

static void write_bytes(const char *dir, const char *name, const unsigned char *d, size_t n)
{
    char *p = path_in(dir, name);
    FILE *f = fopen(p, "wb");
    ck_assert_ptr_nonnull(f);
    ck_assert_uint_eq(fwrite(d, 1, n, f), n);
    ck_assert_int_eq(fclose(f), 0);
    free(p);
}

START_TEST(commit_renames_only_a_whole_figure_and_removes_the_temporary)
{
    char *dir = harness_tmpdir("plot");
    char *tmp = path_in(dir, "fig.png.tmp"), *final = path_in(dir, "fig.png");
    unsigned char png[256];
    size_t n = make_png(png);
    sim_err err;
    sim_err_clear(&err);

    /* Cut short: refused, named, the temporary removed, a previous figure left alone. */
    write_bytes(dir, "fig.png", png, n);
    write_bytes(dir, "fig.png.tmp", png, n - 12);
    ck_assert_int_eq(sim_plot_commit(tmp, final, &err), SIM_EIO);
    ck_assert_msg(strstr(err.msg, final) != NULL, "message does not name %s: %s", final, err.msg);
    ck_assert_msg(strstr(err.msg, "cut it short at") != NULL &&
                      strstr(err.msg, "no IEND chunk at the end") != NULL,
                  "message: %s", err.msg);
    ck_assert(!exists(dir, "fig.png.tmp"));
    size_t got = 0;
    char *kept = harness_read(final, &got);
    ck_assert_uint_eq(got, n);
    ck_assert(memcmp(kept, png, n) == 0);
    free(kept);

    /* Whole: renamed over the previous one. */
    remove(final);
    write_bytes(dir, "fig.png.tmp", png, n);
    ck_assert_msg(sim_plot_commit(tmp, final, &err) == SIM_OK, "commit: %s", err.msg);
    ck_assert(!exists(dir, "fig.png.tmp"));
    assert_png(dir, "fig.png");

    /* Nothing written, an empty file, a name of no known format. */
    ck_assert_int_eq(sim_plot_commit(tmp, final, &err), SIM_EIO);
    ck_assert_msg(strstr(err.msg, "gnuplot wrote nothing to") != NULL, "message: %s", err.msg);
    write_bytes(dir, "fig.png.tmp", png, 0);
    ck_assert_int_eq(sim_plot_commit(tmp, final, &err), SIM_EIO);
    ck_assert_msg(strstr(err.msg, "gnuplot wrote nothing to") != NULL, "message: %s", err.msg);
    ck_assert(!exists(dir, "fig.png.tmp"));
    char *odd = path_in(dir, "fig.gif");
    write_bytes(dir, "fig.png.tmp", png, n);
    ck_assert_int_eq(sim_plot_commit(tmp, odd, &err), SIM_EINVAL);
    ck_assert(!exists(dir, "fig.png.tmp") && !exists(dir, "fig.gif"));

    /* A cut SVG and a cut PDF are refused as well. */
    char *svg_tmp = path_in(dir, "f.svg.tmp"), *svg = path_in(dir, "f.svg");
    const char *text = "<?xml version=\"1.0\"?>\n<svg><g></g>\n";
    write_bytes(dir, "f.svg.tmp", (const unsigned char *)text, strlen(text));
    ck_assert_int_eq(sim_plot_commit(svg_tmp, svg, &err), SIM_EIO);
    ck_assert_msg(strstr(err.msg, "no closing </svg> at the end") != NULL, "message: %s", err.msg);
    ck_assert(!exists(dir, "f.svg") && !exists(dir, "f.svg.tmp"));
    char *pdf_tmp = path_in(dir, "f.pdf.tmp"), *pdf = path_in(dir, "f.pdf");
    text = "%PDF-1.5\n1 0 obj\n<< >>\nendobj\n";
    write_bytes(dir, "f.pdf.tmp", (const unsigned char *)text, strlen(text));
    ck_assert_int_eq(sim_plot_commit(pdf_tmp, pdf, &err), SIM_EIO);
    ck_assert(!exists(dir, "f.pdf") && !exists(dir, "f.pdf.tmp"));
    free(pdf_tmp);
    free(pdf);
    free(svg_tmp);
    free(svg);
    free(odd);
    free(tmp);
    free(final);
    harness_cleanup(dir);
}
END_TEST

START_TEST(plot_refuses_a_figure_gnuplot_cut_short_though_it_exited_0)
{
    char *dir = harness_tmpdir("plot");
    /* gnuplot past a file-size limit or on a full disk: the first 4096 bytes of a PNG (its
     * signature and the start of a chunk), then exit 0, as cairo ignores write errors. */
    fake_gnuplot(dir, "read -r vars\n"
                      "cat >/dev/null\n"
                      "out=$(printf '%s' \"$vars\" | sed -n \"s/.*out='\\([^']*\\)'.*/\\1/p\")\n"
                      "printf '\\211PNG\\r\\n\\032\\n\\000\\000\\020\\000IDAT' > \"$out\"\n"
                      "head -c 4080 /dev/zero >> \"$out\"\n"
                      "exit 0");
    const char *dirs[] = { real_dir };
    sim_err err;
    ck_assert_int_eq(plot(dirs, 1, dir, &err), SIM_EIO);
    char *final = path_in(dir, "convergence.png");
    ck_assert_msg(strstr(err.msg, final) != NULL, "message does not name %s: %s", final, err.msg);
    ck_assert_msg(strstr(err.msg, "cut it short at 4096 bytes") != NULL, "message: %s", err.msg);
    ck_assert_msg(!exists(dir, "convergence.png"), "a figure cut short was renamed into place");
    ck_assert_msg(!exists(dir, "convergence.png.tmp"), "the temporary was left behind");

    /* The same through sim_plot_draw (sweeps and checks). */
    ck_assert_int_eq(sim_plot_draw("bands.gp", "ins='a.csv'; titles='a'", dir, "by-x.png", &err),
                     SIM_EIO);
    ck_assert_msg(strstr(err.msg, "by-x.png: gnuplot cut it short") != NULL, "message: %s",
                  err.msg);
    ck_assert(!exists(dir, "by-x.png") && !exists(dir, "by-x.png.tmp"));
    ck_assert_int_eq(sim_plot_draw("bands.gp", "ins='a.csv'", dir, "by-x.gif", &err), SIM_EINVAL);
    free(final);
    harness_cleanup(dir);
}
END_TEST

/* A fake gnuplot that copies the whole PNG dir/whole.png to its output and prints `noise`
 * on its standard error, then exits 0. */
static void fake_gnuplot_whole(const char *dir, const char *noise)
{
    unsigned char png[256];
    write_bytes(dir, "whole.png", png, make_png(png));
    char body[2048];
    snprintf(body, sizeof(body),
             "read -r vars\n"
             "cat >/dev/null\n"
             "out=$(printf '%%s' \"$vars\" | sed -n \"s/.*out='\\([^']*\\)'.*/\\1/p\")\n"
             "cp '%s/whole.png' \"$out\"\n"
             "printf '%%s\\n' %s >&2\n"
             "exit 0",
             dir, noise);
    fake_gnuplot(dir, body);
}

START_TEST(plot_fails_when_gnuplot_prints_an_error_though_it_exited_0)
{
    char *dir = harness_tmpdir("plot");
    fake_gnuplot_whole(dir, "'cairo error: out of memory'");
    const char *dirs[] = { real_dir };
    sim_err err;
    ck_assert_int_eq(plot(dirs, 1, dir, &err), SIM_EIO);
    ck_assert_str_eq(err.msg, "gnuplot failed drawing convergence.png: cairo error: out of memory");
    ck_assert(!exists(dir, "convergence.png") && !exists(dir, "convergence.png.tmp"));
    harness_cleanup(dir);

    dir = harness_tmpdir("plot");
    fake_gnuplot_whole(dir, "'     plot in using 1:2 with yerrorbars' '     ^' "
                            "'\"-\" line 31: Skipping data file with no valid points'");
    ck_assert_int_eq(plot(dirs, 1, dir, &err), SIM_EIO);
    ck_assert_str_eq(err.msg,
                     "gnuplot failed drawing convergence.png: Skipping data file with no valid "
                     "points");
    harness_cleanup(dir);
}
END_TEST

START_TEST(plot_accepts_warnings_on_gnuplot_s_standard_error)
{
    char *dir = harness_tmpdir("plot");
    fake_gnuplot_whole(dir, "'Fontconfig error: No writable cache directories' "
                            "'     plot in using 1:2 with yerrorbars' '     ^' "
                            "'\"-\" line 31: warning: Skipping data file with no valid points'");
    const char *dirs[] = { real_dir };
    sim_err err;
    ck_assert_msg(plot(dirs, 1, dir, &err) == SIM_OK, "plot: %s", err.msg);
    for (size_t i = 0; i < 3; i++)
        assert_png(dir, pngs[i]);
    harness_cleanup(dir);
}
END_TEST

/* Lowers the file-size limit to `bytes` with SIGXFSZ ignored, as `hetsim` runs it (writes
 * past the limit then fail with EFBIG); *old receives the limit to restore. */
static void limit_file_size(rlim_t bytes, struct rlimit *old)
{
    ck_assert_int_eq(getrlimit(RLIMIT_FSIZE, old), 0);
    ck_assert(signal(SIGXFSZ, SIG_IGN) != SIG_ERR);
    struct rlimit lim = { .rlim_cur = bytes, .rlim_max = old->rlim_max };
    ck_assert_int_eq(setrlimit(RLIMIT_FSIZE, &lim), 0);
}

START_TEST(plot_fails_under_a_file_size_limit_with_no_figure_cut_short)
{
    char *dir = harness_tmpdir("plot");
    struct rlimit old;
    /* 30 KiB: less than convergence.png of the real run (about 43 KiB), more than the others */
    limit_file_size(30 * 1024, &old);
    const char *dirs[] = { real_dir };
    sim_err err;
    int rc = plot(dirs, 1, dir, &err);
    char *final = path_in(dir, "convergence.png");
    ck_assert_msg(rc == SIM_EIO, "plot under a 30 KiB limit returned %d", rc);
    ck_assert_msg(strstr(err.msg, final) != NULL && strstr(err.msg, "cut it short") != NULL,
                  "message: %s", err.msg);
    ck_assert(!exists(dir, "convergence.png") && !exists(dir, "convergence.png.tmp"));

    /* sim_plot_draw, as sweeps and checks use it: all or nothing as well. */
    char vars[512];
    snprintf(vars, sizeof(vars), "ins='%s/metrics.csv'; titles='a'; heading='h'; xlabel='x'",
             real_dir);
    limit_file_size(8 * 1024, &(struct rlimit){ 0 });
    rc = sim_plot_draw("bands.gp", vars, dir, "band.png", &err);
    ck_assert_msg(rc == SIM_EIO, "draw under an 8 KiB limit returned %d: %s", rc, err.msg);
    ck_assert(!exists(dir, "band.png") && !exists(dir, "band.png.tmp"));
    ck_assert_int_eq(setrlimit(RLIMIT_FSIZE, &old), 0);
    free(final);
    harness_cleanup(dir);
}
END_TEST

START_TEST(plot_scripts_are_embedded_verbatim)
{
    ck_assert_uint_eq(sim_plot_nscripts, 7);
    const char *expected[] = { "convergence.gp", "throughput.gp", "breakdown.gp", "bands.gp",
                               "bars.gp",        "check.gp",      "shares.gp" };
    for (size_t i = 0; i < 7; i++) {
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
    tcase_add_test(inputs, plot_rejects_a_row_with_a_test_accuracy_or_loss_alone);
    tcase_add_test(inputs, plot_rejects_paths_gnuplot_cannot_take);
    tcase_add_test(inputs, plot_rejects_no_runs_and_too_many_runs);
    suite_add_tcase(s, inputs);

    TCase *gp = tcase_create("gnuplot");
    tcase_set_timeout(gp, 60);
    tcase_add_test(gp, plot_reports_gnuplot_missing_from_path_clearly);
    tcase_add_test(gp, plot_quotes_gnuplot_s_first_error_line_and_removes_the_temporary);
    tcase_add_test(gp, plot_survives_gnuplot_exiting_before_reading_its_script);
    tcase_add_test(gp, plot_reports_a_gnuplot_that_writes_no_figure);
    tcase_add_test(gp, plot_refuses_a_figure_gnuplot_cut_short_though_it_exited_0);
    tcase_add_test(gp, plot_fails_when_gnuplot_prints_an_error_though_it_exited_0);
    tcase_add_test(gp, plot_accepts_warnings_on_gnuplot_s_standard_error);
    tcase_add_test(gp, plot_fails_under_a_file_size_limit_with_no_figure_cut_short);
    suite_add_tcase(s, gp);

    TCase *whole = tcase_create("whole");
    tcase_add_test(whole, whole_png_needs_every_chunk_up_to_iend_at_the_end);
    tcase_add_test(whole, whole_pdf_needs_its_header_and_eof_trailer);
    tcase_add_test(whole, whole_svg_needs_its_start_and_closing_tag);
    tcase_add_test(whole, figure_formats_follow_the_extension);
    tcase_add_test(whole, commit_renames_only_a_whole_figure_and_removes_the_temporary);
    suite_add_tcase(s, whole);

    TCase *scripts = tcase_create("scripts");
    tcase_add_test(scripts, plot_scripts_are_embedded_verbatim);
    suite_add_tcase(s, scripts);

    return s;
}
