/* Tests of sim/cfg: typed readers (types, ranges, defaults written into the tree), unknown
 * keys and printing (the parser's are in test_cfg_parse.c). */
#include <fcntl.h>
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <check.h>

#include "harness_cfg.h"
#include "sim/cfg.h"
#include "sim/cfg_state.h"
#include "sim/err.h"
#include "suite.h"

/* ---- double ----------------------------------------------------------------------------- */

START_TEST(double_reads_a_value_in_range)
{
    sim_cfg *cfg = cfgt_parse_ok("{\"x\": 2.385}");
    sim_err err;
    double x = 0.0;
    ck_assert_int_eq(sim_cfg_double(cfg, "x", 0.0, 10.0, &x, &err), 0);
    ck_assert_double_eq(x, 2.385);
    sim_cfg_destroy(cfg);
}
END_TEST

START_TEST(double_rejects_a_value_out_of_range_naming_its_path)
{
    sim_cfg *cfg = cfgt_parse_ok("{\"x\": 1.5}");
    sim_err err;
    double x = 0.25;
    ck_assert_int_eq(sim_cfg_double(cfg, "x", 0.0, 1.0, &x, &err), SIM_ESCENARIO);
    cfgt_check_err(&err, SIM_ESCENARIO, "$.x", "must be a number in [0, 1], got 1.5");
    ck_assert_str_eq(err.file, "dir/t.json");
    ck_assert_double_eq(x, 0.25);
    sim_cfg_destroy(cfg);
}
END_TEST

START_TEST(double_prints_open_bounds_as_strict_comparisons)
{
    sim_cfg *cfg = cfgt_parse_ok("{\"x\": 0, \"y\": 1, \"z\": 4.75}");
    sim_err err;
    double v = 0.0;
    sim_cfg_double(cfg, "x", nextafter(0.0, 1.0), INFINITY, &v, &err);
    cfgt_check_err(&err, SIM_ESCENARIO, "$.x", "must be a number > 0, got 0");
    sim_cfg_double(cfg, "y", 0.0, nextafter(1.0, 0.0), &v, &err);
    cfgt_check_err(&err, SIM_ESCENARIO, "$.y", "must be a number in [0, 1), got 1");
    sim_cfg_double(cfg, "y", nextafter(1.0, 2.0), nextafter(2.5, 0.0), &v, &err);
    cfgt_check_err(&err, SIM_ESCENARIO, "$.y", "must be a number in (1, 2.5), got 1");
    sim_cfg_double(cfg, "z", -INFINITY, nextafter(4.75, 0.0), &v, &err);
    cfgt_check_err(&err, SIM_ESCENARIO, "$.z", "must be a number < 4.75, got 4.75");
    sim_cfg_destroy(cfg);
}
END_TEST

START_TEST(double_prints_half_bounded_and_unbounded_ranges)
{
    sim_cfg *cfg = cfgt_parse_ok("{\"x\": 0.5, \"y\": 7.125, \"z\": \"fast\"}");
    sim_err err;
    double v = 0.0;
    sim_cfg_double(cfg, "x", 1.0, INFINITY, &v, &err);
    cfgt_check_err(&err, SIM_ESCENARIO, "$.x", "must be a number >= 1, got 0.5");
    sim_cfg_double(cfg, "y", -INFINITY, 5.0, &v, &err);
    cfgt_check_err(&err, SIM_ESCENARIO, "$.y", "must be a number <= 5, got 7.125");
    sim_cfg_double(cfg, "z", -INFINITY, INFINITY, &v, &err);
    cfgt_check_err(&err, SIM_ESCENARIO, "$.z", "must be a number, got \"fast\"");
    sim_cfg_destroy(cfg);
}
END_TEST

START_TEST(double_describes_values_of_the_wrong_type)
{
    /* (A number read as infinity, 1e999, no longer parses: parse_refuses_a_number_that_...) */
    sim_cfg *cfg = cfgt_parse_ok("{\"t\": true, \"f\": false, \"n\": null, \"a\": [1], \"o\": {}}");
    static const char *const keys[] = { "t", "f", "n", "a", "o" };
    static const char *const got[] = { "true", "false", "null", "array", "object" };
    for (size_t i = 0; i < 5; i++) {
        sim_err err;
        double v = 0.0;
        char path[16], msg[64];
        ck_assert_int_eq(sim_cfg_double(cfg, keys[i], 0.0, 1.0, &v, &err), SIM_ESCENARIO);
        snprintf(path, sizeof(path), "$.%s", keys[i]);
        snprintf(msg, sizeof(msg), "must be a number in [0, 1], got %s", got[i]);
        cfgt_check_err(&err, SIM_ESCENARIO, path, msg);
    }
    sim_cfg_destroy(cfg);
}
END_TEST

START_TEST(double_writes_an_absent_default_into_the_tree)
{
    sim_cfg *cfg = cfgt_parse_ok("{\"b\": 1}");
    sim_err err;
    double a = 2.385;
    ck_assert_int_eq(sim_cfg_double(cfg, "a", 0.0, 10.0, &a, &err), 0);
    ck_assert_double_eq(a, 2.385);
    cfgt_check_print(cfg, "{\"b\":1,\"a\":2.385}");
    sim_cfg_destroy(cfg);
}
END_TEST

START_TEST(double_leaves_out_a_default_outside_the_range_or_nan)
{
    sim_cfg *cfg = cfgt_parse_ok("{\"b\": 1}");
    sim_err err;
    double a = NAN, c = -3.5;
    ck_assert_int_eq(sim_cfg_double(cfg, "a", 0.0, 10.0, &a, &err), 0);
    ck_assert(isnan(a));
    ck_assert_int_eq(sim_cfg_double(cfg, "c", 0.0, 10.0, &c, &err), 0);
    ck_assert_double_eq(c, -3.5);
    cfgt_check_print(cfg, "{\"b\":1}");
    sim_cfg_destroy(cfg);
}
END_TEST

/* ---- int -------------------------------------------------------------------------------- */

START_TEST(int_reads_an_integral_number)
{
    sim_cfg *cfg = cfgt_parse_ok("{\"n\": 48213, \"m\": -17}");
    sim_err err;
    int64_t n = 0, m = 0;
    ck_assert_int_eq(sim_cfg_int(cfg, "n", 1, 100000, &n, &err), 0);
    ck_assert_int_eq(n, 48213);
    ck_assert_int_eq(sim_cfg_int(cfg, "m", -20, 0, &m, &err), 0);
    ck_assert_int_eq(m, -17);
    sim_cfg_destroy(cfg);
}
END_TEST

START_TEST(int_rejects_fractional_and_out_of_range_values)
{
    sim_cfg *cfg = cfgt_parse_ok("{\"f\": 2.5, \"z\": 0, \"s\": \"3\"}");
    sim_err err;
    int64_t v = 5;
    ck_assert_int_eq(sim_cfg_int(cfg, "f", 1, 10, &v, &err), SIM_ESCENARIO);
    cfgt_check_err(&err, SIM_ESCENARIO, "$.f", "must be an integer in [1, 10], got 2.5");
    sim_cfg_int(cfg, "z", 1, 1048576, &v, &err);
    cfgt_check_err(&err, SIM_ESCENARIO, "$.z", "must be an integer in [1, 1048576], got 0");
    sim_cfg_int(cfg, "s", 1, 10, &v, &err);
    cfgt_check_err(&err, SIM_ESCENARIO, "$.s", "must be an integer in [1, 10], got \"3\"");
    ck_assert_int_eq(v, 5);
    sim_cfg_destroy(cfg);
}
END_TEST

/* An integer written -0 is read as 0 and recorded as 0 in the resolved tree: run.json said
 * "servers": -0, and the scenario's hash differed from the same scenario's with 0 (a golden
 * of one was "another scenario" to a check of the other, a sweep ran its points again). */
START_TEST(int_records_minus_zero_as_zero)
{
    sim_cfg *cfg = cfgt_parse_ok("{\"servers\": -0, \"lr\": -0, \"workers\": [3, -0]}");
    sim_err err;
    int64_t v = 7;
    double w = 7.0;
    ck_assert_int_eq(sim_cfg_int(cfg, "servers", 0, 4096, &v, &err), 0);
    ck_assert_int_eq(v, 0);
    ck_assert_int_eq(sim_cfg_at_double(cfg, "workers", 1, 0, 10, true, &w, &err), 0);
    ck_assert(w == 0.0 && !signbit(w));
    /* a number key keeps its sign */
    cfgt_check_print(cfg, "{\"servers\":0,\"lr\":-0,\"workers\":[3,0]}");
    sim_cfg_destroy(cfg);
}
END_TEST

START_TEST(int_accepts_2_to_the_53_and_rejects_beyond)
{
    sim_cfg *cfg = cfgt_parse_ok("{\"ok\": 9007199254740992, \"big\": 1e16, \"neg\": -1e300}");
    sim_err err;
    int64_t v = 0;
    ck_assert_int_eq(sim_cfg_int(cfg, "ok", 0, INT64_MAX, &v, &err), 0);
    ck_assert_int_eq(v, INT64_C(9007199254740992));
    ck_assert_int_eq(sim_cfg_int(cfg, "big", INT64_MIN, INT64_MAX, &v, &err), SIM_ESCENARIO);
    cfgt_check_err(&err, SIM_ESCENARIO, "$.big",
                   "must be an integer in [-9007199254740992, 9007199254740992], got 1e+16");
    ck_assert_int_eq(sim_cfg_int(cfg, "neg", INT64_MIN, 0, &v, &err), SIM_ESCENARIO);
    cfgt_check_err(&err, SIM_ESCENARIO, "$.neg",
                   "must be an integer in [-9007199254740992, 0], got -1e+300");
    sim_cfg_destroy(cfg);
}
END_TEST

/* An integer written past 2^53 that a double rounds was taken as the double where an integer
 * is expected and the range reaches it: sim_cfg_int up to INT64_MAX (a golden's seed, a torch
 * profile's rss) read 9007199254740993 as 9007199254740992, exit 0. It is refused, naming
 * the path and the text as written, in a file, an element and a --set; 2^53 written exactly
 * still reads. */
START_TEST(int_refuses_an_integer_past_2_to_the_53_that_a_double_rounds)
{
    sim_cfg *cfg = cfgt_parse_ok("{\"a\": 9007199254740993, \"b\": [1, -9007199254740993], "
                                 "\"ok\": 9007199254740992}");
    sim_err err;
    int64_t v = 0;
    double d = 0.0;
    ck_assert_int_eq(sim_cfg_int(cfg, "a", 0, INT64_MAX, &v, &err), SIM_ESCENARIO);
    cfgt_check_err(&err, SIM_ESCENARIO, "$.a",
                   "must be an integer in [0, 9007199254740992], got 9007199254740993 (past "
                   "2^53: a double holds 9007199254740992)");
    ck_assert_int_eq(sim_cfg_at_double(cfg, "b", 1, -1e300, 0.0, true, &d, &err), SIM_ESCENARIO);
    cfgt_check_err(&err, SIM_ESCENARIO, "$.b[1]",
                   "must be an integer in [-9007199254740992, 0], got -9007199254740993 (past "
                   "2^53: a double holds -9007199254740992)");
    ck_assert_int_eq(sim_cfg_override(cfg, "c=9007199254740995", &err), 0);
    ck_assert_int_eq(sim_cfg_int(cfg, "c", 0, INT64_MAX, &v, &err), SIM_ESCENARIO);
    cfgt_check_err(&err, SIM_ESCENARIO, "$.c",
                   "must be an integer in [0, 9007199254740992], got 9007199254740995 (past "
                   "2^53: a double holds 9007199254740996)");
    ck_assert_int_eq(sim_cfg_int(cfg, "ok", 0, INT64_MAX, &v, &err), 0);
    ck_assert_int_eq(v, INT64_C(9007199254740992));
    sim_cfg_destroy(cfg);
}
END_TEST

/* A number written past 2^53 was shown in messages as the double it parsed to: a seed of
 * 9007199254740993 "got 9007199254740992", a value the user never wrote. Each message shows
 * the text as written and the double that holds it; the tree prints the double, as before. */
START_TEST(a_number_past_2_to_the_53_is_shown_as_written)
{
    sim_cfg *cfg = cfgt_parse_ok("{\"seed\": 9007199254740993, \"lr\": 12345678901234567891, "
                                 "\"w\": {\"x\": -9007199254740993}}");
    sim_err err;
    int64_t v = 0;
    double d = 0.0;
    sim_cfg *w = NULL;
    ck_assert_int_eq(sim_cfg_int(cfg, "seed", 0, (INT64_C(1) << 53) - 1, &v, &err), SIM_ESCENARIO);
    cfgt_check_err(&err, SIM_ESCENARIO, "$.seed",
                   "must be an integer in [0, 9007199254740991], got 9007199254740993 (past "
                   "2^53: a double holds 9007199254740992)");
    ck_assert_int_eq(sim_cfg_double(cfg, "lr", 0.0, 1000.0, &d, &err), SIM_ESCENARIO);
    cfgt_check_err(&err, SIM_ESCENARIO, "$.lr",
                   "must be a number in [0, 1000], got 12345678901234567891 (past 2^53: a "
                   "double holds 1.2345678901234567e+19)");
    ck_assert_int_eq(sim_cfg_child(cfg, "w", &w, &err), 0);
    ck_assert_int_eq(sim_cfg_bool(w, "x", &(bool){ false }, &err), SIM_ESCENARIO);
    cfgt_check_err(&err, SIM_ESCENARIO, "$.w.x",
                   "must be true or false, got -9007199254740993 (past 2^53: a double holds "
                   "-9007199254740992)");
    cfgt_check_print(cfg, "{\"seed\":9007199254740992,\"lr\":1.2345678901234567e+19,"
                          "\"w\":{\"x\":-9007199254740992}}");
    sim_cfg_destroy(cfg);
}
END_TEST

START_TEST(int_writes_defaults_in_range_only)
{
    sim_cfg *cfg = cfgt_parse_ok("{}");
    sim_err err;
    int64_t batch = 48, unset = 0;
    ck_assert_int_eq(sim_cfg_int(cfg, "batch", 1, 1024, &batch, &err), 0);
    ck_assert_int_eq(sim_cfg_int(cfg, "iterations", 1, 1000, &unset, &err), 0);
    ck_assert_int_eq(unset, 0);
    cfgt_check_print(cfg, "{\"batch\":48}");
    sim_cfg_destroy(cfg);
}
END_TEST

/* ---- bool, string, choice ------------------------------------------------------------- */

START_TEST(bool_reads_values_and_rejects_other_types)
{
    sim_cfg *cfg = cfgt_parse_ok("{\"t\": true, \"f\": false, \"n\": 1}");
    sim_err err;
    bool t = false, f = true, n = false, d = true;
    ck_assert_int_eq(sim_cfg_bool(cfg, "t", &t, &err), 0);
    ck_assert_int_eq(sim_cfg_bool(cfg, "f", &f, &err), 0);
    ck_assert(t && !f);
    ck_assert_int_eq(sim_cfg_bool(cfg, "n", &n, &err), SIM_ESCENARIO);
    cfgt_check_err(&err, SIM_ESCENARIO, "$.n", "must be true or false, got 1");
    ck_assert_int_eq(sim_cfg_bool(cfg, "d", &d, &err), 0);
    ck_assert(d);
    cfgt_check_print(cfg, "{\"t\":true,\"f\":false,\"n\":1,\"d\":true}");
    sim_cfg_destroy(cfg);
}
END_TEST

START_TEST(string_copies_a_value_that_fits)
{
    sim_cfg *cfg = cfgt_parse_ok("{\"s\": \"adpsgd\"}");
    sim_err err;
    char out[7] = "";
    ck_assert_int_eq(sim_cfg_string(cfg, "s", out, sizeof(out), &err), 0);
    ck_assert_str_eq(out, "adpsgd");
    sim_cfg_destroy(cfg);
}
END_TEST

START_TEST(string_rejects_long_empty_and_non_string_values)
{
    sim_cfg *cfg = cfgt_parse_ok("{\"long\": \"abcdefghi\", \"empty\": \"\", \"num\": 2.385}");
    sim_err err;
    char out[8] = "keep";
    ck_assert_int_eq(sim_cfg_string(cfg, "long", out, sizeof(out), &err), SIM_ESCENARIO);
    cfgt_check_err(&err, SIM_ESCENARIO, "$.long", "must be at most 7 bytes long, got 9");
    sim_cfg_string(cfg, "empty", out, sizeof(out), &err);
    cfgt_check_err(&err, SIM_ESCENARIO, "$.empty", "must not be empty");
    sim_cfg_string(cfg, "num", out, sizeof(out), &err);
    cfgt_check_err(&err, SIM_ESCENARIO, "$.num", "must be a string, got 2.385");
    ck_assert_str_eq(out, "keep");
    sim_cfg_destroy(cfg);
}
END_TEST

START_TEST(string_writes_a_non_empty_default)
{
    sim_cfg *cfg = cfgt_parse_ok("{}");
    sim_err err;
    char dir[32] = "out/run-7", none[8] = "";
    ck_assert_int_eq(sim_cfg_string(cfg, "dir", dir, sizeof(dir), &err), 0);
    ck_assert_int_eq(sim_cfg_string(cfg, "none", none, sizeof(none), &err), 0);
    cfgt_check_print(cfg, "{\"dir\":\"out/run-7\"}");
    sim_cfg_destroy(cfg);
}
END_TEST

START_TEST(choice_returns_the_index_and_lists_valid_names)
{
    static const char *const names[] = { "star", "racks" };
    sim_cfg *cfg = cfgt_parse_ok("{\"a\": \"racks\", \"b\": \"ring\", \"c\": 3}");
    sim_err err;
    int v = -1;
    ck_assert_int_eq(sim_cfg_choice(cfg, "a", names, 2, &v, &err), 0);
    ck_assert_int_eq(v, 1);
    ck_assert_int_eq(sim_cfg_choice(cfg, "b", names, 2, &v, &err), SIM_ESCENARIO);
    cfgt_check_err(&err, SIM_ESCENARIO, "$.b", "must be one of star, racks, got \"ring\"");
    sim_cfg_choice(cfg, "c", names, 2, &v, &err);
    cfgt_check_err(&err, SIM_ESCENARIO, "$.c", "must be one of star, racks, got 3");
    v = 0;
    ck_assert_int_eq(sim_cfg_choice(cfg, "d", names, 2, &v, &err), 0);
    cfgt_check_print(cfg, "{\"a\":\"racks\",\"b\":\"ring\",\"c\":3,\"d\":\"star\"}");
    sim_cfg_destroy(cfg);
}
END_TEST

/* ---- check_unused ------------------------------------------------------------------------ */

START_TEST(check_unused_accepts_an_object_whose_keys_were_all_read)
{
    sim_cfg *cfg = cfgt_parse_ok("{\"alpha\": 0.5, \"beta\": {\"zeta\": 1}}");
    sim_err err;
    double a = 0.0;
    sim_cfg *b = NULL;
    sim_cfg_double(cfg, "alpha", 0.0, 1.0, &a, &err);
    sim_cfg_child(cfg, "beta", &b, &err);
    ck_assert_int_eq(sim_cfg_check_unused(cfg, &err), 0); /* children are checked separately */
    ck_assert_int_eq(sim_cfg_check_unused(b, &err), SIM_ESCENARIO);
    cfgt_check_err(&err, SIM_ESCENARIO, "$.beta.zeta", "unknown key (valid: none)");
    sim_cfg_destroy(cfg);
}
END_TEST

START_TEST(check_unused_names_the_first_unread_key_and_lists_read_and_defaulted_keys)
{
    sim_cfg *cfg = cfgt_parse_ok("{\"alpah\": 0.5, \"beta\": 2, \"gama\": 1}");
    sim_err err;
    double alpha = 0.25, beta = 0.0, gamma = NAN;
    sim_cfg_double(cfg, "alpha", 0.0, 1.0, &alpha, &err);
    sim_cfg_double(cfg, "beta", 0.0, 5.0, &beta, &err);
    sim_cfg_double(cfg, "gamma", 0.0, 5.0, &gamma, &err);
    sim_cfg_has(cfg, "delta"); /* does not make delta valid */
    ck_assert_int_eq(sim_cfg_check_unused(cfg, &err), SIM_ESCENARIO);
    cfgt_check_err(&err, SIM_ESCENARIO, "$.alpah", "unknown key (valid: alpha, beta, gamma)");
    sim_cfg_destroy(cfg);
}
END_TEST

START_TEST(check_unused_keeps_marks_across_lookups_of_the_same_child)
{
    sim_cfg *cfg = cfgt_parse_ok("{\"protocol\": {\"name\": \"hop\", \"graph\": \"ring\"}}");
    sim_err err;
    sim_cfg *p = NULL, *q = NULL;
    char name[16] = "", graph[16] = "";
    sim_cfg_child(cfg, "protocol", &p, &err);
    sim_cfg_string(p, "name", name, sizeof(name), &err);
    sim_cfg_child(cfg, "protocol", &q, &err);
    sim_cfg_string(q, "graph", graph, sizeof(graph), &err);
    ck_assert_int_eq(sim_cfg_check_unused(q, &err), 0);
    sim_cfg_destroy(cfg);
}
END_TEST

/* ---- print --------------------------------------------------------------------------------- */

START_TEST(print_keeps_file_order_then_defaults_in_the_order_added)
{
    sim_cfg *cfg = cfgt_parse_ok("{\"z\": 1, \"a\": {\"y\": [1, 2.5]}, \"m\": \"s\"}");
    sim_err err;
    sim_cfg *a = NULL;
    double d = 0.0625;
    bool b = false;
    sim_cfg_child(cfg, "a", &a, &err);
    sim_cfg_double(a, "x", 0.0, 1.0, &d, &err);
    sim_cfg_bool(cfg, "b", &b, &err);
    cfgt_check_print(cfg, "{\"z\":1,\"a\":{\"y\":[1,2.5],\"x\":0.0625},\"m\":\"s\",\"b\":false}");
    char *pretty = sim_cfg_print(cfg, true);
    ck_assert_ptr_nonnull(pretty);
    ck_assert_ptr_nonnull(strchr(pretty, '\n'));
    free(pretty);
    sim_cfg_destroy(cfg);
}
END_TEST

START_TEST(print_writes_large_integers_exactly)
{
    sim_cfg *cfg = cfgt_parse_ok("{\"seed\": 9007199254740992, \"x\": 0.1, "
                                 "\"y\": [0.30000000000000004, 1234567890123456789]}");
    cfgt_check_print(cfg, "{\"seed\":9007199254740992,\"x\":0.1,"
                          "\"y\":[0.30000000000000004,1.2345678901234568e+18]}");
    sim_cfg_destroy(cfg);
}
END_TEST

/* An element or a value handed on as JSON text (a sweep axis's value as --set, a golden's
 * seed, a torch module's arguments) reads back as the number written (issue 38, ninth probe:
 * they were cJSON's %.15g, so a sweep point of lr 0.30000000000000004 ran lr 0.3 and a golden
 * of seeds near 2^53 could not be read back). */
START_TEST(elements_and_values_handed_on_as_json_keep_every_digit)
{
    sim_cfg *cfg = cfgt_parse_ok("{\"y\": [0.30000000000000004, 9007199254740989], "
                                 "\"z\": {\"a\": [1e-5, 0.1, 2.0000000000000004]}}");
    char *text = NULL;
    ck_assert_int_eq(sim_cfg_at_json(cfg, "y", 0, &text, NULL), 0);
    ck_assert_str_eq(text, "0.30000000000000004");
    free(text);
    ck_assert_int_eq(sim_cfg_at_json(cfg, "y", 1, &text, NULL), 0);
    ck_assert_str_eq(text, "9007199254740989");
    free(text);
    ck_assert_int_eq(sim_cfg_json(cfg, "z", &text, NULL), 0);
    ck_assert_str_eq(text, "{\"a\":[1e-05,0.1,2.0000000000000004]}");
    free(text);
    sim_cfg_destroy(cfg);
}
END_TEST

Suite *test_suite(void)
{
    Suite *s = suite_create("cfg");
    TCase *tc = tcase_create("numbers");
    tcase_add_test(tc, double_reads_a_value_in_range);
    tcase_add_test(tc, double_rejects_a_value_out_of_range_naming_its_path);
    tcase_add_test(tc, double_prints_open_bounds_as_strict_comparisons);
    tcase_add_test(tc, double_prints_half_bounded_and_unbounded_ranges);
    tcase_add_test(tc, double_describes_values_of_the_wrong_type);
    tcase_add_test(tc, double_writes_an_absent_default_into_the_tree);
    tcase_add_test(tc, double_leaves_out_a_default_outside_the_range_or_nan);
    tcase_add_test(tc, int_reads_an_integral_number);
    tcase_add_test(tc, int_rejects_fractional_and_out_of_range_values);
    tcase_add_test(tc, int_accepts_2_to_the_53_and_rejects_beyond);
    tcase_add_test(tc, int_records_minus_zero_as_zero);
    tcase_add_test(tc, int_writes_defaults_in_range_only);
    tcase_add_test(tc, int_refuses_an_integer_past_2_to_the_53_that_a_double_rounds);
    tcase_add_test(tc, a_number_past_2_to_the_53_is_shown_as_written);
    suite_add_tcase(s, tc);

    tc = tcase_create("bool_string_choice");
    tcase_add_test(tc, bool_reads_values_and_rejects_other_types);
    tcase_add_test(tc, string_copies_a_value_that_fits);
    tcase_add_test(tc, string_rejects_long_empty_and_non_string_values);
    tcase_add_test(tc, string_writes_a_non_empty_default);
    tcase_add_test(tc, choice_returns_the_index_and_lists_valid_names);
    suite_add_tcase(s, tc);

    tc = tcase_create("unused");
    tcase_add_test(tc, check_unused_accepts_an_object_whose_keys_were_all_read);
    tcase_add_test(tc, check_unused_names_the_first_unread_key_and_lists_read_and_defaulted_keys);
    tcase_add_test(tc, check_unused_keeps_marks_across_lookups_of_the_same_child);
    suite_add_tcase(s, tc);

    tc = tcase_create("print");
    tcase_add_test(tc, print_keeps_file_order_then_defaults_in_the_order_added);
    tcase_add_test(tc, print_writes_large_integers_exactly);
    tcase_add_test(tc, elements_and_values_handed_on_as_json_keep_every_digit);
    suite_add_tcase(s, tc);
    return s;
}
