/* Sweeps and golden checks as a user meets them, through the built binary ($HETSIM):
 * validation errors, grid sizes, resuming a killed sweep, identical outputs whatever -j,
 * and `hetsim check` passing, failing and refusing. */
#include <dirent.h>
#include <fcntl.h>
#include <glob.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <check.h>

#include "harness.h"

/* Starts $HETSIM with `args` (NULL-terminated), output to the files out and err. */
static pid_t start(const char *const *args, const char *out, const char *err)
{
    const char *bin = getenv("HETSIM");
    ck_assert_msg(bin != NULL, "HETSIM is not set");
    pid_t pid = fork();
    if (pid == 0) {
        freopen(out, "w", stdout);
        freopen(err, "w", stderr);
        const char *argv[32] = { bin };
        for (size_t i = 0; args[i] != NULL && i < 30; i++)
            argv[i + 1] = args[i];
        execv(bin, (char *const *)argv);
        _exit(127);
    }
    return pid;
}

/* A sweep file in `dir` (next to base.json) with the given grid and seeds; returns its path. */
static char *sweep_file(const char *dir, const char *name, const char *body)
{
    size_t size = strlen(body) + strlen(dir) + 128;
    char *text = malloc(size);
    harness_write(dir, "base.json", harness_small_json);
    snprintf(text, size, "{ \"base\": \"base.json\", %s, \"output\": { \"dir\": \"%s/out\" } }\n",
             body, dir);
    harness_write(dir, name, text);
    free(text);
    char *path = malloc(700);
    snprintf(path, 700, "%s/%s", dir, name);
    return path;
}

START_TEST(sweep_rejects_bad_files_naming_the_path_and_runs_nothing)
{
    static const struct {
        const char *body, *message;
    } cases[] = {
        { "\"grid\": { \"network.bandwdth_gbps\": [1, 10] }",
          "sw.json: $.grid.network.bandwdth_gbps[0]: the first values of the grid: " },
        { "\"grid\": { \"workers\": [] }", "sw.json: $.grid.workers: must be a non-empty list" },
        { "\"grid\": { \"workers\": [2] }, \"gird\": {}", "sw.json: $.gird: unknown key" },
        { "\"grid\": { \"workers\": [2, 0] }", "sw.json: $.grid.workers[1]: point 1" },
        { "\"grid\": { \"zip\": { \"workers\": [2, 4], \"workload.batch\": [8] } }",
          "sw.json: $.grid.zip.workload.batch: has 1 values but" },
        { "\"seeds\": 0", "sw.json: $.seeds: must be a count" },
        { "\"grid\": { \"workers\": 3 }", "sw.json: $.grid.workers: expected an array" },
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char *dir = harness_tmpdir("sweep");
        char *file = sweep_file(dir, "sw.json", cases[i].body), out[700];
        harness_result r = harness_hetsim((const char *[]){ "sweep", file, "-j", "1", NULL });
        ck_assert_msg(r.status == 2, "case %zu exited %d: %s", i, r.status, r.err);
        ck_assert_msg(strstr(r.err, cases[i].message) != NULL, "case %zu: %s", i, r.err);
        snprintf(out, sizeof(out), "%s/out", dir);
        ck_assert_msg(!harness_exists(out), "case %zu created the output directory", i);
        free(file);
        harness_cleanup(dir);
    }
}
END_TEST

START_TEST(sweep_points_are_the_product_of_the_grid_with_zip_and_seeds)
{
    char *dir = harness_tmpdir("sweep");
    char *file = sweep_file(dir, "sw.json",
                            "\"grid\": { \"protocol.name\": [\"allreduce\", \"dpsgd\"], "
                            "\"workload.lr\": [0.1, 0.2, 0.3], "
                            "\"zip\": { \"workers\": [2, 4], \"workload.batch\": [16, 32] } }, "
                            "\"seeds\": [3, 9]");
    harness_result r = harness_hetsim((const char *[]){ "sweep", file, "--list", NULL });
    ck_assert_msg(r.status == 0, "%s", r.err);
    ck_assert_uint_eq(harness_count_lines(r.out), 2 * 3 * 2 * 2);
    /* The last grid entry varies fastest, the seed innermost; zipped paths move together. */
    ck_assert_ptr_nonnull(strstr(r.out, "0\t"));
    ck_assert_ptr_nonnull(
        strstr(r.out, "/out/protocol.name=allreduce,workload.lr=0.1,workers=2,workload.batch=16,"
                      "seed=3\t"));
    ck_assert_ptr_nonnull(strstr(r.out, "\n3\t"));
    ck_assert_ptr_nonnull(strstr(r.out, "workers=4,workload.batch=32,seed=9\t"));
    ck_assert_ptr_null(strstr(r.out, "workers=2,workload.batch=32"));
    free(file);
    file = sweep_file(dir, "count.json", "\"grid\": { \"workers\": [2, 3, 4] }, \"seeds\": 4");
    r = harness_hetsim((const char *[]){ "sweep", file, "--list", NULL });
    ck_assert_uint_eq(harness_count_lines(r.out), 12);
    ck_assert_ptr_nonnull(strstr(r.out, "workers=2,seed=8\t")); /* base seed 5, 6, 7, 8 */
    free(file);
    harness_cleanup(dir);
}
END_TEST

/* A value that is an object or an array names the directory by its members, as --set paths
 * would: protocol.name=ps,protocol.mode=bsp, not protocol=__name_:_ps_,_mode_:_bsp__. */
START_TEST(sweep_names_directories_of_object_and_array_values_by_their_members)
{
    char *dir = harness_tmpdir("sweep");
    char *file =
        sweep_file(dir, "sw.json",
                   "\"grid\": { \"zip\": { \"name\": [\"ps-bsp\", \"dpsgd\"], \"protocol\": "
                   "[{ \"name\": \"ps\", \"mode\": \"bsp\", \"shards\": 2 }, "
                   "{ \"name\": \"dpsgd\", \"graph\": \"ring\" }] }, "
                   "\"compute.speeds\": [[1, 2.5, 1, 1], [1]], "
                   "\"stragglers\": [[{ \"kind\": \"fixed\", \"workers\": [1], "
                   "\"slowdown\": 3 }], []] }, \"seeds\": [3]");
    harness_result r = harness_hetsim((const char *[]){ "sweep", file, "--list", NULL });
    ck_assert_msg(r.status == 0, "%s", r.err);
    ck_assert_uint_eq(harness_count_lines(r.out), 8);
    static const char *const names[] = {
        "/out/name=ps-bsp,protocol.name=ps,protocol.mode=bsp,protocol.shards=2,"
        "compute.speeds=1+2.5+1+1,stragglers.0.kind=fixed,stragglers.0.workers=1,"
        "stragglers.0.slowdown=3,seed=3\t",
        "/out/name=dpsgd,protocol.name=dpsgd,protocol.graph=ring,compute.speeds=1,stragglers=,"
        "seed=3\t",
    };
    for (size_t i = 0; i < 2; i++)
        ck_assert_msg(strstr(r.out, names[i]) != NULL, "no %s in\n%s", names[i], r.out);
    free(file);
    harness_cleanup(dir);
}
END_TEST

/* Runs `hetsim sweep FILE --list` on a sweep with `body` and checks it is refused with exit 2,
 * saying `message` (the sweep file and the path at fault), within `max_s` seconds. */
static void refused(const char *body, const char *message, double max_s)
{
    char *dir = harness_tmpdir("sweep");
    char *file = sweep_file(dir, "sw.json", body);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    harness_result r = harness_hetsim((const char *[]){ "sweep", file, "--list", NULL });
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double s = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
    ck_assert_msg(r.status == 2, "%.60s: exit %d: %s", body, r.status, r.err);
    ck_assert_str_eq(r.out, "");
    ck_assert_msg(strstr(r.err, message) != NULL, "%.60s: expected \"%s\", got %s", body, message,
                  r.err);
    ck_assert_msg(s < max_s, "%.60s: refused after %.1f s", body, s);
    free(file);
    harness_cleanup(dir);
}

/* A grid path that cannot be applied to the base is the grid entry's fault, not the base's;
 * a base without a seed (or that is the sweep file itself) is the base's, not the seeds'. */
START_TEST(sweep_blames_a_bad_grid_path_on_its_entry_and_a_bad_base_on_the_base)
{
    refused("\"grid\": { \"workers.x\": [1] }", "sw.json: $.grid.workers.x: ", 60);
    refused("\"grid\": { \"stragglers[5].slowdown\": [2] }",
            "sw.json: $.grid.stragglers[5].slowdown: ", 60);
    refused("\"grid\": { \"..\": [2] }", "sw.json: $.grid...: ", 60);
    refused("\"grid\": { \"workers\": [2], \"zip\": { \"workload.batch\": [8], \"workload.x.y\": "
            "[1] } }",
            "sw.json: $.grid.zip.workload.x.y: ", 60);
    refused("\"grid\": { \"workers=3\": [1] }",
            "sw.json: $.grid.workers=3: a path cannot contain '='", 60);
    refused("\"grid\": { \"$.workers\": [2, 0] }", "sw.json: $.grid.$.workers[1]: point 1 ", 60);
    /* A key the base does not have, which the loader names in its own way. */
    refused("\"grid\": { \"workers\\n\": [2] }", "sw.json: $.grid.workers\\u000a[0]: ", 60);
    /* Seeds are the seeds' fault. */
    refused("\"grid\": { \"seed\": [1] }", "sw.json: $.grid.seed: seeds are given by $.seeds", 60);
    refused("\"seeds\": [3, 9007199254740992]", "sw.json: $.seeds[1]: ", 60);

    char *dir = harness_tmpdir("sweep");
    char path[700];
    harness_write(dir, "self.json", "{ \"base\": \"self.json\", \"seeds\": 2 }\n");
    harness_write(dir, "noseed.json",
                  "{ \"workers\": 2, \"protocol\": { \"name\": \"allreduce\" } }\n");
    harness_write(dir, "ns.json", "{ \"base\": \"noseed.json\", \"seeds\": 2 }\n");
    snprintf(path, sizeof(path), "%s/self.json", dir);
    harness_result r = harness_hetsim((const char *[]){ "sweep", path, "--list", NULL });
    ck_assert_int_eq(r.status, 2);
    ck_assert_msg(strstr(r.err, "self.json: $.base: is this sweep file") != NULL, "%s", r.err);
    snprintf(path, sizeof(path), "%s/ns.json", dir);
    r = harness_hetsim((const char *[]){ "sweep", path, "--list", NULL });
    ck_assert_int_eq(r.status, 2);
    ck_assert_msg(strstr(r.err, "ns.json: $.base: ") != NULL && strstr(r.err, "$.seed") != NULL,
                  "%s", r.err);
    /* A value that breaks a rule of the base (worker 5 slowed down, out of 2 workers) is the
     * value's fault, though the error is about the base's rule. */
    harness_write(
        dir, "st.json",
        "{ \"seed\": 5, \"workers\": 8, \"stragglers\": [{ \"kind\": \"fixed\", "
        "\"workers\": [5], \"slowdown\": 2 }],\n"
        "  \"workload\": { \"model\": { \"name\": \"none\" }, \"message_bytes\": 4096 },\n"
        "  \"protocol\": { \"name\": \"allreduce\" } }\n");
    harness_write(dir, "sst.json",
                  "{ \"base\": \"st.json\", \"grid\": { \"workers\": [8, 2] } }\n");
    snprintf(path, sizeof(path), "%s/sst.json", dir);
    r = harness_hetsim((const char *[]){ "sweep", path, "--list", NULL });
    ck_assert_int_eq(r.status, 2);
    ck_assert_msg(strstr(r.err, "sst.json: $.grid.workers[1]: point 1 (workers=2,seed=5): ") !=
                      NULL,
                  "%s", r.err);
    harness_cleanup(dir);
}
END_TEST

/* A grid value -0 is the value 0 (the scenario reads it so): [0, -0] repeats one run and is
 * refused as [2, 2.0] is, where it made two points, "servers=0" and "servers=-0", of one run. */
START_TEST(a_grid_value_minus_0_is_0)
{
    refused("\"grid\": { \"servers\": [0, -0] }",
            "sw.json: $.grid: points 0 and 1 share the run directory", 60);
    refused("\"grid\": { \"workload.lr\": [-0, 0.0] }",
            "sw.json: $.grid: points 0 and 1 share the run directory", 60);
}
END_TEST

/* A grid path given twice in another spelling ("$.protocol.name"), or inside another path of
 * the grid or its zip ("protocol" and "protocol.name"), is refused: the later path's value
 * overrode the other's, and the point's directory and index.csv named a value that was not
 * run (an allreduce run filed as protocol.name=dpsgd). */
START_TEST(a_grid_path_given_twice_or_inside_another_is_refused)
{
    refused("\"grid\": { \"protocol.name\": [\"dpsgd\"], \"$.protocol.name\": [\"allreduce\"] }",
            "sw.json: $.grid.$.protocol.name: path given twice (also $.grid.protocol.name)", 60);
    refused("\"grid\": { \"protocol.name\": [\"dpsgd\"], \"protocol\": [{\"name\": \"ps\"}] }",
            "sw.json: $.grid.protocol: overlaps $.grid.protocol.name", 60);
    refused("\"grid\": { \"stragglers\": [[]], \"zip\": { \"workers\": [3], "
            "\"stragglers[0].slowdown\": [2] } }",
            "sw.json: $.grid.zip.stragglers[0].slowdown: overlaps $.grid.stragglers", 60);
    /* A name that only begins as another does is another path. */
    refused("\"grid\": { \"workers\": [3], \"workersx\": [2] }",
            "sw.json: $.grid.workersx[0]: the first values of the grid: ", 60);
}
END_TEST

/* A base that is a FIFO is refused at once: each point's run reads the base again, so a
 * sweep waited forever for a second writer (and --list for a first one). */
START_TEST(a_base_that_is_a_fifo_is_refused)
{
    char *dir = harness_tmpdir("sweep"), fifo[700];
    char *file = sweep_file(dir, "sw.json", "\"grid\": { \"workers\": [2, 3] }");
    snprintf(fifo, sizeof(fifo), "%s/base.json", dir);
    ck_assert_int_eq(remove(fifo), 0);
    ck_assert_int_eq(mkfifo(fifo, 0600), 0);
    harness_result r = harness_hetsim((const char *[]){ "sweep", file, "--list", NULL });
    ck_assert_msg(r.status == 2 && strstr(r.err, "sw.json: $.base: ") != NULL &&
                      strstr(r.err, "a FIFO") != NULL,
                  "exit %d: %s", r.status, r.err);
    free(file);
    harness_cleanup(dir);
}
END_TEST

/* The number of points is known before any is made: a sweep over the limit (a million) is
 * refused at once, naming its count, and the checks of a large one are linear. */
START_TEST(sweep_refuses_more_points_than_the_limit_at_once_naming_the_count)
{
    refused("\"seeds\": 2000000",
            "sw.json: $.seeds: 2000000 points, more than the limit of 1000000 points", 10);
    /* 1000 x 100 grid values times 100 seeds: ten million points (used to take 15 minutes and
     * 4.6 GB before the first line). */
    char *body = malloc(16384);
    size_t len = (size_t)snprintf(body, 16384, "\"grid\": { \"workers\": [");
    for (int i = 1; i <= 1000; i++)
        len += (size_t)snprintf(body + len, 16384 - len, "%s%d", i > 1 ? ", " : "", i);
    len += (size_t)snprintf(body + len, 16384 - len, "], \"stop.time_s\": [");
    for (int i = 1; i <= 100; i++)
        len += (size_t)snprintf(body + len, 16384 - len, "%s%d", i > 1 ? ", " : "", i);
    snprintf(body + len, 16384 - len, "] }, \"seeds\": 100");
    refused(body,
            "sw.json: $.grid: 10000000 points (100000 of the grid times 100 seeds), more than the "
            "limit of 1000000 points",
            10);
    /* A seed repeated far down a long list. */
    len = (size_t)snprintf(body, 16384, "\"seeds\": [");
    for (int i = 0; i < 1500; i++)
        len += (size_t)snprintf(body + len, 16384 - len, "%d, ", 7 * i);
    snprintf(body + len, 16384 - len, "714 ]");
    refused(body, "sw.json: $.seeds[1500]: seed 714 given twice (also at [102])", 60);
    free(body);
    /* A million seeds: no check of the count form for repeats (it was quadratic: 6 minutes),
     * the run directories' names checked by hash; the first point's error comes at once. */
    refused("\"grid\": { \"protocol.name\": [\"nosuch\"] }, \"seeds\": 1000000",
            "sw.json: $.grid.protocol.name[0]: point 0 (protocol.name=nosuch,seed=5): ", 60);
}
END_TEST

/* A sweep base whose runs diverge at lr 1000 (with momentum 0.99 the loss explodes within 20
 * iterations and the run fails) and run whole at lr 0.01. */
static const char div_json[] =
    "{ \"seed\": 5, \"workers\": 4, \"compute\": { \"iteration_ms\": 10 },\n"
    "  \"workload\": { \"dataset\": { \"name\": \"synthetic\", \"samples\": 4000,\n"
    "      \"dim\": 20, \"classes\": 4, \"separation\": 4 },\n"
    "    \"model\": { \"name\": \"softmax\" }, \"batch\": 16, \"lr\": 0.01,\n"
    "    \"momentum\": 0.99 },\n"
    "  \"protocol\": { \"name\": \"allreduce\" },\n"
    "  \"stop\": { \"time_s\": 3 }, \"eval\": { \"every_s\": 1, \"samples\": 500 } }\n";

/* A sweep with diverged points (stop_reason "missing" in index.csv): plot --by draws the
 * points that have results and names the others on stderr. */
START_TEST(sweep_plot_by_draws_the_points_with_results_and_names_those_left_out)
{
    char *dir = harness_tmpdir("sweep");
    harness_write(dir, "div.json", div_json);
    harness_write(dir, "sw.json",
                  "{ \"base\": \"div.json\", \"grid\": { \"workload.lr\": [0.01, 1000] }, "
                  "\"seeds\": 2 }\n");
    harness_write(
        dir, "all.json",
        "{ \"base\": \"div.json\", \"grid\": { \"workload.lr\": [1000] }, \"seeds\": 2 }\n");
    char file[700], out[700], png[800];
    snprintf(file, sizeof(file), "%s/sw.json", dir);
    snprintf(out, sizeof(out), "%s/out", dir);
    harness_result r =
        harness_hetsim((const char *[]){ "sweep", file, "-j", "2", "-o", out, "--quiet", NULL });
    ck_assert_msg(r.status == 1, "exit %d: %s", r.status, r.err);
    r = harness_hetsim((const char *[]){ "plot", out, "--by", "workload.lr", NULL });
    ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
    ck_assert_ptr_nonnull(strstr(r.out, "plots in "));
    ck_assert_msg(strstr(r.err, "index.csv: left out point 2 (workload.lr=1000,seed=5): no "
                                "results\n") != NULL &&
                      strstr(r.err, "left out point 3 (workload.lr=1000,seed=6)") != NULL &&
                      strstr(r.err, "point 0") == NULL && strstr(r.err, "point 1 ") == NULL,
                  "%s", r.err);
    snprintf(png, sizeof(png), "%s/by-workload.lr.png", out);
    ck_assert(harness_exists(png));
    char *text = harness_slurp(out, "by-workload.lr-0.csv");
    ck_assert_ptr_nonnull(text);
    free(text);
    snprintf(png, sizeof(png), "%s/by-workload.lr-1.csv", out);
    ck_assert(!harness_exists(png)); /* one value drawn: the other has no run */
    /* Nothing to draw at all: an error that says why. */
    snprintf(file, sizeof(file), "%s/all.json", dir);
    snprintf(out, sizeof(out), "%s/all", dir);
    r = harness_hetsim((const char *[]){ "sweep", file, "-j", "2", "-o", out, "--quiet", NULL });
    ck_assert_int_eq(r.status, 1);
    r = harness_hetsim((const char *[]){ "plot", out, "--by", "workload.lr", NULL });
    ck_assert_int_eq(r.status, 2);
    ck_assert_msg(strstr(r.err, "index.csv: no runs with results (2 without results") != NULL, "%s",
                  r.err);
    harness_cleanup(dir);
}
END_TEST

/* A point whose run fails (a diverged learning rate) is named with its directory in every
 * line its run printed (they named neither), with -j and with --index alike. */
START_TEST(a_failing_point_is_named_with_its_directory)
{
    char *dir = harness_tmpdir("sweep"), file[700], out[700], want[1500];
    harness_write(dir, "div.json", div_json);
    harness_write(dir, "sw.json",
                  "{ \"base\": \"div.json\", \"grid\": { \"workload.lr\": [0.01, 1000] } }\n");
    snprintf(file, sizeof(file), "%s/sw.json", dir);
    snprintf(out, sizeof(out), "%s/out", dir);
    snprintf(want, sizeof(want), "hetsim: point 1 (%s/workload.lr=1000,seed=5): ", out);
    const char *const *cmds[] = {
        (const char *[]){ "sweep", file, "-j", "2", "-o", out, "--quiet", NULL },
        (const char *[]){ "sweep", file, "--index", "1", "-o", out, "--quiet", NULL },
    };
    for (size_t i = 0; i < 2; i++) {
        harness_result r = harness_hetsim(cmds[i]);
        ck_assert_msg(r.status == 1, "case %zu: exit %d: %s", i, r.status, r.err);
        ck_assert_msg(strstr(r.err, want) == r.err && strstr(r.err, "diverged") != NULL,
                      "case %zu: %s", i, r.err);
        for (const char *line = r.err; *line != '\0'; line = strchr(line, '\n') + 1)
            ck_assert_msg(strncmp(line, want, strlen(want)) == 0,
                          "case %zu: a line of the run "
                          "without its point: %s",
                          i, r.err);
        ck_assert_msg(strstr(r.err, "point 0") == NULL, "case %zu: %s", i, r.err);
    }
    harness_cleanup(dir);
}
END_TEST

/* Under mpirun, --mpi with --list or --index is refused once (rank 0 says it), and nothing
 * runs; only with MPI built in (HETSIM_MPIRUN). */
START_TEST(sweep_under_mpirun_refuses_list_and_index_saying_so_once)
{
    const char *mpirun = getenv("HETSIM_MPIRUN");
    if (mpirun == NULL)
        return;
    char *dir = harness_tmpdir("sweep");
    char *file = sweep_file(dir, "sw.json", "\"grid\": { \"workers\": [2, 3, 4] }");
    static const char *const extra[] = { "--list", "--index 1" };
    for (size_t i = 0; i < 2; i++) {
        char cmd[4096], out[700], err[700], want[64];
        snprintf(out, sizeof(out), "%s/o.txt", dir);
        snprintf(err, sizeof(err), "%s/e.txt", dir);
        snprintf(cmd, sizeof(cmd), "%s %s--oversubscribe -np 3 %s sweep %s --mpi %s >%s 2>%s",
                 mpirun, getuid() == 0 ? "--allow-run-as-root " : "", getenv("HETSIM"), file,
                 extra[i], out, err);
        int status = system(cmd);
        ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) != 0, "%s: exit 0", extra[i]);
        char *o = harness_read(out, NULL), *e = harness_read(err, NULL);
        ck_assert_msg(o[0] == '\0', "%s printed %s", extra[i], o);
        snprintf(want, sizeof(want), "--mpi does not go with %.7s", extra[i]);
        const char *first = strstr(e, want);
        ck_assert_msg(first != NULL && strstr(first + 1, want) == NULL, "%s: %s", extra[i], e);
        free(o);
        free(e);
    }
    char out[700];
    snprintf(out, sizeof(out), "%s/out", dir);
    ck_assert(!harness_exists(out));
    free(file);
    harness_cleanup(dir);
}
END_TEST

/* The inode of dir/out/<run>/summary.json for every run directory that has one. */
static size_t done_runs(const char *dir, char names[][256], ino_t *inodes, size_t max)
{
    char out[700], path[1200];
    snprintf(out, sizeof(out), "%s/out", dir);
    DIR *d = opendir(out);
    size_t n = 0;
    struct dirent *e;
    while (d != NULL && (e = readdir(d)) != NULL && n < max) {
        struct stat st;
        size_t len = strlen(e->d_name);
        snprintf(path, sizeof(path), "%s/%s/summary.json", out, e->d_name);
        /* A run killed after writing summary.json into its work directory (NAME.partial)
         * but before publishing it is not done. */
        if (e->d_name[0] == '.' || (len > 8 && strcmp(e->d_name + len - 8, ".partial") == 0) ||
            stat(path, &st) != 0)
            continue;
        snprintf(names[n], 256, "%s", e->d_name);
        inodes[n++] = st.st_ino;
    }
    if (d != NULL)
        closedir(d);
    return n;
}

/* True when no process holds the lock of a point under dir/out (a point's run holds
 * POINT.lock while it writes; a killed one leaves the file, unlocked). */
static bool no_point_locked(const char *dir)
{
    char out[700], path[1200];
    snprintf(out, sizeof(out), "%s/out", dir);
    DIR *d = opendir(out);
    bool free_ = true;
    struct dirent *e;
    while (free_ && d != NULL && (e = readdir(d)) != NULL) {
        size_t n = strlen(e->d_name);
        if (n < 5 || strcmp(e->d_name + n - 5, ".lock") != 0)
            continue;
        snprintf(path, sizeof(path), "%s/%s", out, e->d_name);
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
            continue; /* removed by its holder, done */
        free_ = flock(fd, LOCK_EX | LOCK_NB) == 0;
        close(fd);
    }
    if (d != NULL)
        closedir(d);
    return free_;
}

START_TEST(sweep_killed_midway_resumes_running_only_the_missing_points)
{
    char *dir = harness_tmpdir("sweep");
    char *file =
        sweep_file(dir, "sw.json",
                   "\"grid\": { \"stop.time_s\": [300], \"workload.lr\": [0.1, 0.2, 0.3] }, "
                   "\"seeds\": 4");
    char names[16][256], names2[16][256], out[700], err[700];
    ino_t inodes[16], inodes2[16];
    snprintf(out, sizeof(out), "%s/o.txt", dir);
    snprintf(err, sizeof(err), "%s/e.txt", dir);
    int status;
    pid_t pid = start((const char *[]){ "sweep", file, "-j", "1", NULL }, out, err);
    size_t before = 0;
    for (int i = 0; i < 10000 && before < 3; i++) { /* up to 100 s (sanitizers are slow) */
        struct timespec ms = { 0, 10000000 };
        nanosleep(&ms, NULL);
        before = done_runs(dir, names, inodes, 16);
    }
    kill(pid, SIGKILL);
    waitpid(pid, &status, 0);
    /* The running child is told to stop (SIGTERM) when the sweep dies; one that was
     * publishing its run may still finish doing so. Count once no point's lock is held and
     * the count has stayed the same for 2 s (at most 120 s: a loaded machine or the
     * sanitizers; a child slower than that fails the count below, not silently). */
    before = done_runs(dir, names, inodes, 16);
    for (int still = 0, i = 0; still < 20 && i < 1200; i++) {
        struct timespec ms = { 0, 100000000 };
        nanosleep(&ms, NULL);
        size_t now = done_runs(dir, names, inodes, 16);
        still = now == before && no_point_locked(dir) ? still + 1 : 0;
        before = now;
    }
    ck_assert_msg(before >= 3 && before < 12, "%zu points done when killed", before);
    harness_result r = harness_hetsim((const char *[]){ "sweep", file, "-j", "2", NULL });
    ck_assert_msg(r.status == 0, "%s", r.err);
    char want[128];
    snprintf(want, sizeof(want), "12 points, %zu run now, 0 failed", 12 - before);
    ck_assert_msg(strstr(r.out, want) != NULL, "expected \"%s\", got %s", want, r.out);
    size_t after = done_runs(dir, names2, inodes2, 16);
    ck_assert_uint_eq(after, 12);
    for (size_t i = 0; i < before; i++)
        for (size_t j = 0; j < after; j++)
            if (strcmp(names[i], names2[j]) == 0)
                ck_assert_msg(inodes[i] == inodes2[j], "%s was run twice", names[i]);
    /* Everything done: nothing runs. */
    r = harness_hetsim((const char *[]){ "sweep", file, NULL });
    ck_assert_ptr_nonnull(strstr(r.out, "12 points, 0 run now"));
    free(file);
    harness_cleanup(dir);
}
END_TEST

/* Cuts the wall line of summary.json or the wall_s column (the last) of index.csv. */
static void strip_wall(char *text, bool csv)
{
    if (!csv) {
        harness_strip_wall(text);
        return;
    }
    char *w = text;
    for (char *line = text; *line != '\0';) {
        char *end = strchr(line, '\n');
        size_t len = end != NULL ? (size_t)(end - line) : strlen(line);
        char *comma = line + len;
        while (comma > line && *comma != ',')
            comma--;
        memmove(w, line, (size_t)(comma - line));
        w += comma - line;
        *w++ = '\n';
        line += len + (end != NULL);
    }
    *w = '\0';
}

static void same_file(const char *a, const char *b, const char *name)
{
    char pa[1200], pb[1200];
    snprintf(pa, sizeof(pa), "%s/%s", a, name);
    snprintf(pb, sizeof(pb), "%s/%s", b, name);
    char *ta = harness_read(pa, NULL), *tb = harness_read(pb, NULL);
    bool summary = strcmp(name, "summary.json") == 0, index = strcmp(name, "index.csv") == 0;
    if (summary || index) {
        strip_wall(ta, index);
        strip_wall(tb, index);
    }
    ck_assert_msg(strcmp(ta, tb) == 0, "%s differs from %s", pa, pb);
    free(ta);
    free(tb);
}

START_TEST(sweep_outputs_are_identical_whatever_the_number_of_jobs)
{
    char *dir = harness_tmpdir("sweep");
    char *file = sweep_file(dir, "sw.json",
                            "\"grid\": { \"protocol.name\": [\"allreduce\", \"dpsgd\"], "
                            "\"workers\": [2, 4] }, \"seeds\": 2");
    char o1[700], o2[700], a[1200], b[1200];
    snprintf(o1, sizeof(o1), "%s/j1", dir);
    snprintf(o2, sizeof(o2), "%s/j2", dir);
    harness_result r = harness_hetsim((const char *[]){ "sweep", file, "-j", "1", "-o", o1, NULL });
    ck_assert_msg(r.status == 0, "%s", r.err);
    r = harness_hetsim((const char *[]){ "sweep", file, "-j", "2", "-o", o2, NULL });
    ck_assert_msg(r.status == 0, "%s", r.err);
    same_file(o1, o2, "index.csv");
    r = harness_hetsim((const char *[]){ "sweep", file, "--list", NULL });
    static const char *const files[] = { "metrics.csv", "workers.csv", "summary.json", "run.json" };
    DIR *d = opendir(o1);
    struct dirent *e;
    size_t runs = 0;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.' || strchr(e->d_name, '=') == NULL)
            continue;
        snprintf(a, sizeof(a), "%s/%s", o1, e->d_name);
        snprintf(b, sizeof(b), "%s/%s", o2, e->d_name);
        for (size_t i = 0; i < 4; i++)
            same_file(a, b, files[i]);
        runs++;
    }
    closedir(d);
    ck_assert_uint_eq(runs, 8);
    const char *mpirun = getenv("HETSIM_MPIRUN"); /* set when built with -Dmpi=enabled */
    if (mpirun != NULL) {
        char om[700], cmd[4096];
        snprintf(om, sizeof(om), "%s/mpi", dir);
        snprintf(cmd, sizeof(cmd),
                 "%s %s--oversubscribe -np 3 %s sweep %s --mpi -o %s --quiet >/dev/null 2>&1",
                 mpirun, getuid() == 0 ? "--allow-run-as-root " : "", getenv("HETSIM"), file, om);
        ck_assert_int_eq(system(cmd), 0);
        same_file(o1, om, "index.csv");
        d = opendir(o1);
        while ((e = readdir(d)) != NULL) {
            if (e->d_name[0] == '.' || strchr(e->d_name, '=') == NULL)
                continue;
            snprintf(a, sizeof(a), "%s/%s", o1, e->d_name);
            snprintf(b, sizeof(b), "%s/%s", om, e->d_name);
            for (size_t i = 0; i < 4; i++)
                same_file(a, b, files[i]);
        }
        closedir(d);
    }
    /* workers is swept too: one value of it, or the plot would pool both into a line. */
    r = harness_hetsim((const char *[]){ "plot", o1, "--by", "protocol.name", "--where",
                                         "workers=4", "--x", "epoch", NULL });
    ck_assert_msg(r.status == 0, "%s", r.err);
    snprintf(a, sizeof(a), "%s/by-protocol.name.png", o1);
    snprintf(b, sizeof(b), "%s/ttt-by-protocol.name.png", o1);
    ck_assert(harness_exists(a) && !harness_exists(b)); /* no target accuracy, no time to target */
    r = harness_hetsim((const char *[]){ "plot", o1, "--by", "protocol", NULL });
    ck_assert_int_eq(r.status, 2);
    ck_assert_ptr_nonnull(strstr(r.err, "no column \"protocol\" (valid: protocol.name, workers"));
    free(file);
    harness_cleanup(dir);
}
END_TEST

START_TEST(sweep_index_runs_one_point_alone)
{
    char *dir = harness_tmpdir("sweep");
    char *file = sweep_file(dir, "sw.json", "\"grid\": { \"workers\": [2, 3, 4] }");
    harness_result r = harness_hetsim((const char *[]){ "sweep", file, "--index", "1", NULL });
    ck_assert_msg(r.status == 0, "%s", r.err);
    char names[16][256];
    ino_t inodes[16];
    ck_assert_uint_eq(done_runs(dir, names, inodes, 16), 1);
    ck_assert_str_eq(names[0], "workers=3,seed=5");
    r = harness_hetsim((const char *[]){ "sweep", file, "--index", "3", NULL });
    ck_assert_int_eq(r.status, 2);
    r = harness_hetsim((const char *[]){ "sweep", file, NULL });
    ck_assert_ptr_nonnull(strstr(r.out, "3 points, 2 run now"));
    char index[700];
    snprintf(index, sizeof(index), "%s/out/index.csv", dir);
    char *text = harness_read(index, NULL);
    ck_assert_ptr_eq(strstr(text, "point,dir,workers,seed,stop_reason,sim_time_s,final_accuracy,"
                                  "best_accuracy,time_to_target_s,mean_throughput_sps,wall_s\n"),
                     text);
    ck_assert_uint_eq(harness_count_lines(text), 4);
    ck_assert_ptr_nonnull(strstr(text, "\n1,\"workers=3,seed=5\",3,5,time,4,"));
    free(text);
    free(file);
    harness_cleanup(dir);
}
END_TEST

START_TEST(sweep_check_and_plot_refuse_bad_usage_with_exit_code_2)
{
    const char *const *cases[] = {
        (const char *[]){ "sweep", NULL },
        (const char *[]){ "sweep", "sweeps/compare-protocols.json", "-j", "0", NULL },
        (const char *[]){ "sweep", "sweeps/compare-protocols.json", "--index", "x", NULL },
        (const char *[]){ "sweep", "sweeps/compare-protocols.json", "--bogus", NULL },
        (const char *[]){ "sweep", "no/such/sweep.json", NULL },
        (const char *[]){ "check", "tests/golden/curves/ps/scenario.json", NULL },
        (const char *[]){ "check", "--golden", "tests/golden/curves/ps/golden", NULL },
        (const char *[]){ "check", "tests/golden/curves/ps/scenario.json", "--golden", "g",
                          "--update", "--exact", NULL },
        (const char *[]){ "check", "tests/golden/curves/ps/scenario.json", "--golden", "g",
                          "--update", "--seeds", "0", NULL },
        (const char *[]){ "check", "tests/golden/curves/ps/scenario.json", "--golden", "g",
                          "--update", "--seeds", "2", NULL },
        (const char *[]){ "plot", "a", "b", "--by", "workers", NULL },
        (const char *[]){ "plot", "a", "--x", "epoch", NULL },
        (const char *[]){ "plot", "a", "--by", "workers", "--x", "hours", NULL },
    };
    harness_expect_usage_errors(cases, sizeof(cases) / sizeof(cases[0]));
}
END_TEST

/* Every sweep the project ships (in sweeps/ and one level of folders below it) loads and
 * validates. */
START_TEST(sweep_files_shipped_in_sweeps_are_valid)
{
    glob_t g;
    ck_assert_int_eq(glob("sweeps/*.json", 0, NULL, &g), 0);
    ck_assert_int_eq(glob("sweeps/*/*.json", GLOB_APPEND, NULL, &g), 0);
    for (size_t i = 0; i < g.gl_pathc; i++) {
        harness_result r =
            harness_hetsim((const char *[]){ "sweep", g.gl_pathv[i], "--list", NULL });
        ck_assert_msg(r.status == 0, "%s: %s", g.gl_pathv[i], r.err);
        ck_assert_uint_gt(harness_count_lines(r.out), 0);
    }
    globfree(&g);
}
END_TEST

START_TEST(check_passes_on_the_same_binary_and_fails_when_the_learning_rate_changes)
{
    char *dir = harness_tmpdir("check");
    char golden[700], run[700];
    snprintf(golden, sizeof(golden), "%s/golden", dir);
    snprintf(run, sizeof(run), "%s/run", dir);
    const char *sc = "tests/golden/curves/allreduce/scenario.json";
    harness_result r =
        harness_hetsim((const char *[]){ "check", sc, "--golden", golden, "-o", run, NULL });
    ck_assert_msg(r.status == 2, "without a golden: exit %d", r.status);
    ck_assert_ptr_nonnull(strstr(r.err, "no golden here (write one with --update)"));
    r = harness_hetsim(
        (const char *[]){ "check", sc, "--golden", golden, "--update", "--seeds", "5", NULL });
    ck_assert_msg(r.status == 0, "%s", r.err);
    r = harness_hetsim((const char *[]){ "check", sc, "--golden", golden, "-o", run, NULL });
    ck_assert_msg(r.status == 0, "%s%s", r.out, r.err);
    ck_assert_ptr_nonnull(strstr(r.out, ": ok against"));
    ck_assert_ptr_nonnull(strstr(r.out, "5 golden seeds, run seeds 16, 17"));
    r = harness_hetsim(
        (const char *[]){ "check", sc, "--golden", golden, "-o", run, "--exact", NULL });
    ck_assert_msg(r.status == 0, "%s%s", r.out, r.err);
    /* The scenario's lr is 0.05: four times that moves the loss curve out of band. */
    r = harness_hetsim((const char *[]){ "check", sc, "--golden", golden, "-o", run, "--set",
                                         "workload.lr=0.2", NULL });
    ck_assert_msg(r.status == 2, "lr x4 unannounced: exit %d: %s", r.status, r.out);
    ck_assert_ptr_nonnull(strstr(r.err, "workload.lr"));
    r = harness_hetsim((const char *[]){ "check", sc, "--golden", golden, "-o", run, "--set",
                                         "workload.lr=0.2", "--allow-scenario-change", NULL });
    ck_assert_msg(r.status == 1, "lr x4: exit %d: %s", r.status, r.out);
    ck_assert_ptr_nonnull(strstr(r.out, "REGRESSION"));
    ck_assert_ptr_nonnull(strstr(r.out, "OUT OF BAND"));
    /* --exact refuses another scenario as the statistical check does, and with
     * --allow-scenario-change finds its bytes changed. */
    r = harness_hetsim((const char *[]){ "check", sc, "--golden", golden, "-o", run, "--exact",
                                         "--set", "workload.lr=0.2", NULL });
    ck_assert_int_eq(r.status, 2);
    ck_assert_ptr_nonnull(strstr(r.err, "workload.lr"));
    r = harness_hetsim((const char *[]){ "check", sc, "--golden", golden, "-o", run, "--exact",
                                         "--set", "workload.lr=0.2", "--allow-scenario-change",
                                         NULL });
    ck_assert_int_eq(r.status, 1);
    r = harness_hetsim((const char *[]){ "check", sc, NULL });
    ck_assert_int_eq(r.status, 2);
    harness_cleanup(dir);
}
END_TEST

Suite *test_suite(void)
{
    Suite *s = suite_create("sweep");
    TCase *tc = tcase_create("sweep");
    tcase_add_test(tc, sweep_rejects_bad_files_naming_the_path_and_runs_nothing);
    tcase_add_test(tc, sweep_points_are_the_product_of_the_grid_with_zip_and_seeds);
    tcase_add_test(tc, sweep_names_directories_of_object_and_array_values_by_their_members);
    tcase_add_test(tc, sweep_killed_midway_resumes_running_only_the_missing_points);
    tcase_add_test(tc, sweep_outputs_are_identical_whatever_the_number_of_jobs);
    tcase_add_test(tc, sweep_index_runs_one_point_alone);
    tcase_add_test(tc, sweep_blames_a_bad_grid_path_on_its_entry_and_a_bad_base_on_the_base);
    tcase_add_test(tc, a_grid_value_minus_0_is_0);
    tcase_add_test(tc, a_base_that_is_a_fifo_is_refused);
    tcase_add_test(tc, a_grid_path_given_twice_or_inside_another_is_refused);
    tcase_add_test(tc, sweep_refuses_more_points_than_the_limit_at_once_naming_the_count);
    tcase_add_test(tc, sweep_plot_by_draws_the_points_with_results_and_names_those_left_out);
    tcase_add_test(tc, a_failing_point_is_named_with_its_directory);
    tcase_add_test(tc, sweep_under_mpirun_refuses_list_and_index_saying_so_once);
    tcase_add_test(tc, sweep_files_shipped_in_sweeps_are_valid);
    tcase_add_test(tc, sweep_check_and_plot_refuse_bad_usage_with_exit_code_2);
    tcase_add_test(tc, check_passes_on_the_same_binary_and_fails_when_the_learning_rate_changes);
    tcase_set_timeout(tc, 240);
    suite_add_tcase(s, tc);
    return s;
}
