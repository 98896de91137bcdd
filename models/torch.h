/* torch: a user's PyTorch module as a model (issue 40, docs/torch.md), computed by model
 * servers, Python processes running python/hetsim/server.py.
 *
 * `"model": {"name": "torch", "module": "FILE.py", ...}` names a Python file whose build()
 * returns the network (and whose data() may return its own data). hetsim keeps every replica
 * as it keeps any model's, a flat float vector of the network's parameters (in
 * named_parameters() order); the servers compute what needs the network: the initial
 * parameters (the module's own initialization, under a seed drawn from the run's
 * initialization stream), each gradient (the replica's parameters, the minibatch's sample
 * indices drawn by hetsim as for any model, a seed for dropout; back come the gradient and the
 * loss) and each evaluation pass.
 *
 * Reading the scenario (torch_config_read) runs the module once in a probe server: it must
 * import, keep the contract and return float32 outputs of the right shape, else the scenario
 * is refused (SIM_ESCENARIO naming $.workload.model.module and what is wrong); the probe gives
 * the sizes, the layers and the memory one server takes. A run then starts one server per
 * gradient thread (torch_backend_create: thread 0's, which initializes the replicas;
 * torch_backend_threads: the others, started at once and waited for on first use). The
 * scenario's data set is copied once into a shared memory region that every server maps;
 * parameters, gradients, buffers and indices travel through a shared region per server, the
 * requests and replies through a socket. A server that dies or fails fails the request
 * (SIM_EIO, its traceback on stderr) and every later one on it.
 *
 * Floating buffers (BatchNorm's running statistics) are each worker's own, outside the
 * replica: a gradient request carries the worker's buffers and its forward pass updates
 * them, which become the worker's when its iteration ends (torch_backend_commit, at a
 * simulated instant, not when the gradient is joined: joins move with the thread count); an
 * evaluation uses the mean of the live workers' buffers (torch_backend_eval_buffers).
 * Integer buffers are reset before every pass.
 */
#ifndef MODELS_TORCH_H
#define MODELS_TORCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "models/data.h"
#include "models/model.h"
#include "scenario/scenario.h"
#include "sim/cfg.h"
#include "sim/err.h"
#include "sim/layers.h"

/* What the scenario's data set gives the probe (NULL: the module's own data). */
typedef struct torch_data_shape {
    size_t channels, height, width; /* one sample's shape */
    size_t classes;
} torch_data_shape;

/* What the probe found about the data. */
typedef struct torch_probe_info {
    size_t train; /* training examples (the module's own data; else the scenario's) */
    size_t test;  /* test examples */
    size_t classes;
    char rules[200]; /* "" when the layers follow tools/profile_model.py's rules, else the rule
                        broken (the layers are then one, "model", with every parameter) */
} torch_probe_info;

typedef struct torch_backend torch_backend;

/* ---- reading the scenario ---- */

/* Reads the model section of scenario `sc` (name "torch": module, required, a path relative to
 * the scenario's folder; device, "cpu" by default; every other key an argument of the
 * module's functions) into cfg->torch, then probes the module on `shape` (NULL: its own
 * data), with a training pass of `batch` examples: cfg->torch's sizes, cfg->classes, *info,
 * and the module's layers into `layers` (sim/layers.h, finished) when not NULL: by the rules of
 * tools/profile_model.py, or one layer of every parameter when the module breaks them (refused
 * with compute.profile "module", which asks for them). The probe's
 * result is kept with the scenario (sc->model_probe): a second read of the same module, shape
 * and batch (a run's, after its check's) runs none. SIM_ESCENARIO naming the file and the
 * JSON path. */
int torch_config_read(sim_scenario *sc, const torch_data_shape *shape, size_t batch,
                      model_config *cfg, torch_probe_info *info, sim_layers *layers, sim_err *err);

/* ---- a run's servers ---- */

/* Starts thread 0's server for `workers` workers with minibatches of `batch`, the data set
 * `train` and `test` (copied into the shared data region; NULL with the module's own data) in
 * it, and waits for it. Returns NULL and fills `err` (SIM_EIO, SIM_ENOMEM). */
torch_backend *torch_backend_create(const model_config *cfg, const data_set *train,
                                    const data_set *test, size_t batch, size_t workers,
                                    sim_err *err);

/* Stops every server and frees everything. NULL is a no-op. */
void torch_backend_destroy(torch_backend *b);

/* Starts servers for threads 1 .. n-1 (not waited for: their first request does). */
int torch_backend_threads(torch_backend *b, unsigned n, sim_err *err);

/* Writes the parameters of a network built under `seed` into params (num_params floats) and
 * its buffers into worker w's; with `all`, every worker's buffers. */
int torch_backend_init(torch_backend *b, uint64_t seed, float *params, uint32_t w, bool all,
                       sim_err *err);

/* Worker w's gradient on thread `thread`'s server: from `params`, its buffers and the example
 * ids[0..n) of the training set, randomness seeded with `seed`, into grad (num_params floats);
 * the updated buffers wait for torch_backend_commit. Returns the minibatch's mean loss, or NaN
 * when the server fails (the error kept for torch_backend_failed). */
double torch_backend_gradient(torch_backend *b, unsigned thread, uint32_t w, const float *params,
                              const size_t *ids, size_t n, uint64_t seed, float *grad);

/* SIM_EIO with the server's failure when worker w's last gradient failed, else SIM_OK. */
int torch_backend_failed(const torch_backend *b, uint32_t w, sim_err *err);

/* Worker w's iteration ended: the buffers its last gradient updated become its own (nothing
 * when none waits: a failed gradient, or one committed already). */
void torch_backend_commit(torch_backend *b, uint32_t w);

/* The buffers evaluations use: the mean of workers[0..k)'s, in that order (in double). */
void torch_backend_eval_buffers(torch_backend *b, const uint32_t *workers, size_t k);

/* The evaluation buffers now (cfg->torch.buffers floats). */
const float *torch_backend_eval_state(const torch_backend *b);

/* Test examples [first, first + n) on thread `thread`'s server, with `params` and the
 * evaluation buffers: their loss sum and correct predictions (NaN and 0 when the server fails,
 * the error kept for torch_backend_error). */
void torch_backend_eval(torch_backend *b, unsigned thread, const float *params, size_t first,
                        size_t n, double *loss_sum, size_t *correct);

/* The first failure of any server so far (SIM_EIO), or SIM_OK. */
int torch_backend_error(const torch_backend *b, sim_err *err);

/* Worker w's buffers now (cfg->torch.buffers floats). */
const float *torch_backend_buffers(const torch_backend *b, uint32_t w);

/* Wall seconds the servers spent computing requests (the model's share of a run's wall time). */
double torch_backend_seconds(const torch_backend *b);

/* What torch_backend_bench measured, each the best block's seconds. */
typedef struct torch_bench_result {
    double ours, plain;         /* wall seconds of a block: through the server, the plain loop */
    double ours_cpu, plain_cpu; /* CPU seconds: this thread and the server's process; the
                                   server's process */
    double overhead_s;          /* per request of ours, wall time outside the server's
                                   computation (the copies, the socket, hetsim's step) */
} torch_bench_result;

/* Times blocks of `iterations` gradients of batch `batch` through thread 0's server (each
 * followed by an SGD step in hetsim) against blocks of the server's own plain PyTorch loop on
 * the same network and data (lr 0.01, momentum 0.9), `rounds` of each in turn, after a
 * warm-up. */
int torch_backend_bench(torch_backend *b, size_t batch, size_t iterations, size_t rounds,
                        torch_bench_result *res, sim_err *err);

/* One server's memory and the shared data's, for the memory guard. */
uint64_t torch_server_bytes(const model_config *cfg, size_t batch);
uint64_t torch_data_bytes(const model_config *cfg, size_t train, size_t test, size_t dim);

#endif
