/* Accelerators: a catalogue of common GPUs with their datasheet peak FLOP/s per precision and
 * memory bandwidth, and the shares of them a training step attains.
 *
 * compute.device names one entry (or one per group of workers); with compute.precision and a
 * profile, the loader times each layer by the device's roofline (scenario/roofline.h): its FLOPs
 * at the attainable rate of its kind (convolutions, matrix products) against its bytes at
 * the attainable bandwidth (docs/scenario.md). compute.efficiency, when given, overrides it
 * with the whole step's share of peak:
 *   3 x forward FLOPs per sample x batch / (peak x efficiency)
 * the 3 being forward plus backward, the backward pass computing two products per forward one.
 * Peaks are dense (no structured sparsity), at boost clock, as the vendor's datasheet or
 * architecture whitepaper gives them; a precision the device has no fast path for is 0. The
 * attainable shares are calibrated against published training throughputs (the calibration
 * points of scenarios/validation/, named in each entry's `fit`) and a streaming benchmark
 * (`mem_source`).
 */
#ifndef SCENARIO_DEVICE_H
#define SCENARIO_DEVICE_H

#include <stddef.h>

typedef enum sim_precision {
    SIM_PREC_FP32 = 0, /* IEEE single precision on the CUDA cores */
    SIM_PREC_TF32 = 1, /* TensorFloat-32 on tensor cores (Ampere and later) */
    SIM_PREC_FP16 = 2, /* half precision on tensor cores, FP32 accumulate (mixed precision) */
    SIM_PREC_BF16 = 3, /* bfloat16 on tensor cores, FP32 accumulate */
    SIM_PREC_N = 4
} sim_precision;

/* The shares of peak a device's kernels attain, per precision: fitted on calibration points,
 * so that the roofline gives their published throughputs (scenarios/validation). */
typedef struct sim_shares {
    double conv[SIM_PREC_N];   /* convolutions, direct FLOP count */
    double matmul[SIM_PREC_N]; /* matrix products (and any other FLOPs) */
} sim_shares;

typedef struct sim_device {
    const char *name;              /* as in scenarios: "v100" */
    const char *label;             /* "NVIDIA Tesla V100 SXM2" */
    double peak_flops[SIM_PREC_N]; /* FLOP/s, 0: no fast path for that precision */
    double mem_bps;                /* DRAM bandwidth, bytes/s */
    double vector16;               /* 16-bit arithmetic on the CUDA cores over FP32's, at
                                      most 2 (paired half-precision instructions); 0 without
                                      fast FP16 */
    const char *source;            /* the datasheet the peaks and the bandwidth come from */
    double mem_frac;               /* share of mem_bps a streaming kernel attains */
    const char *mem_source;        /* the measurement mem_frac comes from */
    const sim_shares *shares;      /* the attainable shares, which several rows may share */
    const char *fit;               /* where the two shares come from */
} sim_device;

/* What a 3x3 convolution of stride 1 gains at `precision` over its direct FLOP count: in
 * FP32 on the CUDA cores, Winograd's algorithm (which cuDNN picks for them), fitted on the
 * calibration points (scenario/device.c); 1 on tensor cores, which run them as products. */
double sim_device_conv3x3_gain(int precision);

/* The share of the CUDA cores' FP32 peak (times vector16 at 16-bit precisions) a depthwise
 * convolution's FLOPs attain: no tensor-core path applies to them, and the kernels PyTorch
 * runs for them are far from peak (fitted on the calibration points, scenario/device.c). */
double sim_device_depthwise_share(void);

/* The device called `name`, or NULL. */
const sim_device *sim_device_find(const char *name);

/* The i-th device in catalogue order, or NULL past the end. */
const sim_device *sim_device_at(size_t i);

/* "fp32", "tf32", "fp16", "bf16"; NULL for a value out of range. */
const char *sim_precision_name(int p);

/* Writes the device names, separated by ", ", into buf (terminated when size > 0). */
void sim_device_list(char *buf, size_t size);

#endif
