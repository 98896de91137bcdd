/* Moshpit All-Reduce and Moshpit SGD (PROTOCOLS 5.1, 5.3; butterfly inside groups, 1.2).
 *
 * Rounds are global: round r starts when every worker is done with round r-1. At its start
 * every live worker is asked whether it sits out the round (sim_ctx_dropped, in worker
 * order); the others are cut into groups:
 *   grid   (`grid` [M1, M2, ...], d axes): each worker holds a distinct cell of the grid,
 *          drawn once from the protocol stream (the first N cells of a shuffle of all of
 *          them). Round r averages along axis a = r mod d: a group is every participating
 *          worker that shares all coordinates but a. On a perfect grid (N = product) without
 *          dropouts, d rounds give the exact global mean (up to float rounding).
 *   random (`groups`: "random", `group_size` M): the participants are shuffled with the
 *          protocol stream and cut into groups of M, leftovers spread round-robin.
 * Each live worker first takes `local_steps` SGD steps (0: pure averaging), then joins its
 * group's butterfly all-reduce (protocols/coll.h: parts of the model to every member,
 * the reducer's mean back; `sender_timeout_ms` and `reducer_timeout_ms` as in 1.2). Its
 * result replaces the worker's model as x <- x + alpha (avg - x), `averaging_alpha` alpha
 * (1: plain replacement, exact copy). A worker alone in its group, or sitting out, keeps its
 * value. Members are listed in worker-id order, so groups are equal at the bit level after a
 * round without failures; every round keeps the sum over workers (group means, dropouts
 * unchanged), to float rounding.
 *
 * Failures: a worker that goes down leaves its round (its butterfly treats it as failed, the
 * others exclude or keep its part as 1.2 says) and rejoins at the next round start. The
 * round end is sim_ctx_round_end (stop.rounds, stop.consensus, iterations stops).
 *
 * Not implemented here: the key-based matchmaking of 5.2 (form "keys").
 */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#include <gsl/gsl_randist.h>

#include "protocols/coll.h"
#include "runtime/proto.h"
#include "sim/tensor.h"

#define MP_MAX_DIMS  8
#define MP_MAX_CELLS (1u << 24)

enum {
    EV_COLL = SIM_EV_USER,    /* the kit's butterfly timers */
    EV_NEXT = SIM_EV_USER + 1 /* the next round starts (after the last one's event) */
};

enum {
    PH_IDLE = 0,
    PH_COMPUTE = 1,
    PH_GROUP = 2,
    PH_DONE = 3
};

typedef struct moshpit {
    /* configuration */
    uint32_t n;              /* workers */
    uint32_t d;              /* grid axes (grid form) */
    uint32_t m[MP_MAX_DIMS]; /* grid sides */
    uint32_t cells;          /* product of the sides */
    bool random;             /* random groups instead of the grid */
    uint32_t group_size;     /* random: M */
    double alpha;            /* averaging_alpha */
    uint32_t local_steps;    /* SGD steps before each round */
    double sender_ms, reducer_ms;
    /* run */
    coll_hub hub;
    coll_bfly *bf;     /* (nbf) one per group of a round */
    uint32_t nbf, cap; /* butterflies, most members of one */
    uint32_t *coord;   /* (n * d) each worker's cell */
    uint32_t *group;   /* (n) butterfly of the worker this round, COLL_NONE if none */
    uint32_t *list;    /* (n) scratch: members */
    uint32_t *line;    /* (cells) scratch: group of a grid line, or a count */
    uint8_t *phase;    /* (n) PH_* */
    uint32_t *left;    /* (n) local steps left */
    float *avg;        /* (n * P) butterfly outputs */
    size_t P;
    uint64_t round;
    uint32_t busy;   /* workers not done with the round */
    uint32_t active; /* butterflies started this round */
    bool idle;       /* nobody was up at the last round start */
    uint64_t groups, sat_out, alone, failed_members;
} moshpit;

static int mp_configure(void *state, sim_cfg *cfg, const sim_scenario *sc, sim_err *err)
{
    static const char *const forms[] = { "grid", "random" };
    moshpit *st = state;
    st->n = sc->workers;
    int form = sim_cfg_has(cfg, "grid") ? 0 : 1;
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
    if (!sim_cfg_has(cfg, "grid"))
        return sim_err_set(err, SIM_ESCENARIO, "$.protocol.grid",
                           "missing required key (or groups \"random\" with group_size)");
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
    return SIM_OK;
}

/* Butterflies: a grid round has at most cells / m_a lines (and at most n / 2 groups of two
 * or more); random groups number at most n / M, each of at most 2M - 1 members (when fewer
 * take part, the leftovers spread over fewer groups). */
static void sizes(const moshpit *st, uint32_t *nbf, uint32_t *cap)
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
}

static uint64_t mp_memory(const void *state, const sim_scenario *sc, size_t num_params)
{
    const moshpit *st = state;
    uint32_t nbf, cap;
    sizes(st, &nbf, &cap);
    uint64_t n = sc->workers;
    return nbf * (coll_bfly_memory(sc->workers, cap, num_params) + sizeof(coll_bfly)) +
           n * (st->d * 4 + 4 + 4 + 1 + 4) + (uint64_t)st->cells * 4 + n * num_params * 4;
}

static void mp_fini(void *state)
{
    moshpit *st = state;
    for (uint32_t i = 0; st->bf != NULL && i < st->nbf; i++)
        coll_bfly_fini(&st->bf[i]);
    free(st->bf);
    coll_hub_fini(&st->hub);
    free(st->coord);
    free(st->group);
    free(st->list);
    free(st->line);
    free(st->phase);
    free(st->left);
    sim_tensor_free(st->avg);
}

/* ---- rounds ---- */

static const float *mp_input(void *ud, sim_ctx *ctx, uint32_t w)
{
    (void)ud;
    return sim_ctx_params(ctx, w);
}

static float *mp_output(void *ud, sim_ctx *ctx, uint32_t w)
{
    (void)ctx;
    moshpit *st = ud;
    return st->avg + (size_t)w * st->P;
}

static int begin_round(moshpit *st, sim_ctx *ctx, sim_err *err);

/* Ends the round when every worker is done with it and every butterfly complete. */
static int check_round(moshpit *st, sim_ctx *ctx, sim_err *err)
{
    if (st->busy > 0)
        return SIM_OK;
    for (uint32_t g = 0; g < st->active; g++)
        if (!coll_bfly_round_complete(&st->bf[g]))
            return SIM_OK;
    st->busy = UINT32_MAX; /* until the next round starts */
    sim_ctx_round_end(ctx);
    st->round++;
    return sim_ctx_timer(ctx, 0, EV_NEXT, SIM_NOBODY, st->round, NULL, err);
}

static int finish(moshpit *st, sim_ctx *ctx, uint32_t w, sim_err *err)
{
    st->phase[w] = PH_DONE;
    st->busy--;
    return check_round(st, ctx, err);
}

static int on_done(void *ud, sim_ctx *ctx, uint32_t w, const coll_info *info, sim_err *err)
{
    moshpit *st = ud;
    if (st->phase[w] != PH_GROUP || info->round != st->round)
        return SIM_OK; /* left the round (down) */
    if (st->P > 0) {
        float *x = sim_ctx_params(ctx, w);
        const float *a = st->avg + (size_t)w * st->P;
        if (st->alpha == 1.0)
            sim_tensor_copy(x, a, st->P);
        else
            for (size_t i = 0; i < st->P; i++)
                x[i] += (float)st->alpha * (a[i] - x[i]);
    }
    return finish(st, ctx, w, err);
}

/* Worker w's local steps are done: it joins its group, or is done. */
static int ready(moshpit *st, sim_ctx *ctx, uint32_t w, sim_err *err)
{
    if (st->group[w] == COLL_NONE)
        return finish(st, ctx, w, err);
    st->phase[w] = PH_GROUP;
    return coll_bfly_join(&st->bf[st->group[w]], ctx, w, err);
}

/* Groups of the round from the participants in list[0..k) (ascending ids): sets group[] and
 * starts the butterflies. */
static int start_groups(moshpit *st, sim_ctx *ctx, uint32_t k, sim_err *err)
{
    uint32_t *members = st->list + k; /* the rest of the scratch list */
    uint32_t g = 0;
    if (st->random) {
        gsl_ran_shuffle(sim_ctx_proto_rng(ctx), st->list, k, sizeof(*st->list));
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
                st->group[members[i]] = g;
            int rc = coll_bfly_start(&st->bf[g], ctx, members, NULL, c, st->round, err);
            if (rc != SIM_OK)
                return rc;
        }
        st->alone += k == 1 ? 1 : 0;
        st->active = g;
        st->groups += g;
        return SIM_OK;
    }
    uint32_t a = (uint32_t)(st->round % st->d);
    for (uint32_t c = 0; c < st->cells; c++)
        st->line[c] = 0;
    for (uint32_t i = 0; i < k; i++) { /* line key: the cell with coordinate a set to 0 */
        uint32_t w = st->list[i], key = 0;
        for (uint32_t b = 0; b < st->d; b++)
            key = key * st->m[b] + (b == a ? 0 : st->coord[(size_t)w * st->d + b]);
        st->group[w] = key;
        st->line[key]++;
    }
    /* Lines with two or more members get butterflies in key order; count -> index + 1. */
    for (uint32_t c = 0; c < st->cells; c++)
        st->line[c] = st->line[c] >= 2 ? ++g : 0;
    st->active = g;
    st->groups += g;
    for (uint32_t i = 0; i < k; i++) {
        uint32_t w = st->list[i];
        uint32_t idx = st->line[st->group[w]];
        st->alone += idx == 0 ? 1 : 0;
        st->group[w] = idx == 0 ? COLL_NONE : idx - 1;
    }
    for (uint32_t b = 0; b < g; b++) {
        uint32_t c = 0;
        for (uint32_t i = 0; i < k; i++)
            if (st->group[st->list[i]] == b)
                members[c++] = st->list[i];
        int rc = coll_bfly_start(&st->bf[b], ctx, members, NULL, c, st->round, err);
        if (rc != SIM_OK)
            return rc;
    }
    return SIM_OK;
}

static int begin_round(moshpit *st, sim_ctx *ctx, sim_err *err)
{
    uint32_t k = 0, live = 0;
    for (uint32_t w = 0; w < st->n; w++) {
        st->group[w] = COLL_NONE;
        st->phase[w] = PH_IDLE;
        if (sim_ctx_down(ctx, w))
            continue;
        live++;
        if (sim_ctx_dropped(ctx, w, st->round))
            st->sat_out++;
        else
            st->list[k++] = w;
    }
    st->idle = live == 0;
    st->busy = 0;
    if (live == 0)
        return SIM_OK; /* nobody: a recovery starts the next round */
    int rc = start_groups(st, ctx, k, err);
    if (rc != SIM_OK)
        return rc;
    st->busy = live;
    for (uint32_t w = 0; w < st->n && rc == SIM_OK; w++) {
        if (sim_ctx_down(ctx, w))
            continue;
        if (st->local_steps > 0) {
            st->phase[w] = PH_COMPUTE;
            st->left[w] = st->local_steps;
            rc = sim_ctx_compute(ctx, w, st->round, err);
        } else {
            rc = ready(st, ctx, w, err);
        }
    }
    return rc;
}

static int mp_start(void *state, sim_ctx *ctx, sim_err *err)
{
    moshpit *st = state;
    st->P = sim_ctx_num_params(ctx);
    sizes(st, &st->nbf, &st->cap);
    size_t n = st->n;
    st->bf = calloc(st->nbf, sizeof(*st->bf));
    st->group = calloc(n, sizeof(*st->group));
    st->list = calloc(2 * n, sizeof(*st->list));
    st->phase = calloc(n, sizeof(*st->phase));
    st->left = calloc(n, sizeof(*st->left));
    if (!st->random) {
        st->coord = calloc(n * st->d, sizeof(*st->coord));
        st->line = calloc(st->cells, sizeof(*st->line));
    }
    if (st->P > 0)
        st->avg = sim_tensor_alloc(n * st->P);
    if (st->bf == NULL || st->group == NULL || st->list == NULL || st->phase == NULL ||
        st->left == NULL || (!st->random && (st->coord == NULL || st->line == NULL)) ||
        (st->P > 0 && st->avg == NULL))
        return sim_err_set(err, SIM_ENOMEM, NULL, "out of memory");
    int rc = coll_hub_init(&st->hub, st->nbf, EV_COLL, err);
    sim_time s_ns = (sim_time)llround(st->sender_ms * 1e6);
    sim_time r_ns = (sim_time)llround(st->reducer_ms * 1e6);
    for (uint32_t g = 0; g < st->nbf && rc == SIM_OK; g++) {
        rc = coll_bfly_init(&st->bf[g], &st->hub, st->n, st->cap, st->P, sim_ctx_model_bytes(ctx),
                            mp_input, mp_output, on_done, st, err);
        if (rc == SIM_OK)
            coll_bfly_set_timeouts(&st->bf[g], s_ns, r_ns);
    }
    if (rc != SIM_OK)
        return rc;
    if (!st->random) { /* distinct cells: the first n of a shuffle of all of them */
        for (uint32_t c = 0; c < st->cells; c++)
            st->line[c] = c;
        gsl_ran_shuffle(sim_ctx_proto_rng(ctx), st->line, st->cells, sizeof(*st->line));
        for (uint32_t w = 0; w < st->n; w++)
            for (uint32_t b = st->d, c = st->line[w]; b-- > 0; c /= st->m[b])
                st->coord[(size_t)w * st->d + b] = c % st->m[b];
    }
    return begin_round(st, ctx, err);
}

static int mp_on_event(void *state, sim_ctx *ctx, const sim_event *ev, sim_err *err)
{
    moshpit *st = state;
    uint32_t w = (uint32_t)ev->dst;
    bool handled = false;
    int rc = coll_hub_on_event(&st->hub, ctx, ev, &handled, err);
    if (rc != SIM_OK || handled)
        return rc;
    switch (ev->kind) {
    case SIM_EV_COMPUTED:
        if (st->phase[w] != PH_COMPUTE || ev->arg[0] != st->round)
            return SIM_OK;
        if (st->P > 0)
            sim_ctx_apply(ctx, w, sim_ctx_grad(ctx, w));
        sim_ctx_count(ctx, w, 1);
        if (--st->left[w] > 0)
            return sim_ctx_compute(ctx, w, st->round, err);
        return ready(st, ctx, w, err);
    case SIM_EV_MSG:
        return sim_err_set(err, SIM_EINVAL, NULL, "moshpit: message on no butterfly");
    case SIM_EV_WORKER_DOWN:
        if (st->phase[w] == PH_COMPUTE || st->phase[w] == PH_GROUP) {
            st->failed_members += st->phase[w] == PH_GROUP ? 1 : 0;
            st->phase[w] = PH_DONE;
            st->busy--;
        }
        rc = coll_hub_worker_down(&st->hub, ctx, w, err);
        return rc != SIM_OK ? rc : check_round(st, ctx, err);
    case SIM_EV_WORKER_UP:
        if (st->idle)
            return begin_round(st, ctx, err); /* everybody was down: start again */
        return SIM_OK;                        /* joins at the next round start */
    case EV_NEXT:
        return begin_round(st, ctx, err);
    default:
        return sim_err_set(err, SIM_EINVAL, NULL, "moshpit: unexpected event kind %u", ev->kind);
    }
}

static void mp_report(const void *state, const sim_ctx *ctx, sim_report *out)
{
    (void)ctx;
    const moshpit *st = state;
    uint64_t stale = 0, dropped = 0, kept = 0;
    for (uint32_t g = 0; g < st->nbf; g++) {
        stale += st->bf[g].stale;
        dropped += st->bf[g].dropped;
        kept += st->bf[g].kept;
    }
    sim_report_add(out, "rounds", (double)st->round);
    sim_report_add(out, "groups", (double)st->groups);
    sim_report_add(out, "sat_out", (double)st->sat_out);
    sim_report_add(out, "alone", (double)st->alone);
    sim_report_add(out, "failed_members", (double)st->failed_members);
    sim_report_add(out, "stale_parts", (double)stale);
    sim_report_add(out, "dropped_parts", (double)dropped);
    sim_report_add(out, "kept_parts", (double)kept);
}

const proto_ops proto_moshpit = {
    .name = "moshpit",
    .summary = "moshpit: butterfly averaging in small groups that change every round (grid)",
    .state_size = sizeof(moshpit),
    .rounds = true,
    .configure = mp_configure,
    .start = mp_start,
    .on_event = mp_on_event,
    .report = mp_report,
    .memory = mp_memory,
    .fini = mp_fini,
};
