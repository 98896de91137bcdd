/* Run directories (outputs/rundir.h): one writer at a time through the lock, what counts as
 * hetsim's output, and the refusals that keep a run directory replaceable whole. The whole
 * binary is exercised under faults (kill -9, concurrent writers) by tests/faults/faults.sh. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <check.h>

#include "harness.h"
#include "outputs/output.h"
#include "outputs/rundir.h"
#include "sim/file.h"
#include "suite.h"

static bool exists(const char *dir, const char *name)
{
    char path[1024];
    struct stat st;
    snprintf(path, sizeof(path), "%s%s", dir, name);
    return lstat(path, &st) == 0;
}

/* A committed run: a run.json of hetsim and a metrics.csv. */
static void make_run(const char *dir)
{
    sim_rundir *rd = NULL;
    sim_err err;
    ck_assert_int_eq(sim_rundir_begin(dir, &rd, &err), SIM_OK);
    ck_assert_int_eq(sim_output_write(sim_rundir_work(rd), "run.json",
                                      "{\n  \"hetsim_version\": \"x\"\n}\n", &err),
                     SIM_OK);
    ck_assert_int_eq(sim_output_write(sim_rundir_work(rd), "metrics.csv", "time_s\n", &err),
                     SIM_OK);
    ck_assert_int_eq(sim_rundir_commit(rd, &err), SIM_OK);
}

START_TEST(a_second_writer_is_refused_naming_the_directory_and_the_holder)
{
    char *tmp = harness_tmpdir("rundir");
    char dir[512], want[128];
    snprintf(dir, sizeof(dir), "%s/a/run", tmp);
    sim_rundir *rd = NULL, *rd2 = NULL;
    sim_err err;
    ck_assert_int_eq(sim_rundir_begin(dir, &rd, &err), SIM_OK);
    ck_assert(exists(dir, ".lock") && exists(dir, ".partial/" SIM_RUNDIR_MARKER));
    /* flock conflicts between two open files even in one process */
    ck_assert_int_eq(sim_rundir_begin(dir, &rd2, &err), SIM_ESCENARIO);
    ck_assert_ptr_null(rd2);
    snprintf(want, sizeof(want), "is being written by another hetsim (pid %ld", (long)getpid());
    ck_assert_msg(strstr(err.msg, want) != NULL && strstr(err.msg, dir) != NULL, "%s", err.msg);
    ck_assert(exists(dir, ".partial/" SIM_RUNDIR_MARKER)); /* the holder's work is intact */
    sim_rundir_lock *lk = NULL;
    ck_assert_int_eq(sim_rundir_lock_take(dir, &lk, &err), SIM_ESCENARIO);
    sim_rundir_abort(rd);
    ck_assert(!exists(dir, ".lock") && !exists(dir, ".partial") && !exists(dir, ""));
    ck_assert_int_eq(sim_rundir_lock_take(dir, &lk, &err), SIM_OK);
    sim_rundir_unlock(lk);
    ck_assert(!exists(dir, ".lock"));
    /* A lock file left by a killed holder is taken over. */
    char path[600];
    snprintf(path, sizeof(path), "%s.lock", dir);
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs("999999\n", f);
    fclose(f);
    make_run(dir);
    ck_assert(!exists(dir, ".lock") && exists(dir, "/run.json"));
    harness_cleanup(tmp);
}
END_TEST

START_TEST(kinds_are_recognised_and_outputs_inside_them_refused)
{
    char *tmp = harness_tmpdir("rundir");
    char run[512], sub[600], sweep[512], golden[512], path[700];
    sim_err err;
    snprintf(run, sizeof(run), "%s/run", tmp);
    snprintf(sweep, sizeof(sweep), "%s/sweep", tmp);
    snprintf(golden, sizeof(golden), "%s/golden", tmp);
    ck_assert_int_eq(sim_rundir_kind_of(run), SIM_RUNDIR_NONE);
    make_run(run);
    ck_assert_int_eq(sim_rundir_kind_of(run), SIM_RUNDIR_RUN);
    ck_assert_int_eq(sim_output_mkdirs(sweep, &err), SIM_OK);
    ck_assert_int_eq(sim_output_write(sweep, SIM_RUNDIR_SWEEP_MARKER, "", &err), SIM_OK);
    ck_assert_int_eq(sim_rundir_kind_of(sweep), SIM_RUNDIR_SWEEP);
    snprintf(path, sizeof(path), "%s/seed-3", golden);
    ck_assert_int_eq(sim_output_mkdirs(path, &err), SIM_OK);
    ck_assert_int_eq(sim_output_write(path, "fingerprint", "", &err), SIM_OK);
    ck_assert_int_eq(sim_rundir_kind_of(golden), SIM_RUNDIR_NONE);
    ck_assert_int_eq(sim_output_write(golden, "seeds", "3\n4\n", &err), SIM_OK);
    ck_assert_int_eq(sim_rundir_kind_of(golden), SIM_RUNDIR_GOLDEN);

    const unsigned all = SIM_RUNDIR_BIT(SIM_RUNDIR_RUN) | SIM_RUNDIR_BIT(SIM_RUNDIR_WORK) |
                         SIM_RUNDIR_BIT(SIM_RUNDIR_SWEEP) | SIM_RUNDIR_BIT(SIM_RUNDIR_GOLDEN);
    ck_assert_int_eq(sim_rundir_check_within(run, all, &err), SIM_OK); /* itself: not inside */
    snprintf(sub, sizeof(sub), "%s/x/y/", run);
    ck_assert_int_eq(sim_rundir_check_within(sub, all, &err), SIM_ESCENARIO);
    ck_assert_msg(strstr(err.msg, "a hetsim run directory") != NULL, "%s", err.msg);
    snprintf(sub, sizeof(sub), "%s/../elsewhere", run);
    ck_assert_int_eq(sim_rundir_check_within(sub, all, &err), SIM_OK);
    snprintf(sub, sizeof(sub), "%s/p", sweep);
    ck_assert_int_eq(sim_rundir_check_within(sub, SIM_RUNDIR_BIT(SIM_RUNDIR_RUN), &err), SIM_OK);
    ck_assert_int_eq(sim_rundir_check_within(sub, all, &err), SIM_ESCENARIO);
    snprintf(sub, sizeof(sub), "%s/seed-3/z", golden);
    ck_assert_int_eq(sim_rundir_check_within(sub, SIM_RUNDIR_BIT(SIM_RUNDIR_GOLDEN), &err),
                     SIM_ESCENARIO);

    /* A run under a run, and one named like a work directory, are refused; nothing made. */
    sim_rundir *rd = NULL;
    snprintf(sub, sizeof(sub), "%s/inner", run);
    ck_assert_int_eq(sim_rundir_begin(sub, &rd, &err), SIM_ESCENARIO);
    ck_assert(!exists(sub, "") && !exists(sub, ".partial") && !exists(sub, ".lock"));
    snprintf(sub, sizeof(sub), "%s/other.partial", tmp);
    ck_assert_int_eq(sim_rundir_begin(sub, &rd, &err), SIM_ESCENARIO);
    harness_cleanup(tmp);
}
END_TEST

/* The ownership rule (issue 38): a place equal to a hetsim output counts as inside it unless
 * it is the command's own (links followed); a file the user names is refused inside any
 * output, replaced when regular or absent, written through when a FIFO or a device. */
START_TEST(a_place_equal_to_an_output_is_refused_unless_it_is_the_commands_own)
{
    char *tmp = harness_tmpdir("rundir");
    char run[512], link[512], other[512], path[700], *out = NULL;
    sim_err err;
    snprintf(run, sizeof(run), "%s/run", tmp);
    snprintf(link, sizeof(link), "%s/link", tmp);
    snprintf(other, sizeof(other), "%s/plain", tmp);
    make_run(run);
    ck_assert_int_eq(symlink("run", link), 0);
    ck_assert_int_eq(sim_rundir_check_place("output directory", run, 0, SIM_RUNDIR_ANY, NULL, &err),
                     SIM_ESCENARIO);
    ck_assert_msg(strstr(err.msg, "is a hetsim run directory that this command does not own") !=
                      NULL,
                  "%s", err.msg);
    ck_assert_int_eq(sim_rundir_check_place("output directory", run, 0, SIM_RUNDIR_ANY, link, &err),
                     SIM_OK); /* its own, named by a link */
    ck_assert_int_eq(
        sim_rundir_check_place("output directory", link, 0, SIM_RUNDIR_ANY, NULL, &err),
        SIM_ESCENARIO);
    ck_assert_int_eq(sim_rundir_check_place("output directory", other, SIM_RUNDIR_ANY,
                                            SIM_RUNDIR_ANY, NULL, &err),
                     SIM_OK);
    /* Links followed to the end, a relative target from the link's folder, the last one
     * absent; a loop refused. */
    snprintf(path, sizeof(path), "%s/a", tmp);
    ck_assert_int_eq(symlink("b/", path), 0);
    snprintf(path, sizeof(path), "%s/b", tmp);
    ck_assert_int_eq(symlink("made/later", path), 0);
    snprintf(path, sizeof(path), "%s/a/", tmp);
    ck_assert_int_eq(sim_rundir_follow(path, &out, &err), SIM_OK);
    snprintf(path, sizeof(path), "%s/made/later", tmp);
    ck_assert_str_eq(out, path);
    free(out);
    snprintf(path, sizeof(path), "%s/loop", tmp);
    ck_assert_int_eq(symlink("loop", path), 0);
    ck_assert_int_eq(sim_rundir_follow(path, &out, &err), SIM_ESCENARIO);
    ck_assert_ptr_null(out);
    /* Files. */
    sim_rundir_write how;
    snprintf(path, sizeof(path), "%s/run.json", run);
    ck_assert_int_eq(sim_rundir_check_file("--junit file", path, &out, &how, &err), SIM_ESCENARIO);
    ck_assert_msg(strstr(err.msg, "is inside") != NULL, "%s", err.msg);
    snprintf(path, sizeof(path), "%s/report.xml", link);
    ck_assert_int_eq(sim_rundir_check_file("--junit file", path, &out, &how, &err), SIM_ESCENARIO);
    ck_assert_int_eq(sim_rundir_check_file("--junit file", tmp, &out, &how, &err), SIM_ESCENARIO);
    ck_assert_int_eq(sim_rundir_check_file("--junit file", "/dev/null", &out, &how, &err), SIM_OK);
    ck_assert_int_eq(how, SIM_RUNDIR_THROUGH);
    free(out);
    snprintf(path, sizeof(path), "%s/report.xml", tmp);
    ck_assert_int_eq(sim_rundir_check_file("--junit file", path, &out, &how, &err), SIM_OK);
    ck_assert_int_eq(how, SIM_RUNDIR_REPLACE);
    ck_assert_str_eq(out, path);
    free(out);
    harness_cleanup(tmp);
}
END_TEST

START_TEST(a_subdirectory_stops_a_replacement_before_anything_is_removed)
{
    char *tmp = harness_tmpdir("rundir");
    char run[512], path[700];
    sim_err err;
    snprintf(run, sizeof(run), "%s/run", tmp);
    make_run(run);
    snprintf(path, sizeof(path), "%s/sw", run);
    ck_assert_int_eq(sim_output_mkdirs(path, &err), SIM_OK);
    ck_assert_int_eq(sim_output_write(path, "notes", "mine\n", &err), SIM_OK);
    sim_rundir *rd = NULL;
    ck_assert_int_eq(sim_rundir_begin(run, &rd, &err), SIM_ESCENARIO);
    ck_assert_msg(strstr(err.msg, "subdirectory sw") != NULL, "%s", err.msg);
    ck_assert(exists(run, "/sw/notes") && exists(run, "/run.json") && exists(run, "/metrics.csv"));
    ck_assert(!exists(run, ".partial") && !exists(run, ".lock"));
    /* The same in a work directory left over (a swapped-out run holding one). */
    char moved[600];
    snprintf(moved, sizeof(moved), "%s.partial", run);
    ck_assert_int_eq(rename(run, moved), 0);
    ck_assert_int_eq(sim_output_write(run, "run.json", "", &err), SIM_EIO); /* no directory */
    ck_assert_int_eq(sim_output_mkdirs(run, &err), SIM_OK);
    ck_assert_int_eq(sim_output_write(run, "run.json", "{\n  \"hetsim_version\": \"x\"\n}\n", &err),
                     SIM_OK);
    ck_assert_int_eq(sim_rundir_begin(run, &rd, &err), SIM_ESCENARIO);
    ck_assert_msg(strstr(err.msg, "subdirectory sw") != NULL, "%s", err.msg);
    ck_assert(exists(moved, "/sw/notes") && exists(moved, "/run.json"));
    snprintf(path, sizeof(path), "%s/sw/notes", moved);
    ck_assert_int_eq(unlink(path), 0);
    snprintf(path, sizeof(path), "%s/sw", moved);
    ck_assert_int_eq(rmdir(path), 0);
    make_run(run); /* the flat leftover goes, the run is replaced */
    ck_assert(!exists(moved, "") && exists(run, "/run.json"));
    harness_cleanup(tmp);
}
END_TEST

/* A run killed between creating its work directory and marking it leaves the directory
 * empty: the next run takes it over. One holding an unknown file is still refused, and the
 * marker never passes through a temporary name (a leftover .tmp would make it unknown). */
START_TEST(an_empty_work_directory_left_by_a_kill_is_taken_over)
{
    char *tmp = harness_tmpdir("rundir");
    char run[512], work[600], path[700];
    sim_err err;
    snprintf(run, sizeof(run), "%s/run", tmp);
    snprintf(work, sizeof(work), "%s.partial", run);
    ck_assert_int_eq(mkdir(work, 0777), 0);
    make_run(run);
    ck_assert(exists(run, "/run.json") && !exists(work, ""));

    ck_assert_int_eq(mkdir(work, 0777), 0);
    ck_assert_int_eq(sim_output_write(work, "notes", "mine\n", &err), SIM_OK);
    sim_rundir *rd = NULL;
    ck_assert_int_eq(sim_rundir_begin(run, &rd, &err), SIM_ESCENARIO);
    ck_assert_msg(strstr(err.msg, "not hetsim's work directory") != NULL, "%s", err.msg);
    ck_assert(exists(work, "/notes"));
    snprintf(path, sizeof(path), "%s/notes", work);
    ck_assert_int_eq(unlink(path), 0);

    ck_assert_int_eq(sim_rundir_begin(run, &rd, &err), SIM_OK);
    ck_assert(exists(work, "/" SIM_RUNDIR_MARKER) && !exists(work, "/" SIM_RUNDIR_MARKER ".tmp"));
    sim_rundir_abort(rd);
    ck_assert(!exists(work, "") && exists(run, "/run.json"));
    harness_cleanup(tmp);
}
END_TEST

/* A missing folder followed by ".." (issue 38): "new/../golden" is the golden once the missing
 * parents are made, but no check sees it there before (a run replaced a golden's seed through
 * "new/../golden/seed-3"; plot, check and sweep wrote into a golden): refused, nothing made. */
START_TEST(a_missing_folder_then_dotdot_is_refused_before_anything_is_made)
{
    char *tmp = harness_tmpdir("rundir");
    char run[512], golden[512], path[700], *out = NULL;
    sim_err err;
    snprintf(run, sizeof(run), "%s/run", tmp);
    snprintf(golden, sizeof(golden), "%s/golden", tmp);
    make_run(run);
    snprintf(path, sizeof(path), "%s/seed-3", golden);
    ck_assert_int_eq(sim_output_mkdirs(path, &err), SIM_OK);
    ck_assert_int_eq(sim_output_write(path, "fingerprint", "", &err), SIM_OK);
    ck_assert_int_eq(sim_output_write(golden, "seeds", "3\n", &err), SIM_OK);
    snprintf(path, sizeof(path), "%s/new/../run/x", tmp);
    ck_assert_int_eq(sim_rundir_check_within(path, SIM_RUNDIR_ANY, &err), SIM_ESCENARIO);
    ck_assert_msg(strstr(err.msg, "\"..\" follows new, which does not exist") != NULL, "%s",
                  err.msg);
    snprintf(path, sizeof(path), "%s/new/a/../../golden", tmp);
    ck_assert_int_eq(
        sim_rundir_check_place("output directory", path, 0, SIM_RUNDIR_ANY, golden, &err),
        SIM_ESCENARIO);
    ck_assert_msg(strstr(err.msg, "follows a, which") != NULL, "%s", err.msg);
    ck_assert_int_eq(sim_rundir_follow(path, &out, &err), SIM_ESCENARIO);
    ck_assert_ptr_null(out);
    sim_rundir *rd = NULL;
    snprintf(path, sizeof(path), "%s/new/../golden/seed-3", tmp);
    ck_assert_int_eq(sim_rundir_begin(path, &rd, &err), SIM_ESCENARIO);
    sim_rundir_lock *lk = NULL;
    ck_assert_int_eq(sim_rundir_lock_take(path, &lk, &err), SIM_ESCENARIO);
    snprintf(path, sizeof(path), "%s/new/../golden/report.xml", tmp);
    sim_rundir_write how;
    ck_assert_int_eq(sim_rundir_check_file("--junit file", path, &out, &how, &err), SIM_ESCENARIO);
    ck_assert(!exists(tmp, "/new") && exists(golden, "/seed-3/fingerprint"));
    ck_assert(!exists(golden, "/seed-3.partial") && !exists(golden, "/seed-3.lock"));
    /* An existing folder's "..", or a missing folder's ".", is the kernel's, as before. */
    snprintf(path, sizeof(path), "%s/run/../elsewhere", tmp);
    ck_assert_int_eq(sim_rundir_check_within(path, SIM_RUNDIR_ANY, &err), SIM_OK);
    snprintf(path, sizeof(path), "%s/run/..", tmp); /* tmp, not a place inside run */
    ck_assert_int_eq(sim_rundir_check_within(path, SIM_RUNDIR_ANY, &err), SIM_OK);
    ck_assert_int_eq(sim_rundir_resolve(path, &out, &err), SIM_OK);
    ck_assert_msg(strstr(out, "/..") == NULL && sim_rundir_same(out, tmp), "%s", out);
    free(out);
    snprintf(path, sizeof(path), "%s/new/./b/../../golden", tmp);
    ck_assert_int_eq(sim_rundir_check_within(path, SIM_RUNDIR_ANY, &err), SIM_ESCENARIO);
    snprintf(path, sizeof(path), "%s/new/./b", tmp);
    ck_assert_int_eq(sim_rundir_check_within(path, SIM_RUNDIR_ANY, &err), SIM_OK);
    /* An empty name (`run -o ""` made ".partial" and failed at its end with exit 1). */
    ck_assert_int_eq(sim_rundir_begin("", &rd, &err), SIM_ESCENARIO);
    ck_assert_str_eq(err.msg, "output directory: an empty name");
    ck_assert_int_eq(sim_rundir_check_within("", SIM_RUNDIR_ANY, &err), SIM_ESCENARIO);
    harness_cleanup(tmp);
}
END_TEST

/* A lock file is hetsim's own (issue 38): one that is a symbolic link or a hard link (its pid
 * was written into the file behind it: a golden's golden.json), a directory or a FIFO is
 * refused, nothing written. */
START_TEST(a_lock_file_that_is_no_plain_file_of_its_own_is_refused_untouched)
{
    char *tmp = harness_tmpdir("rundir");
    char victim[512], path[700], dir[600];
    sim_err err;
    snprintf(victim, sizeof(victim), "%s/golden.json", tmp);
    FILE *f = fopen(victim, "w");
    ck_assert_ptr_nonnull(f);
    fputs("{\"seeds\": [3, 5, 11]}\n", f);
    fclose(f);
    const char *kinds[] = { "symlink", "hardlink", "dir", "fifo" };
    for (size_t i = 0; i < 4; i++) {
        snprintf(dir, sizeof(dir), "%s/out-%s", tmp, kinds[i]);
        snprintf(path, sizeof(path), "%s.lock", dir);
        int made = i == 0   ? symlink(victim, path)
                   : i == 1 ? link(victim, path)
                   : i == 2 ? mkdir(path, 0777)
                            : mkfifo(path, 0666);
        ck_assert_int_eq(made, 0);
        sim_rundir *rd = NULL;
        ck_assert_int_eq(sim_rundir_begin(dir, &rd, &err), SIM_ESCENARIO);
        ck_assert_msg(strstr(err.msg, path) != NULL && strstr(err.msg, "remove it") != NULL,
                      "%s: %s", kinds[i], err.msg);
        ck_assert(!exists(dir, "") && !exists(dir, ".partial"));
    }
    /* No output of any command is named like a work directory or a lock (`plot -o
     * RUN.partial` made a folder that refused every later run into RUN). */
    const char *names[] = { "run.partial", "run.lock", "run.partial/" };
    for (size_t i = 0; i < 3; i++) {
        snprintf(dir, sizeof(dir), "%s/%s", tmp, names[i]);
        ck_assert_int_eq(sim_rundir_check_place("output directory", dir, SIM_RUNDIR_ANY,
                                                SIM_RUNDIR_ANY, NULL, &err),
                         SIM_ESCENARIO);
        ck_assert_msg(strstr(err.msg, "names ending in .partial or .lock") != NULL, "%s", err.msg);
    }
    char text[64] = "";
    f = fopen(victim, "r");
    ck_assert_ptr_nonnull(f);
    ck_assert_ptr_nonnull(fgets(text, sizeof(text), f));
    fclose(f);
    ck_assert_str_eq(text, "{\"seeds\": [3, 5, 11]}\n");
    harness_cleanup(tmp);
}
END_TEST

/* An output path is cleaned to the place it names: "." components, repeated and trailing
 * slashes dropped, ".." kept (what it means depends on links). */
START_TEST(a_path_is_cleaned_of_dot_components_and_extra_slashes)
{
    static const char *const cases[][2] = {
        { "runs/a7/.", "runs/a7" },
        { "./runs//a7/./", "runs/a7" },
        { "/.", "/" },
        { "//", "/" },
        { "./", "." },
        { ".", "." },
        { "/tmp/./x", "/tmp/x" },
        { "a/../b/.", "a/../b" },
        { "...", "..." },
        { ".x/.", ".x" },
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char *got = sim_file_clean_path(cases[i][0]);
        ck_assert_ptr_nonnull(got);
        ck_assert_msg(strcmp(got, cases[i][1]) == 0, "%s: %s, not %s", cases[i][0], got,
                      cases[i][1]);
        free(got);
    }
}
END_TEST

/* A file read as a regular one is told so from its open descriptor, opened without waiting:
 * a FIFO no process writes is refused at once (a stat then an fopen() let one swapped in
 * between wait for a writer forever: the LIBSVM loader, the training data's hash and a
 * golden's file hash each did), and so is a directory; a missing file says why. */
START_TEST(a_file_opened_as_regular_never_waits_on_a_fifo)
{
    char *dir = harness_tmpdir("rundir");
    char fifo[600], sub[600], file[600], none[600];
    snprintf(fifo, sizeof(fifo), "%s/fifo", dir);
    snprintf(sub, sizeof(sub), "%s/sub", dir);
    snprintf(none, sizeof(none), "%s/none", dir);
    snprintf(file, sizeof(file), "%s/f", dir);
    ck_assert_int_eq(mkfifo(fifo, 0600), 0);
    ck_assert_int_eq(mkdir(sub, 0700), 0);
    harness_write(dir, "f", "1 1:0.5\n");
    struct stat st;
    errno = 0;
    ck_assert_ptr_null(sim_file_open_regular(fifo, &st)); /* the test waited forever */
    ck_assert(S_ISFIFO(st.st_mode) && errno == EINVAL);
    ck_assert_ptr_null(sim_file_open_regular(sub, &st));
    ck_assert(S_ISDIR(st.st_mode));
    ck_assert_ptr_null(sim_file_open_regular(none, &st));
    ck_assert(st.st_mode == 0 && errno == ENOENT);
    FILE *f = sim_file_open_regular(file, &st);
    ck_assert_ptr_nonnull(f);
    char line[32];
    ck_assert_ptr_nonnull(fgets(line, sizeof(line), f)); /* read as a blocking stream */
    ck_assert_str_eq(line, "1 1:0.5\n");
    fclose(f);
    harness_cleanup(dir);
}
END_TEST

Suite *test_suite(void)
{
    Suite *s = suite_create("rundir");
    TCase *tc = tcase_create("rundir");
    tcase_add_test(tc, a_second_writer_is_refused_naming_the_directory_and_the_holder);
    tcase_add_test(tc, kinds_are_recognised_and_outputs_inside_them_refused);
    tcase_add_test(tc, a_place_equal_to_an_output_is_refused_unless_it_is_the_commands_own);
    tcase_add_test(tc, a_subdirectory_stops_a_replacement_before_anything_is_removed);
    tcase_add_test(tc, an_empty_work_directory_left_by_a_kill_is_taken_over);
    tcase_add_test(tc, a_missing_folder_then_dotdot_is_refused_before_anything_is_made);
    tcase_add_test(tc, a_lock_file_that_is_no_plain_file_of_its_own_is_refused_untouched);
    tcase_add_test(tc, a_path_is_cleaned_of_dot_components_and_extra_slashes);
    tcase_add_test(tc, a_file_opened_as_regular_never_waits_on_a_fifo);
    tcase_set_timeout(tc, 30);
    suite_add_tcase(s, tc);
    return s;
}
