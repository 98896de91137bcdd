/* All-Reduce SGD over a ring (PROTOCOLS §1.1).
 *
 * Each iteration every live worker computes its gradient, then joins a ring all-reduce of
 * S bytes (kit/coll.h: 2(N-1) steps of S/N bytes, chunks sent in order), so the
 * collective starts only when the slowest worker is ready: with one flow per link a round
 * takes exactly 2(N-1) * (path latency + (S/N)/B) after the last worker finishes
 * computing. A worker whose round is complete counts an iteration and starts the next.
 *
 * With a real model, the collective's result is the mean of the members' gradients, summed
 * in worker order once per round (so every replica gets the same bits) and applied by each
 * worker when its round completes: replicas that start equal stay bitwise identical.
 *
 * Averaging-only runs (model "vector", PROTOCOLS 1.5): the ring reduces the models instead
 * of the (zero) gradients, and every member takes the mean, unless some member sat the round
 * out (a dropout rule): then nothing changes that round.
 *
 * Algorithms (`algorithm`, kit/coll.h): the flat ring above (default), hierarchical over
 * the hosts' GPUs, NCCL's double binary trees, or auto, ring or trees per round as NCCL's tuning
 * model would choose; the rounds, their means and their steps are the same whichever moves the
 * bytes.
 *
 * Buckets (bucket_mb > 0, as PyTorch DDP's bucket_cap_mb, in MiB): the layers' gradients
 * (sim_ctx_layer_bytes, in backward order, a layer never split) are grouped into buckets, a
 * bucket closing once it holds bucket_mb or more, the first once it holds first_bucket_mb (1 MiB,
 * DDP's first bucket) or more, as DDP builds them from the order the gradients become ready
 * (torch 1.13: dist._DEFAULT_FIRST_BUCKET_BYTES; Reducer::rebuild_buckets in
 * torch/csrc/distributed/c10d/reducer.cpp). Each bucket is one ring round of its own
 * bytes; a worker joins bucket b's round when backward has produced it (the gradient of the
 * bucket's last layer is ready, sim_ctx_layer_ns at SIM_LAYER_GRAD_READY; the last bucket, which
 * holds layer 0, at SIM_EV_COMPUTED) and its round of bucket b-1 is complete: the rings are queued
 * in order and overlap the rest of backward. On an idle star the iteration then ends at E_B, E_b =
 * max(t_b, E_{b-1}) + 2(N-1)(L + S_b/(N B)), t_b the latest member's ready time of bucket b. The
 * step is applied when the last bucket's round completes, with the mean of the whole gradients
 * (element-wise, in worker order: the bits do not depend on the buckets). With one bucket
 * (bucket_mb 0, or a model smaller than a bucket) the round starts at SIM_EV_COMPUTED, as above.
 *
 * Failures: the ring is rebuilt over the live workers (a new generation; on a failure the kit
 * does it, its failure policy); messages of older generations are ignored, and workers that
 * had finished computing restart the collective of their current round in the new ring (with
 * buckets: every live worker starts its current iteration's buckets again from the first, once
 * coll_ring_generation shows the restart). A recovered worker rejoins by computing.
 */
#include <math.h>

#include "kit/coll.h"
#include "runtime/proto.h"
#include "sim/tensor.h"

enum {
    AR_EV_BUCKET = SIM_EV_USER, /* dst's next bucket may be ready: arg[0] = its index */
    AR_EV_COLL                  /* the ring's timer (kit/coll.h: the end of an instant) */
};

/* Largest bucket_mb accepted (MiB): far beyond any model. */
#define AR_MAX_BUCKET_MB 1e9

typedef struct allreduce {
    coll_hub *hub; /* one channel: the ring's (1) */
    coll_ring *ring;
    uint32_t n;             /* workers */
    size_t layers;          /* the timing's layers */
    int algorithm;          /* algorithm: COLL_ALGO_* */
    double bucket_mb;       /* bucket_mb: 0 for one bucket */
    double first_bucket_mb; /* first_bucket_mb: the first bucket's cap */
    /* Buckets (nb > 1 only; nb == 1 is the one-round path). */
    uint32_t nb;           /* buckets */
    uint64_t *bucket_size; /* (layers) bytes of each, in backward order; the first nb used */
    size_t *bucket_layer;  /* (layers) the layer whose gradient completes it (its lowest index) */
    coll_mean *mean;       /* the round's mean gradient (real models only) */
    /* The workers the next ring change visits (buckets only): all at an instant's first,
     * then those the last one left doing something (ring_changed). */
    coll_idset visit;
    bool joins;        /* a worker joined the ring since the last coll_ring_unjoin_all */
    sim_time swept_at; /* the instant of the last ring change (-1 before the first) */
    /* Averaging-only runs: the models' mean, unless someone sat the round out. */
    uint64_t avg_round;  /* averaging rounds completed (the dropout draws' round) */
    bool decided;        /* whether someone sat out avg_round is known */
    bool any_out;        /* someone did: the round changes nothing */
    uint64_t rounds_out; /* rounds without progress */
} allreduce;

/* A worker's state (sim_ctx_worker), used with buckets only. */
typedef struct ar_worker {
    uint32_t joined;   /* buckets of the current iteration joined */
    uint32_t reduced;  /* and reduced */
    bool busy;         /* computing: from compute() to SIM_EV_COMPUTED */
    bool waiting;      /* busy, nothing joined, its first bucket's timer (timer_at) pending */
    sim_time timer_at; /* when its latest AR_EV_BUCKET timer fires (0: none yet) */
} ar_worker;

static ar_worker *worker(sim_ctx *ctx, uint32_t w)
{
    return sim_ctx_worker(ctx, w);
}

static int ar_configure(void *state, sim_cfg *cfg, const proto_setup *setup, sim_err *err)
{
    static const char *const algorithms[] = { "ring", "hierarchical", "tree", "auto",
                                              "halving_doubling" };
    allreduce *st = state;
    st->n = setup->workers;
    st->layers = setup->layers;
    st->bucket_mb = 25.0;
    st->first_bucket_mb = 1.0;
    st->algorithm = COLL_ALGO_RING;
    int rc = sim_cfg_double(cfg, "bucket_mb", 0.0, AR_MAX_BUCKET_MB, &st->bucket_mb, err);
    if (rc == 0)
        rc = sim_cfg_double(cfg, "first_bucket_mb", 0.0, AR_MAX_BUCKET_MB, &st->first_bucket_mb,
                            err);
    return rc != 0 ? rc : sim_cfg_choice(cfg, "algorithm", algorithms, 5, &st->algorithm, err);
}

/* Whether the run may have several buckets: a cap and more than one layer. */
static bool bucketed(const allreduce *st)
{
    return st->bucket_mb > 0.0 && st->layers > 1;
}

static int on_done(void *ud, sim_ctx *ctx, uint32_t w, const coll_info *info, sim_err *err);

/* The run's arena: the kit's ring over every worker and the round's mean (one model); with
 * buckets, room for one bucket per layer at most. */
static void ar_buffers(void *state, sim_arena *a, size_t num_params)
{
    allreduce *st = state;
    st->hub = coll_hub_create(a, 1, AR_EV_COLL);
    st->ring = coll_ring_create(a, st->hub, st->n, st->n, on_done, st);
    coll_ring_set_algorithm(st->ring, a, st->n, st->algorithm);
    st->mean = coll_mean_create(a, num_params, st->n);
    if (!bucketed(st))
        return;
    st->bucket_size = sim_arena_alloc(a, st->layers, sizeof(*st->bucket_size));
    st->bucket_layer = sim_arena_alloc(a, st->layers, sizeof(*st->bucket_layer));
    st->visit = coll_idset_create(a, st->n);
}

/* Groups the layers' bytes into buckets in backward order (DDP's rule: a layer is added, then
 * the bucket closes if it holds its cap or more, `first` for the first bucket, `cap` for the
 * others); the last bucket holds layer 0. Counts them into st->nb and, with `fill`, writes their
 * sizes and layers. */
static void group(allreduce *st, const sim_ctx *ctx, uint64_t first, uint64_t cap, bool fill)
{
    size_t nl;
    sim_ctx_layers(ctx, &nl);
    uint32_t nb = 0;
    uint64_t acc = 0;
    for (size_t i = nl; i-- > 0;) {
        acc += sim_ctx_layer_bytes(ctx, i);
        if (i == 0 && acc == 0 && nb > 0) { /* an empty layer 0 joins the last bucket */
            if (fill)
                st->bucket_layer[nb - 1] = 0;
            break;
        }
        if ((acc >= (nb == 0 ? first : cap) && acc > 0) || i == 0) {
            if (fill) {
                st->bucket_size[nb] = acc;
                st->bucket_layer[nb] = i;
            }
            nb++;
            acc = 0;
        }
    }
    st->nb = nb;
}

/* The buckets, into the arena's room for one per layer (a bucket holds a layer at least). */
static void buckets_init(allreduce *st, const sim_ctx *ctx)
{
    st->nb = 1;
    if (st->bucket_size == NULL) /* no cap, or one layer */
        return;
    uint64_t cap = (uint64_t)llround(st->bucket_mb * 1048576.0);
    uint64_t first = (uint64_t)llround(st->first_bucket_mb * 1048576.0);
    group(st, ctx, first, cap, false);
    if (st->nb <= 1) {
        st->nb = 1;
        return;
    }
    group(st, ctx, first, cap, true);
    coll_ring_set_round_bytes(st->ring, st->bucket_size, st->nb);
}

/* Worker w joins its next bucket's round if backward has produced that bucket and its round
 * of the previous bucket is complete; if only the bucket is missing, a timer wakes it when
 * the bucket will be ready (the last bucket's is SIM_EV_COMPUTED), unless one it has pending
 * wakes it then: the second would find done what it came for (issue 38: each of N failures at
 * one instant gave every worker waiting for its first bucket one more timer, N² events).
 * Idempotent: a timer that finds nothing to do is ignored. */
static int try_join(allreduce *st, sim_ctx *ctx, uint32_t w, sim_err *err)
{
    ar_worker *a = worker(ctx, w);
    uint32_t b = a->joined;
    a->waiting = false;
    coll_idset_put(&st->visit, w, true);
    if (sim_ctx_down(ctx, w) || b >= st->nb || a->reduced < b)
        return SIM_OK;
    if (a->busy) {
        if (b + 1 == st->nb)
            return SIM_OK;
        sim_time t = sim_ctx_layer_ns(ctx, w, st->bucket_layer[b], SIM_LAYER_GRAD_READY);
        sim_time now = sim_ctx_now(ctx);
        if (t > now) {
            a->waiting = b == 0 && a->reduced == 0;
            if (t == a->timer_at)
                return SIM_OK; /* one is pending at t */
            a->timer_at = t;
            return sim_ctx_timer(ctx, t - now, AR_EV_BUCKET, (int32_t)w, b, NULL, err);
        }
    }
    a->joined++;
    st->joins = true;
    return coll_ring_join(st->ring, ctx, w, err);
}

/* Starts worker w's next iteration (tag: its round) and, with buckets, its first bucket. */
static int compute(allreduce *st, sim_ctx *ctx, uint32_t w, uint64_t tag, sim_err *err)
{
    int rc = sim_ctx_compute(ctx, w, tag, err);
    if (rc != SIM_OK || st->nb <= 1)
        return rc;
    ar_worker *a = worker(ctx, w);
    a->joined = a->reduced = 0;
    a->busy = true;
    return try_join(st, ctx, w, err);
}

/* The ring changes members: w recovered, or w failed (the kit restarts the ring over its other
 * members that are up by itself, coll_hub_worker_down). With buckets every live worker starts
 * its current iteration's buckets again from the first, so that round k of the new ring is
 * bucket k mod nb for every member: nobody is joined while the ring restarts (the restart
 * would send the joined members' rounds at once), and once coll_ring_generation shows that it
 * restarted, every live worker joins its first bucket when backward has produced it. The
 * recovered worker w is not among them: it has no iteration yet, and joins bucket 0 when the one
 * it starts next (compute, called after this) has produced it; joined there would have put it in
 * round 0 before computing, its own count one round behind the ring's from then on.
 * The workers are visited in id order: all of them at an instant's first change, then those
 * the last change left doing something (st->visit): a worker down, or waiting for its first
 * bucket's timer past the instant with its counts at 0, is one to which this does nothing, and
 * one instant's N failures visit each worker once, not N times (issue 38). Nobody joined since
 * the last change: the flags are out already. */
static int ring_changed(allreduce *st, sim_ctx *ctx, uint32_t w, bool up, sim_err *err)
{
    uint32_t gen = coll_ring_generation(st->ring);
    if (st->nb > 1 && st->joins)
        coll_ring_unjoin_all(st->ring);
    st->joins = false;
    int rc = up ? coll_ring_worker_changed(st->ring, ctx, w,
                                           sim_ctx_layer_bytes(ctx, SIM_LAYERS_ALL), err)
                : coll_hub_worker_down(st->hub, ctx, w, err);
    if (st->nb <= 1 || rc != SIM_OK)
        return rc;
    bool restarted = coll_ring_generation(st->ring) != gen;
    sim_time now = sim_ctx_now(ctx);
    if (now != st->swept_at)
        coll_idset_fill(&st->visit);
    st->swept_at = now;
    for (uint32_t v = coll_idset_next(&st->visit, 0); v < st->n && rc == SIM_OK;
         v = coll_idset_next(&st->visit, v + 1)) {
        if (up && v == w)
            continue; /* it computes first (compute, after this), then joins bucket 0 */
        ar_worker *a = worker(ctx, v);
        if (restarted) {
            a->joined = a->reduced = 0;
            rc = try_join(st, ctx, v, err);
        } else if (!sim_ctx_down(ctx, v) && a->joined > a->reduced) {
            st->joins = true;
            rc = coll_ring_join(st->ring, ctx, v, err); /* not a member's change: as before */
        }
        bool idle = sim_ctx_down(ctx, v) || (a->waiting && a->timer_at > now);
        coll_idset_put(&st->visit, v, !idle);
    }
    return rc;
}

static const float *gradient(void *ud, sim_ctx *ctx, uint32_t w)
{
    (void)ud;
    return sim_ctx_grad(ctx, w);
}

static const float *model(void *ud, sim_ctx *ctx, uint32_t w)
{
    (void)ud;
    return sim_ctx_params_view(ctx, w);
}

/* Averaging only (PROTOCOLS 1.5): every member gets the mean of the models, or, if any
 * member sat the round out, nothing changes. */
static void average(allreduce *st, sim_ctx *ctx, uint32_t w, uint64_t round)
{
    if (!st->decided) {
        st->any_out = false;
        for (uint32_t i = 0; i < coll_ring_size(st->ring);
             i++) /* one draw per member, ring order */
            st->any_out =
                sim_ctx_dropped(ctx, coll_ring_member(st->ring, i), st->avg_round) || st->any_out;
        st->decided = true;
        st->rounds_out += st->any_out ? 1 : 0;
    }
    if (!st->any_out) {
        const float *m = coll_mean_of(st->mean, st->ring, ctx, round, model, st);
        sim_tensor_copy(sim_ctx_params(ctx, w), m, sim_ctx_num_params(ctx));
    }
}

static int on_done(void *ud, sim_ctx *ctx, uint32_t w, const coll_info *info, sim_err *err)
{
    allreduce *st = ud;
    uint64_t round = info->round;
    if (st->nb > 1 && ++worker(ctx, w)->reduced < st->nb)
        return try_join(st, ctx, w, err);
    if (sim_ctx_budget(ctx).averaging_only) { /* the model differs: averaging, no steps */
        average(st, ctx, w, round);
    } else {
        /* One mean per ring generation and round: that pair is the step's key, so the
         * replicas, which share their storage while equal, compute the step once. */
        const float *g = coll_mean_of(st->mean, st->ring, ctx, round, gradient, st);
        uint64_t key = (uint64_t)coll_ring_generation(st->ring) << 40 ^ round;
        sim_ctx_step(ctx, (sim_target){ .w = w },
                     &(sim_step){ .lr = coll_mean_lr(st->mean),
                                  .momentum = sim_ctx_rates(ctx).momentum,
                                  .keyed = true,
                                  .key = key },
                     g);
    }
    sim_ctx_count(ctx, w, 1);
    if (coll_ring_round_complete(st->ring, round)) {
        st->avg_round++;
        st->decided = false;
        sim_ctx_round_end(ctx);
    }
    return compute(st, ctx, w, round / st->nb + 1, err);
}

static int ar_start(void *state, sim_ctx *ctx, sim_err *err)
{
    allreduce *st = state;
    int rc = coll_hub_check(st->hub, err);
    if (rc != SIM_OK)
        return rc;
    buckets_init(st, ctx);
    st->swept_at = -1;
    rc = coll_ring_reset_live(st->ring, ctx, sim_ctx_layer_bytes(ctx, SIM_LAYERS_ALL), err);
    for (uint32_t i = 0; i < coll_ring_size(st->ring) && rc == SIM_OK; i++)
        rc = compute(st, ctx, coll_ring_member(st->ring, i), 0, err);
    return rc;
}

static int ar_on_event(void *state, sim_ctx *ctx, const sim_event *ev, sim_err *err)
{
    allreduce *st = state;
    uint32_t w = (uint32_t)ev->dst;
    switch (ev->kind) {
    case SIM_EV_COMPUTED:
        if (st->nb <= 1)
            return coll_ring_join(st->ring, ctx, w, err);
        worker(ctx, w)->busy = false;
        return try_join(st, ctx, w, err);
    case AR_EV_BUCKET:
        return st->nb > 1 ? try_join(st, ctx, w, err) : SIM_OK;
    case AR_EV_COLL:
    case SIM_EV_MSG: {
        bool handled;
        int rc = coll_hub_on_event(st->hub, ctx, ev, &handled, err);
        if (rc == SIM_OK && !handled)
            rc = sim_err_set(err, SIM_EINVAL, NULL, "allreduce: message on no ring");
        return rc;
    }
    case SIM_EV_WORKER_DOWN:
        if (st->nb > 1)
            worker(ctx, w)->busy = false; /* its iteration is lost */
        return ring_changed(st, ctx, w, false, err);
    case SIM_EV_WORKER_UP: {
        int rc = ring_changed(st, ctx, w, true, err);
        return rc != SIM_OK ? rc : compute(st, ctx, w, 0, err);
    }
    default:
        return sim_err_set(err, SIM_EINVAL, NULL, "allreduce: unexpected event kind %u", ev->kind);
    }
}

static coll_stats ring_stats(const allreduce *st)
{
    coll_stats s;
    coll_ring_stats(st->ring, &s);
    return s;
}

static void ar_report(const void *state, const sim_ctx *ctx, sim_report *out)
{
    (void)ctx;
    const allreduce *st = state;
    sim_report_add(out, "ring_restarts", (double)ring_stats(st).restarts);
    sim_report_add(out, "stale_messages", (double)ring_stats(st).stale);
    if (st->nb > 1)
        sim_report_add(out, "buckets", (double)st->nb);
    if (st->rounds_out > 0)
        sim_report_add(out, "rounds_sat_out", (double)st->rounds_out);
    if (st->algorithm != COLL_ALGO_RING) {
        uint64_t rounds[5];
        coll_ring_algorithm_rounds(st->ring, rounds);
        sim_report_add(out, "rounds_ring", (double)rounds[COLL_ALGO_RING]);
        sim_report_add(out, "rounds_hierarchical", (double)rounds[COLL_ALGO_HIERARCHICAL]);
        sim_report_add(out, "rounds_tree", (double)rounds[COLL_ALGO_TREE]);
        if (st->algorithm == COLL_ALGO_HALVING_DOUBLING)
            sim_report_add(out, "rounds_halving_doubling",
                           (double)rounds[COLL_ALGO_HALVING_DOUBLING]);
    }
}

const proto_ops proto_allreduce = {
    .name = "allreduce",
    .summary = "ring all-reduce SGD: reduce-scatter and all-gather, 2(N-1) steps of S/N bytes",
    .state_size = sizeof(allreduce),
    .worker_size = sizeof(ar_worker),
    .rounds = true,
    .configure = ar_configure,
    .start = ar_start,
    .on_event = ar_on_event,
    .buffers = ar_buffers,
    .report = ar_report,
};
