/* libFuzzer target: the scenario loader with --set overrides, then the workload's reader
 * (model, data set headers or LIBSVM probe, schedule, batch, clock), then a reload of the
 * resolved scenario. Input: the scenario's JSON text, optionally followed by a line "--set"
 * and then one override "PATH=VALUE" per line. Relative paths in the scenario (trace files,
 * data sets) are taken from the working directory, the source root. The protocols' own
 * parameters are not reached: that needs the runtime's check, above the models layer. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_errno.h>

#include "fuzz_util.h"
#include "models/train.h"
#include "scenario/scenario.h"

#define MAX_SETS 16

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    gsl_set_error_handler_off();
    size_t json_len = 0, rest = 0;
    const uint8_t *tail = fuzz_split(data, size, "\n--set\n", &json_len, &rest);
    char *copy = malloc(rest + 1);
    if (copy == NULL)
        return 0;
    memcpy(copy, tail, rest);
    copy[rest] = '\0';
    const char *sets[MAX_SETS];
    size_t nsets = 0;
    for (char *line = copy; nsets < MAX_SETS && rest > 0;) {
        char *nl = strchr(line, '\n');
        if (nl != NULL)
            *nl = '\0';
        if (line[0] != '\0')
            sets[nsets++] = line;
        if (nl == NULL)
            break;
        line = nl + 1;
    }
    sim_err err;
    sim_scenario *sc =
        sim_scenario_parse((const char *)data, json_len, "fuzz.json", sets, nsets, &err);
    train_config tc;
    if (sc != NULL &&
        (strcmp(sc->model, "none") == 0 || train_config_read(sc, &tc, &err) == SIM_OK)) {
        char *text = sim_scenario_resolved(sc, false);
        sim_err again;
        /* The resolved scenario loads again (the contract run.json relies on). */
        sim_scenario *sc2 =
            text != NULL ? sim_scenario_parse(text, strlen(text), "fuzz.json", NULL, 0, &again)
                         : NULL;
        if (text != NULL && sc2 == NULL)
            abort();
        sim_scenario_destroy(sc2);
        free(text);
    }
    sim_scenario_destroy(sc);
    free(copy);
    return 0;
}
