/* Replicas in shared blocks, copied on write (models/replica.h). */
#include "models/replica.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "sim/tensor.h"

#define NO_BLOCK UINT32_MAX

/* A block: a parameter vector and its momentum buffer, shared by the workers on it, and the
 * keyed step last taken from it. */
typedef struct replica_block {
    float *p;        /* num_params */
    float *v;        /* num_params, or NULL without momentum */
    uint32_t refs;   /* workers on this block, pins, holds, and keyed steps of other blocks
                        leading here */
    uint32_t users;  /* workers on this block */
    uint32_t pins;   /* replica_pin's (counted in refs too) */
    uint32_t holds;  /* replica_hold's (counted in refs too) */
    uint32_t next;   /* the block the last keyed step from here made, or NO_BLOCK */
    replica_key key; /* that step */
} replica_block;

struct replica {
    uint32_t workers;
    size_t P;
    bool momentum;
    bool pins;          /* replica_allow_pins made room: a pin per worker at most */
    uint32_t nholds;    /* holds now */
    float *none;        /* the empty block every block is with zero floats (timing-only) */
    replica_block *blk; /* (nblk) */
    uint32_t nblk;      /* blocks: workers, a worker's more with pins, a hold's more */
    uint32_t *blk_of;   /* (workers) each worker's block */
    uint32_t *blk_free; /* (nblk) stack of unused blocks: never written ones at the bottom */
    uint32_t nfree;
    uint32_t unwritten; /* the bottom blk_free[0..unwritten) have never been written: they
                           take no memory, and every block written since is taken first */
};

replica *replica_create(uint32_t workers, size_t num_params, bool momentum, bool shared,
                        sim_err *err)
{
    replica *r = calloc(1, sizeof(*r));
    if (r == NULL) {
        sim_err_set(err, SIM_ENOMEM, NULL, "out of memory");
        return NULL;
    }
    size_t n = workers;
    r->workers = workers;
    r->P = num_params;
    r->momentum = momentum;
    r->blk = calloc(n, sizeof(*r->blk));
    r->nblk = workers;
    r->blk_of = calloc(n, sizeof(*r->blk_of));
    r->blk_free = calloc(n, sizeof(*r->blk_free));
    if (r->blk == NULL || r->blk_of == NULL || r->blk_free == NULL) {
        replica_destroy(r);
        sim_err_set(err, SIM_ENOMEM, NULL, "out of memory");
        return NULL;
    }
    r->none = sim_tensor_alloc(0); /* zero floats' one block (sim/tensor.h) */
    for (size_t b = 0; b < n; b++) {
        r->blk[b].p = sim_tensor_alloc(num_params);
        r->blk[b].next = NO_BLOCK;
        if (momentum)
            r->blk[b].v = sim_tensor_alloc(num_params);
        if (r->blk[b].p == NULL || (momentum && r->blk[b].v == NULL)) {
            replica_destroy(r);
            sim_err_set(err, SIM_ENOMEM, NULL, "out of memory for %zu workers' tensors", n);
            return NULL;
        }
    }
    for (size_t w = 0; w < n; w++) {
        uint32_t b = shared ? 0 : (uint32_t)w;
        r->blk_of[w] = b;
        r->blk[b].refs++;
        r->blk[b].users++;
    }
    for (size_t b = n; b-- > 0;)
        if (r->blk[b].refs == 0)
            r->blk_free[r->nfree++] = (uint32_t)b;
    return r;
}

void replica_destroy(replica *r)
{
    if (r == NULL)
        return;
    for (size_t b = 0; r->blk != NULL && b < r->nblk; b++) {
        sim_tensor_free(r->blk[b].p);
        sim_tensor_free(r->blk[b].v);
    }
    free(r->blk);
    free(r->blk_of);
    free(r->blk_free);
    free(r);
}

/* A block's tensor that costs no memory until written: not zeroed (a block taken from the
 * free stack is always written whole first), so its pages stay out of the resident set. */
static float *alloc_untouched(size_t n)
{
    if (n == 0)
        return sim_tensor_alloc(0);
    size_t bytes = (n * sizeof(float) + 63) & ~(size_t)63;
    return aligned_alloc(64, bytes);
}

/* Grows the blocks to n (untouched: they take memory once written), the new ones at the bottom
 * of the free stack, lowest on top of them: a copy takes a block written before (one a released
 * hold or pin gave back, or one replica_create wrote) first, so the blocks ever written are as
 * many as were used at once, not one more per growth. */
static int grow(replica *r, uint32_t n, sim_err *err)
{
    if (n <= r->nblk)
        return SIM_OK;
    replica_block *blk = realloc(r->blk, n * sizeof(*blk));
    if (blk != NULL)
        r->blk = blk;
    uint32_t *fr = blk != NULL ? realloc(r->blk_free, n * sizeof(*fr)) : NULL;
    if (fr == NULL)
        return sim_err_set(err, SIM_ENOMEM, NULL, "out of memory for parameter blocks");
    r->blk_free = fr;
    uint32_t added = 0;
    for (uint32_t b = r->nblk; b < n; b++, added++) {
        r->blk[b] = (replica_block){ .p = alloc_untouched(r->P), .next = NO_BLOCK };
        if (r->momentum)
            r->blk[b].v = alloc_untouched(r->P);
        if (r->blk[b].p == NULL || (r->momentum && r->blk[b].v == NULL)) {
            r->nblk = b + 1; /* freed by replica_destroy; not on the free stack */
            return sim_err_set(err, SIM_ENOMEM, NULL, "out of memory for parameter blocks");
        }
    }
    memmove(fr + added, fr, r->nfree * sizeof(*fr));
    for (uint32_t i = 0; i < added; i++)
        fr[i] = n - 1 - i;
    r->nfree += added;
    r->unwritten += added;
    r->nblk = n;
    return SIM_OK;
}

/* Blocks enough for every worker, a pin per worker when allowed, every hold and `more`: a
 * write then always finds an unused block (blk_shared). */
static int room(replica *r, uint32_t more, sim_err *err)
{
    uint64_t need = (uint64_t)r->workers * (r->pins ? 2 : 1) + r->nholds + more;
    if (need <= r->nblk)
        return SIM_OK;
    if (need >= UINT32_MAX / 2)
        return sim_err_set(err, SIM_ENOMEM, NULL, "out of memory for parameter blocks");
    return grow(r, (uint32_t)(need + need / 4), err);
}

int replica_allow_pins(replica *r, sim_err *err)
{
    if (r->pins)
        return SIM_OK;
    uint64_t need = (uint64_t)r->workers * 2 + r->nholds;
    int rc = need < UINT32_MAX / 2 ? grow(r, (uint32_t)need, err)
                                   : sim_err_set(err, SIM_ENOMEM, NULL, "out of memory");
    r->pins = rc == SIM_OK;
    return rc;
}

bool replica_pins_allowed(const replica *r)
{
    return r->pins;
}

int replica_reserve(replica *r, uint64_t holds, sim_err *err)
{
    if (holds >= UINT32_MAX / 2)
        return sim_err_set(err, SIM_ENOMEM, NULL, "out of memory for %llu model copies",
                           (unsigned long long)holds);
    int rc = room(r, (uint32_t)holds, err);
    /* Written now, so that they are resident from the start: the `holds` never written blocks
     * that copies on write take first once the written ones are used. */
    for (uint32_t i = 0; rc == SIM_OK && i < holds && r->unwritten > 0; i++)
        sim_tensor_zero(r->blk[r->blk_free[--r->unwritten]].p, r->P);
    return rc;
}

/* With zero floats every block is the empty one: no need to look a worker's up (a timing-only
 * run of a million workers steps through here on every iteration). */
float *replica_params(const replica *r, uint32_t w)
{
    return r->P > 0 ? r->blk[r->blk_of[w]].p : r->none;
}

float *replica_velocity(const replica *r, uint32_t w)
{
    return r->P > 0 ? r->blk[r->blk_of[w]].v : r->momentum ? r->none : NULL;
}

uint32_t replica_block_of(const replica *r, uint32_t w)
{
    return r->blk_of[w];
}

uint32_t replica_blocks_in_use(const replica *r)
{
    return r->nblk - r->nfree;
}

uint32_t replica_blocks_written(const replica *r)
{
    return r->nblk - r->unwritten;
}

/* Drops one reference to block b; unused blocks return to the stack, with the references of
 * their keyed steps. */
static void blk_unref(replica *r, uint32_t b)
{
    while (b != NO_BLOCK && --r->blk[b].refs == 0) {
        uint32_t next = r->blk[b].next;
        r->blk[b].next = NO_BLOCK;
        r->blk_free[r->nfree++] = b;
        b = next;
    }
}

/* Block b forgets its keyed step (its contents are about to change, or room is needed). */
static void blk_forget(replica *r, uint32_t b)
{
    uint32_t next = r->blk[b].next;
    r->blk[b].next = NO_BLOCK;
    blk_unref(r, next);
}

/* Worker w moves onto block b. A block its last worker leaves forgets its keyed step: only a
 * keyed step of another block (whose workers lag behind, e.g. a failed one) may still lead
 * to it, and chains of such blocks would hold a block per step they lag. */
static void move_to(replica *r, uint32_t w, uint32_t b)
{
    uint32_t old = r->blk_of[w];
    r->blk[b].refs++;
    r->blk[b].users++;
    r->blk_of[w] = b;
    if (--r->blk[old].users == 0)
        blk_forget(r, old);
    blk_unref(r, old);
}

/* Whether block b, once it forgets its keyed step, is still shared: with other workers, pins,
 * holds, or the keyed step of another block that leads here (a worker that stepped while
 * another on its old block did not, e.g. a failed one). When no block is unused, every block's
 * keyed step is let go first: those references may be the only others on b (then w writes in
 * place), and after that every used block has a worker, a pin or a hold of its own, of which
 * room() keeps fewer than blocks, so b still shared leaves an unused block for blk_take. */
static bool blk_shared(replica *r, uint32_t b)
{
    blk_forget(r, b);
    if (r->blk[b].refs > 1 && r->nfree == 0)
        for (uint32_t i = 0; i < r->nblk; i++)
            if (r->blk[i].refs > 0)
                blk_forget(r, i);
    return r->blk[b].refs > 1;
}

/* An unused block: blk_shared has just said that the caller's block is shared. */
static uint32_t blk_take(replica *r)
{
    assert(r->nfree > 0);
    uint32_t b = r->blk_free[--r->nfree];
    if (r->unwritten > r->nfree) /* the last written one was used: b is written now */
        r->unwritten = r->nfree;
    r->blk[b].refs = 0;
    r->blk[b].users = 0;
    r->blk[b].next = NO_BLOCK;
    return b;
}

/* A new block holding a copy of block b's parameters and momentum, for its worker w to move
 * to. When only readers of parameters (pins, holds) stay on b, w takes b's momentum buffer
 * along instead of a copy (nobody reads b's momentum again: no worker can move onto a block
 * that no keyed step leads to), so a copy on write costs one parameter vector. */
static uint32_t blk_copy(replica *r, uint32_t b)
{
    uint32_t nb = blk_take(r);
    replica_block *k = &r->blk[b], *d = &r->blk[nb];
    sim_tensor_copy(d->p, k->p, r->P);
    if (r->momentum && k->users == 1 && k->refs == 1 + k->pins + k->holds) {
        float *v = d->v;
        d->v = k->v;
        k->v = v;
    } else if (r->momentum) {
        sim_tensor_copy(d->v, k->v, r->P);
    }
    return nb;
}

void replica_own(replica *r, uint32_t w)
{
    if (r->P == 0) /* zero floats: a write writes nothing, there is nothing to protect */
        return;
    uint32_t b = r->blk_of[w];
    if (blk_shared(r, b))
        move_to(r, w, blk_copy(r, b));
}

uint32_t replica_pin(replica *r, uint32_t w)
{
    assert(replica_pins_allowed(r));
    uint32_t b = r->blk_of[w];
    r->blk[b].refs++;
    r->blk[b].pins++;
    return b;
}

void replica_unpin(replica *r, uint32_t b)
{
    assert(r->blk[b].pins > 0);
    r->blk[b].pins--;
    blk_unref(r, b);
}

int replica_hold(replica *r, uint32_t w, uint32_t *b, sim_err *err)
{
    int rc = room(r, 1, err);
    if (rc != SIM_OK)
        return rc;
    *b = r->blk_of[w];
    r->blk[*b].refs++;
    r->blk[*b].holds++;
    r->nholds++;
    return SIM_OK;
}

void replica_release(replica *r, uint32_t b)
{
    assert(r->blk[b].holds > 0);
    r->blk[b].holds--;
    r->nholds--;
    blk_unref(r, b);
}

const float *replica_block_params(const replica *r, uint32_t b)
{
    return r->blk[b].p;
}

bool replica_write_orphans(const replica *r, uint32_t w)
{
    const replica_block *k = &r->blk[r->blk_of[w]];
    return k->users == 1 && k->pins > 0;
}

uint32_t replica_orphans(const replica *r)
{
    uint32_t n = 0;
    for (uint32_t b = 0; b < r->nblk; b++)
        n += r->blk[b].users == 0 && r->blk[b].pins > 0;
    return n;
}

bool replica_keyed_follow(replica *r, uint32_t w, const replica_key *k)
{
    if (r->P == 0) /* zero floats: every step is nothing, taken in place */
        return false;
    const replica_block *b = &r->blk[r->blk_of[w]];
    if (b->next == NO_BLOCK || b->key.key != k->key || b->key.grad != k->grad ||
        b->key.lr != k->lr || b->key.momentum != k->momentum)
        return false;
    move_to(r, w, b->next); /* another worker on this block took this step already */
    return true;
}

void replica_keyed_fork(replica *r, uint32_t w, const replica_key *k)
{
    if (r->P == 0)
        return;
    uint32_t b = r->blk_of[w];
    if (!blk_shared(r, b)) /* alone on it: in place */
        return;
    /* The step, from the shared block into a new one that the others will follow. */
    uint32_t nb = blk_copy(r, b);
    r->blk[b].next = nb;
    r->blk[b].key = *k;
    r->blk[nb].refs = 1; /* the keyed step's reference */
    move_to(r, w, nb);
}
