/* Issue 38, the nineteenth probe, classes 7 to 12 (sums of user numbers, non-finite totals, a
 * golden's consistency, results that depend on eval.every_s or --threads, damaged results
 * files, JSON oddities). Each case failed before its fix.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "harness.h"

typedef harness_result result;

/* A timing-only run (model none): no evaluation scores and no epoch is counted, so every row
 * of metrics.csv leaves test_loss, test_accuracy and epoch empty and summary.json has
 * final_accuracy, best_accuracy and epochs null. */
static const char timing_json[] =
    "{\"seed\": 5, \"workers\": 3, \"compute\": {\"iteration_ms\": 20},"
    " \"workload\": {\"model\": {\"name\": \"none\"}, \"batch\": 8, \"message_bytes\": 100000},"
    " \"protocol\": {\"name\": \"allreduce\"}, \"stop\": {\"time_s\": 0.3},"
    " \"eval\": {\"every_s\": 0.1}}";

static const char protocol_sweep[] =
    "{\"base\": \"s.json\", \"grid\": {\"protocol.name\": [\"allreduce\", \"gossip\"]},"
    " \"seeds\": 2}\n";

/* text, a metrics.csv, with the field of each column in `cols` (names, NULL-terminated) set to
 * `value` in every data row; malloc'd. */
static char *filled(const char *text, const char *const *cols, const char *value)
{
    size_t want[8], nwant = 0;
    for (const char *const *c = cols; *c != NULL; c++) {
        size_t k = 0;
        const char *at = strstr(text, *c);
        ck_assert_msg(at != NULL && nwant < 8, "no column %s", *c);
        for (const char *h = text; h < at; h++)
            k += *h == ',';
        want[nwant++] = k;
    }
    char *out = malloc(2 * strlen(text) + strlen(value) * 64 + 1);
    ck_assert_ptr_nonnull(out);
    size_t len = 0, field = 0, row = 0;
    bool put = false;
    for (const char *p = text; *p != '\0'; p++) {
        bool mine = false;
        for (size_t i = 0; i < nwant && row > 0; i++)
            mine = mine || want[i] == field;
        if (mine && *p != ',' && *p != '\n')
            continue; /* the old field's bytes */
        if (mine && !put) {
            len += (size_t)sprintf(out + len, "%s", value);
            put = true;
        }
        out[len++] = *p;
        put = put && *p != ',' && *p != '\n';
        field = *p == '\n' ? 0 : field + (*p == ',');
        row += *p == '\n';
    }
    out[len] = '\0';
    return out;
}

/* A timing-only run's metrics.csv with its test loss and accuracy filled in every row (0.9,
 * by hand, or another run's file copied in), beside its summary.json's final_accuracy null:
 * report --target 0.7 read a time to target of 0 s, "2/2" reached, and plot --by drew the
 * bar, exit 0, for runs that never scored an evaluation; its epoch filled in every row beside
 * epochs null, plot --by --x epoch drew the curve over epochs the run never counted. Both are
 * refused now, exit 2, naming the file and the summary's null; as written the sweep reports. */
START_TEST(a_timing_only_run_with_scores_filled_in_is_refused)
{
    char *dir = harness_tmpdir("probe58");
    char sw[600], o[600], run[800], figs[700];
    harness_write(dir, "s.json", timing_json);
    harness_sweep_in(dir, NULL, protocol_sweep, sw, o, sizeof(sw));
    snprintf(run, sizeof(run), "%s/protocol.name=allreduce,seed=6", o);
    result res = harness_hetsim(
        (const char *[]){ "report", o, "--by", "protocol.name", "--target", "0.7", NULL });
    ck_assert_msg(res.status == 0, "as written: exit %d\n%s", res.status, res.err);
    char *metrics = harness_slurp(run, "metrics.csv");
    static const char *const scores[] = { "test_loss", "test_accuracy", NULL };
    static const char *const epochs[] = { "epoch", NULL };
    static const char *const *const cols[] = { scores, epochs };
    static const char *const why[] = { "test_accuracy: a value in every row, where",
                                       "epoch: a value in every row, where" };
    static const char *const nulls[] = { "has final_accuracy null", "has epochs null" };
    for (size_t k = 0; k < 2; k++) {
        char *bad = filled(metrics, cols[k], "0.9");
        harness_write(run, "metrics.csv", bad);
        free(bad);
        snprintf(figs, sizeof(figs), "%s/figs%zu", dir, k);
        const char *const *cmds[] = {
            (const char *[]){ "report", o, "--by", "protocol.name", "--target", "0.7", NULL },
            (const char *[]){ "plot", "--by", "protocol.name", o, "--target", "0.7", "--x", "epoch",
                              "-o", figs, NULL },
        };
        for (size_t c = 0; c < 2; c++) {
            res = harness_hetsim(cmds[c]);
            ck_assert_msg(res.status == 2 && strstr(res.err, why[k]) != NULL &&
                              strstr(res.err, nulls[k]) != NULL &&
                              strstr(res.err, "metrics.csv") != NULL,
                          "%s filled, command %zu: exit %d\n%s%s", cols[k][0], c, res.status,
                          res.err, res.out);
        }
    }
    free(metrics);
    harness_cleanup(dir);
}
END_TEST

/* text with every `find` on the lines holding `on` replaced by `by`; malloc'd. */
static char *replaced_on(const char *text, const char *on, const char *find, const char *by)
{
    size_t n = strlen(text), cap = 2 * n + 4096, len = 0;
    char *out = malloc(cap);
    ck_assert_ptr_nonnull(out);
    for (const char *line = text; *line != '\0';) {
        const char *end = strchr(line, '\n');
        end = end != NULL ? end + 1 : line + strlen(line);
        bool mine = false;
        for (const char *p = line; p + strlen(on) <= end && !mine; p++)
            mine = strncmp(p, on, strlen(on)) == 0;
        for (const char *p = line; p < end;) {
            if (mine && (size_t)(end - p) >= strlen(find) && strncmp(p, find, strlen(find)) == 0) {
                len += (size_t)snprintf(out + len, cap - len, "%s", by);
                p += strlen(find);
            } else {
                out[len++] = *p++;
            }
        }
        line = end;
    }
    out[len] = '\0';
    return out;
}

/* Sets the mean throughput of protocol `name`'s runs (seeds 5 and 6) to `value`, in
 * index.csv and in each run's summary.json, as the sweep writes it (%.17g). */
static void set_throughput(const char *o, const char *name, double value)
{
    char dir[800], old[40], now[40], cell[128], key[128];
    snprintf(now, sizeof(now), "%.17g", value);
    for (int seed = 5; seed <= 6; seed++) {
        snprintf(dir, sizeof(dir), "%s/protocol.name=%s,seed=%d", o, name, seed);
        snprintf(old, sizeof(old), "%.17g", harness_summary_number(dir, "mean_throughput_sps"));
        char *sum = harness_slurp(dir, "summary.json");
        snprintf(key, sizeof(key), "\"mean_throughput_sps\": %s,", old);
        snprintf(cell, sizeof(cell), "\"mean_throughput_sps\": %s,", now);
        char *edited = replaced_on(sum, "mean_throughput_sps", key, cell);
        harness_write(dir, "summary.json", edited);
        free(edited);
        free(sum);
        char *index = harness_slurp(o, "index.csv");
        snprintf(key, sizeof(key), ",%s,", old);
        snprintf(cell, sizeof(cell), ",%s,", now);
        snprintf(dir, sizeof(dir), ",%s,%d,", name, seed);
        edited = replaced_on(index, dir, key, cell);
        harness_write(o, "index.csv", edited);
        free(edited);
        free(index);
    }
}

/* The longest run of decimal digits in `text`. */
static size_t longest_digits(const char *text)
{
    size_t most = 0, run = 0;
    for (; *text != '\0'; text++) {
        run = *text >= '0' && *text <= '9' ? run + 1 : 0;
        most = run > most ? run : most;
    }
    return most;
}

/* Throughputs within a results file's range, [0, 1e150], whose ratio is past a double: the
 * baseline's 1e-300 samples/s, the other row's 1e149 (index.csv and summary.json edited
 * alike, as a run's own figures). report --baseline printed the speed-up "inf" in every
 * format, exit 0; it prints "-" now, as over a mean of 0, the caption saying why. md and tex
 * wrote the 1e149 as a 150-digit number; from 1e15 on it is 1.000e+149 now. */
START_TEST(a_speed_up_past_a_double_is_none)
{
    char *dir = harness_tmpdir("probe58");
    char sw[600], o[600];
    harness_write(dir, "s.json", timing_json);
    harness_sweep_in(dir, NULL, protocol_sweep, sw, o, sizeof(sw));
    set_throughput(o, "allreduce", 1e-300);
    set_throughput(o, "gossip", 1e149);
    static const char *const formats[] = { "md", "csv", "tex" };
    for (size_t f = 0; f < 3; f++) {
        result res = harness_hetsim((const char *[]){ "report", o, "--by", "protocol.name",
                                                      "--baseline", "protocol.name=allreduce",
                                                      "--format", formats[f], NULL });
        ck_assert_msg(res.status == 0, "%s: exit %d\n%s", formats[f], res.status, res.err);
        ck_assert_msg(strstr(res.out, "inf") == NULL, "%s: a speed-up of inf\n%s", formats[f],
                      res.out);
        ck_assert_msg(longest_digits(res.out) <= 20, "%s: more digits than a double holds\n%s",
                      formats[f], res.out);
        if (f == 0)
            ck_assert_msg(strstr(res.out, "| - |") != NULL &&
                              strstr(res.out, "where the ratio is past a double") != NULL,
                          "md: no \"-\" and its caption\n%s", res.out);
    }
    harness_cleanup(dir);
}
END_TEST

/* A parameter server, BSP: sync_overhead_ms is read only when given, and 0 is none, as its
 * absence (the run's outputs are the same byte for byte). A check of the scenario with 0 spelt
 * out (0, -0 or 0.0) against a golden written without it was "the scenario differs from the
 * golden's ... in 1 key: protocol.sync_overhead_ms", exit 2, and the golden written with it
 * refused the scenario without; both pass now, as another spelling of one run; 0.5 still
 * differs. */
static const char ps_json[] =
    "{\"seed\": 5, \"workers\": 3, \"compute\": {\"iteration_ms\": 20},"
    " \"workload\": {\"dataset\": {\"name\": \"synthetic\", \"samples\": 400,"
    " \"test_samples\": 50}, \"model\": {\"name\": \"softmax\"}, \"batch\": 8, \"lr\": 0.05},"
    " \"protocol\": {\"name\": \"ps\"}, \"stop\": {\"time_s\": 0.2},"
    " \"eval\": {\"every_s\": 0.1, \"samples\": 50}}";

START_TEST(a_sync_overhead_of_zero_spelt_out_is_the_golden_s_scenario)
{
    char *dir = harness_tmpdir("probe58");
    char s[600], g[600], c[700];
    harness_golden_in(dir, ps_json, s, g, sizeof(s));
    static const char *const zeros[] = { "protocol.sync_overhead_ms=0",
                                         "protocol.sync_overhead_ms=-0",
                                         "protocol.sync_overhead_ms=0.0" };
    for (size_t z = 0; z < 3; z++) {
        snprintf(c, sizeof(c), "%s/c%zu", dir, z);
        result res = harness_hetsim(
            (const char *[]){ "check", s, "--golden", g, "--set", zeros[z], "-o", c, NULL });
        ck_assert_msg(res.status == 0 && strstr(res.out, "ok against") != NULL, "%s: exit %d\n%s%s",
                      zeros[z], res.status, res.err, res.out);
    }
    snprintf(c, sizeof(c), "%s/c-half", dir);
    result res = harness_hetsim((const char *[]){ "check", s, "--golden", g, "--set",
                                                  "protocol.sync_overhead_ms=0.5", "-o", c, NULL });
    ck_assert_msg(res.status == 2 && strstr(res.err, "protocol.sync_overhead_ms") != NULL,
                  "0.5: exit %d\n%s", res.status, res.err);
    /* The reverse: a golden written with 0 spelt out, checked without it. */
    snprintf(g, sizeof(g), "%s/g0", dir);
    res = harness_hetsim((const char *[]){ "check", s, "--golden", g, "--update", "--seeds", "3",
                                           "--set", "protocol.sync_overhead_ms=0", NULL });
    ck_assert_msg(res.status == 0, "update with 0: exit %d\n%s", res.status, res.err);
    snprintf(c, sizeof(c), "%s/c-absent", dir);
    res = harness_hetsim((const char *[]){ "check", s, "--golden", g, "-o", c, NULL });
    ck_assert_msg(res.status == 0 && strstr(res.out, "ok against") != NULL,
                  "absent against 0: exit %d\n%s%s", res.status, res.err, res.out);
    harness_cleanup(dir);
}
END_TEST

Suite *test_suite(void)
{
    Suite *s = suite_create("probe58");
    TCase *results = tcase_create("results");
    tcase_add_test(results, a_timing_only_run_with_scores_filled_in_is_refused);
    tcase_add_test(results, a_speed_up_past_a_double_is_none);
    tcase_set_timeout(results, 120);
    suite_add_tcase(s, results);
    TCase *golden = tcase_create("golden");
    tcase_add_test(golden, a_sync_overhead_of_zero_spelt_out_is_the_golden_s_scenario);
    tcase_set_timeout(golden, 240);
    suite_add_tcase(s, golden);
    return s;
}
