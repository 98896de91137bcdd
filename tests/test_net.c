/* Network: exact alpha-beta timing, max-min sharing, re-rating, failures, invariants.
 *
 * Expected times are worked out in each test with the same double expressions the model
 * uses (bytes * 8e9 / rate, rounded once per rate change), so they must match to the ns. */
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

static int dispatch(void *ud, sim_engine *eng, const sim_event *ev, sim_err *err)
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

static void harness_init(harness *h, const sim_net_config *cfg)
{
    memset(h, 0, sizeof(*h));
    sim_err err;
    h->eng = sim_engine_create(64, &err);
    ck_assert_ptr_nonnull(h->eng);
    h->net = sim_net_create(cfg, h->eng, &err);
    ck_assert_msg(h->net != NULL, "%s", err.msg);
}

static void harness_run(harness *h)
{
    sim_err err;
    int rc = sim_engine_run(h->eng, SIM_TIME_NEVER, dispatch, h, &err);
    ck_assert_msg(rc == 0, "run failed: %s", err.msg);
}

static void harness_fini(harness *h)
{
    sim_net_destroy(h->net);
    sim_engine_destroy(h->eng);
    free(h->log);
}

static void send(harness *h, uint32_t src, uint32_t dst, uint64_t bytes, uint64_t tag)
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

/* The delivery of the message tagged `tag`, which must have been delivered once. */
static const delivery *delivered(const harness *h, uint64_t tag)
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

static sim_time xfer_ns(double bytes, double rate_bps)
{
    return llround(bytes * 8e9 / rate_bps);
}

/* Schedules a SIM_EV_USER event at absolute time `at` carrying `what` and two arguments. */
static void at_time(harness *h, sim_time at, uint64_t what, uint64_t a, uint64_t b)
{
    sim_event ev = { .kind = SIM_EV_USER, .src = SIM_NOBODY, .dst = SIM_NOBODY };
    ev.arg[0] = what;
    ev.arg[1] = a;
    ev.arg[2] = b;
    ck_assert_int_eq(sim_engine_schedule_at(h->eng, at, &ev, NULL), 0);
}

static sim_net_stats stats_of(const harness *h)
{
    sim_net_stats st;
    sim_net_stats_get(h->net, &st);
    return st;
}

/* ---- timing --------------------------------------------------------------------------- */

START_TEST(net_one_flow_takes_latency_plus_size_over_bandwidth)
{
    const double bw[] = { 9.73e9, 24.1e9, 3.917e9, 12.5e9, 7.77e9, 40.3e9 };
    const sim_time lat[] = { 2385, 17, 41093, 999, 6021, 250 };
    sim_net_config cfg = { .topology = SIM_TOPO_RACKS,
                           .nhosts = 6,
                           .bandwidth_bps = bw,
                           .latency_ns = lat,
                           .rack_size = 3,
                           .uplink_bandwidth_bps = 5.113e9,
                           .uplink_latency_ns = 3517 };
    harness h;
    harness_init(&h, &cfg);
    send(&h, 0, 2, 1234567, 1); /* same rack: up(0), down(2); bottleneck 3.917e9 */
    harness_run(&h);
    ck_assert_int_eq(delivered(&h, 1)->at_ns, 2385 + 41093 + xfer_ns(1234567, 3.917e9));
    ck_assert_int_eq(sim_net_path_latency(h.net, 0, 2), 2385 + 41093);
    ck_assert_double_eq(sim_net_path_bandwidth_bps(h.net, 0, 2), 3.917e9);

    /* Another rack: up(1), rack 0 uplink, rack 1 downlink, down(5); bottleneck 5.113e9. */
    sim_time t0 = sim_engine_now(h.eng);
    send(&h, 1, 5, 8765431, 2);
    harness_run(&h);
    sim_time want = t0 + 17 + 3517 + 3517 + 250 + xfer_ns(8765431, 5.113e9);
    ck_assert_int_eq(delivered(&h, 2)->at_ns, want);
    ck_assert_int_eq(sim_net_path_latency(h.net, 1, 5), 17 + 2 * 3517 + 250);
    ck_assert_double_eq(sim_net_path_bandwidth_bps(h.net, 1, 5), 5.113e9);

    /* Everything is carried through untouched. */
    const sim_net_msg *m = &delivered(&h, 2)->msg;
    ck_assert_uint_eq(m->src, 1);
    ck_assert_uint_eq(m->dst, 5);
    ck_assert_uint_eq(m->bytes, 8765431);
    ck_assert_uint_eq(m->arg, 2 * 31 + 7);
    ck_assert_uint_eq(m->payload, 1002);
    ck_assert_int_eq(m->sent_ns, t0);
    sim_net_stats st = stats_of(&h);
    ck_assert_uint_eq(st.sent, 2);
    ck_assert_uint_eq(st.delivered, 2);
    ck_assert_uint_eq(st.in_flight, 0);
    harness_fini(&h);
}
END_TEST

START_TEST(net_zero_byte_message_takes_the_latency_only)
{
    const double bw[] = { 1.5e9, 2.5e9, 3.5e9 };
    const sim_time lat[] = { 4271, 113, 80021 };
    sim_net_config cfg = { .nhosts = 3, .bandwidth_bps = bw, .latency_ns = lat };
    harness h;
    harness_init(&h, &cfg);
    send(&h, 2, 0, 0, 5);
    harness_run(&h);
    ck_assert_int_eq(delivered(&h, 5)->at_ns, 80021 + 4271);
    ck_assert_uint_eq(stats_of(&h).peak_flows, 0);
    harness_fini(&h);
}
END_TEST

static void send_to_self(harness *h, const sim_event *ev)
{
    (void)ev;
    send(h, 1, 1, 987654, 9);
}

START_TEST(net_delivers_a_message_to_its_sender_at_the_current_time)
{
    const double bw[] = { 1.25e9, 2.75e9 };
    const sim_time lat[] = { 3001, 5003 };
    sim_net_config cfg = { .nhosts = 2, .bandwidth_bps = bw, .latency_ns = lat };
    harness h;
    harness_init(&h, &cfg);
    sim_net_set_extra_latency(h.net, 1, 77777); /* a local delivery crosses no link */
    h.on_user = send_to_self;
    at_time(&h, 123457, 0, 0, 0);
    harness_run(&h);
    ck_assert_int_eq(delivered(&h, 9)->at_ns, 123457);
    ck_assert_int_eq(sim_net_path_latency(h.net, 1, 1), 0);
    ck_assert(isinf(sim_net_path_bandwidth_bps(h.net, 1, 1)));
    ck_assert_uint_eq(stats_of(&h).peak_flows, 0);
    harness_fini(&h);
}
END_TEST

START_TEST(net_applies_extra_latency_only_to_messages_sent_while_set)
{
    const double bw[] = { 8.2e9, 8.3e9, 8.4e9 };
    const sim_time lat[] = { 1409, 2711, 613 };
    sim_net_config cfg = { .nhosts = 3, .bandwidth_bps = bw, .latency_ns = lat };
    harness h;
    harness_init(&h, &cfg);
    sim_net_set_extra_latency(h.net, 0, 55501);
    send(&h, 0, 1, 0, 1); /* extra on the source */
    sim_net_set_extra_latency(h.net, 0, 0);
    send(&h, 0, 1, 0, 2); /* restored */
    sim_net_set_extra_latency(h.net, 1, 31337);
    send(&h, 2, 1, 0, 3); /* extra on the destination */
    sim_net_set_extra_latency(h.net, 2, 1001);
    send(&h, 2, 1, 0, 4); /* both */
    sim_net_set_extra_latency(h.net, 1, 0);
    sim_net_set_extra_latency(h.net, 2, 0);
    harness_run(&h);
    ck_assert_int_eq(delivered(&h, 1)->at_ns, 1409 + 2711 + 55501);
    ck_assert_int_eq(delivered(&h, 2)->at_ns, 1409 + 2711);
    ck_assert_int_eq(delivered(&h, 3)->at_ns, 613 + 2711 + 31337);
    ck_assert_int_eq(delivered(&h, 4)->at_ns, 613 + 2711 + 31337 + 1001);
    ck_assert_int_eq(sim_net_path_latency(h.net, 2, 1), 613 + 2711); /* without extra */
    harness_fini(&h);
}
END_TEST

/* ---- sharing -------------------------------------------------------------------------- */

/* Relative tolerance for rates: a fair share is a few subtractions and one division of
 * capacities near 1e10, each exact to about 1e-16 relative. */
static const double RATE_TOL = 1e-12;

static double rate_of(const harness *h, uint32_t src, uint32_t dst)
{
    uint32_t s, d;
    double r;
    for (size_t i = 0; sim_net_flow_at(h->net, i, &s, &d, &r); i++)
        if (s == src && d == dst)
            return r;
    ck_abort_msg("no flow %u -> %u", src, dst);
    return 0.0;
}

static size_t count_flows(const harness *h)
{
    size_t n = 0;
    while (sim_net_flow_at(h->net, n, NULL, NULL, NULL))
        n++;
    return n;
}

START_TEST(net_shares_a_down_link_equally_among_n_flows)
{
    const double down = 9.37e9;
    const double bw[] = { 25e9, 31e9, 27.5e9, 40e9, down };
    const sim_time lat[] = { 1777, 1777, 1777, 1777, 2903 };
    sim_net_config cfg = { .nhosts = 5, .bandwidth_bps = bw, .latency_ns = lat };
    harness h;
    harness_init(&h, &cfg);
    for (uint32_t w = 0; w < 4; w++)
        send(&h, w, 4, 3141593, w);
    sim_time start = 1777 + 2903;
    sim_err err;
    ck_assert_int_eq(sim_engine_run(h.eng, start, dispatch, &h, &err), 0);
    ck_assert_uint_eq(count_flows(&h), 4);
    for (uint32_t w = 0; w < 4; w++)
        ck_assert_double_eq_tol(rate_of(&h, w, 4), down / 4, down * RATE_TOL);
    harness_run(&h);
    for (uint32_t w = 0; w < 4; w++)
        ck_assert_int_eq(delivered(&h, w)->at_ns, start + xfer_ns(3141593, down / 4));
    sim_net_stats st = stats_of(&h);
    ck_assert_uint_eq(st.peak_flows, 4);
    ck_assert_uint_eq(st.active_flows, 0);
    harness_fini(&h);
}
END_TEST

static void expect_alone(harness *h, const sim_event *ev)
{
    /* Just after the first flow ended, the second runs alone at the full 6.1e9. */
    (void)ev;
    ck_assert_uint_eq(count_flows(h), 1);
    ck_assert_double_eq(rate_of(h, 1, 2), 6.1e9);
}

START_TEST(net_speeds_up_the_other_flow_when_one_of_two_finishes)
{
    const double b = 6.1e9;
    const double bw[] = { 11e9, 12e9, b };
    const sim_time lat[] = { 503, 503, 1201 };
    sim_net_config cfg = { .nhosts = 3, .bandwidth_bps = bw, .latency_ns = lat };
    harness h;
    harness_init(&h, &cfg);
    const uint64_t s1 = 1048583, s2 = 2718281;
    send(&h, 0, 2, s1, 1);
    send(&h, 1, 2, s2, 2);
    sim_time t0 = 503 + 1201;
    /* Both at b/2 until the first ends at t1; the second then has the link to itself. */
    sim_time t1 = t0 + xfer_ns((double)s1, b / 2);
    double rem = (double)s2 - b / 2 * (double)(t1 - t0) / 8e9;
    sim_time t2 = t1 + xfer_ns(rem, b);
    h.on_user = expect_alone;
    at_time(&h, t1 + 1, 0, 0, 0);
    harness_run(&h);
    ck_assert_int_eq(delivered(&h, 1)->at_ns, t1);
    ck_assert_int_eq(delivered(&h, 2)->at_ns, t2);
    ck_assert_int_gt(t2 - t1, 1000); /* the second really was still running */
    harness_fini(&h);
}
END_TEST

START_TEST(net_oversubscribed_rack_uplink_is_the_bottleneck)
{
    /* Rack 0 = hosts 0..3 each send to a distinct host of rack 1 = hosts 4..7: four flows
     * through one uplink of twice a NIC, so each gets uplink / 4 = NIC / 2. */
    const double nic = 7.3e9, uplink = 2 * nic;
    double bw[8];
    sim_time lat[8];
    for (size_t i = 0; i < 8; i++) {
        bw[i] = nic;
        lat[i] = 700 + 111 * (sim_time)i;
    }
    sim_net_config cfg = { .topology = SIM_TOPO_RACKS,
                           .nhosts = 8,
                           .bandwidth_bps = bw,
                           .latency_ns = lat,
                           .rack_size = 4,
                           .uplink_bandwidth_bps = uplink,
                           .uplink_latency_ns = 4099 };
    harness h;
    harness_init(&h, &cfg);
    const uint64_t bytes = 999331;
    for (uint32_t w = 0; w < 4; w++)
        send(&h, w, 7 - w, bytes, w);
    /* Latencies are 700 + 111 * (w + 7 - w) + 2 * 4099, the same for all four. */
    sim_time start = 700 + 700 + 111 * 7 + 2 * 4099;
    sim_err err;
    ck_assert_int_eq(sim_engine_run(h.eng, start, dispatch, &h, &err), 0);
    ck_assert_uint_eq(count_flows(&h), 4);
    for (uint32_t w = 0; w < 4; w++)
        ck_assert_double_eq_tol(rate_of(&h, w, 7 - w), uplink / 4, uplink * RATE_TOL);
    harness_run(&h);
    for (uint32_t w = 0; w < 4; w++)
        ck_assert_int_eq(delivered(&h, w)->at_ns, start + xfer_ns((double)bytes, uplink / 4));
    harness_fini(&h);
}
END_TEST

START_TEST(net_max_min_gives_the_leftover_to_flows_bottlenecked_elsewhere)
{
    /* f1: 0->3 is held to 1.2e9 by up(0). down(3) (9.6e9) carries f1, f2: 1->3 and f3: 2->3;
     * up(2) (7.0e9) carries f3 and f4: 2->4. Filling: up(0) freezes f1 at 1.2; then down(3)
     * offers (9.6 - 1.2) / 2 = 4.2 but up(2) offers 7.0 / 2 = 3.5, so f3 = f4 = 3.5; last,
     * f2 takes what down(3) has left: 9.6 - 1.2 - 3.5 = 4.9 (all in 1e9 bits/s). */
    const double bw[] = { 1.2e9, 40e9, 7.0e9, 9.6e9, 40e9 };
    const sim_time lat[] = { 100, 100, 100, 100, 100 };
    sim_net_config cfg = { .nhosts = 5, .bandwidth_bps = bw, .latency_ns = lat };
    harness h;
    harness_init(&h, &cfg);
    send(&h, 0, 3, 50000000, 1);
    send(&h, 1, 3, 50000000, 2);
    send(&h, 2, 3, 50000000, 3);
    send(&h, 2, 4, 50000000, 4);
    sim_err err;
    ck_assert_int_eq(sim_engine_run(h.eng, 200, dispatch, &h, &err), 0);
    ck_assert_uint_eq(count_flows(&h), 4);
    ck_assert_double_eq_tol(rate_of(&h, 0, 3), 1.2e9, 40e9 * RATE_TOL);
    ck_assert_double_eq_tol(rate_of(&h, 1, 3), 4.9e9, 40e9 * RATE_TOL);
    ck_assert_double_eq_tol(rate_of(&h, 2, 3), 3.5e9, 40e9 * RATE_TOL);
    ck_assert_double_eq_tol(rate_of(&h, 2, 4), 3.5e9, 40e9 * RATE_TOL);
    harness_run(&h);
    ck_assert_uint_eq(h.n, 4);
    harness_fini(&h);
}
END_TEST

START_TEST(net_ring_costs_one_rerate_per_flow)
{
    /* w -> w+1 mod N: no two flows share a link, so each start rates only its own flow and
     * each end re-rates nothing. */
    enum {
        N = 64
    };
    double bw[N];
    sim_time lat[N];
    for (size_t w = 0; w < N; w++) {
        bw[w] = 5e9 + 1.37e8 * (double)((w * 29) % N);
        lat[w] = 1000 + (sim_time)((w * 41) % 97);
    }
    sim_net_config cfg = { .nhosts = N, .bandwidth_bps = bw, .latency_ns = lat };
    harness h;
    harness_init(&h, &cfg);
    const uint64_t bytes = 4194319;
    for (uint32_t w = 0; w < N; w++)
        send(&h, w, (w + 1) % N, bytes, w);
    harness_run(&h);
    for (uint32_t w = 0; w < N; w++) {
        uint32_t v = (w + 1) % N;
        sim_time want = lat[w] + lat[v] + xfer_ns((double)bytes, fmin(bw[w], bw[v]));
        ck_assert_int_eq(delivered(&h, w)->at_ns, want);
    }
    sim_net_stats st = stats_of(&h);
    ck_assert_uint_eq(st.rerates, N);
    ck_assert_uint_eq(st.recomputes, 2 * N);
    ck_assert_uint_eq(st.delivered, N);
    ck_assert_uint_eq(st.peak_flows, N);
    harness_fini(&h);
}
END_TEST

/* ---- changes -------------------------------------------------------------------------- */

static void apply_factor(harness *h, const sim_event *ev)
{
    double factor;
    memcpy(&factor, &ev->arg[2], sizeof(factor));
    sim_err err;
    ck_assert_int_eq(sim_net_set_bandwidth_factor(h->net, (uint32_t)ev->arg[1], factor, &err), 0);
}

static void factor_at(harness *h, sim_time at, uint32_t host, double factor)
{
    uint64_t bits;
    memcpy(&bits, &factor, sizeof(bits));
    at_time(h, at, 0, host, bits);
}

START_TEST(net_bandwidth_factor_rerates_flows_in_progress_at_that_instant)
{
    const double b0 = 6.4e9, b1 = 9.1e9;
    const double bw[] = { b0, b1 };
    const sim_time lat[] = { 2111, 3023 };
    sim_net_config cfg = { .nhosts = 2, .bandwidth_bps = bw, .latency_ns = lat };
    harness h;
    harness_init(&h, &cfg);
    h.on_user = apply_factor;
    const uint64_t bytes = 7340033;
    send(&h, 0, 1, bytes, 1);
    sim_time t0 = 2111 + 3023, ta = 400009, tb = 650021;
    factor_at(&h, ta, 1, 0.37); /* down(1) drops to 3.367e9, below up(0) */
    factor_at(&h, tb, 1, 1.0);  /* restored: back to 6.4e9 */
    double rem = (double)bytes - b0 * (double)(ta - t0) / 8e9;
    rem -= b1 * 0.37 * (double)(tb - ta) / 8e9;
    sim_time want = tb + xfer_ns(rem, b0);
    harness_run(&h);
    ck_assert_int_eq(delivered(&h, 1)->at_ns, want);
    ck_assert_uint_eq(stats_of(&h).rerates, 3);
    ck_assert_double_eq(sim_net_path_bandwidth_bps(h.net, 0, 1), b0);

    sim_err err;
    ck_assert_int_eq(sim_net_set_bandwidth_factor(h.net, 1, 0.0, &err), SIM_EINVAL);
    ck_assert_ptr_nonnull(strstr(err.msg, "(0, 1]"));
    ck_assert_int_eq(sim_net_set_bandwidth_factor(h.net, 1, 1.25, &err), SIM_EINVAL);
    ck_assert_int_eq(sim_net_set_bandwidth_factor(h.net, 1, NAN, &err), SIM_EINVAL);
    ck_assert_int_eq(sim_net_set_bandwidth_factor(h.net, 2, 0.5, &err), SIM_EINVAL);
    ck_assert_ptr_nonnull(strstr(err.msg, "host 2"));
    ck_assert_int_eq(sim_net_set_bandwidth_factor(h.net, 0, 0.25, &err), 0);
    ck_assert_double_eq(sim_net_path_bandwidth_bps(h.net, 0, 1), b0 * 0.25);
    harness_fini(&h);
}
END_TEST

static void take_host_down(harness *h, const sim_event *ev)
{
    (void)ev;
    sim_net_set_host_down(h->net, 2, true);
    ck_assert(sim_net_host_down(h->net, 2));
    ck_assert_uint_eq(count_flows(h), 1); /* only 0 -> 1 is left */
    ck_assert_double_eq(rate_of(h, 0, 1), 5.3e9);
    sim_net_msg m = { .src = 2, .dst = 0, .bytes = 10 };
    sim_err err;
    ck_assert_int_eq(sim_net_send(h->net, &m, &err), SIM_EINVAL);
    ck_assert_ptr_nonnull(strstr(err.msg, "down"));
    send(h, 0, 2, 4096, 7); /* accepted, dropped when it reaches host 2 */
}

typedef struct drops {
    size_t n;
    uint64_t tag_sum;
} drops;

static void count_drop(void *ud, const sim_net_msg *msg)
{
    drops *d = ud;
    d->n++;
    d->tag_sum += msg->tag;
}

START_TEST(net_host_down_aborts_its_flows_and_drops_its_messages)
{
    const double b = 5.3e9;
    const double bw[] = { b, b, b, b };
    const sim_time lat[] = { 1200, 3400, 2100, 800 };
    sim_net_config cfg = { .nhosts = 4, .bandwidth_bps = bw, .latency_ns = lat };
    harness h;
    harness_init(&h, &cfg);
    const uint64_t sa = 2000003, sc = 3100007;
    send(&h, 0, 2, sa, 1); /* A: a flow into host 2 when it fails */
    send(&h, 0, 1, sc, 2); /* C: shares up(0) with A, then runs alone */
    sim_net_set_extra_latency(h.net, 3, 10000000);
    send(&h, 2, 3, 5000, 3); /* D: from host 2, still in its latency phase */
    sim_net_set_extra_latency(h.net, 3, 0);
    const sim_time ta = 1200 + 2100, tc = 1200 + 3400, tdown = 1000003;
    h.on_user = take_host_down;
    at_time(&h, tdown, 0, 0, 0);
    drops d = { 0 };
    sim_net_set_drop_fn(h.net, count_drop, &d);
    double rem = (double)sc - b / 2 * (double)(tdown - tc) / 8e9;
    sim_time want = tdown + xfer_ns(rem, b);
    harness_run(&h);
    (void)ta;
    ck_assert_uint_eq(h.n, 1);
    ck_assert_int_eq(delivered(&h, 2)->at_ns, want);
    sim_net_stats st = stats_of(&h);
    ck_assert_uint_eq(st.sent, 4);
    ck_assert_uint_eq(st.dropped, 3);
    ck_assert_uint_eq(st.delivered, 1);
    ck_assert_uint_eq(st.in_flight, 0);
    ck_assert_uint_eq(d.n, st.dropped); /* the owner hears of every drop */
    for (uint32_t host = 0; host < 4; host++)
        ck_assert_uint_eq(sim_net_host_inflight(h.net, host), 0);
    ck_assert_uint_eq(sim_engine_next_time(h.eng), SIM_TIME_NEVER);

    /* Back up: messages to and from it flow again. */
    sim_net_set_host_down(h.net, 2, false);
    ck_assert(!sim_net_host_down(h.net, 2));
    sim_time t = sim_engine_now(h.eng);
    send(&h, 2, 3, 65537, 8);
    ck_assert_uint_eq(sim_net_host_inflight(h.net, 2), 1);
    ck_assert_uint_eq(sim_net_host_inflight(h.net, 3), 1);
    ck_assert_uint_eq(sim_net_host_inflight(h.net, 0), 0);
    harness_run(&h);
    ck_assert_uint_eq(sim_net_host_inflight(h.net, 3), 0);
    ck_assert_int_eq(delivered(&h, 8)->at_ns, t + 2100 + 800 + xfer_ns(65537, b));
    uint64_t sent, received;
    sim_net_host_bytes(h.net, 2, &sent, &received);
    ck_assert_uint_eq(sent, 5000 + 65537); /* D counted when sent, though dropped */
    ck_assert_uint_eq(received, 0);
    sim_net_host_bytes(h.net, 3, &sent, &received);
    ck_assert_uint_eq(received, 65537);
    harness_fini(&h);
}
END_TEST

START_TEST(net_counts_bytes_per_host)
{
    const double bw[] = { 3e9, 4e9, 5e9 };
    const sim_time lat[] = { 10, 20, 30 };
    sim_net_config cfg = { .nhosts = 3, .bandwidth_bps = bw, .latency_ns = lat };
    harness h;
    harness_init(&h, &cfg);
    send(&h, 0, 1, 1111, 1);
    send(&h, 0, 2, 22222, 2);
    send(&h, 2, 1, 333333, 3);
    send(&h, 1, 1, 44, 4);
    uint64_t sent, received;
    sim_net_host_bytes(h.net, 1, &sent, &received);
    ck_assert_uint_eq(sent, 44);
    ck_assert_uint_eq(received, 0); /* nothing delivered yet */
    harness_run(&h);
    const uint64_t want_sent[] = { 1111 + 22222, 44, 333333 };
    const uint64_t want_received[] = { 0, 1111 + 333333 + 44, 22222 };
    for (uint32_t i = 0; i < 3; i++) {
        sim_net_host_bytes(h.net, i, &sent, &received);
        ck_assert_uint_eq(sent, want_sent[i]);
        ck_assert_uint_eq(received, want_received[i]);
    }
    harness_fini(&h);
}
END_TEST

/* ---- errors --------------------------------------------------------------------------- */

static void expect_create_fails(const sim_net_config *cfg, const char *needle)
{
    sim_engine *eng = sim_engine_create(16, NULL);
    sim_err err;
    sim_err_clear(&err);
    ck_assert_ptr_null(sim_net_create(cfg, eng, &err));
    ck_assert_int_eq(err.code, SIM_EINVAL);
    ck_assert_msg(strstr(err.msg, needle) != NULL, "'%s' lacks '%s'", err.msg, needle);
    sim_engine_destroy(eng);
}

START_TEST(net_rejects_bad_configs_and_arguments)
{
    double bw[] = { 1e9, 2e9, 3e9 };
    sim_time lat[] = { 5, 6, 7 };
    sim_net_config cfg = { .topology = SIM_TOPO_RACKS,
                           .nhosts = 3,
                           .bandwidth_bps = bw,
                           .latency_ns = lat,
                           .rack_size = 2,
                           .uplink_bandwidth_bps = 4e9,
                           .uplink_latency_ns = 9 };
    sim_net_config bad = cfg;
    bad.nhosts = 0;
    expect_create_fails(&bad, "nhosts");
    bad = cfg;
    bad.topology = (sim_topology)7;
    expect_create_fails(&bad, "topology");
    bad = cfg;
    bad.latency_ns = NULL;
    expect_create_fails(&bad, "latency_ns");
    bw[1] = -2.5;
    expect_create_fails(&cfg, "bandwidth_bps[1]");
    bw[1] = INFINITY;
    expect_create_fails(&cfg, "bandwidth_bps[1]");
    bw[1] = 2e9;
    lat[2] = -1;
    expect_create_fails(&cfg, "latency_ns[2]");
    lat[2] = 7;
    bad = cfg;
    bad.rack_size = 0;
    expect_create_fails(&bad, "rack_size");
    bad = cfg;
    bad.uplink_bandwidth_bps = 0.0;
    expect_create_fails(&bad, "uplink_bandwidth_bps");
    bad = cfg;
    bad.uplink_latency_ns = -3;
    expect_create_fails(&bad, "uplink_latency_ns");

    harness h;
    harness_init(&h, &cfg);
    sim_err err;
    sim_net_msg m = { .src = 0, .dst = 3, .bytes = 1 };
    ck_assert_int_eq(sim_net_send(h.net, &m, &err), SIM_EINVAL);
    ck_assert_ptr_nonnull(strstr(err.msg, "host 3"));
    sim_event ev = { .kind = SIM_EV_COMPUTE };
    sim_net_msg out;
    ck_assert_int_eq(sim_net_handle(h.net, &ev, &out, &err), SIM_EINVAL);
    /* Stale or foreign network events are ignored. */
    ev.kind = SIM_EV_NET_DONE;
    ev.arg[0] = 1u << 30;
    ck_assert_int_eq(sim_net_handle(h.net, &ev, &out, &err), 0);
    ev.arg[0] = 0;
    ev.arg[1] = 12345;
    ck_assert_int_eq(sim_net_handle(h.net, &ev, &out, &err), 0);
    ck_assert_uint_eq(stats_of(&h).delivered, 0);
    harness_fini(&h);

    /* 2e9 bytes at 1 bit/s would end after the end of time. */
    const double slow[] = { 1.0, 1.0 };
    sim_net_config tiny = { .nhosts = 2, .bandwidth_bps = slow, .latency_ns = lat };
    harness_init(&h, &tiny);
    send(&h, 0, 1, 2000000000, 1);
    ck_assert_int_eq(sim_engine_run(h.eng, SIM_TIME_NEVER, dispatch, &h, &err), SIM_ENUMERIC);
    ck_assert_ptr_nonnull(strstr(err.msg, "end of time"));
    harness_fini(&h);
}
END_TEST

START_TEST(net_grows_its_pool_for_many_messages_in_flight)
{
    const double bw[] = { 2.2e9, 3.3e9 };
    const sim_time lat[] = { 50, 60 };
    sim_net_config cfg = { .nhosts = 2, .bandwidth_bps = bw, .latency_ns = lat };
    harness h;
    harness_init(&h, &cfg);
    for (uint64_t i = 0; i < 1500; i++)
        send(&h, (uint32_t)(i % 2), (uint32_t)(1 - i % 2), 1000 + i, i);
    ck_assert_uint_eq(stats_of(&h).in_flight, 1500);
    harness_run(&h);
    sim_net_stats st = stats_of(&h);
    ck_assert_uint_eq(st.delivered, 1500);
    ck_assert_uint_eq(st.peak_flows, 1500);
    harness_fini(&h);
}
END_TEST

/* ---- invariants under random traffic --------------------------------------------------- */

enum {
    ST_HOSTS = 12,
    ST_RACK = 4,
    ST_MSGS = 4000,
    ST_LINKS = 2 * ST_HOSTS + 2 * 3,
    ST_UPLINK_LAT = 7919
};

typedef struct stress {
    gsl_rng *r;
    double bw[ST_HOSTS], factor[ST_HOSTS], uplink;
    sim_time lat[ST_HOSTS], extra[ST_HOSTS];
    uint64_t downs[ST_HOSTS]; /* times each host went down */
    int ndown;                /* hosts now down */
    /* Per message, by tag. */
    size_t nmsg;
    sim_time sent_ns[ST_MSGS], earliest_ns[ST_MSGS];
    uint32_t src[ST_MSGS], dst[ST_MSGS];
    uint64_t downs_at_send[ST_MSGS][2];
    bool dst_down_at_send[ST_MSGS];
    uint64_t sent_bytes[ST_HOSTS];
    size_t ticks;
} stress;

/* The test's own numbering of links, mirroring the model: up 2h, down 2h + 1, then the
 * racks' uplink-up and uplink-down. */
static int stress_path(uint32_t src, uint32_t dst, int out[4])
{
    if (src == dst)
        return 0;
    out[0] = 2 * (int)src;
    if (src / ST_RACK == dst / ST_RACK) {
        out[1] = 2 * (int)dst + 1;
        return 2;
    }
    out[1] = 2 * ST_HOSTS + 2 * (int)(src / ST_RACK);
    out[2] = 2 * ST_HOSTS + 2 * (int)(dst / ST_RACK) + 1;
    out[3] = 2 * (int)dst + 1;
    return 4;
}

static double stress_cap(const stress *s, int link)
{
    if (link >= 2 * ST_HOSTS)
        return s->uplink;
    return s->bw[link / 2] * s->factor[link / 2];
}

/* Rates must fit every link and be max-min fair: each flow crosses a saturated link on which
 * no flow is faster (the bottleneck characterization of max-min fairness). Tolerance 1e-9
 * relative: rates and sums come from at most a few hundred additions and subtractions of
 * doubles near 1e10 (about 1e-16 relative each), while a real unfairness is far larger.
 * This runs after every event, so it calls Check only on failure: each passing ck_assert
 * costs Check a write to its parent process. */
static void stress_check(harness *h)
{
    const stress *s = h->ud;
    double sum[ST_LINKS] = { 0 }, top[ST_LINKS] = { 0 };
    uint32_t src, dst;
    double rate;
    for (size_t i = 0; sim_net_flow_at(h->net, i, &src, &dst, &rate); i++) {
        int links[4];
        int n = stress_path(src, dst, links);
        if (!(rate > 0.0) || n == 0)
            ck_abort_msg("flow %u -> %u has rate %g", src, dst, rate);
        for (int k = 0; k < n; k++) {
            sum[links[k]] += rate;
            top[links[k]] = fmax(top[links[k]], rate);
        }
    }
    for (int l = 0; l < ST_LINKS; l++)
        if (!(sum[l] <= stress_cap(s, l) * (1 + 1e-9)))
            ck_abort_msg("link %d carries %g over its %g", l, sum[l], stress_cap(s, l));
    for (size_t i = 0; sim_net_flow_at(h->net, i, &src, &dst, &rate); i++) {
        int links[4];
        int n = stress_path(src, dst, links);
        bool bottleneck = false;
        for (int k = 0; k < n; k++) {
            double cap = stress_cap(s, links[k]);
            if (sum[links[k]] >= cap * (1 - 1e-9) && rate >= top[links[k]] * (1 - 1e-9))
                bottleneck = true;
        }
        if (!bottleneck)
            ck_abort_msg("flow %u -> %u at %g has no bottleneck", src, dst, rate);
    }
}

static void stress_send(harness *h, stress *s)
{
    uint32_t src = (uint32_t)gsl_rng_uniform_int(s->r, ST_HOSTS);
    uint32_t dst = (uint32_t)gsl_rng_uniform_int(s->r, ST_HOSTS);
    uint64_t bytes = gsl_rng_uniform(s->r) < 0.1 ? 0 : gsl_rng_uniform_int(s->r, 3000000);
    sim_net_msg m = { .src = src, .dst = dst, .bytes = bytes, .tag = s->nmsg };
    sim_err err;
    int rc = sim_net_send(h->net, &m, &err);
    if (sim_net_host_down(h->net, src)) {
        ck_assert_int_eq(rc, SIM_EINVAL);
        return;
    }
    ck_assert_int_eq(rc, 0);
    size_t i = s->nmsg++;
    sim_time now = sim_engine_now(h->eng);
    s->sent_ns[i] = now;
    s->src[i] = src;
    s->dst[i] = dst;
    s->sent_bytes[src] += bytes;
    s->downs_at_send[i][0] = s->downs[src];
    s->downs_at_send[i][1] = s->downs[dst];
    s->dst_down_at_send[i] = sim_net_host_down(h->net, dst);
    /* Lower bound: latency plus the bytes at the bottleneck's configured bandwidth. */
    int links[4];
    int n = stress_path(src, dst, links);
    double bmin = INFINITY;
    for (int k = 0; k < n; k++)
        bmin = fmin(bmin, links[k] >= 2 * ST_HOSTS ? s->uplink : s->bw[links[k] / 2]);
    s->earliest_ns[i] = now;
    if (n > 0) {
        sim_time lat = s->lat[src] + s->lat[dst] + (n == 4 ? 2 * ST_UPLINK_LAT : 0);
        s->earliest_ns[i] += lat + s->extra[src] + s->extra[dst];
        s->earliest_ns[i] += (sim_time)floor((double)bytes * 8e9 / bmin);
    }
}

/* Schedules the next tick a random gap from now, until the budget of ticks is spent. */
static void stress_next(harness *h, stress *s)
{
    if (++s->ticks < 6000) {
        sim_time gap = (sim_time)gsl_rng_uniform_int(s->r, 300000);
        at_time(h, sim_engine_now(h->eng) + gap, 0, 0, 0);
    }
}

static void stress_tick(harness *h, const sim_event *ev)
{
    (void)ev;
    stress *s = h->ud;
    double u = gsl_rng_uniform(s->r);
    uint32_t host = (uint32_t)gsl_rng_uniform_int(s->r, ST_HOSTS);
    if (u < 0.8) {
        if (s->nmsg < ST_MSGS)
            stress_send(h, s);
    } else if (u < 0.86) {
        /* At most three hosts down at once, so that most sends are accepted. */
        bool down = !sim_net_host_down(h->net, host);
        if (!down || s->ndown < 3) {
            s->ndown += down ? 1 : -1;
            s->downs[host] += down;
            sim_net_set_host_down(h->net, host, down);
        }
    } else if (u < 0.94) {
        s->factor[host] = 0.05 + 0.95 * gsl_rng_uniform_pos(s->r);
        sim_err err;
        ck_assert_int_eq(sim_net_set_bandwidth_factor(h->net, host, s->factor[host], &err), 0);
    } else {
        s->extra[host] =
            gsl_rng_uniform(s->r) < 0.5 ? 0 : (sim_time)gsl_rng_uniform_int(s->r, 90000);
        sim_net_set_extra_latency(h->net, host, s->extra[host]);
    }
    stress_next(h, s);
}

START_TEST(net_keeps_its_invariants_under_random_traffic)
{
    stress *s = calloc(1, sizeof(*s));
    ck_assert_ptr_nonnull(s);
    s->r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(s->r, 20240611);
    for (size_t i = 0; i < ST_HOSTS; i++) {
        s->bw[i] = 1e9 + 24e9 * gsl_rng_uniform(s->r);
        s->lat[i] = (sim_time)gsl_rng_uniform_int(s->r, 20000);
        s->factor[i] = 1.0;
    }
    s->uplink = 18.3e9;
    sim_net_config cfg = { .topology = SIM_TOPO_RACKS,
                           .nhosts = ST_HOSTS,
                           .bandwidth_bps = s->bw,
                           .latency_ns = s->lat,
                           .rack_size = ST_RACK,
                           .uplink_bandwidth_bps = s->uplink,
                           .uplink_latency_ns = ST_UPLINK_LAT };
    harness h;
    harness_init(&h, &cfg);
    h.ud = s;
    h.on_user = stress_tick;
    h.after = stress_check;
    at_time(&h, 0, 0, 0, 0);
    harness_run(&h);

    sim_net_stats st = stats_of(&h);
    ck_assert_uint_gt(s->nmsg, 3000);
    ck_assert_uint_eq(st.sent, s->nmsg);
    ck_assert_uint_eq(st.delivered + st.dropped, st.sent);
    ck_assert_uint_gt(st.dropped, 0);
    ck_assert_uint_gt(st.peak_flows, 5);
    ck_assert_uint_eq(st.in_flight, 0);
    ck_assert_uint_eq(st.active_flows, 0);
    ck_assert_int_eq(sim_engine_next_time(h.eng), SIM_TIME_NEVER);
    ck_assert_uint_eq(h.n, st.delivered);

    uint64_t received[ST_HOSTS] = { 0 };
    bool *got = calloc(ST_MSGS, sizeof(*got));
    ck_assert_ptr_nonnull(got);
    for (size_t i = 0; i < h.n; i++) {
        const delivery *d = &h.log[i];
        size_t tag = (size_t)d->msg.tag;
        ck_assert_uint_lt(tag, s->nmsg);
        ck_assert(!got[tag]);
        got[tag] = true;
        ck_assert_int_eq(d->msg.sent_ns, s->sent_ns[tag]);
        /* Each completion is rounded to the nearest ns once per rate change, and later
         * changes restart from the true elapsed time, so it can be early by 1 ns at most. */
        ck_assert_int_ge(d->at_ns, s->earliest_ns[tag] - 1);
        received[d->msg.dst] += d->msg.bytes;
    }
    /* A message is lost only if an endpoint failed while it was in flight, or its
     * destination was down when it was sent. */
    for (size_t i = 0; i < s->nmsg; i++) {
        if (got[i])
            continue;
        bool excuse = s->dst_down_at_send[i] || s->downs[s->src[i]] != s->downs_at_send[i][0] ||
                      s->downs[s->dst[i]] != s->downs_at_send[i][1];
        ck_assert_msg(excuse, "message %zu was dropped with both endpoints up", i);
    }
    for (uint32_t i = 0; i < ST_HOSTS; i++) {
        uint64_t sent, recv;
        sim_net_host_bytes(h.net, i, &sent, &recv);
        ck_assert_uint_eq(sent, s->sent_bytes[i]);
        ck_assert_uint_eq(recv, received[i]);
        ck_assert_uint_eq(sim_net_host_inflight(h.net, (uint32_t)i), 0);
    }
    free(got);
    harness_fini(&h);
    gsl_rng_free(s->r);
    free(s);
}
END_TEST

Suite *test_suite(void)
{
    Suite *s = suite_create("net");
    TCase *timing = tcase_create("timing");
    tcase_add_test(timing, net_one_flow_takes_latency_plus_size_over_bandwidth);
    tcase_add_test(timing, net_zero_byte_message_takes_the_latency_only);
    tcase_add_test(timing, net_delivers_a_message_to_its_sender_at_the_current_time);
    tcase_add_test(timing, net_applies_extra_latency_only_to_messages_sent_while_set);
    suite_add_tcase(s, timing);
    TCase *sharing = tcase_create("sharing");
    tcase_add_test(sharing, net_shares_a_down_link_equally_among_n_flows);
    tcase_add_test(sharing, net_speeds_up_the_other_flow_when_one_of_two_finishes);
    tcase_add_test(sharing, net_oversubscribed_rack_uplink_is_the_bottleneck);
    tcase_add_test(sharing, net_max_min_gives_the_leftover_to_flows_bottlenecked_elsewhere);
    tcase_add_test(sharing, net_ring_costs_one_rerate_per_flow);
    suite_add_tcase(s, sharing);
    TCase *changes = tcase_create("changes");
    tcase_add_test(changes, net_bandwidth_factor_rerates_flows_in_progress_at_that_instant);
    tcase_add_test(changes, net_host_down_aborts_its_flows_and_drops_its_messages);
    tcase_add_test(changes, net_counts_bytes_per_host);
    suite_add_tcase(s, changes);
    TCase *errors = tcase_create("errors");
    tcase_add_test(errors, net_rejects_bad_configs_and_arguments);
    tcase_add_test(errors, net_grows_its_pool_for_many_messages_in_flight);
    suite_add_tcase(s, errors);
    TCase *stress_case = tcase_create("invariants");
    tcase_add_test(stress_case, net_keeps_its_invariants_under_random_traffic);
    tcase_set_timeout(stress_case, 120);
    suite_add_tcase(s, stress_case);
    return s;
}
