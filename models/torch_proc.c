/* One model-server process: spawning it, its exchange region, its requests and replies
 * (models/torch_proc.h). */
#define _GNU_SOURCE /* memfd_create, posix_spawn_file_actions_addclosefrom_np, environ */
#include "models/torch_proc.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* The server's file descriptors (server.py). */
enum {
    FD_SOCKET = 3,
    FD_EXCHANGE = 4,
    FD_DATA = 5
};

/* The largest text a reply may carry (a probe's description of a large network). */
#define MAX_TEXT ((uint32_t)64 << 20)

static size_t align64(size_t n)
{
    return (n + 63) / 64 * 64;
}

void torch_layout_for(torch_layout *l, size_t P, size_t NB, size_t B)
{
    l->params = 0;
    l->grad = align64(P * 4);
    l->bufs = l->grad + align64(P * 4);
    l->idx = l->bufs + align64((NB > 0 ? NB : 1) * 4);
    l->idx_n = B > 0 ? B : 1;
    l->bytes = l->idx + align64(l->idx_n * 8);
}

void torch_data_layout_for(torch_data_layout *l, const size_t *shape, size_t classes, size_t ntrain,
                           size_t ntest)
{
    memset(l, 0, sizeof(*l));
    memcpy(l->shape, shape, sizeof(l->shape));
    l->dim = shape[0] * shape[1] * shape[2];
    l->classes = classes;
    l->ntrain = ntrain;
    l->ntest = ntest;
    l->train_x = 0;
    l->train_y = align64(ntrain * l->dim * 4);
    l->test_x = l->train_y + align64(ntrain);
    l->test_y = l->test_x + align64(ntest * l->dim * 4);
    l->bytes = l->test_y + align64(ntest);
}

int torch_region(size_t bytes, int *fd, unsigned char **map, sim_err *err)
{
    *fd = memfd_create("hetsim-data", MFD_CLOEXEC);
    if (*fd < 0 || ftruncate(*fd, (off_t)(bytes > 0 ? bytes : 1)) != 0)
        return sim_err_set(err, SIM_ENOMEM, NULL, "cannot make a shared region of %zu bytes: %s",
                           bytes, strerror(errno));
    if (map == NULL)
        return SIM_OK;
    void *m = mmap(NULL, bytes > 0 ? bytes : 1, PROT_READ | PROT_WRITE, MAP_SHARED, *fd, 0);
    if (m == MAP_FAILED)
        return sim_err_set(err, SIM_ENOMEM, NULL, "cannot map a shared region of %zu bytes: %s",
                           bytes, strerror(errno));
    *map = m;
    return SIM_OK;
}

bool torch_append(char *out, size_t size, const char *s)
{
    size_t n = strlen(out), k = strlen(s);
    if (n + k >= size)
        return false;
    memcpy(out + n, s, k + 1);
    return true;
}

bool torch_data_json(char *out, size_t size, const torch_data_layout *l)
{
    char b[512];
    snprintf(b, sizeof(b),
             "\"data\": {\"bytes\": %zu, \"shape\": [%zu, %zu, %zu], \"classes\": %zu, "
             "\"train\": [%zu, %zu, %zu], \"test\": [%zu, %zu, %zu]}",
             l->bytes, l->shape[0], l->shape[1], l->shape[2], l->classes, l->ntrain, l->train_x,
             l->train_y, l->ntest, l->test_x, l->test_y);
    return torch_append(out, size, b);
}

bool torch_module_json(char *out, size_t size, const model_torch_config *tc)
{
    return torch_append(out, size, "\"module\": ") && torch_json_string(out, size, tc->module) &&
           torch_append(out, size, ", \"base_dir\": ") &&
           torch_json_string(out, size, tc->base_dir) &&
           torch_append(out, size, ", \"device\": ") && torch_json_string(out, size, tc->device) &&
           torch_append(out, size, ", \"args\": ") && torch_append(out, size, tc->args);
}

bool torch_json_string(char *out, size_t size, const char *s)
{
    size_t n = strlen(out);
    if (n + 1 >= size)
        return false;
    out[n++] = '"';
    for (; *s != '\0'; s++) {
        unsigned char c = (unsigned char)*s;
        char esc[8] = "";
        if (c == '"' || c == '\\')
            snprintf(esc, sizeof(esc), "\\%c", c);
        else if (c < 0x20)
            snprintf(esc, sizeof(esc), "\\u%04x", c);
        size_t k = esc[0] != '\0' ? strlen(esc) : 1;
        if (n + k + 2 >= size)
            return false;
        if (esc[0] != '\0')
            memcpy(out + n, esc, k);
        else
            out[n] = (char)c;
        n += k;
    }
    out[n++] = '"';
    out[n] = '\0';
    return true;
}

/* ---- failures ---- */

/* How the server ended, after its socket closed: "exit status N", "killed by signal N"
 * (waiting up to 30 s for it to exit). */
static void ended(torch_proc *p, char *buf, size_t size)
{
    int st = 0;
    pid_t r = 0;
    for (int i = 0; i < 3000 && (r = waitpid(p->pid, &st, WNOHANG)) == 0; i++) {
        struct timespec ts = { 0, 10 * 1000 * 1000 };
        nanosleep(&ts, NULL);
    }
    if (r == p->pid) {
        p->pid = 0;
        if (WIFEXITED(st))
            snprintf(buf, size, "exit status %d", WEXITSTATUS(st));
        else if (WIFSIGNALED(st))
            snprintf(buf, size, "killed by signal %d", WTERMSIG(st));
        return;
    }
    snprintf(buf, size, "closed its channel");
}

/* Keeps the first failure: SIM_EIO, "model server N <what><detail><end>", the module's file
 * named. */
static int fail(torch_proc *p, const char *what, const char *detail, const char *end)
{
    if (p->failed != SIM_OK)
        return p->failed;
    sim_err_clear(&p->err);
    sim_err_set(&p->err, SIM_EIO, NULL, "model server %u %s%s%s", p->index, what, detail, end);
    sim_err_file(&p->err, p->shown);
    p->failed = SIM_EIO;
    return p->failed;
}

static int died(torch_proc *p)
{
    char how[64] = "";
    ended(p, how, sizeof(how));
    return fail(p, "died (", how, "; its traceback is above)");
}

/* ---- the wire ---- */

/* Sends wb's or reads into rb's (the other NULL) n bytes on fd whole, through interruptions;
 * false when the peer is gone. */
static bool move_all(int fd, const unsigned char *wb, unsigned char *rb, size_t n)
{
    while (n > 0) {
        ssize_t k = wb != NULL ? send(fd, wb, n, MSG_NOSIGNAL) : read(fd, rb, n);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            return false;
        if (wb != NULL)
            wb += k;
        else
            rb += k;
        n -= (size_t)k;
    }
    return true;
}

static bool write_all(int fd, const void *buf, size_t n)
{
    return move_all(fd, buf, NULL, n);
}

static bool read_all(int fd, void *buf, size_t n)
{
    return move_all(fd, NULL, buf, n);
}

static void put32(unsigned char *b, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        b[i] = (unsigned char)(v >> (8 * i));
}

static void put64(unsigned char *b, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        b[i] = (unsigned char)(v >> (8 * i));
}

static uint64_t get64(const unsigned char *b)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = v << 8 | b[i];
    return v;
}

static uint32_t get32(const unsigned char *b)
{
    return (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
}

static double get_double(const unsigned char *b)
{
    uint64_t v = get64(b);
    double d;
    memcpy(&d, &v, sizeof(d));
    return d;
}

/* Reads a reply; false when the server died first. */
static bool read_reply(torch_proc *p, torch_reply *r)
{
    unsigned char h[40];
    memset(r, 0, sizeof(*r));
    if (!read_all(p->sock, h, sizeof(h)))
        return false;
    r->status = (int32_t)get32(h);
    uint32_t len = get32(h + 4);
    r->loss = get_double(h + 8);
    r->seconds = get_double(h + 16);
    r->correct = (int64_t)get64(h + 24);
    r->count = (int64_t)get64(h + 32);
    if (len > MAX_TEXT)
        return false;
    r->text = malloc((size_t)len + 1);
    if (r->text == NULL || !read_all(p->sock, r->text, len)) {
        free(r->text);
        r->text = NULL;
        return false;
    }
    r->text[len] = '\0';
    return true;
}

/* ---- spawning ---- */

/* The environment of a server: ours, with the hetsim package first on PYTHONPATH and one
 * thread in every numerical library. Freed by free_env. */
static char **server_env(const model_torch_config *tc)
{
    static const char *const ours[] = { "OMP_NUM_THREADS=1", "MKL_NUM_THREADS=1",
                                        "OPENBLAS_NUM_THREADS=1",
                                        "CUBLAS_WORKSPACE_CONFIG=:4096:8" };
    size_t n = 0;
    while (environ[n] != NULL)
        n++;
    char **env = calloc(n + 8, sizeof(*env));
    if (env == NULL)
        return NULL;
    size_t k = 0;
    const char *old = getenv("PYTHONPATH");
    for (size_t i = 0; i < n; i++) {
        const char *e = environ[i];
        bool replaced = strncmp(e, "PYTHONPATH=", 11) == 0;
        for (size_t j = 0; j < sizeof(ours) / sizeof(ours[0]); j++)
            replaced |= strncmp(e, ours[j], (size_t)(strchr(ours[j], '=') - ours[j] + 1)) == 0;
        if (!replaced && (env[k] = strdup(e)) != NULL)
            k++;
    }
    for (size_t j = 0; j < sizeof(ours) / sizeof(ours[0]); j++)
        env[k++] = strdup(ours[j]);
    if (tc->pydir[0] != '\0' || old != NULL) {
        size_t len = strlen(tc->pydir) + (old != NULL ? strlen(old) : 0) + 16;
        if ((env[k] = malloc(len)) != NULL)
            snprintf(env[k++], len, "PYTHONPATH=%s%s%s", tc->pydir,
                     old != NULL && tc->pydir[0] != '\0' ? ":" : "", old != NULL ? old : "");
    }
    return env;
}

static void free_env(char **env)
{
    for (size_t i = 0; env != NULL && env[i] != NULL; i++)
        free(env[i]);
    free(env);
}

/* posix_spawn(p) of `python -B -m hetsim.server` with fds[0..3) as its fds 3, 4, 5 (-1: none),
 * our stderr as its stdout too, and nothing else of ours open. */
static int spawn(torch_proc *p, const model_torch_config *tc, const int *fds, sim_err *err)
{
    char b[] = "-B", m[] = "-m", server[] = "hetsim.server";
    char *const argv[] = { (char *)tc->python, b, m, server, NULL };
    char **env = server_env(tc);
    posix_spawn_file_actions_t fa;
    int hi[3] = { -1, -1, -1 }, rc = env != NULL ? 0 : ENOMEM;
    /* High copies first: a dup2 onto its own number would keep close-on-exec. */
    for (int i = 0; i < 3 && rc == 0; i++)
        if (fds[i] >= 0 && (hi[i] = fcntl(fds[i], F_DUPFD_CLOEXEC, 10)) < 0)
            rc = errno;
    if (rc == 0 && (rc = posix_spawn_file_actions_init(&fa)) == 0) {
        for (int i = 0; i < 3 && rc == 0; i++)
            if (hi[i] >= 0)
                rc = posix_spawn_file_actions_adddup2(&fa, hi[i], FD_SOCKET + i);
        if (rc == 0) /* a module's prints go to stderr: hetsim's stdout is for results */
            rc = posix_spawn_file_actions_adddup2(&fa, STDERR_FILENO, STDOUT_FILENO);
        if (rc == 0)
            rc = posix_spawn_file_actions_addclosefrom_np(&fa, FD_DATA + 1);
        if (rc == 0)
            rc = (strchr(tc->python, '/') != NULL ? posix_spawn : posix_spawnp)(
                &p->pid, tc->python, &fa, NULL, argv, env);
        posix_spawn_file_actions_destroy(&fa);
    }
    for (int i = 0; i < 3; i++)
        if (hi[i] >= 0)
            close(hi[i]);
    free_env(env);
    if (rc == 0)
        return SIM_OK;
    p->pid = 0;
    return sim_err_set(err, SIM_EIO, NULL,
                       "cannot start the model server: %s: %s (install python3 and the Debian "
                       "package python3-torch, or set HETSIM_PYTHON)",
                       tc->python, strerror(rc));
}

static int map_exchange(torch_proc *p, const torch_layout *layout, sim_err *err)
{
    p->layout = *layout;
    p->ex_fd = memfd_create("hetsim-exchange", MFD_CLOEXEC);
    if (p->ex_fd < 0 || ftruncate(p->ex_fd, (off_t)layout->bytes) != 0)
        return sim_err_set(err, SIM_ENOMEM, NULL, "cannot make a shared region of %zu bytes: %s",
                           layout->bytes, strerror(errno));
    void *m = mmap(NULL, layout->bytes, PROT_READ | PROT_WRITE, MAP_SHARED, p->ex_fd, 0);
    if (m == MAP_FAILED)
        return sim_err_set(err, SIM_ENOMEM, NULL, "cannot map a shared region of %zu bytes: %s",
                           layout->bytes, strerror(errno));
    p->ex = m;
    return SIM_OK;
}

int torch_proc_start(torch_proc *p, const model_torch_config *tc, const torch_layout *layout,
                     int data_fd, const char *config, sim_err *err)
{
    p->sock = -1;
    p->ex_fd = -1;
    p->shown = tc->shown;
    p->failed = SIM_OK;
    int sv[2];
    int rc = layout != NULL ? map_exchange(p, layout, err) : SIM_OK;
    if (rc != SIM_OK)
        return rc;
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0)
        return sim_err_set(err, SIM_EIO, NULL, "cannot make a socket pair: %s", strerror(errno));
    p->sock = sv[0];
    int fds[3] = { sv[1], p->ex_fd, data_fd };
    rc = spawn(p, tc, fds, err);
    close(sv[1]);
    if (rc != SIM_OK)
        return rc;
    size_t len = strlen(config);
    unsigned char head[4];
    put32(head, (uint32_t)len);
    if (!write_all(p->sock, head, 4) || !write_all(p->sock, config, len)) {
        died(p);
        *err = p->err;
        return SIM_EIO;
    }
    p->waiting = true;
    return SIM_OK;
}

int torch_proc_ready(torch_proc *p, torch_reply *r, sim_err *err)
{
    p->waiting = false;
    if (!read_reply(p, r)) {
        died(p);
        if (err != NULL)
            *err = p->err;
        return SIM_EIO;
    }
    return SIM_OK;
}

int torch_proc_call(torch_proc *p, const torch_request *rq, torch_reply *r)
{
    if (p->failed != SIM_OK)
        return p->failed;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    if (p->waiting) {
        torch_reply ready;
        if (torch_proc_ready(p, &ready, NULL) != SIM_OK)
            return p->failed;
        int st = ready.status;
        if (st != TORCH_STATUS_OK)
            fail(p, "could not start: ", ready.text != NULL ? ready.text : "", "");
        free(ready.text);
        if (st != TORCH_STATUS_OK)
            return p->failed;
    }
    unsigned char b[32];
    put32(b, rq->op);
    put32(b + 4, rq->n);
    put64(b + 8, rq->seed);
    put64(b + 16, (uint64_t)rq->a);
    put64(b + 24, (uint64_t)rq->b);
    if (!write_all(p->sock, b, sizeof(b)) || !read_reply(p, r))
        return died(p);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    p->seconds += (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) * 1e-9;
    p->server_seconds += r->seconds;
    int st = r->status;
    if (st != TORCH_STATUS_OK)
        fail(p, "failed: ", r->text != NULL ? r->text : "", "");
    free(r->text);
    r->text = NULL;
    return st != TORCH_STATUS_OK ? p->failed : SIM_OK;
}

void torch_proc_stop(torch_proc *p)
{
    if (p->sock >= 0)
        close(p->sock); /* the server reads the end of its channel and exits */
    p->sock = -1;
    if (p->pid > 0) {
        int st;
        pid_t r = 0;
        for (int i = 0; i < 1000 && (r = waitpid(p->pid, &st, WNOHANG)) == 0; i++) {
            struct timespec ts = { 0, 10 * 1000 * 1000 };
            nanosleep(&ts, NULL);
        }
        if (r == 0) {
            kill(p->pid, SIGKILL);
            waitpid(p->pid, &st, 0);
        }
    }
    p->pid = 0;
    if (p->ex != NULL)
        munmap(p->ex, p->layout.bytes);
    p->ex = NULL;
    if (p->ex_fd >= 0)
        close(p->ex_fd);
    p->ex_fd = -1;
}
