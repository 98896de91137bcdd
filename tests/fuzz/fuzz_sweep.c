/* libFuzzer target: the sweep file reader (app/sweep.c): the sweep's keys, the grid and its
 * zip, the seeds, the count limit, the run directories' names, and every point's validation
 * (its base scenario loaded with the point's overrides and checked by the runtime and its
 * protocol, as `hetsim validate` does), then the listing of the points. Nothing is run.
 *
 * Input: the sweep file's JSON, optionally followed by a line "--base" and the text of a
 * scenario, written as base.json next to the sweep file (a sweep names it with "base":
 * "base.json"; without that part there is no base.json). Paths in the scenario (traces, data
 * sets) are taken from the working directory, the source root. A sweep may have at most 16
 * points here (a larger one is refused like one over APP_SWEEP_MAX_POINTS), so that an input
 * takes milliseconds.
 *
 * Checked beyond the sanitizers: a sweep that loads has 1 to 16 points and lists one line
 * each; a refused one has an error that names the sweep file and says what is wrong. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_errno.h>

#include "app/sweep.h"
#include "fuzz_util.h"

#define FUZZ_MAX_POINTS 16

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    gsl_set_error_handler_off();
    size_t sweep_len = 0, base_len = 0;
    const uint8_t *base = fuzz_split(data, size, "\n--base\n", &sweep_len, &base_len);
    fuzz_dir_file("base.json", sweep_len < size ? base : NULL, base_len);
    const char *file = fuzz_dir_file("sweep.json", data, sweep_len);
    app_sweep_options opt = {
        .exe = "/bin/false", .jobs = 1, .progress = false, .max_points = FUZZ_MAX_POINTS
    };
    sim_err err;
    app_sweep *sw = app_sweep_load(file, &opt, &err);
    if (sw == NULL) {
        if (err.code == 0 || err.msg[0] == '\0' || strcmp(err.file, file) != 0)
            abort();
        return 0;
    }
    size_t n = app_sweep_size(sw);
    if (n < 1 || n > FUZZ_MAX_POINTS)
        abort();
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    if (f == NULL)
        abort();
    int rc = app_sweep_list(sw, f, &err);
    if (fclose(f) != 0 || (rc != 0 && rc != SIM_ENOMEM))
        abort();
    size_t lines = 0;
    for (size_t i = 0; i < len; i++)
        lines += text[i] == '\n';
    if (rc == 0 && lines != n)
        abort();
    free(text);
    app_sweep_destroy(sw);
    return 0;
}
