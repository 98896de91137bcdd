/* The reference of the network's differential tests, in plain loops over arrays: see
 * net_ref.h. */
#include "net_ref.h"

#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sim/engine_net.h"

enum {
    REF_PATH_MAX = 6, /* two NICs and, on a fat tree between pods, four switch links */
    REF_FIRST_PLACES = 64
};

/* Where a message is: nowhere (the place is free), waiting out its path latency, or moving
 * its bytes at a rate. */
typedef enum ref_phase {
    REF_FREE = 0,
    REF_WAITING = 1,
    REF_MOVING = 2
} ref_phase;

typedef struct ref_msg {
    sim_net_msg msg;
    ref_phase phase;
    uint64_t id;                 /* carried by its events; the next message here has another */
    uint32_t path[REF_PATH_MAX]; /* its links, from the sender's NIC to the receiver's */
    uint32_t hops;               /* links on the path (0: to its own host) */
    double rate_bps;             /* its fair share now, 0 before it is rated */
    double left_bytes;           /* bytes still to move, as of since_ns */
    sim_time since_ns;           /* when left_bytes was last brought up to date */
    sim_event_id ev;             /* its pending START or DONE, 0 if none */
    sim_time due_ns;             /* when its DONE is due */
    sim_time instant_ns;         /* the instant its rate last changed (-1: never) */
    double rate_before_bps;      /* its rate before the first change at instant_ns */
    bool reverted;               /* see ref_net_last_reverted */
    bool rated;                  /* scratch of one filling: given its share already */
} ref_msg;

struct ref_net {
    sim_engine *eng;
    ref_mode mode;
    sim_net_config cfg; /* as given, but the arrays (not kept) */
    uint32_t nlinks;    /* NIC links first, then the switches' */
    double *base_bps;   /* (nlinks) configured capacity */
    double *cap_bps;    /* (nlinks) capacity now: base times its host's factor */
    uint32_t *users;    /* (nlinks) flows crossing it */
    bool *marked;       /* (nlinks) links whose flows are being rated */
    bool *settled;      /* (nlinks) REF_PER_INSTANT: rated in this instant's flush */
    bool *changed;      /* (nlinks) REF_PER_INSTANT: changed at this instant */
    uint32_t *changes;  /* (nlinks) those links, in the order they changed */
    uint32_t nchanges;
    double *spare_bps; /* (nlinks) scratch of one filling: capacity not yet given out */
    uint32_t *unrated; /* (nlinks) scratch of one filling: flows crossing it not yet rated */
    sim_time *lat_ns;  /* (nhosts) NIC latency */
    bool *down;        /* (nhosts) */
    ref_msg *msgs;     /* (nplaces) */
    uint32_t *flows;   /* (nplaces) places of the moving messages, in the order they started */
    uint32_t *unused;  /* (nplaces) free places, the last freed taken first */
    size_t nplaces, nflows, nunused;
    uint64_t last_id;
    int pending_err; /* a failure of a call that returns nothing, for the next send or handle */
    bool last_reverted;
    sim_net_stats stats;
    sim_net_drop_fn on_drop;
    void *drop_ud;
};

/* ---- the topology --------------------------------------------------------------------- */

/* Fat tree with h = k / 2: link numbers after the 2 * nhosts of the NICs. For pod p, edge
 * switch e and aggregation switch a: the pair (edge to aggregation, back) at
 * 2 * (p h^2 + e h + a); then, after 2 k h^2 of those, for pod p, aggregation switch a and
 * core switch c of a's group: the pair (aggregation to core, back) at 2 * (p h^2 + a h + c). */
static uint32_t edge_link(const ref_net *net, uint32_t pod, uint32_t edge, uint32_t agg)
{
    uint32_t h = net->cfg.k / 2;
    return 2 * net->cfg.nhosts + 2 * (pod * h * h + edge * h + agg);
}

static uint32_t core_link(const ref_net *net, uint32_t pod, uint32_t agg, uint32_t core)
{
    uint32_t h = net->cfg.k / 2;
    return 2 * net->cfg.nhosts + 2 * net->cfg.k * h * h + 2 * (pod * h * h + agg * h + core);
}

/* Host x of a fat tree is in pod x / h^2 under edge switch (x / h) mod h. A path goes up
 * through aggregation switch (s + d) mod h of the sender's pod and, to another pod, through
 * core switch ((s + d) / h) mod h of that switch's group, then down the same way. */
static uint32_t fat_tree_hops(const ref_net *net, uint32_t s, uint32_t d, uint32_t *out)
{
    uint32_t h = net->cfg.k / 2;
    uint32_t pod_s = s / (h * h), pod_d = d / (h * h);
    uint32_t edge_s = s / h % h, edge_d = d / h % h;
    uint32_t agg = (s + d) % h, core = (s + d) / h % h;
    if (pod_s != pod_d) {
        out[0] = edge_link(net, pod_s, edge_s, agg);
        out[1] = core_link(net, pod_s, agg, core);
        out[2] = core_link(net, pod_d, agg, core) + 1;
        out[3] = edge_link(net, pod_d, edge_d, agg) + 1;
        return 4;
    }
    if (edge_s == edge_d)
        return 0;
    out[0] = edge_link(net, pod_s, edge_s, agg);
    out[1] = edge_link(net, pod_d, edge_d, agg) + 1;
    return 2;
}

/* The links from host s to host d: s's NIC up (2 s), the switches, d's NIC down (2 d + 1);
 * racks: rack r's uplink up at 2 * nhosts + 2 r and down at the next number. */
static uint32_t route(const ref_net *net, uint32_t s, uint32_t d, uint32_t *out)
{
    uint32_t n = 0;
    if (s == d)
        return 0;
    out[n++] = 2 * s;
    if (net->cfg.topology == SIM_TOPO_FAT_TREE) {
        n += fat_tree_hops(net, s, d, &out[n]);
    } else if (net->cfg.topology == SIM_TOPO_RACKS) {
        uint32_t rack_s = s / net->cfg.rack_size, rack_d = d / net->cfg.rack_size;
        if (rack_s != rack_d) {
            out[n++] = 2 * net->cfg.nhosts + 2 * rack_s;
            out[n++] = 2 * net->cfg.nhosts + 2 * rack_d + 1;
        }
    }
    out[n++] = 2 * d + 1;
    return n;
}

/* Links of the NICs, then of the racks' uplinks or the fat tree's switches. */
static uint32_t count_links(const sim_net_config *cfg)
{
    uint32_t h = cfg->k / 2;
    if (cfg->topology == SIM_TOPO_RACKS)
        return 2 * cfg->nhosts + 2 * ((cfg->nhosts + cfg->rack_size - 1) / cfg->rack_size);
    if (cfg->topology == SIM_TOPO_FAT_TREE)
        return 2 * cfg->nhosts + 4 * cfg->k * h * h;
    return 2 * cfg->nhosts;
}

/* Capacities: a NIC's both ways, a fat tree's edge switch links cut by the oversubscription,
 * every other switch link the uplink bandwidth. */
static void fill_capacities(ref_net *net, const sim_net_config *cfg)
{
    uint32_t h = cfg->k / 2, edge_end = 2 * cfg->nhosts + 2 * cfg->k * h * h;
    for (uint32_t l = 0; l < net->nlinks; l++) {
        if (l < 2 * cfg->nhosts)
            net->base_bps[l] = cfg->bandwidth_bps[l / 2];
        else if (cfg->topology == SIM_TOPO_FAT_TREE && l < edge_end)
            net->base_bps[l] = cfg->uplink_bandwidth_bps / cfg->oversubscription;
        else
            net->base_bps[l] = cfg->uplink_bandwidth_bps;
        net->cap_bps[l] = net->base_bps[l];
    }
    for (uint32_t x = 0; x < cfg->nhosts; x++)
        net->lat_ns[x] = cfg->latency_ns[x];
}

/* ---- rates ------------------------------------------------------------------------------ */

static bool crosses(const ref_msg *m, uint32_t l)
{
    for (uint32_t j = 0; j < m->hops; j++) {
        if (m->path[j] == l)
            return true;
    }
    return false;
}

static bool crosses_marked(const ref_net *net, const ref_msg *m)
{
    for (uint32_t j = 0; j < m->hops; j++) {
        if (net->marked[m->path[j]])
            return true;
    }
    return false;
}

static int schedule(ref_net *net, uint32_t at, uint32_t kind, sim_time delay_ns)
{
    ref_msg *m = &net->msgs[at];
    sim_event ev = { .kind = kind, .src = (int32_t)m->msg.src, .dst = (int32_t)m->msg.dst };
    ev.arg[0] = at;
    ev.arg[1] = m->id;
    return sim_engine_schedule(net->eng, delay_ns, &ev, &m->ev);
}

/* Remembers what a solver that settles each instant once would not see: a rate that comes
 * back to what it was at the start of the instant, or changes when the end is due. */
static void watch_change(ref_msg *m, double rate_bps, sim_time now)
{
    if (m->instant_ns == now && rate_bps == m->rate_before_bps)
        m->reverted = true;
    if (m->instant_ns != now) {
        m->instant_ns = now;
        m->rate_before_bps = m->rate_bps;
    }
    if (m->ev != 0 && m->due_ns == now)
        m->reverted = true;
}

/* Gives the message at `at` its new share. An unchanged rate keeps its end; otherwise the
 * bytes moved at the old rate since since_ns are taken off, and its end is scheduled again
 * from what is left (none while the rate is 0). */
static int set_rate(ref_net *net, uint32_t at, double rate_bps, sim_err *err)
{
    ref_msg *m = &net->msgs[at];
    if (m->rate_bps == rate_bps)
        return SIM_OK;
    sim_time now = sim_engine_now(net->eng);
    watch_change(m, rate_bps, now);
    if (now > m->since_ns && m->rate_bps > 0.0) {
        double moved_bytes = m->rate_bps * (double)(now - m->since_ns) / 8e9;
        m->left_bytes = fmax(m->left_bytes - moved_bytes, 0.0);
    }
    m->since_ns = now;
    m->rate_bps = rate_bps;
    net->stats.rerates++;
    if (m->ev != 0)
        sim_engine_cancel(net->eng, m->ev);
    m->ev = 0;
    if (rate_bps <= 0.0)
        return SIM_OK;
    double wait_ns = m->left_bytes * 8e9 / rate_bps;
    if (!(wait_ns < 0.5 * (double)(SIM_TIME_NEVER - now)))
        return sim_err_set(err, SIM_ENUMERIC, NULL,
                           "net: the flow from %u to %u, at %g bits/s, ends past the end of time",
                           m->msg.src, m->msg.dst, rate_bps);
    m->due_ns = now + llround(wait_ns);
    int rc = schedule(net, at, SIM_EV_NET_DONE, llround(wait_ns));
    if (rc != SIM_OK)
        return sim_err_set(err, rc, NULL, "net: the end of a flow cannot be scheduled");
    return SIM_OK;
}

/* Marks, again and again until nothing is added, every link of a flow that crosses a
 * marked link. */
static void spread_marks(ref_net *net)
{
    bool added = true;
    while (added) {
        added = false;
        for (size_t i = 0; i < net->nflows; i++) {
            const ref_msg *m = &net->msgs[net->flows[i]];
            if (!crosses_marked(net, m))
                continue;
            for (uint32_t j = 0; j < m->hops; j++) {
                added = added || !net->marked[m->path[j]];
                net->marked[m->path[j]] = true;
            }
        }
    }
}

/* The marked link whose spare capacity shared among its unrated flows is the smallest (the
 * lower number on a tie), with that share; false when no marked link has unrated flows. */
static bool narrowest(const ref_net *net, uint32_t *link, double *share_bps)
{
    bool found = false;
    for (uint32_t l = 0; l < net->nlinks; l++) {
        if (!net->marked[l] || net->unrated[l] == 0)
            continue;
        double share = fmax(net->spare_bps[l], 0.0) / net->unrated[l];
        if (!found || share < *share_bps) {
            found = true;
            *link = l;
            *share_bps = share;
        }
    }
    return found;
}

/* Max-min fair shares for the flows crossing marked links (spread_marks first: then no flow
 * crosses a marked and an unmarked link) by progressive filling: the narrowest link gives
 * each of its unrated flows, the latest to start first, its share, which each of them takes
 * from the spare capacity of every link it crosses; and again, until every flow is rated. */
static int fill_marked(ref_net *net, sim_err *err)
{
    for (uint32_t l = 0; l < net->nlinks; l++) {
        net->spare_bps[l] = net->cap_bps[l];
        net->unrated[l] = 0;
    }
    for (size_t i = 0; i < net->nflows; i++) {
        ref_msg *m = &net->msgs[net->flows[i]];
        m->rated = !crosses_marked(net, m);
        for (uint32_t j = 0; j < m->hops && !m->rated; j++)
            net->unrated[m->path[j]]++;
    }
    uint32_t l = 0;
    double share_bps = 0.0;
    while (narrowest(net, &l, &share_bps)) {
        for (size_t i = net->nflows; i-- > 0;) {
            ref_msg *m = &net->msgs[net->flows[i]];
            if (m->rated || !crosses(m, l))
                continue;
            m->rated = true;
            for (uint32_t j = 0; j < m->hops; j++) {
                net->spare_bps[m->path[j]] -= share_bps;
                net->unrated[m->path[j]]--;
            }
            int rc = set_rate(net, net->flows[i], share_bps, err);
            if (rc != SIM_OK)
                return rc;
        }
    }
    return SIM_OK;
}

static void unmark_all(ref_net *net)
{
    memset(net->marked, 0, net->nlinks * sizeof(*net->marked));
}

/* REF_EACH_CHANGE: the flows connected to the marked links rated at once. */
static int rate_now(ref_net *net, sim_err *err)
{
    net->stats.recomputes++;
    spread_marks(net);
    return fill_marked(net, err);
}

/* REF_PER_INSTANT: link l is to be settled when the clock leaves this instant. */
static void note_change(ref_net *net, uint32_t l)
{
    if (net->changed[l])
        return;
    net->changed[l] = true;
    net->changes[net->nchanges++] = l;
    sim_engine_request_flush(net->eng);
}

/* REF_PER_INSTANT's flush: each changed link, in the order they changed, has its connected
 * flows rated, unless an earlier one's filling reached it. */
static int settle_instant(void *ud, sim_engine *eng, sim_err *err)
{
    ref_net *net = ud;
    (void)eng;
    if (net->nchanges == 0)
        return SIM_OK;
    net->stats.recomputes++;
    memset(net->settled, 0, net->nlinks * sizeof(*net->settled));
    int rc = SIM_OK;
    for (uint32_t i = 0; i < net->nchanges; i++) {
        uint32_t first = net->changes[i];
        net->changed[first] = false;
        if (rc != SIM_OK || net->settled[first])
            continue;
        unmark_all(net);
        net->marked[first] = true;
        spread_marks(net);
        rc = fill_marked(net, err);
        for (uint32_t l = 0; l < net->nlinks; l++)
            net->settled[l] = net->settled[l] || net->marked[l];
    }
    net->nchanges = 0;
    return rc;
}

/* The rates after the links of the message at `at` changed (it started or ended). */
static int links_changed(ref_net *net, uint32_t at, sim_err *err)
{
    const ref_msg *m = &net->msgs[at];
    if (net->mode == REF_PER_INSTANT) {
        for (uint32_t j = 0; j < m->hops; j++)
            note_change(net, m->path[j]);
        return SIM_OK;
    }
    unmark_all(net);
    for (uint32_t j = 0; j < m->hops; j++)
        net->marked[m->path[j]] = true;
    return rate_now(net, err);
}

/* ---- messages ----------------------------------------------------------------------------- */

static void start_moving(ref_net *net, uint32_t at)
{
    ref_msg *m = &net->msgs[at];
    m->phase = REF_MOVING;
    m->since_ns = sim_engine_now(net->eng);
    for (uint32_t j = 0; j < m->hops; j++)
        net->users[m->path[j]]++;
    net->flows[net->nflows++] = at;
    if (net->nflows > net->stats.peak_flows)
        net->stats.peak_flows = net->nflows;
}

static void stop_moving(ref_net *net, uint32_t at)
{
    const ref_msg *m = &net->msgs[at];
    for (uint32_t j = 0; j < m->hops; j++)
        net->users[m->path[j]]--;
    size_t i = 0;
    while (net->flows[i] != at)
        i++;
    memmove(&net->flows[i], &net->flows[i + 1], (net->nflows - i - 1) * sizeof(*net->flows));
    net->nflows--;
}

/* Whether each link of the message at `at` carries `n` flows. */
static bool only_users(const ref_net *net, uint32_t at, uint32_t n)
{
    const ref_msg *m = &net->msgs[at];
    for (uint32_t j = 0; j < m->hops; j++) {
        if (net->users[m->path[j]] != n)
            return false;
    }
    return true;
}

static void release(ref_net *net, uint32_t at)
{
    net->msgs[at].phase = REF_FREE;
    net->msgs[at].ev = 0;
    net->unused[net->nunused++] = at;
}

/* The message at `at` is dropped (the drop function is told) and its place freed. */
static void drop(ref_net *net, uint32_t at)
{
    net->stats.dropped++;
    net->stats.in_flight--;
    if (net->on_drop != NULL)
        net->on_drop(net->drop_ud, &net->msgs[at].msg);
    release(net, at);
}

/* The message at `at` arrives: delivered into *out (1), or dropped (0) when its receiver is
 * down. Its place is free again. */
static int finish(ref_net *net, uint32_t at, sim_net_msg *out)
{
    ref_msg *m = &net->msgs[at];
    net->last_reverted = m->reverted;
    if (net->down[m->msg.dst]) {
        drop(net, at);
        return 0;
    }
    net->stats.delivered++;
    net->stats.in_flight--;
    *out = m->msg;
    release(net, at);
    return 1;
}

/* Its path latency is over: a message with bytes to move between two hosts starts moving. */
static int on_start(ref_net *net, uint32_t at, sim_net_msg *out, sim_err *err)
{
    ref_msg *m = &net->msgs[at];
    if (m->hops == 0 || m->msg.bytes == 0 || net->down[m->msg.dst])
        return finish(net, at, out);
    start_moving(net, at);
    if (net->mode == REF_PER_INSTANT && only_users(net, at, 1)) {
        double narrowest_bps = INFINITY;
        for (uint32_t j = 0; j < m->hops; j++)
            narrowest_bps = fmin(narrowest_bps, net->cap_bps[m->path[j]]);
        net->stats.recomputes++;
        return set_rate(net, at, narrowest_bps, err);
    }
    return links_changed(net, at, err);
}

static int on_done(ref_net *net, uint32_t at, sim_net_msg *out, sim_err *err)
{
    stop_moving(net, at);
    int rc = SIM_OK;
    if (net->mode == REF_PER_INSTANT && only_users(net, at, 0))
        net->stats.recomputes++; /* nobody left to re-rate */
    else
        rc = links_changed(net, at, err);
    int delivered = finish(net, at, out);
    return rc != SIM_OK ? rc : delivered;
}

/* A failure left by a call that returns nothing, reported (once) by the next send or event. */
static int earlier_failure(ref_net *net, sim_err *err)
{
    int failure = net->pending_err;
    net->pending_err = SIM_OK;
    if (failure != SIM_OK)
        sim_err_set(err, failure, NULL, "net: an earlier change failed: %s", sim_strerror(failure));
    return failure;
}

int ref_net_handle(ref_net *net, const sim_event *ev, sim_net_msg *out, sim_err *err)
{
    assert(net != NULL && ev != NULL && out != NULL);
    int rc = earlier_failure(net, err);
    if (rc != SIM_OK)
        return rc;
    if (ev->kind != SIM_EV_NET_START && ev->kind != SIM_EV_NET_DONE)
        return sim_err_set(err, SIM_EINVAL, NULL, "net: event kind %u is not the network's",
                           ev->kind);
    uint64_t at = ev->arg[0];
    if (at >= net->nplaces || net->msgs[at].phase == REF_FREE || net->msgs[at].id != ev->arg[1])
        return 0; /* stale: its message has left */
    ref_msg *m = &net->msgs[at];
    ref_phase want = ev->kind == SIM_EV_NET_START ? REF_WAITING : REF_MOVING;
    if (m->phase != want)
        return 0;
    m->ev = 0;
    if (want == REF_WAITING)
        return on_start(net, (uint32_t)at, out, err);
    return on_done(net, (uint32_t)at, out, err);
}

/* Places [from, to) become free, the lowest to be taken first. */
static void add_places(ref_net *net, size_t from, size_t to)
{
    for (size_t at = to; at-- > from;)
        net->unused[net->nunused++] = (uint32_t)at;
}

/* Doubles the room for messages. */
static int more_places(ref_net *net, sim_err *err)
{
    size_t n = 2 * net->nplaces;
    ref_msg *msgs = realloc(net->msgs, n * sizeof(*msgs));
    if (msgs != NULL)
        net->msgs = msgs;
    uint32_t *flows = msgs != NULL ? realloc(net->flows, n * sizeof(*flows)) : NULL;
    if (flows != NULL)
        net->flows = flows;
    uint32_t *unused = flows != NULL ? realloc(net->unused, n * sizeof(*unused)) : NULL;
    if (unused == NULL)
        return sim_err_set(err, SIM_ENOMEM, NULL, "net: no room for %zu messages", n);
    net->unused = unused;
    memset(&net->msgs[net->nplaces], 0, (n - net->nplaces) * sizeof(*msgs));
    add_places(net, net->nplaces, n);
    net->nplaces = n;
    return SIM_OK;
}

int ref_net_send(ref_net *net, const sim_net_msg *msg, sim_err *err)
{
    assert(net != NULL && msg != NULL);
    int rc = earlier_failure(net, err);
    if (rc != SIM_OK)
        return rc;
    uint32_t n = net->cfg.nhosts;
    if (msg->src >= n || msg->dst >= n)
        return sim_err_set(err, SIM_EINVAL, NULL, "net: send from host %u to host %u of %u",
                           msg->src, msg->dst, n);
    if (net->down[msg->src])
        return sim_err_set(err, SIM_EINVAL, NULL, "net: host %u is down", msg->src);
    uint32_t at = 0;
    rc = net->nunused == 0 ? more_places(net, err) : SIM_OK;
    if (rc != SIM_OK)
        return rc;
    at = net->unused[--net->nunused];
    ref_msg *m = &net->msgs[at];
    memset(m, 0, sizeof(*m));
    m->msg = *msg;
    m->msg.sent_ns = sim_engine_now(net->eng);
    m->phase = REF_WAITING;
    m->id = ++net->last_id;
    m->hops = route(net, msg->src, msg->dst, m->path);
    m->left_bytes = (double)msg->bytes;
    m->since_ns = m->msg.sent_ns;
    m->instant_ns = -1;
    sim_time lat_ns = 0;
    if (m->hops > 0) /* every switch link adds the uplink latency */
        lat_ns = net->lat_ns[msg->src] + net->lat_ns[msg->dst] +
                 (sim_time)(m->hops - 2) * net->cfg.uplink_latency_ns;
    if (schedule(net, at, SIM_EV_NET_START, lat_ns) != SIM_OK) {
        release(net, at);
        return sim_err_set(err, SIM_ENOMEM, NULL, "net: cannot schedule a message");
    }
    net->stats.sent++;
    net->stats.in_flight++;
    return SIM_OK;
}

/* ---- hosts and links ---------------------------------------------------------------------- */

void ref_net_set_host_down(ref_net *net, uint32_t host, bool down)
{
    assert(net != NULL && host < net->cfg.nhosts);
    if (net->down[host] == down)
        return;
    net->down[host] = down;
    if (!down)
        return;
    unmark_all(net);
    bool stopped = false;
    for (uint32_t at = 0; at < net->nplaces; at++) {
        ref_msg *m = &net->msgs[at];
        if (m->phase == REF_FREE || (m->msg.src != host && m->msg.dst != host))
            continue;
        if (m->ev != 0)
            sim_engine_cancel(net->eng, m->ev);
        if (m->phase == REF_MOVING) {
            stop_moving(net, at);
            for (uint32_t j = 0; j < m->hops; j++) {
                if (net->mode == REF_PER_INSTANT)
                    note_change(net, m->path[j]);
                else
                    net->marked[m->path[j]] = true;
            }
            stopped = true;
        }
        drop(net, at);
    }
    if (!stopped || net->mode == REF_PER_INSTANT)
        return;
    int rc = rate_now(net, NULL);
    if (rc != SIM_OK && net->pending_err == SIM_OK)
        net->pending_err = rc;
}

bool ref_net_host_down(const ref_net *net, uint32_t host)
{
    return host < net->cfg.nhosts && net->down[host];
}

int ref_net_set_bandwidth_factor(ref_net *net, uint32_t host, double factor, sim_err *err)
{
    if (host >= net->cfg.nhosts || !(factor > 0.0 && factor <= 1.0))
        return sim_err_set(err, SIM_EINVAL, NULL, "net: factor %g for host %u of %u", factor, host,
                           net->cfg.nhosts);
    uint32_t up = 2 * host, down = 2 * host + 1; /* its NIC's links */
    net->cap_bps[up] = net->base_bps[up] * factor;
    net->cap_bps[down] = net->base_bps[down] * factor;
    if (net->mode == REF_PER_INSTANT) {
        note_change(net, up);
        note_change(net, down);
        return SIM_OK;
    }
    unmark_all(net);
    net->marked[up] = true;
    net->marked[down] = true;
    return rate_now(net, err);
}

void ref_net_set_drop_fn(ref_net *net, sim_net_drop_fn fn, void *ud)
{
    net->on_drop = fn;
    net->drop_ud = ud;
}

void ref_net_stats_get(const ref_net *net, sim_net_stats *stats)
{
    *stats = net->stats;
    stats->active_flows = net->nflows;
}

bool ref_net_last_reverted(const ref_net *net)
{
    return net->last_reverted;
}

/* ---- lifecycle ---------------------------------------------------------------------------- */

static int check_topology(const sim_net_config *cfg, sim_err *err)
{
    if (cfg->nhosts == 0 || cfg->node_of != NULL)
        return sim_err_set(err, SIM_EINVAL, NULL, "net: the reference wants hosts, no nodes");
    if (cfg->topology == SIM_TOPO_RACKS && cfg->rack_size == 0)
        return sim_err_set(err, SIM_EINVAL, NULL, "net: racks of no host");
    if (cfg->topology == SIM_TOPO_FAT_TREE &&
        (cfg->k < 2 || cfg->k % 2 != 0 || cfg->nhosts > cfg->k * cfg->k * cfg->k / 4))
        return sim_err_set(err, SIM_EINVAL, NULL, "net: no fat tree of k = %u for %u hosts", cfg->k,
                           cfg->nhosts);
    if (cfg->topology != SIM_TOPO_STAR && cfg->topology != SIM_TOPO_RACKS &&
        cfg->topology != SIM_TOPO_FAT_TREE)
        return sim_err_set(err, SIM_EINVAL, NULL, "net: topology %d", (int)cfg->topology);
    return SIM_OK;
}

/* The arrays, all zero; SIM_ENOMEM if one cannot be had (the others are then freed by
 * ref_net_destroy). */
static int make_arrays(ref_net *net)
{
    size_t nl = net->nlinks, nh = net->cfg.nhosts, np = net->nplaces;
    net->base_bps = calloc(nl, sizeof(*net->base_bps));
    net->cap_bps = calloc(nl, sizeof(*net->cap_bps));
    net->spare_bps = calloc(nl, sizeof(*net->spare_bps));
    net->users = calloc(nl, sizeof(*net->users));
    net->unrated = calloc(nl, sizeof(*net->unrated));
    net->changes = calloc(nl, sizeof(*net->changes));
    net->marked = calloc(nl, sizeof(*net->marked));
    net->settled = calloc(nl, sizeof(*net->settled));
    net->changed = calloc(nl, sizeof(*net->changed));
    net->lat_ns = calloc(nh, sizeof(*net->lat_ns));
    net->down = calloc(nh, sizeof(*net->down));
    net->msgs = calloc(np, sizeof(*net->msgs));
    net->flows = calloc(np, sizeof(*net->flows));
    net->unused = calloc(np, sizeof(*net->unused));
    bool all = net->base_bps && net->cap_bps && net->spare_bps && net->users && net->unrated &&
               net->changes && net->marked && net->settled && net->changed && net->lat_ns &&
               net->down && net->msgs && net->flows && net->unused;
    return all ? SIM_OK : SIM_ENOMEM;
}

ref_net *ref_net_create(const sim_net_config *cfg, sim_engine *eng, ref_mode mode, sim_err *err)
{
    int rc = check_topology(cfg, err);
    ref_net *net = rc == SIM_OK ? calloc(1, sizeof(*net)) : NULL;
    if (net != NULL) {
        net->eng = eng;
        net->mode = mode;
        net->cfg = *cfg;
        net->cfg.bandwidth_bps = NULL;
        net->cfg.latency_ns = NULL;
        net->nlinks = count_links(cfg);
        net->nplaces = REF_FIRST_PLACES;
        if (make_arrays(net) == SIM_OK) {
            fill_capacities(net, cfg);
            add_places(net, 0, net->nplaces);
            if (mode == REF_PER_INSTANT)
                sim_engine_set_flush(eng, settle_instant, net);
            return net;
        }
        ref_net_destroy(net);
    }
    if (rc == SIM_OK)
        sim_err_set(err, SIM_ENOMEM, NULL, "net: no memory for the reference");
    return NULL;
}

void ref_net_destroy(ref_net *net)
{
    if (net == NULL)
        return;
    if (net->mode == REF_PER_INSTANT)
        sim_engine_set_flush(net->eng, NULL, NULL);
    void *arrays[] = { net->base_bps, net->cap_bps, net->spare_bps, net->users,   net->unrated,
                       net->changes,  net->marked,  net->settled,   net->changed, net->lat_ns,
                       net->down,     net->msgs,    net->flows,     net->unused };
    for (size_t i = 0; i < sizeof(arrays) / sizeof(arrays[0]); i++)
        free(arrays[i]);
    free(net);
}
