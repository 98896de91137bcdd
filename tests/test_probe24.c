/* Issue 38, twelfth probe (classes 1-6): a swept array of objects is read back from index.csv
 * as the run resolved it. The case failed before its fix.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "harness.h"

typedef harness_result result;

/* report and plot --by compare each index.csv row's swept values with its run's run.json: an
 * object value was set key by key (the run's resolved defaults stay), an array as a whole. A
 * swept "stragglers" list of a failure rule without recover_s, which run.json resolves to
 * "recover_s": null, was taken for an edited index: "line 3: stragglers differ from the run's
 * in ...", exit 2, on a sweep just written. Each object of an array is set key by key too; an
 * index whose array differs from the run's (another length, another value) is still refused. */
START_TEST(a_swept_array_of_objects_is_read_back_as_the_run_resolved_it)
{
    char *dir = harness_tmpdir("probe24");
    char sw[600], o[600], dest[700];
    harness_sweep_in(dir, harness_quick_json,
                     "{\"base\": \"s.json\", \"grid\": {\"stragglers\": [[],"
                     " [{\"kind\": \"failure\", \"workers\": [1], \"at_s\": 0.0731}],"
                     " [{\"kind\": \"fixed\", \"workers\": [2], \"slowdown\": 2.37},"
                     " {\"kind\": \"failure\", \"workers\": [0], \"at_s\": 0.113,"
                     " \"recover_s\": 0.157}]]}}",
                     sw, o, sizeof(sw));
    snprintf(dest, sizeof(dest), "%s/p", dir);
    result rep = harness_hetsim(
        (const char *[]){ "report", o, "--by", "stragglers", "--format", "csv", NULL });
    ck_assert_msg(rep.status == 0, "report: exit %d\n%s", rep.status, rep.err);
    result plot =
        harness_hetsim((const char *[]){ "plot", o, "--by", "stragglers", "-o", dest, NULL });
    ck_assert_msg(plot.status == 0, "plot --by: exit %d\n%s", plot.status, plot.err);
    /* an index whose array is not the run's is refused as before */
    harness_poke_index(o, "\"\"at_s\"\":0.0731}", 14, '2'); /* 0.0731 -> 0.0732 */
    result bad = harness_hetsim(
        (const char *[]){ "report", o, "--by", "stragglers", "--format", "csv", NULL });
    ck_assert_msg(bad.status == 2, "edited: exit %d\n%s", bad.status, bad.err);
    ck_assert_msg(strstr(bad.err, "stragglers differ from the run's") != NULL, "%s", bad.err);
    harness_cleanup(dir);
}
END_TEST

Suite *test_suite(void)
{
    Suite *s = suite_create("probe24");
    TCase *read_back = tcase_create("read_back");
    tcase_add_test(read_back, a_swept_array_of_objects_is_read_back_as_the_run_resolved_it);
    tcase_set_timeout(read_back, 120);
    suite_add_tcase(s, read_back);
    return s;
}
