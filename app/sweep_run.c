/* Sweeps: the points run as child processes, `jobs` at a time, and the sweep's output
 * directory (see sweep.h). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "app/sweep.h"
#include "app/sweep_state.h"
#include "outputs/output.h"
#include "outputs/rundir.h"
#include "sim/file.h"

extern char **environ; /* POSIX defines it but no header declares it */

/* ---- Running ---------------------------------------------------------------------------- */

/* Whether run.json `run` read the compute.profile bytes and the traces' points point `p` was
 * validated with (its profile_fnv, present when the scenario names a profile, and the inputs'
 * "p=HEX"; its traces_fnv, present when it has a trace rule): a point run before its profile or
 * a trace was edited is run again, as a sweep run whole after the edit would. A run.json
 * without the key (written before hetsim recorded it) is taken as the same. */
static bool same_inputs(sim_cfg *run, const point *p)
{
    char fnv[32], want[32];
    if (p->inputs != NULL && strncmp(p->inputs, "p=", 2) == 0 && sim_cfg_has(run, "profile_fnv") &&
        !(sim_cfg_string(run, "profile_fnv", fnv, sizeof(fnv), NULL) == 0 &&
          strncmp(fnv, p->inputs + 2, 16) == 0 && strlen(fnv) == 16))
        return false;
    if (!p->has_traces || !sim_cfg_has(run, "traces_fnv"))
        return true;
    snprintf(want, sizeof(want), "%016" PRIx64, p->traces);
    return sim_cfg_string(run, "traces_fnv", fnv, sizeof(fnv), NULL) == 0 && strcmp(fnv, want) == 0;
}

/* Whether `dir` holds `name` as a regular file (the run wrote it). */
static bool has_file(const char *dir, const char *name)
{
    char path[PATH_TEXT + 16];
    struct stat st;
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    return lstat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* Point k's run is there: its directory (the sweep's own, never a symbolic link to a run
 * elsewhere, which running it refuses) holds a finished run of the point's scenario (its
 * scenario_hash, or its canonical form: sw_run_is; a base whose keys were reordered or respelt
 * since keeps its finished points), of the
 * profile bytes it was validated with, whole: a run writes its four files at once, so one
 * removed since (metrics.csv, workers.csv) is a damaged run, run again (it was taken as done:
 * the point's rows were left out of curves.csv, exit 0). */
bool app_sweep_done(const app_sweep *sw, size_t k)
{
    char dir[PATH_TEXT];
    sw_join(dir, sizeof(dir), sw->dir, sw->points[k].name);
    struct stat st;
    if (lstat(dir, &st) == 0 && S_ISLNK(st.st_mode))
        return false;
    if (!has_file(dir, "metrics.csv") || !has_file(dir, "workers.csv"))
        return false;
    sim_cfg *summary = sw_read_json(dir, "summary.json");
    sim_cfg *run = summary != NULL ? sw_read_json(dir, "run.json") : NULL;
    bool done = sw_run_is(run, &sw->points[k]) && same_inputs(run, &sw->points[k]);
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

/* The arguments of point k's run: `hetsim run BASE -o DIR --quiet --threads N --set ...`,
 * into argv, NULL-terminated (room for 2 * ncols + 11: 8, a pair per grid entry and the
 * seed's, the NULL) from the scratch `s`; `threads` holds the count. */
static void point_argv(const app_sweep *sw, size_t k, scratch *s, const char *dir, char *threads,
                       const char **argv)
{
    size_t n = 0, nsets = sw_point_sets(sw, k, s);
    argv[n++] = sw->opt.exe;
    argv[n++] = "run";
    argv[n++] = sw->base;
    argv[n++] = "-o";
    argv[n++] = dir;
    argv[n++] = "--quiet";
    /* One thread a run unless told: -j runs at once already fill the cores. */
    snprintf(threads, 16, "%u", sw->opt.threads > 0 ? sw->opt.threads : 1);
    argv[n++] = "--threads";
    argv[n++] = threads;
    for (size_t i = 0; i < nsets; i++) {
        argv[n++] = "--set";
        argv[n++] = s->sets[i];
    }
    argv[n] = NULL;
}

bool app_sweep_owns(const char *out_dir)
{
    const char *token = getenv(APP_SWEEP_POINT_ENV);
    if (token == NULL || out_dir == NULL)
        return false;
    char *end;
    errno = 0;
    long long pid = strtoll(token, &end, 10);
    return errno == 0 && end != token && *end == ':' && pid == (long long)getppid() &&
           strcmp(end + 1, out_dir) == 0;
}

const char *app_sweep_inputs(const char *out_dir)
{
    return app_sweep_owns(out_dir) ? getenv(APP_SWEEP_INPUTS_ENV) : NULL;
}

/* Whether the environment entry `e` sets the variable `name`. */
static bool sets(const char *e, const char *name)
{
    size_t len = strlen(name);
    return strncmp(e, name, len) == 0 && e[len] == '=';
}

/* The child's environment: ours without an owner token nor inputs, then the token of point
 * directory `dir` ("PID:DIR", app_sweep_owns), written into `token`, and `inputs` (the point's
 * APP_SWEEP_INPUTS_ENV entry, NULL: none); NULL-terminated and malloc'd (the strings are ours,
 * `token`'s and `inputs`'), or NULL. */
static char **point_env(const char *dir, char *token, size_t size, char *inputs)
{
    size_t n = 0, m = 0;
    while (environ[n] != NULL)
        n++;
    char **env = calloc(n + 3, sizeof(*env));
    if (env == NULL)
        return NULL;
    for (size_t i = 0; i < n; i++)
        if (!sets(environ[i], APP_SWEEP_POINT_ENV) && !sets(environ[i], APP_SWEEP_INPUTS_ENV))
            env[m++] = environ[i];
    snprintf(token, size, "%s=%lld:%s", APP_SWEEP_POINT_ENV, (long long)getpid(), dir);
    env[m++] = token;
    env[m] = inputs;
    return env;
}

/* "APP_SWEEP_INPUTS_ENV=TEXT" of point k (malloc'd), or NULL when it has none or past the
 * size the kernel takes for one variable (128 KiB: a point of over 1,024 traces is folded by
 * sim_scenario_inputs_text into one hash, so only an out of memory leaves it out). */
static char *point_inputs(const app_sweep *sw, size_t k)
{
    const char *text = sw->points[k].inputs;
    size_t len = text != NULL ? strlen(APP_SWEEP_INPUTS_ENV) + strlen(text) + 2 : 0;
    char *entry = len > 0 && len < 131072 ? malloc(len) : NULL;
    if (entry != NULL)
        snprintf(entry, len, "%s=%s", APP_SWEEP_INPUTS_ENV, text);
    return entry;
}

long app_sweep_spawn(const app_sweep *sw, size_t k, app_sweep_child *child, sim_err *err)
{
    char dir[PATH_TEXT], threads[16], token[PATH_TEXT + 64];
    sw_join(dir, sizeof(dir), sw->dir, sw->points[k].name);
    *child = (app_sweep_child){ .pid = -1, .k = k };
    scratch s;
    const char **argv = calloc(2 * sw->ncols + 11, sizeof(*argv));
    char *inputs = point_inputs(sw, k);
    char **env = point_env(dir, token, sizeof(token), inputs);
    if (sw_scratch_init(sw, &s, err) != 0 || argv == NULL || env == NULL ||
        (inputs == NULL && sw->points[k].inputs != NULL)) {
        sw_scratch_fini(&s);
        free(argv);
        free(env);
        free(inputs);
        return sw_oom(err), -1;
    }
    point_argv(sw, k, &s, dir, threads, argv);
    /* Its standard error into a temporary file, read when it ends (app_sweep_reap): without
     * one (no room in the temporary folder), it writes to ours. */
    child->log = tmpfile();
    if (child->log != NULL)
        fcntl(fileno(child->log), F_SETFD, FD_CLOEXEC); /* not into the other points' runs */
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
        if (child->log != NULL)
            dup2(fileno(child->log), STDERR_FILENO);
        execve(sw->opt.exe, (char *const *)argv, env);
        _exit(127);
    }
    free(argv);
    free(env);
    free(inputs);
    sw_scratch_fini(&s);
    child->pid = pid;
    if (pid < 0) {
        if (child->log != NULL)
            fclose(child->log);
        child->log = NULL;
        sim_err_set(err, SIM_EIO, NULL, "cannot start a run: fork failed");
    }
    return (long)pid;
}

int app_sweep_reap(const app_sweep *sw, app_sweep_child *child, int status, bool fresh, FILE *log)
{
    int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    char dir[PATH_TEXT], *line = NULL;
    sw_join(dir, sizeof(dir), sw->dir, sw->points[child->k].name);
    sim_err named; /* the directory's control bytes escaped, as every message writes them */
    sim_err_set(&named, SIM_OK, NULL, "hetsim: point %zu (%s): ", child->k, dir);
    const char *who = named.msg;
    size_t cap = 0, said = 0;
    if (child->log != NULL && fseek(child->log, 0, SEEK_SET) == 0) {
        for (ssize_t n; (n = getline(&line, &cap, child->log)) > 0; said++) {
            const char *text = strncmp(line, "hetsim: ", 8) == 0 ? line + 8 : line;
            fprintf(log, "%s%s%s%s", fresh && said == 0 ? "\r\033[K" : "", who, text,
                    line[n - 1] == '\n' ? "" : "\n");
        }
    }
    if (code != 0 && said == 0) {
        char how[64];
        if (WIFEXITED(status))
            snprintf(how, sizeof(how), "exit status %d", code);
        else
            snprintf(how, sizeof(how), "killed by signal %d", WTERMSIG(status));
        fprintf(log, "%s%sfailed (%s)\n", fresh ? "\r\033[K" : "", who, how);
    }
    free(line);
    if (code == 0 && !app_sweep_done(sw, child->k)) { /* a file it read changed meanwhile */
        fprintf(log,
                "%s%sran another scenario than the sweep's (its run.json's scenario_hash is not "
                "the point's): a file the point reads (the base scenario, a compute.profile, a "
                "trace) changed during the sweep; run the sweep again\n",
                fresh && said == 0 ? "\r\033[K" : "", who);
        code = 1;
    }
    if (child->log != NULL)
        fclose(child->log);
    child->log = NULL;
    child->pid = -1;
    return code;
}

int app_sweep_wait(const app_sweep *sw, app_sweep_child *child, FILE *log)
{
    int status = 0;
    if (waitpid((pid_t)child->pid, &status, 0) < 0)
        status = 127 << 8; /* as an exit status of 127 */
    return app_sweep_reap(sw, child, status, false, log);
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

/* The sweep's own files in its directory, which it replaces whole at its end: a directory, a
 * FIFO, a link or a device there is refused before any point runs (a directory index.csv ran
 * every point, then "cannot write DIR/index.csv: Is a directory", exit 1, in every later run
 * of the sweep; a FIFO or a link there lost its name), as a plot refuses one at its files'. */
static int own_files(const app_sweep *sw, sim_err *err)
{
    static const char *const names[] = { "index.csv", "curves.csv" };
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        char path[PATH_TEXT];
        struct stat st;
        sw_join(path, sizeof(path), sw->dir, names[i]);
        if (lstat(path, &st) == 0 && !S_ISREG(st.st_mode))
            return sim_err_set(err, SIM_ESCENARIO, NULL,
                               "%s is %s, no file of a hetsim sweep (a sweep writes a regular "
                               "file there and replaces it whole): remove it",
                               path, sim_file_kind(st.st_mode));
    }
    return SIM_OK;
}

int app_sweep_open_dir(app_sweep *sw, bool lock, sim_err *err)
{
    const unsigned kinds = SIM_RUNDIR_BIT(SIM_RUNDIR_RUN) | SIM_RUNDIR_BIT(SIM_RUNDIR_WORK) |
                           SIM_RUNDIR_BIT(SIM_RUNDIR_SWEEP) | SIM_RUNDIR_BIT(SIM_RUNDIR_GOLDEN) |
                           SIM_RUNDIR_BIT(SIM_RUNDIR_CHECK);
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
    sw_join(mark, sizeof(mark), sw->dir, SIM_RUNDIR_SWEEP_MARKER);
    /* Created in place (no temporary file): `--index` tasks may look at once. */
    /* Never through a symbolic link (it made the file it names, outside the sweep) nor a
     * FIFO (its open waited for a reader for ever): the marker is a plain file of its own, and
     * a directory there is refused as they are (it failed as a write, "cannot create ...: Is a
     * directory", exit 1). */
    int fd = -1;
    if ((rc = sim_output_mkdirs(sw->dir, err)) == SIM_OK &&
        (fd = open(mark, O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0666)) < 0 &&
        errno != ELOOP && errno != ENXIO && errno != EISDIR)
        rc = sim_err_set(err, SIM_EIO, NULL, "cannot create %s: %s", mark, strerror(errno));
    else if (rc == SIM_OK && (fd < 0 || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)))
        rc = sim_err_set(err, SIM_ESCENARIO, NULL,
                         "%s is %s, not a plain file: not a marker of hetsim's; remove it", mark,
                         lstat(mark, &st) == 0 ? sim_file_kind(st.st_mode) : "no file");
    if (fd >= 0)
        close(fd);
    return rc == SIM_OK && lock ? own_files(sw, err) : rc;
}

int app_sweep_run(app_sweep *sw, size_t *ran, size_t *failed, sim_err *err)
{
    *ran = *failed = 0;
    int rc = app_sweep_open_dir(sw, true, err);
    size_t *todo = calloc(sw->npoints + 1, sizeof(*todo));
    app_sweep_child *kids = calloc(sw->opt.jobs, sizeof(*kids));
    if (rc == 0 && (todo == NULL || kids == NULL))
        rc = sw_oom(err);
    for (size_t j = 0; kids != NULL && j < sw->opt.jobs; j++)
        kids[j].pid = -1;
    size_t ntodo = 0, next = 0, running = 0;
    if (rc == 0)
        ntodo = app_sweep_todo(sw, todo);
    double t0 = now_s();
    while (rc == 0 && (next < ntodo || running > 0)) {
        for (size_t j = 0; j < sw->opt.jobs && next < ntodo; j++) {
            if (kids[j].pid > 0)
                continue;
            if (app_sweep_spawn(sw, todo[next++], &kids[j], err) < 0) {
                (*failed)++;
                continue;
            }
            running++;
        }
        if (running == 0)
            break;
        int status = 0;
        pid_t pid = wait(&status);
        for (size_t j = 0; j < sw->opt.jobs && pid > 0; j++)
            if (kids[j].pid == (long)pid) {
                running--;
                (*ran)++;
                if (app_sweep_reap(sw, &kids[j], status, sw->opt.progress, stderr) != 0)
                    (*failed)++;
            }
        if (sw->opt.progress)
            progress(*ran, ntodo, running, t0, next == ntodo && running == 0);
    }
    free(kids);
    free(todo);
    if (rc == 0)
        rc = app_sweep_write_index(sw, err);
    return rc;
}
