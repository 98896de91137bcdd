/* The worker pool (see sim/pool.h): one mutex, a condition for helpers (work queued) and one
 * for joiners (a job done); the queue is an array scanned for the smallest (priority, seq),
 * as it holds at most a job per simulated worker. */
#include "sim/pool.h"

#include <assert.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <unistd.h>

struct sim_pool {
    pthread_mutex_t lock;
    pthread_cond_t work;  /* a job was queued, or the pool stops */
    pthread_cond_t done;  /* a job finished */
    sim_pool_job **queue; /* (capacity) queued jobs, unordered */
    size_t capacity, n;
    uint64_t seq;
    bool stop;
    unsigned threads, started; /* helpers started: threads - 1 once set up */
    pthread_t *helper;         /* (threads - 1) */
    struct helper_arg {
        sim_pool *p;
        unsigned index;
    } * arg; /* (threads - 1) */
};

/* The queued job to run next, removed from the queue; NULL if none. Under the lock. */
static sim_pool_job *take(sim_pool *p)
{
    if (p->n == 0)
        return NULL;
    size_t best = 0;
    for (size_t i = 1; i < p->n; i++) {
        const sim_pool_job *a = p->queue[i], *b = p->queue[best];
        if (a->priority < b->priority || (a->priority == b->priority && a->seq < b->seq))
            best = i;
    }
    sim_pool_job *job = p->queue[best];
    p->queue[best] = p->queue[--p->n];
    p->queue[best]->slot = best;
    job->state = SIM_POOL_RUNNING;
    return job;
}

/* Removes a queued job from the queue. Under the lock. */
static void unqueue(sim_pool *p, sim_pool_job *job)
{
    size_t i = job->slot;
    assert(i < p->n && p->queue[i] == job);
    p->queue[i] = p->queue[--p->n];
    p->queue[i]->slot = i;
    job->state = SIM_POOL_RUNNING;
}

static void *helper_main(void *ud)
{
    struct helper_arg *a = ud;
    sim_pool *p = a->p;
    pthread_mutex_lock(&p->lock);
    while (!p->stop) {
        sim_pool_job *job = take(p);
        if (job == NULL) {
            pthread_cond_wait(&p->work, &p->lock);
            continue;
        }
        pthread_mutex_unlock(&p->lock);
        job->fn(job->arg, a->index);
        pthread_mutex_lock(&p->lock);
        job->state = SIM_POOL_DONE;
        pthread_cond_broadcast(&p->done);
    }
    pthread_mutex_unlock(&p->lock);
    return NULL;
}

sim_pool *sim_pool_create(unsigned threads, size_t capacity, sim_err *err)
{
    if (threads < 1 || threads > SIM_POOL_MAX_THREADS) {
        sim_err_set(err, SIM_EINVAL, NULL, "a pool needs 1 to %d threads, got %u",
                    SIM_POOL_MAX_THREADS, threads);
        return NULL;
    }
    sim_pool *p = calloc(1, sizeof(*p));
    if (p == NULL) {
        sim_err_set(err, SIM_ENOMEM, NULL, "out of memory");
        return NULL;
    }
    p->threads = threads;
    p->capacity = capacity > 0 ? capacity : 1;
    p->queue = calloc(p->capacity, sizeof(*p->queue));
    p->helper = calloc(threads, sizeof(*p->helper));
    p->arg = calloc(threads, sizeof(*p->arg));
    if (p->queue == NULL || p->helper == NULL || p->arg == NULL) {
        free(p->queue);
        free(p->helper);
        free(p->arg);
        free(p);
        sim_err_set(err, SIM_ENOMEM, NULL, "out of memory");
        return NULL;
    }
    pthread_mutex_init(&p->lock, NULL);
    pthread_cond_init(&p->work, NULL);
    pthread_cond_init(&p->done, NULL);
    for (unsigned i = 0; i + 1 < threads; i++) {
        p->arg[i].p = p;
        p->arg[i].index = i + 1;
        if (pthread_create(&p->helper[i], NULL, helper_main, &p->arg[i]) != 0) {
            sim_pool_destroy(p);
            sim_err_set(err, SIM_EIO, NULL, "cannot start thread %u of %u", i + 2, threads);
            return NULL;
        }
        p->started++;
    }
    return p;
}

void sim_pool_destroy(sim_pool *p)
{
    if (p == NULL)
        return;
    pthread_mutex_lock(&p->lock);
    assert(p->n == 0);
    p->stop = true;
    pthread_cond_broadcast(&p->work);
    pthread_mutex_unlock(&p->lock);
    for (unsigned i = 0; i < p->started; i++)
        pthread_join(p->helper[i], NULL);
    pthread_cond_destroy(&p->done);
    pthread_cond_destroy(&p->work);
    pthread_mutex_destroy(&p->lock);
    free(p->queue);
    free(p->helper);
    free(p->arg);
    free(p);
}

unsigned sim_pool_threads(const sim_pool *p)
{
    return p->threads;
}

void sim_pool_submit(sim_pool *p, sim_pool_job *job)
{
    assert(!job->submitted);
    job->submitted = 1;
    if (p->threads == 1) {
        job->state = SIM_POOL_DONE;
        job->fn(job->arg, 0);
        return;
    }
    pthread_mutex_lock(&p->lock);
    assert(p->n < p->capacity);
    job->seq = p->seq++;
    job->state = SIM_POOL_QUEUED;
    job->slot = p->n;
    p->queue[p->n++] = job;
    pthread_cond_signal(&p->work);
    pthread_mutex_unlock(&p->lock);
}

void sim_pool_join(sim_pool *p, sim_pool_job *job)
{
    if (!job->submitted)
        return;
    job->submitted = 0;
    if (p->threads == 1) {
        job->state = SIM_POOL_IDLE;
        return;
    }
    pthread_mutex_lock(&p->lock);
    if (job->state == SIM_POOL_QUEUED) {
        unqueue(p, job);
        pthread_mutex_unlock(&p->lock);
        job->fn(job->arg, 0);
        pthread_mutex_lock(&p->lock);
    } else {
        /* While a helper finishes it, the caller runs other queued jobs rather than idle: it
         * would wait for them next, and a core is free for them meanwhile. */
        while (job->state != SIM_POOL_DONE) {
            sim_pool_job *other = take(p);
            if (other == NULL) {
                pthread_cond_wait(&p->done, &p->lock);
                continue;
            }
            pthread_mutex_unlock(&p->lock);
            other->fn(other->arg, 0);
            pthread_mutex_lock(&p->lock);
            other->state = SIM_POOL_DONE;
            pthread_cond_broadcast(&p->done);
        }
    }
    job->state = SIM_POOL_IDLE;
    pthread_mutex_unlock(&p->lock);
}

int sim_pool_pending(const sim_pool_job *job)
{
    return job->submitted;
}

unsigned sim_pool_cores(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    if (n < 1)
        return 1;
    return n > SIM_POOL_MAX_THREADS ? SIM_POOL_MAX_THREADS : (unsigned)n;
}
