/* Shared helpers of the models suites (tests/harness_models.h). */
#include "harness_models.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>

#include "models/model.h"
#include "sim/tensor.h"
#include "suite.h"

void mdt_bundle_init(bundle *m, const model_ops *ops, const model_config *cfg, size_t B,
                     unsigned long seed)
{
    m->ops = ops;
    m->cfg = *cfg;
    m->B = B;
    m->D = model_input_size(cfg);
    ck_assert_int_eq(model_check(ops, cfg, NULL), 0);
    m->n_params = ops->shape->num_params(cfg);
    m->n_acts = ops->shape->num_acts(cfg, B);
    m->params = sim_tensor_alloc(m->n_params);
    m->grads = sim_tensor_alloc(m->n_params);
    m->acts = sim_tensor_alloc(m->n_acts);
    m->x = sim_tensor_alloc(B * m->D);
    m->y = calloc(B, 1);
    ck_assert(m->params && m->grads && m->acts && m->x && m->y);
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, seed);
    ops->shape->init_params(m->params, cfg, r);
    // Perturb every parameter so that biases are not 0 and no ReLU input sits on its kink.
    for (size_t i = 0; i < m->n_params; i++)
        m->params[i] += (float)gsl_ran_gaussian(r, 0.2);
    for (size_t i = 0; i < B * m->D; i++)
        m->x[i] = (float)gsl_ran_gaussian(r, 1.0);
    for (size_t b = 0; b < B; b++)
        m->y[b] = (uint8_t)gsl_rng_uniform_int(r, cfg->classes);
    gsl_rng_free(r);
}

void mdt_bundle_fini(bundle *m)
{
    sim_tensor_free(m->params);
    sim_tensor_free(m->grads);
    sim_tensor_free(m->acts);
    sim_tensor_free(m->x);
    free(m->y);
}

model_config mdt_tiny_linear(void)
{
    model_config c;
    model_config_default(&c);
    c.channels = 1, c.height = 2, c.width = 3, c.classes = 4, c.svm_margin = 1.3;
    return c;
}

model_config mdt_tiny_mlp(void)
{
    model_config c = mdt_tiny_linear();
    c.classes = 3, c.n_hidden = 2, c.hidden[0] = 5, c.hidden[1] = 4;
    return c;
}

model_config mdt_tiny_cnn(size_t k)
{
    model_config c;
    model_config_default(&c);
    c.classes = 3, c.kernel = k, c.dense = 5;
    if (k == 3) // even sides: every pooling window is full
        c.channels = 2, c.height = 8, c.width = 6, c.conv1 = 3, c.conv2 = 4;
    else // odd sides: pooling drops the last row or column
        c.channels = 1, c.height = 7, c.width = 9, c.conv1 = 2, c.conv2 = 3;
    return c;
}
