/* A frozen copy of the per-instant solver (net/net_model.c, net/net_solver.c and net/net_state.h)
 * as it was before shared-bottleneck groups: see net_pi_ref.h. */
#include "net_pi_ref.h"

#include <assert.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "net_pi_ref_state.h"

/* ---- small helpers -------------------------------------------------------------------- */

static uint32_t up_link(uint32_t h)
{
    return 2 * h;
}

static uint32_t down_link(uint32_t h)
{
    return 2 * h + 1;
}

/* Writes the links of the path src -> dst to out and returns their number (0 if src == dst). */
static uint8_t path_links(const pi_net *net, uint32_t src, uint32_t dst, uint32_t out[MAX_HOPS])
{
    return sim_net_topo_path(&net->topo, src, dst, out);
}

/* a + b for non-negative times, saturating at SIM_TIME_NEVER. */
static sim_time add_sat(sim_time a, sim_time b)
{
    return a > SIM_TIME_NEVER - b ? SIM_TIME_NEVER : a + b;
}

static int flush_hook(void *ud, sim_engine *eng, sim_err *err)
{
    (void)eng;
    return pi_net_solve(ud, err);
}

/* ---- lifecycle ------------------------------------------------------------------------ */

static int check_config(const sim_net_config *cfg, sim_err *err)
{
    if (cfg->topology != SIM_TOPO_STAR && cfg->topology != SIM_TOPO_RACKS &&
        cfg->topology != SIM_TOPO_FAT_TREE)
        return sim_err_set(err, SIM_EINVAL, NULL,
                           "net: topology must be star, racks or fat_tree, got %d",
                           (int)cfg->topology);
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
static void free_range(pi_net *net, size_t from, size_t to)
{
    for (size_t i = to; i-- > from;) {
        net->slots[i].state = SLOT_FREE;
        net->slots[i].next_free = net->free_head;
        net->free_head = (int32_t)i;
    }
}

static void init_links(pi_net *net, const sim_net_config *cfg)
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

pi_net *pi_net_create(const sim_net_config *cfg, sim_engine *eng, sim_err *err)
{
    assert(cfg != NULL && eng != NULL);
    if (check_config(cfg, err) != SIM_OK)
        return NULL;
    pi_net *net = calloc(1, sizeof(*net));
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
    net->dirty = calloc(net->nlinks, sizeof(*net->dirty));
    net->slots = calloc(net->cap, sizeof(*net->slots));
    net->active = calloc(net->cap, sizeof(*net->active));
    if (net->hosts == NULL || net->links == NULL || net->comp == NULL || net->heap == NULL ||
        net->dirty == NULL || net->slots == NULL || net->active == NULL)
        goto fail_free_net;
    init_links(net, cfg);
    net->free_head = NO_SLOT;
    free_range(net, 0, net->cap);
    sim_engine_set_flush(eng, flush_hook, net);
    return net;

fail_free_net:
    pi_net_destroy(net);
fail:
    sim_err_set(err, SIM_ENOMEM, NULL, "net: out of memory for %u hosts", cfg->nhosts);
    return NULL;
}

void pi_net_destroy(pi_net *net)
{
    if (net == NULL)
        return;
    sim_engine_set_flush(net->eng, NULL, NULL);
    free(net->active);
    free(net->slots);
    free(net->dirty);
    free(net->heap);
    free(net->comp);
    free(net->links);
    free(net->hosts);
    free(net);
}

/* Doubles the slot pool (the only allocation after creation). */
static int grow_pool(pi_net *net, sim_err *err)
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

static int alloc_slot(pi_net *net, uint32_t *out, sim_err *err)
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

static void free_slot(pi_net *net, uint32_t s)
{
    net_slot *f = &net->slots[s];
    f->state = SLOT_FREE;
    f->gen++;
    f->ev = 0;
    f->next_free = net->free_head;
    net->free_head = (int32_t)s;
}

/* ---- flows on links ------------------------------------------------------------------- */

static void join_links(pi_net *net, uint32_t s)
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

static void leave_links(pi_net *net, uint32_t s)
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

/* ---- operations ----------------------------------------------------------------------- */

static bool bad_host(const pi_net *net, uint32_t h)
{
    return h >= net->nhosts;
}

static int take_pending(pi_net *net, sim_err *err)
{
    int rc = net->pending_err;
    if (rc == SIM_OK)
        return SIM_OK;
    net->pending_err = SIM_OK;
    return sim_err_set(err, rc, NULL, "net: an earlier host or link change failed: %s",
                       sim_strerror(rc));
}

int pi_net_send(pi_net *net, const sim_net_msg *msg, sim_err *err)
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
    f->remaining_bytes = (double)msg->bytes;
    f->last_ns = now;
    sim_time lat = 0;
    if (msg->src != msg->dst) {
        lat = pi_net_path_latency(net, msg->src, msg->dst);
        lat = add_sat(lat, net->hosts[msg->src].extra_ns);
        lat = add_sat(lat, net->hosts[msg->dst].extra_ns);
    }
    sim_event ev = pi_net_slot_event(SIM_EV_NET_START, s, f);
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
static int finish(pi_net *net, uint32_t s, sim_net_msg *out)
{
    net_slot *f = &net->slots[s];
    int delivered = !net->hosts[f->msg.dst].down;
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

static int on_start(pi_net *net, uint32_t s, sim_net_msg *out, sim_err *err)
{
    net_slot *f = &net->slots[s];
    f->ev = 0;
    if (f->nlinks == 0 || f->msg.bytes == 0 || net->hosts[f->msg.dst].down)
        return finish(net, s, out);
    f->state = SLOT_FLOW;
    f->last_ns = sim_engine_now(net->eng);
    join_links(net, s);
    int rc = SIM_OK;
    if (pi_net_rate_alone(net, s, &rc, err))
        return rc;
    for (uint32_t k = 0; k < f->nlinks; k++)
        pi_net_mark_dirty(net, f->links[k]);
    return SIM_OK;
}

static int on_done(pi_net *net, uint32_t s, sim_net_msg *out)
{
    net_slot *f = &net->slots[s];
    f->ev = 0;
    leave_links(net, s);
    /* A flow that was alone on its links leaves nobody to re-rate. */
    bool alone = true;
    for (uint32_t k = 0; k < f->nlinks; k++)
        alone = alone && net->links[f->links[k]].nflows == 0;
    if (alone) {
        net->stats.recomputes++;
    } else {
        for (uint32_t k = 0; k < f->nlinks; k++)
            pi_net_mark_dirty(net, f->links[k]);
    }
    return finish(net, s, out);
}

int pi_net_handle(pi_net *net, const sim_event *ev, sim_net_msg *out, sim_err *err)
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
    return f->state == SLOT_FLOW ? on_done(net, s, out) : 0;
}

void pi_net_set_host_down(pi_net *net, uint32_t host, bool down)
{
    assert(net != NULL && !bad_host(net, host));
    if (bad_host(net, host) || net->hosts[host].down == down)
        return;
    net->hosts[host].down = down;
    if (!down)
        return;
    /* A rare event, so scanning the pool is fine. The links the aborted flows leave are
     * recomputed with the other changes of this instant. */
    for (size_t i = 0; i < net->cap; i++) {
        net_slot *f = &net->slots[i];
        if (f->state == SLOT_FREE || (f->msg.src != host && f->msg.dst != host))
            continue;
        if (f->ev != 0)
            sim_engine_cancel(net->eng, f->ev);
        if (f->state == SLOT_FLOW) {
            leave_links(net, (uint32_t)i);
            for (uint32_t k = 0; k < f->nlinks; k++)
                pi_net_mark_dirty(net, f->links[k]);
        }
        net->hosts[f->msg.src].inflight--;
        net->hosts[f->msg.dst].inflight--;
        net->stats.in_flight--;
        net->stats.dropped++;
        if (net->on_drop != NULL)
            net->on_drop(net->drop_ud, &f->msg);
        free_slot(net, (uint32_t)i);
    }
}

bool pi_net_host_down(const pi_net *net, uint32_t host)
{
    assert(net != NULL);
    return !bad_host(net, host) && net->hosts[host].down;
}

void pi_net_set_extra_latency(pi_net *net, uint32_t host, sim_time extra_ns)
{
    assert(net != NULL && !bad_host(net, host) && extra_ns >= 0);
    if (bad_host(net, host))
        return;
    net->hosts[host].extra_ns = extra_ns > 0 ? extra_ns : 0;
}

int pi_net_set_bandwidth_factor(pi_net *net, uint32_t host, double factor, sim_err *err)
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
    for (size_t i = 0; i < 2; i++) {
        net->links[seeds[i]].cap_bps = net->links[seeds[i]].base_bps * factor;
        pi_net_mark_dirty(net, seeds[i]);
    }
    return SIM_OK;
}

sim_time pi_net_path_latency(const pi_net *net, uint32_t src, uint32_t dst)
{
    assert(net != NULL);
    if (bad_host(net, src) || bad_host(net, dst) || src == dst)
        return 0;
    return net->hosts[src].latency_ns + net->hosts[dst].latency_ns +
           sim_net_topo_fabric_latency(&net->topo, src, dst);
}

double pi_net_path_bandwidth_bps(const pi_net *net, uint32_t src, uint32_t dst)
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

void pi_net_host_bytes(const pi_net *net, uint32_t host, uint64_t *sent, uint64_t *received)
{
    assert(net != NULL);
    bool bad = bad_host(net, host);
    if (sent != NULL)
        *sent = bad ? 0 : net->hosts[host].sent_bytes;
    if (received != NULL)
        *received = bad ? 0 : net->hosts[host].received_bytes;
}

void pi_net_set_drop_fn(pi_net *net, sim_net_drop_fn fn, void *ud)
{
    net->on_drop = fn;
    net->drop_ud = ud;
}

uint32_t pi_net_host_inflight(const pi_net *net, uint32_t host)
{
    assert(net != NULL);
    return bad_host(net, host) ? 0 : net->hosts[host].inflight;
}

bool pi_net_flow_at(pi_net *net, size_t n, uint32_t *src, uint32_t *dst, double *rate_bps)
{
    assert(net != NULL);
    /* Rates are settled once per instant: settle them now for the caller to see. */
    int rc = sim_engine_flush(net->eng, NULL);
    if (rc != SIM_OK && net->pending_err == SIM_OK)
        net->pending_err = rc;
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

void pi_net_stats_get(const pi_net *net, sim_net_stats *stats)
{
    assert(net != NULL && stats != NULL);
    *stats = net->stats;
    stats->active_flows = net->nactive;
}
