/* A sweep's index.csv (see index.h). */
#include "app/index.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "sim/cfg.h"
#include "sim/output.h"
#include "sim/rundir.h"

static int oom(sim_err *err)
{
    return sim_err_set(err, SIM_ENOMEM, NULL, "out of memory");
}

/* Splits the line at *p (CSV, quoted fields with "" escapes) in place, storing at most
 * `max` fields into f (NULL: only counts); advances *p past the line. Returns the field
 * count. */
static size_t split_line(char **p, char **f, size_t max)
{
    char *r = *p, *w = *p;
    size_t n = 0;
    for (;;) {
        if (f != NULL && n < max)
            f[n] = w;
        n++;
        bool quoted = *r == '"';
        r += quoted;
        for (; *r != '\0' && (quoted || (*r != '\n' && *r != '\r')); r++) {
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
        char end = *r;
        *w++ = '\0';
        if (!more) {
            /* *r may just have been overwritten (w == r): go by `end`. */
            if (end == '\r')
                r++;
            if (end == '\n' || (end == '\r' && *r == '\n'))
                r++;
            break;
        }
        r++;
    }
    *p = r;
    return n;
}

static int missing(const char *sweep_dir, const char *path, sim_err *err)
{
    char metrics[1100];
    struct stat st;
    snprintf(metrics, sizeof(metrics), "%s/metrics.csv", sweep_dir);
    if (stat(metrics, &st) == 0)
        return sim_err_set(err, SIM_EINVAL, NULL,
                           "%s is a run directory, not a sweep's (no index.csv): give the "
                           "sweep's directory (`hetsim plot RUN_DIR...` draws runs)",
                           sweep_dir);
    snprintf(metrics, sizeof(metrics), "%s/%s", sweep_dir, SIM_RUNDIR_SWEEP_MARKER);
    if (stat(metrics, &st) == 0)
        return sim_err_set(err, SIM_EINVAL, NULL,
                           "%s: no index.csv yet: its sweep has not finished (run the same "
                           "`hetsim sweep` again: it runs only the points not done, then writes "
                           "index.csv)",
                           sweep_dir);
    return sim_err_set(err, SIM_EINVAL, NULL,
                       "cannot read %s: not a sweep's directory (`hetsim sweep` writes "
                       "index.csv there once its points have run)",
                       path);
}

int app_index_read(const char *sweep_dir, app_index *ix, sim_err *err)
{
    memset(ix, 0, sizeof(*ix));
    snprintf(ix->path, sizeof(ix->path), "%s/index.csv", sweep_dir);
    size_t len = 0;
    ix->text = sim_output_read(ix->path, &len);
    if (ix->text == NULL)
        return missing(sweep_dir, ix->path, err);
    /* Line ends as split_line takes them: "\n", "\r\n" and a lone "\r". Each row but the last
     * ends at one, so rows <= lines + 1. */
    size_t lines = 0;
    for (size_t i = 0; i < len; i++)
        lines += ix->text[i] == '\n' || (ix->text[i] == '\r' && ix->text[i + 1] != '\n');
    char *p = ix->text, *probe = NULL;
    /* The header: its fields counted on a copy, then split for good. */
    size_t eol = strcspn(p, "\n");
    if ((probe = strndup(p, eol)) == NULL) {
        app_index_fini(ix);
        return oom(err);
    }
    char *q = probe;
    ix->ncols = split_line(&q, NULL, 0);
    free(probe);
    ix->head = calloc(ix->ncols, sizeof(*ix->head));
    ix->cell = calloc((lines + 1) * ix->ncols, sizeof(*ix->cell));
    if (ix->head == NULL || ix->cell == NULL) {
        app_index_fini(ix);
        return oom(err);
    }
    split_line(&p, ix->head, ix->ncols);
    int seed = app_index_column(ix, "seed"), reason = app_index_column(ix, "stop_reason");
    if (ix->ncols < 4 || strcmp(ix->head[0], "point") != 0 || strcmp(ix->head[1], "dir") != 0 ||
        seed < 2 || reason != seed + 1) {
        /* The message first: fini zeroes the path. */
        int rc = sim_err_set(err, SIM_EINVAL, NULL,
                             "%s: not an index of hetsim (its header is not point, dir, ..., "
                             "seed, stop_reason, ...)",
                             ix->path);
        app_index_fini(ix);
        return rc;
    }
    ix->nkeys = (size_t)seed - 2;
    for (size_t line = 2; *p != '\0'; line++) {
        char **row = &ix->cell[ix->nrows * ix->ncols];
        size_t n = split_line(&p, row, ix->ncols);
        if (n == 1 && row[0][0] == '\0')
            continue; /* a blank line */
        if (n != ix->ncols) {
            int rc =
                sim_err_set(err, SIM_EINVAL, NULL, "%s: line %zu: %zu fields, the header has %zu",
                            ix->path, line, n, ix->ncols);
            app_index_fini(ix);
            return rc;
        }
        ix->nrows++;
    }
    return SIM_OK;
}

void app_index_fini(app_index *ix)
{
    free(ix->text);
    free(ix->cell);
    free(ix->head);
    memset(ix, 0, sizeof(*ix));
}

int app_index_column(const app_index *ix, const char *name)
{
    for (size_t c = 0; c < ix->ncols; c++)
        if (strcmp(ix->head[c], name) == 0)
            return (int)c;
    return -1;
}

const char *app_index_cell(const app_index *ix, size_t r, size_t c)
{
    return ix->cell[r * ix->ncols + c];
}

bool app_index_has_results(const app_index *ix, size_t r)
{
    return strcmp(app_index_cell(ix, r, ix->nkeys + 3), "missing") != 0;
}

void app_index_keys(const app_index *ix, char *buf, size_t size)
{
    size_t len = 0;
    buf[0] = '\0';
    for (size_t c = 2; c < ix->nkeys + 3 && len < size; c++)
        len += (size_t)snprintf(buf + len, size - len, "%s%s", c > 2 ? ", " : "", ix->head[c]);
}

int app_index_key_column(const app_index *ix, const char *key, int *col, sim_err *err)
{
    char valid[1024];
    *col = app_index_column(ix, key);
    if (*col >= 2 && (size_t)*col <= ix->nkeys + 2)
        return SIM_OK;
    app_index_keys(ix, valid, sizeof(valid));
    return sim_err_set(err, SIM_EINVAL, NULL, "%s: no column \"%s\" (valid: %s)", ix->path, key,
                       valid);
}

/* The stop target of the run in `dir` (run.json's scenario.stop.target_accuracy), or NaN. */
static double stop_target(const char *dir)
{
    char path[2048];
    if (snprintf(path, sizeof(path), "%s/run.json", dir) >= (int)sizeof(path))
        return (double)NAN;
    size_t n = 0;
    char *text = sim_output_read(path, &n);
    double v = NAN;
    sim_cfg *root = text != NULL ? sim_cfg_parse(text, n, path, NULL) : NULL, *sc = NULL,
            *stop = NULL;
    free(text);
    if (root != NULL && sim_cfg_child(root, "scenario", &sc, NULL) == 0 && sc != NULL &&
        sim_cfg_child(sc, "stop", &stop, NULL) == 0 && stop != NULL &&
        sim_cfg_has(stop, "target_accuracy") && !sim_cfg_is_null(stop, "target_accuracy") &&
        sim_cfg_double(stop, "target_accuracy", 0.0, 1.0, &v, NULL) != 0)
        v = NAN;
    sim_cfg_destroy(root);
    return v;
}

int app_index_stop_target(const app_index *ix, const char *sweep_dir, double *target, sim_err *err)
{
    char dir[2048];
    const char *first = NULL;
    *target = NAN;
    for (size_t r = 0; r < ix->nrows; r++) {
        if (!app_index_has_results(ix, r))
            continue;
        snprintf(dir, sizeof(dir), "%s/%s", sweep_dir, app_index_cell(ix, r, 1));
        double t = stop_target(dir);
        if (first == NULL) {
            first = app_index_cell(ix, r, 1);
            *target = t;
        } else if (!(t == *target || (isnan(t) && isnan(*target)))) {
            return sim_err_set(err, SIM_EINVAL, NULL,
                               "%s: the runs stop at different target accuracies (%g in %s, %g "
                               "in %s): choose one with --target",
                               ix->path, *target, first, t, app_index_cell(ix, r, 1));
        }
    }
    return SIM_OK;
}
