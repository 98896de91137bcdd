/* HPSGD's configuration, buffers, memory, report and fini (see protocols/hpsgd.c). */
#include <math.h>

#include "kit/coll.h"
#include "kit/rejoin.h"
#include "protocols/hpsgd_state.h"

int hps_configure(void *state, sim_cfg *cfg, const proto_setup *setup, sim_err *err)
{
    hpsgd *st = state;
    static const char *const names[] = { "both", "newest" };
    st->n = setup->workers;
    st->flush = FLUSH_BOTH;
    st->momentum = 0.0;
    int rc = sim_cfg_choice(cfg, "flush", names, 2, &st->flush, err);
    if (rc == SIM_OK)
        rc = sim_cfg_double(cfg, "momentum", 0.0, nextafter(1.0, 0.0), &st->momentum, err);
    return rc;
}

/* The run's arena: x̄, G and A per worker, with momentum two velocities per worker (the local
 * steps' and the merges') and the rescaled mean, the member lists' scratch and the tally (hpsgd.c's
 * hps_arena adds the kit's objects). */
void hps_buffers(void *state, sim_arena *a, size_t num_params)
{
    hpsgd *st = state;
    size_t n = st->n;
    st->xbar = sim_arena_alloc(a, n * num_params, sizeof(float));
    st->acc = sim_arena_alloc(a, n * num_params, sizeof(float));
    st->red = sim_arena_alloc(a, n * num_params, sizeof(float));
    if (st->momentum > 0) {
        st->vel = sim_arena_alloc(a, n * num_params, sizeof(float));
        st->mvel = sim_arena_alloc(a, n * num_params, sizeof(float));
        st->scaled = sim_arena_alloc(a, num_params, sizeof(float));
    }
    st->members = sim_arena_alloc(a, n, sizeof(uint32_t));
    st->tally = sim_arena_alloc(a, n, sizeof(hps_count));
}

/* Outside the arena: the global model's snapshot the rejoin service holds for the workers an
 * epoch's first round admits (hps_admit), from that round to the next. */
uint64_t hps_memory(const void *state, size_t num_params)
{
    (void)state;
    return proto_snapshot_bytes(num_params);
}

void hps_report(const void *state, const sim_ctx *ctx, sim_report *out)
{
    (void)ctx;
    const hpsgd *st = state;
    double ev = st->merge_events > 0 ? (double)st->merge_events : 1.0;
    sim_report_add(out, "momentum", st->momentum);
    sim_report_add(out, "merges", (double)st->merges);
    sim_report_add(out, "mean_local_steps_per_merge", (double)st->merged_steps / ev);
    sim_report_add(out, "mean_staleness_merges", (double)st->stale_sum / ev);
    sim_report_add(out, "epoch_flushes", (double)st->flushes);
    sim_report_add(out, "dropped_accumulations", (double)st->dropped);
    coll_stats r, b;
    coll_ring_stats(st->ring, &r);
    coll_barrier_stats(st->barrier, &b);
    sim_report_add(out, "abandoned_reductions", (double)r.abandoned);
    sim_report_add(out, "admitted", (double)rejoin_admitted(st->rj));
    sim_report_add(out, "ring_restarts", (double)r.restarts);
    sim_report_add(out, "stale_messages", (double)(r.stale + b.stale));
}
