/* `hetsim report`'s printers (see report_state.h): Markdown, CSV, LaTeX, the tuning grid, and
 * the caption that says what the numbers are. */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app/names.h"
#include "app/report_state.h"
#include "app/stats.h"
#include "outputs/output.h"

#define TEXT 1024

static const char *const csv_names[NMEASURES] = {
    "final_accuracy", "best_accuracy", "throughput_sps",          "bytes_per_sample",
    "wait_share",     "comm_share",    "comm_incl_overlap_share",
};

/* ---- Numbers ----------------------------------------------------------------------------- */

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

void rp_number(char *buf, size_t size, int d, double v)
{
    if (fabs(v) < 1e15)
        snprintf(buf, size, "%.*f", d, v);
    else
        snprintf(buf, size, "%.3e", v);
}

/* A cell "mean ± half" (times `scale`), "mean" without an interval, "-" without a mean; then
 * `note` (a cell's "(2 of 3 runs)", or ""). */
static void pm_note(FILE *f, double mean, double half, double scale, const char *note)
{
    const char *sp = note[0] != '\0' ? " " : "";
    if (isnan(mean)) {
        fprintf(f, " -%s%s |", sp, note);
        return;
    }
    int d = decimals(mean * scale, half * scale);
    char m[64], h[64];
    rp_number(m, sizeof(m), d, mean * scale);
    rp_number(h, sizeof(h), d, half * scale);
    if (isnan(half))
        fprintf(f, " %s%s%s |", m, sp, note);
    else if (!(half > 1e-9 * fabs(mean)))
        fprintf(f, " %s ± 0%s%s |", m, sp, note);
    else
        fprintf(f, " %s ± %s%s%s |", m, h, sp, note);
}

static void pm(FILE *f, double mean, double half, double scale)
{
    pm_note(f, mean, half, scale, "");
}

static void md_escape(FILE *f, const char *s)
{
    for (; *s != '\0'; s++) {
        if (*s == '|')
            fputc('\\', f);
        fputc(*s, f);
    }
}

/* A speed-up "1.42 [1.21, 1.70]" with two decimals (three below 0.1). */
void rp_ratio_text(char *buf, size_t size, const rp_row *r)
{
    if (r->baseline) {
        snprintf(buf, size, "1 (baseline)");
        return;
    }
    if (isnan(r->speedup)) {
        snprintf(buf, size, "-");
        return;
    }
    int d = fabs(r->speedup) < 0.1 ? 3 : 2;
    char v[64], lo[64], hi[64];
    rp_number(v, sizeof(v), d, r->speedup);
    rp_number(lo, sizeof(lo), d, r->speedup_lo);
    rp_number(hi, sizeof(hi), d, r->speedup_hi);
    if (isinf(r->speedup_lo))
        snprintf(buf, size, "%s [unbounded]", v);
    else if (!isnan(r->speedup_lo))
        snprintf(buf, size, "%s [%s, %s]", v, lo, hi);
    else
        snprintf(buf, size, "%s", v);
}

/* ---- Caption ----------------------------------------------------------------------------- */

/* The caption's tuning: over which keys, on which seeds, and the choices at the grid's edge
 * or within the intervals of other settings. */
static void caption_tuning(const app_select *s, FILE *f)
{
    fputs("; each row at its best ", f);
    for (size_t k = 0; k < s->nbest; k++)
        fprintf(f, "%s%s", k > 0 ? " and " : "", s->best_key[k]);
    if (s->tuned_apart)
        fprintf(f, ", chosen on seeds %s and reported on the others", s->tune_text);
    else
        fputs(", chosen and reported on the same seeds (optimistic: --tune-seeds chooses on "
              "other seeds)",
              f);
    fputs(" (the most runs reaching the target, then the shortest time, then the best "
          "final accuracy)",
          f);
    for (size_t g = 0; g < s->ngroups; g++) {
        const app_select_group *x = &s->groups[g];
        if (!x->edge && x->close == NULL)
            continue;
        fputs("; ", f);
        for (size_t k = 0; k < s->nby; k++)
            fprintf(f, "%s%s", k > 0 ? "," : "", x->value[k]);
        if (x->edge)
            fputs(": at the edge of the values swept", f);
        if (x->close != NULL)
            fprintf(f, "%s within the 95%% intervals of %s", x->edge ? ", and" : ":", x->close);
    }
}

void rp_caption(const rp_report *rp, FILE *f)
{
    const app_select *s = &rp->sel;
    char seeds[TEXT], what[TEXT];
    bool same = true;
    size_t nseeds = app_select_seeds(s, seeds, sizeof(seeds), &same);
    fprintf(f, "Mean ± 95%% Student-t interval over the runs of each row (%zu seed%s: %s%s)",
            nseeds, nseeds == 1 ? "" : "s", seeds,
            same ? ", every row" : "; rows differ, see runs");
    if (s->nbest > 0)
        caption_tuning(s, f);
    if (!isnan(s->target)) {
        app_ttt_describe(&s->rule, s->target, what, sizeof(what));
        fprintf(f,
                "; time to %g: %s, over the runs that reached it (censored: a run that did not "
                "counts as \"> T\", T its last evaluation, never averaged in; k/n: the runs "
                "that reached it)",
                s->target, what);
        size_t below = 0, reached = 0;
        for (size_t g = 0; g < s->ngroups; g++) {
            below += rp->rows[g].ended_below;
            reached += rp->rows[g].reached;
        }
        if (below > 0)
            fprintf(f,
                    "; %zu of the %zu runs that reached it ended below it (--ttt sustained "
                    "counts a run from when it stays above)",
                    below, reached);
    }
    if (!isnan(rp->every_lo))
        fprintf(f, "; evaluations every %g s%s", rp->every_lo,
                rp->every_hi > rp->every_lo ? " or more" : "");
    if (!isnan(s->target) && !isnan(rp->every_lo))
        fputs(" (the resolution of the times to target)", f);
    if (rp->base_key >= 0)
        fprintf(f,
                "; speed-up: %s%s%s's %s over the row's, Fieller's 95%% interval for a ratio of "
                "two independent means%s",
                s->by_key[rp->base_key], "=", rp->base_value,
                isnan(s->target) ? "throughput (the row's over the baseline's)"
                                 : "mean time to target",
                isnan(s->target) ? "" : " (over the runs that reached it; * when some did not)");
    if (rp->zero_den)
        fprintf(f, " (none, \"-\", where %s is 0)",
                isnan(s->target) ? "the baseline's throughput" : "the row's mean time to target");
    if (rp->past_double)
        fputs(" (none, \"-\", where the ratio is past a double: too small a denominator)", f);
    if (rp->bytes_left > 0)
        fprintf(f,
                "; bytes sent/sample leaves out %zu run%s whose workers counted no samples (k "
                "of n runs: those it covers)",
                rp->bytes_left, rp->bytes_left == 1 ? "" : "s");
    if (rp->overlap)
        fputs("; comm. incl. overlap: communicating, counting also the communication that "
              "overlapped the worker's own computation (workers.csv's comm_overlap_s)",
              f);
    fputs(".\n", f);
}

/* ---- Markdown ---------------------------------------------------------------------------- */

static void md_head(const rp_report *rp, FILE *f)
{
    const app_select *s = &rp->sel;
    bool ttt = !isnan(s->target);
    for (size_t k = 0; k < s->nby; k++) {
        fputs(k == 0 ? "| " : " | ", f);
        md_escape(f, s->by_key[k]);
    }
    for (size_t k = 0; k < s->nbest; k++) {
        fputs(" | best ", f);
        md_escape(f, s->best_key[k]);
    }
    fputs(" | runs |", f);
    if (ttt)
        fprintf(f, " time to %g (s) | reached |", s->target);
    if (rp->base_key >= 0)
        fputs(" speed-up |", f);
    fputs(" final accuracy | best accuracy | samples/s | bytes sent/sample | waiting (%) |"
          " communicating (%) |",
          f);
    if (rp->overlap)
        fputs(" comm. incl. overlap (%) |", f);
    fputc('\n', f);
    for (size_t k = 0; k < s->nby + s->nbest; k++)
        fputs(k == 0 ? "|---|" : "---|", f);
    fputs("---:|", f);
    size_t cols = 6 + (ttt ? 2 : 0) + (rp->base_key >= 0) + rp->overlap;
    for (size_t k = 0; k < cols; k++)
        fputs("---:|", f);
    fputc('\n', f);
}

void rp_print_md(const rp_report *rp, FILE *f)
{
    const app_select *s = &rp->sel;
    bool ttt = !isnan(s->target);
    char buf[TEXT];
    md_head(rp, f);
    for (size_t g = 0; g < s->ngroups; g++) {
        const rp_row *c = &rp->rows[g];
        const app_select_group *x = &s->groups[g];
        for (size_t k = 0; k < s->nby; k++) {
            fputs(k == 0 ? "| " : " | ", f);
            md_escape(f, x->value[k]);
        }
        for (size_t k = 0; k < s->nbest; k++) {
            fputs(" | ", f);
            md_escape(f, s->cells[x->best].value[k]);
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
        if (rp->base_key >= 0) {
            rp_ratio_text(buf, sizeof(buf), c);
            fprintf(f, " %s%s |", buf, c->speedup_censored && !isnan(c->speedup) ? " *" : "");
        }
        pm(f, c->mean[M_FINAL], c->half[M_FINAL], 1.0);
        pm(f, c->mean[M_BEST], c->half[M_BEST], 1.0);
        pm(f, c->mean[M_TP], c->half[M_TP], 1.0);
        buf[0] = '\0'; /* a run that counted no samples is left out: said */
        if (c->bytes_runs < c->n)
            snprintf(buf, sizeof(buf), "(%zu of %zu runs)", c->bytes_runs, c->n);
        pm_note(f, c->mean[M_BYTES], c->half[M_BYTES], 1.0, buf);
        pm(f, c->mean[M_WAIT], c->half[M_WAIT], 100.0);
        pm(f, c->mean[M_COMM], c->half[M_COMM], 100.0);
        if (rp->overlap)
            pm(f, c->mean[M_COMM_ALL], c->half[M_COMM_ALL], 100.0);
        fputc('\n', f);
    }
    fputc('\n', f);
    rp_caption(rp, f);
}

/* ---- CSV --------------------------------------------------------------------------------- */

static void csv_num(FILE *f, double v)
{
    fputc(',', f);
    if (!isnan(v))
        fprintf(f, "%.9g", v);
}

void rp_print_csv(const rp_report *rp, FILE *f)
{
    const app_select *s = &rp->sel;
    size_t nm = rp->overlap ? NMEASURES : M_COMM_ALL;
    for (size_t k = 0; k < s->nby; k++) {
        if (k > 0)
            fputc(',', f);
        sim_output_csv_field(f, s->by_key[k]);
    }
    for (size_t k = 0; k < s->nbest; k++) {
        fputc(',', f);
        sim_output_csv_field(f, s->best_key[k]);
    }
    fputs(",runs,target,reached,ttt_mean_s,ttt_ci95_s,censored_after_s", f);
    for (size_t m = 0; m < nm; m++)
        fprintf(f, ",%s_mean,%s_ci95", csv_names[m], csv_names[m]);
    fputs(",ended_below,speedup,speedup_lo,speedup_hi", f);
    fputs(rp->bytes_left > 0 ? ",bytes_per_sample_runs\n" : "\n", f);
    for (size_t g = 0; g < s->ngroups; g++) {
        const rp_row *c = &rp->rows[g];
        const app_select_group *x = &s->groups[g];
        for (size_t k = 0; k < s->nby; k++) {
            if (k > 0)
                fputc(',', f);
            sim_output_csv_field(f, x->value[k]);
        }
        for (size_t k = 0; k < s->nbest; k++) {
            fputc(',', f);
            sim_output_csv_field(f, s->cells[x->best].value[k]);
        }
        fprintf(f, ",%zu", c->n);
        csv_num(f, s->target);
        if (isnan(s->target))
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
        fprintf(f, ",%zu", c->ended_below);
        csv_num(f, c->speedup);
        csv_num(f, c->speedup_lo);
        csv_num(f, c->speedup_hi);
        if (rp->bytes_left > 0)
            fprintf(f, ",%zu", c->bytes_runs);
        fputc('\n', f);
    }
}

/* ---- The tuning grid --------------------------------------------------------------------- */

void rp_print_grid(const rp_report *rp, FILE *f)
{
    const app_select *s = &rp->sel;
    bool csv = rp->o->format == APP_REPORT_CSV, ttt = !isnan(s->target);
    for (size_t k = 0; k < s->nby + s->nbest; k++) {
        const char *key = k < s->nby ? s->by_key[k] : s->best_key[k - s->nby];
        fputs(k == 0 ? (csv ? "" : "| ") : (csv ? "," : " | "), f);
        if (csv)
            sim_output_csv_field(f, key);
        else
            md_escape(f, key);
    }
    if (csv) {
        fputs(",tuning_runs,reached,ttt_mean_s,ttt_ci95_s,final_accuracy_mean,"
              "final_accuracy_ci95,chosen\n",
              f);
    } else {
        fputs(" | tuning runs |", f);
        if (ttt)
            fprintf(f, " time to %g (s) | reached |", s->target);
        fputs(" final accuracy | chosen |\n", f);
        for (size_t k = 0; k < s->nby + s->nbest; k++)
            fputs(k == 0 ? "|---|" : "---|", f);
        fputs(ttt ? "---:|---:|---:|---:|:-:|\n" : "---:|---:|:-:|\n", f);
    }
    for (size_t g = 0; g < s->ngroups; g++)
        for (size_t c = 0; c < s->ncells; c++) {
            const app_select_cell *x = &s->cells[c];
            if (x->group != g)
                continue;
            for (size_t k = 0; k < s->nby + s->nbest; k++) {
                const char *v = k < s->nby ? s->groups[g].value[k] : x->value[k - s->nby];
                fputs(k == 0 ? (csv ? "" : "| ") : (csv ? "," : " | "), f);
                if (csv)
                    sim_output_csv_field(f, v);
                else
                    md_escape(f, v);
            }
            bool chosen = s->groups[g].best == c;
            if (csv) {
                fprintf(f, ",%zu,%zu", x->ntune, x->reached);
                csv_num(f, x->ttt_mean);
                csv_num(f, x->ttt_half);
                csv_num(f, x->final_mean);
                csv_num(f, x->final_half);
                fprintf(f, ",%d\n", chosen);
                continue;
            }
            fprintf(f, " | %zu |", x->ntune);
            if (ttt && x->reached == 0)
                fprintf(f, " - | 0/%zu |", x->ntune);
            else if (ttt) {
                pm(f, x->ttt_mean, x->ttt_half, 1.0);
                fprintf(f, " %zu/%zu |", x->reached, x->ntune);
            }
            pm(f, x->final_mean, x->final_half, 1.0);
            fputs(chosen ? " * |\n" : " |\n", f);
        }
    if (!csv)
        fprintf(f, "\nThe figures the choice compares, over the %s; * the chosen setting.\n",
                s->tuned_apart ? "runs of the seeds tuned on" : "runs of each setting");
}
