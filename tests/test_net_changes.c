/* Network: re-rating, failures and invariants under random flows.
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
    nett_at_time(h, at, 0, host, bits);
}

START_TEST(net_bandwidth_factor_rerates_flows_in_progress_at_that_instant)
{
    const double b0 = 6.4e9, b1 = 9.1e9;
    const double bw[] = { b0, b1 };
    const sim_time lat[] = { 2111, 3023 };
    sim_net_config cfg = { .nhosts = 2, .bandwidth_bps = bw, .latency_ns = lat };
    harness h;
    nett_harness_init(&h, &cfg);
    h.on_user = apply_factor;
    const uint64_t bytes = 7340033;
    nett_send(&h, 0, 1, bytes, 1);
    sim_time t0 = 2111 + 3023, ta = 400009, tb = 650021;
    factor_at(&h, ta, 1, 0.37); /* down(1) drops to 3.367e9, below up(0) */
    factor_at(&h, tb, 1, 1.0);  /* restored: back to 6.4e9 */
    double rem = (double)bytes - b0 * (double)(ta - t0) / 8e9;
    rem -= b1 * 0.37 * (double)(tb - ta) / 8e9;
    sim_time want = tb + nett_xfer_ns(rem, b0);
    nett_harness_run(&h);
    ck_assert_int_eq(nett_delivered(&h, 1)->at_ns, want);
    ck_assert_uint_eq(nett_stats_of(&h).rerates, 3);
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
    nett_harness_fini(&h);
}
END_TEST

static void take_host_down(harness *h, const sim_event *ev)
{
    (void)ev;
    sim_net_set_host_down(h->net, 2, true);
    ck_assert(sim_net_host_down(h->net, 2));
    ck_assert_uint_eq(nett_count_flows(h), 1); /* only 0 -> 1 is left */
    ck_assert_double_eq(nett_rate_of(h, 0, 1), 5.3e9);
    sim_net_msg m = { .src = 2, .dst = 0, .bytes = 10 };
    sim_err err;
    ck_assert_int_eq(sim_net_send(h->net, &m, &err), SIM_EINVAL);
    ck_assert_ptr_nonnull(strstr(err.msg, "down"));
    nett_send(h, 0, 2, 4096, 7); /* accepted, dropped when it reaches host 2 */
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
    nett_harness_init(&h, &cfg);
    const uint64_t sa = 2000003, sc = 3100007;
    nett_send(&h, 0, 2, sa, 1); /* A: a flow into host 2 when it fails */
    nett_send(&h, 0, 1, sc, 2); /* C: shares up(0) with A, then runs alone */
    sim_net_set_extra_latency(h.net, 3, 10000000);
    nett_send(&h, 2, 3, 5000, 3); /* D: from host 2, still in its latency phase */
    sim_net_set_extra_latency(h.net, 3, 0);
    const sim_time ta = 1200 + 2100, tc = 1200 + 3400, tdown = 1000003;
    h.on_user = take_host_down;
    nett_at_time(&h, tdown, 0, 0, 0);
    drops d = { 0 };
    sim_net_set_drop_fn(h.net, count_drop, &d);
    double rem = (double)sc - b / 2 * (double)(tdown - tc) / 8e9;
    sim_time want = tdown + nett_xfer_ns(rem, b);
    nett_harness_run(&h);
    (void)ta;
    ck_assert_uint_eq(h.n, 1);
    ck_assert_int_eq(nett_delivered(&h, 2)->at_ns, want);
    sim_net_stats st = nett_stats_of(&h);
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
    nett_send(&h, 2, 3, 65537, 8);
    ck_assert_uint_eq(sim_net_host_inflight(h.net, 2), 1);
    ck_assert_uint_eq(sim_net_host_inflight(h.net, 3), 1);
    ck_assert_uint_eq(sim_net_host_inflight(h.net, 0), 0);
    nett_harness_run(&h);
    ck_assert_uint_eq(sim_net_host_inflight(h.net, 3), 0);
    ck_assert_int_eq(nett_delivered(&h, 8)->at_ns, t + 2100 + 800 + nett_xfer_ns(65537, b));
    uint64_t sent, received;
    sim_net_host_bytes(h.net, 2, &sent, &received);
    ck_assert_uint_eq(sent, 5000 + 65537); /* D counted when sent, though dropped */
    ck_assert_uint_eq(received, 0);
    sim_net_host_bytes(h.net, 3, &sent, &received);
    ck_assert_uint_eq(received, 65537);
    nett_harness_fini(&h);
}
END_TEST

START_TEST(net_counts_bytes_per_host)
{
    const double bw[] = { 3e9, 4e9, 5e9 };
    const sim_time lat[] = { 10, 20, 30 };
    sim_net_config cfg = { .nhosts = 3, .bandwidth_bps = bw, .latency_ns = lat };
    harness h;
    nett_harness_init(&h, &cfg);
    nett_send(&h, 0, 1, 1111, 1);
    nett_send(&h, 0, 2, 22222, 2);
    nett_send(&h, 2, 1, 333333, 3);
    nett_send(&h, 1, 1, 44, 4);
    uint64_t sent, received;
    sim_net_host_bytes(h.net, 1, &sent, &received);
    ck_assert_uint_eq(sent, 44);
    ck_assert_uint_eq(received, 0); /* nothing delivered yet */
    nett_harness_run(&h);
    const uint64_t want_sent[] = { 1111 + 22222, 44, 333333 };
    const uint64_t want_received[] = { 0, 1111 + 333333 + 44, 22222 };
    for (uint32_t i = 0; i < 3; i++) {
        sim_net_host_bytes(h.net, i, &sent, &received);
        ck_assert_uint_eq(sent, want_sent[i]);
        ck_assert_uint_eq(received, want_received[i]);
    }
    nett_harness_fini(&h);
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
        nett_at_time(h, sim_engine_now(h->eng) + gap, 0, 0, 0);
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
    nett_harness_init(&h, &cfg);
    h.ud = s;
    h.on_user = stress_tick;
    h.after = stress_check;
    nett_at_time(&h, 0, 0, 0, 0);
    nett_harness_run(&h);

    sim_net_stats st = nett_stats_of(&h);
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
    nett_harness_fini(&h);
    gsl_rng_free(s->r);
    free(s);
}
END_TEST

Suite *test_suite(void)
{
    Suite *s = suite_create("net_changes");
    TCase *changes = tcase_create("changes");
    tcase_add_test(changes, net_bandwidth_factor_rerates_flows_in_progress_at_that_instant);
    tcase_add_test(changes, net_host_down_aborts_its_flows_and_drops_its_messages);
    tcase_add_test(changes, net_counts_bytes_per_host);
    suite_add_tcase(s, changes);
    TCase *stress_case = tcase_create("invariants");
    tcase_add_test(stress_case, net_keeps_its_invariants_under_random_traffic);
    tcase_set_timeout(stress_case, 120);
    suite_add_tcase(s, stress_case);
    return s;
}
