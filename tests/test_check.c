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
#include "harness_check.h"

typedef harness_result result;

/* Starts $HETSIM check CHKT_SCENARIO with the short scenario's overrides and `args`. */
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
            bin, "check", chkt_scenario, "--set", "stop.time_s=2", "--set", "eval.every_s=0.25"
        };
        size_t n = 7;
        for (size_t i = 0; args[i] != NULL && n < 38; i++)
            argv[n++] = args[i];
        execv(bin, (char *const *)argv);
        _exit(127);
    }
    return pid;
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

static void expect_unusable(const result *r, const char *name)
{
    ck_assert_msg(r->status == 2, "exit %d, not 2\n%s%s", r->status, r->out, r->err);
    ck_assert_msg(strstr(r->err, name) != NULL, "no \"%s\" in: %s", name, r->err);
}

/* For each of the n cases {command, name}: a copy of the base golden damaged by the shell
 * command (chkt_sh) is refused by a check, naming `name` (expect_unusable). */
static void expect_each_unusable(const char *const (*cases)[2], size_t n)
{
    for (size_t i = 0; i < n; i++) {
        char *dir = chkt_copy_golden();
        chkt_sh(cases[i][0], dir);
        result r = chkt_check_golden(dir);
        expect_unusable(&r, cases[i][1]);
        harness_cleanup(dir);
    }
}

START_TEST(check_passes_a_sound_golden_and_writes_its_figure_and_junit_report)
{
    char *dir = chkt_copy_golden();
    char g[512], o[512], x[512], png[512], cmd[1200];
    chkt_path_of(g, sizeof(g), dir, "golden");
    chkt_path_of(o, sizeof(o), dir, "out");
    chkt_path_of(x, sizeof(x), dir, "report.xml");
    chkt_path_of(png, sizeof(png), dir, "out/check.png");
    result r = chkt_check((const char *[]){ "--golden", g, "-o", o, "--junit", x, NULL });
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
    ck_assert(chkt_exists(png));
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
    r = chkt_check(
        (const char *[]){ "--golden", g, "-o", o, "--set", "seed=500", "--seeds", "1", NULL });
    ck_assert_msg(r.status == 0 || r.status == 1, "exit %d\n%s", r.status, r.err);
    harness_cleanup(dir);
}
END_TEST

START_TEST(check_reports_a_regression_with_exit_1_and_a_junit_failure)
{
    char *dir = chkt_copy_golden();
    char g[512], o[512], x[512], text[8192], cmd[1200];
    chkt_path_of(g, sizeof(g), dir, "golden");
    chkt_path_of(o, sizeof(o), dir, "out");
    chkt_path_of(x, sizeof(x), dir, "report.xml");
    result r = chkt_check((const char *[]){ "--golden", g, "-o", o, "--junit", x, "--set",
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
        char *dir = chkt_copy_golden();
        char s[512], v[64];
        chkt_path_of(s, sizeof(s), dir, "golden/seed-12");
        field_of(s, 5, v, sizeof(v)); /* test_loss of row 1 */
        edit_metrics(s, v, bad[i]);
        refingerprint(s);
        result r = chkt_check_golden(dir);
        expect_unusable(&r, "seed-12/metrics.csv: line 3");
        ck_assert_msg(strstr(r.err, "not a finite number") != NULL, "%s", r.err);
        harness_cleanup(dir);
    }
}
END_TEST

/* Edited by hand: the fingerprint no longer matches. */
START_TEST(check_rejects_an_edited_or_truncated_number)
{
    char *dir = chkt_copy_golden();
    char s[512], v[64], cut[64];
    chkt_path_of(s, sizeof(s), dir, "golden/seed-13");
    field_of(s, 2, v, sizeof(v)); /* samples of row 1 */
    snprintf(cut, sizeof(cut), "%.2s", v);
    edit_metrics(s, v, cut);
    result r = chkt_check_golden(dir);
    expect_unusable(&r, "seed-13/metrics.csv: does not match");
    /* inf without refingerprinting: caught first by the fingerprint */
    harness_cleanup(dir);
    dir = chkt_copy_golden();
    chkt_path_of(s, sizeof(s), dir, "golden/seed-11");
    field_of(s, 5, v, sizeof(v));
    edit_metrics(s, v, "inf");
    r = chkt_check_golden(dir);
    expect_unusable(&r, "seed-11/metrics.csv");
    harness_cleanup(dir);
}
END_TEST

START_TEST(check_rejects_a_truncated_metrics_file)
{
    char *dir = chkt_copy_golden();
    char s[512], path[600];
    chkt_path_of(s, sizeof(s), dir, "golden/seed-12");
    snprintf(path, sizeof(path), "%s/metrics.csv", s);
    struct stat st;
    ck_assert_int_eq(stat(path, &st), 0);
    ck_assert_int_eq(truncate(path, st.st_size - 7), 0);
    refingerprint(s);
    result r = chkt_check_golden(dir);
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
        { "rm %s/golden/seeds", "golden/seeds: missing: an incomplete golden" },
        { "printf '11\\n12\\n' >%s/golden/seeds", "at least 3" },
        { "printf '11\\n11\\n12\\n' >%s/golden/seeds", "listed twice" },
        { "sed -i 's/\"format\": 2/\"format\": 1/' %s/golden/golden.json", "format 2 expected" },
        { "printf ' 11\\n12\\n13\\n' >%s/golden/seeds", "seeds: line 1: not a seed" },
        { "printf '11\\n012\\n13\\n' >%s/golden/seeds", "seeds: line 2: not a seed" },
        { "printf '11\\n+12\\n13\\n' >%s/golden/seeds", "seeds: line 2: not a seed" },
        { "sed -i 's/\"format\"/\"extra\": 1, \"format\"/' %s/golden/golden.json",
          "golden.json: $.extra: unknown key" },
    };
    expect_each_unusable(cases, sizeof(cases) / sizeof(cases[0]));
}
END_TEST

/* copy_golden, and beside it "other": a golden of the same scenario with eval.samples=300,
 * seeds 3 (so with a seed-12 of another scenario). */
static char *copy_golden_and_other(void)
{
    char *dir = chkt_copy_golden();
    char other[512];
    chkt_path_of(other, sizeof(other), dir, "other");
    result r = chkt_check((const char *[]){ "--golden", other, "--update", "--seeds", "3", "--set",
                                            "eval.samples=300", NULL });
    ck_assert_msg(r.status == 0, "%s", r.err);
    return dir;
}

/* A seed of another scenario moved in (what a non-atomic update killed midway left). */
START_TEST(check_rejects_a_golden_mixing_two_scenarios)
{
    char *dir = copy_golden_and_other();
    chkt_sh("rm -r %s/golden/seed-12 && cp -r %s/other/seed-12 %s/golden/", dir);
    result r = chkt_check_golden(dir);
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
    chkt_path_of(o, sizeof(o), dir, "out");
    chkt_sh(
        "cd %s && h() { sed -n 's/.*\"scenario_hash\": \"\\([0-9a-f]*\\)\".*/\\1/p' $1/run.json; } "
        "&& old=$(h golden/seed-12) && new=$(h other/seed-12) && rm -r golden/seed-12 && "
        "cp -r other/seed-12 golden/ && sed -i \"s/$old/$new/\" golden/golden.json",
        dir);
    chkt_path_of(g, sizeof(g), dir, "golden");
    for (size_t i = 0; i < 2; i++) {
        result r = chkt_check((const char *[]){ "--golden", g, "-o", o,
                                                i == 0 ? NULL : "--allow-scenario-change", NULL });
        expect_unusable(&r, "seed-12/run.json: a run of another scenario than");
        ck_assert_msg(strstr(r.err, "eval.samples") != NULL, "%s", r.err);
    }
    harness_cleanup(dir);
}
END_TEST

START_TEST(check_rejects_a_golden_of_another_scenario_unless_allowed)
{
    char *dir = chkt_copy_golden();
    char g[512], o[512];
    chkt_path_of(g, sizeof(g), dir, "golden");
    chkt_path_of(o, sizeof(o), dir, "out");
    result r = chkt_check((const char *[]){ "--golden", g, "-o", o, "--set", "eval.samples=300",
                                            "--set", "workload.lr=0.04", "--seeds", "1", NULL });
    expect_unusable(&r, "differs from the golden's");
    ck_assert_msg(strstr(r.err, "eval.samples") != NULL && strstr(r.err, "workload.lr") != NULL,
                  "%s", r.err);
    r = chkt_check((const char *[]){ "--golden", g, "-o", o, "--set", "eval.samples=300", "--seeds",
                                     "1", "--allow-scenario-change", NULL });
    ck_assert_msg(r.status == 0 || r.status == 1, "exit %d: %s", r.status, r.err);
    harness_cleanup(dir);
}
END_TEST

START_TEST(check_writes_a_junit_error_for_an_unusable_golden)
{
    char *dir = chkt_copy_golden();
    char g[512], o[512], x[512], text[4096], cmd[1200];
    chkt_path_of(g, sizeof(g), dir, "golden");
    chkt_path_of(o, sizeof(o), dir, "out");
    chkt_path_of(x, sizeof(x), dir, "report.xml");
    chkt_sh("rm -r %s/golden/seed-12", dir);
    result r = chkt_check((const char *[]){ "--golden", g, "-o", o, "--junit", x, NULL });
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
    char *dir = chkt_copy_golden();
    char g[512], partial[600], seed[700], before[4096], after[4096], o[600], e[600];
    chkt_path_of(g, sizeof(g), dir, "golden");
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
    for (int i = 0; i < 3000 && !chkt_exists(seed); i++) {
        struct timespec ts = { 0, 2000000 };
        nanosleep(&ts, NULL);
    }
    ck_assert_msg(chkt_exists(seed), "the update wrote no seed in %s", partial);
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
    harness_read_into(manifest, after, sizeof(after));
    ck_assert_str_eq(before, after);
    result r = chkt_check_golden(dir);
    ck_assert_msg(r.status == 0, "exit %d\n%s%s", r.status, r.out, r.err);
    r = chkt_check((const char *[]){ "--golden", g, "--update", "--seeds", "3", "--set",
                                     "eval.samples=300", NULL });
    ck_assert_msg(r.status == 0, "%s", r.err);
    ck_assert(!chkt_exists(partial));
    r = chkt_check_golden(dir);
    expect_unusable(&r, "eval.samples");
    harness_cleanup(dir);
}
END_TEST

START_TEST(check_update_refuses_to_replace_a_directory_that_is_no_golden)
{
    char *dir = harness_tmpdir("check");
    char g[512], keep[600];
    chkt_path_of(g, sizeof(g), dir, "mine");
    snprintf(keep, sizeof(keep), "%s/notes.txt", g);
    chkt_sh("mkdir %s/mine && echo x >%s/mine/notes.txt", dir);
    result r = chkt_check((const char *[]){ "--golden", g, "--update", "--seeds", "3", NULL });
    expect_unusable(&r, "not a golden");
    ck_assert(chkt_exists(keep));
    harness_cleanup(dir);
}
END_TEST

START_TEST(check_exact_still_compares_fingerprints)
{
    char *dir = chkt_copy_golden();
    char g[512], o[512];
    chkt_path_of(g, sizeof(g), dir, "golden");
    chkt_path_of(o, sizeof(o), dir, "out");
    result r = chkt_check((const char *[]){ "--golden", g, "-o", o, "--exact", NULL });
    ck_assert_msg(r.status == 0, "exit %d\n%s%s", r.status, r.out, r.err);
    ck_assert_ptr_nonnull(strstr(r.out, "every output byte"));
    harness_cleanup(dir);
}
END_TEST

/* A seeds file as an editor leaves it is read (issue 38, ninth probe: CRLF line ends and a
 * last line without its newline were "not a seed"); a NUL byte, a stray CR or a byte-order
 * mark past the first line still is no seed. */
START_TEST(check_reads_a_seeds_file_as_an_editor_leaves_it)
{
    static const char *const sound[] = {
        "printf '11\\r\\n12\\r\\n13\\r\\n' >%s/golden/seeds",
        "printf '11\\n12\\n13' >%s/golden/seeds",
        "printf '\\357\\273\\27711\\n12\\n13\\n' >%s/golden/seeds",
    };
    static const char *const bad[][2] = {
        { "printf '11\\n1\\0002\\n13\\n' >%s/golden/seeds", "seeds: line 2: not a seed" },
        { "printf '11\\n12\\n13\\r\\r\\n' >%s/golden/seeds", "seeds: line 3: not a seed" },
        { "printf '11\\n\\357\\273\\27712\\n13\\n' >%s/golden/seeds", "seeds: line 2: not a seed" },
    };
    for (size_t i = 0; i < sizeof(sound) / sizeof(sound[0]); i++) {
        char *dir = chkt_copy_golden();
        chkt_sh(sound[i], dir);
        result r = chkt_check_golden(dir);
        ck_assert_msg(r.status == 0, "%s: exit %d\n%s%s", sound[i], r.status, r.out, r.err);
        harness_cleanup(dir);
    }
    expect_each_unusable(bad, sizeof(bad) / sizeof(bad[0]));
}
END_TEST

/* --exact reads the golden whole, as a statistical check does (issue 38: it read only seed
 * S's fingerprint, so a golden without golden.json or with another seed's metrics edited
 * passed). */
START_TEST(check_exact_refuses_a_damaged_golden)
{
    static const char *const cases[][2] = {
        { "rm %s/golden/golden.json", "golden/golden.json: missing" },
        { "sed -i '3s/^0\\.25,/0.26,/' %s/golden/seed-12/metrics.csv",
          "seed-12/metrics.csv: does not match" },
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char *dir = chkt_copy_golden();
        char g[512], o[512];
        chkt_path_of(g, sizeof(g), dir, "golden");
        chkt_path_of(o, sizeof(o), dir, "out");
        chkt_sh(cases[i][0], dir);
        result r = chkt_check((const char *[]){ "--golden", g, "-o", o, "--exact", NULL });
        expect_unusable(&r, cases[i][1]);
        harness_cleanup(dir);
    }
    /* A seed the golden does not list is named before anything runs. */
    char *dir = chkt_copy_golden();
    char g[512], o[512];
    chkt_path_of(g, sizeof(g), dir, "golden");
    chkt_path_of(o, sizeof(o), dir, "out");
    result r =
        chkt_check((const char *[]){ "--golden", g, "-o", o, "--exact", "--set", "seed=14", NULL });
    expect_unusable(&r, "no golden fingerprint for seed 14 (its seeds file does not list it)");
    ck_assert(!chkt_exists(o));
    harness_cleanup(dir);
}
END_TEST

/* Seeds near 2^53 - 1, the largest: a golden of them reads back (golden.json's seeds were
 * compared as cJSON printed them, 9.00719925474099e+15), and an update or a check that would
 * run past it is refused before it runs any, naming the count (the run past it blamed the
 * scenario's $.seed, which is in range). Issue 38, ninth probe. */
START_TEST(check_runs_seeds_up_to_the_largest_and_refuses_past_it)
{
    char *dir = harness_tmpdir("check");
    char g[512], o[512], past[512];
    chkt_path_of(g, sizeof(g), dir, "golden");
    chkt_path_of(o, sizeof(o), dir, "out");
    chkt_path_of(past, sizeof(past), dir, "past");
    result r = chkt_check((const char *[]){ "--golden", past, "--update", "--seeds", "3", "--set",
                                            "seed=9007199254740990", NULL });
    expect_unusable(&r, "3 seeds from the scenario's seed 9007199254740990 run past "
                        "9007199254740991, the largest seed (2^53 - 1)");
    ck_assert(!chkt_exists(past));
    r = chkt_check((const char *[]){ "--golden", g, "--update", "--seeds", "3", "--set",
                                     "seed=9007199254740987", NULL });
    ck_assert_msg(r.status == 0, "exit %d\n%s%s", r.status, r.out, r.err);
    r = chkt_check((const char *[]){ "--golden", g, "-o", o, "--seeds", "2", "--set",
                                     "seed=9007199254740987", NULL });
    ck_assert_msg(r.status == 0, "exit %d\n%s%s", r.status, r.out, r.err);
    ck_assert_ptr_nonnull(strstr(r.out, "run seeds 9007199254740990, 9007199254740991;"));
    r = chkt_check((const char *[]){ "--golden", g, "-o", past, "--seeds", "3", "--set",
                                     "seed=9007199254740987", NULL });
    expect_unusable(&r, "run past 9007199254740991");
    ck_assert(!chkt_exists(past));
    harness_cleanup(dir);
}
END_TEST

/* ---- The places a check writes (issue 38, items 2 and 3) ----------------------------- */

Suite *test_suite(void)
{
    Suite *s = suite_create("check");
    TCase *tc = tcase_create("golden");
    tcase_set_timeout(tc, 240);
    tcase_add_unchecked_fixture(tc, chkt_setup_base, chkt_teardown_base);
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
    tcase_add_test(tc, check_reads_a_seeds_file_as_an_editor_leaves_it);
    tcase_add_test(tc, check_exact_refuses_a_damaged_golden);
    tcase_add_test(tc, check_runs_seeds_up_to_the_largest_and_refuses_past_it);
    suite_add_tcase(s, tc);
    return s;
}
