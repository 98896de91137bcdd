/* Internal header of D-PSGD (protocols/dpsgd.c: iterations, mixing, failures, report;
 * protocols/dpsgd_config.c: configuration, graph, buffers, copies): only those two files
 * include it. The protocol is described in dpsgd.c. */
#ifndef PROTOCOLS_DPSGD_STATE_H
#define PROTOCOLS_DPSGD_STATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kit/graph.h"
#include "kit/rejoin.h"
#include "runtime/arena.h"
#include "runtime/ctx.h"
#include "runtime/proto.h"
#include "sim/cfg.h"
#include "sim/err.h"

/* Worker states. */
enum {
    DP_DOWN = 0,
    DP_RUNNING = 1,
    DP_FETCHING = 2 /* recovered, waiting for a neighbour's model */
};

/* Message kinds, in the message's arg; the tag is the sender's iteration. */
enum {
    MSG_MODEL = 0,
    MSG_FETCH = 1,
    MSG_REPLY = 2
};

/* Per directed edge flags. */
enum {
    GOT_EVEN = 1, /* the neighbour's model of the even iteration in play was accumulated */
    GOT_ODD = 2,  /* ... of the odd one */
    DEFERRED = 4  /* this end's model of its current iteration is held back (flow control) */
};

enum {
    MAX_SLOTS = 1 << 25 /* directed edges of all workers together (21 bytes each, 704 MB) */
};

/* A worker's state (proto_ops.worker_size, sim_ctx_worker). */
typedef struct dp_worker {
    uint64_t k;    /* current iteration */
    uint32_t need; /* neighbours' models of iteration k still expected */
    uint8_t state; /* DP_* */
    bool computed; /* the gradient of iteration k is done */
} dp_worker;

typedef struct dpsgd {
    uint32_t n;           /* workers */
    int graph, weights;   /* indexes into graph_names, weight_names */
    graph_spec spec;      /* the graph, checked by configure */
    uint32_t rows, cols;  /* torus shape */
    graph g;              /* (arena) built by start: off, adj (ascending), rev */
    float *weight;        /* (edges, arena) W_ij */
    uint64_t *act;        /* (edges, arena) first iteration the edge is mixed again (rejoins) */
    uint8_t *flags;       /* (edges, arena) GOT_EVEN | GOT_ODD | DEFERRED */
    float *self;          /* (n, arena) W_ii */
    rejoin *rj;           /* the kit's service: the fetches of recovered workers (dp_rejoin) */
    size_t nparams;       /* floats per model, 0 for the timing-only model */
    float *acc;           /* (n, 2, nparams, arena) accumulators by iteration parity */
    uint64_t bytes;       /* S */
    uint32_t max_degree;  /* report */
    uint64_t mixes;       /* iterations completed */
    uint64_t degraded;    /* of which mixed without some neighbour */
    uint64_t models_sent; /* model messages */
    uint64_t deferred;    /* model messages held back by flow control */
    uint64_t max_gap;     /* largest iteration gap on a joined edge */
} dpsgd;

/* The graph kinds by the index of "graph" (dpsgd_config.c). */
extern const graph_kind dp_graph_kinds[];

/* ---- dpsgd_config.c ---- */

/* Builds the graph, its weights and the per-edge and per-worker state (start). */
int dp_build_graph(dpsgd *st, sim_err *err);

/* The ops table's configure, buffers and copies. */
int dp_configure(void *state, sim_cfg *cfg, const proto_setup *setup, sim_err *err);
void dp_buffers(void *state, sim_arena *a, size_t num_params);
uint64_t dp_copies(const void *state);

#endif
