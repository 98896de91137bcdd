/* Moshpit's failure handling kept linear in the failures of one instant (issue 38;
 * protocols/moshpit_state.h): the butterflies that list each worker (so that a failure visits
 * those alone, not every butterfly of the hub), the async floor's count of the live workers at
 * it (walked only when none is left) and the pool's butterflies in use as a bitmap. Calls
 * nothing of protocols/moshpit.c. */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kit/coll.h"
#include "protocols/moshpit_state.h"
#include "runtime/proto.h"

#define NODE_NONE UINT64_MAX

/* A listing: butterfly b's position p (b << 32 | p); each worker's listings are a doubly
 * linked list through the butterflies' next/prev arrays, headed by its mp_worker.lhead. */
static uint64_t node(uint32_t b, uint32_t p)
{
    return (uint64_t)b << 32 | p;
}

static uint64_t *next_of(moshpit *st, uint64_t x)
{
    return &st->listed[x >> 32].next[(uint32_t)x];
}

static uint64_t *prev_of(moshpit *st, uint64_t x)
{
    return &st->listed[x >> 32].prev[(uint32_t)x];
}

static void unlink_node(moshpit *st, sim_ctx *ctx, uint32_t w, uint64_t x)
{
    uint64_t nx = *next_of(st, x), pv = *prev_of(st, x);
    if (pv == NODE_NONE)
        mp_at(ctx, w)->lhead = nx;
    else
        *next_of(st, pv) = nx;
    if (nx != NODE_NONE)
        *prev_of(st, nx) = pv;
}

static void link_node(moshpit *st, sim_ctx *ctx, uint32_t w, uint64_t x)
{
    mp_worker *a = mp_at(ctx, w);
    *next_of(st, x) = a->lhead;
    *prev_of(st, x) = NODE_NONE;
    if (a->lhead != NODE_NONE)
        *prev_of(st, a->lhead) = x;
    a->lhead = x;
}

int mp_down_init(moshpit *st, sim_ctx *ctx, sim_err *err)
{
    st->listed = calloc(st->most > 0 ? st->most : 1, sizeof(*st->listed));
    if (st->listed == NULL)
        return sim_err_set(err, SIM_ENOMEM, NULL, "out of memory");
    for (uint32_t w = 0; w < st->n; w++)
        mp_at(ctx, w)->lhead = NODE_NONE;
    st->fdirty = true;
    if (st->keys)
        mp_ix_init(st);
    return SIM_OK;
}

void mp_down_fini(moshpit *st)
{
    for (uint32_t b = 0; st->listed != NULL && b < st->most; b++) {
        free(st->listed[b].mem);
        free(st->listed[b].next);
        free(st->listed[b].prev);
    }
    free(st->listed);
    free(st->cand);
}

int mp_listed(moshpit *st, sim_ctx *ctx, uint32_t b, const uint32_t *m, uint32_t k, sim_err *err)
{
    mp_listing *l = &st->listed[b];
    for (uint32_t p = 0; p < l->n; p++)
        unlink_node(st, ctx, l->mem[p], node(b, p));
    l->n = 0;
    if (k > l->cap) {
        uint32_t *mem = realloc(l->mem, k * sizeof(*mem));
        if (mem != NULL)
            l->mem = mem;
        uint64_t *nx = realloc(l->next, k * sizeof(*nx));
        if (nx != NULL)
            l->next = nx;
        uint64_t *pv = realloc(l->prev, k * sizeof(*pv));
        if (pv != NULL)
            l->prev = pv;
        if (mem == NULL || nx == NULL || pv == NULL)
            return sim_err_set(err, SIM_ENOMEM, NULL, "out of memory");
        l->cap = k;
    }
    for (uint32_t p = 0; p < k; p++) {
        l->mem[p] = m[p];
        link_node(st, ctx, m[p], node(b, p));
    }
    l->n = k;
    return SIM_OK;
}

int mp_bfly_down(moshpit *st, sim_ctx *ctx, uint32_t w, sim_err *err)
{
    /* The hub's walk (coll_hub_worker_down) in channel order, over the butterflies listing w
     * (the others find no member w): the next one above the last, as the listings are then. */
    int64_t last = -1;
    for (;;) {
        uint32_t best = UINT32_MAX;
        for (uint64_t x = mp_at(ctx, w)->lhead; x != NODE_NONE; x = *next_of(st, x)) {
            uint32_t b = (uint32_t)(x >> 32);
            if ((int64_t)b > last && b < best)
                best = b;
        }
        if (best == UINT32_MAX)
            return SIM_OK;
        int rc = coll_bfly_worker_down(st->bf[best], ctx, w, err);
        if (rc != SIM_OK)
            return rc;
        last = best;
    }
}

static int by_id(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

int mp_lost_candidates(moshpit *st, sim_ctx *ctx, uint32_t d, const uint32_t **out, uint32_t *k,
                       sim_err *err)
{
    /* A follower waiting for d's BEGIN is listed in the butterfly d started for it (its
     * group), which lists d too and waits for it: it is a member of a butterfly listing d. */
    uint32_t c = 0;
    for (uint64_t x = mp_at(ctx, d)->lhead; x != NODE_NONE; x = *next_of(st, x)) {
        uint32_t b = (uint32_t)(x >> 32);
        const mp_listing *l = &st->listed[b];
        for (uint32_t p = 0; p < l->n; p++) {
            uint32_t f = l->mem[p];
            const mp_worker *a = mp_at(ctx, f);
            if (f == d || a->group != b || a->ks != KS_GROUP || a->phase != PH_MATCH ||
                a->asked != d)
                continue;
            if (c == st->ncand) {
                uint32_t cap = st->ncand > 0 ? 2 * st->ncand : 64;
                uint32_t *m = realloc(st->cand, cap * sizeof(*m));
                if (m == NULL)
                    return sim_err_set(err, SIM_ENOMEM, NULL, "out of memory");
                st->cand = m;
                st->ncand = cap;
            }
            st->cand[c++] = f;
        }
    }
    if (c > 1)
        qsort(st->cand, c, sizeof(*st->cand), by_id);
    *out = st->cand;
    *k = c;
    return SIM_OK;
}

/* ---- async: the floor ---- */

static bool at_floor(const moshpit *st, sim_ctx *ctx, uint32_t w)
{
    return !sim_ctx_down(ctx, w) && !mp_never_averages(st, ctx, w) &&
           mp_at(ctx, w)->wr <= st->floor;
}

void mp_floor_leave(moshpit *st, sim_ctx *ctx, uint32_t w)
{
    mp_worker *a = mp_at(ctx, w);
    if (!a->counted || (!sim_ctx_down(ctx, w) && a->wr <= st->floor))
        return;
    a->counted = false;
    st->fcount--;
}

void mp_update_floor(moshpit *st, sim_ctx *ctx)
{
    /* The floor rises only when no live worker is at or below it: the count says when. */
    if (!st->fdirty && st->fcount > 0)
        return;
    uint64_t f = UINT64_MAX;
    for (uint32_t w = 0; w < st->n; w++)
        if (!sim_ctx_down(ctx, w) && !mp_never_averages(st, ctx, w) && mp_at(ctx, w)->wr < f)
            f = mp_at(ctx, w)->wr;
    while (f != UINT64_MAX && st->floor < f) {
        st->floor++;
        st->round = st->floor;
        sim_ctx_round_end(ctx);
    }
    st->fcount = 0;
    for (uint32_t w = 0; w < st->n; w++) {
        mp_at(ctx, w)->counted = at_floor(st, ctx, w);
        st->fcount += mp_at(ctx, w)->counted ? 1 : 0;
    }
    st->fdirty = false;
}

/* ---- async: the pool's butterflies in use ---- */

void mp_use(moshpit *st, uint32_t b)
{
    coll_idset_put(&st->inuse, b, true);
}

void mp_release_groups(moshpit *st)
{
    /* Butterflies whose group is over go back to the pool, in index order. */
    for (uint32_t b = coll_idset_next(&st->inuse, 0); b < st->inuse.n;
         b = coll_idset_next(&st->inuse, b + 1)) {
        if (b >= st->nbf || !coll_bfly_round_complete(st->bf[b]))
            continue;
        coll_idset_put(&st->inuse, b, false);
        st->freebf[st->nfree++] = b;
    }
}
