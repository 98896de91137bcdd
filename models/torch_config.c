/* Reading a torch model's section and probing its module (models/torch.h). */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "models/torch.h"
#include "models/torch_proc.h"

/* Test examples per evaluation pass (TRAIN_EVAL_BATCH, which models/train.h defines above
 * this module). */
#define PROBE_EVAL_BATCH 256

/* Keys of the model section that are hetsim's; every other one is the module's. */
static const char *const own_keys[] = { "name", "module", "device" };

static int bad(sim_err *err, const char *file, const char *path, const char *msg)
{
    sim_err_set(err, SIM_ESCENARIO, path, "%s", msg);
    return sim_err_file(err, file);
}

/* The interpreter: $HETSIM_PYTHON, else Debian's /usr/bin/python3 (where python3-torch
 * installs), else python3 on the PATH. */
static void find_python(char *out, size_t size)
{
    const char *env = getenv("HETSIM_PYTHON");
    if (env != NULL && env[0] != '\0')
        snprintf(out, size, "%s", env);
    else if (access("/usr/bin/python3", X_OK) == 0)
        snprintf(out, size, "/usr/bin/python3");
    else
        snprintf(out, size, "python3");
}

/* The folder holding hetsim/server.py: the running binary's "../share/hetsim/python" (an
 * installed hetsim), the source tree's python/ (the build tree), then the configured install
 * folder's; "" when none has it (an installed package, `pip install ./python`, serves). */
static void find_pydir(char *out, size_t size)
{
    char dirs[3][1024];
    size_t n = 0;
    char exe[1024];
    ssize_t len = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
    if (len > 0) {
        exe[len] = '\0';
        char *slash = strrchr(exe, '/');
        if (slash != NULL) {
            *slash = '\0';
            snprintf(dirs[n++], sizeof(dirs[0]), "%.900s/../share/hetsim/python", exe);
        }
    }
#ifdef HETSIM_SOURCE_PYDIR
    snprintf(dirs[n++], sizeof(dirs[0]), "%s", HETSIM_SOURCE_PYDIR);
#endif
#ifdef HETSIM_DATADIR
    snprintf(dirs[n++], sizeof(dirs[0]), "%s/python", HETSIM_DATADIR);
#endif
    out[0] = '\0';
    for (size_t i = 0; i < n; i++) {
        char file[1100];
        struct stat st;
        snprintf(file, sizeof(file), "%.1000s/hetsim/server.py", dirs[i]);
        if (stat(file, &st) == 0 && S_ISREG(st.st_mode) && strlen(dirs[i]) < size) {
            snprintf(out, size, "%s", dirs[i]);
            return;
        }
    }
}

/* The levels of arrays and objects the JSON text `json` opens at its deepest. */
static size_t json_levels(const char *json)
{
    size_t depth = 0, deepest = 0;
    bool in_string = false;
    for (const char *p = json; *p != '\0'; p++) {
        if (in_string) {
            if (*p == '\\' && p[1] != '\0')
                p++;
            else if (*p == '"')
                in_string = false;
        } else if (*p == '"') {
            in_string = true;
        } else if (*p == '[' || *p == '{') {
            deepest = ++depth > deepest ? depth : deepest;
        } else if ((*p == ']' || *p == '}') && depth > 0) {
            depth--;
        }
    }
    return deepest;
}

/* run.json holds an argument at $.scenario.workload.model.KEY, its value's levels under 4: so
 * that every reader of run.json (plot, report, check, a sweep) takes it, 4 plus the levels are at
 * most the JSON parser's 1000. */
enum {
    ARG_LEVELS = 996
};

/* The module's arguments: the section's keys but hetsim's, as one JSON object. */
static int read_args(const char *file, sim_cfg *m, model_torch_config *tc, sim_err *err)
{
    snprintf(tc->args, sizeof(tc->args), "{");
    bool fits = true;
    for (size_t i = 0; i < sim_cfg_nkeys(m) && fits; i++) {
        const char *key = sim_cfg_key(m, i);
        bool own = false;
        for (size_t k = 0; k < sizeof(own_keys) / sizeof(own_keys[0]); k++)
            own |= strcmp(key, own_keys[k]) == 0;
        if (own)
            continue;
        char *json = NULL;
        int rc = sim_cfg_json(m, key, &json, err);
        if (rc != SIM_OK)
            return sim_err_file(err, file);
        size_t levels = json_levels(json);
        if (levels > ARG_LEVELS) {
            free(json);
            char path[300], msg[200];
            snprintf(path, sizeof(path), "$.workload.model.%.200s", key);
            snprintf(msg, sizeof(msg),
                     "nested %zu levels deep, more than %d: run.json holds it 4 levels down, and "
                     "its readers take at most 1000 (the JSON parser's limit)",
                     levels, ARG_LEVELS);
            return bad(err, file, path, msg);
        }
        fits = (tc->args[1] == '\0' || torch_append(tc->args, sizeof(tc->args), ", ")) &&
               torch_json_string(tc->args, sizeof(tc->args), key) &&
               torch_append(tc->args, sizeof(tc->args), ": ") &&
               torch_append(tc->args, sizeof(tc->args), json);
        free(json);
    }
    if (!fits || !torch_append(tc->args, sizeof(tc->args), "}"))
        return bad(err, file, "$.workload.model",
                   "the module's arguments take more than 4 KiB of JSON");
    return SIM_OK;
}

static int read_section(const char *file, sim_cfg *m, model_torch_config *tc, sim_err *err)
{
    memset(tc, 0, sizeof(*tc));
    snprintf(tc->device, sizeof(tc->device), "cpu");
    int rc = sim_cfg_require(m, "module", err);
    if (rc == SIM_OK)
        rc = sim_cfg_string(m, "module", tc->shown, sizeof(tc->shown), err);
    if (rc == SIM_OK)
        rc = sim_cfg_string(m, "device", tc->device, sizeof(tc->device), err);
    if (rc != SIM_OK)
        return sim_err_file(err, file);
    if (strcmp(tc->device, "cpu") != 0 && strncmp(tc->device, "cuda", 4) != 0)
        return bad(err, file, "$.workload.model.device",
                   "must be \"cpu\" or \"cuda\" (or \"cuda:N\")");
    const char *slash = strrchr(file, '/');
    int dir = slash != NULL ? (int)(slash - file) : 0;
    snprintf(tc->base_dir, sizeof(tc->base_dir), "%.*s", dir, dir > 0 ? file : ".");
    if (dir == 0)
        snprintf(tc->base_dir, sizeof(tc->base_dir), ".");
    int n = tc->shown[0] == '/'
                ? snprintf(tc->module, sizeof(tc->module), "%s", tc->shown)
                : snprintf(tc->module, sizeof(tc->module), "%s/%s", tc->base_dir, tc->shown);
    if (n < 0 || (size_t)n >= sizeof(tc->module))
        return bad(err, file, "$.workload.model.module", "path too long");
    if (access(tc->module, R_OK) != 0) {
        sim_err_set(err, SIM_ESCENARIO, "$.workload.model.module", "cannot read %s: %s", tc->module,
                    strerror(errno));
        return sim_err_file(err, file);
    }
    find_python(tc->python, sizeof(tc->python));
    find_pydir(tc->pydir, sizeof(tc->pydir));
    return read_args(file, m, tc, err);
}

/* ---- the probe ---- */

/* A probe's layer's kind and bytes (tools/profile_rules.py's, sim/layers.h). */
static int read_kind_bytes(sim_cfg *e, sim_layer *y, sim_err *err)
{
    const char *kinds[SIM_KIND_N];
    for (int k = 0; k < SIM_KIND_N; k++)
        kinds[k] = sim_layer_kind_name(k);
    int rc = sim_cfg_choice(e, "kind", kinds, SIM_KIND_N, &y->kind, err);
    if (rc == SIM_OK)
        rc = sim_cfg_double(e, "forward_bytes", 0.0, 1e30, &y->fwd_bytes, err);
    if (rc == SIM_OK)
        rc = sim_cfg_double(e, "elementwise_bytes", 0.0, 1e30, &y->ew_bytes, err);
    return rc;
}

/* The probe's answer (a JSON object) into cfg, info and layers. */
static int read_probe(const char *text, model_config *cfg, torch_probe_info *info,
                      sim_layers *layers, sim_err *err)
{
    sim_cfg *r = sim_cfg_parse(text, strlen(text), "the model server's probe", err);
    if (r == NULL)
        return err->code;
    int64_t params = 0, buffers = 0, classes = 0, train = 0, test = 0, rss = 0;
    size_t nl = 0;
    int rc = sim_cfg_int(r, "params", 1, INT_MAX, &params, err);
    if (rc == SIM_OK)
        rc = sim_cfg_int(r, "buffers", 0, INT_MAX, &buffers, err);
    if (rc == SIM_OK)
        rc = sim_cfg_int(r, "classes", 1, INT_MAX, &classes, err);
    if (rc == SIM_OK)
        rc = sim_cfg_int(r, "train", 1, INT_MAX, &train, err);
    if (rc == SIM_OK)
        rc = sim_cfg_int(r, "test", 1, INT_MAX, &test, err);
    if (rc == SIM_OK)
        rc = sim_cfg_int(r, "rss", 0, INT64_MAX, &rss, err);
    info->rules[0] = '\0';
    if (rc == SIM_OK && !sim_cfg_is_null(r, "layer_rules"))
        rc = sim_cfg_string(r, "layer_rules", info->rules, sizeof(info->rules), err);
    if (rc == SIM_OK)
        rc = sim_cfg_array_len(r, "layers", &nl, err);
    if (rc == SIM_OK && nl > SIM_LAYERS_MAX)
        rc = sim_err_set(err, SIM_ESCENARIO, "$.layers", "more than %d layers", SIM_LAYERS_MAX);
    sim_layers *l = layers;
    if (rc == SIM_OK)
        rc = sim_layers_init(l, nl, err);
    cfg->torch.flops = 0.0;
    for (size_t i = 0; i < nl && rc == SIM_OK; i++) {
        sim_cfg *e = NULL;
        int64_t p = 0;
        double f = 0.0;
        rc = sim_cfg_at(r, "layers", i, &e, err);
        if (rc == SIM_OK)
            rc = sim_cfg_string(e, "name", l->layer[i].name, sizeof(l->layer[i].name), err);
        if (rc == SIM_OK)
            rc = sim_cfg_int(e, "params", 0, INT_MAX, &p, err);
        if (rc == SIM_OK)
            rc = sim_cfg_double(e, "flops", 0.0, 1e30, &f, err);
        if (rc == SIM_OK)
            rc = read_kind_bytes(e, &l->layer[i], err);
        l->layer[i].params = (uint64_t)p;
        l->layer[i].fwd_flops = f;
        cfg->torch.flops += f;
    }
    if (rc == SIM_OK)
        sim_layers_finish(l);
    sim_cfg_destroy(r);
    cfg->torch.params = (size_t)params;
    cfg->torch.buffers = (size_t)buffers;
    cfg->torch.server_bytes = (uint64_t)rss;
    info->train = (size_t)train;
    info->test = (size_t)test;
    info->classes = (size_t)classes;
    return rc;
}

/* The probe's configuration: the module, and a data region of zeroed examples of `shape`
 * (NULL: the module's own data), enough for a training pass of `batch` and an evaluation pass
 * (the memory they take). */
static bool probe_config(char *out, size_t size, const model_torch_config *tc,
                         const torch_data_shape *shape, size_t batch, torch_data_layout *dl)
{
    size_t n = batch > PROBE_EVAL_BATCH ? batch : PROBE_EVAL_BATCH;
    snprintf(out, size, "{\"mode\": \"probe\", \"batch\": %zu, \"eval_batch\": %d, ", batch,
             PROBE_EVAL_BATCH);
    if (!torch_module_json(out, size, tc))
        return false;
    size_t used = strlen(out);
    snprintf(out + used, size - used, ", ");
    if (shape == NULL) {
        used = strlen(out);
        snprintf(out + used, size - used, "\"data\": null}");
        return strlen(out) + 1 < size;
    }
    size_t s[3] = { shape->channels, shape->height, shape->width };
    torch_data_layout_for(dl, s, shape->classes, n, n);
    if (!torch_data_json(out, size, dl))
        return false;
    used = strlen(out);
    snprintf(out + used, size - used, "}");
    return strlen(out) + 1 < size;
}

/* The module breaks the contract: the server's {"key": ..., "message": ...}, a key at fault
 * named by its path, else the module's file. */
static void contract_failed(const model_torch_config *tc, const char *text, sim_err *err)
{
    char key[64] = "", msg[sizeof(err->msg)] = "";
    sim_err scratch;
    sim_cfg *r = sim_cfg_parse(text, strlen(text), "the model server", &scratch);
    if (r != NULL && !sim_cfg_is_null(r, "key"))
        sim_cfg_string(r, "key", key, sizeof(key), &scratch);
    if (r != NULL)
        sim_cfg_string(r, "message", msg, sizeof(msg), &scratch);
    sim_cfg_destroy(r);
    if (key[0] != '\0') {
        char path[128];
        snprintf(path, sizeof(path), "$.workload.model.%s", key);
        sim_err_set(err, SIM_ESCENARIO, path, "%s", msg);
    } else {
        sim_err_set(err, SIM_ESCENARIO, "$.workload.model.module", "%s: %s", tc->shown,
                    msg[0] != '\0' ? msg : text);
    }
}

/* Turns the probe's failure into the scenario's error. */
static int probe_failed(const char *file, const model_torch_config *tc, const torch_reply *rp,
                        const sim_err *died, sim_err *err)
{
    const char *text = rp->text != NULL ? rp->text : "";
    sim_err_clear(err);
    if (died != NULL)
        sim_err_set(err, SIM_ESCENARIO, "$.workload.model.module", "%s: %s", tc->shown, died->msg);
    else if (rp->status == TORCH_STATUS_NO_TORCH)
        sim_err_set(err, SIM_ESCENARIO, "$.workload.model",
                    "PyTorch cannot be imported by %s (%s): install the Debian package "
                    "python3-torch",
                    tc->python, text);
    else
        contract_failed(tc, text, err);
    return sim_err_file(err, file);
}

static int probe(const char *file, model_config *cfg, const torch_data_shape *shape, size_t batch,
                 torch_probe_info *info, sim_layers *layers, sim_err *err)
{
    model_torch_config *tc = &cfg->torch;
    char *conf = malloc(16384);
    if (conf == NULL)
        return sim_err_set(err, SIM_ENOMEM, NULL, "out of memory");
    torch_data_layout dl;
    torch_proc p = { .index = 0 };
    int data_fd = -1;
    torch_reply rp = { 0 };
    int rc = SIM_OK;
    if (!probe_config(conf, 16384, tc, shape, batch, &dl))
        rc = bad(err, file, "$.workload.model", "the module's configuration is too long");
    if (rc == SIM_OK && shape != NULL)
        rc = torch_region(dl.bytes, &data_fd, NULL, err);
    sim_err died;
    if (rc == SIM_OK && (rc = torch_proc_start(&p, tc, NULL, data_fd, conf, err)) != SIM_OK &&
        rc != SIM_ENOMEM) {
        died = *err;
        rc = probe_failed(file, tc, &rp, &died, err);
    }
    if (rc == SIM_OK && torch_proc_ready(&p, &rp, &died) != SIM_OK)
        rc = probe_failed(file, tc, &rp, &died, err);
    else if (rc == SIM_OK && rp.status != TORCH_STATUS_OK)
        rc = probe_failed(file, tc, &rp, NULL, err);
    else if (rc == SIM_OK && read_probe(rp.text, cfg, info, layers, err) != SIM_OK)
        rc = sim_err_file(err, file);
    torch_proc_stop(&p);
    if (data_fd >= 0)
        close(data_fd);
    free(rp.text);
    free(conf);
    return rc;
}

/* A probe's result, kept with the scenario (sim_scenario.model_probe) for the next read of
 * the same module with the same data shape and batch. */
typedef struct probe_cache {
    model_torch_config tc;
    torch_data_shape shape;
    bool own;
    size_t batch, classes;
    torch_probe_info info;
    sim_layers layers;
} probe_cache;

static void cache_free(void *p)
{
    probe_cache *c = p;
    if (c != NULL)
        sim_layers_fini(&c->layers);
    free(c);
}

static bool same_probe(const probe_cache *c, const model_torch_config *tc,
                       const torch_data_shape *shape, size_t batch)
{
    return strcmp(c->tc.module, tc->module) == 0 && strcmp(c->tc.args, tc->args) == 0 &&
           strcmp(c->tc.device, tc->device) == 0 && strcmp(c->tc.python, tc->python) == 0 &&
           strcmp(c->tc.pydir, tc->pydir) == 0 && c->batch == batch && c->own == (shape == NULL) &&
           (shape == NULL || memcmp(&c->shape, shape, sizeof(*shape)) == 0);
}

static int copy_layers(sim_layers *to, const sim_layers *from, sim_err *err)
{
    int rc = sim_layers_init(to, from->n, err);
    if (rc != SIM_OK)
        return rc;
    memcpy(to->layer, from->layer, from->n * sizeof(*from->layer));
    sim_layers_finish(to);
    return SIM_OK;
}

/* Keeps the probe's result with the scenario (nothing kept when out of memory). */
static void remember(sim_scenario *sc, const model_config *cfg, const torch_data_shape *shape,
                     size_t batch, const torch_probe_info *info, const sim_layers *layers)
{
    probe_cache *c = calloc(1, sizeof(*c));
    if (c == NULL || copy_layers(&c->layers, layers, NULL) != SIM_OK) {
        cache_free(c);
        return;
    }
    c->tc = cfg->torch;
    c->own = shape == NULL;
    if (shape != NULL)
        c->shape = *shape;
    c->batch = batch;
    c->classes = cfg->classes;
    c->info = *info;
    if (sc->model_probe_free != NULL)
        sc->model_probe_free(sc->model_probe);
    sc->model_probe = c;
    sc->model_probe_free = cache_free;
}

/* compute.profile "module" asks for layers by the rules. */
static int check_rules(const sim_scenario *sc, const model_torch_config *tc,
                       const torch_probe_info *info, sim_err *err)
{
    if (info->rules[0] == '\0' || !sim_scenario_module_profile(sc))
        return SIM_OK;
    sim_err_set(err, SIM_ESCENARIO, "$.compute.profile",
                "\"module\" needs %s's layers by tools/profile_model.py's rules: %s", tc->shown,
                info->rules);
    return sim_err_file(err, sc->file);
}

int torch_config_read(sim_scenario *sc, const torch_data_shape *shape, size_t batch,
                      model_config *cfg, torch_probe_info *info, sim_layers *layers, sim_err *err)
{
    int rc = read_section(sc->file, sc->model_cfg, &cfg->torch, err);
    if (rc == SIM_OK) /* a file the scenario reads, as its data is */
        rc = sim_scenario_note_input(sc, cfg->torch.module, err);
    if (rc != SIM_OK)
        return rc;
    cfg->torch.own_data = shape == NULL;
    const probe_cache *c = sc->model_probe;
    if (sc->model_probe_free == cache_free && same_probe(c, &cfg->torch, shape, batch)) {
        cfg->torch = c->tc;
        cfg->classes = c->classes;
        *info = c->info;
        if ((rc = check_rules(sc, &cfg->torch, info, err)) != SIM_OK)
            return rc;
        return layers != NULL ? copy_layers(layers, &c->layers, err) : SIM_OK;
    }
    sim_layers own = { 0 };
    rc = probe(sc->file, cfg, shape, batch, info, &own, err);
    if (rc == SIM_OK) {
        cfg->classes = info->classes;
        remember(sc, cfg, shape, batch, info, &own);
        rc = check_rules(sc, &cfg->torch, info, err);
        if (rc == SIM_OK && layers != NULL)
            rc = copy_layers(layers, &own, err);
    }
    sim_layers_fini(&own);
    return rc;
}
