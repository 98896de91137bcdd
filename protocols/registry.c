/* The registry (see protocols/registry.h): adding a protocol adds one line here. */
#include "protocols/registry.h"

#include <stdio.h>
#include <string.h>

extern const proto_ops proto_allreduce, proto_localsgd, proto_dpsgd, proto_ps, proto_adpsgd,
    proto_gossip;
extern const proto_ops proto_moshpit, proto_sgp;

/* Fixed order: `hetsim list protocols` and error messages list them so. */
static const proto_ops *const protocols[] = {
    &proto_allreduce, &proto_localsgd, &proto_dpsgd, &proto_ps, &proto_adpsgd, &proto_gossip,
    &proto_moshpit, // averaging in changing groups
    &proto_sgp,     // push-sum
};

const proto_ops *proto_find(const char *name)
{
    for (size_t i = 0; i < sizeof(protocols) / sizeof(protocols[0]); i++)
        if (strcmp(protocols[i]->name, name) == 0)
            return protocols[i];
    return NULL;
}

const proto_ops *const *proto_list(size_t *n)
{
    *n = sizeof(protocols) / sizeof(protocols[0]);
    return protocols;
}

const proto_ops *proto_lookup(const sim_scenario *sc, sim_err *err)
{
    const proto_ops *ops = proto_find(sc->protocol);
    if (ops != NULL)
        return ops;
    char names[512] = "";
    for (size_t i = 0; i < sizeof(protocols) / sizeof(protocols[0]); i++) {
        size_t used = strlen(names);
        snprintf(names + used, sizeof(names) - used, "%s%s", i > 0 ? ", " : "", protocols[i]->name);
    }
    sim_err_set(err, SIM_ESCENARIO, "$.protocol.name", "unknown protocol \"%s\" (valid: %s)",
                sc->protocol, names);
    sim_err_file(err, sc->file);
    return NULL;
}
