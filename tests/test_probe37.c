/* Issue 38, the sixteenth probe (classes 13 to 19 and the command line): malformed option
 * values refused as usage errors; a failure rule of many workers applied in linear time. Each
 * case failed before its fix.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "harness.h"

typedef harness_result result;

/* ---- The command line --------------------------------------------------------------------- */

/* plot's --size read each of W and H with strtod, which stopped at "3." in "3.x2" and drew 3 x
 * 2 inches (exit 0); so did ".5", "+3" and "1e1" pass as numbers. Each side is now D or D.D,
 * and anything else is refused like the other malformed values (exit 2, naming --size, no
 * figures written); "3.5x2.5" and "10X3" still draw. */
START_TEST(a_malformed_plot_size_is_refused)
{
    char *dir = harness_tmpdir("probe37");
    char sw[600], o[600];
    harness_sweep_in(dir, harness_quick_json, harness_protocols_sweep, sw, o, sizeof(sw));
    static const char *const bad[] = { "3.x2", "3x2.",  ".5x2",  "3x.5",   "+3x2",
                                       "3x+2", "1e1x2", "3x2e0", "3..5x2", "3x2 " };
    char figs[700];
    snprintf(figs, sizeof(figs), "%s/figs", dir);
    for (size_t c = 0; c < sizeof(bad) / sizeof(bad[0]); c++) {
        result res = harness_hetsim((const char *[]){ "plot", o, "--by", "protocol.name", "--size",
                                                      bad[c], "-o", figs, NULL });
        ck_assert_msg(res.status == 2 && strstr(res.err, "--size") != NULL && res.out[0] == '\0' &&
                          !harness_exists(figs),
                      "--size %s: exit %d\n%s", bad[c], res.status, res.err);
    }
    static const char *const good[] = { "3.5x2.5", "10X3" };
    for (size_t c = 0; c < 2; c++) {
        result res = harness_hetsim((const char *[]){ "plot", o, "--by", "protocol.name", "--size",
                                                      good[c], "-o", figs, NULL });
        ck_assert_msg(res.status == 0, "--size %s: exit %d\n%s", good[c], res.status, res.err);
    }
    harness_cleanup(dir);
}
END_TEST

/* ---- Lists a user can make long ----------------------------------------------------------- */

/* A failure rule naming N workers took each one down with a scan of every network link and
 * message slot and an update of every worker's accounting: N^2 steps at one instant. 10,000
 * workers of an adpsgd run failing at 0.5 ms took 3.0 s of CPU, 20,000 about 12 s (release
 * build); each failure now touches only what it aborts (nothing in flight here: the workers
 * are computing): 0.13 s for 10,000. The run's 20,000 failures and recoveries must take less
 * than 5 s of CPU (debug build, under load: about 1 s). */
START_TEST(a_failure_rule_of_many_workers_is_applied_in_linear_time)
{
    enum {
        N = 20000
    };
    char *dir = harness_tmpdir("probe37");
    size_t size = (size_t)N * 8 + 1024, len = 0;
    char *text = malloc(size);
    ck_assert_ptr_nonnull(text);
    len += (size_t)snprintf(text, size,
                            "{\"seed\": 5, \"workers\": %d, \"compute\": {\"iteration_ms\": 10},\n"
                            " \"workload\": {\"model\": {\"name\": \"none\"}, \"message_bytes\": "
                            "4000},\n \"protocol\": {\"name\": \"adpsgd\"}, \"stop\": {\"time_s\": "
                            "0.001}, \"eval\": {\"every_s\": 0.001},\n \"stragglers\": [{\"kind\": "
                            "\"failure\", \"at_s\": 0.0005, \"recover_s\": 0.0008, \"workers\": [1",
                            N);
    for (int w = 2; w < N; w++)
        len += (size_t)snprintf(text + len, size - len, ", %d", w);
    len += (size_t)snprintf(text + len, size - len, "]}]}\n");
    ck_assert_uint_lt(len, size);
    harness_write(dir, "s.json", text);
    free(text);
    char s[600], r[600];
    snprintf(s, sizeof(s), "%s/s.json", dir);
    snprintf(r, sizeof(r), "%s/r", dir);
    double before = harness_children_cpu_s();
    result res = harness_hetsim((const char *[]){ "run", s, "-o", r, "--quiet", NULL });
    double cpu = harness_children_cpu_s() - before;
    ck_assert_msg(res.status == 0, "exit %d\n%s", res.status, res.err);
    ck_assert_msg(cpu < 5, "%d failures at one instant took %.2f s of CPU", N - 1, cpu);
    harness_cleanup(dir);
}
END_TEST

/* ---- Parser limits ------------------------------------------------------------------------ */

/* `[` n times, then `]` n times, after `prefix`, in a malloc'd string. */
static char *nested(const char *prefix, size_t n)
{
    size_t len = strlen(prefix);
    char *s = malloc(len + 2 * n + 1);
    ck_assert_ptr_nonnull(s);
    memcpy(s, prefix, len);
    memset(s + len, '[', n);
    memset(s + len + n, ']', n);
    s[len + 2 * n] = '\0';
    return s;
}

/* A scenario file is refused past 1000 levels (cJSON's limit), but a --set value was parsed
 * alone and then put in the tree: `--set workload.model.extra=` of 998 nested arrays made a
 * scenario of 1001 levels, run (exit 0) into a run.json that plot, report and check then
 * refused; a path of 1001 keys (`--set a.a.a...=1`) made 1001 levels too. Both are refused now,
 * exit 2, naming the --set and the limit; 997 arrays there (1000 levels) still load. */
START_TEST(a_set_never_nests_the_scenario_past_the_parsers_limit)
{
    char *dir = harness_tmpdir("probe37");
    harness_write(dir, "s.json", harness_quick_json);
    char s[600];
    snprintf(s, sizeof(s), "%s/s.json", dir);
    char *deep = nested("workload.model.extra=", 998);
    result res = harness_hetsim((const char *[]){ "validate", s, "--set", deep, NULL });
    ck_assert_msg(res.status == 2 &&
                      strstr(res.err,
                             "--set workload.model.extra: the scenario would be nested "
                             "1001 levels deep, deeper than 1000 (the parser's limit)") != NULL,
                  "998 arrays: exit %d\n%.400s", res.status, res.err);
    free(deep);
    deep = nested("workload.model.extra=", 997);
    res = harness_hetsim((const char *[]){ "validate", s, "--set", deep, NULL });
    ck_assert_msg(res.status == 2 && strstr(res.err, "$.workload.model.extra: unknown key") != NULL,
                  "997 arrays: exit %d\n%.400s", res.status, res.err);
    free(deep);
    char *path = malloc(2 * 1001 + 3);
    ck_assert_ptr_nonnull(path);
    size_t len = 0;
    for (int k = 0; k < 1001; k++)
        len += (size_t)sprintf(path + len, k == 0 ? "a" : ".a");
    strcpy(path + len, "=1");
    res = harness_hetsim((const char *[]){ "validate", s, "--set", path, NULL });
    ck_assert_msg(res.status == 2 && strstr(res.err, "nested 1001 levels deep") != NULL,
                  "a path of 1001 keys: exit %d\n%.400s", res.status, res.err);
    free(path);
    harness_cleanup(dir);
}
END_TEST

/* A PyTorch module's argument is the one place of a scenario that takes any JSON. One of 997
 * nested arrays (1000 levels in the scenario, the file's limit) was run, exit 0, into a run.json
 * that holds it 4 levels down (1001): `plot RUN` then refused it ("nested deeper than 1000
 * levels"), as report and check would. Past 990 levels the model server, whose Python decoder
 * stays within 1000 frames, died with a RecursionError traceback ("model server 0 died"). The
 * argument may be 996 levels deep now, which runs and draws; 997 is refused, exit 2, naming its
 * JSON path and the limit. Skipped (passes) without a python3 that imports torch. */
START_TEST(a_module_argument_nested_past_what_run_json_holds_is_refused)
{
    char *dir = harness_tmpdir("probe37");
    harness_write(dir, "m.py",
                  "import torch.nn as nn\n\n\ndef build(input_shape, classes, extra=None):\n"
                  "    return nn.Linear(input_shape[0], classes)\n");
    harness_write(dir, "s.json",
                  "{\"seed\": 7, \"workers\": 2, \"compute\": {\"iteration_ms\": 10},\n"
                  " \"workload\": {\"dataset\": {\"name\": \"synthetic\", \"samples\": 64,\n"
                  "   \"test_samples\": 16, \"dim\": 4, \"classes\": 2},\n"
                  "   \"model\": {\"name\": \"torch\", \"module\": \"m.py\"}, \"batch\": 8, "
                  "\"lr\": 0.1},\n"
                  " \"protocol\": {\"name\": \"allreduce\"}, \"stop\": {\"time_s\": 0.05},\n"
                  " \"eval\": {\"every_s\": 0.02, \"samples\": 16}}\n");
    char s[600], r[600], p[600];
    snprintf(s, sizeof(s), "%s/s.json", dir);
    snprintf(r, sizeof(r), "%s/r", dir);
    snprintf(p, sizeof(p), "%s/p", dir);
    result res = harness_hetsim((const char *[]){ "validate", s, NULL });
    if (res.status != 0 && strstr(res.err, "torch") != NULL) {
        fprintf(stderr, "probe37: no PyTorch, skipped: %.200s\n", res.err);
        harness_cleanup(dir);
        return;
    }
    ck_assert_msg(res.status == 0, "validate: exit %d\n%.400s", res.status, res.err);
    char *deep = nested("workload.model.extra=", 996);
    res = harness_hetsim((const char *[]){ "run", s, "-o", r, "--quiet", "--set", deep, NULL });
    free(deep);
    ck_assert_msg(res.status == 0, "996 levels: exit %d\n%.600s", res.status, res.err);
    res = harness_hetsim((const char *[]){ "plot", r, "-o", p, NULL });
    ck_assert_msg(res.status == 0, "plot of 996 levels: exit %d\n%.400s", res.status, res.err);
    snprintf(r, sizeof(r), "%s/r2", dir);
    deep = nested("workload.model.extra=", 997);
    res = harness_hetsim((const char *[]){ "run", s, "-o", r, "--quiet", "--set", deep, NULL });
    free(deep);
    ck_assert_msg(res.status == 2 &&
                      strstr(res.err, "$.workload.model.extra: nested 997 levels deep, more than "
                                      "996") != NULL &&
                      strstr(res.err, "1000 (the JSON parser's limit)") != NULL &&
                      !harness_exists(r),
                  "997 levels: exit %d\n%.400s", res.status, res.err);
    harness_cleanup(dir);
}
END_TEST

/* A space other than U+0020 in a message was printed raw: a trace's worker "0<U+00A0>" was
 * refused as `got "0 "`, which reads as if a plain space were at fault; a scenario key "n<U+3000>b"
 * likewise. Each such space (U+00A0, U+1680, U+2000-U+200A, U+202F, U+205F, U+3000) is written
 * as JSON escapes it, as the invisible format characters are. */
START_TEST(a_space_other_than_u0020_in_a_message_is_escaped)
{
    char *dir = harness_tmpdir("probe37");
    char s[600];
    snprintf(s, sizeof(s), "%s/s.json", dir);
    harness_write(dir, "t.csv", "0.0,0\xc2\xa0,2\n");
    harness_write(dir, "s.json",
                  "{\"seed\": 5, \"workers\": 3, \"compute\": {\"iteration_ms\": 10},\n"
                  " \"stragglers\": [{\"kind\": \"trace\", \"file\": \"t.csv\"}],\n"
                  " \"workload\": {\"model\": {\"name\": \"none\"}, \"message_bytes\": 4000},\n"
                  " \"protocol\": {\"name\": \"allreduce\"}, \"stop\": {\"time_s\": 0.2}}\n");
    result res = harness_hetsim((const char *[]){ "validate", s, NULL });
    ck_assert_msg(res.status == 2, "trace: exit %d\n%s", res.status, res.err);
    ck_assert_msg(strstr(res.err, "0\\u00a0") != NULL && strstr(res.err, "\xc2\xa0") == NULL,
                  "trace: %s", res.err);
    harness_write(dir, "s.json",
                  "{\"seed\": 5, \"workers\": 3, \"workload\": {\"model\": {\"name\": \"none\"},"
                  " \"message_bytes\": 4000}, \"protocol\": {\"name\": \"allreduce\"},"
                  " \"n\xe3\x80\x80"
                  "b\": 1}\n");
    res = harness_hetsim((const char *[]){ "validate", s, NULL });
    ck_assert_msg(res.status == 2, "key: exit %d\n%s", res.status, res.err);
    ck_assert_msg(strstr(res.err, "n\\u3000b") != NULL && strstr(res.err, "\xe3\x80\x80") == NULL,
                  "key: %s", res.err);
    harness_cleanup(dir);
}
END_TEST

Suite *test_suite(void)
{
    Suite *s = suite_create("probe37");
    TCase *cli = tcase_create("cli");
    tcase_add_test(cli, a_malformed_plot_size_is_refused);
    tcase_add_test(cli, a_space_other_than_u0020_in_a_message_is_escaped);
    tcase_set_timeout(cli, 120);
    suite_add_tcase(s, cli);
    TCase *linear = tcase_create("linear");
    tcase_add_test(linear, a_failure_rule_of_many_workers_is_applied_in_linear_time);
    tcase_set_timeout(linear, 240);
    suite_add_tcase(s, linear);
    TCase *limits = tcase_create("limits");
    tcase_add_test(limits, a_set_never_nests_the_scenario_past_the_parsers_limit);
    tcase_add_test(limits, a_module_argument_nested_past_what_run_json_holds_is_refused);
    tcase_set_timeout(limits, 240);
    suite_add_tcase(s, limits);
    return s;
}
