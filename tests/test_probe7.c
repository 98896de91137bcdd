/* Issue 38's seventh probe: the temporaries and markers a command writes by name (NAME.tmp
 * beside each file it writes, a figure's NAME.tmp, a sweep's marker) replaced by a symbolic
 * link, a hard link, a FIFO or a directory, and a FIFO among the files read to tell what a
 * folder is; a metrics.csv row past its run's end. Every case failed before its fix. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <check.h>

#include "harness.h"

typedef harness_result result;

static const char victim_text[] = "a file of the user's, 7919 bytes of care\n";

/* Puts at `path` what `kind` names: 0 a symbolic link to `victim`, 1 a hard link to it, 2 a
 * FIFO. */
static void plant(const char *path, const char *victim, int kind)
{
    unlink(path);
    if (kind == 0)
        ck_assert_int_eq(symlink(victim, path), 0);
    else if (kind == 1)
        ck_assert_int_eq(link(victim, path), 0);
    else
        ck_assert_int_eq(mkfifo(path, 0666), 0);
}

/* The text of the file `path` (at most size - 1 bytes), "" if it cannot be read. */
static void text_of(const char *path, char *buf, size_t size)
{
    buf[0] = '\0';
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return;
    size_t n = fread(buf, 1, size - 1, f);
    buf[n] = '\0';
    fclose(f);
}

/* Runs `args` (which write into `out`, in `dir`) once, then once for each kind of file planted
 * at out/`tmp` (a temporary the command writes by name): each time the command succeeds, the
 * file DIR/victim keeps its text, and `tmp` is gone (never waited on: a FIFO hung the command
 * before). */
static void never_through(const char *dir, const char *out, const char *tmp,
                          const char *const *args)
{
    char victim[512], path[700], text[256];
    snprintf(victim, sizeof(victim), "%s/victim", dir);
    snprintf(path, sizeof(path), "%s/%s", out, tmp);
    result first = harness_hetsim(args);
    ck_assert_msg(first.status == 0, "%s: exit %d\n%s", out, first.status, first.err);
    for (int kind = 0; kind < 3; kind++) {
        harness_write(dir, "victim", victim_text);
        plant(path, victim, kind);
        result res = harness_hetsim(args);
        ck_assert_msg(res.status == 0, "%s (kind %d): exit %d\n%s", tmp, kind, res.status, res.err);
        text_of(victim, text, sizeof(text));
        ck_assert_msg(strcmp(text, victim_text) == 0, "%s (kind %d): written through", tmp, kind);
        struct stat st;
        ck_assert_msg(lstat(path, &st) != 0, "%s (kind %d) left", tmp, kind);
    }
}

/* A file's temporary NAME.tmp (check.csv's, index.csv's, curves.csv's, a figure's) was opened
 * by its name: a symbolic link or a hard link there had the file written into the user's file
 * it named (a figure became a link to it), a FIFO hung the command for ever. Each temporary is
 * made afresh now, whatever held its name (a name only: nothing behind it is touched). */
START_TEST(a_temporary_replaced_by_a_link_or_a_fifo_is_never_written_through)
{
    char *dir = harness_tmpdir("probe7");
    char s[512], sw[512], g[512], co[512], r[512], figs[512];
    harness_run_in(dir, harness_quick_json, s, r, sizeof(s));
    harness_golden_in(dir, NULL, s, g, sizeof(s));
    harness_write(dir, "sw.json",
                  "{\"base\": \"s.json\", \"grid\": {\"workers\": [2, 3]}, \"seeds\": 1}\n");
    snprintf(sw, sizeof(sw), "%s/sw.json", dir);
    snprintf(co, sizeof(co), "%s/co", dir);
    snprintf(figs, sizeof(figs), "%s/figs", dir);
    const char *sweep[] = { "sweep", sw, "-o", dir, "--quiet", NULL };
    const char *check[] = { "check", s, "--golden", g, "-o", dir, NULL };
    const char *plot[] = { "plot", r, "-o", dir, NULL };
    char sub[600];
    snprintf(sub, sizeof(sub), "%s/sweep", dir);
    sweep[3] = sub;
    never_through(dir, sub, "index.csv.tmp", sweep);
    never_through(dir, sub, "curves.csv.tmp", sweep);
    check[5] = co;
    never_through(dir, co, "check.csv.tmp", check);
    never_through(dir, co, "check.png.tmp", check);
    plot[3] = figs;
    never_through(dir, figs, "convergence.png.tmp", plot);
    harness_cleanup(dir);
}
END_TEST

/* A sweep's marker replaced by a FIFO hung the sweep (its open waited for a writer), and a
 * dangling symbolic link had the sweep make the file it names, outside the sweep. A FIFO named
 * `seeds` in a folder above a run's -o hung the run: telling whether the folder is a golden
 * opened it. Now the marker is made only as a file of its own and `seeds` read only if it is a
 * regular file. */
START_TEST(a_marker_or_a_seeds_file_that_is_a_fifo_or_a_link_is_never_opened)
{
    char *dir = harness_tmpdir("probe7");
    char sw[512], out[512], mark[600], outside[512], d[512], fifo[600], r[600];
    harness_sweep_in(dir, harness_quick_json,
                     "{\"base\": \"s.json\", \"grid\": {\"workers\": [2, 3]}, \"seeds\": 1}\n", sw,
                     out, sizeof(sw));
    snprintf(mark, sizeof(mark), "%s/.hetsim-sweep", out);
    snprintf(outside, sizeof(outside), "%s/outside", dir);
    const char *sweep[] = { "sweep", sw, "-o", out, "--quiet", NULL };
    ck_assert_int_eq(unlink(mark), 0);
    ck_assert_int_eq(mkfifo(mark, 0666), 0);
    result res = harness_hetsim(sweep);
    ck_assert_msg(res.status == 2, "a FIFO marker: exit %d\n%s", res.status, res.err);
    ck_assert_msg(strstr(res.err, ".hetsim-sweep") != NULL, "%s", res.err);
    ck_assert_int_eq(unlink(mark), 0);
    ck_assert_int_eq(symlink("../outside", mark), 0);
    res = harness_hetsim(sweep);
    ck_assert_msg(res.status == 2, "a linked marker: exit %d\n%s", res.status, res.err);
    ck_assert_msg(access(outside, F_OK) != 0, "the marker made %s", outside);
    snprintf(d, sizeof(d), "%s/d", dir);
    snprintf(fifo, sizeof(fifo), "%s/seeds", d);
    snprintf(r, sizeof(r), "%s/r", d);
    ck_assert_int_eq(mkdir(d, 0777), 0);
    ck_assert_int_eq(mkfifo(fifo, 0666), 0);
    char s[512];
    snprintf(s, sizeof(s), "%s/s.json", dir);
    res = harness_hetsim((const char *[]){ "run", s, "-o", r, "--quiet", NULL });
    ck_assert_msg(res.status == 0, "run below a FIFO seeds: exit %d\n%s", res.status, res.err);
    harness_cleanup(dir);
}
END_TEST

/* A second process that puts a symbolic link at a figure's temporary while gnuplot draws it
 * (here a gnuplot that does so itself, then draws): gnuplot opened the temporary by its name,
 * so the figure went through the link into the user's file, exit 0 or 1. gnuplot now draws
 * into the temporary hetsim opened (/dev/fd/3): the user's file keeps its text, and the figure,
 * its temporary replaced, fails (exit 1) naming it. */
START_TEST(a_figure_temporary_replaced_while_gnuplot_draws_is_never_written_through)
{
    char *dir = harness_tmpdir("probe7");
    char s[512], r[512], figs[512], victim[512], body[2048], text[256];
    harness_write(dir, "victim", victim_text);
    harness_run_in(dir, harness_quick_json, s, r, sizeof(s));
    snprintf(figs, sizeof(figs), "%s/figs", dir);
    snprintf(victim, sizeof(victim), "%s/victim", dir);
    snprintf(body, sizeof(body),
             "#!/bin/sh\nread -r vars\ncat >/dev/null\n"
             "out=$(printf '%%s' \"$vars\" | sed -n \"s/.*out='\\([^']*\\)'.*/\\1/p\")\n"
             "ln -sfn '%s' '%s/convergence.png.tmp'\necho drawn > \"$out\"\n",
             victim, figs);
    harness_write(dir, "gnuplot", body);
    char gp[600], path[4096];
    snprintf(gp, sizeof(gp), "%s/gnuplot", dir);
    ck_assert_int_eq(chmod(gp, 0755), 0);
    const char *old = getenv("PATH");
    snprintf(path, sizeof(path), "%s:%s", dir, old != NULL ? old : "");
    ck_assert_int_eq(setenv("PATH", path, 1), 0);
    result res = harness_hetsim((const char *[]){ "plot", r, "-o", figs, NULL });
    text_of(victim, text, sizeof(text));
    ck_assert_msg(strcmp(text, victim_text) == 0, "written through the link (exit %d)", res.status);
    ck_assert_msg(res.status == 1, "exit %d\n%s", res.status, res.err);
    ck_assert_msg(strstr(res.err, "was replaced while drawn") != NULL, "%s", res.err);
    harness_cleanup(dir);
}
END_TEST

/* A row appended to a run's metrics.csv past its end (at 99 s to a 0.2 s run, its counts
 * kept) was read as the run's by plot and plot --by (and report, reading the curves), exit 0.
 * Each refuses it, naming the file, the line and the run's end; nothing is written. */
START_TEST(a_metrics_row_past_the_runs_end_is_refused)
{
    char *dir = harness_tmpdir("probe7");
    char s[512], out[512], point[640], figs[512];
    harness_sweep_in(dir, harness_quick_json,
                     "{\"base\": \"s.json\", \"grid\": {\"workers\": [2, 3]}, \"seeds\": 1}\n", s,
                     out, sizeof(s));
    snprintf(figs, sizeof(figs), "%s/figs", dir);
    snprintf(point, sizeof(point), "%s/workers=3,seed=5", out);
    char *metrics = harness_slurp(point, "metrics.csv");
    char *last = strrchr(metrics, '\n'); /* the file ends with one: the last row before it */
    *last = '\0';
    last = strrchr(metrics, '\n');
    char row[512];
    snprintf(row, sizeof(row), "99%s\n", strchr(last + 1, ','));
    char *text = malloc(strlen(metrics) + strlen(row) + 2);
    ck_assert_ptr_nonnull(text);
    sprintf(text, "%s\n%s", metrics, row);
    harness_write(point, "metrics.csv", text);
    const char *const cmds[][6] = {
        { "plot", point, "-o", figs, NULL },
        { "plot", out, "--by", "workers", "-o", figs },
    };
    for (size_t i = 0; i < 2; i++) {
        const char *argv[8] = { 0 };
        for (size_t k = 0; k < 6 && cmds[i][k] != NULL; k++)
            argv[k] = cmds[i][k];
        result res = harness_hetsim(argv);
        ck_assert_msg(res.status == 2, "%s: exit %d\n%s", cmds[i][0], res.status, res.err);
        ck_assert_msg(strstr(res.err, "metrics.csv: line 7: time_s 99 is past the run's end, "
                                      "sim_time_s 0.2 in ") != NULL,
                      "%s: %s", cmds[i][0], res.err);
        ck_assert(!harness_exists(figs));
    }
    free(text);
    free(metrics);
    harness_cleanup(dir);
}
END_TEST

Suite *test_suite(void)
{
    Suite *s = suite_create("probe7");
    TCase *places = tcase_create("places");
    tcase_add_test(places, a_temporary_replaced_by_a_link_or_a_fifo_is_never_written_through);
    tcase_add_test(places, a_marker_or_a_seeds_file_that_is_a_fifo_or_a_link_is_never_opened);
    tcase_add_test(places,
                   a_figure_temporary_replaced_while_gnuplot_draws_is_never_written_through);
    tcase_add_test(places, a_metrics_row_past_the_runs_end_is_refused);
    tcase_set_timeout(places, 120);
    suite_add_tcase(s, places);
    return s;
}
