/* Figures of finished runs: convergence, throughput and breakdown, as PNG, PDF or SVG.
 *
 * sim_plot_runs reads the run directories that `hetsim run` wrote (metrics.csv, workers.csv
 * and, for the labels, summary.json) and has gnuplot draw three figures that compare the
 * runs: test accuracy and loss against simulated time, throughput against simulated time,
 * and per-worker compute / communication / waiting / down time (one panel per run in the
 * single breakdown.png). The gnuplot scripts are the .gp files in plots/, compiled into the
 * binary by plots/embed.py, so the binary does not need the source tree. The scripts
 * compute nothing; this module checks the inputs and passes paths, labels and layout hints.
 *
 * gnuplot runs as a child process, found on PATH, as `gnuplot -d -` (-d: no init files);
 * its standard input gets a line of variable assignments and then the script, its standard
 * output goes to /dev/null and its standard error is kept (bounded) for the error message.
 *
 * gnuplot ignores its own write errors: on a full disk or past a file-size limit it exits 0
 * with the figure cut short. So each figure is written as "<name>.tmp" in the output
 * directory and gets its name "<name>" only once it is known whole (sim_plot_commit):
 * gnuplot exited 0 and printed no error; the file is not empty and as long when read back
 * as when it was measured; it ends as its format ends (sim_plot_whole: a PNG's chunks up to
 * an IEND chunk, a PDF's %%EOF, an SVG's </svg>); and fsync succeeded. Otherwise the
 * temporary is removed and the figure fails with SIM_EIO naming it; figures finished
 * before the failure stay. Nothing is printed.
 */
#ifndef OUTPUTS_PLOT_H
#define OUTPUTS_PLOT_H

#include <stdbool.h>
#include <stddef.h>

#include "outputs/rundir.h"
#include "sim/err.h"

/* Figure file formats, told by the file name's extension. */
typedef enum sim_plot_format {
    SIM_PLOT_UNKNOWN, /* no extension below */
    SIM_PLOT_PNG,     /* ".png" */
    SIM_PLOT_PDF,     /* ".pdf" */
    SIM_PLOT_SVG,     /* ".svg" */
} sim_plot_format;

/* At most this many runs per figure. The scripts have eight colours and cycle them with
 * point markers or dash patterns, so lines stay apart past eight; the breakdown figure has a
 * panel per run, which past this many would be too small to read. */
#define SIM_PLOT_MAX_RUNS 64

/* Run labels (from summary.json's "name") are cut to this many bytes before a "-2" suffix. */
#define SIM_PLOT_LABEL_MAX 40

/* The embedded scripts, defined in a source file that plots/embed.py generates from
 * plots/convergence.gp, plots/throughput.gp and plots/breakdown.gp: names[i] is the file's
 * base name ("convergence.gp") and scripts[i] its full text. */
extern const char *const sim_plot_script_names[];
extern const char *const sim_plot_scripts[];
extern const size_t sim_plot_nscripts;

/* The text of the script `name` ("convergence.gp"): the user's copy read by
 * sim_plot_set_style, else the embedded one; NULL if there is none. */
const char *sim_plot_script(const char *name);

/* Reads the user's copies of the scripts from `dir` (files named as the embedded ones; any
 * subset), used from then on by every figure of the process in place of the embedded ones;
 * *found receives how many were read. SIM_EINVAL: `dir` is not a directory or holds none of
 * the scripts; SIM_EIO: one cannot be read; SIM_ENOMEM. A process-wide setting, made once by
 * the command line (`--style DIR`) before anything is drawn; the copies live until exit. */
int sim_plot_set_style(const char *dir, size_t *found, sim_err *err);

/* Draws convergence.EXT, throughput.EXT and breakdown.EXT, EXT the extension of `fmt` (png,
 * pdf or svg; SIM_PLOT_UNKNOWN draws PNG), for the `n` run directories
 * `dirs` into `out_dir`, which is created (with its parents) if missing. Run i is labelled
 * `labels[i]` when `labels` and it are not NULL (the caller's: a sweep point's overrides),
 * else by the "name" line of its summary.json (without summary.json: the directory's
 * base name); characters gnuplot cannot take in a label become '_', labels are cut to
 * SIM_PLOT_LABEL_MAX bytes, and a repeated label gets "-2", "-3", ...
 *
 * Everything is checked before gnuplot starts. SIM_EINVAL: no runs or more than
 * SIM_PLOT_MAX_RUNS; a directory (or `out_dir`) containing a character that cannot be
 * passed inside a gnuplot string (only letters, digits, bytes >= 0x80 and / . _ - + , : = ~
 * are allowed); a missing or unreadable metrics.csv or workers.csv (named in the message);
 * a CSV without a needed column or without a single row after its header (a run always
 * writes the row at time 0, so a bare header means a broken run, not an empty plot).
 * SIM_EIO: gnuplot is not on PATH ("gnuplot not found on PATH (install the gnuplot-nox
 * package)"); the output directory cannot be created; gnuplot fails or prints an error
 * ("gnuplot failed drawing convergence.png: " and the first error line it printed); a
 * figure is not whole or cannot be synced or renamed (sim_plot_commit, naming the file).
 * SIM_ENOMEM when out of memory. SIM_ESCENARIO (nothing written) for an `out_dir` the plot
 * does not own (sim_plot_place: the one run drawn is its own, locked before it is read).
 * A run directory replaced while it is read or drawn (each is held open, and compared with
 * the one at its path after the figures) is drawn again, up to 10 times, then SIM_EIO
 * ("RUN was replaced by another hetsim each of the 10 times it was drawn"). Runs without
 * accuracy values (timing-only models) are fine: convergence.png then says that no accuracy
 * was recorded. */
int sim_plot_runs(const char *const *dirs, const char *const *labels, size_t n, const char *out_dir,
                  sim_plot_format fmt, sim_err *err);

/* The mark of a folder of figures a plot wrote (outputs/plot_place.c): an empty file, by which
 * such a folder is told (outputs/rundir.h's SIM_RUNDIR_PLOT). */
#define SIM_PLOT_MARKER SIM_RUNDIR_PLOT_MARKER

/* True if `name` is a file the plot writes into its output directory (a figure or the data
 * it draws; not a temporary NAME.tmp, made afresh whatever holds its name, which
 * sim_plot_place claims with its file); `ctx` is the caller's. */
typedef bool (*sim_plot_mine)(const char *name, const void *ctx);

/* The ownership rule for figures (outputs/rundir.h): `out_dir` lies inside no run, work
 * directory or golden, and is no hetsim output but `own` (the command's: the only run a plot
 * draws, the sweep plot --by draws; NULL for none), links followed. A file in it that `mine`
 * names must be a regular file, and when `out_dir` is no hetsim output, one that a plot wrote:
 * the folder holds SIM_PLOT_MARKER, which sim_plot_mkdir puts there (a user's own
 * convergence.png in a folder of theirs was replaced). When it is a run's or a sweep's
 * directory (its own), its lock is taken into *lock, so that no run or sweep replaces it
 * meanwhile (sim_rundir_unlock once drawn); *lock is NULL otherwise. SIM_ESCENARIO (nothing
 * changed: the directory or a file in it is not the command's, or another hetsim writes it),
 * SIM_EIO, SIM_ENOMEM. */
int sim_plot_place(const char *out_dir, const char *own, sim_plot_mine mine, const void *ctx,
                   sim_rundir_lock **lock, sim_err *err);

/* Makes `out_dir` with its parents (sim_output_mkdirs) and, when it is no hetsim output,
 * marks it a folder of figures (SIM_PLOT_MARKER). SIM_EIO naming what cannot be made. */
int sim_plot_mkdir(const char *out_dir, sim_err *err);

/* Draws out_dir/png (created with its parents if missing) with the embedded script
 * `script` ("bands.gp"), whose input is the gnuplot assignments `vars` ("ins='a.csv';
 * titles='x'"), then out='<png>.tmp' and fmt (png, pdf or svg, from `png`'s extension: the
 * script picks its terminal by it), then the script, and commits it (sim_plot_commit):
 * for figures whose data the caller has prepared (sweeps, checks). Every path inside `vars`
 * must pass sim_plot_path_ok. Errors as sim_plot_runs (SIM_EINVAL for a bad out_dir or a
 * `png` of no known format, SIM_EIO, SIM_ENOMEM). */
int sim_plot_draw(const char *script, const char *vars, const char *out_dir, const char *png,
                  sim_err *err);

/* The format of the figure file `name` ("convergence.png") by its extension (lower case),
 * or SIM_PLOT_UNKNOWN. */
sim_plot_format sim_plot_format_of(const char *name);

/* True if the `n` bytes `data` are a whole figure in format `fmt`, as far as its structure
 * shows. PNG: the 8-byte signature, then chunks whose lengths fit and whose CRCs match, the
 * last an IEND chunk ending exactly at the end. PDF: "%PDF-" at the start, "%%EOF" at the
 * end (then at most blanks and line ends). SVG: "<?xml" or "<svg" at the start (after an
 * optional UTF-8 byte order mark and blanks), "</svg>" at the end (then at most blanks).
 * Otherwise false, with *why (if not NULL) set to a static phrase saying what is missing
 * ("no IEND chunk at the end"). SIM_PLOT_UNKNOWN is never whole. */
bool sim_plot_whole(sim_plot_format fmt, const unsigned char *data, size_t n, const char **why);

/* Gives the figure that gnuplot wrote to `tmp` its name `final` (in the same directory)
 * once it is whole: not empty, the same size when read back as when measured, whole by
 * sim_plot_whole for the format of `final`'s extension, and fsync'd; then renames it.
 * SIM_EIO naming `final` (and what is wrong: "gnuplot wrote nothing", "cut short at N bytes,
 * no IEND chunk at the end", the fsync or rename error) or SIM_ENOMEM, after removing
 * `tmp`; SIM_EINVAL for a `final` of no known format. */
int sim_plot_commit(const char *tmp, const char *final, sim_err *err);

/* 0 if `path` can be passed inside a gnuplot string (see sim_plot_runs), else SIM_EINVAL
 * naming it as `what`. */
int sim_plot_path_ok(const char *what, const char *path, sim_err *err);

/* 0 if gnuplot is on PATH, else SIM_EIO "gnuplot not found on PATH (install the gnuplot-nox
 * package)": lets a run that will plot fail before it simulates, not after. */
int sim_plot_available(sim_err *err);

#endif
