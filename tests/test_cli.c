/* The command line as a user meets it: exit codes, messages on stderr, results on stdout,
 * no output directory left behind by bad input. Runs the built binary ($HETSIM). */
#include <glob.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <check.h>

#include "harness.h"

START_TEST(cli_prints_version_and_help)
{
    harness_result r = harness_hetsim((const char *[]){ "--version", NULL });
    ck_assert_int_eq(r.status, 0);
    ck_assert_ptr_eq(strstr(r.out, "hetsim "), r.out);
    r = harness_hetsim((const char *[]){ "--help", NULL });
    ck_assert_int_eq(r.status, 0);
    ck_assert_ptr_nonnull(strstr(r.out, "hetsim run SCENARIO.json"));
}
END_TEST

START_TEST(cli_rejects_bad_usage_with_exit_code_2)
{
    const char *const *cases[] = {
        (const char *[]){ NULL },
        (const char *[]){ "frobnicate", NULL },
        (const char *[]){ "run", NULL },
        (const char *[]){ "run", "a.json", "b.json", NULL },
        (const char *[]){ "run", "scenarios/quickstart.json", "--set", NULL },
        (const char *[]){ "run", "scenarios/quickstart.json", "--bogus", NULL },
        (const char *[]){ "list", "widgets", NULL },
        (const char *[]){ "bench", "everything", NULL },
        (const char *[]){ "validate", NULL },
        /* validate took every argument as a file: "--set: cannot open" (issue 38). */
        (const char *[]){ "validate", "scenarios/quickstart.json", "--bogus", NULL },
        (const char *[]){ "validate", "scenarios/quickstart.json", "--set", NULL },
        (const char *[]){ "validate", "--set", "workers=4", NULL },
    };
    harness_expect_usage_errors(cases, sizeof(cases) / sizeof(cases[0]));
}
END_TEST

/* Numbers on the command line are whole decimal values in range: a value that wraps (2^32
 * used to give -j 0: "0 run now", exit 0), overflows, or has a sign, a space or a suffix is a
 * usage error naming the option, and nothing runs. */
START_TEST(cli_refuses_out_of_range_and_malformed_numbers_naming_the_option)
{
    static const char sw[] = "sweeps/compare-protocols.json";
    static const struct {
        const char *option, *value;
    } cases[] = {
        { "-j", "4294967296" },
        { "-j", "8589934592" },
        { "-j", "4294967297" },
        { "-j", "18446744073709551617" },
        { "-j", "99999999999999999999999" },
        { "-j", "0" },
        { "-j", "-1" },
        { "-j", "+2" },
        { "-j", " 2" },
        { "-j", "2x" },
        { "-j", "" },
        { "--index", "18446744073709551616" },
        { "--index", "4294967296" },
        { "--index", "-1" },
        { "--index", "1.5" },
        { "--seeds", "4294967297" },
        { "--seeds", "65" },
        { "--seeds", " 3" },
        { "--threads", "0" },
        { "--threads", "257" },
        { "--threads", "2x" },
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        const char *o = cases[i].option, *v = cases[i].value;
        harness_result r =
            strcmp(o, "--seeds") == 0
                ? harness_hetsim((const char *[]){ "check", "tests/golden/curves/ps/scenario.json",
                                                   "--golden", "g", "--update", o, v, NULL })
                : harness_hetsim((const char *[]){ "sweep", sw, "--list", o, v, NULL });
        ck_assert_msg(r.status == 2, "%s \"%s\" exited %d: %s", o, v, r.status, r.out);
        ck_assert_str_eq(r.out, "");
        char want[96];
        snprintf(want, sizeof(want), "hetsim: %s needs ", o);
        ck_assert_msg(strstr(r.err, want) == r.err, "%s \"%s\": %s", o, v, r.err);
        snprintf(want, sizeof(want), "got \"%s\"", v);
        ck_assert_msg(strstr(r.err, want) != NULL, "%s \"%s\": %s", o, v, r.err);
    }
    /* The limits themselves are accepted. */
    harness_result r =
        harness_hetsim((const char *[]){ "sweep", sw, "--list", "-j", "4096", NULL });
    ck_assert_msg(r.status == 0, "%s", r.err);
    r = harness_hetsim((const char *[]){ "sweep", sw, "--index", "12", NULL });
    ck_assert_int_eq(r.status, 2);
    ck_assert_ptr_nonnull(strstr(r.err, "--index 12: the sweep has points 0 to 11"));
}
END_TEST

/* --mpi with --list or --index is refused (under mpirun every rank printed the list, or ran
 * the same point into the same directory); said once, before any MPI start-up. */
START_TEST(cli_refuses_mpi_with_list_or_index)
{
    const char *const *cases[] = {
        (const char *[]){ "sweep", "sweeps/compare-protocols.json", "--mpi", "--list", NULL },
        (const char *[]){ "sweep", "sweeps/compare-protocols.json", "--index", "3", "--mpi", NULL },
    };
    for (size_t i = 0; i < 2; i++) {
        harness_result r = harness_hetsim(cases[i]);
        ck_assert_int_eq(r.status, 2);
        ck_assert_str_eq(r.out, "");
        ck_assert_msg(strstr(r.err, i == 0 ? "hetsim: --mpi does not go with --list"
                                           : "hetsim: --mpi does not go with --index") == r.err,
                      "%s", r.err);
    }
}
END_TEST

START_TEST(cli_lists_protocols_and_topologies)
{
    harness_result r = harness_hetsim((const char *[]){ "list", "protocols", NULL });
    ck_assert_int_eq(r.status, 0);
    ck_assert_ptr_nonnull(strstr(r.out, "allreduce"));
    r = harness_hetsim((const char *[]){ "list", "topologies", NULL });
    ck_assert_ptr_nonnull(strstr(r.out, "star"));
    ck_assert_ptr_nonnull(strstr(r.out, "racks"));
}
END_TEST

START_TEST(cli_lists_profiles_and_devices_and_refuses_a_bad_device_with_exit_2)
{
    harness_result r = harness_hetsim((const char *[]){ "list", "profiles", NULL });
    ck_assert_msg(r.status == 0, "%s", r.err);
    ck_assert_ptr_nonnull(strstr(r.out, "resnet50           107     25557032          8.178"));
    ck_assert_ptr_nonnull(strstr(r.out, "gpt2-medium"));
    r = harness_hetsim((const char *[]){ "list", "devices", NULL });
    ck_assert_int_eq(r.status, 0);
    ck_assert_ptr_nonnull(strstr(r.out, "v100         15.70       -  125.00       -     900"));
    r = harness_hetsim(
        (const char *[]){ "validate", "tests/scenarios_bad/device_no_fp16.json", NULL });
    ck_assert_int_eq(r.status, 2);
    ck_assert_ptr_nonnull(strstr(r.err, "tests/scenarios_bad/device_no_fp16.json: "
                                        "$.compute.device[1].device: device \"1080ti\" has no "
                                        "fp16 peak (has fp32)"));
}
END_TEST

/* Every scenario the project ships, in scenarios/ and one level of folders below it. */
START_TEST(cli_validates_every_shipped_scenario)
{
    glob_t g;
    ck_assert_int_eq(glob("scenarios/*.json", 0, NULL, &g), 0);
    ck_assert_int_eq(glob("scenarios/*/*.json", GLOB_APPEND, NULL, &g), 0);
    ck_assert_uint_ge(g.gl_pathc, 8);
    for (size_t i = 0; i < g.gl_pathc; i++) {
        harness_result r = harness_hetsim((const char *[]){ "validate", g.gl_pathv[i], NULL });
        ck_assert_msg(r.status == 0, "%s: %s", g.gl_pathv[i], r.err);
        char want[512];
        snprintf(want, sizeof(want), "%s: ok\n", g.gl_pathv[i]);
        ck_assert_str_eq(r.out, want);
    }
    globfree(&g);
}
END_TEST

/* validate takes --set as run does, applied to each file (issue 38: "--set: cannot open"). */
START_TEST(cli_validate_applies_set_to_each_file)
{
    harness_result r =
        harness_hetsim((const char *[]){ "validate", "scenarios/quickstart.json", "--set",
                                         "workers=6", "scenarios/allreduce.json", NULL });
    ck_assert_msg(r.status == 0, "%s", r.err);
    ck_assert_str_eq(r.out, "scenarios/quickstart.json: ok\nscenarios/allreduce.json: ok\n");
    r = harness_hetsim(
        (const char *[]){ "validate", "scenarios/quickstart.json", "--set", "workers=0", NULL });
    ck_assert_int_eq(r.status, 2);
    ck_assert_msg(strstr(r.err, "scenarios/quickstart.json: $.workers: ") != NULL, "%s", r.err);
    ck_assert_str_eq(r.out, "");
}
END_TEST

START_TEST(cli_names_file_and_path_of_a_bad_scenario_and_creates_nothing)
{
    char *dir = harness_tmpdir("cli");
    char out[600];
    snprintf(out, sizeof(out), "%s/never", dir);
    harness_result r = harness_hetsim((const char *[]){ "run", "scenarios/quickstart.json", "-o",
                                                        out, "--set", "workers=0", NULL });
    ck_assert_int_eq(r.status, 2);
    ck_assert_msg(strstr(r.err, "scenarios/quickstart.json: $.workers: ") != NULL, "%s", r.err);
    ck_assert(!harness_exists(out));
    r = harness_hetsim((const char *[]){ "run", "scenarios/quickstart.json", "-o", out, "--set",
                                         "protocol.name=gossipy", NULL });
    ck_assert_int_eq(r.status, 2);
    ck_assert_ptr_nonnull(strstr(r.err, "$.protocol.name: unknown protocol \"gossipy\" "
                                        "(valid: allreduce"));
    ck_assert(!harness_exists(out));
    r = harness_hetsim((const char *[]){ "run", "no/such/file.json", "-o", out, NULL });
    ck_assert_int_eq(r.status, 2);
    ck_assert_ptr_nonnull(strstr(r.err, "no/such/file.json"));
    ck_assert(!harness_exists(out));
    r = harness_hetsim((const char *[]){ "validate", "tests/scenarios_bad", NULL });
    ck_assert_int_eq(r.status, 2);
    harness_cleanup(dir);
}
END_TEST

/* Numbers are JSON's: cJSON reads 01 and 4. (strtod does), a scenario or a --set value must
 * not; a file's is refused at its line and column, a --set value's at its column, and a bare
 * --set value such as 08 is text, not a number. Nothing is written. */
START_TEST(cli_refuses_numbers_that_json_does_not_allow)
{
    char *dir = harness_tmpdir("cli");
    char out[600];
    snprintf(out, sizeof(out), "%s/never", dir);
    static const char *const sets[] = { "workers=08", "compute.speeds=[1, 2., 1, 1, 1, 1, 1, 1]",
                                        "workload.lr=-.5" };
    static const char *const said[] = {
        "scenarios/quickstart.json: $.workers: must be an integer in [1, 1048576], got \"08\"",
        "scenarios/quickstart.json: --set compute.speeds: 2. is not a JSON number (no leading "
        "zero, a digit on each side of a point), at column 5",
        "scenarios/quickstart.json: $.workload.lr: must be a number in [0, 1000], got \"-.5\"",
    };
    for (size_t i = 0; i < 3; i++) {
        harness_result r = harness_hetsim((const char *[]){ "run", "scenarios/quickstart.json",
                                                            "-o", out, "--set", sets[i], NULL });
        ck_assert_msg(r.status == 2, "%s: exit %d", sets[i], r.status);
        ck_assert_msg(strstr(r.err, said[i]) != NULL, "%s: %s", sets[i], r.err);
        ck_assert(!harness_exists(out));
    }
    harness_result r = harness_hetsim((const char *[]){
        "validate", "tests/scenarios_bad/syntax_number_leading_zero.json", NULL });
    ck_assert_int_eq(r.status, 2);
    ck_assert_msg(strstr(r.err, "syntax_number_leading_zero.json: line 3, column 14: 04 is not a "
                                "JSON number") != NULL,
                  "%s", r.err);
    harness_cleanup(dir);
}
END_TEST

START_TEST(cli_runs_a_scenario_into_the_directory_given)
{
    char *dir = harness_tmpdir("cli");
    char out[600], path[700];
    snprintf(out, sizeof(out), "%s/run", dir);
    harness_result r = harness_hetsim((const char *[]){ "run", "scenarios/quickstart.json", "-o",
                                                        out, "--set", "stop.time_s=2", NULL });
    ck_assert_msg(r.status == 0, "%s", r.err);
    ck_assert_ptr_nonnull(strstr(r.out, "results in"));
    const char *files[] = { "metrics.csv", "workers.csv", "summary.json", "run.json" };
    for (size_t i = 0; i < 4; i++) {
        snprintf(path, sizeof(path), "%s/%s", out, files[i]);
        ck_assert_msg(harness_exists(path), "missing %s", files[i]);
        snprintf(path, sizeof(path), "%s/%s.tmp", out, files[i]);
        ck_assert(!harness_exists(path));
    }
    harness_cleanup(dir);
}
END_TEST

START_TEST(cli_rejects_a_corrupt_data_file_with_exit_code_2_and_writes_nothing)
{
    char *dir = harness_tmpdir("cli");
    char out[600];
    snprintf(out, sizeof(out), "%s/never", dir);
    harness_result r = harness_hetsim((const char *[]){
        "run", "scenarios/quickstart.json", "-o", out, "--set",
        "workload.dataset.dir=../tests/data/ds_fmnist_truncated", "--set", "workers=2", "--set",
        "workload.batch=2", "--set", "stragglers=[]", NULL });
    ck_assert_int_eq(r.status, 2);
    ck_assert_msg(strstr(r.err, "ds_fmnist_truncated/train-images-idx3-ubyte.gz") != NULL, "%s",
                  r.err);
    ck_assert(!harness_exists(out));
    harness_cleanup(dir);
}
END_TEST

/* Runs quickstart on the tiny Fashion-MNIST-style directory `data` (5 training images),
 * into `out`, with the extra `--set` assignment `set` (or none). */
static harness_result run_tiny(const char *data, const char *out, const char *set)
{
    char dir[256];
    snprintf(dir, sizeof(dir), "workload.dataset.dir=../tests/data/%s", data);
    return harness_hetsim((const char *[]){
        "run", "scenarios/quickstart.json", "-o", out, "--quiet", "--set", dir, "--set",
        "workers=2", "--set", "workload.batch=2", "--set", "output.plots=false", "--set",
        "stragglers=[]", "--set", set != NULL ? set : "stop.time_s=1", NULL });
}

START_TEST(cli_refuses_disagreeing_idx_headers_and_junk_after_gzip_with_exit_code_2)
{
    char *dir = harness_tmpdir("cli");
    char out[600];
    snprintf(out, sizeof(out), "%s/never", dir);
    harness_result r = run_tiny("ds_fmnist_sizes", out, NULL);
    ck_assert_int_eq(r.status, 2);
    ck_assert_msg(strstr(r.err, "ds_fmnist_sizes/t10k-images-idx3-ubyte.gz: image size 4x3 at "
                                "byte 8 does not match the 3x4 images of ") != NULL,
                  "%s", r.err);
    ck_assert(!harness_exists(out));
    r = run_tiny("ds_fmnist_junk", out, NULL);
    ck_assert_int_eq(r.status, 2);
    ck_assert_msg(strstr(r.err, "ds_fmnist_junk/train-images-idx3-ubyte.gz: unexpected bytes "
                                "after the end of the gzip stream") != NULL,
                  "%s", r.err);
    ck_assert(!harness_exists(out));
    /* the same 3x4 images without junk train a 3x4 model */
    r = run_tiny("ds_fmnist", out, NULL);
    ck_assert_msg(r.status == 0, "%s", r.err);
    harness_cleanup(dir);
}
END_TEST

#define LINK_RULE "{\"kind\": \"link\", \"workers\": [1], \"extra_latency_ms\": 1e12}"

START_TEST(cli_refuses_values_that_overflow_the_clock_before_running)
{
    static const char *const sets[][2] = {
        { "network.bandwidth_gbps=1e-15",
          "scenarios/quickstart.json: $.network.bandwidth_gbps: a 20000000-byte message on a "
          "link shared by 8 hosts would take 1.28e+15 s at 1e-06 bits/s, more than the clock's "
          "limit of 1e+09 s" },
        { "compute.speeds=[1e-300]",
          "scenarios/quickstart.json: $.compute.speeds[0]: makes worker 0's iteration take up to "
          "2e+298 s, more than the clock's limit of 1e+09 s" },
        /* Issue 38, seventh probe: link rules' extra latencies, each within its range, add up;
         * ten of 1e12 ms on one worker failed the run, exit 1, "net: cannot schedule a
         * message from 0 to 1". */
        { "stragglers=[" LINK_RULE "," LINK_RULE "," LINK_RULE "," LINK_RULE "," LINK_RULE
          "," LINK_RULE "," LINK_RULE "," LINK_RULE "," LINK_RULE "," LINK_RULE "]",
          "scenarios/quickstart.json: $.stragglers[1].extra_latency_ms: makes worker 1's link "
          "latency up to 2e+09 s, more than the clock's limit of 1e+09 s" },
    };
    char *dir = harness_tmpdir("cli");
    char out[600];
    snprintf(out, sizeof(out), "%s/never", dir);
    for (size_t i = 0; i < sizeof(sets) / sizeof(sets[0]); i++) {
        harness_result r = harness_hetsim((const char *[]){ "run", "scenarios/quickstart.json",
                                                            "-o", out, "--set", sets[i][0], NULL });
        ck_assert_int_eq(r.status, 2);
        ck_assert_msg(strstr(r.err, sets[i][1]) != NULL, "%s", r.err);
        ck_assert(!harness_exists(out));
    }
    harness_cleanup(dir);
}
END_TEST

START_TEST(cli_fails_a_run_whose_loss_explodes_naming_worker_and_iteration)
{
    /* lr 1000 used to run to the end with huge finite losses and exit 0. */
    char *dir = harness_tmpdir("cli");
    char out[600];
    snprintf(out, sizeof(out), "%s/run", dir);
    harness_result r = harness_hetsim((const char *[]){
        "run", "tests/scenarios_ok/minimal.json", "-o", out, "--quiet", "--set",
        "workload={\"dataset\": {\"name\": \"synthetic\", \"samples\": 4000, \"dim\": 20, "
        "\"classes\": 4, \"separation\": 4}, \"model\": {\"name\": \"softmax\"}, \"batch\": 16, "
        "\"lr\": 1000, \"momentum\": 0.99}",
        "--set", "stop.time_s=3", NULL });
    ck_assert_int_eq(r.status, 1);
    ck_assert_msg(strstr(r.err, "hetsim: worker ") != NULL &&
                      strstr(r.err, "(1000 times its first, ") != NULL &&
                      strstr(r.err, "): the run diverged in iteration ") != NULL,
                  "%s", r.err);
    harness_cleanup(dir);
}
END_TEST

START_TEST(cli_refuses_a_batch_larger_than_a_workers_share)
{
    char *dir = harness_tmpdir("cli");
    char out[600];
    snprintf(out, sizeof(out), "%s/never", dir);
    harness_result r = run_tiny("ds_fmnist", out, "workload.batch=3");
    ck_assert_int_eq(r.status, 2);
    ck_assert_msg(strstr(r.err, "scenarios/quickstart.json: $.workload.batch: must be at most a "
                                "worker's share of the training data, 2 (5 examples over 2 "
                                "workers), got 3") != NULL,
                  "%s", r.err);
    ck_assert(!harness_exists(out));
    harness_cleanup(dir);
}
END_TEST

/* A place in a directory nobody may write in, root included (/proc): a failed write, exit 1.
 * A place below a regular file is bad usage, exit 2 (probe21). */
START_TEST(cli_reports_an_unwritable_output_directory_as_a_failed_run)
{
    harness_result r = harness_hetsim((const char *[]){ "run", "scenarios/quickstart.json", "-o",
                                                        "/proc/hetsim-cli-sub", "--quiet", NULL });
    ck_assert_int_eq(r.status, 1);
    ck_assert_msg(strstr(r.err, "cannot create") != NULL, "%s", r.err);
    ck_assert(!harness_exists("/proc/hetsim-cli-sub"));
}
END_TEST

/* Copies the file `name` of directory `from` into directory `to`. */
static void copy_file(const char *from, const char *to, const char *name)
{
    char path[1300];
    size_t n = 0;
    snprintf(path, sizeof(path), "%s/%s", from, name);
    char *text = harness_read(path, &n);
    snprintf(path, sizeof(path), "%s/%s", to, name);
    FILE *f = fopen(path, "wb");
    ck_assert_msg(f != NULL && fwrite(text, 1, n, f) == n && fclose(f) == 0, "cannot write %s",
                  path);
    free(text);
}

/* A sweep whose base is missing, a sweep file that is not there, and a golden with a seed's
 * file missing (an interrupted copy) each name the fix, with exit code 2. */
START_TEST(cli_names_the_fix_of_missing_sweep_bases_and_incomplete_goldens)
{
    char *dir = harness_tmpdir("cli"), path[1300], sweep[1300];
    harness_write(dir, "sw.json", "{ \"base\": \"nobase.json\", \"seeds\": 2 }\n");
    snprintf(sweep, sizeof(sweep), "%s/sw.json", dir);
    harness_result r = harness_hetsim((const char *[]){ "sweep", sweep, "--list", NULL });
    ck_assert_int_eq(r.status, 2);
    ck_assert_msg(strstr(r.err, "$.base: no file ") != NULL &&
                      strstr(r.err, "nobase.json (the base is a path relative to the sweep "
                                    "file's folder)") != NULL,
                  "%s", r.err);
    snprintf(sweep, sizeof(sweep), "%s/nosuch.json", dir);
    r = harness_hetsim((const char *[]){ "sweep", sweep, "--list", NULL });
    ck_assert_int_ne(r.status, 0);
    ck_assert_msg(strstr(r.err, "cannot read the sweep file: No such file or directory") != NULL,
                  "%s", r.err);
    /* A golden copied without one seed's metrics.csv. */
    static const char src[] = "tests/golden/curves/allreduce/golden";
    static const char *const files[] = { "fingerprint", "run.json", "summary.json", "workers.csv" };
    char gold[1200], seed_dir[1300], from[1300], line[64];
    snprintf(gold, sizeof(gold), "%s/golden", dir);
    ck_assert_int_eq(mkdir(gold, 0777), 0);
    copy_file(src, gold, "golden.json");
    copy_file(src, gold, "seeds");
    snprintf(path, sizeof(path), "%s/seeds", gold);
    FILE *f = fopen(path, "r");
    ck_assert_ptr_nonnull(f);
    for (size_t k = 0; fgets(line, sizeof(line), f) != NULL; k++) {
        line[strcspn(line, "\n")] = '\0';
        snprintf(seed_dir, sizeof(seed_dir), "%s/seed-%s", gold, line);
        snprintf(from, sizeof(from), "%s/seed-%s", src, line);
        ck_assert_int_eq(mkdir(seed_dir, 0777), 0);
        for (size_t i = 0; i < 4; i++)
            copy_file(from, seed_dir, files[i]);
        if (k > 0)
            copy_file(from, seed_dir, "metrics.csv");
    }
    fclose(f);
    r = harness_hetsim((const char *[]){ "check", "tests/golden/curves/allreduce/scenario.json",
                                         "--golden", gold, NULL });
    ck_assert_int_eq(r.status, 2);
    ck_assert_msg(strstr(r.err, "/metrics.csv: missing or unreadable (an incomplete golden: write "
                                "it again with --update)") != NULL,
                  "%s", r.err);
    harness_cleanup(dir);
}
END_TEST

/* A single-valued option given twice is a usage error naming it, before anything is read or
 * written (issue 38: the later value was taken silently, `run -o A -o B` ran into B alone);
 * repeatable options (--set, --where, --label) stay so, and a value spelled as an option
 * (`--title -o`) is a value. The files named need not exist: nothing is read. */
START_TEST(cli_refuses_a_single_valued_option_given_twice_naming_it)
{
    char *dir = harness_tmpdir("cli-twice");
    char a[600], b[600];
    snprintf(a, sizeof(a), "%s/a", dir);
    snprintf(b, sizeof(b), "%s/b", dir);
    static const char sc[] = "scenarios/quickstart.json", sw[] = "sweeps/compare-protocols.json";
    const struct {
        const char *option;
        const char *const *argv;
    } cases[] = {
        { "-o", (const char *[]){ "run", sc, "-o", a, "--set", "seed=7", "-o", b, NULL } },
        { "--threads", (const char *[]){ "run", sc, "--threads", "3", "--threads", "5", NULL } },
        { "--golden", (const char *[]){ "check", "s.json", "--golden", a, "--golden", b, NULL } },
        { "--seeds", (const char *[]){ "check", sc, "--golden", a, "--seeds", "5", "--update",
                                       "--seeds", "7", NULL } },
        { "--junit", (const char *[]){ "check", sc, "--golden", a, "--junit", "j1.xml", "--junit",
                                       "j2.xml", NULL } },
        { "-j", (const char *[]){ "sweep", sw, "--list", "-j", "2", "-j", "3", NULL } },
        { "--index", (const char *[]){ "sweep", sw, "--index", "1", "--index", "2", NULL } },
        { "-o", (const char *[]){ "sweep", sw, "--list", "-o", a, "-o", b, NULL } },
        { "--x",
          (const char *[]){ "plot", a, "--by", "seed", "--x", "time", "--x", "epoch", NULL } },
        { "-o", (const char *[]){ "plot", a, "--title", "-o", "-o", b, "-o", a, NULL } },
        { "--style", (const char *[]){ "plot", a, "--style", "s1", "--style", "s2", NULL } },
        { "--by", (const char *[]){ "report", a, "--by", "seed", "--by", "protocol.name", NULL } },
        { "--format", (const char *[]){ "report", a, "--by", "seed", "--format", "md", "--format",
                                        "csv", NULL } },
        { "--ttt", (const char *[]){ "report", a, "--by", "seed", "--where", "seed=1", "--ttt",
                                     "first", "--where", "seed=2", "--ttt", "sustained", NULL } },
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        harness_result r = harness_hetsim(cases[i].argv);
        char want[96];
        snprintf(want, sizeof(want), "hetsim: %s given twice (it takes one value)\n",
                 cases[i].option);
        ck_assert_msg(r.status == 2, "case %zu exited %d: %s", i, r.status, r.err);
        ck_assert_str_eq(r.out, "");
        ck_assert_msg(strstr(r.err, want) == r.err, "case %zu: %s", i, r.err);
        ck_assert(!harness_exists(a) && !harness_exists(b));
    }
    /* Repeatable options, and a value that reads as an option, are not refused as twice. */
    const char *const *fine[] = {
        (const char *[]){ "validate", sc, "--set", "seed=3", "--set", "seed=4", NULL },
        (const char *[]){ "report", a, "--by", "seed", "--where", "seed=1", "--where", "seed=2",
                          "--label", "seed=s", "--label", "1=one", NULL },
        (const char *[]){ "plot", a, "--by", "seed", "--title", "-o", "-o", b, NULL },
    };
    for (size_t i = 0; i < 3; i++) {
        harness_result r = harness_hetsim(fine[i]);
        ck_assert_msg(strstr(r.err, "given twice") == NULL, "case %zu: %s", i, r.err);
    }
    harness_cleanup(dir);
}
END_TEST

Suite *test_suite(void)
{
    Suite *s = suite_create("cli");
    TCase *tc = tcase_create("cli");
    tcase_add_test(tc, cli_prints_version_and_help);
    tcase_add_test(tc, cli_rejects_bad_usage_with_exit_code_2);
    tcase_add_test(tc, cli_lists_protocols_and_topologies);
    tcase_add_test(tc, cli_lists_profiles_and_devices_and_refuses_a_bad_device_with_exit_2);
    tcase_add_test(tc, cli_refuses_out_of_range_and_malformed_numbers_naming_the_option);
    tcase_add_test(tc, cli_refuses_mpi_with_list_or_index);
    tcase_add_test(tc, cli_validates_every_shipped_scenario);
    tcase_add_test(tc, cli_validate_applies_set_to_each_file);
    tcase_add_test(tc, cli_names_file_and_path_of_a_bad_scenario_and_creates_nothing);
    tcase_add_test(tc, cli_refuses_numbers_that_json_does_not_allow);
    tcase_add_test(tc, cli_runs_a_scenario_into_the_directory_given);
    tcase_add_test(tc, cli_rejects_a_corrupt_data_file_with_exit_code_2_and_writes_nothing);
    tcase_add_test(tc, cli_reports_an_unwritable_output_directory_as_a_failed_run);
    tcase_add_test(tc, cli_refuses_disagreeing_idx_headers_and_junk_after_gzip_with_exit_code_2);
    tcase_add_test(tc, cli_refuses_a_batch_larger_than_a_workers_share);
    tcase_add_test(tc, cli_refuses_values_that_overflow_the_clock_before_running);
    tcase_add_test(tc, cli_fails_a_run_whose_loss_explodes_naming_worker_and_iteration);
    tcase_add_test(tc, cli_names_the_fix_of_missing_sweep_bases_and_incomplete_goldens);
    tcase_set_timeout(tc, 120);
    suite_add_tcase(s, tc);
    TCase *twice = tcase_create("an option given twice");
    tcase_add_test(twice, cli_refuses_a_single_valued_option_given_twice_naming_it);
    suite_add_tcase(s, twice);
    return s;
}
