/* Named graphs as CSR adjacency arrays (see kit/graph.h). */
#include "kit/graph.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "kit/graph_state.h"

enum {
    LOCAL_MAX = 72 /* neighbours of an offset graph or torus: 2 * (1 + 32) and spare */
};

static const char *const kind_names[] = {
    "ring",     "double_ring", "torus",          "exponential", "bipartite_exponential",
    "complete", "star",        "random_regular",
};

const char *graph_kind_name(graph_kind kind)
{
    return (unsigned)kind < sizeof(kind_names) / sizeof(kind_names[0]) ? kind_names[kind] : "?";
}

uint32_t graph_torus_rows(uint32_t n)
{
    uint32_t rows = 1;
    for (uint64_t r = 1; r * r <= n; r++)
        if (n % r == 0)
            rows = (uint32_t)r;
    return rows;
}

static uint32_t rows_of(const graph_spec *s)
{
    return s->rows > 0 ? s->rows : graph_torus_rows(s->n);
}

static bool offset_kind(graph_kind k)
{
    return k == GRAPH_RING || k == GRAPH_DOUBLE_RING || k == GRAPH_EXPONENTIAL ||
           k == GRAPH_BIPARTITE_EXPONENTIAL;
}

static bool local_kind(graph_kind k)
{
    return offset_kind(k) || k == GRAPH_TORUS;
}

int graph_spec_check(const graph_spec *s, sim_err *err)
{
    if ((unsigned)s->kind > GRAPH_RANDOM_REGULAR)
        return sim_err_set(err, SIM_EINVAL, NULL, "graph: unknown kind %d", (int)s->kind);
    const char *name = graph_kind_name(s->kind);
    if (s->n == 0)
        return sim_err_set(err, SIM_EINVAL, NULL, "graph: \"%s\" needs at least one worker", name);
    if (s->kind == GRAPH_TORUS && s->n % rows_of(s) != 0)
        return sim_err_set(err, SIM_EINVAL, NULL, "graph: torus rows (%u) must divide %u workers",
                           s->rows, s->n);
    if (s->kind == GRAPH_RANDOM_REGULAR &&
        (s->degree < 1 || s->degree >= s->n || ((uint64_t)s->n * s->degree) % 2 != 0))
        return sim_err_set(err, SIM_EINVAL, NULL,
                           "graph: no %u-regular graph on %u workers (need 1 <= d < n, n * d "
                           "even)",
                           s->degree, s->n);
    if (s->directed && !(local_kind(s->kind) && s->kind != GRAPH_BIPARTITE_EXPONENTIAL))
        return sim_err_set(err, SIM_EINVAL, NULL, "graph: \"%s\" has no directed form", name);
    if (s->bipartite && !offset_kind(s->kind))
        return sim_err_set(err, SIM_EINVAL, NULL, "graph: \"%s\" has no bipartite form", name);
    return SIM_OK;
}

/* The positive offsets of an offset graph into d; returns their count. */
static uint32_t offsets(const graph_spec *s, uint64_t *d)
{
    uint32_t k = 0;
    uint64_t top = s->n > 0 ? (uint64_t)s->n - 1 : 0;
    switch (s->kind) {
    case GRAPH_RING:
        d[k++] = 1;
        break;
    case GRAPH_DOUBLE_RING:
        d[k++] = 1;
        d[k++] = 2;
        break;
    case GRAPH_EXPONENTIAL:
        for (uint64_t p = 1; p <= top; p *= 2)
            d[k++] = p;
        break;
    default: /* GRAPH_BIPARTITE_EXPONENTIAL */
        d[k++] = 1;
        for (uint64_t p = 2; p <= top; p *= 2)
            d[k++] = 1 + p;
        break;
    }
    return k;
}

/* Inserts v into the ascending list out[0..*k) unless it is there already. */
static void insert(uint32_t *out, uint32_t *k, uint32_t v)
{
    uint32_t at = *k;
    while (at > 0 && out[at - 1] > v)
        at--;
    if (at > 0 && out[at - 1] == v)
        return;
    memmove(out + at + 1, out + at, (size_t)(*k - at) * sizeof(*out));
    out[at] = v;
    (*k)++;
}

/* Worker i's out-neighbours in an offset graph or torus, ascending, into out[LOCAL_MAX]. */
static uint32_t local_neighbours(const graph_spec *s, uint32_t i, uint32_t *out)
{
    uint32_t n = s->n, k = 0, cand[8], nc = 0;
    if (s->kind == GRAPH_TORUS) {
        uint32_t R = rows_of(s), C = n / R, r = i / C, c = i % C;
        cand[nc++] = (r + 1) % R * C + c;
        cand[nc++] = r * C + (c + 1) % C;
        if (!s->directed) {
            cand[nc++] = (r + R - 1) % R * C + c;
            cand[nc++] = r * C + (c + C - 1) % C;
        }
        for (uint32_t t = 0; t < nc; t++)
            if (cand[t] != i)
                insert(out, &k, cand[t]);
        return k;
    }
    bool parity = s->bipartite || s->kind == GRAPH_BIPARTITE_EXPONENTIAL;
    uint64_t d[40];
    uint32_t nd = offsets(s, d);
    for (uint32_t t = 0; t < nd; t++) {
        uint64_t off = d[t] % n;
        uint32_t up = (uint32_t)((i + off) % n), down = (uint32_t)((i + n - off) % n);
        if (up != i && (!parity || (up & 1) != (i & 1)))
            insert(out, &k, up);
        if (!s->directed && down != i && (!parity || (down & 1) != (i & 1)))
            insert(out, &k, down);
    }
    return k;
}

/* Worker i's out-degree for the kinds known without drawing (not random regular). */
static uint32_t out_degree(const graph_spec *s, uint32_t i)
{
    uint32_t buf[LOCAL_MAX];
    switch (s->kind) {
    case GRAPH_COMPLETE:
        return s->n - 1;
    case GRAPH_STAR:
        return s->n == 1 ? 0 : i == 0 ? s->n - 1 : 1;
    case GRAPH_RANDOM_REGULAR:
        return s->degree;
    default:
        return local_neighbours(s, i, buf);
    }
}

/* True when every worker of an offset graph has the same out-degree. Worker i's list is
 * {i + off, i - off : off in the offsets} mod n, less i: shifted by -i, a set that does not
 * depend on i. The bipartite filter keeps a neighbour v when v and i differ in parity; with
 * n even, v = i +- off (mod n) has i's parity plus off's, so that depends on off alone too.
 * Only a bipartite filter with n odd (wrapping around flips parities) makes degrees vary. */
static bool uniform_degree(const graph_spec *s)
{
    bool parity = s->bipartite || s->kind == GRAPH_BIPARTITE_EXPONENTIAL;
    return offset_kind(s->kind) && (!parity || s->n % 2 == 0);
}

uint64_t graph_edge_count(const graph_spec *s)
{
    switch (s->kind) {
    case GRAPH_COMPLETE:
        return (uint64_t)s->n * (s->n - 1);
    case GRAPH_STAR:
        return 2 * ((uint64_t)s->n - 1);
    case GRAPH_RANDOM_REGULAR:
        return (uint64_t)s->n * s->degree;
    default: {
        if (uniform_degree(s))
            return s->n > 0 ? (uint64_t)s->n * out_degree(s, 0) : 0;
        uint64_t c = 0;
        for (uint32_t i = 0; i < s->n; i++)
            c += out_degree(s, i);
        return c;
    }
    }
}

void graph_degree_range(const graph_spec *s, uint32_t *lo, uint32_t *hi)
{
    *lo = UINT32_MAX;
    *hi = 0;
    uint32_t n = s->kind == GRAPH_STAR && s->n > 2 ? 2 : s->n; /* hub and one leaf suffice */
    if (s->kind == GRAPH_COMPLETE || s->kind == GRAPH_RANDOM_REGULAR || uniform_degree(s))
        n = s->n > 0 ? 1 : 0;
    for (uint32_t i = 0; i < n; i++) {
        uint32_t d = out_degree(s, i);
        *lo = d < *lo ? d : *lo;
        *hi = d > *hi ? d : *hi;
    }
    if (*lo == UINT32_MAX)
        *lo = 0;
}

/* ---- building ---- */

/* Fills off and adj for the kinds known without drawing. */
static void list_edges(graph *g, const graph_spec *s)
{
    /* One pass: adj holds exactly graph_edge_count's edges, so each list can go where the
     * previous one ended and its length give the next offset (no second neighbour scan). */
    for (uint32_t i = 0; i < s->n; i++) {
        uint32_t *out = g->adj + g->off[i], k = 0;
        if (s->kind == GRAPH_COMPLETE) {
            for (uint32_t j = 0; j < s->n; j++)
                if (j != i)
                    out[k++] = j;
        } else if (s->kind == GRAPH_STAR) {
            for (uint32_t j = 0; j < s->n; j++)
                if (j != i && (i == 0 || j == 0))
                    out[k++] = j;
        } else {
            uint32_t buf[LOCAL_MAX];
            k = local_neighbours(s, i, buf);
            memcpy(out, buf, (size_t)k * sizeof(*out));
        }
        assert(g->off[i] + k <= g->edges); /* graph_edge_count counted every list */
        g->off[i + 1] = g->off[i] + k;
    }
}

/* In-lists (directed graphs) and the reverse indexes. */
static void link_reverse(graph *g)
{
    if (!g->directed) {
        for (uint32_t i = 0; i < g->n; i++)
            for (uint32_t e = g->off[i]; e < g->off[i + 1]; e++)
                g->rev[e] = graph_slot(g, g->adj[e], i);
        return;
    }
    for (uint32_t e = 0; e < g->edges; e++)
        g->in_off[g->adj[e] + 1]++;
    for (uint32_t i = 0; i < g->n; i++)
        g->in_off[i + 1] += g->in_off[i];
    /* Tails in ascending order fill each in-list in ascending order; in_rev counts the
     * entries filled so far at first. */
    for (uint32_t i = 0; i < g->n; i++)
        for (uint32_t e = g->off[i]; e < g->off[i + 1]; e++) {
            uint32_t j = g->adj[e], s = g->in_off[j] + g->in_rev[j];
            g->in_rev[j]++;
            g->in_adj[s] = i;
            g->rev[e] = s;
        }
    for (uint32_t e = 0; e < g->edges; e++)
        g->in_rev[g->rev[e]] = e;
}

/* The sizes of a built graph's arrays for a checked spec of `edges` edges: slots (adj, rev,
 * in_adj) and in_rev (which counts each worker's in-edges while building: n at least); at
 * least one slot, so that an edgeless graph's arrays are not NULL. */
static size_t slot_count(uint64_t edges)
{
    return edges > 0 ? (size_t)edges : 1;
}

static size_t in_rev_count(const graph_spec *s, uint64_t edges)
{
    return slot_count(edges) > s->n ? slot_count(edges) : s->n;
}

void graph_reserve(graph *g, sim_arena *a, const graph_spec *s)
{
    memset(g, 0, sizeof(*g));
    if (graph_spec_check(s, NULL) != SIM_OK)
        return;
    uint64_t edges = graph_edge_count(s);
    if (edges > GRAPH_MAX_EDGES)
        return;
    size_t m = slot_count(edges), rows = (size_t)s->n + 1;
    uint32_t *off = sim_arena_alloc(a, rows, sizeof(*off));
    uint32_t *adj = sim_arena_alloc(a, m, sizeof(*adj));
    uint32_t *rev = sim_arena_alloc(a, m, sizeof(*rev));
    uint32_t *in_off = off, *in_adj = adj, *in_rev = rev;
    if (s->directed) {
        in_off = sim_arena_alloc(a, rows, sizeof(*in_off));
        in_adj = sim_arena_alloc(a, m, sizeof(*in_adj));
        in_rev = sim_arena_alloc(a, in_rev_count(s, edges), sizeof(*in_rev));
    }
    if (off == NULL || adj == NULL || rev == NULL || in_off == NULL || in_adj == NULL ||
        in_rev == NULL)
        return; /* the sizing arena (or an overrun, which fails the run) */
    g->n = s->n;
    g->directed = s->directed;
    g->edges = (uint32_t)edges;
    g->off = off;
    g->adj = adj;
    g->rev = rev;
    g->in_off = in_off;
    g->in_adj = in_adj;
    g->in_rev = in_rev;
}

int graph_build(graph *g, const graph_spec *s, gsl_rng *r, sim_err *err)
{
    int rc = graph_spec_check(s, err);
    if (rc != SIM_OK)
        return rc;
    uint64_t edges = graph_edge_count(s);
    if (edges > GRAPH_MAX_EDGES)
        return sim_err_set(err, SIM_EINVAL, NULL, "graph: \"%s\" on %u workers has %llu edges",
                           graph_kind_name(s->kind), s->n, (unsigned long long)edges);
    if (s->kind == GRAPH_RANDOM_REGULAR && r == NULL)
        return sim_err_set(err, SIM_EINVAL, NULL, "graph: a random regular graph needs a stream");
    if (g->off == NULL || g->n != s->n || g->directed != s->directed || g->edges != edges)
        return sim_err_set(err, SIM_EINVAL, NULL,
                           "graph: \"%s\" on %u workers needs %llu edges%s, but %s",
                           graph_kind_name(s->kind), s->n, (unsigned long long)edges,
                           s->directed ? " (directed)" : "",
                           g->off == NULL ? "no room was reserved (graph_reserve)"
                                          : "the room reserved is another graph's");
    /* Zeroed (the counts below start from 0), as the arena handed them out. */
    size_t m = slot_count(edges), rows = (size_t)s->n + 1;
    memset(g->off, 0, rows * sizeof(*g->off));
    memset(g->adj, 0, m * sizeof(*g->adj));
    memset(g->rev, 0, m * sizeof(*g->rev));
    if (s->directed) {
        memset(g->in_off, 0, rows * sizeof(*g->in_off));
        memset(g->in_adj, 0, m * sizeof(*g->in_adj));
        memset(g->in_rev, 0, in_rev_count(s, edges) * sizeof(*g->in_rev));
    }
    if (s->kind == GRAPH_RANDOM_REGULAR) {
        rc = graph_draw_regular(g, s->degree, r, err);
        if (rc != SIM_OK)
            return rc;
    } else {
        list_edges(g, s);
    }
    link_reverse(g);
    return SIM_OK;
}

/* ---- queries ---- */

/* The slot of j in the sorted list adj[off[i]..off[i+1]), or GRAPH_NONE. */
static uint32_t find_slot(const uint32_t *off, const uint32_t *adj, uint32_t i, uint32_t j)
{
    uint32_t lo = off[i], hi = off[i + 1];
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (adj[mid] < j)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < off[i + 1] && adj[lo] == j ? lo : GRAPH_NONE;
}

uint32_t graph_slot(const graph *g, uint32_t i, uint32_t j)
{
    return find_slot(g->off, g->adj, i, j);
}

uint32_t graph_in_slot(const graph *g, uint32_t i, uint32_t j)
{
    return find_slot(g->in_off, g->in_adj, i, j);
}

uint32_t graph_max_degree(const graph *g)
{
    uint32_t hi = 0;
    for (uint32_t i = 0; i < g->n; i++)
        hi = graph_out_degree(g, i) > hi ? graph_out_degree(g, i) : hi;
    return hi;
}

void graph_distances(const graph *g, uint32_t src, uint32_t *dist, uint32_t *queue)
{
    for (uint32_t v = 0; v < g->n; v++)
        dist[v] = GRAPH_NONE;
    uint32_t head = 0, tail = 0;
    dist[src] = 0;
    queue[tail++] = src;
    while (head < tail) {
        uint32_t u = queue[head++];
        for (uint32_t e = g->off[u]; e < g->off[u + 1]; e++)
            if (dist[g->adj[e]] == GRAPH_NONE) {
                dist[g->adj[e]] = dist[u] + 1;
                queue[tail++] = g->adj[e];
            }
    }
}

int graph_weights(const graph *g, graph_weighting how, float *w, float *self, sim_err *err)
{
    if (g->directed)
        return sim_err_set(err, SIM_EINVAL, NULL, "graph: weights need an undirected graph");
    uint32_t lo = UINT32_MAX, hi = 0;
    for (uint32_t i = 0; i < g->n; i++) {
        lo = graph_out_degree(g, i) < lo ? graph_out_degree(g, i) : lo;
        hi = graph_out_degree(g, i) > hi ? graph_out_degree(g, i) : hi;
    }
    if (how == GRAPH_UNIFORM && lo != hi)
        return sim_err_set(err, SIM_EINVAL, NULL,
                           "graph: uniform weights need a regular graph, degrees are %u to %u", lo,
                           hi);
    for (uint32_t i = 0; i < g->n; i++) {
        double sum = 0.0;
        uint32_t di = graph_out_degree(g, i);
        for (uint32_t e = g->off[i]; e < g->off[i + 1]; e++) {
            uint32_t dj = graph_out_degree(g, g->adj[e]);
            uint32_t d = how == GRAPH_UNIFORM ? di : (di > dj ? di : dj);
            w[e] = (float)(1.0 / (1.0 + (double)d));
            sum += (double)w[e];
        }
        self[i] = (float)(1.0 - sum);
    }
    return SIM_OK;
}

/* ---- grids ---- */

bool graph_grid_valid(const uint32_t *dims, uint32_t ndims, uint32_t n)
{
    uint64_t p = 1;
    for (uint32_t a = 0; a < ndims; a++) {
        if (dims[a] == 0)
            return false;
        p *= dims[a];
        if (p > n)
            return false;
    }
    return ndims > 0 && p == n;
}

static uint64_t stride_of(const uint32_t *dims, uint32_t axis)
{
    uint64_t s = 1;
    for (uint32_t a = 0; a < axis; a++)
        s *= dims[a];
    return s;
}

uint32_t graph_grid_line(const uint32_t *dims, uint32_t ndims, uint32_t axis, uint32_t w,
                         uint32_t *members)
{
    (void)ndims;
    uint64_t s = stride_of(dims, axis);
    uint64_t base = w - (w / s) % dims[axis] * s;
    for (uint32_t t = 0; t < dims[axis]; t++)
        members[t] = (uint32_t)(base + t * s);
    return dims[axis];
}

uint32_t graph_grid_coord(const uint32_t *dims, uint32_t ndims, uint32_t axis, uint32_t w)
{
    (void)ndims;
    return (uint32_t)(w / stride_of(dims, axis) % dims[axis]);
}

uint32_t graph_grid_group(const uint32_t *dims, uint32_t ndims, uint32_t axis, uint32_t w)
{
    (void)ndims;
    uint64_t s = stride_of(dims, axis);
    return (uint32_t)(w % s + w / (s * dims[axis]) * s);
}

/* ---- SGP ---- */

uint32_t graph_sgp_period(uint32_t n)
{
    uint32_t p = 1;
    for (uint64_t v = 2; n >= 3 && v <= (uint64_t)n - 1; v *= 2)
        p++;
    return p;
}

uint32_t graph_sgp_peer(uint32_t n, uint64_t k, uint32_t i, uint32_t t)
{
    if (n <= 1)
        return i;
    uint32_t h = (uint32_t)((k + t) % graph_sgp_period(n));
    return (uint32_t)(((uint64_t)i + ((uint64_t)1 << h) % n) % n);
}

/* ---- The Moshpit authors' SGP averager ---- */

uint32_t graph_mavg_period(uint32_t n)
{
    uint32_t p = 0;
    for (uint64_t v = 2; n >= 3 && v <= (uint64_t)n - 1; v *= 2)
        p++;
    return n >= 3 ? p : 0;
}

uint32_t graph_mavg_receiver(uint32_t n, uint64_t k, uint32_t j, uint32_t t)
{
    uint64_t nn = (uint64_t)n * n, h = (k + 1) % graph_mavg_period(n);
    uint64_t s = (UINT64_C(1) << (h + t)) % nn; /* the roll's shift, as numpy takes it mod n^2 */
    uint64_t i = ((uint64_t)j + n - s % n) % n; /* the diagonal entry that lands in column j */
    return (uint32_t)((i * (n + 1) + s) % nn / n);
}
