/* Internal header of hpsgd (protocols/hpsgd.c: the iteration, the ring's and the barrier's
 * rounds, merges and flushes; protocols/hpsgd_members.c: the ring's members and launches,
 * failures, admissions, the barrier's restarts; protocols/hpsgd_config.c: configure, buffers,
 * report), included by those three files only. Calls run one way: hpsgd.c calls the other two,
 * which call nothing of hpsgd.c. */
#ifndef PROTOCOLS_HPSGD_STATE_H
#define PROTOCOLS_HPSGD_STATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kit/coll.h"
#include "kit/rejoin.h"
#include "outputs/output.h"
#include "runtime/arena.h"
#include "runtime/ctx.h"
#include "runtime/proto.h"
#include "sim/cfg.h"
#include "sim/err.h"
#include "sim/tensor.h"

enum {
    FLUSH_BOTH = 0,
    FLUSH_NEWEST = 1
};

/* What a worker is doing between its barrier release and its next computation. */
enum {
    PH_RUN = 0,         /* computing or waiting at the barrier */
    PH_FLUSH_WAIT = 1,  /* epoch flush: waiting for the reduction in flight */
    PH_FLUSH_FINAL = 2, /* epoch flush: waiting for the all-reduce of G */
    PH_OUT = 3,         /* failed, or recovered and waiting to be admitted */
    PH_FETCH = 4        /* admitted: fetching the global model before it computes */
};

enum {
    KIND_FETCH = 0 /* channel 0: the global model, to an admitted worker */
};

/* An entry of the tally of the active workers' iterations (hpsgd.tally). */
typedef struct hps_count {
    uint64_t settled; /* an iteration count (hps_worker.settled) */
    uint32_t workers; /* the active workers at it, at least 1 */
} hps_count;

typedef struct hpsgd {
    coll_hub *hub; /* channel 1: the ring, 2: the barrier */
    coll_ring *ring;
    coll_barrier *barrier;
    coll_mean *mean; /* the reduced mean of the ring's last round (real models only) */
    uint32_t n;
    int flush;               /* FLUSH_* */
    double momentum;         /* the optimizer's coefficient m, in [0, 1) */
    size_t P;                /* floats per model, 0 timing-only */
    float *vel;              /* (n * P) local steps' velocities by worker, m > 0 (else NULL) */
    float *mvel;             /* (n * P) merges' velocities by worker, m > 0 (else NULL) */
    float *scaled;           /* (P) with m > 0: a merge's mean, rescaled (admitting rounds) */
    float *xbar, *acc, *red; /* (n * P) each: x̄, G, A by worker, in the arena */
    uint32_t *members;       /* (n) scratch: barrier member lists, in the arena */
    hps_count *tally;        /* (n) the active workers' settled counts, increasing, in the arena */
    uint32_t ntally;         /* entries of the tally */
    uint64_t tallied;        /* entries the tally's updates passed (tests count them) */
    rejoin *rj;              /* the recovered waiting to be admitted; the admitted's fetches */
    bool admitting;          /* the last decided round admits the pending workers */
    bool admit_idle;         /* ... and launches nothing (an epoch's first round): the admitted
                              * start from the global model held for them, joined to no round */
    double launch_scale;     /* the last decided round's launches: members / contributors (the
                              * admitted join it with zero blocks), else 1 */
    uint64_t decided;        /* the last barrier round decided + 1 (0: none yet) */
    uint64_t void_launches;  /* `decided` when a failure abandoned a reduction (0: never): the
                              * members released from the last decided round after that launch
                              * nothing in it, as the abandoned ones (who had) took theirs back */
    bool reduced;            /* the last decided round: every reduction in flight had finished */
    bool epoch_end;          /* the last decided round ends an epoch */
    double last_lr;          /* its learning rate */
    uint64_t samples;        /* samples of the decided rounds */
    uint64_t next_epoch;     /* samples at which the current epoch ends */
    uint64_t train;          /* training examples, 0 timing-only */
    uint64_t merges;         /* global merges (the most any worker applied) */
    uint64_t merge_events;   /* merges over workers */
    uint64_t merged_steps;   /* gradients in those merges */
    uint64_t stale_sum;      /* staleness of those merges, in merges */
    uint64_t flushes, dropped;
} hpsgd;

/* A worker's state (proto_ops.worker_size, sim_ctx_worker). */
typedef struct hps_worker {
    uint8_t phase;      /* PH_* */
    bool init;          /* just merged: x̄ := x at the next release */
    bool inflight;      /* A is being reduced (or was, not merged yet) */
    bool ring_done;     /* the ring's round of A is done for it */
    bool arrived_done;  /* ring_done (or nothing in flight) when it arrived at the barrier */
    bool waiting;       /* arrived at the barrier, not released */
    uint64_t launches;  /* ring rounds joined: the round in flight */
    uint64_t settled;   /* iterations finished (released and updated) */
    uint64_t wm;        /* merges applied */
    uint64_t start_wm;  /* wm when its current computation started */
    uint64_t win_steps; /* gradients in G */
    uint64_t win_base;  /* the merge index G's first gradient started from */
    uint64_t fly_steps; /* gradients in A */
    uint64_t fly_base;  /* the merge index A's first gradient started from */
    double fly_scale;   /* A's round: members / contributors (hpsgd.launch_scale at its launch) */
    uint64_t since;     /* local steps since its last merge (momentum: the merge's decay) */
} hps_worker;

/* Worker w's state. Reads of it while acting for another worker are the protocol's
 * bookkeeping (the coordinator's decision reads what travels with each arrival; an admission
 * gives the newcomer the counters that travel with the global model), not peer reads. */
static inline hps_worker *hw(const sim_ctx *ctx, uint32_t w)
{
    return sim_ctx_worker(ctx, w);
}

/* Worker w's row of a per-worker block (x̄, G, A, velocities); NULL for the timing-only
 * model's empty blocks. */
static inline float *row(float *block, const hpsgd *st, uint32_t w)
{
    return block == NULL ? NULL : block + (size_t)w * st->P;
}

/* Worker w takes part: neither failed nor waiting to be admitted. (The runtime tells of a
 * failure as it marks the worker down, and hps_on_down makes it PH_OUT at once: the active
 * workers are those not PH_OUT, whose iteration counts the tally holds.) */
static inline bool active(const sim_ctx *ctx, uint32_t w)
{
    return hw(ctx, w)->phase != PH_OUT && !sim_ctx_down(ctx, w);
}

/* Whether no active worker has finished fewer than k iterations (read from the tally). */
static inline bool none_behind(const hpsgd *st, uint64_t k)
{
    return st->ntally == 0 || st->tally[0].settled >= k;
}

/* Worker w's fresh state (at the start, starting over alone, admitted): just merged (init),
 * nothing in flight, not waiting, an empty window, G and its velocity zero. */
static inline void fresh(hpsgd *st, sim_ctx *ctx, uint32_t w)
{
    hps_worker *x = hw(ctx, w);
    x->init = true;
    x->inflight = x->waiting = false;
    x->win_steps = x->since = 0;
    sim_tensor_zero(row(st->acc, st, w), st->P);
    if (st->momentum > 0) {
        sim_tensor_zero(row(st->vel, st, w), st->P);
        sim_tensor_zero(row(st->mvel, st, w), st->P);
    }
}

/* Worker w computes its next iteration (settled[w]) on the model of its wm[w] merges. */
static inline int compute_next(sim_ctx *ctx, uint32_t w, sim_err *err)
{
    hw(ctx, w)->start_wm = hw(ctx, w)->wm;
    return sim_ctx_compute(ctx, w, hw(ctx, w)->settled, err);
}

/* ---- hpsgd_members.c ---- */

/* Worker w's phase and iteration count become `phase` and `settled`, the tally following: every
 * change of a worker's count, and every change to or from PH_OUT, goes through it (a phase that
 * keeps the worker active, the flushes' and a fetch's end, may be set directly). */
void hps_set(hpsgd *st, sim_ctx *ctx, uint32_t w, uint8_t phase, uint64_t settled);

/* The active workers in id order, into st->members; their number. */
uint32_t hps_active_list(hpsgd *st, const sim_ctx *ctx);

/* A new ring generation over the active workers (none of them joined to a round). */
int hps_ring_reset_active(hpsgd *st, sim_ctx *ctx, sim_err *err);

/* A := G, G := 0, and w joins the ring's next round with A (launches[w] + 1). */
int hps_launch(hpsgd *st, sim_ctx *ctx, uint32_t w, sim_err *err);

/* Whether worker j runs (is active), at its iteration (settled) in *k: for round boundaries and
 * the rejoin service's choice of the worker that sends an admitted one its model. */
bool hps_runs(sim_ctx *ctx, uint32_t j, uint64_t *k);

/* The rejoin service's owner table (rejoin_owner, at start): who runs, starting over alone, an
 * admission. */
extern const rejoin_ops hps_rejoin;

/* In a round that merges and launches, or that starts an epoch (the ring idle, every member
 * holding the global model), the pending workers are chosen for admission. */
int hps_maybe_admit(hpsgd *st, sim_ctx *ctx, uint32_t coord, sim_err *err);

/* After the coordinator's update in an admitting round: the chosen are admitted. */
int hps_admit(hpsgd *st, sim_ctx *ctx, uint32_t coord, sim_err *err);

/* Worker w failed (if nobody active is left, the rejoin service starts a waiting recovered
 * worker over alone), or its fetched model (from src) arrived. (A recovery is the rejoin
 * service's: rejoin_up.) */
int hps_on_down(hpsgd *st, sim_ctx *ctx, uint32_t w, sim_err *err);
int hps_on_fetched(hpsgd *st, sim_ctx *ctx, uint32_t w, uint32_t src, sim_err *err);

/* hpsgd_config.c: the ops table's configure, hpsgd's own buffers, its memory outside the arena
 * (the global model the rejoin service holds for an epoch's first round's admissions) and the
 * report (the run's arena frees the kit's objects: no fini). */
int hps_configure(void *state, sim_cfg *cfg, const proto_setup *setup, sim_err *err);
void hps_buffers(void *state, sim_arena *a, size_t num_params);
uint64_t hps_memory(const void *state, size_t num_params);
void hps_report(const void *state, const sim_ctx *ctx, sim_report *out);

#endif
