/* The random-flow harness of the network's differential tests (see net_harness.h). */
#include "net_harness.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "net/net_solo.h"
#include "runtime/events.h"

static void note(nh_side *sd, uint64_t tag, bool dropped)
{
    ck_assert_uint_lt(sd->n, NH_MAX_LOG);
    sd->tag[sd->n] = tag;
    sd->at_ns[sd->n] = sim_engine_now(sd->eng);
    sd->dropped[sd->n] = dropped;
    sd->n++;
}

static void on_drop(void *ud, const sim_net_msg *msg)
{
    note(ud, msg->tag, true);
}

static int side_send(nh_side *sd, uint32_t src, uint32_t dst, uint64_t bytes, uint64_t tag)
{
    sim_net_msg m = { .src = src, .dst = dst, .bytes = bytes, .tag = tag };
    m.payload = SIM_NET_NO_PAYLOAD;
    sim_err err;
    return sd->net != NULL ? sim_net_send(sd->net, &m, &err) : ref_net_send(sd->ref, &m, &err);
}

static bool side_down(const nh_side *sd, uint32_t h)
{
    return sd->net != NULL ? sim_net_host_down(sd->net, h) : ref_net_host_down(sd->ref, h);
}

static int side_factor(nh_side *sd, uint32_t h, double factor)
{
    sim_err err;
    if (sd->net != NULL)
        return sim_net_set_bandwidth_factor(sd->net, h, factor, &err);
    return ref_net_set_bandwidth_factor(sd->ref, h, factor, &err);
}

static void side_set_down(nh_side *sd, uint32_t h, bool down)
{
    if (sd->net != NULL)
        sim_net_set_host_down(sd->net, h, down);
    else
        ref_net_set_host_down(sd->ref, h, down);
}

/* Records the active flows of the model now: counted (stats) and listed. */
static void probe(nh_side *sd)
{
    ck_assert_ptr_nonnull(sd->net);
    ck_assert_uint_lt(sd->nprobes, NH_MAX_PROBES);
    size_t i = sd->nprobes++;
    sim_net_stats st;
    sim_net_stats_get(sd->net, &st);
    sd->active[i] = st.active_flows;
    while (sim_net_flow_at(sd->net, sd->listed[i], NULL, NULL,
                           &sd->rates[i][sd->listed[i] < 2 ? sd->listed[i] : 1]))
        sd->listed[i]++;
}

static void run_action(nh_side *sd, const nh_action *a)
{
    switch (a->kind) {
    case NH_SEND:
        if (!side_down(sd, a->a))
            ck_assert_int_eq(side_send(sd, a->a, a->b, a->bytes, 2 * (uint64_t)(a - sd->acts)), 0);
        break;
    case NH_FACTOR:
        ck_assert_int_eq(side_factor(sd, a->a, a->factor), 0);
        break;
    case NH_EXTRA:
        ck_assert_ptr_nonnull(sd->net);
        sim_net_set_extra_latency(sd->net, a->a, (sim_time)a->bytes);
        break;
    case NH_PROBE:
        probe(sd);
        break;
    default:
        side_set_down(sd, a->a, a->kind == NH_DOWN);
        break;
    }
    sim_engine_stats_get(sd->eng, &sd->after_action);
}

/* A delivery: noted, and answered every third message. */
static int delivered(nh_side *sd, const sim_net_msg *msg)
{
    note(sd, msg->tag, false);
    if (sd->ref != NULL && ref_net_last_reverted(sd->ref))
        sd->reverted = true;
    if (sd->replies && msg->tag % 3 == 0 && msg->bytes > 1000 && !side_down(sd, msg->dst))
        return side_send(sd, msg->dst, msg->src, msg->bytes / 2, 2 * msg->tag + 1);
    return 0;
}

static int dispatch(void *ud, sim_engine *eng, const sim_event *ev, sim_err *err)
{
    (void)eng;
    nh_side *sd = ud;
    if (ev->kind == SIM_EV_USER) {
        run_action(sd, &sd->acts[ev->arg[0]]);
        return 0;
    }
    sim_net_msg msg;
    int rc = sd->net != NULL ? sim_net_handle(sd->net, ev, &msg, err)
                             : ref_net_handle(sd->ref, ev, &msg, err);
    while (rc > 0) { /* a bundle's DONE delivers its messages one by one */
        rc = delivered(sd, &msg);
        if (rc == 0 && sd->net != NULL)
            rc = sim_net_next(sd->net, &msg, err);
    }
    return rc;
}

void nh_side_open(nh_side *sd, const sim_net_config *cfg, nh_impl impl, bool replies)
{
    memset(sd, 0, sizeof(*sd));
    sim_err err;
    sd->eng = sim_engine_create(64, &err);
    ck_assert_ptr_nonnull(sd->eng);
    if (impl == NH_REF || impl == NH_PI) {
        sd->ref =
            ref_net_create(cfg, sd->eng, impl == NH_REF ? REF_EACH_CHANGE : REF_PER_INSTANT, &err);
        ck_assert_ptr_nonnull(sd->ref);
        ref_net_set_drop_fn(sd->ref, on_drop, sd);
    } else {
        sim_net_config c = *cfg;
        c.bundles = impl == NH_MODEL;
        sd->net = sim_net_create(&c, sd->eng, &err);
        ck_assert_ptr_nonnull(sd->net);
        sim_net_solo_enable(sd->net, impl != NH_NO_SOLOS);
        sim_net_set_drop_fn(sd->net, on_drop, sd);
    }
    sd->replies = replies;
}

int nh_side_send(nh_side *sd, uint32_t src, uint32_t dst, uint64_t bytes, uint64_t tag)
{
    return side_send(sd, src, dst, bytes, tag);
}

void nh_side_schedule(nh_side *sd, const nh_action *acts, size_t from, size_t to)
{
    sd->acts = acts;
    for (size_t i = from; i < to; i++) {
        sim_event ev = { .kind = SIM_EV_USER, .src = SIM_NOBODY, .dst = SIM_NOBODY };
        ev.arg[0] = i;
        ck_assert_int_eq(sim_engine_schedule_at(sd->eng, acts[i].at_ns, &ev, NULL), 0);
    }
}

void nh_side_go(nh_side *sd)
{
    sim_err err;
    int rc = sim_engine_run(sd->eng, SIM_TIME_NEVER, dispatch, sd, &err);
    ck_assert_msg(rc == 0, "run failed: %s", err.msg);
}

void nh_side_run(nh_side *sd, const sim_net_config *cfg, const nh_action *acts, size_t nacts,
                 nh_impl impl, bool replies)
{
    nh_side_open(sd, cfg, impl, replies);
    nh_side_schedule(sd, acts, 0, nacts);
    nh_side_go(sd);
}

sim_time nh_end_of(const nh_side *sd, uint64_t tag, bool *dropped)
{
    size_t found = SIZE_MAX;
    for (size_t i = 0; i < sd->n; i++) {
        if (sd->tag[i] == tag) {
            ck_assert_msg(found == SIZE_MAX, "tag %llu ended twice", (unsigned long long)tag);
            found = i;
        }
    }
    ck_assert_msg(found != SIZE_MAX, "tag %llu never ended", (unsigned long long)tag);
    if (dropped != NULL)
        *dropped = sd->dropped[found];
    return sd->at_ns[found];
}

bool nh_expect_same_ends(const nh_side *on, const nh_side *off, size_t k, const char *off_name)
{
    ck_assert_msg(on->n == off->n, "set %zu: %zu ends, %zu %s", k, on->n, off->n, off_name);
    bool same_order = true;
    for (size_t i = 0; i < off->n; i++) {
        bool dropped;
        sim_time at = nh_end_of(on, off->tag[i], &dropped);
        ck_assert_msg(at == off->at_ns[i] && dropped == off->dropped[i],
                      "set %zu: tag %llu ended at %lld (dropped %d), %s at %lld (dropped %d)", k,
                      (unsigned long long)off->tag[i], (long long)at, dropped, off_name,
                      (long long)off->at_ns[i], off->dropped[i]);
        same_order = same_order && on->tag[i] == off->tag[i];
    }
    return same_order;
}

void nh_side_fini(nh_side *sd, sim_net_stats *st, sim_engine_stats *es)
{
    if (sd->net != NULL)
        sim_net_stats_get(sd->net, st);
    else
        ref_net_stats_get(sd->ref, st);
    if (es != NULL)
        sim_engine_stats_get(sd->eng, es);
    sim_net_destroy(sd->net);
    ref_net_destroy(sd->ref);
    sim_engine_destroy(sd->eng);
}

const nh_draw nh_solo_draw = { .min_hosts = 2,
                               .host_span = 39,
                               .host_span_fat_tree = 15,
                               .staggered = true,
                               .offset_span = 0,
                               .min_acts = 4,
                               .acts_span = 156,
                               .favour = 0.4,
                               .favour_half = true,
                               .p_send = 0.92,
                               .p_send_factor = 0.96 };

size_t nh_pick(gsl_rng *r, size_t n)
{
    return (size_t)gsl_rng_uniform_int(r, n);
}

gsl_rng *nh_rng(unsigned long seed)
{
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    ck_assert_ptr_nonnull(r);
    gsl_rng_set(r, seed);
    return r;
}

void *nh_zalloc(size_t size)
{
    void *p = calloc(1, size);
    ck_assert_ptr_nonnull(p);
    return p;
}

void nh_finish_pair(nh_side *on, nh_side *off, sim_net_stats *a, sim_net_stats *b,
                    sim_engine_stats *ea, sim_engine_stats *eb)
{
    nh_side_fini(on, a, ea);
    nh_side_fini(off, b, eb);
    ck_assert_uint_eq(a->sent, b->sent);
    ck_assert_uint_eq(a->delivered, b->delivered);
    ck_assert_uint_eq(a->dropped, b->dropped);
}

void nh_incast(const nh_action *acts, size_t n, nh_impl ref, nh_side **a, nh_side **b)
{
    double *bw = nh_zalloc((n + 1) * sizeof(*bw));
    sim_time *lat = nh_zalloc((n + 1) * sizeof(*lat));
    for (size_t h = 0; h <= n; h++) {
        bw[h] = 10e9;
        lat[h] = 50000;
    }
    sim_net_config cfg = { .nhosts = (uint32_t)n + 1, .bandwidth_bps = bw, .latency_ns = lat };
    *a = nh_zalloc(sizeof(**a));
    *b = nh_zalloc(sizeof(**b));
    nh_side_run(*a, &cfg, acts, n, NH_MODEL, true);
    nh_side_run(*b, &cfg, acts, n, ref, true);
    free(bw);
    free(lat);
}

/* The start of an action: on the grid (400 us steps, 1 in 5 moved a little) or anywhere in
 * 5 ms. The draws come in this order: step, whether moved, the offset. */
static sim_time draw_start(gsl_rng *r, bool grid, const nh_draw *d)
{
    if (!grid)
        return (sim_time)nh_pick(r, 5000000);
    sim_time t = (sim_time)nh_pick(r, 12) * 400000;
    if (gsl_rng_uniform(r) < 0.2)
        t += d->offset_span > 0 ? (sim_time)nh_pick(r, d->offset_span) : 1;
    return t;
}

/* Actions i, i + 1, ... (up to 7 of them, within fs->nacts) become copies of the send i - 1:
 * its ns and size, from its hosts or (half the batches) from the hosts after them to the hosts
 * after its destination. Returns the index after the batch. */
static size_t draw_batch(nh_flow_set *fs, gsl_rng *r, size_t i, uint32_t n)
{
    const nh_action *first = &fs->acts[i - 1];
    size_t k = 1 + nh_pick(r, 7);
    bool spread = gsl_rng_uniform(r) < 0.5;
    for (size_t j = 0; j < k && i < fs->nacts; j++, i++) {
        nh_action *a = &fs->acts[i];
        *a = *first;
        if (spread) {
            a->a = (uint32_t)((first->a + j + 1) % n);
            a->b = (uint32_t)((first->b + j + 1) % n);
        }
    }
    return i;
}

void nh_draw_flow_set(nh_flow_set *fs, gsl_rng *r, sim_topology topo, bool changes,
                      const nh_draw *d)
{
    static const double speeds[] = { 10e9, 10e9, 25e9, 7.3e9, 40e9 };
    static const sim_time lats[] = { 0, 500, 500, 1000, 2383 };
    const uint64_t sizes[] = { 1000000, 1000000, 250000, 3141593, 65536, 0, d->tiny };
    size_t nsizes = d->tiny != 0 ? 7 : 6;
    memset(fs, 0, sizeof(*fs));
    uint32_t span = topo == SIM_TOPO_FAT_TREE ? d->host_span_fat_tree : d->host_span;
    uint32_t n = d->min_hosts + (uint32_t)nh_pick(r, span);
    ck_assert_uint_le(n, NH_MAX_HOSTS);
    bool uniform = gsl_rng_uniform(r) < 0.5; /* equal links: ties everywhere */
    bool grid = !d->staggered || gsl_rng_uniform(r) < 0.5;
    for (uint32_t h = 0; h < n; h++) {
        fs->bw[h] = uniform ? 10e9 : speeds[nh_pick(r, 5)];
        fs->lat[h] = uniform ? 500 : lats[nh_pick(r, 5)];
    }
    fs->cfg = (sim_net_config){ .topology = topo,
                                .nhosts = n,
                                .bandwidth_bps = fs->bw,
                                .latency_ns = fs->lat,
                                .rack_size = 2 + (uint32_t)nh_pick(r, 3),
                                .uplink_bandwidth_bps = uniform ? 20e9 : speeds[nh_pick(r, 5)],
                                .uplink_latency_ns = uniform ? 1000 : lats[nh_pick(r, 5)],
                                .k = 4,
                                .oversubscription = gsl_rng_uniform(r) < 0.5 ? 1.0 : 2.0 };
    fs->nacts = d->min_acts + nh_pick(r, d->acts_span);
    ck_assert_uint_le(fs->nacts, NH_MAX_ACTS);
    uint32_t incast = (uint32_t)nh_pick(r, n); /* a favourite destination */
    double favour = d->favour;
    if (d->favour_half)
        favour = gsl_rng_uniform(r) < 0.5 ? 0.0 : d->favour;
    for (size_t i = 0; i < fs->nacts; i++) {
        nh_action *a = &fs->acts[i];
        if (i > 0 && d->batch > 0.0 && fs->acts[i - 1].kind == NH_SEND &&
            gsl_rng_uniform(r) < d->batch) {
            i = draw_batch(fs, r, i, n) - 1;
            continue;
        }
        a->at_ns = draw_start(r, grid, d);
        a->a = (uint32_t)nh_pick(r, n);
        a->b = gsl_rng_uniform(r) < favour ? incast : (uint32_t)nh_pick(r, n);
        a->bytes = sizes[nh_pick(r, nsizes)];
        double u = gsl_rng_uniform(r);
        if (!changes || u < d->p_send) {
            a->kind = NH_SEND;
        } else if (u < d->p_send_factor) {
            a->kind = NH_FACTOR;
            a->factor = gsl_rng_uniform(r) < 0.5 ? 1.0 : 0.5;
        } else {
            a->kind = gsl_rng_uniform(r) < 0.6 ? NH_DOWN : NH_UP;
        }
    }
}

void nh_to_nodes(nh_node_set *ns, gsl_rng *r)
{
    static const double fabric[] = { 3.1e9, 10e9, 40e9, 160e9 };
    nh_flow_set *fs = &ns->fs;
    uint32_t node = 0, first = 0;
    for (uint32_t h = 0; h < fs->cfg.nhosts; h++) {
        if (h > first && nh_pick(r, 3) == 0) { /* a new node, about every third host */
            node++;
            first = h;
        }
        if (h - first >= 4) {
            node++;
            first = h;
        }
        ns->node_of[h] = node;
        fs->bw[h] = fs->bw[first];
        fs->lat[h] = fs->lat[first];
        ns->fbw[h] = fabric[nh_pick(r, 4)];
        ns->flat[h] = 1000 * (sim_time)nh_pick(r, 3);
    }
    fs->cfg.nnodes = node + 1;
    fs->cfg.node_of = ns->node_of;
    fs->cfg.fabric_bps = ns->fbw;
    fs->cfg.fabric_latency_ns = ns->flat;
    if (fs->cfg.topology == SIM_TOPO_RACKS && fs->cfg.rack_size > fs->cfg.nnodes)
        fs->cfg.rack_size = fs->cfg.nnodes;
}
