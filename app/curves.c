/* Evaluation curves and bands (see curves.h). */
#include "app/curves.h"

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app/stats.h"
#include "outputs/csv.h"
#include "outputs/output.h"

#define PATH_TEXT 4096

const char *const app_curve_names[APP_CURVE_NCOLS] = {
    "time_s", "samples", "epoch", "test_loss", "test_accuracy", "throughput_sps",
};

int app_run_file_missing(const char *path, sim_err *err)
{
    return sim_err_set(err, SIM_EINVAL, NULL,
                       "an incomplete run directory (files removed, or copied in part): run it "
                       "again (a sweep runs a point again once its directory is removed): no "
                       "file %s",
                       path);
}

int app_run_file_empty(const char *path, sim_err *err)
{
    return sim_err_set(err, SIM_EINVAL, NULL,
                       "an incomplete run directory (files removed, or copied in part): run it "
                       "again (a sweep runs a point again once its directory is removed): empty "
                       "file %s",
                       path);
}

/* Reads dir/name with the strict reader (outputs/csv.h) under `rules`; a missing file is an
 * incomplete run directory. */
static int read_csv(const char *dir, const char *name, const sim_csv_rules *rules, sim_csv *t,
                    sim_err *err)
{
    char path[PATH_TEXT];
    memset(t, 0, sizeof(*t));
    if (snprintf(path, sizeof(path), "%s/%s", dir, name) >= (int)sizeof(path))
        return sim_err_set(err, SIM_EINVAL, NULL, "path too long: %s", dir);
    int rc = sim_csv_read(t, path, rules, err);
    if (rc == SIM_EIO && t->open_errno == ENOENT)
        return app_run_file_missing(path, err);
    return rc;
}

int app_curve_read(const char *dir, app_curve *c, sim_err *err)
{
    sim_csv t;
    size_t idx[APP_CURVE_NCOLS];
    memset(c, 0, sizeof(*c));
    int rc = read_csv(dir, "metrics.csv", &sim_csv_metrics, &t, err);
    if (rc == SIM_OK)
        rc = sim_csv_require(&t, app_curve_names, APP_CURVE_NCOLS, idx, err);
    if (rc == SIM_OK && t.nrows == 0) /* drawn as a run with no curve, exit 0 (plot RUN refused) */
        rc = sim_err_set(err, SIM_EINVAL, NULL,
                         "%s has a header but no rows (a run writes one at time 0)", t.path);
    for (size_t j = 0; j < APP_CURVE_NCOLS && rc == SIM_OK; j++)
        if ((c->col[j] = calloc(t.nrows + 1, sizeof(*c->col[j]))) == NULL)
            rc = sim_err_set(err, SIM_ENOMEM, NULL, "out of memory");
    for (size_t r = 0; r < t.nrows && rc == SIM_OK; r++)
        for (size_t j = 0; j < APP_CURVE_NCOLS; j++)
            c->col[j][r] = sim_csv_number(&t, r, idx[j]);
    if (rc == SIM_OK) {
        char summary[PATH_TEXT], run_json[PATH_TEXT];
        snprintf(summary, sizeof(summary), "%s/summary.json", dir);
        snprintf(run_json, sizeof(run_json), "%s/run.json", dir);
        rc = sim_csv_check_metrics(&t, idx[APP_CURVE_TIME], summary, run_json, err);
    }
    if (rc == SIM_OK)
        c->n = t.nrows;
    else
        app_curve_fini(c);
    sim_csv_fini(&t);
    return rc;
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

bool app_ttt_parse(const char *text, app_ttt_rule *rule)
{
    rule->k = 0;
    if (strcmp(text, "first") == 0 || strcmp(text, "sustained") == 0) {
        rule->kind = text[0] == 'f' ? APP_TTT_FIRST : APP_TTT_SUSTAINED;
        return true;
    }
    if (strncmp(text, "movavg:", 7) != 0)
        return false;
    const char *d = text + 7;
    size_t k = 0;
    for (; *d >= '0' && *d <= '9' && k <= APP_TTT_MAX_K; d++)
        k = 10 * k + (size_t)(*d - '0');
    if (*d != '\0' || d == text + 7 || k < 2 || k > APP_TTT_MAX_K)
        return false;
    rule->kind = APP_TTT_MOVAVG;
    rule->k = k;
    return true;
}

void app_ttt_name(const app_ttt_rule *rule, char *buf, size_t size)
{
    if (rule->kind == APP_TTT_MOVAVG)
        snprintf(buf, size, "movavg:%zu", rule->k);
    else
        snprintf(buf, size, "%s", rule->kind == APP_TTT_FIRST ? "first" : "sustained");
}

void app_ttt_describe(const app_ttt_rule *rule, double target, char *buf, size_t size)
{
    if (rule->kind == APP_TTT_MOVAVG)
        snprintf(buf, size,
                 "the first evaluation at which the mean test accuracy of the last %zu "
                 "evaluations is at least %g",
                 rule->k, target);
    else if (rule->kind == APP_TTT_SUSTAINED)
        snprintf(buf, size,
                 "the first evaluation from which the test accuracy stays at least %g to the "
                 "end of the run",
                 target);
    else
        snprintf(buf, size, "the first evaluation at test accuracy at least %g", target);
}

double app_curve_time_to_rule(const app_curve *c, double target, const app_ttt_rule *rule)
{
    const double *acc = c->col[APP_CURVE_ACC], *t = c->col[APP_CURVE_TIME];
    if (rule->kind == APP_TTT_FIRST)
        return app_curve_time_to(c, target);
    if (rule->kind == APP_TTT_SUSTAINED) {
        size_t from = c->n;
        while (from > 0 && acc[from - 1] >= target) /* false for NaN */
            from--;
        return from < c->n ? t[from] : (double)NAN;
    }
    for (size_t i = rule->k - 1; i < c->n; i++) {
        double sum = 0.0;
        for (size_t j = i + 1 - rule->k; j <= i; j++)
            sum += acc[j];
        if (sum / (double)rule->k >= target) /* false with a NaN in the window */
            return t[i];
    }
    return (double)NAN;
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
    fputs("x,acc_mean,acc_lo,acc_hi,loss_mean,loss_lo,loss_hi,tp_mean,tp_lo,tp_hi,n,acc_drop,"
          "loss_drop,tp_drop,ends\n",
          f);
    size_t rows = 0;
    for (size_t k = 0; k < n; k++)
        rows = curves[k].n > rows ? curves[k].n : rows;
    for (size_t i = 0; i < rows; i++) {
        double x = 0.0, means[3];
        size_t nx = 0, ends = 0;
        for (size_t k = 0; k < n; k++)
            if (i < curves[k].n) {
                x += curves[k].col[x_col][i];
                nx++;
                ends += i + 1 == curves[k].n && i + 1 < rows;
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
            means[y] = mean;
        }
        fprintf(f, ",%zu", nx);
        for (size_t y = 0; y < 3; y++)
            put(f, ends > 0 ? means[y] : (double)NAN);
        fprintf(f, ",%zu\n", ends);
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
    double sum[NCOLS] = { 0 };
    size_t idx[NCOLS];
    sim_csv t;
    memset(w, 0, sizeof(*w));
    char run_json[PATH_TEXT];
    snprintf(run_json, sizeof(run_json), "%s/run.json", dir);
    int rc = read_csv(dir, "workers.csv", &sim_csv_workers, &t, err);
    if (rc == SIM_OK)
        rc = sim_csv_check_workers(&t, run_json, err);
    if (rc == SIM_OK)
        rc = sim_csv_require(&t, names, NREQUIRED, idx, err);
    if (rc != SIM_OK) {
        sim_csv_fini(&t);
        return rc;
    }
    for (size_t j = NREQUIRED; j < NCOLS; j++) {
        int c = sim_csv_column(&t, names[j]);
        idx[j] = c >= 0 ? (size_t)c : t.ncols; /* optional: absent counts as 0 */
    }
    w->has_overlap = idx[OVERLAP] < t.ncols;
    for (size_t r = 0; r < t.nrows; r++)
        for (size_t j = 0; j < NCOLS; j++) {
            double v = idx[j] < t.ncols ? sim_csv_number(&t, r, idx[j]) : 0.0;
            sum[j] += isnan(v) ? 0.0 : v; /* an empty field counts as 0 */
        }
    w->n = t.nrows;
    sim_csv_fini(&t);
    w->samples = sum[SAMPLES];
    w->compute_s = sum[COMPUTE];
    w->comm_s = sum[COMM];
    w->wait_s = sum[WAIT];
    w->bytes_sent = sum[BYTES];
    w->down_s = sum[DOWN];
    w->overlap_s = sum[OVERLAP];
    return SIM_OK;
}
