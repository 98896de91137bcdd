/* Issue 38, the sixteenth probe (classes 13 to 19 and the command line): malformed option
 * values refused as usage errors. Each case failed before its fix.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "harness.h"

typedef harness_result result;

/* ---- The command line --------------------------------------------------------------------- */

/* plot's --size read each of W and H with strtod, which stopped at "3." in "3.x2" and drew 3 x
 * 2 inches (exit 0); so did ".5", "+3" and "1e1" pass as numbers. Each side is now D or D.D,
 * and anything else is refused like the other malformed values (exit 2, naming --size, no
 * figures written); "3.5x2.5" and "10X3" still draw. */
START_TEST(a_malformed_plot_size_is_refused)
{
    char *dir = harness_tmpdir("probe37");
    char sw[600], o[600];
    harness_sweep_in(dir, harness_quick_json, harness_protocols_sweep, sw, o, sizeof(sw));
    static const char *const bad[] = { "3.x2", "3x2.",  ".5x2",  "3x.5",   "+3x2",
                                       "3x+2", "1e1x2", "3x2e0", "3..5x2", "3x2 " };
    char figs[700];
    snprintf(figs, sizeof(figs), "%s/figs", dir);
    for (size_t c = 0; c < sizeof(bad) / sizeof(bad[0]); c++) {
        result res = harness_hetsim((const char *[]){ "plot", o, "--by", "protocol.name", "--size",
                                                      bad[c], "-o", figs, NULL });
        ck_assert_msg(res.status == 2 && strstr(res.err, "--size") != NULL && res.out[0] == '\0' &&
                          !harness_exists(figs),
                      "--size %s: exit %d\n%s", bad[c], res.status, res.err);
    }
    static const char *const good[] = { "3.5x2.5", "10X3" };
    for (size_t c = 0; c < 2; c++) {
        result res = harness_hetsim((const char *[]){ "plot", o, "--by", "protocol.name", "--size",
                                                      good[c], "-o", figs, NULL });
        ck_assert_msg(res.status == 0, "--size %s: exit %d\n%s", good[c], res.status, res.err);
    }
    harness_cleanup(dir);
}
END_TEST

Suite *test_suite(void)
{
    Suite *s = suite_create("probe37");
    TCase *cli = tcase_create("cli");
    tcase_add_test(cli, a_malformed_plot_size_is_refused);
    tcase_set_timeout(cli, 120);
    suite_add_tcase(s, cli);
    return s;
}
