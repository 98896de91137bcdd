/* A frozen copy of net/net_model.c before per-instant batching: see net_ref.h. */
#include "net_ref.h"

#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "net/net_topo.h"

/* Links: host h has up link 2h and down link 2h + 1; in the racks topology rack r has its
 * uplink-up at 2 * nhosts + 2r and its uplink-down at 2 * nhosts + 2r + 1. A path has at most
 * four links. A message lives in one slot of a pool from send to delivery or drop; in its
 * bandwidth phase the slot is a flow threaded on the links of its path through intrusive
 * doubly linked lists of "hops" (hop id = slot * 4 + position on the path), so joining and
 * leaving a link are O(1) and allocate nothing. */

enum {
    MAX_HOPS = NET_MAX_HOPS,
    NO_HOP = -1,
    NO_SLOT = -1,
    INITIAL_SLOTS = 64
};

enum slot_state {
    SLOT_FREE = 0,
    SLOT_LATENCY = 1, /* waiting for its SIM_EV_NET_START */
    SLOT_FLOW = 2     /* transferring; SIM_EV_NET_DONE pending while its rate is > 0 */
};

/* 8 bits per byte times 1e9 ns per s: bytes * NS_BITS / (bits/s) = ns. */
static const double NS_BITS = 8e9;

typedef struct net_slot {
    sim_net_msg msg;
    double remaining_bytes; /* bytes left as of last_ns */
    double rate_bps;        /* current max-min rate, bits/s (0 before the first rating) */
    sim_time last_ns;       /* time remaining_bytes refers to */
    sim_event_id ev;        /* pending START or DONE event, 0 if none */
    uint64_t seen_epoch;    /* recompute that last reached this flow */
    uint64_t frozen_epoch;  /* recompute that last gave this flow its rate */
    uint32_t gen;           /* bumped on free: events carrying an older one are stale */
    sim_time instant_ns;    /* test only: time of this flow's last rate change */
    double instant_rate;    /* test only: its rate before the first change at instant_ns */
    sim_time due_ns;        /* test only: time of the pending DONE event */
    bool reverted;          /* test only: see ref_net_last_reverted */
    uint32_t links[MAX_HOPS];
    int32_t hop_next[MAX_HOPS], hop_prev[MAX_HOPS];
    uint32_t active_pos; /* index in net->active while a flow */
    int32_t next_free;
    uint8_t nlinks;
    uint8_t state; /* enum slot_state */
} net_slot;

typedef struct net_link {
    double base_bps;     /* configured capacity, bits/s */
    double cap_bps;      /* current capacity (base times the host's bandwidth factor) */
    int32_t head;        /* first hop on this link, or NO_HOP */
    uint32_t nflows;     /* flows on this link */
    uint64_t seen_epoch; /* recompute that last reached this link */
    /* Progressive-filling scratch, valid during one recompute. */
    double rem_bps;    /* capacity not yet given to frozen flows */
    double share_bps;  /* rem_bps / unfrozen: the heap key */
    uint32_t unfrozen; /* flows on this link not yet frozen */
    int32_t heap_pos;  /* index in net->heap, or -1 */
} net_link;

typedef struct net_host {
    sim_time latency_ns;
    sim_time extra_ns;
    uint64_t sent_bytes, received_bytes;
    uint32_t inflight; /* messages from or to this host, sent and not yet ended */
    bool down;
} net_host;

struct ref_net {
    sim_engine *eng;
    sim_topology topology;
    uint32_t nhosts, nlinks;
    sim_net_config topo; /* the configuration's topology fields (its arrays: NULL) */
    net_host *hosts;     /* (nhosts) */
    net_link *links;     /* (nlinks) */
    uint32_t *comp;      /* (nlinks) links of the component being recomputed, BFS order */
    uint32_t *heap;      /* (nlinks) min-heap of component links by (share, index) */
    uint32_t heap_n;
    net_slot *slots;  /* (cap) message pool */
    uint32_t *active; /* (cap) slots now in their bandwidth phase, dense */
    size_t cap, nactive;
    int32_t free_head;
    uint64_t epoch;
    uint64_t grows;  /* times the pool doubled after creation */
    int pending_err; /* error from a void operation, reported by the next send or handle */
    sim_net_stats stats;
    bool last_reverted;      /* test only: see ref_net_last_reverted */
    sim_net_drop_fn on_drop; /* told of every dropped message (to release its payload) */
    void *drop_ud;
};

/* ---- small helpers -------------------------------------------------------------------- */

static uint32_t up_link(uint32_t h)
{
    return 2 * h;
}

static uint32_t down_link(uint32_t h)
{
    return 2 * h + 1;
}

/* Paths come from net/net_topo.c (shared with the solver under test, so that the fat-tree
 * can be compared too); the rest of this file is the solver as it was. */
static uint8_t path_links(const ref_net *net, uint32_t src, uint32_t dst, uint32_t out[MAX_HOPS])
{
    return sim_net_topo_path(&net->topo, src, dst, out);
}

/* a + b for non-negative times, saturating at SIM_TIME_NEVER. */
static sim_time add_sat(sim_time a, sim_time b)
{
    return a > SIM_TIME_NEVER - b ? SIM_TIME_NEVER : a + b;
}

static uint32_t hop_slot(int32_t hop)
{
    return (uint32_t)hop / MAX_HOPS;
}

static uint32_t hop_pos(int32_t hop)
{
    return (uint32_t)hop % MAX_HOPS;
}

/* ---- lifecycle ------------------------------------------------------------------------ */

static int check_config(const sim_net_config *cfg, sim_err *err)
{
    if (cfg->nhosts == 0 || cfg->nhosts > (UINT32_MAX - 8) / 4)
        return sim_err_set(err, SIM_EINVAL, NULL, "net: nhosts must be in [1, %u], got %u",
                           (UINT32_MAX - 8) / 4, cfg->nhosts);
    if (cfg->bandwidth_bps == NULL || cfg->latency_ns == NULL)
        return sim_err_set(err, SIM_EINVAL, NULL, "net: bandwidth_bps and latency_ns are required");
    /* Latencies are capped so that the sum along any path cannot overflow. */
    const sim_time max_lat = SIM_TIME_NEVER / 8;
    for (uint32_t h = 0; h < cfg->nhosts; h++) {
        double b = cfg->bandwidth_bps[h];
        if (!(isfinite(b) && b > 0.0))
            return sim_err_set(err, SIM_EINVAL, NULL,
                               "net: bandwidth_bps[%u] must be finite and > 0, got %g", h, b);
        if (cfg->latency_ns[h] < 0 || cfg->latency_ns[h] > max_lat)
            return sim_err_set(err, SIM_EINVAL, NULL,
                               "net: latency_ns[%u] must be in [0, %lld], got %lld", h,
                               (long long)max_lat, (long long)cfg->latency_ns[h]);
    }
    return sim_net_topo_check(cfg, err);
}

/* Threads slots [from, to) onto the free list, lowest index first. */
static void free_range(ref_net *net, size_t from, size_t to)
{
    for (size_t i = to; i-- > from;) {
        net->slots[i].state = SLOT_FREE;
        net->slots[i].next_free = net->free_head;
        net->free_head = (int32_t)i;
    }
}

static void init_links(ref_net *net, const sim_net_config *cfg)
{
    for (uint32_t l = 0; l < net->nlinks; l++) {
        net_link *k = &net->links[l];
        k->base_bps = sim_net_topo_link_bps(cfg, l);
        k->cap_bps = k->base_bps;
        k->head = NO_HOP;
        k->heap_pos = -1;
    }
    for (uint32_t h = 0; h < cfg->nhosts; h++)
        net->hosts[h].latency_ns = cfg->latency_ns[h];
}

ref_net *ref_net_create(const sim_net_config *cfg, sim_engine *eng, sim_err *err)
{
    assert(cfg != NULL && eng != NULL);
    if (check_config(cfg, err) != SIM_OK)
        return NULL;
    ref_net *net = calloc(1, sizeof(*net));
    if (net == NULL)
        goto fail;
    net->eng = eng;
    net->topology = cfg->topology;
    net->nhosts = cfg->nhosts;
    net->topo = *cfg;
    net->topo.bandwidth_bps = NULL;
    net->topo.latency_ns = NULL;
    net->nlinks = sim_net_topo_nlinks(cfg);
    net->cap = INITIAL_SLOTS > 2 * (size_t)cfg->nhosts ? INITIAL_SLOTS : 2 * (size_t)cfg->nhosts;
    net->hosts = calloc(cfg->nhosts, sizeof(*net->hosts));
    net->links = calloc(net->nlinks, sizeof(*net->links));
    net->comp = calloc(net->nlinks, sizeof(*net->comp));
    net->heap = calloc(net->nlinks, sizeof(*net->heap));
    net->slots = calloc(net->cap, sizeof(*net->slots));
    net->active = calloc(net->cap, sizeof(*net->active));
    if (net->hosts == NULL || net->links == NULL || net->comp == NULL || net->heap == NULL ||
        net->slots == NULL || net->active == NULL)
        goto fail_free_net;
    init_links(net, cfg);
    net->free_head = NO_SLOT;
    free_range(net, 0, net->cap);
    return net;

fail_free_net:
    ref_net_destroy(net);
fail:
    sim_err_set(err, SIM_ENOMEM, NULL, "net: out of memory for %u hosts", cfg->nhosts);
    return NULL;
}

void ref_net_destroy(ref_net *net)
{
    if (net == NULL)
        return;
    free(net->active);
    free(net->slots);
    free(net->heap);
    free(net->comp);
    free(net->links);
    free(net->hosts);
    free(net);
}

/* Doubles the slot pool (the only allocation after creation). */
static int grow_pool(ref_net *net, sim_err *err)
{
    size_t cap = net->cap * 2;
    if (cap > (size_t)INT32_MAX / MAX_HOPS)
        return sim_err_set(err, SIM_ENOMEM, NULL, "net: message pool full at %zu", net->cap);
    net_slot *slots = realloc(net->slots, cap * sizeof(*slots));
    if (slots == NULL)
        return sim_err_set(err, SIM_ENOMEM, NULL, "net: cannot grow message pool to %zu", cap);
    net->slots = slots;
    uint32_t *active = realloc(net->active, cap * sizeof(*active));
    if (active == NULL)
        return sim_err_set(err, SIM_ENOMEM, NULL, "net: cannot grow message pool to %zu", cap);
    net->active = active;
    memset(&net->slots[net->cap], 0, (cap - net->cap) * sizeof(*slots));
    free_range(net, net->cap, cap);
    net->cap = cap;
    net->grows++;
    return SIM_OK;
}

static int alloc_slot(ref_net *net, uint32_t *out, sim_err *err)
{
    if (net->free_head == NO_SLOT) {
        int rc = grow_pool(net, err);
        if (rc != SIM_OK)
            return rc;
    }
    *out = (uint32_t)net->free_head;
    net->free_head = net->slots[*out].next_free;
    return SIM_OK;
}

static void free_slot(ref_net *net, uint32_t s)
{
    net_slot *f = &net->slots[s];
    f->state = SLOT_FREE;
    f->gen++;
    f->ev = 0;
    f->next_free = net->free_head;
    net->free_head = (int32_t)s;
}

/* ---- flows on links ------------------------------------------------------------------- */

static void join_links(ref_net *net, uint32_t s)
{
    net_slot *f = &net->slots[s];
    for (uint32_t k = 0; k < f->nlinks; k++) {
        net_link *l = &net->links[f->links[k]];
        int32_t hop = (int32_t)(s * MAX_HOPS + k);
        f->hop_prev[k] = NO_HOP;
        f->hop_next[k] = l->head;
        if (l->head != NO_HOP)
            net->slots[hop_slot(l->head)].hop_prev[hop_pos(l->head)] = hop;
        l->head = hop;
        l->nflows++;
    }
    f->active_pos = (uint32_t)net->nactive;
    net->active[net->nactive++] = s;
    if (net->nactive > net->stats.peak_flows)
        net->stats.peak_flows = net->nactive;
}

static void leave_links(ref_net *net, uint32_t s)
{
    net_slot *f = &net->slots[s];
    for (uint32_t k = 0; k < f->nlinks; k++) {
        net_link *l = &net->links[f->links[k]];
        int32_t prev = f->hop_prev[k], next = f->hop_next[k];
        if (prev != NO_HOP)
            net->slots[hop_slot(prev)].hop_next[hop_pos(prev)] = next;
        else
            l->head = next;
        if (next != NO_HOP)
            net->slots[hop_slot(next)].hop_prev[hop_pos(next)] = prev;
        l->nflows--;
    }
    uint32_t last = net->active[--net->nactive];
    net->active[f->active_pos] = last;
    net->slots[last].active_pos = f->active_pos;
}

/* ---- rates ---------------------------------------------------------------------------- */

/* Brings remaining_bytes up to now at the current rate. */
static void advance(net_slot *f, sim_time now)
{
    if (f->rate_bps > 0.0 && now > f->last_ns) {
        f->remaining_bytes -= f->rate_bps * (double)(now - f->last_ns) / NS_BITS;
        if (f->remaining_bytes < 0.0)
            f->remaining_bytes = 0.0;
    }
    f->last_ns = now;
}

static sim_event net_event(uint32_t kind, uint32_t s, const net_slot *f)
{
    sim_event ev;
    memset(&ev, 0, sizeof(ev));
    ev.kind = kind;
    ev.src = (int32_t)f->msg.src;
    ev.dst = (int32_t)f->msg.dst;
    ev.arg[0] = s;
    ev.arg[1] = f->gen;
    return ev;
}

/* Gives flow s the rate `rate_bps` from now on: a flow whose rate is unchanged keeps its
 * completion event; otherwise its bytes are brought up to now and the event moves. */
static int set_rate(ref_net *net, uint32_t s, double rate_bps, sim_err *err)
{
    net_slot *f = &net->slots[s];
    if (rate_bps == f->rate_bps)
        return SIM_OK;
    sim_time now = sim_engine_now(net->eng);
    if (f->instant_ns != now) {
        f->instant_ns = now;
        f->instant_rate = f->rate_bps;
    } else if (rate_bps == f->instant_rate) {
        f->reverted = true;
    }
    if (f->ev != 0 && f->due_ns == now)
        f->reverted = true;
    advance(f, now);
    f->rate_bps = rate_bps;
    net->stats.rerates++;
    if (f->ev != 0) {
        sim_engine_cancel(net->eng, f->ev);
        f->ev = 0;
    }
    if (!(rate_bps > 0.0))
        return SIM_OK; /* stalled until a later recompute: never divide by zero */
    double delay = f->remaining_bytes * NS_BITS / rate_bps;
    if (!(delay < 0.5 * (double)(SIM_TIME_NEVER - now)))
        return sim_err_set(err, SIM_ENUMERIC, NULL,
                           "net: a flow from %u to %u at %g bits/s would end after the end of time",
                           f->msg.src, f->msg.dst, rate_bps);
    sim_event ev = net_event(SIM_EV_NET_DONE, s, f);
    f->due_ns = now + llround(delay);
    int rc = sim_engine_schedule(net->eng, llround(delay), &ev, &f->ev);
    if (rc != SIM_OK)
        return sim_err_set(err, rc, NULL, "net: cannot schedule the end of a flow");
    return SIM_OK;
}

static bool heap_less(const ref_net *net, uint32_t a, uint32_t b)
{
    double ka = net->links[a].share_bps, kb = net->links[b].share_bps;
    return ka < kb || (ka == kb && a < b);
}

static void heap_put(ref_net *net, uint32_t i, uint32_t l)
{
    net->heap[i] = l;
    net->links[l].heap_pos = (int32_t)i;
}

/* Restores the heap order around position i after its key changed either way. */
static void heap_fix(ref_net *net, uint32_t i)
{
    uint32_t l = net->heap[i];
    while (i > 0 && heap_less(net, l, net->heap[(i - 1) / 2])) {
        heap_put(net, i, net->heap[(i - 1) / 2]);
        i = (i - 1) / 2;
    }
    for (;;) {
        uint32_t c = 2 * i + 1;
        if (c >= net->heap_n)
            break;
        if (c + 1 < net->heap_n && heap_less(net, net->heap[c + 1], net->heap[c]))
            c++;
        if (!heap_less(net, net->heap[c], l))
            break;
        heap_put(net, i, net->heap[c]);
        i = c;
    }
    heap_put(net, i, l);
}

static void heap_remove(ref_net *net, uint32_t l)
{
    uint32_t i = (uint32_t)net->links[l].heap_pos;
    net->links[l].heap_pos = -1;
    uint32_t last = net->heap[--net->heap_n];
    if (i < net->heap_n) {
        heap_put(net, i, last);
        heap_fix(net, i);
    }
}

/* Collects into net->comp every link reachable from the seeds through shared flows, marking
 * links and flows with the current epoch (no clearing). Returns the number of links. */
static uint32_t collect_component(ref_net *net, const uint32_t *seeds, uint32_t nseeds)
{
    uint64_t epoch = net->epoch;
    uint32_t n = 0;
    for (uint32_t i = 0; i < nseeds; i++) {
        if (net->links[seeds[i]].seen_epoch != epoch) {
            net->links[seeds[i]].seen_epoch = epoch;
            net->comp[n++] = seeds[i];
        }
    }
    for (uint32_t i = 0; i < n; i++) {
        for (int32_t hop = net->links[net->comp[i]].head; hop != NO_HOP;) {
            net_slot *f = &net->slots[hop_slot(hop)];
            hop = f->hop_next[hop_pos(hop)];
            if (f->seen_epoch == epoch)
                continue;
            f->seen_epoch = epoch;
            for (uint32_t k = 0; k < f->nlinks; k++) {
                net_link *l = &net->links[f->links[k]];
                if (l->seen_epoch != epoch) {
                    l->seen_epoch = epoch;
                    net->comp[n++] = f->links[k];
                }
            }
        }
    }
    return n;
}

/* Freezes the unfrozen flows of link l at its share and charges them to their other links. */
static int freeze_link(ref_net *net, uint32_t l, sim_err *err)
{
    double share = net->links[l].share_bps;
    for (int32_t hop = net->links[l].head; hop != NO_HOP;) {
        uint32_t s = hop_slot(hop);
        net_slot *f = &net->slots[s];
        hop = f->hop_next[hop_pos(hop)];
        if (f->frozen_epoch == net->epoch)
            continue;
        f->frozen_epoch = net->epoch;
        for (uint32_t k = 0; k < f->nlinks; k++) {
            uint32_t m = f->links[k];
            net_link *o = &net->links[m];
            if (m == l)
                continue;
            o->rem_bps -= share;
            if (--o->unfrozen == 0) {
                heap_remove(net, m);
                continue;
            }
            o->share_bps = (o->rem_bps > 0.0 ? o->rem_bps : 0.0) / o->unfrozen;
            heap_fix(net, (uint32_t)o->heap_pos);
        }
        int rc = set_rate(net, s, share, err);
        if (rc != SIM_OK)
            return rc;
    }
    return SIM_OK;
}

/* Recomputes max-min fair rates (progressive filling) for the flows connected to the seed
 * links: repeatedly the link with the smallest fair share freezes its flows at that share.
 * Costs O((L + F * MAX_HOPS) log L) for a component of L links and F flows. */
static int recompute(ref_net *net, const uint32_t *seeds, uint32_t nseeds, sim_err *err)
{
    net->stats.recomputes++;
    net->epoch++;
    uint32_t n = collect_component(net, seeds, nseeds);
    net->heap_n = 0;
    for (uint32_t i = 0; i < n; i++) {
        net_link *l = &net->links[net->comp[i]];
        if (l->nflows == 0)
            continue;
        l->rem_bps = l->cap_bps;
        l->unfrozen = l->nflows;
        l->share_bps = l->cap_bps / l->nflows;
        net->heap[net->heap_n] = net->comp[i];
        net->heap_n++;
        heap_fix(net, net->heap_n - 1);
    }
    while (net->heap_n > 0) {
        uint32_t l = net->heap[0];
        heap_remove(net, l);
        int rc = freeze_link(net, l, err);
        if (rc != SIM_OK)
            return rc; /* the next recompute starts from an empty heap anyway */
    }
    return SIM_OK;
}

/* ---- operations ----------------------------------------------------------------------- */

static bool bad_host(const ref_net *net, uint32_t h)
{
    return h >= net->nhosts;
}

static int take_pending(ref_net *net, sim_err *err)
{
    int rc = net->pending_err;
    if (rc == SIM_OK)
        return SIM_OK;
    net->pending_err = SIM_OK;
    return sim_err_set(err, rc, NULL, "net: an earlier host or link change failed: %s",
                       sim_strerror(rc));
}

int ref_net_send(ref_net *net, const sim_net_msg *msg, sim_err *err)
{
    assert(net != NULL && msg != NULL);
    int rc = take_pending(net, err);
    if (rc != SIM_OK)
        return rc;
    if (bad_host(net, msg->src) || bad_host(net, msg->dst))
        return sim_err_set(err, SIM_EINVAL, NULL,
                           "net: send from host %u to host %u: hosts are 0..%u", msg->src, msg->dst,
                           net->nhosts - 1);
    if (net->hosts[msg->src].down)
        return sim_err_set(err, SIM_EINVAL, NULL, "net: send from host %u, which is down",
                           msg->src);
    uint32_t s;
    rc = alloc_slot(net, &s, err);
    if (rc != SIM_OK)
        return rc;
    net_slot *f = &net->slots[s];
    sim_time now = sim_engine_now(net->eng);
    f->msg = *msg;
    f->msg.sent_ns = now;
    f->nlinks = path_links(net, msg->src, msg->dst, f->links);
    f->state = SLOT_LATENCY;
    f->rate_bps = 0.0;
    f->instant_ns = -1;
    f->reverted = false;
    f->remaining_bytes = (double)msg->bytes;
    f->last_ns = now;
    sim_time lat = 0;
    if (msg->src != msg->dst) {
        lat = ref_net_path_latency(net, msg->src, msg->dst);
        lat = add_sat(lat, net->hosts[msg->src].extra_ns);
        lat = add_sat(lat, net->hosts[msg->dst].extra_ns);
    }
    sim_event ev = net_event(SIM_EV_NET_START, s, f);
    rc = sim_engine_schedule(net->eng, lat, &ev, &f->ev);
    if (rc != SIM_OK) {
        free_slot(net, s);
        return sim_err_set(err, rc, NULL, "net: cannot schedule a message from %u to %u", msg->src,
                           msg->dst);
    }
    net->hosts[msg->src].sent_bytes += msg->bytes;
    net->hosts[msg->src].inflight++;
    net->hosts[msg->dst].inflight++;
    net->stats.sent++;
    net->stats.in_flight++;
    return SIM_OK;
}

/* Ends message s: delivers it into *out (returns 1) unless its destination is down (drops
 * it, returns 0). Frees the slot. */
static int finish(ref_net *net, uint32_t s, sim_net_msg *out)
{
    net_slot *f = &net->slots[s];
    int delivered = !net->hosts[f->msg.dst].down;
    net->last_reverted = f->reverted;
    net->hosts[f->msg.src].inflight--;
    net->hosts[f->msg.dst].inflight--;
    net->stats.in_flight--;
    if (delivered) {
        *out = f->msg;
        net->hosts[f->msg.dst].received_bytes += f->msg.bytes;
        net->stats.delivered++;
    } else {
        net->stats.dropped++;
        if (net->on_drop != NULL)
            net->on_drop(net->drop_ud, &f->msg);
    }
    free_slot(net, s);
    return delivered;
}

static int on_start(ref_net *net, uint32_t s, sim_net_msg *out, sim_err *err)
{
    net_slot *f = &net->slots[s];
    f->ev = 0;
    if (f->nlinks == 0 || f->msg.bytes == 0 || net->hosts[f->msg.dst].down)
        return finish(net, s, out);
    f->state = SLOT_FLOW;
    f->last_ns = sim_engine_now(net->eng);
    join_links(net, s);
    return recompute(net, f->links, f->nlinks, err);
}

static int on_done(ref_net *net, uint32_t s, sim_net_msg *out, sim_err *err)
{
    net_slot *f = &net->slots[s];
    f->ev = 0;
    leave_links(net, s);
    int rc = recompute(net, f->links, f->nlinks, err); /* f stays valid: no allocation */
    int delivered = finish(net, s, out);
    return rc != SIM_OK ? rc : delivered;
}

int ref_net_handle(ref_net *net, const sim_event *ev, sim_net_msg *out, sim_err *err)
{
    assert(net != NULL && ev != NULL && out != NULL);
    int rc = take_pending(net, err);
    if (rc != SIM_OK)
        return rc;
    if (ev->kind != SIM_EV_NET_START && ev->kind != SIM_EV_NET_DONE)
        return sim_err_set(err, SIM_EINVAL, NULL, "net: event kind %u is not a network event",
                           ev->kind);
    /* Stale events (a slot since freed or reused) are ignored. */
    if (ev->arg[0] >= net->cap)
        return 0;
    uint32_t s = (uint32_t)ev->arg[0];
    net_slot *f = &net->slots[s];
    if (f->gen != ev->arg[1])
        return 0;
    if (ev->kind == SIM_EV_NET_START)
        return f->state == SLOT_LATENCY ? on_start(net, s, out, err) : 0;
    return f->state == SLOT_FLOW ? on_done(net, s, out, err) : 0;
}

void ref_net_set_host_down(ref_net *net, uint32_t host, bool down)
{
    assert(net != NULL && !bad_host(net, host));
    if (bad_host(net, host) || net->hosts[host].down == down)
        return;
    net->hosts[host].down = down;
    if (!down)
        return;
    /* A rare event, so scanning the pool is fine. The links the aborted flows leave (marked
     * with a fresh epoch so each is taken once) seed one recompute; collect_component reads
     * them in place from net->comp, never writing ahead of the seed it is reading. */
    net->epoch++;
    uint32_t nseeds = 0;
    for (size_t i = 0; i < net->cap; i++) {
        net_slot *f = &net->slots[i];
        if (f->state == SLOT_FREE || (f->msg.src != host && f->msg.dst != host))
            continue;
        if (f->ev != 0)
            sim_engine_cancel(net->eng, f->ev);
        if (f->state == SLOT_FLOW) {
            leave_links(net, (uint32_t)i);
            for (uint32_t k = 0; k < f->nlinks; k++) {
                net_link *l = &net->links[f->links[k]];
                if (l->seen_epoch != net->epoch) {
                    l->seen_epoch = net->epoch;
                    net->comp[nseeds++] = f->links[k];
                }
            }
        }
        net->hosts[f->msg.src].inflight--;
        net->hosts[f->msg.dst].inflight--;
        net->stats.in_flight--;
        net->stats.dropped++;
        if (net->on_drop != NULL)
            net->on_drop(net->drop_ud, &f->msg);
        free_slot(net, (uint32_t)i);
    }
    if (nseeds == 0)
        return;
    int rc = recompute(net, net->comp, nseeds, NULL);
    if (rc != SIM_OK && net->pending_err == SIM_OK)
        net->pending_err = rc;
}

bool ref_net_host_down(const ref_net *net, uint32_t host)
{
    assert(net != NULL);
    return !bad_host(net, host) && net->hosts[host].down;
}

void ref_net_set_extra_latency(ref_net *net, uint32_t host, sim_time extra_ns)
{
    assert(net != NULL && !bad_host(net, host) && extra_ns >= 0);
    if (bad_host(net, host))
        return;
    net->hosts[host].extra_ns = extra_ns > 0 ? extra_ns : 0;
}

int ref_net_set_bandwidth_factor(ref_net *net, uint32_t host, double factor, sim_err *err)
{
    assert(net != NULL);
    if (bad_host(net, host))
        return sim_err_set(err, SIM_EINVAL, NULL,
                           "net: bandwidth factor for host %u: hosts are 0..%u", host,
                           net->nhosts - 1);
    if (!(factor > 0.0 && factor <= 1.0))
        return sim_err_set(err, SIM_EINVAL, NULL,
                           "net: bandwidth factor for host %u must be in (0, 1], got %g", host,
                           factor);
    uint32_t seeds[2] = { up_link(host), down_link(host) };
    for (size_t i = 0; i < 2; i++)
        net->links[seeds[i]].cap_bps = net->links[seeds[i]].base_bps * factor;
    return recompute(net, seeds, 2, err);
}

sim_time ref_net_path_latency(const ref_net *net, uint32_t src, uint32_t dst)
{
    assert(net != NULL);
    if (bad_host(net, src) || bad_host(net, dst) || src == dst)
        return 0;
    return net->hosts[src].latency_ns + net->hosts[dst].latency_ns +
           sim_net_topo_fabric_latency(&net->topo, src, dst);
}

double ref_net_path_bandwidth_bps(const ref_net *net, uint32_t src, uint32_t dst)
{
    assert(net != NULL);
    if (bad_host(net, src) || bad_host(net, dst))
        return 0.0;
    if (src == dst)
        return INFINITY;
    uint32_t links[MAX_HOPS];
    uint8_t n = path_links(net, src, dst, links);
    double b = INFINITY;
    for (uint8_t k = 0; k < n; k++)
        b = fmin(b, net->links[links[k]].cap_bps);
    return b;
}

void ref_net_host_bytes(const ref_net *net, uint32_t host, uint64_t *sent, uint64_t *received)
{
    assert(net != NULL);
    bool bad = bad_host(net, host);
    if (sent != NULL)
        *sent = bad ? 0 : net->hosts[host].sent_bytes;
    if (received != NULL)
        *received = bad ? 0 : net->hosts[host].received_bytes;
}

void ref_net_set_drop_fn(ref_net *net, sim_net_drop_fn fn, void *ud)
{
    net->on_drop = fn;
    net->drop_ud = ud;
}

uint32_t ref_net_host_inflight(const ref_net *net, uint32_t host)
{
    assert(net != NULL);
    return bad_host(net, host) ? 0 : net->hosts[host].inflight;
}

bool ref_net_flow_at(const ref_net *net, size_t n, uint32_t *src, uint32_t *dst, double *rate_bps)
{
    assert(net != NULL);
    if (n >= net->nactive)
        return false;
    const net_slot *f = &net->slots[net->active[n]];
    if (src != NULL)
        *src = f->msg.src;
    if (dst != NULL)
        *dst = f->msg.dst;
    if (rate_bps != NULL)
        *rate_bps = f->rate_bps;
    return true;
}

void ref_net_stats_get(const ref_net *net, sim_net_stats *stats)
{
    assert(net != NULL && stats != NULL);
    *stats = net->stats;
    stats->active_flows = net->nactive;
}

bool ref_net_last_reverted(const ref_net *net)
{
    return net->last_reverted;
}
