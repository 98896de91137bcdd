/* Accelerators: a catalogue of common GPUs with their datasheet peak FLOP/s per precision.
 *
 * compute.device names one entry (or one per group of workers); with compute.precision and
 * compute.efficiency (the share of peak a training step achieves) and a profile's FLOPs the
 * loader sets each worker's base iteration time (docs/scenario.md):
 *   3 x forward FLOPs per sample x batch / (peak x efficiency)
 * the 3 being forward plus backward, the backward pass computing two products per forward one.
 * Peaks are dense (no structured sparsity), at boost clock, as the vendor's datasheet or
 * architecture whitepaper gives them; a precision the device has no fast path for is 0.
 */
#ifndef SIM_DEVICE_H
#define SIM_DEVICE_H

#include <stddef.h>

typedef enum sim_precision {
    SIM_PREC_FP32 = 0, /* IEEE single precision on the CUDA cores */
    SIM_PREC_TF32 = 1, /* TensorFloat-32 on tensor cores (Ampere and later) */
    SIM_PREC_FP16 = 2, /* half precision on tensor cores, FP32 accumulate (mixed precision) */
    SIM_PREC_BF16 = 3, /* bfloat16 on tensor cores, FP32 accumulate */
    SIM_PREC_N = 4
} sim_precision;

typedef struct sim_device {
    const char *name;              /* as in scenarios: "v100" */
    const char *label;             /* "NVIDIA Tesla V100 SXM2" */
    double peak_flops[SIM_PREC_N]; /* FLOP/s, 0: no fast path for that precision */
    const char *source;            /* the datasheet the peaks come from */
} sim_device;

/* The device called `name`, or NULL. */
const sim_device *sim_device_find(const char *name);

/* The i-th device in catalogue order, or NULL past the end. */
const sim_device *sim_device_at(size_t i);

/* "fp32", "tf32", "fp16", "bf16"; NULL for a value out of range. */
const char *sim_precision_name(int p);

/* Writes the device names, separated by ", ", into buf (terminated when size > 0). */
void sim_device_list(char *buf, size_t size);

#endif
