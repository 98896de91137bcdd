/* A sweep's index.csv (see index.h). */
#include "app/index.h"

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "app/curves.h"
#include "app/index_state.h"
#include "outputs/csv.h"
#include "outputs/output.h"
#include "outputs/rundir.h"
#include "sim/cfg.h"
#include "sim/err.h"
#include "sim/file.h"
#include "sim/text.h"

static int oom(sim_err *err)
{
    return sim_err_set(err, SIM_ENOMEM, NULL, "out of memory");
}

/* The numbers of index.csv (app/sweep.c writes them from summary.json; empty for null). */
static const sim_csv_rule index_rules[] = {
    { "point", 0.0, SIM_CSV_HUGE, false, false, false, false },
    { "sim_time_s", 0.0, SIM_CSV_HUGE, true, false, false, false },
    { "final_accuracy", 0.0, 1.0, true, false, false, false },
    { "best_accuracy", 0.0, 1.0, true, false, false, false },
    { "time_to_target_s", 0.0, SIM_CSV_HUGE, true, false, false, false },
    { "mean_throughput_sps", 0.0, SIM_CSV_HUGE, true, false, false, false },
    { "wall_s", 0.0, SIM_CSV_HUGE, true, false, false, false },
};
static const sim_csv_rules index_numbers = { index_rules,
                                             sizeof(index_rules) / sizeof(index_rules[0]) };

static int missing(const char *sweep_dir, const char *path, sim_err *err)
{
    char metrics[1100];
    struct stat st;
    snprintf(metrics, sizeof(metrics), "%s/metrics.csv", sweep_dir);
    if (stat(metrics, &st) == 0)
        return sim_err_set(err, SIM_EINVAL, NULL,
                           "%s is a run directory, not a sweep's (no index.csv): give the "
                           "sweep's directory (`hetsim plot RUN_DIR...` draws runs)",
                           sweep_dir);
    snprintf(metrics, sizeof(metrics), "%s/%s", sweep_dir, SIM_RUNDIR_SWEEP_MARKER);
    long pid = 0;
    /* Its sweep running: "run the same `hetsim sweep` again" was said, which that sweep's lock
     * refuses. */
    if (stat(metrics, &st) == 0 && sim_rundir_locked(sweep_dir, &pid)) {
        char holder[48] = "a process not known";
        if (pid > 0)
            snprintf(holder, sizeof(holder), "pid %ld", pid);
        return sim_err_set(err, SIM_EINVAL, NULL,
                           "%s: no index.csv yet: it is being written by another hetsim (%s), "
                           "which writes index.csv once its points have run: read it once that "
                           "is done",
                           sweep_dir, holder);
    }
    if (stat(metrics, &st) == 0)
        return sim_err_set(err, SIM_EINVAL, NULL,
                           "%s: no index.csv yet: its sweep has not finished (run the same "
                           "`hetsim sweep` again: it runs only the points not done, then writes "
                           "index.csv)",
                           sweep_dir);
    return sim_err_set(err, SIM_EINVAL, NULL,
                       "cannot read %s: not a sweep's directory (`hetsim sweep` writes "
                       "index.csv there once its points have run)",
                       path);
}

/* A row's cells: a whole point number, a run directory's plain name (no '/', not "." or
 * ".."), a seed of digits, a stop reason. */
static int check_row(const app_index *ix, size_t r, sim_err *err)
{
    const sim_csv *t = &ix->csv;
    const char *point = sim_csv_cell(t, r, 0), *dir = sim_csv_cell(t, r, 1);
    const char *seed = sim_csv_cell(t, r, ix->nkeys + 2);
    const char *reason = sim_csv_cell(t, r, ix->nkeys + 3);
    const char *bad = point[strspn(point, "0123456789")] != '\0' ? "point: not a whole number"
                      : dir[0] == '\0' || strchr(dir, '/') != NULL || strcmp(dir, ".") == 0 ||
                              strcmp(dir, "..") == 0
                          ? "dir: not the name of a run directory in the sweep's"
                      : seed[0] == '\0' || seed[strspn(seed, "0123456789")] != '\0'
                          ? "seed: not a seed"
                      : reason[0] == '\0' ? "stop_reason: empty"
                                          : NULL;
    if (bad != NULL)
        return sim_err_set(err, SIM_EINVAL, NULL, "%s: line %zu: %s", t->path, t->line[r], bad);
    return SIM_OK;
}

/* A row's accuracies as a run writes them: its final and best both or neither (a run that
 * evaluates its accuracy has both), the best at least the final. The cells are numbers in
 * [0, 1] or empty, index_rules' check. */
static int check_accuracies(const app_index *ix, size_t r, sim_err *err)
{
    int fc = app_index_column(ix, "final_accuracy"), bc = app_index_column(ix, "best_accuracy");
    if (fc < 0 || bc < 0)
        return SIM_OK;
    const sim_csv *t = &ix->csv;
    const char *fin = sim_csv_cell(t, r, (size_t)fc), *best = sim_csv_cell(t, r, (size_t)bc);
    if ((fin[0] == '\0') != (best[0] == '\0'))
        return sim_err_set(err, SIM_EINVAL, NULL, "%s: line %zu: %s without %s", t->path,
                           t->line[r], fin[0] != '\0' ? "final_accuracy" : "best_accuracy",
                           fin[0] != '\0' ? "best_accuracy" : "final_accuracy");
    if (fin[0] != '\0' && strtod(best, NULL) < strtod(fin, NULL))
        return sim_err_set(err, SIM_EINVAL, NULL,
                           "%s: line %zu: best_accuracy: %s is below final_accuracy %s", t->path,
                           t->line[r], best, fin);
    return SIM_OK;
}

/* A cell as a sort key: its text (a point number without leading zeros) and row. */
typedef struct keyed {
    const char *key;
    size_t len, row;
} keyed;

static int by_key(const void *a, const void *b)
{
    const keyed *x = a, *y = b;
    if (x->len != y->len)
        return x->len < y->len ? -1 : 1;
    int c = strcmp(x->key, y->key);
    return c != 0 ? c : x->row < y->row ? -1 : x->row > y->row;
}

/* Each run directory with results a directory of the sweep's own, not a symbolic link (to
 * another point: its run counted twice) nor a file of any other type (named by its type); an
 * absent one is said later (an incomplete run directory: run it again). */
static int check_dirs(const app_index *ix, const char *sweep_dir, sim_err *err)
{
    char path[2048];
    for (size_t r = 0; r < ix->csv.nrows; r++) {
        struct stat st;
        snprintf(path, sizeof(path), "%s/%s", sweep_dir, app_index_cell(ix, r, 1));
        if (app_index_has_results(ix, r) && lstat(path, &st) == 0 && !S_ISDIR(st.st_mode))
            return sim_err_set(err, SIM_EINVAL, NULL,
                               "%s: line %zu: dir %s is not a directory of the sweep's own (%s): "
                               "remove it and run the sweep again",
                               ix->csv.path, ix->csv.line[r], app_index_cell(ix, r, 1),
                               sim_file_kind(st.st_mode)); /* a FIFO was "a file" */
    }
    return SIM_OK;
}

static int by_text(const void *a, const void *b)
{
    const keyed *x = a, *y = b;
    return x->len != y->len ? (x->len < y->len ? -1 : 1) : strcmp(x->key, y->key);
}

/* The run directories in the sweep's directory that no row names, counted into ix->unlisted
 * (the first kept in ix->unlisted_first): a row removed by hand (report counted 2 runs of a
 * point's 3 seeds, silently), or a point of an earlier grid run into the same directory (the
 * sweep leaves them), which the two cannot tell apart; the readers say so (app_select_read).
 * The rows' dirs are distinct (check_repeats). */
static int count_unlisted(app_index *ix, const char *sweep_dir, sim_err *err)
{
    const sim_csv *t = &ix->csv;
    keyed *k = calloc(t->nrows + 1, sizeof(*k));
    DIR *d = k != NULL ? opendir(sweep_dir) : NULL;
    if (d == NULL) {
        free(k);
        return k == NULL ? oom(err) : SIM_OK;
    }
    for (size_t r = 0; r < t->nrows; r++)
        k[r] = (keyed){ sim_csv_cell(t, r, 1), strlen(sim_csv_cell(t, r, 1)), r };
    qsort(k, t->nrows, sizeof(*k), by_text);
    int rc = SIM_OK;
    char path[2048];
    for (struct dirent *e = readdir(d); e != NULL && rc == SIM_OK; e = readdir(d)) {
        keyed want = { e->d_name, strlen(e->d_name), 0 };
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0 ||
            bsearch(&want, k, t->nrows, sizeof(*k), by_text) != NULL)
            continue;
        snprintf(path, sizeof(path), "%s/%s", sweep_dir, e->d_name);
        if (sim_rundir_kind_of(path) != SIM_RUNDIR_RUN)
            continue;
        /* the first in name order, so that the message is the same on every file system */
        if (ix->unlisted_first == NULL || strcmp(e->d_name, ix->unlisted_first) < 0) {
            free(ix->unlisted_first);
            if ((ix->unlisted_first = strdup(e->d_name)) == NULL)
                rc = oom(err);
        }
        ix->unlisted++;
    }
    closedir(d);
    free(k);
    return rc;
}

/* No two rows of one point or one run directory (a row repeated makes a run count twice). */
static int check_repeats(const app_index *ix, sim_err *err)
{
    const sim_csv *t = &ix->csv;
    keyed *k = calloc(t->nrows + 1, sizeof(*k));
    if (k == NULL)
        return oom(err);
    int rc = SIM_OK;
    for (size_t c = 0; c < 2 && rc == SIM_OK; c++) {
        for (size_t r = 0; r < t->nrows; r++) {
            k[r].key = sim_csv_cell(t, r, c);
            k[r].key += c == 0 ? strspn(k[r].key, "0") : 0;
            k[r].len = strlen(k[r].key);
            k[r].row = r;
        }
        qsort(k, t->nrows, sizeof(*k), by_key);
        for (size_t i = 1; i < t->nrows && rc == SIM_OK; i++)
            if (k[i].len == k[i - 1].len && strcmp(k[i].key, k[i - 1].key) == 0)
                rc = sim_err_set(err, SIM_EINVAL, NULL, "%s: line %zu: %s %s again (line %zu)",
                                 t->path, t->line[k[i].row], c == 0 ? "point" : "dir",
                                 sim_csv_cell(t, k[i].row, c), t->line[k[i - 1].row]);
    }
    free(k);
    return rc;
}

/* The first of row r's results that is not its run's summary.json's, as the sweep wrote it
 * (sweep_index.c: the stop reason, and each number as %.17g, empty when null), into
 * what[size]; empty when all are. A summary.json that does not parse is not its run's, said
 * with the parser's line, column and cause (an empty one is not compared: first_unlike does
 * not call this). */
static void results_diff(const app_index *ix, size_t r, const char *text, size_t n, char *what,
                         size_t size)
{
    static const char *const keys[] = {
        "stop_reason",   "sim_time_s",       "final_accuracy",
        "best_accuracy", "time_to_target_s", "mean_throughput_sps"
    };
    sim_err e;
    sim_err_clear(&e);
    sim_cfg *s = sim_cfg_parse(text, n, NULL, &e);
    what[0] = '\0';
    if (s == NULL) { /* cut mid-file, or a number past a double: read silently before */
        /* with the parser's cause (nested past its limit was "does not parse" alone) */
        if (snprintf(what, size, "its summary.json does not parse: %s", e.msg) >= (int)size)
            sim_text_utf8_trim(what); /* cut within a character: the cause's start is enough */
    }
    for (size_t i = 0; s != NULL && i < sizeof(keys) / sizeof(keys[0]) && what[0] == '\0'; i++) {
        int c = app_index_column(ix, keys[i]);
        char want[64] = "";
        double v = NAN;
        if (c < 0)
            continue;
        if (i == 0)
            sim_cfg_string(s, keys[i], want, sizeof(want), NULL);
        else if (!sim_cfg_is_null(s, keys[i]) &&
                 sim_cfg_double(s, keys[i], -INFINITY, INFINITY, &v, NULL) == 0 && !isnan(v))
            snprintf(want, sizeof(want), "%.17g", v);
        if (strcmp(app_index_cell(ix, r, (size_t)c), want) != 0)
            snprintf(what, size, "%s %s%s%s", keys[i], want[0] != '\0' ? "is " : "is empty", want,
                     " in its summary.json");
    }
    sim_cfg_destroy(s);
}

/* A row unlike its run in a sweep's directory whose lock another hetsim holds: a sweep run
 * again replacing its runs (its base edited), not damage, which was named so ("remove the
 * point's directory") of a sound run the sweep had just written. SIM_OK when nobody writes
 * it. The lock alone refuses nothing: the index and the runs not replaced yet are the old
 * sweep's, whole (and plot --by holds the lock of the sweep it draws into). */
static int being_written(const char *sweep_dir, sim_err *err)
{
    long pid = 0;
    if (!sim_rundir_locked(sweep_dir, &pid))
        return SIM_OK;
    char holder[48] = "a process not known";
    if (pid > 0)
        snprintf(holder, sizeof(holder), "pid %ld", pid);
    return sim_err_set(err, SIM_EINVAL, NULL,
                       "%s is being written by another hetsim (%s), which may replace its runs "
                       "while they are read: read it once that is done",
                       sweep_dir, holder);
}

typedef void (*row_check)(const app_index *ix, size_t r, const char *text, size_t n, char *out,
                          size_t size);

/* The first row with results whose run's file `name` (when it is there and not empty) `check`
 * finds unlike the row: *row gets it, out[] what differs, path[] the file. False: none. */
static bool first_unlike(const app_index *ix, const char *sweep_dir, const char *name,
                         row_check check, size_t *row, char *out, size_t size, char *path,
                         size_t psize)
{
    for (size_t r = 0; r < ix->csv.nrows; r++) {
        if (!app_index_has_results(ix, r))
            continue;
        snprintf(path, psize, "%s/%s/%s", sweep_dir, app_index_cell(ix, r, 1), name);
        size_t n = 0;
        char *text = sim_output_read_own(path, &n);
        out[0] = '\0';
        if (text != NULL && n > 0)
            check(ix, r, text, n, out, size);
        free(text);
        if (out[0] != '\0') {
            *row = r;
            return true;
        }
    }
    return false;
}

/* A row with results whose run.json is hetsim's (has scenario_hash; one written by hand may
 * have no summary.json) has a summary.json, not empty, or is an incomplete run directory; a
 * regular file (a link to another run's, a directory, a FIFO was left unread, exit 0). */
static int check_summaries(const app_index *ix, const char *sweep_dir, sim_err *err)
{
    char path[2048];
    for (size_t r = 0; r < ix->csv.nrows; r++) {
        struct stat st;
        size_t n = 0;
        snprintf(path, sizeof(path), "%s/%s/run.json", sweep_dir, app_index_cell(ix, r, 1));
        char *text = app_index_has_results(ix, r) ? sim_output_read_own(path, &n) : NULL;
        sim_cfg *run = text != NULL && n > 0 ? sim_cfg_parse(text, n, NULL, NULL) : NULL;
        bool hetsims = run != NULL && sim_cfg_has(run, "scenario_hash");
        sim_cfg_destroy(run);
        free(text);
        if (!hetsims)
            continue;
        snprintf(path, sizeof(path), "%s/%s/summary.json", sweep_dir, app_index_cell(ix, r, 1));
        if (lstat(path, &st) != 0 && errno == ENOENT)
            return app_run_file_missing(path, err);
        if (lstat(path, &st) == 0 && S_ISREG(st.st_mode) && st.st_size == 0)
            return app_run_file_empty(path, err);
        if (lstat(path, &st) == 0 && !S_ISREG(st.st_mode)) /* first_unlike reads none such */
            return sim_err_set(err, SIM_EINVAL, NULL,
                               "%s: not a regular file (%s): results files are the files hetsim "
                               "writes",
                               path, sim_file_kind(st.st_mode));
    }
    return SIM_OK;
}

/* Each row with results holds its run's swept values and seed (run.json's resolved
 * scenario): an index.csv edited by hand, or a point's run.json replaced by another run's,
 * was read silently. A missing or empty run.json is said later (an incomplete run). Each
 * row's results are its run's too: an index.csv whose mean_throughput_sps was edited by hand
 * (5120 -> 9999) made report's throughput 7559.5 +- 31000 for runs that measured 5120, exit 0. */
static int check_rows(const app_index *ix, const char *sweep_dir, sim_err *err)
{
    char path[2048], diff[512];
    size_t r;
    bool unlike = first_unlike(ix, sweep_dir, "run.json", ix_row_diff, &r, diff, sizeof(diff), path,
                               sizeof(path));
    int rc = unlike ? being_written(sweep_dir, err) : SIM_OK;
    if (rc != SIM_OK)
        return rc;
    if (unlike)
        return sim_err_set(err, SIM_EINVAL, NULL,
                           "%s: line %zu: %s differ from the run's in %s (an index edited, or a "
                           "run.json of another run): remove the point's directory and run "
                           "the sweep again",
                           ix->csv.path, ix->csv.line[r], diff, path);
    if ((rc = check_summaries(ix, sweep_dir, err)) != SIM_OK)
        return rc;
    unlike = first_unlike(ix, sweep_dir, "summary.json", results_diff, &r, diff, 160, path,
                          sizeof(path));
    rc = unlike ? being_written(sweep_dir, err) : SIM_OK;
    if (rc != SIM_OK)
        return rc;
    if (unlike)
        return sim_err_set(err, SIM_EINVAL, NULL,
                           "%s: line %zu: not its run's results: %s (%s): remove the point's "
                           "directory and run the sweep again",
                           ix->csv.path, ix->csv.line[r], diff, path);
    return SIM_OK;
}

const char *const app_index_results[APP_INDEX_NRESULTS] = {
    "sim_time_s",       "final_accuracy",      "best_accuracy",
    "time_to_target_s", "mean_throughput_sps", "wall_s"
};

/* The results columns the sweep writes after stop_reason (sweep_index.c), each by name: an
 * index.csv without final_accuracy (or with it renamed, "Final_accuracy") gave report's final
 * accuracy "-" for every row, exit 0, as a run without an evaluation. */
static int check_results_columns(const app_index *ix, sim_err *err)
{
    int reason = app_index_column(ix, "stop_reason");
    for (size_t i = 0; i < APP_INDEX_NRESULTS; i++)
        if (app_index_column(ix, app_index_results[i]) <= reason)
            return sim_err_set(err, SIM_EINVAL, NULL,
                               "%s: no column %s after stop_reason (a sweep writes sim_time_s, "
                               "final_accuracy, best_accuracy, time_to_target_s, "
                               "mean_throughput_sps and wall_s): not an index hetsim wrote",
                               ix->csv.path, app_index_results[i]);
    return SIM_OK;
}

int app_index_read(const char *sweep_dir, app_index *ix, sim_err *err)
{
    char path[sizeof(ix->csv.path)];
    memset(ix, 0, sizeof(*ix));
    /* Cut to fit, the path named another directory, whose index was read in its place. */
    if (strlen(sweep_dir) > APP_INDEX_DIR_MAX)
        return sim_err_set(err, SIM_EINVAL, NULL,
                           "%s: %zu bytes, too long a path for a sweep's directory (at most "
                           "%d bytes, as a sweep writes one): move it up",
                           sweep_dir, strlen(sweep_dir), APP_INDEX_DIR_MAX);
    snprintf(path, sizeof(path), "%s/index.csv", sweep_dir);
    int rc = sim_csv_read(&ix->csv, path, &index_numbers, err);
    if (rc == SIM_EIO && ix->csv.open_errno != ENOMEM)
        rc = missing(sweep_dir, path, err);
    if (rc != SIM_OK) {
        app_index_fini(ix);
        return rc;
    }
    const sim_csv *t = &ix->csv;
    int seed = app_index_column(ix, "seed"), reason = app_index_column(ix, "stop_reason");
    if (t->ncols < 4 || strcmp(t->head[0], "point") != 0 || strcmp(t->head[1], "dir") != 0 ||
        seed < 2 || reason != seed + 1)
        rc = sim_err_set(err, SIM_EINVAL, NULL,
                         "%s: not an index of hetsim (its header is not point, dir, ..., "
                         "seed, stop_reason, ...)",
                         path);
    if (rc == SIM_OK)
        rc = check_results_columns(ix, err);
    if (rc == SIM_OK)
        ix->nkeys = (size_t)seed - 2;
    for (size_t r = 0; r < t->nrows && rc == SIM_OK; r++)
        if ((rc = check_row(ix, r, err)) == SIM_OK)
            rc = check_accuracies(ix, r, err);
    if (rc == SIM_OK)
        rc = check_repeats(ix, err);
    if (rc == SIM_OK)
        rc = check_dirs(ix, sweep_dir, err);
    if (rc == SIM_OK)
        rc = count_unlisted(ix, sweep_dir, err);
    if (rc == SIM_OK)
        rc = check_rows(ix, sweep_dir, err);
    if (rc != SIM_OK)
        app_index_fini(ix);
    return rc;
}

void app_index_fini(app_index *ix)
{
    sim_csv_fini(&ix->csv);
    free(ix->unlisted_first);
    memset(ix, 0, sizeof(*ix));
}

int app_index_column(const app_index *ix, const char *name)
{
    return sim_csv_column(&ix->csv, name);
}

const char *app_index_cell(const app_index *ix, size_t r, size_t c)
{
    return sim_csv_cell(&ix->csv, r, c);
}

bool app_index_has_results(const app_index *ix, size_t r)
{
    return strcmp(app_index_cell(ix, r, ix->nkeys + 3), "missing") != 0;
}

void app_index_keys(const app_index *ix, char *buf, size_t size)
{
    size_t len = 0;
    buf[0] = '\0';
    for (size_t c = 2; c < ix->nkeys + 3 && len < size; c++)
        len += (size_t)snprintf(buf + len, size - len, "%s%s", c > 2 ? ", " : "", ix->csv.head[c]);
}

int app_index_key_column(const app_index *ix, const char *key, int *col, sim_err *err)
{
    char valid[1024];
    *col = app_index_column(ix, key);
    if (*col >= 2 && (size_t)*col <= ix->nkeys + 2)
        return SIM_OK;
    app_index_keys(ix, valid, sizeof(valid));
    return sim_err_set(err, SIM_EINVAL, NULL, "%s: no column \"%s\" (valid: %s)", ix->csv.path, key,
                       valid);
}

int app_index_run_facts(const char *dir, double *target, double *every, sim_err *err)
{
    char path[SIM_ERR_FILE_MAX + 16]; /* plot RUN's run of up to 4,000 bytes (docs/usage.md) */
    *target = *every = NAN;
    if (snprintf(path, sizeof(path), "%s/run.json", dir) >= (int)sizeof(path))
        return sim_err_set(err, SIM_EINVAL, NULL, "path too long: %s", dir);
    size_t n = 0;
    errno = 0;
    char *text = sim_output_read_own(path, &n);
    if (text == NULL && errno == ENOENT)
        return app_run_file_missing(path, err);
    if (text == NULL && errno == EINVAL)
        return sim_err_set(err, SIM_EINVAL, NULL,
                           "%s: not a regular file: results files are the files hetsim writes",
                           path);
    if (text == NULL)
        return sim_err_set(err, SIM_EIO, NULL, "cannot read %s: %s", path,
                           strerror(errno != 0 ? errno : EIO));
    if (n == 0) {
        free(text);
        return app_run_file_empty(path, err);
    }
    sim_cfg *root = sim_cfg_parse(text, n, path, err), *sc = NULL, *stop = NULL, *eval = NULL;
    free(text);
    int rc = root != NULL ? SIM_OK : err->code == SIM_ENOMEM ? SIM_ENOMEM : SIM_EINVAL;
    if (rc == SIM_OK && (rc = sim_cfg_child(root, "scenario", &sc, err)) == SIM_OK && sc != NULL)
        rc = sim_cfg_child(sc, "stop", &stop, err);
    if (rc == SIM_OK && stop == NULL)
        rc = sim_err_set(err, SIM_EINVAL, NULL, "no scenario.stop (not a run.json of hetsim)");
    /* In (0, 1], as the scenario's: a target of 0 edited in read "time to 0", every run at 0 s. */
    if (rc == SIM_OK && sim_cfg_has(stop, "target_accuracy") &&
        !sim_cfg_is_null(stop, "target_accuracy"))
        rc = sim_cfg_double(stop, "target_accuracy", nextafter(0.0, 1.0), 1.0, target, err);
    if (rc == SIM_OK && sim_cfg_has(sc, "eval"))
        rc = sim_cfg_child(sc, "eval", &eval, err);
    if (rc == SIM_OK && eval != NULL && sim_cfg_has(eval, "every_s") &&
        !sim_cfg_is_null(eval, "every_s"))
        rc = sim_cfg_double(eval, "every_s", 0.0, SIM_CSV_HUGE, every, err);
    if (rc == SIM_OK && *every == 0.0) /* as outputs/csv.c's run_every: no run's interval */
        rc = sim_err_set(err, SIM_EINVAL, "$.scenario.eval.every_s",
                         "0 s: a run evaluates every 1 ns or more");
    sim_cfg_destroy(root);
    if (rc != SIM_OK && rc != SIM_ENOMEM && rc != SIM_EIO) {
        sim_err_file(err, path);
        rc = err->code = SIM_EINVAL;
    }
    return rc;
}

/* One pass over the runs with results (or those `use` marks): their common target accuracy into
 * *target (refused when two differ) unless target is NULL, and the least and largest
 * eval.every_s into *lo and *hi unless lo is NULL. */
static int scan_facts(const app_index *ix, const char *sweep_dir, const bool *use, double *target,
                      double *lo, double *hi, sim_err *err)
{
    char dir[2048];
    const char *first = NULL;
    for (size_t r = 0; r < ix->csv.nrows; r++) {
        if (use != NULL ? !use[r] : !app_index_has_results(ix, r))
            continue;
        snprintf(dir, sizeof(dir), "%s/%s", sweep_dir, app_index_cell(ix, r, 1));
        double t = NAN, every = NAN;
        int rc = app_index_run_facts(dir, &t, &every, err);
        if (rc != SIM_OK)
            return rc;
        if (target != NULL && first == NULL) {
            first = app_index_cell(ix, r, 1);
            *target = t;
        } else if (target != NULL && !(t == *target || (isnan(t) && isnan(*target)))) {
            return sim_err_set(err, SIM_EINVAL, NULL,
                               "%s: the runs stop at different target accuracies (%g in %s, %g "
                               "in %s): choose one with --target",
                               ix->csv.path, *target, first, t, app_index_cell(ix, r, 1));
        }
        if (lo != NULL && !isnan(every)) {
            *lo = isnan(*lo) ? every : fmin(*lo, every);
            *hi = isnan(*hi) ? every : fmax(*hi, every);
        }
    }
    return SIM_OK;
}

int app_index_stop_target_of(const app_index *ix, const char *sweep_dir, const bool *use,
                             double *target, sim_err *err)
{
    *target = NAN;
    return scan_facts(ix, sweep_dir, use, target, NULL, NULL, err);
}

int app_index_stop_target(const app_index *ix, const char *sweep_dir, double *target, sim_err *err)
{
    return app_index_stop_target_of(ix, sweep_dir, NULL, target, err);
}

int app_index_eval_every(const app_index *ix, const char *sweep_dir, const bool *use, double *lo,
                         double *hi, sim_err *err)
{
    *lo = *hi = NAN;
    return scan_facts(ix, sweep_dir, use, NULL, lo, hi, err);
}
