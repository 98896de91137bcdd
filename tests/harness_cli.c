/* The end-to-end suites' runs of the built binary ($HETSIM) and the set-ups they repeat in a
 * temporary directory: a run, a sweep, a golden; see harness.h. Split from harness.c by seam. */
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <check.h>

#include "harness.h"
#include "scenario/scenario.h"
#include "sim/cfg.h"

void harness_read_into(const char *path, char *buf, size_t size)
{
    FILE *f = fopen(path, "r");
    size_t n = f != NULL ? fread(buf, 1, size - 1, f) : 0;
    buf[n] = '\0';
    if (f != NULL)
        fclose(f);
}

/* A run of the built binary under way: its process and the files its outputs go to. */
typedef struct started {
    pid_t pid;
    int fo, fe;
    char out[32], err[32];
} started;

/* Starts $HETSIM with `args`, standard output and error going to temporary files. */
static void start_hetsim(const char *const *args, started *s)
{
    const char *bin = getenv("HETSIM");
    ck_assert_msg(bin != NULL, "HETSIM is not set");
    snprintf(s->out, sizeof(s->out), "/tmp/hetsim-run-out-XXXXXX");
    snprintf(s->err, sizeof(s->err), "/tmp/hetsim-run-err-XXXXXX");
    s->fo = mkstemp(s->out);
    s->fe = mkstemp(s->err);
    ck_assert_msg(s->fo >= 0 && s->fe >= 0, "cannot make the output files");
    s->pid = fork();
    ck_assert_msg(s->pid >= 0, "cannot fork");
    if (s->pid == 0) {
        dup2(s->fo, 1);
        dup2(s->fe, 2);
        const char *argv[32] = { bin };
        for (size_t i = 0; args[i] != NULL && i < 30; i++)
            argv[i + 1] = args[i];
        execv(bin, (char *const *)argv);
        _exit(127);
    }
}

/* Waits for the run `s` started and returns what it left. */
static harness_result finish_hetsim(started *s)
{
    harness_result r;
    int status;
    waitpid(s->pid, &status, 0);
    close(s->fo);
    close(s->fe);
    r.status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    harness_read_into(s->out, r.out, sizeof(r.out));
    harness_read_into(s->err, r.err, sizeof(r.err));
    remove(s->out);
    remove(s->err);
    return r;
}

harness_result harness_hetsim(const char *const *args)
{
    started s;
    start_hetsim(args, &s);
    return finish_hetsim(&s);
}

/* How the child of harness_hetsim_racing ends (its exit status). */
enum {
    RACE_MADE = 0,   /* the change was made in time */
    RACE_FAILED = 1, /* the change failed */
    RACE_LATE = 3,   /* made, but the command had passed the window meanwhile */
    RACE_ENDED = 4,  /* made, but the command had ended meanwhile */
    RACE_MISSED = 5  /* not made: the command ended before the marker was seen */
};

/* True while the process `pid` (the child of the caller's parent) runs: it exists and is no
 * zombie, read from /proc. */
static bool still_running(pid_t pid)
{
    char path[64], text[512];
    snprintf(path, sizeof(path), "/proc/%ld/stat", (long)pid);
    harness_read_into(path, text, sizeof(text));
    const char *paren = strrchr(text, ')'); /* the state follows the command's name */
    return paren != NULL && paren[1] == ' ' && paren[2] != '\0' && paren[2] != 'Z' &&
           paren[2] != 'X';
}

/* The child: polls every 0.1 ms for the marker while the command `cmd` runs, makes the
 * change once the marker is there, and says (its exit status) whether the change came in
 * time. Never returns; asserts nothing (a Check assertion belongs to the test's process). */
static void race_child(const harness_race *race, pid_t cmd)
{
    struct stat st;
    while (stat(race->marker, &st) != 0) {
        if (!still_running(cmd))
            _exit(RACE_MISSED);
        nanosleep(&(struct timespec){ .tv_nsec = 100000 }, NULL);
    }
    if (!still_running(cmd)) /* a marker left when the command ended */
        _exit(RACE_MISSED);
    if (race->change(race->arg) != 0)
        _exit(RACE_FAILED);
    bool in_time = race->until != NULL ? stat(race->until, &st) != 0 : stat(race->marker, &st) == 0;
    _exit(!still_running(cmd) ? RACE_ENDED : in_time ? RACE_MADE : RACE_LATE);
}

harness_result harness_hetsim_racing(const char *const *args, const harness_race *race)
{
    for (int attempt = 1;; attempt++) {
        started s;
        start_hetsim(args, &s);
        pid_t child = fork();
        ck_assert_msg(child >= 0, "cannot fork");
        if (child == 0)
            race_child(race, s.pid);
        harness_result r = finish_hetsim(&s);
        int status = 0; /* the child sees the command's end within 0.1 ms and ends */
        waitpid(child, &status, 0);
        int code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
        ck_assert_msg(code == RACE_MADE || code == RACE_LATE || code == RACE_ENDED ||
                          code == RACE_MISSED,
                      "the change failed (the child's status %d)", status);
        if (code == RACE_MADE)
            return r;
        ck_assert_msg(attempt < HARNESS_RACE_TRIES,
                      "in %d attempts, the change never came in time (%s: the marker %s)", attempt,
                      args[0], race->marker);
        fprintf(stderr, "%s: attempt %d: %s; running it again\n", args[0], attempt,
                code == RACE_LATE    ? "the change came too late (past its window)"
                : code == RACE_ENDED ? "the change came too late (the command had ended)"
                                     : "no change (its marker unseen while the command ran)");
        if (race->again != NULL)
            race->again(race->arg, code == RACE_LATE || code == RACE_ENDED);
    }
}

int harness_save(const char *dir, const char *name, const char *text)
{
    char tmp[4200], path[4200];
    snprintf(tmp, sizeof(tmp), "%s/%s.new", dir, name);
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    FILE *f = fopen(tmp, "w");
    if (f == NULL)
        return -1;
    bool ok = fputs(text, f) >= 0;
    return fclose(f) == 0 && ok && rename(tmp, path) == 0 ? 0 : -1;
}

int harness_edit_save(void *arg)
{
    const harness_edit *e = arg;
    return harness_save(e->dir, e->name, e->text);
}

void harness_edit_undo(void *arg, bool changed)
{
    const harness_edit *e = arg;
    (void)changed;
    harness_write(e->dir, e->name, e->original);
    if (e->out != NULL)
        harness_cleanup(strdup(e->out));
}

harness_result harness_hetsim_fifo(const char *fifo, const char *text, const char *const *args)
{
    pid_t writer = fork();
    ck_assert_msg(writer >= 0, "cannot fork");
    if (writer == 0) {
        FILE *f = fopen(fifo, "w");
        _exit(f != NULL && fputs(text, f) >= 0 && fclose(f) == 0 ? 0 : 1);
    }
    harness_result r = harness_hetsim(args);
    kill(writer, SIGKILL);
    waitpid(writer, NULL, 0);
    return r;
}

void harness_write(const char *dir, const char *name, const char *text)
{
    char path[4200];
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    ck_assert_msg(f != NULL, "cannot write %s", path);
    fputs(text, f);
    ck_assert_msg(fclose(f) == 0, "cannot write %s", path);
}

const char harness_quick_json[] =
    "{\"seed\": 5, \"workers\": 3, \"compute\": {\"iteration_ms\": 10},\n"
    " \"workload\": {\"model\": {\"name\": \"none\"}, \"message_bytes\": 4000},\n"
    " \"protocol\": {\"name\": \"allreduce\"}, \"stop\": {\"time_s\": 0.2},\n"
    " \"eval\": {\"every_s\": 0.05}}\n";

const char harness_protocols_sweep[] =
    "{\"base\": \"s.json\", \"grid\": {\"protocol.name\": [\"allreduce\", \"dpsgd\"]}, "
    "\"seeds\": 2}\n";

/* `dir`/`name` into buf[size]; fails the test if it does not fit. */
static void path_in(char *buf, size_t size, const char *dir, const char *name)
{
    ck_assert_msg((size_t)snprintf(buf, size, "%s/%s", dir, name) < size, "%s/%s: too long", dir,
                  name);
}

/* Fails the test, naming the command `what` and what it printed on standard error, unless it
 * exited 0. */
static void expect_success(const char *what, const harness_result *res)
{
    ck_assert_msg(res->status == 0, "%s: exit %d\n%s", what, res->status, res->err);
}

void harness_run_in(const char *dir, const char *scenario, char *s, char *r, size_t size)
{
    if (scenario != NULL)
        harness_write(dir, "s.json", scenario);
    path_in(s, size, dir, "s.json");
    path_in(r, size, dir, "r");
    harness_result res = harness_hetsim((const char *[]){ "run", s, "-o", r, "--quiet", NULL });
    expect_success("run", &res);
}

void harness_poke_index(const char *sweep, const char *find, size_t offset, char byte)
{
    char index[1024];
    snprintf(index, sizeof(index), "%s/index.csv", sweep);
    char *text = harness_read(index, NULL);
    char *at = strstr(text, find);
    ck_assert_msg(at != NULL, "%s holds no %s", index, find);
    at[offset] = byte;
    FILE *f = fopen(index, "w");
    ck_assert_ptr_nonnull(f);
    fputs(text, f);
    ck_assert_int_eq(fclose(f), 0);
    free(text);
}

harness_result harness_plot_style_copy(const char *dir, const char *run, int c, const char *copy,
                                       char *gp, char *p, size_t size)
{
    char st[1024];
    snprintf(st, sizeof(st), "%s/st%d", dir, c);
    snprintf(p, size, "%s/p%d", dir, c);
    ck_assert_int_eq(mkdir(st, 0777), 0);
    ck_assert_int_eq(harness_save(st, "convergence.gp", copy), 0);
    snprintf(gp, size, "%s/convergence.gp", st);
    return harness_hetsim((const char *[]){ "plot", run, "--style", st, "-o", p, NULL });
}

void harness_sweep_file(const char *dir, const char *scenario, const char *sweep, char *sw,
                        size_t size)
{
    if (scenario != NULL)
        harness_write(dir, "s.json", scenario);
    harness_write(dir, "sw.json", sweep);
    path_in(sw, size, dir, "sw.json");
}

void harness_sweep_in(const char *dir, const char *scenario, const char *sweep, char *sw, char *o,
                      size_t size)
{
    harness_sweep_file(dir, scenario, sweep, sw, size);
    path_in(o, size, dir, "o");
    harness_result res = harness_hetsim((const char *[]){ "sweep", sw, "-o", o, "--quiet", NULL });
    expect_success("sweep", &res);
}

harness_result harness_sweep_grid(const char *dir, const char *grid, char *o, size_t size)
{
    char text[2048], sw[4200];
    ck_assert_msg((size_t)snprintf(text, sizeof(text), "{\"base\": \"s.json\", \"grid\": %s}\n",
                                   grid) < sizeof(text),
                  "the grid is too long");
    harness_sweep_file(dir, NULL, text, sw, sizeof(sw));
    path_in(o, size, dir, "o");
    return harness_hetsim((const char *[]){ "sweep", sw, "-o", o, "--quiet", NULL });
}

void harness_golden_in(const char *dir, const char *scenario, char *s, char *g, size_t size)
{
    if (scenario != NULL)
        harness_write(dir, "s.json", scenario);
    path_in(s, size, dir, "s.json");
    path_in(g, size, dir, "g");
    harness_result res = harness_hetsim(
        (const char *[]){ "check", s, "--golden", g, "--update", "--seeds", "3", NULL });
    expect_success("update", &res);
}

size_t harness_deep_dir(const char *dir, char letter, int depth, char *deep, size_t size)
{
    char name[HARNESS_DEEP_NAME + 1];
    memset(name, letter, HARNESS_DEEP_NAME);
    name[HARNESS_DEEP_NAME] = '\0';
    size_t len = (size_t)snprintf(deep, size, "%s", dir);
    for (int i = 0; i < depth; i++) {
        ck_assert_msg(len + 1 + HARNESS_DEEP_NAME < size, "%s: too deep for %zu bytes", dir, size);
        len += (size_t)snprintf(deep + len, size - len, "/%s", name);
        ck_assert_int_eq(mkdir(deep, 0777), 0);
    }
    return len;
}

/* `json` parsed and made canonical; fails the test if either fails. */
static sim_cfg *canonical(const char *json)
{
    sim_cfg *c = sim_cfg_parse(json, strlen(json), "t.json", NULL);
    ck_assert_msg(c != NULL, "%s: no JSON", json);
    ck_assert_int_eq(sim_scenario_canonical(c, NULL), SIM_OK);
    return c;
}

void harness_canonical_pairs(const char *const (*same)[2], size_t nsame,
                             const char *const (*other)[2], size_t nother)
{
    char diff[256];
    for (size_t i = 0; i < nsame + nother; i++) {
        const char *const *pair = i < nsame ? same[i] : other[i - nsame];
        sim_cfg *a = canonical(pair[0]), *b = canonical(pair[1]);
        size_t n = sim_cfg_diff(a, b, NULL, 0, diff, sizeof(diff));
        ck_assert_msg(i < nsame ? n == 0 : n > 0, "%s %zu: %zu keys differ (%s)",
                      i < nsame ? "same" : "other", i < nsame ? i : i - nsame, n, diff);
        sim_cfg_destroy(a);
        sim_cfg_destroy(b);
    }
}

double harness_children_cpu_s(void)
{
    struct rusage u;
    ck_assert(getrusage(RUSAGE_CHILDREN, &u) == 0);
    return (double)u.ru_utime.tv_sec + 1e-6 * (double)u.ru_utime.tv_usec +
           (double)u.ru_stime.tv_sec + 1e-6 * (double)u.ru_stime.tv_usec;
}

/* Built with AddressSanitizer, as the CI's sanitizer build (a debug build) is: its runs take
 * 3 to 10 times the processor time of the debugoptimized build the bounds are set on. */
#if defined(__SANITIZE_ADDRESS__)
#define HARNESS_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define HARNESS_ASAN 1
#endif
#endif
#ifndef HARNESS_ASAN
#define HARNESS_ASAN 0
#endif

double harness_cpu_bound(double s)
{
    return HARNESS_ASAN ? 5.0 * s : s;
}

double harness_run_listing(const char *name, int n, const char *head, const char *tail,
                           char **summary)
{
    size_t cap = strlen(head) + strlen(tail) + (size_t)n * 8 + 1;
    char *json = malloc(cap);
    ck_assert_ptr_nonnull(json);
    size_t len = (size_t)snprintf(json, cap, "%s", head);
    for (int w = 1; w < n; w++)
        len += (size_t)snprintf(json + len, cap - len, "%s%d", w > 1 ? ", " : "", w);
    snprintf(json + len, cap - len, "%s", tail);
    char *dir = harness_tmpdir(name);
    harness_write(dir, "s.json", json);
    free(json);
    char s[600], r[600];
    path_in(s, sizeof(s), dir, "s.json");
    path_in(r, sizeof(r), dir, "r");
    double before = harness_children_cpu_s();
    harness_result res = harness_hetsim((const char *[]){ "run", s, "-o", r, "--quiet", NULL });
    double cpu = harness_children_cpu_s() - before;
    ck_assert_msg(res.status == 0, "%s: exit %d\n%.500s", name, res.status, res.err);
    if (summary)
        *summary = harness_slurp(r, "summary.json");
    harness_cleanup(dir);
    return cpu;
}

/* The fields of a line of CSV (a quoted field unquoted, "" read as ") into f[max], cut in
 * place; their count. */
static size_t split_fields(char *line, char **f, size_t max)
{
    size_t n = 0;
    for (char *p = line; n < max; p++) {
        char *out = p;
        f[n++] = out;
        if (*p == '"')
            for (p++; *p != '\0' && (*p != '"' || p[1] == '"'); p++)
                *out++ = *p == '"' ? *p++ : *p;
        else
            for (; *p != ',' && *p != '\0'; p++)
                *out++ = *p;
        p += strcspn(p, ","); /* past a closing quote */
        char end = *p;
        *out = '\0';
        if (end == '\0')
            break;
    }
    return n;
}

/* Whether `cell` is JSON text (a number, an array, ...); the sweep writes a string's text
 * without its quotes. */
static bool json_cell(const char *cell)
{
    size_t n = strlen(cell) + 8;
    char *wrap = malloc(n);
    ck_assert_ptr_nonnull(wrap);
    snprintf(wrap, n, "{\"v\":%s}", cell);
    sim_cfg *v = sim_cfg_parse(wrap, strlen(wrap), NULL, NULL);
    free(wrap);
    sim_cfg_destroy(v);
    return v != NULL;
}

/* dir/run.json with each of the row's swept keys and seed set to its cell as the sweep wrote
 * it from the value (an empty cell left out). */
static void fake_keys(const char *dir, char *const *head, char *const *cell, size_t ncols)
{
    char path[1200], set[1200];
    snprintf(path, sizeof(path), "%s/run.json", dir);
    if (!harness_exists(path))
        return;
    char *text = harness_read(path, NULL);
    sim_cfg *root = sim_cfg_parse(text, strlen(text), NULL, NULL);
    free(text);
    for (size_t k = 2; root != NULL && k < ncols; k++) {
        const char *q = json_cell(cell[k]) ? "" : "\"";
        snprintf(set, sizeof(set), "scenario.%s=%s%s%s", head[k], q, cell[k], q);
        if (cell[k][0] != '\0')
            ck_assert_msg(sim_cfg_override(root, set, NULL) == SIM_OK, "%s: %s", path, set);
    }
    char *out = root != NULL ? sim_cfg_print(root, true) : NULL;
    if (out != NULL)
        harness_write(dir, "run.json", out);
    free(out);
    sim_cfg_destroy(root);
}

void harness_fake_index(const char *sweep, const char *text)
{
    harness_write(sweep, "index.csv", text);
    char *copy = strdup(text), *save = NULL, *head[64], *cell[64], dir[1100];
    ck_assert_ptr_nonnull(copy);
    char *line = strtok_r(copy, "\n", &save);
    size_t ncols = line != NULL ? split_fields(line, head, 64) : 0, seed = 0;
    while (seed < ncols && strcmp(head[seed], "seed") != 0)
        seed++;
    for (line = strtok_r(NULL, "\n", &save); seed + 1 < ncols && line != NULL;
         line = strtok_r(NULL, "\n", &save)) {
        if (split_fields(line, cell, 64) != ncols || strcmp(cell[seed + 1], "missing") == 0 ||
            strchr(cell[1], '/') != NULL)
            continue; /* a row of a damaged index, or without results: as it is */
        snprintf(dir, sizeof(dir), "%s/%s", sweep, cell[1]);
        fake_keys(dir, head, cell, seed + 1);
    }
    free(copy);
}
