/* The parameter-server engine's internals, shared by protocols/ps_server_run.c (workers, shards,
 * failures, mode changes: the run) and protocols/ps_server_setup.c (configuration, creation
 * and destruction, queries). Not a public header: only those two files include it, and
 * ps_server_setup.c calls nothing of ps_server_run.c. The engine is described at the top of
 * protocols/ps_server_run.c. */
#ifndef PROTOCOLS_PS_SERVER_STATE_H
#define PROTOCOLS_PS_SERVER_STATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "protocols/ps_server.h"
#include "sim/engine.h"

/* A worker's phase. */
enum {
    W_DOWN = 0,
    W_BLOCKED = 1, /* ssp: waiting for the slowest worker */
    W_PULL = 2,    /* waiting for slices */
    W_COMPUTE = 3,
    W_HOLD = 4 /* draining: holds until the resume */
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
} ps_worker;

struct ps_server {
    int mode, placement;
    int64_t staleness;
    uint32_t n, K;
    sim_time failover_ns; /* colocated: 0 = never */
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

#endif
