/* The engine's calls for the network (sim/engine.c implements them): an end-of-instant hook,
 * moving a pending event in place or changing its body, and where the run stands in the
 * (time, seq) order. Not a public header: only the network's files (net/net_*.c, through
 * net/net_state.h) and their tests include it; the runtime and the protocols schedule, cancel
 * and run through sim/engine.h alone. */
#ifndef SIM_ENGINE_NET_H
#define SIM_ENGINE_NET_H

#include <stdint.h>

#include "sim/engine.h"
#include "sim/err.h"

/* Called once when the clock is about to leave an instant at which sim_engine_request_flush
 * was called (see below), before the instant's late events (sim_engine_schedule_late_at),
 * if any; again before the clock moves on if one of those asked for it. It may schedule
 * events, also at the current time; a negative SIM_E* return stops the run and is passed up
 * like a handler's. */
typedef int (*sim_flush_fn)(void *ud, sim_engine *eng, sim_err *err);

/* Moves a pending event to time `at` (>= now), exactly as cancelling it and scheduling a
 * copy would (it gets a fresh sequence number) but without a new slot; its id stays
 * valid. Returns 0, or SIM_EINVAL for a stale id or a time in the past. */
int sim_engine_reschedule(sim_engine *eng, sim_event_id id, sim_time at);

/* Gives a pending event the body `ev` (kind, src, dst, arg), keeping its time and sequence:
 * its place in the order stays. Returns 0, or SIM_EINVAL for a stale id. */
int sim_engine_retarget(sim_engine *eng, sim_event_id id, const sim_event *ev);

/* The insertion sequence number (sim_event.seq) that the next event scheduled or moved will
 * get: every event scheduled so far has a smaller one, every later one a larger. */
uint64_t sim_engine_next_seq(const sim_engine *eng);

/* The sequence number of the event being dispatched, or UINT64_MAX between events (before a
 * run, between steps, and when the clock leaves an instant, in the end-of-instant hook) and
 * in a late event's handler (which comes after all of its instant's normal events): with
 * sim_engine_now, where the run stands in the (time, seq) order of the normal events. */
uint64_t sim_engine_current_seq(const sim_engine *eng);

/* Installs the end-of-instant hook (one per engine; NULL removes it). Its owner must outlive
 * the engine's runs or remove it. */
void sim_engine_set_flush(sim_engine *eng, sim_flush_fn fn, void *ud);

/* Asks for the end-of-instant hook to run before the clock moves past the current time:
 * sim_engine_step and sim_engine_run call it when the earliest pending event lies later than
 * now or is late (or none is pending), before they dispatch that event or return. Cheap and
 * idempotent within an instant, so that N changes at one instant cost one call of the hook. */
void sim_engine_request_flush(sim_engine *eng);

/* Runs the hook now if a flush was requested (for queries that need the instant settled).
 * Returns 0 or the hook's error. */
int sim_engine_flush(sim_engine *eng, sim_err *err);

#endif
