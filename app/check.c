/* Golden-curve regression checks (see check.h): loading and running the scenario, golden
 * updates, the exact and statistical checks; a golden's files are read by
 * app/check_golden.c, the reports written by app/check_report.c, an update's golden swapped in
 * by app/check_places.c. */
#define _POSIX_C_SOURCE 200809L
#include "app/check.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "app/check_state.h"
#include "app/curves.h"
#include "app/stats.h"
#include "outputs/output.h"
#include "outputs/rundir.h"
#include "protocols/registry.h"
#include "runtime/run.h"
#include "scenario/scenario.h"
#include "sim/cfg.h"
#include "sim/file.h"

/* Parses the scenario's bytes, read once by app_check_run (each seed read the file again: one
 * edited during an update made a golden of two scenarios, "golden written", exit 0), with the
 * overrides, plus "seed=S" when `seed` is not NULL. */
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
    size_t n = opt->nsets + (seed != NULL);
    sim_scenario *sc = opt->text != NULL ? sim_scenario_parse(opt->text, opt->text_len,
                                                              opt->scenario, sets, n, err)
                                         : sim_scenario_load(opt->scenario, sets, n, err);
    free(sets);
    const proto_ops *ops = sc != NULL ? proto_lookup(sc->protocol, sc->file, err) : NULL;
    if (ops == NULL || sim_run_check(sc, ops, err) != SIM_OK) {
        sim_scenario_destroy(sc);
        if (err->code != SIM_ENOMEM)
            err->code = SIM_ESCENARIO;
        return NULL;
    }
    sc->plots = false; /* a golden keeps data, not figures */
    return sc;
}

/* Runs the scenario's seed into `dir`. A run that fails is named by its seed and `shown`, the
 * directory it was for, before its own message, as a sweep names its point: "worker 1: the
 * training loss ... diverged" alone did not say which of the check's seeds it was. */
static int run(const app_check_options *opt, sim_scenario *sc, const char *dir, const char *shown,
               sim_err *err)
{
    sim_run_options ro = { .out_dir = dir, .threads = opt->threads };
    int rc = sim_run(sc, proto_find(sc->protocol), &ro, NULL, err);
    if (rc != SIM_OK && rc != SIM_ENOMEM) {
        char text[sizeof(err->file) + sizeof(err->path) + sizeof(err->msg) + 8];
        sim_err_format(err, text, sizeof(text));
        int head = snprintf(NULL, 0, "seed %" PRIu64 " (%s): ", sc->seed, shown);
        if (head > 0 && (size_t)head + strlen(text) < sizeof(err->msg))
            sim_err_set(err, rc, NULL, "seed %" PRIu64 " (%s): %s", sc->seed, shown, text);
        else
            sim_err_set(err, rc, NULL, "seed %" PRIu64 ": %s", sc->seed, text);
        err->file[0] = '\0';
    }
    return rc;
}

/* ---- Updates: a golden written beside the old one and swapped in whole ------------------ */

/* The scenario hash recorded in dir/run.json, into out[32]. */
static int run_hash(const char *dir, char *out, sim_err *err)
{
    sim_cfg *run = ck_read_json(dir, "run.json", err);
    int rc = run == NULL ? err->code : sim_cfg_string(run, "scenario_hash", out, 32, err);
    sim_cfg_destroy(run);
    return rc;
}

/* A check or an update that would run seeds past SIM_SCENARIO_SEED_MAX, refused before it
 * runs any (the run past it blamed the scenario's $.seed, which the user wrote in range). */
static int past_seeds(const app_check_options *opt, uint64_t seed0, sim_err *err)
{
    return sim_err_set(err, SIM_EINVAL, NULL,
                       "%s: %u seeds from the scenario's seed %" PRIu64 " run past %" PRIu64
                       ", the largest seed (2^53 - 1): lower $.seed or --seeds",
                       opt->scenario, opt->seeds, seed0, SIM_SCENARIO_SEED_MAX);
}

static int update_locked(const app_check_options *opt, const char *golden, FILE *out, sim_err *err);

/* Refuses a golden inside any hetsim output (a run, a work directory, a sweep's, another
 * golden, a check's output), takes the golden's lock (GOLDEN.lock, outputs/rundir.h) for the whole
 * update, and writes it. A golden named by a symbolic link is its target's, written whole there
 * (the link stays): sim_rundir_follow. */
static int update(const app_check_options *opt, FILE *out, sim_err *err)
{
    char golden[PATH_TEXT], *target = NULL;
    int rc = sim_rundir_follow(opt->golden, &target, err);
    if (rc != SIM_OK)
        return rc;
    size_t len = strlen(target); /* its seeds' paths hold it (check_read) */
    snprintf(golden, sizeof(golden), "%s", target);
    free(target);
    if (len > CHECK_DIR_MAX)
        return sim_err_set(err, SIM_EINVAL, NULL,
                           "--golden %s: its target is %zu bytes: too long for a golden (at most "
                           "%d bytes: its seeds' paths hold it)",
                           opt->golden, len, CHECK_DIR_MAX);
    sim_rundir_lock *lock = NULL;
    rc = sim_rundir_check_within(golden, SIM_RUNDIR_ANY | SIM_RUNDIR_BIT(SIM_RUNDIR_CHECK), err);
    if (rc == SIM_OK)
        rc = sim_rundir_lock_take(golden, &lock, err);
    if (rc == SIM_OK)
        rc = update_locked(opt, golden, out, err);
    sim_rundir_unlock(lock);
    return rc;
}

/* The golden written into `work` holds as a check reads it, each seed a run of one scenario: the
 * seeds parse the bytes read once, but a compute.profile or a trace the scenario names is read
 * by each (one saved while the update ran gave the later seeds another scenario, exit 0). */
static int whole_golden(const char *work, sim_err *err)
{
    gold *g = calloc(1, sizeof(*g));
    if (g == NULL)
        return sim_err_set(err, SIM_ENOMEM, NULL, "out of memory");
    int rc = ck_read_golden(work, g, err);
    if (rc == SIM_OK) {
        ck_golden_fini(g);
    } else if (err->code != SIM_ENOMEM) {
        char why[sizeof(err->msg)];
        snprintf(why, sizeof(why), "%s", err->msg);
        rc = sim_err_set(err, SIM_EIO, NULL,
                         "a file the scenario names changed during the update, no golden "
                         "written: %s",
                         why);
    }
    free(g);
    return rc;
}

/* A compute.profile, a trace or LIBSVM data the scenario names is read again by each seed's
 * load: one edited since the first load (a trace saved while the update ran gave the later
 * seeds other stragglers under the same resolved scenario, "golden written", exit 0) is named,
 * exit 1; the seed's run holds its data loads to the first's bytes too. */
static int same_inputs(const sim_scenario *first, sim_scenario *one, const char *during,
                       sim_err *err)
{
    if (sim_scenario_same_inputs(first, one, err) == SIM_OK)
        return SIM_OK;
    char why[sizeof(err->path) + sizeof(err->msg) + 4];
    snprintf(why, sizeof(why), "%s: %s", err->path, err->msg);
    return sim_err_set(err, SIM_EIO, NULL,
                       "a file the scenario names changed during the %s (seed %" PRIu64 "): %s",
                       during, one->seed, why);
}

/* Seed `seed` of the update run into WORK/seed-S, its inputs held to the first load's, with
 * its fingerprint; its run's hash into hash. */
static int update_seed(const app_check_options *opt, const sim_scenario *first, const char *work,
                       const char *golden, uint64_t seed, char *hash, sim_err *err)
{
    char set[64], dir[PATH_TEXT + 64], shown[PATH_TEXT + 64];
    snprintf(set, sizeof(set), "seed=%" PRIu64, seed);
    snprintf(dir, sizeof(dir), "%s/seed-%" PRIu64, work, seed);
    snprintf(shown, sizeof(shown), "%s/seed-%" PRIu64, golden, seed);
    sim_scenario *sc = load(opt, set, err);
    if (sc == NULL)
        return err->code;
    int rc = same_inputs(first, sc, "update, no golden written", err);
    if (rc == SIM_OK)
        rc = run(opt, sc, dir, shown, err);
    sim_scenario_destroy(sc);
    if (rc == SIM_OK)
        rc = ck_write_fingerprint(dir, err);
    if (rc == SIM_OK)
        rc = run_hash(dir, hash, err);
    return rc;
}

static int update_locked(const app_check_options *opt, const char *golden, FILE *out, sim_err *err)
{
    char work[PATH_TEXT + 16], dir[PATH_TEXT + 64], hash[32];
    if (snprintf(work, sizeof(work), "%s.partial", golden) >= (int)sizeof(work) - 1)
        return sim_err_set(err, SIM_EINVAL, NULL, "path too long: %s", golden);
    int rc = ck_golden_replaceable(golden, err);
    if (rc != SIM_OK)
        return rc;
    sim_err ignored; /* GOLDEN.partial: a killed update's work (its marker) or old golden */
    if (ck_exists(work, "") && !ck_exists(work, GOLDEN_MARKER) &&
        ck_golden_replaceable(work, &ignored) != SIM_OK)
        return sim_err_set(err, SIM_EINVAL, NULL,
                           "%s: in the way of the update, and not an update's work: not removed",
                           work);
    sim_scenario *first = load(opt, NULL, err); /* each seed's inputs held to its */
    if (first == NULL)
        return err->code;
    uint64_t seed0 = first->seed;
    rc = sim_scenario_inputs_regular(first, "an update", err); /* a FIFO: waited on */
    if (rc == SIM_OK && seed0 > SIM_SCENARIO_SEED_MAX - (opt->seeds - 1))
        rc = past_seeds(opt, seed0, err);
    if (rc != SIM_OK) {
        sim_scenario_destroy(first);
        return rc;
    }
    ck_remove_tree(work); /* what a killed update left */
    rc = sim_output_mkdirs(work, err);
    if (rc == SIM_OK)
        rc = sim_output_write(work, GOLDEN_MARKER, "", err);
    char seeds[MAX_GOLDEN * 24], json[MAX_GOLDEN * 64 + 256], hashes[MAX_GOLDEN * 24];
    size_t len = 0, jlen = 0, hlen = 0;
    for (unsigned i = 0; i < opt->seeds && rc == SIM_OK; i++) {
        len += (size_t)snprintf(seeds + len, sizeof(seeds) - len, "%" PRIu64 "\n", seed0 + i);
        jlen += (size_t)snprintf(json + jlen, sizeof(json) - jlen, "%s%" PRIu64, i > 0 ? ", " : "",
                                 seed0 + i);
        rc = update_seed(opt, first, work, golden, seed0 + i, hash, err);
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
    sim_scenario_destroy(first);
    if (rc == SIM_OK)
        rc = whole_golden(work, err);
    if (rc == SIM_OK)
        rc = ck_golden_swap(golden, work, err);
    else
        ck_remove_tree(work);
    if (rc == SIM_OK)
        fprintf(out, "%s: golden written to %s (%u seeds from %" PRIu64 ", hetsim %s)\n",
                opt->scenario, golden, opt->seeds, seed0, HETSIM_VERSION);
    return rc;
}

/* How many keys the scenario of the run in `run_dir` differs from the golden's in (listed in
 * keys[size]), or -1 with `err` set: SIM_EINVAL when it differs and the options do not
 * allow it (a golden of another scenario, exit 2). */
static long scenario_diff(const app_check_options *opt, const sim_scenario *sc, gold *g,
                          const char *run_dir, char *keys, size_t size, sim_err *err)
{
    long diff = ck_scenario_diff(g, run_dir, keys, size, err);
    if (diff > 0 && !opt->allow_scenario_change) {
        sim_err_set(err, SIM_EINVAL, NULL,
                    "%s: the scenario differs from the golden's (%s/run.json) in %ld "
                    "key%s: %s (the seed may differ; --allow-scenario-change to compare "
                    "anyway, --update to make a new golden)",
                    sc->file, g->dir[0], diff, diff > 1 ? "s" : "", keys);
        return -1;
    }
    return diff;
}

/* --exact: the scenario's own seed S, one of the golden's, run into OUT/seed-S (as the runs
 * of a statistical check) and compared with the golden's seed-S byte for byte, once its
 * scenario is found the golden's (a scenario of another name was a REGRESSION, exit 1). */
static int exact(const app_check_options *opt, sim_scenario *sc, gold *g, const char *dir,
                 FILE *out, sim_err *err)
{
    char seed_dir[PATH_TEXT + 32];
    if (!ck_has_seed(g, sc->seed))
        return sim_err_set(err, SIM_EINVAL, NULL,
                           "%s: no golden fingerprint for seed %" PRIu64
                           " (its seeds file does not list it)",
                           opt->golden, sc->seed);
    snprintf(seed_dir, sizeof(seed_dir), "%s/seed-%" PRIu64, dir, sc->seed);
    int rc = run(opt, sc, seed_dir, seed_dir, err);
    char keys[1024];
    if (rc == SIM_OK && scenario_diff(opt, sc, g, seed_dir, keys, sizeof(keys), err) < 0)
        rc = err->code;
    return rc == SIM_OK ? ck_check_exact(sc->file, sc->seed, g, seed_dir, out) : rc;
}

/* ---- The statistical test --------------------------------------------------------------- */

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
        else if (st == ST_LOSS) /* fmax(NaN, y) is y: a missing loss is no value */
            x = isnan(v[i]) ? (double)NAN : log(fmax(v[i], 1e-12));
        if (!isnan(x)) {
            sum += x;
            m++;
        }
    }
    return m > 0 ? sum / (double)m : (double)NAN;
}

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

/* ---- The check -------------------------------------------------------------------------- */

/* The run in `dir` is of the scenario of the check's first seed's, out_dir/seed-<seed0> (each
 * seed reads the compute.profile or trace the scenario names: one saved during the check gave
 * the later seeds another scenario, compared with the golden as one). */
static int same_as_first(const char *out_dir, uint64_t seed0, const char *dir, sim_err *err)
{
    char first[PATH_TEXT + 32], keys[1024];
    snprintf(first, sizeof(first), "%s/seed-%" PRIu64, out_dir, seed0);
    long n = ck_runs_diff(first, dir, keys, sizeof(keys), err);
    if (n < 0)
        return err->code;
    if (n > 0)
        return sim_err_set(err, SIM_EIO, NULL,
                           "a file the scenario names changed during the check: %s/run.json: a "
                           "run of another scenario than %s's (%s)",
                           dir, first, keys);
    return SIM_OK;
}

/* Runs m seeds of the scenario (the first m from its own seed up that are not golden seeds)
 * into out_dir/seed-<S>, reading their curves into runs[]. */
static int pick_seeds(const app_check_options *opt, const sim_scenario *sc, const gold *g,
                      uint64_t *seeds, size_t m, sim_err *err)
{
    uint64_t seed = sc->seed;
    for (size_t s = 0; s < m; s++, seed++) {
        while (ck_has_seed(g, seed) && seed <= SIM_SCENARIO_SEED_MAX)
            seed++;
        if (seed > SIM_SCENARIO_SEED_MAX)
            return past_seeds(opt, sc->seed, err);
        seeds[s] = seed;
    }
    return SIM_OK;
}

/* Runs seeds[from..to) into out_dir (pick_seeds chose them), each read into runs[s]. */
static int run_seeds(const app_check_options *opt, const sim_scenario *sc, const char *out_dir,
                     app_curve *runs, const uint64_t *seeds, size_t from, size_t to, sim_err *err)
{
    int rc = SIM_OK;
    for (size_t s = from; s < to && rc == SIM_OK; s++) {
        uint64_t seed = seeds[s];
        char set[64], dir[PATH_TEXT + 32];
        snprintf(set, sizeof(set), "seed=%" PRIu64, seed);
        snprintf(dir, sizeof(dir), "%s/seed-%" PRIu64, out_dir, seed);
        sim_scenario *one = load(opt, set, err);
        if (one == NULL)
            return err->code;
        rc = same_inputs(sc, one, "check", err);
        if (rc == SIM_OK)
            rc = run(opt, one, dir, dir, err);
        sim_scenario_destroy(one);
        if (rc == SIM_OK && s > 0)
            rc = same_as_first(out_dir, seeds[0], dir, err);
        if (rc == SIM_OK && (rc = app_curve_read(dir, &runs[s], err)) != SIM_OK &&
            err->code == SIM_EINVAL)
            err->code = SIM_EIO; /* the run's own output: not the user's */
    }
    return rc;
}

/* Row i of run r has a value of each tested column where the golden's row has one, and none
 * where it has none: a golden whose test_accuracy fields were all emptied was compared on 2
 * statistics of 5, "ok", exit 0, though the runs had their accuracies. Prints a mismatch. */
static bool same_fields(const app_curve *a, const app_curve *r, uint64_t seed, size_t i, FILE *out)
{
    static const enum app_curve_col cols[] = { APP_CURVE_ACC, APP_CURVE_LOSS, APP_CURVE_TP };
    for (size_t k = 0; k < sizeof(cols) / sizeof(cols[0]); k++) {
        bool run_empty = isnan(r->col[cols[k]][i]), golden_empty = isnan(a->col[cols[k]][i]);
        if (run_empty != golden_empty) {
            fprintf(out, "  seed %" PRIu64 ": row %zu: %s %s, the golden's %s\n", seed, i,
                    app_curve_names[cols[k]], run_empty ? "empty" : "set",
                    golden_empty ? "empty" : "set");
            return false;
        }
    }
    return true;
}

/* Row structure of the runs: the golden's rows at the golden's times, with values where the
 * golden's have them. Prints the first mismatch; returns false if any. */
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
        for (size_t i = 0; i < a->n; i++)
            if (!same_fields(a, &runs[s], seeds[s], i, out))
                return false;
    }
    return true;
}

/* Seconds on the monotonic clock: the JUnit report's times, wall-clock figures that reach no
 * output of a run. */
static double wall_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* Names the statistics not compared, the golden's runs having no values for them (a
 * timing-only model has no test accuracy or loss). */
static void print_untested(const verdict *v, FILE *out)
{
    size_t n = 0;
    for (size_t st = 0; st < NSTATS; st++)
        if (!v[st].tested)
            fprintf(out, "%s%s", n++ > 0 ? ", " : "  not compared (no values in the golden): ",
                    stat_defs[st].name);
    if (n > 0)
        fputc('\n', out);
}

static int check_stat(const app_check_options *opt, const sim_scenario *sc, gold *g,
                      const char *out_dir, double start, FILE *out, sim_err *err)
{
    size_t m = opt->seeds;
    app_curve runs[MAX_GOLDEN];
    uint64_t seeds[MAX_GOLDEN] = { 0 };
    verdict v[NSTATS];
    memset(runs, 0, sizeof(runs));
    int rc = pick_seeds(opt, sc, g, seeds, m, err);
    if (rc == SIM_OK)
        rc = run_seeds(opt, sc, out_dir, runs, seeds, 0, 1, err);
    /* After the first run, as docs/check.md says: the others ran first (a changed scenario
     * was refused after all M runs, left in OUT). */
    char keys[1024], first[PATH_TEXT + 32];
    snprintf(first, sizeof(first), "%s/seed-%" PRIu64, out_dir, seeds[0]);
    long diff = rc == SIM_OK ? scenario_diff(opt, sc, g, first, keys, sizeof(keys), err) : 0;
    if (rc == SIM_OK && diff < 0)
        rc = err->code;
    if (rc == SIM_OK)
        rc = run_seeds(opt, sc, out_dir, runs, seeds, 1, m, err);
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
    print_untested(v, out);
    bool drawn = false;
    if ((rc = ck_figure(out_dir, g, runs, m, v, &drawn, out, err)) != SIM_OK)
        goto done;
    if (drawn)
        fprintf(out, "  figure: %s/check.png\n", out_dir);
    if (!rows)
        for (size_t st = 0; st < NSTATS; st++)
            v[st].ok = false;
    if (opt->junit != NULL &&
        (rc = ck_write_junit(opt->junit, g->path, v, NULL, wall_now() - start, err)) != SIM_OK)
        goto done;
    rc = bad > 0 ? APP_CHECK_REGRESSION : APP_CHECK_PASS;
done:
    for (size_t s = 0; s < m; s++)
        app_curve_fini(&runs[s]);
    return rc;
}

/* The output directory dir[size] as the place it names ("co/seed-3/.." is co: resolved once,
 * so that every seed run goes where the check was let write; sim_rundir_resolve). */
static int resolve_dir(char *dir, size_t size, sim_err *err)
{
    char *place = NULL;
    int rc = sim_rundir_resolve(dir, &place, err);
    if (rc == SIM_OK && snprintf(dir, size, "%s", place) >= (int)size)
        rc = sim_err_set(err, SIM_EINVAL, NULL, "path too long: %s", place);
    free(place);
    return rc;
}

static int check_read(const app_check_options *opt, FILE *out, sim_err *err);

/* The files the scenario names (a compute.profile, traces), read by each seed's run again: none
 * a FIFO (the second seed waited forever), nor the JUnit report's file (the report replaced
 * the profile, exit 0), which then gets no report. */
static int inputs_ok(const app_check_options *opt, const sim_scenario *sc, bool *junit_ok,
                     sim_err *err)
{
    struct stat a, b;
    for (size_t i = 0; opt->junit != NULL && i < sc->ninputs; i++)
        if (stat(opt->junit, &a) == 0 && stat(sc->inputs[i], &b) == 0 && a.st_dev == b.st_dev &&
            a.st_ino == b.st_ino) {
            *junit_ok = false;
            return sim_err_set(err, SIM_ESCENARIO, NULL,
                               "--junit file %s is %s, a file the scenario reads: name another "
                               "file",
                               opt->junit, sc->inputs[i]);
        }
    return sim_scenario_inputs_regular(sc, "a check", err);
}

int app_check_run(const app_check_options *opt, FILE *out, sim_err *err)
{
    sim_err_clear(err);
    struct stat st; /* a FIFO is read once now, but was refused: it still is */
    if (stat(opt->scenario, &st) == 0 && (S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode)))
        return sim_err_set(err, SIM_ESCENARIO, NULL,
                           "%s is %s: a check reads the scenario as a file; copy it into one",
                           opt->scenario, sim_file_kind(st.st_mode));
    app_check_options o = *opt; /* unread (missing...): load says so where it did */
    char *text = sim_scenario_read(opt->scenario, &o.text_len, err);
    o.text = text;
    sim_err_clear(err);
    int rc = check_read(&o, out, err);
    free(text);
    return rc;
}

/* A scenario whose name is only its file's (it gives no "name") takes the golden's: such a
 * name is no part of the run's identity (a renamed copy of the golden's scenario was "another
 * scenario", exit 2, for its name alone), while a name given is, and is compared. Its runs
 * are then named as the golden's (summary.json, run.json byte for byte under --exact): the
 * overrides plus name="NAME" (written into `set`, room for 2 x 128 + 8 bytes) into *named (the
 * array in *sets, freed by the caller) and the scenario loaded again into *sc. */
static int take_golden_name(const app_check_options *opt, const gold *g, app_check_options *named,
                            const char ***sets, char *set, sim_scenario **sc, sim_err *err)
{
    sim_cfg *scenario = NULL;
    char name[128];
    *named = *opt;
    if ((*sc)->name_given || sim_cfg_child(g->run[0], "scenario", &scenario, NULL) != SIM_OK ||
        scenario == NULL || sim_cfg_string(scenario, "name", name, sizeof(name), NULL) != SIM_OK ||
        strcmp(name, (*sc)->name) == 0)
        return SIM_OK;
    size_t n = (size_t)sprintf(set, "name=\""); /* set: room for twice the name and 8 */
    for (const char *c = name; *c != '\0'; c++) {
        if (*c == '"' || *c == '\\')
            set[n++] = '\\';
        set[n++] = *c;
    }
    sprintf(set + n, "\"");
    if ((*sets = calloc(opt->nsets + 1, sizeof(**sets))) == NULL)
        return sim_err_set(err, SIM_ENOMEM, NULL, "out of memory");
    for (size_t i = 0; i < opt->nsets; i++)
        (*sets)[i] = opt->sets[i];
    (*sets)[opt->nsets] = set;
    named->sets = *sets;
    named->nsets = opt->nsets + 1;
    sim_scenario *again = load(named, NULL, err);
    if (again == NULL)
        return err->code;
    sim_scenario_destroy(*sc);
    *sc = again;
    return SIM_OK;
}

/* The check (or the update) of the scenario read once into opt->text. */
static int check_read(const app_check_options *opt, FILE *out, sim_err *err)
{
    double start = wall_now();
    bool junit_ok = false; /* a report that cannot go there is never written */
    /* Its seeds' paths hold it: an update ran, then failed; a check said "no golden here". */
    size_t glen = strlen(opt->golden);
    if (glen > CHECK_DIR_MAX)
        return sim_err_set(err, SIM_EINVAL, NULL,
                           "--golden: %zu bytes: too long for a golden (at "
                           "most %d bytes: its seeds' paths hold it)",
                           glen, CHECK_DIR_MAX);
    int rc = ck_check_places(opt, NULL, &junit_ok, err);
    if (rc != SIM_OK || opt->update)
        return rc != SIM_OK ? rc : update(opt, out, err);
    sim_scenario *sc = load(opt, NULL, err);
    if (sc == NULL)
        return err->code;
    gold *g = calloc(1, sizeof(*g));
    rc = g == NULL ? sim_err_set(err, SIM_ENOMEM, NULL, "out of memory") : SIM_OK;
    if (rc == SIM_OK)
        rc = inputs_ok(opt, sc, &junit_ok, err);
    char dir[PATH_TEXT];
    const char *want = opt->out_dir != NULL ? opt->out_dir : sc->out_dir; /* never cut */
    if (rc == SIM_OK && strlen(want) > CHECK_DIR_MAX)
        rc = sim_err_set(err, SIM_EINVAL, NULL,
                         "%s: %zu bytes: too long for a check's output (at most %d bytes)",
                         opt->out_dir != NULL ? "-o" : "$.output.dir", strlen(want), CHECK_DIR_MAX);
    snprintf(dir, sizeof(dir), "%s", want);
    if (rc == SIM_OK)
        rc = ck_check_places(opt, dir, &junit_ok, err);
    if (rc == SIM_OK)
        rc = resolve_dir(dir, sizeof(dir), err);
    /* The golden is read whole first, for --exact too: a damaged one is refused either way. */
    if (rc == SIM_OK && (rc = ck_read_golden(opt->golden, g, err)) == SIM_OK) {
        app_check_options named;
        const char **sets = NULL;
        char set[2 * 128 + 8];
        rc = take_golden_name(opt, g, &named, &sets, set, &sc, err);
        if (rc == SIM_OK && opt->exact)
            rc = exact(&named, sc, g, dir, out, err);
        else if (rc == SIM_OK)
            rc = check_stat(&named, sc, g, dir, start, out, err);
        free(sets);
        ck_golden_fini(g);
    }
    if (rc < 0 && junit_ok && opt->junit != NULL && !opt->exact) {
        sim_err jerr;
        sim_err_clear(&jerr);
        if (ck_write_junit(opt->junit, opt->golden, NULL, err->msg, wall_now() - start, &jerr) !=
            SIM_OK)
            fprintf(out, "(no JUnit report: %s)\n", jerr.msg);
    }
    free(g);
    sim_scenario_destroy(sc);
    return rc;
}
