/* SGD with heavy-ball or Nesterov momentum and weight decay; learning-rate schedules (see
 * optim.h for formulas). */
#include "models/optim.h"

#include <assert.h>
#include <math.h>
#include <stdbool.h>

#include "sim/simd.h"
#include "sim/tensor.h"

void optim_config_default(optim_config *c)
{
    *c = (optim_config){
        .lr = 0.05,
        .momentum = 0.0,
        .weight_decay = 0.0,
        .nesterov = false,
        .schedule = OPTIM_CONSTANT,
        .gamma = 0.1,
        .step_epochs = 30.0,
        .total_epochs = 100.0,
        .min_lr = 0.0,
        .warmup_epochs = 0.0,
        .warmup_start_factor = 0.0,
    };
}

/* SIM_EINVAL naming `field` unless ok; `what` completes "must be ...". */
static int need(const char *field, bool ok, double v, const char *what, sim_err *err)
{
    return ok ? 0 : sim_err_set(err, SIM_EINVAL, field, "must be %s, got %g", what, v);
}

int optim_config_check(const optim_config *c, sim_err *err)
{
    int rc;
    if ((rc = need("lr", c->lr >= 0.0 && isfinite(c->lr), c->lr, "a finite number >= 0", err)) ||
        (rc = need("momentum", c->momentum >= 0.0 && c->momentum < 1.0, c->momentum,
                   "a number in [0, 1)", err)) ||
        (rc = need("weight_decay", c->weight_decay >= 0.0 && isfinite(c->weight_decay),
                   c->weight_decay, "a finite number >= 0", err)) ||
        (rc = need("warmup_epochs", c->warmup_epochs >= 0.0 && isfinite(c->warmup_epochs),
                   c->warmup_epochs, "a finite number >= 0", err)) ||
        (rc = need("warmup_start_factor",
                   c->warmup_start_factor >= 0.0 && c->warmup_start_factor <= 1.0,
                   c->warmup_start_factor, "a number in [0, 1]", err)))
        return rc;
    switch (c->schedule) {
    case OPTIM_CONSTANT:
        return 0;
    case OPTIM_STEP:
        if ((rc = need("gamma", c->gamma > 0.0 && c->gamma <= 1.0, c->gamma, "a number in (0, 1]",
                       err)))
            return rc;
        return need("step_epochs", c->step_epochs > 0.0 && isfinite(c->step_epochs), c->step_epochs,
                    "a finite number > 0", err);
    case OPTIM_COSINE:
        if ((rc = need("min_lr", c->min_lr >= 0.0 && c->min_lr <= c->lr, c->min_lr,
                       "a number in [0, lr]", err)))
            return rc;
        return need("total_epochs", c->total_epochs > c->warmup_epochs && isfinite(c->total_epochs),
                    c->total_epochs, "a finite number > warmup_epochs", err);
    }
    return sim_err_set(err, SIM_EINVAL, "schedule", "must be constant, step or cosine, got %d",
                       (int)c->schedule);
}

double optim_lr(const optim_config *c, double epoch)
{
    const double pi = 3.14159265358979323846;
    double e = epoch > 0.0 ? epoch : 0.0;
    double warm = 1.0;
    if (c->warmup_epochs > 0.0 && e < c->warmup_epochs)
        warm = c->warmup_start_factor + (1.0 - c->warmup_start_factor) * e / c->warmup_epochs;
    double lr = c->lr;
    switch (c->schedule) {
    case OPTIM_CONSTANT:
        break;
    case OPTIM_STEP:
        lr *= pow(c->gamma, floor(e / c->step_epochs));
        break;
    case OPTIM_COSINE: {
        double t = (e - c->warmup_epochs) / (c->total_epochs - c->warmup_epochs);
        t = t < 0.0 ? 0.0 : t > 1.0 ? 1.0 : t;
        lr = c->min_lr + (c->lr - c->min_lr) * 0.5 * (1.0 + cos(pi * t));
        break;
    }
    }
    return lr * warm;
}

/* Element-wise, so any order gives the same bits. The body runs to a multiple of 16 so that
 * gcc vectorizes it at -O2 (its cheap cost model skips loops that would need a scalar
 * epilogue); the tail is scalar. Without momentum (no buffer) both forms are plain SGD. */
SIM_CLONES
void optim_step(float *restrict params, float *restrict velocity, const float *restrict grad,
                size_t n, double lr, const optim_config *c)
{
    float rate = (float)lr, mu = (float)c->momentum, wd = (float)c->weight_decay;
    size_t m = n & ~(size_t)15;
    if (velocity == NULL) {
        assert(c->momentum == 0.0);
        for (size_t i = 0; i < m; i++)
            params[i] -= rate * (grad[i] + wd * params[i]);
        for (size_t i = m; i < n; i++)
            params[i] -= rate * (grad[i] + wd * params[i]);
        return;
    }
    if (c->nesterov) {
        for (size_t i = 0; i < m; i++) {
            float g = grad[i] + wd * params[i];
            float v = mu * velocity[i] + g;
            velocity[i] = v;
            params[i] -= rate * (g + mu * v);
        }
        for (size_t i = m; i < n; i++) {
            float g = grad[i] + wd * params[i];
            float v = mu * velocity[i] + g;
            velocity[i] = v;
            params[i] -= rate * (g + mu * v);
        }
        return;
    }
    for (size_t i = 0; i < m; i++) {
        float v = mu * velocity[i] + (grad[i] + wd * params[i]);
        velocity[i] = v;
        params[i] -= rate * v;
    }
    for (size_t i = m; i < n; i++) {
        float v = mu * velocity[i] + (grad[i] + wd * params[i]);
        velocity[i] = v;
        params[i] -= rate * v;
    }
}

/* One element of a pair's average-then-step: p = a - rate v, v = mu v + (g + wd a). */
#define PAIR_STEP(p, v, g, a) ((p) = (a)-rate * ((v) = mu * (v) + ((g) + wd * (a))))

SIM_CLONES
void optim_average_step_pair(float *restrict x, float *restrict y, float *restrict vx,
                             float *restrict vy, const float *restrict gx, const float *restrict gy,
                             size_t n, double lr, const optim_config *c)
{
    float rate = (float)lr, mu = (float)c->momentum, wd = (float)c->weight_decay;
    if (vx == NULL || vy == NULL || c->nesterov || (gx == NULL && gy == NULL)) {
        sim_tensor_average_pair(x, y, n);
        if (gx != NULL)
            optim_step(x, vx, gx, n, lr, c);
        if (gy != NULL)
            optim_step(y, vy, gy, n, lr, c);
        return;
    }
    size_t m = n & ~(size_t)15;
    if (gx != NULL && gy != NULL) {
        for (size_t i = 0; i < m; i++) {
            float a = (x[i] + y[i]) * 0.5f;
            PAIR_STEP(x[i], vx[i], gx[i], a);
            PAIR_STEP(y[i], vy[i], gy[i], a);
        }
        for (size_t i = m; i < n; i++) {
            float a = (x[i] + y[i]) * 0.5f;
            PAIR_STEP(x[i], vx[i], gx[i], a);
            PAIR_STEP(y[i], vy[i], gy[i], a);
        }
        return;
    }
    /* One side steps: swap the roles so that x is the one. */
    if (gx == NULL) {
        float *t = x;
        x = y;
        y = t;
        vx = vy;
        gx = gy;
    }
    for (size_t i = 0; i < m; i++) {
        float a = (x[i] + y[i]) * 0.5f;
        y[i] = a;
        PAIR_STEP(x[i], vx[i], gx[i], a);
    }
    for (size_t i = m; i < n; i++) {
        float a = (x[i] + y[i]) * 0.5f;
        y[i] = a;
        PAIR_STEP(x[i], vx[i], gx[i], a);
    }
}
