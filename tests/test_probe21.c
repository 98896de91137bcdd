/* Issue 38, class 19 (messages): a --style copy that is a socket was called "a FIFO or a
 * directory"; an output under a file that is no directory (`-o FILE/x`) failed, exit 1, when
 * the command made its directory, where it is bad usage. Every case failed before its fix.
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

/* `-o FILE/x`, FILE a regular file or a socket, passed every check of the output's place
 * (whose nearest existing folder was FILE) and failed when the command made its directory:
 * "FILE exists and is not a directory", exit 1, for run, sweep, check (after it had begun its
 * seeds), check --update and plot, RUN and --by. Refused before anything runs, naming FILE
 * and its type, exit 2, nothing changed. */
START_TEST(an_output_under_a_file_that_is_no_directory_is_refused)
{
    static const char *const kinds[] = { "a regular file", "a socket" };
    char *dir = harness_tmpdir("probe21");
    char s[600], g[600], r[600], sw[600], o[600], file[600], out[700], deeper[700];
    char before[4096], after[4096];
    harness_golden_in(dir, harness_quick_json, s, g, sizeof(s));
    harness_run_in(dir, NULL, s, r, sizeof(s));
    harness_sweep_in(dir, NULL, "{\"base\": \"s.json\", \"grid\": {\"workers\": [2, 3]}}", sw, o,
                     sizeof(s));
    for (int c = 0; c < 2; c++) {
        snprintf(file, sizeof(file), "%s/f%d", dir, c);
        int fd = -1;
        if (c == 0)
            harness_write(dir, "f0", "2.385\n");
        else
            fd = bind_socket(file);
        snprintf(out, sizeof(out), "%s/x", file);
        snprintf(deeper, sizeof(deeper), "%s/x/y", file);
        const char *const cmds[][12] = {
            { "run", s, "-o", out, "--quiet", NULL },
            { "run", s, "-o", deeper, "--quiet", NULL },
            { "sweep", sw, "-o", out, "--quiet", NULL },
            { "check", s, "--golden", g, "-o", out, NULL },
            { "check", s, "--golden", out, "--update", "--seeds", "3", NULL },
            { "plot", r, "-o", out, NULL },
            { "plot", o, "--by", "workers", "-o", out, NULL },
        };
        for (size_t k = 0; k < sizeof(cmds) / sizeof(cmds[0]); k++) {
            harness_tree_digest(dir, before, sizeof(before));
            result res = harness_hetsim(cmds[k]);
            harness_tree_digest(dir, after, sizeof(after));
            char want[800];
            snprintf(want, sizeof(want), ": %s is %s, not a directory", file, kinds[c]);
            ck_assert_msg(res.status == 2, "case %d, %s %s: exit %d\n%s", c, cmds[k][0], cmds[k][3],
                          res.status, res.err);
            ck_assert_msg(strstr(res.err, want) != NULL, "case %d, %s: %s", c, cmds[k][0], res.err);
            ck_assert_msg(strcmp(before, after) == 0, "case %d, %s: the tree changed", c,
                          cmds[k][0]);
        }
        if (fd >= 0)
            close(fd);
    }
    harness_cleanup(dir);
}
END_TEST

Suite *test_suite(void)
{
    Suite *s = suite_create("probe21");
    TCase *messages = tcase_create("messages");
    tcase_add_test(messages, a_style_copy_is_named_by_its_type);
    tcase_add_test(messages, an_output_under_a_file_that_is_no_directory_is_refused);
    tcase_set_timeout(messages, 120);
    suite_add_tcase(s, messages);
    return s;
}
