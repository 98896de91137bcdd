/* Real training through the runner: all-reduce keeps replicas bitwise identical, one worker
 * is plain SGD, the loss falls, numerical failure is caught, stop conditions hold, runs are
 * deterministic. Uses a small synthetic data set so that the suite stays fast. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <check.h>
#include <gsl/gsl_errno.h>

#include "harness.h"
#include "models/train.h"
#include "runtime/run.h"
#include "scenario/scenario.h"
#include "sim/rng.h"
#include "sim/tensor.h"

static const char base_json[] = "tests/scenarios/train/base.json";

/* The base scenario with `sets` applied. */
static sim_scenario *load(const char *const *sets, size_t n)
{
    return harness_load_file(base_json, sets, n);
}

/* Runs `sc` into a fresh directory, which it returns; the summary goes to `sum` if not NULL. */
static char *run_into(sim_scenario *sc, sim_run_summary *sum)
{
    char *dir = harness_tmpdir("train");
    sim_run_summary s = harness_run(sc, dir, NULL, NULL);
    if (sum != NULL)
        *sum = s;
    return dir;
}

/* The params_fnv column (the last) of each worker row of workers.csv. */
static size_t checksums(const char *workers, char out[][17], size_t max)
{
    size_t n = 0;
    for (const char *line = strchr(workers, '\n'); line != NULL && line[1] != '\0' && n < max;
         line = strchr(line + 1, '\n')) {
        const char *end = strchr(line + 1, '\n');
        const char *comma = end;
        while (comma > line && *comma != ',')
            comma--;
        snprintf(out[n++], 17, "%.*s", (int)(end - comma - 1), comma + 1);
    }
    return n;
}

START_TEST(allreduce_replicas_are_bitwise_identical_after_every_round)
{
    /* Stop after 1, 2, 3, 7 and 20 rounds of 4 workers: at every round boundary the four
     * replicas hold the same bits (and differ from one boundary to the next). */
    const int rounds[] = { 1, 2, 3, 7, 20 };
    char prev[17] = "";
    for (size_t r = 0; r < 5; r++) {
        char set[64];
        snprintf(set, sizeof(set), "stop={\"iterations\": %d}", 4 * rounds[r]);
        const char *sets[] = { set };
        sim_scenario *sc = load(sets, 1);
        char *dir = run_into(sc, NULL);
        char *w = harness_slurp(dir, "workers.csv");
        char sums[4][17];
        ck_assert_uint_eq(checksums(w, sums, 4), 4);
        for (size_t i = 1; i < 4; i++)
            ck_assert_str_eq(sums[i], sums[0]);
        ck_assert_uint_eq(strlen(sums[0]), 16);
        ck_assert_str_ne(sums[0], prev);
        memcpy(prev, sums[0], sizeof(prev));
        free(w);
        sim_scenario_destroy(sc);
        harness_cleanup(dir);
    }
}
END_TEST

/* Two training states from the same streams: `keyed` steps its four workers with one keyed
 * step each, `plain` with train_apply_with; the bits must agree, and the replicas must share
 * one block before and after the round. */
static train *make_train(const sim_scenario *sc, gsl_rng **data, gsl_rng **init)
{
    sim_err err;
    sim_err_clear(&err);
    train_config tc;
    ck_assert_int_eq(train_config_read((sim_scenario *)sc, &tc, &err), 0);
    *data = sim_rng_create(sc->stream_seeds[SIM_STREAM_DATA]);
    *init = sim_rng_create(sc->stream_seeds[SIM_STREAM_INIT]);
    train *t = train_create(&tc, *data, *init, &err);
    ck_assert_msg(t != NULL, "%s", err.msg);
    return t;
}

/* The next tests' pair of training states of one scenario of n workers (make_train), and a
 * gradient to apply, worker gw's drawn with a stream seeded `seed`, kept in a buffer of the
 * test's own. */
typedef struct twins {
    sim_scenario *sc;
    gsl_rng *d1, *i1, *d2, *i2;
    train *keyed, *plain;
    size_t P;
    float *g; /* (P) */
} twins;

static twins twins_make(uint32_t n, uint32_t gw, unsigned long seed)
{
    twins t;
    char set[32];
    snprintf(set, sizeof(set), "workers=%u", n);
    const char *sets[] = { set };
    t.sc = load(sets, 1);
    t.keyed = make_train(t.sc, &t.d1, &t.i1);
    t.plain = make_train(t.sc, &t.d2, &t.i2);
    t.P = train_num_params(t.keyed);
    gsl_rng *r = sim_rng_create(seed);
    sim_err err;
    sim_err_clear(&err);
    double loss;
    ck_assert_int_eq(train_gradient(t.keyed, gw, r, &loss, &err), 0);
    t.g = sim_tensor_alloc(t.P);
    sim_tensor_copy(t.g, train_grad(t.keyed, gw), t.P);
    gsl_rng_free(r);
    return t;
}

/* Fails unless workers 0..n-1 have the same parameter bits in both states. */
static void twins_expect_same_bits(const twins *t, uint32_t n)
{
    for (uint32_t w = 0; w < n; w++)
        ck_assert_msg(
            memcmp(train_params(t->keyed, w), train_params(t->plain, w), t->P * sizeof(float)) == 0,
            "worker %u's parameters differ", w);
}

static void twins_free(twins *t)
{
    sim_tensor_free(t->g);
    train_destroy(t->keyed);
    train_destroy(t->plain);
    gsl_rng_free(t->d1), gsl_rng_free(t->i1), gsl_rng_free(t->d2), gsl_rng_free(t->i2);
    sim_scenario_destroy(t->sc);
}

START_TEST(equal_replicas_share_one_block_and_a_keyed_step_is_computed_once)
{
    /* The gradient applied: worker 1's. */
    twins t = twins_make(4, 1, 99);
    train *keyed = t.keyed, *plain = t.plain;
    const float *g = t.g;
    size_t P = t.P;
    ck_assert_uint_eq(train_blocks_in_use(keyed), 1);
    ck_assert_ptr_eq(train_params(keyed, 0), train_params(keyed, 3));
    for (uint32_t round = 0; round < 3; round++) {
        for (uint32_t w = 0; w < 4; w++) {
            train_apply_keyed(keyed, w, g, 0.05, 0.9, round);
            train_apply_with(plain, w, g, 0.05, 0.9);
            /* The first worker computes into a second block; the last leaves the first. */
            ck_assert_uint_eq(train_blocks_in_use(keyed), w < 3 ? 2 : 1);
        }
        twins_expect_same_bits(&t, 4);
    }
    /* A worker about to write gets a copy of its own; the bits stay. */
    float *x2 = train_params_write(keyed, 2);
    ck_assert_uint_eq(train_blocks_in_use(keyed), 2);
    ck_assert_ptr_ne(x2, train_params(keyed, 0));
    ck_assert_int_eq(memcmp(x2, train_params(plain, 2), P * sizeof(float)), 0);
    /* Worker 2 no longer shares: the same key now steps it on its own block, and a key
     * repeated with another rate is a different step. */
    for (uint32_t w = 0; w < 4; w++) {
        train_apply_keyed(keyed, w, g, w == 3 ? 0.01 : 0.05, 0.9, 7);
        train_apply_with(plain, w, g, w == 3 ? 0.01 : 0.05, 0.9);
    }
    twins_expect_same_bits(&t, 4);
    ck_assert_uint_eq(train_blocks_in_use(keyed), 3);
    ck_assert_ptr_eq(train_params(keyed, 0), train_params(keyed, 1));
    twins_free(&t);
}
END_TEST

/* Workers that stop stepping (failed) keep the block the others stepped away from, and that
 * block's keyed step holds the stepping worker's new block: with every block in use, the next
 * keyed step or write must let those keyed steps go instead of looking for an unused block
 * (it aborted when failures left one live worker of allreduce). Bits as train_apply_with. */
START_TEST(workers_left_behind_by_failures_do_not_exhaust_the_blocks)
{
    for (uint32_t n = 2; n <= 4; n++) {
        twins t = twins_make(n, 0, 5);
        train *keyed = t.keyed, *plain = t.plain;
        const float *g = t.g;
        /* Round r: workers r .. n-1 have failed (worker 0 never does), the rest step. */
        for (uint32_t round = 0; round < 3 * n; round++) {
            uint32_t live = n - (round < n ? round : n - 1);
            for (uint32_t w = 0; w < live; w++) {
                train_apply_keyed(keyed, w, g, 0.05, 0.9, round);
                train_apply_with(plain, w, g, 0.05, 0.9);
            }
            if (round % 2 == 1) { /* a write by the survivor (e.g. a snapshot restore) */
                train_params_write(keyed, 0)[0] += 1.0f;
                train_params_write(plain, 0)[0] += 1.0f;
            }
            /* The failed workers' blocks, at most one block each that their keyed steps
             * lead to, and the survivors' (no chain of a block per round). */
            ck_assert_uint_le(train_blocks_in_use(keyed), 2 * (n - live) + 1);
            twins_expect_same_bits(&t, n);
        }
        twins_free(&t);
    }
}
END_TEST

/* One of six workers failed from the start: the five survivors step together for 20 rounds.
 * The failed worker's block leads by its keyed step to the block of the first round; a block
 * the survivors leave forgets its own keyed step, so the blocks in use stay three instead of
 * growing by one a round until every block is taken. */
START_TEST(a_failed_worker_holds_no_chain_of_blocks)
{
    twins t = twins_make(6, 0, 6);
    for (uint32_t round = 0; round < 20; round++) {
        for (uint32_t w = 0; w < 5; w++) {
            train_apply_keyed(t.keyed, w, t.g, 0.05, 0.9, round);
            train_apply_with(t.plain, w, t.g, 0.05, 0.9);
        }
        ck_assert_uint_le(train_blocks_in_use(t.keyed), 3);
    }
    twins_expect_same_bits(&t, 6);
    twins_free(&t);
}
END_TEST

START_TEST(one_worker_allreduce_is_plain_sgd)
{
    /* Replays 37 SGD steps by hand with the run's own streams (data, initialization, the
     * worker's minibatch order; no jitter, so compute times draw nothing) and compares the
     * final parameters' bits with the run's. */
    const char *sets[] = { "workers=1", "compute.jitter_sigma=0", "stop={\"iterations\": 37}" };
    sim_scenario *sc = load(sets, 3);
    char *dir = run_into(sc, NULL);
    char *w = harness_slurp(dir, "workers.csv");
    char sums[1][17];
    ck_assert_uint_eq(checksums(w, sums, 1), 1);

    gsl_rng *data, *init, *mine = sim_rng_create(sc->stream_seeds[SIM_STREAM_WORKER]);
    train *t = make_train(sc, &data, &init);
    sim_err err;
    sim_err_clear(&err);
    for (int k = 0; k < 37; k++) {
        double loss;
        ck_assert_int_eq(train_gradient(t, 0, mine, &loss, &err), 0);
        double epoch = (double)(k * 16) / (double)train_train_size(t);
        train_apply(t, 0, train_grad(t, 0), epoch);
    }
    char want[17];
    snprintf(want, sizeof(want), "%016" PRIx64,
             sim_tensor_checksum(train_params(t, 0), train_num_params(t)));
    ck_assert_str_eq(sums[0], want);
    train_destroy(t);
    gsl_rng_free(data);
    gsl_rng_free(init);
    gsl_rng_free(mine);
    free(w);
    sim_scenario_destroy(sc);
    harness_cleanup(dir);
}
END_TEST

START_TEST(training_lowers_the_loss_and_raises_accuracy)
{
    sim_scenario *sc = load(NULL, 0);
    char *dir = run_into(sc, NULL);
    harness_csv m = harness_csv_read(dir, "metrics.csv");
    ck_assert_uint_ge(m.nrows, 2);
    double first_loss = harness_csv_num(&m, 0, "test_loss");
    double first_acc = harness_csv_num(&m, 0, "test_accuracy");
    double last_loss = harness_csv_num(&m, m.nrows - 1, "test_loss");
    double last_acc = harness_csv_num(&m, m.nrows - 1, "test_accuracy");
    ck_assert_double_lt(last_loss, 0.5 * first_loss);
    ck_assert_double_gt(last_acc, 0.8); /* 4 well separated classes; chance is 0.25 */
    ck_assert_double_lt(first_acc, 0.5);
    harness_csv_free(&m);
    sim_scenario_destroy(sc);
    harness_cleanup(dir);
}
END_TEST

START_TEST(a_diverging_run_fails_naming_worker_and_iteration)
{
    const char *sets[] = { "workload.lr=900", "workload.momentum=0.99" };
    sim_scenario *sc = load(sets, 2);
    char *dir = harness_tmpdir("train");
    sim_run_options opt = { .out_dir = dir };
    sim_err err;
    sim_err_clear(&err);
    ck_assert_int_eq(sim_run(sc, proto_find(sc->protocol), &opt, NULL, &err), SIM_ENUMERIC);
    ck_assert_msg(strstr(err.msg, "worker ") != NULL && strstr(err.msg, "in iteration ") != NULL,
                  "%s", err.msg);
    /* Nothing half-written: no metrics.csv, no temporary left. */
    char path[512];
    snprintf(path, sizeof(path), "%s/metrics.csv", dir);
    ck_assert_int_ne(access(path, F_OK), 0);
    snprintf(path, sizeof(path), "%s/metrics.csv.tmp", dir);
    ck_assert_int_ne(access(path, F_OK), 0);
    harness_cleanup(dir);
    sim_scenario_destroy(sc);
}
END_TEST

START_TEST(a_loss_a_thousand_times_the_first_stops_training_as_diverged)
{
    /* Plain SGD on one worker at lr 1000 with momentum 0.99: the losses stay finite but
     * explode, and train_gradient refuses the first one above 1000 x the worker's first. */
    const char *sets[] = { "workers=1", "workload.model={\"name\": \"softmax\"}",
                           "workload.lr=1000", "workload.momentum=0.99" };
    sim_scenario *sc = load(sets, 4);
    gsl_rng *data, *init, *mine = sim_rng_create(sc->stream_seeds[SIM_STREAM_WORKER]);
    train *t = make_train(sc, &data, &init);
    sim_err err;
    sim_err_clear(&err);
    double first = NAN, loss = 0.0;
    int rc = SIM_OK, k = 0;
    for (; k < 10000 && rc == SIM_OK; k++) {
        rc = train_gradient(t, 0, mine, &loss, &err);
        if (k == 0)
            first = loss;
        if (rc == SIM_OK) {
            ck_assert(isfinite(loss) && loss <= 1000.0 * fmax(first, 1.0));
            train_apply(t, 0, train_grad(t, 0), 0.0);
        }
    }
    ck_assert_int_eq(rc, SIM_ENUMERIC);
    ck_assert_int_gt(k, 1);
    char want[256];
    snprintf(want, sizeof(want),
             "worker 0: the training loss %.6g exceeds %.6g (1000 times its first, %.6g): the "
             "run diverged",
             loss, 1000.0 * fmax(first, 1.0), first);
    ck_assert_str_eq(err.msg, want);
    train_destroy(t);
    gsl_rng_free(data);
    gsl_rng_free(init);
    gsl_rng_free(mine);
    sim_scenario_destroy(sc);
}
END_TEST

START_TEST(runs_stop_at_an_epoch_count_or_a_target_accuracy)
{
    const char *by_epochs[] = { "stop={\"epochs\": 0.5}" };
    sim_scenario *sc = load(by_epochs, 1);
    sim_run_summary sum;
    char *dir = run_into(sc, &sum);
    ck_assert_str_eq(sum.stop_reason, "epochs");
    /* 4 workers x 16 samples a round; 2000 samples is half an epoch of 4000, reached in the
     * 32nd all-reduce round: the run stops when that round ends for every replica (2048
     * samples), so the replicas end equal. */
    ck_assert_uint_eq(sum.samples, 2048);
    sim_scenario_destroy(sc);
    harness_cleanup(dir);

    const char *by_target[] = { "stop={\"target_accuracy\": 0.75}" };
    sc = load(by_target, 1);
    dir = run_into(sc, &sum);
    ck_assert_str_eq(sum.stop_reason, "target_accuracy");
    ck_assert_double_eq((double)sum.sim_ns / 1e9, harness_summary_number(dir, "time_to_target_s"));
    sim_scenario_destroy(sc);
    harness_cleanup(dir);
}
END_TEST

START_TEST(real_training_runs_are_deterministic)
{
    char *dirs[2];
    for (int i = 0; i < 2; i++) {
        sim_scenario *sc = load(NULL, 0);
        dirs[i] = run_into(sc, NULL);
        sim_scenario_destroy(sc);
    }
    const char *names[] = { "metrics.csv", "workers.csv", "run.json" };
    for (size_t k = 0; k < 3; k++) {
        char *a = harness_slurp(dirs[0], names[k]), *b = harness_slurp(dirs[1], names[k]);
        ck_assert_msg(strcmp(a, b) == 0, "%s differs", names[k]);
        free(a);
        free(b);
    }
    harness_cleanup(dirs[0]);
    harness_cleanup(dirs[1]);
}
END_TEST

Suite *test_suite(void)
{
    Suite *s = suite_create("train");
    TCase *exact = tcase_create("exact");
    tcase_add_test(exact, allreduce_replicas_are_bitwise_identical_after_every_round);
    tcase_add_test(exact, one_worker_allreduce_is_plain_sgd);
    tcase_add_test(exact, equal_replicas_share_one_block_and_a_keyed_step_is_computed_once);
    tcase_add_test(exact, workers_left_behind_by_failures_do_not_exhaust_the_blocks);
    tcase_add_test(exact, a_failed_worker_holds_no_chain_of_blocks);
    tcase_set_timeout(exact, 120);
    suite_add_tcase(s, exact);
    TCase *runs = tcase_create("runs");
    tcase_add_test(runs, training_lowers_the_loss_and_raises_accuracy);
    tcase_add_test(runs, a_diverging_run_fails_naming_worker_and_iteration);
    tcase_add_test(runs, a_loss_a_thousand_times_the_first_stops_training_as_diverged);
    tcase_add_test(runs, runs_stop_at_an_epoch_count_or_a_target_accuracy);
    tcase_add_test(runs, real_training_runs_are_deterministic);
    tcase_set_timeout(runs, 120);
    suite_add_tcase(s, runs);
    return s;
}
