/* `hetsim check` and the places it writes (issue 38): a --junit report inside a hetsim output,
 * on a file the check reads or writes itself, through a link, a FIFO or a device; an output
 * directory equal to a hetsim directory; --update with -o or --junit; a timing-only golden's
 * figure; a scenario that is a FIFO. Runs the built binary ($HETSIM) on the check suite's short
 * scenario; one golden of 3 seeds is made once and copied for each test (tests/harness_check.h). */
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <check.h>

#include "harness.h"
#include "harness_check.h"

typedef harness_result result;

/* A directory `name` under `dir` marked as a kind of hetsim output, with a file in it. */
static void fake_output(const char *dir, const char *name, const char *marker)
{
    char d[600];
    snprintf(d, sizeof(d), "%s/%s", dir, name);
    ck_assert_int_eq(mkdir(d, 0777), 0);
    harness_write(d, marker,
                  strcmp(marker, "index.csv") == 0 ? "point,dir,seed,stop_reason\n" : "");
    harness_write(d, "mine.txt", "2.385\n");
}

/* --junit FILE inside any hetsim output (a golden's own seeds or golden.json, a seed's run
 * directory, a sweep's or a work directory, or a link into one) is refused with exit 2 before
 * anything runs, everything as it was (it renamed its report over the golden's files). */
START_TEST(check_refuses_a_junit_file_inside_any_hetsim_output)
{
    char *dir = chkt_copy_golden();
    char g[512], o[512], link[600], before[16384], after[16384];
    chkt_path_of(g, sizeof(g), dir, "golden");
    chkt_path_of(o, sizeof(o), dir, "out");
    fake_output(dir, "sweep", ".hetsim-sweep");
    fake_output(dir, "w.partial", ".hetsim-partial");
    snprintf(link, sizeof(link), "%s/link.xml", dir);
    ck_assert_int_eq(symlink("golden/golden.json", link), 0);
    static const char *const inside[] = { "golden/seeds",         "golden/golden.json",
                                          "golden/seed-11/x.xml", "golden/seed-12/metrics.csv",
                                          "sweep/index.csv",      "sweep/report.xml",
                                          "w.partial/r.xml",      "link.xml" };
    harness_tree_digest(dir, before, sizeof(before));
    for (size_t i = 0; i < sizeof(inside) / sizeof(inside[0]); i++) {
        char x[600];
        chkt_path_of(x, sizeof(x), dir, inside[i]);
        result r = chkt_check((const char *[]){ "--golden", g, "-o", o, "--junit", x, NULL });
        ck_assert_msg(r.status == 2, "%s: exit %d\n%s%s", inside[i], r.status, r.out, r.err);
        ck_assert_msg(strstr(r.err, "--junit file") != NULL && strstr(r.err, "a hetsim") != NULL,
                      "%s: %s", inside[i], r.err);
        ck_assert_str_eq(r.out, "");
        harness_tree_digest(dir, after, sizeof(after));
        ck_assert_msg(strcmp(before, after) == 0, "%s changed something", inside[i]);
    }
    result r = chkt_check_golden(dir);
    ck_assert_msg(r.status == 0, "exit %d\n%s%s", r.status, r.out, r.err);
    harness_cleanup(dir);
}
END_TEST

static bool is_type(const char *path, mode_t type)
{
    struct stat st;
    return lstat(path, &st) == 0 && (st.st_mode & S_IFMT) == type;
}

/* A --junit FILE that is not a regular file is written through or refused, never replaced:
 * a link's target is written (the link stays), a FIFO and a character device are written
 * through (a FIFO nobody reads is an error, not a wait), a directory is refused, and so is a
 * name ending in '/' (issue 38, third probe). */
START_TEST(check_writes_a_junit_through_links_fifos_and_devices_never_replacing_them)
{
    char *dir = chkt_copy_golden();
    char g[512], o[512], x[600], target[600], fifo[600], got[600], text[8192];
    chkt_path_of(g, sizeof(g), dir, "golden");
    chkt_path_of(o, sizeof(o), dir, "out");
    snprintf(x, sizeof(x), "%s/link.xml", dir);
    snprintf(target, sizeof(target), "%s/reports/target.xml", dir);
    chkt_sh("mkdir %s/reports && echo old >%s/reports/target.xml && ln -s reports/target.xml "
            "%s/link.xml",
            dir);
    result r = chkt_check((const char *[]){ "--golden", g, "-o", o, "--junit", x, NULL });
    ck_assert_msg(r.status == 0, "exit %d\n%s%s", r.status, r.out, r.err);
    ck_assert(is_type(x, S_IFLNK) && is_type(target, S_IFREG));
    harness_read_into(target, text, sizeof(text));
    ck_assert_msg(strstr(text, "<testsuites") != NULL, "%s", text);
    chkt_sh("ln -s reports/new.xml %s/dangling.xml", dir); /* a link to a file not made yet */
    snprintf(x, sizeof(x), "%s/dangling.xml", dir);
    r = chkt_check((const char *[]){ "--golden", g, "-o", o, "--junit", x, NULL });
    ck_assert_msg(r.status == 0, "exit %d\n%s%s", r.status, r.out, r.err);
    snprintf(target, sizeof(target), "%s/reports/new.xml", dir);
    ck_assert(is_type(x, S_IFLNK) && is_type(target, S_IFREG));
    /* A FIFO with a reader, then none. */
    snprintf(fifo, sizeof(fifo), "%s/fifo", dir);
    snprintf(got, sizeof(got), "%s/got.xml", dir);
    ck_assert_int_eq(mkfifo(fifo, 0600), 0);
    pid_t reader = fork();
    if (reader == 0) {
        int in = open(fifo, O_RDONLY), outfd = open(got, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        char buf[4096];
        for (ssize_t n; (n = read(in, buf, sizeof(buf))) > 0;)
            if (write(outfd, buf, (size_t)n) != n)
                _exit(1);
        _exit(0);
    }
    r = chkt_check((const char *[]){ "--golden", g, "-o", o, "--junit", fifo, NULL });
    int status;
    waitpid(reader, &status, 0);
    ck_assert_msg(r.status == 0, "exit %d\n%s%s", r.status, r.out, r.err);
    ck_assert(is_type(fifo, S_IFIFO));
    harness_read_into(got, text, sizeof(text));
    ck_assert_msg(strstr(text, "</testsuites>") != NULL, "%s", text);
    r = chkt_check((const char *[]){ "--golden", g, "-o", o, "--junit", fifo, NULL });
    ck_assert_msg(r.status == 1 && strstr(r.err, "a FIFO that no process reads") != NULL,
                  "exit %d\n%s", r.status, r.err);
    ck_assert(is_type(fifo, S_IFIFO));
    r = chkt_check((const char *[]){ "--golden", g, "-o", o, "--junit", "/dev/null", NULL });
    ck_assert_msg(r.status == 0, "exit %d\n%s", r.status, r.err);
    ck_assert(is_type("/dev/null", S_IFCHR));
    r = chkt_check((const char *[]){ "--golden", g, "-o", o, "--junit", o, NULL });
    ck_assert_msg(r.status == 2 && strstr(r.err, "is a directory") != NULL, "exit %d\n%s", r.status,
                  r.err);
    snprintf(x, sizeof(x), "%s/xml/", dir); /* it wrote a file named xml, exit 0 */
    r = chkt_check((const char *[]){ "--golden", g, "-o", o, "--junit", x, NULL });
    ck_assert_msg(r.status == 2 && strstr(r.err, "names a directory") != NULL, "exit %d\n%s",
                  r.status, r.err);
    x[strlen(x) - 1] = '\0';
    ck_assert_msg(!harness_exists(x), "%s was written", x);
    harness_cleanup(dir);
}
END_TEST

/* -o equal to a hetsim directory counts as inside it (only -o GOLDEN/sub was refused: -o
 * GOLDEN wrote the runs and check.* into the golden, and every later check exited 2). */
START_TEST(check_output_equal_to_a_hetsim_directory_is_refused)
{
    char *dir = chkt_copy_golden();
    char g[512], before[16384], after[16384];
    chkt_path_of(g, sizeof(g), dir, "golden");
    fake_output(dir, "sweep", ".hetsim-sweep");
    static const char *const outs[] = { "golden", "golden/", "golden/seed-11", "sweep" };
    harness_tree_digest(dir, before, sizeof(before));
    for (size_t i = 0; i < sizeof(outs) / sizeof(outs[0]); i++) {
        char o[600];
        chkt_path_of(o, sizeof(o), dir, outs[i]);
        result r = chkt_check((const char *[]){ "--golden", g, "-o", o, NULL });
        ck_assert_msg(r.status == 2, "-o %s: exit %d\n%s%s", outs[i], r.status, r.out, r.err);
        ck_assert_msg(strstr(r.err, "a hetsim") != NULL, "-o %s: %s", outs[i], r.err);
        harness_tree_digest(dir, after, sizeof(after));
        ck_assert_msg(strcmp(before, after) == 0, "-o %s changed something", outs[i]);
    }
    result r = chkt_check_golden(dir);
    ck_assert_msg(r.status == 0, "exit %d\n%s%s", r.status, r.out, r.err);
    harness_cleanup(dir);
}
END_TEST

/* An update writes its golden alone: -o (a check's runs and figure) and --junit (a check's
 * verdict) are refused with it, exit 2, nothing made and the golden as it was (both were
 * ignored, exit 0: no report where CI looked for one). */
START_TEST(check_update_refuses_an_output_directory_and_a_junit_report)
{
    char *dir = chkt_copy_golden();
    char g[512], o[600], before[16384], after[16384];
    chkt_path_of(g, sizeof(g), dir, "golden");
    static const char *const opts[][2] = { { "-o", "out" }, { "--junit", "report.xml" } };
    harness_tree_digest(dir, before, sizeof(before));
    for (size_t i = 0; i < 2; i++) {
        chkt_path_of(o, sizeof(o), dir, opts[i][1]);
        result r = chkt_check(
            (const char *[]){ "--golden", g, "--update", "--seeds", "3", opts[i][0], o, NULL });
        char want[64];
        snprintf(want, sizeof(want), "--update and %s do not go together", opts[i][0]);
        ck_assert_msg(r.status == 2, "%s: exit %d\n%s%s", opts[i][0], r.status, r.out, r.err);
        ck_assert_msg(strstr(r.err, want) != NULL, "%s: %s", opts[i][0], r.err);
        ck_assert(!chkt_exists(o));
        harness_tree_digest(dir, after, sizeof(after));
        ck_assert_msg(strcmp(before, after) == 0, "%s changed something", opts[i][0]);
    }
    harness_cleanup(dir);
}
END_TEST

/* A --junit FILE the check reads or writes itself is refused with exit 2, nothing changed: a
 * name of hetsim's work directories or locks (X.partial, X.lock: the report, a plain file
 * there, stopped every later run into X or update of X), the scenario file (its report
 * replaced the scenario it checked; through a link or a hard link too), one of the check's
 * own files in its output directory (check.csv was replaced by the report). */
START_TEST(check_refuses_a_junit_file_it_reads_or_writes_itself)
{
    char *dir = chkt_copy_golden();
    char g[512], o[512], s[512], before[16384], after[16384];
    chkt_path_of(g, sizeof(g), dir, "golden");
    chkt_path_of(o, sizeof(o), dir, "out");
    chkt_path_of(s, sizeof(s), dir, "s.json");
    chkt_sh("cp " CHKT_SCENARIO
            " %s/s.json && ln -s s.json %s/s-link.json && ln %s/s.json %s/s-hard.json",
            dir);
    static const char *const own[] = { "golden.partial", "out.lock",     "x.partial",
                                       "s.json",         "s-link.json",  "s-hard.json",
                                       "out/check.csv",  "out/check.png" };
    harness_tree_digest(dir, before, sizeof(before));
    chkt_scenario = s;
    for (size_t i = 0; i < sizeof(own) / sizeof(own[0]); i++) {
        char x[600];
        chkt_path_of(x, sizeof(x), dir, own[i]);
        result r = chkt_check((const char *[]){ "--golden", g, "-o", o, "--junit", x, NULL });
        ck_assert_msg(r.status == 2, "%s: exit %d\n%s%s", own[i], r.status, r.out, r.err);
        ck_assert_msg(strstr(r.err, "--junit file") != NULL, "%s: %s", own[i], r.err);
        harness_tree_digest(dir, after, sizeof(after));
        ck_assert_msg(strcmp(before, after) == 0, "%s changed something", own[i]);
    }
    chkt_scenario = CHKT_SCENARIO;
    harness_cleanup(dir);
}
END_TEST

/* A timing-only scenario's check draws its figure, the panels without test accuracy or loss
 * saying so, and passes (gnuplot failed on the empty curves: "x range is invalid", exit 1). It
 * compares the throughput alone and names what it did not compare: the log-loss statistic,
 * the log of an empty loss taken as 1e-12, was compared and always equal (issue 38); check.csv
 * holds no row of it and the JUnit report skips the two curves. */
START_TEST(check_of_a_timing_only_scenario_compares_its_throughput_alone_and_draws_its_figure)
{
    char *dir = harness_tmpdir("check");
    char g[512], o[512], png[512], csv[512], xml[512], text[4096];
    chkt_path_of(g, sizeof(g), dir, "golden");
    chkt_path_of(o, sizeof(o), dir, "out");
    chkt_path_of(png, sizeof(png), dir, "out/check.png");
    chkt_path_of(csv, sizeof(csv), dir, "out/check.csv");
    chkt_path_of(xml, sizeof(xml), dir, "report.xml");
    const char *none = "workload={\"model\": {\"name\": \"none\"}, \"message_bytes\": 40961}";
    result r = chkt_check(
        (const char *[]){ "--set", none, "--golden", g, "--update", "--seeds", "3", NULL });
    ck_assert_msg(r.status == 0, "exit %d\n%s%s", r.status, r.out, r.err);
    r = chkt_check((const char *[]){ "--set", none, "--golden", g, "-o", o, "--seeds", "2",
                                     "--junit", xml, NULL });
    ck_assert_msg(r.status == 0, "exit %d\n%s%s", r.status, r.out, r.err);
    ck_assert(chkt_exists(png));
    ck_assert_msg(strstr(r.out, "; 1 statistics,") != NULL &&
                      strstr(r.out, "  throughput_mean  golden") != NULL &&
                      strstr(r.out, "  not compared (no values in the golden): accuracy_mean, "
                                    "accuracy_final, accuracy_jitter, log_loss_mean\n") != NULL,
                  "%s", r.out);
    harness_read_into(csv, text, sizeof(text));
    ck_assert_msg(strstr(text, "log_loss") == NULL && strstr(text, "\n0,throughput_mean,") != NULL,
                  "%s", text);
    harness_read_into(xml, text, sizeof(text));
    ck_assert_msg(strstr(text, "tests=\"3\" failures=\"0\" errors=\"0\" skipped=\"2\"") != NULL &&
                      strstr(text, "name=\"test_loss\" time=") != NULL,
                  "%s", text);
    ck_assert_ptr_nonnull(strstr(strstr(text, "name=\"test_loss\""), ">\n      <skipped "));
    harness_cleanup(dir);
}
END_TEST

/* A scenario that is a FIFO is refused at once: each seed's run reads it again, so a check
 * (or an update) waited forever for the next writer. */
START_TEST(check_refuses_a_scenario_that_is_a_fifo)
{
    char *dir = chkt_copy_golden();
    char g[512], fifo[512];
    chkt_path_of(g, sizeof(g), dir, "golden");
    chkt_path_of(fifo, sizeof(fifo), dir, "s.json");
    ck_assert_int_eq(mkfifo(fifo, 0600), 0);
    chkt_scenario = fifo;
    result r = chkt_check((const char *[]){ "--golden", g, NULL });
    ck_assert_msg(r.status == 2 && strstr(r.err, "is a FIFO") != NULL, "exit %d: %s", r.status,
                  r.err);
    chkt_scenario = CHKT_SCENARIO;
    harness_cleanup(dir);
}
END_TEST

Suite *test_suite(void)
{
    Suite *s = suite_create("check_places");
    TCase *places = tcase_create("places");
    tcase_set_timeout(places, 240);
    tcase_add_unchecked_fixture(places, chkt_setup_base, chkt_teardown_base);
    tcase_add_test(places, check_refuses_a_junit_file_inside_any_hetsim_output);
    tcase_add_test(places,
                   check_writes_a_junit_through_links_fifos_and_devices_never_replacing_them);
    tcase_add_test(places, check_output_equal_to_a_hetsim_directory_is_refused);
    tcase_add_test(places, check_update_refuses_an_output_directory_and_a_junit_report);
    tcase_add_test(places, check_refuses_a_junit_file_it_reads_or_writes_itself);
    tcase_add_test(
        places, check_of_a_timing_only_scenario_compares_its_throughput_alone_and_draws_its_figure);
    tcase_add_test(places, check_refuses_a_scenario_that_is_a_fifo);
    suite_add_tcase(s, places);
    return s;
}
