/* Sync-Switch (protocols/syncswitch.c) through full runs, PROTOCOLS §6.6: samples are conserved
 * across the switch; the ASP learning rate is lr / N (0.8 -> 0.1 for N = 8); BSP phase replicas
 * are bitwise equal; every ASP gradient's staleness equals the server updates between its pull
 * and its push (replayed from events.csv); the ASP phase starts from exactly the BSP model,
 * with the momentum buffer as the policy says. Also: p = 0 and p = 1 are ps ASP and BSP bit
 * for bit, the pause, the online policies' bookkeeping, and bad parameters. Real-model runs use
 * a small synthetic data set, so the suite stays fast. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_rng.h>

#include "harness.h"
#include "runtime/ctx.h"
#include "runtime/run.h"
#include "scenario/scenario.h"
#include "sim/tensor.h"

/* 8 workers (the paper's cluster size), 2 shards on server hosts 8 and 9, an MLP of
 * 20 * 13 + 13 + 13 * 4 + 4 = 329 floats, BSP rate 0.8 with momentum 0.9, a budget of 1200
 * iterations. */
static const char real_json[] =
    "{\"seed\": 2385, \"workers\": 8, \"servers\": 2,"
    " \"compute\": {\"iteration_ms\": 10, \"jitter_sigma\": 0.2},"
    " \"network\": {\"bandwidth_gbps\": 10, \"latency_us\": 20},"
    " \"workload\": {\"dataset\": {\"name\": \"synthetic\", \"samples\": 4000,"
    " \"test_samples\": 500, \"dim\": 20, \"classes\": 4, \"separation\": 4},"
    " \"model\": {\"name\": \"mlp\", \"hidden\": [13]}, \"batch\": 16, \"lr\": 0.8,"
    " \"momentum\": 0.9},"
    " \"protocol\": {\"name\": \"syncswitch\", \"bsp_fraction\": 0.25, \"shards\": 2,"
    " \"placement\": \"servers\", \"momentum_at_switch\": \"scale\"},"
    " \"stop\": {\"iterations\": 1200}, \"eval\": {\"every_s\": 0.5, \"samples\": 500}}";

static const size_t P = 329;
static const uint64_t LOW53 = (UINT64_C(1) << 53) - 1;

/* The params_fnv (last column) of each workers.csv row. */
static size_t worker_fnvs(const char *dir, uint64_t *fnv, size_t max)
{
    char *s = harness_slurp(dir, "workers.csv");
    size_t n = 0;
    for (char *line = strchr(s, '\n'); line != NULL && line[1] != '\0' && n < max;
         line = strchr(line + 1, '\n')) {
        const char *end = strchr(line + 1, '\n'), *comma = end;
        while (*comma != ',')
            comma--;
        fnv[n++] = strtoull(comma + 1, NULL, 16);
    }
    free(s);
    return n;
}

/* Runs real_json with `sets` into a fresh directory, which the caller cleans up. */
static char *run(const char *const *sets, size_t n, sim_run_summary *sum)
{
    sim_scenario *sc = harness_load(real_json, "syncswitch.json", sets, n);
    char *dir = harness_tmpdir("ss");
    *sum = harness_run(sc, dir, NULL, NULL);
    sim_scenario_destroy(sc);
    return dir;
}

/* ---- workload accounting ---------------------------------------------------------------- */

START_TEST(samples_are_conserved_across_the_switch)
{
    /* T = 1200 iterations of 16 samples; the BSP phase is round(p T / 8) rounds of 8
     * iterations, the ASP phase the rest: 0.05 -> 7.5, rounded half away from zero to 8
     * rounds; 0.25 -> 37.5, to 38; 0.5 -> 75; 1 -> 150 (BSP only). */
    const char *fractions[] = { "0", "0.05", "0.25", "0.5", "1" };
    const uint64_t rounds[] = { 0, 8, 38, 75, 150 };
    const char *orders[] = { "bsp_first", "asp_first" };
    for (size_t o = 0; o < 2; o++) {
        for (size_t i = 0; i < 5; i++) {
            char p[64], order[64];
            snprintf(p, sizeof(p), "protocol.bsp_fraction=%s", fractions[i]);
            snprintf(order, sizeof(order), "protocol.order=%s", orders[o]);
            const char *sets[] = { p, order };
            sim_run_summary sum;
            char *dir = run(sets, 2, &sum);
            ck_assert_str_eq(sum.stop_reason, "iterations");
            ck_assert_uint_eq(sum.samples, 1200 * 16);
            double bsp = harness_report_value(dir, "samples_bsp"),
                   asp = harness_report_value(dir, "samples_asp");
            ck_assert_msg(bsp == (double)(rounds[i] * 8 * 16), "%s p = %s: %g BSP samples",
                          orders[o], fractions[i], bsp);
            ck_assert_double_eq(bsp + asp, 1200.0 * 16);
            ck_assert_double_eq(harness_report_value(dir, "budget_iterations"), 1200);
            bool switched = rounds[i] > 0 && rounds[i] < 150;
            ck_assert_int_eq(harness_report_value(dir, "switch_s") > 0, switched);
            /* Time in the phases adds up to the run's (no pause here). */
            double t =
                harness_report_value(dir, "time_bsp_s") + harness_report_value(dir, "time_asp_s");
            ck_assert_double_eq_tol(t, (double)sum.sim_ns / 1e9, 1e-9);
            harness_cleanup(dir);
        }
    }
    /* An epoch budget: 2 epochs of 4000 samples are 500 iterations of 16; 25% of them in BSP
     * is round(125 / 8) = 16 rounds. */
    const char *epochs[] = { "stop={\"epochs\": 2}" };
    sim_run_summary sum;
    char *dir = run(epochs, 1, &sum);
    ck_assert_uint_eq(sum.samples, 8000);
    ck_assert_double_eq(harness_report_value(dir, "budget_iterations"), 500);
    ck_assert_double_eq(harness_report_value(dir, "samples_bsp"), 16 * 8 * 16);
    ck_assert_double_eq(harness_report_value(dir, "samples_asp"), 8000 - 16 * 8 * 16);
    harness_cleanup(dir);
}
END_TEST

START_TEST(the_pause_is_simulated_time_between_the_phases)
{
    const char *sets[] = { "protocol.switch_pause_s=0.75" };
    sim_run_summary sum;
    char *dir = run(sets, 1, &sum);
    double sw = harness_report_value(dir, "switch_s"), re = harness_report_value(dir, "resume_s");
    ck_assert_double_eq_tol(re - sw, 0.75, 1e-9);
    ck_assert_double_eq_tol(harness_report_value(dir, "time_pause_s"), 0.75, 1e-9);
    ck_assert_double_eq_tol(harness_report_value(dir, "time_bsp_s"), sw, 1e-9);
    double t =
        harness_report_value(dir, "time_bsp_s") + harness_report_value(dir, "time_asp_s") + 0.75;
    ck_assert_double_eq_tol(t, (double)sum.sim_ns / 1e9, 1e-9);
    harness_cleanup(dir);
}
END_TEST

/* ---- rates ------------------------------------------------------------------------------ */

START_TEST(the_learning_rate_after_the_switch_is_lr_over_n)
{
    /* BSP at 0.8 (global batch 8 x 16), ASP at 0.8 / 8 = 0.1 (batch 16): exactly 0.1. */
    sim_run_summary sum;
    char *dir = run(NULL, 0, &sum);
    ck_assert_double_eq(harness_report_value(dir, "lr_bsp"), 0.8);
    ck_assert_double_eq(harness_report_value(dir, "lr_asp"), 0.1);
    ck_assert_double_eq(harness_report_value(dir, "momentum_asp"), 0.9 / 8);
    harness_cleanup(dir);
    const char *explicit_lr[] = { "protocol.asp_lr=0.0625" };
    dir = run(explicit_lr, 1, &sum);
    ck_assert_double_eq(harness_report_value(dir, "lr_asp"), 0.0625);
    harness_cleanup(dir);
}
END_TEST

/* Final checksums of a run: every worker's, and the server's (low 53 bits). */
static void checksums(const char *json, const char *const *sets, size_t n, uint64_t *fnv,
                      uint64_t *server)
{
    sim_scenario *sc = harness_load(json, "syncswitch.json", sets, n);
    char *dir = harness_tmpdir("ss");
    harness_run(sc, dir, NULL, NULL);
    ck_assert_uint_eq(worker_fnvs(dir, fnv, 8), 8);
    *server = (uint64_t)harness_report_value(dir, "server_params_fnv53");
    sim_scenario_destroy(sc);
    harness_cleanup(dir);
}

START_TEST(one_phase_runs_are_the_parameter_server_bit_for_bit)
{
    /* p = 0 with momentum kept is ps ASP at lr / N = 0.1; p = 1 is ps BSP at 0.8: same
     * minibatches, same messages, same steps. */
    uint64_t a[8], b[8], sa, sb;
    const char *ss_asp[] = { "protocol.bsp_fraction=0", "protocol.momentum_at_switch=keep" };
    const char *ps_asp[] = { "protocol={\"name\": \"ps\", \"mode\": \"asp\", \"shards\": 2}",
                             "workload.lr=0.1" };
    checksums(real_json, ss_asp, 2, a, &sa);
    checksums(real_json, ps_asp, 2, b, &sb);
    ck_assert_uint_eq(sa, sb);
    for (size_t w = 0; w < 8; w++)
        ck_assert_uint_eq(a[w], b[w]);
    const char *ss_bsp[] = { "protocol.bsp_fraction=1" };
    const char *ps_bsp[] = { "protocol={\"name\": \"ps\", \"mode\": \"bsp\", \"shards\": 2}" };
    checksums(real_json, ss_bsp, 1, a, &sa);
    checksums(real_json, ps_bsp, 1, b, &sb);
    ck_assert_uint_eq(sa, sb);
    for (size_t w = 0; w < 8; w++)
        ck_assert_uint_eq(a[w], b[w]);
}
END_TEST

/* ---- BSP phase -------------------------------------------------------------------------- */

START_TEST(bsp_phase_replicas_are_bitwise_equal_after_every_step)
{
    /* A BSP-only budget stopped after 8k iterations ends as round k - 1's last push leaves:
     * every worker holds round k - 1's model, bit for bit, and the server has applied k - 1
     * rounds. Colocated shards (one per worker, as in the paper) and 2 shards on servers. */
    const int rounds[] = { 2, 5, 13 };
    const char *placements[] = { "protocol.shards=2", "servers=0" };
    const char *colocated = "protocol.placement=colocated";
    for (size_t pl = 0; pl < 2; pl++) {
        for (size_t r = 0; r < 3; r++) {
            char stop[64], shards[40];
            snprintf(stop, sizeof(stop), "stop={\"iterations\": %d}", 8 * rounds[r]);
            snprintf(shards, sizeof(shards), "protocol.shards=%d", pl == 0 ? 2 : 8);
            /* Without overlap: with it, the slices of the MLP's last layer are pushed during
             * backward, and their shards may close the round and answer the next pulls before
             * the stop, so the replicas would hold round k's slices of that layer already. */
            const char *sets[] = { "protocol.bsp_fraction=1",
                                   stop,
                                   placements[pl],
                                   shards,
                                   pl == 0 ? "protocol.placement=servers" : colocated,
                                   "protocol.overlap=false" };
            uint64_t fnv[8], server;
            checksums(real_json, sets, 6, fnv, &server);
            for (size_t w = 1; w < 8; w++)
                ck_assert_uint_eq(fnv[w], fnv[0]);
        }
    }
}
END_TEST

/* The observe hook: at every evaluation during the pause after the switch, the number of
 * different worker replicas. */
typedef struct replicas {
    sim_time from, to;
    size_t seen, most;
} replicas;

static void count_replicas(void *ud, sim_ctx *ctx)
{
    replicas *r = ud;
    sim_time now = sim_ctx_now(ctx);
    if (now <= r->from || now >= r->to)
        return;
    size_t distinct = 1;
    for (uint32_t w = 1; w < sim_ctx_workers(ctx); w++) {
        bool same = false;
        for (uint32_t v = 0; v < w && !same; v++)
            same = memcmp(sim_ctx_params(ctx, w), sim_ctx_params(ctx, v), P * sizeof(float)) == 0;
        distinct += same ? 0 : 1;
    }
    r->most = distinct > r->most ? distinct : r->most;
    r->seen++;
}

START_TEST(the_bsp_phase_ends_with_equal_replicas)
{
    /* The switch drains the last BSP round: during the pause every worker holds the model
     * of that round, bit for bit (10 evaluations inside a 1 s pause). */
    const char *sets[] = { "protocol.switch_pause_s=1", "eval.every_s=0.1" };
    sim_scenario *sc = harness_load(real_json, "syncswitch.json", sets, 2);
    char *dir = harness_tmpdir("ss");
    sim_run_summary sum = harness_run(sc, dir, NULL, NULL);
    (void)sum;
    double sw = harness_report_value(dir, "switch_s");
    sim_scenario_destroy(sc);
    replicas r = { .from = (sim_time)llround(sw * 1e9), .to = (sim_time)llround((sw + 1) * 1e9) };
    sc = harness_load(real_json, "syncswitch.json", sets, 2);
    harness_run(sc, NULL, count_replicas, &r);
    ck_assert_uint_ge(r.seen, 9);
    ck_assert_uint_eq(r.most, 1);
    sim_scenario_destroy(sc);
    harness_cleanup(dir);
}
END_TEST

/* ---- the switch ------------------------------------------------------------------------- */

START_TEST(the_asp_phase_starts_from_exactly_the_bsp_model)
{
    /* p = 0.25: 38 BSP rounds. The model at the switch is ps BSP's server model after 38
     * rounds (stopped at the first push of round 38). With asp_lr = 0 and no momentum in ASP
     * (policy zero), ASP steps change nothing, so every worker's last pull, and the server
     * model at the end, are that model. */
    sim_run_summary sum;
    const char *frozen[] = { "protocol.asp_lr=0", "protocol.momentum_at_switch=zero" };
    char *dir = run(frozen, 2, &sum);
    uint64_t at_switch = (uint64_t)harness_report_value(dir, "switch_model_fnv53"), fnv[8];
    ck_assert_double_eq(harness_report_value(dir, "switch_rounds"), 38);
    ck_assert_double_eq(harness_report_value(dir, "server_params_fnv53"), (double)at_switch);
    ck_assert_uint_eq(worker_fnvs(dir, fnv, 8), 8);
    for (size_t w = 0; w < 8; w++)
        ck_assert_uint_eq(fnv[w] & LOW53, at_switch);
    harness_cleanup(dir);
    const char *ps[] = { "protocol={\"name\": \"ps\", \"mode\": \"bsp\", \"shards\": 2}",
                         "stop={\"iterations\": 305}" };
    uint64_t server;
    checksums(real_json, ps, 2, fnv, &server);
    ck_assert_uint_eq(server, at_switch);
}
END_TEST

START_TEST(momentum_buffers_are_as_the_policy_says)
{
    /* The server's momentum buffer at the switch: kept (keep), zeroed (zero), divided by
     * N = 8 (scale, ramp; exact, a power of two, so the norm is exactly an eighth). The
     * model at the switch is the same under every policy (they differ only afterwards), and
     * so is the buffer before the policy acts. */
    const char *policies[] = { "keep", "zero", "scale", "ramp" };
    double before = NAN, model = NAN;
    float zeros[329] = { 0 };
    uint64_t zero_fnv = sim_tensor_checksum(zeros, P) & LOW53;
    for (size_t i = 0; i < 4; i++) {
        char set[64];
        snprintf(set, sizeof(set), "protocol.momentum_at_switch=%s", policies[i]);
        /* ASP at rate 0 after the switch: what is checked is the state at the switch, and
         * `keep` on this small problem diverges afterwards (the run would stop). */
        const char *sets[] = { set, "protocol.asp_lr=0", "protocol.ramp_steps=50" };
        sim_run_summary sum;
        char *dir = run(sets, i == 3 ? 3 : 2, &sum);
        double b = harness_report_value(dir, "switch_velocity_before_fnv53");
        double a = harness_report_value(dir, "switch_velocity_after_fnv53");
        double nb = harness_report_value(dir, "switch_velocity_norm_before");
        double na = harness_report_value(dir, "switch_velocity_norm_after");
        double m = harness_report_value(dir, "switch_model_fnv53");
        if (i == 0) {
            before = b;
            model = m;
        }
        ck_assert_double_eq(b, before);
        ck_assert_double_eq(m, model);
        ck_assert_double_gt(nb, 0);
        switch (i) {
        case 0:
            ck_assert_double_eq(a, b);
            ck_assert_double_eq(harness_report_value(dir, "momentum_asp"), 0.9);
            break;
        case 1:
            ck_assert_double_eq(a, (double)zero_fnv);
            ck_assert_double_eq(na, 0);
            ck_assert_double_eq(harness_report_value(dir, "momentum_asp"), 0);
            break;
        default:
            ck_assert_double_ne(a, b);
            ck_assert_double_eq(na, nb / 8);
            /* scale keeps m / N; ramp is back at m after its 50 steps */
            ck_assert_double_eq(harness_report_value(dir, "momentum_asp"), i == 2 ? 0.9 / 8 : 0.9);
        }
        harness_cleanup(dir);
    }
}
END_TEST

START_TEST(the_default_switch_keeps_the_momentum_and_its_buffer_as_the_authors_code_restores_them)
{
    /* cake-lab/Sync-Switch runs each phase as a new TensorFlow job restoring the previous
     * phase's checkpoint from the same output directory (code/bsp.sh and asp.sh: OUTDIR, passed
     * as --output_dir by code/start_server.sh): the optimizer's momentum accumulators come
     * back as the BSP phase left them, and the hyper-parameter set, the same for both phases
     * (code/main.py), keeps the coefficient. So by default the ASP phase steps with the
     * workload's momentum (0.9) and the server's buffer as it was at the switch; its rate is
     * lr / N (0.1 here), the authors' configuration (their momentum readme: 0.8 -> 0.1 from a
     * batch of 1024 to 128). ASP at rate 0 after the switch: only the state at the switch is
     * checked (momentum 0.9 in ASP diverges on this small problem afterwards). */
    const char *sets[] = { "protocol={\"name\": \"syncswitch\", \"bsp_fraction\": 0.25,"
                           " \"shards\": 2, \"placement\": \"servers\", \"asp_lr\": 0}" };
    sim_run_summary sum;
    char *dir = run(sets, 1, &sum);
    ck_assert_double_gt(harness_report_value(dir, "switch_velocity_norm_before"), 0);
    ck_assert_double_eq(harness_report_value(dir, "switch_velocity_after_fnv53"),
                        harness_report_value(dir, "switch_velocity_before_fnv53"));
    ck_assert_double_eq(harness_report_value(dir, "momentum_asp"), 0.9);
    harness_cleanup(dir);
    sim_scenario *sc = harness_load(real_json, "syncswitch.json", NULL, 0);
    char *text = sim_scenario_resolved(sc, false);
    ck_assert_ptr_nonnull(strstr(text, "\"asp_lr\":0.1,"));
    free(text);
    sim_scenario_destroy(sc);
}
END_TEST

/* ---- ASP phase staleness ---------------------------------------------------------------- */

/* Replays events.csv of a run with 2 shards on hosts 8 and 9 that switched at `switch_ns`:
 * BSP pushes (delivered up to the switch) update a shard once per 8; afterwards each push
 * is one update. A worker's pull of shard k is answered when its request arrives, unless its
 * own push to k is still on the way (its "computed" event sent it): then when that push
 * arrives. The staleness of a push is the shard's updates since the answer. */
static void replay_staleness(const char *dir, sim_time switch_ns, uint64_t *n, uint64_t *sum,
                             uint64_t *max)
{
    char *s = harness_slurp(dir, "events.csv");
    uint64_t updates[2] = { 0 }, bsp_pushes[2] = { 0 }, version[8][2] = { { 0 } };
    bool out[8][2] = { { false } }, queued[8][2] = { { false } };
    *n = *sum = *max = 0;
    for (char *line = strchr(s, '\n'); line != NULL && line[1] != '\0';
         line = strchr(line + 1, '\n')) {
        long long t, w, peer;
        unsigned long long tag, bytes, arg;
        char what[16];
        int got = sscanf(line + 1, "%lld,%15[a-z],%lld,%lld,%llu,%llu,%llu", &t, what, &w, &peer,
                         &tag, &bytes, &arg);
        if (got == 7 && strcmp(what, "computed") == 0) {
            out[w][0] = out[w][1] = true;
            continue;
        }
        if (got != 7 || strcmp(what, "msg") != 0 || w < 8)
            continue;
        uint32_t k = (uint32_t)(arg >> 32), kind = (uint32_t)arg, from = (uint32_t)peer;
        ck_assert_uint_eq(k, (uint32_t)(w - 8));
        if (kind == 1) { /* a pull request */
            if (out[from][k])
                queued[from][k] = true;
            else
                version[from][k] = updates[k];
        } else if (kind == 3) { /* a push */
            out[from][k] = false;
            if (t <= switch_ns) {
                if (++bsp_pushes[k] % 8 == 0)
                    updates[k]++;
                continue;
            }
            uint64_t stale = updates[k] - version[from][k];
            (*n)++;
            *sum += stale;
            *max = stale > *max ? stale : *max;
            updates[k]++;
            if (queued[from][k]) {
                queued[from][k] = false;
                version[from][k] = updates[k];
            }
        }
    }
    free(s);
}

START_TEST(asp_staleness_equals_server_updates_between_pull_and_push)
{
    /* The protocol's own count (versions remembered per worker and shard) and the replay of
     * the trace agree on every ASP gradient slice; with 8 equally fast workers the mean is
     * close to N - 1 = 7 (each worker's push meets the other seven's on average). */
    const char *sets[] = { "output.events=true", "protocol.shards=2" };
    sim_run_summary sum;
    char *dir = run(sets, 2, &sum);
    sim_time sw = (sim_time)llround(harness_report_value(dir, "switch_s") * 1e9);
    uint64_t n, total, max;
    replay_staleness(dir, sw, &n, &total, &max);
    ck_assert_double_eq(harness_report_value(dir, "asp_slices_applied"), (double)n);
    /* every ASP push but those still on the wire when the budget ran out */
    ck_assert_uint_le(n, 2 * (1200 - 38 * 8));
    ck_assert_uint_ge(n, 2 * (1200 - 38 * 8 - 8));
    ck_assert_double_eq(harness_report_value(dir, "asp_staleness_max"), (double)max);
    ck_assert_double_eq_tol(harness_report_value(dir, "asp_staleness_mean"),
                            (double)total / (double)n, 1e-12);
    ck_assert_double_eq_tol((double)total / (double)n, 7.0, 0.5);
    harness_cleanup(dir);
}
END_TEST

/* ---- online policies, timing-only, parameters -------------------------------------------- */

START_TEST(online_policies_run_asp_while_a_straggler_is_slow)
{
    /* Workers 2 and 5 get 30 ms of extra latency from 0.3 s to 0.6 s (iterations of 10 ms):
     * greedy leaves BSP for ASP while they are slow and comes back; samples stay conserved;
     * budgeted keeps its online ASP share under 10% of the BSP phase. */
    const char *link = "stragglers=[{\"kind\": \"link\", \"workers\": [2, 5], \"from_s\": 0.3, "
                       "\"to_s\": 0.6, \"extra_latency_ms\": 30}]";
    const char *greedy[] = { link, "protocol.online=greedy", "protocol.bsp_fraction=0.5" };
    sim_run_summary sum;
    char *dir = run(greedy, 3, &sum);
    ck_assert_uint_eq(sum.samples, 1200 * 16);
    ck_assert_double_ge(harness_report_value(dir, "online_excursions"), 1);
    double online = harness_report_value(dir, "samples_online_asp");
    ck_assert_double_gt(online, 0);
    ck_assert_double_eq(harness_report_value(dir, "samples_bsp") +
                            harness_report_value(dir, "samples_asp"),
                        1200.0 * 16);
    harness_cleanup(dir);
    const char *budgeted[] = { link, "protocol.online=budgeted", "protocol.bsp_fraction=0.5" };
    dir = run(budgeted, 3, &sum);
    ck_assert_uint_eq(sum.samples, 1200 * 16);
    ck_assert_double_le(harness_report_value(dir, "samples_online_asp"), 0.1 * 600 * 16);
    harness_cleanup(dir);
}
END_TEST

START_TEST(runs_with_online_excursions_are_deterministic)
{
    /* Same scenario, same bytes: metrics, workers, events and the summary but its wall line,
     * with drains in the middle of rounds (greedy, link stragglers) and a pause. */
    const char *sets[] = {
        ("stragglers=[{\"kind\": \"link\", \"workers\": [1, 6], \"from_s\": 0.2, "
         "\"to_s\": 0.5, \"extra_latency_ms\": 30}]"),
        "protocol.online=greedy", "protocol.switch_pause_s=0.1", "output.events=true"
    };
    sim_run_summary sum;
    char *a = run(sets, 4, &sum), *b = run(sets, 4, &sum);
    ck_assert_double_ge(harness_report_value(a, "online_excursions"), 1);
    const char *names[] = { "metrics.csv", "workers.csv", "events.csv", "summary.json" };
    for (size_t i = 0; i < 4; i++) {
        char *x = harness_slurp(a, names[i]), *y = harness_slurp(b, names[i]);
        if (i == 3) {
            harness_strip_wall(x);
            harness_strip_wall(y);
        }
        ck_assert_msg(strcmp(x, y) == 0, "%s differs", names[i]);
        free(x);
        free(y);
    }
    harness_cleanup(a);
    harness_cleanup(b);
}
END_TEST

START_TEST(timing_only_runs_switch_by_time_without_a_sample_budget)
{
    /* Without stop.iterations or stop.epochs the phases split stop.time_s: BSP for 30% of
     * 2 s, then ASP. */
    static const char json[] =
        "{\"seed\": 7, \"workers\": 4, \"servers\": 1, \"compute\": {\"iteration_ms\": 10},"
        " \"workload\": {\"model\": {\"name\": \"none\"}, \"message_bytes\": 100000},"
        " \"protocol\": {\"name\": \"syncswitch\", \"bsp_fraction\": 0.3},"
        " \"stop\": {\"time_s\": 2}}";
    sim_scenario *sc = harness_load(json, "syncswitch.json", NULL, 0);
    char *dir = harness_tmpdir("ss");
    sim_run_summary sum = harness_run(sc, dir, NULL, NULL);
    ck_assert_str_eq(sum.stop_reason, "time");
    double sw = harness_report_value(dir, "switch_s");
    ck_assert_double_ge(sw, 0.6);
    ck_assert_double_lt(sw, 0.65); /* the round in flight, about 10 ms */
    ck_assert_double_gt(harness_report_value(dir, "samples_asp"), 0);
    sim_scenario_destroy(sc);
    harness_cleanup(dir);
}
END_TEST

/* ---- BSP's synchronization overhead (sync_overhead_ms) ----------------------------------- */

START_TEST(bsp_rounds_pay_the_sync_overhead_to_the_nanosecond_and_no_bit_changes)
{
    /* ps BSP, timing only: 4 workers, one shard on a server host, 10 ms iterations, 10 MB at
     * 8 Gbit/s (tests/test_ps.c's hand count: 12 iterations, 3 rounds, end at 230600768 ns).
     * Each worker waits 2.385 ms between its complete pull and its iteration: 3 waits. */
    static const char json[] =
        "{\"seed\": 7, \"workers\": 4, \"servers\": 1, \"compute\": {\"iteration_ms\": 10},"
        " \"network\": {\"bandwidth_gbps\": 8, \"latency_us\": 50},"
        " \"workload\": {\"model\": {\"name\": \"none\"}, \"message_bytes\": 10000000},"
        " \"protocol\": {\"name\": \"ps\", \"sync_overhead_ms\": 2.385},"
        " \"stop\": {\"iterations\": 12}}";
    sim_scenario *sc = harness_load(json, "ps.json", NULL, 0);
    sim_run_summary sum = harness_run(sc, NULL, NULL, NULL);
    ck_assert_str_eq(sum.stop_reason, "iterations");
    ck_assert_int_eq(sum.sim_ns, 230600768 + 3 * 2385000);
    sim_scenario_destroy(sc);

    /* Sync-Switch, 38 BSP rounds then ASP, real model and jitter: the BSP phase lasts 38 waits
     * of 1.75 ms longer, the ASP phase as long, and every model ends with the same bits. */
    const char *with[] = { "protocol.sync_overhead_ms=1.75" };
    sim_run_summary sa, sb;
    char *a = run(NULL, 0, &sa), *b = run(with, 1, &sb);
    ck_assert_double_eq(harness_report_value(b, "samples_bsp"), 38 * 8 * 16);
    /* times are printed in seconds from whole ns: 1e-9 s covers the decimal rounding */
    ck_assert_double_eq_tol(harness_report_value(b, "time_bsp_s") -
                                harness_report_value(a, "time_bsp_s"),
                            38 * 1.75e-3, 1e-9);
    ck_assert_double_eq_tol(harness_report_value(b, "time_asp_s"),
                            harness_report_value(a, "time_asp_s"), 1e-9);
    uint64_t fa[8], fb[8];
    ck_assert_uint_eq(worker_fnvs(a, fa, 8), 8);
    ck_assert_uint_eq(worker_fnvs(b, fb, 8), 8);
    for (size_t w = 0; w < 8; w++)
        ck_assert_uint_eq(fa[w], fb[w]);
    ck_assert_double_eq(harness_report_value(a, "server_params_fnv53"),
                        harness_report_value(b, "server_params_fnv53"));
    harness_cleanup(a);
    harness_cleanup(b);
}
END_TEST

START_TEST(randomized_switches_never_stall_and_conserve_samples)
{
    /* 40 timing-only clusters: 3..9 workers, 1..3 shards on servers or colocated, random
     * fractions and orders, momentum policies, online policies, link stragglers (which
     * trigger online excursions: drains in the middle of BSP rounds and of ASP), random
     * slowdowns, and in every fourth run a worker that fails and recovers; every second run's
     * BSP rounds have a synchronization overhead (a worker waiting while a drain, a failure or
     * an excursion comes). Every run ends by its budget of 600 iterations, never stalled, the
     * phases' samples adding up to it. */
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 4711);
    const char *online[] = { "none", "greedy", "budgeted" };
    double excursions = 0, switches = 0;
    for (int i = 0; i < 40; i++) {
        uint32_t n = 3 + (uint32_t)gsl_rng_uniform_int(r, 7);
        uint32_t K = 1 + (uint32_t)gsl_rng_uniform_int(r, 3);
        bool colocated = gsl_rng_uniform(r) < 0.5, asp_first = gsl_rng_uniform(r) < 0.25;
        const char *pol = asp_first ? "none" : online[gsl_rng_uniform_int(r, 3)];
        double p = gsl_rng_uniform(r), a = 0.1 + 0.5 * gsl_rng_uniform(r);
        uint32_t s1 = (uint32_t)gsl_rng_uniform_int(r, n);
        uint32_t s2 = (s1 + 1 + (uint32_t)gsl_rng_uniform_int(r, n - 1)) % n;
        char fail[160] = "";
        if (i % 4 == 3)
            snprintf(fail, sizeof(fail),
                     ", {\"kind\": \"failure\", \"workers\": [%u], \"at_s\": %.3f, "
                     "\"recover_s\": %.3f}",
                     (uint32_t)gsl_rng_uniform_int(r, n), a, a + 0.2);
        double from_s = 0.05 + 0.2 * gsl_rng_uniform(r), to_s = 0.3 + 0.5 * gsl_rng_uniform(r);
        double pause_s = gsl_rng_uniform(r) < 0.5 ? 0.0 : 0.05;
        char json[1600];
        snprintf(
            json, sizeof(json),
            "{\"seed\": %d, \"workers\": %u, \"servers\": %u,"
            " \"compute\": {\"iteration_ms\": 10, \"jitter_sigma\": 0.3},"
            " \"stragglers\": [{\"kind\": \"random\", \"probability\": 0.1, \"slowdown\": 4},"
            " {\"kind\": \"link\", \"workers\": [%u, %u], \"from_s\": %.3f, \"to_s\": %.3f,"
            " \"extra_latency_ms\": 40}%s],"
            " \"network\": {\"bandwidth_gbps\": 1, \"latency_us\": 40},"
            " \"workload\": {\"model\": {\"name\": \"none\"}, \"message_bytes\": 200000},"
            " \"protocol\": {\"name\": \"syncswitch\", \"bsp_fraction\": %.3f,"
            " \"order\": \"%s\", \"online\": \"%s\", \"shards\": %u, \"placement\": \"%s\","
            " \"switch_pause_s\": %.3f%s},"
            " \"stop\": {\"iterations\": 600, \"time_s\": 1000}, \"eval\": {\"every_s\": 0.5}}",
            900 + i, n, colocated ? 0 : K, s1, s2, from_s, to_s, fail, p,
            asp_first ? "asp_first" : "bsp_first", pol, K, colocated ? "colocated" : "servers",
            pause_s, i % 2 == 1 && p >= 0.001 ? ", \"sync_overhead_ms\": 2.5" : "");
        sim_scenario *sc = harness_load(json, "syncswitch.json", NULL, 0);
        char *dir = harness_tmpdir("ss");
        sim_run_summary sum = harness_run(sc, dir, NULL, NULL);
        ck_assert_msg(strcmp(sum.stop_reason, "iterations") == 0, "run %d (%s, p %.3f): %s", i, pol,
                      p, sum.stop_reason);
        ck_assert_uint_eq(sum.samples, 600 * 32);
        ck_assert_double_eq(harness_report_value(dir, "samples_bsp") +
                                harness_report_value(dir, "samples_asp"),
                            600.0 * 32);
        excursions += harness_report_value(dir, "online_excursions");
        switches += harness_report_value(dir, "switch_s") > 0;
        sim_scenario_destroy(sc);
        harness_cleanup(dir);
    }
    ck_assert_double_ge(excursions, 10); /* the online policies did drain mid-phase */
    ck_assert_double_ge(switches, 20);
    gsl_rng_free(r);
}
END_TEST

static void refused(const char *const *sets, size_t n, const char *path, const char *msg)
{
    harness_expect_rejected(real_json, "syncswitch.json", sets, n, path, msg);
}

START_TEST(bad_parameters_are_refused_with_exact_messages)
{
    const char *p[] = { "protocol.bsp_fraction=1.5" };
    refused(p, 1, "$.protocol.bsp_fraction", "must be a number in [0, 1], got 1.5");
    const char *order[] = { "protocol.order=bsp_last" };
    refused(order, 1, "$.protocol.order", "must be one of bsp_first, asp_first, got \"bsp_last\"");
    const char *mom[] = { "protocol.momentum_at_switch=halve" };
    refused(mom, 1, "$.protocol.momentum_at_switch",
            "must be one of keep, zero, scale, ramp, got \"halve\"");
    const char *online[] = { "protocol.online=greedy", "protocol.order=asp_first" };
    refused(online, 2, "$.protocol.online",
            "an online policy needs order \"bsp_first\", got \"greedy\"");
    const char *unread[] = { "protocol.ramp_steps=3" };
    refused(unread, 1, "$.protocol.ramp_steps",
            "unknown key (valid: name, bsp_fraction, order, asp_lr, momentum_at_switch, "
            "switch_pause_s, online, placement, shards, overlap, sync_overhead_ms)");
    const char *factor[] = { "protocol.online=greedy", "protocol.straggler_factor=0.5" };
    refused(factor, 2, "$.protocol.straggler_factor", "must be a number >= 1, got 0.5");
    const char *sync[] = { "protocol.sync_overhead_ms=-2" };
    refused(sync, 1, "$.protocol.sync_overhead_ms", "must be a number in [0, 1000000000], got -2");
    const char *asp_only[] = { "protocol.bsp_fraction=0", "protocol.sync_overhead_ms=2" };
    refused(asp_only, 2, "$.protocol.sync_overhead_ms",
            "applies to BSP rounds, and this run has none");
    const char *ps_asp[] = { "protocol={\"name\": \"ps\", \"mode\": \"asp\","
                             " \"sync_overhead_ms\": 2}" };
    refused(ps_asp, 1, "$.protocol.sync_overhead_ms",
            "applies to BSP rounds, and this run has none");
}
END_TEST

/* ---- defaults --------------------------------------------------------------------------- */

START_TEST(the_default_is_the_papers_colocated_placement_bit_for_bit)
{
    /* {"name": "syncswitch"} resolves to one shard on every worker (§6.1: K = N,
     * colocated), with or without server hosts in the scenario, and runs exactly as the
     * paper's explicit values (the resolved section written out, in its order). */
    const char *servers[] = { "protocol={\"name\": \"syncswitch\"}" };
    const char *none[] = { "protocol={\"name\": \"syncswitch\"}", "servers=0" };
    const char *const *cases[] = { servers, none };
    for (size_t c = 0; c < 2; c++) {
        sim_scenario *sc = harness_load(real_json, "syncswitch.json", cases[c], c + 1);
        char *text = sim_scenario_resolved(sc, false);
        ck_assert_ptr_nonnull(strstr(text,
                                     "\"protocol\":{\"name\":\"syncswitch\","
                                     "\"bsp_fraction\":0.05,\"order\":\"bsp_first\","
                                     "\"asp_lr\":0.1,\"momentum_at_switch\":\"keep\","
                                     "\"switch_pause_s\":0,\"online\":\"none\","
                                     "\"placement\":\"colocated\",\"shards\":8,\"overlap\":true,"
                                     "\"failover_s\":1}"));
        free(text);
        sim_scenario_destroy(sc);
    }
    const char *dflt[] = { "protocol={\"name\": \"syncswitch\"}" };
    const char *paper[] = {
        "protocol={\"name\": \"syncswitch\", \"bsp_fraction\": 0.05, \"order\": \"bsp_first\","
        " \"asp_lr\": 0.1, \"momentum_at_switch\": \"keep\", \"switch_pause_s\": 0,"
        " \"online\": \"none\", \"placement\": \"colocated\", \"shards\": 8,"
        " \"overlap\": true, \"failover_s\": 1}"
    };
    sim_run_summary sa, sb;
    char *a = run(dflt, 1, &sa), *b = run(paper, 1, &sb);
    ck_assert_double_gt(harness_summary_number(a, "switch_rounds"), 0);
    harness_expect_same_outputs(a, b);
    harness_cleanup(a);
    harness_cleanup(b);
    /* With the server hosts asked for, one shard on each of them. */
    const char *on_servers[] = {
        "protocol={\"name\": \"syncswitch\", \"placement\": \"servers\"}"
    };
    sim_scenario *sc = harness_load(real_json, "syncswitch.json", on_servers, 1);
    char *text = sim_scenario_resolved(sc, false);
    ck_assert_ptr_nonnull(strstr(text, "\"online\":\"none\",\"shards\":2,\"overlap\":true}"));
    free(text);
    sim_scenario_destroy(sc);
}
END_TEST

Suite *test_suite(void)
{
    Suite *s = suite_create("syncswitch");
    TCase *exact = tcase_create("exact");
    tcase_add_test(exact, samples_are_conserved_across_the_switch);
    tcase_add_test(exact, the_pause_is_simulated_time_between_the_phases);
    tcase_add_test(exact, the_learning_rate_after_the_switch_is_lr_over_n);
    tcase_add_test(exact, one_phase_runs_are_the_parameter_server_bit_for_bit);
    tcase_add_test(exact, bsp_phase_replicas_are_bitwise_equal_after_every_step);
    tcase_add_test(exact, the_bsp_phase_ends_with_equal_replicas);
    tcase_add_test(exact, the_asp_phase_starts_from_exactly_the_bsp_model);
    tcase_add_test(exact, momentum_buffers_are_as_the_policy_says);
    tcase_add_test(
        exact,
        the_default_switch_keeps_the_momentum_and_its_buffer_as_the_authors_code_restores_them);
    tcase_add_test(exact, asp_staleness_equals_server_updates_between_pull_and_push);
    tcase_set_timeout(exact, 120);
    suite_add_tcase(s, exact);
    TCase *more = tcase_create("policies");
    tcase_add_test(more, online_policies_run_asp_while_a_straggler_is_slow);
    tcase_add_test(more, runs_with_online_excursions_are_deterministic);
    tcase_add_test(more, timing_only_runs_switch_by_time_without_a_sample_budget);
    tcase_add_test(more, randomized_switches_never_stall_and_conserve_samples);
    tcase_add_test(more, bad_parameters_are_refused_with_exact_messages);
    tcase_add_test(more, the_default_is_the_papers_colocated_placement_bit_for_bit);
    tcase_set_timeout(more, 120);
    suite_add_tcase(s, more);
    TCase *sync = tcase_create("sync_overhead");
    tcase_add_test(sync, bsp_rounds_pay_the_sync_overhead_to_the_nanosecond_and_no_bit_changes);
    tcase_set_timeout(sync, 60);
    suite_add_tcase(s, sync);
    return s;
}
