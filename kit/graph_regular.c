/* Random regular graphs for graph_build (kit/graph.h): Steger-Wormald stub pairing,
 * drawn again until connected. */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "kit/graph_state.h"

enum {
    MAX_DRAWS = 1000,       /* random regular graphs drawn before giving up */
    PICKS_BEFORE_SCAN = 100 /* random stub pairs tried before scanning for a suitable one */
};

static bool adjacent(const uint32_t *nb, const uint32_t *cnt, uint32_t d, uint32_t u, uint32_t v)
{
    for (uint32_t t = 0; t < cnt[u]; t++)
        if (nb[(size_t)u * d + t] == v)
            return true;
    return false;
}

static bool connected(const uint32_t *nb, uint32_t n, uint32_t d, uint32_t *queue, uint32_t *seen)
{
    memset(seen, 0, (size_t)n * sizeof(*seen));
    uint32_t head = 0, tail = 0, reached = 1;
    queue[tail++] = 0;
    seen[0] = 1;
    while (head < tail) {
        uint32_t u = queue[head++];
        for (uint32_t t = 0; t < d; t++) {
            uint32_t v = nb[(size_t)u * d + t];
            if (!seen[v]) {
                seen[v] = 1;
                reached++;
                queue[tail++] = v;
            }
        }
    }
    return reached == n;
}

static bool suitable(const uint32_t *nb, const uint32_t *cnt, uint32_t d, const uint32_t *stubs,
                     size_t a, size_t b)
{
    return stubs[a] != stubs[b] && !adjacent(nb, cnt, d, stubs[a], stubs[b]);
}

/* A pair of stubs (a < b or not) that may be joined: random picks first, then the first
 * suitable pair in order; false if there is none. */
static bool find_pair(const uint32_t *nb, const uint32_t *cnt, uint32_t d, const uint32_t *stubs,
                      size_t U, gsl_rng *r, size_t *a, size_t *b)
{
    for (int t = 0; t < PICKS_BEFORE_SCAN; t++) {
        *a = (size_t)gsl_rng_uniform_int(r, U);
        *b = (size_t)gsl_rng_uniform_int(r, U - 1);
        *b += *b >= *a ? 1 : 0;
        if (suitable(nb, cnt, d, stubs, *a, *b))
            return true;
    }
    for (*a = 0; *a < U; (*a)++)
        for (*b = *a + 1; *b < U; (*b)++)
            if (suitable(nb, cnt, d, stubs, *a, *b))
                return true;
    return false;
}

/* Pairs the stubs of one random d-regular draw (Steger-Wormald: random suitable pairs, a
 * scan for one when random picks keep failing); false if it got stuck. */
static bool pair_stubs(uint32_t n, uint32_t d, gsl_rng *r, uint32_t *nb, uint32_t *cnt,
                       uint32_t *stubs)
{
    size_t U = (size_t)n * d;
    memset(cnt, 0, (size_t)n * sizeof(*cnt));
    for (size_t s = 0; s < U; s++)
        stubs[s] = (uint32_t)(s / d);
    while (U > 0) {
        size_t a, b;
        if (!find_pair(nb, cnt, d, stubs, U, r, &a, &b))
            return false;
        uint32_t u = stubs[a], v = stubs[b];
        nb[(size_t)u * d + cnt[u]++] = v;
        nb[(size_t)v * d + cnt[v]++] = u;
        size_t hi = a > b ? a : b, lo = a > b ? b : a;
        stubs[hi] = stubs[--U];
        stubs[lo] = stubs[--U];
    }
    return true;
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

int graph_draw_regular(graph *g, uint32_t d, gsl_rng *r, sim_err *err)
{
    uint32_t n = g->n;
    uint32_t *stubs = calloc((size_t)n * d, sizeof(*stubs));
    uint32_t *cnt = calloc(n, sizeof(*cnt)), *queue = calloc(n, sizeof(*queue));
    int rc = SIM_OK;
    if (stubs == NULL || cnt == NULL || queue == NULL) {
        rc = sim_err_set(err, SIM_ENOMEM, NULL, "out of memory");
        goto done;
    }
    rc = SIM_ENUMERIC;
    for (int draw = 0; draw < MAX_DRAWS; draw++) {
        if (pair_stubs(n, d, r, g->adj, cnt, stubs) &&
            (d < 2 || connected(g->adj, n, d, queue, stubs))) {
            rc = SIM_OK;
            break;
        }
    }
    if (rc != SIM_OK) {
        sim_err_set(err, SIM_ENUMERIC, NULL,
                    "graph: no connected %u-regular graph on %u workers in %d draws", d, n,
                    MAX_DRAWS);
        goto done;
    }
    for (uint32_t i = 0; i < n; i++) {
        g->off[i + 1] = g->off[i] + d;
        qsort(g->adj + (size_t)i * d, d, sizeof(*g->adj), cmp_u32);
    }
done:
    free(stubs);
    free(cnt);
    free(queue);
    return rc;
}
