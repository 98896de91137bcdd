/* The registry: every protocol's ops table, by name, in a fixed order. It sits above the
 * protocols and below the command line; the runtime never looks a protocol up itself, its
 * caller hands it the table.
 */
#ifndef PROTOCOLS_REGISTRY_H
#define PROTOCOLS_REGISTRY_H

#include <stddef.h>

#include "runtime/proto.h"
#include "sim/err.h"

/* The protocol named `name`, or NULL. */
const proto_ops *proto_find(const char *name);

/* The registered protocols in a fixed order; *n receives their count. */
const proto_ops *const *proto_list(size_t *n);

/* The protocol named `name`, the $.protocol.name of the scenario `file`, or NULL with a
 * SIM_ESCENARIO error naming that file, that path and every valid name. */
const proto_ops *proto_lookup(const char *name, const char *file, sim_err *err);

#endif
