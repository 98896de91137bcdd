/* Moshpit's key form: the matchmaking's indexes, which keep it linear (issue 38;
 * protocols/moshpit_state.h). The declared workers (KS_FOLLOW, KS_ACCEPTED, KS_LEAD) in a
 * treap ordered by (key, expiration, id), so that mp_try_next finds the earliest candidate
 * under its key without a walk over every worker; and each worker's askers (the workers
 * whose `asked` is it) as a list, so that a failure visits those alone. A worker's node is
 * made when it declares or looks further (mp_ix_enter) and dropped lazily, when a search
 * meets it out of date: a worker out of the declared states, or declared anew. Calls nothing
 * of protocols/moshpit.c. */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#include "kit/coll.h"
#include "protocols/moshpit_state.h"
#include "runtime/arena.h"
#include "runtime/proto.h"

#define NIL UINT32_MAX

static uint32_t klen(const moshpit *st)
{
    return st->d > 0 ? st->d - 1 : 0;
}

static const uint32_t *node_key(const moshpit *st, uint32_t t)
{
    return st->ix.key + (size_t)t * klen(st);
}

/* A node's priority: a hash of its id (no random stream is drawn). */
static uint32_t prio(uint32_t w)
{
    uint32_t x = w * 0x9e3779b9u;
    x ^= x >> 16;
    x *= 0x85ebca6bu;
    x ^= x >> 13;
    x *= 0xc2b2ae35u;
    return x ^ x >> 16;
}

/* Node t against (key k, expiration e, id): -1 before, 0 the same, 1 after. */
static int cmp(const moshpit *st, uint32_t t, const uint32_t *k, sim_time e, uint32_t id)
{
    const uint32_t *kt = node_key(st, t);
    for (uint32_t i = 0; i < klen(st); i++)
        if (kt[i] != k[i])
            return kt[i] < k[i] ? -1 : 1;
    if (st->ix.exp[t] != e)
        return st->ix.exp[t] < e ? -1 : 1;
    return t < id ? -1 : t > id;
}

static void split(moshpit *st, uint32_t t, uint32_t w, uint32_t *l, uint32_t *r)
{
    if (t == NIL) {
        *l = *r = NIL;
    } else if (cmp(st, t, node_key(st, w), st->ix.exp[w], w) < 0) {
        split(st, st->ix.right[t], w, &st->ix.right[t], r);
        *l = t;
    } else {
        split(st, st->ix.left[t], w, l, &st->ix.left[t]);
        *r = t;
    }
}

static uint32_t merge(moshpit *st, uint32_t a, uint32_t b)
{
    if (a == NIL || b == NIL)
        return a == NIL ? b : a;
    if (prio(a) > prio(b)) {
        st->ix.right[a] = merge(st, st->ix.right[a], b);
        return a;
    }
    st->ix.left[b] = merge(st, a, st->ix.left[b]);
    return b;
}

static uint32_t erase(moshpit *st, uint32_t t, uint32_t w)
{
    int c = cmp(st, t, node_key(st, w), st->ix.exp[w], w);
    if (c == 0)
        return merge(st, st->ix.left[t], st->ix.right[t]);
    if (c < 0)
        st->ix.right[t] = erase(st, st->ix.right[t], w);
    else
        st->ix.left[t] = erase(st, st->ix.left[t], w);
    return t;
}

static void drop(moshpit *st, uint32_t w)
{
    st->ix.root = erase(st, st->ix.root, w);
    st->ix.in[w] = false;
}

/* Whether node t says what worker t is now: declared, under the same key and expiration. */
static bool current(const moshpit *st, const sim_ctx *ctx, uint32_t t)
{
    const mp_worker *a = mp_at(ctx, t);
    return a->ks >= KS_FOLLOW && a->ks <= KS_LEAD && st->ix.exp[t] == a->expires &&
           cmp(st, t, a->key, a->expires, t) == 0;
}

void mp_ix_init(moshpit *st)
{
    st->ix.root = NIL;
    for (uint32_t w = 0; w < st->n; w++)
        st->ix.ahead[w] = st->ix.under[w] = NIL;
}

void mp_ix_buffers(moshpit *st, sim_arena *a)
{
    mp_index *x = &st->ix;
    size_t n = st->n;
    x->left = sim_arena_alloc(a, n, sizeof(*x->left));
    x->right = sim_arena_alloc(a, n, sizeof(*x->right));
    x->exp = sim_arena_alloc(a, n, sizeof(*x->exp));
    x->key = sim_arena_alloc(a, n * (klen(st) > 0 ? klen(st) : 1), sizeof(*x->key));
    x->in = sim_arena_alloc(a, n, sizeof(*x->in));
    x->ahead = sim_arena_alloc(a, n, sizeof(*x->ahead));
    x->anext = sim_arena_alloc(a, n, sizeof(*x->anext));
    x->aprev = sim_arena_alloc(a, n, sizeof(*x->aprev));
    x->under = sim_arena_alloc(a, n, sizeof(*x->under));
    x->scratch = sim_arena_alloc(a, n, sizeof(*x->scratch));
}

void mp_ix_enter(moshpit *st, sim_ctx *ctx, uint32_t w)
{
    mp_index *x = &st->ix;
    if (x->in[w] && current(st, ctx, w))
        return;
    if (x->in[w])
        drop(st, w);
    const mp_worker *a = mp_at(ctx, w);
    for (uint32_t i = 0; i < klen(st); i++)
        x->key[(size_t)w * klen(st) + i] = a->key[i];
    x->exp[w] = a->expires;
    x->left[w] = x->right[w] = NIL;
    uint32_t l, r;
    split(st, x->root, w, &l, &r);
    x->root = merge(st, merge(st, l, w), r);
    x->in[w] = true;
}

uint32_t mp_ix_next(moshpit *st, sim_ctx *ctx, uint32_t w, uint32_t prev, sim_time from)
{
    const mp_worker *me = mp_at(ctx, w);
    sim_time e = prev != COLL_NONE ? from : INT64_MIN;
    uint32_t id = prev != COLL_NONE ? prev + 1 : 0;
    for (;;) { /* the first node after (key, e, id), if current and before w */
        uint32_t best = NIL;
        for (uint32_t t = st->ix.root; t != NIL;) {
            bool ge = cmp(st, t, me->key, e, id) >= 0;
            best = ge ? t : best;
            t = ge ? st->ix.left[t] : st->ix.right[t];
        }
        if (best == NIL || cmp(st, best, me->key, me->expires, w) >= 0)
            return COLL_NONE;
        if (current(st, ctx, best))
            return best;
        e = st->ix.exp[best];
        id = best + 1;
        drop(st, best);
    }
}

void mp_ix_ask(moshpit *st, sim_ctx *ctx, uint32_t w, uint32_t c)
{
    mp_index *x = &st->ix;
    uint32_t u = x->under[w];
    if (u != NIL) {
        if (x->aprev[w] == NIL)
            x->ahead[u] = x->anext[w];
        else
            x->anext[x->aprev[w]] = x->anext[w];
        if (x->anext[w] != NIL)
            x->aprev[x->anext[w]] = x->aprev[w];
    }
    mp_at(ctx, w)->asked = c;
    x->under[w] = c == COLL_NONE ? NIL : c;
    if (c == COLL_NONE)
        return;
    x->aprev[w] = NIL;
    x->anext[w] = x->ahead[c];
    if (x->ahead[c] != NIL)
        x->aprev[x->ahead[c]] = w;
    x->ahead[c] = w;
}

static int by_id(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

uint32_t mp_ix_askers(moshpit *st, const sim_ctx *ctx, uint32_t d, const uint32_t **out)
{
    uint32_t k = 0;
    for (uint32_t f = st->ix.ahead[d]; f != NIL; f = st->ix.anext[f]) {
        const mp_worker *a = mp_at(ctx, f);
        if (a->ks == KS_FOLLOW || a->ks == KS_ACCEPTED)
            st->ix.scratch[k++] = f;
    }
    if (k > 1)
        qsort(st->ix.scratch, k, sizeof(*st->ix.scratch), by_id);
    *out = st->ix.scratch;
    return k;
}
