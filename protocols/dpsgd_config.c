/* D-PSGD's configuration, graph and lifecycle (see protocols/dpsgd.c). */
#include <stdlib.h>

#include "protocols/dpsgd_state.h"
#include "protocols/rejoin.h"
#include "sim/tensor.h"

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

/* Builds the graph, its weights and the per-edge and per-worker state. */
int dp_build_graph(dpsgd *st, sim_err *err)
{
    int rc = graph_init(&st->g, &st->spec, NULL, err);
    if (rc != SIM_OK)
        return rc;
    size_t m = st->g.edges > 0 ? st->g.edges : 1;
    st->weight = calloc(m, sizeof(*st->weight));
    st->act = calloc(m, sizeof(*st->act));
    st->flags = calloc(m, sizeof(*st->flags));
    st->self = calloc(st->n, sizeof(*st->self));
    st->w = calloc(st->n, sizeof(*st->w));
    if (st->weight == NULL || st->act == NULL || st->flags == NULL || st->self == NULL ||
        st->w == NULL)
        return sim_err_set(err, SIM_ENOMEM, NULL, "out of memory");
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

int dp_configure(void *state, sim_cfg *cfg, const sim_scenario *sc, sim_err *err)
{
    dpsgd *st = state;
    int rc = SIM_OK;
    st->n = sc->workers;
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

/* The graph, its weights and edge state, the workers, and the accumulators. */
uint64_t dp_memory(const void *state, const sim_scenario *sc, size_t num_params)
{
    const dpsgd *st = state;
    uint64_t edges = graph_edge_count(&st->spec);
    return graph_memory(&st->spec) +
           edges * (sizeof(*st->weight) + sizeof(*st->act) + sizeof(*st->flags)) +
           (uint64_t)sc->workers * (sizeof(*st->self) + sizeof(*st->w)) +
           rejoin_memory(sc->workers) + 2 * (uint64_t)sc->workers * num_params * sizeof(float);
}

/* A worker's model goes to its neighbours as one alias, copied if the worker writes it
 * before they all have it; it finishes iteration k + 1 only once every neighbour finished k,
 * with its iteration-k model: one copy per worker at most. */
uint64_t dp_copies(const void *state, const sim_scenario *sc)
{
    (void)state;
    return sc->workers;
}

void dp_fini(void *state)
{
    dpsgd *st = state;
    graph_fini(&st->g);
    free(st->weight);
    free(st->act);
    free(st->flags);
    free(st->self);
    free(st->w);
    rejoin_destroy(st->rj);
    sim_tensor_free(st->acc);
}
