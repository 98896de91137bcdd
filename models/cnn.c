/* cnn: conv k x k, ReLU, max-pool 2x2, conv k x k, ReLU, max-pool 2x2, dense + ReLU, dense,
 * softmax cross-entropy.
 *
 * Convolutions have stride 1 and "same" zero padding of k / 2 (k odd), so they keep the
 * height and width; pooling windows are 2x2 with stride 2 and drop an odd last row or column
 * (floor). With input (C, H, W): conv1 gives (C1, H, W), pool1 (C1, H1, W1) with H1 = H / 2
 * and W1 = W / 2, conv2 (C2, H1, W1), pool2 (C2, H2, W2) with H2 = H1 / 2 and W2 = W1 / 2,
 * flattened in (c, y, x) order to P = C2 * H2 * W2 features, fc1 gives F = dense units and
 * fc2 the K scores. Max-pool sends the gradient to the first maximum of each window in
 * (0,0), (0,1), (1,0), (1,1) order; the backward pass finds it again from the saved input
 * rather than storing indices.
 *
 * A convolution is an im2col product, one sample at a time: the sample's patches are laid out
 * as cols (C_in * k * k, H * W) and out (C_out, H * W) = w (C_out, C_in * k * k) cols. The
 * backward pass rebuilds cols (cheaper than keeping them for the whole batch), adds
 * dout cols^T to the weight gradient, then reuses the same buffer for w^T dout and folds it
 * back into the input gradient (col2im). The first convolution computes no input gradient.
 *
 * Parameters, in order: conv1.w (C1, C k k), conv1.b (C1), conv2.w (C2, C1 k k), conv2.b
 * (C2), fc1.w (F, P), fc1.b (F), fc2.w (K, F), fc2.b (K). */
#include <string.h>

#include <gsl/gsl_cblas.h>

#include "models/model.h"

enum {
    V_C1W,
    V_C1B,
    V_C2W,
    V_C2B,
    V_F1W,
    V_F1B,
    V_F2W,
    V_F2B,
    N_VIEWS
};

/* Sizes derived from a config and the offsets of the workspace views (in floats). */
typedef struct cnn_shape {
    size_t C, H, W, k;      /* input and kernel side */
    size_t C1, H1, W1, kk1; /* conv1 channels, pool1 output size, conv1 fan-in C k k */
    size_t C2, H2, W2, kk2; /* conv2 channels, pool2 output size, conv2 fan-in C1 k k */
    size_t P, F, K;         /* flattened features, dense units, classes */
    /* workspace: forward activations for the batch, then backward scratch */
    size_t c1, p1, c2, p2, f1, dscores, df1, dp2, dc2, dp1, dc1, cols, total;
} cnn_shape;

static void shape(cnn_shape *s, const model_config *cfg, size_t B)
{
    s->C = cfg->channels, s->H = cfg->height, s->W = cfg->width, s->k = cfg->kernel;
    s->C1 = cfg->conv1, s->H1 = s->H / 2, s->W1 = s->W / 2, s->kk1 = s->C * s->k * s->k;
    s->C2 = cfg->conv2, s->H2 = s->H1 / 2, s->W2 = s->W1 / 2, s->kk2 = s->C1 * s->k * s->k;
    s->P = s->C2 * s->H2 * s->W2, s->F = cfg->dense, s->K = cfg->classes;

    size_t n1 = s->C1 * s->H * s->W, m1 = s->C1 * s->H1 * s->W1, n2 = s->C2 * s->H1 * s->W1;
    size_t cols1 = s->kk1 * s->H * s->W, cols2 = s->kk2 * s->H1 * s->W1;
    size_t off = model_align(B * s->K); /* the probabilities come first */
    s->c1 = off, off += model_align(B * n1);
    s->p1 = off, off += model_align(B * m1);
    s->c2 = off, off += model_align(B * n2);
    s->p2 = off, off += model_align(B * s->P);
    s->f1 = off, off += model_align(B * s->F);
    s->dscores = off, off += model_align(B * s->K);
    s->df1 = off, off += model_align(B * s->F);
    s->dp2 = off, off += model_align(B * s->P);
    s->dc2 = off, off += model_align(n2); /* one sample from here on */
    s->dp1 = off, off += model_align(m1);
    s->dc1 = off, off += model_align(n1);
    s->cols = off, off += model_align(cols1 > cols2 ? cols1 : cols2);
    s->total = off;
}

static int check_size(const char *field, size_t v, size_t lo, size_t hi, sim_err *err)
{
    if (v < lo || v > hi)
        return sim_err_set(err, SIM_EINVAL, field, "must be an integer in [%zu, %zu], got %zu", lo,
                           hi, v);
    return 0;
}

static int cnn_check(const model_config *cfg, sim_err *err)
{
    int rc;
    // Two 2x2 poolings need at least 4 rows and columns to leave one output pixel.
    if ((rc = check_size("height", cfg->height, 4, MODEL_MAX_DIM, err)) != 0 ||
        (rc = check_size("width", cfg->width, 4, MODEL_MAX_DIM, err)) != 0 ||
        (rc = check_size("conv1", cfg->conv1, 1, MODEL_MAX_DIM, err)) != 0 ||
        (rc = check_size("conv2", cfg->conv2, 1, MODEL_MAX_DIM, err)) != 0 ||
        (rc = check_size("dense", cfg->dense, 1, MODEL_MAX_DIM, err)) != 0 ||
        (rc = check_size("kernel", cfg->kernel, 1, 31, err)) != 0)
        return rc;
    if (cfg->kernel % 2 == 0)
        return sim_err_set(err, SIM_EINVAL, "kernel", "must be odd, got %zu", cfg->kernel);
    return 0;
}

static size_t cnn_views(model_view *v, const model_config *cfg)
{
    cnn_shape s;
    shape(&s, cfg, 0);
    size_t off = 0;
    v[V_C1W] = (model_view){ "conv1.w", off, s.C1, s.kk1, MODEL_INIT_HE };
    off += s.C1 * s.kk1;
    v[V_C1B] = (model_view){ "conv1.b", off, s.C1, 1, MODEL_INIT_ZERO };
    off += s.C1;
    v[V_C2W] = (model_view){ "conv2.w", off, s.C2, s.kk2, MODEL_INIT_HE };
    off += s.C2 * s.kk2;
    v[V_C2B] = (model_view){ "conv2.b", off, s.C2, 1, MODEL_INIT_ZERO };
    off += s.C2;
    v[V_F1W] = (model_view){ "fc1.w", off, s.F, s.P, MODEL_INIT_HE };
    off += s.F * s.P;
    v[V_F1B] = (model_view){ "fc1.b", off, s.F, 1, MODEL_INIT_ZERO };
    off += s.F;
    v[V_F2W] = (model_view){ "fc2.w", off, s.K, s.F, MODEL_INIT_GLOROT };
    off += s.K * s.F;
    v[V_F2B] = (model_view){ "fc2.b", off, s.K, 1, MODEL_INIT_ZERO };
    return N_VIEWS;
}

static size_t cnn_num_params(const model_config *cfg)
{
    cnn_shape s;
    shape(&s, cfg, 0);
    return s.C1 * (s.kk1 + 1) + s.C2 * (s.kk2 + 1) + s.F * (s.P + 1) + s.K * (s.F + 1);
}

static size_t cnn_num_acts(const model_config *cfg, size_t B)
{
    cnn_shape s;
    shape(&s, cfg, B);
    return s.total;
}

static double cnn_flops_forward(const model_config *cfg)
{
    cnn_shape s;
    shape(&s, cfg, 0);
    double conv1 = (double)(s.C1 * s.kk1) * (double)(s.H * s.W);
    double conv2 = (double)(s.C2 * s.kk2) * (double)(s.H1 * s.W1);
    return 2.0 * (conv1 + conv2 + (double)(s.F * s.P) + (double)(s.K * s.F));
}

static size_t cnn_layer_flops(double *flops, const model_config *cfg)
{
    cnn_shape s;
    shape(&s, cfg, 0);
    flops[0] = 2.0 * (double)(s.C1 * s.kk1) * (double)(s.H * s.W);
    flops[1] = 2.0 * (double)(s.C2 * s.kk2) * (double)(s.H1 * s.W1);
    flops[2] = 2.0 * (double)(s.F * s.P);
    flops[3] = 2.0 * (double)(s.K * s.F);
    return 4;
}

static void cnn_init_params(float *params, const model_config *cfg, gsl_rng *r)
{
    model_view v[N_VIEWS];
    model_init_views(params, v, cnn_views(v, cfg), r);
}

/* The element-wise loops below are unrolled by four: gcc -O2 (the debugoptimized build)
 * vectorizes straight-line code but not loops of unknown length, and a ReLU written as a
 * plain loop becomes a branch that mispredicts half the time. The order of operations on
 * each element is that of the plain loop, so the results are the same. */

static inline float max2(float a, float b)
{
    return a > b ? a : b;
}

/* dst[i] += src[i]. */
static void add_into(float *restrict dst, const float *restrict src, size_t n)
{
    size_t i = 0;
    for (; i + 4 <= n; i += 4) {
        dst[i] += src[i];
        dst[i + 1] += src[i + 1];
        dst[i + 2] += src[i + 2];
        dst[i + 3] += src[i + 3];
    }
    for (; i < n; i++)
        dst[i] += src[i];
}

/* x[i] = max(x[i] + b, 0). */
static void bias_relu(float *x, float b, size_t n)
{
    size_t i = 0;
    for (; i + 4 <= n; i += 4) {
        x[i] = max2(x[i] + b, 0.0f);
        x[i + 1] = max2(x[i + 1] + b, 0.0f);
        x[i + 2] = max2(x[i + 2] + b, 0.0f);
        x[i + 3] = max2(x[i + 3] + b, 0.0f);
    }
    for (; i < n; i++)
        x[i] = max2(x[i] + b, 0.0f);
}

/* The sum of x[0..n) in four interleaved partial sums (i mod 4) added in a fixed order. */
static float sum4(const float *x, size_t n)
{
    float s0 = 0.0f, s1 = 0.0f, s2 = 0.0f, s3 = 0.0f;
    size_t i = 0;
    for (; i + 4 <= n; i += 4) {
        s0 += x[i];
        s1 += x[i + 1];
        s2 += x[i + 2];
        s3 += x[i + 3];
    }
    for (; i < n; i++)
        s0 += x[i];
    return (s0 + s1) + (s2 + s3);
}

/* For kernel offset j (0..k-1) along a side of length n with padding p = k / 2: output
 * positions [*lo, *hi) read input position (pos + j - p) inside [0, n). */
static void valid_span(size_t *lo, size_t *hi, size_t j, size_t p, size_t n)
{
    *lo = j < p ? (p - j < n ? p - j : n) : 0;
    *hi = j <= p ? n : (j - p < n ? n - (j - p) : 0);
    if (*hi < *lo)
        *hi = *lo;
}

/* Row r = (c, ki, kj) of the patches (im2col's cols) of a (C, H, W) image, kernel k, padding
 * p = k / 2: output (y, x) of the row reads input (c, y + ki - p, x + kj - p), inside the image
 * for y in [y_lo, y_hi) and x in [lo, hi). */
typedef struct patch_row {
    size_t y_lo, y_hi, lo, hi;
    size_t first, last; /* the row's entries [first, last) hold the inside ones and wrap-arounds */
    size_t src;         /* the image element at entry `first` */
} patch_row;

/* The patch row r (above) of an H x W image; false when no entry of it is inside the image. */
static bool patch_row_of(patch_row *pr, size_t r, size_t k, size_t H, size_t W)
{
    size_t p = k / 2, c = r / (k * k), ki = r / k % k, kj = r % k;
    valid_span(&pr->y_lo, &pr->y_hi, ki, p, H);
    valid_span(&pr->lo, &pr->hi, kj, p, W);
    if (pr->y_lo == pr->y_hi || pr->lo == pr->hi)
        return false;
    pr->first = pr->y_lo * W + pr->lo;
    pr->last = (pr->y_hi - 1) * W + pr->hi;
    // Both offsets are added before p is subtracted, so no index goes below 0.
    pr->src = c * H * W + (pr->y_lo + ki - p) * W + (pr->lo + kj - p);
    return true;
}

/* Clears the entries of `row` between first and last that wrapped around from a neighbouring
 * image row (columns outside [lo, hi)). */
static void clear_wrapped(float *row, const patch_row *pr, size_t W)
{
    for (size_t y = pr->y_lo; y < pr->y_hi; y++) {
        for (size_t x = 0; x < pr->lo; x++)
            row[y * W + x] = 0.0f;
        for (size_t x = pr->hi; x < W; x++)
            row[y * W + x] = 0.0f;
    }
}

/* Patches of one sample: row (c, ki, kj) of cols holds in[c][y + ki - p][x + kj - p] at
 * column (y, x), 0 outside the image. Each row is the input plane shifted by
 * (ki - p) * W + (kj - p) elements, so it is copied in one piece; the columns that wrapped
 * around from a neighbouring image row are then cleared, as are the rows outside. */
static void im2col(float *restrict cols,     /* (C * k * k, H * W) */
                   const float *restrict in, /* (C, H, W) */
                   size_t C, size_t H, size_t W, size_t k)
{
    size_t N = H * W;
    for (size_t r = 0; r < C * k * k; r++) {
        float *row = cols + r * N;
        patch_row pr;
        if (!patch_row_of(&pr, r, k, H, W)) {
            memset(row, 0, N * sizeof(*row));
            continue;
        }
        memset(row, 0, pr.first * sizeof(*row));
        memcpy(row + pr.first, in + pr.src, (pr.last - pr.first) * sizeof(*row));
        memset(row + pr.last, 0, (N - pr.last) * sizeof(*row));
        clear_wrapped(row, &pr, W);
    }
}

/* The adjoint of im2col: din = 0, then every entry of cols that im2col copied from the
 * image is added back where it came from. The entries that stand for padding are cleared
 * first (cols is scratch), so each row is added in one piece like im2col's copy. */
static void col2im(float *restrict din,  /* (C, H, W) */
                   float *restrict cols, /* (C * k * k, H * W), clobbered */
                   size_t C, size_t H, size_t W, size_t k)
{
    size_t N = H * W;
    memset(din, 0, C * N * sizeof(*din));
    for (size_t r = 0; r < C * k * k; r++) {
        float *row = cols + r * N;
        patch_row pr;
        if (!patch_row_of(&pr, r, k, H, W))
            continue;
        clear_wrapped(row, &pr, W);
        add_into(din + pr.src, row + pr.first, pr.last - pr.first);
    }
}

/* out = relu(w cols + b) for one sample; cols must hold im2col of the input. */
static void conv_forward(float *restrict out,        /* (C_out, N) */
                         const float *restrict cols, /* (kk, N) */
                         const float *restrict w,    /* (C_out, kk) */
                         const float *restrict b,    /* (C_out) */
                         size_t C_out, size_t kk, size_t N)
{
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)C_out, (int)N, (int)kk, 1.0f, w,
                (int)kk, cols, (int)N, 0.0f, out, (int)N);
    for (size_t c = 0; c < C_out; c++)
        bias_relu(out + c * N, b[c], N);
}

/* dw += dout cols^T and db += row sums of dout for one sample (dw = and db = for the first
 * sample, `first`: from 0.0f, the bits a zeroed gradient would give); then, when dcols is not
 * NULL, dcols = w^T dout (dcols may be the cols buffer itself: it is read before). */
static void conv_backward(float *dcols,            /* (kk, N) or NULL */
                          float *restrict dw,      /* (C_out, kk) */
                          float *restrict db,      /* (C_out) */
                          const float *dout,       /* (C_out, N) */
                          const float *cols,       /* (kk, N) */
                          const float *restrict w, /* (C_out, kk) */
                          size_t C_out, size_t kk, size_t N, bool first)
{
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)C_out, (int)kk, (int)N, 1.0f, dout,
                (int)N, cols, (int)N, first ? 0.0f : 1.0f, dw, (int)kk);
    for (size_t c = 0; c < C_out; c++)
        db[c] = (first ? 0.0f : db[c]) + sum4(dout + c * N, N);
    if (dcols != NULL)
        cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, (int)kk, (int)N, (int)C_out, 1.0f, w,
                    (int)kk, dout, (int)N, 0.0f, dcols, (int)N);
}

/* The offset, within a 2x2 window at a with row stride W, of its first maximum in the order
 * (0,0), (0,1), (1,0), (1,1): a tournament of the two rows, ties going to the earlier. The
 * choices are arithmetic on comparison results rather than branches, which would mispredict
 * on every other window. */
static inline size_t window_argmax(const float *a, size_t W)
{
    size_t top = (size_t)(a[1] > a[0]), bottom = W + (size_t)(a[W + 1] > a[W]);
    size_t lower = (size_t)(max2(a[W], a[W + 1]) > max2(a[0], a[1]));
    return top + lower * (bottom - top);
}

static void maxpool_forward(float *restrict out,      /* (C, H / 2, W / 2) */
                            const float *restrict in, /* (C, H, W) */
                            size_t C, size_t H, size_t W)
{
    size_t Ho = H / 2, Wo = W / 2;
    for (size_t c = 0; c < C; c++) {
        for (size_t oy = 0; oy < Ho; oy++) {
            const float *a = in + (c * H + 2 * oy) * W;
            float *o = out + (c * Ho + oy) * Wo;
            for (size_t ox = 0; ox < Wo; ox++) {
                const float *q = a + 2 * ox;
                o[ox] = max2(max2(q[0], q[1]), max2(q[W], q[W + 1]));
            }
        }
    }
}

/* din = 0 except at each window's first maximum, which gets dout, or 0 when that maximum is
 * 0: the pool's input is a ReLU output, so this also applies the ReLU's derivative. */
static void maxpool_relu_backward(float *restrict din,        /* (C, H, W) */
                                  const float *restrict dout, /* (C, H / 2, W / 2) */
                                  const float *restrict in,   /* (C, H, W) */
                                  size_t C, size_t H, size_t W)
{
    size_t Ho = H / 2, Wo = W / 2;
    memset(din, 0, C * H * W * sizeof(*din));
    for (size_t c = 0; c < C; c++) {
        for (size_t oy = 0; oy < Ho; oy++) {
            size_t row = (c * H + 2 * oy) * W;
            const float *d = dout + (c * Ho + oy) * Wo;
            for (size_t ox = 0; ox < Wo; ox++) {
                size_t at = row + 2 * ox + window_argmax(in + row + 2 * ox, W);
                din[at] = d[ox] * (float)(in[at] > 0.0f);
            }
        }
    }
}

static double cnn_forward(float *acts, const float *params, const float *x, const uint8_t *y,
                          size_t B, const model_config *cfg)
{
    cnn_shape s;
    model_view v[N_VIEWS];
    shape(&s, cfg, B);
    cnn_views(v, cfg);
    const float *c1w = params + v[V_C1W].offset, *c1b = params + v[V_C1B].offset;
    const float *c2w = params + v[V_C2W].offset, *c2b = params + v[V_C2B].offset;
    const float *f1w = params + v[V_F1W].offset, *f1b = params + v[V_F1B].offset;
    const float *f2w = params + v[V_F2W].offset, *f2b = params + v[V_F2B].offset;
    size_t D = s.C * s.H * s.W, n1 = s.C1 * s.H * s.W, m1 = s.C1 * s.H1 * s.W1;
    size_t n2 = s.C2 * s.H1 * s.W1;
    float *cols = acts + s.cols; /* (max(kk1 H W, kk2 H1 W1)) */
    for (size_t b = 0; b < B; b++) {
        float *c1 = acts + s.c1 + b * n1;  /* (C1, H, W) */
        float *p1 = acts + s.p1 + b * m1;  /* (C1, H1, W1) */
        float *c2 = acts + s.c2 + b * n2;  /* (C2, H1, W1) */
        float *p2 = acts + s.p2 + b * s.P; /* (C2, H2, W2) */
        im2col(cols, x + b * D, s.C, s.H, s.W, s.k);
        conv_forward(c1, cols, c1w, c1b, s.C1, s.kk1, s.H * s.W);
        maxpool_forward(p1, c1, s.C1, s.H, s.W);
        im2col(cols, p1, s.C1, s.H1, s.W1, s.k);
        conv_forward(c2, cols, c2w, c2b, s.C2, s.kk2, s.H1 * s.W1);
        maxpool_forward(p2, c2, s.C2, s.H1, s.W1);
    }
    float *f1 = acts + s.f1; /* (B, F) */
    model_dense_forward(f1, acts + s.p2, f1w, f1b, B, s.P, s.F);
    model_relu_forward(f1, B * s.F);
    float *probs = acts; /* (B, K) */
    model_dense_forward(probs, f1, f2w, f2b, B, s.F, s.K);
    return model_softmax_ce_forward(probs, y, B, s.K);
}

static void cnn_backward(float *grads, float *acts, const float *params, const float *x,
                         const uint8_t *y, size_t B, const model_config *cfg)
{
    cnn_shape s;
    model_view v[N_VIEWS];
    shape(&s, cfg, B);
    cnn_views(v, cfg);
    const float *c1w = params + v[V_C1W].offset, *c2w = params + v[V_C2W].offset;
    const float *f1w = params + v[V_F1W].offset, *f2w = params + v[V_F2W].offset;
    float *g_c1w = grads + v[V_C1W].offset, *g_c1b = grads + v[V_C1B].offset;
    float *g_c2w = grads + v[V_C2W].offset, *g_c2b = grads + v[V_C2B].offset;
    float *g_f1w = grads + v[V_F1W].offset, *g_f1b = grads + v[V_F1B].offset;
    float *g_f2w = grads + v[V_F2W].offset, *g_f2b = grads + v[V_F2B].offset;
    size_t D = s.C * s.H * s.W, n1 = s.C1 * s.H * s.W, m1 = s.C1 * s.H1 * s.W1;
    size_t n2 = s.C2 * s.H1 * s.W1;

    float *dscores = acts + s.dscores; /* (B, K) */
    float *f1 = acts + s.f1;           /* (B, F) */
    float *df1 = acts + s.df1;         /* (B, F) */
    float *dp2 = acts + s.dp2;         /* (B, P) */
    model_softmax_ce_backward(dscores, acts, y, B, s.K);
    model_dense_backward(df1, g_f2w, g_f2b, dscores, f1, f2w, B, s.F, s.K, false);
    model_relu_backward(df1, f1, B * s.F);
    model_dense_backward(dp2, g_f1w, g_f1b, df1, acts + s.p2, f1w, B, s.P, s.F, false);

    float *dc2 = acts + s.dc2;   /* (C2, H1, W1) */
    float *dp1 = acts + s.dp1;   /* (C1, H1, W1) */
    float *dc1 = acts + s.dc1;   /* (C1, H, W) */
    float *cols = acts + s.cols; /* (max(kk1 H W, kk2 H1 W1)) */
    for (size_t b = 0; b < B; b++) {
        const float *c1 = acts + s.c1 + b * n1; /* (C1, H, W) */
        const float *p1 = acts + s.p1 + b * m1; /* (C1, H1, W1) */
        const float *c2 = acts + s.c2 + b * n2; /* (C2, H1, W1) */
        maxpool_relu_backward(dc2, dp2 + b * s.P, c2, s.C2, s.H1, s.W1);
        im2col(cols, p1, s.C1, s.H1, s.W1, s.k);
        conv_backward(cols, g_c2w, g_c2b, dc2, cols, c2w, s.C2, s.kk2, s.H1 * s.W1, b == 0);
        col2im(dp1, cols, s.C1, s.H1, s.W1, s.k);
        maxpool_relu_backward(dc1, dp1, c1, s.C1, s.H, s.W);
        im2col(cols, x + b * D, s.C, s.H, s.W, s.k);
        conv_backward(NULL, g_c1w, g_c1b, dc1, cols, c1w, s.C1, s.kk1, s.H * s.W, b == 0);
    }
}

static const model_shape cnn_model_shape = {
    .views = cnn_views,
    .num_params = cnn_num_params,
    .num_acts = cnn_num_acts,
    .flops_forward = cnn_flops_forward,
    .layer_flops = cnn_layer_flops,
    .init_params = cnn_init_params,
};

const model_ops model_cnn = {
    .name = "cnn",
    .check = cnn_check,
    .shape = &cnn_model_shape,
    .forward = cnn_forward,
    .backward = cnn_backward,
};
