#include "models/train.h"

#include <assert.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <gsl/gsl_randist.h>

#include "models/torch.h"
#include "sim/rng.h"
#include "sim/tensor.h"

/* A worker's minibatch loss above this many times its first one (or above this number when
 * the first was below 1) means the run diverged: the loss of an untrained model is about
 * ln(classes), and one that grows a thousandfold predicts wrong classes with certainty. */
#define DIVERGED_FACTOR 1000.0

/* OpenBLAS's own: a run is sequential and deterministic, so sgemm runs on one thread. */
void openblas_set_num_threads(int n);

/* A thread's workspace: a batch's inputs and the model's activations (thread 0's serves
 * train_gradient and train_evaluate too). */
typedef struct train_ws {
    float *x;       /* (max(batch, TRAIN_EVAL_BATCH), D) */
    uint8_t *y;     /* (max(batch, TRAIN_EVAL_BATCH)) */
    float *acts;    /* (num_acts(max(batch, TRAIN_EVAL_BATCH))) */
    double model_s; /* wall seconds inside forward and backward passes on this thread */
} train_ws;

struct train {
    train_config cfg;
    data_set train_set, test_set;
    data_partition part;
    data_sampler **sampler; /* (workers) */
    float **grad;           /* (workers) each num_params */
    replica *rep;           /* every worker's parameters and momentum (models/replica.h) */
    double *first_loss;     /* (workers) each worker's first minibatch loss, NaN before it */
    size_t *ids;            /* (workers, batch) each worker's drawn minibatch (train_draw) */
    train_ws *ws;           /* (nws) a workspace per thread */
    unsigned nws;
    torch_backend *srv; /* MODEL_SERVER: the model servers (models/torch.h), else NULL */
    uint64_t *draws;    /* MODEL_SERVER: (workers) minibatches drawn, for the requests' seeds */
    uint64_t seed_base; /* MODEL_SERVER: the root of the requests' seeds */
};

/* Worker w's parameters and momentum buffer (NULL without momentum): its block's. */
static inline float *params_of(const train *t, uint32_t w)
{
    return replica_params(t->rep, w);
}

static inline float *velocity_of(const train *t, uint32_t w)
{
    return replica_velocity(t->rep, w);
}

static inline void own(train *t, uint32_t w)
{
    replica_own(t->rep, w);
}

/* ---- loading ---- */

/* Moves the rows `idx` of `src` into a new set `dst` (same shape). */
static int subset(const data_set *src, const size_t *idx, size_t n, data_set *dst, sim_err *err)
{
    int rc = data_set_alloc(dst, n, src->dim, err);
    if (rc != SIM_OK)
        return rc;
    data_gather(src, idx, n, dst->x, dst->y);
    dst->classes = src->classes;
    dst->c = src->c;
    dst->h = src->h;
    dst->w = src->w;
    return SIM_OK;
}

/* Holds out a shuffled test_fraction of a LIBSVM training set. */
static int split(train *t, gsl_rng *r, sim_err *err)
{
    data_set all = t->train_set;
    size_t *idx = malloc(all.n * sizeof(*idx));
    if (idx == NULL)
        return sim_err_set(err, SIM_ENOMEM, NULL, "out of memory");
    for (size_t i = 0; i < all.n; i++)
        idx[i] = i;
    gsl_ran_shuffle(r, idx, all.n, sizeof(*idx));
    size_t ntest = (size_t)llround(t->cfg.test_fraction * (double)all.n);
    if (ntest == 0)
        ntest = 1;
    int rc = ntest >= all.n ? sim_err_set(err, SIM_ESCENARIO, "$.workload.dataset.test_fraction",
                                          "leaves no training data (%zu examples)", all.n)
                            : SIM_OK;
    memset(&t->train_set, 0, sizeof(t->train_set));
    if (rc == SIM_OK)
        rc = subset(&all, idx, ntest, &t->test_set, err);
    if (rc == SIM_OK)
        rc = subset(&all, idx + ntest, all.n - ntest, &t->train_set, err);
    free(idx);
    data_fini(&all);
    return rc;
}

/* A LIBSVM file `which` (0 the training file, 1 the test file) loaded with the bytes `fnv`:
 * those the workload's reader found (the scenario's first read), else SIM_EIO naming it. */
static int same_data(const train_config *c, int which, uint64_t fnv, sim_err *err)
{
    if (c->data_fnv[which] == 0 || c->data_fnv[which] == fnv)
        return SIM_OK;
    sim_err_clear(err);
    return sim_err_set(
        err, SIM_EIO, which == 0 ? "$.workload.dataset.file" : "$.workload.dataset.test_file",
        "%s: its bytes are not those the first run read", which == 0 ? c->path : c->test_path);
}

static int load_data(train *t, gsl_rng *r, sim_err *err)
{
    const train_config *c = &t->cfg;
    int rc = SIM_OK;
    bool changed = false; /* read whole, but not the bytes the scenario's load read */
    switch (c->dataset) {
    case TRAIN_FASHION_MNIST:
        rc = data_load_fashion_mnist(c->path, true, c->train_samples, &t->train_set, err);
        if (rc == SIM_OK)
            rc = data_load_fashion_mnist(c->path, false, 0, &t->test_set, err);
        if (rc == SIM_OK &&
            (t->train_set.h != c->model.height || t->train_set.w != c->model.width ||
             t->test_set.h != c->model.height || t->test_set.w != c->model.width ||
             t->train_set.n != c->train_examples))
            rc = sim_err_set(err, SIM_ESCENARIO, "$.workload.dataset.dir",
                             "the data files changed since their headers were read");
        break;
    case TRAIN_LIBSVM:
        rc = data_load_libsvm(c->path, c->max_features, c->train_samples, &t->train_set, err);
        if (rc == SIM_OK)
            changed = (rc = same_data(c, 0, t->train_set.file_fnv, err)) != SIM_OK;
        if (rc == SIM_OK && c->test_path[0] != '\0') {
            rc = data_load_libsvm(c->test_path, c->max_features, 0, &t->test_set, err);
            if (rc == SIM_OK)
                changed = (rc = same_data(c, 1, t->test_set.file_fnv, err)) != SIM_OK;
        } else if (rc == SIM_OK) {
            rc = split(t, r, err);
        }
        if (rc == SIM_OK && t->test_set.dim != t->train_set.dim)
            rc = sim_err_set(err, SIM_ESCENARIO, "$.workload.dataset.test_file",
                             "test data has %zu features, training data %zu", t->test_set.dim,
                             t->train_set.dim);
        break;
    case TRAIN_SYNTHETIC: {
        /* One draw for both sets, so that they share the class centres. */
        data_synthetic_config all = c->synthetic;
        all.n = c->synthetic.n + c->synthetic_test;
        data_set both;
        rc = data_synthetic(&all, r, &both, err);
        if (rc != SIM_OK)
            break;
        size_t *idx = malloc(all.n * sizeof(*idx));
        if (idx == NULL) {
            data_fini(&both);
            return sim_err_set(err, SIM_ENOMEM, NULL, "out of memory");
        }
        for (size_t i = 0; i < all.n; i++)
            idx[i] = i;
        rc = subset(&both, idx, c->synthetic.n, &t->train_set, err);
        if (rc == SIM_OK)
            rc = subset(&both, idx + c->synthetic.n, c->synthetic_test, &t->test_set, err);
        free(idx);
        data_fini(&both);
        break;
    }
    }
    /* The data file is what is wrong; one edited since the scenario's load is not (SIM_EIO,
     * exit 1, as the load's own hold says: a check's seed said exit 1 or 2 by the instant). */
    if (rc != SIM_OK && rc != SIM_ENOMEM && !changed)
        err->code = rc = SIM_ESCENARIO;
    return rc;
}

/* MODEL_SERVER: the initial parameters and buffers from the module (a network built under a
 * seed from the initialization stream: one, or one per worker in worker order), then the root
 * of the requests' seeds. */
static int init_served(train *t, gsl_rng *init, sim_err *err)
{
    size_t n = t->cfg.workers;
    int rc = torch_backend_init(t->srv, gsl_rng_get(init), params_of(t, 0), 0, true, err);
    for (size_t w = 1; w < n && t->cfg.independent_init && rc == SIM_OK; w++)
        rc = torch_backend_init(t->srv, gsl_rng_get(init), params_of(t, (uint32_t)w), (uint32_t)w,
                                false, err);
    t->seed_base = (uint64_t)gsl_rng_get(init) << 32 | gsl_rng_get(init);
    t->draws = calloc(n, sizeof(*t->draws));
    if (rc == SIM_OK && t->draws == NULL)
        rc = sim_err_set(err, SIM_ENOMEM, NULL, "out of memory");
    return rc;
}

/* MODEL_SERVER: placeholder sets of the module's own data (its size, nothing of it: the
 * servers hold it), or the scenario's data shipped to the servers (hetsim keeps its labels
 * and sizes, not its features); then thread 0's server. */
static int start_servers(train *t, sim_err *err)
{
    const train_config *c = &t->cfg;
    int rc = SIM_OK;
    if (c->model.torch.own_data) {
        rc = data_set_alloc(&t->train_set, c->train_examples, 1, err);
        if (rc == SIM_OK)
            rc = data_set_alloc(&t->test_set, c->test_examples, 1, err);
        if (rc != SIM_OK)
            return rc;
    }
    bool own = c->model.torch.own_data;
    t->srv = torch_backend_create(&c->model, own ? NULL : &t->train_set, own ? NULL : &t->test_set,
                                  c->batch, c->workers, err);
    if (t->srv == NULL)
        return err->code;
    sim_tensor_free(t->train_set.x);
    sim_tensor_free(t->test_set.x);
    t->train_set.x = t->test_set.x = NULL;
    return SIM_OK;
}

static int alloc_workers(train *t, gsl_rng *init, sim_err *err)
{
    size_t n = t->cfg.workers, P = t->cfg.num_params;
    t->sampler = calloc(n, sizeof(*t->sampler));
    t->grad = calloc(n, sizeof(*t->grad));
    t->ids = calloc(n * (t->cfg.batch > 0 ? t->cfg.batch : 1), sizeof(*t->ids));
    t->first_loss = calloc(n, sizeof(*t->first_loss));
    if (t->first_loss != NULL)
        for (size_t w = 0; w < n; w++)
            t->first_loss[w] = NAN;
    if (t->sampler == NULL || t->grad == NULL || t->first_loss == NULL || t->ids == NULL)
        return sim_err_set(err, SIM_ENOMEM, NULL, "out of memory");
    bool no_data = t->cfg.ops->flags & MODEL_NO_DATA;
    for (size_t w = 0; w < n; w++) {
        const data_partition *p = &t->part;
        t->sampler[w] =
            no_data ? NULL
                    : data_sampler_create(&t->train_set, p->index + p->offset[w],
                                          p->offset[w + 1] - p->offset[w], t->cfg.batch, err);
        t->grad[w] = sim_tensor_alloc(P);
        if ((!no_data && t->sampler[w] == NULL) || t->grad[w] == NULL)
            return err->code != SIM_OK ? err->code
                                       : sim_err_set(err, SIM_ENOMEM, NULL,
                                                     "out of memory for %zu workers' tensors", n);
    }
    /* One shared block when the replicas start equal; one each otherwise. */
    bool shared = !t->cfg.independent_init && !(t->cfg.ops->flags & MODEL_AVERAGING_ONLY);
    t->rep = replica_create((uint32_t)n, P, t->cfg.optim.momentum > 0, shared, err);
    if (t->rep == NULL)
        return err->code;
    if (t->srv != NULL)
        return init_served(t, init, err);
    t->cfg.ops->shape->init_params(params_of(t, 0), &t->cfg.model, init);
    for (size_t w = 1; w < n && t->cfg.independent_init; w++)
        t->cfg.ops->shape->init_params(params_of(t, w), &t->cfg.model, init);
    return SIM_OK;
}

/* Workspaces for threads t->nws .. n-1 (n <= the array's size, allocated by the caller). */
static int alloc_ws_range(train *t, unsigned n, sim_err *err)
{
    const train_config *cfg = &t->cfg;
    size_t B = cfg->batch > TRAIN_EVAL_BATCH ? cfg->batch : TRAIN_EVAL_BATCH;
    for (; t->nws < n; t->nws++) {
        train_ws *ws = &t->ws[t->nws];
        ws->x = sim_tensor_alloc(B * t->train_set.dim);
        ws->y = malloc(B);
        ws->acts = sim_tensor_alloc(cfg->ops->shape->num_acts(&cfg->model, B));
        if (ws->x == NULL || ws->y == NULL || ws->acts == NULL) {
            t->nws++; /* freed by train_destroy */
            return sim_err_set(err, SIM_ENOMEM, NULL, "out of memory for thread workspaces");
        }
    }
    return SIM_OK;
}

static int alloc_ws(train *t, unsigned n, sim_err *err)
{
    train_ws *ws = calloc(n, sizeof(*ws));
    if (ws == NULL)
        return sim_err_set(err, SIM_ENOMEM, NULL, "out of memory");
    for (unsigned i = 0; i < t->nws; i++)
        ws[i] = t->ws[i];
    free(t->ws);
    t->ws = ws;
    return alloc_ws_range(t, n, err);
}

train *train_create(const train_config *cfg, gsl_rng *data, gsl_rng *init, sim_err *err)
{
    train *t = calloc(1, sizeof(*t));
    if (t == NULL) {
        sim_err_set(err, SIM_ENOMEM, NULL, "out of memory");
        return NULL;
    }
    t->cfg = *cfg;
    if (cfg->ops->flags & MODEL_NO_DATA) { /* no data to load, no workspace to compute in, */
        if (alloc_workers(t, init, err) != SIM_OK) { /* no BLAS (whose set-up starts threads) */
            train_destroy(t);
            return NULL;
        }
        return t;
    }
    openblas_set_num_threads(1);
    bool served = cfg->ops->flags & MODEL_SERVER;
    int rc = served && cfg->model.torch.own_data ? SIM_OK : load_data(t, data, err);
    if (rc == SIM_OK && served)
        rc = start_servers(t, err);
    if (rc == SIM_OK)
        rc = cfg->dirichlet ? data_partition_dirichlet(&t->train_set, cfg->workers, cfg->alpha,
                                                       data, &t->part, err)
                            : data_partition_iid(&t->train_set, cfg->workers, data, &t->part, err);
    if (rc == SIM_OK && !served)
        rc = alloc_ws(t, 1, err);
    if (rc == SIM_OK)
        rc = alloc_workers(t, init, err);
    if (rc != SIM_OK) {
        train_destroy(t);
        return NULL;
    }
    return t;
}

void train_destroy(train *t)
{
    if (t == NULL)
        return;
    for (size_t w = 0; w < t->cfg.workers; w++) {
        if (t->sampler != NULL)
            data_sampler_destroy(t->sampler[w]);
        if (t->grad != NULL)
            sim_tensor_free(t->grad[w]);
    }
    replica_destroy(t->rep);
    torch_backend_destroy(t->srv);
    free(t->draws);
    for (unsigned i = 0; i < t->nws; i++) {
        sim_tensor_free(t->ws[i].x);
        free(t->ws[i].y);
        sim_tensor_free(t->ws[i].acts);
    }
    free(t->ws);
    free(t->ids);
    free(t->sampler);
    free(t->grad);
    free(t->first_loss);
    data_partition_fini(&t->part);
    data_fini(&t->train_set);
    data_fini(&t->test_set);
    free(t);
}

/* ---- queries and steps ---- */

replica *train_replica(train *t)
{
    return t->rep;
}

const model_ops *train_model(const train *t)
{
    return t->cfg.ops;
}

size_t train_num_params(const train *t)
{
    return t->cfg.num_params;
}

size_t train_train_size(const train *t)
{
    return t->train_set.n;
}

size_t train_test_size(const train *t)
{
    return t->test_set.n;
}

float *train_params(train *t, uint32_t w)
{
    return params_of(t, w);
}

const float *train_grad(const train *t, uint32_t w)
{
    return t->grad[w];
}

float *train_params_write(train *t, uint32_t w)
{
    own(t, w);
    return params_of(t, w);
}

double train_model_seconds(const train *t)
{
    double s = t->srv != NULL ? torch_backend_seconds(t->srv) : 0.0;
    for (unsigned i = 0; i < t->nws; i++)
        s += t->ws[i].model_s;
    return s;
}

uint32_t train_blocks_in_use(const train *t)
{
    return replica_blocks_in_use(t->rep);
}

float *train_swap_grad(train *t, uint32_t w, float *spare)
{
    float *g = t->grad[w];
    t->grad[w] = spare;
    return g;
}

void train_init_worker(train *t, uint32_t w, gsl_rng *r)
{
    own(t, w);
    t->cfg.ops->shape->init_params(params_of(t, w), &t->cfg.model, r);
}

int train_set_threads(train *t, unsigned n, sim_err *err)
{
    if (n <= 1 || (n <= t->nws && replica_pins_allowed(t->rep)))
        return SIM_OK;
    /* As many blocks again: a gradient in flight pins its worker's block (train_pin). */
    int rc = replica_pins_allowed(t->rep) ? SIM_OK : replica_allow_pins(t->rep, err);
    if (rc != SIM_OK || (t->cfg.ops->flags & MODEL_NO_DATA))
        return rc;
    if (t->srv != NULL) /* a server per thread instead of a workspace */
        return torch_backend_threads(t->srv, n, err);
    return n <= t->nws ? rc : alloc_ws(t, n, err);
}

uint32_t train_pin(train *t, uint32_t w)
{
    return replica_pin(t->rep, w);
}

void train_unpin(train *t, uint32_t b)
{
    replica_unpin(t->rep, b);
}

bool train_write_orphans(const train *t, uint32_t w)
{
    return replica_write_orphans(t->rep, w);
}

uint32_t train_orphans(const train *t)
{
    return replica_orphans(t->rep);
}

void train_draw(train *t, uint32_t w, gsl_rng *r)
{
    if (!(t->cfg.ops->flags & MODEL_NO_DATA))
        data_sampler_next_ids(t->sampler[w], r, t->ids + (size_t)w * t->cfg.batch);
    if (t->srv != NULL)
        t->draws[w]++;
}

/* MODEL_SERVER: worker w's gradient through thread `thread`'s server, its randomness seeded by
 * the worker and the count of its draws. */
static double served_gradient(train *t, uint32_t w, const float *params, unsigned thread)
{
    const train_config *c = &t->cfg;
    uint64_t seed = sim_rng_seed(t->seed_base, (uint64_t)w << 40 | t->draws[w]);
    return torch_backend_gradient(t->srv, thread, w, params, t->ids + (size_t)w * c->batch,
                                  c->batch, seed, t->grad[w]);
}

double train_gradient_on(train *t, uint32_t w, const float *params, unsigned thread)
{
    const train_config *c = &t->cfg;
    if (c->ops->flags & MODEL_NO_DATA) { /* no data: a zero gradient */
        sim_tensor_zero(t->grad[w], c->num_params);
        return 0.0;
    }
    if (t->srv != NULL)
        return served_gradient(t, w, params, thread);
    assert(thread < t->nws);
    train_ws *ws = &t->ws[thread];
    data_gather(&t->train_set, t->ids + (size_t)w * c->batch, c->batch, ws->x, ws->y);
    const float *p = params;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    double loss = c->ops->forward(ws->acts, p, ws->x, ws->y, c->batch, &c->model);
    if (isfinite(loss))
        c->ops->backward(t->grad[w], ws->acts, p, ws->x, ws->y, c->batch, &c->model);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    ws->model_s += (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) * 1e-9;
    return loss;
}

int train_check_loss(train *t, uint32_t w, double loss, sim_err *err)
{
    if (t->srv != NULL) { /* the server's failure */
        int rc = torch_backend_failed(t->srv, w, err);
        if (rc != SIM_OK)
            return rc;
    }
    if (!isfinite(loss))
        return sim_err_set(err, SIM_ENUMERIC, NULL, "worker %u: the training loss is %g", w, loss);
    if (t->cfg.ops->flags & MODEL_NO_DATA)
        return SIM_OK;
    if (isnan(t->first_loss[w]))
        t->first_loss[w] = loss;
    double bound = DIVERGED_FACTOR * fmax(t->first_loss[w], 1.0);
    if (loss > bound)
        return sim_err_set(err, SIM_ENUMERIC, NULL,
                           "worker %u: the training loss %.6g exceeds %.6g (%.0f times its first, "
                           "%.6g): the run diverged",
                           w, loss, bound, DIVERGED_FACTOR, t->first_loss[w]);
    return SIM_OK;
}

uint32_t train_block_of(const train *t, uint32_t w)
{
    return replica_block_of(t->rep, w);
}

int train_gradient(train *t, uint32_t w, gsl_rng *r, double *loss, sim_err *err)
{
    train_draw(t, w, r);
    *loss = train_gradient_on(t, w, params_of(t, w), 0);
    return train_check_loss(t, w, *loss, err);
}

void train_step(const train *t, float *params, float *velocity, const float *grad, double epoch)
{
    train_step_range(t, params, velocity, grad, t->cfg.num_params, epoch);
}

void train_step_range(const train *t, float *params, float *velocity, const float *grad, size_t n,
                      double epoch)
{
    assert(n <= t->cfg.num_params);
    optim_config o = t->cfg.optim;
    if (velocity == NULL)
        o.momentum = 0.0;
    optim_step(params, velocity, grad, n, optim_lr(&o, epoch), &o);
}

void train_step_range_with(const train *t, float *params, float *velocity, const float *grad,
                           size_t n, double lr, double momentum, unsigned variants)
{
    assert(n <= t->cfg.num_params);
    optim_config o = t->cfg.optim;
    o.momentum = velocity != NULL ? momentum : 0.0;
    o.nesterov = (variants & TRAIN_NESTEROV) != 0;
    if (variants & TRAIN_NO_DECAY)
        o.weight_decay = 0.0;
    optim_step(params, velocity, grad, n, lr, &o);
}

double train_lr(const train *t, double epoch)
{
    return optim_lr(&t->cfg.optim, epoch);
}

void train_apply(train *t, uint32_t w, const float *grad, double epoch)
{
    own(t, w);
    optim_step(params_of(t, w), velocity_of(t, w), grad, t->cfg.num_params,
               optim_lr(&t->cfg.optim, epoch), &t->cfg.optim);
}

void train_apply_with(train *t, uint32_t w, const float *grad, double lr, double momentum)
{
    own(t, w);
    optim_config o = t->cfg.optim;
    float *velocity = velocity_of(t, w);
    o.momentum = velocity != NULL ? momentum : 0.0;
    optim_step(params_of(t, w), velocity, grad, t->cfg.num_params, lr, &o);
}

void train_average_step_pair(train *t, uint32_t i, uint32_t j, const float *gi, const float *gj,
                             double epoch)
{
    assert(i != j);
    own(t, i);
    own(t, j);
    float *vi = velocity_of(t, i);
    float *vj = velocity_of(t, j);
    optim_average_step_pair(params_of(t, i), params_of(t, j), vi, vj, gi, gj, t->cfg.num_params,
                            optim_lr(&t->cfg.optim, epoch), &t->cfg.optim);
}

void train_apply_keyed(train *t, uint32_t w, const float *grad, double lr, double momentum,
                       uint64_t key)
{
    replica_key k = { .key = key, .grad = grad, .lr = lr, .momentum = momentum };
    if (replica_keyed_follow(t->rep, w, &k))
        return;
    replica_keyed_fork(t->rep, w, &k); /* w's block is now its own to step */
    optim_config o = t->cfg.optim;
    float *velocity = velocity_of(t, w);
    o.momentum = velocity != NULL ? momentum : 0.0;
    optim_step(params_of(t, w), velocity, grad, t->cfg.num_params, lr, &o);
}

double train_momentum(const train *t)
{
    return t->cfg.optim.momentum;
}

void train_scale_momentum(train *t, uint32_t w, float factor)
{
    if (velocity_of(t, w) == NULL)
        return;
    own(t, w);
    sim_tensor_scale(velocity_of(t, w), factor, t->cfg.num_params);
}

size_t train_eval_batches(const train *t, size_t samples)
{
    size_t n = samples < t->test_set.n ? samples : t->test_set.n;
    return (n + TRAIN_EVAL_BATCH - 1) / TRAIN_EVAL_BATCH;
}

void train_eval_batch(train *t, const float *params, size_t samples, size_t i, unsigned thread,
                      double *loss_sum, size_t *correct)
{
    const train_config *c = &t->cfg;
    size_t n = samples < t->test_set.n ? samples : t->test_set.n, D = t->test_set.dim;
    size_t at = i * TRAIN_EVAL_BATCH;
    size_t b = n - at < TRAIN_EVAL_BATCH ? n - at : TRAIN_EVAL_BATCH;
    if (t->srv != NULL) {
        torch_backend_eval(t->srv, thread, params, at, b, loss_sum, correct);
        return;
    }
    assert(thread < t->nws);
    const float *x = t->test_set.x + at * D;
    const uint8_t *y = t->test_set.y + at;
    float *acts = t->ws[thread].acts;
    *loss_sum = c->ops->forward(acts, params, x, y, b, &c->model) * (double)b;
    *correct = model_count_correct(acts, y, b, &c->model);
}

void train_evaluate(train *t, const float *params, size_t samples, double *loss, double *accuracy)
{
    size_t n = samples < t->test_set.n ? samples : t->test_set.n;
    double sum = 0.0;
    size_t correct = 0;
    for (size_t i = 0; i < train_eval_batches(t, samples); i++) {
        double s;
        size_t k;
        train_eval_batch(t, params, samples, i, 0, &s, &k);
        sum += s;
        correct += k;
    }
    *loss = n > 0 ? sum / (double)n : (double)NAN;
    *accuracy = n > 0 ? (double)correct / (double)n : (double)NAN;
}

void train_iteration_done(train *t, uint32_t w)
{
    if (t->srv != NULL)
        torch_backend_commit(t->srv, w);
}

void train_eval_buffers(train *t, const uint32_t *workers, size_t k)
{
    if (t->srv != NULL)
        torch_backend_eval_buffers(t->srv, workers, k);
}

int train_error(const train *t, sim_err *err)
{
    return t->srv != NULL ? torch_backend_error(t->srv, err) : SIM_OK;
}

size_t train_num_buffers(const train *t)
{
    return t->srv != NULL ? t->cfg.model.torch.buffers : 0;
}

const float *train_buffers(const train *t, uint32_t w)
{
    return t->srv != NULL ? torch_backend_buffers(t->srv, w) : NULL;
}

torch_backend *train_servers(train *t)
{
    return t->srv;
}
