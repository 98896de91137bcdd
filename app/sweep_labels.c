/* Labels of sweep points drawn as runs by `hetsim plot RUN...` (see sweep_plot.h,
 * app_sweep_point_labels): the overrides that differ between the points drawn. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app/index.h"
#include "app/sweep_plot.h"
#include "outputs/rundir.h"

#define PATH_TEXT SIM_ERR_FILE_MAX /* a run directory of up to 4,000 bytes (docs/usage.md) */

static int oom(sim_err *err)
{
    return sim_err_set(err, SIM_ENOMEM, NULL, "out of memory");
}

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
static int point_at(const char *dir, app_index *ix, char *parent, point_keys *p, sim_err *err)
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
    else if (base - 1 < sizeof(up))
        snprintf(up, sizeof(up), "%.*s", (int)(base - 1), dir);
    else /* longer than the system takes, and than any sweep (767 bytes): no sweep's point */
        return SIM_OK;
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

/* point_at for the place `dir` names, spelt the one way (sim_rundir_follow: "." components and
 * trailing slashes dropped, a link followed to its target): "SW/POINT/." was read as the run
 * "." of the folder SW/POINT, no sweep's, and drawn with its scenario's name ("b, b-2" for
 * "workload.batch=8, workload.batch=16" of the same two runs), and so was a link to a point. */
static int find_point(const char *dir, app_index *ix, char *parent, point_keys *p, sim_err *err)
{
    char *place = NULL;
    sim_err ignored; /* a place that cannot be followed is read as it is spelt */
    if (sim_rundir_follow(dir, &place, &ignored) != SIM_OK) {
        free(place);
        place = NULL;
    }
    int rc = point_at(place != NULL ? place : dir, ix, parent, p, err);
    free(place);
    return rc;
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
