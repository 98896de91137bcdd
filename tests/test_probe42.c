/* Issue 38, the seventeenth probe, classes 7 to 12 (sums of user numbers, non-finite totals, a
 * golden's consistency, results that depend on eval.every_s or --threads, damaged results
 * files, JSON oddities). Each case failed before its fix.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "harness.h"

typedef harness_result result;

/* A timing-only run of 3 workers on allreduce, for 10 ms, its compute `compute` and its
 * profile p.csv. */
#define TIMED(compute)                                                                  \
    "{\"seed\": 5, \"workers\": 3, \"compute\": {" compute ", \"profile\": \"p.csv\"}," \
    " \"workload\": {\"model\": {\"name\": \"none\"}, \"batch\": 8},"                   \
    " \"protocol\": {\"name\": \"allreduce\"}, \"stop\": {\"time_s\": 0.01},"           \
    " \"eval\": {\"every_s\": 0.01}}"

/* A base time a profile sets below the clock's 1 ns (measured times that sum to 0 ms, FLOPs
 * over a gflops or a device's efficiency that give 1e-28 s) was taken as 1 ns, exit 0, as
 * speeds and iteration_ms below it were before they were refused: gflops 1e300 and 1e200
 * ran the same, and an AD-PSGD run of such a profile ran 1-ns iterations for minutes (killed
 * at 20 s). Refused now, exit 2, naming the key and the clock's resolution. */
START_TEST(a_profiles_base_time_below_a_nanosecond_is_refused)
{
    static const struct {
        const char *profile, *scenario, *path;
    } cases[] = {
        { "name,params,forward_flops,forward_ms,backward_ms\nl0,1000,10,0,0\nl1,1000,10,0,0\n",
          TIMED("\"jitter_sigma\": 0"), "$.compute.profile" },
        { "name,params,forward_flops\nl0,1000,10\n", TIMED("\"gflops\": 1e300"),
          "$.compute.profile" },
        { "name,params,forward_flops\nl0,1000,1e-320\n", TIMED("\"gflops\": 1e-300"),
          "$.compute.profile" },
        { "name,params,forward_flops\nl0,1000,1e-300\n",
          TIMED("\"device\": \"v100\", \"efficiency\": 1"), "$.compute.efficiency" },
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char *dir = harness_tmpdir("probe42");
        harness_write(dir, "p.csv", cases[i].profile);
        harness_write(dir, "s.json", cases[i].scenario);
        char s[600], out[600], want[200];
        snprintf(s, sizeof(s), "%s/s.json", dir);
        snprintf(out, sizeof(out), "%s/out", dir);
        result res = harness_hetsim((const char *[]){ "run", s, "-o", out, "--quiet", NULL });
        snprintf(want, sizeof(want), "%s: an iteration would last", cases[i].path);
        ck_assert_msg(res.status == 2 && strstr(res.err, want) != NULL &&
                          strstr(res.err, "less than the clock's resolution of 1 ns") != NULL &&
                          !harness_exists(out),
                      "case %zu: exit %d, want 2 and \"%s ... 1 ns\"\n%.600s", i, res.status, want,
                      res.err);
        harness_cleanup(dir);
    }
}
END_TEST

Suite *test_suite(void)
{
    Suite *s = suite_create("probe42");
    TCase *sums = tcase_create("sums");
    tcase_add_test(sums, a_profiles_base_time_below_a_nanosecond_is_refused);
    tcase_set_timeout(sums, 120);
    suite_add_tcase(s, sums);
    return s;
}
