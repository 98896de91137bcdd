/* Moshpit's key form: matchmaking (PROTOCOLS 5.2; protocols/moshpit_state.h): followers ask
 * leaders declared under their key, leaders accept, start their group's butterfly or disband
 * it when their time is up, and what a failure does to a group being formed. Calls nothing of
 * protocols/moshpit.c: a worker left alone is said so, and moshpit.c finishes its round. */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_randist.h>

#include "kit/coll.h"
#include "protocols/moshpit_state.h"
#include "runtime/proto.h"

/* The sequence number of follower f's matchmaking messages: the round (global rounds), or
 * its attempt (async: requests and leaderships so far). */
uint64_t mp_mseq(const moshpit *st, const sim_ctx *ctx, uint32_t f)
{
    return st->async ? mp_at(ctx, f)->tries : st->round;
}

/* The timer of follower w's current request: its attempt in the round (global rounds), or
 * its attempt (async). */
msg_timer mp_request_timer(const moshpit *st, const sim_ctx *ctx, uint32_t w)
{
    msg_timer t = { .attempt = mp_at(ctx, w)->tries, .seq = st->async ? 0 : st->round };
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

/* Whether f (its state a) is (still) a member of leader c's forming group. */
static bool follows(const mp_worker *a, uint32_t c)
{
    return a->asked == c && (a->ks == KS_FOLLOW || a->ks == KS_ACCEPTED);
}

/* Whether f still follows leader c, as c reads it (sim_ctx_peer, counted). */
static bool still_follows(sim_ctx *ctx, uint32_t f, uint32_t c)
{
    return follows(sim_ctx_peer(ctx, f), c);
}

/* Without global rounds, one more butterfly (up to `most`) into the free pool when none is
 * free: n / min_group_size were made, but the members of a group end its butterfly at
 * different times, and those done group again while a slow one still holds it (3 workers, one
 * behind a slow link: "moshpit: more groups than butterflies", exit 1). */
static int add_bfly(moshpit *st, sim_ctx *ctx, sim_err *err)
{
    if (st->nfree > 0 || st->nbf >= st->most)
        return SIM_OK;
    if ((st->bf[st->nbf] = mp_make_bfly(st, ctx, err)) == NULL)
        return err->code;
    st->freebf[st->nfree++] = st->nbf++;
    return SIM_OK;
}

/* Leader c starts its group: members in an order it shuffles, a group id it draws (both from
 * its stream), a butterfly; the followers learn it by a message and then join. */
static int begin_group(moshpit *st, sim_ctx *ctx, uint32_t c, sim_err *err)
{
    mp_worker *lead = mp_at(ctx, c);
    uint32_t *m = st->list, k = 0;
    for (uint32_t i = 0; i < lead->nmem; i++) {
        uint32_t f = lead->mem[i];
        if (f == c || still_follows(ctx, f, c))
            m[k++] = f;
    }
    int made = st->async ? add_bfly(st, ctx, err) : SIM_OK;
    if (made != SIM_OK)
        return made;
    if ((st->async && st->nfree == 0) || (!st->async && st->active >= st->nbf))
        return sim_err_set(err, SIM_EINVAL, NULL, "moshpit: more groups than butterflies");
    gsl_rng *r = sim_ctx_rng(ctx, c);
    gsl_ran_shuffle(r, m, k, sizeof(*m));
    uint32_t b = st->async ? st->freebf[--st->nfree] : st->active++;
    if (st->async)
        mp_use(st, b);
    uint64_t hi = gsl_rng_get(r);
    st->gid[b] = hi << 32 | gsl_rng_get(r);
    st->groups++;
    st->serial++;
    for (uint32_t i = 0; i < k && !st->async; i++) {
        const mp_worker *x = mp_at(ctx, m[i]);
        for (uint32_t j = i + 1; j < k; j++) {
            const mp_worker *y = mp_at(ctx, m[j]);
            st->repeats += x->last == y->last && x->last_round + 1 == st->round + 1 &&
                                   y->last_round + 1 == st->round + 1 && st->round > 0 &&
                                   x->last != 0
                               ? 1
                               : 0;
        }
    }
    for (uint32_t i = 0; i < k; i++) { /* the group as BEGIN tells it, on the members' behalf */
        mp_worker *x = mp_at(ctx, m[i]);
        x->last = st->serial;
        x->last_round = st->round + 1; /* rounds from 1 here: 0 is "never" */
        x->group = b;
        x->ks = KS_GROUP;
    }
    int rc = mp_listed(st, ctx, b, m, k, err);
    if (rc == SIM_OK)
        rc = coll_bfly_start(st->bf[b], ctx, m, NULL, k, st->async ? st->serial : st->round, err);
    for (uint32_t i = 0; i < k && rc == SIM_OK; i++)
        if (m[i] != c)
            rc = send_small(ctx, c, m[i], MSG_BEGIN, 16 + 4 * (uint64_t)k, mp_mseq(st, ctx, m[i]),
                            err);
    if (rc != SIM_OK)
        return rc;
    mp_left_match(st, ctx, c);
    lead->phase = PH_GROUP;
    return coll_bfly_join(st->bf[b], ctx, c, err);
}

/* Worker w asks the earliest candidate it has not asked yet, declared under its key before
 * it; with none left it leads. */
int mp_try_next(moshpit *st, sim_ctx *ctx, uint32_t w, sim_err *err)
{
    mp_worker *me = mp_at(ctx, w);
    uint32_t prev = me->asked;
    /* The declared lists, read "as from a DHT": every peer's state (sim_ctx_peer, counted),
     * found in the index (moshpit_index.c) and counted as the walk over every peer read them
     * (issue 38: that walk, at each attempt, was quadratic). */
    const mp_worker *pp = prev != COLL_NONE ? sim_ctx_peer(ctx, prev) : NULL;
    sim_ctx_peer_count(ctx, st->n > 0 ? st->n - 1 : 0);
    uint32_t best = mp_ix_next(st, ctx, w, prev, pp != NULL ? pp->expires : 0);
    if (best == COLL_NONE) {
        me->ks = KS_LEAD;
        me->nmem = 1;
        me->mem[0] = w;
        me->tries += st->async ? 1 : 0; /* async: the expiry timer's tag */
        mp_ix_enter(st, ctx, w);
        sim_time now = sim_ctx_now(ctx), at = me->expires;
        return sim_ctx_timer(ctx, at > now ? at - now : 0, EV_EXPIRE, (int32_t)w,
                             mp_mseq(st, ctx, w), NULL, err);
    }
    mp_ix_ask(st, ctx, w, best);
    me->ks = KS_FOLLOW;
    mp_ix_enter(st, ctx, w);
    me->tries++;
    st->requests++;
    int rc = send_small(ctx, w, best, MSG_REQUEST, MSG_SMALL_BYTES, mp_mseq(st, ctx, w), err);
    if (rc != SIM_OK)
        return rc;
    sim_time t = (sim_time)llround(st->req_ms * 1e6);
    return msg_timer_set(ctx, t, EV_REQ_TIMEOUT, (int32_t)w, mp_request_timer(st, ctx, w), NULL,
                         err);
}

void mp_left_match(moshpit *st, sim_ctx *ctx, uint32_t w)
{
    mp_worker *a = mp_at(ctx, w);
    if (a->phase == PH_MATCH && !st->overlap)
        st->mm_wait_ns += sim_ctx_now(ctx) - a->mm_from;
}

/* Worker w, ready for the round, declares itself under its key until now + matchmaking. */
int mp_declare(moshpit *st, sim_ctx *ctx, uint32_t w, sim_err *err)
{
    mp_worker *me = mp_at(ctx, w);
    me->mm_from = sim_ctx_now(ctx);
    me->expires = me->mm_from + (sim_time)llround(st->mm_ms * 1e6);
    mp_ix_ask(st, ctx, w, COLL_NONE);
    me->tries = st->async ? me->tries : 0;
    me->phase = PH_MATCH;
    return mp_try_next(st, ctx, w, err);
}

/* A leader whose time is up starts its group if large enough, or disbands it. */
int mp_on_expire(moshpit *st, sim_ctx *ctx, uint32_t c, bool *alone, sim_err *err)
{
    mp_worker *lead = mp_at(ctx, c);
    *alone = false;
    if (lead->ks != KS_LEAD)
        return SIM_OK;
    uint32_t k = 1;
    for (uint32_t i = 1; i < lead->nmem; i++)
        k += still_follows(ctx, lead->mem[i], c) ? 1 : 0;
    if (k >= st->min_group)
        return begin_group(st, ctx, c, err);
    st->disbanded++;
    for (uint32_t i = 1; i < lead->nmem; i++) {
        uint32_t f = lead->mem[i];
        if (!still_follows(ctx, f, c))
            continue;
        int rc = send_small(ctx, c, f, MSG_DISBAND, MSG_SMALL_BYTES, mp_mseq(st, ctx, f), err);
        if (rc != SIM_OK)
            return rc;
    }
    lead->ks = KS_ALONE;
    st->alone++;
    *alone = true;
    return SIM_OK;
}

/* Leader w (its state a) takes src into its list, which doubles when full (counted): from
 * its room in the arena to a list on the heap, which fini frees. */
static int add_member(moshpit *st, mp_worker *a, uint32_t src, sim_err *err)
{
    if (a->nmem == a->mcap) {
        uint32_t cap = 2 * a->mcap;
        uint32_t *m = realloc(a->heap > 0 ? a->mem : NULL, cap * sizeof(*m));
        if (m == NULL)
            return sim_err_set(err, SIM_ENOMEM, NULL, "out of memory");
        if (a->heap == 0) {
            if (st->nheap == st->heapcap) {
                uint32_t hc = st->heapcap > 0 ? 2 * st->heapcap : 16;
                uint32_t **h = realloc(st->heap, hc * sizeof(*h));
                if (h == NULL) {
                    free(m);
                    return sim_err_set(err, SIM_ENOMEM, NULL, "out of memory");
                }
                st->heap = h;
                st->heapcap = hc;
            }
            memcpy(m, a->mem, a->nmem * sizeof(*m));
            a->heap = ++st->nheap;
        }
        st->heap[a->heap - 1] = m;
        a->mem = m;
        a->mcap = cap;
        st->grown++;
    }
    a->mem[a->nmem++] = src;
    return SIM_OK;
}

/* Whether leader a's list holds f: a follower whose first request was answered too late for
 * it (its request timed out, it looked further and came back within the same leadership). */
static bool listed(const mp_worker *a, uint32_t f)
{
    for (uint32_t i = 1; i < a->nmem; i++)
        if (a->mem[i] == f)
            return true;
    return false;
}

int mp_on_match_msg(moshpit *st, sim_ctx *ctx, uint32_t w, uint32_t src, msg_hdr h, bool *alone,
                    sim_err *err)
{
    mp_worker *a = mp_at(ctx, w);
    *alone = false;
    if ((!st->async && h.seq != st->round) || sim_ctx_down(ctx, w))
        return SIM_OK; /* a past round's */
    if (st->async && h.kind != MSG_REQUEST && h.kind != MSG_BEGIN && h.seq != a->tries)
        return SIM_OK; /* an answer to an earlier attempt */
    switch (h.kind) {
    case MSG_REQUEST:
        if (a->ks == KS_LEAD && listed(a, src)) /* asked again: accepted, and listed once */
            return send_small(ctx, w, src, MSG_ACCEPT, MSG_SMALL_BYTES, h.seq, err);
        if (a->ks == KS_LEAD && (st->target == 0 || a->nmem < st->target)) {
            int rc = add_member(st, a, src, err);
            if (rc == SIM_OK)
                rc = send_small(ctx, w, src, MSG_ACCEPT, MSG_SMALL_BYTES, h.seq, err);
            if (rc == SIM_OK && a->nmem == st->target)
                rc = begin_group(st, ctx, w, err);
            return rc;
        }
        st->rejects++;
        return send_small(ctx, w, src, MSG_REJECT, MSG_SMALL_BYTES, h.seq, err);
    case MSG_ACCEPT:
        if (a->ks == KS_FOLLOW && a->asked == src)
            a->ks = KS_ACCEPTED;
        return SIM_OK;
    case MSG_REJECT:
        return a->ks == KS_FOLLOW && a->asked == src ? mp_try_next(st, ctx, w, err) : SIM_OK;
    case MSG_BEGIN:
        if (a->ks != KS_GROUP || a->phase != PH_MATCH)
            return SIM_OK;
        mp_left_match(st, ctx, w);
        a->phase = PH_GROUP;
        return coll_bfly_join(st->bf[a->group], ctx, w, err);
    case MSG_DISBAND:
        if (!follows(a, src))
            return SIM_OK;
        a->ks = KS_ALONE;
        st->alone++;
        *alone = true;
        return SIM_OK;
    default:
        return sim_err_set(err, SIM_EINVAL, NULL, "moshpit: unexpected message kind %u", h.kind);
    }
}

/* Worker d failed during matchmaking: those who asked it look further (as their requests
 * would time out). */
int mp_match_down(moshpit *st, sim_ctx *ctx, uint32_t d, sim_err *err)
{
    mp_at(ctx, d)->ks = KS_OUT;
    const uint32_t *f;
    uint32_t k = mp_ix_askers(st, ctx, d, &f); /* in id order, as a walk over every worker */
    for (uint32_t i = 0; i < k; i++) {
        int rc = mp_try_next(st, ctx, f[i], err);
        if (rc != SIM_OK)
            return rc;
    }
    return SIM_OK;
}

/* Leader d failed after starting its group: the BEGIN messages still in flight died with it
 * (the network drops every message from or to a down host), so the followers that have not
 * joined never will. Follower f, if one, leaves the butterfly (nobody waits for its parts) and
 * is alone this round, as if its wait for the group had timed out at once (match_down's rule):
 * no average, no key update, and no group to count repeats against. */
int mp_begin_lost(moshpit *st, sim_ctx *ctx, uint32_t d, uint32_t f, bool *alone, sim_err *err)
{
    mp_worker *a = mp_at(ctx, f);
    *alone = false;
    if (f == d || a->ks != KS_GROUP || a->phase != PH_MATCH || a->asked != d)
        return SIM_OK;
    int rc = coll_bfly_leave(st->bf[a->group], ctx, f, err);
    if (rc != SIM_OK)
        return rc;
    a->ks = KS_ALONE;
    st->alone++;
    a->last = 0; /* in no group this round: no repeat to count with its would-be peers */
    *alone = true;
    return SIM_OK;
}
