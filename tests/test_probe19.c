/* Issue 38's eleventh probe, classes 1-6 and the admission deadlock (probe38r): an output
 * whose path runs through a symbolic link to a place not made yet; a plot key holding '/' from
 * a damaged index.csv; a metrics.csv without its last rows; a run replaced while plot draws
 * it. Every case failed before its fix.
 */
#define _GNU_SOURCE /* renameat2 and RENAME_EXCHANGE */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <check.h>

#include "harness.h"

typedef harness_result result;

/* A folder of an output's path that is a symbolic link to nothing yet went unseen by the
 * checks: the nearest existing ancestor of "ext/LINK/x" is "ext", and the link's target was
 * made (sim_output_mkdirs) only when the command wrote. `run -o ext/LINK/x` with LINK ->
 * ../g/new wrote a run into the golden g, exit 0, and so did sweep -o, check -o, plot -o and
 * check --update (a golden written inside the golden); a target "new/../../g" (".." after a
 * folder not made yet, refused when the path itself has it) made "new" and wrote there too;
 * `check --junit ext/LINK/j.xml` ran the check, wrote its output, then failed, exit 1
 * ("cannot write ext/LINK/j.xml.tmp"). Each link is followed as an output's own link is:
 * refused, exit 2, nothing changed. */
START_TEST(an_output_through_a_link_to_a_place_not_made_yet_is_checked_there)
{
    /* A sweep's directory takes a check's output and a plot's figures in a folder of their
     * own (docs/usage.md): the third link is tried with run, sweep and update alone. */
    static const char *const links[][2] = {
        { "ng", "../g/new" },         /* into the golden */
        { "nr", "../r/new" },         /* into a run */
        { "nw", "../o/new" },         /* into a sweep's directory */
        { "nd", "new/../../g" },      /* ".." after a folder not made yet */
        { "n2", "ng" },               /* a link to the first */
        { "nn", "../ext/ng/deeper" }, /* through the first, deeper */
    };
    char *dir = harness_tmpdir("probe19");
    char s[600], g[600], r[600], sw[600], o[600], out[700], x[700], path[700], co[700];
    char before[4096], after[4096];
    harness_golden_in(dir, harness_quick_json, s, g, sizeof(s));
    harness_run_in(dir, NULL, s, r, sizeof(s));
    harness_sweep_in(dir, NULL, "{\"base\": \"s.json\", \"grid\": {\"workers\": [2, 3]}}", sw, o,
                     sizeof(s));
    snprintf(path, sizeof(path), "%s/ext", dir);
    ck_assert_int_eq(mkdir(path, 0777), 0);
    for (size_t l = 0; l < sizeof(links) / sizeof(links[0]); l++) {
        snprintf(path, sizeof(path), "%s/ext/%s", dir, links[l][0]);
        ck_assert_int_eq(symlink(links[l][1], path), 0);
    }
    for (size_t l = 0; l < sizeof(links) / sizeof(links[0]); l++) {
        snprintf(out, sizeof(out), "%s/ext/%s/x", dir, links[l][0]);
        snprintf(x, sizeof(x), "%s/ext/%s/j.xml", dir, links[l][0]);
        snprintf(co, sizeof(co), "%s/co", dir);
        const char *const cmds[][12] = {
            { "run", s, "-o", out, "--quiet", NULL },
            { "sweep", sw, "-o", out, "--quiet", NULL },
            { "check", s, "--golden", g, "-o", out, NULL },
            { "plot", r, "-o", out, NULL },
            { "check", s, "--golden", out, "--update", "--seeds", "3", NULL },
            { "check", s, "--golden", g, "--junit", x, "-o", co, NULL },
        };
        for (size_t c = 0; c < sizeof(cmds) / sizeof(cmds[0]); c++) {
            if (l == 2 && (c == 2 || c == 3))
                continue;
            harness_tree_digest(dir, before, sizeof(before));
            result res = harness_hetsim(cmds[c]);
            harness_tree_digest(dir, after, sizeof(after));
            ck_assert_msg(res.status == 2, "link %s, %s: exit %d\n%s", links[l][0], cmds[c][0],
                          res.status, res.err);
            ck_assert_msg(strcmp(before, after) == 0, "link %s, %s: the tree changed", links[l][0],
                          cmds[c][0]);
        }
    }
    /* A link to a plain place not made yet is still followed and made (docs/usage.md). */
    snprintf(path, sizeof(path), "%s/ext/ok", dir);
    ck_assert_int_eq(symlink("../elsewhere/new", path), 0);
    snprintf(out, sizeof(out), "%s/ext/ok/x", dir);
    result res = harness_hetsim((const char *[]){ "run", s, "-o", out, "--quiet", NULL });
    ck_assert_msg(res.status == 0, "exit %d\n%s", res.status, res.err);
    snprintf(x, sizeof(x), "%s/elsewhere/new/x/run.json", dir);
    ck_assert(harness_exists(x));
    harness_cleanup(dir);
}
END_TEST

/* plot --by names its figures and CSVs after the key (by-KEY.png, breakdown-by-KEY.csv), and
 * took a key from an index.csv column as it is: a damaged index.csv whose column is
 * "a/../../g/seed-5/metrics", with a folder breakdown-by-a in the sweep, had `plot --by
 * a/../../g/seed-5/metrics` replace the golden's metrics.csv with its bar chart's CSV, exit 0
 * (every later check of the golden: "does not match its fingerprint"). A key holding '/' is
 * refused, exit 2, nothing changed. */
START_TEST(a_plot_key_holding_a_slash_is_refused)
{
    char *dir = harness_tmpdir("probe19");
    char s[600], g[600], sw[600], o[600], path[700], before[4096], after[4096];
    harness_golden_in(dir, harness_quick_json, s, g, sizeof(s));
    harness_sweep_in(dir, NULL, "{\"base\": \"s.json\", \"grid\": {\"workers\": [2, 3]}}", sw, o,
                     sizeof(s));
    snprintf(path, sizeof(path), "%s/index.csv", o);
    char *index = harness_read(path, NULL);
    char *col = strstr(index, ",workers,");
    ck_assert(col != NULL);
    *col = '\0';
    char forged[4096];
    snprintf(forged, sizeof(forged), "%s,a/../../g/seed-5/metrics,%s", index,
             col + strlen(",workers,"));
    free(index);
    harness_write(o, "index.csv", forged);
    snprintf(path, sizeof(path), "%s/breakdown-by-a", o);
    ck_assert_int_eq(mkdir(path, 0777), 0);
    harness_tree_digest(dir, before, sizeof(before));
    result res =
        harness_hetsim((const char *[]){ "plot", o, "--by", "a/../../g/seed-5/metrics", NULL });
    harness_tree_digest(dir, after, sizeof(after));
    ck_assert_msg(res.status == 2, "exit %d\n%s", res.status, res.err);
    ck_assert_msg(strstr(res.err, "holds '/'") != NULL, "%s", res.err);
    ck_assert_msg(strcmp(before, after) == 0, "the tree changed");
    harness_cleanup(dir);
}
END_TEST

/* A run evaluates at its end whatever stopped it, so its metrics.csv's last row is at
 * summary.json's sim_time_s; a metrics.csv cut at a row's end (as a reader sees one rewritten
 * in place, or cut short by hand) was read as a shorter run: report --target read a time to
 * target as "not reached" (reached 1 of 2, censored after 0.05 s) and plot drew the shorter
 * curve, exit 0. report, plot --by and plot RUN refuse it, exit 2, naming the file and its
 * last line. */
START_TEST(a_metrics_file_without_its_last_rows_is_refused)
{
    char *dir = harness_tmpdir("probe19");
    char sw[600], o[600], point[700], path[800];
    harness_sweep_in(dir, harness_quick_json,
                     "{\"base\": \"s.json\", \"grid\": {\"workers\": [2, 3]}}", sw, o, sizeof(sw));
    snprintf(point, sizeof(point), "%s/workers=2,seed=5", o);
    snprintf(path, sizeof(path), "%s/metrics.csv", point);
    char *text = harness_read(path, NULL);
    char *cut = text;
    for (int line = 0; line < 3 && cut != NULL; line++) /* the header and two rows of five */
        cut = strchr(cut, '\n') != NULL ? strchr(cut, '\n') + 1 : NULL;
    ck_assert(cut != NULL && *cut != '\0');
    *cut = '\0';
    harness_write(point, "metrics.csv", text);
    free(text);
    snprintf(path, sizeof(path), "%s/p", dir);
    const char *const cmds[][8] = {
        { "report", o, "--by", "workers", NULL },
        { "plot", o, "--by", "workers", NULL },
        { "plot", point, "-o", path, NULL },
    };
    for (size_t c = 0; c < sizeof(cmds) / sizeof(cmds[0]); c++) {
        result res = harness_hetsim(cmds[c]);
        ck_assert_msg(res.status == 2, "%s: exit %d\n%s", cmds[c][0], res.status, res.err);
        ck_assert_msg(strstr(res.err, "metrics.csv: line 3: the last row, at time_s 0.05, "
                                      "is before the run's end") != NULL,
                      "%s: %s", cmds[c][0], res.err);
    }
    harness_cleanup(dir);
}
END_TEST

/* The run directories exchanged by a change (renameat2 RENAME_EXCHANGE, as `hetsim run -o r`
 * replaces a run), and the plot's output `out`. */
typedef struct run_swap {
    const char *other, *r, *out;
} run_swap;

static int swap_runs(void *arg)
{
    const run_swap *w = arg;
    return renameat2(AT_FDCWD, w->other, AT_FDCWD, w->r, RENAME_EXCHANGE);
}

/* Before another attempt: the runs back in their places, no figure of the last. */
static void swap_back(void *arg, bool changed)
{
    const run_swap *w = arg;
    ck_assert(!changed || swap_runs(arg) == 0);
    harness_cleanup(strdup(w->out));
}

/* plot read a run's files by their paths, and gnuplot read metrics.csv and workers.csv again
 * when it drew: a run replaced meanwhile (`hetsim run -o RR` again) gave figures that mixed
 * two runs, exit 0: one run's name and axes with the other's bars (a loop of runs of 3 and 5
 * workers into RR beside 60 `plot RR`: 5 figures of neither run), or convergence.png of the
 * first and breakdown.png of the second. A run replaced while it is drawn is drawn again
 * (and a run drawn into itself is locked before it is read): here the run of 5 workers is
 * swapped in once the first figure is being drawn, and every figure is that run's, as
 * `plot` of it alone draws them. */
START_TEST(a_run_replaced_while_it_is_drawn_is_drawn_whole)
{
    static const char *const names[] = { "convergence.png", "throughput.png", "breakdown.png" };
    char *dir = harness_tmpdir("probe19");
    char s[600], r[600], b[600], pb[600], p[600], marker[700], x[800];
    harness_run_in(dir, harness_quick_json, s, r, sizeof(s));
    snprintf(b, sizeof(b), "%s/b", dir);
    snprintf(pb, sizeof(pb), "%s/pb", dir);
    snprintf(p, sizeof(p), "%s/p", dir);
    result res = harness_hetsim((const char *[]){ "run", s, "--set", "workers=5", "--set",
                                                  "stop.time_s=2", "-o", b, "--quiet", NULL });
    ck_assert_msg(res.status == 0, "%s", res.err);
    res = harness_hetsim((const char *[]){ "plot", b, "-o", pb, NULL });
    ck_assert_msg(res.status == 0, "%s", res.err);
    snprintf(marker, sizeof(marker), "%s/convergence.png.tmp", p);
    /* The swap counts while the first figure is being drawn. */
    run_swap w = { b, r, p };
    harness_race race = { .marker = marker, .change = swap_runs, .again = swap_back, .arg = &w };
    res = harness_hetsim_racing((const char *[]){ "plot", r, "-o", p, NULL }, &race);
    ck_assert_msg(res.status == 0, "exit %d\n%s", res.status, res.err);
    for (size_t k = 0; k < sizeof(names) / sizeof(names[0]); k++) {
        size_t na = 0, nb = 0;
        snprintf(x, sizeof(x), "%s/%s", p, names[k]);
        char *drawn = harness_read(x, &na);
        snprintf(x, sizeof(x), "%s/%s", pb, names[k]);
        char *want = harness_read(x, &nb);
        ck_assert_msg(na == nb && memcmp(drawn, want, na) == 0,
                      "%s is not the figure of the run swapped in", names[k]);
        free(drawn);
        free(want);
    }
    harness_cleanup(dir);
}
END_TEST

Suite *test_suite(void)
{
    Suite *s = suite_create("probe19");
    TCase *places = tcase_create("places");
    tcase_add_test(places, an_output_through_a_link_to_a_place_not_made_yet_is_checked_there);
    tcase_add_test(places, a_plot_key_holding_a_slash_is_refused);
    tcase_set_timeout(places, 120);
    suite_add_tcase(s, places);
    TCase *reads = tcase_create("reads");
    tcase_add_test(reads, a_metrics_file_without_its_last_rows_is_refused);
    tcase_add_test(reads, a_run_replaced_while_it_is_drawn_is_drawn_whole);
    tcase_set_timeout(reads, 120);
    suite_add_tcase(s, reads);
    return s;
}
