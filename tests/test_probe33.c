/* Issue 38, fifteenth probe (classes 13-19): what the earlier fixes left of their classes.
 * Each case failed before its fix.
 */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <check.h>

#include "app/select.h"
#include "harness.h"
#include "suite.h"

/* A sweep run again over a point whose metrics.csv or workers.csv was removed took the point
 * as done (its summary.json and run.json were there): "4 points, 0 run now, 0 failed", exit 0,
 * and curves.csv written again without the point's rows, where a run writes its four files at
 * once. The point is a damaged run, run again: its rows are back, report reads the sweep. */
START_TEST(a_point_missing_a_results_file_is_run_again)
{
    static const char *const files[] = { "metrics.csv", "workers.csv" };
    for (size_t f = 0; f < 2; f++) {
        char *dir = harness_tmpdir("probe33");
        char sw[600], o[600], path[900];
        harness_sweep_in(dir, harness_quick_json, harness_protocols_sweep, sw, o, sizeof(sw));
        char *before = harness_slurp(o, "curves.csv");
        snprintf(path, sizeof(path), "%s/protocol.name=dpsgd,seed=6/%s", o, files[f]);
        ck_assert_int_eq(unlink(path), 0);
        harness_result res = harness_hetsim((const char *[]){ "sweep", sw, "-o", o, NULL });
        ck_assert_msg(res.status == 0, "%s: exit %d\n%s", files[f], res.status, res.err);
        ck_assert_msg(strstr(res.out, "4 points, 1 run now, 0 failed") != NULL, "%s: %s", files[f],
                      res.out);
        ck_assert_msg(harness_exists(path), "%s not written again", path);
        char *after = harness_slurp(o, "curves.csv");
        ck_assert_msg(strcmp(before, after) == 0, "%s: curves.csv:\n%s\nwas:\n%s", files[f], after,
                      before);
        res = harness_hetsim((const char *[]){ "report", o, "--by", "protocol.name", NULL });
        ck_assert_msg(res.status == 0, "%s: report: exit %d\n%s", files[f], res.status, res.err);
        free(before);
        free(after);
        harness_cleanup(dir);
    }
}
END_TEST

/* True if `text` holds `want` and none of the raw bytes `raw`. */
static bool escaped_as(const char *text, const char *want, const char *raw)
{
    return strstr(text, want) != NULL && strstr(text, raw) == NULL;
}

/* A message quoting a user's string escaped its control characters (C0, DEL, C1) but wrote the
 * invisible format characters raw: a scenario key "zz\u202eyy" (U+202E, RIGHT-TO-LEFT OVERRIDE)
 * went to the terminal as it was in `$["zz<RLO>yy"]: unknown key (valid: ...)`, which a
 * terminal shows reversed from there on, a key holding U+2028 (LINE SEPARATOR) or U+2066 (an
 * isolate) likewise, and a trace whose value opens with a second byte-order mark was refused as
 * `got "<BOM>0"`, read `got "0"`. Each is written as JSON escapes it: "\u202e", "\ufeff". */
START_TEST(an_invisible_format_character_in_a_message_is_escaped)
{
    char *dir = harness_tmpdir("probe33");
    static const char *const keys[][2] = { { "zz\xe2\x80\xaeyy", "$[\"zz\\u202eyy\"]" },
                                           { "zz\xe2\x80\xa8yy", "$[\"zz\\u2028yy\"]" },
                                           { "zz\xe2\x81\xa6yy", "$[\"zz\\u2066yy\"]" } };
    char text[800], s[600];
    snprintf(s, sizeof(s), "%s/s.json", dir);
    for (size_t k = 0; k < 3; k++) {
        snprintf(text, sizeof(text),
                 "{\"seed\": 5, \"workers\": 3, \"workload\": {\"model\": {\"name\": \"none\"}, "
                 "\"message_bytes\": 4000}, \"protocol\": {\"name\": \"allreduce\"}, \"%s\": 1}\n",
                 keys[k][0]);
        harness_write(dir, "s.json", text);
        harness_result res = harness_hetsim((const char *[]){ "validate", s, NULL });
        ck_assert_msg(res.status == 2, "key %zu: exit %d\n%s", k, res.status, res.err);
        ck_assert_msg(escaped_as(res.err, keys[k][1], keys[k][0]), "key %zu: %s", k, res.err);
    }
    harness_write(dir, "t.csv",
                  "\xef\xbb\xbf\xef\xbb\xbf"
                  "0,1,2\n");
    harness_write(dir, "s.json",
                  "{\"seed\": 5, \"workers\": 3, \"compute\": {\"iteration_ms\": 10},\n"
                  " \"stragglers\": [{\"kind\": \"trace\", \"file\": \"t.csv\"}],\n"
                  " \"workload\": {\"model\": {\"name\": \"none\"}, \"message_bytes\": 4000},\n"
                  " \"protocol\": {\"name\": \"allreduce\"}, \"stop\": {\"time_s\": 0.2}}\n");
    harness_result res = harness_hetsim((const char *[]){ "validate", s, NULL });
    ck_assert_msg(res.status == 2, "trace: exit %d\n%s", res.status, res.err);
    ck_assert_msg(escaped_as(res.err, "got \"\\ufeff0\"", "\xef\xbb\xbf"), "trace: %s", res.err);
    harness_cleanup(dir);
}
END_TEST

/* Usage errors were printed with vfprintf, raw, where every other message escapes: `hetsim
 * 'a<ESC>[31m<CSI><RLO><0xff>'` sent the terminal its escape sequences in `unknown command`, and
 * so did `--format <ESC>` and the like; so did lines printed beside the messages: validate's
 * "FILE: ok", a protocol's note naming its scenario file, and report's "DIR/index.csv: left
 * out 1 point without results". Each is escaped as messages are. */
START_TEST(usage_errors_and_status_lines_escape_the_users_strings)
{
    static const char raw[] = "a\x1b[31m\xc2\x9b\xe2\x80\xae\xff";
    static const char want[] = "a\\u001b[31m\\u009b\\u202e\\xff";
    char *dir = harness_tmpdir("probe33");
    char msg[200], s[700], plain[700], sw[600], o[700], gone[900];
    harness_result res = harness_hetsim((const char *[]){ raw, NULL });
    snprintf(msg, sizeof(msg), "unknown command \"%s\"", want);
    ck_assert_msg(res.status == 2 && escaped_as(res.err, msg, "\x1b"), "command: %d %s", res.status,
                  res.err);
    res = harness_hetsim((const char *[]){ "report", dir, "--by", "x", "--format", raw, NULL });
    snprintf(msg, sizeof(msg), "--format takes md, csv or tex, got \"%s\"", want);
    ck_assert_msg(res.status == 2 && escaped_as(res.err, msg, "\x1b"), "--format: %d %s",
                  res.status, res.err);
    harness_write(dir, "s.json", harness_quick_json);
    snprintf(plain, sizeof(plain), "%s/s.json", dir);
    snprintf(s, sizeof(s), "%s/%s.json", dir, raw);
    ck_assert_int_eq(rename(plain, s), 0);
    res = harness_hetsim((const char *[]){ "validate", s, NULL });
    snprintf(msg, sizeof(msg), "/%s.json: ok", want);
    ck_assert_msg(res.status == 0 && escaped_as(res.out, msg, "\x1b"), "validate: %d %s",
                  res.status, res.out);
    snprintf(o, sizeof(o), "%s/r", dir);
    res = harness_hetsim((const char *[]){ "run", s, "-o", o, "--quiet", "--set",
                                           "protocol.name=hpsgd", "--set", "workload.momentum=0.5",
                                           NULL });
    snprintf(msg, sizeof(msg), "/%s.json: note: hpsgd uses protocol.momentum", want);
    ck_assert_msg(res.status == 0 && escaped_as(res.err, msg, "\x1b"), "note: %d %s", res.status,
                  res.err);
    /* a sweep into DIR/o<ESC>..., one point's run gone and its row as a failed point's */
    ck_assert_int_eq(rename(s, plain), 0);
    harness_sweep_file(dir, NULL,
                       "{\"base\": \"s.json\", \"grid\": {\"protocol.name\": "
                       "[\"allreduce\", \"dpsgd\"]}, \"seeds\": 1}\n",
                       sw, sizeof(sw));
    snprintf(o, sizeof(o), "%s/o%s", dir, raw);
    res = harness_hetsim((const char *[]){ "sweep", sw, "-o", o, "--quiet", NULL });
    ck_assert_msg(res.status == 0, "sweep: exit %d\n%s", res.status, res.err);
    snprintf(gone, sizeof(gone), "%s/protocol.name=dpsgd,seed=5", o);
    harness_cleanup(strdup(gone));
    char *index = harness_slurp(o, "index.csv");
    char *row = strstr(index, "\n1,");
    ck_assert_ptr_nonnull(row);
    snprintf(row + 1, strlen(row), "1,\"protocol.name=dpsgd,seed=5\",dpsgd,5,missing,,,,,,\n");
    harness_write(o, "index.csv", index);
    free(index);
    res = harness_hetsim((const char *[]){ "report", o, "--by", "protocol.name", NULL });
    snprintf(msg, sizeof(msg), "/o%s/index.csv: left out 1 point without results", want);
    ck_assert_msg(res.status == 0 && escaped_as(res.err, msg, "\x1b"), "report: %d %s", res.status,
                  res.err);
    harness_cleanup(dir);
}
END_TEST

/* A profile's line of exactly 1022 bytes (its limit) and a trace's of exactly 1024 were refused
 * as "line longer than 1022 bytes" ("longer than 1024 bytes") when the line ended in "\r\n" or
 * was the first after a UTF-8 byte-order mark, both of which the readers take and neither of
 * which is the line's text; with "\n" alone the same line was read. Read at the limit with any
 * of the four, refused one byte past it. */
START_TEST(a_line_at_its_limit_is_read_whatever_its_end_or_byte_order_mark)
{
    char *dir = harness_tmpdir("probe33");
    static const char *const ends[] = { "\n", "\r\n" };
    static const char *const boms[] = { "", "\xef\xbb\xbf" };
    char *text = malloc(4096), *line = malloc(2048), s[600];
    ck_assert_ptr_nonnull(text);
    ck_assert_ptr_nonnull(line);
    snprintf(s, sizeof(s), "%s/s.json", dir);
    for (int past = 0; past <= 1; past++)
        for (int e = 0; e < 2; e++)
            for (int b = 0; b < 2; b++) {
                /* a profile row "l,1000,000...2000" of 1022 + past bytes */
                size_t want = 1022 + (size_t)past, n = (size_t)snprintf(line, 2048, "l,1000,");
                memset(line + n, '0', want - n - 4);
                snprintf(line + want - 4, 5, "2000");
                snprintf(text, 4096, "%sname,params,forward_flops%s%s%s", boms[b], ends[e], line,
                         ends[e]);
                harness_write(dir, "p.csv", text);
                harness_write(dir, "s.json",
                              "{\"seed\": 5, \"workers\": 3, \"compute\": {\"profile\": "
                              "\"p.csv\", \"gflops\": 100},\n \"workload\": {\"model\": "
                              "{\"name\": \"none\"}}, \"protocol\": {\"name\": \"allreduce\"}}\n");
                harness_result res = harness_hetsim((const char *[]){ "validate", s, NULL });
                ck_assert_msg(res.status == 2 * past, "profile %zu bytes, end %d, mark %d: %d %s",
                              want, e, b, res.status, res.err);
                if (past)
                    ck_assert_msg(strstr(res.err, "p.csv:2: line longer than 1022 bytes"), "%s",
                                  res.err);
                /* a trace row "000...0,1,2" of 1024 + past bytes, the file's first */
                want = 1024 + (size_t)past;
                memset(line, '0', want - 4);
                snprintf(line + want - 4, 5, ",1,2");
                snprintf(text, 4096, "%s%s%s", boms[b], line, ends[e]);
                harness_write(dir, "t.csv", text);
                harness_write(dir, "s.json",
                              "{\"seed\": 5, \"workers\": 3, \"compute\": {\"iteration_ms\": 10},\n"
                              " \"stragglers\": [{\"kind\": \"trace\", \"file\": \"t.csv\"}],\n"
                              " \"workload\": {\"model\": {\"name\": \"none\"}, \"message_bytes\": "
                              "4000}, \"protocol\": {\"name\": \"allreduce\"}}\n");
                res = harness_hetsim((const char *[]){ "validate", s, NULL });
                ck_assert_msg(res.status == 2 * past, "trace %zu bytes, end %d, mark %d: %d %s",
                              want, e, b, res.status, res.err);
                if (past)
                    ck_assert_msg(strstr(res.err, "line 1: longer than 1024 bytes"), "%s", res.err);
            }
    free(text);
    free(line);
    harness_cleanup(dir);
}
END_TEST

/* A sweep of n points of protocol a, each at its own lr, seed 1, every run reaching 0.85. */
static void many_groups_sweep(const char *dir, size_t n)
{
    size_t size = 200 + 80 * n, len = 0;
    char *index = malloc(size), name[64], lr[32], run[1024];
    ck_assert_ptr_nonnull(index);
    len += (size_t)snprintf(index, size, "%s", harness_fake_index_head);
    for (size_t k = 0; k < n; k++) {
        snprintf(lr, sizeof(lr), "0.%zu1", k + 1); /* as a sweep spells it: no "0.10" */
        snprintf(name, sizeof(name), "a-%s-1", lr);
        harness_fake_run(run, sizeof(run), dir, name, "0:0.1 1:0.85", false);
        harness_write(run, "workers.csv", harness_fake_workers);
        harness_write(run, "run.json",
                      "{ \"scenario\": { \"stop\": { \"time_s\": 10, \"target_accuracy\": "
                      "0.8 }, \"eval\": { \"every_s\": 0.5 } } }\n");
        len += (size_t)snprintf(index + len, size - len, "%zu,%s,a,%s,1,time,5,0.85,0.85,,1000,0\n",
                                k, name, lr);
    }
    ck_assert_uint_lt(len, size);
    harness_fake_index(dir, index);
    free(index);
}

/* report and plot --by found each run's group (and cell) by a walk of the groups found so far,
 * and refused a group mixing values of a key neither grouped by nor tuned by a scan of every
 * cell for each group:
 * `report --by KEY` of a KEY with 30,000 values took 8.4 s of CPU, 1.8 s at 10,000 (release
 * build; the reads of the runs' files aside, n^2 / 2 comparisons of their values). They are
 * found through hash tables of the values now: about one comparison a run. */
START_TEST(runs_are_grouped_in_linear_time)
{
    char *dir = harness_tmpdir("probe33");
    size_t n = 3000;
    many_groups_sweep(dir, n);
    app_select_options o;
    memset(&o, 0, sizeof(o));
    o.by = "lr";
    o.target = NAN;
    app_select s;
    sim_err err;
    ck_assert_msg(app_select_read(&s, dir, &o, NULL, &err) == SIM_OK, "%s", err.msg);
    ck_assert_uint_eq(s.ngroups, n);
    ck_assert_uint_eq(s.ncells, n);
    for (size_t g = 0; g < n; g += 997) { /* in the order of index.csv, as before */
        char lr[32];
        snprintf(lr, sizeof(lr), "0.%zu1", g + 1);
        ck_assert_str_eq(s.groups[g].value[0], lr);
        ck_assert_uint_eq(s.cells[g].group, g);
        ck_assert_uint_eq(s.cells[g].n, 1);
    }
    /* the walk held run r against its r groups and r cells (8,997,000 for 3,000), and the check
     * that no group mixes values of proto (swept, one value) scanned every cell for each group
     * (9,000,000 more) */
    ck_assert_msg(s.compared <= 3 * n, "%zu comparisons for %zu runs", s.compared, n);
    app_select_fini(&s);
    harness_cleanup(dir);
}
END_TEST

/* `hetsim list protocols extra` (or `list protocols --help`) said "list needs one of:
 * protocols, models, ...", of a list named right, and not the argument at fault. It names the
 * second argument now; exit 2, nothing on standard output, as before. */
START_TEST(a_second_argument_of_list_is_named)
{
    static const char *const extras[] = { "extra", "--help", "protocols" };
    for (size_t i = 0; i < 3; i++) {
        harness_result res =
            harness_hetsim((const char *[]){ "list", "protocols", extras[i], NULL });
        char want[120];
        snprintf(want, sizeof(want), "got a second argument: %s\n", extras[i]);
        ck_assert_msg(res.status == 2 && res.out[0] == '\0' && strstr(res.err, want) != NULL,
                      "%s: exit %d\n%s%s", extras[i], res.status, res.out, res.err);
    }
    harness_result res = harness_hetsim((const char *[]){ "list", NULL });
    ck_assert_msg(res.status == 2 && strstr(res.err, "list needs one of: protocols") != NULL,
                  "list alone: exit %d\n%s", res.status, res.err);
}
END_TEST

Suite *test_suite(void)
{
    Suite *s = suite_create("probe33");
    TCase *damaged = tcase_create("damaged");
    tcase_add_test(damaged, a_point_missing_a_results_file_is_run_again);
    tcase_set_timeout(damaged, 120);
    suite_add_tcase(s, damaged);
    TCase *escape = tcase_create("escape");
    tcase_add_test(escape, an_invisible_format_character_in_a_message_is_escaped);
    tcase_add_test(escape, usage_errors_and_status_lines_escape_the_users_strings);
    tcase_add_test(escape, a_second_argument_of_list_is_named);
    tcase_set_timeout(escape, 120);
    suite_add_tcase(s, escape);
    TCase *limits = tcase_create("limits");
    tcase_add_test(limits, a_line_at_its_limit_is_read_whatever_its_end_or_byte_order_mark);
    tcase_set_timeout(limits, 120);
    suite_add_tcase(s, limits);
    TCase *linear = tcase_create("linear");
    tcase_add_test(linear, runs_are_grouped_in_linear_time);
    tcase_set_timeout(linear, 120);
    suite_add_tcase(s, linear);
    return s;
}
