/* Issue 38, the seventeenth probe (files changing while read, outputs, links, CSV quoting and
 * admissions under failures): what it found. Each case failed before its fix.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#include <check.h>

#include "harness.h"

typedef harness_result result;

/* A sweep of two seeds at learning rate LR (a printf argument). */
#define SWEPT_BASE                                                                                \
    "{\"seed\": 7, \"workers\": 2, \"compute\": {\"iteration_ms\": 10},\n"                        \
    " \"workload\": {\"dataset\": {\"name\": \"synthetic\", \"samples\": 400,\n"                  \
    "   \"test_samples\": 100}, \"model\": {\"name\": \"softmax\"}, \"batch\": 8, \"lr\": %s},\n" \
    " \"protocol\": {\"name\": \"allreduce\"}, \"stop\": {\"time_s\": 0.5},\n"                    \
    " \"eval\": {\"every_s\": 0.1, \"samples\": 100}}\n"

static const char busy_sweep[] =
    "{\"base\": \"b.json\", \"grid\": {\"workload.batch\": [8]}, \"seeds\": 2}\n";

/* Takes DIR.lock as a sweep into DIR does (an exclusive flock, the holder's pid in the file):
 * the descriptor, which the caller closes. */
static int hold_lock(const char *dir)
{
    char path[1024], pid[32];
    snprintf(path, sizeof(path), "%s.lock", dir);
    int fd = open(path, O_RDWR | O_CREAT, 0666);
    ck_assert_msg(fd >= 0 && flock(fd, LOCK_EX | LOCK_NB) == 0, "cannot lock %s", path);
    int len = snprintf(pid, sizeof(pid), "%ld\n", (long)getpid());
    ck_assert(write(fd, pid, (size_t)len) == len);
    return fd;
}

/* `report` and `plot --by` read a sweep's index.csv and then its runs; a sweep run again
 * meanwhile (its base edited: every point run again) replaces the runs under them. Read so,
 * report said "line 2: not its run's results: best_accuracy is 0.81 in its summary.json ...:
 * remove the point's directory and run the sweep again", exit 2, of a sound run the sweep had
 * just written (a loop of reports beside a loop of sweeps: 653 of 726 reports). A run unlike
 * its row in a sweep's directory whose lock another hetsim holds is being replaced: report and
 * plot --by say so, exit 2, nothing written. The lock alone refuses nothing (the old runs are
 * whole; plot --by into its sweep holds that lock). Here the test holds the lock, as that sweep
 * would, and moves a run of another learning rate into a point, as it would. */
START_TEST(a_sweep_being_written_is_not_read_as_damaged)
{
    char *dir = harness_tmpdir("probe44");
    char base[1024], sw[700], sw1[700], sw2[700], pt1[800], pt2[800], out[700];
    snprintf(sw, sizeof(sw), "%s/sw.json", dir);
    snprintf(sw1, sizeof(sw1), "%s/SW", dir);
    snprintf(sw2, sizeof(sw2), "%s/SW2", dir);
    snprintf(out, sizeof(out), "%s/figs", dir);
    harness_write(dir, "sw.json", busy_sweep);
    const char *lrs[2] = { "0.1", "0.3" }, *outs[2] = { sw1, sw2 };
    for (int i = 0; i < 2; i++) {
        snprintf(base, sizeof(base), SWEPT_BASE, lrs[i]);
        harness_write(dir, "b.json", base);
        result res = harness_hetsim(
            (const char *[]){ "sweep", sw, "-o", outs[i], "-j", "1", "--quiet", NULL });
        ck_assert_msg(res.status == 0, "sweep: exit %d\n%s", res.status, res.err);
    }
    const char *const report[] = { "report", sw1, "--by", "workload.batch", NULL };
    const char *const plot[] = { "plot", sw1, "--by", "workload.batch", "-o", out, NULL };
    int fd = hold_lock(sw1);
    result res = harness_hetsim(report);
    ck_assert_msg(res.status == 0, "report of a locked sweep, no run replaced: exit %d\n%s",
                  res.status, res.err);
    snprintf(pt1, sizeof(pt1), "%s/workload.batch=8,seed=7", sw1);
    snprintf(pt2, sizeof(pt2), "%s/workload.batch=8,seed=7", sw2);
    harness_cleanup(strdup(pt1));
    ck_assert(rename(pt2, pt1) == 0);
    for (int c = 0; c < 2; c++) {
        res = harness_hetsim(c == 0 ? report : plot);
        ck_assert_msg(res.status == 2 && strstr(res.err, "being written") != NULL &&
                          strstr(res.err, "remove the point") == NULL,
                      "%s: exit %d\n%s", c == 0 ? "report" : "plot --by", res.status, res.err);
        ck_assert_msg(!harness_exists(out), "plot --by wrote %s", out);
    }
    close(fd);
    /* With no sweep writing it, the run moved in is what it is: not the index's. */
    res = harness_hetsim(report);
    ck_assert_msg(res.status == 2 && strstr(res.err, "not its run's results") != NULL,
                  "report after the lock: exit %d\n%s", res.status, res.err);
    harness_cleanup(dir);
}
END_TEST

Suite *test_suite(void)
{
    Suite *s = suite_create("probe44");
    TCase *busy = tcase_create("busy");
    tcase_add_test(busy, a_sweep_being_written_is_not_read_as_damaged);
    tcase_set_timeout(busy, 120);
    suite_add_tcase(s, busy);
    return s;
}
