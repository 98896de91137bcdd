/* Internal header of the graph module (kit/graph.h), split in graph.c (specs, building,
 * queries, grids, schedules) and graph_regular.c (random regular graphs); only those files
 * include it. */
#ifndef KIT_GRAPH_STATE_H
#define KIT_GRAPH_STATE_H

#include <stdint.h>

#include <gsl/gsl_rng.h>

#include "kit/graph.h"
#include "sim/err.h"

/* Draws a random d-regular graph on g->n workers into g->adj (rows of d, each sorted) and
 * g->off (zeroed by graph_build), from r; connected when d >= 2. SIM_ENUMERIC when no draw
 * succeeds, SIM_ENOMEM. Its scratch (stubs, counts, a queue: 4 (n d + 2 n) bytes) is malloc'd
 * and freed before it returns. */
int graph_draw_regular(graph *g, uint32_t d, gsl_rng *r, sim_err *err);

#endif
