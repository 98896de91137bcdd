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

Suite *test_suite(void)
{
    Suite *s = suite_create("probe35");
    TCase *cli = tcase_create("cli");
    tcase_add_test(cli, version_and_help_take_nothing_more);
    tcase_set_timeout(cli, 120);
    suite_add_tcase(s, cli);
    return s;
}
