/* Sweeps: loading, validation, naming and listing (see sweep.h); the points are run by
 * app/sweep_run.c, their index written by app/sweep_index.c. */
#include "app/sweep.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "app/sweep_state.h"
#include "outputs/output.h"
#include "outputs/plot.h"
#include "outputs/rundir.h"
#include "protocols/registry.h"
#include "runtime/run.h"
#include "scenario/scenario.h"
#include "sim/cfg.h"
#include "sim/file.h"

/* Grid paths: a point's name has "seed=S" (6 bytes at least) and 3 bytes at least ("p=,")
 * for each, so no sweep of more could be named. */
#define MAX_PATHS     ((NAME_MAX_ - 6) / 3)
/* A sweep's directory leaves room in a path of PATH_TEXT for a point's name (200 bytes), its
 * ".partial" and a file's name. */
#define SWEEP_DIR_MAX 767
#define SWEEP_DIR_TOO_LONG                                                                     \
    "too long for a sweep's directory (at most 767 bytes: each point's path holds it, a name " \
    "of up to 200 bytes and its files)"

/* ---- Points ----------------------------------------------------------------------------- */

/* The grid values of point k: vi[c] is the value index of column c; returns the seed. The
 * seed varies fastest, then the last axis. */
uint64_t sw_decompose(const app_sweep *sw, size_t k, size_t *vi)
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

int sw_scratch_init(const app_sweep *sw, scratch *s, sim_err *err)
{
    s->vi = calloc(sw->ncols + 1, sizeof(*s->vi));
    s->sets = calloc(sw->ncols + 1, sizeof(*s->sets));
    s->text = malloc(sw->set_size);
    return s->vi == NULL || s->sets == NULL || s->text == NULL ? sw_oom(err) : 0;
}

void sw_scratch_fini(scratch *s)
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
size_t sw_point_sets(const app_sweep *sw, size_t k, scratch *s)
{
    uint64_t seed = sw_decompose(sw, k, s->vi);
    return assign(sw, s, true, seed);
}

/* ---- Directory names: a value as PATH=VALUE pairs ------------------------------------ */

/* Appends value [v, end) under `path` to out (room `size`, at *len) as PATH=VALUE pairs, the
 * first after `sep`: an object's members as PATH.KEY=..., an array of plain values as
 * PATH=A+B+C, another array's elements as PATH.I=..., a string unquoted; so that
 * {"name":"ps","mode":"bsp"} under protocol reads protocol.name=ps,protocol.mode=bsp. */
static void flatten(const char *v, const char *end, const char *path, char *out, size_t size,
                    size_t *len, const char *sep)
{
    char sub[NAME_MAX_ + 2];
    bool plain = *v == '[';
    for (const char *q = v + 1; plain && q < end - 1; q = sw_json_end(q) + 1)
        plain = *q != '{' && *q != '[';
    if ((*v == '{' || *v == '[') && end - v > 2 && !(plain && *v == '[')) {
        size_t i = 0;
        for (const char *q = v + 1; q < end - 1; i++) {
            const char *key = q, *val = q;
            if (*v == '{') { /* "key":value */
                val = sw_json_end(q) + 1;
                snprintf(sub, sizeof(sub), "%s.%.*s", path, (int)(val - key - 3), key + 1);
            } else {
                snprintf(sub, sizeof(sub), "%s.%zu", path, i);
            }
            const char *vend = sw_json_end(val);
            flatten(val, vend, sub, out, size, len, i == 0 ? sep : ",");
            q = vend + 1;
        }
        return;
    }
    *len += (size_t)snprintf(out + *len, *len < size ? size - *len : 0, "%s%s=", sep, path);
    if (plain) { /* [1,2,1,1] as 1+2+1+1 */
        for (const char *q = v + 1; q < end - 1; q = sw_json_end(q) + 1) {
            const char *e = sw_json_end(q);
            bool str = *q == '"';
            *len += (size_t)snprintf(out + *len, *len < size ? size - *len : 0, "%s%.*s",
                                     q > v + 1 ? "+" : "", (int)(e - q - 2 * str), q + str);
        }
        return;
    }
    bool str = *v == '"' && end - v >= 2;
    *len += (size_t)snprintf(out + *len, *len < size ? size - *len : 0, "%.*s",
                             (int)(end - v - 2 * str), v + str);
}

/* Point k's run directory name, from its assignments, each value as PATH=VALUE pairs
 * (flatten: strings unquoted, objects and arrays by their members), then characters other
 * than [A-Za-z0-9._+-=,] replaced by '_'. */
static int make_name(app_sweep *sw, size_t k, scratch *s, sim_err *err)
{
    char name[NAME_MAX_ + 64], path[NAME_MAX_ + 2];
    size_t n = sw_point_sets(sw, k, s), len = 0;
    for (size_t i = 0; i < n && len <= NAME_MAX_; i++) {
        const char *eq = strchr(s->sets[i], '=');
        snprintf(path, sizeof(path), "%.*s", (int)(eq - s->sets[i]), s->sets[i]);
        flatten(eq + 1, eq + 1 + strlen(eq + 1), path, name, sizeof(name), &len, i > 0 ? "," : "");
    }
    if (len > NAME_MAX_)
        return sim_err_set(err, SIM_ESCENARIO, "$.grid",
                           "point %zu's directory name is longer than %d bytes", k, NAME_MAX_);
    for (char *q = name; *q != '\0'; q++)
        if (!((*q >= 'a' && *q <= 'z') || (*q >= 'A' && *q <= 'Z') || (*q >= '0' && *q <= '9') ||
              strchr("._+-=,", *q) != NULL))
            *q = '_';
    if ((sw->points[k].name = strdup(name)) == NULL)
        return sw_oom(err);
    return 0;
}

/* ---- Loading -------------------------------------------------------------------------- */

/* Whether grid paths `a` and `b` set the same value (2) or one a part of the other (1):
 * "protocol.name" and "$.protocol.name", "stragglers" and "stragglers[0].slowdown". The later
 * one's value overrode the other's, which the point's directory named all the same. */
static int paths_overlap(const char *a, const char *b)
{
    a += strncmp(a, "$.", 2) == 0 ? 2 : 0;
    b += strncmp(b, "$.", 2) == 0 ? 2 : 0;
    size_t la = strlen(a), lb = strlen(b);
    const char *l = la <= lb ? b : a;
    size_t n = la <= lb ? la : lb;
    if (strncmp(a, b, n) != 0)
        return 0;
    return l[n] == '\0' ? 2 : l[n] == '.' || l[n] == '[' ? 1 : 0;
}

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
    if (strcmp(key, "output.dir") == 0 || strcmp(key, "$.output.dir") == 0)
        return sim_err_set(err, SIM_ESCENARIO, path,
                           "each point runs in its own directory of the sweep's (output.dir of "
                           "the sweep file, or -o): a point's output.dir is never used, so its "
                           "values ran one run under each");
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
    int same = 0;
    for (size_t i = 0; i < sw->ncols; i++)
        if ((same = paths_overlap(sw->cols[i].path, key)) != 0)
            return sim_err_set(err, SIM_ESCENARIO, path, "%s %s.%s%s",
                               same == 2 ? "path given twice (also" : "overlaps",
                               sim_cfg_path(sw->cols[i].from), sw->cols[i].path,
                               same == 2 ? ")" : ": the later path's value overrides the other's");
    column *cols = realloc(sw->cols, (sw->ncols + 1) * sizeof(*cols));
    if (cols == NULL)
        return sw_oom(err);
    sw->cols = cols;
    cols[sw->ncols] =
        (column){ .path = strdup(key), .nvalues = n, .axis = axis, .zipped = zipped, .from = c };
    if (cols[sw->ncols++].path == NULL)
        return sw_oom(err);
    return 0;
}

static int add_axis(app_sweep *sw, size_t len, sim_err *err)
{
    size_t *a = realloc(sw->axis_len, (sw->naxes + 1) * sizeof(*a));
    if (a == NULL)
        return sw_oom(err);
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
            return sw_oom(err);
        for (size_t i = 0; i < col->nvalues; i++) {
            int rc = sim_cfg_at_json(col->from, col->path, i, &col->values[i], err);
            if (rc != 0)
                return rc;
            if (strcmp(col->values[i], "-0") == 0) /* the value 0: one run, one name */
                strcpy(col->values[i], "0");
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
    /* a sweep file without seeds and with an unknown key lists seeds among the valid keys (it
     * listed base, grid and output) */
    int rc = sim_cfg_allow(root, "seeds", err);
    if (rc != 0 || !sim_cfg_has(root, "seeds") || sim_cfg_is_null(root, "seeds"))
        return rc;
    if (sim_cfg_int(root, "seeds", 1, (int64_t)SIM_SCENARIO_SEED_MAX, &count, NULL) == 0) {
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
                       "%s points (%s of the grid times %zu seed%s), more than the limit of %zu "
                       "points a sweep",
                       count_text(total, t, sizeof(t)), count_text(grid, g, sizeof(g)), sw->nseeds,
                       sw->nseeds == 1 ? "" : "s", sw->max_points);
}

/* The seeds: the listed ones (distinct), or the base seed and the next ones. */
static int read_seeds(app_sweep *sw, sim_cfg *root, bool listed, uint64_t base_seed, sim_err *err)
{
    if ((sw->seeds = calloc(sw->nseeds, sizeof(*sw->seeds))) == NULL)
        return sw_oom(err);
    for (size_t i = 0; i < sw->nseeds; i++) {
        double s = (double)(base_seed + i);
        int rc = listed ? sim_cfg_at_double(root, "seeds", i, 0, (double)SIM_SCENARIO_SEED_MAX,
                                            true, &s, err)
                        : 0;
        if (rc != 0)
            return rc;
        sw->seeds[i] = listed ? (uint64_t)s : base_seed + i;
    }
    size_t j = 0,
           i = listed ? sw_first_repeat(sw->seeds, sw->nseeds, sw_seed_hash, sw_seed_same, &j) : 0;
    if (i == SIZE_MAX)
        return sw_oom(err);
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
    const proto_ops *ops = sc != NULL && check ? proto_lookup(sc->protocol, sc->file, e) : NULL;
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
        sw_oom(err);
        return NULL;
    }
    char inner[SIM_ERR_TEXT_MAX], path[PATH_TEXT];
    sim_err_format(&e, inner, sizeof(inner));
    blame(sw, sets, nsets, vi, check, e.path, path, sizeof(path));
    sim_err_set(err, SIM_ESCENARIO, path, "%s: %s", what, inner);
    return NULL;
}

/* The seed of the base scenario with the first point's grid overrides. */
static int base_seed(app_sweep *sw, uint64_t *seed, sim_err *err)
{
    scratch s;
    int rc = sw_scratch_init(sw, &s, err);
    if (rc == 0) {
        /* s.vi is zero: the first value of every column. */
        assign(sw, &s, false, 0);
        sim_scenario *sc =
            load_point(sw, s.sets, sw->ncols, s.vi, false, "the first values of the grid", err);
        if (sc == NULL)
            rc = err != NULL ? err->code : SIM_ESCENARIO;
        else if ((rc = sim_scenario_inputs_regular(sc, "a sweep", err)) == SIM_OK) /* a FIFO */
            *seed = sc->seed;
        sim_scenario_destroy(sc);
    }
    sw_scratch_fini(&s);
    return rc;
}

/* Reads the base scenario's bytes (once, for every point); refuses the sweep file itself and a
 * FIFO or a socket, which the points' runs could not read again. */
static int read_base(app_sweep *sw, sim_err *err)
{
    struct stat a, b;
    if (stat(sw->file, &a) == 0 && stat(sw->base, &b) == 0 && a.st_dev == b.st_dev &&
        a.st_ino == b.st_ino)
        return sim_err_set(err, SIM_ESCENARIO, "$.base",
                           "is this sweep file; it must name a scenario");
    if (stat(sw->base, &b) == 0 && (S_ISFIFO(b.st_mode) || S_ISSOCK(b.st_mode)))
        return sim_err_set(err, SIM_ESCENARIO, "$.base",
                           "%s is %s: each point's run reads the base again (a sweep waited "
                           "for its next writer forever); copy it into a file",
                           sw->base, sim_file_kind(b.st_mode));
    errno = 0;
    if ((sw->base_text = sim_output_read(sw->base, &sw->base_len)) == NULL && errno == ENOENT)
        return sim_err_set(err, SIM_ESCENARIO, "$.base",
                           "no file %s (the base is a path relative to the sweep file's folder)",
                           sw->base);
    if (sw->base_text == NULL && errno == EFBIG) /* a device that never ends */
        return sim_err_set(err, SIM_ESCENARIO, "$.base", "%s: %s", sw->base, sim_file_cap_text());
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
    /* An -o past PATH_TEXT was cut to it: the sweep made directories elsewhere (a prefix's
     * folder) and failed ("cannot create"), exit 1, where -o takes up to 4,000 bytes. */
    const char *given = sw->opt.out_dir != NULL ? sw->opt.out_dir : sw->dir;
    if (sw->opt.out_dir != NULL && strlen(given) >= sizeof(sw->dir))
        return sim_err_set(err, SIM_ESCENARIO, NULL, "-o: %zu bytes: %s", strlen(given),
                           SWEEP_DIR_TOO_LONG);
    if (sw->opt.out_dir != NULL)
        snprintf(sw->dir, sizeof(sw->dir), "%s", sw->opt.out_dir);
    /* "sw/." is sw, never longer; "sw/p/.." is sw, resolved once for every point. */
    char *clean = NULL;
    if ((rc = sim_rundir_resolve(sw->dir, &clean, err)) != SIM_OK)
        return rc;
    size_t n = strlen(clean);
    if (n > SWEEP_DIR_MAX)
        rc = sim_err_set(err, SIM_ESCENARIO, sw->opt.out_dir != NULL ? NULL : "$.output.dir",
                         "%s%zu bytes (%s): %s", sw->opt.out_dir != NULL ? "-o: " : "", n, clean,
                         SWEEP_DIR_TOO_LONG);
    else
        snprintf(sw->dir, sizeof(sw->dir), "%s", clean);
    free(clean);
    if (rc != SIM_OK)
        return rc;
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
    size_t n = sw_point_sets(sw, k, s);
    char what[NAME_MAX_ + 64];
    snprintf(what, sizeof(what), "point %zu (%s)", k, p->name);
    sim_scenario *sc = load_point(sw, s->sets, n, s->vi, true, what, err);
    if (sc == NULL)
        return err != NULL ? err->code : SIM_ESCENARIO;
    /* A FIFO a grid value names: this load emptied it, the next point's would wait. */
    sim_err e;
    sim_err_clear(&e);
    if (sim_scenario_inputs_regular(sc, "a sweep", &e) != SIM_OK) {
        sim_scenario_destroy(sc);
        return sim_err_set(err, SIM_ESCENARIO, "$.grid", "%s: %s", what, e.msg);
    }
    /* Its run's figures: a directory gnuplot cannot be given failed every point after its run. */
    if (sc->plots && sim_plot_path_ok("sweep directory", sw->dir, &e) != SIM_OK) {
        sim_scenario_destroy(sc);
        return sim_err_set(err, SIM_ESCENARIO, NULL, "%s draws figures (output.plots): %s", what,
                           e.msg);
    }
    p->hash = sc->hash;
    p->has_traces = sim_scenario_traces_fnv(sc, &p->traces);
    /* What its run is held to; none kept when it reads no file (a million points). */
    char *inputs = sim_scenario_inputs_text(sc);
    bool read = inputs != NULL && strcmp(inputs, "p=0000000000000000") != 0;
    p->inputs = read ? inputs : NULL;
    if (!read)
        free(inputs);
    p->run = inputs != NULL ? sw_run_of(sc->root) : 0; /* sc->root rewritten: it ends here */
    sim_scenario_destroy(sc);
    return p->run != 0 ? 0 : sw_oom(err);
}

/* Points j and i, found one run (their canonical scenarios are one: sim_scenario_canonical),
 * refused naming the grid key whose values differ and the two values (SIM_ESCENARIO). */
static int one_run(const app_sweep *sw, size_t j, size_t i, sim_err *err)
{
    size_t *vi = calloc(2 * (sw->ncols + 1), sizeof(*vi)), c = 0;
    if (vi == NULL)
        return sw_oom(err);
    sw_decompose(sw, j, vi);
    sw_decompose(sw, i, vi + sw->ncols + 1);
    while (c < sw->ncols && vi[c] == vi[sw->ncols + 1 + c])
        c++;
    size_t a = c < sw->ncols ? vi[c] : 0, b = c < sw->ncols ? vi[sw->ncols + 1 + c] : 0;
    free(vi);
    if (c == sw->ncols) /* not reached: points of one grid value share their name */
        return sim_err_set(err, SIM_ESCENARIO, "$.grid", "points %zu (%s) and %zu (%s) are one run",
                           j, sw->points[j].name, i, sw->points[i].name);
    return sim_err_set(err, SIM_ESCENARIO, "$.grid",
                       "points %zu (%.40s) and %zu (%.40s) are one run: \"%.40s\" %.40s and %.40s "
                       "are one value spelt two ways (keys in another order, a default, -0 for "
                       "0, equal speeds for one, [] for none, ./p.csv for p.csv)",
                       j, sw->points[j].name, i, sw->points[i].name, sw->cols[c].path,
                       sw->cols[c].values[a], sw->cols[c].values[b]);
}

static int make_points(app_sweep *sw, sim_err *err)
{
    scratch s;
    sw->points = calloc(sw->npoints, sizeof(*sw->points));
    int rc = sw_scratch_init(sw, &s, err);
    if (rc == 0 && sw->points == NULL)
        rc = sw_oom(err);
    for (size_t k = 0; k < sw->npoints && rc == 0; k++)
        rc = make_name(sw, k, &s, err);
    size_t j = 0, i = rc == 0
                          ? sw_first_repeat(sw->points, sw->npoints, sw_name_hash, sw_name_same, &j)
                          : 0;
    if (rc == 0 && i == SIZE_MAX)
        rc = sw_oom(err);
    else if (rc == 0 && i < sw->npoints)
        rc = sim_err_set(err, SIM_ESCENARIO, "$.grid",
                         "points %zu and %zu share the run directory \"%s\" (repeated values?)", j,
                         i, sw->points[i].name);
    /* An --index task validates its own point alone (app_sweep_load). */
    for (size_t k = 0; k < sw->npoints && rc == 0; k++)
        if (!sw->opt.one || k == sw->opt.index)
            rc = validate_point(sw, k, &s, err);
    /* Whether two points are one run needs every point's scenario: a whole sweep's check. */
    i = rc != 0 || sw->opt.one
            ? sw->npoints
            : sw_first_repeat(sw->points, sw->npoints, sw_run_key, sw_run_same, &j);
    if (rc == 0 && i == SIZE_MAX)
        rc = sw_oom(err);
    else if (rc == 0 && i < sw->npoints)
        rc = one_run(sw, j, i, err);
    sw_scratch_fini(&s);
    return rc;
}

app_sweep *app_sweep_load(const char *file, const app_sweep_options *opt, sim_err *err)
{
    sim_err_clear(err);
    app_sweep *sw = calloc(1, sizeof(*sw));
    if (sw == NULL) {
        sw_oom(err);
        return NULL;
    }
    snprintf(sw->file, sizeof(sw->file), "%s", file);
    sw->opt = *opt;
    if (strlen(file) >= sizeof(sw->file)) { /* cut, its base was looked for in another folder */
        sim_err_set(err, SIM_EINVAL, NULL,
                    "%zu bytes, too long a path for a sweep file (at most %zu bytes): move it up",
                    strlen(file), sizeof(sw->file) - 1);
        goto fail;
    }
    sw->max_points = opt->max_points > 0 && opt->max_points < APP_SWEEP_MAX_POINTS
                         ? opt->max_points
                         : APP_SWEEP_MAX_POINTS;
    size_t len = 0;
    errno = 0;
    char *text = sim_output_read(file, &len);
    if (text == NULL && errno == EFBIG) { /* a FIFO fed forever: refused at the cap */
        sim_err_set(err, SIM_ESCENARIO, NULL, "%s", sim_file_cap_text());
        goto fail;
    }
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
    for (size_t k = 0; k < sw->npoints && sw->points != NULL; k++) {
        free(sw->points[k].name);
        free(sw->points[k].inputs);
    }
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
    int rc = sw_scratch_init(sw, &s, err);
    for (size_t k = 0; k < sw->npoints && rc == 0; k++) {
        size_t n = sw_point_sets(sw, k, &s);
        fprintf(f, "%zu\t%s/%s\t", k, sw->dir, sw->points[k].name);
        for (size_t i = 0; i < n; i++)
            fprintf(f, "%s--set %s", i > 0 ? " " : "", s.sets[i]);
        fputc('\n', f);
    }
    sw_scratch_fini(&s);
    return rc;
}
