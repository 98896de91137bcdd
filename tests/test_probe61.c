/* Issue 38, a leftover of class 11 (report and plot --by reading damaged results silently): a
 * swept key missing from a point's run.json was compared with nothing. It is compared with its
 * index cell now: skipped only when the cell is empty, else refused naming the file, the key
 * and the row. Each case failed before its fix.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "harness.h"
#include "sim/cfg.h"

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
 * DIR/figs): both exit 2 naming each of `want` (up to 3, NULL-ended), or, with want NULL,
 * both exit 0. `what` names the case. */
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
    size_t head = (size_t)(at - text);
    memcpy(out, text, head);
    snprintf(out + head, n - head, "%s%s", by, at + strlen(find));
    return out;
}

/* run.json `text` with `assignment` (sim_cfg_override's) made, malloc'd. */
static char *overridden(const char *text, const char *assignment)
{
    sim_err err;
    sim_err_clear(&err);
    sim_cfg *root = sim_cfg_parse(text, strlen(text), NULL, &err);
    ck_assert_msg(root != NULL, "%s", err.msg);
    ck_assert_msg(sim_cfg_override(root, assignment, &err) == SIM_OK, "%s", err.msg);
    char *out = sim_cfg_print(root, true);
    ck_assert_ptr_nonnull(out);
    sim_cfg_destroy(root);
    return out;
}

/* A point's run.json whose swept "lr" was renamed "Lr" (a hand edit, or a run.json of another
 * tool), or whose "workload" was stored as a string: the index cell 0.1 was compared with
 * nothing, read silently, exit 0. Refused now, exit 2, naming index.csv's line, the key and
 * the run.json; the run.json as the sweep wrote it is read again. */
START_TEST(a_swept_key_missing_from_a_runs_json_is_refused)
{
    char *dir = harness_tmpdir("probe61");
    char sw[600], o[600], run[800];
    harness_write(dir, "s.json", base_json);
    harness_sweep_in(dir, NULL, lr_sweep, sw, o, sizeof(sw));
    snprintf(run, sizeof(run), "%s/workload.lr=0.1,seed=6", o);
    char *text = harness_slurp(run, "run.json");
    char *bad[] = { replaced(text, "\"lr\": 0.1", "\"Lr\": 0.1"),
                    overridden(text, "scenario.workload=softmax") };
    static const char *const cases[] = { "lr renamed Lr", "workload a string" };
    for (size_t k = 0; k < 2; k++) {
        harness_write(run, "run.json", bad[k]);
        const char *const want[] = { "index.csv: line 5: workload.lr (\"0.1\"; no such key there)",
                                     "workload.lr=0.1,seed=6/run.json", NULL };
        both(dir, o, want, cases[k]);
        free(bad[k]);
    }
    harness_write(run, "run.json", text);
    both(dir, o, NULL, "as written");
    free(text);
    harness_cleanup(dir);
}
END_TEST

Suite *test_suite(void)
{
    Suite *s = suite_create("probe61");
    TCase *results = tcase_create("results");
    tcase_add_test(results, a_swept_key_missing_from_a_runs_json_is_refused);
    tcase_set_timeout(results, 120);
    suite_add_tcase(s, results);
    return s;
}
