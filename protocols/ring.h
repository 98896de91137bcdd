/* A ring all-reduce over a set of members, driven by the events of the protocol that owns
 * it (all-reduce SGD, local SGD, partial all-reduces). Not a protocol itself.
 *
 * Members are placed on a logical ring in the order given. A collective ("round") moves S
 * bytes: n-1 reduce-scatter and n-1 all-gather steps, in each of which a member sends one
 * chunk of S/n bytes (the first S mod n chunks one byte larger) to its successor. A member
 * sends step s+1 once it has joined the round (ring_join), has received step s from its
 * predecessor, and its own step s has been delivered: chunks go in order over one
 * connection, as NCCL and Gloo send them, so with one flow per link a round takes exactly
 * 2(n-1) * (path latency + (S/n) / B). When a member's round is complete (all it sent
 * delivered, all it expects received) the ring calls the owner's `done` function for it;
 * the member must join again for the next round.
 *
 * ring_reset starts a new generation over a new member list (after a failure or a change
 * of group): messages of older generations are ignored (and counted as stale), and members
 * that had joined the unfinished round stay joined and start it again.
 *
 * The ring moves bytes only: what the round computes (a mean of gradients or of models) is
 * the owner's business, done in its `done` function.
 */
#ifndef PROTO_RING_H
#define PROTO_RING_H

#include <stdbool.h>
#include <stdint.h>

#include "protocols/msg.h"
#include "runtime/ctx.h"
#include "sim/err.h"

/* Called when member w has completed round `round` (counted from 0 in this generation). */
typedef int (*ring_done_fn)(void *ud, sim_ctx *ctx, uint32_t w, uint32_t round, sim_err *err);

typedef struct ring_member {
    uint32_t round; /* rounds completed in this generation */
    uint32_t sent;  /* steps of the current round sent */
    uint32_t recv;  /* steps of the current round received */
    uint32_t early; /* steps of the next round received (predecessor ahead) */
    bool joined;    /* ready for the current round */
    bool busy;      /* a step it sent is still on its way */
} ring_member;

typedef struct ring {
    uint32_t cap;      /* workers (ids 0..cap-1) */
    ring_member *m;    /* (cap) by worker id */
    uint32_t *order;   /* (cap) members in ring order; the first n are valid */
    uint32_t *pos;     /* (cap) position of each worker on the ring, RING_NONE if not a member */
    uint32_t n;        /* members */
    uint32_t gen;      /* generation, bumped by every ring_reset */
    uint64_t bytes;    /* S: bytes reduced per round */
    uint64_t stale;    /* messages of past generations ignored */
    uint64_t restarts; /* membership changes (ring_worker_changed) */
    uint64_t finished; /* member-rounds completed in this generation */
    uint32_t channel;  /* the channel of its messages (protocols/msg.h) */
    uint32_t *scratch; /* (cap) member lists built by ring_reset_live */
    ring_done_fn done; /* the owner's completion function */
    void *ud;
} ring;

#define RING_NONE UINT32_MAX

/* Allocates the ring for `workers` workers, with no member; its messages travel on
 * `channel`. */
int ring_init(ring *r, uint32_t workers, uint32_t channel, ring_done_fn done, void *ud,
              sim_err *err);

/* Frees what ring_init allocated. */
void ring_fini(ring *r);

/* Starts a new generation over members[0..n) in that ring order, each round moving `bytes`.
 * Members keep their joined flag (and send at once if joined); every round count restarts
 * at 0. Non-members are forgotten. */
int ring_reset(ring *r, sim_ctx *ctx, const uint32_t *members, uint32_t n, uint64_t bytes,
               sim_err *err);

/* ring_reset over the workers that are up, in id order: all-reduce's ring after a failure
 * or a recovery. */
int ring_reset_live(ring *r, sim_ctx *ctx, uint64_t bytes, sim_err *err);

/* Worker w failed or recovered: it leaves its round (a recovered worker computes before
 * joining), the change is counted, and the ring restarts over the workers that are up. */
int ring_worker_changed(ring *r, sim_ctx *ctx, uint32_t w, uint64_t bytes, sim_err *err);

/* Member w is ready for its current round. */
int ring_join(ring *r, sim_ctx *ctx, uint32_t w, sim_err *err);

/* True when every member has completed round `round` of this generation: no member can
 * complete round r + 1 before all have completed r, so this is a count. */
static inline bool ring_round_complete(const ring *r, uint32_t round)
{
    return r->finished == (uint64_t)r->n * ((uint64_t)round + 1);
}

/* Handles a SIM_EV_MSG sent by the ring. */
int ring_on_message(ring *r, sim_ctx *ctx, const sim_event *ev, sim_err *err);

/* What a round computes, for owners that reduce one block per member (a gradient, a model):
 * the mean of the members' blocks, summed in ring order and computed once per (generation,
 * round) by the first member to finish it, so every member gets the same bits. Every member
 * has joined by then (none finishes before all have sent), and a joined member's block does
 * not change until its own round completes. */
typedef const float *(*ring_block_fn)(sim_ctx *ctx, uint32_t w);

typedef struct ring_mean {
    size_t nfloats;       /* floats per block */
    float *mean;          /* (nfloats) the mean of the round in `round` */
    const float **blocks; /* (workers) scratch */
    uint32_t gen, round;  /* which round `mean` belongs to */
    double lr;            /* the scheduled learning rate when the mean was computed: every
                           * member steps with it, whatever the order they finish in */
    bool valid;
} ring_mean;

/* Allocates the cache for blocks of `nfloats` floats and up to `workers` members. */
int ring_mean_init(ring_mean *m, size_t nfloats, uint32_t workers, sim_err *err);

/* Frees what ring_mean_init allocated (a zeroed cache too). */
void ring_mean_fini(ring_mean *m);

/* The mean of `block(ctx, w)` over the members of r for round `round`. */
const float *ring_mean_of(ring_mean *m, const ring *r, sim_ctx *ctx, uint32_t round,
                          ring_block_fn block);

#endif
