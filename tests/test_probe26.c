/* Issue 38, the thirteenth probe, classes 16 and 19: plot --by checked its output directory
 * for gnuplot only as part of "OUT/KEY" cut to 2,047 bytes and named the key for it; a --style
 * directory too long for its copies' paths was a failure to read, exit 1. Every case failed
 * before its fix. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "harness.h"

typedef harness_result result;

/* plot --by -o "DIR/p q" said `key "DIR/p q/protocol.name" contains ' '`, a key that holds no
 * space; -o DEEP/"x y", DEEP 2,200 bytes deep, passed the check (the space past the cut of
 * "OUT/KEY" at 2,047 bytes), made the folder, wrote breakdown-by-protocol.name.csv there and
 * then failed at its figure, exit 2 with a file left. Both are refused naming the output
 * directory, nothing made. */
START_TEST(a_plot_by_output_gnuplot_cannot_take_is_named_and_refused_first)
{
    char *dir = harness_tmpdir("probe26");
    char s[600], sw[600], o[600], out[700], deep[2600], far[2700], want[800];
    harness_sweep_in(dir, harness_quick_json, harness_protocols_sweep, sw, o, sizeof(s));
    snprintf(out, sizeof(out), "%s/p q", dir);
    size_t len = harness_deep_dir(dir, 'd', 11, deep, sizeof(deep));
    ck_assert_uint_gt(len, 2100);
    snprintf(far, sizeof(far), "%s/x y", deep);
    const char *const outs[] = { out, far };
    char before[128], after[128];
    for (size_t c = 0; c < 2; c++) {
        harness_tree_digest(dir, before, sizeof(before));
        result res = harness_hetsim(
            (const char *[]){ "plot", o, "--by", "protocol.name", "-o", outs[c], NULL });
        harness_tree_digest(dir, after, sizeof(after));
        ck_assert_msg(res.status == 2, "case %zu: exit %d\n%.400s", c, res.status, res.err);
        snprintf(want, sizeof(want), "output directory \"%s\" contains ' '", out);
        ck_assert_msg(strstr(res.err, c == 0 ? want : "output directory \"") != NULL &&
                          strstr(res.err, "contains ' ', which cannot be passed") != NULL,
                      "case %zu: %.400s", c, res.err);
        ck_assert_msg(strstr(res.err, "key \"") == NULL, "case %zu: %.400s", c, res.err);
        ck_assert_msg(strcmp(before, after) == 0, "case %zu: the tree changed", c);
        ck_assert(!harness_exists(outs[c]));
    }
    harness_cleanup(dir);
}
END_TEST

Suite *test_suite(void)
{
    Suite *s = suite_create("probe26");
    TCase *messages = tcase_create("messages");
    tcase_add_test(messages, a_plot_by_output_gnuplot_cannot_take_is_named_and_refused_first);
    tcase_set_timeout(messages, 120);
    suite_add_tcase(s, messages);
    return s;
}
