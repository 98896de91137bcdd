/* Internal header of AD-PSGD (protocols/adpsgd.c: configuration, iterations, failures,
 * report; protocols/adpsgd_exchange.c: the pairwise exchanges and the gradients' steps):
 * only those two files include it. The protocol itself is described in adpsgd.c. */
#ifndef PROTOCOLS_ADPSGD_STATE_H
#define PROTOCOLS_ADPSGD_STATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kit/graph.h"
#include "runtime/ctx.h"
#include "sim/err.h"

enum {
    MSG_REQUEST = 1, /* active -> passive, S bytes (x_i as sent); seq = its exchange number */
    MSG_REPLY = 2    /* passive -> active, S bytes and a snapshot of x_j; the same seq */
};

enum {
    EV_TIMEOUT = SIM_EV_USER /* dst = active worker, arg[0] = its exchange number */
};

#define AD_NOBODY UINT32_MAX /* no worker */

typedef struct ad_request {
    uint32_t from; /* active worker */
    uint32_t seq;  /* its exchange number */
} ad_request;

/* A worker's state (proto_ops.worker_size, sim_ctx_worker). */
typedef struct ad_worker {
    /* An active worker's exchange. */
    bool exchanging;
    uint32_t peer;      /* the passive worker asked */
    uint32_t seq;       /* attempts started so far; names messages and timers */
    bool owed;          /* the iteration in progress has had no exchange started yet */
    sim_time sent_ns;   /* when the attempt's request left */
    sim_time wait_ns;   /* when the exchange's first attempt left (retries keep it) */
    sim_event_id timer; /* the attempt's timeout */
    uint32_t snap;      /* its model as the attempt's request sent it, taken before its first
                           step since (SIM_CTX_NO_SNAPSHOT: none, the model is still that) */
    /* A passive worker's service. */
    uint32_t serving;     /* the requester whose reply is on its way, or AD_NOBODY */
    uint32_t serving_seq; /* that requester's exchange number */
    sim_time serve_ns;    /* when the reply left */
    uint32_t qhead, qlen; /* FIFO in queue[g.off[w]..g.off[w+1]) */
} ad_worker;

typedef struct adpsgd {
    uint32_t n;              /* workers */
    int graph;               /* 0: bipartite exponential, 1: ring (bipartite) */
    graph_spec spec;         /* the graph, checked by configure */
    double timeout_ms;       /* exchange_timeout_ms as configured, 0: automatic */
    sim_time timeout_ns;     /* the timeout in force, set at start */
    graph g;                 /* (arena) built by start: neighbours ascending, other parity */
    ad_request *queue;       /* (g.edges, arena) a passive worker's FIFO, a slot a neighbour */
    size_t nparams;          /* floats per model, 0 when timing-only */
    uint64_t bytes;          /* S */
    sim_time now_ns;         /* time of the last event handled */
    uint64_t exchanges;      /* committed exchanges */
    uint64_t cross;          /* ... between an odd active and an even passive worker */
    uint64_t timeouts;       /* attempts abandoned */
    uint64_t stale_requests; /* requests dropped because their requester had given up */
    uint64_t stale_replies;  /* replies that arrived after their requester gave up */
    uint64_t moved_ends;     /* committed exchanges' ends that had stepped since they sent */
    uint32_t max_queue;      /* longest queue of waiting requesters */
    sim_time max_wait_ns;    /* longest exchange, from its first request to its commit */
    sim_time max_serve_ns;   /* longest service, from the reply leaving to its end */
    double exchange_s;       /* summed duration of the committed attempts */
} adpsgd;

static inline bool ad_passive(uint32_t w)
{
    return (w & 1) == 0;
}

static inline uint32_t ad_degree(const adpsgd *st, uint32_t w)
{
    return graph_out_degree(&st->g, w);
}

/* ---- adpsgd_exchange.c ---- */

/* Worker w's new gradient: one optimizer step at once, an active worker in an exchange first
 * keeping its model as its request sent it (snap), if it has not stepped since. */
int ad_apply_gradient(adpsgd *st, sim_ctx *ctx, uint32_t w, sim_err *err);

/* Active worker w's exchange is over (committed, abandoned, or w failed): its snapshot goes. */
void ad_end_exchange(sim_ctx *ctx, uint32_t w);

/* Active worker i sends a request to a neighbour drawn from its stream (any but the last peer
 * for a retry). */
int ad_start_exchange(adpsgd *st, sim_ctx *ctx, uint32_t i, bool retry, sim_err *err);

/* Passive worker j is free: it serves its next queued requester, if any. */
int ad_serve_next(adpsgd *st, sim_ctx *ctx, uint32_t j, sim_err *err);

/* The messages and the timeout of an exchange (see adpsgd.c's file comment). */
int ad_on_request(adpsgd *st, sim_ctx *ctx, uint32_t j, uint32_t i, uint32_t seq, sim_err *err);
int ad_on_reply(adpsgd *st, sim_ctx *ctx, uint32_t i, uint32_t j, uint32_t seq, sim_err *err);
int ad_on_timeout(adpsgd *st, sim_ctx *ctx, uint32_t i, uint32_t seq, sim_err *err);

#endif
