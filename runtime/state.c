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
