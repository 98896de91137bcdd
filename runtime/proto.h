/* The protocol interface: the ops table every synchronization protocol implements.
 *
 * A protocol is a `const proto_ops` in its own file (ROSS style: a table of handlers plus
 * the size of the per-run state the runtime allocates, zeroed, and the size of the state of
 * each worker, ROSS's per-entity state, which it reaches with sim_ctx_worker). Its buffers
 * come from the run's arena (runtime/arena.h): the `buffers` hook asks for them, the runtime
 * sizes them for the memory guard before the run allocates anything, and frees them at
 * teardown. The runtime reads $.protocol.name itself; configure only parses the protocol's
 * other parameters through sim_cfg (which records defaults and lets the runtime reject
 * unknown keys afterwards) and checks them against what it may know of the run
 * (proto_setup: never the scenario, the cluster or the network), allocating nothing: the
 * runtime calls it once to validate and once per run. start schedules the first events (and
 * builds the kit's graphs into the room the buffers hook reserved for them in the arena, and
 * the kit's butterflies, which live outside it; the kit's other objects come from the arena
 * whole, in the buffers hook); on_event handles every event of the run addressed to the
 * protocol (see runtime/ctx.h); fini frees what start built outside the arena (it is also
 * called after a configure that was never started, on a zeroed state). Handlers take
 * `void *state` and cast it on their first line. Only configure, start and on_event are
 * required.
 */
#ifndef RUNTIME_PROTO_H
#define RUNTIME_PROTO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "outputs/output.h"
#include "runtime/arena.h"
#include "runtime/ctx.h"
#include "sim/cfg.h"
#include "sim/err.h"

/* What a protocol may know of the run besides its own section, when configure runs (before
 * the run exists; the context's calls answer the same once it does): the runtime fills it from
 * the scenario, so that no protocol reads the scenario, the cluster or the network. configure
 * keeps in its state what its buffers, memory and copies hooks need of it. */
typedef struct proto_setup {
    uint32_t workers;      /* sim_ctx_workers */
    uint32_t servers;      /* server hosts, after the workers (sim_ctx_host's SIM_HOST_SERVER) */
    size_t layers;         /* the timing's layers (sim_ctx_layers' n), >= 1 */
    sim_time iteration_ns; /* the base iteration of a worker of speed 1, before its slowdowns
                              and jitter (compute.iteration_ms, or from gflops, a profile or a
                              device) */
    uint32_t racks;        /* racks holding workers (sim_ctx_host's rack: 0 to racks - 1) */
    uint32_t rack_workers; /* the most workers one rack holds (every worker on one rack) */
    bool worker0_fails;    /* a failure rule takes worker 0 down: a coordinator placed on it
                              would be lost */
    bool homogeneous;      /* every worker computes at one rate and sends through one kind of
                              NIC for the whole run: equal speeds and devices, equal NIC
                              bandwidth and latency, no straggler rule of any kind (jitter,
                              drawn alike for all, does not count) */
    sim_budget budget;     /* sim_ctx_budget as it is before the run: train_samples 0 (the data
                              is not loaded yet), so `iterations` counts stop.iterations alone */
} proto_setup;

typedef struct proto_ops {
    const char *name;    /* matches "protocol": {"name": ...} in scenarios */
    const char *summary; /* one line for `hetsim list protocols` */
    size_t state_size;   /* zeroed bytes the runtime allocates per run */
    size_t worker_size;  /* zeroed bytes the runtime allocates per worker, in the run's arena
                            (sim_ctx_worker); 0: none */
    /* true: an iterations or epochs stop that sim_ctx_count reaches takes effect only at the
     * next sim_ctx_round_end, which the protocol then must call whenever every live worker
     * has applied the same rounds, so that the run ends with equal replicas (allreduce,
     * localsgd, diloco); a protocol that declares rounds and never calls it is stopped by
     * time alone. false: the count that reaches the stop ends the run. Either may call
     * sim_ctx_round_end to count averaging rounds (stop.rounds, stop.consensus). */
    bool rounds;
    /* Parses $.protocol (but its name, which the runtime read) into `state` with the sim_cfg
     * accessors, which record defaults in the resolved scenario and name the JSON path in
     * errors, and checks it against `setup`; allocates nothing. Called once to validate and
     * once per run, each time on a zeroed state. */
    int (*configure)(void *state, sim_cfg *cfg, const proto_setup *setup, sim_err *err);
    int (*start)(void *state, sim_ctx *ctx, sim_err *err);
    int (*on_event)(void *state, sim_ctx *ctx, const sim_event *ev, sim_err *err);
    /* Optional: asks for the protocol's buffers in the run's arena (runtime/arena.h) with
     * sim_arena_alloc, from the configured state and the model's size (`num_params` floats, 0
     * when timing-only) alone, and stores the pointers in `state`. Called after configure,
     * once on a sizing arena (every pointer NULL: the memory guard's count) and once on the
     * run's, before start; what it asks for is zeroed, and freed after fini. */
    void (*buffers)(void *state, sim_arena *a, size_t num_params);
    /* Optional: figures for summary.json's protocol_report, at the end of the run. */
    void (*report)(const void *state, const sim_ctx *ctx, sim_report *out);
    /* Optional: bytes the protocol's own run state takes outside the arena (the kit's objects
     * that cannot live in it: butterflies by coll_bfly_memory; and buffers the runtime may
     * take over, such as sim_ctx_take_grad's; the kit's graphs, hub, rings, means, barriers,
     * rejoin service and parameter server are in the arena, counted by its sizing pass) with
     * models of `num_params` floats (0: timing-only), from the configured state, counted into
     * the run's memory check, including the message snapshots it keeps written at once at
     * most (copies, slices, and aliases copied on write: proto_snapshot_bytes each; an alias
     * its worker has not written since the send costs nothing). */
    uint64_t (*memory)(const void *state, size_t num_params);
    /* Optional: how many aliases (SIM_PAYLOAD_PARAMS sends) the protocol may have copied on write
     * at once at most, not counted by `memory`. Whether a worker writes while its model is
     * still in flight is a race of its sends against its iteration, so the copies a run
     * reaches depend on its timing (a tenth to all of this bound): the runtime writes this
     * many model buffers at set-up, the most recently freed are taken first, and the run's
     * memory is its estimate from the start whatever the timing. */
    uint64_t (*copies)(const void *state);
    /* Optional: asked when no message is in flight and every pending event is an evaluation,
     * a link window, a failure or one of the protocol's timers (runtime/run.c, the stall
     * rule; no recovery is to come): true when none of those failures and timers can ever
     * let a worker compute again, so the run has stalled now. NULL: they may (the run goes
     * on to them). */
    bool (*stuck)(const void *state, const sim_ctx *ctx);
    void (*fini)(void *state); /* optional: frees start's work */
} proto_ops;

/* Resident bytes of one written snapshot of `nfloats` floats: the run's pool keeps a
 * model-sized buffer per snapshot, but only the pages written are resident (a slice's few,
 * with on average one page it shares only in part with the rest of its buffer). */
static inline uint64_t proto_snapshot_bytes(size_t nfloats)
{
    return nfloats > 0 ? (uint64_t)nfloats * 4 + 4096 : 0;
}

/* Resident bytes of one written copy of a slice of `nfloats` floats of a model of
 * `num_params` (0: timing-only, no copy): its buffer from the pool of its size class
 * (runtime/state.h: at least 1024 floats, a power of two, at most the model) and the handle's
 * tables; of a buffer of a page or more only the pages written are resident (runtime/snap.c). */
uint64_t proto_slice_bytes(size_t num_params, size_t nfloats);

/* Bytes a message in flight holds in the engine's and the network's tables, beyond the
 * runtime's allowance per worker (measured: 550 to 680 bytes a message with 300,000 to
 * 640,000 in flight over a star network, timing-only moshpit rounds of 4000 workers). */
#define PROTO_MESSAGE_BYTES 640

#endif
