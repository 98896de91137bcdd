/* The runtime's event kinds: the runner's own (computations, cluster changes, evaluation,
 * the stop) and those it hands to a protocol's on_event (runtime/ctx.h). The engine
 * (sim/engine.h) orders events without reading their kinds; the network's two
 * (SIM_EV_NET_START, SIM_EV_NET_DONE) are declared in net/net.h, below all of these. */
#ifndef RUNTIME_EVENTS_H
#define RUNTIME_EVENTS_H

enum sim_event_kind {
    SIM_EV_NONE = 0,
    SIM_EV_COMPUTE = 16,     /* runner: a worker's iteration finished computing */
    SIM_EV_CHANGE = 17,      /* runner: a cluster timeline change (failure, link window) */
    SIM_EV_EVAL = 18,        /* runner: periodic evaluation */
    SIM_EV_STOP = 19,        /* runner: the stop time */
    SIM_EV_MSG = 32,         /* protocol: a message was delivered (see runtime/ctx.h) */
    SIM_EV_COMPUTED = 33,    /* protocol: a worker finished an iteration's computation */
    SIM_EV_WORKER_DOWN = 34, /* protocol: a worker failed */
    SIM_EV_WORKER_UP = 35,   /* protocol: a worker recovered */
    SIM_EV_USER = 256        /* first protocol-defined kind (timers) */
};

#endif
