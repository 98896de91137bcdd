/* `hetsim report --format tex`: a LaTeX table for a paper (booktabs' \toprule, \midrule,
 * \bottomrule), with display names (app/names.h), human units (%, s, k samples/s, kB or MB a
 * sample), one precision per column and the caption that says what the numbers are (see
 * report_state.h). */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app/names.h"
#include "app/report_state.h"

#define TEXT 1024

/* A column of figures: a measure of the rows, in its unit. */
typedef struct column {
    const char *head; /* its header, LaTeX */
    int m;            /* the measure, or -1 for the time to target */
    double scale;     /* into the unit of the header */
    int decimals;     /* the same for every row */
} column;

/* Writes `s` escaped for LaTeX text: its special characters as commands, "±" as $\pm$,
 * straight double quotes as `` and ''. */
static void tex_escape(FILE *f, const char *s)
{
    bool open = true;
    for (; *s != '\0'; s++) {
        if (strncmp(s, "±", strlen("±")) == 0) {
            fputs("$\\pm$", f);
            s += strlen("±") - 1;
        } else if (*s == '"') {
            fputs(open ? "``" : "''", f);
            open = !open;
        } else if (strchr("&%$#_{}", *s) != NULL) {
            fprintf(f, "\\%c", *s);
        } else if (*s == '\\') {
            fputs("\\textbackslash{}", f);
        } else if (*s == '~') {
            fputs("\\textasciitilde{}", f);
        } else if (*s == '^') {
            fputs("\\textasciicircum{}", f);
        } else if (*s == '<' || *s == '>') {
            fprintf(f, "$%c$", *s);
        } else {
            fputc(*s, f);
        }
    }
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* The median of the positive finite values of v[0..n) (reordered), or NaN. */
static double median(double *v, size_t n)
{
    size_t m = 0;
    for (size_t i = 0; i < n; i++)
        if (isfinite(v[i]) && v[i] > 0)
            v[m++] = v[i];
    if (m == 0)
        return NAN;
    qsort(v, m, sizeof(*v), cmp_double);
    return m % 2 == 1 ? v[m / 2] : (v[m / 2 - 1] + v[m / 2]) / 2.0;
}

/* One precision for the column: the median half-width to two significant digits, or without
 * intervals the median mean to three. */
static int column_decimals(const rp_report *rp, const column *c)
{
    size_t n = rp->sel.ngroups;
    double *v = calloc(n + 1, sizeof(*v));
    if (v == NULL)
        return 2;
    for (size_t g = 0; g < n; g++)
        v[g] = c->scale * (c->m < 0 ? rp->rows[g].ttt_half : rp->rows[g].half[c->m]);
    double ref = median(v, n);
    int lead = 1;
    if (isnan(ref)) {
        for (size_t g = 0; g < n; g++)
            v[g] = fabs(c->scale * (c->m < 0 ? rp->rows[g].ttt_mean : rp->rows[g].mean[c->m]));
        ref = median(v, n);
        lead = 2;
    }
    free(v);
    if (isnan(ref))
        return 0;
    int d = lead - (int)floor(log10(ref));
    return d < 0 ? 0 : d > 6 ? 6 : d;
}

static void tex_pm(FILE *f, double mean, double half, const column *c)
{
    char m[64], h[64];
    rp_number(m, sizeof(m), c->decimals, mean * c->scale);
    rp_number(h, sizeof(h), c->decimals, half * c->scale);
    if (isnan(mean))
        fputs(" & --", f);
    else if (isnan(half))
        fprintf(f, " & $%s$", m);
    else
        fprintf(f, " & $%s \\pm %s$", m, h);
}

/* The unit of a column of magnitudes up to `most`: ("k samples/s", 1e-3) for 1,234. */
static double unit_of(double most, const char *const *names, const char **name)
{
    static const double scales[] = { 1.0, 1e-3, 1e-6 };
    size_t u = most >= 1e6 ? 2 : most >= 1e3 ? 1 : 0;
    *name = names[u];
    return scales[u];
}

/* The columns after runs, time to target, reached and speed-up, into cols; returns how many. */
static size_t measure_columns(const rp_report *rp, column *cols, char heads[][64])
{
    static const char *const tp_units[] = { "samples/s", "k samples/s", "M samples/s" };
    static const char *const byte_units[] = { "B/sample", "kB/sample", "MB/sample" };
    double most_tp = 0, most_bytes = 0;
    for (size_t g = 0; g < rp->sel.ngroups; g++) {
        most_tp = fmax(most_tp, rp->rows[g].mean[M_TP]);
        most_bytes = fmax(most_bytes, rp->rows[g].mean[M_BYTES]);
    }
    const char *u = NULL;
    size_t n = 0;
    cols[n++] = (column){ "Final acc.\\ (\\%)", M_FINAL, 100.0, 0 };
    cols[n++] = (column){ "Best acc.\\ (\\%)", M_BEST, 100.0, 0 };
    double s = unit_of(most_tp, tp_units, &u);
    snprintf(heads[0], 64, "Throughput (%s)", u);
    cols[n++] = (column){ heads[0], M_TP, s, 0 };
    s = unit_of(most_bytes, byte_units, &u);
    snprintf(heads[1], 64, "Sent (%s)", u);
    cols[n++] = (column){ heads[1], M_BYTES, s, 0 };
    cols[n++] = (column){ "Waiting (\\%)", M_WAIT, 100.0, 0 };
    cols[n++] = (column){ "Comm.\\ (\\%)", M_COMM, 100.0, 0 };
    if (rp->overlap)
        cols[n++] = (column){ "Comm.\\ incl.\\ overlap (\\%)", M_COMM_ALL, 100.0, 0 };
    for (size_t i = 0; i < n; i++)
        cols[i].decimals = column_decimals(rp, &cols[i]);
    return n;
}

static void tex_head(const rp_report *rp, FILE *f, const column *cols, size_t ncols,
                     const app_names *names)
{
    const app_select *s = &rp->sel;
    bool ttt = !isnan(s->target);
    size_t keys = s->nby + s->nbest;
    fputs("\\begin{table}[t]\n\\centering\n\\small\n\\begin{tabular}{", f);
    for (size_t k = 0; k < keys; k++)
        fputc('l', f);
    for (size_t k = 0; k < 1 + (ttt ? 2 : 0) + (rp->base_key >= 0) + ncols; k++)
        fputc('r', f);
    fputs("}\n\\toprule\n", f);
    for (size_t k = 0; k < keys; k++) {
        if (k > 0)
            fputs(" & ", f);
        const char *name =
            app_names_key(names, k < s->nby ? s->by_key[k] : s->best_key[k - s->nby]);
        if (k >= s->nby) {
            fputs("Best ", f);
        } else if (*name >= 'a' && *name <= 'z') { /* a header starts with a capital */
            fputc(*name - 'a' + 'A', f);
            name++;
        }
        tex_escape(f, name);
    }
    fputs(" & Runs", f);
    if (ttt)
        fprintf(f, " & Time to %g (s) & Reached", s->target);
    if (rp->base_key >= 0)
        fputs(" & Speed-up", f);
    for (size_t i = 0; i < ncols; i++)
        fprintf(f, " & %s", cols[i].head);
    fputs(" \\\\\n\\midrule\n", f);
}

static void tex_row(const rp_report *rp, FILE *f, size_t g, const column *ttt_col,
                    const column *cols, size_t ncols, const app_names *names)
{
    const app_select *s = &rp->sel;
    const rp_row *c = &rp->rows[g];
    const app_select_group *x = &s->groups[g];
    char buf[TEXT];
    for (size_t k = 0; k < s->nby + s->nbest; k++) {
        if (k > 0)
            fputs(" & ", f);
        const char *key = k < s->nby ? s->by_key[k] : s->best_key[k - s->nby];
        const char *v = k < s->nby ? x->value[k] : s->cells[x->best].value[k - s->nby];
        tex_escape(f, app_names_value(names, key, v));
    }
    fprintf(f, " & %zu", c->n);
    if (!isnan(s->target)) {
        if (c->reached == 0)
            fprintf(f, " & $>%g$", c->censored_s);
        else
            tex_pm(f, c->ttt_mean, c->ttt_half, ttt_col);
        fprintf(f, " & %zu/%zu", c->reached, c->n);
    }
    if (rp->base_key >= 0) {
        rp_ratio_text(buf, sizeof(buf), c);
        fputs(" & ", f);
        tex_escape(f, buf);
        if (c->speedup_censored && !isnan(c->speedup))
            fputs("$^*$", f);
    }
    for (size_t i = 0; i < ncols; i++)
        tex_pm(f, c->mean[cols[i].m], c->half[cols[i].m], &cols[i]);
    fputs(" \\\\\n", f);
}

/* The text naming group g's row, its values' display names joined by ", ", into buf. */
static void row_name(const rp_report *rp, size_t g, const app_names *names, char *buf, size_t size)
{
    const app_select *s = &rp->sel;
    const app_select_group *x = &s->groups[g];
    size_t len = 0;
    buf[0] = '\0';
    for (size_t k = 0; k < s->nby + s->nbest && len < size; k++) {
        const char *key = k < s->nby ? s->by_key[k] : s->best_key[k - s->nby];
        const char *v = k < s->nby ? x->value[k] : s->cells[x->best].value[k - s->nby];
        len += (size_t)snprintf(buf + len, size - len, "%s%s", k > 0 ? ", " : "",
                                app_names_value(names, key, v));
    }
}

/* A row's name and its place: the rows sorted by name (then place), so that two rows of one
 * name stand side by side. */
typedef struct named_row {
    char *name;
    size_t g;
} named_row;

static int by_name(const void *a, const void *b)
{
    const named_row *x = a, *y = b;
    int c = strcmp(x->name, y->name);
    return c != 0 ? c : (x->g > y->g) - (x->g < y->g);
}

/* The rows' names, each made once and sorted (a pair of rows compared each time made it
 * cubic: 1,600 rows with --names took 3 s); the pair named is the one the rows' order meets
 * first, the second row of a name the earliest. */
int rp_check_tex_names(const rp_report *rp, sim_err *err)
{
    static const app_names none = { 0 };
    const app_names *names = rp->o->names != NULL ? rp->o->names : &none;
    size_t n = rp->sel.ngroups, first = SIZE_MAX, second = SIZE_MAX, i = 0;
    named_row *rows = calloc(n + 1, sizeof(*rows));
    char buf[TEXT];
    for (; rows != NULL && i < n; i++) {
        row_name(rp, i, names, buf, sizeof(buf));
        app_names_shown(buf, sizeof(buf));
        if ((rows[i].name = strdup(buf)) == NULL)
            break;
        rows[i].g = i;
    }
    int rc = i < n ? sim_err_set(err, SIM_ENOMEM, NULL, "out of memory") : SIM_OK;
    if (rc == SIM_OK)
        qsort(rows, n, sizeof(*rows), by_name);
    for (size_t j = 1; rc == SIM_OK && j < n; j++)
        if (strcmp(rows[j].name, rows[j - 1].name) == 0 &&
            (j < 2 || strcmp(rows[j - 1].name, rows[j - 2].name) != 0) && rows[j].g < second) {
            first = rows[j - 1].g;
            second = rows[j].g;
        }
    if (rc == SIM_OK && second != SIZE_MAX) {
        row_name(rp, second, names, buf, sizeof(buf));
        app_names_shown(buf, sizeof(buf));
        rc = sim_err_set(err, SIM_EINVAL, NULL,
                         "two rows would be named \"%s\" (%s and %s): give distinct values "
                         "distinct names (--label, --names)",
                         buf, rp->sel.groups[first].value[0], rp->sel.groups[second].value[0]);
    }
    for (size_t j = 0; rows != NULL && j < n; j++)
        free(rows[j].name);
    free(rows);
    return rc;
}

void rp_print_tex(const rp_report *rp, FILE *f)
{
    static const app_names none = { 0 };
    const app_names *names = rp->o->names != NULL ? rp->o->names : &none;
    const app_select *s = &rp->sel;
    column cols[NMEASURES], ttt_col = { "", -1, 1.0, 0 };
    char heads[2][64], *text = NULL;
    size_t ncols = measure_columns(rp, cols, heads), len = 0;
    ttt_col.decimals = column_decimals(rp, &ttt_col);
    tex_head(rp, f, cols, ncols, names);
    for (size_t g = 0; g < s->ngroups; g++)
        tex_row(rp, f, g, &ttt_col, cols, ncols, names);
    fputs("\\bottomrule\n\\end{tabular}\n\\caption{", f);
    FILE *mem = open_memstream(&text, &len);
    if (mem != NULL) {
        rp_caption(rp, mem);
        if (fclose(mem) == 0 && text != NULL) {
            while (len > 0 && (text[len - 1] == '\n'))
                text[--len] = '\0';
            tex_escape(f, text);
        }
    }
    free(text);
    fputs("}\n\\label{tab:hetsim-", f);
    for (const char *k = s->by_key[0]; *k != '\0'; k++)
        fputc((*k >= 'a' && *k <= 'z') || (*k >= '0' && *k <= '9') ? *k : '-', f);
    fputs("}\n\\end{table}\n", f);
}
