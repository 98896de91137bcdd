/* EASGD (asynchronous elastic averaging SGD): a spy wraps the protocol's ops table and follows
 * the centre from outside it. Every model a worker sends reaches the server after a multiple
 * of tau local steps; the elastic difference the server answers with is alpha (x_i - x~), with
 * alpha = beta / N and x~ the centre moved by every earlier answer, bit for bit; the worker
 * ends the exchange at x_i - e, bit for bit; and a scenario without a server host is refused.
 * Real runs use an MLP on a tiny synthetic set (147 parameters). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "harness.h"
#include "kit/msg.h"
#include "runtime/ctx.h"
#include "runtime/run.h"
#include "scenario/scenario.h"

extern const proto_ops proto_easgd;

static const char real_json[] = "tests/scenarios/easgd/real.json";

enum {
    MAX_W = 4,   /* workers */
    MAX_P = 256, /* parameters */
    TAU = 3,     /* real.json's tau */
    MODEL = 1,   /* the protocol's message kinds */
    ELASTIC = 2
};

typedef struct spy {
    uint32_t n;
    size_t p;
    float alpha;
    float centre[MAX_P];       /* x~ as the spy follows it */
    float e[MAX_W + 1][MAX_P]; /* each worker's expected elastic difference */
    uint64_t models, elastics;
} spy;

static spy *watched;

static int spy_start(void *state, sim_ctx *ctx, sim_err *err)
{
    spy *s = watched;
    harness_sizes_within(ctx, MAX_W, MAX_P, &s->n, &s->p);
    s->alpha = (float)(0.6 / 3); /* real.json: beta 0.6, 3 workers */
    memcpy(s->centre, sim_ctx_params_view(ctx, 0), s->p * sizeof(float));
    return proto_easgd.start(state, ctx, err);
}

static int spy_on_event(void *state, sim_ctx *ctx, const sim_event *ev, sim_err *err)
{
    spy *s = watched;
    if (ev->kind != SIM_EV_MSG)
        return proto_easgd.on_event(state, ctx, ev, err);
    msg_hdr h = msg_read(ev);
    const float *in = sim_ctx_held(ctx, SIM_CTX_PAYLOAD);
    ck_assert_ptr_nonnull(in);
    if (h.kind == MODEL) {
        uint32_t w = (uint32_t)ev->src;
        ck_assert_uint_eq((uint32_t)ev->dst, s->n); /* the first server host */
        ck_assert_uint_eq(h.seq % TAU, 0);
        ck_assert_uint_gt(h.seq, 0);
        for (size_t k = 0; k < s->p; k++) {
            s->e[w][k] = s->alpha * (in[k] - s->centre[k]);
            s->centre[k] += s->e[w][k];
        }
        s->models++;
        return proto_easgd.on_event(state, ctx, ev, err);
    }
    ck_assert_uint_eq(h.kind, ELASTIC);
    uint32_t w = (uint32_t)ev->dst;
    ck_assert_int_eq(memcmp(in, s->e[w], s->p * sizeof(float)), 0);
    float before[MAX_P];
    memcpy(before, sim_ctx_params_view(ctx, w), s->p * sizeof(float));
    int rc = proto_easgd.on_event(state, ctx, ev, err);
    const float *x = sim_ctx_params_view(ctx, w);
    for (size_t k = 0; k < s->p; k++) {
        float want = before[k] - s->e[w][k];
        ck_assert_int_eq(memcmp(&x[k], &want, sizeof(float)), 0);
    }
    s->elastics++;
    return rc;
}

START_TEST(easgd_exchanges_move_worker_and_centre_by_the_elastic_difference)
{
    sim_scenario *sc = harness_load_file(real_json, NULL, 0);
    proto_ops ops = proto_easgd;
    ops.start = spy_start;
    ops.on_event = spy_on_event;
    spy *s = calloc(1, sizeof(*s));
    watched = s;
    char *dir = harness_tmpdir("easgd");
    harness_run_with(sc, &ops, dir, NULL, NULL);
    /* 0.5 s of 7 ms iterations: about 70 steps a worker, an exchange every third. */
    ck_assert_uint_gt(s->elastics, 3 * 15);
    ck_assert_uint_le(s->elastics, s->models);
    ck_assert_uint_ge(s->elastics + 3, s->models);
    ck_assert_double_eq(harness_summary_number(dir, "exchanges"), (double)s->models);
    harness_cleanup(dir);
    sim_scenario_destroy(sc);
    watched = NULL;
    free(s);
}
END_TEST

START_TEST(easgd_refuses_a_scenario_without_a_server_host)
{
    const char *sets[] = { "servers=0" };
    harness_expect_rejected_file(real_json, sets, 1, "$.protocol.tau",
                                 "easgd keeps its centre on a server host: the scenario needs "
                                 "\"servers\" >= 1");
}
END_TEST

Suite *test_suite(void)
{
    Suite *s = suite_create("easgd");
    TCase *tc = tcase_create("exchanges");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, easgd_exchanges_move_worker_and_centre_by_the_elastic_difference);
    tcase_add_test(tc, easgd_refuses_a_scenario_without_a_server_host);
    suite_add_tcase(s, tc);
    return s;
}
