/* The parameter-server engine's setup and queries (kit/ps_server.h,
 * kit/ps_server_state.h): the shared keys parsed and checked, the memory estimate, the
 * engine's buffers in the owner's arena and their set-up (shards and their slices, the server
 * model), and the accessors that only read or set a field. Calls nothing of
 * kit/ps_server_run.c. */
#include <inttypes.h>
#include <math.h>

#include "kit/ps_server.h"
#include "kit/ps_server_state.h"
#include "runtime/proto.h"
#include "sim/tensor.h"

static const char *const placement_names[] = { "servers", "colocated" };

/* $.protocol.sync_overhead_ms, read only when given (not written when absent: 0, none), for
 * an engine that runs BSP rounds; a positive time is at least 1 ns. */
static int sync_overhead(ps_server_config *c, sim_cfg *cfg, sim_err *err)
{
    c->sync_ns = 0;
    bool rounds = c->mode == PS_BSP || c->switchable;
    if (rounds && sim_cfg_allow(cfg, "sync_overhead_ms", err) != SIM_OK)
        return SIM_ENOMEM;
    if (!sim_cfg_has(cfg, "sync_overhead_ms"))
        return SIM_OK;
    if (!rounds)
        return sim_cfg_fail(cfg, "sync_overhead_ms", err,
                            "applies to BSP rounds, and this run has none");
    double ms = 0.0;
    int rc = sim_cfg_double(cfg, "sync_overhead_ms", 0.0, 1e9, &ms, err);
    sim_time ns = (sim_time)llround(ms * 1e6);
    c->sync_ns = ms > 0.0 && ns == 0 ? 1 : ns;
    return rc;
}

int ps_server_configure(ps_server_config *c, sim_cfg *cfg, const proto_setup *setup, int placement,
                        sim_err *err)
{
    c->placement = placement >= 0        ? placement
                   : setup->servers >= 1 ? PS_PLACE_SERVERS
                                         : PS_PLACE_COLOCATED;
    int rc = sim_cfg_choice(cfg, "placement", placement_names, 2, &c->placement, err);
    if (rc != SIM_OK)
        return rc;
    /* One shard per host of the placement (at least one, so that a placement on no server
     * host is refused by the check below). */
    uint32_t hosts = c->placement == PS_PLACE_SERVERS ? setup->servers : setup->workers;
    int64_t shards = hosts >= 1 ? (int64_t)hosts : 1;
    rc = sim_cfg_int(cfg, "shards", 1, PS_SERVER_MAX_SHARDS, &shards, err);
    if (rc != SIM_OK)
        return rc;
    if (c->placement == PS_PLACE_SERVERS && shards > (int64_t)setup->servers)
        return sim_cfg_fail(cfg, "shards", err,
                            "must be <= servers (%u) with placement \"servers\", got %" PRId64,
                            setup->servers, shards);
    if (c->placement == PS_PLACE_COLOCATED && shards > (int64_t)setup->workers)
        return sim_cfg_fail(cfg, "shards", err,
                            "must be <= workers (%u) with placement \"colocated\", got %" PRId64,
                            setup->workers, shards);
    c->overlap = true;
    rc = sim_cfg_bool(cfg, "overlap", &c->overlap, err);
    if (rc != SIM_OK)
        return rc;
    double failover_s = 1.0;
    if (c->placement == PS_PLACE_COLOCATED)
        rc = sim_cfg_double(cfg, "failover_s", 0.0, 1e9, &failover_s, err);
    if (rc != SIM_OK)
        return rc;
    /* 0 is never; a positive time is at least 1 ns */
    sim_time ns = (sim_time)llround(failover_s * 1e9);
    c->failover_ns = c->placement != PS_PLACE_COLOCATED ? 0 : failover_s > 0.0 && ns == 0 ? 1 : ns;
    c->workers = setup->workers;
    c->shards = (uint32_t)shards;
    c->layered = c->overlap && setup->layers > 1;
    c->momentum = setup->budget.momentum > 0.0;
    return sync_overhead(c, cfg, err);
}

/* The bytes of a worker's messages in flight to or from one shard but their snapshot: the
 * engine's events, the network's flows and the runtime's message records. Measured: a
 * timing-only run of 1,000 workers and 1,000 colocated shards peaks at 371 MB with every
 * pull request in flight (1 us) and 742 MB once pulls and pushes run (0.03 s and 0.1 s), 742
 * bytes a pair; 2,000 workers, 1,488 MB at 1 us. */
#define PS_FLIGHT_BYTES 1024

/* Outside the arena: the messages' snapshots. A worker has either its pull's K slices of the
 * model or its push's K slices of its gradient in flight, each a copy (K slices of about
 * P / K floats per worker). A snapshot's estimate (its slice and a page) covers its message's
 * other bytes; a timing-only message has none, and its engine's and network's bytes are
 * counted alone (K = N colocated shards: N^2 messages, 37 GB for 10,000 workers, which the
 * estimate missed and the kernel's OOM killer stopped). */
uint64_t ps_server_memory(const ps_server_config *c, size_t num_params)
{
    size_t slice = c->shards > 0 ? (num_params + c->shards - 1) / c->shards : num_params;
    uint64_t each = proto_snapshot_bytes(slice);
    return (uint64_t)c->workers * c->shards * (each > PS_FLIGHT_BYTES ? each : PS_FLIGHT_BYTES);
}

/* The engine and its tables, all from the owner's arena: bookkeeping per worker and shard,
 * the server model and its momentum, with bsp the round's mean and every worker's gradient,
 * and with overlap (and several layers) the slices' layers and arrival times. */
ps_server *ps_server_buffers(const ps_server_config *c, sim_arena *a, size_t num_params)
{
    size_t n = c->workers, K = c->shards, P = num_params;
    bool momentum = c->momentum, bsp = c->mode == PS_BSP || c->switchable;
    bool layered = c->layered;
    ps_server *s = sim_arena_alloc(a, 1, sizeof(*s));
    ps_worker *w = sim_arena_alloc(a, n, sizeof(*w));
    ps_shard *sh = sim_arena_alloc(a, K, sizeof(*sh));
    uint8_t *link = sim_arena_alloc(a, n * K, sizeof(*link));
    uint64_t *version = sim_arena_alloc(a, n * K, sizeof(*version));
    const float **ptrs = sim_arena_alloc(a, n, sizeof(*ptrs));
    float *x = sim_arena_alloc(a, P, sizeof(float));
    float *v = momentum ? sim_arena_alloc(a, P, sizeof(float)) : NULL;
    float *mean = bsp ? sim_arena_alloc(a, P, sizeof(float)) : NULL;
    float *grads = bsp ? sim_arena_alloc(a, n * P, sizeof(float)) : NULL;
    size_t *first_layer = layered ? sim_arena_alloc(a, K, sizeof(*first_layer)) : NULL;
    sim_time *arrive = layered ? sim_arena_alloc(a, n * K, sizeof(*arrive)) : NULL;
    if (s == NULL) /* a sizing arena */
        return NULL;
    /* A model of zero floats (timing-only) gets sim_tensor_alloc(0)'s shared empty block, so
     * that the engine steps and sends its slices of no floats as with any model. */
    if (P == 0) {
        x = sim_tensor_alloc(0);
        v = momentum ? x : NULL;
        mean = bsp ? x : NULL;
        grads = bsp ? x : NULL;
    }
    *s = (ps_server){ .w = w,
                      .sh = sh,
                      .link = link,
                      .version = version,
                      .ptrs = ptrs,
                      .x = x,
                      .v = v,
                      .mean = mean,
                      .grads = grads,
                      .first_layer = first_layer,
                      .arrive = arrive };
    return s;
}

/* overlap: the layer (sim_ctx_layers) that holds the first byte of each slice's message,
 * whose gradient completes the slice last (backward runs from the last layer to layer 0) and
 * whose forward pass is the first to need the slice. With one layer every slice is ready at
 * the iteration's end and needed at its start: first_layer and arrive are NULL. */
static void layers_of_slices(ps_server *s, sim_ctx *ctx)
{
    size_t nl;
    sim_ctx_layers(ctx, &nl);
    if (s->first_layer == NULL)
        return;
    uint64_t at = 0, end = sim_ctx_layer_bytes(ctx, 0); /* layer i's bytes end at `end` */
    size_t i = 0;
    for (uint32_t k = 0; k < s->K; k++) {
        while (end <= at && i + 1 < nl)
            end += sim_ctx_layer_bytes(ctx, ++i);
        s->first_layer[k] = i;
        at += s->sh[k].bytes;
    }
}

void ps_server_init(ps_server *s, sim_ctx *ctx, const ps_server_config *c,
                    const ps_server_hooks *hooks)
{
    size_t P = sim_ctx_num_params(ctx);
    uint64_t S = sim_ctx_layer_bytes(ctx, SIM_LAYERS_ALL);
    s->mode = c->mode;
    s->placement = c->placement;
    s->staleness = c->staleness;
    s->n = c->workers;
    s->K = c->shards;
    s->failover_ns = c->failover_ns;
    s->stop_ns = sim_ctx_budget(ctx).time_ns;
    s->sync_ns = c->sync_ns;
    s->P = P;
    if (hooks != NULL)
        s->hooks = *hooks;
    for (uint32_t k = 0; k < s->K; k++) {
        ps_shard *sh = &s->sh[k];
        sh->host = s->placement == PS_PLACE_SERVERS ? s->n + k : k;
        sh->off = k * (P / s->K) + (k < P % s->K ? k : P % s->K);
        sh->len = P / s->K + (k < P % s->K ? 1 : 0);
        sh->bytes = S / s->K + (k < S % s->K ? 1 : 0);
    }
    layers_of_slices(s, ctx);
    sim_tensor_copy(s->x, sim_ctx_params_view(ctx, 0), P);
    sim_ctx_set_eval_params(ctx, s->x);
    s->min_clock = UINT64_MAX;
    s->drain_round = UINT64_MAX;
    s->budget = UINT64_MAX;
    s->rate_round = UINT64_MAX;
}

int ps_server_mode(const ps_server *s)
{
    return s->mode;
}

bool ps_server_draining(const ps_server *s)
{
    return s->draining;
}

void ps_server_drain_after_round(ps_server *s, uint64_t round)
{
    s->drain_round = round;
}

void ps_server_drain_after(ps_server *s, uint64_t iterations)
{
    s->budget = iterations;
}

const float *ps_server_model(const ps_server *s)
{
    return s->x;
}

float *ps_server_velocity(ps_server *s)
{
    return s->v;
}

void ps_server_get_stats(const ps_server *s, ps_server_stats *out)
{
    *out = s->stats;
    uint64_t rounds = UINT64_MAX;
    for (uint32_t k = 0; k < s->K; k++)
        rounds = s->sh[k].round < rounds ? s->sh[k].round : rounds;
    out->rounds = s->K > 0 ? rounds : 0;
}
