/* Moshpit All-Reduce and Moshpit SGD (PROTOCOLS 5.1, 5.3; butterfly inside groups, 1.2).
 *
 * Rounds are global: round r starts when every worker is done with round r-1. At its start
 * every live worker is asked whether it sits out the round (sim_ctx_dropped, in worker
 * order); the others are cut into groups:
 *   grid   (`grid` [M1, M2, ...], d axes): each worker holds a distinct cell of the grid,
 *          drawn once from the protocol stream (the first N cells of a shuffle of all of
 *          them). Round r averages along axis a = r mod d: a group is every participating
 *          worker that shares all coordinates but a. On a perfect grid (N = product) without
 *          dropouts, d rounds give the exact global mean (up to float rounding).
 *   random (`groups`: "random", `group_size` M): the participants are shuffled with the
 *          protocol stream and cut into groups of M, leftovers spread round-robin.
 * Each live worker first takes `local_steps` SGD steps (0: pure averaging), then joins its
 * group's butterfly all-reduce (protocols/coll.h: parts of the model to every member,
 * the reducer's mean back; `sender_timeout_ms` and `reducer_timeout_ms` as in 1.2). Its
 * result replaces the worker's model as x <- x + alpha (avg - x), `averaging_alpha` alpha
 * (1: plain replacement, exact copy). A worker alone in its group, or sitting out, keeps its
 * value. Members are listed in worker-id order, so groups are equal at the bit level after a
 * round without failures; every round keeps the sum over workers (group means, dropouts
 * unchanged), to float rounding.
 *
 * Failures: a worker that goes down leaves its round (its butterfly treats it as failed, the
 * others exclude or keep its part as 1.2 says) and rejoins at the next round start. The
 * round end is sim_ctx_round_end (stop.rounds, stop.consensus, iterations stops).
 *
 * Key form (`form`: "keys", PROTOCOLS 5.2): the groups are found by matchmaking messages
 * instead of the grid. Each worker holds a key of d - 1 digits (initially its cell's
 * coordinates 1..d-1, so that on a perfect grid each key has M holders); when ready it
 * declares itself until now + `matchmaking_ms` and asks, earliest first, the peers declared
 * under its key before it (by expiration, then id: the declared lists are read from the
 * protocol's state, as from a DHT) to lead it; a peer that is not leading, or is full,
 * rejects; with nobody left to ask it leads. A leader accepts up to `target_group_size` and
 * starts its group when full, or at its expiration with `min_group_size` or more, else
 * disbands (its followers stay alone this round); without a target (null, hivemind's None,
 * the default) it accepts everyone until its expiration, its member list doubling when
 * full. It shuffles the order and draws the group id from its own stream; after the
 * butterfly each member drops its oldest digit and appends r_p, the p-th of distinct
 * indices in 0..B-1 (B the target, or the next power of two of the group's size) drawn from
 * an rng seeded by the group id (p: its position), so members of one group never share a
 * key in the next round.
 *
 * Defaults (protocols/moshpit_config.c): the grid from N when absent; training runs
 * (`local_steps` >= 1) in the key form without global rounds, matchmaking for one
 * iteration time; averaging alone (`local_steps` 0) in grid rounds.
 *
 * Without global rounds (key form, `sync` false): each worker starts its next round (local
 * steps, matchmaking) as soon as it is done with the last, groups take butterflies from a
 * pool and give them back when over, and a round ends (sim_ctx_round_end) whenever the
 * fewest rounds done by a live worker grows. Peers of different rounds may then share a key,
 * so the d-round exactness of the perfect grid holds only with global rounds.
 *
 * Files: this one holds the rounds, the key form's matchmaking and the events;
 * protocols/moshpit_groups.c the groups of a grid or random round and the key update,
 * protocols/moshpit_config.c the configuration, protocols/moshpit_state.h the state they share.
 */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#include <gsl/gsl_randist.h>

#include "protocols/coll.h"
#include "protocols/graph.h"
#include "protocols/moshpit_state.h"
#include "runtime/proto.h"
#include "sim/tensor.h"

enum {
    EV_COLL = SIM_EV_USER,           /* the kit's butterfly timers */
    EV_NEXT = SIM_EV_USER + 1,       /* the next round starts (after the last one's event) */
    EV_EXPIRE = SIM_EV_USER + 2,     /* key form: a leader's declared time is up; arg = round */
    EV_REQ_TIMEOUT = SIM_EV_USER + 3 /* key form: a request unanswered; arg = round, attempt */
};

/* Key form messages on channel 0 (seq = round). */
enum {
    MSG_REQUEST = 0, /* follower -> candidate leader */
    MSG_ACCEPT = 1,  /* leader -> follower */
    MSG_REJECT = 2,  /* candidate -> follower: not leading, or full */
    MSG_BEGIN = 3,   /* leader -> follower: the group (order, id) */
    MSG_DISBAND = 4  /* leader -> follower: too few by the declared time */
};

#define MSG_SMALL_BYTES 64 /* a matchmaking message */

static void mp_fini(void *state)
{
    moshpit *st = state;
    for (uint32_t i = 0; st->bf != NULL && i < st->nbf; i++)
        coll_bfly_destroy(st->bf[i]);
    free(st->bf);
    coll_hub_destroy(st->hub);
    free(st->cell);
    free(st->group);
    free(st->list);
    free(st->line);
    free(st->phase);
    free(st->left);
    sim_tensor_free(st->avg);
    free(st->key);
    free(st->expires);
    free(st->ks);
    free(st->asked);
    free(st->tries);
    for (uint32_t w = 0; st->mem != NULL && w < st->n; w++)
        free(st->mem[w]);
    free(st->mem);
    free(st->mcap);
    free(st->nmem);
    free(st->gid);
    free(st->last);
    free(st->last_round);
    free(st->perm);
    if (st->krng != NULL)
        gsl_rng_free(st->krng);
    free(st->wr);
    free(st->freebf);
    free(st->inuse);
}

/* ---- rounds ---- */

static const float *mp_input(void *ud, sim_ctx *ctx, uint32_t w)
{
    (void)ud;
    return sim_ctx_params_view(ctx, w);
}

static float *mp_output(void *ud, sim_ctx *ctx, uint32_t w)
{
    (void)ctx;
    moshpit *st = ud;
    return st->avg + (size_t)w * st->P;
}

static int begin_round(moshpit *st, sim_ctx *ctx, sim_err *err);
static int ready(moshpit *st, sim_ctx *ctx, uint32_t w, sim_err *err);

/* Ends the round when every worker is done with it and every butterfly complete. */
static int check_round(moshpit *st, sim_ctx *ctx, sim_err *err)
{
    if (st->busy > 0)
        return SIM_OK;
    for (uint32_t g = 0; g < st->active; g++)
        if (!coll_bfly_round_complete(st->bf[g]))
            return SIM_OK;
    st->busy = UINT32_MAX; /* until the next round starts */
    sim_ctx_round_end(ctx);
    st->round++;
    return sim_ctx_timer(ctx, 0, EV_NEXT, SIM_NOBODY, st->round, NULL, err);
}

/* Async: the fewest rounds done by a live worker; each rise is a round end. */
static void update_floor(moshpit *st, sim_ctx *ctx)
{
    uint64_t f = UINT64_MAX;
    for (uint32_t w = 0; w < st->n; w++)
        if (!sim_ctx_down(ctx, w) && st->wr[w] < f)
            f = st->wr[w];
    while (f != UINT64_MAX && st->floor < f) {
        st->floor++;
        st->round = st->floor;
        sim_ctx_round_end(ctx);
    }
}

/* Async: butterflies whose group is over go back to the pool. */
static void release_groups(moshpit *st)
{
    for (uint32_t b = 0; b < st->nbf; b++) {
        if (!st->inuse[b] || !coll_bfly_round_complete(st->bf[b]))
            continue;
        st->inuse[b] = false;
        st->freebf[st->nfree++] = b;
    }
}

static int finish(moshpit *st, sim_ctx *ctx, uint32_t w, sim_err *err)
{
    st->phase[w] = PH_DONE;
    if (st->async) { /* its next round starts at once (after this event) */
        st->wr[w]++;
        update_floor(st, ctx);
        return sim_ctx_timer(ctx, 0, EV_NEXT, (int32_t)w, st->wr[w], NULL, err);
    }
    st->busy--;
    return check_round(st, ctx, err);
}

/* Async: worker w starts its next round: local steps, then matchmaking (or it sits out). */
static int start_worker(moshpit *st, sim_ctx *ctx, uint32_t w, sim_err *err)
{
    st->group[w] = COLL_NONE;
    st->ks[w] = KS_WAIT;
    if (sim_ctx_dropped(ctx, w, st->wr[w])) {
        st->sat_out++;
        st->ks[w] = KS_OUT;
    }
    if (st->local_steps == 0)
        return ready(st, ctx, w, err);
    st->phase[w] = PH_COMPUTE;
    st->left[w] = st->local_steps;
    return sim_ctx_compute(ctx, w, st->wr[w], err);
}

static int on_done(void *ud, sim_ctx *ctx, uint32_t w, const coll_info *info, sim_err *err)
{
    moshpit *st = ud;
    if (st->phase[w] != PH_GROUP || (!st->async && info->round != st->round))
        return SIM_OK; /* left the round (down) */
    if (st->P > 0) {
        float *x = sim_ctx_params(ctx, w);
        const float *a = st->avg + (size_t)w * st->P;
        if (st->alpha == 1.0)
            sim_tensor_copy(x, a, st->P);
        else
            for (size_t i = 0; i < st->P; i++)
                x[i] += (float)st->alpha * (a[i] - x[i]);
    }
    if (st->keys)
        mp_update_key(st, w, st->group[w]);
    if (st->async)
        release_groups(st);
    return finish(st, ctx, w, err);
}

/* ---- key form: matchmaking (PROTOCOLS 5.2) ---- */

static bool same_key(const moshpit *st, uint32_t a, uint32_t b)
{
    uint32_t L = st->d - 1;
    for (uint32_t i = 0; i < L; i++)
        if (st->key[(size_t)a * L + i] != st->key[(size_t)b * L + i])
            return false;
    return true;
}

/* (expiration, id) of a before b's: whom a follower may ask. */
static bool before(const moshpit *st, uint32_t a, uint32_t b)
{
    return st->expires[a] < st->expires[b] || (st->expires[a] == st->expires[b] && a < b);
}

/* The sequence number of follower f's matchmaking messages: the round (global rounds), or
 * its attempt (async: requests and leaderships so far). */
static uint64_t mseq(const moshpit *st, uint32_t f)
{
    return st->async ? st->tries[f] : st->round;
}

/* The timer of follower w's current request: its attempt in the round (global rounds), or
 * its attempt (async). */
static msg_timer request_timer(const moshpit *st, uint32_t w)
{
    msg_timer t = { .attempt = st->tries[w], .seq = st->async ? 0 : st->round };
    return t;
}

static int send_small(sim_ctx *ctx, uint32_t src, uint32_t dst, uint32_t kind, uint64_t bytes,
                      uint64_t seq, sim_err *err)
{
    if (sim_ctx_down(ctx, src))
        return SIM_OK;
    msg_hdr h = { .channel = 0, .kind = kind, .seq = seq };
    return msg_send(ctx, src, dst, bytes, h, err);
}

/* Whether f is (still) a member of leader c's forming group. */
static bool follows(const moshpit *st, uint32_t f, uint32_t c)
{
    return st->asked[f] == c && (st->ks[f] == KS_FOLLOW || st->ks[f] == KS_ACCEPTED);
}

/* Leader c starts its group: members in an order it shuffles, a group id it draws (both from
 * its stream), a butterfly; the followers learn it by a message and then join. */
static int begin_group(moshpit *st, sim_ctx *ctx, uint32_t c, sim_err *err)
{
    uint32_t *m = st->list, k = 0;
    for (uint32_t i = 0; i < st->nmem[c]; i++) {
        uint32_t f = st->mem[c][i];
        if (f == c || follows(st, f, c))
            m[k++] = f;
    }
    if ((st->async && st->nfree == 0) || (!st->async && st->active >= st->nbf))
        return sim_err_set(err, SIM_EINVAL, NULL, "moshpit: more groups than butterflies");
    gsl_rng *r = sim_ctx_rng(ctx, c);
    gsl_ran_shuffle(r, m, k, sizeof(*m));
    uint32_t b = st->async ? st->freebf[--st->nfree] : st->active++;
    if (st->async)
        st->inuse[b] = true;
    uint64_t hi = gsl_rng_get(r);
    st->gid[b] = hi << 32 | gsl_rng_get(r);
    st->groups++;
    st->serial++;
    for (uint32_t i = 0; i < k && !st->async; i++)
        for (uint32_t j = i + 1; j < k; j++)
            st->repeats += st->last[m[i]] == st->last[m[j]] &&
                                   st->last_round[m[i]] + 1 == st->round + 1 &&
                                   st->last_round[m[j]] + 1 == st->round + 1 && st->round > 0 &&
                                   st->last[m[i]] != 0
                               ? 1
                               : 0;
    for (uint32_t i = 0; i < k; i++) {
        st->last[m[i]] = st->serial;
        st->last_round[m[i]] = st->round + 1; /* rounds from 1 here: 0 is "never" */
        st->group[m[i]] = b;
        st->ks[m[i]] = KS_GROUP;
    }
    int rc = coll_bfly_start(st->bf[b], ctx, m, NULL, k, st->async ? st->serial : st->round, err);
    for (uint32_t i = 0; i < k && rc == SIM_OK; i++)
        if (m[i] != c)
            rc = send_small(ctx, c, m[i], MSG_BEGIN, 16 + 4 * (uint64_t)k, mseq(st, m[i]), err);
    if (rc != SIM_OK)
        return rc;
    st->phase[c] = PH_GROUP;
    return coll_bfly_join(st->bf[b], ctx, c, err);
}

/* Worker w asks the earliest candidate it has not asked yet, declared under its key before
 * it; with none left it leads. */
static int try_next(moshpit *st, sim_ctx *ctx, uint32_t w, sim_err *err)
{
    uint32_t best = COLL_NONE, prev = st->asked[w];
    for (uint32_t c = 0; c < st->n; c++) {
        if (c == w || st->ks[c] < KS_FOLLOW || st->ks[c] > KS_LEAD || !before(st, c, w) ||
            !same_key(st, c, w) || (prev != COLL_NONE && !before(st, prev, c)))
            continue;
        if (best == COLL_NONE || before(st, c, best))
            best = c;
    }
    if (best == COLL_NONE) {
        st->ks[w] = KS_LEAD;
        st->nmem[w] = 1;
        st->mem[w][0] = w;
        st->tries[w] += st->async ? 1 : 0; /* async: the expiry timer's tag */
        sim_time now = sim_ctx_now(ctx), at = st->expires[w];
        return sim_ctx_timer(ctx, at > now ? at - now : 0, EV_EXPIRE, (int32_t)w, mseq(st, w), NULL,
                             err);
    }
    st->asked[w] = best;
    st->ks[w] = KS_FOLLOW;
    st->tries[w]++;
    st->requests++;
    int rc = send_small(ctx, w, best, MSG_REQUEST, MSG_SMALL_BYTES, mseq(st, w), err);
    if (rc != SIM_OK)
        return rc;
    sim_time t = (sim_time)llround(st->req_ms * 1e6);
    return msg_timer_set(ctx, t, EV_REQ_TIMEOUT, (int32_t)w, request_timer(st, w), NULL, err);
}

/* Worker w, ready for the round, declares itself under its key until now + matchmaking. */
static int declare(moshpit *st, sim_ctx *ctx, uint32_t w, sim_err *err)
{
    st->expires[w] = sim_ctx_now(ctx) + (sim_time)llround(st->mm_ms * 1e6);
    st->asked[w] = COLL_NONE;
    st->tries[w] = st->async ? st->tries[w] : 0;
    st->phase[w] = PH_MATCH;
    return try_next(st, ctx, w, err);
}

/* A leader whose time is up starts its group if large enough, or disbands it. */
static int on_expire(moshpit *st, sim_ctx *ctx, uint32_t c, sim_err *err)
{
    if (st->ks[c] != KS_LEAD)
        return SIM_OK;
    uint32_t k = 1;
    for (uint32_t i = 1; i < st->nmem[c]; i++)
        k += follows(st, st->mem[c][i], c) ? 1 : 0;
    if (k >= st->min_group)
        return begin_group(st, ctx, c, err);
    st->disbanded++;
    for (uint32_t i = 1; i < st->nmem[c]; i++) {
        uint32_t f = st->mem[c][i];
        if (!follows(st, f, c))
            continue;
        int rc = send_small(ctx, c, f, MSG_DISBAND, MSG_SMALL_BYTES, mseq(st, f), err);
        if (rc != SIM_OK)
            return rc;
    }
    st->ks[c] = KS_ALONE;
    st->alone++;
    return finish(st, ctx, c, err);
}

static int on_match_msg(moshpit *st, sim_ctx *ctx, uint32_t w, uint32_t src, msg_hdr h,
                        sim_err *err)
{
    if ((!st->async && h.seq != st->round) || sim_ctx_down(ctx, w))
        return SIM_OK; /* a past round's */
    if (st->async && h.kind != MSG_REQUEST && h.kind != MSG_BEGIN && h.seq != st->tries[w])
        return SIM_OK; /* an answer to an earlier attempt */
    switch (h.kind) {
    case MSG_REQUEST:
        if (st->ks[w] == KS_LEAD && (st->target == 0 || st->nmem[w] < st->target)) {
            if (st->nmem[w] == st->mcap[w]) { /* no target: the list doubles (counted) */
                uint32_t cap = 2 * st->mcap[w];
                uint32_t *m = realloc(st->mem[w], cap * sizeof(*m));
                if (m == NULL)
                    return sim_err_set(err, SIM_ENOMEM, NULL, "out of memory");
                st->mem[w] = m;
                st->mcap[w] = cap;
                st->grown++;
            }
            st->mem[w][st->nmem[w]++] = src;
            int rc = send_small(ctx, w, src, MSG_ACCEPT, MSG_SMALL_BYTES, h.seq, err);
            if (rc == SIM_OK && st->nmem[w] == st->target)
                rc = begin_group(st, ctx, w, err);
            return rc;
        }
        st->rejects++;
        return send_small(ctx, w, src, MSG_REJECT, MSG_SMALL_BYTES, h.seq, err);
    case MSG_ACCEPT:
        if (st->ks[w] == KS_FOLLOW && st->asked[w] == src)
            st->ks[w] = KS_ACCEPTED;
        return SIM_OK;
    case MSG_REJECT:
        return st->ks[w] == KS_FOLLOW && st->asked[w] == src ? try_next(st, ctx, w, err) : SIM_OK;
    case MSG_BEGIN:
        if (st->ks[w] != KS_GROUP || st->phase[w] != PH_MATCH)
            return SIM_OK;
        st->phase[w] = PH_GROUP;
        return coll_bfly_join(st->bf[st->group[w]], ctx, w, err);
    case MSG_DISBAND:
        if (!follows(st, w, src))
            return SIM_OK;
        st->ks[w] = KS_ALONE;
        st->alone++;
        return finish(st, ctx, w, err);
    default:
        return sim_err_set(err, SIM_EINVAL, NULL, "moshpit: unexpected message kind %u", h.kind);
    }
}

/* Worker d failed during matchmaking: those who asked it look further (as their requests
 * would time out). */
static int match_down(moshpit *st, sim_ctx *ctx, uint32_t d, sim_err *err)
{
    st->ks[d] = KS_OUT;
    for (uint32_t f = 0; f < st->n; f++) {
        if (!follows(st, f, d))
            continue;
        int rc = try_next(st, ctx, f, err);
        if (rc != SIM_OK)
            return rc;
    }
    return SIM_OK;
}

/* Leader d failed after starting its group: the BEGIN messages still in flight died with it
 * (the network drops every message from or to a down host), so the followers that have not
 * joined never will. They leave the butterfly (nobody waits for their parts) and are alone
 * this round, as if their wait for the group had timed out at once (match_down's rule): no
 * average, no key update, and no group to count repeats against. */
static int begin_lost(moshpit *st, sim_ctx *ctx, uint32_t d, sim_err *err)
{
    for (uint32_t f = 0; f < st->n; f++) {
        if (f == d || st->ks[f] != KS_GROUP || st->phase[f] != PH_MATCH || st->asked[f] != d)
            continue;
        int rc = coll_bfly_leave(st->bf[st->group[f]], ctx, f, err);
        if (rc != SIM_OK)
            return rc;
        st->ks[f] = KS_ALONE;
        st->alone++;
        st->last[f] = 0; /* in no group this round: no repeat to count with its would-be peers */
        if ((rc = finish(st, ctx, f, err)) != SIM_OK)
            return rc;
    }
    return SIM_OK;
}

/* Worker w's local steps are done: it joins its group (key form: looks for one), or is
 * done. */
static int ready(moshpit *st, sim_ctx *ctx, uint32_t w, sim_err *err)
{
    if (st->keys)
        return st->ks[w] == KS_WAIT ? declare(st, ctx, w, err) : finish(st, ctx, w, err);
    if (st->group[w] == COLL_NONE)
        return finish(st, ctx, w, err);
    st->phase[w] = PH_GROUP;
    return coll_bfly_join(st->bf[st->group[w]], ctx, w, err);
}

static int begin_round(moshpit *st, sim_ctx *ctx, sim_err *err)
{
    uint32_t k = 0, live = 0;
    for (uint32_t w = 0; w < st->n; w++) {
        st->group[w] = COLL_NONE;
        st->phase[w] = PH_IDLE;
        if (sim_ctx_down(ctx, w))
            continue;
        live++;
        if (sim_ctx_dropped(ctx, w, st->round))
            st->sat_out++;
        else
            st->list[k++] = w;
    }
    st->idle = live == 0;
    st->busy = 0;
    st->active = 0;
    if (live == 0)
        return SIM_OK; /* nobody: a recovery starts the next round */
    if (st->keys)
        for (uint32_t w = 0; w < st->n; w++)
            st->ks[w] = KS_OUT;
    for (uint32_t i = 0; i < k && st->keys; i++)
        st->ks[st->list[i]] = KS_WAIT;
    int rc = st->keys ? SIM_OK : mp_start_groups(st, ctx, k, err);
    if (rc != SIM_OK)
        return rc;
    st->busy = live;
    for (uint32_t w = 0; w < st->n && rc == SIM_OK; w++) {
        if (sim_ctx_down(ctx, w))
            continue;
        if (st->local_steps > 0) {
            st->phase[w] = PH_COMPUTE;
            st->left[w] = st->local_steps;
            rc = sim_ctx_compute(ctx, w, st->round, err);
        } else {
            rc = ready(st, ctx, w, err);
        }
    }
    return rc;
}

static int alloc_keys(moshpit *st, sim_err *err)
{
    size_t n = st->n;
    st->key = calloc(n * (st->d > 1 ? st->d - 1 : 1), sizeof(*st->key));
    st->expires = calloc(n, sizeof(*st->expires));
    st->ks = calloc(n, sizeof(*st->ks));
    st->asked = calloc(n, sizeof(*st->asked));
    st->tries = calloc(n, sizeof(*st->tries));
    st->mem = calloc(n, sizeof(*st->mem));
    st->mcap = calloc(n, sizeof(*st->mcap));
    uint32_t side = 2; /* a leader's room at first: target, or the grid's largest side */
    for (uint32_t a = 0; a < st->d; a++)
        side = st->m[a] > side ? st->m[a] : side;
    for (size_t w = 0; st->mem != NULL && st->mcap != NULL && w < n; w++) {
        st->mcap[w] = st->target > 0 ? st->target : side;
        if ((st->mem[w] = calloc(st->mcap[w], sizeof(**st->mem))) == NULL)
            return sim_err_set(err, SIM_ENOMEM, NULL, "out of memory");
    }
    st->nmem = calloc(n, sizeof(*st->nmem));
    st->gid = calloc(st->nbf, sizeof(*st->gid));
    st->last = calloc(n, sizeof(*st->last));
    st->last_round = calloc(n, sizeof(*st->last_round));
    st->perm = calloc(st->target > 0 ? st->target : 2 * n, sizeof(*st->perm));
    st->krng = gsl_rng_alloc(gsl_rng_mt19937);
    st->wr = calloc(n, sizeof(*st->wr));
    st->freebf = calloc(st->nbf, sizeof(*st->freebf));
    st->inuse = calloc(st->nbf, sizeof(*st->inuse));
    if (st->wr == NULL || st->freebf == NULL || st->inuse == NULL)
        return sim_err_set(err, SIM_ENOMEM, NULL, "out of memory");
    for (uint32_t b = st->nbf; b-- > 0;)
        st->freebf[st->nfree++] = b;
    if (st->key == NULL || st->expires == NULL || st->ks == NULL || st->asked == NULL ||
        st->tries == NULL || st->mem == NULL || st->mcap == NULL || st->nmem == NULL ||
        st->gid == NULL || st->last == NULL || st->last_round == NULL || st->perm == NULL ||
        st->krng == NULL)
        return sim_err_set(err, SIM_ENOMEM, NULL, "out of memory");
    return SIM_OK;
}

static int mp_start(void *state, sim_ctx *ctx, sim_err *err)
{
    moshpit *st = state;
    st->P = sim_ctx_num_params(ctx);
    mp_sizes(st, &st->nbf, &st->cap);
    size_t n = st->n;
    st->bf = calloc(st->nbf, sizeof(*st->bf));
    st->group = calloc(n, sizeof(*st->group));
    st->list = calloc(2 * n, sizeof(*st->list));
    st->phase = calloc(n, sizeof(*st->phase));
    st->left = calloc(n, sizeof(*st->left));
    if (!st->random) {
        st->cell = calloc(n, sizeof(*st->cell));
        for (uint32_t i = 0; i < st->d; i++)
            st->dims[i] = st->m[st->d - 1 - i];
        st->line = calloc(st->cells, sizeof(*st->line));
    }
    if (st->P > 0)
        st->avg = sim_tensor_alloc(n * st->P);
    if (st->bf == NULL || st->group == NULL || st->list == NULL || st->phase == NULL ||
        st->left == NULL || (!st->random && (st->cell == NULL || st->line == NULL)) ||
        (st->P > 0 && st->avg == NULL))
        return sim_err_set(err, SIM_ENOMEM, NULL, "out of memory");
    st->hub = coll_hub_create(st->nbf, EV_COLL, err);
    if (st->hub == NULL)
        return err->code;
    sim_time s_ns = (sim_time)llround(st->sender_ms * 1e6);
    sim_time r_ns = (sim_time)llround(st->reducer_ms * 1e6);
    for (uint32_t g = 0; g < st->nbf; g++) {
        st->bf[g] = coll_bfly_create(st->hub, st->n, st->cap, st->P, sim_ctx_model_bytes(ctx),
                                     mp_input, mp_output, on_done, st, err);
        if (st->bf[g] == NULL)
            return err->code;
        coll_bfly_set_timeouts(st->bf[g], s_ns, r_ns);
    }
    int rc = SIM_OK;
    if (st->keys && (rc = alloc_keys(st, err)) != SIM_OK)
        return rc;
    if (!st->random) { /* distinct cells: the first n of a shuffle of all of them */
        for (uint32_t c = 0; c < st->cells; c++)
            st->line[c] = c;
        gsl_ran_shuffle(sim_ctx_proto_rng(ctx), st->line, st->cells, sizeof(*st->line));
        for (uint32_t w = 0; w < st->n; w++)
            st->cell[w] = st->line[w];
    }
    for (uint32_t w = 0; st->keys && w < st->n; w++) /* initial key: coordinates 1..d-1 */
        for (uint32_t i = 0; i + 1 < st->d; i++)
            st->key[(size_t)w * (st->d - 1) + i] =
                graph_grid_coord(st->dims, st->d, st->d - 2 - i, st->cell[w]);
    for (uint32_t w = 0; st->async && w < st->n; w++) {
        st->phase[w] = PH_DONE;
        if (!sim_ctx_down(ctx, w) && (rc = start_worker(st, ctx, w, err)) != SIM_OK)
            return rc;
    }
    return st->async ? SIM_OK : begin_round(st, ctx, err);
}

static int mp_on_event(void *state, sim_ctx *ctx, const sim_event *ev, sim_err *err)
{
    moshpit *st = state;
    uint32_t w = (uint32_t)ev->dst;
    bool handled = false;
    int rc = coll_hub_on_event(st->hub, ctx, ev, &handled, err);
    if (rc != SIM_OK || handled)
        return rc;
    switch (ev->kind) {
    case SIM_EV_COMPUTED: {
        uint64_t tag = st->async ? st->wr[w] : st->round;
        if (st->phase[w] != PH_COMPUTE || ev->arg[0] != tag)
            return SIM_OK;
        if (st->P > 0)
            sim_ctx_apply(ctx, w, sim_ctx_grad(ctx, w));
        sim_ctx_count(ctx, w, 1);
        if (--st->left[w] > 0)
            return sim_ctx_compute(ctx, w, tag, err);
        return ready(st, ctx, w, err);
    }
    case SIM_EV_MSG:
        if (!st->keys || msg_read(ev).channel != 0)
            return sim_err_set(err, SIM_EINVAL, NULL, "moshpit: message on no butterfly");
        return on_match_msg(st, ctx, w, (uint32_t)ev->src, msg_read(ev), err);
    case EV_EXPIRE:
        return ev->arg[0] == mseq(st, w) ? on_expire(st, ctx, w, err) : SIM_OK;
    case EV_REQ_TIMEOUT: {
        if (!msg_timer_is(ev, request_timer(st, w)) || st->ks[w] != KS_FOLLOW)
            return SIM_OK;
        return try_next(st, ctx, w, err);
    }
    case SIM_EV_WORKER_DOWN:
        if (st->phase[w] == PH_COMPUTE || st->phase[w] == PH_GROUP || st->phase[w] == PH_MATCH) {
            st->failed_members += st->phase[w] == PH_GROUP ? 1 : 0;
            bool matching = st->phase[w] == PH_MATCH;
            st->phase[w] = PH_DONE;
            st->busy -= st->async ? 0 : 1;
            if (matching && (rc = match_down(st, ctx, w, err)) != SIM_OK)
                return rc;
        } else if (st->keys) {
            st->ks[w] = st->ks[w] == KS_GROUP ? KS_GROUP : KS_OUT;
        }
        rc = coll_hub_worker_down(st->hub, ctx, w, err);
        if (rc == SIM_OK && st->keys)
            rc = begin_lost(st, ctx, w, err);
        if (rc != SIM_OK || !st->async)
            return rc != SIM_OK ? rc : check_round(st, ctx, err);
        st->ks[w] = KS_OUT;
        release_groups(st);
        update_floor(st, ctx);
        return SIM_OK;
    case SIM_EV_WORKER_UP:
        if (st->async)
            return st->phase[w] == PH_DONE ? start_worker(st, ctx, w, err) : SIM_OK;
        if (st->idle)
            return begin_round(st, ctx, err); /* everybody was down: start again */
        return SIM_OK;                        /* joins at the next round start */
    case EV_NEXT:
        if (!st->async)
            return begin_round(st, ctx, err);
        if (sim_ctx_down(ctx, w) || st->phase[w] != PH_DONE || ev->arg[0] != st->wr[w])
            return SIM_OK;
        return start_worker(st, ctx, w, err);
    default:
        return sim_err_set(err, SIM_EINVAL, NULL, "moshpit: unexpected event kind %u", ev->kind);
    }
}

static void mp_report(const void *state, const sim_ctx *ctx, sim_report *out)
{
    (void)ctx;
    const moshpit *st = state;
    uint64_t stale = 0, dropped = 0, kept = 0;
    for (uint32_t g = 0; g < st->nbf; g++) {
        coll_stats s;
        coll_bfly_stats(st->bf[g], &s);
        stale += s.stale;
        dropped += s.dropped;
        kept += s.kept;
    }
    sim_report_add(out, "rounds", (double)st->round);
    sim_report_add(out, "groups", (double)st->groups);
    sim_report_add(out, "sat_out", (double)st->sat_out);
    sim_report_add(out, "alone", (double)st->alone);
    sim_report_add(out, "failed_members", (double)st->failed_members);
    sim_report_add(out, "stale_parts", (double)stale);
    sim_report_add(out, "dropped_parts", (double)dropped);
    sim_report_add(out, "kept_parts", (double)kept);
    if (st->keys) {
        sim_report_add(out, "requests", (double)st->requests);
        sim_report_add(out, "rejects", (double)st->rejects);
        sim_report_add(out, "disbanded", (double)st->disbanded);
        sim_report_add(out, "repeat_pairs", (double)st->repeats);
        if (st->target == 0)
            sim_report_add(out, "member_lists_grown", (double)st->grown);
    }
}

const proto_ops proto_moshpit = {
    .name = "moshpit",
    .summary = "moshpit: butterfly averaging in small groups that change every round (grid)",
    .state_size = sizeof(moshpit),
    .rounds = true,
    .configure = mp_configure,
    .start = mp_start,
    .on_event = mp_on_event,
    .report = mp_report,
    .memory = mp_memory,
    .fini = mp_fini,
};
