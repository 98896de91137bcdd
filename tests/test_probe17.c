/* Issue 38's eleventh probe, classes 7-12 (numbers at their limits, foreign goldens, stalls,
 * damaged results, JSON strings): a recovery at the stop instant that kept a stalled run
 * going to its stop; a JSON text holding a byte that is no UTF-8, taken into run.json; a
 * message quoting such a byte raw; a results file's number too small for a double, read as 0;
 * a golden.json without its format, "got 0"; a check's output directory holding a user's own
 * check.csv, replaced; a stop.epochs whose samples pass 2^64, which
 * hung the run before its first event; --where values and --target read by strtod (hexadecimal,
 * infinities, a subnormal refused). Every case failed before its fix.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <check.h>

#include "harness.h"
#include "sim/text.h"

typedef harness_result result;

/* ---- Stalls ------------------------------------------------------------------------------ */

/* A scenario of three workers for 20 simulated seconds, evaluated every 1000 s, with the
 * protocol `protocol` and the straggler rules `stragglers`. */
static void write_stalling(const char *dir, const char *protocol, const char *stragglers)
{
    char text[1200];
    snprintf(text, sizeof(text),
             "{\"seed\": 5, \"workers\": 3, \"compute\": {\"iteration_ms\": 10},\n"
             " \"workload\": {\"model\": {\"name\": \"none\"}, \"message_bytes\": 4000},\n"
             " \"protocol\": %s, \"stop\": {\"time_s\": 20},\n"
             " \"stragglers\": %s, \"eval\": {\"every_s\": 1000}}\n",
             protocol, stragglers);
    harness_write(dir, "s.json", text);
}

/* A run stalls when no worker is up and no recovery is to come before the stop time
 * (docs/scenario.md), but a recovery at the stop instant counted as one to come: every
 * worker down from 0.3 s for good but for a recovery at 20 s, the stop, ran on to 20 s
 * ("time", a throughput over 20 s), as did a parameter server whose colocated shard's host
 * (failover_s 0) recovers at the stop. Both stall when they stop making progress, at 0.3 s
 * and once the work in flight has drained; a recovery 10 ms before the stop still runs the
 * run on to its stop. */
START_TEST(a_recovery_at_the_stop_instant_does_not_keep_a_stalled_run_going)
{
    static const struct {
        const char *protocol, *stragglers, *reason;
        double lo, hi; /* sim_time_s */
    } cases[] = {
        { "{\"name\": \"allreduce\"}",
          "[{\"kind\": \"failure\", \"at_s\": 0.3, \"recover_s\": 20}]", "stalled", 0.3, 0.3 },
        { "{\"name\": \"ps\", \"placement\": \"colocated\", \"failover_s\": 0}",
          "[{\"kind\": \"failure\", \"at_s\": 0.3, \"workers\": [1], \"recover_s\": 20}]",
          "stalled", 0.3, 0.31 }, /* the pulls and pushes in flight drain first */
        { "{\"name\": \"allreduce\"}",
          "[{\"kind\": \"failure\", \"at_s\": 0.3, \"recover_s\": 19.99}]", "time", 20, 20 },
    };
    for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
        char *dir = harness_tmpdir("probe17");
        char s[600], r[600], summary[700], want[64];
        write_stalling(dir, cases[c].protocol, cases[c].stragglers);
        harness_run_in(dir, NULL, s, r, sizeof(s));
        snprintf(summary, sizeof(summary), "%s/summary.json", r);
        char *json = harness_read(summary, NULL);
        ck_assert_ptr_nonnull(json);
        snprintf(want, sizeof(want), "\"stop_reason\": \"%s\"", cases[c].reason);
        ck_assert_msg(strstr(json, want) != NULL, "case %zu: %s", c, json);
        const char *t = strstr(json, "\"sim_time_s\": ");
        ck_assert_ptr_nonnull(t);
        double time = strtod(t + strlen("\"sim_time_s\": "), NULL);
        ck_assert_msg(time >= cases[c].lo - 1e-12 && time <= cases[c].hi + 1e-12,
                      "case %zu: sim_time_s %.17g", c, time);
        free(json);
        harness_cleanup(dir);
    }
}
END_TEST

/* ---- JSON strings and messages ----------------------------------------------------------- */

/* A timing-only scenario of three workers for 0.2 simulated seconds: quick runs. */
static const char scenario_json[] =
    "{\"seed\": 5, \"workers\": 3, \"compute\": {\"iteration_ms\": 10},\n"
    " \"workload\": {\"model\": {\"name\": \"none\"}, \"message_bytes\": 4000},\n"
    " \"protocol\": {\"name\": \"allreduce\"}, \"stop\": {\"time_s\": 0.2},\n"
    " \"eval\": {\"every_s\": 0.05}}\n";

/* JSON text is UTF-8, but the loader took any bytes inside a string: an output.dir "o\xff"
 * (Latin-1's y with diaeresis) ran, exit 0, and went into run.json, which Python's json module
 * then refused ("'utf-8' codec can't decode byte 0xff"); a key "\xff" or a bare --set value
 * holding one was quoted raw in a message. Each is refused at its byte, exit 2, nothing
 * written; the same text in UTF-8 runs. */
START_TEST(a_json_text_that_is_no_utf8_is_refused_at_its_byte)
{
    char *dir = harness_tmpdir("probe17");
    char s[600], text[1600], out[700];
    snprintf(s, sizeof(s), "%s/s.json", dir);
    snprintf(out, sizeof(out), "%s/o\xff", dir);
    snprintf(text, sizeof(text),
             "{\"seed\": 5, \"workers\": 3, \"output\": {\"dir\": \"%s\"},\n"
             " \"workload\": {\"model\": {\"name\": \"none\"}, \"message_bytes\": 4000},\n"
             " \"protocol\": {\"name\": \"allreduce\"}, \"stop\": {\"time_s\": 0.2}}\n",
             out);
    harness_write(dir, "s.json", text);
    result res = harness_hetsim((const char *[]){ "run", s, "--quiet", NULL });
    ck_assert_msg(res.status == 2, "exit %d\n%s", res.status, res.err);
    ck_assert_msg(strstr(res.err, "line 1, column ") != NULL, "%s", res.err);
    ck_assert_msg(strstr(res.err, "a byte that is no UTF-8") != NULL, "%s", res.err);
    ck_assert(!harness_exists(out));
    harness_write(dir, "s.json", "{\"seed\": 5, \"\xff\": 1}\n");
    res = harness_hetsim((const char *[]){ "validate", s, NULL });
    ck_assert_msg(res.status == 2 &&
                      strstr(res.err, "line 1, column 14: a byte that is no") != NULL,
                  "exit %d\n%s", res.status, res.err);
    harness_write(dir, "s.json", scenario_json);
    static const char *const sets[] = { "protocol.name=all\xffreduce", "name=\"a\xff\"", "\xff=1" };
    for (size_t c = 0; c < sizeof(sets) / sizeof(sets[0]); c++) {
        res = harness_hetsim((const char *[]){ "validate", s, "--set", sets[c], NULL });
        ck_assert_msg(res.status == 2 && strstr(res.err, "--set: a byte that is no UTF-8") != NULL,
                      "case %zu: exit %d\n%s", c, res.status, res.err);
        ck_assert_msg(sim_text_utf8(res.err), "case %zu: %s", c, res.err);
    }
    snprintf(out, sizeof(out), "%s/o\xc3\xbf", dir); /* the same letter in UTF-8 */
    res =
        harness_hetsim((const char *[]){ "run", s, "--set", "name=y", "-o", out, "--quiet", NULL });
    ck_assert_msg(res.status == 0, "%s", res.err);
    harness_cleanup(dir);
}
END_TEST

/* A message quoting a name that is no UTF-8 (a file name is any bytes) wrote its bytes raw:
 * a golden holding a directory "seed-5\xff" was refused as "G/seed-5<byte ff>: not listed",
 * and the message was no UTF-8. Such a byte is written "\xff", as control characters are
 * written escaped; the message stays UTF-8. */
START_TEST(a_message_writes_a_byte_that_is_no_utf8_escaped)
{
    char *dir = harness_tmpdir("probe17");
    char s[600], g[600], foreign[700], o[600];
    harness_golden_in(dir, scenario_json, s, g, sizeof(s));
    snprintf(foreign, sizeof(foreign), "%s/seed-5\xff", g);
    ck_assert_int_eq(mkdir(foreign, 0755), 0);
    snprintf(o, sizeof(o), "%s/co", dir);
    result res = harness_hetsim((const char *[]){ "check", s, "--golden", g, "-o", o, NULL });
    ck_assert_msg(res.status == 2, "exit %d\n%s", res.status, res.err);
    ck_assert_msg(strstr(res.err, "/seed-5\\xff: not listed") != NULL, "%s", res.err);
    ck_assert_msg(sim_text_utf8(res.err), "%s", res.err);
    ck_assert(!harness_exists(o));
    harness_cleanup(dir);
}
END_TEST

/* ---- Damaged results and goldens -------------------------------------------------------- */

/* Replaces the first `from` in the file dir/name by `to`; fails the test if there is none. */
static void replace_in(const char *dir, const char *name, const char *from, const char *to)
{
    char path[900], text[8192];
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    char *old = harness_read(path, NULL);
    ck_assert_ptr_nonnull(old);
    char *at = strstr(old, from);
    ck_assert_msg(at != NULL, "%s: no %s", path, from);
    snprintf(text, sizeof(text), "%.*s%s%s", (int)(at - old), old, to, at + strlen(from));
    harness_write(dir, name, text);
    free(old);
}

/* The strict reader of results files refuses a number that is not finite (1e400), but read
 * one too small for a double as 0: a metrics.csv throughput 1e-400 (or a workers.csv
 * bytes_sent) was drawn and reported as 0, exit 0, where the scenario loader refuses 2e-400.
 * Refused naming the file, line and column, exit 2, nothing drawn; 0e-400, which is 0, and a
 * subnormal 4.9e-324 are read. */
START_TEST(a_results_number_too_small_for_a_double_is_refused)
{
    static const struct {
        const char *file, *from, *to;
        int status;
    } cases[] = {
        { "metrics.csv", "0,0,0,,,,,,0\n", "0,0,0,,,,,,1e-400\n", 2 },
        { "metrics.csv", "0,0,0,,,,,,0\n", "0,0,0,,,,,,-0.5e-400\n", 2 },
        { "workers.csv", "\n0,1,", "\n0,1.00000000000000000000e-999999,", 2 },
        { "metrics.csv", "0,0,0,,,,,,0\n", "0,0,0,,,,,,0e-400\n", 0 },
        { "metrics.csv", "0,0,0,,,,,,0\n", "0,0,0,,,,,,4.9e-324\n", 0 },
    };
    for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
        char *dir = harness_tmpdir("probe17");
        char s[600], r[600], figs[700];
        harness_run_in(dir, scenario_json, s, r, sizeof(s));
        replace_in(r, cases[c].file, cases[c].from, cases[c].to);
        snprintf(figs, sizeof(figs), "%s/figs", dir);
        result res = harness_hetsim((const char *[]){ "plot", r, "-o", figs, NULL });
        ck_assert_msg(res.status == cases[c].status, "case %zu: exit %d\n%s", c, res.status,
                      res.err);
        ck_assert_msg(cases[c].status == 0 ||
                          (strstr(res.err, "too small for a double") != NULL &&
                           strstr(res.err, cases[c].file) != NULL && !harness_exists(figs)),
                      "case %zu: %s", c, res.err);
        harness_cleanup(dir);
    }
}
END_TEST

/* A golden.json without its "format" (or with the key misspelt) was read as format 0:
 * "golden.json: format 2 expected, got 0", of a file holding no 0. It is named missing. */
START_TEST(a_golden_json_without_its_format_is_named_missing)
{
    char *dir = harness_tmpdir("probe17");
    char s[600], g[600], o[600];
    harness_golden_in(dir, scenario_json, s, g, sizeof(s));
    replace_in(g, "golden.json", "\"format\": 2,", "\"formats\": 2,");
    snprintf(o, sizeof(o), "%s/co", dir);
    result res = harness_hetsim((const char *[]){ "check", s, "--golden", g, "-o", o, NULL });
    ck_assert_msg(res.status == 2, "exit %d\n%s", res.status, res.err);
    ck_assert_msg(strstr(res.err, "golden.json: $.format: missing required key") != NULL, "%s",
                  res.err);
    ck_assert(!harness_exists(o));
    harness_cleanup(dir);
}
END_TEST

/* check -o OUT wrote its check.csv, check-golden.csv, check-run.csv and check.png into OUT
 * over whatever held those names, in a directory that was no check's output: a user's own
 * check.csv or check.png was replaced, exit 0 (no hetsim command replaces a file it does not
 * own, docs/usage.md), and a link there lost its name. Refused before anything runs, exit 2,
 * each file as it was; a check's own output (check.csv as a check wrote it) is written again,
 * and so is a directory holding other files. */
START_TEST(a_check_never_replaces_a_file_no_check_wrote_in_its_output)
{
    static const char *const names[] = { "check.csv", "check.png", "check-run.csv" };
    char *dir = harness_tmpdir("probe17");
    char s[600], g[600], o[600], file[700], seed[700], link[700];
    harness_golden_in(dir, scenario_json, s, g, sizeof(s));
    snprintf(o, sizeof(o), "%s/co", dir);
    snprintf(seed, sizeof(seed), "%s/seed-8", o);
    ck_assert_int_eq(mkdir(o, 0755), 0);
    for (size_t c = 0; c < sizeof(names) / sizeof(names[0]); c++) {
        snprintf(file, sizeof(file), "%s/%s", o, names[c]);
        harness_write(o, names[c], "my own data\n");
        result res = harness_hetsim((const char *[]){ "check", s, "--golden", g, "-o", o, NULL });
        ck_assert_msg(res.status == 2, "case %zu: exit %d\n%s", c, res.status, res.err);
        ck_assert_msg(strstr(res.err, "is no file of a hetsim check") != NULL, "%s", res.err);
        char *text = harness_read(file, NULL);
        ck_assert_str_eq(text, "my own data\n");
        free(text);
        ck_assert(!harness_exists(seed));
        ck_assert_int_eq(remove(file), 0);
    }
    snprintf(link, sizeof(link), "%s/check.csv", o);
    ck_assert_int_eq(symlink(s, link), 0);
    result res = harness_hetsim((const char *[]){ "check", s, "--golden", g, "-o", o, NULL });
    ck_assert_msg(res.status == 2, "a link: exit %d\n%s", res.status, res.err);
    ck_assert_int_eq(remove(link), 0);
    harness_write(o, "notes.txt", "mine\n");
    for (int again = 0; again < 2; again++) {
        res = harness_hetsim((const char *[]){ "check", s, "--golden", g, "-o", o, NULL });
        ck_assert_msg(res.status == 0, "run %d: exit %d\n%s", again, res.status, res.err);
    }
    harness_cleanup(dir);
}
END_TEST

/* --where compared values as numbers when strtod read both whole: the strings "0x10" and "16"
 * (hexadecimal), "inf" and "INFINITY", "1e-400" and "0" (too small for a double) were one
 * value, so --where name=16 reported the runs named "0x10" and "16" as one row's, exit 0.
 * Numbers are decimals as the results files hold them; "16.0" still matches 16. --target took
 * "0x1p-1" as 0.5 and refused a subnormal 5e-324, which lies in (0, 1]; --size took
 * "0x1p2x3" as 4 x 3 inches. */
START_TEST(where_values_and_a_target_are_read_as_decimals)
{
    static const struct {
        const char *where, *in, *out;
    } cases[] = {
        { "name=16", "| 16 |", "| 0x10 |" },       { "name=0x10", "| 0x10 |", "| 16 |" },
        { "name=inf", "| inf |", "| INFINITY |" }, { "name=0", "| 0 |", "| 1e-400 |" },
        { "name=16.0", "| 16 |", "| 0x10 |" },
    };
    char *dir = harness_tmpdir("probe17");
    char sw[600], o[600];
    harness_sweep_in(dir, scenario_json,
                     "{\"base\": \"s.json\", \"grid\": {\"name\": [\"0x10\", \"16\", \"inf\", "
                     "\"INFINITY\", \"1e-400\", \"0\"]}, \"seeds\": 1}\n",
                     sw, o, sizeof(sw));
    for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
        result res = harness_hetsim(
            (const char *[]){ "report", o, "--by", "name", "--where", cases[c].where, NULL });
        ck_assert_msg(res.status == 0, "case %zu: exit %d\n%s", c, res.status, res.err);
        ck_assert_msg(strstr(res.out, cases[c].in) != NULL && strstr(res.out, cases[c].out) == NULL,
                      "case %zu: %s", c, res.out);
    }
    static const char *const targets[] = { "0x1p-1", " 0.5", "5e-324" };
    for (size_t c = 0; c < 3; c++) {
        result res = harness_hetsim(
            (const char *[]){ "report", o, "--by", "name", "--target", targets[c], NULL });
        ck_assert_msg(res.status == (c < 2 ? 2 : 0), "target %s: exit %d\n%s", targets[c],
                      res.status, res.err);
    }
    char figs[700];
    snprintf(figs, sizeof(figs), "%s/figs", dir);
    result res = harness_hetsim(
        (const char *[]){ "plot", o, "--by", "name", "--size", "0x1p2x3", "-o", figs, NULL });
    ck_assert_msg(res.status == 2 && !harness_exists(figs), "--size 0x1p2x3: exit %d\n%s",
                  res.status, res.err);
    harness_cleanup(dir);
}
END_TEST

/* ---- Numbers past their types ------------------------------------------------------------ */

/* The iterations that reach stop.epochs were found as e with e * batch / m >= epochs, e
 * counted up one at a time from the estimate: with epochs 1e17 (600 examples, batch 8) e *
 * batch wrapped past 2^64 and the count never ended (the run hung before its first event, as
 * did 1e18 and 1e300, whose estimate the cast to an integer made undefined). Such a count is
 * no budget: each run stops at its stop.time_s, 0.2 s, as with epochs 1e16. */
START_TEST(an_epoch_stop_past_any_sample_count_does_not_hang_the_run)
{
    static const char *const epochs[] = { "1e16", "1e17", "1e18", "1e300" };
    static const char *const protocols[] = { "allreduce", "syncswitch" };
    for (size_t c = 0; c < 8; c++) {
        char *dir = harness_tmpdir("probe17");
        char text[900], s[600], r[600], summary[700];
        snprintf(text, sizeof(text),
                 "{\"seed\": 5, \"workers\": 3, \"compute\": {\"iteration_ms\": 10},\n"
                 " \"workload\": {\"model\": {\"name\": \"softmax\"}, \"dataset\": {\"name\": "
                 "\"synthetic\", \"samples\": 600, \"dim\": 8, \"classes\": 3}, \"batch\": 8},\n"
                 " \"protocol\": {\"name\": \"%s\"}, \"stop\": {\"time_s\": 0.2, \"epochs\": %s},\n"
                 " \"eval\": {\"every_s\": 0.1, \"samples\": 100}}\n",
                 protocols[c % 2], epochs[c / 2]);
        harness_run_in(dir, text, s, r, sizeof(s));
        snprintf(summary, sizeof(summary), "%s/summary.json", r);
        char *json = harness_read(summary, NULL);
        ck_assert_ptr_nonnull(json);
        ck_assert_msg(strstr(json, "\"stop_reason\": \"time\"") != NULL, "case %zu: %s", c, json);
        free(json);
        harness_cleanup(dir);
    }
}
END_TEST

Suite *test_suite(void)
{
    Suite *s = suite_create("probe17");
    TCase *stalls = tcase_create("stalls");
    tcase_add_test(stalls, a_recovery_at_the_stop_instant_does_not_keep_a_stalled_run_going);
    tcase_set_timeout(stalls, 120);
    suite_add_tcase(s, stalls);
    TCase *text = tcase_create("text");
    tcase_add_test(text, a_json_text_that_is_no_utf8_is_refused_at_its_byte);
    tcase_add_test(text, a_message_writes_a_byte_that_is_no_utf8_escaped);
    tcase_set_timeout(text, 60);
    suite_add_tcase(s, text);
    TCase *files = tcase_create("files");
    tcase_add_test(files, a_results_number_too_small_for_a_double_is_refused);
    tcase_add_test(files, a_golden_json_without_its_format_is_named_missing);
    tcase_add_test(files, a_check_never_replaces_a_file_no_check_wrote_in_its_output);
    tcase_add_test(files, where_values_and_a_target_are_read_as_decimals);
    tcase_set_timeout(files, 60);
    suite_add_tcase(s, files);
    TCase *numbers = tcase_create("numbers");
    tcase_add_test(numbers, an_epoch_stop_past_any_sample_count_does_not_hang_the_run);
    tcase_set_timeout(numbers, 60); /* the build before hung on the second case */
    suite_add_tcase(s, numbers);
    return s;
}
