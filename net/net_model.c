#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "net/net.h"
#include "net/net_bundle.h"
#include "net/net_group.h"
#include "net/net_pool.h"
#include "net/net_solo.h"
#include "net/net_solver.h"
#include "net/net_state.h"

/* ---- small helpers -------------------------------------------------------------------- */

/* Writes the links of the path src -> dst to out and returns their number (0 if src == dst). */
static uint8_t path_links(const sim_net *net, uint32_t src, uint32_t dst, uint32_t out[MAX_HOPS])
{
    return sim_net_topo_path(&net->topo, src, dst, out);
}

/* a + b for non-negative times, saturating at SIM_TIME_NEVER. */
static sim_time add_sat(sim_time a, sim_time b)
{
    return a > SIM_TIME_NEVER - b ? SIM_TIME_NEVER : a + b;
}

static inline int drain(sim_net *net, sim_err *err);
static int rearm_now(sim_net *net, sim_err *err);

/* A bundle whose DONE its caller stopped delivering (sim_net_next) gets a DONE again, now. */
static inline int rearm(sim_net *net, sim_err *err)
{
    return net->delivering == NO_SLOT ? SIM_OK : rearm_now(net, err);
}

/* The flush: first the starts that came before it (all those of the instant when the clock
 * leaves it), whose stamps record the number of this flush. */
int sim_net_flush_hook(void *ud, sim_engine *eng, sim_err *err)
{
    (void)eng;
    int rc = rearm(ud, err);
    rc = rc != SIM_OK ? rc : drain(ud, err);
    return rc != SIM_OK ? rc : sim_net_solve(ud, err);
}

/* ---- flows on links ------------------------------------------------------------------- */

/* Flow s (nb messages) joins the head of its links' hop lists and net->active. */
static inline void join_links(sim_net *net, uint32_t s)
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
        l->nflows += f->nb;
    }
    net->nmembers_active += f->nb - 1;
    f->active_pos = (uint32_t)net->nactive;
    net->active[net->nactive++] = s;
    if (net_active_flows(net) > net->stats.peak_flows)
        net->stats.peak_flows = net_active_flows(net);
}

static void leave_links(sim_net *net, uint32_t s)
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
        l->nflows -= f->nb;
    }
    net->nmembers_active -= f->nb - 1;
    uint32_t last = net->active[--net->nactive];
    net->active[f->active_pos] = last;
    net->slots[last].active_pos = f->active_pos;
}

/* One message of bundle s leaves its links, the others staying (s's nb already went down). */
static void leave_one(sim_net *net, uint32_t s)
{
    const net_slot *f = &net->slots[s];
    for (uint32_t k = 0; k < f->nlinks; k++)
        net->links[f->links[k]].nflows--;
    net->nmembers_active--;
}

/* Resolves the claim of solo s before anything looks at or changes one of its links. If it
 * has started (net/net_solo.h) it becomes the flow it would be had it started alone: it joins
 * its links now, rated since its start (last_ns) for all its bytes, its DONE kept; with no
 * flow on its links until now, its place at the tail of their hop lists, its join order and
 * its stamp are what its START would have given. If not, it becomes an ordinary message: its
 * DONE is cancelled, it starts when the drain reaches its place (drain), and a START event at
 * its start time makes sure a network call comes by then. */
static int materialize(sim_net *net, uint32_t s)
{
    net_slot *f = &net->slots[s];
    if (sim_net_solo_unclaim(net, s)) {
        f->state = SLOT_FLOW;
        join_links(net, s);
        return SIM_OK;
    }
    sim_engine_cancel(net->eng, f->ev);
    f->state = SLOT_LATENCY;
    f->rate_bps = 0.0;
    sim_event ev = sim_net_slot_event(SIM_EV_NET_START, s, f);
    return sim_engine_schedule_at(net->eng, f->last_ns, &ev, &f->ev);
}

/* Resolves the claims on the n links `links`. */
static int materialize_links(sim_net *net, const uint32_t *links, uint32_t n)
{
    int rc = SIM_OK;
    for (uint32_t k = 0; k < n; k++)
        if (net->links[links[k]].solo != NO_SLOT && rc == SIM_OK)
            rc = materialize(net, (uint32_t)net->links[links[k]].solo);
    return rc;
}

/* ---- operations ----------------------------------------------------------------------- */

static int take_pending(sim_net *net, sim_err *err)
{
    int rc = net->pending_err;
    if (rc == SIM_OK)
        return SIM_OK;
    net->pending_err = SIM_OK;
    return sim_err_set(err, rc, NULL, "net: an earlier host or link change failed: %s",
                       sim_strerror(rc));
}

/* Slot f takes message msg, sent now, in its latency phase; returns that latency. */
static inline sim_time fill_slot(sim_net *net, net_slot *f, const sim_net_msg *msg)
{
    sim_time now = sim_engine_now(net->eng);
    f->msg = *msg;
    f->msg.sent_ns = now;
    net_hosts_link(net, (uint32_t)(f - net->slots));
    f->nlinks = path_links(net, msg->src, msg->dst, f->links);
    f->state = SLOT_LATENCY;
    f->group = -1;
    f->nb = 1;
    f->bnext = NO_SLOT;
    f->carrier = NO_SLOT;
    f->solo_wait = false;
    f->solo_seq = UINT64_MAX;
    f->rate_bps = 0.0;
    f->remaining_bytes = (double)msg->bytes;
    f->last_ns = now;
    if (msg->src == msg->dst)
        return 0;
    sim_time lat = sim_net_path_latency(net, msg->src, msg->dst);
    lat = add_sat(lat, net->hosts[msg->src].extra_ns);
    return add_sat(lat, net->hosts[msg->dst].extra_ns);
}

int sim_net_send(sim_net *net, const sim_net_msg *msg, sim_err *err)
{
    assert(net != NULL && msg != NULL);
    int rc = take_pending(net, err);
    if (rc != SIM_OK)
        return rc;
    if (net_bad_host(net, msg->src) || net_bad_host(net, msg->dst))
        return sim_err_set(err, SIM_EINVAL, NULL,
                           "net: send from host %u to host %u: hosts are 0..%u", msg->src, msg->dst,
                           net->nhosts - 1);
    if (net->hosts[msg->src].down)
        return sim_err_set(err, SIM_EINVAL, NULL, "net: send from host %u, which is down",
                           msg->src);
    /* The starts that came before this send take their links first. */
    rc = drain(net, err);
    if (rc != SIM_OK)
        return rc;
    uint32_t s;
    rc = net_alloc_slot(net, &s, err);
    if (rc != SIM_OK)
        return rc;
    net_slot *f = &net->slots[s];
    sim_time lat = fill_slot(net, f, msg);
    sim_time t_start = add_sat(f->msg.sent_ns, lat);
    if (sim_net_solo_try(net, s, t_start)) {
        net->btail = NO_SLOT;
    } else if (!net->bundles || !sim_net_bundle_join(net, s, t_start)) {
        sim_event ev = sim_net_slot_event(SIM_EV_NET_START, s, f);
        rc = sim_engine_schedule(net->eng, lat, &ev, &f->ev);
        if (rc != SIM_OK) {
            net_free_slot(net, s);
            return sim_err_set(err, rc, NULL, "net: cannot schedule a message from %u to %u",
                               msg->src, msg->dst);
        }
        if (net->bundles)
            sim_net_bundle_note(net, s, t_start);
    }
    net_count_bytes(&net->hosts[msg->src].sent_bytes, &net->hosts[msg->src].sent_wraps, msg->bytes);
    net->hosts[msg->src].inflight++;
    net->hosts[msg->dst].inflight++;
    net->stats.sent++;
    net->stats.between +=
        sim_net_topo_node(&net->topo, msg->src) != sim_net_topo_node(&net->topo, msg->dst);
    net->stats.in_flight++;
    return SIM_OK;
}

/* Ends message s: delivers it into *out (returns 1) unless its destination is down (drops
 * it, returns 0). Frees the slot. */
static int finish(sim_net *net, uint32_t s, sim_net_msg *out)
{
    net_slot *f = &net->slots[s];
    int delivered = !net->hosts[f->msg.dst].down;
    net->hosts[f->msg.src].inflight--;
    net->hosts[f->msg.dst].inflight--;
    net->stats.in_flight--;
    if (delivered) {
        *out = f->msg;
        net_host *d = &net->hosts[f->msg.dst];
        net_count_bytes(&d->received_bytes, &d->received_wraps, f->msg.bytes);
        net->stats.delivered++;
    } else {
        net->stats.dropped++;
        if (net->on_drop != NULL)
            net->on_drop(net->drop_ud, &f->msg);
    }
    net_free_slot(net, s);
    return delivered;
}

static int start_split(sim_net *net, uint32_t s, sim_err *err);

/* Bundle s (nb > 1) about to start: whether it may start as one flow, and the rate its first
 * message would get if it started alone on its links (0: not alone). That message's START would
 * rate it so, and the next START would join it (net/net_bundle.h); unless that rating ended it
 * within the start ns or past the end of time: then the messages start one by one. */
static bool bundle_may_start(const sim_net *net, const net_slot *f, double *lone)
{
    *lone = INFINITY;
    for (uint32_t k = 0; k < f->nlinks; k++) {
        const net_link *l = &net->links[f->links[k]];
        if (l->nflows != 0) {
            *lone = 0.0;
            return true;
        }
        *lone = l->cap_bps < *lone ? l->cap_bps : *lone;
    }
    sim_time now = sim_engine_now(net->eng), at;
    return net_end_at(f->remaining_bytes, *lone, now, &at) && at != now;
}

/* Message s's flow starts now: it joins its links (whose solos are resolved first) and is
 * rated alone, joins a group, or waits for the flush. A bundle joins them once for its nb
 * messages, as their STARTs one after the other would have: the first rated alone if it was
 * (its rate kept until the flush rates them all), the others joining it. */
static inline int start_flow(sim_net *net, uint32_t s, sim_err *err)
{
    net_slot *f = &net->slots[s];
    int rc = materialize_links(net, f->links, f->nlinks);
    if (rc != SIM_OK)
        return sim_err_set(err, rc, NULL, "net: cannot schedule the start of a message");
    double lone = 0.0;
    if (f->nb > 1 && !bundle_may_start(net, f, &lone))
        return start_split(net, s, err);
    f->state = SLOT_FLOW;
    f->last_ns = sim_engine_now(net->eng);
    f->join_seq = net->starts;
    net->starts += f->nb;
    f->stamp_flush = net->flushes + 1;
    join_links(net, s);
    if (f->nb > 1 && lone > 0.0) {
        f->rate_bps = lone;
        net->stats.recomputes++;
        net->stats.rerates++;
    } else if (f->nb == 1 && sim_net_rate_alone(net, s, &rc, err)) {
        return rc;
    }
    if (sim_net_group_try_join(net, s))
        return SIM_OK;
    for (uint32_t k = 0; k < f->nlinks; k++)
        sim_net_mark_dirty(net, f->links[k]);
    return SIM_OK;
}

/* Bundle s starts as its messages one by one, as their STARTs would have started them. */
static int start_split(sim_net *net, uint32_t s, sim_err *err)
{
    int32_t m = sim_net_bundle_split(net, s);
    int rc = start_flow(net, s, err);
    while (m != NO_SLOT && rc == SIM_OK) {
        int32_t next = net->slots[m].bnext;
        net->slots[m].bnext = NO_SLOT;
        rc = start_flow(net, (uint32_t)m, err);
        m = next;
    }
    return rc;
}

static int on_start(sim_net *net, uint32_t s, sim_net_msg *out, sim_err *err)
{
    net_slot *f = &net->slots[s];
    f->ev = 0;
    if (f->nlinks == 0 || f->msg.bytes == 0 || net->hosts[f->msg.dst].down)
        return finish(net, s, out);
    return start_flow(net, s, err);
}

/* drain's work once a place is due. */
static int drain_due(sim_net *net, sim_time now, uint64_t seq, sim_err *err)
{
    int rc = SIM_OK;
    for (int32_t s; (s = sim_net_solo_next(net, now, seq)) != NO_SLOT;) {
        net_slot *f = &net->slots[s];
        if (f->state != SLOT_LATENCY)
            continue;
        sim_engine_cancel(net->eng, f->ev);
        f->ev = 0;
        int r = start_flow(net, (uint32_t)s, err);
        rc = rc != SIM_OK ? rc : r;
    }
    return rc;
}

/* Brings the solos up to where the run stands in the engine's order (net/net_solo.h): the
 * event being dispatched, or, between events, the end of the instant. Counts the solos that
 * started by then, and starts the demoted messages whose START would have come by then, each
 * at its place among them. A demoted message's own START event, if still pending, is
 * cancelled (if it is the event being handled, its id is already stale). Such a message
 * cannot end here: its destination is up (a failure drops it) and it has bytes and links. */
static inline int drain(sim_net *net, sim_err *err)
{
    sim_time now = sim_engine_now(net->eng);
    if (!sim_net_solo_due(net, now, UINT64_MAX))
        return SIM_OK; /* nothing due in this instant at all: no need to ask where it stands */
    return drain_due(net, now, sim_engine_current_seq(net->eng), err);
}

/* drain for the calls that return nothing: an error waits for the next send or handle. */
static void drain_void(sim_net *net)
{
    sim_err err;
    int rc = drain(net, &err);
    if (rc != SIM_OK && net->pending_err == SIM_OK)
        net->pending_err = rc;
}

/* Bundle s's DONE delivers its next member: one message leaves the links, the rest staying on
 * them, as that message's own DONE would have left them (a group's center, or every link,
 * marked), and the next calls (sim_net_next) deliver the others. */
static int deliver_member(sim_net *net, uint32_t s, sim_net_msg *out)
{
    net_slot *f = &net->slots[s];
    uint32_t m = sim_net_bundle_pop(net, s);
    leave_one(net, s);
    net->delivering = (int32_t)s;
    if (f->group >= 0) {
        sim_net_group_leave_one(net, s);
    } else {
        for (uint32_t k = 0; k < f->nlinks; k++)
            sim_net_mark_dirty(net, f->links[k]);
    }
    finish(net, m, out); /* its destination is up: a failure would have dropped it */
    return 2;
}

static inline int on_done(sim_net *net, uint32_t s, sim_net_msg *out)
{
    net_slot *f = &net->slots[s];
    f->ev = 0;
    if (f->nb > 1)
        return deliver_member(net, s, out);
    leave_links(net, s);
    if (f->group >= 0) {
        if (sim_net_group_leave(net, s))
            net->stats.recomputes++;
        return finish(net, s, out);
    }
    /* A flow that was alone on its links leaves nobody to re-rate. */
    bool alone = true;
    for (uint32_t k = 0; k < f->nlinks; k++)
        alone = alone && net->links[f->links[k]].nflows == 0;
    if (alone) {
        net->stats.recomputes++;
    } else {
        for (uint32_t k = 0; k < f->nlinks; k++)
            sim_net_mark_dirty(net, f->links[k]);
    }
    return finish(net, s, out);
}

int sim_net_next(sim_net *net, sim_net_msg *out, sim_err *err)
{
    (void)err;
    if (net->delivering == NO_SLOT)
        return 0;
    uint32_t s = (uint32_t)net->delivering;
    if (net->slots[s].nb > 1)
        return deliver_member(net, s, out);
    net->delivering = NO_SLOT;
    return on_done(net, s, out);
}

static int rearm_now(sim_net *net, sim_err *err)
{
    uint32_t s = (uint32_t)net->delivering;
    net_slot *f = &net->slots[s];
    net->delivering = NO_SLOT;
    sim_event ev = sim_net_slot_event(SIM_EV_NET_DONE, s, f);
    int rc = sim_engine_schedule_at(net->eng, sim_engine_now(net->eng), &ev, &f->ev);
    if (rc != SIM_OK)
        return sim_err_set(err, rc, NULL, "net: cannot schedule the end of a flow");
    return SIM_OK;
}

/* The end of a solo that nothing touched: a lone flow's end, which re-rates nobody. */
static int on_solo_done(sim_net *net, uint32_t s, sim_net_msg *out)
{
    net_slot *f = &net->slots[s];
    f->ev = 0;
    bool started = sim_net_solo_unclaim(net, s);
    assert(started); /* sim_net_handle drained up to this very event */
    (void)started;
    net->stats.recomputes++;
    return finish(net, s, out);
}

int sim_net_handle(sim_net *net, const sim_event *ev, sim_net_msg *out, sim_err *err)
{
    assert(net != NULL && ev != NULL && out != NULL);
    int rc = take_pending(net, err);
    rc = rc != SIM_OK ? rc : rearm(net, err);
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
    /* drain, its test in line: most events find no start due. A solo's own DONE (promoted or
     * not) stands where the DONE its START would have scheduled would stand (start_mark, set
     * when it was counted, after its DONE was scheduled): the starts without an event of their
     * own that came before that place come before its end, as their STARTs did. The first
     * drain counts the solo itself if no network call did yet. */
    sim_time now = sim_engine_now(net->eng);
    if (sim_net_solo_due(net, now, ev->seq)) {
        rc = drain_due(net, now, ev->seq, err);
        if (rc != SIM_OK)
            return rc;
    }
    if (f->solo_seq == ev->seq && sim_net_solo_due(net, now, f->start_mark - 1)) {
        rc = drain_due(net, now, f->start_mark - 1, err);
        if (rc != SIM_OK)
            return rc;
    }
    if (ev->kind == SIM_EV_NET_START)
        return f->state == SLOT_LATENCY ? on_start(net, s, out, err) : 0;
    if (f->state == SLOT_SOLO)
        return on_solo_done(net, s, out);
    return f->state == SLOT_FLOW ? on_done(net, s, out) : 0;
}

void sim_net_set_host_down(sim_net *net, uint32_t host, bool down)
{
    assert(net != NULL && !net_bad_host(net, host));
    if (net_bad_host(net, host) || net->hosts[host].down == down)
        return;
    if (down) {
        sim_err err;
        int rc = rearm(net, &err);
        if (rc != SIM_OK && net->pending_err == SIM_OK)
            net->pending_err = rc;
        drain_void(net);
    }
    net->hosts[host].down = down;
    if (!down)
        return;
    /* The links the aborted flows leave are recomputed with the other changes of this instant,
     * as plain flows; so are those of a solo that had started, as the lone flow it stands for.
     * A scan of the links, skipped when there is nothing to find: failures of N hosts at one
     * instant (a rule naming them) scanned N times, 4.5 s for 10,000. The host's messages are
     * taken from its list in slot order, the order of a scan of the pool: a scan for each
     * failure was quadratic in the messages in flight (issue 38: 3,000 members of a joined ring
     * failing, 82% of 51 s). */
    for (uint32_t l = 0; l < net->nlinks && net->ngrouped > 0; l++)
        if (net->links[l].grouped)
            sim_net_group_dissolve(net, l);
    size_t n = net->hosts[host].inflight > 0 ? sim_net_host_slots(net, host) : 0;
    for (size_t j = 0; j < n && net->hosts[host].inflight > 0; j++) {
        size_t i = net->hslots[j];
        net_slot *f = &net->slots[i];
        if (f->state == SLOT_FREE || (f->msg.src != host && f->msg.dst != host))
            continue;
        bool on_links;
        if (f->state == SLOT_MEMBER || f->nb > 1) { /* the rest of its bundle goes on */
            uint32_t c = sim_net_bundle_drop(net, (uint32_t)i);
            on_links = net->slots[c].state == SLOT_FLOW;
            if (on_links)
                leave_one(net, c);
        } else {
            if (f->ev != 0)
                sim_engine_cancel(net->eng, f->ev);
            on_links = f->state == SLOT_FLOW;
            if (f->state == SLOT_FLOW)
                leave_links(net, (uint32_t)i);
            else if (f->state == SLOT_SOLO)
                on_links = sim_net_solo_unclaim(net, (uint32_t)i);
            sim_net_solo_forget(net, (uint32_t)i);
        }
        for (uint32_t k = 0; on_links && k < f->nlinks; k++)
            sim_net_mark_dirty(net, f->links[k]);
        net->hosts[f->msg.src].inflight--;
        net->hosts[f->msg.dst].inflight--;
        net->stats.in_flight--;
        net->stats.dropped++;
        if (net->on_drop != NULL)
            net->on_drop(net->drop_ud, &f->msg);
        net_free_slot(net, (uint32_t)i);
    }
}

/* The factor of host h's NIC: the smallest set on the hosts of its node (h's own without
 * nodes). */
static double node_factor(const sim_net *net, uint32_t h)
{
    if (net->node_of == NULL)
        return net->hosts[h].bw_factor;
    uint32_t first = h;
    while (first > 0 && net->node_of[first - 1] == net->node_of[h])
        first--;
    double f = 1.0;
    for (uint32_t g = first; g < net->nhosts && net->node_of[g] == net->node_of[h]; g++)
        f = fmin(f, net->hosts[g].bw_factor);
    return f;
}

int sim_net_set_bandwidth_factor(sim_net *net, uint32_t host, double factor, sim_err *err)
{
    assert(net != NULL);
    if (net_bad_host(net, host))
        return sim_err_set(err, SIM_EINVAL, NULL,
                           "net: bandwidth factor for host %u: hosts are 0..%u", host,
                           net->nhosts - 1);
    if (!(factor > 0.0 && factor <= 1.0))
        return sim_err_set(err, SIM_EINVAL, NULL,
                           "net: bandwidth factor for host %u must be in (0, 1], got %g", host,
                           factor);
    net->hosts[host].bw_factor = factor;
    factor = node_factor(net, host);
    uint32_t nic = sim_net_topo_nic(&net->topo, host);
    uint32_t seeds[2] = { nic, nic + 1 };
    int rc = rearm(net, err);
    rc = rc != SIM_OK ? rc : drain(net, err);
    if (rc != SIM_OK)
        return rc;
    rc = materialize_links(net, seeds, 2);
    if (rc != SIM_OK)
        return sim_err_set(err, rc, NULL, "net: cannot schedule the start of a message");
    for (size_t i = 0; i < 2; i++)
        sim_net_group_dissolve_at(net, seeds[i]);
    for (size_t i = 0; i < 2; i++) {
        net->links[seeds[i]].cap_bps = net->links[seeds[i]].base_bps * factor;
        sim_net_mark_dirty(net, seeds[i]);
    }
    return SIM_OK;
}

sim_time sim_net_path_latency(const sim_net *net, uint32_t src, uint32_t dst)
{
    assert(net != NULL);
    if (net_bad_host(net, src) || net_bad_host(net, dst) || src == dst)
        return 0;
    if (net->node_of != NULL && net->node_of[src] == net->node_of[dst])
        return net->hosts[src].fabric_latency_ns + net->hosts[dst].fabric_latency_ns;
    return net->hosts[src].latency_ns + net->hosts[dst].latency_ns +
           sim_net_topo_fabric_latency(&net->topo, src, dst);
}

bool sim_net_flow_at(sim_net *net, size_t n, uint32_t *src, uint32_t *dst, double *rate_bps)
{
    assert(net != NULL);
    /* Solos that have started by now are listed as the flows they stand for (joined to their
     * links), and rates are settled once per instant: settle them now for the caller to see. */
    sim_err err;
    int rc = rearm(net, &err);
    rc = rc != SIM_OK ? rc : drain(net, &err);
    int frc = sim_engine_flush(net->eng, NULL);
    rc = rc != SIM_OK ? rc : frc;
    for (size_t i = 0; net->nsolo_active > 0 && i < net->cap; i++)
        if (net->slots[i].state == SLOT_SOLO && !net->slots[i].solo_wait && rc == SIM_OK)
            rc = materialize(net, (uint32_t)i);
    if (rc != SIM_OK && net->pending_err == SIM_OK)
        net->pending_err = rc;
    size_t i = 0; /* the flow holding the n-th message: a bundle holds nb */
    while (i < net->nactive && n >= net->slots[net->active[i]].nb)
        n -= net->slots[net->active[i++]].nb;
    if (i == net->nactive)
        return false;
    double rate = sim_net_flow_rate(net, net->active[i]);
    const net_slot *f = &net->slots[net->active[i]];
    for (int32_t m = f->bnext; n > 0; m = net->slots[m].bnext, n--) /* its n-th message */
        f = &net->slots[m];
    if (src != NULL)
        *src = f->msg.src;
    if (dst != NULL)
        *dst = f->msg.dst;
    if (rate_bps != NULL)
        *rate_bps = rate;
    return true;
}
