/* Tests of scenario/scenario: the corpus of malformed scenarios in tests/scenarios_bad (one
 * NAME.json per mistake, with the expected "JSONPATH: MESSAGE" line in NAME.err), other bad
 * input and long lists. Run from the repository root. */
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <check.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>

#include "harness.h"
#include "harness_scenario.h"
#include "runtime/run.h"
#include "scenario/scenario.h"
#include "sim/cfg.h"
#include "sim/engine.h"
#include "sim/err.h"
#include "sim/rng.h"

#define BAD_DIR "tests/scenarios_bad"

/* ---- bad input ------------------------------------------------------------------------------ */

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Replaces "{protocols}" in `text` with the registry's names, comma separated: the fixtures
 * do not change when a protocol is added. */
static void expand_protocols(char *text, size_t size)
{
    char *at = strstr(text, "{protocols}");
    if (at == NULL)
        return;
    char names[512] = "", rest[512];
    size_t n;
    const proto_ops *const *all = proto_list(&n);
    for (size_t i = 0; i < n; i++) {
        size_t used = strlen(names);
        snprintf(names + used, sizeof(names) - used, "%s%s", i > 0 ? ", " : "", all[i]->name);
    }
    snprintf(rest, sizeof(rest), "%s", at + strlen("{protocols}"));
    snprintf(at, size - (size_t)(at - text), "%s%s", names, rest);
}

/* One malformed scenario: it must fail with the expected code, file, path and message. */
static void check_bad(const char *name)
{
    char json[512], errfile[512], csv[512], txt[512], expected[512],
        got[SIM_ERR_PATH_MAX + SIM_ERR_MSG_MAX + 4];
    size_t len = strlen(name) - 5; /* without ".json" */
    snprintf(json, sizeof(json), "%s/%s", BAD_DIR, name);
    snprintf(errfile, sizeof(errfile), "%s/%.*s.err", BAD_DIR, (int)len, name);
    snprintf(csv, sizeof(csv), "%s/%.*s.csv", BAD_DIR, (int)len, name);
    FILE *f = fopen(errfile, "r");
    ck_assert_msg(f != NULL, "%s: missing", errfile);
    ck_assert_msg(fgets(expected, sizeof(expected), f) != NULL, "%s: empty", errfile);
    fclose(f);
    expected[strcspn(expected, "\n")] = '\0';
    expand_protocols(expected, sizeof(expected));

    /* Errors the loader cannot see (protocol, model, data, schedule) come from the run's
     * check, which `hetsim run` and `validate` do before anything else. */
    sim_err err;
    sim_scenario *sc = sim_scenario_load(json, NULL, 0, &err);
    int rc = sc == NULL ? err.code : harness_check(sc, &err);
    sim_scenario_destroy(sc);
    ck_assert_msg(rc != SIM_OK, "%s: accepted", json);
    bool trace = strncmp(name, "trace_", 6) == 0;   /* errors about NAME.csv name that file */
    bool libsvm = strncmp(name, "libsvm_", 7) == 0; /* and about NAME.txt, that data file */
    bool unreadable = trace && strstr(err.msg, "cannot open") == err.msg;
    ck_assert_msg(err.code == (unreadable ? SIM_EIO : SIM_ESCENARIO), "%s: code %d", json,
                  err.code);
    snprintf(txt, sizeof(txt), "%s/%.*s.txt", BAD_DIR, (int)len, name);
    ck_assert_str_eq(err.file, trace ? csv : libsvm ? txt : json);
    if (err.path[0] != '\0')
        snprintf(got, sizeof(got), "%s: %s", err.path, err.msg);
    else
        snprintf(got, sizeof(got), "%s", err.msg);
    ck_assert_msg(strcmp(got, expected) == 0, "%s:\n  expected: %s\n  got:      %s", json, expected,
                  got);
}

START_TEST(loader_rejects_every_file_of_the_bad_corpus_as_expected)
{
    DIR *dir = opendir(BAD_DIR);
    ck_assert_ptr_nonnull(dir);
    char **names = NULL;
    size_t n = 0, cap = 0;
    for (struct dirent *e = readdir(dir); e != NULL; e = readdir(dir)) {
        size_t len = strlen(e->d_name);
        if (len <= 5 || strcmp(e->d_name + len - 5, ".json") != 0)
            continue;
        if (n == cap) {
            cap = cap == 0 ? 64 : 2 * cap;
            names = realloc(names, cap * sizeof(*names));
            ck_assert_ptr_nonnull(names);
        }
        names[n] = malloc(len + 1);
        ck_assert_ptr_nonnull(names[n]);
        memcpy(names[n++], e->d_name, len + 1);
    }
    closedir(dir);
    qsort(names, n, sizeof(*names), by_name);
    ck_assert_uint_ge(n, 45);
    for (size_t i = 0; i < n; i++) {
        check_bad(names[i]);
        free(names[i]);
    }
    free(names);
}
END_TEST

START_TEST(loader_reports_a_missing_file_as_an_io_error)
{
    sim_err err;
    ck_assert_ptr_null(sim_scenario_load(BAD_DIR "/no-such-file.json", NULL, 0, &err));
    ck_assert_int_eq(err.code, SIM_EIO);
    ck_assert_str_eq(err.file, BAD_DIR "/no-such-file.json");
    ck_assert_str_eq(err.path, "");
    ck_assert_str_eq(err.msg, "cannot open: No such file or directory");
}
END_TEST

START_TEST(loader_reports_a_directory_as_unreadable)
{
    sim_err err;
    ck_assert_ptr_null(sim_scenario_load("tests", NULL, 0, &err));
    ck_assert_int_eq(err.code, SIM_EIO);
    ck_assert_str_eq(err.file, "tests");
    ck_assert_str_eq(err.msg, "cannot read: Is a directory");
}
END_TEST

/* Files that never end or hold NUL bytes (issue 38): a scenario or a trace read from /dev/zero
 * is refused at its first block or line (both were read until memory ran out), a NUL byte in a
 * trace row is refused naming the line (it cut the row silently), and a byte-order mark that
 * opens a trace is dropped, as a scenario's and a profile's are (it was refused as a time). */
START_TEST(loader_refuses_nul_bytes_in_a_scenario_or_trace_and_takes_a_traces_bom)
{
    sim_err err;
    ck_assert_ptr_null(sim_scenario_load("/dev/zero", NULL, 0, &err));
    ck_assert_msg(err.code == SIM_ESCENARIO && strstr(err.msg, "NUL byte") != NULL, "%s", err.msg);
    char *dir = harness_tmpdir("scenario"), set[1200];
    const char *sets[] = { set };
    snprintf(set, sizeof(set), "stragglers[4].file=/dev/zero");
    ck_assert_ptr_null(sim_scenario_load(FULL, sets, 1, &err));
    ck_assert_str_eq(err.msg, "line 1: a NUL byte");
    ck_assert_str_eq(err.file, "/dev/zero");
    static const char nul[] = "time_s,worker,slowdown\n0.5,1,2.75\n1.25,2,3\0junk\n";
    snprintf(set, sizeof(set), "%s/nul.csv", dir);
    FILE *f = fopen(set, "wb");
    ck_assert_ptr_nonnull(f);
    ck_assert_uint_eq(fwrite(nul, 1, sizeof(nul) - 1, f), sizeof(nul) - 1);
    fclose(f);
    snprintf(set, sizeof(set), "stragglers[4].file=%s/nul.csv", dir);
    ck_assert_ptr_null(sim_scenario_load(FULL, sets, 1, &err));
    ck_assert_str_eq(err.msg, "line 3: a NUL byte");
    ck_assert_str_eq(err.path, "$.stragglers[4].file");
    harness_write(dir, "bom.csv", "\xef\xbb\xbftime_s,worker,slowdown\r\n0.5,1,2.75\r\n");
    snprintf(set, sizeof(set), "stragglers[4].file=%s/bom.csv", dir);
    sim_scenario *sc = sim_scenario_load(FULL, sets, 1, &err);
    ck_assert_msg(sc != NULL, "%s", err.msg);
    ck_assert_uint_eq(sc->stragglers[4].ntrace, 1);
    ck_assert_int_eq(sc->stragglers[4].trace[0].time_ns, 500000000);
    ck_assert_double_eq(sc->stragglers[4].trace[0].slowdown, 2.75);
    sim_scenario_destroy(sc);
    harness_cleanup(dir);
}
END_TEST

START_TEST(loader_accepts_a_null_error_and_destroy_accepts_null)
{
    ck_assert_ptr_null(sim_scenario_load(BAD_DIR "/workers_zero.json", NULL, 0, NULL));
    ck_assert_ptr_null(sim_scenario_load(BAD_DIR "/trace_bad_worker.json", NULL, 0, NULL));
    sim_scenario_destroy(NULL);
}
END_TEST

START_TEST(loader_caps_the_workers_selected_over_all_rules)
{
    const char *sets[] = { "workers=1048576", "stragglers=[{\"kind\":\"fixed\",\"slowdown\":2},"
                                              "{\"kind\":\"fixed\",\"slowdown\":2}]" };
    sim_scenario *sc = sct_load_ok(MINIMAL, sets, 2); /* the most workers: fine */
    ck_assert_uint_eq(sc->stragglers[1].nworkers, 1048576);
    sim_scenario_destroy(sc);
    char many[4096];
    size_t len = (size_t)snprintf(many, sizeof(many), "stragglers=[");
    for (int i = 0; i < 65; i++)
        len += (size_t)snprintf(many + len, sizeof(many) - len,
                                "%s{\"kind\":\"fixed\",\"slowdown\":2}", i > 0 ? "," : "");
    snprintf(many + len, sizeof(many) - len, "]");
    sim_err err;
    const char *too_many[] = { "workers=1048576", many };
    ck_assert_ptr_null(sim_scenario_load(MINIMAL, too_many, 2, &err));
    ck_assert_str_eq(err.path, "$.stragglers[64]");
    ck_assert_str_eq(err.msg, "selects too many workers: at most 67108864 over all rules");
}
END_TEST

/* ---- long lists -------------------------------------------------------------------------- */

/* A scenario of 8 workers whose `key` (a root key, or "network") holds `n` entries made by
 * `entry`, loaded from text. */
static sim_scenario *load_long(const char *head, size_t n,
                               int (*entry)(char *buf, size_t size, size_t i), const char *tail)
{
    size_t size = 1024 + n * 128, len = 0;
    char *text = malloc(size);
    ck_assert_ptr_nonnull(text);
    len += (size_t)snprintf(text, size,
                            "{\"seed\": 7, \"workers\": 8, \"workload\": {\"model\": {\"name\":"
                            " \"none\"}, \"message_bytes\": 4096}, \"protocol\": {\"name\":"
                            " \"allreduce\"}, %s",
                            head);
    for (size_t i = 0; i < n; i++) {
        len += (size_t)snprintf(text + len, size - len, "%s", i > 0 ? ", " : "");
        len += (size_t)entry(text + len, size - len, i);
    }
    len += (size_t)snprintf(text + len, size - len, "%s}", tail);
    sim_err err;
    sim_scenario *sc = sim_scenario_parse(text, len, "long.json", NULL, 0, &err);
    ck_assert_msg(sc != NULL, "%s: %s", err.path, err.msg);
    free(text);
    return sc;
}

/* Every kind of rule whose reading writes into the tree: a list, a count drawn, a link
 * without an end, a failure without a recovery. */
static int rule(char *buf, size_t size, size_t i)
{
    switch (i % 4) {
    case 0:
        return snprintf(buf, size, "{\"kind\": \"fixed\", \"workers\": [%zu], \"slowdown\": 1}",
                        i % 8);
    case 1:
        return snprintf(buf, size,
                        "{\"kind\": \"window\", \"count\": 2, \"from_s\": %zu.5,"
                        " \"to_s\": %zu.75, \"slowdown\": 1}",
                        i, i);
    case 2:
        return snprintf(buf, size,
                        "{\"kind\": \"link\", \"workers\": [%zu, %zu], \"from_s\": %zu,"
                        " \"extra_latency_ms\": 2.385}",
                        i % 8, (i + 3) % 8, i);
    default:
        return snprintf(buf, size, "{\"kind\": \"failure\", \"workers\": [%zu], \"at_s\": %zu.125}",
                        i % 8, i);
    }
}

static int host_override(char *buf, size_t size, size_t i)
{
    return snprintf(buf, size, "{\"workers\": [%zu, %zu], \"latency_us\": %zu.5}", i % 8,
                    (i + 5) % 8, 10 + i % 7);
}

/* Rules reached by a walk of the list from its start once the cursor had moved to a rule's
 * own workers, and writes that went down the tree from the root, made 100,000 rules take 13 s
 * (test_cfg holds the walk linear); here each rule's resolved values land at the rule. */
START_TEST(loader_records_at_each_of_many_rules_what_it_resolves_to)
{
    sim_scenario *sc = load_long("\"stragglers\": [", 20000, rule, "]");
    ck_assert_uint_eq(sc->nstragglers, 20000);
    const sim_straggler *st = sc->stragglers;
    sct_check_ids(&st[19996], (const uint32_t[]){ 4 }, 1);
    ck_assert_uint_eq(st[19997].nworkers, 2);
    ck_assert_int_eq(st[19997].from_ns, 19997500000000);
    sct_check_ids(&st[19998], (const uint32_t[]){ 1, 6 }, 2);
    ck_assert_int_eq(st[19998].to_ns, SIM_TIME_NEVER);
    ck_assert_int_eq(st[19999].at_ns, 19999125000000);
    ck_assert_int_eq(st[19999].recover_ns, SIM_TIME_NEVER);
    /* What the rules resolve to is in the tree, at each rule. */
    char *text = sim_scenario_resolved(sc, false);
    ck_assert_ptr_nonnull(text);
    char want[256];
    snprintf(want, sizeof(want),
             "{\"kind\":\"window\",\"count\":2,\"from_s\":19997.5,\"to_s\":19997.75,"
             "\"slowdown\":1,\"workers\":[%u,%u]}",
             st[19997].workers[0], st[19997].workers[1]);
    ck_assert_ptr_nonnull(strstr(text, want));
    ck_assert_ptr_nonnull(
        strstr(text, "\"from_s\":19998,\"extra_latency_ms\":2.385,\"to_s\":null"));
    ck_assert_ptr_nonnull(strstr(text, "\"at_s\":19999.125,\"recover_s\":null}]"));
    free(text);
    sim_scenario_destroy(sc);
}
END_TEST

START_TEST(loader_applies_many_host_overrides_in_order)
{
    sim_scenario *sc = load_long("\"network\": {\"overrides\": [", 20000, host_override, "]}");
    /* Later entries win: hosts 7 and 4 are last set by entry 19999 (10 + 19999 mod 7 = 10 and
     * a half us), host 6 by entry 19998 (16 and a half). */
    ck_assert_int_eq(sc->latency_ns[7], 10500);
    ck_assert_int_eq(sc->latency_ns[4], 10500);
    ck_assert_int_eq(sc->latency_ns[6], 16500);
    sim_scenario_destroy(sc);
}
END_TEST

Suite *test_suite(void)
{
    Suite *s = suite_create("scenario_bad");
    TCase *tc = tcase_create("bad_input");
    tcase_add_checked_fixture(tc, sct_setup, NULL);
    tcase_set_timeout(tc, 30); /* a hundred files and a million-worker scenario */
    tcase_add_test(tc, loader_rejects_every_file_of_the_bad_corpus_as_expected);
    tcase_add_test(tc, loader_reports_a_missing_file_as_an_io_error);
    tcase_add_test(tc, loader_reports_a_directory_as_unreadable);
    tcase_add_test(tc, loader_refuses_nul_bytes_in_a_scenario_or_trace_and_takes_a_traces_bom);
    tcase_add_test(tc, loader_accepts_a_null_error_and_destroy_accepts_null);
    tcase_add_test(tc, loader_caps_the_workers_selected_over_all_rules);
    suite_add_tcase(s, tc);

    tc = tcase_create("long_lists");
    tcase_add_checked_fixture(tc, sct_setup, NULL);
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, loader_records_at_each_of_many_rules_what_it_resolves_to);
    tcase_add_test(tc, loader_applies_many_host_overrides_in_order);
    suite_add_tcase(s, tc);
    return s;
}
