#include "sim/engine.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* A heap entry's ordering key. Keys and slots live in two parallel arrays, so that the four
 * children of a node (keys 4i+1 .. 4i+4) fill exactly one 64-byte cache line: a sift-down
 * level then costs one line of keys. */
typedef struct heap_key {
    sim_time time;
    uint64_t seq;
} heap_key;

#define ARITY                4 /* children per heap node */
#define KEY_ALIGN            64 /* bytes: key[1] starts a cache line, and so does each group of children */
#define KEY_SKEW             (KEY_ALIGN / sizeof(heap_key) - 1) /* keys before key[1] in its line */
/* Pending events from which prefetching pays: below, keys (16 bytes each) and bodies (64)
 * stay in the nearer caches and the hints only cost instructions (ring-1024 has ~1000). */
#define PREFETCH_MIN_PENDING 8192

struct sim_engine {
    sim_time now;
    uint64_t seq;      /* next insertion sequence number */
    bool stopped;      /* set by sim_engine_stop, cleared by run */
    bool flush_wanted; /* sim_engine_request_flush was called at this instant */
    sim_flush_fn flush_fn;
    void *flush_ud;
    bool hole;           /* key[0] belongs to the event being dispatched: filled by the next
                            schedule (one sift-down instead of a sift-down and a sift-up) or
                            removed before any other heap operation */
    size_t capacity;     /* slots in the pool */
    size_t n;            /* pending events (heap size) */
    heap_key *key;       /* (capacity) 4-ary min-heap on (time, seq), inside key_block */
    heap_key *key_block; /* the allocation holding key, KEY_ALIGN-aligned */
    uint32_t *hslot;     /* (capacity) the slot of each heap entry */
    sim_event *events;   /* (capacity) event bodies, by slot */
    uint32_t *gen;       /* (capacity) generation of each slot, never 0 */
    uint32_t *pos;       /* (capacity) heap index of a pending slot */
    uint32_t *free;      /* (capacity) stack of free slots */
    size_t nfree;
    sim_engine_stats stats;
};

/* a < b in the order (time, seq), without branches: the heap's comparisons depend on data
 * that no predictor guesses (branches here cost most of the engine's time in mispredictions).
 * Times are never negative, so as unsigned words they order the same; where the compiler
 * has 128-bit integers the pair compares as one (a compare and a subtract with borrow). */
#ifdef __SIZEOF_INT128__
__extension__ typedef unsigned __int128 key_pair;

static inline unsigned key_less(heap_key a, heap_key b)
{
    key_pair x = (key_pair)(uint64_t)a.time << 64 | a.seq;
    key_pair y = (key_pair)(uint64_t)b.time << 64 | b.seq;
    return x < y;
}
#else
static inline unsigned key_less(heap_key a, heap_key b)
{
    return (unsigned)(a.time < b.time) | ((unsigned)(a.time == b.time) & (unsigned)(a.seq < b.seq));
}
#endif

static inline void heap_put(sim_engine *eng, size_t i, heap_key k, uint32_t slot)
{
    eng->key[i] = k;
    eng->hslot[i] = slot;
    eng->pos[slot] = (uint32_t)i;
}

/* Places (k, slot) at index i or above it. */
static void sift_up(sim_engine *eng, size_t i, heap_key k, uint32_t slot)
{
    heap_key *key = eng->key;
    while (i > 0) {
        size_t parent = (i - 1) / ARITY;
        if (!key_less(k, key[parent]))
            break;
        heap_put(eng, i, key[parent], eng->hslot[parent]);
        i = parent;
    }
    heap_put(eng, i, k, slot);
}

/* The index of the least of the children first .. first + m - 1 (m >= 1). */
static inline size_t least_child(const heap_key *key, size_t first, size_t m)
{
    if (m == ARITY) {
        /* A tournament, with selects instead of branches. Ties cannot happen (seq is
         * unique), so the winner is the same whatever the pairing. */
        size_t a = first + key_less(key[first + 1], key[first]);
        size_t b = first + 2 + key_less(key[first + 3], key[first + 2]);
        size_t take_b = (size_t)0 - key_less(key[b], key[a]); /* all ones or zero */
        return a ^ ((a ^ b) & take_b);
    }
    size_t best = first;
    for (size_t c = first + 1; c < first + m; c++)
        if (key_less(key[c], key[best]))
            best = c;
    return best;
}

/* Asks for the cache line holding p. A hint only: it changes no result. On x86-64 it is the
 * instruction itself, because gcc 12's dead-code elimination drops __builtin_prefetch in the
 * sift loop (it did so at -O2 and -O3). */
static inline void prefetch_line(const void *p)
{
#if defined(__GNUC__) && defined(__x86_64__)
    __asm__ volatile("prefetcht0 %0" : : "m"(*(const char *)p));
#elif defined(__GNUC__)
    __builtin_prefetch(p);
#else
    (void)p;
#endif
}

/* Asks for the keys and slots of the children of key[first .. first + 3] (16 consecutive
 * entries: four lines of keys, one or two of slots), one level ahead of the sift: the choice
 * among children is branch-free, so the processor cannot run ahead on its own, and a heap of
 * 1e5 events or more does not fit the nearer caches (without this, 1e6 pending events ran at
 * half the rate). */
static inline void prefetch_grandchildren(const sim_engine *eng, size_t first)
{
    size_t g = ARITY * first + 1;
    if (eng->n < PREFETCH_MIN_PENDING || g + 16 > eng->n)
        return;
    const heap_key *k = &eng->key[g];
    prefetch_line(k);
    prefetch_line(k + 4);
    prefetch_line(k + 8);
    prefetch_line(k + 12);
    prefetch_line(&eng->hslot[g]);
    prefetch_line(&eng->hslot[g + 15]);
}

/* Places (k, slot) at index i or below it. The hole at i first walks down the path of least
 * children to a leaf, then k climbs back up that path to its place (Floyd's bottom-up
 * variant): k is usually an event later than most (one just scheduled, or the heap's last
 * entry), so the climb is short and the way down needs no comparison with k. */
static void sift_down(sim_engine *eng, size_t i, heap_key k, uint32_t slot)
{
    heap_key *key = eng->key;
    uint32_t *hslot = eng->hslot;
    size_t n = eng->n, top = i;
    for (;;) {
        size_t first = ARITY * i + 1;
        if (first >= n)
            break;
        size_t m = n - first < ARITY ? n - first : ARITY;
        prefetch_grandchildren(eng, first);
        size_t c = least_child(key, first, m);
        heap_put(eng, i, key[c], hslot[c]);
        i = c;
    }
    while (i > top) {
        size_t parent = (i - 1) / ARITY;
        if (!key_less(k, key[parent]))
            break;
        heap_put(eng, i, key[parent], hslot[parent]);
        i = parent;
    }
    heap_put(eng, i, k, slot);
}

/* Removes heap entry i, keeping the heap ordered. */
static void heap_remove(sim_engine *eng, size_t i)
{
    eng->n--;
    if (i == eng->n)
        return;
    heap_key k = eng->key[eng->n];
    uint32_t slot = eng->hslot[eng->n];
    if (i > 0 && key_less(k, eng->key[(i - 1) / ARITY]))
        sift_up(eng, i, k, slot);
    else
        sift_down(eng, i, k, slot);
}

/* Removes the dispatched event's entry if no schedule has taken its place. */
static void fill_hole(sim_engine *eng)
{
    if (!eng->hole)
        return;
    eng->hole = false;
    heap_remove(eng, 0);
}

static void slot_release(sim_engine *eng, uint32_t slot)
{
    uint32_t g = eng->gen[slot] + 1;
    eng->gen[slot] = g != 0 ? g : 1;
    eng->free[eng->nfree++] = slot;
}

/* Moves the keys into a new KEY_ALIGN-aligned block of `cap` entries. */
static int keys_resize(sim_engine *eng, size_t cap)
{
    size_t bytes = (cap + KEY_SKEW) * sizeof(heap_key);
    bytes = (bytes + KEY_ALIGN - 1) / KEY_ALIGN * KEY_ALIGN; /* C11 aligned_alloc needs it */
    heap_key *block = aligned_alloc(KEY_ALIGN, bytes);
    if (block == NULL)
        return SIM_ENOMEM;
    if (eng->key != NULL)
        memcpy(block + KEY_SKEW, eng->key, eng->n * sizeof(heap_key));
    free(eng->key_block);
    eng->key_block = block;
    eng->key = block + KEY_SKEW;
    return SIM_OK;
}

/* Resizes every per-slot array to `cap` slots and pushes the new slots on the free stack. */
static int pool_resize(sim_engine *eng, size_t cap)
{
    if (keys_resize(eng, cap) != SIM_OK)
        return SIM_ENOMEM;
    uint32_t *hslot = realloc(eng->hslot, cap * sizeof(*hslot));
    if (hslot == NULL)
        return SIM_ENOMEM;
    eng->hslot = hslot;
    sim_event *events = realloc(eng->events, cap * sizeof(*events));
    if (events == NULL)
        return SIM_ENOMEM;
    eng->events = events;
    uint32_t *gen = realloc(eng->gen, cap * sizeof(*gen));
    if (gen == NULL)
        return SIM_ENOMEM;
    eng->gen = gen;
    uint32_t *pos = realloc(eng->pos, cap * sizeof(*pos));
    if (pos == NULL)
        return SIM_ENOMEM;
    eng->pos = pos;
    uint32_t *fr = realloc(eng->free, cap * sizeof(*fr));
    if (fr == NULL)
        return SIM_ENOMEM;
    eng->free = fr;
    /* New slots are pushed so that the lowest index is popped first. */
    for (size_t s = cap; s > eng->capacity; s--) {
        eng->gen[s - 1] = 1;
        eng->pos[s - 1] = UINT32_MAX;
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
    free(eng->key_block);
    free(eng->hslot);
    free(eng->events);
    free(eng->gen);
    free(eng->pos);
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
    stats->pending = eng->n - (eng->hole ? 1 : 0);
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
    heap_key k = { at, e->seq };
    if (eng->hole) {
        /* The new event is no earlier than the one being dispatched: it can only sink. */
        eng->hole = false;
        sift_down(eng, 0, k, slot);
    } else {
        sift_up(eng, eng->n++, k, slot);
    }
    eng->stats.scheduled++;
    if (eng->n > eng->stats.peak_pending)
        eng->stats.peak_pending = eng->n;
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

int sim_engine_cancel(sim_engine *eng, sim_event_id id)
{
    uint64_t slot = id & 0xffffffffu;
    uint32_t gen = (uint32_t)(id >> 32);
    if (slot >= eng->capacity || gen == 0 || eng->gen[slot] != gen)
        return SIM_EINVAL;
    fill_hole(eng);
    size_t i = eng->pos[slot];
    if (i >= eng->n || eng->hslot[i] != slot)
        return SIM_EINVAL; /* a free slot whose generation has not moved on: never issued */
    heap_remove(eng, i);
    eng->pos[slot] = UINT32_MAX;
    slot_release(eng, (uint32_t)slot);
    eng->stats.cancelled++;
    return SIM_OK;
}

int sim_engine_reschedule(sim_engine *eng, sim_event_id id, sim_time at)
{
    uint64_t slot = id & 0xffffffffu;
    uint32_t gen = (uint32_t)(id >> 32);
    if (slot >= eng->capacity || gen == 0 || eng->gen[slot] != gen)
        return SIM_EINVAL;
    if (at < eng->now || at == SIM_TIME_NEVER)
        return SIM_EINVAL;
    fill_hole(eng);
    size_t i = eng->pos[slot];
    if (i >= eng->n || eng->hslot[i] != slot)
        return SIM_EINVAL;
    /* A fresh sequence number, as a cancel and a schedule would give: the same order. */
    heap_key k = { at, eng->seq++ };
    eng->events[slot].time = at;
    eng->events[slot].seq = k.seq;
    if (key_less(k, eng->key[i]))
        sift_up(eng, i, k, (uint32_t)slot);
    else
        sift_down(eng, i, k, (uint32_t)slot);
    eng->stats.scheduled++;
    eng->stats.cancelled++;
    return SIM_OK;
}

sim_time sim_engine_next_time(const sim_engine *eng)
{
    if (!eng->hole)
        return eng->n > 0 ? eng->key[0].time : SIM_TIME_NEVER;
    /* The root is the dispatched event's: the earliest pending is one of its children. */
    sim_time t = SIM_TIME_NEVER;
    for (size_t c = 1; c <= ARITY && c < eng->n; c++)
        if (eng->key[c].time < t)
            t = eng->key[c].time;
    return t;
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
 * after now. The hook may schedule at now, so callers look at the heap again afterwards. */
static int flush_if_leaving(sim_engine *eng, sim_err *err)
{
    if (!eng->flush_wanted)
        return SIM_OK;
    fill_hole(eng);
    if (eng->n > 0 && eng->key[0].time <= eng->now)
        return SIM_OK;
    int rc = sim_engine_flush(eng, err);
    fill_hole(eng);
    return rc;
}

int sim_engine_step(sim_engine *eng, sim_dispatch_fn fn, void *ud, sim_err *err)
{
    int frc = flush_if_leaving(eng, err);
    if (frc != SIM_OK)
        return frc;
    fill_hole(eng);
    if (eng->n == 0)
        return 0;
    uint32_t slot = eng->hslot[0];
    sim_event ev = eng->events[slot];
    eng->hole = true; /* key[0] stays until a schedule or another operation replaces it */
    eng->pos[slot] = UINT32_MAX;
    slot_release(eng, slot);
    eng->now = ev.time;
    eng->stats.processed++;
    if (eng->n >= PREFETCH_MIN_PENDING) {
        /* The next event is the least of the root's children unless the handler schedules an
         * earlier one: fetch its body during the handler (with many workers it is rarely in
         * cache when the next step copies it). */
        size_t m = eng->n - 1 < ARITY ? eng->n - 1 : ARITY;
        prefetch_line(&eng->events[eng->hslot[least_child(eng->key, 1, m)]]);
    }
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
        fill_hole(eng);
        if (eng->n == 0 || eng->key[0].time > until || eng->stopped)
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
