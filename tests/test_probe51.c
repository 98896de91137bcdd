/* Issue 38, class 9 (a golden's consistency), the seventeenth probe's leftover: a scenario
 * that spells a default explicitly ("lr_schedule": {"kind": "constant"}, "nics_per_host": 1,
 * "gpus_per_host": 1, a host fabric with one GPU a host, a NIC fabric whose figures are
 * given) is one run with the scenario that leaves it out, to a golden's check and to a sweep's
 * resume (the canonical form, sim_scenario_canonical); a copy of a scenario under another file
 * name, its name only its file's, is the golden's scenario; and a path is spelt plainly by the
 * one rule of outputs (sim_file_clean_path: ".." stays). Each case failed before its fix.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "harness.h"

typedef harness_result result;

/* harness_quick_json with every default the loader writes only when given spelt out. */
static const char spelt_json[] =
    "{\"seed\": 5, \"workers\": 3, \"compute\": {\"iteration_ms\": 10, \"speeds\": [1, 1, 1]},\n"
    " \"stragglers\": [],\n"
    " \"network\": {\"overrides\": [], \"nics_per_host\": 1, \"gpus_per_host\": 1,\n"
    "             \"host_fabric\": \"nvlink2\", \"host_fabric_latency_us\": 3,\n"
    "             \"fabric\": \"ib-hdr\", \"bandwidth_gbps\": 10, \"latency_us\": 50},\n"
    " \"workload\": {\"model\": {\"name\": \"none\"}, \"message_bytes\": 4000,\n"
    "              \"lr_schedule\": {\"kind\": \"constant\"}},\n"
    " \"protocol\": {\"name\": \"allreduce\"}, \"stop\": {\"time_s\": 0.2},\n"
    " \"eval\": {\"every_s\": 0.05}}\n";

/* `check S --golden G` with --exact or the statistical test (3 seeds), into DIR/NAME. */
static result check(const char *dir, const char *s, const char *g, bool exact, const char *name,
                    const char *set)
{
    char o[700];
    snprintf(o, sizeof(o), "%s/%s", dir, name);
    const char *argv[12] = { "check", s, "--golden", g, "-o", o };
    size_t n = 6;
    if (exact)
        argv[n++] = "--exact";
    else {
        argv[n++] = "--seeds";
        argv[n++] = "3";
    }
    if (set != NULL) {
        argv[n++] = "--set";
        argv[n++] = set;
    }
    argv[n] = NULL;
    return harness_hetsim(argv);
}

/* A golden of the plain scenario checked with the copy that spells every default: "the
 * scenario differs from the golden's (...) in 7 keys: workload.lr_schedule, name,
 * network.nics_per_host, network.gpus_per_host, network.host_fabric, ...", exit 2, for
 * --exact and the statistical test alike; and the reverse. Both pass now. */
START_TEST(a_golden_takes_its_scenario_with_every_default_spelt)
{
    for (int way = 0; way < 2; way++) { /* the golden plain, then spelt */
        char *dir = harness_tmpdir("probe51");
        char s[600], g[600];
        harness_golden_in(dir, way == 0 ? harness_quick_json : spelt_json, s, g, sizeof(s));
        harness_write(dir, "s.json", way == 0 ? spelt_json : harness_quick_json);
        result res = check(dir, s, g, true, "exact", NULL);
        ck_assert_msg(res.status == 0, "way %d, --exact: exit %d\n%s%s", way, res.status, res.out,
                      res.err);
        res = check(dir, s, g, false, "stat", NULL);
        ck_assert_msg(res.status == 0, "way %d: exit %d\n%s%s", way, res.status, res.out, res.err);
        harness_cleanup(dir);
    }
}
END_TEST

/* A resolved value of its own is still another scenario: exit 2, naming the key. */
START_TEST(a_scenario_of_another_value_is_still_refused)
{
    static const char *const sets[][2] = {
        { "network.nics_per_host=2", "network.nics_per_host" },
        { "network.gpus_per_host=3", "network.gpus_per_host" },
        { "network.latency_us=51", "network.latency_us" },
        { "name=other", "1 key: name" },
    };
    char *dir = harness_tmpdir("probe51");
    char s[600], g[600];
    harness_golden_in(dir, harness_quick_json, s, g, sizeof(s));
    harness_write(dir, "spelt.json", spelt_json);
    snprintf(s, sizeof(s), "%s/spelt.json", dir);
    for (size_t i = 0; i < sizeof(sets) / sizeof(sets[0]); i++) {
        result res = check(dir, s, g, i % 2 == 0, "o", sets[i][0]);
        ck_assert_msg(res.status == 2 && strstr(res.err, "differs from the golden's") != NULL &&
                          strstr(res.err, sets[i][1]) != NULL,
                      "%s: exit %d\n%s", sets[i][0], res.status, res.err);
    }
    harness_cleanup(dir);
}
END_TEST

/* The golden's scenario copied under another file name (its name only its file's): "differs
 * from the golden's ... in 1 key: name", exit 2. It is the golden's scenario now, its runs
 * named as the golden's (--exact: every output byte as in the golden); a name given is the
 * scenario's own, still compared. */
START_TEST(a_renamed_copy_is_the_golden_scenario)
{
    char *dir = harness_tmpdir("probe51");
    char s[600], g[600], copy[700];
    harness_golden_in(dir, harness_quick_json, s, g, sizeof(s));
    harness_write(dir, "copy.json", harness_quick_json);
    snprintf(copy, sizeof(copy), "%s/copy.json", dir);
    result res = check(dir, copy, g, true, "exact", NULL);
    ck_assert_msg(res.status == 0 && strstr(res.out, "every output byte as in") != NULL,
                  "--exact: exit %d\n%s%s", res.status, res.out, res.err);
    res = check(dir, copy, g, false, "stat", NULL);
    ck_assert_msg(res.status == 0, "exit %d\n%s%s", res.status, res.out, res.err);
    char run[800];
    snprintf(run, sizeof(run), "%s/stat/seed-8", dir);
    char *summary = harness_slurp(run, "summary.json");
    ck_assert_msg(strstr(summary, "\"name\": \"s\"") != NULL, "%s", summary);
    free(summary);
    /* A golden whose name was given takes a copy without one; a copy naming itself does not. */
    harness_cleanup(dir);
    dir = harness_tmpdir("probe51");
    static const char named[] =
        "{\"name\": \"quick\", \"seed\": 5, \"workers\": 3, \"compute\": {\"iteration_ms\": 10},\n"
        " \"workload\": {\"model\": {\"name\": \"none\"}, \"message_bytes\": 4000},\n"
        " \"protocol\": {\"name\": \"allreduce\"}, \"stop\": {\"time_s\": 0.2},\n"
        " \"eval\": {\"every_s\": 0.05}}\n";
    harness_golden_in(dir, named, s, g, sizeof(s));
    harness_write(dir, "copy.json", harness_quick_json);
    snprintf(copy, sizeof(copy), "%s/copy.json", dir);
    res = check(dir, copy, g, true, "exact", NULL);
    ck_assert_msg(res.status == 0, "unnamed: exit %d\n%s%s", res.status, res.out, res.err);
    res = check(dir, copy, g, true, "exact2", "name=copy");
    ck_assert_msg(res.status == 2 && strstr(res.err, "1 key: name") != NULL, "named: exit %d\n%s",
                  res.status, res.err);
    harness_cleanup(dir);
}
END_TEST

/* A sweep run again after its base spelt its defaults out ran every point again ("4 run
 * now"): each point's run had moved. It keeps its finished points now ("0 run now"). */
START_TEST(a_resumed_sweep_keeps_its_points_after_a_default_is_spelt)
{
    char *dir = harness_tmpdir("probe51");
    char sw[600], o[600];
    harness_sweep_in(dir, harness_quick_json, harness_protocols_sweep, sw, o, sizeof(sw));
    harness_write(dir, "s.json", spelt_json);
    result res = harness_hetsim((const char *[]){ "sweep", sw, "-o", o, NULL });
    ck_assert_msg(res.status == 0, "exit %d\n%s", res.status, res.err);
    ck_assert_msg(strstr(res.out, "4 points, 0 run now") != NULL, "%s", res.out);
    harness_cleanup(dir);
}
END_TEST

/* The canonical form itself: the defaults of the sections a run need not hold. */
START_TEST(the_canonical_form_takes_a_default_spelt_for_none)
{
    static const char *const same[][2] = {
        { "{\"network\": {\"nics_per_host\": 1, \"gpus_per_host\": 1, \"host_fabric\": \"pcie4\", "
          "\"host_fabric_bandwidth_gbps\": 3, \"host_fabric_latency_us\": 2}}",
          "{\"network\": {}}" },
        { "{\"network\": {\"gpus_per_host\": 2, \"host_fabric\": \"nvlink2\", "
          "\"host_fabric_bandwidth_gbps\": 3, \"host_fabric_latency_us\": 2}}",
          "{\"network\": {\"gpus_per_host\": 2, \"host_fabric\": \"pcie3\", "
          "\"host_fabric_bandwidth_gbps\": 3, \"host_fabric_latency_us\": 2}}" },
        { "{\"network\": {\"fabric\": \"ib-hdr\", \"bandwidth_gbps\": 10, \"latency_us\": 50}}",
          "{\"network\": {\"bandwidth_gbps\": 10, \"latency_us\": 50}}" },
        { "{\"workload\": {\"model\": {\"name\": \"softmax\"}, \"lr_schedule\": {\"kind\": "
          "\"constant\", \"warmup_epochs\": 0, \"warmup_start_factor\": 0.5}}}",
          "{\"workload\": {\"model\": {\"name\": \"softmax\"}}}" },
        { "{\"workload\": {\"model\": {\"name\": \"softmax\"}, \"lr_schedule\": null}}",
          "{\"workload\": {\"model\": {\"name\": \"softmax\"}}}" },
        { "{\"workload\": {\"model\": {\"name\": \"none\"}, \"lr_schedule\": {\"kind\": \"step\", "
          "\"gamma\": 0.5, \"step_epochs\": 1, \"warmup_epochs\": 0, \"warmup_start_factor\": 0}}}",
          "{\"workload\": {\"model\": {\"name\": \"none\"}}}" },
        { "{\"workload\": {\"model\": {\"name\": \"mlp\", \"hidden\": [256]}}}",
          "{\"workload\": {\"model\": {\"name\": \"mlp\"}}}" },
        { "{\"compute\": {\"device\": \"v100\", \"precision\": \"fp32\", \"layout\": \"nchw\"}}",
          "{\"compute\": {\"device\": \"v100\", \"precision\": \"fp32\"}}" },
        { "{\"protocol\": {\"name\": \"localsgd\", \"algorithm\": \"ring\"}}",
          "{\"protocol\": {\"name\": \"localsgd\"}}" },
    };
    static const char *const other[][2] = {
        { "{\"network\": {\"nics_per_host\": 2}}", "{\"network\": {}}" },
        { "{\"network\": {\"gpus_per_host\": 2, \"host_fabric_bandwidth_gbps\": 3, "
          "\"host_fabric_latency_us\": 2}}",
          "{\"network\": {\"gpus_per_host\": 2, \"host_fabric_bandwidth_gbps\": 4, "
          "\"host_fabric_latency_us\": 2}}" },
        { "{\"workload\": {\"model\": {\"name\": \"softmax\"}, \"lr_schedule\": {\"kind\": "
          "\"constant\", \"warmup_epochs\": 1, \"warmup_start_factor\": 0.5}}}",
          "{\"workload\": {\"model\": {\"name\": \"softmax\"}}}" },
        { "{\"workload\": {\"model\": {\"name\": \"mlp\", \"hidden\": [128]}}}",
          "{\"workload\": {\"model\": {\"name\": \"mlp\"}}}" },
        { "{\"compute\": {\"device\": \"v100\", \"precision\": \"fp16\", \"layout\": \"nchw\"}}",
          "{\"compute\": {\"device\": \"v100\", \"precision\": \"fp16\", \"layout\": \"nhwc\"}}" },
        { "{\"protocol\": {\"name\": \"localsgd\", \"algorithm\": \"tree\"}}",
          "{\"protocol\": {\"name\": \"localsgd\"}}" },
        { "{\"protocol\": {\"name\": \"allreduce\", \"algorithm\": \"ring\"}}",
          "{\"protocol\": {\"name\": \"allreduce\"}}" },
        /* ".." is kept, as outputs keep it: after a link, "a/.." is not the folder of a. */
        { "{\"compute\": {\"profile\": \"a/../p.csv\"}}",
          "{\"compute\": {\"profile\": \"p.csv\"}}" },
        { "{\"workload\": {\"dataset\": {\"file\": \"d/../x.svm\"}}}",
          "{\"workload\": {\"dataset\": {\"file\": \"x.svm\"}}}" },
        { "{\"stragglers\": [{\"file\": \"/../t.csv\"}]}",
          "{\"stragglers\": [{\"file\": \"/t.csv\"}]}" },
    };
    harness_canonical_pairs(same, sizeof(same) / sizeof(same[0]), other,
                            sizeof(other) / sizeof(other[0]));
}
END_TEST

Suite *test_suite(void)
{
    Suite *s = suite_create("probe51");
    TCase *golden = tcase_create("golden");
    tcase_add_test(golden, a_golden_takes_its_scenario_with_every_default_spelt);
    tcase_add_test(golden, a_scenario_of_another_value_is_still_refused);
    tcase_add_test(golden, a_renamed_copy_is_the_golden_scenario);
    tcase_set_timeout(golden, 120);
    suite_add_tcase(s, golden);
    TCase *sweep = tcase_create("sweep");
    tcase_add_test(sweep, a_resumed_sweep_keeps_its_points_after_a_default_is_spelt);
    tcase_set_timeout(sweep, 120);
    suite_add_tcase(s, sweep);
    TCase *canon = tcase_create("canonical");
    tcase_add_test(canon, the_canonical_form_takes_a_default_spelt_for_none);
    suite_add_tcase(s, canon);
    return s;
}
