/* Evaluation curves and bands (see curves.h). */
#include "app/curves.h"

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app/stats.h"
#include "sim/output.h"

#define LINE_MAX_  4096
#define MAX_FIELDS 64

const char *const app_curve_names[APP_CURVE_NCOLS] = {
    "time_s", "samples", "epoch", "test_loss", "test_accuracy", "throughput_sps",
};

/* Splits `line` at commas in place; returns the number of fields. */
static size_t split(char *line, char **fields)
{
    size_t n = 0;
    line[strcspn(line, "\r\n")] = '\0';
    for (char *p = line; n < MAX_FIELDS;) {
        fields[n++] = p;
        char *comma = strchr(p, ',');
        if (comma == NULL)
            break;
        *comma = '\0';
        p = comma + 1;
    }
    return n;
}

/* The error of a file that fopen refused: a missing one is the user's to fix (a run
 * directory with some of its files removed, or copied in part), so the hint comes first,
 * before a path that may fill the message. */
static int cannot_open(const char *path, sim_err *err)
{
    int e = errno;
    if (e == ENOENT)
        return sim_err_set(err, SIM_EINVAL, NULL,
                           "an incomplete run directory (files removed, or copied in part): run "
                           "it again (a sweep runs a point again once its directory is "
                           "removed): no file %s",
                           path);
    return sim_err_set(err, SIM_EIO, NULL, "cannot read %s: %s", path, strerror(e));
}

static int grow(app_curve *c, size_t *cap)
{
    if (c->n < *cap)
        return 0;
    *cap = *cap == 0 ? 64 : *cap * 2;
    for (size_t j = 0; j < APP_CURVE_NCOLS; j++) {
        double *v = realloc(c->col[j], *cap * sizeof(*v));
        if (v == NULL)
            return -1;
        c->col[j] = v;
    }
    return 0;
}

/* A finite number filling all of `s`, or an empty field (NaN). False for anything else
 * ("inf", "nan", "1e400", "12x"). */
static bool parse_field(const char *s, double *v, bool strict)
{
    if (s[0] == '\0') {
        *v = (double)NAN;
        return true;
    }
    char *end = NULL;
    errno = 0;
    *v = strtod(s, &end);
    if (*end != '\0' || end == s)
        return false;
    return !strict || (isfinite(*v) && errno != ERANGE);
}

/* Opens dir/name and finds the columns names[0..n) in its header: idx[j] is a column's
 * field, or the header's field count for a column it lacks, an error for the first
 * `required` of them. A strict reader also refuses a header with no end of line. On success
 * *out is open past the header, path[LINE_MAX_] holds the file's path for messages and
 * *nfields the header's field count. */
static int open_csv(const char *dir, const char *name, const char *const *names, size_t n,
                    size_t required, bool strict, char *path, FILE **out, size_t *idx,
                    size_t *nfields, sim_err *err)
{
    char line[LINE_MAX_], *fields[MAX_FIELDS];
    *out = NULL;
    if (snprintf(path, LINE_MAX_, "%s/%s", dir, name) >= LINE_MAX_)
        return sim_err_set(err, SIM_EINVAL, NULL, "path too long: %s", dir);
    FILE *f = fopen(path, "r");
    if (f == NULL)
        return cannot_open(path, err);
    int rc = fgets(line, sizeof(line), f) == NULL
                 ? sim_err_set(err, SIM_EINVAL, NULL, "%s: empty file", path)
                 : 0;
    if (rc == 0 && strict && strchr(line, '\n') == NULL)
        rc = sim_err_set(err, SIM_EINVAL, NULL, "%s: line 1: truncated (no end of line)", path);
    size_t nf = rc == 0 ? split(line, fields) : 0;
    for (size_t j = 0; j < n && rc == 0; j++) {
        idx[j] = nf;
        for (size_t i = 0; i < nf; i++)
            if (strcmp(fields[i], names[j]) == 0)
                idx[j] = i;
        if (idx[j] == nf && j < required)
            rc = sim_err_set(err, SIM_EINVAL, NULL, "%s: no column %s", path, names[j]);
    }
    if (rc != 0) {
        fclose(f);
        return rc;
    }
    *out = f;
    *nfields = nf;
    return 0;
}

static int read_curve(const char *dir, app_curve *c, bool strict, sim_err *err)
{
    char path[LINE_MAX_], line[LINE_MAX_], *fields[MAX_FIELDS];
    size_t idx[APP_CURVE_NCOLS], cap = 0, lineno = 1, ncols = 0, nf;
    memset(c, 0, sizeof(*c));
    FILE *f = NULL;
    int rc = open_csv(dir, "metrics.csv", app_curve_names, APP_CURVE_NCOLS, APP_CURVE_NCOLS, strict,
                      path, &f, idx, &ncols, err);
    if (rc != 0)
        return rc;
    while (rc == 0 && fgets(line, sizeof(line), f) != NULL) {
        lineno++;
        bool whole = strchr(line, '\n') != NULL;
        nf = split(line, fields);
        if (strict && !whole) {
            rc = sim_err_set(err, SIM_EINVAL, NULL, "%s: line %zu: truncated (no end of line)",
                             path, lineno);
            break;
        }
        if (strict && nf != ncols) {
            rc = sim_err_set(err, SIM_EINVAL, NULL, "%s: line %zu: %zu fields, the header has %zu",
                             path, lineno, nf, ncols);
            break;
        }
        for (size_t i = 0; i < nf && strict && rc == 0; i++) {
            double v;
            if (!parse_field(fields[i], &v, true))
                rc = sim_err_set(err, SIM_EINVAL, NULL,
                                 "%s: line %zu: \"%s\" is not a finite number", path, lineno,
                                 fields[i]);
        }
        if (rc == 0 && grow(c, &cap) != 0)
            rc = sim_err_set(err, SIM_ENOMEM, NULL, "out of memory");
        for (size_t j = 0; j < APP_CURVE_NCOLS && rc == 0; j++) {
            const char *s = idx[j] < nf ? fields[idx[j]] : "";
            double v;
            if (!parse_field(s, &v, strict))
                rc = sim_err_set(err, SIM_EINVAL, NULL, "%s: line %zu: bad number \"%s\"", path,
                                 lineno, s);
            c->col[j][c->n] = v;
        }
        if (rc == 0)
            c->n++;
    }
    fclose(f);
    if (rc != 0)
        app_curve_fini(c);
    return rc;
}

int app_curve_read(const char *dir, app_curve *c, sim_err *err)
{
    return read_curve(dir, c, false, err);
}

int app_curve_read_strict(const char *dir, app_curve *c, sim_err *err)
{
    return read_curve(dir, c, true, err);
}

void app_curve_fini(app_curve *c)
{
    for (size_t j = 0; j < APP_CURVE_NCOLS; j++)
        free(c->col[j]);
    memset(c, 0, sizeof(*c));
}

double app_curve_time_to(const app_curve *c, double target)
{
    for (size_t i = 0; i < c->n; i++)
        if (c->col[APP_CURVE_ACC][i] >= target) /* false for NaN */
            return c->col[APP_CURVE_TIME][i];
    return (double)NAN;
}

double app_curve_last_time(const app_curve *c)
{
    return c->n > 0 ? c->col[APP_CURVE_TIME][c->n - 1] : 0.0;
}

static void put(FILE *f, double v)
{
    if (isnan(v))
        fputs(",NaN", f);
    else
        fprintf(f, ",%.9g", v);
}

int app_curve_write_band(const char *dir, const char *name, const app_curve *curves, size_t n,
                         enum app_curve_col x_col, enum app_curve_band band, sim_err *err)
{
    static const enum app_curve_col ys[] = { APP_CURVE_ACC, APP_CURVE_LOSS, APP_CURVE_TP };
    double *v = calloc(n + 1, sizeof(*v));
    if (v == NULL)
        return sim_err_set(err, SIM_ENOMEM, NULL, "out of memory");
    sim_file *out = sim_file_open(dir, name, err);
    if (out == NULL) {
        free(v);
        return err->code;
    }
    FILE *f = sim_file_stream(out);
    fputs("x,acc_mean,acc_lo,acc_hi,loss_mean,loss_lo,loss_hi,tp_mean,tp_lo,tp_hi,n\n", f);
    size_t rows = 0;
    for (size_t k = 0; k < n; k++)
        rows = curves[k].n > rows ? curves[k].n : rows;
    for (size_t i = 0; i < rows; i++) {
        double x = 0.0;
        size_t nx = 0;
        for (size_t k = 0; k < n; k++)
            if (i < curves[k].n) {
                x += curves[k].col[x_col][i];
                nx++;
            }
        fprintf(f, "%.9g", x / (double)nx);
        for (size_t y = 0; y < 3; y++) {
            double lo = INFINITY, hi = -INFINITY, mean = NAN, half = NAN;
            for (size_t k = 0; k < n; k++) {
                v[k] = i < curves[k].n ? curves[k].col[ys[y]][i] : (double)NAN;
                lo = isnan(v[k]) ? lo : fmin(lo, v[k]);
                hi = isnan(v[k]) ? hi : fmax(hi, v[k]);
            }
            size_t m = app_stats_mean_ci(v, n, &mean, &half);
            if (band == APP_CURVE_BAND_CI95) {
                lo = m > 1 ? mean - half : mean;
                hi = m > 1 ? mean + half : mean;
            }
            put(f, mean);
            put(f, m > 0 ? lo : (double)NAN);
            put(f, m > 0 ? hi : (double)NAN);
        }
        fprintf(f, ",%zu\n", nx);
    }
    free(v);
    return sim_file_commit(out, err);
}

int app_workers_read(const char *dir, app_workers *w, sim_err *err)
{
    enum {
        SAMPLES,
        COMPUTE,
        COMM,
        WAIT,
        BYTES,
        DOWN,
        OVERLAP,
        NCOLS,
        NREQUIRED = DOWN
    };
    static const char *const names[NCOLS] = { "samples",    "compute_s", "comm_s",        "wait_s",
                                              "bytes_sent", "down_s",    "comm_overlap_s" };
    char path[LINE_MAX_], line[LINE_MAX_], *fields[MAX_FIELDS];
    size_t idx[NCOLS], lineno = 1, nf = 0;
    double sum[NCOLS] = { 0 };
    memset(w, 0, sizeof(*w));
    FILE *f = NULL;
    int rc = open_csv(dir, "workers.csv", names, NCOLS, NREQUIRED, false, path, &f, idx, &nf, err);
    if (rc != 0)
        return rc;
    w->has_overlap = idx[OVERLAP] < nf;
    while (rc == 0 && fgets(line, sizeof(line), f) != NULL) {
        lineno++;
        if (line[strspn(line, "\r\n")] == '\0')
            continue; /* a blank line */
        size_t n = split(line, fields);
        for (size_t j = 0; j < NCOLS && rc == 0; j++) {
            double v = 0.0;
            if (idx[j] < n && !parse_field(fields[idx[j]], &v, false))
                rc = sim_err_set(err, SIM_EINVAL, NULL, "%s: line %zu: bad number \"%s\"", path,
                                 lineno, fields[idx[j]]);
            sum[j] += isnan(v) ? 0.0 : v;
        }
        w->n += rc == 0;
    }
    fclose(f);
    if (rc != 0) {
        memset(w, 0, sizeof(*w));
        return rc;
    }
    w->samples = sum[SAMPLES];
    w->compute_s = sum[COMPUTE];
    w->comm_s = sum[COMM];
    w->wait_s = sum[WAIT];
    w->bytes_sent = sum[BYTES];
    w->down_s = sum[DOWN];
    w->overlap_s = sum[OVERLAP];
    return SIM_OK;
}
