/* Moshpit's groups (protocols/moshpit_state.h): the butterflies of a grid or random round
 * (grid lines along the round's axis, or a shuffle cut into groups), whether any round could
 * form one (averaging alone stalls when none could: the stuck hook), and the key form's key
 * update after a group. Calls nothing of protocols/moshpit.c. */
#include <stdbool.h>
#include <stdint.h>

#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>

#include "kit/coll.h"
#include "kit/graph.h"
#include "protocols/moshpit_state.h"
#include "runtime/proto.h"

/* Groups of the round from the participants in list[0..k) (ascending ids): sets group[] and
 * starts the butterflies. */
int mp_start_groups(moshpit *st, sim_ctx *ctx, uint32_t k, sim_err *err)
{
    uint32_t *members = st->list + k; /* the rest of the scratch list */
    uint32_t g = 0;
    if (st->random) {
        if (k > 1) /* gsl_ran_shuffle of nothing runs off the list (of one draws nothing) */
            gsl_ran_shuffle(sim_ctx_rng(ctx, SIM_CTX_PROTO), st->list, k, sizeof(*st->list));
        uint32_t ng = k / st->group_size;
        if (ng == 0 && k >= 2)
            ng = 1;
        for (g = 0; g < ng; g++) {
            uint32_t c = 0;
            for (uint32_t i = 0; i < k; i++) {
                uint32_t q =
                    i < ng * st->group_size ? i / st->group_size : (i - ng * st->group_size) % ng;
                if (q == g)
                    members[c++] = st->list[i];
            }
            for (uint32_t i = 1; i < c; i++) /* insertion sort: members in id order */
                for (uint32_t j = i; j > 0 && members[j - 1] > members[j]; j--) {
                    uint32_t t = members[j];
                    members[j] = members[j - 1];
                    members[j - 1] = t;
                }
            for (uint32_t i = 0; i < c; i++)
                mp_at(ctx, members[i])->group = g;
            int rc = mp_listed(st, ctx, g, members, c, err);
            if (rc == SIM_OK)
                rc = coll_bfly_start(st->bf[g], ctx, members, NULL, c, st->round, err);
            if (rc != SIM_OK)
                return rc;
        }
        st->alone += k == 1 ? 1 : 0;
        st->active = g;
        st->groups += g;
        return SIM_OK;
    }
    /* The round's axis, as the kit numbers it (st->dims), and its lines (graph_grid_group). */
    uint32_t a = st->d - 1 - (uint32_t)(st->round % st->d), lines = st->cells / st->dims[a];
    for (uint32_t c = 0; c < lines; c++)
        st->line[c] = 0;
    for (uint32_t i = 0; i < k; i++) {
        uint32_t w = st->list[i], key = graph_grid_group(st->dims, st->d, a, mp_at(ctx, w)->cell);
        mp_at(ctx, w)->group = key;
        st->line[key]++;
    }
    /* Lines with two or more members get butterflies in line order; count -> index + 1. */
    for (uint32_t c = 0; c < lines; c++)
        st->line[c] = st->line[c] >= 2 ? ++g : 0;
    st->active = g;
    st->groups += g;
    for (uint32_t i = 0; i < k; i++) {
        uint32_t w = st->list[i];
        uint32_t idx = st->line[mp_at(ctx, w)->group];
        st->alone += idx == 0 ? 1 : 0;
        mp_at(ctx, w)->group = idx == 0 ? COLL_NONE : idx - 1;
    }
    for (uint32_t b = 0; b < g; b++) {
        uint32_t c = 0;
        for (uint32_t i = 0; i < k; i++)
            if (mp_at(ctx, st->list[i])->group == b)
                members[c++] = st->list[i];
        int rc = mp_listed(st, ctx, b, members, c, err);
        if (rc == SIM_OK)
            rc = coll_bfly_start(st->bf[b], ctx, members, NULL, c, st->round, err);
        if (rc != SIM_OK)
            return rc;
    }
    return SIM_OK;
}

bool mp_could_group(moshpit *st, const sim_ctx *ctx)
{
    uint32_t able = 0;
    for (uint32_t w = 0; w < st->n; w++)
        able += !sim_ctx_down(ctx, w) && !sim_ctx_always_dropped(ctx, w);
    if (st->keys || st->random || able < 2)
        return st->keys ? able > 0 : able >= 2;
    for (uint32_t a = 0; a < st->d; a++) { /* any line along axis a with two of them */
        uint32_t lines = st->cells / st->dims[a];
        for (uint32_t c = 0; c < lines; c++)
            st->line[c] = 0;
        for (uint32_t w = 0; w < st->n; w++) {
            if (sim_ctx_down(ctx, w) || sim_ctx_always_dropped(ctx, w))
                continue;
            uint32_t key = graph_grid_group(st->dims, st->d, a, mp_at(ctx, w)->cell);
            if (++st->line[key] >= 2)
                return true;
        }
    }
    return false;
}

bool mp_stuck(const void *state, const sim_ctx *ctx)
{
    const moshpit *st = state;
    if (!st->async)
        return st->idle;
    for (uint32_t w = 0; w < st->n; w++)
        if (!sim_ctx_down(ctx, w) &&
            !(mp_never_averages(st, ctx, w) && mp_at(ctx, w)->phase == PH_DONE))
            return false;
    return true;
}

/* The key update of member w of butterfly b (hivemind's update_key_on_group_assembled): with
 * an rng seeded by the group id, distinct indices r_0, r_1, ... from 0..B-1, B the target
 * group size, or without one the next power of two of the group's size; w at position p
 * takes r_p mod M as its newest digit (M the digits' range, the grid's largest side). Hivemind
 * appends r_p's bits to a bit string of fixed length, so its key space never grows; a digit
 * past M would be a key nobody else holds, a worker alone in every later round. */
void mp_update_key(moshpit *st, sim_ctx *ctx, uint32_t w, uint32_t b)
{
    uint32_t L = st->d - 1, p = coll_bfly_position(st->bf[b], w), k = coll_bfly_size(st->bf[b]);
    if (L == 0 || p == COLL_NONE)
        return;
    uint32_t B = st->target;
    for (B = B > 0 ? B : 1; st->target == 0 && B < k;)
        B *= 2;
    gsl_rng_set(st->krng, (unsigned long)(st->gid[b] ^ st->gid[b] >> 32));
    for (uint32_t i = 0; i < B; i++)
        st->perm[i] = i;
    for (uint32_t i = 0; i < k && i <= p; i++) {
        uint32_t j = i + (uint32_t)gsl_rng_uniform_int(st->krng, B - i);
        uint32_t t = st->perm[i];
        st->perm[i] = st->perm[j];
        st->perm[j] = t;
    }
    uint32_t *key = mp_at(ctx, w)->key;
    for (uint32_t i = 0; i + 1 < L; i++)
        key[i] = key[i + 1];
    key[L - 1] = st->perm[p] % st->kside;
}
