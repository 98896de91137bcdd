/* The roofline: how long a layer's forward and backward passes take on a device.
 *
 * For a batch of B samples at a precision whose elements take e bytes (4 for fp32 and tf32,
 * 2 for fp16 and bf16), with the layer's forward FLOPs F, parameters W, own bytes b and
 * element-wise bytes x per sample (sim/layers.h; bytes are counted at 4 a float):
 *   own      = max(F B / R_kind, (b B + 4 W) (e / 4) / M)
 *   ew       = x B (e / 4) / M
 *   forward  = own + ew + t (1 + [x > 0])
 *   backward = 2 own + 2 ew + 2 t (1 + [x > 0]), the layer's own part (and its kernel) once
 *              only for layer 0 (it computes no input gradient)
 * R_kind is the device's peak at the precision times the attainable share of the layer's
 * kind (convolutions, 3x3 convolutions with their FP32 gain, or matrix products for the
 * rest); a depthwise convolution's FLOPs run on the CUDA cores, at the depthwise share of the
 * FP32 peak, times the device's vector16 at 16-bit precisions (scenario/device.h). M is the
 * datasheet bandwidth times the attainable share. The own operations' bytes hide behind their
 * FLOPs or the reverse (one kernel does both); the element-wise operations after a layer are
 * kernels of their own, memory-bound, and add. The backward pass doubles both (an input
 * gradient and a weight gradient per product; a gradient read and one written per element-wise
 * operation). t is the fixed time of a kernel (SIM_ROOFLINE_KERNEL_S), paid by the layer's own
 * kernel and by its element-wise ones (counted as one when it has element-wise bytes).
 *
 * In the NCHW memory format (compute.layout "nchw") at 16-bit precisions, a convolution on
 * tensor cores (conv and conv3x3, not depthwise) also pays its layout's transposes: cuDNN's
 * tensor-core kernels take NHWC, so it transforms the input and the filter from NCHW and the
 * output back (cuDNN Developer Guide, "Tensor Transformations"), every byte the layer's own
 * operations move read and written once more, in kernels of their own:
 *   transpose = 2 (b B + 4 W) (e / 4) / M + SIM_ROOFLINE_TRANSPOSES t
 * added to own in both passes (twice in the backward pass, once for layer 0's). NHWC (the
 * default, channels_last) pays none, nor do 32-bit precisions.
 *
 * The optimizer's step ends the backward pass, after layer 0's: SIM_ROOFLINE_UPDATE_BYTES a
 * parameter at M, whatever the precision (weights and their states stay in FP32). An
 * iteration is the sum over the layers and the step.
 */
#ifndef SCENARIO_ROOFLINE_H
#define SCENARIO_ROOFLINE_H

#include <stdbool.h>
#include <stdint.h>

#include "scenario/device.h"
#include "sim/layers.h"

/* Seconds a kernel costs whatever its work: launching it and filling the GPU. Measured:
 * 80 broadcast kernels launched one by one take 260 us, 70 us as one CUDA graph (JuliaGPU
 * CUDA.jl's documentation, "Graphs", cuda.juliagpu.org/dev/usage/graphs): 3.25 us a kernel;
 * PyTorch's operator benchmark gives 3.3 us for an operation launching none
 * (pytorch/pytorch#32194: split on CUDA). */
#define SIM_ROOFLINE_KERNEL_S 3.25e-6

/* Bytes a parameter's update moves: a step of SGD with momentum reads the weight, its
 * gradient and its momentum and writes the weight and the momentum (5 x 4 bytes), and the
 * gradient is zeroed for the next iteration (4). */
#define SIM_ROOFLINE_UPDATE_BYTES 24.0

/* Transpose kernels of a convolution in NCHW at 16 bits: its input, its filter, its output. */
#define SIM_ROOFLINE_TRANSPOSES 3.0

typedef struct sim_roofline {
    double rate[SIM_KIND_N]; /* attainable FLOP/s of each layer kind */
    double mem_bps;          /* attainable bytes/s */
    double elem;             /* an element's bytes over 4: 1, or 0.5 for 16-bit precisions */
    bool transpose;          /* convolutions pay NCHW's transposes (16 bits, NCHW) */
} sim_roofline;

/* Sets r for device d at `precision` (a sim_precision the device has a peak for), in the
 * NHWC memory format. */
void sim_roofline_init(sim_roofline *r, const sim_device *d, int precision);

/* Sets r's memory format: NCHW (`nchw`) or NHWC; only 16-bit precisions' convolutions
 * transpose. */
void sim_roofline_layout(sim_roofline *r, bool nchw);

/* Seconds of layer y's forward and backward passes over `batch` samples; `first`: it is
 * layer 0. The optimizer's step is not in them (sim_roofline_times). */
void sim_roofline_layer(const sim_roofline *r, const sim_layer *y, bool first, uint32_t batch,
                        double *fwd_s, double *bwd_s);

/* Seconds of the optimizer's step over `params` parameters. */
double sim_roofline_update_s(const sim_roofline *r, uint64_t params);

/* Seconds of layer i's forward and backward passes in an iteration of l over `batch`
 * samples: sim_roofline_layer's, with the optimizer's step of every layer's parameters
 * ending layer 0's backward pass. */
void sim_roofline_times(const sim_roofline *r, const sim_layers *l, size_t i, uint32_t batch,
                        double *fwd_s, double *bwd_s);

/* Seconds of one iteration (forward and backward over every layer, and the step) of `batch`
 * samples. */
double sim_roofline_iteration_s(const sim_roofline *r, const sim_layers *l, uint32_t batch);

#endif
