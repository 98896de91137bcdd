/* Parameter server (PROTOCOLS §1.3): BSP, ASP or SSP over K shards, the mode fixed for the
 * run. The engine (slices, rounds, failures) is the kit's kit/ps_server.[ch]; this
 * file parses $.protocol and reports. The shards default to one per host of the placement
 * (every server host, or every worker), as parameter servers shard a model over all their
 * server machines. */
#include "kit/ps_server.h"
#include "runtime/proto.h"
#include "sim/tensor.h"

typedef struct ps {
    ps_server_config cfg;
    ps_server *srv; /* in the run's arena */
} ps;

static const char *const mode_names[] = { "bsp", "asp", "ssp" };

static int ps_configure(void *state, sim_cfg *cfg, const proto_setup *setup, sim_err *err)
{
    ps *st = state;
    st->cfg.mode = PS_BSP;
    st->cfg.staleness = 2;
    int rc = sim_cfg_choice(cfg, "mode", mode_names, 3, &st->cfg.mode, err);
    if (rc == SIM_OK && st->cfg.mode == PS_SSP)
        rc = sim_cfg_int(cfg, "staleness", 0, INT32_MAX, &st->cfg.staleness, err);
    return rc != SIM_OK ? rc : ps_server_configure(&st->cfg, cfg, setup, -1, err);
}

/* The run's arena: the kit's parameter server, all its tables. */
static void ps_buffers(void *state, sim_arena *a, size_t num_params)
{
    ps *st = state;
    st->srv = ps_server_buffers(&st->cfg, a, num_params);
}

/* Outside the arena: the server's messages in flight. */
static uint64_t ps_memory(const void *state, size_t num_params)
{
    const ps *st = state;
    return ps_server_memory(&st->cfg, num_params);
}

static int ps_start(void *state, sim_ctx *ctx, sim_err *err)
{
    ps *st = state;
    ps_server_init(st->srv, ctx, &st->cfg, NULL);
    return ps_server_start(st->srv, ctx, err);
}

static int ps_on_event(void *state, sim_ctx *ctx, const sim_event *ev, sim_err *err)
{
    ps *st = state;
    return ps_server_on_event(st->srv, ctx, ev, err);
}

/* A lost shard (colocated, failover_s 0) stalls the run: every pull to come needs it. */
static bool ps_stuck(const void *state, const sim_ctx *ctx)
{
    const ps *st = state;
    return st->srv != NULL && ps_server_stuck(st->srv, ctx);
}

static void ps_report(const void *state, const sim_ctx *ctx, sim_report *out)
{
    const ps *st = state;
    if (st->srv == NULL)
        return;
    ps_server_stats s;
    ps_server_get_stats(st->srv, &s);
    if (st->cfg.mode == PS_BSP)
        sim_report_add(out, "rounds", (double)s.rounds);
    sim_report_add(out, "updates", (double)s.updates);
    sim_report_add(out, "max_clock_gap", (double)s.max_gap);
    sim_report_add(out, "pulls", (double)s.pulls);
    sim_report_add(out, "pushes", (double)s.pushes);
    sim_report_add(out, "lost_pushes", (double)s.lost);
    sim_report_add(out, "shard_failovers", (double)s.failovers);
    /* The server model's FNV-1a (as workers.csv's params_fnv), cut to the 53 bits a double
     * holds exactly; a model of zero floats (timing-only) has none to report, as there. */
    const float *x = ps_server_model(st->srv);
    if (x != NULL && sim_ctx_num_params(ctx) > 0)
        sim_report_add(
            out, "server_params_fnv53",
            (double)(sim_tensor_checksum(x, sim_ctx_num_params(ctx)) & ((UINT64_C(1) << 53) - 1)));
}

const proto_ops proto_ps = {
    .name = "ps",
    .summary = "parameter server over K shards: bsp (mean per round), asp, ssp (staleness s)",
    .state_size = sizeof(ps),
    .configure = ps_configure,
    .start = ps_start,
    .on_event = ps_on_event,
    .buffers = ps_buffers,
    .report = ps_report,
    .memory = ps_memory,
    .stuck = ps_stuck,
};
