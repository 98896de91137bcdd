/* Network: exact alpha-beta timing, max-min sharing and errors.
 *
 * Expected times are worked out in each test with the same double expressions the model
 * uses (bytes * 8e9 / rate, rounded once per rate change), so they must match to the ns
 * (helpers in tests/harness_net.h). */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_rng.h>

#include "harness_net.h"
#include "net/net.h"
#include "runtime/events.h"
#include "sim/engine.h"
#include "suite.h"

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
    nett_harness_init(&h, &cfg);
    nett_send(&h, 0, 2, 1234567, 1); /* same rack: up(0), down(2); bottleneck 3.917e9 */
    nett_harness_run(&h);
    ck_assert_int_eq(nett_delivered(&h, 1)->at_ns, 2385 + 41093 + nett_xfer_ns(1234567, 3.917e9));
    ck_assert_int_eq(sim_net_path_latency(h.net, 0, 2), 2385 + 41093);
    ck_assert_double_eq(sim_net_path_bandwidth_bps(h.net, 0, 2), 3.917e9);

    /* Another rack: up(1), rack 0 uplink, rack 1 downlink, down(5); bottleneck 5.113e9. */
    sim_time t0 = sim_engine_now(h.eng);
    nett_send(&h, 1, 5, 8765431, 2);
    nett_harness_run(&h);
    sim_time want = t0 + 17 + 3517 + 3517 + 250 + nett_xfer_ns(8765431, 5.113e9);
    ck_assert_int_eq(nett_delivered(&h, 2)->at_ns, want);
    ck_assert_int_eq(sim_net_path_latency(h.net, 1, 5), 17 + 2 * 3517 + 250);
    ck_assert_double_eq(sim_net_path_bandwidth_bps(h.net, 1, 5), 5.113e9);

    /* Everything is carried through untouched. */
    const sim_net_msg *m = &nett_delivered(&h, 2)->msg;
    ck_assert_uint_eq(m->src, 1);
    ck_assert_uint_eq(m->dst, 5);
    ck_assert_uint_eq(m->bytes, 8765431);
    ck_assert_uint_eq(m->arg, 2 * 31 + 7);
    ck_assert_uint_eq(m->payload, 1002);
    ck_assert_int_eq(m->sent_ns, t0);
    sim_net_stats st = nett_stats_of(&h);
    ck_assert_uint_eq(st.sent, 2);
    ck_assert_uint_eq(st.delivered, 2);
    ck_assert_uint_eq(st.in_flight, 0);
    nett_harness_fini(&h);
}
END_TEST

START_TEST(net_zero_byte_message_takes_the_latency_only)
{
    const double bw[] = { 1.5e9, 2.5e9, 3.5e9 };
    const sim_time lat[] = { 4271, 113, 80021 };
    sim_net_config cfg = { .nhosts = 3, .bandwidth_bps = bw, .latency_ns = lat };
    harness h;
    nett_harness_init(&h, &cfg);
    nett_send(&h, 2, 0, 0, 5);
    nett_harness_run(&h);
    ck_assert_int_eq(nett_delivered(&h, 5)->at_ns, 80021 + 4271);
    ck_assert_uint_eq(nett_stats_of(&h).peak_flows, 0);
    nett_harness_fini(&h);
}
END_TEST

static void send_to_self(harness *h, const sim_event *ev)
{
    (void)ev;
    nett_send(h, 1, 1, 987654, 9);
}

START_TEST(net_delivers_a_message_to_its_sender_at_the_current_time)
{
    const double bw[] = { 1.25e9, 2.75e9 };
    const sim_time lat[] = { 3001, 5003 };
    sim_net_config cfg = { .nhosts = 2, .bandwidth_bps = bw, .latency_ns = lat };
    harness h;
    nett_harness_init(&h, &cfg);
    sim_net_set_extra_latency(h.net, 1, 77777); /* a local delivery crosses no link */
    h.on_user = send_to_self;
    nett_at_time(&h, 123457, 0, 0, 0);
    nett_harness_run(&h);
    ck_assert_int_eq(nett_delivered(&h, 9)->at_ns, 123457);
    ck_assert_int_eq(sim_net_path_latency(h.net, 1, 1), 0);
    ck_assert(isinf(sim_net_path_bandwidth_bps(h.net, 1, 1)));
    ck_assert_uint_eq(nett_stats_of(&h).peak_flows, 0);
    nett_harness_fini(&h);
}
END_TEST

START_TEST(net_applies_extra_latency_only_to_messages_sent_while_set)
{
    const double bw[] = { 8.2e9, 8.3e9, 8.4e9 };
    const sim_time lat[] = { 1409, 2711, 613 };
    sim_net_config cfg = { .nhosts = 3, .bandwidth_bps = bw, .latency_ns = lat };
    harness h;
    nett_harness_init(&h, &cfg);
    sim_net_set_extra_latency(h.net, 0, 55501);
    nett_send(&h, 0, 1, 0, 1); /* extra on the source */
    sim_net_set_extra_latency(h.net, 0, 0);
    nett_send(&h, 0, 1, 0, 2); /* restored */
    sim_net_set_extra_latency(h.net, 1, 31337);
    nett_send(&h, 2, 1, 0, 3); /* extra on the destination */
    sim_net_set_extra_latency(h.net, 2, 1001);
    nett_send(&h, 2, 1, 0, 4); /* both */
    sim_net_set_extra_latency(h.net, 1, 0);
    sim_net_set_extra_latency(h.net, 2, 0);
    nett_harness_run(&h);
    ck_assert_int_eq(nett_delivered(&h, 1)->at_ns, 1409 + 2711 + 55501);
    ck_assert_int_eq(nett_delivered(&h, 2)->at_ns, 1409 + 2711);
    ck_assert_int_eq(nett_delivered(&h, 3)->at_ns, 613 + 2711 + 31337);
    ck_assert_int_eq(nett_delivered(&h, 4)->at_ns, 613 + 2711 + 31337 + 1001);
    ck_assert_int_eq(sim_net_path_latency(h.net, 2, 1), 613 + 2711); /* without extra */
    nett_harness_fini(&h);
}
END_TEST

/* ---- sharing -------------------------------------------------------------------------- */

/* Relative tolerance for rates: a fair share is a few subtractions and one division of
 * capacities near 1e10, each exact to about 1e-16 relative. */
static const double RATE_TOL = 1e-12;

START_TEST(net_shares_a_down_link_equally_among_n_flows)
{
    const double down = 9.37e9;
    const double bw[] = { 25e9, 31e9, 27.5e9, 40e9, down };
    const sim_time lat[] = { 1777, 1777, 1777, 1777, 2903 };
    sim_net_config cfg = { .nhosts = 5, .bandwidth_bps = bw, .latency_ns = lat };
    harness h;
    nett_harness_init(&h, &cfg);
    for (uint32_t w = 0; w < 4; w++)
        nett_send(&h, w, 4, 3141593, w);
    sim_time start = 1777 + 2903;
    sim_err err;
    ck_assert_int_eq(sim_engine_run(h.eng, start, nett_dispatch, &h, &err), 0);
    ck_assert_uint_eq(nett_count_flows(&h), 4);
    for (uint32_t w = 0; w < 4; w++)
        ck_assert_double_eq_tol(nett_rate_of(&h, w, 4), down / 4, down * RATE_TOL);
    nett_harness_run(&h);
    for (uint32_t w = 0; w < 4; w++)
        ck_assert_int_eq(nett_delivered(&h, w)->at_ns, start + nett_xfer_ns(3141593, down / 4));
    sim_net_stats st = nett_stats_of(&h);
    ck_assert_uint_eq(st.peak_flows, 4);
    ck_assert_uint_eq(st.active_flows, 0);
    nett_harness_fini(&h);
}
END_TEST

static void expect_alone(harness *h, const sim_event *ev)
{
    /* Just after the first flow ended, the second runs alone at the full 6.1e9. */
    (void)ev;
    ck_assert_uint_eq(nett_count_flows(h), 1);
    ck_assert_double_eq(nett_rate_of(h, 1, 2), 6.1e9);
}

START_TEST(net_speeds_up_the_other_flow_when_one_of_two_finishes)
{
    const double b = 6.1e9;
    const double bw[] = { 11e9, 12e9, b };
    const sim_time lat[] = { 503, 503, 1201 };
    sim_net_config cfg = { .nhosts = 3, .bandwidth_bps = bw, .latency_ns = lat };
    harness h;
    nett_harness_init(&h, &cfg);
    const uint64_t s1 = 1048583, s2 = 2718281;
    nett_send(&h, 0, 2, s1, 1);
    nett_send(&h, 1, 2, s2, 2);
    sim_time t0 = 503 + 1201;
    /* Both at b/2 until the first ends at t1; the second then has the link to itself. */
    sim_time t1 = t0 + nett_xfer_ns((double)s1, b / 2);
    double rem = (double)s2 - b / 2 * (double)(t1 - t0) / 8e9;
    sim_time t2 = t1 + nett_xfer_ns(rem, b);
    h.on_user = expect_alone;
    nett_at_time(&h, t1 + 1, 0, 0, 0);
    nett_harness_run(&h);
    ck_assert_int_eq(nett_delivered(&h, 1)->at_ns, t1);
    ck_assert_int_eq(nett_delivered(&h, 2)->at_ns, t2);
    ck_assert_int_gt(t2 - t1, 1000); /* the second really was still running */
    nett_harness_fini(&h);
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
    nett_harness_init(&h, &cfg);
    const uint64_t bytes = 999331;
    for (uint32_t w = 0; w < 4; w++)
        nett_send(&h, w, 7 - w, bytes, w);
    /* Latencies are 700 + 111 * (w + 7 - w) + 2 * 4099, the same for all four. */
    sim_time start = 700 + 700 + 111 * 7 + 2 * 4099;
    sim_err err;
    ck_assert_int_eq(sim_engine_run(h.eng, start, nett_dispatch, &h, &err), 0);
    ck_assert_uint_eq(nett_count_flows(&h), 4);
    for (uint32_t w = 0; w < 4; w++)
        ck_assert_double_eq_tol(nett_rate_of(&h, w, 7 - w), uplink / 4, uplink * RATE_TOL);
    nett_harness_run(&h);
    for (uint32_t w = 0; w < 4; w++)
        ck_assert_int_eq(nett_delivered(&h, w)->at_ns,
                         start + nett_xfer_ns((double)bytes, uplink / 4));
    nett_harness_fini(&h);
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
    nett_harness_init(&h, &cfg);
    nett_send(&h, 0, 3, 50000000, 1);
    nett_send(&h, 1, 3, 50000000, 2);
    nett_send(&h, 2, 3, 50000000, 3);
    nett_send(&h, 2, 4, 50000000, 4);
    sim_err err;
    ck_assert_int_eq(sim_engine_run(h.eng, 200, nett_dispatch, &h, &err), 0);
    ck_assert_uint_eq(nett_count_flows(&h), 4);
    ck_assert_double_eq_tol(nett_rate_of(&h, 0, 3), 1.2e9, 40e9 * RATE_TOL);
    ck_assert_double_eq_tol(nett_rate_of(&h, 1, 3), 4.9e9, 40e9 * RATE_TOL);
    ck_assert_double_eq_tol(nett_rate_of(&h, 2, 3), 3.5e9, 40e9 * RATE_TOL);
    ck_assert_double_eq_tol(nett_rate_of(&h, 2, 4), 3.5e9, 40e9 * RATE_TOL);
    nett_harness_run(&h);
    ck_assert_uint_eq(h.n, 4);
    nett_harness_fini(&h);
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
    nett_harness_init(&h, &cfg);
    const uint64_t bytes = 4194319;
    for (uint32_t w = 0; w < N; w++)
        nett_send(&h, w, (w + 1) % N, bytes, w);
    nett_harness_run(&h);
    for (uint32_t w = 0; w < N; w++) {
        uint32_t v = (w + 1) % N;
        sim_time want = lat[w] + lat[v] + nett_xfer_ns((double)bytes, fmin(bw[w], bw[v]));
        ck_assert_int_eq(nett_delivered(&h, w)->at_ns, want);
    }
    sim_net_stats st = nett_stats_of(&h);
    ck_assert_uint_eq(st.rerates, N);
    ck_assert_uint_eq(st.recomputes, 2 * N);
    ck_assert_uint_eq(st.delivered, N);
    ck_assert_uint_eq(st.peak_flows, N);
    nett_harness_fini(&h);
}
END_TEST

/* ---- errors --------------------------------------------------------------------------- */

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
    nett_expect_rejected(&bad, "nhosts");
    bad = cfg;
    bad.topology = (sim_topology)7;
    nett_expect_rejected(&bad, "topology");
    bad = cfg;
    bad.latency_ns = NULL;
    nett_expect_rejected(&bad, "latency_ns");
    bw[1] = -2.5;
    nett_expect_rejected(&cfg, "bandwidth_bps[1]");
    bw[1] = INFINITY;
    nett_expect_rejected(&cfg, "bandwidth_bps[1]");
    bw[1] = 2e9;
    lat[2] = -1;
    nett_expect_rejected(&cfg, "latency_ns[2]");
    lat[2] = 7;
    bad = cfg;
    bad.rack_size = 0;
    nett_expect_rejected(&bad, "rack_size");
    bad = cfg;
    bad.uplink_bandwidth_bps = 0.0;
    nett_expect_rejected(&bad, "uplink_bandwidth_bps");
    bad = cfg;
    bad.uplink_latency_ns = -3;
    nett_expect_rejected(&bad, "uplink_latency_ns");

    harness h;
    nett_harness_init(&h, &cfg);
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
    ck_assert_uint_eq(nett_stats_of(&h).delivered, 0);
    nett_harness_fini(&h);

    /* 2e9 bytes at 1 bit/s would end after the end of time. */
    const double slow[] = { 1.0, 1.0 };
    sim_net_config tiny = { .nhosts = 2, .bandwidth_bps = slow, .latency_ns = lat };
    nett_harness_init(&h, &tiny);
    nett_send(&h, 0, 1, 2000000000, 1);
    ck_assert_int_eq(sim_engine_run(h.eng, SIM_TIME_NEVER, nett_dispatch, &h, &err), SIM_ENUMERIC);
    ck_assert_ptr_nonnull(strstr(err.msg, "end of time"));
    nett_harness_fini(&h);
}
END_TEST

START_TEST(net_grows_its_pool_for_many_messages_in_flight)
{
    const double bw[] = { 2.2e9, 3.3e9 };
    const sim_time lat[] = { 50, 60 };
    sim_net_config cfg = { .nhosts = 2, .bandwidth_bps = bw, .latency_ns = lat };
    harness h;
    nett_harness_init(&h, &cfg);
    for (uint64_t i = 0; i < 1500; i++)
        nett_send(&h, (uint32_t)(i % 2), (uint32_t)(1 - i % 2), 1000 + i, i);
    ck_assert_uint_eq(nett_stats_of(&h).in_flight, 1500);
    nett_harness_run(&h);
    sim_net_stats st = nett_stats_of(&h);
    ck_assert_uint_eq(st.delivered, 1500);
    ck_assert_uint_eq(st.peak_flows, 1500);
    nett_harness_fini(&h);
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
    TCase *errors = tcase_create("errors");
    tcase_add_test(errors, net_rejects_bad_configs_and_arguments);
    tcase_add_test(errors, net_grows_its_pool_for_many_messages_in_flight);
    suite_add_tcase(s, errors);
    return s;
}
