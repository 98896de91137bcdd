/* Protocols: the ops table every synchronization protocol implements, and the registry.
 *
 * A protocol is a `const proto_ops` in its own file (ROSS style: a table of handlers plus
 * the size of the per-run state the runner allocates, zeroed). configure reads the
 * protocol's parameters from the scenario's `protocol` section through sim_cfg (which
 * records defaults and lets the runner reject unknown keys afterwards) and may allocate
 * per-run arrays, which fini frees; start schedules the first events; on_event handles
 * every event of the run addressed to the protocol (see sim/ctx.h). Handlers take `void
 * *state` and cast it on their first line. Only report and fini may be NULL.
 */
#ifndef RUNTIME_PROTO_H
#define RUNTIME_PROTO_H

#include <stddef.h>

#include "runtime/ctx.h"
#include "sim/cfg.h"
#include "sim/err.h"
#include "sim/output.h"
#include "sim/scenario.h"

typedef struct proto_ops {
    const char *name;    /* matches "protocol": {"name": ...} in scenarios */
    const char *summary; /* one line for `hetsim list protocols` */
    size_t state_size;   /* zeroed bytes the runner allocates per run */
    int (*configure)(void *state, sim_cfg *cfg, const sim_scenario *sc, sim_err *err);
    int (*start)(void *state, sim_ctx *ctx, sim_err *err);
    int (*on_event)(void *state, sim_ctx *ctx, const sim_event *ev, sim_err *err);
    void (*report)(const void *state, sim_report *out); /* optional: extra summary values */
    void (*fini)(void *state);                          /* optional: frees configure's work */
} proto_ops;

#endif
