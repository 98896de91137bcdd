#include "protocols/ring.h"

#include <stdlib.h>

#include "sim/tensor.h"

int ring_init(ring *r, uint32_t workers, uint32_t channel, ring_done_fn done, void *ud,
              sim_err *err)
{
    r->cap = workers;
    r->channel = channel;
    r->m = calloc(workers, sizeof(*r->m));
    r->order = calloc(workers, sizeof(*r->order));
    r->pos = malloc(workers * sizeof(*r->pos));
    r->scratch = calloc(workers, sizeof(*r->scratch));
    r->done = done;
    r->ud = ud;
    if (r->m == NULL || r->order == NULL || r->pos == NULL || r->scratch == NULL)
        return sim_err_set(err, SIM_ENOMEM, NULL, "out of memory");
    for (uint32_t w = 0; w < workers; w++)
        r->pos[w] = RING_NONE;
    return SIM_OK;
}

void ring_fini(ring *r)
{
    free(r->m);
    free(r->order);
    free(r->pos);
    free(r->scratch);
}

/* The sequence number of a ring message: generation and round. */
static uint64_t seq_of(uint32_t gen, uint32_t round)
{
    return (uint64_t)gen << 32 | round;
}

static uint32_t steps(const ring *r)
{
    return r->n > 0 ? 2 * (r->n - 1) : 0;
}

/* Bytes of the chunk the member at ring position p sends in step s. */
static uint64_t chunk_bytes(const ring *r, uint32_t p, uint32_t s)
{
    uint32_t n = r->n;
    uint32_t c = s < n - 1 ? (p + n - s % n) % n : (p + 1 + n - (s - (n - 1)) % n) % n;
    return r->bytes / n + (c < r->bytes % n ? 1 : 0);
}

static int try_send(ring *r, sim_ctx *ctx, uint32_t w, sim_err *err)
{
    ring_member *a = &r->m[w];
    if (!a->joined || a->busy || a->sent >= steps(r) || a->recv < a->sent)
        return SIM_OK;
    uint32_t p = r->pos[w];
    uint32_t succ = r->order[(p + 1) % r->n];
    msg_hdr h = { .channel = r->channel, .kind = 0, .seq = seq_of(r->gen, a->round) };
    int rc = msg_send(ctx, w, succ, chunk_bytes(r, p, a->sent), h, err);
    if (rc != SIM_OK)
        return rc;
    a->sent++;
    a->busy = true;
    return SIM_OK;
}

static int try_finish(ring *r, sim_ctx *ctx, uint32_t w, sim_err *err)
{
    ring_member *a = &r->m[w];
    if (!a->joined || a->busy || a->sent < steps(r) || a->recv < steps(r))
        return SIM_OK;
    uint32_t round = a->round;
    a->round++;
    a->recv = a->early;
    a->early = 0;
    a->sent = 0;
    a->joined = false;
    r->finished++;
    return r->done(r->ud, ctx, w, round, err);
}

static int progress(ring *r, sim_ctx *ctx, uint32_t w, sim_err *err)
{
    int rc = try_send(r, ctx, w, err);
    return rc != SIM_OK ? rc : try_finish(r, ctx, w, err);
}

int ring_reset(ring *r, sim_ctx *ctx, const uint32_t *members, uint32_t n, uint64_t bytes,
               sim_err *err)
{
    for (uint32_t i = 0; i < r->n; i++)
        r->pos[r->order[i]] = RING_NONE;
    r->gen++;
    r->finished = 0;
    r->n = n;
    r->bytes = bytes;
    for (uint32_t i = 0; i < n; i++) {
        uint32_t w = members[i];
        r->order[i] = w;
        r->pos[w] = i;
        ring_member *a = &r->m[w];
        a->round = a->sent = a->recv = a->early = 0;
        a->busy = false;
    }
    /* The order is the caller's, which may still be using `members`: progress only now. */
    for (uint32_t i = 0; i < n; i++) {
        int rc = progress(r, ctx, r->order[i], err);
        if (rc != SIM_OK)
            return rc;
    }
    return SIM_OK;
}

int ring_reset_live(ring *r, sim_ctx *ctx, uint64_t bytes, sim_err *err)
{
    uint32_t n = 0;
    for (uint32_t w = 0; w < r->cap; w++)
        if (!sim_ctx_down(ctx, w))
            r->scratch[n++] = w;
    return ring_reset(r, ctx, r->scratch, n, bytes, err);
}

int ring_worker_changed(ring *r, sim_ctx *ctx, uint32_t w, uint64_t bytes, sim_err *err)
{
    r->m[w].joined = false;
    r->restarts++;
    return ring_reset_live(r, ctx, bytes, err);
}

int ring_join(ring *r, sim_ctx *ctx, uint32_t w, sim_err *err)
{
    r->m[w].joined = true;
    return r->pos[w] == RING_NONE ? SIM_OK : progress(r, ctx, w, err);
}

int ring_on_message(ring *r, sim_ctx *ctx, const sim_event *ev, sim_err *err)
{
    uint32_t w = (uint32_t)ev->dst, src = (uint32_t)ev->src;
    msg_hdr h = msg_read(ev);
    uint32_t gen = (uint32_t)(h.seq >> 32), round = (uint32_t)h.seq;
    if (gen != r->gen || r->pos[w] == RING_NONE || r->pos[src] == RING_NONE) {
        r->stale++; /* sent in a ring that no longer exists */
        return SIM_OK;
    }
    /* The sender's step arrived: it may send its next one, or finish its round. */
    r->m[src].busy = false;
    int rc = progress(r, ctx, src, err);
    if (rc != SIM_OK)
        return rc;
    ring_member *a = &r->m[w];
    if (round == a->round)
        a->recv++;
    else if (round == a->round + 1)
        a->early++;
    else
        return sim_err_set(err, SIM_EINVAL, NULL,
                           "ring: worker %u in round %u got a message of "
                           "round %u",
                           w, a->round, round);
    return progress(r, ctx, w, err);
}

int ring_mean_init(ring_mean *m, size_t nfloats, uint32_t workers, sim_err *err)
{
    m->nfloats = nfloats;
    m->valid = false;
    m->mean = sim_tensor_alloc(nfloats);
    m->blocks = calloc(workers, sizeof(*m->blocks));
    if (m->mean == NULL || m->blocks == NULL)
        return sim_err_set(err, SIM_ENOMEM, NULL, "out of memory");
    return SIM_OK;
}

void ring_mean_fini(ring_mean *m)
{
    sim_tensor_free(m->mean);
    free(m->blocks);
}

const float *ring_mean_of(ring_mean *m, const ring *r, sim_ctx *ctx, uint32_t round,
                          ring_block_fn block)
{
    if (!m->valid || m->gen != r->gen || m->round != round) {
        for (uint32_t i = 0; i < r->n; i++)
            m->blocks[i] = block(ctx, r->order[i]);
        sim_tensor_mean(m->mean, m->blocks, r->n, m->nfloats);
        m->gen = r->gen;
        m->round = round;
        m->lr = sim_ctx_lr(ctx);
        m->valid = true;
    }
    return m->mean;
}
