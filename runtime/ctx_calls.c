/* The context's calls (declared in runtime/ctx.h): what protocols call to reach the
 * simulation. */
#include <assert.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "runtime/ctx.h"
#include "runtime/jobs.h"
#include "runtime/outputs.h"
#include "runtime/proto.h"
#include "runtime/run.h"
#include "runtime/snap.h"
#include "runtime/state.h"
#include "sim/rng.h"
#include "sim/tensor.h"

/* ---- context (sim/ctx.h) ---- */

/* Worker w's parameters are about to be written: its gradient in flight keeps its input
 * (runtime/jobs.h), and its message snapshots theirs (runtime/snap.h). */
static void before_write(sim_ctx *ctx, uint32_t w)
{
    jobs_before_write(ctx, w);
    snap_before_write(ctx, w);
}

/* Worker w's gradient, joined if in flight; the context is the runtime's own (never a const
 * object), so the const calls that read a gradient may join. A join's error stops the run at
 * the end of the event (ctx->job_rc). */
static void need_grad(const sim_ctx *ctx, uint32_t w)
{
    if (ctx->pool != NULL)
        jobs_join((sim_ctx *)ctx, w, NULL);
}

sim_time sim_ctx_now(const sim_ctx *ctx)
{
    return sim_engine_now(ctx->eng);
}

sim_time sim_ctx_end(const sim_ctx *ctx)
{
    return ctx->stop.ended ? ctx->stop.end_ns : sim_engine_now(ctx->eng);
}

sim_budget sim_ctx_budget(const sim_ctx *ctx)
{
    const sim_scenario *sc = ctx->sc;
    sim_budget b = sim_run_budget(sc);
    b.train_samples = train_train_size(ctx->tr);
    size_t m = b.train_samples;
    double want = isnan(sc->stop_epochs) || m == 0 ? (double)INFINITY
                                                   : ceil(sc->stop_epochs * (double)m / sc->batch);
    /* Samples past 2^63 (stop.epochs 1e17 of 600 examples, batch 8) are none the clock can
     * reach: no budget. e * batch wrapped there, and the search below stepped e by one for
     * ever (a run that never started); past 2^64 the cast itself was undefined. */
    if (want * sc->batch < 0x1p63) {
        /* The fewest iterations e with e * batch / m >= stop.epochs, as sim_ctx_count
         * computes the epoch (m training examples). */
        uint64_t e = (uint64_t)want;
        while (e > 0 && (double)((e - 1) * sc->batch) / (double)m >= sc->stop_epochs)
            e--;
        while ((double)(e * sc->batch) / (double)m < sc->stop_epochs)
            e++;
        b.iterations = e < b.iterations ? e : b.iterations;
    }
    return b;
}

uint32_t sim_ctx_workers(const sim_ctx *ctx)
{
    return ctx->nworkers;
}

bool sim_ctx_down(const sim_ctx *ctx, uint32_t w)
{
    return sim_cluster_down(ctx->cl, w);
}

const sim_layer *sim_ctx_layers(const sim_ctx *ctx, size_t *n)
{
    *n = ctx->sc->layers.n;
    return ctx->sc->layers.layer;
}

uint64_t sim_ctx_layer_bytes(const sim_ctx *ctx, size_t i)
{
    if (i == SIM_LAYERS_ALL)
        return ctx->model_bytes;
    return sim_layers_bytes(&ctx->sc->layers, ctx->model_bytes, i);
}

sim_time sim_ctx_layer_ns(const sim_ctx *ctx, uint32_t w, size_t i, sim_layer_point at)
{
    const worker_acct *a = &ctx->account.worker[w];
    const sim_layers *l = &ctx->sc->layers;
    if (a->iter_start_ns == SIM_TIME_NEVER)
        return SIM_TIME_NEVER;
    if (at == SIM_LAYER_GRAD_READY)
        return a->iter_start_ns + sim_layers_ready_offset_ns(l, a->iter_ns, i);
    if (i == 0 || l->n == 0)
        return a->iter_start_ns;
    double share = l->fwd_end[(i < l->n ? i : l->n) - 1];
    return a->iter_start_ns + (sim_time)llround((double)a->iter_ns * share);
}

gsl_rng *sim_ctx_rng(sim_ctx *ctx, uint32_t w)
{
    if (w == SIM_CTX_PROTO)
        return sim_cluster_stream(ctx->cl, SIM_STREAM_PROTO);
    return sim_cluster_worker_rng(ctx->cl, w);
}

void *sim_ctx_worker(const sim_ctx *ctx, uint32_t w)
{
    assert(w < ctx->nworkers);
    if (ctx->workers == NULL)
        return NULL;
    return ctx->workers + (size_t)w * ctx->proto->worker_size;
}

void *sim_ctx_peer(sim_ctx *ctx, uint32_t w)
{
    ctx->peer_reads++;
    return sim_ctx_worker(ctx, w);
}

void sim_ctx_peer_count(sim_ctx *ctx, uint64_t k)
{
    ctx->peer_reads += k;
}

size_t sim_ctx_num_params(const sim_ctx *ctx)
{
    return train_num_params(ctx->tr);
}

float *sim_ctx_params(sim_ctx *ctx, uint32_t w)
{
    before_write(ctx, w);
    return train_params_write(ctx->tr, w);
}

const float *sim_ctx_params_view(const sim_ctx *ctx, uint32_t w)
{
    return train_params(ctx->tr, w);
}

float *sim_ctx_take_grad(sim_ctx *ctx, uint32_t w, float *spare)
{
    need_grad(ctx, w);
    return train_swap_grad(ctx->tr, w, spare);
}

const float *sim_ctx_grad(const sim_ctx *ctx, uint32_t w)
{
    need_grad(ctx, w);
    return train_grad(ctx->tr, w);
}

void sim_ctx_mean(sim_ctx *ctx, float *restrict out, const float *const *xs, size_t k, size_t n)
{
    jobs_mean(ctx, out, xs, k, n);
}

sim_step sim_ctx_rates(const sim_ctx *ctx)
{
    sim_step s = { .lr = train_lr(ctx->tr, sim_run_epoch(ctx)),
                   .momentum = train_momentum(ctx->tr) };
    return s;
}

void sim_ctx_step(sim_ctx *ctx, sim_target t, const sim_step *o, const float *grad)
{
    switch (t.kind) {
    case SIM_TARGET_WORKER:
        assert(o == NULL || (!o->nesterov && !o->no_decay));
        before_write(ctx, t.w);
        if (o == NULL)
            train_apply(ctx->tr, t.w, grad, sim_run_epoch(ctx));
        else if (o->keyed)
            train_apply_keyed(ctx->tr, t.w, grad, o->lr, o->momentum, o->key);
        else
            train_apply_with(ctx->tr, t.w, grad, o->lr, o->momentum);
        return;
    case SIM_TARGET_PAIR:
        assert(o == NULL);
        before_write(ctx, t.w);
        before_write(ctx, t.peer);
        train_average_step_pair(ctx->tr, t.w, t.peer, grad, t.peer_grad, sim_run_epoch(ctx));
        return;
    case SIM_TARGET_BLOCK:
        if (o == NULL)
            train_step_range(ctx->tr, t.params, t.velocity, grad, t.n, sim_run_epoch(ctx));
        else
            train_step_range_with(ctx->tr, t.params, t.velocity, grad, t.n, o->lr, o->momentum,
                                  (o->nesterov ? TRAIN_NESTEROV : 0u) |
                                      (o->no_decay ? TRAIN_NO_DECAY : 0u));
        return;
    }
}

sim_path sim_ctx_path(const sim_ctx *ctx, uint32_t a, uint32_t b)
{
    sim_path p = { .latency_ns = sim_net_path_latency(ctx->net, a, b),
                   .bandwidth_bps = sim_net_path_bandwidth_bps(ctx->net, a, b) };
    return p;
}

sim_host sim_ctx_host(const sim_ctx *ctx, uint32_t h)
{
    return sim_run_host(ctx->sc, h);
}

uint32_t sim_ctx_hold(sim_ctx *ctx)
{
    if (ctx->snaps.payload == NULL)
        return SIM_CTX_NO_SNAPSHOT;
    assert(!ctx->snaps.payload_held);
    ctx->snaps.payload_held = true;
    ctx->snaps.held++;
    return ctx->snaps.payload_handle;
}

const float *sim_ctx_held(sim_ctx *ctx, uint32_t h)
{
    if (h == SIM_CTX_NO_SNAPSHOT)
        return NULL;
    return h == SIM_CTX_PAYLOAD ? ctx->snaps.payload : snap_data(ctx, h);
}

void sim_ctx_release(sim_ctx *ctx, uint32_t h)
{
    if (h == SIM_CTX_PAYLOAD) {
        if (ctx->snaps.payload == NULL || ctx->snaps.payload_held)
            return;
        ctx->snaps.payload_held = true; /* the runner must not release it again */
        ctx->snaps.payload = NULL;
        snap_unref(ctx, ctx->snaps.payload_handle);
        return;
    }
    if (h == SIM_CTX_NO_SNAPSHOT)
        return;
    assert(ctx->snaps.held > 0);
    ctx->snaps.held--;
    snap_unref(ctx, h);
}

bool sim_ctx_payload_is_params(const sim_ctx *ctx, uint32_t w)
{
    return ctx->snaps.payload != NULL && snap_is_alias_of(ctx, ctx->snaps.payload_handle, w);
}

sim_stats sim_ctx_stats(const sim_ctx *ctx)
{
    sim_stats s = { .copies_on_write = ctx->snaps.copies_on_write,
                    .snapshot_buffer_bytes = snap_buffer_bytes(ctx),
                    .held = ctx->snaps.held,
                    .peer_reads = ctx->peer_reads };
    return s;
}

void sim_ctx_set_eval_params(sim_ctx *ctx, const float *params)
{
    ctx->eval.params = params;
}

/* Moves worker w's time accounting to the state it is in now. */
int sim_ctx_compute(sim_ctx *ctx, uint32_t w, uint64_t tag, sim_err *err)
{
    if (w >= ctx->nworkers || sim_cluster_down(ctx->cl, w) || ctx->account.worker[w].computing)
        return sim_err_set(err, SIM_EINVAL, NULL, "%s: cannot start an iteration on worker %u (%s)",
                           ctx->proto->name, w,
                           w >= ctx->nworkers             ? "no such worker"
                           : sim_cluster_down(ctx->cl, w) ? "down"
                                                          : "already computing");
    worker_acct *a = &ctx->account.worker[w];
    sim_time now = sim_engine_now(ctx->eng);
    sim_time d = sim_cluster_iteration_ns(ctx->cl, w, now, a->started);
    if (jobs_active(ctx)) {
        /* The gradient is computed on the parameters as they are when the iteration starts,
         * by the pool, on a pinned block: what lands on them during the iteration cannot
         * change it. Its loss and checks come at the join (runtime/jobs.h). */
        jobs_submit(ctx, w, now + d);
    } else if (!(train_model(ctx->tr)->flags & MODEL_NO_PARAMS)) {
        /* The gradient is computed now, on the parameters as they are when the iteration
         * starts: what lands on them during the iteration cannot change it. (The timing-only
         * model has none, and no loss: metrics.csv's train_loss stays empty.) */
        double loss;
        int rc = train_gradient(ctx->tr, w, sim_cluster_worker_rng(ctx->cl, w), &loss, err);
        if (rc != SIM_OK) {
            size_t used = strlen(err->msg);
            snprintf(err->msg + used, sizeof(err->msg) - used, " in iteration %" PRIu64,
                     a->started);
            return rc;
        }
        ctx->eval.loss_sum += loss;
        ctx->eval.loss_count++;
    }
    sim_event ev = { .kind = SIM_EV_COMPUTE, .src = (int32_t)w, .dst = (int32_t)w };
    ev.arg[0] = tag;
    ev.arg[1] = a->started;
    int rc = sim_engine_schedule(ctx->eng, d, &ev, &a->compute_id);
    if (rc != SIM_OK)
        return sim_err_set(err, rc, NULL, "cannot schedule worker %u's iteration", w);
    a->iter_start_ns = now;
    a->iter_ns = d;
    a->compute_tag = tag;
    a->started++;
    a->computing = true;
    sim_run_acct_update(ctx, w);
    return SIM_OK;
}

int sim_ctx_backdate(sim_ctx *ctx, uint32_t w, sim_time start_ns, sim_err *err)
{
    sim_time now = sim_engine_now(ctx->eng);
    worker_acct *a = w < ctx->nworkers ? &ctx->account.worker[w] : NULL;
    if (a == NULL || !a->computing || a->iter_start_ns != now || start_ns > now ||
        start_ns + a->iter_ns < now)
        return sim_err_set(err, SIM_EINVAL, NULL, "%s: cannot date worker %u's iteration back",
                           ctx->proto->name, w);
    if (start_ns == now)
        return SIM_OK;
    sim_event ev = { .kind = SIM_EV_COMPUTE, .src = (int32_t)w, .dst = (int32_t)w };
    ev.arg[0] = a->compute_tag;
    ev.arg[1] = a->started - 1;
    sim_engine_cancel(ctx->eng, a->compute_id);
    int rc = sim_engine_schedule_at(ctx->eng, start_ns + a->iter_ns, &ev, &a->compute_id);
    if (rc != SIM_OK)
        return sim_err_set(err, rc, NULL, "cannot schedule worker %u's iteration", w);
    a->iter_start_ns = start_ns;
    return SIM_OK;
}

/* Sends a message carrying snapshot `payload` (SIM_NET_NO_PAYLOAD: none), whose reference
 * the message takes over, or drops, if the send fails. */
static int send(sim_ctx *ctx, uint32_t src, uint32_t dst, uint64_t bytes, uint64_t tag,
                uint64_t arg, uint32_t payload, sim_err *err)
{
    sim_net_msg msg = {
        .src = src, .dst = dst, .bytes = bytes, .tag = tag, .arg = arg, .payload = payload
    };
    int rc = sim_net_send(ctx->net, &msg, err);
    if (rc != SIM_OK) {
        if (payload != SIM_NET_NO_PAYLOAD)
            snap_unref(ctx, payload);
        return rc;
    }
    sim_run_acct_update(ctx, src);
    sim_run_acct_update(ctx, dst);
    return SIM_OK;
}

int sim_ctx_snapshot(sim_ctx *ctx, const float *x, size_t n, uint32_t *h, sim_err *err)
{
    *h = SIM_CTX_NO_SNAPSHOT;
    if (ctx->snaps.entry == NULL || x == NULL)
        return SIM_OK;
    if (n > train_num_params(ctx->tr))
        return sim_err_set(err, SIM_EINVAL, NULL,
                           "%s: a snapshot of %zu floats exceeds the model's %zu", ctx->proto->name,
                           n, train_num_params(ctx->tr));
    int rc = snap_copy(ctx, x, n, h, err);
    if (rc == SIM_OK)
        ctx->snaps.held++;
    return rc;
}

int sim_ctx_send(sim_ctx *ctx, uint32_t src, uint32_t dst, uint64_t bytes, uint64_t tag,
                 uint64_t arg, sim_payload p, sim_err *err)
{
    uint32_t h = SIM_NET_NO_PAYLOAD;
    int rc = SIM_OK;
    switch (p.kind) {
    case SIM_PAYLOAD_NONE:
        break;
    case SIM_PAYLOAD_COPY:
        if (ctx->snaps.entry == NULL || p.x == NULL)
            break;
        if (p.n > train_num_params(ctx->tr))
            return sim_err_set(err, SIM_EINVAL, NULL,
                               "%s: a snapshot of %zu floats exceeds the model's %zu",
                               ctx->proto->name, p.n, train_num_params(ctx->tr));
        rc = snap_copy(ctx, p.x, p.n, &h, err);
        break;
    case SIM_PAYLOAD_PARAMS:
        if (ctx->snaps.entry != NULL && p.w < ctx->nworkers)
            rc = snap_alias(ctx, p.w, &h, err);
        break;
    case SIM_PAYLOAD_HELD:
        h = p.h;
        if (h != SIM_CTX_NO_SNAPSHOT)
            snap_ref(ctx, h);
        break;
    }
    if (rc != SIM_OK)
        return rc;
    return send(ctx, src, dst, bytes, tag, arg, h, err);
}

/* The network dropped a message: its snapshot goes back to the pool. */
int sim_ctx_timer(sim_ctx *ctx, sim_time delay, uint32_t kind, int32_t w, uint64_t arg,
                  sim_event_id *id, sim_err *err)
{
    if (kind < SIM_EV_USER || delay < 0)
        return sim_err_set(err, SIM_EINVAL, NULL, "%s: bad timer (kind %u, delay %" PRId64 ")",
                           ctx->proto->name, kind, delay);
    sim_event ev = { .kind = kind, .src = w, .dst = w };
    ev.arg[0] = arg;
    int rc = sim_engine_schedule(ctx->eng, delay, &ev, id);
    if (rc != SIM_OK)
        return sim_err_set(err, rc, NULL, "%s: cannot schedule a timer", ctx->proto->name);
    ctx->stop.timers++;
    return SIM_OK;
}

int sim_ctx_timer_late(sim_ctx *ctx, uint32_t kind, int32_t w, uint64_t arg, sim_err *err)
{
    if (kind < SIM_EV_USER)
        return sim_err_set(err, SIM_EINVAL, NULL, "%s: bad late timer (kind %u)", ctx->proto->name,
                           kind);
    sim_event ev = { .kind = kind, .src = w, .dst = w };
    ev.arg[0] = arg;
    int rc = sim_engine_schedule_late_at(ctx->eng, sim_engine_now(ctx->eng), &ev, NULL);
    if (rc != SIM_OK)
        return sim_err_set(err, rc, NULL, "%s: cannot schedule a late timer", ctx->proto->name);
    ctx->stop.timers++;
    return SIM_OK;
}

int sim_ctx_cancel(sim_ctx *ctx, sim_event_id id)
{
    int rc = sim_engine_cancel(ctx->eng, id);
    ctx->stop.timers -= rc == SIM_OK;
    return rc;
}

void sim_ctx_note(sim_ctx *ctx, const char *fmt, ...)
{
    if (ctx->out.nnotes >= SIM_CTX_MAX_NOTES)
        return;
    char *note = ctx->out.notes[ctx->out.nnotes++];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(note, sizeof(ctx->out.notes[0]), fmt, ap);
    va_end(ap);
    sim_err_warn(stderr, "%s: note: %s", ctx->sc->file, note); /* the file's name escaped */
}

uint64_t sim_ctx_count(sim_ctx *ctx, uint32_t w, uint64_t iterations)
{
    const sim_scenario *sc = ctx->sc;
    if (iterations == 0) /* a query: nothing counted, so no stop reached since the last count */
        return ctx->account.worker[w].iterations;
    ctx->account.worker[w].iterations += iterations;
    ctx->account.iterations += iterations;
    ctx->account.samples += iterations * sc->batch;
    ctx->account.counted_ns = sim_engine_now(ctx->eng);
    const char *reason = NULL;
    if (sc->stop_iterations != 0 && ctx->account.iterations >= sc->stop_iterations)
        reason = "iterations";
    else if (!isnan(sc->stop_epochs) && sim_run_epoch(ctx) >= sc->stop_epochs)
        reason = "epochs";
    if (reason == NULL)
        return ctx->account.worker[w].iterations;
    if (!ctx->proto->rounds)
        sim_run_stop(ctx, reason);
    else if (ctx->stop.pending == NULL)
        ctx->stop.pending = reason;
    return ctx->account.worker[w].iterations;
}

void sim_ctx_round_end(sim_ctx *ctx)
{
    const sim_scenario *sc = ctx->sc;
    ctx->stop.rounds++;
    if (ctx->stop.pending != NULL)
        sim_run_stop(ctx, ctx->stop.pending);
    if (sc->stop_rounds != 0 && ctx->stop.rounds >= sc->stop_rounds)
        sim_run_stop(ctx, "rounds");
    if (!isnan(sc->stop_consensus) && sim_run_variance(ctx) < sc->stop_consensus)
        sim_run_stop(ctx, "consensus");
}

bool sim_ctx_dropped(sim_ctx *ctx, uint32_t w, uint64_t round)
{
    return sim_cluster_dropped(ctx->cl, w, round);
}

bool sim_ctx_always_dropped(const sim_ctx *ctx, uint32_t w)
{
    return sim_cluster_always_dropped(ctx->cl, w);
}
