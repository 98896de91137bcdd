/* The parameter-server engine's internals, shared by kit/ps_server_run.c (failures, mode
 * changes, the events' dispatch), kit/ps_server_iter.c (messages, workers, shards: the
 * iterations; the pss_* functions below, which only ps_server_run.c calls) and
 * kit/ps_server_setup.c (configuration, the engine's buffers in its owner's arena and
 * their set-up, queries). Not a public header: only those three files include it;
 * ps_server_setup.c and ps_server_iter.c call nothing of ps_server_run.c. The engine is
 * described at the top of kit/ps_server_run.c. */
#ifndef KIT_PS_SERVER_STATE_H
#define KIT_PS_SERVER_STATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kit/ps_server.h"
#include "runtime/ctx.h"
#include "sim/engine.h"
#include "sim/err.h"

/* A worker's phase. */
enum {
    W_DOWN = 0,
    W_BLOCKED = 1, /* ssp: waiting for the slowest worker */
    W_PULL = 2,    /* waiting for slices */
    W_COMPUTE = 3,
    W_HOLD = 4, /* draining: holds until the resume */
    W_SYNC = 5  /* bsp: its pull is complete, its synchronization overhead not yet over */
};

/* Flags of a (worker, shard) pair. */
enum {
    L_AWAIT = 1,    /* the shard's slice of the worker's current pull is expected */
    L_PUSH_OUT = 2, /* a push sent (or, bsp, held while the shard is down) not yet received */
    L_QUEUED = 4,   /* a pull request waits at the shard */
    L_PUSHED = 8    /* bsp: the worker's gradient for the shard's open round is stored */
};

typedef struct ps_shard {
    uint32_t host;
    size_t off, len;        /* the slice: floats [off, off + len) */
    uint64_t bytes;         /* bytes of a slice or gradient message */
    uint64_t round;         /* bsp: rounds applied */
    uint32_t pending;       /* bsp: live members of the open round that have not pushed */
    uint32_t npushed;       /* bsp: gradients stored for the open round */
    uint32_t nqueued;       /* pull requests waiting */
    uint64_t updates;       /* optimizer steps applied to the slice */
    uint64_t phase_updates; /* the same since the mode last changed */
    sim_time down_since;    /* colocated: when its host last went down */
} ps_shard;

typedef struct ps_worker {
    uint8_t phase;     /* W_* */
    uint32_t need;     /* slices of the current pull still expected */
    uint32_t got;      /* slices of the last push received */
    uint64_t clock;    /* iterations pushed */
    uint64_t round;    /* bsp: the round it pulls or computes */
    uint64_t joined;   /* bsp: the round it (re)joined at */
    sim_time req_ns;   /* when its current pull was requested */
    sim_time ready_ns; /* when a shard last answered a queued request of that pull */
    sim_time iter_ns;  /* its last pushed iteration's start: max(req_ns, ready_ns) */
    uint32_t unpushed; /* overlap: slices [0, unpushed) of its iteration not yet pushed */
    uint64_t starts;   /* iterations started (which one a PS_SERVER_EV_PUSH is for) */
    uint64_t syncs;    /* synchronization waits begun (which one a PS_SERVER_EV_SYNC is for) */
} ps_worker;

/* The engine, its tables and its model blocks: all in the owner's arena (ps_server_buffers).
 * Its worker table stays the engine's own rather than the owner's worker_size: the owner's
 * per-worker struct would have to embed this internal type. */
struct ps_server {
    int mode, placement;
    int64_t staleness;
    uint32_t n, K;
    sim_time failover_ns; /* colocated: 0 = never */
    sim_time stop_ns;     /* stop.time_s (SIM_TIME_NEVER: none): a failover after it never comes */
    sim_time sync_ns;     /* bsp: the synchronization overhead of a worker's iteration */
    size_t *first_layer;  /* (K) overlap: the layer holding each slice's first byte; NULL:
                           * every slice is pushed when the iteration ends */
    sim_time *arrive;     /* (n, K) with first_layer: when each slice of the worker's current
                           * pull came in (the forward pass of its layers waits for it) */
    ps_server_hooks hooks;
    ps_worker *w;         /* (n) */
    ps_shard *sh;         /* (K) */
    uint8_t *link;        /* (n, K) L_* flags */
    uint64_t *version;    /* (n, K) the shard's updates when it last sent the worker a slice */
    const float **ptrs;   /* (n) scratch: a round's gradient slices */
    size_t P;             /* floats per model, 0 for the timing-only model */
    float *x;             /* (P) the server model */
    float *v;             /* (P) its momentum, or NULL without momentum */
    float *mean;          /* (P) bsp: a round's mean gradient, slice by slice */
    float *grads;         /* (n, P) bsp: the gradients stored for the open rounds */
    uint64_t min_clock;   /* smallest clock of a live worker (UINT64_MAX: none live) */
    uint32_t at_min;      /* live workers holding it */
    bool draining;        /* no worker starts an iteration */
    bool idle;            /* drained: the hook has run, waiting for the resume */
    uint64_t drain_round; /* bsp: drain once this round is pushed (UINT64_MAX: never) */
    uint64_t budget;      /* asp, ssp: iterations that may still start (UINT64_MAX: any) */
    uint64_t phase_round; /* bsp: the round the mode last changed at */
    uint64_t rate_round;  /* bsp: the round whose rates are cached (UINT64_MAX: none) */
    double rate_lr, rate_momentum;
    ps_server_stats stats;
};

/* ---- kit/ps_server_iter.c ---- */

/* The flags of the (worker w, shard k) pair. */
static inline uint8_t *pss_link(ps_server *s, uint32_t w, uint32_t k)
{
    return &s->link[(size_t)w * s->K + k];
}

/* Whether `host` is a worker that is down (server hosts never fail). */
static inline bool pss_host_down(sim_ctx *ctx, uint32_t host)
{
    return host < sim_ctx_workers(ctx) && sim_ctx_down(ctx, host);
}

/* SIM_EINVAL naming what went wrong between worker w and shard k (an engine bug). */
int pss_broken(sim_err *err, const char *what, uint32_t w, uint32_t k);

/* Recomputes the smallest clock of a live worker and how many hold it; true if it rose. */
bool pss_rescan_min(ps_server *s);

/* Worker w left the clock bookkeeping with clock `old` (advanced, or down); true if the
 * minimum rose. */
bool pss_clock_left(ps_server *s, uint64_t old);

/* Worker w asks shard k for its slice (sent when the shard's host recovers if it is down). */
int pss_request(ps_server *s, sim_ctx *ctx, uint32_t w, uint32_t k, sim_err *err);

/* Worker w pushes slice k of its gradient, computed on the model of `round` (bsp). */
int pss_push(ps_server *s, sim_ctx *ctx, uint32_t w, uint32_t k, uint64_t round, sim_err *err);

/* Worker w starts its next iteration's pull, or holds (draining), or waits (ssp). */
int pss_try_start(ps_server *s, sim_ctx *ctx, uint32_t w, sim_err *err);

/* ssp: blocked workers the slowest's progress now allows start, in id order. */
int pss_wake(ps_server *s, sim_ctx *ctx, sim_err *err);

/* bsp: completes shard k's open round if it can, then answers the queued pulls. */
int pss_close_round(ps_server *s, sim_ctx *ctx, uint32_t k, sim_err *err);

/* The handlers of SIM_EV_MSG, SIM_EV_COMPUTED and PS_SERVER_EV_PUSH. */
int pss_on_message(ps_server *s, sim_ctx *ctx, const sim_event *ev, sim_err *err);
int pss_on_computed(ps_server *s, sim_ctx *ctx, uint32_t w, sim_err *err);
int pss_on_push_timer(ps_server *s, sim_ctx *ctx, uint32_t w, uint64_t starts, sim_err *err);
int pss_on_sync_timer(ps_server *s, sim_ctx *ctx, uint32_t w, uint64_t syncs, sim_err *err);

#endif
