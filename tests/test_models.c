/* Tests of models/model.h: registry and checks, parameter layout, known answers,
 * accumulation, workspace bounds and training on blobs. Gradients are checked in
 * tests/test_models_gradients.c. */
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

/* ---- Registry and configuration ---- */

START_TEST(registry_finds_and_lists_every_model_by_exact_name)
{
    ck_assert_ptr_eq(model_find("softmax"), &model_softmax);
    ck_assert_ptr_eq(model_find("svm"), &model_svm);
    ck_assert_ptr_eq(model_find("mlp"), &model_mlp);
    ck_assert_ptr_eq(model_find("cnn"), &model_cnn);
    ck_assert_ptr_eq(model_find("none"), &model_none);
    ck_assert_ptr_eq(model_find("vector"), &model_vector);
    /* What the runtime asks of a model is in its flags, never its name. */
    ck_assert_uint_eq(model_none.flags, MODEL_NO_DATA | MODEL_NO_PARAMS);
    ck_assert_uint_eq(model_vector.flags, MODEL_NO_DATA | MODEL_AVERAGING_ONLY);
    ck_assert_uint_eq(model_mlp.flags, 0);
    ck_assert_uint_eq(model_none.shape->num_params(NULL), 0);
    ck_assert_ptr_null(model_find("MLP"));
    ck_assert_ptr_null(model_find(""));
    ck_assert_ptr_null(model_find(NULL));
    ck_assert_ptr_eq(model_at(0), &model_softmax);
    ck_assert_ptr_eq(model_at(3), &model_cnn);
    ck_assert_ptr_null(model_at(4));
    char buf[64], small[8];
    model_list(buf, sizeof(buf));
    ck_assert_str_eq(buf, "softmax, svm, mlp, cnn");
    model_list(small, sizeof(small));
    ck_assert_str_eq(small, "softmax");
}
END_TEST

static void expect_invalid(const model_ops *ops, const model_config *c, const char *path,
                           const char *msg)
{
    sim_err err;
    sim_err_clear(&err);
    ck_assert_int_eq(model_check(ops, c, &err), SIM_EINVAL);
    ck_assert_str_eq(err.path, path);
    ck_assert_str_eq(err.msg, msg);
}

START_TEST(check_passes_defaults_and_names_the_bad_field_and_value)
{
    model_config c;
    model_config_default(&c);
    for (size_t i = 0; model_at(i) != NULL; i++)
        ck_assert_int_eq(model_check(model_at(i), &c, NULL), 0);
    c.classes = 1;
    expect_invalid(&model_softmax, &c, "classes", "must be an integer in [2, 256], got 1");
    model_config_default(&c);
    c.width = 0;
    expect_invalid(&model_mlp, &c, "width", "must be an integer in [1, 65536], got 0");
    c.width = 65536, c.height = 512;
    expect_invalid(&model_softmax, &c, "",
                   "input of 1 x 512 x 65536 = 33554432 values exceeds 16777216");
    c.height = 256, c.hidden[0] = 65536; // fc1 (16777216 + 1) * 65536, fc2 (65536 + 1) * 10
    expect_invalid(&model_mlp, &c, "",
                   "mlp model has 1099512348682 parameters, more than 2147483647");
    model_config_default(&c);
    c.hidden[1] = 0, c.n_hidden = 2;
    expect_invalid(&model_mlp, &c, "hidden[1]", "must be an integer in [1, 65536], got 0");
    c.n_hidden = 9;
    expect_invalid(&model_mlp, &c, "hidden", "must have at most 8 layers, got 9");
    model_config_default(&c);
    c.kernel = 4;
    expect_invalid(&model_cnn, &c, "kernel", "must be odd, got 4");
    c.kernel = 5, c.height = 3;
    expect_invalid(&model_cnn, &c, "height", "must be an integer in [4, 65536], got 3");
    model_config_default(&c);
    c.svm_margin = 0.0;
    expect_invalid(&model_svm, &c, "margin", "must be a finite number > 0, got 0");
    c.svm_margin = (double)NAN;
    expect_invalid(&model_svm, &c, "margin", "must be a finite number > 0, got nan");
}
END_TEST

/* ---- Layout and sizes ---- */

START_TEST(num_params_matches_hand_counts_for_defaults)
{
    model_config c;
    model_config_default(&c);
    // 784 inputs, 10 classes: (784 + 1) * 10.
    ck_assert_uint_eq(model_softmax.shape->num_params(&c), 7850);
    ck_assert_uint_eq(model_svm.shape->num_params(&c), 7850);
    // (784 + 1) * 256 + (256 + 1) * 10 = 200960 + 2570.
    ck_assert_uint_eq(model_mlp.shape->num_params(&c), 203530);
    // conv1 16 * (25 + 1) = 416; conv2 32 * (16 * 25 + 1) = 12832; pooled 32 * 7 * 7 = 1568;
    // fc1 128 * (1568 + 1) = 200832; fc2 10 * (128 + 1) = 1290.
    ck_assert_uint_eq(model_cnn.shape->num_params(&c), 215370);
}
END_TEST

static void check_views_tile(const model_ops *ops, const model_config *c)
{
    model_view v[MODEL_MAX_VIEWS];
    size_t n = ops->shape->views(v, c), off = 0;
    ck_assert_uint_ge(n, 2);
    ck_assert_uint_le(n, MODEL_MAX_VIEWS);
    for (size_t i = 0; i < n; i++) {
        ck_assert_ptr_nonnull(v[i].name);
        ck_assert_uint_eq(v[i].offset, off);
        ck_assert_uint_ge(v[i].rows * v[i].cols, 1);
        // Weights and biases alternate; a bias has one entry per row of its weight.
        if (i % 2 == 1) {
            ck_assert_uint_eq(v[i].cols, 1);
            ck_assert_uint_eq(v[i].rows, v[i - 1].rows);
            ck_assert_int_eq(v[i].init, MODEL_INIT_ZERO);
        }
        for (size_t j = 0; j < i; j++)
            ck_assert_str_ne(v[i].name, v[j].name);
        off += v[i].rows * v[i].cols;
    }
    ck_assert_uint_eq(off, ops->shape->num_params(c));
}

START_TEST(views_tile_the_parameter_block_in_order)
{
    model_config d, lin = mdt_tiny_linear(), mlp = mdt_tiny_mlp(), c3 = mdt_tiny_cnn(3),
                    c5 = mdt_tiny_cnn(5);
    model_config_default(&d);
    for (size_t i = 0; model_at(i) != NULL; i++)
        check_views_tile(model_at(i), &d);
    check_views_tile(&model_softmax, &lin);
    check_views_tile(&model_svm, &lin);
    check_views_tile(&model_mlp, &mlp);
    check_views_tile(&model_cnn, &c3);
    check_views_tile(&model_cnn, &c5);
    mlp.n_hidden = 8;
    for (size_t l = 0; l < 8; l++)
        mlp.hidden[l] = 3 + l;
    check_views_tile(&model_mlp, &mlp);
}
END_TEST

START_TEST(flops_count_three_times_the_forward_products)
{
    model_config c;
    model_config_default(&c);
    // mlp: 2 * (784 * 256 + 256 * 10) = 406528 per forward.
    ck_assert_double_eq(model_flops_per_sample(&model_mlp, &c), 3.0 * 406528.0);
    // cnn: 2 * (16 * 25 * 784 + 32 * 400 * 196 + 128 * 1568 + 10 * 128) = 6048768.
    ck_assert_double_eq(model_flops_per_sample(&model_cnn, &c), 3.0 * 6048768.0);
    ck_assert_double_eq(model_flops_per_sample(&model_softmax, &c), 3.0 * 15680.0);
}
END_TEST

/* ---- Known answers ---- */

/* D = 2, K = 3, B = 2, with dyadic values so that the scores are exact in float:
 *   W = [[0.5, -1.25], [0.75, 0.25], [-0.5, 1]], b = [0.125, -0.375, 0.25]
 *   x0 = [1.5, 0.5]:  s0 = [0.75 - 0.625 + 0.125, 1.125 + 0.125 - 0.375, -0.75 + 0.5 + 0.25]
 *                        = [0.25, 0.875, 0]
 *   x1 = [-0.5, 2]:   s1 = [-0.25 - 2.5 + 0.125, -0.375 + 0.5 - 0.375, 0.25 + 2 + 0.25]
 *                        = [-2.625, -0.25, 2.5]
 * with labels y = [1, 2]. */
static const float known_params[] = { 0.5f, -1.25f, 0.75f,   0.25f, -0.5f,
                                      1.0f, 0.125f, -0.375f, 0.25f };

static const float known_x[] = { 1.5f, 0.5f, -0.5f, 2.0f };

static const uint8_t known_y[] = { 1, 2 };

static model_config known_config(void)
{
    model_config c;
    model_config_default(&c);
    c.channels = 1, c.height = 1, c.width = 2, c.classes = 3, c.svm_margin = 1.0;
    return c;
}

START_TEST(softmax_forward_matches_a_case_worked_by_hand)
{
    model_config c = known_config();
    float acts[64], grads[9] = { 0 };
    ck_assert_uint_le(model_softmax.shape->num_acts(&c, 2), 64);
    double loss = model_softmax.forward(acts, known_params, known_x, known_y, 2, &c);
    // exp(s0) = [1.2840254, 2.3988753, 1], sum 4.6829007: p0 = [0.2741945, 0.5122627,
    // 0.2135429]. exp(s1) = [0.0724398, 0.7788008, 12.1824940], sum 13.0337345:
    // p1 = [0.0055579, 0.0597527, 0.9346894]. Loss = (-ln 0.5122627 - ln 0.9346894) / 2
    // = (0.6689177 + 0.0675410) / 2. Tolerance 1e-6: expf and the float division are good
    // to a few ulps (1e-7) and the rest is in double.
    const double p[6] = { 0.27419446, 0.51226269, 0.21354286, 0.00555787, 0.05975270, 0.93468944 };
    ck_assert_double_eq_tol(loss, 0.36822934, 1e-6);
    for (size_t i = 0; i < 6; i++)
        ck_assert_double_eq_tol((double)acts[i], p[i], 1e-6);
    ck_assert_uint_eq(model_count_correct(acts, known_y, 2, &c), 2);
    // The bias gradient is the mean of p - onehot(y) over the two samples.
    model_softmax.backward(grads, acts, known_params, known_x, known_y, 2, &c);
    ck_assert_double_eq_tol((double)grads[6], (p[0] + p[3]) / 2, 1e-6);
    ck_assert_double_eq_tol((double)grads[7], (p[1] - 1 + p[4]) / 2, 1e-6);
    ck_assert_double_eq_tol((double)grads[8], (p[2] + p[5] - 1) / 2, 1e-6);
    // W's gradient row 0 is (p0[0] x0 + p1[0] x1) / 2.
    ck_assert_double_eq_tol((double)grads[0], (p[0] * 1.5 + p[3] * -0.5) / 2, 1e-6);
}
END_TEST

START_TEST(svm_forward_and_backward_match_a_case_worked_by_hand)
{
    model_config c = known_config();
    float acts[64], grads[9] = { 0 };
    double loss = model_svm.forward(acts, known_params, known_x, known_y, 2, &c);
    // Sample 0 (y = 1): best wrong class 0 (0.25 > 0), hinge 1 + 0.25 - 0.875 = 0.375.
    // Sample 1 (y = 2): best wrong class 1 (-0.25), hinge 1 - 0.25 - 2.5 < 0, so 0.
    // Every value is dyadic, so all of this is exact.
    ck_assert_double_eq(loss, 0.1875);
    model_svm.backward(grads, acts, known_params, known_x, known_y, 2, &c);
    // Only sample 0 is active: +1/2 on class 0, -1/2 on class 1, times x0 = [1.5, 0.5].
    const float want[9] = { 0.75f, 0.25f, -0.75f, -0.25f, 0, 0, 0.5f, -0.5f, 0 };
    for (size_t i = 0; i < 9; i++)
        ck_assert_double_eq((double)grads[i], (double)want[i]);
}
END_TEST

START_TEST(predictions_take_the_first_maximum)
{
    model_config c = known_config();
    const float scores[] = { 0.2f, 0.7f, 0.1f, 0.4f, 0.1f, 0.4f, -1.5f, -2.5f, -0.5f };
    const uint8_t y[] = { 1, 2, 2 };
    uint8_t pred[3];
    model_predict(pred, scores, 3, &c);
    ck_assert_uint_eq(pred[0], 1);
    ck_assert_uint_eq(pred[1], 0); // tie between classes 0 and 2
    ck_assert_uint_eq(pred[2], 2);
    ck_assert_uint_eq(model_count_correct(scores, y, 3, &c), 2);
}
END_TEST

/* ---- Invariants ---- */

static const model_config *tiny_of(const model_ops *ops, model_config *c)
{
    *c = ops == &model_mlp   ? mdt_tiny_mlp()
         : ops == &model_cnn ? mdt_tiny_cnn(3)
                             : mdt_tiny_linear();
    return c;
}

/* The k-th model with its tiny configuration in c and buffers in m. */
static const model_ops *tiny_bundle(bundle *m, model_config *c, size_t k, size_t B,
                                    unsigned long seed)
{
    const model_ops *ops = model_at(k);
    mdt_bundle_init(m, ops, tiny_of(ops, c), B, seed);
    return ops;
}

START_TEST(backward_overwrites_every_float_of_the_gradient)
{
    for (size_t k = 0; model_at(k) != NULL; k++) {
        model_config c;
        bundle m;
        const model_ops *ops = tiny_bundle(&m, &c, k, 4, 577 + k);
        size_t n = m.n_params;
        float *g = malloc(n * sizeof(float));
        ck_assert(g != NULL);
        ops->forward(m.acts, m.params, m.x, m.y, 4, &c);
        memset(m.grads, 0, n * sizeof(float));
        ops->backward(m.grads, m.acts, m.params, m.x, m.y, 4, &c);
        memcpy(g, m.grads, n * sizeof(float));
        // Whatever the buffer held (here garbage, and NaN, which any addition would keep),
        // the gradient written is the one a zeroed buffer gets, to the bit.
        for (size_t i = 0; i < n; i++)
            m.grads[i] = i % 3 == 0 ? NAN : 0.37f * (float)i - 1.9f;
        ops->backward(m.grads, m.acts, m.params, m.x, m.y, 4, &c);
        for (size_t i = 0; i < n; i++)
            ck_assert_msg(m.grads[i] == g[i] && signbit(m.grads[i]) == signbit(g[i]),
                          "%s: float %zu is %g, want %g", ops->name, i, (double)m.grads[i],
                          (double)g[i]);
        free(g);
        mdt_bundle_fini(&m);
    }
}
END_TEST

START_TEST(forward_and_backward_stay_inside_their_buffers)
{
    const float sentinel = 1234.5f;
    const size_t guard = 64;
    for (size_t k = 0; model_at(k) != NULL; k++) {
        model_config c;
        bundle m;
        const model_ops *ops = tiny_bundle(&m, &c, k, 7, 99 + k);
        size_t n = m.n_params, na = m.n_acts;
        float *acts = sim_tensor_alloc(na + guard), *grads = sim_tensor_alloc(n + guard);
        float *keep = malloc(n * sizeof(float));
        ck_assert(acts && grads && keep);
        memcpy(keep, m.params, n * sizeof(float));
        for (size_t i = 0; i < guard; i++)
            acts[na + i] = grads[n + i] = sentinel;
        // A workspace sized for 7 samples also serves smaller batches.
        for (size_t B = 7; B >= 4; B -= 3) {
            ops->forward(acts, m.params, m.x, m.y, B, &c);
            ops->backward(grads, acts, m.params, m.x, m.y, B, &c);
        }
        for (size_t i = 0; i < guard; i++) {
            ck_assert_double_eq((double)acts[na + i], (double)sentinel);
            ck_assert_double_eq((double)grads[n + i], (double)sentinel);
        }
        ck_assert_int_eq(memcmp(keep, m.params, n * sizeof(float)), 0);
        sim_tensor_free(acts);
        sim_tensor_free(grads);
        free(keep);
        mdt_bundle_fini(&m);
    }
}
END_TEST

START_TEST(batch_loss_is_the_mean_of_sample_losses)
{
    for (size_t k = 0; model_at(k) != NULL; k++) {
        model_config c;
        bundle m;
        const model_ops *ops = tiny_bundle(&m, &c, k, 5, 31 + k);
        double batch = ops->forward(m.acts, m.params, m.x, m.y, 5, &c), sum = 0.0;
        for (size_t i = 0; i < 5; i++)
            sum += ops->forward(m.acts, m.params, m.x + i * m.D, m.y + i, 1, &c);
        // Same float operations per sample except the BLAS blocking over the batch: 1e-6.
        ck_assert_double_eq_tol(batch, sum / 5.0, 1e-6 * fabs(batch));
        mdt_bundle_fini(&m);
    }
}
END_TEST

START_TEST(scores_without_labels_are_the_same_and_the_loss_is_zero)
{
    for (size_t k = 0; model_at(k) != NULL; k++) {
        model_config c;
        bundle m;
        const model_ops *ops = tiny_bundle(&m, &c, k, 6, 7 + k);
        size_t K = c.classes;
        float *s = malloc(6 * K * sizeof(float));
        ck_assert_ptr_nonnull(s);
        ck_assert_double_gt(ops->forward(m.acts, m.params, m.x, m.y, 6, &c), 0.0);
        memcpy(s, m.acts, 6 * K * sizeof(float));
        ck_assert_double_eq(ops->forward(m.acts, m.params, m.x, NULL, 6, &c), 0.0);
        ck_assert_int_eq(memcmp(s, m.acts, 6 * K * sizeof(float)), 0);
        free(s);
        mdt_bundle_fini(&m);
    }
}
END_TEST

START_TEST(init_is_deterministic_with_zero_biases_and_he_scale)
{
    model_config c;
    model_config_default(&c);
    size_t n = model_mlp.shape->num_params(&c);
    float *a = sim_tensor_alloc(n), *b = sim_tensor_alloc(n);
    ck_assert(a && b);
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 8675309);
    model_mlp.shape->init_params(a, &c, r);
    gsl_rng_set(r, 8675309);
    model_mlp.shape->init_params(b, &c, r);
    gsl_rng_free(r);
    ck_assert_int_eq(memcmp(a, b, n * sizeof(float)), 0);
    model_view v[MODEL_MAX_VIEWS];
    size_t nv = model_mlp.shape->views(v, &c);
    ck_assert_uint_eq(nv, 4);
    for (size_t i = 0; i < 256; i++)
        ck_assert_double_eq((double)a[v[1].offset + i], 0.0);
    // fc1.w: 200704 draws of N(0, 2 / 784). The sample standard deviation has a relative
    // standard error of 1 / sqrt(2 n) = 0.16%; 1% is six of those.
    double sum = 0.0, sq = 0.0, cnt = (double)(v[0].rows * v[0].cols);
    for (size_t i = 0; i < v[0].rows * v[0].cols; i++) {
        sum += (double)a[i];
        sq += (double)a[i] * (double)a[i];
    }
    double sd = sqrt(sq / cnt - (sum / cnt) * (sum / cnt));
    ck_assert_double_eq_tol(sd, sqrt(2.0 / 784.0), 0.01 * sqrt(2.0 / 784.0));
    ck_assert_double_eq_tol(sum / cnt, 0.0, 6.0 * sqrt(2.0 / 784.0 / cnt));
    sim_tensor_free(a);
    sim_tensor_free(b);
}
END_TEST

/* ---- Training ---- */

/* N samples of K Gaussian blobs in D dimensions: class means N(0, 1) per coordinate, noise
 * N(0, 0.7); with D = 64 the classes are many noise widths apart. Labels cycle 0..K-1. */
static void make_blobs(float *x, uint8_t *y, size_t N, size_t D, size_t K, gsl_rng *r)
{
    float means[4 * 64];
    ck_assert_uint_le(K * D, 4 * 64);
    for (size_t i = 0; i < K * D; i++)
        means[i] = (float)gsl_ran_gaussian(r, 1.0);
    for (size_t i = 0; i < N; i++) {
        y[i] = (uint8_t)(i % K);
        for (size_t j = 0; j < D; j++)
            x[i * D + j] = means[y[i] * D + j] + (float)gsl_ran_gaussian(r, 0.7);
    }
}

START_TEST(training_on_separable_blobs_drops_the_loss)
{
    const size_t N = 96, B = 16, K = 3, steps = 300;
    model_config c;
    model_config_default(&c);
    c.channels = 1, c.height = 8, c.width = 8, c.classes = K;
    c.hidden[0] = 16, c.conv1 = 4, c.conv2 = 8, c.kernel = 3, c.dense = 16;
    size_t D = model_input_size(&c);
    float *x = malloc(N * D * sizeof(float));
    uint8_t *y = malloc(N);
    ck_assert(x && y);
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 424242);
    make_blobs(x, y, N, D, K, r);
    for (size_t k = 0; model_at(k) != NULL; k++) {
        const model_ops *ops = model_at(k);
        size_t n = ops->shape->num_params(&c);
        float *params = sim_tensor_alloc(n), *grads = sim_tensor_alloc(n);
        float *acts = sim_tensor_alloc(ops->shape->num_acts(&c, N));
        ck_assert(params && grads && acts);
        ops->shape->init_params(params, &c, r);
        double before = ops->forward(acts, params, x, y, N, &c);
        for (size_t s = 0; s < steps; s++) {
            size_t at = (s % (N / B)) * B;
            ops->forward(acts, params, x + at * D, y + at, B, &c);
            ops->backward(grads, acts, params, x + at * D, y + at, B, &c);
            for (size_t i = 0; i < n; i++)
                params[i] -= 0.05f * grads[i];
        }
        double after = ops->forward(acts, params, x, y, N, &c);
        size_t correct = model_count_correct(acts, y, N, &c);
        // A working model fits well-separated blobs almost perfectly; a wrong gradient
        // does not cut the loss fivefold.
        ck_assert_msg(after < 0.2 * before && correct >= N - 2,
                      "%s: loss %.6g -> %.6g, %zu of %zu correct", ops->name, before, after,
                      correct, N);
        sim_tensor_free(params);
        sim_tensor_free(grads);
        sim_tensor_free(acts);
    }
    gsl_rng_free(r);
    free(x);
    free(y);
}
END_TEST

Suite *test_suite(void)
{
    Suite *s = suite_create("models");
    TCase *tc = tcase_create("registry");
    tcase_add_test(tc, registry_finds_and_lists_every_model_by_exact_name);
    tcase_add_test(tc, check_passes_defaults_and_names_the_bad_field_and_value);
    suite_add_tcase(s, tc);

    tc = tcase_create("layout");
    tcase_add_test(tc, num_params_matches_hand_counts_for_defaults);
    tcase_add_test(tc, views_tile_the_parameter_block_in_order);
    tcase_add_test(tc, flops_count_three_times_the_forward_products);
    tcase_add_test(tc, init_is_deterministic_with_zero_biases_and_he_scale);
    suite_add_tcase(s, tc);

    tc = tcase_create("known_answers");
    tcase_add_test(tc, softmax_forward_matches_a_case_worked_by_hand);
    tcase_add_test(tc, svm_forward_and_backward_match_a_case_worked_by_hand);
    tcase_add_test(tc, predictions_take_the_first_maximum);
    suite_add_tcase(s, tc);

    tc = tcase_create("invariants");
    tcase_add_test(tc, backward_overwrites_every_float_of_the_gradient);
    tcase_add_test(tc, forward_and_backward_stay_inside_their_buffers);
    tcase_add_test(tc, batch_loss_is_the_mean_of_sample_losses);
    tcase_add_test(tc, scores_without_labels_are_the_same_and_the_loss_is_zero);
    suite_add_tcase(s, tc);

    tc = tcase_create("training");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, training_on_separable_blobs_drops_the_loss);
    suite_add_tcase(s, tc);
    return s;
}
