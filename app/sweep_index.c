/* Sweeps: index.csv and curves.csv (see sweep.h). */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app/index.h"
#include "app/sweep.h"
#include "app/sweep_state.h"
#include "outputs/csv.h"
#include "outputs/output.h"
#include "sim/cfg.h"

/* ---- index.csv -------------------------------------------------------------------------- */

/* A number of summary.json (or of its "wall" object) as it was written, or "" for null. */
static void csv_number(FILE *f, sim_cfg *c, const char *key)
{
    double v = NAN;
    if (c == NULL || sim_cfg_is_null(c, key) ||
        sim_cfg_double(c, key, -INFINITY, INFINITY, &v, NULL) != 0 || isnan(v))
        return;
    fprintf(f, "%.17g", v);
}

/* The run in `dir` is of point k's scenario (sw_run_is): a run of another (a file the point
 * read changed during the sweep; app_sweep_reap fails the point) is no result. */
static bool its_run(const app_sweep *sw, size_t k, const char *dir)
{
    sim_cfg *run = sw_read_json(dir, "run.json");
    bool same = sw_run_is(run, &sw->points[k]);
    sim_cfg_destroy(run);
    return same;
}

static void write_row(const app_sweep *sw, size_t k, FILE *f, const size_t *vi)
{
    const point *p = &sw->points[k];
    char dir[PATH_TEXT], plain[512], reason[64] = "missing";
    sw_join(dir, sizeof(dir), sw->dir, p->name);
    fprintf(f, "%zu,", k);
    sim_output_csv_field(f, p->name);
    for (size_t c = 0; c < sw->ncols; c++) {
        sw_plain_value(sw->cols[c].values[vi[c]], plain, sizeof(plain));
        fputc(',', f);
        sim_output_csv_field(f, plain);
    }
    fprintf(f, ",%" PRIu64 ",", sw->seeds[k % sw->nseeds]);
    sim_cfg *s = its_run(sw, k, dir) ? sw_read_json(dir, "summary.json") : NULL, *wall = NULL;
    if (s != NULL)
        sim_cfg_string(s, "stop_reason", reason, sizeof(reason), NULL);
    sim_output_csv_field(f, reason);
    for (size_t i = 0; i + 1 < APP_INDEX_NRESULTS; i++) {
        fputc(',', f);
        csv_number(f, s, app_index_results[i]);
    }
    fputc(',', f);
    if (s != NULL && sim_cfg_child(s, "wall", &wall, NULL) == 0)
        csv_number(f, wall, app_index_results[APP_INDEX_NRESULTS - 1]);
    fputc('\n', f);
    sim_cfg_destroy(s);
}

/* The columns of curves.csv after the point's: metrics.csv's (DESIGN §9). A run's
 * metrics.csv is read by its header's names, so a column it lacks stays empty. */
static const char *const curve_cols[] = { "time_s",        "iterations", "samples",
                                          "epoch",         "train_loss", "test_loss",
                                          "test_accuracy", "consensus",  "throughput_sps" };
#define NCURVE_COLS (sizeof(curve_cols) / sizeof(curve_cols[0]))

/* Point k's rows of curves.csv: its overrides and seed, then each row of its metrics.csv,
 * read by the strict reader of results files (none without one). Returns 0, SIM_ENOMEM, or
 * SIM_EINVAL for a metrics.csv that is not as a run writes it (naming its file and line:
 * its point's directory is to be removed and run again). */
static int curve_rows(const app_sweep *sw, size_t k, const size_t *vi, FILE *f, sim_err *err)
{
    char path[PATH_TEXT + 16], plain[512];
    int map[NCURVE_COLS];
    sim_csv t;
    snprintf(path, sizeof(path), "%s/%s/metrics.csv", sw->dir, sw->points[k].name);
    int rc = sim_csv_read(&t, path, &sim_csv_metrics, err);
    if (rc == SIM_EIO && t.open_errno != ENOMEM)
        return 0;           /* no results */
    if (rc == SIM_EINVAL) { /* the file and line said, then the fix */
        char why[sizeof(err->msg)];
        snprintf(why, sizeof(why), "%s", err->msg);
        return sim_err_set(err, SIM_EINVAL, NULL,
                           "%s (a damaged run: remove %s/%s and run the sweep again)", why, sw->dir,
                           sw->points[k].name);
    }
    if (rc != SIM_OK)
        return rc;
    for (size_t j = 0; j < NCURVE_COLS; j++)
        map[j] = sim_csv_column(&t, curve_cols[j]);
    char *text = NULL;
    size_t len = 0;
    FILE *p = open_memstream(&text, &len);
    if (p == NULL) {
        sim_csv_fini(&t);
        return sw_oom(err);
    }
    fprintf(p, "%zu", k);
    for (size_t c = 0; c < sw->ncols; c++) {
        sw_plain_value(sw->cols[c].values[vi[c]], plain, sizeof(plain));
        fputc(',', p);
        sim_output_csv_field(p, plain);
    }
    fprintf(p, ",%" PRIu64, sw->seeds[k % sw->nseeds]);
    if (fclose(p) != 0 || text == NULL) {
        free(text);
        sim_csv_fini(&t);
        return sw_oom(err);
    }
    for (size_t r = 0; r < t.nrows; r++) {
        fputs(text, f);
        for (size_t j = 0; j < NCURVE_COLS; j++) {
            fputc(',', f);
            if (map[j] >= 0)
                fputs(sim_csv_cell(&t, r, (size_t)map[j]), f);
        }
        fputc('\n', f);
    }
    free(text);
    sim_csv_fini(&t);
    return 0;
}

/* curves.csv: a row per evaluation of every point with results (tidy data). */
static int write_curves(const app_sweep *sw, size_t *vi, sim_err *err)
{
    sim_file *out = sim_file_open(sw->dir, "curves.csv", err);
    if (out == NULL)
        return err->code;
    FILE *f = sim_file_stream(out);
    fputs("point", f);
    for (size_t c = 0; c < sw->ncols; c++) {
        fputc(',', f);
        sim_output_csv_field(f, sw->cols[c].path);
    }
    fputs(",seed", f);
    for (size_t j = 0; j < NCURVE_COLS; j++)
        fprintf(f, ",%s", curve_cols[j]);
    fputc('\n', f);
    int rc = 0;
    for (size_t k = 0; k < sw->npoints && rc == 0; k++) {
        sw_decompose(sw, k, vi);
        rc = curve_rows(sw, k, vi, f, err);
    }
    if (rc != 0) {
        sim_file_abort(out);
        return rc;
    }
    return sim_file_commit(out, err);
}

int app_sweep_write_index(const app_sweep *sw, sim_err *err)
{
    size_t *vi = calloc(sw->ncols + 1, sizeof(*vi));
    if (vi == NULL)
        return sw_oom(err);
    sim_file *out = sim_file_open(sw->dir, "index.csv", err);
    if (out == NULL) {
        free(vi);
        return err->code;
    }
    FILE *f = sim_file_stream(out);
    fputs("point,dir", f);
    for (size_t c = 0; c < sw->ncols; c++) {
        fputc(',', f);
        sim_output_csv_field(f, sw->cols[c].path);
    }
    fputs(",seed,stop_reason", f);
    for (size_t i = 0; i < APP_INDEX_NRESULTS; i++)
        fprintf(f, ",%s", app_index_results[i]);
    fputc('\n', f);
    for (size_t k = 0; k < sw->npoints; k++) {
        sw_decompose(sw, k, vi);
        write_row(sw, k, f, vi);
    }
    int rc = sim_file_commit(out, err);
    if (rc == SIM_OK)
        rc = write_curves(sw, vi, err);
    free(vi);
    return rc;
}
