/* The run's arena and per-worker state (runtime/arena.h, proto_ops.worker_size and buffers,
 * sim_ctx_worker, sim_ctx_peer), through a tiny protocol defined here: states and buffers come
 * zeroed, aligned and one per worker; the memory check counts the arena by a sizing pass,
 * before anything is allocated; a hook that asks for more than it sized fails the run; and
 * reads of another worker's state are counted into summary.json. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "harness.h"
#include "runtime/arena.h"
#include "runtime/ctx.h"
#include "runtime/proto.h"
#include "runtime/run.h"

static const char real_json[] = "tests/scenarios/ctx/real.json";

/* ---- the arena alone ---- */

START_TEST(a_sizing_arena_counts_rounded_requests_and_the_run_s_arena_hands_them_out)
{
    sim_err err;
    sim_err_clear(&err);
    sim_arena *s = sim_arena_create_sizing(&err);
    ck_assert_ptr_nonnull(s);
    ck_assert_ptr_null(sim_arena_alloc(s, 3, 7));  /* 21 bytes: one line */
    ck_assert_ptr_null(sim_arena_alloc(s, 0, 8));  /* nothing */
    ck_assert_ptr_null(sim_arena_alloc(s, 17, 8)); /* 136 bytes: three lines */
    ck_assert_uint_eq(sim_arena_bytes(s), 64 + 192);
    sim_arena *a = sim_arena_create(sim_arena_bytes(s), &err);
    ck_assert_ptr_nonnull(a);
    unsigned char *p = sim_arena_alloc(a, 3, 7);
    ck_assert_ptr_null(sim_arena_alloc(a, 0, 8));
    unsigned char *q = sim_arena_alloc(a, 17, 8);
    ck_assert_ptr_nonnull(p);
    ck_assert_ptr_nonnull(q);
    ck_assert_uint_eq((uintptr_t)p % SIM_ARENA_ALIGN, 0);
    ck_assert_uint_eq((uintptr_t)q % SIM_ARENA_ALIGN, 0);
    ck_assert_int_eq((int)(q - p), 64);
    for (size_t i = 0; i < 136; i++)
        ck_assert_uint_eq(q[i], 0);
    ck_assert(!sim_arena_overrun(a));
    ck_assert_ptr_null(sim_arena_alloc(a, 1, 1)); /* past the block */
    ck_assert(sim_arena_overrun(a));
    /* A request whose size overflows counts as everything. */
    ck_assert_ptr_null(sim_arena_alloc(s, SIZE_MAX / 2, 4));
    ck_assert_uint_eq(sim_arena_bytes(s), UINT64_MAX);
    sim_arena_destroy(a);
    sim_arena_destroy(s);
    sim_arena_destroy(NULL);
}
END_TEST

/* ---- a test protocol with per-worker state and buffers ---- */

typedef struct wst_worker {
    uint64_t seen; /* events handled for this worker */
    double mark;   /* 2.385 times the worker's id once started */
    uint32_t id;   /* the worker's id, written at start */
} wst_worker;

typedef struct wst {
    uint32_t n;
    int sized;        /* buffers calls */
    double *per;      /* (n, 3) arena */
    float *model_row; /* (num_params) arena, NULL when timing-only */
    int zeroed;       /* every state and buffer was zero at start */
    int aligned;      /* every buffer 64-byte aligned */
    int distinct;     /* worker states one worker_size apart */
    uint64_t reads;   /* sim_ctx_stats' peer_reads at the end */
} wst;

static int wst_configure(void *state, sim_cfg *cfg, const proto_setup *setup, sim_err *err)
{
    (void)cfg;
    (void)err;
    wst *st = state;
    st->n = setup->workers;
    return SIM_OK;
}

static void wst_buffers(void *state, sim_arena *a, size_t num_params)
{
    wst *st = state;
    st->sized++;
    st->per = sim_arena_alloc(a, 3 * (size_t)st->n, sizeof(double));
    st->model_row = sim_arena_alloc(a, num_params, sizeof(float));
    if (st->n == 3) /* absurd on purpose: the check must refuse the run */
        sim_arena_alloc(a, (size_t)1 << 40, (size_t)1 << 22);
    if (st->n == 5 && st->sized == 2) /* more than it sized: the run must fail */
        sim_arena_alloc(a, 1, 8);
}

static int wst_start(void *state, sim_ctx *ctx, sim_err *err)
{
    wst *st = state;
    st->zeroed = st->aligned = st->distinct = 1;
    for (uint32_t w = 0; w < st->n; w++) {
        wst_worker *a = sim_ctx_worker(ctx, w);
        if (a->seen != 0 || a->mark != 0.0 || a->id != 0)
            st->zeroed = 0;
        if (w > 0 && (unsigned char *)a - (unsigned char *)sim_ctx_worker(ctx, w - 1) !=
                         (ptrdiff_t)sizeof(wst_worker))
            st->distinct = 0;
        a->id = w;
        a->mark = 2.385 * w;
    }
    for (size_t i = 0; i < 3 * (size_t)st->n; i++)
        st->zeroed &= st->per[i] == 0.0;
    for (size_t i = 0; i < sim_ctx_num_params(ctx); i++)
        st->zeroed &= st->model_row[i] == 0.0f;
    st->aligned = (uintptr_t)st->per % 64 == 0 && (uintptr_t)st->model_row % 64 == 0;
    ck_assert_ptr_nonnull(st->model_row); /* a real model */
    for (uint32_t w = 0; w < st->n; w++) {
        int rc = sim_ctx_compute(ctx, w, 0, err);
        if (rc != SIM_OK)
            return rc;
    }
    return SIM_OK;
}

static int wst_on_event(void *state, sim_ctx *ctx, const sim_event *ev, sim_err *err)
{
    wst *st = state;
    (void)st;
    if (ev->kind != SIM_EV_COMPUTED)
        return SIM_OK;
    uint32_t w = (uint32_t)ev->dst;
    wst_worker *a = sim_ctx_worker(ctx, w);
    a->seen++;
    sim_ctx_count(ctx, w, 1);
    /* Worker 0 reads worker 1's state on purpose, twice an iteration. */
    if (w == 0) {
        const wst_worker *b = sim_ctx_peer(ctx, 1);
        ck_assert_uint_eq(b->id, 1);
        ck_assert(((const wst_worker *)sim_ctx_peer(ctx, 1))->mark == 2.385);
    }
    return a->seen < 3 ? sim_ctx_compute(ctx, w, a->seen, err) : SIM_OK;
}

static void wst_report(const void *state, const sim_ctx *ctx, sim_report *out)
{
    const wst *st = state;
    uint64_t seen = 0;
    for (uint32_t w = 0; w < st->n; w++)
        seen += ((const wst_worker *)sim_ctx_worker(ctx, w))->seen;
    sim_report_add(out, "zeroed", st->zeroed);
    sim_report_add(out, "aligned", st->aligned);
    sim_report_add(out, "distinct", st->distinct);
    sim_report_add(out, "seen", (double)seen);
    sim_report_add(out, "stats_peer_reads", (double)sim_ctx_stats(ctx).peer_reads);
}

static const proto_ops wst_ops = {
    .name = "wstate",
    .summary = "test protocol: per-worker state and arena buffers",
    .state_size = sizeof(wst),
    .worker_size = sizeof(wst_worker),
    .configure = wst_configure,
    .buffers = wst_buffers,
    .start = wst_start,
    .on_event = wst_on_event,
    .report = wst_report,
};

static sim_scenario *load(const char *workers)
{
    sim_err err;
    sim_err_clear(&err);
    const char *sets[] = { workers };
    sim_scenario *sc = sim_scenario_load(real_json, sets, 1, &err);
    ck_assert_msg(sc != NULL, "%s", err.msg);
    return sc;
}

START_TEST(worker_states_and_buffers_come_zeroed_aligned_and_one_per_worker)
{
    sim_scenario *sc = load("workers=4");
    sim_err err;
    sim_err_clear(&err);
    ck_assert_int_eq(sim_run_check(sc, &wst_ops, &err), SIM_OK);
    char *dir = harness_tmpdir("arena");
    sim_run_options opt = { .out_dir = dir };
    sim_run_summary sum;
    ck_assert_msg(sim_run(sc, &wst_ops, &opt, &sum, &err) == SIM_OK, "%s", err.msg);
    ck_assert(harness_summary_number(dir, "zeroed") == 1.0);
    ck_assert(harness_summary_number(dir, "aligned") == 1.0);
    ck_assert(harness_summary_number(dir, "distinct") == 1.0);
    ck_assert(harness_summary_number(dir, "seen") == 12.0); /* 3 iterations of 4 workers */
    /* Worker 0 read worker 1's state twice in each of its 3 iterations. */
    ck_assert(harness_summary_number(dir, "stats_peer_reads") == 6.0);
    ck_assert(harness_summary_number(dir, "peer_reads") == 6.0);
    harness_cleanup(dir);
    sim_scenario_destroy(sc);
}
END_TEST

START_TEST(the_memory_check_counts_the_arena_before_allocating_it)
{
    /* 2^62 bytes asked for: allocating them would fail with SIM_ENOMEM; the sizing pass only
     * counts them, and the check refuses the run as too large. */
    sim_scenario *sc = load("workers=3");
    sim_err err;
    sim_err_clear(&err);
    ck_assert_int_eq(sim_run_check(sc, &wst_ops, &err), SIM_ESCENARIO);
    ck_assert_str_eq(err.path, "$.workers");
    ck_assert_ptr_nonnull(strstr(err.msg, "more than 80% of this machine's memory"));
    sim_scenario_destroy(sc);
}
END_TEST

START_TEST(a_buffers_hook_that_asks_for_more_than_it_sized_fails_the_run)
{
    sim_scenario *sc = load("workers=5");
    sim_err err;
    sim_err_clear(&err);
    char *dir = harness_tmpdir("arena");
    sim_run_options opt = { .out_dir = dir };
    ck_assert_int_eq(sim_run(sc, &wst_ops, &opt, NULL, &err), SIM_EINVAL);
    ck_assert_ptr_nonnull(strstr(err.msg, "wstate: the buffers hook asked for"));
    harness_cleanup(dir);
    sim_scenario_destroy(sc);
}
END_TEST

START_TEST(adpsgd_counts_its_passive_side_s_reads_in_summary_json)
{
    sim_scenario *sc = load("protocol.name=adpsgd");
    char *dir = harness_tmpdir("arena");
    harness_run(sc, dir, NULL, NULL);
    /* Every request is checked against its requester's state, every commit reads both ends. */
    double reads = harness_summary_number(dir, "peer_reads");
    double exchanges = harness_summary_number(dir, "exchanges");
    ck_assert(exchanges > 10.0);
    ck_assert(reads >= 2.0 * exchanges);
    harness_cleanup(dir);
    sim_scenario_destroy(sc);
}
END_TEST

Suite *test_suite(void)
{
    Suite *s = suite_create("arena");
    TCase *tc = tcase_create("arena");
    tcase_add_test(tc, a_sizing_arena_counts_rounded_requests_and_the_run_s_arena_hands_them_out);
    tcase_add_test(tc, worker_states_and_buffers_come_zeroed_aligned_and_one_per_worker);
    tcase_add_test(tc, the_memory_check_counts_the_arena_before_allocating_it);
    tcase_add_test(tc, a_buffers_hook_that_asks_for_more_than_it_sized_fails_the_run);
    tcase_add_test(tc, adpsgd_counts_its_passive_side_s_reads_in_summary_json);
    tcase_set_timeout(tc, 30);
    suite_add_tcase(s, tc);
    return s;
}
