/* Issue 38's tenth probe, classes 13-19: a golden's fingerprint with a line appended, taken
 * by check --exact as a regression of the code; a run's summary.json cut mid-file, which let
 * plot RUN draw a metrics.csv row past the run's end; a --names line refused without its
 * cause; options of validate, bench, sweep and check misused, refused for another cause or
 * not at all. Every case failed before its fix.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "harness.h"
#include "sim/err.h"
#include "sim/text.h"

typedef harness_result result;

/* A sweep of two points, 2 and 3 workers, over s.json. */
static const char workers_sweep[] = "{\"base\": \"s.json\", \"grid\": {\"workers\": [2, 3]}}\n";

/* Appends `text` to the file dir/name. */
static void append(const char *dir, const char *name, const char *text)
{
    char path[900];
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    FILE *f = fopen(path, "a");
    ck_assert_ptr_nonnull(f);
    fputs(text, f);
    ck_assert_int_eq(fclose(f), 0);
}

/* ---- A golden's fingerprint --------------------------------------------------------------- */

/* check --exact compares the whole fingerprint of seed S, but the golden's validation found
 * each used file's line in it (strstr): a line appended ("metrics.csv 0000...", a line
 * doubled) passed, and the check said "REGRESSION: outputs differ", exit 1, no file named,
 * of a golden damaged by hand. Now the golden is refused naming the fingerprint and its line,
 * exit 2, for --exact and the statistical check alike; so are CRLF line ends (the message
 * named metrics.csv as edited) and an empty fingerprint. */
START_TEST(a_fingerprint_with_a_line_appended_is_a_damaged_golden)
{
    static const struct {
        const char *text; /* appended to seed-5/fingerprint, or NULL: written as `whole` */
        const char *whole;
        const char *want;
    } cases[] = {
        { "metrics.csv 0000000000000000\n", NULL, "seed-5/fingerprint: line 5: not a line" },
        { "run.json 00000000000000ab\n", NULL, "seed-5/fingerprint: line 5: not a line" },
        { "anything\n", NULL, "seed-5/fingerprint: line 5: not a line" },
        { NULL, "", "seed-5/fingerprint: line 1: not a line" },
        { NULL, "metrics.csv 0123456789abcdef\r\n", "seed-5/fingerprint: line 1: not a line" },
    };
    char *dir = harness_tmpdir("probe13");
    char s[600], g[600], seed5[700], o[600], before[4096];
    harness_golden_in(dir, harness_quick_json, s, g, sizeof(s));
    snprintf(seed5, sizeof(seed5), "%s/seed-5", g);
    snprintf(o, sizeof(o), "%s/o", dir);
    char fp[800];
    snprintf(fp, sizeof(fp), "%s/fingerprint", seed5);
    harness_read_into(fp, before, sizeof(before));
    result res =
        harness_hetsim((const char *[]){ "check", s, "--golden", g, "--exact", "-o", o, NULL });
    ck_assert_msg(res.status == 0, "the golden as written: exit %d\n%s", res.status, res.err);
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        harness_write(seed5, "fingerprint", cases[i].text != NULL ? before : cases[i].whole);
        if (cases[i].text != NULL)
            append(seed5, "fingerprint", cases[i].text);
        for (int exact = 0; exact < 2; exact++) {
            res = harness_hetsim((const char *[]){ "check", s, "--golden", g, "-o", o,
                                                   exact ? "--exact" : "--seeds",
                                                   exact ? NULL : "3", NULL });
            ck_assert_msg(res.status == 2, "case %zu, exact %d: exit %d\n%s%s", i, exact,
                          res.status, res.out, res.err);
            ck_assert_msg(strstr(res.err, cases[i].want) != NULL, "case %zu: %s", i, res.err);
            ck_assert_msg(strstr(res.err, "write it again with --update") != NULL, "%s", res.err);
        }
    }
    harness_write(seed5, "fingerprint", before);
    res = harness_hetsim((const char *[]){ "check", s, "--golden", g, "--exact", "-o", o, NULL });
    ck_assert_msg(res.status == 0, "restored: exit %d\n%s", res.status, res.err);
    harness_cleanup(dir);
}
END_TEST

/* ---- A run's summary.json ----------------------------------------------------------------- */

/* A run's metrics.csv may not hold a row past its summary.json's sim_time_s, but a
 * summary.json cut mid-file held it to nothing: plot RUN drew a row appended at 99 s to a
 * 0.2 s run, exit 0 (report refuses such a sweep point: "its summary.json does not parse").
 * Now plot names the summary.json, exit 2, nothing drawn; a run without one is drawn as
 * before. */
START_TEST(a_summary_cut_mid_file_is_a_damaged_run_for_plot)
{
    char *dir = harness_tmpdir("probe13");
    char s[600], run[600], figs[600], summary[700], text[4096];
    harness_run_in(dir, harness_quick_json, s, run, sizeof(s));
    snprintf(figs, sizeof(figs), "%s/figs", dir);
    snprintf(summary, sizeof(summary), "%s/summary.json", run);
    harness_read_into(summary, text, sizeof(text));
    text[50] = '\0';
    harness_write(run, "summary.json", text);
    append(run, "metrics.csv", "99,60,1900,,,,,,3000\n");
    result res = harness_hetsim((const char *[]){ "plot", run, "-o", figs, NULL });
    ck_assert_msg(res.status == 2, "exit %d\n%s", res.status, res.err);
    ck_assert_msg(strstr(res.err, "no summary.json hetsim wrote: the run's end cannot be read") !=
                      NULL,
                  "%s", res.err);
    ck_assert_msg(strstr(res.err, "run it again") != NULL, "%s", res.err);
    ck_assert_msg(!harness_exists(figs), "figures drawn");
    remove(summary);
    res = harness_hetsim((const char *[]){ "plot", run, "-o", figs, NULL });
    ck_assert_msg(res.status == 0, "without a summary.json: exit %d\n%s", res.status, res.err);
    harness_cleanup(dir);
}
END_TEST

/* ---- A --names file's lines --------------------------------------------------------------- */

/* A --names line that is FROM=TO but for a tab left after it by an editor (or a name longer
 * than 200 bytes) was refused as "line 1: not FROM=TO (a key or value, '=', the text shown)",
 * which sends the user looking for a missing '=': the cause was dropped. Each line now names
 * it, exit 2 as before. */
START_TEST(a_names_line_refused_says_why)
{
    static const struct {
        const char *line, *want;
    } cases[] = {
        { "allreduce=AR\t\n", "line 2: not FROM=TO" },
        { "allreduce=AR\t\n", "the text holds a tab" },
        { "allreduce\t=AR\n", "the key holds a tab" },
        { "allreduce AR\n", "no '='" },
        { "=AR\n", "the key is empty" },
        { "allreduce=\r\r\n", "the text holds a control character" },
    };
    char *dir = harness_tmpdir("probe13");
    char sw[600], out[600], names[600], text[400];
    harness_sweep_in(dir, harness_quick_json, harness_protocols_sweep, sw, out, sizeof(sw));
    snprintf(names, sizeof(names), "%s/names.txt", dir);
    result res;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        snprintf(text, sizeof(text), "# display names\n%s", cases[i].line);
        harness_write(dir, "names.txt", text);
        res = harness_hetsim((const char *[]){ "report", out, "--by", "protocol.name", "--names",
                                               names, "--format", "tex", NULL });
        ck_assert_msg(res.status == 2, "case %zu: exit %d\n%s", i, res.status, res.err);
        ck_assert_msg(strstr(res.err, cases[i].want) != NULL, "case %zu: %s", i, res.err);
    }
    harness_write(dir, "names.txt", "allreduce=AR\r\ndpsgd=DP");
    res = harness_hetsim((const char *[]){ "report", out, "--by", "protocol.name", "--names", names,
                                           "--format", "tex", NULL });
    ck_assert_msg(res.status == 0, "%s", res.err);
    ck_assert_msg(strstr(res.out, "AR &") != NULL && strstr(res.out, "DP &") != NULL, "%s",
                  res.out);
    harness_cleanup(dir);
}
END_TEST

/* ---- Options misused ---------------------------------------------------------------------- */

/* Options misused were refused for another cause, or not at all: validate took "-o" (and a
 * --set without its value) for scenario files ("-o: cannot open: No such file or directory");
 * bench named its benchmark as the fault ("bench engine --threads 2": got "engine"; "bench
 * threads --threads": got "threads", where the value is missing); sweep --list --index 0
 * printed every point and ran none, exit 0; check --exact --seeds 4 ran the scenario's seed
 * alone, exit 0; report and plot --by took "--by workers," as "workers" (an empty key
 * skipped). Each is a usage error naming its cause, exit 2, before anything is read or run. */
START_TEST(options_misused_are_refused_naming_their_cause)
{
    char *dir = harness_tmpdir("probe13");
    char s[600], sw[600], g[600], o[600], swd[600];
    harness_sweep_in(dir, harness_quick_json, workers_sweep, sw, swd, sizeof(sw));
    snprintf(s, sizeof(s), "%s/s.json", dir);
    snprintf(g, sizeof(g), "%s/g", dir);
    snprintf(o, sizeof(o), "%s/x", dir); /* where nothing may be written; the sweep is DIR/o */
    const struct {
        const char *args[10];
        const char *want;
    } cases[] = {
        { { "validate", "-o", o, s }, "unknown option -o" },
        { { "validate", s, "--set" }, "--set needs a value" },
        { { "bench", "engine", "--threads", "2" }, "--threads goes with bench threads" },
        { { "bench", "threads", "--threads" }, "--threads needs a value" },
        { { "bench", "engine", "--set", "x=1" }, "bench engine takes nothing more, got \"--set\"" },
        { { "sweep", sw, "--list", "--index", "0", "-o", o }, "--list and --index do not go" },
        { { "check", s, "--golden", g, "--exact", "--seeds", "4", "-o", o },
          "--exact and --seeds do not go together" },
        { { "report", swd, "--by", "workers," }, "--by: an empty key in \"workers,\"" },
        { { "plot", swd, "--by", ",workers", "-o", o }, "--by: an empty key in \",workers\"" },
        { { "report", swd, "--by", "seed", "--best-over", "workers,,x" },
          "--best-over: an empty key" },
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        const char *args[12] = { 0 };
        for (size_t a = 0; a < 10 && cases[i].args[a] != NULL; a++)
            args[a] = cases[i].args[a];
        result res = harness_hetsim(args);
        ck_assert_msg(res.status == 2, "case %zu: exit %d\n%s%s", i, res.status, res.out, res.err);
        ck_assert_msg(strstr(res.err, cases[i].want) != NULL, "case %zu: %s", i, res.err);
        ck_assert_msg(strstr(res.out, "ok") == NULL, "case %zu: %s", i, res.out);
        ck_assert_msg(!harness_exists(o) && !harness_exists(g), "case %zu: something written", i);
    }
    harness_cleanup(dir);
}
END_TEST

/* A sweep over the limit of points with one seed said "(1001000 of the grid times 1 seeds)". */
START_TEST(a_sweep_over_the_limit_with_one_seed_says_one_seed)
{
    char *dir = harness_tmpdir("probe13");
    char sw[600];
    size_t cap = 20000, len = 0;
    char *text = malloc(cap);
    ck_assert_ptr_nonnull(text);
    len += (size_t)snprintf(text + len, cap - len,
                            "{\"base\": \"s.json\", \"seeds\": 1, \"grid\": {\"workers\": [2");
    for (int w = 3; w <= 1002; w++)
        len += (size_t)snprintf(text + len, cap - len, ", %d", w);
    len += (size_t)snprintf(text + len, cap - len, "], \"workload.lr\": [0.1");
    for (int k = 1; k < 1000; k++)
        len += (size_t)snprintf(text + len, cap - len, ", 0.%d", 1000 + k);
    snprintf(text + len, cap - len, "]}}\n");
    harness_sweep_file(dir, harness_quick_json, text, sw, sizeof(sw));
    free(text);
    result res = harness_hetsim((const char *[]){ "sweep", sw, "--list", NULL });
    ck_assert_msg(res.status == 2, "exit %d\n%s", res.status, res.err);
    ck_assert_msg(strstr(res.err, "(1001000 of the grid times 1 seed), more than the limit") !=
                      NULL,
                  "%s", res.err);
    harness_cleanup(dir);
}
END_TEST

/* ---- A sweep's grid ------------------------------------------------------------------------ */

/* Each point runs in its own directory of the sweep's, so a grid over output.dir ran one run
 * under each value ("output.dir=a" and "output.dir=b", the same results twice), exit 0,
 * report --by output.dir comparing a run with itself. Refused as seed is, exit 2. */
START_TEST(a_grid_over_output_dir_is_refused)
{
    static const char *const grids[] = {
        "{\"output.dir\": [\"a\", \"b\"]}",
        "{\"zip\": {\"workers\": [2, 3], \"$.output.dir\": [\"a\", \"b\"]}}",
    };
    char *dir = harness_tmpdir("probe13");
    char out[600];
    harness_write(dir, "s.json", harness_quick_json);
    for (size_t i = 0; i < sizeof(grids) / sizeof(grids[0]); i++) {
        result res = harness_sweep_grid(dir, grids[i], out, sizeof(out));
        ck_assert_msg(res.status == 2, "case %zu: exit %d\n%s", i, res.status, res.err);
        ck_assert_msg(strstr(res.err, "output.dir: each point runs in its own directory") != NULL,
                      "case %zu: %s", i, res.err);
        ck_assert_msg(!harness_exists(out), "case %zu: the sweep ran", i);
    }
    harness_cleanup(dir);
}
END_TEST

/* ---- A long sweep directory ---------------------------------------------------------------- */

/* Whether the folders dir/NAME/NAME/... (`depth` of them, NAME HARNESS_DEEP_NAME 'd's, as
 * harness_deep_dir makes them) each hold the next alone and the last `last` entries: nothing
 * made beside them. */
static void only_the_folders(const char *dir, int depth, size_t last)
{
    char path[2600], name[HARNESS_DEEP_NAME + 1];
    memset(name, 'd', HARNESS_DEEP_NAME);
    name[HARNESS_DEEP_NAME] = '\0';
    snprintf(path, sizeof(path), "%s", dir);
    for (int i = 0; i <= depth; i++) {
        DIR *d = opendir(path);
        ck_assert_ptr_nonnull(d);
        size_t entries = 0;
        for (struct dirent *e = readdir(d); e != NULL; e = readdir(d))
            entries += strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0 &&
                       (i > 0 || strcmp(e->d_name, name) == 0);
        closedir(d);
        ck_assert_msg(entries == (i < depth ? 1u : last), "folder %d holds %zu entries", i,
                      entries);
        strcat(path, "/");
        strcat(path, name);
    }
}

/* -o takes paths of up to 4,000 bytes, but a sweep kept its directory in 1,024: a 2,020-byte
 * -o under existing folders was cut there, the sweep made a folder named by the cut (outside
 * the place asked for) and failed, "cannot create ..." cut short with no cause, exit 1. A
 * sweep's directory longer than its points' paths can hold is refused, exit 2, nothing made. */
START_TEST(a_sweep_directory_too_long_for_its_points_is_refused)
{
    char *dir = harness_tmpdir("probe13");
    char sw[600], deep[2600], file[2700];
    harness_sweep_file(dir, harness_quick_json, workers_sweep, sw, sizeof(sw));
    size_t len = harness_deep_dir(dir, 'd', 10, deep, sizeof(deep));
    snprintf(deep + len, sizeof(deep) - len, "/sweep");
    result res = harness_hetsim((const char *[]){ "sweep", sw, "-o", deep, "--quiet", NULL });
    ck_assert_msg(res.status == 2, "exit %d\n%s", res.status, res.err);
    ck_assert_msg(strstr(res.err, "too long for a sweep's directory") != NULL, "%s", res.err);
    /* A sweep file there: its path was cut, its base looked for in another folder ("$.base:
     * no file ..."). */
    deep[len] = '\0';
    harness_write(deep, "sw.json", workers_sweep);
    snprintf(file, sizeof(file), "%s/sw.json", deep);
    res = harness_hetsim((const char *[]){ "sweep", file, "--list", NULL });
    ck_assert_msg(res.status == 2, "exit %d\n%s", res.status, res.err);
    ck_assert_msg(strstr(res.err, "too long a path for a sweep file") != NULL, "%s", res.err);
    ck_assert_int_eq(remove(file), 0);
    /* Nothing made: each folder holds the next alone, the last nothing. */
    only_the_folders(dir, 10, 0);
    harness_cleanup(dir);
}
END_TEST

/* check -o, --junit and report took paths of up to 4,000 bytes into 1,024-byte buffers: a
 * 2,020-byte -o put the check's seed runs in a folder named by the cut (outside the place
 * asked for), a --junit report was written there instead, exit 0, and report read the
 * index of the directory the cut named. Each path is used whole, or refused, exit 2. */
START_TEST(a_long_check_output_junit_or_sweep_path_is_never_cut)
{
    char *dir = harness_tmpdir("probe13");
    char s[600], g[600], o[600], deep[2600], place[2700];
    harness_golden_in(dir, harness_quick_json, s, g, sizeof(s));
    snprintf(o, sizeof(o), "%s/o", dir);
    harness_deep_dir(dir, 'd', 10, deep, sizeof(deep));
    snprintf(place, sizeof(place), "%s/co", deep);
    result res = harness_hetsim((const char *[]){ "check", s, "--golden", g, "-o", place, NULL });
    ck_assert_msg(res.status == 2, "-o: exit %d\n%s", res.status, res.err);
    ck_assert_msg(strstr(res.err, "too long for a check's output") != NULL, "%s", res.err);
    only_the_folders(dir, 10, 0);
    snprintf(place, sizeof(place), "%s/j.xml", deep);
    res = harness_hetsim(
        (const char *[]){ "check", s, "--golden", g, "-o", o, "--junit", place, NULL });
    ck_assert_msg(res.status == 0, "--junit: exit %d\n%s", res.status, res.err);
    ck_assert_msg(harness_exists(place), "no report where --junit named");
    only_the_folders(dir, 10, 1);
    remove(place);
    snprintf(place, sizeof(place), "%s/sw", deep);
    res = harness_hetsim((const char *[]){ "report", place, "--by", "workers", NULL });
    ck_assert_msg(res.status == 2, "report: exit %d\n%s", res.status, res.err);
    ck_assert_msg(strstr(res.err, "too long a path for a sweep's directory") != NULL, "%s",
                  res.err);
    harness_cleanup(dir);
}
END_TEST

/* An error's file and message had 256 bytes each: a check of a scenario about 3,000 bytes deep
 * (paths are allowed up to 4,000) printed the cut path alone, its cause ("the scenario differs
 * from the golden's ... in 2 keys") lost. The message holds the whole path and its cause (one
 * key since probe51: a name only the file's is not compared). */
START_TEST(a_message_about_a_deep_scenario_keeps_its_cause)
{
    char *dir = harness_tmpdir("probe13");
    char s[600], g[600], o[600], deep[3100], t[3200];
    harness_golden_in(dir, harness_quick_json, s, g, sizeof(s));
    snprintf(o, sizeof(o), "%s/o", dir);
    ck_assert_uint_gt(harness_deep_dir(dir, 'q', 14, deep, sizeof(deep)), 2800);
    snprintf(t, sizeof(t), "%s/t.json", deep);
    char *other = strdup(harness_quick_json);
    ck_assert_ptr_nonnull(other);
    other[strstr(other, "\"workers\": 3") - other + 11] = '7'; /* the golden's has 3 */
    harness_write(deep, "t.json", other);
    free(other);
    result res = harness_hetsim((const char *[]){ "check", t, "--golden", g, "-o", o, NULL });
    ck_assert_msg(res.status == 2, "exit %d\n%s", res.status, res.err);
    ck_assert_msg(strstr(res.err, t) != NULL, "the path is cut: %s", res.err);
    ck_assert_msg(strstr(res.err, ": the scenario differs from the golden's") != NULL &&
                      strstr(res.err, "in 1 key: workers") != NULL &&
                      strstr(res.err, "--update to make a new golden)\n") != NULL,
                  "the cause is lost: %s", res.err);
    harness_cleanup(dir);
}
END_TEST

/* The room's ends still cut between UTF-8 characters: a message and a file name longer than
 * theirs keep whole euro signs up to the room (SIM_ERR_MSG_MAX, SIM_ERR_FILE_MAX), no more. */
START_TEST(a_message_past_its_room_is_cut_between_utf8_characters)
{
    enum {
        EUROS = 5000
    }; /* 15,000 bytes: past both rooms */
    char *euros = malloc(3 * EUROS + 1);
    ck_assert_ptr_nonnull(euros);
    for (size_t i = 0; i < EUROS; i++)
        memcpy(euros + 3 * i, "\xe2\x82\xac", 3);
    euros[3 * EUROS] = '\0';
    sim_err *err = malloc(sizeof(*err));
    ck_assert_ptr_nonnull(err);
    sim_err_clear(err);
    ck_assert_int_eq(sim_err_set(err, SIM_EINVAL, NULL, "%s", euros), SIM_EINVAL);
    sim_err_file(err, euros);
    size_t msg = strlen(err->msg), file = strlen(err->file);
    ck_assert_msg(msg % 3 == 0 && msg > SIM_ERR_MSG_MAX - 4 && msg < SIM_ERR_MSG_MAX, "%zu", msg);
    ck_assert_msg(file % 3 == 0 && file > SIM_ERR_FILE_MAX - 4 && file < SIM_ERR_FILE_MAX, "%zu",
                  file);
    ck_assert(sim_text_utf8(err->msg) && sim_text_utf8(err->file));
    free(err);
    free(euros);
}
END_TEST

Suite *test_suite(void)
{
    Suite *s = suite_create("probe13");
    TCase *damaged = tcase_create("damaged");
    tcase_add_test(damaged, a_fingerprint_with_a_line_appended_is_a_damaged_golden);
    tcase_add_test(damaged, a_summary_cut_mid_file_is_a_damaged_run_for_plot);
    tcase_set_timeout(damaged, 120);
    suite_add_tcase(s, damaged);
    TCase *messages = tcase_create("messages");
    tcase_add_test(messages, a_names_line_refused_says_why);
    tcase_add_test(messages, options_misused_are_refused_naming_their_cause);
    tcase_add_test(messages, a_sweep_over_the_limit_with_one_seed_says_one_seed);
    tcase_add_test(messages, a_grid_over_output_dir_is_refused);
    tcase_add_test(messages, a_sweep_directory_too_long_for_its_points_is_refused);
    tcase_add_test(messages, a_long_check_output_junit_or_sweep_path_is_never_cut);
    tcase_add_test(messages, a_message_about_a_deep_scenario_keeps_its_cause);
    tcase_add_test(messages, a_message_past_its_room_is_cut_between_utf8_characters);
    tcase_set_timeout(messages, 60);
    suite_add_tcase(s, messages);
    return s;
}
