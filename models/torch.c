/* torch: the model table of a PyTorch module, and a run's model servers (models/torch.h). */
#include "models/torch.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "models/optim.h"
#include "models/torch_proc.h"
#include "sim/tensor.h"

/* ---- the model table: sizes only, the servers compute ---- */

static size_t torch_num_params(const model_config *cfg)
{
    return cfg->torch.params;
}

static double torch_flops_forward(const model_config *cfg)
{
    return cfg->torch.flops;
}

/* Never called (MODEL_SERVER: models/train.c asks the servers). */
static void torch_init_params(float *params, const model_config *cfg, gsl_rng *r)
{
    (void)r;
    memset(params, 0, cfg->torch.params * sizeof(*params));
}

static double torch_forward(float *acts, const float *params, const float *x, const uint8_t *y,
                            size_t B, const model_config *cfg)
{
    (void)acts, (void)params, (void)x, (void)y, (void)B, (void)cfg;
    return (double)NAN;
}

static void torch_backward(float *grads, float *acts, const float *params, const float *x,
                           const uint8_t *y, size_t B, const model_config *cfg)
{
    (void)acts, (void)params, (void)x, (void)y, (void)B;
    memset(grads, 0, cfg->torch.params * sizeof(*grads));
}

static const model_shape torch_model_shape = {
    .views = model_nop_views,
    .num_params = torch_num_params,
    .num_acts = model_nop_acts,
    .flops_forward = torch_flops_forward,
    .layer_flops = model_nop_layer_flops, /* the layers are the probe's (torch_config_read) */
    .init_params = torch_init_params,
};

const model_ops model_torch = {
    .name = "torch",
    .flags = MODEL_SERVER,
    .check = model_nop_check,
    .shape = &torch_model_shape,
    .forward = torch_forward,
    .backward = torch_backward,
};

/* ---- a run's servers ---- */

struct torch_backend {
    model_torch_config tc;
    size_t P, NB, batch, workers;
    size_t ntrain;       /* training examples */
    torch_layout layout; /* every server's exchange region */
    int data_fd;         /* the shared data region, -1 with the module's own data */
    size_t data_bytes;
    char *conf;       /* the servers' configuration */
    torch_proc *proc; /* (nproc) thread i's server */
    unsigned nproc;
    float *bufs;            /* (workers, 2, NB) each worker's buffers, current and next */
    unsigned char *cur;     /* (workers) which of its two is current */
    float *eval_bufs;       /* (NB) the evaluations' buffers */
    int *failed;            /* (workers) SIM_OK, or the failure of the worker's last gradient */
    unsigned char *pending; /* (workers) its last gradient's buffers wait for a commit */
    sim_err *fail_err;      /* (workers) that failure */
};

static float *ex_floats(const torch_proc *p, size_t off)
{
    return (float *)(void *)(p->ex + off);
}

static float *bufs_of(const torch_backend *b, uint32_t w, unsigned which)
{
    return b->bufs + ((size_t)w * 2 + which) * b->NB;
}

/* Copies the data sets into the shared data region. */
static int ship_data(torch_backend *b, const data_set *train, const data_set *test,
                     torch_data_layout *dl, sim_err *err)
{
    size_t shape[3] = { train->c, train->h, train->w };
    torch_data_layout_for(dl, shape, train->classes, train->n, test->n);
    unsigned char *m = NULL;
    int rc = torch_region(dl->bytes, &b->data_fd, &m, err);
    if (rc != SIM_OK)
        return rc;
    memcpy(m + dl->train_x, train->x, train->n * train->dim * sizeof(float));
    memcpy(m + dl->train_y, train->y, train->n);
    memcpy(m + dl->test_x, test->x, test->n * test->dim * sizeof(float));
    memcpy(m + dl->test_y, test->y, test->n);
    munmap(m, dl->bytes);
    b->data_bytes = dl->bytes;
    b->ntrain = train->n;
    return SIM_OK;
}

static int serve_config(torch_backend *b, const torch_data_layout *dl, sim_err *err)
{
    size_t size = 16384;
    if ((b->conf = malloc(size)) == NULL)
        return sim_err_set(err, SIM_ENOMEM, NULL, "out of memory");
    snprintf(b->conf, size,
             "{\"mode\": \"serve\", \"batch\": %zu, \"exchange\": {\"bytes\": %zu, \"params\": "
             "%zu, \"grad\": %zu, \"bufs\": %zu, \"idx\": %zu, \"idx_n\": %zu}, ",
             b->batch, b->layout.bytes, b->layout.params, b->layout.grad, b->layout.bufs,
             b->layout.idx, b->layout.idx_n);
    bool fits = torch_module_json(b->conf, size, &b->tc);
    size_t used = strlen(b->conf);
    if (fits && used + 16 < size)
        snprintf(b->conf + used, size - used, ", ");
    if (dl != NULL)
        fits = fits && torch_data_json(b->conf, size, dl);
    else if (fits && (used = strlen(b->conf)) + 16 < size)
        snprintf(b->conf + used, size - used, "\"data\": null");
    used = strlen(b->conf);
    if (!fits || used + 2 >= size)
        return sim_err_set(err, SIM_EINVAL, NULL, "the servers' configuration is too long");
    snprintf(b->conf + used, size - used, "}");
    return SIM_OK;
}

static int alloc_backend(torch_backend *b, size_t workers, sim_err *err)
{
    size_t nb = b->NB > 0 ? b->NB : 1;
    b->bufs = sim_tensor_alloc(workers * 2 * nb);
    b->eval_bufs = sim_tensor_alloc(nb);
    b->cur = calloc(workers, 1);
    b->pending = calloc(workers, 1);
    b->failed = calloc(workers, sizeof(*b->failed));
    b->fail_err = calloc(workers, sizeof(*b->fail_err));
    b->proc = calloc(1, sizeof(*b->proc));
    if (b->bufs == NULL || b->eval_bufs == NULL || b->cur == NULL || b->pending == NULL ||
        b->failed == NULL || b->fail_err == NULL || b->proc == NULL)
        return sim_err_set(err, SIM_ENOMEM, NULL, "out of memory");
    b->nproc = 1;
    return SIM_OK;
}

/* Starts server i (its slot zeroed) with the backend's configuration. */
static int start(torch_backend *b, unsigned i, sim_err *err)
{
    torch_proc *p = &b->proc[i];
    memset(p, 0, sizeof(*p));
    p->index = i;
    return torch_proc_start(p, &b->tc, &b->layout, b->data_fd, b->conf, err);
}

torch_backend *torch_backend_create(const model_config *cfg, const data_set *train,
                                    const data_set *test, size_t batch, size_t workers,
                                    sim_err *err)
{
    torch_backend *b = calloc(1, sizeof(*b));
    if (b == NULL) {
        sim_err_set(err, SIM_ENOMEM, NULL, "out of memory");
        return NULL;
    }
    b->tc = cfg->torch;
    b->P = cfg->torch.params;
    b->NB = cfg->torch.buffers;
    b->batch = batch;
    b->workers = workers;
    b->data_fd = -1;
    torch_layout_for(&b->layout, b->P, b->NB, batch);
    torch_data_layout dl;
    int rc = alloc_backend(b, workers, err);
    if (rc == SIM_OK && train != NULL)
        rc = ship_data(b, train, test, &dl, err);
    if (rc == SIM_OK)
        rc = serve_config(b, train != NULL ? &dl : NULL, err);
    if (rc == SIM_OK)
        rc = start(b, 0, err);
    torch_reply r = { 0 };
    if (rc == SIM_OK)
        rc = torch_proc_ready(&b->proc[0], &r, err);
    if (rc == SIM_OK && r.status != TORCH_STATUS_OK) {
        sim_err_set(err, SIM_EIO, NULL, "model server 0 could not start: %s",
                    r.text != NULL ? r.text : "");
        rc = sim_err_file(err, b->tc.shown);
    }
    free(r.text);
    if (rc != SIM_OK) {
        torch_backend_destroy(b);
        return NULL;
    }
    return b;
}

void torch_backend_destroy(torch_backend *b)
{
    if (b == NULL)
        return;
    for (unsigned i = 0; b->proc != NULL && i < b->nproc; i++)
        if (b->proc[i].sock >= 0 && b->proc[i].pid > 0) { /* all told at once */
            close(b->proc[i].sock);
            b->proc[i].sock = -1;
        }
    for (unsigned i = 0; b->proc != NULL && i < b->nproc; i++)
        torch_proc_stop(&b->proc[i]);
    if (b->data_fd >= 0)
        close(b->data_fd);
    free(b->proc);
    free(b->conf);
    sim_tensor_free(b->bufs);
    sim_tensor_free(b->eval_bufs);
    free(b->cur);
    free(b->pending);
    free(b->failed);
    free(b->fail_err);
    free(b);
}

int torch_backend_threads(torch_backend *b, unsigned n, sim_err *err)
{
    if (n <= b->nproc)
        return SIM_OK;
    torch_proc *p = realloc(b->proc, n * sizeof(*p));
    if (p == NULL)
        return sim_err_set(err, SIM_ENOMEM, NULL, "out of memory");
    b->proc = p;
    for (unsigned i = b->nproc; i < n; i++) {
        int rc = start(b, i, err);
        b->nproc = i + 1;
        if (rc != SIM_OK)
            return rc;
    }
    return SIM_OK;
}

int torch_backend_init(torch_backend *b, uint64_t seed, float *params, uint32_t w, bool all,
                       sim_err *err)
{
    torch_proc *p = &b->proc[0];
    torch_request rq = { .op = TORCH_OP_INIT, .seed = seed };
    torch_reply r;
    if (torch_proc_call(p, &rq, &r) != SIM_OK) {
        *err = p->err;
        return err->code;
    }
    memcpy(params, ex_floats(p, b->layout.params), b->P * sizeof(float));
    const float *bufs = ex_floats(p, b->layout.bufs);
    for (uint32_t v = all ? 0 : w; v < (all ? b->workers : w + 1); v++)
        memcpy(bufs_of(b, v, b->cur[v]), bufs, b->NB * sizeof(float));
    return SIM_OK;
}

double torch_backend_gradient(torch_backend *b, unsigned thread, uint32_t w, const float *params,
                              const size_t *ids, size_t n, uint64_t seed, float *grad)
{
    torch_proc *p = &b->proc[thread];
    memcpy(ex_floats(p, b->layout.params), params, b->P * sizeof(float));
    memcpy(ex_floats(p, b->layout.bufs), bufs_of(b, w, b->cur[w]), b->NB * sizeof(float));
    int64_t *idx = (int64_t *)(void *)(p->ex + b->layout.idx);
    for (size_t i = 0; i < n; i++)
        idx[i] = (int64_t)ids[i];
    torch_request rq = { .op = TORCH_OP_GRAD, .n = (uint32_t)n, .seed = seed };
    torch_reply r;
    if (torch_proc_call(p, &rq, &r) != SIM_OK) {
        b->failed[w] = p->failed;
        b->fail_err[w] = p->err;
        size_t used = strlen(b->fail_err[w].msg);
        snprintf(b->fail_err[w].msg + used, sizeof(b->fail_err[w].msg) - used,
                 " computing worker %u's gradient", w);
        return (double)NAN;
    }
    memcpy(grad, ex_floats(p, b->layout.grad), b->P * sizeof(float));
    memcpy(bufs_of(b, w, 1 - b->cur[w]), ex_floats(p, b->layout.bufs), b->NB * sizeof(float));
    b->failed[w] = SIM_OK;
    b->pending[w] = 1;
    return r.loss;
}

int torch_backend_failed(const torch_backend *b, uint32_t w, sim_err *err)
{
    if (b->failed[w] != SIM_OK)
        *err = b->fail_err[w];
    return b->failed[w];
}

void torch_backend_commit(torch_backend *b, uint32_t w)
{
    if (b->pending[w])
        b->cur[w] = (unsigned char)(1 - b->cur[w]);
    b->pending[w] = 0;
}

void torch_backend_eval_buffers(torch_backend *b, const uint32_t *workers, size_t k)
{
    for (size_t i = 0; i < b->NB && k > 0; i++) {
        double s = 0.0;
        for (size_t j = 0; j < k; j++)
            s += (double)bufs_of(b, workers[j], b->cur[workers[j]])[i];
        b->eval_bufs[i] = (float)(s / (double)k);
    }
}

const float *torch_backend_eval_state(const torch_backend *b)
{
    return b->eval_bufs;
}

void torch_backend_eval(torch_backend *b, unsigned thread, const float *params, size_t first,
                        size_t n, double *loss_sum, size_t *correct)
{
    torch_proc *p = &b->proc[thread];
    memcpy(ex_floats(p, b->layout.params), params, b->P * sizeof(float));
    memcpy(ex_floats(p, b->layout.bufs), b->eval_bufs, b->NB * sizeof(float));
    torch_request rq = { .op = TORCH_OP_EVAL, .n = (uint32_t)n, .a = (int64_t)first };
    torch_reply r;
    *loss_sum = (double)NAN;
    *correct = 0;
    if (torch_proc_call(p, &rq, &r) != SIM_OK)
        return;
    *loss_sum = r.loss;
    *correct = r.correct > 0 ? (size_t)r.correct : 0;
}

int torch_backend_error(const torch_backend *b, sim_err *err)
{
    for (unsigned i = 0; i < b->nproc; i++)
        if (b->proc[i].failed != SIM_OK) {
            *err = b->proc[i].err;
            return b->proc[i].failed;
        }
    return SIM_OK;
}

const float *torch_backend_buffers(const torch_backend *b, uint32_t w)
{
    return bufs_of(b, w, b->cur[w]);
}

double torch_backend_seconds(const torch_backend *b)
{
    double s = 0.0;
    for (unsigned i = 0; i < b->nproc; i++)
        s += b->proc[i].seconds;
    return s;
}

uint64_t torch_server_bytes(const model_config *cfg, size_t batch)
{
    torch_layout l;
    torch_layout_for(&l, cfg->torch.params, cfg->torch.buffers, batch);
    return cfg->torch.server_bytes + l.bytes;
}

uint64_t torch_data_bytes(const model_config *cfg, size_t train, size_t test, size_t dim)
{
    if (cfg->torch.own_data)
        return 0;
    size_t shape[3] = { 1, 1, dim };
    torch_data_layout dl;
    torch_data_layout_for(&dl, shape, cfg->classes, train, test);
    return dl.bytes;
}

static double since(const struct timespec *t0)
{
    struct timespec t1;
    clock_gettime(CLOCK_MONOTONIC, &t1);
    return (double)(t1.tv_sec - t0->tv_sec) + (double)(t1.tv_nsec - t0->tv_nsec) * 1e-9;
}

/* CPU seconds a clock (a thread's, another process's) has counted. */
static double cpu_clock(clockid_t c)
{
    struct timespec t;
    return clock_gettime(c, &t) == 0 ? (double)t.tv_sec + (double)t.tv_nsec * 1e-9 : 0.0;
}

/* One timed block of `iterations` gradients, each followed by an SGD step: wall seconds, the
 * CPU seconds of this thread and the server together in *cpu, and the server's own computing
 * time in *server_s. */
static int bench_block(torch_backend *b, float *params, float *vel, float *grad, size_t *ids,
                       size_t batch, size_t iterations, uint64_t *x, double *wall, double *cpu,
                       double *server_s, sim_err *err)
{
    torch_proc *p = &b->proc[0];
    clockid_t srv;
    if (clock_getcpuclockid(p->pid, &srv) != 0)
        srv = CLOCK_THREAD_CPUTIME_ID; /* its CPU time unknown: ours counted twice */
    double c0 = cpu_clock(CLOCK_THREAD_CPUTIME_ID) + cpu_clock(srv);
    optim_config o;
    optim_config_default(&o);
    o.lr = 0.01;
    o.momentum = 0.9;
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    double s0 = p->server_seconds;
    int rc = SIM_OK;
    for (size_t it = 0; rc == SIM_OK && it < iterations; it++) {
        for (size_t i = 0; i < batch; i++) { /* xorshift: the ids need variety, not quality */
            *x ^= *x << 13, *x ^= *x >> 7, *x ^= *x << 17;
            ids[i] = (size_t)(*x % (b->ntrain > 0 ? b->ntrain : 1));
        }
        double loss = torch_backend_gradient(b, 0, 0, params, ids, batch, it, grad);
        torch_backend_commit(b, 0);
        if ((rc = torch_backend_failed(b, 0, err)) == SIM_OK && !isfinite(loss))
            rc = sim_err_set(err, SIM_ENUMERIC, NULL, "the bench's loss is %g", loss);
        if (rc == SIM_OK)
            optim_step(params, vel, grad, b->P, o.lr, &o);
    }
    *wall = since(&t0);
    *cpu = cpu_clock(CLOCK_THREAD_CPUTIME_ID) + cpu_clock(srv) - c0;
    *server_s = p->server_seconds - s0;
    return rc;
}

int torch_backend_bench(torch_backend *b, size_t batch, size_t iterations, size_t rounds,
                        torch_bench_result *res, sim_err *err)
{
    torch_proc *p = &b->proc[0];
    float *params = sim_tensor_alloc(b->P), *vel = sim_tensor_alloc(b->P);
    float *grad = sim_tensor_alloc(b->P);
    size_t *ids = calloc(batch, sizeof(*ids));
    int rc = params == NULL || vel == NULL || grad == NULL || ids == NULL
                 ? sim_err_set(err, SIM_ENOMEM, NULL, "out of memory")
                 : torch_backend_init(b, 1, params, 0, true, err);
    if (rc == SIM_OK)
        sim_tensor_zero(vel, b->P);
    uint64_t x = 88172645463325252u;
    double wall, cpu, server_s;
    res->ours = res->plain = res->ours_cpu = res->plain_cpu = INFINITY;
    if (rc == SIM_OK) /* warm-up */
        rc = bench_block(b, params, vel, grad, ids, batch, 3, &x, &wall, &cpu, &server_s, err);
    /* Rounds of ours then the plain loop, each the best of its rounds: a shared machine's
     * other loads slow some blocks down, never speed one up. */
    for (size_t r = 0; r < rounds && rc == SIM_OK; r++) {
        rc = bench_block(b, params, vel, grad, ids, batch, iterations, &x, &wall, &cpu, &server_s,
                         err);
        if (rc == SIM_OK && wall < res->ours) {
            res->ours = wall;
            res->overhead_s = (wall - server_s) / (double)iterations;
        }
        res->ours_cpu = fmin(res->ours_cpu, cpu);
        torch_request rq = {
            .op = TORCH_OP_BENCH, .n = (uint32_t)batch, .a = (int64_t)iterations, .seed = 1 + r
        };
        torch_reply rp;
        if (rc == SIM_OK && torch_proc_call(p, &rq, &rp) != SIM_OK) {
            *err = p->err;
            rc = err->code;
        }
        if (rc == SIM_OK) {
            res->plain = fmin(res->plain, rp.seconds);
            res->plain_cpu = fmin(res->plain_cpu, rp.loss); /* the loop's CPU seconds */
        }
    }
    sim_tensor_free(params);
    sim_tensor_free(vel);
    sim_tensor_free(grad);
    free(ids);
    return rc;
}
