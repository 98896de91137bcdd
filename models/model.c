/* Model registry, configuration checks, predictions and the layer kernels shared by the
 * model files (dense, ReLU, softmax cross-entropy). */
#include "models/model.h"

#include <assert.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <gsl/gsl_cblas.h>
#include <gsl/gsl_randist.h>

/* Fixed order: model_at and model_list follow it. */
static const model_ops *const models[] = { &model_softmax, &model_svm, &model_mlp, &model_cnn };
#define N_MODELS (sizeof(models) / sizeof(models[0]))

const model_ops *model_find(const char *name)
{
    if (name == NULL)
        return NULL;
    for (size_t i = 0; i < N_MODELS; i++)
        if (strcmp(models[i]->name, name) == 0)
            return models[i];
    if (strcmp(name, model_vector.name) == 0)
        return &model_vector;
    if (strcmp(name, model_torch.name) == 0)
        return &model_torch;
    return strcmp(name, model_none.name) == 0 ? &model_none : NULL;
}

const model_ops *model_at(size_t i)
{
    return i < N_MODELS ? models[i] : NULL;
}

void model_list(char *buf, size_t size)
{
    if (size == 0)
        return;
    buf[0] = '\0';
    size_t used = 0;
    for (size_t i = 0; i < N_MODELS && used < size; i++) {
        int n = snprintf(buf + used, size - used, "%s%s", i > 0 ? ", " : "", models[i]->name);
        if (n < 0)
            break;
        used += (size_t)n;
    }
}

void model_config_default(model_config *cfg)
{
    memset(cfg, 0, sizeof(*cfg));
    cfg->channels = 1;
    cfg->height = 28;
    cfg->width = 28;
    cfg->classes = 10;
    cfg->n_hidden = 1;
    cfg->hidden[0] = 256;
    cfg->conv1 = 16;
    cfg->conv2 = 32;
    cfg->kernel = 5;
    cfg->dense = 128;
    cfg->svm_margin = 1.0;
    cfg->dim = 1;
}

static int check_dim(const char *field, size_t v, sim_err *err)
{
    if (v < 1 || v > MODEL_MAX_DIM)
        return sim_err_set(err, SIM_EINVAL, field, "must be an integer in [1, %d], got %zu",
                           MODEL_MAX_DIM, v);
    return 0;
}

int model_check(const model_ops *ops, const model_config *cfg, sim_err *err)
{
    int rc;
    if ((rc = check_dim("channels", cfg->channels, err)) != 0 ||
        (rc = check_dim("height", cfg->height, err)) != 0 ||
        (rc = check_dim("width", cfg->width, err)) != 0)
        return rc;
    if (cfg->classes < 2 || cfg->classes > MODEL_MAX_CLASSES)
        return sim_err_set(err, SIM_EINVAL, "classes", "must be an integer in [2, %d], got %zu",
                           MODEL_MAX_CLASSES, cfg->classes);
    size_t D = model_input_size(cfg);
    if (D > MODEL_MAX_INPUT)
        return sim_err_set(err, SIM_EINVAL, "", "input of %zu x %zu x %zu = %zu values exceeds %d",
                           cfg->channels, cfg->height, cfg->width, D, MODEL_MAX_INPUT);
    if ((rc = ops->check(cfg, err)) != 0)
        return rc;
    // Every BLAS dimension is an int; no weight matrix is larger than the whole block.
    size_t n = ops->shape->num_params(cfg);
    if (n > (size_t)INT_MAX)
        return sim_err_set(err, SIM_EINVAL, "", "%s model has %zu parameters, more than %d",
                           ops->name, n, INT_MAX);
    return 0;
}

size_t model_input_size(const model_config *cfg)
{
    return cfg->channels * cfg->height * cfg->width;
}

double model_flops_per_sample(const model_ops *ops, const model_config *cfg)
{
    return 3.0 * ops->shape->flops_forward(cfg);
}

static bool is_bias(const char *name)
{
    size_t len = strlen(name);
    return len >= 2 && strcmp(name + len - 2, ".b") == 0;
}

int model_layers(const model_ops *ops, const model_config *cfg, sim_layers *out, sim_err *err)
{
    model_view v[MODEL_MAX_VIEWS];
    double flops[MODEL_MAX_VIEWS];
    size_t nv = ops->shape->views(v, cfg), nl = ops->shape->layer_flops(flops, cfg), n = 0;
    for (size_t i = 0; i < nv; i++)
        n += !is_bias(v[i].name) || i == 0;
    assert(n == nl);
    int rc = sim_layers_init(out, nl, err);
    if (rc != SIM_OK)
        return rc;
    size_t l = 0;
    for (size_t i = 0; i < nv; i++) {
        if (i > 0 && is_bias(v[i].name)) {
            out->layer[l - 1].params += (uint64_t)(v[i].rows * v[i].cols);
            continue;
        }
        sim_layer *y = &out->layer[l];
        size_t len = strlen(v[i].name);
        if (len >= 2 && strcmp(v[i].name + len - 2, ".w") == 0)
            len -= 2;
        snprintf(y->name, sizeof(y->name), "%.*s", (int)len, v[i].name);
        y->params = (uint64_t)(v[i].rows * v[i].cols);
        y->fwd_flops = flops[l];
        l++;
    }
    sim_layers_finish(out);
    return SIM_OK;
}

static size_t argmax(const float *s, size_t K)
{
    size_t best = 0;
    for (size_t j = 1; j < K; j++)
        if (s[j] > s[best])
            best = j;
    return best;
}

void model_predict(uint8_t *pred, const float *acts, size_t B, const model_config *cfg)
{
    size_t K = cfg->classes;
    for (size_t b = 0; b < B; b++)
        pred[b] = (uint8_t)argmax(acts + b * K, K);
}

size_t model_count_correct(const float *acts, const uint8_t *y, size_t B, const model_config *cfg)
{
    size_t K = cfg->classes, correct = 0;
    for (size_t b = 0; b < B; b++)
        correct += argmax(acts + b * K, K) == y[b];
    return correct;
}

size_t model_align(size_t n)
{
    return (n + 15) / 16 * 16;
}

void model_init_views(float *params, const model_view *views, size_t n, gsl_rng *r)
{
    for (size_t v = 0; v < n; v++) {
        const model_view *mv = &views[v];
        float *p = params + mv->offset;
        size_t count = mv->rows * mv->cols;
        double sigma = 0.0;
        if (mv->init == MODEL_INIT_HE)
            sigma = sqrt(2.0 / (double)mv->cols);
        else if (mv->init == MODEL_INIT_GLOROT)
            sigma = sqrt(2.0 / (double)(mv->cols + mv->rows));
        if (mv->init == MODEL_INIT_ZERO) {
            memset(p, 0, count * sizeof(*p));
            continue;
        }
        for (size_t i = 0; i < count; i++)
            p[i] = (float)gsl_ran_gaussian(r, sigma);
    }
}

void model_dense_forward(float *restrict out, const float *restrict in, const float *restrict w,
                         const float *restrict b, size_t B, size_t D_in, size_t D_out)
{
    // Rows of out start as the bias; the product is then added with beta = 1.
    for (size_t i = 0; i < B; i++)
        memcpy(out + i * D_out, b, D_out * sizeof(*out));
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)B, (int)D_out, (int)D_in, 1.0f, in,
                (int)D_in, w, (int)D_in, 1.0f, out, (int)D_out);
}

void model_dense_backward(float *restrict din, float *restrict dw, float *restrict db,
                          const float *restrict dout, const float *restrict in,
                          const float *restrict w, size_t B, size_t D_in, size_t D_out,
                          bool accumulate)
{
    cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, (int)D_out, (int)D_in, (int)B, 1.0f, dout,
                (int)D_out, in, (int)D_in, accumulate ? 1.0f : 0.0f, dw, (int)D_in);
    // Overwriting starts the sums from 0.0f + the first row: the bits a zeroed db would give.
    for (size_t j = 0; !accumulate && j < D_out; j++)
        db[j] = 0.0f;
    for (size_t i = 0; i < B; i++) {
        const float *row = dout + i * D_out;
        for (size_t j = 0; j < D_out; j++)
            db[j] += row[j];
    }
    if (din != NULL)
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)B, (int)D_in, (int)D_out, 1.0f,
                    dout, (int)D_out, w, (int)D_in, 0.0f, din, (int)D_in);
}

/* The ReLU loops are unrolled by four because gcc -O2 vectorizes straight-line code but not
 * loops of unknown length, and would otherwise emit a branch per element that mispredicts
 * on half of them. Each element sees the same operations as in a plain loop. */
static inline float relu1(float v)
{
    return v > 0.0f ? v : 0.0f;
}

void model_relu_forward(float *x, size_t n)
{
    size_t i = 0;
    for (; i + 4 <= n; i += 4) {
        x[i] = relu1(x[i]);
        x[i + 1] = relu1(x[i + 1]);
        x[i + 2] = relu1(x[i + 2]);
        x[i + 3] = relu1(x[i + 3]);
    }
    for (; i < n; i++)
        x[i] = relu1(x[i]);
}

void model_relu_backward(float *restrict dx, const float *restrict y, size_t n)
{
    size_t i = 0;
    for (; i + 4 <= n; i += 4) {
        dx[i] = y[i] > 0.0f ? dx[i] : 0.0f;
        dx[i + 1] = y[i + 1] > 0.0f ? dx[i + 1] : 0.0f;
        dx[i + 2] = y[i + 2] > 0.0f ? dx[i + 2] : 0.0f;
        dx[i + 3] = y[i + 3] > 0.0f ? dx[i + 3] : 0.0f;
    }
    for (; i < n; i++)
        dx[i] = y[i] > 0.0f ? dx[i] : 0.0f;
}

double model_softmax_ce_forward(float *restrict p, const uint8_t *restrict y, size_t B, size_t K)
{
    double loss = 0.0;
    for (size_t i = 0; i < B; i++) {
        float *row = p + i * K;
        float max = row[0];
        for (size_t j = 1; j < K; j++)
            max = row[j] > max ? row[j] : max;
        // log p[y] = (z[y] - max) - log(sum exp(z - max)), the sum in double.
        assert(y == NULL || y[i] < K);
        double zy = y != NULL ? (double)(row[y[i]] - max) : 0.0;
        double sum = 0.0;
        for (size_t j = 0; j < K; j++) {
            row[j] = expf(row[j] - max);
            sum += (double)row[j];
        }
        float inv = (float)(1.0 / sum);
        for (size_t j = 0; j < K; j++)
            row[j] *= inv;
        if (y != NULL)
            loss += log(sum) - zy;
    }
    return B > 0 ? loss / (double)B : 0.0;
}

void model_softmax_ce_backward(float *restrict dlogits, const float *restrict p,
                               const uint8_t *restrict y, size_t B, size_t K)
{
    float inv_b = 1.0f / (float)B;
    for (size_t i = 0; i < B; i++) {
        const float *prow = p + i * K;
        float *drow = dlogits + i * K;
        for (size_t j = 0; j < K; j++)
            drow[j] = prow[j] * inv_b;
        drow[y[i]] -= inv_b;
    }
}

static size_t model_linear_views(model_view *v, const model_config *cfg)
{
    size_t D = model_input_size(cfg), K = cfg->classes;
    v[0] = (model_view){ "fc.w", 0, K, D, MODEL_INIT_GLOROT };
    v[1] = (model_view){ "fc.b", K * D, K, 1, MODEL_INIT_ZERO };
    return 2;
}

static size_t model_linear_num_params(const model_config *cfg)
{
    return (model_input_size(cfg) + 1) * cfg->classes;
}

static size_t model_linear_num_acts(const model_config *cfg, size_t B)
{
    return 2 * model_align(B * cfg->classes);
}

static double model_linear_flops_forward(const model_config *cfg)
{
    return 2.0 * (double)model_input_size(cfg) * (double)cfg->classes;
}

static size_t model_linear_layer_flops(double *flops, const model_config *cfg)
{
    flops[0] = model_linear_flops_forward(cfg);
    return 1;
}

static void model_linear_init_params(float *params, const model_config *cfg, gsl_rng *r)
{
    model_view v[2];
    model_init_views(params, v, model_linear_views(v, cfg), r);
}

const model_shape model_linear_shape = {
    .views = model_linear_views,
    .num_params = model_linear_num_params,
    .num_acts = model_linear_num_acts,
    .flops_forward = model_linear_flops_forward,
    .layer_flops = model_linear_layer_flops,
    .init_params = model_linear_init_params,
};
