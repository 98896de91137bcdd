/* Network: differential test of the per-instant solver (sim/net_model.c) against a frozen copy of
 * the solver it replaced (tests/net_ref.c: one recomputation per start, end or capacity
 * change, flows re-rated one at a time).
 *
 * Thousands of random flow sets on star, racks and fat-tree (k = 4) topologies run through both,
 * driven by the same script of timed sends, capacity changes and failures, with replies sent on
 * delivery (so that the delivery order feeds back into the traffic). Times are drawn on a coarse
 * grid and sizes and bandwidths from short lists, so that many flows start, end and tie at the same
 * nanosecond: the case the per-instant batching changes. Every message must be delivered or
 * dropped at the same nanosecond by both. Two things may differ, and both are counted:
 * - the order in which messages that end at the same nanosecond are delivered (the engine
 *   breaks ties by scheduling order, and the reference reschedules flows at every change);
 * - after the reference re-rated a flow in a way no per-instant solver sees (its rate changed
 *   and changed back within an instant, or changed at the very instant it was due), ends may
 *   move by a rounding: each re-rating re-reads the remaining bytes, and a flow due at t that
 *   is re-rated at t with a fraction of a byte left can be pushed to t + 1 ns. The per-instant
 *   solver, which does not re-read, is the one that keeps the exact answer there. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>
#include <gsl/gsl_rng.h>

#include "net_ref.h"
#include "runtime/events.h"
#include "sim/engine.h"
#include "sim/net.h"
#include "suite.h"

enum {
    MAX_HOSTS = 16,
    MAX_LOG = 512,
    ACT_SEND = 0,
    ACT_FACTOR = 1,
    ACT_DOWN = 2,
    ACT_UP = 3
};

typedef struct action {
    sim_time at_ns;
    uint32_t kind; /* ACT_* */
    uint32_t a, b; /* send: src, dst; factor, down, up: host */
    uint64_t bytes;
    double factor;
} action;

typedef struct side {
    sim_engine *eng;
    sim_net *net; /* exactly one of net and ref */
    ref_net *ref;
    const action *acts;
    size_t n;
    uint64_t tag[MAX_LOG];
    sim_time at_ns[MAX_LOG];
    uint8_t dropped[MAX_LOG];
    bool reverted; /* reference: a message had its rate changed and changed back at one instant */
} side;

static void note(side *sd, uint64_t tag, bool dropped)
{
    ck_assert_uint_lt(sd->n, MAX_LOG);
    sd->tag[sd->n] = tag;
    sd->at_ns[sd->n] = sim_engine_now(sd->eng);
    sd->dropped[sd->n] = dropped;
    sd->n++;
}

static void on_drop(void *ud, const sim_net_msg *msg)
{
    note(ud, msg->tag, true);
}

static int side_send(side *sd, uint32_t src, uint32_t dst, uint64_t bytes, uint64_t tag)
{
    sim_net_msg m = { .src = src, .dst = dst, .bytes = bytes, .tag = tag };
    m.payload = SIM_NET_NO_PAYLOAD;
    sim_err err;
    return sd->net != NULL ? sim_net_send(sd->net, &m, &err) : ref_net_send(sd->ref, &m, &err);
}

static bool side_down(const side *sd, uint32_t h)
{
    return sd->net != NULL ? sim_net_host_down(sd->net, h) : ref_net_host_down(sd->ref, h);
}

static void run_action(side *sd, const action *a)
{
    sim_err err;
    switch (a->kind) {
    case ACT_SEND:
        if (!side_down(sd, a->a))
            ck_assert_int_eq(side_send(sd, a->a, a->b, a->bytes, 2 * (uint64_t)(a - sd->acts)), 0);
        break;
    case ACT_FACTOR:
        ck_assert_int_eq(sd->net != NULL
                             ? sim_net_set_bandwidth_factor(sd->net, a->a, a->factor, &err)
                             : ref_net_set_bandwidth_factor(sd->ref, a->a, a->factor, &err),
                         0);
        break;
    default:
        if (sd->net != NULL)
            sim_net_set_host_down(sd->net, a->a, a->kind == ACT_DOWN);
        else
            ref_net_set_host_down(sd->ref, a->a, a->kind == ACT_DOWN);
        break;
    }
}

static int dispatch(void *ud, sim_engine *eng, const sim_event *ev, sim_err *err)
{
    (void)eng;
    side *sd = ud;
    if (ev->kind == SIM_EV_USER) {
        run_action(sd, &sd->acts[ev->arg[0]]);
        return 0;
    }
    sim_net_msg msg;
    int rc = sd->net != NULL ? sim_net_handle(sd->net, ev, &msg, err)
                             : ref_net_handle(sd->ref, ev, &msg, err);
    if (rc <= 0)
        return rc;
    note(sd, msg.tag, false);
    if (sd->ref != NULL && ref_net_last_reverted(sd->ref))
        sd->reverted = true;
    /* Every third message is answered with one half its size (closed-loop traffic), tagged
     * from its question's tag so that tags do not depend on the order of ties. */
    if (msg.tag % 3 == 0 && msg.bytes > 1000 && !side_down(sd, msg.dst))
        return side_send(sd, msg.dst, msg.src, msg.bytes / 2, 2 * msg.tag + 1);
    return 0;
}

static void side_run(side *sd, const sim_net_config *cfg, const action *acts, size_t nacts,
                     bool reference)
{
    memset(sd, 0, sizeof(*sd));
    sim_err err;
    sd->eng = sim_engine_create(64, &err);
    ck_assert_ptr_nonnull(sd->eng);
    if (reference) {
        sd->ref = ref_net_create(cfg, sd->eng, &err);
        ck_assert_ptr_nonnull(sd->ref);
        ref_net_set_drop_fn(sd->ref, on_drop, sd);
    } else {
        sd->net = sim_net_create(cfg, sd->eng, &err);
        ck_assert_ptr_nonnull(sd->net);
        sim_net_set_drop_fn(sd->net, on_drop, sd);
    }
    sd->acts = acts;
    for (size_t i = 0; i < nacts; i++) {
        sim_event ev = { .kind = SIM_EV_USER, .src = SIM_NOBODY, .dst = SIM_NOBODY };
        ev.arg[0] = i;
        ck_assert_int_eq(sim_engine_schedule_at(sd->eng, acts[i].at_ns, &ev, NULL), 0);
    }
    int rc = sim_engine_run(sd->eng, SIM_TIME_NEVER, dispatch, sd, &err);
    ck_assert_msg(rc == 0, "run failed: %s", err.msg);
}

static void side_fini(side *sd, sim_net_stats *st)
{
    if (sd->net != NULL)
        sim_net_stats_get(sd->net, st);
    else
        ref_net_stats_get(sd->ref, st);
    sim_net_destroy(sd->net);
    ref_net_destroy(sd->ref);
    sim_engine_destroy(sd->eng);
}

/* One random flow set: a topology, link speeds and a script of actions. */
typedef struct flow_set {
    sim_net_config cfg;
    double bw[MAX_HOSTS];
    sim_time lat[MAX_HOSTS];
    action acts[96];
    size_t nacts;
} flow_set;

static size_t pick(gsl_rng *r, size_t n)
{
    return (size_t)gsl_rng_uniform_int(r, n);
}

static void draw_flow_set(flow_set *fs, gsl_rng *r, sim_topology topo, bool changes)
{
    static const double speeds[] = { 10e9, 10e9, 25e9, 7.3e9, 40e9 };
    static const sim_time lats[] = { 0, 500, 500, 1000, 2383 };
    static const uint64_t sizes[] = { 1000000, 1000000, 250000, 3141593, 65536, 0 };
    memset(fs, 0, sizeof(*fs));
    uint32_t n = 4 + (uint32_t)pick(r, MAX_HOSTS - 3);
    bool uniform = gsl_rng_uniform(r) < 0.5; /* equal links: ties everywhere */
    for (uint32_t h = 0; h < n; h++) {
        fs->bw[h] = uniform ? 10e9 : speeds[pick(r, 5)];
        fs->lat[h] = uniform ? 500 : lats[pick(r, 5)];
    }
    fs->cfg = (sim_net_config){ .topology = topo,
                                .nhosts = n,
                                .bandwidth_bps = fs->bw,
                                .latency_ns = fs->lat,
                                .rack_size = 2 + (uint32_t)pick(r, 3),
                                .uplink_bandwidth_bps = uniform ? 20e9 : speeds[pick(r, 5)],
                                .uplink_latency_ns = uniform ? 1000 : lats[pick(r, 5)],
                                .k = 4,
                                .oversubscription = gsl_rng_uniform(r) < 0.5 ? 1.0 : 2.0 };
    fs->nacts = 8 + pick(r, 80);
    uint32_t incast = (uint32_t)pick(r, n); /* a favourite destination */
    for (size_t i = 0; i < fs->nacts; i++) {
        action *a = &fs->acts[i];
        a->at_ns =
            (sim_time)pick(r, 12) * 400000 + (gsl_rng_uniform(r) < 0.2 ? (sim_time)pick(r, 3) : 0);
        a->a = (uint32_t)pick(r, n);
        a->b = gsl_rng_uniform(r) < 0.4 ? incast : (uint32_t)pick(r, n);
        a->bytes = sizes[pick(r, 6)];
        double u = gsl_rng_uniform(r);
        if (!changes || u < 0.85) {
            a->kind = ACT_SEND;
        } else if (u < 0.93) {
            a->kind = ACT_FACTOR;
            a->factor = gsl_rng_uniform(r) < 0.5 ? 1.0 : 0.5;
        } else {
            a->kind = gsl_rng_uniform(r) < 0.6 ? ACT_DOWN : ACT_UP;
        }
    }
}

/* Each message must end (delivered or dropped) at the same ns in both runs; messages that
 * end at the same ns may end in another order. */
static void compare_ends(const side *a, const side *b, size_t k, size_t *order_diffs,
                         size_t *reverted_diffs)
{
    bool reordered = false;
    for (size_t i = 0; i < a->n; i++) {
        if (a->tag[i] == b->tag[i] && a->at_ns[i] == b->at_ns[i] && a->dropped[i] == b->dropped[i])
            continue;
        reordered = true;
        size_t j = 0;
        while (j < b->n && b->tag[j] != a->tag[i])
            j++;
        if (j == b->n && i < b->n && llabs(a->at_ns[i] - b->at_ns[i]) == 1) {
            (*reverted_diffs)++; /* a 1 ns rounding (below) changed the closed-loop traffic */
            return;
        }
        ck_assert_msg(j < b->n, "set %zu: tag %llu ended only in the new solver", k,
                      (unsigned long long)a->tag[i]);
        if ((a->at_ns[i] != b->at_ns[j] || a->dropped[i] != b->dropped[j]) && b->reverted) {
            (*reverted_diffs)++;
            return;
        }
        /* Shared-bottleneck groups (sim/net_group.c) keep bytes left on a virtual clock, which
         * rounds otherwise than one subtraction per rate change: an end within about 1e-7 ns
         * of a half ns may move by 1 ns (counted; see test_net_group.c). */
        if (a->dropped[i] == b->dropped[j] && llabs(a->at_ns[i] - b->at_ns[j]) == 1) {
            (*reverted_diffs)++;
            return;
        }
        if (a->at_ns[i] != b->at_ns[j] || a->dropped[i] != b->dropped[j])
            ck_abort_msg("set %zu: tag %llu ended at %lld (dropped %d), reference at %lld "
                         "(dropped %d)",
                         k, (unsigned long long)a->tag[i], (long long)a->at_ns[i], a->dropped[i],
                         (long long)b->at_ns[j], b->dropped[j]);
    }
    *order_diffs += reordered;
}

/* Runs `sets` flow sets through both solvers and compares every delivery and drop. */
static void differential(sim_topology topo, bool changes, unsigned long seed, size_t sets)
{
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, seed);
    flow_set *fs = calloc(1, sizeof(*fs));
    side *a = calloc(1, sizeof(*a)), *b = calloc(1, sizeof(*b));
    ck_assert(fs != NULL && a != NULL && b != NULL);
    uint64_t recomputes_new = 0, recomputes_ref = 0, messages = 0;
    size_t order_diffs = 0, reverted_diffs = 0;
    for (size_t k = 0; k < sets; k++) {
        draw_flow_set(fs, r, topo, changes);
        side_run(a, &fs->cfg, fs->acts, fs->nacts, false);
        side_run(b, &fs->cfg, fs->acts, fs->nacts, true);
        size_t before = reverted_diffs;
        compare_ends(a, b, k, &order_diffs, &reverted_diffs);
        ck_assert_msg(a->n == b->n || reverted_diffs > before,
                      "set %zu: %zu messages ended, reference %zu", k, a->n, b->n);
        sim_net_stats sa, sb;
        side_fini(a, &sa);
        side_fini(b, &sb);
        ck_assert_uint_eq(sa.delivered, sb.delivered);
        ck_assert_uint_eq(sa.dropped, sb.dropped);
        ck_assert_uint_le(sa.recomputes, sb.recomputes);
        recomputes_new += sa.recomputes;
        recomputes_ref += sb.recomputes;
        messages += sa.sent;
    }
    /* Ties may end in another order; ends may differ only after a re-rating the per-instant
     * solver cannot see (see ref_net_last_reverted), and rarely. */
    fprintf(stderr,
            "topo %d changes %d: %zu sets with ties ordered otherwise, %zu off after a revert or "
            "by a 1 ns group rounding\n",
            (int)topo, (int)changes, order_diffs, reverted_diffs);
    /* The batching must have had something to batch. */
    ck_assert_uint_gt(messages, 20 * sets);
    ck_assert_uint_lt(recomputes_new, recomputes_ref);
    ck_assert_uint_le(reverted_diffs, sets / 100);
    free(a);
    free(b);
    free(fs);
    gsl_rng_free(r);
}

START_TEST(net_per_instant_solver_matches_the_reference_on_star)
{
    differential(SIM_TOPO_STAR, false, 11, 1500);
}
END_TEST

START_TEST(net_per_instant_solver_matches_the_reference_on_racks)
{
    differential(SIM_TOPO_RACKS, false, 12, 1500);
}
END_TEST

START_TEST(net_per_instant_solver_matches_the_reference_on_fat_tree)
{
    differential(SIM_TOPO_FAT_TREE, false, 15, 1500);
}
END_TEST

START_TEST(net_per_instant_solver_matches_the_reference_under_changes_and_failures)
{
    differential(SIM_TOPO_RACKS, true, 13, 1000);
    differential(SIM_TOPO_STAR, true, 14, 1000);
    differential(SIM_TOPO_FAT_TREE, true, 16, 1000);
}
END_TEST

/* 256 pushes reach one server at one instant and end together: O(1) recomputations when they
 * start and when they end (the reference: one per start and end), each flow rated once,
 * and every push delivered at latency + S / (B / 256), as the reference says. (1000 bytes:
 * small enough that the driver sends no replies.) */
START_TEST(net_synchronized_incast_costs_one_recomputation_per_instant)
{
    enum {
        N = 256
    };
    static double bw[N + 1];
    static sim_time lat[N + 1];
    for (size_t h = 0; h <= N; h++) {
        bw[h] = 10e9;
        lat[h] = 50000;
    }
    sim_net_config cfg = { .nhosts = N + 1, .bandwidth_bps = bw, .latency_ns = lat };
    static action acts[N];
    for (uint32_t w = 0; w < N; w++)
        acts[w] = (action){ .at_ns = 0, .kind = ACT_SEND, .a = w + 1, .b = 0, .bytes = 1000 };
    side *a = calloc(1, sizeof(*a)), *b = calloc(1, sizeof(*b));
    ck_assert(a != NULL && b != NULL);
    side_run(a, &cfg, acts, N, false);
    side_run(b, &cfg, acts, N, true);
    sim_time want = 100000 + llround(1000.0 * 8e9 / (10e9 / N));
    ck_assert_uint_eq(a->n, N);
    for (size_t i = 0; i < N; i++) {
        ck_assert_int_eq(a->at_ns[i], want);
        ck_assert_int_eq(b->at_ns[i], want);
    }
    sim_net_stats sa, sb;
    side_fini(a, &sa);
    side_fini(b, &sb);
    /* Per instant, the flush plus the first flow to start (alone on its links for a moment,
     * rated at once) or the last to end (leaving nobody behind). */
    ck_assert_uint_eq(sa.recomputes, 4);
    ck_assert_uint_eq(sa.rerates, N + 1);
    ck_assert_uint_eq(sb.recomputes, 2 * N);
    free(a);
    free(b);
}
END_TEST

Suite *test_suite(void)
{
    Suite *s = suite_create("net_diff");
    TCase *tc = tcase_create("differential");
    tcase_add_test(tc, net_per_instant_solver_matches_the_reference_on_star);
    tcase_add_test(tc, net_per_instant_solver_matches_the_reference_on_racks);
    tcase_add_test(tc, net_per_instant_solver_matches_the_reference_on_fat_tree);
    tcase_add_test(tc, net_per_instant_solver_matches_the_reference_under_changes_and_failures);
    tcase_add_test(tc, net_synchronized_incast_costs_one_recomputation_per_instant);
    tcase_set_timeout(tc, 120);
    suite_add_tcase(s, tc);
    return s;
}
