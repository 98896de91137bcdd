/* Straggler rules of a scenario ($.stragglers) and the trace files they name.
 *
 * Every kind but trace selects workers by an id list, by a count drawn from the straggler
 * stream (one gsl_rng for all rules, used in file order, so the choice depends on the seed
 * only), or, with neither, all workers. Drawn workers are written back into the tree as the
 * rule's "workers" beside its "count", kept as written, so the resolved scenario names them
 * and says they were drawn (a golden compares a counted rule's count, not the workers each
 * seed drew: app/check_golden.c). A rule with both loads when its workers are those its count
 * draws, so the resolved scenario loads again to the same rules.
 */
#include "scenario/scenario_stragglers.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>

#include "scenario/scenario.h"
#include "scenario/scenario_read.h"
#include "sim/cfg.h"
#include "sim/err.h"
#include "sim/file.h"
#include "sim/fnv.h"
#include "sim/rng.h"
#include "sim/text.h"

#define MAX_SELECTED (UINT64_C(1) << 26) /* workers selected over all rules (256 MiB of ids) */
#define MAX_TRACE_S  1e9                 /* SIM_SCENARIO_MAX_NS in seconds */

static const char *const kinds[] = { "fixed", "random",  "window", "link",
                                     "trace", "failure", "dropout" };

/* A trace file read: its identity and the rule that holds its points (rule + 1; 0: a free
 * slot). A rule naming a file read before shares its points. */
typedef struct trace_read {
    dev_t dev;
    ino_t ino;
    size_t rule;
} trace_read;

/* State shared by the rules of one scenario. */
typedef struct rules {
    sim_scenario *sc;
    sim_cfg *root;
    unsigned char *seen;  /* (workers) zero between rules: duplicate detection */
    uint32_t *all;        /* (workers) the ids 0..workers-1 for gsl_ran_choose; lazily */
    gsl_rng *r;           /* the straggler stream, made at the first count; lazily */
    uint64_t total;       /* workers selected so far over all rules */
    trace_read *read;     /* (nread_cap) the trace files read, by device and inode; lazily */
    size_t nread_cap;     /* a power of two past twice the rules: open addressing */
    uint64_t trace_bytes; /* sim_scenario_trace_bytes of the trace rules so far */
} rules;

/* An error about a trace file: err.file is the trace, err.path the rule's "file" key. */
__attribute__((format(printf, 5, 6))) static int
trace_fail(sim_err *err, int code, const char *file, const char *path, const char *fmt, ...)
{
    char msg[SIM_ERR_MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    sim_err_set(err, code, path, "%s", msg);
    if (err != NULL)
        snprintf(err->file, sizeof(err->file), "%s", file);
    return code;
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

/* Writes the drawn workers of rule s into the tree as its "workers" (its "count" stays). */
static int record_draw(sim_cfg *s, const sim_straggler *st, sim_err *err)
{
    size_t size = 16 + 12 * st->nworkers, len = 0;
    char *text = malloc(size);
    if (text == NULL)
        return sim_err_set(err, SIM_ENOMEM, NULL, "out of memory");
    len += (size_t)snprintf(text, size, "[");
    for (size_t k = 0; k < st->nworkers; k++)
        len += (size_t)snprintf(text + len, size - len, "%s%u", k > 0 ? "," : "", st->workers[k]);
    snprintf(text + len, size - len, "]");
    int rc = sim_cfg_set_json(s, "workers", text, err);
    free(text);
    return rc;
}

/* Reads the listed ids: in range, distinct; stored ascending. */
static int read_ids(rules *rs, sim_cfg *s, sim_straggler *st, sim_err *err)
{
    char path[512];
    int rc = 0;
    size_t i = 0;
    for (; i < st->nworkers; i++) {
        double id = 0.0;
        rc = sim_cfg_at_double(s, "workers", i, 0.0, (double)rs->sc->workers - 1.0, true, &id, err);
        if (rc == 0 && rs->seen[(uint32_t)id] != 0) {
            snprintf(path, sizeof(path), "%s.workers[%zu]", sim_cfg_path(s), i);
            rc = sim_err_set(err, SIM_ESCENARIO, path, "duplicate worker %u", (uint32_t)id);
        }
        if (rc != 0)
            break;
        st->workers[i] = (uint32_t)id;
        rs->seen[st->workers[i]] = 1;
    }
    for (size_t k = 0; k < i; k++)
        rs->seen[st->workers[k]] = 0;
    if (rc == 0)
        qsort(st->workers, st->nworkers, sizeof(*st->workers), cmp_u32);
    return rc;
}

/* Draws st->nworkers distinct workers for rule s from the straggler stream into st->workers
 * (ascending). */
static int draw(rules *rs, sim_cfg *s, sim_straggler *st, sim_err *err)
{
    uint32_t workers = rs->sc->workers;
    if (rs->all == NULL && (rs->all = calloc(workers, sizeof(*rs->all))) != NULL)
        for (uint32_t w = 0; w < workers; w++)
            rs->all[w] = w;
    if (rs->r == NULL && rs->all != NULL)
        rs->r = sim_rng_create(rs->sc->stream_seeds[SIM_STREAM_STRAGGLER]);
    if (rs->all == NULL || rs->r == NULL)
        return sim_err_set(err, SIM_ENOMEM, NULL, "out of memory");
    /* gsl_ran_choose keeps the order of `all`, so the ids come out ascending. */
    if (gsl_ran_choose(rs->r, st->workers, st->nworkers, rs->all, workers, sizeof(*rs->all)) != 0)
        return sim_err_set(err, SIM_ENUMERIC, sim_cfg_path(s), "gsl_ran_choose failed");
    return 0;
}

/* A rule with both "count" and "workers" (a resolved scenario's, run.json's): its listed
 * workers (read, ascending in st->workers) must be those the count draws, which then
 * replace them; other ones are refused (the rule says the workers were drawn from the seed, and
 * a golden's seeds are compared without them). */
static int drawn_as_listed(rules *rs, sim_cfg *s, sim_straggler *st, sim_err *err)
{
    char path[512];
    uint32_t *listed = malloc(st->nworkers * sizeof(*listed));
    if (listed == NULL)
        return sim_err_set(err, SIM_ENOMEM, NULL, "out of memory");
    memcpy(listed, st->workers, st->nworkers * sizeof(*listed));
    int rc = draw(rs, s, st, err);
    size_t i = 0;
    while (rc == 0 && i < st->nworkers && listed[i] == st->workers[i])
        i++;
    if (rc == 0 && i < st->nworkers) {
        snprintf(path, sizeof(path), "%s.workers", sim_cfg_path(s));
        rc = sim_err_set(err, SIM_ESCENARIO, path,
                         "lists worker %u where the count draws worker %u from seed %" PRIu64
                         ": give workers or count, not both (a run.json's scenario holds both, "
                         "the workers its seed drew)",
                         listed[i], st->workers[i], rs->sc->seed);
    }
    free(listed);
    return rc;
}

/* "workers": [ids] or "count": k or neither (all workers); both when the ids are those the
 * count draws (drawn_as_listed). */
static int select_workers(rules *rs, sim_cfg *s, sim_straggler *st, sim_err *err)
{
    char path[512];
    uint32_t workers = rs->sc->workers;
    bool listed = sim_cfg_has(s, "workers");
    size_t n = 0;
    int64_t count = 0;
    int rc = sim_cfg_array_len(s, "workers", &n, err);
    if (rc == 0 && !sim_cfg_is_null(s, "count"))
        rc = sim_cfg_int(s, "count", 1, workers, &count, err);
    if (rc != 0)
        return rc;
    if (listed && count > 0 && n != (size_t)count) {
        snprintf(path, sizeof(path), "%s.count", sim_cfg_path(s));
        return sim_err_set(err, SIM_ESCENARIO, path,
                           "draws %" PRId64
                           " workers, but workers lists %zu: give workers or count, "
                           "not both (a run.json's scenario holds both, the workers its seed drew)",
                           count, n);
    }
    if (listed && n == 0) {
        snprintf(path, sizeof(path), "%s.workers", sim_cfg_path(s));
        return sim_err_set(err, SIM_ESCENARIO, path, "must not be empty");
    }
    size_t k = listed ? n : count > 0 ? (size_t)count : workers;
    if (k > MAX_SELECTED - rs->total)
        return sim_err_set(err, SIM_ESCENARIO, sim_cfg_path(s),
                           "selects too many workers: at most %llu over all rules",
                           (unsigned long long)MAX_SELECTED);
    rs->total += k;
    if ((st->workers = calloc(k, sizeof(*st->workers))) == NULL)
        return sim_err_set(err, SIM_ENOMEM, NULL, "out of memory");
    st->nworkers = k;
    if (listed && (rc = read_ids(rs, s, st, err)) != 0)
        return rc;
    if (count == 0 && !listed)
        for (uint32_t w = 0; w < workers; w++)
            st->workers[w] = w;
    if (count == 0)
        return 0;
    rc = listed ? drawn_as_listed(rs, s, st, err) : draw(rs, s, st, err);
    return rc != 0 ? rc : record_draw(s, st, err);
}

/* Splits a CSV line into at most 3 trimmed fields; returns how many it had. */
static size_t split_fields(char *line, char **field)
{
    size_t n = 0;
    for (char *p = line;; p++) {
        char *end = strchr(p, ',');
        if (end != NULL)
            *end = '\0';
        while (*p == ' ' || *p == '\t')
            p++;
        size_t len = strlen(p);
        while (len > 0 && (p[len - 1] == ' ' || p[len - 1] == '\t' || p[len - 1] == '\r' ||
                           p[len - 1] == '\n'))
            p[--len] = '\0';
        if (n < 3)
            field[n] = p;
        n++;
        if (end == NULL)
            return n;
        p = end;
    }
}

/* A whole field as a finite decimal number (not "0x1p3": sim_text_decimal). */
static bool parse_number(const char *text, double *out)
{
    char *end = NULL;
    if (!sim_text_decimal(text))
        return false;
    double v = strtod(text, &end);
    if (end == text || *end != '\0' || !isfinite(v))
        return false;
    *out = v;
    return true;
}

/* A field as messages show it: numbers as written, anything else quoted. */
static const char *show(const char *text, char *buf, size_t size)
{
    double v = 0.0;
    snprintf(buf, size, parse_number(text, &v) ? "%.40s" : "\"%.40s\"", text);
    return buf;
}

/* Parses one row into *pt; fills err (message "line N: ...") on a bad field. */
static int parse_row(char **f, size_t line, uint32_t workers, sim_trace_point *pt, const char *file,
                     const char *path, sim_err *err)
{
    char got[64];
    double t = 0.0, w = 0.0, slowdown = 0.0;
    if (!parse_number(f[0], &t) || t < 0.0)
        return trace_fail(err, SIM_ESCENARIO, file, path,
                          "line %zu: time_s must be a number >= 0, got %s", line,
                          show(f[0], got, sizeof(got)));
    if (t > MAX_TRACE_S)
        return trace_fail(err, SIM_ESCENARIO, file, path,
                          "line %zu: time_s must be at most %.15g, got %s", line, MAX_TRACE_S,
                          show(f[0], got, sizeof(got)));
    if (!parse_number(f[1], &w) || w < 0.0 || w > (double)workers - 1.0 || floor(w) != w)
        return trace_fail(err, SIM_ESCENARIO, file, path,
                          "line %zu: worker must be an integer in [0, %u], got %s", line,
                          workers - 1, show(f[1], got, sizeof(got)));
    if (!parse_number(f[2], &slowdown) || slowdown < 1.0)
        return trace_fail(err, SIM_ESCENARIO, file, path,
                          "line %zu: slowdown must be a number >= 1, got %s", line,
                          show(f[2], got, sizeof(got)));
    pt->time_ns = (sim_time)llround(t * 1e9);
    pt->worker = (uint32_t)w;
    pt->slowdown = slowdown;
    return 0;
}

typedef struct point_key {
    sim_time time_ns;
    size_t index;
} point_key;

static int cmp_point_key(const void *a, const void *b)
{
    const point_key *x = a, *y = b;
    if (x->time_ns != y->time_ns)
        return x->time_ns < y->time_ns ? -1 : 1;
    return x->index < y->index ? -1 : x->index > y->index;
}

/* Sorts the points by time, keeping the file order of equal times. */
static int sort_points(sim_straggler *st)
{
    size_t n = st->ntrace;
    point_key *keys = calloc(n, sizeof(*keys));
    sim_trace_point *sorted = calloc(n, sizeof(*sorted));
    if (keys == NULL || sorted == NULL) {
        free(keys);
        free(sorted);
        return SIM_ENOMEM;
    }
    for (size_t i = 0; i < n; i++)
        keys[i] = (point_key){ st->trace[i].time_ns, i };
    qsort(keys, n, sizeof(*keys), cmp_point_key);
    for (size_t i = 0; i < n; i++)
        sorted[i] = st->trace[keys[i].index];
    free(keys);
    free(st->trace);
    st->trace = sorted;
    return 0;
}

/* The longest line of a trace: three numbers and their separators. */
#define TRACE_LINE_BYTES 1024
/* Its room: the line, its '\r' and a byte-order mark (neither counted), a NUL. */
#define TRACE_LINE_ROOM  (TRACE_LINE_BYTES + 5)

/* Reads line `lineno` of a trace into buf (TRACE_LINE_ROOM bytes, without its end): 1, 0 at the
 * end of the file (or a read error: ferror), or an error naming the line for a NUL byte (which
 * cut the row silently; /dev/zero was read forever) or a line too long. A UTF-8 byte-order mark
 * that opens the file is dropped, as a scenario's and a profile's are. TRACE_LINE_BYTES leave
 * out the line's end ("\r\n" as "\n") and the mark: a line of 1024 bytes ending in "\r\n", or
 * after the mark, was "longer than 1024 bytes". `in` counts the file's bytes: past the cap of
 * a text input (sim/file.h) the file is refused (blank lines from a FIFO were read forever). */
static int read_line(sim_file_lines *in, char *buf, size_t lineno, const char *file,
                     const char *path, sim_err *err)
{
    size_t len = 0;
    int newline = 0;
    int rc = sim_file_lines_next(in, buf, TRACE_LINE_ROOM, &len, &newline);
    if (rc == SIM_LINE_CAP)
        return trace_fail(err, SIM_ESCENARIO, file, path, "%s", sim_file_cap_text());
    if (rc == SIM_LINE_NUL && lineno == 1 && sim_text_wide(buf, len))
        return trace_fail(err, SIM_ESCENARIO, file, path, "%s", SIM_TEXT_WIDE_TEXT);
    if (rc == SIM_LINE_NUL)
        return trace_fail(err, SIM_ESCENARIO, file, path, "line %zu: a NUL byte", lineno);
    if (rc == SIM_LINE_END)
        return 0;
    size_t bom = lineno == 1 ? sim_text_bom(buf, len) : 0;
    size_t cr = len > 0 && buf[len - 1] == '\r' && newline;
    if (rc == SIM_LINE_LONG || len - bom - cr > TRACE_LINE_BYTES)
        return trace_fail(err, SIM_ESCENARIO, file, path, "line %zu: longer than %d bytes", lineno,
                          TRACE_LINE_BYTES);
    if (bom > 0)
        memmove(buf, buf + bom, len - bom + 1);
    return 1;
}

/* Reads the rows of an open trace file into st->trace. */
static int read_points(FILE *f, uint32_t workers, sim_straggler *st, const char *file,
                       const char *path, sim_err *err)
{
    char line[TRACE_LINE_ROOM], *field[3];
    size_t cap = 0, lineno = 0;
    bool first = true;
    sim_file_lines *in = malloc(sizeof(*in)); /* its block of 64 KiB: off the stack */
    if (in == NULL)
        return sim_err_set(err, SIM_ENOMEM, NULL, "out of memory");
    sim_file_lines_init(in, f, 0);
    int rc = 0;
    while (rc == 0) {
        lineno += sim_file_lines_skip_empty(in); /* a run of blank lines at once */
        if ((rc = read_line(in, line, ++lineno, file, path, err)) != 1)
            break;
        rc = 0;
        size_t n = split_fields(line, field);
        if (n == 1 && field[0][0] == '\0')
            continue; /* a blank line */
        if (first && n == 3 && strcmp(field[0], "time_s") == 0 && strcmp(field[1], "worker") == 0 &&
            strcmp(field[2], "slowdown") == 0) {
            first = false;
            continue;
        }
        first = false;
        if (n != 3) {
            rc = trace_fail(err, SIM_ESCENARIO, file, path,
                            "line %zu: expected 3 fields (time_s,worker,slowdown), got %zu", lineno,
                            n);
            break;
        }
        if (st->ntrace == SIM_TRACE_MAX_POINTS) {
            rc = trace_fail(err, SIM_ESCENARIO, file, path,
                            "line %zu: more than %d points, the limit of a trace", lineno,
                            SIM_TRACE_MAX_POINTS);
            break;
        }
        if (st->ntrace == cap) {
            size_t bigger = cap == 0 ? 64 : 2 * cap;
            sim_trace_point *p =
                bigger <= SIZE_MAX / sizeof(*p) ? realloc(st->trace, bigger * sizeof(*p)) : NULL;
            if (p == NULL) {
                rc = sim_err_set(err, SIM_ENOMEM, NULL, "out of memory");
                break;
            }
            st->trace = p;
            cap = bigger;
        }
        rc = parse_row(field, lineno, workers, &st->trace[st->ntrace], file, path, err);
        if (rc == 0)
            st->ntrace++;
    }
    int saved = errno;
    free(in);
    if (rc == 0 && ferror(f))
        rc = trace_fail(err, SIM_EIO, file, path, "cannot read: %s", strerror(saved));
    if (rc == 0 && st->ntrace == 0)
        rc = trace_fail(err, SIM_ESCENARIO, file, path,
                        "no trace points (expected rows of time_s,worker,slowdown)");
    if (rc == 0 && sort_points(st) != 0)
        rc = sim_err_set(err, SIM_ENOMEM, NULL, "out of memory");
    return rc;
}

/* The slot of the file of stat `fs` in rs->read: the rule that read it, or the free slot it
 * takes (NULL when the table cannot be made). */
static trace_read *find_read(rules *rs, const struct stat *fs)
{
    if (rs->read == NULL) {
        size_t cap = 16;
        while (cap < 2 * rs->sc->nstragglers)
            cap *= 2;
        if ((rs->read = calloc(cap, sizeof(*rs->read))) == NULL)
            return NULL;
        rs->nread_cap = cap;
    }
    uint64_t h = sim_fnv_bytes(SIM_FNV_OFFSET, &fs->st_dev, sizeof(fs->st_dev));
    h = sim_fnv_bytes(h, &fs->st_ino, sizeof(fs->st_ino));
    for (size_t i = h & (rs->nread_cap - 1);; i = (i + 1) & (rs->nread_cap - 1)) {
        trace_read *t = &rs->read[i];
        if (t->rule == 0 || (t->dev == fs->st_dev && t->ino == fs->st_ino))
            return t;
    }
}

/* The points of the open trace `f`: those of an earlier rule that read the same file, shared,
 * or read now. */
static int trace_points(rules *rs, FILE *f, sim_straggler *st, const char *file, const char *path,
                        sim_err *err)
{
    struct stat fs;
    trace_read *t = fstat(fileno(f), &fs) == 0 ? find_read(rs, &fs) : NULL;
    if (t != NULL && t->rule != 0) {
        const sim_straggler *first = &rs->sc->stragglers[t->rule - 1];
        st->trace = first->trace;
        st->ntrace = first->ntrace;
        st->trace_shared = true;
        return SIM_OK;
    }
    int rc = read_points(f, rs->sc->workers, st, file, path, err);
    if (rc == SIM_OK && t != NULL)
        *t = (trace_read){ fs.st_dev, fs.st_ino, (size_t)(st - rs->sc->stragglers) + 1 };
    return rc;
}

/* The memory guard's limit: 80% of this machine's memory (runtime/run.c's). */
static uint64_t memory_limit(void)
{
    long pages = sysconf(_SC_PHYS_PAGES), size = sysconf(_SC_PAGE_SIZE);
    return pages <= 0 || size <= 0 ? UINT64_MAX : (uint64_t)pages * (uint64_t)size / 10 * 8;
}

/* Counts the rule's points against the memory guard's limit before another rule loads: 1,000
 * rules naming 1M-point files asked about 24 GB before the guard ran, after the load. */
static int count_points(rules *rs, const sim_straggler *st, const char *path, sim_err *err)
{
    uint64_t limit = memory_limit();
    rs->trace_bytes += sim_scenario_trace_bytes(st, rs->sc->workers);
    if (rs->trace_bytes <= limit)
        return SIM_OK;
    double need = (double)rs->trace_bytes / 1073741824.0, most = (double)limit / 1073741824.0;
    int d = sim_text_decimals_apart(need, most);
    return sim_err_set(err, SIM_ESCENARIO, path,
                       "the trace rules up to this one need about %.*f GiB for their points "
                       "(each rule's copied for the run), more than 80%% of this machine's "
                       "memory (%.*f GiB): name fewer or shorter traces",
                       d, need, d, most);
}

/* "file": a CSV path relative to the scenario file's directory unless absolute. */
static int read_trace(rules *rs, sim_cfg *s, sim_straggler *st, sim_err *err)
{
    char name[1024] = "", path[512];
    int rc = sim_cfg_require(s, "file", err);
    if (rc != 0 || (rc = sim_cfg_string(s, "file", name, sizeof(name), err)) != 0)
        return rc;
    snprintf(path, sizeof(path), "%s.file", sim_cfg_path(s));
    const char *scenario = sim_cfg_file(rs->root); /* not truncated like sc->file */
    const char *slash = strrchr(scenario, '/');
    size_t dir = name[0] != '/' && slash != NULL ? (size_t)(slash - scenario) + 1 : 0;
    size_t len = strlen(name);
    char *file = malloc(dir + len + 1);
    if (file == NULL)
        return sim_err_set(err, SIM_ENOMEM, NULL, "out of memory");
    memcpy(file, scenario, dir);
    memcpy(file + dir, name, len + 1);
    FILE *f = sim_file_open_text(file);
    if (f == NULL) {
        rc = trace_fail(err, SIM_EIO, file, path, "cannot open: %s", strerror(errno));
    } else {
        rc = trace_points(rs, f, st, file, path, err);
        fclose(f);
        if (rc == 0)
            rc = count_points(rs, st, path, err);
        if (rc == 0)
            rc = sim_scenario_add_input(rs->sc, file, err);
        if (rc == 0)
            st->file = rs->sc->inputs[rs->sc->ninputs - 1];
    }
    free(file);
    return rc;
}

/* from_s and to_s of window (both required) and link (0 and forever by default). */
static int read_interval(sim_cfg *s, bool required, sim_straggler *st, sim_err *err)
{
    double from = required ? (double)NAN : 0.0, to = NAN;
    int rc = required ? sim_cfg_require(s, "from_s", err) : 0;
    if (rc != 0 ||
        (rc = sim_scenario_read_time(s, "from_s", 0.0, false, 1e9, &from, &st->from_ns, err)) !=
            0 ||
        (rc = required ? sim_cfg_require(s, "to_s", err) : 0) != 0)
        return rc;
    if (!required && sim_cfg_is_null(s, "to_s"))
        return 0; /* forever */
    if ((rc = sim_scenario_read_time(s, "to_s", from, true, 1e9, &to, &st->to_ns, err)) != 0)
        return rc;
    if (isnan(to)) /* link without an end: record it as null */
        return sim_cfg_set_json(s, "to_s", "null", err);
    return 0;
}

static int read_slowdown(sim_cfg *s, sim_straggler *st, sim_err *err)
{
    int rc = sim_cfg_require(s, "slowdown", err);
    return rc != 0 ? rc : sim_cfg_double(s, "slowdown", 1.0, INFINITY, &st->slowdown, err);
}

/* at_s (required) and recover_s (absent or null: down for good, recorded as null). */
static int read_failure(sim_cfg *s, sim_straggler *st, sim_err *err)
{
    double at_s = NAN, recover_s = NAN;
    int rc = sim_cfg_require(s, "at_s", err);
    if (rc != 0 ||
        (rc = sim_scenario_read_time(s, "at_s", 0.0, false, 1e9, &at_s, &st->at_ns, err)) != 0 ||
        sim_cfg_is_null(s, "recover_s"))
        return rc;
    rc = sim_scenario_read_time(s, "recover_s", at_s, true, 1e9, &recover_s, &st->recover_ns, err);
    if (rc == 0 && isnan(recover_s))
        rc = sim_cfg_set_json(s, "recover_s", "null", err);
    return rc;
}

/* A rule: kind, workers and the kind's own keys. */
static int read_rule(rules *rs, sim_cfg *s, sim_straggler *st, sim_err *err)
{
    int kind = -1;
    double v = 0.0;
    *st = (sim_straggler){ .slowdown = 1.0,
                           .to_ns = SIM_TIME_NEVER,
                           .bandwidth_factor = 1.0,
                           .at_ns = SIM_TIME_NEVER,
                           .recover_ns = SIM_TIME_NEVER };
    int rc = sim_cfg_require(s, "kind", err);
    if (rc != 0 || (rc = sim_cfg_choice(s, "kind", kinds, 7, &kind, err)) != 0)
        return rc;
    st->kind = (sim_straggler_kind)kind;
    if (kind != SIM_STRAG_TRACE && (rc = select_workers(rs, s, st, err)) != 0)
        return rc;
    switch (st->kind) {
    case SIM_STRAG_FIXED:
        rc = read_slowdown(s, st, err);
        break;
    case SIM_STRAG_RANDOM:
        if ((rc = sim_cfg_require(s, "probability", err)) == 0 &&
            (rc = sim_cfg_double(s, "probability", 0.0, 1.0, &st->probability, err)) == 0)
            rc = read_slowdown(s, st, err);
        break;
    case SIM_STRAG_WINDOW:
        if ((rc = read_interval(s, true, st, err)) == 0)
            rc = read_slowdown(s, st, err);
        break;
    case SIM_STRAG_LINK:
        if ((rc = read_interval(s, false, st, err)) != 0 ||
            (rc = sim_scenario_read_time(s, "extra_latency_ms", 0.0, false, 1e6, &v,
                                         &st->extra_latency_ns, err)) != 0 ||
            (rc = sim_cfg_double(s, "bandwidth_factor", nextafter(0.0, 1.0), 1.0,
                                 &st->bandwidth_factor, err)) != 0)
            break;
        if (st->extra_latency_ns == 0 && st->bandwidth_factor == 1.0)
            rc = sim_err_set(err, SIM_ESCENARIO, sim_cfg_path(s),
                             "must set extra_latency_ms > 0 or bandwidth_factor < 1");
        break;
    case SIM_STRAG_TRACE:
        rc = read_trace(rs, s, st, err);
        break;
    case SIM_STRAG_FAILURE:
        rc = read_failure(s, st, err);
        break;
    case SIM_STRAG_DROPOUT:
        if ((rc = sim_cfg_require(s, "probability", err)) == 0)
            rc = sim_cfg_double(s, "probability", 0.0, 1.0, &st->probability, err);
        break;
    }
    return rc != 0 ? rc : sim_cfg_check_unused(s, err);
}

int sim_scenario_read_stragglers(sim_scenario *sc, sim_cfg *root, sim_err *err)
{
    rules rs = { .sc = sc, .root = root };
    size_t n = 0;
    int rc = sim_cfg_array_len(root, "stragglers", &n, err);
    if (rc != 0 || n == 0)
        return rc;
    sc->stragglers = calloc(n, sizeof(*sc->stragglers));
    rs.seen = calloc(sc->workers, 1);
    if (sc->stragglers == NULL || rs.seen == NULL) {
        free(rs.seen);
        return sim_err_set(err, SIM_ENOMEM, NULL, "out of memory");
    }
    sc->nstragglers = n;
    for (size_t i = 0; i < n && rc == 0; i++) {
        sim_cfg *s = NULL;
        if ((rc = sim_cfg_at(root, "stragglers", i, &s, err)) == 0)
            rc = read_rule(&rs, s, &sc->stragglers[i], err);
    }
    free(rs.seen);
    free(rs.all);
    free(rs.read);
    gsl_rng_free(rs.r);
    return rc;
}
