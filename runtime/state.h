/* The runner's state (struct sim_ctx) and the small helpers every part of the runtime uses:
 * time accounting, stopping, epochs, the event trace, wall-clock figures. Layers inside
 * runtime/, one way: run.c (set-up, dispatch) -> ctx_calls.c (the context API protocols call) ->
 * outputs.c (evaluation and files) -> state.c. Not part of the API.
 */
#ifndef RUNTIME_STATE_H
#define RUNTIME_STATE_H

#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "models/train.h"
#include "net/net.h"
#include "outputs/output.h"
#include "runtime/ctx.h"
#include "runtime/proto.h"
#include "runtime/summary.h"
#include "scenario/cluster.h"
#include "scenario/scenario.h"
#include "sim/engine.h"
#include "sim/pool.h"
#include "sim/tensor.h"

/* Time-breakdown states of a worker (workers.csv columns). */
enum acct_state {
    ACCT_COMPUTE = 0,
    ACCT_COMM = 1,
    ACCT_WAIT = 2,
    ACCT_DOWN = 3,
    ACCT_N = 4
};

typedef struct worker_acct {
    sim_time since;          /* start of the current state */
    sim_time spent[ACCT_N];  /* ns spent in each state */
    uint8_t state;           /* enum acct_state */
    bool overlap;            /* computing with a message from or to it in flight */
    sim_time overlap_since;  /* start of the current overlap */
    sim_time overlap_ns;     /* ns of overlap before it (comm_overlap_s: part of compute) */
    bool computing;          /* an iteration is running */
    sim_event_id compute_id; /* its end event */
    uint64_t started;        /* iterations started */
    sim_time iter_start_ns;  /* when the last iteration started (SIM_TIME_NEVER: none yet) */
    sim_time iter_ns;        /* and how long it lasts */
    uint64_t compute_tag;    /* its sim_ctx_compute tag (sim_ctx_backdate) */
    uint64_t iterations;     /* iterations counted finished */
} worker_acct;

/* Size classes of snapshot buffers: class c holds min(2^(c + SNAP_MIN_LOG2), num_params)
 * floats, so a slice takes a buffer less than twice its size, and a whole model its own. */
enum {
    SNAP_MIN_LOG2 = 10,
    SNAP_CLASSES = 64 - SNAP_MIN_LOG2
};

/* One snapshot (runtime/snap.c): a copy in a buffer of the pool, or an alias of a worker's
 * model, a hold on its replica block (models/replica.h). */
typedef struct snap_entry {
    float *data;    /* its buffer (an alias: only in check mode, the bits of its send); or NULL */
    uint32_t refs;  /* messages carrying it and holds; 0: the handle is free */
    uint32_t owner; /* the worker an alias was made of, or UINT32_MAX */
    uint32_t block; /* the replica block an alias holds, or UINT32_MAX */
    uint32_t buf;   /* data's handle in its class's pool */
    uint8_t cls;    /* data's size class */
} snap_entry;

/* A worker's gradient in flight (runtime/jobs.c). */
typedef struct grad_job {
    sim_pool_job job;
    struct sim_ctx *ctx;
    const float *params; /* its pinned block's parameters */
    uint32_t w, block;   /* the worker and its pinned block */
    uint64_t iteration;  /* the worker's iteration (for an error's message) */
    size_t slot;         /* its place in the loss ring */
    double loss;         /* the minibatch's mean loss: the job's result */
    bool pinned;         /* in flight with its block pinned (more than one thread) */
} grad_job;

/* One forward pass of an evaluation (runtime/jobs.c). */
typedef struct eval_job {
    sim_pool_job job;
    struct sim_ctx *ctx;
    const float *params;
    size_t samples, i; /* the evaluation's examples, and this pass */
    double sum;        /* its loss times its examples */
    size_t correct;
} eval_job;

/* One piece of a mean spread over the pool (runtime/jobs.c, jobs_mean): elements [begin, end)
 * of out. */
typedef struct mean_job {
    sim_pool_job job;
    float *out;
    const float *const *xs;
    size_t k, begin, end;
} mean_job;

/* Snapshots carried by messages, copied on write (runtime/snap.h; real models only), and the
 * payload of the message being handled. */
typedef struct snap_table {
    snap_entry *entry;   /* (cap) by handle; NULL: no snapshots (timing-only) */
    uint32_t *free_list; /* (cap) free handles, a stack (lowest on top at first) */
    size_t cap, nfree;
    sim_tensor_pool *pool[SNAP_CLASSES]; /* buffers by size class, made when first used */
    uint32_t *of; /* (workers) the worker's alias snapshot while it has not written since, or
                     SIM_CTX_NO_SNAPSHOT */
    bool check;   /* HETSIM_CHECK_SNAPSHOTS=1: aliases are verified */
    uint64_t copies_on_write; /* aliases copied because their worker was written */
    const float *payload;     /* the delivered message's snapshot, during its handler */
    uint32_t payload_handle;  /* its pool handle (SIM_CTX_NO_SNAPSHOT: none) */
    bool payload_held;        /* the handler kept it (sim_ctx_hold) */
    size_t held;              /* snapshots held by the protocol now */
} snap_table;

/* Accounting: each worker's time breakdown and iterations, and the run's totals. */
typedef struct run_account {
    worker_acct *worker; /* (workers) */
    uint64_t iterations, samples;
    sim_time counted_ns; /* when the last iteration was counted (sim_ctx_count), 0 before */
} run_account;

/* Evaluation (metrics.csv). */
typedef struct run_eval {
    sim_time last_ns;
    uint64_t last_samples;
    sim_time counted_ns; /* account.counted_ns at the last evaluation: where the next
                            evaluation's throughput window starts */
    double loss_sum;     /* training losses since the last evaluation */
    uint64_t loss_count;
    const float *params; /* set by the protocol (a server's model), or NULL: the mean */
    float *mean;         /* (num_params) mean model over live workers */
    const float **live;  /* (workers) scratch: live workers' models */
    uint32_t *ids;       /* (workers) scratch: live workers' ids */
    double last_accuracy, best_accuracy;
    sim_time target_ns; /* when target_accuracy was reached, or SIM_TIME_NEVER */
} run_eval;

/* Stopping. The stall rule (runtime/run.c) counts the pending events that cannot make
 * progress, the recoveries that can, and the failures and protocol timers that the
 * protocol's `stuck` hook may find unable to. */
typedef struct run_stop {
    const char *reason;
    const char *pending; /* a rounds protocol's stop, waiting for sim_ctx_round_end */
    uint64_t rounds;     /* sim_ctx_round_end calls */
    size_t inert;        /* pending evaluations, link windows, recoveries at the stop */
    size_t recoveries;   /* pending recoveries before the stop (the timeline's UP changes) */
    size_t failures;     /* pending failures (the timeline's DOWN changes) */
    size_t timers;       /* the protocol's pending timers (sim_ctx_timer, not cancelled) */
    bool ended;          /* the run has ended, at end_ns (sim_ctx_end) */
    sim_time end_ns;
} run_stop;

/* Outputs, notes and progress. */
typedef struct run_out {
    sim_file *metrics, *events;
    char notes[SIM_CTX_MAX_NOTES][256]; /* sim_ctx_note's, for summary.json */
    size_t nnotes;
    bool progress;
    sim_run_observe_fn observe;
    void *observe_ud;
    struct timespec wall_start, wall_last;
} run_out;

struct sim_ctx {
    sim_scenario *sc;
    const proto_ops *proto;
    void *state;
    sim_engine *eng;
    sim_cluster *cl;
    sim_net *net;
    bool plain_net; /* sim_run_options.plain_net: no bundles (every message its own events) */
    train *tr;      /* the model's state: the timing-only model's holds zero floats */
    uint32_t nworkers, nhosts;
    uint64_t model_bytes;
    uint64_t memory_estimate; /* bytes the memory check expects the run to take */
    uint64_t arena_bytes;     /* the sizing pass's count of the run's arena */
    sim_arena *arena;         /* the protocol's buffers and worker states (runtime/arena.h) */
    unsigned char *workers;   /* (nworkers * proto->worker_size) sim_ctx_worker's, or NULL */
    uint64_t peer_reads;      /* sim_ctx_peer calls */
    const sim_change *timeline;
    size_t ntimeline;
    snap_table snaps;
    run_account account;
    run_eval eval;
    run_stop stop;
    run_out out;
    /* The thread pool's gradients and evaluations (runtime/jobs.h); pool NULL: none. */
    unsigned threads; /* sim_run_options.threads: 1 or more */
    sim_pool *pool;
    grad_job *gjob;    /* (workers) */
    double *ring_loss; /* (ring_cap) losses of started iterations, in start order */
    uint32_t *ring_w;  /* (ring_cap) their workers */
    bool *ring_done;   /* (ring_cap) joined */
    size_t ring_cap, ring_head, ring_n;
    unsigned max_copies; /* blocks only pins may hold at once (train_orphans): one a thread */
    int job_rc;          /* a join's error, for the end of the event */
    sim_err job_err;
    eval_job *ejob; /* (nejob) */
    size_t nejob;
    mean_job *mjob; /* (nmjob) the pieces of a mean (jobs_mean) */
    size_t nmjob;
    uint64_t split_means;     /* means jobs_mean split */
    uint64_t mean_min_floats; /* the smallest mean split (JOBS_MEAN_MIN_FLOATS, or the hook's) */
    /* An evaluation scored by the pool while the simulation goes on (runtime/outputs.c): its
     * metrics.csv row waits for its forward passes and the losses of the iterations started
     * before it (eval_owed of the ring's oldest), then is written before any later row. */
    bool eval_pending;
    sim_time pend_ns;
    uint64_t pend_iterations, pend_samples;
    double pend_epoch, pend_consensus, pend_sps;
    double pend_loss_sum; /* losses of its iterations retired so far */
    uint64_t pend_loss_count;
    size_t eval_owed; /* ring entries still to retire into it */
};

/* Seconds from nanoseconds, by division (correctly rounded). */
static inline double sim_run_seconds(sim_time ns)
{
    return (double)ns / 1e9;
}

/* Moves worker w's time accounting to the state it is in now (server hosts: no-op). */
void sim_run_acct_update(sim_ctx *ctx, uint32_t w);

/* Closes worker w's accounting at time `end` (the run's end): the time since the last change
 * goes to its state, and to its overlap if it is in one. */
void sim_run_acct_close(sim_ctx *ctx, uint32_t w, sim_time end);

/* Stops the run at the end of the current event with `reason`, unless already stopping. */
void sim_run_stop(sim_ctx *ctx, const char *reason);

/* Training progress in epochs (samples over the training set), NaN without data. */
double sim_run_epoch(const sim_ctx *ctx);

/* Appends a line to events.csv when it is being written: tag and arg are a message's
 * (the protocol kit's sequence number, and channel * 2^32 + kind), or a computation's tag. */
void sim_run_trace(sim_ctx *ctx, const char *what, int64_t worker, int64_t peer, uint64_t tag,
                   uint64_t bytes, uint64_t arg);

/* Wall-clock seconds since *t0 (CLOCK_MONOTONIC): progress and summary figures only. */
double sim_run_wall_since(const struct timespec *t0);

/* The process's peak resident set in bytes (0 if unknown). */
uint64_t sim_run_peak_rss(void);

/* The budget of sim_ctx_budget as the scenario gives it before the run: without
 * train_samples (0: the data is not loaded yet), so `iterations` counts stop.iterations
 * alone. */
sim_budget sim_run_budget(const sim_scenario *sc);

/* Host h of the scenario's cluster (sim_ctx_host): its kind, node and rack. */
sim_host sim_run_host(const sim_scenario *sc, uint32_t h);

/* What configure may know of the run (runtime/proto.h), from the scenario once its workload
 * has been read (the layers, and the iteration time that compute.gflops gives). */
proto_setup sim_run_setup(const sim_scenario *sc);

#endif
