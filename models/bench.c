#include "models/bench.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

#include <gsl/gsl_cblas.h>
#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>

#include "models/model.h"
#include "models/optim.h"
#include "models/step.h"
#include "sim/bench.h"
#include "sim/tensor.h"

/* An OpenBLAS extension, not part of CBLAS. Declared here because OpenBLAS's cblas.h, which
 * declares it, clashes with GSL's headers. */
void openblas_set_num_threads(int num_threads);

enum {
    VEC_N = 10000000, /* floats per vector */
    VEC_REPS = 30,    /* timed passes per vector kernel (best kept) */
    MEAN_K = 16,      /* vectors averaged by kernels.mean16_1e7 */
    BATCH = 64,       /* samples per training step */
};

/* Shortest time trusted, in seconds: a floor that keeps the rates finite. */
static const double min_time_s = 1e-7;

/* ---- Vector kernels against the triad ---- */

typedef enum vec_kernel {
    VEC_TRIAD,
    VEC_AVERAGE,
    VEC_MEAN,
} vec_kernel;

static void vec_run(vec_kernel k, float *out, const float *const *xs)
{
    switch (k) {
    case VEC_TRIAD:
        sim_tensor_triad(out, xs[0], xs[1], 0.5f, VEC_N);
        break;
    case VEC_AVERAGE:
        sim_tensor_average(out, xs[0], xs[1], VEC_N);
        break;
    case VEC_MEAN:
        sim_tensor_mean(out, xs, MEAN_K, VEC_N);
        break;
    }
}

/* Best times of VEC_REPS passes of each kernel after one untimed pass of each. The kernels
 * take turns within each repetition, so that a slow spell on a shared machine hits them
 * alike rather than one of them. */
static void vec_best_s(double *best, float *out, const float *const *xs)
{
    for (int k = VEC_TRIAD; k <= VEC_MEAN; k++) {
        vec_run((vec_kernel)k, out, xs);
        best[k] = HUGE_VAL;
    }
    for (int r = 0; r < VEC_REPS; r++)
        for (int k = VEC_TRIAD; k <= VEC_MEAN; k++) {
            double t0 = sim_bench_now();
            vec_run((vec_kernel)k, out, xs);
            double dt = sim_bench_now() - t0;
            best[k] = dt < best[k] ? dt : best[k];
        }
    for (int k = VEC_TRIAD; k <= VEC_MEAN; k++)
        best[k] = best[k] > min_time_s ? best[k] : min_time_s;
}

static int bench_vectors(FILE *out, sim_err *err)
{
    float *res = sim_tensor_alloc(VEC_N);
    float *xs[MEAN_K] = { NULL };
    int ok = res != NULL;
    for (size_t v = 0; v < MEAN_K; v++) {
        xs[v] = sim_tensor_alloc(VEC_N);
        ok = ok && xs[v] != NULL;
    }
    if (!ok) {
        for (size_t v = 0; v < MEAN_K; v++)
            sim_tensor_free(xs[v]);
        sim_tensor_free(res);
        return sim_err_set(err, SIM_ENOMEM, NULL, "cannot allocate %d vectors of %d floats",
                           MEAN_K + 1, VEC_N);
    }
    // Distinct normal values; sim_tensor_alloc has already faulted every page in.
    for (size_t v = 0; v < MEAN_K; v++)
        for (size_t i = 0; i < VEC_N; i++)
            xs[v][i] = 1.0f + 0.125f * (float)v + 1e-7f * (float)(i & 1023);
    const float *const *in = (const float *const *)xs;
    double vec_bytes = 4.0 * VEC_N;

    double best[VEC_MEAN + 1];
    vec_best_s(best, res, in);
    double triad = 3.0 * vec_bytes / best[VEC_TRIAD] / 1e9;
    sim_bench_emit(out, "kernels.triad", triad, "GB/s", triad);
    double avg = 3.0 * vec_bytes / best[VEC_AVERAGE] / 1e9;
    sim_bench_emit(out, "kernels.average_1e7", avg, "GB/s", triad);
    double mean = (MEAN_K + 1.0) * vec_bytes / best[VEC_MEAN] / 1e9;
    sim_bench_emit(out, "kernels.mean16_1e7", mean, "GB/s", triad);

    for (size_t v = 0; v < MEAN_K; v++)
        sim_tensor_free(xs[v]);
    sim_tensor_free(res);
    return SIM_OK;
}

/* ---- The matrix products of a training step, alone ---- */

/* One cblas_sgemm call (row-major, alpha 1). The matrices are offsets into one arena that is
 * allocated once the list is built, so the list can be counted before anything exists. */
typedef struct gemm_op {
    enum CBLAS_TRANSPOSE ta, tb;
    int M, N, K, lda, ldb, ldc;
    float beta;
    size_t a, b, c; /* offsets in floats */
} gemm_op;

/* A list being built: with ops NULL it only counts products and arena floats. */
typedef struct gemm_list {
    gemm_op *ops;
    size_t n;      /* products added */
    size_t floats; /* arena floats handed out, each piece 64-byte aligned */
} gemm_list;

/* Offset of a fresh piece of n floats in the arena. */
static size_t take(gemm_list *g, size_t n)
{
    size_t off = g->floats;
    g->floats += model_align(n);
    return off;
}

static void add(gemm_list *g, gemm_op op)
{
    if (g->ops != NULL)
        g->ops[g->n] = op;
    g->n++;
}

static gemm_op product(enum CBLAS_TRANSPOSE ta, enum CBLAS_TRANSPOSE tb, size_t M, size_t N,
                       size_t K, size_t lda, size_t ldb, size_t ldc, float beta, size_t a, size_t b,
                       size_t c)
{
    return (gemm_op){ ta, tb, (int)M, (int)N, (int)K, (int)lda, (int)ldb, (int)ldc, beta, a, b, c };
}

/* The products of model_dense_forward: out (B, D_out) += in (B, D_in) w^T. */
static void dense_forward(gemm_list *g, size_t out, size_t in, size_t w, size_t B, size_t D_in,
                          size_t D_out)
{
    add(g, product(CblasNoTrans, CblasTrans, B, D_out, D_in, D_in, D_in, D_out, 1.0f, in, w, out));
}

/* The products of model_dense_backward: dw += dout^T in, then din = dout w unless din is
 * SIZE_MAX (a first layer). */
static void dense_backward(gemm_list *g, size_t din, size_t dw, size_t dout, size_t in, size_t w,
                           size_t B, size_t D_in, size_t D_out)
{
    add(g,
        product(CblasTrans, CblasNoTrans, D_out, D_in, B, D_out, D_in, D_in, 1.0f, dout, in, dw));
    if (din != SIZE_MAX)
        add(g, product(CblasNoTrans, CblasNoTrans, B, D_in, D_out, D_out, D_in, D_in, 0.0f, dout, w,
                       din));
}

/* cnn.c's conv_forward for one sample: out (C_out, N) = w (C_out, kk) cols (kk, N). */
static void conv_forward(gemm_list *g, size_t out, size_t cols, size_t w, size_t C_out, size_t kk,
                         size_t N)
{
    add(g, product(CblasNoTrans, CblasNoTrans, C_out, N, kk, kk, N, N, 0.0f, w, cols, out));
}

/* cnn.c's conv_backward for one sample: dw += dout cols^T, then dcols = w^T dout unless dcols
 * is SIZE_MAX. */
static void conv_backward(gemm_list *g, size_t dcols, size_t dw, size_t dout, size_t cols, size_t w,
                          size_t C_out, size_t kk, size_t N)
{
    add(g, product(CblasNoTrans, CblasTrans, C_out, kk, N, N, N, kk, 1.0f, dout, cols, dw));
    if (dcols != SIZE_MAX)
        add(g, product(CblasTrans, CblasNoTrans, kk, N, C_out, kk, N, N, 0.0f, w, dout, dcols));
}

/* mlp.c's products in its order: each layer forward, then each layer backward from the
 * last, the layer outputs' gradients alternating between two scratch buffers. */
static void mlp_products(gemm_list *g, const model_config *cfg, size_t B)
{
    size_t d[MODEL_MAX_HIDDEN + 2], w[MODEL_MAX_HIDDEN + 1], dw[MODEL_MAX_HIDDEN + 1];
    size_t h[MODEL_MAX_HIDDEN + 2]; /* h[0] the input, h[L + 1] the scores */
    size_t L = cfg->n_hidden, widest = cfg->classes;
    d[0] = model_input_size(cfg);
    for (size_t l = 0; l < L; l++) {
        d[l + 1] = cfg->hidden[l];
        widest = d[l + 1] > widest ? d[l + 1] : widest;
    }
    d[L + 1] = cfg->classes;
    for (size_t l = 0; l <= L; l++)
        w[l] = take(g, d[l + 1] * d[l]);
    for (size_t l = 0; l <= L; l++)
        dw[l] = take(g, d[l + 1] * d[l]);
    for (size_t l = 0; l <= L + 1; l++)
        h[l] = take(g, B * d[l]);
    size_t scratch[2] = { take(g, B * widest), take(g, B * widest) };

    for (size_t l = 0; l <= L; l++)
        dense_forward(g, h[l + 1], h[l], w[l], B, d[l], d[l + 1]);
    size_t cur = 0;
    for (size_t l = L + 1; l-- > 0;) {
        size_t din = l == 0 ? SIZE_MAX : scratch[1 - cur];
        dense_backward(g, din, dw[l], scratch[cur], h[l], w[l], B, d[l], d[l + 1]);
        cur = 1 - cur;
    }
}

/* cnn.c's products in its order: per sample conv1 and conv2, the dense layers for the batch,
 * then the dense layers backward and per sample conv2 (weights and input) and conv1
 * (weights only) backward, through one im2col buffer. */
static void cnn_products(gemm_list *g, const model_config *cfg, size_t B)
{
    size_t C = cfg->channels, k = cfg->kernel, C1 = cfg->conv1, C2 = cfg->conv2;
    size_t HW = cfg->height * cfg->width, H1W1 = (cfg->height / 2) * (cfg->width / 2);
    size_t kk1 = C * k * k, kk2 = C1 * k * k, N1 = C1 * HW, N2 = C2 * H1W1;
    size_t P = C2 * (cfg->height / 4) * (cfg->width / 4), F = cfg->dense, K = cfg->classes;
    size_t cols = take(g, kk1 * HW > kk2 * H1W1 ? kk1 * HW : kk2 * H1W1);
    size_t c1w = take(g, C1 * kk1), c2w = take(g, C2 * kk2);
    size_t f1w = take(g, F * P), f2w = take(g, K * F);
    size_t g_c1w = take(g, C1 * kk1), g_c2w = take(g, C2 * kk2);
    size_t g_f1w = take(g, F * P), g_f2w = take(g, K * F);
    size_t c1 = take(g, B * N1), c2 = take(g, B * N2), p2 = take(g, B * P);
    size_t f1 = take(g, B * F), scores = take(g, B * K), dscores = take(g, B * K);
    size_t df1 = take(g, B * F), dp2 = take(g, B * P);
    size_t dc2 = take(g, N2), dc1 = take(g, N1); /* one sample */

    for (size_t b = 0; b < B; b++) {
        conv_forward(g, c1 + b * N1, cols, c1w, C1, kk1, HW);
        conv_forward(g, c2 + b * N2, cols, c2w, C2, kk2, H1W1);
    }
    dense_forward(g, f1, p2, f1w, B, P, F);
    dense_forward(g, scores, f1, f2w, B, F, K);
    dense_backward(g, df1, g_f2w, dscores, f1, f2w, B, F, K);
    dense_backward(g, dp2, g_f1w, df1, p2, f1w, B, P, F);
    for (size_t b = 0; b < B; b++) {
        conv_backward(g, cols, g_c2w, dc2, cols, c2w, C2, kk2, H1W1);
        conv_backward(g, SIZE_MAX, g_c1w, dc1, cols, c1w, C1, kk1, HW);
    }
}

static void gemm_run(const gemm_op *ops, size_t n, float *arena)
{
    for (size_t i = 0; i < n; i++) {
        const gemm_op *o = &ops[i];
        cblas_sgemm(CblasRowMajor, o->ta, o->tb, o->M, o->N, o->K, 1.0f, arena + o->a, o->lda,
                    arena + o->b, o->ldb, o->beta, arena + o->c, o->ldc);
    }
}

/* ---- One training step against its products ---- */

typedef void (*products_fn)(gemm_list *g, const model_config *cfg, size_t B);

/* Everything one step benchmark uses, allocated before any timing. */
typedef struct step_bench {
    model_step step; /* on minibatches of BATCH */
    gemm_list prod;  /* the step's products */
    float *arena;    /* (prod.floats) their matrices */
} step_bench;

static void step_fini(step_bench *s)
{
    model_step_fini(&s->step);
    free(s->prod.ops);
    sim_tensor_free(s->arena);
}

static int step_init(step_bench *s, const model_ops *ops, const model_config *cfg,
                     products_fn products, gsl_rng *r, sim_err *err)
{
    *s = (step_bench){ 0 };
    int rc = model_step_init(&s->step, ops, cfg, BATCH, err);
    if (rc != SIM_OK)
        return rc;
    s->step.opt.lr = 0.01;
    s->step.opt.momentum = 0.9;
    products(&s->prod, cfg, BATCH); /* counts */
    s->prod.ops = calloc(s->prod.n, sizeof(*s->prod.ops));
    s->arena = sim_tensor_alloc(s->prod.floats);
    if (s->prod.ops == NULL || s->arena == NULL) {
        step_fini(s);
        return sim_err_set(err, SIM_ENOMEM, NULL, "cannot allocate the %s step benchmark",
                           ops->name);
    }
    s->prod.n = 0, s->prod.floats = 0;
    products(&s->prod, cfg, BATCH); /* fills */

    ops->shape->init_params(s->step.params, cfg, r);
    for (size_t i = 0; i < BATCH * model_input_size(cfg); i++)
        s->step.x[i] = (float)gsl_ran_gaussian(r, 1.0);
    for (size_t b = 0; b < BATCH; b++)
        s->step.y[b] = (uint8_t)gsl_rng_uniform_int(r, cfg->classes);
    for (size_t i = 0; i < s->prod.floats; i++)
        s->arena[i] = (float)gsl_rng_uniform(r) - 0.5f;
    return SIM_OK;
}

/* How many times to time a step: `rounds` times a block of `reps` steps, then a block of
 * `reps` runs of its products, each block after one untimed warm-up run. */
typedef struct step_plan {
    int rounds, reps;
} step_plan;

/* Times the step and its products as `plan` says and keeps the best time of each. Blocks
 * keep each one's data warm in cache, as in a training loop, while the rounds spread both
 * over the same spells of a shared machine. Returns the last loss. */
static double step_time(step_bench *s, step_plan plan, double *step_s, double *prod_s)
{
    double loss = 0.0;
    int reps = plan.reps;
    *step_s = HUGE_VAL, *prod_s = HUGE_VAL;
    for (int round = 0; round < plan.rounds; round++) {
        loss = model_step_run(&s->step);
        for (int r = 0; r < reps; r++) {
            double t0 = sim_bench_now();
            loss = model_step_run(&s->step);
            double dt = sim_bench_now() - t0;
            *step_s = dt < *step_s ? dt : *step_s;
        }
        gemm_run(s->prod.ops, s->prod.n, s->arena);
        for (int r = 0; r < reps; r++) {
            double t0 = sim_bench_now();
            gemm_run(s->prod.ops, s->prod.n, s->arena);
            double dt = sim_bench_now() - t0;
            *prod_s = dt < *prod_s ? dt : *prod_s;
        }
    }
    *step_s = *step_s > min_time_s ? *step_s : min_time_s;
    *prod_s = *prod_s > min_time_s ? *prod_s : min_time_s;
    return loss;
}

/* Emits the step's rate against its products' rate, both in nominal flops. The nominal
 * count is three times the forward products, which overstates the products actually run
 * where a first layer computes no input gradient (for the 784-256-10 mlp the products are
 * 52.4 of 78.0 nominal MFLOP per step; for the cnn 1121 of 1161), but the ratio, a ratio of
 * times, does not depend on it. */
static int bench_step(FILE *out, const char *name, const model_ops *ops, const model_config *cfg,
                      products_fn products, step_plan plan, gsl_rng *r, sim_err *err)
{
    step_bench s;
    int rc = step_init(&s, ops, cfg, products, r, err);
    if (rc != SIM_OK)
        return rc;
    double step_s, prod_s;
    double loss = step_time(&s, plan, &step_s, &prod_s);
    step_fini(&s);
    if (!isfinite(loss))
        return sim_err_set(err, SIM_ENUMERIC, NULL, "%s step gave a non-finite loss", ops->name);
    double gflop = model_flops_per_sample(ops, cfg) * BATCH / 1e9;
    sim_bench_emit(out, name, gflop / step_s, "GFLOP/s", gflop / prod_s);
    return SIM_OK;
}

/* ---- Entry point ---- */

int model_bench_kernels(FILE *out, sim_err *err)
{
    openblas_set_num_threads(1);
    int rc = bench_vectors(out, err);
    if (rc != SIM_OK)
        return rc;

    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    if (r == NULL)
        return sim_err_set(err, SIM_ENOMEM, NULL, "cannot allocate a random generator");
    gsl_rng_set(r, 2385);
    model_config cfg;
    model_config_default(&cfg); /* 1x28x28, 10 classes, mlp 784-256-10, cnn 16-32 5x5 128 */
    cfg.n_hidden = 1;
    cfg.hidden[0] = 256;
    rc = bench_step(out, "kernels.mlp_step", &model_mlp, &cfg, mlp_products, (step_plan){ 10, 50 },
                    r, err);
    if (rc == SIM_OK)
        rc = bench_step(out, "kernels.cnn_step", &model_cnn, &cfg, cnn_products,
                        (step_plan){ 10, 5 }, r, err);
    gsl_rng_free(r);
    return rc;
}
