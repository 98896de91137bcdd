/* Golden-curve regression checks (see check.h). */
#define _GNU_SOURCE /* renameat2 and RENAME_EXCHANGE (glibc 2.28 and later), nftw */
#include "app/check.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <inttypes.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "app/curves.h"
#include "app/stats.h"
#include "protocols/registry.h"
#include "runtime/run.h"
#include "sim/cfg.h"
#include "sim/output.h"
#include "sim/plot.h"
#include "sim/rundir.h"
#include "sim/scenario.h"

#define PATH_TEXT     1024
#define MAX_GOLDEN    64                       /* seeds in one golden */
#define GOLDEN_MIN    3                        /* seeds a statistical check needs */
#define GOLDEN_FORMAT 2                        /* golden.json's format */
#define GOLDEN_MARKER ".hetsim-golden-partial" /* marks an update's work directory */

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

static int run(const app_check_options *opt, sim_scenario *sc, const char *dir, sim_err *err)
{
    sim_run_options ro = { .out_dir = dir, .threads = opt->threads };
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

/* Reads dir/name whole into a malloc'd string (NULL if it cannot be read). */
static char *slurp(const char *dir, const char *name, size_t *len)
{
    char path[PATH_TEXT];
    if (snprintf(path, sizeof(path), "%s/%s", dir, name) >= (int)sizeof(path))
        return NULL;
    return sim_output_read(path, len);
}

/* Parses dir/name as JSON; NULL (with `err` naming the file) if absent or malformed. */
static sim_cfg *read_json(const char *dir, const char *name, sim_err *err)
{
    char path[PATH_TEXT];
    size_t len = 0;
    if (snprintf(path, sizeof(path), "%s/%s", dir, name) >= (int)sizeof(path)) {
        sim_err_set(err, SIM_EINVAL, NULL, "%s/%s: path too long", dir, name);
        return NULL;
    }
    char *text = slurp(dir, name, &len);
    if (text == NULL) {
        sim_err_set(err, SIM_EINVAL, NULL, "%s: missing or unreadable", path);
        return NULL;
    }
    sim_cfg *cfg = sim_cfg_parse(text, len, path, err);
    free(text);
    if (cfg == NULL && err->code != SIM_ENOMEM)
        err->code = SIM_EINVAL;
    return cfg;
}

/* ---- Updates: a golden written beside the old one and swapped in whole ------------------ */

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)ftw;
    return (flag == FTW_DP ? rmdir(path) : unlink(path)) != 0 ? -1 : 0;
}

/* Removes `path` and everything under it (symbolic links are removed, not followed). */
static void remove_tree(const char *path)
{
    nftw(path, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

static bool exists(const char *dir, const char *name)
{
    char path[2 * PATH_TEXT];
    struct stat st;
    snprintf(path, sizeof(path), "%s%s%s", dir, name[0] != '\0' ? "/" : "", name);
    return stat(path, &st) == 0;
}

/* True if `dir` is absent, an empty directory, or a golden (it has a seeds file): a
 * directory that an update may replace. */
static bool replaceable(const char *dir)
{
    DIR *d = opendir(dir);
    if (d == NULL)
        return errno == ENOENT;
    size_t n = 0;
    for (struct dirent *e = readdir(d); e != NULL; e = readdir(d))
        n += strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0;
    closedir(d);
    return n == 0 || exists(dir, "seeds");
}

/* Moves the complete new golden `work` into place as `golden`: an atomic exchange with the
 * old golden when there is one (the old one, now at `work`, is then removed), a rename
 * otherwise. A process killed at any point leaves `golden` old or new, whole; `work` (the
 * new golden or the old one) is removed by the next update. */
static int swap_golden(const char *golden, const char *work, sim_err *err)
{
    if (renameat2(AT_FDCWD, work, AT_FDCWD, golden, RENAME_EXCHANGE) == 0) {
        remove_tree(work);
        return SIM_OK;
    }
    if ((errno == ENOENT || errno == EINVAL || errno == ENOSYS) && rename(work, golden) == 0)
        return SIM_OK;
    int rc =
        sim_err_set(err, SIM_EIO, NULL, "cannot move %s to %s: %s", work, golden, strerror(errno));
    remove_tree(work);
    return rc;
}

/* The scenario hash recorded in dir/run.json, into out[32]. */
static int run_hash(const char *dir, char *out, sim_err *err)
{
    sim_cfg *run = read_json(dir, "run.json", err);
    int rc = run == NULL ? err->code : sim_cfg_string(run, "scenario_hash", out, 32, err);
    sim_cfg_destroy(run);
    return rc;
}

static int update_locked(const app_check_options *opt, const char *golden, FILE *out, sim_err *err);

/* Refuses a golden inside any hetsim output (a run, a work directory, a sweep's, another
 * golden), takes the golden's lock (GOLDEN.lock, sim/rundir.h) for the whole update, and
 * writes it. */
static int update(const app_check_options *opt, FILE *out, sim_err *err)
{
    char golden[PATH_TEXT];
    snprintf(golden, sizeof(golden), "%s", opt->golden);
    for (size_t len = strlen(golden); len > 1 && golden[len - 1] == '/'; len--)
        golden[len - 1] = '\0';
    const unsigned kinds = SIM_RUNDIR_BIT(SIM_RUNDIR_RUN) | SIM_RUNDIR_BIT(SIM_RUNDIR_WORK) |
                           SIM_RUNDIR_BIT(SIM_RUNDIR_SWEEP) | SIM_RUNDIR_BIT(SIM_RUNDIR_GOLDEN);
    sim_rundir_lock *lock = NULL;
    int rc = sim_rundir_check_within(golden, kinds, err);
    if (rc == SIM_OK)
        rc = sim_rundir_lock_take(golden, &lock, err);
    if (rc == SIM_OK)
        rc = update_locked(opt, golden, out, err);
    sim_rundir_unlock(lock);
    return rc;
}

static int update_locked(const app_check_options *opt, const char *golden, FILE *out, sim_err *err)
{
    char work[PATH_TEXT + 16], dir[PATH_TEXT + 64], hash[32];
    if (snprintf(work, sizeof(work), "%s.partial", golden) >= (int)sizeof(work) - 1)
        return sim_err_set(err, SIM_EINVAL, NULL, "path too long: %s", golden);
    if (!replaceable(golden))
        return sim_err_set(err, SIM_EINVAL, NULL,
                           "%s: not a golden (no seeds file) and not empty: not replaced", golden);
    if (exists(work, "") && !exists(work, GOLDEN_MARKER) && !exists(work, "seeds"))
        return sim_err_set(err, SIM_EINVAL, NULL,
                           "%s: in the way of the update, and not an update's work: not removed",
                           work);
    sim_scenario *sc = load(opt, NULL, err);
    if (sc == NULL)
        return err->code;
    uint64_t seed0 = sc->seed;
    sim_scenario_destroy(sc);
    remove_tree(work); /* what a killed update left */
    int rc = sim_output_mkdirs(work, err);
    if (rc == SIM_OK)
        rc = sim_output_write(work, GOLDEN_MARKER, "", err);
    char seeds[MAX_GOLDEN * 24], json[MAX_GOLDEN * 64 + 256], hashes[MAX_GOLDEN * 24];
    size_t len = 0, jlen = 0, hlen = 0;
    for (unsigned i = 0; i < opt->seeds && rc == SIM_OK; i++) {
        char set[64];
        len += (size_t)snprintf(seeds + len, sizeof(seeds) - len, "%" PRIu64 "\n", seed0 + i);
        jlen += (size_t)snprintf(json + jlen, sizeof(json) - jlen, "%s%" PRIu64, i > 0 ? ", " : "",
                                 seed0 + i);
        snprintf(set, sizeof(set), "seed=%" PRIu64, seed0 + i);
        snprintf(dir, sizeof(dir), "%s/seed-%" PRIu64, work, seed0 + i);
        if ((sc = load(opt, set, err)) == NULL) {
            rc = err->code;
            break;
        }
        rc = run(opt, sc, dir, err);
        sim_scenario_destroy(sc);
        if (rc == SIM_OK)
            rc = write_fingerprint(dir, err);
        if (rc == SIM_OK)
            rc = run_hash(dir, hash, err);
        if (rc == SIM_OK)
            hlen += (size_t)snprintf(hashes + hlen, sizeof(hashes) - hlen, "%s\"%s\"",
                                     i > 0 ? ", " : "", hash);
    }
    if (rc == SIM_OK)
        rc = sim_output_write(work, "seeds", seeds, err);
    if (rc == SIM_OK) {
        char text[sizeof(json) + sizeof(hashes) + 256];
        snprintf(text, sizeof(text),
                 "{\n  \"format\": %d,\n  \"hetsim_version\": \"%s\",\n  \"seeds\": [%s],\n"
                 "  \"scenario_hashes\": [%s]\n}\n",
                 GOLDEN_FORMAT, HETSIM_VERSION, json, hashes);
        rc = sim_output_write(work, "golden.json", text, err);
    }
    if (rc == SIM_OK) {
        snprintf(dir, sizeof(dir), "%s/%s", work, GOLDEN_MARKER);
        if (remove(dir) != 0)
            rc = sim_err_set(err, SIM_EIO, NULL, "cannot remove %s: %s", dir, strerror(errno));
    }
    if (rc == SIM_OK)
        rc = swap_golden(golden, work, err);
    else
        remove_tree(work);
    if (rc == SIM_OK)
        fprintf(out, "%s: golden written to %s (%u seeds from %" PRIu64 ", hetsim %s)\n",
                opt->scenario, golden, opt->seeds, seed0, HETSIM_VERSION);
    return rc;
}

/* ---- Goldens, validated before use ------------------------------------------------------ */

typedef struct gold {
    const char *path;                /* the golden directory */
    size_t k;                        /* seeds */
    uint64_t seed[MAX_GOLDEN];       /* (k) */
    char hash[MAX_GOLDEN][32];       /* (k) the scenario hash of each seed's run */
    char version[64];                /* hetsim's version that wrote it */
    char dir[MAX_GOLDEN][PATH_TEXT]; /* (k) the seed directories */
    app_curve curve[MAX_GOLDEN];     /* (k) their metrics.csv */
} gold;

static void golden_fini(gold *g)
{
    for (size_t s = 0; s < g->k; s++)
        app_curve_fini(&g->curve[s]);
}

static bool has_seed(const gold *g, uint64_t seed)
{
    for (size_t s = 0; s < g->k; s++)
        if (g->seed[s] == seed)
            return true;
    return false;
}

/* The seeds file: one seed a line, no duplicates, at least GOLDEN_MIN seeds. */
static int read_seeds(gold *g, sim_err *err)
{
    char path[PATH_TEXT], line[64];
    snprintf(path, sizeof(path), "%s/seeds", g->path);
    FILE *f = fopen(path, "r");
    if (f == NULL)
        return sim_err_set(err, SIM_EINVAL, NULL, "%s: no golden here (write one with --update)",
                           g->path);
    int rc = SIM_OK;
    while (rc == SIM_OK && fgets(line, sizeof(line), f) != NULL) {
        char *end = NULL;
        errno = 0;
        unsigned long long seed = strtoull(line, &end, 10);
        if (end == line || *end != '\n' || errno != 0 || line[0] == '-')
            rc = sim_err_set(err, SIM_EINVAL, NULL, "%s: line %zu: not a seed", path, g->k + 1);
        else if (has_seed(g, seed))
            rc = sim_err_set(err, SIM_EINVAL, NULL, "%s: seed %llu listed twice", path, seed);
        else if (g->k == MAX_GOLDEN)
            rc = sim_err_set(err, SIM_EINVAL, NULL, "%s: more than %d seeds", path, MAX_GOLDEN);
        else
            g->seed[g->k++] = seed;
    }
    fclose(f);
    if (rc == SIM_OK && g->k < GOLDEN_MIN)
        rc = sim_err_set(err, SIM_EINVAL, NULL,
                         "%s: %zu seed%s; a statistical check needs at least %d (--update "
                         "--seeds 5)",
                         path, g->k, g->k == 1 ? "" : "s", GOLDEN_MIN);
    return rc;
}

/* golden.json: format, version and one scenario hash per seed, in the seeds file's order. */
static int read_manifest(gold *g, sim_err *err)
{
    sim_cfg *m = read_json(g->path, "golden.json", err);
    if (m == NULL)
        return sim_err_set(err, SIM_EINVAL, NULL,
                           "%s/golden.json: missing or unreadable (a golden of an older hetsim? "
                           "write it again with --update)",
                           g->path);
    int64_t format = 0;
    size_t n = 0, nh = 0;
    int rc = sim_cfg_int(m, "format", 0, 1000, &format, err);
    if (rc == SIM_OK && format != GOLDEN_FORMAT)
        rc = sim_err_set(err, SIM_EINVAL, NULL, "%s/golden.json: format %d expected, got %d",
                         g->path, GOLDEN_FORMAT, (int)format);
    if (rc == SIM_OK && (rc = sim_cfg_require(m, "hetsim_version", err)) == SIM_OK)
        rc = sim_cfg_string(m, "hetsim_version", g->version, sizeof(g->version), err);
    if (rc == SIM_OK)
        rc = sim_cfg_array_len(m, "seeds", &n, err);
    if (rc == SIM_OK)
        rc = sim_cfg_array_len(m, "scenario_hashes", &nh, err);
    if (rc == SIM_OK && (n != g->k || nh != g->k))
        rc = sim_err_set(err, SIM_EINVAL, NULL,
                         "%s/golden.json: %zu seeds and %zu hashes, the seeds file lists %zu",
                         g->path, n, nh, g->k);
    for (size_t i = 0; i < g->k && rc == SIM_OK; i++) {
        char *seed = NULL, *hash = NULL;
        rc = sim_cfg_at_json(m, "seeds", i, &seed, err);
        if (rc == SIM_OK)
            rc = sim_cfg_at_json(m, "scenario_hashes", i, &hash, err);
        if (rc == SIM_OK && strtoull(seed, NULL, 10) != g->seed[i])
            rc = sim_err_set(err, SIM_EINVAL, NULL,
                             "%s/golden.json: seed %zu is %s, the seeds file says %" PRIu64,
                             g->path, i + 1, seed, g->seed[i]);
        if (rc == SIM_OK && (strlen(hash) != 18 || hash[0] != '"'))
            rc = sim_err_set(err, SIM_EINVAL, NULL, "%s/golden.json: bad scenario hash %s", g->path,
                             hash);
        else if (rc == SIM_OK)
            snprintf(g->hash[i], sizeof(g->hash[i]), "%.16s", hash + 1);
        free(seed);
        free(hash);
    }
    sim_cfg_destroy(m);
    return rc == SIM_OK || err->code == SIM_ENOMEM ? rc : (err->code = SIM_EINVAL);
}

/* Every seed-<S> directory is listed in the seeds file and every listed seed has one. */
static int check_listing(const gold *g, sim_err *err)
{
    DIR *d = opendir(g->path);
    if (d == NULL)
        return sim_err_set(err, SIM_EINVAL, NULL, "%s: cannot list: %s", g->path, strerror(errno));
    int rc = SIM_OK;
    for (struct dirent *e = readdir(d); e != NULL && rc == SIM_OK; e = readdir(d)) {
        char *end = NULL;
        if (strncmp(e->d_name, "seed-", 5) != 0)
            continue;
        unsigned long long seed = strtoull(e->d_name + 5, &end, 10);
        if (*end != '\0' || !has_seed(g, seed))
            rc = sim_err_set(err, SIM_EINVAL, NULL, "%s/%s: not listed in %s/seeds", g->path,
                             e->d_name, g->path);
    }
    closedir(d);
    for (size_t s = 0; s < g->k && rc == SIM_OK; s++)
        if (!exists(g->dir[s], ""))
            rc = sim_err_set(err, SIM_EINVAL, NULL, "%s: missing (listed in %s/seeds)", g->dir[s],
                             g->path);
    return rc;
}

/* The files a check uses hash as the seed's fingerprint says: nothing edited or truncated. */
static int check_fingerprint(const gold *g, size_t s, sim_err *err)
{
    static const char *const used[] = { "metrics.csv", "run.json" };
    char *want = slurp(g->dir[s], "fingerprint", NULL);
    if (want == NULL)
        return sim_err_set(err, SIM_EINVAL, NULL,
                           "%s/fingerprint: missing or unreadable (an incomplete golden: write "
                           "it again with --update)",
                           g->dir[s]);
    int rc = SIM_OK;
    for (size_t i = 0; i < 2 && rc == SIM_OK; i++) {
        char line[128];
        uint64_t h = 0;
        if (!file_hash(g->dir[s], used[i], &h)) {
            rc = sim_err_set(err, SIM_EINVAL, NULL,
                             "%s/%s: missing or unreadable (an incomplete golden: write it again "
                             "with --update)",
                             g->dir[s], used[i]);
            break;
        }
        snprintf(line, sizeof(line), "%s %016" PRIx64 "\n", used[i], h);
        if (strstr(want, line) == NULL)
            rc = sim_err_set(err, SIM_EINVAL, NULL,
                             "%s/%s: does not match %s/fingerprint (edited or truncated)",
                             g->dir[s], used[i], g->dir[s]);
    }
    free(want);
    return rc;
}

/* run.json of seed s: its seed, scenario hash and version are the golden's. */
static int check_run_json(const gold *g, size_t s, sim_err *err)
{
    sim_cfg *run = read_json(g->dir[s], "run.json", err);
    if (run == NULL)
        return err->code;
    int64_t seed = -1;
    char hash[32] = "", version[64] = "";
    int rc = sim_cfg_int(run, "seed", 0, INT64_MAX, &seed, err);
    if (rc == SIM_OK)
        rc = sim_cfg_string(run, "scenario_hash", hash, sizeof(hash), err);
    if (rc == SIM_OK)
        rc = sim_cfg_string(run, "hetsim_version", version, sizeof(version), err);
    if (rc == SIM_OK && (uint64_t)seed != g->seed[s])
        rc = sim_err_set(err, SIM_EINVAL, NULL, "%s/run.json: seed %" PRId64 ", not %" PRIu64,
                         g->dir[s], seed, g->seed[s]);
    if (rc == SIM_OK && strcmp(hash, g->hash[s]) != 0)
        rc = sim_err_set(err, SIM_EINVAL, NULL,
                         "%s/run.json: scenario hash %s, golden.json says %s (a run of another "
                         "scenario)",
                         g->dir[s], hash, g->hash[s]);
    if (rc == SIM_OK && strcmp(version, g->version) != 0)
        rc = sim_err_set(err, SIM_EINVAL, NULL,
                         "%s/run.json: hetsim %s, golden.json says %s (seeds of two versions)",
                         g->dir[s], version, g->version);
    sim_cfg_destroy(run);
    return rc == SIM_OK || err->code == SIM_ENOMEM ? rc : (err->code = SIM_EINVAL);
}

/* The first line of dir/metrics.csv into out[size] ("" if unreadable). */
static void header(const char *dir, char *out, size_t size)
{
    char path[PATH_TEXT];
    out[0] = '\0';
    if (snprintf(path, sizeof(path), "%s/metrics.csv", dir) >= (int)sizeof(path))
        return; /* unreadable: the shapes then differ, and the check says which seed */
    FILE *f = fopen(path, "r");
    if (f != NULL && fgets(out, (int)size, f) == NULL)
        out[0] = '\0';
    if (f != NULL)
        fclose(f);
}

static const enum app_curve_col tested_cols[] = { APP_CURVE_ACC, APP_CURVE_LOSS, APP_CURVE_TP };

/* Seed s has the columns, rows, times and empty fields of seed 0. */
static int check_same_shape(const gold *g, size_t s, sim_err *err)
{
    char h0[4096], h[4096];
    header(g->dir[0], h0, sizeof(h0));
    header(g->dir[s], h, sizeof(h));
    const app_curve *a = &g->curve[0], *b = &g->curve[s];
    if (strcmp(h0, h) != 0)
        return sim_err_set(err, SIM_EINVAL, NULL, "%s/metrics.csv: columns differ from %s's",
                           g->dir[s], g->dir[0]);
    if (a->n != b->n)
        return sim_err_set(err, SIM_EINVAL, NULL, "%s/metrics.csv: %zu rows, %s has %zu", g->dir[s],
                           b->n, g->dir[0], a->n);
    for (size_t i = 0; i < a->n; i++) {
        if (a->col[APP_CURVE_TIME][i] != b->col[APP_CURVE_TIME][i])
            return sim_err_set(err, SIM_EINVAL, NULL,
                               "%s/metrics.csv: row %zu at time_s %.9g, %s's at %.9g", g->dir[s], i,
                               b->col[APP_CURVE_TIME][i], g->dir[0], a->col[APP_CURVE_TIME][i]);
        for (size_t k = 0; k < 3; k++)
            if (isnan(a->col[tested_cols[k]][i]) != isnan(b->col[tested_cols[k]][i]))
                return sim_err_set(err, SIM_EINVAL, NULL, "%s/metrics.csv: row %zu: %s %s, %s's %s",
                                   g->dir[s], i, app_curve_names[tested_cols[k]],
                                   isnan(b->col[tested_cols[k]][i]) ? "empty" : "set", g->dir[0],
                                   isnan(a->col[tested_cols[k]][i]) ? "empty" : "set");
    }
    return SIM_OK;
}

/* Loads and validates the golden at `path`; on error `err` names the file at fault and the
 * code is SIM_EINVAL (or SIM_ENOMEM). */
static int read_golden(const char *path, gold *g, sim_err *err)
{
    memset(g, 0, sizeof(*g));
    g->path = path;
    int rc = read_seeds(g, err);
    for (size_t s = 0; s < g->k; s++)
        snprintf(g->dir[s], sizeof(g->dir[s]), "%s/seed-%" PRIu64, path, g->seed[s]);
    if (rc == SIM_OK)
        rc = check_listing(g, err);
    if (rc == SIM_OK)
        rc = read_manifest(g, err);
    size_t loaded = 0;
    for (size_t s = 0; s < g->k && rc == SIM_OK; s++) {
        rc = check_fingerprint(g, s, err);
        if (rc == SIM_OK)
            rc = check_run_json(g, s, err);
        if (rc == SIM_OK && (rc = app_curve_read(g->dir[s], &g->curve[s], err)) == SIM_OK)
            loaded++;
        if (rc == SIM_OK)
            rc = check_same_shape(g, s, err);
    }
    if (rc != SIM_OK) {
        size_t k = g->k;
        g->k = loaded;
        golden_fini(g);
        g->k = k;
        if (err->code != SIM_ENOMEM)
            err->code = SIM_EINVAL;
    }
    return rc;
}

/* Compares the scenario of the check's run (dir/run.json) with the golden's first seed's, but
 * for the keys that do not change the curves' distribution: the seed, the output section and
 * the check's tolerances. Lists the differing keys in out[size]; returns their number, or -1
 * with `err` filled. */
static long scenario_diff(const gold *g, const char *dir, char *out, size_t size, sim_err *err)
{
    static const char *const skip[] = { "seed", "output", "check" };
    sim_cfg *a = read_json(g->dir[0], "run.json", err), *b = NULL, *sa = NULL, *sb = NULL;
    if (a != NULL)
        b = read_json(dir, "run.json", err);
    long n = -1;
    if (b != NULL && sim_cfg_child(a, "scenario", &sa, err) == SIM_OK &&
        sim_cfg_child(b, "scenario", &sb, err) == SIM_OK) {
        if (sa == NULL || sb == NULL)
            sim_err_set(err, SIM_EINVAL, NULL, "%s/run.json: no scenario",
                        sa == NULL ? g->dir[0] : dir);
        else
            n = (long)sim_cfg_diff(sa, sb, skip, 3, out, size);
    }
    sim_cfg_destroy(a);
    sim_cfg_destroy(b);
    return n;
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

/* ---- The statistical test --------------------------------------------------------------- */

/* The statistics compared, each a number per run (docs/check.md). */
enum stat_id {
    ST_ACC_MEAN,
    ST_ACC_FINAL,
    ST_ACC_JITTER,
    ST_LOSS,
    ST_TP,
    NSTATS
};

static const struct stat_def {
    const char *name;  /* in messages, check.csv and the JUnit report */
    const char *curve; /* the JUnit test case it belongs to */
    enum app_curve_col col;
} stat_defs[NSTATS] = {
    { "accuracy_mean", "test_accuracy", APP_CURVE_ACC },
    { "accuracy_final", "test_accuracy", APP_CURVE_ACC },
    { "accuracy_jitter", "test_accuracy", APP_CURVE_ACC },
    { "log_loss_mean", "test_loss", APP_CURVE_LOSS },
    { "throughput_mean", "throughput_sps", APP_CURVE_TP },
};

/* Statistic `st` of one run: a mean over rows [from, n) of the values (the logs for the
 * loss, the absolute change from the row before for the jitter), NaN without values. */
static double summary(const app_curve *c, enum stat_id st)
{
    size_t n = c->n, from = 0;
    if (st == ST_ACC_FINAL)
        from = n - (n / 3 > 0 ? n / 3 : 1);
    else if (st == ST_ACC_JITTER)
        from = n / 2 > 0 ? n / 2 : 1;
    else if (st == ST_TP)
        from = 1; /* row 0 (time 0) has no throughput yet */
    const double *v = c->col[stat_defs[st].col];
    double sum = 0.0;
    size_t m = 0;
    for (size_t i = from; i < n; i++) {
        double x = v[i];
        if (st == ST_ACC_JITTER)
            x = fabs(v[i] - v[i - 1]);
        else if (st == ST_LOSS)
            x = log(fmax(v[i], 1e-12));
        if (!isnan(x)) {
            sum += x;
            m++;
        }
    }
    return m > 0 ? sum / (double)m : (double)NAN;
}

typedef struct verdict {
    bool tested;  /* false: no values in the golden (a model without accuracy) */
    bool ok;      /* the run's mean lies within the band */
    double gmean; /* the golden seeds' mean */
    double gsd;   /* their standard deviation */
    double rmean; /* the run seeds' mean */
    double half;  /* the band's half-width: max(q * s * sqrt(1/K + 1/M), floor) */
    double floor; /* the tolerance floor */
} verdict;

/* The floor of statistic `st` from the scenario's tolerances, at golden mean `m`. */
static double floor_of(const sim_scenario *sc, enum stat_id st, double m)
{
    switch (st) {
    case ST_LOSS: /* a relative band on the loss is an absolute one on its log */
        return log1p(sc->check_loss_rel + sc->check_loss_abs / exp(m));
    case ST_TP:
        return sc->check_throughput_abs + sc->check_throughput_rel * fabs(m);
    default:
        return sc->check_accuracy_abs + sc->check_accuracy_rel * fabs(m);
    }
}

/* Tests of each statistic: the mean of the M run seeds must lie within
 * golden mean +- q * s * sqrt(1/K + 1/M), s the golden seeds' standard deviation and q the t
 * quantile with K - 1 degrees of freedom at two-sided level alpha / (number tested): a
 * prediction interval for the mean of M new seeds, so that the chance that any statistic
 * fails when the runs are seeds of the golden's distribution is at most alpha (Bonferroni).
 * The band depends on the golden alone (a perturbation that makes runs erratic cannot widen
 * it). Returns the number tested; *q receives the t quantile. */
static size_t test_stats(const sim_scenario *sc, const gold *g, const app_curve *runs, size_t m,
                         verdict *v, double *q)
{
    double x[NSTATS][MAX_GOLDEN];
    size_t tested = 0, k = g->k;
    for (size_t st = 0; st < NSTATS; st++) {
        verdict *r = &v[st];
        memset(r, 0, sizeof(*r));
        for (size_t s = 0; s < k; s++)
            x[st][s] = summary(&g->curve[s], (enum stat_id)st);
        if (app_stats_mean_sd(x[st], k, &r->gmean, &r->gsd) < k)
            r->gmean = NAN; /* a golden seed without values: not tested */
        for (size_t s = 0; s < m; s++)
            r->rmean += summary(&runs[s], (enum stat_id)st) / (double)m;
        r->tested = !isnan(r->gmean);
        tested += r->tested;
    }
    double df = (double)(k - 1);
    *q = app_stats_t_quantile(APP_CHECK_ALPHA / (2.0 * (double)(tested > 0 ? tested : 1)), df);
    for (size_t st = 0; st < NSTATS; st++) {
        verdict *r = &v[st];
        if (!r->tested)
            continue;
        r->floor = floor_of(sc, (enum stat_id)st, r->gmean);
        r->half = fmax(*q * r->gsd * sqrt(1.0 / (double)k + 1.0 / (double)m), r->floor);
        r->ok = isfinite(r->rmean) && fabs(r->rmean - r->gmean) <= r->half;
    }
    return tested;
}

/* ---- Reports: check.csv, check.png, JUnit ------------------------------------------------ */

static int write_stats(const char *dir, const verdict *v, sim_err *err)
{
    sim_file *f = sim_file_open(dir, "check.csv", err);
    if (f == NULL)
        return err->code;
    FILE *s = sim_file_stream(f);
    fputs("i,statistic,curve,golden_mean,golden_sd,run_mean,half_width,floor,z,ok\n", s);
    for (size_t st = 0, i = 0; st < NSTATS; st++) {
        if (!v[st].tested)
            continue;
        double z = v[st].half > 0 ? (v[st].rmean - v[st].gmean) / v[st].half : (double)NAN;
        fprintf(s, "%zu,%s,%s,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%d\n", i++, stat_defs[st].name,
                stat_defs[st].curve, v[st].gmean, v[st].gsd, v[st].rmean, v[st].half, v[st].floor,
                isfinite(z) ? fmax(fmin(z, 99.0), -99.0) : 99.0, v[st].ok);
    }
    return sim_file_commit(f, err);
}

/* check.png: the golden seeds and the runs per curve, and the tested statistics against
 * their bands, with the CSVs it draws, into `dir`; *drawn = true once written. A file that
 * cannot be written whole fails (SIM_EIO naming it, no figure left cut short); a `dir` that
 * cannot be passed to gnuplot only leaves the figure out (*drawn = false, said on `out`). */
static int figure(const char *dir, const gold *g, const app_curve *runs, size_t m, const verdict *v,
                  bool *drawn, FILE *out, sim_err *err)
{
    char vars[4 * PATH_TEXT];
    *drawn = false;
    int rc = write_stats(dir, v, err);
    if (rc == SIM_OK)
        rc = app_curve_write_band(dir, "check-golden.csv", g->curve, g->k, APP_CURVE_TIME,
                                  APP_CURVE_BAND_MINMAX, err);
    if (rc == SIM_OK)
        rc = app_curve_write_band(dir, "check-run.csv", runs, m, APP_CURVE_TIME,
                                  APP_CURVE_BAND_MINMAX, err);
    if (rc != SIM_OK)
        return rc;
    sim_err why;
    sim_err_clear(&why);
    if (sim_plot_path_ok("output directory", dir, &why) != SIM_OK) {
        fprintf(out, "  (no figure: %s)\n", why.msg);
        return SIM_OK;
    }
    snprintf(vars, sizeof(vars),
             "golden='%s/check-golden.csv'; run='%s/check-run.csv'; stats='%s/check.csv'; "
             "ngolden=%zu; nrun=%zu; xlabel='simulated time (s)'",
             dir, dir, dir, g->k, m);
    rc = sim_plot_draw("check.gp", vars, dir, "check.png", err);
    *drawn = rc == SIM_OK;
    return rc;
}

static void xml_text(FILE *f, const char *s)
{
    for (; *s != '\0'; s++) {
        if (*s == '&')
            fputs("&amp;", f);
        else if (*s == '<')
            fputs("&lt;", f);
        else if (*s == '>')
            fputs("&gt;", f);
        else if (*s == '"')
            fputs("&quot;", f);
        else if ((unsigned char)*s < 0x20 && *s != '\n' && *s != '\t')
            fputc(' ', f);
        else
            fputc(*s, f);
    }
}

/* Writes the JUnit XML report `path`: one test case per curve of the golden, or, when there
 * was no verdict (`v` NULL: an unusable golden, a failed run), one case "golden" in error
 * with `error`. */
static int write_junit(const char *path, const char *golden_dir, const verdict *v,
                       const char *error, sim_err *err)
{
    static const char *const curves[] = { "test_accuracy", "test_loss", "throughput_sps" };
    char dir[PATH_TEXT];
    const char *slash = strrchr(path, '/');
    snprintf(dir, sizeof(dir), "%.*s", slash != NULL ? (int)(slash - path) : 1,
             slash != NULL ? path : ".");
    if (dir[0] == '\0')
        snprintf(dir, sizeof(dir), "/");
    sim_file *file = sim_file_open(dir, slash != NULL ? slash + 1 : path, err);
    if (file == NULL)
        return err->code;
    FILE *f = sim_file_stream(file);
    size_t failures = 0, tests = v != NULL ? 3 : 1;
    for (size_t c = 0; c < 3 && v != NULL; c++) {
        bool ok = true;
        for (size_t st = 0; st < NSTATS; st++)
            ok &= !v[st].tested || strcmp(stat_defs[st].curve, curves[c]) != 0 || v[st].ok;
        failures += !ok;
    }
    fputs("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"hetsim check\">\n", f);
    fprintf(f, "  <testsuite name=\"");
    xml_text(f, golden_dir);
    fprintf(f, "\" tests=\"%zu\" failures=\"%zu\" errors=\"%d\">\n", tests, failures, v == NULL);
    if (v == NULL) {
        fputs("    <testcase classname=\"", f);
        xml_text(f, golden_dir);
        fputs("\" name=\"golden\">\n      <error message=\"", f);
        xml_text(f, error);
        fputs("\"/>\n    </testcase>\n", f);
    }
    for (size_t c = 0; c < 3 && v != NULL; c++) {
        fputs("    <testcase classname=\"", f);
        xml_text(f, golden_dir);
        fprintf(f, "\" name=\"%s\"", curves[c]);
        bool ok = true;
        for (size_t st = 0; st < NSTATS; st++)
            ok &= !v[st].tested || strcmp(stat_defs[st].curve, curves[c]) != 0 || v[st].ok;
        if (ok) {
            fputs("/>\n", f);
            continue;
        }
        fputs(">\n      <failure message=\"out of band:", f);
        for (size_t st = 0; st < NSTATS; st++)
            if (v[st].tested && strcmp(stat_defs[st].curve, curves[c]) == 0 && !v[st].ok)
                fprintf(f, " %s", stat_defs[st].name);
        fputs("\">", f);
        for (size_t st = 0; st < NSTATS; st++)
            if (v[st].tested && strcmp(stat_defs[st].curve, curves[c]) == 0)
                fprintf(f, "%s: golden %.6g, run %.6g, band +-%.3g: %s\n", stat_defs[st].name,
                        v[st].gmean, v[st].rmean, v[st].half, v[st].ok ? "ok" : "OUT");
        fputs("</failure>\n    </testcase>\n", f);
    }
    fputs("  </testsuite>\n</testsuites>\n", f);
    return sim_file_commit(file, err);
}

/* ---- The check -------------------------------------------------------------------------- */

/* Runs m seeds of the scenario (the first m from its own seed up that are not golden seeds)
 * into out_dir/seed-<S>, reading their curves into runs[]. */
static int run_seeds(const app_check_options *opt, const sim_scenario *sc, const gold *g,
                     const char *out_dir, app_curve *runs, uint64_t *seeds, size_t m, sim_err *err)
{
    uint64_t seed = sc->seed;
    int rc = SIM_OK;
    for (size_t s = 0; s < m && rc == SIM_OK; s++, seed++) {
        while (has_seed(g, seed))
            seed++;
        seeds[s] = seed;
        char set[64], dir[PATH_TEXT + 32];
        snprintf(set, sizeof(set), "seed=%" PRIu64, seed);
        snprintf(dir, sizeof(dir), "%s/seed-%" PRIu64, out_dir, seed);
        sim_scenario *one = load(opt, set, err);
        if (one == NULL)
            return err->code;
        rc = run(opt, one, dir, err);
        sim_scenario_destroy(one);
        if (rc == SIM_OK && (rc = app_curve_read(dir, &runs[s], err)) != SIM_OK &&
            err->code == SIM_EINVAL)
            err->code = SIM_EIO; /* the run's own output: not the user's */
    }
    return rc;
}

/* Row structure of the runs: the golden's rows at the golden's times. Prints the first
 * mismatch; returns false if any. */
static bool same_rows(const gold *g, const app_curve *runs, const uint64_t *seeds, size_t m,
                      FILE *out)
{
    const app_curve *a = &g->curve[0];
    for (size_t s = 0; s < m; s++) {
        if (runs[s].n != a->n) {
            fprintf(out, "  seed %" PRIu64 ": %zu evaluation rows, the golden %zu\n", seeds[s],
                    runs[s].n, a->n);
            return false;
        }
        for (size_t i = 0; i < a->n; i++)
            if (runs[s].col[APP_CURVE_TIME][i] != a->col[APP_CURVE_TIME][i]) {
                fprintf(out, "  seed %" PRIu64 ": row %zu at time_s %.9g, the golden's at %.9g\n",
                        seeds[s], i, runs[s].col[APP_CURVE_TIME][i], a->col[APP_CURVE_TIME][i]);
                return false;
            }
    }
    return true;
}

static int check_stat(const app_check_options *opt, const sim_scenario *sc, gold *g,
                      const char *out_dir, FILE *out, sim_err *err)
{
    size_t m = opt->seeds;
    app_curve runs[MAX_GOLDEN];
    uint64_t seeds[MAX_GOLDEN] = { 0 };
    verdict v[NSTATS];
    memset(runs, 0, sizeof(runs));
    int rc = run_seeds(opt, sc, g, out_dir, runs, seeds, m, err);
    char keys[1024], first[PATH_TEXT + 32];
    snprintf(first, sizeof(first), "%s/seed-%" PRIu64, out_dir, seeds[0]);
    long diff = rc == SIM_OK ? scenario_diff(g, first, keys, sizeof(keys), err) : 0;
    if (rc == SIM_OK && diff < 0)
        rc = err->code;
    if (rc == SIM_OK && diff > 0 && !opt->allow_scenario_change)
        rc = sim_err_set(err, SIM_EINVAL, NULL,
                         "%s: the scenario differs from the golden's (%s/run.json) in %ld "
                         "key%s: %s (the seed may differ; --allow-scenario-change to compare "
                         "anyway, --update to make a new golden)",
                         sc->file, g->dir[0], diff, diff > 1 ? "s" : "", keys);
    if (rc != SIM_OK)
        goto done;
    if (diff > 0)
        fprintf(out, "%s: note: compared with a golden of another scenario (%s)\n", sc->file, keys);
    if (strcmp(g->version, HETSIM_VERSION) != 0)
        fprintf(out, "%s: note: golden written by hetsim %s, this is %s\n", sc->file, g->version,
                HETSIM_VERSION);
    double q = 0;
    bool rows = same_rows(g, runs, seeds, m, out);
    size_t tested = test_stats(sc, g, runs, m, v, &q);
    size_t bad = !rows;
    for (size_t st = 0; st < NSTATS; st++)
        bad += v[st].tested && !v[st].ok;
    fprintf(out, "%s: %s against %s: %zu golden seeds, run seed%s", sc->file,
            bad > 0 ? "REGRESSION" : "ok", g->path, g->k, m > 1 ? "s" : "");
    for (size_t s = 0; s < m; s++)
        fprintf(out, "%s%" PRIu64, s > 0 ? ", " : " ", seeds[s]);
    fprintf(out, "; %zu statistics, false-alarm rate <= %g over all of them\n", tested,
            APP_CHECK_ALPHA);
    for (size_t st = 0; st < NSTATS; st++)
        if (v[st].tested)
            fprintf(out, "  %-16s golden %-11.6g run %-11.6g |diff| %-10.3g band %-10.3g %s\n",
                    stat_defs[st].name, v[st].gmean, v[st].rmean, fabs(v[st].rmean - v[st].gmean),
                    v[st].half, v[st].ok ? "ok" : "OUT OF BAND");
    bool drawn = false;
    if ((rc = figure(out_dir, g, runs, m, v, &drawn, out, err)) != SIM_OK)
        goto done;
    if (drawn)
        fprintf(out, "  figure: %s/check.png\n", out_dir);
    if (!rows)
        for (size_t st = 0; st < NSTATS; st++)
            v[st].ok = false;
    if (opt->junit != NULL && (rc = write_junit(opt->junit, g->path, v, NULL, err)) != SIM_OK)
        goto done;
    rc = bad > 0 ? APP_CHECK_REGRESSION : APP_CHECK_PASS;
done:
    for (size_t s = 0; s < m; s++)
        app_curve_fini(&runs[s]);
    return rc;
}

int app_check_run(const app_check_options *opt, FILE *out, sim_err *err)
{
    sim_err_clear(err);
    if (opt->update)
        return update(opt, out, err);
    sim_scenario *sc = load(opt, NULL, err);
    if (sc == NULL)
        return err->code;
    gold *g = calloc(1, sizeof(*g));
    int rc = g == NULL ? sim_err_set(err, SIM_ENOMEM, NULL, "out of memory") : SIM_OK;
    char dir[PATH_TEXT];
    snprintf(dir, sizeof(dir), "%s", opt->out_dir != NULL ? opt->out_dir : sc->out_dir);
    if (rc == SIM_OK) /* the runs' own checks (sim/rundir.h) refuse run and work directories */
        rc = sim_rundir_check_within(dir, SIM_RUNDIR_BIT(SIM_RUNDIR_GOLDEN), err);
    if (rc == SIM_OK && opt->exact) {
        char seed_dir[PATH_TEXT + 32]; /* OUT/seed-S, as the runs of a statistical check */
        snprintf(seed_dir, sizeof(seed_dir), "%s/seed-%" PRIu64, dir, sc->seed);
        if ((rc = run(opt, sc, seed_dir, err)) == SIM_OK)
            rc = check_exact(sc, opt->golden, seed_dir, out, err);
    } else if (rc == SIM_OK && (rc = read_golden(opt->golden, g, err)) == SIM_OK) {
        rc = check_stat(opt, sc, g, dir, out, err);
        golden_fini(g);
    }
    if (rc < 0 && opt->junit != NULL && !opt->exact) {
        sim_err jerr;
        sim_err_clear(&jerr);
        if (write_junit(opt->junit, opt->golden, NULL, err->msg, &jerr) != SIM_OK)
            fprintf(out, "(no JUnit report: %s)\n", jerr.msg);
    }
    free(g);
    sim_scenario_destroy(sc);
    return rc;
}
