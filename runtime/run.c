/* The runner: builds a run from a scenario and the protocol its caller chose, dispatches
 * events to the network, the cluster model and the protocol, and hands evaluation and the
 * output files to runtime/outputs.c. */
#include "runtime/run.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "outputs/plot.h"
#include "outputs/rundir.h"
#include "runtime/events.h"
#include "runtime/jobs.h"
#include "runtime/outputs.h"
#include "runtime/snap.h"
#include "runtime/state.h"
#include "sim/rng.h"
#include "sim/tensor.h"
#include "sim/text.h"

/* The loader's bound on any time a scenario gives, in seconds (1e18 ns). */
#define CLOCK_NOTE_S 1e9

/* ---- event handlers ---- */

static int to_protocol(sim_ctx *ctx, const sim_event *ev, sim_err *err)
{
    return ctx->proto->on_event(ctx->state, ctx, ev, err);
}

/* Hands message msg, just delivered, to the protocol, its endpoints' accounting first. */
static inline int deliver(sim_ctx *ctx, const sim_event *ev, const sim_net_msg *m, sim_err *err)
{
    const sim_net_msg msg = *m;
    sim_run_acct_update(ctx, msg.src);
    sim_run_acct_update(ctx, msg.dst);
    sim_run_trace(ctx, "msg", msg.dst, msg.src, msg.tag, msg.bytes, msg.arg);
    sim_event pev = { .kind = SIM_EV_MSG, .src = (int32_t)msg.src, .dst = (int32_t)msg.dst };
    pev.time = ev->time;
    pev.arg[0] = msg.tag;
    pev.arg[1] = msg.bytes;
    pev.arg[2] = msg.arg;
    pev.arg[3] = msg.payload;
    if (msg.payload != SIM_NET_NO_PAYLOAD) {
        ctx->snaps.payload = snap_data(ctx, msg.payload);
        ctx->snaps.payload_handle = msg.payload;
        ctx->snaps.payload_held = false;
    }
    int rc = to_protocol(ctx, &pev, err);
    if (msg.payload != SIM_NET_NO_PAYLOAD) {
        ctx->snaps.payload = NULL;
        if (!ctx->snaps.payload_held)
            snap_unref(ctx, msg.payload);
    }
    return rc;
}

/* A network event: the message it delivers, if any, or each message of a bundle's DONE in turn
 * (net/net.h), as their own DONEs would have come: none after the run stopped or a gradient
 * failed, which would have ended the run before the next of those events. */
static int on_net(sim_ctx *ctx, const sim_event *ev, sim_err *err)
{
    sim_net_msg msg;
    int rc = sim_net_handle(ctx->net, ev, &msg, err);
    if (rc < 0)
        return rc;
    if (rc == 0) {
        if (ev->src >= 0)
            sim_run_acct_update(ctx, (uint32_t)ev->src);
        if (ev->dst >= 0)
            sim_run_acct_update(ctx, (uint32_t)ev->dst);
        return SIM_OK;
    }
    for (;;) {
        bool more = rc > 1;
        rc = deliver(ctx, ev, &msg, err);
        if (!more || rc != SIM_OK || ctx->stop.reason != NULL || ctx->job_rc != SIM_OK)
            return rc;
        rc = sim_net_next(ctx->net, &msg, err);
        if (rc <= 0)
            return rc;
    }
}

static int on_compute(sim_ctx *ctx, const sim_event *ev, sim_err *err)
{
    uint32_t w = (uint32_t)ev->dst;
    int rc = jobs_join(ctx, w, err);
    if (rc != SIM_OK)
        return rc;
    train_iteration_done(ctx->tr, w); /* a served model's buffers: now, not at the join */
    ctx->account.worker[w].computing = false;
    sim_run_acct_update(ctx, w);
    sim_run_trace(ctx, "computed", w, SIM_NOBODY, ev->arg[0], 0, 0);
    sim_event pev = *ev;
    pev.kind = SIM_EV_COMPUTED;
    return to_protocol(ctx, &pev, err);
}

/* A change that can let no worker compute before the stop: a link window (it only rates
 * flows), or a recovery at the stop instant (the worker is up when the run ends, and no
 * iteration or message takes no time). Such a recovery kept a run whose workers were all
 * down from stalling: it ran on to its stop as if it waited for something. */
static bool inert_change(const sim_ctx *ctx, const sim_change *c)
{
    return c->kind == SIM_CHANGE_LINK ||
           (c->kind == SIM_CHANGE_UP && c->time_ns >= ctx->sc->stop_ns);
}

static int on_change(sim_ctx *ctx, const sim_event *ev, sim_err *err)
{
    const sim_change *c = &ctx->timeline[ev->arg[0]];
    uint32_t w = c->worker;
    sim_event pev = { .kind = SIM_EV_NONE, .src = (int32_t)w, .dst = (int32_t)w };
    pev.time = ev->time;
    if (inert_change(ctx, c))
        ctx->stop.inert--;
    else if (c->kind == SIM_CHANGE_UP)
        ctx->stop.recoveries--;
    else
        ctx->stop.failures--;
    switch (c->kind) {
    case SIM_CHANGE_DOWN:
        if (sim_cluster_down(ctx->cl, w))
            return SIM_OK;
        sim_cluster_set_down(ctx->cl, w, true);
        if (ctx->account.worker[w].computing) {
            sim_engine_cancel(ctx->eng, ctx->account.worker[w].compute_id);
            ctx->account.worker[w].computing = false;
            /* Its gradient was computed at the start with one thread: its loss counts. */
            int rc = jobs_join(ctx, w, err);
            if (rc != SIM_OK)
                return rc;
        }
        /* Aborted flows touch the failed worker's peers, which may be anywhere; a worker with
         * none in flight changes only its own state (a walk of every worker for each failure
         * made a rule failing N workers at one instant take N^2 steps). */
        bool aborts = sim_net_host_inflight(ctx->net, w) > 0;
        sim_net_set_host_down(ctx->net, w, true);
        for (uint32_t v = aborts ? 0 : w; v < (aborts ? ctx->nworkers : w + 1); v++)
            sim_run_acct_update(ctx, v);
        sim_run_trace(ctx, "down", w, SIM_NOBODY, 0, 0, 0);
        pev.kind = SIM_EV_WORKER_DOWN;
        return to_protocol(ctx, &pev, err);
    case SIM_CHANGE_UP:
        if (!sim_cluster_down(ctx->cl, w))
            return SIM_OK;
        sim_cluster_set_down(ctx->cl, w, false);
        sim_net_set_host_down(ctx->net, w, false);
        sim_run_acct_update(ctx, w);
        sim_run_trace(ctx, "up", w, SIM_NOBODY, 0, 0, 0);
        pev.kind = SIM_EV_WORKER_UP;
        return to_protocol(ctx, &pev, err);
    case SIM_CHANGE_LINK:
        sim_net_set_extra_latency(ctx->net, w, c->extra_latency_ns);
        return sim_net_set_bandwidth_factor(ctx->net, w, c->bandwidth_factor, err);
    }
    return SIM_OK;
}

/* Evaluations are late events (sim_engine_schedule_late_at): each comes after every other
 * event of its instant, so that a metrics.csv row at t shows the state after all of t's events
 * whatever eval.every_s. An evaluation scheduled like the others came before or after the
 * events of its instant by the order they were scheduled in, which every_s set: an AD-PSGD
 * row at 0.3 s showed 16 iterations with every_s 0.05, 12 with 0.1, and a run stopped by
 * iterations at an evaluation's instant ended on a row of 196 iterations (its summary 200). A
 * run stopped then (iterations, rounds, consensus) stops before its evaluation, and its end is
 * evaluated once, after the stop (simulate); a target accuracy, tested at evaluations, stops
 * the run at the evaluation's instant, after all of its events. */
static int schedule_eval(sim_ctx *ctx, sim_time at, sim_err *err)
{
    sim_event ev = { .kind = SIM_EV_EVAL, .src = SIM_NOBODY, .dst = SIM_NOBODY };
    int rc = sim_engine_schedule_late_at(ctx->eng, at, &ev, NULL);
    if (rc != SIM_OK)
        return sim_err_set(err, rc, NULL, "cannot schedule an evaluation");
    ctx->stop.inert++;
    return SIM_OK;
}

static int on_eval(sim_ctx *ctx, sim_err *err)
{
    sim_time now = sim_engine_now(ctx->eng);
    ctx->stop.inert--;
    int rc = sim_run_evaluate(ctx, now, err);
    if (rc != SIM_OK)
        return rc;
    sim_time every = ctx->sc->eval_every_ns;
    /* A run stopped by time was held to SIM_MAX_EVALS when loaded; one stopped otherwise (by
     * iterations, with iterations of 1e6 s) is held to it here. */
    if (now / every >= SIM_MAX_EVALS - 1 && ctx->sc->stop_ns == SIM_TIME_NEVER) {
        sim_err_set(err, SIM_ESCENARIO, "$.eval.every_s",
                    "%d evaluations (metrics.csv rows) by %.9g simulated s and the run goes on: "
                    "raise eval.every_s, or give stop.time_s",
                    SIM_MAX_EVALS, (double)now * 1e-9);
        return sim_err_file(err, ctx->sc->file);
    }
    /* None at the stop time itself: the run's end is evaluated after its last instant's
     * events (simulate), as when every_s does not divide stop.time_s; one due at the stop ran
     * before the iterations ending then, and final_accuracy depended on every_s. */
    return now < ctx->sc->stop_ns - every ? schedule_eval(ctx, now + every, err) : SIM_OK;
}

/* The stall rule: the run can make no more progress (no event left can let a worker compute
 * or a message move) when
 *   - no worker is up and no recovery is scheduled before the stop: nothing can compute
 *     again, whatever a protocol's timers or server hosts still do; or
 *   - no message is in flight and every pending event is an evaluation, a link window or a
 *     recovery at the stop instant: those change no worker's state before the stop (a link
 *     window only rates flows, and none is in flight), so every worker that is up waits for
 *     something that cannot come; or
 *   - no message is in flight, every pending event is an evaluation, a link window, a failure
 *     or one of the protocol's timers, and the protocol's `stuck` hook says none of those can
 *     let a worker compute again (a parameter server whose shard is lost for good).
 * Pending computations, deliveries and recoveries can always make progress; failures and
 * protocol timers can unless the protocol says otherwise. No test reads when evaluations
 * come, so a stall is found at the instant it happens whatever eval.every_s is. */
static bool stalled(sim_ctx *ctx)
{
    if (sim_cluster_live(ctx->cl) == 0 && ctx->stop.recoveries == 0)
        return true;
    sim_engine_stats st;
    sim_engine_stats_get(ctx->eng, &st);
    const run_stop *s = &ctx->stop;
    if (st.pending > s->inert + s->failures + s->timers)
        return false;
    sim_net_stats ns;
    sim_net_stats_get(ctx->net, &ns);
    if (ns.in_flight != 0)
        return false;
    if (st.pending == s->inert)
        return true;
    return ctx->proto->stuck != NULL && ctx->proto->stuck(ctx->state, ctx);
}

static void progress_line(sim_ctx *ctx)
{
    double since = sim_run_wall_since(&ctx->out.wall_last);
    if (since < 0.5)
        return;
    clock_gettime(CLOCK_MONOTONIC, &ctx->out.wall_last);
    double wall = sim_run_wall_since(&ctx->out.wall_start);
    sim_engine_stats st;
    sim_engine_stats_get(ctx->eng, &st);
    double t = sim_run_seconds(sim_engine_now(ctx->eng));
    fprintf(stderr, "\r%s: t=%.3fs  %.2fM events/s", ctx->sc->name, t,
            (double)st.processed / wall * 1e-6);
    if (ctx->sc->stop_ns != SIM_TIME_NEVER && t > 0) {
        double total = sim_run_seconds(ctx->sc->stop_ns);
        fprintf(stderr, "  %.0f%%  ETA %.0fs ", 100.0 * t / total, wall * (total - t) / t);
    }
    fflush(stderr);
}

static int handle(sim_ctx *ctx, const sim_event *ev, sim_err *err)
{
    switch (ev->kind) {
    case SIM_EV_NET_START:
    case SIM_EV_NET_DONE:
        return on_net(ctx, ev, err);
    case SIM_EV_COMPUTE:
        return on_compute(ctx, ev, err);
    case SIM_EV_CHANGE:
        return on_change(ctx, ev, err);
    case SIM_EV_EVAL:
        return on_eval(ctx, err);
    default:
        ctx->stop.timers -= ev->kind >= SIM_EV_USER;
        return to_protocol(ctx, ev, err);
    }
}

/* A run bounded by iterations, epochs or rounds alone may run its clock to the end of its
 * int64_t nanoseconds, where the engine refuses the next event (SIM_EINVAL) and the handler
 * names only that event. Past 1e18 ns, beyond every time a scenario gives (so a refused
 * delay is the clock's end, not a bad value), the message says so and what to do. */
static void note_clock_end(const sim_ctx *ctx, sim_err *err)
{
    double now_s = sim_run_seconds(sim_engine_now(ctx->eng));
    if (!(now_s > CLOCK_NOTE_S))
        return;
    size_t used = strlen(err->msg);
    snprintf(err->msg + used, sizeof(err->msg) - used,
             ": the simulated clock cannot go past %.3g s (now %.3g s): stop the run earlier "
             "(stop.time_s, at most %.0e s)",
             sim_run_seconds(SIM_TIME_NEVER), now_s, CLOCK_NOTE_S);
}

static int dispatch(void *ud, sim_engine *eng, const sim_event *ev, sim_err *err)
{
    (void)eng;
    sim_ctx *ctx = ud;
    if (ctx->out.progress && (ev->seq & 0x3ff) == 0)
        progress_line(ctx);
    int rc = handle(ctx, ev, err);
    if (rc == SIM_OK && ctx->job_rc != SIM_OK) { /* a gradient the protocol joined failed */
        *err = ctx->job_err;
        rc = ctx->job_rc;
    }
    if (rc == SIM_EINVAL)
        note_clock_end(ctx, err);
    /* A stall stops the run once the instant it began in is over (its evaluation included). */
    if (rc == SIM_OK && ctx->stop.reason == NULL && stalled(ctx) &&
        sim_engine_next_time(ctx->eng) > ev->time)
        sim_run_stop(ctx, "stalled");
    return rc;
}

/* ---- checks ---- */

/* Reads the workload sections: the timing-only model has only a name; a real model's
 * config also sets the message size (unless given) and, with compute.gflops, the base
 * iteration time, both recorded in the resolved scenario (run.json). */
static int read_workload(sim_scenario *sc, train_config *tc, sim_err *err)
{
    bool module = sim_scenario_module_profile(sc); /* the model's layers as the profile */
    bool profile = sc->profile[0] != '\0' && !module;
    int rc = train_config_read(sc, tc, err);
    if (rc != SIM_OK)
        return rc;
    if ((tc->ops->flags & MODEL_NO_PARAMS) && module) {
        sim_err_set(err, SIM_ESCENARIO, "$.compute.profile",
                    "\"module\" needs a model with layers, not \"%s\"", tc->ops->name);
        return sim_err_file(err, sc->file);
    }
    if (tc->ops->flags & MODEL_NO_PARAMS) {
        /* No layers to time by (zero floats): one layer of the message's size, the whole
         * model's gradient ready at the iteration's end. */
        if (profile)
            return SIM_OK;
        rc = sim_layers_init(&sc->layers, 1, err);
        if (rc != SIM_OK)
            return rc;
        snprintf(sc->layers.layer[0].name, sizeof(sc->layers.layer[0].name), "model");
        sc->layers.layer[0].params = (sc->message_bytes + 3) / 4;
        sim_layers_finish(&sc->layers);
        return SIM_OK;
    }
    if (profile)
        return SIM_OK;
    if (!(tc->ops->flags & MODEL_SERVER)) /* a served model's are its probe's */
        rc = model_layers(tc->ops, &tc->model, &sc->layers, err);
    if (rc == SIM_OK && module && (rc = sim_scenario_resolve_module(sc, err)) != SIM_OK)
        sim_err_file(err, sc->file);
    if (rc != SIM_OK)
        return rc;
    double ns = sc->gflops > 0 && !module
                    ? model_flops_per_sample(tc->ops, &tc->model) * sc->batch / sc->gflops
                    : (double)NAN;
    return sim_scenario_resolve_model(sc, tc->num_params, ns, err);
}

/* Bytes of the runtime's own state: per host its mt19937 stream (about 5 KiB with GSL's
 * bookkeeping), accounting, links, a few pending events and flows; the network's links (a
 * fat_tree's k^3 switch links, whatever the hosts use); with a real model, the
 * evaluation mean; and the process's fixed share, its code and libraries (6.5 MiB resident
 * for a two-worker run, measured), stdio and BLAS's work space; the trace points, held and
 * copied per worker (sim_scenario_traces_bytes). The snapshot pool's buffers
 * take memory only once written (sim_tensor_pool): they are the protocol's to count, with
 * its tensors (proto_ops.memory); model tensors and data are train_config's. */
static uint64_t memory_estimate(const sim_scenario *sc, size_t num_params)
{
    uint64_t n = (uint64_t)sc->workers + sc->servers;
    return n * 8192 + sim_net_links_bytes(&sc->net) + (uint64_t)num_params * 4 +
           sim_scenario_traces_bytes(sc) + ((uint64_t)8 << 20);
}

static uint64_t physical_memory(void)
{
    long pages = sysconf(_SC_PHYS_PAGES), size = sysconf(_SC_PAGE_SIZE);
    if (pages <= 0 || size <= 0)
        return UINT64_MAX;
    return (uint64_t)pages * (uint64_t)size;
}

/* Reads $.protocol.name (the caller chose the protocol by it) and has the protocol parse
 * the rest of its section into `state`, with what it may know of the run (sim_run_setup,
 * after read_workload); unknown keys are refused afterwards. */
static int configure_protocol(sim_scenario *sc, const proto_ops *ops, void *state, sim_err *err)
{
    char name[64];
    proto_setup setup = sim_run_setup(sc);
    int rc = sim_cfg_string(sc->protocol_cfg, "name", name, sizeof(name), err);
    if (rc == SIM_OK)
        rc = ops->configure(state, sc->protocol_cfg, &setup, err);
    if (rc == SIM_OK)
        rc = sim_cfg_check_unused(sc->protocol_cfg, err);
    return rc != SIM_OK ? sim_err_file(err, sc->file) : SIM_OK;
}

/* Asks for the run's arena: the workers' states, then the protocol's buffers (its buffers
 * hook, on the configured `state`). */
static void ask_arena(sim_arena *a, const sim_scenario *sc, const proto_ops *ops, void *state,
                      size_t num_params)
{
    if (ops->worker_size > 0)
        sim_arena_alloc(a, sc->workers, ops->worker_size);
    if (ops->buffers != NULL)
        ops->buffers(state, a, num_params);
}

/* The bytes the run's arena will take, by a sizing pass (nothing allocated but the counter);
 * UINT64_MAX when even that fails, which the memory check refuses. */
static uint64_t arena_size(const sim_scenario *sc, const proto_ops *ops, void *state,
                           size_t num_params)
{
    sim_arena *a = sim_arena_create_sizing(NULL);
    if (a == NULL)
        return UINT64_MAX;
    ask_arena(a, sc, ops, state, num_params);
    uint64_t bytes = sim_arena_bytes(a);
    sim_arena_destroy(a);
    return bytes;
}

/* The whole run's estimate: the runtime's state, the model tensors and data (train_config's
 * bytes_estimate, 0 when timing-only) and the protocol's own state (configured in `state`):
 * its arena, measured by a sizing pass (*arena), and what its memory hook counts outside it. */
static uint64_t run_estimate(const sim_scenario *sc, const train_config *tc, const proto_ops *ops,
                             void *state, uint64_t *arena)
{
    size_t num_params = tc->num_params;
    *arena = arena_size(sc, ops, state, num_params);
    uint64_t own = ops->memory != NULL ? ops->memory(state, num_params) : 0;
    if (ops->copies != NULL)
        own += ops->copies(state) * proto_snapshot_bytes(num_params);
    uint64_t total = memory_estimate(sc, num_params) + tc->bytes_estimate + own;
    return *arena > UINT64_MAX - total ? UINT64_MAX : total + *arena;
}

/* The memory check's refusal of a run that needs `need` bytes: named by the fat_tree's k when
 * its links take most of them, by the stragglers when trace points do, else by the workers. */
static int refuse_memory(const sim_scenario *sc, uint64_t need, sim_err *err)
{
    double gib = (double)need / 1073741824.0,
           most = (double)(physical_memory() / 10 * 8) / 1073741824.0;
    int d = sim_text_decimals_apart(gib, most); /* one past the limit: 18.8, more than 18.8 */
    uint64_t links = sim_net_links_bytes(&sc->net);
    if (sc->net.topology == SIM_TOPO_FAT_TREE && links > need / 2)
        sim_err_set(err, SIM_ESCENARIO, "$.network.k",
                    "a fat_tree with k = %u has k^3 = %" PRIu64 " links between its switches, "
                    "built whatever the hosts use: about %.*f GiB, more than 80%% of this "
                    "machine's memory",
                    sc->net.k, (uint64_t)sc->net.k * sc->net.k * sc->net.k, d, gib);
    else if (sim_scenario_traces_bytes(sc) > need / 2)
        sim_err_set(err, SIM_ESCENARIO, "$.stragglers",
                    "the trace rules' points, copied for the run per rule, need about %.*f GiB "
                    "of the run's %.*f GiB, more than 80%% of this machine's memory (%.*f "
                    "GiB): name fewer or shorter traces",
                    d, (double)sim_scenario_traces_bytes(sc) / 1073741824.0, d, gib, d, most);
    else
        sim_err_set(err, SIM_ESCENARIO, "$.workers",
                    "%u workers need about %.*f GiB, more than 80%% of this machine's memory",
                    sc->workers, d, gib);
    return sim_err_file(err, sc->file);
}

int sim_run_check(sim_scenario *sc, const proto_ops *ops, sim_err *err)
{
    train_config tc = { 0 };
    int rc = read_workload(sc, &tc, err);
    void *state = calloc(1, ops->state_size > 0 ? ops->state_size : 1);
    if (rc == SIM_OK && state == NULL)
        rc = sim_err_set(err, SIM_ENOMEM, NULL, "out of memory");
    if (rc == SIM_OK)
        rc = configure_protocol(sc, ops, state, err);
    uint64_t arena = 0;
    uint64_t need = rc == SIM_OK ? run_estimate(sc, &tc, ops, state, &arena) : 0;
    if (state != NULL && ops->fini != NULL)
        ops->fini(state);
    free(state);
    if (rc != SIM_OK)
        return rc;
    sim_scenario_rehash(sc);
    uint64_t have = physical_memory();
    return need > have / 10 * 8 ? refuse_memory(sc, need, err) : SIM_OK;
}

/* ---- set-up and the run ---- */

/* The network dropped a message: its snapshot goes back to the pool. */
static void on_drop(void *ud, const sim_net_msg *msg)
{
    sim_ctx *ctx = ud;
    if (msg->payload != SIM_NET_NO_PAYLOAD)
        snap_unref(ctx, msg->payload);
}

/* A worker failing at time 0 is down from the start: down before the protocol starts, which
 * starts only the workers that are up (sim_ctx_down), so that it sends and computes nothing.
 * As an event at time 0 its failure came after the protocol's start, which had sent from it
 * already (an AD-PSGD worker down from 0 showed a model's bytes sent, 0 iterations). */
static void down_from_start(sim_ctx *ctx, uint32_t w)
{
    if (sim_cluster_down(ctx->cl, w))
        return;
    sim_cluster_set_down(ctx->cl, w, true);
    sim_net_set_host_down(ctx->net, w, true);
    sim_run_acct_update(ctx, w);
    sim_run_trace(ctx, "down", w, SIM_NOBODY, 0, 0, 0);
}

static int schedule_start(sim_ctx *ctx, sim_err *err)
{
    sim_event ev = { .kind = SIM_EV_CHANGE, .src = SIM_NOBODY, .dst = SIM_NOBODY };
    for (size_t i = 0; i < ctx->ntimeline; i++) {
        if (ctx->timeline[i].time_ns > ctx->sc->stop_ns)
            break;
        if (ctx->timeline[i].time_ns == 0 && ctx->timeline[i].kind == SIM_CHANGE_DOWN) {
            down_from_start(ctx, ctx->timeline[i].worker);
            continue;
        }
        ev.arg[0] = i;
        if (sim_engine_schedule_at(ctx->eng, ctx->timeline[i].time_ns, &ev, NULL) != SIM_OK)
            return sim_err_set(err, SIM_ENOMEM, NULL, "out of memory for the timeline");
        bool inert = inert_change(ctx, &ctx->timeline[i]);
        ctx->stop.inert += inert;
        ctx->stop.recoveries += !inert && ctx->timeline[i].kind == SIM_CHANGE_UP;
        ctx->stop.failures += ctx->timeline[i].kind == SIM_CHANGE_DOWN;
    }
    int rc = schedule_eval(ctx, 0, err);
    if (rc != SIM_OK)
        return rc;
    /* A protocol may find its section wrong only against the network (adpsgd's timeout). */
    rc = ctx->proto->start(ctx->state, ctx, err);
    return rc == SIM_ESCENARIO ? sim_err_file(err, ctx->sc->file) : rc;
}

static int simulate(sim_ctx *ctx, sim_run_summary *sum, sim_err *err)
{
    clock_gettime(CLOCK_MONOTONIC, &ctx->out.wall_start);
    ctx->out.wall_last = ctx->out.wall_start;
    int rc = schedule_start(ctx, err);
    if (rc == SIM_OK)
        rc = sim_engine_run(ctx->eng, ctx->sc->stop_ns, dispatch, ctx, err);
    if (ctx->out.progress)
        fputs("\n", stderr);
    if (rc == SIM_OK) /* iterations started before the stop: their losses and checks */
        rc = jobs_drain(ctx, err);
    if (rc != SIM_OK)
        return rc;
    sim_time end = sim_engine_now(ctx->eng);
    if (ctx->stop.reason == NULL) {
        ctx->stop.reason = "time";
        end = ctx->sc->stop_ns;
    }
    ctx->stop.ended = true; /* the protocol's report counts to it (sim_ctx_end) */
    ctx->stop.end_ns = end;
    if (end > ctx->eval.last_ns)
        rc = sim_run_evaluate(ctx, end, err);
    else if (ctx->out.observe != NULL)
        ctx->out.observe(ctx->out.observe_ud, ctx); /* the end, already evaluated */
    if (rc == SIM_OK)
        rc = sim_run_eval_finish(ctx, err);
    if (rc != SIM_OK)
        return rc;
    /* Close every worker's accounting at the end time. */
    for (uint32_t w = 0; w < ctx->nworkers; w++)
        sim_run_acct_close(ctx, w, end);
    sim_engine_stats st;
    sim_engine_stats_get(ctx->eng, &st);
    sum->wall_s = sim_run_wall_since(&ctx->out.wall_start);
    sum->stop_reason = ctx->stop.reason;
    sum->sim_ns = end;
    sum->iterations = ctx->account.iterations;
    sum->samples = ctx->account.samples;
    sum->events = st.processed;
    sim_net_stats ns;
    sim_net_stats_get(ctx->net, &ns);
    sum->messages_between = ns.between;
    sum->events_per_s = sum->wall_s > 0 ? (double)st.processed / sum->wall_s : 0.0;
    sum->peak_rss_bytes = sim_run_peak_rss();
    sum->memory_estimate_bytes = ctx->memory_estimate;
    sum->model_s = train_model_seconds(ctx->tr);
    sum->split_means = ctx->split_means;
    return SIM_OK;
}

static int build_training(sim_ctx *ctx, sim_err *err)
{
    train_config tc = { 0 };
    int rc = read_workload(ctx->sc, &tc, err);
    if (rc == SIM_OK) /* after the workload, as sim_run_check: the layers are known */
        rc = configure_protocol(ctx->sc, ctx->proto, ctx->state, err);
    if (rc == SIM_OK)
        ctx->memory_estimate =
            run_estimate(ctx->sc, &tc, ctx->proto, ctx->state, &ctx->arena_bytes) +
            jobs_memory(&tc, ctx->threads);
    if (rc == SIM_OK && ctx->threads > 1 && ctx->memory_estimate > physical_memory() / 10 * 8) {
        sim_err_set(err, SIM_ESCENARIO, "$.workers",
                    "%u workers with %u threads need about %.1f GiB, more than 80%% of this "
                    "machine's memory",
                    ctx->sc->workers, ctx->threads, (double)ctx->memory_estimate / 1073741824.0);
        return sim_err_file(err, ctx->sc->file);
    }
    if (rc != SIM_OK)
        return rc;
    ctx->tr = train_create(&tc, sim_cluster_stream(ctx->cl, SIM_STREAM_DATA),
                           sim_cluster_stream(ctx->cl, SIM_STREAM_INIT), err);
    if (ctx->tr == NULL)
        return err->code;
    if (tc.ops->flags & MODEL_AVERAGING_ONLY) /* each worker its own values, from its stream */
        for (uint32_t w = 0; w < ctx->nworkers; w++)
            train_init_worker(ctx->tr, w, sim_cluster_worker_rng(ctx->cl, w));
    if (ctx->model_bytes == 0)
        ctx->model_bytes = 4 * (uint64_t)train_num_params(ctx->tr);
    ctx->eval.mean = sim_tensor_alloc(train_num_params(ctx->tr));
    ctx->eval.live = calloc(ctx->nworkers, sizeof(*ctx->eval.live));
    ctx->eval.ids = calloc(ctx->nworkers, sizeof(*ctx->eval.ids));
    if (ctx->eval.mean == NULL || ctx->eval.live == NULL || ctx->eval.ids == NULL)
        return sim_err_set(err, SIM_ENOMEM, NULL, "out of memory");
    uint64_t copies = ctx->proto->copies != NULL ? ctx->proto->copies(ctx->state) : 0;
    rc = snap_init(ctx, copies, err);
    if (rc != SIM_OK)
        return rc;
    rc = jobs_init(ctx, ctx->threads, err);
    if (rc != SIM_OK)
        return rc;
    sim_net_set_drop_fn(ctx->net, on_drop, ctx);
    return SIM_OK;
}

/* The run's arena, of the size the memory check counted: the workers' states and the
 * protocol's buffers, zeroed. */
static int build_arena(sim_ctx *ctx, sim_err *err)
{
    ctx->arena = sim_arena_create(ctx->arena_bytes, err);
    if (ctx->arena == NULL)
        return err->code;
    if (ctx->proto->worker_size > 0)
        ctx->workers = sim_arena_alloc(ctx->arena, ctx->nworkers, ctx->proto->worker_size);
    if (ctx->proto->buffers != NULL)
        ctx->proto->buffers(ctx->state, ctx->arena, sim_ctx_num_params(ctx));
    if (sim_arena_overrun(ctx->arena) || sim_arena_bytes(ctx->arena) != ctx->arena_bytes)
        return sim_err_set(err, SIM_EINVAL, NULL,
                           "%s: the buffers hook asked for %llu bytes, %llu when sized",
                           ctx->proto->name, (unsigned long long)sim_arena_bytes(ctx->arena),
                           (unsigned long long)ctx->arena_bytes);
    return SIM_OK;
}

static int build(sim_ctx *ctx, sim_scenario *sc, const proto_ops *ops, sim_err *err)
{
    ctx->sc = sc;
    ctx->nworkers = sc->workers;
    ctx->nhosts = sc->workers + sc->servers;
    ctx->model_bytes = sc->message_bytes;
    ctx->eval.last_accuracy = ctx->eval.best_accuracy = NAN;
    ctx->eval.target_ns = SIM_TIME_NEVER;
    ctx->proto = ops;
    ctx->state = calloc(1, ctx->proto->state_size > 0 ? ctx->proto->state_size : 1);
    ctx->account.worker = calloc(sc->workers, sizeof(*ctx->account.worker));
    if (ctx->state == NULL || ctx->account.worker == NULL)
        return sim_err_set(err, SIM_ENOMEM, NULL, "out of memory");
    ctx->eng = sim_engine_create(4 * (size_t)ctx->nhosts + 64, err);
    if (ctx->eng == NULL)
        return err->code;
    ctx->cl = sim_cluster_create(sc, err);
    if (ctx->cl == NULL)
        return err->code;
    sim_net_config net = sc->net;
    net.bundles = !ctx->plain_net;
    ctx->net = sim_net_create(&net, ctx->eng, err);
    if (ctx->net == NULL)
        return err->code;
    ctx->timeline = sim_cluster_timeline(ctx->cl, &ctx->ntimeline);
    for (uint32_t w = 0; w < sc->workers; w++) {
        ctx->account.worker[w].state = ACCT_WAIT;
        ctx->account.worker[w].iter_start_ns = SIM_TIME_NEVER;
    }
    int rc = build_training(ctx, err);
    return rc != SIM_OK ? rc : build_arena(ctx, err);
}

static void teardown(sim_ctx *ctx)
{
    sim_file_abort(ctx->out.metrics);
    sim_file_abort(ctx->out.events);
    if (ctx->proto != NULL && ctx->proto->fini != NULL && ctx->state != NULL)
        ctx->proto->fini(ctx->state);
    free(ctx->state);
    sim_arena_destroy(ctx->arena); /* after fini, which may still read its buffers */
    jobs_fini(ctx);
    train_destroy(ctx->tr);
    snap_fini(ctx);
    sim_tensor_free(ctx->eval.mean);
    free(ctx->eval.live);
    free(ctx->eval.ids);
    sim_net_destroy(ctx->net);
    sim_cluster_destroy(ctx->cl);
    sim_engine_destroy(ctx->eng);
    free(ctx->account.worker);
}

/* The run's threads: the caller's count, else HETSIM_THREADS (the test suites' hook to run
 * every run on a pool: outputs are the same for every count), else one. */
static unsigned run_threads(const sim_run_options *opt)
{
    if (opt != NULL && opt->threads > 0)
        return opt->threads < SIM_POOL_MAX_THREADS ? opt->threads : SIM_POOL_MAX_THREADS;
    const char *env = getenv("HETSIM_THREADS");
    if (env == NULL)
        return 1;
    char *end;
    unsigned long n = strtoul(env, &end, 10);
    return *end != '\0' || n < 1      ? 1
           : n < SIM_POOL_MAX_THREADS ? (unsigned)n
                                      : SIM_POOL_MAX_THREADS;
}

int sim_run(sim_scenario *sc, const proto_ops *ops, const sim_run_options *opt,
            sim_run_summary *out, sim_err *err)
{
    sim_ctx ctx = { 0 };
    sim_run_summary sum = { 0 };
    const char *dir = opt != NULL && opt->out_dir != NULL ? opt->out_dir : sc->out_dir;
    ctx.out.progress = opt != NULL && opt->progress;
    ctx.threads = run_threads(opt);
    ctx.plain_net = opt != NULL && opt->plain_net;
    ctx.out.observe = opt != NULL ? opt->observe : NULL;
    ctx.out.observe_ud = opt != NULL ? opt->observe_ud : NULL;
    sim_rundir *rd = NULL; /* the run directory in the making (outputs/rundir.h) */
    const char *work = NULL;
    int rc = sc->plots ? sim_plot_available(err) : SIM_OK; /* fail now, not after the run */
    /* A place gnuplot cannot be given (a space, a quote) failed after the run, exit 1. */
    if (rc == SIM_OK && sc->plots && sim_plot_path_ok("output directory", dir, err) != SIM_OK)
        rc = err->code = SIM_ESCENARIO;
    else if (rc == SIM_OK)
        rc = sim_rundir_begin(dir, &rd, err);
    if (rc == SIM_ESCENARIO) {
        if (opt == NULL || opt->out_dir == NULL)
            snprintf(err->path, sizeof(err->path), "$.output.dir");
        sim_err_file(err, sc->file);
    }
    if (rc == SIM_OK)
        work = sim_rundir_work(rd);
    if (rc == SIM_OK)
        rc = build(&ctx, sc, ops, err);
    if (rc == SIM_OK)
        rc = sim_run_open_outputs(&ctx, work, err);
    if (rc == SIM_OK)
        rc = simulate(&ctx, &sum, err);
    if (rc == SIM_OK)
        rc = sim_run_write_outputs(&ctx, work, &sum, err);
    const char *runs[1] = { work };
    if (rc == SIM_OK && sc->plots)
        rc = sim_plot_runs(runs, NULL, 1, work, SIM_PLOT_PNG, err);
    teardown(&ctx);
    if (rc == SIM_OK) {
        rc = sim_rundir_commit(rd, err);
        rd = NULL;
    }
    sim_rundir_abort(rd);
    if (rc == SIM_OK && out != NULL)
        *out = sum;
    return rc;
}
