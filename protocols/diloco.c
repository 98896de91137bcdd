/* DiLoCo (Douillard et al. 2023, "DiLoCo: Distributed Low-Communication Training of Language
 * Models", arXiv 2311.08105): local steps of the inner optimizer, then an outer Nesterov step
 * on a global model from the workers' mean outer gradient.
 *
 * The global model x (the arena's, with its outer momentum buffer) is where every worker
 * starts a round. Each live worker runs `local_steps` H iterations of the workload's
 * optimizer on its own model (sim_ctx_step, its own momentum: the inner optimizer), then joins
 * a ring all-reduce of its model (S bytes, kit/coll.h). The first member to complete
 * the round takes the outer step once for all: the outer gradient is x - mean(models) (the
 * mean of the workers' outer gradients x - x_w, with one subtraction instead of N), and x takes
 * a step of the outer optimizer, SGD at `outer_lr` with momentum `outer_momentum`, Nesterov's
 * when `outer_nesterov`, without weight decay (a block step of the context, as OpenDiLoCo's
 * torch.optim.SGD(lr=0.7, momentum=0.9, nesterov=True)). Every member then restarts from x:
 * after each round all replicas are bitwise equal. With outer_lr 1 and no momentum the step
 * x - (x - mean) is the mean but for the subtraction's rounding: x is the mean itself then, and
 * DiLoCo is Local SGD (protocols/localsgd.c) to the bit. x starts as the first live worker's
 * initial model, and every worker starts from it. Every local step is an iteration.
 *
 * Failures: the ring restarts over the members that are up and ends the round in flight for
 * the others (COLL_RING_END): if some member had completed it, the outer step is taken and they
 * adopt x; if none had, they average again over the survivors. A recovered worker waits in the
 * kit's rejoin service (kit/rejoin.h) until a round that every member completed: it is
 * then admitted, the ring restarts with it, and the member that completed the round last sends
 * it x (held once for all, the service's state), before it computes (the others wait for it at
 * the next round). If that member fails first, another running member sends x again; with
 * nobody left, the admission is undone and the worker starts alone from x, as one that finds
 * nobody running. The outer momentum is not sent: a model's bytes travel, not two.
 */
#include <math.h>

#include "kit/coll.h"
#include "kit/rejoin.h"
#include "runtime/proto.h"
#include "sim/tensor.h"

enum {
    EV_ADMIT = SIM_EV_USER /* admit the waiting workers, once this instant's events are done */
};

enum {
    KIND_MODEL = 0 /* channel 0: the global model sent to an admitted worker */
};

typedef struct diloco {
    coll_hub *hub; /* one channel: the ring's (1) */
    coll_ring *ring;
    coll_mean *mean;
    rejoin *rj;
    uint32_t n;
    int64_t local_steps; /* H */
    double outer_lr;     /* the outer optimizer's */
    double outer_momentum;
    bool outer_nesterov;
    bool averages;   /* outer_lr 1 without momentum: x becomes the mean itself */
    float *x;        /* (P) the global model */
    float *velocity; /* (P) its outer momentum (NULL without) */
    float *delta;    /* (P) the round's outer gradient, x - mean (NULL when averaging) */
    size_t P;
    bool stepped;         /* an outer step was taken, for the ring's ... */
    uint32_t step_gen;    /* ... generation */
    uint64_t step_round;  /* ... and round */
    uint64_t outer_steps; /* outer steps taken */
} diloco;

/* A worker's state (sim_ctx_worker). */
typedef struct dl_worker {
    uint32_t steps; /* local steps done since the round began */
} dl_worker;

static dl_worker *dw(sim_ctx *ctx, uint32_t w)
{
    return sim_ctx_worker(ctx, w);
}

static int dl_configure(void *state, sim_cfg *cfg, const proto_setup *setup, sim_err *err)
{
    diloco *st = state;
    st->local_steps = 8;
    st->outer_lr = 0.7;
    st->outer_momentum = 0.9;
    st->outer_nesterov = true;
    st->n = setup->workers;
    int rc = sim_cfg_int(cfg, "local_steps", 1, 1000000, &st->local_steps, err);
    if (rc == SIM_OK)
        rc = sim_cfg_double(cfg, "outer_lr", 0.0, 100.0, &st->outer_lr, err);
    if (rc == SIM_OK)
        rc = sim_cfg_double(cfg, "outer_momentum", 0.0, nextafter(1.0, 0.0), &st->outer_momentum,
                            err);
    if (rc == SIM_OK)
        rc = sim_cfg_bool(cfg, "outer_nesterov", &st->outer_nesterov, err);
    st->averages = st->outer_lr == 1.0 && st->outer_momentum == 0.0;
    return rc;
}

/* A model's bytes on the wire (an outer gradient's, the global model's). */
static uint64_t model_bytes(const sim_ctx *ctx)
{
    return sim_ctx_layer_bytes(ctx, SIM_LAYERS_ALL);
}

static const float *model(void *ud, sim_ctx *ctx, uint32_t w)
{
    (void)ud;
    return sim_ctx_params_view(ctx, w);
}

/* The outer step of the ring's round `round`, once, by the first member to complete it. */
static void outer_step(diloco *st, sim_ctx *ctx, uint64_t round)
{
    uint32_t gen = coll_ring_generation(st->ring);
    if (st->stepped && st->step_gen == gen && st->step_round == round)
        return;
    st->stepped = true;
    st->step_gen = gen;
    st->step_round = round;
    st->outer_steps++;
    rejoin_release_state(st->rj, ctx); /* x changes: its messages keep their own */
    const float *mean = coll_mean_of(st->mean, st->ring, ctx, round, model, st);
    if (st->averages) {
        sim_tensor_copy(st->x, mean, st->P);
        return;
    }
    sim_tensor_copy(st->delta, st->x, st->P);
    sim_tensor_axpy(st->delta, -1.0f, mean, st->P);
    sim_target t = {
        .kind = SIM_TARGET_BLOCK, .params = st->x, .velocity = st->velocity, .n = st->P
    };
    sim_step o = { .lr = st->outer_lr,
                   .momentum = st->outer_momentum,
                   .nesterov = st->outer_nesterov,
                   .no_decay = true };
    sim_ctx_step(ctx, t, &o, st->delta);
}

/* Worker w starts a round from the global model. */
static int begin_round(diloco *st, sim_ctx *ctx, uint32_t w, sim_err *err)
{
    sim_tensor_copy(sim_ctx_params(ctx, w), st->x, st->P);
    dw(ctx, w)->steps = 0;
    return sim_ctx_compute(ctx, w, 0, err);
}

/* The round is over for w: completed (w takes the outer step if it is the first), or ended by
 * a failure after some member completed it (the step is taken: w adopts x) or before (w averages
 * again over the survivors). After a round every member completed, the workers waiting to be
 * admitted are, once this instant's events are done (the ring is not changed from its own
 * callback), with w's model, x. */
static int on_done(void *ud, sim_ctx *ctx, uint32_t w, const coll_info *info, sim_err *err)
{
    diloco *st = ud;
    if (info->ended == COLL_ENDED_ABANDONED)
        return coll_ring_join(st->ring, ctx, w, err);
    int rc = SIM_OK;
    if (info->ended == 0) {
        outer_step(st, ctx, info->round);
        if (coll_ring_round_complete(st->ring, info->round)) {
            sim_ctx_round_end(ctx);
            if (rejoin_any_pending(st->rj, ctx))
                rc = sim_ctx_timer(ctx, 0, EV_ADMIT, (int32_t)w, st->outer_steps, NULL, err);
        }
    }
    return rc != SIM_OK ? rc : begin_round(st, ctx, w, err);
}

static int on_computed(diloco *st, sim_ctx *ctx, uint32_t w, sim_err *err)
{
    sim_ctx_step(ctx, (sim_target){ .w = w }, NULL, sim_ctx_grad(ctx, w));
    sim_ctx_count(ctx, w, 1);
    dl_worker *a = dw(ctx, w);
    if (++a->steps < st->local_steps)
        return sim_ctx_compute(ctx, w, a->steps, err);
    return coll_ring_join(st->ring, ctx, w, err);
}

/* EV_ADMIT from w's round end: unless w failed or another outer step came since, every waiting
 * worker is admitted and sent x (held by the rejoin service for every send: a member's own
 * model is x only until its next inner step, and x does not change before every admitted
 * worker has joined a round), and the ring restarts over the workers that are up. */
static int admit(diloco *st, sim_ctx *ctx, uint32_t w, uint64_t outer_steps, sim_err *err)
{
    if (sim_ctx_down(ctx, w) || outer_steps != st->outer_steps)
        return SIM_OK;
    msg_hdr h = { .channel = 0, .kind = KIND_MODEL, .seq = outer_steps };
    uint32_t n;
    int rc = rejoin_hold_state(st->rj, ctx, st->x, st->P, err);
    if (rc == SIM_OK)
        rc = rejoin_admit(st->rj, ctx, w, h, &n, err);
    return rc != SIM_OK ? rc : coll_ring_reset_live(st->ring, ctx, model_bytes(ctx), err);
}

/* The global model sent to an admitted worker landed (a void fetch is ignored): it is a member
 * from now on (the ring's since the admission), and begins its local steps. */
static int on_fetched(diloco *st, sim_ctx *ctx, uint32_t w, uint32_t src, sim_err *err)
{
    if (!rejoin_adopt(st->rj, ctx, w, src))
        return SIM_OK;
    dw(ctx, w)->steps = 0;
    return sim_ctx_compute(ctx, w, 0, err);
}

/* The rejoin service's alone: nobody runs, w starts a ring of its own from x. */
static int start_alone(void *owner, sim_ctx *ctx, uint32_t w, sim_err *err)
{
    diloco *st = owner;
    int rc = coll_ring_reset(st->ring, ctx, &w, 1, model_bytes(ctx), err);
    return rc != SIM_OK ? rc : begin_round(st, ctx, w, err);
}

/* Who runs is the service's view (up, not waiting to be admitted), which also undoes an
 * admission by itself. */
static const rejoin_ops dl_rejoin = { .name = "diloco", .alone = start_alone };

/* The run's arena: the kit's ring over every worker with its mean, the rejoin service, the
 * global model and, unless the outer step is the mean itself, its momentum and outer gradient. */
static void dl_buffers(void *state, sim_arena *a, size_t num_params)
{
    diloco *st = state;
    size_t P = num_params > 0 ? num_params : 1;
    st->hub = coll_hub_create(a, 1, 0);
    st->ring = coll_ring_create(a, st->hub, st->n, st->n, on_done, st);
    st->mean = coll_mean_create(a, num_params, st->n);
    st->rj = rejoin_create(a, st->n, NULL);
    st->x = sim_arena_alloc(a, P, sizeof(float));
    if (!st->averages)
        st->delta = sim_arena_alloc(a, P, sizeof(float));
    if (!st->averages && st->outer_momentum > 0.0)
        st->velocity = sim_arena_alloc(a, P, sizeof(float));
}

/* x is the first live worker's initial model (worker 0's if none is up), and every worker
 * starts from it: nothing is written where a worker's model already is x (`init` same). */
static void init_x(diloco *st, sim_ctx *ctx)
{
    uint32_t first = 0;
    while (first < st->n && sim_ctx_down(ctx, first))
        first++;
    const float *x0 = sim_ctx_params_view(ctx, first < st->n ? first : 0);
    sim_tensor_copy(st->x, x0, st->P);
    for (uint32_t w = 0; w < st->n; w++)
        if (sim_ctx_params_view(ctx, w) != x0)
            sim_tensor_copy(sim_ctx_params(ctx, w), st->x, st->P);
}

static int dl_start(void *state, sim_ctx *ctx, sim_err *err)
{
    diloco *st = state;
    st->P = sim_ctx_num_params(ctx);
    int rc = coll_hub_check(st->hub, err);
    if (rc != SIM_OK)
        return rc;
    coll_ring_on_failure(st->ring, COLL_RING_END);
    rejoin_owner(st->rj, &dl_rejoin, st);
    init_x(st, ctx);
    rc = coll_ring_reset_live(st->ring, ctx, model_bytes(ctx), err);
    for (uint32_t i = 0; i < coll_ring_size(st->ring) && rc == SIM_OK; i++)
        rc = sim_ctx_compute(ctx, coll_ring_member(st->ring, i), 0, err);
    return rc;
}

static int dl_on_event(void *state, sim_ctx *ctx, const sim_event *ev, sim_err *err)
{
    diloco *st = state;
    uint32_t w = (uint32_t)ev->dst;
    bool handled; /* the ring's messages first (coll.h's typical owner) */
    int rc = coll_hub_on_event(st->hub, ctx, ev, &handled, err);
    if (rc != SIM_OK || handled)
        return rc;
    switch (ev->kind) {
    case SIM_EV_COMPUTED:
        return on_computed(st, ctx, w, err);
    case SIM_EV_MSG: /* the global model sent to an admitted worker */
        return on_fetched(st, ctx, w, (uint32_t)ev->src, err);
    case SIM_EV_WORKER_DOWN:
        rc = coll_hub_worker_down(st->hub, ctx, w, err);
        return rc != SIM_OK ? rc : rejoin_down(st->rj, ctx, w, err);
    case SIM_EV_WORKER_UP: /* it waits to be admitted, or starts alone if nobody runs */
        return rejoin_up(st->rj, ctx, w, err);
    case EV_ADMIT:
        return admit(st, ctx, w, ev->arg[0], err);
    default:
        return sim_err_set(err, SIM_EINVAL, NULL, "diloco: unexpected event kind %u", ev->kind);
    }
}

/* Outside the arena: x's snapshot held for admitted workers. */
static uint64_t dl_memory(const void *state, size_t num_params)
{
    (void)state;
    return proto_snapshot_bytes(num_params);
}

static void dl_report(const void *state, const sim_ctx *ctx, sim_report *out)
{
    (void)ctx;
    const diloco *st = state;
    coll_stats s;
    coll_ring_stats(st->ring, &s);
    sim_report_add(out, "outer_steps", (double)st->outer_steps);
    sim_report_add(out, "ring_restarts", (double)s.restarts);
    sim_report_add(out, "abandoned_rounds", (double)s.abandoned);
    sim_report_add(out, "stale_messages", (double)s.stale);
    sim_report_add(out, "admitted", (double)rejoin_admitted(st->rj));
}

const proto_ops proto_diloco = {
    .name = "diloco",
    .summary = "DiLoCo: local_steps inner steps on each worker, then an all-reduce of the outer "
               "gradients and an outer Nesterov step on the global model",
    .state_size = sizeof(diloco),
    .worker_size = sizeof(dl_worker),
    .rounds = true,
    .configure = dl_configure,
    .start = dl_start,
    .on_event = dl_on_event,
    .report = dl_report,
    .buffers = dl_buffers,
    .memory = dl_memory,
};
