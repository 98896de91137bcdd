/* Replicas: every worker's parameters and momentum, in blocks shared while equal, copied on
 * write, with reference counts.
 *
 * A block is a parameter vector (num_params floats) and, with momentum, its momentum buffer.
 * Workers that hold equal models are on one block (replicas that start equal start on one);
 * a worker about to write its parameters (replica_own) first gets a block of its own, a copy,
 * when its block is shared. A block is shared while anything else references it:
 *   - other workers on it (users);
 *   - pins (replica_pin): a reader that needs the block unchanged until it lets go (a gradient
 *     computed by the thread pool from the parameters of its iteration's start, issue 28), so
 *     a write to a pinned block's worker moves the worker, and the pinned block stays, an
 *     orphan, until the last pin goes;
 *   - a keyed step of another block that leads to it (replica_keyed_*): a step that every
 *     replica on a block takes alike (a synchronous protocol's round) is computed once, by the
 *     first worker, into a new block, and the others follow it there without computing it;
 *   - holds (replica_hold): a snapshot of a worker's whole model that messages carry without
 *     a copy (runtime/snap.c: SIM_PAYLOAD_PARAMS); the worker's next write moves the worker to
 *     a copy and the held block stays, unchanged, until the last message lets go.
 * This is the one copy-on-write scheme over parameters: a copy is made when, and only when, a
 * worker writes a block that something else still references, and it is the writer that moves.
 * There are as many blocks as workers, as many again once pins are allowed
 * (replica_allow_pins), and one more per hold at most (untouched blocks take no memory);
 * only a hold, which can fail, grows them.
 *
 * The training state (models/train.h) owns one and takes its steps through it; the runtime's
 * gradients in flight pin blocks (runtime/jobs.c) and its snapshots hold them
 * (runtime/snap.c), through train_replica.
 */
#ifndef MODELS_REPLICA_H
#define MODELS_REPLICA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sim/err.h"

typedef struct replica replica;

/* What names a keyed step: equal keys promise equal gradients (the same buffer with the same
 * contents), rates and momentum coefficients. */
typedef struct replica_key {
    uint64_t key;
    const float *grad; /* compared, never read */
    double lr, momentum;
} replica_key;

/* Blocks for `workers` workers of `num_params` floats (zero floats: the timing-only model),
 * with momentum buffers when `momentum`; every worker on block 0 when `shared`, else each on
 * its own (workers that start from their own draws). NULL and SIM_ENOMEM on failure. */
replica *replica_create(uint32_t workers, size_t num_params, bool momentum, bool shared,
                        sim_err *err);

/* Frees every block. NULL is a no-op. */
void replica_destroy(replica *r);

/* Makes room for pins: as many blocks again as workers, taking memory only once written.
 * SIM_ENOMEM. */
int replica_allow_pins(replica *r, sim_err *err);

/* Whether replica_allow_pins has made room. */
bool replica_pins_allowed(const replica *r);

/* Worker w's parameters and momentum buffer (NULL without momentum), for reading: the block
 * may be shared. */
float *replica_params(const replica *r, uint32_t w);
float *replica_velocity(const replica *r, uint32_t w);

/* Worker w is about to write its block: it gets one of its own if the block is shared (a copy
 * of parameters and momentum), and the block forgets its keyed step. */
void replica_own(replica *r, uint32_t w);

/* The block worker w is on now. */
uint32_t replica_block_of(const replica *r, uint32_t w);

/* Parameter blocks in use: 1 while every replica is equal, up to one per worker (and pins). */
uint32_t replica_blocks_in_use(const replica *r);

/* Blocks ever written (resident): those replica_create made, those replica_reserve wrote and
 * those used since. Never more than were in use at once, plus the reserved ones. */
uint32_t replica_blocks_written(const replica *r);

/* Worker w's block now, with a reference that keeps it unchanged until replica_unpin. Needs
 * replica_allow_pins. */
uint32_t replica_pin(replica *r, uint32_t w);
void replica_unpin(replica *r, uint32_t b);

/* A hold on worker w's block (*b), keeping it unchanged until replica_release: a snapshot of
 * w's whole model carried by messages without a copy (runtime/snap.c). A write to w then moves
 * w to a copy, as a pin does; room for that copy is made now (the blocks grow), so a write
 * never fails. SIM_ENOMEM. */
int replica_hold(replica *r, uint32_t w, uint32_t *b, sim_err *err);
void replica_release(replica *r, uint32_t b);

/* The parameters of block b (held or pinned). */
const float *replica_block_params(const replica *r, uint32_t b);

/* Makes room for `holds` holds at once, with the blocks their copies on write will take first
 * written now (resident from the start: the protocol's proto_ops.copies). SIM_ENOMEM. */
int replica_reserve(replica *r, uint64_t holds, sim_err *err);

/* Whether a write to worker w now leaves its block to pins alone (w is its last worker and a
 * pin holds it): the block then stays, an orphan, besides w's new one. */
bool replica_write_orphans(const replica *r, uint32_t w);

/* Blocks that only pins hold now. */
uint32_t replica_orphans(const replica *r);

/* A keyed step of worker w. If another worker on w's block took step k already, w moves onto
 * the block it made and true is returned: nothing to compute. Else false: the caller steps
 * w's own parameters after replica_keyed_fork. */
bool replica_keyed_follow(replica *r, uint32_t w, const replica_key *k);

/* Before w computes keyed step k: if its block is shared, w moves onto a new block, a copy, to
 * take the step on, and its old block remembers step k so that its other workers follow;
 * alone on its block, w steps in place (its block forgets any keyed step). */
void replica_keyed_fork(replica *r, uint32_t w, const replica_key *k);

#endif
