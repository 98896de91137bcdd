/* Issue 38, the twelfth probe, classes 7-12: a check's own output holding a file that is no
 * regular one, a byte count past 2^64, a workers.csv count that is no whole number. Every case
 * failed before its fix. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <check.h>

#include "harness.h"

typedef harness_result result;

/* In a check's own output directory (its check.csv one a check wrote), a file of the check's
 * (check-golden.csv, check-run.csv, check.png) that is no regular one was taken as the check's:
 * a directory there ran every seed, printed the verdict "ok" and failed, "cannot rename
 * OUT/check.png.tmp to OUT/check.png: Is a directory", exit 1 (a regression to CI); a FIFO or
 * a link there was replaced by the check's file, exit 0. A check writes regular files alone:
 * refused before anything runs, naming the file and its type, exit 2, nothing changed. */
START_TEST(a_check_output_file_that_is_no_regular_one_is_refused)
{
    static const char *const names[] = { "check-golden.csv", "check-run.csv", "check.png" };
    static const char *const kinds[] = { "a directory", "a FIFO", "a symbolic link" };
    char *dir = harness_tmpdir("probe22");
    char s[600], g[600], o[600], at[700], before[16384], after[16384];
    harness_golden_in(dir, harness_quick_json, s, g, sizeof(s));
    snprintf(o, sizeof(o), "%s/o", dir);
    const char *cmd[] = { "check", s, "--golden", g, "-o", o, NULL };
    result res = harness_hetsim(cmd);
    ck_assert_msg(res.status == 0, "exit %d\n%s", res.status, res.err);
    harness_write(dir, "mine.txt", "0.734\n");
    for (size_t n = 0; n < sizeof(names) / sizeof(names[0]); n++)
        for (int k = 0; k < 3; k++) {
            snprintf(at, sizeof(at), "%s/%s", o, names[n]);
            char saved[800];
            snprintf(saved, sizeof(saved), "%s.saved", at);
            ck_assert_int_eq(rename(at, saved), 0);
            ck_assert_int_eq(k == 0   ? mkdir(at, 0777)
                             : k == 1 ? mkfifo(at, 0666)
                                      : symlink("../mine.txt", at),
                             0);
            harness_tree_digest(dir, before, sizeof(before));
            res = harness_hetsim(cmd);
            harness_tree_digest(dir, after, sizeof(after));
            char want[800];
            snprintf(want, sizeof(want), "%s is %s", at, kinds[k]);
            ck_assert_msg(res.status == 2, "%s, %s: exit %d\n%s", names[n], kinds[k], res.status,
                          res.err);
            ck_assert_msg(strstr(res.err, want) != NULL, "%s: %s", names[n], res.err);
            ck_assert_msg(strcmp(before, after) == 0, "%s, %s: the tree changed", names[n],
                          kinds[k]);
            ck_assert_int_eq(k == 0 ? rmdir(at) : unlink(at), 0);
            ck_assert_int_eq(rename(saved, at), 0);
        }
    harness_cleanup(dir);
}
END_TEST

/* A host's bytes were counted in 64 bits and wrapped past 2^64 - 1 silently: 2 workers of
 * message_bytes 2^44 (the largest) at 1000 Gbit/s, 1.1 million iterations each within
 * stop.time_s 1e9, sent 1.1e6 x 2^44 = 19,351,404,648,857,600,000 bytes each, and workers.csv
 * said 904,660,575,148,048,384 (the count minus 2^64), exit 0: a worker that sent 21 times
 * less, which report's bytes sent/sample took as read. A count past 2^64 - 1 is written to 17
 * digits, exactly this one (34375 x 2^49). */
START_TEST(a_byte_count_past_two_to_the_64_is_not_wrapped)
{
    static const char scenario[] =
        "{\"seed\": 5, \"workers\": 2, \"compute\": {\"iteration_ms\": 10},\n"
        " \"network\": {\"bandwidth_gbps\": 1000},\n"
        " \"workload\": {\"model\": {\"name\": \"none\"}, \"message_bytes\": 17592186044416},\n"
        " \"protocol\": {\"name\": \"allreduce\"},\n"
        " \"stop\": {\"time_s\": 1000000000, \"iterations\": 2200000},\n"
        " \"eval\": {\"every_s\": 1000000}}\n";
    char *dir = harness_tmpdir("probe22");
    char s[600], r[600], csv[700];
    harness_run_in(dir, scenario, s, r, sizeof(s));
    snprintf(csv, sizeof(csv), "%s/workers.csv", r);
    char text[1024];
    harness_read_into(csv, text, sizeof(text));
    for (int w = 0; w < 2; w++) {
        char *row = strchr(text, '\n');
        for (int k = 0; k < w && row != NULL; k++)
            row = strchr(row + 1, '\n');
        ck_assert_ptr_nonnull(row);
        double iterations = 0, sent = 0, received = 0;
        ck_assert_int_eq(sscanf(row + 1, "%*[^,],%*[^,],%lf,%*[^,],%*[^,],%*[^,],%*[^,],%lf,%lf",
                                &iterations, &sent, &received),
                         3);
        ck_assert_msg(iterations == 1.1e6, "worker %d: %.17g iterations", w, iterations);
        ck_assert_msg(sent == 34375.0 * 0x1p49, "worker %d sent %.17g\n%s", w, sent, text);
        ck_assert_msg(received == 34375.0 * 0x1p49, "worker %d received %.17g", w, received);
    }
    harness_cleanup(dir);
}
END_TEST

/* Rewrites column `col` of every row of workers.csv in `run` to `value`. */
static void set_column(const char *run, const char *col, const char *value)
{
    char cmd[2048];
    snprintf(
        cmd, sizeof(cmd),
        "cd '%s' && awk -F, -v OFS=, 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == \"%s\") "
        "c = i } NR > 1 { $c = \"%s\" } { print }' workers.csv > w.tmp && mv w.tmp workers.csv",
        run, col, value);
    ck_assert_int_eq(system(cmd), 0);
}

/* workers.csv's counts were read as any number in range and its overlap as any time: samples
 * of 1e-300 (bytes_sent 1e150) made report's bytes sent/sample "inf", and compute_s 1e-320
 * below comm_overlap_s made "comm. incl. overlap" "inf", in Markdown and LaTeX (\$inf\$), exit
 * 0. A count (iterations, samples, bytes) is a whole number, and the overlap part of the
 * computing: refused, naming the file, line and column, exit 2. */
START_TEST(a_workers_file_with_a_fractional_count_or_an_overlap_past_compute_is_refused)
{
    static const char *const edits[][4] = {
        { "samples", "1e-300", "bytes_sent", "1e150" },
        { "samples", "0.5", NULL, NULL },
        { "iterations", "2.25", NULL, NULL },
        { "bytes_received", "4.9e-324", NULL, NULL },
        { "compute_s", "1e-320", "comm_s", "0" },
    };
    static const char *const want[] = {
        "samples: 1e-300 is not a whole number",
        "samples: 0.5 is not a whole number",
        "iterations: 2.25 is not a whole number",
        "bytes_received: 4.9e-324 is not a whole number",
        "comm_overlap_s: 1.0000000000000001e-08 is above compute_s 1e-320",
    };
    char *dir = harness_tmpdir("probe22");
    char s[600], sw[600], o[600], run[800];
    harness_sweep_in(dir, harness_quick_json, harness_protocols_sweep, sw, o, sizeof(s));
    snprintf(run, sizeof(run), "%s/protocol.name=allreduce,seed=5", o);
    char saved[1000];
    snprintf(saved, sizeof(saved), "cp '%s/workers.csv' '%s/workers.saved'", run, dir);
    ck_assert_int_eq(system(saved), 0);
    for (size_t k = 0; k < sizeof(edits) / sizeof(edits[0]); k++) {
        snprintf(saved, sizeof(saved), "cp '%s/workers.saved' '%s/workers.csv'", dir, run);
        ck_assert_int_eq(system(saved), 0);
        if (k == 4)
            set_column(run, "comm_overlap_s", "1.0000000000000001e-08");
        set_column(run, edits[k][0], edits[k][1]);
        if (edits[k][2] != NULL)
            set_column(run, edits[k][2], edits[k][3]);
        for (int f = 0; f < 2; f++) {
            const char *cmd[] = {
                "report", o, "--by", "protocol.name", "--format", f == 0 ? "md" : "tex", NULL
            };
            result res = harness_hetsim(cmd);
            ck_assert_msg(res.status == 2, "case %zu: exit %d\n%s", k, res.status, res.out);
            ck_assert_msg(strstr(res.err, want[k]) != NULL, "case %zu: %s", k, res.err);
            ck_assert(strstr(res.out, "inf") == NULL);
        }
    }
    harness_cleanup(dir);
}
END_TEST

Suite *test_suite(void)
{
    Suite *s = suite_create("probe22");
    TCase *outputs = tcase_create("outputs");
    tcase_add_test(outputs, a_check_output_file_that_is_no_regular_one_is_refused);
    tcase_set_timeout(outputs, 120);
    suite_add_tcase(s, outputs);
    TCase *counts = tcase_create("counts");
    tcase_add_test(counts, a_byte_count_past_two_to_the_64_is_not_wrapped);
    tcase_add_test(counts,
                   a_workers_file_with_a_fractional_count_or_an_overlap_past_compute_is_refused);
    tcase_set_timeout(counts, 120);
    suite_add_tcase(s, counts);
    return s;
}
