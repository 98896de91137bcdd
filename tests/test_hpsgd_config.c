/* HPSGD's configuration (PROTOCOLS 7.5; tests/test_hpsgd.c has its runs): a bad `flush` or
 * `momentum` is refused naming its path, and a note says, once on stderr and once in
 * summary.json, when the protocol's momentum differs from the workload's; run.json records the
 * coefficient used. Real runs of softmax on a tiny synthetic set. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <check.h>

#include "harness.h"
#include "scenario/scenario.h"

static const char real_json[] = "tests/scenarios/hpsgd/real.json";

START_TEST(bad_flush_is_rejected_with_its_path)
{
    const char *sets[] = { "protocol.flush=\"oldest\"" };
    sim_err err;
    sim_scenario *sc = sim_scenario_load(real_json, sets, 1, &err);
    ck_assert_ptr_nonnull(sc);
    ck_assert_int_eq(harness_check(sc, &err), SIM_ESCENARIO);
    ck_assert_str_eq(err.path, "$.protocol.flush");
    sim_scenario_destroy(sc);
}
END_TEST

/* Runs real.json with `sets` for 0.05 s with stderr captured: what the run wrote there, its
 * summary.json and its run.json (malloc'd). */
static void run_captured(const char *const *sets, size_t nsets, char **err, char **summary,
                         char **run)
{
    const char *all[4] = { "stop.time_s=0.05" };
    ck_assert_uint_le(nsets, 3);
    for (size_t i = 0; i < nsets; i++)
        all[i + 1] = sets[i];
    sim_scenario *sc = harness_load_file(real_json, all, nsets + 1);
    char *dir = harness_tmpdir("hpsgd");
    char path[] = "/tmp/hetsim-hpsgd-stderr-XXXXXX";
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    fflush(stderr);
    int saved = dup(2);
    ck_assert_int_ge(saved, 0);
    dup2(fd, 2);
    harness_run(sc, dir, NULL, NULL);
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    close(fd);
    *err = harness_read(path, NULL);
    remove(path);
    *summary = harness_slurp(dir, "summary.json");
    *run = harness_slurp(dir, "run.json");
    harness_cleanup(dir);
    sim_scenario_destroy(sc);
}

static size_t occurrences(const char *text, const char *what)
{
    size_t n = 0;
    for (const char *p = strstr(text, what); p != NULL; p = strstr(p + 1, what))
        n++;
    return n;
}

/* The note appears, once on stderr and once in summary.json's "notes", exactly when
 * protocol.momentum differs from workload.momentum; run.json records the coefficient used. */
START_TEST(a_note_says_when_the_protocols_momentum_differs_from_the_workloads)
{
    static const struct {
        const char *sets[2];
        size_t nsets;
        const char *note; /* NULL: no note */
        const char *resolved;
    } cases[] = {
        { { NULL }, 0, NULL, "\"momentum\": 0" },
        { { "workload.momentum=0.9" },
          1,
          "hpsgd uses protocol.momentum 0 (the authors' optimizer, default 0), not "
          "workload.momentum 0.9, for its local steps and merges",
          "\"momentum\": 0" },
        { { "workload.momentum=0.9", "protocol.momentum=0.9" }, 2, NULL, "\"momentum\": 0.9" },
        { { "protocol.momentum=0.25" },
          1,
          "hpsgd uses protocol.momentum 0.25 (the authors' optimizer, default 0), not "
          "workload.momentum 0, for its local steps and merges",
          "\"momentum\": 0.25" },
    };
    for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
        char *err, *summary, *run;
        run_captured(cases[c].sets, cases[c].nsets, &err, &summary, &run);
        if (cases[c].note == NULL) {
            ck_assert_msg(strstr(err, "note") == NULL, "case %zu: stderr: %s", c, err);
            ck_assert_msg(strstr(summary, "\"notes\"") == NULL, "case %zu: %s", c, summary);
        } else {
            char line[512], field[512];
            snprintf(line, sizeof(line), "hetsim: %s: note: %s\n", real_json, cases[c].note);
            snprintf(field, sizeof(field), "  \"notes\": [\"%s\"],\n", cases[c].note);
            ck_assert_str_eq(err, line);
            ck_assert_uint_eq(occurrences(summary, field), 1);
            ck_assert_uint_eq(occurrences(summary, "note"), 1);
        }
        /* run.json's protocol section records the coefficient used. */
        char *sec = strstr(run, "\"protocol\": {");
        ck_assert_ptr_nonnull(sec);
        char *end = strchr(sec, '}');
        ck_assert_ptr_nonnull(end);
        *end = '\0';
        const char *at = strstr(sec, cases[c].resolved);
        ck_assert_msg(at != NULL, "case %zu: run.json: %s", c, sec);
        at += strlen(cases[c].resolved);
        ck_assert_msg(*at == ',' || *at == '\n', "case %zu: run.json: %s", c, sec);
        free(err);
        free(summary);
        free(run);
    }
}
END_TEST

START_TEST(bad_momentum_is_rejected_with_its_path)
{
    static const char *const values[] = { "-0.1", "1", "1.5", "\"0.9\"", "null", "true", "[0.9]" };
    for (size_t i = 0; i < sizeof(values) / sizeof(values[0]); i++) {
        char set[64];
        snprintf(set, sizeof(set), "protocol.momentum=%s", values[i]);
        const char *sets[] = { set };
        sim_err err;
        sim_scenario *sc = sim_scenario_load(real_json, sets, 1, &err);
        ck_assert_ptr_nonnull(sc);
        ck_assert_int_eq(harness_check(sc, &err), SIM_ESCENARIO);
        ck_assert_str_eq(err.file, real_json);
        ck_assert_str_eq(err.path, "$.protocol.momentum");
        ck_assert_msg(strstr(err.msg, "must be a number in [0, 1)") != NULL, "%s: %s", set,
                      err.msg);
        sim_scenario_destroy(sc);
    }
}
END_TEST

Suite *test_suite(void)
{
    Suite *s = suite_create("hpsgd_config");
    TCase *tc = tcase_create("hpsgd_config");
    tcase_add_test(tc, bad_flush_is_rejected_with_its_path);
    tcase_add_test(tc, a_note_says_when_the_protocols_momentum_differs_from_the_workloads);
    tcase_add_test(tc, bad_momentum_is_rejected_with_its_path);
    tcase_set_timeout(tc, 120);
    suite_add_tcase(s, tc);
    return s;
}
