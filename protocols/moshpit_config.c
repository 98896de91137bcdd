/* Moshpit's configuration (protocols/moshpit_state.h): $.protocol.* parsed and checked (the
 * grid or random form, the key form's keys), and the butterflies and memory it implies. */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "kit/coll.h"
#include "protocols/moshpit_state.h"
#include "runtime/proto.h"

/* side^k, saturating at 2^62. */
static uint64_t cells_of(uint32_t side, uint32_t k)
{
    uint64_t c = 1;
    for (uint32_t a = 0; a < k; a++)
        c = c > (UINT64_C(1) << 62) / side ? UINT64_C(1) << 62 : c * side;
    return c;
}

/* The integer k-th root of n when n is a perfect k-th power, else 0. */
static uint32_t exact_root(uint32_t n, uint32_t k)
{
    uint32_t r = (uint32_t)llround(pow((double)n, 1.0 / k));
    for (uint32_t s = r > 1 ? r - 1 : 1; s <= r + 1; s++) /* whatever pow's rounding */
        if (cells_of(s, k) == n)
            return s;
    return 0;
}

/* The default grid of n workers (no `grid` given), d axes of one side M, groups never of
 * two where larger ones fit: the fewest axes d >= 2 with n = M^d exactly and M >= 4 (a
 * perfect grid, as the paper's 32x32 and 8x8x8: exact in d rounds); else two axes of
 * M = ceil(sqrt n), the fullest two-axis grid (fewer than 2 sqrt(n) empty cells, filled by
 * distinct cells drawn from the seed); n <= 4 (M would be 2: pairs) takes one axis of
 * max(n, 2), one group. 16 -> 4x4, 512 -> 8x8x8, 1024 -> 32x32, 1000 -> 10x10x10,
 * 8 -> 3x3, 32 -> 6x6, 100 -> 10x10. */
void mp_default_grid(uint32_t n, uint32_t *d, uint32_t *m)
{
    for (uint32_t k = 2; k <= MP_MAX_DIMS; k++) {
        uint32_t side = exact_root(n, k);
        if (side >= 4) {
            *d = k;
            *m = side;
            return;
        }
    }
    uint32_t side = (uint32_t)ceil(sqrt((double)n));
    while (side > 1 && (uint64_t)(side - 1) * (side - 1) >= n) /* ceil(sqrt n), exactly */
        side--;
    while ((uint64_t)side * side < n)
        side++;
    if (side <= 2) {
        *d = 1;
        *m = n < 2 ? 2 : n;
        return;
    }
    *d = 2;
    *m = side;
}

/* Key form: `overlap` (default: without global rounds, in training runs, as hivemind's
 * training runs its averaging in the background) and, with it, `merge`: hivemind's delta rule
 * (default) or the paper's ResNet-50 code's replacement. */
static int configure_overlap(moshpit *st, sim_cfg *cfg, bool training, sim_err *err)
{
    static const char *const merges[] = { "delta", "replace" };
    bool overlap = st->async && training;
    int rc = sim_cfg_bool(cfg, "overlap", &overlap, err);
    if (rc == SIM_OK && overlap && !st->async)
        return sim_err_set(err, SIM_ESCENARIO, "$.protocol.overlap",
                           "needs sync false (each worker's rounds of its own)");
    if (rc == SIM_OK && overlap && !training)
        return sim_err_set(err, SIM_ESCENARIO, "$.protocol.overlap",
                           "needs local_steps >= 1 (steps for the rounds to overlap)");
    if (rc != SIM_OK || (!overlap && !sim_cfg_has(cfg, "merge")))
        return rc;
    if (!overlap)
        return sim_err_set(err, SIM_ESCENARIO, "$.protocol.merge", "needs overlap true");
    int merge = 0;
    rc = sim_cfg_choice(cfg, "merge", merges, 2, &merge, err);
    st->overlap = true;
    st->replace = merge == 1;
    return rc;
}

/* form "keys" (5.2): the grid gives M (its largest side) and the key length d - 1. A run
 * with local steps (training) defaults to the key form without global rounds, paced by its
 * iteration time; averaging alone (local_steps 0) to the grid form's rounds. */
static int configure_keys(moshpit *st, sim_cfg *cfg, const proto_setup *setup, sim_err *err)
{
    static const char *const forms[] = { "grid", "keys" };
    static const char *const keys[] = { "min_group_size", "target_group_size",
                                        "matchmaking_ms", "request_timeout_ms",
                                        "sync",           "overlap",
                                        "merge" };
    bool training = st->local_steps > 0;
    int form = training ? 1 : 0;
    int rc = sim_cfg_choice(cfg, "form", forms, 2, &form, err);
    if (rc != SIM_OK)
        return rc;
    st->keys = form == 1;
    for (size_t i = 0; i < 7 && !st->keys; i++) {
        if (!sim_cfg_has(cfg, keys[i]))
            continue;
        char path[64];
        snprintf(path, sizeof(path), "$.protocol.%s", keys[i]);
        return sim_err_set(err, SIM_ESCENARIO, path, "needs form \"keys\"");
    }
    if (!st->keys)
        return SIM_OK;
    uint32_t side = 0;
    for (uint32_t a = 0; a < st->d; a++)
        side = st->m[a] > side ? st->m[a] : side;
    int64_t lo = 2, target = 0;
    st->mm_ms = 5000.0; /* hivemind's min_matchmaking_time, 5 s, and request_timeout, 3 s */
    st->req_ms = 3000.0;
    if (training && setup->iteration_ns > 0) { /* one local step of matchmaking, half to answer */
        st->mm_ms = (double)setup->iteration_ns / 1e6;
        st->mm_ms = st->mm_ms < 0.002 ? 0.002 : st->mm_ms;
        st->req_ms = st->mm_ms / 2.0;
    }
    /* hivemind's DecentralizedAverager: target_group_size None, groups close when the
     * matchmaking time is up; null here. */
    if ((rc = sim_cfg_default_json(cfg, "target_group_size", "null", err)) != SIM_OK)
        return rc;
    if (!sim_cfg_is_null(cfg, "target_group_size") &&
        (rc = sim_cfg_int(cfg, "target_group_size", 2, 65536, &target, err)) != SIM_OK)
        return rc;
    if ((rc = sim_cfg_int(cfg, "min_group_size", 2, 65536, &lo, err)) != SIM_OK ||
        (rc = sim_cfg_double(cfg, "matchmaking_ms", 0.001, 3.6e6, &st->mm_ms, err)) != SIM_OK ||
        (rc = sim_cfg_double(cfg, "request_timeout_ms", 0.001, 3.6e6, &st->req_ms, err)) != SIM_OK)
        return rc;
    if (target > 0 && lo > target)
        return sim_err_set(err, SIM_ESCENARIO, "$.protocol.min_group_size",
                           "must be at most target_group_size (%lld), got %lld", (long long)target,
                           (long long)lo);
    if (target > 0 && (uint64_t)target < side)
        return sim_err_set(err, SIM_ESCENARIO, "$.protocol.target_group_size",
                           "must be at least the grid's largest side %u (the key's digit range), "
                           "got %lld",
                           side, (long long)target);
    st->min_group = (uint32_t)lo;
    st->kside = side;
    st->target = (uint32_t)target;
    bool sync = !training;
    if ((rc = sim_cfg_bool(cfg, "sync", &sync, err)) != SIM_OK)
        return rc;
    st->async = !sync;
    return configure_overlap(st, cfg, training, err);
}

int mp_configure(void *state, sim_cfg *cfg, const proto_setup *setup, sim_err *err)
{
    static const char *const forms[] = { "grid", "random" };
    moshpit *st = state;
    st->n = setup->workers;
    int form = 0;
    int64_t size = 32, steps = 1;
    st->alpha = 1.0;
    int rc = sim_cfg_choice(cfg, "groups", forms, 2, &form, err);
    if (rc == SIM_OK)
        rc = sim_cfg_double(cfg, "averaging_alpha", nextafter(0.0, 1.0), 1.0, &st->alpha, err);
    if (rc == SIM_OK)
        rc = sim_cfg_int(cfg, "local_steps", 0, 1000000, &steps, err);
    if (rc == SIM_OK)
        rc = sim_cfg_double(cfg, "sender_timeout_ms", 0.0, 3.6e6, &st->sender_ms, err);
    if (rc == SIM_OK)
        rc = sim_cfg_double(cfg, "reducer_timeout_ms", 0.0, 3.6e6, &st->reducer_ms, err);
    if (rc != SIM_OK)
        return rc;
    /* Without local steps a round where no group forms (every live worker alone or sitting
     * out) takes no simulated time: the rounds could follow one another at one instant for
     * ever, so only a round count ends such a run for sure. */
    if (steps == 0 && setup->budget.rounds == 0)
        return sim_err_set(err, SIM_ESCENARIO, "$.protocol.local_steps",
                           "0 (averaging alone) needs stop.rounds: rounds that form no group "
                           "take no simulated time");
    st->local_steps = (uint32_t)steps;
    st->random = form == 1;
    if (st->random) {
        if (sim_cfg_has(cfg, "grid"))
            return sim_err_set(err, SIM_ESCENARIO, "$.protocol.grid",
                               "not allowed with groups \"random\" (use group_size)");
        rc = sim_cfg_int(cfg, "group_size", 2, 65536, &size, err);
        st->group_size = (uint32_t)size;
        return rc;
    }
    if (sim_cfg_has(cfg, "group_size"))
        return sim_err_set(err, SIM_ESCENARIO, "$.protocol.group_size",
                           "only with groups \"random\" (the grid sets the group sizes)");
    size_t d = 0;
    if (!sim_cfg_has(cfg, "grid")) { /* the default grid, written into run.json */
        uint32_t dd = 1, mm = 2;
        mp_default_grid(st->n, &dd, &mm);
        char text[MP_MAX_DIMS * 12 + 4] = "[";
        size_t len = 1;
        for (uint32_t a = 0; a < dd; a++)
            len += (size_t)snprintf(text + len, sizeof(text) - len, "%s%u", a > 0 ? ", " : "", mm);
        snprintf(text + len, sizeof(text) - len, "]");
        if ((rc = sim_cfg_default_json(cfg, "grid", text, err)) != SIM_OK)
            return rc;
    }
    if ((rc = sim_cfg_array_len(cfg, "grid", &d, err)) != SIM_OK)
        return rc;
    if (d < 1 || d > MP_MAX_DIMS)
        return sim_err_set(err, SIM_ESCENARIO, "$.protocol.grid",
                           "must list 1..%d group sizes, got %zu", MP_MAX_DIMS, d);
    uint64_t cells = 1;
    for (size_t i = 0; i < d; i++) {
        double v = 2.0;
        if ((rc = sim_cfg_at_double(cfg, "grid", i, 2, 65536, true, &v, err)) != SIM_OK)
            return rc;
        st->m[i] = (uint32_t)v;
        cells *= st->m[i];
        if (cells > MP_MAX_CELLS)
            return sim_err_set(err, SIM_ESCENARIO, "$.protocol.grid", "has more than %u cells",
                               MP_MAX_CELLS);
    }
    st->d = (uint32_t)d;
    st->cells = (uint32_t)cells;
    if (cells < st->n)
        return sim_err_set(err, SIM_ESCENARIO, "$.protocol.grid",
                           "has %llu cells, fewer than the %u workers", (unsigned long long)cells,
                           st->n);
    return configure_keys(st, cfg, setup, err);
}

/* Butterflies: a grid round has at most cells / m_a lines (and at most n / 2 groups of two
 * or more); random groups number at most n / M, each of at most 2M - 1 members (when fewer
 * take part, the leftovers spread over fewer groups). */
void mp_sizes(const moshpit *st, uint32_t *nbf, uint32_t *cap)
{
    if (st->random) {
        uint32_t g = st->n / st->group_size;
        *nbf = g > 0 ? g : 1;
        uint32_t c = 2 * st->group_size - 1; /* one group and M - 1 leftovers, at worst */
        *cap = c < st->n ? c : st->n;
        return;
    }
    uint32_t lines = 0, side = 0;
    for (uint32_t a = 0; a < st->d; a++) {
        uint32_t l = st->cells / st->m[a];
        lines = l > lines ? l : lines;
        side = st->m[a] > side ? st->m[a] : side;
    }
    uint32_t half = st->n / 2 > 0 ? st->n / 2 : 1;
    *nbf = lines < half ? lines : half;
    *cap = side < st->n ? side : st->n;
    if (st->keys) { /* groups of min_group_size or more, each at most target; without a
                     * target a butterfly starts with room for twice the grid's largest side
                     * (a key's holders rarely exceed it) and doubles for a larger group
                     * (coll_bfly_start; memory the estimate does not count) */
        uint32_t g = st->n / st->min_group, t = st->target > 0 ? st->target : 2 * side;
        *nbf = g > 0 ? g : 1;
        *cap = t < st->n ? t : st->n;
    }
}

/* A leader's first room for its members: the target, or the grid's largest side. */
static uint32_t first_room(const moshpit *st)
{
    uint32_t side = 2;
    for (uint32_t a = 0; a < st->d; a++)
        side = st->m[a] > side ? st->m[a] : side;
    return st->target > 0 ? st->target : side;
}

/* The kit's hub (one channel per butterfly), the round's tables, the butterflies' outputs (n
 * models) and, in the key form, the leaders' first rooms, the group ids, the key update's
 * scratch, the async pool and, with overlap, the rounds' inputs (n models). */
void mp_buffers(void *state, sim_arena *a, size_t num_params)
{
    moshpit *st = state;
    size_t n = st->n;
    uint32_t nbf, cap;
    mp_sizes(st, &nbf, &cap);
    st->most =
        st->keys && st->async && st->n > nbf ? st->n : nbf; /* grown as needed (moshpit_match.c) */
    st->hub = coll_hub_create(a, st->most, EV_COLL);
    st->bf = sim_arena_alloc(a, st->most, sizeof(*st->bf));
    st->list = sim_arena_alloc(a, 2 * n, sizeof(*st->list));
    st->line = st->random ? NULL : sim_arena_alloc(a, st->cells, sizeof(*st->line));
    st->avg = sim_arena_alloc(a, n * num_params, sizeof(*st->avg));
    if (!st->keys)
        return;
    st->room = first_room(st);
    st->rooms = sim_arena_alloc(a, n * st->room, sizeof(*st->rooms));
    st->gid = sim_arena_alloc(a, st->most, sizeof(*st->gid));
    st->perm = sim_arena_alloc(a, st->target > 0 ? st->target : 2 * n, sizeof(*st->perm));
    st->freebf = sim_arena_alloc(a, st->most, sizeof(*st->freebf));
    st->inuse = coll_idset_create(a, st->most);
    st->sent = st->overlap ? sim_arena_alloc(a, n * num_params, sizeof(*st->sent)) : NULL;
    mp_ix_buffers(st, a);
}

/* Outside the arena: the butterflies (the kit's, on the heap since their room may grow; each
 * stages up to cap vectors), the parts in flight (a member sends its other members a copy of
 * their part each, cap - 1 messages of P / cap floats, each copy in the pool of its size,
 * timing-only the messages alone; the reduced parts coming back follow once those have landed) and,
 * in the key form without a target, a leader's list grown once past its room on the heap, and the
 * key update's rng. */
uint64_t mp_memory(const void *state, size_t num_params)
{
    const moshpit *st = state;
    uint32_t nbf, cap;
    mp_sizes(st, &nbf, &cap);
    uint64_t n = st->n;
    uint64_t parts = cap > 1
                         ? (cap - 1) * (PROTO_MESSAGE_BYTES +
                                        proto_slice_bytes(num_params, (num_params + cap - 1) / cap))
                         : 0;
    uint32_t room = first_room(st);
    return nbf * coll_bfly_memory(st->n, cap, num_params) + n * parts +
           (st->keys ? n * 4 * (uint64_t)(cap > room ? cap - room : 0) + 5000 : 0);
}

coll_bfly *mp_make_bfly(moshpit *st, sim_ctx *ctx, sim_err *err)
{
    coll_bfly *b =
        coll_bfly_create(st->hub, st->n, st->cap, st->P, sim_ctx_layer_bytes(ctx, SIM_LAYERS_ALL),
                         st->bfly_input, st->bfly_output, st->bfly_done, st, err);
    if (b != NULL)
        coll_bfly_set_timeouts(b, (sim_time)llround(st->sender_ms * 1e6),
                               (sim_time)llround(st->reducer_ms * 1e6));
    return b;
}
