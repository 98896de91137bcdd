/* Layer-wise iterations (sim/layers.h): the shares of an iteration's time worked out by hand,
 * the built-in models' layers against their FLOP counts, profile CSVs good and bad, and the
 * per-layer gradient times a protocol reads (sim_ctx_layer_ns at SIM_LAYER_GRAD_READY) in a run. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

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
        ck_assert_uint_eq(sim_layers_params(&l), ops->shape->num_params(&cfg));
        ck_assert_double_eq(sim_layers_flops(&l), ops->shape->flops_forward(&cfg));
        sim_layers_fini(&l);
    }
}
END_TEST

/* Writes text[0..len) to a temporary file and returns its malloc'd path. */
static char *write_tmp_n(const char *text, size_t len)
{
    char *dir = harness_tmpdir("layers");
    char *path = malloc(strlen(dir) + 16);
    ck_assert_ptr_nonnull(path);
    sprintf(path, "%s/p.csv", dir);
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    ck_assert_uint_eq(fwrite(text, 1, len, f), len);
    fclose(f);
    free(dir);
    return path;
}

static char *write_tmp(const char *text)
{
    return write_tmp_n(text, strlen(text));
}

/* Reading text[0..len) fails with SIM_ESCENARIO and the message "FILE" + msg_after_file. */
static void expect_bad_n(const char *text, size_t len, const char *msg_after_file)
{
    char *path = write_tmp_n(text, len);
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

static void expect_bad(const char *text, const char *msg_after_file)
{
    expect_bad_n(text, strlen(text), msg_after_file);
}

static uint64_t fnv1a(const char *s, size_t len)
{
    uint64_t h = UINT64_C(1469598103934665603);
    for (size_t i = 0; i < len; i++)
        h = (h ^ (unsigned char)s[i]) * UINT64_C(1099511628211);
    return h;
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
               ":1: header must be name,params,forward_flops, then any of "
               "forward_ms,backward_ms,kind,forward_bytes,elementwise_bytes");
    expect_bad("name,params,forward_flops\nx,1.5,2\n",
               ":2: params: must be an integer in [0, 1e15], got \"1.5\"");
    expect_bad("name,params,forward_flops\nx,1,-2\n",
               ":2: forward_flops: must be a finite number >= 0, got \"-2\"");
    /* Decimal only, as every text file hetsim reads (strtod took "0x1p3" as 8: issue 38). */
    expect_bad("name,params,forward_flops\nx,1,0x1p3\n",
               ":2: forward_flops: must be a finite number >= 0, got \"0x1p3\"");
    expect_bad("name,params,forward_flops,forward_ms,backward_ms\nx,1,2,0X.8P1,1\n",
               ":2: forward_ms: must be a finite number >= 0, got \"0X.8P1\"");
    expect_bad("name,params,forward_flops\nx,1\n", ":2: expected 3 fields, got 2");
    expect_bad("name,params,forward_flops\n", ": no layers");
    sim_layers missing = { 0 };
    sim_err err;
    ck_assert_int_eq(sim_layers_read_csv(&missing, "tests/data/no-such.csv", "$.p", &err),
                     SIM_ESCENARIO);
}
END_TEST

START_TEST(optional_columns_are_read_by_name_in_any_order)
{
    char *path = write_tmp("name,params,forward_flops,elementwise_bytes,kind,backward_ms,"
                           "forward_bytes,forward_ms\n"
                           "conv1,9408,2.36e8,1.2e7,conv3x3,1.0,3.8e6,0.5\n"
                           "bn1,128,0,0,norm,0.25,6.4e6,0.125\n");
    sim_layers l = { 0 };
    ck_assert_int_eq(sim_layers_read_csv(&l, path, "$.compute.profile", NULL), SIM_OK);
    ck_assert_int_eq(l.layer[0].kind, SIM_KIND_CONV3X3);
    ck_assert_int_eq(l.layer[1].kind, SIM_KIND_NORM);
    ck_assert_double_eq(l.layer[0].ew_bytes, 1.2e7);
    ck_assert_double_eq(l.layer[0].fwd_bytes, 3.8e6);
    ck_assert_double_eq(l.layer[1].fwd_ms, 0.125);
    ck_assert_double_eq(l.layer[1].bwd_ms, 0.25);
    ck_assert(l.measured);
    sim_layers_fini(&l);
    remove(path);
    free(path);
    /* A depthwise convolution has its kind. */
    path = write_tmp("name,params,forward_flops,kind\ndw,288,7.2e6,depthwise\n");
    ck_assert_int_eq(sim_layers_read_csv(&l, path, "$.compute.profile", NULL), SIM_OK);
    ck_assert_int_eq(l.layer[0].kind, SIM_KIND_DEPTHWISE);
    sim_layers_fini(&l);
    remove(path);
    free(path);
    /* Without the columns: kind other, no bytes. */
    path = write_tmp("name,params,forward_flops\nfc,513000,1.026e6\n");
    ck_assert_int_eq(sim_layers_read_csv(&l, path, "$.compute.profile", NULL), SIM_OK);
    ck_assert_int_eq(l.layer[0].kind, SIM_KIND_OTHER);
    ck_assert_double_eq(l.layer[0].fwd_bytes, 0);
    ck_assert_double_eq(l.layer[0].ew_bytes, 0);
    sim_layers_fini(&l);
    remove(path);
    free(path);
    expect_bad("name,params,forward_flops,bytes\nx,1,2,3\n",
               ":1: header: unknown column \"bytes\"");
    expect_bad("name,params,forward_flops,kind,kind\nx,1,2,conv,conv\n",
               ":1: header: repeated column \"kind\"");
    expect_bad("name,params,forward_flops,forward_ms\nx,1,2,3\n",
               ":1: header: forward_ms and backward_ms go together");
    expect_bad("name,params,forward_flops,kind\nx,1,2,lstm\n",
               ":2: kind: must be other, conv3x3, conv, matmul, norm, embedding or depthwise, got "
               "\"lstm\"");
    expect_bad("name,params,forward_flops,forward_bytes\nx,1,2,-3\n",
               ":2: forward_bytes: must be a finite number >= 0, got \"-3\"");
    expect_bad("name,params,forward_flops,kind\nx,1,2\n", ":2: expected 4 fields, got 3");
}
END_TEST

/* A profiler still writing its profile: the rows come through a FIFO in chunks larger than a
 * pipe holds, so reader and writer take turns; the reader cannot rewind it. */
START_TEST(a_profile_written_into_a_fifo_is_read_in_one_pass)
{
    enum {
        ROWS = 6143
    };
    size_t size = 64 + (size_t)ROWS * 40, len = 0;
    char *text = malloc(size);
    ck_assert_ptr_nonnull(text);
    len += (size_t)snprintf(text, size, "# written as it runs\nname,params,forward_flops\n");
    for (int i = 0; i < ROWS; i++)
        len += (size_t)snprintf(text + len, size - len, "layer%d,%d,%d.125\n", i, 977 + 13 * i,
                                2385 + 7 * i);
    char *dir = harness_tmpdir("layers-fifo");
    char path[512];
    snprintf(path, sizeof(path), "%s/growing.csv", dir);
    ck_assert_int_eq(mkfifo(path, 0600), 0);
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) { /* the profiler: writes in chunks of 1000 bytes */
        FILE *f = fopen(path, "w");
        for (size_t at = 0; f != NULL && at < len; at += 1000) {
            fwrite(text + at, 1, len - at < 1000 ? len - at : 1000, f);
            fflush(f);
        }
        _exit(f != NULL && fclose(f) == 0 ? 0 : 1);
    }
    sim_layers l = { 0 };
    sim_err err;
    sim_err_clear(&err);
    int rc = sim_layers_read_csv(&l, path, "$.compute.profile", &err);
    int status = 0;
    ck_assert_int_eq(waitpid(pid, &status, 0), pid);
    ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    ck_assert_msg(rc == SIM_OK, "%s", err.msg);
    ck_assert_uint_eq(l.n, ROWS);
    ck_assert_str_eq(l.layer[ROWS - 1].name, "layer6142");
    ck_assert_uint_eq(l.layer[ROWS - 1].params, 977 + 13 * (ROWS - 1));
    ck_assert_double_eq(l.layer[4321].fwd_flops, 2385 + 7 * 4321 + 0.125);
    ck_assert_uint_eq(l.file_fnv, fnv1a(text, len)); /* every byte, the comment too */
    sim_layers_fini(&l);
    harness_cleanup(dir);
    free(text);
}
END_TEST

/* 18,446 rows of 1e15 parameters and one more row: 2^64 - 1 in all is a model, 2^64 + 1000
 * wrapped to a model of 1000 parameters. */
START_TEST(column_totals_that_would_wrap_or_overflow_are_refused_at_their_row)
{
    size_t size = 128 + 18446 * 32, len = 0;
    char *text = malloc(size);
    ck_assert_ptr_nonnull(text);
    len += (size_t)snprintf(text, size, "name,params,forward_flops\n");
    for (int i = 0; i < 18446; i++)
        len += (size_t)snprintf(text + len, size - len, "p%d,1000000000000000,2.5\n", i);
    snprintf(text + len, size - len, "last,744073709551615,2.5\n");
    char *path = write_tmp(text);
    sim_layers l = { 0 };
    ck_assert_int_eq(sim_layers_read_csv(&l, path, "$", NULL), SIM_OK);
    ck_assert_uint_eq(sim_layers_params(&l), UINT64_MAX);
    sim_layers_fini(&l);
    remove(path);
    free(path);
    snprintf(text + len, size - len, "last,744073709552616,2.5\n");
    expect_bad(text, ":18448: params: the total over the layers exceeds 2^64 - 1");
    free(text);
    /* FLOPs that sum to infinity made every share NaN; totals stay far from it. */
    expect_bad("name,params,forward_flops\na,1,1.5e308\nb,1,1.5e308\n",
               ":2: forward_flops: the total over the layers exceeds 1e300");
    expect_bad("name,params,forward_flops\na,1,6.25e299\nb,1,4.5e299\n",
               ":3: forward_flops: the total over the layers exceeds 1e300");
    expect_bad("name,params,forward_flops,forward_ms,backward_ms\na,1,1,0.5,6.25e299\n"
               "b,1,1,0.25,4.5e299\n",
               ":3: backward_ms: the total over the layers exceeds 1e300");
    expect_bad("name,params,forward_flops,forward_ms,backward_ms\na,1,1,1.7e308,1\n",
               ":2: forward_ms: the total over the layers exceeds 1e300");
}
END_TEST

/* A number below the smallest normal double is read as strtod rounds it, as
 * a trace's and a results file's readers do (issue 38, ninth probe: its ERANGE made 1e-320
 * "must be a finite number >= 0"). */
START_TEST(numbers_below_the_smallest_normal_double_are_read_rounded)
{
    char *path = write_tmp("name,params,forward_flops,forward_ms,backward_ms\n"
                           "a,7,1e-320,2.5e-310,0.5\nb,11,1e-400,0.25,1e-330\nc,13,2.5e8,0.5,1\n");
    sim_layers l = { 0 };
    sim_err err;
    sim_err_clear(&err);
    ck_assert_msg(sim_layers_read_csv(&l, path, "$", &err) == SIM_OK, "%s", err.msg);
    ck_assert_uint_eq(l.n, 3);
    ck_assert(l.layer[0].fwd_flops > 0.0 && l.layer[0].fwd_flops < 1.1e-320);
    ck_assert(l.layer[0].fwd_ms > 2.4e-310 && l.layer[0].fwd_ms < 2.6e-310);
    ck_assert(l.layer[1].fwd_flops == 0.0 && l.layer[1].bwd_ms == 0.0);
    ck_assert_uint_eq(sim_layers_params(&l), 31);
    sim_layers_fini(&l);
    remove(path);
    free(path);
}
END_TEST

START_TEST(a_byte_order_mark_is_accepted_and_nul_bytes_are_refused)
{
    static const char bom[] = "\xef\xbb\xbfname,params,forward_flops\nconv1,9408,2.36e8\n";
    char *path = write_tmp(bom);
    sim_layers l = { 0 };
    sim_err err;
    sim_err_clear(&err);
    ck_assert_msg(sim_layers_read_csv(&l, path, "$", &err) == SIM_OK, "%s", err.msg);
    ck_assert_uint_eq(l.n, 1);
    ck_assert_str_eq(l.layer[0].name, "conv1");
    ck_assert_uint_eq(l.file_fnv, fnv1a(bom, strlen(bom))); /* the mark is the file's */
    sim_layers_fini(&l);
    remove(path);
    free(path);
    /* Only a mark that opens the file: after a comment it is part of the header. */
    expect_bad("# comment\n\xef\xbb\xbfname,params,forward_flops\nconv1,9408,2.36e8\n",
               ":2: header must be name,params,forward_flops, then any of "
               "forward_ms,backward_ms,kind,forward_bytes,elementwise_bytes");
    static const char nul[] = "name,params,forward_flops\nconv1,9408,2.36e8\0junk\n";
    expect_bad_n(nul, sizeof(nul) - 1, ":2: NUL byte");
    /* A device of endless NUL bytes ended the read nowhere. */
    sim_err_clear(&err);
    ck_assert_int_eq(sim_layers_read_csv(&l, "/dev/zero", "$.p", &err), SIM_ESCENARIO);
    ck_assert_str_eq(err.msg, "/dev/zero:1: NUL byte");
}
END_TEST

START_TEST(shipped_profiles_have_the_published_parameter_counts)
{
    /* torchvision's model documentation; GPT-2 as released (124M, 355M); BERT with its
     * pre-training heads (Hugging Face's BertForPreTraining). */
    static const struct {
        const char *name;
        uint64_t params;
        size_t layers;
    } want[] = {
        { "resnet18", 11689512, 41 },     { "resnet50", 25557032, 107 },
        { "resnet101", 44549160, 209 },   { "vgg16", 138357544, 16 },
        { "mobilenet_v2", 3504872, 105 }, { "densenet121", 7978856, 242 },
        { "gpt2", 124439808, 26 },        { "gpt2-medium", 354823168, 50 },
        { "bert-base", 110106428, 28 },   { "bert-large", 336226108, 52 },
    };
    for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
        char path[1024];
        ck_assert_msg(sim_layers_find_profile(want[i].name, path, sizeof(path)), "%s",
                      want[i].name);
        sim_layers l = { 0 };
        ck_assert_int_eq(sim_layers_read_csv(&l, path, "$", NULL), SIM_OK);
        ck_assert_uint_eq(sim_layers_params(&l), want[i].params);
        ck_assert_uint_eq(l.n, want[i].layers);
        ck_assert(sim_layers_flops(&l) > 0);
        sim_layers_fini(&l);
    }
    char path[64];
    ck_assert(!sim_layers_find_profile("../profiles/resnet50", path, sizeof(path)));
    ck_assert(!sim_layers_find_profile("no-such-model", path, sizeof(path)));
}
END_TEST

/* ---- a protocol that checks the gradient times at every iteration's end ---- */

typedef struct rprobe {
    uint64_t checked; /* iterations whose layer times were checked */
    size_t layers;
    sim_time start[8];         /* when each worker's iteration started */
    sim_time dmin[8], dmax[8]; /* shortest and longest iteration of each worker */
} rprobe;

/* The scenario's layers, whose shares the probe checks the times against: a protocol is told
 * no scenario, so the test hands them over before it runs the probe. */
static const sim_layers *probe_layers;

static int rp_configure(void *state, sim_cfg *cfg, const proto_setup *setup, sim_err *err)
{
    (void)state;
    (void)setup;
    (void)err;
    (void)cfg;
    return SIM_OK;
}

static int rp_start(void *state, sim_ctx *ctx, sim_err *err)
{
    rprobe *st = state;
    ck_assert_int_eq(sim_ctx_layer_ns(ctx, 0, 0, SIM_LAYER_GRAD_READY), SIM_TIME_NEVER);
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
    const sim_layers *all = probe_layers;
    st->layers = n;
    sim_time end = sim_ctx_now(ctx);
    ck_assert_int_eq(sim_ctx_layer_ns(ctx, w, 0, SIM_LAYER_GRAD_READY), end);
    sim_time d = end - st->start[w];
    if (st->dmin[w] == 0 || d < st->dmin[w])
        st->dmin[w] = d;
    if (d > st->dmax[w])
        st->dmax[w] = d;
    uint64_t bytes = 0;
    for (size_t i = 0; i < n; i++) {
        bytes += sim_ctx_layer_bytes(ctx, i);
        ck_assert(l[i].params > 0);
        ck_assert_int_eq(sim_ctx_layer_ns(ctx, w, i, SIM_LAYER_GRAD_READY),
                         st->start[w] + llround((double)d * all->bwd_end[i]));
        if (i + 1 < n)
            ck_assert_int_le(sim_ctx_layer_ns(ctx, w, i + 1, SIM_LAYER_GRAD_READY),
                             sim_ctx_layer_ns(ctx, w, i, SIM_LAYER_GRAD_READY));
    }
    ck_assert_uint_eq(bytes, sim_ctx_layer_bytes(ctx, SIM_LAYERS_ALL));
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
    static const char *const dmin[] = { "dmin0", "dmin1", "dmin2" };
    static const char *const dmax[] = { "dmax0", "dmax1", "dmax2" };
    for (uint32_t w = 0; w < 3; w++) { /* sim_report_add keeps the keys: static strings */
        sim_report_add(out, dmin[w], (double)st->dmin[w]);
        sim_report_add(out, dmax[w], (double)st->dmax[w]);
    }
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
    probe_layers = &sc->layers;
    sim_run_options opt = { .out_dir = dir };
    sim_run_summary sum;
    ck_assert_msg(sim_run(sc, &rprobe_ops, &opt, &sum, &err) == 0, "%s", err.msg);
    ck_assert_double_eq(harness_summary_number(dir, "layers"), 3);
    ck_assert(harness_summary_number(dir, "checked") > 50);
    harness_cleanup(dir);
    sim_scenario_destroy(sc);
}
END_TEST

/* Loads `json` (as tests/profile.json, so relative profile paths resolve in tests/) with the
 * probe protocol and runs it; returns the scenario and leaves the run directory in *dir. */
static sim_scenario *run_probe(const char *json, const char *const *sets, size_t nsets, char **dir)
{
    sim_err err;
    sim_err_clear(&err);
    sim_scenario *sc =
        sim_scenario_parse(json, strlen(json), "tests/profile.json", sets, nsets, &err);
    ck_assert_msg(sc != NULL, "%s: %s", err.path, err.msg);
    ck_assert_msg(sim_run_check(sc, &rprobe_ops, &err) == 0, "%s", err.msg);
    *dir = harness_tmpdir("layers-profile");
    probe_layers = &sc->layers;
    sim_run_options opt = { .out_dir = *dir };
    sim_run_summary sum;
    ck_assert_msg(sim_run(sc, &rprobe_ops, &opt, &sum, &err) == 0, "%s", err.msg);
    return sc;
}

static const char resnet_json[] =
    "{\"seed\": 3, \"workers\": 3, \"compute\": {\"profile\": \"resnet50\", \"device\": \"v100\","
    " \"efficiency\": 0.4}, \"workload\": {\"model\": {\"name\": \"none\"}, \"batch\": 32},"
    " \"protocol\": {\"name\": \"rprobe\"}, \"stop\": {\"time_s\": 2}}";

START_TEST(a_profiles_iteration_on_a_device_lasts_flops_times_batch_over_peak_times_efficiency)
{
    char *dir;
    sim_scenario *sc = run_probe(resnet_json, NULL, 0, &dir);
    /* resnet50: 8,178,368,512 forward FLOPs per sample (tools/profile_torchvision.py); x3 for
     * forward and backward, x32 samples, over 15.7 TFLOP/s x 0.4: 125,019,646.04 ns. */
    ck_assert_double_eq(sim_layers_flops(&sc->layers), 8178368512.0);
    ck_assert_int_eq(sc->iteration_ns, 125019646);
    ck_assert_int_eq(sc->layers.n, 107);
    ck_assert_uint_eq(sc->message_bytes, 4 * UINT64_C(25557032));
    /* Its resolved form (run.json) loads again and times the same: no iteration_ms or gflops
     * default is written beside the device, which refuses both (found by fuzz_scenario). */
    char *text = sim_scenario_resolved(sc, false);
    ck_assert_ptr_nonnull(text);
    ck_assert_ptr_null(strstr(text, "iteration_ms"));
    ck_assert_ptr_null(strstr(text, "gflops"));
    sim_err err;
    sim_scenario *again =
        sim_scenario_parse(text, strlen(text), "tests/profile.json", NULL, 0, &err);
    ck_assert_msg(again != NULL, "%s: %s", err.path, err.msg);
    ck_assert_int_eq(again->iteration_ns, 125019646);
    sim_scenario_destroy(again);
    free(text);
    for (int w = 0; w < 3; w++) {
        char key[16];
        snprintf(key, sizeof(key), "dmin%d", w);
        ck_assert_double_eq(harness_summary_number(dir, key), 125019646);
        snprintf(key, sizeof(key), "dmax%d", w);
        ck_assert_double_eq(harness_summary_number(dir, key), 125019646);
    }
    harness_cleanup(dir);
    sim_scenario_destroy(sc);
}
END_TEST

START_TEST(a_device_list_gives_each_worker_its_own_peak)
{
    static const char *const sets[] = {
        "compute.device=[{\"device\": \"v100\", \"count\": 2}, {\"device\": \"1080ti\", "
        "\"count\": 1}]"
    };
    char *dir;
    sim_scenario *sc = run_probe(resnet_json, sets, 1, &dir);
    ck_assert_double_eq(sc->speeds[1], 1.0);
    ck_assert_double_eq_tol(sc->speeds[2], 11.34 / 15.7, 1e-15);
    ck_assert_double_eq(harness_summary_number(dir, "dmin1"), 125019646);
    /* 3 x 8,178,368,512 x 32 / (11.34e12 x 0.4) = 173,087,164.28 ns: the base of worker 0
     * (rounded to the ns) over the speed, so within a nanosecond. */
    ck_assert_double_eq_tol(harness_summary_number(dir, "dmin2"), 173087164, 1.01);
    ck_assert_double_eq_tol(harness_summary_number(dir, "dmax2"), 173087164, 1.01);
    harness_cleanup(dir);
    sim_scenario_destroy(sc);
}
END_TEST

START_TEST(measured_profiles_and_gflops_set_the_base_time)
{
    static const char *const measured[] = { "compute={\"profile\": \"data/profile_measured.csv\"}",
                                            "workload.message_bytes=4000" };
    char *dir;
    sim_scenario *sc = run_probe(resnet_json, measured, 2, &dir);
    /* Forward 1.25 + 0.5 ms, backward 2.5 + 0.75 ms: 5 ms; gradients of layer 1 at 1.75 +
     * 0.75 = 2.5 ms. */
    ck_assert_int_eq(sc->iteration_ns, 5000000);
    ck_assert(sc->layers.measured);
    ck_assert_int_eq(sim_layers_ready_offset_ns(&sc->layers, sc->iteration_ns, 1), 2500000);
    ck_assert_uint_eq(sc->message_bytes, 4000);
    ck_assert_double_eq(harness_summary_number(dir, "dmax0"), 5000000);
    harness_cleanup(dir);
    sim_scenario_destroy(sc);
    static const char *const gflops[] = { "compute={\"profile\": \"resnet18\", \"gflops\": 7000}" };
    sc = run_probe(resnet_json, gflops, 1, &dir);
    ck_assert_double_eq(sim_layers_flops(&sc->layers), 3628146688.0);
    /* 3 x 3,628,146,688 x 32 / 7000 = 49,757,440.29 ns. */
    ck_assert_int_eq(sc->iteration_ns, 49757440);
    ck_assert_uint_eq(sc->message_bytes, 4 * UINT64_C(11689512));
    harness_cleanup(dir);
    sim_scenario_destroy(sc);
}
END_TEST

START_TEST(a_layers_bytes_are_floors_of_its_cumulative_share)
{
    /* Parameters 1, 2 and 4 of 7; 1000 bytes: 1000/7 a parameter, cumulative floors 142,
     * 428 and 1000. */
    sim_layers l = { 0 };
    ck_assert_int_eq(sim_layers_init(&l, 3, NULL), SIM_OK);
    l.layer[0].params = 1;
    l.layer[1].params = 2;
    l.layer[2].params = 4;
    sim_layers_finish(&l);
    ck_assert_uint_eq(sim_layers_bytes(&l, 1000, 0), 142);
    ck_assert_uint_eq(sim_layers_bytes(&l, 1000, 1), 286);
    ck_assert_uint_eq(sim_layers_bytes(&l, 1000, 2), 572);
    ck_assert_uint_eq(sim_layers_bytes(&l, 1000, 3), 0);
    /* No parameters at all: the whole message on layer 0. */
    for (size_t i = 0; i < 3; i++)
        l.layer[i].params = 0;
    sim_layers_finish(&l);
    ck_assert_uint_eq(sim_layers_bytes(&l, 1000, 0), 1000);
    ck_assert_uint_eq(sim_layers_bytes(&l, 1000, 2), 0);
    sim_layers_fini(&l);
}
END_TEST

/* The documented maximum of layers with DDP's buckets of 25 MiB: each layer's bytes were
 * summed over the layers before it, per layer (20 s of set-up in a release build, minutes
 * under the sanitizers); in linear time the run ends well within the case's timeout. */
START_TEST(a_profile_of_the_most_layers_sets_up_and_runs_in_linear_time)
{
    char *dir = harness_tmpdir("layers-max");
    size_t size = 64 + (size_t)SIM_LAYERS_MAX * 32, len = 0;
    char *text = malloc(size);
    ck_assert_ptr_nonnull(text);
    len += (size_t)snprintf(text, size, "name,params,forward_flops\n");
    for (int i = 0; i < SIM_LAYERS_MAX; i++)
        len += (size_t)snprintf(text + len, size - len, "l%d,%d,%d\n", i, 1000 + i % 977,
                                200000 + i % 1313);
    harness_write(dir, "max.csv", text);
    free(text);
    char json[1024];
    snprintf(json, sizeof(json),
             "{\"seed\": 7, \"workers\": 2, \"compute\": {\"iteration_ms\": 20, \"profile\":"
             " \"%s/max.csv\"}, \"workload\": {\"model\": {\"name\": \"none\"}}, \"protocol\":"
             " {\"name\": \"allreduce\", \"bucket_mb\": 25}, \"stop\": {\"iterations\": 2}}",
             dir);
    sim_scenario *sc = harness_load(json, "max.json", NULL, 0);
    ck_assert_uint_eq(sc->layers.n, SIM_LAYERS_MAX);
    /* 4 bytes a parameter: 100,000 layers of 1000 + (i mod 977) parameters. */
    uint64_t bytes = 0;
    for (size_t i = 0; i < SIM_LAYERS_MAX; i++)
        bytes += sim_layers_bytes(&sc->layers, sc->message_bytes, i);
    ck_assert_uint_eq(bytes, sc->message_bytes);
    ck_assert_uint_eq(sc->message_bytes, 4 * sim_layers_params(&sc->layers));
    char *out = harness_tmpdir("layers-max-run");
    sim_run_options opt = { .out_dir = out };
    sim_err err;
    ck_assert_msg(sim_run(sc, proto_find("allreduce"), &opt, NULL, &err) == SIM_OK, "%s", err.msg);
    ck_assert_double_eq(harness_summary_number(out, "buckets"), 24); /* a first of 1 MiB */
    harness_cleanup(out);
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
    tcase_add_test(tc, a_layers_bytes_are_floors_of_its_cumulative_share);
    suite_add_tcase(s, tc);
    TCase *csv = tcase_create("profiles");
    tcase_add_test(csv, profile_csvs_are_read_and_bad_ones_named_by_line_and_column);
    tcase_add_test(csv, optional_columns_are_read_by_name_in_any_order);
    tcase_add_test(csv, shipped_profiles_have_the_published_parameter_counts);
    tcase_add_test(csv, a_profile_written_into_a_fifo_is_read_in_one_pass);
    tcase_add_test(csv, column_totals_that_would_wrap_or_overflow_are_refused_at_their_row);
    tcase_add_test(csv, a_byte_order_mark_is_accepted_and_nul_bytes_are_refused);
    tcase_add_test(csv, numbers_below_the_smallest_normal_double_are_read_rounded);
    suite_add_tcase(s, csv);
    TCase *run = tcase_create("run");
    tcase_set_timeout(run, 30);
    tcase_add_test(run, a_protocol_reads_each_layers_gradient_time_in_backward_order);
    tcase_add_test(
        run, a_profiles_iteration_on_a_device_lasts_flops_times_batch_over_peak_times_efficiency);
    tcase_add_test(run, a_device_list_gives_each_worker_its_own_peak);
    tcase_add_test(run, measured_profiles_and_gflops_set_the_base_time);
    suite_add_tcase(s, run);
    TCase *scale = tcase_create("scale");
    tcase_set_timeout(scale, 10);
    tcase_add_test(scale, a_profile_of_the_most_layers_sets_up_and_runs_in_linear_time);
    suite_add_tcase(s, scale);
    return s;
}
