/* Tests of models/optim.h: heavy-ball and Nesterov momentum and weight decay worked by hand,
 * every learning-rate schedule at chosen epochs worked by hand, and the configuration check. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>
#include <gsl/gsl_errno.h>

#include "models/optim.h"
#include "suite.h"

/* The rates below are sums and products of a few doubles: 1e-12 covers their rounding. */
#define LR_TOL    1e-12
/* Parameters are floats updated through three steps: a few float roundings (6e-8 relative)
 * of values near 2 stay below 1e-6. */
#define PARAM_TOL 1e-6

static optim_config config(double lr, double momentum, double weight_decay)
{
    optim_config c;
    optim_config_default(&c);
    c.lr = lr, c.momentum = momentum, c.weight_decay = weight_decay;
    return c;
}

/* ---- Steps ---- */

/* The fused average-then-step gives the bits of the average written into both models and an
 * optim_step on each (a body of 32 floats and a tail of 5), for every choice of gradients,
 * with and without momentum buffers, heavy ball or Nesterov. */
START_TEST(average_step_pair_is_the_average_then_two_steps_bit_for_bit)
{
    enum {
        N = 37
    };
    float x0[N], y0[N], vx0[N], vy0[N], gx[N], gy[N];
    for (size_t i = 0; i < N; i++) {
        x0[i] = 0.3f * (float)i - 4.1f, y0[i] = 1.7f - 0.11f * (float)(i * i % 13);
        vx0[i] = 0.05f * (float)(i % 7), vy0[i] = -0.02f * (float)i;
        gx[i] = 0.9f - 0.07f * (float)i, gy[i] = 0.013f * (float)(i % 5) - 0.4f;
    }
    for (int form = 0; form < 3; form++) { /* no momentum, heavy ball, Nesterov */
        int mom = form > 0;
        optim_config c = config(0.37, mom ? 0.9 : 0.0, 1e-3);
        c.nesterov = form == 2;
        for (int which = 0; which < 4; which++) {
            const float *g1 = which & 1 ? gx : NULL, *g2 = which & 2 ? gy : NULL;
            float x[N], y[N], vx[N], vy[N], rx[N], ry[N], rvx[N], rvy[N];
            memcpy(x, x0, sizeof(x)), memcpy(y, y0, sizeof(y));
            memcpy(vx, vx0, sizeof(vx)), memcpy(vy, vy0, sizeof(vy));
            memcpy(rvx, vx0, sizeof(rvx)), memcpy(rvy, vy0, sizeof(rvy));
            for (size_t i = 0; i < N; i++)
                rx[i] = ry[i] = (x0[i] + y0[i]) * 0.5f;
            if (g1 != NULL)
                optim_step(rx, mom ? rvx : NULL, g1, N, 0.37, &c);
            if (g2 != NULL)
                optim_step(ry, mom ? rvy : NULL, g2, N, 0.37, &c);
            optim_average_step_pair(x, y, mom ? vx : NULL, mom ? vy : NULL, g1, g2, N, 0.37, &c);
            ck_assert_msg(memcmp(x, rx, sizeof(x)) == 0, "x, form %d, gradients %d", form, which);
            ck_assert_msg(memcmp(y, ry, sizeof(y)) == 0, "y, form %d, gradients %d", form, which);
            ck_assert(memcmp(vx, rvx, sizeof(vx)) == 0 && memcmp(vy, rvy, sizeof(vy)) == 0);
        }
    }
}
END_TEST

START_TEST(momentum_steps_match_three_worked_by_hand)
{
    optim_config c = config(0.1, 0.9, 0.0);
    float x[2] = { 1.5f, -2.25f }, v[2] = { 0.0f, 0.0f };
    const float g[3][2] = { { 0.5f, -1.0f }, { 0.25f, 0.75f }, { -0.125f, 0.5f } };
    // 1: v = g1 = [0.5, -1];                          x = [1.45, -2.15]
    // 2: v = 0.9 [0.5, -1] + [0.25, 0.75] = [0.7, -0.15];      x = [1.38, -2.135]
    // 3: v = 0.9 [0.7, -0.15] + [-0.125, 0.5] = [0.505, 0.365]; x = [1.3295, -2.1715]
    const double want_x[3][2] = { { 1.45, -2.15 }, { 1.38, -2.135 }, { 1.3295, -2.1715 } };
    const double want_v[3][2] = { { 0.5, -1.0 }, { 0.7, -0.15 }, { 0.505, 0.365 } };
    for (size_t s = 0; s < 3; s++) {
        optim_step(x, v, g[s], 2, optim_lr(&c, (double)s), &c);
        for (size_t i = 0; i < 2; i++) {
            ck_assert_double_eq_tol((double)x[i], want_x[s][i], PARAM_TOL);
            ck_assert_double_eq_tol((double)v[i], want_v[s][i], PARAM_TOL);
        }
    }
}
END_TEST

START_TEST(nesterov_steps_match_three_worked_by_hand)
{
    optim_config c = config(0.1, 0.9, 0.0);
    c.nesterov = true;
    float x[2] = { 1.5f, -2.25f }, v[2] = { 0.0f, 0.0f };
    const float g[3][2] = { { 0.5f, -1.0f }, { 0.25f, 0.75f }, { -0.125f, 0.5f } };
    // v as the heavy ball's; x moves by lr (g + 0.9 v):
    // 1: v = [0.5, -1];      g + 0.9 v = [0.95, -1.9];      x = [1.405, -2.06]
    // 2: v = [0.7, -0.15];   g + 0.9 v = [0.88, 0.615];     x = [1.317, -2.1215]
    // 3: v = [0.505, 0.365]; g + 0.9 v = [0.3295, 0.8285]; x = [1.28405, -2.20435]
    const double want_x[3][2] = { { 1.405, -2.06 }, { 1.317, -2.1215 }, { 1.28405, -2.20435 } };
    const double want_v[3][2] = { { 0.5, -1.0 }, { 0.7, -0.15 }, { 0.505, 0.365 } };
    for (size_t s = 0; s < 3; s++) {
        optim_step(x, v, g[s], 2, c.lr, &c);
        for (size_t i = 0; i < 2; i++) {
            ck_assert_double_eq_tol((double)x[i], want_x[s][i], PARAM_TOL);
            ck_assert_double_eq_tol((double)v[i], want_v[s][i], PARAM_TOL);
        }
    }
}
END_TEST

/* Nesterov's look-ahead decays the parameters too: g' = g + wd x enters v and the step alike.
 * lr 0.5, momentum 0.5, decay 0.1 from x = 3, v = 0.4, g = -0.7: g' = -0.4, v = -0.2,
 * g' + 0.5 v = -0.5, x = 3.25. Without momentum (no buffer) Nesterov is plain SGD, bit for bit,
 * over a body of 16 floats and a tail of 3. */
START_TEST(nesterov_decays_before_the_look_ahead_and_is_plain_sgd_without_momentum)
{
    optim_config c = config(0.5, 0.5, 0.1);
    c.nesterov = true;
    float x[1] = { 3.0f }, v[1] = { 0.4f };
    const float g[1] = { -0.7f };
    optim_step(x, v, g, 1, c.lr, &c);
    ck_assert_double_eq_tol((double)v[0], -0.2, PARAM_TOL);
    ck_assert_double_eq_tol((double)x[0], 3.25, PARAM_TOL);

    enum {
        N = 19
    };
    float a[N], b[N], gr[N];
    for (size_t i = 0; i < N; i++)
        a[i] = b[i] = 0.41f * (float)i - 2.3f, gr[i] = 1.9f - 0.23f * (float)(i % 7);
    optim_config plain = config(0.061, 0.0, 0.0032), nest = plain;
    nest.nesterov = true;
    for (int s = 0; s < 3; s++) {
        optim_step(a, NULL, gr, N, plain.lr, &plain);
        optim_step(b, NULL, gr, N, nest.lr, &nest);
    }
    ck_assert_int_eq(memcmp(a, b, sizeof(a)), 0);
}
END_TEST

START_TEST(weight_decay_adds_to_the_gradient_before_momentum)
{
    // Without momentum: g' = g + 0.01 x = [0.27, 0.46]; x -= 0.5 g' gives [1.865, -4.23].
    optim_config c = config(0.5, 0.0, 0.01);
    float x[2] = { 2.0f, -4.0f };
    const float g[2] = { 0.25f, 0.5f };
    optim_step(x, NULL, g, 2, c.lr, &c);
    ck_assert_double_eq_tol((double)x[0], 1.865, PARAM_TOL);
    ck_assert_double_eq_tol((double)x[1], -4.23, PARAM_TOL);

    // With momentum 0.9, decay 0.1, lr 0.1 and a zero gradient: step 1 g' = 0.1, v = 0.1,
    // x = 0.99; step 2 g' = 0.099, v = 0.09 + 0.099 = 0.189, x = 0.99 - 0.0189 = 0.9711.
    c = config(0.1, 0.9, 0.1);
    float y[1] = { 1.0f }, v[1] = { 0.0f };
    const float zero[1] = { 0.0f };
    optim_step(y, v, zero, 1, c.lr, &c);
    ck_assert_double_eq_tol((double)y[0], 0.99, PARAM_TOL);
    optim_step(y, v, zero, 1, c.lr, &c);
    ck_assert_double_eq_tol((double)v[0], 0.189, PARAM_TOL);
    ck_assert_double_eq_tol((double)y[0], 0.9711, PARAM_TOL);
}
END_TEST

START_TEST(zero_momentum_with_a_buffer_is_plain_sgd)
{
    optim_config c = config(0.037, 0.0, 0.0021);
    float a[5] = { 0.31f, -1.7f, 2.9f, 0.0f, -0.044f }, b[5], v[5] = { 0 };
    const float g[5] = { 1.3f, 0.21f, -0.77f, 5.5f, 0.0f };
    memcpy(b, a, sizeof(a));
    for (int s = 0; s < 3; s++) {
        optim_step(a, v, g, 5, c.lr, &c);
        optim_step(b, NULL, g, 5, c.lr, &c);
    }
    ck_assert_int_eq(memcmp(a, b, sizeof(a)), 0);
    optim_step(a, v, g, 0, c.lr, &c); // n = 0 touches nothing
    ck_assert_int_eq(memcmp(a, b, sizeof(a)), 0);
}
END_TEST

/* ---- Schedules ---- */

START_TEST(constant_schedule_keeps_the_base_rate)
{
    optim_config c = config(0.2, 0.0, 0.0);
    ck_assert_double_eq_tol(optim_lr(&c, 0.0), 0.2, LR_TOL);
    ck_assert_double_eq_tol(optim_lr(&c, 123.4), 0.2, LR_TOL);
    ck_assert_double_eq_tol(optim_lr(&c, -3.0), 0.2, LR_TOL);
}
END_TEST

START_TEST(step_schedule_multiplies_by_gamma_at_each_boundary)
{
    optim_config c = config(0.4, 0.0, 0.0);
    c.schedule = OPTIM_STEP, c.gamma = 0.5, c.step_epochs = 3.0;
    ck_assert_double_eq_tol(optim_lr(&c, 0.0), 0.4, LR_TOL);
    ck_assert_double_eq_tol(optim_lr(&c, 2.999), 0.4, LR_TOL); // just before the boundary
    ck_assert_double_eq_tol(optim_lr(&c, 3.0), 0.2, LR_TOL);   // 0.4 * 0.5
    ck_assert_double_eq_tol(optim_lr(&c, 5.5), 0.2, LR_TOL);
    ck_assert_double_eq_tol(optim_lr(&c, 6.0), 0.1, LR_TOL);   // 0.4 * 0.25
    ck_assert_double_eq_tol(optim_lr(&c, 9.25), 0.05, LR_TOL); // 0.4 * 0.125
}
END_TEST

START_TEST(cosine_schedule_falls_from_lr_to_min_lr)
{
    optim_config c = config(0.3, 0.0, 0.0);
    c.schedule = OPTIM_COSINE, c.min_lr = 0.01, c.total_epochs = 10.0;
    ck_assert_double_eq_tol(optim_lr(&c, 0.0), 0.3, LR_TOL);
    // Quarter: 0.01 + 0.29 (1 + cos(pi / 4)) / 2 = 0.01 + 0.29 * 0.85355339 = 0.25753048.
    ck_assert_double_eq_tol(optim_lr(&c, 2.5), 0.01 + 0.29 * (1.0 + sqrt(0.5)) / 2.0, LR_TOL);
    // Midpoint: cos(pi / 2) = 0, so half-way between 0.3 and 0.01.
    ck_assert_double_eq_tol(optim_lr(&c, 5.0), 0.155, LR_TOL);
    ck_assert_double_eq_tol(optim_lr(&c, 10.0), 0.01, LR_TOL);
    ck_assert_double_eq_tol(optim_lr(&c, 17.0), 0.01, LR_TOL); // stays at the floor
}
END_TEST

START_TEST(warmup_ramps_linearly_to_the_schedule)
{
    optim_config c = config(0.2, 0.0, 0.0);
    c.warmup_epochs = 4.0;
    ck_assert_double_eq_tol(optim_lr(&c, 0.0), 0.0, LR_TOL); // start factor 0
    ck_assert_double_eq_tol(optim_lr(&c, 1.0), 0.05, LR_TOL);
    ck_assert_double_eq_tol(optim_lr(&c, 2.0), 0.1, LR_TOL);
    ck_assert_double_eq_tol(optim_lr(&c, 4.0), 0.2, LR_TOL); // end of the warm-up
    ck_assert_double_eq_tol(optim_lr(&c, 9.0), 0.2, LR_TOL);
    c.warmup_start_factor = 0.25;
    ck_assert_double_eq_tol(optim_lr(&c, 0.0), 0.05, LR_TOL);  // 0.2 * 0.25
    ck_assert_double_eq_tol(optim_lr(&c, 2.0), 0.125, LR_TOL); // 0.2 * (0.25 + 0.75 / 2)
}
END_TEST

START_TEST(warmup_combines_with_cosine_and_step)
{
    // Cosine over [2, 12] after a 2-epoch warm-up: its midpoint is epoch 7.
    optim_config c = config(0.3, 0.0, 0.0);
    c.schedule = OPTIM_COSINE, c.min_lr = 0.0, c.total_epochs = 12.0, c.warmup_epochs = 2.0;
    ck_assert_double_eq_tol(optim_lr(&c, 1.0), 0.15, LR_TOL);
    ck_assert_double_eq_tol(optim_lr(&c, 2.0), 0.3, LR_TOL);
    ck_assert_double_eq_tol(optim_lr(&c, 7.0), 0.15, LR_TOL);
    ck_assert_double_eq_tol(optim_lr(&c, 12.0), 0.0, LR_TOL);
    // Step boundaries count from epoch 0, warm-up or not.
    c = config(0.4, 0.0, 0.0);
    c.schedule = OPTIM_STEP, c.gamma = 0.5, c.step_epochs = 3.0, c.warmup_epochs = 2.0;
    ck_assert_double_eq_tol(optim_lr(&c, 1.0), 0.2, LR_TOL); // 0.4 * warm-up factor 0.5
    ck_assert_double_eq_tol(optim_lr(&c, 2.5), 0.4, LR_TOL);
    ck_assert_double_eq_tol(optim_lr(&c, 3.0), 0.2, LR_TOL);
}
END_TEST

/* ---- Configuration ---- */

static void expect_invalid(const optim_config *c, const char *path, const char *msg)
{
    sim_err err;
    sim_err_clear(&err);
    ck_assert_int_eq(optim_config_check(c, &err), SIM_EINVAL);
    ck_assert_str_eq(err.path, path);
    ck_assert_str_eq(err.msg, msg);
}

START_TEST(check_accepts_defaults_and_names_each_bad_field)
{
    optim_config c;
    optim_config_default(&c);
    ck_assert_int_eq(optim_config_check(&c, NULL), 0);
    c.gamma = 0.0; // not read by the constant schedule
    ck_assert_int_eq(optim_config_check(&c, NULL), 0);

    c = config(0.0, 0.0, 0.0); /* no learning: averaging studies */
    ck_assert_int_eq(optim_config_check(&c, NULL), 0);
    c = config(-0.25, 0.0, 0.0);
    expect_invalid(&c, "lr", "must be a finite number >= 0, got -0.25");
    c = config(HUGE_VAL, 0.0, 0.0);
    expect_invalid(&c, "lr", "must be a finite number >= 0, got inf");
    c = config(0.1, 1.0, 0.0);
    expect_invalid(&c, "momentum", "must be a number in [0, 1), got 1");
    c = config(0.1, 0.9, -0.5);
    expect_invalid(&c, "weight_decay", "must be a finite number >= 0, got -0.5");
    c = config(0.1, 0.9, 0.0);
    c.warmup_start_factor = 1.5;
    expect_invalid(&c, "warmup_start_factor", "must be a number in [0, 1], got 1.5");
    c = config(0.1, 0.9, 0.0);
    c.warmup_epochs = (double)NAN;
    expect_invalid(&c, "warmup_epochs", "must be a finite number >= 0, got nan");

    c = config(0.1, 0.0, 0.0);
    c.schedule = OPTIM_STEP, c.gamma = 1.25;
    expect_invalid(&c, "gamma", "must be a number in (0, 1], got 1.25");
    c.gamma = 0.5, c.step_epochs = 0.0;
    expect_invalid(&c, "step_epochs", "must be a finite number > 0, got 0");

    c = config(0.1, 0.0, 0.0);
    c.schedule = OPTIM_COSINE, c.min_lr = 0.2;
    expect_invalid(&c, "min_lr", "must be a number in [0, lr], got 0.2");
    c.min_lr = 0.0, c.warmup_epochs = 5.0, c.total_epochs = 5.0;
    expect_invalid(&c, "total_epochs", "must be a finite number > warmup_epochs, got 5");

    c = config(0.1, 0.0, 0.0);
    c.schedule = (optim_schedule)7;
    expect_invalid(&c, "schedule", "must be constant, step or cosine, got 7");
}
END_TEST

Suite *test_suite(void)
{
    Suite *s = suite_create("optim");
    TCase *tc = tcase_create("steps");
    tcase_add_test(tc, momentum_steps_match_three_worked_by_hand);
    tcase_add_test(tc, nesterov_steps_match_three_worked_by_hand);
    tcase_add_test(tc, nesterov_decays_before_the_look_ahead_and_is_plain_sgd_without_momentum);
    tcase_add_test(tc, weight_decay_adds_to_the_gradient_before_momentum);
    tcase_add_test(tc, zero_momentum_with_a_buffer_is_plain_sgd);
    tcase_add_test(tc, average_step_pair_is_the_average_then_two_steps_bit_for_bit);
    suite_add_tcase(s, tc);

    tc = tcase_create("schedules");
    tcase_add_test(tc, constant_schedule_keeps_the_base_rate);
    tcase_add_test(tc, step_schedule_multiplies_by_gamma_at_each_boundary);
    tcase_add_test(tc, cosine_schedule_falls_from_lr_to_min_lr);
    tcase_add_test(tc, warmup_ramps_linearly_to_the_schedule);
    tcase_add_test(tc, warmup_combines_with_cosine_and_step);
    suite_add_tcase(s, tc);

    tc = tcase_create("config");
    tcase_add_test(tc, check_accepts_defaults_and_names_each_bad_field);
    suite_add_tcase(s, tc);
    return s;
}
