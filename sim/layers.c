/* Layers of an iteration: shares of its time, profile CSVs and where named profiles live. */
#include "sim/layers.h"

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sim/file.h"
#include "sim/fnv.h"
#include "sim/text.h"
int sim_layers_init(sim_layers *l, size_t n, sim_err *err)
{
    sim_layers_fini(l);
    l->layer = calloc(n > 0 ? n : 1, sizeof(*l->layer));
    l->fwd_end = calloc(n > 0 ? n : 1, sizeof(*l->fwd_end));
    l->bwd_end = calloc(n > 0 ? n : 1, sizeof(*l->bwd_end));
    l->params_end = calloc(n > 0 ? n : 1, sizeof(*l->params_end));
    if (l->layer == NULL || l->fwd_end == NULL || l->bwd_end == NULL || l->params_end == NULL) {
        sim_layers_fini(l);
        return sim_err_set(err, SIM_ENOMEM, NULL, "out of memory");
    }
    for (size_t i = 0; i < n; i++)
        l->layer[i].fwd_ms = l->layer[i].bwd_ms = NAN;
    l->n = n;
    return SIM_OK;
}

void sim_layers_fini(sim_layers *l)
{
    free(l->layer);
    free(l->fwd_end);
    free(l->bwd_end);
    free(l->params_end);
    memset(l, 0, sizeof(*l));
}

/* The rows' own weights: measured times, else the FLOPs with backward twice forward. */
static void row_weights(const void *ud, size_t i, double *fwd, double *bwd)
{
    const sim_layers *l = ud;
    const sim_layer *y = &l->layer[i];
    *fwd = l->measured ? y->fwd_ms : y->fwd_flops;
    *bwd = l->measured ? y->bwd_ms : 2.0 * y->fwd_flops;
}

static void shares(sim_layers *l, sim_layers_time_fn fn, const void *ud)
{
    double fsum = 0.0, bsum = 0.0;
    bool flat = false;
    for (int pass = 0; pass < 2; pass++) {
        fsum = bsum = 0.0;
        for (size_t i = 0; i < l->n; i++) {
            double f = 1.0, b = 2.0;
            if (!flat)
                fn(ud, i, &f, &b);
            fsum += f;
            l->fwd_end[i] = fsum;
            bsum += b;
        }
        if (fsum + bsum > 0)
            break;
        flat = true;
    }
    double total = fsum + bsum, acc = fsum;
    for (size_t i = l->n; i-- > 0;) {
        double f = 1.0, b = 2.0;
        if (!flat)
            fn(ud, i, &f, &b);
        acc += b;
        l->bwd_end[i] = acc / total;
        l->fwd_end[i] /= total;
    }
    if (l->n > 0)
        l->bwd_end[0] = 1.0;
    uint64_t params = 0;
    for (size_t i = 0; i < l->n; i++)
        l->params_end[i] = params += l->layer[i].params;
}

void sim_layers_finish(sim_layers *l)
{
    l->measured = l->n > 0;
    for (size_t i = 0; i < l->n; i++)
        if (!(l->layer[i].fwd_ms >= 0) || !(l->layer[i].bwd_ms >= 0))
            l->measured = false;
    shares(l, row_weights, l);
}

void sim_layers_finish_timed(sim_layers *l, sim_layers_time_fn fn, const void *ud)
{
    shares(l, fn, ud);
}

const char *sim_layer_kind_name(int kind)
{
    static const char *const names[SIM_KIND_N] = { "other", "conv3x3",   "conv",     "matmul",
                                                   "norm",  "embedding", "depthwise" };
    return kind >= 0 && kind < SIM_KIND_N ? names[kind] : NULL;
}

double sim_layers_flops(const sim_layers *l)
{
    double s = 0.0;
    for (size_t i = 0; i < l->n; i++)
        s += l->layer[i].fwd_flops;
    return s;
}

uint64_t sim_layers_params(const sim_layers *l)
{
    uint64_t s = 0;
    for (size_t i = 0; i < l->n; i++)
        s += l->layer[i].params;
    return s;
}

uint64_t sim_layers_bytes(const sim_layers *l, uint64_t bytes, size_t i)
{
    if (i >= l->n)
        return 0;
    uint64_t total = l->params_end[l->n - 1];
    if (total == 0)
        return i == 0 ? bytes : 0;
    uint64_t before = i > 0 ? l->params_end[i - 1] : 0;
    double per = (double)bytes / (double)total;
    uint64_t lo = (uint64_t)floor((double)before * per);
    uint64_t hi = i + 1 == l->n ? bytes : (uint64_t)floor((double)l->params_end[i] * per);
    return hi - lo;
}

double sim_layers_measured_ms(const sim_layers *l)
{
    double s = 0.0;
    for (size_t i = 0; i < l->n && l->measured; i++)
        s += l->layer[i].fwd_ms + l->layer[i].bwd_ms;
    return s;
}

sim_time sim_layers_ready_offset_ns(const sim_layers *l, sim_time d_ns, size_t i)
{
    if (i == 0 || i >= l->n)
        return d_ns;
    return (sim_time)llround((double)d_ns * l->bwd_end[i]);
}

/* ---- CSV ---- */

#define LINE_BYTES 1022  /* longest line, '\n' aside */
#define MAX_TOTAL  1e300 /* a number column's total over the layers: far from overflowing */

/* Splits line (modified) at commas into at most max fields, trimming blanks; returns the
 * number of fields (max + 1 when there are more). */
static size_t split(char *line, char **f, size_t max)
{
    size_t n = 0;
    char *p = line;
    for (;;) {
        char *comma = strchr(p, ',');
        if (comma != NULL)
            *comma = '\0';
        while (*p == ' ' || *p == '\t')
            p++;
        size_t len = strlen(p);
        while (len > 0 && (p[len - 1] == ' ' || p[len - 1] == '\t' || p[len - 1] == '\r'))
            p[--len] = '\0';
        if (n == max)
            return max + 1;
        f[n++] = p;
        if (comma == NULL)
            return n;
        p = comma + 1;
    }
}

/* A decimal number of at least lo. A value below the smallest normal double is read as
 * strtod rounds it (1e-320 a subnormal, 1e-400 zero), as a trace's and a results
 * file's readers do: its ERANGE was reported as "must be a finite number >= 0". */
static bool parse_num(const char *s, double lo, double *out)
{
    char *end = NULL;
    if (!sim_text_decimal(s)) /* "0x1p3", "inf" */
        return false;
    double v = strtod(s, &end);
    if (*end != '\0' || !isfinite(v) || v < lo)
        return false;
    *out = v;
    return true;
}

enum {
    C_NAME,
    C_PARAMS,
    C_FLOPS,
    C_FWD_MS,
    C_BWD_MS,
    C_KIND,
    C_FWD_BYTES,
    C_EW_BYTES,
    NCOLS
};

static const char *const COLS[NCOLS] = { "name",          "params",           "forward_flops",
                                         "forward_ms",    "backward_ms",      "kind",
                                         "forward_bytes", "elementwise_bytes" };

/* A profile read in one pass (a file that grows or is a FIFO is read once, as it comes): where
 * the reader is and the hash of what it read, the header's columns (which of COLS each field
 * is), the rows so far and each number column's total over them. */
typedef struct profile_reader {
    FILE *fp;
    const char *file, *path;
    size_t line;              /* lines read so far */
    sim_file_lines in;        /* its lines: the bytes read so far, hashed (sim/file.h) */
    char buf[LINE_BYTES + 5]; /* a line, its '\r' and a byte-order mark (uncounted), a NUL */
    int col[NCOLS];
    size_t ncols;    /* fields of the header; 0 before it */
    sim_layer *rows; /* (n) read so far, room for cap; owned */
    size_t n, cap;
    uint64_t params;     /* total of the params column */
    double total[NCOLS]; /* totals of the other number columns */
} profile_reader;

/* Reads the next line into r->buf (without its '\n'), hashing its bytes; a UTF-8 byte-order
 * mark that opens the file is dropped. Returns 1, 0 at the end of the file, or an error. The
 * line's LINE_BYTES leave out its end ("\r\n" as "\n") and the mark: a line of 1022 bytes
 * ending in "\r\n", or after the mark, was "line longer than 1022 bytes". A file past the cap
 * of a text input is refused (endless comment lines from a FIFO were read forever). */
static int read_line(profile_reader *r, sim_err *err)
{
    size_t len = 0;
    int newline = 0;
    r->line += sim_file_lines_skip_empty(&r->in); /* blank lines: skipped by the caller */
    int rc = sim_file_lines_next(&r->in, r->buf, sizeof(r->buf), &len, &newline);
    if (rc == SIM_LINE_CAP)
        return sim_err_set(err, SIM_ESCENARIO, r->path, "%s: %s", r->file, sim_file_cap_text());
    if (rc == SIM_LINE_NUL && r->line == 0 && sim_text_wide(r->buf, len))
        return sim_err_set(err, SIM_ESCENARIO, r->path, "%s: %s", r->file, SIM_TEXT_WIDE_TEXT);
    if (rc == SIM_LINE_NUL)
        return sim_err_set(err, SIM_ESCENARIO, r->path, "%s:%zu: NUL byte", r->file, r->line + 1);
    if (!newline && ferror(r->fp)) /* a line cut by a read error, or none */
        return sim_err_set(err, SIM_EIO, r->path, "%s: cannot read: %s", r->file, strerror(errno));
    if (rc == SIM_LINE_END)
        return 0;
    size_t bom = r->line == 0 ? sim_text_bom(r->buf, len) : 0;
    size_t cr = len > 0 && r->buf[len - 1] == '\r' && newline;
    if (rc == SIM_LINE_LONG || len - bom - cr > LINE_BYTES)
        return sim_err_set(err, SIM_ESCENARIO, r->path, "%s:%zu: line longer than %d bytes",
                           r->file, r->line + 1, LINE_BYTES);
    r->line++;
    if (bom > 0)
        memmove(r->buf, r->buf + bom, len - bom + 1);
    return 1;
}

/* The header row: which column each field is, into r->col and r->ncols. */
static int read_header(profile_reader *r, char **f, size_t nf, sim_err *err)
{
    bool seen[NCOLS] = { false };
    if (nf > NCOLS || nf < 3 || strcmp(f[0], COLS[C_NAME]) != 0 ||
        strcmp(f[1], COLS[C_PARAMS]) != 0 || strcmp(f[2], COLS[C_FLOPS]) != 0)
        return sim_err_set(err, SIM_ESCENARIO, r->path,
                           "%s:%zu: header must be name,params,forward_flops, then any of "
                           "forward_ms,backward_ms,kind,forward_bytes,elementwise_bytes",
                           r->file, r->line);
    for (size_t j = 0; j < nf; j++) {
        int c = 0;
        while (c < NCOLS && strcmp(f[j], COLS[c]) != 0)
            c++;
        if (c == NCOLS || seen[c])
            return sim_err_set(err, SIM_ESCENARIO, r->path, "%s:%zu: header: %s column \"%s\"",
                               r->file, r->line, c == NCOLS ? "unknown" : "repeated", f[j]);
        seen[c] = true;
        r->col[j] = c;
    }
    if (seen[C_FWD_MS] != seen[C_BWD_MS])
        return sim_err_set(err, SIM_ESCENARIO, r->path,
                           "%s:%zu: header: forward_ms and backward_ms go together", r->file,
                           r->line);
    r->ncols = nf;
    return SIM_OK;
}

/* A number of column c into x, in range, its column's total over the rows so far within its
 * bound (params: 2^64 - 1, so that sums of parameters never wrap; the others: MAX_TOTAL, so
 * that shares and times stay finite). */
static int read_number(profile_reader *r, int c, const char *v, double *x, sim_err *err)
{
    if (!parse_num(v, 0.0, x) || (c == C_PARAMS && (*x != floor(*x) || *x > 1e15)))
        return sim_err_set(err, SIM_ESCENARIO, r->path, "%s:%zu: %s: must be %s, got \"%s\"",
                           r->file, r->line, COLS[c],
                           c == C_PARAMS ? "an integer in [0, 1e15]" : "a finite number >= 0", v);
    bool over =
        c == C_PARAMS ? (uint64_t)*x > UINT64_MAX - r->params : !(r->total[c] + *x <= MAX_TOTAL);
    if (over)
        return sim_err_set(err, SIM_ESCENARIO, r->path,
                           "%s:%zu: %s: the total over the layers exceeds %s", r->file, r->line,
                           COLS[c], c == C_PARAMS ? "2^64 - 1" : "1e300");
    if (c == C_PARAMS)
        r->params += (uint64_t)*x;
    else
        r->total[c] += *x;
    return SIM_OK;
}

/* One field of a data row into y. */
static int read_field(profile_reader *r, sim_layer *y, int c, const char *v, sim_err *err)
{
    if (c == C_NAME) {
        if (v[0] == '\0' || strlen(v) >= sizeof(y->name))
            return sim_err_set(err, SIM_ESCENARIO, r->path,
                               "%s:%zu: name: must have 1 to %zu characters", r->file, r->line,
                               sizeof(y->name) - 1);
        snprintf(y->name, sizeof(y->name), "%s", v);
        return SIM_OK;
    }
    if (c == C_KIND) {
        for (int k = 0; k < SIM_KIND_N; k++)
            if (strcmp(v, sim_layer_kind_name(k)) == 0) {
                y->kind = k;
                return SIM_OK;
            }
        return sim_err_set(err, SIM_ESCENARIO, r->path,
                           "%s:%zu: kind: must be other, conv3x3, conv, matmul, norm, "
                           "embedding or depthwise, got \"%s\"",
                           r->file, r->line, v);
    }
    double x = 0.0;
    int rc = read_number(r, c, v, &x, err);
    double *slot[NCOLS] = { [C_FLOPS] = &y->fwd_flops,
                            [C_FWD_MS] = &y->fwd_ms,
                            [C_BWD_MS] = &y->bwd_ms,
                            [C_FWD_BYTES] = &y->fwd_bytes,
                            [C_EW_BYTES] = &y->ew_bytes };
    if (rc == SIM_OK && c == C_PARAMS)
        y->params = (uint64_t)x;
    else if (rc == SIM_OK)
        *slot[c] = x;
    return rc;
}

/* The one parser of a data row (split into f): appended to r->rows, every field read into
 * it by its header column. */
static int add_row(profile_reader *r, char **f, size_t nf, sim_err *err)
{
    if (nf != r->ncols)
        return sim_err_set(err, SIM_ESCENARIO, r->path, "%s:%zu: expected %zu fields, got %zu",
                           r->file, r->line, r->ncols, nf);
    if (r->n == SIM_LAYERS_MAX)
        return sim_err_set(err, SIM_ESCENARIO, r->path, "%s:%zu: more than %d layers", r->file,
                           r->line, SIM_LAYERS_MAX);
    if (r->n == r->cap) {
        size_t cap = r->cap == 0 ? 64 : 2 * r->cap;
        cap = cap > SIM_LAYERS_MAX ? SIM_LAYERS_MAX : cap;
        sim_layer *rows = realloc(r->rows, cap * sizeof(*rows));
        if (rows == NULL)
            return sim_err_set(err, SIM_ENOMEM, NULL, "out of memory");
        r->rows = rows;
        r->cap = cap;
    }
    sim_layer *y = &r->rows[r->n];
    *y = (sim_layer){ .fwd_ms = NAN, .bwd_ms = NAN, .kind = SIM_KIND_OTHER };
    for (size_t j = 0; j < nf; j++) {
        int rc = read_field(r, y, r->col[j], f[j], err);
        if (rc != SIM_OK)
            return rc;
    }
    r->n++;
    return SIM_OK;
}

/* Reads every line of r->fp into r->rows. */
static int read_rows(profile_reader *r, sim_err *err)
{
    char *f[NCOLS + 1];
    int rc;
    while ((rc = read_line(r, err)) == 1) {
        if (r->buf[0] == '#' || strspn(r->buf, " \t\r") == strlen(r->buf))
            continue;
        size_t nf = split(r->buf, f, NCOLS);
        rc = r->ncols == 0 ? read_header(r, f, nf, err) : add_row(r, f, nf, err);
        if (rc != SIM_OK)
            return rc;
    }
    if (rc == 0 && r->n == 0)
        return sim_err_set(err, SIM_ESCENARIO, r->path, "%s: no layers", r->file);
    return rc;
}

int sim_layers_read_csv(sim_layers *l, const char *file, const char *path, sim_err *err)
{
    profile_reader *r = calloc(1, sizeof(*r)); /* its block of 64 KiB: off the stack */
    if (r == NULL)
        return sim_err_set(err, SIM_ENOMEM, NULL, "out of memory");
    r->file = file;
    r->path = path;
    r->fp = sim_file_open_text(file);
    if (r->fp == NULL) {
        int e = errno;
        free(r);
        return sim_err_set(err, SIM_ESCENARIO, path, "%s: cannot open: %s", file, strerror(e));
    }
    sim_file_lines_init(&r->in, r->fp, 1);
    int rc = read_rows(r, err);
    fclose(r->fp);
    if (rc == SIM_OK)
        rc = sim_layers_init(l, r->n, err);
    if (rc == SIM_OK) {
        memcpy(l->layer, r->rows, r->n * sizeof(*r->rows));
        l->file_fnv = r->in.fnv;
        sim_layers_finish(l);
    } else {
        sim_layers_fini(l);
    }
    free(r->rows);
    free(r);
    return rc;
}

/* ---- named profiles ---- */

/* The folder "<exe>/../share/hetsim" of the running binary, into buf; false if unknown. */
static bool exe_datadir(char *buf, size_t size)
{
    char exe[1024];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
    if (n <= 0)
        return false;
    exe[n] = '\0';
    char *slash = strrchr(exe, '/');
    if (slash == NULL)
        return false;
    *slash = '\0';
    int len = snprintf(buf, size, "%s/../share/hetsim", exe);
    return len > 0 && (size_t)len < size;
}

size_t sim_layers_profile_dirs(sim_layers_dir *dirs, size_t max)
{
    size_t n = 0;
    if (n < max && exe_datadir(dirs[n].path, sizeof(dirs[n].path)))
        n++;
#ifdef HETSIM_SOURCE_DATADIR
    if (n < max)
        snprintf(dirs[n++].path, sizeof(dirs[0].path), "%s", HETSIM_SOURCE_DATADIR);
#endif
#ifdef HETSIM_DATADIR
    if (n < max)
        snprintf(dirs[n++].path, sizeof(dirs[0].path), "%s", HETSIM_DATADIR);
#endif
    return n;
}

static bool valid_name(const char *name)
{
    if (name[0] == '\0' || name[0] == '.' || strlen(name) > 64)
        return false;
    for (const char *p = name; *p != '\0'; p++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
              *p == '_' || *p == '-' || *p == '.'))
            return false;
    return true;
}

bool sim_layers_find_profile(const char *name, char *buf, size_t size)
{
    sim_layers_dir dirs[4];
    size_t n = sim_layers_profile_dirs(dirs, 4);
    if (!valid_name(name))
        return false;
    for (size_t i = 0; i < n; i++) {
        struct stat st;
        int len = snprintf(buf, size, "%s/profiles/%s.csv", dirs[i].path, name);
        if (len > 0 && (size_t)len < size && stat(buf, &st) == 0 && S_ISREG(st.st_mode))
            return true;
    }
    return false;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

size_t sim_layers_profile_names(char *buf, size_t size)
{
    sim_layers_dir dirs[4];
    size_t nd = sim_layers_profile_dirs(dirs, 4), count = 0;
    if (size > 0)
        buf[0] = '\0';
    for (size_t d = 0; d < nd && count == 0; d++) {
        char path[sizeof(dirs[0].path) + 16];
        snprintf(path, sizeof(path), "%s/profiles", dirs[d].path);
        DIR *dir = opendir(path);
        if (dir == NULL)
            continue;
        char names[64][72];
        const char *sorted[64];
        struct dirent *e;
        while ((e = readdir(dir)) != NULL && count < 64) {
            size_t len = strlen(e->d_name);
            if (len <= 4 || len - 4 >= sizeof(names[0]) || strcmp(e->d_name + len - 4, ".csv") != 0)
                continue;
            memcpy(names[count], e->d_name, len - 4);
            names[count][len - 4] = '\0';
            if (!valid_name(names[count]))
                continue;
            sorted[count] = names[count];
            count++;
        }
        closedir(dir);
        qsort(sorted, count, sizeof(sorted[0]), cmp_str);
        size_t used = 0;
        for (size_t i = 0; i < count && size > 0; i++) {
            int k = snprintf(buf + used, size - used, "%s%s", i > 0 ? ", " : "", sorted[i]);
            if (k < 0 || (size_t)k >= size - used)
                break;
            used += (size_t)k;
        }
    }
    return count;
}
