/* One simulation run: scenario in, output directory out.
 *
 * The caller chooses the protocol (the registry in protocols/ maps $.protocol.name to its
 * ops table): the runtime never looks a protocol up. sim_run_check does every check a run
 * needs beyond the loader (the model exists, model and protocol accept their parameters,
 * the memory estimate fits this machine) without
 * creating anything on disk: `hetsim validate` stops there. sim_run then builds the engine,
 * cluster, network and protocol, simulates until a stop condition holds, and writes
 * metrics.csv, workers.csv, summary.json, run.json (and events.csv when asked) into the run
 * directory, each atomically. The directory is created only once every check has passed.
 */
#ifndef RUNTIME_RUN_H
#define RUNTIME_RUN_H

#include <stdbool.h>
#include <stdint.h>

#include "runtime/proto.h"
#include "runtime/summary.h"
#include "scenario/scenario.h"
#include "sim/engine.h"
#include "sim/err.h"

/* Figures of a run's snapshots and peer reads, for an observer (sim_run_options.observe:
 * tests and reports), not part of a protocol's context. */
typedef struct sim_stats {
    uint64_t copies_on_write;       /* snapshots copied because their worker's parameters were
                                       written while they were in flight */
    uint64_t snapshot_buffer_bytes; /* address space the snapshot buffers take, handed out or
                                       not: buffers come in size classes, so a slice's buffer
                                       is less than twice the slice, never a whole model;
                                       resident are only the pages written */
    size_t held;                    /* snapshots the protocol holds now */
    uint64_t peer_reads;            /* sim_ctx_peer calls so far */
} sim_stats;
sim_stats sim_ctx_stats(const sim_ctx *ctx);

typedef struct sim_run_options {
    const char *out_dir;        /* run directory; NULL: the scenario's output.dir */
    bool progress;              /* a progress line on stderr */
    sim_run_observe_fn observe; /* optional */
    void *observe_ud;
    unsigned threads; /* threads computing gradients and evaluations (runtime/jobs.h); 0: the
                         environment's HETSIM_THREADS (a test hook), else 1, the calling thread
                         alone. Outputs are the same for every count. */
    bool plain_net;   /* tests: identical messages sent together do not share events (the
                         network's bundles, net/net.h): outputs are the same but for the events
                         processed */
} sim_run_options;

/* Configures the protocol (writing its defaults into the scenario), checks that no unknown
 * key is left in the protocol and model sections, and estimates memory. */
int sim_run_check(sim_scenario *sc, const proto_ops *ops, sim_err *err);

/* Runs `sc` (after sim_run_check). Returns 0; SIM_EIO when outputs cannot be written;
 * SIM_ENUMERIC or another code when the run fails. `out` may be NULL. */
int sim_run(sim_scenario *sc, const proto_ops *ops, const sim_run_options *opt,
            sim_run_summary *out, sim_err *err);

#endif
