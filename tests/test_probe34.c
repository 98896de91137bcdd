/* Issue 38, the fifteenth probe (classes 1-6 and the admission deadlock, probe38ad): what it
 * found. Each case failed before its fix.
 */
#define _XOPEN_SOURCE 700 /* realpath */
#include <dirent.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <check.h>

#include "harness.h"
#include "models/data.h"

typedef harness_result result;

/* A plot's folder of figures (`plot RUN -o P`, marked by its .hetsim-plot) was no hetsim output
 * to the ownership rule: `check --junit P/convergence.png` replaced the plot's figure with the
 * XML report (and `--junit P/.hetsim-plot` its mark), exit 0, and `check -o P` wrote its
 * check.csv and seed runs into the folder, exit 0, after which every `plot RUN -o P` was
 * refused ("P is a hetsim check directory that this command does not own"). Each is refused,
 * exit 2, the folder unchanged, and the plot draws into it again. */
START_TEST(a_plots_folder_is_no_place_for_a_checks_report_or_output)
{
    char *dir = harness_tmpdir("probe34");
    char s[600], r[600], g[600], p[700], junit[800], co[700];
    harness_golden_in(dir, harness_quick_json, s, g, sizeof(s));
    harness_run_in(dir, NULL, s, r, sizeof(s));
    snprintf(p, sizeof(p), "%s/p", dir);
    snprintf(co, sizeof(co), "%s/co", dir);
    result res = harness_hetsim((const char *[]){ "plot", r, "-o", p, NULL });
    ck_assert_msg(res.status == 0, "plot: exit %d\n%.300s", res.status, res.err);
    char before[8192], after[8192];
    harness_tree_digest(p, before, sizeof(before));
    static const char *const names[] = { "convergence.png", ".hetsim-plot", "report.xml" };
    for (size_t c = 0; c < 4; c++) {
        snprintf(junit, sizeof(junit), "%s/%s", p, names[c < 3 ? c : 0]);
        res = c < 3 ? harness_hetsim((const char *[]){ "check", s, "--golden", g, "--junit", junit,
                                                       "-o", co, NULL })
                    : harness_hetsim((const char *[]){ "check", s, "--golden", g, "-o", p, NULL });
        ck_assert_msg(res.status == 2, "case %zu: exit %d\n%.300s", c, res.status, res.err);
        ck_assert_msg(strstr(res.err, "a hetsim plot directory") != NULL, "case %zu: %.300s", c,
                      res.err);
        harness_tree_digest(p, after, sizeof(after));
        ck_assert_msg(strcmp(before, after) == 0, "case %zu changed the plot's folder", c);
    }
    res = harness_hetsim((const char *[]){ "plot", r, "-o", p, NULL });
    ck_assert_msg(res.status == 0, "plot again: exit %d\n%.300s", res.status, res.err);
    harness_cleanup(dir);
}
END_TEST

/* `check -o X` took in the hetsim outputs X held: with a golden X/g, a run X/sub/r or a plot's
 * folder X/p, the check ran and wrote X's check.csv, exit 0, and every later command into them
 * was refused as "inside ... a hetsim check directory" (`check --update --golden X/g`, `run -o
 * X/sub/r`, `plot RUN -o X/p`), exit 2: each was wedged. The check is refused, exit 2, X
 * unchanged, and each output is written again. */
START_TEST(a_checks_output_holding_another_hetsim_output_is_refused)
{
    char *dir = harness_tmpdir("probe34");
    char s[600], r[600], g[600], x[700], in[800], co[700];
    harness_golden_in(dir, harness_quick_json, s, g, sizeof(s));
    harness_run_in(dir, NULL, s, r, sizeof(s));
    for (size_t c = 0; c < 3; c++) {
        snprintf(x, sizeof(x), "%s/x%zu", dir, c);
        ck_assert_int_eq(mkdir(x, 0777), 0);
        snprintf(in, sizeof(in), "%s/%s", x, c == 0 ? "g" : c == 1 ? "sub/r" : "p");
        const char *const *make[] = {
            (const char *[]){ "check", s, "--golden", in, "--update", "--seeds", "3", NULL },
            (const char *[]){ "run", s, "-o", in, "--quiet", NULL },
            (const char *[]){ "plot", r, "-o", in, NULL },
        };
        result res = harness_hetsim(make[c]);
        ck_assert_msg(res.status == 0, "case %zu: making: exit %d\n%.300s", c, res.status, res.err);
        char before[8192], after[8192];
        harness_tree_digest(x, before, sizeof(before));
        res = harness_hetsim((const char *[]){ "check", s, "--golden", g, "-o", x, NULL });
        ck_assert_msg(res.status == 2, "case %zu: exit %d\n%.300s", c, res.status, res.err);
        ck_assert_msg(strstr(res.err, "a check's output would take it in") != NULL,
                      "case %zu: %.300s", c, res.err);
        harness_tree_digest(x, after, sizeof(after));
        ck_assert_msg(strcmp(before, after) == 0, "case %zu: the check changed %s", c, x);
        res = harness_hetsim(make[c]);
        ck_assert_msg(res.status == 0, "case %zu: again: exit %d\n%.300s", c, res.status, res.err);
    }
    snprintf(co, sizeof(co), "%s/co", dir); /* a check's output: its seed runs are its own */
    for (int i = 0; i < 2; i++) {
        result res = harness_hetsim((const char *[]){ "check", s, "--golden", g, "-o", co, NULL });
        ck_assert_msg(res.status == 0, "check -o co #%d: exit %d\n%.300s", i, res.status, res.err);
    }
    harness_cleanup(dir);
}
END_TEST

/* `check --junit /dev/stdout` (or /dev/stderr) with the command's output redirected to a
 * regular file, as a CI job's log is: the report was a regular file behind a link and replaced
 * it (a temporary renamed over it), so the file held the XML alone and the check's own lines
 * ("s.json: ok against ...", its warnings) went to the file it had replaced: lost, exit 0. The
 * report is written to the stream, after the check's lines: both are there. */
START_TEST(a_junit_report_to_the_commands_own_output_keeps_its_lines)
{
    char *dir = harness_tmpdir("probe34");
    char s[600], g[600], co[700];
    harness_golden_in(dir, harness_quick_json, s, g, sizeof(s));
    snprintf(co, sizeof(co), "%s/co", dir);
    static const char *const dev[] = { "/dev/stdout", "/dev/stderr", "/dev/fd/1" };
    for (size_t c = 0; c < 3; c++) {
        result res = harness_hetsim((const char *[]){ "check", s, "--golden", g, "--junit", dev[c],
                                                      "--seeds", "3", "-o", co, NULL });
        ck_assert_msg(res.status == 0, "%s: exit %d\n%.300s", dev[c], res.status, res.err);
        const char *text = c == 1 ? res.err : res.out;
        ck_assert_msg(strstr(res.out, ": ok against ") != NULL &&
                          strstr(text, "<testsuites name=\"hetsim check\">") != NULL &&
                          strstr(text, "</testsuites>") != NULL,
                      "%s: output %.600s\nerror %.600s", dev[c], res.out, res.err);
    }
    harness_cleanup(dir);
}
END_TEST

/* `check --junit LINK`, LINK a symbolic link to "new/" (or "new/.", or a link to such a link)
 * where nothing is yet: a name ending in '/' is refused as naming a directory, but through the
 * link the report was written as a regular file named "new", exit 0. It is refused, exit 2,
 * before the check runs, and nothing is made. */
START_TEST(a_junit_link_to_a_directorys_name_is_refused)
{
    char *dir = harness_tmpdir("probe34");
    char s[600], g[600], co[700], link[700], link2[700], made[700];
    harness_golden_in(dir, harness_quick_json, s, g, sizeof(s));
    snprintf(co, sizeof(co), "%s/co", dir);
    snprintf(link, sizeof(link), "%s/j", dir);
    snprintf(link2, sizeof(link2), "%s/j2", dir);
    snprintf(made, sizeof(made), "%s/new", dir);
    static const char *const targets[] = { "new/", "new/.", "sub/../new/" };
    for (size_t c = 0; c < 4; c++) {
        unlink(link);
        unlink(link2);
        ck_assert_int_eq(symlink(targets[c < 3 ? c : 0], link), 0);
        ck_assert_int_eq(symlink("j", link2), 0);
        result res = harness_hetsim((const char *[]){ "check", s, "--golden", g, "--junit",
                                                      c < 3 ? link : link2, "-o", co, NULL });
        ck_assert_msg(res.status == 2, "case %zu: exit %d\n%.300s", c, res.status, res.err);
        ck_assert_msg(strstr(res.err, "which names a directory") != NULL, "case %zu: %.300s", c,
                      res.err);
        ck_assert_msg(!harness_exists(made) && !harness_exists(co), "case %zu: made %s", c, made);
    }
    harness_cleanup(dir);
}
END_TEST

/* What the editor thread of the LIBSVM test below needs: the file, and whether it edited it
 * during the load's first pass. */
typedef struct svm_edit {
    const char *path;
    atomic_bool done; /* the load returned */
    bool edited;      /* line 1 edited while the first pass read on */
} svm_edit;

/* The offset of this process's descriptor open on `path` (/proc/self/fdinfo), or -1. */
static long long read_offset(const char *path)
{
    DIR *d = opendir("/proc/self/fd");
    long long pos = -1;
    char link[700], target[700], info[700], text[256];
    for (struct dirent *e = d != NULL ? readdir(d) : NULL; e != NULL && pos < 0; e = readdir(d)) {
        snprintf(link, sizeof(link), "/proc/self/fd/%s", e->d_name);
        ssize_t n = readlink(link, target, sizeof(target) - 1);
        if (n <= 0)
            continue;
        target[n] = '\0';
        if (strcmp(target, path) != 0)
            continue;
        snprintf(info, sizeof(info), "/proc/self/fdinfo/%s", e->d_name);
        harness_read_into(info, text, sizeof(text));
        if (sscanf(text, "pos: %lld", &pos) != 1)
            pos = -1;
    }
    if (d != NULL)
        closedir(d);
    return pos;
}

/* Edits the first line's first value in place (same length) once the load's first pass has
 * read past it (its offset past 1 MiB, before the middle, having grown from the start), unless
 * the load has returned or the second pass has begun. */
static void *edit_first_line(void *arg)
{
    svm_edit *e = arg;
    struct stat st;
    if (stat(e->path, &st) != 0)
        return NULL;
    long long seen = -1; /* the largest offset seen: it only grows in the first pass */
    while (!atomic_load(&e->done)) {
        long long pos = read_offset(e->path);
        if (pos < 0)
            continue;
        if ((seen < 0 && pos > (1LL << 20)) || pos < seen)
            return NULL; /* not seen from the first pass's start, or the second pass began */
        seen = pos;
        if (pos > (1LL << 20) && pos < (long long)st.st_size / 2) {
            FILE *f = fopen(e->path, "r+b");
            if (f != NULL && fseek(f, 4, SEEK_SET) == 0 && fputc('9', f) != EOF)
                e->edited = true;
            if (f != NULL)
                fclose(f);
            return NULL;
        }
        nanosleep(&(struct timespec){ .tv_nsec = 20000 }, NULL);
    }
    return NULL;
}

/* LIBSVM data is read in two passes, the first hashing the bytes (the hash that every later
 * load of the run is held to) and sizing the set, the second parsing the examples: a line edited
 * in place after the first pass had read it was taken into the data by the second, silently
 * (an edit of the first value of line 1 while the first pass read on: SIM_OK, the run's data
 * no longer the bytes its hash says; `hetsim run` exited 0). The second pass hashes the lines it
 * parses and fails as the first pass's count does: "file changed while being read". The edit
 * races the first pass (a 6 MB file read in about 0.1 s, the offset polled every 20 us): a load
 * the edit missed is tried again, up to 5 times. */
START_TEST(libsvm_data_edited_between_its_two_passes_is_named)
{
    char *dir = harness_tmpdir("probe34");
    char path[700];
    snprintf(path, sizeof(path), "%s/d.svm", dir);
    char *real = realpath(dir, NULL);
    ck_assert(real != NULL);
    snprintf(path, sizeof(path), "%s/d.svm", real);
    free(real);
    bool raced = false;
    for (int attempt = 0; attempt < 5 && !raced; attempt++) {
        FILE *f = fopen(path, "w");
        ck_assert(f != NULL);
        for (int i = 0; i < 60000; i++)
            fprintf(f, "%d 1:0.%06d 2:0.%06d 3:0.%06d 4:0.%06d 5:0.%06d 6:0.%06d\n",
                    i % 2 == 0 ? 1 : -1, i, (i * 7) % 1000000, (i * 13) % 1000000,
                    (i * 17) % 1000000, (i * 19) % 1000000, (i * 23) % 1000000);
        ck_assert_int_eq(fclose(f), 0);
        svm_edit e = { .path = path };
        atomic_init(&e.done, false);
        pthread_t t;
        ck_assert_int_eq(pthread_create(&t, NULL, edit_first_line, &e), 0);
        data_set ds;
        sim_err err;
        sim_err_clear(&err);
        int rc = data_load_libsvm(path, 100, 0, &ds, &err);
        atomic_store(&e.done, true);
        pthread_join(t, NULL);
        if (rc == SIM_OK)
            data_fini(&ds);
        if (!e.edited)
            continue; /* the first pass ended before the edit: try again */
        raced = true;
        ck_assert_msg(rc == SIM_EIO && strstr(err.msg, "file changed while being read") != NULL,
                      "load of data edited between its passes: %d %s", rc, err.msg);
    }
    ck_assert_msg(raced, "no edit came during the first pass in 5 attempts");
    harness_cleanup(dir);
}
END_TEST

Suite *test_suite(void)
{
    Suite *s = suite_create("probe34");
    TCase *tc = tcase_create("probe34");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, a_plots_folder_is_no_place_for_a_checks_report_or_output);
    tcase_add_test(tc, a_checks_output_holding_another_hetsim_output_is_refused);
    tcase_add_test(tc, a_junit_report_to_the_commands_own_output_keeps_its_lines);
    tcase_add_test(tc, a_junit_link_to_a_directorys_name_is_refused);
    tcase_add_test(tc, libsvm_data_edited_between_its_two_passes_is_named);
    suite_add_tcase(s, tc);
    return s;
}
