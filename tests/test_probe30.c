/* Issue 38, the fourteenth probe (classes 1-6 and the admission deadlock): what it found.
 * Each case failed before its fix.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <check.h>

#include "harness.h"

typedef harness_result result;

/* Fashion-MNIST's IDX files, each a link to /dev/ptmx (a pseudo-terminal's master, a device
 * that waits for input): `validate` and `run` waited on the first forever (the IDX reader
 * refused a FIFO alone; the text readers, LIBSVM data and the results files refuse such a
 * device already). Each is refused at once naming the file and its type, exit 2, no run
 * directory made. */
START_TEST(an_idx_file_that_is_a_device_is_not_waited_on)
{
    if (access("/dev/ptmx", R_OK) != 0)
        return; /* no pseudo-terminals here */
    char *dir = harness_tmpdir("probe30");
    char fm[600], path[700], s[600], r[600];
    snprintf(fm, sizeof(fm), "%s/fm", dir);
    ck_assert_int_eq(mkdir(fm, 0777), 0);
    static const char *const files[] = { "train-images-idx3-ubyte.gz", "train-labels-idx1-ubyte.gz",
                                         "t10k-images-idx3-ubyte.gz", "t10k-labels-idx1-ubyte.gz" };
    for (size_t i = 0; i < 4; i++) {
        snprintf(path, sizeof(path), "%s/%s", fm, files[i]);
        ck_assert_int_eq(symlink("/dev/ptmx", path), 0);
    }
    harness_write(dir, "s.json",
                  "{\"seed\": 7, \"workers\": 2, \"compute\": {\"iteration_ms\": 10}, "
                  "\"workload\": {\"dataset\": {\"name\": \"fashion-mnist\", \"dir\": \"fm\", "
                  "\"train_samples\": 1000}, \"model\": {\"name\": \"softmax\"}, \"batch\": 8, "
                  "\"lr\": 0.05}, \"protocol\": {\"name\": \"allreduce\"}, "
                  "\"stop\": {\"time_s\": 0.2}, \"eval\": {\"every_s\": 0.1, \"samples\": 100}}\n");
    snprintf(s, sizeof(s), "%s/s.json", dir);
    snprintf(r, sizeof(r), "%s/r", dir);
    const char *const *cmds[] = {
        (const char *[]){ "validate", s, NULL },
        (const char *[]){ "run", s, "-o", r, "--quiet", NULL },
    };
    for (size_t i = 0; i < 2; i++) {
        result res = harness_hetsim(cmds[i]);
        ck_assert_msg(res.status == 2, "case %zu: exit %d\n%.300s", i, res.status, res.err);
        ck_assert_msg(strstr(res.err, "idx3-ubyte.gz: not a regular file (a character device)") !=
                          NULL,
                      "case %zu: %.300s", i, res.err);
    }
    ck_assert(!harness_exists(r));
    harness_cleanup(dir);
}
END_TEST

/* An output whose folders are not made yet, one of them named like a work directory or a lock
 * (X.partial, X.lock): `run -o X.partial/sub`, `plot -o`, `sweep -o`, `check -o`, `check
 * --update --golden`, `plot --by -o` and `check --junit X.partial/j.xml` (whose folder the
 * thirteenth probe had made) each made X.partial or X.lock, exit 0, and every later run into X
 * was refused ("X.partial exists and is not hetsim's work directory: remove it"). The output
 * itself so named was refused already. Each is refused before it runs, exit 2, nothing made,
 * and a run into X then succeeds. */
START_TEST(an_output_whose_new_folder_is_named_like_a_work_directory_is_refused)
{
    char *dir = harness_tmpdir("probe30");
    char s[600], g[600], sw[600], o[600], r[700], x[700], part[700], lock[700], out[800];
    harness_golden_in(dir, harness_quick_json, s, g, sizeof(s));
    harness_sweep_in(dir, NULL, harness_protocols_sweep, sw, o, sizeof(s));
    snprintf(r, sizeof(r), "%s/protocol.name=allreduce,seed=5", o);
    snprintf(x, sizeof(x), "%s/x", dir);
    snprintf(part, sizeof(part), "%s/x.partial", dir);
    snprintf(lock, sizeof(lock), "%s/x.lock", dir);
    for (size_t c = 0; c < 8; c++) {
        const char *folder = c % 2 == 0 ? part : lock;
        snprintf(out, sizeof(out), "%s/%s", folder, c == 7 ? "j/report.xml" : "sub");
        char co[720];
        snprintf(co, sizeof(co), "%s/co%zu", dir, c);
        const char *const *cmds[] = {
            (const char *[]){ "run", s, "-o", out, "--quiet", NULL },
            (const char *[]){ "run", s, "-o", out, "--quiet", NULL },
            (const char *[]){ "plot", r, "-o", out, NULL },
            (const char *[]){ "sweep", sw, "-o", out, "--quiet", NULL },
            (const char *[]){ "check", s, "--golden", g, "-o", out, NULL },
            (const char *[]){ "check", s, "--golden", out, "--update", "--seeds", "3", NULL },
            (const char *[]){ "plot", o, "--by", "protocol.name", "-o", out, NULL },
            (const char *[]){ "check", s, "--golden", g, "-o", co, "--junit", out, NULL },
        };
        result res = harness_hetsim(cmds[c]);
        ck_assert_msg(res.status == 2, "case %zu: exit %d\n%.300s", c, res.status, res.err);
        ck_assert_msg(strstr(res.err, "it would make is named like hetsim's work directories") !=
                          NULL,
                      "case %zu: %.300s", c, res.err);
        ck_assert_msg(!harness_exists(part) && !harness_exists(lock) && !harness_exists(co),
                      "case %zu: a folder was made", c);
    }
    result res = harness_hetsim((const char *[]){ "run", s, "-o", x, "--quiet", NULL });
    ck_assert_msg(res.status == 0, "exit %d\n%.300s", res.status, res.err);
    harness_cleanup(dir);
}
END_TEST

/* A --junit report into a folder no process may write (/proc/self: procfs takes no new file;
 * a read-only file system or another user's folder alike): the check ran every seed, wrote
 * its output and printed its verdict, then "(no JUnit report: cannot write ...)", exit 1, the
 * report lost after the whole check (as it was for a folder not made yet). It is refused
 * before anything runs, naming the folder, exit 1, the output directory not made. */
START_TEST(a_junit_report_no_process_may_write_is_refused_before_the_check_runs)
{
    if (access("/proc/self", W_OK) == 0)
        return; /* a writable /proc/self: no such place here */
    char *dir = harness_tmpdir("probe30");
    char s[600], g[600], out[700];
    harness_golden_in(dir, harness_quick_json, s, g, sizeof(s));
    snprintf(out, sizeof(out), "%s/co", dir);
    static const char *const reports[] = { "/proc/self/j.xml", "/proc/self/new/deep/j.xml" };
    for (size_t c = 0; c < 2; c++) {
        result res = harness_hetsim(
            (const char *[]){ "check", s, "--golden", g, "-o", out, "--junit", reports[c], NULL });
        ck_assert_msg(res.status == 1, "case %zu: exit %d\n%.300s", c, res.status, res.err);
        ck_assert_msg(strstr(res.err, "cannot be written: /proc/self: ") != NULL,
                      "case %zu: %.300s", c, res.err);
        ck_assert_msg(!harness_exists(out), "case %zu: the check ran", c);
    }
    harness_cleanup(dir);
}
END_TEST

/* A scenario of a UTF-8 byte-order mark and blanks alone (or the mark alone) said "line 1,
 * column 3: invalid JSON" ("column 1: invalid JSON"), where the same file without the mark
 * says "line 1, column 4: unexpected end of file": the mark counted as text. It is nothing, as
 * at the start of any scenario. */
START_TEST(a_byte_order_mark_and_blanks_alone_are_an_unexpected_end)
{
    char *dir = harness_tmpdir("probe30");
    char path[600];
    static const char *const texts[] = { "\xef\xbb\xbf   ", "\xef\xbb\xbf", "\xef\xbb\xbf\n \n" };
    static const char *const wants[] = { "line 1, column 4: unexpected end of file",
                                         "line 1, column 1: unexpected end of file",
                                         "line 3, column 1: unexpected end of file" };
    for (size_t c = 0; c < 3; c++) {
        harness_write(dir, "s.json", texts[c]);
        snprintf(path, sizeof(path), "%s/s.json", dir);
        result res = harness_hetsim((const char *[]){ "validate", path, NULL });
        ck_assert_msg(res.status == 2 && strstr(res.err, wants[c]) != NULL,
                      "case %zu: exit %d: %.300s", c, res.status, res.err);
    }
    harness_cleanup(dir);
}
END_TEST

Suite *test_suite(void)
{
    Suite *s = suite_create("probe30");
    TCase *read = tcase_create("files read");
    tcase_add_test(read, an_idx_file_that_is_a_device_is_not_waited_on);
    tcase_add_test(read, a_byte_order_mark_and_blanks_alone_are_an_unexpected_end);
    tcase_set_timeout(read, 60);
    suite_add_tcase(s, read);
    TCase *places = tcase_create("places");
    tcase_add_test(places, an_output_whose_new_folder_is_named_like_a_work_directory_is_refused);
    tcase_add_test(places, a_junit_report_no_process_may_write_is_refused_before_the_check_runs);
    tcase_set_timeout(places, 120);
    suite_add_tcase(s, places);
    return s;
}
