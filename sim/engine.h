/* The discrete-event engine: a clock and a priority queue of pending events.
 *
 * Simulated time is an int64_t count of nanoseconds. Events are ordered by (time, class,
 * insertion sequence), so ties resolve in the order they were scheduled and never depend on
 * addresses. An event is of the normal class (sim_engine_schedule) or of the late one
 * (sim_engine_schedule_late_at): at one time, the late events come after every normal event
 * and after the end-of-instant hook (sim/engine_net.h), so that a late event's handler sees
 * its instant's state whatever the order the events were scheduled in (the runtime's
 * evaluations: a metrics.csv row shows the state after all of its instant's events). The queue is a
 * radix heap of FIFO buckets (sim/engine.c: no event is ever scheduled before now, so taking the
 * earliest costs O(1) amortized plus at most 64 moves of each event over its life, and events of
 * one time come out in insertion order) over a pool of event slots sized at creation. A bucket is a
 * list of chunks of compact (time, slot) entries, so that moving events streams through memory, and
 * the next event's body is prefetched while the current one is handled. A slot's generation makes
 * ids of consumed or cancelled events stale, so cancelling them does nothing. Scheduling allocates
 * only when the pool is full, by doubling it (and the buckets' chunk pool with it): the one
 * allocation allowed during a run, and it is counted (sim_engine_stats). The engine owns no other
 * state; handlers own theirs.
 */
#ifndef SIM_ENGINE_H
#define SIM_ENGINE_H

#include <stddef.h>
#include <stdint.h>

#include "sim/err.h"

typedef int64_t sim_time;      /* simulated nanoseconds */
typedef uint64_t sim_event_id; /* slot | generation << 32; 0 is never a valid id */

#define SIM_TIME_NEVER INT64_MAX /* "no such time": a run's open end, a worker never back */
#define SIM_NOBODY     (-1)      /* src/dst of an event that concerns no worker */

typedef struct sim_event {
    sim_time time;    /* absolute; set by the engine */
    uint64_t seq;     /* insertion counter, the tie-breaker; set by the engine */
    uint32_t kind;    /* its owner's: the network's (net/net.h), the runtime's (runtime/events.h) */
    int32_t src, dst; /* worker ids or SIM_NOBODY */
    uint64_t arg[4];  /* small inline payload; tensors travel through net pools */
} sim_event;

typedef struct sim_engine sim_engine;

/* Called for each event in order; a negative SIM_E* return stops the run and is passed up
 * with `err` filled by the handler. `eng` may be used to schedule, cancel or stop. */
typedef int (*sim_dispatch_fn)(void *ud, sim_engine *eng, const sim_event *ev, sim_err *err);

typedef struct sim_engine_stats {
    uint64_t scheduled;  /* events scheduled since creation */
    uint64_t processed;  /* events dispatched */
    uint64_t cancelled;  /* events cancelled before they ran */
    size_t pending;      /* events now in the queue */
    size_t peak_pending; /* most events ever pending at once */
    size_t capacity;     /* slots in the pool */
    uint64_t grows;      /* times the pool doubled (allocations after creation) */
} sim_engine_stats;

/* Creates an engine at time 0 with room for `capacity_hint` pending events (at least 16).
 * Returns NULL with SIM_ENOMEM in `err` when out of memory. */
sim_engine *sim_engine_create(size_t capacity_hint, sim_err *err);

/* Frees the engine and every pending event. NULL is a no-op. */
void sim_engine_destroy(sim_engine *eng);

/* The current simulated time: that of the event being dispatched, or of the last one. */
sim_time sim_engine_now(const sim_engine *eng);

/* Counters since creation. */
void sim_engine_stats_get(const sim_engine *eng, sim_engine_stats *stats);

/* Schedules a copy of `ev` at now + delay (delay >= 0; SIM_EINVAL for the past or for a
 * time past SIM_TIME_NEVER). Writes the event's id to `id` if not NULL. Returns 0, or
 * SIM_ENOMEM when the pool is full and cannot grow. */
int sim_engine_schedule(sim_engine *eng, sim_time delay, const sim_event *ev, sim_event_id *id);

/* Like sim_engine_schedule with an absolute time (>= now). */
int sim_engine_schedule_at(sim_engine *eng, sim_time at, const sim_event *ev, sim_event_id *id);

/* Like sim_engine_schedule_at, for an event of the late class: it comes after every normal
 * event of time `at`, and after the end-of-instant hook of that instant; late events of one
 * time come in the order they were scheduled. A normal event scheduled at now once a late
 * event of now was taken (by its handler, or by the hook after it) is late too, after those
 * already pending. */
int sim_engine_schedule_late_at(sim_engine *eng, sim_time at, const sim_event *ev,
                                sim_event_id *id);

/* Removes a pending event. Returns 0 if it was pending, SIM_EINVAL if the id is stale
 * (already run or cancelled) or was never issued. */
int sim_engine_cancel(sim_engine *eng, sim_event_id id);

/* The time of the earliest pending event, or SIM_TIME_NEVER if none. */
sim_time sim_engine_next_time(const sim_engine *eng);

/* Dispatches events in order until the queue is empty, the next event lies after `until`
 * (the clock then stays at the last event's time), sim_engine_stop is called, or a handler
 * returns non-zero (that value is returned). Returns 0 otherwise. */
int sim_engine_run(sim_engine *eng, sim_time until, sim_dispatch_fn fn, void *ud, sim_err *err);

/* Dispatches the earliest event. Returns 1 if one ran, 0 if the queue was empty, or the
 * handler's non-zero return. */
int sim_engine_step(sim_engine *eng, sim_dispatch_fn fn, void *ud, sim_err *err);

/* Makes the current sim_engine_run return after the event being dispatched. */
void sim_engine_stop(sim_engine *eng);

#endif
