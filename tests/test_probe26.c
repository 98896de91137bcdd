/* Issue 38, the thirteenth probe, classes 16 and 19: plot --by checked its output directory
 * for gnuplot only as part of "OUT/KEY" cut to 2,047 bytes and named the key for it; a --style
 * directory too long for its copies' paths was a failure to read, exit 1; an option whose
 * value was forgotten took the next option as its value (`-o --quiet`). Every case failed
 * before its fix. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <check.h>

#include "harness.h"
#include "sim/text.h"

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
    static char before[1 << 16], after[1 << 16]; /* the listing of DEEP's 11 folders */
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

/* A --style directory of 4,085 bytes (a path the system takes) whose copies' paths,
 * DIR/convergence.gp, pass the system's 4,095: "cannot read DIR/convergence.gp: File name too
 * long", exit 1, a failure of the run for a place the user chose. It is bad usage naming
 * --style, exit 2, nothing drawn. */
START_TEST(a_style_directory_too_long_for_its_copies_is_bad_usage)
{
    char *dir = harness_tmpdir("probe26");
    char s[600], r[600], p[600], deep[4200];
    harness_run_in(dir, harness_quick_json, s, r, sizeof(s));
    size_t len = harness_deep_dir(dir, 's', 19, deep, sizeof(deep));
    size_t last = 4085 - len - 1;
    ck_assert_uint_lt(last, 250);
    deep[len] = '/';
    memset(deep + len + 1, 't', last);
    deep[len + 1 + last] = '\0';
    ck_assert_int_eq(mkdir(deep, 0777), 0);
    snprintf(p, sizeof(p), "%s/p", dir);
    result res = harness_hetsim((const char *[]){ "plot", r, "--style", deep, "-o", p, NULL });
    ck_assert_msg(res.status == 2, "exit %d\n%.300s", res.status, res.err);
    ck_assert_msg(strncmp(res.err, "hetsim: --style: ", 17) == 0 &&
                      strstr(res.err, "File name too long") != NULL,
                  "%.300s", res.err);
    ck_assert(!harness_exists(p));
    harness_cleanup(dir);
}
END_TEST

/* An option that takes a value, followed by another option (its value forgotten), took that
 * option as its value: `run s.json -o --quiet` ran into a directory "--quiet", exit 0;
 * `check s.json --golden --update` said "--update: no golden here"; `report --names --format
 * md` "cannot read --format"; `run s.json --set -o x` "run takes one scenario, got a second:
 * x"; `sweep sw.json -o --list` ran into "--list". Each is "OPTION needs a value", naming the
 * option it got, exit 2, nothing made (a --title is any text, "-o" too: test_cli). */
START_TEST(an_option_given_another_option_as_its_value_is_refused)
{
    char *dir = harness_tmpdir("probe26");
    char s[600], sw[600], o[600], g[600], p[700];
    harness_sweep_in(dir, harness_quick_json, harness_protocols_sweep, sw, o, sizeof(s));
    snprintf(s, sizeof(s), "%s/s.json", dir);
    snprintf(g, sizeof(g), "%s/g", dir);
    snprintf(p, sizeof(p), "%s/p", dir);
    ck_assert_int_eq(chdir(dir), 0); /* a relative "--quiet" lands here; the test is forked */
    const char *const *cmds[] = {
        (const char *[]){ "run", s, "-o", "--quiet", NULL },
        (const char *[]){ "check", s, "--golden", "--update", NULL },
        (const char *[]){ "report", o, "--by", "protocol.name", "--names", "--format", "md", NULL },
        (const char *[]){ "run", s, "--set", "-o", p, NULL },
        (const char *[]){ "sweep", sw, "-o", "--list", NULL },
    };
    const char *const wants[] = {
        "-o needs a value, got the option --quiet",
        "--golden needs a value, got the option --update",
        "--names needs a value, got the option --format",
        "--set needs a value, got the option -o",
        "-o needs a value, got the option --list",
    };
    static char before[1 << 16], after[1 << 16];
    for (size_t c = 0; c < sizeof(cmds) / sizeof(cmds[0]); c++) {
        harness_tree_digest(dir, before, sizeof(before));
        result res = harness_hetsim(cmds[c]);
        harness_tree_digest(dir, after, sizeof(after));
        ck_assert_msg(res.status == 2, "case %zu: exit %d\n%.300s", c, res.status, res.err);
        ck_assert_msg(strstr(res.err, wants[c]) != NULL, "case %zu: %.300s", c, res.err);
        ck_assert_msg(strcmp(before, after) == 0, "case %zu: the tree changed", c);
    }
    harness_cleanup(dir);
}
END_TEST

/* A golden that lost its seeds file (golden.json and its seeds' directories there): check
 * said "G: no golden here (write one with --update)", and --update then refused it, "G: not a
 * golden (no seeds file) and not empty: not replaced", exit 2 each: a loop of advice. The
 * check names the missing file as an incomplete golden's, and the way out: remove it. */
START_TEST(a_golden_without_its_seeds_file_is_named_incomplete)
{
    char *dir = harness_tmpdir("probe26");
    char s[600], g[600], seeds[700], o[600], want[1400];
    harness_golden_in(dir, harness_quick_json, s, g, sizeof(s));
    snprintf(seeds, sizeof(seeds), "%s/seeds", g);
    snprintf(o, sizeof(o), "%s/o", dir);
    ck_assert_int_eq(remove(seeds), 0);
    result res = harness_hetsim((const char *[]){ "check", s, "--golden", g, "-o", o, NULL });
    ck_assert_msg(res.status == 2, "exit %d\n%.300s", res.status, res.err);
    snprintf(want, sizeof(want), "%s: missing: an incomplete golden (remove %s", seeds, g);
    ck_assert_msg(strstr(res.err, want) != NULL, "%.400s", res.err);
    ck_assert(!harness_exists(o));
    harness_cleanup(dir);
}
END_TEST

/* A scenario opening with a UTF-8 byte-order mark (which an editor never shows) had its
 * errors on line 1 named three columns further: `{"seed": 5, "x": tru}` said column 21, the
 * same file without the mark column 18. The mark is no column, in a scenario, a sweep file
 * and a golden.json; later lines were right already. */
START_TEST(a_byte_order_mark_is_no_column_of_a_json_error)
{
    char *dir = harness_tmpdir("probe26");
    char s[600], sw[600], g[600], o[600], path[700];
    harness_write(dir, "bom.json", "\xef\xbb\xbf{\"seed\": 5, \"x\": tru}\n");
    harness_write(dir, "bom2.json", "\xef\xbb\xbf{\"seed\": 5,\n \"x\": tru}\n");
    snprintf(s, sizeof(s), "%s/bom.json", dir);
    result res = harness_hetsim((const char *[]){ "validate", s, NULL });
    ck_assert_msg(res.status == 2 && strstr(res.err, "bom.json: line 1, column 18: ") != NULL,
                  "exit %d: %.300s", res.status, res.err);
    snprintf(s, sizeof(s), "%s/bom2.json", dir);
    res = harness_hetsim((const char *[]){ "validate", s, NULL });
    ck_assert_msg(res.status == 2 && strstr(res.err, "bom2.json: line 2, column 7: ") != NULL,
                  "exit %d: %.300s", res.status, res.err);
    harness_write(dir, "sw.json", "\xef\xbb\xbf{\"base\": \"s.json\", \"seeds\": tru}\n");
    snprintf(sw, sizeof(sw), "%s/sw.json", dir);
    res = harness_hetsim((const char *[]){ "sweep", sw, "--list", NULL });
    ck_assert_msg(res.status == 2 && strstr(res.err, "sw.json: line 1, column 29: ") != NULL,
                  "exit %d: %.300s", res.status, res.err);
    harness_golden_in(dir, harness_quick_json, s, g, sizeof(s));
    harness_write(g, "golden.json", "\xef\xbb\xbf{\"format\": tru}\n");
    snprintf(o, sizeof(o), "%s/o", dir);
    res = harness_hetsim((const char *[]){ "check", s, "--golden", g, "-o", o, NULL });
    snprintf(path, sizeof(path), "golden.json: line 1, column 12: ");
    ck_assert_msg(res.status == 2 && strstr(res.err, path) != NULL, "exit %d: %.300s", res.status,
                  res.err);
    harness_cleanup(dir);
}
END_TEST

/* A text file that is a device waiting for input, a link to /dev/ptmx (a pseudo-terminal's
 * master, which no one writes): the scenario, a profile, a trace, a --names file and a --style
 * copy were read from it forever (a FIFO is never waited on, a device was); the results files,
 * LIBSVM data and a golden's files refuse it already. Each read fails at once, naming the
 * file, exit 2 (a --style copy too, as a FIFO there: it was exit 1, a failure to read it,
 * until the fourteenth probe), nothing written. */
START_TEST(a_text_file_that_is_a_waiting_device_is_not_waited_on)
{
    if (access("/dev/ptmx", R_OK) != 0)
        return; /* no pseudo-terminals here */
    char *dir = harness_tmpdir("probe26");
    char s[600], sw[600], o[600], r[700], path[700], st[600], p[600];
    harness_sweep_in(dir, harness_quick_json, harness_protocols_sweep, sw, o, sizeof(s));
    snprintf(r, sizeof(r), "%s/protocol.name=allreduce,seed=5", o);
    static const char *const links[] = { "dev.json", "dev.csv", "names.txt", "st/convergence.gp" };
    snprintf(st, sizeof(st), "%s/st", dir);
    ck_assert_int_eq(mkdir(st, 0777), 0);
    for (size_t i = 0; i < 4; i++) {
        snprintf(path, sizeof(path), "%s/%s", dir, links[i]);
        ck_assert_int_eq(symlink("/dev/ptmx", path), 0);
    }
    harness_write(dir, "profile.json",
                  "{\"seed\": 5, \"workers\": 3, \"compute\": {\"iteration_ms\": 10, "
                  "\"profile\": \"dev.csv\"}, \"workload\": {\"model\": {\"name\": \"none\"}}, "
                  "\"protocol\": {\"name\": \"allreduce\"}, \"stop\": {\"time_s\": 0.2}}\n");
    harness_write(dir, "trace.json",
                  "{\"seed\": 5, \"workers\": 3, \"compute\": {\"iteration_ms\": 10}, "
                  "\"workload\": {\"model\": {\"name\": \"none\"}, \"message_bytes\": 400}, "
                  "\"protocol\": {\"name\": \"allreduce\"}, \"stop\": {\"time_s\": 0.2}, "
                  "\"stragglers\": [{\"kind\": \"trace\", \"file\": \"dev.csv\"}]}\n");
    char a[700], b[700], c[700], d[700];
    snprintf(a, sizeof(a), "%s/dev.json", dir);
    snprintf(b, sizeof(b), "%s/profile.json", dir);
    snprintf(c, sizeof(c), "%s/trace.json", dir);
    snprintf(d, sizeof(d), "%s/names.txt", dir);
    snprintf(p, sizeof(p), "%s/p", dir);
    const char *const *cmds[] = {
        (const char *[]){ "validate", a, NULL },
        (const char *[]){ "validate", b, NULL },
        (const char *[]){ "validate", c, NULL },
        (const char *[]){ "report", o, "--by", "protocol.name", "--names", d, NULL },
        (const char *[]){ "plot", r, "--style", st, "-o", p, NULL },
    };
    const char *const wants[] = { "dev.json", "dev.csv", "dev.csv", "names.txt", "convergence.gp" };
    for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
        result res = harness_hetsim(cmds[i]);
        ck_assert_msg(res.status == 2, "case %zu: exit %d\n%.300s", i, res.status, res.err);
        ck_assert_msg(strstr(res.err, wants[i]) != NULL, "case %zu: %.300s", i, res.err);
    }
    ck_assert(!harness_exists(p));
    harness_cleanup(dir);
}
END_TEST

/* The warning of a run directory of the sweep's that no row of index.csv names quoted its
 * name raw: a directory "x\x1b[31m\xff" (a name is any bytes) sent the terminal its escape
 * sequence and made the line no UTF-8, where every message writes a control byte as
 * "\u001b" and a byte that is no UTF-8 as "\xff"; so did plot --by's line of a point left out
 * for want of results, its dir as index.csv names it. Both are said escaped. */
START_TEST(the_unlisted_run_directory_warning_escapes_its_name)
{
    char *dir = harness_tmpdir("probe26");
    char s[600], sw[600], o[600], x[700], cmd[2200], p[600];
    harness_sweep_in(dir, harness_quick_json, harness_protocols_sweep, sw, o, sizeof(s));
    snprintf(x, sizeof(x), "%s/x\x1b[31m\xff", o);
    ck_assert_int_eq(mkdir(x, 0777), 0);
    snprintf(cmd, sizeof(cmd), "cp '%s/protocol.name=allreduce,seed=5/run.json' '%s/'", o, x);
    ck_assert_int_eq(system(cmd), 0);
    snprintf(p, sizeof(p), "%s/p", dir);
    const char *const *cmds[] = {
        (const char *[]){ "report", o, "--by", "protocol.name", NULL },
        (const char *[]){ "plot", o, "--by", "protocol.name", "-o", p, NULL },
    };
    for (size_t i = 0; i < 2; i++) {
        result res = harness_hetsim(cmds[i]);
        ck_assert_msg(res.status == 0, "case %zu: exit %d\n%.300s", i, res.status, res.err);
        ck_assert_msg(strstr(res.err, "left out (x\\u001b[31m\\xff;") != NULL &&
                          strchr(res.err, '\x1b') == NULL && sim_text_utf8(res.err),
                      "case %zu: %.300s", i, res.err);
    }
    /* A point left out for want of results, its dir so named in index.csv. */
    snprintf(cmd, sizeof(cmd),
             "sed -i '2s/.*/0,\"x\\x1b[31m\\xff\",allreduce,5,missing,,,,,,/' '%s/index.csv'", o);
    ck_assert_int_eq(system(cmd), 0);
    result res = harness_hetsim(cmds[1]);
    ck_assert_msg(res.status == 0, "left out: exit %d\n%.300s", res.status, res.err);
    ck_assert_msg(strstr(res.err, "left out point 0 (x\\u001b[31m\\xff)") != NULL &&
                      strchr(res.err, '\x1b') == NULL && sim_text_utf8(res.err),
                  "left out: %.300s", res.err);
    harness_cleanup(dir);
}
END_TEST

/* A failing point's lines named its directory raw: a sweep into "s\x1b[31m" whose point's
 * directory had become a file said "hetsim: point 3 (s<ESC>[31m/...): ..." on the terminal
 * (a check's failing seed said "seed 10 (c\u001b[31m/seed-10)"). Written escaped. */
START_TEST(a_failing_point_names_its_directory_escaped)
{
    char *dir = harness_tmpdir("probe26");
    char sw[600], o[600], at[1400];
    harness_sweep_file(dir, harness_quick_json, harness_protocols_sweep, sw, sizeof(sw));
    snprintf(o, sizeof(o), "%s/s\x1b[31m", dir);
    const char *cmd[] = { "sweep", sw, "-o", o, "--quiet", NULL };
    result res = harness_hetsim(cmd);
    ck_assert_msg(res.status == 0, "exit %d\n%.300s", res.status, res.err);
    snprintf(at, sizeof(at),
             "rm -r '%s/protocol.name=dpsgd,seed=6' && touch '%s/protocol.name=dpsgd,seed=6'", o,
             o);
    ck_assert_int_eq(system(at), 0);
    res = harness_hetsim(cmd);
    ck_assert_msg(res.status == 1, "exit %d\n%.300s", res.status, res.err);
    ck_assert_msg(strstr(res.err, "s\\u001b[31m/protocol.name=dpsgd,seed=6): ") != NULL &&
                      strchr(res.err, '\x1b') == NULL,
                  "%.400s", res.err);
    harness_cleanup(dir);
}
END_TEST

Suite *test_suite(void)
{
    Suite *s = suite_create("probe26");
    TCase *messages = tcase_create("messages");
    tcase_add_test(messages, a_plot_by_output_gnuplot_cannot_take_is_named_and_refused_first);
    tcase_add_test(messages, a_style_directory_too_long_for_its_copies_is_bad_usage);
    tcase_add_test(messages, an_option_given_another_option_as_its_value_is_refused);
    tcase_add_test(messages, a_golden_without_its_seeds_file_is_named_incomplete);
    tcase_add_test(messages, a_byte_order_mark_is_no_column_of_a_json_error);
    tcase_add_test(messages, a_text_file_that_is_a_waiting_device_is_not_waited_on);
    tcase_add_test(messages, the_unlisted_run_directory_warning_escapes_its_name);
    tcase_add_test(messages, a_failing_point_names_its_directory_escaped);
    tcase_set_timeout(messages, 120);
    suite_add_tcase(s, messages);
    return s;
}
