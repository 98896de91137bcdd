/* Hop end to end (PROTOCOLS §3.6): the protocol checks the gap bounds, the backup count and
 * the staleness bound at every event and counts violations in protocol_report; a randomized
 * stress over 240 configurations (graphs, backup workers, staleness, token windows,
 * skipping, late-update policies, queue sizes, random and fixed slowdowns, failures) asserts
 * none, that the checks ran, and that no up worker stalls (the observe hook watches every
 * worker's iteration count); check_tighten shows that each check can fire. With zero
 * gradients on a regular graph and b = 0 the mean of the models is kept; a slow worker
 * skips; a failed in-neighbour is a backup and rejoins; runs are deterministic. Runs use the
 * timing-only model or a 27-parameter softmax, so the suite takes a few seconds. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>
#include <gsl/gsl_rng.h>

#include "harness.h"
#include "runtime/ctx.h"
#include "runtime/run.h"
#include "scenario/scenario.h"

/* Float unit roundoff. */
static const double U = 0x1p-24;

static const char timing_json[] =
    "{\"seed\": 2385, \"workers\": 8, \"compute\": {\"iteration_ms\": 10},"
    " \"network\": {\"bandwidth_gbps\": 10, \"latency_us\": 50},"
    " \"workload\": {\"model\": {\"name\": \"none\"}, \"message_bytes\": 1000000},"
    " \"protocol\": {\"name\": \"hop\"}, \"stop\": {\"time_s\": 1}}";

/* Real tensors, zero gradients, no jitter: every worker finishes iteration k at about
 * (k + 1) * 10.1 ms; evaluations every 13.7 ms fall between iterations. */
static const char zero_json[] =
    "{\"seed\": 4127, \"workers\": 16, \"compute\": {\"iteration_ms\": 10},"
    " \"network\": {\"bandwidth_gbps\": 10, \"latency_us\": 50},"
    " \"workload\": {\"dataset\": {\"name\": \"synthetic\", \"samples\": 960,"
    " \"test_samples\": 100, \"dim\": 8, \"classes\": 3, \"separation\": 3},"
    " \"model\": {\"name\": \"softmax\"}, \"init\": \"independent\", \"batch\": 8, \"lr\": 0},"
    " \"protocol\": {\"name\": \"hop\", \"backup_workers\": 0}, \"stop\": {\"time_s\": 0.6005},"
    " \"eval\": {\"every_s\": 0.0137, \"samples\": 100}}";

enum {
    MAX_W = HARNESS_OBS_WORKERS
};

/* Every evaluation's models (harness_observe_models: sums, consensus, largest |x|), and each
 * worker's iterations and whether it was down then. */
typedef struct observer {
    harness_models m;
    unsigned long long iters[HARNESS_OBS_MAX][MAX_W];
    int down[HARNESS_OBS_MAX][MAX_W];
} observer;

static void observe(void *ud, struct sim_ctx *ctx)
{
    observer *o = ud;
    size_t k = o->m.n;
    harness_observe_models(&o->m, ctx);
    if (o->m.n == k) /* no room left */
        return;
    for (uint32_t w = 0; w < o->m.w; w++) {
        o->iters[k][w] = sim_ctx_count(ctx, w, 0);
        o->down[k][w] = sim_ctx_down(ctx, w) ? 1 : 0;
    }
}

typedef struct outputs {
    sim_run_summary sum;
    char *dir;
} outputs;

static outputs run_obs(const char *json, const char *const *sets, size_t n, observer *obs)
{
    sim_scenario *sc = harness_load(json, "hop.json", sets, n);
    outputs o = { .dir = harness_tmpdir("hop") };
    o.sum = harness_run(sc, o.dir, obs != NULL ? observe : NULL, obs);
    sim_scenario_destroy(sc);
    return o;
}

static double rep(const outputs *o, const char *key)
{
    return harness_summary_number(o->dir, key);
}

static double violations(const outputs *o)
{
    return rep(o, "violations_gap") + rep(o, "violations_distance") + rep(o, "violations_need") +
           rep(o, "violations_staleness");
}

/* ---- parameters ---- */

START_TEST(bad_parameters_are_rejected_naming_the_key)
{
    const char *b[] = { "protocol.backup_workers=2" };
    harness_expect_rejected(timing_json, "hop.json", b, 1, "$.protocol.backup_workers",
                            "must be at most the in-degree - 1 (1) of \"ring\", got 2");
    const char *g[] = { "protocol.graph=\"star\"" };
    harness_expect_rejected(timing_json, "hop.json", g, 1, "$.protocol.graph",
                            "must be one of ring, double_ring, exponential, torus, complete, "
                            "directed_ring, directed_double_ring, directed_exponential, "
                            "directed_torus, got \"star\"");
    const char *l[] = { "protocol.late_updates=\"oldest\"" };
    harness_expect_rejected(timing_json, "hop.json", l, 1, "$.protocol.late_updates",
                            "must be one of newest, drop, got \"oldest\"");
    /* b = in-degree - 1 is fine: 3 on the double ring. */
    const char *ok[] = { "protocol.graph=\"double_ring\"", "protocol.backup_workers=3" };
    sim_scenario *sc = harness_load(timing_json, "hop.json", ok, 2);
    sim_scenario_destroy(sc);
}
END_TEST

/* ---- the stress ---- */

/* Configuration `c` of the stress, drawn from its own stream. */
static char *stress_json(unsigned c, bool *failures)
{
    static const char *const graphs[] = {
        "ring",          "double_ring",          "exponential",          "torus",
        "directed_ring", "directed_double_ring", "directed_exponential", "directed_torus",
        "complete"
    };
    static const unsigned in_deg8[] = { 2, 4, 5, 3, 1, 2, 3, 2, 7 }; /* on 8 workers */
    static const unsigned gaps[] = { 0, 1, 2, 4 };
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 1009 + c);
    unsigned gi = c % 9, deg = in_deg8[gi];
    unsigned b = (unsigned)gsl_rng_uniform_int(r, deg);
    unsigned s = (unsigned)gsl_rng_uniform_int(r, 3);
    unsigned gap = gaps[gsl_rng_uniform_int(r, 4)];
    /* A quarter of the configurations are the standard algorithm, the distance check's. */
    if (c % 4 == 0)
        b = s = gap = 0;
    bool skip = gsl_rng_uniform(r) < 0.5;
    unsigned max_skip = (unsigned)gsl_rng_uniform_int(r, 4);
    unsigned q = 1 + (unsigned)gsl_rng_uniform_int(r, 3);
    const char *late = gsl_rng_uniform(r) < 0.5 ? "newest" : "drop";
    size_t size = 4096, used = 0;
    char *js = calloc(size, 1);
    used += (size_t)snprintf(js + used, size - used,
                             "{\"seed\": %u, \"workers\": 8, \"compute\": {\"iteration_ms\": 10,"
                             " \"jitter_sigma\": %.2f}, \"stragglers\": [{\"kind\": \"random\","
                             " \"probability\": 0.1, \"slowdown\": 4}",
                             100 + c, 0.3 * gsl_rng_uniform(r));
    if (gsl_rng_uniform(r) < 0.5)
        used += (size_t)snprintf(js + used, size - used,
                                 ", {\"kind\": \"fixed\", \"workers\": [%lu], \"slowdown\": 5}",
                                 gsl_rng_uniform_int(r, 8));
    *failures = c % 3 == 1;
    if (*failures)
        for (int f = 0; f < 3; f++) {
            double at = 0.4 * gsl_rng_uniform(r);
            used += (size_t)snprintf(js + used, size - used,
                                     ", {\"kind\": \"failure\", \"workers\": [%lu], \"at_s\": %.4f",
                                     gsl_rng_uniform_int(r, 8), at);
            if (gsl_rng_uniform(r) < 0.8)
                used += (size_t)snprintf(js + used, size - used, ", \"recover_s\": %.4f",
                                         at + 0.005 + 0.2 * gsl_rng_uniform(r));
            used += (size_t)snprintf(js + used, size - used, "}");
        }
    used += (size_t)snprintf(
        js + used, size - used,
        "], \"network\": {\"bandwidth_gbps\": 10, \"latency_us\": 50},"
        " \"workload\": {\"model\": {\"name\": \"none\"}, \"message_bytes\": 1000000},"
        " \"protocol\": {\"name\": \"hop\", \"graph\": \"%s\", \"backup_workers\": %u,"
        " \"staleness\": %u, \"max_iteration_gap\": %u, \"skip\": %s, \"max_skip\": %u,"
        " \"late_updates\": \"%s\", \"queue_capacity\": %u}, \"stop\": {\"time_s\": 1},"
        " \"eval\": {\"every_s\": 0.1}}",
        graphs[gi], b, s, gap, skip ? "true" : "false", max_skip, late, q);
    ck_assert_uint_lt(used, size);
    gsl_rng_free(r);
    return js;
}

START_TEST(every_property_holds_at_every_event_over_240_configurations)
{
    double checks = 0, skipped = 0, rejoins = 0, degraded = 0, dist_checks = 0;
    for (unsigned c = 0; c < 240; c++) {
        bool failures;
        char *js = stress_json(c, &failures);
        observer *obs = calloc(1, sizeof(*obs));
        outputs o = run_obs(js, NULL, 0, obs);
        ck_assert_msg(strcmp(o.sum.stop_reason, "time") == 0, "config %u: stopped by %s\n%s", c,
                      o.sum.stop_reason, js);
        ck_assert_msg(violations(&o) == 0,
                      "config %u: violations gap %g distance %g need %g staleness %g\n%s", c,
                      rep(&o, "violations_gap"), rep(&o, "violations_distance"),
                      rep(&o, "violations_need"), rep(&o, "violations_staleness"), js);
        ck_assert_double_gt(rep(&o, "checks"), 100);
        /* No stall: failures are over by 0.6 s; between 0.7 s and the end some worker
         * finished iterations, and every worker up from 0.7 s on did. Except on directed
         * graphs after failures: there a worker whose upstream was down ran ahead of it
         * (nothing held it back) and may rightly wait longer than that for it. */
        size_t a = 7, z = obs->m.n - 1;
        ck_assert_uint_ge(obs->m.n, 11);
        ck_assert_int_eq(obs->m.t_ns[a], 700000000);
        bool moved = false, directed = strstr(js, "\"directed_") != NULL;
        for (unsigned w = 0; w < 8; w++) {
            if (obs->down[a][w] || obs->down[z][w])
                continue;
            moved = moved || obs->iters[z][w] > obs->iters[a][w];
            if (!(failures && directed))
                ck_assert_msg(obs->iters[z][w] > obs->iters[a][w],
                              "config %u: worker %u stuck at %llu iterations\n%s", c, w,
                              obs->iters[z][w], js);
        }
        ck_assert_msg(moved, "config %u: nobody moved\n%s", c, js);
        checks += rep(&o, "checks");
        skipped += rep(&o, "skipped_iterations");
        rejoins += rep(&o, "rejoins");
        degraded += rep(&o, "degraded_averagings");
        if (c % 4 == 0 && !failures)
            dist_checks++;
        harness_cleanup(o.dir);
        free(obs);
        free(js);
    }
    /* Every path was exercised. */
    ck_assert_double_gt(skipped, 100);
    ck_assert_double_gt(rejoins, 50);
    ck_assert_double_gt(degraded, 50);
    ck_assert_double_gt(dist_checks, 30);
    ck_assert_double_gt(checks, 1e5);
}
END_TEST

/* With check_tighten every bound is one tighter: runs that reach the bounds must report
 * violations of each kind, so the checks are not vacuous. */
START_TEST(each_check_fires_when_its_bound_is_tightened)
{
    const char *std[] = {
        "protocol.backup_workers=0", "protocol.max_iteration_gap=0", "protocol.check_tighten=true",
        "stragglers=[{\"kind\": \"random\", \"probability\": 0.2, \"slowdown\": 4}]"
    };
    outputs a = run_obs(timing_json, std, 4, NULL);
    ck_assert_double_gt(rep(&a, "violations_distance"), 0);
    ck_assert_double_gt(rep(&a, "violations_gap"), 0);
    ck_assert_double_gt(rep(&a, "violations_need"), 0);
    ck_assert_double_gt(rep(&a, "violations_staleness"), 0);
    harness_cleanup(a.dir);
    /* Tokens: with a 2-iteration window and b = 1 the gap reaches 2. */
    const char *tok[] = {
        "protocol.max_iteration_gap=2", "protocol.check_tighten=true",
        "stragglers=[{\"kind\": \"random\", \"probability\": 0.2, \"slowdown\": 4}]"
    };
    outputs b = run_obs(timing_json, tok, 3, NULL);
    ck_assert_double_gt(rep(&b, "violations_gap"), 0);
    ck_assert_double_eq(rep(&b, "max_gap_observed"), 2);
    harness_cleanup(b.dir);
}
END_TEST

/* ---- averaging ---- */

START_TEST(zero_gradients_on_regular_graphs_with_b_0_keep_the_mean)
{
    static const char *const graphs[] = { "protocol.graph=\"ring\"",
                                          "protocol.graph=\"double_ring\"",
                                          "protocol.graph=\"exponential\"" };
    static const double terms[] = { 3, 5, 8 };
    for (size_t g = 0; g < 3; g++) {
        observer *obs = calloc(1, sizeof(*obs));
        const char *sets[] = { graphs[g] };
        outputs o = run_obs(zero_json, sets, 1, obs);
        ck_assert_uint_ge(obs->m.n, 40);
        for (size_t k = 1; k < obs->m.n; k++) {
            /* Each averaging of c terms errs by at most c U max|x| per element (c - 1 float
             * sums and a division); 16 workers per iteration. */
            double iters = ceil((double)obs->m.t_ns[k] / 1.0e7);
            double tol = iters * 16 * terms[g] * U * obs->m.max_abs;
            for (size_t i = 0; i < obs->m.p; i++)
                ck_assert_msg(fabs(obs->m.sum[k][i] - obs->m.sum[0][i]) <= tol,
                              "%s t %lld param %zu: %.9g vs %.9g", graphs[g], obs->m.t_ns[k], i,
                              obs->m.sum[k][i], obs->m.sum[0][i]);
        }
        ck_assert_double_lt(obs->m.consensus[obs->m.n - 1], 0.01 * obs->m.consensus[0]);
        ck_assert_double_eq(violations(&o), 0);
        ck_assert_double_eq(rep(&o, "updates_used_min"), terms[g] - 1);
        harness_cleanup(o.dir);
        free(obs);
    }
}
END_TEST

START_TEST(with_backup_workers_the_mean_moves_and_the_count_is_kept)
{
    /* Not doubly stochastic with b > 0 (PROTOCOLS §3.6 note), under jitter: every averaging
     * still uses at least |N_in| - b = 1 model. */
    const char *sets[] = { "protocol.backup_workers=1", "compute.jitter_sigma=0.3" };
    observer *obs = calloc(1, sizeof(*obs));
    outputs o = run_obs(zero_json, sets, 2, obs);
    ck_assert_double_ge(rep(&o, "updates_used_min"), 1);
    ck_assert_double_lt(rep(&o, "updates_used_mean"), 2);
    ck_assert_double_eq(violations(&o), 0);
    harness_cleanup(o.dir);
    free(obs);
}
END_TEST

/* ---- skipping and failures ---- */

START_TEST(a_slow_worker_skips_and_the_others_do_not)
{
    const char *sets[] = {
        "protocol.skip=true",
        "stragglers=[{\"kind\": \"fixed\", \"workers\": [3], \"slowdown\": 5}]"
    };
    outputs o = run_obs(timing_json, sets, 2, NULL);
    ck_assert_double_gt(rep(&o, "skipped_w3"), 20);
    ck_assert_double_eq(rep(&o, "skipped_w3"), rep(&o, "skipped_iterations"));
    ck_assert_double_le(rep(&o, "max_gap_observed"), 4);
    ck_assert_double_eq(violations(&o), 0);
    /* Without skipping, the same run makes fewer iterations in all. */
    const char *off[] = { "protocol.skip=false",
                          "stragglers=[{\"kind\": \"fixed\", \"workers\": [3], \"slowdown\": 5}]" };
    outputs p = run_obs(timing_json, off, 2, NULL);
    ck_assert_double_eq(rep(&p, "skipped_iterations"), 0);
    ck_assert_uint_gt(o.sum.iterations, p.sum.iterations);
    harness_cleanup(o.dir);
    harness_cleanup(p.dir);
}
END_TEST

START_TEST(a_failed_in_neighbour_is_a_backup_and_rejoins)
{
    /* b = 0: while worker 2 is down (0.2 .. 0.5 s) its neighbours 1 and 3 average with one
     * model instead of two and the ring keeps going; it rejoins once. */
    const char *sets[] = { "protocol.backup_workers=0",
                           ("stragglers=[{\"kind\": \"failure\", \"workers\": [2], \"at_s\": 0.2,"
                            " \"recover_s\": 0.5}]"),
                           "eval.every_s=0.1" };
    observer *obs = calloc(1, sizeof(*obs));
    outputs o = run_obs(timing_json, sets, 3, obs);
    ck_assert_str_eq(o.sum.stop_reason, "time");
    ck_assert_double_eq(rep(&o, "rejoins"), 1);
    ck_assert_double_gt(rep(&o, "degraded_averagings"), 40);
    ck_assert_double_eq(rep(&o, "updates_used_min"), 1);
    ck_assert_double_eq(violations(&o), 0);
    /* The others progressed while it was down; it progressed after. */
    ck_assert_uint_gt(obs->iters[4][1], obs->iters[2][1] + 15);
    ck_assert_uint_eq(obs->iters[4][2], obs->iters[2][2]);
    ck_assert_uint_gt(obs->iters[9][2], obs->iters[6][2] + 15);
    harness_cleanup(o.dir);
    free(obs);
}
END_TEST

START_TEST(tokens_of_a_down_in_neighbour_are_not_waited_for)
{
    /* Directed ring, b = 0, a 2-token window: worker 3's only in-neighbour, 2, fails for good
     * at 0.2 s. Without "a down in-neighbour is a backup" 3 would wait for 2's tokens and
     * updates forever, and the whole ring behind it. Instead 3 runs on alone (plain SGD), the
     * others follow it, and the token bound holds on every live edge. */
    const char *sets[] = { "protocol.graph=\"directed_ring\"", "protocol.backup_workers=0",
                           "protocol.max_iteration_gap=2",
                           "stragglers=[{\"kind\": \"failure\", \"workers\": [2], \"at_s\": 0.2}]",
                           "eval.every_s=0.1" };
    observer *obs = calloc(1, sizeof(*obs));
    outputs o = run_obs(timing_json, sets, 5, obs);
    ck_assert_str_eq(o.sum.stop_reason, "time");
    ck_assert_double_eq(violations(&o), 0);
    ck_assert_double_le(rep(&o, "max_gap_observed"), 2);
    ck_assert_double_gt(rep(&o, "tokens_sent"), 0);
    size_t z = obs->m.n - 1;
    for (unsigned w = 0; w < 8; w++)
        if (w != 2)
            ck_assert_uint_gt(obs->iters[z][w], obs->iters[3][w] + 40);
    harness_cleanup(o.dir);
    free(obs);
}
END_TEST

START_TEST(runs_are_deterministic)
{
    bool f;
    char *js = stress_json(7, &f);
    outputs a = run_obs(js, NULL, 0, NULL), b = run_obs(js, NULL, 0, NULL);
    char *sa = harness_slurp(a.dir, "summary.json"), *sb = harness_slurp(b.dir, "summary.json");
    char *wa = harness_slurp(a.dir, "workers.csv"), *wb = harness_slurp(b.dir, "workers.csv");
    harness_strip_wall(sa);
    harness_strip_wall(sb);
    ck_assert_str_eq(sa, sb);
    ck_assert_str_eq(wa, wb);
    free(sa);
    free(sb);
    free(wa);
    free(wb);
    harness_cleanup(a.dir);
    harness_cleanup(b.dir);
    free(js);
}
END_TEST

START_TEST(the_default_is_the_papers_configuration_bit_for_bit)
{
    /* {"name": "hop"} resolves to the Hop paper's configuration (PROTOCOLS 3.2-3.3: b = 1,
     * s = 0, token window 4, skipping on with max_skip = 4), and a run with a
     * deterministic straggler (real tensors) is, output for output, the run with those
     * values written out (the resolved section, in its order). */
    static const char real_json[] =
        "{\"seed\": 31, \"workers\": 8, \"compute\": {\"iteration_ms\": 10,"
        " \"jitter_sigma\": 0.05}, \"stragglers\": [{\"kind\": \"fixed\", \"workers\": [3],"
        " \"slowdown\": 5}], \"network\": {\"bandwidth_gbps\": 10, \"latency_us\": 50},"
        " \"workload\": {\"dataset\": {\"name\": \"synthetic\", \"samples\": 960,"
        " \"test_samples\": 100, \"dim\": 8, \"classes\": 3, \"separation\": 3},"
        " \"model\": {\"name\": \"softmax\"}, \"batch\": 8, \"lr\": 0.05},"
        " \"protocol\": {\"name\": \"hop\"}, \"stop\": {\"time_s\": 0.5},"
        " \"eval\": {\"every_s\": 0.1, \"samples\": 100}}";
    static const char paper[] =
        "{\"name\":\"hop\",\"graph\":\"ring\",\"backup_workers\":1,\"staleness\":0,"
        "\"max_iteration_gap\":4,\"skip\":true,\"max_skip\":4,\"late_updates\":\"newest\","
        "\"queue_capacity\":2,\"check_tighten\":false}";
    sim_scenario *sc = harness_load(real_json, "hop.json", NULL, 0);
    char *text = sim_scenario_resolved(sc, false);
    char want[512];
    snprintf(want, sizeof(want), "\"protocol\":%s", paper);
    ck_assert_msg(strstr(text, want) != NULL, "%s", text);
    free(text);
    char *a = harness_tmpdir("hop");
    harness_run(sc, a, NULL, NULL);
    sim_scenario_destroy(sc);
    char set[512];
    snprintf(set, sizeof(set), "protocol=%s", paper);
    const char *sets[] = { set };
    sc = harness_load(real_json, "hop.json", sets, 1);
    char *b = harness_tmpdir("hop");
    harness_run(sc, b, NULL, NULL);
    sim_scenario_destroy(sc);
    ck_assert_double_gt(harness_summary_number(a, "skipped_w3"), 0);
    harness_expect_same_outputs(a, b);
    harness_cleanup(a);
    harness_cleanup(b);
}
END_TEST

START_TEST(the_example_scenario_validates)
{
    sim_scenario *sc = harness_load_file("scenarios/hop.json", NULL, 0);
    sim_scenario_destroy(sc);
}
END_TEST

Suite *test_suite(void)
{
    Suite *s = suite_create("hop");
    TCase *tc = tcase_create("hop");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, bad_parameters_are_rejected_naming_the_key);
    tcase_add_test(tc, every_property_holds_at_every_event_over_240_configurations);
    tcase_add_test(tc, each_check_fires_when_its_bound_is_tightened);
    tcase_add_test(tc, zero_gradients_on_regular_graphs_with_b_0_keep_the_mean);
    tcase_add_test(tc, with_backup_workers_the_mean_moves_and_the_count_is_kept);
    tcase_add_test(tc, a_slow_worker_skips_and_the_others_do_not);
    tcase_add_test(tc, a_failed_in_neighbour_is_a_backup_and_rejoins);
    tcase_add_test(tc, tokens_of_a_down_in_neighbour_are_not_waited_for);
    tcase_add_test(tc, runs_are_deterministic);
    tcase_add_test(tc, the_example_scenario_validates);
    tcase_add_test(tc, the_default_is_the_papers_configuration_bit_for_bit);
    suite_add_tcase(s, tc);
    return s;
}
