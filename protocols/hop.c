/* Hop: queue-based decentralized training with backup workers, bounded staleness, token
 * queues and skipping (PROTOCOLS §3, Luo et al., ASPLOS 2019). Every mechanism below is the
 * [R] reconstruction of PROTOCOLS §3.2-3.3; the choices we made are stated here.
 *
 * Worker i, iteration k (send before wait, §3.2):
 *   1. tokens: for every up in-neighbour j, i may start k only if k < seen_ij + G, where
 *      seen_ij is the count of iterations j has reported completed (the token deposits that
 *      reached i) and G = max_iteration_gap: exactly "take one token from each TQ_i[j]"
 *      with G initial tokens. G = 0: no token queues at all.
 *   2. compute the gradient on x_i, one optimizer step, then send (i, k, x_i) to every up
 *      out-neighbour (S bytes, a real snapshot).
 *   3. wait until at least need = min(|N_in| - b, up in-neighbours) in-neighbours have a
 *      usable update in UQ_i (tag >= k - s); a down in-neighbour thus counts as one of the
 *      b backups, and once more are down than b, i waits for every up one.
 *   4. x_i = (x_i + sum of the selected updates) / (1 + |R|): every in-neighbour with a
 *      usable update takes part (at least need of them), summed in worker-id order.
 *   5. deposit a token (a 64-byte control message carrying k + 1, the count of completed
 *      iterations) into TQ_o[i] of every up out-neighbour o; k = k + 1; then the skip rule.
 *
 * Update queues. UQ_i keeps, per in-neighbour, its `queue_capacity` (Q, default 2) newest
 * updates, sorted by tag; a newer arrival pushes out the oldest. So a worker holds at most
 * Q * |N_in(i)| snapshots at once (sim_ctx_hold), and a run at most Q * edges. From sender j
 * at iteration k, i selects the update with the largest tag in [k - s, k] (the one of its
 * own iteration when there is one: with b = s = 0 and no failures this is exactly the
 * standard algorithm of §3.1), or else the oldest held tag above k (a sender ahead of i;
 * its tag is >= k - s too). After averaging, updates below the next window (tag < k + 1 - s)
 * are released. late_updates "newest" (default) keeps the others, so an update that came
 * too late for its own iteration (its sender was a backup) is still used while within the
 * staleness bound, and the newest update may serve several iterations (§3.2's combined
 * loop); "drop" releases every update once used and drops on arrival an update whose
 * iteration its receiver has already passed.
 *
 * Skipping (§3.3, skip true). After finishing iteration k, if every up in-neighbour has an
 * update with tag >= k + 2 in UQ_i, let T be the smallest of their newest tags; i jumps to
 * k' = min(T, k + 1 + max_skip (0: no cap), the token limit seen_ij + G - 1), skipping
 * iterations k+1..k'-1 without computing: it averages with the updates selected for
 * iteration k' - 1, sends its model once tagged k' - 1 (the end of the skipped range) and
 * deposits tokens carrying k', then starts k'. Skipped iterations are not counted as
 * iterations (no samples were processed).
 *
 * Failures. A down worker loses its computation and its queued updates (released at once);
 * its in-neighbours keep what it already sent them (data) and stop waiting for it, both in
 * step 1 (its tokens) and step 3 (it is a backup; what it sent before failing is still
 * mixed while fresh, but no longer waited for). On recovery the worker asks each up
 * in-neighbour for its iteration (a 64-byte JOIN); the reply (S bytes) carries the
 * replier's iteration and its model, which stands for the replier's last update (that
 * update may have been lost while the worker was down) and refreshes seen_ij. When all
 * answered (or failed) it resumes at K = the largest of its own iteration and the answers,
 * lowered (with tokens) to the smallest answer + G but never below its own, keeps its model
 * and, as after a skip, sends it tagged K - 1 and deposits tokens carrying K to its up
 * out-neighbours, so that nobody waits for updates or tokens of iterations it jumped over.
 * Token deposits and updates sent to a down worker are lost like any message; the JOIN
 * replies replace them. An out-neighbour far ahead of a recovered worker (possible on
 * directed graphs, where nothing held it back meanwhile) waits for it to catch up.
 *
 * Defaults: graph ring, b = 1 (0 when a worker has a single in-neighbour), s = 0, G = 4,
 * skip on, max_skip = G, late_updates newest, Q = 2: the Hop paper's configuration (§3.2-3.3;
 * skipping is its answer to a deterministic straggler, without which a slow worker still
 * holds its neighbours back within the token window).
 *
 * Checks (PROTOCOLS §3.6), made inside the protocol at every iteration start and every
 * averaging, counted in protocol_report (violations_gap, _distance, _need, _staleness; the observe
 * hook sees only evaluations): (1) b = s = 0 without tokens, before any failure: iter(i) - iter(j)
 * <= dist(j -> i) for every pair (iter = the iteration a worker is in or waiting to start), with
 * the all-pairs BFS distances (only for n <= 1024); (2) on every edge j -> i with both ends up:
 * iter(i) - iter(j) <= G with tokens, <= s + 1 with b = 0 without tokens; an edge touching a
 * recovered worker is checked again once the bound holds on it; (3) every averaging uses >= need
 * updates, (4) each with tag >= k - s. The test-only parameter check_tighten makes every bound one
 * tighter, so that runs reaching the bounds must report violations: the checks can fire.
 *
 * Files: this one holds the messages, the worker loop, failures and the run;
 * protocols/hop_config.c the configuration, protocols/hop_queues.c the update queues,
 * averaging and checks, protocols/hop_state.h the state they share.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "kit/graph.h"
#include "kit/msg.h"
#include "kit/rejoin.h"
#include "protocols/hop_state.h"
#include "runtime/proto.h"

enum {
    MSG_UPDATE = 0,  /* seq = the sender's iteration; S bytes and its model */
    MSG_SKIP = 1,    /* seq = the last skipped iteration; S bytes and the model */
    MSG_TOKEN = 2,   /* seq = iterations the sender has completed; 64 bytes */
    MSG_JOIN = 3,    /* a recovered worker asks for the iteration; 64 bytes */
    MSG_REPLY = 4,   /* seq = the replier's iteration k; S bytes, its model as of tag k - 1 */
    MSG_REPLY_AT = 5 /* the same from a replier that already sent k: its model as of tag k */
};

enum {
    CTRL_BYTES = 64,    /* a token or join message */
    MAX_PER_WORKER = 16 /* skipped_wN keys in the report */
};

static const char *const skipped_keys[MAX_PER_WORKER] = {
    "skipped_w0",  "skipped_w1",  "skipped_w2",  "skipped_w3", "skipped_w4",  "skipped_w5",
    "skipped_w6",  "skipped_w7",  "skipped_w8",  "skipped_w9", "skipped_w10", "skipped_w11",
    "skipped_w12", "skipped_w13", "skipped_w14", "skipped_w15"
};

static msg_hdr hdr(uint32_t kind, uint64_t seq)
{
    msg_hdr h = { .channel = 0, .kind = kind, .seq = seq };
    return h;
}

/* ---- messages ---- */

static int send_model(hop *st, sim_ctx *ctx, uint32_t i, uint32_t kind, uint64_t tag, sim_err *err)
{
    for (uint32_t e = st->g.off[i]; e < st->g.off[i + 1]; e++) {
        uint32_t o = st->g.adj[e];
        if (!is_up(ctx, o))
            continue;
        st->updates_sent++;
        int rc = msg_post(ctx, i, o, st->bytes, hdr(kind, tag), msg_params(i), err);
        if (rc != SIM_OK)
            return rc;
    }
    return SIM_OK;
}

/* Deposits tokens carrying `done` (completed iterations) at every up out-neighbour. */
static int deposit(hop *st, sim_ctx *ctx, uint32_t i, uint64_t done, sim_err *err)
{
    if (st->gap == 0)
        return SIM_OK;
    for (uint32_t e = st->g.off[i]; e < st->g.off[i + 1]; e++) {
        uint32_t o = st->g.adj[e];
        if (!is_up(ctx, o))
            continue;
        st->tokens_sent++;
        int rc = msg_post(ctx, i, o, CTRL_BYTES, hdr(MSG_TOKEN, done), msg_none(), err);
        if (rc != SIM_OK)
            return rc;
    }
    return SIM_OK;
}

/* ---- the worker loop ---- */

/* The largest iteration worker i may start by its tokens (UINT64_MAX: no limit). */
static uint64_t token_limit(const hop *st, const sim_ctx *ctx, uint32_t i)
{
    uint64_t lim = UINT64_MAX;
    if (st->gap == 0)
        return lim;
    for (uint32_t e = st->g.in_off[i]; e < st->g.in_off[i + 1]; e++) {
        if (!is_up(ctx, st->g.in_adj[e]))
            continue;
        uint64_t l = st->seen[e] + st->gap - 1;
        lim = l < lim ? l : lim;
    }
    return lim;
}

static int try_start(hop *st, sim_ctx *ctx, uint32_t i, sim_err *err)
{
    hop_worker *a = hp_w(ctx, i);
    if (a->state != HS_TOKENS || a->k > token_limit(st, ctx, i))
        return SIM_OK;
    a->state = HS_COMPUTING;
    hp_check_gaps(st, ctx, i);
    return sim_ctx_compute(ctx, i, a->k, err);
}

/* The skip rule after worker i finished iteration k (a->k is now k + 1). */
static int try_skip(hop *st, sim_ctx *ctx, uint32_t i, sim_err *err)
{
    hop_worker *a = hp_w(ctx, i);
    uint64_t next = a->k, t = UINT64_MAX;
    uint32_t ups = 0;
    for (uint32_t e = st->g.in_off[i]; e < st->g.in_off[i + 1]; e++) {
        if (!is_up(ctx, st->g.in_adj[e]))
            continue;
        ups++;
        if (st->count[e] == 0)
            return SIM_OK;
        uint64_t newest = st->tag[(size_t)e * st->q + st->count[e] - 1];
        t = newest < t ? newest : t;
    }
    if (ups == 0 || t < next + 1)
        return SIM_OK;
    uint64_t to = t;
    if (st->max_skip > 0 && to > next + st->max_skip)
        to = next + st->max_skip;
    uint64_t lim = token_limit(st, ctx, i);
    to = to < lim ? to : lim;
    if (to <= next)
        return SIM_OK;
    hp_average(st, ctx, i, to - 1);
    st->skips++;
    st->skipped += to - next;
    a->skipped += to - next;
    a->k = to;
    hp_check_gaps(st, ctx, i);
    int rc = send_model(st, ctx, i, MSG_SKIP, to - 1, err);
    if (rc == SIM_OK)
        rc = deposit(st, ctx, i, to, err);
    for (uint32_t e = st->g.in_off[i]; e < st->g.in_off[i + 1]; e++)
        hp_drop_below(st, ctx, e, to > st->s ? to - st->s : 0);
    return rc;
}

static int try_average(hop *st, sim_ctx *ctx, uint32_t i, sim_err *err)
{
    hop_worker *a = hp_w(ctx, i);
    if (a->state != HS_UPDATES)
        return SIM_OK;
    uint32_t have = 0;
    for (uint32_t e = st->g.in_off[i]; e < st->g.in_off[i + 1]; e++)
        have += is_up(ctx, st->g.in_adj[e]) && hp_pick(st, e, a->k) >= 0 ? 1 : 0;
    if (have < hp_need_of(st, ctx, i))
        return SIM_OK;
    hp_average(st, ctx, i, a->k);
    sim_ctx_count(ctx, i, 1);
    a->k++;
    hp_check_gaps(st, ctx, i);
    int rc = deposit(st, ctx, i, a->k, err);
    if (rc == SIM_OK && st->skip)
        rc = try_skip(st, ctx, i, err);
    if (rc != SIM_OK)
        return rc;
    a->state = HS_TOKENS;
    return try_start(st, ctx, i, err);
}

static int on_computed(hop *st, sim_ctx *ctx, uint32_t i, sim_err *err)
{
    hop_worker *a = hp_w(ctx, i);
    if (st->nparams > 0)
        sim_ctx_step(ctx, (sim_target){ .w = i }, NULL, sim_ctx_grad(ctx, i));
    int rc = send_model(st, ctx, i, MSG_UPDATE, a->k, err); /* send before wait */
    if (rc != SIM_OK)
        return rc;
    a->state = HS_UPDATES;
    return try_average(st, ctx, i, err);
}

/* An update (or skip) tagged `tag` from j reached i. */
static int on_update(hop *st, sim_ctx *ctx, uint32_t i, uint32_t j, uint64_t tag, sim_err *err)
{
    uint32_t e = graph_in_slot(&st->g, i, j);
    if (e == GRAPH_NONE || !is_up(ctx, i))
        return SIM_OK;
    if (st->late == 1 && tag < hp_w(ctx, i)->k && hp_w(ctx, i)->state != HS_JOINING) {
        st->late_dropped++;
        return SIM_OK;
    }
    hp_insert_update(st, ctx, i, e, tag);
    return try_average(st, ctx, i, err);
}

/* ---- failures: the kit's rejoin service (hp_rejoin) asks a recovered worker's in-neighbours ----
 */

/* Worker r's JOIN is over (every in-neighbour asked answered or failed, or none was up). */
static int finish_rejoin(void *owner, sim_ctx *ctx, uint32_t r, sim_err *err)
{
    hop *st = owner;
    hop_worker *a = hp_w(ctx, r);
    uint64_t k = a->join_k > a->k ? a->join_k : a->k;
    if (st->gap > 0 && a->join_lo != UINT64_MAX && k > a->join_lo + st->gap)
        k = a->join_lo + st->gap > a->k ? a->join_lo + st->gap : a->k;
    a->k = k;
    a->state = HS_TOKENS;
    st->rejoins++;
    /* Like a skip to k: its model, tagged k - 1, and tokens carrying k, so that nobody waits
     * for updates or tokens it will never send for the iterations it jumped over. */
    int rc = k > 0 ? send_model(st, ctx, r, MSG_SKIP, k - 1, err) : SIM_OK;
    if (rc == SIM_OK)
        rc = deposit(st, ctx, r, k, err);
    if (rc != SIM_OK)
        return rc;
    return try_start(st, ctx, r, err);
}

/* Worker j answers a JOIN at once, also while joining itself: its iteration, and whether it
 * already sent its model of that iteration. */
static bool reply_to_rejoin(sim_ctx *ctx, uint32_t j, msg_hdr *h)
{
    *h = hdr(hp_w(ctx, j)->state == HS_UPDATES ? MSG_REPLY_AT : MSG_REPLY, hp_w(ctx, j)->k);
    return true;
}

/* The answer of r's in-neighbour at in-slot e reached r, which still waits for it. */
static void on_rejoin_reply(void *owner, sim_ctx *ctx, uint32_t r, uint32_t e, msg_hdr h)
{
    hop *st = owner;
    hop_worker *a = hp_w(ctx, r);
    uint64_t kj = h.seq;
    bool sent = h.kind == MSG_REPLY_AT;
    /* The replier's model stands for its last update, which a failure may have lost. */
    if (sent || kj > 0)
        hp_insert_update(st, ctx, r, e, sent ? kj : kj - 1);
    st->seen[e] = kj > st->seen[e] ? kj : st->seen[e];
    a->join_k = kj > a->join_k ? kj : a->join_k;
    a->join_lo = kj < a->join_lo ? kj : a->join_lo;
}

/* Out-neighbour o (its in-slot s of d) is told that d failed: d no longer holds it back. */
static int notice_down(void *owner, sim_ctx *ctx, uint32_t o, uint32_t s, bool ran, sim_err *err)
{
    (void)ran;
    hop *st = owner;
    st->joined[s] = 0;
    uint8_t state = hp_w(ctx, o)->state;
    if (state == HS_TOKENS)
        return try_start(st, ctx, o, err);
    return state == HS_UPDATES ? try_average(st, ctx, o, err) : SIM_OK;
}

static const rejoin_ops hp_rejoin = {
    .name = "hop",
    .mode = REJOIN_EACH,
    .ask = MSG_JOIN,
    .ask_bytes = CTRL_BYTES,
    .reply = reply_to_rejoin,
    .answer = on_rejoin_reply,
    .fetched = finish_rejoin,
    .alone = finish_rejoin,
    .notice = notice_down,
};

/* Worker d failed: its queued updates go; the kit tells its out-neighbours (notice_down), and
 * those joining stop waiting for it. */
static int on_down(hop *st, sim_ctx *ctx, uint32_t d, sim_err *err)
{
    hp_w(ctx, d)->state = HS_DOWN;
    st->failed = true;
    for (uint32_t e = st->g.in_off[d]; e < st->g.in_off[d + 1]; e++) {
        hp_drop_below(st, ctx, e, UINT64_MAX);
        st->joined[e] = 0;
    }
    return rejoin_worker_failed(st->rj, ctx, d, err);
}

/* Worker r recovered: it asks each up in-neighbour for its iteration (the kit's rejoin_fetch). */
static int on_up(hop *st, sim_ctx *ctx, uint32_t r, sim_err *err)
{
    hop_worker *a = hp_w(ctx, r);
    a->state = HS_JOINING;
    a->join_k = 0;
    a->join_lo = UINT64_MAX;
    return rejoin_fetch(st->rj, ctx, r, a->k, err);
}

/* ---- start and events ---- */

static int hp_start(void *state, sim_ctx *ctx, sim_err *err)
{
    hop *st = state;
    int rc = graph_build(&st->g, &st->spec, NULL, err);
    if (rc != SIM_OK)
        return rc;
    uint32_t lo, hi; /* the arena's xs and pick_q hold the spec's largest degree + 1 */
    graph_degree_range(&st->spec, &lo, &hi);
    for (uint32_t i = 0; i < st->n; i++)
        if (graph_in_degree(&st->g, i) > hi || graph_out_degree(&st->g, i) > hi)
            return sim_err_set(err, SIM_EINVAL, NULL, "hop: worker %u's degree exceeds %u", i, hi);
    for (uint32_t j = 0; st->dist != NULL && j < st->n; j++)
        graph_distances(&st->g, j, st->dist + (size_t)j * st->n, st->bfs);
    st->bytes = sim_ctx_layer_bytes(ctx, SIM_LAYERS_ALL);
    st->nparams = sim_ctx_num_params(ctx);
    st->used_min = UINT64_MAX;
    rc = rejoin_serve(st->rj, &hp_rejoin, &st->g, st, err);
    if (rc != SIM_OK)
        return rc;
    for (uint32_t e = 0; e < st->g.edges; e++)
        st->joined[e] = 1;
    for (uint32_t w = 0; w < st->n; w++) {
        hp_w(ctx, w)->state = sim_ctx_down(ctx, w) ? HS_DOWN : HS_TOKENS;
        st->failed = st->failed || sim_ctx_down(ctx, w);
    }
    for (uint32_t w = 0; w < st->n; w++) {
        rc = try_start(st, ctx, w, err);
        if (rc != SIM_OK)
            return rc;
    }
    return SIM_OK;
}

static int hp_on_event(void *state, sim_ctx *ctx, const sim_event *ev, sim_err *err)
{
    hop *st = state;
    uint32_t w = (uint32_t)ev->dst;
    switch (ev->kind) {
    case SIM_EV_COMPUTED:
        if (hp_w(ctx, w)->state != HS_COMPUTING || ev->arg[0] != hp_w(ctx, w)->k)
            return sim_err_set(err, SIM_EINVAL, NULL,
                               "hop: worker %u finished an unexpected iteration %llu", w,
                               (unsigned long long)ev->arg[0]);
        return on_computed(st, ctx, w, err);
    case SIM_EV_MSG: {
        msg_hdr h = msg_read(ev);
        uint32_t src = (uint32_t)ev->src;
        if (h.channel != 0 || !is_up(ctx, w))
            return SIM_OK;
        switch (h.kind) {
        case MSG_UPDATE:
        case MSG_SKIP:
            return on_update(st, ctx, w, src, h.seq, err);
        case MSG_TOKEN: {
            uint32_t e = graph_in_slot(&st->g, w, src);
            if (e != GRAPH_NONE && h.seq > st->seen[e])
                st->seen[e] = h.seq;
            return try_start(st, ctx, w, err);
        }
        case MSG_JOIN:
            return rejoin_on_ask(st->rj, ctx, ev, err);
        case MSG_REPLY:
        case MSG_REPLY_AT:
            return rejoin_on_answer(st->rj, ctx, ev, err);
        default:
            break;
        }
        break;
    }
    case SIM_EV_WORKER_DOWN:
        return on_down(st, ctx, w, err);
    case SIM_EV_WORKER_UP:
        return on_up(st, ctx, w, err);
    default:
        break;
    }
    return sim_err_set(err, SIM_EINVAL, NULL, "hop: unexpected event kind %u", ev->kind);
}

static void hp_report(const void *state, const sim_ctx *ctx, sim_report *out)
{
    const hop *st = state;
    double avg = st->averagings > 0 ? (double)st->used_sum / (double)st->averagings : 0.0;
    sim_report_add(out, "averagings", (double)st->averagings);
    sim_report_add(out, "updates_used_min", st->averagings > 0 ? (double)st->used_min : 0.0);
    sim_report_add(out, "updates_used_mean", avg);
    sim_report_add(out, "degraded_averagings", (double)st->degraded);
    sim_report_add(out, "skipped_iterations", (double)st->skipped);
    sim_report_add(out, "max_gap_observed", (double)st->max_gap);
    sim_report_add(out, "checks", (double)st->checks);
    sim_report_add(out, "violations_gap", (double)st->bad[BAD_GAP]);
    sim_report_add(out, "violations_distance", (double)st->bad[BAD_DIST]);
    sim_report_add(out, "violations_need", (double)st->bad[BAD_NEED]);
    sim_report_add(out, "violations_staleness", (double)st->bad[BAD_STALE]);
    sim_report_add(out, "updates_sent", (double)st->updates_sent);
    sim_report_add(out, "tokens_sent", (double)st->tokens_sent);
    sim_report_add(out, "late_dropped", (double)st->late_dropped);
    sim_report_add(out, "max_held_per_worker", (double)st->max_held);
    sim_report_add(out, "rejoins", (double)st->rejoins);
    for (uint32_t w = 0; w < st->n && w < MAX_PER_WORKER; w++)
        sim_report_add(out, skipped_keys[w], (double)hp_w(ctx, w)->skipped);
}

const proto_ops proto_hop = {
    .name = "hop",
    .summary = "hop: queue-based decentralized training, backup workers, staleness, tokens, skips",
    .state_size = sizeof(hop),
    .worker_size = sizeof(hop_worker),
    .rounds = false,
    .configure = hp_configure,
    .start = hp_start,
    .on_event = hp_on_event,
    .report = hp_report,
    .buffers = hp_buffers,
    .copies = hp_copies,
};
