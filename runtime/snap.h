/* Model snapshots carried by messages, copied on write (issue: a model-sized copy per message
 * was a sixth of a real-training run's time).
 *
 * A snapshot is a handle of the run's tensor pool with a reference count: each message that
 * carries it, and each hold (sim_ctx_hold), is one reference. a SIM_PAYLOAD_PARAMS send sends a
 * worker's own model without copying it: the snapshot is an alias of the worker's parameter
 * block, and every later message of that worker's model before its next write shares the same
 * alias (one buffer for all its peers). The runtime copies the block into the alias's buffer
 * only when something is about to write the worker's parameters while the alias is still
 * referenced (snap_before_write: called by sim_ctx_params, which hands out a writable pointer,
 * and by sim_ctx_step on a worker). So a snapshot read after its worker
 * stepped holds the bits of the send, and one whose worker did not write in between costs no
 * copy at all.
 *
 * The contract protocols keep: they write a worker's parameters only through a pointer taken
 * from sim_ctx_params after the send, or through the steps. With HETSIM_CHECK_SNAPSHOTS=1 in
 * the environment (every test sets it) an alias also keeps a copy of the block taken at the
 * send, and every read of the alias, its copy on write and its last release compare the two:
 * a write made behind the runtime's back is a bug of the protocol, reported on stderr with an
 * abort (as a failed assertion would be), never a snapshot changed silently.
 *
 * Buffers. A snapshot's handle is the runtime's own; its buffer comes from the pool of its
 * size class (state.h: SNAP_CLASSES), so a slice (a shard's, a chunk of a collective) takes
 * less than twice its size, never a whole model: thousands of slices in flight stay within
 * their bytes. An alias has no buffer until its copy on write; the model's pool keeps a free
 * buffer for every such alias, so the copy cannot fail, and it is the most recently freed
 * one: the buffers ever written, the resident ones, are as many as the snapshots written at
 * once, not as many as were ever referenced at once.
 *
 * Internal to runtime/: ctx_calls.c and run.c call it; it calls state.c's helpers only.
 */
#ifndef RUNTIME_SNAP_H
#define RUNTIME_SNAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "runtime/state.h"

/* Sets up the tables and the model's pool, with `copies` buffers written already (the
 * protocol's proto_ops.copies); SIM_ENOMEM on failure. */
int snap_init(sim_ctx *ctx, uint64_t copies, sim_err *err);
void snap_fini(sim_ctx *ctx);

/* A new snapshot holding a copy of x[0..n) (n <= num_params), one reference. */
int snap_copy(sim_ctx *ctx, const float *x, size_t n, uint32_t *h, sim_err *err);

/* A reference to worker w's alias snapshot of its whole model (made if it has none). */
int snap_alias(sim_ctx *ctx, uint32_t w, uint32_t *h, sim_err *err);

/* The floats of snapshot h: the worker's block while h is an alias, else its buffer. */
const float *snap_data(sim_ctx *ctx, uint32_t h);

/* True while snapshot h is an alias of worker w's parameters (w wrote nothing since). */
bool snap_is_alias_of(const sim_ctx *ctx, uint32_t h, uint32_t w);

/* Adds one reference to snapshot h. */
void snap_ref(sim_ctx *ctx, uint32_t h);

/* Drops one reference; the last returns the buffer to the pool. */
void snap_unref(sim_ctx *ctx, uint32_t h);

/* Bytes of address space of every class's buffers (sim_ctx_stats). */
uint64_t snap_buffer_bytes(const sim_ctx *ctx);

/* Worker w's parameters are about to be written: its alias, if referenced, gets its copy. */
void snap_before_write(sim_ctx *ctx, uint32_t w);

#endif
