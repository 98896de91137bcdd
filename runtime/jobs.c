/* Gradients and evaluations as jobs of the run's thread pool (see runtime/jobs.h). */
#include "runtime/jobs.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/tensor.h"

static void gradient_job(void *arg, unsigned thread)
{
    grad_job *g = arg;
    g->loss = train_gradient_on(g->ctx->tr, g->w, g->params, thread);
}

static void eval_job_run(void *arg, unsigned thread)
{
    eval_job *e = arg;
    train_eval_batch(e->ctx->tr, e->params, e->samples, e->i, thread, &e->sum, &e->correct);
}

static void mean_job_run(void *arg, unsigned thread)
{
    (void)thread;
    mean_job *m = arg;
    sim_tensor_mean_range(m->out, m->xs, m->k, m->begin, m->end);
}

bool jobs_active(const sim_ctx *ctx)
{
    return ctx->pool != NULL;
}

/* JOBS_MEAN_MIN_FLOATS, or the environment's HETSIM_MEAN_MIN_FLOATS when it is a positive
 * integer (the test suites' hook to split the means of small models). */
static uint64_t mean_min_floats(void)
{
    const char *env = getenv("HETSIM_MEAN_MIN_FLOATS");
    if (env == NULL)
        return JOBS_MEAN_MIN_FLOATS;
    char *end;
    unsigned long long n = strtoull(env, &end, 10);
    return *end != '\0' || end == env || n < 1 ? JOBS_MEAN_MIN_FLOATS : (uint64_t)n;
}

int jobs_init(sim_ctx *ctx, unsigned threads, sim_err *err)
{
    if (train_model(ctx->tr)->flags & MODEL_NO_DATA) /* no gradient to compute: no pool */
        return SIM_OK;
    if (threads < 1)
        threads = 1;
    if (threads > SIM_POOL_MAX_THREADS)
        threads = SIM_POOL_MAX_THREADS;
    size_t n = ctx->nworkers;
    ctx->nejob = train_eval_batches(ctx->tr, ctx->sc->eval_samples);
    ctx->ring_cap = 4 * n;
    ctx->gjob = calloc(n, sizeof(*ctx->gjob));
    ctx->ejob = calloc(ctx->nejob > 0 ? ctx->nejob : 1, sizeof(*ctx->ejob));
    ctx->ring_loss = calloc(ctx->ring_cap, sizeof(*ctx->ring_loss));
    ctx->ring_w = calloc(ctx->ring_cap, sizeof(*ctx->ring_w));
    ctx->ring_done = calloc(ctx->ring_cap, sizeof(*ctx->ring_done));
    ctx->nmjob = threads > 1 ? (size_t)JOBS_MEAN_PIECES * threads : 0;
    ctx->mjob = calloc(ctx->nmjob > 0 ? ctx->nmjob : 1, sizeof(*ctx->mjob));
    if (ctx->gjob == NULL || ctx->ejob == NULL || ctx->ring_loss == NULL || ctx->ring_w == NULL ||
        ctx->ring_done == NULL || ctx->mjob == NULL)
        return sim_err_set(err, SIM_ENOMEM, NULL, "out of memory");
    int rc = train_set_threads(ctx->tr, threads, err);
    if (rc != SIM_OK)
        return rc;
    for (size_t w = 0; w < n; w++) {
        ctx->gjob[w].ctx = ctx;
        ctx->gjob[w].w = (uint32_t)w;
        ctx->gjob[w].job.fn = gradient_job;
        ctx->gjob[w].job.arg = &ctx->gjob[w];
    }
    for (size_t i = 0; i < ctx->nejob; i++) {
        ctx->ejob[i].ctx = ctx;
        ctx->ejob[i].i = i;
        ctx->ejob[i].job.fn = eval_job_run;
        ctx->ejob[i].job.arg = &ctx->ejob[i];
        ctx->ejob[i].job.priority = INT64_MIN; /* needed now: before any gradient */
    }
    for (size_t i = 0; i < ctx->nmjob; i++) {
        ctx->mjob[i].job.fn = mean_job_run;
        ctx->mjob[i].job.arg = &ctx->mjob[i];
        ctx->mjob[i].job.priority = INT64_MIN; /* needed now */
    }
    ctx->max_copies = threads;
    ctx->mean_min_floats = mean_min_floats();
    ctx->pool = sim_pool_create(threads, n + ctx->nejob + ctx->nmjob, err);
    return ctx->pool != NULL ? SIM_OK : err->code;
}

void jobs_fini(sim_ctx *ctx)
{
    if (ctx->pool != NULL) {
        for (uint32_t w = 0; w < ctx->nworkers; w++)
            sim_pool_join(ctx->pool, &ctx->gjob[w].job);
        for (size_t i = 0; i < ctx->nejob; i++)
            sim_pool_join(ctx->pool, &ctx->ejob[i].job);
        sim_pool_destroy(ctx->pool);
        ctx->pool = NULL;
    }
    free(ctx->gjob);
    free(ctx->ejob);
    free(ctx->ring_loss);
    free(ctx->ring_w);
    free(ctx->ring_done);
    free(ctx->mjob);
    ctx->mjob = NULL;
    ctx->nmjob = 0;
    ctx->gjob = NULL;
    ctx->ejob = NULL;
    ctx->ring_loss = NULL;
    ctx->ring_w = NULL;
    ctx->ring_done = NULL;
}

/* Adds the joined losses at the ring's head to the training loss, in start order. */
static void retire(sim_ctx *ctx)
{
    while (ctx->ring_n > 0 && ctx->ring_done[ctx->ring_head]) {
        if (ctx->eval_owed > 0) { /* started before the pending evaluation */
            ctx->pend_loss_sum += ctx->ring_loss[ctx->ring_head];
            ctx->pend_loss_count++;
            ctx->eval_owed--;
        } else {
            ctx->eval.loss_sum += ctx->ring_loss[ctx->ring_head];
            ctx->eval.loss_count++;
        }
        ctx->ring_head = (ctx->ring_head + 1) % ctx->ring_cap;
        ctx->ring_n--;
    }
}

int jobs_join(sim_ctx *ctx, uint32_t w, sim_err *err)
{
    if (ctx->pool == NULL)
        return SIM_OK;
    grad_job *g = &ctx->gjob[w];
    if (!sim_pool_pending(&g->job))
        return SIM_OK;
    sim_pool_join(ctx->pool, &g->job);
    if (g->pinned)
        train_unpin(ctx->tr, g->block);
    g->pinned = false;
    sim_err e;
    sim_err_clear(&e);
    int rc = train_check_loss(ctx->tr, w, g->loss, &e);
    if (rc == SIM_OK) {
        ctx->ring_loss[g->slot] = g->loss;
        ctx->ring_done[g->slot] = true;
        retire(ctx);
        return SIM_OK;
    }
    size_t used = strlen(e.msg);
    snprintf(e.msg + used, sizeof(e.msg) - used, " in iteration %" PRIu64, g->iteration);
    if (ctx->job_rc == SIM_OK) {
        ctx->job_rc = rc;
        ctx->job_err = e;
    }
    if (err != NULL)
        *err = ctx->job_err;
    return ctx->job_rc;
}

int jobs_drain(sim_ctx *ctx, sim_err *err)
{
    if (ctx->pool == NULL)
        return SIM_OK;
    while (ctx->ring_n > 0 && ctx->job_rc == SIM_OK)
        jobs_join(ctx, ctx->ring_w[ctx->ring_head], NULL);
    if (ctx->job_rc != SIM_OK && err != NULL)
        *err = ctx->job_err;
    return ctx->job_rc;
}

void jobs_submit(sim_ctx *ctx, uint32_t w, sim_time due_ns)
{
    if (ctx->ring_n == ctx->ring_cap)
        jobs_join(ctx, ctx->ring_w[ctx->ring_head], NULL);
    grad_job *g = &ctx->gjob[w];
    train_draw(ctx->tr, w, sim_cluster_worker_rng(ctx->cl, w));
    /* One thread computes it right now (sim_pool_submit): nothing to pin. */
    g->pinned = sim_pool_threads(ctx->pool) > 1;
    g->block = g->pinned ? train_pin(ctx->tr, w) : train_block_of(ctx->tr, w);
    g->params = train_params(ctx->tr, w);
    g->iteration = ctx->account.worker[w].started;
    g->loss = NAN;
    g->slot = (ctx->ring_head + ctx->ring_n) % ctx->ring_cap;
    ctx->ring_w[g->slot] = w;
    ctx->ring_done[g->slot] = false;
    ctx->ring_n++;
    g->job.priority = due_ns;
    sim_pool_submit(ctx->pool, &g->job);
}

void jobs_before_write(sim_ctx *ctx, uint32_t w)
{
    if (ctx->pool == NULL || sim_pool_threads(ctx->pool) == 1 || !train_write_orphans(ctx->tr, w) ||
        train_orphans(ctx->tr) < ctx->max_copies)
        return;
    /* A copy past the bound: the gradients reading w's block finish first (in start order:
     * workers' order is as good, the joins change no result). */
    uint32_t b = train_block_of(ctx->tr, w);
    for (uint32_t v = 0; v < ctx->nworkers; v++)
        if (ctx->gjob[v].pinned && ctx->gjob[v].block == b)
            jobs_join(ctx, v, NULL);
}

void jobs_eval_start(sim_ctx *ctx, const float *params, size_t samples)
{
    size_t nb = train_eval_batches(ctx->tr, samples);
    for (size_t i = 0; i < nb; i++) {
        ctx->ejob[i].params = params;
        ctx->ejob[i].samples = samples;
        sim_pool_submit(ctx->pool, &ctx->ejob[i].job);
    }
}

void jobs_eval_join(sim_ctx *ctx, double *loss, double *accuracy)
{
    size_t samples = ctx->ejob[0].samples;
    size_t nb = train_eval_batches(ctx->tr, samples);
    size_t n = samples < train_test_size(ctx->tr) ? samples : train_test_size(ctx->tr);
    double sum = 0.0;
    size_t correct = 0;
    for (size_t i = 0; i < nb; i++) {
        sim_pool_join(ctx->pool, &ctx->ejob[i].job);
        sum += ctx->ejob[i].sum;
        correct += ctx->ejob[i].correct;
    }
    *loss = n > 0 ? sum / (double)n : (double)NAN;
    *accuracy = n > 0 ? (double)correct / (double)n : (double)NAN;
}

void jobs_evaluate(sim_ctx *ctx, const float *params, size_t samples, double *loss,
                   double *accuracy)
{
    if (ctx->pool == NULL || sim_pool_threads(ctx->pool) == 1 || ctx->nejob == 0) {
        train_evaluate(ctx->tr, params, samples, loss, accuracy);
        return;
    }
    jobs_eval_start(ctx, params, samples);
    jobs_eval_join(ctx, loss, accuracy);
}

void jobs_mean(sim_ctx *ctx, float *restrict out, const float *const *xs, size_t k, size_t n)
{
    size_t blocks = (n + SIM_TENSOR_MEAN_BLOCK - 1) / SIM_TENSOR_MEAN_BLOCK;
    size_t pieces = blocks < ctx->nmjob ? blocks : ctx->nmjob;
    if (ctx->pool == NULL || pieces < 2 || (uint64_t)k * n < ctx->mean_min_floats) {
        sim_tensor_mean(out, xs, k, n);
        return;
    }
    /* Piece i: blocks [i * blocks / pieces, (i + 1) * blocks / pieces); the caller computes
     * piece 0 while the helpers take the others. */
    for (size_t i = 0; i < pieces; i++) {
        mean_job *m = &ctx->mjob[i];
        size_t b = i * blocks / pieces, e = (i + 1) * blocks / pieces;
        m->out = out;
        m->xs = xs;
        m->k = k;
        m->begin = b * SIM_TENSOR_MEAN_BLOCK;
        m->end = e * SIM_TENSOR_MEAN_BLOCK < n ? e * SIM_TENSOR_MEAN_BLOCK : n;
        if (i > 0)
            sim_pool_submit(ctx->pool, &m->job);
    }
    ctx->split_means++;
    mean_job_run(&ctx->mjob[0], 0);
    for (size_t i = 1; i < pieces; i++)
        sim_pool_join(ctx->pool, &ctx->mjob[i].job);
}

bool jobs_eval_async(const sim_ctx *ctx)
{
    return ctx->pool != NULL && sim_pool_threads(ctx->pool) > 1 && ctx->nejob > 0 &&
           isnan(ctx->sc->target_accuracy) && ctx->out.observe == NULL;
}

int jobs_settle(sim_ctx *ctx, sim_err *err)
{
    while (ctx->eval_owed > 0 && ctx->job_rc == SIM_OK)
        jobs_join(ctx, ctx->ring_w[ctx->ring_head], NULL);
    if (ctx->job_rc != SIM_OK && err != NULL)
        *err = ctx->job_err;
    return ctx->job_rc;
}

uint64_t jobs_memory(const train_config *tc, unsigned threads)
{
    if (threads <= 1 || (tc->ops->flags & MODEL_NO_DATA))
        return 0;
    size_t B = tc->batch > TRAIN_EVAL_BATCH ? tc->batch : TRAIN_EVAL_BATCH;
    uint64_t ws = (uint64_t)B * model_input_size(&tc->model) * 4 + B +
                  (uint64_t)tc->ops->shape->num_acts(&tc->model, B) * 4;
    if (tc->ops->flags & MODEL_SERVER) /* a model server per thread instead of a workspace */
        ws = torch_server_bytes(&tc->model, tc->batch);
    uint64_t block = (uint64_t)tc->num_params * 4 * (tc->optim.momentum > 0 ? 2 : 1);
    return (threads - 1) * ws + threads * block;
}
