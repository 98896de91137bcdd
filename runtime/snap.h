/* Model snapshots carried by messages, copied on write (issue: a model-sized copy per message
 * was a sixth of a real-training run's time).
 *
 * A snapshot is a handle with a reference count: each message that carries it, and each hold
 * (sim_ctx_hold), is one reference. A copy (SIM_PAYLOAD_COPY, sim_ctx_snapshot) has a buffer
 * from the run's pool. A SIM_PAYLOAD_PARAMS send sends a worker's own model without copying
 * it: the snapshot is an alias, a hold on the worker's replica block (models/replica.h), and
 * every later message of that worker's model before its next write shares the same alias (one
 * block for all its peers). The copy on write is the replicas' one scheme: when the worker
 * writes its parameters while its block is held (sim_ctx_params, which hands out a writable
 * pointer, and sim_ctx_step on a worker; snap_before_write is told first, and counts the
 * copy), the worker moves to a copy of its block and the alias keeps the block it holds. So a
 * snapshot read after its worker stepped holds the bits of the send, and one whose worker did
 * not write in between costs no copy at all.
 *
 * The contract protocols keep: they write a worker's parameters only through a pointer taken
 * from sim_ctx_params after the send, or through the steps. With HETSIM_CHECK_SNAPSHOTS=1 in
 * the environment (every test sets it) an alias also keeps a copy of the block taken at the
 * send, and every read of the alias, its worker's write and its last release compare the two:
 * a write made behind the runtime's back is a bug of the protocol, reported on stderr with an
 * abort (as a failed assertion would be), never a snapshot changed silently.
 *
 * Buffers. A copy's buffer comes from the pool of its size class (state.h: SNAP_CLASSES), so a
 * slice (a shard's, a chunk of a collective) takes less than twice its size, never a whole
 * model: thousands of slices in flight stay within their bytes. An alias's copy on write
 * takes a replica block, which the replicas make room for when the alias is made, so the
 * write cannot fail; the protocol's proto_ops.copies blocks are written at set-up, and the
 * most recently freed are taken first.
 *
 * A model of zero floats (timing-only) has no snapshots: snap_init makes no tables, and sends
 * carry no payload.
 *
 * Internal to runtime/: ctx_calls.c and run.c call it; it calls state.c's helpers and the
 * replicas (models/replica.h) only.
 */
#ifndef RUNTIME_SNAP_H
#define RUNTIME_SNAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "runtime/state.h"

/* Sets up the tables and the model's pool, and room for `copies` copies on write of aliases
 * written already (the protocol's proto_ops.copies); SIM_ENOMEM on failure. */
int snap_init(sim_ctx *ctx, uint64_t copies, sim_err *err);
void snap_fini(sim_ctx *ctx);

/* A new snapshot holding a copy of x[0..n) (n <= num_params), one reference. */
int snap_copy(sim_ctx *ctx, const float *x, size_t n, uint32_t *h, sim_err *err);

/* A reference to worker w's alias snapshot of its whole model (made if it has none). */
int snap_alias(sim_ctx *ctx, uint32_t w, uint32_t *h, sim_err *err);

/* The floats of snapshot h: the block it holds if h is an alias, else its buffer. */
const float *snap_data(sim_ctx *ctx, uint32_t h);

/* True while snapshot h is an alias of worker w's parameters (w wrote nothing since). */
bool snap_is_alias_of(const sim_ctx *ctx, uint32_t h, uint32_t w);

/* Adds one reference to snapshot h. */
void snap_ref(sim_ctx *ctx, uint32_t h);

/* Drops one reference; the last returns the buffer to the pool. */
void snap_unref(sim_ctx *ctx, uint32_t h);

/* Bytes of address space of every class's buffers (sim_ctx_stats). */
uint64_t snap_buffer_bytes(const sim_ctx *ctx);

/* Worker w's parameters are about to be written: its alias, if any, stops being w's (the
 * write moves w off the held block) and the copy on write is counted. */
void snap_before_write(sim_ctx *ctx, uint32_t w);

#endif
