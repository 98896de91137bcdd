/* svm: multiclass linear SVM with the Crammer-Singer hinge loss.
 *
 * Scores s = x W^T + b; the loss of a sample with label y is
 *   max(0, margin + max_{j != y} s_j - s_y),
 * one hinge on the best wrong class (not a sum over classes as in one-vs-rest or
 * Weston-Watkins). Its subgradient is +1 on that class and -1 on y when the hinge is
 * active; ties for the best wrong class go to the lowest index. L2 regularization is the
 * optimizer's weight decay.
 *
 * Parameters: fc.w (K, D), fc.b (K). Workspace: scores (B, K), then their gradient (B, K). */
#include <assert.h>
#include <math.h>
#include <string.h>

#include "models/model.h"

static int svm_check(const model_config *cfg, sim_err *err)
{
    if (!(cfg->svm_margin > 0.0) || !isfinite(cfg->svm_margin))
        return sim_err_set(err, SIM_EINVAL, "margin", "must be a finite number > 0, got %g",
                           cfg->svm_margin);
    return 0;
}

/* The best wrong class of one sample's scores (K >= 2). */
static size_t best_wrong(const float *s, size_t y, size_t K)
{
    size_t best = y == 0 ? 1 : 0;
    for (size_t j = best + 1; j < K; j++)
        if (j != y && s[j] > s[best])
            best = j;
    return best;
}

static double svm_forward(float *acts, const float *params, const float *x, const uint8_t *y,
                          size_t B, const model_config *cfg)
{
    size_t D = model_input_size(cfg), K = cfg->classes;
    float *scores = acts; /* (B, K) */
    model_dense_forward(scores, x, params, params + K * D, B, D, K);
    if (y == NULL || B == 0)
        return 0.0;
    double loss = 0.0;
    for (size_t i = 0; i < B; i++) {
        const float *s = scores + i * K;
        assert(y[i] < K);
        size_t j = best_wrong(s, y[i], K);
        double h = cfg->svm_margin + (double)s[j] - (double)s[y[i]];
        loss += h > 0.0 ? h : 0.0;
    }
    return loss / (double)B;
}

static void svm_backward(float *grads, float *acts, const float *params, const float *x,
                         const uint8_t *y, size_t B, const model_config *cfg)
{
    size_t D = model_input_size(cfg), K = cfg->classes;
    const float *scores = acts;                 /* (B, K) */
    float *dscores = acts + model_align(B * K); /* (B, K) */
    float inv_b = 1.0f / (float)B;
    memset(dscores, 0, B * K * sizeof(*dscores));
    for (size_t i = 0; i < B; i++) {
        const float *s = scores + i * K;
        size_t j = best_wrong(s, y[i], K);
        // The same test as forward, so that the subgradient matches the loss it reported.
        if (cfg->svm_margin + (double)s[j] - (double)s[y[i]] > 0.0) {
            dscores[i * K + j] = inv_b;
            dscores[i * K + y[i]] = -inv_b;
        }
    }
    model_dense_backward(NULL, grads, grads + K * D, dscores, x, params, B, D, K, false);
}

const model_ops model_svm = {
    .name = "svm",
    .check = svm_check,
    .shape = &model_linear_shape,
    .forward = svm_forward,
    .backward = svm_backward,
};
