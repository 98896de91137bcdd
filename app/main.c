/* hetsim: the command line (DESIGN §8).
 *
 * With app/main_args.c and app/main_results.c (app/main_state.h), the only files that read
 * argv, print results to stdout and exit. Exit codes: 0 success, 1 run failed (divergence,
 * I/O), 2 bad usage or bad scenario.
 */
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gsl/gsl_errno.h>

#include "app/bench_train.h"
#include "app/catalogue.h"
#include "app/check.h"
#include "app/main_state.h"
#include "app/mpi.h"
#include "app/sweep.h"
#include "models/bench.h"
#include "models/torch_bench.h"
#include "net/net_bench.h"
#include "outputs/rundir.h"
#include "protocols/registry.h"
#include "runtime/run.h"
#include "scenario/scenario.h"
#include "sim/bench.h"
#include "sim/err.h"
#include "sim/pool.h"

static const char usage[] =
    "usage: hetsim run SCENARIO.json [-o DIR] [--set PATH=VALUE]... [--threads N] [--quiet]\n"
    "       hetsim validate SCENARIO.json... [--set PATH=VALUE]...\n"
    "       hetsim plot RUN_DIR... [--format png|pdf|svg] [--style DIR] [-o DIR]\n"
    "       hetsim plot SWEEP_DIR --by KEY[,KEY...] [SELECT] [--x time|epoch|samples]\n"
    "                   [--band ci|minmax] [--size column|page|WxH] [--title TEXT]\n"
    "                   [--format png|pdf|svg] [--style DIR] [-o DIR]\n"
    "       hetsim report SWEEP_DIR --by KEY[,KEY...] [SELECT] [--baseline KEY=VALUE]\n"
    "                     [--grid] [--format md|csv|tex]\n"
    "         SELECT: [--where KEY=VALUE]... [--best-over KEY[,KEY...]] [--tune-seeds LIST]\n"
    "                 [--target ACC] [--ttt first|movavg:K|sustained] [--label FROM=TO]...\n"
    "                 [--names FILE]\n"
    "       hetsim list protocols|models|datasets|topologies|profiles|devices|fabrics\n"
    "       hetsim bench [engine|network|kernels|overlap|collectives|threads [--threads N]|torch]\n"
    "       hetsim sweep SWEEP.json [-j N] [--threads N] [--mpi] [--list] [--index K] [-o DIR]\n"
    "                    [--quiet]\n"
    "       hetsim check SCENARIO.json --golden DIR [--update] [--seeds N] [--exact]\n"
    "                    [--threads N]\n"
    "                    [--allow-scenario-change] [--junit FILE] [--set PATH=VALUE]...\n"
    "                    [-o DIR]\n"
    "       hetsim --help | --version\n";

/* The commands, said in a second string: one would pass the 4095 bytes C11 lets a compiler
 * limit a string literal to. */
static const char usage_commands[] =
    "\n"
    "run       simulate a scenario; results go to its output directory (or -o DIR):\n"
    "          metrics.csv, workers.csv, summary.json, run.json; --threads N computes\n"
    "          gradients and evaluations on N threads (default: every core), the same\n"
    "          outputs for every N\n"
    "validate  check scenario files strictly without running them\n"
    "plot      draw convergence, throughput and time breakdown of one or more runs (a line\n"
    "          per run) into DIR (one run: its own directory by default; several: -o DIR,\n"
    "          never another run, sweep or golden); needs gnuplot (arguments that are not\n"
    "          runs are skipped); with --by, a sweep's runs (into its directory by\n"
    "          default): a line per group (mean over its runs, with a band: the 95%\n"
    "          interval of the mean, or min-max) and bars of time to target accuracy ACC\n"
    "          (default: the runs' stop target) read from the curves; --size draws paper\n"
    "          figures (column: 3.5 in wide, page: 7 in, or WxH in) with 8-point text and\n"
    "          no title; --format pdf or svg for vector figures, --style DIR to draw with\n"
    "          one's own copies of the scripts\n"
    "report    a table of a sweep's runs, a row per group: time to target accuracy\n"
    "          ACC from the curves (default: the runs' stop target), final and best accuracy,\n"
    "          throughput, bytes sent per sample, shares of time waiting and communicating,\n"
    "          each a mean with its 95% Student-t interval over the runs; --baseline adds\n"
    "          speed-ups with Fieller's interval; --format tex a LaTeX (booktabs) table\n"
    "          SELECT: a group is a value of the --by keys; a group that mixes values of\n"
    "          another swept key is refused unless --best-over tunes it (each group at its\n"
    "          best value, chosen on --tune-seeds and reported on the others) or --where\n"
    "          keeps one value; --ttt defines the time to target (default first);\n"
    "          --label and --names give display names (docs/compare.md)\n"
    "list      print what a scenario can name\n"
    "sweep     run every point of a sweep file (grid of --set overrides times seeds), -j N\n"
    "          at a time (default: the number of cores), each on --threads N threads\n"
    "          (default 1), skipping points already done;\n"
    "          writes DIR/index.csv; --list prints the points, --index K runs point K\n"
    "          (both without --mpi); at most 1000000 points\n"
    "check     run N seeds of a scenario (default 4) and compare statistics of their curves\n"
    "          (test accuracy, test loss, throughput) with the golden seeds in DIR by t-tests\n"
    "          at a false-alarm rate of 1% over all of them; exit 1 on a regression, 2 for\n"
    "          an unusable golden or one of another scenario; writes check.png (and a JUnit\n"
    "          report with --junit); --update writes the golden (N seeds, default 10) beside\n"
    "          DIR and swaps it in; --exact compares every output byte but the wall line\n"
    "bench     measure the engine, network, kernels, whole training iterations and\n"
    "          All-Reduce with gradient buckets (overlap), hierarchical all-reduce on 256 and\n"
    "          1,024 GPUs (collectives) against references measured in the same run (JSON\n"
    "          lines: name, value, unit, reference, ratio); threads: 16-worker\n"
    "          runs on one thread against N (default: every core), the ratio being the\n"
    "          speed-up; torch (not in the default set: it needs PyTorch): gradients through\n"
    "          a model server against a plain PyTorch loop (LeNet-5, ResNet-20)\n"
    "\n"
    "exit codes: 0 success, 1 run failed, 2 bad usage or bad scenario\n";

/* A scenario error (bad file, bad key) exits 2 even when the loader says SIM_EIO for a file
 * that cannot be read: the input is what is wrong. */
static int load(const char *file, const char *const *sets, size_t nsets, sim_scenario **out)
{
    sim_err err;
    sim_err_clear(&err);
    sim_scenario *sc = sim_scenario_load(file, sets, nsets, &err);
    const proto_ops *ops = sc != NULL ? proto_lookup(sc->protocol, sc->file, &err) : NULL;
    if (ops == NULL || sim_run_check(sc, ops, &err) != SIM_OK) {
        sim_scenario_destroy(sc);
        cli_report(&err);
        return err.code == SIM_ENOMEM ? EXIT_RUN : EXIT_USAGE;
    }
    *out = sc;
    return EXIT_OK;
}

/* The run of a sweep's point holds its load to what the sweep's validation of the point read
 * (`held`, app_sweep_inputs): a compute.profile, a trace or LIBSVM data edited since (a trace
 * keeps the resolved scenario, a profile split otherwise its totals) fails the point, named,
 * exit 1, instead of running it on other inputs. */
static int hold_inputs(sim_scenario *sc, const char *held)
{
    sim_err err;
    sim_err_clear(&err);
    if (sim_scenario_inputs_hold(sc, held, &err) == SIM_OK)
        return EXIT_OK;
    char why[sizeof(err.path) + sizeof(err.msg) + 4];
    snprintf(why, sizeof(why), "%s: %s", err.path, err.msg);
    int code = err.code;
    /* A point run before the edit is run again for a profile or a trace (run.json's profile_fnv
     * and traces_fnv), but a data file's bytes are in no output: the sweep keeps it. */
    bool kept =
        strcmp(err.path, "$.compute.profile") != 0 && strncmp(err.path, "$.stragglers", 12) != 0;
    sim_err_clear(&err);
    sim_err_set(&err, code, NULL,
                "a file the scenario names changed during the sweep (since it validated the "
                "point): %s; run the sweep again%s",
                why,
                kept ? " into a new directory (the points run before the edit read the old file, "
                       "which their outputs do not record)"
                     : "");
    sim_err_file(&err, sc->file);
    cli_report(&err);
    return code == SIM_EINVAL ? EXIT_USAGE : EXIT_RUN;
}

/* A scenario's or a sweep's output.dir (`dir`, read from `file`) checked as -o is
 * (cli_out_dir): one too long to be written is bad usage before anything is made. */
static int out_dir_of(const char *file, const char *dir)
{
    char opt[1100]; /* a label: a longer file name is cut */
    snprintf(opt, sizeof(opt), "%s: $.output.dir", file);
    return cli_out_dir(opt, dir);
}

/* The largest -j: more local processes at once than any machine has cores. */
#define MAX_JOBS 4096

/* The run's place `dir`: not into a golden of `hetsim check`, a check's output (its seed runs are
 * the check's) nor a sweep's directory (the run's own checks refuse run and work directories,
 * outputs/rundir.h), but for a sweep's `point` run by the sweep itself (its owner token,
 * app/sweep.h); that point's directory is the sweep's own, never a symbolic link to another
 * place (a run there, or another sweep's point, was replaced through it). */
static int run_place(const char *dir, bool point, sim_err *err)
{
    unsigned within = SIM_RUNDIR_BIT(SIM_RUNDIR_GOLDEN) | SIM_RUNDIR_BIT(SIM_RUNDIR_CHECK);
    struct stat st;
    if (point && lstat(dir, &st) == 0 && S_ISLNK(st.st_mode))
        return sim_err_set(err, SIM_ESCENARIO, NULL,
                           "the sweep's point directory %s is a symbolic link: a sweep runs its "
                           "points in its own directory, never through a link to another place; "
                           "remove it",
                           dir);
    if (!point)
        within |= SIM_RUNDIR_BIT(SIM_RUNDIR_SWEEP);
    return sim_rundir_check_within(dir, within, err);
}

static int cmd_run(int argc, char **argv)
{
    const char *file = NULL, *out_dir = NULL;
    bool quiet = false;
    unsigned threads = sim_pool_cores();
    static const char *const single[] = { "-o", "--threads", NULL };
    static const char *const repeatable[] = { "--set", NULL };
    if (cli_once(argc, argv, single, repeatable) != EXIT_OK)
        return EXIT_USAGE;
    const char **sets = calloc((size_t)argc, sizeof(*sets));
    size_t nsets = 0;
    if (sets == NULL)
        return EXIT_RUN;
    int rc = EXIT_OK;
    for (int i = 0; i < argc && rc == EXIT_OK; i++) {
        if (strcmp(argv[i], "-o") == 0 || strcmp(argv[i], "--set") == 0) {
            if (i + 1 >= argc)
                rc = cli_usage("%s needs a value", argv[i]);
            else if (argv[i][1] == 'o')
                rc = cli_out_dir("-o", out_dir = argv[++i]);
            else
                sets[nsets++] = argv[++i];
        } else if (strcmp(argv[i], "--threads") == 0) {
            rc = i + 1 >= argc ? cli_usage("%s needs a value", argv[i])
                               : cli_threads(argv[++i], &threads);
        } else if (strcmp(argv[i], "--quiet") == 0 || strcmp(argv[i], "-q") == 0) {
            quiet = true;
        } else if (argv[i][0] == '-') {
            rc = cli_usage("unknown option %s", argv[i]);
        } else if (file != NULL) {
            rc = cli_usage("run takes one scenario, got a second: %s", argv[i]);
        } else {
            file = argv[i];
        }
    }
    if (rc == EXIT_OK && file == NULL)
        rc = cli_usage("%s", "run needs a scenario file");
    sim_scenario *sc = NULL;
    if (rc == EXIT_OK)
        rc = load(file, sets, nsets, &sc);
    free(sets);
    const char *held = rc == EXIT_OK ? app_sweep_inputs(out_dir) : NULL;
    if (rc == EXIT_OK && out_dir == NULL && (rc = out_dir_of(file, sc->out_dir)) != EXIT_OK)
        sim_scenario_destroy(sc);
    else if (rc == EXIT_OK && held != NULL && (rc = hold_inputs(sc, held)) != EXIT_OK)
        sim_scenario_destroy(sc);
    if (rc != EXIT_OK)
        return rc;
    sim_run_options opt = { .out_dir = out_dir,
                            .progress = !quiet && isatty(STDERR_FILENO),
                            .threads = threads };
    sim_run_summary sum;
    sim_err err;
    sim_err_clear(&err);
    if (run_place(out_dir != NULL ? out_dir : sc->out_dir, app_sweep_owns(out_dir), &err) !=
        SIM_OK) {
        sim_scenario_destroy(sc);
        return cli_report(&err);
    }
    if (sim_run(sc, proto_find(sc->protocol), &opt, &sum, &err) != SIM_OK) {
        sim_scenario_destroy(sc);
        cli_report(&err);
        /* A data file found malformed while loading is bad input, like a bad scenario
         * (nothing has been written then); anything else is a failed run. */
        return err.code == SIM_ESCENARIO ? EXIT_USAGE : EXIT_RUN;
    }
    if (!quiet)
        printf("%s: %s after %.6g simulated s: %llu iterations, %llu events (%.3g/s wall), "
               "results in %s\n",
               sc->name, sum.stop_reason, (double)sum.sim_ns * 1e-9,
               (unsigned long long)sum.iterations, (unsigned long long)sum.events, sum.events_per_s,
               out_dir != NULL ? out_dir : sc->out_dir);
    sim_scenario_destroy(sc);
    return EXIT_OK;
}

/* validate FILE... [--set PATH=VALUE]...: each file loaded and checked as run would with the
 * same overrides; any other option is refused (a "--set" was opened as a file). */
static int cmd_validate(int argc, char **argv)
{
    const char **sets = calloc((size_t)argc + 1, sizeof(*sets));
    size_t nsets = 0, nfiles = 0;
    if (sets == NULL)
        return EXIT_RUN;
    int rc = EXIT_OK;
    for (int i = 0; i < argc && rc == EXIT_OK; i++) {
        if (strcmp(argv[i], "--set") == 0 && i + 1 >= argc)
            rc = cli_usage("%s needs a value", argv[i]);
        else if (strcmp(argv[i], "--set") == 0)
            sets[nsets++] = argv[++i];
        else if (argv[i][0] == '-')
            rc = cli_usage("unknown option %s (validate takes scenario files and --set)", argv[i]);
        else if (argv[i][0] == '\0') /* as cli_once says it for the other commands */
            rc = cli_usage("%s", "an empty argument, where a file or a directory is named");
        else
            nfiles++;
    }
    if (rc == EXIT_OK && nfiles == 0)
        rc = cli_usage("%s", "validate needs at least one scenario file");
    int worst = rc;
    for (int i = 0; i < argc && rc == EXIT_OK; i++) {
        if (strcmp(argv[i], "--set") == 0) {
            i++;
            continue;
        }
        sim_scenario *sc = NULL;
        int one = load(argv[i], sets, nsets, &sc);
        if (one == EXIT_OK)
            sim_err_line(stdout, "%s: ok", argv[i]); /* the name escaped, as messages write it */
        sim_scenario_destroy(sc);
        if (one > worst)
            worst = one;
    }
    free(sets);
    return worst;
}

static int cmd_list(int argc, char **argv)
{
    if (argc > 1) /* it said "list needs one of: ..." of a list named right */
        return cli_usage("list takes one of: protocols, models, datasets, topologies, profiles, "
                         "devices, fabrics; got a second argument: %s",
                         argv[1]);
    if (argc != 1)
        return cli_usage("%s", "list needs one of: protocols, models, datasets, topologies, "
                               "profiles, devices, fabrics");
    if (strcmp(argv[0], "profiles") == 0)
        return app_catalogue_profiles() == 0 ? EXIT_OK : EXIT_RUN;
    if (strcmp(argv[0], "devices") == 0) {
        app_catalogue_devices();
        return EXIT_OK;
    }
    if (strcmp(argv[0], "fabrics") == 0) {
        app_catalogue_fabrics();
        return EXIT_OK;
    }
    if (strcmp(argv[0], "protocols") == 0) {
        size_t n;
        const proto_ops *const *all = proto_list(&n);
        for (size_t i = 0; i < n; i++)
            printf("%-12s %s\n", all[i]->name, all[i]->summary);
    } else if (strcmp(argv[0], "models") == 0) {
        printf("%-14s %s\n", "none", "timing only: no tensors, messages of message_bytes");
        printf("%-14s %s\n", "softmax", "multinomial logistic regression");
        printf("%-14s %s\n", "svm", "multiclass linear SVM (Crammer-Singer hinge); key margin");
        printf("%-14s %s\n", "mlp", "ReLU hidden layers (key hidden, default [256]), softmax");
        printf("%-14s %s\n", "cnn",
               "conv 5x5, pool, conv 5x5, pool, dense, softmax; keys conv1 conv2 kernel dense");
        printf("%-14s %s\n", "vector",
               "averaging only: no data, zero gradients; keys dim, init (normal, zero)");
        printf("%-14s %s\n", "torch",
               "your PyTorch module through model servers; keys module, device (docs/torch.md)");
    } else if (strcmp(argv[0], "datasets") == 0) {
        printf("%-14s %s\n", "fashion-mnist",
               "Fashion-MNIST IDX files (Debian package dataset-fashion-mnist; key dir)");
        printf("%-14s %s\n", "libsvm", "a LIBSVM/SVMlight text file (keys file, test_file)");
        printf("%-14s %s\n", "synthetic",
               "Gaussian class clusters from the seed (keys samples, dim, classes)");
    } else if (strcmp(argv[0], "topologies") == 0) {
        printf("%-12s %s\n", "star", "every NIC on one ideal switch");
        printf("%-12s %s\n", "racks",
               "racks of rack_size hosts behind top-of-rack switches with uplinks");
        printf("%-12s %s\n", "fat_tree",
               "k-ary fat-tree (k^3/4 hosts), paths chosen from the endpoints; oversubscription");
    } else {
        return cli_usage(
            "cannot list \"%s\" (protocols, models, datasets, topologies, profiles, devices, "
            "fabrics)",
            argv[0]);
    }
    return EXIT_OK;
}

static int cmd_bench(int argc, char **argv)
{
    static const char *const parts[] = { "engine",      "network", "kernels", "overlap",
                                         "collectives", "threads", "torch" };
    const char *what = argc > 0 ? argv[0] : "all";
    bool all = strcmp(what, "all") == 0, known = all;
    for (size_t i = 0; i < sizeof(parts) / sizeof(parts[0]); i++)
        known = known || strcmp(what, parts[i]) == 0;
    unsigned threads = sim_pool_cores();
    int rc = SIM_OK;
    bool option = argc > 1 && strcmp(argv[1], "--threads") == 0;
    if (argc == 3 && strcmp(what, "threads") == 0 && option)
        rc = cli_threads(argv[2], &threads);
    else if (known && option) /* each said "got \"threads\"": a wrong cause */
        return strcmp(what, "threads") != 0
                   ? cli_usage("--threads goes with bench threads, not bench %s", what)
               : argc == 2
                   ? cli_usage("%s", "--threads needs a value")
                   : cli_usage("bench threads --threads N takes nothing more, got \"%s\"", argv[3]);
    else if (known && argc > 1)
        return cli_usage("bench %s takes %s, got \"%s\"", what,
                         strcmp(what, "threads") == 0 ? "only --threads N" : "nothing more",
                         argv[1]);
    else if (!known)
        return cli_usage(
            "bench takes engine, network, kernels, overlap, collectives, threads [--threads N] or "
            "torch, got \"%s\"",
            what);
    if (rc != EXIT_OK)
        return rc;
    sim_err err;
    sim_err_clear(&err);
    if (all || strcmp(what, "engine") == 0)
        rc = sim_bench_engine(stdout, &err);
    if (rc == SIM_OK && (all || strcmp(what, "network") == 0))
        rc = sim_bench_network(stdout, &err);
    if (rc == SIM_OK && (all || strcmp(what, "kernels") == 0))
        rc = model_bench_kernels(stdout, &err);
    if (rc == SIM_OK && (all || strcmp(what, "kernels") == 0)) {
        app_bench_train_config cfg;
        app_bench_train_default(&cfg);
        rc = app_bench_train_run(stdout, &cfg, &err);
    }
    if (rc == SIM_OK && (all || strcmp(what, "overlap") == 0))
        rc = app_bench_overlap_run(stdout, NULL, &err);
    if (rc == SIM_OK && (all || strcmp(what, "collectives") == 0))
        rc = app_bench_collectives_run(stdout, NULL, &err);
    if (rc == SIM_OK && (all || strcmp(what, "threads") == 0))
        rc = app_bench_threads_run(stdout, threads, NULL, &err);
    if (rc == SIM_OK && strcmp(what, "torch") == 0) /* not in all: it needs PyTorch */
        rc = torch_bench(stdout, &err);
    if (rc != SIM_OK) {
        cli_report(&err);
        return EXIT_RUN;
    }
    return EXIT_OK;
}

typedef struct sweep_args {
    const char *file, *out_dir;
    unsigned long long jobs, index;
    unsigned threads; /* per run; 0: one */
    bool list, mpi, quiet, has_index;
} sweep_args;

static int parse_sweep(int argc, char **argv, sweep_args *a)
{
    static const char *const single[] = { "-j", "--index", "-o", "--threads", NULL };
    static const char *const repeatable[] = { NULL };
    if (cli_once(argc, argv, single, repeatable) != EXIT_OK)
        return EXIT_USAGE;
    for (int i = 0; i < argc; i++) {
        const char *o = argv[i];
        bool has_value = i + 1 < argc;
        if (strcmp(o, "-j") == 0 || strcmp(o, "--index") == 0 || strcmp(o, "-o") == 0) {
            if (!has_value)
                return cli_usage("%s needs a value", o);
            const char *v = argv[++i];
            if (o[1] == 'o') {
                a->out_dir = v;
                if (cli_out_dir("-o", v) != EXIT_OK)
                    return EXIT_USAGE;
            } else if (o[1] == 'j') {
                if (!cli_count(v, 1, MAX_JOBS, &a->jobs))
                    return cli_usage("-j needs a count in [1, %d], got \"%s\"", MAX_JOBS, v);
            } else if (!cli_count(v, 0, APP_SWEEP_MAX_POINTS - 1, &a->index)) {
                return cli_usage("--index needs a point number in [0, %d], got \"%s\"",
                                 APP_SWEEP_MAX_POINTS - 1, v);
            } else {
                a->has_index = true;
            }
        } else if (strcmp(o, "--threads") == 0) {
            if (!has_value)
                return cli_usage("%s needs a value", o);
            int rc = cli_threads(argv[++i], &a->threads);
            if (rc != EXIT_OK)
                return rc;
        } else if (strcmp(o, "--list") == 0) {
            a->list = true;
        } else if (strcmp(o, "--mpi") == 0) {
            a->mpi = true;
        } else if (strcmp(o, "--quiet") == 0 || strcmp(o, "-q") == 0) {
            a->quiet = true;
        } else if (o[0] == '-') {
            return cli_usage("unknown option %s", o);
        } else if (a->file != NULL) {
            return cli_usage("sweep takes one sweep file, got a second: %s", o);
        } else {
            a->file = o;
        }
    }
    if (a->file == NULL)
        return cli_usage("%s", "sweep needs a sweep file");
    return EXIT_OK;
}

static int run_point(void *ud, size_t k)
{
    sim_err err;
    app_sweep_child child;
    if (app_sweep_spawn(ud, k, &child, &err) < 0) {
        cli_report(&err);
        return EXIT_RUN;
    }
    return app_sweep_wait(ud, &child, stderr);
}

/* Rank 0 hands the missing points out, the other ranks run them; rank 0 writes the index. */
static int sweep_mpi(app_sweep *sw, const char *file, int rank, bool quiet)
{
    size_t n = app_sweep_size(sw), ntodo = 0, failed = 0;
    size_t *todo = calloc(n + 1, sizeof(*todo));
    sim_err err;
    sim_err_clear(&err);
    int rc = todo == NULL ? sim_err_set(&err, SIM_ENOMEM, NULL, "out of memory") : SIM_OK;
    if (rank == 0 && rc == SIM_OK && (rc = app_sweep_open_dir(sw, true, &err)) == SIM_OK)
        ntodo = app_sweep_todo(sw, todo);
    /* Every rank serves, even after an error on rank 0, so that none waits forever. */
    int src = todo != NULL ? app_mpi_serve(todo, ntodo, run_point, sw, &failed, &err) : SIM_OK;
    rc = rc != SIM_OK ? rc : src;
    free(todo);
    if (rank == 0 && rc == SIM_OK)
        rc = app_sweep_write_index(sw, &err);
    if (rc != SIM_OK)
        return cli_report(&err);
    if (rank == 0 && !quiet)
        sim_err_line(stdout, "%s: %zu points, %zu run now, %zu failed; index in %s/index.csv", file,
                     n, ntodo, failed, app_sweep_dir(sw));
    return failed > 0 ? EXIT_RUN : EXIT_OK;
}

/* --mpi with --list or --index: every rank would print the list, or run the same point
 * into the same directory. Refused, said once (by rank 0 under mpirun). */
static int mpi_pair_refused(const char *option)
{
    int rank = 0, size = 1;
    sim_err err;
    bool mpi = app_mpi_built() && app_mpi_init(&rank, &size, &err) == SIM_OK;
    if (rank == 0)
        cli_usage("--mpi does not go with %s (run %s without --mpi and mpirun)", option, option);
    if (mpi)
        app_mpi_finalize();
    return EXIT_USAGE;
}

static int cmd_sweep(int argc, char **argv)
{
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    sweep_args a = { .jobs = cores < 1          ? 1
                             : cores > MAX_JOBS ? MAX_JOBS
                                                : (unsigned long long)cores };
    int rc = parse_sweep(argc, argv, &a);
    if (rc != EXIT_OK)
        return rc;
    if (a.mpi && (a.list || a.has_index))
        return mpi_pair_refused(a.list ? "--list" : "--index");
    if (a.list && a.has_index) /* --list printed every point and ran none, --index unheard */
        return cli_usage("%s", "--list and --index do not go together: --list prints the points, "
                               "--index K runs point K");
    app_sweep_options opt = { .out_dir = a.out_dir,
                              .exe = "/proc/self/exe",
                              .jobs = (unsigned)a.jobs,
                              .threads = a.threads,
                              .progress = !a.quiet && isatty(STDERR_FILENO),
                              .one = a.has_index,
                              .index = (size_t)a.index };
    sim_err err;
    int rank = 0, size = 1;
    if (a.mpi && app_mpi_init(&rank, &size, &err) != SIM_OK)
        return cli_report(&err);
    if (a.mpi)
        app_sweep_mpi_test_hook(rank, false);
    app_sweep *sw = app_sweep_load(a.file, &opt, &err);
    if (a.mpi) {
        /* Each rank's load held to rank 0's: an input saved between them is refused. */
        app_sweep_mpi_test_hook(rank, true);
        int verdict = app_sweep_mpi_agree(sw, rank, &err);
        if (verdict != APP_SWEEP_AGREE) {
            if (verdict == APP_SWEEP_SAY)
                cli_report(&err);
            app_sweep_destroy(sw);
            app_mpi_finalize();
            return err.code == SIM_ENOMEM ? EXIT_RUN : EXIT_USAGE;
        }
    }
    if (sw == NULL) {
        cli_report(&err);
        return err.code == SIM_ENOMEM ? EXIT_RUN : EXIT_USAGE;
    }
    if (a.out_dir == NULL && out_dir_of(a.file, app_sweep_dir(sw)) != EXIT_OK) {
        app_sweep_destroy(sw);
        if (a.mpi)
            app_mpi_finalize();
        return EXIT_USAGE;
    }
    size_t n = app_sweep_size(sw), ran = 0, failed = 0;
    if (a.list) {
        if (app_sweep_list(sw, stdout, &err) != SIM_OK)
            rc = cli_report(&err);
    } else if (a.has_index) {
        if (a.index >= n) {
            rc = cli_usage("--index %llu: the sweep has points 0 to %zu", a.index, n - 1);
        } else if (app_sweep_open_dir(sw, false, &err) != SIM_OK) {
            rc = cli_report(&err);
        } else {
            app_sweep_child child;
            rc = app_sweep_spawn(sw, (size_t)a.index, &child, &err) < 0
                     ? cli_report(&err)
                     : app_sweep_wait(sw, &child, stderr);
        }
    } else if (a.mpi) {
        rc = sweep_mpi(sw, a.file, rank, a.quiet);
    } else if (app_sweep_run(sw, &ran, &failed, &err) != SIM_OK) {
        rc = cli_report(&err);
    } else {
        if (!a.quiet)
            sim_err_line(stdout, "%s: %zu points, %zu run now, %zu failed; index in %s/index.csv",
                         a.file, n, ran, failed, app_sweep_dir(sw));
        rc = failed > 0 ? EXIT_RUN : EXIT_OK;
    }
    app_sweep_destroy(sw);
    if (a.mpi)
        app_mpi_finalize();
    return rc;
}

static int parse_check(int argc, char **argv, app_check_options *o, const char **sets)
{
    static const char *const single[] = {
        "--golden", "-o", "--seeds", "--junit", "--threads", NULL
    };
    static const char *const repeatable[] = { "--set", NULL };
    if (cli_once(argc, argv, single, repeatable) != EXIT_OK)
        return EXIT_USAGE;
    unsigned long long seeds = 0;
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--golden") == 0 || strcmp(a, "--set") == 0 || strcmp(a, "-o") == 0 ||
            strcmp(a, "--seeds") == 0 || strcmp(a, "--junit") == 0) {
            if (i + 1 >= argc)
                return cli_usage("%s needs a value", a);
            const char *v = argv[++i];
            if (strcmp(a, "--golden") == 0)
                o->golden = v;
            else if (strcmp(a, "--junit") == 0 && cli_out_file("--junit", v) != EXIT_OK)
                return EXIT_USAGE;
            else if (strcmp(a, "--junit") == 0)
                o->junit = v;
            else if (strcmp(a, "-o") == 0 && cli_out_dir("-o", v) != EXIT_OK)
                return EXIT_USAGE;
            else if (strcmp(a, "-o") == 0)
                o->out_dir = v;
            else if (strcmp(a, "--set") == 0)
                sets[o->nsets++] = v;
            else if (!cli_count(v, 1, 64, &seeds))
                return cli_usage("--seeds needs a count in [1, 64], got \"%s\"", v);
            else
                o->seeds = (unsigned)seeds;
        } else if (strcmp(a, "--threads") == 0) {
            if (i + 1 >= argc)
                return cli_usage("%s needs a value", a);
            int rc = cli_threads(argv[++i], &o->threads);
            if (rc != EXIT_OK)
                return rc;
        } else if (strcmp(a, "--update") == 0) {
            o->update = true;
        } else if (strcmp(a, "--exact") == 0) {
            o->exact = true;
        } else if (strcmp(a, "--allow-scenario-change") == 0) {
            o->allow_scenario_change = true;
        } else if (a[0] == '-') {
            return cli_usage("unknown option %s", a);
        } else if (o->scenario != NULL) {
            return cli_usage("check takes one scenario, got a second: %s", a);
        } else {
            o->scenario = a;
        }
    }
    if (o->scenario == NULL)
        return cli_usage("%s", "check needs a scenario file");
    if (o->golden == NULL)
        return cli_usage("%s", "check needs --golden DIR");
    if (o->update && o->exact)
        return cli_usage("%s", "--update and --exact do not go together");
    if (o->exact && o->seeds != 0) /* ran the scenario's seed alone, --seeds unheard */
        return cli_usage("%s", "--exact and --seeds do not go together: --exact runs the "
                               "scenario's own seed and compares it byte for byte");
    /* An update writes its golden and nothing else: no verdict to report, no figure. */
    if (o->update && o->out_dir != NULL)
        return cli_usage("%s", "--update and -o do not go together: an update writes the golden "
                               "alone (-o is where a check writes its runs and figure)");
    /* The golden an update writes is an output: GOLDEN.partial and GOLDEN.lock beside it (a
     * name of 248 to 255 bytes: "cannot create directory ...: File name too long", exit 1). */
    if (o->update && cli_out_dir("--golden", o->golden) != EXIT_OK)
        return EXIT_USAGE;
    if (o->update && o->junit != NULL)
        return cli_usage("%s", "--update and --junit do not go together: an update has no "
                               "verdict to report (--junit is a check's)");
    if (o->seeds == 0)
        o->seeds = o->update ? APP_CHECK_GOLDEN_SEEDS : APP_CHECK_RUN_SEEDS;
    if (o->update && o->seeds < 3)
        return cli_usage("a golden needs at least 3 seeds for a statistical check, got %u",
                         o->seeds);
    return EXIT_OK;
}

static int cmd_check(int argc, char **argv)
{
    app_check_options o = { .seeds = 0 };
    const char **sets = calloc((size_t)argc + 1, sizeof(*sets));
    if (sets == NULL)
        return EXIT_RUN;
    o.sets = sets;
    int rc = parse_check(argc, argv, &o, sets);
    if (rc == EXIT_OK) {
        sim_err err;
        rc = app_check_run(&o, stdout, &err);
        if (rc < 0) {
            cli_report(&err);
            rc = rc == SIM_ESCENARIO || rc == SIM_EINVAL ? EXIT_USAGE : EXIT_RUN;
        }
    }
    free(sets);
    return rc;
}

int main(int argc, char **argv)
{
    gsl_set_error_handler_off();
    /* A file-size limit (ulimit -f) makes writes fail with EFBIG instead of killing the
     * process, so that a run that cannot write its outputs cleans up after itself. */
    signal(SIGXFSZ, SIG_IGN);
    if (argc < 2) {
        fputs(usage, stderr);
        fputs(usage_commands, stderr);
        return EXIT_USAGE;
    }
    const char *cmd = argv[1];
    bool help = strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0 || strcmp(cmd, "help") == 0;
    /* As bench and list refuse what follows their words: `hetsim --version extra` printed the
     * version, exit 0. */
    if ((help || strcmp(cmd, "--version") == 0) && argc > 2)
        return cli_usage("%s takes nothing more, got \"%s\"", cmd, argv[2]);
    if (help) {
        fputs(usage, stdout);
        fputs(usage_commands, stdout);
        return EXIT_OK;
    }
    if (strcmp(cmd, "--version") == 0) {
        printf("hetsim %s\n", HETSIM_VERSION);
        return EXIT_OK;
    }
    if (strcmp(cmd, "run") == 0)
        return cmd_run(argc - 2, argv + 2);
    if (strcmp(cmd, "validate") == 0)
        return cmd_validate(argc - 2, argv + 2);
    if (strcmp(cmd, "list") == 0)
        return cmd_list(argc - 2, argv + 2);
    if (strcmp(cmd, "plot") == 0)
        return cli_plot(argc - 2, argv + 2);
    if (strcmp(cmd, "report") == 0)
        return cli_table(argc - 2, argv + 2);
    if (strcmp(cmd, "check") == 0)
        return cmd_check(argc - 2, argv + 2);
    if (strcmp(cmd, "sweep") == 0)
        return cmd_sweep(argc - 2, argv + 2);
    if (strcmp(cmd, "bench") == 0)
        return cmd_bench(argc - 2, argv + 2);
    return cli_usage("unknown command \"%s\"", cmd);
}
