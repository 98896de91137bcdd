/* Tests of sim/cfg's parser: syntax errors and their places, escapes, numbers past a
 * double, nesting, duplicate keys, and a text read no further than its length. */
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

/* Parses text that must fail with SIM_ESCENARIO at `path` with `msg`. */
static void parse_fails(const char *text, size_t len, const char *path, const char *msg)
{
    sim_err err;
    sim_err_clear(&err);
    ck_assert_ptr_null(sim_cfg_parse(text, len, "dir/t.json", &err));
    cfgt_check_err(&err, SIM_ESCENARIO, path, msg);
    ck_assert_str_eq(err.file, "dir/t.json");
}

/* ---- parse ---------------------------------------------------------------------------- */

START_TEST(parse_gives_the_root_path_and_file)
{
    sim_cfg *cfg = cfgt_parse_ok("{\"a\": 2.385}");
    ck_assert_str_eq(sim_cfg_path(cfg), "$");
    ck_assert_str_eq(sim_cfg_file(cfg), "dir/t.json");
    sim_cfg_destroy(cfg);
    sim_cfg_destroy(NULL);
}
END_TEST

/* sim_cfg_parse takes a text and its length, with no NUL after it (a fuzz target's input): the
 * scan that keeps an integer's text past 2^53 read on past a number ending the text (strspn),
 * an overflow that the fuzz stage of the CI found with the two bytes " 2". Each text here ends
 * against a page no read may touch; each is refused as no object, nothing read past it. */
START_TEST(parse_reads_nothing_past_the_length_it_is_given)
{
    static const char *const texts[] = { " 2", " 9007199254740993", "{\"a\": [1, 2]} -5" };
    long page = sysconf(_SC_PAGESIZE);
    int zero = open("/dev/zero", O_RDWR); /* MAP_ANONYMOUS is no POSIX */
    ck_assert_int_ge(zero, 0);
    char *map = mmap(NULL, 2 * (size_t)page, PROT_READ | PROT_WRITE, MAP_PRIVATE, zero, 0);
    close(zero);
    ck_assert_ptr_ne(map, MAP_FAILED);
    ck_assert_int_eq(mprotect(map + page, (size_t)page, PROT_NONE), 0);
    for (size_t k = 0; k < sizeof(texts) / sizeof(texts[0]); k++) {
        size_t len = strlen(texts[k]);
        char *text = map + page - len;
        memcpy(text, texts[k], len);
        sim_err err;
        sim_err_clear(&err);
        ck_assert_ptr_null(sim_cfg_parse(text, len, "dir/t.json", &err));
        ck_assert_int_eq(err.code, SIM_ESCENARIO);
    }
    munmap(map, 2 * (size_t)page);
}
END_TEST

START_TEST(parse_reports_line_and_column_of_a_syntax_error)
{
    const char *text = "{\n  \"a\": 1,\n  \"b\" 2\n}\n";
    parse_fails(text, strlen(text), "", "line 3, column 7: invalid JSON");
}
END_TEST

START_TEST(parse_points_at_the_character_after_a_trailing_comma)
{
    const char *text = "{\n  \"a\": 1,\n}\n";
    parse_fails(text, strlen(text), "", "line 3, column 1: invalid JSON");
    const char *quotes = "{\n  'a': 1\n}";
    parse_fails(quotes, strlen(quotes), "", "line 2, column 3: invalid JSON");
}
END_TEST

START_TEST(parse_reports_truncated_text_as_unexpected_end_of_file)
{
    const char *text = "{\"a\": [1, 2";
    parse_fails(text, strlen(text), "", "line 1, column 12: unexpected end of file");
    const char *open_string = "{\"a\": \"abc\n";
    parse_fails(open_string, strlen(open_string), "", "line 2, column 1: unexpected end of file");
}
END_TEST

START_TEST(parse_reports_empty_text_at_line_one_column_one)
{
    parse_fails("", 0, "", "line 1, column 1: unexpected end of file");
    parse_fails("  \n", 3, "", "line 2, column 1: unexpected end of file");
}
END_TEST

START_TEST(parse_rejects_trailing_garbage_and_nul_bytes)
{
    parse_fails("{} x", 4, "", "line 1, column 4: invalid JSON");
    parse_fails("{\"a\": 1}\0{}", 11, "", "line 1, column 9: unexpected NUL byte");
}
END_TEST

START_TEST(parse_refuses_a_nul_escape_naming_the_string_or_keys_path)
{
    /* cJSON decodes \u0000 to a NUL that cuts the string: "allreduce\u0000junk" ran allreduce. */
    static const char value[] = "{\"protocol\": {\"name\": \"allreduce\\u0000junk\"}}";
    parse_fails(value, strlen(value), "$.protocol.name",
                "\\u0000 (NUL) is not allowed in a string");
    static const char key[] = "{\"a\": [1, \"x\", {\"b\": \"\", \"k\\u0000z\": 2}]}";
    parse_fails(key, strlen(key), "$.a[2]",
                "\\u0000 (NUL) is not allowed in a key (\"k\" before it)");
    /* A backslash escaped before u0000, and other escapes, are text like any other. */
    sim_cfg *cfg = cfgt_parse_ok("{\"s\": \"a\\\\u0000b\", \"t\": \"\\u0041\\u00e9\"}");
    char s[16];
    sim_err err;
    ck_assert_int_eq(sim_cfg_string(cfg, "s", s, sizeof(s), &err), 0);
    ck_assert_str_eq(s, "a\\u0000b");
    ck_assert_int_eq(sim_cfg_string(cfg, "t", s, sizeof(s), &err), 0);
    ck_assert_str_eq(s, "A\xc3\xa9");
    /* In an override's value too, where the value's path is named after the assignment. */
    ck_assert_int_eq(sim_cfg_override(cfg, "o={\"p\": [\"\", \"x\\u0000\"]}", &err), SIM_ESCENARIO);
    cfgt_check_err(&err, SIM_ESCENARIO, "--set o",
                   "\\u0000 (NUL) is not allowed in a string, at $.o.p[1]");
    sim_cfg_destroy(cfg);
}
END_TEST

START_TEST(parse_refuses_a_u_escape_without_four_hexadecimal_digits)
{
    /* cJSON reads the digits of \uZZZZ as 0, a NUL that cut the string silently:
     * "allreduce\uZZZZjunk" ran allreduce, "out/r\u12G4x" wrote out/r. */
    static const char value[] = "{\"protocol\": {\"name\": \"allreduce\\uZZZZjunk\"}}";
    parse_fails(value, strlen(value), "",
                "line 1, column 33: \\u escape without four hexadecimal digits");
    static const char key[] = "{\"a\": 1,\n \"k\\u12G4\": 2}";
    parse_fails(key, strlen(key), "",
                "line 2, column 4: \\u escape without four hexadecimal digits");
    /* An escaped backslash before u is text; four digits of any case are an escape. */
    sim_cfg *cfg = cfgt_parse_ok("{\"s\": \"a\\\\uZZZZ\", \"t\": \"\\u004A\\u004b\"}");
    char s[16];
    sim_err err;
    ck_assert_int_eq(sim_cfg_string(cfg, "s", s, sizeof(s), &err), 0);
    ck_assert_str_eq(s, "a\\uZZZZ");
    ck_assert_int_eq(sim_cfg_string(cfg, "t", s, sizeof(s), &err), 0);
    ck_assert_str_eq(s, "JK");
    /* In an override's value too, by column. */
    ck_assert_int_eq(sim_cfg_override(cfg, "o=[\"x\\u00G0\"]", &err), SIM_ESCENARIO);
    cfgt_check_err(&err, SIM_ESCENARIO, "--set o",
                   "\\u escape without four hexadecimal digits, at column 4");
    sim_cfg_destroy(cfg);
}
END_TEST

/* A number too small for a double, not 0 in the text, is refused: it was read as 0, so a
 * seed 2e-400 ran seed 0 and a sweep's seeds [3, 2e-400] ran seeds 3 and 0, exit 0. Zero
 * written in any form and the smallest subnormal stay numbers. */
START_TEST(parse_refuses_a_number_that_underflows_to_zero)
{
    static const char seed[] = "{\"seed\": 2e-400}";
    parse_fails(seed, strlen(seed), "",
                "line 1, column 10: 2e-400 is too small for a double (read as 0)");
    static const char list[] = "{\"seeds\": [3,\n -0.5e-330]}";
    parse_fails(list, strlen(list), "",
                "line 2, column 2: -0.5e-330 is too small for a double (read as 0)");
    sim_cfg *cfg = cfgt_parse_ok("{\"a\": 0e-400, \"b\": -0.000e5, \"c\": 4.9e-324, \"d\": 0}");
    double v = 1;
    sim_err err;
    ck_assert_int_eq(sim_cfg_double(cfg, "a", -1, 1, &v, &err), 0);
    ck_assert(v == 0);
    ck_assert_int_eq(sim_cfg_double(cfg, "c", -1, 1, &v, &err), 0);
    ck_assert(v > 0);
    ck_assert_int_eq(sim_cfg_override(cfg, "o=[1e-999]", &err), SIM_ESCENARIO);
    cfgt_check_err(&err, SIM_ESCENARIO, "--set o",
                   "1e-999 is too small for a double (read as 0), at column 2");
    /* A bare value that is such a number alone is text, as a bare value that does not parse
     * is: a key that takes a number names the cause (sim/cfg_read.c, check_number). */
    ck_assert_int_eq(sim_cfg_override(cfg, "o=1e-400", &err), 0);
    ck_assert_int_eq(sim_cfg_override(cfg, "o=01e-400", &err), 0);
    ck_assert_int_eq(sim_cfg_override(cfg, "o=1e-400x", &err), 0);
    sim_cfg_destroy(cfg);
}
END_TEST

/* cJSON reads 1e309 as infinity: a speed of 1e309 was refused as "must be a number > 0, got
 * inf" (inf is > 0), a slowdown as "must be a number >= 1, got inf". It is refused at its line
 * and column as too large, as 1e-400 is as too small; the largest double still reads. */
START_TEST(parse_refuses_a_number_that_overflows_to_infinity)
{
    static const char speeds[] = "{\"speeds\": [1,\n  1e309]}";
    parse_fails(speeds, strlen(speeds), "",
                "line 2, column 3: 1e309 is too large for a double (read as infinity)");
    static const char digits[] = "{\"a\": -123456789012345678901234567890e300}";
    parse_fails(digits, strlen(digits), "",
                "line 1, column 7: -123456789012345678901234567890e300 is too large for a double "
                "(read as infinity)");
    sim_cfg *cfg = cfgt_parse_ok("{\"a\": 1.7976931348623157e308, \"b\": -1e-320}");
    double v = 0;
    sim_err err;
    ck_assert_int_eq(sim_cfg_double(cfg, "a", 0, INFINITY, &v, &err), 0);
    ck_assert(v == DBL_MAX);
    ck_assert_int_eq(sim_cfg_override(cfg, "o=[2, 7.5e400]", &err), SIM_ESCENARIO);
    cfgt_check_err(&err, SIM_ESCENARIO, "--set o",
                   "7.5e400 is too large for a double (read as infinity), at column 5");
    sim_cfg_destroy(cfg);
}
END_TEST

/* A \u escape of half a surrogate pair alone (a lone \ud800, a lone \udc00, the halves
 * reversed) was "invalid JSON" at its column, which named no cause: the text's grammar is
 * JSON's, its escape what cJSON refuses. Named at its column, in a --set value too; a pair,
 * and a "\\ud800" that is a backslash and text, still read. */
START_TEST(parse_names_a_lone_half_of_a_surrogate_pair)
{
    static const char *const texts[] = { "{\"name\": \"ab\\ud800c\"}", "{\"name\": \"ab\\udc00\"}",
                                         "{\"name\": \"ab\\ude00\\ud83d\"}",
                                         "{\"name\": \"ab\\uD83D\\u0041\"}" };
    for (size_t i = 0; i < 4; i++)
        parse_fails(texts[i], strlen(texts[i]), "", "line 1, column 13: " CFG_LONE_SURROGATE_TEXT);
    sim_cfg *cfg = cfgt_parse_ok("{\"a\": \"x\\ud83d\\ude00\", \"b\": \"\\\\ud800\"}");
    sim_err err;
    ck_assert_int_eq(sim_cfg_override(cfg, "o=[\"\\udbff\"]", &err), SIM_ESCENARIO);
    cfgt_check_err(&err, SIM_ESCENARIO, "--set o", CFG_LONE_SURROGATE_TEXT ", at column 3");
    sim_cfg_destroy(cfg);
}
END_TEST

/* Text of `levels` nested arrays under key "a" of the root (levels + 1 in all). */
static char *nested(size_t levels)
{
    char *text = malloc(2 * levels + 16);
    ck_assert_ptr_nonnull(text);
    size_t len = (size_t)sprintf(text, "{\"a\": ");
    for (size_t i = 0; i < levels; i++)
        text[len++] = '[';
    for (size_t i = 0; i < levels; i++)
        text[len++] = ']';
    strcpy(text + len, "}");
    return text;
}

START_TEST(parse_says_when_text_is_nested_deeper_than_the_parser_allows)
{
    char *text = nested(999); /* 1000 levels: the most */
    sim_cfg *cfg = cfgt_parse_ok(text);
    sim_cfg_destroy(cfg);
    free(text);
    text = nested(1000); /* the 1001st level opens at column 1006 */
    parse_fails(text, strlen(text), "",
                "line 1, column 1006: nested deeper than 1000 levels (the parser's limit)");
    /* A mistake before the level past the limit is reported as it was. */
    text[4] = ';';
    parse_fails(text, strlen(text), "", "line 1, column 5: invalid JSON");
    free(text);
    /* An override's value alone: its 1001st level opens at its column 1001. */
    text = malloc(2 * 1001 + 8);
    ck_assert_ptr_nonnull(text);
    size_t len = (size_t)sprintf(text, "x=");
    for (size_t i = 0; i < 1001; i++)
        text[len++] = '[';
    for (size_t i = 0; i < 1001; i++)
        text[len++] = ']';
    text[len] = '\0';
    sim_err err;
    cfg = cfgt_parse_ok("{}");
    ck_assert_int_eq(sim_cfg_override(cfg, text, &err), SIM_ESCENARIO);
    cfgt_check_err(&err, SIM_ESCENARIO, "--set x",
                   "value nested deeper than 1000 levels (the parser's limit) at column 1001");
    sim_cfg_destroy(cfg);
    free(text);
}
END_TEST

START_TEST(parse_rejects_a_root_that_is_not_an_object)
{
    parse_fails("[1, 2]", 6, "$", "expected an object, got array");
    parse_fails("3.25", 4, "$", "expected an object, got 3.25");
    parse_fails("\"x\"", 3, "$", "expected an object, got \"x\"");
}
END_TEST

START_TEST(parse_rejects_duplicate_keys_at_every_level)
{
    const char *top = "{\"a\": 1, \"b\": 2, \"a\": 3}";
    parse_fails(top, strlen(top), "$.a", "duplicate key");
    const char *nested = "{\"a\": {\"b\": {\"c\": 1, \"d\": 2, \"c\": 3}}}";
    parse_fails(nested, strlen(nested), "$.a.b.c", "duplicate key");
    const char *in_array = "{\"a\": [{\"x\": 1}, {\"y\": 1, \"x\": 2, \"y\": 3}]}";
    parse_fails(in_array, strlen(in_array), "$.a[1].y", "duplicate key");
}
END_TEST

START_TEST(parse_reports_the_first_duplicate_in_document_order)
{
    const char *text = "{\"a\": {\"x\": 1, \"x\": 2}, \"b\": 1, \"b\": 2}";
    parse_fails(text, strlen(text), "$.a.x", "duplicate key");
}
END_TEST

START_TEST(parse_finds_a_duplicate_among_many_keys)
{
    char text[2048];
    size_t len = (size_t)snprintf(text, sizeof(text), "{");
    for (int i = 0; i < 60; i++)
        len += (size_t)snprintf(text + len, sizeof(text) - len, "\"k%d\": %d, ", i, i);
    snprintf(text + len, sizeof(text) - len, "\"k17\": 1, \"k3\": 2}");
    parse_fails(text, strlen(text), "$.k17", "duplicate key");
}
END_TEST

START_TEST(parse_quotes_keys_that_are_not_identifiers_in_paths)
{
    const char *text = "{\"a b\": {\"x\": 1, \"x\": 2}}";
    parse_fails(text, strlen(text), "$[\"a b\"].x", "duplicate key");
}
END_TEST

Suite *test_suite(void)
{
    Suite *s = suite_create("cfg_parse");
    TCase *tc = tcase_create("parse");
    tcase_add_test(tc, parse_gives_the_root_path_and_file);
    tcase_add_test(tc, parse_reports_line_and_column_of_a_syntax_error);
    tcase_add_test(tc, parse_points_at_the_character_after_a_trailing_comma);
    tcase_add_test(tc, parse_reports_truncated_text_as_unexpected_end_of_file);
    tcase_add_test(tc, parse_reports_empty_text_at_line_one_column_one);
    tcase_add_test(tc, parse_rejects_trailing_garbage_and_nul_bytes);
    tcase_add_test(tc, parse_refuses_a_nul_escape_naming_the_string_or_keys_path);
    tcase_add_test(tc, parse_refuses_a_u_escape_without_four_hexadecimal_digits);
    tcase_add_test(tc, parse_refuses_a_number_that_underflows_to_zero);
    tcase_add_test(tc, parse_refuses_a_number_that_overflows_to_infinity);
    tcase_add_test(tc, parse_names_a_lone_half_of_a_surrogate_pair);
    tcase_add_test(tc, parse_says_when_text_is_nested_deeper_than_the_parser_allows);
    tcase_add_test(tc, parse_rejects_a_root_that_is_not_an_object);
    tcase_add_test(tc, parse_rejects_duplicate_keys_at_every_level);
    tcase_add_test(tc, parse_reports_the_first_duplicate_in_document_order);
    tcase_add_test(tc, parse_finds_a_duplicate_among_many_keys);
    tcase_add_test(tc, parse_quotes_keys_that_are_not_identifiers_in_paths);
    tcase_add_test(tc, parse_reads_nothing_past_the_length_it_is_given);
    suite_add_tcase(s, tc);
    return s;
}
