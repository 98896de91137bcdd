/* Scenario files (format v1, DESIGN §7): loading, validation, overrides, the resolved form.
 *
 * sim_scenario_load reads a JSON file, applies `--set PATH=VALUE` overrides, checks every
 * key strictly (unknown, duplicate, wrong type, out of range: an error naming the file and
 * the JSON path), fills in documented defaults, and resolves conveniences into plain data:
 * speeds broadcast to every worker, per-host network overrides applied, stragglers chosen
 * by count drawn from the seed, trace files read. The result is a plain struct the other
 * modules read; the loader copies everything out of cJSON before returning, except the
 * protocol, model and dataset sections, which stay as sim_cfg objects so that the module
 * that owns each one reads (and strictly checks) its own parameters.
 *
 * Absurd sizes are refused before anything large is allocated: more than SIM_MAX_WORKERS
 * workers, or a message size over SIM_MAX_MESSAGE_BYTES.
 */
#ifndef SCENARIO_SCENARIO_H
#define SCENARIO_SCENARIO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "net/net.h"
#include "scenario/device.h"
#include "sim/cfg.h"
#include "sim/engine.h"
#include "sim/err.h"
#include "sim/layers.h"

#define SIM_MAX_WORKERS       (1u << 20)
#define SIM_MAX_SERVERS       4096u
#define SIM_MAX_MESSAGE_BYTES (UINT64_C(1) << 44) /* 16 TiB */
#define SIM_MAX_EVALS         1000000             /* evaluations (metrics.csv rows) of a run */

typedef enum sim_straggler_kind {
    SIM_STRAG_FIXED = 0,   /* compute slowed by `slowdown` for the whole run */
    SIM_STRAG_RANDOM = 1,  /* each iteration slowed by `slowdown` with `probability` */
    SIM_STRAG_WINDOW = 2,  /* iterations starting in [from_ns, to_ns) slowed by `slowdown` */
    SIM_STRAG_LINK = 3,    /* links: extra latency and/or bandwidth factor in [from, to) */
    SIM_STRAG_TRACE = 4,   /* slowdowns from a CSV of time_s,worker,slowdown */
    SIM_STRAG_FAILURE = 5, /* down from at_ns until recover_ns (SIM_TIME_NEVER: for good) */
    SIM_STRAG_DROPOUT = 6  /* each averaging round sat out with `probability` (keeps its value) */
} sim_straggler_kind;

/* The most points (rows) of one straggler trace; a trace with more is refused, naming its file
 * and the limit. A point is 24 bytes, held with a sort's 40 more while read: a million is 64 MB
 * at most, where a 1 GiB trace of minimal rows ("0,0,1") held about 3 GB unchecked. */
#define SIM_TRACE_MAX_POINTS 1000000

typedef struct sim_trace_point {
    sim_time time_ns; /* from this time on ... */
    uint32_t worker;  /* ... this worker's compute is slowed by ... */
    double slowdown;  /* ... this factor (>= 1), until its next point */
} sim_trace_point;

typedef struct sim_straggler {
    sim_straggler_kind kind;
    uint32_t *workers;         /* (nworkers) selected ids, ascending, distinct; owned */
    size_t nworkers;           /* every kind but trace selects workers */
    double slowdown;           /* fixed, random, window: factor >= 1 */
    double probability;        /* random, dropout: in [0, 1] */
    sim_time from_ns, to_ns;   /* window, link: interval; to_ns may be SIM_TIME_NEVER */
    sim_time extra_latency_ns; /* link: added to the latency of the workers' NICs */
    double bandwidth_factor;   /* link: multiplies their NIC bandwidth, in (0, 1] */
    sim_time at_ns;            /* failure: when the workers go down */
    sim_time recover_ns;       /* failure: when they come back, or SIM_TIME_NEVER */
    sim_trace_point *trace;    /* (ntrace) trace: sorted by time, stable; owned unless shared */
    size_t ntrace;
    bool trace_shared; /* trace: the points of an earlier rule that named the same file (read
                          once: 1,000 rules naming one 1M-point file held 1,000 copies) */
    const char *file;  /* trace: the file read, as opened (an entry of the scenario's inputs) */
} sim_straggler;

/* The largest $.seed, 2^53 - 1: a JSON number that reads as an integer below 2^53 is the one
 * written. Commands that run seeds from a scenario's seed up stop there. */
#define SIM_SCENARIO_SEED_MAX UINT64_C(9007199254740991)

typedef struct sim_scenario {
    char file[4096];        /* the scenario file as named (a path whole, as sim_err.file) */
    char name[128];         /* $.name, default: the file's base name without .json */
    bool name_given;        /* $.name was given: else it is the file's, no check compares it */
    uint64_t seed;          /* $.seed, required */
    uint32_t workers;       /* $.workers, required, 1..SIM_MAX_WORKERS */
    uint32_t servers;       /* $.servers, default 0: server hosts after the workers */
    uint32_t *stream_seeds; /* (SIM_STREAM_WORKER + workers) derived distinct seeds; owned */

    /* $.compute */
    sim_time iteration_ns;      /* iteration_ms, default 100 */
    double gflops;              /* gflops, default 0 (0: use iteration_ms) */
    double jitter_sigma;        /* jitter_sigma, default 0: lognormal with mean 1 */
    double *speeds;             /* (workers) speed factors > 0, default 1; owned */
    char profile[256];          /* profile: a name or a CSV path as given, "" when none;
                                   "module": the model's own layers (sim_scenario_resolve_module) */
    bool module_resolved;       /* profile "module": resolved once the model gave its layers */
    const sim_device **devices; /* (workers) device: each worker's accelerator, or NULL
                                   without devices; the array owned, the entries static */
    int precision;              /* precision: sim_precision, default fp32 */
    int layout;                 /* layout: 0 nhwc (default), 1 nchw (16-bit convolutions
                                   transpose: scenario/roofline.h) */
    double efficiency;          /* efficiency: the whole step's share of peak, overriding the
                                   device's roofline; NaN when not given */
    bool iteration_given;       /* iteration_ms was given (measured profiles then keep it) */
    sim_layers layers;          /* the model's layers for the timing: a profile's (profile), else
                                   filled in by the runtime from the model (one layer when
                                   timing-only); owned */

    sim_straggler *stragglers; /* (nstragglers) in file order; owned */
    size_t nstragglers;
    char **inputs;  /* (ninputs) the files loading read (a compute.profile CSV, trace files,
                     * and the data files and torch module of the model's set-up,
                     * sim_scenario_note_input), as opened: a command that loads the scenario
                     * again reads them again */
    size_t ninputs; /* owned */

    /* $.network; the arrays below have workers + servers entries */
    sim_net_config net;          /* points into the arrays below */
    double *bandwidth_bps;       /* owned; a host's NIC (times nics_per_host) */
    sim_time *latency_ns;        /* owned */
    uint32_t gpus_per_host;      /* gpus_per_host, default 1: workers w / G share a host */
    uint32_t *node_of;           /* (with gpus_per_host > 1) each host's node; owned */
    double *fabric_bps;          /* (with gpus_per_host > 1) host_fabric_bandwidth_gbps; owned */
    sim_time *fabric_latency_ns; /* (with gpus_per_host > 1) host_fabric_latency_us; owned */

    /* $.workload */
    char model[32];         /* workload.model.name */
    char dataset[32];       /* workload.dataset.name, "" when none */
    sim_cfg *model_cfg;     /* $.workload.model, for the model's own reader */
    sim_cfg *dataset_cfg;   /* $.workload.dataset or NULL */
    uint64_t data_fnv[2];   /* FNV-1a 64 of the LIBSVM data's bytes, workload.dataset.file and
                               test_file, as their first read found them (0: not read yet); set
                               by the workload's reader (sim_scenario_data_read) */
    sim_cfg *schedule_cfg;  /* $.workload.lr_schedule or NULL, for the optimizer's reader */
    uint32_t batch;         /* batch, default 32 */
    double lr;              /* lr, default 0.05; 0 freezes training (averaging studies) */
    double momentum;        /* momentum, default 0 */
    double weight_decay;    /* weight_decay, default 0 */
    uint64_t message_bytes; /* message_bytes; 0 when null (then the model's size) */
    bool init_independent;  /* init: "same" (default, every worker starts from one draw) or
                               "independent" (each worker draws its own, in worker order) */

    /* $.protocol */
    char protocol[32];     /* protocol.name */
    sim_cfg *protocol_cfg; /* $.protocol, for the protocol's configure */

    /* $.stop: whichever comes first; 0 / SIM_TIME_NEVER / NaN when not set */
    sim_time stop_ns; /* time_s, default 60 s when no other stop is given */
    uint64_t stop_iterations;
    double stop_epochs;
    double target_accuracy;
    double stop_consensus; /* consensus: variance across workers below this; NaN when not set */
    uint64_t stop_rounds;  /* rounds: averaging rounds (sim_ctx_round_end calls); 0 when not set */

    /* $.eval */
    sim_time eval_every_ns; /* every_s, default 1 */
    uint32_t eval_samples;  /* samples, default 1000 */

    /* $.output */
    char out_dir[512]; /* dir, default "out/<name>"; -o overrides */
    bool plots;        /* plots, default false */
    bool events;       /* events, default false: write events.csv */

    /* $.check: tolerances of `hetsim check` (absolute, relative) per curve; an absent key
     * keeps its default and is not written into the tree */
    double check_accuracy_abs, check_accuracy_rel;     /* default 0.002, 0 */
    double check_loss_abs, check_loss_rel;             /* default 0, 0.005 */
    double check_throughput_abs, check_throughput_rel; /* default 0, 0.002 (samples/s, -) */

    void *model_probe; /* what the workload's reader learnt of the model by running it (a
                          torch module's probe), kept for its next read of this scenario;
                          owned, freed by model_probe_free */
    void (*model_probe_free)(void *probe);

    sim_cfg *root; /* the resolved tree (run.json); owned */
    uint64_t hash; /* FNV-1a 64 of the compact resolved JSON */
} sim_scenario;

/* Loads `file`, applies the `nsets` overrides "PATH=VALUE" in order, and validates it.
 * Returns NULL and fills `err` (file, JSON path, message; SIM_ESCENARIO, SIM_EIO for a file
 * that cannot be read, SIM_ENOMEM). */
sim_scenario *sim_scenario_load(const char *file, const char *const *sets, size_t nsets,
                                sim_err *err);

/* The bytes of the scenario file `file` (malloc'd, *len of them), as
 * sim_scenario_load reads them: a command that parses one scenario several times (a check's
 * seeds) reads it once, so a file edited meanwhile changes none of them. NULL with `err`
 * filled (SIM_EIO naming the file, SIM_ENOMEM; SIM_ESCENARIO past the cap of a text input,
 * sim/file.h: a FIFO that never ends). */
char *sim_scenario_read(const char *file, size_t *len, sim_err *err);

/* Adds `file` to sc->inputs unless it is there: a file the scenario names that a model's set-up
 * reads (LIBSVM data, Fashion-MNIST's IDX files, a torch module), read again by each load as a
 * profile is; the commands that must not write over a file the scenario reads (check --junit)
 * look there. SIM_ENOMEM. */
int sim_scenario_note_input(sim_scenario *sc, const char *file, sim_err *err);

/* Refuses an input of `sc` (sc->inputs) that is no regular file (a FIFO, a socket, a device):
 * `who` ("a check", "a sweep") loads the scenario again for each of its runs, and a FIFO, read
 * whole by the first load, is waited on forever by the second. SIM_ESCENARIO naming the file. */
int sim_scenario_inputs_regular(const sim_scenario *sc, const char *who, sim_err *err);

/* The identity of what a load of `sc` read, as text another process can hold its own load to
 * (a sweep's point): "p=HEX" the profile's bytes (layers.file_fnv), "tI=HEX" the points of
 * trace $.stragglers[I] (one "t=HEX" for all of them past SIM_SCENARIO_TRACES_NAMED traces),
 * "d=HEX" and "e=HEX" the LIBSVM files' bytes once read (data_fnv), separated by ';'.
 * malloc'd; NULL when out of memory. */
#define SIM_SCENARIO_TRACES_NAMED 1024
char *sim_scenario_inputs_text(const sim_scenario *sc);

/* The bytes a trace rule's points take: held once per file read (not when shared), and
 * copied for a run into the cluster's per-worker arrays (a time and a factor a point, and up
 * to one run of points per worker). The loader holds their sum within the memory guard's
 * limit, and the run's memory estimate counts it (sim_scenario_traces_bytes). */
static inline uint64_t sim_scenario_trace_bytes(const sim_straggler *st, uint32_t workers)
{
    uint64_t n = st->ntrace, runs = n < workers ? n : workers;
    return (st->trace_shared ? 0 : n * sizeof(sim_trace_point)) + n * 16 + runs * 16;
}

/* sim_scenario_trace_bytes over every trace rule of `sc`. */
uint64_t sim_scenario_traces_bytes(const sim_scenario *sc);

/* Whether `sc` has a trace rule; if so *fnv gets every trace's points folded into one hash
 * (run.json's traces_fnv: a trace edited since a golden or a sweep's point ran is another run,
 * though the resolved scenario, which names the file, is the same). */
bool sim_scenario_traces_fnv(const sim_scenario *sc, uint64_t *fnv);

/* Holds `sc`, the same scenario loaded again, to the inputs a first load read (`text`, its
 * sim_scenario_inputs_text): a profile or a trace edited between the two loads (a trace keeps
 * the resolved scenario whatever it holds) is SIM_EIO naming its JSON path and file. LIBSVM
 * data `sc` has not read yet takes the first load's identity, which its reads are then held
 * to (sim_scenario_data_read); data it read already is compared. */
int sim_scenario_inputs_hold(sim_scenario *sc, const char *text, sim_err *err);

/* Whether `b`, the same scenario loaded again, read its inputs as `a` did, held as
 * sim_scenario_inputs_hold holds them: SIM_EIO naming the JSON path and the file edited. */
int sim_scenario_same_inputs(const sim_scenario *a, sim_scenario *b, sim_err *err);

/* A read of the LIBSVM data `which` (0 workload.dataset.file, 1 its test_file, the path
 * `file` as opened) found bytes of FNV-1a 64 `fnv`: recorded as data_fnv[which] on the first
 * read, compared by the later ones (the run's set-up and data loads, a check's seeds, a
 * sweep's points): another is SIM_EIO naming the JSON path and the file. */
int sim_scenario_data_read(sim_scenario *sc, int which, const char *file, uint64_t fnv,
                           sim_err *err);

/* The same from text in memory; `file` is used in messages and to resolve relative paths
 * (trace files, dataset dirs) against its directory. */
sim_scenario *sim_scenario_parse(const char *text, size_t len, const char *file,
                                 const char *const *sets, size_t nsets, sim_err *err);

/* Refuses a scenario whose worst cases overflow the simulated clock: every iteration (base
 * `base_ns` / speed times every slowdown that may apply, when `base_path` names where the
 * base comes from, else not checked) and every transfer of `message_bytes` (0: not checked)
 * through the slowest link shared by every host must last at most SIM_SCENARIO_MAX_NS
 * (1e18 ns, about 31.7 years). The loader checks what it knows; the workload's reader calls
 * it again with the model's FLOP-based base time or size. SIM_ESCENARIO names the file and
 * the value that takes the product over the limit. */
int sim_scenario_check_clock(sim_scenario *sc, double base_ns, const char *base_path,
                             uint64_t message_bytes, sim_err *err);

/* Once the runtime has read the real model (no compute.profile): records the message size,
 * 4 bytes a parameter of its `params`, when workload.message_bytes is null, and with
 * compute.gflops the base iteration time `flops_ns` (the model's FLOPs of a minibatch over
 * gflops; NaN: none), into sc and, when iteration_ms was not given, into the tree, so that
 * run.json holds the values the run used. The caller rehashes. SIM_ENOMEM. */
int sim_scenario_resolve_model(sim_scenario *sc, uint64_t params, double flops_ns, sim_err *err);

/* Whether compute.profile is "module": the model's own layers (a torch module's, by the rules
 * of tools/profile_model.py) taken as the profile once the workload's reader has put them in
 * sc->layers. */
bool sim_scenario_module_profile(const sim_scenario *sc);

/* Resolves a "module" profile as a CSV's is at load (the message size, the base time of
 * compute.device or gflops, the speeds of a device list), once: later calls do nothing, as
 * for any other profile. SIM_ESCENARIO naming $.compute.profile (no parameters, no FLOPs for
 * a device, an iteration past the clock). */
int sim_scenario_resolve_module(sim_scenario *sc, sim_err *err);

/* Frees everything the scenario owns. NULL is a no-op. */
void sim_scenario_destroy(sim_scenario *sc);

/* Recomputes sc->hash after a module wrote defaults into a section (protocol, model). */
void sim_scenario_rehash(sim_scenario *sc);

/* The resolved scenario as JSON (pretty when asked), for run.json; caller frees. */
char *sim_scenario_resolved(const sim_scenario *sc, bool pretty);

/* Rewrites `tree`, a resolved scenario (sc->root, or the "scenario" object of a run.json read
 * back; a copy when it must stay as written), in place into its canonical form
 * (scenario/scenario_canon.c), in which two spellings of one run are the same JSON but for the
 * order of keys: compute.speeds of equal factors as the one factor they broadcast ([1, 1, 1, 1]
 * is [1]); a compute.device list's adjacent groups of one device as one group, and a single
 * group as the device's name; the lists whose default is empty (stragglers,
 * network.overrides) written [] when absent; the keys the loader writes only when given
 * removed where they change nothing (nics_per_host and gpus_per_host 1, the host fabric's keys
 * with one GPU a host, network.fabric and host_fabric beside the figures they default, layout
 * at 32 bits, a constant lr_schedule without warm-up or any of the model none, localsgd's
 * algorithm "ring") and an mlp's hidden written [256] when absent; the files it names (a
 * compute.profile path, a trace's file, workload.dataset's file, test_file and dir, a torch
 * module) spelt plainly by sim_file_clean_path ("./p.csv" is "p.csv"; ".." stays, the file
 * system not asked: the bytes read are compared as profile_fnv and traces_fnv). The name is
 * left as it is (a check gives a scenario without one the golden's). run.json and scenario_hash
 * keep the scenario as written; a golden's check and a sweep's points and resume compare this form.
 * A value of another type than a run writes is left as it is. SIM_ENOMEM. */
int sim_scenario_canonical(sim_cfg *tree, sim_err *err);

#endif
