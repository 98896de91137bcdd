/* Golden-curve checks: check.csv, check.png and the JUnit report (see check.h). */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "app/check_state.h"
#include "app/curves.h"
#include "outputs/output.h"
#include "outputs/plot.h"
#include "outputs/rundir.h"
#include "sim/file.h"
#include "sim/text.h"

const stat_def stat_defs[NSTATS] = {
    { "accuracy_mean", "test_accuracy", APP_CURVE_ACC },
    { "accuracy_final", "test_accuracy", APP_CURVE_ACC },
    { "accuracy_jitter", "test_accuracy", APP_CURVE_ACC },
    { "log_loss_mean", "test_loss", APP_CURVE_LOSS },
    { "throughput_mean", "throughput_sps", APP_CURVE_TP },
};

/* ---- Reports: check.csv, check.png, JUnit ------------------------------------------------ */

int ck_own_files(const char *dir, sim_err *err)
{
    static const char *const own[] = { "check.csv", "check-golden.csv", "check-run.csv",
                                       "check.png" };
    bool checks = sim_rundir_kind_of(dir) == SIM_RUNDIR_CHECK;
    for (size_t i = 0; i < sizeof(own) / sizeof(own[0]); i++) {
        char path[PATH_TEXT + 32];
        struct stat st;
        snprintf(path, sizeof(path), "%s/%s", dir, own[i]);
        if (lstat(path, &st) != 0 || (checks && S_ISREG(st.st_mode)))
            continue;
        if (checks) /* a check writes regular files alone: no link, FIFO or directory */
            return sim_err_set(err, SIM_ESCENARIO, NULL,
                               "%s is %s, no file of a hetsim check (a check writes regular "
                               "files and replaces those alone): remove it",
                               path, sim_file_kind(st.st_mode));
        return sim_err_set(err, SIM_ESCENARIO, NULL,
                           "%s is no file of a hetsim check (%s holds no check.csv a check "
                           "wrote), and a check replaces its own files alone: remove it or "
                           "choose another output directory",
                           path, dir);
    }
    return SIM_OK;
}

static int write_stats(const char *dir, const verdict *v, sim_err *err)
{
    sim_file *f = sim_file_open(dir, "check.csv", err);
    if (f == NULL)
        return err->code;
    FILE *s = sim_file_stream(f);
    fputs(SIM_RUNDIR_CHECK_HEADER "\n", s);
    for (size_t st = 0, i = 0; st < NSTATS; st++) {
        if (!v[st].tested)
            continue;
        double z = v[st].half > 0 ? (v[st].rmean - v[st].gmean) / v[st].half : (double)NAN;
        fprintf(s, "%zu,%s,%s,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%d\n", i++, stat_defs[st].name,
                stat_defs[st].curve, v[st].gmean, v[st].gsd, v[st].rmean, v[st].half, v[st].floor,
                isfinite(z) ? fmax(fmin(z, 99.0), -99.0) : 99.0, v[st].ok);
    }
    return sim_file_commit(f, err);
}

/* True if one of the `n` curves has a test accuracy (a timing-only model's have none). */
static bool any_accuracy(const app_curve *c, size_t n)
{
    for (size_t i = 0; i < n; i++)
        for (size_t r = 0; r < c[i].n; r++)
            if (isfinite(c[i].col[APP_CURVE_ACC][r]))
                return true;
    return false;
}

/* check.png: the golden seeds and the runs per curve, and the tested statistics against
 * their bands, with the CSVs it draws, into `dir`; *drawn = true once written. Without a
 * test accuracy (a timing-only model) the accuracy and loss panels say so (gnuplot failed on
 * their empty curves: "x range is invalid", and the check with it). A file that
 * cannot be written whole fails (SIM_EIO naming it, no figure left cut short); a `dir` that
 * cannot be passed to gnuplot only leaves the figure out (*drawn = false, said on `out`). */
int ck_figure(const char *dir, const gold *g, const app_curve *runs, size_t m, const verdict *v,
              bool *drawn, FILE *out, sim_err *err)
{
    char vars[4 * PATH_TEXT];
    *drawn = false;
    int rc = write_stats(dir, v, err);
    if (rc == SIM_OK)
        rc = app_curve_write_band(dir, "check-golden.csv", g->curve, g->k, APP_CURVE_TIME,
                                  APP_CURVE_BAND_MINMAX, err);
    if (rc == SIM_OK)
        rc = app_curve_write_band(dir, "check-run.csv", runs, m, APP_CURVE_TIME,
                                  APP_CURVE_BAND_MINMAX, err);
    if (rc != SIM_OK)
        return rc;
    sim_err why;
    sim_err_clear(&why);
    if (sim_plot_path_ok("output directory", dir, &why) != SIM_OK) {
        fprintf(out, "  (no figure: %s)\n", why.msg);
        return SIM_OK;
    }
    snprintf(vars, sizeof(vars),
             "golden='%s/check-golden.csv'; run='%s/check-run.csv'; stats='%s/check.csv'; "
             "ngolden=%zu; nrun=%zu; xlabel='simulated time (s)'; acc=%d",
             dir, dir, dir, g->k, m, any_accuracy(g->curve, g->k) || any_accuracy(runs, m));
    rc = sim_plot_draw("check.gp", vars, dir, "check.png", err);
    *drawn = rc == SIM_OK;
    return rc;
}

/* s as XML attribute text: markup escaped, a control byte a space, a byte that opens no
 * UTF-8 character written `\xff`, as messages write it (sim/err.h), and U+FFFE, U+FFFF
 * (UTF-8, but no XML character) `\uFFFE`, `\uFFFF`: a golden whose path held one made the
 * report no XML (the file says UTF-8), which CI tools refuse. */
static void xml_text(FILE *f, const char *s)
{
    for (size_t n; *s != '\0'; s += n) {
        n = sim_text_utf8_len(s);
        const unsigned char *u = (const unsigned char *)s;
        if (n == 0)
            fprintf(f, "\\x%02x", u[0]);
        else if (sim_text_xml_nonchar(s, n)) /* U+FFFE, U+FFFF: no XML character */
            fputs(u[2] == 0xbe ? "\\uFFFE" : "\\uFFFF", f);
        else if (n > 1)
            fwrite(s, 1, n, f);
        else if (*s == '&')
            fputs("&amp;", f);
        else if (*s == '<')
            fputs("&lt;", f);
        else if (*s == '>')
            fputs("&gt;", f);
        else if (*s == '"')
            fputs("&quot;", f);
        else if ((unsigned char)*s < 0x20 && *s != '\n' && *s != '\t')
            fputc(' ', f);
        else
            fputc(*s, f);
        n = n == 0 ? 1 : n;
    }
}

/* Writes `text` to `path` as sim_rundir_check_file said: replaced whole (a temporary beside
 * it renamed over it, its folder made if it is not there yet), or written through (a FIFO or a
 * character device, never replaced; a FIFO no process reads is an error, not a wait; the file
 * the command's standard output or error goes to, through that stream, after its lines). */
static int put_file(const char *path, sim_rundir_write how, const char *text, sim_err *err)
{
    if (how == SIM_RUNDIR_REPLACE) { /* the folder whole: cut to PATH_TEXT, it was another */
        const char *slash = strrchr(path, '/');
        char *dir = slash == NULL   ? strdup(".")
                    : slash == path ? strdup("/")
                                    : strndup(path, (size_t)(slash - path));
        int rc = dir == NULL ? sim_err_set(err, SIM_ENOMEM, NULL, "out of memory")
                             : sim_output_mkdirs(dir, err); /* made as -o's (it was lost) */
        if (rc == SIM_OK)
            rc = sim_output_write(dir, slash != NULL ? slash + 1 : path, text, err);
        free(dir);
        return rc;
    }
    struct stat st; /* the command's own output: after its lines, at its offset */
    int std = stat(path, &st) == 0 ? sim_file_std_stream(&st) : -1;
    if (std >= 0)
        fflush(std == 1 ? stdout : stderr);
    int fd = std >= 0 ? dup(std) : open(path, O_WRONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    if (fd < 0)
        return sim_err_set(err, SIM_EIO, NULL, "cannot write %s: %s", path,
                           errno == ENXIO ? "a FIFO that no process reads" : strerror(errno));
    int flags = fcntl(fd, F_GETFL);
    bool ok = flags >= 0 && fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) == 0;
    for (size_t n = strlen(text), done = 0; ok && done < n;) {
        ssize_t w = write(fd, text + done, n - done);
        ok = w > 0 || (w < 0 && errno == EINTR);
        done += w > 0 ? (size_t)w : 0;
    }
    int e = errno;
    if (close(fd) != 0 && ok) {
        ok = false;
        e = errno;
    }
    return ok ? SIM_OK : sim_err_set(err, SIM_EIO, NULL, "cannot write %s: %s", path, strerror(e));
}

/* The report's test cases: one per curve of the golden, or (v NULL) one "golden" in error;
 * the suite takes the check's wall time, split evenly over its cases. */
static void junit_cases(FILE *f, const char *golden_dir, const verdict *v, const char *error,
                        double wall_s)
{
    static const char *const curves[] = { "test_accuracy", "test_loss", "throughput_sps" };
    size_t failures = 0, skipped = 0, tests = v != NULL ? 3 : 1;
    for (size_t c = 0; c < 3 && v != NULL; c++) {
        bool ok = true, any = false;
        for (size_t st = 0; st < NSTATS; st++) {
            ok &= !v[st].tested || strcmp(stat_defs[st].curve, curves[c]) != 0 || v[st].ok;
            any |= v[st].tested && strcmp(stat_defs[st].curve, curves[c]) == 0;
        }
        failures += !ok;
        skipped += !any;
    }
    fprintf(f, "  <testsuite name=\"");
    xml_text(f, golden_dir);
    fprintf(f, "\" tests=\"%zu\" failures=\"%zu\" errors=\"%d\" skipped=\"%zu\" time=\"%.3f\">\n",
            tests, failures, v == NULL, skipped, wall_s);
    if (v == NULL) {
        fputs("    <testcase classname=\"", f);
        xml_text(f, golden_dir);
        fprintf(f, "\" name=\"golden\" time=\"%.3f\">\n      <error message=\"", wall_s);
        xml_text(f, error);
        fputs("\"/>\n    </testcase>\n", f);
    }
    for (size_t c = 0; c < 3 && v != NULL; c++) {
        fputs("    <testcase classname=\"", f);
        xml_text(f, golden_dir);
        fprintf(f, "\" name=\"%s\" time=\"%.3f\"", curves[c], wall_s / 3.0);
        bool ok = true, any = false;
        for (size_t st = 0; st < NSTATS; st++) {
            ok &= !v[st].tested || strcmp(stat_defs[st].curve, curves[c]) != 0 || v[st].ok;
            any |= v[st].tested && strcmp(stat_defs[st].curve, curves[c]) == 0;
        }
        if (!any) { /* a curve the golden's runs do not have (a timing-only model's losses) */
            fputs(">\n      <skipped message=\"no values in the golden\"/>\n    </testcase>\n", f);
            continue;
        }
        if (ok) {
            fputs("/>\n", f);
            continue;
        }
        fputs(">\n      <failure message=\"out of band:", f);
        for (size_t st = 0; st < NSTATS; st++)
            if (v[st].tested && strcmp(stat_defs[st].curve, curves[c]) == 0 && !v[st].ok)
                fprintf(f, " %s", stat_defs[st].name);
        fputs("\">", f);
        for (size_t st = 0; st < NSTATS; st++)
            if (v[st].tested && strcmp(stat_defs[st].curve, curves[c]) == 0)
                fprintf(f, "%s: golden %.6g, run %.6g, band +-%.3g: %s\n", stat_defs[st].name,
                        v[st].gmean, v[st].rmean, v[st].half, v[st].ok ? "ok" : "OUT");
        fputs("</failure>\n    </testcase>\n", f);
    }
}

/* Writes the JUnit XML report `path` (the place checked again: sim_rundir_check_file): one
 * test case per curve of the golden, or, when there was no verdict (`v` NULL: an unusable
 * golden, a failed run), one case "golden" in error with `error`. */
int ck_write_junit(const char *path, const char *golden_dir, const verdict *v, const char *error,
                   double wall_s, sim_err *err)
{
    char *place = NULL, *text = NULL;
    sim_rundir_write how;
    int rc = sim_rundir_check_file("--junit file", path, &place, &how, err);
    if (rc != SIM_OK)
        return rc;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    if (f != NULL) {
        fputs("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"hetsim check\">\n",
              f);
        junit_cases(f, golden_dir, v, error, wall_s);
        fputs("  </testsuite>\n</testsuites>\n", f);
    }
    if (f == NULL || fclose(f) != 0 || text == NULL)
        rc = sim_err_set(err, SIM_ENOMEM, NULL, "out of memory");
    else
        rc = put_file(place, how, text, err);
    free(text);
    free(place);
    return rc;
}
