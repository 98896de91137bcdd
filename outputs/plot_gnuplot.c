/* The gnuplot child process behind outputs/plot.c (see outputs/plot_gnuplot.h): the pipes for its
 * standard input and standard error, posix_spawn, feeding it the script while its standard
 * error is drained, the SIGPIPE mask, its exit status and the first error line it printed.
 * Calls nothing of outputs/plot.c. */
#include "outputs/plot_gnuplot.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ; /* POSIX defines it but no header declares it */

enum {
    STDERR_KEEP = 4096, /* bytes of gnuplot's standard error kept for the message */
};

/* True if the `len` bytes at `p` contain `word` (lower case) in any case. */
static bool has_word(const char *p, size_t len, const char *word)
{
    size_t k = strlen(word);
    for (size_t i = 0; i + k <= len; i++) {
        size_t j = 0;
        while (j < k && (p[i + j] >= 'A' && p[i + j] <= 'Z' ? p[i + j] + 32 : p[i + j]) == word[j])
            j++;
        if (j == k)
            return true;
    }
    return false;
}

/* The message of the "line N: " error on the line of `len` bytes at `p`, or NULL when the
 * line has none or it is a warning; its length into *n. */
static const char *located(const char *p, size_t len, size_t *n)
{
    for (const char *q = p; q + 5 < p + len; q++) {
        if (strncmp(q, "line ", 5) != 0)
            continue;
        const char *d = q + 5;
        while (d < p + len && *d >= '0' && *d <= '9')
            d++;
        if (d == q + 5 || d >= p + len || *d != ':')
            continue;
        d++;
        d += strspn(d, " ");
        if (d < p + len && strncmp(d, "warning:", 8) != 0) {
            *n = (size_t)(p + len - d);
            return d;
        }
        return NULL;
    }
    return NULL;
}

/* Copies the message of gnuplot's first error in `text` into `out`: the text after
 * "line N: " on the first such line that is not a warning (gnuplot echoes the failing
 * command and a caret before it), else the first line that says "error:" in any case and is
 * no warning (a library's complaint, "cairo error: ..."). Fontconfig's complaints (no
 * writable cache directory, no config file) are not errors: the figure is drawn anyway.
 * Returns false, with `out` empty, if there is no error: nothing, or only warnings, their
 * echoes and fontconfig's complaints. */
static bool find_error(const char *text, char *out, size_t size)
{
    const char *other = NULL;
    size_t other_len = 0;
    for (const char *p = text; *p != '\0';) {
        const char *end = strchr(p, '\n');
        size_t len = end != NULL ? (size_t)(end - p) : strlen(p), n = 0;
        const char *msg = located(p, len, &n);
        if (msg != NULL) {
            snprintf(out, size, "%.*s", (int)n, msg);
            return true;
        }
        size_t lead = strspn(p, " \t");
        if (other == NULL && has_word(p, len, "error:") && !has_word(p, len, "warning:") &&
            strncmp(p + lead, "Fontconfig ", 11) != 0) {
            other = p + lead;
            other_len = len - lead;
        }
        p = end != NULL ? end + 1 : p + len;
    }
    snprintf(out, size, "%.*s", (int)other_len, other != NULL ? other : "");
    return other != NULL;
}

/* Copies the message of gnuplot's first error in `text` into `out` (find_error), else its
 * first non-blank line, else "". */
static void first_error(const char *text, char *out, size_t size)
{
    if (find_error(text, out, size))
        return;
    for (const char *p = text; *p != '\0';) {
        const char *end = strchr(p, '\n');
        size_t len = end != NULL ? (size_t)(end - p) : strlen(p);
        size_t lead = strspn(p, " \t");
        if (lead < len) {
            snprintf(out, size, "%.*s", (int)(len - lead), p + lead);
            return;
        }
        p = end != NULL ? end + 1 : p + len;
    }
    snprintf(out, size, "%s", "");
}

/* Moves `fd` to a descriptor above 2 (so that it never collides with the child's standard
 * streams) and marks it close-on-exec. Returns the descriptor or -1. */
static int high_cloexec(int fd)
{
    if (fd < 0)
        return -1;
    int moved = fcntl(fd, F_DUPFD_CLOEXEC, 3);
    close(fd); /* a pipe end nobody wrote to: nothing to lose */
    return moved;
}

/* Closes the descriptors of `fd` that are open and marks them closed (-1). */
static void close_fds(int *fd, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (fd[i] >= 0)
            close(fd[i]);
        fd[i] = -1;
    }
}

/* Pipes for gnuplot's standard input (in) and standard error (ep): every end above 2 and
 * close-on-exec, and the end this process writes to non-blocking. */
static int make_pipes(int in[2], int ep[2], sim_err *err)
{
    in[0] = in[1] = ep[0] = ep[1] = -1;
    int a[2], b[2];
    if (pipe(a) != 0)
        return sim_err_set(err, SIM_EIO, NULL, "cannot create a pipe: %s", strerror(errno));
    if (pipe(b) != 0) {
        int e = errno;
        close_fds(a, 2);
        return sim_err_set(err, SIM_EIO, NULL, "cannot create a pipe: %s", strerror(e));
    }
    in[0] = high_cloexec(a[0]);
    in[1] = high_cloexec(a[1]);
    ep[0] = high_cloexec(b[0]);
    ep[1] = high_cloexec(b[1]);
    int flags = in[1] >= 0 ? fcntl(in[1], F_GETFL) : -1;
    if (in[0] < 0 || ep[0] < 0 || ep[1] < 0 || flags < 0 ||
        fcntl(in[1], F_SETFL, flags | O_NONBLOCK) != 0) {
        int e = errno;
        close_fds(in, 2);
        close_fds(ep, 2);
        return sim_err_set(err, SIM_EIO, NULL, "cannot set up gnuplot's pipes: %s", strerror(e));
    }
    return SIM_OK;
}

/* Starts `gnuplot -d -` (-d: no init files) with its standard input from `in_rd`, standard
 * error to `err_wr`, standard output to /dev/null, `out_fd` as its SIM_PLOT_GNUPLOT_OUT_FD,
 * no signal blocked and SIGPIPE at its default. Returns 0 or an errno value.
 *
 * The variables go at the top of the standard input rather than in `-e "..."`: gnuplot
 * 5.4.4 reading "-" after an -e option rejects multi-line { } blocks ("missing block
 * terminator"), which the scripts use. */
static int spawn(const char *gnuplot, int in_rd, int err_wr, int out_fd, pid_t *pid)
{
    char arg0[] = "gnuplot", arg_d[] = "-d", arg_stdin[] = "-";
    char *argv[] = { arg0, arg_d, arg_stdin, NULL };
    sigset_t none, pipe_set;
    if (sigemptyset(&none) != 0 || sigemptyset(&pipe_set) != 0 || sigaddset(&pipe_set, SIGPIPE))
        return errno;
    posix_spawn_file_actions_t fa;
    posix_spawnattr_t attr;
    int e = posix_spawn_file_actions_init(&fa);
    if (e != 0)
        return e;
    e = posix_spawnattr_init(&attr);
    if (e == 0) {
        if ((e = posix_spawn_file_actions_adddup2(&fa, in_rd, 0)) == 0 &&
            (e = posix_spawn_file_actions_adddup2(&fa, err_wr, 2)) == 0 &&
            (e = posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0)) == 0 &&
            (e = posix_spawn_file_actions_adddup2(&fa, out_fd, SIM_PLOT_GNUPLOT_OUT_FD)) == 0 &&
            (e = posix_spawnattr_setsigmask(&attr, &none)) == 0 &&
            (e = posix_spawnattr_setsigdefault(&attr, &pipe_set)) == 0 &&
            (e = posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF)) ==
                0)
            e = posix_spawn(pid, gnuplot, &fa, &attr, argv, environ);
        posix_spawnattr_destroy(&attr);
    }
    posix_spawn_file_actions_destroy(&fa);
    return e;
}

/* Writes `input` to gnuplot's standard input (*in_fd, closed and set to -1 once the
 * script is written or gnuplot has gone) while draining its standard error into `ebuf`
 * (keeping the first `ecap - 1` bytes), until gnuplot closes its standard error. */
static int pump(int *in_fd, const char *input, int err_fd, char *ebuf, size_t ecap, sim_err *err)
{
    size_t len = strlen(input), off = 0, elen = 0;
    ebuf[0] = '\0';
    for (;;) {
        struct pollfd pfd[2] = { { .fd = err_fd, .events = POLLIN },
                                 { .fd = *in_fd, .events = POLLOUT } };
        if (poll(pfd, *in_fd >= 0 ? 2 : 1, -1) < 0) {
            if (errno == EINTR)
                continue;
            return sim_err_set(err, SIM_EIO, NULL, "poll on gnuplot's pipes: %s", strerror(errno));
        }
        if (*in_fd >= 0 && pfd[1].revents != 0) {
            ssize_t w = write(*in_fd, input + off, len - off);
            if (w > 0)
                off += (size_t)w;
            /* EPIPE: gnuplot has exited; its status and standard error tell why. */
            if (off == len || (w < 0 && errno != EAGAIN && errno != EINTR))
                close_fds(in_fd, 1);
        }
        if (pfd[0].revents != 0) {
            char buf[1024];
            ssize_t r = read(err_fd, buf, sizeof(buf));
            if (r < 0 && (errno == EINTR || errno == EAGAIN))
                continue;
            if (r <= 0)
                return SIM_OK;
            size_t keep = (size_t)r < ecap - 1 - elen ? (size_t)r : ecap - 1 - elen;
            memcpy(ebuf + elen, buf, keep);
            elen += keep;
            ebuf[elen] = '\0';
        }
    }
}

/* SIM_OK if gnuplot exited with status 0 and printed no error, else SIM_EIO naming `png`
 * and quoting the first error line of its standard error `ebuf`. */
static int check_status(int status, const char *ebuf, const char *png, sim_err *err)
{
    char first[200];
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
        if (!find_error(ebuf, first, sizeof(first)))
            return SIM_OK;
        return sim_err_set(err, SIM_EIO, NULL, "gnuplot failed drawing %s: %s", png, first);
    }
    if (WIFSIGNALED(status))
        return sim_err_set(err, SIM_EIO, NULL, "gnuplot failed drawing %s: killed by signal %d",
                           png, WTERMSIG(status));
    first_error(ebuf, first, sizeof(first));
    if (first[0] != '\0')
        return sim_err_set(err, SIM_EIO, NULL, "gnuplot failed drawing %s: %s", png, first);
    return sim_err_set(err, SIM_EIO, NULL, "gnuplot failed drawing %s: exit status %d", png,
                       WIFEXITED(status) ? WEXITSTATUS(status) : -1);
}

/* Runs gnuplot on `input` (variable assignments, then the script) and waits. SIGPIPE
 * is blocked meanwhile (gnuplot exiting before it has read the whole script must not kill
 * this process), and a SIGPIPE raised meanwhile is consumed before the mask is restored. */
int sim_plot_gnuplot_run(const char *gnuplot, const char *input, int out_fd, const char *png,
                         sim_err *err)
{
    int in[2], ep[2];
    int rc = make_pipes(in, ep, err);
    if (rc != SIM_OK)
        return rc;
    /* Above SIM_PLOT_GNUPLOT_OUT_FD, so that the child's dup2 always makes a copy. */
    int out = fcntl(out_fd, F_DUPFD_CLOEXEC, SIM_PLOT_GNUPLOT_OUT_FD + 1);
    if (out < 0) {
        int e = errno;
        close_fds(in, 2);
        close_fds(ep, 2);
        return sim_err_set(err, SIM_EIO, NULL, "cannot hand gnuplot its figure: %s", strerror(e));
    }
    sigset_t pipe_set, old_mask, pending;
    if (sigemptyset(&pipe_set) != 0 || sigaddset(&pipe_set, SIGPIPE) != 0 ||
        sigpending(&pending) != 0 || sigprocmask(SIG_BLOCK, &pipe_set, &old_mask) != 0) {
        int e = errno;
        close_fds(in, 2);
        close_fds(ep, 2);
        return sim_err_set(err, SIM_EIO, NULL, "cannot block SIGPIPE: %s", strerror(e));
    }
    bool was_pending = sigismember(&pending, SIGPIPE) == 1;

    pid_t pid = -1;
    int e = spawn(gnuplot, in[0], ep[1], out, &pid);
    close(out);
    close_fds(&in[0], 1);
    close_fds(&ep[1], 1);
    char ebuf[STDERR_KEEP];
    ebuf[0] = '\0';
    int status = 0;
    if (e != 0) {
        rc = sim_err_set(err, SIM_EIO, NULL, "cannot start %s: %s", gnuplot, strerror(e));
    } else {
        rc = pump(&in[1], input, ep[0], ebuf, sizeof(ebuf), err);
        if (rc != SIM_OK)
            kill(pid, SIGKILL); /* it could otherwise wait forever for the rest of its input */
        while (waitpid(pid, &status, 0) < 0) {
            if (errno != EINTR) {
                if (rc == SIM_OK)
                    rc =
                        sim_err_set(err, SIM_EIO, NULL, "waiting for gnuplot: %s", strerror(errno));
                break;
            }
        }
    }
    close_fds(in, 2);
    close_fds(ep, 2);

    if (!was_pending && sigpending(&pending) == 0 && sigismember(&pending, SIGPIPE) == 1) {
        struct timespec zero = { 0, 0 };
        sigtimedwait(&pipe_set, NULL, &zero); /* it is pending, so this returns at once */
    }
    if (sigprocmask(SIG_SETMASK, &old_mask, NULL) != 0 && rc == SIM_OK)
        rc = sim_err_set(err, SIM_EIO, NULL, "cannot restore the signal mask: %s", strerror(errno));
    return rc == SIM_OK ? check_status(status, ebuf, png, err) : rc;
}
