/* Which runs of a sweep a table or figure shows, and how they group (see select.h). */
#include "app/select.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app/stats.h"
#include "outputs/csv.h"
#include "sim/cfg.h"
#include "sim/fnv.h"

#define PATH_TEXT    2048
#define MAX_RANGES   64 /* ranges in a --tune-seeds list */
#define VALUES_SHOWN 8  /* a pooled key's values named in the message */
#define MESSAGE_ROOM 1024

/* What app_select_read works with besides `s`. */
typedef struct work {
    const app_select_options *o;
    const char *sweep_dir;
    int where_col[64];
    const char *where_value[64];
    uint64_t lo[MAX_RANGES], hi[MAX_RANGES]; /* --tune-seeds ranges */
    size_t nranges;
    bool *use; /* (nrows) selected: results, every filter */
} work;

static int oom(sim_err *err)
{
    return sim_err_set(err, SIM_ENOMEM, NULL, "out of memory");
}

/* ---- Options ----------------------------------------------------------------------------- */

/* Resolves the comma-separated keys of `list` (option `opt`) into columns and head names. */
static int resolve_keys(app_select *s, const char *opt, const char *list, int *cols,
                        const char **keys, size_t *n, sim_err *err)
{
    char buf[PATH_TEXT];
    if (snprintf(buf, sizeof(buf), "%s", list) >= (int)sizeof(buf))
        return sim_err_set(err, SIM_EINVAL, NULL,
                           "%s: %zu bytes, longer than %d (the most a list of keys takes)", opt,
                           strlen(list), PATH_TEXT - 1);
    size_t len = strlen(list); /* strtok_r skipped an empty key: "a," was taken as "a" */
    if (len > 0 && (list[0] == ',' || list[len - 1] == ',' || strstr(list, ",,") != NULL))
        return sim_err_set(err, SIM_EINVAL, NULL,
                           "%s: an empty key in \"%s\" (keys are joined by single commas)", opt,
                           list);
    *n = 0;
    for (char *save = NULL, *k = strtok_r(buf, ",", &save); k != NULL;
         k = strtok_r(NULL, ",", &save)) {
        if (*n == APP_SELECT_MAX_KEYS)
            return sim_err_set(err, SIM_EINVAL, NULL, "%s takes at most %d keys", opt,
                               APP_SELECT_MAX_KEYS);
        int rc = app_index_key_column(&s->ix, k, &cols[*n], err);
        if (rc != SIM_OK)
            return rc;
        for (size_t j = 0; j < *n; j++)
            if (cols[j] == cols[*n])
                return sim_err_set(err, SIM_EINVAL, NULL, "%s names %s twice", opt, k);
        keys[*n] = s->ix.csv.head[cols[*n]];
        (*n)++;
    }
    if (*n == 0)
        return sim_err_set(err, SIM_EINVAL, NULL, "%s needs a key", opt);
    return SIM_OK;
}

static bool parse_u64(const char *a, const char *end, uint64_t *v)
{
    *v = 0;
    if (a == end)
        return false;
    for (; a < end; a++) {
        if (*a < '0' || *a > '9' || *v > (UINT64_MAX - 9) / 10)
            return false;
        *v = 10 * *v + (uint64_t)(*a - '0');
    }
    return true;
}

/* A seed as the sweep writes it (and --update a golden's): decimal digits without a leading
 * zero ("05" was seed 5). */
static bool parse_seed(const char *a, const char *end, uint64_t *v)
{
    return (end - a == 1 || *a != '0') && parse_u64(a, end, v);
}

/* "11,12" or "11-13,15" into w's ranges; every item is a seed or a range: an empty text
 * (--tune-seeds "", which tuned on nothing and reported as if untuned, exit 0), an empty item
 * ("11,"), a seed with a leading zero ("05") and a seed named twice ("5,5", "5-7,6": taken
 * as if once) are refused. */
static int parse_seeds(work *w, const char *text, sim_err *err)
{
    for (const char *p = text, *end;; p = end + 1) {
        end = p + strcspn(p, ",");
        const char *dash = memchr(p, '-', (size_t)(end - p));
        uint64_t lo = 0, hi = 0;
        bool ok = w->nranges < MAX_RANGES &&
                  (dash == NULL ? parse_seed(p, end, &lo) && (hi = lo, true)
                                : parse_seed(p, dash, &lo) && parse_seed(dash + 1, end, &hi));
        if (!ok || hi < lo)
            return sim_err_set(err, SIM_EINVAL, NULL,
                               "--tune-seeds takes seeds and ranges such as 11,12 or 11-13 "
                               "(decimal, no leading zero; at most %d), got \"%s\"",
                               MAX_RANGES, text);
        for (size_t i = 0; i < w->nranges; i++)
            if (lo <= w->hi[i] && hi >= w->lo[i])
                return sim_err_set(err, SIM_EINVAL, NULL,
                                   "--tune-seeds names seed %" PRIu64 " twice, in \"%s\"",
                                   lo > w->lo[i] ? lo : w->lo[i], text);
        w->lo[w->nranges] = lo;
        w->hi[w->nranges++] = hi;
        if (*end != ',')
            return SIM_OK;
    }
}

static int read_options(app_select *s, work *w, sim_err *err)
{
    const app_select_options *o = w->o;
    int rc = resolve_keys(s, "--by", o->by, s->by_col, s->by_key, &s->nby, err);
    if (rc == SIM_OK && o->best_over != NULL)
        rc = resolve_keys(s, "--best-over", o->best_over, s->best_col, s->best_key, &s->nbest, err);
    int seed = app_index_column(&s->ix, "seed");
    for (size_t i = 0; i < s->nbest && rc == SIM_OK; i++) {
        if (s->best_col[i] == seed)
            rc = sim_err_set(err, SIM_EINVAL, NULL,
                             "--best-over seed would report each group at its luckiest seed");
        for (size_t j = 0; j < s->nby && rc == SIM_OK; j++)
            if (s->best_col[i] == s->by_col[j])
                rc = sim_err_set(err, SIM_EINVAL, NULL, "--best-over %s is a key grouped by (--by)",
                                 s->best_key[i]);
    }
    if (rc == SIM_OK && o->nwhere > sizeof(w->where_col) / sizeof(w->where_col[0]))
        rc = sim_err_set(err, SIM_EINVAL, NULL, "at most 64 --where filters");
    for (size_t i = 0; i < o->nwhere && rc == SIM_OK; i++) {
        char key[PATH_TEXT];
        const char *eq = strchr(o->where[i], '=');
        if (eq != NULL && (size_t)(eq - o->where[i]) >= sizeof(key))
            return sim_err_set(err, SIM_EINVAL, NULL,
                               "--where: a key of %zu bytes, longer than %zu (the most a key "
                               "takes)",
                               (size_t)(eq - o->where[i]), sizeof(key) - 1);
        if (eq == NULL || eq == o->where[i])
            return sim_err_set(err, SIM_EINVAL, NULL,
                               "--where takes KEY=VALUE (a swept key or seed), got \"%s\"",
                               o->where[i]);
        snprintf(key, sizeof(key), "%.*s", (int)(eq - o->where[i]), o->where[i]);
        rc = app_index_key_column(&s->ix, key, &w->where_col[i], err);
        w->where_value[i] = eq + 1;
    }
    if (rc == SIM_OK && o->tune_seeds != NULL) {
        if (s->nbest == 0)
            return sim_err_set(err, SIM_EINVAL, NULL,
                               "--tune-seeds goes with --best-over (the keys to tune)");
        snprintf(s->tune_text, sizeof(s->tune_text), "%s", o->tune_seeds);
        rc = parse_seeds(w, o->tune_seeds, err);
    }
    return rc;
}

/* ---- Selecting the runs ------------------------------------------------------------------ */

/* Whether index.csv's cell `cell`, read as the inside of a JSON string (a string value's
 * text as the sweep's JSON writes it: q\"uote for q"uote, back\\slash for back\slash), is
 * `text`. */
static bool same_text(const char *cell, const char *text)
{
    size_t n = strlen(cell);
    if (strchr(cell, '\\') == NULL) /* no escape: the text is the cell, compared already */
        return false;
    char *json = malloc(n + 10), *out = malloc(n + 1); /* the text is never longer */
    bool same = false;
    if (json != NULL && out != NULL) {
        snprintf(json, n + 10, "{\"v\": \"%s\"}", cell);
        sim_cfg *v = sim_cfg_parse(json, strlen(json), NULL, NULL);
        same = v != NULL && sim_cfg_string(v, "v", out, n + 1, NULL) == SIM_OK &&
               strcmp(out, text) == 0;
        sim_cfg_destroy(v);
    }
    free(json);
    free(out);
    return same;
}

/* Equal as index.csv writes them, as decimal numbers ("0.10" is "0.1"), or as a string's text
 * (index.csv keeps a string's JSON escapes: --where takes q\"uote and q"uote alike). Numbers
 * are read as the results files' (sim_csv_parse_number): strtod also read "0x10", "inf" and
 * " 16", and a number too small for a double as 0, so --where name=16 took the runs named
 * "0x10" and "16", name=inf those named "inf" and "INFINITY", name=0 the one named "1e-400". */
bool app_select_same_value(const char *a, const char *b)
{
    if (strcmp(a, b) == 0)
        return true;
    double x = 0, y = 0;
    return (sim_csv_parse_number(a, &x) && sim_csv_parse_number(b, &y) && x == y) ||
           same_text(a, b);
}

static bool tuning_seed(const work *w, const app_select *s, size_t r)
{
    uint64_t seed = 0;
    const char *t = app_index_cell(&s->ix, r, s->ix.nkeys + 2);
    if (!parse_u64(t, t + strlen(t), &seed))
        return false;
    for (size_t i = 0; i < w->nranges; i++)
        if (seed >= w->lo[i] && seed <= w->hi[i])
            return true;
    return false;
}

/* The first --where filter whose value no row with results has (a value mistyped, or holding
 * an invisible character pasted in), or -1 when each has one. */
static int where_unmatched(const app_select *s, const work *w)
{
    for (size_t i = 0; i < w->o->nwhere; i++) {
        bool any = false;
        for (size_t r = 0; r < s->ix.csv.nrows && !any; r++)
            any = app_index_has_results(&s->ix, r) &&
                  app_select_same_value(app_index_cell(&s->ix, r, (size_t)w->where_col[i]),
                                        w->where_value[i]);
        if (!any)
            return (int)i;
    }
    return -1;
}

/* Marks the rows with results that pass every filter: a key filtered several times passes
 * with any of its values. None is an error naming a filter that matches no run, if one does
 * (it named none: "no runs with results pass the --where filters" for `--where
 * workload.lr=0.01<U+200B>`, whose value shows as 0.01). */
static int select_rows(app_select *s, work *w, sim_err *err)
{
    size_t n = s->ix.csv.nrows, kept = 0;
    if ((w->use = calloc(n + 1, sizeof(*w->use))) == NULL)
        return oom(err);
    for (size_t r = 0; r < n; r++) {
        if (!app_index_has_results(&s->ix, r)) {
            s->left_out++;
            continue;
        }
        bool ok = true;
        for (size_t i = 0; i < w->o->nwhere && ok; i++) {
            bool any = false;
            for (size_t j = 0; j < w->o->nwhere; j++)
                any = any ||
                      (w->where_col[j] == w->where_col[i] &&
                       app_select_same_value(app_index_cell(&s->ix, r, (size_t)w->where_col[j]),
                                             w->where_value[j]));
            ok = any;
        }
        w->use[r] = ok;
        kept += ok;
        s->filtered_out += !ok;
    }
    int u = kept == 0 ? where_unmatched(s, w) : -1;
    if (u >= 0)
        return sim_err_set(err, SIM_EINVAL, NULL,
                           "%s: no runs with results pass the --where filters: no run with "
                           "results has %s (%zu without results, %zu filtered out)",
                           s->ix.csv.path, w->o->where[u], s->left_out, s->filtered_out);
    if (kept == 0)
        return sim_err_set(err, SIM_EINVAL, NULL,
                           "%s: no runs with results%s (%zu without results, %zu filtered out)",
                           s->ix.csv.path, w->o->nwhere > 0 ? " pass the --where filters" : "",
                           s->left_out, s->filtered_out);
    return SIM_OK;
}

/* Each selected run's time to target and final accuracy. Every selected run's metrics.csv
 * is read, a target or not: without one, a run whose metrics.csv was removed, a directory or
 * damaged was reported (exit 0). */
static int read_runs(app_select *s, work *w, sim_err *err)
{
    char dir[PATH_TEXT];
    int fcol = app_index_column(&s->ix, "final_accuracy");
    size_t reason = s->ix.nkeys + 3;
    for (size_t r = 0; r < s->ix.csv.nrows; r++) {
        if (!w->use[r])
            continue;
        app_select_run *x = &s->runs[r];
        x->ttt = x->observed_s = NAN;
        x->final = fcol >= 0 ? sim_csv_number(&s->ix.csv, r, (size_t)fcol) : (double)NAN;
        x->stopped_at_target = strcmp(app_index_cell(&s->ix, r, reason), "target_accuracy") == 0;
        if (!isnan(s->target) && x->stopped_at_target && s->rule.kind != APP_TTT_FIRST) {
            char name[32];
            app_ttt_name(&s->rule, name, sizeof(name));
            return sim_err_set(err, SIM_EINVAL, NULL,
                               "%s: %s stopped at its target accuracy (stop_reason "
                               "target_accuracy), so its curve ends at the first crossing and "
                               "--ttt %s is not defined for it: use --ttt first, or sweep "
                               "without stop.target_accuracy",
                               s->ix.csv.path, app_index_cell(&s->ix, r, 1), name);
        }
        app_select_run_dir(s, w->sweep_dir, r, dir, sizeof(dir));
        app_curve c;
        int rc = app_curve_read(dir, &c, err);
        if (rc != SIM_OK)
            return rc;
        if (!isnan(s->target)) {
            x->ttt = app_curve_time_to_rule(&c, s->target, &s->rule);
            x->observed_s = app_curve_last_time(&c);
            x->ended_below = s->rule.kind == APP_TTT_FIRST && !isnan(x->ttt) &&
                             !x->stopped_at_target && c.n > 0 &&
                             !(c.col[APP_CURVE_ACC][c.n - 1] >= s->target);
            x->short_window = s->rule.kind == APP_TTT_MOVAVG && c.n < s->rule.k;
        }
        app_curve_fini(&c);
    }
    return SIM_OK;
}

/* ---- Grouping ---------------------------------------------------------------------------- */

static bool same_tuple(const app_select *s, size_t r, const int *cols, size_t n, const char **value)
{
    for (size_t k = 0; k < n; k++)
        if (strcmp(app_index_cell(&s->ix, r, (size_t)cols[k]), value[k]) != 0)
            return false;
    return true;
}

static const char **tuple_of(const app_select *s, size_t r, const int *cols, size_t n)
{
    const char **v = calloc(n + 1, sizeof(*v));
    for (size_t k = 0; v != NULL && k < n; k++)
        v[k] = app_index_cell(&s->ix, r, (size_t)cols[k]);
    return v;
}

/* Appends r to rows[n], the room doubled when n reaches a power of two (it grew by one row a
 * time: a cell of many runs was copied again and again). */
static int push_row(size_t **rows, size_t *n, size_t r, sim_err *err)
{
    if ((*n & (*n - 1)) == 0) { /* 0, 1, 2, 4, ...: full */
        size_t *x = realloc(*rows, (*n == 0 ? 1 : 2 * *n) * sizeof(*x));
        if (x == NULL)
            return oom(err);
        *rows = x;
    }
    (*rows)[(*n)++] = r;
    return SIM_OK;
}

/* h with the cells of row r in the n columns cols hashed in, each ended by a NUL. */
static uint64_t tuple_hash(const app_select *s, size_t r, const int *cols, size_t n, uint64_t h)
{
    for (size_t k = 0; k < n; k++)
        h = sim_fnv_byte(sim_fnv_text(h, app_index_cell(&s->ix, r, (size_t)cols[k])), 0);
    return h;
}

/* Puts each selected run into its group and, within it, its cell, in the order of their first
 * runs. Groups and cells are found through hash tables of their tuples (open addressing over
 * `cap` slots, a power of two at least twice the rows, each an index + 1, 0 for none), where a
 * walk of every group so far for each row grew as the square of the groups: `report --by KEY`
 * of a KEY with 30,000 values took 8.4 s of CPU, 1.8 s at 10,000. */
static int group_runs(app_select *s, const work *w, sim_err *err)
{
    size_t cap = 2;
    while (cap < 2 * (s->ix.csv.nrows + 1))
        cap *= 2;
    size_t *gslot = calloc(cap, sizeof(*gslot)), *cslot = calloc(cap, sizeof(*cslot));
    int rc = gslot != NULL && cslot != NULL ? SIM_OK : oom(err);
    for (size_t r = 0; r < s->ix.csv.nrows && rc == SIM_OK; r++) {
        if (!w->use[r])
            continue;
        size_t i = tuple_hash(s, r, s->by_col, s->nby, SIM_FNV_OFFSET) & (cap - 1);
        while (gslot[i] != 0 && ++s->compared > 0 &&
               !same_tuple(s, r, s->by_col, s->nby, s->groups[gslot[i] - 1].value))
            i = (i + 1) & (cap - 1);
        size_t g = gslot[i] != 0 ? gslot[i] - 1 : s->ngroups;
        if (gslot[i] == 0) {
            if ((s->groups[g].value = tuple_of(s, r, s->by_col, s->nby)) == NULL) {
                rc = oom(err);
                break;
            }
            gslot[i] = ++s->ngroups;
        }
        uint64_t h = sim_fnv_bytes(SIM_FNV_OFFSET, &g, sizeof(g));
        size_t j = tuple_hash(s, r, s->best_col, s->nbest, h) & (cap - 1);
        while (cslot[j] != 0 && ++s->compared > 0 &&
               (s->cells[cslot[j] - 1].group != g ||
                !same_tuple(s, r, s->best_col, s->nbest, s->cells[cslot[j] - 1].value)))
            j = (j + 1) & (cap - 1);
        size_t c = cslot[j] != 0 ? cslot[j] - 1 : s->ncells;
        if (cslot[j] == 0) {
            if ((s->cells[c].value = tuple_of(s, r, s->best_col, s->nbest)) == NULL) {
                rc = oom(err);
                break;
            }
            s->cells[c].group = g;
            cslot[j] = ++s->ncells;
        }
        rc = push_row(&s->cells[c].rows, &s->cells[c].n, r, err);
    }
    free(gslot);
    free(cslot);
    return rc;
}

/* The group's --by values as "k1=v1, k2=v2" into buf. */
static void group_name(const app_select *s, size_t g, char *buf, size_t size)
{
    size_t len = 0;
    buf[0] = '\0';
    for (size_t k = 0; k < s->nby && len < size; k++)
        len += (size_t)snprintf(buf + len, size - len, "%s%s=%s", k > 0 ? "," : "", s->by_key[k],
                                s->groups[g].value[k]);
}

/* Refuses group g, whose runs hold two values or more of the column col. */
static int refuse_group(const app_select *s, size_t col, size_t g, sim_err *err)
{
    const char *seen[VALUES_SHOWN] = { "" };
    size_t nseen = 0, more = 0;
    for (size_t c = 0; c < s->ncells; c++) {
        if (s->cells[c].group != g)
            continue;
        for (size_t i = 0; i < s->cells[c].n; i++) {
            const char *v = app_index_cell(&s->ix, s->cells[c].rows[i], col);
            size_t j = 0;
            while (j < nseen && strcmp(seen[j], v) != 0)
                j++;
            if (j == nseen && nseen < VALUES_SHOWN)
                seen[nseen++] = v;
            else if (j == nseen)
                more++;
        }
    }
    char name[MESSAGE_ROOM], values[MESSAGE_ROOM];
    size_t len = 0;
    group_name(s, g, name, sizeof(name));
    values[0] = '\0';
    for (size_t j = 0; j < nseen && len < sizeof(values); j++)
        len += (size_t)snprintf(values + len, sizeof(values) - len, "%s%s", j > 0 ? ", " : "",
                                seen[j]);
    const char *key = s->ix.csv.head[col];
    sim_err_set(err, SIM_EINVAL, NULL,
                "group %.40s mixes %s%zu values of %s (%.50s%s): keep it (--by %s,%s), "
                "tune it (--best-over %s) or pick one (--where %s=%s)",
                name, more > 0 ? "more than " : "", nseen, key, values, more > 0 ? ", ..." : "",
                s->ix.csv.head[s->by_col[0]], key, key, key, seen[0]);
    return sim_err_file(err, s->ix.csv.path);
}

/* Refuses a group that mixes values of a swept key neither grouped by nor tuned over: the
 * first such group, each run's value held against its group's first (a scan of every cell for
 * each group grew as the square of the groups: 4e8 steps for 20,000 points of their own groups
 * beside a key of one value). s->compared counts the runs held. */
static int refuse_pooling(app_select *s, sim_err *err)
{
    const char **first = calloc(s->ngroups + 1, sizeof(*first));
    if (first == NULL)
        return oom(err);
    int rc = SIM_OK;
    for (size_t col = 2; col < s->ix.nkeys + 2 && rc == SIM_OK; col++) {
        bool reduced = false;
        for (size_t k = 0; k < s->nby; k++)
            reduced = reduced || (size_t)s->by_col[k] == col;
        for (size_t k = 0; k < s->nbest; k++)
            reduced = reduced || (size_t)s->best_col[k] == col;
        if (reduced)
            continue;
        size_t mixed = SIZE_MAX; /* the first group in order that mixes two values */
        memset(first, 0, (s->ngroups + 1) * sizeof(*first));
        for (size_t c = 0; c < s->ncells; c++) {
            size_t g = s->cells[c].group;
            for (size_t i = 0; i < s->cells[c].n; i++, s->compared++) {
                const char *v = app_index_cell(&s->ix, s->cells[c].rows[i], col);
                if (first[g] == NULL)
                    first[g] = v;
                else if (g < mixed && strcmp(first[g], v) != 0)
                    mixed = g;
            }
        }
        if (mixed != SIZE_MAX)
            rc = refuse_group(s, col, mixed, err);
    }
    free(first);
    return rc;
}

/* ---- Tuning ------------------------------------------------------------------------------ */

static int summarize(app_select *s, const work *w, app_select_cell *c, sim_err *err)
{
    double *t = calloc(c->n + 1, sizeof(*t)), *f = calloc(c->n + 1, sizeof(*f));
    if (t == NULL || f == NULL) {
        free(t);
        free(f);
        return oom(err);
    }
    for (size_t i = 0; i < c->n; i++) {
        size_t r = c->rows[i];
        if (w->nranges > 0 && !tuning_seed(w, s, r))
            continue;
        t[c->ntune] = s->runs[r].ttt;
        f[c->ntune++] = s->runs[r].final;
    }
    c->reached = app_stats_mean_ci(t, c->ntune, &c->ttt_mean, &c->ttt_half);
    app_stats_mean_ci(f, c->ntune, &c->final_mean, &c->final_half);
    free(t);
    free(f);
    return SIM_OK;
}

/* The figure that decides between a and b: 0 the share reaching the target, 1 the mean time
 * to target, 2 the mean final accuracy. */
static int deciding(const app_select_cell *a, const app_select_cell *b)
{
    double sa = (double)a->reached / (double)a->ntune, sb = (double)b->reached / (double)b->ntune;
    if (sa != sb)
        return 0;
    return a->reached > 0 && b->reached > 0 && a->ttt_mean != b->ttt_mean ? 1 : 2;
}

/* True if cell a is a better setting than cell b. */
static bool better(const app_select_cell *a, const app_select_cell *b)
{
    switch (deciding(a, b)) {
    case 0:
        return (double)a->reached / (double)a->ntune > (double)b->reached / (double)b->ntune;
    case 1:
        return a->ttt_mean < b->ttt_mean;
    default:
        return a->final_mean > b->final_mean || (isnan(b->final_mean) && !isnan(a->final_mean));
    }
}

/* True when b's interval on the figure deciding against a overlaps a's (no interval: one
 * run, so nothing rules b out). */
static bool within(const app_select_cell *a, const app_select_cell *b)
{
    int d = deciding(a, b);
    if (d == 0)
        return false;
    double ma = d == 1 ? a->ttt_mean : a->final_mean, mb = d == 1 ? b->ttt_mean : b->final_mean;
    double ha = d == 1 ? a->ttt_half : a->final_half, hb = d == 1 ? b->ttt_half : b->final_half;
    if (isnan(ma) || isnan(mb))
        return false;
    return isnan(ha) || isnan(hb) || fabs(ma - mb) <= ha + hb;
}

/* True if the chosen value of tuned key k is the smallest or largest number among the
 * group's cells (all numbers, at least two distinct). */
static bool at_edge(const app_select *s, size_t g, size_t best, size_t k)
{
    char *end = NULL;
    double v = strtod(s->cells[best].value[k], &end), lo = v, hi = v;
    if (end == s->cells[best].value[k] || *end != '\0')
        return false;
    for (size_t c = 0; c < s->ncells; c++) {
        if (s->cells[c].group != g)
            continue;
        double x = strtod(s->cells[c].value[k], &end);
        if (end == s->cells[c].value[k] || *end != '\0')
            return false;
        lo = fmin(lo, x);
        hi = fmax(hi, x);
    }
    return lo < hi && (v == lo || v == hi);
}

static int note_close(app_select *s, size_t g, sim_err *err)
{
    app_select_group *x = &s->groups[g];
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    if (f == NULL)
        return oom(err);
    size_t n = 0;
    for (size_t c = 0; c < s->ncells; c++) {
        if (s->cells[c].group != g || c == x->best || !within(&s->cells[x->best], &s->cells[c]))
            continue;
        fputs(n++ > 0 ? " and " : "", f);
        for (size_t k = 0; k < s->nbest; k++)
            fprintf(f, "%s%s=%s", k > 0 ? "," : "", s->best_key[k], s->cells[c].value[k]);
    }
    if (fclose(f) != 0 || text == NULL) {
        free(text);
        return oom(err);
    }
    if (n > 0)
        x->close = text;
    else
        free(text);
    return SIM_OK;
}

/* The runs a group shows: its best cell's, those not tuned on. */
static int pick(app_select *s, const work *w, size_t g, FILE *log, sim_err *err)
{
    app_select_group *x = &s->groups[g];
    const app_select_cell *b = &s->cells[x->best];
    char name[MESSAGE_ROOM];
    group_name(s, g, name, sizeof(name));
    for (size_t i = 0; i < b->n; i++) {
        int rc = SIM_OK;
        if (w->nranges == 0 || !tuning_seed(w, s, b->rows[i]))
            rc = push_row(&x->rows, &x->n, b->rows[i], err);
        if (rc != SIM_OK)
            return rc;
    }
    if (x->n == 0)
        return sim_err_set(err, SIM_EINVAL, NULL,
                           "%s: the group %.300s has no run left to report once tuned on seeds "
                           "%s: its chosen setting ran only those seeds",
                           s->ix.csv.path, name, s->tune_text);
    for (size_t k = 0; k < s->nbest; k++)
        if (at_edge(s, g, x->best, k)) {
            x->edge = true;
            sim_err_warn(log,
                         "warning: %s: the best %s, %s, is at the edge of the values swept: the "
                         "best may lie beyond them",
                         name, s->best_key[k], b->value[k]);
        }
    return s->nbest > 0 ? note_close(s, g, err) : SIM_OK;
}

static int tune(app_select *s, const work *w, FILE *log, sim_err *err)
{
    int rc = SIM_OK;
    for (size_t c = 0; c < s->ncells && rc == SIM_OK; c++)
        rc = summarize(s, w, &s->cells[c], err);
    for (size_t g = 0; g < s->ngroups; g++)
        s->groups[g].best = SIZE_MAX;
    for (size_t c = 0; c < s->ncells && rc == SIM_OK; c++) {
        size_t *b = &s->groups[s->cells[c].group].best;
        if (s->cells[c].ntune == 0)
            continue;
        if (*b == SIZE_MAX || better(&s->cells[c], &s->cells[*b]))
            *b = c;
    }
    for (size_t g = 0; g < s->ngroups && rc == SIM_OK; g++) {
        if (s->groups[g].best == SIZE_MAX) {
            char name[MESSAGE_ROOM];
            group_name(s, g, name, sizeof(name));
            return sim_err_set(err, SIM_EINVAL, NULL,
                               "%s: the group %.300s has no run of the seeds tuned on (%s)",
                               s->ix.csv.path, name, s->tune_text);
        }
        rc = pick(s, w, g, log, err);
    }
    return rc;
}

/* ---- The whole ---------------------------------------------------------------------------- */

int app_select_read(app_select *s, const char *sweep_dir, const app_select_options *o, FILE *log,
                    sim_err *err)
{
    sim_err_clear(err);
    memset(s, 0, sizeof(*s));
    work w = { .o = o, .sweep_dir = sweep_dir };
    s->rule = o->rule;
    int rc = app_index_read(sweep_dir, &s->ix, err);
    if (rc == SIM_OK && s->ix.unlisted > 0) /* a name is any bytes: said escaped */
        sim_err_warn(log,
                     "warning: %s: %zu run director%s of the sweep's no row names, left out "
                     "(%s%s; from an earlier grid, or a row removed by hand? the same `hetsim "
                     "sweep` run again writes its rows again)",
                     s->ix.csv.path, s->ix.unlisted, s->ix.unlisted == 1 ? "y" : "ies",
                     s->ix.unlisted_first, s->ix.unlisted > 1 ? ", ..." : "");
    if (rc == SIM_OK)
        rc = read_options(s, &w, err);
    size_t n = s->ix.csv.nrows + 1;
    if (rc == SIM_OK && ((s->runs = calloc(n, sizeof(*s->runs))) == NULL ||
                         (s->groups = calloc(n, sizeof(*s->groups))) == NULL ||
                         (s->cells = calloc(n, sizeof(*s->cells))) == NULL))
        rc = oom(err);
    if (rc == SIM_OK)
        rc = select_rows(s, &w, err);
    s->target = o->target;
    double lo, hi; /* with --target, each run's run.json is read all the same: one missing or
                      empty is an incomplete run (plot --by --target drew without it) */
    if (rc == SIM_OK && isnan(s->target))
        rc = app_index_stop_target_of(&s->ix, sweep_dir, w.use, &s->target, err);
    else if (rc == SIM_OK)
        rc = app_index_eval_every(&s->ix, sweep_dir, w.use, &lo, &hi, err);
    if (rc == SIM_OK)
        rc = read_runs(s, &w, err);
    if (rc == SIM_OK)
        rc = group_runs(s, &w, err);
    if (rc == SIM_OK)
        rc = refuse_pooling(s, err);
    s->tuned_apart = w.nranges > 0;
    if (rc == SIM_OK)
        rc = tune(s, &w, log, err);
    free(w.use);
    if (rc != SIM_OK)
        app_select_fini(s);
    return rc;
}

void app_select_fini(app_select *s)
{
    for (size_t g = 0; s->groups != NULL && g < s->ngroups; g++) {
        free(s->groups[g].value);
        free(s->groups[g].rows);
        free(s->groups[g].close);
    }
    for (size_t c = 0; s->cells != NULL && c < s->ncells; c++) {
        free(s->cells[c].value);
        free(s->cells[c].rows);
    }
    free(s->groups);
    free(s->cells);
    free(s->runs);
    app_index_fini(&s->ix);
    memset(s, 0, sizeof(*s));
}

void app_select_run_dir(const app_select *s, const char *sweep_dir, size_t r, char *buf,
                        size_t size)
{
    snprintf(buf, size, "%s/%s", sweep_dir, app_index_cell(&s->ix, r, 1));
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* The sorted distinct seeds of rows[0..n) into out (room for n); returns their count. */
static size_t seeds_of(const app_select *s, const size_t *rows, size_t n, uint64_t *out)
{
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        const char *t = app_index_cell(&s->ix, rows[i], s->ix.nkeys + 2);
        if (parse_u64(t, t + strlen(t), &out[m]))
            m++;
    }
    qsort(out, m, sizeof(*out), cmp_u64);
    size_t d = 0;
    for (size_t i = 0; i < m; i++)
        if (d == 0 || out[i] != out[d - 1])
            out[d++] = out[i];
    return d;
}

size_t app_select_seeds(const app_select *s, char *buf, size_t size, bool *same)
{
    size_t total = 0;
    for (size_t g = 0; g < s->ngroups; g++)
        total += s->groups[g].n;
    size_t *all = calloc(total + 1, sizeof(*all));
    uint64_t *a = calloc(total + 1, sizeof(*a)), *b = calloc(total + 1, sizeof(*b));
    size_t d = 0, len = 0;
    *same = true;
    buf[0] = '\0';
    if (all != NULL && a != NULL && b != NULL) {
        for (size_t g = 0, k = 0; g < s->ngroups; g++)
            for (size_t i = 0; i < s->groups[g].n; i++)
                all[k++] = s->groups[g].rows[i];
        d = seeds_of(s, all, total, a);
        for (size_t g = 0; g < s->ngroups && *same; g++)
            *same = seeds_of(s, s->groups[g].rows, s->groups[g].n, b) == d;
        for (size_t i = 0; i < d && len < size; i++) {
            size_t j = i;
            while (j + 1 < d && a[j + 1] == a[j] + 1)
                j++;
            len += (size_t)(j > i ? snprintf(buf + len, size - len, "%s%" PRIu64 "-%" PRIu64,
                                             i > 0 ? "," : "", a[i], a[j])
                                  : snprintf(buf + len, size - len, "%s%" PRIu64, i > 0 ? "," : "",
                                             a[i]));
            i = j;
        }
    }
    free(all);
    free(a);
    free(b);
    return d;
}
