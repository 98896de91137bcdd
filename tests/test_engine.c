/* Engine: ordering, ties, cancellation, the clock, growth. */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#include <check.h>
#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>

#include "runtime/events.h"
#include "sim/engine.h"
#include "sim/engine_net.h"
#include "suite.h"

typedef struct trace {
    size_t n;
    sim_time time[64];
    uint64_t tag[64];
} trace;

static int record(void *ud, sim_engine *eng, const sim_event *ev, sim_err *err)
{
    (void)err;
    trace *t = ud;
    ck_assert_int_eq(ev->time, sim_engine_now(eng));
    if (t->n < 64) {
        t->time[t->n] = ev->time;
        t->tag[t->n] = ev->arg[0];
        t->n++;
    }
    return 0;
}

static sim_event tagged(uint64_t tag)
{
    sim_event ev = { .kind = SIM_EV_USER, .src = SIM_NOBODY, .dst = SIM_NOBODY };
    ev.arg[0] = tag;
    return ev;
}

START_TEST(engine_orders_events_by_time)
{
    sim_engine *eng = sim_engine_create(4, NULL);
    const sim_time delays[] = { 7385, 12, 991, 12000, 5, 640 };
    for (size_t i = 0; i < 6; i++) {
        sim_event ev = tagged(i);
        ck_assert_int_eq(sim_engine_schedule(eng, delays[i], &ev, NULL), 0);
    }
    trace t = { 0 };
    ck_assert_int_eq(sim_engine_run(eng, SIM_TIME_NEVER - 1, record, &t, NULL), 0);
    ck_assert_uint_eq(t.n, 6);
    const uint64_t order[] = { 4, 1, 5, 2, 0, 3 };
    for (size_t i = 0; i < 6; i++)
        ck_assert_uint_eq(t.tag[i], order[i]);
    ck_assert_int_eq(sim_engine_now(eng), 12000);
    sim_engine_destroy(eng);
}
END_TEST

START_TEST(engine_breaks_ties_by_insertion_order)
{
    sim_engine *eng = sim_engine_create(16, NULL);
    for (uint64_t i = 0; i < 40; i++) {
        sim_event ev = tagged(i);
        ck_assert_int_eq(sim_engine_schedule(eng, 2385, &ev, NULL), 0);
    }
    trace t = { 0 };
    sim_engine_run(eng, SIM_TIME_NEVER - 1, record, &t, NULL);
    ck_assert_uint_eq(t.n, 40);
    for (uint64_t i = 0; i < 40; i++)
        ck_assert_uint_eq(t.tag[i], i);
    sim_engine_destroy(eng);
}
END_TEST

START_TEST(engine_refuses_the_past)
{
    sim_engine *eng = sim_engine_create(0, NULL);
    sim_event ev = tagged(1);
    ck_assert_int_eq(sim_engine_schedule(eng, -1, &ev, NULL), SIM_EINVAL);
    ck_assert_int_eq(sim_engine_schedule(eng, SIM_TIME_NEVER, &ev, NULL), SIM_EINVAL);
    ck_assert_int_eq(sim_engine_schedule(eng, 100, &ev, NULL), 0);
    trace t = { 0 };
    sim_engine_run(eng, SIM_TIME_NEVER - 1, record, &t, NULL);
    ck_assert_int_eq(sim_engine_schedule_at(eng, 99, &ev, NULL), SIM_EINVAL);
    ck_assert_int_eq(sim_engine_schedule_at(eng, 100, &ev, NULL), 0);
    sim_engine_destroy(eng);
}
END_TEST

START_TEST(engine_cancels_pending_events_and_ignores_stale_ids)
{
    sim_engine *eng = sim_engine_create(16, NULL);
    sim_event_id ids[10];
    for (uint64_t i = 0; i < 10; i++) {
        sim_event ev = tagged(i);
        sim_engine_schedule(eng, (sim_time)(100 * (i + 1)), &ev, &ids[i]);
    }
    ck_assert_int_eq(sim_engine_cancel(eng, ids[3]), 0);
    ck_assert_int_eq(sim_engine_cancel(eng, ids[0]), 0);
    ck_assert_int_eq(sim_engine_cancel(eng, ids[9]), 0);
    ck_assert_int_eq(sim_engine_cancel(eng, ids[3]), SIM_EINVAL); /* twice */
    ck_assert_int_eq(sim_engine_cancel(eng, 0), SIM_EINVAL);      /* never issued */
    trace t = { 0 };
    sim_engine_run(eng, 450, record, &t, NULL);
    ck_assert_uint_eq(t.n, 2); /* 200 and 300; 400 cancelled, 500 after `until` */
    ck_assert_int_eq(sim_engine_cancel(eng, ids[1]), SIM_EINVAL); /* already ran */
    /* A reused slot does not answer to the id of its former event. */
    sim_event ev = tagged(77);
    sim_event_id fresh;
    sim_engine_schedule(eng, 5, &ev, &fresh);
    ck_assert_int_eq(sim_engine_cancel(eng, ids[1]), SIM_EINVAL);
    ck_assert_int_eq(sim_engine_cancel(eng, fresh), 0);
    sim_engine_run(eng, SIM_TIME_NEVER - 1, record, &t, NULL);
    const uint64_t order[] = { 1, 2, 4, 5, 6, 7, 8 };
    ck_assert_uint_eq(t.n, 7);
    for (size_t i = 0; i < 7; i++)
        ck_assert_uint_eq(t.tag[i], order[i]);
    sim_engine_stats st;
    sim_engine_stats_get(eng, &st);
    ck_assert_uint_eq(st.cancelled, 4);
    ck_assert_uint_eq(st.pending, 0);
    sim_engine_destroy(eng);
}
END_TEST

/* The hold model with random cancellations, checked against the invariants: the clock never
 * goes back, and every event runs at the time it was scheduled for. */
typedef struct hold {
    gsl_rng *r;
    sim_time last;
    uint64_t ran;
    sim_event_id ids[256];
} hold;

static int hold_step(void *ud, sim_engine *eng, const sim_event *ev, sim_err *err)
{
    (void)err;
    hold *h = ud;
    ck_assert_int_ge(ev->time, h->last);
    ck_assert_int_eq((sim_time)ev->arg[1], ev->time);
    h->last = ev->time;
    h->ran++;
    if (h->ran > 200000)
        return 0;
    for (int i = 0; i < 2; i++) {
        sim_time d = (sim_time)gsl_rng_uniform_int(h->r, 5000);
        sim_event next = tagged(0);
        next.arg[1] = (uint64_t)(sim_engine_now(eng) + d);
        size_t k = gsl_rng_uniform_int(h->r, 256);
        if (gsl_rng_uniform(h->r) < 0.4)
            sim_engine_cancel(eng, h->ids[k]); /* may be stale: must be harmless */
        ck_assert_int_eq(sim_engine_schedule(eng, d, &next, &h->ids[k]), 0);
    }
    return 0;
}

START_TEST(engine_clock_never_goes_back_under_random_load)
{
    sim_engine *eng = sim_engine_create(16, NULL);
    hold h = { .r = gsl_rng_alloc(gsl_rng_mt19937) };
    gsl_rng_set(h.r, 2385);
    sim_event ev = tagged(0);
    sim_engine_schedule(eng, 0, &ev, &h.ids[0]);
    ck_assert_int_eq(sim_engine_run(eng, SIM_TIME_NEVER - 1, hold_step, &h, NULL), 0);
    sim_engine_stats st;
    sim_engine_stats_get(eng, &st);
    ck_assert_uint_eq(st.processed, h.ran);
    ck_assert_uint_eq(st.scheduled, st.processed + st.cancelled);
    ck_assert_uint_gt(st.grows, 0); /* 16 slots cannot hold the load: growth was exercised */
    gsl_rng_free(h.r);
    sim_engine_destroy(eng);
}
END_TEST

static int stop_at_third(void *ud, sim_engine *eng, const sim_event *ev, sim_err *err)
{
    (void)err;
    trace *t = ud;
    record(ud, eng, ev, err);
    if (t->n == 3)
        sim_engine_stop(eng);
    if (ev->arg[0] == 5)
        return sim_err_set(err, SIM_ENUMERIC, NULL, "handler failed at %lld", (long long)ev->time);
    return 0;
}

START_TEST(engine_stops_on_request_and_on_handler_error)
{
    sim_engine *eng = sim_engine_create(16, NULL);
    for (uint64_t i = 0; i < 8; i++) {
        sim_event ev = tagged(i);
        sim_engine_schedule(eng, (sim_time)(10 * i), &ev, NULL);
    }
    trace t = { 0 };
    sim_err err;
    ck_assert_int_eq(sim_engine_run(eng, SIM_TIME_NEVER - 1, stop_at_third, &t, &err), 0);
    ck_assert_uint_eq(t.n, 3);
    ck_assert_int_eq(sim_engine_run(eng, SIM_TIME_NEVER - 1, stop_at_third, &t, &err),
                     SIM_ENUMERIC);
    ck_assert_uint_eq(t.n, 6);
    ck_assert_str_eq(err.msg, "handler failed at 50");
    ck_assert_int_eq(sim_engine_step(eng, stop_at_third, &t, &err), 1);
    ck_assert_int_eq(sim_engine_next_time(eng), 70);
    sim_engine_destroy(eng);
}
END_TEST

/* The end-of-instant hook: requested by the handlers of three events at t = 40, it runs once,
 * after the last of them and before the event at t = 90; what it schedules at now runs
 * before the clock moves, and an error it returns stops the run. */
typedef struct flusher {
    trace t;
    size_t calls;
    size_t seen_at_call; /* events recorded when the hook first ran */
    int fail;
} flusher;

static int flush_record(void *ud, sim_engine *eng, const sim_event *ev, sim_err *err)
{
    flusher *f = ud;
    if (ev->arg[0] < 100)
        sim_engine_request_flush(eng);
    return record(&f->t, eng, ev, err);
}

static int on_flush(void *ud, sim_engine *eng, sim_err *err)
{
    (void)err;
    flusher *f = ud;
    if (f->calls++ == 0) {
        f->seen_at_call = f->t.n;
        sim_event ev = tagged(100);
        ck_assert_int_eq(sim_engine_schedule(eng, 0, &ev, NULL), 0);
    }
    return f->fail;
}

START_TEST(engine_runs_the_flush_hook_once_before_the_clock_moves)
{
    sim_engine *eng = sim_engine_create(16, NULL);
    flusher f = { 0 };
    sim_engine_set_flush(eng, on_flush, &f);
    for (uint64_t i = 0; i < 3; i++) {
        sim_event ev = tagged(i);
        ck_assert_int_eq(sim_engine_schedule(eng, 40, &ev, NULL), 0);
    }
    sim_event late = tagged(200);
    ck_assert_int_eq(sim_engine_schedule(eng, 90, &late, NULL), 0);
    ck_assert_int_eq(sim_engine_run(eng, SIM_TIME_NEVER - 1, flush_record, &f, NULL), 0);
    ck_assert_uint_eq(f.calls, 1);
    ck_assert_uint_eq(f.seen_at_call, 3);
    ck_assert_uint_eq(f.t.n, 5);
    ck_assert_uint_eq(f.t.tag[3], 100);
    ck_assert_int_eq(f.t.time[3], 40);
    ck_assert_uint_eq(f.t.tag[4], 200);
    /* Nothing requested: sim_engine_flush does nothing; requested with a failing hook: the
     * run stops with the hook's error. */
    ck_assert_int_eq(sim_engine_flush(eng, NULL), 0);
    ck_assert_uint_eq(f.calls, 1);
    f.fail = SIM_ENUMERIC;
    sim_event again = tagged(7);
    ck_assert_int_eq(sim_engine_schedule(eng, 5, &again, NULL), 0);
    ck_assert_int_eq(sim_engine_run(eng, SIM_TIME_NEVER - 1, flush_record, &f, NULL), SIM_ENUMERIC);
    ck_assert_uint_eq(f.calls, 2);
    sim_engine_set_flush(eng, NULL, NULL);
    sim_engine_destroy(eng);
}
END_TEST

static int record_seq(void *ud, sim_engine *eng, const sim_event *ev, sim_err *err)
{
    (void)err;
    trace *t = ud;
    ck_assert_uint_eq(sim_engine_current_seq(eng), ev->seq);
    t->time[t->n] = (sim_time)ev->seq;
    t->tag[t->n++] = ev->arg[0];
    return 0;
}

static int flush_seq(void *ud, sim_engine *eng, sim_err *err)
{
    (void)ud;
    (void)err;
    ck_assert_uint_eq(sim_engine_current_seq(eng), UINT64_MAX);
    return 0;
}

/* sim_engine_next_seq names the sequence number the next scheduled (or moved) event gets, as
 * the handler then sees it in sim_event.seq; sim_engine_current_seq is that of the event
 * being dispatched, UINT64_MAX between events (and in the hook run as the clock moves on). */
START_TEST(engine_next_seq_is_the_seq_of_the_next_event)
{
    sim_engine *eng = sim_engine_create(16, NULL);
    ck_assert_uint_eq(sim_engine_next_seq(eng), 0);
    ck_assert_uint_eq(sim_engine_current_seq(eng), UINT64_MAX);
    sim_engine_set_flush(eng, flush_seq, NULL);
    sim_engine_request_flush(eng);
    uint64_t want[4];
    sim_event_id ids[4];
    for (uint64_t i = 0; i < 4; i++) {
        sim_event ev = tagged(i);
        want[i] = sim_engine_next_seq(eng);
        ck_assert_int_eq(sim_engine_schedule(eng, 2385 - 100 * (sim_time)i, &ev, &ids[i]), 0);
    }
    ck_assert_uint_eq(sim_engine_next_seq(eng), 4);
    want[1] = sim_engine_next_seq(eng);
    ck_assert_int_eq(sim_engine_reschedule(eng, ids[1], 4099), 0);
    ck_assert_int_eq(sim_engine_cancel(eng, ids[2]), 0);
    ck_assert_uint_eq(sim_engine_next_seq(eng), 5); /* a cancel takes none */
    trace t = { 0 };
    ck_assert_int_eq(sim_engine_run(eng, SIM_TIME_NEVER - 1, record_seq, &t, NULL), 0);
    const uint64_t order[] = { 3, 0, 1 };
    ck_assert_uint_eq(t.n, 3);
    for (size_t i = 0; i < 3; i++) {
        ck_assert_uint_eq(t.tag[i], order[i]);
        ck_assert_uint_eq((uint64_t)t.time[i], want[order[i]]);
    }
    ck_assert_uint_eq(sim_engine_current_seq(eng), UINT64_MAX);
    sim_engine_set_flush(eng, NULL, NULL);
    sim_engine_destroy(eng);
}
END_TEST

/* Rescheduling moves an event as a cancel and a schedule would: it takes a fresh sequence
 * number (so among events at its new time it comes last), keeps its id, and refuses stale
 * ids and the past. */
START_TEST(engine_reschedule_acts_as_cancel_then_schedule)
{
    sim_engine *eng = sim_engine_create(16, NULL);
    sim_event_id ids[5];
    const sim_time at[] = { 300, 100, 700, 300, 500 };
    for (uint64_t i = 0; i < 5; i++) {
        sim_event ev = tagged(i);
        ck_assert_int_eq(sim_engine_schedule(eng, at[i], &ev, &ids[i]), 0);
    }
    ck_assert_int_eq(sim_engine_reschedule(eng, ids[0], 300), 0); /* now after tag 3 */
    ck_assert_int_eq(sim_engine_reschedule(eng, ids[2], 50), 0);  /* earlier */
    ck_assert_int_eq(sim_engine_reschedule(eng, ids[1], 900), 0); /* later */
    ck_assert_int_eq(sim_engine_cancel(eng, ids[4]), 0);
    ck_assert_int_eq(sim_engine_reschedule(eng, ids[4], 600), SIM_EINVAL);
    trace t = { 0 };
    ck_assert_int_eq(sim_engine_run(eng, SIM_TIME_NEVER - 1, record, &t, NULL), 0);
    const uint64_t order[] = { 2, 3, 0, 1 };
    const sim_time times[] = { 50, 300, 300, 900 };
    ck_assert_uint_eq(t.n, 4);
    for (size_t i = 0; i < 4; i++) {
        ck_assert_uint_eq(t.tag[i], order[i]);
        ck_assert_int_eq(t.time[i], times[i]);
    }
    ck_assert_int_eq(sim_engine_reschedule(eng, ids[1], 1000), SIM_EINVAL); /* already ran */
    sim_event ev = tagged(9);
    sim_event_id id;
    ck_assert_int_eq(sim_engine_schedule(eng, 10, &ev, &id), 0);
    ck_assert_int_eq(sim_engine_reschedule(eng, id, 899), SIM_EINVAL); /* the past */
    sim_engine_destroy(eng);
}
END_TEST

/* A retargeted event takes the new body (kind, src, dst, arg) and keeps its time and its place
 * among the events of that time; a stale id is refused. */
START_TEST(engine_retarget_changes_the_body_not_the_place)
{
    sim_engine *eng = sim_engine_create(16, NULL);
    sim_event_id ids[4];
    const sim_time at[] = { 700, 300, 300, 300 };
    for (uint64_t i = 0; i < 4; i++) {
        sim_event ev = tagged(i);
        ck_assert_int_eq(sim_engine_schedule(eng, at[i], &ev, &ids[i]), 0);
    }
    sim_event body = tagged(42);
    body.src = 3;
    body.dst = 5;
    ck_assert_int_eq(sim_engine_retarget(eng, ids[2], &body), 0);
    ck_assert_int_eq(sim_engine_cancel(eng, ids[3]), 0);
    ck_assert_int_eq(sim_engine_retarget(eng, ids[3], &body), SIM_EINVAL);
    trace t = { 0 };
    ck_assert_int_eq(sim_engine_run(eng, SIM_TIME_NEVER - 1, record, &t, NULL), 0);
    const uint64_t order[] = { 1, 42, 0 };
    const sim_time times[] = { 300, 300, 700 };
    ck_assert_uint_eq(t.n, 3);
    for (size_t i = 0; i < 3; i++) {
        ck_assert_uint_eq(t.tag[i], order[i]);
        ck_assert_int_eq(t.time[i], times[i]);
    }
    ck_assert_int_eq(sim_engine_retarget(eng, ids[0], &body), SIM_EINVAL); /* already ran */
    sim_engine_destroy(eng);
}
END_TEST

/* Inside a handler the dispatched event is gone: queries, cancels and schedules made there
 * see only the events still pending. */
typedef struct inside {
    sim_event_id victim;
    int calls;
} inside;

static int query_inside(void *ud, sim_engine *eng, const sim_event *ev, sim_err *err)
{
    (void)err;
    inside *in = ud;
    sim_engine_stats st;
    if (in->calls++ == 0) {
        ck_assert_int_eq(ev->time, 10);
        sim_engine_stats_get(eng, &st);
        ck_assert_uint_eq(st.pending, 3);
        ck_assert_int_eq(sim_engine_next_time(eng), 20);
        ck_assert_int_eq(sim_engine_cancel(eng, in->victim), 0); /* the one at 20 */
        ck_assert_int_eq(sim_engine_next_time(eng), 30);
        sim_event e = tagged(9);
        ck_assert_int_eq(sim_engine_schedule(eng, 5, &e, NULL), 0); /* at 15 */
        sim_engine_stats_get(eng, &st);
        ck_assert_uint_eq(st.pending, 3);
        ck_assert_int_eq(sim_engine_next_time(eng), 15);
    } else if (in->calls == 2) {
        ck_assert_int_eq(ev->time, 15);
        ck_assert_uint_eq(ev->arg[0], 9);
        /* Two schedules from one handler: the first fills the hole, the second is pushed. */
        sim_event a = tagged(10), b = tagged(11);
        ck_assert_int_eq(sim_engine_schedule(eng, 100, &a, NULL), 0);
        ck_assert_int_eq(sim_engine_schedule(eng, 1, &b, NULL), 0);
        ck_assert_int_eq(sim_engine_next_time(eng), 16);
    }
    return 0;
}

START_TEST(engine_handlers_see_only_the_events_still_pending)
{
    sim_engine *eng = sim_engine_create(16, NULL);
    inside in = { 0 };
    sim_event ev = tagged(0);
    sim_engine_schedule(eng, 10, &ev, NULL);
    sim_engine_schedule(eng, 20, &ev, &in.victim);
    sim_engine_schedule(eng, 30, &ev, NULL);
    sim_engine_schedule(eng, 40, &ev, NULL);
    ck_assert_int_eq(sim_engine_run(eng, SIM_TIME_NEVER - 1, query_inside, &in, NULL), 0);
    ck_assert_int_eq(in.calls, 6); /* 10, 15, 16, 30, 40, 115 */
    ck_assert_int_eq(sim_engine_now(eng), 115);
    sim_engine_stats st;
    sim_engine_stats_get(eng, &st);
    ck_assert_uint_eq(st.pending, 0);
    ck_assert_uint_eq(st.processed, 6);
    sim_engine_destroy(eng);
}
END_TEST

/* Schedules, cancels and reschedules at random, on coarse times (many ties) and with about
 * 3000 events pending, against a reference that scans every live event for the least
 * (time, seq): the engine's order must be the reference's, event for event. */
#define REF_MAX 8192

typedef struct ref_queue {
    gsl_rng *r;
    size_t n;                 /* entries used (live or not) */
    sim_time time[REF_MAX];   /* per entry */
    uint64_t seq[REF_MAX];    /* the sequence number the engine must give it */
    bool live[REF_MAX];       /* still pending */
    sim_event_id id[REF_MAX]; /* the engine's id for it */
    uint64_t next_seq, ran;
} ref_queue;

static void ref_schedule(ref_queue *q, sim_engine *eng, sim_time at)
{
    if (q->n == REF_MAX)
        return;
    size_t k = q->n++;
    sim_event ev = tagged(k);
    ck_assert_int_eq(sim_engine_schedule_at(eng, at, &ev, &q->id[k]), 0);
    q->time[k] = at;
    q->seq[k] = q->next_seq++;
    q->live[k] = true;
}

static int ref_step(void *ud, sim_engine *eng, const sim_event *ev, sim_err *err)
{
    (void)err;
    ref_queue *q = ud;
    size_t best = REF_MAX;
    for (size_t k = 0; k < q->n; k++) {
        if (q->live[k] && (best == REF_MAX || q->time[k] < q->time[best] ||
                           (q->time[k] == q->time[best] && q->seq[k] < q->seq[best])))
            best = k;
    }
    ck_assert_uint_lt(best, REF_MAX);
    ck_assert_uint_eq(ev->arg[0], best);
    ck_assert_int_eq(ev->time, q->time[best]);
    ck_assert_uint_eq(ev->seq, q->seq[best]);
    q->live[best] = false;
    q->ran++;
    sim_time now = sim_engine_now(eng);
    int births = (int)gsl_rng_uniform_int(q->r, 3); /* 0, 1 or 2: the hole is left or filled */
    for (int i = 0; i < births; i++)
        ref_schedule(q, eng, now + 10 * (sim_time)gsl_rng_uniform_int(q->r, 40));
    if (q->n > 0 && gsl_rng_uniform(q->r) < 0.3) {
        size_t k = gsl_rng_uniform_int(q->r, q->n);
        ck_assert_int_eq(sim_engine_cancel(eng, q->id[k]), q->live[k] ? 0 : SIM_EINVAL);
        q->live[k] = false;
    }
    if (q->n > 0 && gsl_rng_uniform(q->r) < 0.3) {
        size_t k = gsl_rng_uniform_int(q->r, q->n);
        sim_time at = now + 10 * (sim_time)gsl_rng_uniform_int(q->r, 40);
        ck_assert_int_eq(sim_engine_reschedule(eng, q->id[k], at), q->live[k] ? 0 : SIM_EINVAL);
        if (q->live[k]) {
            q->time[k] = at;
            q->seq[k] = q->next_seq++;
        }
    }
    return 0;
}

START_TEST(engine_pops_in_the_exact_order_of_a_reference_queue)
{
    sim_engine *eng = sim_engine_create(16, NULL);
    ref_queue *q = calloc(1, sizeof(*q));
    q->r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(q->r, 2385);
    for (size_t k = 0; k < 3000; k++)
        ref_schedule(q, eng, 10 * (sim_time)gsl_rng_uniform_int(q->r, 400));
    ck_assert_int_eq(sim_engine_run(eng, SIM_TIME_NEVER - 1, ref_step, q, NULL), 0);
    for (size_t k = 0; k < q->n; k++)
        ck_assert(!q->live[k]);
    ck_assert_uint_gt(q->ran, 4000);
    gsl_rng_free(q->r);
    free(q);
    sim_engine_destroy(eng);
}
END_TEST

/* Rescheduling far-future events over and over leaves stale entries in one high bucket, which
 * compacts itself; near events run meanwhile. Every event still comes out once, in (time,
 * seq) order, seq being that of its last reschedule. */
typedef struct far_check {
    const sim_time *time;
    const uint64_t *seq;
    sim_time last_time;
    uint64_t last_seq, ran;
} far_check;

static int far_step(void *ud, sim_engine *eng, const sim_event *ev, sim_err *err)
{
    (void)eng;
    (void)err;
    far_check *c = ud;
    size_t k = ev->arg[0];
    ck_assert_int_eq(ev->time, c->time[k]);
    ck_assert_uint_eq(ev->seq, c->seq[k]);
    ck_assert(c->ran == 0 || ev->time > c->last_time ||
              (ev->time == c->last_time && ev->seq > c->last_seq));
    c->last_time = ev->time;
    c->last_seq = ev->seq;
    c->ran++;
    return 0;
}

START_TEST(engine_keeps_order_through_many_reschedules_of_far_events)
{
    enum {
        K = 2000,
        ROUNDS = 30
    };
    static sim_time time[K];
    static uint64_t seq[K];
    static sim_event_id id[K];
    sim_engine *eng = sim_engine_create(K + 64, NULL);
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 2385);
    uint64_t next_seq = 0;
    const sim_time far = (sim_time)1 << 40;
    for (size_t k = 0; k < K; k++) {
        sim_event ev = tagged(k);
        time[k] = far + (sim_time)gsl_rng_uniform_int(r, 1000);
        seq[k] = next_seq++;
        ck_assert_int_eq(sim_engine_schedule_at(eng, time[k], &ev, &id[k]), 0);
    }
    far_check c = { time, seq, 0, 0, 0 };
    for (int round = 0; round < ROUNDS; round++) {
        for (size_t k = 0; k < K; k++) {
            time[k] = far + (sim_time)gsl_rng_uniform_int(r, 1000);
            seq[k] = next_seq++;
            ck_assert_int_eq(sim_engine_reschedule(eng, id[k], time[k]), 0);
        }
        /* A near event, run at once: the far bucket is never spread meanwhile. */
        sim_event near = tagged(K);
        ck_assert_int_eq(sim_engine_schedule(eng, 5, &near, NULL), 0);
        next_seq++;
        trace t = { 0 };
        ck_assert_int_eq(sim_engine_run(eng, sim_engine_now(eng) + 5, record, &t, NULL), 0);
        ck_assert_uint_eq(t.n, 1);
        ck_assert_uint_eq(t.tag[0], K);
    }
    c.ran = 0;
    ck_assert_int_eq(sim_engine_run(eng, SIM_TIME_NEVER - 1, far_step, &c, NULL), 0);
    ck_assert_uint_eq(c.ran, K);
    sim_engine_stats st;
    sim_engine_stats_get(eng, &st);
    ck_assert_uint_eq(st.pending, 0);
    ck_assert_uint_eq(st.grows, 0);
    gsl_rng_free(r);
    sim_engine_destroy(eng);
}
END_TEST

Suite *test_suite(void)
{
    Suite *s = suite_create("engine");
    TCase *order = tcase_create("order");
    tcase_add_test(order, engine_orders_events_by_time);
    tcase_add_test(order, engine_breaks_ties_by_insertion_order);
    tcase_add_test(order, engine_refuses_the_past);
    suite_add_tcase(s, order);
    TCase *cancel = tcase_create("cancel");
    tcase_add_test(cancel, engine_cancels_pending_events_and_ignores_stale_ids);
    tcase_add_test(cancel, engine_clock_never_goes_back_under_random_load);
    tcase_add_test(cancel, engine_handlers_see_only_the_events_still_pending);
    tcase_add_test(cancel, engine_reschedule_acts_as_cancel_then_schedule);
    tcase_add_test(cancel, engine_retarget_changes_the_body_not_the_place);
    tcase_add_test(cancel, engine_next_seq_is_the_seq_of_the_next_event);
    tcase_add_test(cancel, engine_pops_in_the_exact_order_of_a_reference_queue);
    tcase_add_test(cancel, engine_keeps_order_through_many_reschedules_of_far_events);
    tcase_set_timeout(cancel, 60);
    suite_add_tcase(s, cancel);
    TCase *run = tcase_create("run");
    tcase_add_test(run, engine_stops_on_request_and_on_handler_error);
    tcase_add_test(run, engine_runs_the_flush_hook_once_before_the_clock_moves);
    suite_add_tcase(s, run);
    return s;
}
