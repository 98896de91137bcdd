/* Where a plot may write its figures (the ownership rule, outputs/rundir.h and
 * outputs/plot.h): inside no other hetsim output, and over none of a user's files. A folder
 * of figures that is no hetsim output is the plot's once a plot has written it, which
 * SIM_PLOT_MARKER records; before, a file there named as one of the plot's was the user's
 * and was replaced (a convergence.png of one's own, a FIFO, a link's target). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "outputs/output.h"
#include "outputs/plot.h"
#include "outputs/rundir.h"
#include "sim/file.h"

/* True if `name` is the temporary NAME.tmp of a file the plot writes, which the plot makes
 * afresh whatever holds its name (sim_output_tmp_open): in a folder of the user's, a file of
 * theirs so named was removed (exit 0). */
static bool temporary(const char *name, sim_plot_mine mine, const void *ctx)
{
    size_t n = strlen(name);
    if (n <= 4 || strcmp(name + n - 4, ".tmp") != 0)
        return false;
    char *base = strndup(name, n - 4);
    bool yes = base != NULL && mine(base, ctx);
    free(base);
    return yes;
}

/* The plot's files already in `dir`, and their temporaries: each file must be a regular file
 * (a plot replaces those alone), and, unless `own` (the command's run or sweep, or a folder a
 * plot marked), none may be there at all. A `dir` that cannot be listed holds none: an absent one
 * is made by sim_plot_mkdir, which refuses one that is no directory. */
static int claim(const char *dir, bool own, sim_plot_mine mine, const void *ctx, sim_err *err)
{
    char *marker = sim_output_join(dir, SIM_PLOT_MARKER, "");
    DIR *d = marker != NULL ? opendir(dir) : NULL;
    if (marker == NULL)
        return sim_err_set(err, SIM_ENOMEM, NULL, "out of memory");
    struct stat st;
    int rc = SIM_OK;
    if (d != NULL && lstat(marker, &st) == 0) {
        own = true;
        if (!S_ISREG(st.st_mode))
            rc = sim_err_set(err, SIM_ESCENARIO, NULL,
                             "%s is %s, not the mark of a hetsim plot's folder (a plot writes "
                             "a regular file there): remove it",
                             marker, sim_file_kind(st.st_mode));
    }
    for (struct dirent *e; rc == SIM_OK && d != NULL && (e = readdir(d)) != NULL;) {
        bool tmp = temporary(e->d_name, mine, ctx);
        if (!tmp && !mine(e->d_name, ctx))
            continue;
        char *path = sim_output_join(dir, e->d_name, "");
        if (path == NULL)
            rc = sim_err_set(err, SIM_ENOMEM, NULL, "out of memory");
        else if (!tmp && lstat(path, &st) == 0 && !S_ISREG(st.st_mode))
            rc = sim_err_set(err, SIM_ESCENARIO, NULL,
                             "%s is %s, no file of a hetsim plot (a plot writes regular files "
                             "and replaces those alone): remove it",
                             path, sim_file_kind(st.st_mode));
        else if (!own)
            rc = sim_err_set(err, SIM_ESCENARIO, NULL,
                             "%s is no file of a hetsim plot (%s holds no %s a plot wrote), and "
                             "a plot replaces its own files alone: remove it or choose another "
                             "output directory",
                             path, dir, SIM_PLOT_MARKER);
        free(path);
    }
    if (d != NULL)
        closedir(d);
    free(marker);
    return rc;
}

int sim_plot_place(const char *out_dir, const char *own, sim_plot_mine mine, const void *ctx,
                   sim_rundir_lock **lock, sim_err *err)
{
    /* Not inside a check's output (its own, as a run's or a sweep's), but a check's seed run
     * drawn into itself. */
    unsigned within = SIM_RUNDIR_BIT(SIM_RUNDIR_RUN) | SIM_RUNDIR_BIT(SIM_RUNDIR_WORK) |
                      SIM_RUNDIR_BIT(SIM_RUNDIR_GOLDEN) | SIM_RUNDIR_POINTS;
    if (!sim_rundir_same(out_dir, own))
        within |= SIM_RUNDIR_BIT(SIM_RUNDIR_CHECK);
    *lock = NULL;
    int rc = sim_rundir_check_place("output directory", out_dir, within,
                                    SIM_RUNDIR_ANY | SIM_RUNDIR_BIT(SIM_RUNDIR_CHECK), own, err);
    sim_rundir_kind k = rc == SIM_OK ? sim_rundir_kind_of(out_dir) : SIM_RUNDIR_NONE;
    if (rc == SIM_OK)
        rc = claim(out_dir, k != SIM_RUNDIR_NONE, mine, ctx, err);
    if (rc == SIM_OK && (k == SIM_RUNDIR_RUN || k == SIM_RUNDIR_SWEEP))
        rc = sim_rundir_lock_take(out_dir, lock, err);
    return rc;
}

int sim_plot_mkdir(const char *out_dir, sim_err *err)
{
    int rc = sim_output_mkdirs(out_dir, err);
    if (rc != SIM_OK || sim_rundir_kind_of(out_dir) != SIM_RUNDIR_NONE)
        return rc;
    char *marker = sim_output_join(out_dir, SIM_PLOT_MARKER, "");
    int fd = marker != NULL
                 ? open(marker, O_WRONLY | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0666)
                 : -1;
    if (marker == NULL)
        rc = sim_err_set(err, SIM_ENOMEM, NULL, "out of memory");
    else if (fd < 0)
        rc = sim_err_set(err, SIM_EIO, NULL, "cannot write %s: %s", marker, strerror(errno));
    if (fd >= 0)
        close(fd);
    free(marker);
    return rc;
}
