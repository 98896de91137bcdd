/* The context: the only way a protocol reaches the simulation.
 *
 * A protocol sees time, its workers (up or down, their random streams), and three actions:
 * start an iteration on a worker (the runner computes its duration from the cluster model
 * and later hands back SIM_EV_COMPUTED), send a message (the network delivers SIM_EV_MSG),
 * and set timers (events of the protocol's own kinds, from SIM_EV_USER on). It reports
 * progress by counting finished iterations.
 *
 * Events a protocol receives in on_event:
 *   SIM_EV_COMPUTED     dst = worker; arg[0] = the tag given to sim_ctx_compute,
 *                       arg[1] = the worker's iteration index k (from 0)
 *   SIM_EV_MSG          src, dst = hosts; arg[0] = tag, arg[1] = bytes, arg[2] = the
 *                       sender's arg, arg[3] = payload handle (SIM_NET_NO_PAYLOAD if none)
 *   SIM_EV_WORKER_DOWN  dst = worker that failed (its computation, if any, is lost, and
 *                       its messages in flight are dropped)
 *   SIM_EV_WORKER_UP    dst = worker that recovered (idle until the protocol acts)
 *   SIM_EV_USER + i     the protocol's own timers, as scheduled
 *
 * The time breakdown of workers.csv is kept by the runner, not by protocols: a worker is
 * computing while an iteration runs on it; otherwise communicating while any message from
 * or to it is in flight; otherwise waiting (while up) or down.
 */
#ifndef SIM_CTX_H
#define SIM_CTX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <gsl/gsl_rng.h>

#include "sim/engine.h"
#include "sim/err.h"
#include "sim/scenario.h"

typedef struct sim_ctx sim_ctx;

/* The current simulated time. */
sim_time sim_ctx_now(const sim_ctx *ctx);

/* The loaded scenario (workers, servers, workload parameters). */
const sim_scenario *sim_ctx_scenario(const sim_ctx *ctx);

uint32_t sim_ctx_workers(const sim_ctx *ctx);
uint32_t sim_ctx_servers(const sim_ctx *ctx); /* server hosts are ids workers..workers+servers-1 */
bool sim_ctx_down(const sim_ctx *ctx, uint32_t w);
uint32_t sim_ctx_live(const sim_ctx *ctx);

/* Bytes of one full-model message: workload.message_bytes, or the model's size. */
uint64_t sim_ctx_model_bytes(const sim_ctx *ctx);

/* Worker w's random stream, and the protocol-wide stream. */
gsl_rng *sim_ctx_rng(sim_ctx *ctx, uint32_t w);
gsl_rng *sim_ctx_proto_rng(sim_ctx *ctx);

/* Starts worker w's next iteration now; SIM_EV_COMPUTED follows when it ends. SIM_EINVAL
 * if w is down or already computing. */
int sim_ctx_compute(sim_ctx *ctx, uint32_t w, uint64_t tag, sim_err *err);
bool sim_ctx_computing(const sim_ctx *ctx, uint32_t w);

/* Sends `bytes` from host src to host dst; SIM_EV_MSG reaches the protocol on delivery.
 * A message to a down host is dropped. SIM_EINVAL for a bad host or a sender that is
 * down. */
int sim_ctx_send(sim_ctx *ctx, uint32_t src, uint32_t dst, uint64_t bytes, uint64_t tag,
                 uint64_t arg, sim_err *err);

/* Schedules the protocol event `kind` (>= SIM_EV_USER) at now + delay for worker w (or
 * SIM_NOBODY) with arg[0] = arg. `id` (may be NULL) can cancel it. */
int sim_ctx_timer(sim_ctx *ctx, sim_time delay, uint32_t kind, int32_t w, uint64_t arg,
                  sim_event_id *id, sim_err *err);
int sim_ctx_cancel(sim_ctx *ctx, sim_event_id id);

/* ---- Tensors (all NULL or 0 with the timing-only model) ---- */

/* Floats in one model (the parameter block every worker holds). */
size_t sim_ctx_num_params(const sim_ctx *ctx);

/* Worker w's parameters, which the protocol may read and average into. */
float *sim_ctx_params(sim_ctx *ctx, uint32_t w);

/* The gradient of worker w's last iteration: computed on its own minibatch, on its
 * parameters as they were when that iteration started. Valid from its SIM_EV_COMPUTED
 * until it starts another iteration. */
const float *sim_ctx_grad(const sim_ctx *ctx, uint32_t w);

/* One optimizer step on worker w's parameters with `grad` (num_params floats), with w's
 * momentum and the scheduled learning rate. */
void sim_ctx_apply(sim_ctx *ctx, uint32_t w, const float *grad);

/* Like sim_ctx_send, with a snapshot of `params` (n <= num_params floats, copied now into a
 * buffer from the run's pool) travelling with the message; the receiver reads it with
 * sim_ctx_payload. With the timing-only model no snapshot is taken. */
int sim_ctx_send_model(sim_ctx *ctx, uint32_t src, uint32_t dst, uint64_t bytes, uint64_t tag,
                       uint64_t arg, const float *params, size_t n, sim_err *err);

/* The snapshot carried by the SIM_EV_MSG being handled, or NULL if it carries none. Valid
 * only during that on_event call: average it into your own buffers, never keep it. */
const float *sim_ctx_payload(const sim_ctx *ctx);

/* One optimizer step, at the scheduled learning rate, on a block the protocol owns (a
 * server's model) with its own momentum buffer (NULL: no momentum). */
void sim_ctx_step(sim_ctx *ctx, float *params, float *velocity, const float *grad);

/* The same step on the first n (<= num_params) floats of each block: a slice of a server's
 * model, such as one parameter-server shard's. The step is element-wise, so stepping every
 * slice of a block gives the bits of one sim_ctx_step on the whole block. */
void sim_ctx_step_range(sim_ctx *ctx, float *params, float *velocity, const float *grad, size_t n);

/* Makes evaluation use `params` (a server's model, which must outlive the run) instead of
 * the mean over live workers; NULL restores the mean. */
void sim_ctx_set_eval_params(sim_ctx *ctx, const float *params);

/* Iterations counted for worker w so far (sim_ctx_count). */
uint64_t sim_ctx_iterations(const sim_ctx *ctx, uint32_t w);

/* Counts `iterations` finished iterations of worker w (each of workload.batch samples)
 * towards the throughput, the metrics and the iteration stop condition. */
void sim_ctx_count(sim_ctx *ctx, uint32_t w, uint64_t iterations);

#endif
