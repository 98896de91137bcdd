/* The registry (see protocols/registry.h): adding a protocol adds one line here. */
#include "protocols/registry.h"

#include <stdio.h>
#include <string.h>

/* Each protocol file exports only its ops table. */
extern const proto_ops proto_allreduce;
extern const proto_ops proto_localsgd;
extern const proto_ops proto_dpsgd;
extern const proto_ops proto_ps;
extern const proto_ops proto_adpsgd;
extern const proto_ops proto_gossip;
extern const proto_ops proto_syncswitch;
extern const proto_ops proto_hop;
extern const proto_ops proto_hpsgd;
extern const proto_ops proto_ripples;
extern const proto_ops proto_moshpit;
extern const proto_ops proto_sgp;
extern const proto_ops proto_easgd;
extern const proto_ops proto_diloco;

/* Fixed order: `hetsim list protocols` and error messages list them so. One a line. */
static const proto_ops *const protocols[] = {
    &proto_allreduce,  /* ring all-reduce SGD */
    &proto_localsgd,   /* local steps, then a model all-reduce */
    &proto_dpsgd,      /* synchronous gossip on a graph */
    &proto_ps,         /* parameter server: BSP, ASP, SSP */
    &proto_adpsgd,     /* asynchronous pairwise gossip */
    &proto_gossip,     /* synchronous ring gossip over live neighbours */
    &proto_syncswitch, /* parameter server, BSP then ASP */
    &proto_hop,        /* queue-based decentralized training */
    &proto_hpsgd,      /* all-reduce overlapped with local steps, merged via a replica */
    &proto_ripples,    /* partial all-reduce among generated groups */
    &proto_moshpit,    /* averaging in groups that change every round */
    &proto_sgp,        /* stochastic gradient push */
    &proto_easgd,      /* elastic averaging SGD around a centre on a server */
    &proto_diloco,     /* local steps, then an outer Nesterov step on the mean outer gradient */
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

const proto_ops *proto_lookup(const char *name, const char *file, sim_err *err)
{
    const proto_ops *ops = proto_find(name);
    if (ops != NULL)
        return ops;
    char names[512] = "";
    for (size_t i = 0; i < sizeof(protocols) / sizeof(protocols[0]); i++) {
        size_t used = strlen(names);
        snprintf(names + used, sizeof(names) - used, "%s%s", i > 0 ? ", " : "", protocols[i]->name);
    }
    sim_err_set(err, SIM_ESCENARIO, "$.protocol.name", "unknown protocol \"%s\" (valid: %s)", name,
                names);
    sim_err_file(err, file);
    return NULL;
}
