/* The device roofline (scenario/roofline.h, scenario/device.h): layer times worked out by hand on a
 * made-up device, the first layer's backward pass, 16-bit precisions and the 3x3 gain, the
 * depthwise convolutions' rate, NCHW's transposes at 16 bits, the fixed time of a kernel and
 * the optimizer's step; a profile on a catalogued device timed by it (base time, shares, mixed
 * devices, the layout) unless compute.efficiency overrides it; and the catalogue's entries. */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include <check.h>

#include "harness.h"
#include "scenario/device.h"
#include "scenario/roofline.h"
#include "sim/layers.h"

/* Sums of a few products of exact decimal inputs: within a few ulps of the hand value. */
#define REL 1e-13

static void eq_rel(double got, double want)
{
    ck_assert_msg(fabs(got - want) <= REL * fabs(want), "got %.17g, want %.17g", got, want);
}

/* The fixed time of a kernel. */
#define K SIM_ROOFLINE_KERNEL_S

/* A made-up device: 8 TFLOP/s in FP32 and 64 in FP16 (twice FP32 on its CUDA cores); 500 GB/s
 * of which 0.8 attained. */
static const sim_device dev = {
    .name = "made-up",
    .label = "made-up",
    .peak_flops = { 8e12, 0, 64e12, 0 },
    .mem_bps = 5e11,
    .vector16 = 2,
    .source = "tests",
    .mem_frac = 0.8,
    .mem_source = "tests",
    .shares = &(const sim_shares){ .conv = { 0.5, 0, 0.25, 0 }, .matmul = { 0.25, 0, 0.5, 0 } },
    .fit = "tests",
};

/* Four layers: a convolution (layer 0), a norm, a 3x3 convolution and a matrix product whose
 * weights outweigh its activations. */
static void four_layers(sim_layers *l)
{
    ck_assert_int_eq(sim_layers_init(l, 4, NULL), SIM_OK);
    sim_layer *y = l->layer;
    y[0] = (sim_layer){ .params = 1000,
                        .fwd_flops = 2.5e9,
                        .kind = SIM_KIND_CONV,
                        .fwd_bytes = 1.5e6,
                        .ew_bytes = 2.0e6 };
    y[1] =
        (sim_layer){ .params = 64, .kind = SIM_KIND_NORM, .fwd_bytes = 3.0e6, .ew_bytes = 1.0e6 };
    y[2] = (sim_layer){
        .params = 36864, .fwd_flops = 7.8e9, .kind = SIM_KIND_CONV3X3, .fwd_bytes = 1.0e6
    };
    y[3] = (sim_layer){
        .params = 2500000, .fwd_flops = 1e6, .kind = SIM_KIND_MATMUL, .fwd_bytes = 1e4
    };
    for (int i = 0; i < 4; i++)
        y[i].fwd_ms = y[i].bwd_ms = NAN;
    sim_layers_finish(l);
}

START_TEST(a_layer_takes_the_larger_of_its_flops_and_bytes_then_its_elementwise_bytes)
{
    sim_layers l = { 0 };
    four_layers(&l);
    sim_roofline r;
    sim_roofline_init(&r, &dev, SIM_PREC_FP32);
    double f, b;
    /* Batch 16, memory at 4e11 B/s. Layer 0: FLOPs 2.5e9 x 16 / 4e12 = 0.01 s against bytes
     * (1.5e6 x 16 + 4 x 1000) / 4e11 = 6.001e-5 s; element-wise 2e6 x 16 / 4e11 = 8e-5 s; a
     * kernel for each. Its backward pass computes no input gradient: its own part and kernel
     * once, the element-wise part twice: 0.01 + K + 1.6e-4 + 2K. */
    sim_roofline_layer(&r, &l.layer[0], true, 16, &f, &b);
    eq_rel(f, 0.01008 + 2 * K);
    eq_rel(b, 0.01016 + 3 * K);
    /* Layer 0's backward as any other layer's: its own part twice. */
    sim_roofline_layer(&r, &l.layer[0], false, 16, &f, &b);
    eq_rel(b, 0.02016 + 4 * K);
    /* The norm, no FLOPs: (3e6 x 16 + 256) / 4e11 = 1.2000064e-4, element-wise 4e-5. */
    sim_roofline_layer(&r, &l.layer[1], false, 16, &f, &b);
    eq_rel(f, 1.6000064e-4 + 2 * K);
    eq_rel(b, 3.2000128e-4 + 4 * K);
    /* The 3x3 convolution at 4e12 x the FP32 gain: 7.8e9 x 16 / (4e12 x gain); no element-wise
     * bytes, one kernel. */
    double g = sim_device_conv3x3_gain(SIM_PREC_FP32);
    ck_assert(g > 1.0);
    sim_roofline_layer(&r, &l.layer[2], false, 16, &f, &b);
    eq_rel(f, 7.8e9 * 16 / (4e12 * g) + K);
    eq_rel(b, 2 * 7.8e9 * 16 / (4e12 * g) + 2 * K);
    /* The product is memory-bound by its weights: FLOPs 1.6e7 / 2e12 = 8e-6 s against
     * (1.6e5 + 1e7) / 4e11 = 2.54e-5 s. */
    sim_roofline_layer(&r, &l.layer[3], false, 16, &f, &b);
    eq_rel(f, 2.54e-5 + K);
    eq_rel(b, 5.08e-5 + 2 * K);
    /* The iteration adds the optimizer's step: 2537928 parameters x 24 bytes / 4e11. */
    eq_rel(sim_roofline_iteration_s(&r, &l, 16), 0.01008 + 0.01016 + 1.6000064e-4 + 3.2000128e-4 +
                                                     3 * 7.8e9 * 16 / (4e12 * g) + 2.54e-5 +
                                                     5.08e-5 + 17 * K + 2537928 * 24 / 4e11);
    sim_layers_fini(&l);
}
END_TEST

START_TEST(sixteen_bit_precisions_halve_the_bytes_and_3x3_convolutions_gain_in_fp32_only)
{
    sim_layers l = { 0 };
    four_layers(&l);
    sim_roofline r;
    sim_roofline_init(&r, &dev, SIM_PREC_FP16);
    ck_assert_double_eq(sim_device_conv3x3_gain(SIM_PREC_FP16), 1.0);
    double f, b;
    /* Convolutions at 16e12, products at 32e12, bytes at half: layer 0's FLOPs 2.5e-3 s
     * against 3.0005e-5 s, element-wise 4e-5 s. Kernels take their fixed time whatever the
     * precision. */
    sim_roofline_layer(&r, &l.layer[0], true, 16, &f, &b);
    eq_rel(f, 2.54e-3 + 2 * K);
    eq_rel(b, 2.58e-3 + 3 * K);
    sim_roofline_layer(&r, &l.layer[1], false, 16, &f, &b);
    eq_rel(f, 8.000032e-5 + 2 * K);
    eq_rel(b, 1.6000064e-4 + 4 * K);
    /* No gain on tensor cores: 1.248e11 / 16e12. */
    sim_roofline_layer(&r, &l.layer[2], false, 16, &f, &b);
    eq_rel(f, 7.8e-3 + K);
    sim_roofline_layer(&r, &l.layer[3], false, 16, &f, &b);
    eq_rel(f, 1.27e-5 + K);
    /* The optimizer's step is not halved: weights and their states stay in FP32. */
    eq_rel(sim_roofline_iteration_s(&r, &l, 16), 2.54e-3 + 2.58e-3 + 8.000032e-5 + 1.6000064e-4 +
                                                     3 * 7.8e-3 + 3 * 1.27e-5 + 17 * K +
                                                     2537928 * 24 / 4e11);
    sim_layers_fini(&l);
}
END_TEST

START_TEST(an_nchw_convolution_at_16_bits_adds_its_transposes_to_the_roofline)
{
    sim_layers l = { 0 };
    four_layers(&l);
    sim_roofline r;
    sim_roofline_init(&r, &dev, SIM_PREC_FP16);
    sim_roofline_layout(&r, true);
    double f, b, T = SIM_ROOFLINE_TRANSPOSES * K;
    ck_assert_double_eq(SIM_ROOFLINE_TRANSPOSES, 3.0);
    /* Layer 0, a convolution: its roofline at 16 bits (FLOPs 2.5e-3 s) plus its own bytes,
     * (1.5e6 x 16 + 4 x 1000) x 0.5 / 4e11 = 3.0005e-5 s, read and written once more
     * (6.001e-5 s) in three transpose kernels; element-wise 4e-5 s as in NHWC. Its backward
     * pass: the own part and its transposes once (no input gradient). */
    sim_roofline_layer(&r, &l.layer[0], true, 16, &f, &b);
    eq_rel(f, 2.5e-3 + 6.001e-5 + T + 4e-5 + 2 * K);
    eq_rel(b, 2.5e-3 + 6.001e-5 + T + K + 8e-5 + 2 * K);
    /* The norm and the product do not transpose. */
    sim_roofline_layer(&r, &l.layer[1], false, 16, &f, &b);
    eq_rel(f, 8.000032e-5 + 2 * K);
    sim_roofline_layer(&r, &l.layer[3], false, 16, &f, &b);
    eq_rel(f, 1.27e-5 + K);
    /* The 3x3 convolution: 7.8e-3 s, and (1e6 x 16 + 4 x 36864) x 0.5 / 4e11 = 2.018432e-5 s
     * twice; its backward pass twice the forward's own part, transposes included. */
    sim_roofline_layer(&r, &l.layer[2], false, 16, &f, &b);
    eq_rel(f, 7.8e-3 + 4.036864e-5 + T + K);
    eq_rel(b, 2 * (7.8e-3 + 4.036864e-5 + T + K));
    /* NHWC, and NCHW at 32 bits, pay none. */
    double nf, nb;
    sim_roofline_layout(&r, false);
    sim_roofline_layer(&r, &l.layer[2], false, 16, &nf, &nb);
    eq_rel(nf, 7.8e-3 + K);
    sim_roofline_init(&r, &dev, SIM_PREC_FP32);
    sim_roofline_layer(&r, &l.layer[2], false, 16, &nf, &nb);
    sim_roofline_layout(&r, true);
    sim_roofline_layer(&r, &l.layer[2], false, 16, &f, &b);
    ck_assert_double_eq(f, nf);
    ck_assert_double_eq(b, nb);
    sim_layers_fini(&l);
}
END_TEST

/* A depthwise 3x3 convolution over 96 channels of 112x112: 2 x 96 x 112 x 112 x 9 FLOPs,
 * reading and writing 96 x 112 x 112 floats. */
static const sim_layer depthwise = { .params = 864,
                                     .fwd_flops = 21676032,
                                     .kind = SIM_KIND_DEPTHWISE,
                                     .fwd_bytes = 9633792,
                                     .fwd_ms = NAN,
                                     .bwd_ms = NAN };

START_TEST(a_depthwise_convolution_does_not_transpose_in_nchw)
{
    const sim_layer y = depthwise;
    sim_roofline r;
    sim_roofline_init(&r, &dev, SIM_PREC_FP16);
    double f, b, nf, nb;
    sim_roofline_layer(&r, &y, false, 64, &nf, &nb);
    sim_roofline_layout(&r, true);
    sim_roofline_layer(&r, &y, false, 64, &f, &b);
    ck_assert_double_eq(f, nf);
    ck_assert_double_eq(b, nb);
}
END_TEST

START_TEST(a_layer_without_bytes_or_kind_is_timed_by_its_flops_as_a_product)
{
    sim_layer y = { .params = 4096, .fwd_flops = 3.75e9, .fwd_ms = NAN, .bwd_ms = NAN };
    sim_roofline r;
    sim_roofline_init(&r, &dev, SIM_PREC_FP32);
    double f, b;
    /* Kind other: the product share, 2e12; weights 16 KiB / 4e11 hide behind the FLOPs. */
    sim_roofline_layer(&r, &y, false, 8, &f, &b);
    eq_rel(f, 3.75e9 * 8 / 2e12 + K);
    eq_rel(b, 2 * 3.75e9 * 8 / 2e12 + 2 * K);
}
END_TEST

START_TEST(a_depthwise_convolution_runs_at_its_share_of_the_fp32_peak_paired_at_16_bits)
{
    const sim_layer y = depthwise;
    double share = sim_device_depthwise_share();
    ck_assert(share > 0 && share < 0.1);
    sim_roofline r;
    /* FP32: 2.1676032e7 x 64 / (8e12 x share), not the convolution share's 4e12; the bytes,
     * (9633792 x 64 + 3456) / 4e11 = 1.54e-3 s, hide behind it. */
    sim_roofline_init(&r, &dev, SIM_PREC_FP32);
    double f, b, want = 21676032.0 * 64 / (8e12 * share);
    ck_assert(want > 1.6e-3);
    sim_roofline_layer(&r, &y, false, 64, &f, &b);
    eq_rel(f, want + K);
    eq_rel(b, 2 * want + 2 * K);
    /* FP16: no tensor cores, paired half-precision arithmetic: twice the FP32 rate. */
    sim_roofline_init(&r, &dev, SIM_PREC_FP16);
    sim_roofline_layer(&r, &y, false, 64, &f, &b);
    eq_rel(f, want / 2 + K);
}
END_TEST

START_TEST(the_optimizers_step_ends_the_first_layers_backward_pass)
{
    sim_layers l = { 0 };
    four_layers(&l);
    sim_roofline r;
    sim_roofline_init(&r, &dev, SIM_PREC_FP32);
    double f, b, lf, lb, s = 0;
    for (size_t i = 0; i < l.n; i++) {
        sim_roofline_times(&r, &l, i, 16, &f, &b);
        sim_roofline_layer(&r, &l.layer[i], i == 0, 16, &lf, &lb);
        ck_assert_double_eq(f, lf);
        /* 2537928 parameters x 24 bytes / 4e11 = 1.5227568e-4 s, after layer 0's gradient. */
        if (i == 0)
            eq_rel(b, lb + 1.5227568e-4);
        else
            ck_assert_double_eq(b, lb);
        s += f + b;
    }
    eq_rel(sim_roofline_update_s(&r, 2537928), 1.5227568e-4);
    ck_assert_double_eq(sim_roofline_iteration_s(&r, &l, 16), s);
    sim_layers_fini(&l);
}
END_TEST

static const char roof_json[] =
    "{\"seed\": 3, \"workers\": 3, \"compute\": {\"profile\": \"data/profile_roofline.csv\","
    " \"device\": \"v100\"}, \"workload\": {\"model\": {\"name\": \"none\"}, \"batch\": 48},"
    " \"protocol\": {\"name\": \"allreduce\"}, \"stop\": {\"iterations\": 3}}";

START_TEST(a_device_times_the_profile_by_its_roofline_and_the_shares_follow_it)
{
    sim_scenario *sc = harness_load(roof_json, "tests/roofline.json", NULL, 0);
    const sim_layers *l = &sc->layers;
    sim_roofline r;
    sim_roofline_init(&r, sim_device_find("v100"), SIM_PREC_FP32);
    double s = sim_roofline_iteration_s(&r, l, 48);
    ck_assert_int_eq(sc->iteration_ns, llround(s * 1e9));
    /* Shares: layer 3's backward ends after the forward pass and its own backward. */
    double fwd[4], bwd[4], total = 0;
    for (size_t i = 0; i < 4; i++) {
        sim_roofline_times(&r, l, i, 48, &fwd[i], &bwd[i]);
        total += fwd[i] + bwd[i];
    }
    ck_assert(!l->measured);
    eq_rel(l->fwd_end[1], (fwd[0] + fwd[1]) / total);
    eq_rel(l->bwd_end[3], (fwd[0] + fwd[1] + fwd[2] + fwd[3] + bwd[3]) / total);
    eq_rel(l->bwd_end[1], 1.0 - (bwd[0]) / total);
    ck_assert(l->bwd_end[0] == 1.0);
    sim_scenario_destroy(sc);
}
END_TEST

START_TEST(other_devices_run_at_their_roofline_time_over_worker_0s)
{
    static const char *const sets[] = {
        "compute.device=[{\"device\": \"v100\", \"count\": 2}, {\"device\": \"k80\", "
        "\"count\": 1}]"
    };
    sim_scenario *sc = harness_load(roof_json, "tests/roofline.json", sets, 1);
    sim_roofline v, k;
    sim_roofline_init(&v, sim_device_find("v100"), SIM_PREC_FP32);
    sim_roofline_init(&k, sim_device_find("k80"), SIM_PREC_FP32);
    double sv = sim_roofline_iteration_s(&v, &sc->layers, 48);
    double sk = sim_roofline_iteration_s(&k, &sc->layers, 48);
    ck_assert_double_eq(sc->speeds[1], 1.0);
    eq_rel(sc->speeds[2], sv / sk);
    /* Not the peak ratio: the memory-bound layers follow the bandwidths. */
    ck_assert(fabs(sc->speeds[2] - 4.365 / 15.7) > 0.01);
    sim_scenario_destroy(sc);
}
END_TEST

START_TEST(compute_layout_nchw_times_the_profile_with_the_transposes_at_16_bits)
{
    static const char *const sets[] = { "compute.precision=\"fp16\"", "compute.layout=\"nchw\"" };
    sim_scenario *sc = harness_load(roof_json, "tests/roofline.json", sets, 2);
    sim_roofline r;
    sim_roofline_init(&r, sim_device_find("v100"), SIM_PREC_FP16);
    sim_roofline_layout(&r, true);
    double s = sim_roofline_iteration_s(&r, &sc->layers, 48);
    ck_assert_int_eq(sc->iteration_ns, llround(s * 1e9));
    sim_roofline_layout(&r, false);
    ck_assert(sim_roofline_iteration_s(&r, &sc->layers, 48) < s);
    sim_scenario_destroy(sc);
}
END_TEST

START_TEST(the_layouts_default_is_recorded_at_16_bits_only)
{
    static const char *const sets[] = { "compute.precision=\"fp16\"" };
    for (size_t n = 0; n < 2; n++) {
        sim_scenario *sc = harness_load(roof_json, "tests/roofline.json", sets, n);
        char *text = sim_scenario_resolved(sc, false);
        ck_assert_ptr_nonnull(text);
        /* At fp32 it acts on nothing: the resolved form (and the hash) stay as they were. */
        if (n == 0)
            ck_assert_ptr_null(strstr(text, "layout"));
        else
            ck_assert_ptr_nonnull(strstr(text, "\"layout\":\"nhwc\""));
        free(text);
        sim_scenario_destroy(sc);
    }
}
END_TEST

START_TEST(efficiency_overrides_the_roofline_with_the_whole_steps_share_of_peak)
{
    static const char *const sets[] = { "compute.efficiency=0.37" };
    sim_scenario *sc = harness_load(roof_json, "tests/roofline.json", sets, 1);
    /* 3 x (236027904 + 231211008 + 4096000) x 48 / (15.7e12 x 0.37) = 11,683,977.85 ns. */
    ck_assert_int_eq(sc->iteration_ns, 11683978);
    /* The shares follow the FLOPs, backward twice forward: bn1 weighs nothing. */
    ck_assert_double_eq(sc->layers.fwd_end[1], sc->layers.fwd_end[0]);
    sim_scenario_destroy(sc);
}
END_TEST

START_TEST(every_device_has_a_bandwidth_attainable_shares_and_their_sources)
{
    size_t n = 0;
    for (const sim_device *d; (d = sim_device_at(n)) != NULL; n++) {
        ck_assert_msg(d->mem_bps > 1e11 && d->mem_frac > 0.5 && d->mem_frac <= 1.0, "%s", d->name);
        ck_assert_msg(strlen(d->source) > 20 && strlen(d->mem_source) > 20 && strlen(d->fit) > 20,
                      "%s", d->name);
        for (int p = 0; p < SIM_PREC_N; p++) {
            bool peak = d->peak_flops[p] > 0;
            ck_assert_msg(peak == (d->shares->conv[p] > 0) && peak == (d->shares->matmul[p] > 0),
                          "%s %s", d->name, sim_precision_name(p));
            ck_assert_msg(d->shares->conv[p] <= 1.0 && d->shares->matmul[p] <= 1.0, "%s", d->name);
        }
        /* Paired half-precision arithmetic where the device has fast FP16, at most twice. */
        bool half = d->peak_flops[SIM_PREC_FP16] > 0;
        ck_assert_msg(half ? d->vector16 >= 1 && d->vector16 <= 2 : d->vector16 == 0, "%s",
                      d->name);
    }
    ck_assert_uint_ge(n, 12);
}
END_TEST

Suite *test_suite(void)
{
    Suite *s = suite_create("roofline");
    TCase *tc = tcase_create("roofline");
    tcase_add_test(tc, a_layer_takes_the_larger_of_its_flops_and_bytes_then_its_elementwise_bytes);
    tcase_add_test(tc,
                   sixteen_bit_precisions_halve_the_bytes_and_3x3_convolutions_gain_in_fp32_only);
    tcase_add_test(tc, a_layer_without_bytes_or_kind_is_timed_by_its_flops_as_a_product);
    tcase_add_test(tc, an_nchw_convolution_at_16_bits_adds_its_transposes_to_the_roofline);
    tcase_add_test(tc, a_depthwise_convolution_does_not_transpose_in_nchw);
    tcase_add_test(tc,
                   a_depthwise_convolution_runs_at_its_share_of_the_fp32_peak_paired_at_16_bits);
    tcase_add_test(tc, the_optimizers_step_ends_the_first_layers_backward_pass);
    suite_add_tcase(s, tc);
    TCase *dv = tcase_create("devices");
    tcase_add_test(dv, a_device_times_the_profile_by_its_roofline_and_the_shares_follow_it);
    tcase_add_test(dv, other_devices_run_at_their_roofline_time_over_worker_0s);
    tcase_add_test(dv, compute_layout_nchw_times_the_profile_with_the_transposes_at_16_bits);
    tcase_add_test(dv, the_layouts_default_is_recorded_at_16_bits_only);
    tcase_add_test(dv, efficiency_overrides_the_roofline_with_the_whole_steps_share_of_peak);
    tcase_add_test(dv, every_device_has_a_bandwidth_attainable_shares_and_their_sources);
    suite_add_tcase(s, dv);
    return s;
}
