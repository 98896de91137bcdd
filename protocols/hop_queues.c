/* Hop's update queues and checks (protocols/hop_state.h): the updates each worker holds per
 * in-neighbour, which one an iteration selects, the averaging, what is released after it, and
 * the bounds checked at every iteration start and averaging (PROTOCOLS §3.6). Calls nothing
 * of protocols/hop.c. */
#include <stdbool.h>
#include <stdint.h>

#include "kit/graph.h"
#include "protocols/hop_state.h"
#include "runtime/proto.h"
#include "sim/tensor.h"

/* ---- checks ---- */

static void violation(hop *st, int kind, bool ok)
{
    st->checks++;
    st->bad[kind] += ok ? 0 : 1;
}

/* The gap bounds at worker i (it just started an iteration or jumped). */
void hp_check_gaps(hop *st, const sim_ctx *ctx, uint32_t i)
{
    int64_t t = st->tighten ? 1 : 0;
    int64_t ki = (int64_t)hp_w(ctx, i)->k;
    bool edge_bound = st->gap > 0 || st->b == 0;
    int64_t bound = st->gap > 0 ? (int64_t)st->gap : (int64_t)st->s + 1;
    for (uint32_t e = st->g.in_off[i]; e < st->g.in_off[i + 1]; e++) {
        uint32_t j = st->g.in_adj[e];
        if (!is_up(ctx, j) || hp_w(ctx, j)->state == HS_JOINING) {
            st->joined[e] = 0;
            continue;
        }
        int64_t d = ki - (int64_t)hp_w(ctx, j)->k;
        if (st->joined[e] == 0 && (!edge_bound || d <= bound))
            st->joined[e] = 1;
        if (st->joined[e] == 0)
            continue;
        st->max_gap = d > st->max_gap ? d : st->max_gap;
        if (edge_bound)
            violation(st, BAD_GAP, d <= bound - t);
    }
    if (st->dist != NULL && !st->failed && st->b == 0 && st->s == 0 && st->gap == 0)
        for (uint32_t j = 0; j < st->n; j++) {
            uint32_t dj = st->dist[(size_t)j * st->n + i];
            if (j != i && dj != GRAPH_NONE)
                violation(st, BAD_DIST, ki - (int64_t)hp_w(ctx, j)->k <= (int64_t)dj - t);
        }
}

/* ---- update queues ---- */

static uint32_t up_in(const hop *st, const sim_ctx *ctx, uint32_t i)
{
    uint32_t c = 0;
    for (uint32_t e = st->g.in_off[i]; e < st->g.in_off[i + 1]; e++)
        c += is_up(ctx, st->g.in_adj[e]) ? 1 : 0;
    return c;
}

uint32_t hp_need_of(const hop *st, const sim_ctx *ctx, uint32_t i)
{
    uint32_t deg = graph_in_degree(&st->g, i), up = up_in(st, ctx, i);
    uint32_t full = deg > st->b ? deg - st->b : 0;
    return full < up ? full : up;
}

/* The queue index of the update in-slot e selects at iteration k, or -1. */
int32_t hp_pick(const hop *st, uint32_t e, uint64_t k)
{
    uint64_t lo = k > st->s ? k - st->s : 0;
    int32_t best = -1;
    for (uint32_t q = 0; q < st->count[e]; q++) {
        uint64_t t = st->tag[(size_t)e * st->q + q];
        if (t < lo)
            continue;
        if (t <= k) {
            best = (int32_t)q;
            continue;
        }
        if (best < 0)
            best = (int32_t)q;
        break;
    }
    return best;
}

/* Removes entry q of in-slot e, releasing its snapshot. */
void hp_drop_entry(hop *st, sim_ctx *ctx, uint32_t e, uint32_t q)
{
    size_t base = (size_t)e * st->q;
    sim_ctx_release(ctx, st->held[base + q]);
    for (uint32_t r = q + 1; r < st->count[e]; r++) {
        st->tag[base + r - 1] = st->tag[base + r];
        st->held[base + r - 1] = st->held[base + r];
    }
    st->count[e]--;
}

/* Releases the updates of in-slot e with tag < lo. */
void hp_drop_below(hop *st, sim_ctx *ctx, uint32_t e, uint64_t lo)
{
    while (st->count[e] > 0 && st->tag[(size_t)e * st->q] < lo)
        hp_drop_entry(st, ctx, e, 0);
}

void hp_note_held(hop *st, sim_ctx *ctx, uint32_t i)
{
    (void)ctx;
    uint64_t c = 0;
    for (uint32_t e = st->g.in_off[i]; e < st->g.in_off[i + 1]; e++)
        c += st->count[e];
    st->max_held = c > st->max_held ? c : st->max_held;
}

/* Averages x_i with the updates selected for iteration k; returns how many were used. */
uint32_t hp_average(hop *st, sim_ctx *ctx, uint32_t i, uint64_t k)
{
    float *x = sim_ctx_params(ctx, i);
    size_t c = 0;
    bool mine = false;
    uint32_t used = 0;
    uint64_t lo = k > st->s ? k - st->s : 0;
    int64_t t = st->tighten ? 1 : 0;
    for (uint32_t e = st->g.in_off[i]; e < st->g.in_off[i + 1]; e++) {
        uint32_t j = st->g.in_adj[e], slot = e - st->g.in_off[i];
        if (!mine && j > i) {
            st->xs[c++] = x;
            mine = true;
        }
        int32_t q = hp_pick(st, e, k);
        st->pick_q[slot] = q;
        if (q < 0)
            continue;
        size_t at = (size_t)e * st->q + (uint32_t)q;
        violation(st, BAD_STALE, (int64_t)st->tag[at] >= (int64_t)lo + t);
        used++;
        if (st->nparams > 0)
            st->xs[c++] = sim_ctx_held(ctx, st->held[at]);
    }
    if (!mine)
        st->xs[c++] = x;
    if (st->nparams > 0 && c > 1) {
        sim_tensor_mean_over(x, st->xs, c, st->nparams);
    }
    /* Drop what is used up or out of the next window. */
    for (uint32_t e = st->g.in_off[i]; e < st->g.in_off[i + 1]; e++) {
        int32_t q = st->pick_q[e - st->g.in_off[i]];
        if (st->late == 1 && q >= 0 && st->tag[(size_t)e * st->q + (uint32_t)q] <= k)
            hp_drop_entry(st, ctx, e, (uint32_t)q); /* one from i's future stays for it */
        hp_drop_below(st, ctx, e, k + 1 > st->s ? k + 1 - st->s : 0);
    }
    uint32_t need = hp_need_of(st, ctx, i);
    violation(st, BAD_NEED, used >= need + (uint32_t)t);
    uint32_t deg = graph_in_degree(&st->g, i);
    st->degraded += used < (deg > st->b ? deg - st->b : 0) ? 1 : 0;
    st->averagings++;
    st->used_sum += used;
    st->used_min = used < st->used_min ? used : st->used_min;
    return used;
}

/* Holds the snapshot of the message being handled as in-slot e's update `tag` (worker i). */
void hp_insert_update(hop *st, sim_ctx *ctx, uint32_t i, uint32_t e, uint64_t tag)
{
    size_t base = (size_t)e * st->q;
    uint32_t pos = st->count[e];
    while (pos > 0 && st->tag[base + pos - 1] >= tag) {
        if (st->tag[base + pos - 1] == tag)
            return; /* already held */
        pos--;
    }
    if (st->count[e] == st->q) {
        if (pos == 0) {
            st->superseded++;
            return; /* older than everything held in a full queue */
        }
        hp_drop_entry(st, ctx, e, 0);
        st->superseded++;
        pos--;
    }
    for (uint32_t r = st->count[e]; r > pos; r--) {
        st->tag[base + r] = st->tag[base + r - 1];
        st->held[base + r] = st->held[base + r - 1];
    }
    st->tag[base + pos] = tag;
    st->held[base + pos] = sim_ctx_hold(ctx);
    st->count[e]++;
    hp_note_held(st, ctx, i);
}
