/* The command line: the commands that read finished outputs, `hetsim plot` (runs, or a
 * sweep --by a key) and `hetsim report` (see app/main_state.h). */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "app/curves.h"
#include "app/index.h"
#include "app/main_state.h"
#include "app/names.h"
#include "app/report.h"
#include "app/sweep_plot.h"
#include "outputs/csv.h"
#include "outputs/plot.h"
#include "outputs/rundir.h"
#include "sim/err.h"

/* The options that choose, group and tune a sweep's runs (app/select.h), and the display
 * names (app/names.h), which plot --by and report share. */
typedef struct sel_args {
    const char *by, *best_over, *tune_seeds, *target, *ttt, *names_file;
    const char **where, **labels; /* (nwhere), (nlabels) */
    size_t nwhere, nlabels;
} sel_args;

typedef struct plot_args {
    const char *out_dir, *x, *band, *format, *style, *size, *title;
    sel_args sel;
    sim_plot_format fmt;
    const char **dirs; /* (n) */
    size_t n;
} plot_args;

/* The options of plot and report that take one value each (cli_once): sel_args's, then
 * plot's or report's own; and the repeatable ones. */
#define SEL_SINGLE "--by", "--best-over", "--tune-seeds", "--target", "--ttt", "--names"
static const char *const sel_repeatable[] = { "--where", "--label", NULL };

/* Takes argv[*i] if it is one of sel_args's options (moving *i past its value): 1 taken, 0
 * not one of them, -1 a usage error said. */
static int sel_option(sel_args *a, int argc, char **argv, int *i)
{
    const char *o = argv[*i];
    const char **slot = strcmp(o, "--by") == 0           ? &a->by
                        : strcmp(o, "--best-over") == 0  ? &a->best_over
                        : strcmp(o, "--tune-seeds") == 0 ? &a->tune_seeds
                        : strcmp(o, "--target") == 0     ? &a->target
                        : strcmp(o, "--ttt") == 0        ? &a->ttt
                        : strcmp(o, "--names") == 0      ? &a->names_file
                                                         : NULL;
    bool where = strcmp(o, "--where") == 0, label = strcmp(o, "--label") == 0;
    if (slot == NULL && !where && !label)
        return 0;
    if (*i + 1 >= argc) {
        cli_usage("%s needs a value", o);
        return -1;
    }
    const char *v = argv[++*i];
    if (slot != NULL)
        *slot = v;
    else if (where)
        a->where[a->nwhere++] = v;
    else
        a->labels[a->nlabels++] = v;
    return 1;
}

/* Fills the selection options and the names from sel_args; a usage error's exit code, or
 * EXIT_OK. */
static int sel_read(const sel_args *a, app_select_options *o, app_names *names)
{
    o->by = a->by;
    o->best_over = a->best_over;
    o->where = a->where;
    o->nwhere = a->nwhere;
    o->tune_seeds = a->tune_seeds;
    o->target = NAN;
    o->rule = (app_ttt_rule){ .kind = APP_TTT_FIRST };
    /* A decimal as the results files' (strtod also took "0x1p-1" and " 0.5", and its ERANGE
     * refused a subnormal 5e-324, which lies in (0, 1]). */
    if (a->target != NULL &&
        (!sim_csv_parse_number(a->target, &o->target) || !(o->target > 0.0) || o->target > 1.0))
        return cli_usage("--target needs a test accuracy in (0, 1], got \"%s\"", a->target);
    if (a->ttt != NULL && !app_ttt_parse(a->ttt, &o->rule))
        return cli_usage("--ttt takes first, movavg:K (K from 2 to %d evaluations) or sustained, "
                         "got \"%s\"",
                         APP_TTT_MAX_K, a->ttt);
    sim_err err;
    sim_err_clear(&err);
    if (a->names_file != NULL && app_names_load(names, a->names_file, &err) != SIM_OK)
        return cli_report(&err);
    for (size_t i = 0; i < a->nlabels; i++)
        if (app_names_add(names, a->labels[i], &err) != SIM_OK)
            return cli_report(&err);
    return EXIT_OK;
}

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
    app_names names = { 0 };
    app_sweep_plot_options o = { .sweep_dir = a->dirs[0],
                                 .x = cols[i],
                                 .band = APP_CURVE_BAND_CI95,
                                 .format = a->fmt,
                                 .out_dir = a->out_dir != NULL ? a->out_dir : a->dirs[0],
                                 .title = a->title,
                                 .names = &names };
    if (a->band != NULL && strcmp(a->band, "minmax") == 0)
        o.band = APP_CURVE_BAND_MINMAX;
    else if (a->band != NULL && strcmp(a->band, "ci") != 0)
        return cli_usage("--band takes ci or minmax, got \"%s\"", a->band);
    if (a->size != NULL && !app_sweep_plot_size(a->size, &o.width_in, &o.height_in))
        return cli_usage("--size takes column, page or WxH (inches, each from 1 to 50, such as "
                         "3.5x2.5), got \"%s\"",
                         a->size);
    int rc = sel_read(&a->sel, &o.sel, &names);
    sim_err err;
    if (rc == EXIT_OK && app_sweep_plot(&o, stderr, &err) != SIM_OK)
        rc = cli_report(&err);
    if (rc == EXIT_OK)
        sim_err_line(stdout, "plots in %s", o.out_dir);
    app_names_fini(&names);
    return rc;
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
            sim_err_warn(stderr,
                         "skipped %s: the work directory of a run that was cut short (killed "
                         "before it finished): run it again",
                         d);
        } else if (is_file(d, "metrics.csv")) {
            a->dirs[kept++] = d;
        } else if (is_file(d, "index.csv") || is_file(d, SIM_RUNDIR_SWEEP_MARKER)) {
            return cli_usage("%s is a sweep's directory: draw its runs with `hetsim plot %s "
                             "--by KEY` (KEY a swept key, or seed)",
                             d, d);
        } else if (is_file(d, "run.json") || is_file(d, "summary.json")) {
            sim_err_warn(stderr,
                         "skipped %s: a run directory without metrics.csv (files removed, or "
                         "copied in part): run it again",
                         d);
        } else {
            sim_err_warn(stderr, "skipped %s: not a run directory (no metrics.csv)", d);
        }
    }
    if (kept == 0)
        return cli_usage("%s", "plot: none of the arguments is a run directory");
    /* A run drawn is a whole run directory: its run.json read as report reads it. */
    for (size_t i = 0; i < kept; i++) {
        double target, every;
        sim_err err;
        sim_err_clear(&err);
        if (app_index_run_facts(a->dirs[i], &target, &every, &err) != SIM_OK)
            return cli_report(&err);
    }
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
        sim_err_line(stdout, "plots in %s", out);
    for (size_t i = 0; labels != NULL && i < kept; i++)
        free(labels[i]);
    free(labels);
    return rc;
}

int cli_plot(int argc, char **argv)
{
    static const char *const single[] = { SEL_SINGLE, "-o",     "--x",     "--band", "--format",
                                          "--style",  "--size", "--title", NULL };
    if (cli_once(argc, argv, single, sel_repeatable) != EXIT_OK)
        return EXIT_USAGE;
    size_t room = (size_t)argc + 1;
    plot_args a = { .dirs = calloc(room, sizeof(*a.dirs)),
                    .sel = { .where = calloc(room, sizeof(char *)),
                             .labels = calloc(room, sizeof(char *)) } };
    int rc = a.dirs == NULL || a.sel.where == NULL || a.sel.labels == NULL ? EXIT_RUN : EXIT_OK;
    for (int i = 0; i < argc && rc == EXIT_OK; i++) {
        const char *o = argv[i];
        const char **slot = strcmp(o, "-o") == 0         ? &a.out_dir
                            : strcmp(o, "--x") == 0      ? &a.x
                            : strcmp(o, "--band") == 0   ? &a.band
                            : strcmp(o, "--format") == 0 ? &a.format
                            : strcmp(o, "--style") == 0  ? &a.style
                            : strcmp(o, "--size") == 0   ? &a.size
                            : strcmp(o, "--title") == 0  ? &a.title
                                                         : NULL;
        int taken = slot == NULL ? sel_option(&a.sel, argc, argv, &i) : 0;
        if (taken < 0) {
            rc = EXIT_USAGE;
        } else if (taken > 0) {
            continue;
        } else if (slot != NULL) {
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
    if (rc == EXIT_OK && a.out_dir != NULL)
        rc = cli_out_dir("-o", a.out_dir);
    a.fmt = SIM_PLOT_PNG;
    if (rc == EXIT_OK && a.format != NULL) {
        a.fmt = strcmp(a.format, "pdf") == 0   ? SIM_PLOT_PDF
                : strcmp(a.format, "svg") == 0 ? SIM_PLOT_SVG
                : strcmp(a.format, "png") == 0 ? SIM_PLOT_PNG
                                               : SIM_PLOT_UNKNOWN;
        if (a.fmt == SIM_PLOT_UNKNOWN)
            rc = cli_usage("--format takes png, pdf or svg, got \"%s\"", a.format);
    }
    const sel_args *s = &a.sel;
    bool sweep_only = a.x != NULL || a.band != NULL || a.size != NULL || a.title != NULL ||
                      s->target != NULL || s->best_over != NULL || s->tune_seeds != NULL ||
                      s->ttt != NULL || s->names_file != NULL || s->nwhere > 0 || s->nlabels > 0;
    if (rc == EXIT_OK && s->by == NULL && sweep_only)
        rc = cli_usage("%s", "--x, --band, --target, --ttt, --best-over, --tune-seeds, --where, "
                             "--size, --title, --label and --names go with --by (sweep figures)");
    if (rc == EXIT_OK && s->by != NULL && a.n != 1)
        rc = cli_usage("%s", "plot --by takes one sweep directory");
    sim_err err;
    sim_err_clear(&err);
    size_t found = 0;
    if (rc == EXIT_OK && a.style != NULL && sim_plot_set_style(a.style, &found, &err) != SIM_OK)
        rc = cli_report(&err);
    if (rc == EXIT_OK)
        rc = s->by != NULL ? plot_sweep(&a) : plot_runs(&a);
    free(a.dirs);
    free(a.sel.where);
    free(a.sel.labels);
    return rc;
}

/* report's own options besides sel_args's: an exit code, or -1 to go on. */
static int table_option(app_report_options *o, int argc, char **argv, int *i)
{
    const char *a = argv[*i];
    if (strcmp(a, "--grid") == 0) {
        o->grid = true;
        return -1;
    }
    if (strcmp(a, "--format") != 0 && strcmp(a, "--baseline") != 0)
        return a[0] == '-' ? cli_usage("unknown option %s", a) : -2;
    if (*i + 1 >= argc)
        return cli_usage("%s needs a value", a);
    const char *v = argv[++*i];
    if (strcmp(a, "--baseline") == 0) {
        o->baseline = v;
        return -1;
    }
    if (strcmp(v, "md") != 0 && strcmp(v, "csv") != 0 && strcmp(v, "tex") != 0)
        return cli_usage("--format takes md, csv or tex, got \"%s\"", v);
    o->format = v[0] == 'c' ? APP_REPORT_CSV : v[0] == 't' ? APP_REPORT_TEX : APP_REPORT_MD;
    return -1;
}

int cli_table(int argc, char **argv)
{
    static const char *const single[] = { SEL_SINGLE, "--format", "--baseline", NULL };
    if (cli_once(argc, argv, single, sel_repeatable) != EXIT_OK)
        return EXIT_USAGE;
    app_names names = { 0 };
    app_report_options o = { .format = APP_REPORT_MD, .names = &names };
    size_t room = (size_t)argc + 1;
    sel_args s = { .where = calloc(room, sizeof(char *)), .labels = calloc(room, sizeof(char *)) };
    int rc = s.where == NULL || s.labels == NULL ? EXIT_RUN : EXIT_OK;
    for (int i = 0; i < argc && rc == EXIT_OK; i++) {
        int taken = sel_option(&s, argc, argv, &i);
        if (taken < 0)
            rc = EXIT_USAGE;
        if (taken != 0)
            continue;
        int r = table_option(&o, argc, argv, &i);
        if (r >= 0)
            rc = r;
        else if (r == -2 && o.sweep_dir != NULL)
            rc = cli_usage("report takes one sweep directory, got a second: %s", argv[i]);
        else if (r == -2)
            o.sweep_dir = argv[i];
    }
    if (rc == EXIT_OK && o.sweep_dir == NULL)
        rc = cli_usage("%s", "report needs a sweep directory");
    if (rc == EXIT_OK && s.by == NULL)
        rc = cli_usage("%s", "report needs --by KEY (a swept key of the sweep, or seed)");
    if (rc == EXIT_OK)
        rc = sel_read(&s, &o.sel, &names);
    sim_err err;
    if (rc == EXIT_OK && app_report_print(&o, stdout, stderr, &err) != SIM_OK)
        rc = cli_report(&err);
    app_names_fini(&names);
    free(s.where);
    free(s.labels);
    return rc;
}
