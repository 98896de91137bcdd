/* Shared plumbing of the end-to-end test suites; see harness.h. */
#include "harness.h"

#include <dirent.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <check.h>
#include <gsl/gsl_rng.h>

#include "kit/graph.h"
#include "protocols/registry.h"

static const char tmp_prefix[] = "/tmp/hetsim-";

/* Fails the test with `err` ("file: path: message") after `what` unless `ok`. */
static void require(bool ok, const char *what, const char *file, sim_err *err)
{
    if (ok)
        return;
    char msg[1024];
    sim_err_file(err, file);
    sim_err_format(err, msg, sizeof(msg));
    ck_abort_msg("%s: %s", what, msg);
}

/* Runs sim_run_check on a scenario just loaded from `file` (NULL if that failed). */
static sim_scenario *checked(sim_scenario *sc, const char *file, sim_err *err)
{
    require(sc != NULL, "load", file, err);
    const proto_ops *ops = proto_lookup(sc->protocol, sc->file, err);
    require(ops != NULL && sim_run_check(sc, ops, err) == 0, "check", file, err);
    return sc;
}

sim_scenario *harness_load(const char *json, const char *file, const char *const *sets,
                           size_t nsets)
{
    sim_err err;
    sim_err_clear(&err);
    sim_scenario *sc = sim_scenario_parse(json, strlen(json), file, sets, nsets, &err);
    return checked(sc, file, &err);
}

sim_scenario *harness_load_file(const char *path, const char *const *sets, size_t nsets)
{
    sim_err err;
    sim_err_clear(&err);
    sim_scenario *sc = sim_scenario_load(path, sets, nsets, &err);
    return checked(sc, path, &err);
}

void harness_expect_rejected(const char *json, const char *file, const char *const *sets,
                             size_t nsets, const char *path, const char *msg)
{
    sim_err err;
    sim_err_clear(&err);
    sim_scenario *sc = sim_scenario_parse(json, strlen(json), file, sets, nsets, &err);
    ck_assert_ptr_nonnull(sc);
    const proto_ops *ops = proto_lookup(sc->protocol, sc->file, &err);
    ck_assert_int_eq(ops == NULL ? err.code : sim_run_check(sc, ops, &err), SIM_ESCENARIO);
    ck_assert_str_eq(err.file, file);
    ck_assert_str_eq(err.path, path);
    ck_assert_str_eq(err.msg, msg);
    sim_scenario_destroy(sc);
}

int harness_check(sim_scenario *sc, sim_err *err)
{
    const proto_ops *ops = proto_lookup(sc->protocol, sc->file, err);
    return ops == NULL ? err->code : sim_run_check(sc, ops, err);
}

sim_scenario *harness_load_spec(const char *spec, const char *const *sets, size_t nsets)
{
    return spec[0] == '{' ? harness_load(spec, "generated.json", sets, nsets)
                          : harness_load_file(spec, sets, nsets);
}

void harness_expect_rejected_file(const char *file, const char *const *sets, size_t nsets,
                                  const char *path, const char *msg)
{
    char *json = harness_read(file, NULL);
    harness_expect_rejected(json, file, sets, nsets, path, msg);
    free(json);
}

uint32_t harness_workers_within(const struct sim_ctx *ctx, uint32_t max)
{
    uint32_t n = sim_ctx_workers(ctx);
    ck_assert_uint_le(n, max);
    return n;
}

size_t harness_params_within(const struct sim_ctx *ctx, size_t max)
{
    size_t p = sim_ctx_num_params(ctx);
    ck_assert_uint_le(p, max);
    return p;
}

void harness_sizes_within(const struct sim_ctx *ctx, uint32_t max_w, size_t max_p, uint32_t *n,
                          size_t *p)
{
    *n = harness_workers_within(ctx, max_w);
    *p = harness_params_within(ctx, max_p);
}

void harness_observe_models(void *ud, struct sim_ctx *ctx)
{
    harness_models *o = ud;
    uint32_t n = harness_workers_within(ctx, HARNESS_OBS_WORKERS);
    size_t p = harness_params_within(ctx, HARNESS_OBS_PARAMS);
    if (o->n >= HARNESS_OBS_MAX)
        return;
    size_t k = o->n++;
    o->p = p;
    o->w = n;
    o->t_ns[k] = (long long)sim_ctx_now(ctx);
    for (uint32_t w = 0; w < n; w++) {
        memcpy(o->x[k][w], sim_ctx_params(ctx, w), p * sizeof(float));
        for (size_t i = 0; i < p; i++) {
            o->sum[k][i] += (double)o->x[k][w][i];
            o->max_abs = fmax(o->max_abs, fabs((double)o->x[k][w][i]));
        }
    }
    double d = 0.0;
    for (uint32_t w = 0; w < n; w++)
        for (size_t i = 0; i < p; i++) {
            double e = (double)o->x[k][w][i] - o->sum[k][i] / n;
            d += e * e;
        }
    o->consensus[k] = d / n;
}

int harness_run_ops(const char *file, const proto_ops *ops, const char *stragglers, char *msg)
{
    char set[1024];
    snprintf(set, sizeof(set), "stragglers=%s", stragglers);
    const char *sets[] = { set, "stop.time_s=0.5" };
    sim_err err;
    sim_err_clear(&err);
    sim_scenario *sc = harness_load_file(file, sets, 2);
    ck_assert_msg(sim_run_check(sc, ops, &err) == 0, "check: %s", err.msg);
    char *dir = harness_tmpdir("rejoin");
    sim_run_options opt = { .out_dir = dir };
    sim_run_summary sum;
    int rc = sim_run(sc, ops, &opt, &sum, &err);
    snprintf(msg, 256, "%.255s", err.msg); /* the start of a longer message */
    harness_cleanup(dir);
    sim_scenario_destroy(sc);
    return rc;
}

void harness_tree_digest(const char *dir, char *out, size_t size)
{
    char cmd[4096], path[1100];
    snprintf(path, sizeof(path), "%s.digest", dir);
    snprintf(cmd, sizeof(cmd),
             "cd '%s' && find . -exec stat -c '%%n %%i %%F %%s' {} + | sort >'%s' && "
             "find . -type f -exec md5sum {} + | sort >>'%s'",
             dir, path, path);
    ck_assert_int_eq(system(cmd), 0);
    harness_read_into(path, out, size);
    remove(path);
}

void harness_expect_usage_errors(const char *const *const *cases, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        harness_result r = harness_hetsim(cases[i]);
        ck_assert_msg(r.status == 2, "case %zu exited %d", i, r.status);
        ck_assert_str_eq(r.out, "");
        ck_assert_msg(strlen(r.err) > 0, "case %zu said nothing", i);
    }
}

size_t harness_count_lines(const char *s)
{
    size_t n = 0;
    for (; *s != '\0'; s++)
        n += *s == '\n';
    return n;
}

sim_run_summary harness_run_models(const char *spec, const char *const *sets, size_t n,
                                   harness_models *obs, char **summary)
{
    sim_scenario *sc = harness_load_spec(spec, sets, n);
    char *dir = harness_tmpdir("models");
    sim_run_summary sum = harness_run(sc, dir, obs != NULL ? harness_observe_models : NULL, obs);
    if (summary != NULL)
        *summary = harness_slurp(dir, "summary.json");
    harness_cleanup(dir);
    sim_scenario_destroy(sc);
    return sum;
}

double harness_report_in(const char *summary, const char *key)
{
    char pat[64];
    snprintf(pat, sizeof(pat), "\"%s\": ", key);
    const char *at = strstr(strstr(summary, "\"protocol_report\""), pat);
    ck_assert_msg(at != NULL, "no %s in the report", key);
    return strtod(at + strlen(pat), NULL);
}

char *harness_tmpdir(const char *tag)
{
    char tmpl[256];
    snprintf(tmpl, sizeof(tmpl), "%s%s-XXXXXX", tmp_prefix, tag);
    char *dir = mkdtemp(tmpl);
    ck_assert_msg(dir != NULL, "cannot create %s", tmpl);
    dir = strdup(dir);
    ck_assert_ptr_nonnull(dir);
    return dir;
}

sim_run_summary harness_run_with(sim_scenario *sc, const proto_ops *ops, const char *dir,
                                 sim_run_observe_fn observe, void *ud)
{
    char *tmp = dir == NULL ? harness_tmpdir("run") : NULL;
    sim_run_options opt = { .out_dir = dir != NULL ? dir : tmp,
                            .observe = observe,
                            .observe_ud = ud };
    sim_run_summary sum;
    sim_err err;
    sim_err_clear(&err);
    ck_assert_msg(sim_run(sc, ops, &opt, &sum, &err) == 0, "%s: run: %s", sc->file, err.msg);
    harness_cleanup(tmp);
    return sum;
}

sim_run_summary harness_run(sim_scenario *sc, const char *dir, sim_run_observe_fn observe, void *ud)
{
    return harness_run_with(sc, proto_find(sc->protocol), dir, observe, ud);
}

char *harness_read(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    ck_assert_msg(f != NULL, "cannot open %s", path);
    ck_assert_int_eq(fseek(f, 0, SEEK_END), 0);
    long len = ftell(f);
    ck_assert_int_ge(len, 0);
    ck_assert_int_eq(fseek(f, 0, SEEK_SET), 0);
    char *s = calloc((size_t)len + 1, 1);
    ck_assert_ptr_nonnull(s);
    ck_assert_uint_eq(fread(s, 1, (size_t)len, f), (size_t)len);
    fclose(f);
    if (n != NULL)
        *n = (size_t)len;
    return s;
}

char *harness_slurp(const char *dir, const char *name)
{
    char path[1024];
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    return harness_read(path, NULL);
}

char *harness_run_scenario(char *run_json)
{
    char *obj = strstr(run_json, "\"scenario\": {");
    ck_assert_ptr_nonnull(obj);
    obj = strchr(obj, '{');
    size_t depth = 0, len = 0;
    do
        depth += obj[len] == '{' ? 1 : obj[len] == '}' ? (size_t)-1 : 0;
    while (obj[++len] != '\0' && depth > 0);
    obj[len] = '\0';
    return obj;
}

void harness_strip_wall(char *summary)
{
    char *w = strstr(summary, "\"wall\"");
    ck_assert_ptr_nonnull(w);
    char *end = strchr(w, '\n');
    memmove(w, end, strlen(end) + 1);
}

char *harness_run_threads(sim_scenario *sc, const char *tag, unsigned threads,
                          sim_run_observe_fn observe, void *ud, sim_run_summary *sum)
{
    char *dir = harness_tmpdir(tag);
    char out[1024];
    snprintf(out, sizeof(out), "%s/run", dir);
    sim_run_options opt = {
        .out_dir = out, .threads = threads, .observe = observe, .observe_ud = ud
    };
    sim_err err;
    sim_err_clear(&err);
    int rc = sim_run(sc, proto_find(sc->protocol), &opt, sum, &err);
    char msg[1024];
    sim_err_format(&err, msg, sizeof(msg));
    ck_assert_msg(rc == SIM_OK, "%u threads: %s", threads, msg);
    return dir;
}

double harness_memory_estimate(const char *dir)
{
    char run[1024];
    snprintf(run, sizeof(run), "%s/run", dir);
    char *summary = harness_slurp(run, "summary.json");
    const char *at = strstr(summary, "\"memory_estimate_bytes\": ");
    ck_assert_ptr_nonnull(at);
    double v = strtod(at + strlen("\"memory_estimate_bytes\": "), NULL);
    free(summary);
    return v;
}

void harness_expect_same_outputs(const char *a, const char *b)
{
    static const char *const names[] = { "run.json", "metrics.csv", "workers.csv", "summary.json" };
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        char *x = harness_slurp(a, names[i]), *y = harness_slurp(b, names[i]);
        if (i == 3) {
            harness_strip_wall(x);
            harness_strip_wall(y);
        }
        ck_assert_msg(strcmp(x, y) == 0, "%s differs between %s and %s", names[i], a, b);
        free(x);
        free(y);
    }
}

void harness_expect_same_trace(const char *a, const char *b)
{
    harness_expect_same_outputs(a, b);
    char *x = harness_slurp(a, "events.csv"), *y = harness_slurp(b, "events.csv");
    ck_assert_msg(strcmp(x, y) == 0, "events.csv differs between %s and %s", a, b);
    free(x);
    free(y);
}

sim_run_summary harness_run_pair(sim_scenario *sa, sim_scenario *sb, const char *tag, char **dirs)
{
    char *a = harness_tmpdir(tag), *b = harness_tmpdir(tag);
    sim_run_summary sum = harness_run(sa, a, NULL, NULL);
    harness_run(sb, b, NULL, NULL);
    harness_expect_same_outputs(a, b);
    sim_scenario_destroy(sa);
    sim_scenario_destroy(sb);
    char *both[2] = { a, b };
    if (dirs != NULL)
        memcpy(dirs, both, sizeof(both));
    else
        harness_cleanup_pair(both);
    return sum;
}

void harness_cleanup_pair(char **dirs)
{
    harness_cleanup(dirs[0]);
    harness_cleanup(dirs[1]);
}

void harness_worker_row(const char *csv, unsigned w, unsigned long *iters, double *down_s)
{
    const char *line = csv;
    for (unsigned i = 0; i <= w; i++) {
        line = strchr(line, '\n');
        ck_assert_msg(line != NULL, "workers.csv has no row for worker %u", w);
        line++;
    }
    unsigned id;
    double speed, comp, comm, wait;
    unsigned long samples;
    unsigned long long sent, recv;
    ck_assert_int_eq(sscanf(line, "%u,%lf,%lu,%lu,%lf,%lf,%lf,%llu,%llu,%lf", &id, &speed, iters,
                            &samples, &comp, &comm, &wait, &sent, &recv, down_s),
                     10);
}

/* Removes `path`, and first everything below it if it is a directory (not a link to one). */
static void remove_tree(const char *path)
{
    struct stat st;
    if (lstat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
        DIR *d = opendir(path);
        if (d != NULL) {
            char sub[1024];
            for (struct dirent *e = readdir(d); e != NULL; e = readdir(d)) {
                if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
                    continue;
                snprintf(sub, sizeof(sub), "%s/%s", path, e->d_name);
                remove_tree(sub);
            }
            closedir(d);
        }
    }
    remove(path);
}

void harness_cleanup(char *dir)
{
    if (dir == NULL)
        return;
    ck_assert_msg(strncmp(dir, tmp_prefix, strlen(tmp_prefix)) == 0 && strstr(dir, "..") == NULL,
                  "refusing to remove %s: not a test directory", dir);
    remove_tree(dir);
    free(dir);
}

double harness_summary_number(const char *dir, const char *key)
{
    char *s = harness_slurp(dir, "summary.json");
    char pat[128];
    snprintf(pat, sizeof(pat), "\"%s\": ", key);
    const char *at = strstr(s, pat);
    ck_assert_msg(at != NULL, "no %s in %s/summary.json", key, dir);
    at += strlen(pat);
    double x = NAN;
    if (strncmp(at, "null", 4) != 0) {
        char *end;
        x = strtod(at, &end);
        ck_assert_msg(end != at, "%s in %s/summary.json is not a number", key, dir);
    }
    free(s);
    return x;
}

double harness_report_value(const char *dir, const char *key)
{
    char *s = harness_slurp(dir, "summary.json"), pat[80];
    snprintf(pat, sizeof(pat), "\"%s\": ", key);
    const char *at = strstr(s, "\"protocol_report\"");
    ck_assert_ptr_nonnull(at);
    at = strstr(at, pat);
    double x = at != NULL ? strtod(at + strlen(pat), NULL) : (double)NAN;
    free(s);
    return x;
}

/* Fields of `line` (commas + 1). */
static size_t count_fields(const char *line)
{
    size_t n = 1;
    for (const char *p = line; *p != '\0'; p++)
        n += *p == ',';
    return n;
}

/* Cuts `line` at commas into fields[0..max), returning the count. */
static size_t split_commas(char *line, char **fields, size_t max)
{
    size_t n = 0;
    for (char *p = line;; p++) {
        if (n < max)
            fields[n] = p;
        n++;
        p = strchr(p, ',');
        if (p == NULL)
            return n;
        *p = '\0';
    }
}

harness_csv harness_csv_read(const char *dir, const char *name)
{
    harness_csv t = { 0 };
    t.text = harness_slurp(dir, name);
    size_t lines = 0;
    for (const char *p = t.text; *p != '\0'; p++)
        lines += *p == '\n';
    ck_assert_msg(lines >= 1, "%s/%s has no header", dir, name);
    char *line = t.text, *nl = strchr(line, '\n');
    *nl = '\0';
    t.ncols = count_fields(line);
    t.cols = calloc(t.ncols, sizeof(*t.cols));
    t.cells = calloc((lines - 1) * t.ncols + 1, sizeof(*t.cells));
    ck_assert(t.cols != NULL && t.cells != NULL);
    split_commas(line, t.cols, t.ncols);
    for (line = nl + 1; *line != '\0'; line = nl + 1) {
        nl = strchr(line, '\n');
        ck_assert_msg(nl != NULL, "%s/%s: last row unterminated", dir, name);
        *nl = '\0';
        size_t n = split_commas(line, t.cells + t.nrows * t.ncols, t.ncols);
        ck_assert_msg(n == t.ncols, "%s/%s: row %zu has %zu fields, the header %zu", dir, name,
                      t.nrows + 1, n, t.ncols);
        t.nrows++;
    }
    return t;
}

size_t harness_csv_col(const harness_csv *t, const char *col)
{
    for (size_t j = 0; j < t->ncols; j++)
        if (strcmp(t->cols[j], col) == 0)
            return j;
    ck_abort_msg("no column %s", col);
    return 0;
}

const char *harness_csv_text(const harness_csv *t, size_t row, const char *col)
{
    ck_assert_uint_lt(row, t->nrows);
    return t->cells[row * t->ncols + harness_csv_col(t, col)];
}

double harness_csv_num(const harness_csv *t, size_t row, const char *col)
{
    const char *s = harness_csv_text(t, row, col);
    if (*s == '\0')
        return NAN;
    char *end;
    double x = strtod(s, &end);
    ck_assert_msg(*end == '\0', "column %s, row %zu: \"%s\" is not a number", col, row, s);
    return x;
}

void harness_csv_free(harness_csv *t)
{
    free(t->cols);
    free(t->cells);
    free(t->text);
    memset(t, 0, sizeof(*t));
}

char *harness_run_columns(sim_scenario *sc, const char *const *cols, size_t n, char **summary)
{
    char *dir = harness_tmpdir("columns");
    harness_run(sc, dir, NULL, NULL);
    sim_scenario_destroy(sc);
    harness_csv t = harness_csv_read(dir, "workers.csv");
    size_t size = 64 * n * (t.nrows + 1), used = 0;
    char *out = calloc(size, 1);
    ck_assert_ptr_nonnull(out);
    for (size_t r = 0; r < t.nrows; r++)
        for (size_t i = 0; i < n; i++)
            used += (size_t)snprintf(out + used, size - used, "%s%c",
                                     harness_csv_text(&t, r, cols[i]), i + 1 < n ? ' ' : '\n');
    ck_assert_uint_lt(used, size);
    harness_csv_free(&t);
    if (summary != NULL)
        *summary = harness_slurp(dir, "summary.json");
    harness_cleanup(dir);
    return out;
}

double harness_csv_field(const char *csv, const char *key, size_t nkey, const char *col)
{
    char *text = strdup(csv), *save = NULL, *line = strtok_r(text, "\n", &save);
    int want = -1, i = 0;
    for (char *p = line; p != NULL; i++) {
        size_t len = strcspn(p, ",");
        if (strlen(col) == len && strncmp(p, col, len) == 0)
            want = i;
        p = p[len] == ',' ? p + len + 1 : NULL;
    }
    ck_assert_msg(want >= 0, "no column %s in %s", col, csv);
    double v = NAN;
    bool found = false;
    while (!found && (line = strtok_r(NULL, "\n", &save)) != NULL) {
        const char *p = line;
        for (size_t k = 0; k < nkey && p != NULL; k++)
            p = strchr(p, ',') != NULL ? strchr(p, ',') + 1 : NULL;
        size_t klen = p != NULL ? (size_t)(p - line - 1) : strlen(line);
        if (klen != strlen(key) || strncmp(line, key, klen) != 0)
            continue;
        found = true;
        p = line;
        for (int j = 0; j < want && p != NULL; j++)
            p = strchr(p, ',') != NULL ? strchr(p, ',') + 1 : NULL;
        ck_assert_ptr_nonnull(p);
        char *end = NULL;
        v = strtod(p, &end);
        v = end == p ? (double)NAN : v;
    }
    ck_assert_msg(found, "no row %s in %s", key, csv);
    free(text);
    return v;
}

char *harness_chaos_json(unsigned seed, bool real, const char *protocol)
{
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 7919 + seed);
    size_t size = 8192, used = 0;
    char *s = calloc(size, 1);
    used += (size_t)snprintf(s + used, size - used,
                             "{\"seed\": %u, \"workers\": 12, \"compute\": {\"iteration_ms\": 10,"
                             " \"jitter_sigma\": 0.3, \"speeds\": [",
                             seed);
    for (unsigned w = 0; w < 12; w++)
        used += (size_t)snprintf(s + used, size - used, "%s%.3f", w > 0 ? ", " : "",
                                 0.5 + 1.5 * gsl_rng_uniform(r));
    used += (size_t)snprintf(s + used, size - used,
                             "]}, \"stragglers\": [{\"kind\": \"random\", \"probability\": 0.1,"
                             " \"slowdown\": 4}, {\"kind\": \"link\", \"workers\": [%lu],"
                             " \"from_s\": 0.3, \"to_s\": 0.9, \"extra_latency_ms\": 7}",
                             gsl_rng_uniform_int(r, 12));
    for (int f = 0; f < 8; f++) {
        double at = 1.2 * gsl_rng_uniform(r);
        used += (size_t)snprintf(s + used, size - used,
                                 ", {\"kind\": \"failure\", \"workers\": [%lu], \"at_s\": %.4f",
                                 gsl_rng_uniform_int(r, 12), at);
        if (gsl_rng_uniform(r) < 5.0 / 6.0)
            used += (size_t)snprintf(s + used, size - used, ", \"recover_s\": %.4f",
                                     at + 0.005 + 0.395 * gsl_rng_uniform(r));
        used += (size_t)snprintf(s + used, size - used, "}");
    }
    const char *workload =
        real ? "{\"dataset\": {\"name\": \"synthetic\", \"samples\": 1200, \"test_samples\": 100,"
               " \"dim\": 8, \"classes\": 3}, \"model\": {\"name\": \"softmax\"}, \"batch\": 8,"
               " \"lr\": 0.05, \"momentum\": 0.9, \"message_bytes\": 1500000}"
             : "{\"model\": {\"name\": \"none\"}, \"message_bytes\": 1500000}";
    used += (size_t)snprintf(s + used, size - used,
                             "], \"network\": {\"bandwidth_gbps\": 10, \"latency_us\": 50},"
                             " \"workload\": %s, \"protocol\": %s,"
                             " \"stop\": {\"time_s\": 2}, \"eval\": {\"every_s\": 0.1,"
                             " \"samples\": 100}}",
                             workload, protocol);
    ck_assert_uint_lt(used, size);
    gsl_rng_free(r);
    return s;
}

const char harness_small_json[] =
    "{ \"seed\": 5, \"workers\": 4, \"compute\": { \"iteration_ms\": 10 },\n"
    "  \"workload\": { \"dataset\": { \"name\": \"synthetic\", \"samples\": 2000, \"dim\": 20,\n"
    "                               \"classes\": 4 },\n"
    "                \"model\": { \"name\": \"softmax\" }, \"batch\": 32, \"lr\": 0.1 },\n"
    "  \"protocol\": { \"name\": \"allreduce\" },\n"
    "  \"stop\": { \"time_s\": 4 }, \"eval\": { \"every_s\": 1, \"samples\": 500 } }\n";

const char harness_fake_index_head[] =
    "point,dir,proto,lr,seed,stop_reason,sim_time_s,final_accuracy,best_accuracy,"
    "time_to_target_s,mean_throughput_sps,wall_s\n";

const char harness_fake_workers[] =
    "worker,speed,iterations,samples,compute_s,comm_s,wait_s,bytes_sent,bytes_received,down_s,"
    "params_fnv\n0,1,10,1000,3,1,1,1840000,0,0,0\n";

void harness_fake_run(char *dir, size_t size, const char *sweep, const char *name,
                      const char *curve, bool varied)
{
    char text[8192], *cut = strdup(curve);
    snprintf(dir, size, "%s/%s", sweep, name);
    ck_assert_int_eq(mkdir(dir, 0777), 0);
    size_t len = (size_t)snprintf(text, sizeof(text),
                                  "time_s,iterations,samples,epoch,train_loss,test_loss,"
                                  "test_accuracy,consensus,throughput_sps\n");
    for (char *tok = strtok(cut, " "); tok != NULL; tok = strtok(NULL, " ")) {
        double t = 0, acc = 0;
        ck_assert_int_eq(sscanf(tok, "%lf:%lf", &t, &acc), 2);
        len +=
            (size_t)snprintf(text + len, sizeof(text) - len, "%g,%g,%g,0,1,%g,%g,0,%g\n", t, t * 10,
                             t * 100, varied ? 2 - acc : 1, acc, varied ? 3000 + 100 * t : 100);
    }
    free(cut);
    harness_write(dir, "metrics.csv", text);
}

bool harness_exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

sim_arena *harness_graph_arena(struct graph *g, const struct graph_spec *spec)
{
    sim_err err;
    sim_err_clear(&err);
    sim_arena *s = sim_arena_create_sizing(&err);
    ck_assert_msg(s != NULL, "%s", err.msg);
    graph_reserve(g, s, spec);
    sim_arena *a = sim_arena_create(sim_arena_bytes(s), &err);
    sim_arena_destroy(s);
    ck_assert_msg(a != NULL, "%s", err.msg);
    graph_reserve(g, a, spec);
    ck_assert(!sim_arena_overrun(a));
    return a;
}

size_t harness_protocols(void)
{
    size_t n;
    proto_list(&n);
    return n;
}

const char *harness_protocol(size_t i, char *buf, size_t size)
{
    size_t n;
    const proto_ops *const *all = proto_list(&n);
    ck_assert_uint_lt(i, n);
    snprintf(buf, size, "{\"name\": \"%s\"}", all[i]->name);
    return all[i]->name;
}

void harness_expect_registered(const char *json)
{
    char name[64] = "";
    const char *at = strstr(json, "\"name\": \"");
    if (at != NULL)
        sscanf(at + 9, "%63[^\"]", name);
    ck_assert_msg(proto_find(name) != NULL, "%s: no registered protocol of that name", json);
}

/* Fails unless the run directories below `a` and `b` hold the same files, byte for byte
 * (summary.json without its wall line). */
void harness_expect_same_files(const char *a, const char *b, const char *what)
{
    char ra[1024], rb[1024];
    snprintf(ra, sizeof(ra), "%s/run", a);
    snprintf(rb, sizeof(rb), "%s/run", b);
    DIR *d = opendir(ra);
    ck_assert_ptr_nonnull(d);
    size_t files = 0;
    for (struct dirent *e = readdir(d); e != NULL; e = readdir(d)) {
        if (e->d_name[0] == '.')
            continue;
        char *x = harness_slurp(ra, e->d_name), *y = harness_slurp(rb, e->d_name);
        if (strcmp(e->d_name, "summary.json") == 0) {
            harness_strip_wall(x);
            harness_strip_wall(y);
        }
        ck_assert_msg(strcmp(x, y) == 0, "%s: %s differs between %s and %s", what, e->d_name, ra,
                      rb);
        free(x);
        free(y);
        files++;
    }
    closedir(d);
    size_t other = 0;
    d = opendir(rb);
    ck_assert_ptr_nonnull(d);
    for (struct dirent *e = readdir(d); e != NULL; e = readdir(d))
        other += e->d_name[0] != '.';
    closedir(d);
    ck_assert_msg(files == other && files >= 5, "%s: %zu files against %zu", what, files, other);
}

/* The chaos scenario (harness_chaos_json, seed `seed` + i) for the i-th registered protocol at
 * its defaults: its name, and the setting of the defaults' server host, which gives ps's
 * server, ripples's group generator and easgd's centre a host no failure takes down. */
char *harness_protocol_chaos(int i, unsigned seed, const char **name, const char **hosts)
{
    char protocol[128];
    *name = harness_protocol((size_t)i, protocol, sizeof(protocol));
    *hosts = HARNESS_PROTOCOL_SERVERS_SET;
    return harness_chaos_json(seed + (unsigned)i, true, protocol);
}
