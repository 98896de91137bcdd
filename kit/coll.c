/* The kit's hub (channels, routing) and ring all-reduce; the butterfly and the barrier are in
 * coll_butterfly.c and coll_barrier.c, which call this file and never the other way round
 * (the hub reaches them only through the coll_ops they register). */
#include "kit/coll.h"

#include <string.h>

#include "kit/coll_state.h"
#include "sim/tensor.h"

/* ---- Hub ---- */

coll_hub *coll_hub_create(sim_arena *a, uint32_t channels, uint32_t timer_kind)
{
    coll_hub *hub = sim_arena_alloc(a, 1, sizeof(*hub));
    coll_slot *slot = sim_arena_alloc(a, (size_t)channels + 1, sizeof(*slot));
    if (hub == NULL || slot == NULL)
        return NULL;
    hub->slot = slot;
    hub->cap = channels;
    hub->timer_kind = timer_kind;
    return hub;
}

int coll_hub_check(const coll_hub *hub, sim_err *err)
{
    if (hub->refused > 0)
        return sim_err_set(err, SIM_EINVAL, NULL,
                           "collectives: %u instances on a hub of %u channels: %u not created",
                           hub->cap + hub->refused, hub->cap, hub->refused);
    return SIM_OK;
}

int coll_hub_add(coll_hub *hub, void *inst, const coll_ops *ops, uint32_t *channel, sim_err *err)
{
    if (hub->n >= hub->cap) {
        hub->refused++;
        return sim_err_set(err, SIM_EINVAL, NULL, "collectives: all %u channels are taken",
                           hub->cap);
    }
    hub->n++;
    hub->slot[hub->n].inst = inst;
    hub->slot[hub->n].ops = ops;
    *channel = hub->n;
    return SIM_OK;
}

int coll_hub_on_event(coll_hub *hub, sim_ctx *ctx, const sim_event *ev, bool *handled, sim_err *err)
{
    *handled = false;
    if (ev->kind == SIM_EV_MSG) {
        uint32_t c = msg_read(ev).channel;
        if (c == 0 || c > hub->n)
            return SIM_OK;
        *handled = true;
        return hub->slot[c].ops->on_message(hub->slot[c].inst, ctx, ev, err);
    }
    if (ev->kind == hub->timer_kind && hub->timer_kind >= SIM_EV_USER) {
        msg_timer t = msg_timer_read(ev);
        uint32_t c = t.channel;
        if (c == 0 || c > hub->n || hub->slot[c].ops->on_timer == NULL)
            return SIM_OK;
        *handled = true;
        return hub->slot[c].ops->on_timer(hub->slot[c].inst, ctx, t, err);
    }
    return SIM_OK;
}

int coll_hub_worker_down(coll_hub *hub, sim_ctx *ctx, uint32_t w, sim_err *err)
{
    for (uint32_t c = 1; c <= hub->n; c++) {
        if (hub->slot[c].ops->on_down == NULL)
            continue;
        int rc = hub->slot[c].ops->on_down(hub->slot[c].inst, ctx, w, err);
        if (rc != SIM_OK)
            return rc;
    }
    return SIM_OK;
}

int coll_hub_timer(coll_hub *hub, sim_ctx *ctx, sim_time delay, msg_timer t, sim_event_id *id,
                   sim_err *err)
{
    return msg_timer_set(ctx, delay, hub->timer_kind, SIM_NOBODY, t, id, err);
}

/* ---- Ring all-reduce ---- */

static int ring_on_message(void *inst, sim_ctx *ctx, const sim_event *ev, sim_err *err);
static int ring_on_down(void *inst, sim_ctx *ctx, uint32_t w, sim_err *err);
static int ring_on_timer(void *inst, sim_ctx *ctx, msg_timer t, sim_err *err);

static const coll_ops ring_ops = {
    .on_message = ring_on_message,
    .on_timer = ring_on_timer,
    .on_down = ring_on_down,
};

coll_ring *coll_ring_create(sim_arena *a, coll_hub *hub, uint32_t workers, uint32_t cap,
                            coll_done_fn done, void *ud)
{
    /* A ring with room for fewer than all the workers (one of a pool of group rings) holds
     * nothing sized by the workers: its members are found through an index by worker id. */
    bool narrow = cap < workers;
    uint32_t bits = narrow ? coll_bfly_bits(cap) : 0;
    coll_ring *r = sim_arena_alloc(a, 1, sizeof(*r));
    coll_ring_pos *m = sim_arena_alloc(a, cap, sizeof(*m));
    uint32_t *order = sim_arena_alloc(a, cap, sizeof(*order));
    uint32_t *pos = narrow ? NULL : sim_arena_alloc(a, workers, sizeof(*pos));
    uint64_t *index = narrow ? sim_arena_alloc(a, (size_t)1 << bits, sizeof(*index)) : NULL;
    uint8_t *joined = sim_arena_alloc(a, narrow ? cap : workers, sizeof(*joined));
    uint8_t *carry = narrow ? sim_arena_alloc(a, cap, sizeof(*carry)) : NULL;
    uint32_t *scratch = sim_arena_alloc(a, cap, sizeof(*scratch));
    uint32_t *failed = sim_arena_alloc(a, cap, sizeof(*failed));
    if (r == NULL || hub == NULL)
        return NULL; /* the sizing arena (or an overrun, which fails the run) */
    r->workers = workers;
    r->cap = cap;
    r->m = m;
    r->order = order;
    r->pos = pos;
    r->index = index;
    r->bits = bits;
    r->joined = joined;
    r->carry = carry;
    r->scratch = scratch;
    r->failed = failed;
    r->done = done;
    r->ud = ud;
    r->hub = hub;
    r->down_at = -1;
    for (uint32_t w = 0; w < workers && pos != NULL; w++)
        r->pos[w] = COLL_NONE;
    if (index != NULL)
        memset(index, 0xff, ((size_t)1 << bits) * sizeof(*index));
    return coll_hub_add(hub, r, &ring_ops, &r->channel, NULL) == SIM_OK ? r : NULL;
}

/* Worker w's joined flag: RING_OUT for a worker outside a narrow ring. */
static uint8_t joined_of(const coll_ring *r, uint32_t w)
{
    if (r->index == NULL)
        return r->joined[w];
    uint32_t p = coll_ring_find(r, w);
    return p != COLL_NONE ? r->joined[p] : RING_OUT;
}

/* Sets worker w's joined flag (a narrow ring keeps its members' alone). */
static void set_joined(coll_ring *r, uint32_t w, uint8_t flag)
{
    if (r->index == NULL) {
        r->joined[w] = flag;
        return;
    }
    uint32_t p = coll_ring_find(r, w);
    if (p != COLL_NONE)
        r->joined[p] = flag;
}

static int restart(coll_ring *r, sim_ctx *ctx, const uint32_t *members, uint32_t n, uint64_t bytes,
                   sim_err *err);
static uint32_t live(coll_ring *r, sim_ctx *ctx, uint32_t also);
static bool may_wait(coll_ring *r, sim_ctx *ctx, uint32_t w);

/* Failures of a ring with nobody joined wait to restart it (coll_ring_worker_down): the restart
 * of each would send nothing and tell nobody, and a rule failing N members at one instant made
 * N restarts of N members each (issue 38). The first use of the ring after them restarts it
 * once, over the members none of them took out, in ring order: the generation the last of
 * them would have made (the ones between are counted, their members never seen). Recoveries
 * (coll_ring_change over the live workers) wait the same way, N of them at one instant having
 * made N walks of the workers and N restarts: with one among them the restart is over the
 * workers up, in id order, as the last change would have made it (and `also`, a worker failing
 * now, up then). Returns what restart returns; it cannot fail, the members being a part of a valid
 * generation's. */
static int settle_with(coll_ring *r, uint32_t also, sim_err *err)
{
    if (r->deferred == 0)
        return SIM_OK;
    uint32_t n = 0;
    for (uint32_t i = 0; i < r->n && !r->deferred_live; i++)
        if (r->pos[r->order[i]] != COLL_NONE)
            r->scratch[n++] = r->order[i];
    if (r->deferred_live)
        n = live(r, r->deferred_ctx, also);
    r->deferred = 0;
    r->deferred_live = false;
    r->gen--; /* every failure counted itself: restart counts the last again */
    return restart(r, r->deferred_ctx, r->scratch, n, r->bytes, err);
}

static int settle_run(coll_ring *r, sim_err *err)
{
    return settle_with(r, COLL_NONE, err);
}

/* settle_run for the queries, which take the ring as const: it only brings the ring to the
 * state its failures left it in. */
static void settle(const coll_ring *r)
{
    sim_err ignored;
    if (r->deferred > 0)
        (void)settle_run((coll_ring *)r, &ignored);
}

uint32_t coll_ring_size(const coll_ring *r)
{
    settle(r);
    return r->n;
}

uint32_t coll_ring_member(const coll_ring *r, uint32_t i)
{
    settle(r);
    return r->order[i];
}

uint32_t coll_ring_generation(const coll_ring *r)
{
    return r->gen;
}

bool coll_ring_round_complete(const coll_ring *r, uint64_t round)
{
    settle(r);
    return r->finished == (uint64_t)r->n * (round + 1);
}

void coll_ring_stats(const coll_ring *r, coll_stats *out)
{
    *out = (coll_stats){ .stale = r->stale, .restarts = r->restarts, .abandoned = r->abandoned };
}

/* The sequence number of a ring message: generation and round. */
static uint64_t seq_of(uint32_t gen, uint32_t round)
{
    return (uint64_t)gen << 32 | round;
}

static uint32_t steps(const coll_ring *r)
{
    return r->n > 0 ? 2 * (r->n - 1) : 0;
}

/* Bytes of the chunk the member at ring position p sends in step s of round `round`. */
static uint64_t chunk_bytes(const coll_ring *r, uint32_t p, uint32_t s, uint32_t round)
{
    uint32_t n = r->n;
    uint64_t bytes = r->round_bytes != NULL ? r->round_bytes[round % r->nround_bytes] : r->bytes;
    uint32_t c = s < n - 1 ? (p + n - s % n) % n : (p + 1 + n - (s - (n - 1)) % n) % n;
    return bytes / n + (c < bytes % n ? 1 : 0);
}

/* Whether member w's current round runs an algorithm of coll_algo.c. */
static bool other_algo(const coll_ring *r, uint32_t p)
{
    return r->lay.ap != NULL && coll_algo_of(r, r->m[p].round) != COLL_ALGO_RING;
}

/* The joined flag of member w at position p (by worker id in a wide ring, by position in a
 * narrow one). */
static uint8_t *flag_of(coll_ring *r, uint32_t w, uint32_t p)
{
    return &r->joined[r->index != NULL ? p : w];
}

static int try_send(coll_ring *r, sim_ctx *ctx, uint32_t w, uint32_t p, sim_err *err)
{
    coll_ring_pos *a = &r->m[p];
    bool joined = *flag_of(r, w, p) == RING_JOINED;
    if (joined && other_algo(r, p))
        return coll_algo_send(r, ctx, w, err);
    if (!joined || a->busy || a->sent >= steps(r) || a->recv < a->sent)
        return SIM_OK;
    uint32_t succ = r->order[(p + 1) % r->n];
    msg_hdr h = { .channel = r->channel, .kind = 0, .seq = seq_of(r->gen, a->round) };
    int rc = msg_post(ctx, w, succ, chunk_bytes(r, p, a->sent, a->round), h, msg_none(), err);
    if (rc != SIM_OK)
        return rc;
    a->sent++;
    a->busy = true;
    return SIM_OK;
}

static int try_finish(coll_ring *r, sim_ctx *ctx, uint32_t w, uint32_t p, sim_err *err)
{
    coll_ring_pos *a = &r->m[p];
    if (*flag_of(r, w, p) != RING_JOINED)
        return SIM_OK;
    bool other = other_algo(r, p);
    if (other ? !coll_algo_complete(r, w) : a->busy || a->sent < steps(r) || a->recv < steps(r))
        return SIM_OK;
    uint32_t round = a->round;
    if (other)
        coll_algo_round_end(r, w);
    if (r->lay.ap != NULL && r->finished + 1 == (uint64_t)r->n * (round + 1)) {
        int algo = coll_algo_of(r, round); /* never auto: slot 3 counts halving-doubling */
        r->lay.rounds[algo == COLL_ALGO_HALVING_DOUBLING ? 3 : algo]++;
    }
    a->round++;
    a->recv = a->early;
    a->early = 0;
    a->sent = 0;
    *flag_of(r, w, p) = RING_OUT;
    r->finished++;
    coll_info info = {
        .channel = r->channel, .round = round, .failed = r->failed, .nfailed = r->nfailed
    };
    return r->done(r->ud, ctx, w, &info, err);
}

static int progress(coll_ring *r, sim_ctx *ctx, uint32_t w, sim_err *err)
{
    uint32_t p = coll_ring_find(r, w); /* a send changes no position */
    int rc = try_send(r, ctx, w, p, err);
    return rc != SIM_OK ? rc : try_finish(r, ctx, w, p, err);
}

/* Forgets the members' positions; a narrow ring first notes the joined flags of the members
 * to come, members[0..n), which it keeps by position (carry). */
static void unplace(coll_ring *r, const uint32_t *members, uint32_t n)
{
    if (r->index == NULL) {
        for (uint32_t i = 0; i < r->n; i++)
            r->pos[r->order[i]] = COLL_NONE;
        return;
    }
    for (uint32_t i = 0; i < n; i++)
        r->carry[i] = joined_of(r, members[i]);
    memset(r->index, 0xff, ((size_t)1 << r->bits) * sizeof(*r->index));
}

/* Worker w takes ring position i (its carried flag in a narrow ring); false for a bad or
 * repeated member. */
static bool place(coll_ring *r, uint32_t w, uint32_t i)
{
    if (w >= r->workers || coll_ring_find(r, w) != COLL_NONE)
        return false;
    if (r->index == NULL) {
        r->pos[w] = i;
    } else {
        r->index[coll_ring_slot(r, w)] = (uint64_t)w << 32 | i;
        r->joined[i] = r->carry[i];
    }
    return true;
}

/* A new generation over members[0..n) (coll_ring_reset without clearing the failed list). */
static int restart(coll_ring *r, sim_ctx *ctx, const uint32_t *members, uint32_t n, uint64_t bytes,
                   sim_err *err)
{
    if (n > r->cap)
        return sim_err_set(err, SIM_EINVAL, NULL, "ring: %u members, at most %u", n, r->cap);
    unplace(r, members, n);
    r->gen++;
    r->finished = 0;
    r->n = n;
    r->bytes = bytes;
    for (uint32_t i = 0; i < n; i++) {
        uint32_t w = members[i];
        if (!place(r, w, i))
            return sim_err_set(err, SIM_EINVAL, NULL, "ring: bad or repeated member %u", w);
        r->order[i] = w;
        coll_ring_pos *a = &r->m[i];
        a->round = a->sent = a->recv = a->early = 0;
        a->busy = false;
    }
    coll_algo_layout(r, ctx);
    /* The order is the caller's, which may still be using `members`: progress only now. */
    for (uint32_t i = 0; i < n; i++) {
        int rc = progress(r, ctx, r->order[i], err);
        if (rc != SIM_OK)
            return rc;
    }
    return SIM_OK;
}

void coll_ring_set_algorithm(coll_ring *r, sim_arena *a, uint32_t cap, int algo)
{
    coll_algo_pos *ap = NULL;
    uint32_t *node = NULL;
    if (algo != COLL_ALGO_RING) {
        ap = sim_arena_alloc(a, cap, sizeof(*ap));
        node = sim_arena_alloc(a, cap, sizeof(*node));
    }
    if (r == NULL)
        return; /* the sizing arena */
    r->lay.algo = algo;
    r->lay.ap = ap;
    r->lay.node = node;
}

void coll_ring_algorithm_rounds(const coll_ring *r, uint64_t out[5])
{
    for (int i = 0; i < 3; i++)
        out[i] = r->lay.rounds[i];
    out[COLL_ALGO_AUTO] = 0;
    out[COLL_ALGO_HALVING_DOUBLING] = r->lay.rounds[3];
}

void coll_ring_set_round_bytes(coll_ring *r, const uint64_t *sizes, uint32_t n)
{
    r->round_bytes = n > 0 ? sizes : NULL;
    r->nround_bytes = n;
}

void coll_ring_on_failure(coll_ring *r, int mode)
{
    r->on_failure = mode;
}

void coll_ring_unjoin_all(coll_ring *r)
{
    memset(r->joined, RING_OUT, (r->index != NULL ? r->cap : r->workers) * sizeof(*r->joined));
}

int coll_ring_reset(coll_ring *r, sim_ctx *ctx, const uint32_t *members, uint32_t n, uint64_t bytes,
                    sim_err *err)
{
    int rc = settle_run(r, err);
    if (rc != SIM_OK)
        return rc;
    r->nfailed = 0;
    return restart(r, ctx, members, n, bytes, err);
}

/* The workers that are up and `also` (or COLL_NONE), in id order, into r->scratch; their
 * number. */
static uint32_t live(coll_ring *r, sim_ctx *ctx, uint32_t also)
{
    uint32_t n = 0;
    for (uint32_t w = 0; w < r->workers && n < r->cap; w++)
        if (w == also || !sim_ctx_down(ctx, w))
            r->scratch[n++] = w;
    return n;
}

int coll_ring_reset_live(coll_ring *r, sim_ctx *ctx, uint64_t bytes, sim_err *err)
{
    return coll_ring_reset(r, ctx, r->scratch, live(r, ctx, COLL_NONE), bytes, err);
}

int coll_ring_change(coll_ring *r, sim_ctx *ctx, uint32_t w, const uint32_t *members, uint32_t n,
                     uint64_t bytes, sim_err *err)
{
    if (members == NULL && may_wait(r, ctx, w)) { /* restarted once for them all (settle_run) */
        set_joined(r, w, RING_OUT);
        r->restarts++;
        r->nfailed = 0;
        r->deferred++;
        r->deferred_live = true;
        r->deferred_ctx = ctx;
        r->bytes = bytes;
        r->gen++;
        return SIM_OK;
    }
    int rc = settle_run(r, err);
    if (rc != SIM_OK)
        return rc;
    set_joined(r, w, RING_OUT);
    r->restarts++;
    r->nfailed = 0;
    if (members == NULL) {
        members = r->scratch;
        n = live(r, ctx, COLL_NONE);
    }
    return restart(r, ctx, members, n, bytes, err);
}

/* Whether a change of w may wait (settle_run): a wide ring (pos by worker id) none of whose
 * members but w that are up is joined. The first change to wait marks out the members that are
 * down, as the restart would leave them out. A ring that waits already has nobody joined (a
 * join settles). */
static bool may_wait(coll_ring *r, sim_ctx *ctx, uint32_t w)
{
    if (r->index != NULL)
        return false;
    if (r->deferred == 0) {
        for (uint32_t i = 0; i < r->n; i++) {
            uint32_t v = r->order[i];
            if (v != w && !sim_ctx_down(ctx, v) && joined_of(r, v) == RING_JOINED)
                return false;
        }
        for (uint32_t i = 0; i < r->n; i++)
            if (sim_ctx_down(ctx, r->order[i]))
                r->pos[r->order[i]] = COLL_NONE;
    }
    return true;
}

/* Marks out w, counted as failed, its restart waiting (settle_run). */
static void mark_down(coll_ring *r, sim_ctx *ctx, uint32_t w)
{
    r->pos[w] = COLL_NONE;
    r->deferred++;
    r->deferred_ctx = ctx;
    set_joined(r, w, RING_OUT);
    r->restarts++;
    r->failed[r->nfailed++] = w;
    r->gen++;
}

/* Whether w's failure may wait (may_wait); then it is marked out (mark_down). */
static bool defer_down(coll_ring *r, sim_ctx *ctx, uint32_t w)
{
    if (!may_wait(r, ctx, w))
        return false;
    mark_down(r, ctx, w);
    return true;
}

/* Whether a failure or a join of a joined ring waits for the end of the instant (issue 38):
 * a wide COLL_RING_RETRY ring whose owner gave the hub a timer kind, after a second failure of
 * its members at this instant. N failures at one instant restarted it N times, and every
 * restart and every join after each failure posted messages at once (N^2/2 in all, every one
 * stale or dropped). The first failure of an instant, and the joins after it, still act at
 * once; after the second, a failure only marks its member out (mark_down), a join only sets
 * its flag, and one late timer of the instant (ring_on_timer) restarts the ring over the
 * members left and lets the joined ones send, unless a use settles it before. */
static bool waits_late(const coll_ring *r, sim_ctx *ctx)
{
    return r->index == NULL && r->on_failure == COLL_RING_RETRY &&
           r->hub->timer_kind >= SIM_EV_USER && r->downs > 1 && r->down_at == sim_ctx_now(ctx);
}

/* Schedules the ring's late timer of this instant, unless one is pending. */
static int late_timer(coll_ring *r, sim_ctx *ctx, sim_err *err)
{
    if (r->late)
        return SIM_OK;
    r->late = true;
    msg_timer t = { .channel = r->channel };
    return sim_ctx_timer_late(ctx, r->hub->timer_kind, SIM_NOBODY, msg_timer_pack(t), err);
}

/* The instant's end (waits_late): the restart that waits, then every member's progress (one
 * that progressed already does nothing). */
static int ring_on_timer(void *inst, sim_ctx *ctx, msg_timer t, sim_err *err)
{
    (void)t;
    coll_ring *r = inst;
    r->late = false;
    int rc = settle_run(r, err);
    for (uint32_t i = 0; i < r->n && rc == SIM_OK; i++)
        rc = progress(r, ctx, r->order[i], err);
    return rc;
}

int coll_ring_worker_down(coll_ring *r, sim_ctx *ctx, uint32_t w, sim_err *err)
{
    /* Recoveries that wait: the ring they make holds w, which was up at the last of them. */
    int settled = r->deferred_live ? settle_with(r, w, err) : SIM_OK;
    if (settled != SIM_OK)
        return settled;
    if (w >= r->workers || coll_ring_find(r, w) == COLL_NONE)
        return SIM_OK;
    sim_time now = sim_ctx_now(ctx);
    r->downs = r->down_at == now ? r->downs + 1 : 1;
    r->down_at = now;
    if (defer_down(r, ctx, w))
        return SIM_OK; /* a ring that waits always waits for one more (defer_down) */
    if (waits_late(r, ctx)) {
        mark_down(r, ctx, w);
        return late_timer(r, ctx, err);
    }
    uint32_t n = 0, top = 0;
    for (uint32_t i = 0; i < r->n; i++)
        top = r->m[i].round > top ? r->m[i].round : top; /* rounds some member completed */
    bool abandoned = false;
    for (uint32_t i = 0; i < r->n; i++) {
        uint32_t v = r->order[i];
        if (v == w || sim_ctx_down(ctx, v))
            continue;
        r->scratch[n++] = v;
        if (r->on_failure == COLL_RING_END && joined_of(r, v) == RING_JOINED) {
            set_joined(r, v, r->m[i].round < top ? RING_ENDED_COMPLETED : RING_ENDED_ABANDONED);
            abandoned |= joined_of(r, v) == RING_ENDED_ABANDONED;
        }
    }
    set_joined(r, w, RING_OUT);
    r->restarts++;
    r->abandoned += abandoned;
    r->failed[r->nfailed++] = w;
    int rc = restart(r, ctx, r->scratch, n, r->bytes, err);
    for (uint32_t i = 0; i < r->n && rc == SIM_OK; i++) {
        uint32_t v = r->order[i];
        uint8_t flag = joined_of(r, v);
        if (flag != RING_ENDED_COMPLETED && flag != RING_ENDED_ABANDONED)
            continue;
        coll_info info = { .channel = r->channel,
                           .failed = r->failed,
                           .nfailed = r->nfailed,
                           .ended = flag - RING_JOINED };
        set_joined(r, v, RING_OUT);
        rc = r->done(r->ud, ctx, v, &info, err);
    }
    return rc;
}

static int ring_on_down(void *inst, sim_ctx *ctx, uint32_t w, sim_err *err)
{
    return coll_ring_worker_down(inst, ctx, w, err);
}

int coll_ring_worker_changed(coll_ring *r, sim_ctx *ctx, uint32_t w, uint64_t bytes, sim_err *err)
{
    return coll_ring_change(r, ctx, w, NULL, 0, bytes, err);
}

int coll_ring_join(coll_ring *r, sim_ctx *ctx, uint32_t w, sim_err *err)
{
    if (waits_late(r, ctx)) { /* it sends at the instant's end (ring_on_timer) */
        set_joined(r, w, RING_JOINED);
        return late_timer(r, ctx, err);
    }
    int rc = settle_run(r, err);
    if (rc != SIM_OK)
        return rc;
    if (r->index != NULL && coll_ring_find(r, w) == COLL_NONE)
        return sim_err_set(err, SIM_EINVAL, NULL,
                           "ring: worker %u joins a ring of %u workers' room that it is not in", w,
                           r->cap);
    set_joined(r, w, RING_JOINED);
    return coll_ring_find(r, w) == COLL_NONE ? SIM_OK : progress(r, ctx, w, err);
}

void coll_ring_leave(coll_ring *r, uint32_t w)
{
    settle(r);
    set_joined(r, w, RING_OUT);
}

int coll_ring_dissolve(coll_ring *r, sim_ctx *ctx, sim_err *err)
{
    int rc = settle_run(r, err);
    if (rc != SIM_OK)
        return rc;
    for (uint32_t i = 0; i < r->n; i++)
        set_joined(r, r->order[i], RING_OUT);
    return coll_ring_reset(r, ctx, NULL, 0, r->bytes, err);
}

static int ring_on_message(void *inst, sim_ctx *ctx, const sim_event *ev, sim_err *err)
{
    coll_ring *r = inst;
    int settled = settle_run(r, err);
    if (settled != SIM_OK)
        return settled;
    uint32_t w = (uint32_t)ev->dst, src = (uint32_t)ev->src;
    msg_hdr h = msg_read(ev);
    uint32_t gen = (uint32_t)(h.seq >> 32), round = (uint32_t)h.seq;
    uint32_t pw = w < r->workers ? coll_ring_find(r, w) : COLL_NONE;
    uint32_t ps = src < r->workers ? coll_ring_find(r, src) : COLL_NONE;
    if (gen != r->gen || pw == COLL_NONE || ps == COLL_NONE) {
        r->stale++; /* sent in a ring that no longer exists */
        return SIM_OK;
    }
    if (h.kind != 0) { /* an algorithm of coll_algo.c */
        int rc = coll_algo_received(r, w, src, h.kind, round, err);
        rc = rc != SIM_OK ? rc : progress(r, ctx, src, err);
        return rc != SIM_OK ? rc : progress(r, ctx, w, err);
    }
    /* The sender's step arrived: it may send its next one, or finish its round. */
    r->m[ps].busy = false;
    int rc = progress(r, ctx, src, err);
    if (rc != SIM_OK)
        return rc;
    coll_ring_pos *a = &r->m[coll_ring_find(r, w)];
    if (round == a->round)
        a->recv++;
    else if (round == a->round + 1)
        a->early++;
    else
        return sim_err_set(err, SIM_EINVAL, NULL,
                           "ring: worker %u in round %u got a message of round %u", w, a->round,
                           round);
    return progress(r, ctx, w, err);
}

/* ---- The mean of a ring round ---- */

coll_mean *coll_mean_create(sim_arena *a, size_t nfloats, uint32_t cap)
{
    coll_mean *m = sim_arena_alloc(a, 1, sizeof(*m));
    float *mean = sim_arena_alloc(a, nfloats > 0 ? nfloats : 1, sizeof(*mean));
    const float **blocks = sim_arena_alloc(a, cap, sizeof(*blocks));
    if (m == NULL)
        return NULL;
    /* Written now, as sim_tensor_alloc's block: resident from the start whether or not the
     * owner's rounds run (a pool of rings, most idle), so the run takes what was counted. */
    if (mean != NULL)
        memset(mean, 0, (nfloats > 0 ? nfloats : 1) * sizeof(*mean));
    m->nfloats = nfloats;
    m->mean = mean;
    m->blocks = blocks;
    return m;
}

const float *coll_mean_last(const coll_mean *m)
{
    return m->mean;
}

double coll_mean_lr(const coll_mean *m)
{
    return m->lr;
}

const float *coll_mean_of(coll_mean *m, const coll_ring *r, sim_ctx *ctx, uint64_t round,
                          coll_input_fn block, void *ud)
{
    settle(r);
    if (!m->valid || m->gen != r->gen || m->round != round) {
        for (uint32_t i = 0; i < r->n; i++)
            m->blocks[i] = block(ud, ctx, r->order[i]);
        sim_ctx_mean(ctx, m->mean, m->blocks, r->n, m->nfloats);
        m->gen = r->gen;
        m->round = round;
        m->lr = sim_ctx_rates(ctx).lr;
        m->valid = true;
    }
    return m->mean;
}

/* ---- A set of ids ---- */

coll_idset coll_idset_create(sim_arena *a, uint32_t n)
{
    coll_idset s = { .n = n };
    s.word = sim_arena_alloc(a, ((size_t)n + 63) / 64, sizeof(*s.word));
    s.sum = sim_arena_alloc(a, ((size_t)n + 4095) / 4096, sizeof(*s.sum));
    return s;
}

void coll_idset_put(coll_idset *s, uint32_t id, bool in)
{
    uint64_t bit = (uint64_t)1 << (id % 64), sbit = (uint64_t)1 << (id / 64 % 64);
    s->word[id / 64] = in ? s->word[id / 64] | bit : s->word[id / 64] & ~bit;
    s->sum[id / 4096] =
        s->word[id / 64] != 0 ? s->sum[id / 4096] | sbit : s->sum[id / 4096] & ~sbit;
}

void coll_idset_fill(coll_idset *s)
{
    uint32_t nw = (s->n + 63) / 64;
    for (uint32_t i = 0; i < nw; i++)
        s->word[i] = i + 1 < nw || s->n % 64 == 0 ? ~(uint64_t)0 : ((uint64_t)1 << (s->n % 64)) - 1;
    for (uint32_t j = 0; j < (nw + 63) / 64; j++)
        s->sum[j] =
            j + 1 < (nw + 63) / 64 || nw % 64 == 0 ? ~(uint64_t)0 : ((uint64_t)1 << (nw % 64)) - 1;
}

uint32_t coll_idset_next(const coll_idset *s, uint32_t id)
{
    if (id >= s->n)
        return s->n;
    uint32_t nw = (s->n + 63) / 64, ns = (nw + 63) / 64, i = id / 64;
    uint64_t bits = s->word[i] & (~(uint64_t)0 << (id % 64));
    while (bits == 0) { /* the next non-zero word, through the sum's bits */
        if (++i >= nw)
            return s->n;
        uint32_t j = i / 64;
        uint64_t sb = s->sum[j] & (~(uint64_t)0 << (i % 64));
        while (sb == 0) {
            if (++j >= ns)
                return s->n;
            sb = s->sum[j];
        }
        i = j * 64 + (uint32_t)__builtin_ctzll(sb);
        bits = s->word[i];
    }
    return i * 64 + (uint32_t)__builtin_ctzll(bits);
}
