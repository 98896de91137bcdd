/* Readers of scenario values shared by the loader's files, scenario/scenario_load.c (sections,
 * loading, hashing) and scenario/scenario_stragglers.c (straggler rules and trace files): numbers
 * with a range, times converted once to nanoseconds, and resolved values written back into
 * the tree. Not part of the API: only the loader's files include this header.
 */
#ifndef SCENARIO_SCENARIO_READ_H
#define SCENARIO_SCENARIO_READ_H

#include <stdbool.h>
#include <stddef.h>

#include "scenario/scenario.h"
#include "sim/cfg.h"
#include "sim/engine.h"
#include "sim/err.h"

/* Times are at most 1e18 ns (about 31.7 years), so that sums of a few stay in int64_t. */
#define SIM_SCENARIO_MAX_NS 1e18

/* Reads number `key` of `c`: >= lo (> lo when `open`) and at most `max` (a separate check, so
 * that the usual message stays "must be a number > 0"). *value holds the default (NaN: none,
 * nothing written) and receives the value. */
int sim_scenario_read_num(sim_cfg *c, const char *key, double lo, bool open, double max,
                          double *value, sim_err *err);

/* Reads a time `key` in units of `unit_ns` nanoseconds (1e9 for _s, 1e6 for _ms, 1e3 for
 * _us) like sim_scenario_read_num, and converts it once with llround into *ns (untouched
 * when the key is absent without default). When `open`, the result must exceed lo by at
 * least 1 ns. */
int sim_scenario_read_time(sim_cfg *c, const char *key, double lo, bool open, double unit_ns,
                           double *value, sim_time *ns, sim_err *err);

/* A latency the network sums along a path (a switch-to-switch link's, a host fabric's): 0, or
 * SIM_ESCENARIO naming `key` of `c` when `ns` is past SIM_NET_MAX_HOP_LATENCY_NS (the
 * scenario's 1e18 ns let such a latency reach the network, which failed the run with exit 1,
 * naming no key). `us` is the value as given, in microseconds. */
int sim_scenario_check_hop_latency(sim_cfg *c, const char *key, double us, sim_time ns,
                                   sim_err *err);

/* Writes "PATH=VALUE" (printf-style) into the scenario's tree through sim_cfg_override: how
 * the loader records resolved values (created sections, drawn workers, nulls). */
__attribute__((format(printf, 3, 4))) int sim_scenario_write(sim_cfg *root, sim_err *err,
                                                             const char *fmt, ...);

/* network.fabric (scenario/scenario_hosts.c): when given, the NIC fabric's bandwidth and latency
 * become the defaults *gbps and *latency_us of bandwidth_gbps and latency_us. */
int sim_scenario_read_fabric(sim_cfg *c, double *gbps, double *latency_us, sim_err *err);

/* network.gpus_per_host (scenario/scenario_hosts.c) into sc->gpus_per_host, and *ports, what the
 * topology places: hosts, workers / G + servers. */
int sim_scenario_read_gpus(sim_scenario *sc, sim_cfg *c, uint32_t *ports, sim_err *err);

/* Once the NICs are read (overrides applied): nics_per_host, and with several GPUs a host the
 * host fabric's keys and the nodes of sc->net (scenario/scenario_hosts.c); the network's
 * optional keys marked valid, for the message of a misspelt one. */
int sim_scenario_read_hosts(sim_scenario *sc, sim_cfg *c, sim_err *err);

/* compute.profile, device, precision and efficiency (scenario/scenario_compute.c): reads them
 * into sc (profile, layers, devices, efficiency). iteration_ms and gflops are read first
 * (and iteration_given set). */
int sim_scenario_read_accel(sim_scenario *sc, sim_cfg *c, sim_err *err);

/* Once the workload is read: the base iteration time and message size a profile gives
 * (device, gflops or measured times), and the speeds of a device list. */
int sim_scenario_resolve_profile(sim_scenario *sc, sim_err *err);

/* Adds `file`, which loading has read, to sc->inputs. SIM_ENOMEM. */
int sim_scenario_add_input(sim_scenario *sc, const char *file, sim_err *err);

#endif
