/* Issue 38, the nineteenth probe (files changing while read, outputs, links, CSV quoting and
 * admissions under failures; probe38ap): what it found. Each case failed before its fix.
 */
#include <errno.h>
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

/* Runs of 0.2 to 0.5 s each: a change made while one runs comes in time. */
static const char long_json[] =
    "{\"seed\": 7, \"workers\": 8, \"compute\": {\"iteration_ms\": 10},\n"
    " \"workload\": {\"dataset\": {\"name\": \"synthetic\", \"samples\": 400,\n"
    "   \"test_samples\": 100}, \"model\": {\"name\": \"softmax\"}, \"batch\": 8, \"lr\": 0.1},\n"
    " \"protocol\": {\"name\": \"allreduce\"}, \"stop\": {\"time_s\": 60},\n"
    " \"eval\": {\"every_s\": 10, \"samples\": 100}}\n";

/* DIR/name exists. */
static bool in(const char *dir, const char *name)
{
    char path[1024];
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    return harness_exists(path);
}

/* `check S --golden G --update` replaced a golden whose seed runs held a file of the user's
 * (G/seed-7/notes.txt), a link or a FIFO among a run's files: the old golden was removed whole
 * with them, exit 0 (only a seed's subdirectory was refused). An update refuses, exit 2,
 * naming the file, nothing changed; a golden of its own files alone is still replaced. */
START_TEST(an_update_removes_no_file_of_the_users_in_a_seed_run)
{
    char *dir = harness_tmpdir("probe60");
    char s[700], g[700], seed[800];
    snprintf(s, sizeof(s), "%s/b.json", dir);
    snprintf(g, sizeof(g), "%s/g", dir);
    snprintf(seed, sizeof(seed), "%s/seed-7", g);
    harness_write(dir, "b.json", base_json);
    const char *const update[] = { "check", s, "--golden", g, "--update", "--seeds", "3", NULL };
    result r = harness_hetsim(update);
    ck_assert_msg(r.status == 0, "a fresh golden: exit %d\n%s", r.status, r.err);
    harness_write(seed, "notes.txt", "why seed 7 is slow\n");
    r = harness_hetsim(update);
    ck_assert_msg(r.status == 2 && strstr(r.err, "seed-7/notes.txt") != NULL, "exit %d\n%s",
                  r.status, r.err);
    ck_assert_msg(in(seed, "notes.txt"), "notes.txt removed");
    char path[900];
    snprintf(path, sizeof(path), "%s/notes.txt", seed);
    ck_assert(unlink(path) == 0);
    snprintf(path, sizeof(path), "%s/events.csv", seed); /* a name a run writes, no file */
    ck_assert(symlink(s, path) == 0);
    r = harness_hetsim(update);
    ck_assert_msg(r.status == 2 && strstr(r.err, "seed-7/events.csv") != NULL, "link: exit %d\n%s",
                  r.status, r.err);
    ck_assert(unlink(path) == 0);
    r = harness_hetsim(update);
    ck_assert_msg(r.status == 0, "a golden over a golden: exit %d\n%s", r.status, r.err);
    harness_cleanup(dir);
}
END_TEST

/* An update writes its new golden in G.partial beside G, after removing what a killed update
 * left there. It took any folder G.partial holding a file named seeds for that: a folder of
 * the user's with seeds, important.txt and src/main.c was removed, exit 0. An update refuses,
 * exit 2, nothing changed, unless G.partial is a killed update's work or a golden of its own
 * files alone. */
START_TEST(an_update_removes_no_folder_of_the_users_in_its_work_place)
{
    char *dir = harness_tmpdir("probe60");
    char s[700], g[700], work[800];
    snprintf(s, sizeof(s), "%s/b.json", dir);
    snprintf(g, sizeof(g), "%s/g", dir);
    snprintf(work, sizeof(work), "%s/g.partial", dir);
    harness_write(dir, "b.json", base_json);
    ck_assert(mkdir(work, 0777) == 0);
    harness_write(work, "seeds", "1\n2\n3\n");
    harness_write(work, "important.txt", "precious\n");
    const char *const update[] = { "check", s, "--golden", g, "--update", "--seeds", "3", NULL };
    result r = harness_hetsim(update);
    ck_assert_msg(r.status == 2 && strstr(r.err, "g.partial") != NULL, "exit %d\n%s", r.status,
                  r.err);
    ck_assert_msg(in(work, "important.txt"), "important.txt removed");
    ck_assert_msg(!in(g, ""), "a golden written");
    char path[900];
    snprintf(path, sizeof(path), "%s/important.txt", work);
    ck_assert(unlink(path) == 0); /* a golden's seeds alone: an old golden a kill left */
    r = harness_hetsim(update);
    ck_assert_msg(r.status == 0, "exit %d\n%s", r.status, r.err);
    ck_assert(!in(work, ""));
    harness_cleanup(dir);
}
END_TEST

/* A README put into the golden (or a folder made where there was none) while an update ran,
 * after it had looked at the golden: the old golden, swapped out, was removed with it, exit 0.
 * The update looks again at what it swapped out and swaps it back, exit 2, the new golden
 * left in G.partial (removed by the next update). */
static int put_readme(void *arg)
{
    return harness_save(arg, "README.md", "why this golden\n");
}

static void take_readme(void *arg, bool changed)
{
    (void)changed;
    char path[800];
    snprintf(path, sizeof(path), "%s/README.md", (const char *)arg);
    unlink(path);
}

static int make_folder(void *arg)
{
    return mkdir(arg, 0777) != 0 && errno != EEXIST ? -1 : put_readme(arg);
}

START_TEST(an_update_removes_no_file_put_into_the_golden_while_it_ran)
{
    char *dir = harness_tmpdir("probe60");
    char s[700], g[700], work[800], readme[800];
    snprintf(s, sizeof(s), "%s/long.json", dir);
    snprintf(g, sizeof(g), "%s/g", dir);
    snprintf(work, sizeof(work), "%s/g.partial", dir);
    snprintf(readme, sizeof(readme), "%s/README.md", g);
    harness_write(dir, "long.json", long_json);
    const char *const update[] = { "check", s, "--golden", g, "--update", "--seeds", "3", NULL };
    result r = harness_hetsim(update);
    ck_assert_msg(r.status == 0, "a fresh golden: exit %d\n%s", r.status, r.err);
    harness_race race = { .marker = work, .change = put_readme, .again = take_readme, .arg = g };
    r = harness_hetsim_racing(update, &race);
    ck_assert_msg(r.status == 2 && strstr(r.err, "changed while the update ran") != NULL,
                  "exit %d\n%s", r.status, r.err);
    ck_assert_msg(harness_exists(readme), "README.md removed");
    ck_assert_msg(in(work, "seeds"), "no new golden in g.partial");
    /* A folder made where there was no golden when the update began. */
    take_readme(g, true);
    harness_cleanup(strdup(g));
    harness_cleanup(strdup(work));
    race.change = make_folder;
    r = harness_hetsim_racing(update, &race);
    ck_assert_msg(r.status == 2 && strstr(r.err, "changed while the update ran") != NULL,
                  "a folder: exit %d\n%s", r.status, r.err);
    ck_assert_msg(harness_exists(readme), "a folder's README.md removed");
    harness_cleanup(dir);
}
END_TEST

/* A killed update leaves its work directory G.partial, marked as an update's, which the next
 * update removes whole. No command took it for a hetsim output: `run S -o G.partial/mine`, a
 * sweep or a check's -o there wrote inside it, exit 0, and the next update removed them with
 * it. A golden in the making is a golden to every command: refused, exit 2. */
START_TEST(no_output_goes_into_a_killed_updates_work)
{
    char *dir = harness_tmpdir("probe60");
    char s[700], g[700], work[800], mine[900], chk[900];
    snprintf(s, sizeof(s), "%s/b.json", dir);
    snprintf(g, sizeof(g), "%s/g", dir);
    snprintf(work, sizeof(work), "%s/g.partial", dir);
    snprintf(mine, sizeof(mine), "%s/mine", work);
    snprintf(chk, sizeof(chk), "%s/chk", work);
    harness_write(dir, "b.json", base_json);
    const char *const update[] = { "check", s, "--golden", g, "--update", "--seeds", "3", NULL };
    result r = harness_hetsim(update);
    ck_assert_msg(r.status == 0, "exit %d\n%s", r.status, r.err);
    ck_assert(mkdir(work, 0777) == 0); /* as a killed update left it */
    harness_write(work, ".hetsim-golden-partial", "");
    r = harness_hetsim((const char *[]){ "run", s, "-o", mine, "--quiet", NULL });
    ck_assert_msg(r.status == 2 && strstr(r.err, "golden") != NULL, "run: exit %d\n%s", r.status,
                  r.err);
    ck_assert(!harness_exists(mine));
    r = harness_hetsim((const char *[]){ "check", s, "--golden", g, "-o", chk, NULL });
    ck_assert_msg(r.status == 2 && strstr(r.err, "golden") != NULL, "check: exit %d\n%s", r.status,
                  r.err);
    ck_assert(!harness_exists(chk));
    r = harness_hetsim(update);
    ck_assert_msg(r.status == 0, "exit %d\n%s", r.status, r.err);
    ck_assert(!harness_exists(work));
    harness_cleanup(dir);
}
END_TEST

/* A plot writes each file through its temporary NAME.tmp, made afresh whatever holds that name:
 * `plot RUN -o figs`, figs a folder of the user's holding convergence.png.tmp (no plot's
 * folder yet), removed that file, exit 0; so did `plot SW --by KEY -o figs` a
 * breakdown-by-KEY.csv.tmp. A temporary's name is the plot's as its file's is: refused, exit 2,
 * in a folder no plot wrote, nothing changed. */
START_TEST(a_plot_removes_no_file_of_the_users_named_as_its_temporary)
{
    char *dir = harness_tmpdir("probe60");
    char s[700], sw[700], run[700], out[700], figs[700];
    snprintf(s, sizeof(s), "%s/b.json", dir);
    snprintf(sw, sizeof(sw), "%s/sw.json", dir);
    snprintf(run, sizeof(run), "%s/r", dir);
    snprintf(out, sizeof(out), "%s/SW", dir);
    snprintf(figs, sizeof(figs), "%s/figs", dir);
    harness_write(dir, "b.json", base_json);
    harness_write(
        dir, "sw.json",
        "{\"base\": \"b.json\", \"grid\": {\"workload.batch\": [8, 16]}, \"seeds\": 1}\n");
    result r = harness_hetsim((const char *[]){ "run", s, "-o", run, "--quiet", NULL });
    ck_assert_msg(r.status == 0, "run: exit %d\n%s", r.status, r.err);
    r = harness_hetsim((const char *[]){ "sweep", sw, "-o", out, "-j", "1", "--quiet", NULL });
    ck_assert_msg(r.status == 0, "sweep: exit %d\n%s", r.status, r.err);
    ck_assert(mkdir(figs, 0777) == 0);
    harness_write(figs, "convergence.png.tmp", "mine\n");
    r = harness_hetsim((const char *[]){ "plot", run, "-o", figs, NULL });
    ck_assert_msg(r.status == 2 && strstr(r.err, "convergence.png.tmp") != NULL,
                  "plot: exit %d\n%s", r.status, r.err);
    ck_assert_msg(in(figs, "convergence.png.tmp"), "convergence.png.tmp removed");
    harness_cleanup(strdup(figs));
    ck_assert(mkdir(figs, 0777) == 0);
    harness_write(figs, "breakdown-by-workload.batch.csv.tmp", "mine\n");
    r = harness_hetsim((const char *[]){ "plot", out, "--by", "workload.batch", "-o", figs, NULL });
    ck_assert_msg(r.status == 2 && strstr(r.err, "breakdown-by-workload.batch.csv.tmp") != NULL,
                  "plot --by: exit %d\n%s", r.status, r.err);
    ck_assert_msg(in(figs, "breakdown-by-workload.batch.csv.tmp"), "the .csv.tmp removed");
    harness_cleanup(dir);
}
END_TEST

/* `run S -o D` over a previous run D replaces it whole, and refused one holding a subdirectory:
 * a file of the user's kept in it (D/notes.txt) was removed with the old run, exit 0, and so
 * was one in D.partial. Refused, exit 2, naming it, nothing changed; a run with the figures
 * `hetsim plot D` drew into it in every format is still replaced. */
START_TEST(a_run_removes_no_file_of_the_users_in_the_run_it_replaces)
{
    char *dir = harness_tmpdir("probe60");
    char s[700], d[700], work[800];
    snprintf(s, sizeof(s), "%s/b.json", dir);
    snprintf(d, sizeof(d), "%s/D", dir);
    snprintf(work, sizeof(work), "%s/D.partial", dir);
    harness_write(dir, "b.json", base_json);
    const char *const run[] = { "run", s, "-o", d, "--quiet", NULL };
    result r = harness_hetsim(run);
    ck_assert_msg(r.status == 0, "exit %d\n%s", r.status, r.err);
    static const char *const formats[] = { "png", "pdf", "svg" };
    for (size_t i = 0; i < 3; i++) {
        r = harness_hetsim((const char *[]){ "plot", d, "--format", formats[i], NULL });
        ck_assert_msg(r.status == 0, "plot %s: exit %d\n%s", formats[i], r.status, r.err);
    }
    r = harness_hetsim(run);
    ck_assert_msg(r.status == 0, "a run with its figures: exit %d\n%s", r.status, r.err);
    harness_write(d, "notes.txt", "why this run\n");
    r = harness_hetsim(run);
    ck_assert_msg(r.status == 2 && strstr(r.err, "notes.txt") != NULL, "exit %d\n%s", r.status,
                  r.err);
    ck_assert_msg(in(d, "notes.txt"), "notes.txt removed");
    char path[800];
    snprintf(path, sizeof(path), "%s/notes.txt", d);
    ck_assert(unlink(path) == 0);
    ck_assert(mkdir(work, 0777) == 0); /* a killed run's work, a file of the user's in it */
    harness_write(work, ".hetsim-partial", "");
    harness_write(work, "mine.txt", "mine\n");
    r = harness_hetsim(run);
    ck_assert_msg(r.status == 2 && strstr(r.err, "mine.txt") != NULL, "work: exit %d\n%s", r.status,
                  r.err);
    ck_assert_msg(in(work, "mine.txt"), "mine.txt removed");
    harness_cleanup(dir);
}
END_TEST

/* The same with the note saved into D while the run ran, after it had looked at D: the old run,
 * swapped out, was removed with it, exit 0. It is swapped back, exit 2, the note kept. */
static int put_note(void *arg)
{
    return harness_save(arg, "notes.txt", "why this run\n");
}

static void take_note(void *arg, bool changed)
{
    (void)changed;
    char path[800];
    snprintf(path, sizeof(path), "%s/notes.txt", (const char *)arg);
    unlink(path);
}

START_TEST(a_run_removes_no_file_put_into_the_run_it_replaces_while_it_ran)
{
    char *dir = harness_tmpdir("probe60");
    char s[700], d[700], work[800];
    snprintf(s, sizeof(s), "%s/long.json", dir);
    snprintf(d, sizeof(d), "%s/D", dir);
    snprintf(work, sizeof(work), "%s/D.partial", dir);
    harness_write(dir, "long.json", long_json);
    const char *const run[] = { "run", s, "-o", d, "--quiet", NULL };
    result r = harness_hetsim(run);
    ck_assert_msg(r.status == 0, "exit %d\n%s", r.status, r.err);
    harness_race race = { .marker = work, .change = put_note, .again = take_note, .arg = d };
    r = harness_hetsim_racing(run, &race);
    ck_assert_msg(r.status == 2 && strstr(r.err, "notes.txt") != NULL, "exit %d\n%s", r.status,
                  r.err);
    ck_assert_msg(in(d, "notes.txt"), "notes.txt removed");
    ck_assert_msg(in(d, "run.json") && !harness_exists(work), "the old run not back whole");
    harness_cleanup(dir);
}
END_TEST

/* `check -o LINK --junit TARGET/check.csv`, LINK a symbolic link to TARGET, a folder not made
 * yet: the check wrote its outputs through the link and then its JUnit report over its own
 * check.csv, exit 0 (the folder was no check's output any more; `-o TARGET --junit
 * LINK/check.csv` was refused). The check's output is taken where it writes it, the link
 * followed: refused, exit 2, before anything runs. */
START_TEST(a_junit_report_never_replaces_the_checks_own_file_through_a_link)
{
    char *dir = harness_tmpdir("probe60");
    char s[700], g[700], link[700], target[700], junit[800];
    snprintf(s, sizeof(s), "%s/b.json", dir);
    snprintf(g, sizeof(g), "%s/g", dir);
    snprintf(link, sizeof(link), "%s/out", dir);
    snprintf(target, sizeof(target), "%s/nw/deep", dir);
    snprintf(junit, sizeof(junit), "%s/check.csv", target);
    harness_write(dir, "b.json", base_json);
    result r = harness_hetsim(
        (const char *[]){ "check", s, "--golden", g, "--update", "--seeds", "3", NULL });
    ck_assert_msg(r.status == 0, "update: exit %d\n%s", r.status, r.err);
    ck_assert(symlink("nw/deep", link) == 0);
    r = harness_hetsim((const char *[]){ "check", s, "--golden", g, "-o", link, "--seeds", "3",
                                         "--junit", junit, NULL });
    ck_assert_msg(r.status == 2 && strstr(r.err, "own output") != NULL, "exit %d\n%s", r.status,
                  r.err);
    ck_assert_msg(!harness_exists(target), "the check ran");
    harness_cleanup(dir);
}
END_TEST

Suite *test_suite(void)
{
    Suite *s = suite_create("probe60");
    TCase *out = tcase_create("outputs");
    tcase_add_test(out, an_update_removes_no_file_of_the_users_in_a_seed_run);
    tcase_add_test(out, an_update_removes_no_folder_of_the_users_in_its_work_place);
    tcase_add_test(out, an_update_removes_no_file_put_into_the_golden_while_it_ran);
    tcase_add_test(out, no_output_goes_into_a_killed_updates_work);
    tcase_add_test(out, a_plot_removes_no_file_of_the_users_named_as_its_temporary);
    tcase_add_test(out, a_run_removes_no_file_of_the_users_in_the_run_it_replaces);
    tcase_add_test(out, a_run_removes_no_file_put_into_the_run_it_replaces_while_it_ran);
    tcase_add_test(out, a_junit_report_never_replaces_the_checks_own_file_through_a_link);
    tcase_set_timeout(out, 120);
    suite_add_tcase(s, out);
    return s;
}
