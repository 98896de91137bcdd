/* Parameter server (PROTOCOLS §1.3): BSP, ASP and SSP over K shards.
 *
 * The model of P floats is split into K contiguous slices, as even as whole floats allow
 * (the first P mod K one float longer); shard k owns slice k of one server model (a copy of
 * the workers' initial parameters, which evaluation reads) with its own momentum buffer and
 * updates it with the run's optimizer. With placement "servers" shard k lives on server
 * host workers + k, with "colocated" on worker k. Every message to or from shard k carries
 * S/K bytes of the S-byte model (the first S mod K shards one byte more), or a 64-byte
 * pull request.
 *
 * A worker's iteration: it sends a pull request to every shard, each answers with its
 * slice, which the worker copies into its parameters; when all K slices are in, it computes
 * (so the gradient is taken on the pulled model), pushes the K slices of its gradient,
 * counts the iteration, and sends its next pull requests at once. Requests of one worker
 * to one shard are handled in the order it sent them, as on one connection: a pull request
 * that overtakes the worker's own push on the wire waits at the shard for that push.
 *
 * Modes:
 *   bsp  shard k, in round t, stores the gradient slices of round t until every live
 *        member has pushed, then applies their mean (summed in worker order, then divided,
 *        as the ring all-reduce does) once and answers the pull requests for round t+1 it
 *        has queued. Every worker pulls the same model in a round, so replicas are bitwise
 *        identical at round boundaries. Shards run their rounds independently; no shard can
 *        complete round t+1 before every shard has completed round t.
 *   asp  a shard applies each gradient slice when it arrives and answers pulls at once.
 *   ssp  as asp, but a worker that has pushed c iterations starts its next one only when
 *        every live worker has pushed at least c - s; otherwise it waits (blocked) until the
 *        slowest catches up. So a worker that starts computing iteration c+1 sees every
 *        live worker past c - s: the number of iterations started by any worker minus the
 *        number finished by the slowest live one never exceeds s + 1 (reported as
 *        max_clock_gap, measured whenever a worker starts computing; bsp keeps it <= 1).
 *
 * Failures. A failed worker's messages in flight are dropped by the network; its requests
 * queued at shards are forgotten, and in bsp its gradients not yet applied are discarded,
 * so a round completes when every live member has pushed. A member is a live worker that
 * joined at or before the round: a recovered worker rejoins by pulling the newest round any
 * shard has reached (the simulator reads it from the shards instead of modelling a query),
 * and a round whose members all failed before pushing completes without an update once a
 * rejoined worker waits for the next one. A recovered worker's clock is raised to the
 * slowest live worker's, so that it does not hold the others back under ssp.
 *   A colocated shard shares its worker's host: while the worker is down the shard is
 * unreachable (the network drops messages to a down host) and every pull waits for it, so
 * training stalls until the worker recovers (a run whose shard host never recovers ends as
 * "stalled"). The shard's state survives; on recovery the workers retry what was lost, as
 * clients reconnecting: pull requests not answered, and in bsp pushes not received (their
 * gradients are still the workers' last ones, as no worker can compute before the round is
 * complete). In asp and ssp a push lost with its shard is lost (counted as lost_pushes).
 *
 * With the timing-only model the same messages flow without tensors.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "protocols/msg.h"
#include "runtime/proto.h"
#include "sim/tensor.h"

enum {
    PS_BSP = 0,
    PS_ASP = 1,
    PS_SSP = 2
};

enum {
    PLACE_SERVERS = 0,
    PLACE_COLOCATED = 1
};

/* Message kinds: the low byte of a tag, the shard index above it. */
enum {
    MSG_PULL = 1,  /* worker -> shard, arg = the round wanted (bsp) */
    MSG_SLICE = 2, /* shard -> worker, arg = the shard's round; carries the slice */
    MSG_PUSH = 3   /* worker -> shard, arg = the worker's round; carries the gradient slice */
};

enum {
    PULL_REQUEST_BYTES = 64
};

/* A worker's phase. */
enum {
    W_DOWN = 0,
    W_BLOCKED = 1, /* ssp: waiting for the slowest worker */
    W_PULL = 2,    /* waiting for slices */
    W_COMPUTE = 3
};

/* Flags of a (worker, shard) pair. */
enum {
    L_AWAIT = 1,    /* the shard's slice of the worker's current pull is expected */
    L_PUSH_OUT = 2, /* a push sent (or, bsp, held while the shard is down) not yet received */
    L_QUEUED = 4,   /* a pull request waits at the shard */
    L_PUSHED = 8    /* bsp: the worker's gradient for the shard's open round is stored */
};

typedef struct ps_shard {
    uint32_t host;
    size_t off, len;  /* the slice: floats [off, off + len) */
    uint64_t bytes;   /* bytes of a slice or gradient message */
    uint64_t round;   /* bsp: rounds applied */
    uint32_t pending; /* bsp: live members of the open round that have not pushed */
    uint32_t npushed; /* bsp: gradients stored for the open round */
    uint32_t nqueued; /* pull requests waiting */
} ps_shard;

typedef struct ps_worker {
    uint8_t phase;   /* W_* */
    uint32_t need;   /* slices of the current pull still expected */
    uint64_t clock;  /* iterations pushed */
    uint64_t round;  /* bsp: the round it pulls or computes */
    uint64_t joined; /* bsp: the round it (re)joined at */
} ps_worker;

typedef struct ps {
    int mode, placement;
    int64_t staleness;
    uint32_t n, K;
    ps_worker *w;       /* (n) */
    ps_shard *sh;       /* (K) */
    uint8_t *link;      /* (n, K) L_* flags */
    const float **ptrs; /* (n) scratch: a round's gradient slices */
    size_t P;           /* floats per model, 0 for the timing-only model */
    float *x;           /* (P) the server model */
    float *v;           /* (P) its momentum, or NULL without momentum */
    float *mean;        /* (P) bsp: a round's mean gradient, slice by slice */
    float *grads;       /* (n, P) bsp: the gradients stored for the open rounds */
    uint64_t min_clock; /* smallest clock of a live worker (UINT64_MAX: none live) */
    uint32_t at_min;    /* live workers holding it */
    uint64_t max_gap;   /* largest started-minus-slowest-finished gap seen */
    uint64_t updates;   /* optimizer steps applied to slices */
    uint64_t pulls;     /* pulls completed (all K slices in) */
    uint64_t pushes;    /* gradients pushed (K slices each) */
    uint64_t lost;      /* gradient slices lost with a down shard (asp, ssp) */
} ps;

static const char *const mode_names[] = { "bsp", "asp", "ssp" };
static const char *const placement_names[] = { "servers", "colocated" };

static int ps_configure(void *state, sim_cfg *cfg, const sim_scenario *sc, sim_err *err)
{
    ps *st = state;
    int64_t shards = 1;
    st->mode = PS_BSP;
    st->staleness = 2;
    st->placement = sc->servers >= 1 ? PLACE_SERVERS : PLACE_COLOCATED;
    int rc = sim_cfg_choice(cfg, "mode", mode_names, 3, &st->mode, err);
    if (rc == SIM_OK && st->mode == PS_SSP)
        rc = sim_cfg_int(cfg, "staleness", 0, INT32_MAX, &st->staleness, err);
    if (rc == SIM_OK)
        rc = sim_cfg_int(cfg, "shards", 1, SIM_MAX_WORKERS, &shards, err);
    if (rc == SIM_OK)
        rc = sim_cfg_choice(cfg, "placement", placement_names, 2, &st->placement, err);
    if (rc != SIM_OK)
        return rc;
    if (st->placement == PLACE_SERVERS && shards > (int64_t)sc->servers)
        return sim_cfg_fail(cfg, "shards", err,
                            "must be <= servers (%u) with placement \"servers\", got %" PRId64,
                            sc->servers, shards);
    if (st->placement == PLACE_COLOCATED && shards > (int64_t)sc->workers)
        return sim_cfg_fail(cfg, "shards", err,
                            "must be <= workers (%u) with placement \"colocated\", got %" PRId64,
                            sc->workers, shards);
    st->n = sc->workers;
    st->K = (uint32_t)shards;
    return SIM_OK;
}

/* Bookkeeping per worker and shard, the server's model and momentum, and with bsp the
 * round's mean and every worker's gradient. */
static uint64_t ps_memory(const void *state, const sim_scenario *sc, size_t num_params)
{
    const ps *st = state;
    uint64_t P = num_params, blocks = 1 + (sc->momentum > 0.0 ? 1 : 0);
    if (st->mode == PS_BSP)
        blocks += 1 + (uint64_t)st->n;
    return (uint64_t)st->n * (sizeof(ps_worker) + sizeof(float *) + st->K) +
           (uint64_t)st->K * sizeof(ps_shard) + blocks * P * 4;
}

static int alloc_state(ps *st, sim_err *err)
{
    st->w = calloc(st->n, sizeof(*st->w));
    st->sh = calloc(st->K, sizeof(*st->sh));
    st->link = calloc((size_t)st->n * st->K, sizeof(*st->link));
    st->ptrs = calloc(st->n, sizeof(*st->ptrs));
    if (st->w == NULL || st->sh == NULL || st->link == NULL || st->ptrs == NULL)
        return sim_err_set(err, SIM_ENOMEM, NULL, "out of memory");
    return SIM_OK;
}

static void ps_fini(void *state)
{
    ps *st = state;
    free(st->w);
    free(st->sh);
    free(st->link);
    free(st->ptrs);
    sim_tensor_free(st->x);
    sim_tensor_free(st->v);
    sim_tensor_free(st->mean);
    sim_tensor_free(st->grads);
}

static uint8_t *link_of(ps *st, uint32_t w, uint32_t k)
{
    return &st->link[(size_t)w * st->K + k];
}

/* Messages travel on the channel of their shard, with the round as sequence number. */
static msg_hdr hdr(int kind, uint32_t k, uint64_t round)
{
    msg_hdr h = { .channel = k, .kind = (uint32_t)kind, .seq = round };
    return h;
}

static bool host_down(sim_ctx *ctx, uint32_t host)
{
    return host < sim_ctx_workers(ctx) && sim_ctx_down(ctx, host);
}

static int broken(sim_err *err, const char *what, uint32_t w, uint32_t k)
{
    return sim_err_set(err, SIM_EINVAL, NULL, "ps: %s (worker %u, shard %u)", what, w, k);
}

/* ---- clocks (ssp gating, the gap statistic) ---- */

/* Recomputes the smallest clock of a live worker and how many hold it. Returns true if it
 * rose. */
static bool rescan_min(ps *st)
{
    uint64_t before = st->min_clock;
    st->min_clock = UINT64_MAX;
    st->at_min = 0;
    for (uint32_t w = 0; w < st->n; w++) {
        if (st->w[w].phase == W_DOWN)
            continue;
        if (st->w[w].clock < st->min_clock) {
            st->min_clock = st->w[w].clock;
            st->at_min = 1;
        } else if (st->w[w].clock == st->min_clock) {
            st->at_min++;
        }
    }
    return st->min_clock != UINT64_MAX && st->min_clock > before;
}

/* Worker w (live) leaves the clock bookkeeping, its clock advanced by one, or it went down:
 * called after the change with its clock before it. Returns true if the minimum rose. */
static bool clock_left(ps *st, uint64_t old)
{
    if (old != st->min_clock || --st->at_min > 0)
        return false;
    return rescan_min(st);
}

static bool allowed(const ps *st, uint32_t w)
{
    return st->mode != PS_SSP || st->w[w].clock <= st->min_clock + (uint64_t)st->staleness;
}

/* ---- messages ---- */

static int request(ps *st, sim_ctx *ctx, uint32_t w, uint32_t k, sim_err *err)
{
    const ps_shard *sh = &st->sh[k];
    if (host_down(ctx, sh->host))
        return SIM_OK; /* sent when the shard's host recovers */
    return msg_send(ctx, w, sh->host, PULL_REQUEST_BYTES, hdr(MSG_PULL, k, st->w[w].round), err);
}

static int reply(ps *st, sim_ctx *ctx, uint32_t k, uint32_t w, sim_err *err)
{
    const ps_shard *sh = &st->sh[k];
    return msg_send_model(ctx, sh->host, w, sh->bytes, hdr(MSG_SLICE, k, sh->round),
                          st->x != NULL ? st->x + sh->off : NULL, sh->len, err);
}

/* Pushes slice k of worker w's gradient, computed on the model of `round` (bsp). */
static int push(ps *st, sim_ctx *ctx, uint32_t w, uint32_t k, uint64_t round, sim_err *err)
{
    const ps_shard *sh = &st->sh[k];
    uint8_t *l = link_of(st, w, k);
    if (host_down(ctx, sh->host)) {
        if (st->mode == PS_BSP)
            *l |= L_PUSH_OUT; /* sent when the shard's host recovers */
        else
            st->lost++;
        return SIM_OK;
    }
    const float *g = sim_ctx_grad(ctx, w);
    *l |= L_PUSH_OUT;
    return msg_send_model(ctx, w, sh->host, sh->bytes, hdr(MSG_PUSH, k, round),
                          g != NULL ? g + sh->off : NULL, sh->len, err);
}

/* ---- workers ---- */

static int start_pull(ps *st, sim_ctx *ctx, uint32_t w, sim_err *err)
{
    ps_worker *pw = &st->w[w];
    pw->phase = W_PULL;
    pw->need = st->K;
    for (uint32_t k = 0; k < st->K; k++) {
        *link_of(st, w, k) |= L_AWAIT;
        int rc = request(st, ctx, w, k, err);
        if (rc != SIM_OK)
            return rc;
    }
    return SIM_OK;
}

static int try_start(ps *st, sim_ctx *ctx, uint32_t w, sim_err *err)
{
    if (!allowed(st, w)) {
        st->w[w].phase = W_BLOCKED;
        return SIM_OK;
    }
    return start_pull(st, ctx, w, err);
}

/* ssp: the slowest worker advanced; blocked workers it now allows start, in id order. */
static int wake(ps *st, sim_ctx *ctx, sim_err *err)
{
    for (uint32_t w = 0; w < st->n; w++) {
        if (st->w[w].phase != W_BLOCKED || !allowed(st, w))
            continue;
        int rc = start_pull(st, ctx, w, err);
        if (rc != SIM_OK)
            return rc;
    }
    return SIM_OK;
}

static int on_slice(ps *st, sim_ctx *ctx, uint32_t k, uint32_t w, uint64_t round, sim_err *err)
{
    const ps_shard *sh = &st->sh[k];
    ps_worker *pw = &st->w[w];
    uint8_t *l = link_of(st, w, k);
    if (!(*l & L_AWAIT) || (st->mode == PS_BSP && round != pw->round))
        return broken(err, "a slice nobody asked for", w, k);
    *l &= (uint8_t)~L_AWAIT;
    const float *p = sim_ctx_payload(ctx);
    if (p != NULL)
        sim_tensor_copy(sim_ctx_params(ctx, w) + sh->off, p, sh->len);
    if (--pw->need > 0)
        return SIM_OK;
    st->pulls++;
    uint64_t gap = pw->clock + 1 - st->min_clock;
    if (gap > st->max_gap)
        st->max_gap = gap;
    pw->phase = W_COMPUTE;
    return sim_ctx_compute(ctx, w, 0, err);
}

static int on_computed(ps *st, sim_ctx *ctx, uint32_t w, sim_err *err)
{
    ps_worker *pw = &st->w[w];
    for (uint32_t k = 0; k < st->K; k++) {
        int rc = push(st, ctx, w, k, pw->round, err);
        if (rc != SIM_OK)
            return rc;
    }
    sim_ctx_count(ctx, w, 1);
    st->pushes++;
    bool rose = clock_left(st, pw->clock++);
    pw->round++;
    int rc = try_start(st, ctx, w, err);
    return rc != SIM_OK || !rose ? rc : wake(st, ctx, err);
}

/* ---- shards ---- */

static uint32_t members(const ps *st, uint64_t round)
{
    uint32_t m = 0;
    for (uint32_t w = 0; w < st->n; w++)
        if (st->w[w].phase != W_DOWN && st->w[w].joined <= round)
            m++;
    return m;
}

/* bsp: completes shard k's open round if every live member has pushed (and something was
 * pushed, or a rejoined worker waits for the next round), then answers the queued pulls. */
static int close_round(ps *st, sim_ctx *ctx, uint32_t k, sim_err *err)
{
    ps_shard *sh = &st->sh[k];
    if (sh->pending > 0 || (sh->npushed == 0 && sh->nqueued == 0) || host_down(ctx, sh->host))
        return SIM_OK;
    size_t m = 0;
    for (uint32_t w = 0; w < st->n; w++) {
        uint8_t *l = link_of(st, w, k);
        if (!(*l & L_PUSHED))
            continue;
        *l &= (uint8_t)~L_PUSHED;
        if (st->grads != NULL)
            st->ptrs[m] = st->grads + (size_t)w * st->P + sh->off;
        m++;
    }
    if (m > 0) {
        if (st->P > 0) {
            sim_tensor_mean(st->mean + sh->off, st->ptrs, m, sh->len);
            sim_ctx_step_range(ctx, st->x + sh->off, st->v != NULL ? st->v + sh->off : NULL,
                               st->mean + sh->off, sh->len);
        }
        st->updates++;
    }
    sh->round++;
    sh->npushed = 0;
    sh->pending = members(st, sh->round);
    sh->nqueued = 0;
    for (uint32_t w = 0; w < st->n; w++) {
        uint8_t *l = link_of(st, w, k);
        if (!(*l & L_QUEUED))
            continue;
        *l &= (uint8_t)~L_QUEUED;
        int rc = reply(st, ctx, k, w, err);
        if (rc != SIM_OK)
            return rc;
    }
    return SIM_OK;
}

static int on_pull(ps *st, sim_ctx *ctx, uint32_t k, uint32_t w, uint64_t round, sim_err *err)
{
    ps_shard *sh = &st->sh[k];
    uint8_t *l = link_of(st, w, k);
    if (st->mode == PS_BSP) {
        if (round == sh->round)
            return reply(st, ctx, k, w, err);
        if (round != sh->round + 1 || (*l & L_QUEUED))
            return broken(err, "a pull request for a round out of reach", w, k);
    } else if (!(*l & L_PUSH_OUT)) {
        return reply(st, ctx, k, w, err);
    }
    *l |= L_QUEUED;
    sh->nqueued++;
    return st->mode == PS_BSP ? close_round(st, ctx, k, err) : SIM_OK;
}

static int on_push(ps *st, sim_ctx *ctx, uint32_t k, uint32_t w, uint64_t round, sim_err *err)
{
    ps_shard *sh = &st->sh[k];
    uint8_t *l = link_of(st, w, k);
    const float *g = sim_ctx_payload(ctx);
    *l &= (uint8_t)~L_PUSH_OUT;
    if (st->mode == PS_BSP) {
        if (round != sh->round || (*l & L_PUSHED) || sh->pending == 0)
            return broken(err, "a gradient for a round not open", w, k);
        if (g != NULL)
            sim_tensor_copy(st->grads + (size_t)w * st->P + sh->off, g, sh->len);
        *l |= L_PUSHED;
        sh->npushed++;
        sh->pending--;
        return close_round(st, ctx, k, err);
    }
    if (g != NULL)
        sim_ctx_step_range(ctx, st->x + sh->off, st->v != NULL ? st->v + sh->off : NULL, g,
                           sh->len);
    st->updates++;
    if (!(*l & L_QUEUED))
        return SIM_OK;
    *l &= (uint8_t)~L_QUEUED;
    sh->nqueued--;
    return reply(st, ctx, k, w, err);
}

/* ---- failures ---- */

/* Shard k's host went down: in asp and ssp the pushes in flight to it are lost, and the
 * pull requests that waited for them are answered by nobody (retried on recovery). */
static void shard_lost(ps *st, uint32_t k)
{
    if (st->mode == PS_BSP)
        return;
    for (uint32_t w = 0; w < st->n; w++) {
        uint8_t *l = link_of(st, w, k);
        if (*l & L_PUSH_OUT)
            st->lost++;
        if (*l & L_QUEUED)
            st->sh[k].nqueued--;
        *l &= (uint8_t) ~(L_PUSH_OUT | L_QUEUED);
    }
}

/* Shard k's host is back: the workers resend what it lost, then a bsp round may close. */
static int shard_back(ps *st, sim_ctx *ctx, uint32_t k, sim_err *err)
{
    for (uint32_t w = 0; w < st->n; w++) {
        uint8_t l = *link_of(st, w, k);
        int rc = SIM_OK;
        if (st->w[w].phase == W_DOWN)
            continue;
        if (l & L_PUSH_OUT)
            rc = st->w[w].phase == W_PULL ? push(st, ctx, w, k, st->w[w].round - 1, err)
                                          : broken(err, "a lost push with its gradient gone", w, k);
        if (rc == SIM_OK && (l & L_AWAIT) && !(l & L_QUEUED))
            rc = request(st, ctx, w, k, err);
        if (rc != SIM_OK)
            return rc;
    }
    return st->mode == PS_BSP ? close_round(st, ctx, k, err) : SIM_OK;
}

static int worker_down(ps *st, sim_ctx *ctx, uint32_t w, sim_err *err)
{
    ps_worker *pw = &st->w[w];
    if (pw->phase == W_DOWN)
        return SIM_OK;
    for (uint32_t k = 0; k < st->K; k++) {
        ps_shard *sh = &st->sh[k];
        uint8_t *l = link_of(st, w, k);
        if (st->mode == PS_BSP && pw->joined <= sh->round) {
            if (*l & L_PUSHED)
                sh->npushed--; /* its gradient is discarded */
            else
                sh->pending--;
        }
        if (*l & L_QUEUED)
            sh->nqueued--;
        *l = 0;
    }
    pw->phase = W_DOWN;
    bool rose = clock_left(st, pw->clock);
    if (st->placement == PLACE_COLOCATED && w < st->K)
        shard_lost(st, w);
    for (uint32_t k = 0; k < st->K && st->mode == PS_BSP; k++) {
        int rc = close_round(st, ctx, k, err);
        if (rc != SIM_OK)
            return rc;
    }
    return rose ? wake(st, ctx, err) : SIM_OK;
}

/* Worker w joins (at the start, or recovered): its clock rises to the slowest live
 * worker's, in bsp it becomes a member from the newest round any shard has reached, and it
 * starts an iteration. */
static int join(ps *st, sim_ctx *ctx, uint32_t w, sim_err *err)
{
    ps_worker *pw = &st->w[w];
    if (st->min_clock != UINT64_MAX && pw->clock < st->min_clock)
        pw->clock = st->min_clock;
    pw->phase = W_BLOCKED;
    if (st->min_clock == UINT64_MAX)
        rescan_min(st);
    else if (pw->clock == st->min_clock)
        st->at_min++;
    if (st->mode == PS_BSP) {
        uint64_t newest = 0;
        for (uint32_t k = 0; k < st->K; k++)
            newest = st->sh[k].round > newest ? st->sh[k].round : newest;
        pw->joined = pw->round = newest;
        for (uint32_t k = 0; k < st->K; k++)
            if (st->sh[k].round == newest)
                st->sh[k].pending++;
    }
    return try_start(st, ctx, w, err);
}

static int worker_up(ps *st, sim_ctx *ctx, uint32_t w, sim_err *err)
{
    if (st->w[w].phase != W_DOWN)
        return SIM_OK;
    if (st->placement == PLACE_COLOCATED && w < st->K) {
        int rc = shard_back(st, ctx, w, err);
        if (rc != SIM_OK)
            return rc;
    }
    return join(st, ctx, w, err);
}

/* ---- the run ---- */

static int ps_start(void *state, sim_ctx *ctx, sim_err *err)
{
    ps *st = state;
    size_t P = sim_ctx_num_params(ctx);
    uint64_t S = sim_ctx_model_bytes(ctx);
    st->P = P;
    int rc = alloc_state(st, err);
    if (rc != SIM_OK)
        return rc;
    for (uint32_t k = 0; k < st->K; k++) {
        ps_shard *sh = &st->sh[k];
        sh->host = st->placement == PLACE_SERVERS ? st->n + k : k;
        sh->off = k * (P / st->K) + (k < P % st->K ? k : P % st->K);
        sh->len = P / st->K + (k < P % st->K ? 1 : 0);
        sh->bytes = S / st->K + (k < S % st->K ? 1 : 0);
    }
    if (P > 0) {
        st->x = sim_tensor_alloc(P);
        if (sim_ctx_scenario(ctx)->momentum > 0.0)
            st->v = sim_tensor_alloc(P);
        if (st->mode == PS_BSP) {
            st->mean = sim_tensor_alloc(P);
            st->grads = sim_tensor_alloc((size_t)st->n * P);
        }
        if (st->x == NULL || (sim_ctx_scenario(ctx)->momentum > 0.0 && st->v == NULL) ||
            (st->mode == PS_BSP && (st->mean == NULL || st->grads == NULL)))
            return sim_err_set(err, SIM_ENOMEM, NULL, "out of memory");
        sim_tensor_copy(st->x, sim_ctx_params(ctx, 0), P);
        if (st->v != NULL)
            sim_tensor_zero(st->v, P);
        sim_ctx_set_eval_params(ctx, st->x);
    }
    st->min_clock = UINT64_MAX;
    for (uint32_t w = 0; w < st->n; w++) {
        if (sim_ctx_down(ctx, w))
            continue;
        rc = join(st, ctx, w, err);
        if (rc != SIM_OK)
            return rc;
    }
    return SIM_OK;
}

static int on_message(ps *st, sim_ctx *ctx, const sim_event *ev, sim_err *err)
{
    uint32_t src = (uint32_t)ev->src, dst = (uint32_t)ev->dst;
    msg_hdr h = msg_read(ev);
    uint32_t k = h.channel;
    uint64_t arg = h.seq;
    if (k >= st->K)
        return broken(err, "a message for no shard", src, k);
    switch (h.kind) {
    case MSG_PULL:
        return on_pull(st, ctx, k, src, arg, err);
    case MSG_SLICE:
        return on_slice(st, ctx, k, dst, arg, err);
    case MSG_PUSH:
        return on_push(st, ctx, k, src, arg, err);
    default:
        return broken(err, "a message of no known kind", src, k);
    }
}

static int ps_on_event(void *state, sim_ctx *ctx, const sim_event *ev, sim_err *err)
{
    ps *st = state;
    switch (ev->kind) {
    case SIM_EV_COMPUTED:
        return on_computed(st, ctx, (uint32_t)ev->dst, err);
    case SIM_EV_MSG:
        return on_message(st, ctx, ev, err);
    case SIM_EV_WORKER_DOWN:
        return worker_down(st, ctx, (uint32_t)ev->dst, err);
    case SIM_EV_WORKER_UP:
        return worker_up(st, ctx, (uint32_t)ev->dst, err);
    default:
        return sim_err_set(err, SIM_EINVAL, NULL, "ps: unexpected event kind %u", ev->kind);
    }
}

static void ps_report(const void *state, const sim_ctx *ctx, sim_report *out)
{
    (void)ctx;
    const ps *st = state;
    if (st->mode == PS_BSP) {
        uint64_t rounds = UINT64_MAX;
        for (uint32_t k = 0; k < st->K; k++)
            rounds = st->sh[k].round < rounds ? st->sh[k].round : rounds;
        sim_report_add(out, "rounds", (double)(st->K > 0 ? rounds : 0));
    }
    sim_report_add(out, "updates", (double)st->updates);
    sim_report_add(out, "max_clock_gap", (double)st->max_gap);
    sim_report_add(out, "pulls", (double)st->pulls);
    sim_report_add(out, "pushes", (double)st->pushes);
    sim_report_add(out, "lost_pushes", (double)st->lost);
    /* The server model's FNV-1a (as workers.csv's params_fnv), cut to the 53 bits a double
     * holds exactly. */
    if (st->x != NULL)
        sim_report_add(out, "server_params_fnv53",
                       (double)(sim_tensor_checksum(st->x, st->P) & ((UINT64_C(1) << 53) - 1)));
}

const proto_ops proto_ps = {
    .name = "ps",
    .summary = "parameter server over K shards: bsp (mean per round), asp, ssp (staleness s)",
    .state_size = sizeof(ps),
    .configure = ps_configure,
    .start = ps_start,
    .on_event = ps_on_event,
    .report = ps_report,
    .memory = ps_memory,
    .fini = ps_fini,
};
