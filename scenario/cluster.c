/* The cluster: compute times, straggler rules, the timeline of failures and link windows,
 * the random streams and the workers' up/down state (DESIGN §3).
 *
 * Everything is precomputed at creation so that sim_cluster_iteration_ns does no
 * allocation and no scan over rules that do not select the worker:
 *   - fixed[w]: the product of the factors of the fixed rules selecting w (file order);
 *   - dyn_start/dyn: per worker, the indices of the random and window rules selecting it,
 *     in file order (a CSR layout, memory O(workers + total selections));
 *   - run_start/runs/trace_ns/trace_factor: per worker, its trace points grouped by trace
 *     rule (file order) and sorted by time within a rule, searched by bisection;
 *   - timeline: the time-driven changes, sorted.
 *
 * The slowdown is multiplied in this order: fixed factors (file order), random and window
 * factors (file order), trace factors (file order). The duration is then
 * llround(base / speed * slowdown * jitter), evaluated left to right in double.
 *
 * Durations are clamped to [1, CLUSTER_MAX_ITERATION_NS]: a NaN or a value at or above the
 * maximum (an absurd slowdown product, an infinite jitter draw) gives the maximum, so that
 * converting to an integer is always defined and now + duration cannot overflow for any
 * run shorter than 2^62 ns (about 146 years).
 *
 * Although the scenario is assumed to have been validated by the loader, worker ids are
 * checked at creation (SIM_EINVAL, naming the rule) because an id out of range would make
 * this module write out of bounds.
 */
#include "scenario/cluster.h"

#include <assert.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_randist.h>

#include "sim/rng.h"

/* The longest iteration sim_cluster_iteration_ns returns: 2^62 ns. */
#define CLUSTER_MAX_ITERATION_NS (INT64_C(1) << 62)

enum {
    CLUSTER_FIXED_STREAMS = SIM_STREAM_PROTO + 1
};

/* The points of one trace rule for one worker: trace_ns[offset .. offset + count). */
typedef struct trace_run {
    size_t offset;
    size_t count;
} trace_run;

struct sim_cluster {
    const sim_scenario *sc; /* borrowed; must outlive the cluster */
    uint32_t n;             /* workers */

    sim_rng_array rng;                      /* (n) worker streams */
    gsl_rng *stream[CLUSTER_FIXED_STREAMS]; /* SIM_STREAM_NET .. SIM_STREAM_PROTO */

    double *fixed;     /* (n) product of the fixed factors */
    size_t *dyn_start; /* (n + 1) offsets into dyn */
    size_t *dyn;       /* random and window rule indices, by worker, file order */

    size_t *run_start;    /* (n + 1) offsets into runs */
    trace_run *runs;      /* by worker, then trace rule in file order */
    sim_time *trace_ns;   /* (points) start times, ascending within a run */
    double *trace_factor; /* (points) slowdowns */

    sim_change *timeline; /* (ntimeline) sorted by (time, rule, worker) */
    size_t ntimeline;

    bool *down;    /* (n) */
    uint32_t live; /* workers up */

    double *keep;     /* (n) probability of taking part in a round (dropout rules), or NULL */
    uint64_t *drawn;  /* (n) averaging rounds drawn so far */
    uint8_t *dropped; /* (n) bit r mod 8: round r was sat out, for the last 8 rounds drawn */
};

/* calloc that never returns NULL for a zero count, so NULL always means out of memory. */
static void *alloc_array(size_t n, size_t size)
{
    return calloc(n > 0 ? n : 1, size);
}

/* Refuses (SIM_EINVAL) what would make this module read or write out of bounds: a worker
 * count out of range, missing arrays, an unknown rule kind, a worker id >= workers. */
static int check_ids(const sim_scenario *sc, sim_err *err)
{
    char path[160];
    if (sc->workers == 0 || sc->workers > SIM_MAX_WORKERS)
        return sim_err_set(err, SIM_EINVAL, "$.workers", "must be in 1..%u, got %u",
                           SIM_MAX_WORKERS, sc->workers);
    if (sc->speeds == NULL || sc->stream_seeds == NULL ||
        (sc->nstragglers > 0 && sc->stragglers == NULL))
        return sim_err_set(err, SIM_EINVAL, NULL,
                           "scenario lacks its speeds, stream seeds or rules");
    for (size_t i = 0; i < sc->nstragglers; i++) {
        const sim_straggler *s = &sc->stragglers[i];
        if ((unsigned)s->kind > SIM_STRAG_DROPOUT) {
            snprintf(path, sizeof(path), "$.stragglers[%zu].kind", i);
            return sim_err_set(err, SIM_EINVAL, path, "unknown rule kind %d", (int)s->kind);
        }
        if ((s->nworkers > 0 && s->workers == NULL) || (s->ntrace > 0 && s->trace == NULL)) {
            snprintf(path, sizeof(path), "$.stragglers[%zu]", i);
            return sim_err_set(err, SIM_EINVAL, path, "rule has no worker or trace array");
        }
        for (size_t j = 0; j < s->nworkers; j++) {
            if (s->workers[j] >= sc->workers) {
                snprintf(path, sizeof(path), "$.stragglers[%zu].workers[%zu]", i, j);
                return sim_err_set(err, SIM_EINVAL, path, "worker id must be < %u, got %u",
                                   sc->workers, s->workers[j]);
            }
        }
        for (size_t j = 0; j < s->ntrace; j++) {
            if (s->trace[j].worker >= sc->workers) {
                snprintf(path, sizeof(path), "$.stragglers[%zu].trace[%zu]", i, j);
                return sim_err_set(err, SIM_EINVAL, path, "worker id must be < %u, got %u",
                                   sc->workers, s->trace[j].worker);
            }
        }
    }
    return SIM_OK;
}

/* ---- streams ---- */

static void free_streams(sim_cluster *cl)
{
    // GSL does not document gsl_rng_free(NULL), hence the checks.
    for (int i = 0; i < CLUSTER_FIXED_STREAMS; i++) {
        if (cl->stream[i] != NULL)
            gsl_rng_free(cl->stream[i]);
        cl->stream[i] = NULL;
    }
    sim_rng_array_destroy(&cl->rng);
}

/* Creates the fixed streams and one stream per worker from the derived seeds. */
static int make_streams(sim_cluster *cl)
{
    const uint32_t *seeds = cl->sc->stream_seeds;
    for (int i = 0; i < CLUSTER_FIXED_STREAMS; i++) {
        cl->stream[i] = sim_rng_create(seeds[i]);
        if (cl->stream[i] == NULL)
            goto fail_free_streams;
    }
    if (sim_rng_array_create(&cl->rng, cl->n, seeds + SIM_STREAM_WORKER) != SIM_OK)
        goto fail_free_streams;
    return SIM_OK;

fail_free_streams:
    free_streams(cl);
    return SIM_ENOMEM;
}

/* ---- per-worker rule lists ---- */

/* Builds, for the rules whose kind is in `mask` (bits 1 << kind), the per-worker lists of
 * rule indices in file order: start (n + 1) offsets into idx. */
static int build_lists(const sim_scenario *sc, unsigned mask, size_t **start_out, size_t **idx_out)
{
    uint32_t n = sc->workers;
    size_t *start = alloc_array((size_t)n + 1, sizeof(*start));
    if (start == NULL)
        return SIM_ENOMEM;
    for (size_t i = 0; i < sc->nstragglers; i++) {
        const sim_straggler *s = &sc->stragglers[i];
        if (mask & (1u << s->kind)) {
            for (size_t j = 0; j < s->nworkers; j++)
                start[s->workers[j] + 1]++;
        }
    }
    for (uint32_t w = 0; w < n; w++)
        start[w + 1] += start[w];
    size_t *idx = alloc_array(start[n], sizeof(*idx));
    if (idx == NULL) {
        free(start);
        return SIM_ENOMEM;
    }
    // start[w] serves as w's cursor, then the whole array is shifted back by one.
    for (size_t i = 0; i < sc->nstragglers; i++) {
        const sim_straggler *s = &sc->stragglers[i];
        if (mask & (1u << s->kind)) {
            for (size_t j = 0; j < s->nworkers; j++)
                idx[start[s->workers[j]]++] = i;
        }
    }
    memmove(start + 1, start, n * sizeof(*start));
    start[0] = 0;
    *start_out = start;
    *idx_out = idx;
    return SIM_OK;
}

static void free_compute(sim_cluster *cl)
{
    free(cl->fixed);
    free(cl->dyn_start);
    free(cl->dyn);
    cl->fixed = NULL;
    cl->dyn_start = NULL;
    cl->dyn = NULL;
}

static int build_compute(sim_cluster *cl)
{
    const sim_scenario *sc = cl->sc;
    cl->fixed = alloc_array(cl->n, sizeof(*cl->fixed));
    if (cl->fixed == NULL)
        return SIM_ENOMEM;
    for (uint32_t w = 0; w < cl->n; w++)
        cl->fixed[w] = 1.0;
    for (size_t i = 0; i < sc->nstragglers; i++) {
        const sim_straggler *s = &sc->stragglers[i];
        if (s->kind == SIM_STRAG_FIXED) {
            for (size_t j = 0; j < s->nworkers; j++)
                cl->fixed[s->workers[j]] *= s->slowdown;
        }
    }
    unsigned mask = (1u << SIM_STRAG_RANDOM) | (1u << SIM_STRAG_WINDOW);
    if (build_lists(sc, mask, &cl->dyn_start, &cl->dyn) != SIM_OK) {
        free_compute(cl);
        return SIM_ENOMEM;
    }
    return SIM_OK;
}

/* ---- trace rules ---- */

static void free_trace(sim_cluster *cl)
{
    free(cl->run_start);
    free(cl->runs);
    free(cl->trace_ns);
    free(cl->trace_factor);
    cl->run_start = NULL;
    cl->runs = NULL;
    cl->trace_ns = NULL;
    cl->trace_factor = NULL;
}

/* One walk over the trace points, rule by rule in file order, for build_trace's two passes.
 * A point opens a run when it is its rule's first for its worker (last[w], zeroed here, holds
 * the rule index + 1 last seen). Counting (fill false): pt_start[w + 1] and run_start[w + 1]
 * count w's points and runs. Filling: pt_start[w] and run_start[w] are w's next free slots,
 * each point goes to the trace arrays and into its run. */
static void trace_walk(sim_cluster *cl, size_t *pt_start, size_t *last, bool fill)
{
    const sim_scenario *sc = cl->sc;
    memset(last, 0, cl->n * sizeof(*last));
    for (size_t i = 0; i < sc->nstragglers; i++) {
        const sim_straggler *s = &sc->stragglers[i];
        if (s->kind != SIM_STRAG_TRACE)
            continue;
        for (size_t j = 0; j < s->ntrace; j++) {
            uint32_t w = s->trace[j].worker;
            bool opens = last[w] != i + 1;
            last[w] = i + 1;
            if (!fill) {
                pt_start[w + 1]++;
                cl->run_start[w + 1] += opens;
                continue;
            }
            if (opens)
                cl->runs[cl->run_start[w]++] = (trace_run){ .offset = pt_start[w], .count = 0 };
            cl->runs[cl->run_start[w] - 1].count++;
            cl->trace_ns[pt_start[w]] = s->trace[j].time_ns;
            cl->trace_factor[pt_start[w]++] = s->trace[j].slowdown;
        }
    }
}

/* Groups the trace points by worker, then by rule (file order), keeping each rule's time
 * order: a counting sort with one run per (worker, rule) that has points. */
static int build_trace(sim_cluster *cl)
{
    uint32_t n = cl->n;
    size_t *pt_start = alloc_array((size_t)n + 1, sizeof(*pt_start));
    size_t *last = alloc_array(n, sizeof(*last));
    cl->run_start = alloc_array((size_t)n + 1, sizeof(*cl->run_start));
    if (pt_start == NULL || last == NULL || cl->run_start == NULL)
        goto fail_free_all;
    trace_walk(cl, pt_start, last, false);
    for (uint32_t w = 0; w < n; w++) {
        pt_start[w + 1] += pt_start[w];
        cl->run_start[w + 1] += cl->run_start[w];
    }
    cl->runs = alloc_array(cl->run_start[n], sizeof(*cl->runs));
    cl->trace_ns = alloc_array(pt_start[n], sizeof(*cl->trace_ns));
    cl->trace_factor = alloc_array(pt_start[n], sizeof(*cl->trace_factor));
    if (cl->runs == NULL || cl->trace_ns == NULL || cl->trace_factor == NULL)
        goto fail_free_all;
    trace_walk(cl, pt_start, last, true);
    memmove(cl->run_start + 1, cl->run_start, n * sizeof(*cl->run_start));
    cl->run_start[0] = 0;
    free(last);
    free(pt_start);
    return SIM_OK;

fail_free_all:
    free(last);
    free(pt_start);
    free_trace(cl);
    return SIM_ENOMEM;
}

/* The product over w's trace rules of the slowdown of the last point at or before `now`. */
static double trace_slowdown(const sim_cluster *cl, uint32_t w, sim_time now)
{
    double f = 1.0;
    for (size_t i = cl->run_start[w]; i < cl->run_start[w + 1]; i++) {
        const sim_time *t = cl->trace_ns + cl->runs[i].offset;
        // Bisection for the number of points with time <= now (an upper bound).
        size_t lo = 0, hi = cl->runs[i].count;
        while (lo < hi) {
            size_t mid = lo + (hi - lo) / 2;
            if (t[mid] <= now)
                lo = mid + 1;
            else
                hi = mid;
        }
        if (lo > 0)
            f *= cl->trace_factor[cl->runs[i].offset + lo - 1];
    }
    return f;
}

/* ---- timeline ---- */

/* A change with its sort key: (time, rule, worker, sub) is unique, so qsort's order is
 * total and equals a stable sort by time of the changes emitted rule by rule. */
typedef struct keyed_change {
    sim_change c;
    size_t rule; /* failure: its rule; link: the first rule with a boundary at that time */
    int sub;     /* failure: 0 for down, 1 for up */
} keyed_change;

typedef struct boundary {
    sim_time t;
    size_t rule; /* the rule's index in the scenario */
    size_t pos;  /* its place in the worker's list of link rules */
    bool end;    /* the window's end (else its start) */
} boundary;

static int cmp_keyed(const void *pa, const void *pb)
{
    const keyed_change *a = pa, *b = pb;
    if (a->c.time_ns != b->c.time_ns)
        return a->c.time_ns < b->c.time_ns ? -1 : 1;
    if (a->rule != b->rule)
        return a->rule < b->rule ? -1 : 1;
    if (a->c.worker != b->c.worker)
        return a->c.worker < b->c.worker ? -1 : 1;
    return (a->sub > b->sub) - (a->sub < b->sub);
}

static int cmp_boundary(const void *pa, const void *pb)
{
    const boundary *a = pa, *b = pb;
    if (a->t != b->t)
        return a->t < b->t ? -1 : 1;
    if (a->rule != b->rule)
        return a->rule < b->rule ? -1 : 1;
    return (int)a->end - (int)b->end;
}

static sim_time add_sat(sim_time a, sim_time b)
{
    if (b > 0 && a > INT64_MAX - b)
        return INT64_MAX;
    if (b < 0 && a < INT64_MIN - b)
        return INT64_MIN;
    return a + b;
}

/* The window boundaries at t, scratch[b..e): the rules starting at t join the active list
 * act[0..*nact) (places in the worker's list, ascending), then those ending at t leave it (a
 * window that starts and ends at t is never active). */
static void apply_boundaries(const boundary *scratch, size_t b, size_t e, size_t *act, size_t *nact)
{
    for (int pass = 0; pass < 2; pass++)
        for (size_t k = b; k < e; k++) {
            if (scratch[k].end != (pass == 1))
                continue;
            size_t pos = scratch[k].pos, i = 0;
            while (i < *nact && act[i] < pos)
                i++;
            if (pass == 0) {
                memmove(act + i + 1, act + i, (*nact - i) * sizeof(*act));
                act[i] = pos;
                (*nact)++;
            } else if (i < *nact && act[i] == pos) {
                memmove(act + i, act + i + 1, (*nact - i - 1) * sizeof(*act));
                (*nact)--;
            }
        }
}

/* Appends to `out` the link changes of worker w, whose link rules are rules[0..nrules):
 * one per distinct boundary at which the combined state differs from the one before, the
 * active rules' latencies added and bandwidth factors multiplied in the list's order.
 * `scratch` holds 2 * nrules boundaries, `act` nrules places: the rules active at each
 * boundary are kept as they change, so the set-up grows with the boundaries and the rules
 * active at once, not with their product. Returns the number appended. */
static size_t link_changes(const sim_scenario *sc, uint32_t w, const size_t *rules, size_t nrules,
                           boundary *scratch, size_t *act, keyed_change *out)
{
    size_t nb = 0, nact = 0;
    for (size_t i = 0; i < nrules; i++) {
        const sim_straggler *s = &sc->stragglers[rules[i]];
        scratch[nb++] = (boundary){ s->from_ns, rules[i], i, false };
        if (s->to_ns != SIM_TIME_NEVER)
            scratch[nb++] = (boundary){ s->to_ns, rules[i], i, true };
    }
    qsort(scratch, nb, sizeof(*scratch), cmp_boundary);
    sim_time prev_lat = 0;
    double prev_bw = 1.0;
    size_t nout = 0;
    for (size_t b = 0, e; b < nb; b = e) {
        sim_time t = scratch[b].t; /* the first entry at t carries the lowest rule index */
        for (e = b; e < nb && scratch[e].t == t; e++)
            ;
        apply_boundaries(scratch, b, e, act, &nact);
        sim_time lat = 0;
        double bw = 1.0;
        for (size_t k = 0; k < nact; k++) {
            const sim_straggler *s = &sc->stragglers[rules[act[k]]];
            lat = add_sat(lat, s->extra_latency_ns);
            bw *= s->bandwidth_factor;
        }
        if (lat == prev_lat && bw == prev_bw)
            continue;
        out[nout++] = (keyed_change){
            .c = { .time_ns = t,
                   .kind = SIM_CHANGE_LINK,
                   .worker = w,
                   .extra_latency_ns = lat,
                   .bandwidth_factor = bw },
            .rule = scratch[b].rule,
        };
        prev_lat = lat;
        prev_bw = bw;
    }
    return nout;
}

/* Appends a DOWN change per selected worker of each failure rule, and an UP change when the
 * rule recovers; their link fields hold the neutral values (0 ns, factor 1). */
static size_t emit_failures(const sim_scenario *sc, keyed_change *out)
{
    size_t n = 0;
    for (size_t i = 0; i < sc->nstragglers; i++) {
        const sim_straggler *s = &sc->stragglers[i];
        if (s->kind != SIM_STRAG_FAILURE)
            continue;
        for (size_t j = 0; j < s->nworkers; j++) {
            sim_change c = { .time_ns = s->at_ns,
                             .kind = SIM_CHANGE_DOWN,
                             .worker = s->workers[j],
                             .bandwidth_factor = 1.0 };
            out[n++] = (keyed_change){ .c = c, .rule = i, .sub = 0 };
            if (s->recover_ns != SIM_TIME_NEVER) {
                c.time_ns = s->recover_ns;
                c.kind = SIM_CHANGE_UP;
                out[n++] = (keyed_change){ .c = c, .rule = i, .sub = 1 };
            }
        }
    }
    return n;
}

/* Keeps, of the sorted changes, a worker's DOWN only when no failure rule holds it down yet
 * and its UP only when the last one that did recovers: a worker is down while any of its
 * failure rules holds it down (the union of their windows; never up again after a failure for
 * good). `depth` (workers entries, zeroed) counts the rules holding each worker down. */
static size_t merge_failures(keyed_change *tmp, size_t n, uint32_t *depth)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        const sim_change *c = &tmp[i].c;
        if (c->kind == SIM_CHANGE_DOWN && depth[c->worker]++ > 0)
            continue;
        if (c->kind == SIM_CHANGE_UP && --depth[c->worker] > 0)
            continue;
        tmp[k++] = tmp[i];
    }
    return k;
}

/* Builds the sorted timeline, overlapping failure rules merged (merge_failures). */
static int build_timeline(sim_cluster *cl)
{
    const sim_scenario *sc = cl->sc;
    size_t bound = 0, max_links = 0;
    size_t *link_start = NULL, *link_idx = NULL;
    keyed_change *tmp = NULL;
    boundary *scratch = NULL;
    size_t *act = NULL;
    for (size_t i = 0; i < sc->nstragglers; i++) {
        const sim_straggler *s = &sc->stragglers[i];
        if (s->kind == SIM_STRAG_FAILURE)
            bound += s->nworkers * (s->recover_ns != SIM_TIME_NEVER ? 2 : 1);
        else if (s->kind == SIM_STRAG_LINK)
            bound += s->nworkers * 2;
    }
    if (build_lists(sc, 1u << SIM_STRAG_LINK, &link_start, &link_idx) != SIM_OK)
        goto fail;
    for (uint32_t w = 0; w < cl->n; w++) {
        if (link_start[w + 1] - link_start[w] > max_links)
            max_links = link_start[w + 1] - link_start[w];
    }
    tmp = alloc_array(bound, sizeof(*tmp));
    if (tmp == NULL)
        goto fail_free_lists;
    scratch = alloc_array(2 * max_links, sizeof(*scratch));
    act = alloc_array(max_links, sizeof(*act));
    if (scratch == NULL || act == NULL)
        goto fail_free_scratch;

    size_t n = emit_failures(sc, tmp);
    for (uint32_t w = 0; w < cl->n; w++) {
        size_t nr = link_start[w + 1] - link_start[w];
        if (nr > 0)
            n += link_changes(sc, w, link_idx + link_start[w], nr, scratch, act, tmp + n);
    }
    qsort(tmp, n, sizeof(*tmp), cmp_keyed);
    if (n > 0) {
        uint32_t *depth = calloc(cl->n, sizeof(*depth));
        if (depth == NULL)
            goto fail_free_scratch;
        n = merge_failures(tmp, n, depth);
        free(depth);
    }
    cl->timeline = alloc_array(n, sizeof(*cl->timeline));
    if (cl->timeline == NULL)
        goto fail_free_scratch;
    for (size_t i = 0; i < n; i++)
        cl->timeline[i] = tmp[i].c;
    cl->ntimeline = n;
    free(act);
    free(scratch);
    free(tmp);
    free(link_idx);
    free(link_start);
    return SIM_OK;

fail_free_scratch:
    free(act);
    free(scratch);
    free(tmp);
fail_free_lists:
    free(link_idx);
    free(link_start);
fail:
    return SIM_ENOMEM;
}

/* ---- dropout rules ---- */

/* Each worker's probability of taking part in an averaging round (the product over its
 * dropout rules), and the memory of its draws; nothing when no rule is a dropout rule. */
static int build_dropout(sim_cluster *cl)
{
    const sim_scenario *sc = cl->sc;
    bool any = false;
    for (size_t i = 0; i < sc->nstragglers; i++)
        any = any || sc->stragglers[i].kind == SIM_STRAG_DROPOUT;
    if (!any)
        return SIM_OK;
    cl->keep = alloc_array(cl->n, sizeof(*cl->keep));
    cl->drawn = alloc_array(cl->n, sizeof(*cl->drawn));
    cl->dropped = alloc_array(cl->n, sizeof(*cl->dropped));
    if (cl->keep == NULL || cl->drawn == NULL || cl->dropped == NULL) {
        free(cl->keep);
        free(cl->drawn);
        free(cl->dropped);
        cl->keep = NULL;
        cl->drawn = NULL;
        cl->dropped = NULL;
        return SIM_ENOMEM;
    }
    for (uint32_t w = 0; w < cl->n; w++)
        cl->keep[w] = 1.0;
    for (size_t i = 0; i < sc->nstragglers; i++) {
        const sim_straggler *s = &sc->stragglers[i];
        if (s->kind == SIM_STRAG_DROPOUT)
            for (size_t j = 0; j < s->nworkers; j++)
                cl->keep[s->workers[j]] *= 1.0 - s->probability;
    }
    return SIM_OK;
}

bool sim_cluster_has_dropout(const sim_cluster *cl)
{
    return cl->keep != NULL;
}

bool sim_cluster_dropped(sim_cluster *cl, uint32_t w, uint64_t round)
{
    assert(w < cl->n);
    if (cl->keep == NULL)
        return false;
    while (cl->drawn[w] <= round) {
        /* One draw per round, in round order, whatever the probability. */
        uint8_t bit = (uint8_t)(1u << (cl->drawn[w] & 7));
        bool out = gsl_rng_uniform(sim_rng_array_at(&cl->rng, w)) >= cl->keep[w];
        cl->dropped[w] = (uint8_t)(out ? cl->dropped[w] | bit : cl->dropped[w] & ~bit);
        cl->drawn[w]++;
    }
    if (round + 8 < cl->drawn[w])
        return false; /* forgotten: too old to be asked about */
    return (cl->dropped[w] >> (round & 7) & 1) != 0;
}

bool sim_cluster_always_dropped(const sim_cluster *cl, uint32_t w)
{
    assert(w < cl->n);
    return cl->keep != NULL && cl->keep[w] <= 0.0;
}

/* ---- lifecycle ---- */

sim_cluster *sim_cluster_create(const sim_scenario *sc, sim_err *err)
{
    int rc = check_ids(sc, err);
    if (rc != SIM_OK)
        return NULL;
    sim_cluster *cl = calloc(1, sizeof(*cl));
    if (cl == NULL)
        goto fail;
    cl->sc = sc;
    cl->n = sc->workers;
    if (make_streams(cl) != SIM_OK)
        goto fail_free_cluster;
    if (build_compute(cl) != SIM_OK)
        goto fail_free_streams;
    if (build_trace(cl) != SIM_OK)
        goto fail_free_compute;
    if (build_timeline(cl) != SIM_OK)
        goto fail_free_trace;
    cl->down = alloc_array(cl->n, sizeof(*cl->down));
    if (cl->down == NULL)
        goto fail_free_timeline;
    cl->live = cl->n;
    if (build_dropout(cl) != SIM_OK)
        goto fail_free_down;
    return cl;

fail_free_down:
    free(cl->down);
fail_free_timeline:
    free(cl->timeline);
fail_free_trace:
    free_trace(cl);
fail_free_compute:
    free_compute(cl);
fail_free_streams:
    free_streams(cl);
fail_free_cluster:
    free(cl);
fail:
    sim_err_set(err, SIM_ENOMEM, NULL, "cannot allocate the cluster of %u workers", sc->workers);
    return NULL;
}

void sim_cluster_destroy(sim_cluster *cl)
{
    if (cl == NULL)
        return;
    free(cl->keep);
    free(cl->drawn);
    free(cl->dropped);
    free(cl->down);
    free(cl->timeline);
    free_trace(cl);
    free_compute(cl);
    free_streams(cl);
    free(cl);
}

/* ---- queries ---- */

uint32_t sim_cluster_workers(const sim_cluster *cl)
{
    return cl->n;
}

gsl_rng *sim_cluster_worker_rng(sim_cluster *cl, uint32_t w)
{
    assert(w < cl->n);
    return sim_rng_array_at(&cl->rng, w);
}

/* Returns NULL for an id that is not one of the fixed streams. */
gsl_rng *sim_cluster_stream(sim_cluster *cl, int stream)
{
    if (stream < SIM_STREAM_NET || stream >= CLUSTER_FIXED_STREAMS)
        return NULL;
    return cl->stream[stream];
}

static bool in_window(const sim_straggler *s, sim_time now)
{
    return s->from_ns <= now && now < s->to_ns;
}

/* Rounds a duration to whole nanoseconds in [1, CLUSTER_MAX_ITERATION_NS]; NaN gives the
 * maximum. The comparison comes first so that llround only sees values it can represent. */
static sim_time to_duration_ns(double x)
{
    if (!(x < (double)CLUSTER_MAX_ITERATION_NS))
        return CLUSTER_MAX_ITERATION_NS;
    long long t = llround(x);
    return t < 1 ? 1 : (sim_time)t;
}

sim_time sim_cluster_iteration_ns(sim_cluster *cl, uint32_t w, sim_time now, uint64_t k)
{
    assert(w < cl->n);
    (void)k; /* no rule depends on the iteration count yet */
    const sim_scenario *sc = cl->sc;
    gsl_rng *r = sim_rng_array_at(&cl->rng, w);
    double slowdown = cl->fixed[w];
    for (size_t i = cl->dyn_start[w]; i < cl->dyn_start[w + 1]; i++) {
        const sim_straggler *s = &sc->stragglers[cl->dyn[i]];
        if (s->kind == SIM_STRAG_RANDOM) {
            // Draw whatever the probability, so that the stream's use never depends on it.
            if (gsl_rng_uniform(r) < s->probability)
                slowdown *= s->slowdown;
        } else if (in_window(s, now)) {
            slowdown *= s->slowdown;
        }
    }
    slowdown *= trace_slowdown(cl, w, now);
    double x = (double)sc->iteration_ns / sc->speeds[w] * slowdown;
    double sigma = sc->jitter_sigma;
    if (sigma > 0)
        x *= gsl_ran_lognormal(r, -0.5 * sigma * sigma, sigma); /* mean 1 */
    return to_duration_ns(x);
}

double sim_cluster_static_slowdown(const sim_cluster *cl, uint32_t w, sim_time now)
{
    assert(w < cl->n);
    const sim_scenario *sc = cl->sc;
    double slowdown = cl->fixed[w];
    for (size_t i = cl->dyn_start[w]; i < cl->dyn_start[w + 1]; i++) {
        const sim_straggler *s = &sc->stragglers[cl->dyn[i]];
        if (s->kind == SIM_STRAG_WINDOW && in_window(s, now))
            slowdown *= s->slowdown;
    }
    return slowdown * trace_slowdown(cl, w, now);
}

const sim_change *sim_cluster_timeline(const sim_cluster *cl, size_t *n)
{
    if (n != NULL)
        *n = cl->ntimeline;
    return cl->timeline;
}

/* ---- up/down state ---- */

bool sim_cluster_down(const sim_cluster *cl, uint32_t w)
{
    assert(w < cl->n);
    return cl->down[w];
}

/* Setting a worker to the state it already has changes nothing. */
void sim_cluster_set_down(sim_cluster *cl, uint32_t w, bool down)
{
    assert(w < cl->n);
    if (cl->down[w] == down)
        return;
    cl->down[w] = down;
    if (down)
        cl->live--;
    else
        cl->live++;
}

uint32_t sim_cluster_live(const sim_cluster *cl)
{
    return cl->live;
}
