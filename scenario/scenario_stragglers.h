/* Straggler rules of a scenario ($.stragglers) and the trace files they name: the part of
 * the loader that scenario/scenario_load.c calls once the workers and the random streams are known.
 */
#ifndef SCENARIO_SCENARIO_STRAGGLERS_H
#define SCENARIO_SCENARIO_STRAGGLERS_H

#include "scenario/scenario.h"
#include "sim/cfg.h"
#include "sim/err.h"

/* Reads $.stragglers into sc->stragglers. Needs sc->workers and sc->stream_seeds; trace
 * files are read relative to the directory of the root's file (sim_cfg_file). */
int sim_scenario_read_stragglers(sim_scenario *sc, sim_cfg *root, sim_err *err);

#endif
