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
 * group's butterfly all-reduce (kit/coll.h: parts of the model to every member,
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
 * protocol's state, as from a DHT, each read counted as sim_ctx_peer's) to lead it; a peer
 * that is not leading, or is full, rejects; with nobody left to ask it leads. A leader accepts up
 * to `target_group_size` and starts its group when full, or at its expiration with `min_group_size`
 * or more, else disbands (its followers stay alone this round); without a target (null, hivemind's
 * None, the default) it accepts everyone until its expiration, its member list doubling when full.
 * It shuffles the order and draws the group id from its own stream; after the butterfly each member
 * drops its oldest digit and appends r_p mod M, r_p the p-th of distinct indices in 0..B-1 (B the
 * target, or the next power of two of the group's size) drawn from an rng seeded by the group id
 * (p: its position): the key space stays M^(d-1), as hivemind's bit string keeps its length, and
 * members of one group share a next key only when B > M.
 *
 * Defaults (protocols/moshpit_config.c): the grid from N when absent; training runs
 * (`local_steps` >= 1) in the key form without global rounds, rounds beside the steps,
 * matchmaking for one iteration time; averaging alone (`local_steps` 0) in grid rounds.
 *
 * Without global rounds (key form, `sync` false): each worker starts its next round (local
 * steps, matchmaking) as soon as it is done with the last, groups take butterflies from a
 * pool and give them back when over, and a round ends (sim_ctx_round_end) whenever the
 * fewest rounds done by a live worker grows. Peers of different rounds may then share a key,
 * so the d-round exactness of the perfect grid holds only with global rounds.
 *
 * Rounds beside the steps (`overlap`, the training default; hivemind's background state
 * averaging): a worker computes without a pause; at the end of every local_steps-th step a
 * round is due and begins from a copy of its parameters (st->sent, the butterfly's input),
 * unless its last one is still in flight (skipped, as hivemind skips an epoch's averaging
 * while one runs). Alone when its matchmaking time is up, it looks again at once. The
 * result is merged into the parameters as they are when the butterfly ends: by hivemind's
 * delta rule x <- x + alpha (avg - sent), which keeps the steps taken meanwhile, or with
 * `merge` "replace" (the paper's ResNet-50 code) x <- x + alpha (avg - x).
 *
 * Files: this one holds the rounds and the events; protocols/moshpit_match.c the key form's
 * matchmaking, protocols/moshpit_index.c its indexes (the declared workers by key and
 * expiration, each worker's askers), protocols/moshpit_groups.c the groups of a grid or random
 * round and the key update, protocols/moshpit_config.c the configuration, protocols/moshpit_down.c
 * what keeps a failure's handling linear (the butterflies listing each worker, the floor's count,
 * the pool in use), protocols/moshpit_state.h the state they share.
 */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#include <gsl/gsl_randist.h>

#include "kit/coll.h"
#include "kit/graph.h"
#include "protocols/moshpit_state.h"
#include "runtime/proto.h"
#include "sim/tensor.h"

static void mp_fini(void *state)
{
    moshpit *st = state;
    for (uint32_t i = 0; st->bf != NULL && i < st->nbf; i++)
        coll_bfly_destroy(st->bf[i]);
    for (uint32_t i = 0; i < st->nheap; i++)
        free(st->heap[i]);
    free(st->heap);
    if (st->krng != NULL)
        gsl_rng_free(st->krng);
    mp_down_fini(st);
}

/* ---- rounds ---- */

/* A member's input: its parameters, or with overlap their copy from when its round began. */
static const float *mp_input(void *ud, sim_ctx *ctx, uint32_t w)
{
    moshpit *st = ud;
    return st->overlap ? st->sent + (size_t)w * st->P : sim_ctx_params_view(ctx, w);
}

static float *mp_output(void *ud, sim_ctx *ctx, uint32_t w)
{
    (void)ctx;
    moshpit *st = ud;
    return st->avg + (size_t)w * st->P;
}

static int begin_round(moshpit *st, sim_ctx *ctx, sim_err *err);
static int ready(moshpit *st, sim_ctx *ctx, uint32_t w, sim_err *err);
static int begin_own(moshpit *st, sim_ctx *ctx, uint32_t w, sim_err *err);

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
    /* Rounds of no time that change nothing, without end (a stall): wait for a recovery. */
    st->idle = st->local_steps == 0 && !mp_could_group(st, ctx);
    return st->idle ? SIM_OK : sim_ctx_timer(ctx, 0, EV_NEXT, SIM_NOBODY, st->round, NULL, err);
}

/* Worker w is done with its round (averaged, alone or sat out): what comes next. */
static int mp_finish(moshpit *st, sim_ctx *ctx, uint32_t w, sim_err *err)
{
    mp_left_match(st, ctx, w);
    mp_at(ctx, w)->phase = PH_DONE;
    if (st->async) { /* its next round starts at once (after this event), or is due later */
        mp_at(ctx, w)->wr++;
        mp_floor_leave(st, ctx, w);
        mp_update_floor(st, ctx);
        if (st->overlap) /* alone: it looks again at once, as hivemind's matchmaking does */
            return mp_at(ctx, w)->ks == KS_ALONE ? begin_own(st, ctx, w, err) : SIM_OK;
        if (mp_never_averages(st, ctx, w)) /* its rounds take no time, change nothing */
            return SIM_OK;
        return sim_ctx_timer(ctx, 0, EV_NEXT, (int32_t)w, mp_at(ctx, w)->wr, NULL, err);
    }
    st->busy--;
    return check_round(st, ctx, err);
}

/* Async: worker w starts its next round: local steps, then matchmaking (or it sits out).
 * With overlap it starts computing, its first round due after local_steps steps. */
static int start_worker(moshpit *st, sim_ctx *ctx, uint32_t w, sim_err *err)
{
    mp_worker *a = mp_at(ctx, w);
    if (st->overlap) {
        a->left = st->local_steps;
        return sim_ctx_compute(ctx, w, ++a->steps, err);
    }
    a->group = COLL_NONE;
    a->ks = KS_WAIT;
    if (sim_ctx_dropped(ctx, w, a->wr)) {
        st->sat_out++;
        a->ks = KS_OUT;
    }
    if (st->local_steps == 0)
        return ready(st, ctx, w, err);
    a->phase = PH_COMPUTE;
    a->left = st->local_steps;
    return sim_ctx_compute(ctx, w, a->wr, err);
}

static int on_done(void *ud, sim_ctx *ctx, uint32_t w, const coll_info *info, sim_err *err)
{
    moshpit *st = ud;
    if (mp_at(ctx, w)->phase != PH_GROUP || (!st->async && info->round != st->round))
        return SIM_OK; /* left the round (down) */
    /* x <- x + alpha (avg - base), base x itself, or with overlap (hivemind's delta rule)
     * the parameters the round began with: the steps taken meanwhile are kept. */
    float *x = sim_ctx_params(ctx, w);
    const float *a = st->avg + (size_t)w * st->P;
    const float *base = st->overlap && !st->replace ? st->sent + (size_t)w * st->P : x;
    if (st->alpha == 1.0 && base == x)
        sim_tensor_copy(x, a, st->P);
    else
        for (size_t i = 0; i < st->P; i++)
            x[i] += (float)st->alpha * (a[i] - base[i]);
    if (st->keys)
        mp_update_key(st, ctx, w, mp_at(ctx, w)->group);
    if (st->async)
        mp_release_groups(st);
    return mp_finish(st, ctx, w, err);
}

/* Overlap: worker w begins a round from a copy of its parameters, which it goes on stepping
 * (or sits it out). */
static int begin_own(moshpit *st, sim_ctx *ctx, uint32_t w, sim_err *err)
{
    mp_worker *a = mp_at(ctx, w);
    a->group = COLL_NONE;
    if (sim_ctx_dropped(ctx, w, a->wr)) {
        st->sat_out++;
        a->ks = KS_OUT;
        return mp_finish(st, ctx, w, err);
    }
    a->ks = KS_WAIT;
    sim_tensor_copy(st->sent + (size_t)w * st->P, sim_ctx_params_view(ctx, w), st->P);
    return mp_declare(st, ctx, w, err);
}

/* Overlap: worker w's round is due at the end of a local step. It begins unless its last is
 * still in flight: then it is skipped, as hivemind skips an epoch's averaging while one runs. */
static int due_round(moshpit *st, sim_ctx *ctx, uint32_t w, sim_err *err)
{
    mp_worker *a = mp_at(ctx, w);
    a->left = st->local_steps;
    if (a->phase != PH_DONE) {
        st->skipped++;
        return SIM_OK;
    }
    return begin_own(st, ctx, w, err);
}

/* Overlap: worker w's iteration ended: its step, its round if due, its next iteration. */
static int overlap_step(moshpit *st, sim_ctx *ctx, uint32_t w, uint64_t tag, sim_err *err)
{
    mp_worker *a = mp_at(ctx, w);
    if (tag != a->steps)
        return SIM_OK;
    sim_ctx_step(ctx, (sim_target){ .w = w }, NULL, sim_ctx_grad(ctx, w));
    sim_ctx_count(ctx, w, 1);
    int rc = --a->left > 0 ? SIM_OK : due_round(st, ctx, w, err);
    return rc != SIM_OK ? rc : sim_ctx_compute(ctx, w, ++a->steps, err);
}

/* Worker w's local steps are done: it joins its group (key form: looks for one), or is
 * done. */
static int ready(moshpit *st, sim_ctx *ctx, uint32_t w, sim_err *err)
{
    mp_worker *a = mp_at(ctx, w);
    if (st->keys)
        return a->ks == KS_WAIT ? mp_declare(st, ctx, w, err) : mp_finish(st, ctx, w, err);
    if (a->group == COLL_NONE)
        return mp_finish(st, ctx, w, err);
    a->phase = PH_GROUP;
    return coll_bfly_join(st->bf[a->group], ctx, w, err);
}

static int begin_round(moshpit *st, sim_ctx *ctx, sim_err *err)
{
    uint32_t k = 0, live = 0;
    for (uint32_t w = 0; w < st->n; w++) {
        mp_at(ctx, w)->group = COLL_NONE;
        mp_at(ctx, w)->phase = PH_IDLE;
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
            mp_at(ctx, w)->ks = KS_OUT;
    for (uint32_t i = 0; i < k && st->keys; i++)
        mp_at(ctx, st->list[i])->ks = KS_WAIT;
    int rc = st->keys ? SIM_OK : mp_start_groups(st, ctx, k, err);
    if (rc != SIM_OK)
        return rc;
    st->busy = live;
    for (uint32_t w = 0; w < st->n && rc == SIM_OK; w++) {
        if (sim_ctx_down(ctx, w))
            continue;
        if (st->local_steps > 0) {
            mp_at(ctx, w)->phase = PH_COMPUTE;
            mp_at(ctx, w)->left = st->local_steps;
            rc = sim_ctx_compute(ctx, w, st->round, err);
        } else {
            rc = ready(st, ctx, w, err);
        }
    }
    return rc;
}

/* Key form: each worker's first room for its members, the key update's rng, the free
 * butterflies. */
static int init_keys(moshpit *st, sim_ctx *ctx, sim_err *err)
{
    for (uint32_t w = 0; w < st->n; w++) {
        mp_worker *a = mp_at(ctx, w);
        a->mem = st->rooms + (size_t)w * st->room;
        a->mcap = st->room;
    }
    st->krng = gsl_rng_alloc(gsl_rng_mt19937);
    if (st->krng == NULL)
        return sim_err_set(err, SIM_ENOMEM, NULL, "out of memory");
    for (uint32_t b = st->nbf; b-- > 0;)
        st->freebf[st->nfree++] = b;
    return SIM_OK;
}

static int mp_start(void *state, sim_ctx *ctx, sim_err *err)
{
    moshpit *st = state;
    st->P = sim_ctx_num_params(ctx);
    mp_sizes(st, &st->nbf, &st->cap);
    for (uint32_t i = 0; !st->random && i < st->d; i++)
        st->dims[i] = st->m[st->d - 1 - i];
    st->bfly_input = mp_input;
    st->bfly_output = mp_output;
    st->bfly_done = on_done;
    for (uint32_t g = 0; g < st->nbf; g++)
        if ((st->bf[g] = mp_make_bfly(st, ctx, err)) == NULL)
            return err->code;
    int rc = mp_down_init(st, ctx, err);
    if (rc != SIM_OK)
        return rc;
    if (st->keys && (rc = init_keys(st, ctx, err)) != SIM_OK)
        return rc;
    if (!st->random) { /* distinct cells: the first n of a shuffle of all of them */
        for (uint32_t c = 0; c < st->cells; c++)
            st->line[c] = c;
        gsl_ran_shuffle(sim_ctx_rng(ctx, SIM_CTX_PROTO), st->line, st->cells, sizeof(*st->line));
        for (uint32_t w = 0; w < st->n; w++)
            mp_at(ctx, w)->cell = st->line[w];
    }
    for (uint32_t w = 0; st->keys && w < st->n; w++) /* initial key: coordinates 1..d-1 */
        for (uint32_t i = 0; i + 1 < st->d; i++)
            mp_at(ctx, w)->key[i] =
                graph_grid_coord(st->dims, st->d, st->d - 2 - i, mp_at(ctx, w)->cell);
    for (uint32_t w = 0; st->async && w < st->n; w++) {
        mp_at(ctx, w)->phase = PH_DONE;
        if (!sim_ctx_down(ctx, w) && (rc = start_worker(st, ctx, w, err)) != SIM_OK)
            return rc;
    }
    return st->async ? SIM_OK : begin_round(st, ctx, err);
}

/* Worker w failed: it leaves its round, its butterflies and, leading, the group it began
 * (each follower still waiting for its BEGIN is alone); each step visits the workers and
 * butterflies w concerns, not all of them (protocols/moshpit_down.c). */
static int worker_down(moshpit *st, sim_ctx *ctx, uint32_t w, sim_err *err)
{
    mp_worker *a = mp_at(ctx, w);
    int rc = SIM_OK;
    mp_floor_leave(st, ctx, w);
    mp_left_match(st, ctx, w);
    if (a->phase == PH_COMPUTE || a->phase == PH_GROUP || a->phase == PH_MATCH) {
        st->failed_members += a->phase == PH_GROUP ? 1 : 0;
        bool matching = a->phase == PH_MATCH;
        a->phase = PH_DONE;
        st->busy -= st->async ? 0 : 1;
        if (matching && (rc = mp_match_down(st, ctx, w, err)) != SIM_OK)
            return rc;
    } else if (st->keys) {
        a->ks = a->ks == KS_GROUP ? KS_GROUP : KS_OUT;
    }
    rc = mp_bfly_down(st, ctx, w, err);
    const uint32_t *f = NULL;
    uint32_t k = 0;
    if (rc == SIM_OK && st->keys)
        rc = mp_lost_candidates(st, ctx, w, &f, &k, err);
    for (uint32_t i = 0; i < k && rc == SIM_OK; i++) {
        bool alone = false;
        if ((rc = mp_begin_lost(st, ctx, w, f[i], &alone, err)) == SIM_OK && alone)
            rc = mp_finish(st, ctx, f[i], err);
    }
    if (rc != SIM_OK || !st->async)
        return rc != SIM_OK ? rc : check_round(st, ctx, err);
    a->ks = KS_OUT;
    mp_release_groups(st);
    mp_update_floor(st, ctx);
    return SIM_OK;
}

static int mp_on_event(void *state, sim_ctx *ctx, const sim_event *ev, sim_err *err)
{
    moshpit *st = state;
    uint32_t w = (uint32_t)ev->dst;
    bool handled = false, alone = false;
    int rc = coll_hub_on_event(st->hub, ctx, ev, &handled, err);
    if (rc != SIM_OK || handled)
        return rc;
    switch (ev->kind) {
    case SIM_EV_COMPUTED: {
        if (st->overlap)
            return overlap_step(st, ctx, w, ev->arg[0], err);
        uint64_t tag = st->async ? mp_at(ctx, w)->wr : st->round;
        if (mp_at(ctx, w)->phase != PH_COMPUTE || ev->arg[0] != tag)
            return SIM_OK;
        sim_ctx_step(ctx, (sim_target){ .w = w }, NULL, sim_ctx_grad(ctx, w));
        sim_ctx_count(ctx, w, 1);
        if (--mp_at(ctx, w)->left > 0)
            return sim_ctx_compute(ctx, w, tag, err);
        return ready(st, ctx, w, err);
    }
    case SIM_EV_MSG:
        if (!st->keys || msg_read(ev).channel != 0)
            return sim_err_set(err, SIM_EINVAL, NULL, "moshpit: message on no butterfly");
        rc = mp_on_match_msg(st, ctx, w, (uint32_t)ev->src, msg_read(ev), &alone, err);
        return rc != SIM_OK || !alone ? rc : mp_finish(st, ctx, w, err);
    case EV_EXPIRE:
        rc = ev->arg[0] == mp_mseq(st, ctx, w) ? mp_on_expire(st, ctx, w, &alone, err) : SIM_OK;
        return rc != SIM_OK || !alone ? rc : mp_finish(st, ctx, w, err);
    case EV_REQ_TIMEOUT: {
        if (!msg_timer_is(ev, mp_request_timer(st, ctx, w)) || mp_at(ctx, w)->ks != KS_FOLLOW)
            return SIM_OK;
        return mp_try_next(st, ctx, w, err);
    }
    case SIM_EV_WORKER_DOWN:
        return worker_down(st, ctx, w, err);
    case SIM_EV_WORKER_UP:
        st->fdirty = true; /* async: the floor's count walks the workers again */
        if (st->async)
            return mp_at(ctx, w)->phase == PH_DONE ? start_worker(st, ctx, w, err) : SIM_OK;
        if (st->idle)
            return begin_round(st, ctx, err); /* everybody was down: start again */
        return SIM_OK;                        /* joins at the next round start */
    case EV_NEXT:
        if (!st->async)
            return begin_round(st, ctx, err);
        if (sim_ctx_down(ctx, w) || mp_at(ctx, w)->phase != PH_DONE ||
            ev->arg[0] != mp_at(ctx, w)->wr)
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
        sim_report_add(out, "matchmaking_wait_s", (double)st->mm_wait_ns / 1e9);
        if (st->overlap)
            sim_report_add(out, "skipped_rounds", (double)st->skipped);
    }
}

const proto_ops proto_moshpit = {
    .name = "moshpit",
    .summary = "moshpit: butterfly averaging in small groups that change every round (grid)",
    .state_size = sizeof(moshpit),
    .worker_size = sizeof(mp_worker),
    .rounds = true,
    .configure = mp_configure,
    .start = mp_start,
    .on_event = mp_on_event,
    .report = mp_report,
    .stuck = mp_stuck,
    .buffers = mp_buffers,
    .memory = mp_memory,
    .fini = mp_fini,
};
