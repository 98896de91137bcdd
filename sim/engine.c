#include "sim/engine.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* The queue is a radix heap (Ahuja, Mehlhorn, Orlin and Tarjan, 1990) on the times, which a
 * discrete-event simulation allows because no event is ever scheduled before the present.
 * `last` is the time of the last event taken out (at most now, at most every pending time);
 * an event of time t lies in bucket 0 when t == last, else in bucket 64 - clz(t ^ last),
 * the position of the highest bit in which t differs from last. Taking the earliest event
 * empties bucket 0 first; when it is empty, the lowest non-empty bucket is spread over the
 * buckets below it around its least time, which becomes `last`: each event moves down at
 * most 64 times over its life, and most of the time none moves.
 *
 * Ties. Each bucket is a FIFO list, and events of one time always share a bucket. A bucket
 * is spread only when every bucket below it is empty, so each list stays in the order its
 * events were scheduled (a spread bucket's events reach empty lists in their order; a new
 * event is appended, and its sequence number is the largest): bucket 0 hands out events of
 * one time in (time, seq) order, as the contract says. Cancelling unlinks an event from its
 * list, which leaves the others in order. */

#define NBUCKETS 65             /* bucket 0 (time == last) and one per bit position */
#define NO_SLOT  UINT32_MAX     /* the end of a list */
#define IDLE     ((uint8_t)255) /* the bucket of a slot that is not pending */

/* What the queue reads of a pending slot, packed: spreading a bucket touches one line per event,
 * not its body as well. */
typedef struct node {
    sim_time time;
    uint32_t next; /* the next slot of its bucket list, or NO_SLOT */
    uint32_t prev; /* the previous one */
} node;

typedef struct bucket {
    uint32_t head, tail; /* FIFO list of slots, NO_SLOT when empty */
    sim_time min;        /* least time in the bucket, when min_ok */
    bool min_ok;         /* min is exact (a cancel of the least event clears it) */
} bucket;

struct sim_engine {
    sim_time now;
    sim_time last;     /* the radix heap's base: <= now, <= every pending time */
    uint64_t seq;      /* next insertion sequence number */
    uint64_t cur_seq;  /* seq of the event being dispatched, UINT64_MAX between events */
    bool stopped;      /* set by sim_engine_stop, cleared by run */
    bool flush_wanted; /* sim_engine_request_flush was called at this instant */
    sim_flush_fn flush_fn;
    void *flush_ud;
    bucket b[NBUCKETS];
    uint64_t occupied; /* bit i - 1 set when bucket i (1..64) is not empty */
    size_t capacity;   /* slots in the pool */
    size_t pending;    /* events in the queue */
    sim_event *events; /* (capacity) event bodies, by slot */
    uint32_t *gen;     /* (capacity) generation of each slot, never 0 */
    node *nodes;       /* (capacity) each pending slot's time and bucket links */
    uint8_t *in;       /* (capacity) a pending slot's bucket, IDLE otherwise */
    uint32_t *free;    /* (capacity) stack of free slots */
    size_t nfree;
    sim_engine_stats stats;
};

/* The bucket of time t (>= last). */
static inline unsigned bucket_of(const sim_engine *eng, sim_time t)
{
    uint64_t x = (uint64_t)t ^ (uint64_t)eng->last;
    return x == 0 ? 0 : 64u - (unsigned)__builtin_clzll(x);
}

static void append(sim_engine *eng, unsigned k, uint32_t slot)
{
    bucket *q = &eng->b[k];
    node *x = &eng->nodes[slot];
    sim_time t = x->time;
    eng->in[slot] = (uint8_t)k;
    x->next = NO_SLOT;
    x->prev = q->tail;
    if (q->tail == NO_SLOT) {
        q->head = slot;
        q->min = t;
        q->min_ok = true;
        if (k > 0)
            eng->occupied |= UINT64_C(1) << (k - 1);
    } else {
        eng->nodes[q->tail].next = slot;
        if (t < q->min)
            q->min = t;
    }
    q->tail = slot;
}

static void unlink_slot(sim_engine *eng, uint32_t slot)
{
    unsigned k = eng->in[slot];
    bucket *q = &eng->b[k];
    uint32_t p = eng->nodes[slot].prev, n = eng->nodes[slot].next;
    if (p != NO_SLOT)
        eng->nodes[p].next = n;
    else
        q->head = n;
    if (n != NO_SLOT)
        eng->nodes[n].prev = p;
    else
        q->tail = p;
    if (q->head == NO_SLOT && k > 0)
        eng->occupied &= ~(UINT64_C(1) << (k - 1));
    else if (eng->nodes[slot].time == q->min)
        q->min_ok = false;
    eng->in[slot] = IDLE;
}

/* The least time in bucket q, by a scan of its list. */
static sim_time scan_min(const sim_engine *eng, const bucket *q)
{
    sim_time t = SIM_TIME_NEVER;
    for (uint32_t s = q->head; s != NO_SLOT; s = eng->nodes[s].next)
        if (eng->nodes[s].time < t)
            t = eng->nodes[s].time;
    return t;
}

/* The least time in bucket k (not empty), scanning it if a cancel made that necessary. */
static sim_time bucket_min(sim_engine *eng, unsigned k)
{
    bucket *q = &eng->b[k];
    if (!q->min_ok) {
        q->min = scan_min(eng, q);
        q->min_ok = true;
    }
    return q->min;
}

/* Makes bucket 0 hold the earliest events (the queue must not be empty): spreads the lowest
 * non-empty bucket around its least time. */
static void settle(sim_engine *eng)
{
    if (eng->b[0].head != NO_SLOT)
        return;
    unsigned k = 1u + (unsigned)__builtin_ctzll(eng->occupied);
    eng->last = bucket_min(eng, k);
    uint32_t s = eng->b[k].head;
    eng->b[k].head = eng->b[k].tail = NO_SLOT;
    eng->occupied &= ~(UINT64_C(1) << (k - 1));
    while (s != NO_SLOT) {
        uint32_t n = eng->nodes[s].next;
        append(eng, bucket_of(eng, eng->nodes[s].time), s);
        s = n;
    }
}

static void slot_release(sim_engine *eng, uint32_t slot)
{
    uint32_t g = eng->gen[slot] + 1;
    eng->gen[slot] = g != 0 ? g : 1;
    eng->free[eng->nfree++] = slot;
}

/* Resizes every per-slot array to `cap` slots and pushes the new slots on the free stack. */
static int pool_resize(sim_engine *eng, size_t cap)
{
    sim_event *events = realloc(eng->events, cap * sizeof(*events));
    if (events == NULL)
        return SIM_ENOMEM;
    eng->events = events;
    uint32_t *gen = realloc(eng->gen, cap * sizeof(*gen));
    if (gen == NULL)
        return SIM_ENOMEM;
    eng->gen = gen;
    node *nodes = realloc(eng->nodes, cap * sizeof(*nodes));
    if (nodes == NULL)
        return SIM_ENOMEM;
    eng->nodes = nodes;
    uint8_t *in = realloc(eng->in, cap * sizeof(*in));
    if (in == NULL)
        return SIM_ENOMEM;
    eng->in = in;
    uint32_t *fr = realloc(eng->free, cap * sizeof(*fr));
    if (fr == NULL)
        return SIM_ENOMEM;
    eng->free = fr;
    /* New slots are pushed so that the lowest index is popped first. */
    for (size_t s = cap; s > eng->capacity; s--) {
        eng->gen[s - 1] = 1;
        eng->in[s - 1] = IDLE;
        eng->free[eng->nfree++] = (uint32_t)(s - 1);
    }
    eng->capacity = cap;
    eng->stats.capacity = cap;
    return SIM_OK;
}

sim_engine *sim_engine_create(size_t capacity_hint, sim_err *err)
{
    size_t cap = capacity_hint < 16 ? 16 : capacity_hint;
    if (cap > UINT32_MAX / 2) {
        sim_err_set(err, SIM_EINVAL, NULL, "engine capacity %zu is too large", cap);
        return NULL;
    }
    sim_engine *eng = calloc(1, sizeof(*eng));
    for (size_t k = 0; eng != NULL && k < NBUCKETS; k++)
        eng->b[k].head = eng->b[k].tail = NO_SLOT;
    if (eng == NULL || pool_resize(eng, cap) != SIM_OK) {
        sim_engine_destroy(eng);
        sim_err_set(err, SIM_ENOMEM, NULL, "out of memory for %zu pending events", cap);
        return NULL;
    }
    eng->stats.grows = 0;
    eng->cur_seq = UINT64_MAX;
    return eng;
}

void sim_engine_destroy(sim_engine *eng)
{
    if (eng == NULL)
        return;
    free(eng->events);
    free(eng->gen);
    free(eng->nodes);
    free(eng->in);
    free(eng->free);
    free(eng);
}

sim_time sim_engine_now(const sim_engine *eng)
{
    return eng->now;
}

void sim_engine_stats_get(const sim_engine *eng, sim_engine_stats *stats)
{
    *stats = eng->stats;
    stats->pending = eng->pending;
}

int sim_engine_schedule_at(sim_engine *eng, sim_time at, const sim_event *ev, sim_event_id *id)
{
    if (at < eng->now || at == SIM_TIME_NEVER)
        return SIM_EINVAL;
    if (eng->nfree == 0) {
        if (eng->capacity > UINT32_MAX / 2 || pool_resize(eng, 2 * eng->capacity) != SIM_OK)
            return SIM_ENOMEM;
        eng->stats.grows++;
    }
    uint32_t slot = eng->free[--eng->nfree];
    sim_event *e = &eng->events[slot];
    *e = *ev;
    e->time = at;
    e->seq = eng->seq++;
    eng->nodes[slot].time = at;
    append(eng, bucket_of(eng, at), slot);
    eng->stats.scheduled++;
    if (++eng->pending > eng->stats.peak_pending)
        eng->stats.peak_pending = eng->pending;
    if (id != NULL)
        *id = (uint64_t)slot | (uint64_t)eng->gen[slot] << 32;
    return SIM_OK;
}

int sim_engine_schedule(sim_engine *eng, sim_time delay, const sim_event *ev, sim_event_id *id)
{
    if (delay < 0 || delay >= SIM_TIME_NEVER - eng->now)
        return SIM_EINVAL;
    return sim_engine_schedule_at(eng, eng->now + delay, ev, id);
}

/* The slot of a pending event's id, or NO_SLOT if the id is stale or was never issued. */
static uint32_t pending_slot(const sim_engine *eng, sim_event_id id)
{
    uint64_t slot = id & 0xffffffffu;
    uint32_t gen = (uint32_t)(id >> 32);
    if (slot >= eng->capacity || gen == 0 || eng->gen[slot] != gen || eng->in[slot] == IDLE)
        return NO_SLOT; /* a free slot whose generation has not moved on: never issued */
    return (uint32_t)slot;
}

int sim_engine_cancel(sim_engine *eng, sim_event_id id)
{
    uint32_t slot = pending_slot(eng, id);
    if (slot == NO_SLOT)
        return SIM_EINVAL;
    unlink_slot(eng, slot);
    slot_release(eng, slot);
    eng->pending--;
    eng->stats.cancelled++;
    return SIM_OK;
}

int sim_engine_reschedule(sim_engine *eng, sim_event_id id, sim_time at)
{
    if (at < eng->now || at == SIM_TIME_NEVER)
        return SIM_EINVAL;
    uint32_t slot = pending_slot(eng, id);
    if (slot == NO_SLOT)
        return SIM_EINVAL;
    unlink_slot(eng, slot);
    /* A fresh sequence number, as a cancel and a schedule would give: the same order. */
    eng->events[slot].time = at;
    eng->events[slot].seq = eng->seq++;
    eng->nodes[slot].time = at;
    append(eng, bucket_of(eng, at), slot);
    eng->stats.scheduled++;
    eng->stats.cancelled++;
    return SIM_OK;
}

sim_time sim_engine_next_time(const sim_engine *eng)
{
    if (eng->pending == 0)
        return SIM_TIME_NEVER;
    if (eng->b[0].head != NO_SLOT)
        return eng->last;
    /* The least time of the lowest non-empty bucket; a stale minimum is found by a scan
     * (the engine's state is not changed: `last` only moves when an event is taken). */
    const bucket *q = &eng->b[1u + (unsigned)__builtin_ctzll(eng->occupied)];
    return q->min_ok ? q->min : scan_min(eng, q);
}

uint64_t sim_engine_next_seq(const sim_engine *eng)
{
    return eng->seq;
}

uint64_t sim_engine_current_seq(const sim_engine *eng)
{
    return eng->cur_seq;
}

void sim_engine_set_flush(sim_engine *eng, sim_flush_fn fn, void *ud)
{
    eng->flush_fn = fn;
    eng->flush_ud = ud;
}

void sim_engine_request_flush(sim_engine *eng)
{
    eng->flush_wanted = true;
}

int sim_engine_flush(sim_engine *eng, sim_err *err)
{
    if (!eng->flush_wanted)
        return SIM_OK;
    eng->flush_wanted = false;
    return eng->flush_fn != NULL ? eng->flush_fn(eng->flush_ud, eng, err) : SIM_OK;
}

/* Runs the end-of-instant hook if one is wanted and the earliest pending event (if any) lies
 * after now. The hook may schedule at now, so callers look at the queue again afterwards. */
static int flush_if_leaving(sim_engine *eng, sim_err *err)
{
    if (!eng->flush_wanted)
        return SIM_OK;
    if (eng->pending > 0 && sim_engine_next_time(eng) <= eng->now)
        return SIM_OK;
    return sim_engine_flush(eng, err);
}

int sim_engine_step(sim_engine *eng, sim_dispatch_fn fn, void *ud, sim_err *err)
{
    int frc = flush_if_leaving(eng, err);
    if (frc != SIM_OK)
        return frc;
    if (eng->pending == 0)
        return 0;
    settle(eng);
    uint32_t slot = eng->b[0].head;
    sim_event ev = eng->events[slot];
    unlink_slot(eng, slot);
    slot_release(eng, slot);
    eng->pending--;
    eng->now = ev.time;
    eng->stats.processed++;
    eng->cur_seq = ev.seq;
    int rc = fn(ud, eng, &ev, err);
    eng->cur_seq = UINT64_MAX;
    return rc != 0 ? rc : 1;
}

int sim_engine_run(sim_engine *eng, sim_time until, sim_dispatch_fn fn, void *ud, sim_err *err)
{
    eng->stopped = false;
    for (;;) {
        if (!eng->stopped) {
            int frc = flush_if_leaving(eng, err);
            if (frc != SIM_OK)
                return frc;
        }
        if (eng->pending == 0 || sim_engine_next_time(eng) > until || eng->stopped)
            break;
        int rc = sim_engine_step(eng, fn, ud, err);
        if (rc < 0 || rc > 1)
            return rc;
    }
    return 0;
}

void sim_engine_stop(sim_engine *eng)
{
    eng->stopped = true;
}
