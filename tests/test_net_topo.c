/* Network: the fat-tree topology, exact to the ns like the racks' tests in test_net.c.
 *
 * k = 4: hosts 0..15, pod x / 4, edge switch (x / 2) mod 2 of its pod; a path climbs to
 * aggregation switch (src + dst) mod 2 and, between pods, to core switch
 * ((src + dst) / 2) mod 2 of that switch's group (net/net_topo.h). */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "harness_net.h"
#include "net/net.h"
#include "net/net_topo.h"
#include "sim/engine.h"
#include "suite.h"

enum {
    HOSTS = 16,
};

typedef struct fat_tree {
    double bw[HOSTS];
    sim_time lat[HOSTS];
    sim_net_config cfg;
} fat_tree;

static void fat_tree_init(fat_tree *t, double nic, double fabric, double over, sim_time up_lat)
{
    for (size_t i = 0; i < HOSTS; i++) {
        t->bw[i] = nic;
        t->lat[i] = 1301 + 17 * (sim_time)i;
    }
    t->cfg = (sim_net_config){ .topology = SIM_TOPO_FAT_TREE,
                               .nhosts = HOSTS,
                               .bandwidth_bps = t->bw,
                               .latency_ns = t->lat,
                               .uplink_bandwidth_bps = fabric,
                               .uplink_latency_ns = up_lat,
                               .k = 4,
                               .oversubscription = over };
}

START_TEST(fat_tree_one_flow_takes_latency_plus_size_over_its_bottleneck)
{
    /* Under one edge switch (0 -> 1), within a pod (0 -> 2) and between pods (0 -> 13): 0, 2
     * and 4 switch-to-switch links. The fabric (8.3e9, halved at the edge by oversubscription
     * 2) is slower than the NICs (25.1e9), so it is the bottleneck once a flow leaves its
     * edge switch. Each flow runs alone. */
    const double nic = 25.1e9, fabric = 8.3e9;
    const sim_time up_lat = 733;
    fat_tree t;
    fat_tree_init(&t, nic, fabric, 2.0, up_lat);
    harness h;
    nett_harness_init(&h, &t.cfg);
    const uint64_t bytes = 2718281;
    const uint32_t dsts[] = { 1, 2, 13 };
    const sim_time hops[] = { 0, 2, 4 };
    const double rates[] = { nic, fabric / 2.0, fabric / 2.0 };
    for (uint64_t i = 0; i < 3; i++) {
        sim_time lat = t.lat[0] + t.lat[dsts[i]] + hops[i] * up_lat;
        ck_assert_int_eq(sim_net_path_latency(h.net, 0, dsts[i]), lat);
        ck_assert_double_eq(sim_net_path_bandwidth_bps(h.net, 0, dsts[i]), rates[i]);
        sim_time t0 = sim_engine_now(h.eng);
        nett_send(&h, 0, dsts[i], bytes, i);
        nett_harness_run(&h);
        ck_assert_int_eq(nett_delivered(&h, i)->at_ns,
                         t0 + lat + nett_xfer_ns((double)bytes, rates[i]));
    }
    nett_harness_fini(&h);
}
END_TEST

START_TEST(fat_tree_flows_across_the_core_share_as_max_min_says)
{
    /* f1: 0 -> 4 and f2: 1 -> 7 (sums 4 and 8: aggregation switch 0, core switch 0) share the
     * uplink of pod 0's edge switch 0 (10e9 / 2 = 5e9): 2.5e9 each. f3: 2 -> 10 (sum 12: the
     * same aggregation and core switches, then down into pod 2) comes from edge switch 1 and
     * shares only pod 0's aggregation-to-core link (10e9) with them, where it takes the
     * leftover 10e9 - 2 * 2.5e9 = 5e9, which its own edge uplink (5e9) allows too. f3 ends
     * first; f1 and f2 stay held by their edge uplink. The NICs (40e9) are never the
     * bottleneck; all latencies are equal so all three start together. */
    fat_tree t;
    fat_tree_init(&t, 40e9, 10e9, 2.0, 500);
    for (size_t i = 0; i < HOSTS; i++)
        t.lat[i] = 1000;
    harness h;
    nett_harness_init(&h, &t.cfg);
    const uint64_t bytes = 3141593;
    nett_send(&h, 0, 4, bytes, 1);
    nett_send(&h, 1, 7, bytes, 2);
    nett_send(&h, 2, 10, bytes, 3);
    sim_time t0 = 2000 + 4 * 500;
    sim_err err;
    ck_assert_int_eq(sim_engine_run(h.eng, t0, nett_dispatch, &h, &err), 0);
    uint32_t src, dst;
    double rate;
    for (size_t i = 0; sim_net_flow_at(h.net, i, &src, &dst, &rate); i++)
        ck_assert_double_eq(rate, (src == 2 ? 5e9 : 2.5e9));
    nett_harness_run(&h);
    ck_assert_int_eq(nett_delivered(&h, 3)->at_ns, t0 + nett_xfer_ns((double)bytes, 5e9));
    ck_assert_int_eq(nett_delivered(&h, 1)->at_ns, t0 + nett_xfer_ns((double)bytes, 2.5e9));
    ck_assert_int_eq(nett_delivered(&h, 2)->at_ns, t0 + nett_xfer_ns((double)bytes, 2.5e9));
    nett_harness_fini(&h);
}
END_TEST

START_TEST(fat_tree_spreads_flows_from_one_edge_switch_over_both_aggregation_switches)
{
    /* 0 -> 4 (sum 4: aggregation switch 0) and 0 -> 5 (sum 5: switch 1) leave pod 0 by
     * different edge uplinks: with the NIC at 40e9 and edge uplinks at 10e9, each runs at
     * 10e9; sharing up(0) (40e9) costs neither anything. */
    fat_tree t;
    fat_tree_init(&t, 40e9, 10e9, 1.0, 0);
    for (size_t i = 0; i < HOSTS; i++)
        t.lat[i] = 0;
    harness h;
    nett_harness_init(&h, &t.cfg);
    const uint64_t bytes = 1000003;
    nett_send(&h, 0, 4, bytes, 1);
    nett_send(&h, 0, 5, bytes, 2);
    nett_harness_run(&h);
    ck_assert_int_eq(nett_delivered(&h, 1)->at_ns, nett_xfer_ns((double)bytes, 10e9));
    ck_assert_int_eq(nett_delivered(&h, 2)->at_ns, nett_xfer_ns((double)bytes, 10e9));
    nett_harness_fini(&h);
}
END_TEST

START_TEST(fat_tree_rejects_bad_radix_too_many_hosts_and_bad_oversubscription)
{
    fat_tree t;
    fat_tree_init(&t, 10e9, 10e9, 1.0, 0);
    t.cfg.k = 3;
    nett_expect_rejected(&t.cfg, "k must be even");
    t.cfg.k = 0;
    nett_expect_rejected(&t.cfg, "k must be even");
    t.cfg.k = 2; /* 2 hosts */
    nett_expect_rejected(&t.cfg, "fewer than 16");
    t.cfg.k = 4;
    t.cfg.oversubscription = 0.5;
    nett_expect_rejected(&t.cfg, "oversubscription");
    t.cfg.oversubscription = NAN;
    nett_expect_rejected(&t.cfg, "oversubscription");
    t.cfg.oversubscription = 1.0;
    t.cfg.uplink_bandwidth_bps = 0.0;
    nett_expect_rejected(&t.cfg, "uplink_bandwidth_bps");
}
END_TEST

/* Every path of cfg from src != dst has distinct links, all numbered below nlinks. */
static void expect_simple_paths(const sim_net_config *cfg)
{
    uint32_t nlinks = sim_net_topo_nlinks(cfg);
    for (uint32_t src = 0; src < cfg->nhosts; src++) {
        for (uint32_t dst = 0; dst < cfg->nhosts; dst++) {
            uint32_t out[NET_MAX_HOPS];
            uint8_t n = sim_net_topo_path(cfg, src, dst, out);
            ck_assert_uint_eq(n == 0, src == dst);
            for (uint8_t i = 0; i < n; i++) {
                ck_assert_uint_lt(out[i], nlinks);
                for (uint8_t j = 0; j < i; j++)
                    ck_assert_uint_ne(out[i], out[j]);
            }
        }
    }
}

START_TEST(every_path_crosses_each_of_its_links_at_most_once)
{
    /* The groups of net/net_group.c count a component's hops on this (net/net_topo.h). */
    fat_tree t;
    fat_tree_init(&t, 10e9, 10e9, 1.0, 0);
    expect_simple_paths(&t.cfg);
    t.cfg.topology = SIM_TOPO_STAR;
    expect_simple_paths(&t.cfg);
    t.cfg.topology = SIM_TOPO_RACKS;
    t.cfg.rack_size = 3;
    expect_simple_paths(&t.cfg);
}
END_TEST

Suite *test_suite(void)
{
    Suite *s = suite_create("net_topo");
    TCase *tc = tcase_create("fat_tree");
    tcase_add_test(tc, fat_tree_one_flow_takes_latency_plus_size_over_its_bottleneck);
    tcase_add_test(tc, fat_tree_flows_across_the_core_share_as_max_min_says);
    tcase_add_test(tc, fat_tree_spreads_flows_from_one_edge_switch_over_both_aggregation_switches);
    tcase_add_test(tc, fat_tree_rejects_bad_radix_too_many_hosts_and_bad_oversubscription);
    suite_add_tcase(s, tc);
    TCase *paths = tcase_create("paths");
    tcase_add_test(paths, every_path_crosses_each_of_its_links_at_most_once);
    suite_add_tcase(s, paths);
    return s;
}
