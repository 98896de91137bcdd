/* Golden-curve regression checks: `hetsim check SCENARIO.json --golden DIR` (DESIGN §10,
 * docs/check.md).
 *
 * A golden is a directory holding "seeds" (its K seeds, one a line), "golden.json" (format,
 * hetsim's version, the scenario hash of each seed's run) and one run directory per seed,
 * "seed-<S>/" (metrics.csv, workers.csv, summary.json, run.json and "fingerprint", the FNV-1a
 * hash of each output file, summary.json without its wall line). --update writes it for the
 * scenario's seed and the K - 1 seeds after it into DIR.partial and swaps it in whole.
 *
 * A check validates the golden first (the seeds file, golden.json and the directories agree;
 * metrics.csv and run.json hash as fingerprinted; every field a finite number; the same
 * columns, rows and times in every seed; every seed's scenario equal to the first seed's, and
 * that one to the checked one, but for the seed, the output section and the tolerances), then
 * runs M seeds of the scenario (the first
 * M from its seed up that the golden does not hold) into OUT/seed-<S>, and compares five
 * statistics of the curves (mean, final and jitter of the test accuracy, mean log test loss,
 * mean throughput) with t prediction intervals from the golden seeds at a family-wise
 * false-alarm rate of APP_CHECK_ALPHA (Bonferroni over the statistics), the scenario's $.check
 * tolerances acting as floors of the bands. It writes OUT/check.csv, OUT/check.png and, when asked,
 * a JUnit report. Exact mode runs the scenario's own seed into OUT/seed-<S> and compares its
 * fingerprint with the golden's seed-<S> instead (same binary, same seed).
 */
#ifndef APP_CHECK_H
#define APP_CHECK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "sim/err.h"

typedef struct app_check_options {
    const char *scenario;    /* the scenario file */
    const char *const *sets; /* (nsets) "PATH=VALUE" overrides */
    size_t nsets;
    const char *golden;         /* the golden directory */
    const char *out_dir;        /* the run's directory; NULL: the scenario's output.dir */
    bool update;                /* write the golden instead of checking */
    bool exact;                 /* compare fingerprints */
    unsigned seeds;             /* update: golden seeds K (>= 3); check: run seeds M (>= 1) */
    bool allow_scenario_change; /* compare with a golden of another scenario */
    const char *junit;          /* NULL, or the JUnit XML report to write */
    unsigned threads;           /* threads of each run (sim_run_options.threads); 0: one */
    const char *text;           /* app_check_run's own (leave NULL): the scenario file's bytes, */
    size_t text_len;            /* read once, parsed for every seed (edited meanwhile: no mix) */
} app_check_options;

/* The family-wise false-alarm rate of a check: the chance that a check of M seeds of the
 * golden's own scenario and binary fails, over all the statistics tested. */
#define APP_CHECK_ALPHA 0.01

/* The recipe a check defaults to: K golden seeds (--update) and M check seeds, the smallest of
 * those measured that catches a doubled learning rate on this project's goldens
 * (tests/golden/power.sh: 94% of checks; docs/check.md, "Power"). 5 and 2 caught it in 62%. */
#define APP_CHECK_GOLDEN_SEEDS 10
#define APP_CHECK_RUN_SEEDS    4

enum {
    APP_CHECK_PASS = 0,
    APP_CHECK_REGRESSION = 1
};

/* Runs the check (or the update) and prints its verdict, a line per statistic, to `out`.
 * Returns APP_CHECK_PASS, APP_CHECK_REGRESSION, or a negative SIM_E* code with `err` filled:
 * SIM_ESCENARIO (bad scenario), SIM_EINVAL (no usable golden: the message names the file at
 * fault or the scenario keys that differ; none for the scenario's seed with exact; a
 * directory an update must not replace), SIM_EIO, SIM_ENUMERIC or another code of sim_run
 * (a run failed), SIM_EIO also when check.png (or a CSV it draws) cannot be written whole
 * (the verdict is printed first; no figure is left cut short), SIM_ENOMEM. With opt->junit, the
 * report is written for a verdict and for an unusable golden. */
int app_check_run(const app_check_options *opt, FILE *out, sim_err *err);

#endif
