/* Barrier over a member list through a coordinator (kit/coll.h). Calls coll.c's hub,
 * never the other way round. */
#include "kit/coll.h"
#include "kit/coll_state.h"

enum {
    ST_WAITING = 1, /* arrived, not yet released */
    ST_KNOWN = 2,   /* the coordinator counts it in its current round (arrived, or down) */
    ST_DOWN = 4,    /* failed since the start */
};

enum {
    KIND_ARRIVE = 0,
    KIND_RELEASE = 1
};

static int ba_on_message(void *inst, sim_ctx *ctx, const sim_event *ev, sim_err *err);
static int ba_on_down(void *inst, sim_ctx *ctx, uint32_t w, sim_err *err);

static const coll_ops barrier_ops = {
    .on_message = ba_on_message,
    .on_timer = NULL,
    .on_down = ba_on_down,
};

coll_barrier *coll_barrier_create(sim_arena *a, coll_hub *hub, uint32_t workers, uint32_t cap,
                                  coll_done_fn done, void *ud)
{
    coll_barrier *b = sim_arena_alloc(a, 1, sizeof(*b));
    uint32_t *members = sim_arena_alloc(a, cap, sizeof(*members));
    uint32_t *pos = sim_arena_alloc(a, workers, sizeof(*pos));
    uint32_t *mround = sim_arena_alloc(a, cap, sizeof(*mround));
    uint8_t *state = sim_arena_alloc(a, cap, sizeof(*state));
    uint32_t *failed = sim_arena_alloc(a, cap, sizeof(*failed));
    uint32_t *old_members = sim_arena_alloc(a, cap, sizeof(*old_members));
    uint8_t *old_state = sim_arena_alloc(a, cap, sizeof(*old_state));
    uint32_t *old_round = sim_arena_alloc(a, cap, sizeof(*old_round));
    bool *admitted = sim_arena_alloc(a, workers, sizeof(*admitted));
    bool *held = sim_arena_alloc(a, workers, sizeof(*held));
    if (b == NULL || hub == NULL)
        return NULL; /* the sizing arena (or an overrun, which fails the run) */
    b->workers = workers;
    b->cap = cap;
    b->done = done;
    b->ud = ud;
    b->members = members;
    b->pos = pos;
    b->mround = mround;
    b->state = state;
    b->failed = failed;
    b->old_members = old_members;
    b->old_state = old_state;
    b->old_round = old_round;
    b->admitted = admitted;
    b->held = held;
    for (uint32_t w = 0; w < workers && pos != NULL; w++)
        b->pos[w] = COLL_NONE;
    return coll_hub_add(hub, b, &barrier_ops, &b->channel, NULL) == SIM_OK ? b : NULL;
}

uint32_t coll_barrier_coordinator(const coll_barrier *b)
{
    return b->n > 0 ? b->members[0] : COLL_NONE;
}

bool coll_barrier_has(const coll_barrier *b, uint32_t w)
{
    return w < b->workers && b->pos[w] != COLL_NONE;
}

void coll_barrier_stats(const coll_barrier *b, coll_stats *out)
{
    *out = (coll_stats){ .stale = b->stale };
}

static msg_hdr header(const coll_barrier *b, uint32_t kind, uint32_t round)
{
    msg_hdr h = { .channel = b->channel, .kind = kind, .seq = (uint64_t)b->gen << 32 | round };
    return h;
}

static int take_in(coll_barrier *b, sim_ctx *ctx, sim_err *err);

/* Member p is released from its round; then the admitted may become members (take_in). */
static int release(coll_barrier *b, sim_ctx *ctx, uint32_t p, sim_err *err)
{
    b->state[p] &= (uint8_t)~ST_WAITING;
    coll_info info = { .channel = b->channel,
                       .round = b->first + b->mround[p]++,
                       .failed = b->failed,
                       .nfailed = b->nfailed,
                       .lr = b->lr };
    int rc = b->done(b->ud, ctx, b->members[p], &info, err);
    return rc == SIM_OK ? take_in(b, ctx, err) : rc;
}

static void count(coll_barrier *b, uint32_t p)
{
    if (!(b->state[p] & ST_KNOWN)) {
        b->state[p] |= ST_KNOWN;
        b->known++;
    }
}

/* At the coordinator: once every member is counted, release them all (itself last) and open
 * the next round, in which the members that are down count from the outset. A round completed
 * by a member's failure (by_failure) releases the coordinator by a message to itself, which
 * comes after the instant's other failures: released at once, hpsgd's coordinator launched
 * into a ring still listing a worker failing at the same instant and fell one ring round
 * behind the others, a stall (issue 38). */
static int try_complete(coll_barrier *b, sim_ctx *ctx, bool by_failure, sim_err *err)
{
    if (b->known < b->n || (b->state[0] & ST_DOWN))
        return SIM_OK;
    msg_hdr h = header(b, KIND_RELEASE, b->round);
    for (uint32_t p = 1; p < b->n; p++) {
        if ((b->state[p] & ST_DOWN) || sim_ctx_down(ctx, b->members[p]))
            continue;
        int rc = msg_post(ctx, b->members[0], b->members[p], 0, h, msg_none(), err);
        if (rc != SIM_OK)
            return rc;
    }
    b->round++;
    b->known = 0;
    b->lr = sim_ctx_rates(ctx).lr;
    for (uint32_t p = 0; p < b->n; p++) {
        b->state[p] &= (uint8_t)~ST_KNOWN;
        if (b->state[p] & ST_DOWN)
            count(b, p);
    }
    if (by_failure)
        return msg_post(ctx, b->members[0], b->members[0], 0, h, msg_none(), err);
    return release(b, ctx, 0, err);
}

static void fail_member(coll_barrier *b, uint32_t p)
{
    b->state[p] |= ST_DOWN;
    b->failed[b->nfailed++] = b->members[p];
    count(b, p);
}

int coll_barrier_start(coll_barrier *b, sim_ctx *ctx, const uint32_t *members, uint32_t n,
                       uint64_t round, sim_err *err)
{
    if (n == 0 || n > b->cap)
        return sim_err_set(err, SIM_EINVAL, NULL, "barrier: %u members, want 1 to %u", n, b->cap);
    for (uint32_t p = 0; p < b->n; p++)
        b->pos[b->members[p]] = COLL_NONE;
    for (uint32_t w = 0; w < b->workers && b->nadmitted > 0; w++)
        if (b->admitted[w]) {
            b->admitted[w] = false;
            b->nadmitted--;
        }
    b->gen++;
    b->first = round;
    b->round = 0;
    b->lr = sim_ctx_rates(ctx).lr;
    b->n = n;
    b->known = 0;
    b->nfailed = 0;
    for (uint32_t p = 0; p < n; p++) {
        uint32_t w = members[p];
        if (w >= b->workers || b->pos[w] != COLL_NONE) {
            for (uint32_t q = 0; q < p; q++)
                b->pos[b->members[q]] = COLL_NONE;
            b->n = 0;
            return sim_err_set(err, SIM_EINVAL, NULL, "barrier: member %u is repeated or unknown",
                               w);
        }
        b->members[p] = w;
        b->pos[w] = p;
        b->state[p] = 0;
        b->mround[p] = 0;
    }
    for (uint32_t p = 0; p < n; p++)
        if (sim_ctx_down(ctx, b->members[p]))
            fail_member(b, p);
    return SIM_OK;
}

int coll_barrier_arrive(coll_barrier *b, sim_ctx *ctx, uint32_t w, sim_err *err)
{
    if (w < b->workers && b->admitted[w] && !b->held[w]) {
        b->held[w] = true; /* it arrives in the first round of the restart that takes it in */
        return SIM_OK;
    }
    uint32_t p = w < b->workers && !b->admitted[w] ? b->pos[w] : COLL_NONE;
    if (p == COLL_NONE || (b->state[p] & ST_WAITING))
        return sim_err_set(err, SIM_EINVAL, NULL,
                           "barrier: worker %u is not a member or is waiting already", w);
    if (b->state[p] & ST_DOWN)
        return SIM_OK;
    b->state[p] |= ST_WAITING;
    if (p == 0) {
        count(b, 0);
        return try_complete(b, ctx, false, err);
    }
    return msg_post(ctx, w, b->members[0], 0, header(b, KIND_ARRIVE, b->mround[p]), msg_none(),
                    err);
}

static int ba_on_message(void *inst, sim_ctx *ctx, const sim_event *ev, sim_err *err)
{
    coll_barrier *b = inst;
    msg_hdr h = msg_read(ev);
    uint32_t w = (uint32_t)ev->dst, src = (uint32_t)ev->src;
    uint32_t p = w < b->workers ? b->pos[w] : COLL_NONE;
    uint32_t q = src < b->workers ? b->pos[src] : COLL_NONE;
    uint32_t round = (uint32_t)h.seq;
    if ((uint32_t)(h.seq >> 32) != b->gen || p == COLL_NONE || q == COLL_NONE ||
        (b->state[p] & ST_DOWN)) {
        b->stale++;
        return SIM_OK;
    }
    if (h.kind == KIND_ARRIVE) {
        if (p != 0 || round != b->round)
            return sim_err_set(err, SIM_EINVAL, NULL,
                               "barrier: worker %u in round %u got an arrival for round %u", w,
                               b->round, round);
        count(b, q);
        return try_complete(b, ctx, false, err);
    }
    if (!(b->state[p] & ST_WAITING) || b->mround[p] != round)
        return sim_err_set(err, SIM_EINVAL, NULL,
                           "barrier: worker %u in round %u got a release of round %u", w,
                           b->mround[p], round);
    return release(b, ctx, p, err);
}

/* coll_barrier_restart; with keep_failed the failures since the owner's start are still
 * reported (else those since this restart). */
static int restart(coll_barrier *b, sim_ctx *ctx, const uint32_t *members, uint32_t n,
                   const bool *arrived, bool keep_failed, sim_err *err)
{
    if (n > b->cap)
        return sim_err_set(err, SIM_EINVAL, NULL, "barrier: %u members, want 0 to %u", n, b->cap);
    uint64_t old_first = b->first, first = b->first + b->round;
    double lr = b->lr;
    /* Each new member's wait before the restart, by its new position (a failed member's, or a
     * newcomer's, is the owner's `arrived`, in the new first round). */
    for (uint32_t p = 0; p < n; p++) {
        uint32_t w = members[p], q = w < b->workers ? b->pos[w] : COLL_NONE;
        bool kept = q != COLL_NONE && !(b->state[q] & ST_DOWN);
        b->old_state[p] = kept ? b->state[q] : (arrived != NULL && arrived[w] ? ST_WAITING : 0);
        b->old_round[p] = kept ? b->mround[q] : b->round;
    }
    for (uint32_t p = 0; p < b->n; p++)
        b->pos[b->members[p]] = COLL_NONE;
    b->n = 0;
    if (n == 0)
        return SIM_OK;
    uint32_t nfailed = b->nfailed;
    int rc = coll_barrier_start(b, ctx, members, n, first, err);
    if (keep_failed)
        b->nfailed = nfailed;
    for (uint32_t p = 0; p < n && rc == SIM_OK; p++) {
        if (!(b->old_state[p] & ST_WAITING) || sim_ctx_down(ctx, b->members[p]))
            continue;
        if (old_first + b->old_round[p] < first) {
            coll_info info = { .channel = b->channel,
                               .round = old_first + b->old_round[p],
                               .failed = b->failed,
                               .nfailed = b->nfailed,
                               .lr = lr };
            rc = b->done(b->ud, ctx, b->members[p], &info, err);
        } else {
            rc = coll_barrier_arrive(b, ctx, b->members[p], err);
        }
    }
    return rc;
}

int coll_barrier_restart(coll_barrier *b, sim_ctx *ctx, const uint32_t *members, uint32_t n,
                         const bool *arrived, sim_err *err)
{
    return restart(b, ctx, members, n, arrived, false, err);
}

/* The restart that takes the admitted in: over the members that are up and the admitted, in
 * worker id order, an admitted worker arriving in its first round if it arrived meanwhile. */
static int restart_admitting(coll_barrier *b, sim_ctx *ctx, sim_err *err)
{
    uint32_t n = 0;
    for (uint32_t w = 0; w < b->workers; w++) {
        uint32_t p = b->pos[w];
        if (b->admitted[w] || (p != COLL_NONE && !(b->state[p] & ST_DOWN) && !sim_ctx_down(ctx, w)))
            b->old_members[n++] = w;
    }
    if (n > b->cap)
        return sim_err_set(err, SIM_EINVAL, NULL,
                           "barrier: %u members and admitted, want %u at most", n, b->cap);
    return restart(b, ctx, b->old_members, n, b->held, false, err);
}

/* After a release: once no member that is up waits for the release of a round decided before
 * the last admission, the admitted are taken in (a restart). */
static int take_in(coll_barrier *b, sim_ctx *ctx, sim_err *err)
{
    if (b->nadmitted == 0)
        return SIM_OK;
    for (uint32_t p = 0; p < b->n; p++)
        if ((b->state[p] & (ST_WAITING | ST_DOWN)) == ST_WAITING &&
            !sim_ctx_down(ctx, b->members[p]) && b->first + b->mround[p] < b->admit_next)
            return SIM_OK;
    return restart_admitting(b, ctx, err);
}

int coll_barrier_admit(coll_barrier *b, uint32_t w, sim_err *err)
{
    if (w >= b->workers || b->admitted[w] ||
        (b->pos[w] != COLL_NONE && !(b->state[b->pos[w]] & ST_DOWN)))
        return sim_err_set(err, SIM_EINVAL, NULL,
                           "barrier: worker %u is a member or admitted already", w);
    b->admitted[w] = true;
    b->held[w] = false;
    b->nadmitted++;
    b->admit_next = b->first + b->round;
    return SIM_OK;
}

/* The coordinator failed: the barrier starts again over the members that are up (the next
 * in the list coordinates), keeping who waits (coll_barrier_restart), and still reports the
 * failures since the owner's start, the coordinator's too. */
static int restart_without_coordinator(coll_barrier *b, sim_ctx *ctx, sim_err *err)
{
    if (b->nadmitted > 0)
        return restart_admitting(b, ctx, err);
    uint32_t n = 0;
    for (uint32_t p = 0; p < b->n; p++)
        if (!(b->state[p] & ST_DOWN) && !sim_ctx_down(ctx, b->members[p]))
            b->old_members[n++] = b->members[p];
    return restart(b, ctx, b->old_members, n, NULL, true, err);
}

int coll_barrier_worker_down(coll_barrier *b, sim_ctx *ctx, uint32_t w, sim_err *err)
{
    if (w < b->workers && b->admitted[w]) {
        b->admitted[w] = false;
        b->nadmitted--;
    }
    uint32_t p = w < b->workers ? b->pos[w] : COLL_NONE;
    if (p == COLL_NONE || (b->state[p] & ST_DOWN))
        return SIM_OK;
    fail_member(b, p);
    return p == 0 ? restart_without_coordinator(b, ctx, err) : try_complete(b, ctx, true, err);
}

static int ba_on_down(void *inst, sim_ctx *ctx, uint32_t w, sim_err *err)
{
    return coll_barrier_worker_down(inst, ctx, w, err);
}
