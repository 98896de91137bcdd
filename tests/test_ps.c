/* The parameter server (protocols/ps.c) through full runs: BSP keeps replicas bitwise equal
 * to each other, to the server model and to ring all-reduce; BSP round time by hand on a
 * star; bad parameters are refused with exact messages. Real-model runs use a small synthetic
 * data set, so the suite stays fast (helpers in tests/harness_ps.h). */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_rng.h>

#include "harness.h"
#include "harness_ps.h"
#include "runtime/ctx.h"
#include "runtime/run.h"
#include "scenario/scenario.h"
#include "sim/layers.h"

/* A small real workload: 4 workers, 3 shards on 3 server hosts (the MLP's 4 * 16 + ... floats
 * do not split evenly in 3), momentum on the server. */
static const char real_json[] =
    "{\"seed\": 2385, \"workers\": 4, \"servers\": 3,"
    " \"compute\": {\"iteration_ms\": 10, \"jitter_sigma\": 0.2},"
    " \"network\": {\"bandwidth_gbps\": 10, \"latency_us\": 20},"
    " \"workload\": {\"dataset\": {\"name\": \"synthetic\", \"samples\": 4000,"
    " \"test_samples\": 1000, \"dim\": 20, \"classes\": 4, \"separation\": 4},"
    " \"model\": {\"name\": \"mlp\", \"hidden\": [13]}, \"batch\": 16, \"lr\": 0.1,"
    " \"momentum\": 0.9},"
    " \"protocol\": {\"name\": \"ps\", \"mode\": \"bsp\", \"shards\": 3},"
    " \"stop\": {\"time_s\": 3}, \"eval\": {\"every_s\": 0.5, \"samples\": 1000}}";

/* Runs `json` with `sets`, stopped after `iterations`, and returns the final parameters'
 * checksums of its workers (and, for ps, the server's low 53 bits in *server). */
static void final_checksums(const char *json, const char *const *sets, size_t nsets,
                            uint64_t iterations, uint64_t *fnv, size_t n, uint64_t *server)
{
    const char *all[8];
    char stop[64];
    snprintf(stop, sizeof(stop), "stop={\"iterations\": %" PRIu64 "}", iterations);
    for (size_t i = 0; i < nsets; i++)
        all[i] = sets[i];
    all[nsets] = stop;
    sim_scenario *sc = harness_load(json, "ps.json", all, nsets + 1);
    char *dir = harness_tmpdir("ps");
    sim_run_summary sum = harness_run(sc, dir, NULL, NULL);
    ck_assert_str_eq(sum.stop_reason, "iterations");
    uint64_t iters[16];
    ck_assert_uint_eq(pst_worker_rows(dir, iters, fnv, 16), n);
    if (server != NULL)
        *server = (uint64_t)harness_report_value(dir, "server_params_fnv53");
    sim_scenario_destroy(sc);
    harness_cleanup(dir);
}

static const uint64_t LOW53 = (UINT64_C(1) << 53) - 1;

/* ---- exact properties of BSP ---------------------------------------------------------- */

START_TEST(bsp_replicas_equal_each_other_and_the_server_after_every_round)
{
    /* 4 workers, 3 shards. An iteration is counted when its gradient is pushed, so a run
     * stopped at 4k iterations ends as round k-1's last push leaves: every worker then holds
     * the model it pulled for round k-1, and the server has not yet applied that round. */
    const int rounds[] = { 2, 3, 5, 11 };
    uint64_t prev = 0;
    for (size_t r = 0; r < 4; r++) {
        uint64_t fnv[4], server;
        final_checksums(real_json, NULL, 0, 4 * (uint64_t)rounds[r], fnv, 4, &server);
        for (size_t w = 1; w < 4; w++)
            ck_assert_uint_eq(fnv[w], fnv[0]);
        ck_assert_uint_eq(server, fnv[0] & LOW53);
        ck_assert_uint_ne(fnv[0], prev);
        prev = fnv[0];
    }
}
END_TEST

START_TEST(one_worker_one_shard_bsp_is_plain_sgd)
{
    /* The server applies the worker's gradient with its own momentum buffer exactly as a
     * single worker would: after 36 rounds (stopped at the 37th push) the pulled model is the
     * 1-worker ring all-reduce's model after 36 iterations, which is plain SGD (see
     * test_train). Constant learning rate, so the epoch at which a step lands is moot. */
    const char *ps_sets[] = { "workers=1", "servers=1", "protocol.shards=1" };
    const char *ar_sets[] = { "workers=1", "protocol={\"name\": \"allreduce\"}" };
    uint64_t ps_fnv[1], ar_fnv[1], server;
    final_checksums(real_json, ps_sets, 3, 37, ps_fnv, 1, &server);
    final_checksums(real_json, ar_sets, 2, 36, ar_fnv, 1, NULL);
    ck_assert_uint_eq(ps_fnv[0], ar_fnv[0]);
    ck_assert_uint_eq(server, ar_fnv[0] & LOW53);
}
END_TEST

START_TEST(bsp_on_shards_equals_ring_allreduce_bit_for_bit)
{
    /* Same minibatches (each worker's stream draws its compute time, then its minibatch, in
     * both protocols), same mean (summed in worker order, then divided), same optimizer step
     * element by element: 4 workers after 9 rounds agree bit for bit with all-reduce, with 3
     * shards on server hosts and with 4 shards colocated on the workers (shard k's own worker
     * talks to it through the loopback). */
    const char *ar_sets[] = { "protocol={\"name\": \"allreduce\"}" };
    uint64_t ar[4], srv[4], col[4], server;
    final_checksums(real_json, ar_sets, 1, 4 * 9, ar, 4, NULL);
    final_checksums(real_json, NULL, 0, 4 * 10, srv, 4, &server);
    ck_assert_uint_eq(server, ar[0] & LOW53);
    const char *col_sets[] = { "servers=0", "protocol.shards=4" };
    final_checksums(real_json, col_sets, 2, 4 * 10, col, 4, NULL);
    for (size_t w = 0; w < 4; w++) {
        ck_assert_uint_eq(srv[w], ar[w]);
        ck_assert_uint_eq(col[w], ar[w]);
    }
}
END_TEST

/* The observe hook's tally: for each shard's slice, how many different versions the
 * workers hold at an evaluation. Slices as the protocol cuts them: P / K floats each, the
 * first P mod K one longer. */
typedef struct versions {
    uint32_t K;
    size_t evaluations;
    size_t most; /* most versions of one slice seen at once */
} versions;

static void count_versions(void *ud, sim_ctx *ctx)
{
    versions *v = ud;
    size_t P = sim_ctx_num_params(ctx), K = v->K;
    uint32_t n = sim_ctx_workers(ctx);
    for (size_t k = 0; k < K; k++) {
        size_t off = k * (P / K) + (k < P % K ? k : P % K), len = P / K + (k < P % K ? 1 : 0);
        const float *seen[16];
        size_t nseen = 0;
        for (uint32_t w = 0; w < n && w < 16; w++) {
            const float *x = sim_ctx_params(ctx, w) + off;
            size_t j = 0;
            while (j < nseen && memcmp(seen[j], x, len * sizeof(*x)) != 0)
                j++;
            if (j == nseen)
                seen[nseen++] = x;
        }
        v->most = nseen > v->most ? nseen : v->most;
    }
    v->evaluations++;
}

static versions observe_versions(const char *const *sets, size_t n, uint32_t K)
{
    const char *all[8] = { "eval={\"every_s\": 0.004, \"samples\": 10}", "stop.time_s=1" };
    for (size_t i = 0; i < n; i++)
        all[2 + i] = sets[i];
    sim_scenario *sc = harness_load(real_json, "ps.json", all, n + 2);
    versions v = { .K = K };
    harness_run(sc, NULL, count_versions, &v);
    sim_scenario_destroy(sc);
    return v;
}

/* The most address space the snapshot buffers took, at any evaluation. */
static void buffer_bytes(void *ud, sim_ctx *ctx)
{
    uint64_t *most = ud, bytes = sim_ctx_stats(ctx).snapshot_buffer_bytes;
    *most = bytes > *most ? bytes : *most;
}

/* 64 workers, each a shard's host: a round has 64 x 64 slices in flight (pushes, then the
 * replies), a 64th of the model each. Their buffers are slice-sized: with a whole model's
 * buffer per slice the pool took 64 x 64 models of address space and more (at 200 workers
 * of a 1 MiB model, 25,600 of them: "out of memory growing a tensor pool"). */
START_TEST(colocated_shards_take_slice_sized_snapshot_buffers)
{
    const char *sets[] = { "workers=64",
                           "servers=0",
                           "workload.dataset.dim=400",
                           "workload.model.hidden=[64]",
                           "workload.batch=1",
                           "protocol={\"name\": \"ps\", \"shards\": 64, \"placement\": "
                           "\"colocated\"}",
                           "stop.time_s=0.2",
                           "eval={\"every_s\": 0.01, \"samples\": 10}" };
    sim_scenario *sc = harness_load(real_json, "ps.json", sets, 8);
    uint64_t most = 0;
    sim_run_summary sum = harness_run(sc, NULL, buffer_bytes, &most);
    ck_assert_uint_gt(sum.iterations, 64 * 3);
    uint64_t model = 4 * (uint64_t)(400 * 64 + 64 + 64 * 4 + 4);
    ck_assert_msg(
        most <= 8 * 64 * model, "snapshot buffers took %llu bytes, %.0f models of %llu bytes",
        (unsigned long long)most, (double)most / (double)model, (unsigned long long)model);
    sim_scenario_destroy(sc);
}
END_TEST

/* A timing-only run's memory estimate counts the messages every worker has in flight to
 * every colocated shard: N^2 with N shards, about 742 bytes a pair once pulls and pushes run
 * (measured at 1,000 workers: 742 MB). The estimate counted none (no snapshot), so 10,000
 * workers, estimated at 90 MB, took 23 GB and more before the kernel's OOM killer stopped
 * them, where the memory check should have refused the run. */
START_TEST(a_timing_only_runs_estimate_counts_its_messages_to_every_shard)
{
    const char *sets[] = { "workers=300", "servers=0", "workload.message_bytes=4000",
                           "protocol={\"name\": \"ps\", \"placement\": \"colocated\"}",
                           "stop.time_s=0.000001" };
    sim_scenario *sc = harness_load(pst_none_json, "ps.json", sets, 5);
    sim_run_summary sum = harness_run(sc, NULL, NULL, NULL);
    ck_assert_msg(sum.memory_estimate_bytes >= (uint64_t)300 * 300 * 742,
                  "estimate %llu bytes for 90,000 messages in flight",
                  (unsigned long long)sum.memory_estimate_bytes);
    sim_scenario_destroy(sc);
}
END_TEST

START_TEST(bsp_workers_never_hold_more_than_two_versions_of_a_slice)
{
    /* A worker copies slice k of round t + 1 only after shard k has every member's gradient
     * of round t, so nobody still holds round t - 1's: at any moment (every 4 ms here, with
     * jittered workers) the workers' copies of a slice come in at most two versions, with
     * the shards on server hosts or colocated. Under ASP they drift apart. */
    versions v = observe_versions(NULL, 0, 3);
    ck_assert_uint_ge(v.evaluations, 250);
    ck_assert_uint_le(v.most, 2);
    const char *col[] = { "servers=0", "protocol.shards=4" };
    v = observe_versions(col, 2, 4);
    ck_assert_uint_le(v.most, 2);
    ck_assert_uint_eq(v.most, 2); /* a colocated shard's own worker gets its slice first */
    const char *asp[] = { "protocol.mode=asp" };
    v = observe_versions(asp, 1, 3);
    ck_assert_uint_ge(v.most, 3);
}
END_TEST

/* ---- timing --------------------------------------------------------------------------- */

/* BSP on a star with B = 8 Gbit/s (one byte per ns, so every rate below is exact), NIC
 * latency L = 50 us (a path: 2L = 100 us), N = 4 workers, compute C = 10 ms, K shards on K
 * server hosts, each slice at most S0 = ceil(S / K) bytes. Round 0 starts with N pull
 * requests of 64 B sharing each server's down link (N * 64 ns), then N slices share its up
 * link (N * S0 ns), then compute. At the push, each worker sends its gradient slices and
 * its next pull requests together: 2N flows share a server's down link, the requests
 * finish first, and all bytes are through after N * (S0 + 64) ns; the round closes and the
 * queued pulls are answered. So k rounds end (at the k-th push) at
 *   2L + 64N + k (2L + N S0 + C) + (k - 1) (2L + N (S0 + 64)). */
static sim_time bsp_hand_count(int64_t S0, int64_t k)
{
    const int64_t L2 = 100000, N = 4, C = 10000000;
    return L2 + 64 * N + k * (L2 + N * S0 + C) + (k - 1) * (L2 + N * (S0 + 64));
}

START_TEST(bsp_round_time_on_a_star_matches_the_hand_count)
{
    const char *one[] = { "stop={\"iterations\": 12}" };
    sim_scenario *sc = harness_load(pst_none_json, "ps.json", one, 1);
    char *dir = harness_tmpdir("ps");
    sim_run_summary sum = harness_run(sc, dir, NULL, NULL);
    ck_assert_str_eq(sum.stop_reason, "iterations");
    /* 100256 + 3 * 50100000 + 2 * 40100256 */
    ck_assert_int_eq(sum.sim_ns, 230600768);
    ck_assert_int_eq(sum.sim_ns, bsp_hand_count(10000000, 3));
    sim_scenario_destroy(sc);

    /* Two shards of an odd size: slices of 5000001 and 5000000 bytes. Shard 0, one byte a
     * worker longer, closes each round 4 ns after shard 1 and sets the pace. */
    const char *two[] = { "servers=2", "protocol.shards=2", "workload.message_bytes=10000001",
                          "stop={\"iterations\": 12}" };
    sc = harness_load(pst_none_json, "ps.json", two, 4);
    sum = harness_run(sc, dir, NULL, NULL);
    ck_assert_int_eq(sum.sim_ns, bsp_hand_count(5000001, 3));
    ck_assert_int_eq(sum.sim_ns, 130600788);
    ck_assert_double_eq(harness_report_value(dir, "rounds"), 2); /* the third is still open */
    sim_scenario_destroy(sc);
    harness_cleanup(dir);
}
END_TEST

/* ---- parameters ----------------------------------------------------------------------- */

static void refused(const char *const *sets, size_t n, const char *path, const char *msg)
{
    harness_expect_rejected(pst_none_json, "ps.json", sets, n, path, msg);
}

START_TEST(bad_parameters_are_refused_with_exact_messages)
{
    const char *mode[] = { "protocol.mode=lockstep" };
    refused(mode, 1, "$.protocol.mode", "must be one of bsp, asp, ssp, got \"lockstep\"");
    const char *servers[] = { "servers=2", "protocol.shards=3" };
    refused(servers, 2, "$.protocol.shards",
            "must be <= servers (2) with placement \"servers\", got 3");
    const char *none[] = { "servers=0", "protocol.placement=servers" };
    refused(none, 2, "$.protocol.shards",
            "must be <= servers (0) with placement \"servers\", got 1");
    const char *colocated[] = { "protocol.placement=colocated", "protocol.shards=5" };
    refused(colocated, 2, "$.protocol.shards",
            "must be <= workers (4) with placement \"colocated\", got 5");
    /* Without server hosts the placement defaults to colocated. */
    const char *dflt[] = { "servers=0", "protocol.shards=7" };
    refused(dflt, 2, "$.protocol.shards",
            "must be <= workers (4) with placement \"colocated\", got 7");
    const char *stale[] = { "protocol.mode=ssp", "protocol.staleness=-1" };
    refused(stale, 2, "$.protocol.staleness", "must be an integer in [0, 2147483647], got -1");
    const char *unread[] = { "protocol.staleness=3" };
    refused(unread, 1, "$.protocol.staleness",
            "unknown key (valid: name, mode, placement, shards, overlap, sync_overhead_ms)");
    const char *failover[] = { "protocol.placement=colocated", "protocol.failover_s=-1" };
    refused(failover, 2, "$.protocol.failover_s", "must be a number in [0, 1000000000], got -1");
    const char *on_servers[] = { "protocol.failover_s=1" };
    refused(on_servers, 1, "$.protocol.failover_s",
            "unknown key (valid: name, mode, placement, shards, overlap, sync_overhead_ms)");
    const char *zero[] = { "protocol.shards=0" };
    refused(zero, 1, "$.protocol.shards", "must be an integer in [1, 1048576], got 0");
}
END_TEST

START_TEST(defaults_are_written_into_the_resolved_scenario)
{
    /* One shard per host of the placement, as parameter servers shard a model over every
     * server machine: the scenario's server hosts, or without them every worker. */
    const char *ssp[] = { "protocol.mode=ssp" };
    sim_scenario *sc = harness_load(pst_none_json, "ps.json", ssp, 1);
    char *text = sim_scenario_resolved(sc, false);
    ck_assert_ptr_nonnull(strstr(text, "\"protocol\":{\"name\":\"ps\",\"mode\":\"ssp\","
                                       "\"staleness\":2,\"placement\":\"servers\",\"shards\":1,"
                                       "\"overlap\":true}"));
    free(text);
    sim_scenario_destroy(sc);
    const char *three[] = { "servers=3" };
    sc = harness_load(pst_none_json, "ps.json", three, 1);
    text = sim_scenario_resolved(sc, false);
    ck_assert_ptr_nonnull(strstr(text, "\"placement\":\"servers\",\"shards\":3,\"overlap\":true}"));
    free(text);
    sim_scenario_destroy(sc);
    const char *col[] = { "servers=0" };
    sc = harness_load(pst_none_json, "ps.json", col, 1);
    text = sim_scenario_resolved(sc, false);
    ck_assert_ptr_nonnull(strstr(text, "\"placement\":\"colocated\",\"shards\":4,\"overlap\":true,"
                                       "\"failover_s\":1}"));
    free(text);
    sim_scenario_destroy(sc);
}
END_TEST

START_TEST(the_default_shards_run_as_the_explicit_ones_bit_for_bit)
{
    /* 3 server hosts: {"name": "ps"} is BSP over 3 shards, output for output. */
    const char *dflt[] = { "servers=3", "protocol={\"name\": \"ps\"}" };
    const char *expl[] = { "servers=3", "protocol={\"name\": \"ps\", \"mode\": \"bsp\","
                                        " \"placement\": \"servers\", \"shards\": 3}" };
    harness_run_pair(harness_load(real_json, "ps.json", dflt, 2),
                     harness_load(real_json, "ps.json", expl, 2), "ps", NULL);
}
END_TEST

/* ---- end to end ----------------------------------------------------------------------- */

START_TEST(asp_training_lowers_the_loss_and_runs_are_deterministic)
{
    const char *sets[] = { "protocol={\"name\": \"ps\", \"mode\": \"asp\", \"shards\": 2}",
                           "workload.lr=0.05", "workload.momentum=0" };
    char *dirs[2];
    for (int i = 0; i < 2; i++) {
        sim_scenario *sc = harness_load(real_json, "ps.json", sets, 3);
        dirs[i] = harness_tmpdir("ps");
        harness_run(sc, dirs[i], NULL, NULL);
        sim_scenario_destroy(sc);
    }
    const char *names[] = { "metrics.csv", "workers.csv" };
    for (size_t k = 0; k < 2; k++) {
        char *a = harness_slurp(dirs[0], names[k]), *b = harness_slurp(dirs[1], names[k]);
        ck_assert_msg(strcmp(a, b) == 0, "%s differs", names[k]);
        free(a);
        free(b);
    }
    /* Columns 6 and 7 of metrics.csv: test loss and accuracy (of the server model). The
     * first row has no training loss yet: no iteration has started before the first pull. */
    char *m = harness_slurp(dirs[0], "metrics.csv");
    double first = NAN, last = NAN, acc = NAN;
    for (char *line = strchr(m, '\n') + 1; *line != '\0'; line = strchr(line, '\n') + 1) {
        const char *f = line;
        for (int c = 0; c < 5; c++)
            f = strchr(f, ',') + 1;
        char *end;
        last = strtod(f, &end);
        acc = strtod(end + 1, NULL);
        first = isnan(first) ? last : first;
    }
    ck_assert_double_lt(last, 0.5 * first);
    ck_assert_double_gt(acc, 0.8); /* 4 well separated classes; chance is 0.25 */
    free(m);
    harness_cleanup(dirs[0]);
    harness_cleanup(dirs[1]);
}
END_TEST

/* ---- overlap: gradient slices pushed during backward ------------------------------------ */

/* A timing-only run of none_json with `sets`: its summary, and worker 0's comm_overlap_s. */
static sim_run_summary overlap_run(const char *const *sets, size_t n, double *overlap_s,
                                   char **dir_out)
{
    sim_scenario *sc = harness_load(pst_none_json, "ps.json", sets, n);
    char *dir = harness_tmpdir("ps");
    sim_run_summary sum = harness_run(sc, dir, NULL, NULL);
    harness_csv t = harness_csv_read(dir, "workers.csv");
    *overlap_s = harness_csv_num(&t, 0, "comm_overlap_s");
    for (size_t w = 0; w < t.nrows; w++)
        ck_assert_double_le(harness_csv_num(&t, w, "comm_overlap_s"),
                            harness_csv_num(&t, w, "compute_s"));
    harness_csv_free(&t);
    sim_scenario_destroy(sc);
    if (dir_out != NULL)
        *dir_out = dir;
    else
        harness_cleanup(dir);
    return sum;
}

START_TEST(overlap_changes_nothing_when_every_slice_is_ready_at_the_end)
{
    /* One layer (the timing-only model without a profile): every slice holds layer 0, whose
     * gradient is complete when the iteration ends, so overlap true pushes as overlap false
     * does, output for output but run.json; and the hand count still holds. */
    const char *on[] = { "servers=3", "protocol.overlap=true", "stop={\"iterations\": 12}" };
    const char *off[] = { "servers=3", "protocol.overlap=false", "stop={\"iterations\": 12}" };
    char *a, *b;
    double oa, ob;
    sim_run_summary sa = overlap_run(on, 3, &oa, &a), sb = overlap_run(off, 3, &ob, &b);
    ck_assert_int_eq(sa.sim_ns, sb.sim_ns);
    ck_assert_double_eq(oa, 0);
    ck_assert_double_eq(ob, 0);
    static const char *const files[] = { "metrics.csv", "workers.csv" };
    for (size_t i = 0; i < 2; i++) {
        char *fa = harness_slurp(a, files[i]), *fb = harness_slurp(b, files[i]);
        ck_assert_str_eq(fa, fb);
        free(fa);
        free(fb);
    }
    harness_cleanup(a);
    harness_cleanup(b);
    const char *one[] = { "protocol.overlap=false", "stop={\"iterations\": 12}" };
    ck_assert_int_eq(overlap_run(one, 2, &oa, NULL).sim_ns, bsp_hand_count(10000000, 3));
}
END_TEST

START_TEST(overlap_pushes_slices_during_backward_and_shortens_rounds)
{
    /* The eight-layer profile (every layer over 1 MiB) on 8 server hosts, 8 shards: the
     * slices of the last layers are pushed while backward still runs, so with overlap each
     * worker computes while its pushes are in flight and the rounds end sooner, in every
     * mode; the same number of iterations is counted. */
    static const char *const modes3[] = { "protocol.mode=bsp", "protocol.mode=asp",
                                          "protocol.mode=ssp" };
    for (size_t m = 0; m < 3; m++) {
        const char *on[] = { "servers=8", "compute.profile=\"tests/data/profile_buckets.csv\"",
                             "workload.message_bytes=null", modes3[m],
                             "stop={\"iterations\": 40}" };
        const char *off[] = { "servers=8",
                              "compute.profile=\"tests/data/profile_buckets.csv\"",
                              "workload.message_bytes=null",
                              modes3[m],
                              "stop={\"iterations\": 40}",
                              "protocol.overlap=false" };
        double oa, ob;
        sim_run_summary sa = overlap_run(on, 5, &oa, NULL), sb = overlap_run(off, 6, &ob, NULL);
        ck_assert_uint_eq(sa.iterations, sb.iterations);
        ck_assert_int_lt(sa.sim_ns, sb.sim_ns);
        ck_assert_double_gt(oa, 0);
        ck_assert_double_eq(ob, 0);
    }
}
END_TEST

/* ---- per-slice pull: the forward pass waits only for the slices its layers need ---------- */

static const char profile_csv[] = "tests/data/profile_buckets.csv";

enum {
    PULL_N = 2,         /* workers */
    PULL_D = 30000000,  /* every iteration's duration, ns */
    PULL_SLOW_US = 8000 /* NIC latency of the last shard's server host */
};

/* The offset in an iteration of PULL_D ns of the forward pass of the layer holding the first
 * byte of each of the K slices (4 bytes a parameter: the profile's layers split the message
 * exactly), as kit/ps_server_setup.c and sim_ctx_layer_ns at SIM_LAYER_FORWARD_START find
 * them. */
static void slice_offsets(uint32_t K, sim_time *off)
{
    sim_layers l = { 0 };
    sim_err err = { 0 };
    ck_assert_int_eq(sim_layers_read_csv(&l, profile_csv, "$.compute.profile", &err), SIM_OK);
    uint64_t S = 4 * sim_layers_params(&l), at = 0, end = 4 * l.layer[0].params;
    size_t i = 0;
    for (uint32_t k = 0; k < K; k++) {
        while (end <= at && i + 1 < l.n)
            end += 4 * l.layer[++i].params;
        off[k] = i == 0 ? 0 : (sim_time)llround((double)PULL_D * l.fwd_end[i - 1]);
        at += S / K + (k < S % K ? 1 : 0);
    }
    sim_layers_fini(&l);
}

/* Runs the eight-layer profile with PULL_N workers and K shards on 8 server hosts, the last
 * shard's host PULL_SLOW_US away (its slice comes in last), BSP, and checks every
 * iteration's end in events.csv: with overlap, max_k (arrive_k + D - off_k) over the slices
 * of the pull before it (off_k: slice_offsets); without, the last arrival + D (the whole pull).
 * Returns how many iterations ended before the last arrival + D. */
static size_t check_pull_ends(uint32_t K, bool overlap)
{
    char shards[64], slow[160];
    snprintf(shards, sizeof(shards), "protocol.shards=%u", K);
    snprintf(slow, sizeof(slow), "network.overrides=[{\"workers\": [%u], \"latency_us\": %d}]",
             PULL_N + K - 1, PULL_SLOW_US);
    const char *sets[] = { "servers=8",
                           "workers=2",
                           "compute.iteration_ms=30",
                           "network.bandwidth_gbps=10",
                           "compute.profile=\"tests/data/profile_buckets.csv\"",
                           "workload.message_bytes=null",
                           "output.events=true",
                           "stop={\"iterations\": 16}",
                           shards,
                           slow,
                           overlap ? "protocol.overlap=true" : "protocol.overlap=false" };
    sim_scenario *sc = harness_load(pst_none_json, "ps.json", sets, 11);
    char *dir = harness_tmpdir("ps");
    sim_run_summary sum = harness_run(sc, dir, NULL, NULL);
    ck_assert_str_eq(sum.stop_reason, "iterations");
    sim_time off[8];
    slice_offsets(K, off);
    harness_csv t = harness_csv_read(dir, "events.csv");
    sim_time expect[PULL_N] = { 0 }, last[PULL_N] = { 0 };
    uint32_t got[PULL_N] = { 0 };
    size_t ends = 0, early = 0;
    for (size_t r = 0; r < t.nrows; r++) {
        const char *what = harness_csv_text(&t, r, "event");
        sim_time at = (sim_time)strtoll(harness_csv_text(&t, r, "time_ns"), NULL, 10);
        long w = strtol(harness_csv_text(&t, r, "worker"), NULL, 10);
        uint64_t arg = strtoull(harness_csv_text(&t, r, "arg"), NULL, 10);
        if (w < 0 || w >= PULL_N)
            continue;
        if (strcmp(what, "msg") == 0 && (uint32_t)arg == 2) { /* a slice */
            uint32_t k = (uint32_t)(arg >> 32);
            ck_assert_uint_lt(k, K);
            sim_time e = at + PULL_D - (overlap ? off[k] : 0);
            expect[w] = got[w] == 0 || e > expect[w] ? e : expect[w];
            last[w] = at;
            got[w]++;
        } else if (strcmp(what, "computed") == 0) {
            ck_assert_uint_eq(got[w], K);
            ck_assert_int_eq(at, expect[w]);
            early += at < last[w] + PULL_D ? 1 : 0;
            got[w] = 0;
            ends++;
        }
    }
    ck_assert_uint_ge(ends, 16);
    harness_csv_free(&t);
    sim_scenario_destroy(sc);
    harness_cleanup(dir);
    return early;
}

START_TEST(one_shard_pulls_whole_as_before)
{
    /* B = 1: one slice, holding layer 0, so the iteration starts when it is in. */
    ck_assert_uint_eq(check_pull_ends(1, true), 0);
    ck_assert_uint_eq(check_pull_ends(1, false), 0);
}
END_TEST

START_TEST(two_and_eight_shards_start_forward_when_its_layers_slices_are_in)
{
    /* B = 2 and 8: each iteration ends at max_k (arrive_k + D - off_k). With eight shards the
     * last slice (layers 6 and 7) comes in about 18 ms after the iteration's end, over 8.9 ms
     * (layer 6's forward offset) after the first slice: the forward pass starts before it,
     * and every iteration ends earlier than after a whole pull. */
    check_pull_ends(2, true);
    ck_assert_uint_ge(check_pull_ends(8, true), 16);
    ck_assert_uint_eq(check_pull_ends(8, false), 0);
}
END_TEST

START_TEST(per_slice_pull_leaves_the_training_bits_alone)
{
    /* BSP with the eight-layer profile's timing: the gradient is taken on the whole pulled
     * model whatever the order the slices come in, so overlap on or off, three shards or one,
     * every replica and the server end with the same bits. */
    const char *prof = "compute.profile=\"tests/data/profile_buckets.csv\"";
    const char *on[] = { prof, "protocol.overlap=true" };
    const char *off[] = { prof, "protocol.overlap=false", "protocol.shards=1" };
    uint64_t a[4], b[4], sa, sb;
    final_checksums(real_json, on, 2, 40, a, 4, &sa);
    final_checksums(real_json, off, 3, 40, b, 4, &sb);
    for (size_t w = 0; w < 4; w++) {
        ck_assert_uint_eq(a[w], b[w]);
        ck_assert_uint_eq(a[w] & LOW53, sa);
    }
    ck_assert_uint_eq(sa, sb);
}
END_TEST

Suite *test_suite(void)
{
    Suite *s = suite_create("ps");
    TCase *exact = tcase_create("exact");
    tcase_add_test(exact, bsp_replicas_equal_each_other_and_the_server_after_every_round);
    tcase_add_test(exact, bsp_workers_never_hold_more_than_two_versions_of_a_slice);
    tcase_add_test(exact, colocated_shards_take_slice_sized_snapshot_buffers);
    tcase_add_test(exact, a_timing_only_runs_estimate_counts_its_messages_to_every_shard);
    tcase_add_test(exact, one_worker_one_shard_bsp_is_plain_sgd);
    tcase_add_test(exact, bsp_on_shards_equals_ring_allreduce_bit_for_bit);
    tcase_add_test(exact, bsp_round_time_on_a_star_matches_the_hand_count);
    tcase_add_test(exact, overlap_changes_nothing_when_every_slice_is_ready_at_the_end);
    tcase_add_test(exact, overlap_pushes_slices_during_backward_and_shortens_rounds);
    tcase_add_test(exact, one_shard_pulls_whole_as_before);
    tcase_add_test(exact, two_and_eight_shards_start_forward_when_its_layers_slices_are_in);
    tcase_add_test(exact, per_slice_pull_leaves_the_training_bits_alone);
    tcase_set_timeout(exact, 120);
    suite_add_tcase(s, exact);
    TCase *params = tcase_create("parameters");
    tcase_add_test(params, bad_parameters_are_refused_with_exact_messages);
    tcase_add_test(params, defaults_are_written_into_the_resolved_scenario);
    tcase_add_test(params, the_default_shards_run_as_the_explicit_ones_bit_for_bit);
    suite_add_tcase(s, params);
    TCase *e2e = tcase_create("end_to_end");
    tcase_add_test(e2e, asp_training_lowers_the_loss_and_runs_are_deterministic);
    tcase_set_timeout(e2e, 120);
    suite_add_tcase(s, e2e);
    return s;
}
