/* Issue 38's ninth probe, classes 7-12 (sums past their types, foreign goldens, stalls,
 * damaged results, JSON strings): a switch's latency past the network's bound; report without a
 * target read no run's metrics.csv; an index.csv row removed; two grid values of one run; a
 * golden's seed directory in another spelling. Every case failed before its fix.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <check.h>

#include "harness.h"

typedef harness_result result;

/* The scenario takes every latency up to 1e18 ns, but the network takes a switch-to-switch
 * link's and a host fabric's only up to SIM_TIME_NEVER / 16 (5.76e17 ns): an uplink_latency_us
 * of 1e15 (or a fat tree's latency_us of 1e15, which its uplinks default to, or a
 * host_fabric_latency_us of 1e15) failed the run, exit 1, "net: uplink_latency_ns must be in
 * [0, 576460752303423487]", naming no file nor key. Refused when loaded, exit 2, naming the
 * key, nothing written; the bound itself is taken. */
START_TEST(a_switch_latency_past_the_networks_bound_is_refused_with_its_key)
{
    static const char *const sets[][4] = {
        { "network.topology=racks", "network.rack_size=1", "network.uplink_latency_us=1e15",
          "$.network.uplink_latency_us: must be at most 576460752303423 as a switch's" },
        { "network.topology=fat_tree", "network.k=4", "network.latency_us=1e15",
          "$.network.latency_us: must be at most 576460752303423" },
        { "network.gpus_per_host=3", "network.host_fabric=pcie4",
          "network.host_fabric_latency_us=6e14", "$.network.host_fabric_latency_us: must be" },
        { "network.topology=racks", "network.rack_size=1",
          "network.uplink_latency_us=576460752303423", NULL },
    };
    char *dir = harness_tmpdir("probe10");
    char s[600], o[600];
    harness_write(dir, "s.json", harness_quick_json);
    snprintf(s, sizeof(s), "%s/s.json", dir);
    snprintf(o, sizeof(o), "%s/o", dir);
    for (size_t c = 0; c < sizeof(sets) / sizeof(sets[0]); c++) {
        result res =
            harness_hetsim((const char *[]){ "run", s, "--set", sets[c][0], "--set", sets[c][1],
                                             "--set", sets[c][2], "-o", o, "--quiet", NULL });
        if (sets[c][3] == NULL) {
            ck_assert_msg(res.status == 0, "case %zu: %s", c, res.err);
            continue;
        }
        ck_assert_msg(res.status == 2, "case %zu: exit %d\n%s", c, res.status, res.err);
        ck_assert_msg(strstr(res.err, sets[c][3]) != NULL, "case %zu: %s", c, res.err);
        ck_assert(!harness_exists(o));
    }
    harness_cleanup(dir);
}
END_TEST

/* report reads every selected run's metrics.csv (docs/compare.md), but only when it had a
 * target to read times from: without one, a run whose metrics.csv was removed, replaced by
 * a directory or edited to hold "inf" was reported, exit 0. Each is refused, exit 2, naming
 * the file, as with a target and as plot --by does. */
START_TEST(a_report_without_a_target_reads_every_runs_metrics)
{
    char *dir = harness_tmpdir("probe10");
    char s[600], o[600], m[900];
    harness_sweep_in(dir, harness_quick_json, harness_protocols_sweep, s, o, sizeof(s));
    snprintf(m, sizeof(m), "%s/protocol.name=dpsgd,seed=6/metrics.csv", o);
    result res = harness_hetsim((const char *[]){ "report", o, "--by", "protocol.name", NULL });
    ck_assert_msg(res.status == 0, "%s", res.err);
    FILE *f = fopen(m, "ab");
    ck_assert_ptr_nonnull(f);
    fputs("0.2,60,1920,,,,,,inf\n", f);
    fclose(f);
    res = harness_hetsim((const char *[]){ "report", o, "--by", "protocol.name", NULL });
    ck_assert_msg(res.status == 2, "exit %d\n%s", res.status, res.err);
    ck_assert_msg(strstr(res.err, "seed=6/metrics.csv: line 7: time_s: 0.2 is not above") != NULL,
                  "%s", res.err);
    ck_assert_msg(strstr(res.out, "allreduce") == NULL, "%s", res.out);
    ck_assert_int_eq(unlink(m), 0);
    res = harness_hetsim((const char *[]){ "report", o, "--by", "protocol.name", NULL });
    ck_assert_msg(res.status == 2, "exit %d\n%s", res.status, res.err);
    ck_assert_msg(strstr(res.err, "an incomplete run directory") != NULL, "%s", res.err);
    ck_assert_int_eq(mkdir(m, 0777), 0);
    res = harness_hetsim((const char *[]){ "report", o, "--by", "protocol.name", NULL });
    ck_assert_msg(res.status == 2, "exit %d\n%s", res.status, res.err);
    ck_assert_msg(strstr(res.err, "metrics.csv: not a regular file") != NULL, "%s", res.err);
    harness_cleanup(dir);
}
END_TEST

/* index.csv has a row per point of its sweep, but a row removed by hand (the last, so the
 * point numbers left have no gap) was read as a sweep without that run: report counted the
 * group's runs as 1, exit 0, silently. A run directory that no row names is named in a warning
 * by report and plot --by, and left out: it cannot be told from a point of an earlier grid run
 * into the same directory, which refusing made every report of such a sweep fail. The sweep
 * run again writes the row again. */
START_TEST(a_run_directory_without_its_index_row_is_named_and_left_out)
{
    char *dir = harness_tmpdir("probe10");
    char s[600], o[600], ix[700], figs[700];
    harness_sweep_in(dir, harness_quick_json, harness_protocols_sweep, s, o, sizeof(s));
    snprintf(ix, sizeof(ix), "%s/index.csv", o);
    snprintf(figs, sizeof(figs), "%s/figs", dir);
    char *text = harness_read(ix, NULL);
    ck_assert_ptr_nonnull(text);
    char *last = strrchr(text, '\n');
    ck_assert_ptr_nonnull(last);
    *last = '\0';
    last = strrchr(text, '\n');
    ck_assert_ptr_nonnull(last);
    last[1] = '\0';
    harness_write(o, "index.csv", text);
    free(text);
    static const char warning[] = "index.csv: 1 run directory of the sweep's no row names, left "
                                  "out (protocol.name=dpsgd,seed=6; from an earlier grid";
    result res = harness_hetsim((const char *[]){ "report", o, "--by", "protocol.name", NULL });
    ck_assert_msg(res.status == 0, "exit %d\n%s\n%s", res.status, res.err, res.out);
    ck_assert_msg(strstr(res.err, warning) != NULL, "%s", res.err);
    res = harness_hetsim((const char *[]){ "plot", o, "--by", "protocol.name", "-o", figs, NULL });
    ck_assert_msg(res.status == 0, "exit %d\n%s", res.status, res.err);
    ck_assert_msg(strstr(res.err, warning) != NULL, "%s", res.err);
    res = harness_hetsim((const char *[]){ "sweep", s, "-o", o, "--quiet", NULL });
    ck_assert_msg(res.status == 0, "%s", res.err);
    res = harness_hetsim((const char *[]){ "report", o, "--by", "protocol.name", NULL });
    ck_assert_msg(res.status == 0, "%s", res.err);
    ck_assert_msg(strstr(res.err, "warning") == NULL, "%s", res.err);
    harness_cleanup(dir);
}
END_TEST

/* check lists a golden's seed-S directories against its seeds file, but read S with
 * strtoull: "seed-06" and "seed-+7" were taken as seeds 6's and 7's directories, so a
 * directory no --update wrote (a copy of a seed, another golden's) sat in the golden and the
 * check passed, exit 0, while "seed-6.bak" was refused. Each is refused, naming it, exit 2. */
START_TEST(a_golden_seed_directory_named_in_another_spelling_is_refused)
{
    static const char *const names[] = { "seed-06", "seed-+7", "seed- 5" };
    char *dir = harness_tmpdir("probe10");
    char s[600], g[600], o[600], extra[700];
    harness_golden_in(dir, harness_quick_json, s, g, sizeof(s));
    snprintf(o, sizeof(o), "%s/o", dir);
    for (size_t c = 0; c < sizeof(names) / sizeof(names[0]); c++) {
        snprintf(extra, sizeof(extra), "%s/%s", g, names[c]);
        ck_assert_int_eq(mkdir(extra, 0777), 0);
        result res = harness_hetsim((const char *[]){ "check", s, "--golden", g, "-o", o, NULL });
        ck_assert_msg(res.status == 2, "%s: exit %d\n%s", names[c], res.status, res.err);
        ck_assert_msg(strstr(res.err, "not listed in") != NULL, "%s", res.err);
        ck_assert_msg(strstr(res.err, names[c]) != NULL, "%s", res.err);
        ck_assert(!harness_exists(o));
        ck_assert_int_eq(rmdir(extra), 0);
    }
    result res = harness_hetsim((const char *[]){ "check", s, "--golden", g, "-o", o, NULL });
    ck_assert_msg(res.status == 0, "%s", res.err);
    harness_cleanup(dir);
}
END_TEST

/* A sweep refuses two points of one run directory ([2, 2.0]), but two values that give one
 * run under two names were run twice: an object with its keys in another order
 * ({"name": "allreduce", "bucket_mb": 1} and {"bucket_mb": 1, "name": "allreduce"}) or
 * stating a default ({"name": "allreduce"} and {"name": "allreduce", "bucket_mb": 25}),
 * exit 0, report showing the one run as two rows. Refused before anything runs, exit 2,
 * naming both points. */
START_TEST(two_grid_values_that_are_one_run_are_refused)
{
    static const char *const grids[] = {
        "{\"protocol\": [{\"name\": \"allreduce\", \"bucket_mb\": 1}, {\"bucket_mb\": 1, "
        "\"name\": \"allreduce\"}]}",
        "{\"protocol\": [{\"name\": \"allreduce\"}, {\"name\": \"allreduce\", \"bucket_mb\": "
        "25}]}",
    };
    char *dir = harness_tmpdir("probe10");
    char s[600], o[600];
    harness_write(dir, "s.json", harness_quick_json);
    for (size_t c = 0; c < sizeof(grids) / sizeof(grids[0]); c++) {
        result res = harness_sweep_grid(dir, grids[c], o, sizeof(o));
        ck_assert_msg(res.status == 2, "case %zu: exit %d\n%s", c, res.status, res.err);
        ck_assert_msg(strstr(res.err, "$.grid: points 0 (") != NULL, "%s", res.err);
        ck_assert_msg(strstr(res.err, "are one run") != NULL, "%s", res.err);
        ck_assert(!harness_exists(o));
    }
    harness_sweep_in(dir, NULL,
                     "{\"base\": \"s.json\", \"grid\": {\"protocol\": [{\"name\": "
                     "\"allreduce\", \"bucket_mb\": 1}, {\"name\": \"allreduce\", \"bucket_mb\": "
                     "2}]}}\n",
                     s, o, sizeof(s));
    harness_cleanup(dir);
}
END_TEST

Suite *test_suite(void)
{
    Suite *s = suite_create("probe10");
    TCase *sums = tcase_create("sums");
    tcase_add_test(sums, a_switch_latency_past_the_networks_bound_is_refused_with_its_key);
    tcase_set_timeout(sums, 60);
    suite_add_tcase(s, sums);
    TCase *results = tcase_create("results");
    tcase_add_test(results, a_report_without_a_target_reads_every_runs_metrics);
    tcase_add_test(results, a_run_directory_without_its_index_row_is_named_and_left_out);
    tcase_set_timeout(results, 60);
    suite_add_tcase(s, results);
    TCase *json = tcase_create("json");
    tcase_add_test(json, two_grid_values_that_are_one_run_are_refused);
    tcase_set_timeout(json, 60);
    suite_add_tcase(s, json);
    TCase *golden = tcase_create("golden");
    tcase_add_test(golden, a_golden_seed_directory_named_in_another_spelling_is_refused);
    tcase_set_timeout(golden, 60);
    suite_add_tcase(s, golden);
    return s;
}
