/* hetsim: the command line (DESIGN §8).
 *
 * The only file that reads argv, prints results to stdout and exits. Exit codes: 0 success,
 * 1 run failed (divergence, I/O), 2 bad usage or bad scenario.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <gsl/gsl_errno.h>

#include "protocols/proto.h"
#include "sim/bench.h"
#include "sim/err.h"
#include "sim/run.h"
#include "sim/scenario.h"

enum {
    EXIT_OK = 0,
    EXIT_RUN = 1,
    EXIT_USAGE = 2
};

static const char usage[] =
    "usage: hetsim run SCENARIO.json [-o DIR] [--set PATH=VALUE]... [--quiet]\n"
    "       hetsim validate SCENARIO.json...\n"
    "       hetsim list protocols|models|datasets|topologies\n"
    "       hetsim bench [engine|network]\n"
    "       hetsim --help | --version\n"
    "\n"
    "run       simulate a scenario; results go to its output directory (or -o DIR):\n"
    "          metrics.csv, workers.csv, summary.json, run.json\n"
    "validate  check scenario files strictly without running them\n"
    "list      print what a scenario can name\n"
    "bench     measure the engine and network against references measured in the same run\n"
    "\n"
    "exit codes: 0 success, 1 run failed, 2 bad usage or bad scenario\n";

static int usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static int usage_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("hetsim: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputs("\n(see hetsim --help)\n", stderr);
    va_end(ap);
    return EXIT_USAGE;
}

static int report(const sim_err *err)
{
    char buf[1024];
    sim_err_format(err, buf, sizeof(buf));
    fprintf(stderr, "hetsim: %s\n", buf);
    return err->code == SIM_ESCENARIO || err->code == SIM_EINVAL ? EXIT_USAGE : EXIT_RUN;
}

/* A scenario error (bad file, bad key) exits 2 even when the loader says SIM_EIO for a file
 * that cannot be read: the input is what is wrong. */
static int load(const char *file, const char *const *sets, size_t nsets, sim_scenario **out)
{
    sim_err err;
    sim_err_clear(&err);
    sim_scenario *sc = sim_scenario_load(file, sets, nsets, &err);
    if (sc == NULL || sim_run_check(sc, &err) != SIM_OK) {
        sim_scenario_destroy(sc);
        report(&err);
        return err.code == SIM_ENOMEM ? EXIT_RUN : EXIT_USAGE;
    }
    *out = sc;
    return EXIT_OK;
}

static int cmd_run(int argc, char **argv)
{
    const char *file = NULL, *out_dir = NULL;
    bool quiet = false;
    const char **sets = calloc((size_t)argc, sizeof(*sets));
    size_t nsets = 0;
    if (sets == NULL)
        return EXIT_RUN;
    int rc = EXIT_OK;
    for (int i = 0; i < argc && rc == EXIT_OK; i++) {
        if (strcmp(argv[i], "-o") == 0 || strcmp(argv[i], "--set") == 0) {
            if (i + 1 >= argc)
                rc = usage_error("%s needs a value", argv[i]);
            else if (argv[i][1] == 'o')
                out_dir = argv[++i];
            else
                sets[nsets++] = argv[++i];
        } else if (strcmp(argv[i], "--quiet") == 0 || strcmp(argv[i], "-q") == 0) {
            quiet = true;
        } else if (argv[i][0] == '-') {
            rc = usage_error("unknown option %s", argv[i]);
        } else if (file != NULL) {
            rc = usage_error("run takes one scenario, got a second: %s", argv[i]);
        } else {
            file = argv[i];
        }
    }
    if (rc == EXIT_OK && file == NULL)
        rc = usage_error("%s", "run needs a scenario file");
    sim_scenario *sc = NULL;
    if (rc == EXIT_OK)
        rc = load(file, sets, nsets, &sc);
    free(sets);
    if (rc != EXIT_OK)
        return rc;
    sim_run_options opt = { .out_dir = out_dir, .progress = !quiet && isatty(STDERR_FILENO) };
    sim_run_summary sum;
    sim_err err;
    sim_err_clear(&err);
    if (sim_run(sc, &opt, &sum, &err) != SIM_OK) {
        sim_scenario_destroy(sc);
        report(&err);
        return EXIT_RUN;
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

static int cmd_validate(int argc, char **argv)
{
    if (argc == 0)
        return usage_error("%s", "validate needs at least one scenario file");
    int worst = EXIT_OK;
    for (int i = 0; i < argc; i++) {
        sim_scenario *sc = NULL;
        int rc = load(argv[i], NULL, 0, &sc);
        if (rc == EXIT_OK)
            printf("%s: ok\n", argv[i]);
        sim_scenario_destroy(sc);
        if (rc > worst)
            worst = rc;
    }
    return worst;
}

static int cmd_list(int argc, char **argv)
{
    if (argc != 1)
        return usage_error("%s", "list needs one of: protocols, models, datasets, topologies");
    if (strcmp(argv[0], "protocols") == 0) {
        size_t n;
        const proto_ops *const *all = proto_list(&n);
        for (size_t i = 0; i < n; i++)
            printf("%-12s %s\n", all[i]->name, all[i]->summary);
    } else if (strcmp(argv[0], "models") == 0) {
        printf("%-12s %s\n", "none", "timing only: no tensors, messages of message_bytes");
    } else if (strcmp(argv[0], "datasets") == 0) {
        printf("%-12s %s\n", "none", "(datasets come with real models)");
    } else if (strcmp(argv[0], "topologies") == 0) {
        printf("%-12s %s\n", "star", "every NIC on one ideal switch");
        printf("%-12s %s\n", "racks",
               "racks of rack_size hosts behind top-of-rack switches with uplinks");
    } else {
        return usage_error("cannot list \"%s\" (protocols, models, datasets, topologies)", argv[0]);
    }
    return EXIT_OK;
}

static int cmd_bench(int argc, char **argv)
{
    const char *what = argc > 0 ? argv[0] : "all";
    bool all = strcmp(what, "all") == 0;
    if (argc > 1 || (!all && strcmp(what, "engine") != 0 && strcmp(what, "network") != 0))
        return usage_error("bench takes engine or network, got \"%s\"", what);
    sim_err err;
    sim_err_clear(&err);
    if ((all || strcmp(what, "engine") == 0) && sim_bench_engine(stdout, &err) != SIM_OK)
        return report(&err), EXIT_RUN;
    if ((all || strcmp(what, "network") == 0) && sim_bench_network(stdout, &err) != SIM_OK)
        return report(&err), EXIT_RUN;
    return EXIT_OK;
}

int main(int argc, char **argv)
{
    gsl_set_error_handler_off();
    if (argc < 2) {
        fputs(usage, stderr);
        return EXIT_USAGE;
    }
    const char *cmd = argv[1];
    if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0 || strcmp(cmd, "help") == 0) {
        fputs(usage, stdout);
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
    if (strcmp(cmd, "bench") == 0)
        return cmd_bench(argc - 2, argv + 2);
    return usage_error("unknown command \"%s\"", cmd);
}
