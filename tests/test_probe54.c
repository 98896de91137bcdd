/* Issue 38, the eighteenth probe (files changing while read, outputs, links, CSV quoting and
 * admissions under failures): what it found. Each case failed before its fix.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

Suite *test_suite(void)
{
    Suite *s = suite_create("probe54");
    TCase *out = tcase_create("outputs");
    tcase_add_test(out, a_plot_by_removes_the_files_of_an_earlier_plot_it_did_not_write);
    tcase_set_timeout(out, 120);
    suite_add_tcase(s, out);
    return s;
}
