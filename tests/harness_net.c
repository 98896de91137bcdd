/* Shared helpers of the net suites (tests/harness_net.h). */
#include "harness_net.h"

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

int nett_dispatch(void *ud, sim_engine *eng, const sim_event *ev, sim_err *err)
{
    harness *h = ud;
    if (ev->time != sim_engine_now(eng))
        ck_abort_msg("event at %lld, clock at %lld", (long long)ev->time,
                     (long long)sim_engine_now(eng));
    if (ev->kind == SIM_EV_NET_START || ev->kind == SIM_EV_NET_DONE) {
        sim_net_msg msg;
        int rc = sim_net_handle(h->net, ev, &msg, err);
        if (rc < 0)
            return rc;
        if (rc == 1) {
            if (h->n == h->cap) {
                h->cap = h->cap > 0 ? 2 * h->cap : 64;
                h->log = realloc(h->log, h->cap * sizeof(*h->log));
                ck_assert_ptr_nonnull(h->log);
            }
            h->log[h->n++] = (delivery){ msg, sim_engine_now(eng) };
        }
    } else {
        ck_assert(h->on_user != NULL);
        h->on_user(h, ev);
    }
    if (h->after != NULL)
        h->after(h);
    return 0;
}

void nett_harness_init(harness *h, const sim_net_config *cfg)
{
    memset(h, 0, sizeof(*h));
    sim_err err;
    h->eng = sim_engine_create(64, &err);
    ck_assert_ptr_nonnull(h->eng);
    h->net = sim_net_create(cfg, h->eng, &err);
    ck_assert_msg(h->net != NULL, "%s", err.msg);
}

void nett_harness_run(harness *h)
{
    sim_err err;
    int rc = sim_engine_run(h->eng, SIM_TIME_NEVER, nett_dispatch, h, &err);
    ck_assert_msg(rc == 0, "run failed: %s", err.msg);
}

void nett_harness_fini(harness *h)
{
    sim_net_destroy(h->net);
    sim_engine_destroy(h->eng);
    free(h->log);
}

void nett_send(harness *h, uint32_t src, uint32_t dst, uint64_t bytes, uint64_t tag)
{
    sim_net_msg m = { .src = src,
                      .dst = dst,
                      .bytes = bytes,
                      .tag = tag,
                      .arg = tag * 31 + 7,
                      .payload = (uint32_t)tag + 1000 };
    sim_err err;
    int rc = sim_net_send(h->net, &m, &err);
    ck_assert_msg(rc == 0, "send %u -> %u: %s", src, dst, err.msg);
}

const delivery *nett_delivered(const harness *h, uint64_t tag)
{
    const delivery *d = NULL;
    for (size_t i = 0; i < h->n; i++) {
        if (h->log[i].msg.tag == tag) {
            ck_assert_msg(d == NULL, "tag %llu delivered twice", (unsigned long long)tag);
            d = &h->log[i];
        }
    }
    ck_assert_msg(d != NULL, "tag %llu not delivered", (unsigned long long)tag);
    return d;
}

sim_time nett_xfer_ns(double bytes, double rate_bps)
{
    return llround(bytes * 8e9 / rate_bps);
}

void nett_at_time(harness *h, sim_time at, uint64_t what, uint64_t a, uint64_t b)
{
    sim_event ev = { .kind = SIM_EV_USER, .src = SIM_NOBODY, .dst = SIM_NOBODY };
    ev.arg[0] = what;
    ev.arg[1] = a;
    ev.arg[2] = b;
    ck_assert_int_eq(sim_engine_schedule_at(h->eng, at, &ev, NULL), 0);
}

sim_net_stats nett_stats_of(const harness *h)
{
    sim_net_stats st;
    sim_net_stats_get(h->net, &st);
    return st;
}

double nett_rate_of(const harness *h, uint32_t src, uint32_t dst)
{
    uint32_t s, d;
    double r;
    for (size_t i = 0; sim_net_flow_at(h->net, i, &s, &d, &r); i++)
        if (s == src && d == dst)
            return r;
    ck_abort_msg("no flow %u -> %u", src, dst);
    return 0.0;
}

void nett_expect_rejected(const sim_net_config *cfg, const char *needle)
{
    sim_engine *eng = sim_engine_create(16, NULL);
    sim_err err;
    sim_err_clear(&err);
    ck_assert_ptr_null(sim_net_create(cfg, eng, &err));
    ck_assert_int_eq(err.code, SIM_EINVAL);
    ck_assert_msg(strstr(err.msg, needle) != NULL, "'%s' lacks '%s'", err.msg, needle);
    sim_engine_destroy(eng);
}

size_t nett_count_flows(const harness *h)
{
    size_t n = 0;
    while (sim_net_flow_at(h->net, n, NULL, NULL, NULL))
        n++;
    return n;
}
