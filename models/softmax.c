/* softmax: multinomial logistic regression, scores = x W^T + b, softmax cross-entropy loss.
 *
 * Parameters: fc.w (K, D), fc.b (K). Workspace: probabilities (B, K), then the gradient of
 * the logits (B, K). L2 regularization is the optimizer's weight decay. */
#include "models/model.h"

static int softmax_check(const model_config *cfg, sim_err *err)
{
    (void)cfg;
    (void)err;
    return 0;
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
    model_dense_backward(NULL, grads, grads + K * D, dlogits, x, params, B, D, K, false);
}

const model_ops model_softmax = {
    .name = "softmax",
    .check = softmax_check,
    .shape = &model_linear_shape,
    .forward = softmax_forward,
    .backward = softmax_backward,
};
