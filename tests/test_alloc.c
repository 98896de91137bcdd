/* Steady-state allocation: a training step (minibatch, forward, backward writing the gradients,
 * optimizer) and the tensor kernels call no allocator, as STYLE.md section 1 requires.
 *
 * The executable defines the allocator itself: malloc, calloc, realloc, reallocarray, free,
 * aligned_alloc, posix_memalign, memalign, valloc and pvalloc forward to glibc's exported
 * __libc_* entry points, and count their calls while a flag is set. The dynamic linker
 * binds every library's calls (OpenBLAS, GSL, glibc's own) to the executable's definitions,
 * so an allocation anywhere in the process is seen; a first test checks exactly that, so
 * that a broken interposition cannot make the others pass for nothing. The flag is set only
 * around the measured calls, never around Check's own bookkeeping, and a warm-up step runs
 * before it (OpenBLAS sets up its buffers on first use).
 *
 * AddressSanitizer replaces the allocator with its own, so under it the counting allocator
 * is left out and every test passes after printing that it was skipped. Check's fork mode
 * is fine: the counting happens in the child that runs the test (CK_FORK=no also works). */
#include <errno.h>
#include <math.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <check.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_rng.h>

#include "models/data.h"
#include "models/model.h"
#include "models/optim.h"
#include "models/step.h"
#include "models/train.h"
#include "runtime/events.h"
#include "scenario/scenario.h"
#include "sim/engine.h"
#include "sim/tensor.h"
#include "suite.h"

#if defined(__SANITIZE_ADDRESS__)
#define ALLOC_UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define ALLOC_UNDER_ASAN 1
#endif
#endif
#ifndef ALLOC_UNDER_ASAN
#define ALLOC_UNDER_ASAN 0
#endif

/* An OpenBLAS extension (its cblas.h clashes with GSL's headers): runs are single-threaded. */
void openblas_set_num_threads(int num_threads);

enum {
    BATCH = 32,     /* samples per step */
    EXAMPLES = 200, /* synthetic examples: 20 steps cross three epoch boundaries */
    STEPS = 20,     /* measured steps per model */
};

/* ---- The counting allocator ---- */

static atomic_bool counting;
static atomic_bool failing; /* while set, every allocation fails (out of memory) */
static atomic_ulong n_allocs, n_frees;

static void count_begin(void)
{
    atomic_store(&n_allocs, 0);
    atomic_store(&n_frees, 0);
    atomic_store(&counting, true);
}

static void count_end(unsigned long *allocs, unsigned long *frees)
{
    atomic_store(&counting, false);
    *allocs = atomic_load(&n_allocs);
    *frees = atomic_load(&n_frees);
}

#if !ALLOC_UNDER_ASAN

extern void *__libc_malloc(size_t size);
extern void *__libc_calloc(size_t n, size_t size);
extern void *__libc_realloc(void *p, size_t size);
extern void __libc_free(void *p);
extern void *__libc_memalign(size_t alignment, size_t size);
extern void *__libc_valloc(size_t size);
extern void *__libc_pvalloc(size_t size);

/* glibc extensions that strict C11 with POSIX 2008 does not declare. */
void *reallocarray(void *p, size_t n, size_t size);
void *memalign(size_t alignment, size_t size);
void *valloc(size_t size);
void *pvalloc(size_t size);

static void note(atomic_ulong *counter)
{
    if (atomic_load_explicit(&counting, memory_order_relaxed))
        atomic_fetch_add_explicit(counter, 1, memory_order_relaxed);
}

/* True when the allocation being made is to fail. */
static bool refuse(void)
{
    if (!atomic_load_explicit(&failing, memory_order_relaxed))
        return false;
    errno = ENOMEM;
    return true;
}

void *malloc(size_t size)
{
    note(&n_allocs);
    if (refuse())
        return NULL;
    return __libc_malloc(size);
}

void *calloc(size_t n, size_t size)
{
    note(&n_allocs);
    if (refuse())
        return NULL;
    return __libc_calloc(n, size);
}

void *realloc(void *p, size_t size)
{
    note(&n_allocs);
    if (refuse())
        return NULL;
    return __libc_realloc(p, size);
}

void *reallocarray(void *p, size_t n, size_t size)
{
    note(&n_allocs);
    if (size != 0 && n > SIZE_MAX / size) {
        errno = ENOMEM;
        return NULL;
    }
    return __libc_realloc(p, n * size);
}

void free(void *p)
{
    if (p != NULL)
        note(&n_frees);
    __libc_free(p);
}

void *aligned_alloc(size_t alignment, size_t size)
{
    note(&n_allocs);
    return __libc_memalign(alignment, size);
}

void *memalign(size_t alignment, size_t size)
{
    note(&n_allocs);
    return __libc_memalign(alignment, size);
}

void *valloc(size_t size)
{
    note(&n_allocs);
    return __libc_valloc(size);
}

void *pvalloc(size_t size)
{
    note(&n_allocs);
    return __libc_pvalloc(size);
}

int posix_memalign(void **out, size_t alignment, size_t size)
{
    note(&n_allocs);
    // POSIX: a power of two multiple of sizeof(void *); *out is left alone on failure.
    if (alignment == 0 || alignment % sizeof(void *) != 0 || (alignment & (alignment - 1)) != 0)
        return EINVAL;
    void *p = __libc_memalign(alignment, size);
    if (p == NULL)
        return ENOMEM;
    *out = p;
    return 0;
}

#endif

/* True (after printing why) when the counting allocator is not installed. */
static bool skipped(const char *test)
{
    if (!ALLOC_UNDER_ASAN)
        return false;
    fprintf(stderr,
            "test_alloc: %s: SKIPPED under AddressSanitizer, which replaces malloc; "
            "the plain build runs it\n",
            test);
    return true;
}

/* ---- The counter sees what it should ---- */

START_TEST(the_counter_sees_every_allocator_and_library_calls)
{
    if (skipped("the_counter_sees_every_allocator_and_library_calls"))
        return;
    // Volatile pointers keep gcc from deleting a malloc whose result is only freed.
    void *volatile p[6] = { NULL };
    unsigned long allocs, frees;
    count_begin();
    p[0] = malloc(24);
    p[1] = calloc(3, 8);
    p[2] = realloc(NULL, 40);
    p[3] = aligned_alloc(64, 128);
    void *q = NULL;
    int rc = posix_memalign(&q, 64, 96);
    p[4] = q;
    p[5] = realloc(p[2], 400);
    p[2] = NULL;
    for (size_t i = 0; i < 6; i++)
        free(p[i]);
    count_end(&allocs, &frees);
    ck_assert_int_eq(rc, 0);
    ck_assert_uint_eq(allocs, 6);
    ck_assert_uint_eq(frees, 5); /* realloc moved or kept p[2]; free(NULL) is not counted */

    // Calls made inside a shared library are seen too (gsl_rng_alloc mallocs its state).
    count_begin();
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_free(r);
    count_end(&allocs, &frees);
    ck_assert_ptr_nonnull(r);
    ck_assert_uint_ge(allocs, 1);
    ck_assert_uint_eq(frees, allocs);
}
END_TEST

/* ---- Training steps ---- */

/* One worker's training loop with every buffer allocated up front: the step's (models/step.h)
 * and the minibatch sampler's. */
typedef struct trainer {
    model_step step; /* on minibatches of BATCH */
    size_t ids[BATCH];
    size_t *idx; /* (EXAMPLES) the worker's examples */
    data_set ds;
    data_sampler *sampler;
    gsl_rng *r;
} trainer;

static void trainer_init(trainer *t, const model_ops *ops)
{
    *t = (trainer){ 0 };
    model_config cfg;
    model_config_default(&cfg);
    ck_assert_int_eq(model_step_init(&t->step, ops, &cfg, BATCH, NULL), 0);
    t->step.opt.lr = 0.0125;
    t->step.opt.momentum = 0.9;
    t->step.opt.weight_decay = 5e-4;
    t->idx = malloc(EXAMPLES * sizeof(*t->idx));
    t->r = gsl_rng_alloc(gsl_rng_mt19937);
    ck_assert(t->idx && t->r);
    gsl_rng_set(t->r, 2385);
    data_synthetic_config dc = { .n = EXAMPLES,
                                 .dim = model_input_size(&cfg),
                                 .classes = (uint32_t)cfg.classes,
                                 .separation = 2.5 };
    ck_assert_int_eq(data_synthetic(&dc, t->r, &t->ds, NULL), 0);
    for (size_t i = 0; i < EXAMPLES; i++)
        t->idx[i] = i;
    t->sampler = data_sampler_create(&t->ds, t->idx, EXAMPLES, BATCH, NULL);
    ck_assert_ptr_nonnull(t->sampler);
    ops->shape->init_params(t->step.params, &cfg, t->r);
}

static void trainer_fini(trainer *t)
{
    data_sampler_destroy(t->sampler);
    data_fini(&t->ds);
    gsl_rng_free(t->r);
    free(t->idx);
    model_step_fini(&t->step);
}

static double trainer_step(trainer *t)
{
    data_sampler_next(t->sampler, t->r, t->step.x, t->step.y, t->ids);
    return model_step_run(&t->step);
}

/* Looped over model_at(_i): softmax, svm, mlp, cnn with the default config. */
START_TEST(a_training_step_allocates_nothing)
{
    if (skipped("a_training_step_allocates_nothing"))
        return;
    const model_ops *ops = model_at((size_t)_i);
    ck_assert_ptr_nonnull(ops);
    trainer t;
    trainer_init(&t, ops);
    double loss = trainer_step(&t); /* warm-up */
    unsigned long allocs, frees;
    count_begin();
    for (int s = 0; s < STEPS; s++)
        loss += trainer_step(&t);
    count_end(&allocs, &frees);
    uint64_t epochs = data_sampler_epoch(t.sampler);
    trainer_fini(&t);
    ck_assert_msg(allocs == 0 && frees == 0, "%s: %lu allocations and %lu frees in %d steps",
                  ops->name, allocs, frees, STEPS);
    ck_assert_msg(isfinite(loss), "%s: the loss is not finite", ops->name);
    // (STEPS + 1) * BATCH = 672 samples over 200 examples: four epochs started.
    ck_assert_uint_eq(epochs, 4);
}
END_TEST

/* The training module's own step, as a run calls it inside sim_ctx_compute: a minibatch
 * gradient and an optimizer step, for several workers, with momentum. */
START_TEST(a_workers_gradient_and_update_allocate_nothing)
{
    if (skipped("a_workers_gradient_and_update_allocate_nothing"))
        return;
    static const char json[] =
        "tests/scenarios/alloc/a_workers_gradient_and_update_allocate_nothing.json";
    sim_err err;
    sim_scenario *sc = sim_scenario_load(json, NULL, 0, &err);
    ck_assert_ptr_nonnull(sc);
    train_config tc;
    ck_assert_int_eq(train_config_read(sc, &tc, &err), 0);
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    train *t = train_create(&tc, r, r, &err);
    ck_assert_ptr_nonnull(t);
    double loss;
    for (uint32_t w = 0; w < 3; w++) /* warm-up */
        train_gradient(t, w, r, &loss, &err);
    unsigned long allocs, frees;
    int failed = 0; /* checked after counting: Check's assertions allocate */
    count_begin();
    for (int s = 0; s < STEPS; s++)
        for (uint32_t w = 0; w < 3; w++) {
            failed |= train_gradient(t, w, r, &loss, &err);
            train_apply(t, w, train_grad(t, w), 0.05 * s);
        }
    count_end(&allocs, &frees);
    ck_assert_int_eq(failed, 0);
    train_destroy(t);
    gsl_rng_free(r);
    sim_scenario_destroy(sc);
    ck_assert_msg(allocs == 0 && frees == 0, "%lu allocations and %lu frees", allocs, frees);
}
END_TEST

/* ---- Tensor kernels and the pool ---- */

START_TEST(tensor_kernels_allocate_nothing)
{
    if (skipped("tensor_kernels_allocate_nothing"))
        return;
    // Two blocks of sim_tensor_mean plus a tail that is not a multiple of 16.
    enum {
        N = 20011,
        K = 16
    };
    float *out = sim_tensor_alloc(N);
    float *xs[K];
    float w[K];
    for (size_t v = 0; v < K; v++) {
        xs[v] = sim_tensor_alloc(N);
        ck_assert_ptr_nonnull(xs[v]);
        for (size_t i = 0; i < N; i++)
            xs[v][i] = 0.385f * (float)v - 1e-4f * (float)i;
        w[v] = 1.0f / (float)(v + 2);
    }
    ck_assert_ptr_nonnull(out);
    const float *const *in = (const float *const *)xs;
    double sink = 0.0;
    unsigned long allocs, frees;
    count_begin();
    for (size_t k = 0; k <= K; k++) {
        sim_tensor_mean(out, in, k, N);
        sim_tensor_weighted_mean(out, in, w, k, N);
    }
    sim_tensor_average(out, xs[0], xs[1], N);
    sim_tensor_average_into(xs[2], xs[3], N);
    sim_tensor_triad(out, xs[0], xs[1], 2.385f, N);
    sim_tensor_axpy(out, -0.5f, xs[4], N);
    sim_tensor_scale(out, 1.5f, N);
    sim_tensor_copy(xs[5], out, N);
    sink += sim_tensor_dot(out, xs[6], N) + sim_tensor_norm2(out, N) +
            sim_tensor_sqdist(out, xs[7], N) + sim_tensor_sum(out, N);
    sink += (double)(sim_tensor_checksum(out, N) & 1) + (double)sim_tensor_all_finite(out, N);
    sim_tensor_zero(out, N);
    count_end(&allocs, &frees);
    for (size_t v = 0; v < K; v++)
        sim_tensor_free(xs[v]);
    sim_tensor_free(out);
    ck_assert_msg(allocs == 0 && frees == 0, "%lu allocations and %lu frees in the kernels", allocs,
                  frees);
    ck_assert(isfinite(sink));
}
END_TEST

START_TEST(a_pool_within_its_capacity_allocates_nothing)
{
    if (skipped("a_pool_within_its_capacity_allocates_nothing"))
        return;
    sim_tensor_pool *pool = sim_tensor_pool_create(1000, 4, NULL);
    ck_assert_ptr_nonnull(pool);
    uint32_t h[4];
    int rc = 0;
    unsigned long allocs, frees;
    count_begin();
    for (int round = 0; round < 50; round++) {
        for (size_t i = 0; i < 4; i++) {
            rc |= sim_tensor_pool_get(pool, &h[i], NULL);
            sim_tensor_pool_data(pool, h[i])[i] = (float)round;
        }
        for (size_t i = 4; i-- > 0;)
            sim_tensor_pool_put(pool, h[i]);
    }
    count_end(&allocs, &frees);
    sim_tensor_pool_stats st;
    sim_tensor_pool_get_stats(pool, &st);
    sim_tensor_pool_destroy(pool);
    ck_assert_int_eq(rc, 0);
    ck_assert_uint_eq(st.grows, 0);
    ck_assert_msg(allocs == 0 && frees == 0, "%lu allocations and %lu frees in 200 gets", allocs,
                  frees);
}
END_TEST

/* ---- The event queue ---- */

typedef struct holder {
    const sim_time *delays;
    size_t n, i, ops;
    int rc;
} holder;

/* Each event schedules the next at a delay from the list: a queue of constant size. */
static int hold_next(void *ud, sim_engine *eng, const sim_event *ev, sim_err *err)
{
    (void)err;
    holder *h = ud;
    if (++h->i >= h->ops) {
        sim_engine_stop(eng);
        return 0;
    }
    h->rc |= sim_engine_schedule(eng, h->delays[h->i % h->n], ev, NULL);
    return 0;
}

/* The queue's buckets grow while a run warms up; after that, scheduling and taking events
 * allocates nothing (the engine's pool is sized at creation). */
START_TEST(an_engine_in_steady_state_allocates_nothing)
{
    if (skipped("an_engine_in_steady_state_allocates_nothing"))
        return;
    enum {
        PENDING = 1000,
        DRAWS = 4096
    };
    static sim_time delays[DRAWS];
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 2385);
    for (size_t i = 0; i < DRAWS; i++)
        delays[i] = (sim_time)(gsl_rng_uniform(r) * 2e6);
    gsl_rng_free(r);
    sim_engine *eng = sim_engine_create(PENDING + 16, NULL);
    ck_assert_ptr_nonnull(eng);
    sim_event ev = { .kind = SIM_EV_USER, .src = SIM_NOBODY, .dst = SIM_NOBODY };
    for (size_t i = 0; i < PENDING; i++)
        ck_assert_int_eq(sim_engine_schedule(eng, delays[i], &ev, NULL), 0);
    holder h = { delays, DRAWS, 0, 200000, 0 };
    ck_assert_int_eq(sim_engine_run(eng, SIM_TIME_NEVER - 1, hold_next, &h, NULL), 0);
    unsigned long allocs, frees;
    h.i = 0;
    count_begin();
    int rc = sim_engine_run(eng, SIM_TIME_NEVER - 1, hold_next, &h, NULL);
    count_end(&allocs, &frees);
    sim_engine_destroy(eng);
    ck_assert_int_eq(rc, 0);
    ck_assert_int_eq(h.rc, 0);
    ck_assert_msg(allocs == 0 && frees == 0, "%lu allocations and %lu frees in 200000 events",
                  allocs, frees);
}
END_TEST

static int record_tag(void *ud, sim_engine *eng, const sim_event *ev, sim_err *err)
{
    (void)eng;
    (void)err;
    uint64_t *out = ud;
    out[out[0] + 1] = ev->arg[0];
    out[0]++;
    return 0;
}

/* An engine whose pool cannot grow: scheduling fails with SIM_ENOMEM and changes nothing;
 * once memory is back the pool doubles and every event comes out in the exact order. */
START_TEST(an_engine_out_of_memory_fails_cleanly_and_loses_no_event)
{
    if (skipped("an_engine_out_of_memory_fails_cleanly_and_loses_no_event"))
        return;
    enum {
        N = 300
    };
    sim_engine *eng = sim_engine_create(16, NULL);
    ck_assert_ptr_nonnull(eng);
    /* Times over many bits reach many buckets; one time in three is 777, to test ties. */
    uint64_t expect[N];
    sim_time at[N];
    sim_engine_stats st;
    int failures = 0;
    for (size_t i = 0; i < N; i++) {
        at[i] = i % 3 == 0 ? 777 : (sim_time)((i * 7919u) % 100003u) * 1000 + 1;
        sim_event ev = { .kind = SIM_EV_USER, .src = SIM_NOBODY, .dst = SIM_NOBODY };
        ev.arg[0] = i;
        atomic_store(&failing, true);
        int rc = sim_engine_schedule(eng, at[i], &ev, NULL);
        atomic_store(&failing, false);
        if (rc == SIM_ENOMEM) {
            failures++;
            sim_engine_stats_get(eng, &st);
            ck_assert_uint_eq(st.pending, i);
            rc = sim_engine_schedule(eng, at[i], &ev, NULL);
        }
        ck_assert_int_eq(rc, 0);
    }
    ck_assert_int_gt(failures, 0);
    /* The expected order: by time, then by scheduling order. */
    for (size_t i = 0; i < N; i++)
        expect[i] = i;
    for (size_t i = 1; i < N; i++)
        for (size_t j = i; j > 0 && at[expect[j - 1]] > at[expect[j]]; j--) {
            uint64_t t = expect[j];
            expect[j] = expect[j - 1];
            expect[j - 1] = t;
        }
    uint64_t got[N + 1] = { 0 };
    ck_assert_int_eq(sim_engine_run(eng, SIM_TIME_NEVER - 1, record_tag, got, NULL), 0);
    sim_engine_destroy(eng);
    ck_assert_uint_eq(got[0], N);
    for (size_t i = 0; i < N; i++)
        ck_assert_uint_eq(got[i + 1], expect[i]);
}
END_TEST

Suite *test_suite(void)
{
    openblas_set_num_threads(1);
    Suite *s = suite_create("alloc");
    TCase *tc = tcase_create("counter");
    tcase_add_test(tc, the_counter_sees_every_allocator_and_library_calls);
    suite_add_tcase(s, tc);
    tc = tcase_create("steady_state");
    tcase_set_timeout(tc, 60); /* the cnn's 21 steps take about a second at -O0 */
    tcase_add_loop_test(tc, a_training_step_allocates_nothing, 0, 4);
    tcase_add_test(tc, a_workers_gradient_and_update_allocate_nothing);
    tcase_add_test(tc, tensor_kernels_allocate_nothing);
    tcase_add_test(tc, a_pool_within_its_capacity_allocates_nothing);
    tcase_add_test(tc, an_engine_in_steady_state_allocates_nothing);
    tcase_add_test(tc, an_engine_out_of_memory_fails_cleanly_and_loses_no_event);
    suite_add_tcase(s, tc);
    return s;
}
