/* Issue 38, leftovers of the thirteenth probe: a run whose workers are all down at its end
 * scores the model it ended with whatever eval.every_s; a worker down from 0 sends nothing; the
 * sweep's, plot's and select's messages escape the user's names; report says how many runs its
 * bytes sent/sample covers. Each case failed before its fix.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <check.h>

#include "harness.h"
#include "sim/text.h"

typedef harness_result result;

/* Gossip whose five workers all fail for good at 0.064 s: the run stalls then. */
static const char stall_json[] =
    "{\"seed\": 7, \"workers\": 5, \"compute\": {\"iteration_ms\": 10, \"jitter_sigma\": 0.2},\n"
    " \"stragglers\": [{\"kind\": \"failure\", \"workers\": [0, 1, 2, 3, 4], \"at_s\": 0.064}],\n"
    " \"workload\": {\"dataset\": {\"name\": \"synthetic\", \"samples\": 400,\n"
    "   \"test_samples\": 50}, \"model\": {\"name\": \"softmax\"}, \"batch\": 8, \"lr\": 0.1},\n"
    " \"protocol\": {\"name\": \"gossip\"}, \"stop\": {\"time_s\": 1},\n"
    " \"eval\": {\"samples\": 50}}\n";

/* The stall's row of metrics.csv found no live worker to evaluate and left its accuracy
 * empty, so final_accuracy was the last evaluation's before the failure: 0.12 with every_s
 * 0.0137 (an evaluation at 0.0548 s), 0.06 with every_s 1000 (the untrained model at 0). The
 * stall's row now scores the model the workers left at their failure: the same test loss,
 * accuracy and consensus, and the same final_accuracy, whatever every_s (train_loss and
 * throughput_sps are means over the interval since the row before, which every_s sets). */
START_TEST(a_run_whose_workers_are_all_down_scores_its_last_model_whatever_every_s)
{
    char *dir = harness_tmpdir("probe31");
    harness_write(dir, "s.json", stall_json);
    static const char *const everys[] = { "eval.every_s=0.0137", "eval.every_s=1000" };
    static const char *const cols[] = { "time_s",    "iterations",    "samples",  "epoch",
                                        "test_loss", "test_accuracy", "consensus" };
    char s[600], r[2][700];
    snprintf(s, sizeof(s), "%s/s.json", dir);
    double final[2];
    harness_csv m[2];
    for (size_t e = 0; e < 2; e++) {
        snprintf(r[e], sizeof(r[e]), "%s/r%zu", dir, e);
        result res = harness_hetsim(
            (const char *[]){ "run", s, "-o", r[e], "--set", everys[e], "--quiet", NULL });
        ck_assert_msg(res.status == 0, "%s: exit %d\n%s", everys[e], res.status, res.err);
        char *sum = harness_slurp(r[e], "summary.json");
        ck_assert_msg(strstr(sum, "\"stop_reason\": \"stalled\"") != NULL, "%s", sum);
        free(sum);
        final[e] = harness_summary_number(r[e], "final_accuracy");
        m[e] = harness_csv_read(r[e], "metrics.csv");
    }
    ck_assert_msg(final[0] == final[1], "final_accuracy %.17g with every_s 0.0137, %.17g with 1000",
                  final[0], final[1]);
    for (size_t c = 0; c < sizeof(cols) / sizeof(cols[0]); c++) {
        const char *a = harness_csv_text(&m[0], m[0].nrows - 1, cols[c]);
        const char *b = harness_csv_text(&m[1], m[1].nrows - 1, cols[c]);
        ck_assert_msg(a[0] != '\0' && strcmp(a, b) == 0, "last row's %s: %s and %s", cols[c], a, b);
    }
    ck_assert_msg(harness_csv_num(&m[0], m[0].nrows - 1, "test_accuracy") == final[0],
                  "the last row's accuracy is final_accuracy");
    harness_csv_free(&m[0]);
    harness_csv_free(&m[1]);
    harness_cleanup(dir);
}
END_TEST

/* Four workers and a server host (easgd's centre), worker 1 failing for good at 0. */
static const char down0_json[] =
    "{\"seed\": 7, \"workers\": 4, \"servers\": 1,\n"
    " \"compute\": {\"iteration_ms\": 10, \"jitter_sigma\": 0.2},\n"
    " \"stragglers\": [{\"kind\": \"failure\", \"workers\": [1], \"at_s\": 0}],\n"
    " \"workload\": {\"dataset\": {\"name\": \"synthetic\", \"samples\": 400,\n"
    "   \"test_samples\": 50}, \"model\": {\"name\": \"softmax\"}, \"batch\": 8, \"lr\": 0.1},\n"
    " \"protocol\": {\"name\": \"adpsgd\"}, \"stop\": {\"time_s\": 0.2},\n"
    " \"eval\": {\"samples\": 50}}\n";

/* A failure at 0 came as an event after the protocol's start, which had sent from the worker
 * already: AD-PSGD's worker 1 showed 1,320 bytes_sent (a softmax model's) with 0 iterations,
 * D-PSGD's 2,640 (to its two neighbours), ps's 64 (its pull request) and syncswitch's 256. A
 * worker down from 0 is down when the protocol starts: it sends nothing, for every protocol. */
START_TEST(a_worker_down_from_the_start_sends_nothing)
{
    char *dir = harness_tmpdir("probe31");
    harness_write(dir, "s.json", down0_json);
    char s[600], r[700], set[80], name[64];
    snprintf(s, sizeof(s), "%s/s.json", dir);
    for (size_t i = 0; i < harness_protocols(); i++) {
        const char *p = harness_protocol(i, name, sizeof(name));
        snprintf(r, sizeof(r), "%s/%s", dir, p);
        snprintf(set, sizeof(set), "protocol.name=%s", p);
        result res =
            harness_hetsim((const char *[]){ "run", s, "-o", r, "--set", set, "--quiet", NULL });
        ck_assert_msg(res.status == 0, "%s: exit %d\n%s", p, res.status, res.err);
        harness_csv w = harness_csv_read(r, "workers.csv");
        ck_assert_msg(harness_csv_num(&w, 1, "iterations") == 0.0 &&
                          harness_csv_num(&w, 1, "bytes_sent") == 0.0 &&
                          harness_csv_num(&w, 1, "bytes_received") == 0.0,
                      "%s: worker 1 down from 0: %s iterations, %s bytes sent, %s received", p,
                      harness_csv_text(&w, 1, "iterations"), harness_csv_text(&w, 1, "bytes_sent"),
                      harness_csv_text(&w, 1, "bytes_received"));
        harness_csv_free(&w);
    }
    harness_cleanup(dir);
}
END_TEST

/* True if `text` holds `want` and no ESC byte, and is UTF-8: a name escaped as messages are. */
static bool escaped(const char *text, const char *want)
{
    return strstr(text, want) != NULL && strchr(text, '\x1b') == NULL && sim_text_utf8(text);
}

/* The sweep's closing line ("index in DIR/index.csv") printed the directory raw:
 * "s<ESC>[31m<0xff>" sent the terminal its escape sequence and left the line no UTF-8, where
 * every message writes "\u001b" and "\xff"; so did plot's lines of an argument skipped, not a
 * run directory. Written escaped (plot's "plots in DIR" too, though gnuplot's rule for paths
 * refuses such a DIR first). */
START_TEST(the_sweeps_and_plots_lines_escape_their_directories)
{
    char *dir = harness_tmpdir("probe31");
    char sw[600], o[700], x[700], r[800], p[700];
    harness_sweep_file(dir, harness_quick_json, harness_protocols_sweep, sw, sizeof(sw));
    snprintf(o, sizeof(o), "%s/s\x1b[31m\xff", dir);
    result res = harness_hetsim((const char *[]){ "sweep", sw, "-o", o, NULL });
    ck_assert_msg(res.status == 0, "sweep: exit %d\n%.300s", res.status, res.err);
    ck_assert_msg(escaped(res.out, "/s\\u001b[31m\\xff/index.csv"), "sweep: %.300s", res.out);
    snprintf(x, sizeof(x), "%s/x\x1b[31m\xff", dir);
    ck_assert_int_eq(mkdir(x, 0777), 0);
    snprintf(r, sizeof(r), "%s/r", dir);
    snprintf(p, sizeof(p), "%s/s.json", dir);
    res = harness_hetsim((const char *[]){ "run", p, "-o", r, "--quiet", NULL });
    ck_assert_msg(res.status == 0, "run: exit %d\n%.300s", res.status, res.err);
    snprintf(p, sizeof(p), "%s/p", dir);
    res = harness_hetsim((const char *[]){ "plot", r, x, "-o", p, NULL });
    ck_assert_msg(res.status == 0, "plot: exit %d\n%.300s", res.status, res.err);
    ck_assert_msg(escaped(res.err, "skipped ") && escaped(res.err, "/x\\u001b[31m\\xff: not a run"),
                  "plot: %.300s", res.err);
    harness_cleanup(dir);
}
END_TEST

/* A sweep of protocol "a\u001b[31m\u00ff" at lr 0.1 and 0.2, seeds 1 and 2: lr 0.1 reaches
 * 0.8 at 1 s, lr 0.2 at 3 s. Its index.csv holds the protocol as the sweep writes a string,
 * the text of its JSON (a\u001b[31mÿ); `raw` writes it as bytes, "a<ESC>[31m<0xff>", as no
 * sweep writes it (an index edited). */
static void edge_sweep(const char *dir, bool raw)
{
    static const char *const lrs[] = { "0.1", "0.2" };
    char index[2048], bytes[2048], name[64], run[1024];
    size_t len = (size_t)snprintf(index, sizeof(index), "%s", harness_fake_index_head);
    size_t blen = (size_t)snprintf(bytes, sizeof(bytes), "%s", harness_fake_index_head);
    for (int l = 0; l < 2; l++)
        for (int seed = 1; seed <= 2; seed++) {
            snprintf(name, sizeof(name), "a-%s-%d", lrs[l], seed);
            harness_fake_run(run, sizeof(run), dir, name, l == 0 ? "0:0.1 1:0.85" : "0:0.1 3:0.85",
                             false);
            harness_write(run, "workers.csv", harness_fake_workers);
            harness_write(run, "run.json",
                          "{ \"scenario\": { \"stop\": { \"time_s\": 10, \"target_accuracy\": "
                          "0.8 }, \"eval\": { \"every_s\": 0.5 } } }\n");
            len += (size_t)snprintf(index + len, sizeof(index) - len,
                                    "%d,%s,a\\u001b[31m\xc3\xbf,%s,%d,time,5,0.85,0.85,,1000,0\n",
                                    2 * l + seed - 1, name, lrs[l], seed);
            blen += (size_t)snprintf(bytes + blen, sizeof(bytes) - blen,
                                     "%d,%s,a\x1b[31m\xff,%s,%d,time,5,0.85,0.85,,1000,0\n",
                                     2 * l + seed - 1, name, lrs[l], seed);
        }
    harness_fake_index(dir, index);
    if (raw)
        harness_write(dir, "index.csv", bytes);
}

/* report --best-over's warning that the best value is at the edge of the grid printed the
 * group's name and the value raw (fprintf), where sim_err_warn escapes them. A value of bytes
 * no sweep writes (issue 38: a swept value is its run's) is refused, its message escaped. */
START_TEST(the_best_over_edge_warning_escapes_its_names)
{
    char *dir = harness_tmpdir("probe31");
    edge_sweep(dir, false);
    const char *cmd[] = { "report", dir, "--by", "proto", "--best-over", "lr", NULL };
    result res = harness_hetsim(cmd);
    ck_assert_msg(res.status == 0, "exit %d\n%.300s", res.status, res.err);
    ck_assert_msg(escaped(res.err, "warning: proto=a\\u001b[31m\xc3\xbf: the best lr, 0.1, is at "
                                   "the edge"),
                  "%.300s", res.err);
    harness_cleanup(dir);
    dir = harness_tmpdir("probe31");
    edge_sweep(dir, true);
    cmd[1] = dir;
    res = harness_hetsim(cmd);
    ck_assert_msg(res.status == 2, "exit %d\n%.300s", res.status, res.err);
    ck_assert_msg(escaped(res.err, "index.csv: line 2: proto"), "%.300s", res.err);
    harness_cleanup(dir);
}
END_TEST

/* A sweep of protocol a, seeds 1 to 3, each reaching 0.8 at 1 s; seed 3's workers sent
 * 1,840,000 bytes and counted no samples. */
static void bytes_sweep(const char *dir)
{
    char index[2048], name[64], run[1024];
    size_t len = (size_t)snprintf(index, sizeof(index), "%s", harness_fake_index_head);
    for (int seed = 1; seed <= 3; seed++) {
        snprintf(name, sizeof(name), "a-%d", seed);
        harness_fake_run(run, sizeof(run), dir, name, "0:0.1 1:0.85", false);
        harness_write(run, "workers.csv",
                      seed < 3 ? harness_fake_workers
                               : "worker,speed,iterations,samples,compute_s,comm_s,wait_s,"
                                 "bytes_sent,bytes_received,down_s,params_fnv\n"
                                 "0,1,0,0,3,1,1,1840000,0,0,0\n");
        harness_write(run, "run.json",
                      "{ \"scenario\": { \"stop\": { \"time_s\": 10, \"target_accuracy\": "
                      "0.8 }, \"eval\": { \"every_s\": 0.5 } } }\n");
        len += (size_t)snprintf(index + len, sizeof(index) - len,
                                "%d,%s,a,0.1,%d,time,5,0.85,0.85,,1000,0\n", seed - 1, name, seed);
    }
    harness_fake_index(dir, index);
}

/* bytes sent/sample averaged the runs that counted samples, 2 of the row's 3, under a "runs"
 * column of 3, without a word (a run's bytes over no samples have no figure). The Markdown
 * cell says "(2 of 3 runs)", the caption how many runs the column leaves out, and the CSV a
 * column bytes_per_sample_runs. */
START_TEST(bytes_per_sample_says_how_many_runs_it_covers)
{
    char *dir = harness_tmpdir("probe31");
    bytes_sweep(dir);
    result res = harness_hetsim((const char *[]){ "report", dir, "--by", "proto", NULL });
    ck_assert_msg(res.status == 0, "md: exit %d\n%.300s", res.status, res.err);
    ck_assert_msg(strstr(res.out, "| 1840 ± 0 (2 of 3 runs) |") != NULL &&
                      strstr(res.out, "bytes sent/sample leaves out 1 run whose workers counted "
                                      "no samples") != NULL,
                  "md: %s", res.out);
    res =
        harness_hetsim((const char *[]){ "report", dir, "--by", "proto", "--format", "csv", NULL });
    ck_assert_msg(res.status == 0, "csv: exit %d\n%.300s", res.status, res.err);
    ck_assert_double_eq(harness_csv_field(res.out, "a", 1, "runs"), 3);
    ck_assert_double_eq(harness_csv_field(res.out, "a", 1, "bytes_per_sample_mean"), 1840);
    ck_assert_double_eq(harness_csv_field(res.out, "a", 1, "bytes_per_sample_runs"), 2);
    res =
        harness_hetsim((const char *[]){ "report", dir, "--by", "proto", "--format", "tex", NULL });
    ck_assert_msg(res.status == 0, "tex: exit %d\n%.300s", res.status, res.err);
    ck_assert_msg(strstr(res.out, "leaves out 1 run whose workers counted no samples") != NULL,
                  "tex: %s", res.out);
    harness_cleanup(dir);
}
END_TEST

Suite *test_suite(void)
{
    Suite *s = suite_create("probe31");
    TCase *stall = tcase_create("stall");
    tcase_add_test(stall, a_run_whose_workers_are_all_down_scores_its_last_model_whatever_every_s);
    tcase_set_timeout(stall, 120);
    suite_add_tcase(s, stall);
    TCase *down = tcase_create("down_from_start");
    tcase_add_test(down, a_worker_down_from_the_start_sends_nothing);
    tcase_set_timeout(down, 120);
    suite_add_tcase(s, down);
    TCase *names = tcase_create("names");
    tcase_add_test(names, the_sweeps_and_plots_lines_escape_their_directories);
    tcase_add_test(names, the_best_over_edge_warning_escapes_its_names);
    tcase_set_timeout(names, 120);
    suite_add_tcase(s, names);
    TCase *bytes = tcase_create("bytes");
    tcase_add_test(bytes, bytes_per_sample_says_how_many_runs_it_covers);
    tcase_set_timeout(bytes, 120);
    suite_add_tcase(s, bytes);
    return s;
}
