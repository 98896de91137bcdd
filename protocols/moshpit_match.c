/* Moshpit's key form: matchmaking (PROTOCOLS 5.2; protocols/moshpit_state.h): followers ask
 * leaders declared under their key, leaders accept, start their group's butterfly or disband
 * it when their time is up, and what a failure does to a group being formed. Calls
 * protocols/moshpit.c only through the state's `finish`. */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>

#include <gsl/gsl_randist.h>

#include "protocols/coll.h"
#include "protocols/moshpit_state.h"
#include "runtime/proto.h"

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
uint64_t mp_mseq(const moshpit *st, uint32_t f)
{
    return st->async ? st->tries[f] : st->round;
}

/* The timer of follower w's current request: its attempt in the round (global rounds), or
 * its attempt (async). */
msg_timer mp_request_timer(const moshpit *st, uint32_t w)
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
    return msg_post(ctx, src, dst, bytes, h, msg_none(), err);
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
            rc = send_small(ctx, c, m[i], MSG_BEGIN, 16 + 4 * (uint64_t)k, mp_mseq(st, m[i]), err);
    if (rc != SIM_OK)
        return rc;
    st->phase[c] = PH_GROUP;
    return coll_bfly_join(st->bf[b], ctx, c, err);
}

/* Worker w asks the earliest candidate it has not asked yet, declared under its key before
 * it; with none left it leads. */
int mp_try_next(moshpit *st, sim_ctx *ctx, uint32_t w, sim_err *err)
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
        return sim_ctx_timer(ctx, at > now ? at - now : 0, EV_EXPIRE, (int32_t)w, mp_mseq(st, w),
                             NULL, err);
    }
    st->asked[w] = best;
    st->ks[w] = KS_FOLLOW;
    st->tries[w]++;
    st->requests++;
    int rc = send_small(ctx, w, best, MSG_REQUEST, MSG_SMALL_BYTES, mp_mseq(st, w), err);
    if (rc != SIM_OK)
        return rc;
    sim_time t = (sim_time)llround(st->req_ms * 1e6);
    return msg_timer_set(ctx, t, EV_REQ_TIMEOUT, (int32_t)w, mp_request_timer(st, w), NULL, err);
}

/* Worker w, ready for the round, declares itself under its key until now + matchmaking. */
int mp_declare(moshpit *st, sim_ctx *ctx, uint32_t w, sim_err *err)
{
    st->expires[w] = sim_ctx_now(ctx) + (sim_time)llround(st->mm_ms * 1e6);
    st->asked[w] = COLL_NONE;
    st->tries[w] = st->async ? st->tries[w] : 0;
    st->phase[w] = PH_MATCH;
    return mp_try_next(st, ctx, w, err);
}

/* A leader whose time is up starts its group if large enough, or disbands it. */
int mp_on_expire(moshpit *st, sim_ctx *ctx, uint32_t c, sim_err *err)
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
        int rc = send_small(ctx, c, f, MSG_DISBAND, MSG_SMALL_BYTES, mp_mseq(st, f), err);
        if (rc != SIM_OK)
            return rc;
    }
    st->ks[c] = KS_ALONE;
    st->alone++;
    return st->finish(st, ctx, c, err);
}

int mp_on_match_msg(moshpit *st, sim_ctx *ctx, uint32_t w, uint32_t src, msg_hdr h, sim_err *err)
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
        return st->ks[w] == KS_FOLLOW && st->asked[w] == src ? mp_try_next(st, ctx, w, err)
                                                             : SIM_OK;
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
        return st->finish(st, ctx, w, err);
    default:
        return sim_err_set(err, SIM_EINVAL, NULL, "moshpit: unexpected message kind %u", h.kind);
    }
}

/* Worker d failed during matchmaking: those who asked it look further (as their requests
 * would time out). */
int mp_match_down(moshpit *st, sim_ctx *ctx, uint32_t d, sim_err *err)
{
    st->ks[d] = KS_OUT;
    for (uint32_t f = 0; f < st->n; f++) {
        if (!follows(st, f, d))
            continue;
        int rc = mp_try_next(st, ctx, f, err);
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
int mp_begin_lost(moshpit *st, sim_ctx *ctx, uint32_t d, sim_err *err)
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
        if ((rc = st->finish(st, ctx, f, err)) != SIM_OK)
            return rc;
    }
    return SIM_OK;
}
