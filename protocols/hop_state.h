/* Hop's internals, shared by protocols/hop.c (messages, the worker loop, failures, the run),
 * protocols/hop_config.c (configuration) and protocols/hop_queues.c (the update queues,
 * averaging and the checks of PROTOCOLS §3.6). Not a public header: only those three files
 * include it, and the two others call nothing of hop.c. The protocol itself is described at the top
 * of protocols/hop.c. */
#ifndef PROTOCOLS_HOP_STATE_H
#define PROTOCOLS_HOP_STATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kit/graph.h"
#include "kit/rejoin.h"
#include "runtime/proto.h"

enum {
    BAD_GAP = 0,  /* the per-edge gap bound */
    BAD_DIST = 1, /* the distance bound */
    BAD_NEED = 2, /* too few updates in an averaging */
    BAD_STALE = 3 /* an update older than k - s */
};

enum {
    HS_DOWN = 0,
    HS_JOINING = 1,
    HS_TOKENS = 2,    /* waiting to start iteration k */
    HS_COMPUTING = 3, /* computing iteration k */
    HS_UPDATES = 4    /* waiting for the updates of iteration k */
};

/* A worker's state (proto_ops.worker_size, sim_ctx_worker). */
typedef struct hop_worker {
    uint64_t k;       /* current iteration (running or waiting to start) */
    uint64_t join_k;  /* JOINING: the largest iteration answered so far */
    uint64_t join_lo; /* JOINING: the smallest */
    uint64_t skipped; /* iterations skipped */
    uint8_t state;    /* HS_* */
} hop_worker;

typedef struct hop {
    /* parameters */
    uint32_t n;
    int graph, late;
    graph_spec spec;
    uint32_t b, q;
    uint64_t s, gap, max_skip;
    bool skip, tighten;
    /* run state */
    graph g;    /* (arena, hp_buffers) built by start */
    rejoin *rj; /* the kit's service: the JOINs of recovered workers (hp_rejoin in hop.c) */
    /* the run's arena (hp_buffers) */
    uint64_t *tag;    /* (edges, q) held update tags by in-slot, ascending */
    uint32_t *held;   /* (edges, q) their snapshot handles */
    uint32_t *count;  /* (edges) updates held per in-slot */
    uint64_t *seen;   /* (edges) completed iterations reported by the in-neighbour */
    uint8_t *joined;  /* (edges) the gap check applies */
    uint32_t *dist;   /* (n, n) dist[j * n + i] = hops j -> i, or NULL */
    const float **xs; /* (max degree + 1) the models being averaged */
    int32_t *pick_q;  /* (max degree + 1) the update selected per in-slot */
    uint32_t *bfs;    /* (n) the distances' scratch, or NULL */
    size_t nparams;
    uint64_t bytes;
    bool failed; /* a failure happened: the distance check stops */
    /* report */
    uint64_t averagings, used_sum, used_min, degraded, skips, skipped, checks;
    uint64_t bad[4]; /* violations: BAD_GAP, BAD_DIST, BAD_NEED, BAD_STALE */
    int64_t max_gap;
    uint64_t updates_sent, tokens_sent, superseded, late_dropped, rejoins, max_held;
} hop;

/* Worker w's state (proto_ops.worker_size): for the handler acting for w, and for the checks,
 * which observe every worker. Hop's workers learn of each other by messages only (updates,
 * tokens, joins): it makes no sim_ctx_peer read. */
static inline hop_worker *hp_w(const sim_ctx *ctx, uint32_t w)
{
    return sim_ctx_worker(ctx, w);
}

/* Whether worker w takes part (it is not down: its state is HS_DOWN exactly then). */
static inline bool is_up(const sim_ctx *ctx, uint32_t w)
{
    return !sim_ctx_down(ctx, w);
}

/* ---- checks (protocols/hop_queues.c) ---- */

/* The gap bounds at worker i (it just started an iteration or jumped). */
void hp_check_gaps(hop *st, const sim_ctx *ctx, uint32_t i);

/* ---- update queues (protocols/hop_queues.c) ---- */

/* The updates worker i must use in an averaging: min(in-degree - b, up in-neighbours). */
uint32_t hp_need_of(const hop *st, const sim_ctx *ctx, uint32_t i);

/* The queue index of the update in-slot e selects at iteration k, or -1. */
int32_t hp_pick(const hop *st, uint32_t e, uint64_t k);

/* Removes entry q of in-slot e, releasing its snapshot. */
void hp_drop_entry(hop *st, sim_ctx *ctx, uint32_t e, uint32_t q);

/* Releases the updates of in-slot e with tag < lo. */
void hp_drop_below(hop *st, sim_ctx *ctx, uint32_t e, uint64_t lo);

/* Raises the max_held statistic to the updates worker i holds now. */
void hp_note_held(hop *st, sim_ctx *ctx, uint32_t i);

/* Averages x_i with the updates selected for iteration k; returns how many were used. */
uint32_t hp_average(hop *st, sim_ctx *ctx, uint32_t i, uint64_t k);

/* Holds the snapshot of the message being handled as in-slot e's update `tag` (worker i). */
void hp_insert_update(hop *st, sim_ctx *ctx, uint32_t i, uint32_t e, uint64_t tag);

/* ---- configuration (protocols/hop_config.c) ---- */

#define HP_MAX_DIST_N 1024 /* the all-pairs distance check up to this many workers */

/* The ops table's configure, buffers and copies. */
int hp_configure(void *state, sim_cfg *cfg, const proto_setup *setup, sim_err *err);
void hp_buffers(void *state, sim_arena *a, size_t num_params);
uint64_t hp_copies(const void *state);

#endif
