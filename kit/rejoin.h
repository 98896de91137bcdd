/* The kit's membership-and-rejoin service: which recovered workers wait to be admitted, and
 * the fetch of a live peer's model by a recovered (or admitted) worker, which then adopts it.
 * Not a protocol: its owner decides whom to admit and when, and which peer to ask.
 *
 * Fetching. A peer sends a model to a worker (rejoin_send: S bytes), as the answer to the
 * worker's request (see Serving) or unasked (an admission): the peer's own parameters, copied
 * on write, unless the owner's state is not a peer's parameters (a global model, an outer
 * optimizer's: DiLoCo's x), which it hands the service to send instead (rejoin_hold_state: one
 * snapshot held for every send until released); when the model lands the owner calls
 * rejoin_adopt, which writes it into the worker's parameters if the worker still waits for
 * that peer's model. A worker that fails waits for nothing.
 * A recovered worker on a graph usually asks (or starts from) its running neighbour furthest
 * ahead (rejoin_ahead).
 * Messages carry the owner's header (channel 0 and its own kinds), so traces show them as the
 * owner's.
 *
 * Serving (rejoin_serve). Given the owner's graph, message kinds and callbacks (rejoin_ops), the
 * service runs a recovered worker's fetch itself: it asks (rejoin_fetch), answers a request
 * (rejoin_on_ask), takes an answer (rejoin_on_answer), and when a worker fails tells its
 * neighbours and makes those waiting for it ask another (rejoin_worker_failed); the owner is
 * called back once a fetch is over. A worker asks its in-neighbours on the graph (its
 * neighbours when undirected), in one of two ways:
 *   REJOIN_AHEAD  the running one furthest ahead (as rejoin_ahead), whose model it adopts;
 *                 when that peer fails first, it asks the next furthest ahead;
 *   REJOIN_EACH   every one that is up (sim_ctx_down), whose answers the owner takes as they
 *                 come; one that fails first no longer counts.
 * With nobody to ask, the worker is the owner's at once (rejoin_ops.alone).
 *
 * Admitting (rejoin_owner, then rejoin_up, rejoin_down and rejoin_admit). For an owner whose
 * running workers form one group (a barrier, a ring) that recovered workers join when the owner
 * decides: a recovered worker waits to be admitted, unless no worker runs (rejoin_ops.progress,
 * or without it the service's own view: a worker runs when it is up and does not wait to be
 * admitted), when it starts alone at once (rejoin_ops.alone); when the last running worker
 * fails, the first waiting worker starts alone. At the owner's chosen moment every waiting
 * worker is admitted (rejoin_ops.admit, if any) and sent a running peer's model (or the
 * owner's held state), which it adopts when it lands (the owner's message handler calls
 * rejoin_adopt: a model whose sender failed on the way is void). A worker that
 * starts alone or is admitted no longer waits and is counted as admitted. If the peer sending
 * an admitted worker its model fails before the model lands (the message is lost with it), the
 * running peer furthest ahead that waits neither for a model nor to be admitted (the first in id
 * order among equals) sends it again, with the same header; if there is none, the admission is
 * undone: the worker waits to be admitted again (rejoin_ops.requeue, and it is no longer counted),
 * so that, nobody running, the first waiting worker starts alone. The service owns who waits:
 * an owner need not keep a copy (rejoin_pending), and with the service's own view of who runs
 * it needs neither progress nor requeue.
 *
 * Allocation: rejoin_create only, in the run's arena (runtime/arena.h), from the owner's `buffers`
 * hook (runtime/proto.h) with sizes known once the owner is configured (the workers and, for
 * serving, the graph's spec), so that the runtime's sizing pass counts it for the memory
 * guard; the arena frees it at the run's end (there is no rejoin_destroy). The calls allocate
 * nothing. */
#ifndef KIT_REJOIN_H
#define KIT_REJOIN_H

#include <stdbool.h>
#include <stdint.h>

#include "kit/graph.h"
#include "kit/msg.h"
#include "runtime/arena.h"
#include "runtime/ctx.h"
#include "sim/err.h"

#define REJOIN_NONE UINT32_MAX /* no peer */

typedef struct rejoin rejoin;

/* The service for workers 0..workers-1, none waiting, in the arena `a`, with the tables for
 * serving fetches (rejoin_serve) on the graph `served` will build (NULL: not served). NULL on
 * the sizing arena (the bytes counted, nothing else done) or, on the run's arena, if it did not
 * fit (the arena's overrun, which fails the run before start). */
rejoin *rejoin_create(sim_arena *a, uint32_t workers, const graph_spec *served);

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

/* `peer` sends w a model of sim_ctx_layer_bytes(SIM_LAYERS_ALL) bytes with header h, as the
 * answer to w's request or unasked: the owner's held state (rejoin_hold_state), else peer's
 * whole model, copied on write; w now waits for it. */
int rejoin_send(rejoin *rj, sim_ctx *ctx, uint32_t peer, uint32_t w, msg_hdr h, sim_err *err);

/* From now on every model the service sends (rejoin_send: admissions, and the same model sent
 * again when its sender fails) is a snapshot of `block` (n floats) taken now, held once for
 * all sends: the owner's state when a recovered worker must not get a peer's parameters (a
 * global model the peers have moved away from). The previous one is released. The owner counts
 * it in its memory hook (one snapshot: proto_snapshot_bytes) and releases it when the block
 * changes (rejoin_release_state), once every worker sent it has it. Errors of sim_ctx_snapshot. */
int rejoin_hold_state(rejoin *rj, sim_ctx *ctx, const float *block, size_t n, sim_err *err);

/* The held state goes back to the pool; models sent from now on are the peers' parameters. */
void rejoin_release_state(rejoin *rj, sim_ctx *ctx);

/* In the handler of a model sent by rejoin_send from `src` to w: if w waits for src's model,
 * w's parameters become the payload (real models), w waits no more, and true; else false (a
 * model w no longer waits for). */
bool rejoin_adopt(rejoin *rj, sim_ctx *ctx, uint32_t w, uint32_t src);

/* ---- Choosing a live neighbour ---- */

/* The owner's reading of worker j's state: true if j runs, with its progress (an iteration)
 * in *k. It takes no owner pointer: it reads the worker's state through the context
 * (sim_ctx_peer, sim_ctx_worker); an owner that would need its own struct to tell who runs
 * leaves rejoin_ops.progress NULL, and the service's view of who waits decides. */
typedef bool (*rejoin_progress_fn)(sim_ctx *ctx, uint32_t j, uint64_t *k);

/* The running neighbour of w on g that is furthest ahead (the first in w's adjacency order
 * among equals), its progress in *k; REJOIN_NONE (and *k untouched) if none runs. Reads each
 * neighbour once, in adjacency order. */
uint32_t rejoin_ahead(const graph *g, sim_ctx *ctx, uint32_t w, rejoin_progress_fn progress,
                      uint64_t *k);

/* ---- Serving: the service runs the fetch ---- */

/* How a worker fetches (the header comment). */
typedef enum rejoin_mode {
    REJOIN_AHEAD = 0, /* from the running in-neighbour furthest ahead, adopting its model */
    REJOIN_EACH = 1   /* from every in-neighbour that is up, the owner taking each answer */
} rejoin_mode;

/* The owner's callback for worker w's fetch (over, or with nobody to ask). */
typedef int (*rejoin_resume_fn)(void *owner, sim_ctx *ctx, uint32_t w, sim_err *err);

/* The header of worker p's answer to a request, in *h; false if p cannot answer now (the
 * request is then a protocol error). Read for the handler acting for p. */
typedef bool (*rejoin_reply_fn)(sim_ctx *ctx, uint32_t p, msg_hdr *h);

/* REJOIN_EACH: worker w takes the answer h (the payload is the message's, sim_ctx_held) of its
 * in-neighbour at in-slot `slot` of w on the graph. */
typedef void (*rejoin_answer_fn)(void *owner, sim_ctx *ctx, uint32_t w, uint32_t slot, msg_hdr h);

/* Worker d failed, and `w`, its out-neighbour (`slot`: the in-slot of d at w), is told, whatever
 * w's state; `ran` is true unless d was itself fetching. Before the service's own handling
 * of w (an ask of another, or the end of w's fetch). */
typedef int (*rejoin_notice_fn)(void *owner, sim_ctx *ctx, uint32_t w, uint32_t slot, bool ran,
                                sim_err *err);

/* Worker w is admitted, `peer`'s model on its way to it (rejoin_admit). */
typedef int (*rejoin_admit_fn)(void *owner, sim_ctx *ctx, uint32_t w, uint32_t peer, sim_err *err);

/* The owner's side of the service (a const table, like proto_ops). */
typedef struct rejoin_ops {
    const char *name;            /* the owner, in error messages ("dpsgd") */
    rejoin_mode mode;            /* how a worker fetches */
    uint32_t ask;                /* the owner's message kind for a request (seq: rejoin_fetch's) */
    uint64_t ask_bytes;          /* a request's size (0: an empty message) */
    rejoin_progress_fn progress; /* REJOIN_AHEAD and admitting: who runs and how far (NULL when
                                  * admitting: up and not waiting, all equal) */
    rejoin_reply_fn reply;       /* the answer's header */
    rejoin_answer_fn answer;     /* REJOIN_EACH: an answer (NULL for AHEAD: adopted) */
    rejoin_resume_fn fetched;    /* the fetch is over: AHEAD adopted the model, EACH got every
                                  * answer it still waited for */
    rejoin_resume_fn alone;      /* nobody to ask: the owner runs w without a fetch */
    rejoin_notice_fn notice;     /* a neighbour failed (NULL: nothing) */
    rejoin_admit_fn admit;       /* admitting: the owner admits w (its state, its group; NULL:
                                  * nothing before its model lands) */
    rejoin_resume_fn requeue;    /* admitting: w's admission is undone, its model's sender
                                  * failed with nobody running to send it again: w waits to be
                                  * admitted again (NULL: nothing to undo) */
} rejoin_ops;

/* Serves the fetches of rj's workers on g with the owner's `ops`, `owner` passed to its
 * callbacks; ops, g and owner must outlive rj. Call once, at start; allocates nothing.
 * SIM_EINVAL (and err) if rj was not created for serving, or for a graph of fewer edges. */
int rejoin_serve(rejoin *rj, const rejoin_ops *ops, const graph *g, void *owner, sim_err *err);

/* Worker w (recovered) fetches, its requests tagged `seq` (a later ask of another too): it asks
 * its in-neighbours (rejoin_ops.mode), or with nobody to ask the owner's `alone` runs at once
 * (w then waits for nothing). */
int rejoin_fetch(rejoin *rj, sim_ctx *ctx, uint32_t w, uint64_t seq, sim_err *err);

/* In the handler of a request (the owner's `ask` kind): its receiver answers with a model
 * (rejoin_send, with the owner's reply header: the owner's held state, else its whole model);
 * a protocol error (SIM_EINVAL) if it cannot. */
int rejoin_on_ask(rejoin *rj, sim_ctx *ctx, const sim_event *ev, sim_err *err);

/* In the handler of an answer (the owner's reply kinds): REJOIN_AHEAD adopts it (a protocol
 * error if its receiver no longer waits for it), REJOIN_EACH gives it to the owner (ignored if
 * its receiver no longer waits for it); the owner's `fetched` follows when the fetch is over. */
int rejoin_on_answer(rejoin *rj, sim_ctx *ctx, const sim_event *ev, sim_err *err);

/* Worker d failed (rejoin_worker_down, and for REJOIN_EACH its own requests void): each of its
 * out-neighbours w on the graph, in adjacency order, is told (rejoin_ops.notice); if w was
 * waiting for d, REJOIN_AHEAD asks another (rejoin_fetch, same seq) and REJOIN_EACH stops
 * waiting for d (the fetch is over when d was the last). Stops at the first error. */
int rejoin_worker_failed(rejoin *rj, sim_ctx *ctx, uint32_t d, sim_err *err);

/* Models adopted by fetches served so far (REJOIN_AHEAD). */
uint64_t rejoin_fetched(const rejoin *rj);

/* ---- Admitting: the owner's group takes recovered workers in ---- */

/* The owner's `ops` (progress, alone, admit and requeue are read) and `owner`, passed to its
 * callbacks, for an owner that admits without serving fetches; both must outlive rj. */
void rejoin_owner(rejoin *rj, const rejoin_ops *ops, void *owner);

/* Worker w recovered: it waits to be admitted (rejoin_recovered), or, if no worker runs, it
 * starts alone at once (no longer waiting, counted as admitted, and the owner's `alone`). */
int rejoin_up(rejoin *rj, sim_ctx *ctx, uint32_t w, sim_err *err);

/* Worker d failed (rejoin_worker_down): each admitted worker waiting for d's model is sent it
 * by another running peer, or waits to be admitted again if none runs (the header comment);
 * then, if no worker runs, the first worker that is up and waits to be admitted
 * (rejoin_next_pending) starts alone as in rejoin_up. Stops at the first error. */
int rejoin_down(rejoin *rj, sim_ctx *ctx, uint32_t d, sim_err *err);

/* Every worker that is up and waits to be admitted, in id order: it no longer waits (counted as
 * admitted), the owner's `admit` runs for it, and `peer` sends it a model with header h
 * (rejoin_send: the owner's held state, else peer's parameters; the owner adopts it with
 * rejoin_adopt when it lands; sent again by another peer if `peer` fails first, rejoin_down).
 * Their number in *n. Stops at the first error. */
int rejoin_admit(rejoin *rj, sim_ctx *ctx, uint32_t peer, msg_hdr h, uint32_t *n, sim_err *err);

/* ---- Rejoining a lockstep graph ---- */

/* Worker w rejoins its neighbours on g at K = the larger of `k` (its own iteration) and one past
 * its running neighbour furthest ahead (rejoin_ahead); the edges are used again from K at w's
 * end and from the next iteration of each running neighbour j at j's: act[e] = K for w's slot
 * e and act[g->rev[e]] = j's iteration + 1. Returns K. Reads each neighbour twice, in
 * adjacency order (rejoin_ahead, then the edges). */
uint64_t rejoin_reopen(const graph *g, sim_ctx *ctx, uint32_t w, rejoin_progress_fn progress,
                       uint64_t k, uint64_t *act);

#endif
