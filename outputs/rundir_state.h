/* Internal to outputs/rundir.c and outputs/rundir_path.c (the places outputs name): the
 * helpers both use, defined in rundir_path.c. */
#ifndef SIM_RUNDIR_STATE_H
#define SIM_RUNDIR_STATE_H

#include "sim/err.h"

/* a then b in a new string (malloc'd), or NULL when out of memory. */
char *rundir_concat(const char *a, const char *b);

/* Sets err to "out of memory" (SIM_ENOMEM) and returns its code. */
int rundir_oom(sim_err *err);

#endif
