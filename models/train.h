/* Training state of a run: data, model, optimizer, and every worker's tensors.
 *
 * train_config_read reads the scenario's `workload.model`, `workload.dataset` and
 * `workload.lr_schedule` sections strictly (defaults written into the resolved scenario,
 * unknown keys rejected) and checks the model against the data's shape, without loading
 * anything large: `hetsim validate` stops there. train_create then loads the training and
 * test sets, partitions the training set across the workers (from the data stream), gives
 * each worker a minibatch sampler over its share, the initial parameters (one draw from the
 * initialization stream: all workers start equal), a gradient buffer and, with momentum, a
 * momentum buffer.
 *
 * Replicas share storage while they are equal (models/replica.h, which owns the blocks, their
 * reference counts and the one copy-on-write scheme): parameters and momentum live in blocks,
 * and workers that start equal start on one block. A worker about to write its parameters
 * (train_params_write, the steps) first gets a block of its own, a copy; a keyed step
 * (train_apply_keyed), which a synchronous protocol applies alike to every replica, is
 * computed once per block and the other workers on the block follow it. There are as many
 * blocks as workers, allocated by train_create (untouched ones cost no memory).
 *
 * Gradients are computed through a workspace per thread (a batch buffer and the model's
 * activations; one until train_set_threads), so memory per worker is two or three parameter
 * blocks. A gradient may be split in two for a thread pool (issue 28): train_draw draws the
 * minibatch on the simulation's thread, train_gradient_on computes it on any thread from a
 * block pinned with train_pin (a write to a pinned block's worker gets the worker a copy, as
 * a shared block does, so the pinned parameters stay those of the draw), and train_check_loss
 * then checks its loss on the simulation's thread. Nothing allocates after train_set_threads.
 *
 * A model computed by servers (MODEL_SERVER, torch: models/torch.h) has its initialization,
 * gradients and evaluation passes computed by them, a server per thread (train_set_threads
 * starts the others), through the same calls; its features live in the servers' shared
 * region, not here; each worker also has buffers of its own (BatchNorm's statistics), updated
 * by its gradients when its iterations end (train_iteration_done).
 */
#ifndef MODELS_TRAIN_H
#define MODELS_TRAIN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <gsl/gsl_rng.h>

#include "models/data.h"
#include "models/model.h"
#include "models/optim.h"
#include "models/replica.h"
#include "models/torch.h"
#include "scenario/scenario.h"
#include "sim/err.h"

/* Test examples per forward pass of an evaluation (the shared workspace is sized for the larger
 * of this and the batch). */
#define TRAIN_EVAL_BATCH 256

typedef enum train_dataset {
    TRAIN_FASHION_MNIST = 0,
    TRAIN_LIBSVM = 1,
    TRAIN_SYNTHETIC = 2
} train_dataset;

typedef struct train_config {
    const model_ops *ops; /* the model */
    model_config model;   /* its shapes (input shape and classes from the data) */
    optim_config optim;   /* lr, momentum, weight decay, schedule */
    train_dataset dataset;
    char path[512];        /* fashion-mnist: directory; libsvm: training file */
    char test_path[512];   /* libsvm: test file, "" to hold out test_fraction */
    double test_fraction;  /* libsvm without test file: share held out for testing */
    size_t max_features;   /* libsvm: bound on the feature count */
    uint64_t data_fnv[2];  /* libsvm: the bytes of path and test_path (FNV-1a 64) the data loads
                              must find, the scenario's data_fnv; 0: not known */
    size_t train_samples;  /* at most this many training examples (0: all) */
    size_t train_examples; /* training examples the run will have (from headers) */
    size_t test_examples;  /* test examples it will have (0: unknown, a LIBSVM test file) */
    data_synthetic_config synthetic; /* synthetic: training set shape (n = train size) */
    size_t synthetic_test;           /* synthetic: test examples */
    bool dirichlet;                  /* partition: label skew instead of iid */
    double alpha;                    /* dirichlet concentration */
    size_t batch;                    /* minibatch per worker */
    bool independent_init;           /* each worker draws its own initial parameters */
    size_t workers;
    size_t num_params;
    uint64_t bytes_estimate; /* memory the run's tensors and data will take */
} train_config;

typedef struct train train;

/* Reads and checks the workload sections of `sc` into `cfg` (the timing-only model, "none":
 * its name alone, zero floats and a zeroed optimizer). Errors carry the scenario file and JSON
 * path; a data file that cannot be opened is reported here too. */
int train_config_read(sim_scenario *sc, train_config *cfg, sim_err *err);

/* Loads the data and allocates every worker's tensors. `data` and `init` are the run's
 * data and initialization streams. Returns NULL and fills `err` on failure (a bad data
 * file: SIM_ESCENARIO with the file named). */
train *train_create(const train_config *cfg, gsl_rng *data, gsl_rng *init, sim_err *err);

/* Frees everything. NULL is a no-op. */
void train_destroy(train *t);

/* Draws worker w's parameters afresh from r (the model's init_params): with the vector model
 * the runtime gives each worker its own values from its own stream (DESIGN 6b). */
void train_init_worker(train *t, uint32_t w, gsl_rng *r);

/* The replicas' blocks (models/replica.h): the runtime's snapshots hold them. */
replica *train_replica(train *t);

/* The model (its flags tell the timing-only and averaging-only ones). */
const model_ops *train_model(const train *t);

size_t train_num_params(const train *t);
size_t train_train_size(const train *t); /* training examples over all workers */
size_t train_test_size(const train *t);

/* Worker w's parameters (num_params floats), owned by the training state, for reading: the
 * block may be shared with other workers (train_params_write is for writing). */
float *train_params(train *t, uint32_t w);

/* Worker w's gradient from its last train_gradient call. */
const float *train_grad(const train *t, uint32_t w);

/* Hands worker w's gradient buffer to the caller, who owns it from now on, and makes `spare`
 * (num_params floats from sim_tensor_alloc, now owned by t) the buffer its next gradient is
 * computed into. */
/* Worker w's parameters for writing: a worker that shares its block (replicas that start
 * equal share one until they differ) first gets a copy of its own. train_params is for reading
 * only. */
float *train_params_write(train *t, uint32_t w);

/* Wall seconds spent inside the model's forward and backward passes of train_gradient so far
 * (the gradient math: what a run's wall time would be with nothing else to do). A measurement,
 * not part of any result. */
double train_model_seconds(const train *t);

/* Parameter blocks in use: 1 while every replica is equal, up to one per worker. */
uint32_t train_blocks_in_use(const train *t);

float *train_swap_grad(train *t, uint32_t w, float *spare);

/* Makes room for `n` threads (train_gradient_on's and train_eval_batch's thread < n): a
 * workspace each, and as many parameter blocks again as workers, for pins (they take memory
 * only once a pinned block is copied). One thread needs nothing. SIM_ENOMEM. */
int train_set_threads(train *t, unsigned n, sim_err *err);

/* Draws worker w's next minibatch with r (w's stream), as train_gradient would, and keeps its
 * example ids for train_gradient_on. */
void train_draw(train *t, uint32_t w, gsl_rng *r);

/* Worker w's block now, with a reference that keeps it unchanged until train_unpin: a write
 * to a worker on it gets that worker a block of its own first. Needs train_set_threads. */
uint32_t train_pin(train *t, uint32_t w);
void train_unpin(train *t, uint32_t b);

/* The block worker w is on now. */
uint32_t train_block_of(const train *t, uint32_t w);

/* Whether a write to worker w now leaves its block to pins alone (w is its last worker and a
 * gradient in flight reads it): the block then stays, an orphan, besides w's new one. */
bool train_write_orphans(const train *t, uint32_t w);

/* Blocks that only pins hold now: the model copies pins cost. */
uint32_t train_orphans(const train *t);

/* Computes worker w's gradient on its drawn minibatch (train_draw) from `params` (its pinned
 * block's, train_params when pinned), into w's gradient buffer, with thread `thread`'s workspace;
 * returns the mean loss (no backward pass when it is not finite). Touches nothing but the
 * workspace, w's gradient buffer and the figures of train_model_seconds, so gradients of different
 * workers on different threads may run at once, while the caller neither writes `params` nor reads
 * w's gradient. */
double train_gradient_on(train *t, uint32_t w, const float *params, unsigned thread);

/* Checks worker w's minibatch loss in iteration order (the first one is remembered): returns
 * SIM_ENUMERIC if it is not finite, or if it exceeds 1000 times the worker's first (1000 when
 * that was below 1): the run diverged. */
int train_check_loss(train *t, uint32_t w, double loss, sim_err *err);

/* Computes worker w's gradient on its next minibatch (drawn with r, w's stream), on its
 * parameters as they are now, into its gradient buffer, and stores the minibatch's mean
 * loss in *loss. Returns SIM_ENUMERIC if the loss is not finite, or if it exceeds 1000 times
 * the worker's first minibatch loss (1000 when that was below 1): the run diverged. */
int train_gradient(train *t, uint32_t w, gsl_rng *r, double *loss, sim_err *err);

/* One optimizer step on worker w's parameters with `grad` (num_params floats; may be its
 * own gradient buffer) at the learning rate of progress `epoch`, using w's momentum. */
void train_apply(train *t, uint32_t w, const float *grad, double epoch);

/* train_apply at an explicit learning rate and momentum coefficient (weight decay as
 * configured); without momentum buffers (configured momentum 0) the step has none. */
void train_apply_with(train *t, uint32_t w, const float *grad, double lr, double momentum);

/* train_apply_with as a step that every worker on the same block takes alike: the protocol
 * promises that equal keys mean equal gradients (same buffer, same contents), rates and
 * momentum. The first worker of a shared block to take the step computes it into a new block;
 * the others, when they take it, move onto that block without computing anything. The bits
 * are those of train_apply_with on each (a synchronous protocol's replicas step once per
 * round instead of once per worker). */
void train_apply_keyed(train *t, uint32_t w, const float *grad, double lr, double momentum,
                       uint64_t key);

/* Workers i != j take the average of their parameters, then each applies its gradient (NULL:
 * none) as train_apply would at progress `epoch`, in one pass (optim_average_step_pair). */
void train_average_step_pair(train *t, uint32_t i, uint32_t j, const float *gi, const float *gj,
                             double epoch);

/* The configured momentum coefficient. */
double train_momentum(const train *t);

/* Multiplies worker w's momentum buffer by `factor`; no-op without buffers. */
void train_scale_momentum(train *t, uint32_t w, float factor);

/* One optimizer step on a block the caller owns (a parameter server's model) with its own
 * momentum buffer (num_params floats, zeroed at start; NULL without momentum). */
void train_step(const train *t, float *params, float *velocity, const float *grad, double epoch);

/* train_step on the first n (<= num_params) floats of each block (a slice of a server's
 * model); element-wise, so the slices of a block together give train_step's bits. */
void train_step_range(const train *t, float *params, float *velocity, const float *grad, size_t n,
                      double epoch);

/* Variants of an explicit step on a block (train_step_range_with), or-ed together. */
enum {
    TRAIN_NESTEROV = 1, /* Nesterov momentum (models/optim.h) instead of the heavy ball */
    TRAIN_NO_DECAY = 2  /* no weight decay, whatever the configuration's (an outer optimizer's
                         * step on a protocol's own model) */
};

/* train_step_range at an explicit learning rate and momentum coefficient (weight decay as
 * configured; no momentum when velocity is NULL), with the `variants` above (0: none). With
 * the rate and coefficient the schedule and configuration give and no variant, its bits are
 * train_step_range's. */
void train_step_range_with(const train *t, float *params, float *velocity, const float *grad,
                           size_t n, double lr, double momentum, unsigned variants);

/* The learning rate at progress `epoch`. */
double train_lr(const train *t, double epoch);

/* Evaluates `params` on the first `samples` test examples (all if fewer): mean loss and
 * accuracy. */
void train_evaluate(train *t, const float *params, size_t samples, double *loss, double *accuracy);

/* train_evaluate in pieces that threads may compute at once: the number of forward passes
 * (TRAIN_EVAL_BATCH test examples each) over the first `samples` test examples, and pass i on
 * thread `thread`'s workspace: its loss times its examples, and its correct predictions.
 * Summed in pass order, they give train_evaluate's bits. */
size_t train_eval_batches(const train *t, size_t samples);
void train_eval_batch(train *t, const float *params, size_t samples, size_t i, unsigned thread,
                      double *loss_sum, size_t *correct);

/* ---- models computed by servers (MODEL_SERVER: torch, models/torch.h) ---- */

/* Worker w's iteration ended (its gradient joined): the buffers its forward pass updated
 * become its own, at this simulated instant whatever the thread count. A no-op for other
 * models. */
void train_iteration_done(train *t, uint32_t w);

/* The buffers the next evaluations use: the mean of workers[0..k)'s own (the live ones, in
 * worker order). A no-op for other models. */
void train_eval_buffers(train *t, const uint32_t *workers, size_t k);

/* The first failure of a model server so far (SIM_EIO, err filled: evaluations that failed
 * return NaN), or SIM_OK; always SIM_OK for other models. */
int train_error(const train *t, sim_err *err);

/* Floats of a worker's own buffers (0 but for MODEL_SERVER models with floating buffers), and
 * worker w's (NULL when none). */
size_t train_num_buffers(const train *t);
const float *train_buffers(const train *t, uint32_t w);

/* The model servers (NULL for other models): for benchmarks. */
torch_backend *train_servers(train *t);

#endif
