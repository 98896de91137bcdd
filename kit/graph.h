/* Named graphs over workers 0..n-1, the kit's shared topology for decentralized protocols.
 *
 * A graph_spec names a graph (kind, size, shape parameters). Without allocating anything,
 * graph_spec_check validates it, graph_edge_count counts its directed edges and
 * graph_degree_range gives its smallest and largest out-degree, so that a protocol's
 * configure can check limits (runtime/proto.h: configure allocates nothing). A built graph's
 * arrays come from the run's arena (runtime/arena.h): graph_reserve asks for them in the
 * owner's `buffers` hook (runtime/proto.h), from the spec alone (their sizes are known once
 * the owner is configured), so that the runtime's sizing pass counts them for the memory
 * guard; graph_build then builds the graph into them, in start (a random kind draws from the
 * run's stream there), as compact adjacency arrays (CSR): worker i's out-edges are the slots
 * off[i]..off[i+1]-1 of adj, its neighbours in ascending order, never itself, never twice.
 * An undirected graph stores each edge once in each direction (slot i -> j and slot j -> i)
 * and its in-lists are its out-lists. rev[e] is the slot of edge e among the in-edges of its
 * head: for an undirected graph the slot of the same edge seen from the other end.
 *
 * Ownership: the caller owns the `graph` itself (a field of its state); the arena owns its
 * arrays and frees them at the run's end (there is no graph_fini). A random regular draw's
 * temporaries (4 (n d + 2 n) bytes) are malloc'd and freed before graph_build returns: not
 * counted by the guard, a peak below the graph's own arrays, for a kind no protocol offers.
 *
 * Kinds (offsets are taken mod n, "i +- d" lists i + d and i - d):
 *   ring                    i +- 1
 *   double ring             i +- 1, i +- 2
 *   torus                   rows x cols with wrap-around, worker w at (w / cols, w % cols),
 *                           neighbours up, down, left, right
 *   exponential             i +- 2^m for 2^m <= n - 1
 *   bipartite exponential   i +- 1, i +- (1 + 2^m) for m >= 1, 2^m <= n - 1, keeping only
 *                           edges between workers of different parity (AD-PSGD's graph: for
 *                           even n every offset is odd, so no edge is dropped)
 *   complete                every other worker
 *   star                    worker 0 linked to every other worker
 *   random regular          every degree d, drawn from a gsl_rng (same stream state, same
 *                           graph); connected when d >= 2
 * Directed forms (spec.directed) exist for ring, double ring, exponential (the + offsets
 * only: i -> i + d) and torus (down and right); spec.bipartite keeps only the edges between
 * different parities of ring, double ring and exponential (AD-PSGD's ring).
 *
 * Beside the built graphs, allocation-free functions give the groups of a d-dimensional
 * grid along one axis (Moshpit's and Ripples' groups) and the out-peers of SGP's
 * time-varying directed exponential graph. Nothing here keeps static mutable state.
 */
#ifndef KIT_GRAPH_H
#define KIT_GRAPH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <gsl/gsl_rng.h>

#include "runtime/arena.h"
#include "sim/err.h"

/* No worker / no slot / unreachable. */
#define GRAPH_NONE UINT32_MAX

/* The most edges a built graph may hold (slots are uint32_t). */
#define GRAPH_MAX_EDGES ((uint64_t)UINT32_MAX - 1)

typedef enum graph_kind {
    GRAPH_RING = 0,
    GRAPH_DOUBLE_RING = 1,
    GRAPH_TORUS = 2,
    GRAPH_EXPONENTIAL = 3,
    GRAPH_BIPARTITE_EXPONENTIAL = 4,
    GRAPH_COMPLETE = 5,
    GRAPH_STAR = 6,
    GRAPH_RANDOM_REGULAR = 7
} graph_kind;

typedef enum graph_weighting {
    GRAPH_METROPOLIS = 0, /* W_ij = 1 / (1 + max(d_i, d_j)) */
    GRAPH_UNIFORM = 1     /* W_ij = 1 / (1 + d_i); regular graphs only */
} graph_weighting;

typedef struct graph_spec {
    graph_kind kind;
    uint32_t n;      /* workers, >= 1 */
    uint32_t rows;   /* torus: rows, dividing n; 0: graph_torus_rows(n) */
    uint32_t degree; /* random regular: d, 1 <= d <= n - 1, n * d even */
    bool directed;   /* ring, double ring, exponential, torus: the directed form */
    bool bipartite;  /* ring, double ring, exponential: only edges joining parities */
} graph_spec;

typedef struct graph {
    uint32_t n;       /* workers */
    bool directed;    /* in-lists differ from out-lists */
    uint32_t edges;   /* directed edges (slots): off[n] */
    uint32_t *off;    /* (n + 1) out-edges of i: slots off[i]..off[i+1]-1 */
    uint32_t *adj;    /* (edges) the out-neighbour, ascending within a worker */
    uint32_t *rev;    /* (edges) the slot of this edge among its head's in-edges */
    uint32_t *in_off; /* (n + 1) in-edges of i; the same array as off when undirected */
    uint32_t *in_adj; /* (edges) the in-neighbour, ascending; adj when undirected */
    uint32_t *in_rev; /* (edges) the out-slot (at its tail) of each in-edge; rev when undirected */
} graph;

/* ---- specs, without allocation ---- */

/* The kind's name ("ring", "double_ring", "torus", "exponential", "bipartite_exponential",
 * "complete", "star", "random_regular"). */
const char *graph_kind_name(graph_kind kind);

/* The default torus rows for n workers: the largest divisor of n not above sqrt(n) (16: 4,
 * 12: 3, a prime: 1, which makes the torus a ring). */
uint32_t graph_torus_rows(uint32_t n);

/* Checks a spec: SIM_EINVAL with a message (no path: the caller knows its keys) for n = 0,
 * torus rows not dividing n, a random regular degree out of range or with n * d odd, a
 * directed or bipartite form the kind lacks. */
int graph_spec_check(const graph_spec *spec, sim_err *err);

/* Directed edges (the sum of out-degrees; twice the undirected edges) of a checked spec. */
uint64_t graph_edge_count(const graph_spec *spec);

/* The smallest and largest out-degree of a checked spec's graph. */
void graph_degree_range(const graph_spec *spec, uint32_t *lo, uint32_t *hi);

/* ---- lifecycle ---- */

/* Asks the arena `a` for the arrays of a built graph of `spec` and stores them in g (zeroed
 * first), from an owner's buffers hook: on the sizing arena the bytes are counted and g's
 * arrays stay NULL; on the run's arena g gets them (zeroed) and records the spec's workers,
 * form and edges. Asks for nothing for a spec graph_build would refuse (graph_spec_check, more
 * than GRAPH_MAX_EDGES edges), which graph_build then reports. */
void graph_reserve(graph *g, sim_arena *a, const graph_spec *spec);

/* Builds the graph of `spec` into the arrays graph_reserve gave g for that spec, allocating
 * none (see Ownership above). `r` draws the random regular graph and is not used (may be NULL)
 * for the other kinds. SIM_EINVAL for a spec graph_spec_check refuses or with more than
 * GRAPH_MAX_EDGES edges, or arrays not reserved for a graph of its workers, form and edges;
 * SIM_ENOMEM (a random draw's temporaries) or SIM_ENUMERIC when no connected random regular
 * graph came out of 1000 draws (g's arrays then hold no graph; a later graph_build may reuse
 * them). */
int graph_build(graph *g, const graph_spec *spec, gsl_rng *r, sim_err *err);

/* ---- queries ---- */

static inline uint32_t graph_out_degree(const graph *g, uint32_t i)
{
    return g->off[i + 1] - g->off[i];
}

static inline uint32_t graph_in_degree(const graph *g, uint32_t i)
{
    return g->in_off[i + 1] - g->in_off[i];
}

/* The slot of edge i -> j, or GRAPH_NONE (binary search of i's out-list). */
uint32_t graph_slot(const graph *g, uint32_t i, uint32_t j);

/* The in-slot of edge j -> i, or GRAPH_NONE (binary search of i's in-list). */
uint32_t graph_in_slot(const graph *g, uint32_t i, uint32_t j);

/* The largest out-degree of a built graph. */
uint32_t graph_max_degree(const graph *g);

/* Shortest-path hop counts from `src` along out-edges (BFS): dist[v] for every worker v,
 * GRAPH_NONE when unreachable. dist and queue are caller-provided arrays of n entries. */
void graph_distances(const graph *g, uint32_t src, uint32_t *dist, uint32_t *queue);

/* Mixing weights of an undirected graph: w[e] = W_ij on slot e = i -> j, self[i] = W_ii =
 * 1 - sum_j W_ij (the sum in double over the float weights, in slot order). Each W_ij is
 * rounded to float once from the same formula on both ends, so the float matrix is exactly
 * symmetric. w has g->edges floats, self n. SIM_EINVAL for a directed graph, or uniform
 * weights on an irregular one. */
int graph_weights(const graph *g, graph_weighting how, float *w, float *self, sim_err *err);

/* ---- grids (Moshpit, Ripples) ---- */

/* True if dims[0..ndims) are all >= 1 and multiply to n. Worker w's coordinate on axis a
 * is (w / stride_a) % dims[a], with stride_0 = 1 and stride_a = dims[0] * ... * dims[a-1]. */
bool graph_grid_valid(const uint32_t *dims, uint32_t ndims, uint32_t n);

/* Worker w's group along `axis` (the workers that differ from w only on that axis), in
 * ascending order, into members (room for dims[axis]); returns dims[axis]. */
uint32_t graph_grid_line(const uint32_t *dims, uint32_t ndims, uint32_t axis, uint32_t w,
                         uint32_t *members);

/* Worker w's coordinate on `axis`: (w / stride_axis) % dims[axis]. */
uint32_t graph_grid_coord(const uint32_t *dims, uint32_t ndims, uint32_t axis, uint32_t w);

/* The index of worker w's group along `axis`, in 0..n / dims[axis] - 1: w with its
 * coordinate on that axis removed. */
uint32_t graph_grid_group(const uint32_t *dims, uint32_t ndims, uint32_t axis, uint32_t w);

/* ---- SGP's time-varying directed exponential graph ---- */

/* Rounds in one cycle of the schedule: floor(log2(n - 1)) + 1 (1 when n <= 2). */
uint32_t graph_sgp_period(uint32_t n);

/* Worker i's t-th out-peer (t from 0) at round k: (i + 2^h) mod n with h = (k + t) mod
 * graph_sgp_period(n). With t = 0, the one peer of the default schedule. i itself when
 * n = 1. */
uint32_t graph_sgp_peer(uint32_t n, uint64_t k, uint32_t i, uint32_t t);

/* ---- The Moshpit authors' SGP averager (averaging table of arXiv 2103.03239) ----
 *
 * yandex-research/moshpit-sgd, averaging_experiments/averager.py, GradientPushAverager with
 * num_outgoing_edges = p: matrix h (h = 0..period-1) is D + sum over t < p of D rolled by
 * 2^(h+t), D = I/p, where the roll is numpy's without an axis: over the flattened n x n
 * matrix, so the diagonal entry of row i lands at flat index (i (n+1) + s) mod n^2, i.e. in
 * column (i + s) mod n of row i when i + s < n, else of row i + 1 (of row 0 for the last
 * row). Round k (from 0; the authors count iterations from 1) uses matrix (k + 1) mod
 * period. Row r is worker r's pull: its new value is the mean of the entries of its row
 * (rows renormalised over the workers that take part). */

/* Matrices in the cycle: floor(log2(n - 1)); 0 when n < 3 (the authors' code then divides
 * by zero). */
uint32_t graph_mavg_period(uint32_t n);

/* The row (the worker that receives) of column j's entry t (0..p-1) in round k's matrix;
 * j itself for an entry on the diagonal. n >= 3. */
uint32_t graph_mavg_receiver(uint32_t n, uint64_t k, uint32_t j, uint32_t t);

#endif
