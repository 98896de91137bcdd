/* DiLoCo: H inner steps, then a ring all-reduce and an outer step on the global model. Exact
 * timing; the outer step followed from outside by a spy that wraps the protocol's ops table
 * (every replica adopts the global model moved by one outer Nesterov or heavy-ball step from
 * the mean of the members' models, without weight decay, bit for bit); two outer steps on
 * decaying vectors against their closed form worked by hand; Local SGD to the bit with outer
 * lr 1 and no momentum; a recovered worker admitted at a round's end with the global model,
 * also when the model's sender fails on the way or nobody is left to send it;
 * and the options' ranges. Real runs use an MLP on a tiny synthetic set (147 parameters) with
 * weight decay, so that an outer step that decayed would show. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "harness.h"
#include "kit/msg.h"
#include "models/optim.h"
#include "runtime/ctx.h"
#include "runtime/run.h"
#include "scenario/scenario.h"
#include "sim/tensor.h"

extern const proto_ops proto_diloco;

static const char real_json[] = "tests/scenarios/diloco/real.json";

enum {
    MAX_W = 4,              /* workers */
    MAX_P = 256,            /* parameters */
    EV_ADMIT = SIM_EV_USER, /* the protocol's timer: admissions at a round's end */
    RING_CHANNEL = 1,       /* the ring's channel; the protocol's own is 0 */
};

/* What the spy follows: the global model x and its outer momentum, as the protocol's
 * documentation says they move, and what the recovery test sees. */
typedef struct spy {
    uint32_t n;
    size_t p;
    optim_config outer;       /* the outer step: lr, momentum, Nesterov or not, no decay */
    float x[MAX_P], v[MAX_P]; /* the global model and its momentum */
    float before[MAX_W][MAX_P];
    uint32_t adopted;        /* members that adopted the round's x so far */
    uint64_t rounds;         /* rounds every member adopted */
    float admitted_x[MAX_P]; /* the admitting member's model at the admission */
    uint64_t admissions, fetched, alone;
    uint32_t peer, from; /* the admission's sender, and the adopted model's */
    sim_time first_admission;
} spy;

static spy *watched;

static int spy_start(void *state, sim_ctx *ctx, sim_err *err)
{
    spy *s = watched;
    harness_sizes_within(ctx, MAX_W, MAX_P, &s->n, &s->p);
    int rc = proto_diloco.start(state, ctx, err);
    /* Every worker starts from x, the first live worker's model. */
    memcpy(s->x, sim_ctx_params_view(ctx, 0), s->p * sizeof(float));
    for (uint32_t w = 1; w < s->n; w++)
        ck_assert_int_eq(memcmp(sim_ctx_params_view(ctx, w), s->x, s->p * sizeof(float)), 0);
    return rc;
}

/* The first member to adopt a round's model: x moves by one outer step from the mean of the
 * members' models as they joined (worker order: the ring's, every worker up). */
static void spy_outer_step(spy *s)
{
    const float *xs[MAX_W];
    float mean[MAX_P], delta[MAX_P];
    for (uint32_t w = 0; w < s->n; w++)
        xs[w] = s->before[w];
    sim_tensor_mean(mean, xs, s->n, s->p);
    for (size_t k = 0; k < s->p; k++)
        delta[k] = s->x[k] - mean[k];
    optim_step(s->x, s->v, delta, s->p, s->outer.lr, &s->outer);
}

static int spy_on_event(void *state, sim_ctx *ctx, const sim_event *ev, sim_err *err)
{
    spy *s = watched;
    if (ev->kind != SIM_EV_MSG || msg_read(ev).channel != RING_CHANNEL)
        return proto_diloco.on_event(state, ctx, ev, err);
    for (uint32_t w = 0; w < s->n; w++)
        memcpy(s->before[w], sim_ctx_params_view(ctx, w), s->p * sizeof(float));
    int rc = proto_diloco.on_event(state, ctx, ev, err);
    for (uint32_t w = 0; w < s->n; w++) {
        const float *now = sim_ctx_params_view(ctx, w);
        if (memcmp(now, s->before[w], s->p * sizeof(float)) == 0)
            continue;
        if (s->adopted == 0)
            spy_outer_step(s);
        ck_assert_msg(memcmp(now, s->x, s->p * sizeof(float)) == 0,
                      "worker %u, round %llu: not the global model after its outer step", w,
                      (unsigned long long)s->rounds);
        if (++s->adopted == s->n) {
            s->adopted = 0;
            s->rounds++;
        }
    }
    return rc;
}

static spy *spy_run(const char *const *sets, size_t nsets, double lr, double momentum,
                    bool nesterov, char **dir)
{
    sim_scenario *sc = harness_load_file(real_json, sets, nsets);
    proto_ops ops = proto_diloco;
    ops.start = spy_start;
    ops.on_event = spy_on_event;
    spy *s = calloc(1, sizeof(*s));
    optim_config_default(&s->outer);
    s->outer.lr = lr, s->outer.momentum = momentum, s->outer.nesterov = nesterov;
    watched = s;
    *dir = harness_tmpdir("diloco");
    sim_run_options opt = { .out_dir = *dir };
    sim_run_summary sum;
    sim_err err;
    sim_err_clear(&err);
    ck_assert_msg(sim_run(sc, &ops, &opt, &sum, &err) == 0, "run: %s", err.msg);
    sim_scenario_destroy(sc);
    watched = NULL;
    return s;
}

START_TEST(diloco_round_is_h_computations_then_a_ring_allreduce)
{
    /* Timing only, 4 workers: H = 3 steps of 10 ms, then 6 ring steps of
     * 2 * 50 us + (40 MB / 4) * 8 / 10 Gbit/s = 8.1 ms, as Local SGD's. Two rounds. */
    static const char json[] =
        "tests/scenarios/localsgd/localsgd_round_is_h_computations_then_a_ring_allreduce.json";
    const char *sets[] = { "protocol={\"name\": \"diloco\", \"local_steps\": 3}",
                           "stop={\"iterations\": 24}" };
    sim_scenario *sc = harness_load_file(json, sets, 2);
    char *dir = harness_tmpdir("diloco");
    sim_run_summary sum = harness_run(sc, dir, NULL, NULL);
    ck_assert_int_eq(sum.sim_ns, 2 * (30000000 + 6 * 8100000));
    ck_assert_uint_eq(sum.iterations, 24);
    ck_assert_double_eq(harness_summary_number(dir, "outer_steps"), 2.0);
    harness_cleanup(dir);
    sim_scenario_destroy(sc);
}
END_TEST

/* The default outer optimizer (lr 0.7, momentum 0.9, Nesterov) and the heavy ball, on 3
 * workers with jitter: about 0.5 s / (3 x 7 ms + a ring) = 20 rounds, each checked. */
START_TEST(every_replica_adopts_the_global_model_after_one_outer_step_bit_for_bit)
{
    const char *heavy[] = { "protocol.outer_nesterov=false", "protocol.outer_lr=0.45",
                            "protocol.outer_momentum=0.6" };
    for (int form = 0; form < 2; form++) {
        char *dir;
        spy *s = form == 0 ? spy_run(NULL, 0, 0.7, 0.9, true, &dir)
                           : spy_run(heavy, 3, 0.45, 0.6, false, &dir);
        ck_assert_uint_gt(s->rounds, 15);
        ck_assert_uint_eq(s->adopted, 0); /* the run ends at no round boundary here: */
        double steps = harness_summary_number(dir, "outer_steps");
        ck_assert_double_ge(steps, (double)s->rounds); /* ... at most one more begun */
        ck_assert_double_le(steps, (double)s->rounds + 1);
        harness_cleanup(dir);
        free(s);
    }
}
END_TEST

/* Averaging-only vectors (zero gradients) shrink under weight decay alone: with workload lr
 * 0.45, decay 0.3 and no momentum each inner step multiplies a model by q = 1 - 0.135, so after
 * H = 2 steps every worker holds x q^2 and the outer gradient is c x, c = 1 - q^2 = 0.251775.
 * Outer Nesterov (a = 0.7, m = 0.9), no decay: v1 = c x, x1 = x - a (c x + m v1)
 * = x (1 - 1.9 a c) = 0.66513925 x; v2 = m v1 + c x1, x2 = x1 - a (c x1 + m v2)
 * = x1 - a c (1.9 x1 + 0.81 x) = 0.2996537969 x. The heavy ball (outer_nesterov false):
 * y1 = x (1 - a c) = 0.8237575 x, y2 = y1 - a c (m x + y1) = 0.5199581688 x. Two rounds
 * (stop.rounds 2) end with every worker at x2 (y2), x being worker 0's own initial draw. */
typedef struct ends {
    uint32_t n;
    float first[MAX_P], last[MAX_W][MAX_P];
    size_t p;
    int evaluations;
} ends;

static void observe_ends(void *ud, sim_ctx *ctx)
{
    ends *e = ud;
    e->n = sim_ctx_workers(ctx);
    e->p = sim_ctx_num_params(ctx);
    if (e->evaluations++ == 0)
        memcpy(e->first, sim_ctx_params_view(ctx, 0), e->p * sizeof(float));
    for (uint32_t w = 0; w < e->n; w++)
        memcpy(e->last[w], sim_ctx_params_view(ctx, w), e->p * sizeof(float));
}

START_TEST(two_outer_steps_on_decaying_vectors_match_their_closed_form)
{
    static const char json[] =
        "{\"seed\": 5, \"workers\": 3, \"compute\": {\"iteration_ms\": 3},"
        " \"workload\": {\"model\": {\"name\": \"vector\", \"dim\": 7}, \"lr\": 0.45,"
        " \"weight_decay\": 0.3}, \"protocol\": {\"name\": \"diloco\", \"local_steps\": 2},"
        " \"stop\": {\"rounds\": 2}, \"eval\": {\"every_s\": 1}}";
    const char *heavy[] = { "protocol.outer_nesterov=false" };
    const double factor[2] = { 0.2996537968905626, 0.51995816880625 };
    for (int form = 0; form < 2; form++) {
        sim_scenario *sc = harness_load(json, "decay.json", heavy, form == 0 ? 0 : 1);
        ends e = { 0 };
        sim_run_summary sum = harness_run(sc, NULL, observe_ends, &e);
        ck_assert_str_eq(sum.stop_reason, "rounds");
        ck_assert_int_ge(e.evaluations, 2);
        /* Float roundings of a few dozen operations on values of order 1 (N(0, 1) draws):
         * 1e-6 relative covers them; a decayed outer step moves x2 by about 0.3 x 0.7 x c. */
        for (uint32_t w = 0; w < e.n; w++)
            for (size_t k = 0; k < e.p; k++) {
                double want = factor[form] * (double)e.first[k];
                ck_assert_double_eq_tol((double)e.last[w][k], want,
                                        1e-6 * fmax(1.0, fabs((double)e.first[k])));
            }
        sim_scenario_destroy(sc);
    }
}
END_TEST

/* Outer lr 1 without momentum is Local SGD: the same metrics and workers (parameters'
 * fingerprints, bytes, times) to the byte, with jitter and random stragglers. */
START_TEST(with_outer_lr_1_and_no_momentum_it_is_local_sgd_to_the_bit)
{
    const char *common[] = { "stragglers=[{\"kind\": \"random\", \"probability\": 0.1, "
                             "\"slowdown\": 3}]",
                             "protocol.local_steps=3" };
    const char *ours[] = { common[0], common[1], "protocol.outer_lr=1",
                           "protocol.outer_momentum=0" };
    const char *theirs[] = { common[0], "protocol={\"name\": \"localsgd\", \"local_steps\": 3}" };
    sim_scenario *a = harness_load_file(real_json, ours, 4);
    sim_scenario *b = harness_load_file(real_json, theirs, 2);
    char *da = harness_tmpdir("diloco"), *db = harness_tmpdir("diloco");
    harness_run(a, da, NULL, NULL);
    harness_run(b, db, NULL, NULL);
    const char *files[] = { "metrics.csv", "workers.csv" };
    for (int i = 0; i < 2; i++) {
        char *x = harness_slurp(da, files[i]), *y = harness_slurp(db, files[i]);
        ck_assert_msg(strcmp(x, y) == 0, "%s differs from Local SGD's", files[i]);
        free(x);
        free(y);
    }
    /* The control: the default outer step does not give Local SGD's parameters. */
    const char *ctl[] = { common[0], common[1] };
    sim_scenario *c = harness_load_file(real_json, ctl, 2);
    char *dc = harness_tmpdir("diloco");
    harness_run(c, dc, NULL, NULL);
    char *x = harness_slurp(dc, "workers.csv"), *y = harness_slurp(db, "workers.csv");
    ck_assert_str_ne(x, y);
    free(x);
    free(y);
    harness_cleanup(da);
    harness_cleanup(db);
    harness_cleanup(dc);
    sim_scenario_destroy(a);
    sim_scenario_destroy(b);
    sim_scenario_destroy(c);
}
END_TEST

/* Worker 2 fails at 0.1 s and recovers at 0.2 s: it is admitted at the end of a round every
 * member completed, after its recovery, by the member that completed it last, whose model is
 * then every running member's, x, and it begins from exactly x: when that model lands; when its
 * sender fails while it is on its way (25 MB: 20 ms) and another member sends it again (x,
 * though that member's own model has moved on: the rejoin service's state); and when the last
 * other member fails too, so that the admission is undone and worker 2 starts alone, from x. */
static int admit_on_event(void *state, sim_ctx *ctx, const sim_event *ev, sim_err *err)
{
    spy *s = watched;
    if (ev->kind == EV_ADMIT && !sim_ctx_down(ctx, (uint32_t)ev->dst)) {
        const float *x = sim_ctx_params_view(ctx, (uint32_t)ev->dst);
        for (uint32_t w = 0; w < 2; w++)
            if (!sim_ctx_down(ctx, w))
                ck_assert_int_eq(memcmp(sim_ctx_params_view(ctx, w), x, s->p * sizeof(float)), 0);
        memcpy(s->admitted_x, x, s->p * sizeof(float));
        s->peer = (uint32_t)ev->dst;
        if (s->admissions++ == 0)
            s->first_admission = sim_ctx_now(ctx);
    }
    int rc = proto_diloco.on_event(state, ctx, ev, err);
    const float *mine = sim_ctx_params_view(ctx, 2);
    if (ev->kind == SIM_EV_MSG && msg_read(ev).channel == 0) {
        ck_assert_uint_eq((uint32_t)ev->dst, 2);
        ck_assert_int_eq(memcmp(mine, s->admitted_x, s->p * sizeof(float)), 0);
        s->fetched++;
        s->from = (uint32_t)ev->src;
    }
    if (ev->kind == SIM_EV_WORKER_DOWN && ev->dst == 0 && sim_ctx_down(ctx, 1) &&
        s->admissions > 0 && s->fetched == 0) { /* the last member failed: 2 starts alone */
        ck_assert_int_eq(memcmp(mine, s->admitted_x, s->p * sizeof(float)), 0);
        s->alone++;
    }
    return rc;
}

static int admit_start(void *state, sim_ctx *ctx, sim_err *err)
{
    watched->p = sim_ctx_num_params(ctx);
    return proto_diloco.start(state, ctx, err);
}

START_TEST(a_recovered_worker_is_admitted_at_a_round_end_with_the_global_model)
{
    static const char down2[] =
        "{\"kind\": \"failure\", \"workers\": [2], \"at_s\": 0.1, \"recover_s\": 0.2}";
    const struct {
        const char *more;  /* failures after worker 2's */
        uint32_t fetched;  /* models that landed */
        bool resent;       /* by another member than the admission's */
        uint32_t alone;    /* worker 2 started alone */
        const char *bytes; /* a model's size */
    } cases[] = {
        { "", 1, false, 0, "workload.message_bytes=null" },
        { ", {\"kind\": \"failure\", \"workers\": [0], \"at_s\": 0.22}", 1, true, 0,
          "workload.message_bytes=25000000" },
        { ", {\"kind\": \"failure\", \"workers\": [1], \"at_s\": 0.218}, {\"kind\": \"failure\", "
          "\"workers\": [0], \"at_s\": 0.22}",
          0, false, 1, "workload.message_bytes=25000000" },
    };
    for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
        char strag[512];
        snprintf(strag, sizeof(strag), "stragglers=[%s%s]", down2, cases[c].more);
        const char *sets[] = { strag, cases[c].bytes };
        sim_scenario *sc = harness_load_file(real_json, sets, 2);
        proto_ops ops = proto_diloco;
        ops.start = admit_start;
        ops.on_event = admit_on_event;
        spy *s = calloc(1, sizeof(*s));
        watched = s;
        char *dir = harness_tmpdir("diloco");
        sim_run_summary sum = harness_run_with(sc, &ops, dir, NULL, NULL);
        ck_assert_str_eq(sum.stop_reason, "time");
        ck_assert_uint_eq(s->admissions, 1);
        ck_assert_uint_eq(s->fetched, cases[c].fetched);
        if (cases[c].fetched > 0)
            ck_assert_int_eq(s->from != s->peer, cases[c].resent);
        ck_assert_uint_eq(s->alone, cases[c].alone);
        ck_assert_int_ge(s->first_admission, 200000000);
        ck_assert_int_lt(s->first_admission, 240000000); /* within a round (about 25 ms) */
        ck_assert_double_eq(harness_summary_number(dir, "admitted"), 1.0);
        harness_csv t = harness_csv_read(dir, "workers.csv");
        /* About 14 iterations before 0.1 s; 24 to 47 at the end (25 MB rings are slower). */
        ck_assert_double_gt(harness_csv_num(&t, 2, "iterations"), 20);
        harness_csv_free(&t);
        harness_cleanup(dir);
        sim_scenario_destroy(sc);
        watched = NULL;
        free(s);
    }
}
END_TEST

START_TEST(diloco_refuses_options_out_of_range)
{
    const struct {
        const char *set, *path, *msg;
    } cases[] = {
        { "protocol.local_steps=0", "$.protocol.local_steps",
          "must be an integer in [1, 1000000], got 0" },
        { "protocol.outer_momentum=1", "$.protocol.outer_momentum",
          "must be a number in [0, 1), got 1" },
        { "protocol.outer_lr=-0.5", "$.protocol.outer_lr",
          "must be a number in [0, 100], got -0.5" },
        { "protocol.outer_nesterov=1", "$.protocol.outer_nesterov",
          "must be true or false, got 1" },
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
        harness_expect_rejected_file(real_json, &cases[i].set, 1, cases[i].path, cases[i].msg);
}
END_TEST

Suite *test_suite(void)
{
    Suite *s = suite_create("diloco");
    TCase *tc = tcase_create("diloco");
    tcase_add_test(tc, diloco_round_is_h_computations_then_a_ring_allreduce);
    tcase_add_test(tc, every_replica_adopts_the_global_model_after_one_outer_step_bit_for_bit);
    tcase_add_test(tc, two_outer_steps_on_decaying_vectors_match_their_closed_form);
    tcase_add_test(tc, with_outer_lr_1_and_no_momentum_it_is_local_sgd_to_the_bit);
    tcase_add_test(tc, a_recovered_worker_is_admitted_at_a_round_end_with_the_global_model);
    tcase_add_test(tc, diloco_refuses_options_out_of_range);
    tcase_set_timeout(tc, 120);
    suite_add_tcase(s, tc);
    return s;
}
