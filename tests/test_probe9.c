/* Issue 38's ninth probe: a display name that opens with '#', which gnuplot took for a
 * comment in the CSV behind a plot --by bar chart; a scenario file edited while check --update
 * runs its seeds. Every case failed before its fix.
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

/* plot --by writes breakdown-by-KEY.csv with the display name in its first column, which
 * gnuplot reads as data: a name opening with '#' (--label allreduce="#1 ours", or a grid value
 * of `name`) made its row a comment, and the figure drew one bar fewer than the values,
 * without it, exit 0. Every value gets its bar, named. */
START_TEST(a_display_name_opening_with_a_hash_keeps_its_bar)
{
    char *dir = harness_tmpdir("probe9");
    char sw[600], o[600], figs[600], svg[800];
    harness_sweep_in(dir, harness_quick_json,
                     "{\"base\": \"s.json\", \"grid\": {\"protocol.name\": [\"allreduce\", "
                     "\"dpsgd\"]}, \"seeds\": 1}\n",
                     sw, o, sizeof(sw));
    snprintf(figs, sizeof(figs), "%s/figs", dir);
    snprintf(svg, sizeof(svg), "%s/breakdown-by-protocol.name.svg", figs);
    result res = harness_hetsim((const char *[]){ "plot", o, "--by", "protocol.name", "--label",
                                                  "allreduce=#1 ours", "--label", "dpsgd= #2",
                                                  "--format", "svg", "-o", figs, NULL });
    ck_assert_msg(res.status == 0, "%s", res.err);
    char *text = harness_read(svg, NULL);
    ck_assert_ptr_nonnull(text);
    ck_assert_msg(strstr(text, ">#1 ours<") != NULL, "no bar named \"#1 ours\" in %s", svg);
    ck_assert_msg(strstr(text, ">#2<") != NULL, "no bar named \"#2\" in %s", svg);
    free(text);
    harness_cleanup(dir);
}
END_TEST

/* A timing-only scenario long enough (30 simulated s of 8 workers) that a second process edits
 * the file while a seed runs. */
static const char long_json[] =
    "{\"seed\": 5, \"workers\": 8, \"compute\": {\"iteration_ms\": 1},\n"
    " \"workload\": {\"model\": {\"name\": \"none\"}, \"message_bytes\": 4000, \"lr\": 0.05},\n"
    " \"protocol\": {\"name\": \"allreduce\"}, \"stop\": {\"time_s\": 30},\n"
    " \"eval\": {\"every_s\": 1}}\n";

typedef harness_edit edit;

/* Runs hetsim with `args` while a child process saves `e` once `running` (a seed's or a
 * point's work directory) is there, and while it is still there: the run then under way
 * is the first of the command's. Returns what the command left. */
static result run_while_editing(const char *const *args, edit *e, const char *running)
{
    harness_race race = {
        .marker = running, .change = harness_edit_save, .again = harness_edit_undo, .arg = e
    };
    return harness_hetsim_racing(args, &race);
}

/* long_json with another learning rate, as an editor saving the scenario would. */
static const char *edited_json(char *buf, size_t size)
{
    snprintf(buf, size, "%s", long_json);
    memcpy(strstr(buf, "0.05"), "0.40", 4);
    return buf;
}

/* check --update read the scenario file again for each seed: a file edited while the first seed
 * ran gave the later seeds another scenario, and the update said "golden written", exit 0 (the
 * next check refused that golden as "a run of another scenario"). The file is read once: every
 * seed runs the scenario as it was when the update began. */
START_TEST(a_scenario_edited_during_an_update_changes_no_seed)
{
    char *dir = harness_tmpdir("probe9");
    char s[600], g[600], running[700];
    harness_write(dir, "s.json", long_json);
    snprintf(s, sizeof(s), "%s/s.json", dir);
    snprintf(g, sizeof(g), "%s/g", dir);
    snprintf(running, sizeof(running), "%s.partial/seed-5.partial", g);
    char edited[sizeof(long_json)];
    edit e = { dir, "s.json", edited_json(edited, sizeof(edited)), long_json, g };
    result res = run_while_editing(
        (const char *[]){ "check", s, "--golden", g, "--update", "--seeds", "3", NULL }, &e,
        running);
    ck_assert_msg(res.status == 0, "%s", res.err);
    for (int seed = 5; seed <= 7; seed++) {
        char run_json[700];
        snprintf(run_json, sizeof(run_json), "%s/seed-%d/run.json", g, seed);
        char *text = harness_read(run_json, NULL);
        ck_assert_ptr_nonnull(text);
        ck_assert_msg(strstr(text, "\"lr\": 0.05") != NULL && strstr(text, "0.4") == NULL,
                      "seed %d ran the edited scenario", seed);
        free(text);
    }
    harness_cleanup(dir);
}
END_TEST

/* The profile p.csv, and one whose parameters are ten times as many (another message size). */
static const char profile_csv[] = "name,params,forward_flops\nl1,1000,2000000\nl2,500,1000000\n";
static const char profile_edited[] =
    "name,params,forward_flops\nl1,10000,2000000\nl2,5000,1000000\n";

/* long_json's timing with its layers from the profile p.csv beside it. */
static const char profile_json[] =
    "{\"seed\": 5, \"workers\": 8, \"compute\": {\"profile\": \"p.csv\", \"iteration_ms\": 1},\n"
    " \"workload\": {\"model\": {\"name\": \"none\"}},\n"
    " \"protocol\": {\"name\": \"allreduce\"}, \"stop\": {\"time_s\": 30},\n"
    " \"eval\": {\"every_s\": 1}}\n";

/* The seeds of an update parse the scenario read once, but each reads the compute.profile the
 * scenario names: one saved while seed 5 ran gave seeds 6 and 7 another message size, "golden
 * written", exit 0. The golden written is read back as a check reads it before it replaces
 * anything: refused, exit 1, nothing written; the update run again writes a golden. */
START_TEST(a_profile_edited_during_an_update_writes_no_golden)
{
    char *dir = harness_tmpdir("probe9");
    char s[600], g[600], running[700];
    harness_write(dir, "p.csv", profile_csv);
    harness_write(dir, "s.json", profile_json);
    snprintf(s, sizeof(s), "%s/s.json", dir);
    snprintf(g, sizeof(g), "%s/g", dir);
    snprintf(running, sizeof(running), "%s.partial/seed-5.partial", g);
    edit e = { dir, "p.csv", profile_edited, profile_csv, g };
    result res = run_while_editing(
        (const char *[]){ "check", s, "--golden", g, "--update", "--seeds", "3", NULL }, &e,
        running);
    ck_assert_msg(res.status == 1, "exit %d\n%s", res.status, res.err);
    ck_assert_msg(
        strstr(res.err, "a file the scenario names changed during the update, no golden written") !=
            NULL,
        "%s", res.err);
    ck_assert(!harness_exists(g));
    harness_golden_in(dir, NULL, s, g, sizeof(s));
    harness_cleanup(dir);
}
END_TEST

/* The same during a check: seeds 9 and 10 ran another message size than seed 8 and the three
 * were compared with the golden as one scenario's. Refused, exit 1, naming the file's change. */
START_TEST(a_profile_edited_during_a_check_is_named)
{
    char *dir = harness_tmpdir("probe9");
    char s[600], g[600], o[600], running[700];
    harness_write(dir, "p.csv", profile_csv);
    harness_golden_in(dir, profile_json, s, g, sizeof(s));
    snprintf(o, sizeof(o), "%s/o", dir);
    snprintf(running, sizeof(running), "%s/seed-8.partial", o);
    edit e = { dir, "p.csv", profile_edited, profile_csv, o };
    result res = run_while_editing(
        (const char *[]){ "check", s, "--golden", g, "--seeds", "3", "-o", o, NULL }, &e, running);
    ck_assert_msg(res.status == 1, "exit %d\n%s", res.status, res.err);
    ck_assert_msg(strstr(res.err, "a file the scenario names changed during the check") != NULL,
                  "%s", res.err);
    harness_cleanup(dir);
}
END_TEST

/* A sweep ran each point as `hetsim run BASE --set ...`, reading the base file (and the
 * profile, traces) again per point: a base saved while point 0 ran gave points 1 and 2
 * another scenario, exit 0, index.csv listing their results beside point 0's. A point whose
 * run is not of the point's scenario (run.json's scenario_hash) fails, named, and is missing
 * from index.csv; the sweep run again runs what is not the point's. */
START_TEST(a_base_edited_during_a_sweep_fails_the_points_it_changed)
{
    char *dir = harness_tmpdir("probe9");
    char sw[600], o[600], running[700], index[700];
    harness_sweep_file(dir, long_json,
                       "{\"base\": \"s.json\", \"grid\": {\"workload.momentum\": [0.1, 0.2, "
                       "0.3]}, \"seeds\": 1}\n",
                       sw, sizeof(sw));
    snprintf(o, sizeof(o), "%s/o", dir);
    snprintf(running, sizeof(running), "%s/workload.momentum=0.1,seed=5.partial", o);
    snprintf(index, sizeof(index), "%s/index.csv", o);
    char edited[sizeof(long_json)];
    edit e = { dir, "s.json", edited_json(edited, sizeof(edited)), long_json, o };
    result res =
        run_while_editing((const char *[]){ "sweep", sw, "-o", o, "-j", "1", NULL }, &e, running);
    ck_assert_msg(res.status == 1, "exit %d\n%s", res.status, res.err);
    ck_assert_msg(strstr(res.err, "point 1 (") != NULL &&
                      strstr(res.err, "ran another scenario than the sweep's") != NULL,
                  "%s", res.err);
    char *text = harness_read(index, NULL);
    ck_assert_ptr_nonnull(text);
    ck_assert_msg(strstr(text, ",0.2,5,missing,") != NULL && strstr(text, ",0.1,5,time,") != NULL,
                  "%s", text);
    free(text);
    res = harness_hetsim((const char *[]){ "sweep", sw, "-o", o, "-j", "1", NULL });
    ck_assert_msg(res.status == 0, "%s", res.err);
    harness_cleanup(dir);
}
END_TEST

/* A lock file DIR.lock that is a socket (bound by another program) was "cannot create the lock
 * file DIR.lock: No such device or address", exit 1; a lock that is no plain file is refused as
 * bad input, "remove it", exit 2, nothing made. */
START_TEST(a_lock_file_that_is_a_socket_is_refused)
{
    char *dir = harness_tmpdir("probe9");
    char s[600], r[600];
    struct sockaddr_un at = { .sun_family = AF_UNIX };
    harness_write(dir, "s.json", harness_quick_json);
    snprintf(s, sizeof(s), "%s/s.json", dir);
    snprintf(r, sizeof(r), "%s/r", dir);
    ck_assert_int_lt(snprintf(at.sun_path, sizeof(at.sun_path), "%s.lock", r),
                     (int)sizeof(at.sun_path));
    int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(bind(fd, (const struct sockaddr *)&at, sizeof(at)), 0);
    result res = harness_hetsim((const char *[]){ "run", s, "-o", r, "--quiet", NULL });
    close(fd);
    ck_assert_msg(res.status == 2, "exit %d\n%s", res.status, res.err);
    ck_assert_msg(strstr(res.err, ".lock is a socket, not a lock of hetsim: remove it") != NULL,
                  "%s", res.err);
    ck_assert(!harness_exists(r));
    harness_cleanup(dir);
}
END_TEST

/* A trace (or a compute.profile) may be a FIFO for a run, read once as it comes; a check and a
 * sweep load the scenario again for each of their runs, and waited forever on the FIFO the
 * first load had emptied. Both refuse it, naming it, exit 2. */
START_TEST(a_trace_that_is_a_fifo_is_refused_by_check_and_sweep)
{
    char *dir = harness_tmpdir("probe9");
    char s[600], sw[600], g[600], o[600], fifo[600];
    harness_write(dir, "s.json",
                  "{\"seed\": 5, \"workers\": 3, \"compute\": {\"iteration_ms\": 10},\n"
                  " \"workload\": {\"model\": {\"name\": \"none\"}, \"message_bytes\": 4000},\n"
                  " \"stragglers\": [{\"kind\": \"trace\", \"file\": \"tr.csv\"}],\n"
                  " \"protocol\": {\"name\": \"allreduce\"}, \"stop\": {\"time_s\": 0.2}}\n");
    harness_sweep_file(
        dir, NULL,
        "{\"base\": \"s.json\", \"grid\": {\"workload.lr\": [0.1, 0.2]}, \"seeds\": 1}\n", sw,
        sizeof(sw));
    snprintf(s, sizeof(s), "%s/s.json", dir);
    snprintf(g, sizeof(g), "%s/g", dir);
    snprintf(o, sizeof(o), "%s/o", dir);
    snprintf(fifo, sizeof(fifo), "%s/tr.csv", dir);
    ck_assert_int_eq(mkfifo(fifo, 0666), 0);
    for (int c = 0; c < 2; c++) {
        result res = harness_hetsim_fifo(
            fifo, "0.05,1,2\n",
            c == 0 ? (const char *[]){ "check", s, "--golden", g, "--update", "--seeds", "3", NULL }
                   : (const char *[]){ "sweep", sw, "-o", o, "--quiet", NULL });
        ck_assert_msg(res.status == 2, "case %d: exit %d\n%s", c, res.status, res.err);
        ck_assert_msg(strstr(res.err, "tr.csv: not a regular file (a FIFO)") != NULL, "%s",
                      res.err);
        ck_assert(!harness_exists(g) && !harness_exists(o));
    }
    harness_cleanup(dir);
}
END_TEST

/* check --junit FILE replaced the compute.profile CSV the scenario reads with its XML, exit 0
 * (the next check failed on the profile's header), where the scenario file itself is refused.
 * Refused, naming the profile, nothing written over it. */
START_TEST(a_junit_report_over_the_scenarios_profile_is_refused)
{
    static const char profile[] = "name,params,forward_flops\nl1,1000,2000\nl2,500,1000\n";
    char *dir = harness_tmpdir("probe9");
    char s[600], g[600], o[600], p[600], link[600];
    harness_write(dir, "p.csv", profile);
    harness_golden_in(dir,
                      "{\"seed\": 5, \"workers\": 3, \"compute\": {\"profile\": \"p.csv\", "
                      "\"iteration_ms\": 10},\n"
                      " \"workload\": {\"model\": {\"name\": \"none\"}},\n"
                      " \"protocol\": {\"name\": \"allreduce\"}, \"stop\": {\"time_s\": 0.2},\n"
                      " \"eval\": {\"every_s\": 0.05}}\n",
                      s, g, sizeof(s));
    snprintf(o, sizeof(o), "%s/o", dir);
    snprintf(p, sizeof(p), "%s/p.csv", dir);
    snprintf(link, sizeof(link), "%s/link.xml", dir);
    ck_assert_int_eq(symlink("p.csv", link), 0);
    for (int c = 0; c < 2; c++) {
        result res = harness_hetsim((const char *[]){ "check", s, "--golden", g, "-o", o, "--junit",
                                                      c == 0 ? p : link, NULL });
        ck_assert_msg(res.status == 2, "case %d: exit %d\n%s", c, res.status, res.err);
        ck_assert_msg(strstr(res.err, "a file the scenario reads: name another file") != NULL, "%s",
                      res.err);
        char *text = harness_read(p, NULL);
        ck_assert_str_eq(text, profile);
        free(text);
    }
    harness_cleanup(dir);
}
END_TEST

Suite *test_suite(void)
{
    Suite *s = suite_create("probe9");
    TCase *names = tcase_create("names");
    tcase_add_test(names, a_display_name_opening_with_a_hash_keeps_its_bar);
    tcase_set_timeout(names, 60);
    suite_add_tcase(s, names);
    TCase *places = tcase_create("places");
    tcase_add_test(places, a_lock_file_that_is_a_socket_is_refused);
    tcase_add_test(places, a_trace_that_is_a_fifo_is_refused_by_check_and_sweep);
    tcase_add_test(places, a_junit_report_over_the_scenarios_profile_is_refused);
    tcase_set_timeout(places, 60);
    suite_add_tcase(s, places);
    TCase *reads = tcase_create("reads");
    tcase_add_test(reads, a_scenario_edited_during_an_update_changes_no_seed);
    tcase_add_test(reads, a_base_edited_during_a_sweep_fails_the_points_it_changed);
    tcase_add_test(reads, a_profile_edited_during_an_update_writes_no_golden);
    tcase_add_test(reads, a_profile_edited_during_a_check_is_named);
    tcase_set_timeout(reads, 120);
    suite_add_tcase(s, reads);
    return s;
}
