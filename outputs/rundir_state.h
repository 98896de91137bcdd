/* Internal to outputs/rundir.c, outputs/rundir_path.c (the places outputs name) and
 * outputs/rundir_files.c (the files a run directory holds): the helpers they share, defined in
 * rundir_path.c but rundir_foreign. */
#ifndef SIM_RUNDIR_STATE_H
#define SIM_RUNDIR_STATE_H

#include <stdbool.h>
#include <stddef.h>

#include "sim/err.h"

/* a then b in a new string (malloc'd), or NULL when out of memory. */
char *rundir_concat(const char *a, const char *b);

/* Sets err to "out of memory" (SIM_ENOMEM) and returns its code. */
int rundir_oom(sim_err *err);

/* True if the run directory (or work directory) `dir` holds an entry that no run, plot of it or
 * check writes there: a subdirectory, a file of the user's (a notes.txt kept in a run was
 * removed with it when a run replaced it), or a link, FIFO or device named as a run's file (a
 * run writes regular files alone), named into name[size] ("subdirectory NAME", "file NAME",
 * "FIFO NAME", "symbolic link NAME"). Defined in rundir_files.c. */
bool rundir_foreign(const char *dir, char *name, size_t size);

#endif
