/* The cluster: workers' compute times, random streams, stragglers and failures.
 *
 * The simulated duration of one iteration of worker w started at time t (its k-th, from 0)
 * is base / speed_w * slowdown(w, t, k) * jitter, rounded once to the nearest nanosecond,
 * where base is the scenario's iteration time, slowdown multiplies the factors of every
 * straggler rule active for (w, t, k): fixed; random (a uniform draw from w's stream against
 * the probability, made for every iteration of every selected worker); window (t inside
 * [from, to)); trace (the last trace point for w at or before t). Jitter is lognormal with
 * mean 1 and the scenario's sigma, drawn from w's stream (no draw when sigma is 0). Rules
 * are evaluated at the iteration's start.
 *
 * Time-driven rules (failures and link windows) form the timeline: a list of changes sorted
 * by (time, rule order) that the runner schedules and applies as they come due.
 *
 * The cluster owns one gsl_rng per worker and the fixed streams of sim/rng.h, all seeded
 * from the scenario's derived seeds, and the workers' up/down state.
 */
#ifndef SCENARIO_CLUSTER_H
#define SCENARIO_CLUSTER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <gsl/gsl_rng.h>

#include "scenario/scenario.h"
#include "sim/engine.h"
#include "sim/err.h"

typedef enum sim_change_kind {
    SIM_CHANGE_DOWN = 0, /* worker fails */
    SIM_CHANGE_UP = 1,   /* worker recovers */
    SIM_CHANGE_LINK = 2  /* worker's NIC gets extra latency / bandwidth factor */
} sim_change_kind;

typedef struct sim_change {
    sim_time time_ns;
    sim_change_kind kind;
    uint32_t worker;
    sim_time extra_latency_ns; /* LINK: total extra latency from now on (0: none) */
    double bandwidth_factor;   /* LINK: total factor from now on (1: none) */
} sim_change;

typedef struct sim_cluster sim_cluster;

/* Builds the cluster from a loaded scenario, which must outlive it. Returns NULL and fills
 * `err` (SIM_ENOMEM). */
sim_cluster *sim_cluster_create(const sim_scenario *sc, sim_err *err);

/* Frees the cluster and its streams. NULL is a no-op. */
void sim_cluster_destroy(sim_cluster *cl);

uint32_t sim_cluster_workers(const sim_cluster *cl);

/* Worker w's own stream; every draw about w comes from it. */
gsl_rng *sim_cluster_worker_rng(sim_cluster *cl, uint32_t w);

/* One of the fixed streams (SIM_STREAM_NET, _DATA, _INIT, _STRAGGLER, _PROTO). */
gsl_rng *sim_cluster_stream(sim_cluster *cl, int stream);

/* The duration of worker w's k-th iteration started at `now` (draws from w's stream). */
sim_time sim_cluster_iteration_ns(sim_cluster *cl, uint32_t w, sim_time now, uint64_t k);

/* The product of the straggler factors for (w, now, k) without jitter and without drawing:
 * random rules are left out. For reports and tests. */
double sim_cluster_static_slowdown(const sim_cluster *cl, uint32_t w, sim_time now);

/* The timeline of failures, recoveries and link changes, sorted by time (stable by rule
 * order). Link changes give the combined effect of every link rule active after that time
 * on that worker (latencies add, bandwidth factors multiply). */
const sim_change *sim_cluster_timeline(const sim_cluster *cl, size_t *n);

/* Up/down state of worker w (all up at creation). */
bool sim_cluster_down(const sim_cluster *cl, uint32_t w);
void sim_cluster_set_down(sim_cluster *cl, uint32_t w, bool down);
uint32_t sim_cluster_live(const sim_cluster *cl); /* workers now up */

/* Dropout rules (averaging-only runs): whether any rule of the scenario is one, and whether
 * worker w sits out averaging round `round` (counted by the protocol from 0). The draws come
 * from w's stream, one per round in round order whatever the order of the questions (a
 * question about a later round draws the rounds before it first); the answers for the last 8
 * rounds drawn are remembered, older rounds answer false. Without dropout rules: false, and
 * nothing is drawn. */
bool sim_cluster_has_dropout(const sim_cluster *cl);
bool sim_cluster_dropped(sim_cluster *cl, uint32_t w, uint64_t round);
/* Whether worker w sits out every round: its dropout rules leave it no chance to take part
 * (a probability of 1). */
bool sim_cluster_always_dropped(const sim_cluster *cl, uint32_t w);

#endif
