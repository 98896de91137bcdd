/* Run directories that appear whole or not at all (see sim/rundir.h). */
#define _GNU_SOURCE /* renameat2 and RENAME_EXCHANGE (glibc 2.28 and later) */
#include "sim/rundir.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sim/output.h"

static char *concat(const char *a, const char *b)
{
    size_t n = strlen(a) + strlen(b) + 1;
    char *s = malloc(n);
    if (s != NULL)
        snprintf(s, n, "%s%s", a, b);
    return s;
}

/* True if dir/name exists (without following a final symbolic link). */
static bool exists_in(const char *dir, const char *name)
{
    char *p = concat(dir, "/");
    char *q = p != NULL ? concat(p, name) : NULL;
    struct stat st;
    bool yes = q != NULL && lstat(q, &st) == 0;
    free(p);
    free(q);
    return yes;
}

/* True if `dir` holds a run.json that hetsim wrote. */
static bool is_run(const char *dir)
{
    static const char head[] = "{\n  \"hetsim_version\"";
    char *p = concat(dir, "/run.json");
    FILE *f = p != NULL ? fopen(p, "rb") : NULL;
    char buf[sizeof(head)] = { 0 };
    bool yes = f != NULL && fread(buf, 1, sizeof(head) - 1, f) == sizeof(head) - 1 &&
               memcmp(buf, head, sizeof(head) - 1) == 0;
    if (f != NULL)
        fclose(f);
    free(p);
    return yes;
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

/* Removes the files of the flat directory `dir`, then `dir`. A run directory holds only
 * files: a subdirectory stops the removal (returns -1, errno ENOTEMPTY). */
static int remove_flat(const char *dir)
{
    DIR *d = opendir(dir);
    if (d == NULL)
        return -1;
    int rc = 0;
    for (struct dirent *e = readdir(d); e != NULL && rc == 0; e = readdir(d)) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        rc = unlinkat(dirfd(d), e->d_name, 0);
    }
    closedir(d);
    return rc == 0 ? rmdir(dir) : rc;
}

/* Creates the missing parents of `dir` (its last component excluded). */
static int make_parents(const char *dir, sim_err *err)
{
    char *parent = concat(dir, "");
    if (parent == NULL)
        return sim_err_set(err, SIM_ENOMEM, NULL, "out of memory");
    size_t n = strlen(parent);
    while (n > 1 && parent[n - 1] == '/')
        parent[--n] = '\0';
    char *slash = strrchr(parent, '/');
    int rc = SIM_OK;
    if (slash != NULL && slash != parent) {
        *slash = '\0';
        rc = sim_output_mkdirs(parent, err);
    }
    free(parent);
    return rc;
}

int sim_rundir_begin(const char *dir, char **work, sim_err *err)
{
    *work = NULL;
    struct stat st;
    if (stat(dir, &st) == 0) {
        if (!S_ISDIR(st.st_mode))
            return sim_err_set(err, SIM_ESCENARIO, NULL,
                               "output directory %s exists and is not a directory", dir);
        if (entries(dir) != 0 && !is_run(dir))
            return sim_err_set(err, SIM_ESCENARIO, NULL,
                               "output directory %s is not empty and holds no hetsim run "
                               "(no run.json of hetsim): choose another or empty it",
                               dir);
    }
    char *w = concat(dir, ".partial");
    if (w == NULL)
        return sim_err_set(err, SIM_ENOMEM, NULL, "out of memory");
    if (lstat(w, &st) == 0) {
        if (!S_ISDIR(st.st_mode) || !(exists_in(w, SIM_RUNDIR_MARKER) || is_run(w))) {
            sim_err_set(err, SIM_ESCENARIO, NULL,
                        "%s exists and is not hetsim's work directory: remove it", w);
            free(w);
            return SIM_ESCENARIO;
        }
        if (remove_flat(w) != 0) { /* left by a killed run, or a replaced one */
            sim_err_set(err, SIM_EIO, NULL, "cannot remove %s: %s", w, strerror(errno));
            free(w);
            return SIM_EIO;
        }
    }
    int rc = make_parents(dir, err);
    if (rc == SIM_OK && mkdir(w, 0777) != 0)
        rc = sim_err_set(err, SIM_EIO, NULL, "cannot create %s: %s", w, strerror(errno));
    if (rc == SIM_OK)
        rc = sim_output_write(w, SIM_RUNDIR_MARKER, "", err);
    if (rc != SIM_OK) {
        if (exists_in(w, SIM_RUNDIR_MARKER) || entries(w) == 0)
            remove_flat(w);
        free(w);
        return rc;
    }
    *work = w;
    return SIM_OK;
}

int sim_rundir_commit(const char *dir, char *work, sim_err *err)
{
    char *marker = concat(work, "/" SIM_RUNDIR_MARKER);
    int rc = SIM_OK;
    if (marker == NULL)
        rc = sim_err_set(err, SIM_ENOMEM, NULL, "out of memory");
    else if (unlink(marker) != 0)
        rc = sim_err_set(err, SIM_EIO, NULL, "cannot remove %s: %s", marker, strerror(errno));
    free(marker);
    struct stat st;
    if (rc == SIM_OK && stat(dir, &st) != 0) {
        if (rename(work, dir) != 0)
            rc = sim_err_set(err, SIM_EIO, NULL, "cannot rename %s to %s: %s", work, dir,
                             strerror(errno));
    } else if (rc == SIM_OK) {
        /* The previous run (or an empty directory) and the new one swap places at once;
         * the previous one, now under the work name, goes. If that removal fails, the next
         * run into `dir` removes it (it holds hetsim's run.json). */
        if (renameat2(AT_FDCWD, work, AT_FDCWD, dir, RENAME_EXCHANGE) != 0)
            rc = sim_err_set(err, SIM_EIO, NULL, "cannot replace %s: %s", dir, strerror(errno));
        else
            remove_flat(work);
    }
    if (rc != SIM_OK) {
        sim_rundir_abort(work); /* nothing moved: the work directory is still ours */
        return rc;
    }
    free(work);
    return SIM_OK;
}

void sim_rundir_abort(char *work)
{
    if (work == NULL)
        return;
    remove_flat(work);
    free(work);
}
