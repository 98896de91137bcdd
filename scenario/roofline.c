/* The roofline of scenario/roofline.h. */
#include "scenario/roofline.h"

#include <math.h>

void sim_roofline_init(sim_roofline *r, const sim_device *d, int precision)
{
    bool half = precision == SIM_PREC_FP16 || precision == SIM_PREC_BF16;
    double peak = d->peak_flops[precision];
    double conv = peak * d->shares->conv[precision];
    for (int k = 0; k < SIM_KIND_N; k++)
        r->rate[k] = peak * d->shares->matmul[precision];
    r->rate[SIM_KIND_CONV] = conv;
    r->rate[SIM_KIND_CONV3X3] = conv * sim_device_conv3x3_gain(precision);
    r->rate[SIM_KIND_DEPTHWISE] =
        d->peak_flops[SIM_PREC_FP32] * sim_device_depthwise_share() * (half ? d->vector16 : 1.0);
    r->mem_bps = d->mem_bps * d->mem_frac;
    r->elem = half ? 0.5 : 1.0;
    r->transpose = false;
}

void sim_roofline_layout(sim_roofline *r, bool nchw)
{
    r->transpose = nchw && r->elem < 1.0;
}

void sim_roofline_layer(const sim_roofline *r, const sim_layer *y, bool first, uint32_t batch,
                        double *fwd_s, double *bwd_s)
{
    double b = (double)batch;
    int kind = y->kind >= 0 && y->kind < SIM_KIND_N ? y->kind : SIM_KIND_OTHER;
    double flops_s = y->fwd_flops * b / r->rate[kind];
    double bytes_s = (y->fwd_bytes * b + 4.0 * (double)y->params) * r->elem / r->mem_bps;
    double own = fmax(flops_s, bytes_s);
    if (r->transpose && (kind == SIM_KIND_CONV || kind == SIM_KIND_CONV3X3))
        own += 2.0 * bytes_s + SIM_ROOFLINE_TRANSPOSES * SIM_ROOFLINE_KERNEL_S;
    double ew = y->ew_bytes * b * r->elem / r->mem_bps;
    double ew_kernel = y->ew_bytes > 0 ? SIM_ROOFLINE_KERNEL_S : 0.0;
    double own_bwd = first ? 1.0 : 2.0;
    *fwd_s = own + ew + SIM_ROOFLINE_KERNEL_S + ew_kernel;
    *bwd_s = own_bwd * (own + SIM_ROOFLINE_KERNEL_S) + 2.0 * (ew + ew_kernel);
}

double sim_roofline_update_s(const sim_roofline *r, uint64_t params)
{
    return (double)params * SIM_ROOFLINE_UPDATE_BYTES / r->mem_bps;
}

void sim_roofline_times(const sim_roofline *r, const sim_layers *l, size_t i, uint32_t batch,
                        double *fwd_s, double *bwd_s)
{
    sim_roofline_layer(r, &l->layer[i], i == 0, batch, fwd_s, bwd_s);
    if (i == 0)
        *bwd_s += sim_roofline_update_s(r, sim_layers_params(l));
}

double sim_roofline_iteration_s(const sim_roofline *r, const sim_layers *l, uint32_t batch)
{
    double s = 0.0;
    for (size_t i = 0; i < l->n; i++) {
        double f, b;
        sim_roofline_times(r, l, i, batch, &f, &b);
        s += f + b;
    }
    return s;
}
