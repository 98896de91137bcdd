/* Ripples' configuration (protocols/ripples_state.h): $.protocol.* parsed and checked, the
 * buffers it implies in the run's arena, and the memory estimate of the rest. */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "kit/coll.h"
#include "kit/graph.h"
#include "protocols/ripples_state.h"
#include "runtime/proto.h"

/* groups "auto": the paper's "static group scheduling in homogeneous environment" (PROTOCOLS
 * §4), Group Division elsewhere, and wherever a group_size is given (the static schedule's
 * groups are its grid's lines). Without a grid the static schedule's is near-square: a x n/a,
 * a the largest divisor of n with a <= n/a; a cluster with no such divisor but 1 (a prime
 * number of workers, or fewer than 4) takes Group Division. Records the choice, and the grid,
 * in the resolved scenario. */
static int resolve_auto(ripples *st, sim_cfg *cfg, const proto_setup *setup, bool gs_given,
                        sim_err *err)
{
    uint32_t a = 0;
    for (uint32_t d = 2; (uint64_t)d * d <= st->n; d++)
        if (st->n % d == 0)
            a = d;
    bool grid = st->stat == STATIC_GRID;
    if (!setup->homogeneous || gs_given || (grid && st->ndims == 0 && a == 0)) {
        st->mode = MODE_DIVISION;
        return sim_cfg_set_json(cfg, "groups", "\"division\"", err);
    }
    st->mode = MODE_STATIC;
    int rc = sim_cfg_set_json(cfg, "groups", "\"static\"", err);
    if (rc != SIM_OK || !grid || st->ndims > 0)
        return rc;
    char json[32];
    st->ndims = 2;
    st->grid[0] = a;
    st->grid[1] = st->n / a;
    snprintf(json, sizeof(json), "[%u, %u]", st->grid[0], st->grid[1]);
    return sim_cfg_default_json(cfg, "grid", json, err);
}

/* Options beside the group source, read in their order. */
static int read_options(ripples *st, sim_cfg *cfg, int64_t *depth, int *order, sim_err *err)
{
    static const char *const statics[] = { "grid", "racks" };
    static const char *const orders[] = { "global", "arrival" };
    static const char *const batches[] = { "free", "all" };
    static const char *const busy[] = { "join", "skip" };
    int batch = 0, b = 0;
    int rc = sim_cfg_int(cfg, "buffer_depth", 1, 64, depth, err);
    if (rc == SIM_OK)
        rc = sim_cfg_choice(cfg, "static", statics, 2, &st->stat, err);
    if (rc == SIM_OK)
        rc = sim_cfg_choice(cfg, "order", orders, 2, order, err);
    if (rc == SIM_OK)
        rc = sim_cfg_choice(cfg, "batch", batches, 2, &batch, err);
    if (rc == SIM_OK)
        rc = sim_cfg_choice(cfg, "busy", busy, 2, &b, err);
    st->free_only = batch == 0;
    st->skip_busy = b == 1;
    return rc;
}

/* The grid's sizes, st->ndims of them. */
static int read_grid(ripples *st, sim_cfg *cfg, sim_err *err)
{
    size_t nd = 0;
    int rc = sim_cfg_array_len(cfg, "grid", &nd, err);
    if (rc != SIM_OK)
        return rc;
    if (nd > MAX_GRID)
        return sim_cfg_fail(cfg, "grid", err, "at most %d axes, got %zu", MAX_GRID, nd);
    st->ndims = (uint32_t)nd;
    for (size_t i = 0; i < nd; i++) {
        double v;
        rc = sim_cfg_at_double(cfg, "grid", i, 1, 1 << 20, true, &v, err);
        if (rc != SIM_OK)
            return rc;
        st->grid[i] = (uint32_t)v;
    }
    return SIM_OK;
}

int rp_configure(void *state, sim_cfg *cfg, const proto_setup *setup, sim_err *err)
{
    ripples *st = state;
    static const char *const modes[] = { "random", "buffer", "division", "static", "auto" };
    st->n = setup->workers;
    /* Default 3, or every worker in smaller clusters. */
    int64_t gs = setup->workers < 3 ? setup->workers : 3, depth = 4;
    int order = 0;
    /* "auto" by default: the paper's static schedule on a homogeneous cluster, Group Division
     * (its generator for heterogeneous clusters, without the plain generator's conflicts)
     * elsewhere (docs/papers.md, "Defaults as the papers run them"). */
    st->mode = MODE_AUTO;
    st->stat = STATIC_GRID;
    bool gs_given = sim_cfg_has(cfg, "group_size");
    int rc = sim_cfg_int(cfg, "group_size", 2, 4096, &gs, err);
    if (rc == SIM_OK)
        rc = sim_cfg_choice(cfg, "groups", modes, 5, &st->mode, err);
    if (rc == SIM_OK)
        rc = read_options(st, cfg, &depth, &order, err);
    if (rc == SIM_OK)
        rc = read_grid(st, cfg, err);
    if (rc == SIM_OK && st->mode == MODE_AUTO)
        rc = resolve_auto(st, cfg, setup, gs_given, err);
    if (rc != SIM_OK)
        return rc;
    st->gs = (uint32_t)gs;
    st->depth = (uint32_t)depth;
    st->arrival = order == 1;
    if (st->mode != MODE_STATIC && st->gs > st->n)
        return sim_cfg_fail(cfg, "group_size", err, "must be <= workers (%u), got %u", st->n,
                            st->gs);
    if (st->arrival && st->mode != MODE_RANDOM)
        return sim_cfg_fail(cfg, "order", err, "\"arrival\" (test-only) needs groups \"random\"");
    if (st->mode == MODE_STATIC && st->stat == STATIC_GRID) {
        if (st->ndims == 0)
            return sim_cfg_fail(cfg, "grid", err, "required by the static grid schedule");
        if (!graph_grid_valid(st->grid, st->ndims, st->n))
            return sim_cfg_fail(cfg, "grid", err, "the sizes must multiply to workers (%u)", st->n);
    }
    /* The GG runs on worker 0 without servers: it must stay up. */
    bool gg_used = st->mode != MODE_STATIC && !st->arrival;
    if (gg_used && setup->servers == 0 && setup->worker0_fails)
        return sim_cfg_fail(cfg, "groups", err,
                            "the group generator runs on worker 0, which a failure rule "
                            "takes down: add a server to host it");
    if (st->mode == MODE_STATIC)
        st->cap = rp_static_cap(st, setup);
    else
        st->cap = st->mode == MODE_DIVISION ? st->gs + 1 : st->gs;
    /* Outstanding groups: depth per requester with the buffer, one otherwise, four times over:
     * failed groups linger until every member has skipped them, and static groups outlive
     * their first members while the slowest catch up. A full table fails the run. */
    st->slots = 4 * st->n * (st->mode == MODE_BUFFER ? st->depth + 1 : 1) + 16;
    st->nrings = st->n / 2 + 1;
    return SIM_OK;
}

void rp_buffers(ripples *st, sim_arena *a)
{
    size_t n = st->n, g = st->slots, c = st->cap;
    st->grp = sim_arena_alloc(a, g, sizeof(*st->grp));
    st->gmem = sim_arena_alloc(a, g * c, sizeof(*st->gmem));
    st->glocal = sim_arena_alloc(a, g * c, sizeof(*st->glocal));
    st->gpassed = sim_arena_alloc(a, g * c, 1);
    st->mnext = sim_arena_alloc(a, g * c, sizeof(*st->mnext));
    st->mprev = sim_arena_alloc(a, g * c, sizeof(*st->mprev));
    st->mhead = sim_arena_alloc(a, n, sizeof(*st->mhead));
    st->freeg = sim_arena_alloc(a, g, sizeof(*st->freeg));
    st->scratch = sim_arena_alloc(a, n, sizeof(*st->scratch));
    st->list = sim_arena_alloc(a, n, sizeof(*st->list));
    st->freed = sim_arena_alloc(a, n, sizeof(*st->freed));
    st->rings = sim_arena_alloc(a, st->nrings, sizeof(*st->rings));
    st->means = sim_arena_alloc(a, st->nrings, sizeof(*st->means));
    st->ring_group = sim_arena_alloc(a, st->nrings, sizeof(*st->ring_group));
    st->freer = sim_arena_alloc(a, st->nrings, sizeof(*st->freer));
    if (st->mode == MODE_STATIC) {
        size_t l = st->stat == STATIC_GRID ? st->ndims : 2;
        st->sgroup = sim_arena_alloc(a, l * n, sizeof(*st->sgroup));
        st->smem = sim_arena_alloc(a, l * n, sizeof(*st->smem));
        st->soff = sim_arena_alloc(a, l * (n + 1), sizeof(*st->soff));
        return;
    }
    st->plink = sim_arena_alloc(a, g * c, sizeof(*st->plink));
    if (st->mode != MODE_DIVISION)
        return;
    st->batch = sim_arena_alloc(a, n, sizeof(*st->batch));
    st->boff = sim_arena_alloc(a, n + 1, sizeof(*st->boff));
    st->bissued = sim_arena_alloc(a, n, 1);
    st->bgroup = sim_arena_alloc(a, n, sizeof(*st->bgroup));
}
