/* The identity of the files a scenario's load reads (see scenario.h): a compute.profile's
 * bytes, each trace's points and the LIBSVM data's bytes, which a command that loads the
 * scenario again (a check's and an update's seeds, a sweep's points, a run's set-up) holds to
 * the first load's: a file edited meanwhile is named, never read as the same scenario. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scenario/scenario.h"
#include "sim/cfg.h"
#include "sim/err.h"
#include "sim/fnv.h"

static const char *const data_key[2] = { "file", "test_file" };

/* The points of a trace, field by field (no padding): FNV-1a 64. */
static uint64_t trace_fnv(const sim_straggler *st)
{
    uint64_t h = sim_fnv_bytes(SIM_FNV_FILE_OFFSET, &st->ntrace, sizeof(st->ntrace));
    for (size_t k = 0; k < st->ntrace; k++) {
        h = sim_fnv_bytes(h, &st->trace[k].time_ns, sizeof(st->trace[k].time_ns));
        h = sim_fnv_bytes(h, &st->trace[k].worker, sizeof(st->trace[k].worker));
        h = sim_fnv_bytes(h, &st->trace[k].slowdown, sizeof(st->trace[k].slowdown));
    }
    return h;
}

static size_t ntraces(const sim_scenario *sc)
{
    size_t n = 0;
    for (size_t i = 0; i < sc->nstragglers; i++)
        n += sc->stragglers[i].kind == SIM_STRAG_TRACE;
    return n;
}

/* Every trace's points folded into one hash (for scenarios of very many traces). */
static uint64_t traces_fnv(const sim_scenario *sc)
{
    uint64_t h = SIM_FNV_FILE_OFFSET;
    for (size_t i = 0; i < sc->nstragglers; i++)
        if (sc->stragglers[i].kind == SIM_STRAG_TRACE) {
            uint64_t t = trace_fnv(&sc->stragglers[i]);
            h = sim_fnv_bytes(h, &t, sizeof(t));
        }
    return h;
}

uint64_t sim_scenario_traces_bytes(const sim_scenario *sc)
{
    uint64_t bytes = 0;
    for (size_t i = 0; i < sc->nstragglers; i++)
        if (sc->stragglers[i].kind == SIM_STRAG_TRACE)
            bytes += sim_scenario_trace_bytes(&sc->stragglers[i], sc->workers);
    return bytes;
}

bool sim_scenario_traces_fnv(const sim_scenario *sc, uint64_t *fnv)
{
    if (ntraces(sc) == 0)
        return false;
    *fnv = traces_fnv(sc);
    return true;
}

char *sim_scenario_inputs_text(const sim_scenario *sc)
{
    size_t n = ntraces(sc), size = 128 + (n <= SIM_SCENARIO_TRACES_NAMED ? n * 48 : 32);
    char *text = malloc(size);
    if (text == NULL)
        return NULL;
    size_t len = (size_t)snprintf(text, size, "p=%016" PRIx64, sc->layers.file_fnv);
    for (size_t i = 0; i < sc->nstragglers && n <= SIM_SCENARIO_TRACES_NAMED; i++)
        if (sc->stragglers[i].kind == SIM_STRAG_TRACE)
            len += (size_t)snprintf(text + len, size - len, ";t%zu=%016" PRIx64, i,
                                    trace_fnv(&sc->stragglers[i]));
    if (n > SIM_SCENARIO_TRACES_NAMED)
        len += (size_t)snprintf(text + len, size - len, ";t=%016" PRIx64, traces_fnv(sc));
    for (int d = 0; d < 2; d++)
        if (sc->data_fnv[d] != 0)
            len += (size_t)snprintf(text + len, size - len, ";%c=%016" PRIx64, d == 0 ? 'd' : 'e',
                                    sc->data_fnv[d]);
    return text;
}

/* An input of `sc` at `path`, the file `file` (NULL: none known), is not the first load's. */
static int changed(sim_err *err, const char *path, const char *file, const char *what)
{
    return sim_err_set(err, SIM_EIO, path, "%s%s%s are not those the first run read",
                       file != NULL ? file : "", file != NULL ? ": its " : "its ", what);
}

/* The LIBSVM file `which` as the scenario names it, into name[size] ("" when unknown). */
static const char *data_name(const sim_scenario *sc, int which, char *name, size_t size)
{
    name[0] = '\0';
    if (sc->dataset_cfg == NULL || !sim_cfg_has(sc->dataset_cfg, data_key[which]) ||
        sim_cfg_string(sc->dataset_cfg, data_key[which], name, size, NULL) != SIM_OK)
        name[0] = '\0';
    return name;
}

int sim_scenario_data_read(sim_scenario *sc, int which, const char *file, uint64_t fnv,
                           sim_err *err)
{
    if (sc->data_fnv[which] == 0 || sc->data_fnv[which] == fnv) {
        sc->data_fnv[which] = fnv;
        return SIM_OK;
    }
    char path[64], name[512];
    snprintf(path, sizeof(path), "$.workload.dataset.%s", data_key[which]);
    if (file == NULL)
        file = data_name(sc, which, name, sizeof(name));
    return changed(err, path, file[0] != '\0' ? file : NULL, "bytes");
}

/* One entry of an inputs text, "KEY=HEX" with KEY `key` (without its '='), held. */
static int hold_one(sim_scenario *sc, const char *key, uint64_t fnv, sim_err *err)
{
    if (strcmp(key, "p") == 0)
        return sc->layers.file_fnv == fnv ? SIM_OK
                                          : changed(err, "$.compute.profile", sc->profile, "bytes");
    if (strcmp(key, "t") == 0)
        return traces_fnv(sc) == fnv ? SIM_OK
                                     : changed(err, "$.stragglers", NULL, "traces' points");
    if (strcmp(key, "d") == 0 || strcmp(key, "e") == 0)
        return sim_scenario_data_read(sc, key[0] == 'd' ? 0 : 1, NULL, fnv, err);
    char *end;
    size_t i = key[0] == 't' ? (size_t)strtoull(key + 1, &end, 10) : SIZE_MAX;
    char path[64];
    snprintf(path, sizeof(path), "$.stragglers[%zu].file", i);
    if (i >= sc->nstragglers || sc->stragglers[i].kind != SIM_STRAG_TRACE)
        return changed(err, i == SIZE_MAX ? "$" : path, NULL, "inputs");
    const sim_straggler *st = &sc->stragglers[i];
    return trace_fnv(st) == fnv ? SIM_OK : changed(err, path, st->file, "trace's points");
}

int sim_scenario_inputs_hold(sim_scenario *sc, const char *text, sim_err *err)
{
    const char *at = text;
    while (*at != '\0') {
        char key[32];
        size_t n = strcspn(at, "=;");
        if (at[n] != '=' || n == 0 || n >= sizeof(key))
            return sim_err_set(err, SIM_EINVAL, NULL, "not an inputs text: %.64s", text);
        memcpy(key, at, n);
        key[n] = '\0';
        char *end;
        uint64_t fnv = strtoull(at + n + 1, &end, 16);
        if (end == at + n + 1 || (*end != ';' && *end != '\0'))
            return sim_err_set(err, SIM_EINVAL, NULL, "not an inputs text: %.64s", text);
        int rc = hold_one(sc, key, fnv, err);
        if (rc != SIM_OK)
            return rc;
        at = *end == ';' ? end + 1 : end;
    }
    return SIM_OK;
}

int sim_scenario_same_inputs(const sim_scenario *a, sim_scenario *b, sim_err *err)
{
    char *text = sim_scenario_inputs_text(a);
    if (text == NULL)
        return sim_err_set(err, SIM_ENOMEM, NULL, "out of memory");
    int rc = sim_scenario_inputs_hold(b, text, err);
    free(text);
    return rc;
}
