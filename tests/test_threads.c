/* Gradients and evaluations on a thread pool (runtime/jobs.h, sim/pool.h): every output file
 * is the same with 1, 2 and 3 threads, for every protocol, with failures and stragglers, with
 * means large enough to be split over the threads, and for stops that depend on values; the pool
 * itself runs each job once, lowest priority first.
 */
#include <dirent.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "harness.h"
#include "protocols/registry.h"
#include "runtime/run.h"
#include "sim/pool.h"

/* Means split over the pool (sim_run_summary.split_means) by the last run_on. */
static uint64_t last_split_means;

/* Runs the JSON scenario `json` (with `sets`) on `threads` threads into a fresh directory. */
static char *run_on(const char *json, const char *const *sets, size_t nsets, unsigned threads)
{
    sim_scenario *sc = harness_load(json, "threads.json", sets, nsets);
    sim_run_summary sum;
    char *dir = harness_run_threads(sc, "threads", threads, NULL, NULL, &sum);
    last_split_means = sum.split_means;
    sim_scenario_destroy(sc);
    return dir;
}

/* Runs `json` on 1, 2 and 3 threads and compares every file; with `split`, fails unless the
 * runs on several threads computed some means in pieces (sim_ctx_mean). */
static void expect_same_runs(const char *json, const char *const *sets, size_t nsets,
                             const char *what, bool split)
{
    char *one = run_on(json, sets, nsets, 1);
    ck_assert_uint_eq(last_split_means, 0);
    for (unsigned t = 2; t <= 3; t++) {
        char *more = run_on(json, sets, nsets, t);
        ck_assert_msg(!split || last_split_means > 0, "%s: no mean split on %u threads", what, t);
        harness_expect_same_files(one, more, what);
        harness_cleanup(more);
    }
    harness_cleanup(one);
}

static void expect_same_for_every_count(const char *json, const char *const *sets, size_t nsets,
                                        const char *what)
{
    expect_same_runs(json, sets, nsets, what, false);
}

/* Every protocol at its defaults in the chaos scenario (a real softmax model, 12 workers,
 * stragglers, 8 failures), with events.csv. */
START_TEST(every_protocol_writes_the_same_files_with_any_thread_count)
{
    const char *name, *hosts;
    char *json = harness_protocol_chaos(_i, 11, &name, &hosts);
    const char *sets[] = { "output.events=true", hosts };
    expect_same_for_every_count(json, sets, 2, name);
    free(json);
}
END_TEST

/* Every protocol again with its means computed in pieces on several threads (sim_ctx_mean: the
 * evaluation's mean model, the rings' means of coll.c): an MLP 160-256-3 of 41,987 parameters
 * (6 blocks of sim_tensor_mean: 4 pieces on 2 threads, 6 on 3, the last one short), 0.3
 * simulated s, with HETSIM_MEAN_MIN_FLOATS=1 so that a mean of any size is split (the split
 * path is the same for the means of 2^20 floats and more that split by default; a model that
 * large took most of the ThreadSanitizer step's time). */
START_TEST(every_protocol_splits_its_means_alike_with_any_thread_count)
{
    const char *name, *hosts;
    char *json = harness_protocol_chaos(_i, 31, &name, &hosts);
    const char *sets[] = { "output.events=true", hosts, "stop.time_s=0.3",
                           "workload.dataset.dim=160",
                           "workload.model={\"name\": \"mlp\", \"hidden\": [256]}" };
    ck_assert_int_eq(setenv("HETSIM_MEAN_MIN_FLOATS", "1", 1), 0);
    expect_same_runs(json, sets, 5, name, true);
    unsetenv("HETSIM_MEAN_MIN_FLOATS");
    free(json);
}
END_TEST

/* A wider model whose gradients take long enough to overlap, on a protocol that writes a
 * worker's parameters while its gradient is in flight (AD-PSGD averages meanwhile: pinned
 * blocks are copied, up to one per thread, then joined), stopped by target accuracy. */
static const char mlp_json[] =
    "{\"seed\": 3, \"workers\": 8, \"compute\": {\"iteration_ms\": 5, \"jitter_sigma\": 0.4},"
    " \"stragglers\": [{\"kind\": \"random\", \"probability\": 0.2, \"slowdown\": 3},"
    " {\"kind\": \"failure\", \"workers\": [2], \"at_s\": 0.05, \"recover_s\": 0.12}],"
    " \"network\": {\"bandwidth_gbps\": 10, \"latency_us\": 50},"
    " \"workload\": {\"dataset\": {\"name\": \"synthetic\", \"samples\": 4000,"
    " \"test_samples\": 600, \"dim\": 48, \"classes\": 6}, \"model\": {\"name\": \"mlp\","
    " \"hidden\": [64, 32]}, \"batch\": 16, \"lr\": 0.05, \"momentum\": 0.9},"
    " \"protocol\": {\"name\": \"adpsgd\"}, \"stop\": {\"time_s\": 3, \"target_accuracy\": 0.85},"
    " \"eval\": {\"every_s\": 0.02, \"samples\": 600}, \"output\": {\"events\": true}}";

START_TEST(a_value_stop_ends_at_the_same_instant_with_any_thread_count)
{
    static const char *const protocols[] = { "protocol.name=adpsgd", "protocol.name=allreduce",
                                             "protocol.name=gossip", "protocol.name=localsgd" };
    const char *sets[] = { protocols[_i] };
    char *one = run_on(mlp_json, sets, 1, 1);
    char run[1024];
    snprintf(run, sizeof(run), "%s/run", one);
    char *summary = harness_slurp(run, "summary.json");
    ck_assert_msg(strstr(summary, "\"stop_reason\": \"target_accuracy\"") != NULL, "%s: %s",
                  protocols[_i], summary);
    free(summary);
    harness_cleanup(one);
    expect_same_for_every_count(mlp_json, sets, 1, protocols[_i]);
}
END_TEST

/* The memory check counts the threads: a workspace for each one beyond the first and a model
 * copy (parameters and momentum) for each one. */
START_TEST(the_memory_estimate_counts_each_thread)
{
    const char *sets[] = { "stop.time_s=0.05" };
    char *one = run_on(mlp_json, sets, 1, 1);
    char *three = run_on(mlp_json, sets, 1, 3);
    double e1 = harness_memory_estimate(one), e3 = harness_memory_estimate(three);
    /* mlp 48-64-32-6: 5414 parameters, 2 blocks a copy (momentum). */
    ck_assert_double_ge(e3 - e1, 3.0 * 5414 * 4 * 2);
    harness_cleanup(one);
    harness_cleanup(three);
}
END_TEST

/* Threads of this process now (/proc/self/task), at least 1; 0 where /proc is missing. */
static size_t process_threads(void)
{
    DIR *d = opendir("/proc/self/task");
    if (d == NULL)
        return 0;
    size_t n = 0;
    for (struct dirent *e = readdir(d); e != NULL; e = readdir(d))
        n += e->d_name[0] != '.';
    closedir(d);
    return n;
}

/* The most threads seen at an evaluation (an observer: it runs on the simulation's thread). */
static void count_threads(void *ud, struct sim_ctx *ctx)
{
    (void)ctx;
    size_t *most = ud, now = process_threads();
    if (now > *most)
        *most = now;
}

/* A timing-only run asked for 3 threads starts none (nothing would use them); a real one
 * starts its 2 helpers. Run before anything else of this case calls OpenBLAS. */
START_TEST(a_timing_only_run_starts_no_thread)
{
    size_t before = process_threads();
    if (before == 0)
        return; /* no /proc */
    for (int real = 0; real <= 1; real++) {
        char *json = harness_chaos_json(3, real == 1, "{\"name\": \"allreduce\"}");
        const char *sets[] = { "stop.time_s=0.3" };
        sim_scenario *sc = harness_load(json, "threads.json", sets, 1);
        char *dir = harness_tmpdir("threads");
        char out[1024];
        snprintf(out, sizeof(out), "%s/run", dir);
        size_t most = 0;
        sim_run_options opt = {
            .out_dir = out, .threads = 3, .observe = count_threads, .observe_ud = &most
        };
        sim_run_summary sum;
        sim_err err;
        sim_err_clear(&err);
        ck_assert_int_eq(sim_run(sc, proto_find(sc->protocol), &opt, &sum, &err), SIM_OK);
        if (real == 1) /* (OpenBLAS may start its own on its first call) */
            ck_assert_uint_ge(most, before + 2);
        else
            ck_assert_uint_eq(most, before);
        sim_scenario_destroy(sc);
        harness_cleanup(dir);
        free(json);
    }
}
END_TEST

/* ---- the pool ---- */

/* A job that counts its runs and checks its thread index (each job touches its own count
 * only: under ThreadSanitizer a shared one is a race). */
typedef struct counted {
    sim_pool_job job;
    int runs;
    unsigned threads;
    bool bad_thread;
} counted;

static void count_job(void *arg, unsigned thread)
{
    counted *c = arg;
    c->runs++;
    c->bad_thread |= thread >= c->threads;
}

START_TEST(the_pool_runs_every_job_once)
{
    sim_err err;
    sim_err_clear(&err);
    for (unsigned threads = 1; threads <= 4; threads++) {
        sim_pool *p = sim_pool_create(threads, 64, &err);
        ck_assert_ptr_nonnull(p);
        counted c[64] = { 0 };
        for (int round = 0; round < 50; round++) {
            for (size_t i = 0; i < 64; i++) {
                c[i].job.fn = count_job;
                c[i].job.arg = &c[i];
                c[i].job.priority = (int64_t)(i * 7919 % 64);
                c[i].threads = threads;
                sim_pool_submit(p, &c[i].job);
            }
            for (size_t i = 64; i-- > 0;)
                sim_pool_join(p, &c[i].job);
        }
        for (size_t i = 0; i < 64; i++) {
            ck_assert_int_eq(c[i].runs, 50);
            ck_assert(!c[i].bad_thread);
        }
        sim_pool_destroy(p);
    }
}
END_TEST

START_TEST(a_pool_of_one_thread_runs_a_job_at_its_submission)
{
    sim_err err;
    sim_err_clear(&err);
    sim_pool *p = sim_pool_create(1, 4, &err);
    counted c = { .job = { .fn = count_job, .arg = &c }, .threads = 1 };
    sim_pool_submit(p, &c.job);
    ck_assert_int_eq(c.runs, 1);
    ck_assert(sim_pool_pending(&c.job));
    sim_pool_join(p, &c.job);
    ck_assert(!sim_pool_pending(&c.job));
    sim_pool_destroy(p);
    ck_assert_ptr_null(sim_pool_create(0, 4, &err));
    ck_assert_int_eq(err.code, SIM_EINVAL);
}
END_TEST

Suite *test_suite(void)
{
    Suite *s = suite_create("threads");
    TCase *pool = tcase_create("pool");
    tcase_add_test(pool, the_pool_runs_every_job_once);
    tcase_add_test(pool, a_pool_of_one_thread_runs_a_job_at_its_submission);
    tcase_set_timeout(pool, 60);
    suite_add_tcase(s, pool);
    size_t n;
    proto_list(&n);
    TCase *same = tcase_create("same outputs");
    tcase_add_loop_test(same, every_protocol_writes_the_same_files_with_any_thread_count, 0,
                        (int)n);
    tcase_add_loop_test(same, every_protocol_splits_its_means_alike_with_any_thread_count, 0,
                        (int)n);
    tcase_add_loop_test(same, a_value_stop_ends_at_the_same_instant_with_any_thread_count, 0, 4);
    tcase_add_test(same, the_memory_estimate_counts_each_thread);
    tcase_add_test(same, a_timing_only_run_starts_no_thread);
    tcase_set_timeout(same, 300);
    suite_add_tcase(s, same);
    return s;
}
