/* Whole training iterations for `hetsim bench kernels` (see app/bench_train.h). */
#include "app/bench_train.h"

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>

#include "models/data.h"
#include "models/model.h"
#include "models/train.h"
#include "protocols/registry.h"
#include "runtime/run.h"
#include "runtime/summary.h"
#include "scenario/scenario.h"
#include "sim/bench.h"
#include "sim/tensor.h"

/* An OpenBLAS extension, not part of CBLAS (declared as in models/bench.c, whose reasons
 * hold here too). */
void openblas_set_num_threads(int num_threads);

/* One protocol per family, in the order the lines are printed. */
static const char *const families[] = { "allreduce", "gossip", "adpsgd" };

enum {
    NFAMILIES = sizeof(families) / sizeof(families[0]),
    SCENARIO_CHARS = 2048, /* room for the scenario text */
    FMNIST_TRAIN = 8192,   /* Fashion-MNIST training examples loaded (fewer: faster set-up) */
    SYNTH_TRAIN = 4096,    /* synthetic training examples */
    SYNTH_DIM = 784,       /* synthetic inputs: Fashion-MNIST's 28 x 28 */
    EVAL_SAMPLES = 100,    /* test examples per evaluation */
};

/* Shortest time trusted, in seconds: a floor that keeps the ratios finite. */
static const double min_time_s = 1e-7;

void app_bench_train_default(app_bench_train_config *cfg)
{
    *cfg = (app_bench_train_config){
        .workers = 16,
        .hidden = 128,
        .batch = 32,
        .iterations = 2400,
        .reference_reps = 200,
        .synthetic = false,
        .tmp_dir = NULL,
    };
}

static int check_config(const app_bench_train_config *cfg, sim_err *err)
{
    if (cfg->workers < 2 || cfg->workers > 1024)
        return sim_err_set(err, SIM_EINVAL, "workers", "must be in [2, 1024], got %" PRIu32,
                           cfg->workers);
    if (cfg->hidden < 1 || cfg->hidden > 4096)
        return sim_err_set(err, SIM_EINVAL, "hidden", "must be in [1, 4096], got %" PRIu32,
                           cfg->hidden);
    if (cfg->batch < 1 || cfg->batch > 4096)
        return sim_err_set(err, SIM_EINVAL, "batch", "must be in [1, 4096], got %" PRIu32,
                           cfg->batch);
    if (cfg->iterations < cfg->workers || cfg->iterations > UINT64_C(1) << 40)
        return sim_err_set(err, SIM_EINVAL, "iterations",
                           "must be in [workers, 2^40] = [%" PRIu32 ", 2^40], got %" PRIu64,
                           cfg->workers, cfg->iterations);
    if (cfg->reference_reps < 1 || cfg->reference_reps > 1000000)
        return sim_err_set(err, SIM_EINVAL, "reference_reps", "must be in [1, 1000000], got %u",
                           cfg->reference_reps);
    return SIM_OK;
}

/* The scenario of one family's run; SIM_EINVAL if it does not fit in `size` chars. */
static int scenario_text(char *buf, size_t size, const app_bench_train_config *cfg,
                         const char *protocol, bool fmnist, sim_err *err)
{
    char dataset[256];
    if (fmnist)
        snprintf(dataset, sizeof(dataset), "{ \"name\": \"fashion-mnist\", \"train_samples\": %d }",
                 FMNIST_TRAIN);
    else
        snprintf(dataset, sizeof(dataset),
                 "{ \"name\": \"synthetic\", \"samples\": %d, \"test_samples\": %d, "
                 "\"dim\": %d, \"classes\": 10 }",
                 SYNTH_TRAIN, EVAL_SAMPLES, SYNTH_DIM);
    int n = snprintf(buf, size,
                     "{\n"
                     "  \"name\": \"bench-iteration-%s\",\n"
                     "  \"seed\": 2385,\n"
                     "  \"workers\": %" PRIu32 ",\n"
                     "  \"compute\": { \"iteration_ms\": 50, \"jitter_sigma\": 0.1 },\n"
                     "  \"network\": { \"topology\": \"star\", \"bandwidth_gbps\": 10, "
                     "\"latency_us\": 50 },\n"
                     "  \"workload\": {\n"
                     "    \"dataset\": %s,\n"
                     "    \"model\": { \"name\": \"mlp\", \"hidden\": [%" PRIu32 "] },\n"
                     "    \"batch\": %" PRIu32 ", \"lr\": 0.05, \"momentum\": 0.9, "
                     "\"weight_decay\": 1e-4\n"
                     "  },\n"
                     "  \"protocol\": { \"name\": \"%s\" },\n"
                     "  \"stop\": { \"iterations\": %" PRIu64 " },\n"
                     "  \"eval\": { \"every_s\": 1e6, \"samples\": %d }\n"
                     "}\n",
                     protocol, cfg->workers, dataset, cfg->hidden, cfg->batch, protocol,
                     cfg->iterations, EVAL_SAMPLES);
    if (n < 0 || (size_t)n >= size)
        return sim_err_set(err, SIM_EINVAL, NULL, "the %s benchmark scenario is too long",
                           protocol);
    return SIM_OK;
}

/* ---- The reference: forward and backward of the run's model on one batch ---- */

typedef struct pass {
    const model_ops *ops;
    model_config cfg;
    size_t batch, n_params;
    float *params, *grads, *acts, *x; /* x (batch, D) */
    uint8_t *y;                       /* (batch) */
} pass;

static void pass_fini(pass *p)
{
    sim_tensor_free(p->params);
    sim_tensor_free(p->grads);
    sim_tensor_free(p->acts);
    sim_tensor_free(p->x);
    free(p->y);
}

/* Allocates the buffers of the model `tc` describes and fills parameters and batch with
 * draws from a generator of its own (the run's streams are not touched). */
static int pass_init(pass *p, const train_config *tc, sim_err *err)
{
    *p = (pass){ .ops = tc->ops, .cfg = tc->model, .batch = tc->batch };
    size_t D = model_input_size(&p->cfg);
    p->n_params = p->ops->shape->num_params(&p->cfg);
    p->params = sim_tensor_alloc(p->n_params);
    p->grads = sim_tensor_alloc(p->n_params);
    p->acts = sim_tensor_alloc(p->ops->shape->num_acts(&p->cfg, p->batch));
    p->x = sim_tensor_alloc(p->batch * D);
    p->y = malloc(p->batch);
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    if (p->params == NULL || p->grads == NULL || p->acts == NULL || p->x == NULL || p->y == NULL ||
        r == NULL) {
        gsl_rng_free(r);
        pass_fini(p);
        return sim_err_set(err, SIM_ENOMEM, NULL, "cannot allocate the %s reference pass",
                           p->ops->name);
    }
    gsl_rng_set(r, 2385);
    p->ops->shape->init_params(p->params, &p->cfg, r);
    for (size_t i = 0; i < p->batch * D; i++)
        p->x[i] = (float)gsl_ran_gaussian(r, 1.0);
    for (size_t b = 0; b < p->batch; b++)
        p->y[b] = (uint8_t)gsl_rng_uniform_int(r, p->cfg.classes);
    gsl_rng_free(r);
    return SIM_OK;
}

/* The best time in seconds of `reps` forward + backward passes after an untimed one, lowered
 * into *best_s. SIM_ENUMERIC if a pass gives a non-finite loss. */
static int pass_time(pass *p, unsigned reps, double *best_s, sim_err *err)
{
    double loss = 0.0;
    for (unsigned r = 0; r <= reps; r++) {
        sim_tensor_zero(p->grads, p->n_params);
        double t0 = sim_bench_cpu_now();
        loss = p->ops->forward(p->acts, p->params, p->x, p->y, p->batch, &p->cfg);
        p->ops->backward(p->grads, p->acts, p->params, p->x, p->y, p->batch, &p->cfg);
        double dt = sim_bench_cpu_now() - t0;
        if (r > 0 && dt < *best_s)
            *best_s = dt;
    }
    if (!isfinite(loss))
        return sim_err_set(err, SIM_ENUMERIC, NULL, "the %s reference pass gave a non-finite loss",
                           p->ops->name);
    return SIM_OK;
}

/* ---- One family's run ---- */

/* Removes the files of the flat run directory `dir`, then `dir`; a missing `dir` is fine. */
static int remove_run_dir(const char *dir, sim_err *err)
{
    DIR *d = opendir(dir);
    if (d == NULL)
        return errno == ENOENT
                   ? SIM_OK
                   : sim_err_set(err, SIM_EIO, NULL, "cannot open %s: %s", dir, strerror(errno));
    int rc = 0;
    for (struct dirent *e = readdir(d); e != NULL && rc == 0; e = readdir(d))
        if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
            rc = unlinkat(dirfd(d), e->d_name, 0) == 0 ? 0 : errno;
    closedir(d);
    if (rc == 0 && rmdir(dir) != 0)
        rc = errno;
    if (rc != 0)
        return sim_err_set(err, SIM_EIO, NULL, "cannot remove %s: %s", dir, strerror(rc));
    return SIM_OK;
}

/* CPU time of the simulation loop, read at the run's first evaluation (time 0, after set-up)
 * and at its last (the end). */
typedef struct loop_clock {
    unsigned calls;
    double first_s, last_s;
} loop_clock;

static void on_observe(void *ud, struct sim_ctx *ctx)
{
    loop_clock *c = ud;
    (void)ctx;
    double t = sim_bench_cpu_now();
    if (c->calls++ == 0)
        c->first_s = t;
    c->last_s = t;
}

/* Runs `sc` into `run_dir` (removed afterwards) and returns the CPU seconds of its loop per
 * finished iteration in *iter_s. */
static int time_run(sim_scenario *sc, const proto_ops *ops, const char *run_dir, double *iter_s,
                    sim_err *err)
{
    loop_clock clock = { 0 };
    sim_run_options opt = {
        .out_dir = run_dir, .progress = false, .observe = on_observe, .observe_ud = &clock
    };
    sim_run_summary sum = { 0 };
    int rc = sim_run(sc, ops, &opt, &sum, err);
    sim_err rm_err;
    sim_err_clear(&rm_err);
    int rm = remove_run_dir(run_dir, &rm_err);
    if (rc != SIM_OK)
        return rc;
    if (rm != SIM_OK) {
        *err = rm_err;
        return rm;
    }
    if (sum.iterations == 0 || clock.calls < 2)
        return sim_err_set(err, SIM_ENUMERIC, NULL, "the %s run finished no iteration",
                           sc->protocol);
    *iter_s = (clock.last_s - clock.first_s) / (double)sum.iterations;
    return SIM_OK;
}

/* Times the reference, the run, then the reference again, and prints the family's line. */
static int measure(FILE *out, const app_bench_train_config *cfg, sim_scenario *sc,
                   const proto_ops *ops, const train_config *tc, const char *run_dir, sim_err *err)
{
    pass p;
    int rc = pass_init(&p, tc, err);
    if (rc != SIM_OK)
        return rc;
    double ref_s = HUGE_VAL, iter_s = 0.0;
    rc = pass_time(&p, cfg->reference_reps, &ref_s, err);
    if (rc == SIM_OK)
        rc = time_run(sc, ops, run_dir, &iter_s, err);
    if (rc == SIM_OK)
        rc = pass_time(&p, cfg->reference_reps, &ref_s, err);
    pass_fini(&p);
    if (rc != SIM_OK)
        return rc;
    char name[64];
    snprintf(name, sizeof(name), "kernels.iteration_%s", sc->protocol);
    ref_s = ref_s > min_time_s ? ref_s : min_time_s;
    iter_s = iter_s > min_time_s ? iter_s : min_time_s;
    sim_bench_emit_time(out, name, iter_s * 1e6, "us", ref_s * 1e6);
    return SIM_OK;
}

/* Builds and checks `protocol`'s scenario and measures it, its run going into tmp/protocol. */
static int bench_family(FILE *out, const app_bench_train_config *cfg, const char *protocol,
                        bool fmnist, const char *tmp, sim_err *err)
{
    char text[SCENARIO_CHARS], file[64], run_dir[4096];
    snprintf(file, sizeof(file), "bench-iteration-%s.json", protocol);
    int n = snprintf(run_dir, sizeof(run_dir), "%s/%s", tmp, protocol);
    if (n < 0 || (size_t)n >= sizeof(run_dir))
        return sim_err_set(err, SIM_EINVAL, NULL, "temporary directory name too long: %s", tmp);
    int rc = scenario_text(text, sizeof(text), cfg, protocol, fmnist, err);
    if (rc != SIM_OK)
        return rc;
    sim_scenario *sc = sim_scenario_parse(text, strlen(text), file, NULL, 0, err);
    if (sc == NULL)
        return err->code;
    const proto_ops *ops = proto_lookup(sc->protocol, sc->file, err);
    train_config tc = { 0 };
    rc = ops == NULL ? err->code : sim_run_check(sc, ops, err);
    if (rc == SIM_OK)
        rc = train_config_read(sc, &tc, err);
    if (rc == SIM_OK)
        rc = measure(out, cfg, sc, ops, &tc, run_dir, err);
    sim_scenario_destroy(sc);
    return rc;
}

/* ---- Entry point ---- */

/* A fresh directory "PARENT/hetsim-bench-XXXXXX" (malloc'd), or NULL with `err` filled. */
static char *make_tmp(const char *parent, sim_err *err)
{
    if (parent == NULL)
        parent = getenv("TMPDIR");
    if (parent == NULL || parent[0] == '\0')
        parent = "/tmp";
    size_t n = strlen(parent) + sizeof("/hetsim-bench-XXXXXX");
    char *dir = malloc(n);
    if (dir == NULL) {
        sim_err_set(err, SIM_ENOMEM, NULL, "out of memory");
        return NULL;
    }
    snprintf(dir, n, "%s/hetsim-bench-XXXXXX", parent);
    if (mkdtemp(dir) == NULL) {
        sim_err_set(err, SIM_EIO, NULL, "cannot create a temporary directory in %s: %s", parent,
                    strerror(errno));
        free(dir);
        return NULL;
    }
    return dir;
}

int app_bench_train_run(FILE *out, const app_bench_train_config *cfg, sim_err *err)
{
    int rc = check_config(cfg, err);
    if (rc != SIM_OK)
        return rc;
    openblas_set_num_threads(1);
    data_idx_shape train_shape, test_shape;
    sim_err probe;
    sim_err_clear(&probe);
    bool fmnist = !cfg->synthetic &&
                  data_probe_fashion_mnist(NULL, &train_shape, &test_shape, &probe) == SIM_OK;
    char *tmp = make_tmp(cfg->tmp_dir, err);
    if (tmp == NULL)
        return err->code;
    for (size_t i = 0; i < NFAMILIES && rc == SIM_OK; i++)
        rc = bench_family(out, cfg, families[i], fmnist, tmp, err);
    if (rmdir(tmp) != 0 && rc == SIM_OK)
        rc = sim_err_set(err, SIM_EIO, NULL, "cannot remove %s: %s", tmp, strerror(errno));
    free(tmp);
    return rc;
}

/* ---- All-Reduce with gradient buckets (app_bench_overlap_run) ---- */

/* The seconds the calling thread has waited so far for a core while it could run (Linux's
 * /proc/thread-self/schedstat: run time, run-queue wait, slices), or 0 where unreadable: the
 * time other processes held the cores it could have used. */
static double queue_wait_now(void)
{
    FILE *f = fopen("/proc/thread-self/schedstat", "r");
    unsigned long long run_ns = 0, wait_ns = 0;
    if (f == NULL)
        return 0.0;
    if (fscanf(f, "%llu %llu", &run_ns, &wait_ns) != 2)
        wait_ns = 0;
    fclose(f);
    return (double)wait_ns / 1e9;
}

/* The figures of one run_text. */
typedef struct run_result {
    sim_time sim_ns;  /* simulated ns of the run */
    double cpu_s;     /* CPU seconds of its loop (with `cpu`), else 0 */
    double wall_s;    /* wall seconds of its loop (summary's wall_s) */
    double call_s;    /* wall seconds of the whole sim_run call */
    double wait_s;    /* of which the calling thread waited for a core (queue_wait_now) */
    sim_time iter_ns; /* the resolved iteration */
    uint64_t bytes;   /* the resolved message size */
    uint64_t events;  /* events processed */
    uint64_t between; /* messages between hosts (sim_run_summary.messages_between) */
} run_result;

/* Builds, checks and runs the scenario `text` (as `file`, with the overrides `sets`) into
 * `run_dir`, removed afterwards, on `threads` threads: its figures in *res. With `cpu`, an
 * observer reads the CPU time of the loop (its evaluations are then synchronous: an observer
 * reads them at their instant, runtime/jobs.h). Fails if the run finished no iteration. */
static int run_text(const char *text, const char *file, const char *const *sets, size_t nsets,
                    const char *run_dir, unsigned threads, bool cpu, run_result *res, sim_err *err)
{
    *res = (run_result){ 0 };
    sim_scenario *sc = sim_scenario_parse(text, strlen(text), file, sets, nsets, err);
    if (sc == NULL)
        return err->code;
    const proto_ops *ops = proto_lookup(sc->protocol, sc->file, err);
    int rc = ops == NULL ? err->code : sim_run_check(sc, ops, err);
    loop_clock clock = { 0 };
    sim_run_options opt = { .out_dir = run_dir, .threads = threads };
    if (cpu) {
        opt.observe = on_observe;
        opt.observe_ud = &clock;
    }
    sim_run_summary sum = { 0 };
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    double wait0 = queue_wait_now();
    if (rc == SIM_OK)
        rc = sim_run(sc, ops, &opt, &sum, err);
    res->wait_s = queue_wait_now() - wait0;
    struct timespec t1;
    clock_gettime(CLOCK_MONOTONIC, &t1);
    res->call_s = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
    sim_err rm_err;
    sim_err_clear(&rm_err);
    int rm = remove_run_dir(run_dir, &rm_err);
    if (rc == SIM_OK && rm != SIM_OK) {
        *err = rm_err;
        rc = rm;
    }
    if (rc == SIM_OK && sum.iterations == 0)
        rc = sim_err_set(err, SIM_ENUMERIC, NULL, "the %s run finished no iteration", file);
    res->sim_ns = sum.sim_ns;
    res->cpu_s = clock.last_s - clock.first_s;
    res->wall_s = sum.wall_s > min_time_s ? sum.wall_s : min_time_s;
    res->iter_ns = sc->iteration_ns;
    res->bytes = sc->message_bytes;
    res->events = sum.events;
    res->between = sum.messages_between;
    sim_scenario_destroy(sc);
    return rc;
}

/* run_text of a timing-only overlap scenario in tmp/overlap, on one thread with its CPU time,
 * with protocol.bucket_mb = `bucket_mb`. */
static int overlap_run(const char *text, const char *file, double bucket_mb, const char *tmp,
                       run_result *res, sim_err *err)
{
    char set[64], run_dir[4096];
    snprintf(set, sizeof(set), "protocol.bucket_mb=%.17g", bucket_mb);
    int n = snprintf(run_dir, sizeof(run_dir), "%s/overlap", tmp);
    if (n < 0 || (size_t)n >= sizeof(run_dir))
        return sim_err_set(err, SIM_EINVAL, NULL, "temporary directory name too long: %s", tmp);
    const char *sets[] = { set };
    return run_text(text, file, sets, 1, run_dir, 1, true, res, err);
}

/* The overlapped iteration: 16 workers with resnet50's profile (25.6 M parameters, 102 MB of
 * gradients) and 150 ms iterations on a 10 Gbit/s star with 50 us NICs, where one ring takes
 * about as long as the computation. The reference is the no-overlap closed form, compute then
 * one ring: C + 2(N-1)(2L + (S/N)/B). */
static int bench_overlapped_iteration(FILE *out, const char *tmp, sim_err *err)
{
    static const char text[] =
        "{\"seed\": 1, \"workers\": 16, \"compute\": {\"iteration_ms\": 150, \"profile\":"
        " \"resnet50\"}, \"network\": {\"bandwidth_gbps\": 10, \"latency_us\": 50},"
        " \"workload\": {\"model\": {\"name\": \"none\"}}, \"protocol\": {\"name\":"
        " \"allreduce\"}, \"stop\": {\"iterations\": 64}}";
    run_result r;
    int rc = overlap_run(text, "bench-overlap-16.json", 25.0, tmp, &r, err);
    if (rc != SIM_OK)
        return rc;
    double N = 16.0, L_s = 2 * 50e-6, B_bps = 10e9;
    double closed_s =
        (double)r.iter_ns / 1e9 + 2 * (N - 1) * (L_s + (double)r.bytes / N * 8 / B_bps);
    sim_bench_emit_time(out, "overlap.allreduce_resnet50_16_iteration", (double)r.sim_ns / 4 / 1e6,
                        "ms", closed_s * 1e3);
    return SIM_OK;
}

/* The cost of buckets to the simulator: one round of 1000 workers with resnet50's profile
 * (300 ms iterations, 10 Gbit/s, 5 us NICs), with 25 MiB buckets (four rings) against one
 * ring, both timed in this run: CPU seconds of each run's loop, then the same per event
 * processed. Each ring message is about one event in both runs, so the second line's ratio
 * near 1 says that the first one's follows the number of messages, four rings of 2N(N-1). */
static int bench_bucket_cost(FILE *out, const char *tmp, sim_err *err)
{
    static const char text[] =
        "{\"seed\": 1, \"workers\": 1000, \"compute\": {\"iteration_ms\": 300, \"profile\":"
        " \"resnet50\"}, \"network\": {\"bandwidth_gbps\": 10, \"latency_us\": 5},"
        " \"workload\": {\"model\": {\"name\": \"none\"}}, \"protocol\": {\"name\":"
        " \"allreduce\"}, \"stop\": {\"iterations\": 1000}}";
    run_result plain, bucket;
    int rc = overlap_run(text, "bench-buckets-1000.json", 0.0, tmp, &plain, err);
    if (rc == SIM_OK)
        rc = overlap_run(text, "bench-buckets-1000.json", 25.0, tmp, &bucket, err);
    if (rc != SIM_OK)
        return rc;
    double plain_s = plain.cpu_s > min_time_s ? plain.cpu_s : min_time_s;
    double bucket_s = bucket.cpu_s > min_time_s ? bucket.cpu_s : min_time_s;
    sim_bench_emit_time(out, "overlap.buckets_1000_workers_cpu", bucket_s, "s", plain_s);
    /* Both runs finish iterations, so both process events (sum.events > 0). */
    sim_bench_emit_time(out, "overlap.buckets_1000_workers_cpu_per_event",
                        bucket_s / (double)bucket.events * 1e9, "ns",
                        plain_s / (double)plain.events * 1e9);
    return SIM_OK;
}

int app_bench_overlap_run(FILE *out, const char *tmp_dir, sim_err *err)
{
    char *tmp = make_tmp(tmp_dir, err);
    if (tmp == NULL)
        return err->code;
    int rc = bench_overlapped_iteration(out, tmp, err);
    if (rc == SIM_OK)
        rc = bench_bucket_cost(out, tmp, err);
    if (rmdir(tmp) != 0 && rc == SIM_OK)
        rc = sim_err_set(err, SIM_EIO, NULL, "cannot remove %s: %s", tmp, strerror(errno));
    free(tmp);
    return rc;
}

/* ---- Collectives on hosts of 8 GPUs (app_bench_collectives_run) ---- */

/* One scale of `hetsim bench collectives`: ResNet-50's buckets all-reduced by `algorithm` over
 * `gpus` workers, 8 a host (ib-hdr NICs, NVLink 3 inside), for `rounds` iterations of every
 * worker; the events and messages between hosts per iteration, and the CPU seconds of the
 * loop per iteration. */
static int collectives_run(const char *algorithm, uint32_t gpus, uint32_t rounds, const char *tmp,
                           run_result *res, double *cpu_per_round, sim_err *err)
{
    char text[512], set[64], run_dir[4096];
    snprintf(text, sizeof(text),
             "{\"seed\": 1, \"workers\": %u, \"compute\": {\"iteration_ms\": 100,"
             " \"profile\": \"resnet50\"}, \"network\": {\"fabric\": \"ib-hdr\","
             " \"gpus_per_host\": 8, \"host_fabric\": \"nvlink3\"}, \"workload\":"
             " {\"model\": {\"name\": \"none\"}, \"batch\": 64}, \"protocol\":"
             " {\"name\": \"allreduce\"}, \"stop\": {\"iterations\": %u}}",
             gpus, gpus * rounds);
    snprintf(set, sizeof(set), "protocol.algorithm=\"%s\"", algorithm);
    int n = snprintf(run_dir, sizeof(run_dir), "%s/collectives", tmp);
    if (n < 0 || (size_t)n >= sizeof(run_dir))
        return sim_err_set(err, SIM_EINVAL, NULL, "temporary directory name too long: %s", tmp);
    const char *sets[] = { set };
    int rc = run_text(text, "bench-collectives.json", sets, 1, run_dir, 1, true, res, err);
    double cpu = res->cpu_s > min_time_s ? res->cpu_s : min_time_s;
    *cpu_per_round = cpu / rounds;
    return rc;
}

/* The lines of one scale: events per iteration against the messages between hosts, and CPU per
 * iteration against the flat ring's, each measured now. */
static int bench_collectives_at(FILE *out, uint32_t gpus, const char *tmp, sim_err *err)
{
    run_result hier, ring;
    double hier_s, ring_s;
    int rc = collectives_run("hierarchical", gpus, 2, tmp, &hier, &hier_s, err);
    if (rc == SIM_OK)
        rc = collectives_run("ring", gpus, 1, tmp, &ring, &ring_s, err);
    if (rc != SIM_OK)
        return rc;
    char name[96];
    snprintf(name, sizeof(name), "collectives.hierarchical_%u_events_per_iteration", gpus);
    sim_bench_emit_time(out, name, (double)hier.events / 2, "events", (double)hier.between / 2);
    snprintf(name, sizeof(name), "collectives.hierarchical_%u_cpu_per_iteration", gpus);
    sim_bench_emit_time(out, name, hier_s, "s", ring_s);
    return SIM_OK;
}

int app_bench_collectives_run(FILE *out, const char *tmp_dir, sim_err *err)
{
    char *tmp = make_tmp(tmp_dir, err);
    if (tmp == NULL)
        return err->code;
    int rc = bench_collectives_at(out, 256, tmp, err);
    if (rc == SIM_OK)
        rc = bench_collectives_at(out, 1024, tmp, err);
    if (rmdir(tmp) != 0 && rc == SIM_OK)
        rc = sim_err_set(err, SIM_EIO, NULL, "cannot remove %s: %s", tmp, strerror(errno));
    free(tmp);
    return rc;
}

/* ---- Threads: the same run on one thread and on all (issue 28) ---- */

/* One run of the pair: a model, its iteration time, the iterations that stop it, and how the
 * pair is timed (pair_time). */
typedef struct pair_case {
    const char *name;  /* the line's name */
    const char *model; /* the model section, or NULL: timing-only */
    int iteration_ms;
    uint64_t iterations;
    unsigned min_blocks; /* ABBA blocks at least */
    double min_s;        /* and seconds timed at least (up to PAIR_MAX_BLOCKS blocks) */
    bool cpu; /* CPU seconds of the loop on the simulation's thread, not wall: for a run that
               * starts no thread, the same as its wall time on an idle machine */
} pair_case;

enum {
    PAIR_MAX_BLOCKS = 15
};

static const pair_case pair_cases[] = {
    { "threads.cnn16", "{ \"name\": \"cnn\" }", 20, 960, 2, 0.0, false },
    { "threads.mlp16", "{ \"name\": \"mlp\", \"hidden\": [256] }", 5, 4800, 3, 60.0, false },
    { "threads.timing16", NULL, 5, 100000, 5, 20.0, true },
};

/* Runs `c` on `threads` threads: the seconds of its simulation loop (wall: summary's wall_s;
 * with c->cpu, the CPU time of the simulation's thread) in *s, and in *call_s and *wait_s the
 * wall seconds of the whole run and those its thread waited for a core. */
static int time_pair_run(const pair_case *c, unsigned threads, bool fmnist, const char *run_dir,
                         double *s, double *call_s, double *wait_s, sim_err *err)
{
    char text[SCENARIO_CHARS], workload[512];
    if (c->model == NULL)
        snprintf(workload, sizeof(workload),
                 "{ \"model\": { \"name\": \"none\" }, "
                 "\"message_bytes\": 400000 }");
    else
        snprintf(workload, sizeof(workload),
                 "{ \"dataset\": %s, \"model\": %s, \"batch\": 32, \"lr\": 0.05, "
                 "\"momentum\": 0.9 }",
                 fmnist ? "{ \"name\": \"fashion-mnist\", \"train_samples\": 8192 }"
                        : "{ \"name\": \"synthetic\", \"samples\": 4096, \"test_samples\": 1000, "
                          "\"dim\": 784, \"classes\": 10 }",
                 c->model);
    snprintf(text, sizeof(text),
             "{ \"name\": \"%s\", \"seed\": 2385, \"workers\": 16,"
             " \"compute\": { \"iteration_ms\": %d, \"jitter_sigma\": 0.1 },"
             " \"network\": { \"bandwidth_gbps\": 10, \"latency_us\": 50 },"
             " \"workload\": %s, \"protocol\": { \"name\": \"allreduce\" },"
             " \"stop\": { \"iterations\": %" PRIu64 " },"
             " \"eval\": { \"every_s\": %g, \"samples\": 1000 } }",
             c->name, c->iteration_ms, workload, c->iterations,
             (double)c->iteration_ms * (double)c->iterations / 16.0 / 4000.0);
    run_result r;
    int rc = run_text(text, "bench-threads.json", NULL, 0, run_dir, threads, c->cpu, &r, err);
    *s = c->cpu ? (r.cpu_s > min_time_s ? r.cpu_s : min_time_s) : r.wall_s;
    *call_s = r.call_s;
    *wait_s = r.wait_s;
    return rc;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The median of x[0..n) (n > 0), reordering x. */
static double median(double *x, size_t n)
{
    qsort(x, n, sizeof(*x), cmp_double);
    return n % 2 ? x[n / 2] : (x[n / 2 - 1] + x[n / 2]) / 2;
}

/* Times `c` on one thread (A) and on `threads` (B) in blocks A B B A, at least c->min_blocks
 * and c->min_s seconds timed (at most PAIR_MAX_BLOCKS blocks), and prints its line: the medians
 * over the blocks of the mean seconds of a run on `threads` (value) and on one (reference), the
 * median of the blocks' ratios A / B, the blocks, and the share of the runs' wall time that the
 * simulation's thread waited for a core held by another process (0 on an idle machine). The
 * order A B B A cancels a drift of the machine's speed within a block, and the medians drop
 * the blocks that other processes hit hardest. */
static int pair_time(FILE *out, const pair_case *c, unsigned threads, bool fmnist,
                     const char *run_dir, sim_err *err)
{
    double one[PAIR_MAX_BLOCKS], all[PAIR_MAX_BLOCKS], ratio[PAIR_MAX_BLOCKS];
    double timed_s = 0.0, call_s = 0.0, wait_s = 0.0;
    size_t nb = 0;
    while (nb < c->min_blocks || (timed_s < c->min_s && nb < PAIR_MAX_BLOCKS)) {
        double t[4];
        for (int k = 0; k < 4; k++) {
            double call, wait;
            int rc = time_pair_run(c, k == 0 || k == 3 ? 1 : threads, fmnist, run_dir, &t[k], &call,
                                   &wait, err);
            if (rc != SIM_OK)
                return rc;
            timed_s += t[k];
            call_s += call;
            wait_s += wait;
        }
        one[nb] = (t[0] + t[3]) / 2;
        all[nb] = (t[1] + t[2]) / 2;
        ratio[nb] = one[nb] / all[nb];
        nb++;
    }
    fprintf(out,
            "{\"name\": \"%s\", \"value\": %.6g, \"unit\": \"%s\", \"reference\": %.6g, "
            "\"ratio\": %.4f, \"blocks\": %zu, \"wait\": %.3f}\n",
            c->name, median(all, nb), c->cpu ? "cpu s" : "s", median(one, nb), median(ratio, nb),
            nb, call_s > 0 ? wait_s / call_s : 0.0);
    fflush(out);
    return SIM_OK;
}

int app_bench_threads_run(FILE *out, unsigned threads, const char *tmp_dir, sim_err *err)
{
    openblas_set_num_threads(1);
    data_idx_shape train_shape, test_shape;
    sim_err probe;
    sim_err_clear(&probe);
    bool fmnist = data_probe_fashion_mnist(NULL, &train_shape, &test_shape, &probe) == SIM_OK;
    char *tmp = make_tmp(tmp_dir, err);
    if (tmp == NULL)
        return err->code;
    char run_dir[4096];
    snprintf(run_dir, sizeof(run_dir), "%s/run", tmp);
    int rc = SIM_OK;
    for (size_t i = 0; i < sizeof(pair_cases) / sizeof(pair_cases[0]) && rc == SIM_OK; i++) {
        const pair_case *c = &pair_cases[i];
        if (c->model != NULL && strstr(c->model, "cnn") != NULL && !fmnist)
            continue; /* the CNN needs images */
        rc = pair_time(out, c, threads, fmnist, run_dir, err);
    }
    if (rmdir(tmp) != 0 && rc == SIM_OK)
        rc = sim_err_set(err, SIM_EIO, NULL, "cannot remove %s: %s", tmp, strerror(errno));
    free(tmp);
    return rc;
}
