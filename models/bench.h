/* Kernel benchmarks for `hetsim bench kernels`: the vector kernels of sim/tensor.h and one
 * training step of the mlp and cnn models, each printed as a JSON line
 * {"name": ..., "value": ..., "unit": ..., "reference": ..., "ratio": ...}
 * in the format of sim/bench.h, where the reference is a limit measured in the same run on
 * the same machine, so that ratios stay meaningful on noisy shared machines.
 *
 * References: the vector kernels are compared with the STREAM triad (sim_tensor_triad),
 * the memory bandwidth a plain loop reaches; a training step is compared with OpenBLAS
 * sgemm running the very matrix products of that step (same shapes, transposes, strides
 * and beta, on buffers laid out like the model's) and nothing else. Both step rates count
 * the model's nominal flops (model_flops_per_sample times the batch), so a step's ratio is
 * the time of its products alone over the time of the whole step.
 *
 * Every time is the best of several repetitions after a warm-up, read from CLOCK_MONOTONIC.
 * Everything is allocated before timing and freed after. OpenBLAS is set to one thread for
 * the rest of the process (runs are single-threaded, DESIGN.md section 5). The whole benchmark
 * takes about 6 s and 0.7 GB of memory (17 vectors of 1e7 floats).
 */
#ifndef MODELS_BENCH_H
#define MODELS_BENCH_H

#include <stdio.h>

#include "sim/err.h"

/* Prints kernels.triad (GB/s, its own reference), kernels.average_1e7 and
 * kernels.mean16_1e7 (GB/s against the triad), kernels.mlp_step and kernels.cnn_step
 * (GFLOP/s against sgemm on the step's products). Returns 0, or SIM_ENOMEM when a buffer
 * cannot be allocated and SIM_ENUMERIC when a training step gives a non-finite loss, with
 * `err` filled. */
int model_bench_kernels(FILE *out, sim_err *err);

#endif
