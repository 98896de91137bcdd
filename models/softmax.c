/* softmax: multinomial logistic regression, scores = x W^T + b, softmax cross-entropy loss.
 *
 * Parameters: fc.w (K, D), fc.b (K). Workspace: probabilities (B, K), then the gradient of
 * the logits (B, K). L2 regularization is the optimizer's weight decay. */
#include "models/model.h"

enum {
    V_W,
    V_B,
    N_VIEWS
};

static int softmax_check(const model_config *cfg, sim_err *err)
{
    (void)cfg;
    (void)err;
    return 0;
}

static size_t softmax_views(model_view *v, const model_config *cfg)
{
    size_t D = model_input_size(cfg), K = cfg->classes;
    v[V_W] = (model_view){ "fc.w", 0, K, D, MODEL_INIT_GLOROT };
    v[V_B] = (model_view){ "fc.b", K * D, K, 1, MODEL_INIT_ZERO };
    return N_VIEWS;
}

static size_t softmax_num_params(const model_config *cfg)
{
    return (model_input_size(cfg) + 1) * cfg->classes;
}

static size_t softmax_num_acts(const model_config *cfg, size_t B)
{
    return 2 * model_align(B * cfg->classes);
}

static double softmax_flops_forward(const model_config *cfg)
{
    return 2.0 * (double)model_input_size(cfg) * (double)cfg->classes;
}

static void softmax_init_params(float *params, const model_config *cfg, gsl_rng *r)
{
    model_view v[N_VIEWS];
    model_init_views(params, v, softmax_views(v, cfg), r);
}

static double softmax_forward(float *acts, const float *params, const float *x, const uint8_t *y,
                              size_t B, const model_config *cfg)
{
    size_t D = model_input_size(cfg), K = cfg->classes;
    float *probs = acts; /* (B, K) */
    model_dense_forward(probs, x, params, params + K * D, B, D, K);
    return model_softmax_ce_forward(probs, y, B, K);
}

static void softmax_backward(float *grads, float *acts, const float *params, const float *x,
                             const uint8_t *y, size_t B, const model_config *cfg)
{
    size_t D = model_input_size(cfg), K = cfg->classes;
    const float *probs = acts;                  /* (B, K) */
    float *dlogits = acts + model_align(B * K); /* (B, K) */
    model_softmax_ce_backward(dlogits, probs, y, B, K);
    model_dense_backward(NULL, grads, grads + K * D, dlogits, x, params, B, D, K);
}

const model_ops model_softmax = {
    .name = "softmax",
    .check = softmax_check,
    .views = softmax_views,
    .num_params = softmax_num_params,
    .num_acts = softmax_num_acts,
    .flops_forward = softmax_flops_forward,
    .init_params = softmax_init_params,
    .forward = softmax_forward,
    .backward = softmax_backward,
};
