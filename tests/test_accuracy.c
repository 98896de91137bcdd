/* Accuracy targets on the Fashion-MNIST test set (10000 examples), from the scenarios in
 * scenarios/bench/: softmax regression >= 0.83, MLP (one hidden layer of 256) >= 0.87,
 * CNN >= 0.89 (published baselines for this data set are about 0.84, 0.88 and 0.91); and
 * every protocol >= 0.80 with softmax on the 16-worker cluster of scenarios/compare/. Each
 * run is deterministic, so the margin is against changes in the code, not noise. Minutes of
 * work: built only with -Dslow_tests=true (the default; the sanitizer build turns it off). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>
#include <gsl/gsl_errno.h>

#include "harness.h"
#include "runtime/run.h"
#include "scenario/scenario.h"

static const struct {
    const char *file;
    double target;
} cases[] = {
    { "scenarios/bench/fmnist-softmax.json", 0.83 },
    { "scenarios/bench/fmnist-mlp.json", 0.87 },
    { "scenarios/bench/fmnist-cnn.json", 0.89 },
    /* Every protocol on the 16-worker comparison cluster, softmax regression. */
    { "scenarios/compare/even-allreduce.json", 0.80 },
    { "scenarios/compare/even-localsgd.json", 0.80 },
    { "scenarios/compare/even-dpsgd.json", 0.80 },
    { "scenarios/compare/even-ps-bsp.json", 0.80 },
    { "scenarios/compare/even-ps-asp.json", 0.80 },
    { "scenarios/compare/even-adpsgd.json", 0.80 },
};

static double final_accuracy(const char *dir)
{
    return harness_summary_number(dir, "final_accuracy");
}

START_TEST(fashion_mnist_models_reach_their_target_accuracy)
{
    sim_scenario *sc = harness_load_file(cases[_i].file, NULL, 0);
    char *dir = harness_tmpdir("accuracy");
    harness_run(sc, dir, NULL, NULL);
    double acc = final_accuracy(dir);
    printf("%s: final test accuracy %.4f (target %.2f)\n", cases[_i].file, acc, cases[_i].target);
    ck_assert_msg(acc >= cases[_i].target, "%s: accuracy %.4f below %.2f", cases[_i].file, acc,
                  cases[_i].target);
    harness_cleanup(dir);
    sim_scenario_destroy(sc);
}
END_TEST

/* 1024 workers training the MLP (784-256-10) with AD-PSGD and momentum: parameters,
 * gradient, momentum, the protocol's pending sums and message snapshots, about five copies
 * of the 0.8 MB model per worker, must fit in 8 GiB. summary.json reports the peak RSS of
 * the process that ran it (Check's forked child here). */
START_TEST(a_1024_worker_adpsgd_mlp_run_fits_in_8_gib)
{
    sim_scenario *sc = harness_load_file("scenarios/bench/adpsgd-1024.json", NULL, 0);
    char *dir = harness_tmpdir("memory");
    sim_run_summary sum = harness_run(sc, dir, NULL, NULL);
    printf("scenarios/bench/adpsgd-1024.json: peak RSS %.2f GiB\n",
           (double)sum.peak_rss_bytes / 1073741824.0);
    ck_assert_uint_gt(sum.peak_rss_bytes, (uint64_t)1 << 30); /* it did allocate the tensors */
    ck_assert_uint_lt(sum.peak_rss_bytes, (uint64_t)8 << 30);
    harness_cleanup(dir);
    sim_scenario_destroy(sc);
}
END_TEST

Suite *test_suite(void)
{
    Suite *s = suite_create("accuracy");
    TCase *tc = tcase_create("fashion-mnist");
    tcase_add_loop_test(tc, fashion_mnist_models_reach_their_target_accuracy, 0,
                        (int)(sizeof(cases) / sizeof(cases[0])));
    tcase_set_timeout(tc, 1200);
    suite_add_tcase(s, tc);
    TCase *mem = tcase_create("memory");
    tcase_add_test(mem, a_1024_worker_adpsgd_mlp_run_fits_in_8_gib);
    tcase_set_timeout(mem, 1200);
    suite_add_tcase(s, mem);
    return s;
}
