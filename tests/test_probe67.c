/* Issue 38, the nineteenth probe's leftovers the lead fixed: the deviation of identical values,
 * numbers past 1e15 in report's tables, the "valid:" list of a parameter server that runs
 * BSP rounds; and the twentieth's: a metrics.csv whose last row's score is not its run's. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "app/report_state.h"
#include "app/stats.h"
#include "harness.h"

typedef harness_result result;

/* Identical values have their own value as mean and an interval of exactly 0. Around their
 * rounded mean (0.30000000000000004 / 3), 0.1 three times had a deviation of 1.7e-17 and a
 * 95% half-width of 4.2e-17, which report's csv printed; an infinite value is still an
 * infinite mean. */
START_TEST(identical_values_have_no_interval)
{
    static const double same[] = { 0.1, 0.1, 0.1 }, spread[] = { 0.1, 0.2, 0.4 };
    double mean = NAN, half = NAN, sd = NAN;
    ck_assert_uint_eq(app_stats_mean_ci(same, 3, &mean, &half), 3);
    ck_assert_msg(mean == 0.1 && half == 0.0, "mean %.17g, half %.17g", mean, half);
    ck_assert_uint_eq(app_stats_mean_sd(spread, 3, &mean, &sd), 3);
    double want = sqrt(((0.1 - 0.7 / 3) * (0.1 - 0.7 / 3) + (0.2 - 0.7 / 3) * (0.2 - 0.7 / 3) +
                        (0.4 - 0.7 / 3) * (0.4 - 0.7 / 3)) /
                       2);
    ck_assert_msg(fabs(mean - 0.7 / 3) < 1e-16 && fabs(sd - want) < 1e-16, "%.17g %.17g", mean, sd);
    static const double with_nan[] = { NAN, 2.5, NAN, 2.5 }, with_inf[] = { INFINITY, 1.0 };
    ck_assert_uint_eq(app_stats_mean_sd(with_nan, 4, &mean, &sd), 2);
    ck_assert_msg(mean == 2.5 && sd == 0.0, "%.17g %.17g", mean, sd);
    ck_assert_uint_eq(app_stats_mean_sd(with_inf, 2, &mean, NULL), 2);
    ck_assert_msg(isinf(mean) && mean > 0, "%.17g", mean);
}
END_TEST

/* A number from 1e15 on is written with four significant digits: report's md and tex wrote
 * 1e149 samples/s as a 150-digit number, of which a double holds 17. */
START_TEST(numbers_past_1e15_are_written_in_scientific_notation)
{
    char buf[64];
    rp_number(buf, sizeof(buf), 2, 1e149);
    ck_assert_str_eq(buf, "1.000e+149");
    rp_number(buf, sizeof(buf), 0, -2.5e15);
    ck_assert_str_eq(buf, "-2.500e+15");
    rp_number(buf, sizeof(buf), 3, 999999999999999.0);
    ck_assert_str_eq(buf, "999999999999999.000");
    rp_number(buf, sizeof(buf), 2, 1.5);
    ck_assert_str_eq(buf, "1.50");
}
END_TEST

static const char ps_json[] =
    "{\"seed\": 1, \"workers\": 2, \"compute\": {\"iteration_ms\": 1},"
    " \"workload\": {\"model\": {\"name\": \"none\"}, \"message_bytes\": 1000},"
    " \"protocol\": {\"name\": \"ps\", \"mode\": \"%s\", \"sync_overhed_ms\": 1},"
    " \"stop\": {\"time_s\": 0.01}}";

/* A misspelt key under a parameter server in BSP lists sync_overhead_ms among the valid keys
 * (it is read only when given, so the list left it out); in ASP, where it does not apply, the
 * list does not offer it. */
START_TEST(a_bsp_parameter_server_lists_sync_overhead_ms_as_valid)
{
    char *dir = harness_tmpdir("probe67");
    static const char *const modes[] = { "bsp", "asp" };
    for (size_t m = 0; m < 2; m++) {
        char json[600], s[600];
        snprintf(json, sizeof(json), ps_json, modes[m]);
        harness_write(dir, "s.json", json);
        snprintf(s, sizeof(s), "%s/s.json", dir);
        result res = harness_hetsim((const char *[]){ "validate", s, NULL });
        ck_assert_msg(res.status == 2 && strstr(res.err, "$.protocol.sync_overhed_ms: unknown key "
                                                         "(valid: ") != NULL,
                      "%s: exit %d\n%s", modes[m], res.status, res.err);
        bool listed = strstr(res.err, "sync_overhead_ms") != NULL;
        ck_assert_msg(listed == (m == 0), "%s: %s", modes[m], res.err);
    }
    harness_cleanup(dir);
}
END_TEST

static const char real_json[] =
    "{\"seed\": 5, \"workers\": 3, \"compute\": {\"iteration_ms\": 20},"
    " \"workload\": {\"dataset\": {\"name\": \"synthetic\", \"samples\": 400,"
    " \"test_samples\": 50}, \"model\": {\"name\": \"softmax\"}, \"batch\": 8, \"lr\": 0.05},"
    " \"protocol\": {\"name\": \"allreduce\"}, \"stop\": {\"time_s\": 0.2},"
    " \"eval\": {\"every_s\": 0.1, \"samples\": 50}}";

/* run's metrics.csv with field `col` (0-based) of its last row set to `value`. */
static void edit_last_row(const char *run, size_t col, const char *value)
{
    char *text = harness_slurp(run, "metrics.csv");
    size_t len = strlen(text);
    ck_assert(len > 1 && text[len - 1] == '\n');
    text[len - 1] = '\0';
    char *last = strrchr(text, '\n') + 1, *p = last;
    for (size_t c = 0; c < col; c++)
        p = strchr(p, ',') + 1;
    char *end = strchr(p, ',');
    size_t cap = len + strlen(value) + 2;
    char *out = malloc(cap);
    ck_assert_ptr_nonnull(out);
    snprintf(out, cap, "%.*s%s%s\n", (int)(p - text), text, value, end);
    harness_write(run, "metrics.csv", out);
    free(out);
    free(text);
}

/* The last row of metrics.csv is the run's end: its test accuracy and epoch are summary.json's
 * final_accuracy and epochs (within the 9 digits metrics.csv writes). The accuracy edited to
 * 0.999 was drawn by plot RUN, exit 0 (report said a target was reached beside a final
 * accuracy below it); now exit 2 naming the column. */
START_TEST(a_last_row_whose_score_is_not_the_runs_is_refused)
{
    static const struct {
        size_t col;
        const char *value, *name;
    } edits[] = { { 6, "0.999", "test_accuracy" }, { 3, "7.5", "epoch" } };
    for (size_t e = 0; e < 2; e++) {
        char *dir = harness_tmpdir("probe67");
        char s[600], r[600], p[600];
        harness_run_in(dir, real_json, s, r, sizeof(s));
        snprintf(p, sizeof(p), "%s/p", dir);
        result res = harness_hetsim((const char *[]){ "plot", r, "-o", p, NULL });
        ck_assert_msg(res.status == 0, "unedited: exit %d\n%s", res.status, res.err);
        edit_last_row(r, edits[e].col, edits[e].value);
        snprintf(p, sizeof(p), "%s/p2", dir);
        res = harness_hetsim((const char *[]){ "plot", r, "-o", p, NULL });
        ck_assert_msg(res.status == 2 && strstr(res.err, edits[e].name) != NULL &&
                          strstr(res.err, "is not the run's") != NULL,
                      "%s edited: exit %d\n%s", edits[e].name, res.status, res.err);
        harness_cleanup(dir);
    }
}
END_TEST

Suite *test_suite(void)
{
    Suite *s = suite_create("probe67");
    TCase *numbers = tcase_create("numbers");
    tcase_add_test(numbers, identical_values_have_no_interval);
    tcase_add_test(numbers, numbers_past_1e15_are_written_in_scientific_notation);
    suite_add_tcase(s, numbers);
    TCase *keys = tcase_create("keys");
    tcase_add_test(keys, a_bsp_parameter_server_lists_sync_overhead_ms_as_valid);
    tcase_add_test(keys, a_last_row_whose_score_is_not_the_runs_is_refused);
    tcase_set_timeout(keys, 60);
    suite_add_tcase(s, keys);
    return s;
}
