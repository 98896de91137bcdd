/* Network: bundles (net/net_bundle.c), identical messages sent together that share one START
 * and one DONE, against the same network without them (every message its own events, solos
 * kept: the START and DONE path they stand for).
 *
 * Known answers on two nodes of 8 GPUs, each GPU of one sending to its peer on the other (a
 * hierarchical all-reduce's step between hosts): 3 engine events instead of 15, every end at
 * 2 L + S * 8e9 / (B / 8), in the order of the DONEs they stand for; a failure in the latency
 * phase or mid-transfer, of a member or of the carrier's own message; a caller stopping midway;
 * transfers under half a ns, which start one by one. Then thousands of random flow sets on
 * nodes and without, with batches of identical sends, failures mid-transfer, capacity changes
 * and extra latencies (link windows), closed-loop replies: every message ends at the same ns
 * and in the same order with bundles as without, with the same counts (sent, delivered,
 * dropped, peak flows, ratings, recomputations, grouped flows), on fewer engine events. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>
#include <gsl/gsl_rng.h>

#include "net/net.h"
#include "net_harness.h"
#include "runtime/events.h"
#include "sim/engine.h"
#include "suite.h"

enum {
    GPUS = 8, /* a node */
    HOSTS = 2 * GPUS
};

static const sim_time LAT_NS = 5113;    /* a NIC's latency */
static const double NIC_BPS = 97.3e9;   /* a NIC's bandwidth */
static const uint64_t BYTES = 1234567;  /* a message */
static const sim_time HALFWAY = 600000; /* well inside the transfer (about 8 * 101 us) */

/* Two nodes of GPUS hosts on a star, fabric links of 300 Gbit/s. */
typedef struct two_nodes {
    double bw[HOSTS], fbw[HOSTS];
    sim_time lat[HOSTS], flat[HOSTS];
    uint32_t node_of[HOSTS];
    sim_net_config cfg;
} two_nodes;

static void two_nodes_init(two_nodes *t)
{
    for (uint32_t h = 0; h < HOSTS; h++) {
        t->bw[h] = NIC_BPS;
        t->lat[h] = LAT_NS;
        t->fbw[h] = 300e9;
        t->flat[h] = 700;
        t->node_of[h] = h / GPUS;
    }
    t->cfg = (sim_net_config){ .topology = SIM_TOPO_STAR,
                               .nhosts = HOSTS,
                               .bandwidth_bps = t->bw,
                               .latency_ns = t->lat,
                               .nnodes = 2,
                               .node_of = t->node_of,
                               .fabric_bps = t->fbw,
                               .fabric_latency_ns = t->flat };
}

/* The script of the known-answer tests: GPU g of node 0 sends BYTES to GPU g of node 1 at 0,
 * g = 0..7 (tags 0, 2, ..., 14), then `extra` more actions. */
static size_t eight_sends(nh_action *acts, const nh_action *extra, size_t nextra)
{
    for (uint32_t g = 0; g < GPUS; g++)
        acts[g] = (nh_action){ .at_ns = 0, .kind = NH_SEND, .a = g, .b = GPUS + g, .bytes = BYTES };
    if (nextra > 0) /* memcpy takes no NULL, even for 0 bytes */
        memcpy(&acts[GPUS], extra, nextra * sizeof(*extra));
    return GPUS + nextra;
}

/* Runs `acts` with bundles and without: every end must be the same, in the same order. The
 * sides are left for the caller to read and finish (finish_both). */
static void run_both(nh_side *on, nh_side *off, const sim_net_config *cfg, const nh_action *acts,
                     size_t nacts, bool replies)
{
    nh_side_run(on, cfg, acts, nacts, NH_MODEL, replies);
    nh_side_run(off, cfg, acts, nacts, NH_NO_BUNDLES, replies);
    ck_assert_uint_eq(on->n, off->n);
    for (size_t i = 0; i < off->n; i++) {
        ck_assert_msg(on->tag[i] == off->tag[i] && on->at_ns[i] == off->at_ns[i] &&
                          on->dropped[i] == off->dropped[i],
                      "end %zu: tag %llu at %lld (dropped %d), without bundles tag %llu at %lld "
                      "(dropped %d)",
                      i, (unsigned long long)on->tag[i], (long long)on->at_ns[i], on->dropped[i],
                      (unsigned long long)off->tag[i], (long long)off->at_ns[i], off->dropped[i]);
    }
}

/* Finishes both sides, checks that their counts agree, returns their events and bundled. */
static void finish_both(nh_side *on, nh_side *off, uint64_t *events_on, uint64_t *events_off,
                        uint64_t *bundled)
{
    sim_net_stats a, b;
    sim_engine_stats ea, eb;
    nh_finish_pair(on, off, &a, &b, &ea, &eb);
    ck_assert_uint_eq(a.between, b.between);
    ck_assert_uint_eq(a.peak_flows, b.peak_flows);
    ck_assert_uint_eq(a.rerates, b.rerates);
    ck_assert_uint_eq(a.recomputes, b.recomputes);
    ck_assert_uint_eq(a.grouped, b.grouped);
    ck_assert_uint_eq(b.bundled, 0);
    ck_assert_uint_le(ea.processed, eb.processed);
    *events_on = ea.processed;
    *events_off = eb.processed;
    *bundled = a.bundled;
}

/* The first send is a solo (its links free), the second carries the six after it: the solo's
 * DONE, the bundle's START and its DONE, against the START and DONE path's 7 STARTs and 8
 * DONEs. All end at 2 L + S * 8e9 / (B / 8), the bundle's last sent first, the solo last: the
 * order in which their DONEs were scheduled, the last joined first, at the flush that rated
 * them. */
START_TEST(eight_gpus_sending_to_the_next_node_cost_three_events)
{
    two_nodes t;
    two_nodes_init(&t);
    nh_action acts[GPUS];
    size_t n = eight_sends(acts, NULL, 0);
    nh_side *on = nh_zalloc(sizeof(*on)), *off = nh_zalloc(sizeof(*off));
    run_both(on, off, &t.cfg, acts, n, false);
    sim_time want = 2 * LAT_NS + llround((double)BYTES * 8e9 / (NIC_BPS / GPUS));
    static const uint64_t order[GPUS] = { 14, 12, 10, 8, 6, 4, 2, 0 };
    ck_assert_uint_eq(on->n, GPUS);
    for (size_t i = 0; i < GPUS; i++) {
        ck_assert_uint_eq(on->tag[i], order[i]);
        ck_assert_int_eq(on->at_ns[i], want);
    }
    uint64_t events_on, events_off, bundled;
    finish_both(on, off, &events_on, &events_off, &bundled);
    ck_assert_uint_eq(events_on, GPUS + 3); /* the 8 sends' action events, and 3 */
    ck_assert_uint_eq(events_off, GPUS + 15);
    ck_assert_uint_eq(bundled, GPUS - 2);
    free(on);
    free(off);
}
END_TEST

/* Failures drop the messages of a bundle one at a time, the rest going on as on the START and
 * DONE path: the destination of the carrier's own message (GPU 9) in the latency phase, a
 * member's (GPU 12) and the carrier's source (GPU 1, after a handover) mid-transfer, and a
 * recovery. */
START_TEST(failures_drop_messages_of_a_bundle_and_the_rest_go_on)
{
    two_nodes t;
    two_nodes_init(&t);
    static const struct {
        sim_time at;
        uint32_t host;
    } cases[] = { { 3000, GPUS + 1 }, { HALFWAY, GPUS + 4 }, { HALFWAY, 1 }, { 3000, 7 } };
    for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
        nh_action extra[3] = {
            { .at_ns = cases[c].at, .kind = NH_DOWN, .a = cases[c].host },
            { .at_ns = HALFWAY + 1, .kind = NH_DOWN, .a = GPUS + 6 },
            { .at_ns = HALFWAY + 2, .kind = NH_UP, .a = cases[c].host },
        };
        nh_action acts[GPUS + 3];
        size_t n = eight_sends(acts, extra, 3);
        nh_side *on = nh_zalloc(sizeof(*on)), *off = nh_zalloc(sizeof(*off));
        run_both(on, off, &t.cfg, acts, n, false);
        size_t dropped = 0;
        for (size_t i = 0; i < on->n; i++)
            dropped += on->dropped[i];
        ck_assert_uint_eq(dropped, 2);
        uint64_t events_on, events_off, bundled;
        finish_both(on, off, &events_on, &events_off, &bundled);
        ck_assert_uint_eq(bundled, GPUS - 2);
        free(on);
        free(off);
    }
}
END_TEST

/* Only messages sent one right after the other form a bundle: a START scheduled between them
 * (Z, sent between A1 and A2 from another host to the same one) would start between theirs, so
 * A2 carries A3 apart from A1. A 10 MB flow Y into host 1 keeps the A's from being solos; the
 * A's and Z tie at their end, where the order tells the bundles apart. */
START_TEST(a_send_between_identical_ones_keeps_them_apart)
{
    two_nodes t;
    two_nodes_init(&t);
    t.cfg.node_of = NULL; /* 16 single-GPU hosts */
    const nh_action acts[] = {
        { .at_ns = 0, .kind = NH_SEND, .a = 3, .b = 1, .bytes = 10000000 },
        { .at_ns = 20000, .kind = NH_SEND, .a = 0, .b = 1, .bytes = BYTES },
        { .at_ns = 20000, .kind = NH_SEND, .a = 2, .b = 1, .bytes = BYTES },
        { .at_ns = 20000, .kind = NH_SEND, .a = 0, .b = 1, .bytes = BYTES },
        { .at_ns = 20000, .kind = NH_SEND, .a = 0, .b = 1, .bytes = BYTES },
    };
    nh_side *on = nh_zalloc(sizeof(*on)), *off = nh_zalloc(sizeof(*off));
    run_both(on, off, &t.cfg, acts, 5, false);
    static const uint64_t order[] = { 8, 6, 4, 2, 0 }; /* A3, A2, Z, A1, then Y */
    ck_assert_uint_eq(on->n, 5);
    for (size_t i = 0; i < 5; i++)
        ck_assert_uint_eq(on->tag[i], order[i]);
    ck_assert_int_eq(on->at_ns[0], on->at_ns[3]);
    uint64_t events_on, events_off, bundled;
    finish_both(on, off, &events_on, &events_off, &bundled);
    ck_assert_uint_eq(bundled, 1);
    free(on);
    free(off);
}
END_TEST

/* Nor do messages sent with an event scheduled between their sends, which the START and DONE
 * path would run between their STARTs: here a failure of the second one's source (GPU 1) at
 * their start ns, which drops it before it starts, while the first (GPU 0's) is on its links
 * already and the third (GPU 2's) starts after it. A 10 MB message Y from GPU 3, sent first,
 * keeps the others from being solos. Bundled with the first, the second would be counted
 * active before it is dropped (the peak tells). */
START_TEST(an_event_between_identical_sends_keeps_them_apart)
{
    two_nodes t;
    two_nodes_init(&t);
    nh_side *side[2];
    for (int plain = 0; plain < 2; plain++) {
        nh_side *sd = side[plain] = calloc(1, sizeof(*sd));
        ck_assert_ptr_nonnull(sd);
        nh_side_open(sd, &t.cfg, plain ? NH_NO_BUNDLES : NH_MODEL, false);
        static const nh_action down = { .at_ns = 2 * LAT_NS, .kind = NH_DOWN, .a = 1 };
        ck_assert_int_eq(nh_side_send(sd, 3, GPUS + 3, 10000000, 100), 0);
        ck_assert_int_eq(nh_side_send(sd, 0, GPUS, BYTES, 0), 0);
        nh_side_schedule(sd, &down, 0, 1);
        ck_assert_int_eq(nh_side_send(sd, 1, GPUS + 1, BYTES, 1), 0);
        ck_assert_int_eq(nh_side_send(sd, 2, GPUS + 2, BYTES, 2), 0);
        nh_side_go(sd);
    }
    ck_assert_uint_eq(side[0]->n, 4);
    ck_assert_uint_eq(side[0]->n, side[1]->n);
    for (size_t i = 0; i < side[1]->n; i++) {
        ck_assert_uint_eq(side[0]->tag[i], side[1]->tag[i]);
        ck_assert_int_eq(side[0]->at_ns[i], side[1]->at_ns[i]);
        ck_assert_int_eq(side[0]->dropped[i], side[1]->dropped[i]);
    }
    uint64_t events_on, events_off, bundled;
    finish_both(side[0], side[1], &events_on, &events_off, &bundled);
    ck_assert_uint_eq(bundled, 1); /* the third into the second, which the failure drops */
    free(side[0]);
    free(side[1]);
}
END_TEST

typedef struct stopper {
    sim_net *net;
    size_t stop_after, n;
    uint64_t tag[GPUS];
    sim_time at_ns[GPUS];
} stopper;

/* Delivers messages until `stop_after` of them, then stops the engine (and the deliveries). */
static int stop_dispatch(void *ud, sim_engine *eng, const sim_event *ev, sim_err *err)
{
    stopper *st = ud;
    sim_net_msg msg;
    int rc = sim_net_handle(st->net, ev, &msg, err);
    while (rc > 0) {
        st->tag[st->n] = msg.tag;
        st->at_ns[st->n++] = sim_engine_now(eng);
        if (st->n == st->stop_after) {
            sim_engine_stop(eng);
            return 0;
        }
        rc = sim_net_next(st->net, &msg, err);
    }
    return rc;
}

/* A caller that stops after 3 of the bundle's 7 messages leaves 4 in flight (and the solo sent
 * first); run on, they are delivered at the same ns, their DONE scheduled again when the next
 * network event came. */
START_TEST(a_caller_that_stops_midway_leaves_the_rest_in_flight)
{
    two_nodes t;
    two_nodes_init(&t);
    t.cfg.bundles = true;
    sim_err err;
    sim_engine *eng = sim_engine_create(64, &err);
    ck_assert_ptr_nonnull(eng);
    stopper st = { .net = sim_net_create(&t.cfg, eng, &err), .stop_after = 3 };
    ck_assert_ptr_nonnull(st.net);
    for (uint32_t g = 0; g < GPUS; g++) {
        sim_net_msg m = { .src = g, .dst = GPUS + g, .bytes = BYTES, .tag = g };
        m.payload = SIM_NET_NO_PAYLOAD;
        ck_assert_int_eq(sim_net_send(st.net, &m, &err), 0);
    }
    ck_assert_int_eq(sim_engine_run(eng, SIM_TIME_NEVER, stop_dispatch, &st, &err), 0);
    sim_net_stats s;
    sim_net_stats_get(st.net, &s);
    ck_assert_uint_eq(s.delivered, 3);
    ck_assert_uint_eq(s.in_flight, 5);
    ck_assert_uint_eq(s.active_flows, 5);
    st.stop_after = 0;
    ck_assert_int_eq(sim_engine_run(eng, SIM_TIME_NEVER, stop_dispatch, &st, &err), 0);
    /* The bundle's rest (4, 3, 2, then its carrier 1) is due again at the ns, after the solo
     * (0), whose DONE was pending there. */
    static const uint64_t order[GPUS] = { 7, 6, 5, 0, 4, 3, 2, 1 };
    sim_time want = 2 * LAT_NS + llround((double)BYTES * 8e9 / (NIC_BPS / GPUS));
    ck_assert_uint_eq(st.n, GPUS);
    for (size_t i = 0; i < GPUS; i++) {
        ck_assert_uint_eq(st.tag[i], order[i]);
        ck_assert_int_eq(st.at_ns[i], want);
    }
    sim_net_destroy(st.net);
    sim_engine_destroy(eng);
}
END_TEST

/* Messages of 1 byte on 97.3 Gbit/s links would end within their start ns when alone: the
 * first one's START would end it before the others start, so a bundle of them that starts
 * alone on its links starts as its messages one by one, each with a DONE of its own. Three
 * batches of 8 (no solo: a transfer under half a ns is none, so 7 of each join the first when
 * sent): A at 0 from the GPUs of node 0 to their peers; B at 1 ns from GPU 2 to GPU 11, which
 * starts at the ns A's last 7 end, after them in the engine's order but before their DONEs, so
 * not alone: one flow of 8, one DONE; C as A, 1 ms later, alone again. */
START_TEST(transfers_under_half_a_ns_start_one_by_one)
{
    two_nodes t;
    two_nodes_init(&t);
    nh_action acts[3 * GPUS];
    size_t n = eight_sends(acts, NULL, 0);
    for (size_t i = 0; i < GPUS; i++) {
        acts[i].bytes = 1;
        acts[GPUS + i] = (nh_action){ .at_ns = 1, .kind = NH_SEND, .a = 2, .b = 11, .bytes = 1 };
        acts[2 * GPUS + i] = acts[i];
        acts[2 * GPUS + i].at_ns = 1000000;
    }
    n = 3 * GPUS;
    nh_side *on = nh_zalloc(sizeof(*on)), *off = nh_zalloc(sizeof(*off));
    run_both(on, off, &t.cfg, acts, n, false);
    uint64_t events_on, events_off, bundled;
    finish_both(on, off, &events_on, &events_off, &bundled);
    ck_assert_uint_eq(bundled, 3 * (GPUS - 1));
    ck_assert_uint_eq(events_off, 3 * GPUS + 3 * GPUS + 3 * GPUS); /* actions, STARTs, DONEs */
    ck_assert_uint_eq(events_on, 3 * GPUS + 3 + (GPUS + 1 + GPUS));
    free(on);
    free(off);
}
END_TEST

/* Random flow sets with batches of identical sends (a third of the sends), half of them on
 * nodes of 1 to 4 hosts, a third of the capacity changes turned into extra latencies (the two
 * halves of a link window). */
static const nh_draw batch_draw = { .min_hosts = 4,
                                    .host_span = 29,
                                    .host_span_fat_tree = 13,
                                    .staggered = true,
                                    .offset_span = 3,
                                    .min_acts = 8,
                                    .acts_span = 150,
                                    .favour = 0.4,
                                    .favour_half = true,
                                    .tiny = 1,
                                    .batch = 0.35,
                                    .p_send = 0.9,
                                    .p_send_factor = 0.95 };

static void differential(sim_topology topo, bool changes, unsigned long seed, size_t sets)
{
    gsl_rng *r = nh_rng(seed);
    nh_node_set *ns = nh_zalloc(sizeof(*ns));
    nh_side *on = nh_zalloc(sizeof(*on)), *off = nh_zalloc(sizeof(*off));
    uint64_t messages = 0, bundled = 0, events_on = 0, events_off = 0;
    for (size_t k = 0; k < sets; k++) {
        nh_draw_flow_set(&ns->fs, r, topo, changes, &batch_draw);
        if (gsl_rng_uniform(r) < 0.5)
            nh_to_nodes(ns, r);
        for (size_t i = 0; i < ns->fs.nacts; i++) {
            nh_action *a = &ns->fs.acts[i];
            if (a->kind == NH_FACTOR && gsl_rng_uniform(r) < 0.35) {
                a->kind = NH_EXTRA;
                a->bytes = a->factor < 1.0 ? 1000 * (1 + nh_pick(r, 5)) : 0;
            }
        }
        run_both(on, off, &ns->fs.cfg, ns->fs.acts, ns->fs.nacts, true);
        uint64_t e_on, e_off, b;
        finish_both(on, off, &e_on, &e_off, &b);
        events_on += e_on;
        events_off += e_off;
        bundled += b;
        messages += on->n;
    }
    fprintf(stderr,
            "bundles: topo %d changes %d: %zu sets, %llu ends, %llu messages bundled, %llu "
            "events (%llu without bundles)\n",
            (int)topo, (int)changes, sets, (unsigned long long)messages,
            (unsigned long long)bundled, (unsigned long long)events_on,
            (unsigned long long)events_off);
    ck_assert_uint_gt(bundled, messages / 20); /* bundles were exercised */
    ck_assert_uint_lt(events_on, events_off);
    free(on);
    free(off);
    free(ns);
    gsl_rng_free(r);
}

START_TEST(bundles_end_as_the_start_and_done_path_on_star)
{
    differential(SIM_TOPO_STAR, false, 51, 1500);
}
END_TEST

START_TEST(bundles_end_as_the_start_and_done_path_on_racks_and_fat_trees)
{
    differential(SIM_TOPO_RACKS, false, 52, 800);
    differential(SIM_TOPO_FAT_TREE, false, 53, 800);
}
END_TEST

START_TEST(bundles_end_as_the_start_and_done_path_under_failures_and_link_windows)
{
    differential(SIM_TOPO_STAR, true, 54, 1200);
    differential(SIM_TOPO_RACKS, true, 55, 800);
    differential(SIM_TOPO_FAT_TREE, true, 56, 800);
}
END_TEST

Suite *test_suite(void)
{
    Suite *s = suite_create("net_bundle");
    TCase *known = tcase_create("known");
    tcase_add_test(known, eight_gpus_sending_to_the_next_node_cost_three_events);
    tcase_add_test(known, a_send_between_identical_ones_keeps_them_apart);
    tcase_add_test(known, an_event_between_identical_sends_keeps_them_apart);
    tcase_add_test(known, failures_drop_messages_of_a_bundle_and_the_rest_go_on);
    tcase_add_test(known, a_caller_that_stops_midway_leaves_the_rest_in_flight);
    tcase_add_test(known, transfers_under_half_a_ns_start_one_by_one);
    suite_add_tcase(s, known);
    TCase *diff = tcase_create("differential");
    tcase_add_test(diff, bundles_end_as_the_start_and_done_path_on_star);
    tcase_add_test(diff, bundles_end_as_the_start_and_done_path_on_racks_and_fat_trees);
    tcase_add_test(diff, bundles_end_as_the_start_and_done_path_under_failures_and_link_windows);
    tcase_set_timeout(diff, 120);
    suite_add_tcase(s, diff);
    return s;
}
