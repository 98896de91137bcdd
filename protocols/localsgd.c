/* Local SGD (PROTOCOLS §8, the HPSGD baseline): H local steps, then a model all-reduce.
 *
 * Each live worker runs `local_steps` SGD iterations on its own model (computing, then
 * applying its own gradient), then joins a ring all-reduce of the model (S bytes,
 * kit/coll.h). When its round completes its model becomes the mean of the members'
 * models, summed in worker order once per round, so after every averaging round all
 * replicas are bitwise identical; then it starts the next H steps. local_steps = 1 averages
 * models after every step. Every local step is an iteration (throughput counts them).
 *
 * `algorithm` (ring, hierarchical, halving_doubling, tree, auto: kit/coll.h) carries the
 * round's bytes as allreduce's does; read only when given, the flat ring otherwise.
 *
 * Failures: as all-reduce, the ring is rebuilt over the live workers; a recovered worker
 * starts H local steps from its own (stale) model and is averaged with the others at the
 * next round.
 */
#include "kit/coll.h"
#include "runtime/proto.h"
#include "sim/tensor.h"

/* The ring's timer (its restart at the end of an instant). */
enum {
    LS_EV_COLL = SIM_EV_USER
};

typedef struct localsgd {
    coll_hub *hub; /* one channel: the ring's (1) */
    coll_ring *ring;
    uint32_t n;
    int64_t local_steps; /* H */
    int algorithm;       /* algorithm: COLL_ALGO_* */
    uint64_t rounds;     /* averaging rounds completed (by worker 0's count) */
    coll_mean *mean;     /* the round's mean model (real models only) */
} localsgd;

/* A worker's state (sim_ctx_worker). */
typedef struct ls_worker {
    uint32_t steps; /* local steps done since the last averaging */
} ls_worker;

static int ls_configure(void *state, sim_cfg *cfg, const proto_setup *setup, sim_err *err)
{
    static const char *const algorithms[] = { "ring", "hierarchical", "tree", "auto",
                                              "halving_doubling" };
    localsgd *st = state;
    st->local_steps = 4;
    st->n = setup->workers;
    st->algorithm = COLL_ALGO_RING;
    int rc = sim_cfg_int(cfg, "local_steps", 1, 1000000, &st->local_steps, err);
    if (rc == 0) /* read only when given: listed as valid all the same */
        rc = sim_cfg_allow(cfg, "algorithm", err);
    if (rc == 0 && sim_cfg_has(cfg, "algorithm")) /* not written when absent: the ring */
        rc = sim_cfg_choice(cfg, "algorithm", algorithms, 5, &st->algorithm, err);
    return rc;
}

static const float *model(void *ud, sim_ctx *ctx, uint32_t w)
{
    (void)ud;
    return sim_ctx_params_view(ctx, w);
}

static int on_done(void *ud, sim_ctx *ctx, uint32_t w, const coll_info *info, sim_err *err)
{
    localsgd *st = ud;
    uint64_t round = info->round;
    sim_tensor_copy(sim_ctx_params(ctx, w), coll_mean_of(st->mean, st->ring, ctx, round, model, st),
                    sim_ctx_num_params(ctx));
    if (w == coll_ring_member(st->ring, 0))
        st->rounds++;
    if (coll_ring_round_complete(st->ring, round))
        sim_ctx_round_end(ctx);
    ((ls_worker *)sim_ctx_worker(ctx, w))->steps = 0;
    return sim_ctx_compute(ctx, w, 0, err);
}

static int on_computed(localsgd *st, sim_ctx *ctx, uint32_t w, sim_err *err)
{
    sim_ctx_step(ctx, (sim_target){ .w = w }, NULL, sim_ctx_grad(ctx, w));
    sim_ctx_count(ctx, w, 1);
    ls_worker *a = sim_ctx_worker(ctx, w);
    if (++a->steps < st->local_steps)
        return sim_ctx_compute(ctx, w, a->steps, err);
    return coll_ring_join(st->ring, ctx, w, err);
}

/* The run's arena: the kit's ring over every worker and the round's mean (one model). */
static void ls_buffers(void *state, sim_arena *a, size_t num_params)
{
    localsgd *st = state;
    st->hub = coll_hub_create(a, 1, LS_EV_COLL);
    st->ring = coll_ring_create(a, st->hub, st->n, st->n, on_done, st);
    coll_ring_set_algorithm(st->ring, a, st->n, st->algorithm);
    st->mean = coll_mean_create(a, num_params, st->n);
}

static int ls_start(void *state, sim_ctx *ctx, sim_err *err)
{
    localsgd *st = state;
    int rc = coll_hub_check(st->hub, err);
    if (rc != SIM_OK)
        return rc;
    rc = coll_ring_reset_live(st->ring, ctx, sim_ctx_layer_bytes(ctx, SIM_LAYERS_ALL), err);
    for (uint32_t i = 0; i < coll_ring_size(st->ring) && rc == SIM_OK; i++)
        rc = sim_ctx_compute(ctx, coll_ring_member(st->ring, i), 0, err);
    return rc;
}

static int ls_on_event(void *state, sim_ctx *ctx, const sim_event *ev, sim_err *err)
{
    localsgd *st = state;
    uint32_t w = (uint32_t)ev->dst;
    switch (ev->kind) {
    case SIM_EV_COMPUTED:
        return on_computed(st, ctx, w, err);
    case LS_EV_COLL:
    case SIM_EV_MSG: {
        bool handled;
        int rc = coll_hub_on_event(st->hub, ctx, ev, &handled, err);
        if (rc == SIM_OK && !handled)
            rc = sim_err_set(err, SIM_EINVAL, NULL, "localsgd: message on no ring");
        return rc;
    }
    case SIM_EV_WORKER_DOWN:
        return coll_hub_worker_down(st->hub, ctx, w, err);
    case SIM_EV_WORKER_UP: {
        ((ls_worker *)sim_ctx_worker(ctx, w))->steps = 0;
        int rc = coll_ring_worker_changed(st->ring, ctx, w,
                                          sim_ctx_layer_bytes(ctx, SIM_LAYERS_ALL), err);
        return rc != SIM_OK ? rc : sim_ctx_compute(ctx, w, 0, err);
    }
    default:
        return sim_err_set(err, SIM_EINVAL, NULL, "localsgd: unexpected event kind %u", ev->kind);
    }
}

static coll_stats ring_stats(const localsgd *st)
{
    coll_stats s;
    coll_ring_stats(st->ring, &s);
    return s;
}

static void ls_report(const void *state, const sim_ctx *ctx, sim_report *out)
{
    (void)ctx;
    const localsgd *st = state;
    sim_report_add(out, "averaging_rounds", (double)st->rounds);
    sim_report_add(out, "ring_restarts", (double)ring_stats(st).restarts);
    sim_report_add(out, "stale_messages", (double)ring_stats(st).stale);
}

const proto_ops proto_localsgd = {
    .name = "localsgd",
    .summary = "local SGD: local_steps steps on each worker, then a ring all-reduce of the models",
    .state_size = sizeof(localsgd),
    .worker_size = sizeof(ls_worker),
    .rounds = true,
    .configure = ls_configure,
    .start = ls_start,
    .on_event = ls_on_event,
    .report = ls_report,
    .buffers = ls_buffers,
};
