/* D-PSGD's configuration, graph and lifecycle (see protocols/dpsgd.c). */
#include "kit/rejoin.h"
#include "protocols/dpsgd_state.h"

static const char *const graph_names[] = { "ring", "torus", "exponential", "complete", "star" };
const graph_kind dp_graph_kinds[] = { GRAPH_RING, GRAPH_TORUS, GRAPH_EXPONENTIAL, GRAPH_COMPLETE,
                                      GRAPH_STAR };
static const char *const weight_names[] = { "metropolis", "uniform" };
static const graph_weighting weightings[] = { GRAPH_METROPOLIS, GRAPH_UNIFORM };

/* ---- graph ---- */

/* Checks the graph's size and, for uniform weights, that it is regular, without building
 * it. */
static int check_graph(dpsgd *st, const sim_cfg *cfg, sim_err *err)
{
    st->spec = (graph_spec){ .kind = dp_graph_kinds[st->graph], .n = st->n, .rows = st->rows };
    int rc = graph_spec_check(&st->spec, err);
    if (rc != SIM_OK)
        return rc;
    uint64_t slots = graph_edge_count(&st->spec);
    if (slots > MAX_SLOTS)
        return sim_cfg_fail(cfg, "graph", err,
                            "\"%s\" on %u workers has %llu directed edges, more than %llu",
                            graph_names[st->graph], st->n, (unsigned long long)slots,
                            (unsigned long long)MAX_SLOTS);
    uint32_t lo, hi;
    graph_degree_range(&st->spec, &lo, &hi);
    if (weightings[st->weights] == GRAPH_UNIFORM && lo != hi)
        return sim_cfg_fail(
            cfg, "weights", err,
            "\"uniform\" needs a regular graph, but \"%s\" on %u workers has degrees "
            "%u to %u (use \"metropolis\")",
            graph_names[st->graph], st->n, lo, hi);
    return SIM_OK;
}

/* Builds the graph and its weights (into the arena's buffers). */
int dp_build_graph(dpsgd *st, sim_err *err)
{
    int rc = graph_build(&st->g, &st->spec, NULL, err);
    if (rc != SIM_OK)
        return rc;
    st->max_degree = graph_max_degree(&st->g);
    return graph_weights(&st->g, weightings[st->weights], st->weight, st->self, err);
}

/* The torus shape: "rows" (default: the most square factorization) must divide n. */
static int read_torus(dpsgd *st, sim_cfg *cfg, sim_err *err)
{
    int64_t rows = graph_torus_rows(st->n);
    int rc = sim_cfg_int(cfg, "rows", 1, st->n, &rows, err);
    if (rc != SIM_OK)
        return rc;
    if (st->n % (uint64_t)rows != 0)
        return sim_cfg_fail(cfg, "rows", err, "must divide workers (%u), got %lld", st->n,
                            (long long)rows);
    st->rows = (uint32_t)rows;
    st->cols = st->n / st->rows;
    return SIM_OK;
}

int dp_configure(void *state, sim_cfg *cfg, const proto_setup *setup, sim_err *err)
{
    dpsgd *st = state;
    int rc = SIM_OK;
    st->n = setup->workers;
    st->graph = 0;   /* ring */
    st->weights = 0; /* metropolis */
    if (rc == SIM_OK)
        rc = sim_cfg_choice(cfg, "graph", graph_names, 5, &st->graph, err);
    if (rc == SIM_OK)
        rc = sim_cfg_choice(cfg, "weights", weight_names, 2, &st->weights, err);
    if (rc == SIM_OK && dp_graph_kinds[st->graph] == GRAPH_TORUS)
        rc = read_torus(st, cfg, err);
    if (rc == SIM_OK)
        rc = check_graph(st, cfg, err);
    return rc;
}

/* The run's arena: the kit's graph, the edges' weights and state, the workers' W_ii, the
 * accumulators and the kit's rejoin service, serving the graph. */
void dp_buffers(void *state, sim_arena *a, size_t num_params)
{
    dpsgd *st = state;
    uint64_t edges = graph_edge_count(&st->spec);
    graph_reserve(&st->g, a, &st->spec);
    st->weight = sim_arena_alloc(a, edges, sizeof(*st->weight));
    st->act = sim_arena_alloc(a, edges, sizeof(*st->act));
    st->flags = sim_arena_alloc(a, edges, sizeof(*st->flags));
    st->self = sim_arena_alloc(a, st->n, sizeof(*st->self));
    st->acc = sim_arena_alloc(a, 2 * (size_t)st->n, num_params * sizeof(float));
    st->rj = rejoin_create(a, st->n, &st->spec);
}

/* A worker's model goes to its neighbours as one alias, copied if the worker writes it
 * before they all have it; it finishes iteration k + 1 only once every neighbour finished k,
 * with its iteration-k model: one copy per worker at most. */
uint64_t dp_copies(const void *state)
{
    const dpsgd *st = state;
    return st->n;
}
