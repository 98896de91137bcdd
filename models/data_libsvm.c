/* LIBSVM/SVMlight text reader; see models/data.h.
 *
 * Two passes over the file with getline: the first checks every line and finds the example
 * count, the largest feature index and the distinct labels; the second, after the one
 * allocation, parses the same lines again into the dense rows. Lines and columns in
 * messages are 1-based; a column counts bytes.
 */
#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "models/data.h"
#include "sim/file.h"
#include "sim/fnv.h"
#include "sim/text.h"

enum {
    TOKEN_SHOWN = 24 /* characters of a bad token quoted in a message */
};

/* Where a line is being read, for messages. */
typedef struct svm_pos {
    const char *path;
    size_t line;
} svm_pos;

/* What pass 1 learns. */
typedef struct svm_scan {
    size_t n;                         /* examples */
    size_t dim;                       /* largest feature index */
    size_t nlabels;                   /* distinct labels */
    int32_t labels[DATA_MAX_CLASSES]; /* distinct labels, ascending */
    uint64_t fnv;                     /* FNV-1a 64 of the bytes read */
    uint64_t used_fnv;                /* ... of the lines up to the last example's */
} svm_scan;

/* Fills `err` with `code`, "line L, column C: " (what is known of it) and a message, and the
 * file; returns code. */
__attribute__((format(printf, 5, 6))) static int fail_at(sim_err *err, int code, const svm_pos *at,
                                                         size_t col, const char *fmt, ...)
{
    char msg[SIM_ERR_MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    sim_err_clear(err);
    if (at->line > 0 && col > 0)
        sim_err_set(err, code, NULL, "line %zu, column %zu: %s", at->line, col, msg);
    else if (at->line > 0)
        sim_err_set(err, code, NULL, "line %zu: %s", at->line, msg);
    else
        sim_err_set(err, code, NULL, "%s", msg);
    sim_err_file(err, at->path);
    return code;
}

static int is_space(char ch)
{
    return ch == ' ' || ch == '\t' || ch == '\r' || ch == '\n' || ch == '\v' || ch == '\f';
}

static size_t skip_space(const char *s, size_t len, size_t i)
{
    while (i < len && is_space(s[i]))
        i++;
    return i;
}

/* True when a token may end at i: end of line, white space or a comment. */
static int at_end(const char *s, size_t len, size_t i)
{
    return i == len || is_space(s[i]) || s[i] == '#';
}

/* Length of the token at i (up to white space or '#'), capped for quoting. */
static int token_len(const char *s, size_t len, size_t i)
{
    size_t j = i;
    while (!at_end(s, len, j) && s[j] != '\0' && j - i < TOKEN_SHOWN)
        j++;
    return (int)(j - i);
}

/* Parses a number at s[i] that must end a token; stores it and the end index. Decimal only
 * (strtod's "inf" and "nan" pass here and are refused as not finite by the callers). */
static int parse_number(const char *s, size_t len, size_t i, double *v, size_t *end)
{
    if (i >= len || is_space(s[i]) || s[i] == '\0')
        return 0;
    char *e;
    *v = strtod(s + i, &e);
    *end = (size_t)(e - s);
    for (size_t k = i; k < *end; k++)
        if (s[k] == 'x' || s[k] == 'X')
            return 0; /* strtod reads hexadecimal; LIBSVM numbers are decimal */
    return *end > i && at_end(s, len, *end);
}

/* Parses "idx:val" at s[i]. Checks the index against prev and max_features. */
static int parse_feature(const char *s, size_t len, size_t i, size_t prev, size_t max_features,
                         const svm_pos *at, size_t *idx, double *val, size_t *end, sim_err *err)
{
    size_t j = i, k = 0;
    int big = 0;
    while (j < len && s[j] >= '0' && s[j] <= '9') {
        if (k > (SIZE_MAX - 9) / 10)
            big = 1;
        else
            k = k * 10 + (size_t)(s[j] - '0');
        j++;
    }
    int tl = token_len(s, len, i);
    if (j == i)
        return fail_at(err, SIM_EINVAL, at, i + 1,
                       "expected a feature \"index:value\" with a positive integer index, got "
                       "\"%.*s\"",
                       tl, s + i);
    if (j == len || s[j] != ':')
        return fail_at(err, SIM_EINVAL, at, j + 1, "missing ':' after feature index %.*s",
                       (int)(j - i), s + i);
    if (k == 0 && !big)
        return fail_at(err, SIM_EINVAL, at, i + 1, "feature index 0: indices start at 1");
    if (big || k > max_features)
        return fail_at(err, SIM_EINVAL, at, i + 1,
                       "feature index %.*s exceeds max_features %zu (too many features)",
                       (int)(j - i), s + i, max_features);
    if (k <= prev)
        return fail_at(err, SIM_EINVAL, at, i + 1,
                       "feature index %zu does not ascend (it follows %zu)", k, prev);
    if (!parse_number(s, len, j + 1, val, end))
        return fail_at(err, SIM_EINVAL, at, j + 2, "bad value \"%.*s\" for feature %zu",
                       token_len(s, len, j + 1), s + j + 1, k);
    if (!isfinite(*val) || fabs(*val) > (double)FLT_MAX)
        return fail_at(err, SIM_EINVAL, at, j + 2,
                       "value \"%.*s\" for feature %zu is not a finite float",
                       token_len(s, len, j + 1), s + j + 1, k);
    *idx = k;
    return SIM_OK;
}

/* Parses one line into *label, the largest index *last and, when row is not NULL, the
 * values (row must hold max_features zeroed floats). Returns 1 for an example, 0 for a
 * blank or comment line, or a negative SIM_E* code. */
static int parse_line(const char *s, size_t len, const svm_pos *at, size_t max_features, float *row,
                      double *label, size_t *last, sim_err *err)
{
    size_t i = skip_space(s, len, 0), end;
    if (i == len || s[i] == '#')
        return 0;
    if (!parse_number(s, len, i, label, &end))
        return fail_at(err, SIM_EINVAL, at, i + 1, "bad label \"%.*s\"", token_len(s, len, i),
                       s + i);
    if (!(*label == floor(*label)) || *label < (double)INT32_MIN || *label > (double)INT32_MAX)
        return fail_at(err, SIM_EINVAL, at, i + 1, "label \"%.*s\" is not a 32-bit integer",
                       token_len(s, len, i), s + i);
    size_t prev = 0;
    i = skip_space(s, len, end);
    if (len - i >= 4 && strncmp(s + i, "qid:", 4) == 0) {
        while (!at_end(s, len, i))
            i++;
    }
    for (;;) {
        i = skip_space(s, len, i);
        if (i == len || s[i] == '#')
            break;
        size_t idx = 0;
        double val;
        int rc = parse_feature(s, len, i, prev, max_features, at, &idx, &val, &end, err);
        if (rc != SIM_OK)
            return rc;
        if (row != NULL)
            row[idx - 1] = (float)val;
        prev = idx;
        i = end;
    }
    *last = prev;
    return 1;
}

/* Index of `label` among the sorted distinct labels, or where it would go. */
static size_t label_slot(const svm_scan *sc, int32_t label)
{
    size_t lo = 0, hi = sc->nlabels;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (sc->labels[mid] < label)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static int add_label(svm_scan *sc, int32_t label, const svm_pos *at, sim_err *err)
{
    size_t k = label_slot(sc, label);
    if (k < sc->nlabels && sc->labels[k] == label)
        return SIM_OK;
    if (sc->nlabels == DATA_MAX_CLASSES)
        return fail_at(err, SIM_EINVAL, at, 0, "more than %u distinct labels", DATA_MAX_CLASSES);
    memmove(sc->labels + k + 1, sc->labels + k, (sc->nlabels - k) * sizeof(int32_t));
    sc->labels[k] = label;
    sc->nlabels++;
    return SIM_OK;
}

/* The text of line at->line as parse_line reads it: a UTF-8 byte-order mark that opens the
 * file is skipped (as a scenario's is); a NUL byte is refused with its column (it cut the line
 * and was read as part of a value), and a file saved as UTF-16 or UTF-32 is named so, as every text
 * file hetsim reads (it was "line 1, column 4: a NUL byte"). Returns SIM_OK or the error. */
static int line_text(const char **s, size_t *len, const svm_pos *at, sim_err *err)
{
    size_t bom = at->line == 1 ? sim_text_bom(*s, *len) : 0;
    *s += bom;
    *len -= bom;
    const char *nul = memchr(*s, '\0', *len);
    const svm_pos file = { at->path, 0 };
    if (nul != NULL && at->line == 1 && sim_text_wide(*s, *len))
        return fail_at(err, SIM_EINVAL, &file, 0, "%s", SIM_TEXT_WIDE_TEXT);
    if (nul != NULL)
        return fail_at(err, SIM_EINVAL, at, (size_t)(nul - *s) + 1, "a NUL byte");
    return SIM_OK;
}

/* Reports why getline stopped if it was not the end of the file. */
static int read_status(FILE *f, const svm_pos *at, sim_err *err)
{
    if (!ferror(f))
        return SIM_OK;
    int code = errno == ENOMEM ? SIM_ENOMEM : SIM_EIO;
    return fail_at(err, code, at, 0, "read error after this line: %s", strerror(errno));
}

/* Pass 1: checks every line (up to max_samples examples) and fills *sc. */
static int scan(FILE *f, const char *path, size_t max_features, size_t max_samples, char **line,
                size_t *cap, svm_scan *sc, sim_err *err)
{
    svm_pos at = { path, 0 };
    ssize_t len;
    double label;
    size_t last;
    sc->fnv = SIM_FNV_FILE_OFFSET;
    while ((max_samples == 0 || sc->n < max_samples) && (len = getline(line, cap, f)) != -1) {
        at.line++;
        const char *s = *line;
        size_t n = (size_t)len;
        sc->fnv = sim_fnv_bytes(sc->fnv, s, n);
        int rc = line_text(&s, &n, &at, err);
        if (rc == SIM_OK)
            rc = parse_line(s, n, &at, max_features, NULL, &label, &last, err);
        if (rc < 0)
            return rc;
        if (rc == 0)
            continue;
        rc = add_label(sc, (int32_t)label, &at, err);
        if (rc != SIM_OK)
            return rc;
        sc->dim = last > sc->dim ? last : sc->dim;
        sc->n++;
        sc->used_fnv = sc->fnv;
    }
    /* The bytes past max_samples too: the hash is the whole file's, as every read's. */
    while ((len = getline(line, cap, f)) != -1)
        sc->fnv = sim_fnv_bytes(sc->fnv, *line, (size_t)len);
    int rc = read_status(f, &at, err);
    if (rc != SIM_OK)
        return rc;
    at.line = 0;
    if (sc->n == 0)
        return fail_at(err, SIM_EINVAL, &at, 0, "no examples (empty file or only comments)");
    if (sc->dim == 0)
        return fail_at(err, SIM_EINVAL, &at, 0, "no features: no line has an index:value pair");
    return SIM_OK;
}

/* Pass 2: parses the first sc->n examples again into ds, held to pass 1's bytes. */
static int fill(FILE *f, const char *path, const svm_scan *sc, char **line, size_t *cap,
                data_set *ds, sim_err *err)
{
    svm_pos at = { path, 0 };
    size_t k = 0, last;
    double label;
    ssize_t len;
    uint64_t fnv = SIM_FNV_FILE_OFFSET;
    while (k < sc->n && (len = getline(line, cap, f)) != -1) {
        at.line++;
        const char *s = *line;
        size_t n = (size_t)len;
        fnv = sim_fnv_bytes(fnv, s, n);
        int rc = line_text(&s, &n, &at, err);
        if (rc == SIM_OK)
            rc = parse_line(s, n, &at, sc->dim, ds->x + k * sc->dim, &label, &last, err);
        if (rc < 0)
            return rc;
        if (rc == 0)
            continue;
        size_t c = label_slot(sc, (int32_t)label);
        if (c == sc->nlabels || sc->labels[c] != (int32_t)label)
            return fail_at(err, SIM_EIO, &at, 0, "file changed while being read");
        ds->y[k++] = (uint8_t)c;
    }
    int rc = read_status(f, &at, err);
    /* The same lines as pass 1's, byte for byte: an edit of a line pass 1 had read (its hash,
     * which the run's load is held to, was the old bytes') was taken in silently. */
    if (rc == SIM_OK && k < sc->n)
        rc = fail_at(err, SIM_EIO, &at, 0, "file changed while being read");
    if (rc == SIM_OK && fnv != sc->used_fnv) { /* which line, pass 2 cannot tell */
        at.line = 0;
        rc = fail_at(err, SIM_EIO, &at, 0, "file changed while being read");
    }
    return rc;
}

/* The file opened for reading, or NULL with the error. It is read twice (a first pass sizes
 * the data set): a FIFO cannot be (its second pass found nothing: "file changed while being
 * read"; one that no process writes made the open wait forever), and a device such as
 * /dev/zero never ends (getline grew one line until memory ran out). The type is the open
 * file's (sim_file_open_regular): a FIFO swapped in after a stat was waited on. */
static FILE *open_regular(const char *path, const svm_pos *at, sim_err *err)
{
    struct stat st;
    errno = 0;
    FILE *f = sim_file_open_regular(path, &st);
    if (f != NULL)
        return f;
    if (S_ISDIR(st.st_mode))
        fail_at(err, SIM_EIO, at, 0, "cannot read: Is a directory");
    else if (st.st_mode != 0)
        fail_at(err, SIM_EINVAL, at, 0,
                "not a regular file (%s): LIBSVM data is read in two passes; copy it into a "
                "file",
                sim_file_kind(st.st_mode));
    else {
        sim_err_clear(err);
        sim_err_set(err, SIM_EIO, NULL, "cannot open: %s", strerror(errno));
        sim_err_file(err, path);
    }
    return NULL;
}

int data_load_libsvm(const char *path, size_t max_features, size_t max_samples, data_set *out,
                     sim_err *err)
{
    memset(out, 0, sizeof(*out));
    svm_pos at = { path, 0 };
    if (max_features == 0)
        return fail_at(err, SIM_EINVAL, &at, 0, "max_features must be >= 1");
    data_set ds = { 0 };
    char *line = NULL;
    size_t cap = 0;
    svm_scan *sc = calloc(1, sizeof(*sc));
    if (sc == NULL)
        return fail_at(err, SIM_ENOMEM, &at, 0, "out of memory");
    int rc = SIM_OK;
    FILE *f = open_regular(path, &at, err);
    if (f == NULL) {
        rc = err->code;
        goto fail_free_scan;
    }
    rc = scan(f, path, max_features, max_samples, &line, &cap, sc, err);
    if (rc != SIM_OK)
        goto fail_close;
    sim_err_clear(err);
    rc = data_set_alloc(&ds, sc->n, sc->dim, err);
    if (rc != SIM_OK) {
        sim_err_file(err, path);
        goto fail_close;
    }
    ds.label_value = malloc(sc->nlabels * sizeof(int32_t));
    if (ds.label_value == NULL) {
        rc = fail_at(err, SIM_ENOMEM, &at, 0, "out of memory for %zu labels", sc->nlabels);
        goto fail_free_set;
    }
    memcpy(ds.label_value, sc->labels, sc->nlabels * sizeof(int32_t));
    ds.classes = (uint32_t)sc->nlabels;
    ds.file_fnv = sc->fnv;
    rewind(f);
    rc = fill(f, path, sc, &line, &cap, &ds, err);
    if (rc != SIM_OK)
        goto fail_free_set;
    free(line);
    fclose(f);
    free(sc);
    *out = ds;
    return SIM_OK;
fail_free_set:
    data_fini(&ds);
fail_close:
    free(line);
    fclose(f);
fail_free_scan:
    free(sc);
    return rc;
}
