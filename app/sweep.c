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

#define MAX_SEEDS  1000000
#define MAX_POINTS 10000000
#define NAME_MAX_  200 /* a run directory's name, bytes */
#define PATH_TEXT  1024

/* One grid entry: a `--set` path and its values as JSON text. Entries of one axis (a plain
 * entry, or the paths of "zip") have the same number of values. */
typedef struct column {
    char *path;    /* "protocol.name"; owned */
    char **values; /* (nvalues) JSON text; owned */
    size_t nvalues;
    size_t axis; /* the axis it belongs to */
    bool zipped; /* under $.grid.zip */
} column;

typedef struct point {
    char **sets;    /* (nsets) "path=value", the grid's then "seed=S"; owned */
    size_t nsets;   /* */
    char name[256]; /* run directory under the sweep's directory */
    uint64_t hash;  /* the resolved scenario's hash, as run.json records it */
} point;

struct app_sweep {
    char file[PATH_TEXT]; /* the sweep file */
    char base[PATH_TEXT]; /* the base scenario, relative to the working directory */
    char dir[PATH_TEXT];  /* output directory */
    app_sweep_options opt;
    column *cols; /* (ncols) */
    size_t ncols;
    size_t *axis_len; /* (naxes) */
    size_t naxes;
    uint64_t *seeds; /* (nseeds) */
    size_t nseeds;
    point *points; /* (npoints) */
    size_t npoints;
    sim_rundir_lock *lock; /* the output directory's, once taken (app_sweep_open_dir) */
};

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

static char *read_text(const char *file, size_t *len)
{
    FILE *f = fopen(file, "rb");
    if (f == NULL)
        return NULL;
    size_t cap = 4096, n = 0;
    char *buf = malloc(cap);
    while (buf != NULL) {
        n += fread(buf + n, 1, cap - n - 1, f);
        if (n < cap - 1)
            break;
        char *b = realloc(buf, cap *= 2);
        if (b == NULL)
            free(buf);
        buf = b;
    }
    if (buf != NULL && ferror(f)) {
        free(buf);
        buf = NULL;
    }
    fclose(f);
    if (buf != NULL) {
        buf[n] = '\0';
        *len = n;
    }
    return buf;
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

/* ---- Loading -------------------------------------------------------------------------- */

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
    if (strcmp(key, "seed") == 0)
        return sim_err_set(err, SIM_ESCENARIO, path, "seeds are given by $.seeds");
    if (*len != 0 && n != *len)
        return sim_err_set(err, SIM_ESCENARIO, path,
                           "has %zu values but the other zipped paths have %zu", n, *len);
    *len = n;
    for (size_t i = 0; i < sw->ncols; i++)
        if (strcmp(sw->cols[i].path, key) == 0)
            return sim_err_set(err, SIM_ESCENARIO, path, "path given twice");
    column *cols = realloc(sw->cols, (sw->ncols + 1) * sizeof(*cols));
    if (cols == NULL)
        return oom(err);
    sw->cols = cols;
    column *col = &cols[sw->ncols];
    *col = (column){ .path = strdup(key),
                     .values = calloc(n, sizeof(char *)),
                     .nvalues = n,
                     .axis = axis,
                     .zipped = zipped };
    sw->ncols++;
    if (col->path == NULL || col->values == NULL)
        return oom(err);
    for (size_t i = 0; i < n; i++)
        if ((rc = sim_cfg_at_json(c, key, i, &col->values[i], err)) != 0)
            return rc;
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

static int read_seeds(app_sweep *sw, sim_cfg *root, uint64_t base_seed, sim_err *err)
{
    size_t n = 0;
    int64_t count = 1;
    int rc;
    if (sim_cfg_has(root, "seeds") && !sim_cfg_is_null(root, "seeds") &&
        sim_cfg_int(root, "seeds", 1, MAX_SEEDS, &count, NULL) != 0) {
        if ((rc = sim_cfg_array_len(root, "seeds", &n, err)) != 0)
            return sim_err_set(err, SIM_ESCENARIO, "$.seeds",
                               "must be a count in [1, %d] or a non-empty list of seeds",
                               MAX_SEEDS);
        if (n == 0)
            return sim_err_set(err, SIM_ESCENARIO, "$.seeds", "must be a non-empty list");
    }
    sw->nseeds = n > 0 ? n : (size_t)count;
    if ((sw->seeds = calloc(sw->nseeds, sizeof(*sw->seeds))) == NULL)
        return oom(err);
    for (size_t i = 0; i < sw->nseeds; i++) {
        double s = (double)(base_seed + i);
        if (n > 0 &&
            (rc = sim_cfg_at_double(root, "seeds", i, 0, 9007199254740991.0, true, &s, err)) != 0)
            return rc;
        sw->seeds[i] = (uint64_t)s;
        for (size_t j = 0; j < i; j++)
            if (sw->seeds[j] == sw->seeds[i])
                return sim_err_set(err, SIM_ESCENARIO, "$.seeds", "seed %" PRIu64 " given twice",
                                   sw->seeds[i]);
    }
    return 0;
}

/* The grid values of point k: vi[c] is the value index of column c; returns the seed. */
static uint64_t decompose(const app_sweep *sw, size_t k, size_t *vi)
{
    uint64_t seed = sw->seeds[k % sw->nseeds];
    k /= sw->nseeds;
    size_t *ai = calloc(sw->naxes + 1, sizeof(*ai));
    for (size_t a = sw->naxes; a-- > 0 && ai != NULL;) {
        ai[a] = k % sw->axis_len[a];
        k /= sw->axis_len[a];
    }
    for (size_t c = 0; c < sw->ncols; c++)
        vi[c] = ai != NULL ? ai[sw->cols[c].axis] : 0;
    free(ai);
    return seed;
}

static int make_point(app_sweep *sw, size_t k, size_t *vi, sim_err *err)
{
    point *p = &sw->points[k];
    uint64_t seed = decompose(sw, k, vi);
    if ((p->sets = calloc(sw->ncols + 1, sizeof(char *))) == NULL)
        return oom(err);
    size_t len = 0;
    char plain[NAME_MAX_];
    for (size_t c = 0; c <= sw->ncols; c++) {
        const char *path = c < sw->ncols ? sw->cols[c].path : "seed";
        char seed_text[32];
        snprintf(seed_text, sizeof(seed_text), "%" PRIu64, seed);
        const char *value = c < sw->ncols ? sw->cols[c].values[vi[c]] : seed_text;
        size_t n = strlen(path) + strlen(value) + 2;
        if ((p->sets[c] = malloc(n)) == NULL)
            return oom(err);
        p->nsets++;
        snprintf(p->sets[c], n, "%s=%s", path, value);
        plain_value(value, plain, sizeof(plain));
        len += (size_t)snprintf(p->name + len, len < sizeof(p->name) ? sizeof(p->name) - len : 0,
                                "%s%s=%s", c > 0 ? "," : "", path, plain);
    }
    if (len > NAME_MAX_)
        return sim_err_set(err, SIM_ESCENARIO, "$.grid",
                           "point %zu's directory name is longer than %d bytes", k, NAME_MAX_);
    for (char *q = p->name; *q != '\0'; q++)
        if (!((*q >= 'a' && *q <= 'z') || (*q >= 'A' && *q <= 'Z') || (*q >= '0' && *q <= '9') ||
              strchr("._+-=,", *q) != NULL))
            *q = '_';
    return 0;
}

/* Which sweep path an error of point k's scenario is about: the grid entry whose `--set`
 * path it names, the seeds, or else the base. */
static void blame(const app_sweep *sw, const size_t *vi, const char *scenario_path, char *out,
                  size_t size)
{
    for (size_t c = 0; c < sw->ncols; c++) {
        size_t n = strlen(sw->cols[c].path);
        const char *p = scenario_path + 2;
        if (strncmp(scenario_path, "$.", 2) == 0 && strncmp(p, sw->cols[c].path, n) == 0 &&
            (p[n] == '\0' || p[n] == '.' || p[n] == '[')) {
            snprintf(out, size, "$.grid%s.%s[%zu]", sw->cols[c].zipped ? ".zip" : "",
                     sw->cols[c].path, vi[c]);
            return;
        }
    }
    snprintf(out, size, "%s", strcmp(scenario_path, "$.seed") == 0 ? "$.seeds" : "$.base");
}

static int validate_point(app_sweep *sw, size_t k, size_t *vi, sim_err *err)
{
    sim_err e;
    sim_err_clear(&e);
    point *p = &sw->points[k];
    sim_scenario *sc = sim_scenario_load(sw->base, (const char *const *)p->sets, p->nsets, &e);
    const proto_ops *ops = sc != NULL ? proto_lookup(sc, &e) : NULL;
    if (ops != NULL && sim_run_check(sc, ops, &e) == SIM_OK) {
        p->hash = sc->hash;
        sim_scenario_destroy(sc);
        return 0;
    }
    sim_scenario_destroy(sc);
    if (e.code == SIM_ENOMEM)
        return oom(err);
    char inner[1024], path[256];
    sim_err_format(&e, inner, sizeof(inner));
    decompose(sw, k, vi);
    blame(sw, vi, e.path, path, sizeof(path));
    return sim_err_set(err, SIM_ESCENARIO, path, "point %zu (%s): %s", k, p->name, inner);
}

static int cmp_names(const void *a, const void *b)
{
    return strcmp((*(const point *const *)a)->name, (*(const point *const *)b)->name);
}

static int check_names(const app_sweep *sw, sim_err *err)
{
    const point **v = calloc(sw->npoints, sizeof(*v));
    if (v == NULL)
        return oom(err);
    for (size_t k = 0; k < sw->npoints; k++)
        v[k] = &sw->points[k];
    qsort(v, sw->npoints, sizeof(*v), cmp_names);
    int rc = 0;
    for (size_t k = 1; k < sw->npoints && rc == 0; k++)
        if (strcmp(v[k - 1]->name, v[k]->name) == 0)
            rc = sim_err_set(err, SIM_ESCENARIO, "$.grid",
                             "two points share the run directory \"%s\" (repeated values?)",
                             v[k]->name);
    free(v);
    return rc;
}

/* The seed of the base scenario with the first point's grid overrides. */
static int base_seed(app_sweep *sw, uint64_t *seed, sim_err *err)
{
    char **sets = calloc(sw->ncols + 1, sizeof(char *));
    if (sets == NULL)
        return oom(err);
    int rc = 0;
    for (size_t c = 0; c < sw->ncols && rc == 0; c++) {
        size_t n = strlen(sw->cols[c].path) + strlen(sw->cols[c].values[0]) + 2;
        if ((sets[c] = malloc(n)) == NULL)
            rc = oom(err);
        else
            snprintf(sets[c], n, "%s=%s", sw->cols[c].path, sw->cols[c].values[0]);
    }
    sim_err e;
    sim_err_clear(&e);
    sim_scenario *sc =
        rc == 0 ? sim_scenario_load(sw->base, (const char *const *)sets, sw->ncols, &e) : NULL;
    if (sc != NULL) {
        *seed = sc->seed;
    } else if (rc == 0) {
        char inner[1024], path[256] = "$.base";
        size_t *vi = calloc(sw->ncols + 1, sizeof(*vi));
        sim_err_format(&e, inner, sizeof(inner));
        if (vi != NULL)
            blame(sw, vi, e.path, path, sizeof(path));
        rc = sim_err_set(err, e.code == SIM_ENOMEM || vi == NULL ? SIM_ENOMEM : SIM_ESCENARIO, path,
                         "the first values of the grid: %s", inner);
        free(vi);
    }
    sim_scenario_destroy(sc);
    for (size_t c = 0; c < sw->ncols; c++)
        free(sets[c]);
    free(sets);
    return rc;
}

static int read_sweep(app_sweep *sw, sim_cfg *root, sim_err *err)
{
    char base[PATH_TEXT], stem[256];
    sim_cfg *grid = NULL, *output = NULL;
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
    if ((rc = read_grid(sw, grid, err)) != 0)
        return rc;
    sim_cfg_is_null(root, "seeds"); /* marks the key valid */
    uint64_t seed = 0;
    if ((rc = sim_cfg_check_unused(root, err)) != 0 || (rc = base_seed(sw, &seed, err)) != 0 ||
        (rc = read_seeds(sw, root, seed, err)) != 0)
        return rc;
    return 0;
}

static int make_points(app_sweep *sw, sim_err *err)
{
    double total = (double)sw->nseeds;
    for (size_t a = 0; a < sw->naxes; a++)
        total *= (double)sw->axis_len[a];
    if (total > MAX_POINTS)
        return sim_err_set(err, SIM_ESCENARIO, "$.grid", "%.0f points, more than %d", total,
                           MAX_POINTS);
    sw->npoints = (size_t)total;
    size_t *vi = calloc(sw->ncols + 1, sizeof(*vi));
    sw->points = calloc(sw->npoints, sizeof(*sw->points));
    int rc = vi == NULL || sw->points == NULL ? oom(err) : 0;
    for (size_t k = 0; k < sw->npoints && rc == 0; k++)
        rc = make_point(sw, k, vi, err);
    if (rc == 0)
        rc = check_names(sw, err);
    for (size_t k = 0; k < sw->npoints && rc == 0; k++)
        rc = validate_point(sw, k, vi, err);
    free(vi);
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
    size_t len = 0;
    char *text = read_text(file, &len);
    if (text == NULL) {
        sim_err_set(err, SIM_EIO, NULL, "cannot read the sweep file");
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
        for (size_t i = 0; i < sw->points[k].nsets; i++)
            free(sw->points[k].sets[i]);
        free(sw->points[k].sets);
    }
    free(sw->points);
    free(sw->cols);
    free(sw->axis_len);
    free(sw->seeds);
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

void app_sweep_list(const app_sweep *sw, FILE *f)
{
    for (size_t k = 0; k < sw->npoints; k++) {
        fprintf(f, "%zu\t%s/%s\t", k, sw->dir, sw->points[k].name);
        for (size_t i = 0; i < sw->points[k].nsets; i++)
            fprintf(f, "%s--set %s", i > 0 ? " " : "", sw->points[k].sets[i]);
        fputc('\n', f);
    }
}

/* ---- Running ---------------------------------------------------------------------------- */

static sim_cfg *read_json(const char *dir, const char *name)
{
    char path[PATH_TEXT];
    join(path, sizeof(path), dir, name);
    size_t len = 0;
    char *text = read_text(path, &len);
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
    const char **argv = calloc(2 * p->nsets + 8, sizeof(*argv));
    if (argv == NULL)
        return oom(err), -1;
    size_t n = 0;
    argv[n++] = sw->opt.exe;
    argv[n++] = "run";
    argv[n++] = sw->base;
    argv[n++] = "-o";
    argv[n++] = dir;
    argv[n++] = "--quiet";
    for (size_t i = 0; i < p->nsets; i++) {
        argv[n++] = "--set";
        argv[n++] = p->sets[i];
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

static void csv_field(FILE *f, const char *s)
{
    if (strpbrk(s, ",\"\n") == NULL) {
        fputs(s, f);
        return;
    }
    fputc('"', f);
    for (; *s != '\0'; s++) {
        if (*s == '"')
            fputc('"', f);
        fputc(*s, f);
    }
    fputc('"', f);
}

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
    csv_field(f, p->name);
    for (size_t c = 0; c < sw->ncols; c++) {
        plain_value(sw->cols[c].values[vi[c]], plain, sizeof(plain));
        fputc(',', f);
        csv_field(f, plain);
    }
    fprintf(f, ",%" PRIu64 ",", sw->seeds[k % sw->nseeds]);
    sim_cfg *s = read_json(dir, "summary.json"), *wall = NULL;
    if (s != NULL)
        sim_cfg_string(s, "stop_reason", reason, sizeof(reason), NULL);
    csv_field(f, reason);
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
        csv_field(f, sw->cols[c].path);
    }
    fputs(",seed,stop_reason,sim_time_s,final_accuracy,best_accuracy,time_to_target_s,"
          "mean_throughput_sps,wall_s\n",
          f);
    for (size_t k = 0; k < sw->npoints; k++) {
        decompose(sw, k, vi);
        write_row(sw, k, f, vi);
    }
    free(vi);
    return sim_file_commit(out, err);
}
