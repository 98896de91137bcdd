/* Helpers shared by the D-PSGD suites (tests/test_dpsgd.c, tests/test_dpsgd_failures.c): their
 * scenarios, runs and checks. */
#ifndef HETSIM_TESTS_HARNESS_DPSGD_H
#define HETSIM_TESTS_HARNESS_DPSGD_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>
#include <gsl/gsl_eigen.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_matrix.h>
#include <gsl/gsl_rng.h>
#include <gsl/gsl_sort_vector.h>
#include <gsl/gsl_vector.h>

#include "harness.h"
#include "runtime/ctx.h"
#include "runtime/run.h"
#include "scenario/scenario.h"

/* Float unit roundoff: every float operation errs by at most U times its result. */
static const double U = 0x1p-24;

/* Real tensors, zero gradients: softmax on 8 features and 3 classes (27 parameters), each
 * worker drawing its own initial model. Compute (10 ms) dominates the 100-odd us messages,
 * so every worker finishes iteration k at exactly (k+1) * 10 ms: the workers move in
 * lockstep, and evaluations every 13.7 ms never coincide with an iteration's end before
 * 1.37 s, so each one sees all workers in the same iteration, floor(t / 10 ms). */
extern const char dpt_zero_json[];

enum {
    MAX_OBS = 256, /* observations kept */
    MAX_P = 64,    /* parameters kept per observation */
    MAX_N = 16     /* workers in the graph checks */
};

/* ---- running scenarios ---- */

typedef struct outputs {
    sim_run_summary sum;
    char *summary, *workers, *metrics;
} outputs;

/* Runs the scenario into a fresh directory, keeps its outputs in memory, removes the files. */
outputs dpt_run_with(const char *json, const char *const *sets, size_t n, sim_run_observe_fn fn,
                     void *ud);

outputs dpt_run(const char *json, const char *const *sets, size_t n);

void dpt_outputs_free(outputs *o);

/* A value of summary.json's protocol_report. */
double dpt_report(const outputs *o, const char *key);

/* The iterations column of workers.csv, one entry per worker; returns the count. */
size_t dpt_iterations(const outputs *o, unsigned long *out, size_t max);

/* ---- observing runs ---- */

typedef struct observer {
    size_t n;                    /* observations */
    double t[MAX_OBS];           /* simulated seconds */
    long long t_ns[MAX_OBS];     /* simulated nanoseconds */
    double consensus[MAX_OBS];   /* mean over live workers of ||x_w - mean||^2, in double */
    double mean[MAX_OBS][MAX_P]; /* mean model over live workers, in double */
    double max_abs;              /* largest |x| seen */
    size_t p;                    /* parameters */
    bool same_21[MAX_OBS];       /* worker 2 holds worker 1's bits */
    bool same_23[MAX_OBS];       /* worker 2 holds worker 3's bits */
} observer;

void dpt_observe(void *ud, struct sim_ctx *ctx);

/* Largest |mean_k[i] - mean_0[i]| over the parameters, observation k against observation 0. */
double dpt_mean_drift(const observer *o, size_t k, size_t k0);

#endif
