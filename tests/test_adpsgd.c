/* AD-PSGD end to end: exchange timing worked out by hand, the sum and mean of the models kept
 * by every pairwise average (failures included), bitwise-equal endpoints, a consensus
 * distance that never grows, gradients applied at once and averages of the models as sent
 * when exchanges outlast iterations, the bipartite graph, wait-free throughput under a slow
 * worker, timeouts, randomized runs that never stall, parameters, determinism and the example
 * scenarios. Runs use a small synthetic data set or the timing-only model. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_rng.h>

#include "harness.h"
#include "protocols/adpsgd_state.h"
#include "runtime/ctx.h"
#include "runtime/run.h"
#include "scenario/scenario.h"
#include "sim/tensor.h"

extern const proto_ops proto_adpsgd;

/* Float rounding unit: round to nearest gives |fl(x) - x| <= U |x|. */
static const double U = 0x1p-24;

/* ---- helpers ---- */

/* A value of summary.json's protocol_report (or any number keyed so). */
static double report(const char *dir, const char *key)
{
    return harness_summary_number(dir, key);
}

/* Delivered messages from events.csv. */
typedef struct msg_line {
    int64_t t;    /* ns */
    uint32_t dst; /* receiver */
    uint32_t src; /* sender */
    uint64_t tag; /* 1 request, 2 reply: the message's kind (its arg, on channel 0) */
    uint64_t bytes;
} msg_line;

static msg_line *messages(const char *dir, size_t *n)
{
    char *ev = harness_slurp(dir, "events.csv");
    size_t cap = 1024;
    msg_line *m = malloc(cap * sizeof(*m));
    *n = 0;
    for (char *line = strchr(ev, '\n'); line != NULL && line[1] != '\0';
         line = strchr(line + 1, '\n')) {
        long long t, w, p;
        unsigned long long seq, bytes, tag;
        char what[16];
        if (sscanf(line + 1, "%lld,%15[^,],%lld,%lld,%llu,%llu,%llu", &t, what, &w, &p, &seq,
                   &bytes, &tag) != 7 ||
            strcmp(what, "msg") != 0)
            continue;
        if (*n == cap)
            m = realloc(m, (cap *= 2) * sizeof(*m));
        m[(*n)++] = (msg_line){ t, (uint32_t)w, (uint32_t)p, tag, bytes };
    }
    free(ev);
    return m;
}

/* True if the trace holds the message (t, dst, src, kind, bytes) at index i of m (any index
 * if i is SIZE_MAX); *at receives its index. bytes 0 matches any size. */
static bool has_msg(const msg_line *m, size_t n, int64_t t, uint32_t dst, uint32_t src,
                    uint64_t kind, uint64_t bytes, size_t *at)
{
    for (size_t i = 0; i < n; i++)
        if (m[i].t == t && m[i].dst == dst && m[i].src == src && m[i].tag == kind &&
            (bytes == 0 || m[i].bytes == bytes)) {
            if (at != NULL)
                *at = i;
            return true;
        }
    return false;
}

/* The spec's graph, worked out independently of protocols/adpsgd.c: offsets 1 and, for the
 * exponential graph, 1 + 2^m with 2^m <= N - 1; edges only between different parities. */
static bool edge(uint32_t n, bool ring, uint32_t a, uint32_t b)
{
    if (a % 2 == b % 2)
        return false;
    uint32_t diff = a > b ? a - b : b - a;
    if (diff == 1 || n - diff == 1)
        return true;
    for (uint32_t m = 1; !ring && ((uint64_t)1 << m) <= (uint64_t)n - 1; m++) {
        uint64_t d = (1 + ((uint64_t)1 << m)) % n;
        if (diff == d || n - diff == d)
            return true;
    }
    return false;
}

/* ---- scenarios ---- */

/* 16 workers, a softmax model of 39 parameters on 12 features and 3 classes, lr 0 (models
 * change only by averaging) and each worker's own initial draw. */
static const char avg_json[] = "tests/scenarios/adpsgd/avg.json";

enum {
    MAX_EVALS = 128,
    MAX_W = 32
};

/* What the observe hook saw at each evaluation. */
typedef struct probe {
    size_t P;
    uint32_t n;
    double *sum0;           /* (P) element sums over all workers at the first call */
    double max_abs;         /* M: the largest |x| at the first call */
    double max_dev;         /* largest |sum - sum0| over elements and calls */
    size_t k;               /* calls so far */
    int64_t t[MAX_EVALS];   /* their times */
    double cons[MAX_EVALS]; /* consensus distance over all workers */
    uint64_t fnv[MAX_EVALS][MAX_W];
    bool down[MAX_EVALS][MAX_W];
} probe;

static void observe(void *ud, sim_ctx *ctx)
{
    probe *pr = ud;
    pr->P = sim_ctx_num_params(ctx);
    pr->n = sim_ctx_workers(ctx);
    ck_assert_uint_le(pr->n, MAX_W);
    ck_assert_uint_lt(pr->k, MAX_EVALS);
    const float *xs[MAX_W];
    for (uint32_t w = 0; w < pr->n; w++) {
        xs[w] = sim_ctx_params(ctx, w);
        pr->fnv[pr->k][w] = xs[w] != NULL ? sim_tensor_checksum(xs[w], pr->P) : 0;
        pr->down[pr->k][w] = sim_ctx_down(ctx, w);
    }
    pr->t[pr->k] = sim_ctx_now(ctx);
    if (pr->P > 0) {
        pr->cons[pr->k] = sim_tensor_consensus(xs, pr->n, pr->P);
        if (pr->sum0 == NULL)
            pr->sum0 = calloc(pr->P, sizeof(double));
        for (size_t e = 0; e < pr->P; e++) {
            double s = 0.0;
            for (uint32_t w = 0; w < pr->n; w++) {
                s += (double)xs[w][e];
                if (pr->k == 0 && fabs((double)xs[w][e]) > pr->max_abs)
                    pr->max_abs = fabs((double)xs[w][e]);
            }
            if (pr->k == 0)
                pr->sum0[e] = s;
            else if (fabs(s - pr->sum0[e]) > pr->max_dev)
                pr->max_dev = fabs(s - pr->sum0[e]);
        }
    }
    pr->k++;
}

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
    sim_scenario *sc = harness_load_file(avg_json, NULL, 0);
    char *dir = harness_tmpdir("adpsgd");
    probe pr = { 0 };
    harness_run(sc, dir, observe, &pr);
    double K = report(dir, "exchanges");
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
    sim_scenario *sc = harness_load_file(avg_json, sets, 3);
    char *dir = harness_tmpdir("adpsgd");
    probe pr = { 0 };
    harness_run(sc, dir, observe, &pr);
    double K = report(dir, "exchanges");
    ck_assert_double_gt(K, 50);
    ck_assert_double_gt(report(dir, "timeouts"), 0);
    ck_assert_double_gt(report(dir, "stale_replies"), 0);
    ck_assert_double_gt(report(dir, "stale_requests"), 0);
    ck_assert_double_gt(report(dir, "dropped"), 0);
    /* A reply takes 40 us: a passive worker serving longer would be stuck, for instance
     * still waiting for the reply it lost to a failed active worker. */
    ck_assert_double_lt(report(dir, "max_serve_s"), 0.001);
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
    sim_scenario *sc = harness_load_file(avg_json, NULL, 0);
    char *dir = harness_tmpdir("adpsgd");
    probe pr = { 0 };
    harness_run(sc, dir, observe, &pr);
    ck_assert_double_eq(report(dir, "timeouts"), 0); /* so every reply commits */
    size_t nmsg;
    msg_line *m = messages(dir, &nmsg);
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
    sim_scenario *sc = harness_load_file(avg_json, NULL, 0);
    char *dir = harness_tmpdir("adpsgd");
    probe pr = { 0 };
    harness_run(sc, dir, observe, &pr);
    ck_assert_double_eq(report(dir, "timeouts"), 0); /* so every reply commits */
    ck_assert_uint_ne(pr.fnv[0][0], pr.fnv[0][1]);
    size_t nmsg, checked = 0, i = 0;
    msg_line *m = messages(dir, &nmsg);
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

/* ---- timing ---- */

/* Two workers (0 passive, 1 active), S = 1e6 bytes at 8 Gbit/s: 1 ms on the wire, plus two
 * NIC latencies of 25 us. Both compute for 10 ms. */
static const char pair_json[] = "tests/scenarios/adpsgd/pair.json";

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
    sim_scenario *ad = harness_load_file(pair_json, sets, 3);
    sim_scenario *dp = harness_load_file(pair_json, sets, 4);
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
    sim_scenario *sc = harness_load_file(pair_json, sets, 2);
    char *dir = harness_tmpdir("adpsgd");
    proto_ops ops = proto_adpsgd;
    ops.start = spy_start;
    ops.on_event = spy_on_event;
    static ad_spy spy;
    memset(&spy, 0, sizeof(spy));
    spied = &spy;
    sim_run_options opt = { .out_dir = dir };
    sim_run_summary sum;
    sim_err err;
    sim_err_clear(&err);
    ck_assert_msg(sim_run(sc, &ops, &opt, &sum, &err) == 0, "run: %s", err.msg);
    spied = NULL;
    ck_assert_uint_gt(spy.P, 0);
    ck_assert_uint_ge(spy.steps, 30);  /* about 19 gradients each in 0.2 s */
    ck_assert_uint_ge(spy.during, 20); /* most of the active's, half the passive's */
    ck_assert_uint_ge(spy.commits, 5); /* one exchange per 30 ms */
    ck_assert_uint_eq(spy.moved, spy.commits);
    ck_assert_double_eq(report(dir, "moved_exchange_ends"), 2 * spy.commits);
    sim_scenario_destroy(sc);
    harness_cleanup(dir);
}
END_TEST

START_TEST(two_workers_exchange_in_two_transfers_worked_out_by_hand)
{
    /* At 0, 10, 20 and 30 ms worker 1 starts an iteration and sends its request; it arrives
     * 1.05 ms later and the reply 1.05 ms after that: commits at 2.1, 12.1, 22.1, 32.1 ms,
     * before the iteration's gradient is ready. */
    sim_scenario *sc = harness_load_file(pair_json, NULL, 0);
    char *dir = harness_tmpdir("adpsgd");
    sim_run_summary sum = harness_run(sc, dir, NULL, NULL);
    ck_assert_uint_eq(sum.iterations, 6);
    char *ev = harness_slurp(dir, "events.csv");
    static const uint64_t want[][5] = {
        { 1050000, 0, 1, 1, 1000000 },  { 2100000, 1, 0, 2, 1000000 },
        { 11050000, 0, 1, 1, 1000000 }, { 12100000, 1, 0, 2, 1000000 },
        { 21050000, 0, 1, 1, 1000000 }, { 22100000, 1, 0, 2, 1000000 },
        { 31050000, 0, 1, 1, 1000000 }, { 32100000, 1, 0, 2, 1000000 },
    };
    size_t nm;
    msg_line *ml = messages(dir, &nm);
    for (size_t k = 0; k < 8; k++)
        ck_assert_msg(has_msg(ml, nm, (int64_t)want[k][0], (uint32_t)want[k][1],
                              (uint32_t)want[k][2], want[k][3], want[k][4], NULL),
                      "no message %zu", k);
    free(ml);
    size_t nmsg;
    free(messages(dir, &nmsg));
    ck_assert_uint_eq(nmsg, 8);
    ck_assert_double_eq(report(dir, "exchanges"), 4);
    ck_assert_double_eq_tol(report(dir, "mean_exchange_s"), 0.0021, 1e-15);
    ck_assert_double_eq_tol(report(dir, "max_wait_s"), 0.0021, 1e-15);
    /* Default timeout: 4 (d + 1) transfers with d = 1: 8 * 1.05 ms. */
    ck_assert_double_eq_tol(report(dir, "exchange_timeout_s"), 0.0084, 1e-15);
    /* Both compute throughout, and each exchange (2.1 ms, four of them) overlaps their
     * computation: workers.csv's comm_overlap_s, part of compute_s. */
    harness_csv t = harness_csv_read(dir, "workers.csv");
    for (size_t w = 0; w < 2; w++) {
        ck_assert_double_eq_tol(harness_csv_num(&t, w, "compute_s"), 0.035, 1e-15);
        ck_assert_double_eq_tol(harness_csv_num(&t, w, "comm_overlap_s"), 4 * 0.0021, 1e-15);
    }
    harness_csv_free(&t);
    free(ev);
    sim_scenario_destroy(sc);
    harness_cleanup(dir);
}
END_TEST

START_TEST(requests_to_a_failed_passive_time_out_until_it_recovers)
{
    /* Worker 0 is down from 5 to 30 ms; the timeout is 3 ms. Worker 1's exchange of 0 ms
     * commits at 2.1 ms; at 10 ms it asks again, and again after each timeout (13, 16, ...,
     * 28 ms): seven requests dropped. The timeout at 31 ms (the seventh) sends a request
     * that 0, up since 30 ms, answers: commit at 31 + 2.1 ms. The iterations of 20 and 30
     * ms had none: one more exchange starts at that commit (done at 35.2 ms), and the
     * iteration of 40 ms commits at 42.1 ms. */
    const char *sets[] = { ("stragglers=[{\"kind\": \"failure\", \"workers\": [0], \"at_s\": "
                            "0.005, \"recover_s\": 0.03}]"),
                           "protocol.exchange_timeout_ms=3", "stop.time_s=0.045" };
    sim_scenario *sc = harness_load_file(pair_json, sets, 3);
    char *dir = harness_tmpdir("adpsgd");
    sim_run_summary sum = harness_run(sc, dir, NULL, NULL);
    ck_assert_uint_eq(sum.iterations, 5); /* worker 1 at 10-40 ms, worker 0 at 40 ms */
    ck_assert_double_eq(report(dir, "timeouts"), 7);
    ck_assert_double_eq(report(dir, "exchanges"), 4);
    ck_assert_double_eq(report(dir, "dropped"), 7);
    ck_assert_double_eq_tol(report(dir, "max_wait_s"), 0.0231, 1e-15);
    char *ev = harness_slurp(dir, "events.csv");
    {
        size_t nm, at;
        msg_line *ml = messages(dir, &nm);
        ck_assert(has_msg(ml, nm, 32050000, 0, 1, 1, 1000000, &at));
        ck_assert(at + 1 < nm && ml[at + 1].t == 33100000 && ml[at + 1].dst == 1 &&
                  ml[at + 1].src == 0 && ml[at + 1].tag == 2);
        ck_assert(has_msg(ml, nm, 34150000, 0, 1, 1, 1000000, NULL));
        ck_assert(has_msg(ml, nm, 35200000, 1, 0, 2, 1000000, NULL));
        free(ml);
    }
    {
        size_t nm;
        msg_line *ml = messages(dir, &nm);
        ck_assert(has_msg(ml, nm, 41050000, 0, 1, 1, 1000000, NULL));
        free(ml);
    }
    {
        size_t nm;
        msg_line *ml = messages(dir, &nm);
        ck_assert(has_msg(ml, nm, 42100000, 1, 0, 2, 1000000, NULL));
        free(ml);
    }
    free(ev);
    sim_scenario_destroy(sc);
    harness_cleanup(dir);
}
END_TEST

START_TEST(a_passive_serving_a_failed_active_serves_the_next_one)
{
    /* The exchange of 0 ms commits at 2.1 ms. Worker 1 fails at 11.5 ms, while worker 0's
     * reply (11.05 to 12.1 ms) is on its way to it: the reply is dropped and worker 0 is
     * free at once. Worker 1 recovers at 15 ms and asks again as it starts computing
     * (commit at 17.1 ms), and again at 25 ms: served at 26.05 ms, commit at 27.1 ms. */
    const char *sets[] = { "stragglers=[{\"kind\": \"failure\", \"workers\": [1], \"at_s\": "
                           "0.0115, \"recover_s\": 0.015}]",
                           "stop.time_s=0.03" };
    sim_scenario *sc = harness_load_file(pair_json, sets, 2);
    char *dir = harness_tmpdir("adpsgd");
    harness_run(sc, dir, NULL, NULL);
    ck_assert_double_eq(report(dir, "exchanges"), 3);
    ck_assert_double_eq(report(dir, "dropped"), 1);
    /* The cut service lasted 0.45 ms; the other one 1.05 ms. */
    ck_assert_double_eq_tol(report(dir, "max_serve_s"), 0.00105, 1e-15);
    char *ev = harness_slurp(dir, "events.csv");
    {
        size_t nm, at;
        msg_line *ml = messages(dir, &nm);
        ck_assert(has_msg(ml, nm, 26050000, 0, 1, 1, 1000000, &at));
        ck_assert(at + 1 < nm && ml[at + 1].t == 27100000 && ml[at + 1].dst == 1 &&
                  ml[at + 1].src == 0 && ml[at + 1].tag == 2);
        free(ml);
    }
    free(ev);
    sim_scenario_destroy(sc);
    harness_cleanup(dir);
}
END_TEST

START_TEST(an_iteration_that_starts_during_an_exchange_gets_its_own_at_the_commit)
{
    /* 6 MB messages take 6.05 ms, an exchange 12.1 ms: longer than an iteration. The
     * iteration of 10 ms starts during the first exchange (0 to 12.1 ms), so its exchange
     * starts at that commit, and so on (its gradient, ready at 20 ms during the second
     * exchange, is applied at once). */
    const char *sets[] = { "workload.message_bytes=6000000", "stop.time_s=0.05" };
    sim_scenario *sc = harness_load_file(pair_json, sets, 2);
    char *dir = harness_tmpdir("adpsgd");
    harness_run(sc, dir, NULL, NULL);
    char *ev = harness_slurp(dir, "events.csv");
    static const uint64_t want[][5] = {
        { 6050000, 0, 1, 1, 6000000 },  { 12100000, 1, 0, 2, 6000000 },
        { 18150000, 0, 1, 1, 6000000 }, { 24200000, 1, 0, 2, 6000000 },
        { 30250000, 0, 1, 1, 6000000 }, { 36300000, 1, 0, 2, 6000000 },
        { 42350000, 0, 1, 1, 6000000 }, { 48400000, 1, 0, 2, 6000000 },
    };
    size_t nm;
    msg_line *ml = messages(dir, &nm);
    for (size_t k = 0; k < 8; k++)
        ck_assert_msg(has_msg(ml, nm, (int64_t)want[k][0], (uint32_t)want[k][1],
                              (uint32_t)want[k][2], want[k][3], want[k][4], NULL),
                      "no message %zu", k);
    free(ml);
    ck_assert_double_eq(report(dir, "exchanges"), 4);
    free(ev);
    sim_scenario_destroy(sc);
    harness_cleanup(dir);
}
END_TEST

START_TEST(a_timed_out_request_is_retried_with_another_neighbour)
{
    /* Four workers; passive 0 is down for good, so a request to it times out after 3 ms and
     * the retry must go to passive 2, the other neighbour. An exchange takes 0.3 ms (0.45 ms
     * behind the other active worker's): no exchange can wait 6 ms, which two timeouts in a
     * row would take. */
    const char *sets[] = { "workers=4",
                           ("stragglers=[{\"kind\": \"failure\", \"workers\": [0], \"at_s\": "
                            "0.005}]"),
                           "protocol.exchange_timeout_ms=3",
                           "workload.message_bytes=100000",
                           "compute.jitter_sigma=0.3",
                           "stop.time_s=2" };
    sim_scenario *sc = harness_load_file(pair_json, sets, 6);
    char *dir = harness_tmpdir("adpsgd");
    harness_run(sc, dir, NULL, NULL);
    ck_assert_double_gt(report(dir, "timeouts"), 100); /* about half of 400 exchanges */
    ck_assert_double_gt(report(dir, "exchanges"), 350);
    ck_assert_double_lt(report(dir, "max_wait_s"), 0.006);
    sim_scenario_destroy(sc);
    harness_cleanup(dir);
}
END_TEST

START_TEST(timing_only_runs_send_the_same_messages_as_real_ones)
{
    /* With two workers there is no peer to draw, so the real model's minibatch draws cannot
     * change the schedule: the traces must match byte for byte, timeouts included. */
    const char *fail[] = { ("stragglers=[{\"kind\": \"failure\", \"workers\": [0], \"at_s\": "
                            "0.005, \"recover_s\": 0.03}]"),
                           "protocol.exchange_timeout_ms=3", "stop.time_s=0.1" };
    sim_scenario *none = harness_load_file(pair_json, fail, 3);
    char *a = harness_tmpdir("adpsgd");
    harness_run(none, a, NULL, NULL);
    const char *real[] = { fail[0], fail[1], fail[2],
                           "workload={\"dataset\": {\"name\": \"synthetic\", \"samples\": 500, "
                           "\"dim\": 6, \"classes\": 2}, \"model\": {\"name\": \"softmax\"}, "
                           "\"message_bytes\": 1000000}" };
    sim_scenario *sc = harness_load_file(pair_json, real, 4);
    char *b = harness_tmpdir("adpsgd");
    harness_run(sc, b, NULL, NULL);
    char *ea = harness_slurp(a, "events.csv"), *eb = harness_slurp(b, "events.csv");
    ck_assert_str_eq(ea, eb);
    ck_assert_double_eq(report(a, "exchanges"), report(b, "exchanges"));
    ck_assert_double_gt(report(b, "exchanges"), 5);
    free(ea);
    free(eb);
    sim_scenario_destroy(none);
    sim_scenario_destroy(sc);
    harness_cleanup(a);
    harness_cleanup(b);
}
END_TEST

/* ---- graph ---- */

static const char graph_json[] = "tests/scenarios/adpsgd/graph.json";

START_TEST(every_exchange_joins_an_odd_active_and_an_even_passive_neighbour)
{
    /* About 200 exchanges per active worker over at most 8 neighbours: every edge gets used
     * (a given one is missed with probability below (7/8)^200 = 3e-12), and no other pair
     * ever talks. Degrees: N = 16 has all 8 odd offsets; N = 13 loses the edges that wrap
     * between even workers; the ring has 2. */
    static const struct {
        const char *set[2];
        uint32_t n, min_active, max_passive;
        bool ring;
    } cases[] = {
        { { "workers=16", "protocol.graph=\"exponential\"" }, 16, 8, 8, false },
        { { "workers=13", "protocol.graph=\"exponential\"" }, 13, 5, 6, false },
        { { "workers=10", "protocol.graph=\"ring\"" }, 10, 2, 2, true },
        { { "workers=11", "protocol.graph=\"ring\"" }, 11, 2, 2, true },
    };
    for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
        sim_scenario *sc = harness_load_file(graph_json, cases[c].set, 2);
        char *dir = harness_tmpdir("adpsgd");
        harness_run(sc, dir, NULL, NULL);
        uint32_t n = cases[c].n;
        double K = report(dir, "exchanges");
        ck_assert_double_gt(K, 100.0 * (n / 2));
        ck_assert_double_eq(report(dir, "cross_parity_exchanges"), K);
        ck_assert_double_eq(report(dir, "min_active_degree"), cases[c].min_active);
        ck_assert_double_eq(report(dir, "max_passive_degree"), cases[c].max_passive);
        bool seen[MAX_W][MAX_W] = { { false } };
        size_t nmsg;
        msg_line *m = messages(dir, &nmsg);
        for (size_t i = 0; i < nmsg; i++) {
            uint32_t act = m[i].tag == 1 ? m[i].src : m[i].dst;
            uint32_t pas = m[i].tag == 1 ? m[i].dst : m[i].src;
            ck_assert_msg(act % 2 == 1 && pas % 2 == 0, "N=%u: %u <-> %u", n, act, pas);
            ck_assert_msg(edge(n, cases[c].ring, act, pas), "N=%u: %u-%u is no edge", n, act, pas);
            seen[act][pas] = true;
        }
        for (uint32_t a = 1; a < n; a += 2)
            for (uint32_t p = 0; p < n; p += 2)
                ck_assert_msg(seen[a][p] == edge(n, cases[c].ring, a, p), "N=%u: edge %u-%u", n, a,
                              p);
        free(m);
        sim_scenario_destroy(sc);
        harness_cleanup(dir);
    }
}
END_TEST

START_TEST(the_graph_has_the_documented_degrees_at_1024_and_1_workers)
{
    /* 1024: offsets 1, 3, 5, 9, ..., 513 (m up to 9), all distinct mod 1024 in both
     * directions: 20 neighbours each. A lone worker is passive, has none, and trains. */
    const char *big[] = { "workers=1024", "stop.time_s=0.015" };
    sim_scenario *sc = harness_load_file(graph_json, big, 2);
    char *dir = harness_tmpdir("adpsgd");
    harness_run(sc, dir, NULL, NULL);
    ck_assert_double_eq(report(dir, "min_active_degree"), 20);
    ck_assert_double_eq(report(dir, "max_passive_degree"), 20);
    ck_assert_double_eq(report(dir, "exchanges"), report(dir, "cross_parity_exchanges"));
    sim_scenario_destroy(sc);
    harness_cleanup(dir);
    const char *one[] = { "workers=1", "compute.jitter_sigma=0" };
    sc = harness_load_file(graph_json, one, 2);
    dir = harness_tmpdir("adpsgd");
    sim_run_summary sum = harness_run(sc, dir, NULL, NULL);
    ck_assert_uint_eq(sum.iterations, 200);
    ck_assert_double_eq(report(dir, "exchanges"), 0);
    ck_assert_double_eq(report(dir, "max_passive_degree"), 0);
    sim_scenario_destroy(sc);
    harness_cleanup(dir);
}
END_TEST

/* ---- throughput and stalls ---- */

static double iterations_with(const char *straggler, double *compute_min)
{
    /* Messages of 20 MB at 10 Gbit/s take 16 ms, longer than an iteration: communication
     * is the bottleneck, yet no worker ever stops computing. */
    const char *sets[] = {
        "compute.jitter_sigma=0.1", "compute.speeds=[1]",     "workload.message_bytes=20000000",
        "workload.lr=0.05",         "workload.init=\"same\"", "stop.time_s=2",
        "eval.every_s=1",           "output.events=false",    straggler
    };
    sim_scenario *sc = harness_load_file(avg_json, sets, straggler != NULL ? 9 : 8);
    char *dir = harness_tmpdir("adpsgd");
    sim_run_summary sum = harness_run(sc, dir, NULL, NULL);
    ck_assert_double_gt(report(dir, "mean_exchange_s"), 0.01);
    char *w = harness_slurp(dir, "workers.csv");
    *compute_min = INFINITY;
    for (char *line = strchr(w, '\n'); line != NULL && line[1] != '\0';
         line = strchr(line + 1, '\n')) {
        unsigned id, it, samples;
        double speed, comp;
        ck_assert_int_eq(sscanf(line + 1, "%u,%lf,%u,%u,%lf", &id, &speed, &it, &samples, &comp),
                         5);
        *compute_min = fmin(*compute_min, comp);
    }
    free(w);
    sim_scenario_destroy(sc);
    harness_cleanup(dir);
    return (double)sum.iterations;
}

START_TEST(a_four_times_slower_worker_costs_only_its_share_of_throughput)
{
    /* Expected ratio (15 + 1/4) / 16 = 1 - (1 - 1/4) / 16 = 0.953125. Counts are renewal
     * counts: about 200 per fast worker with jitter of relative sd 0.1, so sd 0.1 sqrt(200)
     * = 1.4 per worker and 5.7 over 16 (0.18% of 3200), 0.25% on the ratio; the iteration
     * cut off by the stop shifts each count by under 1 (0.5% at most, mostly cancelling in
     * the ratio). A tolerance of 0.015 is over 4 of those, and far from the 0.75 drop of a
     * protocol that waits for its slowest worker. */
    double cmin0, cmin1;
    double base = iterations_with(NULL, &cmin0);
    double slow = iterations_with(
        "stragglers=[{\"kind\": \"fixed\", \"workers\": [5], \"slowdown\": 4}]", &cmin1);
    ck_assert_double_eq_tol(base, 3200, 40);
    ck_assert_double_eq_tol(slow / base, 1.0 - 0.75 / 16, 0.015);
    /* Every worker computed all the time (times are whole ns summed exactly). */
    ck_assert_double_eq_tol(cmin0, 2.0, 1e-12);
    ck_assert_double_eq_tol(cmin1, 2.0, 1e-12);
}
END_TEST

START_TEST(randomized_runs_with_stragglers_and_failures_never_stall)
{
    /* 20 seeds: 6 to 21 workers, random speeds, random and fixed stragglers, a slow link,
     * 2 MB messages (an exchange takes about 3.3 ms, so requests queue), and failures: two
     * long ones and one for good, each containing an evaluation (every second), and in every
     * second a short one (1 to 50 ms, over by mid-second) at a random time, which catches
     * exchanges in progress. At most two workers are down at once and an active worker has
     * at least 3 neighbours, so it always has a live one. An iteration lasts at most
     * 10 ms / 0.6 * 4 * 3 = 200 ms before jitter (0.2: a factor 2 is 3.5 sigma), so an
     * active worker up at two consecutive evaluations finished gradients at least 0.3 s
     * before the second, each followed by an exchange within a few timeouts (26 ms or more
     * each). A waits-for cycle would leave exchanges open longer than max_wait_s allows (open
     * ones count), and a passive worker stuck serving would show in max_serve_s; with lr > 0
     * an active worker's model changes at each of its gradients and commits, so a worker that
     * stopped would be frozen between evaluations. */
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    double stale = 0, timeouts = 0;
    for (unsigned seed = 1; seed <= 20; seed++) {
        gsl_rng_set(r, 9000 + seed);
        uint32_t n = 6 + (uint32_t)gsl_rng_uniform_int(r, 16);
        char speeds[512] = "compute.speeds=[";
        for (uint32_t w = 0; w < n; w++)
            snprintf(speeds + strlen(speeds), sizeof(speeds) - strlen(speeds), "%s%.3f",
                     w > 0 ? ", " : "", 0.6 + 1.4 * gsl_rng_uniform(r));
        strcat(speeds, "]");
        uint32_t f1 = (uint32_t)gsl_rng_uniform_int(r, n), f2 = (f1 + 1) % n;
        uint32_t f3 = (f1 + 2 + (uint32_t)gsl_rng_uniform_int(r, n - 2)) % n;
        char strag[2048], nstr[32], seedstr[32];
        double p_random = 0.05 + 0.2 * gsl_rng_uniform(r);
        unsigned slow = 2 + (unsigned)gsl_rng_uniform_int(r, 3);
        int len = snprintf(
            strag, sizeof(strag),
            "stragglers=[{\"kind\": \"random\", \"probability\": %.2f, \"slowdown\": 3},"
            " {\"kind\": \"fixed\", \"count\": 1, \"slowdown\": %u},"
            " {\"kind\": \"link\", \"count\": 1, \"extra_latency_ms\": 0.2, "
            "\"bandwidth_factor\": 0.5},"
            " {\"kind\": \"failure\", \"workers\": [%u], \"at_s\": 0.8, \"recover_s\": 1.3},"
            " {\"kind\": \"failure\", \"workers\": [%u], \"at_s\": 2.7, \"recover_s\": 3.3},"
            " {\"kind\": \"failure\", \"workers\": [%u], \"at_s\": 3.8}",
            p_random, slow, f1, f2, f3);
        for (unsigned k = 0; k < 5; k++) {
            double at = k + 0.05 + 0.4 * gsl_rng_uniform(r), d = 0.001 + 0.049 * gsl_rng_uniform(r);
            unsigned who = (unsigned)gsl_rng_uniform_int(r, n);
            len += snprintf(strag + len, sizeof(strag) - (size_t)len,
                            ", {\"kind\": \"failure\", \"workers\": [%u], \"at_s\": %.6f, "
                            "\"recover_s\": %.6f}",
                            who, at, at + d);
        }
        snprintf(strag + len, sizeof(strag) - (size_t)len, "]");
        snprintf(nstr, sizeof(nstr), "workers=%u", n);
        snprintf(seedstr, sizeof(seedstr), "seed=%u", seed);
        const char *sets[] = { nstr,
                               seedstr,
                               speeds,
                               strag,
                               "workload.lr=0.05",
                               "workload.message_bytes=2000000",
                               "stop.time_s=5",
                               "eval.every_s=1",
                               "output.events=false" };
        sim_scenario *sc = harness_load_file(avg_json, sets, 9);
        char *dir = harness_tmpdir("adpsgd");
        probe pr = { 0 };
        sim_run_summary sum = harness_run(sc, dir, observe, &pr);
        ck_assert_str_eq(sum.stop_reason, "time");
        ck_assert_double_ge(report(dir, "min_active_degree"), 3);
        ck_assert_double_lt(report(dir, "max_wait_s"), 0.3);
        ck_assert_double_lt(report(dir, "max_serve_s"), 0.01); /* a reply takes < 4 ms */
        stale += report(dir, "stale_replies") + report(dir, "stale_requests");
        timeouts += report(dir, "timeouts");
        ck_assert_uint_eq(pr.k, 7); /* 0, 1, ..., 5 s and the end, at 5 s again */
        for (size_t k = 1; k < pr.k; k++)
            for (uint32_t a = 1; a < n && pr.t[k] > pr.t[k - 1]; a += 2)
                if (!pr.down[k - 1][a] && !pr.down[k][a])
                    ck_assert_msg(pr.fnv[k][a] != pr.fnv[k - 1][a],
                                  "seed %u: worker %u stuck between evaluations %zu and %zu", seed,
                                  a, k - 1, k);
        free(pr.sum0);
        sim_scenario_destroy(sc);
        harness_cleanup(dir);
    }
    /* The failure paths were taken. */
    ck_assert_double_gt(stale, 0);
    ck_assert_double_gt(timeouts, 100);
    gsl_rng_free(r);
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
        harness_expect_rejected_file(pair_json, sets, 1, cases[c].path, cases[c].msg);
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
        sim_scenario *sc = harness_load_file(avg_json, more, i < 2 ? 5 : 6);
        dirs[i] = harness_tmpdir("adpsgd");
        harness_run(sc, dirs[i], NULL, NULL);
        sim_scenario_destroy(sc);
    }
    const char *names[] = { "metrics.csv", "workers.csv", "run.json", "events.csv",
                            "summary.json" };
    for (size_t k = 0; k < 5; k++) {
        char *a = harness_slurp(dirs[0], names[k]), *b = harness_slurp(dirs[1], names[k]);
        if (k == 4) {
            harness_strip_wall(a);
            harness_strip_wall(b);
        }
        ck_assert_msg(strcmp(a, b) == 0, "%s differs", names[k]);
        free(a);
        free(b);
    }
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
    harness_run(sc, dir, observe, &pr);
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
    TCase *timing = tcase_create("timing");
    tcase_add_test(timing, two_workers_exchange_in_two_transfers_worked_out_by_hand);
    tcase_add_test(timing, requests_to_a_failed_passive_time_out_until_it_recovers);
    tcase_add_test(timing, a_passive_serving_a_failed_active_serves_the_next_one);
    tcase_add_test(timing, an_iteration_that_starts_during_an_exchange_gets_its_own_at_the_commit);
    tcase_add_test(timing, a_timed_out_request_is_retried_with_another_neighbour);
    tcase_add_test(timing, timing_only_runs_send_the_same_messages_as_real_ones);
    tcase_set_timeout(timing, 60);
    suite_add_tcase(s, timing);
    TCase *graphs = tcase_create("graph");
    tcase_add_test(graphs, every_exchange_joins_an_odd_active_and_an_even_passive_neighbour);
    tcase_add_test(graphs, the_graph_has_the_documented_degrees_at_1024_and_1_workers);
    tcase_set_timeout(graphs, 120);
    suite_add_tcase(s, graphs);
    TCase *robust = tcase_create("robustness");
    tcase_add_test(robust, a_four_times_slower_worker_costs_only_its_share_of_throughput);
    tcase_add_test(robust, randomized_runs_with_stragglers_and_failures_never_stall);
    tcase_set_timeout(robust, 300);
    suite_add_tcase(s, robust);
    TCase *cfg = tcase_create("configuration");
    tcase_add_test(cfg, bad_parameters_are_rejected_with_their_path);
    tcase_add_test(cfg, the_same_scenario_and_seed_give_byte_identical_outputs);
    tcase_add_test(cfg, the_example_scenarios_load_and_pass_their_checks);
    tcase_set_timeout(cfg, 60);
    suite_add_tcase(s, cfg);
    return s;
}
