/* D-PSGD end to end: parameters and graphs, exact timing on the alpha-beta network, the
 * averaging invariants with zero gradients (mean kept, consensus contracting by lambda_2^2 per
 * iteration), the iteration-gap bounds and a straggler's effect. Runs use tiny synthetic data
 * sets or the timing-only model so that the suite stays fast, also under the sanitizers
 * (helpers in tests/harness_dpsgd.h). */
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
#include "harness_dpsgd.h"
#include "runtime/ctx.h"
#include "runtime/run.h"
#include "scenario/scenario.h"

/* Timing-only: 8 workers, 1 ms of compute, 10^7-byte models on 10 Gbit/s, 50 us NICs. */
static const char timing_json[] = "tests/scenarios/dpsgd/timing.json";

/* ---- the graphs, rebuilt here from their definitions ---- */

static bool power_of_two(unsigned d)
{
    return d > 0 && (d & (d - 1)) == 0;
}

/* Whether i and j are neighbours in `graph` on n workers (torus: rows x n/rows). */
static bool linked(const char *graph, unsigned n, unsigned rows, unsigned i, unsigned j)
{
    if (i == j)
        return false;
    unsigned fwd = (j + n - i) % n, back = (i + n - j) % n;
    if (strcmp(graph, "ring") == 0)
        return fwd == 1 || back == 1;
    if (strcmp(graph, "exponential") == 0)
        return power_of_two(fwd) || power_of_two(back);
    if (strcmp(graph, "complete") == 0)
        return true;
    if (strcmp(graph, "star") == 0)
        return i == 0 || j == 0;
    unsigned cols = n / rows, ri = i / cols, ci = i % cols, rj = j / cols, cj = j % cols;
    bool row_step = (ri + 1) % rows == rj || (rj + 1) % rows == ri;
    bool col_step = (ci + 1) % cols == cj || (cj + 1) % cols == ci;
    return (ci == cj && row_step) || (ri == rj && col_step);
}

/* All-pairs hop distances by Floyd-Warshall (n <= MAX_N). */
static void distances(const char *graph, unsigned n, unsigned rows, unsigned d[MAX_N][MAX_N])
{
    for (unsigned i = 0; i < n; i++)
        for (unsigned j = 0; j < n; j++)
            d[i][j] = i == j ? 0 : linked(graph, n, rows, i, j) ? 1 : 1000;
    for (unsigned k = 0; k < n; k++)
        for (unsigned i = 0; i < n; i++)
            for (unsigned j = 0; j < n; j++)
                if (d[i][k] + d[k][j] < d[i][j])
                    d[i][j] = d[i][k] + d[k][j];
}

/* lambda_2 of the Metropolis matrix of `graph`: the largest |eigenvalue| but the 1. */
static double lambda2(const char *graph, unsigned n, unsigned rows)
{
    unsigned deg[MAX_N] = { 0 };
    for (unsigned i = 0; i < n; i++)
        for (unsigned j = 0; j < n; j++)
            deg[i] += linked(graph, n, rows, i, j);
    gsl_matrix *w = gsl_matrix_calloc(n, n);
    for (unsigned i = 0; i < n; i++) {
        double self = 1.0;
        for (unsigned j = 0; j < n; j++)
            if (linked(graph, n, rows, i, j)) {
                double x = 1.0 / (1.0 + (deg[i] > deg[j] ? deg[i] : deg[j]));
                gsl_matrix_set(w, i, j, x);
                self -= x;
            }
        gsl_matrix_set(w, i, i, self);
    }
    gsl_vector *eval = gsl_vector_alloc(n);
    gsl_eigen_symm_workspace *ws = gsl_eigen_symm_alloc(n);
    ck_assert_int_eq(gsl_eigen_symm(w, eval, ws), 0);
    gsl_sort_vector(eval);
    /* Sorted ascending: the last is 1 (connected graph); the second is the largest other. */
    double l2 = fmax(fabs(gsl_vector_get(eval, 0)), fabs(gsl_vector_get(eval, n - 2)));
    ck_assert_double_eq_tol(gsl_vector_get(eval, n - 1), 1.0, 1e-12);
    gsl_eigen_symm_free(ws);
    gsl_vector_free(eval);
    gsl_matrix_free(w);
    return l2;
}

/* ---- parameters and graphs ---- */

static void expect_error(const char *const *sets, size_t n, const char *path, const char *msg)
{
    harness_expect_rejected_file(timing_json, sets, n, path, msg);
}

START_TEST(bad_parameters_are_rejected_naming_the_key_and_the_reason)
{
    expect_error((const char *[]){ "protocol.graph=hypercube" }, 1, "$.protocol.graph",
                 "must be one of ring, torus, exponential, complete, star, got \"hypercube\"");
    expect_error((const char *[]){ "protocol.weights=equal" }, 1, "$.protocol.weights",
                 "must be one of metropolis, uniform, got \"equal\"");
    expect_error((const char *[]){ "workers=7", "protocol.graph=star", "protocol.weights=uniform" },
                 3, "$.protocol.weights",
                 "\"uniform\" needs a regular graph, but \"star\" on 7 workers has degrees 1 to 6 "
                 "(use \"metropolis\")");
    expect_error((const char *[]){ "workers=12", "protocol.graph=torus", "protocol.rows=5" }, 3,
                 "$.protocol.rows", "must divide workers (12), got 5");
    expect_error((const char *[]){ "protocol.rows=2" }, 1, "$.protocol.rows",
                 "unknown key (valid: name, graph, weights)");
    expect_error((const char *[]){ "workers=5794", "protocol.graph=complete" }, 2,
                 "$.protocol.graph",
                 "\"complete\" on 5794 workers has 33564642 directed edges, more than 33554432");
}
END_TEST

START_TEST(graphs_have_the_documented_edges)
{
    static const struct {
        const char *graph;
        unsigned n, edges, max_degree, rows;
    } cases[] = {
        { "ring", 1, 0, 0, 0 },          /* plain SGD */
        { "ring", 2, 1, 1, 0 },          /* i-1 = i+1: one edge */
        { "ring", 16, 16, 2, 0 },        /* */
        { "torus", 16, 32, 4, 4 },       /* 4 x 4 */
        { "torus", 12, 24, 4, 3 },       /* 3 x 4 */
        { "torus", 8, 12, 3, 2 },        /* 2 x 4: up = down */
        { "torus", 7, 7, 2, 1 },         /* prime: 1 x 7, the ring */
        { "exponential", 12, 36, 6, 0 }, /* +-1, +-2, +-4, 8 = -4 */
        { "exponential", 16, 56, 7, 0 }, /* +-1, +-2, +-4, 8 = -8 */
        { "exponential", 2, 1, 1, 0 },   /* */
        { "complete", 9, 36, 8, 0 },     /* */
        { "star", 7, 6, 6, 0 },          /* */
    };
    for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
        char workers[32], graph[48];
        snprintf(workers, sizeof(workers), "workers=%u", cases[c].n);
        snprintf(graph, sizeof(graph), "protocol.graph=%s", cases[c].graph);
        const char *sets[] = { workers, graph, "stop={\"iterations\": 3}" };
        outputs o = dpt_run(timing_json, sets, 3);
        ck_assert_msg(dpt_report(&o, "edges") == cases[c].edges, "%s on %u: %g edges",
                      cases[c].graph, cases[c].n, dpt_report(&o, "edges"));
        /* The same count from the definitions. */
        unsigned want = 0;
        for (unsigned i = 0; i < cases[c].n; i++)
            for (unsigned j = i + 1; j < cases[c].n; j++)
                want += linked(cases[c].graph, cases[c].n, cases[c].rows ? cases[c].rows : 1, i, j);
        ck_assert_uint_eq(want, cases[c].edges);
        ck_assert_double_eq(dpt_report(&o, "max_degree"), cases[c].max_degree);
        if (cases[c].rows > 0)
            ck_assert_double_eq(dpt_report(&o, "torus_rows"), cases[c].rows);
        ck_assert_str_eq(o.sum.stop_reason, "iterations");
        dpt_outputs_free(&o);
    }
}
END_TEST

START_TEST(the_example_scenarios_validate_and_the_consensus_one_contracts)
{
    sim_scenario *sc = harness_load_file("scenarios/dpsgd.json", NULL, 0);
    sim_scenario_destroy(sc);
    /* Rows every 5 iterations (16 workers, 10 ms each, evaluations every 50.1 ms): late in
     * the run the consensus falls by lambda_2^(2*5) per row, lambda_2 = 1/3 + 2/3 cos(pi/8),
     * to within 1e-3 (the faster modes' share is below 1e-6 after 20 rows; rounding noise,
     * near 1e-12 against values above 1e-7, does not show). */
    outputs o = dpt_run("scenarios/consensus-dpsgd.json", NULL, 0);
    double l2 = 1.0 / 3.0 + 2.0 / 3.0 * cos(acos(-1.0) / 8.0), want = pow(l2, 10.0);
    double prev = NAN;
    int rows = 0;
    for (char *line = strchr(o.metrics, '\n') + 1; *line != '\0'; line = strchr(line, '\n') + 1) {
        double t, ep, tl, vl, acc, cons;
        unsigned long long it, s;
        ck_assert_int_eq(sscanf(line, "%lf,%llu,%llu,%lf,%lf,%lf,%lf,%lf", &t, &it, &s, &ep, &tl,
                                &vl, &acc, &cons),
                         8);
        if (rows >= 20 && it % 80 == 0)
            ck_assert_double_eq_tol(cons / prev, want, 1e-3);
        if (rows >= 1)
            ck_assert_double_lt(cons, prev);
        prev = cons;
        rows++;
    }
    ck_assert_int_ge(rows, 25);
    dpt_outputs_free(&o);
}
END_TEST

/* ---- timing ---- */

START_TEST(a_ring_iteration_is_two_flows_sharing_each_uplink)
{
    /* Each worker sends two models of S = 10^7 bytes at the start of an iteration: its
     * uplink carries two flows and its downlink receives two, 5 Gbit/s each, after the path
     * latency 2 x 50 us: 100 us + 8e7 b / 5e9 b/s = 16.1 ms, longer than the 1 ms of compute.
     * 40 iterations of 8 workers: 5 rounds. */
    outputs o = dpt_run(timing_json, NULL, 0);
    ck_assert_str_eq(o.sum.stop_reason, "iterations");
    ck_assert_int_eq(o.sum.sim_ns, 5 * (100000 + 16000000));
    ck_assert_double_eq(dpt_report(&o, "max_neighbour_gap"), 1);
    dpt_outputs_free(&o);
    /* Awkward sizes: 1000003 bytes at 7.3 Gbit/s (3.65 each), 37 us NICs: a flow takes
     * 8000024 / 3.65e9 s = 2191787.397 ns, rounded once to the nearest ns when it is
     * scheduled: 74000 + 2191787 ns a round. */
    const char *sets[] = { "network.bandwidth_gbps=7.3", "network.latency_us=37",
                           "workload.message_bytes=1000003" };
    o = dpt_run(timing_json, sets, 3);
    ck_assert_int_eq(o.sum.sim_ns, 5 * (74000 + 2191787));
    dpt_outputs_free(&o);
}
END_TEST

START_TEST(iteration_times_follow_the_degree_of_each_graph)
{
    /* A worker of degree d sends d flows on its uplink and receives d on its downlink, so
     * every flow runs at B/d (on the star the hub's links carry d flows and set the pace of
     * every leaf): an iteration takes 100 us + d x 8 ms, and two rounds twice that. */
    static const struct {
        const char *workers, *graph;
        unsigned degree, per_round;
    } cases[] = {
        { "workers=2", "protocol.graph=ring", 1, 2 },        /* one neighbour, not two */
        { "workers=8", "protocol.graph=exponential", 5, 8 }, /* +-1, +-2, 4 */
        { "workers=16", "protocol.graph=torus", 4, 16 },     /* 4 x 4 */
        { "workers=5", "protocol.graph=star", 4, 5 },        /* the hub */
        { "workers=6", "protocol.graph=complete", 5, 6 },    /* */
    };
    for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
        char stop[48];
        snprintf(stop, sizeof(stop), "stop={\"iterations\": %u}", 2 * cases[c].per_round);
        const char *sets[] = { cases[c].workers, cases[c].graph, stop };
        outputs o = dpt_run(timing_json, sets, 3);
        ck_assert_msg(o.sum.sim_ns == 2 * (100000 + (long long)cases[c].degree * 8000000),
                      "%s: %lld ns", cases[c].graph, (long long)o.sum.sim_ns);
        dpt_outputs_free(&o);
    }
}
END_TEST

START_TEST(compute_bound_iterations_overlap_the_messages)
{
    /* 25 ms of compute hides the 16.1 ms of messages, sent when the iteration starts. */
    const char *sets[] = { "compute.iteration_ms=25" };
    outputs o = dpt_run(timing_json, sets, 1);
    ck_assert_int_eq(o.sum.sim_ns, 5 * 25000000);
    dpt_outputs_free(&o);
}
END_TEST

/* The params_fnv column (the last) of workers.csv's first worker. */
static void first_checksum(const outputs *o, char out[17])
{
    const char *line = strchr(o->workers, '\n') + 1;
    const char *end = strchr(line, '\n');
    ck_assert_uint_eq((size_t)(end - strrchr(line, ',') - 1), 16);
    memcpy(out, end - 16, 16);
    out[16] = '\0';
}

START_TEST(one_worker_is_plain_sgd_bit_for_bit)
{
    /* With no neighbour there is nothing to mix: 37 iterations of D-PSGD on one worker give
     * the bits of 37 all-reduce rounds of one worker (plain SGD with momentum), in 37 x C. */
    const char *sets[] = { "workers=1", "workload.lr=0.0385", "workload.momentum=0.9",
                           "stop={\"iterations\": 37}", NULL };
    outputs a = dpt_run(dpt_zero_json, sets, 4);
    sets[4] = "protocol={\"name\": \"allreduce\"}";
    outputs b = dpt_run(dpt_zero_json, sets, 5);
    char x[17], y[17];
    first_checksum(&a, x);
    first_checksum(&b, y);
    ck_assert_str_eq(x, y);
    ck_assert_int_eq(a.sum.sim_ns, 37 * 10000000);
    ck_assert_double_eq(dpt_report(&a, "mixes"), 37);
    ck_assert_double_eq(dpt_report(&a, "models_sent"), 0);
    dpt_outputs_free(&a);
    dpt_outputs_free(&b);
}
END_TEST

START_TEST(a_fourfold_straggler_slows_everyone_about_fourfold)
{
    /* 16 workers on a ring, 10 ms of compute, messages of 0.26 ms: alone, every worker
     * finishes an iteration every 10 ms, 800 each in 8.005 s. With worker 5 four times slower
     * it finishes 200 (one per 40 ms), and a worker at distance d from it at most 200 + d, so
     * the total lies in [3200, 3200 + sum of distances = 3264]: the throughput falls by a
     * factor in [12800 / 3264, 4] = [3.92, 4]. */
    static const char json[] =
        "tests/scenarios/dpsgd/a_fourfold_straggler_slows_everyone_about_fourfold.json";
    outputs fast = dpt_run(json, NULL, 0);
    const char *sets[] = {
        "stragglers=[{\"kind\": \"fixed\", \"workers\": [5], \"slowdown\": 4}]"
    };
    outputs slow = dpt_run(json, sets, 1);
    ck_assert_uint_eq(fast.sum.iterations, 12800);
    double ratio = (double)fast.sum.iterations / (double)slow.sum.iterations;
    ck_assert_double_ge(ratio, 12800.0 / 3264.0);
    ck_assert_double_le(ratio, 4.0);
    unsigned long it[16];
    ck_assert_uint_eq(dpt_iterations(&slow, it, 16), 16);
    unsigned d[MAX_N][MAX_N];
    distances("ring", 16, 1, d);
    for (unsigned w = 0; w < 16; w++) {
        ck_assert_uint_ge(it[w], 200);
        ck_assert_uint_le(it[w], 200 + d[5][w]);
    }
    ck_assert_uint_eq(it[5], 200);
    dpt_outputs_free(&fast);
    dpt_outputs_free(&slow);
}
END_TEST

/* ---- averaging with zero gradients ---- */

typedef struct zero_case {
    const char *graph, *weights;
    unsigned n, rows, max_degree;
    long long rate_from; /* iteration from which to measure the asymptotic rate, or 0 */
} zero_case;

/* The rate is measured where the other modes' share has become negligible and the consensus
 * still stands far above rounding noise: from iteration 38 on the ring, whose next mode
 * decays by (0.805 / 0.949)^2 per iteration, to below 4e-6 of the consensus; from 5 on the
 * star, whose other eigenvalue is 0. The other graphs mix too fast to measure a rate. */
static const zero_case zero_cases[] = {
    { "ring", "metropolis", 16, 1, 2, 38 },       /* lambda_2^2 = 0.901 */
    { "torus", "uniform", 12, 3, 4, 0 },          /* 3 x 4: 0.36 */
    { "exponential", "metropolis", 12, 1, 6, 0 }, /* 9/49 */
    { "star", "metropolis", 7, 1, 6, 5 },         /* irregular, weights 1/7: 36/49 */
    { "complete", "uniform", 5, 1, 4, 0 },        /* 0 */
};

static observer *run_zero(const zero_case *c, outputs *o)
{
    char workers[32], graph[48], weights[48];
    snprintf(workers, sizeof(workers), "workers=%u", c->n);
    snprintf(graph, sizeof(graph), "protocol.graph=%s", c->graph);
    snprintf(weights, sizeof(weights), "protocol.weights=%s", c->weights);
    const char *sets[] = { workers, graph, weights };
    observer *obs = calloc(1, sizeof(*obs));
    *o = dpt_run_with(dpt_zero_json, sets, 3, dpt_observe, obs);
    ck_assert_uint_ge(obs->n, 44); /* t = 0, 13.7 ms, ..., 589.3 ms, and the end */
    ck_assert_uint_eq(obs->p, 27);
    ck_assert_double_gt(obs->consensus[0], 0.01); /* independent initial models */
    return obs;
}

/* Bound on one iteration's rounding, per element. A worker of degree d rounds d products
 * and d-1 sums into its accumulator, then one product and one sum with its own model: 2d+1
 * roundings, each of at most U times a partial sum no larger than M = max |x| (the weights
 * are nonnegative and sum to 1). The float weights are exactly symmetric (one formula for
 * both ends) and each row sums to 1 within the rounding of W_ii, U/2: so the mean moves by
 * at most (2d + 2) U M per iteration. */
static double per_iteration(const zero_case *c, const observer *obs)
{
    return (2.0 * c->max_degree + 2.0) * U * obs->max_abs;
}

START_TEST(zero_gradients_keep_the_mean_over_workers)
{
    for (size_t c = 0; c < sizeof(zero_cases) / sizeof(zero_cases[0]); c++) {
        outputs o;
        observer *obs = run_zero(&zero_cases[c], &o);
        double e = per_iteration(&zero_cases[c], obs);
        for (size_t k = 1; k < obs->n; k++) {
            double iters = (double)(obs->t_ns[k] / 10000000); /* lockstep: see zero_json */
            ck_assert_msg(dpt_mean_drift(obs, k, 0) <= iters * e,
                          "%s: the mean moved by %g after %g iterations (bound %g)",
                          zero_cases[c].graph, dpt_mean_drift(obs, k, 0), iters, iters * e);
        }
        /* Not vacuous: the models did mix. */
        ck_assert_double_lt(obs->consensus[obs->n - 1], 0.5 * obs->consensus[0]);
        ck_assert_double_eq(dpt_report(&o, "max_neighbour_gap"), 1);
        free(obs);
        dpt_outputs_free(&o);
    }
}
END_TEST

START_TEST(zero_gradients_shrink_the_consensus_by_lambda2_squared_per_iteration)
{
    /* The ring's W has eigenvalues 1/3 + 2/3 cos(2 pi m / N); the eigenvalues of the other
     * graphs' W are computed here with GSL from their definitions (Metropolis and uniform
     * weights coincide on regular graphs). */
    double l2_ring = 0.0;
    for (unsigned m = 1; m < 16; m++)
        l2_ring = fmax(l2_ring, fabs(1.0 / 3.0 + 2.0 / 3.0 * cos(2.0 * acos(-1.0) * m / 16.0)));
    ck_assert_double_eq_tol(lambda2("ring", 16, 1), l2_ring, 1e-12);
    for (size_t c = 0; c < sizeof(zero_cases) / sizeof(zero_cases[0]); c++) {
        const zero_case *zc = &zero_cases[c];
        double l2 = lambda2(zc->graph, zc->n, zc->rows);
        outputs o;
        observer *obs = run_zero(zc, &o);
        /* With X' = W X + F, |F| <= e elementwise (per_iteration), and the consensus
         * D = ||(I - J) X||^2 / N: sqrt(D') <= lambda_2 sqrt(D) + sqrt(P) e; over k
         * iterations, sqrt(D_k) <= lambda_2^k sqrt(D_0) + k sqrt(P) e. */
        double e = sqrt((double)obs->p) * per_iteration(zc, obs);
        for (size_t k = 1; k < obs->n; k++) {
            long long dk = obs->t_ns[k] / 10000000 - obs->t_ns[k - 1] / 10000000;
            double bound = pow(l2, (double)dk) * sqrt(obs->consensus[k - 1]) + (double)dk * e;
            ck_assert_msg(sqrt(obs->consensus[k]) <= bound, "%s at %g s: %.17g > %.17g", zc->graph,
                          obs->t[k], sqrt(obs->consensus[k]), bound);
        }
        /* And the bound is tight: over 20 iterations from rate_from the rate is lambda_2^2
         * per iteration. Rounding has moved sqrt(D) by at most K e after K iterations; with
         * sqrt(D) above 100 times that, D is off by at most 2% at either end and the rate
         * over 20 iterations by at most 0.1%: hence 1e-3 (wrong weights, such as 1/2 and
         * 1/4 on the ring, would give 0.925 instead of 0.901). */
        if (zc->rate_from > 0) {
            size_t b = 0, a;
            while (obs->t_ns[b] / 10000000 < zc->rate_from)
                b++;
            long long kb = obs->t_ns[b] / 10000000, ka = kb;
            for (a = b; a + 1 < obs->n && ka < kb + 20; a++)
                ka = obs->t_ns[a + 1] / 10000000;
            ck_assert_int_ge(ka - kb, 20);
            ck_assert_double_gt(sqrt(obs->consensus[a]), 100.0 * (double)ka * e);
            double rate = pow(obs->consensus[a] / obs->consensus[b], 1.0 / (double)(ka - kb));
            ck_assert_msg(fabs(rate - l2 * l2) < 1e-3, "%s: rate %.9g, lambda_2^2 %.9g", zc->graph,
                          rate, l2 * l2);
        }
        free(obs);
        dpt_outputs_free(&o);
    }
}
END_TEST

START_TEST(neighbours_differ_by_one_iteration_and_workers_by_their_distance)
{
    /* Random speeds, jitter and random slowdowns; the workers' finished iterations at the end
     * of runs stopped at three times must differ by at most their graph distance, and the
     * protocol's own check of every joined edge at every start must have seen gaps of 1. */
    static const struct {
        const char *graph;
        unsigned n, rows;
    } cases[] = {
        { "ring", 12, 1 }, { "torus", 12, 3 },   { "exponential", 12, 1 },
        { "star", 9, 1 },  { "complete", 6, 1 }, { "torus", 16, 4 },
    };
    static const char json[] =
        "tests/scenarios/dpsgd/"
        "neighbours_differ_by_one_iteration_and_workers_by_their_distance.json";
    static const char *const stops[] = { "stop.time_s=0.3137", "stop.time_s=0.7771",
                                         "stop.time_s=1.5093" };
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 2385);
    for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
        unsigned n = cases[c].n;
        char workers[32], graph[48], speeds[512] = "compute.speeds=[";
        snprintf(workers, sizeof(workers), "workers=%u", n);
        snprintf(graph, sizeof(graph), "protocol.graph=%s", cases[c].graph);
        for (unsigned w = 0; w < n; w++) {
            size_t used = strlen(speeds);
            snprintf(speeds + used, sizeof(speeds) - used, "%s%.3f", w > 0 ? ", " : "",
                     0.4 + 2.1 * gsl_rng_uniform(r));
        }
        strcat(speeds, "]");
        unsigned d[MAX_N][MAX_N];
        distances(cases[c].graph, n, cases[c].rows, d);
        for (size_t s = 0; s < 3; s++) {
            const char *sets[] = { workers, graph, speeds, stops[s] };
            outputs o = dpt_run(json, sets, 4);
            unsigned long it[MAX_N];
            ck_assert_uint_eq(dpt_iterations(&o, it, MAX_N), n);
            for (unsigned i = 0; i < n; i++) {
                ck_assert_uint_gt(it[i], 0);
                for (unsigned j = 0; j < n; j++)
                    ck_assert_msg(it[i] <= it[j] + d[i][j], "%s: worker %u at %lu, %u at %lu",
                                  cases[c].graph, i, it[i], j, it[j]);
            }
            ck_assert_double_eq(dpt_report(&o, "max_neighbour_gap"), 1);
            ck_assert_double_eq(dpt_report(&o, "deferred_sends"), 0);
            dpt_outputs_free(&o);
        }
    }
    gsl_rng_free(r);
}
END_TEST

Suite *test_suite(void)
{
    Suite *s = suite_create("dpsgd");
    TCase *tc = tcase_create("parameters");
    tcase_add_test(tc, bad_parameters_are_rejected_naming_the_key_and_the_reason);
    tcase_add_test(tc, graphs_have_the_documented_edges);
    tcase_add_test(tc, the_example_scenarios_validate_and_the_consensus_one_contracts);
    tcase_set_timeout(tc, 120);
    suite_add_tcase(s, tc);
    tc = tcase_create("timing");
    tcase_add_test(tc, a_ring_iteration_is_two_flows_sharing_each_uplink);
    tcase_add_test(tc, iteration_times_follow_the_degree_of_each_graph);
    tcase_add_test(tc, compute_bound_iterations_overlap_the_messages);
    tcase_add_test(tc, one_worker_is_plain_sgd_bit_for_bit);
    tcase_add_test(tc, a_fourfold_straggler_slows_everyone_about_fourfold);
    tcase_set_timeout(tc, 120);
    suite_add_tcase(s, tc);
    tc = tcase_create("averaging");
    tcase_add_test(tc, zero_gradients_keep_the_mean_over_workers);
    tcase_add_test(tc, zero_gradients_shrink_the_consensus_by_lambda2_squared_per_iteration);
    tcase_add_test(tc, neighbours_differ_by_one_iteration_and_workers_by_their_distance);
    tcase_set_timeout(tc, 120);
    suite_add_tcase(s, tc);
    return s;
}
