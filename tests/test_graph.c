/* The kit's graphs: known degrees and edge counts, the counts configure gets without
 * building, CSR invariants (sorted, no self loop, no duplicate, reverse index), symmetric
 * weights whose rows sum to 1, bipartiteness, random regular graphs, the arrays' room in the
 * run's arena (the sizing pass's count), grid lines, SGP's schedule and BFS distances. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_rng.h>

#include "harness.h"
#include "kit/graph.h"
#include "runtime/arena.h"
#include "sim/rng.h"
#include "suite.h"

/* The graph of s, built as a protocol builds it: its arrays reserved in a run's arena (*a,
 * which the caller destroys), then built (`r` for a random kind). */
static graph build_drawn(graph_spec s, gsl_rng *r, sim_arena **a)
{
    graph g;
    *a = harness_graph_arena(&g, &s);
    sim_err err = { 0 };
    int rc = graph_build(&g, &s, r, &err);
    ck_assert_msg(rc == SIM_OK, "%s on %u: %s", graph_kind_name(s.kind), s.n, err.msg);
    return g;
}

static graph build(graph_spec s, sim_arena **a)
{
    return build_drawn(s, NULL, a);
}

/* CSR invariants every built graph keeps, and agreement with the allocation-free counts. */
static void check_invariants(const graph *g, const graph_spec *s)
{
    ck_assert_uint_eq(g->edges, g->off[g->n]);
    ck_assert_uint_eq(g->edges, graph_edge_count(s));
    uint32_t lo, hi, blo = UINT32_MAX, bhi = 0;
    graph_degree_range(s, &lo, &hi);
    for (uint32_t i = 0; i < g->n; i++) {
        uint32_t d = graph_out_degree(g, i);
        blo = d < blo ? d : blo;
        bhi = d > bhi ? d : bhi;
        for (uint32_t e = g->off[i]; e < g->off[i + 1]; e++) {
            uint32_t j = g->adj[e];
            ck_assert_uint_lt(j, g->n);
            ck_assert_uint_ne(j, i);
            if (e > g->off[i])
                ck_assert_uint_lt(g->adj[e - 1], j); /* ascending, hence no duplicate */
            ck_assert_uint_eq(graph_slot(g, i, j), e);
            uint32_t r = g->rev[e];
            ck_assert_uint_eq(g->in_adj[r], i);
            ck_assert_uint_ge(r, g->in_off[j]);
            ck_assert_uint_lt(r, g->in_off[j + 1]);
            ck_assert_uint_eq(g->in_rev[r], e);
        }
        for (uint32_t e = g->in_off[i]; e + 1 < g->in_off[i + 1]; e++)
            ck_assert_uint_lt(g->in_adj[e], g->in_adj[e + 1]);
    }
    ck_assert_uint_eq(lo, g->n > 0 ? blo : 0);
    ck_assert_uint_eq(hi, bhi);
    ck_assert_uint_eq(graph_max_degree(g), bhi);
    if (!g->directed)
        for (uint32_t e = 0; e < g->edges; e++)
            ck_assert_uint_eq(g->rev[g->rev[e]], e);
}

START_TEST(named_graphs_have_the_documented_degrees_and_edges)
{
    static const struct {
        graph_kind kind;
        uint32_t n, rows;
        bool directed, bipartite;
        uint32_t edges, lo, hi; /* directed edges, smallest and largest out-degree */
    } cases[] = {
        { GRAPH_RING, 1, 0, false, false, 0, 0, 0 },
        { GRAPH_RING, 2, 0, false, false, 2, 1, 1 },   /* i - 1 = i + 1 */
        { GRAPH_RING, 16, 0, false, false, 32, 2, 2 }, /* */
        { GRAPH_RING, 16, 0, true, false, 16, 1, 1 },  /* i -> i + 1 */
        { GRAPH_RING, 11, 0, false, true, 20, 1, 2 },  /* 10 - 0 dropped */
        { GRAPH_DOUBLE_RING, 10, 0, false, false, 40, 4, 4 },
        { GRAPH_DOUBLE_RING, 4, 0, false, false, 12, 3, 3 }, /* i + 2 = i - 2 */
        { GRAPH_DOUBLE_RING, 10, 0, true, false, 20, 2, 2 },
        { GRAPH_TORUS, 16, 0, false, false, 64, 4, 4 },       /* 4 x 4 */
        { GRAPH_TORUS, 12, 0, false, false, 48, 4, 4 },       /* 3 x 4 */
        { GRAPH_TORUS, 8, 2, false, false, 24, 3, 3 },        /* 2 x 4: up = down */
        { GRAPH_TORUS, 7, 0, false, false, 14, 2, 2 },        /* prime: 1 x 7, a ring */
        { GRAPH_TORUS, 16, 0, true, false, 32, 2, 2 },        /* down, right */
        { GRAPH_EXPONENTIAL, 12, 0, false, false, 72, 6, 6 }, /* +-1, +-2, +-4, 8 = -4 */
        { GRAPH_EXPONENTIAL, 16, 0, false, false, 112, 7, 7 },
        { GRAPH_EXPONENTIAL, 16, 0, true, false, 64, 4, 4 },             /* +1, +2, +4, +8 */
        { GRAPH_BIPARTITE_EXPONENTIAL, 16, 0, false, false, 128, 8, 8 }, /* 1, 3, 5, 9 */
        { GRAPH_BIPARTITE_EXPONENTIAL, 1024, 0, false, false, 20480, 20, 20 },
        { GRAPH_BIPARTITE_EXPONENTIAL, 1, 0, false, false, 0, 0, 0 },
        { GRAPH_COMPLETE, 9, 0, false, false, 72, 8, 8 },
        { GRAPH_STAR, 7, 0, false, false, 12, 1, 6 },
        { GRAPH_STAR, 1, 0, false, false, 0, 0, 0 },
    };
    for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
        graph_spec s = { .kind = cases[c].kind,
                         .n = cases[c].n,
                         .rows = cases[c].rows,
                         .directed = cases[c].directed,
                         .bipartite = cases[c].bipartite };
        sim_err err = { 0 };
        ck_assert_int_eq(graph_spec_check(&s, &err), SIM_OK);
        ck_assert_msg(graph_edge_count(&s) == cases[c].edges, "case %zu: %llu edges", c,
                      (unsigned long long)graph_edge_count(&s));
        uint32_t lo, hi;
        graph_degree_range(&s, &lo, &hi);
        ck_assert_msg(lo == cases[c].lo && hi == cases[c].hi, "case %zu: degrees %u to %u", c, lo,
                      hi);
        sim_arena *a;
        graph g = build(s, &a);
        check_invariants(&g, &s);
        sim_arena_destroy(a);
    }
}
END_TEST

/* graph_edge_count and graph_degree_range take one worker's degree for the whole graph when
 * degrees cannot differ (offset graphs, unless bipartite on an odd count): checked against
 * the lists graph_build builds, worker by worker, for every offset kind and form, n <= 40 and
 * n around 64 and 128. */
START_TEST(edge_counts_and_degree_ranges_match_the_built_lists)
{
    const graph_kind kinds[] = { GRAPH_RING, GRAPH_DOUBLE_RING, GRAPH_EXPONENTIAL,
                                 GRAPH_BIPARTITE_EXPONENTIAL };
    for (size_t k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++)
        for (int form = 0; form < 3; form++)
            for (uint32_t n = 1; n <= 129; n = n == 40 ? 63 : n == 65 ? 127 : n + 1) {
                graph_spec s = {
                    .kind = kinds[k], .n = n, .directed = form == 1, .bipartite = form == 2
                };
                if (graph_spec_check(&s, NULL) != SIM_OK)
                    continue;
                sim_arena *a;
                graph g = build(s, &a);
                uint32_t lo = UINT32_MAX, hi = 0, glo, ghi;
                for (uint32_t i = 0; i < n; i++) {
                    uint32_t d = g.off[i + 1] - g.off[i];
                    lo = d < lo ? d : lo;
                    hi = d > hi ? d : hi;
                }
                graph_degree_range(&s, &glo, &ghi);
                ck_assert_msg(graph_edge_count(&s) == g.off[n] && g.edges == g.off[n],
                              "kind %zu form %d n %u", k, form, n);
                ck_assert_msg(glo == lo && ghi == hi, "kind %zu form %d n %u", k, form, n);
                sim_arena_destroy(a);
            }
}
END_TEST

START_TEST(directed_exponential_has_in_and_out_degree_four_on_sixteen)
{
    graph_spec s = { .kind = GRAPH_EXPONENTIAL, .n = 16, .directed = true };
    sim_arena *a;
    graph g = build(s, &a);
    for (uint32_t i = 0; i < 16; i++) {
        ck_assert_uint_eq(graph_out_degree(&g, i), 4);
        ck_assert_uint_eq(graph_in_degree(&g, i), 4);
        /* In-neighbours of i are i - 1, i - 2, i - 4, i - 8. */
        for (uint32_t m = 0; m < 4; m++) {
            uint32_t j = (i + 16 - (1u << m)) % 16;
            bool found = false;
            for (uint32_t e = g.in_off[i]; e < g.in_off[i + 1]; e++)
                found = found || g.in_adj[e] == j;
            ck_assert_msg(found, "%u missing from %u's in-list", j, i);
        }
    }
    sim_arena_destroy(a);
}
END_TEST

START_TEST(bad_specs_are_refused_and_build_nothing)
{
    static const graph_spec bad[] = {
        { .kind = GRAPH_RING, .n = 0 },
        { .kind = GRAPH_TORUS, .n = 12, .rows = 5 },
        { .kind = GRAPH_RANDOM_REGULAR, .n = 7, .degree = 3 }, /* n * d odd */
        { .kind = GRAPH_RANDOM_REGULAR, .n = 7, .degree = 7 },
        { .kind = GRAPH_COMPLETE, .n = 5, .directed = true },
        { .kind = GRAPH_STAR, .n = 5, .bipartite = true },
    };
    for (size_t c = 0; c < sizeof(bad) / sizeof(bad[0]); c++) {
        sim_err err = { 0 };
        ck_assert_int_eq(graph_spec_check(&bad[c], &err), SIM_EINVAL);
        ck_assert_msg(strncmp(err.msg, "graph: ", 7) == 0, "%s", err.msg);
        graph g;
        sim_arena *a = harness_graph_arena(&g, &bad[c]);
        ck_assert_uint_eq(sim_arena_bytes(a), 0); /* nothing reserved */
        ck_assert_ptr_null(g.off);
        ck_assert_int_eq(graph_build(&g, &bad[c], NULL, &err), SIM_EINVAL);
        ck_assert_msg(strncmp(err.msg, "graph: ", 7) == 0, "%s", err.msg);
        sim_arena_destroy(a);
    }
}
END_TEST

/* ---- weights ---- */

START_TEST(metropolis_weights_are_symmetric_bits_and_rows_sum_to_one)
{
    static const graph_spec specs[] = {
        { .kind = GRAPH_STAR, .n = 7 },
        { .kind = GRAPH_EXPONENTIAL, .n = 12 },
        { .kind = GRAPH_TORUS, .n = 8, .rows = 2 },
        { .kind = GRAPH_RING, .n = 2 },
        { .kind = GRAPH_BIPARTITE_EXPONENTIAL, .n = 13 },
    };
    for (size_t c = 0; c < sizeof(specs) / sizeof(specs[0]); c++) {
        sim_arena *a;
        graph g = build(specs[c], &a);
        float *w = calloc(g.edges + 1, sizeof(*w)), *self = calloc(g.n, sizeof(*self));
        sim_err err = { 0 };
        ck_assert_int_eq(graph_weights(&g, GRAPH_METROPOLIS, w, self, &err), SIM_OK);
        for (uint32_t i = 0; i < g.n; i++) {
            double row = (double)self[i];
            for (uint32_t e = g.off[i]; e < g.off[i + 1]; e++) {
                ck_assert(w[e] == w[g.rev[e]]); /* bitwise symmetric */
                ck_assert(w[e] > 0.0f && w[e] < 1.0f);
                uint32_t di = graph_out_degree(&g, i), dj = graph_out_degree(&g, g.adj[e]);
                ck_assert(w[e] == (float)(1.0 / (1.0 + (di > dj ? di : dj))));
                row += (double)w[e];
            }
            /* self is 1 - sum rounded once to float: off by at most half a float ulp of 1
             * (2^-24), well under 1e-7. Columns sum the same numbers (symmetry). */
            ck_assert_msg(fabs(row - 1.0) < 1e-7, "case %zu row %u: %.17g", c, i, row);
            ck_assert(self[i] >= 0.0f);
        }
        free(w);
        free(self);
        sim_arena_destroy(a);
    }
}
END_TEST

START_TEST(ring_weights_are_a_third_and_uniform_needs_a_regular_graph)
{
    sim_arena *a;
    graph g = build((graph_spec){ .kind = GRAPH_RING, .n = 9 }, &a);
    float w[18], self[9];
    sim_err err = { 0 };
    ck_assert_int_eq(graph_weights(&g, GRAPH_UNIFORM, w, self, &err), SIM_OK);
    for (uint32_t e = 0; e < 18; e++)
        ck_assert(w[e] == (float)(1.0 / 3.0));
    for (uint32_t i = 0; i < 9; i++)
        ck_assert(self[i] == (float)(1.0 - 2.0 * (double)(float)(1.0 / 3.0)));
    sim_arena_destroy(a);
    g = build((graph_spec){ .kind = GRAPH_STAR, .n = 7 }, &a);
    float ws[12], ss[7];
    ck_assert_int_eq(graph_weights(&g, GRAPH_UNIFORM, ws, ss, &err), SIM_EINVAL);
    sim_arena_destroy(a);
    g = build((graph_spec){ .kind = GRAPH_RING, .n = 9, .directed = true }, &a);
    ck_assert_int_eq(graph_weights(&g, GRAPH_METROPOLIS, w, self, &err), SIM_EINVAL);
    sim_arena_destroy(a);
}
END_TEST

/* ---- bipartite and random regular ---- */

START_TEST(bipartite_exponential_joins_only_different_parities)
{
    for (uint32_t n = 1; n <= 40; n++) {
        sim_arena *a;
        graph g = build((graph_spec){ .kind = GRAPH_BIPARTITE_EXPONENTIAL, .n = n }, &a);
        for (uint32_t i = 0; i < n; i++) {
            for (uint32_t e = g.off[i]; e < g.off[i + 1]; e++)
                ck_assert_uint_ne(g.adj[e] & 1, i & 1);
            /* Every odd worker keeps w - 1 (offset 1). */
            if ((i & 1) != 0)
                ck_assert_uint_ne(graph_slot(&g, i, i - 1), GRAPH_NONE);
        }
        sim_arena_destroy(a);
    }
}
END_TEST

static gsl_rng *stream(uint64_t seed)
{
    gsl_rng *r = sim_rng_create(sim_rng_seed(seed, 2385));
    ck_assert_ptr_nonnull(r);
    return r;
}

START_TEST(random_regular_graphs_are_regular_simple_connected_and_seeded)
{
    static const struct {
        uint32_t n, d;
    } cases[] = { { 20, 3 }, { 20, 4 }, { 10, 2 }, { 6, 5 }, { 64, 6 }, { 4, 1 } };
    for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
        graph_spec s = { .kind = GRAPH_RANDOM_REGULAR, .n = cases[c].n, .degree = cases[c].d };
        bool some_differ = false;
        uint32_t *first = NULL;
        for (uint64_t seed = 1; seed <= 4; seed++) {
            graph g[2];
            sim_arena *a[2];
            for (int t = 0; t < 2; t++) {
                gsl_rng *r = stream(seed);
                g[t] = build_drawn(s, r, &a[t]);
                gsl_rng_free(r);
                check_invariants(&g[t], &s);
            }
            /* Same seed, same graph. */
            ck_assert_mem_eq(g[0].adj, g[1].adj, g[0].edges * sizeof(uint32_t));
            for (uint32_t i = 0; i < s.n; i++)
                ck_assert_uint_eq(graph_out_degree(&g[0], i), s.degree);
            if (s.degree >= 2) { /* connected */
                uint32_t *dist = calloc(s.n, sizeof(*dist)), *q = calloc(s.n, sizeof(*q));
                graph_distances(&g[0], 0, dist, q);
                for (uint32_t v = 0; v < s.n; v++)
                    ck_assert_uint_ne(dist[v], GRAPH_NONE);
                free(dist);
                free(q);
            }
            if (first == NULL) {
                first = malloc(g[0].edges * sizeof(*first));
                memcpy(first, g[0].adj, g[0].edges * sizeof(*first));
            } else if (memcmp(first, g[0].adj, g[0].edges * sizeof(*first)) != 0) {
                some_differ = true;
            }
            sim_arena_destroy(a[0]);
            sim_arena_destroy(a[1]);
        }
        /* d = n - 1 is the complete graph whatever the seed. */
        ck_assert(some_differ || s.degree == s.n - 1);
        free(first);
    }
    graph_spec s = { .kind = GRAPH_RANDOM_REGULAR, .n = 8, .degree = 3 };
    graph g;
    sim_arena *a = harness_graph_arena(&g, &s);
    sim_err err = { 0 };
    ck_assert_int_eq(graph_build(&g, &s, NULL, &err), SIM_EINVAL); /* needs a stream */
    ck_assert_ptr_nonnull(strstr(err.msg, "needs a stream"));
    sim_arena_destroy(a);
}
END_TEST

/* ---- the run's arena ---- */

/* Bytes of n elements of `size` in an arena: rounded up to its alignment. */
static uint64_t line(size_t n, size_t size)
{
    return ((uint64_t)n * size + SIM_ARENA_ALIGN - 1) / SIM_ARENA_ALIGN * SIM_ARENA_ALIGN;
}

typedef struct span {
    uintptr_t at;
    uint64_t bytes;
} span;

static int by_address(const void *x, const void *y)
{
    uintptr_t a = ((const span *)x)->at, b = ((const span *)y)->at;
    return (a > b) - (a < b);
}

START_TEST(graph_arrays_take_what_the_sizing_arena_counted_for_every_kind)
{
    static const graph_spec specs[] = {
        { .kind = GRAPH_RING, .n = 1 },
        { .kind = GRAPH_RING, .n = 10 },
        { .kind = GRAPH_RING, .n = 10, .directed = true },
        { .kind = GRAPH_RING, .n = 11, .bipartite = true },
        { .kind = GRAPH_DOUBLE_RING, .n = 10 },
        { .kind = GRAPH_DOUBLE_RING, .n = 10, .directed = true },
        { .kind = GRAPH_TORUS, .n = 12 },
        { .kind = GRAPH_TORUS, .n = 16, .directed = true },
        { .kind = GRAPH_EXPONENTIAL, .n = 16 },
        { .kind = GRAPH_RING, .n = 1, .directed = true }, /* no edge: one slot each */
        { .kind = GRAPH_EXPONENTIAL, .n = 13, .bipartite = true },
        { .kind = GRAPH_BIPARTITE_EXPONENTIAL, .n = 1024 },
        { .kind = GRAPH_BIPARTITE_EXPONENTIAL, .n = 13 },
        { .kind = GRAPH_COMPLETE, .n = 9 },
        { .kind = GRAPH_STAR, .n = 7 },
        { .kind = GRAPH_STAR, .n = 1 },
        { .kind = GRAPH_RANDOM_REGULAR, .n = 20, .degree = 3 },
    };
    for (size_t c = 0; c < sizeof(specs) / sizeof(specs[0]); c++) {
        const graph_spec *spec = &specs[c];
        sim_err err;
        sim_err_clear(&err);
        sim_arena *s = sim_arena_create_sizing(&err);
        graph g;
        graph_reserve(&g, s, spec);
        ck_assert_ptr_null(g.off); /* the sizing arena hands out nothing */
        uint64_t counted = sim_arena_bytes(s);
        sim_arena_destroy(s);
        sim_arena *a = sim_arena_create(counted, &err);
        ck_assert_ptr_nonnull(a);
        graph_reserve(&g, a, spec);
        ck_assert(!sim_arena_overrun(a));
        ck_assert_uint_eq(sim_arena_bytes(a), counted);
        gsl_rng *r = spec->kind == GRAPH_RANDOM_REGULAR ? stream(c) : NULL;
        ck_assert_int_eq(graph_build(&g, spec, r, &err), SIM_OK);
        gsl_rng_free(r);
        check_invariants(&g, spec);
        /* The built arrays: off (and in_off) n + 1 entries; adj and rev (and in_adj) one per
         * edge, one at least; in_rev max(edges, n), the build's count of in-edges per worker
         * first. An undirected graph's in-lists are its out-lists. */
        size_t rows = (size_t)g.n + 1, m = g.edges > 0 ? g.edges : 1;
        span sp[6] = {
            { (uintptr_t)g.off, 4 * rows }, { (uintptr_t)g.adj, 4 * m },
            { (uintptr_t)g.rev, 4 * m },    { (uintptr_t)g.in_off, 4 * rows },
            { (uintptr_t)g.in_adj, 4 * m }, { (uintptr_t)g.in_rev, 4 * (m > g.n ? m : g.n) }
        };
        size_t k = g.directed ? 6 : 3;
        if (!g.directed)
            ck_assert(g.in_off == g.off && g.in_adj == g.adj && g.in_rev == g.rev);
        uint64_t want = 0;
        for (size_t t = 0; t < k; t++)
            want += line(sp[t].bytes, 1);
        ck_assert_msg(counted == want, "case %zu: counted %llu, the arrays take %llu", c,
                      (unsigned long long)counted, (unsigned long long)want);
        /* Each array has its room: they do not overlap, and all lie in the arena's block. */
        qsort(sp, k, sizeof(sp[0]), by_address);
        for (size_t t = 0; t + 1 < k; t++)
            ck_assert_uint_le(sp[t].at + sp[t].bytes, sp[t + 1].at);
        ck_assert_uint_le(sp[k - 1].at + sp[k - 1].bytes, sp[0].at + counted);
        sim_arena_destroy(a);
    }
}
END_TEST

START_TEST(graph_is_built_only_into_the_room_reserved_for_it)
{
    graph_spec ring = { .kind = GRAPH_RING, .n = 10 };
    graph_spec other[] = {
        { .kind = GRAPH_RING, .n = 12 },
        { .kind = GRAPH_RING, .n = 10, .directed = true },
        { .kind = GRAPH_DOUBLE_RING, .n = 10 },
    };
    sim_err err = { 0 };
    graph g;
    memset(&g, 0, sizeof(g));
    ck_assert_int_eq(graph_build(&g, &ring, NULL, &err), SIM_EINVAL);
    ck_assert_ptr_nonnull(strstr(err.msg, "no room was reserved"));
    sim_arena *s = sim_arena_create_sizing(&err);
    graph_reserve(&g, s, &ring); /* the sizing pass: counted, nothing handed out */
    ck_assert_int_eq(graph_build(&g, &ring, NULL, &err), SIM_EINVAL);
    ck_assert_ptr_nonnull(strstr(err.msg, "no room was reserved"));
    sim_arena_destroy(s);
    sim_arena *a = harness_graph_arena(&g, &ring);
    for (size_t c = 0; c < sizeof(other) / sizeof(other[0]); c++) {
        ck_assert_int_eq(graph_build(&g, &other[c], NULL, &err), SIM_EINVAL);
        ck_assert_msg(strstr(err.msg, "the room reserved is another graph's") != NULL, "%s",
                      err.msg);
    }
    /* Built twice in the same room: the same graph (the build starts from zeroed arrays). */
    ck_assert_int_eq(graph_build(&g, &ring, NULL, &err), SIM_OK);
    uint32_t off[11], adj[20], rev[20];
    memcpy(off, g.off, sizeof(off));
    memcpy(adj, g.adj, sizeof(adj));
    memcpy(rev, g.rev, sizeof(rev));
    ck_assert_int_eq(graph_build(&g, &ring, NULL, &err), SIM_OK);
    ck_assert_mem_eq(off, g.off, sizeof(off));
    ck_assert_mem_eq(adj, g.adj, sizeof(adj));
    ck_assert_mem_eq(rev, g.rev, sizeof(rev));
    check_invariants(&g, &ring);
    sim_arena_destroy(a);
}
END_TEST

/* ---- grids, SGP, distances ---- */

START_TEST(grid_lines_partition_the_workers_along_every_axis)
{
    const uint32_t dims[] = { 4, 2, 3 };
    const uint32_t n = 24;
    ck_assert(graph_grid_valid(dims, 3, n));
    ck_assert(!graph_grid_valid(dims, 3, 25));
    ck_assert(!graph_grid_valid((const uint32_t[]){ 4, 0 }, 2, 0));
    for (uint32_t a = 0; a < 3; a++) {
        uint32_t seen[24] = { 0 }, groups = n / dims[a];
        for (uint32_t w = 0; w < n; w++) {
            uint32_t m[4], k = graph_grid_line(dims, 3, a, w, m);
            ck_assert_uint_eq(k, dims[a]);
            uint32_t grp = graph_grid_group(dims, 3, a, w);
            ck_assert_uint_lt(grp, groups);
            bool self = false;
            for (uint32_t t = 0; t < k; t++) {
                self = self || m[t] == w;
                if (t > 0)
                    ck_assert_uint_lt(m[t - 1], m[t]);
                ck_assert_uint_eq(graph_grid_group(dims, 3, a, m[t]), grp);
            }
            ck_assert(self);
            /* Counted once from its group's smallest member: every worker lands in one
             * group exactly once. */
            if (m[0] == w)
                for (uint32_t t = 0; t < k; t++)
                    seen[m[t]]++;
        }
        for (uint32_t w = 0; w < n; w++)
            ck_assert_uint_eq(seen[w], 1);
    }
    /* Worked by hand: worker 13 = (1, 1, 1) with strides 1, 4, 8. */
    uint32_t m[4];
    graph_grid_line(dims, 3, 0, 13, m);
    ck_assert(m[0] == 12 && m[1] == 13 && m[2] == 14 && m[3] == 15);
    graph_grid_line(dims, 3, 1, 13, m);
    ck_assert(m[0] == 9 && m[1] == 13);
    graph_grid_line(dims, 3, 2, 13, m);
    ck_assert(m[0] == 5 && m[1] == 13 && m[2] == 21);
    /* Coordinates: 23 = (3, 1, 2); a group's index orders its lines by the other
     * coordinates, the highest axis first (Moshpit's line order). */
    ck_assert_uint_eq(graph_grid_coord(dims, 3, 0, 23), 3);
    ck_assert_uint_eq(graph_grid_coord(dims, 3, 1, 23), 1);
    ck_assert_uint_eq(graph_grid_coord(dims, 3, 2, 23), 2);
    ck_assert_uint_eq(graph_grid_coord(dims, 3, 1, 13), 1);
    ck_assert_uint_eq(graph_grid_group(dims, 3, 1, 23), 11); /* 3 + 2 * 4 */
    ck_assert_uint_eq(graph_grid_group(dims, 3, 0, 23), 5);  /* 1 + 2 * 2 */
}
END_TEST

START_TEST(sgp_out_peers_follow_the_power_of_two_schedule)
{
    /* N = 16: floor(log2 15) + 1 = 4 rounds: offsets 1, 2, 4, 8, 1, ... */
    ck_assert_uint_eq(graph_sgp_period(16), 4);
    static const uint32_t want16[] = { 1, 2, 4, 8, 1, 2, 4, 8 };
    for (uint64_t k = 0; k < 8; k++)
        ck_assert_uint_eq(graph_sgp_peer(16, k, 0, 0), want16[k]);
    ck_assert_uint_eq(graph_sgp_peer(16, 3, 13, 0), 5);  /* (13 + 8) mod 16 */
    ck_assert_uint_eq(graph_sgp_peer(16, 3, 13, 1), 14); /* the next offset: 1 */
    /* N = 5: floor(log2 4) + 1 = 3: offsets 1, 2, 4. N = 6: floor(log2 5) + 1 = 3. */
    ck_assert_uint_eq(graph_sgp_period(5), 3);
    ck_assert_uint_eq(graph_sgp_peer(5, 2, 3, 0), 2); /* (3 + 4) mod 5 */
    ck_assert_uint_eq(graph_sgp_period(6), 3);
    ck_assert_uint_eq(graph_sgp_period(9), 4); /* log2 8 = 3 */
    ck_assert_uint_eq(graph_sgp_period(2), 1);
    ck_assert_uint_eq(graph_sgp_peer(2, 7, 1, 0), 0);
    ck_assert_uint_eq(graph_sgp_peer(1, 7, 0, 0), 0);
}
END_TEST

START_TEST(bfs_distances_on_rings)
{
    sim_arena *arena;
    graph g = build((graph_spec){ .kind = GRAPH_RING, .n = 10 }, &arena);
    uint32_t dist[10], q[10];
    for (uint32_t src = 0; src < 10; src++) {
        graph_distances(&g, src, dist, q);
        for (uint32_t v = 0; v < 10; v++) {
            uint32_t a = (v + 10 - src) % 10;
            ck_assert_uint_eq(dist[v], a < 10 - a ? a : 10 - a);
        }
    }
    sim_arena_destroy(arena);
    g = build((graph_spec){ .kind = GRAPH_RING, .n = 10, .directed = true }, &arena);
    graph_distances(&g, 3, dist, q);
    for (uint32_t v = 0; v < 10; v++)
        ck_assert_uint_eq(dist[v], (v + 10 - 3) % 10);
    sim_arena_destroy(arena);
    g = build((graph_spec){ .kind = GRAPH_DOUBLE_RING, .n = 10 }, &arena);
    graph_distances(&g, 0, dist, q);
    ck_assert_uint_eq(dist[5], 3); /* 2 + 2 + 1 */
    ck_assert_uint_eq(dist[4], 2);
    sim_arena_destroy(arena);
    /* A perfect matching is not connected. */
    gsl_rng *r = stream(7);
    graph_spec s = { .kind = GRAPH_RANDOM_REGULAR, .n = 4, .degree = 1 };
    g = build_drawn(s, r, &arena);
    graph_distances(&g, 0, dist, q);
    uint32_t unreachable = 0;
    for (uint32_t v = 0; v < 4; v++)
        unreachable += dist[v] == GRAPH_NONE;
    ck_assert_uint_eq(unreachable, 2);
    sim_arena_destroy(arena);
    gsl_rng_free(r);
}
END_TEST

/* The Moshpit authors' averager (averaging_experiments/averager.py, GradientPushAverager,
 * num_outgoing_edges 2): I/2 plus I/2 rolled by 2^h and 2^(h+1) over the flattened matrix.
 * N = 5, matrices counted by hand (entries in units of 1/2; rows renormalised later):
 * the roll by 1 moves the last diagonal entry to (0, 0), by 2 the last two to (4, 0) and
 * (0, 1), by 4 to (2, 0), (3, 1), (4, 2), (0, 3). */
START_TEST(moshpit_averager_matrices_are_the_flattened_rolls)
{
    static const unsigned want[2][5][5] = {
        /* h = 0: shifts 1 and 2 */
        { { 2, 2, 1, 0, 0 },
          { 0, 1, 1, 1, 0 },
          { 0, 0, 1, 1, 1 },
          { 0, 0, 0, 1, 1 },
          { 1, 0, 0, 0, 1 } },
        /* h = 1: shifts 2 and 4 */
        { { 1, 1, 1, 1, 1 },
          { 0, 1, 0, 1, 0 },
          { 1, 0, 1, 0, 1 },
          { 0, 1, 0, 1, 0 },
          { 1, 0, 1, 0, 1 } },
    };
    ck_assert_uint_eq(graph_mavg_period(5), 2);
    ck_assert_uint_eq(graph_mavg_period(1024), 9); /* floor(log2 1023) */
    ck_assert_uint_eq(graph_mavg_period(3), 1);
    ck_assert_uint_eq(graph_mavg_period(2), 0);
    for (uint64_t k = 0; k < 4; k++) {
        unsigned got[5][5] = { { 0 } };
        for (uint32_t j = 0; j < 5; j++) {
            got[j][j]++; /* the diagonal */
            for (uint32_t t = 0; t < 2; t++)
                got[graph_mavg_receiver(5, k, j, t)][j]++;
        }
        unsigned h = (unsigned)((k + 1) % 2); /* the authors count iterations from 1 */
        for (int r = 0; r < 5; r++)
            for (int c = 0; c < 5; c++)
                ck_assert_msg(got[r][c] == want[h][r][c], "k %u: (%d, %d) = %u, want %u",
                              (unsigned)k, r, c, got[r][c], want[h][r][c]);
    }
    /* N = 4 (one matrix, shifts 1 and 2): the roll by 1 wraps (3, 3) to (0, 0), by 2 the
     * entries of rows 2 and 3 to (3, 0) and (0, 1). */
    static const unsigned want4[4][4] = {
        { 2, 2, 1, 0 }, { 0, 1, 1, 1 }, { 0, 0, 1, 1 }, { 1, 0, 0, 1 }
    };
    unsigned got4[4][4] = { { 0 } };
    for (uint32_t j = 0; j < 4; j++) {
        got4[j][j]++;
        for (uint32_t t = 0; t < 2; t++)
            got4[graph_mavg_receiver(4, 7, j, t)][j]++;
    }
    for (int r = 0; r < 4; r++)
        for (int c = 0; c < 4; c++)
            ck_assert_uint_eq(got4[r][c], want4[r][c]);
}
END_TEST

Suite *test_suite(void)
{
    Suite *s = suite_create("graph");
    TCase *tc = tcase_create("named");
    tcase_add_test(tc, named_graphs_have_the_documented_degrees_and_edges);
    tcase_add_test(tc, moshpit_averager_matrices_are_the_flattened_rolls);
    tcase_add_test(tc, edge_counts_and_degree_ranges_match_the_built_lists);
    tcase_add_test(tc, directed_exponential_has_in_and_out_degree_four_on_sixteen);
    tcase_add_test(tc, bad_specs_are_refused_and_build_nothing);
    suite_add_tcase(s, tc);
    tc = tcase_create("weights");
    tcase_add_test(tc, metropolis_weights_are_symmetric_bits_and_rows_sum_to_one);
    tcase_add_test(tc, ring_weights_are_a_third_and_uniform_needs_a_regular_graph);
    suite_add_tcase(s, tc);
    tc = tcase_create("random");
    tcase_add_test(tc, bipartite_exponential_joins_only_different_parities);
    tcase_add_test(tc, random_regular_graphs_are_regular_simple_connected_and_seeded);
    suite_add_tcase(s, tc);
    tc = tcase_create("arena");
    tcase_add_test(tc, graph_arrays_take_what_the_sizing_arena_counted_for_every_kind);
    tcase_add_test(tc, graph_is_built_only_into_the_room_reserved_for_it);
    suite_add_tcase(s, tc);
    tc = tcase_create("schedules");
    tcase_add_test(tc, grid_lines_partition_the_workers_along_every_axis);
    tcase_add_test(tc, sgp_out_peers_follow_the_power_of_two_schedule);
    tcase_add_test(tc, bfs_distances_on_rings);
    suite_add_tcase(s, tc);
    return s;
}
