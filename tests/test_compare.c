/* Behaviour across protocols on the comparison cluster of scenarios/compare/ (16 workers,
 * one of them 4x slower in the "slow" set):
 * - synchronous protocols (allreduce, localsgd, ps-bsp, dpsgd): throughput falls by about
 *   k = 4 (less than k by the share of communication in a round);
 * - asynchronous ones (adpsgd, ps-asp): only the slow worker's share of the work is lost,
 *   (1 - 1/k) / N of the total.
 * Throughput depends only on simulated time, so these runs use the timing-only model with
 * the same message size as the softmax model (7850 floats): fast enough for every build.
 * The real-model versions (accuracy >= 0.80 for every protocol) are in test_accuracy. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>
#include <gsl/gsl_errno.h>

#include "harness.h"
#include "runtime/run.h"
#include "scenario/scenario.h"

static const struct {
    const char *name;
    bool synchronous;
} protocols[] = {
    { "allreduce", true }, { "localsgd", true }, { "dpsgd", true },
    { "ps-bsp", true },    { "ps-asp", false },  { "adpsgd", false },
};

static double throughput(const char *cond, const char *protocol)
{
    char file[256];
    snprintf(file, sizeof(file), "scenarios/compare/%s-%s.json", cond, protocol);
    const char *sets[] = {
        "workload={\"model\": {\"name\": \"none\"}, \"message_bytes\": 31400, \"batch\": 32}",
        "stop={\"time_s\": 30}",
    };
    sim_scenario *sc = harness_load_file(file, sets, 2);
    sim_run_summary sum = harness_run(sc, NULL, NULL, NULL);
    ck_assert_str_eq(sum.stop_reason, "time");
    sim_scenario_destroy(sc);
    return (double)sum.samples / ((double)sum.sim_ns / 1e9);
}

START_TEST(a_slow_worker_costs_each_protocol_what_its_design_predicts)
{
    const double k = 4.0, n = 16.0;
    double even = throughput("even", protocols[_i].name);
    double slow = throughput("slow", protocols[_i].name);
    double ratio = even / slow;
    printf("%s: %.1f samples/s, with one worker %gx slower %.1f (ratio %.3f)\n", protocols[_i].name,
           even, k, slow, ratio);
    if (protocols[_i].synchronous) {
        /* Rounds take k times longer in compute and as long in communication: the ratio
         * lies between about 0.8 k (a fifth of a round communicating) and k. */
        ck_assert_msg(ratio > 0.8 * k && ratio <= k * 1.02, "%s: ratio %.3f", protocols[_i].name,
                      ratio);
    } else {
        /* Only the slow worker's lost work: 1 - (1 - 1/k) / n of the throughput remains,
         * 0.953 here; 3% allows for its waits on others. */
        double keep = 1.0 - (1.0 - 1.0 / k) / n;
        ck_assert_msg(slow >= even * keep * 0.97 && slow <= even * 1.001, "%s: kept %.3f",
                      protocols[_i].name, slow / even);
    }
}
END_TEST

Suite *test_suite(void)
{
    Suite *s = suite_create("compare");
    TCase *tc = tcase_create("straggler");
    tcase_add_loop_test(tc, a_slow_worker_costs_each_protocol_what_its_design_predicts, 0,
                        (int)(sizeof(protocols) / sizeof(protocols[0])));
    tcase_set_timeout(tc, 300);
    suite_add_tcase(s, tc);
    return s;
}
