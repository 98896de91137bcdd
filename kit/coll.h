/* The kit's group collectives: ring all-reduce, butterfly all-reduce and barrier over any
 * list of members, driven by the events of the protocol that owns them. Not protocols.
 *
 * Channels. Every collective instance talks on a channel of its own (kit/msg.h), given
 * by the owner's hub (coll_hub) when the instance is created: channels are numbered 1, 2, 3,
 * ... in creation order (channel 0 stays the protocol's own), so a protocol that creates its
 * main ring first gets channel 1 for it, then e.g. one butterfly per group. The hub maps a
 * channel to its instance with an array: coll_hub_on_event routes a SIM_EV_MSG, or a timer of
 * the hub's kind, to the right instance in O(1) and tells the owner whether the event was a
 * collective's. The hub and the instances must outlive each other's use; the arena frees
 * them together at the run's end (a butterfly is its owner's to destroy before that).
 *
 * Instances are opaque (created by the kit); owners read them through the
 * queries below (members, counters) and change them only through the operations.
 *
 * Completion. Each instance calls its owner's coll_done_fn once per member and round, when
 * that member is finished with the round (its result is in place, or it was released), with
 * a coll_info telling the round, the members found to have failed so far (see Failures), and
 * the learning rate read once for the round (synchronous steps use it for every member).
 *
 * Failures: one policy for every instance. The owner passes SIM_EV_WORKER_DOWN to
 * coll_hub_worker_down (or, to order its own work around them, to each instance's
 * _worker_down); an instance that has the worker as a member carries on without it, nobody
 * waits for it again, and it is listed in coll_info.failed of the completions that follow:
 *   ring       restarts at once over its other members that are up, in ring order (a new
 *              generation, counted in restarts); listed until the owner's next reset or change.
 *              The round in flight of the members that had joined it starts again in the new
 *              generation, or, for an owner that chose COLL_RING_END, ends for them: each is
 *              told how it ended (coll_info.ended: completed by some member, or abandoned).
 *              A wide ring none of whose members that are up is joined makes that restart at
 *              its next use (a query, a join, a message, a change): the same generation and
 *              counts, but one rebuild for all the failures before that use (issue 38: a rule
 *              failing N members at one instant rebuilt it N times)
 *   butterfly  its parts are dropped or kept as the timeouts' rules say, at once; listed for
 *              the round
 *   barrier    counts as arrived in every round; if it coordinated, the barrier starts again
 *              over the members that are up (the next coordinates, the round numbering goes
 *              on): a member waiting for the release of a round already decided is released
 *              then, one waiting in the undecided round arrives again; listed since the owner's
 *              start
 * A recovered worker is the owner's to admit (a ring: coll_ring_change; a butterfly: the next
 * start; a barrier: the next start, coll_barrier_restart, which keeps who waits, or
 * coll_barrier_admit, which holds it until the barrier restarts by itself between rounds).
 *
 * Allocation. The hub, rings, means and barriers live in the run's arena (runtime/arena.h):
 * their _create functions take it and are called from the owner's `buffers` hook
 * (runtime/proto.h), with sizes known once the protocol is configured (the number of workers,
 * the largest member list, channels, floats per block), so that the runtime's sizing pass
 * counts them for the memory guard. On the sizing arena _create returns NULL and does nothing
 * else; on the run's arena it returns the object, zeroed but for its own fields (NULL only if
 * it did not fit, the arena's overrun, which fails the run before start, or if the hub was
 * full, which the owner's start finds with coll_hub_check). The arena frees them at the run's
 * end: they have no _destroy, and the owner's fini does nothing for them. Butterflies are
 * the exception: a round with more members than its room grows it (coll_bfly_start), so a
 * butterfly is on the heap, created in the owner's start and destroyed in its fini, and counted
 * by coll_bfly_memory in the owner's `memory` hook. Starting rounds and handling events
 * allocate nothing else (the messages' snapshots come from the run's pool, as with a
 * SIM_PAYLOAD_COPY send; timers from the engine's).
 *
 * Typical owner: in `buffers`, hub = coll_hub_create(a, channels, MY_EV_COLL_TIMER), then one
 * _create per instance (each takes the next channel; a butterfly's in start); in start,
 * coll_hub_check(hub, err) first; in on_event, first coll_hub_on_event(hub, ctx, ev, &handled,
 * err) and return if handled; pass SIM_EV_WORKER_DOWN to coll_hub_worker_down. fini: the
 * butterflies' coll_bfly_destroy. */
#ifndef KIT_COLL_H
#define KIT_COLL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kit/msg.h"
#include "runtime/arena.h"
#include "runtime/ctx.h"
#include "sim/engine.h"
#include "sim/err.h"

#define COLL_NONE UINT32_MAX /* no position, no member */

/* What a member's completion reports. */
typedef struct coll_info {
    uint32_t channel;       /* the instance's channel */
    uint64_t round;         /* ring: round in its generation; butterfly, barrier: the round */
    const uint32_t *failed; /* (nfailed) worker ids found failed in this round so far */
    uint32_t nfailed;
    double lr; /* sim_ctx_rates' lr read once when the round started (butterfly, barrier; a ring's
                * owner reads coll_mean's) */
    int ended; /* ring with COLL_RING_END: 0 when the member completed the round itself; else a
                * failure ended it (COLL_ENDED_*, round is then 0) */
} coll_info;

/* How a failure ended a ring round for a member that had joined it (coll_info.ended). */
enum {
    COLL_ENDED_COMPLETED = 1, /* some member (the failed one too) had completed it: its result
                               * is known (coll_mean_last, when the owner's means are per round) */
    COLL_ENDED_ABANDONED = 2  /* no member had completed it */
};

/* Called when member w is done with a round; `info` is valid for the call only. */
typedef int (*coll_done_fn)(void *ud, sim_ctx *ctx, uint32_t w, const coll_info *info,
                            sim_err *err);

/* Member w's block of floats, read (a gradient, a model: a collective's input) or written (a
 * model: a butterfly's output, which may be the input block itself). */
typedef const float *(*coll_input_fn)(void *ud, sim_ctx *ctx, uint32_t w);
typedef float *(*coll_output_fn)(void *ud, sim_ctx *ctx, uint32_t w);

typedef struct coll_hub coll_hub;
typedef struct coll_ring coll_ring;
typedef struct coll_mean coll_mean;
typedef struct coll_bfly coll_bfly;
typedef struct coll_barrier coll_barrier;

/* An instance's counters, for its owner's report (each instance fills what it counts, the rest
 * is 0). */
typedef struct coll_stats {
    uint64_t stale;     /* messages of past generations, rounds or starts ignored */
    uint64_t restarts;  /* ring: membership changes (coll_ring_change) */
    uint64_t abandoned; /* ring with COLL_RING_END: failures that abandoned some member's round */
    uint64_t dropped;   /* butterfly: contributions dropped by sender timeouts or failures */
    uint64_t kept;      /* butterfly: parts kept by reducer timeouts or failures */
    uint64_t grown;     /* butterfly: rounds that found its room too small */
} coll_stats;

/* ---- The hub: channels and routing ---- */

/* A hub for up to `channels` instances, in the arena `a` (see Allocation); the kit's timers use
 * the owner's event kind `timer_kind` (>= SIM_EV_USER), which the owner must not use otherwise
 * (0 when the owner has no butterfly: barriers set no timers, and a ring then restarts at every
 * failure of its members, see coll_ring_worker_down). NULL on the sizing arena. */
coll_hub *coll_hub_create(sim_arena *a, uint32_t channels, uint32_t timer_kind);

/* SIM_EINVAL (and err) if an instance was not created because every channel was taken (a
 * protocol's error); the owner's start calls it before using its instances. */
int coll_hub_check(const coll_hub *hub, sim_err *err);

/* Routes a SIM_EV_MSG on a collective's channel, or a timer of the hub's kind, to its
 * instance and sets *handled; anything else (channel 0, other kinds) is left to the owner
 * with *handled false. */
int coll_hub_on_event(coll_hub *hub, sim_ctx *ctx, const sim_event *ev, bool *handled,
                      sim_err *err);

/* Worker w failed: every instance that has it as a member, in channel order, carries on without
 * it (the failure policy above; each instance's _worker_down). */
int coll_hub_worker_down(coll_hub *hub, sim_ctx *ctx, uint32_t w, sim_err *err);

/* ---- Ring all-reduce (PROTOCOLS 1.1) ----
 *
 * Members are placed on a logical ring in the order given. A round moves S bytes: n-1
 * reduce-scatter and n-1 all-gather steps, in each of which a member sends one chunk of S/n
 * bytes (the first S mod n chunks one byte larger) to its successor. A member sends step s+1
 * once it has joined the round (coll_ring_join), has received step s from its predecessor,
 * and its own step s has been delivered: chunks go in order over one connection, as NCCL and
 * Gloo send them, so with one flow per link a round takes exactly 2(n-1) * (path latency +
 * (S/n) / B). When a member's round is complete (all it sent delivered, all it expects
 * received) the ring calls `done` for it; the member must join again for the next round.
 * `done` must not reset or change the ring (coll_ring_reset, coll_ring_reset_live,
 * coll_ring_change), in either failure mode: the ring is still in the middle of the delivery
 * that completed the round and goes on with its positions afterwards; an owner that restarts
 * the ring at a round's end does it from its next event (a timer of delay 0, as diloco's
 * admissions). Messages: kind 0, seq = generation << 32 | round.
 *
 * coll_ring_reset starts a new generation over a new member list (a change of group, an
 * admission; a failure does it by itself, coll_ring_worker_down): messages of older generations are
 * ignored (and counted as stale), and members that had joined the unfinished round stay joined and
 * start it again. The ring moves bytes only: what a round computes is the owner's business
 * (coll_mean below). */

/* A ring for workers 0..workers-1 and up to `cap` members, with no member, in the arena `a`
 * (see Allocation), registered with `hub`. NULL on the sizing arena or when the hub is full.
 * A narrow ring (cap < workers: one of a pool of group rings) takes memory for its room alone,
 * none by the workers: it finds its members through an index, and keeps the joined flags of
 * its members only (a non-member's join is refused; a worker dropped by a reset forgets its
 * flag). A ring with room for every worker keeps them by worker id, as said below. */
coll_ring *coll_ring_create(sim_arena *a, coll_hub *hub, uint32_t workers, uint32_t cap,
                            coll_done_fn done, void *ud);

/* Members in this generation. */
uint32_t coll_ring_size(const coll_ring *r);

/* The member at ring position i (< coll_ring_size). */
uint32_t coll_ring_member(const coll_ring *r, uint32_t i);

/* Generations started so far (each reset starts one). */
uint32_t coll_ring_generation(const coll_ring *r);

/* True when every member has completed round `round` of this generation. */
bool coll_ring_round_complete(const coll_ring *r, uint64_t round);

/* Its counters (stale, restarts). */
void coll_ring_stats(const coll_ring *r, coll_stats *out);

/* Starts a new generation over members[0..n) (n <= cap, distinct ids) in that ring order,
 * each round moving `bytes`. Members keep their joined flag (and send at once if joined);
 * every round count restarts at 0. */
int coll_ring_reset(coll_ring *r, sim_ctx *ctx, const uint32_t *members, uint32_t n, uint64_t bytes,
                    sim_err *err);

/* Algorithms (kit/coll_algo.c). A ring runs its rounds as a flat ring over its members
 * in their order (COLL_ALGO_RING, the default, above), or, for an owner that asks for it:
 *   COLL_ALGO_HIERARCHICAL  Horovod's hierarchical all-reduce over hosts (sim_ctx_host's
 *              node): with H hosts of G members each, listed host by host, a reduce-scatter
 *              around each host's ring (G-1 steps of S/G bytes), an all-reduce of each member's
 *              shard around the ring of the hosts' members of its rank (2(H-1) steps of S/(GH)
 *              bytes, the G rings of a host sharing its NIC), an all-gather around each host's
 *              ring (G-1 steps of S/G); the flat ring for a generation whose members do not
 *              come in equal runs by host (after a failure, say)
 *   COLL_ALGO_TREE  NCCL's double binary tree: each half of the bytes reduced up and broadcast
 *              down a tree of the hosts (NCCL's in-order binary tree over the hosts in order of
 *              their first member; the second tree its mirror, or itself shifted by one for an
 *              odd count), each host a chain of its members from its first, in chunks of 512 KiB
 *              (at most 64 a tree) pipelined through both trees at once
 *   COLL_ALGO_HALVING_DOUBLING  hierarchical with recursive halving and doubling between the
 *              hosts in place of their ring (Goyal et al. 2017, Gloo's halving-doubling):
 *              2 log2(H) exchanges with a partner host, halving then doubling what is sent; the
 *              ring between hosts when H is not a power of two
 *   COLL_ALGO_AUTO  per round, the flat ring or the trees, as NCCL's tuning model would choose
 *              for the round's bytes, host count and members per host: the one whose latency
 *              plus bytes over algorithm bandwidth is smaller, the latencies the paths' between
 *              ring neighbours inside and between hosts and the bandwidth the ring's slowest
 *              link's (docs/scenario.md gives the formulas and their source)
 * Every algorithm's round moves the same bytes to the same members and calls `done` as the
 * flat ring does; the failure policy is the ring's. */
enum {
    COLL_ALGO_RING = 0,
    COLL_ALGO_HIERARCHICAL = 1,
    COLL_ALGO_TREE = 2,
    COLL_ALGO_AUTO = 3,
    COLL_ALGO_HALVING_DOUBLING = 4
};

/* Makes r run its rounds with `algo` (COLL_ALGO_*), its room for up to `cap` members from the
 * arena `a`: called in the owner's buffers hook right after coll_ring_create (r NULL on the
 * sizing arena, which counts the room). Nothing for COLL_ALGO_RING. */
void coll_ring_set_algorithm(coll_ring *r, sim_arena *a, uint32_t cap, int algo);

/* Rounds completed so far by each algorithm (out[COLL_ALGO_*]; out[COLL_ALGO_AUTO] is 0). */
void coll_ring_algorithm_rounds(const coll_ring *r, uint64_t out[5]);

/* From now on round k of every generation moves sizes[k mod n] bytes instead of the reset's
 * `bytes` (gradient buckets: one round per bucket, in order); sizes (n >= 1) must outlive the
 * ring. NULL (or n 0) gives every round the reset's `bytes` again. Set it before a round
 * starts: a member's chunks are sized by its current round. */
void coll_ring_set_round_bytes(coll_ring *r, const uint64_t *sizes, uint32_t n);

/* What a member's failure does to the round of the members that had joined it and not completed
 * it (coll_ring_on_failure). */
enum {
    COLL_RING_RETRY = 0, /* they stay joined and start it again in the new generation (default) */
    COLL_RING_END = 1    /* it ends for them: once the ring has restarted (they take no part in its
                          * new generation until they join again), `done` is called for each, in
                          * the new ring order, with coll_info.ended set: COLL_ENDED_COMPLETED if
                          * some member had completed that round, else COLL_ENDED_ABANDONED
                          * (counted once per failure in coll_stats.abandoned). The owner must not
                          * reset or change the ring from those calls. */
};

/* Sets what a failure does to the round in flight (COLL_RING_RETRY or COLL_RING_END). */
void coll_ring_on_failure(coll_ring *r, int mode);

/* Every worker forgets that it joined (members send nothing until they join again): for an
 * owner that restarts its members' rounds in its own order after coll_ring_reset, or after a
 * failure's restart (called before coll_hub_worker_down, so that the restart sends nothing;
 * coll_ring_generation tells whether the ring restarted). */
void coll_ring_unjoin_all(coll_ring *r);

/* coll_ring_reset over the workers that are up, in id order. */
int coll_ring_reset_live(coll_ring *r, sim_ctx *ctx, uint64_t bytes, sim_err *err);

/* Worker w failed or recovered: it leaves its round (a recovered worker computes before
 * joining), the change is counted, and the ring restarts over members[0..n) (coll_ring_reset),
 * or over the workers that are up when members is NULL. */
int coll_ring_change(coll_ring *r, sim_ctx *ctx, uint32_t w, const uint32_t *members, uint32_t n,
                     uint64_t bytes, sim_err *err);

/* Worker w failed (the failure policy): if a member, it leaves, the change is counted, w is
 * listed as failed and the ring restarts over its other members that are up, in ring order
 * (with COLL_RING_END, then tells those whose round it ended). In a COLL_RING_RETRY ring with
 * room for every worker on a hub with a timer kind, an instant's second failure and those after
 * it (and the joins after them) restart it once, at the instant's end (a late timer of the
 * hub's kind), over the members none of them took out: N failures at one instant post about
 * 2N messages, not N^2/2 (issue 38). */
int coll_ring_worker_down(coll_ring *r, sim_ctx *ctx, uint32_t w, sim_err *err);

/* coll_ring_change over the workers that are up. */
int coll_ring_worker_changed(coll_ring *r, sim_ctx *ctx, uint32_t w, uint64_t bytes, sim_err *err);

/* Member w is ready for its current round (a non-member is remembered as ready; in a narrow
 * ring, SIM_EINVAL). */
int coll_ring_join(coll_ring *r, sim_ctx *ctx, uint32_t w, sim_err *err);

/* Worker w is no longer ready (it left its round, or will join a later one): it sends nothing
 * until it joins again. Not a membership change: nothing is counted or restarted. */
void coll_ring_leave(coll_ring *r, uint32_t w);

/* Every member leaves and the ring has none (a new generation: what is in flight is stale). */
int coll_ring_dissolve(coll_ring *r, sim_ctx *ctx, sim_err *err);

/* What a ring round computes, for owners that reduce one block per member (a gradient, a
 * model): the mean of the members' blocks, summed in ring order (sim_tensor_mean) and computed
 * once per (generation, round) by the first member to finish it, so every member gets the
 * same bits; the learning rate is read then, once. Every member has joined by then (none
 * finishes before all have sent), and a joined member's block must not change until its own
 * round completes. */

/* The cache for blocks of `nfloats` floats (0: timing-only) and up to `cap` members, in the
 * arena `a` (see Allocation); its mean's block is written at once (resident from the start,
 * used or not, as the memory guard counts it). NULL on the sizing arena. */
coll_mean *coll_mean_create(sim_arena *a, size_t nfloats, uint32_t cap);

/* The mean of block(ud, ctx, w) over the members of r for round `round`. */
const float *coll_mean_of(coll_mean *m, const coll_ring *r, sim_ctx *ctx, uint64_t round,
                          coll_input_fn block, void *ud);

/* The mean computed last (nfloats floats; valid until the next coll_mean_of computes one). */
const float *coll_mean_last(const coll_mean *m);

/* The learning rate read when the last mean was computed. */
double coll_mean_lr(const coll_mean *m);

/* ---- Butterfly all-reduce (PROTOCOLS 1.2) ----
 *
 * A round over M members (coll_bfly_start) splits the vector into M parts, equal up to one
 * float (the first F mod M parts one float larger; bytes likewise: the first S mod M parts one
 * byte larger). The member at position j reduces part j. When member i joins
 * (coll_bfly_join) it sends part j of its input to every other member j at once (M-1
 * concurrent messages, each a snapshot taken at send time) and arms two timers. Reducer j
 * computes the weighted mean sum_i w_i x_i / sum_i w_i of part j (in double, in member order,
 * once) over the contributions it has, when it has all of them or when `sender_timeout` after
 * its own join has passed (late or failed senders are dropped: the denominator shrinks), writes
 * it into its own output and sends it to every other member that is up. A member that has not
 * received part j `reducer_timeout` after its join keeps its own values for part j. A member
 * is done when it has every part (or gave up on the missing ones). Members that failed (down,
 * or timed out as a sender or as a reducer) are reported in coll_info.failed.
 *
 * On a star, with every member joining at time t and all links alike (bandwidth B, latency L),
 * each uplink and downlink carries M-1 flows of S/M bytes at B/(M-1) in each phase, so a round
 * takes 2 * (2L + (M-1) * (S/M) / B), exactly when M divides S.
 *
 * The owner starts the next round once the last is complete (coll_bfly_round_complete: every
 * member done or down; check it in `done` and after coll_hub_worker_down): messages still in
 * flight for a round are ignored after the next start.
 *
 * Tensors: with nfloats > 0 the owner's `input` gives member w's vector when it joins (sent
 * part by part as snapshots; its own part is copied then) and `output` where its result goes
 * (parts from other reducers as they arrive; it may be the input itself). A part given up on is
 * copied from input to output when the member finishes (nothing when they are the same
 * block). With nfloats == 0 (timing-only) nothing is read or written. When nothing fails every
 * member gets the same bits. Received parts are copied into the staging rows (cap * nfloats
 * floats, allocated at init) until their reducer sums them. Messages: kind 0 (part to reducer), 1
 * (result), seq = rounds started by this instance. The owner may start the next round from inside
 * `done`. */

/* A butterfly for workers 0..workers-1 and up to `cap` members, on vectors of `nfloats`
 * floats (0: timing-only) travelling as `bytes` bytes, registered with `hub` (which must
 * outlive it), on the heap (see Allocation). `input` and `output` may be NULL when nfloats is 0.
 * NULL (and err) when out of memory or the hub is full. */
coll_bfly *coll_bfly_create(coll_hub *hub, uint32_t workers, uint32_t cap, size_t nfloats,
                            uint64_t bytes, coll_input_fn input, coll_output_fn output,
                            coll_done_fn done, void *ud, sim_err *err);

/* Frees the butterfly (NULL: nothing). */
void coll_bfly_destroy(coll_bfly *b);

/* Members of the current round. */
uint32_t coll_bfly_size(const coll_bfly *b);

/* Worker w's position in the current round (the part it reduces), COLL_NONE if not a member. */
uint32_t coll_bfly_position(const coll_bfly *b, uint32_t w);

/* Its counters (stale, dropped, kept, grown). */
void coll_bfly_stats(const coll_bfly *b, coll_stats *out);

/* Sets the timeouts (0: none) for the rounds started from now on. */
void coll_bfly_set_timeouts(coll_bfly *b, sim_time sender_timeout, sim_time reducer_timeout);

/* Starts round `round` over members[0..n) (n <= workers, distinct) with weights[0..n) (NULL:
 * all 1; each > 0); more than cap members double the butterfly's room (to n at least, to
 * `workers` at most; counted in `grown`), the one allocation after init. A previous round's
 * messages and timers are ignored from now on; members that are down fail at once. SIM_EINVAL for a
 * bad list. */
int coll_bfly_start(coll_bfly *b, sim_ctx *ctx, const uint32_t *members, const double *weights,
                    uint32_t n, uint64_t round, sim_err *err);

/* Member w is ready: it sends its parts and starts its timers. SIM_EINVAL if w is not a
 * member or has joined this round already. */
int coll_bfly_join(coll_bfly *b, sim_ctx *ctx, uint32_t w, sim_err *err);

/* Member w, which has not joined, will not take part in this round (it never learnt of it):
 * as for a member that goes down, nobody waits for its parts, which are dropped or kept as
 * the timeouts' rules say, and it gets no result. SIM_EINVAL if w is not a member or has
 * joined; nothing for a member already down. */
int coll_bfly_leave(coll_bfly *b, sim_ctx *ctx, uint32_t w, sim_err *err);

/* Worker w failed (the failure policy): if a member of the round, nobody waits for it; its
 * parts are dropped or kept as the timeouts' rules say. */
int coll_bfly_worker_down(coll_bfly *b, sim_ctx *ctx, uint32_t w, sim_err *err);

/* True when every member of the current round is done or down. */
bool coll_bfly_round_complete(const coll_bfly *b);

/* Bytes coll_bfly_create allocates (the instance and its arrays). */
uint64_t coll_bfly_memory(uint32_t workers, uint32_t cap, size_t nfloats);

/* ---- Barrier ----
 *
 * The first member of the list coordinates: every other member, when it arrives
 * (coll_barrier_arrive), sends a zero-byte message to it; when all have arrived the
 * coordinator sends a zero-byte release to each of them and is released itself. Rounds follow
 * one another without a new start: a released member may arrive for the next round at once,
 * while others still wait for their release of the last one (a barrier every iteration).
 * Cost: n-1 messages each way; a member is released at t_last + (the last arrival's latency to
 * the coordinator) + (the coordinator's latency to it), i.e. 4L after the last arrival on a
 * star with NIC latency L (the coordinator itself 2L; both 2L less when the coordinator is the
 * last to arrive). A butterfly of zero-byte messages (a dissemination barrier) would take
 * log2(n) rounds of 2L and n log2(n) messages: the same 4L at n = 4, more above, less only at
 * n = 2; the coordinator's n-1 messages at one host cost nothing extra here, since zero-byte
 * messages spend only latency. A member that fails (coll_hub_worker_down) counts as arrived
 * in every round from then on and is reported (coll_info.failed lists the failures since the
 * owner's start); if the coordinator fails the barrier starts again by itself over the members
 * that are up, the next in the list coordinating (see Failures at the top).
 * Messages: kind 0 (arrive), 1 (release), seq = starts << 32 | round since the start. */

/* A barrier for workers 0..workers-1 and up to `cap` members, in the arena `a` (see
 * Allocation), registered with `hub`. NULL on the sizing arena or when the hub is full. */
coll_barrier *coll_barrier_create(sim_arena *a, coll_hub *hub, uint32_t workers, uint32_t cap,
                                  coll_done_fn done, void *ud);

/* The member that coordinates since the last start, COLL_NONE before the first. */
uint32_t coll_barrier_coordinator(const coll_barrier *b);

/* True if worker w is a member since the last start. */
bool coll_barrier_has(const coll_barrier *b, uint32_t w);

/* Its counters (stale). */
void coll_barrier_stats(const coll_barrier *b, coll_stats *out);

/* Starts the barrier over members[0..n) (n <= cap, distinct; members[0] coordinates), its
 * first round numbered `round` for the owner. Messages of earlier starts are ignored from now
 * on. Members that are down count as arrived and failed. */
int coll_barrier_start(coll_barrier *b, sim_ctx *ctx, const uint32_t *members, uint32_t n,
                       uint64_t round, sim_err *err);

/* Starts the barrier again over members[0..n) (n <= cap, distinct; members[0] coordinates;
 * n = 0: no members until the next start), its first round the next undecided one, keeping
 * who waits: a member of the last start that has not failed and waits for the release of a
 * decided round (lost with a coordinator) is released now (`done` with that round and its lr);
 * one that waits in the undecided round arrives again. Any other member (new to the list, or
 * failed and back) arrives in the first round if arrived[w] (arrived: by worker id, NULL:
 * none), having arrived for the owner while it was not a member. In the new member order;
 * coll_info.failed lists the failures since this restart. */
int coll_barrier_restart(coll_barrier *b, sim_ctx *ctx, const uint32_t *members, uint32_t n,
                         const bool *arrived, sim_err *err);

/* Admits worker w (up; not a member, or a member that failed): it becomes a member at the next
 * restart, which the barrier makes by itself after a release (once `done` has returned), as
 * soon as no member that is up waits for the release of a round decided before the last
 * admission: over the members that are up and the admitted, in worker id order, its first
 * round the next undecided one (coll_barrier_restart). Until then w is not a member: its
 * arrival (coll_barrier_arrive, once) is held and counted in that first round; if it fails it
 * is no longer admitted. A coordinator's failure restarts the same way, taking the admitted
 * in; the owner's start or restart drops them. SIM_EINVAL if w is a member that is up or
 * admitted already. */
int coll_barrier_admit(coll_barrier *b, uint32_t w, sim_err *err);

/* Worker w failed (the failure policy): see Failures at the top. */
int coll_barrier_worker_down(coll_barrier *b, sim_ctx *ctx, uint32_t w, sim_err *err);

/* Member w arrives for its next round; `done` is called for it when it is released (`done` may
 * call coll_barrier_arrive again). An admitted worker's arrival is held (coll_barrier_admit).
 * SIM_EINVAL if w is neither a member nor admitted, or is waiting already. */
int coll_barrier_arrive(coll_barrier *b, sim_ctx *ctx, uint32_t w, sim_err *err);

/* ---- A set of ids (worker ids) in two levels of bits: a bit per id, and a bit per non-zero
 * word of those, for an owner that visits, in id order, the few of many ids it must (allreduce:
 * the workers a ring change does something to) ---- */

typedef struct coll_idset {
    uint64_t *word; /* ((n + 63) / 64) a bit per id */
    uint64_t *sum;  /* ((n + 4095) / 4096) a bit per non-zero word */
    uint32_t n;     /* ids 0..n-1 */
} coll_idset;

/* An empty set of ids 0..n-1 in the arena `a` (its arrays NULL on the sizing arena). */
coll_idset coll_idset_create(sim_arena *a, uint32_t n);

/* Puts id in the set (in) or takes it out. */
void coll_idset_put(coll_idset *s, uint32_t id, bool in);

/* Puts every id in the set. */
void coll_idset_fill(coll_idset *s);

/* The first id at or after `id` in the set, s->n if none. */
uint32_t coll_idset_next(const coll_idset *s, uint32_t id);

#endif
