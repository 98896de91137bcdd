/* Readers of scenario values (see scenario/scenario_read.h). */
#include "scenario/scenario_read.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int sim_scenario_read_num(sim_cfg *c, const char *key, double lo, bool open, double max,
                          double *value, sim_err *err)
{
    char path[512], a[40], b[40];
    int rc = sim_cfg_double(c, key, open ? nextafter(lo, INFINITY) : lo, INFINITY, value, err);
    if (rc != 0 || isnan(*value) || *value <= max)
        return rc;
    snprintf(path, sizeof(path), "%s.%s", sim_cfg_path(c), key);
    sim_cfg_num_text(a, sizeof(a), max);
    sim_cfg_num_text(b, sizeof(b), *value); /* exact: %.15g showed 1e9 + 1e-7 as 1e9 */
    return sim_err_set(err, SIM_ESCENARIO, path, "must be at most %s, got %s", a, b);
}

int sim_scenario_read_time(sim_cfg *c, const char *key, double lo, bool open, double unit_ns,
                           double *value, sim_time *ns, sim_err *err)
{
    char path[512], a[40], b[40];
    int rc = sim_scenario_read_num(c, key, lo, open, SIM_SCENARIO_MAX_NS / unit_ns, value, err);
    if (rc != 0 || isnan(*value))
        return rc;
    sim_time t = (sim_time)llround(*value * unit_ns); /* in range: at most 1e18 */
    if (open && t <= (sim_time)llround(lo * unit_ns)) {
        snprintf(path, sizeof(path), "%s.%s", sim_cfg_path(c), key);
        sim_cfg_num_text(a, sizeof(a), lo);
        sim_cfg_num_text(b, sizeof(b), *value);
        return sim_err_set(err, SIM_ESCENARIO, path,
                           "must be at least 1 ns greater than %s, got %s", a, b);
    }
    *ns = t;
    return 0;
}

int sim_scenario_check_hop_latency(sim_cfg *c, const char *key, double us, sim_time ns,
                                   sim_err *err)
{
    char path[512], a[40], b[40];
    if (ns <= SIM_NET_MAX_HOP_LATENCY_NS)
        return 0;
    snprintf(path, sizeof(path), "%s.%s", sim_cfg_path(c), key);
    sim_cfg_num_text(a, sizeof(a), floor((double)SIM_NET_MAX_HOP_LATENCY_NS / 1e3));
    sim_cfg_num_text(b, sizeof(b), us);
    return sim_err_set(err, SIM_ESCENARIO, path,
                       "must be at most %s as a switch's or a host fabric's latency (the "
                       "network sums up to 16 of them along a path; uplink_latency_us defaults "
                       "to latency_us), got %s",
                       a, b);
}

int sim_scenario_write(sim_cfg *root, sim_err *err, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    char *text = n >= 0 ? malloc((size_t)n + 1) : NULL;
    if (text == NULL)
        return sim_err_set(err, SIM_ENOMEM, NULL, "out of memory");
    va_start(ap, fmt);
    vsnprintf(text, (size_t)n + 1, fmt, ap);
    va_end(ap);
    int rc = sim_cfg_override(root, text, err);
    free(text);
    return rc;
}

int sim_scenario_add_input(sim_scenario *sc, const char *file, sim_err *err)
{
    char **more = realloc(sc->inputs, (sc->ninputs + 1) * sizeof(*more));
    char *copy = more != NULL ? strdup(file) : NULL;
    if (more != NULL)
        sc->inputs = more;
    if (copy == NULL)
        return sim_err_set(err, SIM_ENOMEM, NULL, "out of memory");
    sc->inputs[sc->ninputs++] = copy;
    return SIM_OK;
}

int sim_scenario_note_input(sim_scenario *sc, const char *file, sim_err *err)
{
    for (size_t i = 0; i < sc->ninputs; i++)
        if (strcmp(sc->inputs[i], file) == 0)
            return SIM_OK;
    return sim_scenario_add_input(sc, file, err);
}
