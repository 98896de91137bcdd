/* The command line, internal (see app/main.c): what its files share. Included only by
 * app/main.c (usage, run, validate, list, bench, sweep, check, and main), app/main_args.c
 * (exit codes, usage errors, error reports, numbers on the command line) and
 * app/main_results.c (the commands that read finished outputs: plot and report); calls run
 * one way: main.c -> main_results.c -> main_args.c. */
#ifndef APP_MAIN_STATE_H
#define APP_MAIN_STATE_H

#include <stdbool.h>

#include "sim/err.h"

enum {
    EXIT_OK = 0,
    EXIT_RUN = 1,
    EXIT_USAGE = 2
};

/* Prints "hetsim: " and the message to stderr, then "(see hetsim --help)"; returns
 * EXIT_USAGE. */
int cli_usage(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Prints the error as "hetsim: file: path: message"; returns EXIT_USAGE for SIM_ESCENARIO and
 * SIM_EINVAL (bad input), else EXIT_RUN. */
int cli_report(const sim_err *err);

/* The longest output directory a command takes (plot's limit, outputs/plot.c), and the
 * longest name between its '/'s: NAME_MAX (255) less ".partial", the work directory written
 * beside it. */
#define CLI_DIR_MAX  4000
#define CLI_NAME_MAX 247

/* EXIT_OK, or EXIT_USAGE with a message naming `opt` when the directory `dir` is too long to
 * be written (longer than CLI_DIR_MAX bytes, or with a name longer than CLI_NAME_MAX): the
 * system refused it with ENAMETOOLONG once the command had begun, exit 1. */
int cli_out_dir(const char *opt, const char *dir);

/* The longest name of a file a command writes (check --junit): NAME_MAX less ".tmp", the
 * file written beside it and renamed over it. */
#define CLI_FILE_NAME_MAX 251

/* The same for a file a command writes (check --junit): EXIT_OK, or EXIT_USAGE naming `opt`
 * when `file` is longer than CLI_DIR_MAX bytes or holds a name longer than
 * CLI_FILE_NAME_MAX. */
int cli_out_file(const char *opt, const char *file);

/* An option's whole value as a decimal integer in [lo, hi]: digits only (no sign, space,
 * suffix or leading zero), no overflow. Returns false for anything else. */
bool cli_count(const char *s, unsigned long long lo, unsigned long long hi,
               unsigned long long *out);

/* EXIT_OK, or a usage error naming the first option of `single` (a NULL-terminated list of
 * options that take one value) that `argv` gives twice: "-o given twice (it takes one
 * value)". Read before anything else, so that nothing is read or written; the values of
 * `single`'s options and of `repeatable`'s (options that may come again, such as --set) are
 * skipped, so that a value spelled as an option ("--title -o") is no option. An empty
 * argument that is no option's value, or an empty value of an option that names a file or
 * a directory (-o, --golden, --junit, --names, --style), is a usage error too. */
int cli_once(int argc, char **argv, const char *const *single, const char *const *repeatable);

/* --threads's value: a count in [1, SIM_POOL_MAX_THREADS] into *out, else a usage error. */
int cli_threads(const char *v, unsigned *out);

/* `hetsim plot ...` and `hetsim report ...` with their arguments (argv after the command):
 * app/main_results.c. Return the exit code. */
int cli_plot(int argc, char **argv);
int cli_table(int argc, char **argv);

#endif
