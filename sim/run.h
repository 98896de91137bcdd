/* One simulation run: scenario in, output directory out.
 *
 * sim_run_check does every check a run needs beyond the loader (the protocol and model
 * exist and accept their parameters, the memory estimate fits this machine) without
 * creating anything on disk: `hetsim validate` stops there. sim_run then builds the engine,
 * cluster, network and protocol, simulates until a stop condition holds, and writes
 * metrics.csv, workers.csv, summary.json, run.json (and events.csv when asked) into the run
 * directory, each atomically. The directory is created only once every check has passed.
 */
#ifndef SIM_RUN_H
#define SIM_RUN_H

#include <stdbool.h>
#include <stdint.h>

#include "sim/engine.h"
#include "sim/err.h"
#include "sim/scenario.h"

struct sim_ctx;

/* Called at every evaluation and once more when the run ends, with the run's context (read
 * workers' parameters with sim_ctx_params): how tests check invariants of a protocol from
 * outside it. Must not change the run. */
typedef void (*sim_run_observe_fn)(void *ud, struct sim_ctx *ctx);

typedef struct sim_run_options {
    const char *out_dir;        /* run directory; NULL: the scenario's output.dir */
    bool progress;              /* a progress line on stderr */
    sim_run_observe_fn observe; /* optional */
    void *observe_ud;
} sim_run_options;

typedef struct sim_run_summary {
    const char *stop_reason; /* "time", "iterations", "stalled" */
    sim_time sim_ns;         /* simulated time at the end */
    uint64_t iterations;     /* finished iterations over all workers */
    uint64_t samples;
    uint64_t events;         /* events processed */
    double wall_s;           /* wall-clock seconds of the simulation loop */
    double events_per_s;     /* events / wall_s */
    uint64_t peak_rss_bytes; /* the process's peak resident set */
} sim_run_summary;

/* Configures the protocol (writing its defaults into the scenario), checks that no unknown
 * key is left in the protocol and model sections, and estimates memory. */
int sim_run_check(sim_scenario *sc, sim_err *err);

/* An estimate of the bytes a run of `sc` allocates, for refusing absurd sizes up front. */
uint64_t sim_run_memory_estimate(const sim_scenario *sc);

/* Runs `sc` (after sim_run_check). Returns 0; SIM_EIO when outputs cannot be written;
 * SIM_ENUMERIC or another code when the run fails. `out` may be NULL. */
int sim_run(sim_scenario *sc, const sim_run_options *opt, sim_run_summary *out, sim_err *err);

#endif
