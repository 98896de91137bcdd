/* Issue 38, a leftover of the seventeenth probe ("Also": the rejoin service admits recovered
 * workers under failures): hpsgd admitted a recovered worker only in a barrier round that
 * merges, launches and does not end an epoch. With an epoch of about three rounds or fewer (its
 * first round a local step, its second the first launch, its last the flush) no round
 * qualifies, and the worker waited, idle while up, to the end of the run: 64 workers, batch
 * 256, 50,000 samples, worker 1 down from 0.3 to 0.6 s gave "admitted": 0 over 3 s. A recovered
 * worker is now also admitted in an epoch's first round, which launches nothing, every member
 * holding the global model its flush merged: it is sent that model (x̄, held by the rejoin
 * service for a resend too) and launches with the members at the next round. A spy checks, at
 * every admitted worker's adoption, that its parameters (and, admitted in an epoch's first
 * round, its x̄) are bitwise the global model its sender holds, and a scan of random short-epoch
 * failure and recovery schedules that no run stalls and every recovery is admitted.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "harness.h"
#include "protocols/hpsgd_state.h"
#include "runtime/ctx.h"
#include "runtime/run.h"
#include "scenario/scenario.h"

extern const proto_ops proto_hpsgd;

/* The probe's example, with `stop` simulated seconds and protocol options `proto` (JSON members
 * after the name, or ""). */
static void example_json(char *json, size_t size, double stop, const char *proto)
{
    snprintf(json, size,
             "{\"seed\": 1, \"workers\": 64,\n"
             " \"compute\": {\"iteration_ms\": 100, \"jitter_sigma\": 0.1},\n"
             " \"network\": {\"bandwidth_gbps\": 10, \"latency_us\": 20},\n"
             " \"workload\": {\"dataset\": {\"name\": \"synthetic\", \"samples\": 50000, "
             "\"dim\": 4, \"classes\": 2}, \"model\": {\"name\": \"softmax\"}, \"batch\": 256, "
             "\"message_bytes\": 1000000},\n"
             " \"protocol\": {\"name\": \"hpsgd\"%s},\n"
             " \"stragglers\": [{\"kind\": \"failure\", \"workers\": [1], \"at_s\": 0.3, "
             "\"recover_s\": 0.6}],\n"
             " \"stop\": {\"time_s\": %g}, \"eval\": {\"every_s\": 0.5, \"samples\": 200}}\n",
             proto, stop);
}

/* The example admits worker 1 (it was never admitted): "admitted": 1, and it iterates from its
 * recovery on, about as often as worker 0 but for its 0.3 s down (3 iterations of 100 ms). */
START_TEST(a_worker_recovering_in_short_epochs_is_admitted)
{
    char json[2048], s[700], r[700];
    example_json(json, sizeof(json), 3, "");
    char *dir = harness_tmpdir("probe49");
    harness_run_in(dir, json, s, r, sizeof(s));
    ck_assert_double_eq(harness_summary_number(r, "admitted"), 1);
    char *summary = harness_slurp(r, "summary.json");
    ck_assert_msg(strstr(summary, "\"stop_reason\": \"time\"") != NULL, "%.600s", summary);
    free(summary);
    char *csv = harness_slurp(r, "workers.csv");
    unsigned long it0, it1;
    double down0, down1;
    harness_worker_row(csv, 0, &it0, &down0);
    harness_worker_row(csv, 1, &it1, &down1);
    ck_assert_msg(it1 + 6 >= it0 && it1 < it0, "worker 0: %lu iterations, worker 1: %lu", it0, it1);
    free(csv);
    harness_cleanup(dir);
}
END_TEST

/* ---- the spy: every adoption is of the global model ---- */

enum {
    SPY_W = 64, /* workers */
    SPY_P = 16  /* parameters */
};

typedef struct spy {
    uint32_t n;
    size_t p;
    float model[SPY_W][SPY_P]; /* each worker's parameters when it last took the global model:
                                * after its merges, its adoption, its start alone */
    uint64_t wm[SPY_W];        /* its merges then (hps_worker.wm) */
    uint8_t phase[SPY_W];      /* its phase after the last event */
    uint64_t adoptions;        /* adoptions checked */
    uint64_t idle;             /* of them admitted in an epoch's first round */
    uint64_t compared;         /* comparisons with a member at the same merge */
    uint64_t admitted;         /* rejoin_admitted after the last event */
    char bad[300];             /* the first adoption of another model, or "" */
} spy;

static spy *watched;

static int spy_start(void *state, sim_ctx *ctx, sim_err *err)
{
    spy *s = watched;
    harness_sizes_within(ctx, SPY_W, SPY_P, &s->n, &s->p);
    int rc = proto_hpsgd.start(state, ctx, err);
    for (uint32_t w = 0; w < s->n; w++) {
        memcpy(s->model[w], sim_ctx_params_view(ctx, w), s->p * sizeof(float));
        s->phase[w] = ((const hps_worker *)sim_ctx_worker(ctx, w))->phase;
    }
    return rc;
}

/* Worker w adopted the model `src` sent it: its parameters must be bitwise src's global model
 * and that of every running member at the same merge (momentum 0: the global models are
 * equal), its x̄ too when it is not to take it at its first release. */
static void check_adoption(spy *s, const hpsgd *st, sim_ctx *ctx, uint32_t w, uint32_t src)
{
    const hps_worker *x = sim_ctx_worker(ctx, w);
    const float *p = sim_ctx_params_view(ctx, w);
    size_t bytes = s->p * sizeof(float);
    s->adoptions++;
    if (!x->init) {
        s->idle++;
        if (memcmp(st->xbar + (size_t)w * s->p, p, bytes) != 0 && s->bad[0] == '\0')
            snprintf(s->bad, sizeof(s->bad), "worker %u's x̄ is not the model it adopted", w);
    }
    if (memcmp(s->model[src], p, bytes) != 0 && s->bad[0] == '\0')
        snprintf(s->bad, sizeof(s->bad),
                 "worker %u adopted a model other than sender %u's global model (merge %llu)", w,
                 src, (unsigned long long)s->wm[src]);
    for (uint32_t j = 0; j < s->n; j++) {
        const hps_worker *y = sim_ctx_worker(ctx, j);
        if (j == w || !active(ctx, j) || y->phase == PH_FETCH || s->wm[j] != x->wm)
            continue;
        s->compared++;
        if (memcmp(s->model[j], p, bytes) != 0 && s->bad[0] == '\0')
            snprintf(s->bad, sizeof(s->bad),
                     "worker %u adopted a model other than member %u's at merge %llu", w, j,
                     (unsigned long long)x->wm);
    }
}

static int spy_on_event(void *state, sim_ctx *ctx, const sim_event *ev, sim_err *err)
{
    spy *s = watched;
    const hpsgd *st = state;
    int rc = proto_hpsgd.on_event(state, ctx, ev, err);
    for (uint32_t w = 0; w < s->n; w++) {
        const hps_worker *x = sim_ctx_worker(ctx, w);
        uint8_t was = s->phase[w];
        s->phase[w] = x->phase;
        /* (an admission undone, its sender failed with nobody left, and started alone: not
         * an adoption) */
        bool adopted = was == PH_FETCH && x->phase == PH_RUN && ev->kind == SIM_EV_MSG;
        bool alone = (was == PH_OUT || was == PH_FETCH) && x->phase == PH_RUN && !adopted;
        bool merged = x->phase != PH_OUT && x->phase != PH_FETCH && x->wm != s->wm[w];
        if (adopted)
            check_adoption(s, st, ctx, w, (uint32_t)ev->src);
        if (adopted || alone || merged) {
            memcpy(s->model[w], sim_ctx_params_view(ctx, w), s->p * sizeof(float));
            s->wm[w] = x->wm;
        }
    }
    s->admitted = rejoin_admitted(st->rj);
    return rc;
}

/* Runs the scenario text `json` under the spy into `s`; returns the summary. */
static sim_run_summary spy_run(const char *json, spy *s)
{
    proto_ops ops = proto_hpsgd;
    ops.start = spy_start;
    ops.on_event = spy_on_event;
    memset(s, 0, sizeof(*s));
    watched = s;
    sim_scenario *sc = harness_load(json, "probe49.json", NULL, 0);
    sim_run_summary sum = harness_run_with(sc, &ops, NULL, NULL, NULL);
    sim_scenario_destroy(sc);
    watched = NULL;
    return sum;
}

/* The example's admission, with both flushes and the authors' (newest): the admitted worker's
 * parameters and x̄ are bitwise the global model the coordinator holds (which every member at
 * that merge holds too). */
START_TEST(the_admitted_worker_starts_from_the_global_model)
{
    static const char *const protos[] = { "", ", \"flush\": \"newest\"" };
    for (int k = 0; k < 2; k++) {
        char json[2048];
        example_json(json, sizeof(json), 1.5, protos[k]);
        static spy s;
        spy_run(json, &s);
        ck_assert_msg(s.bad[0] == '\0', "protocol%s: %s", protos[k], s.bad);
        ck_assert_uint_eq(s.admitted, 1);
        ck_assert_uint_eq(s.adoptions, 1);
        ck_assert_uint_eq(s.idle, 1);
        ck_assert_uint_ge(s.compared, 60);
    }
}
END_TEST

/* ---- the scan ---- */

static uint64_t scan_state;

/* A uniform double in [0, 1) (splitmix64). */
static double uniform(void)
{
    uint64_t z = (scan_state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return (double)((z ^ (z >> 31)) >> 11) * 0x1p-53;
}

/* A random scenario with epochs of lo to hi barrier rounds (with every worker up)
 * of 2.5 s with up to two failure windows a worker, each recovering by 1.3 s (all but, one in
 * eight, a failure for good of a worker other than 0) and the next failure of that worker at
 * least 0.4 s after; the recoveries' number in *recoveries. */
static void scan_json(char *json, size_t size, unsigned seed, double lo, double hi,
                      unsigned *recoveries)
{
    unsigned n = 3 + (unsigned)(uniform() * 6), batch = 2 + (unsigned)(uniform() * 7);
    double rounds = lo + (hi - lo) * uniform();
    char rules[2048] = "";
    size_t len = 0;
    *recoveries = 0;
    for (unsigned w = 0; w < n; w++) {
        double t = 0.02 + 0.5 * uniform();
        for (int win = 0; win < 2 && t < 1.0 && uniform() < 0.6; win++) {
            bool forever = w > 0 && uniform() < 0.125;
            double up = t + 0.02 + 0.3 * uniform();
            len += (size_t)snprintf(rules + len, sizeof(rules) - len,
                                    "%s{\"kind\": \"failure\", \"workers\": [%u], \"at_s\": %.3f",
                                    len > 0 ? ", " : "", w, t);
            if (forever) {
                len += (size_t)snprintf(rules + len, sizeof(rules) - len, "}");
                break;
            }
            len += (size_t)snprintf(rules + len, sizeof(rules) - len, ", \"recover_s\": %.3f}", up);
            ++*recoveries;
            t = up + 0.4 + 0.2 * uniform(); /* admitted first, time allowing */
        }
    }
    snprintf(json, size,
             "{\"seed\": %u, \"workers\": %u,\n"
             " \"compute\": {\"iteration_ms\": %.1f, \"jitter_sigma\": 0.1},\n"
             " \"network\": {\"bandwidth_gbps\": 10, \"latency_us\": 20},\n"
             " \"workload\": {\"dataset\": {\"name\": \"synthetic\", \"samples\": %u, "
             "\"test_samples\": 20, \"dim\": 4, \"classes\": 2}, \"model\": {\"name\": "
             "\"softmax\"}, \"batch\": %u, \"message_bytes\": %u},\n"
             " \"protocol\": {\"name\": \"hpsgd\", \"flush\": \"%s\"},\n"
             " \"stragglers\": [%s],\n"
             " \"stop\": {\"time_s\": 2.5}, \"eval\": {\"every_s\": 1, \"samples\": 20}}\n",
             seed, n, 5 + 15 * uniform(), (unsigned)(rounds * n * batch + 0.5), batch,
             (unsigned)(1000 + 4e6 * uniform()), uniform() < 0.5 ? "both" : "newest", rules);
}

/* `runs` random schedules with epochs of lo to hi rounds, from `seed`: none stalls, every
 * recovery is admitted (by 1.3 s, 1.2 s to go, and 0.4 s before its worker fails again), and
 * every adoption is of the global model. The adoptions, and those in an epoch's first round, in
 * *adoptions and *idle. */
static void scan(uint64_t seed, unsigned runs, double lo, double hi, unsigned *adoptions,
                 unsigned *idle)
{
    scan_state = seed;
    unsigned short_of = 0;
    char first[4300] = "";
    *adoptions = *idle = 0;
    for (unsigned i = 0; i < runs; i++) {
        char json[4096];
        unsigned recoveries;
        scan_json(json, sizeof(json), i + 1, lo, hi, &recoveries);
        static spy s;
        sim_run_summary sum = spy_run(json, &s);
        ck_assert_msg(strcmp(sum.stop_reason, "time") == 0, "run %u stopped: %s\n%s", i,
                      sum.stop_reason, json);
        ck_assert_msg(s.bad[0] == '\0', "run %u: %s\n%s", i, s.bad, json);
        *adoptions += (unsigned)s.adoptions;
        *idle += (unsigned)s.idle;
        if (s.admitted != recoveries && short_of++ == 0)
            snprintf(first, sizeof(first), "run %u: %llu admitted of %u recoveries\n%s", i,
                     (unsigned long long)s.admitted, recoveries, json);
    }
    ck_assert_msg(short_of == 0, "%u of %u runs left recoveries unadmitted; the first: %s",
                  short_of, runs, first);
    printf("probe49 scan of epochs of %g to %g rounds: %u runs, %u adoptions, %u in an epoch's "
           "first round\n",
           lo, hi, runs, *adoptions, *idle);
}

/* 300 schedules with epochs of 1.1 to 3.5 rounds. Before the fix 129 of them left a recovery
 * unadmitted (with 985 adoptions, none in an epoch's first round), 9 had an adoption differ
 * from a member's global model; after, 1226 adoptions, 935 in an epoch's first round. */
START_TEST(random_short_epoch_schedules_admit_every_recovery)
{
    unsigned adoptions, idle;
    scan(38049, 300, 1.1, 3.5, &adoptions, &idle);
    ck_assert_uint_gt(idle, 500);
    ck_assert_uint_gt(adoptions, idle);
}
END_TEST

/* 100 schedules with epochs of 20 to 40 rounds, where admissions come at merges: two at
 * consecutive merges rescaled the first's zero-block round on the members released before the
 * second admission only (the round was named by one launch count, which the second admission
 * replaced, and which members no longer share after a failure), and the members' global models
 * differed from then on: 25 of these runs before the fix. */
START_TEST(random_long_epoch_schedules_keep_one_global_model)
{
    unsigned adoptions, idle;
    scan(38050, 100, 20, 40, &adoptions, &idle);
    ck_assert_uint_gt(adoptions, 300);
}
END_TEST

/* One of them: three workers, worker 2 down from 0.042 to 0.082 s, 0 from 0.468 to 0.716 s, 1
 * from 0.481 to 0.695 s (with `flush: newest`): worker 0 adopted a model other than worker 2's
 * at merge 18. */
START_TEST(two_admissions_at_consecutive_merges_keep_one_global_model)
{
    static const char json[] =
        "{\"seed\": 3, \"workers\": 3,\n"
        " \"compute\": {\"iteration_ms\": 18.9, \"jitter_sigma\": 0.1},\n"
        " \"network\": {\"bandwidth_gbps\": 10, \"latency_us\": 20},\n"
        " \"workload\": {\"dataset\": {\"name\": \"synthetic\", \"samples\": 345, "
        "\"test_samples\": 20, \"dim\": 4, \"classes\": 2}, \"model\": {\"name\": "
        "\"softmax\"}, \"batch\": 4, \"message_bytes\": 1326059},\n"
        " \"protocol\": {\"name\": \"hpsgd\", \"flush\": \"newest\"},\n"
        " \"stragglers\": [{\"kind\": \"failure\", \"workers\": [0], \"at_s\": 0.468, "
        "\"recover_s\": 0.716}, {\"kind\": \"failure\", \"workers\": [1], \"at_s\": 0.481, "
        "\"recover_s\": 0.695}, {\"kind\": \"failure\", \"workers\": [2], \"at_s\": 0.042, "
        "\"recover_s\": 0.082}],\n"
        " \"stop\": {\"time_s\": 2.5}, \"eval\": {\"every_s\": 1, \"samples\": 20}}\n";
    static spy s;
    spy_run(json, &s);
    ck_assert_msg(s.bad[0] == '\0', "%s", s.bad);
    ck_assert_uint_eq(s.admitted, 3);
    ck_assert_uint_ge(s.compared, 2);
}
END_TEST

Suite *test_suite(void)
{
    Suite *s = suite_create("probe49");
    TCase *t = tcase_create("admission");
    tcase_add_test(t, a_worker_recovering_in_short_epochs_is_admitted);
    tcase_add_test(t, the_admitted_worker_starts_from_the_global_model);
    tcase_add_test(t, random_short_epoch_schedules_admit_every_recovery);
    tcase_add_test(t, random_long_epoch_schedules_keep_one_global_model);
    tcase_add_test(t, two_admissions_at_consecutive_merges_keep_one_global_model);
    tcase_set_timeout(t, 240);
    suite_add_tcase(s, t);
    return s;
}
