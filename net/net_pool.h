/* The network's message pool (net/net_pool.c, which also creates and destroys the network): a
 * slot is taken at a send and freed at the message's end or drop. For the network's own files:
 * net/net_model.c takes and frees slots. Not a public header. */
#ifndef NET_NET_POOL_H
#define NET_NET_POOL_H

#include <stddef.h>
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

/* The list of host h's messages, at its head: slot s's end e (0: its source, 1: its
 * destination). */
static inline void net_host_push(sim_net *net, uint32_t h, uint32_t s, uint32_t e)
{
    int32_t id = (int32_t)(s * 2 + e), head = net->hosts[h].msgs;
    net->slots[s].host_prev[e] = NO_HOP;
    net->slots[s].host_next[e] = head;
    if (head != NO_HOP)
        net->slots[(uint32_t)head / 2].host_prev[(uint32_t)head % 2] = id;
    net->hosts[h].msgs = id;
}

static inline void net_host_unlink(sim_net *net, uint32_t h, uint32_t s, uint32_t e)
{
    int32_t prev = net->slots[s].host_prev[e], next = net->slots[s].host_next[e];
    if (prev != NO_HOP)
        net->slots[(uint32_t)prev / 2].host_next[(uint32_t)prev % 2] = next;
    else
        net->hosts[h].msgs = next;
    if (next != NO_HOP)
        net->slots[(uint32_t)next / 2].host_prev[(uint32_t)next % 2] = prev;
}

/* Slot s, its message just filled in, joins the lists of its source and its destination (one
 * list if they are the same host): a failure finds a host's messages without a scan of the
 * pool. */
static inline void net_hosts_link(sim_net *net, uint32_t s)
{
    const sim_net_msg *m = &net->slots[s].msg;
    net_host_push(net, m->src, s, 0);
    if (m->dst != m->src)
        net_host_push(net, m->dst, s, 1);
}

/* Host h's messages, their slots in increasing order (the order of a scan of the pool), into
 * net->hslots; returns their number. */
size_t sim_net_host_slots(sim_net *net, uint32_t h);

/* Frees slot s: events still carrying its generation are stale from now on. */
static inline void net_free_slot(sim_net *net, uint32_t s)
{
    net_slot *f = &net->slots[s];
    net_host_unlink(net, f->msg.src, s, 0);
    if (f->msg.dst != f->msg.src)
        net_host_unlink(net, f->msg.dst, s, 1);
    f->state = SLOT_FREE;
    f->gen++;
    f->ev = 0;
    f->next_free = net->free_head;
    net->free_head = (int32_t)s;
}

#endif
