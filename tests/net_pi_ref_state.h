/* Internal header of the frozen per-instant solver (tests/net_pi_ref.h): its state and the
 * calls from tests/net_pi_ref.c (messages, flows, hosts) to tests/net_pi_ref_solver.c (rates,
 * the links' heap, components and the one recomputation of an instant). Included only by
 * those two files; calls run one way, from the model to the solver. */
#ifndef HETSIM_TESTS_NET_PI_REF_STATE_H
#define HETSIM_TESTS_NET_PI_REF_STATE_H

#include <stdbool.h>
#include <stdint.h>

#include "net/net_topo.h"
#include "net_pi_ref.h"
#include "sim/engine_net.h"

enum {
    MAX_HOPS = NET_MAX_HOPS,
    NO_HOP = -1,
    NO_SLOT = -1,
    INITIAL_SLOTS = 64
};

enum slot_state {
    SLOT_FREE = 0,
    SLOT_LATENCY = 1, /* waiting for its SIM_EV_NET_START */
    SLOT_FLOW = 2     /* transferring; SIM_EV_NET_DONE pending while its rate is > 0 */
};

typedef struct net_slot {
    sim_net_msg msg;
    double remaining_bytes; /* bytes left as of last_ns */
    double rate_bps;        /* current max-min rate, bits/s (0 before the first rating) */
    sim_time last_ns;       /* time remaining_bytes refers to */
    sim_event_id ev;        /* pending START or DONE event, 0 if none */
    uint64_t seen_epoch;    /* recompute that last reached this flow */
    uint64_t frozen_epoch;  /* recompute that last gave this flow its rate */
    uint32_t gen;           /* bumped on free: events carrying an older one are stale */
    uint32_t links[MAX_HOPS];
    int32_t hop_next[MAX_HOPS], hop_prev[MAX_HOPS];
    uint32_t active_pos; /* index in net->active while a flow */
    int32_t next_free;
    uint8_t nlinks;
    uint8_t state; /* enum slot_state */
} net_slot;

typedef struct net_link {
    double base_bps;     /* configured capacity, bits/s */
    double cap_bps;      /* current capacity (base times the host's bandwidth factor) */
    int32_t head;        /* first hop on this link, or NO_HOP */
    uint32_t nflows;     /* flows on this link */
    uint64_t seen_epoch; /* recompute that last reached this link */
    uint64_t flush_mark; /* flush that last recomputed this link's component */
    bool dirty;          /* in net->dirty: changed at this instant, not yet recomputed */
    /* Progressive-filling scratch, valid during one recompute. */
    double rem_bps;    /* capacity not yet given to frozen flows */
    double share_bps;  /* rem_bps / unfrozen: the heap key */
    uint32_t unfrozen; /* flows on this link not yet frozen */
    int32_t heap_pos;  /* index in net->heap, or -1 */
} net_link;

typedef struct net_host {
    sim_time latency_ns;
    sim_time extra_ns;
    uint64_t sent_bytes, received_bytes;
    uint32_t inflight; /* messages from or to this host, sent and not yet ended */
    bool down;
} net_host;

struct pi_net {
    sim_engine *eng;
    sim_topology topology;
    uint32_t nhosts, nlinks;
    sim_net_config topo; /* the configuration's topology fields (its arrays: NULL) */
    net_host *hosts;     /* (nhosts) */
    net_link *links;     /* (nlinks) */
    uint32_t *comp;      /* (nlinks) links of the component being recomputed, BFS order */
    uint32_t *heap;      /* (nlinks) min-heap of component links by (share, index) */
    uint32_t heap_n;
    uint32_t heap_live; /* links in the heap with flows left to freeze */
    uint32_t *dirty;    /* (nlinks) links changed at this instant, in the order they changed */
    uint32_t ndirty;
    net_slot *slots;  /* (cap) message pool */
    uint32_t *active; /* (cap) slots now in their bandwidth phase, dense */
    size_t cap, nactive;
    int32_t free_head;
    uint64_t epoch;
    uint64_t flushes; /* flush_mark of the flush under way */
    uint64_t grows;   /* times the pool doubled after creation */
    int pending_err;  /* error from a void operation, reported by the next send or handle */
    sim_net_stats stats;
    sim_net_drop_fn on_drop; /* told of every dropped message (to release its payload) */
    void *drop_ud;
};

static inline uint32_t hop_slot(int32_t hop)
{
    return (uint32_t)hop / MAX_HOPS;
}

static inline uint32_t hop_pos(int32_t hop)
{
    return (uint32_t)hop % MAX_HOPS;
}

/* The event (START or DONE) of slot s, carrying its generation so that stale ones are seen. */
sim_event pi_net_slot_event(uint32_t kind, uint32_t s, const net_slot *f);

/* Marks link l as changed at this instant; the engine then calls the network's flush hook
 * (pi_net_solve) before its clock moves on. */
void pi_net_mark_dirty(pi_net *net, uint32_t l);

/* The one recomputation of an instant, over the components of the links marked since the
 * last one. Returns 0 or the error of a flow that cannot be scheduled. */
int pi_net_solve(pi_net *net, sim_err *err);

/* Rates flow s, which just joined its links, if it is alone on every one of them (*rc: the
 * result); returns false, doing nothing, if it shares a link. */
bool pi_net_rate_alone(pi_net *net, uint32_t s, int *rc, sim_err *err);

#endif
