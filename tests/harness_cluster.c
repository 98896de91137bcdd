/* Shared helpers of the cluster suites (tests/harness_cluster.h). */
#include "harness_cluster.h"

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

void clt_fixture_init(fixture *f, uint32_t n, uint64_t seed, sim_time iteration_ns)
{
    ck_assert_uint_le(n, MAXW);
    memset(f, 0, sizeof(*f));
    f->sc.seed = seed;
    f->sc.workers = n;
    f->sc.iteration_ns = iteration_ns;
    ck_assert_int_eq(sim_rng_derive(seed, SIM_STREAM_WORKER + n, f->seeds), SIM_OK);
    f->sc.stream_seeds = f->seeds;
    for (uint32_t w = 0; w < n; w++)
        f->speeds[w] = 1.0;
    f->sc.speeds = f->speeds;
    f->sc.stragglers = f->rules;
}

sim_straggler *clt_add_rule(fixture *f, sim_straggler_kind kind, const uint32_t *workers,
                            size_t nworkers)
{
    ck_assert_uint_lt(f->sc.nstragglers, MAXR);
    ck_assert_uint_le(f->nids + nworkers, 32);
    uint32_t *copy = f->ids + f->nids;
    if (nworkers > 0)
        memcpy(copy, workers, nworkers * sizeof(*workers));
    f->nids += nworkers;
    sim_straggler *r = &f->rules[f->sc.nstragglers++];
    *r = (sim_straggler){ .kind = kind,
                          .workers = nworkers > 0 ? copy : NULL,
                          .nworkers = nworkers,
                          .slowdown = 1.0,
                          .probability = 0.0,
                          .from_ns = 0,
                          .to_ns = SIM_TIME_NEVER,
                          .bandwidth_factor = 1.0,
                          .at_ns = 0,
                          .recover_ns = SIM_TIME_NEVER };
    return r;
}

sim_cluster *clt_make(const fixture *f)
{
    sim_err err;
    sim_err_clear(&err);
    sim_cluster *cl = sim_cluster_create(&f->sc, &err);
    ck_assert_msg(cl != NULL, "create failed: %s", err.msg);
    return cl;
}

gsl_rng *clt_replay_rng(const fixture *f, uint32_t w)
{
    gsl_rng *r = sim_rng_create(f->seeds[SIM_STREAM_WORKER + w]);
    ck_assert_ptr_nonnull(r);
    return r;
}

bool clt_same_position(gsl_rng *a, gsl_rng *b)
{
    bool same = true;
    for (int i = 0; i < 4; i++)
        same = same && gsl_rng_get(a) == gsl_rng_get(b);
    return same;
}

bool clt_untouched(const fixture *f, sim_cluster *cl, uint32_t w)
{
    gsl_rng *fresh = clt_replay_rng(f, w);
    bool same = clt_same_position(sim_cluster_worker_rng(cl, w), fresh);
    gsl_rng_free(fresh);
    return same;
}

const sim_trace_point clt_trace_points[] = {
    { 1000000000, 0, 2.5 },  { 2000000000, 1, 1.75 }, { 3000000000, 0, 4.0 },
    { 3000000000, 2, 1.25 }, { 5500000000, 0, 1.0 },  { 6000000000, 1, 3.5 },
};

void clt_add_trace(fixture *f, const sim_trace_point *pts, size_t n)
{
    ck_assert_uint_le(f->npoints + n, 16);
    sim_straggler *r = clt_add_rule(f, SIM_STRAG_TRACE, NULL, 0);
    r->trace = f->points + f->npoints;
    r->ntrace = n;
    memcpy(r->trace, pts, n * sizeof(*pts));
    f->npoints += n;
}
