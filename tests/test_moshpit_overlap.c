/* Moshpit's training default (PROTOCOLS 5.7; tests/test_moshpit.c has its averaging-only runs):
 * its rounds run beside the local steps (hivemind's background averaging). A spy wraps the
 * protocol's ops and records every change of a worker's parameters, which the tests check bit
 * for bit against the steps and the merge worked out by hand. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "harness.h"
#include "runtime/ctx.h"
#include "runtime/run.h"
#include "scenario/scenario.h"

extern const proto_ops proto_moshpit;

enum {
    SPY_W = 2,  /* workers */
    SPY_P = 2,  /* parameters */
    SPY_C = 16, /* changes per worker */
};

/* Every change of a worker's parameters after an event the protocol handled: when, and the
 * values then. */
typedef struct spy {
    uint32_t n;
    float x0[SPY_W][SPY_P];
    size_t nc[SPY_W];
    sim_time at[SPY_W][SPY_C];
    float x[SPY_W][SPY_C][SPY_P];
} spy;

static spy *watched; /* the one run the spy watches (one test at a time per process) */

static int spy_start(void *state, sim_ctx *ctx, sim_err *err)
{
    watched->n = sim_ctx_workers(ctx);
    ck_assert_uint_le(watched->n, SPY_W);
    ck_assert_uint_eq(sim_ctx_num_params(ctx), SPY_P);
    for (uint32_t w = 0; w < watched->n; w++)
        memcpy(watched->x0[w], sim_ctx_params_view(ctx, w), sizeof(watched->x0[w]));
    return proto_moshpit.start(state, ctx, err);
}

static int spy_on_event(void *state, sim_ctx *ctx, const sim_event *ev, sim_err *err)
{
    int rc = proto_moshpit.on_event(state, ctx, ev, err);
    spy *s = watched;
    for (uint32_t w = 0; w < s->n; w++) {
        const float *x = sim_ctx_params_view(ctx, w);
        const float *last = s->nc[w] > 0 ? s->x[w][s->nc[w] - 1] : s->x0[w];
        if (memcmp(x, last, sizeof(s->x0[w])) == 0)
            continue;
        ck_assert_uint_lt(s->nc[w], SPY_C);
        s->at[w][s->nc[w]] = sim_ctx_now(ctx);
        memcpy(s->x[w][s->nc[w]++], x, sizeof(s->x0[w]));
    }
    return rc;
}

/* Runs `json` (a vector scenario of SPY_P parameters) under the spy into a temporary
 * directory, which it returns (for the caller's harness_cleanup). */
static char *spy_run(const char *json, spy *s)
{
    proto_ops ops = proto_moshpit;
    ops.start = spy_start;
    ops.on_event = spy_on_event;
    memset(s, 0, sizeof(*s));
    watched = s;
    sim_scenario *sc = harness_load(json, "moshpit-overlap.json", NULL, 0);
    char *dir = harness_tmpdir("mp-overlap");
    harness_run_with(sc, &ops, dir, NULL, NULL);
    sim_scenario_destroy(sc);
    watched = NULL;
    return dir;
}

/* One local step by hand, as models/optim.c takes it without momentum: the vector model's
 * gradient is 0, so x - lr (0 + wd x), lr 0.5 and weight decay 0.25 below. */
static float hand_step(float x)
{
    return x - 0.5f * (0.0f + 0.25f * x);
}

/* Every worker's wait in workers.csv is 0: it always had an iteration in flight. */
static void expect_no_wait(const char *dir)
{
    harness_csv t = harness_csv_read(dir, "workers.csv");
    for (size_t r = 0; r < t.nrows; r++)
        ck_assert_double_eq(harness_csv_num(&t, r, "wait_s"), 0.0);
    harness_csv_free(&t);
}

/* Two workers of one key (one axis: one group), 10 ms iterations without jitter, 25 ms of
 * matchmaking, a round due after every step (the defaults but the matchmaking time), each
 * worker its own N(0, 1) start. Both are done with step 1 at 10 ms and begin their round
 * from x(1); worker 0 leads, worker 1 follows, worker 0's time is up at 35 ms and the
 * butterfly (8 bytes, 50 us links) ends within 0.4 ms. Meanwhile both take steps 2 and 3
 * (at 20 and 30 ms, the rounds due then skipped: theirs is in flight), so the merge at
 * 35.x ms finds x(3) and gives, with avg the two x(1)'s mean (in double, rounded once):
 *   delta (hivemind's, the default):  x(3) + alpha (avg - x(1))
 *   replace (the paper's code):       x(3) + alpha (avg - x(3)), with alpha 1 avg itself.
 * The run stops at 39 ms, before step 4. */
static void expect_overlapped_merge(const char *merge, double alpha)
{
    char json[1024], key[64] = "";
    if (merge != NULL)
        snprintf(key, sizeof(key), ", \"merge\": \"%s\"", merge);
    snprintf(json, sizeof(json),
             "{\"seed\": 2385, \"workers\": 2, \"compute\": {\"iteration_ms\": 10},"
             " \"network\": {\"bandwidth_gbps\": 1, \"latency_us\": 50},"
             " \"workload\": {\"model\": {\"name\": \"vector\", \"dim\": 2}, \"lr\": 0.5,"
             " \"weight_decay\": 0.25},"
             " \"protocol\": {\"name\": \"moshpit\", \"matchmaking_ms\": 25%s,"
             " \"averaging_alpha\": %g}, \"stop\": {\"time_s\": 0.039}}",
             key, alpha);
    spy s;
    char *dir = spy_run(json, &s);
    bool replace = merge != NULL && strcmp(merge, "replace") == 0;
    float x1[SPY_W][SPY_P], x3[SPY_W][SPY_P], avg[SPY_P];
    for (uint32_t w = 0; w < SPY_W; w++)
        for (size_t i = 0; i < SPY_P; i++) {
            x1[w][i] = hand_step(s.x0[w][i]);
            x3[w][i] = hand_step(hand_step(x1[w][i]));
        }
    for (size_t i = 0; i < SPY_P; i++) /* the reducer's mean: weights 1, in double */
        avg[i] = (float)((1.0 * (double)x1[0][i] + 1.0 * (double)x1[1][i]) / 2.0);
    for (uint32_t w = 0; w < SPY_W; w++) {
        ck_assert_uint_eq(s.nc[w], 4);
        for (size_t k = 0; k < 3; k++) /* steps 1-3 at 10, 20, 30 ms, the round in flight */
            ck_assert_int_eq(s.at[w][k], (sim_time)(k + 1) * 10000000);
        ck_assert_int_gt(s.at[w][3], 35000000);
        ck_assert_int_lt(s.at[w][3], 35400000);
        for (size_t i = 0; i < SPY_P; i++) {
            ck_assert(s.x[w][0][i] == x1[w][i]);
            ck_assert(s.x[w][2][i] == x3[w][i]);
            const float base = replace ? x3[w][i] : x1[w][i];
            float want =
                alpha == 1.0 && replace ? avg[i] : x3[w][i] + (float)alpha * (avg[i] - base);
            ck_assert_msg(s.x[w][3][i] == want, "worker %u, x[%zu]: %.9g, want %.9g", w, i,
                          (double)s.x[w][3][i], (double)want);
        }
    }
    expect_no_wait(dir);
    ck_assert_double_eq(harness_summary_number(dir, "groups"), 1.0);
    ck_assert_double_eq(harness_summary_number(dir, "skipped_rounds"), 4.0);
    ck_assert_double_eq(harness_summary_number(dir, "matchmaking_wait_s"), 0.0);
    harness_cleanup(dir);
}

START_TEST(rounds_overlap_the_steps_and_the_merge_keeps_the_steps_taken_meanwhile)
{
    expect_overlapped_merge(NULL, 1.0);
    expect_overlapped_merge("delta", 0.615);
    expect_overlapped_merge("replace", 1.0);
    expect_overlapped_merge("replace", 0.615);
}
END_TEST

/* One worker alone: every matchmaking finds nobody (its 25 ms are up, it looks again at
 * once) and it never waits: 10 iterations in 0.1 s, each a plain step (no merge changes its
 * parameters), 3 windows alone (from 10, 35 and 60 ms), no group. Without overlap (the
 * earlier default) the same worker waits out each window: iterations end at 10, 45 and
 * 80 ms, and the 25 + 25 + 20 ms of matchmaking are waiting (the first two reported as
 * matchmaking_wait_s: the third is not over at the end). */
/* The scenario of one worker alone, with `extra` protocol keys. */
static void alone_json(char *json, size_t size, const char *extra)
{
    snprintf(json, size,
             "{\"seed\": 619, \"workers\": 1, \"compute\": {\"iteration_ms\": 10},"
             " \"network\": {\"bandwidth_gbps\": 1, \"latency_us\": 50},"
             " \"workload\": {\"model\": {\"name\": \"vector\", \"dim\": 2},"
             " \"lr\": 0.5, \"weight_decay\": 0.25},"
             " \"protocol\": {\"name\": \"moshpit\", \"matchmaking_ms\": 25%s},"
             " \"stop\": {\"time_s\": 0.1}}",
             extra);
}

START_TEST(a_round_that_finds_nobody_costs_the_worker_no_waiting)
{
    char json[1024];
    alone_json(json, sizeof(json), "");
    spy s;
    char *dir = spy_run(json, &s);
    ck_assert_uint_eq(s.nc[0], 10);
    float x[SPY_P];
    memcpy(x, s.x0[0], sizeof(x));
    for (size_t k = 0; k < 10; k++) {
        ck_assert_int_eq(s.at[0][k], (sim_time)(k + 1) * 10000000);
        for (size_t i = 0; i < SPY_P; i++) {
            x[i] = hand_step(x[i]);
            ck_assert(s.x[0][k][i] == x[i]);
        }
    }
    expect_no_wait(dir);
    ck_assert_double_eq(harness_summary_number(dir, "alone"), 3.0);
    ck_assert_double_eq(harness_summary_number(dir, "groups"), 0.0);
    ck_assert_double_eq(harness_summary_number(dir, "matchmaking_wait_s"), 0.0);
    harness_cleanup(dir);

    alone_json(json, sizeof(json), ", \"overlap\": false");
    dir = spy_run(json, &s);
    ck_assert_uint_eq(s.nc[0], 3);
    for (size_t k = 0; k < 3; k++)
        ck_assert_int_eq(s.at[0][k], (sim_time)(10 + 35 * k) * 1000000);
    /* Matchmaking finished by the end (the last window, from 80 ms, is not): a sum of
     * nanosecond counts over 1e9, printed with 17 digits, so 0.05 within 1e-12. */
    ck_assert_double_eq_tol(harness_summary_number(dir, "matchmaking_wait_s"), 0.05, 1e-12);
    harness_csv t = harness_csv_read(dir, "workers.csv");
    ck_assert_double_eq_tol(harness_csv_num(&t, 0, "wait_s"), 0.07, 1e-9);
    harness_csv_free(&t);
    harness_cleanup(dir);
}
END_TEST

Suite *test_suite(void)
{
    Suite *s = suite_create("moshpit_overlap");
    TCase *tc = tcase_create("moshpit_overlap");
    tcase_add_test(tc, rounds_overlap_the_steps_and_the_merge_keeps_the_steps_taken_meanwhile);
    tcase_add_test(tc, a_round_that_finds_nobody_costs_the_worker_no_waiting);
    suite_add_tcase(s, tc);
    return s;
}
