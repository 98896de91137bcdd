/* Issue 38, class 19 (messages): a --style copy that is a socket was called "a FIFO or a
 * directory". Every case failed before its fix.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <check.h>

#include "harness.h"

typedef harness_result result;

/* Binds a Unix socket at `path` (closed by the caller; the file stays): fails the test if it
 * cannot. */
static int bind_socket(const char *path)
{
    struct sockaddr_un at = { .sun_family = AF_UNIX };
    ck_assert_int_lt(snprintf(at.sun_path, sizeof(at.sun_path), "%s", path),
                     (int)sizeof(at.sun_path));
    int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(bind(fd, (const struct sockaddr *)&at, sizeof(at)), 0);
    return fd;
}

/* plot --style DIR read DIR/convergence.gp, and refused one that is a FIFO, a directory or a
 * socket with one text for all three: "not a regular file (a FIFO or a directory)", of a
 * socket. Each is named by its type, exit 2, nothing drawn. */
START_TEST(a_style_copy_is_named_by_its_type)
{
    static const char *const kinds[] = { "a socket", "a FIFO", "a directory" };
    char *dir = harness_tmpdir("probe21");
    char s[600], r[600], st[600], gp[700], p[600];
    harness_run_in(dir, harness_quick_json, s, r, sizeof(s));
    snprintf(p, sizeof(p), "%s/p", dir);
    for (int c = 0; c < 3; c++) {
        snprintf(st, sizeof(st), "%s/st%d", dir, c);
        ck_assert_int_eq(mkdir(st, 0777), 0);
        snprintf(gp, sizeof(gp), "%s/convergence.gp", st);
        int fd = -1;
        if (c == 0)
            fd = bind_socket(gp);
        else
            ck_assert_int_eq(c == 1 ? mkfifo(gp, 0666) : mkdir(gp, 0777), 0);
        result res = harness_hetsim((const char *[]){ "plot", r, "--style", st, "-o", p, NULL });
        if (fd >= 0)
            close(fd);
        char want[800];
        snprintf(want, sizeof(want), "--style: %s: not a regular file (%s)", gp, kinds[c]);
        ck_assert_msg(res.status == 2, "case %d: exit %d\n%s", c, res.status, res.err);
        ck_assert_msg(strstr(res.err, want) != NULL, "case %d: %s", c, res.err);
        ck_assert(!harness_exists(p));
    }
    harness_cleanup(dir);
}
END_TEST

Suite *test_suite(void)
{
    Suite *s = suite_create("probe21");
    TCase *messages = tcase_create("messages");
    tcase_add_test(messages, a_style_copy_is_named_by_its_type);
    tcase_set_timeout(messages, 120);
    suite_add_tcase(s, messages);
    return s;
}
