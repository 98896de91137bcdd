/* Run directories that appear whole or not at all, one writer at a time (see outputs/rundir.h). */
#define _GNU_SOURCE /* renameat2 and RENAME_EXCHANGE (glibc 2.28 and later) */
#include "outputs/rundir.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "outputs/output.h"
#include "outputs/rundir_state.h"
#include "sim/file.h"

struct sim_rundir_lock {
    int fd;     /* the open lock file, flocked */
    char *path; /* "DIR.lock"; owned */
};

struct sim_rundir {
    char *dir;             /* the run directory, without trailing slashes; owned */
    char *work;            /* "DIR.partial"; owned */
    sim_rundir_lock *lock; /* held from begin to commit or abort */
};

/* True if dir/name exists (without following a final symbolic link). */
static bool exists_in(const char *dir, const char *name)
{
    char *p = rundir_concat(dir, "/");
    char *q = p != NULL ? rundir_concat(p, name) : NULL;
    struct stat st;
    bool yes = q != NULL && lstat(q, &st) == 0;
    free(p);
    free(q);
    return yes;
}

/* Opens dir/name for reading if it is a regular file (hetsim writes no other; a FIFO's open
 * waited for a writer forever, and every command that looked at its folder hung), else NULL.
 * Opened first, then looked at: a FIFO put there meanwhile is never waited on either. */
static FILE *open_regular(const char *dir, const char *name)
{
    char *p = rundir_concat(dir, "/");
    char *q = p != NULL ? rundir_concat(p, name) : NULL;
    int fd = q != NULL ? open(q, O_RDONLY | O_NONBLOCK | O_CLOEXEC) : -1;
    free(p);
    free(q);
    struct stat st;
    FILE *f = fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode) ? fdopen(fd, "rb") : NULL;
    if (f == NULL && fd >= 0)
        close(fd);
    return f;
}

/* True if the file dir/name starts with `head` (a regular file: open_regular). */
static bool starts_with(const char *dir, const char *name, const char *head)
{
    size_t n = strlen(head);
    FILE *f = open_regular(dir, name);
    char buf[128] = { 0 };
    bool yes =
        f != NULL && n < sizeof(buf) && fread(buf, 1, n, f) == n && memcmp(buf, head, n) == 0;
    if (f != NULL)
        fclose(f);
    return yes;
}

/* True if `dir` holds a run.json that hetsim wrote. */
static bool is_run(const char *dir)
{
    return starts_with(dir, "run.json", "{\n  \"hetsim_version\"");
}

/* True if `dir` is a golden of `hetsim check`: its "seeds" file's first seed S has a
 * seed-S/fingerprint (app/check.c writes both), or an update is writing it. */
static bool is_golden(const char *dir)
{
    if (exists_in(dir, SIM_RUNDIR_GOLDEN_MARKER))
        return true;
    FILE *f = open_regular(dir, "seeds");
    unsigned long long seed = 0;
    bool yes = f != NULL && fscanf(f, "%llu", &seed) == 1;
    if (f != NULL)
        fclose(f);
    char name[64];
    snprintf(name, sizeof(name), "seed-%llu/fingerprint", seed);
    return yes && exists_in(dir, name);
}

sim_rundir_kind sim_rundir_kind_of(const char *dir)
{
    struct stat st;
    if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode))
        return SIM_RUNDIR_NONE;
    if (exists_in(dir, SIM_RUNDIR_MARKER))
        return SIM_RUNDIR_WORK;
    if (is_run(dir))
        return SIM_RUNDIR_RUN;
    if (exists_in(dir, SIM_RUNDIR_SWEEP_MARKER) || starts_with(dir, "index.csv", "point,dir,"))
        return SIM_RUNDIR_SWEEP;
    if (is_golden(dir))
        return SIM_RUNDIR_GOLDEN;
    if (starts_with(dir, "check.csv", SIM_RUNDIR_CHECK_HEADER "\n"))
        return SIM_RUNDIR_CHECK;
    if (exists_in(dir, SIM_RUNDIR_PLOT_MARKER))
        return SIM_RUNDIR_PLOT;
    return SIM_RUNDIR_NONE;
}

const char *sim_rundir_kind_name(sim_rundir_kind kind)
{
    static const char *const names[] = { "", "run", "work", "sweep", "golden", "check", "plot" };
    return (unsigned)kind < sizeof(names) / sizeof(names[0]) ? names[kind] : "";
}

/* Cuts the last component of `path` in place ("a" becomes ".", "/a" becomes "/"). */
static void cut_last(char *path)
{
    size_t n = strlen(path);
    while (n > 1 && path[n - 1] == '/')
        path[--n] = '\0';
    char *slash = strrchr(path, '/');
    if (slash == NULL)
        strcpy(path, ".");
    else if (slash == path)
        path[1] = '\0';
    else
        *slash = '\0';
}

/* True if `a` and `b` are the same directory (symbolic links followed). */
bool sim_rundir_same(const char *a, const char *b)
{
    struct stat x, y;
    return a != NULL && b != NULL && stat(a, &x) == 0 && stat(b, &y) == 0 && x.st_dev == y.st_dev &&
           x.st_ino == y.st_ino;
}

/* True if `path` ends in ".partial" or ".lock", the names of work directories and locks: an
 * output there would stop every later run into the directory it seems to belong to. */
static bool reserved(const char *path)
{
    size_t n = strlen(path);
    return (n >= 8 && strcmp(path + n - 8, ".partial") == 0) ||
           (n >= 5 && strcmp(path + n - 5, ".lock") == 0);
}

/* Refuses `path` (followed) when a folder on its way that is not there yet, which the command
 * would make, is named like a work directory or a lock: `run -o X.partial/sub`, `plot -o
 * X.lock/figs` or a --junit report into X.partial/j.xml made that folder, which refused every
 * later run into X. The message names the place `name` as the user gave it. */
static int check_made(const char *what, const char *name, const char *path, sim_err *err)
{
    char *q = strdup(path);
    if (q == NULL)
        return rundir_oom(err);
    int rc = SIM_OK;
    for (char *s = q + 1; rc == SIM_OK && (s = strchr(s, '/')) != NULL; s++) {
        *s = '\0';
        struct stat st;
        if (reserved(q) && lstat(q, &st) != 0 && errno == ENOENT)
            rc = sim_err_set(err, SIM_ESCENARIO, NULL,
                             "%s %s: the folder %s it would make is named like hetsim's work "
                             "directories and locks (names ending in .partial or .lock)",
                             what, name, q);
        *s = '/';
    }
    free(q);
    return rc;
}

/* True if the n bytes at `c`, a name of a folder, are named as a sweep's point: "seed=S" (S
 * decimal) after the start or a ',' (app/sweep.c names its points KEY=VALUE,...,seed=S). */
static bool point_name(const char *c, size_t n)
{
    size_t d = 0;
    while (d < n && c[n - 1 - d] >= '0' && c[n - 1 - d] <= '9')
        d++;
    if (d == 0 || n < d + 5 || memcmp(c + n - d - 5, "seed=", 5) != 0)
        return false;
    return n == d + 5 || c[n - d - 6] == ',';
}

/* Refuses the folder `child` (its first n bytes: a name) of the sweep's directory `abs` when it
 * is named as one of the sweep's points and holds no run yet: only the sweep makes it (`plot -o
 * SW/POINT` or `check -o SW/POINT` while the point was missing made a folder that failed the
 * point in every later run of the sweep, "not empty and holds no hetsim run"); the run there is
 * the plot's own or inside a run, which the other rules take. */
static int check_point(const char *what, const char *name, char *abs, const char *child, size_t n,
                       sim_err *err)
{
    if (n == 0 || !point_name(child, n))
        return SIM_OK;
    size_t len = strlen(abs);
    char *p = malloc(len + n + 2);
    if (p == NULL)
        return rundir_oom(err);
    snprintf(p, len + n + 2, "%s/%.*s", strcmp(abs, "/") == 0 ? "" : abs, (int)n, child);
    int rc = sim_rundir_kind_of(p) == SIM_RUNDIR_RUN
                 ? SIM_OK
                 : sim_err_set(err, SIM_ESCENARIO, NULL,
                               "%s %s: %s is named as a point of the sweep %s (KEY=VALUE,...,"
                               "seed=S), a run only the sweep makes: choose another name",
                               what, name, p, abs);
    free(p);
    return rc;
}

/* Refuses `dir` (already followed) when one of its ancestors is of a kind in `kinds`, or is a
 * sweep's directory and `kinds` has SIM_RUNDIR_POINTS and `dir` would be or be in a folder of
 * it named as one of its points (check_point); the message names it `name` (as the user gave
 * it). */
static int check_ancestors(const char *what, const char *name, const char *dir, unsigned kinds,
                           sim_err *err)
{
    size_t n = strlen(dir) + 2;
    char *p = malloc(n > PATH_MAX ? n : PATH_MAX);
    char *abs = malloc(PATH_MAX);
    if (p == NULL || abs == NULL) {
        free(p);
        free(abs);
        return rundir_oom(err);
    }
    snprintf(p, n, "%s", dir);
    struct stat st;
    int found;
    do /* the nearest existing ancestor */
        cut_last(p);
    while ((found = stat(p, &st)) != 0 && strcmp(p, ".") != 0 && strcmp(p, "/") != 0);
    int rc = SIM_OK;
    if (found == 0 && !S_ISDIR(st.st_mode)) { /* mkdir's ENOTDIR was a failed write, exit 1 */
        rc = sim_err_set(err, SIM_ESCENARIO, NULL,
                         "%s %s: %s is %s, not a directory: choose a place in a directory", what,
                         name, p, sim_file_kind(st.st_mode));
        goto done;
    }
    if (kinds == 0 || realpath(p, abs) == NULL) /* unreadable: nothing of hetsim's is seen */
        goto done;
    /* The folder of `abs` on the way to `dir`: first the name after p in dir, then the last
     * name of `abs` as it is cut. */
    const char *child = strcmp(p, ".") == 0   ? dir
                        : strcmp(p, "/") == 0 ? dir + 1
                                              : dir + strlen(p) + (dir[strlen(p)] == '/');
    size_t nchild = strcspn(child, "/");
    char last[NAME_MAX + 1];
    for (;;) {
        sim_rundir_kind k = sim_rundir_kind_of(abs);
        if (k != SIM_RUNDIR_NONE && (kinds & SIM_RUNDIR_BIT(k)) != 0) {
            rc = sim_err_set(err, SIM_ESCENARIO, NULL,
                             "%s %s is inside %s, a hetsim %s directory: choose a place outside "
                             "it",
                             what, name, abs, sim_rundir_kind_name(k));
            break;
        }
        if (k == SIM_RUNDIR_SWEEP && (kinds & SIM_RUNDIR_POINTS) != 0 &&
            (rc = check_point(what, name, abs, child, nchild, err)) != SIM_OK)
            break;
        if (strcmp(abs, "/") == 0)
            break;
        const char *slash = strrchr(abs, '/');
        snprintf(last, sizeof(last), "%s", slash != NULL ? slash + 1 : abs);
        child = last;
        nchild = strlen(last);
        cut_last(abs);
    }
done:
    free(p);
    free(abs);
    return rc;
}

int sim_rundir_check_place(const char *what, const char *dir, unsigned within, unsigned equal,
                           const char *own, sim_err *err)
{
    char *path = NULL;
    int rc = sim_rundir_follow(dir, &path, err);
    struct stat st;
    if (rc == SIM_OK && stat(path, &st) == 0 && !S_ISDIR(st.st_mode)) /* bad usage, as run's */
        rc = sim_err_set(err, SIM_ESCENARIO, NULL, "%s %s exists and is not a directory", what,
                         path);
    if (rc == SIM_OK && reserved(path) &&
        !sim_rundir_same(path, own)) /* a run draws into its own */
        rc = sim_err_set(err, SIM_ESCENARIO, NULL,
                         "%s %s: names ending in .partial or .lock are hetsim's work "
                         "directories and locks",
                         what, path);
    if (rc == SIM_OK)
        rc = check_made(what, dir, path, err);
    if (rc == SIM_OK)
        rc = check_ancestors(what, dir, path, within, err);
    sim_rundir_kind k = rc == SIM_OK ? sim_rundir_kind_of(path) : SIM_RUNDIR_NONE;
    if (k != SIM_RUNDIR_NONE && (equal & SIM_RUNDIR_BIT(k)) != 0 && !sim_rundir_same(path, own))
        rc = sim_err_set(err, SIM_ESCENARIO, NULL,
                         "%s %s is a hetsim %s directory that this command does not own: "
                         "choose a place outside it",
                         what, strcmp(path, dir) == 0 ? dir : path, sim_rundir_kind_name(k));
    free(path);
    return rc;
}

int sim_rundir_check_within(const char *dir, unsigned kinds, sim_err *err)
{
    return sim_rundir_check_place("output directory", dir, kinds, 0, NULL, err);
}

/* True if `t`, a link's target, is written as a directory's name: it ends in '/', "/." or
 * "/..", or is "." or "..". */
static bool folder_name(const char *t)
{
    size_t n = strlen(t);
    return (n > 0 && t[n - 1] == '/') || strcmp(t, ".") == 0 || strcmp(t, "..") == 0 ||
           (n >= 2 && strcmp(t + n - 2, "/.") == 0) || (n >= 3 && strcmp(t + n - 3, "/..") == 0);
}

/* The first target, into target[size], of the links `file` leads through (hop by hop, at most
 * 40) that is written as a directory's name (folder_name), or false when none is: the system
 * makes no file there (`--junit LINK`, LINK -> "new/", wrote a file named "new", as "DIR/"
 * itself was written before it was refused). */
static bool links_to_folder_name(const char *file, char *target, size_t size)
{
    char cur[PATH_MAX];
    snprintf(cur, sizeof(cur), "%s", file);
    for (int hops = 0; hops < 40; hops++) {
        struct stat st;
        ssize_t n =
            lstat(cur, &st) == 0 && S_ISLNK(st.st_mode) ? readlink(cur, target, size - 1) : -1;
        if (n <= 0)
            return false;
        target[n] = '\0';
        if (folder_name(target))
            return true;
        char *slash = strrchr(cur, '/');
        if (target[0] == '/' || slash == NULL)
            snprintf(cur, sizeof(cur), "%s", target);
        else if ((size_t)(slash + 1 - cur) + (size_t)n < sizeof(cur))
            memcpy(slash + 1, target, (size_t)n + 1); /* beside the link */
        else
            return false;
    }
    return false;
}

/* Where a file the user named is written, as sim_rundir_check_file says, into *out. */
static int file_target(const char *what, const char *file, char **out, sim_rundir_write *how,
                       sim_err *err)
{
    struct stat st, lst;
    bool link = lstat(file, &lst) == 0 && S_ISLNK(lst.st_mode);
    *out = NULL;
    if (stat(file, &st) != 0) {
        if (errno != ENOENT)
            return sim_err_set(err, SIM_ESCENARIO, NULL, "%s %s: %s", what, file, strerror(errno));
        char target[PATH_MAX];
        if (links_to_folder_name(file, target, sizeof(target)))
            return sim_err_set(err, SIM_ESCENARIO, NULL,
                               "%s %s is a link to %s, which names a directory: name a file", what,
                               file, target);
        *how = SIM_RUNDIR_REPLACE; /* absent, or a link to nothing yet: made */
        return sim_rundir_follow(file, out, err);
    }
    if (S_ISDIR(st.st_mode) || S_ISBLK(st.st_mode) || S_ISSOCK(st.st_mode))
        return sim_err_set(err, SIM_ESCENARIO, NULL, "%s %s is %s: name a file", what, file,
                           sim_file_kind(st.st_mode));
    *how = S_ISREG(st.st_mode) && sim_file_std_stream(&st) < 0 ? SIM_RUNDIR_REPLACE
                                                               : SIM_RUNDIR_THROUGH;
    /* A regular file behind links is replaced at its real place; anything else is opened by
     * its name (/dev/stdout's target is no path). */
    char *real = link ? realpath(file, NULL) : NULL;
    *out = real != NULL ? real : rundir_concat(file, "");
    return *out != NULL ? SIM_OK : rundir_oom(err);
}

/* Refuses a file `p` (followed) whose folder is a plot's folder of figures: a report there
 * replaced its convergence.png or its mark (a folder below one is not the plot's: a plot into
 * "." marks the folder, not what it holds). The message names it `name`. */
static int check_plot_folder(const char *what, const char *name, const char *p, sim_err *err)
{
    char *folder = strdup(p);
    if (folder == NULL)
        return rundir_oom(err);
    cut_last(folder);
    int rc = sim_rundir_kind_of(folder) == SIM_RUNDIR_PLOT
                 ? sim_err_set(err, SIM_ESCENARIO, NULL,
                               "%s %s is in %s, a hetsim plot directory (its figures are the "
                               "plot's): choose a place outside it",
                               what, name, folder)
                 : SIM_OK;
    free(folder);
    return rc;
}

int sim_rundir_check_file(const char *what, const char *file, char **path, sim_rundir_write *how,
                          sim_err *err)
{
    *path = NULL;
    if (file[0] == '\0')
        return sim_err_set(err, SIM_ESCENARIO, NULL, "%s: an empty name", what);
    /* "DIR/" was written as a file named DIR. */
    if (file[strlen(file) - 1] == '/')
        return sim_err_set(err, SIM_ESCENARIO, NULL,
                           "%s %s names a directory (it ends in '/'): name a file", what, file);
    char *p = NULL, *real = NULL;
    int rc = file_target(what, file, &p, how, err);
    /* A report named X.partial or X.lock stopped every later run into X (or update of X). */
    if (rc == SIM_OK && reserved(p))
        rc = sim_err_set(err, SIM_ESCENARIO, NULL,
                         "%s %s: names ending in .partial or .lock are hetsim's work directories "
                         "and locks",
                         what, file);
    if (rc == SIM_OK)
        rc = check_made(what, file, p, err);
    /* The folders it lies in, links resolved (those of the real file when there is one). */
    if (rc == SIM_OK)
        real = realpath(p, NULL);
    if (rc == SIM_OK)
        rc = check_ancestors(what, file, real != NULL ? real : p, SIM_RUNDIR_ANY, err);
    if (rc == SIM_OK)
        rc = check_plot_folder(what, file, real != NULL ? real : p, err);
    free(real);
    if (rc == SIM_OK)
        *path = p;
    else
        free(p);
    return rc;
}

/* Counts the entries of `dir` other than . and .. (-1 if it cannot be read). */
static long entries(const char *dir)
{
    DIR *d = opendir(dir);
    if (d == NULL)
        return -1;
    long n = 0;
    for (struct dirent *e = readdir(d); e != NULL; e = readdir(d))
        n += strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0;
    closedir(d);
    return n;
}

/* Removes the files of the flat directory `dir`, run.json and the marker last (so that a
 * removal that fails half-way leaves a directory still recognised as hetsim's), then
 * `dir`. A subdirectory stops the removal (returns -1): callers check for one, and for a
 * file of the user's, first (rundir_foreign). */
static int remove_flat(const char *dir)
{
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC); /* never a link's target */
    DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
    if (d == NULL) {
        if (fd >= 0)
            close(fd);
        return -1;
    }
    int rc = 0;
    for (struct dirent *e = readdir(d); e != NULL && rc == 0; e = readdir(d)) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0 ||
            strcmp(e->d_name, "run.json") == 0 || strcmp(e->d_name, SIM_RUNDIR_MARKER) == 0)
            continue;
        rc = unlinkat(dirfd(d), e->d_name, 0);
    }
    for (int i = 0; i < 2 && rc == 0; i++)
        if (unlinkat(dirfd(d), i == 0 ? "run.json" : SIM_RUNDIR_MARKER, 0) != 0 && errno != ENOENT)
            rc = -1;
    closedir(d);
    return rc == 0 ? rmdir(dir) : rc;
}

/* Creates the missing parents of `dir` (its last component excluded). */
static int make_parents(const char *dir, sim_err *err)
{
    char *parent = sim_file_clean_path(dir);
    if (parent == NULL)
        return rundir_oom(err);
    char *slash = strrchr(parent, '/');
    int rc = SIM_OK;
    if (slash != NULL && slash != parent) {
        *slash = '\0';
        rc = sim_output_mkdirs(parent, err);
    }
    free(parent);
    return rc;
}

/* True if the open regular file `fd` holds what a lock of hetsim holds: nothing yet, or a pid
 * and its newline ("%ld\n", sim_rundir_lock_take). */
static bool pid_text(int fd)
{
    char text[32];
    ssize_t got = pread(fd, text, sizeof(text), 0);
    if (got < 0 || got == (ssize_t)sizeof(text))
        return false;
    ssize_t digits = 0;
    while (digits < got && text[digits] >= '0' && text[digits] <= '9')
        digits++;
    return digits == got || (digits > 0 && digits == got - 1 && text[digits] == '\n');
}

/* A lock file is hetsim's own: a plain file of one link holding a pid. One that is a symbolic
 * link, a hard link (its pid would be written into the file it shares: a golden's
 * golden.json), a directory, a FIFO or a socket (which open refuses, ENXIO: it was "cannot
 * create", exit 1), or a file of other text (a user's notes or profile named DIR.lock: its text
 * was replaced by the pid and the file removed, exit 0) is refused, nothing written; `fd` (open
 * with O_NOFOLLOW) is closed then. */
static int check_lock_file(int fd, const char *path, sim_err *err)
{
    struct stat st;
    const char *what = NULL;
    if (fd < 0 && (errno == ELOOP || errno == EISDIR || errno == ENXIO))
        what = errno == ELOOP ? "a symbolic link" : errno == EISDIR ? "a directory" : "a socket";
    else if (fd < 0)
        return sim_err_set(err, SIM_EIO, NULL, "cannot create the lock file %s: %s", path,
                           strerror(errno));
    else if (fstat(fd, &st) != 0)
        what = "not a plain file";
    else if (!S_ISREG(st.st_mode))
        what = sim_file_kind(st.st_mode);
    else if (st.st_nlink > 1) /* 0: unlinked by its holder meanwhile, taken again below */
        what = "a hard link to another file";
    else if (!pid_text(fd))
        what = "a file of other text than a pid";
    if (what == NULL)
        return SIM_OK;
    if (fd >= 0)
        close(fd);
    return sim_err_set(err, SIM_ESCENARIO, NULL,
                       "the lock file %s is %s, not a lock of hetsim: remove it", path, what);
}

int sim_rundir_lock_take(const char *dir, sim_rundir_lock **lock, sim_err *err)
{
    *lock = NULL;
    char *d = NULL;
    int rc = sim_rundir_follow(dir, &d, err);
    if (rc == SIM_OK && (rc = make_parents(d, err)) != SIM_OK)
        free(d);
    if (rc != SIM_OK)
        return rc;
    char *path = rundir_concat(d, ".lock");
    sim_rundir_lock *lk = calloc(1, sizeof(*lk));
    if (path == NULL || lk == NULL) {
        free(d);
        free(path);
        free(lk);
        return rundir_oom(err);
    }
    /* The holder unlinks the file before it closes it: a lock won on a file that is no
     * longer at `path` is worthless, and taken again on the file now there. */
    for (int tries = 0; rc == SIM_OK; tries++) {
        int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0666);
        if ((rc = check_lock_file(fd, path, err)) != SIM_OK)
            break;
        if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
            if (errno == EWOULDBLOCK) {
                char text[32] = { 0 };
                ssize_t got = pread(fd, text, sizeof(text) - 1, 0);
                long pid = got > 0 ? strtol(text, NULL, 10) : 0;
                char holder[48] = "a process not known";
                if (pid > 0)
                    snprintf(holder, sizeof(holder), "pid %ld", pid);
                rc = sim_err_set(err, SIM_ESCENARIO, NULL,
                                 "output directory %s is being written by another hetsim (%s, "
                                 "lock %s): wait for it to finish or choose another directory",
                                 d, holder, path);
            } else {
                rc = sim_err_set(err, SIM_EIO, NULL, "cannot lock %s: %s", path, strerror(errno));
            }
            close(fd);
            break;
        }
        struct stat a, b;
        if (fstat(fd, &a) == 0 && stat(path, &b) == 0 && a.st_dev == b.st_dev &&
            a.st_ino == b.st_ino) {
            char text[32];
            int len = snprintf(text, sizeof(text), "%ld\n", (long)getpid());
            if (ftruncate(fd, 0) != 0 || pwrite(fd, text, (size_t)len, 0) != len) {
                rc = sim_err_set(err, SIM_EIO, NULL, "cannot write %s: %s", path, strerror(errno));
                close(fd);
                break;
            }
            lk->fd = fd;
            lk->path = path;
            free(d);
            *lock = lk;
            return SIM_OK;
        }
        close(fd);
        if (tries >= 1000)
            rc = sim_err_set(err, SIM_EIO, NULL, "cannot lock %s: it keeps being replaced", path);
    }
    free(d);
    free(path);
    free(lk);
    return rc;
}

void sim_rundir_unlock(sim_rundir_lock *lock)
{
    if (lock == NULL)
        return;
    unlink(lock->path); /* while the lock is held: see sim_rundir_lock_take */
    close(lock->fd);
    free(lock->path);
    free(lock);
}

bool sim_rundir_locked(const char *dir, long *pid)
{
    sim_err err;
    char *d = NULL, *path = NULL;
    *pid = 0;
    if (sim_rundir_follow(dir, &d, &err) == SIM_OK)
        path = rundir_concat(d, ".lock");
    free(d);
    int fd = path != NULL ? open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK) : -1;
    free(path);
    struct stat st;
    char text[32] = { 0 };
    bool held = false;
    if (fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode) &&
        pread(fd, text, sizeof(text) - 1, 0) >= 0) {
        *pid = strtol(text, NULL, 10);
        bool live = *pid <= 0 || kill((pid_t)*pid, 0) == 0 || errno == EPERM;
        held = *pid != (long)getpid() && live && flock(fd, LOCK_SH | LOCK_NB) != 0 &&
               errno == EWOULDBLOCK;
    }
    if (fd >= 0)
        close(fd); /* and the shared lock with it */
    return held;
}

static void rundir_free(sim_rundir *rd)
{
    sim_rundir_unlock(rd->lock);
    free(rd->dir);
    free(rd->work);
    free(rd);
}

/* Checks `dir` and its work directory under the lock; removes a work directory left over. */
static int check_places(const char *dir, const char *w, sim_err *err)
{
    struct stat st;
    char sub[256];
    if (stat(dir, &st) == 0) {
        if (!S_ISDIR(st.st_mode))
            return sim_err_set(err, SIM_ESCENARIO, NULL,
                               "output directory %s exists and is not a directory", dir);
        if (entries(dir) != 0 && !is_run(dir))
            return sim_err_set(err, SIM_ESCENARIO, NULL,
                               "output directory %s is not empty and holds no hetsim run "
                               "(no run.json of hetsim): choose another or empty it",
                               dir);
        if (rundir_foreign(dir, sub, sizeof(sub)))
            return sim_err_set(err, SIM_ESCENARIO, NULL,
                               "output directory %s holds a run and a %s, which is not hetsim's "
                               "(no run writes it): move it away first",
                               dir, sub);
    }
    if (lstat(w, &st) != 0)
        return SIM_OK;
    /* An empty work directory is one a run killed between its mkdir and its marker left:
     * removing it (rmdir) cannot lose anything. */
    if (S_ISDIR(st.st_mode) && entries(w) == 0) {
        if (rmdir(w) != 0)
            return sim_err_set(err, SIM_EIO, NULL, "cannot remove %s: %s", w, strerror(errno));
        return SIM_OK;
    }
    if (!S_ISDIR(st.st_mode) || !(exists_in(w, SIM_RUNDIR_MARKER) || is_run(w)))
        return sim_err_set(err, SIM_ESCENARIO, NULL,
                           "%s exists and is not hetsim's work directory: remove it", w);
    if (rundir_foreign(w, sub, sizeof(sub)))
        return sim_err_set(err, SIM_ESCENARIO, NULL,
                           "%s holds a %s, which is not hetsim's (no run writes it): move it away "
                           "(then the next run removes %s)",
                           w, sub, w);
    if (remove_flat(w) != 0) /* left by a killed run, or a replaced one */
        return sim_err_set(err, SIM_EIO, NULL, "cannot remove %s: %s", w, strerror(errno));
    return SIM_OK;
}

/* Creates the empty marker in the work directory `w` in one step (no temporary name), so
 * that a run killed at any moment leaves `w` either empty or marked. */
static int make_marker(const char *w, sim_err *err)
{
    char *path = rundir_concat(w, "/" SIM_RUNDIR_MARKER);
    if (path == NULL)
        return rundir_oom(err);
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    int rc = SIM_OK;
    if (fd < 0 || close(fd) != 0)
        rc = sim_err_set(err, SIM_EIO, NULL, "cannot create %s: %s", path, strerror(errno));
    free(path);
    return rc;
}

int sim_rundir_begin(const char *dir, sim_rundir **out, sim_err *err)
{
    *out = NULL;
    sim_rundir *rd = calloc(1, sizeof(*rd));
    if (rd == NULL)
        return rundir_oom(err);
    int rc = sim_rundir_follow(dir, &rd->dir, err);
    if (rc == SIM_OK && (rd->work = rundir_concat(rd->dir, ".partial")) == NULL)
        rc = rundir_oom(err);
    if (rc != SIM_OK) {
        rundir_free(rd);
        return rc;
    }
    if (reserved(rd->dir))
        rc = sim_err_set(err, SIM_ESCENARIO, NULL,
                         "output directory %s: names ending in .partial or .lock are hetsim's "
                         "work directories and locks",
                         rd->dir);
    if (rc == SIM_OK)
        rc = sim_rundir_check_within(
            rd->dir, SIM_RUNDIR_BIT(SIM_RUNDIR_RUN) | SIM_RUNDIR_BIT(SIM_RUNDIR_WORK), err);
    if (rc == SIM_OK)
        rc = sim_rundir_lock_take(rd->dir, &rd->lock, err);
    if (rc == SIM_OK)
        rc = check_places(rd->dir, rd->work, err);
    if (rc == SIM_OK && mkdir(rd->work, 0777) != 0)
        rc = sim_err_set(err, SIM_EIO, NULL, "cannot create %s: %s", rd->work, strerror(errno));
    else if (rc == SIM_OK && (rc = make_marker(rd->work, err)) != SIM_OK)
        remove_flat(rd->work);
    if (rc != SIM_OK) {
        rundir_free(rd);
        return rc;
    }
    *out = rd;
    return SIM_OK;
}

const char *sim_rundir_work(const sim_rundir *rd)
{
    return rd->work;
}

int sim_rundir_commit(sim_rundir *rd, sim_err *err)
{
    char *marker = rundir_concat(rd->work, "/" SIM_RUNDIR_MARKER);
    int rc = SIM_OK;
    if (marker == NULL)
        rc = rundir_oom(err);
    else if (unlink(marker) != 0)
        rc = sim_err_set(err, SIM_EIO, NULL, "cannot remove %s: %s", marker, strerror(errno));
    free(marker);
    struct stat st;
    if (rc == SIM_OK && stat(rd->dir, &st) != 0) {
        if (rename(rd->work, rd->dir) != 0)
            rc = sim_err_set(err, SIM_EIO, NULL, "cannot rename %s to %s: %s", rd->work, rd->dir,
                             strerror(errno));
    } else if (rc == SIM_OK) {
        /* The previous run (or an empty directory) and the new one swap places at once;
         * the previous one, now under the work name and flat (begin checked), goes. If that
         * removal fails, the next run into `dir` removes it (it holds hetsim's run.json).
         * One that took a file of the user's while the run ran (begin looked before) is
         * swapped back: the file was removed with it, exit 0. */
        char sub[256];
        if (renameat2(AT_FDCWD, rd->work, AT_FDCWD, rd->dir, RENAME_EXCHANGE) != 0)
            rc = sim_err_set(err, SIM_EIO, NULL, "cannot replace %s: %s", rd->dir, strerror(errno));
        else if (!rundir_foreign(rd->work, sub, sizeof(sub)))
            remove_flat(rd->work);
        else if (renameat2(AT_FDCWD, rd->work, AT_FDCWD, rd->dir, RENAME_EXCHANGE) == 0)
            rc = sim_err_set(err, SIM_ESCENARIO, NULL,
                             "output directory %s: a %s was put there while the run ran, and is "
                             "not hetsim's: not replaced; move it away and run again",
                             rd->dir, sub);
        else { /* the new run in place, the old one kept whole beside it */
            sim_err_set(err, SIM_EIO, NULL,
                        "%s holds a %s, put into the run replaced: move it away (then the next "
                        "run removes %s)",
                        rd->work, sub, rd->work);
            rundir_free(rd);
            return SIM_EIO;
        }
    }
    if (rc != SIM_OK) {
        sim_rundir_abort(rd); /* nothing moved: the work directory is still ours */
        return rc;
    }
    rundir_free(rd);
    return SIM_OK;
}

void sim_rundir_abort(sim_rundir *rd)
{
    if (rd == NULL)
        return;
    remove_flat(rd->work);
    rundir_free(rd);
}
