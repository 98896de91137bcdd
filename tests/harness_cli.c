/* The end-to-end suites' runs of the built binary ($HETSIM) and the set-ups they repeat in a
 * temporary directory: a run, a sweep, a golden; see harness.h. Split from harness.c by seam. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <check.h>

#include "harness.h"

void harness_read_into(const char *path, char *buf, size_t size)
{
    FILE *f = fopen(path, "r");
    size_t n = f != NULL ? fread(buf, 1, size - 1, f) : 0;
    buf[n] = '\0';
    if (f != NULL)
        fclose(f);
}

harness_result harness_hetsim(const char *const *args)
{
    harness_result r;
    const char *bin = getenv("HETSIM");
    ck_assert_msg(bin != NULL, "HETSIM is not set");
    char out[] = "/tmp/hetsim-run-out-XXXXXX", err[] = "/tmp/hetsim-run-err-XXXXXX";
    int fo = mkstemp(out), fe = mkstemp(err);
    ck_assert_msg(fo >= 0 && fe >= 0, "cannot make the output files");
    pid_t pid = fork();
    ck_assert_msg(pid >= 0, "cannot fork");
    if (pid == 0) {
        dup2(fo, 1);
        dup2(fe, 2);
        const char *argv[32] = { bin };
        for (size_t i = 0; args[i] != NULL && i < 30; i++)
            argv[i + 1] = args[i];
        execv(bin, (char *const *)argv);
        _exit(127);
    }
    int status;
    waitpid(pid, &status, 0);
    close(fo);
    close(fe);
    r.status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    harness_read_into(out, r.out, sizeof(r.out));
    harness_read_into(err, r.err, sizeof(r.err));
    remove(out);
    remove(err);
    return r;
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
