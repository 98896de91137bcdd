/* Reading a scenario's workload into a train_config (models/train.h): the dataset, the model
 * and the learning-rate schedule, strictly, without loading anything large. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "models/train.h"
#include "sim/file.h"
#include "sim/fnv.h"

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

/* `file` can be read: it is then one of the scenario's inputs (a check's --junit report must
 * not replace it: it replaced the LIBSVM data, exit 0). */
static int readable(sim_scenario *sc, const char *file, const char *path, sim_err *err)
{
    if (access(file, R_OK) == 0)
        return sim_scenario_note_input(sc, file, err);
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
        if (access(file, R_OK) != 0 && errno == ENOENT) {
            /* The hint first: a long path may fill the rest of the message. */
            sim_err_set(err, SIM_ESCENARIO, "$.workload.dataset.dir",
                        "Fashion-MNIST not found (install the Debian package "
                        "dataset-fashion-mnist, or set this dir): cannot read %s: %s",
                        file, strerror(ENOENT));
            return sim_err_file(err, sc->file);
        }
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
    cfg->test_examples = te.count;
    return SIM_OK;
}

/* FNV-1a 64 of the bytes of the regular file `file`, 0 when it cannot be read whole. */
static uint64_t file_fnv(const char *file)
{
    struct stat st;
    FILE *f = sim_file_open_regular(file, &st);
    if (f == NULL)
        return 0;
    uint64_t h = SIM_FNV_FILE_OFFSET;
    unsigned char buf[65536];
    for (size_t n; (n = fread(buf, 1, sizeof(buf), f)) > 0;)
        h = sim_fnv_bytes(h, buf, n);
    bool whole = !ferror(f);
    fclose(f);
    return whole ? h : 0;
}

/* The LIBSVM files' bytes, `fnv` the training file's as the probe read it, held to the
 * scenario's first read of them (a check's seeds, a sweep's points, each run's set-up), and
 * given to the data loads to hold theirs to. */
static int hold_data(sim_scenario *sc, train_config *cfg, uint64_t fnv, sim_err *err)
{
    int rc = sim_scenario_data_read(sc, 0, cfg->path, fnv, err);
    uint64_t test = cfg->test_path[0] != '\0' ? file_fnv(cfg->test_path) : 0;
    if (rc == SIM_OK && test != 0)
        rc = sim_scenario_data_read(sc, 1, cfg->test_path, test, err);
    if (rc != SIM_OK)
        return sim_err_file(err, sc->file);
    cfg->data_fnv[0] = sc->data_fnv[0];
    cfg->data_fnv[1] = sc->data_fnv[1];
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
    if (rc == SIM_OK) /* read only when given: listed as valid all the same */
        rc = sim_cfg_allow(d, "test_file", err);
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
    rc = hold_data(sc, cfg, probe.file_fnv, err);
    if (rc != SIM_OK) {
        data_fini(&probe);
        return rc;
    }
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
        size_t held = ntest == 0 ? 1 : ntest < n ? ntest : n;
        n -= held;
        cfg->test_examples = held;
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
    cfg->test_examples = (size_t)test;
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
    sim_err_path(err, path);
    err->code = SIM_ESCENARIO;
    return sim_err_file(err, sc->file);
}

/* torch: the module, probed on the data set's shape (or on its own data, without a
 * workload.dataset); its layers time the iteration unless a profile CSV or a named profile
 * does (compute.profile "module" asks for them by name). */
static int read_torch(sim_scenario *sc, train_config *cfg, sim_err *err)
{
    model_config *mc = &cfg->model;
    bool own = sc->dataset_cfg == NULL;
    torch_data_shape shape = { mc->channels, mc->height, mc->width, mc->classes };
    torch_probe_info info;
    bool layers = sc->profile[0] == '\0' || sim_scenario_module_profile(sc);
    int rc = torch_config_read(sc, own ? NULL : &shape, cfg->batch, mc, &info,
                               layers ? &sc->layers : NULL, err);
    if (rc != SIM_OK || !own)
        return rc;
    cfg->train_examples = info.train;
    cfg->test_examples = info.test;
    return SIM_OK;
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
                    "unknown model \"%s\" (valid: none, %s, vector, torch)", name, list);
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
    } else if (cfg->ops == &model_torch) {
        rc = read_torch(sc, cfg, err);
        if (rc != SIM_OK)
            return rc;
    }
    if (rc == SIM_OK)
        rc = sim_cfg_check_unused(m, err);
    if (rc != SIM_OK)
        return sim_err_file(err, sc->file);
    if (cfg->ops->flags & (MODEL_NO_PARAMS | MODEL_SERVER))
        return SIM_OK; /* the timing-only model has a name only, a torch one its probe */
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
    const model_ops *ops = model_find(sc->model);
    bool no_data = ops != NULL && (ops->flags & MODEL_NO_DATA);
    /* A model computed by servers without a data set trains on its module's own data. */
    bool own = ops != NULL && (ops->flags & MODEL_SERVER) && sc->dataset_cfg == NULL;
    int rc = no_data || own ? SIM_OK : read_dataset(sc, cfg, err);
    if (rc == SIM_OK)
        rc = read_model(sc, cfg, err);
    if (rc == SIM_OK && (cfg->ops->flags & MODEL_NO_PARAMS)) {
        /* Timing only: zero floats, no optimizer (its rates are 0), no memory of its own. A
         * schedule given is still checked as written (it was read by no one, so
         * {"kind": "nonsense"} ran). */
        if (sc->schedule_cfg != NULL && (rc = read_schedule(sc, cfg, err)) != SIM_OK)
            return rc;
        memset(&cfg->optim, 0, sizeof(cfg->optim));
        return SIM_OK;
    }
    if (rc == SIM_OK)
        rc = read_schedule(sc, cfg, err);
    if (rc != SIM_OK)
        return rc;
    cfg->num_params = cfg->ops->shape->num_params(&cfg->model);
    if (no_data) {
        /* Averaging only: the parameters and the (zero) gradients, no data. */
        cfg->bytes_estimate = (uint64_t)cfg->num_params * 4 * 3 * cfg->workers;
        return SIM_OK;
    }
    size_t D = own ? 0 : model_input_size(&cfg->model);
    size_t train_n = cfg->train_examples;
    /* Per worker: parameters, gradient and momentum (and a served model's buffers, twice);
     * the training and test sets. Message snapshots and a protocol's own buffers are the
     * protocol's to count (proto_ops.memory). */
    uint64_t per_worker = (uint64_t)cfg->num_params * 4 * (cfg->optim.momentum > 0 ? 3 : 2);
    size_t B = cfg->batch > TRAIN_EVAL_BATCH ? cfg->batch : TRAIN_EVAL_BATCH;
    cfg->bytes_estimate = per_worker * cfg->workers +
                          (uint64_t)(train_n + cfg->test_examples) * (D * 4 + 16) +
                          (uint64_t)cfg->ops->shape->num_acts(&cfg->model, B) * 4;
    if (cfg->ops->flags & MODEL_SERVER) /* thread 0's server and the shared data region */
        cfg->bytes_estimate += (uint64_t)cfg->model.torch.buffers * 8 * cfg->workers +
                               torch_server_bytes(&cfg->model, cfg->batch) +
                               torch_data_bytes(&cfg->model, train_n, cfg->test_examples, D);
    if (cfg->workers > train_n)
        return fail(err, sc, SIM_ESCENARIO, "$.workers",
                    "more workers than training examples: every worker needs data");
    if ((rc = check_batch(sc, cfg, err)) != SIM_OK)
        return rc;
    /* What the loader could not check against the clock: a base time from FLOPs, a message
     * the model's size. */
    uint64_t bytes = sc->message_bytes == 0 ? 4 * (uint64_t)cfg->num_params : 0;
    bool flops = sc->gflops > 0 && sc->profile[0] == '\0'; /* a profile's base is checked */
    double base_ns =
        flops ? model_flops_per_sample(cfg->ops, &cfg->model) * (double)cfg->batch / sc->gflops
              : 0.0;
    return sim_scenario_check_clock(sc, base_ns, flops ? "$.compute.gflops" : NULL, bytes, err);
}
