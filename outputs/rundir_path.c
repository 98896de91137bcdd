/* The places outputs name (see outputs/rundir.h): a path cleaned, its ".." resolved as the
 * kernel means it, its symbolic links followed; split from rundir.c, which checks and writes
 * those places. */
#define _XOPEN_SOURCE 700 /* realpath */
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "outputs/rundir.h"
#include "outputs/rundir_state.h"
#include "sim/file.h"

char *rundir_concat(const char *a, const char *b)
{
    size_t n = strlen(a) + strlen(b) + 1;
    char *s = malloc(n);
    if (s != NULL)
        snprintf(s, n, "%s%s", a, b);
    return s;
}

int rundir_oom(sim_err *err)
{
    return sim_err_set(err, SIM_ENOMEM, NULL, "out of memory");
}

/* True if the component at c (up to a '/' or the end) is "." or "..". */
static bool is_dots(const char *c, size_t len)
{
    return (len == 1 && c[0] == '.') || (len == 2 && c[0] == '.' && c[1] == '.');
}

/* The first component of `path` that does not exist and is followed by "..", or NULL: once an
 * output's missing folders are made, "new/../golden" is "golden", but until then no check can
 * see that place ("new/../golden" was checked as absent, then "new" made and the golden
 * written), so such a path is refused. A NAME that exists is left to the kernel. */
static const char *missing_before_dotdot(const char *path, size_t *name_len)
{
    const char *prev = NULL;
    size_t prev_len = 0;
    for (const char *c = path; *c != '\0';) {
        while (*c == '/')
            c++;
        size_t len = strcspn(c, "/");
        if (len == 0)
            break;
        if (prev != NULL && len == 2 && c[0] == '.' && c[1] == '.' && !is_dots(prev, prev_len)) {
            size_t n = (size_t)(prev - path) + prev_len;
            char *head = malloc(n + 1);
            struct stat st;
            bool missing = false;
            if (head != NULL) {
                memcpy(head, path, n);
                head[n] = '\0';
                missing = lstat(head, &st) != 0 && errno == ENOENT;
            }
            free(head);
            if (missing) {
                *name_len = prev_len;
                return prev;
            }
        }
        prev = c;
        prev_len = len;
        c += len;
    }
    return NULL;
}

/* The part of the cleaned `p` up to its last ".." replaced by that folder's real path, into
 * *p (freed and replaced): what the kernel means by "..", the parent of where the path has
 * led (a link's target's parent), which no cut of the text can tell ("A/.." cut to "A" was
 * taken as a place inside A). "." alone is replaced by its real path too; any other path
 * without ".." is left as it is. */
static int resolve_dots(const char *dir, char **p, sim_err *err)
{
    size_t len = 0;
    const char *missing = missing_before_dotdot(*p, &len), *last = NULL;
    if (missing != NULL)
        return sim_err_set(err, SIM_ESCENARIO, NULL,
                           "output directory %s: \"..\" follows %.*s, which does not exist "
                           "(yet): name the place without it",
                           dir, (int)len, missing);
    for (const char *c = *p; *c != '\0';) {
        while (*c == '/')
            c++;
        size_t k = strcspn(c, "/");
        if (k == 2 && c[0] == '.' && c[1] == '.')
            last = c + 2;
        c += k;
    }
    if (last == NULL && strcmp(*p, ".") != 0)
        return SIM_OK;
    /* "." alone is the current directory by its real path too: its lock and work directory
     * were "..lock" and "..partial" inside it, so `run -o .` in an empty folder was "not empty"
     * and `sweep -o .` in a sweep "inside" itself, where the folder's own name ran. */
    if (last == NULL)
        last = *p + 1;
    char *head = strndup(*p, (size_t)(last - *p));
    char *real = head != NULL ? realpath(head, NULL) : NULL;
    int rc = SIM_OK;
    if (head == NULL || (real == NULL && errno == ENOMEM)) {
        rc = rundir_oom(err);
    } else if (real == NULL) { /* "file/..", a folder that cannot be searched */
        rc = sim_err_set(err, SIM_ESCENARIO, NULL, "output directory %s: cannot resolve %s: %s",
                         dir, head, strerror(errno));
    } else {
        char *joined = rundir_concat(real, last[0] != '\0' ? last : "/");
        char *next = joined != NULL ? sim_file_clean_path(joined) : NULL;
        free(joined);
        if (next == NULL) {
            rc = rundir_oom(err);
        } else {
            free(*p);
            *p = next;
        }
    }
    free(head);
    free(real);
    return rc;
}

int sim_rundir_resolve(const char *dir, char **out, sim_err *err)
{
    *out = NULL;
    if (dir[0] == '\0') /* `run -o ""` failed at its end: "cannot rename .partial to " */
        return sim_err_set(err, SIM_ESCENARIO, NULL, "output directory: an empty name");
    char *p = sim_file_clean_path(dir);
    int rc = p != NULL ? resolve_dots(dir, &p, err) : rundir_oom(err);
    if (rc == SIM_OK)
        *out = p;
    else
        free(p);
    return rc;
}

/* The length of the leading part of `p` (whole components) that is a symbolic link to
 * nothing yet, or 0 when none is: nothing after such a folder exists, so no check sees where
 * the path leads (the nearest existing ancestor of "ext/LINK/x" is "ext"), while writing makes
 * the link's target (sim_output_mkdirs) and so a place inside whatever it names. */
static size_t dangling_link(const char *p)
{
    size_t n = strlen(p), found = 0;
    char *q = malloc(n + 1);
    if (q == NULL)
        return 0;
    memcpy(q, p, n + 1);
    for (size_t i = 1; i <= n && found == 0; i++) {
        if (q[i] != '/' && q[i] != '\0')
            continue;
        char saved = q[i];
        q[i] = '\0';
        struct stat st;
        bool there = lstat(q, &st) == 0;
        if (there && S_ISLNK(st.st_mode) && stat(q, &st) != 0)
            found = i;
        q[i] = saved;
        if (!there)
            break;
    }
    free(q);
    return found;
}

static int follow(const char *dir, char *p, int *hops, char **out, sim_err *err);

/* `p` (owned) with its first k bytes, a link to nothing yet, replaced by the place that link
 * names, followed as an output's own link is (".." after a folder not made yet refused), then
 * the whole followed again. */
static int follow_dangling(const char *dir, char *p, size_t k, int *hops, char **out, sim_err *err)
{
    char *head = strndup(p, k), *place = NULL;
    int rc = head != NULL ? follow(dir, head, hops, &place, err) : rundir_oom(err);
    char *joined = rc == SIM_OK ? rundir_concat(place, p + k) : NULL;
    char *next = joined != NULL ? sim_file_clean_path(joined) : NULL;
    if (rc == SIM_OK && next == NULL)
        rc = rundir_oom(err);
    free(p);
    free(place);
    free(joined);
    return rc == SIM_OK ? follow(dir, next, hops, out, err) : rc;
}

/* Follows `p` (cleaned, its ".." resolved; owned) to the place it names: its last component's
 * links, then a folder on the way that is a link to nothing yet; `hops` links in all. */
static int follow(const char *dir, char *p, int *hops, char **out, sim_err *err)
{
    char target[PATH_MAX];
    for (bool first = true; p != NULL; first = false, ++*hops) {
        struct stat st;
        int rc;
        if (!first && (rc = resolve_dots(dir, &p, err)) != SIM_OK) {
            free(p);
            return rc;
        }
        if (lstat(p, &st) != 0 || !S_ISLNK(st.st_mode)) {
            size_t k = dangling_link(p);
            if (k == 0) {
                *out = p;
                return SIM_OK;
            }
            return follow_dangling(dir, p, k, hops, out, err);
        }
        ssize_t n = *hops < 40 ? readlink(p, target, sizeof(target) - 1) : -1;
        if (n < 0) {
            rc = sim_err_set(err, SIM_ESCENARIO, NULL,
                             "output directory %s: a symbolic link that cannot be followed (%s)",
                             dir, *hops < 40 ? strerror(errno) : "more than 40 links");
            free(p);
            return rc;
        }
        target[n] = '\0';
        char *slash = strrchr(p, '/'), *next;
        if (target[0] == '/' || slash == NULL) { /* absolute, or beside a link in "." */
            next = sim_file_clean_path(target);
        } else { /* relative to the link's folder */
            slash[1] = '\0';
            char *joined = rundir_concat(p, target);
            next = joined != NULL ? sim_file_clean_path(joined) : NULL;
            free(joined);
        }
        free(p);
        p = next;
    }
    return rundir_oom(err);
}

int sim_rundir_follow(const char *dir, char **out, sim_err *err)
{
    char *p = NULL;
    int hops = 0;
    *out = NULL;
    int rc = sim_rundir_resolve(dir, &p, err);
    return rc == SIM_OK ? follow(dir, p, &hops, out, err) : rc;
}
