/* Internal header of the kit's collectives (kit/coll.h): the instances' state, which
 * only kit/coll.c, coll_butterfly.c, coll_butterfly_setup.c and coll_barrier.c include;
 * owners see the instances as opaque and use coll.h's queries. */
#ifndef KIT_COLL_STATE_H
#define KIT_COLL_STATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kit/coll.h"

/* How the hub reaches an instance (set by the instance's _init, not by owners). */
typedef struct coll_ops {
    int (*on_message)(void *inst, sim_ctx *ctx, const sim_event *ev, sim_err *err);
    int (*on_timer)(void *inst, sim_ctx *ctx, msg_timer t, sim_err *err);
    int (*on_down)(void *inst, sim_ctx *ctx, uint32_t w, sim_err *err); /* may be NULL */
} coll_ops;

typedef struct coll_slot {
    void *inst;
    const coll_ops *ops;
} coll_slot;

struct coll_hub {
    uint32_t cap;        /* channels 1..cap */
    uint32_t n;          /* channels given so far */
    uint32_t timer_kind; /* the owner's event kind (>= SIM_EV_USER) for the kit's timers */
    uint32_t refused;    /* instances not created: the hub was full (coll_hub_check) */
    coll_slot *slot;     /* (cap + 1) by channel */
};

/* coll_ring.joined[w]. */
enum {
    RING_OUT = 0,
    RING_JOINED = 1,
    RING_ENDED_COMPLETED = 2, /* RING_ENDED_COMPLETED - 1 is COLL_ENDED_COMPLETED */
    RING_ENDED_ABANDONED = 3
};

typedef struct coll_ring_pos {
    uint32_t round; /* rounds completed in this generation */
    uint32_t sent;  /* steps of the current round sent */
    uint32_t recv;  /* steps of the current round received */
    uint32_t early; /* steps of the next round received (predecessor ahead) */
    bool busy;      /* a step it sent is still on its way */
} coll_ring_pos;

/* The trees of COLL_ALGO_TREE: two (NCCL's double binary tree), each a tree of connections in
 * which a member receives every chunk from each child, sends it up to its parent, receives it
 * back down and sends it to each child. */
enum {
    COLL_TREES = 2,
    COLL_TREE_CHILDREN = 3 /* the next in its host's chain and two hosts' heads */
};

/* A ring position's state under the algorithms of kit/coll_algo.c (hierarchical,
 * trees), kept by round parity: messages of a member's next round (a neighbour ahead) count
 * in the other parity, which the member clears when it finishes a round. */
typedef struct coll_algo_pos {
    uint32_t hrecv[2][2]; /* hierarchical: [round parity][host's ring, hosts' ring] received */
    uint64_t hmask[2];    /* halving and doubling: [round parity] steps received between hosts */
    uint32_t parent[COLL_TREES];                         /* position, COLL_NONE at the root */
    uint32_t child[COLL_TREES][COLL_TREE_CHILDREN];      /* positions */
    uint8_t nchild[COLL_TREES];                          /* children in each tree */
    uint32_t up_recv[COLL_TREES][2][COLL_TREE_CHILDREN]; /* chunks from each child, by parity */
    uint32_t down_recv[COLL_TREES];                      /* chunks from the parent this round */
    uint32_t up_sent[COLL_TREES];                        /* chunks sent to the parent */
    uint32_t down_sent[COLL_TREES][COLL_TREE_CHILDREN];  /* chunks sent to each child */
    bool up_busy[COLL_TREES];                            /* a chunk to the parent in flight */
    bool down_busy[COLL_TREES][COLL_TREE_CHILDREN];      /* one to each child in flight */
} coll_algo_pos;

/* A ring's algorithm and the layout of its generation (kit/coll_algo.c). */
typedef struct coll_layout {
    int algo;           /* COLL_ALGO_*: what the owner asked for */
    coll_algo_pos *ap;  /* (cap) with an algorithm other than the flat ring, else NULL */
    uint32_t *node;     /* (cap) each position's host (sim_ctx_host's node) */
    bool hier;          /* the members come in equal runs by host: hierarchical can run */
    uint32_t local;     /* hierarchical: members per host (G) */
    uint32_t hosts;     /* hosts among the members (H) */
    uint32_t ppn;       /* largest count of members on one host */
    double lat_intra_s; /* auto: the path latency between members of a host, and between */
    double lat_inter_s; /* hosts; the bandwidth of the ring's slowest link (its bus) */
    double bus_bps;
    uint64_t rounds[4]; /* rounds completed by the ring, hierarchical, trees, halving-doubling */
} coll_layout;

struct coll_ring {
    uint32_t workers;  /* worker ids 0..workers-1 */
    uint32_t cap;      /* most members */
    coll_ring_pos *m;  /* (cap) by ring position */
    uint32_t *order;   /* (cap) members in ring order; the first n are valid */
    uint32_t *pos;     /* (workers) ring position of each worker, COLL_NONE if not a member;
                        * NULL in a narrow ring (cap < workers), found through `index` */
    uint64_t *index;   /* narrow: (1 << bits) its members by worker id, w << 32 | position,
                        * open addressing as a butterfly's (coll_ring_find); NULL when wide */
    uint32_t bits;     /* narrow: log2 of the index's slots */
    uint8_t *joined;   /* RING_JOINED: ready for its current round (kept across resets);
                        * RING_ENDED_*: its round ended by a failure, to be told. Wide:
                        * (workers) by worker id; narrow: (cap) by position, members alone */
    uint8_t *carry;    /* narrow: (cap) the members' flags carried over a restart */
    uint32_t *scratch; /* (cap) member lists built by coll_ring_reset_live and failures */
    uint32_t *failed;  /* (cap) members failed since the owner's last reset or change */
    uint32_t nfailed;
    uint32_t n;                  /* members */
    uint32_t gen;                /* generation, bumped by every reset */
    uint32_t channel;            /* the channel of its messages */
    uint64_t bytes;              /* S: bytes reduced per round (unless round_bytes is set) */
    const uint64_t *round_bytes; /* (nround_bytes) or NULL: round k moves round_bytes[k mod
                                  * nround_bytes] bytes (coll_ring_set_round_bytes) */
    uint32_t nround_bytes;
    uint64_t stale;        /* messages of past generations ignored */
    uint64_t restarts;     /* membership changes (coll_ring_change, failures) */
    uint64_t finished;     /* member-rounds completed in this generation */
    uint64_t abandoned;    /* failures that abandoned a round (COLL_RING_END) */
    uint32_t deferred;     /* failures whose restart waits (coll.c, settle): each counted in gen,
                            * restarts and failed, its worker out of pos; order and n still
                            * hold the generation before them */
    bool deferred_live;    /* a recovery is among them (coll_ring_change): the restart that
                            * waits is over the workers up then, in id order (live) */
    sim_ctx *deferred_ctx; /* the run's context, for the restart that waits */
    coll_hub *hub;         /* its hub, whose timer kind carries the late timer (waits_late) */
    sim_time down_at;      /* the instant of its members' last failure, or -1 */
    uint32_t downs;        /* its members' failures at down_at */
    bool late;             /* a late timer of this instant is pending (ring_on_timer) */
    int on_failure;        /* COLL_RING_RETRY or COLL_RING_END */
    coll_layout lay;       /* the algorithm (kit/coll_algo.c) */
    coll_done_fn done;
    void *ud;
};

struct coll_mean {
    size_t nfloats;       /* floats per block */
    float *mean;          /* (nfloats) the mean of the round in `round` */
    const float **blocks; /* (cap) scratch */
    uint32_t gen;         /* which generation and round `mean` belongs to */
    uint64_t round;
    double lr; /* sim_ctx_rates' lr when the mean was computed: every member steps with it */
    bool valid;
};

struct coll_bfly {
    coll_hub *hub;
    uint32_t channel;
    uint32_t workers, cap;                    /* worker ids 0..workers-1; at most cap members */
    size_t nfloats;                           /* F, 0 for timing-only */
    uint64_t bytes;                           /* S per round */
    sim_time sender_timeout, reducer_timeout; /* 0: none */
    uint32_t n;                               /* M: members of the current round */
    uint64_t round;                           /* the current round's number (the owner's) */
    uint64_t gen;                             /* rounds started: the messages' seq */
    double lr;                                /* sim_ctx_rates' lr at coll_bfly_start */
    uint32_t *members;                        /* (cap) worker ids by position */
    double *weight;                           /* (cap) */
    uint64_t *index; /* (coll_bfly_slots(cap)) the round's members by worker id, open
                      * addressing: (worker id << 32 | position), or COLL_BFLY_FREE */
    uint32_t bits;   /* log2 of the index's slots */
    uint8_t *state;  /* (cap) flags of each position (joined, reduced, done, failed) */
    uint8_t *got;    /* (cap * cap) [j * cap + i]: reducer j has (1) or dropped (2) i's part */
    uint8_t *have;   /* (cap * cap) [i * cap + j]: member i has (1) or gave up (2) part j */
    uint32_t *ngot;  /* (cap) non-zero entries of got per reducer */
    uint32_t *nhave; /* (cap) non-zero entries of have per member */
    sim_time *sender_deadline, *reducer_deadline; /* (cap) armed timers' times, or -1 */
    sim_event_id *sender_timer, *reducer_timer;   /* (cap) */
    float *stage;      /* (cap * nfloats) row i: member i's parts as its reducers got them (reducer
                        * j's at part j's offset; reducer i's own copied when i joins) */
    float *result;     /* (nfloats) part j's mean, computed once by reducer j */
    const float **src; /* (cap) scratch: the contributions of a part */
    double *wsrc;      /* (cap) scratch: their weights */
    uint32_t *failed;  /* (cap) worker ids failed this round */
    uint32_t nfailed;  /* of them */
    uint32_t finished; /* members done or down this round */
    uint64_t stale;    /* messages of past rounds, or that came too late, ignored */
    uint64_t dropped;  /* contributions dropped by sender timeouts or failures */
    uint64_t kept;     /* parts kept by reducer timeouts or failures */
    uint64_t grown;    /* rounds that found cap too small: the arrays doubled (or to n) */
    coll_input_fn input;
    coll_output_fn output;
    coll_done_fn done;
    void *ud;
};

struct coll_barrier {
    uint32_t channel;
    uint32_t workers, cap; /* worker ids 0..workers-1; at most cap members */
    uint32_t n;            /* members */
    uint64_t first;        /* the owner's number of the first round since the start */
    uint32_t gen;          /* starts so far */
    uint32_t round;        /* the coordinator's current round since the start */
    double lr;             /* sim_ctx_rates' lr when the coordinator's current round began */
    uint32_t *members;     /* (cap) the first coordinates */
    uint32_t *pos;         /* (workers) position, COLL_NONE if not a member */
    uint32_t *mround;      /* (cap) the round each member is in (since the start) */
    uint8_t *state;        /* (cap) waiting, known to the coordinator, down, listed */
    uint32_t known;        /* members the coordinator counts in its current round */
    uint32_t *failed;      /* (cap) worker ids failed since the owner's start */
    uint32_t nfailed;
    uint32_t *old_members; /* (cap) scratch: the members, states and rounds before a restart */
    uint8_t *old_state;
    uint32_t *old_round;
    bool *admitted;      /* (workers) admitted, a member at the next restart (coll_barrier_admit) */
    bool *held;          /* (workers) an admitted worker's held arrival */
    uint32_t nadmitted;  /* workers admitted, not yet members */
    uint64_t admit_next; /* the first undecided round when the last of them was admitted */
    uint64_t stale;      /* messages of past starts ignored */
    coll_done_fn done;
    void *ud;
};

/* Registers an instance (for the kit's _create functions): its channel in *channel. SIM_EINVAL
 * when the hub is full. */
int coll_hub_add(coll_hub *hub, void *inst, const coll_ops *ops, uint32_t *channel, sim_err *err);

/* Schedules the kit's timer t for the instance on t.channel. */
int coll_hub_timer(coll_hub *hub, sim_ctx *ctx, sim_time delay, msg_timer t, sim_event_id *id,
                   sim_err *err);

/* ---- Algorithms other than the flat ring (kit/coll_algo.c), which coll.c's ring calls
 * and which call nothing of coll.c ---- */

/* The ring's generation starts (restart): its layout from the members' hosts, every counter
 * of the algorithms cleared. */
void coll_algo_layout(coll_ring *r, sim_ctx *ctx);

/* The algorithm round `round` runs (COLL_ALGO_RING, _HIERARCHICAL or _TREE): the owner's,
 * or auto's choice for the round's bytes; the flat ring where the layout cannot run it. */
int coll_algo_of(const coll_ring *r, uint32_t round);

/* The bytes round `round` reduces. */
uint64_t coll_algo_round_bytes(const coll_ring *r, uint32_t round);

/* Member w (joined, in a round of an algorithm other than the flat ring) sends what it can. */
int coll_algo_send(coll_ring *r, sim_ctx *ctx, uint32_t w, sim_err *err);

/* Whether member w has all it sends delivered and all it expects received in its round. */
bool coll_algo_complete(const coll_ring *r, uint32_t w);

/* Member w finished its round: its counters of that round's parity are cleared. */
void coll_algo_round_end(coll_ring *r, uint32_t w);

/* A message of an algorithm other than the flat ring (kind >= 1) from src reached w: counted
 * for w, and src's connection is free again. SIM_EINVAL for a round out of place. */
int coll_algo_received(coll_ring *r, uint32_t w, uint32_t src, uint32_t kind, uint32_t round,
                       sim_err *err);

/* The butterfly's handlers (coll_butterfly.c), which its create registers
 * (coll_butterfly_setup.c). */
extern const coll_ops coll_bfly_ops;

/* Room for `cap` butterfly members (more than now): the per-member arrays and the staging rows
 * are allocated anew, empty. SIM_ENOMEM leaves the butterfly as it was. */
int coll_bfly_grow(coll_bfly *b, uint32_t cap, sim_err *err);

/* A butterfly's index: a free slot, and the slots for room `cap` (a power of two, at least
 * twice cap: half full at most). */
#define COLL_BFLY_FREE UINT64_MAX

static inline uint32_t coll_bfly_bits(uint32_t cap)
{
    uint32_t bits = 1;
    while (((uint64_t)1 << bits) < 2 * (uint64_t)cap)
        bits++;
    return bits;
}

/* The slot where worker w is or would go (Fibonacci hashing: strided ids spread). */
static inline uint32_t coll_bfly_slot(const coll_bfly *b, uint32_t w)
{
    uint32_t mask = ((uint32_t)1 << b->bits) - 1, h = (w * 0x9E3779B1u) >> (32 - b->bits);
    while (b->index[h] != COLL_BFLY_FREE && (uint32_t)(b->index[h] >> 32) != w)
        h = (h + 1) & mask;
    return h;
}

/* Worker w's position in the current round, COLL_NONE if not a member. */
static inline uint32_t coll_bfly_find(const coll_bfly *b, uint32_t w)
{
    uint64_t e = b->index[coll_bfly_slot(b, w)];
    return e != COLL_BFLY_FREE ? (uint32_t)e : COLL_NONE;
}

/* The index slot where worker w is or would go in narrow ring r (as coll_bfly_slot). */
static inline uint32_t coll_ring_slot(const coll_ring *r, uint32_t w)
{
    uint32_t mask = ((uint32_t)1 << r->bits) - 1, h = (w * 0x9E3779B1u) >> (32 - r->bits);
    while (r->index[h] != COLL_BFLY_FREE && (uint32_t)(r->index[h] >> 32) != w)
        h = (h + 1) & mask;
    return h;
}

/* Worker w's ring position (w < r->workers), COLL_NONE if it is not a member. */
static inline uint32_t coll_ring_find(const coll_ring *r, uint32_t w)
{
    if (r->index == NULL)
        return r->pos[w];
    uint64_t e = r->index[coll_ring_slot(r, w)];
    return e != COLL_BFLY_FREE ? (uint32_t)e : COLL_NONE;
}

#endif
