/* Sync-Switch's online straggler policy (see protocols/syncswitch.c): the window of recent
 * own times, its median, and the excursions to ASP it starts and ends. */
#include <math.h>
#include <string.h>

#include "protocols/syncswitch_state.h"

/* The median (the upper one of an even count) of the window, by quickselect on a scratch
 * copy: no allocation in a handler (qsort may allocate). */
static sim_time window_median(syncswitch *st)
{
    sim_time *a = st->sorted;
    size_t n = st->nwin, want = n / 2, lo = 0, hi = n - 1;
    memcpy(a, st->window, n * sizeof(*a));
    while (lo < hi) {
        sim_time pivot = a[lo + (hi - lo) / 2];
        size_t i = lo, j = hi;
        while (i <= j) {
            while (a[i] < pivot)
                i++;
            while (a[j] > pivot)
                j--;
            if (i <= j) {
                sim_time t = a[i];
                a[i] = a[j];
                a[j] = t;
                i++;
                if (j == 0)
                    break;
                j--;
            }
        }
        if (want <= j)
            hi = j;
        else if (want >= i)
            lo = i;
        else
            break;
    }
    return a[want];
}

uint64_t ss_online_left(const syncswitch *st, uint64_t b)
{
    if (st->online != ONLINE_BUDGETED)
        return UINT64_MAX;
    uint64_t base = st->first != UINT64_MAX ? st->first : st->counted_first;
    uint64_t cap = (uint64_t)floor(st->online_budget * (double)base);
    uint64_t used = st->online_samples / b;
    return used >= cap ? 0 : cap - used;
}

int ss_arrived(void *ud, sim_ctx *ctx, uint32_t w, sim_time own_ns, sim_err *err)
{
    syncswitch *st = ud;
    if (st->online == ONLINE_NONE || st->phase != PH_FIRST)
        return SIM_OK;
    size_t cap = 2 * (size_t)st->n;
    sim_time median = st->nwin >= st->n ? window_median(st) : 0;
    st->window[st->win_at] = own_ns;
    st->win_at = (st->win_at + 1) % cap;
    st->nwin += st->nwin < cap ? 1 : 0;
    if (median == 0 || ps_server_draining(st->srv))
        return SIM_OK;
    bool slow = (double)own_ns > st->factor * (double)median;
    if (!st->excursion) {
        if (!slow || st->online_off)
            return SIM_OK;
        st->flagged[w] = 1;
        st->excursion = true;
        st->next_mode = PS_ASP;
        return ps_server_drain(st->srv, ctx, err);
    }
    if (slow) {
        st->flagged[w] = 1;
        return SIM_OK;
    }
    st->flagged[w] = 0;
    for (uint32_t v = 0; v < st->n; v++)
        if (st->flagged[v])
            return SIM_OK;
    st->next_mode = PS_BSP;
    return ps_server_drain(st->srv, ctx, err);
}
