/* Issue 38, the twentieth probe (classes 7 to 12: sums of user numbers, non-finite totals,
 * goldens, results depending on every_s or --threads, report and plot --by reading damaged
 * results, JSON oddities). Each case failed before its fix.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "harness.h"

typedef harness_result result;

/* A sweep of two learning rates, two seeds each (5 and 6). */
static const char base_json[] =
    "{\"seed\": 5, \"workers\": 3, \"compute\": {\"iteration_ms\": 20},"
    " \"workload\": {\"dataset\": {\"name\": \"synthetic\", \"samples\": 400,"
    " \"test_samples\": 50}, \"model\": {\"name\": \"softmax\"}, \"batch\": 8, \"lr\": 0.05},"
    " \"protocol\": {\"name\": \"allreduce\"}, \"stop\": {\"time_s\": 0.2},"
    " \"eval\": {\"every_s\": 0.1, \"samples\": 50}}";
static const char lr_sweep[] =
    "{\"base\": \"s.json\", \"grid\": {\"workload.lr\": [0.05, 0.1]}, \"seeds\": 2}\n";

/* `report --by workload.lr` and `plot --by workload.lr` of the sweep `o` (figures into
 * DIR/figs): both exit 2 naming each of `want` (NULL-ended), or, with want NULL, both exit 0.
 * `what` names the case. */
static void both(const char *dir, const char *o, const char *const *want, const char *what)
{
    char figs[700];
    snprintf(figs, sizeof(figs), "%s/figs", dir);
    const char *const *cmds[] = {
        (const char *[]){ "report", o, "--by", "workload.lr", NULL },
        (const char *[]){ "plot", "--by", "workload.lr", o, "-o", figs, NULL },
    };
    for (size_t c = 0; c < 2; c++) {
        result res = harness_hetsim(cmds[c]);
        ck_assert_msg(res.status == (want != NULL ? 2 : 0), "%s, %s: exit %d\n%s%s", what,
                      cmds[c][0], res.status, res.out, res.err);
        for (size_t k = 0; want != NULL && want[k] != NULL; k++)
            ck_assert_msg(strstr(res.err, want[k]) != NULL, "%s, %s: no \"%s\" in\n%s", what,
                          cmds[c][0], want[k], res.err);
    }
}

/* text with the first `find` replaced by `by` (which must be there), malloc'd. */
static char *replaced(const char *text, const char *find, const char *by)
{
    const char *at = strstr(text, find);
    ck_assert_msg(at != NULL, "no \"%s\" in\n%.400s", find, text);
    size_t n = strlen(text) - strlen(find) + strlen(by) + 1;
    char *out = malloc(n);
    ck_assert_ptr_nonnull(out);
    snprintf(out, n, "%.*s%s%s", (int)(at - text), text, by, at + strlen(find));
    return out;
}

/* A point's run.json without its swept "lr" (renamed "Lr") beside its index cell emptied: the
 * empty cell was skipped, the row read silently as a group "" of one run whose rate nobody
 * knows, exit 0 (the cell alone emptied is refused). No sweep writes an empty cell (a string
 * value must not be empty): refused now, exit 2, naming the key and the run.json. */
START_TEST(an_empty_cell_does_not_hide_a_key_missing_from_run_json)
{
    char *dir = harness_tmpdir("probe64");
    char sw[600], o[600], run[800];
    harness_write(dir, "s.json", base_json);
    harness_sweep_in(dir, NULL, lr_sweep, sw, o, sizeof(sw));
    snprintf(run, sizeof(run), "%s/workload.lr=0.1,seed=6", o);
    char *text = harness_slurp(run, "run.json"), *index = harness_slurp(o, "index.csv");
    char *renamed = replaced(text, "\"lr\": 0.1", "\"Lr\": 0.1");
    char *emptied = replaced(index, ",0.1,6,", ",,6,");
    harness_write(run, "run.json", renamed);
    harness_write(o, "index.csv", emptied);
    const char *const want[] = { "index.csv: line 5: workload.lr (\"\"; no such key there)",
                                 "workload.lr=0.1,seed=6/run.json", NULL };
    both(dir, o, want, "lr renamed Lr, its cell emptied");
    harness_write(run, "run.json", text);
    harness_write(o, "index.csv", index);
    both(dir, o, NULL, "as written");
    free(renamed);
    free(emptied);
    free(text);
    free(index);
    harness_cleanup(dir);
}
END_TEST

Suite *test_suite(void)
{
    Suite *s = suite_create("probe64");
    TCase *results = tcase_create("results");
    tcase_add_test(results, an_empty_cell_does_not_hide_a_key_missing_from_run_json);
    tcase_set_timeout(results, 120);
    suite_add_tcase(s, results);
    return s;
}
