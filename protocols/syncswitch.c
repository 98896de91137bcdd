/* Sync-Switch (PROTOCOLS §6): the parameter server trains the first part of the sample budget
 * in BSP, then switches to ASP for the rest (or ASP first with `order: asp_first`).
 *
 * The engine is the kit's parameter server (kit/ps_server.[ch]); this file decides when
 * its mode changes and with which rates. Its shards default to the paper's placement [C,
 * §6.1]: one on every worker's machine (placement "colocated", shards N), even when the
 * scenario has server hosts. The rules marked [R] are reconstructions (the paper's
 * body was not reachable; PROTOCOLS §6.2 and §10):
 *
 * Workload (§6.2.3). The budget is T iterations of `batch` samples: stop.iterations, or the
 * fewest iterations reaching stop.epochs (the smaller of the two if both are given). The BSP
 * phase is R = round(p T / N) rounds of N iterations (a round's global batch is N x batch),
 * the ASP phase the remaining T - R N iterations of one batch each, so samples are conserved:
 * the run stops when T iterations are counted, as any run does.
 *
 * The switch [R, as cake-lab/Sync-Switch's checkpoint and restart]: the engine drains (the last
 * BSP round completes; or the last ASP pushes land), `switch_pause_s` of simulated time passes
 * (the checkpoint and restart), and every worker pulls the model afresh in the new mode.
 *
 * Rates. BSP steps use the workload's schedule (`workload.lr` is BSP's rate, for the global
 * batch) and momentum. ASP steps use asp_lr (default lr / N, the authors' configuration: their
 * momentum-tuning readme scales 0.8 to 0.1 from a batch of 1024 to 128) times the schedule's
 * factor, and the momentum coefficient `momentum_at_switch` gives [R, the variants of §6.2.4]:
 *   keep   (the default) the workload's momentum m; the server's momentum buffer kept as BSP
 *          left it: what the authors' code does, each phase a new job restoring the previous
 *          one's checkpoint, optimizer slots included, with the same hyper-parameter set
 *          (cake-lab/Sync-Switch code/main.py, bsp.sh, asp.sh, start_server.sh; issue 39);
 *   zero   coefficient 0 (plain SGD), the buffer zeroed at the switch;
 *   scale  coefficient m / N, the buffer divided by N at the switch (the default before);
 *   ramp   as scale, then the coefficient rises linearly back to m over `ramp_steps` ASP
 *          updates of each shard.
 * With bsp_fraction 0 the run is ASP only with these rates (the buffer starts at zero). With
 * `order: asp_first` the ASP phase uses them from the start and the buffer is kept as it is
 * at the switch to BSP, which steps with m.
 *
 * Online straggler policy [R] (`online`, during the BSP phase): each iteration's own time (from
 * the later of its pull request and its model being ready to its gradient reaching every shard,
 * so waiting for others is excluded) enters a window of the 2N most recent; when one exceeds
 * `straggler_factor` x the window's median, that worker is a straggler and the server drains to
 * ASP (same rates as the ASP phase, the buffer untouched); once every flagged worker has had an
 * iteration back under the threshold, it drains back to BSP. Iterations trained so count against
 * the BSP phase's budget. `greedy` does so whenever it detects one; `budgeted` stops once the
 * online ASP iterations reach `online_budget` x the BSP phase's.
 */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "protocols/syncswitch_state.h"
#include "runtime/proto.h"
#include "sim/tensor.h"

static const char *const order_names[] = { "bsp_first", "asp_first" };
static const char *const mom_names[] = { "keep", "zero", "scale", "ramp" };
static const char *const online_names[] = { "none", "greedy", "budgeted" };

static int ss_configure(void *state, sim_cfg *cfg, const proto_setup *setup, sim_err *err)
{
    syncswitch *st = state;
    st->p = 0.05;
    st->order = ORDER_BSP_FIRST;
    sim_budget b = setup->budget;
    st->asp_lr = b.lr / setup->workers;
    st->mom = MOM_KEEP;
    st->ramp_steps = 1000;
    st->pause_s = 0.0;
    st->online = ONLINE_NONE;
    st->factor = 2.0;
    st->online_budget = 0.1;
    int rc = sim_cfg_double(cfg, "bsp_fraction", 0.0, 1.0, &st->p, err);
    if (rc == SIM_OK)
        rc = sim_cfg_choice(cfg, "order", order_names, 2, &st->order, err);
    if (rc == SIM_OK)
        rc = sim_cfg_double(cfg, "asp_lr", 0.0, INFINITY, &st->asp_lr, err);
    if (rc == SIM_OK)
        rc = sim_cfg_choice(cfg, "momentum_at_switch", mom_names, 4, &st->mom, err);
    if (rc == SIM_OK && st->mom == MOM_RAMP)
        rc = sim_cfg_int(cfg, "ramp_steps", 1, INT64_C(1) << 53, &st->ramp_steps, err);
    if (rc == SIM_OK)
        rc = sim_cfg_double(cfg, "switch_pause_s", 0.0, 1e9, &st->pause_s, err);
    if (rc == SIM_OK)
        rc = sim_cfg_choice(cfg, "online", online_names, 3, &st->online, err);
    if (rc == SIM_OK && st->online != ONLINE_NONE)
        rc = sim_cfg_double(cfg, "straggler_factor", 1.0, INFINITY, &st->factor, err);
    if (rc == SIM_OK && st->online == ONLINE_BUDGETED)
        rc = sim_cfg_double(cfg, "online_budget", 0.0, 1.0, &st->online_budget, err);
    if (rc != SIM_OK)
        return rc;
    if (st->online != ONLINE_NONE && st->order != ORDER_BSP_FIRST)
        return sim_cfg_fail(cfg, "online", err,
                            "an online policy needs order \"bsp_first\", got \"%s\"",
                            online_names[st->online]);
    st->lr = b.lr;
    st->m = b.momentum;
    st->n = setup->workers;
    /* The plan (below) has no BSP round whatever the data when bsp_fraction is 0 or
     * stop.iterations is so short that round(p T / N) is 0 (an epochs stop only shortens T):
     * the engine runs ASP only and keeps no BSP buffers. */
    uint64_t T = b.iterations;
    bool asp_only = st->p <= 0.0 || (T != UINT64_MAX && llround(st->p * (double)T / st->n) == 0);
    st->cfg.mode = asp_only ? PS_ASP : PS_BSP;
    st->cfg.switchable = !asp_only;
    /* The paper's placement (§6.1): one shard on every worker's machine. */
    return ps_server_configure(&st->cfg, cfg, setup, PS_PLACE_COLOCATED, err);
}

/* The run's arena: the kit's parameter server (all its tables), the online policy's flags,
 * window and scratch. */
static void ss_buffers(void *state, sim_arena *a, size_t num_params)
{
    syncswitch *st = state;
    st->srv = ps_server_buffers(&st->cfg, a, num_params);
    st->flagged = sim_arena_alloc(a, st->n, sizeof(*st->flagged));
    st->window = sim_arena_alloc(a, 2 * (size_t)st->n, sizeof(*st->window));
    st->sorted = sim_arena_alloc(a, 2 * (size_t)st->n, sizeof(*st->sorted));
}

/* Outside the arena: the parameter server's messages in flight. */
static uint64_t ss_memory(const void *state, size_t num_params)
{
    const syncswitch *st = state;
    return ps_server_memory(&st->cfg, num_params);
}

/* The ASP momentum coefficient after `step` updates of a shard. */
static double asp_momentum(const syncswitch *st, uint64_t step)
{
    double low = st->m / st->n;
    switch (st->mom) {
    case MOM_ZERO:
        return 0.0;
    case MOM_SCALE:
        return low;
    case MOM_RAMP:
        return step >= (uint64_t)st->ramp_steps
                   ? st->m
                   : low + (st->m - low) * (double)step / (double)st->ramp_steps;
    default:
        return st->m;
    }
}

static void rates(void *ud, const sim_ctx *ctx, int mode, uint64_t step, double *lr,
                  double *momentum)
{
    syncswitch *st = ud;
    double sched = sim_ctx_rates(ctx).lr;
    if (mode == PS_BSP) {
        *lr = sched;
        *momentum = st->m;
        st->lr_bsp = *lr;
        return;
    }
    *lr = st->lr > 0.0 ? st->asp_lr * (sched / st->lr) : st->asp_lr;
    *momentum = asp_momentum(st, step);
    st->lr_asp = *lr;
    st->m_asp = *momentum;
}

/* Moves the phase clocks to now, the time since the last change going to `mode`. */
static void clock_to(syncswitch *st, const sim_ctx *ctx, int mode)
{
    sim_time now = sim_ctx_now(ctx);
    st->time_ns[mode == PS_BSP ? 0 : 1] += now - st->mode_since;
    st->mode_since = now;
}

static void counted(void *ud, sim_ctx *ctx, uint32_t w, int mode)
{
    (void)w;
    syncswitch *st = ud;
    uint64_t b = sim_ctx_budget(ctx).batch;
    st->samples[mode == PS_BSP ? 0 : 1] += b;
    if (st->phase == PH_FIRST)
        st->counted_first++;
    if (st->excursion && mode != PS_BSP)
        st->online_samples += b;
}

/* ---- the switch ---- */

static uint64_t fnv53(const float *x, size_t n)
{
    return x != NULL ? sim_tensor_checksum(x, n) & ((UINT64_C(1) << 53) - 1) : 0;
}

static double norm(const float *x, size_t n)
{
    double s = 0.0;
    for (size_t i = 0; x != NULL && i < n; i++)
        s += (double)x[i] * (double)x[i];
    return sqrt(s);
}

/* The planned switch, drained: the momentum buffer as the policy says (BSP -> ASP). */
static void switch_buffers(syncswitch *st, sim_ctx *ctx)
{
    size_t P = sim_ctx_num_params(ctx);
    float *v = ps_server_velocity(st->srv);
    st->fnv_model = fnv53(ps_server_model(st->srv), P);
    st->fnv_v_before = fnv53(v, P);
    st->v_norm_before = norm(v, P);
    if (v != NULL && st->order == ORDER_BSP_FIRST) {
        if (st->mom == MOM_ZERO)
            sim_tensor_zero(v, P);
        else if (st->mom == MOM_SCALE || st->mom == MOM_RAMP)
            sim_tensor_scale(v, 1.0f / (float)st->n, P);
    }
    st->fnv_v_after = fnv53(v, P);
    st->v_norm_after = norm(v, P);
}

/* The mode the next resume sets, budgets given for the phase it starts. */
static int resume(syncswitch *st, sim_ctx *ctx, sim_err *err)
{
    sim_time now = sim_ctx_now(ctx);
    st->pause_ns += now - st->mode_since;
    st->mode_since = now;
    if (st->phase == PH_SECOND && st->resume_ns < 0)
        st->resume_ns = now;
    int rc = ps_server_resume(st->srv, ctx, st->next_mode, err);
    if (rc != SIM_OK || st->phase != PH_FIRST)
        return rc;
    uint64_t left = st->first > st->counted_first ? st->first - st->counted_first : 0;
    if (st->first == UINT64_MAX) { /* time split: only the excursion's budget */
        if (st->next_mode == PS_ASP)
            ps_server_drain_after(st->srv, ss_online_left(st, sim_ctx_budget(ctx).batch));
        return SIM_OK;
    }
    if (st->next_mode == PS_ASP) {
        uint64_t cap = ss_online_left(st, sim_ctx_budget(ctx).batch);
        ps_server_drain_after(st->srv, left < cap ? left : cap);
    } else {
        ps_server_stats s;
        ps_server_get_stats(st->srv, &s);
        uint64_t rounds = (left + st->n - 1) / st->n;
        ps_server_drain_after_round(st->srv, s.rounds + rounds - 1);
    }
    return SIM_OK;
}

static int drained(void *ud, sim_ctx *ctx, sim_err *err)
{
    syncswitch *st = ud;
    int was = ps_server_mode(st->srv);
    clock_to(st, ctx, was);
    bool done = st->counted_first >= st->first || st->time_up;
    if (st->phase == PH_FIRST && !done && st->excursion && was == PS_ASP) {
        /* An excursion ended: by recovery, or by its budget. */
        st->excursion = false;
        memset(st->flagged, 0, st->n);
        if (ss_online_left(st, sim_ctx_budget(ctx).batch) == 0)
            st->online_off = true;
        st->next_mode = PS_BSP;
        return resume(st, ctx, err);
    }
    if (st->phase == PH_FIRST && !done && st->excursion) {
        st->excursions++;
        st->next_mode = PS_ASP;
        return resume(st, ctx, err);
    }
    /* The planned switch. */
    st->phase = PH_SECOND;
    st->excursion = false;
    st->switch_ns = sim_ctx_now(ctx);
    ps_server_get_stats(st->srv, &st->at_switch);
    st->next_mode = st->order == ORDER_BSP_FIRST ? PS_ASP : PS_BSP;
    switch_buffers(st, ctx);
    if (st->pause_s > 0.0)
        return sim_ctx_timer(ctx, (sim_time)llround(st->pause_s * 1e9), EV_RESUME, SIM_NOBODY, 0,
                             NULL, err);
    return resume(st, ctx, err);
}

/* ---- the run ---- */

/* The budget T in iterations and the phases' lengths. */
static void plan(syncswitch *st, const sim_ctx *ctx)
{
    sim_budget b = sim_ctx_budget(ctx);
    uint64_t T = b.iterations;
    st->T = T;
    if (T == UINT64_MAX) { /* no sample budget: the phases split stop.time_s */
        if (b.time_ns == SIM_TIME_NEVER) {
            st->R = st->p > 0.0 ? UINT64_MAX : 0; /* nothing to split: the first mode only */
            st->first = UINT64_MAX;
            return;
        }
        st->R = st->p >= 1.0 ? UINT64_MAX : st->p <= 0.0 ? 0 : UINT64_MAX - 1;
        st->first = UINT64_MAX;
        return;
    }
    /* R N >= T: BSP throughout (the stop cuts the last round) */
    st->R = (uint64_t)llround(st->p * (double)T / st->n);
    uint64_t bsp = st->R * st->n < T ? st->R * st->n : T;
    st->first = st->order == ORDER_BSP_FIRST ? bsp : T - bsp;
}

static int ss_start(void *state, sim_ctx *ctx, sim_err *err)
{
    syncswitch *st = state;
    plan(st, ctx);
    st->switch_ns = st->resume_ns = -1;
    bool bsp_first = st->order == ORDER_BSP_FIRST;
    /* One phase only: ASP from the start (p = 0 or no BSP round), or BSP throughout. */
    bool timed = st->R == UINT64_MAX - 1;
    bool asp_only = st->R == 0, bsp_only = st->R == UINT64_MAX;
    if (!timed && !bsp_only && st->R * st->n >= st->T)
        bsp_only = true;
    st->cfg.mode = asp_only || (!bsp_only && !bsp_first) ? PS_ASP : PS_BSP;
    ps_server_hooks hooks = {
        .ud = st, .rates = rates, .counted = counted, .arrived = ss_arrived, .drained = drained
    };
    ps_server_init(st->srv, ctx, &st->cfg, &hooks);
    if (asp_only || bsp_only) {
        st->phase = PH_SECOND; /* nothing to switch */
    } else if (timed) {
        double share = bsp_first ? st->p : 1.0 - st->p;
        sim_time at = (sim_time)llround(share * (double)sim_ctx_budget(ctx).time_ns);
        int rc = sim_ctx_timer(ctx, at, EV_SWITCH, SIM_NOBODY, 0, NULL, err);
        if (rc != SIM_OK)
            return rc;
    } else if (bsp_first)
        ps_server_drain_after_round(st->srv, st->R - 1);
    else
        ps_server_drain_after(st->srv, st->first);
    return ps_server_start(st->srv, ctx, err);
}

static int ss_on_event(void *state, sim_ctx *ctx, const sim_event *ev, sim_err *err)
{
    syncswitch *st = state;
    if (ev->kind == EV_RESUME)
        return resume(st, ctx, err);
    if (ev->kind == EV_SWITCH) {
        st->time_up = true;
        return ps_server_drain(st->srv, ctx, err);
    }
    return ps_server_on_event(st->srv, ctx, ev, err);
}

/* A lost shard stalls the run whatever the switch: its drain cannot complete while a pull
 * waits for the shard, and every pull after it needs the shard too. */
static bool ss_stuck(const void *state, const sim_ctx *ctx)
{
    const syncswitch *st = state;
    return st->srv != NULL && ps_server_stuck(st->srv, ctx);
}

static double seconds(sim_time ns)
{
    return (double)ns / 1e9;
}

static void ss_report(const void *state, const sim_ctx *ctx, sim_report *out)
{
    const syncswitch *st = state;
    if (st->srv == NULL)
        return;
    ps_server_stats s;
    ps_server_get_stats(st->srv, &s);
    sim_time t[2] = { st->time_ns[0], st->time_ns[1] };
    sim_time open = sim_ctx_end(ctx) - st->mode_since; /* the run's end, whatever every_s */
    if (st->switch_ns >= 0 && st->resume_ns < 0)
        open = 0; /* stopped during the pause: counted below */
    t[ps_server_mode(st->srv) == PS_BSP ? 0 : 1] += open;
    sim_time pause =
        st->pause_ns +
        (st->switch_ns >= 0 && st->resume_ns < 0 ? sim_ctx_end(ctx) - st->mode_since : 0);
    sim_report_add(out, "budget_iterations", st->T == UINT64_MAX ? -1.0 : (double)st->T);
    sim_report_add(out, "bsp_rounds_planned", st->R >= UINT64_MAX - 1 ? -1.0 : (double)st->R);
    sim_report_add(out, "switch_s", st->switch_ns < 0 ? -1.0 : seconds(st->switch_ns));
    sim_report_add(out, "resume_s", st->resume_ns < 0 ? -1.0 : seconds(st->resume_ns));
    sim_report_add(out, "samples_bsp", (double)st->samples[0]);
    sim_report_add(out, "samples_asp", (double)st->samples[1]);
    sim_report_add(out, "samples_online_asp", (double)st->online_samples);
    sim_report_add(out, "time_bsp_s", seconds(t[0]));
    sim_report_add(out, "time_asp_s", seconds(t[1]));
    sim_report_add(out, "time_pause_s", seconds(pause));
    sim_report_add(out, "online_excursions", (double)st->excursions);
    sim_report_add(out, "lr_bsp", st->lr_bsp);
    sim_report_add(out, "lr_asp", st->lr_asp);
    sim_report_add(out, "momentum_asp", st->m_asp);
    sim_report_add(out, "rounds", (double)s.rounds);
    sim_report_add(out, "updates", (double)s.updates);
    sim_report_add(out, "pulls", (double)s.pulls);
    sim_report_add(out, "pushes", (double)s.pushes);
    sim_report_add(out, "lost_pushes", (double)s.lost);
    sim_report_add(out, "shard_failovers", (double)s.failovers);
    sim_report_add(out, "asp_staleness_mean",
                   s.stale_n > 0 ? (double)s.stale_sum / (double)s.stale_n : 0.0);
    sim_report_add(out, "asp_staleness_max", (double)s.stale_max);
    sim_report_add(out, "asp_slices_applied", (double)s.stale_n);
    sim_report_add(out, "switch_model_fnv53", (double)st->fnv_model);
    sim_report_add(out, "switch_velocity_before_fnv53", (double)st->fnv_v_before);
    sim_report_add(out, "switch_velocity_after_fnv53", (double)st->fnv_v_after);
    sim_report_add(out, "switch_velocity_norm_before", st->v_norm_before);
    sim_report_add(out, "switch_velocity_norm_after", st->v_norm_after);
    sim_report_add(out, "switch_rounds", (double)st->at_switch.rounds);
    sim_report_add(out, "server_params_fnv53",
                   (double)fnv53(ps_server_model(st->srv), sim_ctx_num_params(ctx)));
}

const proto_ops proto_syncswitch = {
    .name = "syncswitch",
    .summary = "Sync-Switch: parameter server in BSP for bsp_fraction of the samples, then ASP",
    .state_size = sizeof(syncswitch),
    .configure = ss_configure,
    .start = ss_start,
    .on_event = ss_on_event,
    .report = ss_report,
    .buffers = ss_buffers,
    .memory = ss_memory,
    .stuck = ss_stuck,
};
