#include <string.h>

#include "protocols/proto.h"

/* Fixed order: `hetsim list protocols` and error messages list them so. */
static const proto_ops *const protocols[] = {
    &proto_allreduce, &proto_localsgd, &proto_dpsgd, &proto_ps, &proto_adpsgd,
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
