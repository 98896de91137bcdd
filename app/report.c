/* Comparison tables of a finished sweep (see report.h). */
#include "app/report.h"

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "app/curves.h"
#include "app/index.h"
#include "app/stats.h"
#include "sim/output.h"

#define PATH_TEXT 2048

/* The figures of one run, averaged over a group's runs. */
enum measure {
    M_FINAL = 0, /* final test accuracy */
    M_BEST,      /* best test accuracy */
    M_TP,        /* mean throughput, samples/s */
    M_BYTES,     /* bytes sent per sample */
    M_WAIT,      /* share of the workers' time waiting */
    M_COMM,      /* share of the workers' time communicating */
    M_COMM_ALL,  /* the same with the communication that overlapped computation */
    NMEASURES
};

typedef struct run {
    double ttt;        /* time to target, NaN if not reached (or no target) */
    double observed_s; /* the last evaluation's time */
    double m[NMEASURES];
} run;

/* The runs of one value of KEY and one value of PATH (--best-over). */
typedef struct cell {
    size_t group;      /* index of its KEY value */
    const char *value; /* its PATH value, or NULL; borrowed from the index */
    size_t *rows;      /* (n) index rows; owned */
    size_t n;
    /* The summary: */
    size_t reached;
    double ttt_mean, ttt_half, censored_s;
    double mean[NMEASURES], half[NMEASURES];
} cell;

typedef struct report {
    const app_report_options *o;
    app_index ix;
    int kcol, bcol;      /* KEY's and PATH's columns (bcol -1 without --best-over) */
    double target;       /* NaN: no time to target */
    bool overlap;        /* some run's workers.csv has comm_overlap_s */
    run *runs;           /* (ix.csv.nrows) */
    const char **groups; /* (ngroups) KEY values; borrowed from the index */
    size_t ngroups;
    cell *cells; /* (ncells) */
    size_t ncells;
    size_t *best; /* (ngroups) each group's chosen cell */
} report;

static int oom(sim_err *err)
{
    return sim_err_set(err, SIM_ENOMEM, NULL, "out of memory");
}

/* ---- Reading ----------------------------------------------------------------------------- */

/* The run's bytes per sample and shares of time from its workers.csv (app_workers_read). */
static int read_workers(const char *dir, run *r, bool *overlap, sim_err *err)
{
    app_workers w;
    int rc = app_workers_read(dir, &w, err);
    if (rc != SIM_OK)
        return rc;
    double busy = w.compute_s + w.comm_s + w.wait_s;
    r->m[M_BYTES] = w.samples > 0 ? w.bytes_sent / w.samples : (double)NAN;
    r->m[M_WAIT] = busy > 0 ? w.wait_s / busy : (double)NAN;
    r->m[M_COMM] = busy > 0 ? w.comm_s / busy : (double)NAN;
    r->m[M_COMM_ALL] = busy > 0 ? (w.comm_s + w.overlap_s) / busy : (double)NAN;
    *overlap = *overlap || w.has_overlap;
    return SIM_OK;
}

/* The target: --target, else the runs' common stop target (NaN when none has one). */
static int find_target(report *rp, sim_err *err)
{
    rp->target = rp->o->target;
    if (!isnan(rp->target))
        return SIM_OK;
    return app_index_stop_target(&rp->ix, rp->o->sweep_dir, &rp->target, err);
}

static int read_run(report *rp, size_t r, sim_err *err)
{
    static const char *const cols[] = {
        [M_FINAL] = "final_accuracy", [M_BEST] = "best_accuracy", [M_TP] = "mean_throughput_sps"
    };
    run *x = &rp->runs[r];
    char dir[PATH_TEXT];
    snprintf(dir, sizeof(dir), "%s/%s", rp->o->sweep_dir, app_index_cell(&rp->ix, r, 1));
    for (size_t m = 0; m <= M_TP; m++) {
        int c = app_index_column(&rp->ix, cols[m]);
        x->m[m] = c >= 0 ? sim_csv_number(&rp->ix.csv, r, (size_t)c) : (double)NAN;
    }
    x->ttt = x->observed_s = NAN;
    if (!isnan(rp->target)) {
        app_curve c;
        int rc = app_curve_read(dir, &c, err);
        if (rc != SIM_OK)
            return rc;
        x->ttt = app_curve_time_to(&c, rp->target);
        x->observed_s = app_curve_last_time(&c);
        app_curve_fini(&c);
    }
    return read_workers(dir, x, &rp->overlap, err);
}

/* ---- Grouping ---------------------------------------------------------------------------- */

static size_t find_group(report *rp, const char *value)
{
    for (size_t g = 0; g < rp->ngroups; g++)
        if (strcmp(rp->groups[g], value) == 0)
            return g;
    rp->groups[rp->ngroups] = value;
    return rp->ngroups++;
}

static int add_to_cell(report *rp, size_t g, const char *value, size_t r, sim_err *err)
{
    cell *c = NULL;
    for (size_t i = 0; i < rp->ncells && c == NULL; i++)
        if (rp->cells[i].group == g && (value == NULL || strcmp(rp->cells[i].value, value) == 0))
            c = &rp->cells[i];
    if (c == NULL) {
        c = &rp->cells[rp->ncells++];
        c->group = g;
        c->value = value;
    }
    size_t *rows = realloc(c->rows, (c->n + 1) * sizeof(*rows));
    if (rows == NULL)
        return oom(err);
    c->rows = rows;
    rows[c->n++] = r;
    return SIM_OK;
}

static int summarize(report *rp, cell *c, sim_err *err)
{
    double *x = calloc(c->n + 1, sizeof(*x));
    if (x == NULL)
        return oom(err);
    c->censored_s = NAN;
    for (size_t i = 0; i < c->n; i++) {
        const run *r = &rp->runs[c->rows[i]];
        x[i] = r->ttt;
        if (isnan(r->ttt) && !isnan(rp->target))
            c->censored_s =
                isnan(c->censored_s) ? r->observed_s : fmin(c->censored_s, r->observed_s);
    }
    c->reached = app_stats_mean_ci(x, c->n, &c->ttt_mean, &c->ttt_half);
    for (size_t m = 0; m < NMEASURES; m++) {
        for (size_t i = 0; i < c->n; i++)
            x[i] = rp->runs[c->rows[i]].m[m];
        app_stats_mean_ci(x, c->n, &c->mean[m], &c->half[m]);
    }
    free(x);
    return SIM_OK;
}

/* True if cell a is a better setting than cell b: a larger share of runs reaching the
 * target, then a shorter mean time to target, then a better mean final accuracy. */
static bool better(const cell *a, const cell *b)
{
    double sa = (double)a->reached / (double)a->n, sb = (double)b->reached / (double)b->n;
    if (sa != sb)
        return sa > sb;
    if (a->reached > 0 && b->reached > 0 && a->ttt_mean != b->ttt_mean)
        return a->ttt_mean < b->ttt_mean;
    return a->mean[M_FINAL] > b->mean[M_FINAL] ||
           (isnan(b->mean[M_FINAL]) && !isnan(a->mean[M_FINAL]));
}

static int build(report *rp, size_t *left_out, sim_err *err)
{
    size_t n = rp->ix.csv.nrows;
    rp->runs = calloc(n + 1, sizeof(*rp->runs));
    rp->groups = calloc(n + 1, sizeof(*rp->groups));
    rp->cells = calloc(n + 1, sizeof(*rp->cells));
    rp->best = calloc(n + 1, sizeof(*rp->best));
    if (rp->runs == NULL || rp->groups == NULL || rp->cells == NULL || rp->best == NULL)
        return oom(err);
    int rc = find_target(rp, err);
    for (size_t r = 0; r < n && rc == SIM_OK; r++) {
        if (!app_index_has_results(&rp->ix, r)) {
            (*left_out)++;
            continue;
        }
        size_t g = find_group(rp, app_index_cell(&rp->ix, r, (size_t)rp->kcol));
        const char *v = rp->bcol >= 0 ? app_index_cell(&rp->ix, r, (size_t)rp->bcol) : NULL;
        if ((rc = read_run(rp, r, err)) == SIM_OK)
            rc = add_to_cell(rp, g, v, r, err);
    }
    if (rc == SIM_OK && rp->ngroups == 0)
        rc = sim_err_set(err, SIM_EINVAL, NULL, "%s: no runs with results (%zu left out)",
                         rp->ix.csv.path, *left_out);
    for (size_t i = 0; i < rp->ncells && rc == SIM_OK; i++)
        rc = summarize(rp, &rp->cells[i], err);
    for (size_t g = 0; g < rp->ngroups; g++)
        rp->best[g] = SIZE_MAX;
    for (size_t i = 0; i < rp->ncells && rc == SIM_OK; i++) {
        size_t *b = &rp->best[rp->cells[i].group];
        if (*b == SIZE_MAX || better(&rp->cells[i], &rp->cells[*b]))
            *b = i;
    }
    return rc;
}

/* ---- Printing ---------------------------------------------------------------------------- */

/* Decimals that show `half` to two significant digits, or `mean` to four when the half-width
 * is none, zero or rounding noise (below 1e-9 of the mean). */
static int decimals(double mean, double half)
{
    bool spread = isfinite(half) && half > 1e-9 * fabs(mean);
    double ref = spread ? half : fabs(mean);
    if (!isfinite(ref) || ref == 0)
        return 0;
    int d = (spread ? 1 : 3) - (int)floor(log10(ref));
    return d < 0 ? 0 : d > 9 ? 9 : d;
}

/* "mean ± half" (times `scale`), "mean" without an interval, "-" without a mean. */
static void pm(FILE *f, double mean, double half, double scale)
{
    if (isnan(mean)) {
        fputs(" - |", f);
        return;
    }
    int d = decimals(mean * scale, half * scale);
    if (isnan(half))
        fprintf(f, " %.*f |", d, mean * scale);
    else if (!(half > 1e-9 * fabs(mean)))
        fprintf(f, " %.*f ± 0 |", d, mean * scale);
    else
        fprintf(f, " %.*f ± %.*f |", d, mean * scale, d, half * scale);
}

static void md_escape(FILE *f, const char *s)
{
    for (; *s != '\0'; s++) {
        if (*s == '|')
            fputc('\\', f);
        fputc(*s, f);
    }
}

static void print_md(const report *rp, FILE *f)
{
    const app_report_options *o = rp->o;
    bool ttt = !isnan(rp->target);
    fputs("| ", f);
    md_escape(f, o->key);
    if (o->best_over != NULL) {
        fputs(" | best ", f);
        md_escape(f, o->best_over);
    }
    fputs(" | runs |", f);
    if (ttt)
        fprintf(f, " time to %g (s) | reached |", rp->target);
    fputs(" final accuracy | best accuracy | samples/s | bytes sent/sample | waiting (%) |"
          " communicating (%) |",
          f);
    if (rp->overlap)
        fputs(" comm. incl. overlap (%) |", f);
    fputs("\n|---|", f);
    if (o->best_over != NULL)
        fputs("---|", f);
    fputs("---:|", f);
    if (ttt)
        fputs("---:|---:|", f);
    fputs(rp->overlap ? "---:|---:|---:|---:|---:|---:|---:|\n"
                      : "---:|---:|---:|---:|---:|---:|\n",
          f);
    for (size_t g = 0; g < rp->ngroups; g++) {
        const cell *c = &rp->cells[rp->best[g]];
        fputs("| ", f);
        md_escape(f, rp->groups[g]);
        if (o->best_over != NULL) {
            fputs(" | ", f);
            md_escape(f, c->value);
        }
        fprintf(f, " | %zu |", c->n);
        if (ttt && c->reached == 0)
            fprintf(f, " > %g | 0/%zu |", c->censored_s, c->n);
        else if (ttt)
            pm(f, c->ttt_mean, c->ttt_half, 1.0);
        if (ttt && c->reached > 0 && c->reached == c->n)
            fprintf(f, " %zu/%zu |", c->reached, c->n);
        else if (ttt && c->reached > 0)
            fprintf(f, " %zu/%zu (others > %g) |", c->reached, c->n, c->censored_s);
        pm(f, c->mean[M_FINAL], c->half[M_FINAL], 1.0);
        pm(f, c->mean[M_BEST], c->half[M_BEST], 1.0);
        pm(f, c->mean[M_TP], c->half[M_TP], 1.0);
        pm(f, c->mean[M_BYTES], c->half[M_BYTES], 1.0);
        pm(f, c->mean[M_WAIT], c->half[M_WAIT], 100.0);
        pm(f, c->mean[M_COMM], c->half[M_COMM], 100.0);
        if (rp->overlap)
            pm(f, c->mean[M_COMM_ALL], c->half[M_COMM_ALL], 100.0);
        fputc('\n', f);
    }
    fputs("\nMean ± 95% Student-t interval over the runs of each row", f);
    if (ttt)
        fprintf(f,
                "; time to %g: the first evaluation at that test accuracy, over the runs "
                "that reached it (\"> T\": not reached within T simulated seconds)",
                rp->target);
    if (o->best_over != NULL)
        fprintf(f,
                "; best %s: the value with the most runs reaching the target, then the "
                "shortest time, then the best final accuracy",
                o->best_over);
    if (rp->overlap)
        fputs("; comm. incl. overlap: communicating, counting also the communication that "
              "overlapped the worker's own computation (workers.csv's comm_overlap_s)",
              f);
    fputs(".\n", f);
}

static void csv_num(FILE *f, double v)
{
    fputc(',', f);
    if (!isnan(v))
        fprintf(f, "%.9g", v);
}

static void print_csv(const report *rp, FILE *f)
{
    static const char *const names[NMEASURES] = {
        "final_accuracy", "best_accuracy", "throughput_sps",          "bytes_per_sample",
        "wait_share",     "comm_share",    "comm_incl_overlap_share",
    };
    size_t nm = rp->overlap ? NMEASURES : M_COMM_ALL;
    const app_report_options *o = rp->o;
    sim_output_csv_field(f, o->key);
    if (o->best_over != NULL) {
        fputc(',', f);
        sim_output_csv_field(f, o->best_over);
    }
    fputs(",runs,target,reached,ttt_mean_s,ttt_ci95_s,censored_after_s", f);
    for (size_t m = 0; m < nm; m++)
        fprintf(f, ",%s_mean,%s_ci95", names[m], names[m]);
    fputc('\n', f);
    for (size_t g = 0; g < rp->ngroups; g++) {
        const cell *c = &rp->cells[rp->best[g]];
        sim_output_csv_field(f, rp->groups[g]);
        if (o->best_over != NULL) {
            fputc(',', f);
            sim_output_csv_field(f, c->value);
        }
        fprintf(f, ",%zu", c->n);
        csv_num(f, rp->target);
        if (isnan(rp->target))
            fputs(",", f);
        else
            fprintf(f, ",%zu", c->reached);
        csv_num(f, c->ttt_mean);
        csv_num(f, c->ttt_half);
        csv_num(f, c->censored_s);
        for (size_t m = 0; m < nm; m++) {
            csv_num(f, c->mean[m]);
            csv_num(f, c->half[m]);
        }
        fputc('\n', f);
    }
}

int app_report_print(const app_report_options *o, FILE *out, FILE *log, sim_err *err)
{
    sim_err_clear(err);
    report rp = { .o = o, .bcol = -1 };
    size_t left_out = 0;
    int rc = app_index_read(o->sweep_dir, &rp.ix, err);
    if (rc == SIM_OK)
        rc = app_index_key_column(&rp.ix, o->key, &rp.kcol, err);
    if (rc == SIM_OK && o->best_over != NULL) {
        rc = app_index_key_column(&rp.ix, o->best_over, &rp.bcol, err);
        if (rc == SIM_OK && rp.bcol == rp.kcol)
            rc = sim_err_set(err, SIM_EINVAL, NULL, "--best-over %s is the column grouped by",
                             o->best_over);
    }
    if (rc == SIM_OK)
        rc = build(&rp, &left_out, err);
    char *text = NULL;
    size_t len = 0;
    FILE *mem = rc == SIM_OK ? open_memstream(&text, &len) : NULL;
    if (rc == SIM_OK && mem == NULL)
        rc = oom(err);
    if (mem != NULL) {
        if (o->format == APP_REPORT_CSV)
            print_csv(&rp, mem);
        else
            print_md(&rp, mem);
        if (fclose(mem) != 0 || text == NULL)
            rc = oom(err);
    }
    if (rc == SIM_OK) {
        if (log != NULL && left_out > 0)
            fprintf(log, "hetsim: %s: left out %zu points without results\n", rp.ix.csv.path,
                    left_out);
        fwrite(text, 1, len, out);
    }
    free(text);
    for (size_t i = 0; i < rp.ncells; i++)
        free(rp.cells[i].rows);
    free(rp.cells);
    free(rp.runs);
    free(rp.groups);
    free(rp.best);
    app_index_fini(&rp.ix);
    return rc;
}
