/* Figures of a finished sweep (see sweep_plot.h). */
#include "app/sweep_plot.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/output.h"
#include "sim/plot.h"

#define LINE_TEXT          8192
#define MAX_COLS           64
#define PATH_TEXT          1024
#define LABEL_TEXT         48
#define MAX_LEFT_OUT_SHOWN 10 /* points left out named one by one on the log */

typedef struct group {
    char value[256];        /* the KEY value, as in index.csv */
    char label[LABEL_TEXT]; /* the same, safe for gnuplot */
    app_curve *curves;      /* (n) */
    double *ttt;            /* (n) time to target, NaN if not reached */
    size_t n;
} group;

/* Splits a CSV line in place (quoted fields with "" escapes); returns the field count. */
static size_t split_csv(char *line, char **f)
{
    size_t n = 0;
    char *r = line, *w = line;
    line[strcspn(line, "\r\n")] = '\0';
    while (n < MAX_COLS) {
        f[n++] = w;
        bool quoted = *r == '"';
        r += quoted;
        for (; *r != '\0'; r++) {
            if (quoted && *r == '"' && r[1] == '"') {
                *w++ = '"';
                r++;
            } else if (quoted && *r == '"') {
                quoted = false;
            } else if (!quoted && *r == ',') {
                break;
            } else {
                *w++ = *r;
            }
        }
        bool more = *r == ',';
        *w++ = '\0';
        if (!more)
            break;
        r++;
    }
    return n;
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

static group *find_group(group *g, size_t *ng, const char *value, sim_err *err)
{
    for (size_t i = 0; i < *ng; i++)
        if (strcmp(g[i].value, value) == 0)
            return &g[i];
    if (*ng == APP_SWEEP_PLOT_MAX_VALUES) {
        sim_err_set(err, SIM_EINVAL, NULL, "more than %d values to draw (one colour each)",
                    APP_SWEEP_PLOT_MAX_VALUES);
        return NULL;
    }
    group *x = &g[(*ng)++];
    snprintf(x->value, sizeof(x->value), "%s", value);
    make_label(value, x->label);
    return x;
}

static int add_run(group *g, const char *dir, double ttt, sim_err *err)
{
    app_curve *c = realloc(g->curves, (g->n + 1) * sizeof(*c));
    if (c != NULL)
        g->curves = c;
    double *t = c != NULL ? realloc(g->ttt, (g->n + 1) * sizeof(*t)) : NULL;
    if (t == NULL)
        return sim_err_set(err, SIM_ENOMEM, NULL, "out of memory");
    g->ttt = t;
    int rc = app_curve_read(dir, &g->curves[g->n], err);
    if (rc == SIM_OK)
        g->ttt[g->n++] = ttt;
    return rc;
}

/* The column of `name` in the header, or -1; `valid` receives the override columns. */
static int column(char **f, size_t n, const char *name, char *valid, size_t size)
{
    int found = -1;
    size_t len = 0;
    valid[0] = '\0';
    for (size_t i = 2; i < n && strcmp(f[i], "stop_reason") != 0; i++) {
        if (strcmp(f[i], name) == 0)
            found = (int)i;
        len += (size_t)snprintf(valid + len, len < size ? size - len : 0, "%s%s",
                                len > 0 ? ", " : "", f[i]);
    }
    return found;
}

/* Says which runs were left out (no results): the first few by name, then how many. */
static void left_out(FILE *log, const char *path, size_t n, const char *point, const char *dir)
{
    if (log == NULL)
        return;
    if (n <= MAX_LEFT_OUT_SHOWN)
        fprintf(log, "hetsim: %s: left out point %s (%s): no results\n", path, point, dir);
}

static int read_index(const char *sweep_dir, const char *key, group *g, size_t *ng, FILE *log,
                      sim_err *err)
{
    char path[PATH_TEXT], line[LINE_TEXT], *f[MAX_COLS], valid[512], run[PATH_TEXT * 2];
    snprintf(path, sizeof(path), "%s/index.csv", sweep_dir);
    FILE *in = fopen(path, "r");
    if (in == NULL)
        return sim_err_set(err, SIM_EINVAL, NULL, "%s: cannot read (not a sweep directory?)", path);
    int rc = SIM_OK, kcol = -1, tcol = -1, scol = -1;
    size_t skipped = 0;
    if (fgets(line, sizeof(line), in) != NULL) {
        size_t n = split_csv(line, f);
        kcol = column(f, n, key, valid, sizeof(valid));
        for (size_t i = 0; i < n; i++) {
            tcol = strcmp(f[i], "time_to_target_s") == 0 ? (int)i : tcol;
            scol = strcmp(f[i], "stop_reason") == 0 ? (int)i : scol;
        }
    }
    if (kcol < 0 || tcol < 0 || scol < 0)
        rc = sim_err_set(err, SIM_EINVAL, NULL, "%s: no column \"%s\" (valid: %s)", path, key,
                         valid);
    while (rc == SIM_OK && fgets(line, sizeof(line), in) != NULL) {
        size_t n = split_csv(line, f);
        if (n <= (size_t)tcol) {
            rc = sim_err_set(err, SIM_EINVAL, NULL, "%s: a row has %zu fields", path, n);
            break;
        }
        /* A point that failed, or was not run, has no run directory: "missing". */
        if (strcmp(f[scol], "missing") == 0) {
            left_out(log, path, ++skipped, f[0], f[1]);
            continue;
        }
        group *x = find_group(g, ng, f[kcol], err);
        char *end = NULL;
        double ttt = strtod(f[tcol], &end);
        snprintf(run, sizeof(run), "%s/%s", sweep_dir, f[1]);
        rc = x == NULL ? err->code : add_run(x, run, end == f[tcol] ? (double)NAN : ttt, err);
    }
    fclose(in);
    if (log != NULL && skipped > MAX_LEFT_OUT_SHOWN)
        fprintf(log, "hetsim: %s: left out %zu more points without results\n", path,
                skipped - MAX_LEFT_OUT_SHOWN);
    if (rc == SIM_OK && *ng == 0)
        rc = sim_err_set(err, SIM_EINVAL, NULL, "%s: no runs with results (%zu left out)", path,
                         skipped);
    return rc;
}

static int write_ttt(const char *out_dir, const char *name, const group *g, size_t ng, sim_err *err)
{
    sim_file *out = sim_file_open(out_dir, name, err);
    if (out == NULL)
        return err->code;
    FILE *f = sim_file_stream(out);
    fputs("label,mean,lo,hi\n", f);
    for (size_t i = 0; i < ng; i++) {
        double sum = 0.0, lo = INFINITY, hi = -INFINITY;
        size_t m = 0;
        for (size_t k = 0; k < g[i].n; k++) {
            double t = g[i].ttt[k];
            if (isnan(t))
                continue;
            sum += t;
            lo = fmin(lo, t);
            hi = fmax(hi, t);
            m++;
        }
        if (m == 0)
            fprintf(f, "%s,NaN,NaN,NaN\n", g[i].label);
        else
            fprintf(f, "%s,%.9g,%.9g,%.9g\n", g[i].label, sum / (double)m, lo, hi);
    }
    return sim_file_commit(out, err);
}

static int draw(const char *out_dir, const char *key, enum app_curve_col x, const group *g,
                size_t ng, sim_err *err)
{
    static const char *const xlabels[APP_CURVE_NCOLS] = {
        [APP_CURVE_TIME] = "simulated time (s)",
        [APP_CURVE_SAMPLES] = "samples",
        [APP_CURVE_EPOCH] = "epoch",
    };
    char name[PATH_TEXT], png[PATH_TEXT], vars[8 * PATH_TEXT];
    size_t len = (size_t)snprintf(vars, sizeof(vars), "ins='");
    int rc = SIM_OK;
    for (size_t i = 0; i < ng && rc == SIM_OK; i++) {
        snprintf(name, sizeof(name), "by-%s-%zu.csv", key, i);
        rc = app_curve_write_band(out_dir, name, g[i].curves, g[i].n, x, err);
        len += (size_t)snprintf(vars + len, len < sizeof(vars) ? sizeof(vars) - len : 0, "%s%s/%s",
                                i > 0 ? " " : "", out_dir, name);
    }
    len += (size_t)snprintf(vars + len, len < sizeof(vars) ? sizeof(vars) - len : 0, "'; titles='");
    for (size_t i = 0; i < ng; i++)
        len += (size_t)snprintf(vars + len, len < sizeof(vars) ? sizeof(vars) - len : 0, "%s%s",
                                i > 0 ? " " : "", g[i].label);
    len += (size_t)snprintf(vars + len, len < sizeof(vars) ? sizeof(vars) - len : 0,
                            "'; heading='by %s: mean and min-max over runs'; xlabel='%s'", key,
                            xlabels[x]);
    if (rc == SIM_OK && len >= sizeof(vars))
        rc = sim_err_set(err, SIM_EINVAL, NULL, "too many or too long paths to plot");
    snprintf(png, sizeof(png), "by-%s.png", key);
    if (rc == SIM_OK)
        rc = sim_plot_draw("bands.gp", vars, out_dir, png, err);
    snprintf(name, sizeof(name), "ttt-by-%s.csv", key);
    if (rc == SIM_OK)
        rc = write_ttt(out_dir, name, g, ng, err);
    snprintf(vars, sizeof(vars),
             "in='%s/%s'; heading='time to target accuracy by %s (mean, min-max)'; "
             "ylabel='simulated seconds'",
             out_dir, name, key);
    snprintf(png, sizeof(png), "ttt-by-%s.png", key);
    bool reached = false;
    for (size_t i = 0; i < ng; i++)
        for (size_t k = 0; k < g[i].n; k++)
            reached = reached || !isnan(g[i].ttt[k]);
    if (rc == SIM_OK && reached)
        rc = sim_plot_draw("bars.gp", vars, out_dir, png, err);
    return rc;
}

int app_sweep_plot(const char *sweep_dir, const char *key, enum app_curve_col x,
                   const char *out_dir, FILE *log, sim_err *err)
{
    sim_err_clear(err);
    group g[APP_SWEEP_PLOT_MAX_VALUES];
    size_t ng = 0;
    memset(g, 0, sizeof(g));
    char keypath[PATH_TEXT];
    snprintf(keypath, sizeof(keypath), "%s/%s", out_dir, key);
    int rc = sim_plot_path_ok("sweep directory", sweep_dir, err);
    if (rc == SIM_OK)
        rc = sim_plot_path_ok("key", keypath, err);
    if (rc == SIM_OK)
        rc = read_index(sweep_dir, key, g, &ng, log, err);
    if (rc == SIM_OK)
        rc = sim_output_mkdirs(out_dir, err);
    if (rc == SIM_OK)
        rc = draw(out_dir, key, x, g, ng, err);
    for (size_t i = 0; i < ng; i++) {
        for (size_t k = 0; k < g[i].n; k++)
            app_curve_fini(&g[i].curves[k]);
        free(g[i].curves);
        free(g[i].ttt);
    }
    return rc;
}
