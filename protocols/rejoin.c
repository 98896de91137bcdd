/* The kit's membership-and-rejoin service (protocols/rejoin.h). */
#include "protocols/rejoin.h"

#include <stdlib.h>

#include "sim/tensor.h"

struct rejoin {
    uint32_t workers;
    uint32_t *source; /* (workers) the peer whose model each worker waits for, REJOIN_NONE */
    bool *pending;    /* (workers) recovered, waiting to be admitted */
    uint64_t admitted;
};

rejoin *rejoin_create(uint32_t workers, sim_err *err)
{
    rejoin *rj = calloc(1, sizeof(*rj));
    if (rj != NULL) {
        rj->workers = workers;
        rj->source = malloc((size_t)workers * sizeof(*rj->source));
        rj->pending = calloc(workers, sizeof(*rj->pending));
    }
    if (rj == NULL || rj->source == NULL || rj->pending == NULL) {
        rejoin_destroy(rj);
        sim_err_set(err, SIM_ENOMEM, NULL, "out of memory");
        return NULL;
    }
    for (uint32_t w = 0; w < workers; w++)
        rj->source[w] = REJOIN_NONE;
    return rj;
}

void rejoin_destroy(rejoin *rj)
{
    if (rj == NULL)
        return;
    free(rj->source);
    free(rj->pending);
    free(rj);
}

uint64_t rejoin_memory(uint32_t workers)
{
    return sizeof(rejoin) + (uint64_t)workers * (sizeof(uint32_t) + sizeof(bool));
}

void rejoin_recovered(rejoin *rj, uint32_t w)
{
    rj->pending[w] = true;
}

bool rejoin_pending(const rejoin *rj, uint32_t w)
{
    return rj->pending[w];
}

bool rejoin_any_pending(const rejoin *rj, const sim_ctx *ctx)
{
    return rejoin_next_pending(rj, ctx, 0) != REJOIN_NONE;
}

void rejoin_settle(rejoin *rj, uint32_t w, bool admitted)
{
    rj->pending[w] = false;
    rj->admitted += admitted ? 1 : 0;
}

uint32_t rejoin_next_pending(const rejoin *rj, const sim_ctx *ctx, uint32_t from)
{
    for (uint32_t w = from; w < rj->workers; w++)
        if (rj->pending[w] && !sim_ctx_down(ctx, w))
            return w;
    return REJOIN_NONE;
}

void rejoin_worker_down(rejoin *rj, uint32_t w)
{
    rj->pending[w] = false;
    rj->source[w] = REJOIN_NONE;
}

uint64_t rejoin_admitted(const rejoin *rj)
{
    return rj->admitted;
}

int rejoin_ask(rejoin *rj, sim_ctx *ctx, uint32_t w, uint32_t peer, msg_hdr h, sim_err *err)
{
    rj->source[w] = peer;
    return msg_post(ctx, w, peer, 0, h, msg_none(), err);
}

int rejoin_send(rejoin *rj, sim_ctx *ctx, uint32_t peer, uint32_t w, msg_hdr h, sim_err *err)
{
    rj->source[w] = peer;
    return msg_post(ctx, peer, w, sim_ctx_layer_bytes(ctx, SIM_LAYERS_ALL), h, msg_params(peer),
                    err);
}

uint32_t rejoin_source(const rejoin *rj, uint32_t w)
{
    return rj->source[w];
}

bool rejoin_adopt(rejoin *rj, sim_ctx *ctx, uint32_t w, uint32_t src)
{
    if (rj->source[w] != src || src == REJOIN_NONE)
        return false;
    rj->source[w] = REJOIN_NONE;
    const float *x = sim_ctx_held(ctx, SIM_CTX_PAYLOAD);
    if (x != NULL)
        sim_tensor_copy(sim_ctx_params(ctx, w), x, sim_ctx_num_params(ctx));
    return true;
}

void rejoin_forget(rejoin *rj, uint32_t w)
{
    rj->source[w] = REJOIN_NONE;
}

uint32_t rejoin_ahead(const graph *g, sim_ctx *ctx, uint32_t w, rejoin_progress_fn progress,
                      uint64_t *k)
{
    uint32_t best = REJOIN_NONE;
    uint64_t best_k = 0, kj = 0;
    for (uint32_t e = g->off[w]; e < g->off[w + 1]; e++) {
        if (progress(ctx, g->adj[e], &kj) && (best == REJOIN_NONE || kj > best_k)) {
            best = g->adj[e];
            best_k = kj;
        }
    }
    if (best != REJOIN_NONE)
        *k = best_k;
    return best;
}
