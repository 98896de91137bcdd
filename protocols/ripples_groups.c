/* Ripples' group table and static schedule (protocols/ripples_state.h): slots of groups with
 * their members, local indices and who has passed them, and the periodic schedule every worker
 * knows (grid lines or racks). Calls nothing of protocols/ripples.c. */
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "kit/graph.h"
#include "protocols/ripples_state.h"
#include "runtime/proto.h"

/* ---- group table ---- */

uint32_t rp_find_group(const ripples *st, uint64_t seq)
{
    for (uint32_t s = 0; s < st->slots; s++)
        if (st->grp[s].used && st->grp[s].seq == seq)
            return s;
    return RP_NONE;
}

/* Entry e (member i of group s, s * cap + i) into, or out of, its worker's unpassed list. */
static void link_member(ripples *st, uint64_t e)
{
    uint32_t w = st->gmem[e];
    st->mnext[e] = st->mhead[w];
    st->mprev[e] = 0;
    if (st->mhead[w] != 0)
        st->mprev[st->mhead[w] - 1] = e + 1;
    st->mhead[w] = e + 1;
}

static void unlink_member(ripples *st, uint64_t e)
{
    uint64_t nx = st->mnext[e], pv = st->mprev[e];
    if (pv == 0)
        st->mhead[st->gmem[e]] = nx;
    else
        st->mnext[pv - 1] = nx;
    if (nx != 0)
        st->mprev[nx - 1] = pv;
}

uint32_t rp_next_unpassed(const ripples *st, uint32_t w, uint32_t after)
{
    uint32_t best = RP_NONE;
    for (uint64_t e = st->mhead[w]; e != 0; e = st->mnext[e - 1]) {
        uint32_t s = (uint32_t)((e - 1) / st->cap);
        if ((after == RP_NONE || s > after) && (best == RP_NONE || s < best))
            best = s;
    }
    return best;
}

/* A new group over list[0..k) (ring order) owned by `owner` (RP_NONE: all members). */
int rp_new_group(ripples *st, sim_ctx *ctx, const uint32_t *list, uint32_t k, uint32_t owner,
                 uint64_t seq, uint32_t *slot, sim_err *err)
{
    if (st->nfreeg == 0)
        return sim_err_set(err, SIM_EINVAL, NULL, "ripples: group table full (%u)", st->slots);
    uint32_t s = st->freeg[--st->nfreeg];
    rp_group *g = &st->grp[s];
    *g = (rp_group){ .seq = seq,
                     .n = k,
                     .owner = owner,
                     .ring = RP_NONE,
                     .formed_ns = sim_ctx_now(ctx),
                     .used = true };
    memcpy(members_of(st, s), list, k * sizeof(*list));
    memset(st->gpassed + (size_t)s * st->cap, 0, st->cap);
    for (uint32_t i = 0; i < k; i++)
        link_member(st, (uint64_t)s * st->cap + i);
    st->formed++;
    *slot = s;
    return SIM_OK;
}

/* Member i of group s is done with it (finished, skipped or gone); frees the slot and its ring
 * when every member is. */
void rp_pass_slot(ripples *st, uint32_t s, uint32_t i)
{
    rp_group *g = &st->grp[s];
    if (st->gpassed[(size_t)s * st->cap + i])
        return;
    st->gpassed[(size_t)s * st->cap + i] = 1;
    unlink_member(st, (uint64_t)s * st->cap + i);
    g->passed++;
    if (g->passed < g->n)
        return;
    if (g->ring != RP_NONE) {
        st->freer[st->nfreer++] = g->ring;
        g->ring = RP_NONE;
    }
    if (!g->failed)
        st->finished++;
    g->used = false;
    st->freeg[st->nfreeg++] = s;
}

/* ---- a worker's arrived groups ---- */

/* Removes the entry of local index `local` from x's list, if there is one. */
static void unlist(ripples *st, rp_worker *x, uint64_t local)
{
    for (uint64_t *at = &x->plist; *at != RP_END; at = &st->plink[*at])
        if (st->glocal[*at] == local) {
            *at = st->plink[*at];
            return;
        }
}

uint32_t rp_pending_find(const ripples *st, const rp_worker *x, uint64_t local)
{
    for (uint64_t e = x->plist; e != RP_END; e = st->plink[e])
        if (st->glocal[e] == local)
            return (uint32_t)(e / st->cap);
    return RP_NONE;
}

void rp_pending_add(ripples *st, rp_worker *x, uint32_t s, uint32_t i)
{
    uint64_t e = (uint64_t)s * st->cap + i;
    unlist(st, x, st->glocal[e]);
    st->plink[e] = x->plist;
    x->plist = e;
}

/* Worker w moves past group s (its head or the next in its list). */
void rp_pass_worker(ripples *st, sim_ctx *ctx, uint32_t s, uint32_t w)
{
    rp_worker *x = rp_w(ctx, w);
    if (st->mode != MODE_STATIC) {
        unlist(st, x, x->next);
        x->next++;
    }
    /* Any group counts as the synchronization of one local step, own or joined. */
    x->done++;
    if (x->known > 0)
        x->known--;
    if (x->pending > 0)
        x->pending--;
    if (x->head == s)
        x->head = RP_NONE;
    rp_pass_slot(st, s, index_of(st, s, w));
}

/* ---- the static schedule ---- */

static void build_grid(ripples *st)
{
    uint32_t *line = st->scratch;
    for (uint32_t a = 0; a < st->ndims; a++) {
        uint32_t *off = st->soff + (size_t)a * (st->n + 1), *mem = st->smem + (size_t)a * st->n;
        uint32_t ng = 0, k = 0;
        for (uint32_t v = 0; v < st->n; v++) {
            uint32_t len = graph_grid_line(st->grid, st->ndims, a, v, line);
            if (line[0] != v)
                continue;
            off[ng] = k;
            for (uint32_t j = 0; j < len; j++) {
                mem[k++] = line[j];
                st->sgroup[(size_t)a * st->n + line[j]] = ng;
            }
            ng++;
        }
        off[ng] = k;
        if (ng > st->sgroups)
            st->sgroups = ng;
    }
    st->period = st->ndims;
}

/* Partition 0: workers by rack; partition 1: by position inside their rack. */
static void build_racks(ripples *st, sim_ctx *ctx)
{
    for (uint32_t p = 0; p < 2; p++) {
        uint32_t *off = st->soff + (size_t)p * (st->n + 1), *mem = st->smem + (size_t)p * st->n;
        uint32_t *key = st->scratch;
        /* key: rack, or position inside the rack */
        for (uint32_t v = 0; v < st->n; v++) {
            uint32_t r = sim_ctx_host(ctx, v).rack, pos = 0;
            for (uint32_t u = 0; u < v; u++)
                pos += sim_ctx_host(ctx, u).rack == r;
            key[v] = p == 0 ? r : pos;
        }
        /* groups in order of their first worker */
        uint32_t ng = 0, k = 0;
        for (uint32_t v = 0; v < st->n; v++) {
            bool first = true;
            for (uint32_t u = 0; u < v && first; u++)
                first = key[u] != key[v];
            if (!first)
                continue;
            off[ng] = k;
            for (uint32_t u = v; u < st->n; u++)
                if (key[u] == key[v]) {
                    mem[k++] = u;
                    st->sgroup[(size_t)p * st->n + u] = ng;
                }
            ng++;
        }
        off[ng] = k;
        if (ng > st->sgroups)
            st->sgroups = ng;
    }
    st->period = 2;
}

/* Worker w's group at its schedule position t = done: found, or formed now. Members
 * down when it is formed, or rejoined past it, are left out of it (as the GG does not choose
 * down workers); a member that goes down later makes it fail. */
int rp_static_group(ripples *st, sim_ctx *ctx, uint32_t w, uint32_t *slot, sim_err *err)
{
    uint64_t t = rp_w(ctx, w)->done;
    uint32_t l = (uint32_t)(t % st->period), g = st->sgroup[(size_t)l * st->n + w];
    uint64_t seq = t * st->sgroups + g;
    *slot = rp_find_group(st, seq);
    if (*slot != RP_NONE)
        return SIM_OK;
    const uint32_t *off = st->soff + (size_t)l * (st->n + 1), *mem = st->smem + (size_t)l * st->n;
    uint32_t k = off[g + 1] - off[g];
    int rc = rp_new_group(st, ctx, mem + off[g], k, RP_NONE, seq, slot, err);
    if (rc != SIM_OK)
        return rc;
    /* Members ahead of it (rejoined past it): each one's position read on purpose. */
    for (uint32_t i = 0; i < k; i++) {
        uint32_t v = mem[off[g] + i];
        if (sim_ctx_down(ctx, v) || (v != w && rp_peer(ctx, v)->done > t))
            rp_pass_slot(st, *slot, i);
    }
    return SIM_OK;
}

/* The static schedule's largest group: the grid's longest side, or the larger of a rack's
 * workers (partition 0) and the count of racks (partition 1: one worker of each); without
 * racks every worker is in rack 0. */
uint32_t rp_static_cap(const ripples *st, const proto_setup *setup)
{
    uint32_t cap = 1;
    if (st->stat == STATIC_GRID) {
        for (uint32_t a = 0; a < st->ndims; a++)
            cap = st->grid[a] > cap ? st->grid[a] : cap;
        return cap;
    }
    cap = setup->rack_workers > cap ? setup->rack_workers : cap;
    return setup->racks > cap ? setup->racks : cap;
}

/* The static schedule's partitions (L of n workers), in the arena's arrays. */
int rp_static_build(ripples *st, sim_ctx *ctx, sim_err *err)
{
    if (st->stat == STATIC_GRID)
        build_grid(st);
    else
        build_racks(st, ctx);
    for (uint32_t p = 0; p < st->period; p++) {
        const uint32_t *off = st->soff + (size_t)p * (st->n + 1);
        for (uint32_t g = 0; off[g] < st->n; g++)
            if (off[g + 1] - off[g] > st->cap)
                return sim_err_set(err, SIM_EINVAL, NULL,
                                   "ripples: a static group of %u workers, sized for %u",
                                   off[g + 1] - off[g], st->cap);
    }
    return SIM_OK;
}
