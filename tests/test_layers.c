/* Layer-wise iterations (sim/layers.h): the shares of an iteration's time worked out by hand,
 * the built-in models' layers against their FLOP counts, profile CSVs good and bad, and the
 * per-layer gradient times a protocol reads (sim_ctx_grad_ready_ns) in a run. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "harness.h"
#include "models/model.h"
#include "runtime/ctx.h"
#include "runtime/proto.h"
#include "sim/layers.h"

/* Doubles computed by one division each: within an ulp or two of the hand value. */
#define TOL 1e-15

static void set3(sim_layers *l, double f0, double f1, double f2)
{
    ck_assert_int_eq(sim_layers_init(l, 3, NULL), SIM_OK);
    l->layer[0].fwd_flops = f0;
    l->layer[1].fwd_flops = f1;
    l->layer[2].fwd_flops = f2;
    sim_layers_finish(l);
}

START_TEST(shares_follow_flops_with_backward_twice_forward)
{
    /* Forward 1, 2, 3 (sum 6), backward 2, 4, 6 (sum 12) in reverse: total 18. */
    sim_layers l = { 0 };
    set3(&l, 1.5e9, 3e9, 4.5e9);
    ck_assert(!l.measured);
    ck_assert_double_eq_tol(l.fwd_end[0], 1.0 / 18, TOL);
    ck_assert_double_eq_tol(l.fwd_end[1], 3.0 / 18, TOL);
    ck_assert_double_eq_tol(l.fwd_end[2], 6.0 / 18, TOL);
    ck_assert_double_eq_tol(l.bwd_end[2], 12.0 / 18, TOL);
    ck_assert_double_eq_tol(l.bwd_end[1], 16.0 / 18, TOL);
    ck_assert(l.bwd_end[0] == 1.0);
    ck_assert_double_eq(sim_layers_flops(&l), 9e9);
    /* An iteration of 1.8 ms: layer 2 ready at 1.2 ms, layer 1 at 1.6 ms, layer 0 at the end. */
    ck_assert_int_eq(sim_layers_ready_offset_ns(&l, 1800000, 2), 1200000);
    ck_assert_int_eq(sim_layers_ready_offset_ns(&l, 1800000, 1), 1600000);
    ck_assert_int_eq(sim_layers_ready_offset_ns(&l, 1800000, 0), 1800000);
    sim_layers_fini(&l);
}
END_TEST

START_TEST(measured_times_override_flops_and_zero_flops_weigh_alike)
{
    sim_layers l = { 0 };
    set3(&l, 1, 1, 1);
    double f[3] = { 0.5, 0.25, 1.25 }, b[3] = { 1.0, 0.75, 0.25 }; /* total 4 ms */
    for (int i = 0; i < 3; i++) {
        l.layer[i].fwd_ms = f[i];
        l.layer[i].bwd_ms = b[i];
    }
    sim_layers_finish(&l);
    ck_assert(l.measured);
    ck_assert_double_eq_tol(sim_layers_measured_ms(&l), 4.0, TOL);
    ck_assert_double_eq_tol(l.bwd_end[2], 2.25 / 4, TOL);
    ck_assert_double_eq_tol(l.bwd_end[1], 3.0 / 4, TOL);
    /* One layer without a backward time: FLOPs again. */
    l.layer[1].bwd_ms = NAN;
    sim_layers_finish(&l);
    ck_assert(!l.measured);
    ck_assert_double_eq_tol(l.bwd_end[2], 5.0 / 9, TOL);
    set3(&l, 0, 0, 0);
    ck_assert_double_eq_tol(l.bwd_end[2], 5.0 / 9, TOL);
    ck_assert_double_eq_tol(l.bwd_end[1], 7.0 / 9, TOL);
    sim_layers_fini(&l);
}
END_TEST

START_TEST(built_in_models_layers_add_up_to_their_flops_and_parameters)
{
    model_config cfg;
    model_config_default(&cfg);
    cfg.n_hidden = 2;
    cfg.hidden[0] = 37;
    cfg.hidden[1] = 11;
    const char *names[][5] = {
        { "fc" }, { "fc" }, { "fc1", "fc2", "fc3" }, { "conv1", "conv2", "fc1", "fc2" }
    };
    size_t counts[] = { 1, 1, 3, 4 };
    for (size_t m = 0; model_at(m) != NULL; m++) {
        const model_ops *ops = model_at(m);
        sim_layers l = { 0 };
        ck_assert_int_eq(model_layers(ops, &cfg, &l, NULL), SIM_OK);
        ck_assert_uint_eq(l.n, counts[m]);
        for (size_t i = 0; i < l.n; i++)
            ck_assert_str_eq(l.layer[i].name, names[m][i]);
        ck_assert_uint_eq(sim_layers_params(&l), ops->num_params(&cfg));
        ck_assert_double_eq(sim_layers_flops(&l), ops->flops_forward(&cfg));
        sim_layers_fini(&l);
    }
}
END_TEST

/* Writes `text` to a temporary file and returns its malloc'd path. */
static char *write_tmp(const char *text)
{
    char *dir = harness_tmpdir("layers");
    char *path = malloc(strlen(dir) + 16);
    ck_assert_ptr_nonnull(path);
    sprintf(path, "%s/p.csv", dir);
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs(text, f);
    fclose(f);
    free(dir);
    return path;
}

static void expect_bad(const char *text, const char *msg_after_file)
{
    char *path = write_tmp(text);
    sim_layers l = { 0 };
    sim_err err;
    sim_err_clear(&err);
    ck_assert_int_eq(sim_layers_read_csv(&l, path, "$.compute.profile", &err), SIM_ESCENARIO);
    ck_assert_str_eq(err.path, "$.compute.profile");
    char want[512];
    snprintf(want, sizeof(want), "%s%s", path, msg_after_file);
    ck_assert_str_eq(err.msg, want);
    ck_assert_ptr_null(l.layer);
    remove(path);
    free(path);
}

START_TEST(profile_csvs_are_read_and_bad_ones_named_by_line_and_column)
{
    char *path = write_tmp("# a comment\nname,params,forward_flops,forward_ms,backward_ms\n"
                           "conv1, 9408, 2.36e8, 0.5, 1.0\nfc,513000,1.026e6,0.25,0.75\n");
    sim_layers l = { 0 };
    ck_assert_int_eq(sim_layers_read_csv(&l, path, "$.compute.profile", NULL), SIM_OK);
    ck_assert_uint_eq(l.n, 2);
    ck_assert_str_eq(l.layer[0].name, "conv1");
    ck_assert_uint_eq(l.layer[1].params, 513000);
    ck_assert_double_eq(l.layer[0].fwd_flops, 2.36e8);
    ck_assert(l.measured);
    ck_assert_double_eq_tol(l.bwd_end[1], 1.5 / 2.5, TOL);
    sim_layers_fini(&l);
    remove(path);
    free(path);
    expect_bad("layer,params,forward_flops\nx,1,2\n",
               ":1: header must be name,params,forward_flops[,forward_ms,backward_ms]");
    expect_bad("name,params,forward_flops\nx,1.5,2\n",
               ":2: params: must be an integer in [0, 1e15], got \"1.5\"");
    expect_bad("name,params,forward_flops\nx,1,-2\n",
               ":2: forward_flops: must be a finite number >= 0, got \"-2\"");
    expect_bad("name,params,forward_flops\nx,1\n", ":2: expected 3 fields, got 2");
    expect_bad("name,params,forward_flops\n", ": no layers");
    sim_layers missing = { 0 };
    sim_err err;
    ck_assert_int_eq(sim_layers_read_csv(&missing, "tests/data/no-such.csv", "$.p", &err), SIM_EIO);
}
END_TEST

/* ---- a protocol that checks the gradient times at every iteration's end ---- */

typedef struct rprobe {
    uint64_t checked; /* iterations whose layer times were checked */
    size_t layers;
    sim_time start[8]; /* when each worker's iteration started */
} rprobe;

static int rp_configure(void *state, sim_cfg *cfg, const sim_scenario *sc, sim_err *err)
{
    (void)state;
    (void)sc;
    (void)err;
    (void)cfg;
    return SIM_OK;
}

static int rp_start(void *state, sim_ctx *ctx, sim_err *err)
{
    rprobe *st = state;
    ck_assert_int_eq(sim_ctx_grad_ready_ns(ctx, 0, 0), SIM_TIME_NEVER);
    for (uint32_t w = 0; w < sim_ctx_workers(ctx); w++) {
        st->start[w] = sim_ctx_now(ctx);
        if (sim_ctx_compute(ctx, w, 0, err) != SIM_OK)
            return err->code;
    }
    return SIM_OK;
}

static int rp_on_event(void *state, sim_ctx *ctx, const sim_event *ev, sim_err *err)
{
    rprobe *st = state;
    if (ev->kind != SIM_EV_COMPUTED)
        return SIM_OK;
    uint32_t w = (uint32_t)ev->dst;
    size_t n;
    const sim_layer *l = sim_ctx_layers(ctx, &n);
    const sim_layers *all = &sim_ctx_scenario(ctx)->layers;
    st->layers = n;
    sim_time end = sim_ctx_now(ctx);
    ck_assert_int_eq(sim_ctx_grad_ready_ns(ctx, w, 0), end);
    sim_time d = end - st->start[w];
    uint64_t bytes = 0;
    for (size_t i = 0; i < n; i++) {
        bytes += sim_ctx_layer_bytes(ctx, i);
        ck_assert(l[i].params > 0);
        ck_assert_int_eq(sim_ctx_grad_ready_ns(ctx, w, i),
                         st->start[w] + llround((double)d * all->bwd_end[i]));
        if (i + 1 < n)
            ck_assert_int_le(sim_ctx_grad_ready_ns(ctx, w, i + 1),
                             sim_ctx_grad_ready_ns(ctx, w, i));
    }
    ck_assert_uint_eq(bytes, sim_ctx_model_bytes(ctx));
    ck_assert(all->bwd_end[n - 1] > all->fwd_end[n - 1]); /* the forward pass comes first */
    st->checked++;
    sim_ctx_count(ctx, w, 1);
    st->start[w] = end;
    return sim_ctx_compute(ctx, w, 0, err);
}

static void rp_report(const void *state, const sim_ctx *ctx, sim_report *out)
{
    const rprobe *st = state;
    (void)ctx;
    sim_report_add(out, "checked", (double)st->checked);
    sim_report_add(out, "layers", (double)st->layers);
}

static const proto_ops rprobe_ops = {
    .name = "rprobe",
    .summary = "test protocol",
    .state_size = sizeof(rprobe),
    .configure = rp_configure,
    .start = rp_start,
    .on_event = rp_on_event,
    .report = rp_report,
};

static const char mlp_json[] =
    "{\"seed\": 5, \"workers\": 3, \"compute\": {\"iteration_ms\": 7.3, \"jitter_sigma\": 0.3},"
    " \"workload\": {\"dataset\": {\"name\": \"synthetic\", \"samples\": 300, \"dim\": 6,"
    " \"classes\": 3}, \"model\": {\"name\": \"mlp\", \"hidden\": [5, 4]}, \"batch\": 4,"
    " \"message_bytes\": 1001},"
    " \"protocol\": {\"name\": \"rprobe\"}, \"stop\": {\"time_s\": 0.2}}";

START_TEST(a_protocol_reads_each_layers_gradient_time_in_backward_order)
{
    sim_err err;
    sim_err_clear(&err);
    sim_scenario *sc = sim_scenario_parse(mlp_json, strlen(mlp_json), "mlp.json", NULL, 0, &err);
    ck_assert_msg(sc != NULL, "%s: %s", err.path, err.msg);
    ck_assert_msg(sim_run_check(sc, &rprobe_ops, &err) == 0, "%s", err.msg);
    ck_assert_uint_eq(sc->layers.n, 3);
    /* fc1 6x5 = 30 MACs, fc2 5x4 = 20, fc3 4x3 = 12: total 62, forward 62 of 186. */
    ck_assert_double_eq_tol(sc->layers.bwd_end[2], (62.0 + 24.0) / 186.0, TOL);
    ck_assert_double_eq_tol(sc->layers.bwd_end[1], (62.0 + 64.0) / 186.0, TOL);
    char *dir = harness_tmpdir("layers-run");
    sim_run_options opt = { .out_dir = dir };
    sim_run_summary sum;
    ck_assert_msg(sim_run(sc, &rprobe_ops, &opt, &sum, &err) == 0, "%s", err.msg);
    ck_assert_double_eq(harness_summary_number(dir, "layers"), 3);
    ck_assert(harness_summary_number(dir, "checked") > 50);
    harness_cleanup(dir);
    sim_scenario_destroy(sc);
}
END_TEST

Suite *test_suite(void)
{
    Suite *s = suite_create("layers");
    TCase *tc = tcase_create("shares");
    tcase_add_test(tc, shares_follow_flops_with_backward_twice_forward);
    tcase_add_test(tc, measured_times_override_flops_and_zero_flops_weigh_alike);
    tcase_add_test(tc, built_in_models_layers_add_up_to_their_flops_and_parameters);
    suite_add_tcase(s, tc);
    TCase *csv = tcase_create("profiles");
    tcase_add_test(csv, profile_csvs_are_read_and_bad_ones_named_by_line_and_column);
    suite_add_tcase(s, csv);
    TCase *run = tcase_create("run");
    tcase_set_timeout(run, 30);
    tcase_add_test(run, a_protocol_reads_each_layers_gradient_time_in_backward_order);
    suite_add_tcase(s, run);
    return s;
}
