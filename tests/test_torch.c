/* PyTorch models through model servers (models/torch.h, issue 40): modules that break the
 * contract are refused before the run, a missing PyTorch is named; runs train, write the same
 * files with 1, 2 and 3 threads (every protocol in the chaos scenario, with dropout); a server
 * that dies fails the run; a PyTorch logistic regression equals the built-in softmax model;
 * each worker's BatchNorm statistics are its own and evaluations use their mean; the module's
 * layers make the "module" profile.
 *
 * Run by tests/torch/skip_without_torch.sh, which skips the suite (77) without a python3 that
 * imports torch; the case "cuda" only with HETSIM_NEED_CUDA set (the meson test torch_cuda, which
 * the same script skips, 77, where PyTorch sees no GPU). The modules are in tests/torch/.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <check.h>
#include <gsl/gsl_rng.h>

#include "harness.h"
#include "models/train.h"
#include "protocols/registry.h"
#include "runtime/ctx.h"
#include "runtime/run.h"

/* Scenarios are named as if in tests/torch/, so that their modules' paths are relative. */
#define FILE_NAME "tests/torch/torch.json"

/* Four workers of a small network on synthetic data, half a simulated second. */
static const char base_json[] =
    "{\"seed\": 5, \"workers\": 4, \"compute\": {\"iteration_ms\": 10, \"jitter_sigma\": 0.2},"
    " \"workload\": {\"dataset\": {\"name\": \"synthetic\", \"samples\": 1200, \"test_samples\": "
    "300, \"dim\": 8, \"classes\": 3}, \"model\": {\"name\": \"torch\", \"module\": "
    "\"mlp_dropout.py\"}, \"batch\": 16, \"lr\": 0.1, \"momentum\": 0.9},"
    " \"protocol\": {\"name\": \"allreduce\"}, \"stop\": {\"time_s\": 0.5},"
    " \"eval\": {\"every_s\": 0.1, \"samples\": 300}}";

/* Runs the loaded scenario `sc` on `threads` threads into a fresh directory. */
static char *run_loaded(sim_scenario *sc, unsigned threads, sim_run_observe_fn observe, void *ud)
{
    return harness_run_threads(sc, "torch", threads, observe, ud, NULL);
}

static char *run_on(const char *json, const char *const *sets, size_t nsets, unsigned threads,
                    sim_run_observe_fn observe, void *ud)
{
    sim_scenario *sc = harness_load(json, FILE_NAME, sets, nsets);
    char *dir = run_loaded(sc, threads, observe, ud);
    sim_scenario_destroy(sc);
    return dir;
}

/* The scenario loaded once and run on 1, 2 and 3 threads (its module probed once: the probe is
 * kept with the scenario), every file compared. */
static void expect_same_for_every_count(const char *json, const char *const *sets, size_t nsets,
                                        const char *what)
{
    sim_scenario *sc = harness_load(json, FILE_NAME, sets, nsets);
    char *one = run_loaded(sc, 1, NULL, NULL);
    for (unsigned t = 2; t <= 3; t++) {
        char *more = run_loaded(sc, t, NULL, NULL);
        harness_expect_same_files(one, more, what);
        harness_cleanup(more);
    }
    harness_cleanup(one);
    sim_scenario_destroy(sc);
}

/* ---- the contract ---- */

typedef struct refused {
    const char *set;  /* the model section */
    const char *path; /* the error's JSON path */
    const char *msg;  /* its message */
} refused;

static const refused refusals[] = {
    { "workload.model={\"name\": \"torch\", \"module\": \"bad_import.py\"}",
      "$.workload.model.module",
      "bad_import.py: does not import: NameError: name 'nn' is not defined (line 4)" },
    { "workload.model={\"name\": \"torch\", \"module\": \"bad_nobuild.py\"}",
      "$.workload.model.module",
      "bad_nobuild.py: has no build() function (the contract: docs/torch.md)" },
    { "workload.model={\"name\": \"torch\", \"module\": \"bad_shape.py\"}",
      "$.workload.model.module",
      "bad_shape.py: the network returned 4 scores per sample for 3 classes" },
    { "workload.model={\"name\": \"torch\", \"module\": \"bad_dtype.py\"}",
      "$.workload.model.module",
      "bad_dtype.py: parameter 0.weight is float64: replicas are float32 (build() may call "
      ".float())" },
    { "workload.model={\"name\": \"torch\", \"module\": \"bad_type.py\"}",
      "$.workload.model.module", "bad_type.py: build() returned list, not a torch.nn.Module" },
    { "workload.model={\"name\": \"torch\", \"module\": \"bad_loss.py\"}",
      "$.workload.model.module",
      "bad_loss.py: loss() must return a float32 scalar tensor, got float" },
    { "workload.model.widht=24", "$.workload.model.widht",
      "not an argument of build() or data() in mlp_dropout.py" },
    { "workload.model.classes=4", "$.workload.model.classes",
      "is hetsim's to give to the module (the contract: docs/torch.md)" },
    { "workload.model.module=missing.py", "$.workload.model.module",
      "cannot read tests/torch/missing.py: No such file or directory" },
    { "workload.model.device=\"tpu\"", "$.workload.model.device",
      "must be \"cpu\" or \"cuda\" (or \"cuda:N\")" },
};

START_TEST(a_module_that_breaks_the_contract_is_refused_naming_what_is_wrong)
{
    const refused *r = &refusals[_i];
    const char *sets[] = { r->set };
    harness_expect_rejected(base_json, FILE_NAME, sets, 1, r->path, r->msg);
}
END_TEST

START_TEST(a_python_without_torch_is_named_with_the_debian_package)
{
    ck_assert_int_eq(setenv("HETSIM_PYTHON", "tests/torch/python_without_torch.sh", 1), 0);
    harness_expect_rejected(base_json, FILE_NAME, NULL, 0, "$.workload.model",
                            "PyTorch cannot be imported by tests/torch/python_without_torch.sh "
                            "(No module named 'torch' (/usr/bin/python3)): install the Debian "
                            "package python3-torch");
    ck_assert_int_eq(setenv("HETSIM_PYTHON", "/nonexistent/python3", 1), 0);
    harness_expect_rejected(base_json, FILE_NAME, NULL, 0, "$.workload.model.module",
                            "mlp_dropout.py: cannot start the model server: /nonexistent/python3: "
                            "No such file or directory (install python3 and the Debian package "
                            "python3-torch, or set HETSIM_PYTHON)");
    unsetenv("HETSIM_PYTHON");
}
END_TEST

/* ---- runs ---- */

START_TEST(a_torch_model_trains_and_its_test_loss_falls)
{
    const char *sets[] = { "stop.time_s=1" };
    char *dir = run_on(base_json, sets, 1, 1, NULL, NULL);
    char run[1024];
    snprintf(run, sizeof(run), "%s/run", dir);
    harness_csv m = harness_csv_read(run, "metrics.csv");
    double first = harness_csv_num(&m, 0, "test_loss"),
           last = harness_csv_num(&m, m.nrows - 1, "test_loss");
    /* Three classes separated by 3 noise units: an untrained network scores about ln 3. */
    ck_assert_msg(last < 0.5 * first, "test loss %g -> %g", first, last);
    ck_assert_double_gt(harness_csv_num(&m, m.nrows - 1, "test_accuracy"), 0.8);
    harness_csv_free(&m);
    harness_cleanup(dir);
}
END_TEST

/* Dropout (a seed per request), BatchNorm (each worker's statistics), independent
 * initializations (a network per worker) and the module's own data, on 1, 2 and 3 threads. */
static const char *const variants[][2] = {
    { "protocol.name=adpsgd", "seed=5" },
    { "workload.model={\"name\": \"torch\", \"module\": \"batchnorm.py\"}", "protocol.name=hop" },
    { "workload.init=independent", "protocol.name=gossip" },
    { "workload={\"model\": {\"name\": \"torch\", \"module\": \"own_data.py\"}, \"batch\": 16}",
      "protocol.name=localsgd" },
};

START_TEST(a_torch_run_writes_the_same_files_with_any_thread_count)
{
    const char *sets[] = { variants[_i][0], variants[_i][1], "output.events=true" };
    expect_same_for_every_count(base_json, sets, 3, variants[_i][0]);
}
END_TEST

START_TEST(a_server_that_dies_fails_the_run_with_its_traceback_and_writes_nothing)
{
    char *dir = harness_tmpdir("torch");
    char cwd[512], json[4096];
    ck_assert_ptr_nonnull(getcwd(cwd, sizeof(cwd)));
    char *model = strstr(base_json, "\"model\"");
    snprintf(json, sizeof(json),
             "%.*s\"model\": {\"name\": \"torch\", \"module\": \"%s/tests/torch/mlp_dropout.py\", "
             "\"die_after\": 37}%s",
             (int)(model - base_json), base_json, cwd, strstr(model, "}") + 1);
    harness_write(dir, "s.json", json);
    char scenario[1024], out[1024];
    snprintf(scenario, sizeof(scenario), "%s/s.json", dir);
    snprintf(out, sizeof(out), "%s/run", dir);
    const char *args[] = { "run", scenario, "-o", out, "--threads", "2", NULL };
    harness_result r = harness_hetsim(args);
    ck_assert_int_eq(r.status, 1);
    ck_assert_msg(strstr(r.err, "Traceback (most recent call last)") != NULL &&
                      strstr(r.err, "RuntimeError: deliberately dying at call 37") != NULL &&
                      strstr(r.err, "died (exit status 1; its traceback is above)") != NULL,
                  "%s", r.err);
    ck_assert(!harness_exists(out));
    char partial[1100];
    snprintf(partial, sizeof(partial), "%s.partial", out);
    ck_assert(!harness_exists(partial));
    harness_cleanup(dir);
}
END_TEST

/* The memory guard counts a model server per thread: each is a Python interpreter with
 * PyTorch, the network, a training and an evaluation pass (measured by the probe; PyTorch's
 * import alone takes well over 100 MB resident). */
START_TEST(the_memory_estimate_counts_a_model_server_per_thread)
{
    const char *sets[] = { "stop.time_s=0.05" };
    sim_scenario *sc = harness_load(base_json, FILE_NAME, sets, 1);
    char *one = run_loaded(sc, 1, NULL, NULL), *three = run_loaded(sc, 3, NULL, NULL);
    double e1 = harness_memory_estimate(one), e3 = harness_memory_estimate(three);
    ck_assert_msg(e1 > 100e6 && e3 - e1 > 2 * 100e6, "%g and %g bytes", e1, e3);
    harness_cleanup(one);
    harness_cleanup(three);
    sim_scenario_destroy(sc);
}
END_TEST

/* ---- the built-in softmax model, in PyTorch ---- */

typedef struct capture {
    size_t P;
    float *first; /* worker 0's parameters at the first evaluation (time 0) */
    float *last;  /* at the last one */
} capture;

static void capture_params(void *ud, struct sim_ctx *ctx)
{
    capture *c = ud;
    c->P = sim_ctx_num_params(ctx);
    if (c->first == NULL) {
        c->first = malloc(c->P * sizeof(float));
        memcpy(c->first, sim_ctx_params_view(ctx, 0), c->P * sizeof(float));
    }
    free(c->last);
    c->last = malloc(c->P * sizeof(float));
    memcpy(c->last, sim_ctx_params_view(ctx, 0), c->P * sizeof(float));
}

/* 100 all-reduce rounds of 4 workers (400 iterations) of softmax regression, the built-in
 * model's against PyTorch's nn.Linear started from the same weights, on the same batches:
 * every parameter within 1e-5 at the end, and every evaluation's losses and accuracy. */
START_TEST(a_pytorch_logistic_regression_equals_the_built_in_softmax_model)
{
    const char *sets[] = { "workload.model={\"name\": \"softmax\"}", "stop={\"iterations\": 400}",
                           "eval.every_s=0.2" };
    capture soft = { 0 }, torch = { 0 };
    char *a = run_on(base_json, sets, 3, 1, capture_params, &soft);
    char weights[1100], model[1400];
    snprintf(weights, sizeof(weights), "%s/w.bin", a);
    FILE *f = fopen(weights, "wb");
    ck_assert_uint_eq(fwrite(soft.first, sizeof(float), soft.P, f), soft.P);
    fclose(f);
    snprintf(model, sizeof(model),
             "workload.model={\"name\": \"torch\", \"module\": \"logreg.py\", \"weights\": "
             "\"%s\"}",
             weights);
    sets[0] = model;
    char *b = run_on(base_json, sets, 3, 1, capture_params, &torch);
    ck_assert_uint_eq(torch.P, soft.P);
    ck_assert_int_eq(memcmp(torch.first, soft.first, soft.P * sizeof(float)), 0);
    double most = 0.0;
    for (size_t i = 0; i < soft.P; i++)
        most = fmax(most, fabs((double)torch.last[i] - (double)soft.last[i]));
    /* Two float32 implementations of the same sums (OpenBLAS's sgemm and hetsim's softmax
     * against PyTorch's): rounding differences of about 1e-7 per step. */
    ck_assert_msg(most < 1e-5, "largest difference %g", most);
    char ra[1100], rb[1100];
    snprintf(ra, sizeof(ra), "%s/run", a);
    snprintf(rb, sizeof(rb), "%s/run", b);
    harness_csv ma = harness_csv_read(ra, "metrics.csv"), mb = harness_csv_read(rb, "metrics.csv");
    ck_assert_uint_eq(ma.nrows, mb.nrows);
    ck_assert_uint_ge(ma.nrows, 5);
    static const char *const cols[] = { "iterations", "train_loss", "test_loss", "test_accuracy" };
    for (size_t r = 0; r < ma.nrows; r++)
        for (size_t c = 0; c < 4; c++) {
            double x = harness_csv_num(&ma, r, cols[c]), y = harness_csv_num(&mb, r, cols[c]);
            if (!(isnan(x) && isnan(y)))
                ck_assert_msg(fabs(x - y) < 1e-5, "row %zu %s: %.9g against %.9g", r, cols[c], x,
                              y);
        }
    harness_csv_free(&ma);
    harness_csv_free(&mb);
    free(soft.first);
    free(soft.last);
    free(torch.first);
    free(torch.last);
    harness_cleanup(a);
    harness_cleanup(b);
}
END_TEST

/* ---- buffers ---- */

/* BatchNorm1d(12): running mean (12) and variance (12), floats; num_batches_tracked is an
 * integer, no worker's state. A worker's statistics change when its iteration ends (not when
 * its gradient is joined), and only its own; evaluations use the mean of the workers named. */
START_TEST(each_worker_keeps_its_own_batchnorm_statistics_and_evaluations_use_their_mean)
{
    const char *sets[] = { "workload.model={\"name\": \"torch\", \"module\": \"batchnorm.py\"}" };
    sim_scenario *sc = harness_load(base_json, FILE_NAME, sets, 1);
    train_config tc;
    sim_err err;
    sim_err_clear(&err);
    ck_assert_int_eq(train_config_read(sc, &tc, &err), SIM_OK);
    gsl_rng *data = gsl_rng_alloc(gsl_rng_mt19937), *init = gsl_rng_alloc(gsl_rng_mt19937),
            *r = gsl_rng_alloc(gsl_rng_mt19937);
    train *t = train_create(&tc, data, init, &err);
    ck_assert_ptr_nonnull(t);
    size_t NB = train_num_buffers(t);
    ck_assert_uint_eq(NB, 24);
    float before[24];
    memcpy(before, train_buffers(t, 0), sizeof(before));
    for (size_t i = 0; i < 12; i++) { /* PyTorch's initial statistics */
        ck_assert(before[i] == 0.0f);
        ck_assert(before[12 + i] == 1.0f);
    }
    train_draw(t, 0, r);
    double loss = train_gradient_on(t, 0, train_params(t, 0), 0);
    ck_assert_int_eq(train_check_loss(t, 0, loss, &err), SIM_OK);
    /* Joined, its iteration not ended: the statistics are still the old ones. */
    ck_assert_int_eq(memcmp(train_buffers(t, 0), before, sizeof(before)), 0);
    train_iteration_done(t, 0);
    const float *b0 = train_buffers(t, 0), *b1 = train_buffers(t, 1);
    ck_assert_int_ne(memcmp(b0, before, sizeof(before)), 0);
    ck_assert_int_eq(memcmp(b1, before, sizeof(before)), 0);
    double l0, l1, l01, acc;
    uint32_t w0 = 0, w1 = 1, both[2] = { 0, 1 };
    train_eval_buffers(t, &w0, 1);
    train_evaluate(t, train_params(t, 0), 300, &l0, &acc);
    train_eval_buffers(t, &w1, 1);
    train_evaluate(t, train_params(t, 0), 300, &l1, &acc);
    train_eval_buffers(t, both, 2);
    const float *mean = torch_backend_eval_state(train_servers(t));
    for (size_t i = 0; i < NB; i++)
        ck_assert(mean[i] == (float)(((double)b0[i] + (double)b1[i]) / 2.0));
    train_evaluate(t, train_params(t, 0), 300, &l01, &acc);
    /* The statistics decide the evaluation mode's outputs. */
    ck_assert(l0 != l1 && l01 != l0 && l01 != l1);
    ck_assert_int_eq(train_error(t, &err), SIM_OK);
    train_destroy(t);
    gsl_rng_free(data);
    gsl_rng_free(init);
    gsl_rng_free(r);
    sim_scenario_destroy(sc);
}
END_TEST

/* ---- the "module" profile ---- */

/* mlp_dropout.py's layers by the profile tools' rules: body.0, Linear(8, 16): 144
 * parameters, 2 * 8 * 16 = 256 FLOPs; body.3, Linear(16, 3): 51 and 96. On a V100 at fp32
 * (15.7 TFLOP/s) and 0.5 efficiency a batch of 16 takes 3 * 352 * 16 / 7.85e12 s. A named
 * profile replaces them (the network trained, timed and sized as ResNet-50). */
START_TEST(a_module_profile_is_the_modules_layers_by_the_profile_tools_rules)
{
    const char *sets[] = {
        "compute={\"profile\": \"module\", \"device\": \"v100\", \"efficiency\": 0.5}"
    };
    sim_scenario *sc = harness_load(base_json, FILE_NAME, sets, 1);
    sim_err err;
    sim_err_clear(&err);
    ck_assert_int_eq(harness_check(sc, &err), SIM_OK);
    ck_assert_uint_eq(sc->layers.n, 2);
    ck_assert_str_eq(sc->layers.layer[0].name, "body.0");
    ck_assert_uint_eq(sc->layers.layer[0].params, 144);
    ck_assert_double_eq(sc->layers.layer[0].fwd_flops, 256.0);
    ck_assert_str_eq(sc->layers.layer[1].name, "body.3");
    ck_assert_uint_eq(sc->layers.layer[1].params, 51);
    ck_assert_double_eq(sc->layers.layer[1].fwd_flops, 96.0);
    /* Kinds and bytes by python/hetsim/profile_rules.py: a linear layer reads its input and
     * writes its output, (8 + 16) and (16 + 3) floats a sample; after body.0 come the ReLU
     * and the dropout, elementwise. */
    ck_assert_int_eq(sc->layers.layer[0].kind, SIM_KIND_MATMUL);
    ck_assert_int_eq(sc->layers.layer[1].kind, SIM_KIND_MATMUL);
    ck_assert_double_eq(sc->layers.layer[0].fwd_bytes, 96.0);
    ck_assert_double_eq(sc->layers.layer[1].fwd_bytes, 76.0);
    ck_assert_double_gt(sc->layers.layer[0].ew_bytes, 0.0);
    ck_assert_uint_eq(sc->message_bytes, 4 * 195);
    ck_assert_int_eq(sc->iteration_ns, llround(3.0 * 352 * 16 / (15.7e12 * 0.5) * 1e9));
    /* A second check (the run's) changes nothing: the profile is resolved once. */
    sim_time ns = sc->iteration_ns;
    ck_assert_int_eq(harness_check(sc, &err), SIM_OK);
    ck_assert_int_eq(sc->iteration_ns, ns);
    sim_scenario_destroy(sc);
    /* A module whose layer runs twice breaks the rules: one layer of every parameter (72 + 72
     * + 27 = 171), its FLOPs those of the passes that ran (128 + 2 x 128 + 48 = 432); a
     * "module" profile is refused. */
    const char *shared[] = { "workload.model.module=shared_layer.py" };
    sc = harness_load(base_json, FILE_NAME, shared, 1);
    ck_assert_uint_eq(sc->layers.n, 1);
    ck_assert_str_eq(sc->layers.layer[0].name, "model");
    ck_assert_uint_eq(sc->layers.layer[0].params, 171);
    ck_assert_double_eq(sc->layers.layer[0].fwd_flops, 432.0);
    sim_scenario_destroy(sc);
    const char *refused_sets[] = { shared[0], sets[0] };
    harness_expect_rejected(base_json, FILE_NAME, refused_sets, 2, "$.compute.profile",
                            "\"module\" needs shared_layer.py's layers by tools/profile_model.py's "
                            "rules: module hidden runs twice in one forward pass");
    /* A named profile still times the small network as the profile's model. */
    sets[0] = "compute={\"profile\": \"resnet50\", \"device\": \"v100\"}";
    sc = harness_load(base_json, FILE_NAME, sets, 1);
    ck_assert_uint_gt(sc->layers.n, 50);
    ck_assert_uint_eq(sim_layers_params(&sc->layers), 25557032); /* torchvision's resnet50 */
    ck_assert_uint_eq(sc->message_bytes, 4 * 25557032);
    sim_scenario_destroy(sc);
}
END_TEST

/* ---- the examples ---- */

/* Writes `n` CIFAR-10 binary records (a label byte, then 3072 pixel bytes) to dir/name, label
 * i mod 10 and pixels from a small generator, plus `extra` stray bytes. */
static void write_cifar(const char *dir, const char *name, size_t n, size_t extra, unsigned seed)
{
    char path[1100];
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    ck_assert_ptr_nonnull(f);
    uint32_t x = 2463534242u + seed;
    for (size_t i = 0; i < n; i++) {
        fputc((int)(i % 10), f);
        for (size_t j = 0; j < 3072; j++) {
            x ^= x << 13, x ^= x >> 17, x ^= x << 5;
            fputc((int)(x >> 24), f);
        }
    }
    for (size_t j = 0; j < extra; j++)
        fputc(7, f);
    fclose(f);
}

/* ResNet-20 on CIFAR-10 files in the binary format (two training batches of 40 records, a
 * test batch of 24): the module's loader reads them, 2 workers train 8 rounds of batch 8 (each
 * worker's BatchNorm statistics its own); a file cut short is refused naming it. */
START_TEST(resnet20_trains_on_cifar10_files_in_the_binary_format)
{
    char *dir = harness_tmpdir("torch");
    write_cifar(dir, "data_batch_1.bin", 40, 0, 1);
    write_cifar(dir, "data_batch_2.bin", 40, 0, 2);
    write_cifar(dir, "test_batch.bin", 24, 0, 3);
    char cwd[512], model[2048];
    ck_assert_ptr_nonnull(getcwd(cwd, sizeof(cwd)));
    snprintf(model, sizeof(model),
             "workload={\"model\": {\"name\": \"torch\", \"module\": "
             "\"%s/examples/torch/resnet20.py\", \"dir\": \"%s\"}, \"batch\": 8, \"lr\": 0.05}",
             cwd, dir);
    const char *sets[] = { model, "workers=2", "stop={\"iterations\": 16}",
                           "eval={\"every_s\": 0.05, \"samples\": 24}" };
    char *out = run_on(base_json, sets, 4, 2, NULL, NULL);
    char run[1100];
    snprintf(run, sizeof(run), "%s/run", out);
    char *summary = harness_slurp(run, "summary.json");
    /* 16 iterations of 8 samples over 80 training examples: 1.6 epochs. */
    ck_assert_msg(strstr(summary, "\"epochs\": 1.6000000000000001") != NULL, "%s", summary);
    free(summary);
    harness_csv m = harness_csv_read(run, "metrics.csv");
    ck_assert(isfinite(harness_csv_num(&m, m.nrows - 1, "test_loss")));
    harness_csv_free(&m);
    harness_cleanup(out);
    write_cifar(dir, "data_batch_2.bin", 3, 100, 2);
    sim_err err;
    sim_err_clear(&err);
    sim_scenario *sc = sim_scenario_parse(base_json, strlen(base_json), FILE_NAME, sets, 4, &err);
    ck_assert_ptr_nonnull(sc);
    ck_assert_int_eq(harness_check(sc, &err), SIM_ESCENARIO);
    ck_assert_str_eq(err.path, "$.workload.model.module");
    ck_assert_msg(strstr(err.msg, "data() failed: ValueError: ") != NULL &&
                      strstr(err.msg, "data_batch_2.bin: 9319 bytes, not a whole number of "
                                      "3073-byte CIFAR-10 records") != NULL,
                  "%s", err.msg);
    sim_scenario_destroy(sc);
    harness_cleanup(dir);
}
END_TEST

/* LeNet-5 on 600 Fashion-MNIST images and the small transformer on its own synthetic
 * sequences run a few rounds of all-reduce; their losses are finite. */
START_TEST(lenet5_and_the_transformer_run)
{
    char cwd[512], model[1024];
    ck_assert_ptr_nonnull(getcwd(cwd, sizeof(cwd)));
    if (_i == 0)
        snprintf(model, sizeof(model),
                 "workload={\"dataset\": {\"name\": \"fashion-mnist\", \"train_samples\": "
                 "600}, \"model\": {\"name\": \"torch\", \"module\": "
                 "\"%s/examples/torch/lenet5.py\"}, \"batch\": 16}",
                 cwd);
    else
        snprintf(model, sizeof(model),
                 "workload={\"model\": {\"name\": \"torch\", \"module\": "
                 "\"%s/examples/torch/transformer.py\"}, \"batch\": 16}",
                 cwd);
    const char *sets[] = { model, "stop={\"iterations\": 24}", "eval.samples=200" };
    char *out = run_on(base_json, sets, 3, 2, NULL, NULL);
    char run[1100];
    snprintf(run, sizeof(run), "%s/run", out);
    harness_csv m = harness_csv_read(run, "metrics.csv");
    ck_assert(isfinite(harness_csv_num(&m, m.nrows - 1, "train_loss")));
    ck_assert(isfinite(harness_csv_num(&m, m.nrows - 1, "test_loss")));
    harness_csv_free(&m);
    harness_cleanup(out);
}
END_TEST

/* The examples' scenarios validate (the JSON files of examples/torch but ResNet-20's, whose data
 * set is not packaged: the test above runs its module on files it writes). */
START_TEST(the_example_scenarios_validate)
{
    static const char *const files[] = { "examples/torch/lenet5-fmnist.json",
                                         "examples/torch/transformer.json" };
    sim_scenario *sc = harness_load_file(files[_i], NULL, 0);
    sim_scenario_destroy(sc);
}
END_TEST

/* ---- GPUs ---- */

/* On a GPU (the meson test torch_cuda: skipped where PyTorch sees none): a run
 * trains and writes the same files with 1 and 2 threads (two servers sharing the GPU). */
START_TEST(a_run_on_a_gpu_trains_alike_with_any_thread_count)
{
    const char *sets[] = { "workload.model.device=\"cuda\"", "protocol.name=adpsgd" };
    sim_scenario *sc = harness_load(base_json, FILE_NAME, sets, 2);
    char *one = run_loaded(sc, 1, NULL, NULL), *two = run_loaded(sc, 2, NULL, NULL);
    harness_expect_same_files(one, two, "cuda");
    char run[1100];
    snprintf(run, sizeof(run), "%s/run", one);
    harness_csv m = harness_csv_read(run, "metrics.csv");
    ck_assert_double_lt(harness_csv_num(&m, m.nrows - 1, "test_loss"),
                        harness_csv_num(&m, 0, "test_loss"));
    harness_csv_free(&m);
    harness_cleanup(one);
    harness_cleanup(two);
    sim_scenario_destroy(sc);
}
END_TEST

/* A GPU PyTorch does not see (none here, or not 1000 of them) is refused before the run, naming
 * the key. */
START_TEST(a_gpu_where_pytorch_sees_none_is_refused)
{
    const char *sets[] = { "workload.model.device=\"cuda:999\"" };
    sim_err err;
    sim_err_clear(&err);
    sim_scenario *sc = sim_scenario_parse(base_json, strlen(base_json), FILE_NAME, sets, 1, &err);
    ck_assert_ptr_nonnull(sc);
    ck_assert_int_eq(harness_check(sc, &err), SIM_ESCENARIO);
    ck_assert_str_eq(err.path, "$.workload.model.device");
    ck_assert_msg(strstr(err.msg, "PyTorch sees") != NULL, "%s", err.msg);
    sim_scenario_destroy(sc);
}
END_TEST

/* ---- every protocol in chaos ---- */

/* Every registered protocol at its defaults in the chaos scenario (12 workers, stragglers, 8
 * failures) with mlp_dropout.py (dropout: a seed per request), 1.3 simulated seconds: the same
 * files with 1, 2 and 3 threads. */
START_TEST(every_protocol_runs_a_torch_model_in_chaos_alike_with_any_thread_count)
{
    const char *name, *hosts;
    char *json = harness_protocol_chaos(_i, 17, &name, &hosts);
    const char *sets[] = { "output.events=true", hosts, "stop.time_s=1.3",
                           "workload.model={\"name\": \"torch\", \"module\": \"mlp_dropout.py\"}" };
    expect_same_for_every_count(json, sets, 4, name);
    free(json);
}
END_TEST

Suite *test_suite(void)
{
    Suite *s = suite_create("torch");
    TCase *contract = tcase_create("contract");
    tcase_add_loop_test(contract, a_module_that_breaks_the_contract_is_refused_naming_what_is_wrong,
                        0, (int)(sizeof(refusals) / sizeof(refusals[0])));
    tcase_add_test(contract, a_python_without_torch_is_named_with_the_debian_package);
    tcase_add_test(contract, a_gpu_where_pytorch_sees_none_is_refused);
    tcase_set_timeout(contract, 120);
    suite_add_tcase(s, contract);

    TCase *runs = tcase_create("runs");
    tcase_add_test(runs, a_torch_model_trains_and_its_test_loss_falls);
    tcase_add_loop_test(runs, a_torch_run_writes_the_same_files_with_any_thread_count, 0,
                        (int)(sizeof(variants) / sizeof(variants[0])));
    tcase_add_test(runs, a_server_that_dies_fails_the_run_with_its_traceback_and_writes_nothing);
    tcase_add_test(runs, the_memory_estimate_counts_a_model_server_per_thread);
    tcase_add_test(runs, a_pytorch_logistic_regression_equals_the_built_in_softmax_model);
    tcase_add_test(runs,
                   each_worker_keeps_its_own_batchnorm_statistics_and_evaluations_use_their_mean);
    tcase_add_test(runs, a_module_profile_is_the_modules_layers_by_the_profile_tools_rules);
    tcase_set_timeout(runs, 300);
    suite_add_tcase(s, runs);

    TCase *examples = tcase_create("examples");
    tcase_add_test(examples, resnet20_trains_on_cifar10_files_in_the_binary_format);
    tcase_add_loop_test(examples, lenet5_and_the_transformer_run, 0, 2);
    tcase_add_loop_test(examples, the_example_scenarios_validate, 0, 2);
    tcase_set_timeout(examples, 300);
    suite_add_tcase(s, examples);

    if (getenv("HETSIM_NEED_CUDA") != NULL) { /* the meson test torch_cuda, run on a GPU */
        TCase *cuda = tcase_create("cuda");
        tcase_add_test(cuda, a_run_on_a_gpu_trains_alike_with_any_thread_count);
        tcase_set_timeout(cuda, 300);
        suite_add_tcase(s, cuda);
    }

    /* Every protocol; under the sanitizers (slow tests off), the first three: the C paths are
     * the runtime's, which the built-in models' chaos runs cover there. */
    TCase *chaos = tcase_create("chaos");
    size_t n;
    proto_list(&n);
#ifndef HETSIM_SLOW_TESTS
    n = n < 3 ? n : 3;
#endif
    tcase_add_loop_test(
        chaos, every_protocol_runs_a_torch_model_in_chaos_alike_with_any_thread_count, 0, (int)n);
    tcase_set_timeout(chaos, 600);
    suite_add_tcase(s, chaos);
    return s;
}
