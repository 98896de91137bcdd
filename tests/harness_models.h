/* Helpers shared by the models suites (tests/test_models.c, tests/test_models_gradients.c): their
 * scenarios, runs and checks. */
#ifndef HETSIM_TESTS_HARNESS_MODELS_H
#define HETSIM_TESTS_HARNESS_MODELS_H

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

/* ---- Fixture: a model with its buffers, random parameters and a random batch ---- */

typedef struct bundle {
    const model_ops *ops;
    model_config cfg;
    size_t B, D, n_params, n_acts;
    float *params, *grads, *acts, *x;
    uint8_t *y;
} bundle;

void mdt_bundle_init(bundle *m, const model_ops *ops, const model_config *cfg, size_t B,
                     unsigned long seed);

void mdt_bundle_fini(bundle *m);

/* ---- Tiny configurations (non-square inputs catch swapped height and width) ---- */

model_config mdt_tiny_linear(void);

model_config mdt_tiny_mlp(void);

model_config mdt_tiny_cnn(size_t k);

#endif
