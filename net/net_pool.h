/* The network's message pool (net/net_pool.c, which also creates and destroys the network): a
 * slot is taken at a send and freed at the message's end or drop. For the network's own files:
 * net/net_model.c takes and frees slots. Not a public header. */
#ifndef NET_NET_POOL_H
#define NET_NET_POOL_H

#include <stdint.h>

#include "net/net_state.h"
#include "sim/engine.h"
#include "sim/err.h"

/* Doubles the slot pool (the only allocation after creation). */
int sim_net_pool_grow(sim_net *net, sim_err *err);

/* The network's flush hook (net/net_model.c), which sim_net_create gives the engine. */
int sim_net_flush_hook(void *ud, sim_engine *eng, sim_err *err);

/* Takes a free slot into *out, growing the pool if none is left. */
static inline int net_alloc_slot(sim_net *net, uint32_t *out, sim_err *err)
{
    if (net->free_head == NO_SLOT) {
        int rc = sim_net_pool_grow(net, err);
        if (rc != SIM_OK)
            return rc;
    }
    *out = (uint32_t)net->free_head;
    net->free_head = net->slots[*out].next_free;
    return SIM_OK;
}

/* Frees slot s: events still carrying its generation are stale from now on. */
static inline void net_free_slot(sim_net *net, uint32_t s)
{
    net_slot *f = &net->slots[s];
    f->state = SLOT_FREE;
    f->gen++;
    f->ev = 0;
    f->next_free = net->free_head;
    net->free_head = (int32_t)s;
}

#endif
