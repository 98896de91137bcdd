/* Issue 38's inputs left open after the eighteenth probe: trace memory, UTF-32 text, a golden
 * file swapped for a FIFO, the profiler tool's output. Each case failed before its fix.
 */
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <check.h>

#include "app/check_state.h"
#include "harness.h"

typedef harness_result result;

/* A million trace points (the limit of one trace) over 4 workers, into dir/tr.csv. */
static void write_big_trace(const char *dir)
{
    char path[700];
    snprintf(path, sizeof(path), "%s/tr.csv", dir);
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs("time_s,worker,slowdown\n", f);
    for (unsigned i = 0; i < 1000000; i++)
        fprintf(f, "%u.%03u,%u,1.5\n", i / 4000, i / 4 % 1000, i % 4);
    ck_assert_int_eq(fclose(f), 0);
}

/* dir/s.json: 4 workers and `rules` trace rules, each naming tr.csv. */
static void write_traced(const char *dir, size_t rules)
{
    size_t size = 400 + rules * 48;
    char *json = malloc(size), *p = json;
    ck_assert_ptr_nonnull(json);
    p += sprintf(p, "{\"seed\": 5, \"workers\": 4, \"compute\": {\"iteration_ms\": 10},\n"
                    " \"stragglers\": [");
    for (size_t i = 0; i < rules; i++)
        p += sprintf(p, "%s{\"kind\": \"trace\", \"file\": \"tr.csv\"}", i > 0 ? ",\n" : "");
    sprintf(p, "],\n \"workload\": {\"model\": {\"name\": \"none\"}, \"message_bytes\": 4000},\n"
               " \"protocol\": {\"name\": \"allreduce\"}, \"stop\": {\"time_s\": 0.2}}\n");
    harness_write(dir, "s.json", json);
    free(json);
}

/* The peak resident size of the children waited for so far, in MB (Check runs each test in a
 * process of its own: these are the test's). */
static double children_peak_mb(void)
{
    struct rusage ru;
    ck_assert_int_eq(getrusage(RUSAGE_CHILDREN, &ru), 0);
    return (double)ru.ru_maxrss / 1024.0;
}

/* Each rule naming a trace file read it again and held its own copy of the points: `validate`
 * of 16 rules naming one 1M-point file peaked at 444 MB (68 MB for one rule). A file named by
 * several rules is read once now: under 150 MB. */
START_TEST(a_trace_named_by_many_rules_is_read_once)
{
    char *dir = harness_tmpdir("probe56");
    char s[700];
    write_big_trace(dir);
    write_traced(dir, 16);
    snprintf(s, sizeof(s), "%s/s.json", dir);
    result res = harness_hetsim((const char *[]){ "validate", s, NULL });
    double peak = children_peak_mb();
    ck_assert_msg(res.status == 0, "exit %d\n%s", res.status, res.err);
    ck_assert_msg(peak < 150.0, "validate of 16 rules naming one trace peaked at %.0f MB", peak);
    harness_cleanup(dir);
}
END_TEST

/* Built with AddressSanitizer (the CI's sanitizer build), whose shadow memory no 4 GiB address
 * space holds: the limit is left out there, and the refusal still checked. */
#if defined(__SANITIZE_ADDRESS__)
#define UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define UNDER_ASAN 1
#endif
#endif
#ifndef UNDER_ASAN
#define UNDER_ASAN 0
#endif

/* 20,000 rules naming one 1M-point file: each rule's points are copied for the run, 320 GB at
 * the least, which the memory guard did not count. The load read the file for every rule (here,
 * under a 4 GiB address space: "out of memory", exit 1; unbounded it asked for 480 GB). Refused
 * now as the points pass the guard's limit, which the message names, exit 2. */
START_TEST(trace_points_count_against_the_memory_guard)
{
    char *dir = harness_tmpdir("probe56");
    char s[700];
    write_big_trace(dir);
    write_traced(dir, 20000);
    snprintf(s, sizeof(s), "%s/s.json", dir);
    struct rlimit as = { (rlim_t)4 << 30, (rlim_t)4 << 30 };
    if (!UNDER_ASAN) /* AddressSanitizer reserves terabytes of address space for its shadow */
        ck_assert_int_eq(setrlimit(RLIMIT_AS, &as), 0);
    result res = harness_hetsim((const char *[]){ "validate", s, NULL });
    ck_assert_msg(res.status == 2 && strstr(res.err, "$.stragglers") != NULL &&
                      strstr(res.err, "trace") != NULL &&
                      strstr(res.err, "more than 80% of this machine's memory") != NULL,
                  "exit %d\n%s", res.status, res.err);
    harness_cleanup(dir);
}
END_TEST

/* A text in UTF-32 (FF FE 00 00, little-endian; 00 00 FE FF, big-endian) was named "UTF-16
 * text" and "line 1, column 1: unexpected NUL byte": one message now names both. */
START_TEST(a_utf32_text_is_named_as_such)
{
    char *dir = harness_tmpdir("probe56");
    static const char text[] = "{\"seed\": 1}\n";
    for (int big = 0; big < 2; big++) {
        char path[700];
        snprintf(path, sizeof(path), "%s/u32.json", dir);
        FILE *f = fopen(path, "wb");
        ck_assert_ptr_nonnull(f);
        fwrite(big ? "\0\0\xfe\xff" : "\xff\xfe\0\0", 1, 4, f);
        for (const char *c = text; *c != '\0'; c++) {
            char unit[4] = { 0, 0, 0, 0 };
            unit[big ? 3 : 0] = *c;
            fwrite(unit, 1, 4, f);
        }
        ck_assert_int_eq(fclose(f), 0);
        result res = harness_hetsim((const char *[]){ "validate", path, NULL });
        ck_assert_msg(res.status == 2 &&
                          strstr(res.err, "u32.json: line 1, column 1: UTF-16 or UTF-32 text (a "
                                          "UTF-16 or UTF-32 byte-order mark opens the file): "
                                          "hetsim reads UTF-8") != NULL,
                      "%s: exit %d\n%s", big ? "UTF-32BE" : "UTF-32LE", res.status, res.err);
    }
    harness_cleanup(dir);
}
END_TEST

/* check hashes a golden's files after it has seen them regular (regular_files); a file swapped
 * for a FIFO between the two was fopen()ed and waited on for a writer forever (here: killed by
 * the alarm). The hash opens without blocking and refuses a descriptor that is no regular file:
 * "missing or unreadable" at once. */
START_TEST(a_golden_file_swapped_for_a_fifo_is_not_waited_on)
{
    char *dir = harness_tmpdir("probe56");
    char path[700];
    snprintf(path, sizeof(path), "%s/metrics.csv", dir);
    ck_assert_int_eq(mkfifo(path, 0666), 0);
    alarm(20);
    uint64_t h = 0;
    ck_assert(!ck_file_hash(dir, "metrics.csv", &h));
    alarm(0);
    harness_write(dir, "run.json", "{}\n");
    ck_assert(ck_file_hash(dir, "run.json", &h));
    harness_cleanup(dir);
}
END_TEST

/* The profiler's writer (tools/profile_write.py), run without torch: checks in Python, one line
 * "CASE: what happened" each, "ok" at the end. */
static const char writer_checks[] =
    "import os, sys, csv\n"
    "sys.path.insert(0, 'tools')\n"
    "from profile_write import write_profile\n"
    "d = sys.argv[1]\n"
    "row = [['a,b\"c', '10', '20', '1.000000', '2.000000', 'matmul', '8', '0']]\n"
    "def refused(case, path):\n"
    "    try:\n"
    "        write_profile(path, 'c', row)\n"
    "    except SystemExit as e:\n"
    "        print('%s: refused: %s' % (case, e))\n"
    "        return True\n"
    "    print('%s: written' % case)\n"
    "    return False\n"
    "ok = True\n"
    "open(os.path.join(d, 'target.csv'), 'w').write('mine\\n')\n"
    "os.symlink('target.csv', os.path.join(d, 'link.csv'))\n"
    "ok &= refused('link', os.path.join(d, 'link.csv'))\n"
    "ok &= open(os.path.join(d, 'target.csv')).read() == 'mine\\n'\n"
    "os.mkfifo(os.path.join(d, 'fifo.csv'))\n"
    "ok &= refused('fifo', os.path.join(d, 'fifo.csv'))\n"
    "ok &= refused('run', os.path.join(d, 'r', 'p.csv'))\n"
    "ok &= refused('run folder', os.path.join(d, 'r', 'sub', 'p.csv'))\n"
    "ok &= refused('golden', os.path.join(d, 'g', 'seeds'))\n"
    "ok &= not os.path.exists(os.path.join(d, 'r', 'p.csv'))\n"
    "ok &= not refused('new file', os.path.join(d, 'p.csv'))\n"
    "text = open(os.path.join(d, 'p.csv')).read().splitlines()\n"
    "back = list(csv.reader(text[1:]))\n"
    "print('read back: %r' % back)\n"
    "ok &= text[0] == '# c' and back[1] == row[0] and len(back) == 2\n"
    "ok &= sorted(f for f in os.listdir(d) if f.endswith('.tmp')) == []\n"
    "print('ok' if ok else 'FAILED')\n";

/* tools/profile_model.py -o wrote with open(path, "w"): through a symbolic link (its target
 * replaced), into a FIFO (waited on), into a run directory or a golden, and a layer name with
 * a comma shifted its row. Its writer refuses a link, a FIFO and a place inside a hetsim output
 * now, writes a temporary file renamed into place, and quotes fields as Python's csv does. */
START_TEST(the_profilers_writer_refuses_links_fifos_and_outputs)
{
    char *dir = harness_tmpdir("probe56");
    char s[700], r[700], g[700], cmd[1600];
    harness_run_in(dir, harness_quick_json, s, r, sizeof(s));
    harness_golden_in(dir, NULL, s, g, sizeof(s));
    ck_assert_int_eq(mkdir(strcat(strcpy(cmd, r), "/sub"), 0777), 0);
    harness_write(dir, "checks.py", writer_checks);
    snprintf(cmd, sizeof(cmd), "python3 %s/checks.py %s 2>&1", dir, dir);
    FILE *p = popen(cmd, "r");
    ck_assert_ptr_nonnull(p);
    char out[8192] = "";
    size_t n = fread(out, 1, sizeof(out) - 1, p);
    out[n] = '\0';
    int status = pclose(p);
    ck_assert_msg(status == 0 && strstr(out, "\nok\n") != NULL, "exit %d\n%s", status, out);
    harness_cleanup(dir);
}
END_TEST

Suite *test_suite(void)
{
    Suite *s = suite_create("probe56");
    TCase *in = tcase_create("inputs");
    tcase_add_test(in, a_trace_named_by_many_rules_is_read_once);
    tcase_add_test(in, trace_points_count_against_the_memory_guard);
    tcase_add_test(in, a_utf32_text_is_named_as_such);
    tcase_add_test(in, a_golden_file_swapped_for_a_fifo_is_not_waited_on);
    tcase_add_test(in, the_profilers_writer_refuses_links_fifos_and_outputs);
    tcase_set_timeout(in, 240);
    suite_add_tcase(s, in);
    return s;
}
