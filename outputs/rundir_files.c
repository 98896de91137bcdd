/* The files a run directory holds (see outputs/rundir.h): what a run, a plot of it and a
 * check's seed run write there, told from what is the user's; split from rundir.c, which
 * replaces a previous run whole. */
#include <dirent.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "outputs/rundir.h"
#include "outputs/rundir_state.h"
#include "sim/file.h"

/* True if `name` (its NAME.tmp too) is a file that hetsim writes in a run directory: the
 * run's outputs (runtime/outputs.c) and work marker, a check's fingerprint of a seed run, the
 * figures `hetsim plot RUN` draws there in any format. */
static bool run_file(const char *name)
{
    static const char *const files[] = { "run.json",       "metrics.csv", "workers.csv",
                                         "summary.json",   "events.csv",  "fingerprint",
                                         SIM_RUNDIR_MARKER };
    static const char *const figures[] = { "convergence", "throughput", "breakdown" };
    static const char *const formats[] = { "png", "pdf", "svg" };
    char base[256];
    size_t n = strlen(name);
    if (n >= sizeof(base))
        return false;
    memcpy(base, name, n + 1);
    if (n > 4 && strcmp(base + n - 4, ".tmp") == 0)
        base[n - 4] = '\0';
    for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++)
        if (strcmp(base, files[i]) == 0)
            return true;
    for (size_t i = 0; i < sizeof(figures) / sizeof(figures[0]); i++)
        for (size_t k = 0; k < sizeof(formats) / sizeof(formats[0]); k++) {
            char fig[64];
            snprintf(fig, sizeof(fig), "%s.%s", figures[i], formats[k]);
            if (strcmp(base, fig) == 0)
                return true;
        }
    return false;
}

bool rundir_foreign(const char *dir, char *name, size_t size)
{
    DIR *d = opendir(dir);
    if (d == NULL)
        return false;
    bool yes = false;
    for (struct dirent *e = readdir(d); e != NULL && !yes; e = readdir(d)) {
        struct stat st;
        /* hetsim writes regular files alone: a link, a FIFO or a device named as one of its
         * files is the user's (removed with the run, exit 0, as a golden's seed run refused);
         * a temporary NAME.tmp is a name only, made afresh whatever holds it (outputs/output.h) */
        size_t n = strlen(e->d_name);
        bool tmp = n > 4 && strcmp(e->d_name + n - 4, ".tmp") == 0;
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0 ||
            fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 ||
            (!S_ISDIR(st.st_mode) && (S_ISREG(st.st_mode) || tmp) && run_file(e->d_name)))
            continue;
        snprintf(name, size, "%s %s",
                 S_ISDIR(st.st_mode)   ? "subdirectory"
                 : S_ISREG(st.st_mode) ? "file"
                                       : sim_file_kind(st.st_mode) + 2, /* its "a " dropped */
                 e->d_name);
        yes = true;
    }
    closedir(d);
    return yes;
}
