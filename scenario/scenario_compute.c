/* The loader's compute keys for real workloads: a model profile (compute.profile), the
 * accelerators (compute.device, precision, efficiency), and what they resolve into once the
 * workload's batch is known: the base iteration time, each worker's speed and the message
 * size (docs/scenario.md). */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scenario/device.h"
#include "scenario/roofline.h"
#include "scenario/scenario.h"
#include "scenario/scenario_read.h"
#include "sim/layers.h"

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
    if (sim_scenario_module_profile(sc)) /* the model's own layers, once it is read */
        return 0;
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
    rc = sim_layers_read_csv(&sc->layers, file, "$.compute.profile", err);
    return rc == 0 ? sim_scenario_add_input(sc, file, err) : rc;
}

static int resolve(sim_scenario *sc, sim_err *err);

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

/* The device's peak at the scenario's precision must exist. */
static int check_peak(sim_scenario *sc, sim_cfg *c, const char *key, const sim_device *dev,
                      sim_err *err)
{
    if (dev->peak_flops[sc->precision] > 0)
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
    if ((sc->devices = calloc(sc->workers, sizeof(*sc->devices))) == NULL)
        return sim_err_set(err, SIM_ENOMEM, NULL, "out of memory");
    sim_err scratch;
    if (sim_cfg_string(c, "device", name, sizeof(name), &scratch) == 0) {
        int rc = find_device(c, "device", name, &dev, err);
        if (rc == 0)
            rc = check_peak(sc, c, "device", dev, err);
        for (uint32_t w = 0; w < sc->workers && rc == 0; w++)
            sc->devices[w] = dev;
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
        int rc = sim_cfg_at(c, "device", i, &e, err);
        if (rc != 0 || (rc = sim_cfg_require(e, "device", err)) != 0 ||
            (rc = sim_cfg_string(e, "device", name, sizeof(name), err)) != 0 ||
            (rc = find_device(e, "device", name, &dev, err)) != 0 ||
            (rc = check_peak(sc, e, "device", dev, err)) != 0 ||
            (rc = sim_cfg_require(e, "count", err)) != 0 ||
            (rc = sim_cfg_int(e, "count", 1, SIM_MAX_WORKERS, &count, err)) != 0 ||
            (rc = sim_cfg_check_unused(e, err)) != 0)
            return rc;
        if (w + (uint64_t)count > sc->workers)
            return sim_cfg_fail(e, "count", err, "the counts cover more than the %u workers",
                                sc->workers);
        for (int64_t k = 0; k < count; k++)
            sc->devices[w++] = dev;
    }
    if (w != sc->workers)
        return sim_cfg_fail(c, "device", err, "the counts add up to %" PRIu64 ", not %u workers", w,
                            sc->workers);
    return 0;
}

int sim_scenario_read_accel(sim_scenario *sc, sim_cfg *c, sim_err *err)
{
    static const char *const precisions[] = { "fp32", "tf32", "fp16", "bf16" };
    static const char *const layouts[] = { "nhwc", "nchw" };
    /* Out-of-range sentinels: the keys become valid, no default is written into the tree
     * (scenarios without devices keep their resolved form and hash). */
    sc->precision = -1;
    sc->layout = -1;
    sc->efficiency = NAN;
    bool device = sim_cfg_has(c, "device"), precision = sim_cfg_has(c, "precision"),
         layout = sim_cfg_has(c, "layout"), efficiency = sim_cfg_has(c, "efficiency");
    size_t none = 0;
    int rc = read_profile(sc, c, err);
    if (rc != 0 || (!device && (rc = sim_cfg_array_len(c, "device", &none, err)) != 0))
        return rc;
    if ((rc = sim_cfg_choice(c, "precision", precisions, SIM_PREC_N, &sc->precision, err)) != 0 ||
        (rc = sim_cfg_choice(c, "layout", layouts, 2, &sc->layout, err)) != 0 ||
        (rc = sim_cfg_double(c, "efficiency", 0.0, 1.0, &sc->efficiency, err)) != 0)
        return rc;
    if (sc->precision < 0)
        sc->precision = SIM_PREC_FP32;
    if (sc->layout < 0)
        sc->layout = 0;
    if (efficiency && !(sc->efficiency > 0))
        return sim_cfg_fail(c, "efficiency", err, "must be a number > 0, got 0");
    if (!device) {
        if (precision || layout || efficiency)
            return sim_cfg_fail(c,
                                precision ? "precision"
                                : layout  ? "layout"
                                          : "efficiency",
                                err, "only valid with compute.device");
        return 0;
    }
    /* With a device, the precision's default is recorded (run.json holds every value used),
     * and the layout's at 16 bits, the only precisions it acts on (32-bit scenarios keep their
     * resolved form and hash); an absent efficiency is the roofline's timing, which no value
     * of the key gives. */
    bool half = sc->precision == SIM_PREC_FP16 || sc->precision == SIM_PREC_BF16;
    if ((!precision && (rc = sim_cfg_set_json(c, "precision", "\"fp32\"", err)) != 0) ||
        (!layout && half && (rc = sim_cfg_set_json(c, "layout", "\"nhwc\"", err)) != 0))
        return rc;
    if (sc->profile[0] == '\0')
        return sim_cfg_fail(c, "device", err,
                            "needs compute.profile (the FLOPs the device's time follows)");
    if (sc->iteration_given || sc->gflops > 0)
        return sim_cfg_fail(c, sc->iteration_given ? "iteration_ms" : "gflops", err,
                            "not allowed with compute.device (the device sets the base time)");
    return read_devices(sc, c, err);
}

/* The layers and batch a device's roofline times, for the shares' callback. */
typedef struct timing {
    sim_roofline r;
    const sim_layers *l;
    uint32_t batch;
} timing;

static void roofline_time(const void *ud, size_t i, double *fwd, double *bwd)
{
    const timing *t = ud;
    sim_roofline_times(&t->r, t->l, i, t->batch, fwd, bwd);
}

/* Worker w's base is worker 0's times worker 0's iteration over w's (roofline times of every
 * layer), folded into its speed. Each device's time once (the shipped devices are few): a
 * list of N workers of alternating devices timed every layer for each, N x layers (10,000
 * workers and 100,000 layers: 5.6 s before the first event). */
static void scale_speeds(sim_scenario *sc, const sim_layers *l, double s0)
{
    enum {
        SEEN = 64
    };
    const sim_device *seen[SEEN];
    double ratio[SEEN];
    size_t nseen = 0;
    for (uint32_t w = 1; w < sc->workers; w++) {
        if (sc->devices[w] == sc->devices[0])
            continue;
        size_t k = 0;
        while (k < nseen && seen[k] != sc->devices[w])
            k++;
        if (k == nseen) {
            sim_roofline r;
            sim_roofline_init(&r, sc->devices[w], sc->precision);
            sim_roofline_layout(&r, sc->layout == 1);
            double q = s0 / sim_roofline_iteration_s(&r, l, sc->batch);
            if (nseen == SEEN) {
                sc->speeds[w] *= q;
                continue;
            }
            seen[nseen] = sc->devices[w];
            ratio[nseen++] = q;
        }
        sc->speeds[w] *= ratio[k];
    }
}

/* With devices: the base time of worker 0's device and each other worker's speed, from the
 * whole step's efficiency when given, else from the devices' roofline, whose layer times the
 * shares then follow (a measured profile keeps its own). */
static int device_base(sim_scenario *sc, double *ns, sim_err *err)
{
    sim_layers *l = &sc->layers;
    const double *peak0 = sc->devices[0]->peak_flops;
    if (!isnan(sc->efficiency)) {
        /* Forward and backward: three times the forward FLOPs (scenario/device.h). */
        double flops = 3.0 * sim_layers_flops(l) * (double)sc->batch;
        if (!(flops > 0))
            return sim_err_set(err, SIM_ESCENARIO, "$.compute.profile",
                               "profile has no FLOPs to time with compute.efficiency");
        *ns = flops / (peak0[sc->precision] * sc->efficiency) * 1e9;
        /* Worker w's base is worker 0's times peak_0 / peak_w: folded into its speed. */
        for (uint32_t w = 1; w < sc->workers; w++)
            sc->speeds[w] *= sc->devices[w]->peak_flops[sc->precision] / peak0[sc->precision];
        return 0;
    }
    timing t = { .l = l, .batch = sc->batch };
    sim_roofline_init(&t.r, sc->devices[0], sc->precision);
    sim_roofline_layout(&t.r, sc->layout == 1);
    double s0 = sim_roofline_iteration_s(&t.r, l, sc->batch);
    if (!(s0 > 0))
        return sim_err_set(err, SIM_ESCENARIO, "$.compute.profile",
                           "profile has no FLOPs or bytes to time with compute.device");
    scale_speeds(sc, l, s0);
    if (!l->measured)
        sim_layers_finish_timed(l, roofline_time, &t);
    *ns = s0 * 1e9;
    return 0;
}

/* Records a base iteration time resolved from another key (a profile's measured times,
 * gflops) as compute.iteration_ms when it was not given, so that run.json holds the time the
 * run used: `ms`, the time it was rounded from, when the reader's own conversion,
 * llround(ms * 1e6), gives sc->iteration_ns again (measured times then load again to the
 * same base), else sc->iteration_ns in ms (one gflops sets again). */
static int record_base(sim_scenario *sc, double ms, sim_err *err)
{
    if (sc->iteration_given)
        return 0;
    if (!(llround(ms * 1e6) == sc->iteration_ns))
        ms = (double)sc->iteration_ns / 1e6;
    return sim_scenario_write(sc->root, err, "compute.iteration_ms=%.17g", ms);
}

/* Records the message size resolved from a profile's or a model's parameters in place of the
 * null of workload.message_bytes. */
static int record_bytes(sim_scenario *sc, uint64_t params, sim_err *err)
{
    sc->message_bytes = 4 * params;
    return sim_scenario_write(sc->root, err, "workload.message_bytes=%" PRIu64, sc->message_bytes);
}

bool sim_scenario_module_profile(const sim_scenario *sc)
{
    return strcmp(sc->profile, "module") == 0;
}

int sim_scenario_resolve_module(sim_scenario *sc, sim_err *err)
{
    if (!sim_scenario_module_profile(sc) || sc->module_resolved)
        return 0;
    sc->module_resolved = true;
    return resolve(sc, err);
}

int sim_scenario_resolve_profile(sim_scenario *sc, sim_err *err)
{
    if (sc->profile[0] == '\0' || sim_scenario_module_profile(sc))
        return 0;
    return resolve(sc, err);
}

static int resolve(sim_scenario *sc, sim_err *err)
{
    const sim_layers *l = &sc->layers;
    if (sc->message_bytes == 0) {
        uint64_t params = sim_layers_params(l);
        if (params == 0 || params > SIM_MAX_MESSAGE_BYTES / 4)
            return sim_err_set(err, SIM_ESCENARIO, "$.compute.profile",
                               "profile has %" PRIu64
                               " parameters: give workload.message_bytes (1 to 2^44)",
                               params);
        int rc = record_bytes(sc, params, err);
        if (rc != 0)
            return rc;
    }
    double ns = NAN, ms = NAN;
    if (sc->devices != NULL) {
        int rc = device_base(sc, &ns, err);
        if (rc != 0)
            return rc;
    } else if (sc->gflops > 0) {
        /* Forward and backward: three times the forward FLOPs (scenario/device.h). */
        double flops = 3.0 * sim_layers_flops(l) * (double)sc->batch;
        if (!(flops > 0))
            return sim_err_set(err, SIM_ESCENARIO, "$.compute.profile",
                               "profile has no FLOPs to time with compute.gflops");
        ns = flops / sc->gflops;
    } else if (l->measured && !sc->iteration_given) {
        ms = sim_layers_measured_ms(l);
        ns = ms * 1e6;
    }
    if (isnan(ns))
        return 0;
    const char *key = sc->devices == NULL      ? "$.compute.profile"
                      : !isnan(sc->efficiency) ? "$.compute.efficiency"
                                               : "$.compute.device";
    if (!(ns < 1e18))
        return sim_err_set(err, SIM_ESCENARIO, key,
                           "an iteration would last %.3g s, beyond the simulated clock", ns * 1e-9);
    /* As iteration_ms and speeds must: a base under 1 ns (measured times of 0 ms, FLOPs over a
     * huge gflops) was taken as 1 ns, so that gflops 1e300 and 1e200 ran the same. */
    if (!(ns >= 1.0))
        return sim_err_set(err, SIM_ESCENARIO, key,
                           "an iteration would last %.3g ns, less than the clock's resolution of "
                           "1 ns",
                           ns);
    sc->iteration_ns = (sim_time)llround(ns);
    /* A device's base is not recorded: compute.iteration_ms is refused beside it. */
    return sc->devices != NULL ? 0 : record_base(sc, isnan(ms) ? ns / 1e6 : ms, err);
}

int sim_scenario_resolve_model(sim_scenario *sc, uint64_t params, double flops_ns, sim_err *err)
{
    int rc = 0;
    if (!isnan(flops_ns)) {
        sc->iteration_ns = flops_ns < 1.0 ? 1 : (sim_time)llround(flops_ns);
        rc = record_base(sc, flops_ns / 1e6, err);
    }
    if (rc == 0 && sc->message_bytes == 0 && params > 0)
        rc = record_bytes(sc, params, err);
    return rc != 0 ? sim_err_file(err, sc->file) : 0;
}
