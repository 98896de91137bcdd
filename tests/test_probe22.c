/* Issue 38, the twelfth probe, classes 7-12. Every case failed before its fix. */
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

Suite *test_suite(void)
{
    Suite *s = suite_create("probe22");
    TCase *outputs = tcase_create("outputs");
    tcase_add_test(outputs, a_check_output_file_that_is_no_regular_one_is_refused);
    tcase_set_timeout(outputs, 120);
    suite_add_tcase(s, outputs);
    return s;
}
