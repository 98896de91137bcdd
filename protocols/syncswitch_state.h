/* Internal header of Sync-Switch (protocols/syncswitch.c: configuration, plan, the switch,
 * report; protocols/syncswitch_online.c: the online straggler policy): only those two files
 * include it. The protocol is described in syncswitch.c. */
#ifndef PROTOCOLS_SYNCSWITCH_STATE_H
#define PROTOCOLS_SYNCSWITCH_STATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kit/ps_server.h"
#include "runtime/ctx.h"
#include "sim/err.h"

enum {
    EV_RESUME = SIM_EV_USER,    /* the switch's pause is over */
    EV_SWITCH = SIM_EV_USER + 1 /* without a sample budget: the first phase's time is up */
};

enum {
    ORDER_BSP_FIRST = 0,
    ORDER_ASP_FIRST = 1
};

enum {
    MOM_KEEP = 0,
    MOM_ZERO = 1,
    MOM_SCALE = 2,
    MOM_RAMP = 3
};

enum {
    ONLINE_NONE = 0,
    ONLINE_GREEDY = 1,
    ONLINE_BUDGETED = 2
};

/* Where the run is in its plan. */
enum {
    PH_FIRST = 0, /* the first phase (which may hold online excursions) */
    PH_SECOND = 1 /* after the switch */
};

typedef struct syncswitch {
    ps_server_config cfg;
    double p, asp_lr, pause_s, factor, online_budget;
    int order, mom, online;
    int64_t ramp_steps;
    double lr, m; /* the workload's */
    uint32_t n;
    ps_server *srv;         /* in the run's arena */
    uint64_t T, R;          /* budget in iterations, BSP rounds */
    uint64_t first;         /* iterations of the first phase (BSP: R N) */
    uint64_t counted_first; /* iterations counted in the first phase so far */
    int phase;              /* PH_* */
    bool excursion;         /* an online ASP excursion runs (or is being drained to) */
    bool online_off;        /* budgeted: the budget is spent */
    bool time_up;           /* without a sample budget: the first phase's time is over */
    uint8_t *flagged;       /* (n, arena) stragglers of the current excursion */
    sim_time *window;       /* (2n, arena) recent own times */
    sim_time *sorted;       /* (2n, arena) scratch */
    size_t nwin, win_at;
    int next_mode; /* the mode the pending resume sets */
    /* Accounting. */
    uint64_t samples[2];           /* [0] BSP, [1] ASP */
    uint64_t online_samples;       /* ASP samples of online excursions */
    sim_time mode_since;           /* when the current mode (or pause) began */
    sim_time time_ns[2];           /* time in BSP and in ASP (drains count to the mode drained) */
    sim_time pause_ns;             /* time in switch pauses */
    sim_time switch_ns, resume_ns; /* the planned switch: drained, resumed (-1: none) */
    uint64_t excursions;
    double lr_bsp, lr_asp, m_asp; /* rates of the last update in each mode */
    uint64_t fnv_model, fnv_v_before, fnv_v_after;
    double v_norm_before, v_norm_after;
    ps_server_stats at_switch;
} syncswitch;

/* ---- syncswitch_online.c ---- */

/* Iterations (of b samples) the online excursions may still use (UINT64_MAX: no budget). */
uint64_t ss_online_left(const syncswitch *st, uint64_t b);

/* The engine's arrival hook (ps_server_hooks.arrived): worker w's gradient reached every shard,
 * `own_ns` after its iteration began; starts or ends an online excursion. */
int ss_arrived(void *ud, sim_ctx *ctx, uint32_t w, sim_time own_ns, sim_err *err);

#endif
