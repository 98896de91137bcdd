/* CSV files of results read back strictly (see outputs/csv.h). */
#include "outputs/csv.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "outputs/output.h"
#include "sim/file.h"
#include "sim/text.h"

static const sim_csv_rule metrics_rules[] = {
    { "time_s", 0.0, SIM_CSV_HUGE, false, true, false, false },
    { "iterations", 0.0, SIM_CSV_HUGE, false, false, false, true },
    { "samples", 0.0, SIM_CSV_HUGE, false, false, false, true },
    { "epoch", 0.0, SIM_CSV_HUGE, true, false, false, true },
    { "train_loss", 0.0, SIM_CSV_HUGE, true, false, false, false },
    { "test_loss", 0.0, SIM_CSV_HUGE, true, false, false, false },
    { "test_accuracy", 0.0, 1.0, true, false, false, false },
    { "consensus", 0.0, SIM_CSV_HUGE, true, false, false, false },
    { "throughput_sps", 0.0, SIM_CSV_HUGE, false, false, false, false }, /* always written */
};

/* Every number of workers.csv is always written (only params_fnv may be empty, a timing-only
 * model's): an empty one was read as NaN and the shares came out wrong. */
static const sim_csv_rule workers_rules[] = {
    { "worker", 0.0, SIM_CSV_HUGE, false, true, true, false },
    { "speed", 0.0, SIM_CSV_HUGE, false, false, false, false },
    { "iterations", 0.0, SIM_CSV_HUGE, false, false, false, false },
    { "samples", 0.0, SIM_CSV_HUGE, false, false, false, false },
    { "compute_s", 0.0, SIM_CSV_HUGE, false, false, false, false },
    { "comm_s", 0.0, SIM_CSV_HUGE, false, false, false, false },
    { "wait_s", 0.0, SIM_CSV_HUGE, false, false, false, false },
    { "bytes_sent", 0.0, SIM_CSV_HUGE, false, false, false, false },
    { "bytes_received", 0.0, SIM_CSV_HUGE, false, false, false, false },
    { "down_s", 0.0, SIM_CSV_HUGE, false, false, false, false },
    { "comm_overlap_s", 0.0, SIM_CSV_HUGE, false, false, false, false },
};

const sim_csv_rules sim_csv_metrics = { metrics_rules,
                                        sizeof(metrics_rules) / sizeof(metrics_rules[0]) };
const sim_csv_rules sim_csv_workers = { workers_rules,
                                        sizeof(workers_rules) / sizeof(workers_rules[0]) };

/* What can be wrong with a record's form. */
enum form {
    FORM_OK,
    FORM_NO_EOL,      /* the file ends inside the record */
    FORM_OPEN_QUOTE,  /* a quoted field without its closing quote */
    FORM_AFTER_QUOTE, /* text after a closing quote */
    FORM_BARE_QUOTE,  /* a quote inside a bare field */
};

static const char *const form_text[] = {
    [FORM_NO_EOL] = "truncated (no end of line)",
    [FORM_OPEN_QUOTE] = "a quoted field without its closing quote",
    [FORM_AFTER_QUOTE] = "text after a closing quote",
    [FORM_BARE_QUOTE] = "a quote inside a field that is not quoted",
};

/* The line end at r (before `end`): 1 for "\n", 2 for "\r\n", 0 for none. */
static size_t eol(const char *r, const char *end)
{
    if (r < end && *r == '\n')
        return 1;
    return r + 1 < end && r[0] == '\r' && r[1] == '\n' ? 2 : 0;
}

/* Splits the record at *p (up to `end`) into fields, unquoted in place when `f` is not
 * NULL (at most `max` stored; *nf counts them all), and moves *p past its line end. *inner
 * counts the line ends inside quoted fields. */
static enum form split_record(char **p, const char *end, char **f, size_t max, size_t *nf,
                              size_t *inner)
{
    char *r = *p, *w = *p;
    size_t n = 0;
    for (;;) {
        if (f != NULL && n < max)
            f[n] = w;
        n++;
        if (r < end && *r == '"') {
            for (r++;; r++) {
                if (r == end)
                    return FORM_OPEN_QUOTE;
                if (*r == '"' && (r + 1 == end || r[1] != '"'))
                    break;
                r += *r == '"'; /* "" is a quote */
                *inner += *r == '\n';
                if (f != NULL)
                    *w = *r;
                w++;
            }
            r++;
            if (r < end && *r != ',' && eol(r, end) == 0)
                return FORM_AFTER_QUOTE;
        } else {
            for (; r < end && *r != ',' && eol(r, end) == 0; r++, w++) {
                if (*r == '"')
                    return FORM_BARE_QUOTE;
                if (f != NULL)
                    *w = *r;
            }
        }
        if (r == end)
            return FORM_NO_EOL;
        size_t skip = *r == ',' ? 1 : eol(r, end);
        bool last = *r != ',';
        if (f != NULL)
            *w = '\0'; /* may overwrite *r: read above */
        w++;
        r += skip;
        if (last)
            break;
    }
    *p = r;
    *nf = n;
    return FORM_OK;
}

/* At most 40 bytes of `s`, whole UTF-8 characters, into out[48]: a field shown in a message.
 * Its control bytes stay as they are, for sim_err_set writes them escaped ("\u0009"): shown
 * as '?', a tab or an escape sequence was no longer told apart; and a cut at 40 bytes split a
 * character (a field of euro signs made the message no UTF-8). */
static const char *shown(const char *s, char *out)
{
    size_t i = strlen(s) > 40 ? 40 : strlen(s);
    memcpy(out, s, i);
    out[i] = '\0';
    sim_text_utf8_trim(out);
    snprintf(out + strlen(out), 8, "%s", s[i] != '\0' ? "..." : "");
    return out;
}

/* True when the decimal s has a digit other than 0 before its exponent: a number that is not
 * 0 in the text, which strtod reads as 0 when it is too small for a double (1e-400). */
static bool nonzero_text(const char *s)
{
    size_t n = strcspn(s, "eE");
    return strcspn(s, "123456789") < n;
}

bool sim_csv_parse_number(const char *s, double *x)
{
    if (!sim_text_decimal(s))
        return false;
    char *end = NULL;
    double v = strtod(s, &end);
    if (end == s || *end != '\0' || !isfinite(v) || (v == 0 && nonzero_text(s)))
        return false;
    *x = v;
    return true;
}

static int check_field(const sim_csv *t, size_t r, const sim_csv_rule *rule, const char *s,
                       sim_err *err)
{
    char text[48];
    double v;
    if (s[0] == '\0')
        return rule->empty ? SIM_OK
                           : sim_err_set(err, SIM_EINVAL, NULL, "%s: line %zu: %s: empty", t->path,
                                         t->line[r], rule->name);
    if (!sim_csv_parse_number(s, &v) && sim_text_decimal(s) && nonzero_text(s) &&
        strtod(s, NULL) == 0) /* as the scenario loader refuses 2e-400 */
        return sim_err_set(err, SIM_EINVAL, NULL,
                           "%s: line %zu: %s: %s is too small for a double (read as 0)", t->path,
                           t->line[r], rule->name, shown(s, text));
    if (!sim_csv_parse_number(s, &v))
        return sim_err_set(err, SIM_EINVAL, NULL, "%s: line %zu: %s: \"%s\" is not a finite number",
                           t->path, t->line[r], rule->name, shown(s, text));
    if (v >= rule->lo && v <= rule->hi)
        return SIM_OK;
    return sim_err_set(err, SIM_EINVAL, NULL, "%s: line %zu: %s: %s is %s %g", t->path, t->line[r],
                       rule->name, shown(s, text), v < rule->lo ? "below" : "above",
                       v < rule->lo ? rule->lo : rule->hi);
}

/* Every field of the columns `rules` names, as its rule says. */
static int check_rules(const sim_csv *t, const sim_csv_rules *rules, sim_err *err)
{
    for (size_t k = 0; rules != NULL && k < rules->n; k++) {
        const sim_csv_rule *rule = &rules->rule[k];
        int c = sim_csv_column(t, rule->name);
        double before = NAN;
        for (size_t r = 0; c >= 0 && r < t->nrows; r++) {
            const char *s = sim_csv_cell(t, r, (size_t)c);
            int rc = check_field(t, r, rule, s, err);
            if (rc != SIM_OK)
                return rc;
            double v = sim_csv_number(t, r, (size_t)c);
            if (rule->increasing && !(v > before) && !isnan(before) && !isnan(v))
                return sim_err_set(err, SIM_EINVAL, NULL,
                                   "%s: line %zu: %s: %s is not above the row before's %.17g (a "
                                   "row repeated or out of order)",
                                   t->path, t->line[r], rule->name, s, before);
            if (rule->growing && v < before)
                return sim_err_set(err, SIM_EINVAL, NULL,
                                   "%s: line %zu: %s: %s is below the row before's %.17g (a "
                                   "count so far, which only grows)",
                                   t->path, t->line[r], rule->name, s, before);
            if (rule->row_index && v != (double)r)
                return sim_err_set(err, SIM_EINVAL, NULL,
                                   "%s: line %zu: %s: %s is not the row's index %zu (a row per "
                                   "worker, in order from 0)",
                                   t->path, t->line[r], rule->name, s, r);
            before = isnan(v) ? before : v;
        }
    }
    return SIM_OK;
}

/* The records after the header, from p: each of the header's field count. */
static int split_rows(sim_csv *t, char *p, const char *end, size_t line, sim_err *err)
{
    while (p < end) {
        if (eol(p, end) > 0)
            return sim_err_set(err, SIM_EINVAL, NULL, "%s: line %zu: a blank line", t->path, line);
        size_t nf = 0, inner = 0;
        enum form e = split_record(&p, end, &t->cell[t->nrows * t->ncols], t->ncols, &nf, &inner);
        if (e != FORM_OK)
            return sim_err_set(err, SIM_EINVAL, NULL, "%s: line %zu: %s", t->path, line,
                               form_text[e]);
        if (nf != t->ncols)
            return sim_err_set(err, SIM_EINVAL, NULL,
                               "%s: line %zu: %zu fields, the header has %zu", t->path, line, nf,
                               t->ncols);
        t->line[t->nrows++] = line;
        line += 1 + inner;
    }
    return SIM_OK;
}

typedef struct named {
    const char *name;
    size_t col;
} named;

static int by_name(const void *a, const void *b)
{
    const named *x = a, *y = b;
    int c = strcmp(x->name, y->name);
    return c != 0 ? c : x->col < y->col ? -1 : x->col > y->col;
}

/* Each column of the header named, and once: hetsim reads columns by name, so a second
 * column of one name was skipped (sorted names, each compared with its neighbour). */
static int check_head(const sim_csv *t, sim_err *err)
{
    for (size_t c = 0; c < t->ncols; c++)
        if (t->head[c][0] == '\0')
            return sim_err_set(err, SIM_EINVAL, NULL, "%s: line 1: column %zu has no name", t->path,
                               c + 1);
    named *order = malloc(t->ncols * sizeof(*order));
    if (order == NULL)
        return sim_err_set(err, SIM_ENOMEM, NULL, "out of memory");
    for (size_t c = 0; c < t->ncols; c++)
        order[c] = (named){ t->head[c], c };
    qsort(order, t->ncols, sizeof(*order), by_name);
    int rc = SIM_OK;
    for (size_t i = 1; i < t->ncols && rc == SIM_OK; i++)
        if (strcmp(order[i].name, order[i - 1].name) == 0)
            rc = sim_err_set(err, SIM_EINVAL, NULL,
                             "%s: line 1: column %zu (%s) named twice (also column %zu)", t->path,
                             order[i].col + 1, order[i].name, order[i - 1].col + 1);
    free(order);
    return rc;
}

/* The header, then the records. */
static int split_file(sim_csv *t, size_t len, sim_err *err)
{
    /* A byte-order mark that opens the file is no part of the header (sim/text.h). */
    size_t bom = sim_text_bom(t->text, len);
    char *p = t->text + bom, *end = t->text + len, *probe = p;
    const char *nul = memchr(t->text, '\0', len);
    if (nul != NULL && sim_text_wide(t->text, len))
        return sim_err_set(err, SIM_EINVAL, NULL, "%s: %s", t->path, SIM_TEXT_WIDE_TEXT);
    if (nul != NULL) {
        size_t line = 1;
        for (const char *q = t->text; q < nul; q++)
            line += *q == '\n';
        return sim_err_set(err, SIM_EINVAL, NULL, "%s: line %zu: a NUL byte", t->path, line);
    }
    if (len == bom)
        return sim_err_set(err, SIM_EINVAL, NULL, "%s: empty file (no header row)", t->path);
    size_t nf = 0, inner = 0;
    enum form e = split_record(&probe, end, NULL, 0, &nf, &inner); /* counts, writes nothing */
    if (e != FORM_OK)
        return sim_err_set(err, SIM_EINVAL, NULL, "%s: line 1: %s", t->path, form_text[e]);
    t->ncols = nf;
    /* A record of the header's width takes at least that many bytes (separators and its
     * line end): that bounds the rows. */
    size_t rows = (size_t)(end - probe) / t->ncols + 1;
    t->head = calloc(t->ncols, sizeof(*t->head));
    t->cell = calloc(rows * t->ncols, sizeof(*t->cell));
    t->line = calloc(rows, sizeof(*t->line));
    if (t->head == NULL || t->cell == NULL || t->line == NULL)
        return sim_err_set(err, SIM_ENOMEM, NULL, "out of memory");
    inner = 0;
    split_record(&p, end, t->head, t->ncols, &nf, &inner);
    int rc = check_head(t, err);
    return rc != SIM_OK ? rc : split_rows(t, p, end, 2 + inner, err);
}

int sim_csv_parse(sim_csv *t, char *text, size_t len, const char *path, const sim_csv_rules *rules,
                  sim_err *err)
{
    memset(t, 0, sizeof(*t));
    snprintf(t->path, sizeof(t->path), "%s", path);
    t->text = text;
    int rc = split_file(t, len, err);
    if (rc == SIM_OK)
        rc = check_rules(t, rules, err);
    if (rc != SIM_OK) {
        char keep[sizeof(t->path)];
        memcpy(keep, t->path, sizeof(keep));
        sim_csv_fini(t);
        memcpy(t->path, keep, sizeof(keep));
    }
    return rc;
}

int sim_csv_read(sim_csv *t, const char *path, const sim_csv_rules *rules, sim_err *err)
{
    size_t len = 0;
    struct stat st;
    memset(t, 0, sizeof(*t));
    snprintf(t->path, sizeof(t->path), "%s", path);
    /* A results file is one hetsim wrote: a FIFO would wait for a writer, a device (/dev/zero)
     * never end, and a symbolic link (hetsim writes none) read another run's file as this
     * one's (a point's metrics.csv linked to another point's: its run counted twice). */
    if (lstat(path, &st) == 0 && !S_ISREG(st.st_mode))
        return sim_err_set(err, SIM_EINVAL, NULL,
                           "%s: not a regular file (%s): results files are the files hetsim "
                           "writes",
                           path, sim_file_kind(st.st_mode));
    errno = 0;
    char *text = sim_output_read_sized(path, &len); /* a regular file: to its size */
    if (text != NULL)
        return sim_csv_parse(t, text, len, path, rules, err);
    int e = errno != 0 ? errno : EIO;
    t->open_errno = e;
    if (e == ENOMEM)
        return sim_err_set(err, SIM_ENOMEM, NULL, "out of memory");
    if (e == EFBIG)
        return sim_err_set(err, SIM_EINVAL, NULL, "%s: %s", path, sim_file_cap_text());
    return sim_err_set(err, SIM_EIO, NULL, "cannot read %s: %s", path, strerror(e));
}

void sim_csv_fini(sim_csv *t)
{
    free(t->text);
    free(t->head);
    free(t->cell);
    free(t->line);
    memset(t, 0, sizeof(*t));
}

int sim_csv_column(const sim_csv *t, const char *name)
{
    for (size_t c = 0; c < t->ncols; c++)
        if (strcmp(t->head[c], name) == 0)
            return (int)c;
    return -1;
}

int sim_csv_require(const sim_csv *t, const char *const *names, size_t n, size_t *col, sim_err *err)
{
    for (size_t k = 0; k < n; k++) {
        int c = sim_csv_column(t, names[k]);
        if (c < 0)
            return sim_err_set(err, SIM_EINVAL, NULL, "%s: no column %s", t->path, names[k]);
        col[k] = (size_t)c;
    }
    return SIM_OK;
}

const char *sim_csv_cell(const sim_csv *t, size_t r, size_t c)
{
    return t->cell[r * t->ncols + c];
}

double sim_csv_number(const sim_csv *t, size_t r, size_t c)
{
    double x = NAN;
    return sim_csv_parse_number(sim_csv_cell(t, r, c), &x) ? x : (double)NAN;
}
