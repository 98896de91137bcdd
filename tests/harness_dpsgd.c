/* Shared helpers of the dpsgd suites (tests/harness_dpsgd.h). */
#include "harness_dpsgd.h"

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

const char dpt_zero_json[] = "tests/scenarios/dpsgd/zero.json";

outputs dpt_run_with(const char *json, const char *const *sets, size_t n, sim_run_observe_fn fn,
                     void *ud)
{
    sim_scenario *sc = harness_load_spec(json, sets, n);
    char *dir = harness_tmpdir("dpsgd");
    outputs o = { .sum = harness_run(sc, dir, fn, ud) };
    o.summary = harness_slurp(dir, "summary.json");
    o.workers = harness_slurp(dir, "workers.csv");
    o.metrics = harness_slurp(dir, "metrics.csv");
    harness_cleanup(dir);
    sim_scenario_destroy(sc);
    return o;
}

outputs dpt_run(const char *json, const char *const *sets, size_t n)
{
    return dpt_run_with(json, sets, n, NULL, NULL);
}

void dpt_outputs_free(outputs *o)
{
    free(o->summary);
    free(o->workers);
    free(o->metrics);
}

double dpt_report(const outputs *o, const char *key)
{
    return harness_report_in(o->summary, key);
}

size_t dpt_iterations(const outputs *o, unsigned long *out, size_t max)
{
    size_t n = 0;
    for (const char *line = strchr(o->workers, '\n'); line != NULL && line[1] != '\0' && n < max;
         line = strchr(line + 1, '\n')) {
        unsigned id;
        double speed;
        ck_assert_int_eq(sscanf(line + 1, "%u,%lf,%lu", &id, &speed, &out[n]), 3);
        ck_assert_uint_eq(id, n);
        n++;
    }
    return n;
}

void dpt_observe(void *ud, struct sim_ctx *ctx)
{
    observer *o = ud;
    uint32_t n = sim_ctx_workers(ctx);
    size_t p = sim_ctx_num_params(ctx);
    if (o->n >= MAX_OBS || p > MAX_P)
        return;
    size_t k = o->n++;
    o->p = p;
    o->t_ns[k] = (long long)sim_ctx_now(ctx);
    o->t[k] = (double)o->t_ns[k] / 1e9;
    double mean[MAX_P] = { 0 };
    unsigned live = 0;
    for (uint32_t w = 0; w < n; w++) {
        if (sim_ctx_down(ctx, w))
            continue;
        live++;
        const float *x = sim_ctx_params(ctx, w);
        for (size_t i = 0; i < p; i++) {
            mean[i] += (double)x[i];
            o->max_abs = fmax(o->max_abs, fabs((double)x[i]));
        }
    }
    double d = 0.0;
    for (size_t i = 0; i < p; i++)
        o->mean[k][i] = mean[i] / live;
    for (uint32_t w = 0; w < n; w++)
        for (size_t i = 0; i < p && !sim_ctx_down(ctx, w); i++) {
            double e = (double)sim_ctx_params(ctx, w)[i] - o->mean[k][i];
            d += e * e;
        }
    o->consensus[k] = d / live;
    if (n >= 4) {
        o->same_21[k] = memcmp(sim_ctx_params(ctx, 2), sim_ctx_params(ctx, 1), p * 4) == 0;
        o->same_23[k] = memcmp(sim_ctx_params(ctx, 2), sim_ctx_params(ctx, 3), p * 4) == 0;
    }
}

double dpt_mean_drift(const observer *o, size_t k, size_t k0)
{
    double m = 0.0;
    for (size_t i = 0; i < o->p; i++)
        m = fmax(m, fabs(o->mean[k][i] - o->mean[k0][i]));
    return m;
}
