/* `hetsim report` from a sweep to a paper's table, through the built binary ($HETSIM): a group
 * that pools values of an unreduced swept key is refused, several --by keys, --where,
 * --best-over tuned on other seeds (--tune-seeds) with its grid and the grid-edge warning,
 * the time-to-target rules, speed-ups with Fieller's interval worked out by hand, and the
 * LaTeX table. Each case writes a sweep directory by hand (index.csv, and each run's
 * metrics.csv, workers.csv and run.json), so that every number is known. */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <check.h>

#include "harness.h"

/* A run directory `name` under `sweep`: metrics.csv from "t:acc t:acc ..." (time_s and
 * test_accuracy; the other columns made up), workers.csv of one worker, run.json with stop
 * target 0.8 (none when `target` is false) and evaluations every 0.5 s. */
static void run_dir(const char *sweep, const char *name, const char *curve, bool target)
{
    char dir[1024], text[256];
    harness_fake_run(dir, sizeof(dir), sweep, name, curve, false);
    harness_write(dir, "workers.csv", harness_fake_workers);
    snprintf(text, sizeof(text),
             "{ \"scenario\": { \"stop\": { \"time_s\": 10%s }, \"eval\": { \"every_s\": 0.5 } } "
             "}\n",
             target ? ", \"target_accuracy\": 0.8" : "");
    harness_write(dir, "run.json", text);
}

/* A sweep of protocols a and b, lr 0.1, 0.2 and 0.3, seeds 1 to 4: a at lr 0.1 reaches 0.8 at
 * 1 s on seeds 1 and 2 and at 4 s on seeds 3 and 4; at lr 0.2 at 3 s on every seed; at lr
 * 0.3 never (final 0.7). b reaches it at 2 s at every rate. */
static char *lr_sweep(void)
{
    char *dir = harness_tmpdir("groups"), name[64], curve[128];
    static const char *const protos[] = { "a", "b" }, *const lrs[] = { "0.1", "0.2", "0.3" };
    char *index = calloc(1, 16384);
    size_t len = (size_t)snprintf(index, 16384, "%s", harness_fake_index_head);
    int point = 0;
    for (int p = 0; p < 2; p++)
        for (int l = 0; l < 3; l++)
            for (int seed = 1; seed <= 4; seed++) {
                double t = p == 1 ? 2 : l == 0 ? (seed <= 2 ? 1 : 4) : l == 1 ? 3 : NAN;
                snprintf(name, sizeof(name), "%s-%s-%d", protos[p], lrs[l], seed);
                if (isnan(t))
                    snprintf(curve, sizeof(curve), "0:0.1 5:0.7");
                else
                    snprintf(curve, sizeof(curve), "0:0.1 %g:0.85 5:0.86", t);
                run_dir(dir, name, curve, true);
                len += (size_t)snprintf(index + len, 16384 - len,
                                        "%d,%s,%s,%s,%d,time,5,%s,%s,,1000,0\n", point++, name,
                                        protos[p], lrs[l], seed, isnan(t) ? "0.7" : "0.86",
                                        isnan(t) ? "0.7" : "0.86");
            }
    harness_fake_index(dir, index);
    free(index);
    return dir;
}

static harness_result report(const char *dir, const char *const *more)
{
    const char *args[32] = { "report", dir };
    size_t n = 2;
    for (; more[n - 2] != NULL; n++)
        args[n] = more[n - 2];
    args[n] = NULL;
    return harness_hetsim(args);
}

START_TEST(a_group_mixing_values_of_an_unreduced_key_is_refused_naming_the_key_and_the_ways_out)
{
    char *dir = lr_sweep(), out[1100];
    harness_result r = report(dir, (const char *[]){ "--by", "proto", NULL });
    ck_assert_int_eq(r.status, 2);
    ck_assert_str_eq(r.out, "");
    ck_assert_msg(strstr(r.err, "group proto=a mixes 3 values of lr (0.1, 0.2, 0.3)") != NULL &&
                      strstr(r.err, "--by proto,lr") != NULL &&
                      strstr(r.err, "--best-over lr") != NULL &&
                      strstr(r.err, "--where lr=0.1") != NULL,
                  "%s", r.err);
    /* The figures refuse it too, before anything is written. */
    snprintf(out, sizeof(out), "%s/fig", dir);
    r = harness_hetsim((const char *[]){ "plot", dir, "--by", "proto", "-o", out, NULL });
    ck_assert_int_eq(r.status, 2);
    ck_assert_ptr_nonnull(strstr(r.err, "mixes 3 values of lr"));
    ck_assert(!harness_exists(out));
    /* Two values of one key kept by --where still pool. */
    r = report(dir,
               (const char *[]){ "--by", "proto", "--where", "lr=0.1", "--where", "lr=0.2", NULL });
    ck_assert_int_eq(r.status, 2);
    ck_assert_ptr_nonnull(strstr(r.err, "mixes 2 values of lr (0.1, 0.2)"));
    harness_cleanup(dir);
}
END_TEST

START_TEST(several_by_keys_give_a_column_each_and_where_keeps_one_value)
{
    char *dir = lr_sweep();
    harness_result r = report(dir, (const char *[]){ "--by", "proto,lr", "--format", "csv", NULL });
    ck_assert_msg(r.status == 0, "%s", r.err);
    ck_assert_ptr_eq(strstr(r.out, "proto,lr,runs,target,reached,"), r.out);
    ck_assert_double_eq(harness_csv_field(r.out, "a,0.1", 2, "ttt_mean_s"), 2.5);
    ck_assert_double_eq(harness_csv_field(r.out, "a,0.2", 2, "runs"), 4);
    ck_assert_double_eq(harness_csv_field(r.out, "a,0.3", 2, "reached"), 0);
    ck_assert_double_eq(harness_csv_field(r.out, "b,0.3", 2, "ttt_mean_s"), 2);
    /* A value written another way is the same number. */
    r = report(dir,
               (const char *[]){ "--by", "proto", "--where", "lr=0.20", "--format", "csv", NULL });
    ck_assert_msg(r.status == 0, "%s", r.err);
    ck_assert_double_eq(harness_csv_field(r.out, "a", 1, "runs"), 4);
    ck_assert_double_eq(harness_csv_field(r.out, "a", 1, "ttt_mean_s"), 3);
    r = report(dir, (const char *[]){ "--by", "proto", "--where", "lr=0.9", NULL });
    ck_assert_int_eq(r.status, 2);
    ck_assert_ptr_nonnull(strstr(r.err, "no runs with results pass the --where filters"));
    const char *const *bad[] = {
        (const char *[]){ "--by", "proto", "--where", "lr", NULL },
        (const char *[]){ "--by", "proto", "--where", "nosuch=1", NULL },
        (const char *[]){ "--by", "proto,proto", NULL },
        (const char *[]){ "--by", "proto", "--best-over", "seed", NULL },
        (const char *[]){ "--by", "proto,lr", "--best-over", "lr", NULL },
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        r = report(dir, bad[i]);
        ck_assert_msg(r.status == 2 && r.out[0] == '\0', "case %zu: exit %d", i, r.status);
    }
    harness_cleanup(dir);
}
END_TEST

START_TEST(tuning_on_some_seeds_reports_the_others_and_warns_at_the_grid_edge)
{
    char *dir = lr_sweep();
    /* On every seed a is best at lr 0.1 (mean 2.5 s against 3): the grid's edge. */
    harness_result r = report(
        dir, (const char *[]){ "--by", "proto", "--best-over", "lr", "--format", "csv", NULL });
    ck_assert_msg(r.status == 0, "%s", r.err);
    ck_assert_double_eq(harness_csv_field(r.out, "a", 1, "lr"), 0.1);
    ck_assert_double_eq(harness_csv_field(r.out, "a", 1, "runs"), 4);
    ck_assert_double_eq(harness_csv_field(r.out, "a", 1, "ttt_mean_s"), 2.5);
    ck_assert_msg(strstr(r.err, "warning: proto=a: the best lr, 0.1, is at the edge") != NULL, "%s",
                  r.err);
    /* Tuned on seeds 3 and 4 (lr 0.1: 4 s, lr 0.2: 3 s), reported on seeds 1 and 2. */
    r = report(dir, (const char *[]){ "--by", "proto", "--best-over", "lr", "--tune-seeds", "3-4",
                                      "--format", "csv", NULL });
    ck_assert_msg(r.status == 0, "%s", r.err);
    ck_assert_double_eq(harness_csv_field(r.out, "a", 1, "lr"), 0.2);
    ck_assert_double_eq(harness_csv_field(r.out, "a", 1, "runs"), 2);
    ck_assert_double_eq(harness_csv_field(r.out, "a", 1, "ttt_mean_s"), 3);
    ck_assert_ptr_null(strstr(r.err, "proto=a: the best lr")); /* 0.2 is inside the grid */
    r = report(
        dir, (const char *[]){ "--by", "proto", "--best-over", "lr", "--tune-seeds", "3,4", NULL });
    ck_assert_msg(r.status == 0, "%s", r.err);
    ck_assert_msg(strstr(r.out, "(2 seeds: 1-2, every row); each row at its best lr, chosen on "
                                "seeds 3,4 and reported on the others") != NULL,
                  "%s", r.out);
    /* b is as fast at every rate: the choice is within the intervals of the others. */
    ck_assert_msg(strstr(r.out, "b: at the edge of the values swept, and within the 95% "
                                "intervals of lr=0.2 and lr=0.3") != NULL,
                  "%s", r.out);
    /* The grid: every cell's figures, the chosen one marked. */
    r = report(dir, (const char *[]){ "--by", "proto", "--best-over", "lr", "--tune-seeds", "3-4",
                                      "--grid", NULL });
    ck_assert_msg(r.status == 0, "%s", r.err);
    ck_assert_msg(strstr(r.out, "| a | 0.1 | 2 | 4.000 ± 0 | 2/2 |") != NULL &&
                      strstr(r.out, "| a | 0.2 | 2 | 3.000 ± 0 | 2/2 | 0.8600 ± 0 | * |") != NULL &&
                      strstr(r.out, "| a | 0.3 | 2 | - | 0/2 |") != NULL,
                  "%s", r.out);
    const char *const *bad[] = {
        (const char *[]){ "--by", "proto", "--tune-seeds", "1", NULL },
        (const char *[]){ "--by", "proto", "--best-over", "lr", "--tune-seeds", "1-4", NULL },
        (const char *[]){ "--by", "proto", "--best-over", "lr", "--tune-seeds", "4-1", NULL },
        (const char *[]){ "--by", "proto", "--best-over", "lr", "--tune-seeds", "x", NULL },
        (const char *[]){ "--by", "proto,lr", "--grid", NULL },
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        r = report(dir, bad[i]);
        ck_assert_msg(r.status == 2 && r.out[0] == '\0', "case %zu: exit %d %s", i, r.status,
                      r.err);
    }
    harness_cleanup(dir);
}
END_TEST

/* Two runs of one protocol: r1 crosses 0.8 at 1 s, falls to 0.7 and stays above from 3 s
 * (moving mean of 3 at or above 0.8 first at 5 s: 0.55, 0.79, 0.787, 0.83); r2 crosses at
 * 1 s and ends below. */
static char *rule_sweep(const char *reason)
{
    char *dir = harness_tmpdir("groups"), text[1024];
    run_dir(dir, "r1", "0:0.1 1:0.85 2:0.7 3:0.82 4:0.84 5:0.83", true);
    run_dir(dir, "r2", "0:0.1 1:0.9 2:0.7", true);
    snprintf(text, sizeof(text),
             "%s0,r1,a,0.1,1,time,5,0.83,0.85,1,100,0\n"
             "1,r2,a,0.1,2,%s,2,0.7,0.9,1,100,0\n",
             harness_fake_index_head, reason);
    harness_fake_index(dir, text);
    return dir;
}

START_TEST(time_to_target_follows_the_rule_first_moving_average_or_sustained)
{
    char *dir = rule_sweep("time");
    harness_result r = report(dir, (const char *[]){ "--by", "proto", "--format", "csv", NULL });
    ck_assert_msg(r.status == 0, "%s", r.err);
    ck_assert_double_eq(harness_csv_field(r.out, "a", 1, "ttt_mean_s"), 1);
    ck_assert_double_eq(harness_csv_field(r.out, "a", 1, "reached"), 2);
    ck_assert_double_eq(harness_csv_field(r.out, "a", 1, "ended_below"), 1);
    ck_assert_ptr_nonnull(strstr(r.err, "warning: 1 runs reached 0.8 and ended below it"));
    r = report(dir,
               (const char *[]){ "--by", "proto", "--ttt", "movavg:3", "--format", "csv", NULL });
    ck_assert_msg(r.status == 0, "%s", r.err);
    ck_assert_double_eq(harness_csv_field(r.out, "a", 1, "ttt_mean_s"), 5);
    ck_assert_double_eq(harness_csv_field(r.out, "a", 1, "reached"), 1);
    ck_assert_double_eq(harness_csv_field(r.out, "a", 1, "censored_after_s"), 2);
    r = report(dir, (const char *[]){ "--by", "proto", "--ttt", "sustained", NULL });
    ck_assert_msg(r.status == 0, "%s", r.err);
    ck_assert_msg(strstr(r.out, "| a | 2 | 3.000 | 1/2 (others > 2) |") != NULL &&
                      strstr(r.out, "time to 0.8: the first evaluation from which the test "
                                    "accuracy stays at least 0.8 to the end of the run") != NULL,
                  "%s", r.out);
    for (size_t i = 0; i < 3; i++) {
        static const char *const bad[] = { "movavg:1", "movavg:", "last" };
        r = report(dir, (const char *[]){ "--by", "proto", "--ttt", bad[i], NULL });
        ck_assert_int_eq(r.status, 2);
    }
    harness_cleanup(dir);
    /* A run stopped at its target ends at the first crossing: only "first" is defined. */
    dir = rule_sweep("target_accuracy");
    r = report(dir, (const char *[]){ "--by", "proto", "--ttt", "sustained", NULL });
    ck_assert_int_eq(r.status, 2);
    ck_assert_ptr_nonnull(strstr(r.err, "r2 stopped at its target accuracy"));
    r = report(dir, (const char *[]){ "--by", "proto", NULL });
    ck_assert_msg(r.status == 0, "%s", r.err);
    harness_cleanup(dir);
}
END_TEST

/* Speed-ups: the baseline's times 4.1, 5.3 and 4.7 s, the row's 2.2, 2.9 and 2.5 s. Fieller's
 * 95% interval for the ratio of the means, worked out apart (scipy: t quantile at the
 * Welch-Satterthwaite 3.97 degrees of freedom, 2.78387): 1.855263, [1.367650, 2.536706]. */
static char *speed_sweep(void)
{
    char *dir = harness_tmpdir("groups"), name[32], curve[64];
    static const double t[2][3] = { { 4.1, 5.3, 4.7 }, { 2.2, 2.9, 2.5 } };
    static const char *const protos[] = { "allreduce", "hpsgd" };
    char index[4096];
    size_t len = (size_t)snprintf(index, sizeof(index), "%s", harness_fake_index_head);
    for (int p = 0; p < 2; p++)
        for (int s = 0; s < 3; s++) {
            snprintf(name, sizeof(name), "%s-%d", protos[p], s);
            snprintf(curve, sizeof(curve), "0:0.1 %g:0.85 6:0.86", t[p][s]);
            run_dir(dir, name, curve, true);
            len += (size_t)snprintf(index + len, sizeof(index) - len,
                                    "%d,%s,%s,0.1,%d,time,6,0.86,0.86,,%d,0\n", 3 * p + s, name,
                                    protos[p], s + 1, 12345 + 1000 * p + 10 * s);
        }
    harness_fake_index(dir, index);
    return dir;
}

START_TEST(speed_ups_against_a_baseline_match_fiellers_interval_worked_out_apart)
{
    char *dir = speed_sweep();
    harness_result r = report(dir, (const char *[]){ "--by", "proto", "--baseline",
                                                     "proto=allreduce", "--format", "csv", NULL });
    ck_assert_msg(r.status == 0, "%s", r.err);
    /* 1e-6: the published digits of the hand computation */
    ck_assert_double_eq_tol(harness_csv_field(r.out, "hpsgd", 1, "speedup"), 1.855263, 1e-6);
    ck_assert_double_eq_tol(harness_csv_field(r.out, "hpsgd", 1, "speedup_lo"), 1.367650, 1e-6);
    ck_assert_double_eq_tol(harness_csv_field(r.out, "hpsgd", 1, "speedup_hi"), 2.536706, 1e-6);
    ck_assert(isnan(harness_csv_field(r.out, "allreduce", 1, "speedup")));
    r = report(dir, (const char *[]){ "--by", "proto", "--baseline", "proto=allreduce", NULL });
    ck_assert_msg(r.status == 0, "%s", r.err);
    ck_assert_msg(strstr(r.out, "| 1 (baseline) |") != NULL &&
                      strstr(r.out, "| 1.86 [1.37, 2.54] |") != NULL &&
                      strstr(r.out, "Fieller's 95% interval") != NULL,
                  "%s", r.out);
    static const char *const bases[] = { "lr=0.1", "proto=nosuch", "proto" };
    for (size_t i = 0; i < 3; i++) {
        r = report(dir, (const char *[]){ "--by", "proto", "--baseline", bases[i], NULL });
        ck_assert_msg(r.status == 2, "%s: exit %d", bases[i], r.status);
    }
    harness_cleanup(dir);
}
END_TEST

START_TEST(latex_tables_use_booktabs_display_names_units_and_say_what_they_are)
{
    char *dir = speed_sweep();
    harness_result r = report(
        dir, (const char *[]){ "--by", "proto", "--baseline", "proto=allreduce", "--format", "tex",
                               "--label", "proto=Protocol", "--label", "hpsgd=HP-SGD & co", NULL });
    ck_assert_msg(r.status == 0, "%s", r.err);
    const char *want[] = {
        "\\begin{tabular}{lrrrrrrrrrr}\n\\toprule\nProtocol & Runs & Time to 0.8 (s) & Reached & "
        "Speed-up & Final acc.\\ (\\%) & Best acc.\\ (\\%) & Throughput (k samples/s) & Sent "
        "(kB/sample) & Waiting (\\%) & Comm.\\ (\\%) \\\\\n\\midrule\n",
        /* proto is no protocol key: allreduce stays itself; the label is escaped */
        "allreduce & 3 & $4.7 \\pm 1.5$ & 3/3 & 1 (baseline) & $86.0 \\pm 0.0$",
        "HP-SGD \\& co & 3 & $2.5 \\pm 0.9$ & 3/3 & 1.86 [1.37, 2.54] &",
        /* one precision a column: 12.355 and 13.355 k samples/s, 1.84 kB a sample */
        "& $12.355 \\pm 0.025$ & $1.84 \\pm 0.00$",
        "& $13.355 \\pm 0.025$ & $1.84 \\pm 0.00$",
        "\\bottomrule\n\\end{tabular}\n\\caption{Mean $\\pm$ 95\\% Student-t interval over the "
        "runs of each row (3 seeds: 1-3, every row)",
        "time to 0.8: the first evaluation at test accuracy at least 0.8, over the runs that "
        "reached it (censored: a run that did not counts as ``$>$ T''",
        "evaluations every 0.5 s (the resolution of the times to target); speed-up: "
        "proto=allreduce's mean time to target over the row's, Fieller's 95\\% interval",
        "\\label{tab:hetsim-proto}\n\\end{table}\n",
    };
    for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
        ck_assert_msg(strstr(r.out, want[i]) != NULL, "no\n%s\nin\n%s", want[i], r.out);
    ck_assert_ptr_eq(strstr(r.out, "\\begin{table}[t]\n"), r.out);
    /* A key's column header starts with a capital, as the others do: "Proto", "Best lr". */
    r = report(dir, (const char *[]){ "--by", "proto", "--format", "tex", NULL });
    ck_assert_msg(r.status == 0, "%s", r.err);
    ck_assert_msg(strstr(r.out, "\\toprule\nProto & Runs & ") != NULL, "%s", r.out);
    harness_cleanup(dir);
}
END_TEST

/* A real sweep of string values that look like other JSON or hold escapes: the scenario's
 * name as "q\"uote", "back\\slash", "1", "[1]" and "true" (index.csv writes each as its text
 * inside the JSON quotes: q\"uote, back\\slash, 1, [1], true). */
static char *string_sweep(void)
{
    char *dir = harness_tmpdir("groups"), s[600], o[600];
    harness_write(dir, "tiny.json",
                  "{ \"name\": \"tiny\", \"seed\": 5, \"workers\": 3, \"compute\": { "
                  "\"iteration_ms\": 10 },\n  \"workload\": { \"dataset\": { \"name\": "
                  "\"synthetic\", \"samples\": 2000, \"dim\": 16, \"classes\": 4 },\n"
                  "  \"model\": { \"name\": \"softmax\" }, \"batch\": 16, \"lr\": 0.05 },\n"
                  "  \"protocol\": { \"name\": \"allreduce\" },\n  \"stop\": { \"time_s\": 0.5, "
                  "\"target_accuracy\": 0.5 }, \"eval\": { \"every_s\": 0.25, \"samples\": 200 } "
                  "}\n");
    harness_sweep_in(
        dir, NULL,
        "{ \"base\": \"tiny.json\", \"seeds\": 1, \"grid\": { \"name\": [\"q\\\"uote\", "
        "\"back\\\\slash\", \"1\", \"[1]\", \"true\"] } }\n",
        s, o, sizeof(s));
    return dir;
}

/* Replaces the first `from` in dir/o/index.csv with `to`. */
static void edit_index(const char *dir, const char *from, const char *to)
{
    char path[600], text[8192], out[8300];
    snprintf(path, sizeof(path), "%s/o/index.csv", dir);
    harness_read_into(path, text, sizeof(text));
    char *at = strstr(text, from);
    ck_assert_msg(at != NULL, "no %s in %s", from, text);
    snprintf(out, sizeof(out), "%.*s%s%s", (int)(at - text), text, to, at + strlen(from));
    snprintf(path, sizeof(path), "%s/o", dir);
    harness_write(path, "index.csv", out);
}

/* index.csv's values are held to the runs' as what they were written from (issue 38): a swept
 * string that looks like a number, an array or a boolean ("1", "[1]", "true") or holds an
 * escape ("q\"uote") is its run's (report and plot --by refused the sweep, "name differ from
 * the run's", exit 2), and an index edited stays refused, a string turned into another
 * string or into what its text would be as JSON. */
START_TEST(index_values_that_look_like_json_are_held_to_the_strings_they_were_written_from)
{
    char *dir = string_sweep(), sw[600], fig[600];
    snprintf(sw, sizeof(sw), "%s/o", dir);
    snprintf(fig, sizeof(fig), "%s/fig", dir);
    harness_result r = report(sw, (const char *[]){ "--by", "name", "--format", "csv", NULL });
    ck_assert_msg(r.status == 0, "report: exit %d: %s", r.status, r.err);
    ck_assert_msg(strstr(r.out, "\n\"q\\\"\"uote\",1,") != NULL &&
                      strstr(r.out, "\nback\\\\slash,1,") != NULL &&
                      strstr(r.out, "\n1,1,") != NULL && strstr(r.out, "\n[1],1,") != NULL &&
                      strstr(r.out, "\ntrue,1,") != NULL,
                  "%s", r.out);
    r = harness_hetsim((const char *[]){ "plot", sw, "--by", "name", "-o", fig, NULL });
    ck_assert_msg(r.status == 0, "plot: exit %d: %s", r.status, r.err);
    static const char *const edits[][2] = {
        { ",1,5,", ",2,5," },                    /* "1" edited into "2" */
        { ",true,5,", ",false,5," },             /* "true" into "false" */
        { "\"q\\\"\"uote\"", "\"q\\\"\"uot\"" }, /* q"uote into q"uot */
        { ",[1],5,", ",[2],5," },                /* "[1]" into "[2]" */
    };
    for (size_t i = 0; i < sizeof(edits) / sizeof(edits[0]); i++) {
        edit_index(dir, edits[i][0], edits[i][1]);
        r = report(sw, (const char *[]){ "--by", "name", NULL });
        ck_assert_msg(r.status == 2 && strstr(r.err, ": name differ from the run's in ") != NULL,
                      "edit %zu: exit %d: %s", i, r.status, r.err);
        edit_index(dir, edits[i][1], edits[i][0]);
    }
    harness_cleanup(dir);
}
END_TEST

/* --where takes a string value as the text it is (q"uote, back\slash) or as index.csv writes
 * it, inside JSON quotes with its escapes (q\"uote, back\\slash), where the text alone
 * matched nothing (issue 38); a value that is neither still matches nothing. */
START_TEST(where_takes_a_string_as_its_text_or_as_index_csv_writes_it)
{
    char *dir = string_sweep(), sw[600];
    snprintf(sw, sizeof(sw), "%s/o", dir);
    static const char *const kept[][2] = {
        { "name=q\"uote", "\"q\\\"\"uote\",1," },
        { "name=q\\\"uote", "\"q\\\"\"uote\",1," },
        { "name=back\\slash", "back\\\\slash,1," },
        { "name=back\\\\slash", "back\\\\slash,1," },
        { "name=[1]", "[1],1," },
        { "name=1", "1,1," },
    };
    for (size_t i = 0; i < sizeof(kept) / sizeof(kept[0]); i++) {
        harness_result r = report(
            sw, (const char *[]){ "--by", "name", "--where", kept[i][0], "--format", "csv", NULL });
        ck_assert_msg(r.status == 0 &&
                          strstr(strchr(r.out, '\n') + 1, kept[i][1]) == strchr(r.out, '\n') + 1 &&
                          strchr(strchr(r.out, '\n') + 1, '\n')[1] == '\0',
                      "%s: exit %d: %s%s", kept[i][0], r.status, r.out, r.err);
    }
    static const char *const none[] = { "name=q", "name=q\\\\\"uote", "name=back\\\\\\slash" };
    for (size_t i = 0; i < sizeof(none) / sizeof(none[0]); i++) {
        harness_result r = report(sw, (const char *[]){ "--by", "name", "--where", none[i], NULL });
        ck_assert_msg(r.status == 2 &&
                          strstr(r.err, "no runs with results pass the --where") != NULL,
                      "%s: exit %d: %s", none[i], r.status, r.err);
    }
    harness_cleanup(dir);
}
END_TEST

Suite *test_suite(void)
{
    Suite *s = suite_create("groups");
    TCase *g = tcase_create("groups");
    tcase_add_test(
        g, a_group_mixing_values_of_an_unreduced_key_is_refused_naming_the_key_and_the_ways_out);
    tcase_add_test(g, several_by_keys_give_a_column_each_and_where_keeps_one_value);
    tcase_add_test(g, tuning_on_some_seeds_reports_the_others_and_warns_at_the_grid_edge);
    tcase_set_timeout(g, 120);
    suite_add_tcase(s, g);
    TCase *t = tcase_create("tables");
    tcase_add_test(t, time_to_target_follows_the_rule_first_moving_average_or_sustained);
    tcase_add_test(t, speed_ups_against_a_baseline_match_fiellers_interval_worked_out_apart);
    tcase_add_test(t, latex_tables_use_booktabs_display_names_units_and_say_what_they_are);
    tcase_set_timeout(t, 120);
    suite_add_tcase(s, t);
    TCase *v = tcase_create("values");
    tcase_add_test(v,
                   index_values_that_look_like_json_are_held_to_the_strings_they_were_written_from);
    tcase_add_test(v, where_takes_a_string_as_its_text_or_as_index_csv_writes_it);
    tcase_set_timeout(v, 120);
    suite_add_tcase(s, v);
    return s;
}
