/* A small fixed pool of threads that runs jobs for the simulation thread (issue 28: real
 * training on every core).
 *
 * A pool of N threads is the calling thread (thread 0, the simulation's) and N - 1 helpers
 * (threads 1 .. N-1) started by sim_pool_create. A job is storage the caller owns: a function,
 * its argument and a priority. sim_pool_submit queues it; a helper runs the queued job of the
 * lowest (priority, submission order) first; sim_pool_join waits until the job has run, and
 * runs it on the calling thread if no helper has taken it yet (while a helper runs it, the
 * caller runs other queued jobs instead of idling). A pool of one thread runs each
 * job inside sim_pool_submit. The thread index passed to a job names the workspace it may
 * use: no two jobs run on one index at once.
 *
 * A job's results reach its caller only through sim_pool_join (a mutex orders the two), so
 * what a run writes never depends on which thread ran a job or when: the caller decides,
 * from the simulation alone, when it joins. Nothing allocates after sim_pool_create; at most
 * `capacity` jobs are queued or running at once.
 */
#ifndef SIM_POOL_H
#define SIM_POOL_H

#include <stddef.h>
#include <stdint.h>

#include "sim/err.h"

/* The largest pool (threads). */
#define SIM_POOL_MAX_THREADS 256

typedef struct sim_pool sim_pool;

/* A job's function: `thread` is the index of the thread running it (0: the caller's). */
typedef void (*sim_pool_fn)(void *arg, unsigned thread);

typedef enum sim_pool_state {
    SIM_POOL_IDLE = 0,    /* never submitted, or joined */
    SIM_POOL_QUEUED = 1,  /* waiting for a thread */
    SIM_POOL_RUNNING = 2, /* on a thread */
    SIM_POOL_DONE = 3     /* finished, not yet joined */
} sim_pool_state;

typedef struct sim_pool_job {
    sim_pool_fn fn;
    void *arg;
    int64_t priority; /* lower runs first (a simulated time: when the result is needed) */
    /* The pool's (read them only through the pool's calls). */
    uint64_t seq;  /* submission order, the tie-breaker */
    int state;     /* sim_pool_state, under the pool's lock */
    size_t slot;   /* index in the queue while queued */
    int submitted; /* submitted and not yet joined: the caller's thread only */
} sim_pool_job;

/* A pool of `threads` (1 .. SIM_POOL_MAX_THREADS) threads, the caller's included, for at most
 * `capacity` jobs in flight. Returns NULL and fills `err` (SIM_ENOMEM, or SIM_EIO when a
 * thread cannot be started). */
sim_pool *sim_pool_create(unsigned threads, size_t capacity, sim_err *err);

/* Stops and joins the helpers. Every submitted job must have been joined. NULL is a no-op. */
void sim_pool_destroy(sim_pool *p);

/* Threads of the pool, the caller's included. */
unsigned sim_pool_threads(const sim_pool *p);

/* Queues `job` (idle, with fn, arg and priority set); with one thread, runs it now. More than
 * `capacity` jobs in flight is a programmer's error (assert). */
void sim_pool_submit(sim_pool *p, sim_pool_job *job);

/* Returns once `job` has run (running it on the calling thread if it is still queued) and
 * makes it idle again. A job never submitted, or joined already, returns at once. */
void sim_pool_join(sim_pool *p, sim_pool_job *job);

/* Whether `job` is submitted and not yet joined. */
int sim_pool_pending(const sim_pool_job *job);

/* The number of CPUs online (sysconf), at least 1: the default thread count of `hetsim run`. */
unsigned sim_pool_cores(void);

#endif
