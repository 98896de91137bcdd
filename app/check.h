/* Golden-curve regression checks: `hetsim check SCENARIO.json --golden DIR` (DESIGN §10).
 *
 * A golden is a directory holding "seeds" (its seeds, one a line) and one run directory per
 * seed, "seed-<S>/" (metrics.csv, workers.csv, summary.json, run.json and "fingerprint", the
 * FNV-1a hash of each output file, summary.json without its wall line), written by --update
 * for the scenario's seed and, with seeds K > 1, the K - 1 seeds after it. A check runs the
 * scenario (its own seed) into its output directory and compares, per evaluation row, test
 * accuracy, test loss and throughput with the band [min, max] of the golden seeds widened by abs +
 * rel * max(|min|, |max|), the tolerances of the scenario's $.check section. Exact mode compares
 * the fingerprints instead (same binary, same seed). On a regression the first rows out of band are
 * printed and check.png (run against band) is written into the run's directory.
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
    const char *golden;  /* the golden directory */
    const char *out_dir; /* the run's directory; NULL: the scenario's output.dir */
    bool update;         /* write the golden instead of checking */
    bool exact;          /* compare fingerprints */
    unsigned seeds;      /* with update: how many seeds, >= 1 */
} app_check_options;

enum {
    APP_CHECK_PASS = 0,
    APP_CHECK_REGRESSION = 1
};

/* Runs the check (or the update) and prints its verdict and the rows out of band to `out`.
 * Returns APP_CHECK_PASS, APP_CHECK_REGRESSION, or a negative SIM_E* code with `err` filled:
 * SIM_ESCENARIO (bad scenario), SIM_EINVAL (no golden in the directory, or none for the
 * scenario's seed with exact), SIM_EIO, SIM_ENUMERIC or another code of sim_run (the run failed),
 * SIM_EIO also when a regression's check.png (or a CSV it draws) cannot be written whole (the
 * rows out of band are printed first; no figure is left cut short), SIM_ENOMEM. */
int app_check_run(const app_check_options *opt, FILE *out, sim_err *err);

#endif
