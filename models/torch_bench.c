/* `hetsim bench torch` (models/torch_bench.h): gradients through a model server against a
 * plain PyTorch loop on the same network, batch and core. */
#include "models/torch_bench.h"

#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gsl/gsl_rng.h>

#include "models/train.h"
#include "scenario/scenario.h"
#include "sim/bench.h"

typedef struct bench_case {
    const char *name;   /* the line's name */
    const char *module; /* in examples/torch */
    size_t dim, batch, iterations;
} bench_case;

/* LeNet-5 at batch 32 (about 3 ms a step on one core), ResNet-20 at batch 128 (about half a
 * second): blocks of similar length. */
static const bench_case cases[] = {
    { "torch.lenet5_b32", "lenet5.py", 784, 32, 100 },
    { "torch.resnet20_b128", "resnet20.py", 3072, 128, 4 },
};

/* examples/torch of the source tree (the build tree), else of an installed hetsim. */
static bool examples_dir(char *out, size_t size)
{
    char cands[3][1024];
    size_t n = 0;
#ifdef HETSIM_SOURCE_PYDIR
    snprintf(cands[n++], sizeof(cands[0]), "%s/../examples/torch", HETSIM_SOURCE_PYDIR);
#endif
    char exe[900];
    ssize_t len = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
    if (len > 0) {
        exe[len] = '\0';
        char *slash = strrchr(exe, '/');
        if (slash != NULL) {
            *slash = '\0';
            snprintf(cands[n++], sizeof(cands[0]), "%s/../share/hetsim/examples/torch", exe);
        }
    }
#ifdef HETSIM_DATADIR
    snprintf(cands[n++], sizeof(cands[0]), "%s/examples/torch", HETSIM_DATADIR);
#endif
    for (size_t i = 0; i < n; i++) {
        char file[1100];
        struct stat st;
        snprintf(file, sizeof(file), "%.1000s/lenet5.py", cands[i]);
        if (stat(file, &st) == 0 && strlen(cands[i]) < size) {
            snprintf(out, size, "%s", cands[i]);
            return true;
        }
    }
    return false;
}

static int run_case(FILE *out, const bench_case *c, const char *dir, sim_err *err)
{
    char json[1024], file[1100];
    snprintf(json, sizeof(json),
             "{\"seed\": 1, \"workers\": 1, \"workload\": {\"dataset\": {\"name\": "
             "\"synthetic\", \"samples\": 2048, \"test_samples\": 256, \"dim\": %zu, "
             "\"classes\": 10}, \"model\": {\"name\": \"torch\", \"module\": \"%s\"}, "
             "\"batch\": %zu}, \"protocol\": {\"name\": \"allreduce\"}}",
             c->dim, c->module, c->batch);
    snprintf(file, sizeof(file), "%s/bench.json", dir);
    sim_scenario *sc = sim_scenario_parse(json, strlen(json), file, NULL, 0, err);
    if (sc == NULL)
        return err->code;
    train_config tc;
    gsl_rng *data = gsl_rng_alloc(gsl_rng_mt19937), *init = gsl_rng_alloc(gsl_rng_mt19937);
    train *t = NULL;
    int rc = data == NULL || init == NULL ? sim_err_set(err, SIM_ENOMEM, NULL, "out of memory")
                                          : train_config_read(sc, &tc, err);
    if (rc == SIM_OK && (t = train_create(&tc, data, init, err)) == NULL)
        rc = err->code;
    torch_bench_result r;
    if (rc == SIM_OK)
        rc = torch_backend_bench(train_servers(t), c->batch, c->iterations, 3, &r, err);
    if (rc == SIM_OK) {
        double n = (double)(c->batch * c->iterations);
        char name[128];
        sim_bench_emit(out, c->name, n / r.ours, "samples/s", n / r.plain);
        snprintf(name, sizeof(name), "%s_cpu", c->name);
        sim_bench_emit(out, name, n / r.ours_cpu, "samples/cpu s", n / r.plain_cpu);
        snprintf(name, sizeof(name), "%s_overhead", c->name);
        /* The ratio: the share of a plain step the request's overhead costs. */
        sim_bench_emit(out, name, r.overhead_s * 1e6, "us/request",
                       r.plain / (double)c->iterations * 1e6);
    }
    train_destroy(t);
    gsl_rng_free(data);
    gsl_rng_free(init);
    sim_scenario_destroy(sc);
    return rc;
}

int torch_bench(FILE *out, sim_err *err)
{
    char dir[1024];
    if (!examples_dir(dir, sizeof(dir)))
        return sim_err_set(err, SIM_EIO, NULL, "cannot find examples/torch (lenet5.py)");
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        int rc = run_case(out, &cases[i], dir, err);
        if (rc != SIM_OK)
            return rc;
    }
    return SIM_OK;
}
