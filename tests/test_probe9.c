/* Issue 38's ninth probe: a display name that opens with '#', which gnuplot took for a
 * comment in the CSV behind a plot --by bar chart. Every case failed before its fix.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "harness.h"

typedef harness_result result;

/* A timing-only scenario of three workers for 0.2 simulated seconds: quick runs. */
static const char scenario_json[] =
    "{\"seed\": 5, \"workers\": 3, \"compute\": {\"iteration_ms\": 10},\n"
    " \"workload\": {\"model\": {\"name\": \"none\"}, \"message_bytes\": 4000},\n"
    " \"protocol\": {\"name\": \"allreduce\"}, \"stop\": {\"time_s\": 0.2},\n"
    " \"eval\": {\"every_s\": 0.05}}\n";

/* plot --by writes breakdown-by-KEY.csv with the display name in its first column, which
 * gnuplot reads as data: a name opening with '#' (--label allreduce="#1 ours", or a grid value
 * of `name`) made its row a comment, and the figure drew one bar fewer than the values,
 * without it, exit 0. Every value gets its bar, named. */
START_TEST(a_display_name_opening_with_a_hash_keeps_its_bar)
{
    char *dir = harness_tmpdir("probe9");
    char sw[600], o[600], figs[600], svg[800];
    harness_write(dir, "s.json", scenario_json);
    harness_write(dir, "sw.json",
                  "{\"base\": \"s.json\", \"grid\": {\"protocol.name\": [\"allreduce\", "
                  "\"dpsgd\"]}, \"seeds\": 1}\n");
    snprintf(sw, sizeof(sw), "%s/sw.json", dir);
    snprintf(o, sizeof(o), "%s/o", dir);
    snprintf(figs, sizeof(figs), "%s/figs", dir);
    snprintf(svg, sizeof(svg), "%s/breakdown-by-protocol.name.svg", figs);
    result res = harness_hetsim((const char *[]){ "sweep", sw, "-o", o, "--quiet", NULL });
    ck_assert_msg(res.status == 0, "%s", res.err);
    res = harness_hetsim((const char *[]){ "plot", o, "--by", "protocol.name", "--label",
                                           "allreduce=#1 ours", "--label", "dpsgd= #2", "--format",
                                           "svg", "-o", figs, NULL });
    ck_assert_msg(res.status == 0, "%s", res.err);
    char *text = harness_read(svg, NULL);
    ck_assert_ptr_nonnull(text);
    ck_assert_msg(strstr(text, ">#1 ours<") != NULL, "no bar named \"#1 ours\" in %s", svg);
    ck_assert_msg(strstr(text, ">#2<") != NULL, "no bar named \"#2\" in %s", svg);
    free(text);
    harness_cleanup(dir);
}
END_TEST

Suite *test_suite(void)
{
    Suite *s = suite_create("probe9");
    TCase *names = tcase_create("names");
    tcase_add_test(names, a_display_name_opening_with_a_hash_keeps_its_bar);
    tcase_set_timeout(names, 60);
    suite_add_tcase(s, names);
    return s;
}
