/* Issue 38, small leftovers of the fourteenth probe: commands that took silently what they
 * should refuse, a message that named no cause, CI's fuzz stage failing without saying why.
 * Each case failed before its fix.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "harness.h"

typedef harness_result result;

static const char base_json[] =
    "{\"name\": \"p35\", \"seed\": 5, \"workers\": 4, \"compute\": {\"iteration_ms\": 20},"
    " \"workload\": {\"dataset\": {\"name\": \"synthetic\"}, \"model\": {\"name\": \"softmax\"},"
    " \"batch\": 16, \"lr\": 0.05}, \"protocol\": {\"name\": \"allreduce\"},"
    " \"stop\": {\"time_s\": 1}, \"eval\": {\"every_s\": 1000, \"samples\": 200}}";

/* `hetsim --version extra` printed the version, exit 0 (and --help, -h and help their usage),
 * where bench and list refuse what follows their words: exit 2, nothing on stdout. */
START_TEST(version_and_help_take_nothing_more)
{
    static const char *const words[] = { "--version", "--help", "-h", "help" };
    for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++) {
        result res = harness_hetsim((const char *[]){ words[i], "extra", NULL });
        ck_assert_msg(res.status == 2 && res.out[0] == '\0', "%s extra: exit %d\n%s", words[i],
                      res.status, res.out);
        ck_assert_msg(strstr(res.err, "takes nothing more, got \"extra\"") != NULL, "%s: %s",
                      words[i], res.err);
        res = harness_hetsim((const char *[]){ words[i], NULL });
        ck_assert_msg(res.status == 0 && res.out[0] != '\0', "%s: exit %d", words[i], res.status);
    }
}
END_TEST

/* Writes DIR/s.json and runs a sweep of it over two rates and seeds 5, 6 and 7 into DIR/sw,
 * whose path goes into out[size]. */
static void small_sweep(const char *dir, char *out, size_t size)
{
    char text[1200], sweep[700];
    harness_write(dir, "s.json", base_json);
    snprintf(out, size, "%s/sw", dir);
    snprintf(text, sizeof(text),
             "{\"base\": \"s.json\", \"grid\": {\"protocol.name\": [\"allreduce\"], "
             "\"workload.lr\": [0.05, 0.1]},"
             " \"seeds\": [5, 6, 7], \"output\": {\"dir\": \"%s\"}}",
             out);
    harness_write(dir, "sweep.json", text);
    snprintf(sweep, sizeof(sweep), "%s/sweep.json", dir);
    result res = harness_hetsim((const char *[]){ "sweep", sweep, "--quiet", NULL });
    ck_assert_msg(res.status == 0, "sweep: exit %d\n%s", res.status, res.err);
}

/* A key mapped twice took the later text silently (--label 0.05=A --label 0.05=B showed B,
 * exit 0): by two --labels, two --names lines or one of each, it is refused naming the key
 * and both texts, exit 2, nothing on stdout, as an option of one value given twice. */
START_TEST(a_key_given_a_display_name_twice_is_refused)
{
    char *dir = harness_tmpdir("probe35");
    char out[600], names[700], fig[700];
    small_sweep(dir, out, sizeof(out));
    snprintf(names, sizeof(names), "%s/names.txt", dir);
    snprintf(fig, sizeof(fig), "%s/fig", dir);
    harness_write(dir, "names.txt", "# rates\n0.05=A\n");
    result res = harness_hetsim((const char *[]){ "report", out, "--by", "workload.lr", "--label",
                                                  "0.05=A", "--label", "0.05=B", NULL });
    ck_assert_msg(res.status == 2 && res.out[0] == '\0', "two labels: exit %d\n%s", res.status,
                  res.out);
    ck_assert_msg(strstr(res.err, "the key \"0.05\" is given a display name twice (\"A\", then "
                                  "\"B\"") != NULL,
                  "two labels: %s", res.err);
    res = harness_hetsim((const char *[]){ "plot", out, "--by", "workload.lr", "-o", fig, "--names",
                                           names, "--label", "0.05=B", NULL });
    ck_assert_msg(res.status == 2 &&
                      strstr(res.err, "\"0.05\" is given a display name twice") != NULL,
                  "names and a label: exit %d\n%s", res.status, res.err);
    harness_write(dir, "names.txt", "0.05=A\n0.1=C\n0.05=B\n");
    res = harness_hetsim(
        (const char *[]){ "report", out, "--by", "workload.lr", "--names", names, NULL });
    ck_assert_msg(res.status == 2 && strstr(res.err, "names.txt: line 3: the key \"0.05\"") != NULL,
                  "two lines: exit %d\n%s", res.status, res.err);
    /* One mapping of each key still reads, the built-in name of a key overridden once. */
    res =
        harness_hetsim((const char *[]){ "report", out, "--by", "workload.lr", "--label", "0.05=A",
                                         "--label", "workload.lr=rate", "--format", "tex", NULL });
    ck_assert_msg(res.status == 0 && strstr(res.out, "Rate &") != NULL &&
                      strstr(res.out, "\nA & 3") != NULL,
                  "one each: exit %d\n%s", res.status, res.err);
    harness_cleanup(dir);
}
END_TEST

/* --tune-seeds 05 chose on seed 5 and 5,5 on seed 5 once, exit 0: a seed is written as the
 * sweep writes it (no leading zero) and named once, else exit 2 naming the list. */
START_TEST(tune_seeds_refuses_a_leading_zero_and_a_seed_named_twice)
{
    char *dir = harness_tmpdir("probe35");
    char out[600];
    small_sweep(dir, out, sizeof(out));
    static const char *const bad[][2] = {
        { "05", "no leading zero" },       { "5-07", "no leading zero" },
        { "00", "no leading zero" },       { "5,5", "names seed 5 twice" },
        { "5-7,6", "names seed 6 twice" }, { "6,5-7", "names seed 6 twice" },
        { "+5", "no leading zero" },       { " 5", "no leading zero" },
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        result res =
            harness_hetsim((const char *[]){ "report", out, "--by", "protocol.name", "--best-over",
                                             "workload.lr", "--tune-seeds", bad[i][0], NULL });
        ck_assert_msg(res.status == 2 && res.out[0] == '\0', "%s: exit %d\n%s", bad[i][0],
                      res.status, res.out);
        ck_assert_msg(strstr(res.err, bad[i][1]) != NULL, "%s: %s", bad[i][0], res.err);
    }
    static const char *const good[] = { "5", "5,6", "5-6", "0,5", "5-5,7" };
    for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
        result res =
            harness_hetsim((const char *[]){ "report", out, "--by", "protocol.name", "--best-over",
                                             "workload.lr", "--tune-seeds", good[i], NULL });
        ck_assert_msg(res.status == 0, "%s: exit %d\n%s", good[i], res.status, res.err);
    }
    harness_cleanup(dir);
}
END_TEST

/* A byte that is no UTF-8 outside a JSON string was "invalid JSON" at its column (inside a
 * string it is named): it is named at its line and column wherever it stands, before a later
 * syntax error or the file's end. */
START_TEST(a_byte_that_is_no_utf8_outside_a_string_is_named)
{
    char *dir = harness_tmpdir("probe35");
    static const char *const cases[][2] = {
        { "{\"seed\": 1,\n  \xff \"workers\": 2}\n", "line 2, column 3: a byte that is no UTF-8" },
        { "\xff{}\n", "line 1, column 1: a byte that is no UTF-8" },
        { "{\"seed\": 1\xc3}\n", "line 1, column 11: a byte that is no UTF-8" },
        { "{\"seed\": 1,\n \"a\": [1, 2 \xe9\n", "line 2, column 13: a byte that is no UTF-8" },
        { "{\"seed\": 1, \"name\": \"a\xff\"}\n", "line 1, column 23: a byte that is no UTF-8" },
        { "{\"seed\": 1,, \xff}\n", "line 1, column 12: invalid JSON" },
        { "{\"seed\": 1, \"a\": [\n", "line 2, column 1: unexpected end of file" },
    };
    char path[700];
    snprintf(path, sizeof(path), "%s/u.json", dir);
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        harness_write(dir, "u.json", cases[i][0]);
        result res = harness_hetsim((const char *[]){ "validate", path, NULL });
        ck_assert_msg(res.status == 2 && strstr(res.err, cases[i][1]) != NULL,
                      "case %zu: exit %d\n%s", i, res.status, res.err);
    }
    harness_cleanup(dir);
}
END_TEST

/* .ci/fuzz sent meson compile's output to /dev/null: a fuzz target that did not build failed
 * the stage (exit 1) with no word of why. Run from a copy of the script beside stand-ins for
 * meson (its compile fails with a compiler's message), clang and apt-get, the message is
 * shown and the script still fails. */
START_TEST(the_fuzz_stage_says_why_its_targets_do_not_build)
{
    char *dir = harness_tmpdir("probe35");
    char cmd[4096], bin[700];
    snprintf(bin, sizeof(bin), "%s/bin", dir);
    snprintf(cmd, sizeof(cmd), "mkdir -p '%s/repo/.ci' '%s' && cp .ci/fuzz '%s/repo/.ci/fuzz'", dir,
             bin, dir);
    ck_assert_int_eq(system(cmd), 0);
    harness_write(bin, "meson",
                  "#!/bin/sh\n"
                  "if [ \"$1\" = compile ]; then\n"
                  "  echo '../tests/fuzz/fuzz_trace.c:9:5: error: use of undeclared identifier'\n"
                  "  exit 1\n"
                  "fi\n"
                  "exit 0\n");
    harness_write(bin, "clang", "#!/bin/sh\nexit 0\n");
    harness_write(bin, "apt-get", "#!/bin/sh\nexit 0\n");
    harness_write(bin, "sudo", "#!/bin/sh\n\"$@\"\n");
    snprintf(cmd, sizeof(cmd),
             "chmod +x '%s'/* && cd '%s/repo' && PATH='%s':\"$PATH\" bash .ci/fuzz 1 "
             ">'%s/out' 2>&1",
             bin, dir, bin, dir);
    int status = system(cmd);
    char path[700];
    snprintf(path, sizeof(path), "%s/out", dir);
    char *text = harness_read(path, NULL);
    ck_assert_msg(status != 0, "the script passed:\n%s", text);
    ck_assert_msg(strstr(text, "fuzz_trace.c:9:5: error: use of undeclared identifier") != NULL &&
                      strstr(text, "the fuzz targets do not build") != NULL,
                  "the compiler's message is not shown:\n%s", text);
    free(text);
    harness_cleanup(dir);
}
END_TEST

/* The shared reader of counts on the command line took "05" as 5 (--threads 05 ran, exit 0),
 * where a seed, a grid index and --tune-seeds refuse a leading zero: each count option refuses
 * it now, exit 2 naming the option; "0" and counts without one read as before. */
START_TEST(count_options_refuse_a_leading_zero)
{
    char *dir = harness_tmpdir("probe35");
    char out[600], sweep[700], s[700], g[700];
    small_sweep(dir, out, sizeof(out));
    snprintf(sweep, sizeof(sweep), "%s/sweep.json", dir);
    snprintf(s, sizeof(s), "%s/s.json", dir);
    snprintf(g, sizeof(g), "%s/g", dir);
    const char *const *bad[] = {
        (const char *[]){ "run", s, "--threads", "05", "-o", g, NULL },
        (const char *[]){ "sweep", sweep, "-j", "02", "--list", NULL },
        (const char *[]){ "sweep", sweep, "--index", "01", NULL },
        (const char *[]){ "sweep", sweep, "--index", "00", NULL },
        (const char *[]){ "check", s, "--seeds", "03", "--golden", g, NULL },
        (const char *[]){ "bench", "threads", "--threads", "01", NULL },
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        result res = harness_hetsim(bad[i]);
        ck_assert_msg(res.status == 2 && strstr(res.err, bad[i][2]) != NULL &&
                          strstr(res.err, bad[i][3]) != NULL,
                      "%s %s %s: exit %d\n%s", bad[i][0], bad[i][2], bad[i][3], res.status,
                      res.err);
        ck_assert_msg(!harness_exists(g), "%s: wrote %s", bad[i][0], g);
    }
    result res = harness_hetsim((const char *[]){ "sweep", sweep, "-j", "2", "--list", NULL });
    ck_assert_msg(res.status == 0, "-j 2: exit %d\n%s", res.status, res.err);
    res = harness_hetsim((const char *[]){ "sweep", sweep, "--index", "0", "--quiet", NULL });
    ck_assert_msg(res.status == 0, "--index 0: exit %d\n%s", res.status, res.err);
    harness_cleanup(dir);
}
END_TEST

/* The parameter-server family with every worker failing for good at 0.3 s. */
static const char ps_stall_json[] =
    "{\"seed\": 7, \"workers\": 5, \"servers\": 1,"
    " \"compute\": {\"iteration_ms\": 10, \"jitter_sigma\": 0.2},\n"
    " \"stragglers\": [{\"kind\": \"failure\", \"workers\": [0, 1, 2, 3, 4], \"at_s\": 0.3},\n"
    "   {\"kind\": \"failure\", \"workers\": [1], \"at_s\": 0.1, \"recover_s\": 0.2},\n"
    "   {\"kind\": \"link\", \"workers\": [2], \"from_s\": 0.25, \"to_s\": 0.5,"
    " \"bandwidth_factor\": 0.1}],\n"
    " \"workload\": {\"dataset\": {\"name\": \"synthetic\", \"samples\": 400,"
    " \"test_samples\": 50}, \"model\": {\"name\": \"softmax\"}, \"batch\": 8, \"lr\": 0.1},\n"
    " \"protocol\": {\"name\": \"ps\"}, \"stop\": {\"iterations\": 100000},"
    " \"eval\": {\"samples\": 50}}\n";

/* The probe's pairs: every worker of ps (each mode, servers and colocated) and easgd failing
 * for good stalls at its failure, final_accuracy the same, at every_s 0.0137 and 1000 alike.
 * With stop.time_s 20000, every_s 0.0137 passes the most evaluations a run stopped by time
 * may make (1,000,000) and is refused before it runs, stall or not: the message said only
 * "must be at least 0.02 (stop.time_s / 1000000 evaluations)", so the pair read as a run that
 * hit the limit instead of stalling; it now says the bound holds even if a stall ends the run
 * sooner. */
START_TEST(the_parameter_server_family_stalls_whatever_every_s)
{
    char *dir = harness_tmpdir("probe35");
    harness_write(dir, "s.json", ps_stall_json);
    static const char *const protos[][2] = {
        { "protocol={\"name\": \"ps\", \"mode\": \"bsp\"}", "" },
        { "protocol={\"name\": \"ps\", \"mode\": \"asp\"}", "" },
        { "protocol={\"name\": \"ps\", \"mode\": \"ssp\", \"staleness\": 1}", "" },
        { "protocol={\"name\": \"ps\", \"mode\": \"bsp\", \"placement\": \"colocated\","
          " \"failover_s\": 0.05}",
          "" },
        { "protocol={\"name\": \"easgd\", \"tau\": 2}", "" },
        { "protocol={\"name\": \"syncswitch\"}", "" },
    };
    char s[700], r[700];
    snprintf(s, sizeof(s), "%s/s.json", dir);
    for (size_t i = 0; i < sizeof(protos) / sizeof(protos[0]); i++) {
        double final[2];
        static const char *const everys[] = { "eval.every_s=0.0137", "eval.every_s=1000" };
        for (size_t e = 0; e < 2; e++) {
            snprintf(r, sizeof(r), "%s/r%zu-%zu", dir, i, e);
            result res = harness_hetsim((const char *[]){ "run", s, "-o", r, "--set", protos[i][0],
                                                          "--set", everys[e], "--quiet", NULL });
            ck_assert_msg(res.status == 0, "%s %s: exit %d\n%s", protos[i][0], everys[e],
                          res.status, res.err);
            char *sum = harness_slurp(r, "summary.json");
            ck_assert_msg(strstr(sum, "\"stop_reason\": \"stalled\"") != NULL, "%s %s: %s",
                          protos[i][0], everys[e], sum);
            free(sum);
            ck_assert_msg(harness_summary_number(r, "sim_time_s") < 0.31, "%s %s: stalled late",
                          protos[i][0], everys[e]);
            final[e] = harness_summary_number(r, "final_accuracy");
        }
        ck_assert_msg(final[0] == final[1], "%s: final_accuracy %.17g and %.17g", protos[i][0],
                      final[0], final[1]);
    }
    snprintf(r, sizeof(r), "%s/t", dir);
    result res =
        harness_hetsim((const char *[]){ "run", s, "-o", r, "--set", "stop={\"time_s\": 20000}",
                                         "--set", "eval.every_s=0.0137", "--quiet", NULL });
    ck_assert_msg(res.status == 2 && !harness_exists(r), "time 20000: exit %d\n%s", res.status,
                  res.err);
    ck_assert_msg(strstr(res.err, "$.eval.every_s: must be at least 0.02 (stop.time_s / 1000000 "
                                  "evaluations, the most a run stopped by time may make, even if "
                                  "a stall or another stop ends it sooner), got 0.0137") != NULL,
                  "%s", res.err);
    res = harness_hetsim((const char *[]){ "run", s, "-o", r, "--set", "stop={\"time_s\": 20000}",
                                           "--set", "eval.every_s=0.02", "--quiet", NULL });
    ck_assert_msg(res.status == 0, "every_s 0.02: exit %d\n%s", res.status, res.err);
    char *sum = harness_slurp(r, "summary.json");
    ck_assert_msg(strstr(sum, "\"stop_reason\": \"stalled\"") != NULL, "%s", sum);
    free(sum);
    harness_cleanup(dir);
}
END_TEST

Suite *test_suite(void)
{
    Suite *s = suite_create("probe35");
    TCase *cli = tcase_create("cli");
    tcase_add_test(cli, version_and_help_take_nothing_more);
    tcase_add_test(cli, a_key_given_a_display_name_twice_is_refused);
    tcase_add_test(cli, tune_seeds_refuses_a_leading_zero_and_a_seed_named_twice);
    tcase_add_test(cli, a_byte_that_is_no_utf8_outside_a_string_is_named);
    tcase_add_test(cli, the_fuzz_stage_says_why_its_targets_do_not_build);
    tcase_add_test(cli, count_options_refuse_a_leading_zero);
    tcase_set_timeout(cli, 120);
    suite_add_tcase(s, cli);
    TCase *stall = tcase_create("stall");
    tcase_add_test(stall, the_parameter_server_family_stalls_whatever_every_s);
    tcase_set_timeout(stall, 240);
    suite_add_tcase(s, stall);
    return s;
}
