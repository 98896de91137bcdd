/* The command line: the commands that read finished outputs, `hetsim plot` (runs, or a
 * sweep --by a key) and `hetsim report` (see app/main_state.h). */
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "app/curves.h"
#include "app/main_state.h"
#include "app/report.h"
#include "app/sweep_plot.h"
#include "sim/err.h"
#include "sim/plot.h"
#include "sim/rundir.h"

typedef struct plot_args {
    const char *out_dir, *by, *x, *band, *target, *format, *style;
    sim_plot_format fmt;
    const char **dirs; /* (n) */
    size_t n;
} plot_args;

static int plot_sweep(const plot_args *a)
{
    static const char *const xs[] = { "time", "samples", "epoch" };
    static const enum app_curve_col cols[] = { APP_CURVE_TIME, APP_CURVE_SAMPLES, APP_CURVE_EPOCH };
    const char *x = a->x != NULL ? a->x : "time";
    size_t i = 0;
    while (i < 3 && strcmp(x, xs[i]) != 0)
        i++;
    if (i == 3)
        return cli_usage("--x takes time, epoch or samples, got \"%s\"", x);
    app_sweep_plot_options o = { .sweep_dir = a->dirs[0],
                                 .key = a->by,
                                 .x = cols[i],
                                 .band = APP_CURVE_BAND_CI95,
                                 .target = NAN,
                                 .format = a->fmt,
                                 .out_dir = a->out_dir != NULL ? a->out_dir : a->dirs[0] };
    if (a->band != NULL && strcmp(a->band, "minmax") == 0)
        o.band = APP_CURVE_BAND_MINMAX;
    else if (a->band != NULL && strcmp(a->band, "ci") != 0)
        return cli_usage("--band takes ci or minmax, got \"%s\"", a->band);
    if (a->target != NULL) {
        char *end = NULL;
        errno = 0;
        o.target = strtod(a->target, &end);
        if (end == a->target || *end != '\0' || errno != 0 || !(o.target > 0.0) || o.target > 1.0)
            return cli_usage("--target needs a test accuracy in (0, 1], got \"%s\"", a->target);
    }
    sim_err err;
    if (app_sweep_plot(&o, stderr, &err) != SIM_OK)
        return cli_report(&err);
    printf("plots in %s\n", o.out_dir);
    return EXIT_OK;
}

static bool is_file(const char *dir, const char *name)
{
    char path[4096];
    if (snprintf(path, sizeof(path), "%s/%s", dir, name) >= (int)sizeof(path))
        return false;
    return access(path, F_OK) == 0;
}

/* Runs without --by: arguments that are not run directories (no metrics.csv: a figure a
 * glob picked up, a stray file) are skipped with a warning; a sweep's directory is pointed to
 * --by. */
static int plot_runs(plot_args *a)
{
    size_t kept = 0;
    for (size_t i = 0; i < a->n; i++) {
        const char *d = a->dirs[i];
        if (sim_rundir_kind_of(d) == SIM_RUNDIR_WORK) {
            fprintf(stderr,
                    "hetsim: skipped %s: the work directory of a run that was cut short "
                    "(killed before it finished): run it again\n",
                    d);
        } else if (is_file(d, "metrics.csv")) {
            a->dirs[kept++] = d;
        } else if (is_file(d, "index.csv") || is_file(d, SIM_RUNDIR_SWEEP_MARKER)) {
            return cli_usage("%s is a sweep's directory: draw its runs with `hetsim plot %s "
                             "--by KEY` (KEY a swept key, or seed)",
                             d, d);
        } else if (is_file(d, "run.json") || is_file(d, "summary.json")) {
            fprintf(stderr,
                    "hetsim: skipped %s: a run directory without metrics.csv (files removed, "
                    "or copied in part): run it again\n",
                    d);
        } else {
            fprintf(stderr, "hetsim: skipped %s: not a run directory (no metrics.csv)\n", d);
        }
    }
    if (kept == 0)
        return cli_usage("%s", "plot: none of the arguments is a run directory");
    /* A run's directory holds its own figures (sim_plot_place): several runs go elsewhere. */
    if (kept > 1 && a->out_dir == NULL)
        return cli_usage("plot of %zu runs needs -o DIR: drawn into %s, they would replace that "
                         "run's own figures",
                         kept, a->dirs[0]);
    sim_err err;
    sim_err_clear(&err);
    const char *out = a->out_dir != NULL ? a->out_dir : a->dirs[0];
    char **labels = calloc(kept, sizeof(*labels));
    int rc = labels == NULL ? EXIT_RUN : EXIT_OK;
    /* Sweep points are told apart by their overrides, not by the base scenario's name. */
    if (rc == EXIT_OK && app_sweep_point_labels(a->dirs, kept, labels, &err) != SIM_OK)
        rc = cli_report(&err);
    if (rc == EXIT_OK &&
        sim_plot_runs(a->dirs, (const char *const *)labels, kept, out, a->fmt, &err) != SIM_OK)
        rc = cli_report(&err);
    if (rc == EXIT_OK)
        printf("plots in %s\n", out);
    for (size_t i = 0; labels != NULL && i < kept; i++)
        free(labels[i]);
    free(labels);
    return rc;
}

int cli_plot(int argc, char **argv)
{
    plot_args a = { .dirs = calloc((size_t)argc + 1, sizeof(*a.dirs)) };
    if (a.dirs == NULL)
        return EXIT_RUN;
    int rc = EXIT_OK;
    for (int i = 0; i < argc && rc == EXIT_OK; i++) {
        const char *o = argv[i];
        const char **slot = strcmp(o, "-o") == 0         ? &a.out_dir
                            : strcmp(o, "--by") == 0     ? &a.by
                            : strcmp(o, "--x") == 0      ? &a.x
                            : strcmp(o, "--band") == 0   ? &a.band
                            : strcmp(o, "--target") == 0 ? &a.target
                            : strcmp(o, "--format") == 0 ? &a.format
                            : strcmp(o, "--style") == 0  ? &a.style
                                                         : NULL;
        if (slot != NULL) {
            if (i + 1 >= argc)
                rc = cli_usage("%s needs a value", o);
            else
                *slot = argv[++i];
        } else if (o[0] == '-') {
            rc = cli_usage("unknown option %s", o);
        } else {
            a.dirs[a.n++] = o;
        }
    }
    if (rc == EXIT_OK && a.n == 0)
        rc = cli_usage("%s", "plot needs at least one run directory");
    a.fmt = SIM_PLOT_PNG;
    if (rc == EXIT_OK && a.format != NULL) {
        a.fmt = strcmp(a.format, "pdf") == 0   ? SIM_PLOT_PDF
                : strcmp(a.format, "svg") == 0 ? SIM_PLOT_SVG
                : strcmp(a.format, "png") == 0 ? SIM_PLOT_PNG
                                               : SIM_PLOT_UNKNOWN;
        if (a.fmt == SIM_PLOT_UNKNOWN)
            rc = cli_usage("--format takes png, pdf or svg, got \"%s\"", a.format);
    }
    if (rc == EXIT_OK && a.by == NULL && (a.x != NULL || a.band != NULL || a.target != NULL))
        rc = cli_usage("%s", "--x, --band and --target go with --by (sweep figures)");
    if (rc == EXIT_OK && a.by != NULL && a.n != 1)
        rc = cli_usage("%s", "plot --by takes one sweep directory");
    sim_err err;
    sim_err_clear(&err);
    size_t found = 0;
    if (rc == EXIT_OK && a.style != NULL && sim_plot_set_style(a.style, &found, &err) != SIM_OK)
        rc = cli_report(&err);
    if (rc == EXIT_OK)
        rc = a.by != NULL ? plot_sweep(&a) : plot_runs(&a);
    free(a.dirs);
    return rc;
}

int cli_table(int argc, char **argv)
{
    app_report_options o = { .target = NAN, .format = APP_REPORT_MD };
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--by") == 0 || strcmp(a, "--target") == 0 || strcmp(a, "--best-over") == 0 ||
            strcmp(a, "--format") == 0) {
            if (i + 1 >= argc)
                return cli_usage("%s needs a value", a);
            const char *v = argv[++i];
            if (strcmp(a, "--by") == 0) {
                o.key = v;
            } else if (strcmp(a, "--best-over") == 0) {
                o.best_over = v;
            } else if (strcmp(a, "--format") == 0) {
                if (strcmp(v, "md") != 0 && strcmp(v, "csv") != 0)
                    return cli_usage("--format takes md or csv, got \"%s\"", v);
                o.format = v[0] == 'c' ? APP_REPORT_CSV : APP_REPORT_MD;
            } else {
                char *end = NULL;
                errno = 0;
                o.target = strtod(v, &end);
                if (end == v || *end != '\0' || errno != 0 || !(o.target > 0.0) || o.target > 1.0)
                    return cli_usage("--target needs a test accuracy in (0, 1], got \"%s\"", v);
            }
        } else if (a[0] == '-') {
            return cli_usage("unknown option %s", a);
        } else if (o.sweep_dir != NULL) {
            return cli_usage("report takes one sweep directory, got a second: %s", a);
        } else {
            o.sweep_dir = a;
        }
    }
    if (o.sweep_dir == NULL)
        return cli_usage("%s", "report needs a sweep directory");
    if (o.key == NULL)
        return cli_usage("%s", "report needs --by KEY (a swept key of the sweep, or seed)");
    sim_err err;
    if (app_report_print(&o, stdout, stderr, &err) != SIM_OK)
        return cli_report(&err);
    return EXIT_OK;
}
