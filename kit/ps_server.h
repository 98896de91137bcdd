/* The parameter-server engine of the protocol kit (PROTOCOLS §1.3): K shards, workers that
 * pull, compute and push, in BSP, ASP or SSP, with a mode that can change at run time.
 *
 * `ps` is this engine in one fixed mode; `syncswitch` runs it in BSP, then ASP (§6). A
 * protocol owns one engine: it parses the shared keys in configure (ps_server_configure),
 * asks for the engine in its arena in its buffers hook (ps_server_buffers), sets it up in
 * start (ps_server_init) and hands it every event of the four runtime kinds; the arena frees
 * it with the run. How the engine works (slices, messages, rounds, failures) is described at the
 * top of kit/ps_server_run.c.
 *
 * Changing mode is a drain: ps_server_drain (or a budget that runs out) stops workers from
 * starting iterations; the work in flight lands (a BSP round in flight completes; every push
 * is applied), then the `drained` hook runs. The owner then calls ps_server_resume with the
 * new mode, at once or later (a simulated checkpoint-and-restart pause): every live worker
 * pulls the model afresh, so the new mode starts from exactly the model the old one left.
 */
#ifndef KIT_PS_SERVER_H
#define KIT_PS_SERVER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "runtime/arena.h"
#include "runtime/ctx.h"
#include "runtime/proto.h"
#include "sim/cfg.h"
#include "sim/engine.h"
#include "sim/err.h"

enum {
    PS_BSP = 0,
    PS_ASP = 1,
    PS_SSP = 2
};

enum {
    PS_PLACE_SERVERS = 0,
    PS_PLACE_COLOCATED = 1
};

/* The engine's own timer kinds (a colocated shard's failover, overlap's pushes, bsp's
 * synchronization overhead); an owner's timers use kinds below them and hand these to
 * ps_server_on_event with the rest. */
enum {
    PS_SERVER_EV_FAILOVER = SIM_EV_USER + 64,
    PS_SERVER_EV_PUSH = SIM_EV_USER + 65, /* overlap: a worker's next gradient slices are ready */
    PS_SERVER_EV_SYNC = SIM_EV_USER + 66  /* bsp: a worker's synchronization overhead is over */
};

/* The most shards $.protocol.shards accepts: as many as a run may have workers (the
 * scenario's limit, 2^20); the hosts of the placement bound it further. */
#define PS_SERVER_MAX_SHARDS (1u << 20)

typedef struct ps_server_config {
    int mode;             /* PS_BSP, PS_ASP or PS_SSP at the start */
    int placement;        /* PS_PLACE_* */
    int64_t staleness;    /* ssp: the bound s */
    uint32_t workers;     /* N */
    uint32_t shards;      /* K */
    sim_time failover_ns; /* colocated: a shard's host down this long moves it (0: never) */
    bool switchable;      /* the mode may change: keep BSP's buffers whatever the start mode */
    bool overlap;     /* push each gradient slice when backward has produced it, pull per slice */
    bool layered;     /* overlap with several layers: the slices' layers and arrival times */
    bool momentum;    /* the workload has momentum: the server model's momentum buffer */
    sim_time sync_ns; /* bsp: a worker's wait between its complete pull and its iteration (0) */
} ps_server_config;

/* What the owner hears (every member optional). */
typedef struct ps_server_hooks {
    void *ud;
    /* The learning rate and momentum coefficient of an update in `mode`; `step` counts the
     * updates the shard has applied since the mode last changed (in BSP, rounds). Without
     * it: sim_ctx_rates. BSP asks once per round. */
    void (*rates)(void *ud, const sim_ctx *ctx, int mode, uint64_t step, double *lr,
                  double *momentum);
    /* Worker w has pushed (and counted) an iteration in `mode`. */
    void (*counted)(void *ud, sim_ctx *ctx, uint32_t w, int mode);
    /* Every gradient slice of worker w's iteration has reached its shard, `own_ns` after the
     * later of its pull request and the model it pulled being ready (its own part of the
     * iteration: pull, compute, push, without waiting for others). */
    int (*arrived)(void *ud, sim_ctx *ctx, uint32_t w, sim_time own_ns, sim_err *err);
    /* A drain has completed: every live worker holds and nothing is in flight. */
    int (*drained)(void *ud, sim_ctx *ctx, sim_err *err);
} ps_server_hooks;

/* Figures of a run so far. */
typedef struct ps_server_stats {
    uint64_t rounds;    /* BSP rounds completed by every shard */
    uint64_t updates;   /* optimizer steps applied to slices */
    uint64_t max_gap;   /* largest started-minus-slowest-finished clock gap */
    uint64_t pulls;     /* pulls completed (all K slices in) */
    uint64_t pushes;    /* gradients pushed (K slices each) */
    uint64_t lost;      /* gradient slices lost with a down shard (asp, ssp) */
    uint64_t stale_n;   /* ASP/SSP gradient slices applied */
    uint64_t stale_sum; /* sum of their staleness */
    uint64_t stale_max; /* largest staleness */
    uint64_t failovers; /* colocated shards moved off a down host */
} ps_server_stats;

typedef struct ps_server ps_server;

/* Reads $.protocol.placement (default `placement`, a PS_PLACE_*; -1: "servers" when the
 * run has server hosts, else "colocated"), $.protocol.shards (default one shard per host of
 * the placement: every server host, or every worker), $.protocol.overlap (true) and,
 * colocated, $.protocol.failover_s (1; 0: never) into c, checks them against the owner's
 * `setup` (its configure hook's), and sets c->workers, c->layered and c->momentum. The
 * defaults are written into the resolved scenario. $.protocol.sync_overhead_ms (BSP's
 * per-round synchronization overhead) is read only when given (0 otherwise, not written), and
 * refused when the engine runs no BSP round (c->mode not BSP, c->switchable false). */
int ps_server_configure(ps_server_config *c, sim_cfg *cfg, const proto_setup *setup, int placement,
                        sim_err *err);

/* Bytes the engine takes outside the owner's arena (the messages' snapshots) with models of
 * `num_params` floats: the owner's memory hook adds them. */
uint64_t ps_server_memory(const ps_server_config *c, size_t num_params);

/* Asks for the engine and all its tables (per worker, per shard, per pair, the server model
 * and, as `c` needs them, its momentum, BSP's round mean and gradients, overlap's slice
 * layers) in the run's arena, from the owner's buffers hook (runtime/proto.h) with its
 * configured `c`: the engine, zeroed, on the run's arena (the arena owns it: nothing to free),
 * NULL on a sizing arena. c->mode or c->switchable must already say whether BSP may run. */
ps_server *ps_server_buffers(const ps_server_config *c, sim_arena *a, size_t num_params);

/* Sets up the engine `s` of ps_server_buffers for the run of `ctx` (its server model a copy
 * of worker 0's initial parameters, which evaluation then reads) with the same `c` (whose mode
 * is the start's). `hooks` (may be NULL) is copied. Cannot fail. */
void ps_server_init(ps_server *s, sim_ctx *ctx, const ps_server_config *c,
                    const ps_server_hooks *hooks);

/* Every live worker joins and starts its first pull. */
int ps_server_start(ps_server *s, sim_ctx *ctx, sim_err *err);

/* Handles SIM_EV_COMPUTED, SIM_EV_MSG, SIM_EV_WORKER_DOWN, SIM_EV_WORKER_UP,
 * PS_SERVER_EV_FAILOVER, PS_SERVER_EV_PUSH and PS_SERVER_EV_SYNC. */
int ps_server_on_event(ps_server *s, sim_ctx *ctx, const sim_event *ev, sim_err *err);

int ps_server_mode(const ps_server *s);
bool ps_server_draining(const ps_server *s);

/* Whether no worker can compute again before a recovery, whatever failures and the engine's
 * or its owner's timers do: a colocated shard's host is down and `failover_s` is 0, and no
 * live worker computes, waits out its synchronization overhead, or pulls with that shard's
 * slice (or that of another such shard) already in: every pull to come needs it. For the
 * owner's `stuck` hook (runtime/proto.h). */
bool ps_server_stuck(const ps_server *s, const sim_ctx *ctx);

/* BSP: after every worker has pushed round `round` (counted from the start of the run), the
 * engine drains. ASP and SSP: after `iterations` more iterations have started, it drains.
 * UINT64_MAX: no budget. */
void ps_server_drain_after_round(ps_server *s, uint64_t round);
void ps_server_drain_after(ps_server *s, uint64_t iterations);

/* Drains now: no worker starts another iteration. The `drained` hook runs when the work in
 * flight has landed (possibly within this call). */
int ps_server_drain(ps_server *s, sim_ctx *ctx, sim_err *err);

/* After a drain: switches to `mode` and makes every live worker pull afresh. */
int ps_server_resume(ps_server *s, sim_ctx *ctx, int mode, sim_err *err);

/* The server model and its momentum buffer (NULL without momentum or tensors), num_params
 * floats each. The owner may change them only while drained. */
const float *ps_server_model(const ps_server *s);
float *ps_server_velocity(ps_server *s);

void ps_server_get_stats(const ps_server *s, ps_server_stats *out);

#endif
