/* Hop's configuration (protocols/hop_state.h; the protocol is described at the top of
 * protocols/hop.c): the parameters and their checks, the run's arena and the copies
 * estimate. Calls nothing of protocols/hop.c. */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "kit/graph.h"
#include "protocols/hop_state.h"
#include "runtime/proto.h"
#include "sim/tensor.h"

static const char *const graph_names[] = {
    "ring",          "double_ring",          "exponential",          "torus",         "complete",
    "directed_ring", "directed_double_ring", "directed_exponential", "directed_torus"
};
static const graph_kind graph_kinds[] = { GRAPH_RING,        GRAPH_DOUBLE_RING, GRAPH_EXPONENTIAL,
                                          GRAPH_TORUS,       GRAPH_COMPLETE,    GRAPH_RING,
                                          GRAPH_DOUBLE_RING, GRAPH_EXPONENTIAL, GRAPH_TORUS };
static const char *const late_names[] = { "newest", "drop" };

int hp_configure(void *state, sim_cfg *cfg, const proto_setup *setup, sim_err *err)
{
    hop *st = state;
    st->n = setup->workers;
    int64_t b = 1, s = 0, gap = 4, q = 2, max_skip = -1;
    st->graph = 0;
    st->late = 0;
    st->skip = true;
    st->tighten = false;
    int rc = sim_cfg_choice(cfg, "graph", graph_names, sizeof(graph_names) / sizeof(graph_names[0]),
                            &st->graph, err);
    if (rc != SIM_OK)
        return rc;
    st->spec =
        (graph_spec){ .kind = graph_kinds[st->graph], .n = st->n, .directed = st->graph >= 5 };
    rc = graph_spec_check(&st->spec, err);
    if (rc != SIM_OK) {
        char why[sizeof(err->msg)];
        snprintf(why, sizeof(why), "%s", err->msg);
        return sim_cfg_fail(cfg, "graph", err, "%s", why);
    }
    uint32_t lo, hi;
    graph_degree_range(&st->spec, &lo, &hi);
    if (graph_edge_count(&st->spec) > (1u << 26))
        return sim_cfg_fail(cfg, "graph", err, "more than %u directed edges", 1u << 26);
    b = lo > 1 ? 1 : 0; /* 1, or 0 where a worker has one in-neighbour */
    rc = sim_cfg_int(cfg, "backup_workers", 0, 1000000, &b, err);
    if (rc == SIM_OK && (uint64_t)b > (lo > 0 ? lo - 1 : 0))
        return sim_cfg_fail(cfg, "backup_workers", err,
                            "must be at most the in-degree - 1 (%u) of \"%s\", got %lld",
                            lo > 0 ? lo - 1 : 0, graph_names[st->graph], (long long)b);
    if (rc == SIM_OK)
        rc = sim_cfg_int(cfg, "staleness", 0, 1000000, &s, err);
    if (rc == SIM_OK)
        rc = sim_cfg_int(cfg, "max_iteration_gap", 0, 1000000, &gap, err);
    if (rc == SIM_OK)
        rc = sim_cfg_bool(cfg, "skip", &st->skip, err);
    max_skip = gap;
    if (rc == SIM_OK)
        rc = sim_cfg_int(cfg, "max_skip", 0, 1000000, &max_skip, err);
    if (rc == SIM_OK)
        rc = sim_cfg_choice(cfg, "late_updates", late_names, 2, &st->late, err);
    if (rc == SIM_OK)
        rc = sim_cfg_int(cfg, "queue_capacity", 1, 64, &q, err);
    if (rc == SIM_OK)
        rc = sim_cfg_bool(cfg, "check_tighten", &st->tighten, err);
    if (rc != SIM_OK)
        return rc;
    st->b = (uint32_t)b;
    st->s = (uint64_t)s;
    st->gap = (uint64_t)gap;
    st->max_skip = (uint64_t)max_skip;
    st->q = (uint32_t)q;
    return SIM_OK;
}

/* The run's arena: the kit's graph, the update queues and the edges' state, the averaging's
 * scratch, the kit's rejoin service (serving the graph) and, up to HP_MAX_DIST_N workers, the
 * all-pairs distances of the check. The models are the runtime's; the mean is formed in
 * place. */
void hp_buffers(void *state, sim_arena *a, size_t num_params)
{
    (void)num_params;
    hop *st = state;
    uint64_t m = graph_edge_count(&st->spec);
    uint32_t lo, hi;
    graph_degree_range(&st->spec, &lo, &hi);
    size_t dist = st->n <= HP_MAX_DIST_N ? st->n : 0;
    graph_reserve(&st->g, a, &st->spec);
    st->tag = sim_arena_alloc(a, m * st->q, sizeof(*st->tag));
    st->held = sim_arena_alloc(a, m * st->q, sizeof(*st->held));
    st->count = sim_arena_alloc(a, m, sizeof(*st->count));
    st->seen = sim_arena_alloc(a, m, sizeof(*st->seen));
    st->joined = sim_arena_alloc(a, m, sizeof(*st->joined));
    st->xs = sim_arena_alloc(a, (size_t)hi + 1, sizeof(*st->xs));
    st->pick_q = sim_arena_alloc(a, (size_t)hi + 1, sizeof(*st->pick_q));
    st->dist = sim_arena_alloc(a, dist * dist, sizeof(*st->dist));
    st->bfs = sim_arena_alloc(a, dist, sizeof(*st->bfs));
    st->rj = rejoin_create(a, st->n, &st->spec);
}

/* A worker's update goes to its out-neighbours as an alias of its model (copied when the
 * worker writes its model while the alias is held); they keep up to Q of its updates, the
 * same ones (each is one snapshot for all), so Q per worker at most. In lockstep (no backup
 * worker, no staleness) or with late updates dropped an update is used once, by the
 * iteration it is for: one per worker. (Reached at 100 workers, a transfer taking 0.6 of an
 * iteration: 0.86 per worker on a ring, Q = 2, b = 1; 2.9 on the exponential graph, Q = 4,
 * s = 2; 0.35 in lockstep.) */
uint64_t hp_copies(const void *state)
{
    const hop *st = state;
    bool once = st->late == 1 || (st->b == 0 && st->s == 0);
    return (uint64_t)st->n * (once ? 1 : st->q);
}
