/* Issue 38's tenth probe, classes 1-6 (probe38o): a compute.profile or a trace that is a FIFO
 * named by a sweep's grid value rather than by the base; a trace edited while check --update
 * or a check runs its seeds; a golden read while an update swaps a new one in. Every case
 * failed before its fix.
 */
#define _GNU_SOURCE /* renameat2 and RENAME_EXCHANGE */
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <check.h>

#include "harness.h"

typedef harness_result result;

/* The ninth probe made a sweep refuse a FIFO its base names (the first values of the grid),
 * but a FIFO named by a later grid value was read by the first point that names it, when the
 * points are validated, and waited on forever by the next (seed 6 of the same value): sweep
 * hung (timeout), with a profile as with a trace. Refused, naming the point and the FIFO,
 * exit 2, nothing made. */
START_TEST(a_fifo_named_by_a_later_grid_value_is_refused_by_a_sweep)
{
    static const char *const grids[] = {
        "{\"compute.profile\": [\"p.csv\", \"f.csv\"]}",
        "{\"stragglers\": [[], [{\"kind\": \"trace\", \"file\": \"f.csv\"}]]}",
    };
    static const char *const texts[] = {
        "name,params,forward_flops\nl1,1000,200000\nl2,500,100000\n",
        "0,0,2\n0.1,1,3\n",
    };
    char *dir = harness_tmpdir("probe14");
    char sw[600], o[600], fifo[600], text[400];
    harness_write(dir, "s.json", harness_quick_json);
    harness_write(dir, "p.csv", texts[0]);
    snprintf(o, sizeof(o), "%s/o", dir);
    snprintf(fifo, sizeof(fifo), "%s/f.csv", dir);
    ck_assert_int_eq(mkfifo(fifo, 0666), 0);
    for (int c = 0; c < 2; c++) {
        snprintf(text, sizeof(text), "{\"base\": \"s.json\", \"grid\": %s, \"seeds\": 2}\n",
                 grids[c]);
        harness_sweep_file(dir, NULL, text, sw, sizeof(sw));
        result res = harness_hetsim_fifo(fifo, texts[c],
                                         (const char *[]){ "sweep", sw, "-o", o, "--quiet", NULL });
        ck_assert_msg(res.status == 2, "case %d: exit %d\n%s", c, res.status, res.err);
        ck_assert_msg(strstr(res.err, "point 2 (") != NULL &&
                          strstr(res.err, "f.csv: not a regular file (a FIFO)") != NULL,
                      "case %d: %s", c, res.err);
        ck_assert(!harness_exists(o));
    }
    harness_cleanup(dir);
}
END_TEST

/* A timing-only scenario long enough (30 simulated s of 8 workers) that a second process edits
 * its trace while a seed runs. */
static const char traced_json[] =
    "{\"seed\": 5, \"workers\": 8, \"compute\": {\"iteration_ms\": 1},\n"
    " \"workload\": {\"model\": {\"name\": \"none\"}, \"message_bytes\": 4000},\n"
    " \"stragglers\": [{\"kind\": \"trace\", \"file\": \"tr.csv\"}],\n"
    " \"protocol\": {\"name\": \"allreduce\"}, \"stop\": {\"time_s\": 30},\n"
    " \"eval\": {\"every_s\": 1}}\n";

/* The trace tr.csv of `dir` as it is before an attempt, and the edit a tool rewriting it would
 * save: worker 0 slowed six times instead of 1.5. */
typedef struct trace_edit {
    const char *dir, *out; /* out: the attempt's output, removed before another */
} trace_edit;

static int save_trace(void *arg)
{
    const trace_edit *e = arg;
    return harness_save(e->dir, "tr.csv", "0,0,6\n");
}

static void restore_trace(void *arg, bool changed)
{
    const trace_edit *e = arg;
    (void)changed;
    harness_write(e->dir, "tr.csv", "0,0,1.5\n");
    harness_cleanup(strdup(e->out));
}

/* A trace is read by each seed's load, and its points are no part of the resolved scenario: a
 * trace saved while seed 5 of an update ran gave seeds 6 and 7 a worker six times slower
 * (34,560 samples/s against 88,098), and the update said "golden written", exit 0; a check's
 * seeds compared with the golden as one scenario's. Both name the file, exit 1: the update
 * writes no golden, the check no verdict. */
START_TEST(a_trace_edited_during_an_update_or_a_check_is_named)
{
    char *dir = harness_tmpdir("probe14");
    char s[600], g[600], o[600], running[700];
    harness_write(dir, "s.json", traced_json);
    snprintf(s, sizeof(s), "%s/s.json", dir);
    snprintf(g, sizeof(g), "%s/g", dir);
    snprintf(o, sizeof(o), "%s/o", dir);
    for (int c = 0; c < 2; c++) {
        harness_write(dir, "tr.csv", "0,0,1.5\n");
        if (c == 1) {
            result res = harness_hetsim(
                (const char *[]){ "check", s, "--golden", g, "--update", "--seeds", "3", NULL });
            ck_assert_msg(res.status == 0, "%s", res.err);
        }
        snprintf(running, sizeof(running),
                 c == 0 ? "%s.partial/seed-5.partial" : "%s/seed-8.partial", c == 0 ? g : o);
        trace_edit e = { dir, c == 0 ? g : o };
        harness_race race = {
            .marker = running, .change = save_trace, .again = restore_trace, .arg = &e
        };
        result res = harness_hetsim_racing(
            c == 0 ? (const char *[]){ "check", s, "--golden", g, "--update", "--seeds", "3", NULL }
                   : (const char *[]){ "check", s, "--golden", g, "-o", o, NULL },
            &race);
        ck_assert_msg(res.status == 1, "case %d: exit %d\n%s%s", c, res.status, res.out, res.err);
        ck_assert_msg(strstr(res.err, "a file the scenario names changed during the") != NULL &&
                          strstr(res.err, "$.stragglers[0].file") != NULL,
                      "case %d: %s", c, res.err);
        if (c == 0)
            ck_assert(!harness_exists(g));
    }
    harness_cleanup(dir);
}
END_TEST

/* Applies link (from non-NULL) or unlink (from NULL, then rmdir) to each entry of the
 * directory `to` (`from`'s entries), one level of subdirectories deep: a golden's tree. */
static int tree(const char *from, const char *to, int depth)
{
    DIR *d = opendir(from != NULL ? from : to);
    if (d == NULL || (from != NULL && mkdir(to, 0777) != 0))
        return -1;
    int rc = 0;
    for (struct dirent *e = readdir(d); e != NULL && rc == 0; e = readdir(d)) {
        char f[900] = "", t[900];
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        if (from != NULL)
            snprintf(f, sizeof(f), "%.600s/%s", from, e->d_name);
        snprintf(t, sizeof(t), "%.600s/%s", to, e->d_name);
        struct stat st;
        if (stat(from != NULL ? f : t, &st) == 0 && S_ISDIR(st.st_mode) && depth == 0)
            rc = tree(from != NULL ? f : NULL, t, 1);
        else
            rc = from != NULL ? link(f, t) : unlink(t);
    }
    closedir(d);
    return rc == 0 && from == NULL ? rmdir(to) : rc;
}

/* Swaps a new golden in at `g` again and again, as a loop of check --update does: a fresh
 * directory tree holding `a`'s or `b`'s files (goldens of other seeds) made beside it,
 * exchanged with it whole (renameat2 RENAME_EXCHANGE), the old one then removed; a pause
 * of 0.5 ms between two swaps. Runs until killed. */
static void swap_goldens(const char *a, const char *b, const char *g)
{
    char work[700];
    snprintf(work, sizeof(work), "%s.new", g);
    for (unsigned i = 0;; i++) {
        if (tree(i % 2 ? a : b, work, 0) != 0 ||
            renameat2(AT_FDCWD, work, AT_FDCWD, g, RENAME_EXCHANGE) != 0 || tree(NULL, work, 0))
            _exit(1);
        nanosleep(&(struct timespec){ .tv_nsec = 500000 }, NULL);
    }
}

/* A check read the golden's files by their paths while an update swapped a new golden in
 * and removed the old: the seeds file of one and a seed directory of the other, "g/seed-8/
 * fingerprint: missing or unreadable (an incomplete golden ...)", exit 2, of a golden whole
 * at every instant (1 check of 300 beside a loop of updates). Here goldens of 20 seeds are
 * swapped in every 0.5 ms beside 100 checks, each of which ends once the golden is read
 * (--exact for a seed no golden lists: "its seeds file does not list it"); the build before
 * gave 3 to 30 of the 100 checks another message in each of 10 runs. */
START_TEST(a_check_reads_one_golden_across_an_updates_swap)
{
    char *dir = harness_tmpdir("probe14");
    char s[600], a[600], b[600], g[600], o[600];
    harness_write(dir, "s.json", harness_quick_json);
    snprintf(s, sizeof(s), "%s/s.json", dir);
    snprintf(a, sizeof(a), "%s/a", dir);
    snprintf(b, sizeof(b), "%s/b", dir);
    snprintf(g, sizeof(g), "%s/g", dir);
    snprintf(o, sizeof(o), "%s/o", dir);
    const char *seeds[] = { "seed=5", "seed=30", "seed=99" }, *gs[] = { a, b, g };
    for (int i = 0; i < 3; i++) {
        result res =
            harness_hetsim((const char *[]){ "check", s, "--golden", gs[i], "--update", "--seeds",
                                             "20", "--set", seeds[i % 2], NULL });
        ck_assert_msg(res.status == 0, "%s", res.err);
    }
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0)
        swap_goldens(a, b, g);
    int wrong = 0;
    char first[9000] = "";
    for (int i = 0; i < 100; i++) {
        result res = harness_hetsim((const char *[]){ "check", s, "--golden", g, "--exact", "-o", o,
                                                      "--set", seeds[2], NULL });
        if (res.status != 2 || strstr(res.err, "its seeds file does not list it") == NULL) {
            if (wrong++ == 0)
                snprintf(first, sizeof(first), "exit %d: %.8000s", res.status, res.err);
        }
    }
    kill(pid, SIGKILL);
    int status = 0;
    waitpid(pid, &status, 0);
    ck_assert_msg(WIFSIGNALED(status), "the swaps failed");
    ck_assert_msg(wrong == 0, "%d of 100 checks read two goldens; the first: %s", wrong, first);
    harness_cleanup(dir);
}
END_TEST

/* Two goldens exchanged by a change (renameat2 RENAME_EXCHANGE, as an update swaps a new
 * golden in), and the check's output `out`. */
typedef struct golden_swap {
    const char *other, *g, *out;
} golden_swap;

static int swap_goldens_once(void *arg)
{
    const golden_swap *w = arg;
    return renameat2(AT_FDCWD, w->other, AT_FDCWD, w->g, RENAME_EXCHANGE);
}

/* Before another attempt: the goldens back in their places, no output of the last. */
static void swap_back(void *arg, bool changed)
{
    const golden_swap *w = arg;
    ck_assert(!changed || swap_goldens_once(arg) == 0);
    harness_cleanup(strdup(w->out));
}

/* quick_json run for 5 simulated s: a run of about 20 ms of a core, a window that a child
 * polling every 0.1 ms meets under load (quick_json's ends in about a millisecond). */
static const char swapped_json[] =
    "{\"seed\": 5, \"workers\": 3, \"compute\": {\"iteration_ms\": 10},\n"
    " \"workload\": {\"model\": {\"name\": \"none\"}, \"message_bytes\": 4000},\n"
    " \"protocol\": {\"name\": \"allreduce\"}, \"stop\": {\"time_s\": 5},\n"
    " \"eval\": {\"every_s\": 0.05}}\n";

/* A check read the golden whole before its runs, but read it again after them: the first
 * seed's run.json (is the scenario the golden's?) and, with --exact, the seed's fingerprint.
 * A golden of another scenario swapped in meanwhile made a check of the golden's own
 * scenario "differ from the golden's" (exit 2) and --exact report a REGRESSION (exit 1).
 * Both now use the golden as read: ok, exit 0. */
START_TEST(a_check_compares_with_the_golden_it_read_before_its_runs)
{
    char *dir = harness_tmpdir("probe14");
    char s[600], g[600], h[600], o[600], running[700], last[700];
    harness_write(dir, "s.json", swapped_json);
    snprintf(s, sizeof(s), "%s/s.json", dir);
    for (int c = 0; c < 2; c++) {
        snprintf(g, sizeof(g), "%s/g%d", dir, c);
        snprintf(h, sizeof(h), "%s/h%d", dir, c);
        const char *gs[] = { g, h }, *sets[] = { "seed=5", "workers=4" };
        for (int i = 0; i < 2; i++) {
            result res = harness_hetsim((const char *[]){ "check", s, "--golden", gs[i], "--update",
                                                          "--seeds", "3", "--set", sets[i], NULL });
            ck_assert_msg(res.status == 0, "%s", res.err);
        }
        snprintf(o, sizeof(o), "%s/o%d", dir, c);
        snprintf(running, sizeof(running), "%s/seed-%d.partial", o, c == 0 ? 5 : 8);
        /* --exact runs seed 5 alone: the swap counts while it runs. The statistical check runs
         * seeds 8 to 11 and reads the golden again (before the fix) after the last. */
        snprintf(last, sizeof(last), "%s/seed-11", o);
        golden_swap w = { h, g, o };
        harness_race race = { .marker = running,
                              .until = c == 0 ? NULL : last,
                              .change = swap_goldens_once,
                              .again = swap_back,
                              .arg = &w };
        result res = harness_hetsim_racing(
            (const char *[]){ "check", s, "--golden", g, "-o", o, c == 0 ? "--exact" : NULL, NULL },
            &race);
        ck_assert_msg(res.status == 0, "case %d: exit %d\n%s%s", c, res.status, res.out, res.err);
    }
    harness_cleanup(dir);
}
END_TEST

Suite *test_suite(void)
{
    Suite *s = suite_create("probe14");
    TCase *reads = tcase_create("reads");
    tcase_add_test(reads, a_fifo_named_by_a_later_grid_value_is_refused_by_a_sweep);
    tcase_add_test(reads, a_trace_edited_during_an_update_or_a_check_is_named);
    tcase_add_test(reads, a_check_reads_one_golden_across_an_updates_swap);
    tcase_add_test(reads, a_check_compares_with_the_golden_it_read_before_its_runs);
    tcase_set_timeout(reads, 120);
    suite_add_tcase(s, reads);
    return s;
}
