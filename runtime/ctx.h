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
 *                       sender's arg, arg[3] = payload handle (SIM_NET_NO_PAYLOAD if none);
 *                       protocols read tag and arg through the kit's message layout
 *                       (kit/msg.h: channel, kind, sequence)
 *   SIM_EV_WORKER_DOWN  dst = worker that failed (its computation, if any, is lost, and
 *                       its messages in flight are dropped)
 *   SIM_EV_WORKER_UP    dst = worker that recovered (idle until the protocol acts)
 *   SIM_EV_USER + i     the protocol's own timers, as scheduled
 *
 * The time breakdown of workers.csv is kept by the runner, not by protocols: a worker is
 * computing while an iteration runs on it; otherwise communicating while any message from
 * or to it is in flight; otherwise waiting (while up) or down. comm_overlap_s counts the
 * computing time during which a message from or to it is in flight as well (communication
 * that overlaps computation).
 */
#ifndef RUNTIME_CTX_H
#define RUNTIME_CTX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <gsl/gsl_rng.h>

#include "runtime/events.h"
#include "sim/engine.h"
#include "sim/err.h"
#include "sim/layers.h"

typedef struct sim_ctx sim_ctx;

/* The current simulated time. */
sim_time sim_ctx_now(const sim_ctx *ctx);

/* The run's end once it has ended (for a protocol's report), else the current time: a run
 * stopped by time ends at stop.time_s, after its last event, whose instant sim_ctx_now stays
 * at (an evaluation's, so that a phase counted to it changed with eval.every_s). */
sim_time sim_ctx_end(const sim_ctx *ctx);

/* What a protocol may know of the workload and stop sections (sim_ctx_budget), so that it
 * reads neither. */
typedef struct sim_budget {
    uint32_t batch;       /* samples in one iteration of one worker (workload.batch) */
    size_t train_samples; /* training examples over all workers, one epoch's samples (0 with
                             the timing-only model, and before the run: proto_setup) */
    double lr;            /* the workload's learning rate, before its schedule (workload.lr) */
    double momentum;      /* the workload's momentum coefficient as configured, also when
                             timing-only (sim_ctx_rates gives the one steps take) */
    uint64_t iterations;  /* iterations counted over all workers (sim_ctx_count) at which an
                             iterations or epochs stop ends the run: stop.iterations, or the
                             fewest whose samples reach stop.epochs, whichever is smaller;
                             UINT64_MAX without either (epochs need train_samples) */
    sim_time time_ns;     /* stop.time_s, or SIM_TIME_NEVER */
    uint64_t rounds;      /* stop.rounds: averaging rounds (sim_ctx_round_end calls), 0: none */
    bool averaging_only;  /* the vector model: no data and zero gradients, averaging is all
                             there is (a protocol that reduces gradients averages the models
                             instead) */
} sim_budget;

/* The run's budget (above). */
sim_budget sim_ctx_budget(const sim_ctx *ctx);

uint32_t sim_ctx_workers(const sim_ctx *ctx);
bool sim_ctx_down(const sim_ctx *ctx, uint32_t w);

/* The network as protocols may see it: the path from host a to host b (sim_ctx_path), and
 * what host h is (sim_ctx_host). Protocols use these to size timeouts, find a server host or
 * prefer near peers; they never read the scenario's network section. */
typedef struct sim_path {
    sim_time latency_ns;  /* without transient extra latency */
    double bandwidth_bps; /* the bottleneck's */
} sim_path;
sim_path sim_ctx_path(const sim_ctx *ctx, uint32_t a, uint32_t b);
/* Host ids: workers 0..workers-1, then the server hosts; an id past the last is none. */
typedef enum sim_host_kind {
    SIM_HOST_NONE = 0,
    SIM_HOST_WORKER,
    SIM_HOST_SERVER
} sim_host_kind;
typedef struct sim_host {
    sim_host_kind kind;
    uint32_t rack; /* 0 on a star, and for SIM_HOST_NONE */
    uint32_t node; /* the machine holding it: hosts of one node (network.gpus_per_host) share
                      its NIC and talk through its fabric; h itself when every host is alone */
} sim_host;
sim_host sim_ctx_host(const sim_ctx *ctx, uint32_t h);

/* The model's layers as the timing sees them, in forward order (sim/layers.h): a profile's,
 * else the real model's (one "model" layer when timing-only); *n >= 1. An iteration is a
 * forward pass over them, then a backward pass in reverse; layer i's gradient is complete
 * when its backward pass ends. */
const sim_layer *sim_ctx_layers(const sim_ctx *ctx, size_t *n);

/* Bytes of layer i's share of a full-model message, or with i = SIM_LAYERS_ALL the whole
 * message's (workload.message_bytes, else the model's size): the whole split in proportion
 * to the layers' parameters (floors of the cumulative shares, so the layers add up to the
 * model's bytes exactly). 0 for any other i past the last layer. */
#define SIM_LAYERS_ALL SIZE_MAX
uint64_t sim_ctx_layer_bytes(const sim_ctx *ctx, size_t i);

/* When a pass over layer i of worker w's last started iteration is (or was) at a point of it:
 *   SIM_LAYER_GRAD_READY: its gradient is complete, the iteration's start plus round(its
 *     duration x the layer's share up to the end of its backward pass). Layer 0's is the
 *     iteration's end, the time of its SIM_EV_COMPUTED; the last layer's is the earliest.
 *   SIM_LAYER_FORWARD_START: its forward pass begins, the iteration's start plus round(its
 *     duration x the layers' share before that pass). Layer 0's is the iteration's start.
 * SIM_TIME_NEVER before w's first iteration. */
typedef enum sim_layer_point {
    SIM_LAYER_GRAD_READY = 0,
    SIM_LAYER_FORWARD_START = 1
} sim_layer_point;
sim_time sim_ctx_layer_ns(const sim_ctx *ctx, uint32_t w, size_t i, sim_layer_point at);

/* ---- Per-worker state (proto_ops.worker_size bytes each, zeroed, in the run's arena) ---- */

/* Worker w's state, for the handler acting for w (its event, its timer, its message, or the
 * protocol's bookkeeping on its behalf, such as noticing that a neighbour failed), and for
 * the protocol's observers of every worker (report, checks, round detection). NULL when the
 * protocol declares no worker_size. */
void *sim_ctx_worker(const sim_ctx *ctx, uint32_t w);

/* Worker w's state reached on purpose by another worker without a message (AD-PSGD's pairwise
 * commit, which both ends apply at once; Moshpit's keys read "as from a DHT"): the same
 * pointer as sim_ctx_worker's, and one read counted in sim_stats.peer_reads and
 * summary.json's "peer_reads". */
void *sim_ctx_peer(sim_ctx *ctx, uint32_t w);

/* Counts k reads as k calls of sim_ctx_peer would: the reads of a walk over peers that an
 * index replaced (Moshpit's matchmaking), counted as the walk counted them. */
void sim_ctx_peer_count(sim_ctx *ctx, uint64_t k);

/* Worker w's random stream, or with w = SIM_CTX_PROTO the protocol-wide stream. */
#define SIM_CTX_PROTO UINT32_MAX
gsl_rng *sim_ctx_rng(sim_ctx *ctx, uint32_t w);

/* Starts worker w's next iteration now; SIM_EV_COMPUTED follows when it ends. SIM_EINVAL
 * if w is down or already computing. */
int sim_ctx_compute(sim_ctx *ctx, uint32_t w, uint64_t tag, sim_err *err);

/* Dates the iteration that sim_ctx_compute started on worker w at this instant back to
 * start_ns: it ends at start_ns plus its duration, and sim_ctx_layer_ns follows. For a protocol
 * whose forward pass began before the last of its inputs were in (a parameter server's slices, each
 * needed only by its own layers): it calls sim_ctx_compute when the last is in, so that the
 * gradient is taken on the whole model, then moves the start back to when the forward pass could
 * have begun. The duration is the one drawn at the call; workers.csv counts the worker as computing
 * from the call on. SIM_EINVAL if w has no iteration started at this instant, or start_ns is later
 * than now or so early that the iteration would have ended before now. */
int sim_ctx_backdate(sim_ctx *ctx, uint32_t w, sim_time start_ns, sim_err *err);

/* What travels with a message (sim_ctx_send); the receiver reads it with sim_ctx_held(ctx,
 * SIM_CTX_PAYLOAD). */
typedef enum sim_payload_kind {
    SIM_PAYLOAD_NONE = 0,   /* bytes only */
    SIM_PAYLOAD_COPY = 1,   /* a snapshot of x[0..n) (n <= num_params), copied now into a
                               buffer from the run's pool */
    SIM_PAYLOAD_PARAMS = 2, /* worker w's whole model, without a copy: an alias of w's
                               parameters, shared by every message of w's model sent before its
                               next write, and copied only if w's parameters are written while
                               it is still referenced (copy on write, runtime/snap.h); the
                               receiver sees the bits w had at the send either way */
    SIM_PAYLOAD_HELD = 3    /* held snapshot h (sim_ctx_snapshot, sim_ctx_hold), shared with
                               every other message that carries it */
} sim_payload_kind;

typedef struct sim_payload {
    sim_payload_kind kind;
    const float *x; /* COPY: the floats (NULL: none travel) */
    size_t n;       /* COPY: how many */
    uint32_t w;     /* PARAMS: the worker whose model travels */
    uint32_t h;     /* HELD: the snapshot (SIM_CTX_NO_SNAPSHOT: none) */
} sim_payload;

/* Sends `bytes` from host src to host dst, with payload p; SIM_EV_MSG reaches the protocol on
 * delivery. A message to a down host is dropped (its payload with it). With the timing-only
 * model no payload travels. SIM_EINVAL for a bad host, a sender that is down, or a copy longer
 * than the model. */
int sim_ctx_send(sim_ctx *ctx, uint32_t src, uint32_t dst, uint64_t bytes, uint64_t tag,
                 uint64_t arg, sim_payload p, sim_err *err);

/* Schedules the protocol event `kind` (>= SIM_EV_USER) at now + delay for worker w (or
 * SIM_NOBODY) with arg[0] = arg. `id` (may be NULL) can cancel it. */
int sim_ctx_timer(sim_ctx *ctx, sim_time delay, uint32_t kind, int32_t w, uint64_t arg,
                  sim_event_id *id, sim_err *err);
/* Like sim_ctx_timer at now, for an event of the engine's late class: it comes after every
 * other event of this instant (sim_engine_schedule_late_at). */
int sim_ctx_timer_late(sim_ctx *ctx, uint32_t kind, int32_t w, uint64_t arg, sim_err *err);
/* Cancels a timer of sim_ctx_timer's: SIM_EINVAL if it already ran or was cancelled. */
int sim_ctx_cancel(sim_ctx *ctx, sim_event_id id);

/* ---- Tensors (the timing-only model has zero floats: every tensor below holds none, so
 * loops over them and steps on them do nothing; a send carries no payload) ---- */

/* Floats in one model (the parameter block every worker holds). */
size_t sim_ctx_num_params(const sim_ctx *ctx);

/* Worker w's parameters, which the protocol may read and average into. The pointer is for
 * writing: a snapshot of w's model still in flight (a SIM_PAYLOAD_PARAMS send) gets its copy now
 * (copy on write, runtime/snap.h), so write w's parameters only through a pointer taken after
 * the last such send. */
float *sim_ctx_params(sim_ctx *ctx, uint32_t w);

/* Worker w's parameters, read-only: no copy is made. Valid until w's parameters change. */
const float *sim_ctx_params_view(const sim_ctx *ctx, uint32_t w);

/* The gradient of worker w's last iteration: computed on its own minibatch, on its
 * parameters as they were when that iteration started. Valid from its SIM_EV_COMPUTED
 * until it starts another iteration; the runtime computes it when the iteration starts, so a
 * protocol that sends a layer's gradient when backward has produced it
 * (sim_ctx_layer_ns at SIM_LAYER_GRAD_READY) may read it from sim_ctx_compute on. */
const float *sim_ctx_grad(const sim_ctx *ctx, uint32_t w);

/* Takes worker w's gradient buffer (the one sim_ctx_grad returns: the protocol owns it from
 * now on, to keep as a pending sum without copying it) and gives the runtime `spare` in its
 * place, a buffer of num_params floats from sim_tensor_alloc that the runtime now owns and
 * computes w's next gradient into. sim_ctx_grad(ctx, w) is undefined until that next
 * gradient. */
float *sim_ctx_take_grad(sim_ctx *ctx, uint32_t w, float *spare);

/* What an optimizer step writes (sim_ctx_step). */
typedef enum sim_target_kind {
    SIM_TARGET_WORKER = 0, /* worker w's parameters, with its momentum buffer */
    SIM_TARGET_PAIR = 1,   /* workers w and peer (w != peer): both take the average of their
                              parameters, (x_w + x_peer) * 0.5, then each applies its own
                              gradient with its own momentum, in one pass over the models (a
                              pairwise exchange such as AD-PSGD's commit) */
    SIM_TARGET_BLOCK = 2   /* the first n floats of a block the protocol owns (a server's model,
                              or a slice of it such as a parameter-server shard's) with its own
                              momentum buffer */
} sim_target_kind;

typedef struct sim_target {
    sim_target_kind kind;
    uint32_t w;             /* WORKER, PAIR: the worker */
    uint32_t peer;          /* PAIR: the other worker */
    const float *peer_grad; /* PAIR: the peer's gradient (NULL: none; grad is w's) */
    float *params;          /* BLOCK: the block */
    float *velocity;        /* BLOCK: its momentum buffer (NULL: no momentum) */
    size_t n;               /* BLOCK: floats stepped, <= num_params */
} sim_target;

/* How a step is taken (sim_ctx_step). */
typedef struct sim_step {
    double lr;       /* the learning rate */
    double momentum; /* the momentum coefficient; a target without a momentum buffer (workload
                        momentum 0, a block's NULL velocity) has none whatever this says */
    bool keyed;      /* WORKER: a step every replica takes alike, named by key */
    uint64_t key;    /* equal keys promise equal gradients (the same buffer with the same
                        contents), rates and momentum coefficients */
    bool nesterov;   /* BLOCK: Nesterov momentum, v = momentum v + g', x -= lr (g' + momentum v)
                        (models/optim.h), instead of the heavy ball's x -= lr v */
    bool no_decay;   /* BLOCK: no weight decay (g' = g), whatever workload.weight_decay says: an
                        outer optimizer's step on the protocol's own model (DiLoCo's) */
} sim_step;

/* The rates a step takes when given none: the learning rate the workload's schedule gives now,
 * from the samples counted so far, and the workload's momentum coefficient (both 0 with the
 * timing-only model; 0 momentum without momentum), unkeyed. A synchronous protocol reads them
 * once per round and passes them to every replica's step, so that the order in which replicas
 * apply a round cannot change their rates. */
sim_step sim_ctx_rates(const sim_ctx *ctx);

/* One optimizer step (weight decay as configured) on target t with `grad` (num_params floats,
 * n for a block; for a pair, w's gradient, NULL: none), at the rates of `o`, or with o NULL at
 * sim_ctx_rates' (the step of a pair takes no other). Only a block's step takes o's variants,
 * nesterov and no_decay (a worker's must leave them false). A keyed step is computed once for
 * all the workers whose replicas are equal and share their storage (models/train.h), not once
 * per worker, with the bits of the unkeyed step on each: for synchronous protocols, which apply
 * one mean gradient to every replica (the key names the round). Stepping every slice of a block
 * gives the bits of one step on the whole block (the step is element-wise). Nothing to step
 * with the timing-only model (zero floats). */
void sim_ctx_step(sim_ctx *ctx, sim_target t, const sim_step *o, const float *grad);

/* sim_tensor_mean(out, xs, k, n), bit for bit, spread over the run's threads (`--threads`)
 * when the mean is large enough to pay for it; otherwise, or with one thread, computed here.
 * Same aliasing rules as sim_tensor_mean; the xs must not change until it returns. */
void sim_ctx_mean(sim_ctx *ctx, float *restrict out, const float *const *xs, size_t k, size_t n);

/* A snapshot of x[0..n) (n <= num_params) held by the protocol, to send to several peers with
 * a SIM_PAYLOAD_HELD send: one copy, whatever the number of messages. The protocol releases its
 * own reference with sim_ctx_release when it has sent them (each message keeps its own).
 * *h is SIM_CTX_NO_SNAPSHOT with the timing-only model or a NULL x. */
int sim_ctx_snapshot(sim_ctx *ctx, const float *x, size_t n, uint32_t *h, sim_err *err);

/* Snapshot handles: SIM_CTX_NO_SNAPSHOT is none, and SIM_CTX_PAYLOAD names the snapshot
 * carried by the SIM_EV_MSG being handled, its payload (as many floats as were sent), valid
 * only during that on_event call unless held: average it into your own buffers. */
#define SIM_CTX_NO_SNAPSHOT UINT32_MAX
#define SIM_CTX_PAYLOAD     (UINT32_MAX - 1)

/* True when the payload being handled is worker w's whole model as it is now: sent with
 * SIM_PAYLOAD_PARAMS and not written since. The protocol may then drop the payload and use
 * w's parameters in its place, writing them in the same pass without a copy being made. */
bool sim_ctx_payload_is_params(const sim_ctx *ctx, uint32_t w);

/* Keeps the payload being handled past the handler (an update queue): returns its handle,
 * or SIM_CTX_NO_SNAPSHOT when the message carries none. The snapshot stays valid and
 * unchanged until sim_ctx_release; holding one handle twice is an error of the protocol. Held
 * snapshots come from the run's pool, which grows as needed. */
uint32_t sim_ctx_hold(sim_ctx *ctx);

/* The floats of held snapshot h (the n of its SIM_PAYLOAD_COPY send or sim_ctx_snapshot, the
 * whole model for a SIM_PAYLOAD_PARAMS send; reading past them is an error; NULL for
 * SIM_CTX_NO_SNAPSHOT, as the timing-only model's sim_ctx_snapshot gives), or of the payload
 * (SIM_CTX_PAYLOAD: NULL when the message carries none; after writing the sender's own
 * parameters, sim_ctx_params of the sender, read it again). */
const float *sim_ctx_held(sim_ctx *ctx, uint32_t h);

/* Returns held snapshot h to the pool; SIM_CTX_NO_SNAPSHOT is a no-op. SIM_CTX_PAYLOAD
 * releases the payload being handled before the handler ends (it must not be held): the
 * pointer sim_ctx_held gave for it is invalid from now on. */
void sim_ctx_release(sim_ctx *ctx, uint32_t h);

/* Makes evaluation use `params` (a server's model, which must outlive the run) instead of
 * the mean over live workers; NULL restores the mean. */
void sim_ctx_set_eval_params(sim_ctx *ctx, const float *params);

/* A note on how the run reads its scenario (a setting the protocol does not use as a user may
 * expect): written to stderr at once ("hetsim: FILE: note: TEXT") and listed in summary.json's
 * "notes" (a field present only when the run made a note). Call it once per note, from start
 * for instance. At most SIM_CTX_MAX_NOTES per run, each cut to 255 bytes; more are dropped. */
enum {
    SIM_CTX_MAX_NOTES = 4
};
__attribute__((format(printf, 2, 3))) void sim_ctx_note(sim_ctx *ctx, const char *fmt, ...);

/* Counts `iterations` finished iterations of worker w (each of workload.batch samples)
 * towards the throughput, the metrics and the iteration stop condition, and returns w's count
 * so far; with 0, only reads it (an observer's query). */
uint64_t sim_ctx_count(sim_ctx *ctx, uint32_t w, uint64_t iterations);

/* For protocols whose ops declare `rounds`: every live replica has now applied the same
 * rounds. An iterations or epochs stop reached since the last boundary takes effect here
 * (so such runs end with equal replicas), not in the sim_ctx_count that reached it. */
void sim_ctx_round_end(sim_ctx *ctx);

/* ---- Averaging-only runs (model "vector", DESIGN 6b) ----
 *
 * sim_ctx_round_end also counts averaging rounds: a protocol calls it once per round, when
 * every live replica has applied it. The runtime then checks stop.rounds (that many calls)
 * and stop.consensus (the variance across live workers, mean over coordinates, below the
 * bound), and summary.json of a vector model reports the rounds and the final variance. */

/* Whether worker w sits out averaging round `round` (a dropout rule): it keeps its value and
 * takes no part. One draw from w's stream per round, in round order, remembered for the last
 * 8 rounds (sim_cluster_dropped); false without dropout rules. */
bool sim_ctx_dropped(sim_ctx *ctx, uint32_t w, uint64_t round);
/* Whether worker w sits out every round (a dropout probability of 1): sim_ctx_dropped is
 * true for it whatever the round. */
bool sim_ctx_always_dropped(const sim_ctx *ctx, uint32_t w);

#endif
