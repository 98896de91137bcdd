/* The optimizer: SGD with heavy-ball or Nesterov momentum and weight decay, and learning-rate
 * schedules.
 *
 * One step over a parameter block x with gradient g and momentum buffer v (PyTorch's SGD
 * with dampening 0):
 *   g' = g + weight_decay * x
 *   v  = momentum * v + g'
 *   x  = x - lr * v                    (heavy ball, nesterov off)
 *   x  = x - lr * (g' + momentum * v)  (nesterov on: the step looks ahead along the new v)
 * A zeroed v makes the first step plain SGD (with nesterov, a step of (1 + momentum) g'), as
 * PyTorch's first step is. Without momentum both forms are plain SGD. The momentum buffer has
 * the parameters' layout; the caller owns one per worker and zeroes it at start.
 *
 * The learning rate is a function of training progress `epoch` (a double: 2.5 is half-way
 * through the third epoch; any monotone progress measure works if the config's durations
 * use the same unit). With base rate lr, warm-up length Wu, start factor f0 and
 *   warm(e) = f0 + (1 - f0) * e / Wu   for e < Wu,   1 otherwise   (always 1 when Wu = 0)
 * the schedules are
 *   constant: lr(e) = lr * warm(e)
 *   step:     lr(e) = lr * gamma^floor(e / step_epochs) * warm(e)     (boundaries from 0)
 *   cosine:   lr(e) = (min_lr + (lr - min_lr) * (1 + cos(pi * t)) / 2) * warm(e), with
 *             t = clamp((e - Wu) / (total_epochs - Wu), 0, 1): the decay starts when the
 *             warm-up ends, reaches min_lr at total_epochs and stays there.
 * Negative epochs count as 0. Nothing here allocates; the config is plain data.
 */
#ifndef MODELS_OPTIM_H
#define MODELS_OPTIM_H

#include <stdbool.h>
#include <stddef.h>

#include "sim/err.h"

typedef enum optim_schedule {
    OPTIM_CONSTANT = 0,
    OPTIM_STEP = 1,
    OPTIM_COSINE = 2,
} optim_schedule;

typedef struct optim_config {
    double lr;           /* base learning rate, >= 0 (0: no learning) */
    double momentum;     /* heavy-ball coefficient in [0, 1) */
    double weight_decay; /* L2 coefficient added to the gradient, >= 0 */
    bool nesterov;       /* Nesterov momentum (above); false: heavy ball */

    optim_schedule schedule;
    double gamma;        /* step: factor applied at each boundary, in (0, 1] */
    double step_epochs;  /* step: epochs between boundaries, > 0 */
    double total_epochs; /* cosine: epoch at which min_lr is reached, > warmup_epochs */
    double min_lr;       /* cosine: final rate, in [0, lr] */

    double warmup_epochs;       /* linear warm-up length in epochs, >= 0 (0: none) */
    double warmup_start_factor; /* warm-up starts at this fraction of the rate, in [0, 1] */
} optim_config;

/* Fills c with defaults: lr 0.05, no momentum (heavy ball) or weight decay, constant schedule,
 * gamma 0.1 every 30 epochs (step), 100 total epochs and min_lr 0 (cosine), no warm-up with a
 * start factor of 0. */
void optim_config_default(optim_config *c);

/* Checks the ranges above; SIM_EINVAL with the field name as the path ("momentum") and
 * what was expected. The fields of schedules not selected are not checked. */
int optim_config_check(const optim_config *c, sim_err *err);

/* The learning rate at progress `epoch`, as the formulas above say. */
double optim_lr(const optim_config *c, double epoch);

/* One SGD step on params (n) with grad (n) at rate lr, updating velocity (n) as above
 * (c->nesterov chooses the form). velocity may be NULL only when c->momentum == 0. params and
 * grad must not overlap. */
void optim_step(float *restrict params, float *restrict velocity, const float *restrict grad,
                size_t n, double lr, const optim_config *c);

/* Two models x and y (n floats each) both take their average a = (x + y) * 0.5, then each
 * steps from a with its own velocity and gradient as optim_step would (a NULL gradient: no
 * step for that side), in one pass: the bits of writing a into both and calling optim_step on
 * each, with a third of the memory traffic less. Velocities may be NULL only when
 * c->momentum == 0 (then the pass falls back to exactly those calls, as it does with
 * c->nesterov). */
void optim_average_step_pair(float *restrict x, float *restrict y, float *restrict vx,
                             float *restrict vy, const float *restrict gx, const float *restrict gy,
                             size_t n, double lr, const optim_config *c);

#endif
