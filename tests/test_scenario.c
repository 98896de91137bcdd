/* Tests of scenario/scenario: a complete scenario read field by field, documented defaults, the
 * resolved tree and its hash, count-drawn stragglers, trace files and --set overrides. Run
 * from the repository root. */
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <check.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>

#include "harness.h"
#include "harness_scenario.h"
#include "runtime/run.h"
#include "scenario/scenario.h"
#include "sim/cfg.h"
#include "sim/engine.h"
#include "sim/err.h"
#include "sim/rng.h"

/* Loads with one --set that must fail; checks the error. */
static void set_fails(const char *file, const char *assignment, const char *path, const char *msg)
{
    sim_err err;
    const char *sets[] = { "workers=3", assignment };
    ck_assert_ptr_null(sim_scenario_load(file, sets, 2, &err));
    ck_assert_int_eq(err.code, SIM_ESCENARIO);
    ck_assert_str_eq(err.file, file);
    ck_assert_str_eq(err.path, path);
    ck_assert_str_eq(err.msg, msg);
}

/* ---- a complete scenario ---------------------------------------------------------------- */

START_TEST(loader_reads_the_top_level_compute_and_stream_seeds)
{
    sim_scenario *sc = sct_load_ok(FULL, NULL, 0);
    ck_assert_str_eq(sc->file, FULL);
    ck_assert_str_eq(sc->name, "full-check");
    ck_assert_uint_eq(sc->seed, 48213);
    ck_assert_uint_eq(sc->workers, 6);
    ck_assert_uint_eq(sc->servers, 2);
    uint32_t seeds[SIM_STREAM_WORKER + 6];
    ck_assert_int_eq(sim_rng_derive(48213, SIM_STREAM_WORKER + 6, seeds), 0);
    for (size_t i = 0; i < SIM_STREAM_WORKER + 6; i++)
        ck_assert_uint_eq(sc->stream_seeds[i], seeds[i]);
    ck_assert_int_eq(sc->iteration_ns, 123456000);
    ck_assert_double_eq(sc->gflops, 17.25);
    ck_assert_double_eq(sc->jitter_sigma, 0.0625);
    static const double speeds[] = { 1.5, 0.75, 2.25, 1.125, 0.875, 3.0 };
    for (size_t w = 0; w < 6; w++)
        ck_assert_double_eq(sc->speeds[w], speeds[w]);
    sim_scenario_destroy(sc);
}
END_TEST

START_TEST(loader_reads_every_kind_of_straggler_rule)
{
    sim_scenario *sc = sct_load_ok(FULL, NULL, 0);
    ck_assert_uint_eq(sc->nstragglers, 7);
    const sim_straggler *st = sc->stragglers;
    ck_assert_int_eq(st[0].kind, SIM_STRAG_FIXED);
    sct_check_ids(&st[0], (const uint32_t[]){ 1, 4 }, 2); /* given as [4, 1]: sorted */
    ck_assert_double_eq(st[0].slowdown, 2.385);
    ck_assert_int_eq(st[1].kind, SIM_STRAG_RANDOM);
    ck_assert_uint_eq(st[1].nworkers, 3);
    ck_assert_double_eq(st[1].probability, 0.0375);
    ck_assert_double_eq(st[1].slowdown, 4.5);
    ck_assert_int_eq(st[2].kind, SIM_STRAG_WINDOW);
    sct_check_ids(&st[2], (const uint32_t[]){ 2 }, 1);
    ck_assert_int_eq(st[2].from_ns, 10500000000);
    ck_assert_int_eq(st[2].to_ns, 31250000000);
    ck_assert_double_eq(st[2].slowdown, 3.125);
    ck_assert_int_eq(st[3].kind, SIM_STRAG_LINK);
    ck_assert_uint_eq(st[3].nworkers, 2);
    ck_assert_int_eq(st[3].from_ns, 0);
    ck_assert_int_eq(st[3].to_ns, SIM_TIME_NEVER);
    ck_assert_int_eq(st[3].extra_latency_ns, 7500000);
    ck_assert_double_eq(st[3].bandwidth_factor, 0.375);
    ck_assert_int_eq(st[4].kind, SIM_STRAG_TRACE);
    ck_assert_uint_eq(st[4].nworkers, 0);
    ck_assert_int_eq(st[5].kind, SIM_STRAG_FAILURE);
    sct_check_ids(&st[5], (const uint32_t[]){ 5 }, 1);
    ck_assert_int_eq(st[5].at_ns, 100125000000);
    ck_assert_int_eq(st[5].recover_ns, 160500000000);
    ck_assert_int_eq(st[6].kind, SIM_STRAG_FAILURE);
    sct_check_ids(&st[6], (const uint32_t[]){ 0, 1, 2, 3, 4, 5 }, 6); /* neither: all */
    ck_assert_int_eq(st[6].at_ns, 200250000000);
    ck_assert_int_eq(st[6].recover_ns, SIM_TIME_NEVER);
    sim_scenario_destroy(sc);
}
END_TEST

START_TEST(loader_reads_a_trace_sorted_by_time_keeping_file_order_of_ties)
{
    sim_scenario *sc = sct_load_ok(FULL, NULL, 0);
    const sim_straggler *st = &sc->stragglers[4];
    static const sim_trace_point expected[] = {
        { 0, 2, 4.125 },           { 1500000000, 0, 1.25 }, { 7250000000, 3, 1.0 },
        { 12750000000, 3, 2.385 }, { 12750000000, 1, 3.5 },
    };
    ck_assert_uint_eq(st->ntrace, 5);
    for (size_t i = 0; i < 5; i++) {
        ck_assert_int_eq(st->trace[i].time_ns, expected[i].time_ns);
        ck_assert_uint_eq(st->trace[i].worker, expected[i].worker);
        ck_assert_double_eq(st->trace[i].slowdown, expected[i].slowdown);
    }
    sim_scenario_destroy(sc);
}
END_TEST

START_TEST(loader_reads_a_trace_named_by_an_absolute_path)
{
    char cwd[1024], set[1200];
    ck_assert_ptr_nonnull(getcwd(cwd, sizeof(cwd)));
    snprintf(set, sizeof(set), "stragglers[4].file=%s/tests/data/trace_unsorted.csv", cwd);
    const char *sets[] = { set };
    sim_scenario *sc = sct_load_ok(FULL, sets, 1);
    ck_assert_uint_eq(sc->stragglers[4].ntrace, 5);
    ck_assert_double_eq(sc->stragglers[4].trace[0].slowdown, 4.125);
    sim_scenario_destroy(sc);
}
END_TEST

START_TEST(loader_applies_network_settings_and_host_overrides)
{
    sim_scenario *sc = sct_load_ok(FULL, NULL, 0);
    ck_assert_int_eq(sc->net.topology, SIM_TOPO_RACKS);
    ck_assert_uint_eq(sc->net.nhosts, 8);
    ck_assert_uint_eq(sc->net.rack_size, 3);
    ck_assert_double_eq(sc->net.uplink_bandwidth_bps, 42.25e9);
    ck_assert_int_eq(sc->net.uplink_latency_ns, 37500); /* default: latency_us */
    ck_assert_ptr_eq(sc->net.bandwidth_bps, sc->bandwidth_bps);
    ck_assert_ptr_eq(sc->net.latency_ns, sc->latency_ns);
    for (size_t h = 0; h < 8; h++) {
        ck_assert_double_eq(sc->bandwidth_bps[h], h == 1 || h == 6 ? 2.75e9 : 12.5e9);
        ck_assert_int_eq(sc->latency_ns[h], h == 6 ? 512500 : 37500);
    }
    sim_scenario_destroy(sc);
}
END_TEST

START_TEST(loader_applies_later_overrides_over_earlier_ones)
{
    const char *sets[] = { "network.overrides=[{\"workers\":[0,2],\"bandwidth_gbps\":1.5},"
                           "{\"workers\":[2],\"bandwidth_gbps\":4.25,\"latency_us\":3.5}]" };
    sim_scenario *sc = sct_load_ok(MINIMAL, sets, 1);
    ck_assert_double_eq(sc->bandwidth_bps[0], 1.5e9);
    ck_assert_double_eq(sc->bandwidth_bps[1], 10e9);
    ck_assert_double_eq(sc->bandwidth_bps[2], 4.25e9);
    ck_assert_int_eq(sc->latency_ns[0], 50000);
    ck_assert_int_eq(sc->latency_ns[2], 3500);
    sim_scenario_destroy(sc);
}
END_TEST

START_TEST(loader_reads_workload_protocol_stop_eval_and_output)
{
    sim_scenario *sc = sct_load_ok(FULL, NULL, 0);
    ck_assert_str_eq(sc->model, "mlp");
    ck_assert_str_eq(sc->dataset, "synthetic");
    ck_assert_str_eq(sim_cfg_path(sc->model_cfg), "$.workload.model");
    ck_assert_str_eq(sim_cfg_path(sc->dataset_cfg), "$.workload.dataset");
    ck_assert_uint_eq(sc->batch, 48);
    ck_assert_double_eq(sc->lr, 0.0875);
    ck_assert_double_eq(sc->momentum, 0.8125);
    ck_assert_double_eq(sc->weight_decay, 0.000375);
    ck_assert_uint_eq(sc->message_bytes, 98765432);
    ck_assert_str_eq(sc->protocol, "hop");
    ck_assert_str_eq(sim_cfg_path(sc->protocol_cfg), "$.protocol");
    ck_assert_int_eq(sc->stop_ns, 345500000000);
    ck_assert_uint_eq(sc->stop_iterations, 98765);
    ck_assert_double_eq(sc->stop_epochs, 12.5);
    ck_assert_double_eq(sc->target_accuracy, 0.8625);
    ck_assert_int_eq(sc->eval_every_ns, 2500000000);
    ck_assert_uint_eq(sc->eval_samples, 2345);
    ck_assert_str_eq(sc->out_dir, "out/full-elsewhere");
    ck_assert(sc->plots && sc->events);
    sim_scenario_destroy(sc);
}
END_TEST

START_TEST(loader_leaves_module_sections_for_their_owners_to_check)
{
    sim_scenario *sc = sct_load_ok(FULL, NULL, 0);
    sim_err err;
    char graph[16] = "";
    int64_t backup = 0;
    ck_assert_int_eq(sim_cfg_check_unused(sc->protocol_cfg, &err), SIM_ESCENARIO);
    ck_assert_str_eq(err.path, "$.protocol.graph");
    ck_assert_str_eq(err.msg, "unknown key (valid: name)");
    ck_assert_int_eq(sim_cfg_string(sc->protocol_cfg, "graph", graph, sizeof(graph), &err), 0);
    ck_assert_int_eq(sim_cfg_int(sc->protocol_cfg, "backup_workers", 0, 5, &backup, &err), 0);
    ck_assert_int_eq(sim_cfg_check_unused(sc->protocol_cfg, &err), 0);
    ck_assert_int_eq(sim_cfg_check_unused(sc->dataset_cfg, &err), SIM_ESCENARIO);
    ck_assert_str_eq(err.path, "$.workload.dataset.classes");
    sim_scenario_destroy(sc);
}
END_TEST

/* ---- defaults and the resolved tree ------------------------------------------------------- */

START_TEST(loader_fills_documented_defaults)
{
    sim_scenario *sc = sct_load_ok(MINIMAL, NULL, 0);
    ck_assert_str_eq(sc->name, "minimal");
    ck_assert_uint_eq(sc->servers, 0);
    ck_assert_int_eq(sc->iteration_ns, 100000000);
    ck_assert_double_eq(sc->gflops, 0.0);
    ck_assert_double_eq(sc->jitter_sigma, 0.0);
    for (size_t w = 0; w < 5; w++) {
        ck_assert_double_eq(sc->speeds[w], 1.0);
        ck_assert_double_eq(sc->bandwidth_bps[w], 10e9);
        ck_assert_int_eq(sc->latency_ns[w], 50000);
    }
    ck_assert_uint_eq(sc->nstragglers, 0);
    ck_assert_int_eq(sc->net.topology, SIM_TOPO_STAR);
    ck_assert_uint_eq(sc->net.nhosts, 5);
    ck_assert_str_eq(sc->model, "none");
    ck_assert_str_eq(sc->dataset, "");
    ck_assert_ptr_null(sc->dataset_cfg);
    ck_assert_uint_eq(sc->batch, 32);
    ck_assert_double_eq(sc->lr, 0.05);
    ck_assert_double_eq(sc->momentum, 0.0);
    ck_assert_double_eq(sc->weight_decay, 0.0);
    ck_assert_uint_eq(sc->message_bytes, 4096);
    ck_assert_str_eq(sc->protocol, "allreduce");
    ck_assert_int_eq(sc->stop_ns, 60000000000);
    ck_assert_uint_eq(sc->stop_iterations, 0);
    ck_assert(isnan(sc->stop_epochs) && isnan(sc->target_accuracy));
    ck_assert_int_eq(sc->eval_every_ns, 1000000000);
    ck_assert_uint_eq(sc->eval_samples, 1000);
    ck_assert_str_eq(sc->out_dir, "out/minimal");
    ck_assert(!sc->plots && !sc->events);
    sim_scenario_destroy(sc);
}
END_TEST

START_TEST(loader_writes_defaults_into_the_resolved_tree)
{
    sim_scenario *sc = sct_load_ok(MINIMAL, NULL, 0);
    char *text = sim_scenario_resolved(sc, false);
    ck_assert_str_eq(
        text, "{\"seed\":7,\"workers\":5,\"workload\":{\"model\":{\"name\":\"none\"},"
              "\"message_bytes\":4096,\"batch\":32,\"lr\":0.05,\"init\":\"same\",\"momentum\":0,"
              "\"weight_decay\":0},"
              "\"protocol\":{\"name\":\"allreduce\"},\"name\":\"minimal\",\"servers\":0,"
              "\"compute\":{\"iteration_ms\":100,\"gflops\":0,\"jitter_sigma\":0,\"speeds\":[1]},"
              "\"network\":{\"topology\":\"star\",\"bandwidth_gbps\":10,\"latency_us\":50},"
              "\"stop\":{\"time_s\":60},\"eval\":{\"every_s\":1,\"samples\":1000},"
              "\"output\":{\"dir\":\"out/minimal\",\"plots\":false,\"events\":false}}");
    free(text);
    text = sim_scenario_resolved(sc, true);
    ck_assert_ptr_nonnull(strstr(text, "\n"));
    free(text);
    sim_scenario_destroy(sc);
}
END_TEST

START_TEST(loader_records_unset_optional_values_as_null)
{
    const char *sets[] = {
        "workload.message_bytes=null",
        "workload.model.name=softmax",
        "workload.dataset={\"name\":\"synthetic\"}",
        "stragglers=[{\"kind\":\"link\",\"bandwidth_factor\":0.5},"
        "{\"kind\":\"failure\",\"count\":null,\"workers\":[3],\"at_s\":2.5},"
        "{\"kind\":\"link\",\"to_s\":null,\"extra_latency_ms\":0.25}]",
        "stop={\"iterations\":500}",
    };
    sim_scenario *sc = sct_load_ok(MINIMAL, sets, 5);
    ck_assert_uint_eq(sc->message_bytes, 0);
    ck_assert_int_eq(sc->stragglers[0].to_ns, SIM_TIME_NEVER);
    ck_assert_int_eq(sc->stragglers[1].recover_ns, SIM_TIME_NEVER);
    sct_check_ids(&sc->stragglers[1], (const uint32_t[]){ 3 }, 1);
    ck_assert_int_eq(sc->stragglers[2].to_ns, SIM_TIME_NEVER);
    ck_assert_int_eq(sc->stragglers[2].extra_latency_ns, 250000);
    ck_assert_int_eq(sc->stop_ns, SIM_TIME_NEVER); /* another stop was given */
    ck_assert_uint_eq(sc->stop_iterations, 500);
    char *text = sim_scenario_resolved(sc, false);
    ck_assert_ptr_nonnull(strstr(text, "\"message_bytes\":null"));
    ck_assert_ptr_nonnull(
        strstr(text, "{\"kind\":\"link\",\"bandwidth_factor\":0.5,\"from_s\":0,\"to_s\":null,"
                     "\"extra_latency_ms\":0}"));
    ck_assert_ptr_nonnull(strstr(text, "\"at_s\":2.5,\"recover_s\":null}"));
    ck_assert_ptr_nonnull(strstr(text, "\"stop\":{\"iterations\":500}"));
    free(text);
    sim_scenario_destroy(sc);
}
END_TEST

START_TEST(loader_broadcasts_a_single_speed_to_every_worker)
{
    const char *sets[] = { "workers=7", "compute.speeds=[2.385]" };
    sim_scenario *sc = sct_load_ok(MINIMAL, sets, 2);
    for (size_t w = 0; w < 7; w++)
        ck_assert_double_eq(sc->speeds[w], 2.385);
    sim_scenario_destroy(sc);
}
END_TEST

START_TEST(loader_names_the_scenario_after_its_file_by_default)
{
    static const char text[] = "{\"seed\": 3, \"workers\": 2, \"protocol\": {\"name\": \"ps\"},"
                               "\"workload\": {\"model\": {\"name\": \"none\"},"
                               "\"message_bytes\": 64}}";
    sim_err err;
    sim_scenario *sc =
        sim_scenario_parse(text, strlen(text), "some/dir/my-run.json", NULL, 0, &err);
    ck_assert_ptr_nonnull(sc);
    ck_assert_str_eq(sc->name, "my-run");
    ck_assert_str_eq(sc->out_dir, "out/my-run");
    ck_assert_str_eq(sc->file, "some/dir/my-run.json");
    sim_scenario_destroy(sc);
}
END_TEST

START_TEST(resolved_tree_loads_again_to_the_same_scenario)
{
    sim_scenario *sc = sct_load_ok(FULL, NULL, 0);
    char *text = sim_scenario_resolved(sc, true);
    sim_err err;
    sim_scenario *again = sim_scenario_parse(text, strlen(text), FULL, NULL, 0, &err);
    ck_assert_msg(again != NULL, "%s: %s", err.path, err.msg);
    ck_assert_uint_eq(again->hash, sc->hash);
    for (size_t i = 0; i < sc->nstragglers; i++)
        sct_check_ids(&again->stragglers[i], sc->stragglers[i].workers, sc->stragglers[i].nworkers);
    free(text);
    sim_scenario_destroy(again);
    sim_scenario_destroy(sc);
}
END_TEST

/* ---- values resolved from other keys ------------------------------------------------------ */

/* Loads `json` as tests/resolved.json (relative profile paths resolve in tests/) with the
 * run's check, which resolves the model's keys; the caller destroys the scenario. Its resolved
 * text loads again, checked, to the same hash, base time and message size. */
static sim_scenario *resolved(const char *json, char **text)
{
    sim_scenario *sc = harness_load(json, "tests/resolved.json", NULL, 0);
    *text = sim_scenario_resolved(sc, false);
    ck_assert_ptr_nonnull(*text);
    sim_scenario *again = harness_load(*text, "tests/resolved.json", NULL, 0);
    ck_assert_uint_eq(again->hash, sc->hash);
    ck_assert_int_eq(again->iteration_ns, sc->iteration_ns);
    ck_assert_uint_eq(again->message_bytes, sc->message_bytes);
    sim_scenario_destroy(again);
    return sc;
}

/* run.json held null for a message size a profile or the model gave, and the default 100 ms
 * for a base time measured times or gflops gave: the values used are recorded now. */
START_TEST(the_resolved_scenario_records_values_resolved_from_other_keys)
{
    /* A measured profile of 300 + 700 parameters and 1.25 + 2.5 + 0.5 + 0.75 ms. */
    char *text;
    sim_scenario *sc = resolved(
        "{\"seed\": 3, \"workers\": 3, \"compute\": {\"profile\": \"data/profile_measured.csv\"},"
        " \"workload\": {\"model\": {\"name\": \"none\"}}, \"protocol\": {\"name\": \"ps\"}}",
        &text);
    ck_assert_ptr_nonnull(strstr(text, "\"compute\":{\"profile\":\"data/profile_measured.csv\","
                                       "\"iteration_ms\":5,"));
    ck_assert_ptr_nonnull(strstr(text, "\"message_bytes\":4000}"));
    ck_assert_ptr_null(strstr(text, "null"));
    free(text);
    sim_scenario_destroy(sc);
    /* A softmax of 6 inputs and 3 classes, 21 parameters, timed by gflops. */
    sc = resolved("{\"seed\": 3, \"workers\": 3, \"compute\": {\"gflops\": 0.375},"
                  " \"workload\": {\"dataset\": {\"name\": \"synthetic\", \"samples\": 300,"
                  " \"dim\": 6, \"classes\": 3}, \"model\": {\"name\": \"softmax\"}, \"batch\": 4},"
                  " \"protocol\": {\"name\": \"allreduce\"}}",
                  &text);
    ck_assert_uint_eq(sc->message_bytes, 84);
    ck_assert_ptr_nonnull(strstr(text, "\"message_bytes\":84}"));
    char want[64];
    snprintf(want, sizeof(want), "\"iteration_ms\":%.17g,", (double)sc->iteration_ns / 1e6);
    ck_assert_msg(strstr(text, want) != NULL, "%s in %s", want, text);
    free(text);
    sim_scenario_destroy(sc);
    /* A device's precision, a default its roofline reads (without an efficiency, which would
     * replace the roofline, none is recorded; the layout is recorded at 16 bits only:
     * tests/test_roofline.c). */
    sc = resolved("{\"seed\": 3, \"workers\": 3, \"compute\": {\"profile\": \"resnet18\","
                  " \"device\": \"v100\"}, \"workload\": {\"model\": {\"name\": \"none\"}},"
                  " \"protocol\": {\"name\": \"allreduce\"}}",
                  &text);
    ck_assert_ptr_nonnull(strstr(text, "\"speeds\":[1],\"precision\":\"fp32\"}"));
    ck_assert_ptr_null(strstr(text, "efficiency"));
    ck_assert_ptr_nonnull(strstr(text, "\"message_bytes\":46758048}"));
    free(text);
    sim_scenario_destroy(sc);
}
END_TEST

/* ---- count-drawn stragglers and the hash ---------------------------------------------------- */

START_TEST(loader_draws_count_selected_stragglers_from_the_straggler_stream)
{
    sim_scenario *sc = sct_load_ok(FULL, NULL, 0);
    /* Known answer: the same draws made directly, in file order, on one stream. */
    uint32_t all[6] = { 0, 1, 2, 3, 4, 5 }, first[3], second[2];
    gsl_rng *r = sim_rng_create(sc->stream_seeds[SIM_STREAM_STRAGGLER]);
    ck_assert_int_eq(gsl_ran_choose(r, first, 3, all, 6, sizeof(uint32_t)), 0);
    ck_assert_int_eq(gsl_ran_choose(r, second, 2, all, 6, sizeof(uint32_t)), 0);
    gsl_rng_free(r);
    sct_check_ids(&sc->stragglers[1], first, 3);
    sct_check_ids(&sc->stragglers[3], second, 2);
    char *text = sim_scenario_resolved(sc, false), want[128];
    snprintf(want, sizeof(want),
             "\"count\":3,\"probability\":0.0375,\"slowdown\":4.5,"
             "\"workers\":[%u,%u,%u]}",
             first[0], first[1], first[2]);
    ck_assert_ptr_nonnull(strstr(text, want));
    free(text);
    sim_scenario_destroy(sc);
}
END_TEST

START_TEST(loader_draws_the_same_stragglers_for_the_same_seed_only)
{
    sim_scenario *a = sct_load_ok(FULL, NULL, 0), *b = sct_load_ok(FULL, NULL, 0);
    sct_check_ids(&b->stragglers[1], a->stragglers[1].workers, 3);
    sct_check_ids(&b->stragglers[3], a->stragglers[3].workers, 2);
    bool differs = false;
    for (int seed = 1; seed <= 8 && !differs; seed++) {
        char set[32];
        snprintf(set, sizeof(set), "seed=%d", 48213 + seed);
        const char *sets[] = { set };
        sim_scenario *c = sct_load_ok(FULL, sets, 1);
        for (size_t i = 0; i < 3; i++)
            differs = differs || c->stragglers[1].workers[i] != a->stragglers[1].workers[i];
        sim_scenario_destroy(c);
    }
    ck_assert(differs);
    sim_scenario_destroy(a);
    sim_scenario_destroy(b);
}
END_TEST

START_TEST(hash_is_stable_and_changed_by_a_set)
{
    sim_scenario *a = sct_load_ok(FULL, NULL, 0), *b = sct_load_ok(FULL, NULL, 0);
    ck_assert_uint_eq(a->hash, b->hash);
    const char *same[] = { "eval.samples=2345" };
    const char *other[] = { "workload.lr=0.0876" };
    sim_scenario *c = sct_load_ok(FULL, same, 1), *d = sct_load_ok(FULL, other, 1);
    ck_assert_uint_eq(c->hash, a->hash);
    ck_assert_uint_ne(d->hash, a->hash);
    sim_scenario_destroy(a);
    sim_scenario_destroy(b);
    sim_scenario_destroy(c);
    sim_scenario_destroy(d);
}
END_TEST

START_TEST(rehash_follows_defaults_written_by_a_module)
{
    sim_scenario *sc = sct_load_ok(FULL, NULL, 0);
    uint64_t before = sc->hash;
    sim_scenario_rehash(sc);
    ck_assert_uint_eq(sc->hash, before);
    sim_err err;
    double alpha = 0.625;
    ck_assert_int_eq(sim_cfg_double(sc->protocol_cfg, "alpha", 0.0, 1.0, &alpha, &err), 0);
    sim_scenario_rehash(sc);
    ck_assert_uint_ne(sc->hash, before);
    char *text = sim_scenario_resolved(sc, false);
    ck_assert_ptr_nonnull(strstr(text, "\"backup_workers\":1,\"alpha\":0.625}"));
    free(text);
    sim_scenario_destroy(sc);
}
END_TEST

/* ---- --set ---------------------------------------------------------------------------------- */

START_TEST(sets_apply_in_order_before_validation)
{
    const char *sets[] = { "workers=8",
                           "workers=9",
                           "protocol.name=adpsgd",
                           "eval.every_s=0.25",
                           "stragglers=[{\"kind\":\"fixed\",\"slowdown\":2}]",
                           "stragglers[0].slowdown=3" };
    sim_scenario *sc = sct_load_ok(MINIMAL, sets, 6);
    ck_assert_uint_eq(sc->workers, 9);
    ck_assert_str_eq(sc->protocol, "adpsgd");
    ck_assert_int_eq(sc->eval_every_ns, 250000000);
    ck_assert_double_eq(sc->stragglers[0].slowdown, 3.0);
    ck_assert_uint_eq(sc->stragglers[0].nworkers, 9);
    sim_scenario_destroy(sc);
}
END_TEST

START_TEST(set_errors_name_the_assignment_or_the_key)
{
    set_fails(MINIMAL, "workers", "--set workers", "expected PATH=VALUE");
    set_fails(MINIMAL, "stragglers[3].slowdown=2", "--set stragglers[3].slowdown",
              "$.stragglers is absent, cannot index it");
    set_fails(FULL, "stragglers[9].slowdown=2", "--set stragglers[9].slowdown",
              "index 9 is past the end of $.stragglers (length 7)");
    set_fails(MINIMAL, "seed.x=1", "--set seed.x", "$.seed is a number, not an object");
    set_fails(MINIMAL, "workers=abc", "$.workers",
              "must be an integer in [1, 1048576], got \"abc\"");
    set_fails(MINIMAL, "workers=5000000", "$.workers",
              "must be an integer in [1, 1048576], got 5000000");
    set_fails(MINIMAL, "compute.speedz=[1]", "$.compute.speedz",
              "unknown key (valid: iteration_ms, gflops, jitter_sigma, speeds, profile, device, "
              "precision, layout, efficiency)");
}
END_TEST

Suite *test_suite(void)
{
    Suite *s = suite_create("scenario");
    TCase *tc = tcase_create("complete");
    tcase_add_checked_fixture(tc, sct_setup, NULL);
    tcase_add_test(tc, loader_reads_the_top_level_compute_and_stream_seeds);
    tcase_add_test(tc, loader_reads_every_kind_of_straggler_rule);
    tcase_add_test(tc, loader_reads_a_trace_sorted_by_time_keeping_file_order_of_ties);
    tcase_add_test(tc, loader_reads_a_trace_named_by_an_absolute_path);
    tcase_add_test(tc, loader_applies_network_settings_and_host_overrides);
    tcase_add_test(tc, loader_applies_later_overrides_over_earlier_ones);
    tcase_add_test(tc, loader_reads_workload_protocol_stop_eval_and_output);
    tcase_add_test(tc, loader_leaves_module_sections_for_their_owners_to_check);
    suite_add_tcase(s, tc);

    tc = tcase_create("defaults");
    tcase_add_checked_fixture(tc, sct_setup, NULL);
    tcase_add_test(tc, loader_fills_documented_defaults);
    tcase_add_test(tc, loader_writes_defaults_into_the_resolved_tree);
    tcase_add_test(tc, loader_records_unset_optional_values_as_null);
    tcase_add_test(tc, loader_broadcasts_a_single_speed_to_every_worker);
    tcase_add_test(tc, loader_names_the_scenario_after_its_file_by_default);
    tcase_add_test(tc, resolved_tree_loads_again_to_the_same_scenario);
    tcase_add_test(tc, the_resolved_scenario_records_values_resolved_from_other_keys);
    suite_add_tcase(s, tc);

    tc = tcase_create("determinism");
    tcase_add_checked_fixture(tc, sct_setup, NULL);
    tcase_add_test(tc, loader_draws_count_selected_stragglers_from_the_straggler_stream);
    tcase_add_test(tc, loader_draws_the_same_stragglers_for_the_same_seed_only);
    tcase_add_test(tc, hash_is_stable_and_changed_by_a_set);
    tcase_add_test(tc, rehash_follows_defaults_written_by_a_module);
    suite_add_tcase(s, tc);

    tc = tcase_create("sets");
    tcase_add_checked_fixture(tc, sct_setup, NULL);
    tcase_add_test(tc, sets_apply_in_order_before_validation);
    tcase_add_test(tc, set_errors_name_the_assignment_or_the_key);
    suite_add_tcase(s, tc);
    return s;
}
