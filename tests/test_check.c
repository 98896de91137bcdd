/* `hetsim check` against broken goldens, as CI meets them: every golden that cannot be
 * trusted (a number that is not finite, a truncated file, a file or seed missing or extra,
 * a golden of another scenario, an update killed midway) is exit 2 naming the file or the
 * keys; a sound golden passes, a seed shift is no scenario change, the JUnit report is well
 * formed XML. Runs the built binary ($HETSIM) on a short scenario; one golden of 3 seeds is
 * made once and copied for each test. */
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <check.h>

#include "harness.h"

#define SCENARIO "tests/golden/curves/allreduce/scenario.json"

typedef harness_result result;

static char base[64];                   /* the golden made once: base/golden */
static const char *scenario = SCENARIO; /* the scenario file a check reads */

/* Starts $HETSIM check SCENARIO with the short scenario's overrides and `args`. */
static pid_t start(const char *const *args, const char *out, const char *err)
{
    const char *bin = getenv("HETSIM");
    ck_assert_msg(bin != NULL, "HETSIM is not set");
    pid_t pid = fork();
    if (pid == 0) {
        int fo = open(out, O_WRONLY | O_TRUNC), fe = open(err, O_WRONLY | O_TRUNC);
        dup2(fo, 1);
        dup2(fe, 2);
        const char *argv[40] = {
            bin, "check", scenario, "--set", "stop.time_s=2", "--set", "eval.every_s=0.25"
        };
        size_t n = 7;
        for (size_t i = 0; args[i] != NULL && n < 38; i++)
            argv[n++] = args[i];
        execv(bin, (char *const *)argv);
        _exit(127);
    }
    return pid;
}

static result check(const char *const *args)
{
    const char *argv[31] = { "check",         scenario, "--set",
                             "stop.time_s=2", "--set",  "eval.every_s=0.25" };
    size_t n = 6;
    for (size_t i = 0; args[i] != NULL && n < 30; i++)
        argv[n++] = args[i];
    return harness_hetsim(argv);
}

/* Runs the shell command `tmpl` with every "%s" in it replaced by `dir`. */
static void sh(const char *tmpl, const char *dir)
{
    char cmd[4096];
    size_t len = 0;
    for (const char *p = tmpl; *p != '\0' && len + 600 < sizeof(cmd);) {
        if (p[0] == '%' && p[1] == 's') {
            len += (size_t)snprintf(cmd + len, sizeof(cmd) - len, "%s", dir);
            p += 2;
        } else {
            cmd[len++] = *p++;
        }
    }
    cmd[len] = '\0';
    ck_assert_msg(system(cmd) == 0, "%s", cmd);
}

static bool exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

static void make_base(void)
{
    char out[] = "/tmp/hetsim-check-base-XXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(out));
    snprintf(base, sizeof(base), "%s", out);
}

/* A copy of the base golden at DIR/golden (DIR fresh); returns DIR (caller frees). */
static char *copy_golden(void)
{
    char *dir = harness_tmpdir("check");
    char cmd[512];
    snprintf(cmd, sizeof(cmd), "cp -r %s/golden %s/golden", base, dir);
    ck_assert_int_eq(system(cmd), 0);
    return dir;
}

static void path_of(char *buf, size_t size, const char *dir, const char *rest)
{
    snprintf(buf, size, "%s/%s", dir, rest);
}

/* Rewrites the metrics.csv line of seed dir's fingerprint for its current content (FNV-1a
 * 64), so that a test reaches the checks behind the fingerprint's. */
static void refingerprint(const char *seed_dir)
{
    char path[512], text[4096];
    size_t n = 0;
    snprintf(path, sizeof(path), "%s/metrics.csv", seed_dir);
    char *csv = harness_read(path, &n);
    ck_assert_ptr_nonnull(csv);
    uint64_t h = UINT64_C(0xcbf29ce484222325);
    for (size_t i = 0; i < n; i++) {
        h ^= (unsigned char)csv[i];
        h *= UINT64_C(0x100000001b3);
    }
    free(csv);
    snprintf(path, sizeof(path), "%s/fingerprint", seed_dir);
    harness_read_into(path, text, sizeof(text));
    char *line = strstr(text, "metrics.csv ");
    ck_assert_ptr_nonnull(line);
    char hex[17];
    snprintf(hex, sizeof(hex), "%016" PRIx64, h);
    memcpy(line + strlen("metrics.csv "), hex, 16);
    FILE *f = fopen(path, "w");
    fputs(text, f);
    fclose(f);
}

/* Replaces the first occurrence of `from` after the header of seed dir's metrics.csv. */
static void edit_metrics(const char *seed_dir, const char *from, const char *to)
{
    char path[512];
    snprintf(path, sizeof(path), "%s/metrics.csv", seed_dir);
    size_t n = 0;
    char *csv = harness_read(path, &n);
    ck_assert_ptr_nonnull(csv);
    char *body = strchr(csv, '\n');
    char *at = strstr(body, from);
    ck_assert_msg(at != NULL, "no %s in %s", from, path);
    FILE *f = fopen(path, "w");
    fwrite(csv, 1, (size_t)(at - csv), f);
    fputs(to, f);
    fputs(at + strlen(from), f);
    fclose(f);
    free(csv);
}

/* The golden's third line of metrics.csv, field `k` (the value to break). */
static void field_of(const char *seed_dir, size_t k, char *out, size_t size)
{
    char path[512], text[16384];
    ck_assert_int_lt(snprintf(path, sizeof(path), "%s/metrics.csv", seed_dir), (int)sizeof(path));
    harness_read_into(path, text, sizeof(text));
    char *line = strchr(strchr(text, '\n') + 1, '\n') + 1;
    for (size_t i = 0; i < k; i++)
        line = strchr(line, ',') + 1;
    size_t len = strcspn(line, ",\n");
    snprintf(out, size, "%.*s", (int)len, line);
}

static result check_golden(const char *dir)
{
    char g[512], o[512];
    path_of(g, sizeof(g), dir, "golden");
    path_of(o, sizeof(o), dir, "out");
    return check((const char *[]){ "--golden", g, "-o", o, NULL });
}

static void expect_unusable(const result *r, const char *name)
{
    ck_assert_msg(r->status == 2, "exit %d, not 2\n%s%s", r->status, r->out, r->err);
    ck_assert_msg(strstr(r->err, name) != NULL, "no \"%s\" in: %s", name, r->err);
}

START_TEST(check_passes_a_sound_golden_and_writes_its_figure_and_junit_report)
{
    char *dir = copy_golden();
    char g[512], o[512], x[512], png[512], cmd[1200];
    path_of(g, sizeof(g), dir, "golden");
    path_of(o, sizeof(o), dir, "out");
    path_of(x, sizeof(x), dir, "report.xml");
    path_of(png, sizeof(png), dir, "out/check.png");
    result r = check((const char *[]){ "--golden", g, "-o", o, "--junit", x, NULL });
    ck_assert_msg(r.status == 0, "exit %d\n%s%s", r.status, r.out, r.err);
    ck_assert_ptr_nonnull(strstr(r.out, "false-alarm rate <= 0.01"));
    ck_assert_ptr_nonnull(strstr(r.out, "accuracy_mean"));
    /* The default recipe checks M = 4 seeds (APP_CHECK_RUN_SEEDS; docs/check.md, "Power"). */
    const char *seeds = strstr(r.out, "run seeds ");
    ck_assert_msg(seeds != NULL, "%s", r.out);
    int commas = 0;
    for (const char *c = seeds; *c != ';' && *c != '\0'; c++)
        commas += *c == ',';
    ck_assert_msg(commas == 4 - 1, "%s", r.out);
    ck_assert(exists(png));
    char text[8192];
    harness_read_into(x, text, sizeof(text));
    ck_assert_ptr_nonnull(strstr(text, "<testsuite "));
    ck_assert_ptr_nonnull(strstr(text, "name=\"test_accuracy\""));
    ck_assert_ptr_nonnull(strstr(text, "name=\"test_loss\""));
    ck_assert_ptr_nonnull(strstr(text, "name=\"throughput_sps\""));
    ck_assert_ptr_nonnull(strstr(text, "failures=\"0\""));
    /* Times, as CI tools read them: the suite's the check's wall time, split over its cases. */
    double suite = -1, cases = 0;
    const char *t = strstr(text, "<testsuite ");
    ck_assert_int_eq(sscanf(strstr(t, " time=\"") + 7, "%lf", &suite), 1);
    ck_assert_msg(suite > 0, "%s", text);
    for (const char *c = strstr(text, "<testcase "); c != NULL; c = strstr(c + 1, "<testcase ")) {
        double one = -1;
        const char *at = strstr(c, " time=\"");
        ck_assert_msg(at != NULL && at < strchr(c, '>'), "a test case without time: %s", c);
        ck_assert_int_eq(sscanf(at + 7, "%lf", &one), 1);
        cases += one;
    }
    /* 0.003: the cases' times are printed to the millisecond */
    ck_assert_double_eq_tol(cases, suite, 0.003);
    snprintf(cmd, sizeof(cmd), "command -v xmllint >/dev/null || exit 0; xmllint --noout %s", x);
    ck_assert_int_eq(system(cmd), 0);
    /* A seed shift is not a scenario change. */
    r = check(
        (const char *[]){ "--golden", g, "-o", o, "--set", "seed=500", "--seeds", "1", NULL });
    ck_assert_msg(r.status == 0 || r.status == 1, "exit %d\n%s", r.status, r.err);
    harness_cleanup(dir);
}
END_TEST

START_TEST(check_reports_a_regression_with_exit_1_and_a_junit_failure)
{
    char *dir = copy_golden();
    char g[512], o[512], x[512], text[8192], cmd[1200];
    path_of(g, sizeof(g), dir, "golden");
    path_of(o, sizeof(o), dir, "out");
    path_of(x, sizeof(x), dir, "report.xml");
    result r = check((const char *[]){ "--golden", g, "-o", o, "--junit", x, "--set",
                                       "workload.batch=64", "--allow-scenario-change", NULL });
    ck_assert_msg(r.status == 1, "exit %d\n%s%s", r.status, r.out, r.err);
    ck_assert_ptr_nonnull(strstr(r.out, "REGRESSION"));
    ck_assert_ptr_nonnull(strstr(r.out, "OUT OF BAND"));
    ck_assert_ptr_nonnull(strstr(r.out, "note: compared with a golden of another scenario"));
    harness_read_into(x, text, sizeof(text));
    ck_assert_ptr_nonnull(strstr(text, "<failure message=\"out of band:"));
    snprintf(cmd, sizeof(cmd), "command -v xmllint >/dev/null || exit 0; xmllint --noout %s", x);
    ck_assert_int_eq(system(cmd), 0);
    harness_cleanup(dir);
}
END_TEST

/* A number that is not finite, fingerprinted as if hetsim had written it. */
START_TEST(check_rejects_a_golden_number_that_is_not_finite)
{
    static const char *const bad[] = { "inf", "1e400", "nan", "-inf" };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        char *dir = copy_golden();
        char s[512], v[64];
        path_of(s, sizeof(s), dir, "golden/seed-12");
        field_of(s, 5, v, sizeof(v)); /* test_loss of row 1 */
        edit_metrics(s, v, bad[i]);
        refingerprint(s);
        result r = check_golden(dir);
        expect_unusable(&r, "seed-12/metrics.csv: line 3");
        ck_assert_msg(strstr(r.err, "not a finite number") != NULL, "%s", r.err);
        harness_cleanup(dir);
    }
}
END_TEST

/* Edited by hand: the fingerprint no longer matches. */
START_TEST(check_rejects_an_edited_or_truncated_number)
{
    char *dir = copy_golden();
    char s[512], v[64], cut[64];
    path_of(s, sizeof(s), dir, "golden/seed-13");
    field_of(s, 2, v, sizeof(v)); /* samples of row 1 */
    snprintf(cut, sizeof(cut), "%.2s", v);
    edit_metrics(s, v, cut);
    result r = check_golden(dir);
    expect_unusable(&r, "seed-13/metrics.csv: does not match");
    /* inf without refingerprinting: caught first by the fingerprint */
    harness_cleanup(dir);
    dir = copy_golden();
    path_of(s, sizeof(s), dir, "golden/seed-11");
    field_of(s, 5, v, sizeof(v));
    edit_metrics(s, v, "inf");
    r = check_golden(dir);
    expect_unusable(&r, "seed-11/metrics.csv");
    harness_cleanup(dir);
}
END_TEST

START_TEST(check_rejects_a_truncated_metrics_file)
{
    char *dir = copy_golden();
    char s[512], path[600];
    path_of(s, sizeof(s), dir, "golden/seed-12");
    snprintf(path, sizeof(path), "%s/metrics.csv", s);
    struct stat st;
    ck_assert_int_eq(stat(path, &st), 0);
    ck_assert_int_eq(truncate(path, st.st_size - 7), 0);
    refingerprint(s);
    result r = check_golden(dir);
    expect_unusable(&r, "seed-12/metrics.csv: line");
    ck_assert_msg(strstr(r.err, "truncated") != NULL || strstr(r.err, "fields") != NULL, "%s",
                  r.err);
    harness_cleanup(dir);
}
END_TEST

START_TEST(check_rejects_missing_and_extra_files_and_seeds)
{
    /* each: a shell edit of DIR/golden, the text the message must hold */
    static const char *const cases[][2] = {
        { "rm -r %s/golden/seed-12", "seed-12: missing" },
        { "rm %s/golden/seed-13/metrics.csv", "seed-13/metrics.csv: missing" },
        { "rm %s/golden/seed-11/run.json", "seed-11/run.json: missing" },
        { "rm %s/golden/seed-11/fingerprint", "seed-11/fingerprint: missing" },
        { "echo 14 >>%s/golden/seeds", "seed-14: missing" },
        { "cp -r %s/golden/seed-13 %s/golden/seed-9", "seed-9: not listed" },
        { "sed -i 's/\"seeds\": \\[11, 12, 13\\]/\"seeds\": [11, 12, 14]/' "
          "%s/golden/golden.json",
          "golden.json: seed 3 is 14" },
        { "rm %s/golden/golden.json", "golden/golden.json: missing" },
        { "rm %s/golden/seeds", "no golden here" },
        { "printf '11\\n12\\n' >%s/golden/seeds", "at least 3" },
        { "printf '11\\n11\\n12\\n' >%s/golden/seeds", "listed twice" },
        { "sed -i 's/\"format\": 2/\"format\": 1/' %s/golden/golden.json", "format 2 expected" },
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char *dir = copy_golden();
        sh(cases[i][0], dir);
        result r = check_golden(dir);
        expect_unusable(&r, cases[i][1]);
        harness_cleanup(dir);
    }
}
END_TEST

/* copy_golden, and beside it "other": a golden of the same scenario with eval.samples=300,
 * seeds 3 (so with a seed-12 of another scenario). */
static char *copy_golden_and_other(void)
{
    char *dir = copy_golden();
    char other[512];
    path_of(other, sizeof(other), dir, "other");
    result r = check((const char *[]){ "--golden", other, "--update", "--seeds", "3", "--set",
                                       "eval.samples=300", NULL });
    ck_assert_msg(r.status == 0, "%s", r.err);
    return dir;
}

/* A seed of another scenario moved in (what a non-atomic update killed midway left). */
START_TEST(check_rejects_a_golden_mixing_two_scenarios)
{
    char *dir = copy_golden_and_other();
    sh("rm -r %s/golden/seed-12 && cp -r %s/other/seed-12 %s/golden/", dir);
    result r = check_golden(dir);
    expect_unusable(&r, "seed-12/run.json: scenario hash");
    harness_cleanup(dir);
}
END_TEST

/* The same seed of another scenario, with its hash in golden.json edited to match (it passed:
 * only the first seed's scenario was compared): every seed's resolved scenario is compared,
 * and a golden that mixes two is unusable, --allow-scenario-change or not. */
START_TEST(check_rejects_a_foreign_seed_whose_hash_was_edited)
{
    char *dir = copy_golden_and_other();
    char g[512], o[512];
    path_of(o, sizeof(o), dir, "out");
    sh("cd %s && h() { sed -n 's/.*\"scenario_hash\": \"\\([0-9a-f]*\\)\".*/\\1/p' $1/run.json; } "
       "&& old=$(h golden/seed-12) && new=$(h other/seed-12) && rm -r golden/seed-12 && "
       "cp -r other/seed-12 golden/ && sed -i \"s/$old/$new/\" golden/golden.json",
       dir);
    path_of(g, sizeof(g), dir, "golden");
    for (size_t i = 0; i < 2; i++) {
        result r = check((const char *[]){ "--golden", g, "-o", o,
                                           i == 0 ? NULL : "--allow-scenario-change", NULL });
        expect_unusable(&r, "seed-12/run.json: a run of another scenario than");
        ck_assert_msg(strstr(r.err, "eval.samples") != NULL, "%s", r.err);
    }
    harness_cleanup(dir);
}
END_TEST

START_TEST(check_rejects_a_golden_of_another_scenario_unless_allowed)
{
    char *dir = copy_golden();
    char g[512], o[512];
    path_of(g, sizeof(g), dir, "golden");
    path_of(o, sizeof(o), dir, "out");
    result r = check((const char *[]){ "--golden", g, "-o", o, "--set", "eval.samples=300", "--set",
                                       "workload.lr=0.04", "--seeds", "1", NULL });
    expect_unusable(&r, "differs from the golden's");
    ck_assert_msg(strstr(r.err, "eval.samples") != NULL && strstr(r.err, "workload.lr") != NULL,
                  "%s", r.err);
    r = check((const char *[]){ "--golden", g, "-o", o, "--set", "eval.samples=300", "--seeds", "1",
                                "--allow-scenario-change", NULL });
    ck_assert_msg(r.status == 0 || r.status == 1, "exit %d: %s", r.status, r.err);
    harness_cleanup(dir);
}
END_TEST

START_TEST(check_writes_a_junit_error_for_an_unusable_golden)
{
    char *dir = copy_golden();
    char g[512], o[512], x[512], text[4096], cmd[1200];
    path_of(g, sizeof(g), dir, "golden");
    path_of(o, sizeof(o), dir, "out");
    path_of(x, sizeof(x), dir, "report.xml");
    sh("rm -r %s/golden/seed-12", dir);
    result r = check((const char *[]){ "--golden", g, "-o", o, "--junit", x, NULL });
    expect_unusable(&r, "seed-12: missing");
    harness_read_into(x, text, sizeof(text));
    ck_assert_ptr_nonnull(strstr(text, "<error message=\""));
    ck_assert_ptr_nonnull(strstr(text, "errors=\"1\""));
    snprintf(cmd, sizeof(cmd), "command -v xmllint >/dev/null || exit 0; xmllint --noout %s", x);
    ck_assert_int_eq(system(cmd), 0);
    harness_cleanup(dir);
}
END_TEST

/* An update killed with -9 leaves the old golden whole; the next update completes. */
START_TEST(check_update_killed_midway_leaves_the_old_golden)
{
    char *dir = copy_golden();
    char g[512], partial[600], seed[700], before[4096], after[4096], o[600], e[600];
    path_of(g, sizeof(g), dir, "golden");
    snprintf(partial, sizeof(partial), "%s.partial", g);
    snprintf(seed, sizeof(seed), "%s/seed-11/run.json", partial);
    snprintf(o, sizeof(o), "%s/update.out", dir);
    snprintf(e, sizeof(e), "%s/update.err", dir);
    char manifest[600];
    snprintf(manifest, sizeof(manifest), "%s/golden.json", g);
    harness_read_into(manifest, before, sizeof(before));
    pid_t pid = start((const char *[]){ "--golden", g, "--update", "--seeds", "3", "--set",
                                        "eval.samples=300", NULL },
                      o, e);
    for (int i = 0; i < 3000 && !exists(seed); i++) {
        struct timespec ts = { 0, 2000000 };
        nanosleep(&ts, NULL);
    }
    ck_assert_msg(exists(seed), "the update wrote no seed in %s", partial);
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
    harness_read_into(manifest, after, sizeof(after));
    ck_assert_str_eq(before, after);
    result r = check_golden(dir);
    ck_assert_msg(r.status == 0, "exit %d\n%s%s", r.status, r.out, r.err);
    r = check((const char *[]){ "--golden", g, "--update", "--seeds", "3", "--set",
                                "eval.samples=300", NULL });
    ck_assert_msg(r.status == 0, "%s", r.err);
    ck_assert(!exists(partial));
    r = check_golden(dir);
    expect_unusable(&r, "eval.samples");
    harness_cleanup(dir);
}
END_TEST

START_TEST(check_update_refuses_to_replace_a_directory_that_is_no_golden)
{
    char *dir = harness_tmpdir("check");
    char g[512], keep[600];
    path_of(g, sizeof(g), dir, "mine");
    snprintf(keep, sizeof(keep), "%s/notes.txt", g);
    sh("mkdir %s/mine && echo x >%s/mine/notes.txt", dir);
    result r = check((const char *[]){ "--golden", g, "--update", "--seeds", "3", NULL });
    expect_unusable(&r, "not a golden");
    ck_assert(exists(keep));
    harness_cleanup(dir);
}
END_TEST

START_TEST(check_exact_still_compares_fingerprints)
{
    char *dir = copy_golden();
    char g[512], o[512];
    path_of(g, sizeof(g), dir, "golden");
    path_of(o, sizeof(o), dir, "out");
    result r = check((const char *[]){ "--golden", g, "-o", o, "--exact", NULL });
    ck_assert_msg(r.status == 0, "exit %d\n%s%s", r.status, r.out, r.err);
    ck_assert_ptr_nonnull(strstr(r.out, "every output byte"));
    harness_cleanup(dir);
}
END_TEST

/* ---- The places a check writes (issue 38, items 2 and 3) ----------------------------- */

/* A directory `name` under `dir` marked as a kind of hetsim output, with a file in it. */
static void fake_output(const char *dir, const char *name, const char *marker)
{
    char d[600];
    snprintf(d, sizeof(d), "%s/%s", dir, name);
    ck_assert_int_eq(mkdir(d, 0777), 0);
    harness_write(d, marker,
                  strcmp(marker, "index.csv") == 0 ? "point,dir,seed,stop_reason\n" : "");
    harness_write(d, "mine.txt", "2.385\n");
}

/* --junit FILE inside any hetsim output (a golden's own seeds or golden.json, a seed's run
 * directory, a sweep's or a work directory, or a link into one) is refused with exit 2 before
 * anything runs, everything as it was (it renamed its report over the golden's files). */
START_TEST(check_refuses_a_junit_file_inside_any_hetsim_output)
{
    char *dir = copy_golden();
    char g[512], o[512], link[600], before[16384], after[16384];
    path_of(g, sizeof(g), dir, "golden");
    path_of(o, sizeof(o), dir, "out");
    fake_output(dir, "sweep", ".hetsim-sweep");
    fake_output(dir, "w.partial", ".hetsim-partial");
    snprintf(link, sizeof(link), "%s/link.xml", dir);
    ck_assert_int_eq(symlink("golden/golden.json", link), 0);
    static const char *const inside[] = { "golden/seeds",         "golden/golden.json",
                                          "golden/seed-11/x.xml", "golden/seed-12/metrics.csv",
                                          "sweep/index.csv",      "sweep/report.xml",
                                          "w.partial/r.xml",      "link.xml" };
    harness_tree_digest(dir, before, sizeof(before));
    for (size_t i = 0; i < sizeof(inside) / sizeof(inside[0]); i++) {
        char x[600];
        path_of(x, sizeof(x), dir, inside[i]);
        result r = check((const char *[]){ "--golden", g, "-o", o, "--junit", x, NULL });
        ck_assert_msg(r.status == 2, "%s: exit %d\n%s%s", inside[i], r.status, r.out, r.err);
        ck_assert_msg(strstr(r.err, "--junit file") != NULL && strstr(r.err, "a hetsim") != NULL,
                      "%s: %s", inside[i], r.err);
        ck_assert_str_eq(r.out, "");
        harness_tree_digest(dir, after, sizeof(after));
        ck_assert_msg(strcmp(before, after) == 0, "%s changed something", inside[i]);
    }
    result r = check_golden(dir);
    ck_assert_msg(r.status == 0, "exit %d\n%s%s", r.status, r.out, r.err);
    harness_cleanup(dir);
}
END_TEST

static bool is_type(const char *path, mode_t type)
{
    struct stat st;
    return lstat(path, &st) == 0 && (st.st_mode & S_IFMT) == type;
}

/* A --junit FILE that is not a regular file is written through or refused, never replaced:
 * a link's target is written (the link stays), a FIFO and a character device are written
 * through (a FIFO nobody reads is an error, not a wait), a directory is refused, and so is a
 * name ending in '/' (issue 38, third probe). */
START_TEST(check_writes_a_junit_through_links_fifos_and_devices_never_replacing_them)
{
    char *dir = copy_golden();
    char g[512], o[512], x[600], target[600], fifo[600], got[600], text[8192];
    path_of(g, sizeof(g), dir, "golden");
    path_of(o, sizeof(o), dir, "out");
    snprintf(x, sizeof(x), "%s/link.xml", dir);
    snprintf(target, sizeof(target), "%s/reports/target.xml", dir);
    sh("mkdir %s/reports && echo old >%s/reports/target.xml && ln -s reports/target.xml "
       "%s/link.xml",
       dir);
    result r = check((const char *[]){ "--golden", g, "-o", o, "--junit", x, NULL });
    ck_assert_msg(r.status == 0, "exit %d\n%s%s", r.status, r.out, r.err);
    ck_assert(is_type(x, S_IFLNK) && is_type(target, S_IFREG));
    harness_read_into(target, text, sizeof(text));
    ck_assert_msg(strstr(text, "<testsuites") != NULL, "%s", text);
    sh("ln -s reports/new.xml %s/dangling.xml", dir); /* a link to a file not made yet */
    snprintf(x, sizeof(x), "%s/dangling.xml", dir);
    r = check((const char *[]){ "--golden", g, "-o", o, "--junit", x, NULL });
    ck_assert_msg(r.status == 0, "exit %d\n%s%s", r.status, r.out, r.err);
    snprintf(target, sizeof(target), "%s/reports/new.xml", dir);
    ck_assert(is_type(x, S_IFLNK) && is_type(target, S_IFREG));
    /* A FIFO with a reader, then none. */
    snprintf(fifo, sizeof(fifo), "%s/fifo", dir);
    snprintf(got, sizeof(got), "%s/got.xml", dir);
    ck_assert_int_eq(mkfifo(fifo, 0600), 0);
    pid_t reader = fork();
    if (reader == 0) {
        int in = open(fifo, O_RDONLY), outfd = open(got, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        char buf[4096];
        for (ssize_t n; (n = read(in, buf, sizeof(buf))) > 0;)
            if (write(outfd, buf, (size_t)n) != n)
                _exit(1);
        _exit(0);
    }
    r = check((const char *[]){ "--golden", g, "-o", o, "--junit", fifo, NULL });
    int status;
    waitpid(reader, &status, 0);
    ck_assert_msg(r.status == 0, "exit %d\n%s%s", r.status, r.out, r.err);
    ck_assert(is_type(fifo, S_IFIFO));
    harness_read_into(got, text, sizeof(text));
    ck_assert_msg(strstr(text, "</testsuites>") != NULL, "%s", text);
    r = check((const char *[]){ "--golden", g, "-o", o, "--junit", fifo, NULL });
    ck_assert_msg(r.status == 1 && strstr(r.err, "a FIFO that no process reads") != NULL,
                  "exit %d\n%s", r.status, r.err);
    ck_assert(is_type(fifo, S_IFIFO));
    r = check((const char *[]){ "--golden", g, "-o", o, "--junit", "/dev/null", NULL });
    ck_assert_msg(r.status == 0, "exit %d\n%s", r.status, r.err);
    ck_assert(is_type("/dev/null", S_IFCHR));
    r = check((const char *[]){ "--golden", g, "-o", o, "--junit", o, NULL });
    ck_assert_msg(r.status == 2 && strstr(r.err, "is a directory") != NULL, "exit %d\n%s", r.status,
                  r.err);
    snprintf(x, sizeof(x), "%s/xml/", dir); /* it wrote a file named xml, exit 0 */
    r = check((const char *[]){ "--golden", g, "-o", o, "--junit", x, NULL });
    ck_assert_msg(r.status == 2 && strstr(r.err, "names a directory") != NULL, "exit %d\n%s",
                  r.status, r.err);
    x[strlen(x) - 1] = '\0';
    ck_assert_msg(!harness_exists(x), "%s was written", x);
    harness_cleanup(dir);
}
END_TEST

/* -o equal to a hetsim directory counts as inside it (only -o GOLDEN/sub was refused: -o
 * GOLDEN wrote the runs and check.* into the golden, and every later check exited 2). */
START_TEST(check_output_equal_to_a_hetsim_directory_is_refused)
{
    char *dir = copy_golden();
    char g[512], before[16384], after[16384];
    path_of(g, sizeof(g), dir, "golden");
    fake_output(dir, "sweep", ".hetsim-sweep");
    static const char *const outs[] = { "golden", "golden/", "golden/seed-11", "sweep" };
    harness_tree_digest(dir, before, sizeof(before));
    for (size_t i = 0; i < sizeof(outs) / sizeof(outs[0]); i++) {
        char o[600];
        path_of(o, sizeof(o), dir, outs[i]);
        result r = check((const char *[]){ "--golden", g, "-o", o, NULL });
        ck_assert_msg(r.status == 2, "-o %s: exit %d\n%s%s", outs[i], r.status, r.out, r.err);
        ck_assert_msg(strstr(r.err, "a hetsim") != NULL, "-o %s: %s", outs[i], r.err);
        harness_tree_digest(dir, after, sizeof(after));
        ck_assert_msg(strcmp(before, after) == 0, "-o %s changed something", outs[i]);
    }
    result r = check_golden(dir);
    ck_assert_msg(r.status == 0, "exit %d\n%s%s", r.status, r.out, r.err);
    harness_cleanup(dir);
}
END_TEST

/* An update writes its golden alone: -o (a check's runs and figure) and --junit (a check's
 * verdict) are refused with it, exit 2, nothing made and the golden as it was (both were
 * ignored, exit 0: no report where CI looked for one). */
START_TEST(check_update_refuses_an_output_directory_and_a_junit_report)
{
    char *dir = copy_golden();
    char g[512], o[600], before[16384], after[16384];
    path_of(g, sizeof(g), dir, "golden");
    static const char *const opts[][2] = { { "-o", "out" }, { "--junit", "report.xml" } };
    harness_tree_digest(dir, before, sizeof(before));
    for (size_t i = 0; i < 2; i++) {
        path_of(o, sizeof(o), dir, opts[i][1]);
        result r = check(
            (const char *[]){ "--golden", g, "--update", "--seeds", "3", opts[i][0], o, NULL });
        char want[64];
        snprintf(want, sizeof(want), "--update and %s do not go together", opts[i][0]);
        ck_assert_msg(r.status == 2, "%s: exit %d\n%s%s", opts[i][0], r.status, r.out, r.err);
        ck_assert_msg(strstr(r.err, want) != NULL, "%s: %s", opts[i][0], r.err);
        ck_assert(!exists(o));
        harness_tree_digest(dir, after, sizeof(after));
        ck_assert_msg(strcmp(before, after) == 0, "%s changed something", opts[i][0]);
    }
    harness_cleanup(dir);
}
END_TEST

/* A --junit FILE the check reads or writes itself is refused with exit 2, nothing changed: a
 * name of hetsim's work directories or locks (X.partial, X.lock: the report, a plain file
 * there, stopped every later run into X or update of X), the scenario file (its report
 * replaced the scenario it checked; through a link or a hard link too), one of the check's
 * own files in its output directory (check.csv was replaced by the report). */
START_TEST(check_refuses_a_junit_file_it_reads_or_writes_itself)
{
    char *dir = copy_golden();
    char g[512], o[512], s[512], before[16384], after[16384];
    path_of(g, sizeof(g), dir, "golden");
    path_of(o, sizeof(o), dir, "out");
    path_of(s, sizeof(s), dir, "s.json");
    sh("cp " SCENARIO " %s/s.json && ln -s s.json %s/s-link.json && ln %s/s.json %s/s-hard.json",
       dir);
    static const char *const own[] = { "golden.partial", "out.lock",     "x.partial",
                                       "s.json",         "s-link.json",  "s-hard.json",
                                       "out/check.csv",  "out/check.png" };
    harness_tree_digest(dir, before, sizeof(before));
    scenario = s;
    for (size_t i = 0; i < sizeof(own) / sizeof(own[0]); i++) {
        char x[600];
        path_of(x, sizeof(x), dir, own[i]);
        result r = check((const char *[]){ "--golden", g, "-o", o, "--junit", x, NULL });
        ck_assert_msg(r.status == 2, "%s: exit %d\n%s%s", own[i], r.status, r.out, r.err);
        ck_assert_msg(strstr(r.err, "--junit file") != NULL, "%s: %s", own[i], r.err);
        harness_tree_digest(dir, after, sizeof(after));
        ck_assert_msg(strcmp(before, after) == 0, "%s changed something", own[i]);
    }
    scenario = SCENARIO;
    harness_cleanup(dir);
}
END_TEST

/* A timing-only scenario's check draws its figure, the panels without test accuracy or loss
 * saying so, and passes (gnuplot failed on the empty curves: "x range is invalid", exit 1). */
START_TEST(check_of_a_timing_only_scenario_draws_its_figure_and_passes)
{
    char *dir = harness_tmpdir("check");
    char g[512], o[512], png[512];
    path_of(g, sizeof(g), dir, "golden");
    path_of(o, sizeof(o), dir, "out");
    path_of(png, sizeof(png), dir, "out/check.png");
    const char *none = "workload={\"model\": {\"name\": \"none\"}, \"message_bytes\": 40961}";
    result r =
        check((const char *[]){ "--set", none, "--golden", g, "--update", "--seeds", "3", NULL });
    ck_assert_msg(r.status == 0, "exit %d\n%s%s", r.status, r.out, r.err);
    r = check((const char *[]){ "--set", none, "--golden", g, "-o", o, "--seeds", "2", NULL });
    ck_assert_msg(r.status == 0, "exit %d\n%s%s", r.status, r.out, r.err);
    ck_assert(exists(png));
    harness_cleanup(dir);
}
END_TEST

/* A scenario that is a FIFO is refused at once: each seed's run reads it again, so a check
 * (or an update) waited forever for the next writer. */
START_TEST(check_refuses_a_scenario_that_is_a_fifo)
{
    char *dir = copy_golden();
    char g[512], fifo[512];
    path_of(g, sizeof(g), dir, "golden");
    path_of(fifo, sizeof(fifo), dir, "s.json");
    ck_assert_int_eq(mkfifo(fifo, 0600), 0);
    scenario = fifo;
    result r = check((const char *[]){ "--golden", g, NULL });
    ck_assert_msg(r.status == 2 && strstr(r.err, "is a FIFO") != NULL, "exit %d: %s", r.status,
                  r.err);
    scenario = SCENARIO;
    harness_cleanup(dir);
}
END_TEST

static void setup_base(void)
{
    make_base();
    char g[512];
    path_of(g, sizeof(g), base, "golden");
    result r = check((const char *[]){ "--golden", g, "--update", "--seeds", "3", NULL });
    if (r.status != 0) {
        fprintf(stderr, "cannot make the base golden: %s", r.err);
        exit(1);
    }
}

static void teardown_base(void)
{
    char cmd[128];
    snprintf(cmd, sizeof(cmd), "rm -rf %s", base);
    if (system(cmd) != 0)
        fprintf(stderr, "cannot remove %s\n", base);
}

Suite *test_suite(void)
{
    Suite *s = suite_create("check");
    TCase *tc = tcase_create("golden");
    tcase_set_timeout(tc, 240);
    tcase_add_unchecked_fixture(tc, setup_base, teardown_base);
    tcase_add_test(tc, check_passes_a_sound_golden_and_writes_its_figure_and_junit_report);
    tcase_add_test(tc, check_reports_a_regression_with_exit_1_and_a_junit_failure);
    tcase_add_test(tc, check_rejects_a_golden_number_that_is_not_finite);
    tcase_add_test(tc, check_rejects_an_edited_or_truncated_number);
    tcase_add_test(tc, check_rejects_a_truncated_metrics_file);
    tcase_add_test(tc, check_rejects_missing_and_extra_files_and_seeds);
    tcase_add_test(tc, check_rejects_a_golden_mixing_two_scenarios);
    tcase_add_test(tc, check_rejects_a_foreign_seed_whose_hash_was_edited);
    tcase_add_test(tc, check_rejects_a_golden_of_another_scenario_unless_allowed);
    tcase_add_test(tc, check_writes_a_junit_error_for_an_unusable_golden);
    tcase_add_test(tc, check_update_killed_midway_leaves_the_old_golden);
    tcase_add_test(tc, check_update_refuses_to_replace_a_directory_that_is_no_golden);
    tcase_add_test(tc, check_exact_still_compares_fingerprints);
    suite_add_tcase(s, tc);
    TCase *places = tcase_create("places");
    tcase_set_timeout(places, 240);
    tcase_add_unchecked_fixture(places, setup_base, teardown_base);
    tcase_add_test(places, check_refuses_a_junit_file_inside_any_hetsim_output);
    tcase_add_test(places,
                   check_writes_a_junit_through_links_fifos_and_devices_never_replacing_them);
    tcase_add_test(places, check_output_equal_to_a_hetsim_directory_is_refused);
    tcase_add_test(places, check_update_refuses_an_output_directory_and_a_junit_report);
    tcase_add_test(places, check_refuses_a_junit_file_it_reads_or_writes_itself);
    tcase_add_test(places, check_of_a_timing_only_scenario_draws_its_figure_and_passes);
    tcase_add_test(places, check_refuses_a_scenario_that_is_a_fifo);
    suite_add_tcase(s, places);
    return s;
}
