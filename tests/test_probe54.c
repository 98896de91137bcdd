/* Issue 38, the eighteenth probe (files changing while read, outputs, links, CSV quoting and
 * admissions under failures): what it found. Each case failed before its fix.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <check.h>

#include "harness.h"

typedef harness_result result;

/* A sweep of two batch sizes, two seeds each, of runs that reach test accuracy 0.5. */
static const char base_json[] =
    "{\"seed\": 7, \"workers\": 2, \"compute\": {\"iteration_ms\": 10},\n"
    " \"workload\": {\"dataset\": {\"name\": \"synthetic\", \"samples\": 400,\n"
    "   \"test_samples\": 100}, \"model\": {\"name\": \"softmax\"}, \"batch\": 8, \"lr\": 0.1},\n"
    " \"protocol\": {\"name\": \"allreduce\"}, \"stop\": {\"time_s\": 0.5},\n"
    " \"eval\": {\"every_s\": 0.1, \"samples\": 100}}\n";
static const char sweep_json[] =
    "{\"base\": \"b.json\", \"grid\": {\"workload.batch\": [8, 16]}, \"seeds\": 2}\n";

/* DIR/name exists. */
static bool in(const char *dir, const char *name)
{
    char path[1024];
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    return harness_exists(path);
}

/* `plot --by` into a folder of figures it drew before left the files of the earlier plot that
 * it did not write again beside its new figures: `--target 0.5` drew ttt-by-KEY of two groups;
 * a plot of one group (--where) without --target said "no ttt-by-workload.batch.png: the runs
 * have no stop.target_accuracy", exit 0, and the folder still held that figure and its CSV, of
 * the other plot's data, and by-workload.batch-1.csv, a group it did not have. */
START_TEST(a_plot_by_removes_the_files_of_an_earlier_plot_it_did_not_write)
{
    char *dir = harness_tmpdir("probe54");
    char sw[700], out[700], figs[700];
    snprintf(sw, sizeof(sw), "%s/sw.json", dir);
    snprintf(out, sizeof(out), "%s/SW", dir);
    snprintf(figs, sizeof(figs), "%s/figs", dir);
    harness_write(dir, "b.json", base_json);
    harness_write(dir, "sw.json", sweep_json);
    result r =
        harness_hetsim((const char *[]){ "sweep", sw, "-o", out, "-j", "1", "--quiet", NULL });
    ck_assert_msg(r.status == 0, "sweep: exit %d\n%s", r.status, r.err);
    r = harness_hetsim((const char *[]){ "plot", out, "--by", "workload.batch", "--target", "0.5",
                                         "-o", figs, NULL });
    ck_assert_msg(r.status == 0, "plot --target: exit %d\n%s", r.status, r.err);
    static const char *const first[] = { "ttt-by-workload.batch.png", "ttt-by-workload.batch.csv",
                                         "by-workload.batch-1.csv" };
    for (size_t i = 0; i < 3; i++)
        ck_assert_msg(in(figs, first[i]), "the first plot wrote no %s", first[i]);
    /* A file of the user's in the folder stays. */
    harness_write(figs, "notes.txt", "mine\n");
    r = harness_hetsim((const char *[]){ "plot", out, "--by", "workload.batch", "--where",
                                         "workload.batch=8", "-o", figs, NULL });
    ck_assert_msg(r.status == 0, "plot --where: exit %d\n%s", r.status, r.err);
    for (size_t i = 0; i < 3; i++)
        ck_assert_msg(!in(figs, first[i]), "%s of the earlier plot left beside the new figures",
                      first[i]);
    static const char *const kept[] = { "by-workload.batch.png", "by-workload.batch-0.csv",
                                        "breakdown-by-workload.batch.png",
                                        "breakdown-by-workload.batch.csv", "notes.txt" };
    for (size_t i = 0; i < 5; i++)
        ck_assert_msg(in(figs, kept[i]), "%s missing after the second plot", kept[i]);
    harness_cleanup(dir);
}
END_TEST

/* A sweep's index.csv or curves.csv that is a directory ran every point missing, then failed:
 * "cannot write SW/index.csv: Is a directory", exit 1, and so did every later run of the sweep;
 * a FIFO or a link there was replaced by the new index, exit 0. Each is refused before any
 * point runs, exit 2, naming the file, nothing changed. */
START_TEST(a_sweep_refuses_an_index_that_is_no_regular_file_before_running)
{
    char *dir = harness_tmpdir("probe54");
    char sw[700], sw3[700], out[700], index[800], point[800];
    snprintf(sw, sizeof(sw), "%s/sw.json", dir);
    snprintf(sw3, sizeof(sw3), "%s/sw3.json", dir);
    snprintf(out, sizeof(out), "%s/SW", dir);
    snprintf(point, sizeof(point), "%s/workload.batch=32,seed=7", out);
    harness_write(dir, "b.json", base_json);
    harness_write(dir, "sw.json", sweep_json);
    harness_write(dir, "sw3.json",
                  "{\"base\": \"b.json\", \"grid\": {\"workload.batch\": [8, 16, 32]}, "
                  "\"seeds\": 2}\n");
    result r =
        harness_hetsim((const char *[]){ "sweep", sw, "-o", out, "-j", "1", "--quiet", NULL });
    ck_assert_msg(r.status == 0, "sweep: exit %d\n%s", r.status, r.err);
    static const char *const names[] = { "index.csv", "curves.csv", "index.csv", "index.csv" };
    for (int k = 0; k < 4; k++) {
        snprintf(index, sizeof(index), "%s/%s", out, names[k]);
        char saved[900];
        snprintf(saved, sizeof(saved), "%s.saved", index);
        ck_assert(rename(index, saved) == 0);
        ck_assert(k < 2    ? mkdir(index, 0777) == 0
                  : k == 2 ? mkfifo(index, 0666) == 0
                           : symlink(saved, index) == 0);
        r = harness_hetsim((const char *[]){ "sweep", sw3, "-o", out, "-j", "1", "--quiet", NULL });
        struct stat st;
        ck_assert_msg(r.status == 2 && strstr(r.err, names[k]) != NULL, "%s (%d): exit %d\n%s",
                      names[k], k, r.status, r.err);
        ck_assert_msg(!harness_exists(point), "%s (%d): a point ran", names[k], k);
        ck_assert_msg(lstat(index, &st) == 0 && !S_ISREG(st.st_mode), "%s (%d) replaced", names[k],
                      k);
        ck_assert(k < 2 ? rmdir(index) == 0 : unlink(index) == 0);
        ck_assert(rename(saved, index) == 0);
    }
    harness_cleanup(dir);
}
END_TEST

/* `plot RUN...` labels a sweep's points by their overrides, read from the index beside them;
 * "SW/POINT/." was taken as the run "." of the folder SW/POINT, no sweep's point, and so was a
 * link to a point: the same two runs were drawn as "b, b-2", their scenario's name, where
 * "SW/POINT" drew "workload.batch=8, workload.batch=16" (exit 0 both). */
START_TEST(a_point_drawn_as_a_run_keeps_its_label_however_it_is_spelt)
{
    char *dir = harness_tmpdir("probe54");
    char sw[700], out[700], figs[700], p8[800], link[800], link_to[800];
    snprintf(sw, sizeof(sw), "%s/sw.json", dir);
    snprintf(out, sizeof(out), "%s/SW", dir);
    snprintf(figs, sizeof(figs), "%s/figs", dir);
    snprintf(p8, sizeof(p8), "%s/workload.batch=8,seed=7/.", out);
    snprintf(link, sizeof(link), "%s/to-16", dir);
    snprintf(link_to, sizeof(link_to), "SW/workload.batch=16,seed=7");
    harness_write(dir, "b.json", base_json);
    harness_write(dir, "sw.json", sweep_json);
    result r =
        harness_hetsim((const char *[]){ "sweep", sw, "-o", out, "-j", "1", "--quiet", NULL });
    ck_assert_msg(r.status == 0, "sweep: exit %d\n%s", r.status, r.err);
    ck_assert(symlink(link_to, link) == 0);
    r = harness_hetsim((const char *[]){ "plot", p8, link, "-o", figs, "--format", "svg", NULL });
    ck_assert_msg(r.status == 0, "plot: exit %d\n%s", r.status, r.err);
    char *svg = harness_slurp(figs, "convergence.svg");
    ck_assert_msg(strstr(svg, "workload.batch=8") != NULL &&
                      strstr(svg, "workload.batch=16") != NULL,
                  "the points are not labelled by their overrides");
    free(svg);
    harness_cleanup(dir);
}
END_TEST

/* A sweep's directory before its first index.csv, its sweep running (its lock held, as the
 * sweep holds it: an exclusive flock on DIR.lock naming the holder): report and plot --by said
 * "no index.csv yet: its sweep has not finished (run the same `hetsim sweep` again ...)", which
 * that sweep's lock refuses. They say it is being written, naming the holder, exit 2; without
 * the lock, the advice as before. */
START_TEST(a_sweep_running_before_its_first_index_is_named_as_being_written)
{
    char *dir = harness_tmpdir("probe54");
    char sw[700], lock[800], figs[700], pid[32];
    snprintf(sw, sizeof(sw), "%s/SW", dir);
    snprintf(lock, sizeof(lock), "%s.lock", sw);
    snprintf(figs, sizeof(figs), "%s/figs", dir);
    ck_assert(mkdir(sw, 0777) == 0);
    harness_write(sw, ".hetsim-sweep", "");
    int fd = open(lock, O_RDWR | O_CREAT, 0666);
    ck_assert_msg(fd >= 0 && flock(fd, LOCK_EX | LOCK_NB) == 0, "cannot lock %s", lock);
    int len = snprintf(pid, sizeof(pid), "%ld\n", (long)getpid());
    ck_assert(write(fd, pid, (size_t)len) == len);
    const char *const report[] = { "report", sw, "--by", "workload.batch", NULL };
    const char *const plot[] = { "plot", sw, "--by", "workload.batch", "-o", figs, NULL };
    for (int c = 0; c < 2; c++) {
        result r = harness_hetsim(c == 0 ? report : plot);
        ck_assert_msg(r.status == 2 && strstr(r.err, "being written") != NULL &&
                          strstr(r.err, "run the same") == NULL,
                      "%s: exit %d\n%s", c == 0 ? "report" : "plot --by", r.status, r.err);
    }
    close(fd);
    unlink(lock);
    result r = harness_hetsim(report);
    ck_assert_msg(r.status == 2 && strstr(r.err, "run the same") != NULL, "unlocked: exit %d\n%s",
                  r.status, r.err);
    harness_cleanup(dir);
}
END_TEST

/* A sweep's marker .hetsim-sweep that is a directory failed the sweep as a write, "cannot
 * create SW/.hetsim-sweep: Is a directory", exit 1, where a FIFO or a link there is refused as
 * no marker of hetsim's, exit 2 (docs/sweep.md); so is a directory now, before any point runs. */
START_TEST(a_sweep_marker_that_is_a_directory_is_refused_as_no_marker)
{
    char *dir = harness_tmpdir("probe54");
    char sw[700], out[700], mark[800];
    snprintf(sw, sizeof(sw), "%s/sw.json", dir);
    snprintf(out, sizeof(out), "%s/SW", dir);
    snprintf(mark, sizeof(mark), "%s/.hetsim-sweep", out);
    harness_write(dir, "b.json", base_json);
    harness_write(dir, "sw.json", sweep_json);
    ck_assert(mkdir(out, 0777) == 0 && mkdir(mark, 0777) == 0);
    result r =
        harness_hetsim((const char *[]){ "sweep", sw, "-o", out, "-j", "1", "--quiet", NULL });
    ck_assert_msg(r.status == 2 && strstr(r.err, "is a directory, not a plain file") != NULL,
                  "exit %d\n%s", r.status, r.err);
    char point[800];
    snprintf(point, sizeof(point), "%s/workload.batch=8,seed=7", out);
    ck_assert_msg(!harness_exists(point), "a point ran");
    harness_cleanup(dir);
}
END_TEST

/* `check S --golden DIR --update` replaces a golden whole. It took any folder holding a file
 * named seeds for one: a project's folder with seeds, important.txt and src/main.c was replaced
 * by the new golden, its files removed, exit 0 ("golden written to DIR"); so were a README.md
 * and a folder of notes kept in a golden. An update refuses, exit 2, naming the first entry it
 * does not write, nothing changed; a golden of its own files alone is still replaced. */
START_TEST(an_update_removes_no_file_it_does_not_write)
{
    char *dir = harness_tmpdir("probe54");
    char s[700], g[700], notes[800];
    snprintf(s, sizeof(s), "%s/b.json", dir);
    snprintf(g, sizeof(g), "%s/proj", dir);
    harness_write(dir, "b.json", base_json);
    ck_assert(mkdir(g, 0777) == 0);
    harness_write(g, "seeds", "1\n2\n3\n");
    harness_write(g, "important.txt", "precious\n");
    const char *const update[] = { "check", s, "--golden", g, "--update", "--seeds", "3", NULL };
    result r = harness_hetsim(update);
    ck_assert_msg(r.status == 2 && strstr(r.err, "important.txt") != NULL, "exit %d\n%s", r.status,
                  r.err);
    char path[800];
    snprintf(path, sizeof(path), "%s/important.txt", g);
    ck_assert_msg(harness_exists(path), "important.txt removed");
    /* A golden: replaced; then with a README or a folder of notes in it, refused. */
    harness_cleanup(strdup(g));
    r = harness_hetsim(update);
    ck_assert_msg(r.status == 0, "a fresh golden: exit %d\n%s", r.status, r.err);
    r = harness_hetsim(update);
    ck_assert_msg(r.status == 0, "a golden over a golden: exit %d\n%s", r.status, r.err);
    harness_write(g, "README.md", "why this golden\n");
    r = harness_hetsim(update);
    ck_assert_msg(r.status == 2 && strstr(r.err, "README.md") != NULL, "README: exit %d\n%s",
                  r.status, r.err);
    snprintf(path, sizeof(path), "%s/README.md", g);
    ck_assert(unlink(path) == 0);
    snprintf(notes, sizeof(notes), "%s/seed-7/notes", g);
    ck_assert(mkdir(notes, 0777) == 0);
    r = harness_hetsim(update);
    ck_assert_msg(r.status == 2 && strstr(r.err, "seed-7/notes") != NULL, "notes: exit %d\n%s",
                  r.status, r.err);
    ck_assert(harness_exists(notes));
    ck_assert(rmdir(notes) == 0);
    snprintf(notes, sizeof(notes), "%s/seed-notes", g);
    ck_assert(mkdir(notes, 0777) == 0);
    r = harness_hetsim(update);
    ck_assert_msg(r.status == 2 && strstr(r.err, "seed-notes") != NULL, "seed-notes: exit %d\n%s",
                  r.status, r.err);
    ck_assert(harness_exists(notes));
    harness_cleanup(dir);
}
END_TEST

Suite *test_suite(void)
{
    Suite *s = suite_create("probe54");
    TCase *out = tcase_create("outputs");
    tcase_add_test(out, a_plot_by_removes_the_files_of_an_earlier_plot_it_did_not_write);
    tcase_add_test(out, a_sweep_refuses_an_index_that_is_no_regular_file_before_running);
    tcase_add_test(out, a_point_drawn_as_a_run_keeps_its_label_however_it_is_spelt);
    tcase_add_test(out, a_sweep_running_before_its_first_index_is_named_as_being_written);
    tcase_add_test(out, a_sweep_marker_that_is_a_directory_is_refused_as_no_marker);
    tcase_add_test(out, an_update_removes_no_file_it_does_not_write);
    tcase_set_timeout(out, 120);
    suite_add_tcase(s, out);
    return s;
}
