/* Network: nodes holding several hosts (GPUs) that share the node's NIC and talk to each other
 * through the node's fabric (net/net.h, config.node_of; the scenario's gpus_per_host).
 *
 * Known answers to the ns with the model's own expressions (bytes * 8e9 / rate rounded once):
 * paths inside a node cross only the two GPUs' fabric links, paths between nodes the nodes'
 * NICs (shared by their GPUs) and the switches between them, which place nodes; a bandwidth
 * factor on one GPU slows its node's NIC, at the smallest factor of the node's GPUs. Then the
 * differential test of tests/test_net_solo.c on node topologies: random message sets with
 * solos and without end at the same ns. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>
#include <gsl/gsl_rng.h>

#include "harness_net.h"
#include "net/net.h"
#include "net/net_topo.h"
#include "net_harness.h"
#include "sim/engine.h"
#include "suite.h"

enum {
    HOSTS = 10, /* nodes of 4, 4 and 2 GPUs */
};

/* Three nodes: hosts 0-3, 4-7 and 8-9; NICs of 23.7e9 b/s (node 2: 11.3e9), fabric links of
 * 187.5e9 b/s (node 1's: 93.1e9). */
typedef struct nodes {
    double bw[HOSTS], fbw[HOSTS];
    sim_time lat[HOSTS], flat[HOSTS];
    uint32_t node_of[HOSTS];
    sim_net_config cfg;
} nodes;

static void nodes_init(nodes *t, sim_topology topo)
{
    for (uint32_t h = 0; h < HOSTS; h++) {
        t->node_of[h] = h < 4 ? 0 : h < 8 ? 1 : 2;
        t->bw[h] = t->node_of[h] == 2 ? 11.3e9 : 23.7e9;
        t->lat[h] = 3301 + 211 * (sim_time)t->node_of[h];
        t->fbw[h] = t->node_of[h] == 1 ? 93.1e9 : 187.5e9;
        t->flat[h] = 850 + 13 * (sim_time)h;
    }
    t->cfg = (sim_net_config){ .topology = topo,
                               .nhosts = HOSTS,
                               .bandwidth_bps = t->bw,
                               .latency_ns = t->lat,
                               .rack_size = 2,
                               .uplink_bandwidth_bps = 7.9e9,
                               .uplink_latency_ns = 977,
                               .nnodes = 3,
                               .node_of = t->node_of,
                               .fabric_bps = t->fbw,
                               .fabric_latency_ns = t->flat };
}

START_TEST(hosts_of_one_node_talk_through_its_fabric)
{
    nodes t;
    nodes_init(&t, SIM_TOPO_STAR);
    t.flat[2] = t.flat[1]; /* 1 -> 3 and 2 -> 3 start together */
    harness h;
    nett_harness_init(&h, &t.cfg);
    const uint64_t bytes = 7340033;
    sim_time lat = t.flat[1] + t.flat[3];
    ck_assert_int_eq(sim_net_path_latency(h.net, 1, 3), lat);
    ck_assert_double_eq(sim_net_path_bandwidth_bps(h.net, 1, 3), 187.5e9);
    ck_assert_double_eq(sim_net_path_bandwidth_bps(h.net, 5, 6), 93.1e9);
    /* 1 -> 3 and 2 -> 3 share 3's fabric down link; 0 -> 1 runs alone on other links. */
    nett_send(&h, 1, 3, bytes, 1);
    nett_send(&h, 2, 3, bytes, 2);
    nett_send(&h, 0, 1, bytes, 3);
    nett_harness_run(&h);
    ck_assert_int_eq(nett_delivered(&h, 1)->at_ns,
                     lat + nett_xfer_ns((double)bytes, 187.5e9 / 2.0));
    ck_assert_int_eq(nett_delivered(&h, 2)->at_ns,
                     t.flat[2] + t.flat[3] + nett_xfer_ns((double)bytes, 187.5e9 / 2.0));
    ck_assert_int_eq(nett_delivered(&h, 3)->at_ns,
                     t.flat[0] + t.flat[1] + nett_xfer_ns((double)bytes, 187.5e9));
    nett_harness_fini(&h);
}
END_TEST

START_TEST(hosts_of_two_nodes_share_their_nodes_nics)
{
    nodes t;
    nodes_init(&t, SIM_TOPO_STAR);
    for (uint32_t i = 0; i < HOSTS; i++)
        t.flat[i] = 0; /* every start at the NICs' latency */
    harness h;
    nett_harness_init(&h, &t.cfg);
    const uint64_t bytes = 5000011;
    sim_time lat = t.lat[0] + t.lat[4];
    ck_assert_int_eq(sim_net_path_latency(h.net, 2, 7), lat);
    ck_assert_double_eq(sim_net_path_bandwidth_bps(h.net, 2, 9), 11.3e9);
    /* 0 -> 4, 1 -> 5 and 2 -> 6 share node 0's up and node 1's down link: a third each; 3 -> 1
     * stays inside node 0 and takes the full fabric rate beside them. */
    nett_send(&h, 0, 4, bytes, 1);
    nett_send(&h, 1, 5, bytes, 2);
    nett_send(&h, 2, 6, bytes, 3);
    nett_send(&h, 3, 1, bytes, 4);
    nett_harness_run(&h);
    for (uint64_t tag = 1; tag <= 3; tag++)
        ck_assert_int_eq(nett_delivered(&h, tag)->at_ns,
                         lat + nett_xfer_ns((double)bytes, 23.7e9 / 3.0));
    ck_assert_int_eq(nett_delivered(&h, 4)->at_ns, nett_xfer_ns((double)bytes, 187.5e9));
    nett_harness_fini(&h);
}
END_TEST

START_TEST(a_bandwidth_factor_slows_the_shared_nic_at_its_hosts_smallest)
{
    nodes t;
    nodes_init(&t, SIM_TOPO_STAR);
    harness h;
    nett_harness_init(&h, &t.cfg);
    sim_err err;
    ck_assert_int_eq(sim_net_set_bandwidth_factor(h.net, 5, 0.25, &err), 0);
    ck_assert_int_eq(sim_net_set_bandwidth_factor(h.net, 6, 0.5, &err), 0);
    ck_assert_double_eq(sim_net_path_bandwidth_bps(h.net, 0, 4), 23.7e9 * 0.25);
    ck_assert_double_eq(sim_net_path_bandwidth_bps(h.net, 7, 1), 23.7e9 * 0.25);
    ck_assert_double_eq(sim_net_path_bandwidth_bps(h.net, 4, 7), 93.1e9); /* the fabric: as is */
    ck_assert_int_eq(sim_net_set_bandwidth_factor(h.net, 5, 1.0, &err), 0);
    ck_assert_double_eq(sim_net_path_bandwidth_bps(h.net, 0, 4), 23.7e9 * 0.5);
    ck_assert_int_eq(sim_net_set_bandwidth_factor(h.net, 6, 1.0, &err), 0);
    ck_assert_double_eq(sim_net_path_bandwidth_bps(h.net, 0, 4), 23.7e9);
    nett_harness_fini(&h);
}
END_TEST

START_TEST(racks_and_fat_trees_place_nodes)
{
    /* Racks of 2 nodes: nodes 0 and 1 share rack 0, node 2 is rack 1. */
    nodes t;
    nodes_init(&t, SIM_TOPO_RACKS);
    harness h;
    nett_harness_init(&h, &t.cfg);
    ck_assert_int_eq(sim_net_path_latency(h.net, 0, 7), t.lat[0] + t.lat[7]);
    ck_assert_int_eq(sim_net_path_latency(h.net, 0, 9), t.lat[0] + t.lat[9] + 2 * 977);
    ck_assert_double_eq(sim_net_path_bandwidth_bps(h.net, 0, 7), 23.7e9);
    ck_assert_double_eq(sim_net_path_bandwidth_bps(h.net, 0, 9), 7.9e9);
    nett_harness_fini(&h);
    uint32_t out[NET_MAX_HOPS];
    ck_assert_uint_eq(sim_net_topo_path(&t.cfg, 0, 9, out), 4);
    ck_assert_uint_eq(out[0], 0); /* node 0's NIC */
    ck_assert_uint_eq(out[1], 6); /* rack 0's uplink, after the 3 nodes' NICs */
    ck_assert_uint_eq(out[2], 9);
    ck_assert_uint_eq(out[3], 5); /* node 2's NIC, down */
    ck_assert_uint_eq(sim_net_topo_path(&t.cfg, 8, 9, out), 2);
    ck_assert_uint_eq(out[0], 10 + 16); /* after NICs and 2 racks' uplinks: 9's fabric links */
    ck_assert_uint_eq(out[1], 10 + 19);
    ck_assert_uint_eq(sim_net_topo_nlinks(&t.cfg), 10 + 2 * HOSTS);
    /* A fat tree of k = 2 has 2 ports: too few for 3 nodes, enough for 2. */
    t.cfg.topology = SIM_TOPO_FAT_TREE;
    t.cfg.k = 2;
    t.cfg.oversubscription = 1.0;
    sim_err err;
    sim_engine *eng = sim_engine_create(16, &err);
    ck_assert_ptr_null(sim_net_create(&t.cfg, eng, &err));
    ck_assert_ptr_nonnull(strstr(err.msg, "fewer than 3"));
    for (uint32_t h2 = 8; h2 < HOSTS; h2++)
        t.node_of[h2] = 1;
    t.cfg.nnodes = 2;
    t.bw[8] = t.bw[9] = 23.7e9;
    t.lat[8] = t.lat[9] = t.lat[4];
    sim_net *net = sim_net_create(&t.cfg, eng, &err);
    ck_assert_msg(net != NULL, "%s", err.msg);
    sim_net_destroy(net);
    sim_engine_destroy(eng);
}
END_TEST

START_TEST(rejects_nodes_out_of_order_or_disagreeing_on_their_nic)
{
    nodes t;
    nodes_init(&t, SIM_TOPO_STAR);
    t.node_of[5] = 2; /* 1, 2, 1 */
    nett_expect_rejected(&t.cfg, "consecutive hosts");
    nodes_init(&t, SIM_TOPO_STAR);
    t.node_of[0] = 1;
    nett_expect_rejected(&t.cfg, "consecutive hosts");
    nodes_init(&t, SIM_TOPO_STAR);
    t.cfg.nnodes = 4;
    nett_expect_rejected(&t.cfg, "4 nodes, but the hosts fill 3");
    nodes_init(&t, SIM_TOPO_STAR);
    t.bw[6] = 1e9;
    nett_expect_rejected(&t.cfg, "hosts 5 and 6 share node 1");
    nodes_init(&t, SIM_TOPO_STAR);
    t.fbw[2] = 0.0;
    nett_expect_rejected(&t.cfg, "fabric_bps[2]");
    nodes_init(&t, SIM_TOPO_STAR);
    t.flat[3] = -1;
    nett_expect_rejected(&t.cfg, "fabric_latency_ns[3]");
    nodes_init(&t, SIM_TOPO_STAR);
    t.cfg.fabric_bps = NULL;
    nett_expect_rejected(&t.cfg, "nodes need");
}
END_TEST

/* ---- differential: solos and groups on node topologies ------------------------------------ */

/* The solo differential's scripts (nh_solo_draw) on 4 to 32 hosts (4 to 16 on a fat tree),
 * with 8-byte messages among the sizes. */
static nh_draw node_draw(void)
{
    nh_draw d = nh_solo_draw;
    d.min_hosts = 4;
    d.host_span = 29;
    d.host_span_fat_tree = 13;
    d.tiny = 8;
    return d;
}

static void differential(sim_topology topo, bool changes, unsigned long seed, size_t sets)
{
    gsl_rng *r = nh_rng(seed);
    nh_node_set *ns = nh_zalloc(sizeof(*ns));
    nh_side *on = nh_zalloc(sizeof(*on)), *off = nh_zalloc(sizeof(*off));
    const nh_draw d = node_draw();
    uint64_t messages = 0;
    for (size_t k = 0; k < sets; k++) {
        nh_draw_flow_set(&ns->fs, r, topo, changes, &d);
        nh_to_nodes(ns, r);
        nh_side_run(off, &ns->fs.cfg, ns->fs.acts, ns->fs.nacts, NH_NO_SOLOS, true);
        nh_side_run(on, &ns->fs.cfg, ns->fs.acts, ns->fs.nacts, NH_MODEL, true);
        nh_expect_same_ends(on, off, k, "without solos");
        sim_net_stats a, b;
        nh_finish_pair(on, off, &a, &b, NULL, NULL);
        messages += a.sent;
    }
    fprintf(stderr, "nodes: topo %d changes %d: %zu sets, %llu messages\n", (int)topo, (int)changes,
            sets, (unsigned long long)messages);
    free(on);
    free(off);
    free(ns);
    gsl_rng_free(r);
}

START_TEST(solos_and_groups_end_as_the_start_and_done_path_on_nodes)
{
    differential(SIM_TOPO_STAR, false, 41, 600);
    differential(SIM_TOPO_RACKS, false, 42, 600);
    differential(SIM_TOPO_FAT_TREE, false, 43, 600);
    differential(SIM_TOPO_STAR, true, 44, 600);
}
END_TEST

Suite *test_suite(void)
{
    Suite *s = suite_create("net_hosts");
    TCase *paths = tcase_create("paths");
    tcase_add_test(paths, hosts_of_one_node_talk_through_its_fabric);
    tcase_add_test(paths, hosts_of_two_nodes_share_their_nodes_nics);
    tcase_add_test(paths, a_bandwidth_factor_slows_the_shared_nic_at_its_hosts_smallest);
    tcase_add_test(paths, racks_and_fat_trees_place_nodes);
    tcase_add_test(paths, rejects_nodes_out_of_order_or_disagreeing_on_their_nic);
    suite_add_tcase(s, paths);
    TCase *diff = tcase_create("differential");
    tcase_set_timeout(diff, 120);
    tcase_add_test(diff, solos_and_groups_end_as_the_start_and_done_path_on_nodes);
    suite_add_tcase(s, diff);
    return s;
}
