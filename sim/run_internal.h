/* The runner's state, shared by sim/run.c (set-up, the context API, event handlers) and
 * sim/run_out.c (evaluation, metrics and the output files). Not part of the API.
 */
#ifndef SIM_RUN_INTERNAL_H
#define SIM_RUN_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "models/train.h"
#include "protocols/proto.h"
#include "sim/cluster.h"
#include "sim/ctx.h"
#include "sim/engine.h"
#include "sim/net.h"
#include "sim/output.h"
#include "sim/run.h"
#include "sim/scenario.h"
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
    bool computing;          /* an iteration is running */
    sim_event_id compute_id; /* its end event */
    uint64_t started;        /* iterations started */
    uint64_t iterations;     /* iterations counted finished */
} worker_acct;

struct sim_ctx {
    sim_scenario *sc;
    const proto_ops *proto;
    void *state;
    sim_engine *eng;
    sim_cluster *cl;
    sim_net *net;
    train *tr;                  /* NULL for the timing-only model */
    sim_tensor_pool *snapshots; /* model snapshots carried by messages (real models) */
    const float *payload;       /* the delivered message's snapshot, during its handler */
    worker_acct *acct;          /* (workers) */
    uint32_t nworkers, nhosts;
    uint64_t model_bytes;
    uint64_t iterations, samples;
    /* Evaluation. */
    sim_time last_eval_ns;
    uint64_t last_eval_samples;
    double loss_sum; /* training losses since the last evaluation */
    uint64_t loss_count;
    const float *eval_params; /* set by the protocol (a server's model), or NULL: the mean */
    float *mean;              /* (num_params) mean model over live workers */
    const float **live;       /* (workers) scratch: live workers' models */
    double last_accuracy, best_accuracy;
    sim_time target_ns; /* when target_accuracy was reached, or SIM_TIME_NEVER */
    /* Run control and outputs. */
    const char *stop_reason;
    const sim_change *timeline;
    size_t ntimeline;
    sim_file *metrics, *events;
    bool progress;
    sim_run_observe_fn observe;
    void *observe_ud;
    struct timespec wall_start, wall_last;
};

/* Seconds from nanoseconds, by division (correctly rounded). */
static inline double sim_run_seconds(sim_time ns)
{
    return (double)ns / 1e9;
}

/* Training progress in epochs (samples over the training set), NaN when timing-only. */
double sim_run_epoch(const sim_ctx *ctx);

/* Evaluates now and writes a metrics.csv row; may stop the run (target accuracy). */
void sim_run_evaluate(sim_ctx *ctx, sim_time now);

/* Creates the run directory and opens metrics.csv (and events.csv). */
int sim_run_open_outputs(sim_ctx *ctx, const char *dir, sim_err *err);

/* Commits metrics.csv and events.csv, then writes workers.csv, run.json, summary.json. */
int sim_run_write_outputs(sim_ctx *ctx, const char *dir, const sim_run_summary *sum, sim_err *err);

/* Appends a line to events.csv when it is being written. */
void sim_run_trace(sim_ctx *ctx, const char *what, int64_t worker, int64_t peer, uint64_t tag,
                   uint64_t bytes);

#endif
