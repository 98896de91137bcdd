/* Tests of sim/cfg: structure access (objects, arrays, paths) and overrides. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "harness_cfg.h"
#include "sim/cfg.h"
#include "sim/cfg_state.h"
#include "sim/err.h"
#include "suite.h"

/* ---- structure -------------------------------------------------------------------------- */

START_TEST(require_reports_a_missing_key_and_accepts_null)
{
    sim_cfg *cfg = cfgt_parse_ok("{\"n\": null}");
    sim_err err;
    ck_assert_int_eq(sim_cfg_require(cfg, "n", &err), 0);
    ck_assert_int_eq(sim_cfg_require(cfg, "seed", &err), SIM_ESCENARIO);
    cfgt_check_err(&err, SIM_ESCENARIO, "$.seed", "missing required key");
    sim_cfg_destroy(cfg);
}
END_TEST

START_TEST(has_and_is_null_tell_absent_null_and_set_apart)
{
    sim_cfg *cfg = cfgt_parse_ok("{\"n\": null, \"v\": 0}");
    ck_assert(sim_cfg_has(cfg, "n") && sim_cfg_has(cfg, "v") && !sim_cfg_has(cfg, "x"));
    ck_assert(sim_cfg_is_null(cfg, "n"));
    ck_assert(!sim_cfg_is_null(cfg, "v"));
    ck_assert(!sim_cfg_is_null(cfg, "x"));
    sim_cfg_destroy(cfg);
}
END_TEST

START_TEST(child_returns_the_same_object_each_time_with_its_path)
{
    sim_cfg *cfg = cfgt_parse_ok("{\"network\": {\"latency_us\": 37.5}, \"n\": null}");
    sim_err err;
    sim_cfg *a = NULL, *b = NULL, *none = cfg;
    ck_assert_int_eq(sim_cfg_child(cfg, "network", &a, &err), 0);
    ck_assert_int_eq(sim_cfg_child(cfg, "network", &b, &err), 0);
    ck_assert_ptr_eq(a, b);
    ck_assert_str_eq(sim_cfg_path(a), "$.network");
    ck_assert_str_eq(sim_cfg_file(a), "dir/t.json");
    ck_assert_int_eq(sim_cfg_child(cfg, "absent", &none, &err), 0);
    ck_assert_ptr_null(none);
    none = cfg;
    ck_assert_int_eq(sim_cfg_child(cfg, "n", &none, &err), 0);
    ck_assert_ptr_null(none);
    sim_cfg_destroy(a); /* a child: no-op, it lives as long as the root */
    ck_assert_str_eq(sim_cfg_path(b), "$.network");
    sim_cfg_destroy(cfg);
}
END_TEST

START_TEST(child_rejects_a_value_that_is_not_an_object)
{
    sim_cfg *cfg = cfgt_parse_ok("{\"compute\": [1]}");
    sim_err err;
    sim_cfg *c = NULL;
    ck_assert_int_eq(sim_cfg_child(cfg, "compute", &c, &err), SIM_ESCENARIO);
    cfgt_check_err(&err, SIM_ESCENARIO, "$.compute", "expected an object, got array");
    sim_cfg_destroy(cfg);
}
END_TEST

START_TEST(array_len_counts_elements_and_rejects_non_arrays)
{
    sim_cfg *cfg = cfgt_parse_ok("{\"a\": [1, 2, 3], \"e\": [], \"s\": \"x\"}");
    sim_err err;
    size_t n = 99;
    ck_assert_int_eq(sim_cfg_array_len(cfg, "a", &n, &err), 0);
    ck_assert_uint_eq(n, 3);
    ck_assert_int_eq(sim_cfg_array_len(cfg, "e", &n, &err), 0);
    ck_assert_uint_eq(n, 0);
    n = 99;
    ck_assert_int_eq(sim_cfg_array_len(cfg, "absent", &n, &err), 0);
    ck_assert_uint_eq(n, 0);
    ck_assert_int_eq(sim_cfg_array_len(cfg, "s", &n, &err), SIM_ESCENARIO);
    cfgt_check_err(&err, SIM_ESCENARIO, "$.s", "expected an array, got \"x\"");
    sim_cfg_destroy(cfg);
}
END_TEST

START_TEST(at_gives_object_elements_with_indexed_paths)
{
    sim_cfg *cfg = cfgt_parse_ok("{\"list\": [4, {\"x\": 2.385}]}");
    sim_err err;
    sim_cfg *e = NULL;
    double x = 0.0;
    ck_assert_int_eq(sim_cfg_at(cfg, "list", 1, &e, &err), 0);
    ck_assert_str_eq(sim_cfg_path(e), "$.list[1]");
    ck_assert_int_eq(sim_cfg_double(e, "x", 0.0, 5.0, &x, &err), 0);
    ck_assert_double_eq(x, 2.385);
    ck_assert_int_eq(sim_cfg_at(cfg, "list", 0, &e, &err), SIM_ESCENARIO);
    cfgt_check_err(&err, SIM_ESCENARIO, "$.list[0]", "expected an object, got 4");
    ck_assert_int_eq(sim_cfg_at(cfg, "list", 2, &e, &err), SIM_EINVAL);
    sim_cfg_destroy(cfg);
}
END_TEST

START_TEST(at_double_checks_each_element)
{
    sim_cfg *cfg = cfgt_parse_ok("{\"ids\": [0, 3, 1.5], \"speeds\": [2.385, -1]}");
    sim_err err;
    double v = 0.0;
    ck_assert_int_eq(sim_cfg_at_double(cfg, "ids", 1, 0.0, 3.0, true, &v, &err), 0);
    ck_assert_double_eq(v, 3.0);
    ck_assert_int_eq(sim_cfg_at_double(cfg, "ids", 2, 0.0, 3.0, true, &v, &err), SIM_ESCENARIO);
    cfgt_check_err(&err, SIM_ESCENARIO, "$.ids[2]", "must be an integer in [0, 3], got 1.5");
    ck_assert_int_eq(
        sim_cfg_at_double(cfg, "speeds", 0, nextafter(0.0, 1.0), INFINITY, false, &v, &err), 0);
    ck_assert_double_eq(v, 2.385);
    sim_cfg_at_double(cfg, "speeds", 1, nextafter(0.0, 1.0), INFINITY, false, &v, &err);
    cfgt_check_err(&err, SIM_ESCENARIO, "$.speeds[1]", "must be a number > 0, got -1");
    sim_cfg_destroy(cfg);
}
END_TEST

/* Parses {"a": [0, a_step, 2 a_step, ...], "b": [0, b_step, ...]}, arrays of n integers,
 * without "b" if b_step is 0. */
static sim_cfg *parse_multiples(size_t n, size_t a_step, size_t b_step)
{
    const size_t steps[2] = { a_step, b_step };
    size_t len = 0, size = 32 + 24 * n;
    char *text = malloc(size);
    ck_assert_ptr_nonnull(text);
    for (size_t k = 0; k < 2 && steps[k] > 0; k++) {
        len += (size_t)snprintf(text + len, size - len, "%s\"%c\": [", k == 0 ? "{" : "], ",
                                (int)('a' + k));
        for (size_t i = 0; i < n; i++)
            len +=
                (size_t)snprintf(text + len, size - len, "%s%zu", i > 0 ? "," : "", steps[k] * i);
    }
    snprintf(text + len, size - len, "]}");
    ck_assert_uint_lt(len + 2, size);
    sim_cfg *cfg = cfgt_parse_ok(text);
    free(text);
    return cfg;
}

START_TEST(at_double_reads_long_arrays_in_order_and_out_of_order)
{
    size_t n = 20000;
    sim_cfg *cfg = parse_multiples(n, 3, 0);
    sim_err err;
    double v = 0.0;
    for (size_t i = 0; i < n; i++) {
        ck_assert_int_eq(sim_cfg_at_double(cfg, "a", i, 0.0, 1e9, true, &v, &err), 0);
        ck_assert_double_eq(v, (double)(3 * i));
    }
    ck_assert_int_eq(sim_cfg_at_double(cfg, "a", 7, 0.0, 1e9, true, &v, &err), 0);
    ck_assert_double_eq(v, 21.0);
    sim_cfg_destroy(cfg);
}
END_TEST

/* Two arrays read in turn, as the loader reads its rules and the workers inside each: with
 * one cursor, which followed the other array, each element was reached by a walk from its
 * array's start (100,000 straggler rules took 13 s to load, the links walked growing as the
 * square of the elements); with a cursor per array read in turn, each read steps one link
 * from the last. An array whose elements an override replaces loses its cursor. */
START_TEST(at_reads_arrays_in_turn_one_link_a_read)
{
    size_t n = 20000;
    sim_cfg *cfg = parse_multiples(n, 7, 5);
    sim_err err;
    double v = 0.0;
    for (size_t i = 0; i < n; i++) {
        ck_assert_int_eq(sim_cfg_at_double(cfg, "a", i, 0.0, 1e9, true, &v, &err), 0);
        ck_assert_double_eq(v, (double)(7 * i));
        ck_assert_int_eq(sim_cfg_at_double(cfg, "b", i, 0.0, 1e9, true, &v, &err), 0);
        ck_assert_double_eq(v, (double)(5 * i));
    }
    ck_assert_uint_eq(cfg->walked, 2 * (n - 1)); /* n^2 - n before */
    ck_assert_int_eq(sim_cfg_override(cfg, "b=[2.385]", &err), 0);
    ck_assert_int_eq(sim_cfg_at_double(cfg, "b", 0, 0.0, 5.0, false, &v, &err), 0);
    ck_assert_double_eq(v, 2.385);
    ck_assert_int_eq(sim_cfg_at_double(cfg, "b", 1, 0.0, 5.0, false, &v, &err), SIM_EINVAL);
    ck_assert_int_eq(sim_cfg_at_double(cfg, "a", n - 1, 0.0, 1e9, true, &v, &err), 0);
    ck_assert_double_eq(v, (double)(7 * (n - 1)));
    sim_cfg_destroy(cfg);
}
END_TEST

/* One --set per element of a long array, as a grid or a command line sets each straggler
 * rule: each walked its array from the start, the links growing as the square of the
 * elements (40,000 rules took 3.4 s). From the array's cursor each steps one link; set in
 * the reverse order, each still reaches the right element. */
START_TEST(override_sets_elements_in_order_one_link_each)
{
    size_t n = 20000;
    sim_cfg *cfg = parse_multiples(n, 3, 11);
    sim_err err;
    char set[64];
    double v = 0.0;
    for (size_t i = 0; i < n; i++) {
        snprintf(set, sizeof(set), "a[%zu]=%zu.5", i, 13 * i);
        ck_assert_int_eq(sim_cfg_override(cfg, set, &err), 0);
    }
    ck_assert_uint_eq(cfg->walked, n - 1); /* no link followed through the cursor before */
    for (size_t i = n; i-- > n - 3;) {
        snprintf(set, sizeof(set), "b[%zu]=-%zu", i, i);
        ck_assert_int_eq(sim_cfg_override(cfg, set, &err), 0);
    }
    for (size_t i = 0; i < n; i++) {
        ck_assert_int_eq(sim_cfg_at_double(cfg, "a", i, 0.0, 1e9, false, &v, &err), 0);
        ck_assert_double_eq(v, (double)(13 * i) + 0.5);
    }
    ck_assert_int_eq(sim_cfg_at_double(cfg, "b", n - 3, -1e9, 1e9, true, &v, &err), 0);
    ck_assert_double_eq(v, -(double)(n - 3));
    ck_assert_int_eq(sim_cfg_at_double(cfg, "b", n - 4, -1e9, 1e9, true, &v, &err), 0);
    ck_assert_double_eq(v, (double)(11 * (n - 4)));
    ck_assert_int_eq(sim_cfg_override(cfg, "a[20000]=1", &err), SIM_ESCENARIO);
    ck_assert_ptr_nonnull(strstr(err.msg, "index 20000 is past the end of $.a (length 20000)"));
    sim_cfg_destroy(cfg);
}
END_TEST

/* One --set per element of two long arrays in turn, in a shuffled order (a command line of
 * 40,000 straggler rules set in random order took 1.1 s more than in order): from the start or
 * the array's cursor each walked up to half the array, the links growing as the square of the
 * elements (in order and in reverse they were already linear). Each array's elements are now
 * indexed once, on the first read far from its cursor and its start: the links walked are
 * those of the two indexes, at most n - 1 each. */
START_TEST(override_sets_elements_in_any_order_one_link_each)
{
    size_t n = 20000;
    sim_cfg *cfg = parse_multiples(n, 3, 11);
    sim_err err;
    char set[64];
    double v = 0.0;
    for (size_t k = 0; k < n; k++) {
        size_t i = k * 7919 % n, j = (k * 12347 + 5) % n; /* both coprime to n: a permutation */
        snprintf(set, sizeof(set), "a[%zu]=%zu.5", i, 13 * i);
        ck_assert_int_eq(sim_cfg_override(cfg, set, &err), 0);
        snprintf(set, sizeof(set), "b[%zu]=-%zu", j, j);
        ck_assert_int_eq(sim_cfg_override(cfg, set, &err), 0);
    }
    ck_assert_uint_le(cfg->walked, 2 * (n - 1) + 2 * CFG_WALK_MAX); /* about n^2 / 3 before */
    unsigned long walked = cfg->walked;
    for (size_t k = 0; k < n; k++) {
        size_t i = (k * 4999 + 17) % n;
        ck_assert_int_eq(sim_cfg_at_double(cfg, "a", i, 0.0, 1e9, false, &v, &err), 0);
        ck_assert_double_eq(v, (double)(13 * i) + 0.5);
        ck_assert_int_eq(sim_cfg_at_double(cfg, "b", i, -1e9, 1e9, true, &v, &err), 0);
        ck_assert_double_eq(v, -(double)i);
    }
    ck_assert_uint_eq(cfg->walked, walked); /* reads through the indexes walk no link */
    ck_assert_int_eq(sim_cfg_override(cfg, "b[20000]=1", &err), SIM_ESCENARIO);
    ck_assert_ptr_nonnull(strstr(err.msg, "index 20000 is past the end of $.b (length 20000)"));
    sim_cfg_destroy(cfg);
}
END_TEST

/* Writes prefix + "[from, from + 1, ..., from + n - 1]" + suffix into buf. */
static const char *list_text(char *buf, size_t size, const char *prefix, size_t from, size_t n,
                             const char *suffix)
{
    size_t len = (size_t)snprintf(buf, size, "%s[", prefix);
    for (size_t i = 0; i < n; i++)
        len += (size_t)snprintf(buf + len, size - len, "%s%zu", i > 0 ? "," : "", from + i);
    snprintf(buf + len, size - len, "]%s", suffix);
    ck_assert_uint_lt(len + strlen(suffix) + 1, size);
    return buf;
}

/* An array's index (built by a read far from its cursor and its start) holds its elements
 * only until an edit replaces them: a --set of the array, of an element that is an array, or
 * sim_cfg_set_json of a key holding one. Each read after the edit sees the new elements and
 * their number, and a far read indexes them again. */
START_TEST(an_array_index_forgets_the_elements_an_edit_replaces)
{
    char text[1024];
    sim_cfg *cfg = cfgt_parse_ok(list_text(text, sizeof(text), "{\"a\": ", 0, 100, "}"));
    sim_err err;
    double v = 0.0;
    ck_assert_int_eq(sim_cfg_override(cfg, "a[90]=1.5", &err), 0); /* indexes a */
    ck_assert_uint_eq(cfg->walked, 99);
    ck_assert_int_eq(sim_cfg_override(cfg, "a=[5,6,7]", &err), 0);
    ck_assert_int_eq(sim_cfg_at_double(cfg, "a", 2, 0.0, 1e9, false, &v, &err), 0);
    ck_assert_double_eq(v, 7.0);
    ck_assert_int_eq(sim_cfg_override(cfg, "a[50]=1", &err), SIM_ESCENARIO);
    ck_assert_ptr_nonnull(strstr(err.msg, "index 50 is past the end of $.a (length 3)"));
    ck_assert_int_eq(sim_cfg_override(cfg, list_text(text, sizeof(text), "a=", 100, 100, ""), &err),
                     0);
    ck_assert_int_eq(sim_cfg_at_double(cfg, "a", 60, 0.0, 1e9, false, &v, &err), 0);
    ck_assert_double_eq(v, 160.0);
    /* an element that is an array, indexed, then replaced */
    ck_assert_int_eq(
        sim_cfg_override(cfg, list_text(text, sizeof(text), "a[70]=", 0, 60, ""), &err), 0);
    ck_assert_int_eq(sim_cfg_override(cfg, "a[70][50]=2.5", &err), 0);
    ck_assert_int_eq(sim_cfg_override(cfg, "a[70]=[9]", &err), 0);
    ck_assert_int_eq(sim_cfg_override(cfg, "a[70][50]=1", &err), SIM_ESCENARIO);
    ck_assert_ptr_nonnull(strstr(err.msg, "index 50 is past the end of $.a[70] (length 1)"));
    ck_assert_int_eq(sim_cfg_at_double(cfg, "a", 69, 0.0, 1e9, false, &v, &err), 0);
    ck_assert_double_eq(v, 169.0);
    sim_cfg_destroy(cfg);
    /* a key of an element, replaced by sim_cfg_set_json */
    cfg = cfgt_parse_ok(list_text(text, sizeof(text), "{\"r\": [{\"w\": ", 0, 100, "}]}"));
    sim_cfg *r = NULL;
    ck_assert_int_eq(sim_cfg_at(cfg, "r", 0, &r, &err), 0);
    ck_assert_int_eq(sim_cfg_at_double(r, "w", 70, 0.0, 1e9, false, &v, &err), 0);
    ck_assert_double_eq(v, 70.0);
    ck_assert_int_eq(sim_cfg_set_json(r, "w", "[1, 2]", &err), 0);
    ck_assert_int_eq(sim_cfg_at_double(r, "w", 1, 0.0, 1e9, false, &v, &err), 0);
    ck_assert_double_eq(v, 2.0);
    ck_assert_int_eq(sim_cfg_at_double(r, "w", 70, 0.0, 1e9, false, &v, &err), SIM_EINVAL);
    sim_cfg_destroy(cfg);
}
END_TEST

START_TEST(set_json_replaces_a_key_in_place_or_appends_it_and_marks_it)
{
    sim_cfg *cfg =
        cfgt_parse_ok("{\"rules\": [{\"kind\": \"fixed\", \"count\": 2, \"n\": {\"x\": 1}}]}");
    sim_err err;
    sim_cfg *r = NULL, *inner = NULL;
    int64_t count = 0;
    char kind[16];
    ck_assert_int_eq(sim_cfg_at(cfg, "rules", 0, &r, &err), 0);
    ck_assert_int_eq(sim_cfg_string(r, "kind", kind, sizeof(kind), &err), 0);
    ck_assert_int_eq(sim_cfg_int(r, "count", 1, 8, &count, &err), 0);
    ck_assert_int_eq(sim_cfg_child(r, "n", &inner, &err), 0);
    ck_assert_int_eq(sim_cfg_set_json(r, "workers", "[3, 5]", &err), 0);
    ck_assert_int_eq(sim_cfg_set_json(r, "count", "null", &err), 0);
    ck_assert_int_eq(sim_cfg_set_json(r, "n", "{\"x\": 2.385}", &err), 0);
    cfgt_check_print(cfg, "{\"rules\":[{\"kind\":\"fixed\",\"count\":null,\"n\":{\"x\":2.385},"
                          "\"workers\":[3,5]}]}");
    ck_assert_int_eq(sim_cfg_check_unused(r, &err), 0); /* "workers" is marked */
    double x = 0.0;
    ck_assert_int_eq(sim_cfg_double(inner, "x", 0.0, 5.0, &x, &err), 0); /* still valid */
    ck_assert_double_eq(x, 2.385);
    ck_assert_int_eq(sim_cfg_set_json(r, "bad", "[1,", &err), SIM_EINVAL);
    cfgt_check_err(&err, SIM_EINVAL, "$.rules[0].bad", "value is not JSON: [1,");
    sim_cfg_destroy(cfg);
}
END_TEST

/* ---- override ----------------------------------------------------------------------------- */

static int set(sim_cfg *cfg, const char *assignment, sim_err *err)
{
    sim_err_clear(err);
    return sim_cfg_override(cfg, assignment, err);
}

/* Parses `json`, applies the `n` overrides in turn (each must succeed) and checks the printed
 * tree against `want`. */
static void expect_overrides(const char *json, const char *const *sets, size_t n, const char *want)
{
    sim_cfg *cfg = cfgt_parse_ok(json);
    sim_err err;
    for (size_t i = 0; i < n; i++)
        ck_assert_msg(set(cfg, sets[i], &err) == 0, "%s: %s", sets[i], err.msg);
    cfgt_check_print(cfg, want);
    sim_cfg_destroy(cfg);
}

START_TEST(override_replaces_a_value_in_place)
{
    static const char *const sets[] = { "seed=42", "$.workers=64" };
    expect_overrides("{\"seed\": 7, \"workers\": 16}", sets, 2, "{\"seed\":42,\"workers\":64}");
}
END_TEST

START_TEST(override_creates_missing_intermediate_objects)
{
    static const char *const sets[] = { "a.b.c=2.385", "n.x=1" };
    expect_overrides("{\"n\": null}", sets, 2, "{\"n\":{\"x\":1},\"a\":{\"b\":{\"c\":2.385}}}");
}
END_TEST

START_TEST(override_sets_array_elements_by_index)
{
    static const char *const sets[] = { "s[0].slowdown=3.125", "s[1].m[0][1]=9",
                                        "s[1].m[1]=\"x\"" };
    expect_overrides("{\"s\": [{\"slowdown\": 2}, {\"m\": [[1, 2], [3]]}]}", sets, 3,
                     "{\"s\":[{\"slowdown\":3.125},{\"m\":[[1,9],\"x\"]}]}");
}
END_TEST

START_TEST(override_parses_json_values_and_takes_other_text_as_a_string)
{
    static const char *const sets[] = {
        "name=adpsgd", "q=\"7\"",    "t=true", "z=null", "o=[{\"workers\":[1],\"latency_us\":5}]",
        "e=",          "w=5 workers"
    };
    expect_overrides("{}", sets, 7,
                     "{\"name\":\"adpsgd\",\"q\":\"7\",\"t\":true,\"z\":null,\"o\":[{\"workers\":["
                     "1],\"latency_us\":5}],\"e\":\"\",\"w\":\"5 workers\"}");
}
END_TEST

START_TEST(override_rejects_a_missing_equals_sign_and_malformed_paths)
{
    sim_cfg *cfg = cfgt_parse_ok("{}");
    sim_err err;
    ck_assert_int_eq(set(cfg, "workers", &err), SIM_ESCENARIO);
    cfgt_check_err(&err, SIM_ESCENARIO, "--set workers", "expected PATH=VALUE");
    ck_assert_str_eq(err.file, "dir/t.json");
    static const char *const bad[] = { "a..b=1", "a[x]=1", "[0]=1", "a.=1", "=1", "a[1=2", "a]=1" };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        ck_assert_int_eq(set(cfg, bad[i], &err), SIM_ESCENARIO);
        ck_assert_str_eq(err.msg, "invalid path (expected keys and [index] joined by dots)");
    }
    cfgt_check_print(cfg, "{}");
    sim_cfg_destroy(cfg);
}
END_TEST

START_TEST(override_rejects_paths_through_the_wrong_types)
{
    sim_cfg *cfg = cfgt_parse_ok("{\"seed\": 7, \"a\": {}, \"list\": [{}, {}]}");
    sim_err err;
    set(cfg, "seed.x=1", &err);
    cfgt_check_err(&err, SIM_ESCENARIO, "--set seed.x", "$.seed is a number, not an object");
    set(cfg, "a[0]=1", &err);
    cfgt_check_err(&err, SIM_ESCENARIO, "--set a[0]", "$.a is an object, not an array");
    set(cfg, "list[5].x=1", &err);
    cfgt_check_err(&err, SIM_ESCENARIO, "--set list[5].x",
                   "index 5 is past the end of $.list (length 2)");
    set(cfg, "list[2]=1", &err);
    cfgt_check_err(&err, SIM_ESCENARIO, "--set list[2]",
                   "index 2 is past the end of $.list (length 2)");
    set(cfg, "other[0].x=1", &err);
    cfgt_check_err(&err, SIM_ESCENARIO, "--set other[0].x", "$.other is absent, cannot index it");
    cfgt_check_print(cfg, "{\"seed\":7,\"a\":{},\"list\":[{},{}]}");
    sim_cfg_destroy(cfg);
}
END_TEST

START_TEST(override_rejects_broken_json_and_duplicate_keys_in_values)
{
    sim_cfg *cfg = cfgt_parse_ok("{}");
    sim_err err;
    ck_assert_int_eq(set(cfg, "x=[1,2", &err), SIM_ESCENARIO);
    ck_assert_str_eq(err.path, "--set x");
    ck_assert_str_eq(err.msg, "invalid JSON value at column 5");
    set(cfg, "net.o={\"a\":1,\"a\":2}", &err);
    cfgt_check_err(&err, SIM_ESCENARIO, "--set net.o", "duplicate key $.net.o.a in the value");
    cfgt_check_print(cfg, "{}");
    sim_cfg_destroy(cfg);
}
END_TEST

START_TEST(override_keeps_children_valid_when_it_replaces_their_object)
{
    sim_cfg *cfg = cfgt_parse_ok("{\"net\": {\"a\": 1, \"b\": {\"c\": 2}}}");
    sim_err err;
    sim_cfg *net = NULL, *b = NULL;
    double a = 0.0;
    sim_cfg_child(cfg, "net", &net, &err);
    sim_cfg_child(net, "b", &b, &err);
    ck_assert_int_eq(set(net, "net={\"a\":2.385}", &err), 0); /* applies to the root */
    ck_assert_int_eq(sim_cfg_double(net, "a", 0.0, 5.0, &a, &err), 0);
    ck_assert_double_eq(a, 2.385);
    ck_assert(!sim_cfg_has(b, "zz")); /* still readable memory */
    cfgt_check_print(cfg, "{\"net\":{\"a\":2.385}}");
    sim_cfg_destroy(cfg);
}
END_TEST

Suite *test_suite(void)
{
    Suite *s = suite_create("cfg_structure");
    TCase *tc = tcase_create("structure");
    tcase_add_test(tc, require_reports_a_missing_key_and_accepts_null);
    tcase_add_test(tc, has_and_is_null_tell_absent_null_and_set_apart);
    tcase_add_test(tc, child_returns_the_same_object_each_time_with_its_path);
    tcase_add_test(tc, child_rejects_a_value_that_is_not_an_object);
    tcase_add_test(tc, array_len_counts_elements_and_rejects_non_arrays);
    tcase_add_test(tc, at_gives_object_elements_with_indexed_paths);
    tcase_add_test(tc, at_double_checks_each_element);
    tcase_add_test(tc, at_double_reads_long_arrays_in_order_and_out_of_order);
    tcase_add_test(tc, set_json_replaces_a_key_in_place_or_appends_it_and_marks_it);
    tcase_add_test(tc, at_reads_arrays_in_turn_one_link_a_read);
    suite_add_tcase(s, tc);

    tc = tcase_create("override");
    tcase_add_test(tc, override_replaces_a_value_in_place);
    tcase_add_test(tc, override_creates_missing_intermediate_objects);
    tcase_add_test(tc, override_sets_array_elements_by_index);
    tcase_add_test(tc, override_parses_json_values_and_takes_other_text_as_a_string);
    tcase_add_test(tc, override_rejects_a_missing_equals_sign_and_malformed_paths);
    tcase_add_test(tc, override_rejects_paths_through_the_wrong_types);
    tcase_add_test(tc, override_rejects_broken_json_and_duplicate_keys_in_values);
    tcase_add_test(tc, override_keeps_children_valid_when_it_replaces_their_object);
    tcase_add_test(tc, override_sets_elements_in_order_one_link_each);
    tcase_add_test(tc, override_sets_elements_in_any_order_one_link_each);
    tcase_add_test(tc, an_array_index_forgets_the_elements_an_edit_replaces);
    suite_add_tcase(s, tc);
    return s;
}
