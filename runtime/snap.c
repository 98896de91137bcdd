/* Snapshots copied on write (runtime/snap.h). */
#include "runtime/snap.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/tensor.h"

static const uint32_t NOBODY = UINT32_MAX;

int snap_init(sim_ctx *ctx, sim_err *err)
{
    const char *check = getenv("HETSIM_CHECK_SNAPSHOTS");
    ctx->snap_check = check != NULL && strcmp(check, "1") == 0;
    ctx->snap_of = malloc(ctx->nworkers * sizeof(*ctx->snap_of));
    if (ctx->snap_of == NULL)
        return sim_err_set(err, SIM_ENOMEM, NULL, "out of memory");
    for (uint32_t w = 0; w < ctx->nworkers; w++)
        ctx->snap_of[w] = SIM_CTX_NO_SNAPSHOT;
    return SIM_OK;
}

void snap_fini(sim_ctx *ctx)
{
    free(ctx->snap_of);
    free(ctx->snap_refs);
    free(ctx->snap_owner);
}

/* Takes a pool buffer and makes room for its handle in the tables (amortized growth). */
static int take(sim_ctx *ctx, uint32_t *h, sim_err *err)
{
    int rc = sim_tensor_pool_get(ctx->snapshots, h, err);
    if (rc != SIM_OK)
        return rc;
    if (*h >= ctx->snap_cap) {
        size_t cap = ctx->snap_cap > 0 ? 2 * ctx->snap_cap : 64;
        while (cap <= *h)
            cap *= 2;
        uint32_t *refs = realloc(ctx->snap_refs, cap * sizeof(*refs));
        if (refs != NULL)
            ctx->snap_refs = refs;
        uint32_t *owner = realloc(ctx->snap_owner, cap * sizeof(*owner));
        if (owner != NULL)
            ctx->snap_owner = owner;
        if (refs == NULL || owner == NULL) {
            sim_tensor_pool_put(ctx->snapshots, *h);
            return sim_err_set(err, SIM_ENOMEM, NULL, "out of memory for snapshots");
        }
        ctx->snap_cap = cap;
    }
    ctx->snap_refs[*h] = 1;
    ctx->snap_owner[*h] = NOBODY;
    return SIM_OK;
}

int snap_copy(sim_ctx *ctx, const float *x, size_t n, uint32_t *h, sim_err *err)
{
    int rc = take(ctx, h, err);
    if (rc == SIM_OK)
        sim_tensor_copy(sim_tensor_pool_data(ctx->snapshots, *h), x, n);
    return rc;
}

int snap_alias(sim_ctx *ctx, uint32_t w, uint32_t *h, sim_err *err)
{
    if (ctx->snap_of[w] != SIM_CTX_NO_SNAPSHOT) {
        *h = ctx->snap_of[w];
        ctx->snap_refs[*h]++;
        return SIM_OK;
    }
    int rc = take(ctx, h, err);
    if (rc != SIM_OK)
        return rc;
    ctx->snap_owner[*h] = w;
    ctx->snap_of[w] = *h;
    if (ctx->snap_check) /* the bits of the send, to compare the block with later */
        sim_tensor_copy(sim_tensor_pool_data(ctx->snapshots, *h), train_params(ctx->tr, w),
                        train_num_params(ctx->tr));
    return SIM_OK;
}

/* Check mode: alias h of worker w must still hold the bits of its send. */
static void verify(sim_ctx *ctx, uint32_t h, uint32_t w, const char *when)
{
    size_t n = train_num_params(ctx->tr);
    if (memcmp(sim_tensor_pool_data(ctx->snapshots, h), train_params(ctx->tr, w),
               n * sizeof(float)) == 0)
        return;
    fprintf(stderr,
            "hetsim: %s wrote worker %u's parameters without sim_ctx_params while a snapshot "
            "of them was in flight (found %s)\n",
            ctx->proto->name, w, when);
    abort();
}

const float *snap_data(sim_ctx *ctx, uint32_t h)
{
    uint32_t w = ctx->snap_owner[h];
    if (w == NOBODY)
        return sim_tensor_pool_data(ctx->snapshots, h);
    if (ctx->snap_check)
        verify(ctx, h, w, "when a receiver read it");
    return train_params(ctx->tr, w);
}

bool snap_is_alias_of(const sim_ctx *ctx, uint32_t h, uint32_t w)
{
    return h != SIM_CTX_NO_SNAPSHOT && ctx->snap_owner[h] == w;
}

void snap_ref(sim_ctx *ctx, uint32_t h)
{
    ctx->snap_refs[h]++;
}

void snap_unref(sim_ctx *ctx, uint32_t h)
{
    if (--ctx->snap_refs[h] > 0)
        return;
    uint32_t w = ctx->snap_owner[h];
    if (w != NOBODY) {
        if (ctx->snap_check)
            verify(ctx, h, w, "when its last reference went");
        ctx->snap_of[w] = SIM_CTX_NO_SNAPSHOT;
        ctx->snap_owner[h] = NOBODY;
    }
    sim_tensor_pool_put(ctx->snapshots, h);
}

void snap_before_write(sim_ctx *ctx, uint32_t w)
{
    if (ctx->snap_of == NULL || ctx->snap_of[w] == SIM_CTX_NO_SNAPSHOT)
        return;
    uint32_t h = ctx->snap_of[w];
    if (ctx->snap_check)
        verify(ctx, h, w, "at its copy on write"); /* the buffer already holds the bits */
    else
        sim_tensor_copy(sim_tensor_pool_data(ctx->snapshots, h), train_params(ctx->tr, w),
                        train_num_params(ctx->tr));
    ctx->snap_owner[h] = NOBODY;
    ctx->snap_of[w] = SIM_CTX_NO_SNAPSHOT;
    ctx->copies_on_write++;
    if (ctx->payload_handle == h && ctx->payload != NULL)
        ctx->payload = sim_tensor_pool_data(ctx->snapshots, h);
}
