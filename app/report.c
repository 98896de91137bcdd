/* Comparison tables of a finished sweep (see report.h): reading, each row's figures and the
 * speed-ups; app/report_print.c prints them. */
#include "app/report.h"

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "app/curves.h"
#include "app/report_state.h"
#include "app/stats.h"

#define PATH_TEXT 2048

static int oom(sim_err *err)
{
    return sim_err_set(err, SIM_ENOMEM, NULL, "out of memory");
}

/* Run r's measures: the index's figures and its workers.csv's. */
static int read_run(rp_report *rp, size_t r, sim_err *err)
{
    static const char *const cols[] = {
        [M_FINAL] = "final_accuracy", [M_BEST] = "best_accuracy", [M_TP] = "mean_throughput_sps"
    };
    const app_index *ix = &rp->sel.ix;
    double *m = rp->run_m[r];
    char dir[PATH_TEXT];
    app_select_run_dir(&rp->sel, rp->o->sweep_dir, r, dir, sizeof(dir));
    for (size_t k = 0; k <= M_TP; k++) {
        int c = app_index_column(ix, cols[k]);
        m[k] = c >= 0 ? sim_csv_number(&ix->csv, r, (size_t)c) : (double)NAN;
    }
    app_workers w;
    int rc = app_workers_read(dir, &w, err);
    if (rc != SIM_OK)
        return rc;
    double busy = w.compute_s + w.comm_s + w.wait_s;
    m[M_BYTES] = w.samples > 0 ? w.bytes_sent / w.samples : (double)NAN;
    m[M_WAIT] = busy > 0 ? w.wait_s / busy : (double)NAN;
    m[M_COMM] = busy > 0 ? w.comm_s / busy : (double)NAN;
    m[M_COMM_ALL] = busy > 0 ? (w.comm_s + w.overlap_s) / busy : (double)NAN;
    rp->overlap = rp->overlap || w.has_overlap;
    return SIM_OK;
}

static int summarize(rp_report *rp, size_t g, double *x)
{
    const app_select_group *grp = &rp->sel.groups[g];
    rp_row *row = &rp->rows[g];
    row->n = grp->n;
    row->censored_s = NAN;
    for (size_t i = 0; i < grp->n; i++) {
        const app_select_run *r = &rp->sel.runs[grp->rows[i]];
        x[i] = r->ttt;
        row->ended_below += r->ended_below;
        if (isnan(r->ttt) && !isnan(rp->sel.target))
            row->censored_s =
                isnan(row->censored_s) ? r->observed_s : fmin(row->censored_s, r->observed_s);
    }
    row->reached = app_stats_mean_ci(x, grp->n, &row->ttt_mean, &row->ttt_half);
    for (size_t m = 0; m < NMEASURES; m++) {
        for (size_t i = 0; i < grp->n; i++)
            x[i] = rp->run_m[grp->rows[i]][m];
        size_t used = app_stats_mean_ci(x, grp->n, &row->mean[m], &row->half[m]);
        if (m == M_BYTES) { /* a run that counted no samples has no bytes per sample */
            row->bytes_runs = used;
            rp->bytes_left += grp->n - used;
        }
    }
    return SIM_OK;
}

/* Reads --baseline KEY=VALUE: KEY one of the --by keys. */
static int read_baseline(rp_report *rp, sim_err *err)
{
    const char *b = rp->o->baseline, *eq = b != NULL ? strchr(b, '=') : NULL;
    rp->base_key = -1;
    if (b == NULL)
        return SIM_OK;
    for (size_t k = 0; eq != NULL && k < rp->sel.nby; k++)
        if (strlen(rp->sel.by_key[k]) == (size_t)(eq - b) &&
            strncmp(rp->sel.by_key[k], b, (size_t)(eq - b)) == 0)
            rp->base_key = (int)k;
    if (rp->base_key < 0)
        return sim_err_set(err, SIM_EINVAL, NULL,
                           "--baseline takes KEY=VALUE with KEY a key of --by (%s), got \"%s\"",
                           rp->o->sel.by, b);
    rp->base_value = eq + 1;
    return SIM_OK;
}

/* The baseline row of row g: the same --by values but the baseline key's, which is its
 * value. SIZE_MAX when there is none. */
static size_t baseline_of(const rp_report *rp, const bool *is_base, size_t g)
{
    const app_select *s = &rp->sel;
    for (size_t b = 0; b < s->ngroups; b++) {
        bool ok = is_base[b];
        for (size_t k = 0; k < s->nby && ok; k++)
            ok =
                (int)k == rp->base_key || strcmp(s->groups[b].value[k], s->groups[g].value[k]) == 0;
        if (ok)
            return b;
    }
    return SIZE_MAX;
}

/* Row g's speed-up against its baseline row: the baseline's time to target over the row's
 * (over the runs that reached it), or without a target the row's throughput over the
 * baseline's. */
static void speedup(rp_report *rp, size_t g, size_t b, double *x, double *y)
{
    const app_select_group *a = &rp->sel.groups[g], *base = &rp->sel.groups[b];
    rp_row *row = &rp->rows[g];
    bool ttt = !isnan(rp->sel.target);
    for (size_t i = 0; i < a->n; i++)
        x[i] = ttt ? rp->sel.runs[a->rows[i]].ttt : rp->run_m[a->rows[i]][M_TP];
    for (size_t i = 0; i < base->n; i++)
        y[i] = ttt ? rp->sel.runs[base->rows[i]].ttt : rp->run_m[base->rows[i]][M_TP];
    if (ttt)
        app_stats_ratio_ci(y, base->n, x, a->n, &row->speedup, &row->speedup_lo, &row->speedup_hi);
    else
        app_stats_ratio_ci(x, a->n, y, base->n, &row->speedup, &row->speedup_lo, &row->speedup_hi);
    row->speedup_censored = ttt && (rp->rows[g].reached < a->n || rp->rows[b].reached < base->n);
    /* No ratio when the denominator's mean is 0, or so small that the ratio is past a double. */
    double mean = NAN, num = NAN;
    if (app_stats_mean_sd(ttt ? x : y, ttt ? a->n : base->n, &mean, NULL) == 0)
        return;
    if (mean == 0.0)
        rp->zero_den = true;
    else if (app_stats_mean_sd(ttt ? y : x, ttt ? base->n : a->n, &num, NULL) > 0 &&
             isinf(num / mean))
        rp->past_double = true;
}

static int build(rp_report *rp, sim_err *err)
{
    app_select *s = &rp->sel;
    size_t n = s->ix.csv.nrows, most = 0;
    rp->run_m = calloc(n + 1, sizeof(*rp->run_m));
    rp->rows = calloc(s->ngroups + 1, sizeof(*rp->rows));
    for (size_t g = 0; g < s->ngroups; g++)
        most = s->groups[g].n > most ? s->groups[g].n : most;
    double *x = calloc(most + 1, sizeof(*x)), *y = calloc(most + 1, sizeof(*y));
    bool *use = calloc(n + 1, sizeof(*use)), *is_base = calloc(s->ngroups + 1, sizeof(*is_base));
    int rc = rp->run_m == NULL || rp->rows == NULL || x == NULL || y == NULL || use == NULL ||
                     is_base == NULL
                 ? oom(err)
                 : read_baseline(rp, err);
    /* The baseline's value as --where takes one ("0.10" is index.csv's 0.1: it was "no row"). */
    for (size_t b = 0; b < s->ngroups && rc == SIM_OK && rp->base_key >= 0; b++)
        is_base[b] = app_select_same_value(s->groups[b].value[rp->base_key], rp->base_value);
    for (size_t g = 0; g < s->ngroups && rc == SIM_OK; g++)
        for (size_t i = 0; i < s->groups[g].n && rc == SIM_OK; i++) {
            use[s->groups[g].rows[i]] = true;
            rc = read_run(rp, s->groups[g].rows[i], err);
        }
    for (size_t g = 0; g < s->ngroups && rc == SIM_OK; g++)
        rc = summarize(rp, g, x);
    for (size_t g = 0; g < s->ngroups && rc == SIM_OK; g++) {
        rp->rows[g].speedup = rp->rows[g].speedup_lo = rp->rows[g].speedup_hi = NAN;
        size_t b = rp->base_key >= 0 ? baseline_of(rp, is_base, g) : SIZE_MAX;
        if (rp->base_key >= 0 && b == SIZE_MAX)
            rc = sim_err_set(err, SIM_EINVAL, NULL, "--baseline %s: no row has %s=%s%s",
                             rp->o->baseline, s->by_key[rp->base_key], rp->base_value,
                             s->nby > 1 ? " with the other --by values of every row" : "");
        else if (b == g)
            rp->rows[g].baseline = true;
        else if (b != SIZE_MAX)
            speedup(rp, g, b, x, y);
    }
    if (rc == SIM_OK)
        rc = app_index_eval_every(&s->ix, rp->o->sweep_dir, use, &rp->every_lo, &rp->every_hi, err);
    free(is_base);
    free(x);
    free(y);
    free(use);
    return rc;
}

int app_report_print(const app_report_options *o, FILE *out, FILE *log, sim_err *err)
{
    sim_err_clear(err);
    rp_report rp = { .o = o, .base_key = -1 };
    if (o->grid && o->sel.best_over == NULL)
        return sim_err_set(err, SIM_EINVAL, NULL, "--grid shows the tuning of --best-over KEY");
    if (o->grid && o->format == APP_REPORT_TEX)
        return sim_err_set(err, SIM_EINVAL, NULL, "--grid prints Markdown or CSV, not tex");
    int rc = app_select_read(&rp.sel, o->sweep_dir, &o->sel, log, err);
    if (rc == SIM_OK)
        rc = build(&rp, err);
    if (rc == SIM_OK && o->format == APP_REPORT_TEX)
        rc = rp_check_tex_names(&rp, err);
    char *text = NULL;
    size_t len = 0;
    FILE *mem = rc == SIM_OK ? open_memstream(&text, &len) : NULL;
    if (rc == SIM_OK && mem == NULL)
        rc = oom(err);
    if (mem != NULL) {
        if (o->grid)
            rp_print_grid(&rp, mem);
        else if (o->format == APP_REPORT_CSV)
            rp_print_csv(&rp, mem);
        else if (o->format == APP_REPORT_TEX)
            rp_print_tex(&rp, mem);
        else
            rp_print_md(&rp, mem);
        if (fclose(mem) != 0 || text == NULL)
            rc = oom(err);
    }
    if (rc == SIM_OK && log != NULL) {
        size_t below = 0, short_window = 0;
        for (size_t g = 0; g < rp.sel.ngroups; g++) {
            below += rp.rows[g].ended_below;
            for (size_t i = 0; i < rp.sel.groups[g].n; i++)
                short_window += rp.sel.runs[rp.sel.groups[g].rows[i]].short_window;
        }
        if (rp.sel.left_out > 0)
            sim_err_warn(log, "%s: left out %zu point%s without results", rp.sel.ix.csv.path,
                         rp.sel.left_out, rp.sel.left_out == 1 ? "" : "s");
        if (below > 0)
            fprintf(log,
                    "hetsim: warning: %zu runs reached %g and ended below it: their time to "
                    "target is a first crossing (--ttt sustained or movavg:K are stricter)\n",
                    below, rp.sel.target);
        /* --ttt movavg:1000 over runs of 11 evaluations read every run as "not reached",
         * "> 1, 0/3", with no word that no window of 1000 evaluations was ever full. */
        if (short_window > 0)
            fprintf(log,
                    "hetsim: warning: %zu run%s fewer than %zu evaluations: no window of "
                    "--ttt movavg:%zu is full, so %s never reached the target (evaluate more "
                    "often, eval.every_s, or take a smaller K)\n",
                    short_window, short_window == 1 ? " has" : "s have", rp.sel.rule.k,
                    rp.sel.rule.k, short_window == 1 ? "it" : "they");
    }
    if (rc == SIM_OK) {
        fwrite(text, 1, len, out);
    }
    free(text);
    free(rp.run_m);
    free(rp.rows);
    app_select_fini(&rp.sel);
    return rc;
}
