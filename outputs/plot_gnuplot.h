/* Running gnuplot as a child process, for outputs/plot.c: not a public header (only outputs/plot.c
 * and outputs/plot_gnuplot.c include it). How gnuplot is run, and what its errors say, is
 * described in outputs/plot.h. */
#ifndef OUTPUTS_PLOT_GNUPLOT_H
#define OUTPUTS_PLOT_GNUPLOT_H

#include "sim/err.h"

/* The descriptor gnuplot draws its figure into, "/dev/fd/3" in its script: the temporary
 * opened by hetsim, never a file gnuplot opens by its name (a link put there would be
 * followed). */
#define SIM_PLOT_GNUPLOT_OUT_FD 3
#define SIM_PLOT_GNUPLOT_OUT    "/dev/fd/3"

/* Runs the executable `gnuplot` (a path, as found on PATH) as `gnuplot -d -` on `input`
 * (variable assignments, then the script), with `out_fd` as its SIM_PLOT_GNUPLOT_OUT_FD, and
 * waits for it. SIGPIPE is blocked meanwhile
 * (gnuplot exiting before it has read the whole script must not kill this process), and a
 * SIGPIPE raised meanwhile is consumed before the mask is restored. SIM_EIO when a pipe,
 * the child or the signal mask cannot be set up, or gnuplot fails: exits other than with
 * status 0, or prints an error even so (a "line N: " message that is no warning, or a line
 * saying "error:"): "gnuplot failed drawing <png>: " and the first error line it printed
 * (`png` only names the figure). Whether the figure is whole is for sim_plot_commit. */
int sim_plot_gnuplot_run(const char *gnuplot, const char *input, int out_fd, const char *png,
                         sim_err *err);

#endif
