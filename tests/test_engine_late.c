/* Engine: the late class (sim_engine_schedule_late_at), the runtime's evaluations. At one time
 * late events come after every normal event and after the end-of-instant hook, whatever the
 * order the events were scheduled in: the order is (time, class, seq). */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#include <check.h>
#include <gsl/gsl_rng.h>

#include "runtime/events.h"
#include "sim/engine.h"
#include "sim/engine_net.h"
#include "suite.h"

typedef struct trace {
    size_t n;
    sim_time time[64];
    uint64_t tag[64];
    uint64_t cur[64]; /* sim_engine_current_seq in the handler */
} trace;

static int record(void *ud, sim_engine *eng, const sim_event *ev, sim_err *err)
{
    (void)err;
    trace *t = ud;
    ck_assert_int_eq(ev->time, sim_engine_now(eng));
    ck_assert_uint_lt(t->n, 64);
    t->time[t->n] = ev->time;
    t->tag[t->n] = ev->arg[0];
    t->cur[t->n] = sim_engine_current_seq(eng);
    t->n++;
    return 0;
}

static sim_event tagged(uint64_t tag)
{
    sim_event ev = { .kind = SIM_EV_USER, .src = SIM_NOBODY, .dst = SIM_NOBODY };
    ev.arg[0] = tag;
    return ev;
}

/* A late event scheduled first (an evaluation due at 100, scheduled at 0) comes after the
 * normal events of its time scheduled after it, before those of a later time; late events of
 * one time keep their order; its handler stands past every normal event (current seq
 * UINT64_MAX), a normal one at its own seq. */
START_TEST(late_events_come_after_every_normal_event_of_their_time)
{
    sim_engine *eng = sim_engine_create(16, NULL);
    sim_event a = tagged(1), b = tagged(2), c = tagged(3), d = tagged(4), e = tagged(5);
    ck_assert_int_eq(sim_engine_schedule_late_at(eng, 100, &a, NULL), 0);
    ck_assert_int_eq(sim_engine_schedule_at(eng, 100, &b, NULL), 0);
    ck_assert_int_eq(sim_engine_schedule_late_at(eng, 100, &c, NULL), 0);
    ck_assert_int_eq(sim_engine_schedule_at(eng, 101, &d, NULL), 0);
    ck_assert_int_eq(sim_engine_schedule_at(eng, 100, &e, NULL), 0);
    ck_assert_int_eq(sim_engine_next_time(eng), 100);
    ck_assert_int_eq(sim_engine_schedule_late_at(eng, -1, &a, NULL), SIM_EINVAL);
    trace t = { 0 };
    ck_assert_int_eq(sim_engine_run(eng, SIM_TIME_NEVER - 1, record, &t, NULL), 0);
    const uint64_t order[] = { 2, 5, 1, 3, 4 };
    ck_assert_uint_eq(t.n, 5);
    for (size_t i = 0; i < 5; i++)
        ck_assert_uint_eq(t.tag[i], order[i]);
    ck_assert_uint_eq(t.cur[0], 1); /* b's seq */
    ck_assert_uint_eq(t.cur[2], UINT64_MAX);
    ck_assert_uint_eq(t.cur[3], UINT64_MAX);
    ck_assert_uint_eq(t.cur[4], 3); /* d's */
    sim_engine_destroy(eng);
}
END_TEST

/* The end-of-instant hook, requested by a normal event at 40, runs before the late events of
 * 40, and what it schedules at 40 runs before them too. A normal event scheduled at now by a
 * late event's handler comes after the late events already pending at now, before the clock
 * moves; when a late event asks for the hook, it runs again before the next late event, and
 * what it schedules at now comes after those already pending. */
typedef struct flusher {
    trace t;
    size_t calls;
    size_t seen_at_call[2];
} flusher;

static int late_record(void *ud, sim_engine *eng, const sim_event *ev, sim_err *err)
{
    flusher *f = ud;
    if (ev->arg[0] == 1 || ev->arg[0] == 11) /* a normal one, then the first late one */
        sim_engine_request_flush(eng);
    if (ev->arg[0] == 11) {
        sim_event n = tagged(12);
        ck_assert_int_eq(sim_engine_schedule(eng, 0, &n, NULL), 0);
    }
    return record(&f->t, eng, ev, err);
}

static int on_flush(void *ud, sim_engine *eng, sim_err *err)
{
    (void)err;
    flusher *f = ud;
    ck_assert_uint_eq(sim_engine_current_seq(eng), UINT64_MAX);
    f->seen_at_call[f->calls] = f->t.n;
    sim_event ev = tagged(f->calls == 0 ? 100 : 101);
    ck_assert_int_eq(sim_engine_schedule(eng, 0, &ev, NULL), 0);
    f->calls++;
    return 0;
}

START_TEST(the_hook_runs_before_the_late_events_of_its_instant)
{
    sim_engine *eng = sim_engine_create(16, NULL);
    flusher f = { 0 };
    sim_engine_set_flush(eng, on_flush, &f);
    sim_event l1 = tagged(11), l2 = tagged(13), n = tagged(1), after = tagged(200);
    ck_assert_int_eq(sim_engine_schedule_late_at(eng, 40, &l1, NULL), 0);
    ck_assert_int_eq(sim_engine_schedule_late_at(eng, 40, &l2, NULL), 0);
    ck_assert_int_eq(sim_engine_schedule_at(eng, 40, &n, NULL), 0);
    ck_assert_int_eq(sim_engine_schedule_at(eng, 90, &after, NULL), 0);
    ck_assert_int_eq(sim_engine_run(eng, SIM_TIME_NEVER - 1, late_record, &f, NULL), 0);
    /* 1; the hook (schedules 100); 100; late 11 asks for the hook and schedules 12 at now;
     * the hook (schedules 101 at now, late); 13, already pending; 12; 101; then 200 at 90. */
    const uint64_t order[] = { 1, 100, 11, 13, 12, 101, 200 };
    ck_assert_uint_eq(f.t.n, 7);
    for (size_t i = 0; i < 7; i++) {
        ck_assert_uint_eq(f.t.tag[i], order[i]);
        ck_assert_int_eq(f.t.time[i], i < 6 ? 40 : 90);
    }
    ck_assert_uint_eq(f.calls, 2);
    ck_assert_uint_eq(f.seen_at_call[0], 1);
    ck_assert_uint_eq(f.seen_at_call[1], 3);
    ck_assert_uint_eq(f.t.cur[4], UINT64_MAX); /* 12 became late: past the normal events */
    sim_engine_set_flush(eng, NULL, NULL);
    sim_engine_destroy(eng);
}
END_TEST

/* Schedules, cancels and reschedules at random, normal and late events on coarse times (many
 * ties), against a reference that scans every live event for the least (time, class, seq):
 * the engine's order must be the reference's, event for event. A rescheduled event keeps its
 * class. */
#define REF_MAX 8192

typedef struct ref_queue {
    gsl_rng *r;
    size_t n;
    sim_time time[REF_MAX];
    bool late[REF_MAX];
    uint64_t seq[REF_MAX];
    bool live[REF_MAX];
    sim_event_id id[REF_MAX];
    uint64_t next_seq, ran, ran_late;
} ref_queue;

static void ref_schedule(ref_queue *q, sim_engine *eng, sim_time at)
{
    if (q->n == REF_MAX)
        return;
    size_t k = q->n++;
    sim_event ev = tagged(k);
    q->late[k] = gsl_rng_uniform(q->r) < 0.3;
    int rc = q->late[k] ? sim_engine_schedule_late_at(eng, at, &ev, &q->id[k])
                        : sim_engine_schedule_at(eng, at, &ev, &q->id[k]);
    ck_assert_int_eq(rc, 0);
    q->time[k] = at;
    q->seq[k] = q->next_seq++;
    q->live[k] = true;
}

static bool ref_before(const ref_queue *q, size_t a, size_t b)
{
    if (q->time[a] != q->time[b])
        return q->time[a] < q->time[b];
    if (q->late[a] != q->late[b])
        return !q->late[a];
    return q->seq[a] < q->seq[b];
}

static int ref_step(void *ud, sim_engine *eng, const sim_event *ev, sim_err *err)
{
    (void)err;
    ref_queue *q = ud;
    size_t best = REF_MAX;
    for (size_t k = 0; k < q->n; k++)
        if (q->live[k] && (best == REF_MAX || ref_before(q, k, best)))
            best = k;
    ck_assert_uint_lt(best, REF_MAX);
    ck_assert_uint_eq(ev->arg[0], best);
    ck_assert_int_eq(ev->time, q->time[best]);
    ck_assert_uint_eq(ev->seq, q->seq[best]);
    q->live[best] = false;
    q->ran++;
    q->ran_late += q->late[best];
    sim_time now = sim_engine_now(eng);
    /* Births after 10 ns at least: one at now from a late handler would be made late. */
    int births = (int)gsl_rng_uniform_int(q->r, 3);
    for (int i = 0; i < births; i++)
        ref_schedule(q, eng, now + 10 + 10 * (sim_time)gsl_rng_uniform_int(q->r, 40));
    if (q->n > 0 && gsl_rng_uniform(q->r) < 0.3) {
        size_t k = gsl_rng_uniform_int(q->r, q->n);
        ck_assert_int_eq(sim_engine_cancel(eng, q->id[k]), q->live[k] ? 0 : SIM_EINVAL);
        q->live[k] = false;
    }
    if (q->n > 0 && gsl_rng_uniform(q->r) < 0.3) {
        size_t k = gsl_rng_uniform_int(q->r, q->n);
        sim_time at = now + 10 + 10 * (sim_time)gsl_rng_uniform_int(q->r, 40);
        ck_assert_int_eq(sim_engine_reschedule(eng, q->id[k], at), q->live[k] ? 0 : SIM_EINVAL);
        if (q->live[k]) {
            q->time[k] = at;
            q->seq[k] = q->next_seq++;
        }
    }
    return 0;
}

START_TEST(late_and_normal_events_pop_in_the_order_of_a_reference_queue)
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
    ck_assert_uint_gt(q->ran_late, 1000);
    gsl_rng_free(q->r);
    free(q);
    sim_engine_destroy(eng);
}
END_TEST

/* The latest times a scenario can reach: a late event just before SIM_TIME_NEVER (its key
 * is the greatest there is) still comes after a normal one of its time. */
START_TEST(late_events_hold_at_the_end_of_the_clock)
{
    sim_engine *eng = sim_engine_create(16, NULL);
    sim_event a = tagged(1), b = tagged(2), c = tagged(3);
    const sim_time end = SIM_TIME_NEVER - 1;
    ck_assert_int_eq(sim_engine_schedule_late_at(eng, end, &a, NULL), 0);
    ck_assert_int_eq(sim_engine_schedule_at(eng, end, &b, NULL), 0);
    ck_assert_int_eq(sim_engine_schedule_late_at(eng, end - 1, &c, NULL), 0);
    ck_assert_int_eq(sim_engine_schedule_late_at(eng, SIM_TIME_NEVER, &c, NULL), SIM_EINVAL);
    trace t = { 0 };
    ck_assert_int_eq(sim_engine_run(eng, end, record, &t, NULL), 0);
    ck_assert_uint_eq(t.n, 3);
    ck_assert_uint_eq(t.tag[0], 3);
    ck_assert_uint_eq(t.tag[1], 2);
    ck_assert_uint_eq(t.tag[2], 1);
    ck_assert_int_eq(sim_engine_now(eng), end);
    sim_engine_destroy(eng);
}
END_TEST

Suite *test_suite(void)
{
    Suite *s = suite_create("engine_late");
    TCase *tc = tcase_create("late");
    tcase_add_test(tc, late_events_come_after_every_normal_event_of_their_time);
    tcase_add_test(tc, the_hook_runs_before_the_late_events_of_its_instant);
    tcase_add_test(tc, late_and_normal_events_pop_in_the_order_of_a_reference_queue);
    tcase_add_test(tc, late_events_hold_at_the_end_of_the_clock);
    suite_add_tcase(s, tc);
    return s;
}
