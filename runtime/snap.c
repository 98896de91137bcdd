/* Snapshots copied on write (runtime/snap.h). */
#include "runtime/snap.h"

#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/tensor.h"

static const uint32_t NOBODY = UINT32_MAX;

/* The size class of a snapshot of n floats (n <= num_params), and the floats it holds. */
static unsigned class_of(size_t n)
{
    unsigned c = 0;
    while (c + 1 < SNAP_CLASSES && ((size_t)1 << (c + SNAP_MIN_LOG2)) < n)
        c++;
    return c;
}

static size_t class_floats(const sim_ctx *ctx, unsigned c)
{
    size_t model = train_num_params(ctx->tr), size = (size_t)1 << (c + SNAP_MIN_LOG2);
    return size < model ? size : model;
}

/* Class c's pool, made at its first use with room for a buffer per worker. */
static sim_tensor_pool *pool_of(sim_ctx *ctx, unsigned c, sim_err *err)
{
    if (ctx->snaps.pool[c] == NULL)
        ctx->snaps.pool[c] = sim_tensor_pool_create(class_floats(ctx, c), ctx->nworkers, err);
    return ctx->snaps.pool[c];
}

int snap_init(sim_ctx *ctx, uint64_t copies, sim_err *err)
{
    if (train_num_params(ctx->tr) == 0)
        return SIM_OK; /* zero floats (timing-only): no snapshot, no tables; sends carry none */
    const char *check = getenv("HETSIM_CHECK_SNAPSHOTS");
    ctx->snaps.check = check != NULL && strcmp(check, "1") == 0;
    size_t cap = 2 * (size_t)ctx->nworkers > 64 ? 2 * (size_t)ctx->nworkers : 64;
    ctx->snaps.of = malloc(ctx->nworkers * sizeof(*ctx->snaps.of));
    ctx->snaps.entry = malloc(cap * sizeof(*ctx->snaps.entry));
    ctx->snaps.free_list = malloc(cap * sizeof(*ctx->snaps.free_list));
    if (ctx->snaps.of == NULL || ctx->snaps.entry == NULL || ctx->snaps.free_list == NULL)
        return sim_err_set(err, SIM_ENOMEM, NULL, "out of memory");
    for (uint32_t w = 0; w < ctx->nworkers; w++)
        ctx->snaps.of[w] = SIM_CTX_NO_SNAPSHOT;
    for (size_t i = 0; i < cap; i++)
        ctx->snaps.free_list[i] = (uint32_t)(cap - 1 - i); /* handle 0 on top */
    ctx->snaps.cap = ctx->snaps.nfree = cap;
    /* The model's pool, with room for a snapshot per worker to start with, and the replica
     * blocks that aliases' copies on write take, written now. */
    if (pool_of(ctx, class_of(train_num_params(ctx->tr)), err) == NULL)
        return err->code;
    return replica_reserve(train_replica(ctx->tr), copies, err);
}

void snap_fini(sim_ctx *ctx)
{
    free(ctx->snaps.of);
    free(ctx->snaps.entry);
    free(ctx->snaps.free_list);
    for (size_t c = 0; c < SNAP_CLASSES; c++)
        sim_tensor_pool_destroy(ctx->snaps.pool[c]);
}

/* A free handle with one reference, no buffer and no owner (the table doubles if full). */
static int take(sim_ctx *ctx, uint32_t *h, sim_err *err)
{
    if (ctx->snaps.nfree == 0) {
        size_t cap = 2 * ctx->snaps.cap;
        snap_entry *snap = cap < UINT32_MAX ? realloc(ctx->snaps.entry, cap * sizeof(*snap)) : NULL;
        if (snap != NULL)
            ctx->snaps.entry = snap;
        uint32_t *fr = snap != NULL ? realloc(ctx->snaps.free_list, cap * sizeof(*fr)) : NULL;
        if (fr == NULL)
            return sim_err_set(err, SIM_ENOMEM, NULL, "out of memory for snapshots");
        ctx->snaps.free_list = fr;
        for (size_t i = 0; i < cap - ctx->snaps.cap; i++)
            fr[i] = (uint32_t)(cap - 1 - i);
        ctx->snaps.nfree = cap - ctx->snaps.cap;
        ctx->snaps.cap = cap;
    }
    *h = ctx->snaps.free_list[--ctx->snaps.nfree];
    ctx->snaps.entry[*h] =
        (snap_entry){ .data = NULL, .refs = 1, .owner = NOBODY, .block = NOBODY };
    return SIM_OK;
}

/* Gives snapshot h a buffer for n floats from its class's pool. */
static int back(sim_ctx *ctx, uint32_t h, size_t n, sim_err *err)
{
    unsigned c = class_of(n);
    sim_tensor_pool *pool = pool_of(ctx, c, err);
    snap_entry *e = &ctx->snaps.entry[h];
    if (pool == NULL || sim_tensor_pool_get(pool, &e->buf, err) != SIM_OK)
        return err->code;
    e->data = sim_tensor_pool_data(pool, e->buf);
    e->cls = (uint8_t)c;
    return SIM_OK;
}

/* Returns handle h, and its buffer if it has one. */
static void put(sim_ctx *ctx, uint32_t h)
{
    snap_entry *e = &ctx->snaps.entry[h];
    if (e->data != NULL)
        sim_tensor_pool_put(ctx->snaps.pool[e->cls], e->buf);
    e->data = NULL;
    ctx->snaps.free_list[ctx->snaps.nfree++] = h;
}

int snap_copy(sim_ctx *ctx, const float *x, size_t n, uint32_t *h, sim_err *err)
{
    int rc = take(ctx, h, err);
    if (rc == SIM_OK && (rc = back(ctx, *h, n, err)) != SIM_OK)
        put(ctx, *h);
    if (rc == SIM_OK)
        sim_tensor_copy(ctx->snaps.entry[*h].data, x, n);
    return rc;
}

int snap_alias(sim_ctx *ctx, uint32_t w, uint32_t *h, sim_err *err)
{
    if (ctx->snaps.of[w] != SIM_CTX_NO_SNAPSHOT) {
        *h = ctx->snaps.of[w];
        ctx->snaps.entry[*h].refs++;
        return SIM_OK;
    }
    size_t n = train_num_params(ctx->tr);
    replica *rep = train_replica(ctx->tr);
    uint32_t b;
    int rc = take(ctx, h, err);
    if (rc != SIM_OK)
        return rc;
    rc = replica_hold(rep, w, &b, err);
    /* Check mode: a buffer too, with the bits of the send to compare the block with later. */
    if (rc == SIM_OK && ctx->snaps.check && (rc = back(ctx, *h, n, err)) != SIM_OK)
        replica_release(rep, b);
    if (rc != SIM_OK) {
        put(ctx, *h);
        return rc;
    }
    if (ctx->snaps.check)
        sim_tensor_copy(ctx->snaps.entry[*h].data, replica_block_params(rep, b), n);
    ctx->snaps.entry[*h].owner = w;
    ctx->snaps.entry[*h].block = b;
    ctx->snaps.of[w] = *h;
    return SIM_OK;
}

/* Check mode: alias h must still hold the bits of its send. */
static void verify(sim_ctx *ctx, uint32_t h, const char *when)
{
    const snap_entry *e = &ctx->snaps.entry[h];
    size_t n = train_num_params(ctx->tr);
    const float *x = replica_block_params(train_replica(ctx->tr), e->block);
    if (memcmp(e->data, x, n * sizeof(float)) == 0)
        return;
    fprintf(stderr,
            "hetsim: %s wrote worker %u's parameters without sim_ctx_params while a snapshot "
            "of them was in flight (found %s)\n",
            ctx->proto->name, e->owner, when);
    abort();
}

const float *snap_data(sim_ctx *ctx, uint32_t h)
{
    const snap_entry *e = &ctx->snaps.entry[h];
    if (e->block == NOBODY)
        return e->data;
    if (ctx->snaps.check)
        verify(ctx, h, "when a receiver read it");
    return replica_block_params(train_replica(ctx->tr), e->block);
}

bool snap_is_alias_of(const sim_ctx *ctx, uint32_t h, uint32_t w)
{
    return h != SIM_CTX_NO_SNAPSHOT && w < ctx->nworkers && ctx->snaps.of[w] == h;
}

void snap_ref(sim_ctx *ctx, uint32_t h)
{
    ctx->snaps.entry[h].refs++;
}

void snap_unref(sim_ctx *ctx, uint32_t h)
{
    snap_entry *e = &ctx->snaps.entry[h];
    if (--e->refs > 0)
        return;
    if (e->block != NOBODY) {
        if (ctx->snaps.check)
            verify(ctx, h, "when its last reference went");
        replica_release(train_replica(ctx->tr), e->block);
        if (ctx->snaps.of[e->owner] == h)
            ctx->snaps.of[e->owner] = SIM_CTX_NO_SNAPSHOT;
        e->block = NOBODY;
        e->owner = NOBODY;
    }
    put(ctx, h);
}

void snap_before_write(sim_ctx *ctx, uint32_t w)
{
    if (ctx->snaps.of == NULL || ctx->snaps.of[w] == SIM_CTX_NO_SNAPSHOT)
        return;
    /* The write moves w to a copy of its block (models/replica.h); the alias keeps the block
     * it holds, with the bits of the send. */
    uint32_t h = ctx->snaps.of[w];
    if (ctx->snaps.check)
        verify(ctx, h, "at its copy on write");
    ctx->snaps.of[w] = SIM_CTX_NO_SNAPSHOT;
    ctx->snaps.copies_on_write++;
}

uint64_t snap_buffer_bytes(const sim_ctx *ctx)
{
    uint64_t bytes = 0;
    for (size_t c = 0; c < SNAP_CLASSES; c++) {
        if (ctx->snaps.pool[c] == NULL)
            continue;
        sim_tensor_pool_stats st;
        sim_tensor_pool_get_stats(ctx->snaps.pool[c], &st);
        bytes += st.bytes;
    }
    return bytes;
}

uint64_t proto_slice_bytes(size_t num_params, size_t nfloats)
{
    if (num_params == 0)
        return 0;
    uint64_t floats = (uint64_t)1 << (class_of(nfloats) + SNAP_MIN_LOG2);
    floats = floats < num_params ? floats : num_params;
    uint64_t buffer = ((floats + 15) & ~(uint64_t)15) * sizeof(float); /* the pool's stride */
    uint64_t written = (uint64_t)nfloats * sizeof(float) + 4096;
    return (buffer < written ? buffer : written) + sizeof(snap_entry) + 2 * sizeof(uint32_t) +
           sizeof(float *) + 1; /* the handle's entry and free slot, the pool's pointer, flag,
                                 * free slot */
}
