/* The network's internals: its types and inline helpers, shared by net/net_model.c (messages,
 * flows on links, the public API of net/net.h), net/net_solver.c (rates: max-min fairness,
 * once per instant; net/net_solver.h), net/net_group.c (shared-bottleneck groups;
 * net/net_group.h), net/net_solo.c (messages alone on their links, one event each;
 * net/net_solo.h) and net/net_bundle.c (identical messages sent together, which share their
 * events; net/net_bundle.h), net/net_query.c (queries and settings that touch no flow) and
 * net/net_pool.c (creation, destruction, the message pool; net/net_pool.h). Not a public
 * header: only those files include it. net_model.c calls the solver, the groups,
 * the solos, the bundles and the queries, the solver calls the groups, and none calls back
 * up.
 *
 * Links are numbered by net/net_topo.h. A message lives in one slot of a pool from send to
 * delivery or drop; in its bandwidth phase the slot is a flow threaded on the links of its
 * path through intrusive doubly linked lists of "hops" (hop id = slot * MAX_HOPS + position
 * on the path), so joining and leaving a link are O(1) and allocate nothing. A bundle
 * (net/net_bundle.h) is one such flow standing for `nb` identical messages: its slot, the
 * carrier, counts nb times on its links (net_link.nflows counts messages, not slots), and the
 * other messages keep slots of their own (SLOT_MEMBER), off the links and without events. */
#ifndef NET_NET_STATE_H
#define NET_NET_STATE_H

#include <math.h>
#include <stdbool.h>
#include <stdint.h>

#include "net/net.h"
#include "net/net_topo.h"
#include "sim/engine.h"
#include "sim/engine_net.h"
#include "sim/err.h"
#include "sim/heap.h"

enum {
    MAX_HOPS = NET_MAX_HOPS,
    NO_HOP = -1,
    NO_SLOT = -1,
    INITIAL_SLOTS = 64
};

enum slot_state {
    SLOT_FREE = 0,
    SLOT_LATENCY = 1, /* waiting for its SIM_EV_NET_START */
    SLOT_FLOW = 2,    /* transferring; SIM_EV_NET_DONE pending while its rate is > 0 */
    SLOT_SOLO = 3,    /* alone on its links from send to end, claimed (net/net_solo.c): no
                         START, its SIM_EV_NET_DONE scheduled when sent; not on the hop lists */
    SLOT_MEMBER = 4   /* carried by another slot's bundle (net/net_bundle.c): no event of its
                         own, not on the hop lists */
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
    /* The lists of the messages of its source (end 0) and its destination (end 1, unless the
     * source), while not free: ids slot * 2 + end, NO_HOP at the ends (net/net_pool.h). */
    int32_t host_next[2], host_prev[2];
    /* Shared-bottleneck group (net/net_group.c), valid while group >= 0. */
    int32_t group;        /* center link of the flow's group, or -1 */
    uint32_t gpos;        /* position in the center's heap of members */
    double finish_bytes;  /* finishing point on the center's virtual clock, bytes */
    uint64_t join_seq;    /* flows started before this one: the hop-list order */
    uint64_t stamp_flush; /* flush that first rated this flow (net->flushes + 1 at start) */
    /* Solo (net/net_solo.c) or demoted solo: until it starts, last_ns is its start time. */
    uint64_t solo_seq;   /* engine sequence of the DONE scheduled when it was sent, or
                            UINT64_MAX: no solo */
    uint64_t start_mark; /* the engine's next sequence when it was counted as started: that
                            of a DONE its START would have scheduled */
    bool solo_wait;      /* its start is to come: it has a live entry in the wait queue */
    /* Bundle (net/net_bundle.c). */
    uint32_t nb;     /* messages this slot's flow stands for: 1, or a carrier's with its members */
    int32_t bnext;   /* carrier: its member to deliver first (the last sent), member: the next
                        one; NO_SLOT at the end (the carrier's own message is delivered last) */
    int32_t carrier; /* a member's carrier */
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
    int32_t solo;        /* the solo message claiming this link (net/net_solo.c), or NO_SLOT */
    /* Progressive-filling scratch, valid during one recompute. */
    double rem_bps;    /* capacity not yet given to frozen flows */
    double share_bps;  /* rem_bps / unfrozen: the heap key */
    uint32_t unfrozen; /* flows on this link not yet frozen */
    int32_t heap_pos;  /* position in net->fill, or -1 */
    /* Shared-bottleneck group centered on this link (net/net_group.c), while grouped. */
    bool grouped;              /* every flow here is a member, rated g_rate_bps */
    sim_heap members;          /* member slots by (finish_bytes, join_seq), positions in gpos */
    double g_rate_bps;         /* the members' rate: cap_bps / members.n as of the anchor */
    double g_vclock_bytes;     /* bytes served per member from the clock's origin to g_anchor_ns */
    sim_time g_anchor_ns;      /* time of the last change of g_rate_bps (or of the forming) */
    uint64_t g_rated_flush;    /* flush of that change: the stamp of every member rated then */
    uint64_t g_resolved_flush; /* last flush that rated the group: later joiners are unrated */
    double g_min_other_bps;    /* lower bound of the capacity of the members' other links */
    uint32_t g_joined;         /* members that joined since the last flush */
    uint32_t g_flows;          /* flows the members stand for (a bundle counts its nb) */
} net_link;

typedef struct net_host {
    sim_time latency_ns;        /* its NIC's (its node's) */
    sim_time fabric_latency_ns; /* its link to its node's fabric (with nodes) */
    sim_time extra_ns;
    double bw_factor;                    /* the last sim_net_set_bandwidth_factor on it (1: none) */
    uint64_t sent_bytes, received_bytes; /* modulo 2^64 (net_count_bytes) */
    uint64_t sent_wraps, received_wraps; /* the 2^64s above them */
    uint32_t inflight;                   /* messages from or to this host, sent and not yet ended */
    int32_t msgs;                        /* the first of those messages' list (net/net_pool.h) */
    bool down;
} net_host;

/* Adds n bytes to the count *lo, counting in *wraps each 2^64 it passes: a host's bytes pass
 * 2^64 - 1 in a run that ends within the scenario's bounds (1.1 million messages of 2^44
 * bytes, in a second of wall time), and wrapped silently. */
static inline void net_count_bytes(uint64_t *lo, uint64_t *wraps, uint64_t n)
{
    *wraps += *lo + n < *lo;
    *lo += n;
}

struct sim_net {
    sim_engine *eng;
    sim_topology topology;
    uint32_t nhosts, nlinks;
    sim_net_config topo; /* the configuration's topology fields (its arrays: NULL, but
                            node_of, which points to the copy below) */
    uint32_t *node_of;   /* (nhosts) the configuration's node_of, copied; NULL without nodes */
    net_host *hosts;     /* (nhosts) */
    net_link *links;     /* (nlinks) */
    uint32_t *comp;      /* (nlinks) links of the component being recomputed, BFS order */
    sim_heap fill;       /* (nlinks) the component's links by (share_bps, index): net_solver.c */
    uint32_t heap_live;  /* links in the heap with flows left to freeze */
    uint32_t *dirty;     /* (nlinks) links changed at this instant, in the order they changed */
    uint32_t ndirty;
    net_slot *slots;  /* (cap) message pool */
    uint32_t *active; /* (cap) slots now in their bandwidth phase, dense */
    uint32_t *hslots; /* (cap) scratch: a host's messages by slot (sim_net_host_slots) */
    size_t cap, nactive;
    int32_t free_head;
    uint64_t epoch;
    uint64_t starts;  /* flows started so far: the next join_seq */
    uint64_t flushes; /* flush_mark of the flush under way */
    uint64_t grows;   /* times the pool doubled after creation */
    int pending_err;  /* error from a void operation, reported by the next send or handle */
    sim_net_stats stats;
    sim_net_drop_fn on_drop; /* told of every dropped message (to release its payload) */
    void *drop_ud;
    uint32_t *gqueue; /* (cap) group scratch: heap positions of a visited prefix */
    sim_heap gkeys;   /* (cap) group scratch: flows to schedule (net_gkey), sorted */
    /* The wait queue of the starts to come without an event (net/net_solo.c), by key. */
    struct net_wait *wait_fifo; /* (cap) ring of the entries pushed in key order */
    uint32_t wait_head, wait_nfifo;
    sim_heap wait_heap;  /* (cap) the other entries (net_wait), by key */
    size_t nsolo_active; /* solos counted as started and still claiming their links */
    bool solo_off;       /* tests: every message takes the START and DONE path */
    /* Bundles (net/net_bundle.c). */
    bool bundles;           /* the configuration's: identical messages sent together share */
    int32_t btail;          /* the message a send may join (a carrier in its latency), or
                               NO_SLOT */
    uint32_t btail_gen;     /* its generation */
    uint64_t bmark;         /* the engine's next sequence after its START (or last member) */
    sim_time bstart_ns;     /* its start */
    size_t nmembers_active; /* members of the bundles on the links: flows beside net->nactive */
    int32_t delivering;     /* the carrier whose DONE is being delivered message by message
                               (sim_net_next), or NO_SLOT */
    uint32_t ngrouped;      /* links now grouped (net_link.grouped): a host going down
                               dissolves them without a scan of every link when none is */
};

/* An entry of the wait queue: the place of a start to come in the engine's order. It is live
 * while its slot waits with that sequence (solo_wait, solo_seq); entries left behind by a
 * message that started early or was dropped are skipped when they come up. */
typedef struct net_wait {
    sim_time t;   /* start time */
    uint64_t seq; /* sequence of the message's DONE when it was sent */
    uint32_t slot;
} net_wait;

/* A group member to (re)schedule, with the order the per-flow solver would have given it. */
typedef struct net_gkey {
    uint64_t stamp;   /* flush that last rated it */
    uint64_t rev_seq; /* UINT64_MAX - join_seq: the hop list holds the latest first */
    uint32_t slot;
} net_gkey;

/* A component just collected into net->comp by the filling (net/net_solver.c). */
typedef struct net_comp {
    uint32_t n;       /* links in net->comp */
    uint32_t busiest; /* the first of them (BFS order) with the most flows if > 1, or UINT32_MAX */
    uint64_t hops;    /* hops of its flows on them: the sum of their nflows */
} net_comp;

/* 8 bits per byte times 1e9 ns per s: bytes * NS_BITS / (bits/s) = ns. */
static const double NS_BITS = 8e9;

/* Bytes flow f has left at `now` at its current rate (never below 0): the one formula by
 * which the solver brings a flow up to date and a group checks its members. */
static inline double net_left_at(const net_slot *f, sim_time now)
{
    double rem = f->remaining_bytes;
    if (f->rate_bps > 0.0 && now > f->last_ns) {
        rem -= f->rate_bps * (double)(now - f->last_ns) / NS_BITS;
        if (rem < 0.0)
            rem = 0.0;
    }
    return rem;
}

/* The end of a transfer of `rem_bytes` from `from` on at `rate_bps` (> 0): from plus the
 * transfer time rounded to the nearest ns once, the one formula by which the solver schedules
 * a flow's end and a solo its own when sent. False if that would lie past the end of time. */
static inline bool net_end_at(double rem_bytes, double rate_bps, sim_time from, sim_time *at)
{
    double delay = rem_bytes * NS_BITS / rate_bps;
    if (!(delay < 0.5 * (double)(SIM_TIME_NEVER - from)))
        return false;
    *at = from + llround(delay);
    return true;
}

/* Flows in their bandwidth phase: those on the hop lists (a bundle's nb), and the solos that
 * have started. */
static inline size_t net_active_flows(const sim_net *net)
{
    return net->nactive + net->nmembers_active + net->nsolo_active;
}

/* Whether h is no host of the network. */
static inline bool net_bad_host(const sim_net *net, uint32_t h)
{
    return h >= net->nhosts;
}

static inline uint32_t hop_slot(int32_t hop)
{
    return (uint32_t)hop / MAX_HOPS;
}

static inline uint32_t hop_pos(int32_t hop)
{
    return (uint32_t)hop % MAX_HOPS;
}

/* The event (START or DONE) of slot s, carrying its generation so that stale ones are seen. */
static inline sim_event sim_net_slot_event(uint32_t kind, uint32_t s, const net_slot *f)
{
    sim_event ev = { .kind = kind, .src = (int32_t)f->msg.src, .dst = (int32_t)f->msg.dst };
    ev.arg[0] = s;
    ev.arg[1] = f->gen;
    return ev;
}

/* Marks link l as changed at this instant; the engine then calls the network's flush hook
 * (sim_net_solve) before its clock moves on. */
static inline void sim_net_mark_dirty(sim_net *net, uint32_t l)
{
    if (net->links[l].dirty)
        return;
    net->links[l].dirty = true;
    net->dirty[net->ndirty++] = l;
    sim_engine_request_flush(net->eng);
}

#endif
