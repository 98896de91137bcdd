#include "sim/engine.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* A heap entry: the ordering key and the slot of the event it stands for. Keeping the key
 * in the heap array (not behind the slot) keeps sift loops within one array. */
typedef struct heap_key {
    sim_time time;
    uint64_t seq;
    uint32_t slot;
} heap_key;

struct sim_engine {
    sim_time now;
    uint64_t seq;      /* next insertion sequence number */
    bool stopped;      /* set by sim_engine_stop, cleared by run */
    bool flush_wanted; /* sim_engine_request_flush was called at this instant */
    sim_flush_fn flush_fn;
    void *flush_ud;
    bool hole;         /* heap[0] belongs to the event being dispatched: filled by the next
                          schedule (one sift-down instead of a sift-down and a sift-up) or
                          removed before any other heap operation */
    size_t capacity;   /* slots in the pool */
    size_t n;          /* pending events (heap size) */
    heap_key *heap;    /* (capacity) binary min-heap on (time, seq) */
    sim_event *events; /* (capacity) event bodies, by slot */
    uint32_t *gen;     /* (capacity) generation of each slot, never 0 */
    uint32_t *pos;     /* (capacity) heap index of a pending slot */
    uint32_t *free;    /* (capacity) stack of free slots */
    size_t nfree;
    sim_engine_stats stats;
};

static inline bool key_less(const heap_key *a, const heap_key *b)
{
    return a->time < b->time || (a->time == b->time && a->seq < b->seq);
}

static void sift_up(sim_engine *eng, size_t i)
{
    heap_key k = eng->heap[i];
    while (i > 0) {
        size_t parent = (i - 1) / 2;
        if (!key_less(&k, &eng->heap[parent]))
            break;
        eng->heap[i] = eng->heap[parent];
        eng->pos[eng->heap[i].slot] = (uint32_t)i;
        i = parent;
    }
    eng->heap[i] = k;
    eng->pos[k.slot] = (uint32_t)i;
}

static void sift_down(sim_engine *eng, size_t i)
{
    heap_key k = eng->heap[i];
    size_t n = eng->n;
    for (;;) {
        size_t child = 2 * i + 1;
        if (child >= n)
            break;
        if (child + 1 < n && key_less(&eng->heap[child + 1], &eng->heap[child]))
            child++;
        if (!key_less(&eng->heap[child], &k))
            break;
        eng->heap[i] = eng->heap[child];
        eng->pos[eng->heap[i].slot] = (uint32_t)i;
        i = child;
    }
    eng->heap[i] = k;
    eng->pos[k.slot] = (uint32_t)i;
}

/* Removes heap entry i, keeping the heap ordered. */
static void heap_remove(sim_engine *eng, size_t i)
{
    eng->n--;
    if (i == eng->n)
        return;
    eng->heap[i] = eng->heap[eng->n];
    if (i > 0 && key_less(&eng->heap[i], &eng->heap[(i - 1) / 2]))
        sift_up(eng, i);
    else
        sift_down(eng, i);
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

/* Resizes every per-slot array to `cap` slots and pushes the new slots on the free stack. */
static int pool_resize(sim_engine *eng, size_t cap)
{
    heap_key *heap = realloc(eng->heap, cap * sizeof(*heap));
    if (heap == NULL)
        return SIM_ENOMEM;
    eng->heap = heap;
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
    free(eng->heap);
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
    if (eng->hole) {
        /* The new event is no earlier than the one being dispatched: it can only sink. */
        eng->hole = false;
        eng->heap[0] = (heap_key){ at, e->seq, slot };
        sift_down(eng, 0);
    } else {
        size_t i = eng->n++;
        eng->heap[i] = (heap_key){ at, e->seq, slot };
        sift_up(eng, i);
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
    if (i >= eng->n || eng->heap[i].slot != slot)
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
    if (i >= eng->n || eng->heap[i].slot != slot)
        return SIM_EINVAL;
    /* A fresh sequence number, as a cancel and a schedule would give: the same order. */
    heap_key k = { at, eng->seq++, (uint32_t)slot };
    eng->events[slot].time = at;
    eng->events[slot].seq = k.seq;
    bool up = key_less(&k, &eng->heap[i]);
    eng->heap[i] = k;
    if (up)
        sift_up(eng, i);
    else
        sift_down(eng, i);
    eng->stats.scheduled++;
    eng->stats.cancelled++;
    return SIM_OK;
}

sim_time sim_engine_next_time(const sim_engine *eng)
{
    if (!eng->hole)
        return eng->n > 0 ? eng->heap[0].time : SIM_TIME_NEVER;
    /* The root is the dispatched event's: the earliest pending is one of its children. */
    sim_time t = SIM_TIME_NEVER;
    for (size_t c = 1; c <= 2 && c < eng->n; c++)
        if (eng->heap[c].time < t)
            t = eng->heap[c].time;
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
    if (eng->n > 0 && eng->heap[0].time <= eng->now)
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
    uint32_t slot = eng->heap[0].slot;
    sim_event ev = eng->events[slot];
    eng->hole = true; /* heap[0] stays until a schedule or another operation replaces it */
    eng->pos[slot] = UINT32_MAX;
    slot_release(eng, slot);
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
        fill_hole(eng);
        if (eng->n == 0 || eng->heap[0].time > until || eng->stopped)
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
