/* Ripples' Group Generator (protocols/ripples_state.h; the protocol is described at the top of
 * protocols/ripples.c): the groups it issues from the workers' requests, drawn at random or
 * from the free workers, and what a worker does when it learns of a group. The GG keeps its
 * ledger of each worker (local indices and groups issued) in the worker's state; the count of
 * groups a worker has not yet passed, which the worker lowers without telling it, it reads on
 * purpose (rp_peer, counted in peer_reads) where it decides on it. */
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "kit/coll.h"
#include "kit/msg.h"
#include "protocols/ripples_state.h"
#include "runtime/proto.h"
#include "sim/tensor.h"

int rp_learn(ripples *st, sim_ctx *ctx, uint32_t w, uint32_t s, sim_err *err)
{
    uint32_t i = index_of(st, s, w);
    if (i == RP_NONE || st->gpassed[(size_t)s * st->cap + i] || sim_ctx_down(ctx, w)) {
        st->stale++;
        return SIM_OK;
    }
    rp_worker *x = rp_w(ctx, w);
    uint64_t *local = &st->glocal[(size_t)s * st->cap + i];
    if (st->arrival)
        *local = x->assigned++;
    if (*local < x->next) {
        st->stale++;
        return SIM_OK;
    }
    rp_pending_add(st, x, s, i);
    x->known++;
    x->asked = false;
    return rp_advance(st, ctx, w, err);
}

/* The GG has formed group s: numbers its members and sends each a notice. */
static int issue(ripples *st, sim_ctx *ctx, uint32_t s, sim_err *err)
{
    rp_group *g = &st->grp[s];
    const uint32_t *m = members_of(st, s);
    for (uint32_t i = 0; i < g->n; i++) {
        rp_worker *x = rp_w(ctx, m[i]); /* the GG's ledger: what it issued to the member */
        st->glocal[(size_t)s * st->cap + i] = x->assigned++;
        /* A member with a group pending already executes this one after it (§4.3.4). */
        if (x->pending > 0)
            st->conflicts++;
        x->pending++;
    }
    uint64_t seq = g->seq;
    for (uint32_t i = 0; i < g->n; i++) {
        /* g may be freed by a local delivery (a group of one): read through the slot. */
        uint32_t to = members_of(st, s)[i];
        int rc;
        if (to == st->gg) {
            rc = rp_learn(st, ctx, to, s, err);
        } else {
            msg_hdr h = { .channel = 0, .kind = MSG_NOTICE, .seq = seq };
            rc = msg_post(ctx, st->gg, to, RP_CONTROL_BYTES, h, msg_none(), err);
        }
        if (rc != SIM_OK)
            return rc;
        if (!st->grp[s].used || st->grp[s].seq != seq)
            return SIM_OK;
    }
    return SIM_OK;
}

/* Requester i and up to group_size - 1 other live workers drawn uniformly from `r`, into
 * st->list; returns the count. */
static uint32_t draw_random(ripples *st, sim_ctx *ctx, gsl_rng *r, uint32_t i)
{
    uint32_t k = 0;
    for (uint32_t v = 0; v < st->n; v++)
        if (v != i && !sim_ctx_down(ctx, v))
            st->scratch[k++] = v;
    uint32_t want = st->gs - 1 < k ? st->gs - 1 : k;
    st->list[0] = i;
    for (uint32_t j = 0; j < want; j++) {
        uint32_t pick = j + (uint32_t)gsl_rng_uniform_int(r, k - j);
        uint32_t t = st->scratch[j];
        st->scratch[j] = st->scratch[pick];
        st->scratch[pick] = t;
        st->list[1 + j] = st->scratch[j];
    }
    return want + 1;
}

/* Group Buffer: requester i and up to group_size - 1 other live workers whose buffer holds
 * fewer than buffer_depth groups, drawn uniformly from those with the fewest pending groups
 * (the free ones first), into st->list; returns the count. */
static uint32_t draw_free(ripples *st, sim_ctx *ctx, uint32_t i)
{
    gsl_rng *r = sim_ctx_rng(ctx, SIM_CTX_PROTO);
    uint32_t got = 0, want = st->gs - 1;
    st->list[0] = i;
    for (uint32_t level = 0; level < st->depth && got < want; level++) {
        uint32_t k = 0;
        for (uint32_t v = 0; v < st->n; v++)
            if (v != i && !sim_ctx_down(ctx, v) && rp_peer(ctx, v)->pending == level)
                st->scratch[k++] = v;
        for (uint32_t j = 0; j < k && got < want; j++) {
            uint32_t pick = j + (uint32_t)gsl_rng_uniform_int(r, k - j);
            uint32_t t = st->scratch[j];
            st->scratch[j] = st->scratch[pick];
            st->scratch[pick] = t;
            st->list[1 + got++] = st->scratch[j];
        }
    }
    return got + 1;
}

/* A batch: its k workers, st->batch[0..k), shuffled (from the end, on r), and the number of
 * groups of group_size they form: a remainder of one joins the last group, of two or more
 * forms a smaller one; one group at least. */
static uint32_t shuffle_batch(ripples *st, gsl_rng *r, uint32_t k)
{
    for (uint32_t j = k; j > 1; j--) {
        uint32_t pick = (uint32_t)gsl_rng_uniform_int(r, j);
        uint32_t t = st->batch[j - 1];
        st->batch[j - 1] = st->batch[pick];
        st->batch[pick] = t;
    }
    uint32_t ng = k / st->gs + (k % st->gs > 1 ? 1 : 0);
    return ng == 0 ? 1 : ng;
}

/* Group Division: a fresh random partition of the live workers. */
static void new_batch(ripples *st, sim_ctx *ctx)
{
    gsl_rng *r = sim_ctx_rng(ctx, SIM_CTX_PROTO);
    uint32_t k = 0;
    for (uint32_t v = 0; v < st->n; v++) {
        st->bgroup[v] = RP_NONE;
        if (!sim_ctx_down(ctx, v))
            st->batch[k++] = v;
    }
    uint32_t ng = shuffle_batch(st, r, k);
    for (uint32_t g = 0; g < ng; g++) {
        st->boff[g] = g * st->gs;
        st->bissued[g] = 0;
    }
    st->boff[ng] = k;
    st->nbgroups = ng;
    for (uint32_t g = 0; g < ng; g++)
        for (uint32_t j = st->boff[g]; j < st->boff[g + 1]; j++)
            st->bgroup[st->batch[j]] = g;
}

/* Group Division over the Group Buffer (batch "free"): a batch partitions the live workers
 * whose buffer holds no group (the requester's is empty, or its request would be redundant),
 * and every group of it is issued at once, into its members' buffers: no member of a new
 * group has a group pending, so no conflict can arise. The groups are formed first, into
 * st->scratch, then issued (an issue can advance a worker, which reuses st->list). */
static int gg_division_free(ripples *st, sim_ctx *ctx, uint32_t w, sim_err *err)
{
    gsl_rng *r = sim_ctx_rng(ctx, SIM_CTX_PROTO);
    uint32_t k = 0;
    for (uint32_t v = 0; v < st->n; v++)
        if (!sim_ctx_down(ctx, v) && (v == w || rp_peer(ctx, v)->pending == 0))
            st->batch[k++] = v;
    uint32_t ng = shuffle_batch(st, r, k);
    st->batches++;
    for (uint32_t g = 0; g < ng; g++) {
        uint32_t lo = g * st->gs, hi = g + 1 == ng ? k : lo + st->gs;
        int rc = rp_new_group(st, ctx, st->batch + lo, hi - lo, RP_NONE, st->seq++, &st->scratch[g],
                              err);
        if (rc != SIM_OK)
            return rc;
    }
    for (uint32_t g = 0; g < ng; g++) {
        int rc = issue(st, ctx, st->scratch[g], err);
        if (rc != SIM_OK)
            return rc;
    }
    return SIM_OK;
}

static int gg_division(ripples *st, sim_ctx *ctx, uint32_t w, sim_err *err)
{
    if (st->free_only)
        return gg_division_free(st, ctx, w, err);
    uint32_t g = st->bgroup[w];
    if (g == RP_NONE || st->bissued[g]) {
        new_batch(st, ctx);
        st->batches++;
    }
    g = st->bgroup[w];
    st->bissued[g] = 1;
    uint32_t k = 0;
    for (uint32_t j = st->boff[g]; j < st->boff[g + 1]; j++)
        if (!sim_ctx_down(ctx, st->batch[j]) &&
            (!st->skip_busy || st->batch[j] == w || rp_peer(ctx, st->batch[j])->pending == 0))
            st->list[k++] = st->batch[j];
    uint32_t s = RP_NONE;
    int rc = rp_new_group(st, ctx, st->list, k, RP_NONE, st->seq++, &s, err);
    return rc != SIM_OK ? rc : issue(st, ctx, s, err);
}

/* The GG handles a request from w. */
int rp_gg_request(ripples *st, sim_ctx *ctx, uint32_t w, sim_err *err)
{
    if (sim_ctx_down(ctx, w))
        return SIM_OK;
    st->requests++;
    /* The buffer (and a division batch) already holds a group for w, pulled in while its
     * request was on its way: that group answers it. The plain generator forms one anyway. */
    if (st->mode != MODE_RANDOM && rp_peer(ctx, w)->pending > 0) {
        st->redundant++;
        return SIM_OK;
    }
    if (st->mode == MODE_DIVISION)
        return gg_division(st, ctx, w, err);
    uint32_t k = st->mode == MODE_BUFFER ? draw_free(st, ctx, w)
                                         : draw_random(st, ctx, sim_ctx_rng(ctx, SIM_CTX_PROTO), w);
    uint32_t s = RP_NONE;
    int rc = rp_new_group(st, ctx, st->list, k, w, st->seq++, &s, err);
    return rc != SIM_OK ? rc : issue(st, ctx, s, err);
}

/* Worker w asks the GG (or, in arrival order, forms its group itself). */
int rp_request(ripples *st, sim_ctx *ctx, uint32_t w, sim_err *err)
{
    rp_worker *x = rp_w(ctx, w);
    x->requests++;
    x->asked = true;
    if (st->arrival) {
        uint32_t k = draw_random(st, ctx, sim_ctx_rng(ctx, w), w);
        uint32_t s = RP_NONE;
        int rc = rp_new_group(st, ctx, st->list, k, w, st->seq++, &s, err);
        uint64_t seq = st->seq - 1;
        for (uint32_t i = 1; i < k && rc == SIM_OK; i++) {
            msg_hdr h = { .channel = 0, .kind = MSG_INVITE, .seq = seq };
            rc = msg_post(ctx, w, members_of(st, s)[i], RP_CONTROL_BYTES, h, msg_none(), err);
        }
        return rc != SIM_OK ? rc : rp_learn(st, ctx, w, s, err);
    }
    if (w == st->gg)
        return rp_gg_request(st, ctx, w, err);
    msg_hdr h = { .channel = 0, .kind = MSG_REQUEST, .seq = x->requests };
    return msg_post(ctx, w, st->gg, RP_CONTROL_BYTES, h, msg_none(), err);
}
