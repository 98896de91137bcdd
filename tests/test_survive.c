/* Every protocol (each registered one, with its main variants) survives every failure pattern
 * and dropout rate on 1, 2 and 3 workers: timing-only, with a real model (synthetic softmax)
 * and averaging only (vector). A run either is refused cleanly by the loader or the checks
 * (SIM_ESCENARIO naming a JSON path: exit 2 for the command) or runs to its end; a crash, a
 * sanitizer report or a failed run fails the test. The progress rule: while a worker is up the
 * run does not stall, and a worker that is up for the second half of the run makes progress in
 * it; when every worker is down for good the run stops as stalled (runtime/run.c's stall rule)
 * at the last failure, at the same time and with the same samples whatever eval.every_s. Every
 * protocol follows the same rule when a peer fails while a recovered worker gets its model (the
 * kit's rejoin service: rejoin_admit, rejoin_serve; and the others' own rejoins). The protocols
 * are the registry's (harness_protocol), each at its defaults, then the variants below. Short
 * runs (2 simulated seconds) so that the whole matrix stays fast under ASan + UBSan. */
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "harness.h"
#include "runtime/ctx.h"
#include "runtime/proto.h"
#include "runtime/run.h"
#include "scenario/scenario.h"

#define MAX_W   6
#define HALF_NS 1000000000LL /* failures and recoveries all happen before 1 s of 2 */

/* The variants run: every registered protocol at its defaults (the registry's list, with one
 * server host: harness_protocol), then the variants below. '@' in the JSON stands for the
 * number of workers. The parameter server's shards and Ripples' group
 * generator live on a server host (a failure rule may not take down the generator's host);
 * shards colocated on workers (syncswitch's default) move to a live worker once their host
 * has been down for `failover_s` (1 s); with failover_s 0 they stall, as documented, while
 * a shard's host is down: `host_stall`. */
typedef struct variant {
    const char *json;
    unsigned servers;
    bool host_stall;
    bool rounds; /* averaging alone: no iterations, and a round count must end the run */
} variant;

static const variant variants[] = {
    { "{\"name\": \"allreduce\", \"algorithm\": \"tree\"}", 0, false, false },
    { "{\"name\": \"allreduce\", \"algorithm\": \"hierarchical\"}", 0, false, false },
    { "{\"name\": \"allreduce\", \"algorithm\": \"halving_doubling\"}", 0, false, false },
    { "{\"name\": \"localsgd\", \"local_steps\": 1}", 0, false, false },
    { "{\"name\": \"easgd\", \"tau\": 1, \"beta\": 0.3}", 1, false, false },
    { "{\"name\": \"dpsgd\", \"graph\": \"torus\"}", 0, false, false },
    { "{\"name\": \"dpsgd\", \"graph\": \"exponential\"}", 0, false, false },
    { "{\"name\": \"dpsgd\", \"graph\": \"complete\", \"weights\": \"uniform\"}", 0, false, false },
    { "{\"name\": \"dpsgd\", \"graph\": \"star\"}", 0, false, false },
    { "{\"name\": \"ps\", \"mode\": \"asp\"}", 1, false, false },
    { "{\"name\": \"ps\", \"mode\": \"ssp\", \"staleness\": 1}", 1, false, false },
    { "{\"name\": \"ps\", \"mode\": \"bsp\", \"placement\": \"colocated\", \"shards\": 1}", 0,
      false, false },
    { "{\"name\": \"ps\", \"mode\": \"bsp\", \"placement\": \"colocated\", \"failover_s\": 0}", 0,
      true, false },
    { "{\"name\": \"ps\", \"mode\": \"asp\", \"shards\": 2}", 2, false, false },
    { "{\"name\": \"adpsgd\", \"graph\": \"ring\"}", 0, false, false },
    { "{\"name\": \"syncswitch\", \"placement\": \"servers\"}", 1, false, false },
    { "{\"name\": \"syncswitch\", \"bsp_fraction\": 0.5, \"order\": \"asp_first\", "
      "\"placement\": \"servers\"}",
      1, false, false },
    { "{\"name\": \"syncswitch\", \"bsp_fraction\": 1, \"placement\": \"colocated\"}", 0, false,
      false },
    { "{\"name\": \"hop\", \"skip\": true}", 0, false, false },
    { "{\"name\": \"hop\", \"graph\": \"directed_exponential\", \"backup_workers\": 0}", 0, false,
      false },
    { "{\"name\": \"hop\", \"graph\": \"complete\", \"staleness\": 1, \"max_iteration_gap\": 0}", 0,
      false, false },
    { "{\"name\": \"hpsgd\", \"flush\": \"newest\"}", 0, false, false },
    { "{\"name\": \"ripples\", \"groups\": \"random\"}", 1, false, false },
    { "{\"name\": \"ripples\", \"groups\": \"buffer\"}", 1, false, false },
    { "{\"name\": \"ripples\", \"groups\": \"division\"}", 1, false, false },
    { "{\"name\": \"ripples\", \"groups\": \"division\", \"busy\": \"skip\"}", 1, false, false },
    { "{\"name\": \"moshpit\", \"grid\": [2, 2]}", 0, false, false },
    { "{\"name\": \"moshpit\", \"grid\": [2, 2], \"local_steps\": 0}", 0, false, true },
    { "{\"name\": \"moshpit\", \"groups\": \"random\", \"group_size\": 2}", 0, false, false },
    { "{\"name\": \"moshpit\", \"groups\": \"random\", \"local_steps\": 0}", 0, false, true },
    { "{\"name\": \"moshpit\", \"grid\": [2, 2], \"form\": \"keys\", \"matchmaking_ms\": 200}", 0,
      false, false },
    { "{\"name\": \"moshpit\", \"grid\": [2, 2], \"form\": \"keys\", \"matchmaking_ms\": 200, "
      "\"sync\": false, \"overlap\": false}",
      0, false, false },
    { "{\"name\": \"moshpit\", \"grid\": [2, 2], \"matchmaking_ms\": 30, \"merge\": \"replace\"}",
      0, false, false },
    { "{\"name\": \"sgp\", \"peers\": 2}", 0, false, false },
    { "{\"name\": \"ripples\", \"groups\": \"static\", \"grid\": [@]}", 1, false, false },
    { "{\"name\": \"ps\", \"mode\": \"ssp\", \"placement\": \"colocated\"}", 0, false, false },
    { "{\"name\": \"ripples\", \"group_size\": 2}", 1, false, false },
    { "{\"name\": \"diloco\", \"local_steps\": 1, \"outer_nesterov\": false}", 0, false, false },
    { "{\"name\": \"diloco\", \"local_steps\": 3, \"outer_lr\": 1, \"outer_momentum\": 0}", 0,
      false, false },
};
#define NVARIANTS (sizeof(variants) / sizeof(variants[0]))

enum {
    M_NONE,
    M_SOFTMAX,
    M_VECTOR,
    NMODELS
};

static const char *const models[NMODELS] = {
    [M_NONE] = "{\"model\": {\"name\": \"none\"}, \"message_bytes\": 40000}",
    [M_SOFTMAX] = "{\"dataset\": {\"name\": \"synthetic\", \"samples\": 240, \"dim\": 4,"
                  " \"classes\": 2}, \"model\": {\"name\": \"softmax\"}, \"batch\": 4}",
    [M_VECTOR] = "{\"model\": {\"name\": \"vector\", \"dim\": 4}}",
};

/* The protocols whose averaging-only form dropout rules act on (docs/scenario.md), the only
 * ones that draw them (sim_ctx_dropped). */
static const char *const averaging_protocols[] = { "\"allreduce\"", "\"gossip\"", "\"moshpit\"",
                                                   "\"sgp\"" };

/* Failure patterns and dropout rates: what goes down when. */
enum {
    P_ONE,          /* the last worker fails for good */
    P_ONE_RECOVERS, /* the last worker fails and recovers */
    P_ALL_BUT_ONE,  /* workers 1 .. n-1 fail one after another */
    P_ALL,          /* every worker fails, one after another */
    P_ALL_AT_ONCE,  /* every worker fails at the same time and comes back */
    P_AT_ZERO,      /* worker 0 is down from time 0, for good */
    P_AT_ZERO_BACK, /* worker 0 is down from time 0 and recovers */
    P_TURNS,        /* every worker in turn fails and recovers */
    P_DROP_0,       /* dropout rules */
    P_DROP_03,
    P_DROP_05,
    P_DROP_1,
    P_DROP_FAIL, /* dropout 0.5 and a failure with recovery */
    NPATTERNS
};

static const char *const pattern_names[NPATTERNS] = {
    "one",   "one_recovers", "all_but_one", "all",     "all_at_once", "at_zero",   "at_zero_back",
    "turns", "drop0",        "drop0.3",     "drop0.5", "drop1",       "drop_fail",
};

/* The stragglers array of pattern p on n workers into buf; sets up[w] to whether worker w is
 * up for the whole second half of the run. */
static void stragglers(char *buf, size_t size, int p, uint32_t n, bool *up)
{
    size_t len = 0;
#define ADD(...) (len += (size_t)snprintf(buf + len, size - len, __VA_ARGS__))
    ADD("[");
    for (uint32_t w = 0; w < n; w++)
        up[w] = true;
    switch (p) {
    case P_ONE:
        ADD("{\"kind\": \"failure\", \"workers\": [%u], \"at_s\": 0.3}", n - 1);
        up[n - 1] = false;
        break;
    case P_ONE_RECOVERS:
        ADD("{\"kind\": \"failure\", \"workers\": [%u], \"at_s\": 0.3, \"recover_s\": 0.7}", n - 1);
        break;
    case P_ALL_BUT_ONE:
    case P_ALL:
        for (uint32_t w = p == P_ALL ? 0 : 1; w < n; w++) {
            ADD("%s{\"kind\": \"failure\", \"workers\": [%u], \"at_s\": %.2f}", len > 1 ? "," : "",
                w, 0.2 + 0.2 * w);
            up[w] = false;
        }
        break;
    case P_ALL_AT_ONCE:
        ADD("{\"kind\": \"failure\", \"at_s\": 0.25, \"recover_s\": 0.6}");
        break;
    case P_AT_ZERO:
        ADD("{\"kind\": \"failure\", \"workers\": [0], \"at_s\": 0}");
        up[0] = false;
        break;
    case P_AT_ZERO_BACK:
        ADD("{\"kind\": \"failure\", \"workers\": [0], \"at_s\": 0, \"recover_s\": 0.5}");
        break;
    case P_TURNS:
        for (uint32_t w = 0; w < n; w++)
            ADD("%s{\"kind\": \"failure\", \"workers\": [%u], \"at_s\": %.2f, \"recover_s\": "
                "%.2f}",
                w > 0 ? "," : "", w, 0.1 + 0.25 * w, 0.25 + 0.25 * w);
        break;
    case P_DROP_0:
    case P_DROP_03:
    case P_DROP_05:
    case P_DROP_1: {
        const double prob[] = { 0.0, 0.3, 0.5, 1.0 };
        ADD("{\"kind\": \"dropout\", \"probability\": %g}", prob[p - P_DROP_0]);
        break;
    }
    case P_DROP_FAIL:
        ADD("{\"kind\": \"dropout\", \"probability\": 0.5},"
            "{\"kind\": \"failure\", \"workers\": [0], \"at_s\": 0.2, \"recover_s\": 0.4}");
        break;
    default:
        break;
    }
    ADD("]");
#undef ADD
}

typedef struct progress {
    uint32_t n;
    sim_time half; /* at_half: the iterations at the last evaluation at or before this */
    uint64_t at_half[MAX_W], at_end[MAX_W];
} progress;

static void observe(void *ud, sim_ctx *ctx)
{
    progress *pr = ud;
    for (uint32_t w = 0; w < pr->n; w++) {
        if (sim_ctx_now(ctx) <= pr->half)
            pr->at_half[w] = sim_ctx_count(ctx, w, 0);
        pr->at_end[w] = sim_ctx_count(ctx, w, 0);
    }
}

typedef struct tally {
    unsigned runs, refused;
} tally;

/* A refusal must be the loader's or the checks' clean one: a scenario error naming a path. */
static void expect_clean_refusal(int rc, const sim_err *err, const char *json)
{
    if (getenv("HETSIM_SURVIVE_VERBOSE") != NULL)
        printf("refused: %s: %s\n", err->path, err->msg);
    ck_assert_msg(rc == SIM_ESCENARIO && err->msg[0] != '\0',
                  "refused with code %d, not as a scenario error: %s: %s\n%s", rc, err->path,
                  err->msg, json);
}

/* The variant's JSON with '@' replaced by n. */
static void protocol_json(char *buf, size_t size, const char *json, uint32_t n)
{
    size_t len = 0;
    for (const char *c = json; *c != '\0' && len + 12 < size; c++)
        if (*c == '@')
            len += (size_t)snprintf(buf + len, size - len, "%u", n);
        else
            buf[len++] = *c;
    buf[len] = '\0';
}

/* A run of `json` (run_one's) with eval.every_s 1.7 instead of 0.25: its summary. */
static sim_run_summary run_every(const char *json)
{
    const char *sets[] = { "eval.every_s=1.7" };
    sim_scenario *sc = harness_load(json, "survive.json", sets, 1);
    char *dir = harness_tmpdir("survive");
    sim_run_summary sum = harness_run(sc, dir, NULL, NULL);
    harness_cleanup(dir);
    sim_scenario_destroy(sc);
    return sum;
}

/* P_ALL, every worker down for good, the last at 0.2 n s: the run stops as stalled then (shards
 * on a failed host that no live worker takes over, host_stall, or averaging alone with no
 * group to form may stall it earlier), and at the same time with the same samples when
 * evaluations are 1.7 s apart. */
static void expect_stall(const variant *v, uint32_t n, const char *json, const sim_run_summary *sum)
{
    sim_time last = 200000000LL * n;
    if (v->rounds && strcmp(sum->stop_reason, "rounds") == 0)
        return;
    ck_assert_msg(strcmp(sum->stop_reason, "stalled") == 0,
                  "%u workers: stopped (%s), not stalled\n%s", n, sum->stop_reason, json);
    bool early = v->host_stall || v->rounds; /* as may_stall in run_one */
    ck_assert_msg(sum->sim_ns == last || (early && sum->sim_ns < last),
                  "%u workers: stalled at %" PRId64 " ns, the last failure is at %" PRId64 "\n%s",
                  n, (int64_t)sum->sim_ns, (int64_t)last, json);
    sim_run_summary other = run_every(json);
    ck_assert_str_eq(other.stop_reason, "stalled");
    ck_assert_int_eq(other.sim_ns, sum->sim_ns);
    ck_assert_uint_eq(other.samples, sum->samples);
}

static void run_one(const variant *v, uint32_t n, int model, int pat, tally *t)
{
    char strag[1024], protocol[256], json[4096];
    bool up[MAX_W];
    stragglers(strag, sizeof(strag), pat, n, up);
    protocol_json(protocol, sizeof(protocol), v->json, n);
    snprintf(json, sizeof(json),
             "{\"seed\": %u, \"workers\": %u, \"servers\": %u,"
             " \"compute\": {\"iteration_ms\": 40, \"jitter_sigma\": 0.1},"
             " \"network\": {\"bandwidth_gbps\": 10, \"latency_us\": 20},"
             " \"workload\": %s, \"protocol\": %s, \"stragglers\": %s,"
             " \"stop\": {\"time_s\": 2%s}, \"eval\": {\"every_s\": 0.25, \"samples\": 40}}",
             7 + 31 * (unsigned)pat + n, n, v->servers, models[model], protocol, strag,
             v->rounds ? ", \"rounds\": 400" : "");
    sim_err err;
    sim_err_clear(&err);
    sim_scenario *sc = sim_scenario_parse(json, strlen(json), "survive.json", NULL, 0, &err);
    if (sc == NULL) {
        expect_clean_refusal(err.code, &err, json);
        t->refused++;
        return;
    }
    int rc = harness_check(sc, &err);
    if (rc != SIM_OK) {
        expect_clean_refusal(rc, &err, json);
        t->refused++;
        sim_scenario_destroy(sc);
        return;
    }
    char *dir = harness_tmpdir("survive");
    progress pr = { .n = n, .half = HALF_NS };
    sim_run_options opt = { .out_dir = dir, .observe = observe, .observe_ud = &pr };
    sim_run_summary sum;
    rc = sim_run(sc, proto_find(sc->protocol), &opt, &sum, &err);
    ck_assert_msg(rc == SIM_OK, "%s, %u workers: the run failed (%d): %s: %s\n%s",
                  pattern_names[pat], n, rc, err.path, err.msg, json);
    bool any_up = false, lost = false;
    for (uint32_t w = 0; w < n; w++) {
        any_up = any_up || up[w];
        lost = lost || !up[w];
    }
    /* Shards on a worker that never comes back: the documented stall; and averaging alone
     * where no round can form a group until a recovery (one live worker, or live workers on no
     * common line of the grid), whose rounds repeated at one instant, changing nothing, until
     * the round count (docs/scenario.md). */
    bool may_stall = (v->host_stall && lost) || v->rounds;
    if (any_up && !may_stall)
        ck_assert_msg(strcmp(sum.stop_reason, "time") == 0 ||
                          (v->rounds && strcmp(sum.stop_reason, "rounds") == 0),
                      "%s, %u workers: stopped (%s) with a worker up\n%s", pattern_names[pat], n,
                      sum.stop_reason, json);
    for (uint32_t w = 0; w < n && !may_stall && !v->rounds; w++)
        ck_assert_msg(!up[w] || pr.at_end[w] > pr.at_half[w],
                      "%s, %u workers: worker %u, up, made no progress in the second half (%" PRIu64
                      " iterations)\n%s",
                      pattern_names[pat], n, w, pr.at_end[w], json);
    if (pat == P_ALL)
        expect_stall(v, n, json, &sum);
    harness_cleanup(dir);
    sim_scenario_destroy(sc);
    t->runs++;
}

START_TEST(every_variant_survives_every_failure_pattern)
{
    char json[128];
    variant dv = { json, HARNESS_PROTOCOL_SERVERS, false, false }; /* a registered one's defaults */
    size_t nreg = harness_protocols(), i = (size_t)_i;
    if (i < nreg)
        harness_protocol(i, json, sizeof(json));
    const variant *v = i < nreg ? &dv : &variants[i - nreg];
    const char *only = getenv("HETSIM_SURVIVE_ONLY"); /* debugging: the variants naming it */
    if (only != NULL && strstr(v->json, only) == NULL)
        return;
    tally t = { 0, 0 };
    /* Averaging alone (vector) where the protocol has that form (PROTOCOLS 1.5). */
    bool averaging = false;
    for (size_t a = 0; a < sizeof(averaging_protocols) / sizeof(averaging_protocols[0]); a++)
        averaging = averaging || strstr(v->json, averaging_protocols[a]) != NULL;
    for (uint32_t n = 1; n <= 3; n++)
        for (int model = 0; model < (averaging ? NMODELS : M_VECTOR); model++)
            for (int pat = 0; pat < NPATTERNS; pat++)
                /* Dropout rules are drawn only by the averaging protocols: the others run
                 * one rate, which they must accept and ignore. */
                if (averaging || pat < P_DROP_0 || pat == P_DROP_05)
                    run_one(v, n, model, pat, &t);
    if (getenv("HETSIM_SURVIVE_VERBOSE") != NULL)
        printf("%s: %u runs, %u refused\n", v->json, t.runs, t.refused);
    /* Every variant runs somewhere: a matrix of refusals would test nothing. */
    ck_assert_msg(t.runs > 0, "%s: every scenario refused", v->json);
}
END_TEST

/* Issue reproductions: allreduce with a real model aborted (blk_take: no unused block) once
 * failures left one live worker: 2 workers, worker 1 down at 1 s, for good or recovering;
 * 3, 4 and 6 workers failing one after another. The survivor trains on alone (and learns:
 * the synthetic set is separable), a recovered worker rejoins and counts iterations again. */
START_TEST(allreduce_trains_on_when_failures_leave_one_worker)
{
    const struct {
        uint32_t n;
        bool recover;
    } cases[] = {
        { 2, false }, { 2, true }, { 3, false }, { 4, false }, { 6, false }, { 6, true }
    };
    for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
        uint32_t n = cases[c].n;
        char strag[1024] = "", json[2048];
        size_t len = 0;
        for (uint32_t w = 1; w < n; w++) /* worker w down at 1 + (w - 1) / 4 s */
            len += (size_t)snprintf(
                strag + len, sizeof(strag) - len,
                "%s{\"kind\": \"failure\", \"workers\": [%u], \"at_s\": %.2f%s}", w > 1 ? "," : "",
                w, 1.0 + 0.25 * (w - 1), cases[c].recover ? ", \"recover_s\": 2.5" : "");
        snprintf(json, sizeof(json),
                 "{\"seed\": 1, \"workers\": %u, \"workload\": {\"dataset\": {\"name\":"
                 " \"synthetic\", \"samples\": 1000, \"dim\": 4, \"classes\": 2},"
                 " \"model\": {\"name\": \"softmax\"}}, \"protocol\": {\"name\": \"allreduce\"},"
                 " \"stragglers\": [%s], \"stop\": {\"time_s\": 4}, \"eval\": {\"every_s\": 0.5}}",
                 n, strag);
        sim_scenario *sc = harness_load(json, "allreduce-one-left.json", NULL, 0);
        progress pr = { .n = n, .half = 2500000000LL }; /* every failure is over */
        char *dir = harness_tmpdir("survive");
        sim_run_summary sum = harness_run(sc, dir, observe, &pr);
        ck_assert_str_eq(sum.stop_reason, "time");
        /* Worker 0, alone from 1 + (n - 2) / 4 <= 2.25 s, goes on after 2.5 s. */
        ck_assert_msg(pr.at_end[0] > pr.at_half[0] + 5, "%u workers: worker 0 stopped at %" PRIu64,
                      n, pr.at_end[0]);
        for (uint32_t w = 1; w < n && cases[c].recover; w++)
            ck_assert_msg(pr.at_end[w] > pr.at_half[w], "%u workers: worker %u did not rejoin", n,
                          w);
        ck_assert_double_gt(harness_summary_number(dir, "final_accuracy"), 0.8);
        harness_cleanup(dir);
        sim_scenario_destroy(sc);
    }
}
END_TEST

/* Every registered protocol at its defaults (one server host), then these variants of those
 * that admit a recovered worker with a peer's model through the kit's rejoin service
 * (rejoin_admit: hpsgd's coordinator sends the global model, diloco's member that completed a
 * round last its global model; rejoin_serve: dpsgd's neighbour furthest ahead answers, hop's
 * every one). */
static const char *const admitting[] = {
    "{\"name\": \"hpsgd\", \"flush\": \"newest\"}",
    "{\"name\": \"hop\", \"skip\": true}",
};
#define NADMITTING (sizeof(admitting) / sizeof(admitting[0]))

/* Issue 38: hpsgd's survivors stopped for good when the coordinator failed while it sent the
 * global model to an admitted worker (the model was lost with it and never sent again). Three
 * workers; worker 2 is down from 0.1 to 0.2 s and then admitted or fetches; worker f (0 or 1)
 * fails for good at 0.2 + 0.004 k s, k = 0..49, some of them while the model (25 MB: 20 ms at
 * 10 Gb/s) is on its way from it. The progress rule: the run goes on to its end, and workers 2
 * and 1 - f, up in the second half, make progress in it. */
START_TEST(a_peer_failing_while_a_recovered_worker_gets_its_model_stalls_nobody)
{
    char def[128];
    size_t nreg = harness_protocols(), i = (size_t)_i;
    const char *proto = def;
    if (i < nreg)
        harness_protocol(i, def, sizeof(def));
    else
        proto = admitting[i - nreg];
    for (uint32_t f = 0; f < 2; f++) {
        for (unsigned k = 0; k < 50; k++) {
            char json[2048];
            snprintf(json, sizeof(json),
                     "{\"seed\": %u, \"workers\": 3, \"servers\": %d,"
                     " \"compute\": {\"iteration_ms\": 40, \"jitter_sigma\": 0.1},"
                     " \"network\": {\"bandwidth_gbps\": 10, \"latency_us\": 20},"
                     " \"workload\": {\"dataset\": {\"name\": \"synthetic\", \"samples\": 240,"
                     " \"dim\": 4, \"classes\": 2}, \"model\": {\"name\": \"softmax\"},"
                     " \"batch\": 4, \"message_bytes\": 25000000}, \"protocol\": %s,"
                     " \"stragglers\": [{\"kind\": \"failure\", \"workers\": [2], \"at_s\": 0.1,"
                     " \"recover_s\": 0.2}, {\"kind\": \"failure\", \"workers\": [%u],"
                     " \"at_s\": %.3f}], \"stop\": {\"time_s\": 2},"
                     " \"eval\": {\"every_s\": 0.25, \"samples\": 40}}",
                     3 + k, HARNESS_PROTOCOL_SERVERS, proto, f, 0.2 + 0.004 * k);
            sim_scenario *sc = harness_load(json, "survive-admit.json", NULL, 0);
            progress pr = { .n = 3, .half = HALF_NS };
            char *dir = harness_tmpdir("survive");
            sim_run_summary sum = harness_run(sc, dir, observe, &pr);
            ck_assert_msg(strcmp(sum.stop_reason, "time") == 0,
                          "stopped (%s) at %" PRId64 " ns\n%s", sum.stop_reason,
                          (int64_t)sum.sim_ns, json);
            for (uint32_t w = 1 - f; w <= 2; w += 1 + f)
                ck_assert_msg(pr.at_end[w] > pr.at_half[w],
                              "worker %u made no progress in the second half\n%s", w, json);
            harness_cleanup(dir);
            sim_scenario_destroy(sc);
        }
    }
}
END_TEST

/* Issue 38, sixth probe: new timings of failures during an admission, on four workers. Worker 2
 * fails twice (down from 0.1 to 0.2 s, then again 0.005 k s after its recovery, back at 0.5 s);
 * workers 2 and 3 come back at once while worker 0 fails for good; worker 0 fails while worker 2
 * gets its model and comes back at 0.6 s. syncswitch, colocated, counted worker 2 out of the
 * drain's round twice when it failed again before the resume (it had rejoined as a holder): a
 * round closed before the last gradient of it arrived ("ps: a gradient for a round not open"). The
 * progress rule as above, for the workers up in the second half. */
#define NTWICE 3

/* Failure rules of pattern p (0 to NTWICE - 1) above, the second failure at `at` s, into buf. */
static void twice_rules(char *buf, size_t size, unsigned p, double at)
{
    if (p == 0)
        snprintf(buf, size,
                 "{\"kind\": \"failure\", \"workers\": [2], \"at_s\": 0.1, \"recover_s\": 0.2},"
                 " {\"kind\": \"failure\", \"workers\": [2], \"at_s\": %.3f, \"recover_s\": 0.5}",
                 at);
    else if (p == 1)
        snprintf(buf, size,
                 "{\"kind\": \"failure\", \"workers\": [2, 3], \"at_s\": 0.1, \"recover_s\": 0.2},"
                 " {\"kind\": \"failure\", \"workers\": [0], \"at_s\": %.3f}",
                 at);
    else
        snprintf(buf, size,
                 "{\"kind\": \"failure\", \"workers\": [2], \"at_s\": 0.1, \"recover_s\": 0.2},"
                 " {\"kind\": \"failure\", \"workers\": [0], \"at_s\": %.3f, \"recover_s\": 0.6}",
                 at);
}

START_TEST(a_worker_failing_twice_or_two_admitted_at_once_stalls_nobody)
{
    char def[128];
    size_t nreg = harness_protocols(), i = (size_t)_i;
    const char *proto = def;
    if (i < nreg)
        harness_protocol(i, def, sizeof(def));
    else
        proto = admitting[i - nreg];
    for (unsigned p = 0; p < NTWICE; p++) {
        for (unsigned k = 0; k < 4; k++) {
            char rules[512], json[2048];
            twice_rules(rules, sizeof(rules), p, 0.2 + 0.005 * k);
            snprintf(json, sizeof(json),
                     "{\"seed\": %u, \"workers\": 4, \"servers\": %d,"
                     " \"compute\": {\"iteration_ms\": 40, \"jitter_sigma\": 0.1},"
                     " \"network\": {\"bandwidth_gbps\": 10, \"latency_us\": 20},"
                     " \"workload\": {\"dataset\": {\"name\": \"synthetic\", \"samples\": 240,"
                     " \"dim\": 4, \"classes\": 2}, \"model\": {\"name\": \"softmax\"},"
                     " \"batch\": 4, \"message_bytes\": 25000000}, \"protocol\": %s,"
                     " \"stragglers\": [%s], \"stop\": {\"time_s\": 2},"
                     " \"eval\": {\"every_s\": 0.25, \"samples\": 40}}",
                     3 + k, HARNESS_PROTOCOL_SERVERS, proto, rules);
            sim_scenario *sc = harness_load(json, "survive-twice.json", NULL, 0);
            progress pr = { .n = 4, .half = HALF_NS };
            char *dir = harness_tmpdir("survive");
            sim_run_summary sum = harness_run(sc, dir, observe, &pr);
            ck_assert_msg(strcmp(sum.stop_reason, "time") == 0,
                          "stopped (%s) at %" PRId64 " ns\n%s", sum.stop_reason,
                          (int64_t)sum.sim_ns, json);
            for (uint32_t w = p == 1 ? 1 : 0; w < 4; w++)
                ck_assert_msg(pr.at_end[w] > pr.at_half[w],
                              "worker %u made no progress in the second half\n%s", w, json);
            harness_cleanup(dir);
            sim_scenario_destroy(sc);
        }
    }
}
END_TEST

/* The variants and the averaging protocols name registered protocols (a renamed or removed
 * one would leave them testing nothing). */
START_TEST(every_variant_names_a_registered_protocol)
{
    for (size_t v = 0; v < NVARIANTS; v++)
        harness_expect_registered(variants[v].json);
    for (size_t v = 0; v < NADMITTING; v++)
        harness_expect_registered(admitting[v]);
    for (size_t i = 0; i < sizeof(averaging_protocols) / sizeof(averaging_protocols[0]); i++) {
        char json[64];
        snprintf(json, sizeof(json), "{\"name\": %s}", averaging_protocols[i]);
        harness_expect_registered(json);
    }
}
END_TEST

Suite *test_suite(void)
{
    Suite *s = suite_create("survive");
    TCase *reg = tcase_create("cases");
    tcase_add_test(reg, every_variant_names_a_registered_protocol);
    tcase_add_test(reg, allreduce_trains_on_when_failures_leave_one_worker);
    suite_add_tcase(s, reg);
    TCase *tc = tcase_create("failures");
    tcase_add_loop_test(tc, every_variant_survives_every_failure_pattern, 0,
                        (int)(harness_protocols() + NVARIANTS));
    tcase_set_timeout(tc, 300);
    suite_add_tcase(s, tc);
    TCase *adm = tcase_create("admissions");
    tcase_add_loop_test(adm, a_peer_failing_while_a_recovered_worker_gets_its_model_stalls_nobody,
                        0, (int)(harness_protocols() + NADMITTING));
    tcase_add_loop_test(adm, a_worker_failing_twice_or_two_admitted_at_once_stalls_nobody, 0,
                        (int)(harness_protocols() + NADMITTING));
    tcase_set_timeout(adm, 300);
    suite_add_tcase(s, adm);
    return s;
}
