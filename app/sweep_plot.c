/* Figures of a finished sweep (see sweep_plot.h). */
#include "app/sweep_plot.h"

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "app/index.h"
#include "app/stats.h"
#include "outputs/output.h"
#include "outputs/plot.h"
#include "sim/text.h"

#define PATH_TEXT          2048
#define LABEL_TEXT         160
#define MAX_LEFT_OUT_SHOWN 10 /* points left out named one by one on the log */

/* The segments of the breakdown figure, shares of the workers' time. */
enum segment {
    SEG_COMPUTE = 0, /* computation that no communication overlapped */
    SEG_OVERLAP,     /* computation overlapped by communication (comm_overlap_s) */
    SEG_COMM,        /* communication (comm_s) */
    SEG_WAIT,        /* waiting (wait_s) */
    SEG_DOWN,        /* down (down_s) */
    NSEGMENTS
};

/* The figures that a paper size shapes. */
enum figure {
    FIG_BANDS,
    FIG_BARS
};

typedef struct group {
    char label[LABEL_TEXT];    /* display names, safe inside gnuplot's quotes */
    char bar[LABEL_TEXT];      /* the same without the tuned values: a bar's label */
    char shown[LABEL_TEXT];    /* label as a reader sees it (app_names_shown) */
    size_t colour, dash, mark; /* its line's style numbers, from 1 */
    app_curve *curves;         /* (n) */
    size_t n;
    double share[NSEGMENTS]; /* sums over the runs of each run's shares */
    size_t nshares;          /* runs whose workers' time is not zero */
} group;

typedef struct plot {
    const app_sweep_plot_options *o;
    app_select sel;
    group *g; /* (ng) a group of sel's each */
    size_t ng;
    bool overlap; /* some workers.csv has comm_overlap_s */
    bool down;    /* some worker was down */
    bool drops;   /* some group's runs end before others */
    char *key;    /* o->sel.by as the figures' names hold it (file_key) */
    bool bands;   /* by-KEY and its by-KEY-I.csv were drawn */
    bool ttt_csv; /* ttt-by-KEY.csv was written */
    bool ttt_fig; /* ttt-by-KEY was drawn */
    bool shares;  /* breakdown-by-KEY was drawn */
} plot;

static int oom(sim_err *err)
{
    return sim_err_set(err, SIM_ENOMEM, NULL, "out of memory");
}

/* The length of the inches number that opens s, written D or D.D (D: one or more digits), or
 * 0 when none does: strtod alone also read "3." (in "3.x2"), ".5", "+3", "1e1" and, before a
 * check of the digits, " 3.5" and hexadecimal ("0x1p2x3" was 4 x 3). */
static size_t size_number(const char *s)
{
    size_t n = strspn(s, "0123456789");
    if (n > 0 && s[n] == '.') {
        size_t f = strspn(s + n + 1, "0123456789");
        n = f > 0 ? n + 1 + f : 0;
    }
    return n;
}

bool app_sweep_plot_size(const char *text, double *w, double *h)
{
    *h = 0;
    if (strcmp(text, "column") == 0 || strcmp(text, "page") == 0) {
        *w = text[0] == 'c' ? APP_SWEEP_PLOT_COLUMN_IN : APP_SWEEP_PLOT_PAGE_IN;
        return true;
    }
    size_t nw = size_number(text);
    if (nw == 0 || (text[nw] != 'x' && text[nw] != 'X'))
        return false;
    const char *hs = text + nw + 1;
    size_t nh = size_number(hs);
    if (nh == 0 || hs[nh] != '\0')
        return false;
    *w = strtod(text, NULL);
    *h = strtod(hs, NULL);
    return *w >= 1 && *w <= 50 && *h >= 1 && *h <= 50;
}

/* ---- Labels and styles ------------------------------------------------------------------- */

/* Appends `text` to `out` (room LABEL_TEXT), its quotes and backslashes made harmless inside
 * gnuplot's strings and the words of its titles list: ' and " as typographic quotes, the rest
 * of what gnuplot cannot take in a label (brackets and braces of arrays and objects, control
 * characters, a byte that is no UTF-8, U+FFFE and U+FFFF, which SVG's XML refuses) as '_'. A
 * text too long is cut before a UTF-8
 * character that does not fit whole (cut inside one, a 199-byte --label left the CSVs invalid
 * UTF-8, which pandas refused). */
static void append_label(char *out, const char *text)
{
    size_t len = strlen(out);
    for (const char *p = text; *p != '\0';) {
        unsigned char c = (unsigned char)*p;
        size_t n = sim_text_utf8_len(p);
        /* a byte that is no UTF-8, or U+FFFE or U+FFFF (no XML: an SVG figure), one '_' */
        bool bad = n == 0 || sim_text_xml_nonchar(p, n);
        size_t kept = bad ? 1 : n;
        if (len + (kept > 3 ? kept : 3) + 1 >= LABEL_TEXT)
            break;
        if (c == '\'' || c == '"') {
            memcpy(out + len, c == '\'' ? "\xe2\x80\x99" : "\xe2\x80\x9d", 3);
            len += 3;
        } else if (kept == 1) {
            out[len++] =
                bad || c < 0x20 || c == 0x7f || strchr("\\[]{}`", c) != NULL ? '_' : (char)c;
        } else {
            memcpy(out + len, p, n);
            len += n;
        }
        p += n == 0 ? 1 : n;
    }
    out[len] = '\0';
}

/* The position (from 1) of group g's value of --by key k among the distinct values of that
 * key, in the order of the groups. */
static size_t value_rank(const app_select *s, size_t g, size_t k)
{
    size_t rank = 0;
    for (size_t h = 0; h <= g; h++) {
        bool first = true;
        for (size_t j = 0; j < h && first; j++)
            first = strcmp(s->groups[j].value[k], s->groups[h].value[k]) != 0;
        rank += first;
        if (strcmp(s->groups[h].value[k], s->groups[g].value[k]) == 0 && first)
            return rank;
    }
    return rank;
}

static void name_group(plot *p, size_t i)
{
    static const app_names none = { 0 };
    const app_names *names = p->o->names != NULL ? p->o->names : &none;
    const app_select *s = &p->sel;
    const app_select_group *x = &s->groups[i];
    group *g = &p->g[i];
    g->label[0] = '\0';
    for (size_t k = 0; k < s->nby; k++) { /* the first key's value alone, others named */
        append_label(g->label, k > 0 ? ", " : "");
        if (k > 0) {
            append_label(g->label, app_names_key(names, s->by_key[k]));
            append_label(g->label, " ");
        }
        append_label(g->label, app_names_value(names, s->by_key[k], x->value[k]));
    }
    snprintf(g->bar, LABEL_TEXT, "%s", g->label[0] != '\0' ? g->label : "(empty)");
    for (size_t k = 0; k < s->nbest; k++) {
        append_label(g->label, ", ");
        append_label(g->label, app_names_key(names, s->best_key[k]));
        append_label(g->label, " ");
        append_label(g->label, s->cells[x->best].value[k]);
    }
    if (g->label[0] == '\0')
        snprintf(g->label, LABEL_TEXT, "(empty)");
    snprintf(g->shown, LABEL_TEXT, "%s", g->label);
    app_names_shown(g->shown, sizeof(g->shown));
    g->colour = g->mark = s->nby > 1 ? value_rank(s, i, 0) : i + 1;
    g->dash = s->nby > 1 ? value_rank(s, i, 1) : i + 1;
}

/* ---- Reading ----------------------------------------------------------------------------- */

/* Adds the run's shares of the workers' time (workers.csv) to the group's sums. */
static int add_shares(plot *p, group *g, const char *dir, sim_err *err)
{
    app_workers w;
    int rc = app_workers_read(dir, &w, err);
    if (rc != SIM_OK)
        return rc;
    double overlap = fmin(fmax(w.overlap_s, 0.0), w.compute_s);
    double part[NSEGMENTS] = {
        [SEG_COMPUTE] = w.compute_s - overlap,
        [SEG_OVERLAP] = overlap,
        [SEG_COMM] = w.comm_s,
        [SEG_WAIT] = w.wait_s,
        [SEG_DOWN] = w.down_s,
    };
    double total = 0.0;
    for (size_t k = 0; k < NSEGMENTS; k++)
        total += part[k];
    p->overlap = p->overlap || w.has_overlap;
    p->down = p->down || w.down_s > 0.0;
    if (!(total > 0.0))
        return SIM_OK;
    for (size_t k = 0; k < NSEGMENTS; k++)
        g->share[k] += 100.0 * part[k] / total;
    g->nshares++;
    return SIM_OK;
}

/* Reads the curves and shares of every group's runs. */
static int read_groups(plot *p, sim_err *err)
{
    char dir[PATH_TEXT];
    const app_select *s = &p->sel;
    int rc = SIM_OK;
    for (size_t i = 0; i < p->ng && rc == SIM_OK; i++) {
        group *g = &p->g[i];
        const app_select_group *x = &s->groups[i];
        if ((g->curves = calloc(x->n + 1, sizeof(*g->curves))) == NULL)
            return oom(err);
        name_group(p, i);
        for (size_t j = 0; j < i; j++)
            if (strcmp(p->g[j].shown, g->shown) == 0) /* "AR" and "AR\u200b" alike */
                return sim_err_set(err, SIM_EINVAL, NULL,
                                   "two groups would be drawn as \"%s\" (%s and %s): give "
                                   "distinct values distinct names (--label, --names)",
                                   g->label, s->groups[j].value[0], x->value[0]);
        for (size_t k = 0; k < x->n && rc == SIM_OK; k++) {
            app_select_run_dir(s, p->o->sweep_dir, x->rows[k], dir, sizeof(dir));
            if ((rc = app_curve_read(dir, &g->curves[g->n], err)) == SIM_OK) {
                size_t rows = g->curves[g->n].n;
                g->n++;
                for (size_t j = 0; j + 1 < g->n; j++)
                    p->drops = p->drops || g->curves[j].n != rows;
                rc = add_shares(p, g, dir, err);
            }
        }
    }
    return rc;
}

/* ---- Drawing ----------------------------------------------------------------------------- */

/* The figures' file extension. */
static const char *ext_of(const app_sweep_plot_options *o)
{
    return o->format == SIM_PLOT_PDF ? "pdf" : o->format == SIM_PLOT_SVG ? "svg" : "png";
}

/* The files app_sweep_plot writes into its output directory (`ctx` the plot; KEY its key as file
 * names hold it): by-KEY, ttt-by-KEY and breakdown-by-KEY figures, the last two's CSVs, and
 * by-KEY-I.csv, a band's data for group I. Their temporaries are made afresh whatever holds their
 * names. */
static bool plot_file(const char *name, const void *ctx)
{
    const plot *p = ctx;
    static const char *const heads[] = { "", "ttt-", "breakdown-" };
    char want[PATH_TEXT];
    for (size_t k = 0; k < sizeof(heads) / sizeof(heads[0]); k++) {
        snprintf(want, sizeof(want), "%sby-%s.%s", heads[k], p->key, ext_of(p->o));
        if (strcmp(name, want) == 0)
            return true;
        snprintf(want, sizeof(want), "%sby-%s.csv", heads[k], p->key);
        if (k > 0 && strcmp(name, want) == 0)
            return true;
    }
    int w = snprintf(want, sizeof(want), "by-%s-", p->key);
    if (strncmp(name, want, (size_t)w) != 0)
        return false;
    const char *i = name + w;
    if (*i < '0' || *i > '9')
        return false;
    while (*i >= '0' && *i <= '9')
        i++;
    return strcmp(i, ".csv") == 0;
}

/* A paper figure's size in inches (w x h), its layout (wide: panels side by side) and its
 * legend's columns: as many as the longest entry lets fit across the figure, counting a
 * character as 0.75 of the text's size (gnuplot's estimate is about that, and a key that does
 * not fit its room drops entries), the entry its label, " (n=N)" and its sample. */
static void paper_shape(const plot *p, enum figure fig, double *w, double *h, bool *wide, int *cols)
{
    *w = p->o->width_in;
    *h = p->o->height_in;
    *wide = *w >= 5.0 && (*h == 0 || 1.5 * *h < *w);
    if (*h == 0)
        *h = fig == FIG_BARS ? (*wide ? 2.8 : 2.6) : *wide ? 2.8 : 5.2;
    size_t longest = 0;
    for (size_t i = 0; i < p->ng; i++)
        longest = strlen(p->g[i].label) > longest ? strlen(p->g[i].label) : longest;
    double entry_pt = 0.75 * APP_SWEEP_PLOT_FONT_PT * (double)(longest + 16);
    *cols = (int)floor(0.9 * 72.0 * *w / entry_pt);
    *cols = *cols < 1 ? 1 : *cols > 4 ? 4 : *cols;
}

/* A paper figure of the curves keeps room for its three panels under its legend, as
 * plots/bands.gp lays them out (a legend row 1.3 lines, the title's room, 3.4 lines under the
 * panels, 1.6 between them stacked): each panel at least 2 lines tall, for its tick labels.
 * Else SIM_EINVAL naming the most groups that fit (600 groups at --size column drew the
 * panels on top of each other under a legend running off the figure, and 40 did: exit 0). */
static int paper_room(const plot *p, sim_err *err)
{
    if (p->o->width_in <= 0)
        return SIM_OK;
    double w, h, line = 1.3 * APP_SWEEP_PLOT_FONT_PT;
    bool wide;
    int cols;
    paper_shape(p, FIG_BANDS, &w, &h, &wide, &cols);
    double top = p->o->title != NULL && p->o->title[0] != '\0' ? 2.0 * APP_SWEEP_PLOT_TITLE_PT
                                                               : 0.6 * APP_SWEEP_PLOT_FONT_PT;
    double fixed = top + 0.6 * APP_SWEEP_PLOT_FONT_PT + 3.4 * APP_SWEEP_PLOT_FONT_PT;
    double panels = wide ? 2 * line : 3 * 2 * line + 2 * 1.6 * APP_SWEEP_PLOT_FONT_PT;
    double max_rows = floor((72.0 * h - fixed - panels) / line);
    size_t need = p->ng + (p->drops ? 1 : 0);
    size_t fit = max_rows > 0 ? (size_t)max_rows * (size_t)cols : 0;
    if (need <= fit)
        return SIM_OK;
    size_t most = fit > (p->drops ? 1u : 0u) ? fit - (p->drops ? 1 : 0) : 0;
    return sim_err_set(err, SIM_EINVAL, NULL,
                       "%s: %zu groups of %s, and a %g x %g in figure of the curves holds the "
                       "legend of at most %zu above its panels (%d a row): plot at the screen "
                       "size (no --size: the figure grows with its groups), at a taller --size "
                       "WxH, or filter with --where",
                       p->sel.ix.csv.path, p->ng, p->o->sel.by, w, h, most, cols);
}

/* The title and, for paper figures, the size variables of a figure: `fallback` is the title
 * of a screen figure. */
static bool put_frame(const plot *p, FILE *s, enum figure fig, const char *fallback)
{
    const app_sweep_plot_options *o = p->o;
    char title[LABEL_TEXT] = "";
    bool paper = o->width_in > 0;
    append_label(title, o->title != NULL ? o->title : paper ? "" : fallback);
    bool ok = fprintf(s, "; heading='%s'", title) >= 0;
    if (!paper)
        return ok;
    double w, h;
    bool wide;
    int cols;
    paper_shape(p, fig, &w, &h, &wide, &cols);
    return ok && fprintf(s,
                         "; width_in=%g; height_in=%g; font_pt=%d; title_pt=%d; layout='%s'; "
                         "keycols=%d",
                         w, h, APP_SWEEP_PLOT_FONT_PT, APP_SWEEP_PLOT_TITLE_PT,
                         wide ? "row" : "stack", cols) >= 0;
}

/* Runs `script` with the variables written to `vars` by the caller, then the frame's. */
static int draw(const plot *p, const char *script, char *vars, const char *name, sim_err *err)
{
    char fig[PATH_TEXT];
    snprintf(fig, sizeof(fig), "%s-by-%s.%s", name, p->key, ext_of(p->o));
    return sim_plot_draw(script, vars, p->o->out_dir, name[0] == '\0' ? fig + 1 : fig, err);
}

/* True if a run of some group has a test accuracy: a timing-only sweep's runs have none, and
 * gnuplot refused their empty curves ("x range is invalid", exit 1, the CSVs left behind). */
static bool any_accuracy(const plot *p)
{
    for (size_t i = 0; i < p->ng; i++)
        for (size_t k = 0; k < p->g[i].n; k++)
            for (size_t r = 0; r < p->g[i].curves[k].n; r++)
                if (!isnan(p->g[i].curves[k].col[APP_CURVE_ACC][r]))
                    return true;
    return false;
}

static int draw_bands(const plot *p, sim_err *err)
{
    static const char *const xlabels[APP_CURVE_NCOLS] = {
        [APP_CURVE_TIME] = "simulated time (s)",
        [APP_CURVE_SAMPLES] = "samples",
        [APP_CURVE_EPOCH] = "epoch",
    };
    const app_sweep_plot_options *o = p->o;
    char name[PATH_TEXT], heading[PATH_TEXT];
    char *vars = NULL;
    size_t len = 0;
    FILE *s = open_memstream(&vars, &len);
    if (s == NULL)
        return oom(err);
    int rc = SIM_OK;
    bool ok = fputs("ins='", s) >= 0;
    for (size_t i = 0; i < p->ng && rc == SIM_OK; i++) {
        snprintf(name, sizeof(name), "by-%s-%zu.csv", p->key, i);
        rc = app_curve_write_band(o->out_dir, name, p->g[i].curves, p->g[i].n, o->x, o->band, err);
        ok = ok && fprintf(s, "%s%s/%s", i > 0 ? " " : "", o->out_dir, name) >= 0;
    }
    ok = ok && fputs("'; titles='", s) >= 0;
    for (size_t i = 0; i < p->ng; i++)
        ok = ok && fprintf(s, "%s\"%s (n=%zu)\"", i > 0 ? " " : "", p->g[i].label, p->g[i].n) >= 0;
    const char *const lists[] = { "colours", "dashes", "marks" };
    for (size_t l = 0; l < 3; l++) {
        ok = ok && fprintf(s, "'; %s='", lists[l]) >= 0;
        for (size_t i = 0; i < p->ng; i++)
            ok = ok && fprintf(s, "%s%zu", i > 0 ? " " : "",
                               l == 0   ? p->g[i].colour
                               : l == 1 ? p->g[i].dash
                                        : p->g[i].mark) >= 0;
    }
    snprintf(heading, sizeof(heading), "by %s: mean and %s over runs", o->sel.by,
             o->band == APP_CURVE_BAND_CI95 ? "95% interval of the mean" : "min-max");
    ok = ok && fprintf(s, "'; xlabel='%s'; drops=%d", xlabels[o->x], p->drops ? 1 : 0) >= 0;
    ok = ok && put_frame(p, s, FIG_BANDS, heading);
    if (fclose(s) != 0 || !ok || vars == NULL) {
        free(vars);
        return rc != SIM_OK ? rc : oom(err);
    }
    if (rc == SIM_OK)
        rc = draw(p, "bands.gp", vars, "", err);
    free(vars);
    return rc;
}

/* ttt-by-KEYS.csv: label, mean, lo, hi (the 95% interval; NaN where none reached it),
 * reached, runs, top and note_top (above the bar, "3/5": the runs that reached it, when some
 * did not), low and note_low (on the axis, "not reached (> 12 s)" when none did); a note not
 * drawn has the position NaN and the text "-". *reached: the groups that reached it. */
static int write_ttt(const plot *p, const char *name, size_t *reached, sim_err *err)
{
    const app_select *s = &p->sel;
    size_t most = 0;
    *reached = 0;
    for (size_t i = 0; i < p->ng; i++)
        most = s->groups[i].n > most ? s->groups[i].n : most;
    double *t = calloc(most + 1, sizeof(*t));
    sim_file *out = t != NULL ? sim_file_open(p->o->out_dir, name, err) : NULL;
    if (out == NULL) {
        free(t);
        return t == NULL ? oom(err) : err->code;
    }
    FILE *f = sim_file_stream(out);
    fputs("label,mean,lo,hi,reached,runs,top,note_top,low,note_low\n", f);
    for (size_t i = 0; i < p->ng; i++) {
        const app_select_group *x = &s->groups[i];
        double censored = INFINITY, mean = NAN, half = NAN;
        for (size_t k = 0; k < x->n; k++) {
            const app_select_run *r = &s->runs[x->rows[k]];
            t[k] = r->ttt;
            if (isnan(t[k]))
                censored = fmin(censored, r->observed_s);
        }
        size_t m = app_stats_mean_ci(t, x->n, &mean, &half);
        *reached += m > 0;
        sim_output_csv_field(f, p->g[i].bar);
        if (m == 0) {
            fprintf(f, ",NaN,NaN,NaN,0,%zu,NaN,-,0,not reached (> %g s)\n", x->n, censored);
            continue;
        }
        double lo = m > 1 ? mean - half : mean, hi = m > 1 ? mean + half : mean;
        fprintf(f, ",%.9g,%.9g,%.9g,%zu,%zu,", mean, lo, hi, m, x->n);
        if (m < x->n)
            fprintf(f, "%.9g,%zu/%zu", hi, m, x->n);
        else
            fputs("NaN,-", f);
        fputs(",NaN,-\n", f);
    }
    free(t);
    return sim_file_commit(out, err);
}

static int draw_ttt(plot *p, FILE *log, sim_err *err)
{
    const app_sweep_plot_options *o = p->o;
    double target = p->sel.target;
    char name[PATH_TEXT], heading[PATH_TEXT], rule[64];
    char *vars = NULL;
    size_t len = 0, reached = 0;
    if (isnan(target)) {
        if (log != NULL)
            sim_err_warn(log,
                         "no ttt-by-%s.%s: the runs have no stop.target_accuracy; give one with "
                         "--target ACC",
                         p->key, ext_of(o));
        return SIM_OK;
    }
    snprintf(name, sizeof(name), "ttt-by-%s.csv", p->key);
    int rc = write_ttt(p, name, &reached, err);
    p->ttt_csv = rc == SIM_OK;
    if (rc != SIM_OK || reached == 0) {
        if (rc == SIM_OK && log != NULL)
            sim_err_warn(log, "no ttt-by-%s.%s: no run reached test accuracy %g (%s)", p->key,
                         ext_of(o), target, name);
        return rc;
    }
    app_ttt_name(&p->sel.rule, rule, sizeof(rule));
    snprintf(heading, sizeof(heading), "time to test accuracy %g (%s) by %s (mean, 95%% interval)",
             target, rule, o->sel.by);
    FILE *s = open_memstream(&vars, &len);
    if (s == NULL)
        return oom(err);
    bool ok = fprintf(s, "in='%s/%s'; nbars=%zu; ylabel='time to %g (s%s)'", o->out_dir, name,
                      p->ng, target, o->width_in > 0 ? "" : "; k/n: runs that reached it") >= 0;
    ok = put_frame(p, s, FIG_BARS, heading) && ok;
    if (fclose(s) != 0 || !ok || vars == NULL) {
        free(vars);
        return oom(err);
    }
    rc = draw(p, "bars.gp", vars, "ttt", err);
    p->ttt_fig = rc == SIM_OK;
    free(vars);
    return rc;
}

/* breakdown-by-KEYS.csv (label, then the mean share of each segment over the group's runs, in
 * percent) and its figure, when some run has shares (runs whose workers were down from 0 end at
 * 0 s: an empty figure was drawn, exit 0, where report printed "-"). */
static int draw_breakdown(plot *p, FILE *log, sim_err *err)
{
    const app_sweep_plot_options *o = p->o;
    char name[PATH_TEXT], heading[PATH_TEXT];
    snprintf(name, sizeof(name), "breakdown-by-%s.csv", p->key);
    sim_file *out = sim_file_open(o->out_dir, name, err);
    if (out == NULL)
        return err->code;
    FILE *f = sim_file_stream(out);
    fputs("label,compute,overlap,comm,wait,down\n", f);
    for (size_t i = 0; i < p->ng; i++) {
        sim_output_csv_field(f, p->g[i].bar);
        for (size_t k = 0; k < NSEGMENTS; k++)
            if (p->g[i].nshares > 0)
                fprintf(f, ",%.9g", p->g[i].share[k] / (double)p->g[i].nshares);
            else
                fputs(",NaN", f);
        fputc('\n', f);
    }
    int rc = sim_file_commit(out, err);
    for (size_t i = 0; i < p->ng; i++)
        p->shares = p->shares || p->g[i].nshares > 0;
    if (rc == SIM_OK && !p->shares && log != NULL)
        sim_err_warn(log,
                     "no breakdown-by-%s.%s: no run's workers had time to share (every run ended "
                     "at 0 s)",
                     p->key, ext_of(o));
    if (rc != SIM_OK || !p->shares)
        return rc;
    char *vars = NULL;
    size_t len = 0;
    FILE *s = open_memstream(&vars, &len);
    if (s == NULL)
        return oom(err);
    snprintf(heading, sizeof(heading), "where the workers’ time went, by %s (mean over runs)",
             o->sel.by);
    bool ok = fprintf(s, "in='%s/%s'; nbars=%zu; overlap=%d; down=%d", o->out_dir, name, p->ng,
                      p->overlap ? 1 : 0, p->down ? 1 : 0) >= 0;
    ok = put_frame(p, s, FIG_BARS, heading) && ok;
    if (fclose(s) != 0 || !ok || vars == NULL) {
        free(vars);
        return oom(err);
    }
    rc = draw(p, "shares.gp", vars, "breakdown", err);
    free(vars);
    return rc;
}

/* ---- The whole ---------------------------------------------------------------------------- */

/* Whether `name`, a file of this plot's (plot_file), is one it wrote now. */
static bool written(const plot *p, const char *name)
{
    char want[PATH_TEXT];
    const char *ext = ext_of(p->o);
    snprintf(want, sizeof(want), "by-%s-", p->key);
    size_t w = strlen(want);
    if (strncmp(name, want, w) == 0 && name[w] >= '0' && name[w] <= '9') {
        size_t i = (size_t)strtoull(name + w, NULL, 10);
        snprintf(want, sizeof(want), "by-%s-%zu.csv", p->key, i);
        return p->bands && i < p->ng && strcmp(name, want) == 0; /* not "by-K-01.csv" */
    }
    const struct {
        const char *head, *ext;
        bool wrote;
    } files[] = { { "", ext, p->bands },
                  { "breakdown-", ext, p->shares },
                  { "breakdown-", "csv", true },
                  { "ttt-", ext, p->ttt_fig },
                  { "ttt-", "csv", p->ttt_csv } };
    for (size_t k = 0; k < sizeof(files) / sizeof(files[0]); k++) {
        snprintf(want, sizeof(want), "%sby-%s.%s", files[k].head, p->key, files[k].ext);
        if (strcmp(name, want) == 0)
            return files[k].wrote;
    }
    return true;
}

/* Once the figures are drawn, removes this plot's files that an earlier plot --by of the key
 * left in the folder and this one did not write: a figure it did not draw (ttt-by-KEY without
 * --target, by-KEY of timing-only runs) and the band data of groups it does not have
 * (by-KEY-I.csv). They were left beside the new figures, of other data (a ttt-by-KEY.png of
 * two groups beside a plot of one that said "no ttt-by-KEY.png", exit 0). Regular files alone,
 * as sim_plot_place claimed them. */
static int remove_stale(const plot *p, sim_err *err)
{
    DIR *d = opendir(p->o->out_dir);
    if (d == NULL)
        return sim_err_set(err, SIM_EIO, NULL, "cannot list %s: %s", p->o->out_dir,
                           strerror(errno));
    int rc = SIM_OK;
    for (struct dirent *e; rc == SIM_OK && (e = readdir(d)) != NULL;) {
        if (!plot_file(e->d_name, p) || written(p, e->d_name))
            continue;
        char *path = sim_output_join(p->o->out_dir, e->d_name, "");
        struct stat st;
        if (path == NULL)
            rc = oom(err);
        else if (lstat(path, &st) == 0 && S_ISREG(st.st_mode) && unlink(path) != 0 &&
                 errno != ENOENT)
            rc = sim_err_set(err, SIM_EIO, NULL, "cannot remove %s, left by an earlier plot: %s",
                             path, strerror(errno));
        free(path);
    }
    closedir(d);
    return rc;
}

/* The --by text as the figures' names hold it: '[' and ']' of a grid path of an array's item
 * (stragglers[0].slowdown) written '_', as the sweep names its points' directories; gnuplot
 * is given no name holding them (plot --by refused such a key, exit 2). */
static char *file_key(const char *by)
{
    char *key = strdup(by);
    for (char *c = key; c != NULL && *c != '\0'; c++)
        if (*c == '[' || *c == ']')
            *c = '_';
    return key;
}

static int check_paths(const app_sweep_plot_options *o, const char *key, sim_err *err)
{
    int rc = sim_plot_path_ok("sweep directory", o->sweep_dir, err);
    /* Each whole: "OUT/KEY" cut at 2,047 bytes let a space further in -o pass, and named the
     * key for a space of -o's. */
    if (rc == SIM_OK)
        rc = sim_plot_path_ok("output directory", o->out_dir, err);
    if (rc == SIM_OK)
        rc = sim_plot_path_ok("--by key", key, err); /* the option named: "key is empty" */
    /* The figures are named after the key: "a/../../g/seed-5/metrics", a column of a damaged
     * index.csv, put breakdown-by-KEY.csv over a golden's metrics.csv. */
    if (rc == SIM_OK && strchr(o->sel.by, '/') != NULL)
        rc = sim_err_set(err, SIM_EINVAL, NULL,
                         "--by key \"%s\" holds '/': the figures named after it (by-KEY.%s, "
                         "breakdown-by-KEY.csv) would lie in another folder",
                         o->sel.by, ext_of(o));
    return rc;
}

/* Names the points left out on the log. */
static void say_left_out(const app_select *s, FILE *log)
{
    size_t shown = 0;
    for (size_t r = 0; log != NULL && r < s->ix.csv.nrows; r++)
        if (!app_index_has_results(&s->ix, r) && ++shown <= MAX_LEFT_OUT_SHOWN)
            sim_err_warn(log, "%s: left out point %s (%s): no results", s->ix.csv.path,
                         app_index_cell(&s->ix, r, 0), app_index_cell(&s->ix, r, 1));
    if (log != NULL && s->left_out > MAX_LEFT_OUT_SHOWN)
        sim_err_warn(log, "%s: left out %zu more points without results", s->ix.csv.path,
                     s->left_out - MAX_LEFT_OUT_SHOWN);
}

int app_sweep_plot(const app_sweep_plot_options *o, FILE *log, sim_err *err)
{
    sim_err_clear(err);
    plot p = { .o = o };
    sim_rundir_lock *lock = NULL;
    p.key = file_key(o->sel.by);
    int rc = p.key == NULL ? oom(err) : check_paths(o, p.key, err);
    if (rc == SIM_OK) /* its own sweep's directory, or no hetsim output */
        rc = sim_plot_place(o->out_dir, o->sweep_dir, plot_file, &p, &lock, err);
    if (rc == SIM_OK)
        rc = app_select_read(&p.sel, o->sweep_dir, &o->sel, log, err);
    if (rc == SIM_OK)
        say_left_out(&p.sel, log);
    p.ng = p.sel.ngroups;
    if (rc == SIM_OK && p.ng > APP_SWEEP_PLOT_MAX_VALUES)
        rc = sim_err_set(err, SIM_EINVAL, NULL,
                         "%s: %zu groups of %s, and a figure holds at most %d (a line or a bar "
                         "each; more would pass the 32767 pixels gnuplot's PNG terminal draws): "
                         "group by a key with fewer values, or filter with --where",
                         p.sel.ix.csv.path, p.ng, o->sel.by, APP_SWEEP_PLOT_MAX_VALUES);
    if (rc == SIM_OK && (p.g = calloc(p.ng + 1, sizeof(*p.g))) == NULL)
        rc = oom(err);
    if (rc == SIM_OK)
        rc = read_groups(&p, err);
    if (rc == SIM_OK && any_accuracy(&p))
        rc = paper_room(&p, err);
    if (rc == SIM_OK)
        rc = sim_plot_mkdir(o->out_dir, err);
    p.bands = rc == SIM_OK && any_accuracy(&p);
    if (p.bands)
        rc = draw_bands(&p, err);
    else if (rc == SIM_OK && log != NULL)
        sim_err_warn(log, "no by-%s.%s: the runs have no test accuracy (a timing-only model)",
                     p.key, ext_of(o));
    if (rc == SIM_OK)
        rc = draw_breakdown(&p, log, err);
    if (rc == SIM_OK)
        rc = draw_ttt(&p, log, err);
    if (rc == SIM_OK)
        rc = remove_stale(&p, err);
    for (size_t i = 0; p.g != NULL && i < p.ng; i++) {
        for (size_t k = 0; k < p.g[i].n; k++)
            app_curve_fini(&p.g[i].curves[k]);
        free(p.g[i].curves);
    }
    free(p.g);
    free(p.key);
    app_select_fini(&p.sel);
    sim_rundir_unlock(lock);
    return rc;
}
