/* Elastic averaging SGD, asynchronous (Zhang, Choromanska and LeCun 2015, Algorithm 1).
 *
 * A centre variable x~ lives on the first server host. Every worker takes local SGD steps
 * on its own model x_i (momentum as configured); after every tau-th step it sends x_i to
 * the server (its own model, copied on write: it waits for the answer and writes nothing
 * meanwhile). The server computes the elastic difference e = alpha (x_i - x~), with
 * alpha = beta / N, moves the centre towards the worker, x~ += e, and answers with e; the
 * worker moves towards the centre, x_i -= e, and steps on. So the exchange of each worker
 * happens at once against the centre as it is when its message arrives, one worker at a
 * time, as the paper's asynchronous form does, and x~ + sum x_i is kept up to rounding.
 * The metrics evaluate the centre, the model EASGD returns.
 *
 * Failures: a worker that fails loses its iteration and its exchange in flight, and starts
 * its local steps again from its own model when it recovers. The server does not fail.
 */
#include "kit/msg.h"
#include "runtime/proto.h"
#include "sim/tensor.h"

enum {
    MSG_MODEL = 1,  /* worker -> server: x_i */
    MSG_ELASTIC = 2 /* server -> worker: e */
};

typedef struct easgd {
    uint32_t n, server; /* workers; the centre's host */
    int64_t tau;        /* local steps between exchanges */
    double beta;        /* moving rate; alpha = beta / n */
    size_t P;           /* floats (0: timing-only) */
    float *centre;      /* (P) x~, in the arena */
    float *elastic;     /* (P) the last e, in the arena */
    uint64_t exchanges; /* answered by the server */
} easgd;

/* A worker's state (sim_ctx_worker): its local steps. */
typedef struct ea_worker {
    uint64_t steps;
} ea_worker;

static uint64_t *steps(sim_ctx *ctx, uint32_t w)
{
    return &((ea_worker *)sim_ctx_worker(ctx, w))->steps;
}

static int ea_configure(void *state, sim_cfg *cfg, const proto_setup *setup, sim_err *err)
{
    easgd *st = state;
    st->n = setup->workers;
    st->server = setup->workers;
    st->tau = 4;
    st->beta = 0.9;
    int rc = sim_cfg_int(cfg, "tau", 1, 1000000, &st->tau, err);
    if (rc == SIM_OK)
        rc = sim_cfg_double(cfg, "beta", 0.0, 1.0, &st->beta, err);
    if (rc == SIM_OK && setup->servers == 0)
        return sim_cfg_fail(cfg, "tau", err,
                            "easgd keeps its centre on a server host: "
                            "the scenario needs \"servers\" >= 1");
    return rc;
}

/* The run's arena: the centre and the last difference. */
static void ea_buffers(void *state, sim_arena *a, size_t num_params)
{
    easgd *st = state;
    st->centre = sim_arena_alloc(a, num_params, sizeof(float));
    st->elastic = sim_arena_alloc(a, num_params, sizeof(float));
}

/* Outside the arena: a difference in flight to every worker at most (a worker's own model
 * travels as an alias it does not write). */
static uint64_t ea_memory(const void *state, size_t num_params)
{
    const easgd *st = state;
    return (uint64_t)st->n * proto_snapshot_bytes(num_params);
}

static msg_hdr hdr(uint32_t kind, uint64_t seq)
{
    msg_hdr h = { .channel = 0, .kind = kind, .seq = seq };
    return h;
}

static int ea_start(void *state, sim_ctx *ctx, sim_err *err)
{
    easgd *st = state;
    st->P = sim_ctx_num_params(ctx);
    /* x~ starts as worker 0's model (the workers start equal but with the vector model). */
    sim_tensor_copy(st->centre, sim_ctx_params_view(ctx, 0), st->P);
    sim_ctx_set_eval_params(ctx, st->centre);
    for (uint32_t w = 0; w < st->n; w++)
        if (!sim_ctx_down(ctx, w)) {
            int rc = sim_ctx_compute(ctx, w, 0, err);
            if (rc != SIM_OK)
                return rc;
        }
    return SIM_OK;
}

/* Worker w's iteration ended: its local step, then the next one or an exchange. */
static int computed(easgd *st, sim_ctx *ctx, uint32_t w, sim_err *err)
{
    sim_ctx_step(ctx, (sim_target){ .w = w }, NULL, sim_ctx_grad(ctx, w));
    sim_ctx_count(ctx, w, 1);
    uint64_t k = ++*steps(ctx, w);
    if (k % (uint64_t)st->tau != 0)
        return sim_ctx_compute(ctx, w, k, err);
    return msg_post(ctx, w, st->server, sim_ctx_layer_bytes(ctx, SIM_LAYERS_ALL), hdr(MSG_MODEL, k),
                    msg_params(w), err);
}

/* The server: e = alpha (x_i - x~), x~ += e, e back to the worker. */
static int model_in(easgd *st, sim_ctx *ctx, uint32_t w, uint64_t seq, sim_err *err)
{
    const float *x = sim_ctx_held(ctx, SIM_CTX_PAYLOAD);
    if (x != NULL) {
        float alpha = (float)(st->beta / st->n);
        for (size_t k = 0; k < st->P; k++) {
            st->elastic[k] = alpha * (x[k] - st->centre[k]);
            st->centre[k] += st->elastic[k];
        }
    }
    st->exchanges++;
    return msg_post(ctx, st->server, w, sim_ctx_layer_bytes(ctx, SIM_LAYERS_ALL),
                    hdr(MSG_ELASTIC, seq), msg_copy(st->elastic, st->P), err);
}

/* Worker w: x_i -= e, then its next local step. */
static int elastic_in(easgd *st, sim_ctx *ctx, uint32_t w, sim_err *err)
{
    const float *e = sim_ctx_held(ctx, SIM_CTX_PAYLOAD);
    if (e != NULL) {
        float *x = sim_ctx_params(ctx, w);
        for (size_t k = 0; k < st->P; k++)
            x[k] -= e[k];
    }
    return sim_ctx_compute(ctx, w, *steps(ctx, w), err);
}

static int ea_on_event(void *state, sim_ctx *ctx, const sim_event *ev, sim_err *err)
{
    easgd *st = state;
    switch (ev->kind) {
    case SIM_EV_COMPUTED:
        return computed(st, ctx, (uint32_t)ev->dst, err);
    case SIM_EV_MSG: {
        msg_hdr h = msg_read(ev);
        if (h.kind == MSG_MODEL)
            return model_in(st, ctx, (uint32_t)ev->src, h.seq, err);
        return elastic_in(st, ctx, (uint32_t)ev->dst, err);
    }
    case SIM_EV_WORKER_UP:
        return sim_ctx_compute(ctx, (uint32_t)ev->dst, *steps(ctx, (uint32_t)ev->dst), err);
    default:
        return SIM_OK;
    }
}

static void ea_report(const void *state, const sim_ctx *ctx, sim_report *out)
{
    const easgd *st = state;
    sim_report_add(out, "tau", (double)st->tau);
    sim_report_add(out, "alpha", st->beta / st->n);
    sim_report_add(out, "exchanges", (double)st->exchanges);
    (void)ctx;
}

const proto_ops proto_easgd = {
    .name = "easgd",
    .summary = "elastic averaging SGD: local steps, every tau an elastic move to a centre",
    .state_size = sizeof(easgd),
    .worker_size = sizeof(ea_worker),
    .configure = ea_configure,
    .start = ea_start,
    .on_event = ea_on_event,
    .buffers = ea_buffers,
    .report = ea_report,
    .memory = ea_memory,
};
