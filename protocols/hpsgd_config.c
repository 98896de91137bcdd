/* HPSGD's configuration, memory, report and fini (see protocols/hpsgd.c). */
#include <math.h>
#include <stdlib.h>

#include "protocols/coll.h"
#include "protocols/hpsgd_state.h"
#include "protocols/rejoin.h"
#include "sim/tensor.h"

int hps_configure(void *state, sim_cfg *cfg, const sim_scenario *sc, sim_err *err)
{
    hpsgd *st = state;
    static const char *const names[] = { "both", "newest" };
    st->n = sc->workers;
    st->flush = FLUSH_BOTH;
    st->momentum = 0.0;
    int rc = sim_cfg_choice(cfg, "flush", names, 2, &st->flush, err);
    if (rc == SIM_OK)
        rc = sim_cfg_double(cfg, "momentum", 0.0, nextafter(1.0, 0.0), &st->momentum, err);
    return rc;
}

void hps_fini(void *state)
{
    hpsgd *st = state;
    coll_ring_destroy(st->ring);
    coll_barrier_destroy(st->barrier);
    coll_mean_destroy(st->mean);
    coll_hub_destroy(st->hub);
    sim_tensor_free(st->xbar);
    sim_tensor_free(st->acc);
    sim_tensor_free(st->red);
    sim_tensor_free(st->vel);
    sim_tensor_free(st->scaled);
    free(st->members);
    free(st->phase);
    free(st->init);
    free(st->inflight);
    free(st->ring_done);
    free(st->arrived_done);
    free(st->waiting);
    rejoin_destroy(st->rj);
    free(st->outside);
    free(st->launches);
    free(st->wait_round);
    free(st->settled);
    free(st->wm);
    free(st->start_wm);
    free(st->win_steps);
    free(st->win_base);
    free(st->fly_steps);
    free(st->fly_base);
}

/* Three models per worker (x̄, G, A), the reduced mean, with momentum a velocity per worker and
 * one more model, the ring's and the barrier's arrays and the per-worker bookkeeping. */
uint64_t hps_memory(const void *state, const sim_scenario *sc, size_t num_params)
{
    const hpsgd *st = state;
    uint64_t n = sc->workers, models = 3 * n + 1 + (st->momentum > 0 ? n + 1 : 0);
    return models * (uint64_t)num_params * 4 + coll_ring_memory(sc->workers, sc->workers) +
           n * (sizeof(float *) + 4 * sizeof(uint32_t) + 6 + 9 * sizeof(uint64_t));
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
    sim_report_add(out, "abandoned_reductions", (double)st->abandoned);
    sim_report_add(out, "admitted", (double)rejoin_admitted(st->rj));
    coll_stats r, b;
    coll_ring_stats(st->ring, &r);
    coll_barrier_stats(st->barrier, &b);
    sim_report_add(out, "ring_restarts", (double)r.restarts);
    sim_report_add(out, "stale_messages", (double)(r.stale + b.stale));
}
