/* Tests of models/model.h: gradients against finite differences.
 *
 * Gradient checks: the float forward pass is too coarse for finite differences (its loss is
 * rounded at about 1e-7 relative, so with a step h the difference quotient carries an error
 * near 1e-7 / h, and a step large enough to drown that crosses ReLU and max-pool kinks).
 * The test therefore carries its own double-precision reference of every model, written
 * naively from the definitions (direct convolution loops, no im2col, no BLAS) and reading
 * the parameter layout documented in model.h. The model's float forward is first checked
 * against the reference (same function), then its float backward against central
 * differences of the reference with h = 1e-5, whose error (h^2 truncation, 1e-16 / h
 * rounding) is below 1e-9: what remains is the float rounding of backward itself. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>

#include "harness_models.h"
#include "models/model.h"
#include "sim/tensor.h"
#include "suite.h"

/* ---- Double-precision reference models, straight from the definitions ---- */

static const double *take(const double **cursor, size_t n)
{
    const double *p = *cursor;
    *cursor += n;
    return p;
}

static void ref_dense(double *out, const double *in, const double *w, const double *b, size_t B,
                      size_t D_in, size_t D_out, int relu)
{
    for (size_t i = 0; i < B; i++)
        for (size_t o = 0; o < D_out; o++) {
            double s = b[o];
            for (size_t j = 0; j < D_in; j++)
                s += w[o * D_in + j] * in[i * D_in + j];
            out[i * D_out + o] = relu && s < 0.0 ? 0.0 : s;
        }
}

/* One sample: relu(conv(in) + b) with "same" zero padding. */
static void ref_conv_relu(double *out, const double *in, const double *w, const double *b, size_t C,
                          size_t H, size_t W, size_t C_out, size_t k)
{
    long p = (long)k / 2;
    for (size_t o = 0; o < C_out; o++)
        for (long yy = 0; yy < (long)H; yy++)
            for (long xx = 0; xx < (long)W; xx++) {
                double s = b[o];
                for (size_t c = 0; c < C; c++)
                    for (long ki = 0; ki < (long)k; ki++)
                        for (long kj = 0; kj < (long)k; kj++) {
                            long iy = yy + ki - p, ix = xx + kj - p;
                            if (iy < 0 || iy >= (long)H || ix < 0 || ix >= (long)W)
                                continue;
                            s += w[((o * C + c) * k + (size_t)ki) * k + (size_t)kj] *
                                 in[(c * H + (size_t)iy) * W + (size_t)ix];
                        }
                out[(o * H + (size_t)yy) * W + (size_t)xx] = s > 0.0 ? s : 0.0;
            }
}

static void ref_pool(double *out, const double *in, size_t C, size_t H, size_t W)
{
    for (size_t c = 0; c < C; c++)
        for (size_t oy = 0; oy < H / 2; oy++)
            for (size_t ox = 0; ox < W / 2; ox++) {
                const double *a = in + (c * H + 2 * oy) * W + 2 * ox;
                double m = fmax(fmax(a[0], a[1]), fmax(a[W], a[W + 1]));
                out[(c * (H / 2) + oy) * (W / 2) + ox] = m;
            }
}

static double ref_softmax_ce(const double *s, const uint8_t *y, size_t B, size_t K)
{
    double loss = 0.0;
    for (size_t i = 0; i < B; i++) {
        double sum = 0.0;
        for (size_t j = 0; j < K; j++)
            sum += exp(s[i * K + j]);
        loss += log(sum) - s[i * K + y[i]];
    }
    return loss / (double)B;
}

static double ref_hinge(const double *s, const uint8_t *y, size_t B, size_t K, double margin)
{
    double loss = 0.0;
    for (size_t i = 0; i < B; i++) {
        double worst = -HUGE_VAL;
        for (size_t j = 0; j < K; j++)
            if (j != y[i])
                worst = fmax(worst, s[i * K + j]);
        loss += fmax(0.0, margin + worst - s[i * K + y[i]]);
    }
    return loss / (double)B;
}

/* The mean loss of the model at parameters theta on inputs x and labels m->y. */
static double ref_loss(const bundle *m, const double *theta, const double *x)
{
    const model_config *c = &m->cfg;
    size_t B = m->B, K = c->classes, width = m->D, big = m->D;
    for (size_t l = 0; l < c->n_hidden; l++)
        big = c->hidden[l] > big ? c->hidden[l] : big;
    big = (c->conv1 > c->conv2 ? c->conv1 : c->conv2) * m->D + c->dense + big;
    double *a = calloc(B * big, sizeof(double)), *t = calloc(B * big, sizeof(double));
    double *s = calloc(B * K, sizeof(double));
    ck_assert(a && t && s);
    const double *p = theta;
    memcpy(a, x, B * m->D * sizeof(double));
    if (m->ops == &model_mlp)
        for (size_t l = 0; l < c->n_hidden; l++) {
            const double *w = take(&p, c->hidden[l] * width), *b = take(&p, c->hidden[l]);
            ref_dense(t, a, w, b, B, width, c->hidden[l], 1);
            memcpy(a, t, B * c->hidden[l] * sizeof(double));
            width = c->hidden[l];
        }
    if (m->ops == &model_cnn) {
        size_t C = c->channels, H = c->height, W = c->width, k = c->kernel;
        size_t H1 = H / 2, W1 = W / 2, P = c->conv2 * (H1 / 2) * (W1 / 2);
        const double *w1 = take(&p, c->conv1 * C * k * k), *b1 = take(&p, c->conv1);
        const double *w2 = take(&p, c->conv2 * c->conv1 * k * k), *b2 = take(&p, c->conv2);
        double *u = calloc(big, sizeof(double)), *v = calloc(big, sizeof(double));
        ck_assert(u && v);
        for (size_t i = 0; i < B; i++) {
            ref_conv_relu(u, x + i * m->D, w1, b1, C, H, W, c->conv1, k);
            ref_pool(v, u, c->conv1, H, W);
            ref_conv_relu(u, v, w2, b2, c->conv1, H1, W1, c->conv2, k);
            ref_pool(a + i * P, u, c->conv2, H1, W1);
        }
        free(u);
        free(v);
        const double *wf = take(&p, c->dense * P), *bf = take(&p, c->dense);
        ref_dense(t, a, wf, bf, B, P, c->dense, 1);
        memcpy(a, t, B * c->dense * sizeof(double));
        width = c->dense;
    }
    const double *w = take(&p, K * width), *b = take(&p, K);
    ref_dense(s, a, w, b, B, width, K, 0);
    ck_assert_uint_eq((size_t)(p - theta), m->n_params); // the layout was read to its end
    double loss = m->ops == &model_svm ? ref_hinge(s, m->y, B, K, c->svm_margin)
                                       : ref_softmax_ce(s, m->y, B, K);
    free(a);
    free(t);
    free(s);
    return loss;
}

/* Checks forward against the reference, then backward against central differences. */
static void check_gradients(const model_ops *ops, const model_config *cfg, size_t B,
                            unsigned long seed)
{
    bundle m;
    mdt_bundle_init(&m, ops, cfg, B, seed);
    size_t n = m.n_params;
    double *theta = malloc(n * sizeof(double)), *x = malloc(B * m.D * sizeof(double));
    double *fd = malloc(n * sizeof(double));
    ck_assert(theta && x && fd);
    for (size_t i = 0; i < n; i++)
        theta[i] = (double)m.params[i];
    for (size_t i = 0; i < B * m.D; i++)
        x[i] = (double)m.x[i];

    // Same function: float loss within 1e-5 relative (float rounding of a few hundred
    // operations is near 1e-6; random labels make any wrong score show in the loss).
    double loss = ops->forward(m.acts, m.params, m.x, m.y, B, cfg);
    double ref = ref_loss(&m, theta, x);
    ck_assert_double_eq_tol(loss, ref, 1e-5 * fabs(ref));

    memset(m.grads, 0, n * sizeof(float));
    ops->backward(m.grads, m.acts, m.params, m.x, m.y, B, cfg);
    const double h = 1e-5;
    double scale = 0.0;
    for (size_t i = 0; i < n; i++) {
        double keep = theta[i];
        theta[i] = keep + h;
        double up = ref_loss(&m, theta, x);
        theta[i] = keep - h;
        double down = ref_loss(&m, theta, x);
        theta[i] = keep;
        fd[i] = (up - down) / (2.0 * h);
        scale = fmax(scale, fabs(fd[i]));
    }
    ck_assert(scale > 1e-3); // a vanishing gradient would make the check vacuous
    // Float backward sums at most a few hundred products per entry: its error is near 1e-6
    // of the gradient's scale. A wrong index, sign or factor errs by O(scale).
    for (size_t i = 0; i < n; i++)
        ck_assert_msg(fabs((double)m.grads[i] - fd[i]) <= 1e-3 * fabs(fd[i]) + 1e-4 * scale,
                      "%s param %zu: backward %.9g, finite differences %.9g", ops->name, i,
                      (double)m.grads[i], fd[i]);
    free(theta);
    free(x);
    free(fd);
    mdt_bundle_fini(&m);
}

/* ---- Gradients (every layer: dense, ReLU, softmax cross-entropy, hinge, convolution with
 * its im2col / col2im, max-pool; the first layer's gradient runs through all the others) */

START_TEST(softmax_gradient_matches_finite_differences)
{
    model_config c = mdt_tiny_linear();
    check_gradients(&model_softmax, &c, 5, 3141);
}
END_TEST

START_TEST(svm_gradient_matches_finite_differences)
{
    model_config c = mdt_tiny_linear();
    check_gradients(&model_svm, &c, 5, 2718);
}
END_TEST

START_TEST(mlp_gradient_matches_finite_differences)
{
    model_config c = mdt_tiny_mlp();
    check_gradients(&model_mlp, &c, 4, 1618);
    c.n_hidden = 0; // no hidden layer: the softmax model through the mlp code
    check_gradients(&model_mlp, &c, 3, 1414);
}
END_TEST

START_TEST(cnn_gradient_matches_finite_differences_with_3x3_kernels)
{
    model_config c = mdt_tiny_cnn(3);
    check_gradients(&model_cnn, &c, 3, 1732);
}
END_TEST

START_TEST(cnn_gradient_matches_finite_differences_with_5x5_kernels_and_odd_sides)
{
    model_config c = mdt_tiny_cnn(5);
    check_gradients(&model_cnn, &c, 2, 2236);
}
END_TEST

START_TEST(cnn_gradient_matches_finite_differences_when_kernels_exceed_the_image)
{
    // A 7x7 kernel on a 4x5 input, then on the 2x2 pooled map: most taps fall on padding.
    model_config c = mdt_tiny_cnn(5);
    c.kernel = 7, c.height = 4, c.width = 5, c.conv1 = 2, c.conv2 = 2, c.dense = 3;
    check_gradients(&model_cnn, &c, 2, 2645);
}
END_TEST

Suite *test_suite(void)
{
    Suite *s = suite_create("models_gradients");
    TCase *tc = tcase_create("gradients");
    tcase_set_timeout(tc, 60); // sanitizer builds run the reference slowly
    tcase_add_test(tc, softmax_gradient_matches_finite_differences);
    tcase_add_test(tc, svm_gradient_matches_finite_differences);
    tcase_add_test(tc, mlp_gradient_matches_finite_differences);
    tcase_add_test(tc, cnn_gradient_matches_finite_differences_with_3x3_kernels);
    tcase_add_test(tc, cnn_gradient_matches_finite_differences_with_5x5_kernels_and_odd_sides);
    tcase_add_test(tc, cnn_gradient_matches_finite_differences_when_kernels_exceed_the_image);
    suite_add_tcase(s, tc);
    return s;
}
