/* Helpers shared by the cluster suites (tests/test_cluster.c, tests/test_cluster_timeline.c): their
 * scenarios, runs and checks. */
#ifndef HETSIM_TESTS_HARNESS_CLUSTER_H
#define HETSIM_TESTS_HARNESS_CLUSTER_H

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include <check.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>

#include "scenario/cluster.h"
#include "sim/rng.h"
#include "suite.h"

enum {
    MAXW = 8,
    MAXR = 8
};

static const sim_time ms = 1000000; /* ns per millisecond */

static const sim_time sec = 1000000000; /* ns per second */

/* A hand-built scenario with room for MAXW workers and MAXR rules. Not to be copied: the
 * scenario points into the fixture. */
typedef struct fixture {
    sim_scenario sc;
    uint32_t seeds[SIM_STREAM_WORKER + MAXW];
    double speeds[MAXW];
    sim_straggler rules[MAXR];
    uint32_t ids[32]; /* the rules' worker lists */
    size_t nids;
    sim_trace_point points[16]; /* the trace rules' points */
    size_t npoints;
} fixture;

void clt_fixture_init(fixture *f, uint32_t n, uint64_t seed, sim_time iteration_ns);

/* Appends a rule with neutral parameters; the caller sets the ones that matter. The worker
 * ids are copied into the fixture. */
sim_straggler *clt_add_rule(fixture *f, sim_straggler_kind kind, const uint32_t *workers,
                            size_t nworkers);

sim_cluster *clt_make(const fixture *f);

/* A fresh stream with worker w's seed, to replay its draws. */
gsl_rng *clt_replay_rng(const fixture *f, uint32_t w);

/* Whether two streams are at the same point (consumes a few draws of each). */
bool clt_same_position(gsl_rng *a, gsl_rng *b);

/* Whether worker w's stream has not been drawn from. */
bool clt_untouched(const fixture *f, sim_cluster *cl, uint32_t w);

extern const sim_trace_point clt_trace_points[];

/* Appends a trace rule with the given points, copied into the fixture. */
void clt_add_trace(fixture *f, const sim_trace_point *pts, size_t n);

#endif
