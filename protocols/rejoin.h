/* The kit's membership-and-rejoin service: which recovered workers wait to be admitted, and
 * the fetch of a live peer's model by a recovered (or admitted) worker, which then adopts it.
 * Not a protocol: its owner decides whom to admit and when, and which peer to ask.
 *
 * Fetching. A recovered worker asks a peer for its model (rejoin_ask: a zero-byte request),
 * the peer answers with its whole model (rejoin_send: S bytes, copied on write), or a peer
 * sends it unasked (rejoin_send, an admission); when the model lands the owner calls
 * rejoin_adopt, which writes it into the worker's parameters if the worker still waits for
 * that peer's model. A worker that fails waits for nothing (rejoin_forget); a peer that fails
 * while asked is the owner's to replace (rejoin_source tells whom each worker waits for).
 * A recovered worker on a graph usually asks (or starts from) its running neighbour furthest
 * ahead (rejoin_ahead).
 * Messages carry the owner's header (channel 0 and its own kinds), so traces show them as the
 * owner's.
 *
 * Allocation: rejoin_create only; the calls allocate nothing. */
#ifndef PROTOCOLS_REJOIN_H
#define PROTOCOLS_REJOIN_H

#include <stdbool.h>
#include <stdint.h>

#include "protocols/graph.h"
#include "protocols/msg.h"
#include "runtime/ctx.h"
#include "sim/err.h"

#define REJOIN_NONE UINT32_MAX /* no peer */

typedef struct rejoin rejoin;

/* The service for workers 0..workers-1, none waiting. NULL (and err) when out of memory. */
rejoin *rejoin_create(uint32_t workers, sim_err *err);

/* Frees it (NULL: nothing). */
void rejoin_destroy(rejoin *rj);

/* Bytes rejoin_create allocates for `workers`. */
uint64_t rejoin_memory(uint32_t workers);

/* ---- Membership ---- */

/* Worker w recovered: it waits to be admitted. */
void rejoin_recovered(rejoin *rj, uint32_t w);

/* True if worker w waits to be admitted. */
bool rejoin_pending(const rejoin *rj, uint32_t w);

/* True if some worker that is up waits to be admitted. */
bool rejoin_any_pending(const rejoin *rj, const sim_ctx *ctx);

/* Worker w no longer waits: admitted (counted) when `admitted`, else it failed again. */
void rejoin_settle(rejoin *rj, uint32_t w, bool admitted);

/* The first worker from `from` on (in id order) that is up and waits to be admitted,
 * REJOIN_NONE if none. */
uint32_t rejoin_next_pending(const rejoin *rj, const sim_ctx *ctx, uint32_t from);

/* Worker w failed: it no longer waits to be admitted (not counted) nor for any model. */
void rejoin_worker_down(rejoin *rj, uint32_t w);

/* Workers admitted so far. */
uint64_t rejoin_admitted(const rejoin *rj);

/* ---- Fetching a live peer's model ---- */

/* Worker w asks `peer` for its model: a zero-byte message with header h; w now waits for
 * peer's model. */
int rejoin_ask(rejoin *rj, sim_ctx *ctx, uint32_t w, uint32_t peer, msg_hdr h, sim_err *err);

/* `peer` sends its whole model (sim_ctx_layer_bytes at SIM_LAYERS_ALL, copied on write) to w with
 * header h, as the answer to w's request or unasked; w now waits for it. */
int rejoin_send(rejoin *rj, sim_ctx *ctx, uint32_t peer, uint32_t w, msg_hdr h, sim_err *err);

/* The peer whose model w waits for, REJOIN_NONE if none. */
uint32_t rejoin_source(const rejoin *rj, uint32_t w);

/* In the handler of a model sent by rejoin_send from `src` to w: if w waits for src's model,
 * w's parameters become the payload (real models), w waits no more, and true; else false (a
 * model w no longer waits for). */
bool rejoin_adopt(rejoin *rj, sim_ctx *ctx, uint32_t w, uint32_t src);

/* Worker w waits for no model (it failed, or runs without one). */
void rejoin_forget(rejoin *rj, uint32_t w);

/* ---- Choosing a live neighbour ---- */

/* The owner's reading of worker j's state: true if j runs, with its progress (an iteration)
 * in *k. */
typedef bool (*rejoin_progress_fn)(sim_ctx *ctx, uint32_t j, uint64_t *k);

/* The running neighbour of w on g that is furthest ahead (the first in w's adjacency order
 * among equals), its progress in *k; REJOIN_NONE (and *k untouched) if none runs. Reads each
 * neighbour once, in adjacency order. */
uint32_t rejoin_ahead(const graph *g, sim_ctx *ctx, uint32_t w, rejoin_progress_fn progress,
                      uint64_t *k);

#endif
