/* libFuzzer target: straggler trace files. The input is the CSV of a trace rule in a fixed
 * scenario of 5 workers; a trace that loads then drives the cluster (scenario/cluster.c), whose
 * iteration times must stay in [1 ns, 1e18 ns] at times around each trace point. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_errno.h>

#include "fuzz_util.h"
#include "scenario/cluster.h"
#include "scenario/scenario.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    gsl_set_error_handler_off();
    const char *csv = fuzz_file(0, data, size);
    char json[1024];
    snprintf(json, sizeof(json),
             "{\"seed\": 5, \"workers\": 5, \"compute\": {\"iteration_ms\": 100},"
             " \"stragglers\": [{\"kind\": \"fixed\", \"workers\": [1], \"slowdown\": 2.5},"
             " {\"kind\": \"trace\", \"file\": \"%s\"}],"
             " \"workload\": {\"model\": {\"name\": \"none\"}, \"message_bytes\": 4096},"
             " \"protocol\": {\"name\": \"allreduce\"}}",
             csv);
    sim_err err;
    sim_scenario *sc = sim_scenario_parse(json, strlen(json), "fuzz.json", NULL, 0, &err);
    if (sc == NULL)
        return 0;
    sim_cluster *cl = sim_cluster_create(sc, &err);
    if (cl == NULL)
        abort(); /* a scenario the loader accepts must build */
    const sim_straggler *st = &sc->stragglers[1];
    for (size_t i = 0; i < st->ntrace && i < 64; i++) {
        sim_time t = st->trace[i].time_ns;
        for (sim_time d = -1; d <= 1; d++) {
            sim_time now = t + d < 0 ? 0 : t + d;
            sim_time ns = sim_cluster_iteration_ns(cl, st->trace[i].worker, now, i);
            if (ns < 1 || ns > (sim_time)1000000000000000000)
                abort();
        }
    }
    sim_cluster_destroy(cl);
    sim_scenario_destroy(sc);
    return 0;
}
