/* Issue 38's eleventh probe, classes 13-19 (probe38q): a golden's path past its seeds' paths,
 * messages that quote a field or a path cut inside a UTF-8 character or with its control bytes
 * made '?', a name's limit counted in bytes but called characters, a golden.json key missing
 * read as its zero, an empty argument taken as a file's name, two LaTeX rows that print alike,
 * a results file that is a symbolic link, golden seeds that print with an exponent, a --baseline
 * value matched as text where --where matches numbers. Every case failed before its fix.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <check.h>

#include "harness.h"
#include "sim/text.h"

typedef harness_result result;

/* Makes folders under `base` (of 200 bytes, the last shorter) until their path, into
 * deep[size], is `want` bytes long. */
static void make_deep(const char *base, size_t want, char *deep, size_t size)
{
    char name[201];
    size_t len = (size_t)snprintf(deep, size, "%s", base);
    ck_assert_uint_lt(want, size);
    while (len < want) {
        size_t n = want - len - 1 > 200 ? 200 : want - len - 1;
        memset(name, 'd', n);
        name[n] = '\0';
        len += (size_t)snprintf(deep + len, size - len, "/%s", name);
        ck_assert_int_eq(mkdir(deep, 0777), 0);
    }
    ck_assert_uint_eq(len, want);
}

/* Whether the folder at `path` holds nothing. */
static bool empty_dir(const char *path)
{
    DIR *d = opendir(path);
    ck_assert_ptr_nonnull(d);
    size_t n = 0;
    for (struct dirent *e = readdir(d); e != NULL; e = readdir(d))
        n += strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0;
    closedir(d);
    return n == 0;
}

/* A golden's seeds' paths hold its path (GOLDEN/seed-S/FILE, GOLDEN.partial/... while an update
 * writes it) in 1,024 bytes, but -o's 4,000 bytes were taken for --golden: an update into a
 * golden 999 bytes deep ran its seeds, then said "a file the scenario names changed during the
 * update, no golden written: ...fingerprint: missing or unreadable", exit 1; a check of a
 * golden moved 1,100 bytes deep said "no golden here (write one with --update)", exit 2. An
 * update into a name of 248 to 255 bytes said "cannot create directory G.partial: File name too
 * long", exit 1. Each is refused before anything runs, naming --golden and its limit, exit 2,
 * nothing made. */
START_TEST(a_golden_too_long_for_its_seeds_paths_is_refused_first)
{
    char *dir = harness_tmpdir("probe18");
    char s[600], g[600], o[600], a[1100], b[1200], place[1300], name[260];
    harness_golden_in(dir, harness_quick_json, s, g, sizeof(s));
    snprintf(o, sizeof(o), "%s/o", dir);
    snprintf(place, sizeof(place), "%s/a", dir);
    ck_assert_int_eq(mkdir(place, 0777), 0);
    make_deep(place, 997, a, sizeof(a)); /* a golden of 999 bytes: an update ran, then failed */
    snprintf(place, sizeof(place), "%s/g", a);
    result res = harness_hetsim(
        (const char *[]){ "check", s, "--golden", place, "--update", "--seeds", "3", NULL });
    ck_assert_msg(res.status == 2, "update: exit %d\n%s", res.status, res.err);
    ck_assert_msg(strstr(res.err, "too long for a golden (at most 959 bytes") != NULL, "%s",
                  res.err);
    ck_assert_msg(empty_dir(a), "the update made something");
    snprintf(place, sizeof(place), "%s/b", dir);
    ck_assert_int_eq(mkdir(place, 0777), 0);
    make_deep(place, 1098, b, sizeof(b)); /* a golden of 1,100 bytes: "no golden here" */
    snprintf(place, sizeof(place), "%s/g", b);
    ck_assert_int_eq(rename(g, place), 0);
    res = harness_hetsim((const char *[]){ "check", s, "--golden", place, "-o", o, NULL });
    ck_assert_msg(res.status == 2, "check: exit %d\n%s", res.status, res.err);
    ck_assert_msg(strstr(res.err, "too long for a golden") != NULL, "%s", res.err);
    ck_assert_msg(!harness_exists(o), "the check ran");
    memset(name, 'n', 250);
    name[250] = '\0';
    snprintf(place, sizeof(place), "%s/%s", dir, name);
    res = harness_hetsim(
        (const char *[]){ "check", s, "--golden", place, "--update", "--seeds", "3", NULL });
    ck_assert_msg(res.status == 2, "a long name: exit %d\n%s", res.status, res.err);
    ck_assert_msg(strstr(res.err, "--golden: a name in the directory's path is too long") != NULL,
                  "%s", res.err);
    ck_assert_msg(!harness_exists(place), "the update made its golden");
    harness_cleanup(dir);
}
END_TEST

/* `n` euro signs (3 bytes each) into buf. */
static void euros(char *buf, size_t n)
{
    for (size_t i = 0; i < n; i++)
        memcpy(buf + 3 * i, "\xe2\x82\xac", 3);
    buf[3 * n] = '\0';
}

/* The path of a plot's -o that gnuplot cannot take (quoted in 127 bytes) and a sweep's
 * directory too long (sweep -o, report: quoted in 80 bytes), each under a folder of `k` bytes
 * then of euro signs: the messages are UTF-8. */
static void expect_paths_whole(const char *dir, const char *r, size_t k)
{
    char e[400], place[1200], head[8] = "xyz";
    head[k] = '\0';
    euros(e, 60); /* 180 bytes, past the 127 a quoted -o keeps */
    snprintf(place, sizeof(place), "%s/%s%s'", dir, head, e);
    result res = harness_hetsim((const char *[]){ "plot", r, "-o", place, NULL });
    ck_assert_msg(res.status == 2, "plot -o: exit %d\n%s", res.status, res.err);
    ck_assert_msg(strstr(res.err, "cannot be passed to gnuplot") != NULL && sim_text_utf8(res.err),
                  "a character cut: %s", res.err);
    euros(e, 80); /* four folders of 240 bytes: past a sweep's 767 */
    size_t len = (size_t)snprintf(place, sizeof(place), "%s/%s", dir, head);
    ck_assert_int_eq(mkdir(place, 0777), 0);
    for (int i = 0; i < 4; i++) {
        len += (size_t)snprintf(place + len, sizeof(place) - len, "/%s", e);
        ck_assert_int_eq(mkdir(place, 0777), 0);
    }
    for (size_t i = 0; i < 2; i++) {
        char sw[600];
        harness_sweep_file(dir, NULL, "{\"base\": \"s.json\", \"grid\": {\"workers\": [3]}}", sw,
                           sizeof(sw));
        res = i == 0 ? harness_hetsim((const char *[]){ "sweep", sw, "-o", place, NULL })
                     : harness_hetsim((const char *[]){ "report", place, "--by", "workers", NULL });
        ck_assert_msg(res.status == 2, "case %zu: exit %d\n%s", i, res.status, res.err);
        ck_assert_msg(strstr(res.err, "too long") != NULL && sim_text_utf8(res.err),
                      "case %zu: a character cut: %s", i, res.err);
    }
}

/* A results file's field in a message was its first 40 bytes, control bytes as '?': a field of
 * euro signs was cut inside one (the message no UTF-8: iconv and Python's decoder refused it),
 * and "\t\x1b[31m12" read "??[31m12", what the bytes were lost. The same for the path of a
 * plot's -o that gnuplot cannot take (cut at 127 bytes), and for a sweep's directory too long
 * (cut at 80 bytes: sweep -o, report). Whole characters, control bytes escaped. */
START_TEST(a_field_or_path_in_a_message_keeps_whole_utf8_characters)
{
    char *dir = harness_tmpdir("probe18");
    char s[600], r[600], m[700], text[4096], e[400];
    harness_run_in(dir, harness_quick_json, s, r, sizeof(s));
    snprintf(m, sizeof(m), "%s/metrics.csv", r);
    harness_read_into(m, text, sizeof(text));
    char *third = strchr(strchr(text, '\n') + 1, '\n') + 1; /* line 3: its iterations */
    char *iters = strchr(third, ',') + 1, *rest = strchr(iters, ',');
    euros(e, 20);
    char *edited = malloc(strlen(text) + 200);
    ck_assert_ptr_nonnull(edited);
    sprintf(edited, "%.*s%s%s", (int)(iters - text), text, e, rest);
    FILE *f = fopen(m, "w");
    ck_assert_ptr_nonnull(f);
    fputs(edited, f);
    fclose(f);
    result res = harness_hetsim((const char *[]){ "plot", r, NULL });
    ck_assert_msg(res.status == 2, "euros: exit %d\n%s", res.status, res.err);
    ck_assert_msg(strstr(res.err, "iterations: \"") != NULL && sim_text_utf8(res.err),
                  "a character cut: %s", res.err);
    sprintf(edited, "%.*s\t\x1b[31m12%s", (int)(iters - text), text, rest);
    f = fopen(m, "w");
    ck_assert_ptr_nonnull(f);
    fputs(edited, f);
    fclose(f);
    res = harness_hetsim((const char *[]){ "plot", r, NULL });
    ck_assert_msg(res.status == 2, "control bytes: exit %d\n%s", res.status, res.err);
    ck_assert_msg(strstr(res.err, "\"\\u0009\\u001b[31m12\" is not a finite number") != NULL, "%s",
                  res.err);
    free(edited);
    for (size_t k = 1; k <= 3; k++) /* one of three lengths before them cuts a euro sign */
        expect_paths_whole(dir, r, k);
    harness_cleanup(dir);
}
END_TEST

/* A string's limit counts bytes: a name of 100 "é" (200 bytes) was refused as "must be at most
 * 127 characters long, got 200", 100 characters. The message says bytes. */
START_TEST(a_names_limit_is_said_in_bytes)
{
    char *dir = harness_tmpdir("probe18");
    char json[1200], path[600], name[201];
    for (size_t i = 0; i < 100; i++)
        memcpy(name + 2 * i, "\xc3\xa9", 2);
    name[200] = '\0';
    snprintf(json, sizeof(json), "{\"name\": \"%s\", %s", name, harness_quick_json + 1);
    harness_write(dir, "s.json", json);
    snprintf(path, sizeof(path), "%s/s.json", dir);
    result res = harness_hetsim((const char *[]){ "validate", path, NULL });
    ck_assert_msg(res.status == 2, "exit %d\n%s", res.status, res.err);
    ck_assert_msg(strstr(res.err, "$.name: must be at most 127 bytes long, got 200") != NULL, "%s",
                  res.err);
    harness_cleanup(dir);
}
END_TEST

/* golden.json's keys are required: one removed was read as its zero, "golden.json: format 2
 * expected, got 0" and "0 seeds and 3 hashes, the seeds file lists 3". Each is named missing.
 */
START_TEST(a_golden_json_key_missing_is_named_missing)
{
    static const char *const keys[] = { "format", "seeds", "scenario_hashes" };
    char *dir = harness_tmpdir("probe18");
    char s[600], g[600], o[600], gj[700], text[2048], edited[2048];
    harness_golden_in(dir, harness_quick_json, s, g, sizeof(s));
    snprintf(o, sizeof(o), "%s/o", dir);
    snprintf(gj, sizeof(gj), "%s/golden.json", g);
    harness_read_into(gj, text, sizeof(text));
    for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
        char quoted[40], want[80];
        snprintf(quoted, sizeof(quoted), "\"%s\"", keys[i]);
        char *at = strstr(text, quoted); /* renamed: the key is missing */
        ck_assert_ptr_nonnull(at);
        snprintf(edited, sizeof(edited), "%.*s\"x_%s", (int)(at - text), text, at + 1);
        FILE *f = fopen(gj, "w");
        ck_assert_ptr_nonnull(f);
        fputs(edited, f);
        fclose(f);
        result res = harness_hetsim((const char *[]){ "check", s, "--golden", g, "-o", o, NULL });
        snprintf(want, sizeof(want), "$.%s: missing required key", keys[i]);
        ck_assert_msg(res.status == 2, "%s: exit %d\n%s", keys[i], res.status, res.err);
        ck_assert_msg(strstr(res.err, want) != NULL, "%s: %s", keys[i], res.err);
    }
    harness_cleanup(dir);
}
END_TEST

/* An empty argument names no file: `report "" --by k` read /index.csv (the root's), `check S
 * --golden ""` said ": no golden here (write one with --update)", `run ""`, `validate ""` and
 * `check "" --golden G` "cannot open: No such file or directory" (no file named), `--names ""`
 * "cannot read : No such file or directory". Each is a usage error saying so, exit 2. */
START_TEST(an_empty_file_or_directory_argument_is_refused_as_one)
{
    char *dir = harness_tmpdir("probe18");
    char s[600], g[600], o[600];
    harness_golden_in(dir, harness_quick_json, s, g, sizeof(s));
    snprintf(o, sizeof(o), "%s/o", dir);
    const char *const cases[][8] = {
        { "run", "", NULL },
        { "validate", "", NULL },
        { "check", "", "--golden", g, "-o", o, NULL },
        { "sweep", "", NULL },
        { "report", "", "--by", "workers", NULL },
        { "plot", "", "--by", "workers", "-o", o, NULL },
        { "check", s, "--golden", "", "-o", o, NULL },
        { "report", g, "--by", "workers", "--names", "", NULL },
        { "plot", g, "--style", "", "-o", o, NULL },
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        result res = harness_hetsim(cases[i]);
        ck_assert_msg(res.status == 2, "case %zu: exit %d\n%s", i, res.status, res.err);
        ck_assert_msg(strstr(res.err, i < 6 ? "an empty argument, where a file or a directory is "
                                              "named"
                                            : ": an empty name"),
                      "case %zu: %s", i, res.err);
    }
    ck_assert_msg(!harness_exists(o), "something written");
    harness_cleanup(dir);
}
END_TEST

/* The ninth probe refused a LaTeX table with two rows of one name, but compared the names as
 * bytes: TeX prints a run of spaces as one and none at a cell's ends, so "a" and "a " (or "a b"
 * and "a  b") made two rows the PDF names alike, exit 0. Refused as one name. */
START_TEST(a_tex_table_refuses_two_names_that_print_alike)
{
    static const char *const pairs[][2] = { { "3=a", "4=a " },
                                            { "3=a b", "4=a  b" },
                                            { "3= a", "4=a" } };
    char *dir = harness_tmpdir("probe18");
    char sw[600], o[600];
    harness_sweep_in(dir, harness_quick_json,
                     "{\"base\": \"s.json\", \"grid\": {\"workers\": [3, 4]}, \"seeds\": 1}", sw, o,
                     sizeof(sw));
    for (size_t i = 0; i < sizeof(pairs) / sizeof(pairs[0]); i++) {
        result res = harness_hetsim((const char *[]){ "report", o, "--by", "workers", "--format",
                                                      "tex", "--label", pairs[i][0], "--label",
                                                      pairs[i][1], NULL });
        ck_assert_msg(res.status == 2, "case %zu: exit %d\n%s", i, res.status, res.out);
        ck_assert_msg(strstr(res.err, "two rows would be named") != NULL, "case %zu: %s", i,
                      res.err);
    }
    result res = harness_hetsim((const char *[]){ "report", o, "--by", "workers", "--format", "tex",
                                                  "--label", "3=a", "--label", "4=b", NULL });
    ck_assert_msg(res.status == 0, "distinct names: exit %d\n%s", res.status, res.err);
    harness_cleanup(dir);
}
END_TEST

/* A run directory holds only files hetsim wrote, but the results readers followed a symbolic
 * link: a point's metrics.csv (or workers.csv) linked to another point's was read as its own,
 * exit 0 for report, plot --by and plot RUN (the other run counted twice), and plot RUN read a
 * run.json linked so (report found it of another run). Refused, naming the file, exit 2. */
START_TEST(a_results_file_that_is_a_symbolic_link_is_refused)
{
    static const char *const files[] = { "metrics.csv", "workers.csv", "run.json" };
    char *dir = harness_tmpdir("probe18");
    char sw[600], o[600], p[700], link[800], aside[700];
    harness_sweep_in(dir, harness_quick_json,
                     "{\"base\": \"s.json\", \"grid\": {\"workers\": [3, 4]}, \"seeds\": 1}", sw, o,
                     sizeof(sw));
    snprintf(p, sizeof(p), "%s/workers=3,seed=5", o);
    snprintf(aside, sizeof(aside), "%s/aside", dir);
    for (size_t i = 0; i < 3; i++) {
        char target[100];
        snprintf(link, sizeof(link), "%s/%s", p, files[i]);
        snprintf(target, sizeof(target), "../workers=4,seed=5/%s", files[i]);
        ck_assert_int_eq(rename(link, aside), 0);
        ck_assert_int_eq(symlink(target, link), 0);
        const char *const *cases[] = {
            (const char *[]){ "report", o, "--by", "workers", NULL },
            (const char *[]){ "plot", o, "--by", "workers", NULL },
            (const char *[]){ "plot", p, NULL },
        };
        for (size_t c = 0; c < 3; c++) {
            result res = harness_hetsim(cases[c]);
            ck_assert_msg(res.status == 2, "%s, case %zu: exit %d\n%s", files[i], c, res.status,
                          res.err);
            ck_assert_msg(strstr(res.err, i < 2 ? "not a regular file (a symbolic link)"
                                                : "run.json: not a regular file") != NULL,
                          "%s, case %zu: %s", files[i], c, res.err);
        }
        ck_assert_int_eq(unlink(link), 0);
        ck_assert_int_eq(rename(aside, link), 0);
    }
    harness_cleanup(dir);
}
END_TEST

/* golden.json's seeds were compared as the text cJSON prints back, "%1.15g" where that reads
 * back: 10^15 is "1e+15", which strtoull read as 1, so an update from seed 1000000000000000 (or
 * 9007199254740980, "9.00719925474098e+15") refused the golden it had just written: "a file the
 * scenario names changed during the update, no golden written: G.partial/golden.json: seed 1 is
 * 1e+15, the seeds file says 1000000000000000", exit 1. The seeds are compared as numbers. */
START_TEST(a_golden_of_seeds_that_print_with_an_exponent_is_written_and_read)
{
    static const char *const seeds[] = { "seed=1000000000000000", "seed=9007199254740980" };
    char *dir = harness_tmpdir("probe18");
    char s[600], g[600], o[600];
    harness_write(dir, "s.json", harness_quick_json);
    snprintf(s, sizeof(s), "%s/s.json", dir);
    for (size_t i = 0; i < 2; i++) {
        snprintf(g, sizeof(g), "%s/g%zu", dir, i);
        snprintf(o, sizeof(o), "%s/o%zu", dir, i);
        result res = harness_hetsim((const char *[]){ "check", s, "--golden", g, "--update",
                                                      "--seeds", "3", "--set", seeds[i], NULL });
        ck_assert_msg(res.status == 0, "update %zu: exit %d\n%s", i, res.status, res.err);
        res = harness_hetsim(
            (const char *[]){ "check", s, "--golden", g, "-o", o, "--set", seeds[i], NULL });
        ck_assert_msg(res.status == 0, "check %zu: exit %d\n%s", i, res.status, res.err);
    }
    harness_cleanup(dir);
}
END_TEST

/* --where and --baseline take index.csv's values (docs/compare.md), and --where matches them as
 * numbers ("0.10" is 0.1), but --baseline compared text: a sweep of "workload.lr": [0.00001,
 * 0.1] (index.csv writes 1e-05) refused --baseline workload.lr=0.00001, as the sweep file wrote
 * it, and workload.lr=0.10: "no row has workload.lr=0.00001", exit 2. Matched as --where does. */
START_TEST(a_baseline_value_matches_as_a_where_value_does)
{
    static const char *const given[] = { "workload.lr=0.00001", "workload.lr=0.10",
                                         "workload.lr=1e-05" };
    char *dir = harness_tmpdir("probe18");
    char sw[600], o[600];
    harness_sweep_in(dir, harness_quick_json,
                     "{\"base\": \"s.json\", \"grid\": {\"workload.lr\": [0.00001, 0.1]}, "
                     "\"seeds\": 2}",
                     sw, o, sizeof(sw));
    for (size_t i = 0; i < sizeof(given) / sizeof(given[0]); i++) {
        result res = harness_hetsim(
            (const char *[]){ "report", o, "--by", "workload.lr", "--baseline", given[i], NULL });
        ck_assert_msg(res.status == 0, "%s: exit %d\n%s", given[i], res.status, res.err);
        ck_assert_msg(strstr(res.out, "1 (baseline)") != NULL, "%s: %s", given[i], res.out);
    }
    result res = harness_hetsim((const char *[]){ "report", o, "--by", "workload.lr", "--baseline",
                                                  "workload.lr=0.2", NULL });
    ck_assert_msg(res.status == 2 && strstr(res.err, "no row has workload.lr=0.2") != NULL,
                  "exit %d\n%s", res.status, res.err);
    harness_cleanup(dir);
}
END_TEST

Suite *test_suite(void)
{
    Suite *s = suite_create("probe18");
    TCase *limits = tcase_create("limits");
    tcase_add_test(limits, a_golden_too_long_for_its_seeds_paths_is_refused_first);
    tcase_add_test(limits, a_golden_of_seeds_that_print_with_an_exponent_is_written_and_read);
    tcase_set_timeout(limits, 60);
    suite_add_tcase(s, limits);
    TCase *damaged = tcase_create("damaged");
    tcase_add_test(damaged, a_results_file_that_is_a_symbolic_link_is_refused);
    tcase_set_timeout(damaged, 60);
    suite_add_tcase(s, damaged);
    TCase *messages = tcase_create("messages");
    tcase_add_test(messages, a_field_or_path_in_a_message_keeps_whole_utf8_characters);
    tcase_add_test(messages, a_names_limit_is_said_in_bytes);
    tcase_add_test(messages, a_golden_json_key_missing_is_named_missing);
    tcase_add_test(messages, an_empty_file_or_directory_argument_is_refused_as_one);
    tcase_add_test(messages, a_tex_table_refuses_two_names_that_print_alike);
    tcase_add_test(messages, a_baseline_value_matches_as_a_where_value_does);
    tcase_set_timeout(messages, 60);
    suite_add_tcase(s, messages);
    return s;
}
