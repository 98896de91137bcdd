/* Issue 38, leftovers of the last probe: a text input that never ends (a FIFO fed by `yes`)
 * grew a reader without bound or was read forever, and an `sweep --index K` task validated
 * every point of the sweep. Each case failed before its fix.
 *
 * The cap of a text input is 1 GiB; these tests lower it through its test hook,
 * HETSIM_TEXT_CAP (sim/file.h), to 65536 bytes, and feed each reader 4 MiB: before the cap
 * every reader took the whole (a valid input padded with blanks or comment lines: exit 0),
 * where it now stops at the cap, exit 2, naming the file and the cap, nothing written.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <check.h>

#include "harness.h"
#include "sim/file.h"

typedef harness_result result;

#define CAP "65536"
#define CAP_TEXT \
    "larger than 65536 bytes, the limit of a text input (a FIFO or a device that never ends?)"
#define FED_BYTES (4u << 20)

/* `head`, then `pad` again and again to FED_BYTES in all: an input far past the tests' cap. */
static char *padded(const char *head, const char *pad)
{
    size_t h = strlen(head), p = strlen(pad), n = h;
    char *text = malloc(FED_BYTES + 1);
    ck_assert(text != NULL);
    memcpy(text, head, h);
    while (n + p <= FED_BYTES) {
        memcpy(text + n, pad, p);
        n += p;
    }
    text[n] = '\0';
    return text;
}

/* harness_hetsim with `args`, DIR/`name` a FIFO fed with `text` by a writer (killed once the
 * command ended: it stops writing when the reader closes the FIFO at the cap). */
static result through_fifo(const char *dir, const char *name, const char *text,
                           const char *const *args)
{
    char fifo[700];
    snprintf(fifo, sizeof(fifo), "%s/%s", dir, name);
    ck_assert_int_eq(mkfifo(fifo, 0666), 0);
    return harness_hetsim_fifo(fifo, text, args);
}

/* Exit 2, nothing on standard output, and standard error naming `file` and the cap. */
static void expect_capped(const result *res, const char *file, const char *what)
{
    char want[2048];
    snprintf(want, sizeof(want), "%s: " CAP_TEXT, file);
    ck_assert_msg(res->status == 2 && strstr(res->err, want) != NULL && res->out[0] == '\0',
                  "%s: exit %d, want 2 and \"%s\"\nstdout: %.300s\nstderr: %.600s", what,
                  res->status, want, res->out, res->err);
}

/* The cap is 1 GiB, said so; the test hook only lowers it. */
START_TEST(the_cap_of_a_text_input_is_one_gib)
{
    unsetenv(SIM_FILE_TEXT_CAP_ENV);
    ck_assert_uint_eq(sim_file_text_cap(), (uint64_t)1 << 30);
    ck_assert_str_eq(sim_file_cap_text(), "larger than 1 GiB, the limit of a text input (a FIFO "
                                          "or a device that never ends?)");
}
END_TEST

/* A scenario read from a FIFO (`hetsim validate <(yes '')`) grew the reader's buffer without
 * bound: 7.4 GB in 32 s. Refused at the cap; `run` writes no run directory. */
START_TEST(a_scenario_that_never_ends_is_refused_at_the_cap)
{
    setenv(SIM_FILE_TEXT_CAP_ENV, CAP, 1);
    char *dir = harness_tmpdir("probe41");
    char fifo[700], r[700];
    snprintf(fifo, sizeof(fifo), "%s/s.json", dir);
    snprintf(r, sizeof(r), "%s/r", dir);
    char *text = padded(harness_quick_json, "          \n");
    result res =
        through_fifo(dir, "s.json", text, (const char *[]){ "run", fifo, "-o", r, "-q", NULL });
    expect_capped(&res, fifo, "run");
    ck_assert_msg(!harness_exists(r), "the run wrote %s", r);
    free(text);
    harness_cleanup(dir);
}
END_TEST

/* The scenario of the profile and trace cases: 3 workers timing-only, with `extra` keys. */
static void write_scenario(const char *dir, const char *extra)
{
    char text[2048];
    snprintf(text, sizeof(text),
             "{\"seed\": 5, \"workers\": 3, %s,\n"
             " \"workload\": {\"model\": {\"name\": \"none\"}, \"message_bytes\": 4000},\n"
             " \"protocol\": {\"name\": \"allreduce\"}, \"stop\": {\"time_s\": 0.2},\n"
             " \"eval\": {\"every_s\": 0.05}}\n",
             extra);
    harness_write(dir, "s.json", text);
}

/* A layer profile of endless comment lines was read forever at constant memory, and a
 * straggler trace of endless blank lines likewise (its points grew the reader without bound).
 * Both stop at the cap, named; no run directory. */
START_TEST(a_profile_or_a_trace_that_never_ends_is_refused_at_the_cap)
{
    setenv(SIM_FILE_TEXT_CAP_ENV, CAP, 1);
    static const char *const extras[] = {
        "\"compute\": {\"profile\": \"p.csv\", \"gflops\": 100}",
        "\"compute\": {\"iteration_ms\": 10},\n"
        " \"stragglers\": [{\"kind\": \"trace\", \"file\": \"tr.csv\"}]",
    };
    static const char *const names[] = { "p.csv", "tr.csv" };
    static const char *const heads[] = { "name,params,forward_flops\nfc,1000,2000\n",
                                         "time_s,worker,slowdown\n0,0,1.5\n" };
    static const char *const pads[] = { "# a comment line\n", "\n" };
    for (int c = 0; c < 2; c++) {
        char *dir = harness_tmpdir("probe41");
        char s[700], r[700], file[700];
        write_scenario(dir, extras[c]);
        snprintf(s, sizeof(s), "%s/s.json", dir);
        snprintf(r, sizeof(r), "%s/r", dir);
        /* A trace's errors name the trace, then its rule's key. */
        snprintf(file, sizeof(file), "%s/%s%s", dir, names[c],
                 c == 1 ? ": $.stragglers[0].file" : "");
        char *text = padded(heads[c], pads[c]);
        result res =
            through_fifo(dir, names[c], text, (const char *[]){ "run", s, "-o", r, "-q", NULL });
        expect_capped(&res, file, names[c]);
        ck_assert_msg(!harness_exists(r), "%s: the run wrote %s", names[c], r);
        free(text);
        harness_cleanup(dir);
    }
}
END_TEST

/* A sweep file from a FIFO, and a base scenario past the cap (a base that is a FIFO is refused
 * as one; a device could feed it forever): each was read whole, the sweep ran. Refused, no
 * sweep directory. */
START_TEST(a_sweep_file_or_its_base_past_the_cap_is_refused)
{
    setenv(SIM_FILE_TEXT_CAP_ENV, CAP, 1);
    for (int c = 0; c < 2; c++) {
        char *dir = harness_tmpdir("probe41");
        char sw[700], o[700], s[700];
        snprintf(sw, sizeof(sw), "%s/sw.json", dir);
        snprintf(o, sizeof(o), "%s/o", dir);
        snprintf(s, sizeof(s), "%s/s.json", dir);
        result res;
        if (c == 0) {
            harness_write(dir, "s.json", harness_quick_json);
            char *text = padded(harness_protocols_sweep, "        \n");
            res = through_fifo(dir, "sw.json", text,
                               (const char *[]){ "sweep", sw, "-o", o, "-q", NULL });
            free(text);
            expect_capped(&res, sw, "sweep file");
        } else {
            char *text = padded(harness_quick_json, "        \n");
            harness_write(dir, "s.json", text);
            harness_write(dir, "sw.json", harness_protocols_sweep);
            free(text);
            res = harness_hetsim((const char *[]){ "sweep", sw, "-o", o, "-q", NULL });
            char want[1500];
            snprintf(want, sizeof(want), "%s: $.base: %s", sw, s);
            ck_assert_msg(strstr(res.err, want) != NULL, "base: %.600s", res.err);
            expect_capped(&res, s, "base");
        }
        ck_assert_msg(!harness_exists(o), "case %d: the sweep wrote %s", c, o);
        harness_cleanup(dir);
    }
}
END_TEST

/* `report --names` from a FIFO: its lines were read to the end (endless comment lines: for
 * ever, the text growing). Refused at the cap, no table. */
START_TEST(a_names_file_that_never_ends_is_refused_at_the_cap)
{
    setenv(SIM_FILE_TEXT_CAP_ENV, CAP, 1);
    char *dir = harness_tmpdir("probe41");
    char sw[700], o[700], names[700];
    harness_sweep_in(dir, harness_quick_json, harness_protocols_sweep, sw, o, sizeof(sw));
    snprintf(names, sizeof(names), "%s/names.txt", dir);
    char *text = padded("allreduce=AR\n", "# a comment\n");
    result res = through_fifo(
        dir, "names.txt", text,
        (const char *[]){ "report", o, "--by", "protocol.name", "--names", names, NULL });
    expect_capped(&res, names, "report --names");
    free(text);
    harness_cleanup(dir);
}
END_TEST

/* A --style copy past the cap (the built-in script and endless comment lines; a FIFO there is
 * refused as one, a device could feed it forever): drawn with, exit 0. Refused, no figures. */
START_TEST(a_style_copy_past_the_cap_is_refused)
{
    setenv(SIM_FILE_TEXT_CAP_ENV, CAP, 1);
    char *dir = harness_tmpdir("probe41");
    char s[700], r[700], gp[1024], p[1024];
    harness_run_in(dir, harness_quick_json, s, r, sizeof(s));
    char *script = harness_read("plots/convergence.gp", NULL);
    char *text = padded(script, "# a comment line of the copy\n");
    result res = harness_plot_style_copy(dir, r, 0, text, gp, p, sizeof(gp));
    char want[1200];
    snprintf(want, sizeof(want), "--style: %s", gp);
    ck_assert_msg(strstr(res.err, want) != NULL, "%.600s", res.err);
    expect_capped(&res, gp, "--style");
    ck_assert_msg(!harness_exists(p), "plot wrote %s", p);
    free(script);
    free(text);
    harness_cleanup(dir);
}
END_TEST

/* A sweep of workers 3 and 0 (point 1 invalid: no workers). */
static const char bad_point_sweep[] = "{\"base\": \"s.json\", \"grid\": {\"workers\": [3, 0]}}\n";

/* An --index K task validated every point of the sweep (47.7 s a task at 100,000 points: an
 * array job's time quadratic in its points), and refused to run its own point for another's
 * fault. It validates its own point, fully, and the sweep's cheap checks: point 0 runs, point
 * 1's own task refuses it, naming it; the whole sweep and --list still refuse the sweep before
 * running anything. */
START_TEST(an_index_task_validates_its_own_point)
{
    char *dir = harness_tmpdir("probe41");
    char sw[700], o[700], run0[800];
    harness_sweep_file(dir, harness_quick_json, bad_point_sweep, sw, sizeof(sw));
    snprintf(o, sizeof(o), "%s/o", dir);
    result res = harness_hetsim((const char *[]){ "sweep", sw, "-o", o, "--index", "0", NULL });
    ck_assert_msg(res.status == 0, "--index 0: exit %d\n%.600s", res.status, res.err);
    snprintf(run0, sizeof(run0), "%s/workers=3,seed=5/summary.json", o);
    ck_assert_msg(harness_exists(run0), "--index 0 left no %s", run0);
    res = harness_hetsim((const char *[]){ "sweep", sw, "-o", o, "--index", "1", NULL });
    ck_assert_msg(res.status == 2 && strstr(res.err, "point 1 (workers=0,seed=5)") != NULL,
                  "--index 1: exit %d\n%.600s", res.status, res.err);
    snprintf(run0, sizeof(run0), "%s/workers=0,seed=5", o);
    ck_assert_msg(!harness_exists(run0), "--index 1 ran its point");
    char o2[700];
    snprintf(o2, sizeof(o2), "%s/o2", dir);
    res = harness_hetsim((const char *[]){ "sweep", sw, "-o", o2, "-q", NULL });
    ck_assert_msg(res.status == 2 && strstr(res.err, "point 1 (workers=0,seed=5)") != NULL &&
                      !harness_exists(o2),
                  "sweep: exit %d\n%.600s", res.status, res.err);
    res = harness_hetsim((const char *[]){ "sweep", sw, "--list", NULL });
    ck_assert_msg(res.status == 2 && strstr(res.err, "point 1 (workers=0,seed=5)") != NULL,
                  "--list: exit %d\n%.600s", res.status, res.err);
    harness_cleanup(dir);
}
END_TEST

Suite *test_suite(void)
{
    Suite *s = suite_create("probe41");
    TCase *cap = tcase_create("cap");
    tcase_add_test(cap, the_cap_of_a_text_input_is_one_gib);
    tcase_add_test(cap, a_scenario_that_never_ends_is_refused_at_the_cap);
    tcase_add_test(cap, a_profile_or_a_trace_that_never_ends_is_refused_at_the_cap);
    tcase_add_test(cap, a_sweep_file_or_its_base_past_the_cap_is_refused);
    tcase_add_test(cap, a_names_file_that_never_ends_is_refused_at_the_cap);
    tcase_add_test(cap, a_style_copy_past_the_cap_is_refused);
    tcase_set_timeout(cap, 120);
    suite_add_tcase(s, cap);
    TCase *index = tcase_create("index");
    tcase_add_test(index, an_index_task_validates_its_own_point);
    tcase_set_timeout(index, 120);
    suite_add_tcase(s, index);
    return s;
}
