/* Butterfly all-reduce (kit/coll.h, PROTOCOLS 1.2). Calls coll.c's hub, never the
 * other way round. Positions: the member at position p of the round reduces part p. */
#include <stdbool.h>
#include <string.h>

#include "kit/coll.h"
#include "kit/coll_state.h"
#include "sim/tensor.h"

enum {
    ST_JOINED = 1,  /* sent its parts */
    ST_REDUCED = 2, /* reduced its part and sent the result */
    ST_DONE = 4,    /* has every part (or gave up on it) and was called back */
    ST_DOWN = 8,    /* failed (down): takes no further part in the round */
    ST_LISTED = 16, /* in the round's failed list */
};

enum {
    KIND_PART = 0,
    KIND_RESULT = 1
};
enum {
    TIMER_SENDER = 0,
    TIMER_REDUCER = 1
};

static int bf_on_message(void *inst, sim_ctx *ctx, const sim_event *ev, sim_err *err);
static int bf_on_timer(void *inst, sim_ctx *ctx, msg_timer t, sim_err *err);
static int bf_on_down(void *inst, sim_ctx *ctx, uint32_t w, sim_err *err);

const coll_ops coll_bfly_ops = {
    .on_message = bf_on_message,
    .on_timer = bf_on_timer,
    .on_down = bf_on_down,
};

/* Part p of a vector of `total` units (floats or bytes) split into n: its offset and size. */
static uint64_t part_off(uint64_t total, uint32_t n, uint32_t p)
{
    uint64_t q = total / n, r = total % n;
    return p * q + (p < r ? p : r);
}

static uint64_t part_len(uint64_t total, uint32_t n, uint32_t p)
{
    return total / n + (p < total % n ? 1 : 0);
}

static void cancel(sim_ctx *ctx, sim_time *deadline, sim_event_id id)
{
    if (*deadline >= 0)
        sim_ctx_cancel(ctx, id);
    *deadline = -1;
}

/* Adds the member at position p to the round's failed list (once). */
static void list_failed(coll_bfly *b, uint32_t p)
{
    if (b->state[p] & ST_LISTED)
        return;
    b->state[p] |= ST_LISTED;
    b->failed[b->nfailed++] = b->members[p];
}

static void drop_sender(coll_bfly *b, uint32_t j, uint32_t i)
{
    if (b->got[(size_t)j * b->cap + i] != 0)
        return;
    b->got[(size_t)j * b->cap + i] = 2;
    b->ngot[j]++;
    b->dropped++;
    list_failed(b, i);
}

static void give_up(coll_bfly *b, uint32_t i, uint32_t j)
{
    if (b->have[(size_t)i * b->cap + j] != 0)
        return;
    b->have[(size_t)i * b->cap + j] = 2;
    b->nhave[i]++;
    b->kept++;
    list_failed(b, j);
}

static int try_finish(coll_bfly *b, sim_ctx *ctx, uint32_t i, sim_err *err)
{
    uint8_t s = b->state[i];
    if (!(s & ST_JOINED) || (s & (ST_DONE | ST_DOWN)) || b->nhave[i] < b->n)
        return SIM_OK;
    uint32_t w = b->members[i];
    if (b->nfloats > 0 && b->output != NULL) {
        const float *in = b->input(b->ud, ctx, w);
        float *out = b->output(b->ud, ctx, w);
        for (uint32_t j = 0; j < b->n && in != out; j++)
            if (b->have[(size_t)i * b->cap + j] == 2)
                memcpy(out + part_off(b->nfloats, b->n, j), in + part_off(b->nfloats, b->n, j),
                       part_len(b->nfloats, b->n, j) * sizeof(float));
    }
    b->state[i] |= ST_DONE;
    b->finished++;
    cancel(ctx, &b->reducer_deadline[i], b->reducer_timer[i]);
    coll_info info = { .channel = b->channel,
                       .round = b->round,
                       .failed = b->failed,
                       .nfailed = b->nfailed,
                       .lr = b->lr };
    return b->done(b->ud, ctx, w, &info, err);
}

/* Reducer j's weighted mean of part j over the contributions it has, in member order. */
static void reduce_part(coll_bfly *b, uint32_t j)
{
    size_t off = part_off(b->nfloats, b->n, j), len = part_len(b->nfloats, b->n, j);
    uint32_t k = 0;
    double wsum = 0;
    for (uint32_t i = 0; i < b->n; i++) {
        size_t g = (size_t)j * b->cap + i;
        if (b->got[g] != 1)
            continue;
        b->src[k] = b->stage + (size_t)i * b->nfloats + off;
        b->wsrc[k] = b->weight[i];
        wsum += b->weight[i];
        k++;
    }
    float *out = b->result + off;
    for (size_t e = 0; e < len; e++) {
        double s = 0;
        for (uint32_t v = 0; v < k; v++)
            s += b->wsrc[v] * (double)b->src[v][e];
        out[e] = (float)(s / wsum);
    }
}

static int try_reduce(coll_bfly *b, sim_ctx *ctx, uint32_t j, sim_err *err)
{
    uint8_t s = b->state[j];
    if (!(s & ST_JOINED) || (s & (ST_REDUCED | ST_DOWN)) || b->ngot[j] < b->n)
        return SIM_OK;
    b->state[j] |= ST_REDUCED;
    cancel(ctx, &b->sender_deadline[j], b->sender_timer[j]);
    uint32_t w = b->members[j];
    size_t off = part_off(b->nfloats, b->n, j), len = part_len(b->nfloats, b->n, j);
    if (b->nfloats > 0) {
        reduce_part(b, j);
        if (b->output != NULL)
            memcpy(b->output(b->ud, ctx, w) + off, b->result + off, len * sizeof(float));
    }
    b->have[(size_t)j * b->cap + j] = 1;
    b->nhave[j]++;
    msg_hdr h = { .channel = b->channel, .kind = KIND_RESULT, .seq = b->gen };
    uint64_t bytes = part_len(b->bytes, b->n, j);
    uint32_t snap; /* one copy of the reduced part for every member */
    int rc = sim_ctx_snapshot(ctx, b->nfloats > 0 ? b->result + off : NULL, len, &snap, err);
    for (uint32_t i = 0; i < b->n && rc == SIM_OK; i++) {
        uint32_t v = b->members[i];
        if (i == j || (b->state[i] & ST_DOWN) || sim_ctx_down(ctx, v))
            continue;
        rc = msg_post(ctx, w, v, bytes, h, msg_held(snap), err);
    }
    sim_ctx_release(ctx, snap);
    if (rc != SIM_OK)
        return rc;
    return try_finish(b, ctx, j, err);
}

/* Runs try_reduce and try_finish over every position; stops if `done` started a new round. */
static int sweep(coll_bfly *b, sim_ctx *ctx, sim_err *err)
{
    uint64_t gen = b->gen;
    for (uint32_t p = 0; p < b->n && b->gen == gen; p++) {
        int rc = try_reduce(b, ctx, p, err);
        if (rc == SIM_OK && b->gen == gen)
            rc = try_finish(b, ctx, p, err);
        if (rc != SIM_OK)
            return rc;
    }
    return SIM_OK;
}

/* The member at position p is down: nobody waits for it any more. */
static void fail_member(coll_bfly *b, sim_ctx *ctx, uint32_t p)
{
    if (!(b->state[p] & ST_DONE))
        b->finished++;
    b->state[p] |= ST_DOWN;
    list_failed(b, p);
    for (uint32_t q = 0; q < b->n; q++) {
        if (q == p)
            continue;
        drop_sender(b, q, p);
        give_up(b, q, p);
    }
    cancel(ctx, &b->sender_deadline[p], b->sender_timer[p]);
    cancel(ctx, &b->reducer_deadline[p], b->reducer_timer[p]);
}

/* A start's list is refused: the butterfly is left with no round. */
static int bad_member(coll_bfly *b, uint32_t w, sim_err *err)
{
    b->n = 0;
    memset(b->index, 0xff, ((size_t)1 << b->bits) * sizeof(*b->index));
    return sim_err_set(err, SIM_EINVAL, NULL,
                       "butterfly: member %u is repeated, unknown or has a weight <= 0", w);
}

int coll_bfly_start(coll_bfly *b, sim_ctx *ctx, const uint32_t *members, const double *weights,
                    uint32_t n, uint64_t round, sim_err *err)
{
    if (n == 0 || n > b->workers)
        return sim_err_set(err, SIM_EINVAL, NULL, "butterfly: %u members, want 1 to %u", n,
                           b->workers);
    for (uint32_t p = 0; p < b->n; p++) {
        cancel(ctx, &b->sender_deadline[p], b->sender_timer[p]);
        cancel(ctx, &b->reducer_deadline[p], b->reducer_timer[p]);
    }
    if (n > b->cap) {
        uint32_t cap = 2 * b->cap > b->workers ? b->workers : 2 * b->cap;
        b->n = 0;
        int rc = coll_bfly_grow(b, cap > n ? cap : n, err);
        if (rc != SIM_OK)
            return rc;
    }
    b->gen++;
    b->round = round;
    b->lr = sim_ctx_rates(ctx).lr;
    b->nfailed = 0;
    b->finished = 0;
    b->n = n;
    memset(b->index, 0xff, ((size_t)1 << b->bits) * sizeof(*b->index));
    for (uint32_t p = 0; p < n; p++) {
        uint32_t w = members[p];
        uint32_t slot = w < b->workers ? coll_bfly_slot(b, w) : 0;
        if (w >= b->workers || b->index[slot] != COLL_BFLY_FREE ||
            (weights != NULL && !(weights[p] > 0)))
            return bad_member(b, w, err);
        b->members[p] = w;
        b->index[slot] = (uint64_t)w << 32 | p;
        b->weight[p] = weights != NULL ? weights[p] : 1.0;
        b->state[p] = 0;
        b->ngot[p] = b->nhave[p] = 0;
        memset(b->got + (size_t)p * b->cap, 0, n);
        memset(b->have + (size_t)p * b->cap, 0, n);
    }
    for (uint32_t p = 0; p < n; p++)
        if (sim_ctx_down(ctx, b->members[p]))
            fail_member(b, ctx, p);
    return SIM_OK;
}

/* Member w's position for a join or a leave: SIM_EINVAL unless w is a member that has not
 * joined; *p is COLL_NONE (nothing to do) for a member already down. */
static int unjoined(const coll_bfly *b, uint32_t w, uint32_t *p, sim_err *err)
{
    *p = coll_bfly_find(b, w);
    if (*p == COLL_NONE || (b->state[*p] & ST_JOINED))
        return sim_err_set(err, SIM_EINVAL, NULL,
                           "butterfly: worker %u is not a member or joined already", w);
    if (b->state[*p] & ST_DOWN)
        *p = COLL_NONE;
    return SIM_OK;
}

int coll_bfly_join(coll_bfly *b, sim_ctx *ctx, uint32_t w, sim_err *err)
{
    uint32_t p;
    int rc = unjoined(b, w, &p, err);
    if (rc != SIM_OK || p == COLL_NONE)
        return rc;
    b->state[p] |= ST_JOINED;
    const float *in = b->nfloats > 0 ? b->input(b->ud, ctx, w) : NULL;
    size_t off = part_off(b->nfloats, b->n, p);
    if (in != NULL)
        memcpy(b->stage + (size_t)p * b->nfloats + off, in + off,
               part_len(b->nfloats, b->n, p) * sizeof(float));
    b->got[(size_t)p * b->cap + p] = 1;
    b->ngot[p]++;
    msg_hdr h = { .channel = b->channel, .kind = KIND_PART, .seq = b->gen };
    for (uint32_t j = 0; j < b->n; j++) {
        if (j == p || (b->state[j] & ST_DOWN))
            continue;
        uint64_t bytes = part_len(b->bytes, b->n, j);
        sim_payload part =
            in != NULL ? msg_copy(in + part_off(b->nfloats, b->n, j), part_len(b->nfloats, b->n, j))
                       : msg_none();
        rc = msg_post(ctx, w, b->members[j], bytes, h, part, err);
        if (rc != SIM_OK)
            return rc;
    }
    sim_time now = sim_ctx_now(ctx);
    if (b->sender_timeout > 0 && b->ngot[p] < b->n) {
        b->sender_deadline[p] = now + b->sender_timeout;
        msg_timer t = { .channel = b->channel, .kind = TIMER_SENDER, .attempt = p };
        rc = coll_hub_timer(b->hub, ctx, b->sender_timeout, t, &b->sender_timer[p], err);
    }
    if (rc == SIM_OK && b->reducer_timeout > 0) {
        b->reducer_deadline[p] = now + b->reducer_timeout;
        msg_timer t = { .channel = b->channel, .kind = TIMER_REDUCER, .attempt = p };
        rc = coll_hub_timer(b->hub, ctx, b->reducer_timeout, t, &b->reducer_timer[p], err);
    }
    return rc != SIM_OK ? rc : sweep(b, ctx, err);
}

static int bf_on_message(void *inst, sim_ctx *ctx, const sim_event *ev, sim_err *err)
{
    coll_bfly *b = inst;
    msg_hdr h = msg_read(ev);
    uint32_t w = (uint32_t)ev->dst, src = (uint32_t)ev->src;
    uint32_t p = coll_bfly_find(b, w), q = coll_bfly_find(b, src);
    if (h.seq != b->gen || p == COLL_NONE || q == COLL_NONE || (b->state[p] & ST_DOWN)) {
        b->stale++;
        return SIM_OK;
    }
    if (h.kind == KIND_PART) {
        size_t g = (size_t)p * b->cap + q;
        if (b->got[g] != 0 || (b->state[p] & ST_REDUCED)) {
            b->stale++; /* came after its sender was dropped */
            return SIM_OK;
        }
        b->got[g] = 1;
        b->ngot[p]++;
        const float *x = sim_ctx_held(ctx, SIM_CTX_PAYLOAD);
        if (b->nfloats > 0 && x != NULL)
            memcpy(b->stage + (size_t)q * b->nfloats + part_off(b->nfloats, b->n, p), x,
                   part_len(b->nfloats, b->n, p) * sizeof(float));
        return try_reduce(b, ctx, p, err);
    }
    size_t g = (size_t)p * b->cap + q;
    if (b->have[g] != 0 || (b->state[p] & ST_DONE)) {
        b->stale++; /* came after its member gave up on it */
        return SIM_OK;
    }
    b->have[g] = 1;
    b->nhave[p]++;
    const float *x = sim_ctx_held(ctx, SIM_CTX_PAYLOAD);
    if (b->nfloats > 0 && b->output != NULL && x != NULL)
        memcpy(b->output(b->ud, ctx, w) + part_off(b->nfloats, b->n, q), x,
               part_len(b->nfloats, b->n, q) * sizeof(float));
    return try_finish(b, ctx, p, err);
}

static int bf_on_timer(void *inst, sim_ctx *ctx, msg_timer t, sim_err *err)
{
    coll_bfly *b = inst;
    uint32_t p = t.attempt; /* the member's position */
    sim_time now = sim_ctx_now(ctx);
    sim_time *deadline = t.kind == TIMER_SENDER ? &b->sender_deadline[p] : &b->reducer_deadline[p];
    if (p >= b->n || *deadline != now || (b->state[p] & ST_DOWN)) {
        b->stale++;
        return SIM_OK;
    }
    *deadline = -1;
    for (uint32_t q = 0; q < b->n; q++) {
        if (t.kind == TIMER_SENDER)
            drop_sender(b, p, q);
        else if (q != p) /* its own part comes from its own reduction */
            give_up(b, p, q);
    }
    return sweep(b, ctx, err);
}

int coll_bfly_leave(coll_bfly *b, sim_ctx *ctx, uint32_t w, sim_err *err)
{
    uint32_t p;
    int rc = unjoined(b, w, &p, err);
    if (rc != SIM_OK || p == COLL_NONE)
        return rc;
    fail_member(b, ctx, p);
    return sweep(b, ctx, err);
}

static int bf_on_down(void *inst, sim_ctx *ctx, uint32_t w, sim_err *err)
{
    return coll_bfly_worker_down(inst, ctx, w, err);
}

int coll_bfly_worker_down(coll_bfly *b, sim_ctx *ctx, uint32_t w, sim_err *err)
{
    uint32_t p = coll_bfly_find(b, w);
    if (p == COLL_NONE || (b->state[p] & ST_DOWN))
        return SIM_OK;
    fail_member(b, ctx, p);
    return sweep(b, ctx, err);
}
