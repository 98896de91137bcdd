/* Moshpit (PROTOCOLS 5.7) on averaging-only runs (model "vector", DESIGN 6b): the exact
 * global mean after d rounds of a perfect grid, the sum kept by every round whatever sits
 * out, equal members after a group round, random groups, and no stall after a failure. The
 * training default's rounds beside the local steps: tests/test_moshpit_overlap.c. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>
#include <gsl/gsl_rng.h>

#include "harness.h"
#include "protocols/moshpit_state.h"
#include "runtime/ctx.h"
#include "runtime/run.h"
#include "scenario/scenario.h"

extern const proto_ops proto_moshpit;

enum {
    MAX_W = 1024,
    MAX_P = 3
};

typedef struct observer {
    size_t calls, n, p;
    double repeat_pairs; /* key form: pairs grouped again in the next round */
    bool keys;           /* key form: observe the keys' digits */
    uint32_t top_digit;  /* key form: the largest key digit observed */
    double first_sum[MAX_P], last_sum[MAX_P];
    float first[MAX_W][MAX_P], last[MAX_W][MAX_P];
    uint64_t iters[MAX_W]; /* iterations of each worker at the last observation */
} observer;

static void observe(void *ud, struct sim_ctx *ctx)
{
    observer *o = ud;
    o->n = harness_workers_within(ctx, MAX_W);
    o->p = harness_params_within(ctx, MAX_P);
    double sum[MAX_P] = { 0 };
    for (uint32_t w = 0; o->keys && w < o->n; w++)
        for (size_t i = 0; i + 1 < MP_MAX_DIMS; i++)
            o->top_digit =
                mp_at(ctx, w)->key[i] > o->top_digit ? mp_at(ctx, w)->key[i] : o->top_digit;
    for (uint32_t w = 0; w < o->n; w++) {
        const float *x = sim_ctx_params(ctx, w);
        o->iters[w] = sim_ctx_count(ctx, w, 0);
        for (size_t i = 0; i < o->p; i++) {
            sum[i] += (double)x[i];
            if (o->calls == 0)
                o->first[w][i] = x[i];
            o->last[w][i] = x[i];
        }
    }
    for (size_t i = 0; i < o->p; i++) {
        if (o->calls == 0)
            o->first_sum[i] = sum[i];
        o->last_sum[i] = sum[i];
    }
    o->calls++;
}

/* Runs a vector scenario of n workers, dimension dim, with `protocol` (JSON) and `extra`
 * top-level keys, until `rounds` rounds; returns the summary's variance. */
static double run(observer *o, unsigned n, unsigned dim, const char *protocol, const char *extra,
                  unsigned rounds, const char *tag, char *reason, size_t reason_size)
{
    char json[1024];
    snprintf(json, sizeof(json),
             "{\"seed\": 2385, \"workers\": %u, \"compute\": {\"iteration_ms\": 1},"
             " \"network\": {\"bandwidth_gbps\": 1, \"latency_us\": 50},"
             " \"workload\": {\"model\": {\"name\": \"vector\", \"dim\": %u}, \"lr\": 0},"
             " \"protocol\": %s, %s \"stop\": {\"rounds\": %u, \"time_s\": 100},"
             " \"eval\": {\"every_s\": 10}}",
             n, dim, protocol, extra, rounds);
    sim_scenario *sc = harness_load(json, "moshpit.json", NULL, 0);
    char *dir = harness_tmpdir(tag);
    memset(o, 0, sizeof(*o));
    o->keys = strstr(protocol, "\"keys\"") != NULL;
    sim_run_summary s = harness_run(sc, dir, observe, o);
    if (reason != NULL)
        snprintf(reason, reason_size, "%s", s.stop_reason);
    double v = harness_summary_number(dir, "variance");
    o->repeat_pairs =
        strstr(protocol, "keys") != NULL ? harness_summary_number(dir, "repeat_pairs") : 0.0;
    ck_assert_double_eq(harness_summary_number(dir, "rounds"), rounds);
    harness_cleanup(dir);
    sim_scenario_destroy(sc);
    return v;
}

static void check_sum_kept(const observer *o);

/* Every worker's value equals worker 0's (exactly: the kit gives every member the same bits),
 * and the mean is the initial one to float rounding. */
static void check_exact_mean(const observer *o)
{
    for (size_t i = 0; i < o->p; i++) {
        for (size_t w = 1; w < o->n; w++)
            ck_assert(o->last[w][i] == o->last[0][i]);
        double mean0 = o->first_sum[i] / (double)o->n;
        /* Sums of n N(0,1) floats: rounding of 2 d mean steps, far below 1e-5. */
        ck_assert_double_eq_tol((double)o->last[0][i], mean0, 1e-5);
    }
}

START_TEST(perfect_grid_32x32_gives_the_exact_mean_after_two_rounds)
{
    observer *o = calloc(1, sizeof(*o));
    const char *p = "{\"name\": \"moshpit\", \"grid\": [32, 32], \"local_steps\": 0}";
    double v1 = run(o, 1024, 1, p, "", 1, "mp-32a", NULL, 0);
    ck_assert_double_gt(v1, 1e-3); /* one axis is not enough */
    double v2 = run(o, 1024, 1, p, "", 2, "mp-32b", NULL, 0);
    ck_assert_double_eq(v2, 0.0);
    check_exact_mean(o);
    free(o);
}
END_TEST

START_TEST(key_form_on_a_perfect_grid_gives_the_exact_mean_after_d_rounds)
{
    observer *o = calloc(1, sizeof(*o));
    const char *p2 = "{\"name\": \"moshpit\", \"grid\": [32, 32], \"form\": \"keys\","
                     " \"matchmaking_ms\": 5, \"local_steps\": 0}";
    ck_assert_double_gt(run(o, 1024, 1, p2, "", 1, "mpk-32a", NULL, 0), 1e-3);
    ck_assert_double_eq(run(o, 1024, 1, p2, "", 2, "mpk-32b", NULL, 0), 0.0);
    check_exact_mean(o);
    const char *p3 = "{\"name\": \"moshpit\", \"grid\": [8, 8, 8], \"form\": \"keys\","
                     " \"matchmaking_ms\": 5, \"local_steps\": 0}";
    ck_assert_double_gt(run(o, 512, 3, p3, "", 2, "mpk-8a", NULL, 0), 1e-4);
    ck_assert_double_eq(run(o, 512, 3, p3, "", 3, "mpk-8b", NULL, 0), 0.0);
    check_exact_mean(o);
    ck_assert_double_eq(o->repeat_pairs, 0.0);
    free(o);
}
END_TEST

START_TEST(key_form_never_groups_a_pair_twice_in_a_row)
{
    observer *o = calloc(1, sizeof(*o));
    const char *drop = "\"stragglers\": [{\"kind\": \"dropout\", \"probability\": 0.2}],";
    run(o, 60, 2,
        "{\"name\": \"moshpit\", \"grid\": [8, 8], \"form\": \"keys\", \"matchmaking_ms\": 2,"
        " \"local_steps\": 1, \"sync\": true, \"target_group_size\": 8}",
        drop, 12, "mpk-pairs", NULL, 0);
    ck_assert_double_eq(o->repeat_pairs, 0.0);
    check_sum_kept(o);
    free(o);
}
END_TEST

START_TEST(perfect_grid_8x8x8_gives_the_exact_mean_after_three_rounds)
{
    observer *o = calloc(1, sizeof(*o));
    const char *p = "{\"name\": \"moshpit\", \"grid\": [8, 8, 8], \"local_steps\": 0}";
    double v2 = run(o, 512, 3, p, "", 2, "mp-8a", NULL, 0);
    ck_assert_double_gt(v2, 1e-4);
    double v3 = run(o, 512, 3, p, "", 3, "mp-8b", NULL, 0);
    ck_assert_double_eq(v3, 0.0);
    check_exact_mean(o);
    free(o);
}
END_TEST

/* Group rounds keep the sum (group means; those sitting out keep their values). */
static void check_sum_kept(const observer *o)
{
    for (size_t i = 0; i < o->p; i++)
        /* n <= 256 values of |x| < 5: float rounding of the means, well below 1e-3. */
        ck_assert_double_eq_tol(o->last_sum[i], o->first_sum[i], 1e-3);
}

START_TEST(every_round_keeps_the_sum_whatever_sits_out)
{
    observer *o = calloc(1, sizeof(*o));
    const char *drop = "\"stragglers\": [{\"kind\": \"dropout\", \"probability\": 0.3}],";
    double v =
        run(o, 200, 2,
            "{\"name\": \"moshpit\", \"grid\": [16, 16], \"form\": \"grid\", \"local_steps\": 1}",
            drop, 7, "mp-sum-grid", NULL, 0);
    check_sum_kept(o);
    ck_assert_double_gt(v, 0.0); /* dropouts: not exact */
    run(o, 200, 2, "{\"name\": \"moshpit\", \"groups\": \"random\", \"group_size\": 8}", drop, 7,
        "mp-sum-random", NULL, 0);
    check_sum_kept(o);
    free(o);
}
END_TEST

/* Random groups in rounds where nobody takes part (every live worker sat out): the shuffle of
 * no participants crashed. 4 workers at p = 0.5 and 2 at p = 0.3 meet such rounds within 300;
 * at p = 1 every round is one, the first included. The rounds complete, the sum is kept. */
START_TEST(random_groups_survive_rounds_without_participants)
{
    observer *o = calloc(1, sizeof(*o));
    const struct {
        unsigned n;
        const char *drop;
    } cases[] = {
        { 4, "\"stragglers\": [{\"kind\": \"dropout\", \"probability\": 0.5}]," },
        { 2, "\"stragglers\": [{\"kind\": \"dropout\", \"probability\": 0.3}]," },
        { 4, "\"stragglers\": [{\"kind\": \"dropout\", \"probability\": 1}]," },
    };
    for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
        run(o, cases[c].n, 2, "{\"name\": \"moshpit\", \"groups\": \"random\"}", cases[c].drop, 300,
            "mp-none", NULL, 0);
        check_sum_kept(o);
        for (size_t w = 0; w < o->n; w++)
            ck_assert_uint_gt(o->iters[w], 0);
    }
    free(o);
}
END_TEST

/* Averaging alone (local_steps 0): a round that forms no group (one live worker, or every
 * worker sitting out) takes no simulated time, so with only a time limit the rounds looped
 * at one instant for ever. Such a run needs stop.rounds (refused without it); with it, the
 * run ends: when no round could form a group until a recovery, as here, it has stalled at
 * its first round's instant (issue 38: 1e12 rounds of that instant took days). */
START_TEST(averaging_alone_needs_a_round_count)
{
    const char *json =
        "{\"seed\": 1, \"workers\": 1, \"workload\": {\"model\": {\"name\": \"vector\"}},"
        " \"protocol\": {\"name\": \"moshpit\", \"groups\": \"random\","
        " \"local_steps\": 0}, \"stop\": {\"time_s\": 2}}";
    harness_expect_rejected(json, "moshpit.json", NULL, 0, "$.protocol.local_steps",
                            "0 (averaging alone) needs stop.rounds: rounds that form no group "
                            "take no simulated time");
    static const char *const cases[] = {
        "{\"seed\": 1, \"workers\": 1, \"workload\": {\"model\": {\"name\": \"vector\"}},"
        " \"protocol\": {\"name\": \"moshpit\", \"groups\": \"random\", \"local_steps\": 0},"
        " \"stop\": {\"rounds\": 50}}",
        "{\"seed\": 1, \"workers\": 4, \"workload\": {\"model\": {\"name\": \"vector\"}},"
        " \"stragglers\": [{\"kind\": \"dropout\", \"probability\": 1}],"
        " \"protocol\": {\"name\": \"moshpit\", \"grid\": [2, 2], \"local_steps\": 0},"
        " \"stop\": {\"rounds\": 50}}",
    };
    for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
        sim_scenario *sc = harness_load(cases[c], "moshpit.json", NULL, 0);
        char *dir = harness_tmpdir("mp-alone");
        sim_run_summary s = harness_run(sc, dir, NULL, NULL);
        ck_assert_str_eq(s.stop_reason, "stalled");
        ck_assert_int_eq(s.sim_ns, 0);
        ck_assert_double_eq(harness_summary_number(dir, "rounds"), 1);
        harness_cleanup(dir);
        sim_scenario_destroy(sc);
    }
}
END_TEST

/* Counts how many workers hold each distinct value of parameter 0 (at most 64 values). */
static size_t distinct(const observer *o, size_t *count)
{
    float val[64];
    size_t k = 0;
    for (size_t w = 0; w < o->n; w++) {
        size_t j = 0;
        while (j < k && val[j] != o->last[w][0])
            j++;
        if (j == k) {
            ck_assert_uint_lt(k, 64);
            val[k] = o->last[w][0];
            count[k++] = 0;
        }
        count[j]++;
    }
    return k;
}

START_TEST(group_members_are_equal_after_a_round)
{
    observer *o = calloc(1, sizeof(*o));
    size_t count[64];
    run(o, 16, 1, "{\"name\": \"moshpit\", \"grid\": [4, 4], \"form\": \"grid\"}", "", 1, "mp-eq",
        NULL, 0);
    ck_assert_uint_eq(distinct(o, count), 4);
    for (size_t j = 0; j < 4; j++)
        ck_assert_uint_eq(count[j], 4);
    /* Random groups of 32 over 100 workers: 3 groups of 34, 33, 33. */
    run(o, 100, 1, "{\"name\": \"moshpit\", \"groups\": \"random\", \"group_size\": 32}", "", 1,
        "mp-eq-random", NULL, 0);
    size_t k = distinct(o, count);
    ck_assert_uint_eq(k, 3);
    size_t total = 0;
    for (size_t j = 0; j < k; j++) {
        ck_assert(count[j] == 33 || count[j] == 34);
        total += count[j];
    }
    ck_assert_uint_eq(total, 100);
    free(o);
}
END_TEST

START_TEST(a_failure_mid_run_does_not_stall)
{
    observer *o = calloc(1, sizeof(*o));
    char reason[32];
    run(o, 64, 2,
        "{\"name\": \"moshpit\", \"grid\": [8, 8], \"form\": \"grid\", \"local_steps\": 1}",
        "\"stragglers\": [{\"kind\": \"failure\", \"workers\": [5, 9], \"at_s\": 0.0012,"
        " \"recover_s\": 0.004}],",
        12, "mp-fail", reason, sizeof(reason));
    ck_assert_str_eq(reason, "rounds");
    free(o);
}
END_TEST

/* Randomized: grid or random groups, dropouts, a failure and a recovery, local steps and
 * timeouts; every run reaches its round count (no stall). A worker in two groups at once
 * would make the kit refuse its second join and fail the run. */
/* Key form: leader 6 starts its group at 1.8 ms and fails at 1.847 ms, while its BEGIN
 * messages to followers 10, 15 and 16 are in flight (the network drops them with it). The
 * followers must not wait for them for ever: they leave the group, alone this round, and the
 * rounds go on (found by random_clusters_never_stall, which used to stall here). */
START_TEST(a_leader_failing_with_its_begin_messages_in_flight_stalls_nobody)
{
    observer *o = calloc(1, sizeof(*o));
    char reason[32];
    run(o, 24, 2,
        "{\"name\": \"moshpit\", \"grid\": [5, 5], \"form\": \"keys\", \"matchmaking_ms\": 0.835,"
        " \"request_timeout_ms\": 1, \"local_steps\": 1, \"min_group_size\": 2, \"sync\": true,"
        " \"target_group_size\": 5}",
        "\"stragglers\": [{\"kind\": \"dropout\", \"probability\": 0.201},"
        " {\"kind\": \"failure\", \"workers\": [6], \"at_s\": 0.001847, \"recover_s\": 0.006816}],",
        15, "mp-lost-begin", reason, sizeof(reason));
    ck_assert_str_eq(reason, "rounds");
    ck_assert_double_eq(o->repeat_pairs, 0.0);
    free(o);
}
END_TEST

START_TEST(random_clusters_never_stall)
{
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 9157);
    observer *o = calloc(1, sizeof(*o));
    for (int k = 0; k < 24; k++) {
        unsigned n = 2 + (unsigned)gsl_rng_uniform_int(r, 60);
        char proto[384], extra[512], reason[32];
        unsigned side = 0; /* key form: the digits' range */
        unsigned steps = (unsigned)gsl_rng_uniform_int(r, 3);
        if (k % 3 == 2) {
            unsigned m = 2;
            while (m * m < n)
                m++;
            double mm_ms = 0.1 + 3.0 * gsl_rng_uniform(r);
            unsigned min_group = 2 + (unsigned)gsl_rng_uniform_int(r, 2);
            snprintf(proto, sizeof(proto),
                     "{\"name\": \"moshpit\", \"grid\": [%u, %u], \"form\": \"keys\","
                     " \"matchmaking_ms\": %.3f, \"request_timeout_ms\": 1, \"local_steps\": %u,"
                     " \"min_group_size\": %u, \"sync\": %s, \"target_group_size\": %u}",
                     m, m, mm_ms, steps, min_group, k % 2 == 0 ? "true" : "false", m);
            side = m;
        } else if (k % 2 == 0) {
            unsigned m = 2;
            while (m * m < n)
                m++;
            snprintf(proto, sizeof(proto),
                     "{\"name\": \"moshpit\", \"grid\": [%u, %u], \"form\": \"grid\", "
                     "\"local_steps\": %u,"
                     " \"sender_timeout_ms\": 5, \"reducer_timeout_ms\": 10}",
                     m, m + (unsigned)gsl_rng_uniform_int(r, 2), steps);
        } else {
            snprintf(proto, sizeof(proto),
                     "{\"name\": \"moshpit\", \"groups\": \"random\", \"group_size\": %u,"
                     " \"local_steps\": %u}",
                     2 + (unsigned)gsl_rng_uniform_int(r, 8), steps);
        }
        /* Draws in statements of their own: the order in which a call's arguments are
         * evaluated is unspecified (gcc and clang differ), and the runs must not depend on
         * the compiler. */
        double at = 0.0005 + 0.004 * gsl_rng_uniform(r);
        double dropout = 0.3 * gsl_rng_uniform(r);
        unsigned failing = (unsigned)gsl_rng_uniform_int(r, n);
        double recover = at + 0.01 * gsl_rng_uniform(r);
        snprintf(extra, sizeof(extra),
                 "\"stragglers\": [{\"kind\": \"dropout\", \"probability\": %.3f},"
                 " {\"kind\": \"failure\", \"workers\": [%u], \"at_s\": %.6f,"
                 " \"recover_s\": %.6f}],",
                 dropout, failing, at, recover);
        run(o, n, 2, proto, extra, 15, "mp-stress", reason, sizeof(reason));
        ck_assert_msg(strcmp(reason, "rounds") == 0, "run %d: %s %s: %s", k, proto, extra, reason);
        ck_assert_double_eq(o->repeat_pairs, 0.0);
        if (side > 0)
            ck_assert_uint_lt(o->top_digit, side);
    }
    free(o);
    gsl_rng_free(r);
}
END_TEST

/* Key form without global rounds: a worker 4x slower does not hold the others back (they
 * finish more rounds), the run ends on its round count, and the disagreement shrinks. */
START_TEST(async_key_form_leaves_a_slow_worker_behind)
{
    observer *o = calloc(1, sizeof(*o));
    char reason[32];
    double v = run(o, 36, 2,
                   "{\"name\": \"moshpit\", \"grid\": [6, 6], \"form\": \"keys\", \"sync\": false,"
                   " \"matchmaking_ms\": 1, \"request_timeout_ms\": 0.5, \"local_steps\": 1,"
                   " \"overlap\": false}",
                   "\"stragglers\": [{\"kind\": \"fixed\", \"workers\": [4], \"slowdown\": 4},"
                   " {\"kind\": \"dropout\", \"probability\": 0.05}],",
                   10, "mpk-async", reason, sizeof(reason));
    ck_assert_str_eq(reason, "rounds");
    double var0 = 0.0, mean0 = o->first_sum[0] / (double)o->n;
    for (size_t w = 0; w < o->n; w++)
        var0 += ((double)o->first[w][0] - mean0) * ((double)o->first[w][0] - mean0);
    var0 /= (double)o->n;
    ck_assert_double_lt(v, 1e-2 * var0); /* 10 rounds of groups of up to 6 */
    /* The run ends when the slow worker has done 10 rounds (of one step each); the others
     * did more. */
    ck_assert_uint_eq(o->iters[4], 10);
    ck_assert_uint_gt(o->iters[0], 20);
    free(o);
}
END_TEST

/* Same scenario and seed: byte-identical metrics and summary (wall figures aside), for the
 * key form with dropouts, local steps and a failure. */
START_TEST(runs_are_deterministic)
{
    const char *json =
        "{\"seed\": 4127, \"workers\": 40, \"compute\": {\"iteration_ms\": 1, \"jitter_sigma\": "
        "0.2},"
        " \"stragglers\": [{\"kind\": \"dropout\", \"probability\": 0.1},"
        " {\"kind\": \"failure\", \"workers\": [7], \"at_s\": 0.002, \"recover_s\": 0.01}],"
        " \"network\": {\"bandwidth_gbps\": 1, \"latency_us\": 50},"
        " \"workload\": {\"model\": {\"name\": \"vector\", \"dim\": 5}, \"lr\": 0},"
        " \"protocol\": {\"name\": \"moshpit\", \"grid\": [7, 7], \"form\": \"keys\","
        " \"matchmaking_ms\": 1, \"local_steps\": 1}, \"stop\": {\"rounds\": 20, \"time_s\": 10},"
        " \"eval\": {\"every_s\": 0.001}}";
    char *out[2][2];
    for (int k = 0; k < 2; k++) {
        sim_scenario *sc = harness_load(json, "moshpit-det.json", NULL, 0);
        char *dir = harness_tmpdir("mp-det");
        harness_run(sc, dir, NULL, NULL);
        out[k][0] = harness_slurp(dir, "metrics.csv");
        out[k][1] = harness_slurp(dir, "summary.json");
        harness_strip_wall(out[k][1]);
        harness_cleanup(dir);
        sim_scenario_destroy(sc);
    }
    for (int f = 0; f < 2; f++) {
        ck_assert_str_eq(out[0][f], out[1][f]);
        free(out[0][f]);
        free(out[1][f]);
    }
}
END_TEST

/* The default grid (no `grid`), N -> d axes of side M: a perfect grid of side >= 4 with the
 * fewest axes when N is one (issue 23: 16 -> 4x4, 512 -> 8x8x8, 1024 -> 32x32), else the
 * fullest two-axis grid, ceil(sqrt N) a side; one axis (one group) for N <= 4. Never sides
 * of two (groups of two) where a larger group fits. */
START_TEST(default_grid_is_perfect_or_the_fullest_square)
{
    const struct {
        uint32_t n, d, m;
    } cases[] = { { 1, 1, 2 },         { 2, 1, 2 },     { 3, 1, 3 },      { 4, 1, 4 },
                  { 5, 2, 3 },         { 8, 2, 3 },     { 9, 2, 3 },      { 10, 2, 4 },
                  { 16, 2, 4 },        { 17, 2, 5 },    { 27, 2, 6 },     { 32, 2, 6 },
                  { 64, 2, 8 },        { 100, 2, 10 },  { 125, 3, 5 },    { 512, 3, 8 },
                  { 768, 2, 28 },      { 1000, 3, 10 }, { 1023, 2, 32 },  { 1024, 2, 32 },
                  { 1025, 2, 33 },     { 4096, 2, 64 }, { 32768, 3, 32 }, { 1u << 20, 2, 1024 },
                  { 1048575, 2, 1024 } };
    for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
        uint32_t d = 0, m = 0;
        mp_default_grid(cases[k].n, &d, &m);
        ck_assert_msg(d == cases[k].d && m == cases[k].m, "n = %u: %u axes of %u, want %u of %u",
                      cases[k].n, d, m, cases[k].d, cases[k].m);
        uint64_t cells = 1;
        for (uint32_t a = 0; a < d; a++)
            cells *= m;
        ck_assert_uint_ge(cells, cases[k].n);
        ck_assert(d == 1 || m >= 3);
    }
}
END_TEST

/* An incomplete default grid (8 workers in 3x3, 32 in 6x6: distinct cells drawn from the
 * seed, the rest empty) averages: grid rounds along its two axes bring the variance of N(0, 1)
 * values down by orders of magnitude, the grid resolved into run.json. */
START_TEST(incomplete_default_grid_averages)
{
    const struct {
        unsigned n;
        const char *grid;
    } cases[] = { { 8, "\"grid\": [3, 3]" }, { 32, "\"grid\": [6, 6]" } };
    for (size_t k = 0; k < 2; k++) {
        char json[1024];
        snprintf(json, sizeof(json),
                 "{\"seed\": 7, \"workers\": %u, \"compute\": {\"iteration_ms\": 1},"
                 " \"network\": {\"bandwidth_gbps\": 1, \"latency_us\": 50},"
                 " \"workload\": {\"model\": {\"name\": \"vector\", \"dim\": 1}, \"lr\": 0},"
                 " \"protocol\": {\"name\": \"moshpit\", \"local_steps\": 0},"
                 " \"stop\": {\"rounds\": 8}}",
                 cases[k].n);
        sim_scenario *sc = harness_load(json, "moshpit-incomplete.json", NULL, 0);
        char *dir = harness_tmpdir("mp-incomplete");
        observer *o = calloc(1, sizeof(*o));
        harness_run(sc, dir, observe, o);
        char *rj = harness_slurp(dir, "run.json");
        ck_assert_msg(strstr(rj, cases[k].grid) != NULL, "n = %u: run.json lacks %s", cases[k].n,
                      cases[k].grid);
        double v = harness_summary_number(dir, "variance");
        ck_assert_msg(v < 1e-3, "n = %u: variance %g after 8 rounds", cases[k].n, v);
        check_sum_kept(o);
        free(rj);
        free(o);
        harness_cleanup(dir);
        sim_scenario_destroy(sc);
    }
}
END_TEST

/* Defaults as the paper runs them, resolved into run.json: a training run (local steps) is
 * the key form without global rounds on the default grid, hivemind's unbounded target
 * (null), matchmaking paced by the iteration time; averaging alone keeps the grid rounds,
 * exact after d rounds on the default 8x8x8 of 512. A run.json runs again as it is. */
START_TEST(defaults_are_the_papers_and_recorded_in_run_json)
{
    const char *json = "{\"seed\": 5, \"workers\": 16, \"compute\": {\"iteration_ms\": 20},"
                       " \"network\": {\"bandwidth_gbps\": 1, \"latency_us\": 50},"
                       " \"workload\": {\"model\": {\"name\": \"vector\", \"dim\": 2}, \"lr\": 0},"
                       " \"protocol\": {\"name\": \"moshpit\"}, \"stop\": {\"rounds\": 6}}";
    sim_scenario *sc = harness_load(json, "moshpit-default.json", NULL, 0);
    char *dir = harness_tmpdir("mp-default");
    harness_run(sc, dir, NULL, NULL);
    char *rj = harness_slurp(dir, "run.json");
    const char *want[] = { "\"grid\": [4, 4]",       "\"form\": \"keys\"",
                           "\"sync\": false",        "\"target_group_size\": null",
                           "\"matchmaking_ms\": 20", "\"request_timeout_ms\": 10",
                           "\"min_group_size\": 2",  "\"local_steps\": 1" };
    for (size_t k = 0; k < sizeof(want) / sizeof(want[0]); k++)
        ck_assert_msg(strstr(rj, want[k]) != NULL, "run.json lacks %s", want[k]);
    /* The resolved scenario loads again. */
    sim_scenario *again = harness_load(harness_run_scenario(rj), "run.json", NULL, 0);
    sim_scenario_destroy(again);
    free(rj);
    harness_cleanup(dir);
    sim_scenario_destroy(sc);

    observer *o = calloc(1, sizeof(*o));
    ck_assert_double_eq(run(o, 512, 1, "{\"name\": \"moshpit\", \"local_steps\": 0}", "", 3,
                            "mp-default-avg", NULL, 0),
                        0.0);
    check_exact_mean(o);
    free(o);
}
END_TEST

/* Without a target (hivemind's None) a group closes when its leader's time is up, however
 * large, and the key update draws from the next power of two of its size, modulo the grid's
 * side: groups larger than the side grow the leader's list and the butterfly, every round
 * keeps the sum, and no key digit leaves 0..M-1 (a digit past it, as groups of 3 on a side
 * of 3 drew before, is a key nobody else holds: a worker alone in every later round). With
 * groups of more than M, pairs may meet again (key_form_never_groups_a_pair_twice_in_a_row
 * holds with a target of M). */
START_TEST(unbounded_groups_grow_and_keep_the_key_rules)
{
    observer *o = calloc(1, sizeof(*o));
    o->keys = true;
    const char *drop = "\"stragglers\": [{\"kind\": \"dropout\", \"probability\": 0.1}],";
    const char *p = "{\"name\": \"moshpit\", \"grid\": [3, 3], \"form\": \"keys\", \"sync\": true,"
                    " \"matchmaking_ms\": 2, \"local_steps\": 1}";
    char json[1024];
    snprintf(json, sizeof(json),
             "{\"seed\": 2385, \"workers\": 9, \"compute\": {\"iteration_ms\": 1}, %s"
             " \"network\": {\"bandwidth_gbps\": 1, \"latency_us\": 50},"
             " \"workload\": {\"model\": {\"name\": \"vector\", \"dim\": 2}, \"lr\": 0},"
             " \"protocol\": %s, \"stop\": {\"rounds\": 30}}",
             drop, p);
    sim_scenario *sc = harness_load(json, "moshpit-unbounded.json", NULL, 0);
    char *dir = harness_tmpdir("mp-unbounded");
    harness_run(sc, dir, observe, o);
    ck_assert_double_gt(harness_summary_number(dir, "member_lists_grown"), 0.0);
    ck_assert_uint_le(o->top_digit, 2);
    check_sum_kept(o);
    harness_cleanup(dir);
    sim_scenario_destroy(sc);
    free(o);
}
END_TEST

/* PROTOCOLS 1.5 and 5.7.4 for the other schemes of the benchmark: All-Reduce makes no
 * progress in a round where anyone sits out, and the exact mean otherwise; gossip leaves
 * whoever sits out unchanged. */
START_TEST(allreduce_with_a_dropout_makes_no_progress)
{
    observer *o = calloc(1, sizeof(*o));
    const char *all = "\"stragglers\": [{\"kind\": \"dropout\", \"probability\": 1}],";
    run(o, 12, 2, "{\"name\": \"allreduce\"}", all, 4, "ar-drop", NULL, 0);
    for (size_t w = 0; w < o->n; w++)
        for (size_t i = 0; i < o->p; i++)
            ck_assert(o->last[w][i] == o->first[w][i]);
    /* One worker out of 12 with probability 0.5: some rounds change nothing, the others give
     * the exact mean at once; after 6 rounds either nothing moved or all agree. */
    const char *one = "\"stragglers\": [{\"kind\": \"dropout\", \"workers\": [3],"
                      " \"probability\": 0.5}],";
    run(o, 12, 2, "{\"name\": \"allreduce\"}", one, 6, "ar-drop1", NULL, 0);
    bool moved = o->last[0][0] != o->first[0][0];
    for (size_t w = 0; w < o->n; w++)
        ck_assert(moved ? o->last[w][0] == o->last[0][0] : o->last[w][0] == o->first[w][0]);
    double v = run(o, 12, 2, "{\"name\": \"allreduce\"}", "", 1, "ar-exact", NULL, 0);
    ck_assert_double_lt(v, 1e-12); /* the mean of 12 values: float rounding only */
    free(o);
}
END_TEST

START_TEST(gossip_and_moshpit_leave_those_sitting_out_unchanged)
{
    observer *o = calloc(1, sizeof(*o));
    const char *all = "\"stragglers\": [{\"kind\": \"dropout\", \"probability\": 1}],";
    const char *protos[] = { "{\"name\": \"gossip\"}",
                             "{\"name\": \"moshpit\", \"grid\": [4, 4], \"form\": \"grid\"}",
                             "{\"name\": \"sgp\"}" };
    for (size_t k = 0; k < 3; k++) {
        run(o, 16, 2, protos[k], all, 3, "drop-all", NULL, 0);
        for (size_t w = 0; w < o->n; w++)
            for (size_t i = 0; i < o->p; i++)
                ck_assert(o->last[w][i] == o->first[w][i]);
    }
    free(o);
}
END_TEST

/* The estimate of 2N workers in random groups of 16 (N / 16 butterflies of room 31) is at
 * most 2.2 times that of N: nothing is sized by the workers times the butterflies (each
 * butterfly's position table was N entries: 4x at 2N). And a part in flight is its message
 * and its copy's buffer, 16 floats of a 16-float model (was a page and the part: 4,100 bytes
 * a part): at most 200 bytes over timing-only's estimate, 30 parts a worker. */
START_TEST(memory_estimate_is_linear_in_the_workers_and_a_part_is_its_buffer)
{
    moshpit st = { .n = 20000, .random = true, .group_size = 16 };
    uint64_t at_n = mp_memory(&st, 0);
    st.n = 40000;
    uint64_t at_2n = mp_memory(&st, 0);
    ck_assert_msg((double)at_2n <= 2.2 * (double)at_n, "%llu bytes at 20000, %llu at 40000",
                  (unsigned long long)at_n, (unsigned long long)at_2n);
    uint64_t model = mp_memory(&st, 16);
    ck_assert_uint_le(model - at_2n, (uint64_t)40000 * 30 * 200);
}
END_TEST

Suite *test_suite(void)
{
    Suite *s = suite_create("moshpit");
    TCase *t = tcase_create("grid");
    tcase_set_timeout(t, 60);
    tcase_add_test(t, perfect_grid_32x32_gives_the_exact_mean_after_two_rounds);
    tcase_add_test(t, perfect_grid_8x8x8_gives_the_exact_mean_after_three_rounds);
    tcase_add_test(t, key_form_on_a_perfect_grid_gives_the_exact_mean_after_d_rounds);
    tcase_add_test(t, key_form_never_groups_a_pair_twice_in_a_row);
    tcase_add_test(t, every_round_keeps_the_sum_whatever_sits_out);
    tcase_add_test(t, group_members_are_equal_after_a_round);
    tcase_add_test(t, a_failure_mid_run_does_not_stall);
    tcase_add_test(t, a_leader_failing_with_its_begin_messages_in_flight_stalls_nobody);
    tcase_add_test(t, random_clusters_never_stall);
    tcase_add_test(t, random_groups_survive_rounds_without_participants);
    tcase_add_test(t, averaging_alone_needs_a_round_count);
    tcase_add_test(t, runs_are_deterministic);
    tcase_add_test(t, async_key_form_leaves_a_slow_worker_behind);
    tcase_add_test(t, default_grid_is_perfect_or_the_fullest_square);
    tcase_add_test(t, incomplete_default_grid_averages);
    tcase_add_test(t, defaults_are_the_papers_and_recorded_in_run_json);
    tcase_add_test(t, unbounded_groups_grow_and_keep_the_key_rules);
    suite_add_tcase(s, t);
    TCase *b = tcase_create("benchmark_semantics");
    tcase_set_timeout(b, 60);
    tcase_add_test(b, allreduce_with_a_dropout_makes_no_progress);
    tcase_add_test(b, gossip_and_moshpit_leave_those_sitting_out_unchanged);
    suite_add_tcase(s, b);
    TCase *m = tcase_create("memory");
    tcase_add_test(m, memory_estimate_is_linear_in_the_workers_and_a_part_is_its_buffer);
    suite_add_tcase(s, m);
    return s;
}
