#include "models/train.h"

#include <assert.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <gsl/gsl_randist.h>

#include "sim/tensor.h"

#define EVAL_BATCH 256 /* test examples per forward pass */

/* A worker's minibatch loss above this many times its first one (or above this number when
 * the first was below 1) means the run diverged: the loss of an untrained model is about
 * ln(classes), and one that grows a thousandfold predicts wrong classes with certainty. */
#define DIVERGED_FACTOR 1000.0

/* OpenBLAS's own: a run is sequential and deterministic, so sgemm runs on one thread. */
void openblas_set_num_threads(int n);

/* Replicas share blocks (see train.h): a block is a parameter vector and its momentum buffer,
 * shared by the workers on it, and it may remember the keyed step last taken from it. */
enum {
    NO_BLOCK = UINT32_MAX
};

typedef struct train_block {
    float *p;          /* num_params */
    float *v;          /* num_params, or NULL without momentum */
    uint32_t refs;     /* workers on this block, plus keyed steps of other blocks leading here */
    uint32_t next;     /* the block the last keyed step from here made, or NO_BLOCK */
    uint64_t key;      /* that step's key, gradient, rate and momentum coefficient */
    const float *grad; /* (compared, never read) */
    double lr, momentum;
} train_block;

struct train {
    train_config cfg;
    data_set train_set, test_set;
    data_partition part;
    data_sampler **sampler; /* (workers) */
    float **params;         /* (workers) the parameters of each worker's block */
    float **grad;           /* (workers) each num_params */
    float **velocity;       /* (workers) the momentum buffer of each worker's block, or NULL
                               without momentum */
    train_block *blk;       /* (workers) blocks, as many as workers */
    uint32_t *blk_of;       /* (workers) each worker's block */
    uint32_t *blk_free;     /* (workers) stack of unused blocks */
    uint32_t nfree;
    double model_s;     /* wall seconds inside forward and backward passes of train_gradient */
    double *first_loss; /* (workers) each worker's first minibatch loss, NaN before it */
    float *x;           /* (max(batch, EVAL_BATCH), D) shared batch buffer */
    uint8_t *y;         /* (max(batch, EVAL_BATCH)) */
    float *acts;        /* (num_acts(max(batch, EVAL_BATCH))) shared workspace */
};

/* ---- reading the configuration ---- */

static int fail(sim_err *err, const sim_scenario *sc, int code, const char *path, const char *msg)
{
    sim_err_set(err, code, path, "%s", msg);
    return sim_err_file(err, sc->file);
}

/* Resolves `name` against the scenario file's directory unless it is absolute. */
static int resolve(const sim_scenario *sc, const char *name, char *out, size_t size)
{
    const char *slash = strrchr(sc->file, '/');
    int dir = name[0] != '/' && slash != NULL ? (int)(slash - sc->file) + 1 : 0;
    int n = snprintf(out, size, "%.*s%s", dir, sc->file, name);
    return n >= 0 && (size_t)n < size ? SIM_OK : SIM_EINVAL;
}

static int readable(const sim_scenario *sc, const char *file, const char *path, sim_err *err)
{
    if (access(file, R_OK) == 0)
        return SIM_OK;
    sim_err_set(err, SIM_ESCENARIO, path, "cannot read %s: %s", file, strerror(errno));
    return sim_err_file(err, sc->file);
}

static int read_path(sim_scenario *sc, sim_cfg *d, const char *key, char *out, size_t size,
                     sim_err *err)
{
    char name[512];
    int rc = sim_cfg_string(d, key, name, sizeof(name), err);
    if (rc != SIM_OK)
        return rc;
    char path[160];
    snprintf(path, sizeof(path), "%s.%s", sim_cfg_path(d), key);
    if (resolve(sc, name, out, size) != SIM_OK)
        return fail(err, sc, SIM_ESCENARIO, path, "path too long");
    return SIM_OK;
}

static int read_fashion_mnist(sim_scenario *sc, sim_cfg *d, train_config *cfg, sim_err *err)
{
    static const char *const files[] = { "train-images-idx3-ubyte.gz", "train-labels-idx1-ubyte.gz",
                                         "t10k-images-idx3-ubyte.gz", "t10k-labels-idx1-ubyte.gz" };
    snprintf(cfg->path, sizeof(cfg->path), "%s", DATA_FASHION_MNIST_DIR);
    if (sim_cfg_has(d, "dir")) {
        int rc = read_path(sc, d, "dir", cfg->path, sizeof(cfg->path), err);
        if (rc != SIM_OK)
            return rc;
    } else {
        int rc = sim_cfg_string(d, "dir", cfg->path, sizeof(cfg->path), err);
        if (rc != SIM_OK)
            return rc;
    }
    for (size_t i = 0; i < 4; i++) {
        char file[600];
        snprintf(file, sizeof(file), "%s/%s", cfg->path, files[i]);
        int rc = readable(sc, file, "$.workload.dataset.dir", err);
        if (rc != SIM_OK)
            return rc;
    }
    /* The four headers must agree; the image size they give is the model's input. */
    data_idx_shape tr, te;
    int rc = data_probe_fashion_mnist(cfg->path, &tr, &te, err);
    if (rc != SIM_OK)
        return rc == SIM_ENOMEM ? rc : (err->code = SIM_ESCENARIO);
    cfg->model.channels = 1;
    cfg->model.height = tr.rows;
    cfg->model.width = tr.cols;
    cfg->model.classes = 10;
    cfg->train_examples =
        cfg->train_samples > 0 && cfg->train_samples < tr.count ? cfg->train_samples : tr.count;
    return SIM_OK;
}

/* LIBSVM files are read here already: their shape (features, classes) decides the model's. */
static int read_libsvm(sim_scenario *sc, sim_cfg *d, train_config *cfg, sim_err *err)
{
    int64_t max_features = 1 << 16;
    cfg->test_fraction = 0.2;
    int rc = sim_cfg_require(d, "file", err);
    if (rc == SIM_OK)
        rc = read_path(sc, d, "file", cfg->path, sizeof(cfg->path), err);
    if (rc == SIM_OK && sim_cfg_has(d, "test_file"))
        rc = read_path(sc, d, "test_file", cfg->test_path, sizeof(cfg->test_path), err);
    if (rc == SIM_OK && cfg->test_path[0] == '\0')
        rc = sim_cfg_double(d, "test_fraction", 0.01, 0.9, &cfg->test_fraction, err);
    if (rc == SIM_OK)
        rc = sim_cfg_int(d, "max_features", 1, 1 << 24, &max_features, err);
    if (rc != SIM_OK)
        return sim_err_file(err, sc->file);
    cfg->max_features = (size_t)max_features;
    rc = readable(sc, cfg->path, "$.workload.dataset.file", err);
    if (rc == SIM_OK && cfg->test_path[0] != '\0')
        rc = readable(sc, cfg->test_path, "$.workload.dataset.test_file", err);
    if (rc != SIM_OK)
        return rc;
    data_set probe;
    rc = data_load_libsvm(cfg->path, cfg->max_features, 0, &probe, err);
    if (rc != SIM_OK)
        return rc == SIM_ENOMEM ? rc : (err->code = SIM_ESCENARIO);
    if (probe.classes < 2) { /* the file is fine, but a classifier needs two classes */
        sim_err_clear(err);
        sim_err_set(err, SIM_ESCENARIO, "$.workload.dataset.file",
                    "only one class (label %d in all %zu examples): a classifier needs at least 2",
                    (int)probe.label_value[0], probe.n);
        sim_err_file(err, cfg->path);
        data_fini(&probe);
        return SIM_ESCENARIO;
    }
    cfg->model.channels = 1;
    cfg->model.height = 1;
    cfg->model.width = probe.dim;
    cfg->model.classes = probe.classes;
    size_t n =
        cfg->train_samples > 0 && cfg->train_samples < probe.n ? cfg->train_samples : probe.n;
    if (cfg->test_path[0] == '\0') { /* as split() holds out the test share */
        size_t ntest = (size_t)llround(cfg->test_fraction * (double)n);
        n -= ntest == 0 ? 1 : ntest < n ? ntest : n;
    }
    cfg->train_examples = n;
    data_fini(&probe);
    return SIM_OK;
}

static int read_synthetic(sim_scenario *sc, sim_cfg *d, train_config *cfg, sim_err *err)
{
    int64_t samples = 10000, test = 2000, dim = 32, classes = 10;
    cfg->synthetic.separation = 3.0;
    int rc = sim_cfg_int(d, "samples", 1, 1 << 24, &samples, err);
    if (rc == SIM_OK)
        rc = sim_cfg_int(d, "test_samples", 1, 1 << 24, &test, err);
    if (rc == SIM_OK)
        rc = sim_cfg_int(d, "dim", 1, 1 << 20, &dim, err);
    if (rc == SIM_OK)
        rc = sim_cfg_int(d, "classes", 2, DATA_MAX_CLASSES, &classes, err);
    if (rc == SIM_OK)
        rc = sim_cfg_double(d, "separation", 0.0, 1e6, &cfg->synthetic.separation, err);
    if (rc != SIM_OK)
        return sim_err_file(err, sc->file);
    if ((uint64_t)samples * (uint64_t)dim > DATA_MAX_FLOATS)
        return fail(err, sc, SIM_ESCENARIO, "$.workload.dataset.samples",
                    "samples * dim exceeds 2^30 floats");
    cfg->synthetic.n = (size_t)samples;
    cfg->synthetic.dim = (size_t)dim;
    cfg->synthetic.classes = (uint32_t)classes;
    cfg->synthetic_test = (size_t)test;
    cfg->train_examples = (size_t)samples;
    cfg->model.channels = 1;
    cfg->model.height = 1;
    cfg->model.width = (size_t)dim;
    cfg->model.classes = (size_t)classes;
    return SIM_OK;
}

static int read_dataset(sim_scenario *sc, train_config *cfg, sim_err *err)
{
    static const char *const names[] = { "fashion-mnist", "libsvm", "synthetic" };
    static const char *const partitions[] = { "iid", "dirichlet" };
    sim_cfg *d = sc->dataset_cfg;
    int kind = 0, partition = 0;
    int64_t train_samples = 0;
    cfg->alpha = 0.5;
    int rc = sim_cfg_choice(d, "name", names, 3, &kind, err);
    if (rc == SIM_OK)
        rc = sim_cfg_choice(d, "partition", partitions, 2, &partition, err);
    if (rc == SIM_OK && partition == 1)
        rc = sim_cfg_double(d, "alpha", nextafter(0.0, 1.0), 1e6, &cfg->alpha, err);
    if (rc == SIM_OK && kind != TRAIN_SYNTHETIC)
        rc = sim_cfg_int(d, "train_samples", 0, 1 << 24, &train_samples, err);
    if (rc != SIM_OK)
        return sim_err_file(err, sc->file);
    cfg->dataset = (train_dataset)kind;
    cfg->dirichlet = partition == 1;
    cfg->train_samples = (size_t)train_samples;
    switch (cfg->dataset) {
    case TRAIN_FASHION_MNIST:
        rc = read_fashion_mnist(sc, d, cfg, err);
        break;
    case TRAIN_LIBSVM:
        rc = read_libsvm(sc, d, cfg, err);
        break;
    case TRAIN_SYNTHETIC:
        rc = read_synthetic(sc, d, cfg, err);
        break;
    }
    if (rc == SIM_OK && (rc = sim_cfg_check_unused(d, err)) != SIM_OK)
        sim_err_file(err, sc->file);
    return rc;
}

/* Maps a model or optimizer field error ("hidden[1]") to its scenario path. */
static int field_error(sim_scenario *sc, const char *section, sim_err *err)
{
    char path[sizeof(err->path) + 64];
    snprintf(path, sizeof(path), "%s%s%s", section, err->path[0] != '\0' ? "." : "", err->path);
    snprintf(err->path, sizeof(err->path), "%.*s", (int)sizeof(err->path) - 1, path);
    err->code = SIM_ESCENARIO;
    return sim_err_file(err, sc->file);
}

static int read_model(sim_scenario *sc, train_config *cfg, sim_err *err)
{
    sim_cfg *m = sc->model_cfg;
    char name[32];
    int rc = sim_cfg_string(m, "name", name, sizeof(name), err);
    if (rc != SIM_OK)
        return sim_err_file(err, sc->file);
    cfg->ops = model_find(name);
    if (cfg->ops == NULL) {
        char list[128];
        model_list(list, sizeof(list));
        sim_err_set(err, SIM_ESCENARIO, "$.workload.model.name",
                    "unknown model \"%s\" (valid: none, %s, vector)", name, list);
        return sim_err_file(err, sc->file);
    }
    model_config *mc = &cfg->model;
    if (cfg->ops == &model_mlp) {
        size_t n = 0;
        rc = sim_cfg_array_len(m, "hidden", &n, err);
        if (rc == SIM_OK && n > MODEL_MAX_HIDDEN)
            rc = sim_err_set(err, SIM_ESCENARIO, "$.workload.model.hidden",
                             "at most %d hidden layers, got %zu", MODEL_MAX_HIDDEN, n);
        if (rc == SIM_OK && sim_cfg_has(m, "hidden"))
            mc->n_hidden = n;
        for (size_t i = 0; rc == SIM_OK && i < n; i++) {
            double units = 1.0; /* converted only when read: a refused value may be NaN */
            rc = sim_cfg_at_double(m, "hidden", i, 1, MODEL_MAX_DIM, true, &units, err);
            if (rc == SIM_OK)
                mc->hidden[i] = (size_t)units;
        }
        if (rc == SIM_OK && !sim_cfg_has(m, "hidden"))
            rc = sim_cfg_array_len(m, "hidden", &n, err); /* marks it read; default [256] */
    } else if (cfg->ops == &model_cnn) {
        int64_t v[4] = { (int64_t)mc->conv1, (int64_t)mc->conv2, (int64_t)mc->kernel,
                         (int64_t)mc->dense };
        const char *keys[4] = { "conv1", "conv2", "kernel", "dense" };
        for (size_t i = 0; i < 4 && rc == SIM_OK; i++)
            rc = sim_cfg_int(m, keys[i], 1, i == 2 ? 31 : 4096, &v[i], err);
        mc->conv1 = (size_t)v[0];
        mc->conv2 = (size_t)v[1];
        mc->kernel = (size_t)v[2];
        mc->dense = (size_t)v[3];
    } else if (cfg->ops == &model_svm) {
        rc = sim_cfg_double(m, "margin", nextafter(0.0, 1.0), 1e6, &mc->svm_margin, err);
    } else if (cfg->ops == &model_vector) {
        static const char *const inits[] = { "normal", "zero" };
        int64_t dim = 1;
        int init = 0;
        rc = sim_cfg_int(m, "dim", 1, MODEL_MAX_INPUT, &dim, err);
        if (rc == SIM_OK)
            rc = sim_cfg_choice(m, "init", inits, 2, &init, err);
        mc->dim = (size_t)dim;
        mc->vector_zero = init == 1;
    }
    if (rc == SIM_OK)
        rc = sim_cfg_check_unused(m, err);
    if (rc != SIM_OK)
        return sim_err_file(err, sc->file);
    if (model_check(cfg->ops, mc, err) != SIM_OK)
        return field_error(sc, "$.workload.model", err);
    return SIM_OK;
}

static int read_schedule(sim_scenario *sc, train_config *cfg, sim_err *err)
{
    static const char *const kinds[] = { "constant", "step", "cosine" };
    optim_config *o = &cfg->optim;
    o->lr = sc->lr;
    o->momentum = sc->momentum;
    o->weight_decay = sc->weight_decay;
    sim_cfg *s = sc->schedule_cfg;
    if (s != NULL) {
        int kind = 0;
        int rc = sim_cfg_choice(s, "kind", kinds, 3, &kind, err);
        o->schedule = (optim_schedule)kind;
        if (rc == SIM_OK && o->schedule == OPTIM_STEP)
            rc = sim_cfg_double(s, "gamma", nextafter(0.0, 1.0), 1.0, &o->gamma, err);
        if (rc == SIM_OK && o->schedule == OPTIM_STEP)
            rc = sim_cfg_double(s, "step_epochs", nextafter(0.0, 1.0), 1e9, &o->step_epochs, err);
        if (rc == SIM_OK && o->schedule == OPTIM_COSINE)
            rc = sim_cfg_double(s, "total_epochs", nextafter(0.0, 1.0), 1e9, &o->total_epochs, err);
        if (rc == SIM_OK && o->schedule == OPTIM_COSINE)
            rc = sim_cfg_double(s, "min_lr", 0.0, o->lr, &o->min_lr, err);
        if (rc == SIM_OK)
            rc = sim_cfg_double(s, "warmup_epochs", 0.0, 1e9, &o->warmup_epochs, err);
        if (rc == SIM_OK)
            rc = sim_cfg_double(s, "warmup_start_factor", 0.0, 1.0, &o->warmup_start_factor, err);
        if (rc == SIM_OK)
            rc = sim_cfg_check_unused(s, err);
        if (rc != SIM_OK)
            return sim_err_file(err, sc->file);
    }
    if (optim_config_check(o, err) != SIM_OK)
        return field_error(sc, "$.workload.lr_schedule", err);
    return SIM_OK;
}

/* A minibatch comes from one worker's share of the training data: a batch larger than the
 * share (the iid share, n / workers rounded down; Dirichlet shares vary around it) would
 * deal the same examples twice in one batch. */
static int check_batch(sim_scenario *sc, const train_config *cfg, sim_err *err)
{
    size_t share = cfg->train_examples / cfg->workers;
    if (cfg->batch <= share)
        return SIM_OK;
    sim_err_set(err, SIM_ESCENARIO, "$.workload.batch",
                "must be at most a worker's share of the training data, %zu (%zu examples over "
                "%zu workers), got %zu",
                share, cfg->train_examples, cfg->workers, cfg->batch);
    return sim_err_file(err, sc->file);
}

int train_config_read(sim_scenario *sc, train_config *cfg, sim_err *err)
{
    memset(cfg, 0, sizeof(*cfg));
    model_config_default(&cfg->model);
    optim_config_default(&cfg->optim);
    cfg->batch = sc->batch;
    cfg->workers = sc->workers;
    cfg->independent_init = sc->init_independent;
    bool vector = strcmp(sc->model, model_vector.name) == 0;
    int rc = vector ? SIM_OK : read_dataset(sc, cfg, err);
    if (rc == SIM_OK)
        rc = read_model(sc, cfg, err);
    if (rc == SIM_OK)
        rc = read_schedule(sc, cfg, err);
    if (rc != SIM_OK)
        return rc;
    cfg->num_params = cfg->ops->num_params(&cfg->model);
    if (vector) {
        /* Averaging only: the parameters and the (zero) gradients, no data. */
        cfg->bytes_estimate = (uint64_t)cfg->num_params * 4 * 3 * cfg->workers;
        return SIM_OK;
    }
    size_t D = model_input_size(&cfg->model);
    size_t train_n = cfg->train_examples;
    /* Per worker: parameters, gradient and momentum. Snapshots in flight are the runtime's
     * to count, a protocol's own buffers the protocol's (proto_ops.memory). */
    uint64_t per_worker = (uint64_t)cfg->num_params * 4 * (cfg->optim.momentum > 0 ? 3 : 2);
    size_t B = cfg->batch > EVAL_BATCH ? cfg->batch : EVAL_BATCH;
    cfg->bytes_estimate = per_worker * cfg->workers + (uint64_t)train_n * (D * 4 + 16) +
                          (uint64_t)cfg->ops->num_acts(&cfg->model, B) * 4;
    if (cfg->workers > train_n)
        return fail(err, sc, SIM_ESCENARIO, "$.workers",
                    "more workers than training examples: every worker needs data");
    if ((rc = check_batch(sc, cfg, err)) != SIM_OK)
        return rc;
    /* What the loader could not check against the clock: a base time from FLOPs, a message
     * the model's size. */
    uint64_t bytes = sc->message_bytes == 0 ? 4 * (uint64_t)cfg->num_params : 0;
    double base_ns = sc->gflops > 0 ? model_flops_per_sample(cfg->ops, &cfg->model) *
                                          (double)cfg->batch / sc->gflops
                                    : 0.0;
    return sim_scenario_check_clock(sc, base_ns, sc->gflops > 0 ? "$.compute.gflops" : NULL, bytes,
                                    err);
}

/* ---- loading ---- */

/* Moves the rows `idx` of `src` into a new set `dst` (same shape). */
static int subset(const data_set *src, const size_t *idx, size_t n, data_set *dst, sim_err *err)
{
    int rc = data_set_alloc(dst, n, src->dim, err);
    if (rc != SIM_OK)
        return rc;
    data_gather(src, idx, n, dst->x, dst->y);
    dst->classes = src->classes;
    dst->c = src->c;
    dst->h = src->h;
    dst->w = src->w;
    return SIM_OK;
}

/* Holds out a shuffled test_fraction of a LIBSVM training set. */
static int split(train *t, gsl_rng *r, sim_err *err)
{
    data_set all = t->train_set;
    size_t *idx = malloc(all.n * sizeof(*idx));
    if (idx == NULL)
        return sim_err_set(err, SIM_ENOMEM, NULL, "out of memory");
    for (size_t i = 0; i < all.n; i++)
        idx[i] = i;
    gsl_ran_shuffle(r, idx, all.n, sizeof(*idx));
    size_t ntest = (size_t)llround(t->cfg.test_fraction * (double)all.n);
    if (ntest == 0)
        ntest = 1;
    int rc = ntest >= all.n ? sim_err_set(err, SIM_ESCENARIO, "$.workload.dataset.test_fraction",
                                          "leaves no training data (%zu examples)", all.n)
                            : SIM_OK;
    memset(&t->train_set, 0, sizeof(t->train_set));
    if (rc == SIM_OK)
        rc = subset(&all, idx, ntest, &t->test_set, err);
    if (rc == SIM_OK)
        rc = subset(&all, idx + ntest, all.n - ntest, &t->train_set, err);
    free(idx);
    data_fini(&all);
    return rc;
}

static int load_data(train *t, gsl_rng *r, sim_err *err)
{
    const train_config *c = &t->cfg;
    int rc = SIM_OK;
    switch (c->dataset) {
    case TRAIN_FASHION_MNIST:
        rc = data_load_fashion_mnist(c->path, true, c->train_samples, &t->train_set, err);
        if (rc == SIM_OK)
            rc = data_load_fashion_mnist(c->path, false, 0, &t->test_set, err);
        if (rc == SIM_OK &&
            (t->train_set.h != c->model.height || t->train_set.w != c->model.width ||
             t->test_set.h != c->model.height || t->test_set.w != c->model.width ||
             t->train_set.n != c->train_examples))
            rc = sim_err_set(err, SIM_ESCENARIO, "$.workload.dataset.dir",
                             "the data files changed since their headers were read");
        break;
    case TRAIN_LIBSVM:
        rc = data_load_libsvm(c->path, c->max_features, c->train_samples, &t->train_set, err);
        if (rc == SIM_OK && c->test_path[0] != '\0')
            rc = data_load_libsvm(c->test_path, c->max_features, 0, &t->test_set, err);
        else if (rc == SIM_OK)
            rc = split(t, r, err);
        if (rc == SIM_OK && t->test_set.dim != t->train_set.dim)
            rc = sim_err_set(err, SIM_ESCENARIO, "$.workload.dataset.test_file",
                             "test data has %zu features, training data %zu", t->test_set.dim,
                             t->train_set.dim);
        break;
    case TRAIN_SYNTHETIC: {
        /* One draw for both sets, so that they share the class centres. */
        data_synthetic_config all = c->synthetic;
        all.n = c->synthetic.n + c->synthetic_test;
        data_set both;
        rc = data_synthetic(&all, r, &both, err);
        if (rc != SIM_OK)
            break;
        size_t *idx = malloc(all.n * sizeof(*idx));
        if (idx == NULL) {
            data_fini(&both);
            return sim_err_set(err, SIM_ENOMEM, NULL, "out of memory");
        }
        for (size_t i = 0; i < all.n; i++)
            idx[i] = i;
        rc = subset(&both, idx, c->synthetic.n, &t->train_set, err);
        if (rc == SIM_OK)
            rc = subset(&both, idx + c->synthetic.n, c->synthetic_test, &t->test_set, err);
        free(idx);
        data_fini(&both);
        break;
    }
    }
    if (rc != SIM_OK && rc != SIM_ENOMEM)
        err->code = rc = SIM_ESCENARIO; /* the data file is what is wrong */
    return rc;
}

static int alloc_workers(train *t, gsl_rng *init, sim_err *err)
{
    size_t n = t->cfg.workers, P = t->cfg.num_params;
    t->sampler = calloc(n, sizeof(*t->sampler));
    t->params = calloc(n, sizeof(*t->params));
    t->grad = calloc(n, sizeof(*t->grad));
    t->velocity = t->cfg.optim.momentum > 0 ? calloc(n, sizeof(*t->velocity)) : NULL;
    t->blk = calloc(n, sizeof(*t->blk));
    t->blk_of = calloc(n, sizeof(*t->blk_of));
    t->blk_free = calloc(n, sizeof(*t->blk_free));
    t->first_loss = calloc(n, sizeof(*t->first_loss));
    if (t->first_loss != NULL)
        for (size_t w = 0; w < n; w++)
            t->first_loss[w] = NAN;
    if (t->sampler == NULL || t->params == NULL || t->grad == NULL || t->first_loss == NULL ||
        t->blk == NULL || t->blk_of == NULL || t->blk_free == NULL ||
        (t->cfg.optim.momentum > 0 && t->velocity == NULL))
        return sim_err_set(err, SIM_ENOMEM, NULL, "out of memory");
    bool vector = t->cfg.ops == &model_vector;
    for (size_t w = 0; w < n; w++) {
        const data_partition *p = &t->part;
        t->sampler[w] =
            vector ? NULL
                   : data_sampler_create(&t->train_set, p->index + p->offset[w],
                                         p->offset[w + 1] - p->offset[w], t->cfg.batch, err);
        t->blk[w].p = sim_tensor_alloc(P);
        t->blk[w].next = NO_BLOCK;
        t->grad[w] = sim_tensor_alloc(P);
        if (t->velocity != NULL)
            t->blk[w].v = sim_tensor_alloc(P);
        if ((!vector && t->sampler[w] == NULL) || t->blk[w].p == NULL || t->grad[w] == NULL ||
            (t->velocity != NULL && t->blk[w].v == NULL))
            return err->code != SIM_OK ? err->code
                                       : sim_err_set(err, SIM_ENOMEM, NULL,
                                                     "out of memory for %zu workers' tensors", n);
    }
    /* One shared block when the replicas start equal; one each otherwise. */
    bool shared = !t->cfg.independent_init && !vector;
    for (size_t w = 0; w < n; w++) {
        uint32_t b = shared ? 0 : (uint32_t)w;
        t->blk_of[w] = b;
        t->blk[b].refs++;
        t->params[w] = t->blk[b].p;
        if (t->velocity != NULL)
            t->velocity[w] = t->blk[b].v;
    }
    for (size_t b = n; b-- > 0;)
        if (t->blk[b].refs == 0)
            t->blk_free[t->nfree++] = (uint32_t)b;
    t->cfg.ops->init_params(t->params[0], &t->cfg.model, init);
    for (size_t w = 1; w < n && t->cfg.independent_init; w++)
        t->cfg.ops->init_params(t->params[w], &t->cfg.model, init);
    return SIM_OK;
}

train *train_create(const train_config *cfg, gsl_rng *data, gsl_rng *init, sim_err *err)
{
    train *t = calloc(1, sizeof(*t));
    if (t == NULL) {
        sim_err_set(err, SIM_ENOMEM, NULL, "out of memory");
        return NULL;
    }
    t->cfg = *cfg;
    openblas_set_num_threads(1);
    if (cfg->ops == &model_vector) {
        if (alloc_workers(t, init, err) != SIM_OK) {
            train_destroy(t);
            return NULL;
        }
        return t;
    }
    int rc = load_data(t, data, err);
    if (rc == SIM_OK)
        rc = cfg->dirichlet ? data_partition_dirichlet(&t->train_set, cfg->workers, cfg->alpha,
                                                       data, &t->part, err)
                            : data_partition_iid(&t->train_set, cfg->workers, data, &t->part, err);
    size_t B = cfg->batch > EVAL_BATCH ? cfg->batch : EVAL_BATCH;
    if (rc == SIM_OK) {
        t->x = sim_tensor_alloc(B * t->train_set.dim);
        t->y = malloc(B);
        t->acts = sim_tensor_alloc(cfg->ops->num_acts(&cfg->model, B));
        if (t->x == NULL || t->y == NULL || t->acts == NULL)
            rc = sim_err_set(err, SIM_ENOMEM, NULL, "out of memory");
    }
    if (rc == SIM_OK)
        rc = alloc_workers(t, init, err);
    if (rc != SIM_OK) {
        train_destroy(t);
        return NULL;
    }
    return t;
}

void train_destroy(train *t)
{
    if (t == NULL)
        return;
    for (size_t w = 0; w < t->cfg.workers; w++) {
        if (t->sampler != NULL)
            data_sampler_destroy(t->sampler[w]);
        if (t->blk != NULL) {
            sim_tensor_free(t->blk[w].p);
            sim_tensor_free(t->blk[w].v);
        }
        if (t->grad != NULL)
            sim_tensor_free(t->grad[w]);
    }
    free(t->blk);
    free(t->blk_of);
    free(t->blk_free);
    free(t->sampler);
    free(t->params);
    free(t->grad);
    free(t->velocity);
    free(t->first_loss);
    sim_tensor_free(t->x);
    free(t->y);
    sim_tensor_free(t->acts);
    data_partition_fini(&t->part);
    data_fini(&t->train_set);
    data_fini(&t->test_set);
    free(t);
}

/* ---- shared blocks ---- */

/* Drops one reference to block b; unused blocks return to the stack, with the references of
 * their keyed steps. */
static void blk_unref(train *t, uint32_t b)
{
    while (b != NO_BLOCK && --t->blk[b].refs == 0) {
        uint32_t next = t->blk[b].next;
        t->blk[b].next = NO_BLOCK;
        t->blk_free[t->nfree++] = b;
        b = next;
    }
}

/* Block b forgets its keyed step (its contents are about to change, or room is needed). */
static void blk_forget(train *t, uint32_t b)
{
    uint32_t next = t->blk[b].next;
    t->blk[b].next = NO_BLOCK;
    blk_unref(t, next);
}

static void move_to(train *t, uint32_t w, uint32_t b)
{
    uint32_t old = t->blk_of[w];
    t->blk[b].refs++;
    t->blk_of[w] = b;
    t->params[w] = t->blk[b].p;
    if (t->velocity != NULL)
        t->velocity[w] = t->blk[b].v;
    blk_unref(t, old);
}

/* An unused block. There always is one when worker w's block has other references: blocks
 * held only by keyed steps are let go first, and then every used block has a worker of its
 * own, so w and another worker sharing one leave a block unused. */
static uint32_t blk_take(train *t)
{
    for (uint32_t b = 0; t->nfree == 0 && b < t->cfg.workers; b++)
        if (t->blk[b].refs > 0)
            blk_forget(t, b);
    assert(t->nfree > 0);
    uint32_t b = t->blk_free[--t->nfree];
    t->blk[b].refs = 0;
    t->blk[b].next = NO_BLOCK;
    return b;
}

/* Worker w is about to write its block: it gets one of its own if the block is shared (a copy
 * of parameters and momentum), and the block forgets its keyed step. */
static void own(train *t, uint32_t w)
{
    uint32_t b = t->blk_of[w];
    if (t->blk[b].refs > 1) {
        blk_forget(t, b);
        if (t->blk[b].refs > 1) {
            uint32_t nb = blk_take(t);
            size_t P = t->cfg.num_params;
            sim_tensor_copy(t->blk[nb].p, t->blk[b].p, P);
            if (t->velocity != NULL)
                sim_tensor_copy(t->blk[nb].v, t->blk[b].v, P);
            move_to(t, w, nb);
            return;
        }
    }
    blk_forget(t, b);
}

/* ---- queries and steps ---- */

size_t train_num_params(const train *t)
{
    return t->cfg.num_params;
}

size_t train_train_size(const train *t)
{
    return t->train_set.n;
}

size_t train_test_size(const train *t)
{
    return t->test_set.n;
}

float *train_params(train *t, uint32_t w)
{
    return t->params[w];
}

const float *train_grad(const train *t, uint32_t w)
{
    return t->grad[w];
}

float *train_params_write(train *t, uint32_t w)
{
    own(t, w);
    return t->params[w];
}

double train_model_seconds(const train *t)
{
    return t->model_s;
}

uint32_t train_blocks_in_use(const train *t)
{
    return (uint32_t)(t->cfg.workers - t->nfree);
}

float *train_swap_grad(train *t, uint32_t w, float *spare)
{
    float *g = t->grad[w];
    t->grad[w] = spare;
    return g;
}

void train_init_worker(train *t, uint32_t w, gsl_rng *r)
{
    own(t, w);
    t->cfg.ops->init_params(t->params[w], &t->cfg.model, r);
}

int train_gradient(train *t, uint32_t w, gsl_rng *r, double *loss, sim_err *err)
{
    const train_config *c = &t->cfg;
    if (c->ops == &model_vector) { /* no data: a zero gradient, no draw */
        sim_tensor_zero(t->grad[w], c->num_params);
        *loss = 0.0;
        return SIM_OK;
    }
    data_sampler_next(t->sampler[w], r, t->x, t->y, NULL);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    *loss = c->ops->forward(t->acts, t->params[w], t->x, t->y, c->batch, &c->model);
    if (!isfinite(*loss))
        return sim_err_set(err, SIM_ENUMERIC, NULL, "worker %u: the training loss is %g", w, *loss);
    if (isnan(t->first_loss[w]))
        t->first_loss[w] = *loss;
    double bound = DIVERGED_FACTOR * fmax(t->first_loss[w], 1.0);
    if (*loss > bound)
        return sim_err_set(err, SIM_ENUMERIC, NULL,
                           "worker %u: the training loss %.6g exceeds %.6g (%.0f times its first, "
                           "%.6g): the run diverged",
                           w, *loss, bound, DIVERGED_FACTOR, t->first_loss[w]);
    c->ops->backward(t->grad[w], t->acts, t->params[w], t->x, t->y, c->batch, &c->model);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    t->model_s += (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) * 1e-9;
    return SIM_OK;
}

void train_step(const train *t, float *params, float *velocity, const float *grad, double epoch)
{
    train_step_range(t, params, velocity, grad, t->cfg.num_params, epoch);
}

void train_step_range(const train *t, float *params, float *velocity, const float *grad, size_t n,
                      double epoch)
{
    assert(n <= t->cfg.num_params);
    optim_config o = t->cfg.optim;
    if (velocity == NULL)
        o.momentum = 0.0;
    optim_step(params, velocity, grad, n, optim_lr(&o, epoch), &o);
}

void train_step_range_with(const train *t, float *params, float *velocity, const float *grad,
                           size_t n, double lr, double momentum)
{
    assert(n <= t->cfg.num_params);
    optim_config o = t->cfg.optim;
    o.momentum = velocity != NULL ? momentum : 0.0;
    optim_step(params, velocity, grad, n, lr, &o);
}

double train_lr(const train *t, double epoch)
{
    return optim_lr(&t->cfg.optim, epoch);
}

void train_apply(train *t, uint32_t w, const float *grad, double epoch)
{
    own(t, w);
    optim_step(t->params[w], t->velocity != NULL ? t->velocity[w] : NULL, grad, t->cfg.num_params,
               optim_lr(&t->cfg.optim, epoch), &t->cfg.optim);
}

void train_apply_with(train *t, uint32_t w, const float *grad, double lr, double momentum)
{
    own(t, w);
    optim_config o = t->cfg.optim;
    float *velocity = t->velocity != NULL ? t->velocity[w] : NULL;
    o.momentum = velocity != NULL ? momentum : 0.0;
    optim_step(t->params[w], velocity, grad, t->cfg.num_params, lr, &o);
}

void train_average_step_pair(train *t, uint32_t i, uint32_t j, const float *gi, const float *gj,
                             double epoch)
{
    assert(i != j);
    own(t, i);
    own(t, j);
    float *vi = t->velocity != NULL ? t->velocity[i] : NULL;
    float *vj = t->velocity != NULL ? t->velocity[j] : NULL;
    optim_average_step_pair(t->params[i], t->params[j], vi, vj, gi, gj, t->cfg.num_params,
                            optim_lr(&t->cfg.optim, epoch), &t->cfg.optim);
}

void train_apply_keyed(train *t, uint32_t w, const float *grad, double lr, double momentum,
                       uint64_t key)
{
    uint32_t b = t->blk_of[w];
    train_block *k = &t->blk[b];
    if (k->next != NO_BLOCK && k->key == key && k->grad == grad && k->lr == lr &&
        k->momentum == momentum) {
        move_to(t, w, k->next); /* another worker on this block took this step already */
        return;
    }
    blk_forget(t, b);
    if (t->blk[b].refs == 1) { /* alone on it: in place */
        train_apply_with(t, w, grad, lr, momentum);
        return;
    }
    /* The step, from the shared block into a new one that the others will follow. */
    uint32_t nb = blk_take(t);
    size_t P = t->cfg.num_params;
    train_block *d = &t->blk[nb];
    k = &t->blk[b];
    sim_tensor_copy(d->p, k->p, P);
    optim_config o = t->cfg.optim;
    o.momentum = d->v != NULL ? momentum : 0.0;
    if (d->v != NULL)
        sim_tensor_copy(d->v, k->v, P);
    optim_step(d->p, d->v, grad, P, lr, &o);
    k->next = nb;
    k->key = key;
    k->grad = grad;
    k->lr = lr;
    k->momentum = momentum;
    d->refs = 1; /* the keyed step's reference */
    move_to(t, w, nb);
}

double train_momentum(const train *t)
{
    return t->cfg.optim.momentum;
}

void train_scale_momentum(train *t, uint32_t w, float factor)
{
    if (t->velocity == NULL)
        return;
    own(t, w);
    sim_tensor_scale(t->velocity[w], factor, t->cfg.num_params);
}

void train_evaluate(train *t, const float *params, size_t samples, double *loss, double *accuracy)
{
    const train_config *c = &t->cfg;
    size_t n = samples < t->test_set.n ? samples : t->test_set.n, D = t->test_set.dim;
    double sum = 0.0;
    size_t correct = 0;
    for (size_t i = 0; i < n; i += EVAL_BATCH) {
        size_t b = n - i < EVAL_BATCH ? n - i : EVAL_BATCH;
        const float *x = t->test_set.x + i * D;
        const uint8_t *y = t->test_set.y + i;
        sum += c->ops->forward(t->acts, params, x, y, b, &c->model) * (double)b;
        correct += model_count_correct(t->acts, y, b, &c->model);
    }
    *loss = n > 0 ? sum / (double)n : (double)NAN;
    *accuracy = n > 0 ? (double)correct / (double)n : (double)NAN;
}
