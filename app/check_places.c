/* Where a check may write (see check_state.h): its JUnit report's file and its output
 * directory, refused before anything runs when they would land inside another hetsim output
 * or replace a file the check does not own (the ownership rule, outputs/rundir.h); and the
 * golden an update replaces: refused when it holds what an update does not write, else swapped
 * in whole. */
#define _GNU_SOURCE /* realpath, nftw, renameat2 and RENAME_EXCHANGE (glibc 2.28 and later) */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "app/check.h"
#include "app/check_state.h"
#include "outputs/rundir.h"
#include "sim/err.h"

/* `path` made absolute, the links of the part that exists resolved and the rest taken as
 * written ("." dropped; sim_rundir_follow refused ".." there); malloc'd, NULL if that fails. */
static char *resolved(const char *path)
{
    char *real = realpath(path, NULL);
    if (real != NULL || errno != ENOENT)
        return real;
    const char *slash = strrchr(path, '/');
    const char *name = slash != NULL ? slash + 1 : path;
    char *parent = slash == NULL   ? strdup(".")
                   : slash == path ? strdup("/")
                                   : strndup(path, (size_t)(slash - path));
    char *up = parent != NULL ? resolved(parent) : NULL;
    free(parent);
    if (up == NULL || name[0] == '\0' || strcmp(name, ".") == 0)
        return up;
    size_t n = strlen(up) + strlen(name) + 2;
    char *out = malloc(n);
    if (out != NULL)
        snprintf(out, n, "%s%s%s", up, strcmp(up, "/") == 0 ? "" : "/", name);
    free(up);
    return out;
}

/* True if the report's place `place` is the check's output directory `dir` itself or lies in
 * one of its runs (made by the check: it ran, then the report was refused with exit 2), or is a
 * file the check writes in `dir`: check.csv, its figure and band CSVs or their temporaries
 * (NAME.tmp: a report there was removed by the next check), a seed's run directory seed-S. */
static bool own_file(const char *place, const char *dir)
{
    static const char *const own[] = { "check.csv", "check-golden.csv", "check-run.csv",
                                       "check.png" };
    char *p = resolved(place), *d = resolved(dir);
    size_t n = d != NULL ? strlen(d) : 0;
    bool mine = false;
    if (p != NULL && d != NULL && strncmp(p, d, n) == 0 && (p[n] == '\0' || p[n] == '/')) {
        const char *name = p[n] == '\0' ? "" : p + n + 1;
        mine = name[0] == '\0' || strchr(name, '/') != NULL || strncmp(name, "seed-", 5) == 0;
        for (size_t i = 0; !mine && i < sizeof(own) / sizeof(own[0]); i++) {
            size_t k = strlen(own[i]); /* or its temporary, NAME.tmp, which a check removes */
            mine =
                strncmp(name, own[i], k) == 0 && (name[k] == '\0' || strcmp(name + k, ".tmp") == 0);
        }
    }
    free(p);
    free(d);
    return mine;
}

/* True if the report's place `place` lies inside the output directory of another check than
 * the one into `dir`: that check's check.csv, figure and runs are its own (a report over its
 * check.png replaced the figure; over its check.csv, the directory was no check's any more). */
static bool in_other_check(const char *place, const char *dir)
{
    char *p = resolved(place), *d = resolved(dir);
    bool other = false;
    for (char *slash; p != NULL && d != NULL && (slash = strrchr(p, '/')) != NULL;) {
        slash[slash == p] = '\0'; /* "/x" -> "/" */
        if (sim_rundir_kind_of(p) == SIM_RUNDIR_CHECK) {
            other = strcmp(p, d) != 0;
            break;
        }
        if (slash == p)
            break;
    }
    free(p);
    free(d);
    return other;
}

/* Refuses a report that would replace what the check reads or writes itself: the scenario
 * file (a link or another name of it too), one of its own files in `dir` (NULL: not known
 * yet), or a place in another check's output directory. `dir` is taken where the check writes
 * it, its links followed as `place`'s were (sim_rundir_follow): `-o LINK`, LINK a link to a
 * folder not made yet, let `--junit TARGET/check.csv` replace the check's own check.csv. */
static int junit_clash(const app_check_options *opt, const char *place, const char *dir,
                       sim_err *err)
{
    struct stat a, b;
    if (stat(place, &a) == 0 && stat(opt->scenario, &b) == 0 && a.st_dev == b.st_dev &&
        a.st_ino == b.st_ino)
        return sim_err_set(err, SIM_ESCENARIO, NULL,
                           "--junit file %s is the scenario file %s: name another file", opt->junit,
                           opt->scenario);
    char *out = NULL;
    int rc = dir != NULL ? sim_rundir_follow(dir, &out, err) : SIM_OK;
    if (rc == SIM_OK && out != NULL && own_file(place, out))
        rc = sim_err_set(err, SIM_ESCENARIO, NULL,
                         "--junit file %s is the check's own output %s or a file in it: name "
                         "another file",
                         opt->junit, dir);
    else if (rc == SIM_OK && out != NULL && in_other_check(place, out))
        rc = sim_err_set(err, SIM_ESCENARIO, NULL,
                         "--junit file %s is inside another check's output directory: choose a "
                         "place outside it",
                         opt->junit);
    free(out);
    return rc;
}

/* Refuses a report that no process may write where it goes (`place`, replaced whole there): its
 * folder, or the deepest folder of its path that is there when the rest is made, is not
 * writable (a read-only file system, a folder of another user's), which lost the report after
 * the whole check, exit 1. */
static int junit_writable(const app_check_options *opt, const char *place, sim_err *err)
{
    char *dir = strdup(place);
    if (dir == NULL)
        return sim_err_set(err, SIM_ENOMEM, NULL, "out of memory");
    struct stat st;
    for (;;) { /* the file's folder, then up while it is not there */
        char *slash = strrchr(dir, '/');
        if (slash == NULL) {
            strcpy(dir, "."); /* dir holds a name at least: "." fits */
            break;
        }
        slash[slash == dir] = '\0'; /* "/" stays the root */
        if (stat(dir, &st) == 0 || errno != ENOENT || strcmp(dir, "/") == 0)
            break;
    }
    int rc = SIM_OK;
    if (access(dir, W_OK) != 0)
        rc = sim_err_set(err, SIM_EIO, NULL, "--junit file %s cannot be written: %s: %s",
                         opt->junit, dir, strerror(errno));
    free(dir);
    return rc;
}

/* Refuses a seed run's directory OUT/seed-S in the check's output `dir` that is a symbolic
 * link: the check runs its seeds in its own directory (through a link it replaced the run, or a
 * sweep's point, that the link named). */
static int linked_seed(const char *dir, sim_err *err)
{
    DIR *d = opendir(dir);
    int rc = SIM_OK;
    for (struct dirent *e = d != NULL ? readdir(d) : NULL; e != NULL && rc == SIM_OK;
         e = readdir(d)) {
        char path[PATH_TEXT + 300];
        struct stat st;
        snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
        if (strncmp(e->d_name, "seed-", 5) == 0 && lstat(path, &st) == 0 && S_ISLNK(st.st_mode))
            rc = sim_err_set(err, SIM_ESCENARIO, NULL,
                             "%s is a symbolic link: a check runs its seeds in its own output "
                             "directory, never through a link to another place; remove it",
                             path);
    }
    if (d != NULL)
        closedir(d);
    return rc;
}

/* True if `name`, an entry of the check's output directory, is one of its seed runs or their
 * work directories: "seed-S" or "seed-S.partial", S a decimal seed. */
static bool seed_name(const char *name)
{
    if (strncmp(name, "seed-", 5) != 0 || name[5] < '0' || name[5] > '9')
        return false;
    const char *s = name + 5;
    while (*s >= '0' && *s <= '9')
        s++;
    return *s == '\0' || strcmp(s, ".partial") == 0;
}

/* Refuses a hetsim output found in the folder `dir` (its subfolders, at most `depth` levels
 * down, links not followed) but the check's own seed runs (`top`: `dir` is the check's output
 * directory): once `dir` is a check's output, every place in it is, and no command could write
 * that run, sweep, golden or plot folder again (`check -o X`, X holding a golden X/g, made every
 * later `check --update --golden X/g` "inside a hetsim check directory", exit 2). */
static int holds_output(const char *out, const char *dir, bool top, int depth, sim_err *err)
{
    DIR *d = depth > 0 ? opendir(dir) : NULL;
    int rc = SIM_OK;
    for (struct dirent *e = d != NULL ? readdir(d) : NULL; e != NULL && rc == SIM_OK;
         e = readdir(d)) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0 ||
            (top && seed_name(e->d_name)))
            continue;
        size_t n = strlen(dir) + strlen(e->d_name) + 2;
        char *path = malloc(n);
        struct stat st;
        if (path == NULL) {
            rc = sim_err_set(err, SIM_ENOMEM, NULL, "out of memory");
            break;
        }
        snprintf(path, n, "%s/%s", dir, e->d_name);
        sim_rundir_kind k = lstat(path, &st) == 0 && S_ISDIR(st.st_mode) ? sim_rundir_kind_of(path)
                                                                         : SIM_RUNDIR_NONE;
        if (k != SIM_RUNDIR_NONE)
            rc = sim_err_set(err, SIM_ESCENARIO, NULL,
                             "output directory %s holds %s, a hetsim %s directory: a check's "
                             "output would take it in, and no command could write it there "
                             "again: choose another place or move it out",
                             out, path, sim_rundir_kind_name(k));
        else if (S_ISDIR(st.st_mode))
            rc = holds_output(out, path, false, depth - 1, err);
        free(path);
    }
    if (d != NULL)
        closedir(d);
    return rc;
}

/* The places a check writes, refused before anything runs (the ownership rule,
 * outputs/rundir.h): the JUnit report's file inside no hetsim output and never a directory or a
 * device replaced, nor the scenario file or one of the check's own files; the output
 * directory (its runs OUT/seed-S, check.csv, check.png) inside no run, work directory or
 * golden, and none of them, nor a sweep's directory or a plot's folder, itself, nor holding
 * another hetsim output (but its seed runs) or a file named as its own that no check wrote. */
int ck_check_places(const app_check_options *opt, const char *dir, bool *junit_ok, sim_err *err)
{
    const unsigned within = SIM_RUNDIR_BIT(SIM_RUNDIR_RUN) | SIM_RUNDIR_BIT(SIM_RUNDIR_WORK) |
                            SIM_RUNDIR_BIT(SIM_RUNDIR_GOLDEN) | SIM_RUNDIR_BIT(SIM_RUNDIR_CHECK) |
                            SIM_RUNDIR_POINTS;
    char *place = NULL;
    sim_rundir_write how;
    int rc = opt->junit != NULL
                 ? sim_rundir_check_file("--junit file", opt->junit, &place, &how, err)
                 : SIM_OK;
    if (rc == SIM_OK && place != NULL)
        rc = junit_clash(opt, place, dir, err);
    if (rc == SIM_OK && place != NULL && how == SIM_RUNDIR_REPLACE)
        rc = junit_writable(opt, place, err);
    free(place);
    *junit_ok = rc == SIM_OK; /* no report, not even of this error, where it was refused */
    if (rc == SIM_OK && dir != NULL)
        rc = sim_rundir_check_place("output directory", dir, within,
                                    SIM_RUNDIR_ANY | SIM_RUNDIR_BIT(SIM_RUNDIR_PLOT), NULL, err);
    if (rc == SIM_OK && dir != NULL)
        rc = holds_output(dir, dir, true, 64, err);
    if (rc == SIM_OK && dir != NULL)
        rc = linked_seed(dir, err);
    if (rc == SIM_OK && dir != NULL)
        rc = ck_own_files(dir, err);
    return rc;
}

/* ---- Updates: a golden written beside the old one and swapped in whole ------------------ */

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)ftw;
    return (flag == FTW_DP ? rmdir(path) : unlink(path)) != 0 ? -1 : 0;
}

/* Removes `path` and everything under it (symbolic links are removed, not followed). */
void ck_remove_tree(const char *path)
{
    nftw(path, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

/* True if `name` is a file a seed's run of a golden holds: one its run writes, or its
 * fingerprint (a user's notes.txt there was removed with the old golden, exit 0). */
static bool seed_file(const char *name)
{
    for (size_t i = 0; i < CK_NFINGERPRINT; i++)
        if (strcmp(name, ck_fingerprint_files[i]) == 0)
            return true;
    return strcmp(name, "fingerprint") == 0;
}

/* The first entry of the golden `dir` that an update does not write and would remove with the
 * old golden (a file or a folder of the user's, "seed-notes" too, in a seed's run anything but
 * a regular file it writes, a seeds or golden.json that is no regular file), into bad[size];
 * "" when there is none. */
static void foreign_entry(const char *dir, char *bad, size_t size)
{
    DIR *d = opendir(dir);
    bad[0] = '\0';
    for (struct dirent *e = d != NULL ? readdir(d) : NULL; e != NULL && bad[0] == '\0';
         e = readdir(d)) {
        char path[2 * PATH_TEXT];
        struct stat st;
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
        bool seed = strncmp(e->d_name, "seed-", 5) == 0 && e->d_name[5] != '\0' &&
                    e->d_name[5 + strspn(e->d_name + 5, "0123456789")] == '\0';
        if (lstat(path, &st) != 0 || (seed ? !S_ISDIR(st.st_mode) : !S_ISREG(st.st_mode)) ||
            (!seed && strcmp(e->d_name, "seeds") != 0 && strcmp(e->d_name, "golden.json") != 0)) {
            snprintf(bad, size, "%s", e->d_name);
            break;
        }
        DIR *sd = seed ? opendir(path) : NULL; /* a seed's run holds its files alone */
        for (struct dirent *f = sd != NULL ? readdir(sd) : NULL; f != NULL; f = readdir(sd)) {
            char sub[3 * PATH_TEXT];
            snprintf(sub, sizeof(sub), "%s/%s", path, f->d_name);
            if (strcmp(f->d_name, ".") != 0 && strcmp(f->d_name, "..") != 0 &&
                (!seed_file(f->d_name) || lstat(sub, &st) != 0 || !S_ISREG(st.st_mode))) {
                snprintf(bad, size, "%s/%s", e->d_name, f->d_name);
                break;
            }
        }
        if (sd != NULL)
            closedir(sd);
    }
    if (d != NULL)
        closedir(d);
}

/* Whether an update may replace `dir`: absent, an empty directory, or a golden (it has a
 * seeds file) of nothing but what an update writes. A folder of one's own holding a file
 * named seeds was replaced whole, its files and folders removed (exit 0), and so were a
 * README or a folder of notes kept in a golden. */
int ck_golden_replaceable(const char *dir, sim_err *err)
{
    DIR *d = opendir(dir);
    if (d == NULL && errno == ENOENT)
        return SIM_OK;
    size_t n = 0;
    for (struct dirent *e = d != NULL ? readdir(d) : NULL; e != NULL; e = readdir(d))
        n += strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0;
    if (d != NULL)
        closedir(d);
    if (d != NULL && n == 0)
        return SIM_OK;
    if (d == NULL || !ck_exists(dir, "seeds"))
        return sim_err_set(err, SIM_EINVAL, NULL,
                           "%s: not a golden (no seeds file) and not empty: not replaced", dir);
    char bad[PATH_TEXT];
    foreign_entry(dir, bad, sizeof(bad));
    if (bad[0] != '\0')
        return sim_err_set(err, SIM_EINVAL, NULL,
                           "%s/%s: no file of a hetsim golden (an update writes seeds, golden.json "
                           "and a run of files in each seed-S, and replaces the golden whole): "
                           "move it out of %s, or choose another --golden; not replaced",
                           dir, bad, dir);
    return SIM_OK;
}

/* Moves the complete new golden `work` into place as `golden`: an atomic exchange with the
 * old golden when there is one (the old one, now at `work`, is then removed), a rename
 * otherwise. A process killed at any point leaves `golden` old or new, whole; `work` (the
 * new golden or the old one) is removed by the next update. What the exchange took out is
 * looked at again, as ck_golden_replaceable did before the runs: a folder made at `golden`
 * while the update ran, or a README put into the old golden, was removed with it (exit 0);
 * it is exchanged back, the new golden left in `work`, exit 2. */
int ck_golden_swap(const char *golden, const char *work, sim_err *err)
{
    if (renameat2(AT_FDCWD, work, AT_FDCWD, golden, RENAME_EXCHANGE) == 0) {
        sim_err why;
        if (ck_golden_replaceable(work, &why) == SIM_OK) {
            ck_remove_tree(work);
            return SIM_OK;
        }
        if (renameat2(AT_FDCWD, work, AT_FDCWD, golden, RENAME_EXCHANGE) == 0)
            return sim_err_set(err, SIM_EINVAL, NULL,
                               "%s changed while the update ran and holds what an update does "
                               "not write: not replaced (the new golden is left in %s)",
                               golden, work);
        return sim_err_set(err, SIM_EIO, NULL,
                           "%s changed while the update ran: the new golden is in it, what was "
                           "there is in %s (moving it back failed: %s)",
                           golden, work, strerror(errno));
    }
    if ((errno == ENOENT || errno == EINVAL || errno == ENOSYS) && rename(work, golden) == 0)
        return SIM_OK;
    int rc =
        sim_err_set(err, SIM_EIO, NULL, "cannot move %s to %s: %s", work, golden, strerror(errno));
    ck_remove_tree(work);
    return rc;
}
