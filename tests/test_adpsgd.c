/* AD-PSGD end to end, its averaging: the sum and mean of the models kept by every pairwise
 * average (failures included), bitwise-equal endpoints, a consensus distance that never grows,
 * gradients applied at once and averages of the models as sent when exchanges outlast
 * iterations; parameters, determinism and the example scenarios. Runs use a small synthetic
 * data set or the timing-only model (helpers in tests/harness_adpsgd.h). */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_rng.h>

#include "harness.h"
#include "harness_adpsgd.h"
#include "protocols/adpsgd_state.h"
#include "runtime/ctx.h"
#include "runtime/run.h"
#include "scenario/scenario.h"
#include "sim/tensor.h"

extern const proto_ops proto_adpsgd;

/* Float rounding unit: round to nearest gives |fl(x) - x| <= U |x|. */
static const double U = 0x1p-24;

/* The bound on how far K pairwise averages move a per-element sum of the models. The pair's
 * new sum is 2 * (fl(a + b) * 0.5) = fl(a + b) (halving is exact), off by at most
 * U |a + b| <= 2 U M: an average never grows the largest |x| (fl is monotone, and 2M is a
 * float). The test sums n floats in double, exact but for at most n * 2^-53 * n * M per sum;
 * two sums are compared. */
static double sum_bound(const probe *pr, double K)
{
    return K * 2.0 * U * pr->max_abs + 2.0 * pr->n * pr->n * 0x1p-53 * pr->max_abs;
}

START_TEST(pairwise_averages_keep_the_sum_and_the_mean_of_the_models)
{
    sim_scenario *sc = harness_load_file(adpt_avg_json, NULL, 0);
    char *dir = harness_tmpdir("adpsgd");
    probe pr = { 0 };
    harness_run(sc, dir, adpt_observe, &pr);
    double K = adpt_report(dir, "exchanges");
    ck_assert_double_gt(K, 60); /* 8 active workers, about 10 gradients each */
    ck_assert_uint_ge(pr.k, 20);
    ck_assert_double_gt(pr.max_abs, 0.1);
    ck_assert_msg(pr.max_dev <= sum_bound(&pr, K), "sum moved by %g, bound %g", pr.max_dev,
                  sum_bound(&pr, K));
    /* The mean is the sum over n: it moved by at most the same bound over n. And the
     * models did move: the consensus distance fell. */
    ck_assert_double_lt(pr.cons[pr.k - 1], 0.1 * pr.cons[0]);
    free(pr.sum0);
    sim_scenario_destroy(sc);
    harness_cleanup(dir);
}
END_TEST

START_TEST(exchanges_cut_by_failures_and_timeouts_change_neither_model)
{
    /* No jitter and equal speeds: every 10 ms all 8 active workers ask at once, so requests
     * queue. A 0.1 ms timeout is shorter than one wait in a queue (an exchange takes 80 us),
     * so queued requesters give up and some replies arrive after that. Workers fail in the
     * middle of exchanges (50 us after a burst): passive 2 and active 7 for a while, passive
     * 4 for good. The sum over all workers (failed ones keep their models) still moves only
     * by rounding. */
    const char *sets[] = { "compute={\"iteration_ms\": 10}", "protocol.exchange_timeout_ms=0.1",
                           "stragglers=[{\"kind\": \"failure\", \"workers\": [2, 7], "
                           "\"at_s\": 0.03005, \"recover_s\": 0.06005}, {\"kind\": \"failure\", "
                           "\"workers\": [4], \"at_s\": 0.07005}]" };
    sim_scenario *sc = harness_load_file(adpt_avg_json, sets, 3);
    char *dir = harness_tmpdir("adpsgd");
    probe pr = { 0 };
    harness_run(sc, dir, adpt_observe, &pr);
    double K = adpt_report(dir, "exchanges");
    ck_assert_double_gt(K, 50);
    ck_assert_double_gt(adpt_report(dir, "timeouts"), 0);
    ck_assert_double_gt(adpt_report(dir, "stale_replies"), 0);
    ck_assert_double_gt(adpt_report(dir, "stale_requests"), 0);
    ck_assert_double_gt(adpt_report(dir, "dropped"), 0);
    /* A reply takes 40 us: a passive worker serving longer would be stuck, for instance
     * still waiting for the reply it lost to a failed active worker. */
    ck_assert_double_lt(adpt_report(dir, "max_serve_s"), 0.001);
    ck_assert_msg(pr.max_dev <= sum_bound(&pr, K), "sum moved by %g, bound %g", pr.max_dev,
                  sum_bound(&pr, K));
    free(pr.sum0);
    sim_scenario_destroy(sc);
    harness_cleanup(dir);
}
END_TEST

START_TEST(the_consensus_distance_never_grows_between_evaluations)
{
    /* D = mean_w ||x_w - mu||^2. An exact average of a and b lowers n D by ||a - b||^2 / 2.
     * The rounded one puts r = m + delta on both ends, |delta_e| <= U |m_e| <= U M, and since
     * the mean minimizes the sum of squares, n D'' <= n D_exact + 2 (||m + delta - mu||^2 -
     * ||m - mu||^2) <= n D_exact + 4 U M (2M) P + 2 U^2 M^2 P: per exchange D grows by at
     * most 9 U M^2 P / n beyond the exact decrease. The trace gives the number of commits
     * (replies delivered) between two evaluations, counting those at either instant. */
    sim_scenario *sc = harness_load_file(adpt_avg_json, NULL, 0);
    char *dir = harness_tmpdir("adpsgd");
    probe pr = { 0 };
    harness_run(sc, dir, adpt_observe, &pr);
    ck_assert_double_eq(adpt_report(dir, "timeouts"), 0); /* so every reply commits */
    size_t nmsg;
    msg_line *m = adpt_messages(dir, &nmsg);
    double per = 9.0 * U * pr.max_abs * pr.max_abs * (double)pr.P / pr.n, tol = 0.0;
    for (size_t k = 1; k < pr.k; k++) {
        double K = 0;
        for (size_t i = 0; i < nmsg; i++)
            K += m[i].tag == 2 && m[i].t >= pr.t[k - 1] && m[i].t <= pr.t[k] ? 1 : 0;
        tol = K * per;
        ck_assert_msg(pr.cons[k] <= pr.cons[k - 1] + tol, "evaluation %zu: %g after %g (tol %g)", k,
                      pr.cons[k], pr.cons[k - 1], tol);
    }
    ck_assert_double_lt(100 * per, pr.cons[pr.k - 1]); /* the check was not vacuous */
    free(m);
    free(pr.sum0);
    sim_scenario_destroy(sc);
    harness_cleanup(dir);
}
END_TEST

START_TEST(both_ends_of_an_exchange_hold_equal_bits)
{
    /* From the trace, the last commit (a reply delivered) of each worker before each
     * evaluation: two workers whose last exchange was with each other must hold the same
     * bits; everybody started from a different draw. */
    sim_scenario *sc = harness_load_file(adpt_avg_json, NULL, 0);
    char *dir = harness_tmpdir("adpsgd");
    probe pr = { 0 };
    harness_run(sc, dir, adpt_observe, &pr);
    ck_assert_double_eq(adpt_report(dir, "timeouts"), 0); /* so every reply commits */
    ck_assert_uint_ne(pr.fnv[0][0], pr.fnv[0][1]);
    size_t nmsg, checked = 0, i = 0;
    msg_line *m = adpt_messages(dir, &nmsg);
    uint32_t last[MAX_W];
    for (uint32_t w = 0; w < MAX_W; w++)
        last[w] = UINT32_MAX;
    for (size_t k = 0; k < pr.k; k++) {
        for (; i < nmsg && m[i].t < pr.t[k]; i++)
            if (m[i].tag == 2) {
                last[m[i].dst] = m[i].src;
                last[m[i].src] = m[i].dst;
            }
        if (i < nmsg && m[i].t == pr.t[k])
            continue; /* a commit at the evaluation's instant: order unknown here */
        for (uint32_t a = 1; a < pr.n; a += 2) {
            uint32_t p = last[a];
            if (p == UINT32_MAX || last[p] != a)
                continue;
            ck_assert_msg(pr.fnv[k][a] == pr.fnv[k][p], "t=%" PRId64 ": %u and %u differ", pr.t[k],
                          a, p);
            checked++;
        }
    }
    ck_assert_uint_gt(checked, 50);
    free(m);
    free(pr.sum0);
    sim_scenario_destroy(sc);
    harness_cleanup(dir);
}
END_TEST

/* The two workers' models at each evaluation. */
typedef struct pair_probe {
    size_t P, k;
    float *x[MAX_EVALS][2];
} pair_probe;

static void observe_pair(void *ud, sim_ctx *ctx)
{
    pair_probe *pr = ud;
    ck_assert_uint_eq(sim_ctx_workers(ctx), 2);
    ck_assert_uint_lt(pr->k, MAX_EVALS);
    pr->P = sim_ctx_num_params(ctx);
    for (uint32_t w = 0; w < 2; w++) {
        pr->x[pr->k][w] = malloc(pr->P * sizeof(float));
        memcpy(pr->x[pr->k][w], sim_ctx_params_view(ctx, w), pr->P * sizeof(float));
    }
    pr->k++;
}

static void pair_probe_free(pair_probe *pr)
{
    for (size_t k = 0; k < pr->k; k++)
        for (uint32_t w = 0; w < 2; w++)
            free(pr->x[k][w]);
}

static bool same_models(const pair_probe *a, size_t ka, const pair_probe *b, size_t kb)
{
    for (uint32_t w = 0; w < 2; w++)
        for (size_t e = 0; e < a->P; e++)
            if (a->x[ka][w][e] != b->x[kb][w][e])
                return false;
    return true;
}

START_TEST(each_gradient_is_taken_on_the_model_holding_the_last_one_and_applied_after_the_average)
{
    /* The order of PROTOCOLS 2.1 for a worker: read x-hat, compute g on it while averaging,
     * apply g after the average, and read the next x-hat after that. With two workers and
     * exchanges shorter than an iteration, that is x_i <- (x_0 + x_1) / 2 - lr g_i(x_i)
     * per iteration, with each worker's own momentum: D-PSGD on the complete graph of two
     * (W = 1/2 everywhere). Both runs must hold the same bits at the start of iterations
     * 1, 2 and 3 (AD-PSGD: 1 ms after each gradient, before the commit at 2.1 ms; D-PSGD:
     * whenever it is between its steps). Reading x-hat before the last gradient was applied
     * (or applying it before the average) breaks the equality. */
    const char *sets[] = { "workload={\"dataset\": {\"name\": \"synthetic\", \"samples\": 400, "
                           "\"dim\": 6, \"classes\": 3}, \"model\": {\"name\": \"softmax\"}, "
                           "\"batch\": 16, \"lr\": 0.1, \"momentum\": 0.9, "
                           "\"message_bytes\": 1000000}",
                           "eval={\"every_s\": 0.001, \"samples\": 10}", "stop.time_s=0.045",
                           "protocol={\"name\": \"dpsgd\", \"graph\": \"complete\"}" };
    sim_scenario *ad = harness_load_file(adpt_pair_json, sets, 3);
    sim_scenario *dp = harness_load_file(adpt_pair_json, sets, 4);
    char *da = harness_tmpdir("adpsgd"), *dd = harness_tmpdir("adpsgd");
    pair_probe pa = { 0 }, pd = { 0 };
    harness_run(ad, da, observe_pair, &pa);
    harness_run(dp, dd, observe_pair, &pd);
    ck_assert_uint_gt(pa.P, 0);
    for (size_t it = 1; it <= 3; it++) {
        size_t ka = 10 * it + 1; /* the evaluation at 10 it + 1 ms */
        ck_assert_uint_lt(ka, pa.k);
        /* The workers differ (their gradients differ), and the models moved. */
        ck_assert(memcmp(pa.x[ka][0], pa.x[ka][1], pa.P * sizeof(float)) != 0);
        ck_assert(!same_models(&pa, ka, &pa, ka - 10));
        bool found = false;
        for (size_t kd = 0; kd < pd.k && !found; kd++)
            found = same_models(&pa, ka, &pd, kd);
        ck_assert_msg(found, "iteration %zu: no D-PSGD state matches", it);
    }
    /* And between the commit and the next gradient both AD-PSGD workers hold the average. */
    ck_assert(memcmp(pa.x[15][0], pa.x[15][1], pa.P * sizeof(float)) == 0);
    pair_probe_free(&pa);
    pair_probe_free(&pd);
    sim_scenario_destroy(ad);
    sim_scenario_destroy(dp);
    harness_cleanup(da);
    harness_cleanup(dd);
}
END_TEST

/* A spy around the protocol's ops table on the pair (passive 0, active 1): before and after every
 * event it reads both models, and after it notes the model each worker sent with its last
 * request (worker 1: its exchange number moved) or reply (worker 0: it started serving). */
enum {
    SPY_P = 64 /* parameters */
};

typedef struct ad_spy {
    size_t P;
    float sent[2][SPY_P];    /* each worker's model as its last request or reply carried it */
    uint32_t seq, serving;   /* worker 1's exchange number, worker 0's requester's, as noted */
    uint64_t steps, during;  /* gradients checked as applied at once; of them, in an exchange */
    uint64_t commits, moved; /* commits checked; of them, with an end that had stepped */
} ad_spy;

static ad_spy *spied;

static void note_sent(sim_ctx *ctx, const adpsgd *st)
{
    const ad_worker *a = sim_ctx_worker(ctx, 1), *p = sim_ctx_worker(ctx, 0);
    if (a->seq != spied->seq)
        memcpy(spied->sent[1], sim_ctx_params_view(ctx, 1), spied->P * sizeof(float));
    if (p->serving != AD_NOBODY && p->serving_seq != spied->serving)
        memcpy(spied->sent[0], sim_ctx_params_view(ctx, 0), spied->P * sizeof(float));
    spied->seq = a->seq;
    spied->serving = p->serving != AD_NOBODY ? p->serving_seq : spied->serving;
    (void)st;
}

static int spy_start(void *state, sim_ctx *ctx, sim_err *err)
{
    spied->P = sim_ctx_num_params(ctx);
    ck_assert_uint_le(spied->P, SPY_P);
    int rc = proto_adpsgd.start(state, ctx, err);
    note_sent(ctx, state);
    return rc;
}

/* With lr 0.1, momentum and weight decay 0, a gradient's step is x - 0.1 (g + 0 x) (optim.c);
 * a commit is a + (x - s) on both ends, a = (s_1 + s_0) * 0.5, s the models as sent. */
static int spy_on_event(void *state, sim_ctx *ctx, const sim_event *ev, sim_err *err)
{
    const adpsgd *st = state;
    size_t P = spied->P;
    float before[2][SPY_P], g[SPY_P];
    for (uint32_t w = 0; w < 2; w++)
        memcpy(before[w], sim_ctx_params_view(ctx, w), P * sizeof(float));
    uint32_t w = (uint32_t)ev->dst;
    bool computed = ev->kind == SIM_EV_COMPUTED, busy = false;
    if (computed) {
        memcpy(g, sim_ctx_grad(ctx, w), P * sizeof(float));
        const ad_worker *x = sim_ctx_worker(ctx, w);
        busy = w == 1 ? x->exchanging : x->serving != AD_NOBODY;
    }
    uint64_t exchanges = st->exchanges;
    int rc = proto_adpsgd.on_event(state, ctx, ev, err);
    const float *x0 = sim_ctx_params_view(ctx, 0), *x1 = sim_ctx_params_view(ctx, 1);
    if (computed) {
        const float *x = w == 0 ? x0 : x1;
        for (size_t e = 0; e < P; e++) {
            float want = before[w][e] - (float)0.1 * (g[e] + 0.0f * before[w][e]);
            ck_assert_msg(memcmp(&x[e], &want, sizeof(float)) == 0,
                          "worker %u, parameter %zu after its gradient%s: %.9g, want %.9g", w, e,
                          busy ? " during an exchange" : "", (double)x[e], (double)want);
        }
        spied->steps++;
        spied->during += busy;
    }
    if (st->exchanges > exchanges) {
        bool moved = false;
        for (size_t e = 0; e < P; e++) {
            float a = (spied->sent[1][e] + spied->sent[0][e]) * 0.5f;
            float w1 = a + (before[1][e] - spied->sent[1][e]);
            float w0 = a + (before[0][e] - spied->sent[0][e]);
            ck_assert_msg(memcmp(&x1[e], &w1, sizeof(float)) == 0 &&
                              memcmp(&x0[e], &w0, sizeof(float)) == 0,
                          "commit, parameter %zu: %.9g and %.9g, want %.9g and %.9g", e,
                          (double)x1[e], (double)x0[e], (double)w1, (double)w0);
            moved |= before[1][e] != spied->sent[1][e] || before[0][e] != spied->sent[0][e];
        }
        spied->commits++;
        spied->moved += moved;
    }
    note_sent(ctx, state);
    return rc;
}

START_TEST(gradients_ready_during_a_slow_exchange_are_applied_at_once_and_averaged_as_sent)
{
    /* 15 MB messages take 15.05 ms, an exchange about 30 ms: three iterations of 10 ms. Each
     * gradient is applied when it is ready, also during an exchange (the next iteration reads
     * the model holding it: PROTOCOLS 2.1), and each commit averages the two models as they
     * were sent, each end keeping the steps it took since on top (the passive one's reply is
     * copied when it steps). Before, a gradient ready during an exchange waited for the commit
     * and the next one was taken on a model without it. */
    const char *sets[] = { "workload={\"dataset\": {\"name\": \"synthetic\", \"samples\": 400, "
                           "\"dim\": 6, \"classes\": 3}, \"model\": {\"name\": \"softmax\"}, "
                           "\"batch\": 16, \"lr\": 0.1, \"momentum\": 0, "
                           "\"message_bytes\": 15000000}",
                           "stop.time_s=0.2" };
    sim_scenario *sc = harness_load_file(adpt_pair_json, sets, 2);
    char *dir = harness_tmpdir("adpsgd");
    proto_ops ops = proto_adpsgd;
    ops.start = spy_start;
    ops.on_event = spy_on_event;
    static ad_spy spy;
    memset(&spy, 0, sizeof(spy));
    spied = &spy;
    harness_run_with(sc, &ops, dir, NULL, NULL);
    spied = NULL;
    ck_assert_uint_gt(spy.P, 0);
    ck_assert_uint_ge(spy.steps, 30);  /* about 19 gradients each in 0.2 s */
    ck_assert_uint_ge(spy.during, 20); /* most of the active's, half the passive's */
    ck_assert_uint_ge(spy.commits, 5); /* one exchange per 30 ms */
    ck_assert_uint_eq(spy.moved, spy.commits);
    ck_assert_double_eq(adpt_report(dir, "moved_exchange_ends"), 2 * spy.commits);
    sim_scenario_destroy(sc);
    harness_cleanup(dir);
}
END_TEST

/* ---- parameters, determinism, scenarios ---- */

START_TEST(bad_parameters_are_rejected_with_their_path)
{
    static const struct {
        const char *set, *path, *msg;
    } cases[] = {
        { "protocol.graph=\"torus\"", "$.protocol.graph",
          "must be one of exponential, ring, got \"torus\"" },
        { "protocol.graph=7", "$.protocol.graph", "must be one of exponential, ring, got 7" },
        { "protocol.exchange_timeout_ms=-2.5", "$.protocol.exchange_timeout_ms",
          "must be a number in [0, 3600000], got -2.5" },
        { "protocol.exchange_timeout_ms=\"fast\"", "$.protocol.exchange_timeout_ms",
          "must be a number in [0, 3600000], got \"fast\"" },
        { "protocol.fanout=3", "$.protocol.fanout",
          "unknown key (valid: name, graph, exchange_timeout_ms)" },
    };
    for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
        const char *sets[] = { cases[c].set };
        harness_expect_rejected_file(adpt_pair_json, sets, 1, cases[c].path, cases[c].msg);
    }
}
END_TEST

START_TEST(the_same_scenario_and_seed_give_byte_identical_outputs)
{
    const char *sets[] = { "workload.lr=0.05", "stop.time_s=0.5", "eval.every_s=0.05",
                           "stragglers=[{\"kind\": \"random\", \"probability\": 0.2, "
                           "\"slowdown\": 3}, {\"kind\": \"failure\", \"workers\": [6], "
                           "\"at_s\": 0.1, \"recover_s\": 0.3}]",
                           "protocol.exchange_timeout_ms=0.2" };
    char *dirs[3];
    for (int i = 0; i < 3; i++) {
        const char *more[6] = { sets[0], sets[1], sets[2], sets[3], sets[4], "seed=2386" };
        sim_scenario *sc = harness_load_file(adpt_avg_json, more, i < 2 ? 5 : 6);
        dirs[i] = harness_tmpdir("adpsgd");
        harness_run(sc, dirs[i], NULL, NULL);
        sim_scenario_destroy(sc);
    }
    harness_expect_same_trace(dirs[0], dirs[1]);
    char *a = harness_slurp(dirs[0], "events.csv"), *c = harness_slurp(dirs[2], "events.csv");
    ck_assert_str_ne(a, c);
    free(a);
    free(c);
    for (int i = 0; i < 3; i++)
        harness_cleanup(dirs[i]);
}
END_TEST

START_TEST(the_example_scenarios_load_and_pass_their_checks)
{
    const char *files[] = { "scenarios/adpsgd.json", "scenarios/consensus-adpsgd.json",
                            "scenarios/bench/adpsgd-1024.json" };
    for (size_t i = 0; i < 3; i++) {
        sim_scenario *sc = harness_load_file(files[i], NULL, 0);
        ck_assert_str_eq(sc->protocol, "adpsgd");
        sim_scenario_destroy(sc);
    }
}
END_TEST

START_TEST(the_consensus_scenario_shrinks_disagreement_geometrically)
{
    /* scenarios/consensus-adpsgd.json as shipped: lr 0, independent draws. The consensus
     * distance falls at every evaluation, and at a steady rate: the mean log-ratio of the
     * first and second halves agree within a factor of 2 (a geometric sequence has equal
     * ratios; rounding has not set in while D stays far above U^2 M^2 P). */
    sim_scenario *sc = harness_load_file("scenarios/consensus-adpsgd.json", NULL, 0);
    char *dir = harness_tmpdir("adpsgd");
    probe pr = { 0 };
    harness_run(sc, dir, adpt_observe, &pr);
    ck_assert_uint_ge(pr.k, 20);
    double first = 0.0, second = 0.0;
    size_t nev = pr.t[pr.k - 1] == pr.t[pr.k - 2] ? pr.k - 1 : pr.k; /* the end, evaluated */
    size_t half = (nev - 1) / 2;
    for (size_t k = 1; k < nev; k++) {
        ck_assert_msg(pr.cons[k] < pr.cons[k - 1], "evaluation %zu: %g after %g", k, pr.cons[k],
                      pr.cons[k - 1]);
        double lr = log(pr.cons[k] / pr.cons[k - 1]);
        if (k <= half)
            first += lr / (double)half;
        else
            second += lr / (double)(nev - 1 - half);
    }
    ck_assert_double_lt(first, 0);
    ck_assert_double_lt(second, 0);
    ck_assert_msg(first / second < 2 && second / first < 2, "rates %g and %g", first, second);
    ck_assert_double_lt(pr.cons[nev - 1], 1e-6 * pr.cons[0]);
    free(pr.sum0);
    sim_scenario_destroy(sc);
    harness_cleanup(dir);
}
END_TEST

Suite *test_suite(void)
{
    Suite *s = suite_create("adpsgd");
    TCase *exact = tcase_create("averaging");
    tcase_add_test(exact, pairwise_averages_keep_the_sum_and_the_mean_of_the_models);
    tcase_add_test(exact, exchanges_cut_by_failures_and_timeouts_change_neither_model);
    tcase_add_test(exact, the_consensus_distance_never_grows_between_evaluations);
    tcase_add_test(exact, both_ends_of_an_exchange_hold_equal_bits);
    tcase_add_test(
        exact,
        each_gradient_is_taken_on_the_model_holding_the_last_one_and_applied_after_the_average);
    tcase_add_test(exact, the_consensus_scenario_shrinks_disagreement_geometrically);
    tcase_add_test(exact,
                   gradients_ready_during_a_slow_exchange_are_applied_at_once_and_averaged_as_sent);
    tcase_set_timeout(exact, 120);
    suite_add_tcase(s, exact);
    TCase *cfg = tcase_create("configuration");
    tcase_add_test(cfg, bad_parameters_are_rejected_with_their_path);
    tcase_add_test(cfg, the_same_scenario_and_seed_give_byte_identical_outputs);
    tcase_add_test(cfg, the_example_scenarios_load_and_pass_their_checks);
    tcase_set_timeout(cfg, 60);
    suite_add_tcase(s, cfg);
    return s;
}
