/* Issue 38, fifteenth probe (classes 13-19): what the earlier fixes left of their classes.
 * Each case failed before its fix.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <check.h>

#include "harness.h"
#include "suite.h"

/* A sweep run again over a point whose metrics.csv or workers.csv was removed took the point
 * as done (its summary.json and run.json were there): "4 points, 0 run now, 0 failed", exit 0,
 * and curves.csv written again without the point's rows, where a run writes its four files at
 * once. The point is a damaged run, run again: its rows are back, report reads the sweep. */
START_TEST(a_point_missing_a_results_file_is_run_again)
{
    static const char *const files[] = { "metrics.csv", "workers.csv" };
    for (size_t f = 0; f < 2; f++) {
        char *dir = harness_tmpdir("probe33");
        char sw[600], o[600], path[900];
        harness_sweep_in(dir, harness_quick_json, harness_protocols_sweep, sw, o, sizeof(sw));
        char *before = harness_slurp(o, "curves.csv");
        snprintf(path, sizeof(path), "%s/protocol.name=dpsgd,seed=6/%s", o, files[f]);
        ck_assert_int_eq(unlink(path), 0);
        harness_result res = harness_hetsim((const char *[]){ "sweep", sw, "-o", o, NULL });
        ck_assert_msg(res.status == 0, "%s: exit %d\n%s", files[f], res.status, res.err);
        ck_assert_msg(strstr(res.out, "4 points, 1 run now, 0 failed") != NULL, "%s: %s", files[f],
                      res.out);
        ck_assert_msg(harness_exists(path), "%s not written again", path);
        char *after = harness_slurp(o, "curves.csv");
        ck_assert_msg(strcmp(before, after) == 0, "%s: curves.csv:\n%s\nwas:\n%s", files[f], after,
                      before);
        res = harness_hetsim((const char *[]){ "report", o, "--by", "protocol.name", NULL });
        ck_assert_msg(res.status == 0, "%s: report: exit %d\n%s", files[f], res.status, res.err);
        free(before);
        free(after);
        harness_cleanup(dir);
    }
}
END_TEST

Suite *test_suite(void)
{
    Suite *s = suite_create("probe33");
    TCase *damaged = tcase_create("damaged");
    tcase_add_test(damaged, a_point_missing_a_results_file_is_run_again);
    tcase_set_timeout(damaged, 120);
    suite_add_tcase(s, damaged);
    return s;
}
