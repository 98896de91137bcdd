/* The roofline of sim/roofline.h. */
#include "sim/roofline.h"

#include <math.h>

void sim_roofline_init(sim_roofline *r, const sim_device *d, int precision)
{
    double peak = d->peak_flops[precision];
    double conv = peak * d->conv_frac[precision];
    for (int k = 0; k < SIM_KIND_N; k++)
        r->rate[k] = peak * d->matmul_frac[precision];
    r->rate[SIM_KIND_CONV] = conv;
    r->rate[SIM_KIND_CONV3X3] = conv * sim_device_conv3x3_gain(precision);
    r->mem_bps = d->mem_bps * d->mem_frac;
    r->elem = precision == SIM_PREC_FP16 || precision == SIM_PREC_BF16 ? 0.5 : 1.0;
}

void sim_roofline_layer(const sim_roofline *r, const sim_layer *y, bool first, uint32_t batch,
                        double *fwd_s, double *bwd_s)
{
    double b = (double)batch;
    int kind = y->kind >= 0 && y->kind < SIM_KIND_N ? y->kind : SIM_KIND_OTHER;
    double flops_s = y->fwd_flops * b / r->rate[kind];
    double bytes_s = (y->fwd_bytes * b + 4.0 * (double)y->params) * r->elem / r->mem_bps;
    double own = fmax(flops_s, bytes_s);
    double ew = y->ew_bytes * b * r->elem / r->mem_bps;
    *fwd_s = own + ew;
    *bwd_s = (first ? own : 2.0 * own) + 2.0 * ew;
}

double sim_roofline_iteration_s(const sim_roofline *r, const sim_layers *l, uint32_t batch)
{
    double s = 0.0;
    for (size_t i = 0; i < l->n; i++) {
        double f, b;
        sim_roofline_layer(r, &l->layer[i], i == 0, batch, &f, &b);
        s += f + b;
    }
    return s;
}
