/* Ripples end to end (PROTOCOLS 4.8): after a P-Reduce the members are bitwise equal to
 * their mean and non-members are untouched; with zero gradients the sum over workers is kept
 * in every group mode; every local step is followed by exactly one group (own or joined) and a
 * worker asks only with none pending; the Group Buffer has at most half the plain generator's
 * conflicts (none at depth 1); Group Division over the free workers is the default, run.json
 * records it, it has no conflict and a slow worker holds back only its own groups; the
 * static grid gives the global mean after d rounds; a randomized stress over 600
 * configurations (sizes, modes, speeds, failures) never stalls with the global order, while
 * the test-only arrival order deadlocks (the run stops as "stalled"). Runs use a tiny
 * synthetic data set or the timing-only model. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>
#include <gsl/gsl_rng.h>

#include "harness.h"
#include "protocols/registry.h"
#include "runtime/arena.h"
#include "runtime/ctx.h"
#include "runtime/proto.h"
#include "runtime/run.h"
#include "scenario/scenario.h"

/* Float unit roundoff. */
static const double U = 0x1p-24;

/* Real tensors, zero gradients (lr 0): softmax on 8 features and 3 classes (27 parameters),
 * each worker drawing its own initial model, no jitter. An iteration is 10 ms of compute; a
 * 108-byte model moves in about 0.1 ms per ring step. */
static const char zero_json[] =
    "{\"seed\": 9028, \"workers\": 6, \"compute\": {\"iteration_ms\": 10},"
    " \"network\": {\"bandwidth_gbps\": 10, \"latency_us\": 50},"
    " \"workload\": {\"dataset\": {\"name\": \"synthetic\", \"samples\": 960,"
    " \"test_samples\": 100, \"dim\": 8, \"classes\": 3, \"separation\": 3},"
    " \"model\": {\"name\": \"softmax\"}, \"init\": \"independent\", \"batch\": 8, \"lr\": 0},"
    " \"protocol\": {\"name\": \"ripples\"}, \"stop\": {\"time_s\": 0.06},"
    " \"eval\": {\"every_s\": 0.015, \"samples\": 100}}";

/* Every worker's model at each evaluation (tests/harness.h). */
typedef harness_models observer;

/* The mean sim_tensor_mean computes: summed in float in the order given, divided once. */
static float mean_of(const float *const *xs, size_t k, size_t i)
{
    float s = xs[0][i];
    for (size_t v = 1; v < k; v++)
        s = s + xs[v][i];
    return s / (float)k;
}

/* ---- P-Reduce ---- */

START_TEST(after_a_p_reduce_members_are_bitwise_their_mean_and_non_members_untouched)
{
    /* Static grid [3, 2] on 6 workers: iteration 0 groups the lines along axis 0, {0, 1, 2}
     * and {3, 4, 5}. Workers 3, 4, 5 are 10x slower: at 15 ms group {0, 1, 2} has finished
     * (about 10.2 ms) and {3, 4, 5} is still computing (until 100 ms). */
    const char *sets[] = { "protocol.groups=static", "protocol.grid=[3, 2]",
                           ("stragglers=[{\"kind\": \"fixed\", \"workers\": [3, 4, 5],"
                            " \"slowdown\": 10}]") };
    observer *obs = calloc(1, sizeof(*obs));
    char *summary;
    harness_run_models(zero_json, sets, 3, obs, &summary);
    ck_assert_uint_ge(obs->n, 2);
    ck_assert_int_eq(obs->t_ns[1], 15000000);
    float(*x0)[HARNESS_OBS_PARAMS] = obs->x[0], (*x1)[HARNESS_OBS_PARAMS] = obs->x[1];
    const float *in[] = { x0[0], x0[1], x0[2] };
    for (size_t i = 0; i < obs->p; i++) {
        float m = mean_of(in, 3, i);
        for (uint32_t w = 0; w < 3; w++)
            ck_assert_msg(x1[w][i] == m, "worker %u, param %zu: %.9g vs %.9g", w, i,
                          (double)x1[w][i], (double)m);
        /* ... which is the arithmetic mean, to the rounding of two sums and a division. */
        double exact = ((double)x0[0][i] + (double)x0[1][i] + (double)x0[2][i]) / 3.0;
        ck_assert_double_eq_tol((double)m, exact, 4 * U * obs->max_abs);
    }
    /* The inputs differ (independent initial models), so the mean changed something. */
    ck_assert(memcmp(x1[0], x0[0], obs->p * sizeof(float)) != 0);
    for (uint32_t w = 3; w < 6; w++)
        ck_assert_mem_eq(x1[w], x0[w], obs->p * sizeof(float));
    ck_assert_double_eq(harness_report_in(summary, "groups_failed"), 0);
    free(summary);
    free(obs);
}
END_TEST

/* ---- zero gradients: the sum over workers is kept ---- */

static void check_sum_kept(const char *const *sets, size_t nsets)
{
    observer *obs = calloc(1, sizeof(*obs));
    char *summary;
    harness_run_models(zero_json, sets, nsets, obs, &summary);
    double groups = harness_report_in(summary, "groups_done");
    ck_assert_double_ge(groups, 20);
    ck_assert_uint_ge(obs->n, 20);
    /* Each group's mean errs by at most (gs - 1 + 1 + 1) U max|x| per element and member:
     * at most 5 * 4 U max|x| on the sum per group of at most 4 members. */
    double tol = groups * 20 * U * obs->max_abs;
    for (size_t k = 1; k < obs->n; k++)
        for (size_t i = 0; i < obs->p; i++)
            ck_assert_msg(fabs(obs->sum[k][i] - obs->sum[0][i]) <= tol,
                          "t %lld, param %zu: %.9g vs %.9g (tol %.3g)", obs->t_ns[k], i,
                          obs->sum[k][i], obs->sum[0][i], tol);
    /* And the models mixed: the last observation's spread is below the first's. */
    double d0 = 0, d1 = 0;
    size_t last = obs->n - 1;
    for (uint32_t w = 0; w < obs->w; w++)
        for (size_t i = 0; i < obs->p; i++) {
            double e0 = (double)obs->x[0][w][i] - obs->sum[0][i] / (double)obs->w;
            double e1 = (double)obs->x[last][w][i] - obs->sum[last][i] / (double)obs->w;
            d0 += e0 * e0;
            d1 += e1 * e1;
        }
    ck_assert_double_lt(d1, d0 * 1e-2);
    free(summary);
    free(obs);
}

START_TEST(zero_gradients_keep_the_sum_over_workers_in_every_mode)
{
    static const char *const modes[][3] = {
        { "protocol.groups=random", "workers=8", "protocol.group_size=3" },
        { "protocol.groups=buffer", "workers=8", "protocol.buffer_depth=3" },
        { "protocol.groups=division", "workers=8", "protocol.group_size=3" },
        { "protocol.groups=static", "workers=8", "protocol.grid=[2, 2, 2]" },
        { "protocol.batch=all", "workers=7", "protocol.busy=skip" },
        { "protocol.batch=all", "workers=8", "protocol.busy=join" },
        { "protocol.groups=division", "workers=7", "protocol.group_size=2" },
    };
    const char *sets[] = { modes[_i][0], modes[_i][1], modes[_i][2], "stop.time_s=0.4",
                           "eval.every_s=0.0137" };
    check_sum_kept(sets, 5);
}
END_TEST

/* ---- the report ---- */

/* A timing-only 16-worker cluster with worker 5 three times slower and some jitter: 20 ms per
 * iteration, 1 MB messages, groups of 3. */
static const char slow_json[] =
    "{\"seed\": 2301, \"workers\": 16, \"compute\": {\"iteration_ms\": 20, \"jitter_sigma\": 0.1},"
    " \"stragglers\": [{\"kind\": \"fixed\", \"workers\": [5], \"slowdown\": 3}],"
    " \"network\": {\"bandwidth_gbps\": 10, \"latency_us\": 50},"
    " \"workload\": {\"model\": {\"name\": \"none\"}, \"message_bytes\": 1000000},"
    " \"protocol\": {\"name\": \"ripples\"}, \"stop\": {\"time_s\": 3},"
    " \"eval\": {\"every_s\": 0.5}}";

/* summary.json's "iterations" (local steps over all workers). */
static double iterations_of(const char *summary)
{
    const char *at = strstr(summary, "\"iterations\": ");
    ck_assert_ptr_nonnull(at);
    return strtod(at + strlen("\"iterations\": "), NULL);
}

START_TEST(every_local_step_is_followed_by_exactly_one_group)
{
    /* A worker computes again once it has passed one group since its last step, its own or
     * one it was pulled into; without failures each pass is an execution. So executions never
     * exceed the local steps, and fall short only by the steps whose group is not done yet (at
     * most one per worker). Group members execute a finished group each: groups_done * 3 <=
     * executions. Before, a worker executed its own group and the ~2 it was pulled into. */
    static const char *const modes[] = { "protocol.groups=random", "protocol.groups=buffer",
                                         "protocol.batch=all", "protocol.groups=division" };
    const char *sets[] = { modes[_i] };
    char *summary;
    harness_run_models(slow_json, sets, 1, NULL, &summary);
    double steps = iterations_of(summary), execs = harness_report_in(summary, "group_executions");
    double done = harness_report_in(summary, "groups_done"),
           formed = harness_report_in(summary, "groups_formed");
    ck_assert_double_ge(steps, 500);
    ck_assert_double_le(execs, steps);
    ck_assert_double_ge(execs, steps - 16);
    ck_assert_double_le(3 * done, execs);
    ck_assert_double_eq_tol(harness_report_in(summary, "executions_per_step"), execs / steps, 1e-9);
    /* A worker asks only with no group pending: it has at most one group of its own pending
     * or on its way, so the groups formed are at most the finished ones plus one per worker;
     * before, every step asked (requests close to steps, three times more). A request forms
     * one group, or with Group Division over the free workers (the last mode) one batch. */
    double per = _i == 3 ? harness_report_in(summary, "batches") : formed;
    ck_assert_double_eq(harness_report_in(summary, "requests"),
                        per + harness_report_in(summary, "redundant_requests"));
    ck_assert_double_le(formed, steps / 3 + 16);
    free(summary);
}
END_TEST

START_TEST(the_group_buffer_has_fewer_conflicts_than_random_groups)
{
    /* A conflict is a member that already has a group pending when a group is formed. The
     * plain generator draws partners regardless (about two conflicts in three members with
     * this slow worker); the buffer draws free workers first, so its conflicts are at most
     * half the plain generator's, per group and in total. */
    const char *random[] = { "protocol.groups=random" };
    const char *buffer[] = { "protocol.groups=buffer" };
    char *a, *b;
    harness_run_models(slow_json, random, 1, NULL, &a);
    harness_run_models(slow_json, buffer, 1, NULL, &b);
    double ca = harness_report_in(a, "conflicts"), cb = harness_report_in(b, "conflicts");
    double ga = harness_report_in(a, "groups_formed"), gb = harness_report_in(b, "groups_formed");
    ck_assert_double_ge(ca, 100);
    ck_assert_double_le(cb, ca / 2);
    ck_assert_double_le(cb / gb, ca / ga / 2);
    /* The plain generator forms a group for every request; the buffer answers a request from
     * a worker it already put in a group with that group. */
    ck_assert_double_eq(harness_report_in(a, "redundant_requests"), 0);
    ck_assert_double_eq(harness_report_in(a, "requests"), ga);
    free(a);
    free(b);
    /* With buffer_depth 1 no partner with a group pending is drawn, and a requester with one
     * pending forms nothing: no conflict at all (groups may be smaller). */
    const char *depth1[] = { "protocol.groups=buffer", "protocol.buffer_depth=1" };
    harness_run_models(slow_json, depth1, 2, NULL, &b);
    ck_assert_double_ge(harness_report_in(b, "groups_done"), 300);
    ck_assert_double_eq(harness_report_in(b, "conflicts"), 0);
    free(b);
}
END_TEST

START_TEST(the_default_generator_is_group_division_and_run_json_says_so)
{
    /* Static groups have no generator and no conflicts; Group Division over the free workers
     * is the default. */
    sim_scenario *sc = harness_load(slow_json, "ripples.json", NULL, 0);
    char *dir = harness_tmpdir("ripples");
    harness_run(sc, dir, NULL, NULL);
    char *run = harness_slurp(dir, "run.json");
    ck_assert_ptr_nonnull(strstr(run, "\"groups\": \"division\""));
    ck_assert_ptr_nonnull(strstr(run, "\"batch\": \"free\""));
    ck_assert_ptr_nonnull(strstr(run, "\"busy\": \"join\""));
    free(run);
    harness_cleanup(dir);
    sim_scenario_destroy(sc);
    const char *stat[] = { "protocol.groups=static", "protocol.grid=[4, 4]" };
    char *summary;
    harness_run_models(slow_json, stat, 2, NULL, &summary);
    ck_assert_double_ge(harness_report_in(summary, "groups_done"), 100);
    ck_assert_double_eq(harness_report_in(summary, "conflicts"), 0);
    ck_assert_double_eq(harness_report_in(summary, "requests"), 0);
    free(summary);
}
END_TEST

/* run.json of the zero-gradient scenario with `sets`. */
static char *resolved_with(const char *const *sets, size_t n)
{
    sim_scenario *sc = harness_load(zero_json, "ripples.json", sets, n);
    char *dir = harness_tmpdir("ripples");
    harness_run(sc, dir, NULL, NULL);
    char *run = harness_slurp(dir, "run.json");
    harness_cleanup(dir);
    sim_scenario_destroy(sc);
    return run;
}

static void expect_resolved(const char *const *sets, size_t n, const char *groups, const char *grid)
{
    char *run = resolved_with(sets, n);
    ck_assert_msg(strstr(run, groups) != NULL, "%s not in run.json (%s)", groups,
                  n > 0 ? sets[0] : "no sets");
    if (grid != NULL)
        ck_assert_msg(strstr(run, grid) != NULL, "%s not in run.json", grid);
    free(run);
}

START_TEST(the_default_is_the_static_grid_on_a_homogeneous_cluster_and_division_elsewhere)
{
    /* 6 alike workers: the paper's static schedule, on the near-square grid 2 x 3. */
    expect_resolved(NULL, 0, "\"groups\": \"static\"", "\"grid\": [2, 3]");
    const char *given[] = { "protocol.groups=auto", "protocol.grid=[3, 2]" };
    expect_resolved(given, 2, "\"groups\": \"static\"", "\"grid\": [3, 2]");
    /* Anything that makes one worker unlike the others, a group size asked for, or a prime
     * number of workers (no grid but 1 x n): Group Division. */
    const char *other[][1] = {
        { "compute.speeds=[1, 1, 1, 1, 1, 1.5]" },
        { "stragglers=[{\"kind\": \"random\", \"workers\": [4], \"slowdown\": 2, "
          "\"probability\": 0.1}]" },
        { "network.overrides=[{\"workers\": [2], \"bandwidth_gbps\": 5}]" },
        { "protocol.group_size=3" },
        { "workers=7" },
    };
    for (size_t i = 0; i < sizeof(other) / sizeof(other[0]); i++)
        expect_resolved(other[i], 1, "\"groups\": \"division\"", NULL);
    /* The resolved default runs exactly as the static schedule given by hand. */
    const char *stat[] = { "protocol.groups=static", "protocol.grid=[2, 3]" };
    char *a, *b;
    harness_run_models(zero_json, NULL, 0, NULL, &a);
    harness_run_models(zero_json, stat, 2, NULL, &b);
    harness_strip_wall(a);
    harness_strip_wall(b);
    ck_assert_str_eq(a, b);
    ck_assert_double_eq(harness_report_in(a, "requests"), 0);
    free(a);
    free(b);
}
END_TEST

/* The iterations of summary.json and of the workers other than `slow` (workers.csv). */
static void iterations_but(const char *const *sets, size_t n, uint32_t slow, double *conflicts,
                           double *others)
{
    sim_scenario *sc = harness_load(slow_json, "ripples.json", sets, n);
    char *dir = harness_tmpdir("ripples");
    harness_run(sc, dir, NULL, NULL);
    char *summary = harness_slurp(dir, "summary.json");
    *conflicts = harness_report_in(summary, "conflicts");
    free(summary);
    char *csv = harness_slurp(dir, "workers.csv");
    *others = 0;
    char *line = strchr(csv, '\n'); /* worker,speed,iterations,... */
    for (uint32_t w = 0; line != NULL && line[1] != '\0'; w++, line = strchr(line + 1, '\n')) {
        char *field = strchr(line + 1, ',');
        field = strchr(field + 1, ',');
        if (w != slow)
            *others += strtod(field + 1, NULL);
    }
    free(csv);
    harness_cleanup(dir);
    sim_scenario_destroy(sc);
}

START_TEST(group_division_issues_no_busy_worker_a_group_so_a_slow_one_holds_back_only_its_own)
{
    /* Worker 5 is 3x slower (slow_json). The default Group Division draws each batch from the
     * workers with no group pending and issues it whole, so no member ever has two groups
     * pending (no conflict), and the slow worker delays only the group it is in: its two
     * partners wait for its computation, at most 40 ms of its 60 ms per step, about
     * 2 x 40 / (15 x 60) = 9% of the fast workers' time. They keep at least 80% of their
     * iterations without the slow worker (87.5% when written). Before, each batch put the
     * slow worker in a group whatever it had pending (386 conflicts here) and the whole
     * cluster ran at its pace (42%). */
    const char *none[] = { "stragglers=[]" };
    double c, slow, even;
    iterations_but(NULL, 0, 5, &c, &slow);
    ck_assert_double_eq(c, 0);
    iterations_but(none, 1, 5, &c, &even);
    ck_assert_double_ge(even, 1500);
    ck_assert_double_ge(slow, 0.8 * even);
}
END_TEST

/* ---- static grid: the global mean after d rounds ---- */

START_TEST(the_static_grid_gives_the_global_mean_after_d_rounds)
{
    /* Grid [3, 2] (d = 2), all workers alike: round 1 ends at about 10.3 ms, round 2 at
     * about 20.5 ms, round 3 at about 30.7 ms; the observation at 25 ms sees two rounds. */
    const char *sets[] = { "protocol.groups=static", "protocol.grid=[3, 2]", "eval.every_s=0.025" };
    observer *obs = calloc(1, sizeof(*obs));
    harness_run_models(zero_json, sets, 3, obs, NULL);
    ck_assert_int_eq(obs->t_ns[1], 25000000);
    for (size_t i = 0; i < obs->p; i++) {
        double mean = obs->sum[0][i] / 6.0;
        for (uint32_t w = 0; w < 6; w++) {
            /* Every worker holds the same bits: the lines of axis 1 average equal rows. */
            ck_assert(obs->x[1][w][i] == obs->x[1][0][i]);
            /* A mean of 3 then a mean of 2: at most 6 roundings of values <= max|x|. */
            ck_assert_double_eq_tol((double)obs->x[1][w][i], mean, 6 * U * obs->max_abs);
        }
    }
    /* After one round (at 15 ms with eval every 15 ms) they were not yet equal. */
    free(obs);
    observer *one = calloc(1, sizeof(*one));
    harness_run_models(zero_json, (const char *[]){ sets[0], sets[1] }, 2, one, NULL);
    ck_assert_int_eq(one->t_ns[1], 15000000);
    ck_assert(memcmp(one->x[1][0], one->x[1][1], one->p * sizeof(float)) == 0);
    ck_assert(memcmp(one->x[1][0], one->x[1][3], one->p * sizeof(float)) != 0);
    free(one);
}
END_TEST

/* Runs zero_json's 6 workers under the static racks schedule on racks of rack_size, observed
 * every 25 ms (nsets 4) or at the default period, 15 ms (nsets 3). Free the observer. */
static observer *run_racks(unsigned rack_size, size_t nsets)
{
    char net[160];
    snprintf(net, sizeof(net),
             "network={\"topology\": \"racks\", \"rack_size\": %u, \"bandwidth_gbps\": 10,"
             " \"latency_us\": 50}",
             rack_size);
    const char *sets[] = { "protocol.groups=static", "protocol.static=racks", net,
                           "eval.every_s=0.025" };
    observer *obs = calloc(1, sizeof(*obs));
    ck_assert_ptr_nonnull(obs);
    harness_run_models(zero_json, sets, nsets, obs, NULL);
    return obs;
}

/* Fails unless, observed at 25 ms (after two rounds), every worker of 6 holds the same bits,
 * the global mean (a mean of 3 then of 2, or of 2 then of 3: at most 6 roundings of values
 * <= max|x|). */
static void expect_the_global_mean_at_25_ms(const observer *obs)
{
    ck_assert_int_eq(obs->t_ns[1], 25000000);
    for (size_t i = 0; i < obs->p; i++)
        for (uint32_t w = 0; w < 6; w++) {
            ck_assert(obs->x[1][w][i] == obs->x[1][0][i]);
            ck_assert_double_eq_tol((double)obs->x[1][w][i], obs->sum[0][i] / 6.0,
                                    6 * U * obs->max_abs);
        }
}

START_TEST(the_racks_schedule_alternates_intra_and_inter_rack_groups)
{
    /* Racks of 3 on 6 workers: round 1 averages {0, 1, 2} and {3, 4, 5}, round 2 the pairs
     * {0, 3}, {1, 4}, {2, 5} (one worker of each rack): the global mean after 2 rounds, as the
     * grid [3, 2] gives it. Racks add their uplinks' latency (5 us) to round 2. */
    observer *obs = run_racks(3, 4);
    expect_the_global_mean_at_25_ms(obs);
    free(obs);
    /* After round 1 (observed at 15 ms) the racks are averaged, not yet the pairs. */
    obs = run_racks(3, 3);
    ck_assert_int_eq(obs->t_ns[1], 15000000);
    size_t bytes = obs->p * sizeof(float);
    ck_assert_mem_eq(obs->x[1][0], obs->x[1][2], bytes);
    ck_assert_mem_eq(obs->x[1][3], obs->x[1][5], bytes);
    ck_assert(memcmp(obs->x[1][0], obs->x[1][3], bytes) != 0);
    free(obs);
}
END_TEST

START_TEST(the_racks_schedule_sizes_its_groups_from_the_racks)
{
    /* Racks of 2 on 6 workers: round 1 averages the racks {0, 1}, {2, 3}, {4, 5}, round 2 one
     * worker of each, {0, 2, 4} and {1, 3, 5}: groups larger than a rack, which the group
     * table (sized from the scenario before the run, in the arena) must hold. The global mean
     * after 2 rounds. */
    observer *obs = run_racks(2, 4);
    expect_the_global_mean_at_25_ms(obs);
    free(obs);
}
END_TEST

START_TEST(the_generator_s_reads_of_pending_groups_are_counted_as_peer_reads)
{
    /* The buffer's GG reads each candidate's pending groups without a message: summary.json
     * counts them (peer_reads). */
    const char *buffer[] = { "protocol.groups=buffer", "stop.time_s=0.1" };
    char *summary;
    harness_run_models(zero_json, buffer, 2, NULL, &summary);
    const char *at = strstr(summary, "\"peer_reads\": ");
    ck_assert_msg(at != NULL, "no peer_reads in %s", summary);
    ck_assert_double_gt(strtod(at + strlen("\"peer_reads\": "), NULL), 0);
    free(summary);
}
END_TEST

START_TEST(a_p_reduce_takes_the_ring_time_of_its_group)
{
    /* Timing-only, static grid [3, 2] on 6 workers, 3 MB models, 10 Gbit/s, 50 us per NIC, no
     * jitter. Groups along axis 0 have 3 members: 4 steps of 1 MB, each 100 us + 800 us; along
     * axis 1, 2 members: 2 steps of 1.5 MB, each 100 us + 1200 us. Iterations alternate
     * 10 + 3.6 ms and 10 + 2.6 ms: the 3rd computation of every worker ends at
     * 13.6 + 12.6 + 10 = 36.2 ms, when the 18th iteration is counted. */
    const char *json =
        "{\"seed\": 5, \"workers\": 6, \"compute\": {\"iteration_ms\": 10},"
        " \"network\": {\"bandwidth_gbps\": 10, \"latency_us\": 50},"
        " \"workload\": {\"model\": {\"name\": \"none\"}, \"message_bytes\": 3000000},"
        " \"protocol\": {\"name\": \"ripples\", \"groups\": \"static\", \"grid\": [3, 2]},"
        " \"stop\": {\"iterations\": 18, \"time_s\": 1}}";
    sim_scenario *sc = harness_load(json, "timing.json", NULL, 0);
    sim_run_summary sum = harness_run(sc, NULL, NULL, NULL);
    ck_assert_str_eq(sum.stop_reason, "iterations");
    ck_assert_int_eq(sum.sim_ns, 36200000);
    sim_scenario_destroy(sc);
}
END_TEST

/* ---- failures ---- */

START_TEST(a_down_member_fails_its_group_and_members_keep_their_models)
{
    /* Random groups of 3 over 6 workers; worker 4 fails at 10.1 ms, while the first groups'
     * rings run, for good. Failed groups are counted, the run goes on, and no later group
     * has worker 4: its model stays what it was when it failed. */
    const char *sets[] = {
        "protocol.groups=random", "stop.time_s=0.3", "eval.every_s=0.05",
        "stragglers=[{\"kind\": \"failure\", \"workers\": [4], \"at_s\": 0.0101}]"
    };
    observer *obs = calloc(1, sizeof(*obs));
    char *summary;
    sim_run_summary sum = harness_run_models(zero_json, sets, 4, obs, &summary);
    ck_assert_str_eq(sum.stop_reason, "time");
    ck_assert_double_ge(harness_report_in(summary, "groups_failed"), 1);
    ck_assert_double_ge(harness_report_in(summary, "groups_done"), 20);
    for (size_t k = 2; k < obs->n; k++)
        ck_assert_mem_eq(obs->x[k][4], obs->x[1][4], obs->p * sizeof(float));
    free(summary);
    free(obs);
}
END_TEST

/* ---- deadlock freedom ---- */

/* A random timing-only scenario for the stress: 2..12 workers, group mode, speeds, jitter, a
 * random slowdown, and up to two failures (one recovering) of workers other than the GG's
 * host (worker 0 without servers). */
static void random_scenario(char *buf, size_t size, gsl_rng *r, bool arrival)
{
    static const char *const modes[] = { "random", "buffer", "division", "static" };
    uint32_t n = 2 + (uint32_t)gsl_rng_uniform_int(r, 11);
    uint32_t gs = 2 + (uint32_t)gsl_rng_uniform_int(r, n - 1 < 4 ? n - 1 : 4);
    int mode = arrival ? 0 : (int)gsl_rng_uniform_int(r, 4);
    bool servers = gsl_rng_uniform(r) < 0.5;
    char proto[256], speeds[256] = "", strag[512] = "";
    if (mode == 3) {
        uint32_t a = 1;
        for (uint32_t d = 2; d * d <= n; d++)
            if (n % d == 0 && gsl_rng_uniform(r) < 0.7)
                a = d;
        if (a > 1)
            snprintf(proto, sizeof(proto), "\"groups\": \"static\", \"grid\": [%u, %u]", a, n / a);
        else
            snprintf(proto, sizeof(proto), "\"groups\": \"static\", \"grid\": [%u]", n);
    } else {
        uint32_t depth = 1 + (uint32_t)gsl_rng_uniform_int(r, 4);
        bool join = gsl_rng_uniform(r) < 0.5, all = gsl_rng_uniform(r) < 0.5;
        snprintf(proto, sizeof(proto),
                 "\"groups\": \"%s\", \"group_size\": %u, \"buffer_depth\": %u,"
                 " \"busy\": \"%s\", \"batch\": \"%s\"%s",
                 modes[mode], gs, depth, join ? "join" : "skip", all ? "all" : "free",
                 arrival ? ", \"order\": \"arrival\"" : "");
    }
    for (uint32_t w = 0; w < n; w++) {
        size_t used = strlen(speeds);
        snprintf(speeds + used, sizeof(speeds) - used, "%s%.3f", w > 0 ? ", " : "",
                 0.25 + 1.75 * gsl_rng_uniform(r));
    }
    double prob = 0.2 * gsl_rng_uniform(r), slowdown = 1.0 + 4.0 * gsl_rng_uniform(r);
    size_t used = (size_t)snprintf(
        strag, sizeof(strag), "{\"kind\": \"random\", \"probability\": %.3f, \"slowdown\": %.2f}",
        prob, slowdown);
    for (int f = 0; f < 2 && n > 2 && gsl_rng_uniform(r) < 0.6; f++) {
        uint32_t w = 1 + (uint32_t)gsl_rng_uniform_int(r, n - 1);
        double at = 0.02 + 0.2 * gsl_rng_uniform(r);
        if (f == 0) {
            double back = at + 0.01 + 0.1 * gsl_rng_uniform(r);
            used += (size_t)snprintf(strag + used, sizeof(strag) - used,
                                     ", {\"kind\": \"failure\", \"workers\": [%u], \"at_s\": %.4f,"
                                     " \"recover_s\": %.4f}",
                                     w, at, back);
        } else
            used += (size_t)snprintf(strag + used, sizeof(strag) - used,
                                     ", {\"kind\": \"failure\", \"workers\": [%u], \"at_s\": %.4f}",
                                     w, at);
    }
    unsigned long seed = gsl_rng_get(r);
    double iter_ms = 1.0 + 9.0 * gsl_rng_uniform(r), jitter = 0.3 * gsl_rng_uniform(r);
    double gbps = 1.0 + 24.0 * gsl_rng_uniform(r), lat_us = 1.0 + 100.0 * gsl_rng_uniform(r);
    unsigned long bytes = 1000ul + gsl_rng_uniform_int(r, 2000000);
    snprintf(buf, size,
             "{\"seed\": %lu, \"workers\": %u, \"servers\": %u,"
             " \"compute\": {\"iteration_ms\": %.2f, \"jitter_sigma\": %.2f, \"speeds\": [%s]},"
             " \"stragglers\": [%s],"
             " \"network\": {\"bandwidth_gbps\": %.2f, \"latency_us\": %.1f},"
             " \"workload\": {\"model\": {\"name\": \"none\"}, \"message_bytes\": %lu},"
             " \"protocol\": {\"name\": \"ripples\", %s},"
             " \"stop\": {\"time_s\": 0.5}, \"eval\": {\"every_s\": 0.05}}",
             seed, n, servers ? 1u : 0u, iter_ms, jitter, speeds, strag, gbps, lat_us, bytes,
             proto);
}

/* Runs the scenario; returns its stop reason's first letter ('t' time, 's' stalled). */
static char run_text(const char *json)
{
    sim_scenario *sc = harness_load(json, "stress.json", NULL, 0);
    sim_run_summary sum = harness_run(sc, NULL, NULL, NULL);
    char c = sum.stop_reason[0];
    ck_assert_msg(c == 't' || c == 's', "stopped: %s\n%s", sum.stop_reason, json);
    ck_assert_msg(sum.iterations > 0, "no iteration\n%s", json);
    sim_scenario_destroy(sc);
    return c;
}

START_TEST(six_hundred_random_configurations_never_stall_with_the_global_order)
{
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 1909080290ul);
    char json[4096];
    for (int k = 0; k < 600; k++) {
        random_scenario(json, sizeof(json), r, false);
        ck_assert_msg(run_text(json) == 't', "configuration %d stalled\n%s", k, json);
    }
    gsl_rng_free(r);
}
END_TEST

START_TEST(executing_groups_in_arrival_order_deadlocks)
{
    /* Three workers, groups of two, equal speeds: each forms its own group at the same
     * instant and puts it first; the invitations arrive behind. {0, a}, {1, b}, {2, c} with
     * every worker waiting first in its own group forms a waits-for cycle unless two pick each
     * other, and the run stalls at some iteration. */
    const char *json =
        "{\"seed\": 31, \"workers\": 3, \"compute\": {\"iteration_ms\": 5},"
        " \"workload\": {\"model\": {\"name\": \"none\"}, \"message_bytes\": 100000},"
        " \"protocol\": {\"name\": \"ripples\", \"groups\": \"random\", \"group_size\": 2,"
        " \"order\": \"arrival\"},"
        " \"stop\": {\"time_s\": 2}, \"eval\": {\"every_s\": 0.05}}";
    ck_assert_int_eq(run_text(json), 's');
    /* The same scenario with the global order runs to the end. */
    char global[1024];
    snprintf(global, sizeof(global), "%s", json);
    char *at = strstr(global, ", \"order\": \"arrival\"");
    memmove(at, at + strlen(", \"order\": \"arrival\""),
            strlen(at + strlen(", \"order\": \"arrival\"")) + 1);
    ck_assert_int_eq(run_text(global), 't');
    /* And random configurations in arrival order stall too (6 of these 40 when written). */
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 2020);
    int stalled = 0;
    for (int k = 0; k < 40; k++) {
        random_scenario(global, sizeof(global), r, true);
        stalled += run_text(global) == 's';
    }
    gsl_rng_free(r);
    ck_assert_int_ge(stalled, 1);
}
END_TEST

/* ---- configuration ---- */

START_TEST(bad_parameters_name_their_path)
{
    const char *grid[] = { "protocol.groups=static", "protocol.grid=[4, 2]" };
    harness_expect_rejected(zero_json, "ripples.json", grid, 2, "$.protocol.grid",
                            "the sizes must multiply to workers (6)");
    const char *big[] = { "protocol.group_size=7" };
    harness_expect_rejected(zero_json, "ripples.json", big, 1, "$.protocol.group_size",
                            "must be <= workers (6), got 7");
    const char *gg[] = { "stragglers=[{\"kind\": \"failure\", \"workers\": [0], \"at_s\": 1}]" };
    harness_expect_rejected(zero_json, "ripples.json", gg, 1, "$.protocol.groups",
                            "the group generator runs on worker 0, which a failure rule takes "
                            "down: add a server to host it");
}
END_TEST

START_TEST(the_same_scenario_and_seed_give_identical_summaries)
{
    const char *sets[] = { "protocol.groups=buffer", "stop.time_s=0.2" };
    char *a, *b;
    harness_run_models(zero_json, sets, 2, NULL, &a);
    harness_run_models(zero_json, sets, 2, NULL, &b);
    harness_strip_wall(a);
    harness_strip_wall(b);
    ck_assert_str_eq(a, b);
    free(a);
    free(b);
}
END_TEST

/* ---- memory ---- */

/* The arena a ripples run of n workers asks for (its workers' states and its buffers hook, as
 * the memory guard's sizing pass does), for the protocol object `json`. */
static uint64_t arena_bytes(const char *json, uint32_t n)
{
    sim_err err;
    sim_err_clear(&err);
    sim_cfg *cfg = sim_cfg_parse(json, strlen(json), "t.json", &err);
    ck_assert_msg(cfg != NULL, "%s", err.msg);
    proto_setup setup = { .workers = n, .layers = 1, .iteration_ns = 10000000 };
    const proto_ops *ops = proto_find("ripples");
    void *state = calloc(1, ops->state_size);
    ck_assert_int_eq(ops->configure(state, cfg, &setup, &err), SIM_OK);
    sim_arena *a = sim_arena_create_sizing(&err);
    ck_assert_ptr_nonnull(a);
    sim_arena_alloc(a, n, ops->worker_size);
    ops->buffers(state, a, 0);
    uint64_t bytes = sim_arena_bytes(a);
    sim_arena_destroy(a);
    free(state);
    sim_cfg_destroy(cfg);
    return bytes;
}

/* The memory ripples asks for is linear in the workers (issue 38): each worker's row of the
 * group table's size (16 n^2 (depth + 1) bytes with the buffer) and each ring's position and
 * flag tables over every worker (n / 2 rings) made the guard's estimate 1.95 GB for a
 * 10,000-worker run of the default generator, and refuse 100,000 workers at 173 GiB. Twice
 * the workers now ask for at most 2.2 times the bytes (the rest is fixed), in every mode, and
 * 100,000 workers with a buffer of depth 8 ask for less than 1 GiB (464 MB, the group table's
 * 36 slots a worker; 1.44 TB before). */
START_TEST(the_memory_asked_for_is_linear_in_the_workers)
{
    const char *modes[] = { "{\"groups\": \"division\"}", "{\"groups\": \"random\"}",
                            "{\"groups\": \"buffer\", \"buffer_depth\": 8}",
                            "{\"groups\": \"division\", \"group_size\": 16}" };
    for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++) {
        uint64_t at_n = arena_bytes(modes[i], 20000), at_2n = arena_bytes(modes[i], 40000);
        ck_assert_msg((double)at_2n <= 2.2 * (double)at_n, "%s: %llu bytes at 20000, %llu at 40000",
                      modes[i], (unsigned long long)at_n, (unsigned long long)at_2n);
    }
    uint64_t big = arena_bytes(modes[2], 100000);
    ck_assert_msg(big < (uint64_t)1 << 30, "%llu bytes at 100000", (unsigned long long)big);
}
END_TEST

Suite *test_suite(void)
{
    Suite *s = suite_create("ripples");
    TCase *tc = tcase_create("exact");
    tcase_add_test(tc, after_a_p_reduce_members_are_bitwise_their_mean_and_non_members_untouched);
    tcase_add_loop_test(tc, zero_gradients_keep_the_sum_over_workers_in_every_mode, 0, 7);
    tcase_add_test(tc, the_static_grid_gives_the_global_mean_after_d_rounds);
    tcase_add_loop_test(tc, every_local_step_is_followed_by_exactly_one_group, 0, 4);
    tcase_add_test(tc, the_group_buffer_has_fewer_conflicts_than_random_groups);
    tcase_add_test(tc, the_default_generator_is_group_division_and_run_json_says_so);
    tcase_add_test(tc,
                   the_default_is_the_static_grid_on_a_homogeneous_cluster_and_division_elsewhere);
    tcase_add_test(
        tc, group_division_issues_no_busy_worker_a_group_so_a_slow_one_holds_back_only_its_own);
    tcase_add_test(tc, the_racks_schedule_alternates_intra_and_inter_rack_groups);
    tcase_add_test(tc, the_racks_schedule_sizes_its_groups_from_the_racks);
    tcase_add_test(tc, the_generator_s_reads_of_pending_groups_are_counted_as_peer_reads);
    tcase_add_test(tc, a_p_reduce_takes_the_ring_time_of_its_group);
    tcase_add_test(tc, a_down_member_fails_its_group_and_members_keep_their_models);
    tcase_add_test(tc, bad_parameters_name_their_path);
    tcase_add_test(tc, the_same_scenario_and_seed_give_identical_summaries);
    tcase_set_timeout(tc, 30);
    suite_add_tcase(s, tc);
    TCase *dl = tcase_create("deadlock");
    tcase_add_test(dl, six_hundred_random_configurations_never_stall_with_the_global_order);
    tcase_add_test(dl, executing_groups_in_arrival_order_deadlocks);
    tcase_set_timeout(dl, 120);
    suite_add_tcase(s, dl);
    TCase *mem = tcase_create("memory");
    tcase_add_test(mem, the_memory_asked_for_is_linear_in_the_workers);
    suite_add_tcase(s, mem);
    return s;
}
