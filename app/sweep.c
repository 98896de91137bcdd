/* Sweeps: loading, validation, naming, local parallel runs, index.csv (see sweep.h). */
#include "app/sweep.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "protocols/registry.h"
#include "runtime/run.h"
#include "sim/cfg.h"
#include "sim/output.h"
#include "sim/rundir.h"
#include "sim/scenario.h"

#define NAME_MAX_ 200 /* a run directory's name, bytes */
/* Grid paths: a point's name has "seed=S" (6 bytes at least) and 3 bytes at least ("p=,")
 * for each, so no sweep of more could be named. */
#define MAX_PATHS ((NAME_MAX_ - 6) / 3)
#define PATH_TEXT 1024
#define MAX_SEED  9007199254740991.0 /* 2^53 - 1, as the scenario's $.seed */

/* One grid entry: a `--set` path and its values as JSON text. Entries of one axis (a plain
 * entry, or the paths of "zip") have the same number of values and are adjacent in cols[]. */
typedef struct column {
    char *path;    /* "protocol.name"; owned */
    char **values; /* (nvalues) JSON text; owned */
    size_t nvalues;
    size_t axis;    /* the axis it belongs to */
    bool zipped;    /* under $.grid.zip */
    sim_cfg *from;  /* the grid or zip object it is read from, while loading; borrowed */
    size_t max_len; /* the longest of its values, bytes */
} column;

/* A point's `--set` assignments are made from the columns when needed, not kept. */
typedef struct point {
    char *name;    /* run directory under the sweep's directory; owned */
    uint64_t hash; /* the resolved scenario's hash, as run.json records it */
} point;

struct app_sweep {
    char file[PATH_TEXT]; /* the sweep file */
    char base[PATH_TEXT]; /* the base scenario, relative to the working directory */
    char dir[PATH_TEXT];  /* output directory */
    app_sweep_options opt;
    size_t max_points; /* opt.max_points, or APP_SWEEP_MAX_POINTS */
    char *base_text;   /* the base scenario's bytes, read once; owned */
    size_t base_len;
    column *cols; /* (ncols) */
    size_t ncols;
    size_t *axis_len; /* (naxes) */
    size_t naxes;
    uint64_t *seeds; /* (nseeds) */
    size_t nseeds;
    size_t set_size; /* bytes that hold any point's assignments, NULs included */
    point *points;   /* (npoints) */
    size_t npoints;
    sim_rundir_lock *lock; /* the output directory's, once taken (app_sweep_open_dir) */
};

/* What one point's assignments are made in: value indices, pointers and text. */
typedef struct scratch {
    size_t *vi;        /* (ncols + 1) value index of each column */
    const char **sets; /* (ncols + 1) "path=value", then "seed=S" */
    char *text;        /* (set_size) */
} scratch;

static int oom(sim_err *err)
{
    return sim_err_set(err, SIM_ENOMEM, NULL, "out of memory");
}

/* "a/b" into out[size]; a path too long for it is cut (sizes are checked at loading). */
static void join(char *out, size_t size, const char *a, const char *b)
{
    if (snprintf(out, size, "%s/%s", a, b) < 0)
        out[0] = '\0';
}

/* A JSON value as plain text: strings lose their quotes. */
static void plain_value(const char *json, char *out, size_t size)
{
    size_t len = strlen(json);
    if (len >= 2 && json[0] == '"' && json[len - 1] == '"')
        snprintf(out, size, "%.*s", (int)(len - 2), json + 1);
    else
        snprintf(out, size, "%s", json);
}

/* ---- Points ----------------------------------------------------------------------------- */

/* The grid values of point k: vi[c] is the value index of column c; returns the seed. The
 * seed varies fastest, then the last axis. */
static uint64_t decompose(const app_sweep *sw, size_t k, size_t *vi)
{
    uint64_t seed = sw->seeds[k % sw->nseeds];
    k /= sw->nseeds;
    size_t c = sw->ncols;
    for (size_t a = sw->naxes; a-- > 0;) {
        size_t i = k % sw->axis_len[a];
        k /= sw->axis_len[a];
        while (c > 0 && sw->cols[c - 1].axis == a)
            vi[--c] = i;
    }
    return seed;
}

static int scratch_init(const app_sweep *sw, scratch *s, sim_err *err)
{
    s->vi = calloc(sw->ncols + 1, sizeof(*s->vi));
    s->sets = calloc(sw->ncols + 1, sizeof(*s->sets));
    s->text = malloc(sw->set_size);
    return s->vi == NULL || s->sets == NULL || s->text == NULL ? oom(err) : 0;
}

static void scratch_fini(scratch *s)
{
    free(s->vi);
    free(s->sets);
    free(s->text);
}

/* The assignments of the values s->vi into s: the grid's (ncols), then "seed=S" when
 * `seeded`; returns how many. */
static size_t assign(const app_sweep *sw, scratch *s, bool seeded, uint64_t seed)
{
    size_t len = 0;
    for (size_t c = 0; c < sw->ncols; c++) {
        s->sets[c] = s->text + len;
        len += (size_t)snprintf(s->text + len, sw->set_size - len, "%s=%s", sw->cols[c].path,
                                sw->cols[c].values[s->vi[c]]) +
               1;
    }
    s->sets[sw->ncols] = s->text + len;
    snprintf(s->text + len, sw->set_size - len, "seed=%" PRIu64, seed);
    return sw->ncols + seeded;
}

/* Point k's assignments into s: the grid's, then its seed; returns how many. */
static size_t point_sets(const app_sweep *sw, size_t k, scratch *s)
{
    uint64_t seed = decompose(sw, k, s->vi);
    return assign(sw, s, true, seed);
}

/* Point k's run directory name, from its assignments (strings unquoted, then characters
 * other than [A-Za-z0-9._+-=,] replaced by '_'). */
static int make_name(app_sweep *sw, size_t k, scratch *s, sim_err *err)
{
    char name[NAME_MAX_ + 64], plain[NAME_MAX_ + 2];
    size_t n = point_sets(sw, k, s), len = 0;
    for (size_t i = 0; i < n && len <= NAME_MAX_; i++) {
        const char *eq = strchr(s->sets[i], '=');
        plain_value(eq + 1, plain, sizeof(plain));
        len +=
            (size_t)snprintf(name + len, len < sizeof(name) ? sizeof(name) - len : 0, "%s%.*s=%s",
                             i > 0 ? "," : "", (int)(eq - s->sets[i]), s->sets[i], plain);
    }
    if (len > NAME_MAX_)
        return sim_err_set(err, SIM_ESCENARIO, "$.grid",
                           "point %zu's directory name is longer than %d bytes", k, NAME_MAX_);
    for (char *q = name; *q != '\0'; q++)
        if (!((*q >= 'a' && *q <= 'z') || (*q >= 'A' && *q <= 'Z') || (*q >= '0' && *q <= '9') ||
              strchr("._+-=,", *q) != NULL))
            *q = '_';
    if ((sw->points[k].name = strdup(name)) == NULL)
        return oom(err);
    return 0;
}

/* ---- Repeats: one pass over a hash table --------------------------------------------- */

typedef uint64_t (*key_hash_fn)(const void *keys, size_t i);
typedef bool (*key_same_fn)(const void *keys, size_t i, size_t j);

/* The first key i (of n) equal to an earlier key j, with *earlier = j; n if none. Expected
 * time linear in n: an open-addressing table of a power of two >= 2n slots. SIZE_MAX when
 * out of memory. */
static size_t first_repeat(const void *keys, size_t n, key_hash_fn hash, key_same_fn same,
                           size_t *earlier)
{
    size_t cap = 16;
    while (cap < 2 * n)
        cap *= 2;
    size_t *slot = calloc(cap, sizeof(*slot)); /* key index + 1, or 0 */
    if (slot == NULL)
        return SIZE_MAX;
    size_t i = 0;
    for (; i < n; i++) {
        size_t at = (size_t)hash(keys, i) & (cap - 1);
        while (slot[at] != 0 && !same(keys, slot[at] - 1, i))
            at = (at + 1) & (cap - 1);
        if (slot[at] != 0) {
            *earlier = slot[at] - 1;
            break;
        }
        slot[at] = i + 1;
    }
    free(slot);
    return i;
}

static uint64_t mix64(uint64_t x) /* SplitMix64's finalizer */
{
    x = (x ^ (x >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    x = (x ^ (x >> 27)) * UINT64_C(0x94d049bb133111eb);
    return x ^ (x >> 31);
}

static uint64_t seed_hash(const void *keys, size_t i)
{
    return mix64(((const uint64_t *)keys)[i]);
}

static bool seed_same(const void *keys, size_t i, size_t j)
{
    return ((const uint64_t *)keys)[i] == ((const uint64_t *)keys)[j];
}

static uint64_t name_hash(const void *keys, size_t i)
{
    uint64_t h = UINT64_C(0xcbf29ce484222325); /* FNV-1a */
    for (const char *c = ((const point *)keys)[i].name; *c != '\0'; c++)
        h = (h ^ (unsigned char)*c) * UINT64_C(0x100000001b3);
    return mix64(h);
}

static bool name_same(const void *keys, size_t i, size_t j)
{
    return strcmp(((const point *)keys)[i].name, ((const point *)keys)[j].name) == 0;
}

/* ---- Loading -------------------------------------------------------------------------- */

/* Adds grid entry `key` of `c` (the grid or its zip) with its length, not yet its values. */
static int add_column(app_sweep *sw, sim_cfg *c, const char *key, size_t axis, bool zipped,
                      size_t *len, sim_err *err)
{
    size_t n = 0;
    int rc = sim_cfg_array_len(c, key, &n, err);
    if (rc != 0)
        return rc;
    char path[PATH_TEXT];
    snprintf(path, sizeof(path), "%s.%s", sim_cfg_path(c), key);
    if (n == 0)
        return sim_err_set(err, SIM_ESCENARIO, path, "must be a non-empty list of values");
    if (strcmp(key, "seed") == 0 || strcmp(key, "$.seed") == 0)
        return sim_err_set(err, SIM_ESCENARIO, path, "seeds are given by $.seeds");
    if (strchr(key, '=') != NULL)
        return sim_err_set(err, SIM_ESCENARIO, path, "a path cannot contain '='");
    if (*len != 0 && n != *len)
        return sim_err_set(err, SIM_ESCENARIO, path,
                           "has %zu values but the other zipped paths have %zu", n, *len);
    if (sw->ncols == MAX_PATHS)
        return sim_err_set(err, SIM_ESCENARIO, path,
                           "more than %d grid paths (a run directory's name holds no more)",
                           MAX_PATHS);
    *len = n;
    for (size_t i = 0; i < sw->ncols; i++)
        if (strcmp(sw->cols[i].path, key) == 0)
            return sim_err_set(err, SIM_ESCENARIO, path, "path given twice");
    column *cols = realloc(sw->cols, (sw->ncols + 1) * sizeof(*cols));
    if (cols == NULL)
        return oom(err);
    sw->cols = cols;
    cols[sw->ncols] =
        (column){ .path = strdup(key), .nvalues = n, .axis = axis, .zipped = zipped, .from = c };
    if (cols[sw->ncols++].path == NULL)
        return oom(err);
    return 0;
}

static int add_axis(app_sweep *sw, size_t len, sim_err *err)
{
    size_t *a = realloc(sw->axis_len, (sw->naxes + 1) * sizeof(*a));
    if (a == NULL)
        return oom(err);
    sw->axis_len = a;
    a[sw->naxes++] = len;
    return 0;
}

/* The grid's paths and axes, without their values. */
static int read_grid(app_sweep *sw, sim_cfg *grid, sim_err *err)
{
    int rc = 0;
    for (size_t i = 0; grid != NULL && i < sim_cfg_nkeys(grid) && rc == 0; i++) {
        const char *key = sim_cfg_key(grid, i);
        size_t len = 0;
        if (strcmp(key, "zip") != 0) {
            rc = add_column(sw, grid, key, sw->naxes, false, &len, err);
            if (rc == 0)
                rc = add_axis(sw, len, err);
            continue;
        }
        sim_cfg *zip = NULL;
        if ((rc = sim_cfg_child(grid, "zip", &zip, err)) != 0)
            return rc;
        if (zip == NULL || sim_cfg_nkeys(zip) == 0)
            return sim_err_set(err, SIM_ESCENARIO, "$.grid.zip",
                               "must be an object of paths to value lists");
        for (size_t j = 0; j < sim_cfg_nkeys(zip) && rc == 0; j++)
            rc = add_column(sw, zip, sim_cfg_key(zip, j), sw->naxes, true, &len, err);
        if (rc == 0)
            rc = add_axis(sw, len, err);
    }
    return rc;
}

/* The grid's values as JSON text; the sizes of the assignments. */
static int read_values(app_sweep *sw, sim_err *err)
{
    sw->set_size = 32; /* "seed=" and 20 digits */
    for (size_t c = 0; c < sw->ncols; c++) {
        column *col = &sw->cols[c];
        if ((col->values = calloc(col->nvalues, sizeof(char *))) == NULL)
            return oom(err);
        for (size_t i = 0; i < col->nvalues; i++) {
            int rc = sim_cfg_at_json(col->from, col->path, i, &col->values[i], err);
            if (rc != 0)
                return rc;
            size_t len = strlen(col->values[i]);
            col->max_len = len > col->max_len ? len : col->max_len;
        }
        sw->set_size += strlen(col->path) + col->max_len + 2;
    }
    return 0;
}

/* How many seeds $.seeds gives (a count, or a list's length; 1 when absent or null). */
static int count_seeds(app_sweep *sw, sim_cfg *root, bool *listed, sim_err *err)
{
    int64_t count = 1;
    size_t n = 0;
    *listed = false;
    sw->nseeds = 1;
    if (!sim_cfg_has(root, "seeds") || sim_cfg_is_null(root, "seeds"))
        return 0;
    if (sim_cfg_int(root, "seeds", 1, (int64_t)MAX_SEED, &count, NULL) == 0) {
        sw->nseeds = (size_t)count;
        return 0;
    }
    if (sim_cfg_array_len(root, "seeds", &n, err) != 0)
        return sim_err_set(err, SIM_ESCENARIO, "$.seeds",
                           "must be a count in [1, %zu] or a non-empty list of seeds",
                           sw->max_points);
    if (n == 0)
        return sim_err_set(err, SIM_ESCENARIO, "$.seeds", "must be a non-empty list");
    *listed = true;
    sw->nseeds = n;
    return 0;
}

/* Refuses a sweep of more than max_points points before any of them is made. */
/* A count as a whole number while a double holds it exactly (below 2^53), else "about 1e+20". */
static const char *count_text(double v, char *buf, size_t size)
{
    if (v < 9007199254740992.0)
        snprintf(buf, size, "%" PRIu64, (uint64_t)v);
    else
        snprintf(buf, size, "about %.3g", v);
    return buf;
}

static int check_count(app_sweep *sw, sim_err *err)
{
    double grid = 1.0;
    for (size_t a = 0; a < sw->naxes; a++)
        grid *= (double)sw->axis_len[a];
    double total = grid * (double)sw->nseeds;
    if (total <= (double)sw->max_points) {
        sw->npoints = (size_t)total;
        return 0;
    }
    /* The seeds are at fault when they alone are too many, else the grid. */
    char t[32], g[32];
    const char *path = sw->nseeds > sw->max_points ? "$.seeds" : "$.grid";
    if (sw->ncols == 0)
        return sim_err_set(err, SIM_ESCENARIO, path,
                           "%s points, more than the limit of %zu points a sweep",
                           count_text(total, t, sizeof(t)), sw->max_points);
    return sim_err_set(err, SIM_ESCENARIO, path,
                       "%s points (%s of the grid times %zu seeds), more than the limit of %zu "
                       "points a sweep",
                       count_text(total, t, sizeof(t)), count_text(grid, g, sizeof(g)), sw->nseeds,
                       sw->max_points);
}

/* The seeds: the listed ones (distinct), or the base seed and the next ones. */
static int read_seeds(app_sweep *sw, sim_cfg *root, bool listed, uint64_t base_seed, sim_err *err)
{
    if ((sw->seeds = calloc(sw->nseeds, sizeof(*sw->seeds))) == NULL)
        return oom(err);
    for (size_t i = 0; i < sw->nseeds; i++) {
        double s = (double)(base_seed + i);
        int rc = listed ? sim_cfg_at_double(root, "seeds", i, 0, MAX_SEED, true, &s, err) : 0;
        if (rc != 0)
            return rc;
        sw->seeds[i] = listed ? (uint64_t)s : base_seed + i;
    }
    size_t j = 0, i = listed ? first_repeat(sw->seeds, sw->nseeds, seed_hash, seed_same, &j) : 0;
    if (i == SIZE_MAX)
        return oom(err);
    if (listed && i < sw->nseeds) {
        char path[64];
        snprintf(path, sizeof(path), "$.seeds[%zu]", i);
        return sim_err_set(err, SIM_ESCENARIO, path, "seed %" PRIu64 " given twice (also at [%zu])",
                           sw->seeds[i], j);
    }
    return 0;
}

/* How an error's path relates to a grid entry's `--set` path. */
enum fault {
    FAULT_NONE,
    FAULT_VALUE, /* at the entry's path or below it: the entry's value */
    FAULT_PATH   /* the override's own "--set PATH" (it could not be applied), or a key above
                  * the entry's path that the override made ("workload.x.y" adds the unknown
                  * key $.workload.x): the entry, whatever its value */
};

static enum fault fault_of(const char *error_path, const char *entry)
{
    static const char set[] = "--set ";
    if (strncmp(error_path, set, sizeof(set) - 1) == 0) {
        /* The override's label is cut at 400 bytes. */
        const char *p = error_path + sizeof(set) - 1;
        size_t n = strlen(p);
        return strcmp(p, entry) == 0 || (n >= 400 && strncmp(p, entry, n) == 0) ? FAULT_PATH
                                                                                : FAULT_NONE;
    }
    if (strncmp(error_path, "$.", 2) != 0)
        return FAULT_NONE;
    const char *r = error_path + 2, *q = entry + (strncmp(entry, "$.", 2) == 0 ? 2 : 0);
    size_t n = strlen(q), m = strlen(r);
    if (strncmp(r, q, n) == 0 && (r[n] == '\0' || r[n] == '.' || r[n] == '['))
        return FAULT_VALUE;
    if (m < n && strncmp(r, q, m) == 0 && (q[m] == '.' || q[m] == '['))
        return FAULT_PATH;
    return FAULT_NONE;
}

/* The base with the assignments sets[0..nsets), checked as `hetsim validate` does when
 * `check` (else only loaded): the scenario, or NULL with `e` filled. */
static sim_scenario *try_load(const app_sweep *sw, const char *const *sets, size_t nsets,
                              bool check, sim_err *e)
{
    sim_err_clear(e);
    sim_scenario *sc = sim_scenario_parse(sw->base_text, sw->base_len, sw->base, sets, nsets, e);
    const proto_ops *ops = sc != NULL && check ? proto_lookup(sc, e) : NULL;
    if (sc != NULL && (!check || (ops != NULL && sim_run_check(sc, ops, e) == SIM_OK)))
        return sc;
    sim_scenario_destroy(sc);
    return NULL;
}

/* The sweep path at fault, as "$.grid.<path>" (or its value vi[c]), "$.seeds" or "$.base",
 * for assignment i of a point (the grid's ncols, then the seed's), or the base (i = SIZE_MAX). */
static void fault_path(const app_sweep *sw, size_t i, enum fault f, const size_t *vi, char *out,
                       size_t size)
{
    if (i == SIZE_MAX) {
        snprintf(out, size, "$.base");
    } else if (i == sw->ncols) {
        snprintf(out, size, "$.seeds");
    } else {
        /* Control characters of a path (a key "a\n") written as JSON escapes. */
        const column *col = &sw->cols[i];
        size_t len = (size_t)snprintf(out, size, "$.grid%s.", col->zipped ? ".zip" : "");
        for (const char *c = col->path; *c != '\0' && len < size; c++)
            len += (size_t)snprintf(out + len, size - len,
                                    (unsigned char)*c < 0x20 || *c == 0x7f ? "\\u%04x" : "%c",
                                    (unsigned char)*c);
        if (f == FAULT_VALUE && len < size)
            snprintf(out + len, size - len, "[%zu]", vi[i]);
    }
}

/* Which sweep path the error `error_path` of the base with sets[0..nsets) (a point's, or
 * the grid's first values) is about: the grid entry it names, or its value (fault_of); the
 * seeds for $.seed once the point's seed is set; else the first assignment whose addition
 * makes the base fail (the base itself when it fails alone): an override that names a key
 * the base does not have, or one that breaks a rule of the base ($.stragglers[0].workers
 * beyond the grid's workers). */
static void blame(const app_sweep *sw, const char *const *sets, size_t nsets, const size_t *vi,
                  bool check, const char *error_path, char *out, size_t size)
{
    for (size_t c = 0; c < sw->ncols; c++) {
        enum fault f = fault_of(error_path, sw->cols[c].path);
        if (f != FAULT_NONE) {
            fault_path(sw, c, f, vi, out, size);
            return;
        }
    }
    bool seed = strcmp(error_path, "$.seed") == 0 || strcmp(error_path, "--set seed") == 0;
    if (seed && nsets > sw->ncols) {
        fault_path(sw, sw->ncols, FAULT_VALUE, vi, out, size);
        return;
    }
    size_t first = SIZE_MAX;
    sim_err e;
    for (size_t n = 0; n < nsets; n++) {
        sim_scenario *sc = try_load(sw, sets, n, check, &e);
        sim_scenario_destroy(sc);
        if (sc == NULL)
            break;
        first = n; /* the base with sets[0..n] may fail: sets[n] is the next suspect */
    }
    fault_path(sw, first, FAULT_VALUE, vi, out, size);
}

/* The base scenario with `sets`; on error, `err` names the sweep path to blame and says
 * `what` before the scenario's own message. */
static sim_scenario *load_point(const app_sweep *sw, const char *const *sets, size_t nsets,
                                const size_t *vi, bool check, const char *what, sim_err *err)
{
    sim_err e;
    sim_scenario *sc = try_load(sw, sets, nsets, check, &e);
    if (sc != NULL)
        return sc;
    if (e.code == SIM_ENOMEM) {
        oom(err);
        return NULL;
    }
    char inner[1024], path[PATH_TEXT];
    sim_err_format(&e, inner, sizeof(inner));
    blame(sw, sets, nsets, vi, check, e.path, path, sizeof(path));
    sim_err_set(err, SIM_ESCENARIO, path, "%s: %s", what, inner);
    return NULL;
}

/* The seed of the base scenario with the first point's grid overrides. */
static int base_seed(app_sweep *sw, uint64_t *seed, sim_err *err)
{
    scratch s;
    int rc = scratch_init(sw, &s, err);
    if (rc == 0) {
        /* s.vi is zero: the first value of every column. */
        assign(sw, &s, false, 0);
        sim_scenario *sc =
            load_point(sw, s.sets, sw->ncols, s.vi, false, "the first values of the grid", err);
        if (sc == NULL)
            rc = err != NULL ? err->code : SIM_ESCENARIO;
        else
            *seed = sc->seed;
        sim_scenario_destroy(sc);
    }
    scratch_fini(&s);
    return rc;
}

/* Reads the base scenario's bytes (once, for every point); refuses the sweep file itself. */
static int read_base(app_sweep *sw, sim_err *err)
{
    struct stat a, b;
    if (stat(sw->file, &a) == 0 && stat(sw->base, &b) == 0 && a.st_dev == b.st_dev &&
        a.st_ino == b.st_ino)
        return sim_err_set(err, SIM_ESCENARIO, "$.base",
                           "is this sweep file; it must name a scenario");
    errno = 0;
    if ((sw->base_text = sim_output_read(sw->base, &sw->base_len)) == NULL && errno == ENOENT)
        return sim_err_set(err, SIM_ESCENARIO, "$.base",
                           "no file %s (the base is a path relative to the sweep file's folder)",
                           sw->base);
    if (sw->base_text == NULL)
        return sim_err_set(err, errno == ENOMEM ? SIM_ENOMEM : SIM_ESCENARIO, "$.base",
                           "cannot read %s: %s", sw->base, strerror(errno != 0 ? errno : EIO));
    return 0;
}

static int read_sweep(app_sweep *sw, sim_cfg *root, sim_err *err)
{
    char base[PATH_TEXT], stem[256];
    sim_cfg *grid = NULL, *output = NULL;
    bool listed = false;
    int rc;
    if ((rc = sim_cfg_require(root, "base", err)) != 0 ||
        (rc = sim_cfg_string(root, "base", base, sizeof(base), err)) != 0 ||
        (rc = sim_cfg_child(root, "grid", &grid, err)) != 0 ||
        (rc = sim_cfg_child(root, "output", &output, err)) != 0)
        return rc;
    const char *slash = strrchr(sw->file, '/');
    if (base[0] == '/' || slash == NULL)
        snprintf(sw->base, sizeof(sw->base), "%s", base);
    else if (snprintf(sw->base, sizeof(sw->base), "%.*s/%s", (int)(slash - sw->file), sw->file,
                      base) >= (int)sizeof(sw->base))
        return sim_err_set(err, SIM_ESCENARIO, "$.base", "path too long");
    const char *b = slash != NULL ? slash + 1 : sw->file;
    size_t len = strlen(b);
    len = len > 5 && strcmp(b + len - 5, ".json") == 0 ? len - 5 : len;
    snprintf(stem, sizeof(stem), "%.*s", (int)len, b);
    snprintf(sw->dir, sizeof(sw->dir), "out/%s", stem);
    if (output != NULL &&
        ((rc = sim_cfg_string(output, "dir", sw->dir, sizeof(sw->dir), err)) != 0 ||
         (rc = sim_cfg_check_unused(output, err)) != 0))
        return rc;
    if (sw->opt.out_dir != NULL)
        snprintf(sw->dir, sizeof(sw->dir), "%s", sw->opt.out_dir);
    uint64_t seed = 0;
    if ((rc = read_grid(sw, grid, err)) != 0 || (rc = count_seeds(sw, root, &listed, err)) != 0 ||
        (rc = sim_cfg_check_unused(root, err)) != 0 || (rc = check_count(sw, err)) != 0 ||
        (rc = read_values(sw, err)) != 0 || (rc = read_base(sw, err)) != 0 ||
        (rc = base_seed(sw, &seed, err)) != 0 ||
        (rc = read_seeds(sw, root, listed, seed, err)) != 0)
        return rc;
    return 0;
}

/* Point k validated as `hetsim validate` would, with its scenario hash. */
static int validate_point(app_sweep *sw, size_t k, scratch *s, sim_err *err)
{
    point *p = &sw->points[k];
    size_t n = point_sets(sw, k, s);
    char what[NAME_MAX_ + 64];
    snprintf(what, sizeof(what), "point %zu (%s)", k, p->name);
    sim_scenario *sc = load_point(sw, s->sets, n, s->vi, true, what, err);
    if (sc == NULL)
        return err != NULL ? err->code : SIM_ESCENARIO;
    p->hash = sc->hash;
    sim_scenario_destroy(sc);
    return 0;
}

static int make_points(app_sweep *sw, sim_err *err)
{
    scratch s;
    sw->points = calloc(sw->npoints, sizeof(*sw->points));
    int rc = scratch_init(sw, &s, err);
    if (rc == 0 && sw->points == NULL)
        rc = oom(err);
    for (size_t k = 0; k < sw->npoints && rc == 0; k++)
        rc = make_name(sw, k, &s, err);
    size_t j = 0, i = rc == 0 ? first_repeat(sw->points, sw->npoints, name_hash, name_same, &j) : 0;
    if (rc == 0 && i == SIZE_MAX)
        rc = oom(err);
    else if (rc == 0 && i < sw->npoints)
        rc = sim_err_set(err, SIM_ESCENARIO, "$.grid",
                         "points %zu and %zu share the run directory \"%s\" (repeated values?)", j,
                         i, sw->points[i].name);
    for (size_t k = 0; k < sw->npoints && rc == 0; k++)
        rc = validate_point(sw, k, &s, err);
    scratch_fini(&s);
    return rc;
}

app_sweep *app_sweep_load(const char *file, const app_sweep_options *opt, sim_err *err)
{
    sim_err_clear(err);
    app_sweep *sw = calloc(1, sizeof(*sw));
    if (sw == NULL) {
        oom(err);
        return NULL;
    }
    snprintf(sw->file, sizeof(sw->file), "%s", file);
    sw->opt = *opt;
    sw->max_points = opt->max_points > 0 && opt->max_points < APP_SWEEP_MAX_POINTS
                         ? opt->max_points
                         : APP_SWEEP_MAX_POINTS;
    size_t len = 0;
    errno = 0;
    char *text = sim_output_read(file, &len);
    if (text == NULL) {
        sim_err_set(err, SIM_EIO, NULL, "cannot read the sweep file: %s",
                    strerror(errno != 0 ? errno : EIO));
        goto fail;
    }
    sim_cfg *root = sim_cfg_parse(text, len, file, err);
    free(text);
    int rc = root != NULL ? read_sweep(sw, root, err) : -1;
    sim_cfg_destroy(root);
    if (rc != 0 || make_points(sw, err) != 0)
        goto fail;
    return sw;
fail:
    sim_err_file(err, file);
    app_sweep_destroy(sw);
    return NULL;
}

void app_sweep_destroy(app_sweep *sw)
{
    if (sw == NULL)
        return;
    for (size_t c = 0; c < sw->ncols; c++) {
        for (size_t i = 0; i < sw->cols[c].nvalues && sw->cols[c].values != NULL; i++)
            free(sw->cols[c].values[i]);
        free(sw->cols[c].values);
        free(sw->cols[c].path);
    }
    for (size_t k = 0; k < sw->npoints && sw->points != NULL; k++)
        free(sw->points[k].name);
    free(sw->points);
    free(sw->cols);
    free(sw->axis_len);
    free(sw->seeds);
    free(sw->base_text);
    sim_rundir_unlock(sw->lock);
    free(sw);
}

size_t app_sweep_size(const app_sweep *sw)
{
    return sw->npoints;
}

const char *app_sweep_dir(const app_sweep *sw)
{
    return sw->dir;
}

int app_sweep_list(const app_sweep *sw, FILE *f, sim_err *err)
{
    scratch s;
    int rc = scratch_init(sw, &s, err);
    for (size_t k = 0; k < sw->npoints && rc == 0; k++) {
        size_t n = point_sets(sw, k, &s);
        fprintf(f, "%zu\t%s/%s\t", k, sw->dir, sw->points[k].name);
        for (size_t i = 0; i < n; i++)
            fprintf(f, "%s--set %s", i > 0 ? " " : "", s.sets[i]);
        fputc('\n', f);
    }
    scratch_fini(&s);
    return rc;
}

/* ---- Running ---------------------------------------------------------------------------- */

static sim_cfg *read_json(const char *dir, const char *name)
{
    char path[PATH_TEXT];
    join(path, sizeof(path), dir, name);
    size_t len = 0;
    char *text = sim_output_read(path, &len);
    if (text == NULL)
        return NULL;
    sim_cfg *cfg = sim_cfg_parse(text, len, path, NULL);
    free(text);
    return cfg;
}

bool app_sweep_done(const app_sweep *sw, size_t k)
{
    char dir[PATH_TEXT], hash[32], want[32];
    join(dir, sizeof(dir), sw->dir, sw->points[k].name);
    sim_cfg *summary = read_json(dir, "summary.json");
    sim_cfg *run = summary != NULL ? read_json(dir, "run.json") : NULL;
    snprintf(want, sizeof(want), "%016" PRIx64, sw->points[k].hash);
    bool done = run != NULL &&
                sim_cfg_string(run, "scenario_hash", hash, sizeof(hash), NULL) == 0 &&
                strcmp(hash, want) == 0;
    sim_cfg_destroy(run);
    sim_cfg_destroy(summary);
    return done;
}

size_t app_sweep_todo(const app_sweep *sw, size_t *todo)
{
    size_t n = 0;
    for (size_t k = 0; k < sw->npoints; k++)
        if (!app_sweep_done(sw, k))
            todo[n++] = k;
    return n;
}

long app_sweep_spawn(const app_sweep *sw, size_t k, sim_err *err)
{
    const point *p = &sw->points[k];
    char dir[PATH_TEXT];
    join(dir, sizeof(dir), sw->dir, p->name);
    scratch s;
    const char **argv = calloc(2 * sw->ncols + 10, sizeof(*argv));
    if (scratch_init(sw, &s, err) != 0 || argv == NULL) {
        scratch_fini(&s);
        free(argv);
        return oom(err), -1;
    }
    size_t n = 0, nsets = point_sets(sw, k, &s);
    argv[n++] = sw->opt.exe;
    argv[n++] = "run";
    argv[n++] = sw->base;
    argv[n++] = "-o";
    argv[n++] = dir;
    argv[n++] = "--quiet";
    /* One thread a run unless told: -j runs at once already fill the cores. */
    char threads[16];
    snprintf(threads, sizeof(threads), "%u", sw->opt.threads > 0 ? sw->opt.threads : 1);
    argv[n++] = "--threads";
    argv[n++] = threads;
    for (size_t i = 0; i < nsets; i++) {
        argv[n++] = "--set";
        argv[n++] = s.sets[i];
    }
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid == 0) {
        /* The child dies with the sweep, so that a killed sweep leaves no runs behind. */
        prctl(PR_SET_PDEATHSIG, SIGTERM);
        if (getppid() != parent)
            _exit(127);
        int null = open("/dev/null", O_WRONLY);
        if (null >= 0)
            dup2(null, STDOUT_FILENO);
        execv(sw->opt.exe, (char *const *)argv);
        _exit(127);
    }
    free(argv);
    scratch_fini(&s);
    if (pid < 0)
        sim_err_set(err, SIM_EIO, NULL, "cannot start a run: fork failed");
    return (long)pid;
}

int app_sweep_wait(long pid)
{
    int status = 0;
    if (waitpid((pid_t)pid, &status, 0) < 0)
        return 127;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void progress(size_t done, size_t total, size_t running, double t0, bool last)
{
    double el = now_s() - t0;
    double eta = done > 0 ? el / (double)done * (double)(total - done) : -1.0;
    fprintf(stderr, "\rsweep: %zu/%zu runs done, %zu running, ", done, total, running);
    if (eta < 0)
        fputs("ETA --      ", stderr);
    else
        fprintf(stderr, "ETA %02d:%02d   ", (int)(eta / 60), (int)fmod(eta, 60.0));
    if (last)
        fputc('\n', stderr);
    fflush(stderr);
}

int app_sweep_open_dir(app_sweep *sw, bool lock, sim_err *err)
{
    const unsigned kinds = SIM_RUNDIR_BIT(SIM_RUNDIR_RUN) | SIM_RUNDIR_BIT(SIM_RUNDIR_WORK) |
                           SIM_RUNDIR_BIT(SIM_RUNDIR_SWEEP) | SIM_RUNDIR_BIT(SIM_RUNDIR_GOLDEN);
    int rc = sim_rundir_check_within(sw->dir, kinds, err);
    if (rc == SIM_OK && lock && sw->lock == NULL)
        rc = sim_rundir_lock_take(sw->dir, &sw->lock, err);
    if (rc != SIM_OK)
        return rc;
    struct stat st;
    if (stat(sw->dir, &st) == 0 && !S_ISDIR(st.st_mode))
        return sim_err_set(err, SIM_ESCENARIO, NULL,
                           "output directory %s exists and is not a directory", sw->dir);
    DIR *d = opendir(sw->dir);
    bool empty = true;
    for (struct dirent *e = d != NULL ? readdir(d) : NULL; e != NULL && empty; e = readdir(d))
        empty = strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0;
    if (d != NULL)
        closedir(d);
    sim_rundir_kind kind = empty ? SIM_RUNDIR_NONE : sim_rundir_kind_of(sw->dir);
    if (!empty && kind != SIM_RUNDIR_SWEEP && kind != SIM_RUNDIR_NONE)
        return sim_err_set(err, SIM_ESCENARIO, NULL,
                           "output directory %s is a hetsim %s directory, not a sweep's: "
                           "choose another",
                           sw->dir, sim_rundir_kind_name(kind));
    if (!empty && kind != SIM_RUNDIR_SWEEP)
        return sim_err_set(err, SIM_ESCENARIO, NULL,
                           "output directory %s is not empty and holds no hetsim sweep (no %s "
                           "nor index.csv of hetsim): choose another or empty it",
                           sw->dir, SIM_RUNDIR_SWEEP_MARKER);
    char mark[PATH_TEXT];
    join(mark, sizeof(mark), sw->dir, SIM_RUNDIR_SWEEP_MARKER);
    /* Created in place (no temporary file): `--index` tasks may look at once. */
    int fd = -1;
    if ((rc = sim_output_mkdirs(sw->dir, err)) == SIM_OK &&
        (fd = open(mark, O_WRONLY | O_CREAT | O_CLOEXEC, 0666)) < 0)
        rc = sim_err_set(err, SIM_EIO, NULL, "cannot create %s: %s", mark, strerror(errno));
    if (fd >= 0)
        close(fd);
    return rc;
}

int app_sweep_run(app_sweep *sw, size_t *ran, size_t *failed, sim_err *err)
{
    *ran = *failed = 0;
    int rc = app_sweep_open_dir(sw, true, err);
    size_t *todo = calloc(sw->npoints + 1, sizeof(*todo));
    long *pids = calloc(sw->opt.jobs, sizeof(*pids));
    if (rc == 0 && (todo == NULL || pids == NULL))
        rc = oom(err);
    size_t ntodo = 0, next = 0, running = 0;
    if (rc == 0)
        ntodo = app_sweep_todo(sw, todo);
    double t0 = now_s();
    while (rc == 0 && (next < ntodo || running > 0)) {
        while (running < sw->opt.jobs && next < ntodo) {
            long pid = app_sweep_spawn(sw, todo[next++], err);
            if (pid < 0) {
                (*failed)++;
                continue;
            }
            for (size_t s = 0; s < sw->opt.jobs; s++)
                if (pids[s] == 0) {
                    pids[s] = pid;
                    break;
                }
            running++;
        }
        if (running == 0)
            break;
        int status = 0;
        pid_t pid = wait(&status);
        for (size_t s = 0; s < sw->opt.jobs && pid > 0; s++)
            if (pids[s] == (long)pid) {
                pids[s] = 0;
                running--;
                (*ran)++;
                if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
                    (*failed)++;
            }
        if (sw->opt.progress)
            progress(*ran, ntodo, running, t0, next == ntodo && running == 0);
    }
    free(pids);
    free(todo);
    if (rc == 0)
        rc = app_sweep_write_index(sw, err);
    return rc;
}

/* ---- index.csv -------------------------------------------------------------------------- */

/* A number of summary.json (or of its "wall" object) as it was written, or "" for null. */
static void csv_number(FILE *f, sim_cfg *c, const char *key)
{
    double v = NAN;
    if (c == NULL || sim_cfg_is_null(c, key) ||
        sim_cfg_double(c, key, -INFINITY, INFINITY, &v, NULL) != 0 || isnan(v))
        return;
    fprintf(f, "%.17g", v);
}

static void write_row(const app_sweep *sw, size_t k, FILE *f, const size_t *vi)
{
    const point *p = &sw->points[k];
    char dir[PATH_TEXT], plain[512], reason[64] = "missing";
    join(dir, sizeof(dir), sw->dir, p->name);
    fprintf(f, "%zu,", k);
    sim_output_csv_field(f, p->name);
    for (size_t c = 0; c < sw->ncols; c++) {
        plain_value(sw->cols[c].values[vi[c]], plain, sizeof(plain));
        fputc(',', f);
        sim_output_csv_field(f, plain);
    }
    fprintf(f, ",%" PRIu64 ",", sw->seeds[k % sw->nseeds]);
    sim_cfg *s = read_json(dir, "summary.json"), *wall = NULL;
    if (s != NULL)
        sim_cfg_string(s, "stop_reason", reason, sizeof(reason), NULL);
    sim_output_csv_field(f, reason);
    static const char *const keys[] = { "sim_time_s", "final_accuracy", "best_accuracy",
                                        "time_to_target_s", "mean_throughput_sps" };
    for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
        fputc(',', f);
        csv_number(f, s, keys[i]);
    }
    fputc(',', f);
    if (s != NULL && sim_cfg_child(s, "wall", &wall, NULL) == 0)
        csv_number(f, wall, "wall_s");
    fputc('\n', f);
    sim_cfg_destroy(s);
}

/* The columns of curves.csv after the point's: metrics.csv's (DESIGN §9). A run's
 * metrics.csv is read by its header's names, so a column it lacks stays empty. */
static const char *const curve_cols[] = { "time_s",        "iterations", "samples",
                                          "epoch",         "train_loss", "test_loss",
                                          "test_accuracy", "consensus",  "throughput_sps" };
#define NCURVE_COLS (sizeof(curve_cols) / sizeof(curve_cols[0]))
#define CURVE_LINE  4096

/* Splits a metrics.csv line at commas in place; returns the field count (at most max). */
static size_t split_plain(char *line, char **f, size_t max)
{
    size_t n = 0;
    line[strcspn(line, "\r\n")] = '\0';
    for (char *p = line; p != NULL && n < max;) {
        f[n++] = p;
        p = strchr(p, ',');
        if (p != NULL)
            *p++ = '\0';
    }
    return n;
}

/* Point k's rows of curves.csv: its overrides and seed, then each row of its metrics.csv
 * (none without one). Returns 0 or SIM_ENOMEM. */
static int curve_rows(const app_sweep *sw, size_t k, const size_t *vi, FILE *f, sim_err *err)
{
    char path[PATH_TEXT + 16], line[CURVE_LINE], plain[512], *field[64];
    int map[NCURVE_COLS];
    snprintf(path, sizeof(path), "%s/%s/metrics.csv", sw->dir, sw->points[k].name);
    FILE *in = fopen(path, "r");
    if (in == NULL)
        return 0; /* no results */
    if (fgets(line, sizeof(line), in) == NULL) {
        fclose(in);
        return 0;
    }
    size_t n = split_plain(line, field, 64);
    for (size_t j = 0; j < NCURVE_COLS; j++) {
        map[j] = -1;
        for (size_t i = 0; i < n; i++)
            if (strcmp(field[i], curve_cols[j]) == 0)
                map[j] = (int)i;
    }
    char *text = NULL;
    size_t len = 0;
    FILE *p = open_memstream(&text, &len);
    if (p == NULL) {
        fclose(in);
        return oom(err);
    }
    fprintf(p, "%zu", k);
    for (size_t c = 0; c < sw->ncols; c++) {
        plain_value(sw->cols[c].values[vi[c]], plain, sizeof(plain));
        fputc(',', p);
        sim_output_csv_field(p, plain);
    }
    fprintf(p, ",%" PRIu64, sw->seeds[k % sw->nseeds]);
    if (fclose(p) != 0 || text == NULL) {
        free(text);
        fclose(in);
        return oom(err);
    }
    while (fgets(line, sizeof(line), in) != NULL) {
        n = split_plain(line, field, 64);
        fputs(text, f);
        for (size_t j = 0; j < NCURVE_COLS; j++) {
            fputc(',', f);
            if (map[j] >= 0 && (size_t)map[j] < n)
                fputs(field[map[j]], f);
        }
        fputc('\n', f);
    }
    free(text);
    fclose(in);
    return 0;
}

/* curves.csv: a row per evaluation of every point with results (tidy data). */
static int write_curves(const app_sweep *sw, size_t *vi, sim_err *err)
{
    sim_file *out = sim_file_open(sw->dir, "curves.csv", err);
    if (out == NULL)
        return err->code;
    FILE *f = sim_file_stream(out);
    fputs("point", f);
    for (size_t c = 0; c < sw->ncols; c++) {
        fputc(',', f);
        sim_output_csv_field(f, sw->cols[c].path);
    }
    fputs(",seed", f);
    for (size_t j = 0; j < NCURVE_COLS; j++)
        fprintf(f, ",%s", curve_cols[j]);
    fputc('\n', f);
    int rc = 0;
    for (size_t k = 0; k < sw->npoints && rc == 0; k++) {
        decompose(sw, k, vi);
        rc = curve_rows(sw, k, vi, f, err);
    }
    if (rc != 0) {
        sim_file_abort(out);
        return rc;
    }
    return sim_file_commit(out, err);
}

int app_sweep_write_index(const app_sweep *sw, sim_err *err)
{
    size_t *vi = calloc(sw->ncols + 1, sizeof(*vi));
    if (vi == NULL)
        return oom(err);
    sim_file *out = sim_file_open(sw->dir, "index.csv", err);
    if (out == NULL) {
        free(vi);
        return err->code;
    }
    FILE *f = sim_file_stream(out);
    fputs("point,dir", f);
    for (size_t c = 0; c < sw->ncols; c++) {
        fputc(',', f);
        sim_output_csv_field(f, sw->cols[c].path);
    }
    fputs(",seed,stop_reason,sim_time_s,final_accuracy,best_accuracy,time_to_target_s,"
          "mean_throughput_sps,wall_s\n",
          f);
    for (size_t k = 0; k < sw->npoints; k++) {
        decompose(sw, k, vi);
        write_row(sw, k, f, vi);
    }
    int rc = sim_file_commit(out, err);
    if (rc == SIM_OK)
        rc = write_curves(sw, vi, err);
    free(vi);
    return rc;
}
