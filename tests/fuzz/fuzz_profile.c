/* libFuzzer target: layer profiles (sim/layers.c). The input is a profile CSV. One that loads
 * must give finite shares in order (each layer's forward pass ending after the one before,
 * the backward ends falling from 1 at layer 0 to the end of the forward pass), its file's hash
 * and parameters as the bytes say, gradient-ready offsets within the iteration, and byte
 * shares that add up to any message size. Named by a timing-only scenario, a profile the
 * loader accepts must resolve there (the message size it gives recorded) and load again. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_errno.h>

#include "fuzz_util.h"
#include "scenario/scenario.h"
#include "sim/layers.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Aborts unless the finished layers of a loaded profile keep their invariants. */
static void check_layers(const sim_layers *l, const uint8_t *data, size_t size)
{
    uint64_t h = UINT64_C(1469598103934665603), params = 0;
    for (size_t i = 0; i < size; i++)
        h = (h ^ data[i]) * UINT64_C(1099511628211);
    if (l->n == 0 || l->n > SIM_LAYERS_MAX || l->file_fnv != h || l->bwd_end[0] != 1.0)
        abort();
    /* The backward ends are summed in the other order than their total: a few ulps apart. */
    const double ulps = 1e-12;
    double before = 0.0;
    for (size_t i = 0; i < l->n; i++) {
        params += l->layer[i].params; /* checked by the reader: no wrap */
        if (!isfinite(l->fwd_end[i]) || !isfinite(l->bwd_end[i]) || l->fwd_end[i] < before ||
            l->bwd_end[i] < l->fwd_end[l->n - 1] - ulps || l->bwd_end[i] > 1.0 + ulps ||
            (i > 0 && l->bwd_end[i] > l->bwd_end[i - 1] + ulps) || l->params_end[i] != params)
            abort();
        before = l->fwd_end[i];
    }
    if (sim_layers_params(l) != params || !isfinite(sim_layers_flops(l)))
        abort();
    static const uint64_t sizes[] = { 1, 4093, UINT64_C(1) << 44 };
    for (size_t k = 0; k < 3; k++) {
        uint64_t sum = 0;
        for (size_t i = 0; i < l->n; i++)
            sum += sim_layers_bytes(l, sizes[k], i);
        if (sum != sizes[k])
            abort();
    }
    sim_time d = 123456789, last = d;
    for (size_t i = 0; i < l->n; i++) {
        sim_time t = sim_layers_ready_offset_ns(l, d, i);
        if (t < 0 || t > d || (i > 0 && t > last))
            abort();
        last = i == 0 ? d : t;
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    gsl_set_error_handler_off();
    const char *csv = fuzz_file(0, data, size);
    sim_layers l = { 0 };
    sim_err err;
    if (sim_layers_read_csv(&l, csv, "$.compute.profile", &err) != SIM_OK) {
        if (l.layer != NULL || l.n != 0)
            abort(); /* a refused profile leaves nothing behind */
        return 0;
    }
    check_layers(&l, data, size);
    sim_layers_fini(&l);
    char json[1024];
    snprintf(json, sizeof(json),
             "{\"seed\": 3, \"workers\": 3, \"compute\": {\"profile\": \"%s\"},"
             " \"workload\": {\"model\": {\"name\": \"none\"}},"
             " \"protocol\": {\"name\": \"allreduce\"}}",
             csv);
    sim_scenario *sc = sim_scenario_parse(json, strlen(json), "fuzz.json", NULL, 0, &err);
    if (sc == NULL)
        return 0;
    if (sc->message_bytes != 4 * sim_layers_params(&sc->layers))
        abort();
    char *text = sim_scenario_resolved(sc, false);
    sim_scenario *again =
        text != NULL ? sim_scenario_parse(text, strlen(text), "fuzz.json", NULL, 0, &err) : NULL;
    if (text != NULL &&
        (again == NULL || again->hash != sc->hash || again->iteration_ns != sc->iteration_ns ||
         again->message_bytes != sc->message_bytes))
        abort();
    sim_scenario_destroy(again);
    free(text);
    sim_scenario_destroy(sc);
    return 0;
}
