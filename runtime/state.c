/* Helpers of the runner's state (see runtime/state.h). */
#include "runtime/state.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <sys/resource.h>
#include <time.h>

/* Moves worker w's time accounting to the state it is in now. */
void sim_run_acct_update(sim_ctx *ctx, uint32_t w)
{
    if (w >= ctx->nworkers)
        return;
    worker_acct *a = &ctx->account.worker[w];
    bool down = sim_cluster_down(ctx->cl, w);
    bool inflight = sim_net_host_inflight(ctx->net, w) > 0;
    uint8_t st = down ? ACCT_DOWN : a->computing ? ACCT_COMPUTE : inflight ? ACCT_COMM : ACCT_WAIT;
    /* Communication that overlaps computation: counted as compute above, and here too. */
    bool overlap = st == ACCT_COMPUTE && inflight;
    if (overlap != a->overlap) {
        sim_time now = sim_engine_now(ctx->eng);
        if (a->overlap)
            a->overlap_ns += now - a->overlap_since;
        a->overlap_since = now;
        a->overlap = overlap;
    }
    if (st == a->state)
        return;
    sim_time now = sim_engine_now(ctx->eng);
    a->spent[a->state] += now - a->since;
    a->since = now;
    a->state = st;
}

void sim_run_acct_close(sim_ctx *ctx, uint32_t w, sim_time end)
{
    worker_acct *a = &ctx->account.worker[w];
    a->spent[a->state] += end - a->since;
    a->since = end;
    if (a->overlap) {
        a->overlap_ns += end - a->overlap_since;
        a->overlap_since = end;
    }
}

void sim_run_stop(sim_ctx *ctx, const char *reason)
{
    if (ctx->stop.reason == NULL) {
        ctx->stop.reason = reason;
        sim_engine_stop(ctx->eng);
    }
}

double sim_run_epoch(const sim_ctx *ctx)
{
    if (train_train_size(ctx->tr) == 0)
        return NAN; /* a model without data: timing-only or averaging-only */
    return (double)ctx->account.samples / (double)train_train_size(ctx->tr);
}

void sim_run_trace(sim_ctx *ctx, const char *what, int64_t worker, int64_t peer, uint64_t tag,
                   uint64_t bytes, uint64_t arg)
{
    if (ctx->out.events == NULL)
        return;
    fprintf(sim_file_stream(ctx->out.events),
            "%" PRId64 ",%s,%" PRId64 ",%" PRId64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 "\n",
            sim_engine_now(ctx->eng), what, worker, peer, tag, bytes, arg);
}

double sim_run_wall_since(const struct timespec *t0)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)(t.tv_sec - t0->tv_sec) + 1e-9 * (double)(t.tv_nsec - t0->tv_nsec);
}

uint64_t sim_run_peak_rss(void)
{
    struct rusage ru;
    if (getrusage(RUSAGE_SELF, &ru) != 0)
        return 0;
    return (uint64_t)ru.ru_maxrss * 1024u; /* Linux reports KiB */
}

sim_budget sim_run_budget(const sim_scenario *sc)
{
    const model_ops *model = model_find(sc->model);
    sim_budget b = {
        .batch = sc->batch,
        .lr = sc->lr,
        .momentum = sc->momentum,
        .iterations = sc->stop_iterations != 0 ? sc->stop_iterations : UINT64_MAX,
        .time_ns = sc->stop_ns,
        .rounds = sc->stop_rounds,
        .averaging_only = model != NULL && (model->flags & MODEL_AVERAGING_ONLY),
    };
    return b;
}

sim_host sim_run_host(const sim_scenario *sc, uint32_t h)
{
    const sim_net_config *net = &sc->net;
    sim_host host = { .kind = h < sc->workers                 ? SIM_HOST_WORKER
                              : h < sc->workers + sc->servers ? SIM_HOST_SERVER
                                                              : SIM_HOST_NONE };
    if (host.kind == SIM_HOST_NONE)
        return host;
    host.node = net->node_of != NULL ? net->node_of[h] : h;
    if (net->topology == SIM_TOPO_RACKS)
        host.rack = host.node / net->rack_size;
    return host;
}

/* proto_setup.homogeneous: the workers alike for the whole run. */
static bool homogeneous(const sim_scenario *sc)
{
    if (sc->nstragglers > 0)
        return false;
    for (uint32_t w = 1; w < sc->workers; w++) {
        if (sc->speeds[w] != sc->speeds[0] || sc->bandwidth_bps[w] != sc->bandwidth_bps[0] ||
            sc->latency_ns[w] != sc->latency_ns[0])
            return false;
        if (sc->devices != NULL && sc->devices[w] != sc->devices[0])
            return false;
    }
    return true;
}

proto_setup sim_run_setup(const sim_scenario *sc)
{
    proto_setup s = {
        .workers = sc->workers,
        .servers = sc->servers,
        .layers = sc->layers.n,
        .iteration_ns = sc->iteration_ns,
        .budget = sim_run_budget(sc),
    };
    /* A rack's workers are consecutive: racks follow nodes, nodes follow hosts. */
    uint32_t last = 0, run = 0;
    for (uint32_t w = 0; w < sc->workers; w++) {
        uint32_t rack = sim_run_host(sc, w).rack;
        run = w > 0 && rack == last ? run + 1 : 1;
        last = rack;
        s.racks = rack + 1;
        s.rack_workers = run > s.rack_workers ? run : s.rack_workers;
    }
    for (size_t k = 0; k < sc->nstragglers; k++) {
        const sim_straggler *st = &sc->stragglers[k];
        if (st->kind == SIM_STRAG_FAILURE && st->nworkers > 0 && st->workers[0] == 0)
            s.worker0_fails = true; /* ids ascending: the first is 0 when 0 is one */
    }
    s.homogeneous = homogeneous(sc);
    return s;
}
