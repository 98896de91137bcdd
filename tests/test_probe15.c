/* Issue 38, class 1 (files read while they change), the tenth probe's leftover: a trace or a
 * compute.profile edited while a sweep runs its points, and LIBSVM data edited while a sweep,
 * a check or an update runs. Every case failed before its fix: the later runs read the new
 * file, silently, exit 0.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <check.h>

#include "harness.h"
#include "models/train.h"
#include "scenario/scenario.h"
#include "sim/rng.h"

typedef harness_result result;

/* A timing-only scenario of 8 workers for 30 simulated s (about 0.2 s of a core), long
 * enough that a second process edits a file the scenario names while a later run starts; the
 * stragglers and the profile come from the sweep's grid. */
static const char timing_json[] =
    "{\"seed\": 5, \"workers\": 8, \"compute\": {\"iteration_ms\": 1},\n"
    " \"workload\": {\"model\": {\"name\": \"none\"}, \"message_bytes\": 4000},\n"
    " \"protocol\": {\"name\": \"allreduce\"}, \"stop\": {\"time_s\": 30},\n"
    " \"eval\": {\"every_s\": 1}}\n";

/* A softmax over LIBSVM data of two features, 200 simulated s (about 0.5 s). */
static const char libsvm_json[] =
    "{\"seed\": 5, \"workers\": 2, \"compute\": {\"iteration_ms\": 1},\n"
    " \"workload\": {\"model\": {\"name\": \"softmax\"}, \"batch\": 2,\n"
    "  \"dataset\": {\"name\": \"libsvm\", \"file\": \"d.svm\", \"test_fraction\": 0.25}},\n"
    " \"protocol\": {\"name\": \"allreduce\"}, \"stop\": {\"time_s\": 200},\n"
    " \"eval\": {\"every_s\": 1}}\n";

static const char svm_text[] = "0 1:0.5 2:1\n1 1:1.5 2:-1\n0 1:0.25 2:2\n1 1:2 2:-2\n"
                               "0 1:0.75 2:1.5\n1 1:1.25 2:-0.5\n0 1:0.6 2:1.2\n1 1:1.7 2:-1.1\n";
/* The same shape (8 examples, 2 features, 2 classes), other values. */
static const char svm_edited[] = "0 1:0.5 2:1\n1 1:1.5 2:-1\n0 1:0.25 2:2\n1 1:2 2:-2\n"
                                 "0 1:0.75 2:1.5\n1 1:1.25 2:-0.5\n0 1:0.6 2:1.2\n1 1:3.9 2:-7\n";

typedef harness_edit edit;

/* Runs `args` while a child saves `e` once `marker` is there, in time if before `until`
 * exists (NULL: while the marker does). */
static result run_with_edit(const char *const *args, edit *e, const char *marker, const char *until)
{
    harness_race race = { .marker = marker,
                          .until = until,
                          .change = harness_edit_save,
                          .again = harness_edit_undo,
                          .arg = e };
    return harness_hetsim_racing(args, &race);
}

/* Runs the sweep sw.json of `dir` into `o`, -j 1, of 4 seeds (5 to 8); the edit of `name`
 * from `original` into `text` comes once the first point's run is whole (its summary.json),
 * and counts if made before the last point's run began: `first` names the first point, the
 * last is the same with seed 8. */
static result sweep_with_edit(const char *dir, const char *o, const char *first, const char *name,
                              const char *original, const char *text)
{
    char sw[600], marker[900], until[900], last[300];
    snprintf(sw, sizeof(sw), "%s/sw.json", dir);
    snprintf(marker, sizeof(marker), "%s/%s/summary.json", o, first);
    snprintf(last, sizeof(last), "%s", first);
    char *seed = strstr(last, "seed=5");
    ck_assert_ptr_nonnull(seed);
    seed[5] = '8';
    snprintf(until, sizeof(until), "%s/%s.partial", o, last);
    edit e = { dir, name, text, original, o };
    return run_with_edit((const char *[]){ "sweep", sw, "-o", o, "-j", "1", "--quiet", NULL }, &e,
                         marker, until);
}

/* A sweep validates every point before running any, but each point's run read its trace and
 * its compute.profile again: a trace saved after the first point ran gave the later points a
 * worker four times slower, and a profile whose layers were split otherwise (the same totals,
 * so the same resolved scenario and run.json's scenario_hash) other bucket times; the sweep
 * said nothing, exit 0. Each later point now fails, named with the file and its JSON path,
 * exit 1, and a sweep run again once the file is stable completes the points left. */
START_TEST(a_trace_or_a_profile_edited_during_a_sweep_fails_the_later_points)
{
    static const char *const grids[] = {
        "{\"stragglers\": [[{\"kind\": \"trace\", \"file\": \"tr.csv\"}]]}",
        "{\"compute.profile\": [\"p.csv\"]}",
    };
    static const char *const names[] = { "tr.csv", "p.csv" };
    static const char *const texts[] = {
        "0,0,1.5\n",
        "name,params,forward_flops\nl1,1000,200000\nl2,500,100000\n",
    };
    static const char *const edited[] = {
        "0,0,6.25\n",
        "name,params,forward_flops\nl1,700,150000\nl2,800,150000\n",
    };
    static const char *const paths[] = { "$.stragglers[0].file", "$.compute.profile" };
    static const char *const firsts[] = { "stragglers.0.kind=trace,stragglers.0.file=tr.csv,seed=5",
                                          "compute.profile=p.csv,seed=5" };
    char *dir = harness_tmpdir("probe15");
    char text[400];
    harness_write(dir, "s.json", timing_json);
    for (int c = 0; c < 2; c++) {
        harness_write(dir, names[c], texts[c]);
        snprintf(text, sizeof(text), "{\"base\": \"s.json\", \"grid\": %s, \"seeds\": 4}\n",
                 grids[c]);
        harness_write(dir, "sw.json", text);
        char o[600], sw[600];
        snprintf(o, sizeof(o), "%s/o%d", dir, c);
        snprintf(sw, sizeof(sw), "%s/sw.json", dir);
        result res = sweep_with_edit(dir, o, firsts[c], names[c], texts[c], edited[c]);
        ck_assert_msg(res.status == 1, "case %d: exit %d\n%s%s", c, res.status, res.out, res.err);
        ck_assert_msg(strstr(res.err, "a file the scenario names changed during the sweep") !=
                              NULL &&
                          strstr(res.err, paths[c]) != NULL && strstr(res.err, names[c]) != NULL &&
                          strstr(res.err, "point 3 (") != NULL,
                      "case %d: %s", c, res.err);
        /* A trace's points and a profile's bytes are in run.json (traces_fnv, profile_fnv): the
         * points run before the edit are run again, not kept (no new directory needed). */
        ck_assert_msg(strstr(res.err, "run the sweep again into a new directory") == NULL,
                      "case %d: %s", c, res.err);
        /* Run again with the file as it stays: the points left run, exit 0. */
        res = harness_hetsim((const char *[]){ "sweep", sw, "-o", o, "-j", "1", "--quiet", NULL });
        ck_assert_msg(res.status == 0, "case %d, again: exit %d\n%s", c, res.status, res.err);
        /* The point run before the edit runs again, and the sweep is the one run whole after
         * the edit (a trace's points were in no output, and the point was kept). */
        char whole[600], a[900], b[900];
        snprintf(whole, sizeof(whole), "%s/whole%d", dir, c);
        int prefix = (int)(strlen(firsts[c]) - strlen("seed=5"));
        res = harness_hetsim(
            (const char *[]){ "sweep", sw, "-o", whole, "-j", "1", "--quiet", NULL });
        ck_assert_msg(res.status == 0, "whole: exit %d\n%s", res.status, res.err);
        for (int seed = 5; seed < 9; seed++) {
            snprintf(a, sizeof(a), "%s/%.*sseed=%d", o, prefix, firsts[c], seed);
            snprintf(b, sizeof(b), "%s/%.*sseed=%d", whole, prefix, firsts[c], seed);
            harness_expect_same_outputs(a, b);
        }
    }
    harness_cleanup(dir);
}
END_TEST

/* LIBSVM data is read by each run's set-up: a file saved while a sweep, an update or a check
 * ran made the later runs train on other examples under the same resolved scenario, silently,
 * exit 0 (the update wrote a golden of two data sets). Each is held to the first read: named
 * with the file and $.workload.dataset.file, exit 1, no golden written. */
START_TEST(libsvm_data_edited_during_a_sweep_an_update_or_a_check_is_named)
{
    char *dir = harness_tmpdir("probe15");
    char s[600], g[600], o[600], running[900], last[900];
    harness_write(dir, "s.json", libsvm_json);
    snprintf(s, sizeof(s), "%s/s.json", dir);
    snprintf(g, sizeof(g), "%s/g", dir);
    for (int c = 0; c < 3; c++) {
        harness_write(dir, "d.svm", svm_text);
        snprintf(o, sizeof(o), "%s/o%d", dir, c);
        result res;
        if (c == 0) {
            harness_write(dir, "sw.json",
                          "{\"base\": \"s.json\", \"grid\": {\"workers\": [2]}, \"seeds\": 4}\n");
            res = sweep_with_edit(dir, o, "workers=2,seed=5", "d.svm", svm_text, svm_edited);
        } else {
            if (c == 2) {
                res = harness_hetsim((const char *[]){ "check", s, "--golden", g, "--update",
                                                       "--seeds", "3", NULL });
                ck_assert_msg(res.status == 0, "%s", res.err);
            }
            snprintf(running, sizeof(running),
                     c == 1 ? "%s.partial/seed-5.partial" : "%s/seed-8.partial", c == 1 ? g : o);
            /* A run that reads the file edited under it fails at once (its marker gone): the
             * edit counts if made before the last seed's run began. */
            snprintf(last, sizeof(last),
                     c == 1 ? "%s.partial/seed-7.partial" : "%s/seed-11.partial", c == 1 ? g : o);
            edit e = { dir, "d.svm", svm_edited, svm_text, c == 1 ? g : o };
            res =
                run_with_edit(c == 1 ? (const char *[]){ "check", s, "--golden", g, "--update",
                                                         "--seeds", "3", NULL }
                                     : (const char *[]){ "check", s, "--golden", g, "-o", o, NULL },
                              &e, running, last);
            if (c == 1)
                ck_assert(!harness_exists(g));
        }
        ck_assert_msg(res.status == 1, "case %d: exit %d\n%s%s", c, res.status, res.out, res.err);
        ck_assert_msg(strstr(res.err, "$.workload.dataset.file") != NULL &&
                          strstr(res.err, "d.svm: its bytes are not those the first run read") !=
                              NULL,
                      "case %d: %s", c, res.err);
        /* Its seed or point named: by the hold of its load ("changed during the update"), or
         * by its run's set-up when the edit came between the two (a race of the test's). */
        ck_assert_msg(strstr(res.err, c == 0 ? "during the sweep" : "seed ") != NULL, "case %d: %s",
                      c, res.err);
    }
    harness_cleanup(dir);
}
END_TEST

/* A run's set-up reads the LIBSVM data again and holds it to the bytes its scenario's load
 * read; it said SIM_ESCENARIO (exit 2, bad input) where the load's own hold says SIM_EIO
 * (exit 1), so a check whose data was edited exited 1 or 2 by the instant of the edit (a CI
 * run of the test above failed so). Both are SIM_EIO, naming the file and its JSON path. */
START_TEST(data_edited_after_the_load_fails_the_set_up_as_the_hold_does)
{
    char *dir = harness_tmpdir("probe15");
    char s[600];
    harness_write(dir, "s.json", libsvm_json);
    harness_write(dir, "d.svm", svm_text);
    snprintf(s, sizeof(s), "%s/s.json", dir);
    sim_err err;
    sim_err_clear(&err);
    sim_scenario *sc = sim_scenario_load(s, NULL, 0, &err);
    ck_assert_msg(sc != NULL, "%s", err.msg);
    train_config tc;
    ck_assert_int_eq(train_config_read(sc, &tc, &err), SIM_OK);
    harness_write(dir, "d.svm", svm_edited);
    gsl_rng *data = sim_rng_create(sc->stream_seeds[SIM_STREAM_DATA]);
    gsl_rng *init = sim_rng_create(sc->stream_seeds[SIM_STREAM_INIT]);
    train *t = train_create(&tc, data, init, &err);
    ck_assert_ptr_null(t);
    ck_assert_msg(err.code == SIM_EIO, "code %d: %s", err.code, err.msg);
    ck_assert_str_eq(err.path, "$.workload.dataset.file");
    ck_assert_msg(strstr(err.msg, "d.svm: its bytes are not those the first run read") != NULL,
                  "%s", err.msg);
    gsl_rng_free(data);
    gsl_rng_free(init);
    sim_scenario_destroy(sc);
    harness_cleanup(dir);
}
END_TEST

/* What a load read, as the text a sweep gives its points' runs: each trace named by its
 * index up to SIM_SCENARIO_TRACES_NAMED of them, the one edited named by its JSON path and
 * file; past that many, one hash for all of them, named as $.stragglers. */
START_TEST(a_later_load_is_held_to_each_trace_the_first_read)
{
    char *dir = harness_tmpdir("probe15");
    char s[600];
    snprintf(s, sizeof(s), "%s/s.json", dir);
    size_t counts[] = { 2, SIM_SCENARIO_TRACES_NAMED + 1 };
    for (int c = 0; c < 2; c++) {
        harness_write(dir, "a.csv", "0,0,1\n"); /* many rules compound */
        harness_write(dir, "b.csv", "0.125,1,2.75\n");
        size_t size = 600 + counts[c] * 48, len = 0;
        char *json = malloc(size);
        ck_assert_ptr_nonnull(json);
        len += (size_t)snprintf(json + len, size - len,
                                "{\"seed\": 5, \"workers\": 3, \"workload\": {\"model\": "
                                "{\"name\": \"none\"}, \"message_bytes\": 4000}, \"protocol\": "
                                "{\"name\": \"allreduce\"}, \"stragglers\": [");
        for (size_t i = 0; i < counts[c]; i++)
            len += (size_t)snprintf(json + len, size - len,
                                    "%s{\"kind\": \"trace\", \"file\": \"%s.csv\"}",
                                    i > 0 ? ", " : "", i + 1 == counts[c] ? "b" : "a");
        snprintf(json + len, size - len, "]}\n");
        harness_write(dir, "s.json", json);
        free(json);
        sim_scenario *first = harness_load_file(s, NULL, 0);
        char *text = sim_scenario_inputs_text(first);
        ck_assert_ptr_nonnull(text);
        ck_assert_msg((strstr(text, ";t0=") != NULL) == (c == 0), "%s", text);
        ck_assert_msg((strstr(text, ";t=") != NULL) == (c == 1), "%s", text);
        sim_scenario *same = harness_load_file(s, NULL, 0);
        sim_err err;
        sim_err_clear(&err);
        ck_assert_int_eq(sim_scenario_inputs_hold(same, text, &err), SIM_OK);
        harness_write(dir, "b.csv", "0.125,1,2.5\n"); /* the last trace, one slowdown */
        sim_scenario *later = harness_load_file(s, NULL, 0);
        ck_assert_int_eq(sim_scenario_inputs_hold(later, text, &err), SIM_EIO);
        ck_assert_str_eq(err.path, c == 0 ? "$.stragglers[1].file" : "$.stragglers");
        ck_assert_msg(c == 1 || strstr(err.msg, "b.csv: its trace's points are not") != NULL, "%s",
                      err.msg);
        sim_err_clear(&err);
        ck_assert_int_eq(sim_scenario_same_inputs(first, later, &err), SIM_EIO);
        free(text);
        sim_scenario_destroy(first);
        sim_scenario_destroy(same);
        sim_scenario_destroy(later);
    }
    harness_cleanup(dir);
}
END_TEST

Suite *test_suite(void)
{
    Suite *s = suite_create("probe15");
    TCase *reads = tcase_create("reads");
    tcase_add_test(reads, a_trace_or_a_profile_edited_during_a_sweep_fails_the_later_points);
    tcase_add_test(reads, libsvm_data_edited_during_a_sweep_an_update_or_a_check_is_named);
    tcase_add_test(reads, data_edited_after_the_load_fails_the_set_up_as_the_hold_does);
    tcase_set_timeout(reads, 300); /* four racing sweeps: minutes under ASan on a loaded machine */
    TCase *text = tcase_create("text");
    tcase_add_test(text, a_later_load_is_held_to_each_trace_the_first_read);
    tcase_set_timeout(text, 30);
    suite_add_tcase(s, text);
    suite_add_tcase(s, reads);
    return s;
}
