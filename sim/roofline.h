/* The roofline: how long a layer's forward and backward passes take on a device.
 *
 * For a batch of B samples at a precision whose elements take e bytes (4 for fp32 and tf32,
 * 2 for fp16 and bf16), with the layer's forward FLOPs F, parameters W, own bytes b and
 * element-wise bytes x per sample (sim/layers.h; bytes are counted at 4 a float):
 *   own      = max(F B / R_kind, (b B + 4 W) (e / 4) / M)
 *   forward  = own + x B (e / 4) / M
 *   backward = 2 own + 2 x B (e / 4) / M, the layer's own part once only for layer 0 (it
 *              computes no input gradient)
 * R_kind is the device's peak at the precision times the attainable share of the layer's
 * kind (convolutions, 3x3 convolutions with their FP32 gain, or matrix products for the
 * rest), M its datasheet bandwidth times the attainable share (sim/device.h). The own
 * operations' bytes hide behind their FLOPs or the reverse (one kernel does both); the
 * element-wise operations after a layer are kernels of their own, memory-bound, and add. The
 * backward pass doubles both (an input gradient and a weight gradient per product; a gradient
 * read and one written per element-wise operation). An iteration is the sum over the layers.
 */
#ifndef SIM_ROOFLINE_H
#define SIM_ROOFLINE_H

#include <stdbool.h>
#include <stdint.h>

#include "sim/device.h"
#include "sim/layers.h"

typedef struct sim_roofline {
    double rate[SIM_KIND_N]; /* attainable FLOP/s of each layer kind */
    double mem_bps;          /* attainable bytes/s */
    double elem;             /* an element's bytes over 4: 1, or 0.5 for 16-bit precisions */
} sim_roofline;

/* Sets r for device d at `precision` (a sim_precision the device has a peak for). */
void sim_roofline_init(sim_roofline *r, const sim_device *d, int precision);

/* Seconds of layer y's forward and backward passes over `batch` samples; `first`: it is
 * layer 0. */
void sim_roofline_layer(const sim_roofline *r, const sim_layer *y, bool first, uint32_t batch,
                        double *fwd_s, double *bwd_s);

/* Seconds of one iteration (forward and backward over every layer) of `batch` samples. */
double sim_roofline_iteration_s(const sim_roofline *r, const sim_layers *l, uint32_t batch);

#endif
