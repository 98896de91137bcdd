/* Gradients and evaluations computed by a pool of threads while the simulation goes on
 * (issue 28), with the bits of one thread.
 *
 * When an iteration starts (sim_ctx_compute), its minibatch is drawn on the simulation's
 * thread, in the order drawn with one thread, and its gradient becomes a job of the run's pool
 * (sim/pool.h) reading the worker's parameter block as it is then, pinned (train_pin: a write
 * to the worker before the join gets the worker a copy, so the job's input never changes).
 * The job is joined when its result is first needed: at its SIM_EV_COMPUTE event, when the
 * protocol reads the gradient (sim_ctx_grad, sim_ctx_take_grad), when the worker fails, at an
 * evaluation (for the training loss), at the end. Only the join hands the result to the
 * simulation, and the simulation alone decides when it joins, so every output is the same
 * with any number of threads:
 *   - the minibatch losses are summed in the order the iterations started (a ring of them,
 *     retired in order once joined; a full ring joins its oldest);
 *   - the divergence check (train_check_loss) runs at the join, in each worker's iteration
 *     order, and its error stops the run at the end of the event that joined;
 *   - blocks that only pins hold (a worker wrote after its gradient started: the write took
 *     a copy) are at most one per thread: past that bound, a write joins the gradients
 *     reading the worker's block first instead.
 * An evaluation's forward passes are jobs too, summed in pass order (jobs_evaluate); with
 * several threads and no stop or observer that needs its value at once, the simulation goes
 * on while they run, and its row is written later, in order (runtime/outputs.c).
 *
 * Internal to runtime/: run.c, ctx_calls.c and outputs.c call it.
 */
#ifndef RUNTIME_JOBS_H
#define RUNTIME_JOBS_H

#include <stddef.h>
#include <stdint.h>

#include "runtime/state.h"

/* Starts the pool with `threads` threads (1: computed in place, still joined as above) for a
 * run with a real model; a model without data (timing-only, averaging-only) keeps none. SIM_ENOMEM,
 * SIM_EIO. */
int jobs_init(sim_ctx *ctx, unsigned threads, sim_err *err);

/* Joins every job (their results dropped) and stops the pool. */
void jobs_fini(sim_ctx *ctx);

/* Whether gradients go through the pool (jobs_init started one). */
bool jobs_active(const sim_ctx *ctx);

/* Draws worker w's minibatch and submits its gradient, needed at simulated time `due_ns`.
 * Worker w has no gradient in flight. */
void jobs_submit(sim_ctx *ctx, uint32_t w, sim_time due_ns);

/* Joins worker w's gradient if in flight; returns its check's error (also kept in the context
 * for the end of the event, ctx->job_rc). */
int jobs_join(sim_ctx *ctx, uint32_t w, sim_err *err);

/* Joins every gradient in flight, in the order they started; the first error. */
int jobs_drain(sim_ctx *ctx, sim_err *err);

/* Worker w's parameters are about to be written (see the bound on copies above). */
void jobs_before_write(sim_ctx *ctx, uint32_t w);

/* train_evaluate's results with the forward passes spread over the pool. */
void jobs_evaluate(sim_ctx *ctx, const float *params, size_t samples, double *loss,
                   double *accuracy);

/* jobs_evaluate in two halves: submits the forward passes (`params` must stay unchanged until
 * the join), then joins them and sums them in pass order. */
void jobs_eval_start(sim_ctx *ctx, const float *params, size_t samples);
void jobs_eval_join(sim_ctx *ctx, double *loss, double *accuracy);

/* Pieces of a mean per thread (jobs_mean): more than one, so that a helper busy with a
 * gradient leaves its share to the others. */
#define JOBS_MEAN_PIECES 2

/* The smallest mean (inputs times floats) spread over the pool: below it, waking a helper
 * costs more than it saves. The environment's HETSIM_MEAN_MIN_FLOATS (a test hook, a positive
 * integer) replaces it, so that a small model takes the split path (outputs are the same
 * either way). */
#define JOBS_MEAN_MIN_FLOATS (UINT64_C(1) << 20)

/* sim_tensor_mean(out, xs, k, n), bit for bit, in pieces of whole blocks
 * (sim_tensor_mean_range) run by the pool's threads at once when the pool has several and the
 * mean is large enough; otherwise on the calling thread. Returns once every piece is done. */
void jobs_mean(sim_ctx *ctx, float *restrict out, const float *const *xs, size_t k, size_t n);

/* Whether an evaluation may go on while the simulation does: a pool of several threads, and
 * nothing that reads its result at its instant (a target accuracy, an observer). */
bool jobs_eval_async(const sim_ctx *ctx);

/* Joins the oldest gradients until the pending evaluation owes no loss (ctx->eval_owed). */
int jobs_settle(sim_ctx *ctx, sim_err *err);

/* Extra bytes `threads` threads take at most: workspaces (a model server each for a served
 * model), and a pinned copy per thread. */
uint64_t jobs_memory(const train_config *tc, unsigned threads);

#endif
