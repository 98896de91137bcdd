/* Stochastic Gradient Push (PROTOCOLS 1.6; the averaging benchmark's push-sum, 1.5).
 *
 * Worker i keeps a numerator x_i (num_params floats, the protocol's) and a weight w_i
 * (initially 1); the runtime holds its de-biased model z_i = x_i / w_i, on which gradients are
 * computed and which evaluation averages. Rounds are global and synchronous: at the start of
 * round k every live worker is asked whether it sits out (sim_ctx_dropped, worker order). Each
 * live worker takes one SGD step (x_i moves by the optimizer's step on z_i: x_i := x_i - lr u,
 * u the momentum-adjusted gradient), then, unless it sits out, sends (x_i, w_i) / (d + 1) to
 * each of its d out-peers on the time-varying directed exponential graph (graph_sgp_peer: the
 * peers t = 0..`peers`-1 of round k, distinct, up and not sitting out) and keeps the same
 * share. Its round ends when its step is done and every expected share has arrived: x_i :=
 * kept + received, w_i likewise, z_i := x_i / w_i. Mixing is column-stochastic: the sums of
 * x and of w over workers are kept by every round (to float rounding), so with zero
 * gradients every z_i tends to the initial mean. A message is one model plus one float (the
 * weight share, which the receiver reads from the sender's record of the round).
 *
 * Failures: a down worker leaves the round; shares it had not sent are not expected any
 * more, shares sent to it are lost (the sums drop by them). It rejoins at the next round.
 * While it is down, a share the graph would send it goes to the next live worker after it.
 *
 * `schedule` "moshpit-averager": the Moshpit authors' averager of their averaging table
 * (kit/graph.h, graph_mavg_receiver: floor(log2(N-1)) matrices built with numpy's
 * roll without an axis, from the second one on). It is not push-sum: each live worker
 * sends x_j whole to the rows that hold an entry of its column, and a live worker that
 * receives replaces x_i by the mean of its row's entries over the workers that take part
 * (its own entry, entries landing on its own column counted as its own, and each received
 * value as often as its column appears in the row), as the authors renormalise the rows
 * after zeroing the rows and columns of the peers that fail; w stays 1. Workers sitting out
 * or down neither send nor receive and keep their values (no redirection); a sender that
 * fails mid-round leaves its receivers' means. The mean over workers is not kept.
 */
#include <stdbool.h>
#include <stdint.h>

#include "kit/graph.h"
#include "kit/msg.h"
#include "runtime/proto.h"
#include "sim/tensor.h"

#define SGP_MAX_PEERS 8

enum {
    MSG_SHARE = 0 /* seq = round; a share of x (payload) and of w */
};

enum {
    EV_NEXT = SIM_EV_USER /* the next round starts */
};

enum {
    PH_IDLE = 0,
    PH_COMPUTE = 1,
    PH_WAIT = 2,
    PH_DONE = 3
};

/* A worker's state (proto_ops.worker_size): sg_w for the handler acting for it (and for the
 * round's set-up, which tells each worker how many shares to expect, as the schedule does);
 * sg_peer, counted, where a worker choosing its out-peers reads whether a peer sits out. A
 * share's weight and multiplicity, part of its message, are read from the sender's record of
 * the round, which also records the shares delivered (what its failure leaves expected). */
typedef struct sg_worker {
    double w;                     /* weight */
    double win;                   /* weight shares received this round */
    double share;                 /* the share it keeps and sends this round: 1 / (d + 1) */
    double wsent;                 /* the weight share it sent this round */
    double cnt;                   /* mavg: entries received this round */
    uint32_t need;                /* shares still expected */
    uint32_t peer[SGP_MAX_PEERS]; /* its out-peers this round */
    uint8_t mult[SGP_MAX_PEERS];  /* mavg: entries of its column per peer */
    uint8_t npeer;                /* their count */
    uint8_t got;                  /* bit q: the share for peer q was delivered */
    uint8_t selfm;                /* mavg: its own entries in its row (1 + those landing on it) */
    uint8_t phase;
    bool out;  /* sits out this round */
    bool sent; /* has sent its shares this round */
} sg_worker;

typedef struct sgp {
    uint32_t n;
    uint32_t peers;
    bool mavg; /* schedule "moshpit-averager" */
    size_t P;
    uint64_t bytes; /* S + 4 */
    float *x;       /* (n * P) numerators, in the arena */
    float *inbox;   /* (n * P) shares received this round, in the arena */
    float *scratch; /* (P), in the arena */
    uint64_t round;
    uint32_t busy;
    bool idle;
    uint64_t shares_sent, lost;
} sgp;

/* Worker i's state, for the handler acting for it (sim_ctx_worker). */
static inline sg_worker *sg_w(const sim_ctx *ctx, uint32_t i)
{
    return sim_ctx_worker(ctx, i);
}

/* Worker j's state read on purpose without a message (sim_ctx_peer, counted in peer_reads). */
static inline const sg_worker *sg_peer(sim_ctx *ctx, uint32_t j)
{
    return sim_ctx_peer(ctx, j);
}

static int sgp_configure(void *state, sim_cfg *cfg, const proto_setup *setup, sim_err *err)
{
    sgp *st = state;
    static const char *const schedules[] = { "exponential", "moshpit-averager" };
    int64_t peers = 1;
    int schedule = 0;
    st->n = setup->workers;
    int rc = sim_cfg_int(cfg, "peers", 1, SGP_MAX_PEERS, &peers, err);
    if (rc == SIM_OK)
        rc = sim_cfg_choice(cfg, "schedule", schedules, 2, &schedule, err);
    st->peers = (uint32_t)peers;
    st->mavg = schedule == 1;
    if (rc == SIM_OK && st->mavg && st->n < 3)
        return sim_err_set(err, SIM_ESCENARIO, "$.protocol.schedule",
                           "\"moshpit-averager\" needs 3 or more workers (its cycle of "
                           "floor(log2(N - 1)) matrices is empty), got %u",
                           st->n);
    return rc;
}

/* The numerators, the inbox and the scratch. */
static void sgp_buffers(void *state, sim_arena *a, size_t num_params)
{
    sgp *st = state;
    size_t n = st->n;
    st->x = sim_arena_alloc(a, n * num_params, sizeof(*st->x));
    st->inbox = sim_arena_alloc(a, n * num_params, sizeof(*st->inbox));
    st->scratch = sim_arena_alloc(a, num_params, sizeof(*st->scratch));
}

static uint64_t sgp_memory(const void *state, size_t num_params)
{
    /* Outside the arena: a worker's share of a round is one copy for all its out-peers, held
     * until the last has it: one per worker at most (synchronous rounds). */
    const sgp *st = state;
    return st->n * proto_snapshot_bytes(num_params);
}

/* mavg: worker j's receivers this round (live, taking part, not j), each once with its
 * count of entries in mult; entries landing on j's own row count in its selfm. */
static uint32_t mavg_peers(sgp *st, sim_ctx *ctx, uint32_t j, sg_worker *a)
{
    uint32_t d = 0;
    for (uint32_t t = 0; t < st->peers; t++) {
        uint32_t r = graph_mavg_receiver(st->n, st->round, j, t);
        if (r == j) {
            a->selfm++;
            continue;
        }
        if (sim_ctx_down(ctx, r) || sg_peer(ctx, r)->out)
            continue;
        uint32_t q = 0;
        while (q < d && a->peer[q] != r)
            q++;
        if (q == d) {
            a->peer[d] = r;
            a->mult[d++] = 0;
        }
        a->mult[q]++;
    }
    return d;
}

/* Worker i's distinct out-peers this round that take part; returns their count. A peer that
 * is down is replaced by the next live worker after it (in id order, round the ring), so the
 * live workers' graph stays strongly connected: with the down peers merely left out, a live
 * worker that no live worker sends to keeps halving its weight, and its model x / w, whose
 * gradient steps are taken on x, diverges. */
static uint32_t out_peers(const sgp *st, sim_ctx *ctx, uint32_t i, uint32_t *peer)
{
    uint32_t d = 0;
    for (uint32_t t = 0; t < st->peers; t++) {
        uint32_t j = graph_sgp_peer(st->n, st->round, i, t);
        for (uint32_t s = 0; s < st->n && sim_ctx_down(ctx, j); s++)
            j = (j + 1) % st->n; /* stops at i at the latest: i is up */
        bool dup = j == i || sim_ctx_down(ctx, j) || sg_peer(ctx, j)->out;
        for (uint32_t q = 0; q < d && !dup; q++)
            dup = peer[q] == j;
        if (!dup)
            peer[d++] = j;
    }
    return d;
}

static int begin_round(sgp *st, sim_ctx *ctx, sim_err *err);

static int check_round(sgp *st, sim_ctx *ctx, sim_err *err)
{
    if (st->busy > 0)
        return SIM_OK;
    st->busy = UINT32_MAX;
    sim_ctx_round_end(ctx);
    st->round++;
    return sim_ctx_timer(ctx, 0, EV_NEXT, SIM_NOBODY, st->round, NULL, err);
}

/* Worker i's round is over when its step is done and its shares are in. */
static int try_finish(sgp *st, sim_ctx *ctx, uint32_t i, sg_worker *a, sim_err *err)
{
    if (a->phase != PH_WAIT || a->need > 0)
        return SIM_OK;
    if (!a->out && st->mavg) { /* the mean of the row's entries that take part */
        float *x = st->x + (size_t)i * st->P;
        const float *in = st->inbox + (size_t)i * st->P;
        float own = (float)a->selfm, inv = (float)(1.0 / (a->selfm + a->cnt));
        float *z = sim_ctx_params(ctx, i);
        for (size_t p = 0; p < st->P; p++) {
            x[p] = (own * x[p] + in[p]) * inv;
            z[p] = x[p];
        }
    } else if (!a->out) {
        float *x = st->x + (size_t)i * st->P;
        const float *in = st->inbox + (size_t)i * st->P;
        float s = (float)a->share;
        for (size_t p = 0; p < st->P; p++)
            x[p] = s * x[p] + in[p];
        a->w = a->share * a->w + a->win;
        float *z = sim_ctx_params(ctx, i);
        float inv = (float)(1.0 / a->w);
        for (size_t p = 0; p < st->P; p++)
            z[p] = x[p] * inv;
    }
    a->phase = PH_DONE;
    st->busy--;
    return check_round(st, ctx, err);
}

/* Worker i's step is done: x_i moves by the step on z_i, then i sends its shares. */
static int on_computed(sgp *st, sim_ctx *ctx, uint32_t i, sg_worker *a, sim_err *err)
{
    float *z = sim_ctx_params(ctx, i);
    float *x = st->x + (size_t)i * st->P;
    sim_tensor_copy(st->scratch, z, st->P);
    sim_ctx_step(ctx, (sim_target){ .w = i }, NULL, sim_ctx_grad(ctx, i));
    for (size_t p = 0; p < st->P; p++)
        x[p] += z[p] - st->scratch[p];
    sim_ctx_count(ctx, i, 1);
    a->phase = PH_WAIT;
    if (!a->out) {
        uint32_t d = a->npeer;
        float s = (float)a->share;
        for (size_t p = 0; p < st->P; p++)
            st->scratch[p] = s * x[p];
        a->wsent = a->share * a->w;
        msg_hdr h = { .channel = 0, .kind = MSG_SHARE, .seq = st->round };
        uint32_t snap; /* one copy of the share for all the peers */
        int rc = sim_ctx_snapshot(ctx, st->scratch, st->P, &snap, err);
        for (uint32_t q = 0; q < d && rc == SIM_OK; q++) {
            st->shares_sent++;
            rc = msg_post(ctx, i, a->peer[q], st->bytes, h, msg_held(snap), err);
        }
        sim_ctx_release(ctx, snap);
        if (rc != SIM_OK)
            return rc;
        a->sent = true;
    }
    return try_finish(st, ctx, i, a, err);
}

/* Worker i receives sender j's share: its weight and multiplicity from j's record of the
 * round (the message's), where the delivery is recorded too. */
static int on_share(sgp *st, sim_ctx *ctx, uint32_t i, uint32_t j, uint64_t round, sim_err *err)
{
    sg_worker *a = sg_w(ctx, i);
    if (round != st->round || a->phase == PH_DONE || a->phase == PH_IDLE || a->need == 0) {
        st->lost++;
        return SIM_OK;
    }
    sg_worker *b = sg_w(ctx, j);
    float m = 1.0f; /* mavg: the entries of j's column in i's row */
    for (uint32_t q = 0; q < b->npeer; q++)
        if (b->peer[q] == i) {
            b->got |= (uint8_t)(1u << q);
            m = st->mavg ? (float)b->mult[q] : 1.0f;
        }
    const float *y = sim_ctx_held(ctx, SIM_CTX_PAYLOAD);
    float *in = st->inbox + (size_t)i * st->P;
    for (size_t p = 0; y != NULL && p < st->P; p++)
        in[p] += m * y[p];
    a->cnt += (double)m;
    a->win += b->wsent;
    a->need--;
    return try_finish(st, ctx, i, a, err);
}

static int begin_round(sgp *st, sim_ctx *ctx, sim_err *err)
{
    uint32_t live = 0;
    for (uint32_t i = 0; i < st->n; i++) {
        sg_worker *a = sg_w(ctx, i);
        bool down = sim_ctx_down(ctx, i);
        a->phase = down ? PH_IDLE : PH_COMPUTE; /* the live compute (below) */
        a->need = 0;
        a->win = 0.0;
        a->sent = false;
        a->npeer = 0;
        a->got = 0;
        a->cnt = 0.0;
        a->selfm = 1;
        a->out = !down && sim_ctx_dropped(ctx, i, st->round);
    }
    sim_tensor_zero(st->inbox, (size_t)st->n * st->P);
    for (uint32_t i = 0; i < st->n; i++) {
        if (sim_ctx_down(ctx, i))
            continue;
        live++;
        sg_worker *a = sg_w(ctx, i);
        if (a->out)
            continue;
        uint32_t d = st->mavg ? mavg_peers(st, ctx, i, a) : out_peers(st, ctx, i, a->peer);
        a->npeer = (uint8_t)d;
        a->share = st->mavg ? 1.0 : 1.0 / (double)(d + 1); /* mavg: x_i sent whole */
        for (uint32_t q = 0; q < d; q++)
            sg_w(ctx, a->peer[q])->need++; /* as the schedule tells each receiver */
    }
    st->idle = live == 0;
    st->busy = live;
    int rc = SIM_OK;
    for (uint32_t i = 0; i < st->n && rc == SIM_OK; i++) {
        if (sim_ctx_down(ctx, i))
            continue;
        rc = sim_ctx_compute(ctx, i, st->round, err);
    }
    return rc;
}

static int sgp_start(void *state, sim_ctx *ctx, sim_err *err)
{
    sgp *st = state;
    st->P = sim_ctx_num_params(ctx);
    st->bytes = sim_ctx_layer_bytes(ctx, SIM_LAYERS_ALL) + 4;
    for (uint32_t i = 0; i < st->n; i++) {
        sg_w(ctx, i)->w = 1.0;
        sim_tensor_copy(st->x + (size_t)i * st->P, sim_ctx_params_view(ctx, i), st->P);
    }
    return begin_round(st, ctx, err);
}

/* Worker d failed: it leaves the round (if its own part was not over); its shares not yet
 * delivered (unsent, or in flight, which the network drops, also when d's part was over) are
 * not expected any more by their receivers. */
static int on_down(sgp *st, sim_ctx *ctx, uint32_t d, sim_err *err)
{
    sg_worker *a = sg_w(ctx, d);
    if (a->phase == PH_IDLE)
        return SIM_OK;
    if (a->phase != PH_DONE) {
        a->phase = PH_DONE;
        a->need = 0;
        st->busy--;
    }
    for (uint32_t q = 0; q < a->npeer; q++) {
        uint32_t j = a->peer[q];
        sg_worker *b = sg_w(ctx, j);
        if ((a->got >> q & 1) != 0 || b->need == 0 || b->phase == PH_DONE || b->phase == PH_IDLE)
            continue;
        st->lost += a->sent ? 1 : 0;
        b->need--;
        int rc = try_finish(st, ctx, j, b, err);
        if (rc != SIM_OK)
            return rc;
    }
    return check_round(st, ctx, err);
}

static int sgp_on_event(void *state, sim_ctx *ctx, const sim_event *ev, sim_err *err)
{
    sgp *st = state;
    uint32_t w = (uint32_t)ev->dst;
    switch (ev->kind) {
    case SIM_EV_COMPUTED: {
        sg_worker *a = sg_w(ctx, w);
        if (a->phase != PH_COMPUTE || ev->arg[0] != st->round)
            return SIM_OK;
        return on_computed(st, ctx, w, a, err);
    }
    case SIM_EV_MSG: {
        msg_hdr h = msg_read(ev);
        if (h.channel != 0 || h.kind != MSG_SHARE)
            return sim_err_set(err, SIM_EINVAL, NULL, "sgp: unexpected message kind %u", h.kind);
        return on_share(st, ctx, w, (uint32_t)ev->src, h.seq, err);
    }
    case SIM_EV_WORKER_DOWN:
        return on_down(st, ctx, w, err);
    case SIM_EV_WORKER_UP:
        return st->idle ? begin_round(st, ctx, err) : SIM_OK;
    case EV_NEXT:
        return begin_round(st, ctx, err);
    default:
        return sim_err_set(err, SIM_EINVAL, NULL, "sgp: unexpected event kind %u", ev->kind);
    }
}

static void sgp_report(const void *state, const sim_ctx *ctx, sim_report *out)
{
    const sgp *st = state;
    double wsum = 0.0;
    for (uint32_t i = 0; i < st->n; i++)
        wsum += sg_w(ctx, i)->w;
    sim_report_add(out, "rounds", (double)st->round);
    sim_report_add(out, "shares_sent", (double)st->shares_sent);
    sim_report_add(out, "lost_shares", (double)st->lost);
    sim_report_add(out, "weight_sum", wsum);
}

const proto_ops proto_sgp = {
    .name = "sgp",
    .summary = "sgp: stochastic gradient push, push-sum on the time-varying exponential graph",
    .state_size = sizeof(sgp),
    .worker_size = sizeof(sg_worker),
    .rounds = true,
    .configure = sgp_configure,
    .start = sgp_start,
    .on_event = sgp_on_event,
    .buffers = sgp_buffers,
    .report = sgp_report,
    .memory = sgp_memory,
};
