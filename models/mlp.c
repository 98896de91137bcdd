/* mlp: a multilayer perceptron with ReLU hidden layers and a softmax cross-entropy output.
 *
 * Layer widths are d[0] = D (the input), d[1..L] = hidden[0..L-1], d[L+1] = K, with
 * L = n_hidden (0 gives the softmax model). Parameters, in order: fc1.w (d[1], d[0]),
 * fc1.b (d[1]), ..., fc{L+1}.w (K, d[L]), fc{L+1}.b (K). Workspace, each view aligned to
 * 64 bytes: probabilities (B, K), the ReLU outputs h[1..L] (B, d[l]), then two scratch
 * buffers (B, max d[1..L+1]) that the backward pass uses in turn for the gradients of the
 * layer outputs. */
#include <stdio.h>

#include "models/model.h"

static const char *const view_names[MODEL_MAX_HIDDEN + 1][2] = {
    { "fc1.w", "fc1.b" }, { "fc2.w", "fc2.b" }, { "fc3.w", "fc3.b" },
    { "fc4.w", "fc4.b" }, { "fc5.w", "fc5.b" }, { "fc6.w", "fc6.b" },
    { "fc7.w", "fc7.b" }, { "fc8.w", "fc8.b" }, { "fc9.w", "fc9.b" },
};

/* Fills d[0..L+1] and returns L. */
static size_t widths(size_t *d, const model_config *cfg)
{
    size_t L = cfg->n_hidden;
    d[0] = model_input_size(cfg);
    for (size_t l = 0; l < L; l++)
        d[l + 1] = cfg->hidden[l];
    d[L + 1] = cfg->classes;
    return L;
}

static int mlp_check(const model_config *cfg, sim_err *err)
{
    if (cfg->n_hidden > MODEL_MAX_HIDDEN)
        return sim_err_set(err, SIM_EINVAL, "hidden", "must have at most %d layers, got %zu",
                           MODEL_MAX_HIDDEN, cfg->n_hidden);
    for (size_t l = 0; l < cfg->n_hidden; l++) {
        if (cfg->hidden[l] < 1 || cfg->hidden[l] > MODEL_MAX_DIM) {
            char path[32];
            snprintf(path, sizeof(path), "hidden[%zu]", l);
            return sim_err_set(err, SIM_EINVAL, path, "must be an integer in [1, %d], got %zu",
                               MODEL_MAX_DIM, cfg->hidden[l]);
        }
    }
    return 0;
}

static size_t mlp_views(model_view *v, const model_config *cfg)
{
    size_t d[MODEL_MAX_HIDDEN + 2];
    size_t L = widths(d, cfg), off = 0;
    for (size_t l = 0; l <= L; l++) {
        model_init init = l < L ? MODEL_INIT_HE : MODEL_INIT_GLOROT;
        v[2 * l] = (model_view){ view_names[l][0], off, d[l + 1], d[l], init };
        off += d[l + 1] * d[l];
        v[2 * l + 1] = (model_view){ view_names[l][1], off, d[l + 1], 1, MODEL_INIT_ZERO };
        off += d[l + 1];
    }
    return 2 * (L + 1);
}

static size_t mlp_num_params(const model_config *cfg)
{
    size_t d[MODEL_MAX_HIDDEN + 2];
    size_t L = widths(d, cfg), n = 0;
    for (size_t l = 0; l <= L; l++)
        n += (d[l] + 1) * d[l + 1];
    return n;
}

/* Offsets into the workspace: h[l] for l in 1..L, and the two scratch buffers. */
typedef struct mlp_acts {
    size_t h[MODEL_MAX_HIDDEN + 1];
    size_t scratch[2];
    size_t total;
} mlp_acts;

static size_t acts_layout(mlp_acts *a, size_t *d, const model_config *cfg, size_t B)
{
    size_t L = widths(d, cfg), off = model_align(B * cfg->classes), widest = cfg->classes;
    for (size_t l = 1; l <= L; l++) {
        a->h[l] = off;
        off += model_align(B * d[l]);
        widest = d[l] > widest ? d[l] : widest;
    }
    a->scratch[0] = off;
    a->scratch[1] = off + model_align(B * widest);
    a->total = off + 2 * model_align(B * widest);
    return L;
}

static size_t mlp_num_acts(const model_config *cfg, size_t B)
{
    mlp_acts a;
    size_t d[MODEL_MAX_HIDDEN + 2];
    acts_layout(&a, d, cfg, B);
    return a.total;
}

static double mlp_flops_forward(const model_config *cfg)
{
    size_t d[MODEL_MAX_HIDDEN + 2];
    size_t L = widths(d, cfg);
    double f = 0.0;
    for (size_t l = 0; l <= L; l++)
        f += 2.0 * (double)d[l] * (double)d[l + 1];
    return f;
}

static size_t mlp_layer_flops(double *flops, const model_config *cfg)
{
    size_t d[MODEL_MAX_HIDDEN + 2];
    size_t L = widths(d, cfg);
    for (size_t l = 0; l <= L; l++)
        flops[l] = 2.0 * (double)d[l] * (double)d[l + 1];
    return L + 1;
}

static void mlp_init_params(float *params, const model_config *cfg, gsl_rng *r)
{
    model_view v[MODEL_MAX_VIEWS];
    model_init_views(params, v, mlp_views(v, cfg), r);
}

static double mlp_forward(float *acts, const float *params, const float *x, const uint8_t *y,
                          size_t B, const model_config *cfg)
{
    mlp_acts a;
    size_t d[MODEL_MAX_HIDDEN + 2];
    size_t L = acts_layout(&a, d, cfg, B);
    const float *in = x; /* (B, d[l]) */
    const float *p = params;
    for (size_t l = 0; l < L; l++) {
        float *h = acts + a.h[l + 1]; /* (B, d[l + 1]) */
        model_dense_forward(h, in, p, p + d[l + 1] * d[l], B, d[l], d[l + 1]);
        model_relu_forward(h, B * d[l + 1]);
        p += (d[l] + 1) * d[l + 1];
        in = h;
    }
    float *probs = acts; /* (B, K) */
    model_dense_forward(probs, in, p, p + d[L + 1] * d[L], B, d[L], d[L + 1]);
    return model_softmax_ce_forward(probs, y, B, d[L + 1]);
}

static void mlp_backward(float *grads, float *acts, const float *params, const float *x,
                         const uint8_t *y, size_t B, const model_config *cfg)
{
    mlp_acts a;
    size_t d[MODEL_MAX_HIDDEN + 2];
    size_t L = acts_layout(&a, d, cfg, B);
    size_t off[MODEL_MAX_HIDDEN + 2]; /* off[l]: start of layer l's weights */
    off[0] = 0;
    for (size_t l = 0; l <= L; l++)
        off[l + 1] = off[l] + (d[l] + 1) * d[l + 1];

    // The gradients of successive layer outputs alternate between the two scratch buffers.
    size_t cur = 0;
    float *dout = acts + a.scratch[cur]; /* (B, d[l + 1]): gradient of layer l's output */
    model_softmax_ce_backward(dout, acts, y, B, d[L + 1]);
    for (size_t l = L + 1; l-- > 0;) {
        const float *in = l == 0 ? x : acts + a.h[l]; /* (B, d[l]) */
        float *din = acts + a.scratch[1 - cur];       /* (B, d[l]) */
        size_t nw = d[l + 1] * d[l];
        model_dense_backward(l == 0 ? NULL : din, grads + off[l], grads + off[l] + nw, dout, in,
                             params + off[l], B, d[l], d[l + 1], false);
        if (l > 0)
            model_relu_backward(din, in, B * d[l]);
        cur = 1 - cur;
        dout = din;
    }
}

static const model_shape mlp_model_shape = {
    .views = mlp_views,
    .num_params = mlp_num_params,
    .num_acts = mlp_num_acts,
    .flops_forward = mlp_flops_forward,
    .layer_flops = mlp_layer_flops,
    .init_params = mlp_init_params,
};

const model_ops model_mlp = {
    .name = "mlp",
    .check = mlp_check,
    .shape = &mlp_model_shape,
    .forward = mlp_forward,
    .backward = mlp_backward,
};
