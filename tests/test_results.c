/* Results files read back as data, through the built binary ($HETSIM): `hetsim report`,
 * `hetsim plot SWEEP_DIR --by` and `hetsim plot RUN` on a sweep written here by hand (issue
 * 38): a damaged file (a number that is not finite or out of its range, a file cut mid-row, a
 * row repeated) is refused with exit 2 naming the file and line, nothing written; a removed
 * run directory says to run it again. The reader itself (outputs/csv.h) is tested directly on
 * the forms it refuses. */
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <check.h>

#include "harness.h"
#include "outputs/csv.h"
#include "outputs/output.h"

static const char metrics_head[] = "time_s,iterations,samples,epoch,train_loss,test_loss,"
                                   "test_accuracy,consensus,throughput_sps\n";
static const char workers_head[] = "worker,speed,iterations,samples,compute_s,comm_s,wait_s,"
                                   "bytes_sent,bytes_received,down_s,comm_overlap_s,params_fnv\n";
static const char index_head[] = "point,dir,proto,seed,stop_reason,sim_time_s,final_accuracy,"
                                 "best_accuracy,time_to_target_s,mean_throughput_sps,wall_s\n";

/* Run directory `name` under `sweep`: three evaluations reaching `acc` at 2 s, two workers
 * (compute 1.25 s, comm 0.5 s, wait `wait` s each), the stop target 0.7. */
static void fake_run(const char *sweep, const char *name, double acc, double wait)
{
    char dir[1100], text[2048];
    snprintf(dir, sizeof(dir), "%s/%s", sweep, name);
    ck_assert_int_eq(mkdir(dir, 0777), 0);
    snprintf(text, sizeof(text),
             "%s0,0,0,0,,2.385,0.1,,0\n1,40,1280,0.064,1.9,1.7,0.55,,1280\n"
             "2,80,2560,0.128,1.2,0.9,%.9g,,1280\n",
             metrics_head, acc);
    harness_write(dir, "metrics.csv", text);
    snprintf(text, sizeof(text),
             "%s0,1,40,1280,1.25,0.5,%.9g,51200,51200,0,0.125,9f2c41d07a31b6e5\n"
             "1,1,40,1280,1.25,0.5,%.9g,51200,51200,0,0.125,9f2c41d07a31b6e5\n",
             workers_head, wait, wait);
    harness_write(dir, "workers.csv", text);
    harness_write(dir, "run.json",
                  "{ \"scenario\": { \"stop\": { \"time_s\": 2, \"target_accuracy\": 0.7 } } }\n");
}

/* A sweep of two protocols (a, b) by two seeds, every run with results. */
static char *fake_sweep(void)
{
    char *dir = harness_tmpdir("results"), text[2048];
    fake_run(dir, "a1", 0.75, 0.25);
    fake_run(dir, "a2", 0.8, 0.375);
    fake_run(dir, "b1", 0.65, 0.5);
    fake_run(dir, "b2", 0.71, 0.625);
    snprintf(text, sizeof(text),
             "%s0,a1,a,1,target_accuracy,2,0.75,0.75,2,1280,0.01\n"
             "1,a2,a,2,target_accuracy,2,0.8,0.8,2,1280,0.01\n"
             "2,b1,b,1,time,2,0.65,0.65,,1280,0.01\n"
             "3,b2,b,2,target_accuracy,2,0.71,0.71,2,1280,0.01\n",
             index_head);
    harness_fake_index(dir, text);
    return dir;
}

/* Replaces the first `from` in dir/name with `to`. */
static void edit(const char *dir, const char *name, const char *from, const char *to)
{
    char *text = harness_slurp(dir, name), *at = strstr(text, from);
    ck_assert_msg(at != NULL, "%s/%s has no \"%s\"", dir, name, from);
    size_t n = strlen(text) + strlen(to) + 1;
    char *out = malloc(n);
    snprintf(out, n, "%.*s%s%s", (int)(at - text), text, to, at + strlen(from));
    harness_write(dir, name, out);
    free(out);
    free(text);
}

/* `hetsim report` and `plot --by` on `dir`: both exit 2, print nothing on stdout, name
 * `where` (a file and line) and say `what`; plot --by writes nothing. */
static void both_refuse(const char *dir, const char *where, const char *what)
{
    char out[1100];
    snprintf(out, sizeof(out), "%s/fig", dir);
    const char *const *cmds[] = {
        (const char *[]){ "report", dir, "--by", "proto", NULL },
        (const char *[]){ "plot", dir, "--by", "proto", "-o", out, NULL },
    };
    for (size_t i = 0; i < 2; i++) {
        harness_result r = harness_hetsim(cmds[i]);
        ck_assert_msg(r.status == 2, "%s: %s exited %d: %s", where, cmds[i][0], r.status, r.err);
        ck_assert_str_eq(r.out, "");
        ck_assert_msg(strstr(r.err, where) != NULL && strstr(r.err, what) != NULL,
                      "%s: expected \"%s\" and \"%s\": %s", cmds[i][0], where, what, r.err);
    }
    ck_assert_msg(!harness_exists(out), "plot --by wrote %s", out);
}

/* Each damage found by the probe of issue 38 (read silently, exit 0: a table showing "inf",
 * a three-seed sweep counting four runs), and variants of each (a metrics row or a worker
 * repeated), is refused by report and plot --by alike. */
START_TEST(damaged_numbers_are_refused_naming_the_file_and_line)
{
    static const struct {
        const char *file, *from, *to, *where, *what;
    } cases[] = {
        { "index.csv", "0.75,0.75,2", "inf,0.75,2", "index.csv: line 2",
          "final_accuracy: \"inf\" is not a finite number" },
        { "index.csv", "1280,0.01\n3", "nan,0.01\n3", "index.csv: line 4",
          "mean_throughput_sps: \"nan\" is not a finite number" },
        { "index.csv", "2,1280,0.01\n2", "2,1e200,0.01\n2", "index.csv: line 3",
          "mean_throughput_sps: 1e200 is above 1e+150" },
        { "index.csv", "0.8,0.8", "0.8,-0.8", "index.csv: line 3",
          "best_accuracy: -0.8 is below 0" },
        { "index.csv", "1,a2,a,2,target_accuracy,2,0.8,0.8,2,1280,0.01\n",
          "1,a2,a,2,target_accuracy,2,0.8,0.8,2,1280,0.01\n"
          "1,a2,a,2,target_accuracy,2,0.8,0.8,2,1280,0.01\n",
          "index.csv: line 4", "point 1 again (line 3)" },
        { "index.csv", "2,b1,b,1", "2,a1,b,1", "index.csv: line 4", "dir a1 again (line 2)" },
        { "a2/metrics.csv", "0.55,,1280", "1e400,,1280", "a2/metrics.csv: line 3",
          "test_accuracy: \"1e400\" is not a finite number" },
        { "b1/metrics.csv", "1.7,0.55", "-1.7,0.55", "b1/metrics.csv: line 3",
          "test_loss: -1.7 is below 0" },
        { "b2/metrics.csv", "0.71,,1280\n", "0.71,,12", "b2/metrics.csv: line 4",
          "truncated (no end of line)" },
        { "b1/metrics.csv",
          "0,0,0,0,,2.385,0.1,,0\n1,40,1280,0.064,1.9,1.7,0.55,,1280\n"
          "2,80,2560,0.128,1.2,0.9,0.65,,1280\n",
          "", "b1/metrics.csv", "has a header but no rows" },
        { "a2/metrics.csv", "1,40,1280,0.064,1.9,1.7,0.55,,1280\n",
          "1,40,1280,0.064,1.9,1.7,0.55,,1280\n1,40,1280,0.064,1.9,1.7,0.55,,1280\n",
          "a2/metrics.csv: line 4", "time_s: 1 is not above the row before's 1" },
        { "b1/workers.csv", "\n1,1,40,", "\n0,1,40,", "b1/workers.csv: line 3",
          "worker: 0 is not above the row before's 0" },
        { "a1/workers.csv", "\n1,1,40,", "\n7,1,40,", "a1/workers.csv: line 3",
          "worker: 7 is not the row's index 1" },
        { "a1/workers.csv", "0.5,0.25,51200", "0.5,-0.25,51200", "a1/workers.csv: line 2",
          "wait_s: -0.25 is below 0" },
        { "b2/workers.csv", "1.25,0.5", "inf,0.5", "b2/workers.csv: line 2",
          "compute_s: \"inf\" is not a finite number" },
        /* Fields hetsim always writes, left empty: read as NaN, the shares were wrong (an
         * empty comm_s showed 0% communicating, an empty compute_s 100%), exit 0. */
        { "a2/workers.csv", "1.25,0.5,", ",0.5,", "a2/workers.csv: line 2", "compute_s: empty" },
        { "b1/workers.csv", "1.25,0.5,", "1.25,,", "b1/workers.csv: line 2", "comm_s: empty" },
        { "b2/workers.csv", "51200,51200,0,0.125", "51200,,0,0.125", "b2/workers.csv: line 2",
          "bytes_received: empty" },
        { "a1/metrics.csv", "0.55,,1280", "0.55,,", "a1/metrics.csv: line 3",
          "throughput_sps: empty" },
        /* Issue 38, seventh probe: counts that went down from a row to the next (plot --by
         * --x samples drew them), exit 0. */
        { "b1/metrics.csv", "2,80,2560,", "2,80,256,", "b1/metrics.csv: line 4",
          "samples: 256 is below the row before's 1280" },
        { "a2/metrics.csv", "2,80,2560,", "2,8,2560,", "a2/metrics.csv: line 4",
          "iterations: 8 is below the row before's 40" },
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char *dir = fake_sweep();
        edit(dir, cases[i].file, cases[i].from, cases[i].to);
        both_refuse(dir, cases[i].where, cases[i].what);
        harness_cleanup(dir);
    }
    /* plot RUN reads a run's files with the same reader. */
    char *dir = fake_sweep(), run[1100], out[1100];
    snprintf(run, sizeof(run), "%s/a1", dir);
    snprintf(out, sizeof(out), "%s/fig", dir);
    edit(run, "metrics.csv", "0.55,,1280", "nan,,1280");
    harness_result r = harness_hetsim((const char *[]){ "plot", run, "-o", out, NULL });
    ck_assert_msg(r.status == 2, "exit %d: %s", r.status, r.err);
    ck_assert_msg(strstr(r.err, "a1/metrics.csv: line 3: test_accuracy: \"nan\"") != NULL, "%s",
                  r.err);
    ck_assert(!harness_exists(out));
    harness_cleanup(dir);
}
END_TEST

/* A run that evaluates its accuracy writes both its final and its best accuracy, the best at
 * least the final: a hand edit that writes one alone (a timing-only run's row given a final
 * accuracy showed it as its group's, exit 0) or a best below the final is refused. */
START_TEST(index_accuracies_no_run_writes_are_refused)
{
    static const struct {
        const char *from, *to, *where, *what;
    } cases[] = {
        { "2,0.75,0.75,2", "2,0.75,,2", "index.csv: line 2",
          "final_accuracy without best_accuracy" },
        { "2,0.8,0.8,2", "2,,0.8,2", "index.csv: line 3", "best_accuracy without final_accuracy" },
        { "2,0.65,0.65,", "2,0.65,0.6499,", "index.csv: line 4",
          "best_accuracy: 0.6499 is below final_accuracy 0.65" },
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char *dir = fake_sweep();
        edit(dir, "index.csv", cases[i].from, cases[i].to);
        both_refuse(dir, cases[i].where, cases[i].what);
        harness_cleanup(dir);
    }
}
END_TEST

/* A header names each column once: a column renamed to another's name (comm_overlap_s to
 * compute_s) was skipped, the first of the name read, and the run's overlap counted as 0
 * (0.1640 shown as 0.1 +- 1.0, exit 0); a column without a name (a comma ending each line) is
 * none that hetsim writes either. */
START_TEST(a_header_naming_a_column_twice_or_not_at_all_is_refused)
{
    static const struct {
        const char *file, *from, *to, *what;
    } cases[] = {
        { "a1/workers.csv", "comm_overlap_s,params_fnv", "compute_s,params_fnv",
          "a1/workers.csv: line 1: column 11 (compute_s) named twice (also column 5)" },
        { "b2/metrics.csv", "consensus,throughput_sps", "consensus,",
          "b2/metrics.csv: line 1: column 9 has no name" },
        { "index.csv", "proto,seed", "seed,seed",
          "index.csv: line 1: column 4 (seed) named twice (also column 3)" },
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char *dir = fake_sweep();
        edit(dir, cases[i].file, cases[i].from, cases[i].to);
        both_refuse(dir, cases[i].file, cases[i].what);
        harness_cleanup(dir);
    }
}
END_TEST

/* A run directory of the sweep removed whole: the fix is said (it said "the runs stop at
 * different target accuracies (nan in ...)"). */
START_TEST(a_removed_run_directory_says_to_run_it_again)
{
    char *dir = fake_sweep(), path[1300];
    snprintf(path, sizeof(path), "rm -r '%s/b1'", dir);
    ck_assert_int_eq(system(path), 0);
    snprintf(path, sizeof(path), "b1/run.json");
    both_refuse(dir, path,
                "an incomplete run directory (files removed, or copied in part): run "
                "it again");
    /* With --target the run.json are read all the same (the ninth probe: plot --by drew without
     * one): the same message. */
    harness_result r =
        harness_hetsim((const char *[]){ "report", dir, "--by", "proto", "--target", "0.7", NULL });
    ck_assert_int_eq(r.status, 2);
    ck_assert_msg(strstr(r.err, "run it again") != NULL && strstr(r.err, "b1/run.json") != NULL,
                  "%s", r.err);
    /* A run.json that is not one: named. */
    char *again = fake_sweep(), b1[1100];
    snprintf(b1, sizeof(b1), "%s/b1", again);
    harness_write(b1, "run.json", /* with its row's proto and seed, as a sweep's */
                  "{ \"scenario\": { \"proto\": \"b\", \"seed\": 1, \"stop\": { "
                  "\"target_accuracy\": 7 } } }");
    both_refuse(again, "b1/run.json", "target_accuracy");
    harness_write(b1, "run.json", "{ \"scenario\": ");
    both_refuse(again, "b1/run.json", "line 1");
    harness_cleanup(again);
    harness_cleanup(dir);
}
END_TEST

/* plot RUN draws a whole run directory: an empty or missing run.json is an incomplete one,
 * refused with the fix and the file named, nothing drawn (an empty one was drawn, exit 0), as
 * report and plot --by refuse it. */
START_TEST(plot_run_refuses_a_run_whose_run_json_is_empty_or_missing)
{
    char *dir = fake_sweep(), run[1100], out[1100], path[1300];
    snprintf(run, sizeof(run), "%s/a2", dir);
    snprintf(out, sizeof(out), "%s/fig", dir);
    static const char *const said[] = { "empty file", "no file" };
    for (int i = 0; i < 2; i++) {
        if (i == 0)
            harness_write(run, "run.json", "");
        snprintf(path, sizeof(path), "%s/run.json", run);
        if (i == 1)
            ck_assert_int_eq(remove(path), 0);
        harness_result r = harness_hetsim((const char *[]){ "plot", run, "-o", out, NULL });
        ck_assert_msg(r.status == 2, "%s: exit %d: %s", said[i], r.status, r.err);
        ck_assert_msg(strstr(r.err, "an incomplete run directory") != NULL &&
                          strstr(r.err, said[i]) != NULL && strstr(r.err, "a2/run.json") != NULL,
                      "%s", r.err);
        ck_assert(!harness_exists(out));
    }
    harness_write(run, "run.json", "");
    both_refuse(dir, "a2/run.json", "an incomplete run directory");
    harness_cleanup(dir);
}
END_TEST

/* A workers.csv whose last row is cut is refused by report, plot --by and plot RUN, naming the
 * file and the row: cut mid-row (fewer fields, no line end), or at the row's start, where the
 * file is well formed but short of the run's workers (run.json's scenario.workers; that one
 * was read as a run of one worker, exit 0). */
START_TEST(a_workers_file_cut_in_its_last_row_is_refused_naming_the_row)
{
    static const struct {
        const char *to, *what;
    } cuts[] = {
        { "0,1,40,1280,1.25,0.5,0.5,51200,51200,0,0.125,9f2c41d07a31b6e5\n1,1,40",
          "b1/workers.csv: line 3: truncated (no end of line)" },
        { "0,1,40,1280,1.25,0.5,0.5,51200,51200,0,0.125,9f2c41d07a31b6e5\n",
          "b1/workers.csv: line 3: no row for worker 1 (2 workers, " },
    };
    for (size_t i = 0; i < 2; i++) {
        char *dir = fake_sweep(), b1[1100], out[1100], text[2048];
        snprintf(b1, sizeof(b1), "%s/b1", dir);
        snprintf(out, sizeof(out), "%s/fig", dir);
        harness_write(b1, "run.json",
                      "{ \"scenario\": { \"proto\": \"b\", \"seed\": 1, \"workers\": 2, "
                      "\"stop\": { \"time_s\": 2, \"target_accuracy\": 0.7 } } }\n");
        snprintf(text, sizeof(text), "%s%s", workers_head, cuts[i].to);
        harness_write(b1, "workers.csv", text);
        both_refuse(dir, cuts[i].what, "");
        harness_result r = harness_hetsim((const char *[]){ "plot", b1, "-o", out, NULL });
        ck_assert_msg(r.status == 2 && strstr(r.err, cuts[i].what) != NULL, "exit %d: %s", r.status,
                      r.err);
        ck_assert(!harness_exists(out));
        harness_cleanup(dir);
    }
}
END_TEST

/* Prepends a UTF-8 byte-order mark to dir/name. */
static void add_bom(const char *dir, const char *name)
{
    char *text = harness_slurp(dir, name);
    size_t n = strlen(text) + 4;
    char *out = malloc(n);
    snprintf(out, n, "\xef\xbb\xbf%s", text);
    harness_write(dir, name, out);
    free(out);
    free(text);
}

/* A UTF-8 byte-order mark may open a results file, as it may a scenario, a profile, a trace or
 * a LIBSVM file (sim/text.h): the reader drops it ("no column time_s" before: the mark was
 * read as part of the header's first name). The report is the same as without it. */
START_TEST(a_byte_order_mark_opening_a_results_file_is_no_part_of_its_header)
{
    char *dir = fake_sweep(), run[1100], out[1100];
    const char *const report[] = { "report", dir, "--by", "proto", "--format", "csv", NULL };
    harness_result plain = harness_hetsim(report);
    ck_assert_msg(plain.status == 0, "exit %d: %s", plain.status, plain.err);
    add_bom(dir, "index.csv");
    add_bom(dir, "a1/metrics.csv");
    add_bom(dir, "b2/workers.csv");
    harness_result r = harness_hetsim(report);
    ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
    ck_assert_str_eq(r.out, plain.out);
    snprintf(run, sizeof(run), "%s/a1", dir);
    snprintf(out, sizeof(out), "%s/fig", dir);
    r = harness_hetsim((const char *[]){ "plot", run, "-o", out, NULL });
    ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
    /* A mark alone is an empty file, as no bytes are. */
    harness_write(run, "metrics.csv", "\xef\xbb\xbf");
    r = harness_hetsim((const char *[]){ "plot", run, "-o", out, NULL });
    ck_assert_msg(r.status == 2 && strstr(r.err, "a1/metrics.csv: empty file") != NULL,
                  "exit %d: %s", r.status, r.err);
    harness_cleanup(dir);
}
END_TEST

/* The rows of the table gnuplot wrote (`set table`): each "x y" pair, at most `max`. */
static size_t table_rows(const char *path, double *x, double *y, size_t max)
{
    char *text = harness_read(path, NULL), *save = NULL;
    size_t n = 0;
    for (char *line = strtok_r(text, "\n", &save); line != NULL && n < max;
         line = strtok_r(NULL, "\n", &save))
        if (line[0] != '#' && sscanf(line, "%lf %lf", &x[n], &y[n]) == 2)
            n++;
    free(text);
    return n;
}

/* A --style copy of plots/`name` that first has gnuplot write what it reads of the figure's
 * CSV as a table (columns `xcol` and `ycol` of each row) beside it (IN.table: the figure's out is a
 * descriptor, /dev/fd/3). */
static void tabling_style(const char *style, const char *name, const char *xcol, const char *ycol)
{
    char path[1100], *text;
    snprintf(path, sizeof(path), "plots/%s", name);
    text = harness_read(path, NULL);
    size_t n = strlen(text) + 1024;
    char *out = malloc(n);
    snprintf(out, n,
             "set datafile separator \",\"\nset datafile columnheaders\n"
             "set datafile missing \"NaN\"\nset table in . \".table\"\n"
             "plot in using (column(\"%s\")):(column(\"%s\")) with points\nunset table\n%s",
             xcol, ycol, text);
    harness_write(style, name, out);
    free(out);
    free(text);
}

/* plot --by with values that hold commas (any array, such as compute.speeds): the labels are
 * quoted in breakdown-by-KEY.csv and ttt-by-KEY.csv, and gnuplot reads every row whole: the
 * numbers it draws are the row's (they were read one column off: 78% waiting drawn as
 * compute) and the label is whole on the axis. */
START_TEST(labels_with_commas_are_quoted_and_drawn_from_their_own_row)
{
    char *dir = harness_tmpdir("results"), text[2048], out[1100], style[1100], path[1300];
    fake_run(dir, "x1", 0.75, 0.25);
    fake_run(dir, "x2", 0.8, 0.25);
    fake_run(dir, "y1", 0.65, 1.75);
    fake_run(dir, "y2", 0.71, 1.75);
    snprintf(text, sizeof(text),
             "point,dir,compute.speeds,seed,stop_reason,sim_time_s,final_accuracy,best_accuracy,"
             "time_to_target_s,mean_throughput_sps,wall_s\n"
             "0,x1,\"[1,2,1,1]\",1,time,2,0.75,0.75,2,1280,0.01\n"
             "1,x2,\"[1,2,1,1]\",2,time,2,0.8,0.8,2,1280,0.01\n"
             "2,y1,\"[1,1,1,1]\",1,time,2,0.65,0.65,,1280,0.01\n"
             "3,y2,\"[1,1,1,1]\",2,time,2,0.71,0.71,2,1280,0.01\n");
    harness_fake_index(dir, text);
    snprintf(out, sizeof(out), "%s/fig", dir);
    snprintf(style, sizeof(style), "%s/style", dir);
    ck_assert_int_eq(mkdir(style, 0777), 0);
    tabling_style(style, "shares.gp", "compute", "wait");
    tabling_style(style, "bars.gp", "mean", "runs");
    harness_result r = harness_hetsim((const char *[]){ "plot", dir, "--by", "compute.speeds", "-o",
                                                        out, "--target", "0.5", "--format", "svg",
                                                        "--style", style, NULL });
    ck_assert_msg(r.status == 0, "%s", r.err);
    /* The CSVs, read back by the reader: the label whole, the shares of its own row. A run's
     * time is compute 2.5 s (0.25 overlapped), comm 1 s and wait 0.5 s or 3.5 s. */
    sim_csv t;
    sim_err err;
    snprintf(path, sizeof(path), "%s/breakdown-by-compute.speeds.csv", out);
    ck_assert_msg(sim_csv_read(&t, path, NULL, &err) == SIM_OK, "%s", err.msg);
    ck_assert_str_eq(sim_csv_cell(&t, 0, 0), "_1,2,1,1_");
    ck_assert_double_eq_tol(sim_csv_number(&t, 0, 4), 12.5, 1e-6); /* written as %.9g */
    ck_assert_double_eq_tol(sim_csv_number(&t, 1, 4), 50.0, 1e-6);
    sim_csv_fini(&t);
    snprintf(path, sizeof(path), "%s/ttt-by-compute.speeds.csv", out);
    ck_assert_msg(sim_csv_read(&t, path, NULL, &err) == SIM_OK, "%s", err.msg);
    ck_assert_str_eq(sim_csv_cell(&t, 1, 0), "_1,1,1,1_");
    sim_csv_fini(&t);
    /* What gnuplot read: compute and wait shares; time to 0.5 (1 s) over 2 runs. Its table
     * prints 6 significant digits: 32.1429 for 32.142857. */
    double x[4], y[4];
    snprintf(path, sizeof(path), "%s/breakdown-by-compute.speeds.csv.table", out);
    ck_assert_uint_eq(table_rows(path, x, y, 4), 2);
    ck_assert_double_eq_tol(x[0], 56.25, 1e-4);
    ck_assert_double_eq_tol(y[0], 12.5, 1e-4);
    ck_assert_double_eq_tol(x[1], 2.25 / 7.0 * 100.0, 1e-4);
    ck_assert_double_eq_tol(y[1], 50.0, 1e-4);
    snprintf(path, sizeof(path), "%s/ttt-by-compute.speeds.csv.table", out);
    ck_assert_uint_eq(table_rows(path, x, y, 4), 2);
    for (size_t i = 0; i < 2; i++) {
        ck_assert_double_eq_tol(x[i], 1.0, 1e-9);
        ck_assert_double_eq_tol(y[i], 2.0, 1e-9);
    }
    /* The labels on the axis of both bar figures, whole. */
    static const char *const figs[] = { "breakdown-by-compute.speeds.svg",
                                        "ttt-by-compute.speeds.svg" };
    for (size_t i = 0; i < 2; i++) {
        char *svg = harness_slurp(out, figs[i]);
        ck_assert_msg(strstr(svg, ">_1,2,1,1_<") != NULL && strstr(svg, ">_1,1,1,1_<") != NULL,
                      "%s: a label cut at its comma", figs[i]);
        free(svg);
    }
    harness_cleanup(dir);
}
END_TEST

/* plot --by with more values than a figure holds (gnuplot failed past about 636 with
 * "Cairo is unhappy" and left the CSVs without figures, exit 1): refused before anything is
 * written, naming the limit. */
START_TEST(plot_by_refuses_more_values_than_a_figure_holds_and_writes_nothing)
{
    char *dir = harness_tmpdir("results"), name[32], out[1100];
    size_t cap = 1 << 17, len = 0;
    char *index = malloc(cap);
    len += (size_t)snprintf(index, cap, "%s", index_head);
    for (int i = 0; i < 640; i++) {
        snprintf(name, sizeof(name), "p%d", i);
        fake_run(dir, name, 0.75, 0.25);
        len += (size_t)snprintf(index + len, cap - len, "%d,%s,v%d,1,time,2,0.75,0.75,2,1280,0\n",
                                i, name, i);
    }
    harness_fake_index(dir, index);
    free(index);
    snprintf(out, sizeof(out), "%s/fig", dir);
    harness_result r =
        harness_hetsim((const char *[]){ "plot", dir, "--by", "proto", "-o", out, NULL });
    ck_assert_msg(r.status == 2, "exit %d: %s", r.status, r.err);
    ck_assert_msg(strstr(r.err, "640 groups of proto, and a figure holds at most 600") != NULL,
                  "%s", r.err);
    ck_assert_str_eq(r.out, "");
    ck_assert(!harness_exists(out));
    harness_cleanup(dir);
}
END_TEST

/* A sweep's curves.csv is made from its points' metrics.csv by the same reader: a damaged one
 * (a row with an infinite throughput appended) is named with its fix, not copied (curves.csv
 * held the "inf", exit 0). */
START_TEST(a_sweep_names_a_damaged_metrics_file_instead_of_copying_it)
{
    char *dir = harness_tmpdir("results"), file[1100], out[1100], point[1300];
    harness_write(
        dir, "tiny.json",
        "{ \"seed\": 5, \"workers\": 2, \"compute\": { \"iteration_ms\": 10 },\n"
        "  \"workload\": { \"dataset\": { \"name\": \"synthetic\", \"samples\": 1000,\n"
        "      \"dim\": 8, \"classes\": 3 }, \"model\": { \"name\": \"softmax\" },\n"
        "    \"batch\": 16, \"lr\": 0.05 },\n"
        "  \"protocol\": { \"name\": \"allreduce\" },\n"
        "  \"stop\": { \"time_s\": 0.5 }, \"eval\": { \"every_s\": 0.25, \"samples\": 100 } }\n");
    harness_sweep_in(dir, NULL, "{ \"base\": \"tiny.json\", \"seeds\": 2 }\n", file, out,
                     sizeof(file));
    snprintf(point, sizeof(point), "%s/seed=6", out);
    char *text = harness_slurp(point, "metrics.csv");
    size_t n = strlen(text) + 64;
    char *more = malloc(n);
    snprintf(more, n, "%s9,990,99990,99,1.5,1.5,0.5,,inf\n", text);
    harness_write(point, "metrics.csv", more);
    free(more);
    free(text);
    harness_result r =
        harness_hetsim((const char *[]){ "sweep", file, "-o", out, "--quiet", NULL });
    ck_assert_msg(r.status == 2, "exit %d: %s", r.status, r.err);
    ck_assert_msg(strstr(r.err, "seed=6/metrics.csv: line 5: throughput_sps: \"inf\" is not a "
                                "finite number (a damaged run: remove ") != NULL,
                  "%s", r.err);
    char *curves = harness_slurp(out, "curves.csv");
    ck_assert_msg(strstr(curves, "inf") == NULL, "%s", curves);
    free(curves);
    harness_cleanup(dir);
}
END_TEST

/* The reader's form, on its own: quoted fields as sim_output_csv_field writes them, every
 * row ended and as wide as the header; each refusal names the file and line. */
START_TEST(the_reader_takes_quoted_fields_and_refuses_what_hetsim_does_not_write)
{
    char *dir = harness_tmpdir("results"), path[1100];
    snprintf(path, sizeof(path), "%s/t.csv", dir);
    harness_write(dir, "t.csv",
                  "label,x\n\"[1,2,1,1]\",0.3125\n\"say \"\"hi\"\"\",2.5e-3\r\n\"two\nlines\",7\n"
                  "plain,\n");
    sim_csv t;
    sim_err err;
    static const sim_csv_rule rule[] = { { "x", 0.0, 1.0, true, false, false, false } };
    const sim_csv_rules rules = { rule, 1 };
    ck_assert_int_eq(sim_csv_read(&t, path, NULL, &err), SIM_OK);
    ck_assert_uint_eq(t.nrows, 4);
    ck_assert_str_eq(sim_csv_cell(&t, 0, 0), "[1,2,1,1]");
    ck_assert_str_eq(sim_csv_cell(&t, 1, 0), "say \"hi\"");
    ck_assert_str_eq(sim_csv_cell(&t, 2, 0), "two\nlines");
    ck_assert_double_eq(sim_csv_number(&t, 1, 1), 2.5e-3);
    ck_assert(isnan(sim_csv_number(&t, 3, 1)));
    ck_assert_uint_eq(t.line[3], 6); /* the quoted line end counts */
    sim_csv_fini(&t);
    ck_assert_int_eq(sim_csv_read(&t, path, &rules, &err), SIM_EINVAL);
    ck_assert_msg(strstr(err.msg, "t.csv: line 4: x: 7 is above 1") != NULL, "%s", err.msg);
    static const struct {
        const char *text, *why;
    } bad[] = {
        { "", "t.csv: empty file (no header row)" },
        { "a,b\n1,2", "t.csv: line 2: truncated (no end of line)" },
        { "a,b\n1,2\n\n3,4\n", "t.csv: line 3: a blank line" },
        { "a,b\n1\n", "t.csv: line 2: 1 fields, the header has 2" },
        { "a,b\n\"1,2\n", "t.csv: line 2: a quoted field without its closing quote" },
        { "a,b\n\"1\"x,2\n", "t.csv: line 2: text after a closing quote" },
        { "a,b\n1\"x,2\n", "t.csv: line 2: a quote inside a field that is not quoted" },
        { "a,b\r1,2\r", "t.csv: line 1: truncated (no end of line)" },
        { "a,x\n1,0x1p-2\n", "t.csv: line 2: x: \"0x1p-2\" is not a finite number" },
        { "a,x\n1, 0.5\n", "t.csv: line 2: x: \" 0.5\" is not a finite number" },
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        harness_write(dir, "t.csv", bad[i].text);
        ck_assert_int_eq(sim_csv_read(&t, path, &rules, &err), SIM_EINVAL);
        ck_assert_msg(strstr(err.msg, bad[i].why) != NULL, "case %zu: %s", i, err.msg);
        ck_assert_ptr_null(t.text);
    }
    ck_assert_int_eq(sim_csv_read(&t, "/no/such/file.csv", NULL, &err), SIM_EIO);
    ck_assert_int_eq(t.open_errno, ENOENT);
    harness_cleanup(dir);
}
END_TEST

/* A results file is one hetsim wrote (issue 38): a directory, a FIFO (the reader waited for a
 * writer forever) or a device (/dev/zero was read until memory ran out) in its place is
 * refused, naming the file; a text read whole stops at the block holding a NUL byte. */
START_TEST(a_results_file_that_is_no_regular_file_is_refused_without_reading_it)
{
    char *dir = harness_tmpdir("results"), path[1100];
    sim_csv t;
    sim_err err;
    static const struct {
        const char *name, *kind;
    } odd[] = { { "dir.csv", "(a directory)" },
                { "fifo.csv", "(a FIFO)" },
                { "zero.csv", "(a symbolic link)" } }; /* to /dev/zero: hetsim writes no link */
    snprintf(path, sizeof(path), "%s/dir.csv", dir);
    ck_assert_int_eq(mkdir(path, 0777), 0);
    snprintf(path, sizeof(path), "%s/fifo.csv", dir);
    ck_assert_int_eq(mkfifo(path, 0666), 0);
    snprintf(path, sizeof(path), "%s/zero.csv", dir);
    ck_assert_int_eq(symlink("/dev/zero", path), 0);
    for (size_t i = 0; i < 3; i++) {
        snprintf(path, sizeof(path), "%s/%s", dir, odd[i].name);
        ck_assert_int_eq(sim_csv_read(&t, path, NULL, &err), SIM_EINVAL);
        ck_assert_msg(strstr(err.msg, path) != NULL && strstr(err.msg, odd[i].kind) != NULL &&
                          strstr(err.msg, "not a regular file") != NULL,
                      "%s", err.msg);
        ck_assert_ptr_null(t.text);
    }
    ck_assert_int_eq(sim_csv_read(&t, "/dev/zero", NULL, &err), SIM_EINVAL);
    ck_assert_msg(strstr(err.msg, "(a character device)") != NULL, "%s", err.msg);
    size_t len = 0;
    char *text = sim_output_read("/dev/zero", &len);
    ck_assert_ptr_nonnull(text);
    ck_assert_uint_le(len, 4096);
    ck_assert_uint_eq(len > 0 && text[0] == '\0', 1);
    free(text);
    harness_cleanup(dir);
}
END_TEST

/* A point's directory that is no directory of the sweep's own (a symbolic link to another
 * point, or to a directory elsewhere; a file) is refused by report and plot --by, naming
 * index.csv's line and the directory: a link to another point counted one run twice (as two
 * seeds), exit 0; a file failed with exit 1, "cannot read .../run.json: Not a directory". */
START_TEST(a_point_directory_that_is_a_link_or_a_file_is_refused)
{
    static const struct {
        const char *run, *action, *where;
    } cases[] = { { "a2", "ln -s a1 a2", "index.csv: line 3" },
                  { "b1", "mkdir away && ln -s \"$PWD/away\" b1", "index.csv: line 4" },
                  { "b2", "echo x >b2", "index.csv: line 5" } };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char *dir = fake_sweep(), cmd[3000];
        snprintf(cmd, sizeof(cmd), "cd '%s' && rm -r %s && %s", dir, cases[i].run, cases[i].action);
        ck_assert_int_eq(system(cmd), 0);
        both_refuse(dir, cases[i].where, "not a directory of the sweep's own");
        harness_cleanup(dir);
    }
}
END_TEST

/* fake_sweep's runs with their resolved values in run.json: their seed, the swept
 * workload.batch 32 (a) or 64 (b) and protocol {"name": "a"} or {"name": "b"} (resolved with
 * a default, bucket_mb, as a real run's: conformance's grid sweeps such objects). */
static char *resolved_sweep(void)
{
    static const struct {
        const char *run;
        int batch, seed;
    } runs[] = { { "a1", 32, 1 }, { "a2", 32, 2 }, { "b1", 64, 1 }, { "b2", 64, 2 } };
    char *dir = fake_sweep(), run[1100], text[512];
    for (size_t i = 0; i < sizeof(runs) / sizeof(runs[0]); i++) {
        snprintf(run, sizeof(run), "%s/%s", dir, runs[i].run);
        snprintf(text, sizeof(text),
                 "{ \"scenario\": { \"seed\": %d, \"workload\": { \"batch\": %d }, \"protocol\": "
                 "{ \"name\": \"%c\", \"bucket_mb\": 25 }, \"stop\": { \"time_s\": 2, "
                 "\"target_accuracy\": 0.7 } } }\n",
                 runs[i].seed, runs[i].batch, runs[i].run[0]);
        harness_write(run, "run.json", text);
    }
    edit(dir, "index.csv", "dir,proto,", "dir,protocol,workload.batch,");
    edit(dir, "index.csv", "0,a1,a,", "0,a1,\"{\"\"name\"\":\"\"a\"\"}\",32,");
    edit(dir, "index.csv", "1,a2,a,", "1,a2,\"{\"\"name\"\":\"\"a\"\"}\",32,");
    edit(dir, "index.csv", "2,b1,b,", "2,b1,\"{\"\"name\"\":\"\"b\"\"}\",64,");
    edit(dir, "index.csv", "3,b2,b,", "3,b2,\"{\"\"name\"\":\"\"b\"\"}\",64,");
    return dir;
}

/* index.csv's swept values and seed are its runs' (issue 38, third probe): a value or a seed
 * edited in index.csv, or a point's run.json replaced by another run's, was read silently
 * (exit 0, the runs grouped under values they did not run); report and plot --by refuse it
 * naming index.csv's line and the run.json. */
START_TEST(index_values_that_are_not_the_runs_are_refused)
{
    static const struct {
        const char *file, *from, *to, *where, *what;
    } cases[] = {
        { "index.csv", "}\",64,1", "}\",32,1", "index.csv: line 4", "b1/run.json" },
        { "index.csv", "}\",32,2", "}\",32,5", "index.csv: line 3", "seed differ from the run's" },
        { "index.csv", "\"\"b\"\"}\",64,2", "\"\"a\"\"}\",64,2", "index.csv: line 5",
          "protocol.name differ" },
        { "b2/run.json", "\"seed\": 2, \"workload\": { \"batch\": 64",
          "\"seed\": 1, \"workload\": { \"batch\": 32", "index.csv: line 5", "b2/run.json" },
    };
    char *dir = resolved_sweep(), out[1100];
    harness_result ok =
        harness_hetsim((const char *[]){ "report", dir, "--by", "workload.batch", NULL });
    ck_assert_msg(ok.status == 0, "the sweep as written: exit %d: %s", ok.status, ok.err);
    harness_cleanup(dir);
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        dir = resolved_sweep();
        edit(dir, cases[i].file, cases[i].from, cases[i].to);
        snprintf(out, sizeof(out), "%s/fig", dir);
        const char *const *cmds[] = {
            (const char *[]){ "report", dir, "--by", "workload.batch", NULL },
            (const char *[]){ "plot", dir, "--by", "workload.batch", "-o", out, NULL },
        };
        for (size_t j = 0; j < 2; j++) {
            harness_result r = harness_hetsim(cmds[j]);
            ck_assert_msg(r.status == 2, "%s: %s exited %d: %s", cases[i].where, cmds[j][0],
                          r.status, r.err);
            ck_assert_str_eq(r.out, "");
            ck_assert_msg(strstr(r.err, cases[i].where) != NULL &&
                              strstr(r.err, cases[i].what) != NULL &&
                              strstr(r.err, "differ from the run's") != NULL,
                          "%s: expected \"%s\" and \"%s\": %s", cmds[j][0], cases[i].where,
                          cases[i].what, r.err);
        }
        ck_assert_msg(!harness_exists(out), "plot --by wrote %s", out);
        harness_cleanup(dir);
    }
}
END_TEST

/* plot --by of a timing-only sweep (issue 38): its runs have no test accuracy, and gnuplot
 * refused the empty curves of by-KEY ("x range is invalid", exit 1, its CSVs left behind);
 * that figure is skipped with a word, the breakdown drawn, exit 0. */
START_TEST(plot_by_of_a_timing_only_sweep_skips_the_accuracy_figure_with_a_word)
{
    char *dir = fake_sweep(), out[1100], text[512];
    static const char *const runs[] = { "a1", "a2", "b1", "b2" };
    for (size_t i = 0; i < 4; i++) {
        snprintf(text, sizeof(text), "%s0,0,0,,,,,,0\n1,40,1280,,,,,,1280\n2,80,2560,,,,,,1280\n",
                 metrics_head);
        char run[1100];
        snprintf(run, sizeof(run), "%s/%s", dir, runs[i]);
        harness_write(run, "metrics.csv", text);
    }
    snprintf(out, sizeof(out), "%s/fig", dir);
    harness_result r = harness_hetsim(
        (const char *[]){ "plot", dir, "--by", "proto", "-o", out, "--format", "svg", NULL });
    ck_assert_msg(r.status == 0, "%s", r.err);
    ck_assert_msg(strstr(r.err, "no by-proto.svg: the runs have no test accuracy") != NULL, "%s",
                  r.err);
    struct stat st;
    char path[1300];
    snprintf(path, sizeof(path), "%s/breakdown-by-proto.svg", out);
    ck_assert_int_eq(stat(path, &st), 0);
    snprintf(path, sizeof(path), "%s/by-proto-0.csv", out);
    ck_assert_int_ne(stat(path, &st), 0);
    harness_cleanup(dir);
}
END_TEST

Suite *test_suite(void)
{
    Suite *s = suite_create("results");
    TCase *tc = tcase_create("damaged");
    tcase_add_test(tc, damaged_numbers_are_refused_naming_the_file_and_line);
    tcase_add_test(tc, index_accuracies_no_run_writes_are_refused);
    tcase_add_test(tc, a_header_naming_a_column_twice_or_not_at_all_is_refused);
    tcase_add_test(tc, a_removed_run_directory_says_to_run_it_again);
    tcase_add_test(tc, plot_run_refuses_a_run_whose_run_json_is_empty_or_missing);
    tcase_add_test(tc, a_byte_order_mark_opening_a_results_file_is_no_part_of_its_header);
    tcase_add_test(tc, a_workers_file_cut_in_its_last_row_is_refused_naming_the_row);
    tcase_add_test(tc, labels_with_commas_are_quoted_and_drawn_from_their_own_row);
    tcase_add_test(tc, plot_by_refuses_more_values_than_a_figure_holds_and_writes_nothing);
    tcase_add_test(tc, a_sweep_names_a_damaged_metrics_file_instead_of_copying_it);
    tcase_add_test(tc, the_reader_takes_quoted_fields_and_refuses_what_hetsim_does_not_write);
    tcase_add_test(tc, a_results_file_that_is_no_regular_file_is_refused_without_reading_it);
    tcase_add_test(tc, a_point_directory_that_is_a_link_or_a_file_is_refused);
    tcase_add_test(tc, plot_by_of_a_timing_only_sweep_skips_the_accuracy_figure_with_a_word);
    tcase_add_test(tc, index_values_that_are_not_the_runs_are_refused);
    tcase_set_timeout(tc, 120);
    suite_add_tcase(s, tc);
    return s;
}
