/* vector: a bare parameter vector for averaging-only runs (DESIGN 6b).
 *
 * Parameters: x (dim). There is no data and no loss: forward returns 0 and backward writes
 * zeros, so every gradient is zero and only the protocol's averaging moves the values.
 * init_params fills x with N(0, 1) draws (init "normal", the default) or zeros ("zero"); the
 * runtime calls it once per worker with that worker's own stream. Kept out of the trainable
 * models' list (model_at): it is found by name only. */
#include <string.h>

#include <gsl/gsl_randist.h>

#include "models/model.h"

static int vector_check(const model_config *cfg, sim_err *err)
{
    if (cfg->dim < 1 || cfg->dim > MODEL_MAX_INPUT)
        return sim_err_set(err, SIM_EINVAL, "dim", "must be in 1..%d, got %zu", MODEL_MAX_INPUT,
                           cfg->dim);
    return 0;
}

static size_t vector_views(model_view *views, const model_config *cfg)
{
    views[0] = (model_view){
        .name = "x", .offset = 0, .rows = cfg->dim, .cols = 1, .init = MODEL_INIT_ZERO
    };
    return 1;
}

static size_t vector_num_params(const model_config *cfg)
{
    return cfg->dim;
}

static size_t vector_num_acts(const model_config *cfg, size_t B)
{
    (void)cfg;
    (void)B;
    return 16; /* nothing is computed; one aligned block keeps the workspace non-empty */
}

static double vector_flops_forward(const model_config *cfg)
{
    (void)cfg;
    return 0.0;
}

static size_t vector_layer_flops(double *flops, const model_config *cfg)
{
    (void)cfg;
    flops[0] = 0.0;
    return 1;
}

static void vector_init_params(float *params, const model_config *cfg, gsl_rng *r)
{
    for (size_t i = 0; i < cfg->dim; i++)
        params[i] = cfg->vector_zero ? 0.0f : (float)gsl_ran_gaussian(r, 1.0);
}

static void vector_backward(float *grads, float *acts, const float *params, const float *x,
                            const uint8_t *y, size_t B, const model_config *cfg)
{
    (void)acts, (void)params, (void)x, (void)y, (void)B;
    memset(grads, 0, cfg->dim * sizeof(*grads)); /* the gradient is zero */
}

static const model_shape vector_model_shape = {
    .views = vector_views,
    .num_params = vector_num_params,
    .num_acts = vector_num_acts,
    .flops_forward = vector_flops_forward,
    .layer_flops = vector_layer_flops,
    .init_params = vector_init_params,
};

const model_ops model_vector = {
    .name = "vector",
    .flags = MODEL_NO_DATA | MODEL_AVERAGING_ONLY,
    .check = vector_check,
    .shape = &vector_model_shape,
    .forward = model_nop_forward,
    .backward = vector_backward,
};
