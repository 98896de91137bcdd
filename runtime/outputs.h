/* Evaluation and the output files of a run: metrics.csv rows at every evaluation, then
 * workers.csv, run.json and summary.json at the end, each written atomically (sim_file).
 */
#ifndef RUNTIME_OUTPUTS_H
#define RUNTIME_OUTPUTS_H

#include "runtime/state.h"
#include "runtime/summary.h"
#include "sim/engine.h"
#include "sim/err.h"

/* Evaluates now and writes a metrics.csv row; may stop the run (target accuracy). With a
 * pool of several threads and nothing that needs the result at once (runtime/jobs.h), the
 * test set is scored while the simulation goes on and the row is written by the next
 * evaluation or sim_run_eval_finish, in order. Returns a gradient's error (its join). */
int sim_run_evaluate(sim_ctx *ctx, sim_time now, sim_err *err);

/* Writes the row of an evaluation still being scored, if any; a gradient's error. */
int sim_run_eval_finish(sim_ctx *ctx, sim_err *err);

/* The variance across live workers' parameters, mean over coordinates (the consensus
 * distance over the parameter count); NaN when timing-only or nobody is up. */
double sim_run_variance(sim_ctx *ctx);

/* Creates the run directory and opens metrics.csv (and events.csv). */
int sim_run_open_outputs(sim_ctx *ctx, const char *dir, sim_err *err);

/* Commits metrics.csv and events.csv, then writes workers.csv, run.json, summary.json. */
int sim_run_write_outputs(sim_ctx *ctx, const char *dir, const sim_run_summary *sum, sim_err *err);

#endif
