/* The loader's compute keys for real workloads: a model profile (compute.profile), the
 * accelerators (compute.device, precision, efficiency), and what they resolve into once the
 * workload's batch is known: the base iteration time, each worker's speed and the message
 * size (docs/scenario.md). */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/device.h"
#include "sim/layers.h"
#include "sim/scenario.h"
#include "sim/scenario_read.h"

/* A profile named by path: relative to the scenario file's directory unless absolute. */
static bool is_path(const char *s)
{
    size_t len = strlen(s);
    return strchr(s, '/') != NULL || (len > 4 && strcmp(s + len - 4, ".csv") == 0);
}

static int read_profile(sim_scenario *sc, sim_cfg *c, sim_err *err)
{
    int rc = sim_cfg_string(c, "profile", sc->profile, sizeof(sc->profile), err);
    if (rc != 0 || sc->profile[0] == '\0') /* absent: recorded as a default */
        return rc;
    char file[1024];
    if (is_path(sc->profile)) {
        const char *scenario = sim_cfg_file(c);
        const char *slash = strrchr(scenario, '/');
        int dir = sc->profile[0] != '/' && slash != NULL ? (int)(slash - scenario) + 1 : 0;
        if (snprintf(file, sizeof(file), "%.*s%s", dir, scenario, sc->profile) >= (int)sizeof(file))
            return sim_cfg_fail(c, "profile", err, "path too long");
    } else if (!sim_layers_find_profile(sc->profile, file, sizeof(file))) {
        char names[512];
        size_t n = sim_layers_profile_names(names, sizeof(names));
        return sim_cfg_fail(c, "profile", err,
                            "unknown profile \"%s\" (%s%s; or a CSV path ending in .csv)",
                            sc->profile, n > 0 ? "shipped: " : "no shipped profiles found", names);
    }
    return sim_layers_read_csv(&sc->layers, file, "$.compute.profile", err);
}

/* One device entry's name into *dev, failing with the entry's path. */
static int find_device(sim_cfg *c, const char *key, const char *name, const sim_device **dev,
                       sim_err *err)
{
    *dev = sim_device_find(name);
    if (*dev != NULL)
        return 0;
    char names[256];
    sim_device_list(names, sizeof(names));
    return sim_cfg_fail(c, key, err, "unknown device \"%s\" (valid: %s)", name, names);
}

static int peak_of(sim_scenario *sc, sim_cfg *c, const char *key, const sim_device *dev,
                   double *peak, sim_err *err)
{
    *peak = dev->peak_flops[sc->precision];
    if (*peak > 0)
        return 0;
    char have[64] = "";
    for (int p = 0; p < SIM_PREC_N; p++)
        if (dev->peak_flops[p] > 0)
            snprintf(have + strlen(have), sizeof(have) - strlen(have), "%s%s",
                     have[0] != '\0' ? ", " : "", sim_precision_name(p));
    return sim_cfg_fail(c, key, err, "device \"%s\" has no %s peak (has %s)", dev->name,
                        sim_precision_name(sc->precision), have);
}

/* device: a name for every worker, or [{"device": NAME, "count": N}, ...] covering them. */
static int read_devices(sim_scenario *sc, sim_cfg *c, sim_err *err)
{
    char name[32];
    const sim_device *dev;
    if ((sc->peak_flops = calloc(sc->workers, sizeof(*sc->peak_flops))) == NULL)
        return sim_err_set(err, SIM_ENOMEM, NULL, "out of memory");
    sim_err scratch;
    if (sim_cfg_string(c, "device", name, sizeof(name), &scratch) == 0) {
        double peak;
        int rc = find_device(c, "device", name, &dev, err);
        if (rc == 0)
            rc = peak_of(sc, c, "device", dev, &peak, err);
        for (uint32_t w = 0; w < sc->workers && rc == 0; w++)
            sc->peak_flops[w] = peak;
        return rc;
    }
    size_t n = 0;
    if (sim_cfg_array_len(c, "device", &n, &scratch) != 0 || n == 0)
        return sim_cfg_fail(c, "device", err,
                            "must be a device name or a non-empty array of {\"device\": NAME, "
                            "\"count\": N} objects");
    uint64_t w = 0;
    for (size_t i = 0; i < n; i++) {
        sim_cfg *e = NULL;
        int64_t count = 0;
        double peak = 0;
        int rc = sim_cfg_at(c, "device", i, &e, err);
        if (rc != 0 || (rc = sim_cfg_require(e, "device", err)) != 0 ||
            (rc = sim_cfg_string(e, "device", name, sizeof(name), err)) != 0 ||
            (rc = find_device(e, "device", name, &dev, err)) != 0 ||
            (rc = peak_of(sc, e, "device", dev, &peak, err)) != 0 ||
            (rc = sim_cfg_require(e, "count", err)) != 0 ||
            (rc = sim_cfg_int(e, "count", 1, SIM_MAX_WORKERS, &count, err)) != 0 ||
            (rc = sim_cfg_check_unused(e, err)) != 0)
            return rc;
        if (w + (uint64_t)count > sc->workers)
            return sim_cfg_fail(e, "count", err, "the counts cover more than the %u workers",
                                sc->workers);
        for (int64_t k = 0; k < count; k++)
            sc->peak_flops[w++] = peak;
    }
    if (w != sc->workers)
        return sim_cfg_fail(c, "device", err, "the counts add up to %" PRIu64 ", not %u workers", w,
                            sc->workers);
    return 0;
}

int sim_scenario_read_accel(sim_scenario *sc, sim_cfg *c, sim_err *err)
{
    static const char *const precisions[] = { "fp32", "tf32", "fp16", "bf16" };
    /* Out-of-range sentinels: the keys become valid, no default is written into the tree
     * (scenarios without devices keep their resolved form and hash). */
    sc->precision = -1;
    sc->efficiency = NAN;
    bool device = sim_cfg_has(c, "device"), precision = sim_cfg_has(c, "precision"),
         efficiency = sim_cfg_has(c, "efficiency");
    size_t none = 0;
    int rc = read_profile(sc, c, err);
    if (rc != 0 || (!device && (rc = sim_cfg_array_len(c, "device", &none, err)) != 0))
        return rc;
    if ((rc = sim_cfg_choice(c, "precision", precisions, SIM_PREC_N, &sc->precision, err)) != 0 ||
        (rc = sim_cfg_double(c, "efficiency", 0.0, 1.0, &sc->efficiency, err)) != 0)
        return rc;
    if (sc->precision < 0)
        sc->precision = SIM_PREC_FP32;
    if (isnan(sc->efficiency))
        sc->efficiency = 0.5;
    if (!(sc->efficiency > 0))
        return sim_cfg_fail(c, "efficiency", err, "must be a number > 0, got 0");
    if (!device) {
        if (precision || efficiency)
            return sim_cfg_fail(c, precision ? "precision" : "efficiency", err,
                                "only valid with compute.device");
        return 0;
    }
    if (sc->profile[0] == '\0')
        return sim_cfg_fail(c, "device", err,
                            "needs compute.profile (the FLOPs the device's time follows)");
    if (sc->iteration_given || sc->gflops > 0)
        return sim_cfg_fail(c, sc->iteration_given ? "iteration_ms" : "gflops", err,
                            "not allowed with compute.device (the device sets the base time)");
    return read_devices(sc, c, err);
}

int sim_scenario_resolve_profile(sim_scenario *sc, sim_err *err)
{
    if (sc->profile[0] == '\0')
        return 0;
    const sim_layers *l = &sc->layers;
    if (sc->message_bytes == 0) {
        uint64_t params = sim_layers_params(l);
        if (params == 0 || params > SIM_MAX_MESSAGE_BYTES / 4)
            return sim_err_set(err, SIM_ESCENARIO, "$.compute.profile",
                               "profile has %" PRIu64
                               " parameters: give workload.message_bytes (1 to 2^44)",
                               params);
        sc->message_bytes = 4 * params;
    }
    /* Forward and backward: three times the forward FLOPs (sim/device.h). */
    double flops = 3.0 * sim_layers_flops(l) * (double)sc->batch;
    if ((sc->peak_flops != NULL || sc->gflops > 0) && !(flops > 0))
        return sim_err_set(err, SIM_ESCENARIO, "$.compute.profile",
                           "profile has no FLOPs to time with %s",
                           sc->peak_flops != NULL ? "compute.device" : "compute.gflops");
    double ns = NAN;
    if (sc->peak_flops != NULL) {
        ns = flops / (sc->peak_flops[0] * sc->efficiency) * 1e9;
        /* Worker w's base is worker 0's times peak_0 / peak_w: folded into its speed. */
        for (uint32_t w = 1; w < sc->workers; w++)
            sc->speeds[w] *= sc->peak_flops[w] / sc->peak_flops[0];
    } else if (sc->gflops > 0) {
        ns = flops / sc->gflops;
    } else if (l->measured && !sc->iteration_given) {
        ns = sim_layers_measured_ms(l) * 1e6;
    }
    if (!isnan(ns)) {
        if (!(ns < 1e18))
            return sim_err_set(
                err, SIM_ESCENARIO,
                sc->peak_flops != NULL ? "$.compute.efficiency" : "$.compute.profile",
                "an iteration would last %.3g s, beyond the simulated clock", ns * 1e-9);
        sc->iteration_ns = ns < 1.0 ? 1 : (sim_time)llround(ns);
    }
    return 0;
}
