/* Ripples' internals, shared by protocols/ripples.c (failures, the run), protocols/ripples_gg.c
 * (the Group Generator), protocols/ripples_reduce.c (P-Reduce: a worker's advance, a group's
 * ring), protocols/ripples_groups.c (the group table and the static schedule) and
 * protocols/ripples_config.c (configuration). Not a public header: only those five files
 * include it. Calls run one way, in that order (ripples.c calls them all, the Group Generator
 * calls P-Reduce and the table, P-Reduce the table); none calls a file before it. The
 * protocol itself is described at the top of protocols/ripples.c. */
#ifndef PROTOCOLS_RIPPLES_STATE_H
#define PROTOCOLS_RIPPLES_STATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kit/coll.h"
#include "runtime/proto.h"
#include "sim/engine.h"

enum {
    MODE_RANDOM = 0,
    MODE_BUFFER = 1,
    MODE_DIVISION = 2,
    MODE_STATIC = 3,
    MODE_AUTO = 4 /* configuration only: resolved to MODE_STATIC or MODE_DIVISION */
};

enum {
    STATIC_GRID = 0,
    STATIC_RACKS = 1
};
enum {
    MAX_GRID = 8 /* grid axes */
};

#define RP_NONE UINT32_MAX /* no group, ring, owner or worker */
#define RP_END  UINT64_MAX /* the end of a worker's list of arrived groups */

typedef struct rp_group {
    uint64_t seq;       /* global sequence number */
    uint32_t n;         /* members */
    uint32_t owner;     /* the requester, or RP_NONE when every member owns it */
    uint32_t ready;     /* members ready for it */
    uint32_t passed;    /* members done with it (finished, skipped, down or left out) */
    uint32_t ring;      /* the pool ring running it, or RP_NONE */
    sim_time formed_ns; /* when it was formed */
    bool used, failed;
} rp_group;

/* A worker's state (proto_ops.worker_size): rp_w for the handler acting for it, for the GG's
 * own ledger of it (the local indices and groups it issued) and for figures; rp_peer, counted,
 * where the GG or another worker reads it on purpose to decide (see protocols/ripples.c). */
typedef struct rp_worker {
    uint64_t need;     /* groups to have passed before computing again (one per local step) */
    uint64_t done;     /* groups passed: finished, or skipped (failed or left out) */
    uint64_t next;     /* local index of its next group */
    uint64_t assigned; /* local indices given out so far */
    uint64_t requests; /* requests sent */
    uint32_t pending;  /* GG: groups issued to it and not yet passed (its group buffer) */
    uint32_t known;    /* groups whose notice arrived, not yet passed */
    uint32_t head;     /* the group it is ready for or running, or RP_NONE */
    sim_time ready_ns; /* when it became ready for head */
    sim_time sync_ns;  /* when its last computation ended */
    bool computing;
    bool asked;     /* a request sent, and no notice arrived since */
    uint64_t plist; /* not static: its groups whose notice arrived and that it has not passed,
                       a list through st->plink of entries s * cap + i (member i of group s),
                       RP_END when empty (rp_pending_*) */
} rp_worker;

typedef struct ripples ripples;

struct ripples {
    /* configuration */
    uint32_t n;     /* workers */
    uint32_t gs;    /* group_size */
    uint32_t depth; /* buffer_depth */
    int mode;       /* MODE_* */
    int stat;       /* STATIC_* */
    bool arrival;   /* test-only arrival order */
    bool skip_busy; /* division, batch "all": leave out members with a group pending */
    bool free_only; /* division: a batch partitions the free workers and is issued whole */
    uint32_t ndims; /* grid axes */
    uint32_t grid[MAX_GRID];
    /* groups */
    uint32_t cap;     /* most members of a group */
    uint32_t slots;   /* group table size */
    rp_group *grp;    /* (slots) */
    uint32_t *gmem;   /* (slots, cap) members in ring order */
    uint64_t *glocal; /* (slots, cap) each member's local index */
    uint8_t *gpassed; /* (slots, cap) */
    uint32_t *freeg;  /* (slots) free slots */
    uint32_t nfreeg;
    uint64_t *plink;         /* (slots, cap; not static) the entry after each in its worker's list
                                (rp_worker.plist), RP_END at the end: linear in the table, where a row
                                of slots per worker was quadratic in the workers */
    uint64_t *mnext, *mprev; /* (slots, cap) each worker's groups it has not passed, a doubly
                                linked list of entries s * cap + i, stored + 1 (0: none) */
    uint64_t *mhead;         /* (n) its first such entry + 1, 0: none (a failure visits those
                                groups alone, not the whole table: issue 38) */
    uint32_t *scratch;       /* (n) */
    uint32_t *list;          /* (n) */
    uint32_t *freed;         /* (n) workers freed by a failure */
    uint32_t gg;             /* the GG's host */
    uint64_t seq;            /* groups formed */
    /* rings */
    coll_hub *hub;
    coll_ring **rings; /* (nrings) channels 1..nrings */
    coll_mean **means; /* (nrings) with a real model */
    uint32_t nrings;
    uint32_t *ring_group; /* (nrings) */
    uint32_t *freer;      /* (nrings) */
    uint32_t nfreer;
    size_t nparams;
    uint64_t bytes;
    /* division */
    uint32_t *batch;  /* (n) workers of the batch, group by group */
    uint32_t *boff;   /* (n + 1) group offsets */
    uint8_t *bissued; /* (n) */
    uint32_t *bgroup; /* (n) each worker's group in the current batch, or RP_NONE (the GG's) */
    uint32_t nbgroups;
    /* static schedule */
    uint32_t period;  /* L */
    uint32_t sgroups; /* most groups in one partition */
    uint32_t *sgroup; /* (L, n) group of each worker in partition l */
    uint32_t *smem;   /* (L, n) members, group by group */
    uint32_t *soff;   /* (L, n + 1) group offsets */
    /* figures */
    uint64_t formed, finished, failed, conflicts, requests, redundant, stale, executions;
    uint64_t batches; /* division: batches drawn */
    uint64_t syncs, steps;
    double wait_s, sync_s;
};

/* The first group slot above `after` (RP_NONE: from the first) that lists w and w has not
 * passed, or RP_NONE (protocols/ripples_groups.c). */
uint32_t rp_next_unpassed(const ripples *st, uint32_t w, uint32_t after);

/* ---- configuration (protocols/ripples_config.c) ---- */

/* Parses and checks $.protocol.* into st and sizes the group table and the ring pool from the
 * configuration and `setup` (cap, slots, nrings; the ops table's configure). */
int rp_configure(void *state, sim_cfg *cfg, const proto_setup *setup, sim_err *err);

/* The group table, the ring pool's arrays, the per-worker lists, the division's batch and the
 * static schedule, in the run's arena (ripples_reduce.c's rp_arena, the ops table's buffers,
 * adds the pool's kit objects: the hub, the rings and their means). */
void rp_buffers(ripples *st, sim_arena *a);

/* ---- per-worker state ---- */

/* Worker w's state, for the handler acting for w, the GG's ledger and figures (sim_ctx_worker). */
static inline rp_worker *rp_w(const sim_ctx *ctx, uint32_t w)
{
    return sim_ctx_worker(ctx, w);
}

/* Worker w's state read on purpose, without a message, by the GG or another worker deciding
 * on it (sim_ctx_peer: counted in peer_reads). */
static inline rp_worker *rp_peer(sim_ctx *ctx, uint32_t w)
{
    return sim_ctx_peer(ctx, w);
}

/* ---- the group table (protocols/ripples_groups.c) ---- */

/* Group s's members in ring order, (cap). */
static inline uint32_t *members_of(const ripples *st, uint32_t s)
{
    return st->gmem + (size_t)s * st->cap;
}

/* Member w's index in group s, or RP_NONE. */
static inline uint32_t index_of(const ripples *st, uint32_t s, uint32_t w)
{
    const uint32_t *m = members_of(st, s);
    for (uint32_t i = 0; i < st->grp[s].n; i++)
        if (m[i] == w)
            return i;
    return RP_NONE;
}

/* The used slot of the group numbered seq, or RP_NONE. */
uint32_t rp_find_group(const ripples *st, uint64_t seq);

/* A new group over list[0..k) (ring order) owned by `owner` (RP_NONE: all members), into *slot;
 * SIM_EINVAL when the table is full. */
int rp_new_group(ripples *st, sim_ctx *ctx, const uint32_t *list, uint32_t k, uint32_t owner,
                 uint64_t seq, uint32_t *slot, sim_err *err);

/* Member i of group s is done with it; frees the slot and its ring when every member is. */
void rp_pass_slot(ripples *st, uint32_t s, uint32_t i);

/* Worker w moves past group s (its head or the next in its list). */
void rp_pass_worker(ripples *st, sim_ctx *ctx, uint32_t s, uint32_t w);

/* The group of local index `local` among worker x's arrived groups (x->plist): its slot, or
 * RP_NONE (its notice is on its way). Linear in the list, which holds the groups issued to
 * the worker and not passed. */
uint32_t rp_pending_find(const ripples *st, const rp_worker *x, uint64_t local);

/* Worker x, member i of group s, has learnt of it: listed under its local index
 * (st->glocal), replacing a group listed under the same index. */
void rp_pending_add(ripples *st, rp_worker *x, uint32_t s, uint32_t i);

/* ---- the static schedule (protocols/ripples_groups.c) ---- */

/* The static schedule's largest group, from its grid or the racks of `setup`. */
uint32_t rp_static_cap(const ripples *st, const proto_setup *setup);

/* Builds the static schedule's partitions in the arena's arrays; SIM_EINVAL if a group is
 * larger than rp_static_cap sized it. */
int rp_static_build(ripples *st, sim_ctx *ctx, sim_err *err);

/* Worker w's group at its schedule position, found or formed now, into *slot. */
int rp_static_group(ripples *st, sim_ctx *ctx, uint32_t w, uint32_t *slot, sim_err *err);

/* ---- messages (ripples.c, ripples_gg.c) ---- */

enum {
    MSG_REQUEST = 1, /* worker -> GG: a group (or a refill), seq = the worker's request count */
    MSG_NOTICE = 2,  /* GG -> member: seq = the group's global sequence number */
    MSG_INVITE = 3   /* arrival order: requester -> member, seq = the group's number */
};

#define RP_CONTROL_BYTES 64 /* a request, notice or invitation */

/* ---- P-Reduce (protocols/ripples_reduce.c) ---- */

/* The ops table's buffers: rp_buffers, then the ring pool's kit objects (the hub, the rings
 * and, with a real model, their means), whose completion callback is P-Reduce's. */
void rp_arena(void *state, sim_arena *a, size_t num_params);

/* Worker w, if idle, computes (it has passed a group since its last step) or becomes ready for
 * its next group, whose ring starts when its last member still in it is ready. */
int rp_advance(ripples *st, sim_ctx *ctx, uint32_t w, sim_err *err);

/* ---- the Group Generator (protocols/ripples_gg.c) ---- */

/* Worker w learns of group s (a notice or an invitation has arrived, or it formed it). */
int rp_learn(ripples *st, sim_ctx *ctx, uint32_t w, uint32_t s, sim_err *err);

/* The GG handles a request from w. */
int rp_gg_request(ripples *st, sim_ctx *ctx, uint32_t w, sim_err *err);

/* Worker w asks the GG (or, in arrival order, forms its group itself). */
int rp_request(ripples *st, sim_ctx *ctx, uint32_t w, sim_err *err);

#endif
