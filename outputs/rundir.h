/* Run directories that appear whole or not at all, one writer at a time.
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
 * One writer at a time: sim_rundir_begin takes the lock of D (sim_rundir_lock, the file
 * "D.lock" beside D) before it looks at D or "D.partial", and commit or abort releases it,
 * so a second run into D is refused while the first one writes, and changes nothing. Sweeps
 * and golden updates lock their directories the same way.
 *
 * sim_rundir_begin refuses (SIM_ESCENARIO, nothing changed):
 * - a D inside another hetsim run directory or work directory (any ancestor): a run
 *   directory holds only files, and is replaced whole;
 * - a D that exists and is neither empty nor a previous run of hetsim (recognised by its
 *   run.json), or a previous run that holds a subdirectory or a file that no run, plot of it
 *   or check writes there (not hetsim's: replacing the run would have to remove it);
 * - a "D.partial" without hetsim's marker or run.json, or holding such an entry.
 * Nothing the user made is ever removed, and a removal never stops half-way on a
 * subdirectory. A run directory's files are removed with run.json and the marker last, so
 * one whose removal failed is still recognised as hetsim's by the next run.
 *
 * The ownership rule of every command lives here: no command writes inside another hetsim
 * output or into one it does not own (sim_rundir_check_place, for a directory: a place equal
 * to a hetsim output counts as inside it unless it is the command's own), nor replaces a file
 * it does not own (sim_rundir_check_file, for a file the user names). An output named by a
 * symbolic link is its target, written whole (sim_rundir_follow).
 */
#ifndef OUTPUTS_RUNDIR_H
#define OUTPUTS_RUNDIR_H

#include <stdbool.h>

#include "sim/err.h"

/* The marker file of a work directory. */
#define SIM_RUNDIR_MARKER        ".hetsim-partial"
/* The marker file of a golden in the making: `check --update`'s work directory GOLDEN.partial
 * (app/check.c), a golden to every command (a run written into a killed update's was removed
 * with it by the next update). */
#define SIM_RUNDIR_GOLDEN_MARKER ".hetsim-golden-partial"
/* The marker file of a sweep's directory (app/sweep.c). */
#define SIM_RUNDIR_SWEEP_MARKER  ".hetsim-sweep"
/* The header of a check's check.csv (app/check_report.c writes it), by which a check's output
 * directory is told. */
#define SIM_RUNDIR_CHECK_HEADER \
    "i,statistic,curve,golden_mean,golden_sd,run_mean,half_width,floor,z,ok"
/* The mark of a folder of figures a plot wrote (outputs/plot_place.c): an empty file. */
#define SIM_RUNDIR_PLOT_MARKER ".hetsim-plot"

/* What kind of hetsim output a directory is. */
typedef enum sim_rundir_kind {
    SIM_RUNDIR_NONE = 0,   /* absent, not a directory, or not hetsim's */
    SIM_RUNDIR_RUN = 1,    /* a run directory: a run.json of hetsim */
    SIM_RUNDIR_WORK = 2,   /* a work directory: the marker ".hetsim-partial" */
    SIM_RUNDIR_SWEEP = 3,  /* a sweep's: ".hetsim-sweep", or an index.csv of hetsim */
    SIM_RUNDIR_GOLDEN = 4, /* a golden of `hetsim check`: "seeds", "seed-S/fingerprint", or
                              one in the making (SIM_RUNDIR_GOLDEN_MARKER) */
    SIM_RUNDIR_CHECK = 5,  /* a check's output (-o): a check.csv of hetsim beside its seed runs */
    SIM_RUNDIR_PLOT = 6,   /* a folder of a plot's figures: SIM_RUNDIR_PLOT_MARKER, no other kind */
} sim_rundir_kind;

/* A bit of a kind, for the masks of sim_rundir_check_within. */
#define SIM_RUNDIR_BIT(kind) (1u << (kind))
/* A bit of those masks that is no kind: a command that may write a folder of its own in a
 * sweep's directory (plot -o, check -o) names it, so that the folder is not named as one of the
 * sweep's points (KEY=VALUE,...,seed=S): the sweep would fail that point in every later run. */
#define SIM_RUNDIR_POINTS    (1u << 7)

/* A held lock of an output directory (opaque). */
typedef struct sim_rundir_lock sim_rundir_lock;

/* A run directory in the making (opaque): its lock and its work directory. */
typedef struct sim_rundir sim_rundir;

/* The kind of `dir`, by the files above. */
sim_rundir_kind sim_rundir_kind_of(const char *dir);

/* A one-word name of a kind: "run", "work", "sweep", "golden", "check", "plot", or "" for
 * none. */
const char *sim_rundir_kind_name(sim_rundir_kind kind);

/* Every kind but a check's output and a plot's folder, for the masks below: a check replaces
 * its own output directory as a run does, and the commands that must never write inside one
 * name its bit (run, sweep, plot, check's -o below another check's); a plot's folder holds
 * figures that only a plot replaces, so a check's -o (its bit) and a --junit report are refused
 * there, while any output may go into a folder of its own in it. */
#define SIM_RUNDIR_ANY                                                  \
    (SIM_RUNDIR_BIT(SIM_RUNDIR_RUN) | SIM_RUNDIR_BIT(SIM_RUNDIR_WORK) | \
     SIM_RUNDIR_BIT(SIM_RUNDIR_SWEEP) | SIM_RUNDIR_BIT(SIM_RUNDIR_GOLDEN))

/* The place `dir` names, resolved lexically and through the file system, the one way every
 * output path compared with a hetsim output is taken: `dir` cleaned (sim_file_clean_path,
 * sim/file.h), then, when it holds "..", its part up to the last ".." replaced by that folder's
 * real path (the kernel's meaning: "A/.." is A's parent, never a place inside A; after a link, the
 * parent of its target), malloc'd into *out; a last component that is a link is kept. SIM_ESCENARIO
 * for an empty name, a ".." after a folder that does not exist yet (see sim_rundir_follow) or one
 * that cannot be resolved ("file/.."), SIM_ENOMEM. */
int sim_rundir_resolve(const char *dir, char **out, sim_err *err);

/* The path an output `dir` stands for: `dir` resolved (sim_rundir_resolve), or, when it is a
 * symbolic link, its target, followed to the end (a relative target is taken from the link's
 * folder; the last target need not exist), malloc'd into *out; a folder of the path that is
 * a link to nothing yet is replaced by where it leads, followed the same way ("ext/LINK/x",
 * LINK -> ../g/new, is "g/new/x": the checks saw only "ext", and writing made the target).
 * An output named by a link is written as its target whole: the target's lock, work directory
 * and rename, never the link itself (which stays, pointing to the new output). SIM_ESCENARIO
 * for a link that cannot be read or more than 40 links in all, an empty name, or a ".." after
 * a folder that does not exist yet (once made, "new/../golden" would be "golden": no check
 * could see that place), SIM_ENOMEM. */
int sim_rundir_follow(const char *dir, char **out, sim_err *err);

/* True when a and b name one existing directory or file (links followed); false when either
 * is NULL. */
bool sim_rundir_same(const char *a, const char *b);

/* The ownership rule: no command writes inside another hetsim output or into one it does not
 * own. Refuses the place `dir` (its link followed, sim_rundir_follow), named `what` in the
 * message ("output directory", "--junit file"), when one of its ancestors (the existing ones,
 * symbolic links resolved) is of a kind whose bit is in `within`, or when `dir` itself is a
 * hetsim output of a kind in `equal` and is not `own` (the command's own output: the run a
 * plot draws, the sweep plot --by draws; NULL for none; compared as directories, links
 * followed), or when it is named like a work directory or a lock ("X.partial", "X.lock") and
 * is not `own`, or holds ".." after a folder that does not exist (sim_rundir_follow), or
 * exists and is no directory (a file, a FIFO: bad usage, where mkdir's failure was a failed
 * write), or lies under a file that is no directory (FILE/x: its nearest existing ancestor
 * is no directory, named with its type). Errors:
 * SIM_ESCENARIO naming `dir` (or its target), the hetsim directory and its kind; SIM_ENOMEM.
 * Changes nothing. */
int sim_rundir_check_place(const char *what, const char *dir, unsigned within, unsigned equal,
                           const char *own, sim_err *err);

/* sim_rundir_check_place("output directory", dir, kinds, 0, NULL, err): the ancestors only. */
int sim_rundir_check_within(const char *dir, unsigned kinds, sim_err *err);

/* How a file the user named is written (sim_rundir_check_file). */
typedef enum sim_rundir_write {
    SIM_RUNDIR_REPLACE, /* a temporary beside it renamed over it (absent or a regular file) */
    SIM_RUNDIR_THROUGH, /* opened and written, never replaced (a FIFO, a character device) */
} sim_rundir_write;

/* The ownership rule for a file a command writes where the user names it (`check --junit
 * FILE`): FILE's symbolic links are followed (sim_rundir_follow: a link's target is written,
 * the link stays), and the target is refused, nothing changed, when it lies inside any hetsim
 * output (a run, a work directory, a sweep's, a golden: their files are hetsim's own, and
 * a run or a golden is replaced whole) or directly in a plot's folder (its figures), is named like
 * a work directory or a lock
 * ("X.partial", "X.lock": a file there stops every later run into X), or is a directory (or a name
 * ending in '/', which was written as a file without it), a block device or a socket. A regular or
 * absent file is replaced whole (SIM_RUNDIR_REPLACE), a FIFO or a character device
 * (/dev/null, a terminal), or the regular file the command's standard output or error goes
 * to (sim_file_std_stream), written through (SIM_RUNDIR_THROUGH), never replaced. *path
 * receives where to write (malloc'd), *how how. Errors: SIM_ESCENARIO naming `what` and the
 * file (and the hetsim directory), SIM_ENOMEM. */
int sim_rundir_check_file(const char *what, const char *file, char **path, sim_rundir_write *how,
                          sim_err *err);

/* Creates the missing parents of `dir` (its link followed: sim_rundir_follow), then takes the
 * lock of `dir`: an exclusive flock on the file "DIR.lock" beside it, which holds the
 * holder's pid (a DIR.lock that is no plain file of one link holding a pid or nothing is not
 * hetsim's, and refused). Does not wait: when another
 * process holds it, fails with SIM_ESCENARIO naming `dir` and that process's pid, having
 * changed nothing. The lock file is removed by sim_rundir_unlock (a lock found on a file
 * already unlinked is taken again on the new one, so that two holders never coexist); a
 * killed holder's lock is released by the kernel and its file reused. Errors: SIM_ESCENARIO,
 * SIM_EIO, SIM_ENOMEM. */
int sim_rundir_lock_take(const char *dir, sim_rundir_lock **lock, sim_err *err);

/* Removes the lock file and releases the lock. NULL is a no-op. */
void sim_rundir_unlock(sim_rundir_lock *lock);

/* Whether another process holds the lock of `dir` (its link followed, as sim_rundir_lock_take
 * takes it): a run, sweep or update writing it now. Its pid goes into *pid (0 when the file
 * does not say). Creates and changes nothing, so a reader may ask about a place it cannot
 * write; a lock file left by a killed holder is no lock. Only a file that names a live process
 * (or none yet) is probed with a shared flock, for as long as the probe takes. */
bool sim_rundir_locked(const char *dir, long *pid);

/* Follows `dir`'s link (sim_rundir_follow: a run into a link to a directory replaces the
 * target's run, the link kept), takes the lock of `dir`, checks `dir` and its ancestors as
 * above, removes a work directory a killed run left there (never through a link: a
 * "DIR.partial" that is one is refused), creates a fresh marked work directory, and returns
 * the handle in *rd. Errors: SIM_ESCENARIO (a directory that must not be replaced or is being
 * written by another process: nothing was changed), SIM_EIO, SIM_ENOMEM; the message names
 * the directory. */
int sim_rundir_begin(const char *dir, sim_rundir **rd, sim_err *err);

/* The work directory to write into. */
const char *sim_rundir_work(const sim_rundir *rd);

/* Moves the complete work directory into place as `dir`, replacing a previous run whole,
 * and removes the marker first. On failure the work directory is removed and `dir` is as it
 * was. Releases the lock and frees `rd` either way. */
int sim_rundir_commit(sim_rundir *rd, sim_err *err);

/* Removes the work directory and everything in it, releases the lock, frees `rd`. NULL is
 * a no-op. */
void sim_rundir_abort(sim_rundir *rd);

#endif
