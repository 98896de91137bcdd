/* Figures of a finished sweep (see sweep_plot.h). */
#include "app/sweep_plot.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app/index.h"
#include "app/stats.h"
#include "sim/output.h"
#include "sim/plot.h"

#define PATH_TEXT          2048
#define LABEL_TEXT         48
#define MAX_LEFT_OUT_SHOWN 10 /* points left out named one by one on the log */

/* The segments of the breakdown figure, shares of the workers' time. */
enum segment {
    SEG_COMPUTE = 0, /* computation that no communication overlapped */
    SEG_OVERLAP,     /* computation overlapped by communication (comm_overlap_s) */
    SEG_COMM,        /* communication (comm_s) */
    SEG_WAIT,        /* waiting (wait_s) */
    SEG_DOWN,        /* down (down_s) */
    NSEGMENTS
};

typedef struct group {
    const char *value;      /* the KEY value, as in index.csv; borrowed */
    char label[LABEL_TEXT]; /* the same, safe for gnuplot */
    app_curve *curves;      /* (n) */
    size_t n;
    double share[NSEGMENTS]; /* sums over the runs of each run's shares */
    size_t nshares;          /* runs whose workers' time is not zero */
} group;

/* What the breakdown figure draws besides compute, communication and waiting. */
typedef struct seen {
    bool overlap; /* some workers.csv has comm_overlap_s */
    bool down;    /* some worker was down */
} seen;

static int oom(sim_err *err)
{
    return sim_err_set(err, SIM_ENOMEM, NULL, "out of memory");
}

static void make_label(const char *value, char *out)
{
    size_t i = 0;
    for (; value[i] != '\0' && i < LABEL_TEXT - 1; i++) {
        unsigned char c = (unsigned char)value[i];
        bool ok = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                  strchr("._-+=:,", c) != NULL;
        out[i] = ok ? (char)c : '_';
    }
    out[i] = '\0';
    if (i == 0)
        snprintf(out, LABEL_TEXT, "(empty)");
}

static group *find_group(group *g, size_t *ng, const char *value)
{
    for (size_t i = 0; i < *ng; i++)
        if (strcmp(g[i].value, value) == 0)
            return &g[i];
    group *x = &g[(*ng)++];
    x->value = value;
    make_label(value, x->label);
    return x;
}

/* Adds the run's shares of the workers' time (workers.csv) to the group's sums. */
static int add_shares(group *g, const char *dir, seen *sn, sim_err *err)
{
    app_workers w;
    int rc = app_workers_read(dir, &w, err);
    if (rc != SIM_OK)
        return rc;
    double overlap = fmin(fmax(w.overlap_s, 0.0), w.compute_s);
    double part[NSEGMENTS] = {
        [SEG_COMPUTE] = w.compute_s - overlap,
        [SEG_OVERLAP] = overlap,
        [SEG_COMM] = w.comm_s,
        [SEG_WAIT] = w.wait_s,
        [SEG_DOWN] = w.down_s,
    };
    double total = 0.0;
    for (size_t k = 0; k < NSEGMENTS; k++)
        total += part[k];
    sn->overlap = sn->overlap || w.has_overlap;
    sn->down = sn->down || w.down_s > 0.0;
    if (!(total > 0.0))
        return SIM_OK;
    for (size_t k = 0; k < NSEGMENTS; k++)
        g->share[k] += 100.0 * part[k] / total;
    g->nshares++;
    return SIM_OK;
}

static int add_run(group *g, const char *dir, seen *sn, sim_err *err)
{
    app_curve *c = realloc(g->curves, (g->n + 1) * sizeof(*c));
    if (c == NULL)
        return oom(err);
    g->curves = c;
    int rc = app_curve_read(dir, &g->curves[g->n], err);
    if (rc == SIM_OK)
        g->n++;
    return rc == SIM_OK ? add_shares(g, dir, sn, err) : rc;
}

/* Groups the runs with results; names those left out on the log. */
static int read_runs(const app_sweep_plot_options *o, const app_index *ix, int kcol, group *g,
                     size_t *ng, seen *sn, FILE *log, sim_err *err)
{
    char run[PATH_TEXT];
    size_t skipped = 0;
    int rc = SIM_OK;
    for (size_t r = 0; r < ix->csv.nrows && rc == SIM_OK; r++) {
        if (!app_index_has_results(ix, r)) {
            if (log != NULL && ++skipped <= MAX_LEFT_OUT_SHOWN)
                fprintf(log, "hetsim: %s: left out point %s (%s): no results\n", ix->csv.path,
                        app_index_cell(ix, r, 0), app_index_cell(ix, r, 1));
            continue;
        }
        group *x = find_group(g, ng, app_index_cell(ix, r, (size_t)kcol));
        snprintf(run, sizeof(run), "%s/%s", o->sweep_dir, app_index_cell(ix, r, 1));
        rc = add_run(x, run, sn, err);
    }
    if (log != NULL && skipped > MAX_LEFT_OUT_SHOWN)
        fprintf(log, "hetsim: %s: left out %zu more points without results\n", ix->csv.path,
                skipped - MAX_LEFT_OUT_SHOWN);
    if (rc == SIM_OK && *ng == 0)
        rc = sim_err_set(err, SIM_EINVAL, NULL, "%s: no runs with results (%zu left out)",
                         ix->csv.path, skipped);
    return rc;
}

/* ttt-by-KEY.csv: label, mean, lo, hi (the 95% interval; NaN where none reached it),
 * reached, runs, top and note_top (above the bar, "3/5": the runs that reached it, when some
 * did not), low and note_low (on the axis, "not reached (> 12 s)" when none did); a note not
 * drawn has the position NaN and the text "-".
 * Returns the number of groups that reached it in *reached. */
static int write_ttt(const char *out_dir, const char *name, const group *g, size_t ng,
                     double target, size_t *reached, sim_err *err)
{
    *reached = 0;
    size_t most = 0;
    for (size_t i = 0; i < ng; i++)
        most = g[i].n > most ? g[i].n : most;
    double *t = calloc(most + 1, sizeof(*t));
    sim_file *out = t != NULL ? sim_file_open(out_dir, name, err) : NULL;
    if (out == NULL) {
        free(t);
        return t == NULL ? oom(err) : err->code;
    }
    FILE *f = sim_file_stream(out);
    fputs("label,mean,lo,hi,reached,runs,top,note_top,low,note_low\n", f);
    for (size_t i = 0; i < ng; i++) {
        double censored = INFINITY, mean = NAN, half = NAN;
        for (size_t k = 0; k < g[i].n; k++) {
            t[k] = app_curve_time_to(&g[i].curves[k], target);
            if (isnan(t[k]))
                censored = fmin(censored, app_curve_last_time(&g[i].curves[k]));
        }
        size_t m = app_stats_mean_ci(t, g[i].n, &mean, &half);
        *reached += m > 0;
        sim_output_csv_field(f, g[i].label);
        if (m == 0) {
            fprintf(f, ",NaN,NaN,NaN,0,%zu,NaN,-,0,not reached (> %g s)\n", g[i].n, censored);
            continue;
        }
        double lo = m > 1 ? mean - half : mean, hi = m > 1 ? mean + half : mean;
        fprintf(f, ",%.9g,%.9g,%.9g,%zu,%zu,", mean, lo, hi, m, g[i].n);
        if (m < g[i].n)
            fprintf(f, "%.9g,%zu/%zu", hi, m, g[i].n);
        else
            fputs("NaN,-", f);
        fputs(",NaN,-\n", f);
    }
    free(t);
    return sim_file_commit(out, err);
}

/* The figures' file extension. */
static const char *ext_of(const app_sweep_plot_options *o)
{
    return o->format == SIM_PLOT_PDF ? "pdf" : o->format == SIM_PLOT_SVG ? "svg" : "png";
}

static int draw_bands(const app_sweep_plot_options *o, const group *g, size_t ng, sim_err *err)
{
    static const char *const xlabels[APP_CURVE_NCOLS] = {
        [APP_CURVE_TIME] = "simulated time (s)",
        [APP_CURVE_SAMPLES] = "samples",
        [APP_CURVE_EPOCH] = "epoch",
    };
    char name[PATH_TEXT], png[PATH_TEXT];
    char *vars = NULL;
    size_t len = 0;
    FILE *s = open_memstream(&vars, &len);
    if (s == NULL)
        return oom(err);
    int rc = SIM_OK;
    bool ok = fputs("ins='", s) >= 0;
    for (size_t i = 0; i < ng && rc == SIM_OK; i++) {
        snprintf(name, sizeof(name), "by-%s-%zu.csv", o->key, i);
        rc = app_curve_write_band(o->out_dir, name, g[i].curves, g[i].n, o->x, o->band, err);
        ok = ok && fprintf(s, "%s%s/%s", i > 0 ? " " : "", o->out_dir, name) >= 0;
    }
    ok = ok && fputs("'; titles='", s) >= 0;
    for (size_t i = 0; i < ng; i++)
        ok = ok && fprintf(s, "%s%s", i > 0 ? " " : "", g[i].label) >= 0;
    ok = ok && fprintf(s, "'; heading='by %s: mean and %s over runs'; xlabel='%s'", o->key,
                       o->band == APP_CURVE_BAND_CI95 ? "95% interval of the mean" : "min-max",
                       xlabels[o->x]) >= 0;
    if (fclose(s) != 0 || !ok || vars == NULL) {
        free(vars);
        return rc != SIM_OK ? rc : oom(err);
    }
    snprintf(png, sizeof(png), "by-%s.%s", o->key, ext_of(o));
    if (rc == SIM_OK)
        rc = sim_plot_draw("bands.gp", vars, o->out_dir, png, err);
    free(vars);
    return rc;
}

static int draw_ttt(const app_sweep_plot_options *o, double target, const group *g, size_t ng,
                    FILE *log, sim_err *err)
{
    char name[PATH_TEXT], png[PATH_TEXT], vars[3 * PATH_TEXT];
    snprintf(png, sizeof(png), "ttt-by-%s.%s", o->key, ext_of(o));
    if (isnan(target)) {
        if (log != NULL)
            fprintf(log,
                    "hetsim: no %s: the runs have no stop.target_accuracy; give one with "
                    "--target ACC\n",
                    png);
        return SIM_OK;
    }
    snprintf(name, sizeof(name), "ttt-by-%s.csv", o->key);
    size_t reached = 0;
    int rc = write_ttt(o->out_dir, name, g, ng, target, &reached, err);
    if (rc != SIM_OK)
        return rc;
    if (reached == 0) {
        if (log != NULL)
            fprintf(log, "hetsim: no %s: no run reached test accuracy %g (%s)\n", png, target,
                    name);
        return SIM_OK;
    }
    snprintf(vars, sizeof(vars),
             "in='%s/%s'; nbars=%zu; heading='time to test accuracy %g by %s (mean, 95%% "
             "interval)'; ylabel='simulated seconds (k/n: runs that reached it)'",
             o->out_dir, name, ng, target, o->key);
    return sim_plot_draw("bars.gp", vars, o->out_dir, png, err);
}

/* breakdown-by-KEY.csv (label, then the mean share of each segment over the group's runs, in
 * percent) and its figure. */
static int draw_breakdown(const app_sweep_plot_options *o, const group *g, size_t ng,
                          const seen *sn, sim_err *err)
{
    char name[PATH_TEXT], png[PATH_TEXT], vars[3 * PATH_TEXT];
    snprintf(name, sizeof(name), "breakdown-by-%s.csv", o->key);
    sim_file *out = sim_file_open(o->out_dir, name, err);
    if (out == NULL)
        return err->code;
    FILE *f = sim_file_stream(out);
    fputs("label,compute,overlap,comm,wait,down\n", f);
    for (size_t i = 0; i < ng; i++) {
        sim_output_csv_field(f, g[i].label);
        for (size_t k = 0; k < NSEGMENTS; k++)
            if (g[i].nshares > 0)
                fprintf(f, ",%.9g", g[i].share[k] / (double)g[i].nshares);
            else
                fputs(",NaN", f);
        fputc('\n', f);
    }
    int rc = sim_file_commit(out, err);
    if (rc != SIM_OK)
        return rc;
    snprintf(png, sizeof(png), "breakdown-by-%s.%s", o->key, ext_of(o));
    snprintf(vars, sizeof(vars),
             "in='%s/%s'; nbars=%zu; overlap=%d; down=%d; heading='where the workers'' time "
             "went, by %s (mean over runs)'",
             o->out_dir, name, ng, sn->overlap ? 1 : 0, sn->down ? 1 : 0, o->key);
    return sim_plot_draw("shares.gp", vars, o->out_dir, png, err);
}

int app_sweep_plot(const app_sweep_plot_options *o, FILE *log, sim_err *err)
{
    sim_err_clear(err);
    app_index ix;
    group *g = NULL;
    size_t ng = 0;
    seen sn = { false, false };
    int kcol = -1;
    double target = o->target;
    char keypath[PATH_TEXT];
    snprintf(keypath, sizeof(keypath), "%s/%s", o->out_dir, o->key);
    sim_rundir_lock *lock = NULL;
    int rc = sim_plot_path_ok("sweep directory", o->sweep_dir, err);
    if (rc == SIM_OK)
        rc = sim_plot_path_ok("key", keypath, err);
    if (rc == SIM_OK) /* its own sweep's directory, or no hetsim output */
        rc = sim_plot_place(o->out_dir, o->sweep_dir, &lock, err);
    if (rc == SIM_OK)
        rc = app_index_read(o->sweep_dir, &ix, err);
    if (rc != SIM_OK) {
        sim_rundir_unlock(lock);
        return rc;
    }
    rc = app_index_key_column(&ix, o->key, &kcol, err);
    if (rc == SIM_OK && (g = calloc(ix.csv.nrows + 1, sizeof(*g))) == NULL)
        rc = oom(err);
    if (rc == SIM_OK && isnan(target))
        rc = app_index_stop_target(&ix, o->sweep_dir, &target, err);
    if (rc == SIM_OK)
        rc = read_runs(o, &ix, kcol, g, &ng, &sn, log, err);
    if (rc == SIM_OK && ng > APP_SWEEP_PLOT_MAX_VALUES)
        rc = sim_err_set(err, SIM_EINVAL, NULL,
                         "%s: %zu values of %s, and a figure holds at most %d (a line or a bar "
                         "each; more would pass the 32767 pixels gnuplot's PNG terminal draws): "
                         "group by a key with fewer values",
                         ix.csv.path, ng, o->key, APP_SWEEP_PLOT_MAX_VALUES);
    if (rc == SIM_OK)
        rc = sim_output_mkdirs(o->out_dir, err);
    if (rc == SIM_OK)
        rc = draw_bands(o, g, ng, err);
    if (rc == SIM_OK)
        rc = draw_breakdown(o, g, ng, &sn, err);
    if (rc == SIM_OK)
        rc = draw_ttt(o, target, g, ng, log, err);
    for (size_t i = 0; i < ng; i++) {
        for (size_t k = 0; k < g[i].n; k++)
            app_curve_fini(&g[i].curves[k]);
        free(g[i].curves);
    }
    free(g);
    app_index_fini(&ix);
    sim_rundir_unlock(lock);
    return rc;
}

/* ---- Labels of sweep points drawn as runs ------------------------------------------------- */

typedef struct point_keys {
    char **key, **value; /* (n) owned */
    size_t n;
} point_keys;

static void point_keys_fini(point_keys *p)
{
    for (size_t j = 0; j < p->n; j++) {
        free(p->key[j]);
        free(p->value[j]);
    }
    free(p->key);
    free(p->value);
    memset(p, 0, sizeof(*p));
}

/* The overrides of run directory `dir` from its parent's index (`ix`, read for `parent`
 * unless it is the one already read); p->n = 0 when it is not a sweep's point. */
static int find_point(const char *dir, app_index *ix, char *parent, point_keys *p, sim_err *err)
{
    char up[PATH_TEXT];
    size_t len = strlen(dir);
    while (len > 1 && dir[len - 1] == '/')
        len--;
    size_t base = len;
    while (base > 0 && dir[base - 1] != '/')
        base--;
    if (base == 0)
        snprintf(up, sizeof(up), ".");
    else if (base == 1)
        snprintf(up, sizeof(up), "/");
    else
        snprintf(up, sizeof(up), "%.*s", (int)(base - 1), dir);
    if (strcmp(up, parent) != 0) {
        app_index_fini(ix);
        snprintf(parent, PATH_TEXT, "%s", up);
        if (app_index_read(up, ix, NULL) != SIM_OK)
            return SIM_OK; /* not a sweep's: ix stays zeroed */
    }
    for (size_t r = 0; r < ix->csv.nrows; r++) {
        if (strncmp(app_index_cell(ix, r, 1), dir + base, len - base) != 0 ||
            app_index_cell(ix, r, 1)[len - base] != '\0')
            continue;
        size_t nk = ix->nkeys + 1; /* the swept keys and seed */
        p->key = calloc(nk, sizeof(*p->key));
        p->value = calloc(nk, sizeof(*p->value));
        if (p->key == NULL || p->value == NULL)
            return sim_err_set(err, SIM_ENOMEM, NULL, "out of memory");
        for (; p->n < nk; p->n++) {
            p->key[p->n] = strdup(ix->csv.head[2 + p->n]);
            p->value[p->n] = strdup(app_index_cell(ix, r, 2 + p->n));
            if (p->key[p->n] == NULL || p->value[p->n] == NULL)
                return sim_err_set(err, SIM_ENOMEM, NULL, "out of memory");
        }
        break;
    }
    return SIM_OK;
}

/* The value of `key` in p, or NULL. */
static const char *value_of(const point_keys *p, const char *key)
{
    for (size_t j = 0; j < p->n; j++)
        if (strcmp(p->key[j], key) == 0)
            return p->value[j];
    return NULL;
}

/* True if `key` has not the same value in every point of pts (those with keys). */
static bool differs(const point_keys *pts, size_t n, const char *key)
{
    const char *first = NULL;
    for (size_t i = 0; i < n; i++) {
        if (pts[i].n == 0)
            continue;
        const char *v = value_of(&pts[i], key);
        if (v == NULL || (first != NULL && strcmp(v, first) != 0))
            return true;
        first = first != NULL ? first : v;
    }
    return false;
}

int app_sweep_point_labels(const char *const *dirs, size_t n, char **labels, sim_err *err)
{
    point_keys *pts = calloc(n + 1, sizeof(*pts));
    app_index ix;
    char parent[PATH_TEXT] = "";
    memset(&ix, 0, sizeof(ix));
    int rc = pts == NULL ? oom(err) : SIM_OK;
    for (size_t i = 0; i < n; i++)
        labels[i] = NULL;
    for (size_t i = 0; i < n && rc == SIM_OK; i++)
        rc = find_point(dirs[i], &ix, parent, &pts[i], err);
    app_index_fini(&ix);
    bool any = false;
    for (size_t i = 0; i < n && rc == SIM_OK; i++)
        for (size_t j = 0; j < pts[i].n; j++)
            any = any || differs(pts, n, pts[i].key[j]);
    for (size_t i = 0; i < n && rc == SIM_OK; i++) {
        if (pts[i].n == 0)
            continue;
        char *text = NULL;
        size_t len = 0;
        FILE *s = open_memstream(&text, &len);
        bool ok = s != NULL;
        for (size_t j = 0, k = 0; j < pts[i].n && ok; j++)
            if (!any || differs(pts, n, pts[i].key[j]))
                ok = fprintf(s, "%s%s=%s", k++ > 0 ? "," : "", pts[i].key[j], pts[i].value[j]) >= 0;
        if (s != NULL && fclose(s) != 0)
            ok = false;
        if (!ok || text == NULL) {
            free(text);
            rc = oom(err);
            break;
        }
        labels[i] = text;
    }
    for (size_t i = 0; i < n && pts != NULL; i++)
        point_keys_fini(&pts[i]);
    free(pts);
    if (rc != SIM_OK)
        for (size_t i = 0; i < n; i++) {
            free(labels[i]);
            labels[i] = NULL;
        }
    return rc;
}
