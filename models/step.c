#include "models/step.h"

#include <stdlib.h>

#include "sim/tensor.h"

int model_step_init(model_step *s, const model_ops *ops, const model_config *cfg, size_t batch,
                    sim_err *err)
{
    *s = (model_step){ .ops = ops, .cfg = *cfg, .batch = batch };
    int rc = model_check(ops, cfg, err);
    if (rc != SIM_OK)
        return rc;
    optim_config_default(&s->opt);
    s->n_params = ops->shape->num_params(cfg);
    s->params = sim_tensor_alloc(s->n_params);
    s->grads = sim_tensor_alloc(s->n_params);
    s->velocity = sim_tensor_alloc(s->n_params);
    s->acts = sim_tensor_alloc(ops->shape->num_acts(cfg, batch));
    s->x = sim_tensor_alloc(batch * model_input_size(cfg));
    s->y = malloc(batch);
    if (s->params == NULL || s->grads == NULL || s->velocity == NULL || s->acts == NULL ||
        s->x == NULL || s->y == NULL) {
        model_step_fini(s);
        return sim_err_set(err, SIM_ENOMEM, NULL, "cannot allocate a %s training step", ops->name);
    }
    return SIM_OK;
}

void model_step_fini(model_step *s)
{
    sim_tensor_free(s->params);
    sim_tensor_free(s->grads);
    sim_tensor_free(s->velocity);
    sim_tensor_free(s->acts);
    sim_tensor_free(s->x);
    free(s->y);
    s->params = s->grads = s->velocity = s->acts = s->x = NULL;
    s->y = NULL;
}

double model_step_run(model_step *s)
{
    double loss = s->ops->forward(s->acts, s->params, s->x, s->y, s->batch, &s->cfg);
    s->ops->backward(s->grads, s->acts, s->params, s->x, s->y, s->batch, &s->cfg);
    optim_step(s->params, s->velocity, s->grads, s->n_params, s->opt.lr, &s->opt);
    return loss;
}
