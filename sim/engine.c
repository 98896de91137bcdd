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
 * most 64 times over its life, and most of the time none moves. An event in a bucket above
 * the one spread keeps its bucket (its time and the new `last` still differ first in the same
 * bit), so an event's bucket is always bucket_of(its time).
 *
 * Each bucket is an array of (time, slot, version) entries, so that spreading one reads it in
 * order and appends to the arrays below: memory is streamed, not chased through a list of
 * slots scattered over the pool. Cancelling an event bumps its slot's version, which makes its
 * entry stale where it lies; a bucket counts its live entries, drops its stale ones when it is
 * spread or emptied, and compacts itself when they outnumber the live ones.
 *
 * Ties. Entries are appended in the order they are scheduled, and a spread moves them in the
 * order they lie, onto buckets that are empty (every bucket below the one spread is): every
 * array stays in insertion order, and events of one time always share a bucket. So bucket 0
 * hands out events of one time in (time, seq) order, as the contract says. A rescheduled event
 * gets the largest sequence number and is appended last. */

#define NBUCKETS 65 /* bucket 0 (time == last) and one per bit position */
#define NO_SLOT  UINT32_MAX

typedef struct entry {
    sim_time time;
    uint32_t slot;
    uint32_t ver; /* the slot's version when queued: the entry is stale once they differ */
} entry;

typedef struct bucket {
    entry *a;              /* (cap) entries [head, n) in insertion order; stale ones included */
    uint32_t head, n, cap; /* head > 0 only in bucket 0, which is consumed from the front */
    uint32_t live;         /* entries of pending events */
    sim_time min;          /* least time of a live entry, when min_ok */
    uint32_t min_slot;     /* the slot of the first entry of time min, when min_ok */
    bool min_ok;           /* min is exact (a cancel of the least event clears it) */
} bucket;

struct sim_engine {
    sim_time now;
    sim_time last;     /* the radix heap's base: <= now, <= every pending time */
    uint64_t seq;      /* next insertion sequence number */
    bool stopped;      /* set by sim_engine_stop, cleared by run */
    bool flush_wanted; /* sim_engine_request_flush was called at this instant */
    sim_flush_fn flush_fn;
    void *flush_ud;
    bucket b[NBUCKETS];
    uint64_t occupied; /* bit i - 1 set when bucket i (1..64) has a live entry */
    size_t capacity;   /* slots in the pool */
    size_t pending;    /* events in the queue */
    sim_event *events; /* (capacity) event bodies, by slot */
    uint32_t *gen;     /* (capacity) generation of each slot (its ids), never 0 */
    uint32_t *ver;     /* (capacity) version of each slot's queue entry */
    uint8_t *pend;     /* (capacity) 1 while the slot's event is pending */
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

static inline bool stale(const sim_engine *eng, const entry *e)
{
    return eng->ver[e->slot] != e->ver;
}

/* Makes room for `more` entries at the end of bucket q (counted as a growth). */
static int reserve(sim_engine *eng, bucket *q, uint32_t more)
{
    if (q->cap - q->n >= more)
        return SIM_OK;
    size_t need = (size_t)q->n + more, cap = q->cap > 0 ? q->cap : 64;
    while (cap < need)
        cap *= 2;
    if (cap > UINT32_MAX)
        return SIM_ENOMEM;
    entry *a = realloc(q->a, cap * sizeof(*a));
    if (a == NULL)
        return SIM_ENOMEM;
    q->a = a;
    q->cap = (uint32_t)cap;
    eng->stats.grows++;
    return SIM_OK;
}

/* Appends a live entry to bucket k, which has room for it. */
static inline void put(sim_engine *eng, unsigned k, sim_time t, uint32_t slot, uint32_t ver)
{
    bucket *q = &eng->b[k];
    q->a[q->n++] = (entry){ t, slot, ver };
    if (q->live++ == 0) {
        q->min = t;
        q->min_slot = slot;
        q->min_ok = true;
        if (k > 0)
            eng->occupied |= UINT64_C(1) << (k - 1);
    } else if (t < q->min) {
        q->min = t;
        q->min_slot = slot;
    }
}

static void empty_bucket(sim_engine *eng, unsigned k)
{
    bucket *q = &eng->b[k];
    q->head = q->n = q->live = 0;
    q->min_ok = false;
    if (k > 0)
        eng->occupied &= ~(UINT64_C(1) << (k - 1));
}

/* Drops the stale entries of bucket q, keeping the order of the others. */
static void compact(sim_engine *eng, bucket *q)
{
    uint32_t m = 0;
    for (uint32_t i = q->head; i < q->n; i++)
        if (!stale(eng, &q->a[i]))
            q->a[m++] = q->a[i];
    q->head = 0;
    q->n = m;
}

/* The entry of a pending slot, whose time is t, is no longer live (cancelled or moved). */
static void drop_entry(sim_engine *eng, uint32_t slot, sim_time t)
{
    unsigned k = bucket_of(eng, t);
    bucket *q = &eng->b[k];
    eng->ver[slot]++;
    if (--q->live == 0) {
        empty_bucket(eng, k);
        return;
    }
    if (t == q->min)
        q->min_ok = false;
    if (q->n - q->head > 2 * q->live + 64)
        compact(eng, q);
}

/* The least live time in bucket q, by a scan. */
static sim_time scan_min(const sim_engine *eng, const bucket *q)
{
    sim_time t = SIM_TIME_NEVER;
    for (uint32_t i = q->head; i < q->n; i++)
        if (q->a[i].time < t && !stale(eng, &q->a[i]))
            t = q->a[i].time;
    return t;
}

/* The least live time in bucket k (not empty), scanning it if a cancel made that necessary. */
static sim_time bucket_min(sim_engine *eng, unsigned k)
{
    bucket *q = &eng->b[k];
    if (!q->min_ok) {
        q->min = SIM_TIME_NEVER;
        for (uint32_t i = q->head; i < q->n; i++)
            if (q->a[i].time < q->min && !stale(eng, &q->a[i])) {
                q->min = q->a[i].time;
                q->min_slot = q->a[i].slot;
            }
        q->min_ok = true;
    }
    return q->min;
}

/* Makes bucket 0 hold the earliest events (the queue must not be empty): spreads the lowest
 * non-empty bucket around its least time. Fails only when a bucket cannot grow, and then
 * leaves the queue as it was: every bucket below the one spread was empty, and that one's
 * entries are only read until the spread is complete. */
static int settle(sim_engine *eng)
{
    if (eng->b[0].live > 0)
        return SIM_OK;
    unsigned k = 1u + (unsigned)__builtin_ctzll(eng->occupied);
    bucket *q = &eng->b[k];
    sim_time old = eng->last;
    eng->last = bucket_min(eng, k);
    if (q->n != q->live)
        compact(eng, q);
    for (uint32_t i = 0; i < q->n; i++) {
        const entry *e = &q->a[i];
        unsigned j = bucket_of(eng, e->time);
        bucket *d = &eng->b[j];
        if (d->n == d->cap && reserve(eng, d, 1) != SIM_OK) {
            for (unsigned u = 0; u < k; u++)
                empty_bucket(eng, u);
            eng->last = old;
            return SIM_ENOMEM;
        }
        put(eng, j, e->time, e->slot, e->ver);
    }
    empty_bucket(eng, k);
    return SIM_OK;
}

/* The slot of the event likely to be taken next (the next in bucket 0, or the least of the
 * lowest bucket), or NO_SLOT when that is not known without a scan. */
static inline uint32_t likely_next(const sim_engine *eng)
{
    const bucket *q = &eng->b[0];
    if (q->head < q->n)
        return q->a[q->head].slot;
    if (eng->occupied == 0)
        return NO_SLOT;
    q = &eng->b[1u + (unsigned)__builtin_ctzll(eng->occupied)];
    return q->min_ok ? q->min_slot : NO_SLOT;
}

static void slot_release(sim_engine *eng, uint32_t slot)
{
    uint32_t g = eng->gen[slot] + 1;
    eng->gen[slot] = g != 0 ? g : 1;
    eng->pend[slot] = 0;
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
    uint32_t *ver = realloc(eng->ver, cap * sizeof(*ver));
    if (ver == NULL)
        return SIM_ENOMEM;
    eng->ver = ver;
    uint8_t *pend = realloc(eng->pend, cap * sizeof(*pend));
    if (pend == NULL)
        return SIM_ENOMEM;
    eng->pend = pend;
    uint32_t *fr = realloc(eng->free, cap * sizeof(*fr));
    if (fr == NULL)
        return SIM_ENOMEM;
    eng->free = fr;
    /* New slots are pushed so that the lowest index is popped first. */
    for (size_t s = cap; s > eng->capacity; s--) {
        eng->gen[s - 1] = 1;
        eng->ver[s - 1] = 0;
        eng->pend[s - 1] = 0;
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
    if (eng == NULL || pool_resize(eng, cap) != SIM_OK) {
        sim_engine_destroy(eng);
        sim_err_set(err, SIM_ENOMEM, NULL, "out of memory for %zu pending events", cap);
        return NULL;
    }
    eng->stats.grows = 0;
    return eng;
}

void sim_engine_destroy(sim_engine *eng)
{
    if (eng == NULL)
        return;
    for (size_t k = 0; k < NBUCKETS; k++)
        free(eng->b[k].a);
    free(eng->events);
    free(eng->gen);
    free(eng->ver);
    free(eng->pend);
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
    unsigned k = bucket_of(eng, at);
    if (reserve(eng, &eng->b[k], 1) != SIM_OK)
        return SIM_ENOMEM;
    uint32_t slot = eng->free[--eng->nfree];
    sim_event *e = &eng->events[slot];
    *e = *ev;
    e->time = at;
    e->seq = eng->seq++;
    eng->pend[slot] = 1;
    put(eng, k, at, slot, eng->ver[slot]);
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
    if (slot >= eng->capacity || gen == 0 || eng->gen[slot] != gen || !eng->pend[slot])
        return NO_SLOT; /* a free slot whose generation has not moved on: never issued */
    return (uint32_t)slot;
}

int sim_engine_cancel(sim_engine *eng, sim_event_id id)
{
    uint32_t slot = pending_slot(eng, id);
    if (slot == NO_SLOT)
        return SIM_EINVAL;
    drop_entry(eng, slot, eng->events[slot].time);
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
    unsigned k = bucket_of(eng, at);
    if (reserve(eng, &eng->b[k], 1) != SIM_OK)
        return SIM_ENOMEM;
    drop_entry(eng, slot, eng->events[slot].time);
    /* A fresh sequence number, as a cancel and a schedule would give: the same order. */
    eng->events[slot].time = at;
    eng->events[slot].seq = eng->seq++;
    put(eng, k, at, slot, eng->ver[slot]);
    eng->stats.scheduled++;
    eng->stats.cancelled++;
    return SIM_OK;
}

sim_time sim_engine_next_time(const sim_engine *eng)
{
    if (eng->pending == 0)
        return SIM_TIME_NEVER;
    if (eng->b[0].live > 0)
        return eng->last;
    /* The least time of the lowest non-empty bucket; a stale minimum is found by a scan
     * (the engine's state is not changed: `last` only moves when an event is taken). */
    const bucket *q = &eng->b[1u + (unsigned)__builtin_ctzll(eng->occupied)];
    return q->min_ok ? q->min : scan_min(eng, q);
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
    int src = settle(eng);
    if (src != SIM_OK)
        return sim_err_set(err, src, NULL, "engine: out of memory for the event queue");
    bucket *q = &eng->b[0];
    while (stale(eng, &q->a[q->head]))
        q->head++;
    uint32_t slot = q->a[q->head++].slot;
    if (--q->live == 0)
        empty_bucket(eng, 0);
    sim_event ev = eng->events[slot];
    slot_release(eng, slot);
    /* Ask the cache for the next event's body while this one is handled: bodies are scattered
     * over the pool, and a handler rarely schedules an event before it. (Written here: GCC
     * deletes a call of a function that only prefetches, as one without effects.) */
    uint32_t next = likely_next(eng);
    if (next != NO_SLOT) {
        __builtin_prefetch(&eng->events[next]);
        __builtin_prefetch(&eng->ver[next]);
    }
    eng->pending--;
    eng->now = ev.time;
    eng->stats.processed++;
    int rc = fn(ud, eng, &ev, err);
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
