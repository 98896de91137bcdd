/* Ripples' P-Reduce (protocols/ripples_state.h; the protocol is described at the top of
 * protocols/ripples.c): a worker's advance to its next group (or its next computation), the
 * group's ring all-reduce from the pool once every member still in it is ready, and the ring's
 * end, after which each member advances again. The pool's kit objects (hub, rings, means)
 * are created here, with their completion callback. Calls only the group table
 * (protocols/ripples_groups.c) of the protocol's other files. */
#include <stdbool.h>
#include <stdint.h>

#include "kit/coll.h"
#include "protocols/ripples_state.h"
#include "runtime/proto.h"
#include "sim/tensor.h"

static const float *params_of(void *ud, sim_ctx *ctx, uint32_t w)
{
    (void)ud;
    return sim_ctx_params_view(ctx, w);
}

static int finish(ripples *st, sim_ctx *ctx, uint32_t s, uint32_t w, sim_err *err)
{
    st->executions++;
    rp_pass_worker(st, ctx, s, w);
    return rp_advance(st, ctx, w, err);
}

static int rp_ring_done(void *ud, sim_ctx *ctx, uint32_t w, const coll_info *info, sim_err *err)
{
    ripples *st = ud;
    uint32_t r = info->channel - 1, s = st->ring_group[r];
    if (st->nparams > 0) {
        const float *mean =
            coll_mean_of(st->means[r], st->rings[r], ctx, info->round, params_of, st);
        sim_tensor_copy(sim_ctx_params(ctx, w), mean, st->nparams);
    }
    return finish(st, ctx, s, w, err);
}

/* The ops table's buffers: ripples' own (rp_buffers), then the ring pool's kit objects, whose
 * completion is this file's: the hub, the rings and, with a real model, their means. */
void rp_arena(void *state, sim_arena *a, size_t num_params)
{
    ripples *st = state;
    rp_buffers(st, a);
    st->hub = coll_hub_create(a, st->nrings, 0);
    for (uint32_t r = 0; r < st->nrings; r++) {
        coll_ring *ring = coll_ring_create(a, st->hub, st->n, st->cap, rp_ring_done, st);
        coll_mean *mean = num_params > 0 ? coll_mean_create(a, num_params, st->cap) : NULL;
        if (st->rings != NULL && st->means != NULL) {
            st->rings[r] = ring;
            st->means[r] = mean;
        }
    }
}

/* Every member still in group s is ready: its ring all-reduce starts. */
static int start_reduce(ripples *st, sim_ctx *ctx, uint32_t s, sim_err *err)
{
    rp_group *g = &st->grp[s];
    const uint32_t *m = members_of(st, s);
    sim_time now = sim_ctx_now(ctx);
    uint32_t k = 0;
    for (uint32_t i = 0; i < g->n; i++)
        if (!st->gpassed[(size_t)s * st->cap + i]) {
            st->list[k++] = m[i];
            st->wait_s += (double)(now - rp_w(ctx, m[i])->ready_ns) * 1e-9;
        }
    if (k == 1)
        return finish(st, ctx, s, st->list[0], err);
    if (st->nfreer == 0)
        return sim_err_set(err, SIM_EINVAL, NULL, "ripples: no free ring");
    uint32_t r = st->freer[--st->nfreer];
    g->ring = r;
    st->ring_group[r] = s;
    coll_ring *ring = st->rings[r];
    int rc = coll_ring_reset(ring, ctx, st->list, k, st->bytes, err);
    for (uint32_t i = 0; i < k && rc == SIM_OK; i++)
        rc = coll_ring_join(ring, ctx, coll_ring_member(ring, i), err);
    return rc;
}

/* Worker w, if idle, computes (it has passed a group since its last step) or becomes ready
 * for its next group. */
int rp_advance(ripples *st, sim_ctx *ctx, uint32_t w, sim_err *err)
{
    for (;;) {
        rp_worker *x = rp_w(ctx, w);
        if (sim_ctx_down(ctx, w) || x->computing || x->head != RP_NONE)
            return SIM_OK;
        if (x->done >= x->need) {
            if (x->sync_ns >= 0) {
                st->sync_s += (double)(sim_ctx_now(ctx) - x->sync_ns) * 1e-9;
                st->syncs++;
            }
            x->computing = true;
            return sim_ctx_compute(ctx, w, x->need, err);
        }
        uint32_t s = RP_NONE;
        if (st->mode == MODE_STATIC) {
            int rc = rp_static_group(st, ctx, w, &s, err);
            if (rc != SIM_OK)
                return rc;
        } else {
            s = rp_pending_find(st, x, x->next);
            if (s == RP_NONE)
                return SIM_OK; /* its next group's notice is on its way */
        }
        rp_group *g = &st->grp[s];
        if (g->failed || st->gpassed[(size_t)s * st->cap + index_of(st, s, w)]) {
            rp_pass_worker(st, ctx, s, w);
            continue;
        }
        x->head = s;
        x->ready_ns = sim_ctx_now(ctx);
        g->ready++;
        return g->ready + g->passed == g->n ? start_reduce(st, ctx, s, err) : SIM_OK;
    }
}
