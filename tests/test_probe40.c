/* Issue 38, two leftovers of the goldens' consistency (class 9): a golden of a scenario whose
 * straggler rule draws its workers by "count" could not be written, and a scenario with its
 * keys in another order failed `check --exact`. Each case failed before its fix.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "harness.h"
#include "harness_check.h"

typedef harness_result result;

/* Four workers, two of them 2.3 times slower, drawn from the seed by the rule's count. */
static const char count_json[] =
    "{\"name\": \"c\", \"seed\": 5, \"workers\": 4,\n"
    " \"compute\": {\"iteration_ms\": 10, \"jitter_sigma\": 0.2},\n"
    " \"workload\": {\"model\": {\"name\": \"none\"}, \"message_bytes\": 4000},\n"
    " \"stragglers\": [{\"kind\": \"fixed\", \"count\": 2, \"slowdown\": 2.3}],\n"
    " \"protocol\": {\"name\": \"allreduce\"}, \"stop\": {\"time_s\": 0.3},\n"
    " \"eval\": {\"every_s\": 0.05}}\n";

/* The same run with worker 1 named, and two rules. */
static const char listed_json[] =
    "{\"name\": \"c\", \"seed\": 5, \"workers\": 4,\n"
    " \"compute\": {\"iteration_ms\": 10, \"jitter_sigma\": 0.2},\n"
    " \"workload\": {\"model\": {\"name\": \"none\"}, \"message_bytes\": 4000},\n"
    " \"stragglers\": [{\"kind\": \"fixed\", \"workers\": [1], \"slowdown\": 2.3},\n"
    "   {\"kind\": \"window\", \"workers\": [2], \"from_s\": 0.1, \"to_s\": 0.2, \"slowdown\": "
    "3}],\n"
    " \"protocol\": {\"name\": \"allreduce\"}, \"stop\": {\"time_s\": 0.3},\n"
    " \"eval\": {\"every_s\": 0.05}}\n";

/* listed_json with every object's keys in another order (the rules in theirs). */
static const char reordered_json[] =
    "{\"eval\": {\"every_s\": 0.05}, \"stop\": {\"time_s\": 0.3},\n"
    " \"protocol\": {\"name\": \"allreduce\"},\n"
    " \"stragglers\": [{\"slowdown\": 2.3, \"workers\": [1], \"kind\": \"fixed\"},\n"
    "   {\"to_s\": 0.2, \"slowdown\": 3, \"kind\": \"window\", \"from_s\": 0.1, \"workers\": "
    "[2]}],\n"
    " \"workload\": {\"message_bytes\": 4000, \"model\": {\"name\": \"none\"}},\n"
    " \"compute\": {\"jitter_sigma\": 0.2, \"iteration_ms\": 10},\n"
    " \"workers\": 4, \"seed\": 5, \"name\": \"c\"}\n";

/* `hetsim check DIR/NAME --golden DIR/GOLDEN` with `more` (NULL-terminated, at most 8): a check
 * writes into DIR/out, removed first; an update (more holding --update) writes 3 seeds. */
static result check(const char *dir, const char *name, const char *golden, const char *const *more)
{
    char s[600], g[600], o[600];
    snprintf(s, sizeof(s), "%s/%s", dir, name);
    snprintf(g, sizeof(g), "%s/%s", dir, golden);
    snprintf(o, sizeof(o), "%s/out", dir);
    chkt_sh("rm -rf '%s'", o);
    const char *argv[20] = { "check", s, "--golden", g };
    size_t n = 4;
    bool update = false;
    for (size_t i = 0; more[i] != NULL && i < 8; i++) {
        argv[n++] = more[i];
        update = update || strcmp(more[i], "--update") == 0;
    }
    if (update) {
        argv[n++] = "--seeds";
        argv[n++] = "3";
    } else {
        argv[n++] = "-o";
        argv[n++] = o;
    }
    argv[n] = NULL;
    return harness_hetsim(argv);
}

/* `r` exited `status` and said `text` (on its output or its error). */
static void expect(const result *r, int status, const char *text, const char *what)
{
    ck_assert_msg(
        r->status == status && (strstr(r->out, text) != NULL || strstr(r->err, text) != NULL),
        "%s: exit %d, expected %d and \"%s\"\n%s%s", what, r->status, status, text, r->out, r->err);
}

/* `hetsim check --update` of a scenario whose rule draws 2 workers by "count" exited 1, "a file
 * the scenario names changed during the update, no golden written: ...seed-6/run.json: a run of
 * another scenario than ...seed-5's (1 key differ: stragglers)": run.json held "count": null
 * and each seed's drawn workers, and the golden's seeds were compared with them. run.json keeps
 * the count as written beside the workers drawn, and a counted rule is compared by its count:
 * the golden is written, and a check of the unchanged scenario passes, statistical and
 * --exact; another count or slowdown is still another scenario. */
START_TEST(a_golden_of_a_rule_drawing_its_workers_by_count_is_written_and_checked)
{
    char *dir = harness_tmpdir("probe40");
    harness_write(dir, "s.json", count_json);
    result u = check(dir, "s.json", "g", (const char *[]){ "--update", NULL });
    expect(&u, 0, "golden written", "--update");
    char seed5[700];
    snprintf(seed5, sizeof(seed5), "%s/g/seed-5", dir);
    char *run = harness_slurp(seed5, "run.json");
    ck_assert_msg(strstr(run, "\"count\": 2,") != NULL && strstr(run, "\"workers\": [") != NULL,
                  "run.json keeps the count beside the workers drawn:\n%s", run);
    free(run);
    result c = check(dir, "s.json", "g", (const char *[]){ NULL });
    expect(&c, 0, "ok against", "check");
    result e = check(dir, "s.json", "g", (const char *[]){ "--exact", NULL });
    expect(&e, 0, "ok, every output byte as in", "check --exact");
    static const char *const others[] = { "stragglers[0].count=3", "stragglers[0].slowdown=2.4" };
    for (size_t i = 0; i < 2; i++) {
        result o = check(dir, "s.json", "g", (const char *[]){ "--set", others[i], NULL });
        expect(&o, 2, "differs from the golden's", others[i]);
        ck_assert_msg(strstr(o.err, "1 key: stragglers") != NULL, "%s", o.err);
    }
    harness_cleanup(dir);
}
END_TEST

/* A golden whose seed 6 is the run of another scenario, its hash in golden.json edited to
 * match: a counted rule's count or slowdown, or a rule's listed workers, changed. It is
 * refused naming the seed and "stragglers" (the comparison leaves out a counted rule's drawn
 * workers only). The counted golden could not be written before. */
START_TEST(a_golden_seed_of_another_count_slowdown_or_worker_list_is_refused)
{
    static const struct {
        const char *base, *set;
    } cases[] = {
        { count_json, "stragglers[0].count=3" },
        { count_json, "stragglers[0].slowdown=2.4" },
        { listed_json, "stragglers[0].workers=[3]" },
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char *dir = harness_tmpdir("probe40");
        harness_write(dir, "s.json", cases[i].base);
        result g = check(dir, "s.json", "g", (const char *[]){ "--update", NULL });
        expect(&g, 0, "golden written", "--update");
        result o =
            check(dir, "s.json", "o", (const char *[]){ "--update", "--set", cases[i].set, NULL });
        expect(&o, 0, "golden written", cases[i].set);
        chkt_sh("cd '%s' && h() { sed -n 's/.*\"scenario_hash\": \"\\([0-9a-f]*\\)\".*/\\1/p' "
                "$1/run.json; } && old=$(h g/seed-6) && new=$(h o/seed-6) && rm -r g/seed-6 && "
                "cp -r o/seed-6 g/ && sed -i \"s/$old/$new/\" g/golden.json",
                dir);
        result c = check(dir, "s.json", "g", (const char *[]){ NULL });
        expect(&c, 2, "seed-6/run.json: a run of another scenario than", cases[i].set);
        ck_assert_msg(strstr(c.err, "1 key differ: stragglers") != NULL, "%s", c.err);
        harness_cleanup(dir);
    }
}
END_TEST

/* run.json's scenario loads again to the same run: its counted rule holds the count and the
 * workers the seed drew, which the loader draws again and holds the listed ones to (another
 * seed draws others: refused, naming the rule's workers). */
START_TEST(a_run_json_of_a_counted_rule_loads_again_to_the_same_run)
{
    char *dir = harness_tmpdir("probe40");
    char s[600], r[600], r2[700], again[700];
    harness_run_in(dir, count_json, s, r, sizeof(s));
    char *rj = harness_slurp(r, "run.json");
    harness_write(dir, "again.json", harness_run_scenario(rj));
    free(rj);
    snprintf(again, sizeof(again), "%s/again.json", dir);
    snprintf(r2, sizeof(r2), "%s/r2", dir);
    result a = harness_hetsim((const char *[]){ "run", again, "-o", r2, "--quiet", NULL });
    ck_assert_msg(a.status == 0, "exit %d\n%s", a.status, a.err);
    char *one = harness_slurp(r, "run.json"), *two = harness_slurp(r2, "run.json");
    ck_assert_str_eq(one, two);
    free(one);
    free(two);
    snprintf(r2, sizeof(r2), "%s/r3", dir);
    bool refused = false;
    for (int seed = 6; seed < 12 && !refused; seed++) { /* a seed that draws other workers */
        char set[32];
        snprintf(set, sizeof(set), "seed=%d", seed);
        result b = harness_hetsim(
            (const char *[]){ "run", again, "-o", r2, "--quiet", "--set", set, NULL });
        refused = b.status == 2;
        ck_assert_msg(b.status == 2 || b.status == 0, "exit %d\n%s", b.status, b.err);
        if (refused)
            ck_assert_msg(strstr(b.err, "$.stragglers[0].workers: lists worker") != NULL, "%s",
                          b.err);
        chkt_sh("rm -rf '%s'", r2);
    }
    ck_assert_msg(refused, "seeds 6 to 11 all drew seed 5's workers");
    harness_cleanup(dir);
}
END_TEST

/* The golden's scenario with its keys in another order: its run.json follows that order and
 * its scenario_hash, the hash of that text, differs, so `check --exact` said "REGRESSION:
 * outputs differ ... run.json differs", exit 1, of the same run. run.json is compared key by
 * key: it passes; a value changed (with --allow-scenario-change) is still a regression naming
 * the key, and without it the scenario is refused as another. */
START_TEST(a_scenario_with_its_keys_reordered_passes_check_exact)
{
    char *dir = harness_tmpdir("probe40");
    harness_write(dir, "s.json", listed_json);
    harness_write(dir, "r.json", reordered_json);
    result g = check(dir, "s.json", "g", (const char *[]){ "--update", NULL });
    expect(&g, 0, "golden written", "--update");
    result c = check(dir, "r.json", "g", (const char *[]){ NULL });
    expect(&c, 0, "ok against", "check");
    result e = check(dir, "r.json", "g", (const char *[]){ "--exact", NULL });
    expect(&e, 0, "run.json key by key: the same keys and values, in another order", "--exact");
    const char *const lr[] = { "--exact", "--set", "workload.message_bytes=4001",
                               "--allow-scenario-change", NULL };
    result v = check(dir, "r.json", "g", lr);
    expect(&v, 1, "REGRESSION", "a value changed");
    ck_assert_msg(strstr(v.out, "run.json differs (scenario.workload.message_bytes)") != NULL, "%s",
                  v.out);
    result w = check(dir, "r.json", "g",
                     (const char *[]){ "--exact", "--set", "workload.message_bytes=4001", NULL });
    expect(&w, 2, "differs from the golden's", "a value changed, not allowed");
    harness_cleanup(dir);
}
END_TEST

Suite *test_suite(void)
{
    Suite *s = suite_create("probe40");
    TCase *count = tcase_create("count");
    tcase_add_test(count, a_golden_of_a_rule_drawing_its_workers_by_count_is_written_and_checked);
    tcase_add_test(count, a_golden_seed_of_another_count_slowdown_or_worker_list_is_refused);
    tcase_add_test(count, a_run_json_of_a_counted_rule_loads_again_to_the_same_run);
    tcase_set_timeout(count, 240);
    suite_add_tcase(s, count);
    TCase *order = tcase_create("order");
    tcase_add_test(order, a_scenario_with_its_keys_reordered_passes_check_exact);
    tcase_set_timeout(order, 240);
    suite_add_tcase(s, order);
    return s;
}
