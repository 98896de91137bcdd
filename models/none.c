/* none: the timing-only workload, a model of zero floats.
 *
 * There are no parameters, no data and no loss: every tensor the runtime and the protocols
 * allocate for it holds zero floats, so their tensor calls are no-ops by their sizes, not by
 * branches. What a run of it simulates is time: iterations of compute.iteration_ms, messages of
 * workload.message_bytes (one timing layer of that size, made by the runtime). Kept out of the
 * trainable models' list (model_at): it is found by name only. */
#include "models/model.h"

int model_nop_check(const model_config *cfg, sim_err *err)
{
    (void)cfg;
    (void)err;
    return 0;
}

size_t model_nop_views(model_view *views, const model_config *cfg)
{
    (void)views;
    (void)cfg;
    return 0;
}

static size_t none_num_params(const model_config *cfg)
{
    (void)cfg;
    return 0;
}

size_t model_nop_acts(const model_config *cfg, size_t B)
{
    (void)cfg;
    (void)B;
    return 0;
}

static double none_flops_forward(const model_config *cfg)
{
    (void)cfg;
    return 0.0;
}

size_t model_nop_layer_flops(double *flops, const model_config *cfg)
{
    (void)flops;
    (void)cfg;
    return 0;
}

static void none_init_params(float *params, const model_config *cfg, gsl_rng *r)
{
    (void)params;
    (void)cfg;
    (void)r;
}

double model_nop_forward(float *acts, const float *params, const float *x, const uint8_t *y,
                         size_t B, const model_config *cfg)
{
    (void)acts, (void)params, (void)x, (void)y, (void)B, (void)cfg;
    return 0.0;
}

static void none_backward(float *grads, float *acts, const float *params, const float *x,
                          const uint8_t *y, size_t B, const model_config *cfg)
{
    (void)grads, (void)acts, (void)params, (void)x, (void)y, (void)B, (void)cfg;
}

static const model_shape none_model_shape = {
    .views = model_nop_views,
    .num_params = none_num_params,
    .num_acts = model_nop_acts,
    .flops_forward = none_flops_forward,
    .layer_flops = model_nop_layer_flops,
    .init_params = none_init_params,
};

const model_ops model_none = {
    .name = "none",
    .flags = MODEL_NO_DATA | MODEL_NO_PARAMS,
    .check = model_nop_check,
    .shape = &none_model_shape,
    .forward = model_nop_forward,
    .backward = none_backward,
};
