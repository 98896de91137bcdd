/* Helpers shared by the AD-PSGD suites (tests/test_adpsgd.c, tests/test_adpsgd_timing.c): their
 * scenarios, runs and checks. */
#ifndef HETSIM_TESTS_HARNESS_ADPSGD_H
#define HETSIM_TESTS_HARNESS_ADPSGD_H

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_rng.h>

#include "harness.h"
#include "protocols/adpsgd_state.h"
#include "runtime/ctx.h"
#include "runtime/run.h"
#include "scenario/scenario.h"
#include "sim/tensor.h"

/* ---- helpers ---- */

/* A value of summary.json's protocol_report (or any number keyed so). */
double adpt_report(const char *dir, const char *key);

/* Delivered messages from events.csv. */
typedef struct msg_line {
    int64_t t;    /* ns */
    uint32_t dst; /* receiver */
    uint32_t src; /* sender */
    uint64_t tag; /* 1 request, 2 reply: the message's kind (its arg, on channel 0) */
    uint64_t bytes;
} msg_line;

msg_line *adpt_messages(const char *dir, size_t *n);

/* ---- scenarios ---- */

/* 16 workers, a softmax model of 39 parameters on 12 features and 3 classes, lr 0 (models
 * change only by averaging) and each worker's own initial draw. */
extern const char adpt_avg_json[];

enum {
    MAX_EVALS = 128,
    MAX_W = 32
};

/* What the observe hook saw at each evaluation. */
typedef struct probe {
    size_t P;
    uint32_t n;
    double *sum0;           /* (P) element sums over all workers at the first call */
    double max_abs;         /* M: the largest |x| at the first call */
    double max_dev;         /* largest |sum - sum0| over elements and calls */
    size_t k;               /* calls so far */
    int64_t t[MAX_EVALS];   /* their times */
    double cons[MAX_EVALS]; /* consensus distance over all workers */
    uint64_t fnv[MAX_EVALS][MAX_W];
    bool down[MAX_EVALS][MAX_W];
} probe;

void adpt_observe(void *ud, sim_ctx *ctx);

/* ---- timing ---- */

/* Two workers (0 passive, 1 active), S = 1e6 bytes at 8 Gbit/s: 1 ms on the wire, plus two
 * NIC latencies of 25 us. Both compute for 10 ms. */
extern const char adpt_pair_json[];

#endif
