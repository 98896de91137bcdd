/* Network: differential test of shared-bottleneck groups (sim/net_group.c: a virtual clock per
 * bottleneck link and a heap of finishing points) against a frozen copy of the per-instant
 * solver they replaced (tests/net_pi_ref.c: every flow of a changed component re-rated one at
 * a time, its bytes left brought up to date at each change).
 *
 * Thousands of random flow sets on star, racks and fat-tree (k = 4) topologies run through
 * both, driven by the same script of timed sends (many to one favourite destination, so that
 * groups form, grow and shrink), capacity changes and failures (which dissolve groups), with
 * replies sent on delivery. Half the sets use a coarse time grid (ties everywhere), half
 * staggered times (every start and end at its own instant: the case groups make cheaper).
 * Every message must end (delivered or dropped) at the same ns in both. Two things may
 * differ, and both are counted and bounded:
 * - the order in which messages that end at the same ns are delivered (a group arms a member's
 *   end when it comes first, not when the rate last changed, so events of other flows at that
 *   very ns may come before it);
 * - a 1 ns rounding: the reference keeps each flow's bytes left as its size minus one
 *   subtraction per rate change, a group as the flow's finishing point minus the clock (one
 *   addition per change); both round to the nearest ns once, so they differ only when the
 *   exact end lies within about 1e-7 ns of a half ns, and then by 1 ns. After such a
 *   difference the closed-loop traffic diverges, so the rest of that set is not compared. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>
#include <gsl/gsl_rng.h>

#include "net_pi_ref.h"
#include "runtime/events.h"
#include "sim/engine.h"
#include "sim/net.h"
#include "suite.h"

enum {
    MAX_HOSTS = 40,
    MAX_ACTS = 160,
    MAX_LOG = 1024,
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
    pi_net *ref;
    const action *acts;
    size_t n;
    uint64_t tag[MAX_LOG];
    sim_time at_ns[MAX_LOG];
    uint8_t dropped[MAX_LOG];
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
    return sd->net != NULL ? sim_net_send(sd->net, &m, &err) : pi_net_send(sd->ref, &m, &err);
}

static bool side_down(const side *sd, uint32_t h)
{
    return sd->net != NULL ? sim_net_host_down(sd->net, h) : pi_net_host_down(sd->ref, h);
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
                             : pi_net_set_bandwidth_factor(sd->ref, a->a, a->factor, &err),
                         0);
        break;
    default:
        if (sd->net != NULL)
            sim_net_set_host_down(sd->net, a->a, a->kind == ACT_DOWN);
        else
            pi_net_set_host_down(sd->ref, a->a, a->kind == ACT_DOWN);
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
                             : pi_net_handle(sd->ref, ev, &msg, err);
    if (rc <= 0)
        return rc;
    note(sd, msg.tag, false);
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
        sd->ref = pi_net_create(cfg, sd->eng, &err);
        ck_assert_ptr_nonnull(sd->ref);
        pi_net_set_drop_fn(sd->ref, on_drop, sd);
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
        pi_net_stats_get(sd->ref, st);
    sim_net_destroy(sd->net);
    pi_net_destroy(sd->ref);
    sim_engine_destroy(sd->eng);
}

typedef struct flow_set {
    sim_net_config cfg;
    double bw[MAX_HOSTS];
    sim_time lat[MAX_HOSTS];
    action acts[MAX_ACTS];
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
    uint32_t n = 4 + (uint32_t)pick(r, topo == SIM_TOPO_FAT_TREE ? 13 : MAX_HOSTS - 3);
    bool uniform = gsl_rng_uniform(r) < 0.5; /* equal links: ties everywhere */
    bool grid = gsl_rng_uniform(r) < 0.5;    /* else staggered starts */
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
    fs->nacts = 8 + pick(r, MAX_ACTS - 8);
    uint32_t incast = (uint32_t)pick(r, n); /* a favourite destination */
    for (size_t i = 0; i < fs->nacts; i++) {
        action *a = &fs->acts[i];
        a->at_ns = grid ? (sim_time)pick(r, 12) * 400000 + (gsl_rng_uniform(r) < 0.2 ? 1 : 0)
                        : (sim_time)pick(r, 5000000);
        a->a = (uint32_t)pick(r, n);
        a->b = gsl_rng_uniform(r) < 0.6 ? incast : (uint32_t)pick(r, n);
        a->bytes = sizes[pick(r, 6)];
        double u = gsl_rng_uniform(r);
        if (!changes || u < 0.92) {
            a->kind = ACT_SEND;
        } else if (u < 0.96) {
            a->kind = ACT_FACTOR;
            a->factor = gsl_rng_uniform(r) < 0.5 ? 1.0 : 0.5;
        } else {
            a->kind = gsl_rng_uniform(r) < 0.6 ? ACT_DOWN : ACT_UP;
        }
    }
}

typedef struct tally {
    size_t order_diffs;    /* sets whose ties ended in another order */
    size_t rounding_diffs; /* sets with a 1 ns rounding difference */
} tally;

/* Each message must end (delivered or dropped) at the same ns in both runs; messages that
 * end at the same ns may end in another order; a 1 ns difference is counted and ends the
 * comparison of the set. */
static void compare_ends(const side *a, const side *b, size_t k, tally *t)
{
    bool reordered = false;
    for (size_t i = 0; i < a->n; i++) {
        if (a->tag[i] == b->tag[i] && a->at_ns[i] == b->at_ns[i] && a->dropped[i] == b->dropped[i])
            continue;
        size_t j = 0;
        while (j < b->n && b->tag[j] != a->tag[i])
            j++;
        if (j == b->n || a->at_ns[i] != b->at_ns[j] || a->dropped[i] != b->dropped[j]) {
            /* The first difference in time must be a rounding: 1 ns either way. */
            sim_time ref = i < b->n ? b->at_ns[i] : -1;
            ck_assert_msg(llabs(a->at_ns[i] - ref) <= 1 ||
                              (j < b->n && llabs(a->at_ns[i] - b->at_ns[j]) <= 1),
                          "set %zu: tag %llu ended at %lld, reference at %lld", k,
                          (unsigned long long)a->tag[i], (long long)a->at_ns[i],
                          (long long)(j < b->n ? b->at_ns[j] : -1));
            t->rounding_diffs++;
            return;
        }
        reordered = true;
    }
    t->order_diffs += reordered;
}

/* Runs `sets` flow sets through both solvers and compares every delivery and drop. */
static void differential(sim_topology topo, bool changes, unsigned long seed, size_t sets)
{
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, seed);
    flow_set *fs = calloc(1, sizeof(*fs));
    side *a = calloc(1, sizeof(*a)), *b = calloc(1, sizeof(*b));
    ck_assert(fs != NULL && a != NULL && b != NULL);
    uint64_t messages = 0, grouped = 0, rerates_new = 0, rerates_ref = 0;
    tally t = { 0, 0 };
    for (size_t k = 0; k < sets; k++) {
        draw_flow_set(fs, r, topo, changes);
        side_run(a, &fs->cfg, fs->acts, fs->nacts, false);
        side_run(b, &fs->cfg, fs->acts, fs->nacts, true);
        size_t before = t.rounding_diffs;
        compare_ends(a, b, k, &t);
        sim_net_stats sa, sb;
        side_fini(a, &sa);
        side_fini(b, &sb);
        if (t.rounding_diffs == before) {
            ck_assert_uint_eq(a->n, b->n);
            ck_assert_uint_eq(sa.delivered, sb.delivered);
            ck_assert_uint_eq(sa.dropped, sb.dropped);
            ck_assert_uint_eq(sa.peak_flows, sb.peak_flows);
            rerates_new += sa.rerates;
            rerates_ref += sb.rerates;
        }
        messages += sa.sent;
        grouped += sa.grouped;
    }
    fprintf(stderr,
            "groups: topo %d changes %d: %zu sets, %llu messages, %llu rated in groups; %zu sets "
            "with ties ordered otherwise, %zu with a 1 ns rounding difference\n",
            (int)topo, (int)changes, sets, (unsigned long long)messages,
            (unsigned long long)grouped, t.order_diffs, t.rounding_diffs);
    /* Groups must have been exercised, and count rates as the reference does. */
    ck_assert_uint_gt(grouped, messages / (topo == SIM_TOPO_STAR ? 8 : 50));
    /* Rate assignments are counted as the reference counts them, but for a rare member that
     * joined and was dissolved within one instant before being rated (seen: 1 in 2.4e6). */
    ck_assert_uint_le(rerates_new, rerates_ref);
    ck_assert_uint_le(rerates_ref - rerates_new, rerates_ref / 100000);
    /* Rounding differences are rare: about 1 set in 100 on the star (where the nice sizes and
     * speeds put many exact ends at a half ns), none seen elsewhere. */
    ck_assert_uint_le(t.rounding_diffs, sets / 50);
    free(a);
    free(b);
    free(fs);
    gsl_rng_free(r);
}

START_TEST(net_groups_match_the_per_instant_solver_on_star)
{
    differential(SIM_TOPO_STAR, false, 21, 1500);
}
END_TEST

START_TEST(net_groups_match_the_per_instant_solver_on_racks)
{
    differential(SIM_TOPO_RACKS, false, 22, 1500);
}
END_TEST

START_TEST(net_groups_match_the_per_instant_solver_on_fat_tree)
{
    differential(SIM_TOPO_FAT_TREE, false, 25, 1500);
}
END_TEST

START_TEST(net_groups_match_the_per_instant_solver_under_changes_and_failures)
{
    differential(SIM_TOPO_RACKS, true, 23, 1000);
    differential(SIM_TOPO_STAR, true, 24, 1000);
    differential(SIM_TOPO_FAT_TREE, true, 26, 1000);
}
END_TEST

/* A staggered incast: 512 pushes of distinct sizes reach one server at distinct instants, so
 * every start and end changes the share. All of them join one group, and every push ends at
 * the ns the per-flow solver gives it. */
START_TEST(net_staggered_incast_is_one_group_with_per_flow_ends)
{
    enum {
        N = 512
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
        acts[w] = (action){ .at_ns = 7919 * (sim_time)w,
                            .kind = ACT_SEND,
                            .a = w + 1,
                            .b = 0,
                            .bytes = 999983 + 13 * (uint64_t)w };
    side *a = calloc(1, sizeof(*a)), *b = calloc(1, sizeof(*b));
    ck_assert(a != NULL && b != NULL);
    side_run(a, &cfg, acts, N, false);
    side_run(b, &cfg, acts, N, true);
    ck_assert_uint_ge(a->n, N); /* and the replies */
    ck_assert_uint_eq(a->n, b->n);
    size_t off = 0;
    for (size_t i = 0; i < a->n; i++) {
        ck_assert_uint_eq(a->tag[i], b->tag[i]);
        ck_assert_int_le(llabs(a->at_ns[i] - b->at_ns[i]), 1);
        off += a->at_ns[i] != b->at_ns[i];
    }
    fprintf(stderr, "staggered incast: %zu of %zu ends off by 1 ns\n", off, a->n);
    ck_assert_uint_le(off, a->n / 100);
    sim_net_stats sa, sb;
    side_fini(a, &sa);
    side_fini(b, &sb);
    ck_assert_uint_ge(sa.grouped, N); /* every push (and some replies), once the second came */
    ck_assert_uint_eq(sa.rerates, sb.rerates);
    ck_assert_uint_eq(sa.peak_flows, sb.peak_flows);
    free(a);
    free(b);
}
END_TEST

Suite *test_suite(void)
{
    Suite *s = suite_create("net_group");
    TCase *tc = tcase_create("differential");
    tcase_add_test(tc, net_groups_match_the_per_instant_solver_on_star);
    tcase_add_test(tc, net_groups_match_the_per_instant_solver_on_racks);
    tcase_add_test(tc, net_groups_match_the_per_instant_solver_on_fat_tree);
    tcase_add_test(tc, net_groups_match_the_per_instant_solver_under_changes_and_failures);
    tcase_add_test(tc, net_staggered_incast_is_one_group_with_per_flow_ends);
    tcase_set_timeout(tc, 120);
    suite_add_tcase(s, tc);
    return s;
}
