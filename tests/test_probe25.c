/* Issue 38, thirteenth probe (classes 7-12): what summary.json reports of a run stopped by
 * time, a protocol's phases and the network's peak of flows, is the run's to its end whatever
 * eval.every_s; a check's --junit report never lands on the check's own temporaries, and it
 * and SVG figures stay XML whatever UTF-8 a path or a label holds; workers.csv's column totals
 * are held to the reader's bound; a Moshpit run groups again while a slow member still holds
 * a butterfly. Each case failed before its fix.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "harness.h"

typedef harness_result result;

/* A Sync-Switch run whose last event comes before its stop: from 0.721 s every message takes
 * 900 ms more, so nothing happens after the link window's end at 0.792 s but evaluations. */
static const char late_json[] =
    "{\"seed\": 7, \"workers\": 4, \"compute\": {\"iteration_ms\": 10, \"jitter_sigma\": 0.2},\n"
    " \"stragglers\": [{\"kind\": \"link\", \"workers\": [0, 1, 2], \"from_s\": 0.721,\n"
    "   \"to_s\": 0.792, \"bandwidth_factor\": 1e-06, \"extra_latency_ms\": 900}],\n"
    " \"workload\": {\"dataset\": {\"name\": \"synthetic\", \"samples\": 400,\n"
    "   \"test_samples\": 50}, \"model\": {\"name\": \"softmax\"}, \"batch\": 8, \"lr\": 0.1},\n"
    " \"protocol\": {\"name\": \"syncswitch\"}, \"stop\": {\"time_s\": 1},\n"
    " \"eval\": {\"samples\": 50}}\n";

/* syncswitch's time_bsp_s, time_asp_s and time_pause_s counted the phase open at the end up
 * to the last event dispatched, not to the run's end: with evaluations every 0.0137 s (the
 * last at 0.9864 s) time_asp_s was 0.927, with every_s 1000 (the last event the window's end)
 * 0.733, in a run of 1 s whose BSP phase took 0.059 s: the phases did not add up to
 * sim_time_s, and summary.json changed with the evaluation interval. A switch pause the stop
 * falls in (switch_pause_s 5) was counted the same way. The phases now end at the run's end,
 * the same for any every_s. */
START_TEST(syncswitch_phase_times_end_at_the_runs_end_whatever_every_s)
{
    char *dir = harness_tmpdir("probe25");
    harness_write(dir, "s.json", late_json);
    static const char *const everys[] = { "eval.every_s=0.0137", "eval.every_s=1000" };
    static const char *const pauses[] = { "protocol.switch_pause_s=0",
                                          "protocol.switch_pause_s=5" };
    char s[600], r[700];
    snprintf(s, sizeof(s), "%s/s.json", dir);
    for (size_t p = 0; p < 2; p++) {
        double asp[2];
        for (size_t e = 0; e < 2; e++) {
            snprintf(r, sizeof(r), "%s/r%zu%zu", dir, p, e);
            result res = harness_hetsim((const char *[]){ "run", s, "-o", r, "--set", everys[e],
                                                          "--set", pauses[p], "--quiet", NULL });
            ck_assert_msg(res.status == 0, "%s %s: exit %d\n%s", everys[e], pauses[p], res.status,
                          res.err);
            double end = harness_summary_number(r, "sim_time_s");
            double t = harness_report_value(r, "time_bsp_s") +
                       harness_report_value(r, "time_asp_s") +
                       harness_report_value(r, "time_pause_s");
            /* the three are each a count of ns printed to 17 digits: 1e-9 covers rounding */
            ck_assert_msg(end == 1.0, "%s %s: sim_time_s %.17g", everys[e], pauses[p], end);
            ck_assert_msg(t > end - 1e-9 && t < end + 1e-9, "%s %s: phases %.17g, run %.17g",
                          everys[e], pauses[p], t, end);
            asp[e] =
                harness_report_value(r, "time_asp_s") + harness_report_value(r, "time_pause_s");
        }
        ck_assert_msg(asp[0] == asp[1], "%s: %.17g with every_s 0.0137, %.17g with 1000", pauses[p],
                      asp[0], asp[1]);
    }
    harness_cleanup(dir);
}
END_TEST

/* An SGP run whose last event comes before its stop: from 0.282 s every NIC runs at 1e-6 of
 * its bandwidth, and after worker 0 fails at 0.339 s messages still start (a lone flow's
 * start, a solo's, is no event of its own) while none ends. */
static const char solo_json[] =
    "{\"seed\": 7, \"workers\": 5, \"compute\": {\"iteration_ms\": 10, \"jitter_sigma\": 0.2},\n"
    " \"stragglers\": [{\"kind\": \"link\", \"workers\": [0, 1, 2, 3, 4], \"from_s\": 0.282,\n"
    "   \"to_s\": 1.977, \"bandwidth_factor\": 1e-06},\n"
    "  {\"kind\": \"failure\", \"workers\": [0], \"at_s\": 0.339}],\n"
    " \"workload\": {\"dataset\": {\"name\": \"synthetic\", \"samples\": 400,\n"
    "   \"test_samples\": 50}, \"model\": {\"name\": \"softmax\"}, \"batch\": 8, \"lr\": 0.1},\n"
    " \"protocol\": {\"name\": \"sgp\"}, \"stop\": {\"time_s\": 1, \"iterations\": 116},\n"
    " \"eval\": {\"samples\": 50}}\n";

static long peak_flows(const char *dir)
{
    char *text = harness_slurp(dir, "summary.json");
    const char *at = strstr(text, "\"peak_flows\": ");
    ck_assert_ptr_nonnull(at);
    long n = strtol(at + strlen("\"peak_flows\": "), NULL, 10);
    free(text);
    return n;
}

/* summary.json's peak_flows counted the lone flows that started after the last event only at
 * a network call or an evaluation after their start: with every_s 1000 (no evaluation but at
 * 0 and the end) the flows that started between the run's last event and its stop by time
 * were not counted, 2, where any every_s up to 0.9 said 3. They are counted to the run's end. */
START_TEST(the_peak_of_flows_counts_to_the_runs_end_whatever_every_s)
{
    char *dir = harness_tmpdir("probe25");
    harness_write(dir, "s.json", solo_json);
    static const char *const everys[] = { "eval.every_s=0.0137", "eval.every_s=0.9",
                                          "eval.every_s=1000" };
    char s[600], r[700];
    snprintf(s, sizeof(s), "%s/s.json", dir);
    long peak[3];
    for (size_t e = 0; e < 3; e++) {
        snprintf(r, sizeof(r), "%s/r%zu", dir, e);
        result res = harness_hetsim(
            (const char *[]){ "run", s, "-o", r, "--set", everys[e], "--quiet", NULL });
        ck_assert_msg(res.status == 0, "%s: exit %d\n%s", everys[e], res.status, res.err);
        peak[e] = peak_flows(r);
    }
    ck_assert_msg(peak[0] == 3 && peak[1] == 3 && peak[2] == 3,
                  "peak_flows %ld, %ld and %ld with every_s 0.0137, 0.9 and 1000", peak[0], peak[1],
                  peak[2]);
    harness_cleanup(dir);
}
END_TEST

/* check --junit refused a report over the check's own files in its output directory (OUT/check.png)
 * but not over their temporaries: --junit OUT/check.png.tmp wrote the report there, exit 0, a
 * file the next check into OUT removes as its own temporary (docs/usage.md: whatever holds the
 * name loses it), the report gone without a word. The temporaries are the check's own files:
 * refused as they are, exit 2, nothing written. */
START_TEST(a_junit_report_over_a_checks_own_temporary_is_refused)
{
    char *dir = harness_tmpdir("probe25");
    char s[600], g[600], o[700], j[800];
    harness_golden_in(dir, harness_quick_json, s, g, sizeof(s));
    snprintf(o, sizeof(o), "%s/o", dir);
    result first = harness_hetsim((const char *[]){ "check", s, "--golden", g, "-o", o, NULL });
    ck_assert_msg(first.status == 0, "check: exit %d\n%s", first.status, first.err);
    static const char *const names[] = { "check.png.tmp", "check.csv.tmp", "check-golden.csv.tmp",
                                         "check-run.csv.tmp" };
    char before[128], after[128];
    for (size_t i = 0; i < 4; i++) {
        snprintf(j, sizeof(j), "%s/%s", o, names[i]);
        harness_tree_digest(dir, before, sizeof(before));
        result res = harness_hetsim(
            (const char *[]){ "check", s, "--golden", g, "-o", o, "--junit", j, NULL });
        harness_tree_digest(dir, after, sizeof(after));
        ck_assert_msg(res.status == 2, "%s: exit %d\n%s", names[i], res.status, res.err);
        ck_assert_msg(strstr(res.err, "is the check's own output") != NULL, "%s: %s", names[i],
                      res.err);
        ck_assert_msg(strcmp(before, after) == 0, "%s: the tree changed", names[i]);
    }
    harness_cleanup(dir);
}
END_TEST

/* True when the file at `path` holds the UTF-8 of U+FFFE or U+FFFF, which XML refuses. */
static bool holds_nonchar(const char *path)
{
    char *text = harness_read(path, NULL);
    bool found = strstr(text, "\xef\xbf\xbe") != NULL || strstr(text, "\xef\xbf\xbf") != NULL;
    free(text);
    return found;
}

/* U+FFFE and U+FFFF are well-formed UTF-8 but no XML characters: a golden whose path held one
 * made check's --junit report no XML ("not well-formed (invalid token)" in Python's parser,
 * which CI tools refuse) and plot --by --format svg with such a --label or --title drew SVG
 * figures that are no XML, exit 0 (a byte that is no UTF-8 was already written \xff in the
 * report, '_' in a figure). The report writes them \uFFFE and \uFFFF, a figure '_'. */
START_TEST(a_noncharacter_leaves_a_junit_report_and_svg_figures_xml)
{
    char *dir = harness_tmpdir("probe25");
    char s[600], g[600], moved[700], o[700], j[700], sw[600], so[600], p[700], f[800];
    harness_golden_in(dir, harness_quick_json, s, g, sizeof(s));
    snprintf(moved, sizeof(moved), "%s/g\xef\xbf\xbex\xef\xbf\xbf", dir);
    ck_assert_int_eq(rename(g, moved), 0);
    snprintf(o, sizeof(o), "%s/co", dir);
    snprintf(j, sizeof(j), "%s/r.xml", dir);
    result res = harness_hetsim(
        (const char *[]){ "check", s, "--golden", moved, "-o", o, "--junit", j, NULL });
    ck_assert_msg(res.status == 0, "check: exit %d\n%s", res.status, res.err);
    ck_assert_msg(!holds_nonchar(j), "the report holds U+FFFE or U+FFFF");
    char *xml = harness_read(j, NULL);
    ck_assert_msg(strstr(xml, "g\\uFFFEx\\uFFFF") != NULL, "%s", xml);
    free(xml);
    harness_sweep_in(dir, NULL, harness_protocols_sweep, sw, so, sizeof(sw));
    snprintf(p, sizeof(p), "%s/p", dir);
    result plot = harness_hetsim((const char *[]){ "plot", so, "--by", "protocol.name", "--format",
                                                   "svg", "-o", p, "--label",
                                                   "allreduce=a\xef\xbf\xbf"
                                                   "b",
                                                   "--title", "t\xef\xbf\xbet", NULL });
    ck_assert_msg(plot.status == 0, "plot --by: exit %d\n%s", plot.status, plot.err);
    /* a timing-only model's runs: the breakdown figure alone, with the title and the label */
    snprintf(f, sizeof(f), "%s/breakdown-by-protocol.name.svg", p);
    ck_assert_msg(!holds_nonchar(f), "the figure holds U+FFFE or U+FFFF");
    harness_cleanup(dir);
}
END_TEST

static const char svm_text[] = "0 1:0.5 2:1\n1 1:1.5 2:-1\n0 1:0.25 2:2\n1 1:2 2:-2\n"
                               "0 1:0.75 2:1.5\n1 1:1.25 2:-0.5\n0 1:0.6 2:1.2\n1 1:1.7 2:-1.1\n";

/* plot RUN_A RUN_B labels each line with the sweep point's overrides: a point of a LIBSVM
 * file named with U+FFFE drew SVG figures that are no XML, exit 0. */
START_TEST(a_noncharacter_in_a_points_label_leaves_svg_figures_xml)
{
    char *dir = harness_tmpdir("probe25");
    harness_write(dir, "d\xef\xbf\xbe.svm", svm_text);
    harness_write(dir, "e.svm", svm_text);
    harness_write(dir, "s.json",
                  "{\"seed\": 5, \"workers\": 2, \"compute\": {\"iteration_ms\": 1},\n"
                  " \"workload\": {\"model\": {\"name\": \"softmax\"}, \"batch\": 2,\n"
                  "  \"dataset\": {\"name\": \"libsvm\", \"file\": \"e.svm\"}},\n"
                  " \"protocol\": {\"name\": \"allreduce\"}, \"stop\": {\"time_s\": 2},\n"
                  " \"eval\": {\"every_s\": 1}}\n");
    char sw[600], o[600], a[800], b[800], p[700], f[800];
    harness_sweep_in(dir, NULL,
                     "{\"base\": \"s.json\", \"grid\": {\"workload.dataset.file\":"
                     " [\"d\xef\xbf\xbe.svm\", \"e.svm\"]}, \"seeds\": 1}",
                     sw, o, sizeof(sw));
    snprintf(a, sizeof(a), "%s/workload.dataset.file=d___.svm,seed=5", o);
    snprintf(b, sizeof(b), "%s/workload.dataset.file=e.svm,seed=5", o);
    snprintf(p, sizeof(p), "%s/p", dir);
    result plot =
        harness_hetsim((const char *[]){ "plot", a, b, "--format", "svg", "-o", p, NULL });
    ck_assert_msg(plot.status == 0, "plot: exit %d\n%s", plot.status, plot.err);
    static const char *const figures[] = { "convergence.svg", "throughput.svg", "breakdown.svg" };
    for (size_t i = 0; i < 3; i++) {
        snprintf(f, sizeof(f), "%s/%s", p, figures[i]);
        ck_assert_msg(!holds_nonchar(f), "%s holds U+FFFE", figures[i]);
    }
    harness_cleanup(dir);
}
END_TEST

/* Rewrites workers.csv in `run`: every row's bytes_sent `bytes`, samples 1 in the first row
 * and `rest` in the others. */
static void set_workers(const char *run, const char *bytes, const char *rest)
{
    char cmd[2048];
    snprintf(cmd, sizeof(cmd),
             "cd '%s' && awk -F, -v OFS=, 'NR == 1 { print; next } { if (\"%s\" != \"\") $8 = "
             "\"%s\"; $4 = NR == 2 ? \"1\" : \"%s\"; print }' workers.csv > w.tmp && mv w.tmp "
             "workers.csv",
             run, bytes, bytes, rest);
    ck_assert_int_eq(system(cmd), 0);
}

/* The strict reader held each number of workers.csv to 1e150, but report sums them over the
 * workers: 24,000 workers of a run each with bytes_sent 1e150 (a whole number, within the
 * bound) and one sample made bytes sent/sample 2.4e154, and its 95% interval over two runs "±
 * inf" (Markdown, "inf" in CSV, $... \pm inf$ in TeX), exit 0: the table class 11 refuses.
 * Each column's total over the workers is held to the same 1e150, naming the file and the
 * column. */
START_TEST(a_workers_column_whose_total_passes_the_bound_is_refused)
{
    char *dir = harness_tmpdir("probe25");
    char sw[600], o[600], a[800], b[800];
    harness_sweep_in(dir,
                     "{\"seed\": 5, \"workers\": 24000, \"compute\": {\"iteration_ms\": 10},\n"
                     " \"workload\": {\"model\": {\"name\": \"none\"}, \"message_bytes\": 4000},\n"
                     " \"protocol\": {\"name\": \"gossip\"}, \"stop\": {\"time_s\": 0.001},\n"
                     " \"eval\": {\"every_s\": 0.001}}\n",
                     "{\"base\": \"s.json\", \"grid\": {\"protocol.name\": [\"gossip\"]}, "
                     "\"seeds\": 2}",
                     sw, o, sizeof(sw));
    snprintf(a, sizeof(a), "%s/protocol.name=gossip,seed=5", o);
    snprintf(b, sizeof(b), "%s/protocol.name=gossip,seed=6", o);
    set_workers(a, "1e150", "0");
    set_workers(b, "", "0");
    static const char *const formats[] = { "md", "csv", "tex" };
    for (size_t f = 0; f < 3; f++) {
        result res = harness_hetsim(
            (const char *[]){ "report", o, "--by", "protocol.name", "--format", formats[f], NULL });
        ck_assert_msg(res.status == 2, "%s: exit %d\n%s%s", formats[f], res.status, res.out,
                      res.err);
        ck_assert_msg(strstr(res.err, "workers.csv: bytes_sent: the workers' total 2.4e+154 is "
                                      "above 1e+150") != NULL,
                      "%s: %s", formats[f], res.err);
    }
    harness_cleanup(dir);
}
END_TEST

/* Moshpit's training runs (the key form without global rounds) made n / min_group_size
 * butterflies, one a group, but a group's members end its butterfly at different times: those
 * done group again while a slow one still holds it. 3 workers, worker 0 behind slow link
 * windows (and down from 0.061 to 0.274 s): its new group found no free butterfly, "moshpit:
 * more groups than butterflies", exit 1, at any every_s and thread count. One more is made as
 * a group needs it (at most one a worker). */
START_TEST(moshpit_groups_again_while_a_slow_member_holds_a_butterfly)
{
    char *dir = harness_tmpdir("probe25");
    harness_write(
        dir, "s.json",
        "{\"seed\": 7, \"workers\": 3, \"compute\": {\"iteration_ms\": 10, \"jitter_sigma\": "
        "0.2},\n"
        " \"stragglers\": [{\"kind\": \"link\", \"workers\": [0], \"from_s\": 0.491, \"to_s\": "
        "0.797,\n"
        "   \"bandwidth_factor\": 0.01, \"extra_latency_ms\": 50},\n"
        "  {\"kind\": \"link\", \"workers\": [0, 2], \"from_s\": 0.679, \"to_s\": 2.665,\n"
        "   \"bandwidth_factor\": 0.01, \"extra_latency_ms\": 50},\n"
        "  {\"kind\": \"failure\", \"workers\": [0], \"at_s\": 0.061, \"recover_s\": 0.274}],\n"
        " \"workload\": {\"dataset\": {\"name\": \"synthetic\", \"samples\": 400,\n"
        "   \"test_samples\": 50}, \"model\": {\"name\": \"softmax\"}, \"batch\": 8, \"lr\": "
        "0.1},\n"
        " \"protocol\": {\"name\": \"moshpit\"}, \"stop\": {\"time_s\": 1},\n"
        " \"eval\": {\"every_s\": 0.0137, \"samples\": 50}}\n");
    char s[600], r[700];
    snprintf(s, sizeof(s), "%s/s.json", dir);
    snprintf(r, sizeof(r), "%s/r", dir);
    result res = harness_hetsim((const char *[]){ "run", s, "-o", r, "--quiet", NULL });
    ck_assert_msg(res.status == 0, "exit %d\n%s", res.status, res.err);
    ck_assert_double_eq(harness_summary_number(r, "sim_time_s"), 1.0);
    ck_assert_msg(harness_report_value(r, "groups") > 0, "no group formed");
    harness_cleanup(dir);
}
END_TEST

/* check compared the scenario with the golden's key by key with cJSON_Compare, which takes two
 * numbers within a relative DBL_EPSILON as equal: `check --set workload.lr=0.30000000000000004`
 * against a golden of lr 0.3 (the runs use the value exactly: another scenario) said "ok
 * against G", exit 0, where the scenario differs from the golden's (exit 2, naming
 * workload.lr, unless --allow-scenario-change). Values are compared exactly; the same double
 * spelt otherwise is the same scenario. */
START_TEST(a_scenario_one_ulp_from_the_goldens_differs_from_it)
{
    char *dir = harness_tmpdir("probe25");
    char s[600], g[600], o[700];
    harness_golden_in(
        dir,
        "{\"seed\": 5, \"workers\": 3, \"compute\": {\"iteration_ms\": 10},\n"
        " \"workload\": {\"dataset\": {\"name\": \"synthetic\", \"samples\": 400,\n"
        "   \"test_samples\": 50}, \"model\": {\"name\": \"softmax\"}, \"batch\": 8,\n"
        "   \"lr\": 0.3}, \"protocol\": {\"name\": \"allreduce\"},\n"
        " \"stop\": {\"time_s\": 0.2}, \"eval\": {\"every_s\": 0.05, \"samples\": 50}}\n",
        s, g, sizeof(s));
    snprintf(o, sizeof(o), "%s/co", dir);
    result res = harness_hetsim((const char *[]){ "check", s, "--golden", g, "-o", o, "--set",
                                                  "workload.lr=0.30000000000000004", NULL });
    ck_assert_msg(res.status == 2, "exit %d\n%s%s", res.status, res.out, res.err);
    ck_assert_msg(strstr(res.err, "the scenario differs from the golden's") != NULL &&
                      strstr(res.err, "workload.lr") != NULL,
                  "%s", res.err);
    /* the same double spelt otherwise is the same scenario */
    result same = harness_hetsim((const char *[]){ "check", s, "--golden", g, "-o", o, "--set",
                                                   "workload.lr=3e-1", "--exact", NULL });
    ck_assert_msg(same.status == 0, "3e-1: exit %d\n%s", same.status, same.err);
    harness_cleanup(dir);
}
END_TEST

Suite *test_suite(void)
{
    Suite *s = suite_create("probe25");
    TCase *every = tcase_create("every_s");
    tcase_add_test(every, syncswitch_phase_times_end_at_the_runs_end_whatever_every_s);
    tcase_add_test(every, the_peak_of_flows_counts_to_the_runs_end_whatever_every_s);
    tcase_set_timeout(every, 120);
    suite_add_tcase(s, every);
    TCase *own = tcase_create("own_files");
    tcase_add_test(own, a_junit_report_over_a_checks_own_temporary_is_refused);
    tcase_set_timeout(own, 120);
    suite_add_tcase(s, own);
    TCase *xml = tcase_create("xml");
    tcase_add_test(xml, a_noncharacter_leaves_a_junit_report_and_svg_figures_xml);
    tcase_add_test(xml, a_noncharacter_in_a_points_label_leaves_svg_figures_xml);
    tcase_set_timeout(xml, 120);
    suite_add_tcase(s, xml);
    TCase *totals = tcase_create("totals");
    tcase_add_test(totals, a_workers_column_whose_total_passes_the_bound_is_refused);
    tcase_set_timeout(totals, 120);
    suite_add_tcase(s, totals);
    TCase *groups = tcase_create("groups");
    tcase_add_test(groups, moshpit_groups_again_while_a_slow_member_holds_a_butterfly);
    tcase_set_timeout(groups, 120);
    suite_add_tcase(s, groups);
    TCase *exact = tcase_create("exact");
    tcase_add_test(exact, a_scenario_one_ulp_from_the_goldens_differs_from_it);
    tcase_set_timeout(exact, 120);
    suite_add_tcase(s, exact);
    return s;
}
