/* Issue 38, the twentieth probe (files changing while read, outputs, links, CSV quoting and
 * admissions under failures; probe38as): what it found. Each case failed before its fix.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <check.h>

#include "harness.h"

typedef harness_result result;

static const char base_json[] =
    "{\"seed\": 7, \"workers\": 2, \"compute\": {\"iteration_ms\": 10},\n"
    " \"workload\": {\"dataset\": {\"name\": \"synthetic\", \"samples\": 400,\n"
    "   \"test_samples\": 100}, \"model\": {\"name\": \"softmax\"}, \"batch\": 8, \"lr\": 0.1},\n"
    " \"protocol\": {\"name\": \"allreduce\"}, \"stop\": {\"time_s\": 0.5},\n"
    " \"eval\": {\"every_s\": 0.1, \"samples\": 100}}\n";

/* The type of DIR/name, not following a link: 'f' a regular file, 'p' a FIFO, 'l' a link, '?'
 * another, 0 when it is not there. */
static char type_of(const char *dir, const char *name)
{
    char path[1024];
    struct stat st;
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    if (lstat(path, &st) != 0)
        return 0;
    return S_ISREG(st.st_mode) ? 'f' : S_ISFIFO(st.st_mode) ? 'p' : S_ISLNK(st.st_mode) ? 'l' : '?';
}

/* `run S -o D` over a previous run D holding a FIFO named events.csv (a run of this scenario
 * writes none) or a symbolic link named metrics.csv (to a file of the user's): the run took
 * them for its own files and removed them with the old run, exit 0 (a golden's seed run holding
 * the same was refused). A run writes regular files alone: refused, exit 2, naming the entry
 * and its type, nothing changed. */
START_TEST(a_run_removes_no_link_or_fifo_named_as_a_runs_file)
{
    char *dir = harness_tmpdir("probe66");
    char s[700], d[700], path[800], mine[700];
    snprintf(s, sizeof(s), "%s/b.json", dir);
    snprintf(d, sizeof(d), "%s/D", dir);
    snprintf(mine, sizeof(mine), "%s/mine.csv", dir);
    harness_write(dir, "b.json", base_json);
    harness_write(dir, "mine.csv", "kept\n");
    const char *const run[] = { "run", s, "-o", d, "--quiet", NULL };
    result r = harness_hetsim(run);
    ck_assert_msg(r.status == 0, "exit %d\n%s", r.status, r.err);
    snprintf(path, sizeof(path), "%s/events.csv", d);
    ck_assert(mkfifo(path, 0666) == 0);
    r = harness_hetsim(run);
    ck_assert_msg(r.status == 2 && strstr(r.err, "FIFO events.csv") != NULL, "exit %d\n%s",
                  r.status, r.err);
    ck_assert_msg(type_of(d, "events.csv") == 'p', "the FIFO removed");
    ck_assert(unlink(path) == 0);
    snprintf(path, sizeof(path), "%s/metrics.csv", d);
    ck_assert(unlink(path) == 0 && symlink(mine, path) == 0);
    r = harness_hetsim(run);
    ck_assert_msg(r.status == 2 && strstr(r.err, "symbolic link metrics.csv") != NULL,
                  "exit %d\n%s", r.status, r.err);
    ck_assert_msg(type_of(d, "metrics.csv") == 'l', "the link removed");
    /* A run of regular files alone is still replaced, and so is one holding a FIFO at a
     * temporary's name (a name only, made afresh whatever holds it). */
    ck_assert(unlink(path) == 0);
    r = harness_hetsim(run);
    ck_assert_msg(r.status == 0, "exit %d\n%s", r.status, r.err);
    snprintf(path, sizeof(path), "%s/metrics.csv.tmp", d);
    ck_assert(mkfifo(path, 0666) == 0);
    r = harness_hetsim(run);
    ck_assert_msg(r.status == 0, "exit %d\n%s", r.status, r.err);
    ck_assert(type_of(d, "metrics.csv") == 'f');
    harness_cleanup(dir);
}
END_TEST

/* A file of the user's named D.lock beside an output D (notes, a profile written there): a run
 * into D took it for its lock, wrote its pid over the text and removed it, exit 0. A lock of
 * hetsim holds a pid or nothing: refused, exit 2, the file as it was; a lock left by a killed
 * run (a pid) or an empty one is still taken. */
START_TEST(a_run_takes_no_file_of_the_users_for_its_lock)
{
    char *dir = harness_tmpdir("probe66");
    char s[700], d[700], lock[800], text[64];
    snprintf(s, sizeof(s), "%s/b.json", dir);
    snprintf(d, sizeof(d), "%s/D", dir);
    snprintf(lock, sizeof(lock), "%s/D.lock", dir);
    harness_write(dir, "b.json", base_json);
    harness_write(dir, "D.lock", "why D is slow\n");
    const char *const run[] = { "run", s, "-o", d, "--quiet", NULL };
    result r = harness_hetsim(run);
    ck_assert_msg(r.status == 2 && strstr(r.err, "D.lock") != NULL, "exit %d\n%s", r.status, r.err);
    harness_read_into(lock, text, sizeof(text));
    ck_assert_str_eq(text, "why D is slow\n");
    ck_assert_msg(type_of(dir, "D") == 0, "the run was written");
    harness_write(dir, "D.lock", "4194303\n");
    r = harness_hetsim(run);
    ck_assert_msg(r.status == 0 && type_of(dir, "D.lock") == 0, "exit %d\n%s", r.status, r.err);
    harness_cleanup(dir);
}
END_TEST

/* The profiler's writer (tools/profile_write.py) in Python: one line "CASE: what happened" a
 * case, "ok" at the end. `d` holds a killed update's work directory g.partial (its mark alone,
 * no seed run yet) and a run directory r. */
static const char writer_checks[] =
    "import os, sys\n"
    "sys.path.insert(0, 'tools')\n"
    "from profile_write import write_profile\n"
    "d = sys.argv[1]\n"
    "row = [['fc', '10', '20', '1.000000', '2.000000', 'matmul', '8', '0']]\n"
    "def refused(case, path):\n"
    "    try:\n"
    "        write_profile(path, 'c', row)\n"
    "    except SystemExit as e:\n"
    "        print('%s: refused: %s' % (case, e))\n"
    "        return True\n"
    "    print('%s: written' % case)\n"
    "    return False\n"
    "ok = refused('golden in the making', os.path.join(d, 'g.partial', 'p.csv'))\n"
    "ok &= refused('lock', os.path.join(d, 'r.lock'))\n"
    "ok &= refused('work', os.path.join(d, 'r.partial'))\n"
    "ok &= not refused('new file', os.path.join(d, 'p.csv'))\n"
    "print('ok' if ok else 'FAILED')\n";

/* tools/profile_write.py wrote a profile into a killed update's GOLDEN.partial, which every
 * hetsim command takes for a golden (the next update removed it, or refused to go on), and as
 * RUN.lock or RUN.partial beside a run, names hetsim keeps for its locks and work directories
 * (a run into RUN then wrote its pid over the profile and removed it, or stopped). Refused now,
 * as hetsim refuses them; a new file elsewhere is written. */
START_TEST(the_profilers_writer_refuses_a_golden_in_the_making_and_hetsims_names)
{
    char *dir = harness_tmpdir("probe66");
    char path[800], cmd[1600];
    snprintf(path, sizeof(path), "%s/g.partial", dir);
    ck_assert(mkdir(path, 0777) == 0);
    harness_write(path, ".hetsim-golden-partial", "");
    harness_write(dir, "checks.py", writer_checks);
    snprintf(cmd, sizeof(cmd), "python3 %s/checks.py %s 2>&1", dir, dir);
    FILE *p = popen(cmd, "r");
    ck_assert_ptr_nonnull(p);
    char out[8192] = "";
    size_t n = fread(out, 1, sizeof(out) - 1, p);
    out[n] = '\0';
    int status = pclose(p);
    ck_assert_msg(status == 0 && strstr(out, "\nok\n") != NULL, "exit %d\n%s", status, out);
    ck_assert_msg(type_of(path, "p.csv") == 0, "written into g.partial");
    harness_cleanup(dir);
}
END_TEST

/* hpsgd, 3 workers, worker 2 failing for good at 85 ms: just after the coordinator's release
 * of round 2, which launched its reduction, and before worker 1's release landed. The failure
 * abandoned the coordinator's launch (no member had completed it; its A back into G), and worker
 * 1, released after it, launched alone into the restarted ring: one launch ahead of worker 0,
 * whose next launch (the epoch's flush) completed worker 1's old reduction while worker 1's
 * flush waited for a launch worker 0 would make only after a barrier worker 1 never reached.
 * Both live workers stopped: "stalled" at 0.147 s. A member released after a failure abandoned
 * its round's launches launches nothing in it now: the run goes on to its stop, the two
 * survivors' models equal. */
static const char hpsgd_json[] =
    "{\"seed\": 2922, \"workers\": 3, \"compute\": {\"iteration_ms\": 20, \"jitter_sigma\": 0.5},\n"
    " \"network\": {\"bandwidth_gbps\": 10, \"latency_us\": 500},\n"
    " \"workload\": {\"dataset\": {\"name\": \"synthetic\", \"samples\": 96, \"test_samples\": "
    "50,\n"
    "   \"dim\": 8, \"classes\": 3}, \"model\": {\"name\": \"softmax\"}, \"batch\": 8, \"lr\": "
    "0.1,\n"
    "   \"message_bytes\": 1000},\n"
    " \"protocol\": {\"name\": \"hpsgd\", \"flush\": \"both\"}, \"stop\": {\"time_s\": 0.3},\n"
    " \"eval\": {\"every_s\": 0.05, \"samples\": 50},\n"
    " \"stragglers\": [{\"kind\": \"failure\", \"workers\": [2], \"at_s\": 0.085}]}\n";

START_TEST(hpsgd_survivors_launch_together_after_an_abandoned_round)
{
    char *dir = harness_tmpdir("probe66");
    char s[700], d[700], set[64];
    snprintf(s, sizeof(s), "%s/h.json", dir);
    snprintf(d, sizeof(d), "%s/out", dir);
    harness_write(dir, "h.json", hpsgd_json);
    for (int newest = 0; newest < 2; newest++) {
        snprintf(set, sizeof(set), "protocol.flush=%s", newest ? "newest" : "both");
        result r =
            harness_hetsim((const char *[]){ "run", s, "-o", d, "--quiet", "--set", set, NULL });
        ck_assert_msg(r.status == 0, "exit %d\n%s", r.status, r.err);
        char *summary = harness_slurp(d, "summary.json");
        ck_assert_msg(strstr(summary, "\"stop_reason\": \"time\"") != NULL, "%s: %s", set, summary);
        free(summary);
        harness_csv t = harness_csv_read(d, "workers.csv");
        ck_assert_str_eq(harness_csv_text(&t, 0, "params_fnv"),
                         harness_csv_text(&t, 1, "params_fnv"));
        harness_csv_free(&t);
    }
    harness_cleanup(dir);
}
END_TEST

/* hpsgd, 4 workers all failing at 84 ms, worker 1 back first (126 ms) and running alone, the
 * others back at 165 ms and admitted: the barrier had restarted over worker 1 past the round
 * no member finished, and the rounds decided, counted, fell one behind the barrier's numbers.
 * The first round with the admitted was decided twice (by its coordinator's release and again
 * by the next member's): the coordinator flushed an epoch's end the others did not, and every
 * worker stopped, "stalled" at 0.281 s with all four up. A round is decided once, by its
 * number: the run goes on to its stop. */
static const char alone_json[] =
    "{\"seed\": 71526, \"workers\": 4, \"compute\": {\"iteration_ms\": 20, \"jitter_sigma\": "
    "0.5},\n"
    " \"network\": {\"bandwidth_gbps\": 10, \"latency_us\": 5},\n"
    " \"workload\": {\"dataset\": {\"name\": \"synthetic\", \"samples\": 96, \"test_samples\": "
    "50,\n"
    "   \"dim\": 8, \"classes\": 3}, \"model\": {\"name\": \"softmax\"}, \"batch\": 8, \"lr\": "
    "0.1,\n"
    "   \"message_bytes\": 1000},\n"
    " \"protocol\": {\"name\": \"hpsgd\", \"flush\": \"both\"}, \"stop\": {\"time_s\": 0.3},\n"
    " \"eval\": {\"every_s\": 0.05, \"samples\": 50},\n"
    " \"stragglers\": [{\"kind\": \"failure\", \"workers\": [0, 1, 3], \"at_s\": 0.084,\n"
    "   \"recover_s\": 0.126413}, {\"kind\": \"failure\", \"workers\": [0, 2, 3], \"at_s\": "
    "0.084,\n"
    "   \"recover_s\": 0.165077}]}\n";

START_TEST(hpsgd_decides_each_round_once_after_a_worker_started_alone)
{
    char *dir = harness_tmpdir("probe66");
    char s[700], d[700];
    snprintf(s, sizeof(s), "%s/h.json", dir);
    snprintf(d, sizeof(d), "%s/out", dir);
    harness_write(dir, "h.json", alone_json);
    result r = harness_hetsim((const char *[]){ "run", s, "-o", d, "--quiet", NULL });
    ck_assert_msg(r.status == 0, "exit %d\n%s", r.status, r.err);
    char *summary = harness_slurp(d, "summary.json");
    ck_assert_msg(strstr(summary, "\"stop_reason\": \"time\"") != NULL, "%s", summary);
    free(summary);
    harness_cleanup(dir);
}
END_TEST

Suite *test_suite(void)
{
    Suite *s = suite_create("probe66");
    TCase *out = tcase_create("outputs");
    tcase_add_test(out, a_run_removes_no_link_or_fifo_named_as_a_runs_file);
    tcase_add_test(out, a_run_takes_no_file_of_the_users_for_its_lock);
    tcase_add_test(out, the_profilers_writer_refuses_a_golden_in_the_making_and_hetsims_names);
    tcase_set_timeout(out, 120);
    suite_add_tcase(s, out);
    TCase *adm = tcase_create("failures");
    tcase_add_test(adm, hpsgd_survivors_launch_together_after_an_abandoned_round);
    tcase_add_test(adm, hpsgd_decides_each_round_once_after_a_worker_started_alone);
    tcase_set_timeout(adm, 120);
    suite_add_tcase(s, adm);
    return s;
}
