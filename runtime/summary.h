/* What a run reports to its caller: the summary figures of a finished run, and the observe
 * hook through which tests watch a run from outside its protocol.
 */
#ifndef RUNTIME_SUMMARY_H
#define RUNTIME_SUMMARY_H

#include <stdint.h>

#include "sim/engine.h"

struct sim_ctx;

/* Called at every evaluation and once more when the run ends, with the run's context (read
 * workers' parameters with sim_ctx_params): how tests check invariants of a protocol from
 * outside it. Must not change the run. */
typedef void (*sim_run_observe_fn)(void *ud, struct sim_ctx *ctx);

typedef struct sim_run_summary {
    const char *stop_reason; /* the stop condition met ("time", "iterations", ...) or
                                "stalled" (runtime/run.c's stall rule) */
    sim_time sim_ns;         /* simulated time at the end */
    uint64_t iterations;     /* finished iterations over all workers */
    uint64_t samples;
    uint64_t events;                /* events processed */
    uint64_t messages_between;      /* messages sent between hosts of different nodes (not
                                       written: `hetsim bench collectives` reads it) */
    double wall_s;                  /* wall-clock seconds of the simulation loop */
    double events_per_s;            /* events / wall_s */
    uint64_t peak_rss_bytes;        /* the process's peak resident set */
    uint64_t memory_estimate_bytes; /* the estimate behind the memory check (sim_run_check) */
    double model_s;                 /* wall seconds of it inside the model's forward and backward
                                       passes of training iterations (0 when timing-only) */
    uint64_t split_means;           /* means computed in pieces on several threads (sim_ctx_mean;
                                       not written: tests see that the path is taken) */
} sim_run_summary;

#endif
