/* One worker's plain training step on one model: forward, backward and one SGD step on a
 * minibatch, every buffer allocated up front (GSL's workspaces), so that model_step_run
 * allocates nothing. The kernel benchmark times it (models/bench.c) and the allocation test
 * counts it (tests/test_alloc.c); runs train through train.h. The step owns its buffers. */
#ifndef MODELS_STEP_H
#define MODELS_STEP_H

#include <stddef.h>
#include <stdint.h>

#include "models/model.h"
#include "models/optim.h"
#include "sim/err.h"

typedef struct model_step {
    const model_ops *ops;
    model_config cfg;
    optim_config opt;                 /* optim_config_default's until the caller sets it */
    size_t n_params, batch;           /* parameters; examples in a minibatch */
    float *params, *grads, *velocity; /* (n_params) each */
    float *acts;                      /* (ops->shape->num_acts(cfg, batch)) */
    float *x;                         /* (batch, D) the minibatch's inputs, the caller's to fill */
    uint8_t *y;                       /* (batch) its labels, the caller's to fill */
} model_step;

/* Checks cfg for ops (model_check) and allocates the step's buffers for minibatches of
 * `batch`. Returns SIM_OK, the check's error, or SIM_ENOMEM (then nothing is held); either way
 * model_step_fini may follow. */
int model_step_init(model_step *s, const model_ops *ops, const model_config *cfg, size_t batch,
                    sim_err *err);

/* Frees the step's buffers (a zeroed step too). */
void model_step_fini(model_step *s);

/* One step on (x, y): forward, backward, optim_step at opt.lr. Returns the mean loss. */
double model_step_run(model_step *s);

#endif
