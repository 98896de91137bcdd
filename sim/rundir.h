/* Run directories that appear whole or not at all.
 *
 * A run writes into a work directory beside its run directory D, named "D.partial" and
 * marked as hetsim's by a file ".hetsim-partial" created first. Only when every file is
 * complete (plots included) does sim_rundir_commit move it into place as D: with
 * renameat2(RENAME_EXCHANGE) when D already holds a previous run (the swap is atomic and the
 * old run is then removed), by rename(2) otherwise. A failed run removes its work directory
 * (sim_rundir_abort); a killed one leaves only "D.partial", which the next run into D
 * removes. D itself is therefore always absent, a previous complete run, or the new complete
 * run, never a mix.
 *
 * sim_rundir_begin refuses a D that exists and is neither empty nor a previous run of
 * hetsim (recognised by its run.json), and a "D.partial" without hetsim's marker: nothing
 * the user made is ever removed. One run at a time may write into a given D.
 */
#ifndef SIM_RUNDIR_H
#define SIM_RUNDIR_H

#include "sim/err.h"

/* The marker file of a work directory. */
#define SIM_RUNDIR_MARKER ".hetsim-partial"

/* Checks `dir` as above, removes a work directory a killed run left there, creates the
 * missing parents of `dir` and a fresh marked work directory, and returns its malloc'd
 * path in *work. Errors: SIM_ESCENARIO (a directory that must not be replaced: nothing was
 * changed), SIM_EIO, SIM_ENOMEM; the message names the directory. */
int sim_rundir_begin(const char *dir, char **work, sim_err *err);

/* Moves the complete work directory into place as `dir`, replacing a previous run whole,
 * and removes the marker first. On failure the work directory is removed and `dir` is as it
 * was. Frees `work` either way. */
int sim_rundir_commit(const char *dir, char *work, sim_err *err);

/* Removes the work directory and everything in it, then frees `work`. NULL is a no-op. */
void sim_rundir_abort(char *work);

#endif
