#include "sim/engine.h"

#include <assert.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "sim/engine_net.h"

/* The queue is a radix heap (Ahuja, Mehlhorn, Orlin and Tarjan, 1990) on keys, which a
 * discrete-event simulation allows because no event is ever scheduled before the present. An
 * event's key is its time and its class in one unsigned integer, time << 1 | class (key_of:
 * a time is below 2^63), so that the keys' order is (time, class). `last` is the key of the
 * last event taken out (at most every pending key); an event of key k lies in bucket 0 when
 * k == last, else in bucket 64 - clz(k ^ last), the position of the highest bit in which k
 * differs from last. Taking the earliest event empties bucket 0 first; when it is empty, the
 * lowest non-empty bucket is spread over the buckets below it around its least key, which
 * becomes `last`: each event moves down at most 64 times over its life, and most of the time
 * none moves. An event in a bucket above the one spread keeps its bucket (its key and the new
 * `last` still differ first in the same bit), so an event's bucket is always bucket_of(its
 * key).
 *
 * Classes. Once an event of the late class at time t was taken, `last` is t's late key, and a
 * normal event scheduled at t (by that event's handler, or by the end-of-instant hook after
 * it) would lie below it: it is given the late key (queue_slot), as if scheduled late, and
 * comes after the late events already pending at t. Its slot records the class it got.
 *
 * Each bucket is a list of chunks of 32 (key, slot, version) entries, so that spreading one
 * reads it in order and appends to the chunks below: memory is streamed, not chased through a
 * list of slots scattered over the pool. Cancelling an event bumps its slot's version, which
 * makes its entry stale where it lies; a bucket counts its live entries, drops its stale ones
 * when it is spread or emptied, and compacts itself when they pass twice the live ones (plus
 * 64). Chunks come from a pool sized with the slots' (chunks_for), so that taking one never
 * fails and never allocates: growing the slot pool is still the one allocation of a run.
 *
 * Ties. Entries are appended in the order they are scheduled, and a spread moves them in the
 * order they lie, onto buckets that are empty (every bucket below the one spread is): every
 * list stays in insertion order, and events of one key always share a bucket. So bucket 0
 * hands out events of one key in insertion order: (time, class, seq), as the contract says. A
 * rescheduled event gets the largest sequence number and is appended last. */

#define NBUCKETS 65 /* bucket 0 (key == last) and one per bit position */
#define NO_SLOT  UINT32_MAX
#define NO_CHUNK UINT32_MAX

enum {
    CHUNK = 32
}; /* entries per chunk: 512 bytes */

typedef struct entry {
    uint64_t key; /* key_of(time, class) */
    uint32_t slot;
    uint32_t ver; /* the slot's version when queued: the entry is stale once they differ */
} entry;

typedef struct chunk {
    entry e[CHUNK];
} chunk;

/* A bucket's entries, in insertion order, stale ones included, fill a list of chunks: the
 * head chunk from index `first` on, the tail chunk up to index `fill`. */
typedef struct bucket {
    uint32_t head, tail; /* first and last chunk, NO_CHUNK when the bucket has none */
    uint32_t first;      /* entries of the head chunk already taken (bucket 0 only) */
    uint32_t fill;       /* entries written in the tail chunk; CHUNK when there is none */
    uint32_t n;          /* entries in the list */
    uint32_t live;       /* entries of pending events */
    uint64_t min;        /* least key of a live entry, when min_ok */
    uint64_t max;        /* no live entry's key is greater (an upper bound after cancels) */
    uint32_t min_slot;   /* the slot of the first live entry of key min, when min_ok */
    bool min_ok;         /* min is exact (a cancel of the least event clears it) */
} bucket;

struct sim_engine {
    sim_time now;
    uint64_t last;     /* the radix heap's base: <= key_of(now, CLASS_LATE), <= every
                        * pending key */
    uint64_t seq;      /* next insertion sequence number */
    uint64_t cur_seq;  /* seq of the event being dispatched, UINT64_MAX between events */
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
    uint8_t *pend;     /* (capacity) 1 + its class while the slot's event is pending, else 0 */
    uint32_t *free;    /* (capacity) stack of free slots */
    size_t nfree;
    chunk *chunks;   /* (nchunks) the buckets' entries */
    uint32_t *cnext; /* (nchunks) the next chunk of a bucket's list, NO_CHUNK at its tail */
    uint32_t *cfree; /* (nchunks) stack of free chunks */
    uint32_t nchunks, ncfree;
    sim_engine_stats stats;
};

/* Chunks enough for `cap` pending events: a bucket holds at most 3 live + 65 entries (it is
 * compacted beyond: see drop_entry) in at most 2 chunks more than those entries fill, and a
 * spread holds at most one partly filled chunk per bucket more than it frees. */
static size_t chunks_for(size_t cap)
{
    return (3 * cap + NBUCKETS * NBUCKETS) / CHUNK + 3 * NBUCKETS + 8;
}

enum {
    CLASS_NORMAL = 0,
    CLASS_LATE = 1
};

/* The key of an event of time t (0 <= t < 2^63) and class c. */
static inline uint64_t key_of(sim_time t, unsigned c)
{
    return (uint64_t)t << 1 | c;
}

/* The key of pending slot s's event. */
static inline uint64_t slot_key(const sim_engine *eng, uint32_t s)
{
    return key_of(eng->events[s].time, eng->pend[s] - 1u);
}

/* The bucket of key k (>= last). */
static inline unsigned bucket_of(const sim_engine *eng, uint64_t k)
{
    uint64_t x = k ^ eng->last;
    return x == 0 ? 0 : 64u - (unsigned)__builtin_clzll(x);
}

static inline bool stale(const sim_engine *eng, const entry *e)
{
    return eng->ver[e->slot] != e->ver;
}

/* A free chunk: chunks_for guarantees there is one. */
static inline uint32_t take_chunk(sim_engine *eng)
{
    assert(eng->ncfree > 0);
    uint32_t c = eng->cfree[--eng->ncfree];
    eng->cnext[c] = NO_CHUNK;
    return c;
}

static inline void give_chunk(sim_engine *eng, uint32_t c)
{
    eng->cfree[eng->ncfree++] = c;
}

/* Appends a live entry to bucket k. */
static inline void put(sim_engine *eng, unsigned k, entry e)
{
    bucket *q = &eng->b[k];
    if (q->fill == CHUNK) {
        uint32_t c = take_chunk(eng);
        if (q->tail == NO_CHUNK) {
            q->head = c;
            q->first = 0;
        } else {
            eng->cnext[q->tail] = c;
        }
        q->tail = c;
        q->fill = 0;
    }
    eng->chunks[q->tail].e[q->fill++] = e;
    q->n++;
    if (q->live++ == 0) {
        q->min = q->max = e.key;
        q->min_slot = e.slot;
        q->min_ok = true;
        if (k > 0)
            eng->occupied |= UINT64_C(1) << (k - 1);
    } else if (e.key < q->min) {
        q->min = e.key;
        q->min_slot = e.slot;
    } else if (e.key > q->max) {
        q->max = e.key;
    }
}

/* Frees chunk c and those after it in its list. */
static void give_chain(sim_engine *eng, uint32_t c)
{
    while (c != NO_CHUNK) {
        uint32_t next = eng->cnext[c];
        give_chunk(eng, c);
        c = next;
    }
}

/* The entry at cursor (*c, *i) of a bucket's list, moving the cursor past it (to the next
 * chunk when this one is read to its end). */
static inline const entry *next_entry(const sim_engine *eng, uint32_t *c, uint32_t *i)
{
    if (*i == CHUNK) {
        *c = eng->cnext[*c];
        *i = 0;
    }
    return &eng->chunks[*c].e[(*i)++];
}

/* Frees bucket k's chunks and leaves it empty. */
static void empty_bucket(sim_engine *eng, unsigned k)
{
    bucket *q = &eng->b[k];
    give_chain(eng, q->head);
    q->head = q->tail = NO_CHUNK;
    q->first = q->n = q->live = 0;
    q->fill = CHUNK;
    q->min_ok = false;
    if (k > 0)
        eng->occupied &= ~(UINT64_C(1) << (k - 1));
}

/* Drops the stale entries of bucket q (which has live ones), keeping the order of the others
 * and freeing the chunks left over. The writes trail the reads through the same chunks. */
static void compact(sim_engine *eng, bucket *q)
{
    uint32_t rc = q->head, ri = q->first, wc = q->head, wi = 0, m = 0;
    for (uint32_t r = 0; r < q->n; r++) {
        const entry *e = next_entry(eng, &rc, &ri);
        if (stale(eng, e))
            continue;
        if (wi == CHUNK) {
            wc = eng->cnext[wc];
            wi = 0;
        }
        eng->chunks[wc].e[wi++] = *e;
        m++;
    }
    give_chain(eng, eng->cnext[wc]);
    eng->cnext[wc] = NO_CHUNK;
    q->tail = wc;
    q->fill = wi;
    q->first = 0;
    q->n = m;
}

/* The entry of a pending slot, whose key is t, is no longer live (cancelled or moved). */
static void drop_entry(sim_engine *eng, uint32_t slot, uint64_t t)
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
    if (q->n > 3 * q->live + 64)
        compact(eng, q);
}

/* The least live key in bucket q (not empty), by a scan; its slot in *slot. */
static uint64_t scan_min(const sim_engine *eng, const bucket *q, uint32_t *slot)
{
    uint64_t t = UINT64_MAX;
    uint32_t c = q->head, i = q->first;
    for (uint32_t r = 0; r < q->n; r++) {
        const entry *e = next_entry(eng, &c, &i);
        if (e->key < t && !stale(eng, e)) {
            t = e->key;
            *slot = e->slot;
        }
    }
    return t;
}

/* The least live key in bucket k (not empty), scanning it if a cancel made that necessary. */
static uint64_t bucket_min(sim_engine *eng, unsigned k)
{
    bucket *q = &eng->b[k];
    if (!q->min_ok) {
        q->min = scan_min(eng, q, &q->min_slot);
        q->min_ok = true;
    }
    return q->min;
}

/* Makes bucket 0 hold the earliest events (the queue must not be empty): spreads the lowest
 * non-empty bucket around its least key, freeing each of its chunks once read. */
static void settle(sim_engine *eng)
{
    if (eng->b[0].live > 0)
        return;
    unsigned k = 1u + (unsigned)__builtin_ctzll(eng->occupied);
    bucket *q = &eng->b[k];
    eng->last = bucket_min(eng, k);
    if (q->n != q->live)
        compact(eng, q);
    /* When every event of the bucket has the key `last` (a synchronized step), the whole
     * list becomes bucket 0's, in its order, without moving an entry. Otherwise the list is
     * read below, each chunk freed once read. Either way bucket k no longer owns it. */
    bool whole = q->max == eng->last;
    if (whole)
        eng->b[0] = *q;
    uint32_t c = q->head, i = q->first, left = q->n;
    q->head = q->tail = NO_CHUNK;
    empty_bucket(eng, k);
    if (whole)
        return;
    while (left > 0) {
        /* A chunk at a time, freed once read (chunks_for counts it while its entries move). */
        uint32_t end = left < CHUNK - i ? i + left : CHUNK;
        left -= end - i;
        for (; i < end; i++) {
            const entry *e = &eng->chunks[c].e[i];
            put(eng, bucket_of(eng, e->key), *e);
        }
        uint32_t next = eng->cnext[c];
        give_chunk(eng, c);
        c = next;
        i = 0;
    }
}

/* Takes the first live entry of bucket 0 (which has one) and returns its slot. */
static uint32_t take_first(sim_engine *eng)
{
    bucket *q = &eng->b[0];
    for (;;) {
        if (q->first == CHUNK) {
            uint32_t c = q->head;
            q->head = eng->cnext[c];
            give_chunk(eng, c);
            q->first = 0;
        }
        const entry *e = &eng->chunks[q->head].e[q->first++];
        q->n--;
        if (!stale(eng, e)) {
            uint32_t slot = e->slot;
            if (--q->live == 0)
                empty_bucket(eng, 0);
            return slot;
        }
    }
}

/* The slot of the event likely to be taken next (the next in bucket 0, or the least of the
 * lowest bucket), or NO_SLOT when that is not known without a scan. */
static inline uint32_t likely_next(const sim_engine *eng)
{
    const bucket *q = &eng->b[0];
    if (q->n > 0) {
        uint32_t c = q->head, i = q->first;
        return next_entry(eng, &c, &i)->slot;
    }
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

/* Grows the chunk pool to chunks_for(cap) chunks, pushing the new ones on the free stack. */
static int chunks_resize(sim_engine *eng, size_t cap)
{
    size_t n = chunks_for(cap);
    if (n <= eng->nchunks)
        return SIM_OK;
    if (n >= NO_CHUNK)
        return SIM_ENOMEM;
    chunk *chunks = realloc(eng->chunks, n * sizeof(*chunks));
    if (chunks == NULL)
        return SIM_ENOMEM;
    eng->chunks = chunks;
    uint32_t *cnext = realloc(eng->cnext, n * sizeof(*cnext));
    if (cnext == NULL)
        return SIM_ENOMEM;
    eng->cnext = cnext;
    uint32_t *cfree = realloc(eng->cfree, n * sizeof(*cfree));
    if (cfree == NULL)
        return SIM_ENOMEM;
    eng->cfree = cfree;
    /* The free stack is kept, the new chunks go under it: the used ones are reused first. */
    memmove(eng->cfree + (n - eng->nchunks), eng->cfree, eng->ncfree * sizeof(*cfree));
    for (size_t c = 0; c < n - eng->nchunks; c++)
        eng->cfree[c] = (uint32_t)(n - 1 - c);
    eng->ncfree += (uint32_t)(n - eng->nchunks);
    eng->nchunks = (uint32_t)n;
    return SIM_OK;
}

/* Resizes every per-slot array to `cap` slots and pushes the new slots on the free stack. */
static int pool_resize(sim_engine *eng, size_t cap)
{
    if (chunks_resize(eng, cap) != SIM_OK)
        return SIM_ENOMEM;
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
    for (size_t k = 0; eng != NULL && k < NBUCKETS; k++) {
        eng->b[k].head = eng->b[k].tail = NO_CHUNK;
        eng->b[k].fill = CHUNK;
    }
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
    free(eng->chunks);
    free(eng->cnext);
    free(eng->cfree);
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

/* Puts pending slot `slot`, whose event's time is set, in the queue in class c: below `last`
 * (a normal event at the instant of a late one taken) it gets the late key. */
static inline void queue_slot(sim_engine *eng, uint32_t slot, unsigned c)
{
    uint64_t key = key_of(eng->events[slot].time, c);
    if (key < eng->last) {
        key = eng->last;
        c = CLASS_LATE;
    }
    eng->pend[slot] = (uint8_t)(1u + c);
    put(eng, bucket_of(eng, key), (entry){ key, slot, eng->ver[slot] });
}

static int schedule_class(sim_engine *eng, sim_time at, unsigned c, const sim_event *ev,
                          sim_event_id *id)
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
    queue_slot(eng, slot, c);
    eng->stats.scheduled++;
    if (++eng->pending > eng->stats.peak_pending)
        eng->stats.peak_pending = eng->pending;
    if (id != NULL)
        *id = (uint64_t)slot | (uint64_t)eng->gen[slot] << 32;
    return SIM_OK;
}

int sim_engine_schedule_at(sim_engine *eng, sim_time at, const sim_event *ev, sim_event_id *id)
{
    return schedule_class(eng, at, CLASS_NORMAL, ev, id);
}

int sim_engine_schedule_late_at(sim_engine *eng, sim_time at, const sim_event *ev, sim_event_id *id)
{
    return schedule_class(eng, at, CLASS_LATE, ev, id);
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
    drop_entry(eng, slot, slot_key(eng, slot));
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
    unsigned c = eng->pend[slot] - 1u;
    drop_entry(eng, slot, slot_key(eng, slot));
    /* A fresh sequence number, as a cancel and a schedule would give: the same order. */
    eng->events[slot].time = at;
    eng->events[slot].seq = eng->seq++;
    queue_slot(eng, slot, c);
    eng->stats.scheduled++;
    eng->stats.cancelled++;
    return SIM_OK;
}

int sim_engine_retarget(sim_engine *eng, sim_event_id id, const sim_event *ev)
{
    uint32_t slot = pending_slot(eng, id);
    if (slot == NO_SLOT)
        return SIM_EINVAL;
    sim_event *e = &eng->events[slot];
    e->kind = ev->kind;
    e->src = ev->src;
    e->dst = ev->dst;
    memcpy(e->arg, ev->arg, sizeof(e->arg));
    return SIM_OK;
}

/* The key of the earliest pending event (the queue must not be empty). */
static uint64_t next_key(const sim_engine *eng)
{
    if (eng->b[0].live > 0)
        return eng->last;
    /* The least key of the lowest non-empty bucket; a stale minimum is found by a scan
     * (the engine's state is not changed: `last` only moves when an event is taken). */
    const bucket *q = &eng->b[1u + (unsigned)__builtin_ctzll(eng->occupied)];
    uint32_t slot;
    return q->min_ok ? q->min : scan_min(eng, q, &slot);
}

sim_time sim_engine_next_time(const sim_engine *eng)
{
    return eng->pending == 0 ? SIM_TIME_NEVER : (sim_time)(next_key(eng) >> 1);
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

/* Runs the end-of-instant hook if one is wanted and no normal event of now is pending (the
 * earliest, if any, is late or lies after now). The hook may schedule at now, so callers look
 * at the queue again afterwards. */
static int flush_if_leaving(sim_engine *eng, sim_err *err)
{
    if (!eng->flush_wanted)
        return SIM_OK;
    if (eng->pending > 0 && next_key(eng) <= key_of(eng->now, CLASS_NORMAL))
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
    uint32_t slot = take_first(eng);
    sim_event ev = eng->events[slot];
    bool late = eng->pend[slot] == 1u + CLASS_LATE;
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
    /* A late event stands after every normal event of its instant and the hook. */
    eng->cur_seq = late ? UINT64_MAX : ev.seq;
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
