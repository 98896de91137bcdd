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
 * (protocols/graph.h, graph_mavg_receiver: floor(log2(N-1)) matrices built with numpy's
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
#include <stdlib.h>

#include "protocols/graph.h"
#include "protocols/msg.h"
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

typedef struct sgp {
    uint32_t n;
    uint32_t peers;
    bool mavg;      /* schedule "moshpit-averager" */
    uint8_t *mult;  /* (n * SGP_MAX_PEERS) mavg: entries of the sender's column per peer */
    uint8_t *selfm; /* (n) mavg: the worker's own entries in its row (1 + those landing on it) */
    double *cnt;    /* (n) mavg: entries received this round */
    size_t P;
    uint64_t bytes; /* S + 4 */
    float *x;       /* (n * P) numerators */
    float *inbox;   /* (n * P) shares received this round */
    float *scratch; /* (P) */
    double *w;      /* (n) weights */
    double *win;    /* (n) weight shares received */
    double *share;  /* (n) the share each sender keeps and sends this round: 1 / (d + 1) */
    double *wsent;  /* (n) the weight share each sender sent this round */
    uint32_t *need; /* (n) shares still expected */
    uint8_t *phase; /* (n) */
    bool *out;      /* (n) sits out this round */
    bool *sent;     /* (n) has sent its shares this round */
    uint32_t *peer; /* (n * SGP_MAX_PEERS) each worker's out-peers this round */
    uint8_t *npeer; /* (n) their count */
    uint8_t *got;   /* (n) bit q: the share for peer q was delivered */
    uint64_t round;
    uint32_t busy;
    bool idle;
    uint64_t shares_sent, lost;
} sgp;

static int sgp_configure(void *state, sim_cfg *cfg, const sim_scenario *sc, sim_err *err)
{
    sgp *st = state;
    static const char *const schedules[] = { "exponential", "moshpit-averager" };
    int64_t peers = 1;
    int schedule = 0;
    st->n = sc->workers;
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

static uint64_t sgp_memory(const void *state, const sim_scenario *sc, size_t num_params)
{
    /* x, the inbox and the scratch; a worker's share of a round is one copy for all its
     * out-peers, held until the last has it: one per worker at most (synchronous rounds). */
    (void)state;
    uint64_t n = sc->workers;
    return (2 * n + 1) * num_params * 4 + n * (5 * 8 + 4 + 6 + 5 * SGP_MAX_PEERS) +
           n * proto_snapshot_bytes(num_params);
}

static void sgp_fini(void *state)
{
    sgp *st = state;
    sim_tensor_free(st->x);
    sim_tensor_free(st->inbox);
    sim_tensor_free(st->scratch);
    free(st->w);
    free(st->win);
    free(st->share);
    free(st->wsent);
    free(st->need);
    free(st->phase);
    free(st->out);
    free(st->sent);
    free(st->peer);
    free(st->npeer);
    free(st->got);
    free(st->mult);
    free(st->selfm);
    free(st->cnt);
}

/* mavg: worker j's receivers this round (live, taking part, not j), each once with its
 * count of entries in mult; entries landing on j's own row count in selfm[j]. */
static uint32_t mavg_peers(sgp *st, sim_ctx *ctx, uint32_t j, uint32_t *peer)
{
    uint8_t *mult = st->mult + (size_t)j * SGP_MAX_PEERS;
    uint32_t d = 0;
    for (uint32_t t = 0; t < st->peers; t++) {
        uint32_t r = graph_mavg_receiver(st->n, st->round, j, t);
        if (r == j) {
            st->selfm[j]++;
            continue;
        }
        if (sim_ctx_down(ctx, r) || st->out[r])
            continue;
        uint32_t q = 0;
        while (q < d && peer[q] != r)
            q++;
        if (q == d) {
            peer[d] = r;
            mult[d++] = 0;
        }
        mult[q]++;
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
        bool dup = j == i || sim_ctx_down(ctx, j) || st->out[j];
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
static int try_finish(sgp *st, sim_ctx *ctx, uint32_t i, sim_err *err)
{
    if (st->phase[i] != PH_WAIT || st->need[i] > 0)
        return SIM_OK;
    if (!st->out[i] && st->mavg) { /* the mean of the row's entries that take part */
        float *x = st->x + (size_t)i * st->P;
        const float *in = st->inbox + (size_t)i * st->P;
        float own = (float)st->selfm[i], inv = (float)(1.0 / (st->selfm[i] + st->cnt[i]));
        float *z = sim_ctx_params(ctx, i);
        for (size_t p = 0; p < st->P; p++) {
            x[p] = (own * x[p] + in[p]) * inv;
            z[p] = x[p];
        }
    } else if (!st->out[i]) {
        float *x = st->x + (size_t)i * st->P;
        const float *in = st->inbox + (size_t)i * st->P;
        float s = (float)st->share[i];
        for (size_t p = 0; p < st->P; p++)
            x[p] = s * x[p] + in[p];
        st->w[i] = st->share[i] * st->w[i] + st->win[i];
        float *z = sim_ctx_params(ctx, i);
        float inv = (float)(1.0 / st->w[i]);
        for (size_t p = 0; p < st->P; p++)
            z[p] = x[p] * inv;
    }
    st->phase[i] = PH_DONE;
    st->busy--;
    return check_round(st, ctx, err);
}

/* Worker i's step is done: x_i moves by the step on z_i, then i sends its shares. */
static int on_computed(sgp *st, sim_ctx *ctx, uint32_t i, sim_err *err)
{
    float *z = sim_ctx_params(ctx, i);
    float *x = st->x + (size_t)i * st->P;
    sim_tensor_copy(st->scratch, z, st->P);
    sim_ctx_step(ctx, (sim_target){ .w = i }, NULL, sim_ctx_grad(ctx, i));
    for (size_t p = 0; p < st->P; p++)
        x[p] += z[p] - st->scratch[p];
    sim_ctx_count(ctx, i, 1);
    st->phase[i] = PH_WAIT;
    if (!st->out[i]) {
        const uint32_t *peer = st->peer + (size_t)i * SGP_MAX_PEERS;
        uint32_t d = st->npeer[i];
        float s = (float)st->share[i];
        for (size_t p = 0; p < st->P; p++)
            st->scratch[p] = s * x[p];
        st->wsent[i] = st->share[i] * st->w[i];
        msg_hdr h = { .channel = 0, .kind = MSG_SHARE, .seq = st->round };
        uint32_t snap; /* one copy of the share for all the peers */
        int rc = sim_ctx_snapshot(ctx, st->scratch, st->P, &snap, err);
        for (uint32_t q = 0; q < d && rc == SIM_OK; q++) {
            st->shares_sent++;
            rc = msg_post(ctx, i, peer[q], st->bytes, h, msg_held(snap), err);
        }
        sim_ctx_release(ctx, snap);
        if (rc != SIM_OK)
            return rc;
        st->sent[i] = true;
    }
    return try_finish(st, ctx, i, err);
}

static int on_share(sgp *st, sim_ctx *ctx, uint32_t i, uint32_t j, uint64_t round, sim_err *err)
{
    if (round != st->round || st->phase[i] == PH_DONE || st->phase[i] == PH_IDLE ||
        st->need[i] == 0) {
        st->lost++;
        return SIM_OK;
    }
    float m = 1.0f; /* mavg: the entries of j's column in i's row */
    for (uint32_t q = 0; q < st->npeer[j]; q++)
        if (st->peer[(size_t)j * SGP_MAX_PEERS + q] == i) {
            st->got[j] |= (uint8_t)(1u << q);
            m = st->mavg ? (float)st->mult[(size_t)j * SGP_MAX_PEERS + q] : 1.0f;
        }
    const float *y = sim_ctx_held(ctx, SIM_CTX_PAYLOAD);
    float *in = st->inbox + (size_t)i * st->P;
    for (size_t p = 0; y != NULL && p < st->P; p++)
        in[p] += m * y[p];
    st->cnt[i] += (double)m;
    st->win[i] += st->wsent[j];
    st->need[i]--;
    return try_finish(st, ctx, i, err);
}

static int begin_round(sgp *st, sim_ctx *ctx, sim_err *err)
{
    uint32_t live = 0;
    for (uint32_t i = 0; i < st->n; i++) {
        st->phase[i] = PH_IDLE;
        st->need[i] = 0;
        st->win[i] = 0.0;
        st->sent[i] = false;
        st->npeer[i] = 0;
        st->got[i] = 0;
        st->cnt[i] = 0.0;
        st->selfm[i] = 1;
        st->out[i] = !sim_ctx_down(ctx, i) && sim_ctx_dropped(ctx, i, st->round);
    }
    sim_tensor_zero(st->inbox, (size_t)st->n * st->P);
    for (uint32_t i = 0; i < st->n; i++) {
        if (sim_ctx_down(ctx, i))
            continue;
        live++;
        if (st->out[i])
            continue;
        uint32_t *peer = st->peer + (size_t)i * SGP_MAX_PEERS;
        uint32_t d = st->mavg ? mavg_peers(st, ctx, i, peer) : out_peers(st, ctx, i, peer);
        st->npeer[i] = (uint8_t)d;
        st->share[i] = st->mavg ? 1.0 : 1.0 / (double)(d + 1); /* mavg: x_i sent whole */
        for (uint32_t q = 0; q < d; q++)
            st->need[peer[q]]++;
    }
    st->idle = live == 0;
    st->busy = live;
    int rc = SIM_OK;
    for (uint32_t i = 0; i < st->n && rc == SIM_OK; i++) {
        if (sim_ctx_down(ctx, i))
            continue;
        st->phase[i] = PH_COMPUTE;
        rc = sim_ctx_compute(ctx, i, st->round, err);
    }
    return rc;
}

static int sgp_start(void *state, sim_ctx *ctx, sim_err *err)
{
    sgp *st = state;
    size_t n = st->n;
    st->P = sim_ctx_num_params(ctx);
    st->bytes = sim_ctx_layer_bytes(ctx, SIM_LAYERS_ALL) + 4;
    st->w = calloc(n, sizeof(*st->w));
    st->win = calloc(n, sizeof(*st->win));
    st->share = calloc(n, sizeof(*st->share));
    st->wsent = calloc(n, sizeof(*st->wsent));
    st->need = calloc(n, sizeof(*st->need));
    st->phase = calloc(n, sizeof(*st->phase));
    st->out = calloc(n, sizeof(*st->out));
    st->sent = calloc(n, sizeof(*st->sent));
    st->peer = calloc(n * SGP_MAX_PEERS, sizeof(*st->peer));
    st->npeer = calloc(n, sizeof(*st->npeer));
    st->got = calloc(n, sizeof(*st->got));
    st->mult = calloc(n * SGP_MAX_PEERS, sizeof(*st->mult));
    st->selfm = calloc(n, sizeof(*st->selfm));
    st->cnt = calloc(n, sizeof(*st->cnt));
    st->x = sim_tensor_alloc(n * st->P);
    st->inbox = sim_tensor_alloc(n * st->P);
    st->scratch = sim_tensor_alloc(st->P);
    if (st->w == NULL || st->win == NULL || st->share == NULL || st->wsent == NULL ||
        st->need == NULL || st->phase == NULL || st->out == NULL || st->sent == NULL ||
        st->peer == NULL || st->npeer == NULL || st->got == NULL || st->mult == NULL ||
        st->selfm == NULL || st->cnt == NULL || st->x == NULL || st->inbox == NULL ||
        st->scratch == NULL)
        return sim_err_set(err, SIM_ENOMEM, NULL, "out of memory");
    for (uint32_t i = 0; i < st->n; i++) {
        st->w[i] = 1.0;
        sim_tensor_copy(st->x + (size_t)i * st->P, sim_ctx_params_view(ctx, i), st->P);
    }
    return begin_round(st, ctx, err);
}

/* Worker d failed: it leaves the round; its shares not yet delivered (unsent, or in flight,
 * which the network drops) are not expected any more. */
static int on_down(sgp *st, sim_ctx *ctx, uint32_t d, sim_err *err)
{
    if (st->phase[d] == PH_IDLE || st->phase[d] == PH_DONE)
        return SIM_OK;
    st->phase[d] = PH_DONE;
    st->need[d] = 0;
    st->busy--;
    for (uint32_t q = 0; q < st->npeer[d]; q++) {
        uint32_t j = st->peer[(size_t)d * SGP_MAX_PEERS + q];
        if ((st->got[d] >> q & 1) != 0 || st->need[j] == 0 || st->phase[j] == PH_DONE ||
            st->phase[j] == PH_IDLE)
            continue;
        st->lost += st->sent[d] ? 1 : 0;
        st->need[j]--;
        int rc = try_finish(st, ctx, j, err);
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
    case SIM_EV_COMPUTED:
        if (st->phase[w] != PH_COMPUTE || ev->arg[0] != st->round)
            return SIM_OK;
        return on_computed(st, ctx, w, err);
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
    (void)ctx;
    const sgp *st = state;
    double wsum = 0.0;
    for (uint32_t i = 0; i < st->n; i++)
        wsum += st->w[i];
    sim_report_add(out, "rounds", (double)st->round);
    sim_report_add(out, "shares_sent", (double)st->shares_sent);
    sim_report_add(out, "lost_shares", (double)st->lost);
    sim_report_add(out, "weight_sum", wsum);
}

const proto_ops proto_sgp = {
    .name = "sgp",
    .summary = "sgp: stochastic gradient push, push-sum on the time-varying exponential graph",
    .state_size = sizeof(sgp),
    .rounds = true,
    .configure = sgp_configure,
    .start = sgp_start,
    .on_event = sgp_on_event,
    .report = sgp_report,
    .memory = sgp_memory,
    .fini = sgp_fini,
};
