/* Helpers shared by the network suites (tests/test_net.c, test_net_changes.c, test_net_topo.c,
 * test_net_hosts.c): their scenarios, runs and checks. */
#ifndef HETSIM_TESTS_HARNESS_NET_H
#define HETSIM_TESTS_HARNESS_NET_H

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_rng.h>

#include "net/net.h"
#include "runtime/events.h"
#include "sim/engine.h"
#include "suite.h"

/* ---- harness: drives the engine and records deliveries -------------------------------- */

typedef struct delivery {
    sim_net_msg msg;
    sim_time at_ns;
} delivery;

typedef struct harness harness;

struct harness {
    sim_engine *eng;
    sim_net *net;
    delivery *log; /* (cap) deliveries in order */
    size_t n, cap;
    void (*on_user)(harness *h, const sim_event *ev); /* SIM_EV_USER events, or NULL */
    void (*after)(harness *h);                        /* after every event, or NULL */
    void *ud;
};

int nett_dispatch(void *ud, sim_engine *eng, const sim_event *ev, sim_err *err);

void nett_harness_init(harness *h, const sim_net_config *cfg);

void nett_harness_run(harness *h);

void nett_harness_fini(harness *h);

void nett_send(harness *h, uint32_t src, uint32_t dst, uint64_t bytes, uint64_t tag);

/* The delivery of the message tagged `tag`, which must have been delivered once. */
const delivery *nett_delivered(const harness *h, uint64_t tag);

sim_time nett_xfer_ns(double bytes, double rate_bps);

/* Schedules a SIM_EV_USER event at absolute time `at` carrying `what` and two arguments. */
void nett_at_time(harness *h, sim_time at, uint64_t what, uint64_t a, uint64_t b);

sim_net_stats nett_stats_of(const harness *h);

double nett_rate_of(const harness *h, uint32_t src, uint32_t dst);

size_t nett_count_flows(const harness *h);

/* Fails the test unless sim_net_create refuses cfg with SIM_EINVAL and a message holding
 * `needle`. */
void nett_expect_rejected(const sim_net_config *cfg, const char *needle);

#endif
