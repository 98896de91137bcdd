/* The kit's group collectives under test (tests/test_coll.c, tests/test_coll_barrier.c): a
 * test-only protocol of groups of members, each running one collective (ring, butterfly or
 * barrier), driven by a plan the test fills and reads back, and the run that drives it. */
#ifndef HETSIM_TESTS_HARNESS_COLL_H
#define HETSIM_TESTS_HARNESS_COLL_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>
#include <gsl/gsl_errno.h>

#include "harness.h"
#include "kit/coll.h"
#include "kit/coll_state.h"
#include "kit/graph.h"
#include "kit/rejoin.h"
#include "runtime/arena.h"
#include "runtime/proto.h"
#include "runtime/run.h"
#include "scenario/scenario.h"

/* ---- A test-only protocol: groups of members, each running one collective ---- */

enum {
    MAXW = 8,
    MAXG = 4,
    MAXP = 8
};

typedef enum {
    T_RING,
    T_BFLY,
    T_BARRIER
} tkind;

typedef struct tgroup {
    tkind kind;
    uint32_t n;
    uint32_t members[MAXW];
    const double *weights; /* butterfly weights, NULL: all 1 */
} tgroup;

/* What a test asks for and what the protocol saw; tests run in forked processes, so the
 * protocol reaches it through one pointer set by the test. */
typedef struct plan {
    uint32_t ngroups;
    tgroup g[MAXG];
    bool compute_first;  /* members join when their first computation ends (else at start) */
    bool notify_down;    /* SIM_EV_WORKER_DOWN goes to coll_hub_worker_down */
    bool end_on_failure; /* rings: coll_ring_on_failure(COLL_RING_END) */
    bool repeat;         /* a member computes again when done, then joins the next round */
    bool restart_on_up;  /* a recovered worker: its barrier restarts over its members that are up
                            (coll_barrier_restart with `arrived`), then it computes unless arrived */
    bool admit_on_up;    /* a recovered worker is admitted to its barrier (coll_barrier_admit) and
                            computes */
    bool arrived[MAXW];
    bool leave[MAXW]; /* a butterfly member that leaves (coll_bfly_leave) instead of joining */
    sim_time sender_timeout, reducer_timeout;
    uint32_t bfly_cap;    /* a butterfly's room at init (0: its members' count) */
    uint64_t grown[MAXG]; /* seen: a butterfly's growths */
    bool set_init;
    float init[MAXW][MAXP]; /* initial parameters, written at start when set_init */
    /* seen */
    uint32_t channel[MAXG];
    uint32_t complete[MAXG]; /* butterfly rounds seen complete by a done callback */
    sim_time done_ns[MAXW];
    sim_time first_done_ns[MAXW];
    uint32_t ndone[MAXW];
    float out[MAXW][MAXP];
    uint32_t nfailed[MAXW];
    uint32_t failed[MAXW][MAXW];
    int ended[MAXW];          /* coll_info.ended of the last completion */
    uint64_t abandoned[MAXG]; /* rings: coll_stats.abandoned at fini */
} plan;

typedef struct tproto {
    coll_hub *hub;
    coll_ring *ring[MAXG];
    coll_bfly *bfly[MAXG];
    coll_barrier *barrier[MAXG];
    int32_t group_of[MAXW];
    uint32_t n; /* workers */
} tproto;

int hcoll_t_done(void *ud, sim_ctx *ctx, uint32_t w, const coll_info *info, sim_err *err);

/* Runs `json` with the test protocol; returns the summary. */
sim_run_summary hcoll_run(const char *json, const char *const *sets, size_t nsets);

plan *hcoll_new_plan(void);

void hcoll_add_group(plan *p, tkind kind, const uint32_t *members, uint32_t n);

/* Timing only on a star: bandwidth B = 10 Gbit/s, NIC latency L = 50 us (path 2L). */
extern const char hcoll_timing_json[];

/* A real model of 6 floats (softmax, 2 features, 2 classes): the members' parameters are set
 * by hand at start; nothing trains. */
extern const char hcoll_tensor_json[];

/* Fails the test unless a and b have the same bits. */
void hcoll_same_bits(float a, float b);

/* Member w's hand-set parameters (all exact in binary). */
extern const float hcoll_init4[][6];

void hcoll_set_init(plan *p);

#endif
