/* Shared helpers of the ps suites (tests/harness_ps.h). */
#include "harness_ps.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_rng.h>

#include "harness.h"
#include "runtime/ctx.h"
#include "runtime/run.h"
#include "scenario/scenario.h"
#include "sim/layers.h"

const char pst_none_json[] =
    "{\"seed\": 7, \"workers\": 4, \"servers\": 1, \"compute\": {\"iteration_ms\": 10},"
    " \"network\": {\"bandwidth_gbps\": 8, \"latency_us\": 50},"
    " \"workload\": {\"model\": {\"name\": \"none\"}, \"message_bytes\": 10000000},"
    " \"protocol\": {\"name\": \"ps\"}, \"stop\": {\"time_s\": 1}}";

size_t pst_worker_rows(const char *dir, uint64_t *iters, uint64_t *fnv, size_t max)
{
    harness_csv t = harness_csv_read(dir, "workers.csv");
    size_t n = t.nrows < max ? t.nrows : max;
    for (size_t i = 0; i < n; i++) {
        iters[i] = (uint64_t)harness_csv_num(&t, i, "iterations");
        fnv[i] = strtoull(harness_csv_text(&t, i, "params_fnv"), NULL, 16);
    }
    harness_csv_free(&t);
    return n;
}
