/* Golden-curve regression checks (see check.h). */
#include "app/check.h"

#include <dirent.h>
#include <inttypes.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "app/curves.h"
#include "protocols/registry.h"
#include "runtime/run.h"
#include "sim/output.h"
#include "sim/plot.h"
#include "sim/rundir.h"
#include "sim/scenario.h"

#define PATH_TEXT  1024
#define MAX_GOLDEN 64 /* seeds in one golden */
#define SHOW_ROWS  5  /* rows out of band printed */

static const char *const fingerprint_files[] = { "metrics.csv", "workers.csv", "summary.json",
                                                 "run.json", "events.csv" };

/* Loads the scenario with the overrides, plus "seed=S" when `seed` is not NULL. */
static sim_scenario *load(const app_check_options *opt, const char *seed, sim_err *err)
{
    const char **sets = calloc(opt->nsets + 1, sizeof(*sets));
    if (sets == NULL) {
        sim_err_set(err, SIM_ENOMEM, NULL, "out of memory");
        return NULL;
    }
    for (size_t i = 0; i < opt->nsets; i++)
        sets[i] = opt->sets[i];
    if (seed != NULL)
        sets[opt->nsets] = seed;
    sim_scenario *sc = sim_scenario_load(opt->scenario, sets, opt->nsets + (seed != NULL), err);
    free(sets);
    const proto_ops *ops = sc != NULL ? proto_lookup(sc, err) : NULL;
    if (ops == NULL || sim_run_check(sc, ops, err) != SIM_OK) {
        sim_scenario_destroy(sc);
        if (err->code != SIM_ENOMEM)
            err->code = SIM_ESCENARIO;
        return NULL;
    }
    sc->plots = false; /* a golden keeps data, not figures */
    return sc;
}

static int run(sim_scenario *sc, const char *dir, sim_err *err)
{
    sim_run_options ro = { .out_dir = dir };
    return sim_run(sc, proto_find(sc->protocol), &ro, NULL, err);
}

/* FNV-1a 64 of dir/name; summary.json without its wall line. Returns false if absent. */
static bool file_hash(const char *dir, const char *name, uint64_t *h)
{
    char path[PATH_TEXT], line[8192];
    if (snprintf(path, sizeof(path), "%s/%s", dir, name) >= (int)sizeof(path))
        return false;
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return false;
    bool summary = strcmp(name, "summary.json") == 0;
    *h = UINT64_C(0xcbf29ce484222325);
    while (fgets(line, sizeof(line), f) != NULL) {
        if (summary && strncmp(line, "  \"wall\":", 9) == 0)
            continue;
        for (const char *p = line; *p != '\0'; p++) {
            *h ^= (unsigned char)*p;
            *h *= UINT64_C(0x100000001b3);
        }
    }
    fclose(f);
    return true;
}

/* The fingerprint of a run directory: a line "file hash" per output file present. */
static void fingerprint(const char *dir, char *out, size_t size)
{
    size_t len = 0;
    out[0] = '\0';
    for (size_t i = 0; i < sizeof(fingerprint_files) / sizeof(fingerprint_files[0]); i++) {
        uint64_t h = 0;
        if (file_hash(dir, fingerprint_files[i], &h) && len < size)
            len += (size_t)snprintf(out + len, size - len, "%s %016" PRIx64 "\n",
                                    fingerprint_files[i], h);
    }
}

static int write_fingerprint(const char *dir, sim_err *err)
{
    char text[1024];
    fingerprint(dir, text, sizeof(text));
    return sim_output_write(dir, "fingerprint", text, err);
}

/* True if every entry of `dir` is a golden's ("seeds", "seed-*"): a golden, or what a
 * failed --update left of one. */
static bool golden_entries(const char *dir)
{
    DIR *d = opendir(dir);
    if (d == NULL)
        return false;
    bool yes = true;
    for (struct dirent *e = readdir(d); e != NULL && yes; e = readdir(d))
        yes = strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0 ||
              strcmp(e->d_name, "seeds") == 0 || strncmp(e->d_name, "seed-", 5) == 0;
    closedir(d);
    return yes;
}

/* Refuses a golden directory inside any hetsim output directory, or one that is neither
 * absent, nor empty, nor a golden; then takes its lock. */
static int open_golden(const char *golden, sim_rundir_lock **lock, sim_err *err)
{
    const unsigned kinds = SIM_RUNDIR_BIT(SIM_RUNDIR_RUN) | SIM_RUNDIR_BIT(SIM_RUNDIR_WORK) |
                           SIM_RUNDIR_BIT(SIM_RUNDIR_SWEEP) | SIM_RUNDIR_BIT(SIM_RUNDIR_GOLDEN);
    int rc = sim_rundir_check_within(golden, kinds, err);
    if (rc == SIM_OK)
        rc = sim_rundir_lock_take(golden, lock, err);
    struct stat st;
    if (rc == SIM_OK && stat(golden, &st) == 0 && (!S_ISDIR(st.st_mode) || !golden_entries(golden)))
        rc = sim_err_set(err, SIM_EINVAL, NULL,
                         "%s is not a golden directory (only \"seeds\" and \"seed-*\" may be "
                         "there): choose another or empty it",
                         golden);
    return rc;
}

static int update(const app_check_options *opt, FILE *out, sim_err *err)
{
    sim_scenario *sc = load(opt, NULL, err);
    if (sc == NULL)
        return err->code;
    uint64_t seed0 = sc->seed;
    sim_scenario_destroy(sc);
    char seeds[MAX_GOLDEN * 24];
    size_t len = 0;
    sim_rundir_lock *lock = NULL;
    int rc = open_golden(opt->golden, &lock, err);
    if (rc == SIM_OK)
        rc = sim_output_mkdirs(opt->golden, err);
    for (unsigned i = 0; i < opt->seeds && rc == SIM_OK; i++) {
        len += (size_t)snprintf(seeds + len, sizeof(seeds) - len, "%" PRIu64 "\n", seed0 + i);
        char set[64], dir[PATH_TEXT];
        snprintf(set, sizeof(set), "seed=%" PRIu64, seed0 + i);
        if (snprintf(dir, sizeof(dir), "%s/seed-%" PRIu64, opt->golden, seed0 + i) >=
            (int)sizeof(dir)) {
            rc = sim_err_set(err, SIM_EINVAL, NULL, "path too long: %s", opt->golden);
            break;
        }
        if ((sc = load(opt, set, err)) == NULL) {
            rc = err->code;
            break;
        }
        rc = run(sc, dir, err);
        sim_scenario_destroy(sc);
        if (rc == SIM_OK)
            rc = write_fingerprint(dir, err);
    }
    if (rc == SIM_OK)
        rc = sim_output_write(opt->golden, "seeds", seeds, err);
    sim_rundir_unlock(lock);
    if (rc == SIM_OK)
        fprintf(out, "%s: golden written to %s (%u seed%s)\n", opt->scenario, opt->golden,
                opt->seeds, opt->seeds > 1 ? "s" : "");
    return rc;
}

/* The golden's seed directories, from DIR/seeds (one seed a line, as --update wrote it, so
 * that directories of an older golden with more seeds are not counted). */
static int list_golden(const char *golden, char **dirs, size_t *n, sim_err *err)
{
    char path[PATH_TEXT], line[64];
    *n = 0;
    snprintf(path, sizeof(path), "%s/seeds", golden);
    FILE *f = fopen(path, "r");
    if (f == NULL)
        return sim_err_set(err, SIM_EINVAL, NULL, "%s: no golden here (write one with --update)",
                           golden);
    int rc = SIM_OK;
    while (rc == SIM_OK && *n < MAX_GOLDEN && fgets(line, sizeof(line), f) != NULL) {
        char *end = NULL;
        unsigned long long seed = strtoull(line, &end, 10);
        if (end == line || (*end != '\n' && *end != '\0')) {
            rc = sim_err_set(err, SIM_EINVAL, NULL, "%s: not a list of seeds", path);
            break;
        }
        size_t size = strlen(golden) + 32;
        if ((dirs[*n] = malloc(size)) == NULL) {
            rc = sim_err_set(err, SIM_ENOMEM, NULL, "out of memory");
            break;
        }
        snprintf(dirs[(*n)++], size, "%s/seed-%llu", golden, seed);
    }
    fclose(f);
    if (rc == SIM_OK && *n == 0)
        rc = sim_err_set(err, SIM_EINVAL, NULL, "%s: no seeds", path);
    return rc;
}

static int check_exact(const sim_scenario *sc, const char *golden, const char *dir, FILE *out,
                       sim_err *err)
{
    char path[PATH_TEXT], want[1024], got[1024];
    snprintf(path, sizeof(path), "%s/seed-%" PRIu64 "/fingerprint", golden, sc->seed);
    FILE *f = fopen(path, "r");
    if (f == NULL)
        return sim_err_set(err, SIM_EINVAL, NULL, "%s: no golden fingerprint for seed %" PRIu64,
                           golden, sc->seed);
    size_t n = fread(want, 1, sizeof(want) - 1, f);
    want[n] = '\0';
    fclose(f);
    fingerprint(dir, got, sizeof(got));
    if (strcmp(want, got) == 0) {
        fprintf(out, "%s: ok, every output byte as in %s (but the wall line)\n", sc->file, path);
        return APP_CHECK_PASS;
    }
    fprintf(out, "%s: REGRESSION: outputs differ from %s\n", sc->file, path);
    for (size_t i = 0; i < sizeof(fingerprint_files) / sizeof(fingerprint_files[0]); i++) {
        char line[128];
        uint64_t h = 0;
        bool here = file_hash(dir, fingerprint_files[i], &h);
        snprintf(line, sizeof(line), "%s %016" PRIx64 "\n", fingerprint_files[i], h);
        bool there = strstr(want, fingerprint_files[i]) != NULL;
        if (here != there || (here && strstr(want, line) == NULL))
            fprintf(out, "  %s differs\n", fingerprint_files[i]);
    }
    return APP_CHECK_REGRESSION;
}

typedef struct tol {
    enum app_curve_col col;
    double abs, rel;
} tol;

/* Compares row i of the run with the golden band; prints it if out of band and `show`. */
static bool row_ok(const app_curve *run, const app_curve *g, size_t ng, size_t i, const tol *t,
                   size_t nt, FILE *out, bool show)
{
    bool ok = true;
    for (size_t k = 0; k < nt; k++) {
        double lo = INFINITY, hi = -INFINITY, v = run->col[t[k].col][i];
        size_t nan = 0;
        for (size_t s = 0; s < ng; s++) {
            double x = i < g[s].n ? g[s].col[t[k].col][i] : (double)NAN;
            nan += isnan(x);
            lo = x < lo ? x : lo;
            hi = x > hi ? x : hi;
        }
        if (nan == ng && isnan(v))
            continue;
        double w = t[k].abs + t[k].rel * fmax(fabs(lo), fabs(hi));
        if (!isnan(v) && nan == 0 && v >= lo - w && v <= hi + w)
            continue;
        ok = false;
        if (show)
            fprintf(out,
                    "  row %zu (time_s %.9g): %s %.9g outside [%.9g, %.9g] (golden %.9g to "
                    "%.9g, tolerance %.3g)\n",
                    i, run->col[APP_CURVE_TIME][i], app_curve_names[t[k].col], v, lo - w, hi + w,
                    lo, hi, w);
    }
    return ok;
}

/* Writes check.png (and the two CSVs it draws) into `dir`, and *drawn = true. A file that
 * cannot be written whole fails (SIM_EIO naming it); a `dir` that cannot be passed to gnuplot
 * only leaves the figure out (*drawn = false). */
static int figure(const char *dir, const app_curve *run, const app_curve *g, size_t ng, bool *drawn,
                  sim_err *err)
{
    char vars[4 * PATH_TEXT];
    *drawn = false;
    int rc = app_curve_write_band(dir, "check-golden.csv", g, ng, APP_CURVE_TIME, err);
    if (rc == SIM_OK)
        rc = app_curve_write_band(dir, "check-run.csv", run, 1, APP_CURVE_TIME, err);
    if (rc != SIM_OK || sim_plot_path_ok("run directory", dir, NULL) != SIM_OK)
        return rc;
    *drawn = true;
    snprintf(vars, sizeof(vars),
             "ins='%s/check-golden.csv %s/check-run.csv'; titles='golden run'; "
             "heading='check: run against the golden band'; xlabel='simulated time (s)'",
             dir, dir);
    return sim_plot_draw("bands.gp", vars, dir, "check.png", err);
}

static int check_band(const sim_scenario *sc, const char *golden, char **gdirs, size_t ng,
                      const char *dir, FILE *out, sim_err *err)
{
    const tol t[] = {
        { APP_CURVE_ACC, sc->check_accuracy_abs, sc->check_accuracy_rel },
        { APP_CURVE_LOSS, sc->check_loss_abs, sc->check_loss_rel },
        { APP_CURVE_TP, sc->check_throughput_abs, sc->check_throughput_rel },
    };
    app_curve *g = calloc(ng, sizeof(*g)), r;
    int rc = g == NULL ? sim_err_set(err, SIM_ENOMEM, NULL, "out of memory") : SIM_OK;
    for (size_t s = 0; s < ng && rc == SIM_OK; s++)
        rc = app_curve_read(gdirs[s], &g[s], err);
    if (rc == SIM_OK)
        rc = app_curve_read(dir, &r, err);
    if (rc != SIM_OK)
        goto done;
    size_t bad = 0, rows = g[0].n;
    for (size_t i = 0; i < r.n; i++) {
        bool time_ok = i < rows && r.col[APP_CURVE_TIME][i] == g[0].col[APP_CURVE_TIME][i];
        if (!time_ok || !row_ok(&r, g, ng, i, t, 3, out, false)) {
            if (bad == 0)
                fprintf(out, "%s: REGRESSION against %s (%zu golden seed%s):\n", sc->file, golden,
                        ng, ng > 1 ? "s" : "");
            if (bad < SHOW_ROWS && !time_ok)
                fprintf(out, "  row %zu (time_s %.9g): the golden has no such row\n", i,
                        r.col[APP_CURVE_TIME][i]);
            else if (bad < SHOW_ROWS)
                row_ok(&r, g, ng, i, t, 3, out, true);
            bad++;
        }
    }
    if (r.n < rows) {
        if (bad == 0)
            fprintf(out, "%s: REGRESSION:\n", sc->file);
        fprintf(out, "  the run has %zu evaluation rows, the golden %zu\n", r.n, rows);
        bad++;
    }
    bool drawn = false;
    if (bad > 0 && (rc = figure(dir, &r, g, ng, &drawn, err)) == SIM_OK && drawn) {
        fprintf(out, "  %zu of %zu rows out of band; figure: %s/check.png\n", bad, r.n, dir);
    } else if (bad > 0) {
        fprintf(out, "  %zu of %zu rows out of band; no figure\n", bad, r.n);
    } else {
        fprintf(out, "%s: ok, %zu rows within the band of %zu golden seed%s\n", sc->file, r.n, ng,
                ng > 1 ? "s" : "");
    }
    if (rc == SIM_OK)
        rc = bad > 0 ? APP_CHECK_REGRESSION : APP_CHECK_PASS;
    app_curve_fini(&r);
done:
    for (size_t s = 0; s < ng && g != NULL; s++)
        app_curve_fini(&g[s]);
    free(g);
    return rc;
}

int app_check_run(const app_check_options *opt, FILE *out, sim_err *err)
{
    sim_err_clear(err);
    if (opt->update)
        return update(opt, out, err);
    char *gdirs[MAX_GOLDEN];
    size_t ng = 0;
    sim_scenario *sc = load(opt, NULL, err);
    if (sc == NULL)
        return err->code;
    int rc = list_golden(opt->golden, gdirs, &ng, err);
    char dir[PATH_TEXT];
    snprintf(dir, sizeof(dir), "%s", opt->out_dir != NULL ? opt->out_dir : sc->out_dir);
    if (rc == SIM_OK) /* the run's own checks (sim/rundir.h) refuse run and work directories */
        rc = sim_rundir_check_within(dir, SIM_RUNDIR_BIT(SIM_RUNDIR_GOLDEN), err);
    if (rc == SIM_OK)
        rc = run(sc, dir, err);
    if (rc == SIM_OK && opt->exact)
        rc = check_exact(sc, opt->golden, dir, out, err);
    else if (rc == SIM_OK)
        rc = check_band(sc, opt->golden, gdirs, ng, dir, out, err);
    for (size_t s = 0; s < ng; s++)
        free(gdirs[s]);
    sim_scenario_destroy(sc);
    return rc;
}
