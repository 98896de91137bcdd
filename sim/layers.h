/* Layers: how an iteration's time is spread over a model's layers.
 *
 * An iteration is a forward pass over the layers in order, then a backward pass in reverse.
 * Each layer's share of the iteration is its measured forward and backward time when every
 * layer has both (a measured profile), else its forward FLOPs for the forward pass and twice
 * them for the backward pass (the backward pass computes two products per forward one). The
 * iteration's length itself comes from the cluster model; the layers only say when, within
 * it, each layer's gradient is complete: the moment its backward pass ends. Layer n-1's
 * gradient is ready first, layer 0's at the iteration's end.
 *
 * A sim_layers is plain data the scenario owns (a profile read from a CSV, or the built-in
 * model's layers filled in by the runtime). sim_layers_finish computes the shares once the
 * rows are set; nothing else allocates.
 *
 * Profile CSV (docs/scenario.md): a header row, then one row per layer in forward order:
 *   name,params,forward_flops[,OPTIONAL...]
 * params: parameters (elements) of the layer; forward_flops: FLOPs of one sample's forward
 * pass (2 per multiply-add). Optional columns, in any order after the first three, each at
 * most once (columns are only ever added): forward_ms and backward_ms, measured per
 * iteration, both or neither; kind (sim_layer_kind's names); forward_bytes and
 * elementwise_bytes, what one sample's pass through the layer's own operations and through
 * the parameter-free ones after it read and write, at 4 bytes a float (the device roofline's,
 * scenario/roofline.h; tools/profile_rules.py counts them). Lines starting with '#' are comments;
 * a UTF-8 byte-order mark may open the file. Each column's total over the layers stays in
 * range: params at most 2^64 - 1 (sums never wrap), the others at most 1e300 (shares stay
 * finite).
 */
#ifndef SIM_LAYERS_H
#define SIM_LAYERS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sim/engine.h"
#include "sim/err.h"

/* Most layers a profile may have. */
#define SIM_LAYERS_MAX 100000

/* What bounds a layer's kernels, as tools/profile_rules.py names it (the profile's kind). */
typedef enum sim_layer_kind {
    SIM_KIND_OTHER = 0,     /* anything else, and rows without a kind */
    SIM_KIND_CONV3X3 = 1,   /* a 3x3 convolution of stride 1 and one group: fast algorithms */
    SIM_KIND_CONV = 2,      /* any other convolution */
    SIM_KIND_MATMUL = 3,    /* linear layers and the other matrix products */
    SIM_KIND_NORM = 4,      /* batch, layer, group and instance norms */
    SIM_KIND_EMBEDDING = 5, /* table lookups */
    SIM_KIND_DEPTHWISE = 6, /* a convolution with one group per input channel */
    SIM_KIND_N = 7
} sim_layer_kind;

typedef struct sim_layer {
    char name[64];    /* such as "layer1.0.conv1" */
    uint64_t params;  /* parameters (elements) */
    double fwd_flops; /* forward FLOPs of one sample */
    double fwd_ms;    /* measured forward time per iteration, or NaN */
    double bwd_ms;    /* measured backward time per iteration, or NaN */
    int kind;         /* sim_layer_kind, SIM_KIND_OTHER when not given */
    double fwd_bytes; /* bytes one sample's forward pass through the layer's own operations
                         reads and writes, at 4 a float (weights excluded); 0 when not given */
    double ew_bytes;  /* the same for the parameter-free operations after it; 0 when not given */
} sim_layer;

/* The per-layer times (any unit, forward and backward) the shares may follow: layer i's. */
typedef void (*sim_layers_time_fn)(const void *ud, size_t i, double *fwd, double *bwd);

typedef struct sim_layers {
    sim_layer *layer; /* (n) in forward order; owned */
    size_t n;
    bool measured;        /* every layer has fwd_ms and bwd_ms: shares follow them */
    double *fwd_end;      /* (n) share of the iteration done when layer i's forward ends */
    double *bwd_end;      /* (n) share done when layer i's backward ends; bwd_end[0] = 1 */
    uint64_t *params_end; /* (n) parameters of layers 0..i (sim_layers_bytes reads them) */
    uint64_t file_fnv;    /* FNV-1a 64 of the profile CSV's bytes (sim_layers_read_csv), else 0 */
} sim_layers;

/* Makes l hold n zeroed layers (fwd_ms, bwd_ms NaN), freeing what it held. SIM_ENOMEM. */
int sim_layers_init(sim_layers *l, size_t n, sim_err *err);

/* Frees what l holds and zeroes it. A zeroed l is fine. */
void sim_layers_fini(sim_layers *l);

/* Computes `measured`, the shares and the cumulative parameters from the rows (whose
 * parameters must not total over 2^64 - 1). When the weights are all zero (a model
 * without products), every layer weighs the same, backward twice forward. */
void sim_layers_finish(sim_layers *l);

/* Makes the shares follow fn's per-layer times (a device's roofline) instead of the FLOPs;
 * `measured` keeps the rows' word. Times all zero weigh every layer alike, as above. */
void sim_layers_finish_timed(sim_layers *l, sim_layers_time_fn fn, const void *ud);

/* "other", "conv3x3", "conv", "matmul", "norm", "embedding", "depthwise"; NULL out of
 * range. */
const char *sim_layer_kind_name(int kind);

/* Forward FLOPs of one sample over every layer. */
double sim_layers_flops(const sim_layers *l);

/* Parameters over every layer. */
uint64_t sim_layers_params(const sim_layers *l);

/* Bytes of layer i's share of a message of `bytes` split in proportion to the layers'
 * parameters as finished: floors of the cumulative shares, so that the layers add up to
 * `bytes` exactly (all of it on layer 0 when no layer has parameters); 0 past the last layer.
 * Constant time. */
uint64_t sim_layers_bytes(const sim_layers *l, uint64_t bytes, size_t i);

/* Measured milliseconds of one iteration (forward and backward over every layer); 0 unless
 * measured. */
double sim_layers_measured_ms(const sim_layers *l);

/* The offset from an iteration's start at which layer i's gradient is complete, for an
 * iteration lasting d_ns: round(d_ns * bwd_end[i]), exactly d_ns for layer 0. */
sim_time sim_layers_ready_offset_ns(const sim_layers *l, sim_time d_ns, size_t i);

/* Reads a profile CSV into l (then finished), in one pass: a file still being written or a
 * FIFO is read as it comes, up to its end, and file_fnv hashes exactly the bytes read.
 * SIM_ESCENARIO naming `file` (and the line and the column at fault) when it cannot be opened
 * or is malformed (a NUL byte, a line over 1022 bytes, a total out of range, more than
 * SIM_LAYERS_MAX layers), SIM_EIO on a read error, SIM_ENOMEM; l is then zeroed. `path` (a
 * JSON path such as "$.compute.profile") goes into err as the path. */
int sim_layers_read_csv(sim_layers *l, const char *file, const char *path, sim_err *err);

/* A data folder where named profiles may live, as "<path>/profiles/<name>.csv". */
typedef struct sim_layers_dir {
    char path[1024];
} sim_layers_dir;

/* Where named profiles live, in search order: the running binary's "../share/hetsim" (an
 * installed hetsim, wherever it was moved), the source tree's data folder (the build tree),
 * then the folder the build was configured to install to. Fills dirs[0..n), returns n. */
size_t sim_layers_profile_dirs(sim_layers_dir *dirs, size_t max);

/* Finds named profile `name` (letters, digits, '_', '-', '.'): writes its file's path into
 * buf and returns true, or false when no folder has it. */
bool sim_layers_find_profile(const char *name, char *buf, size_t size);

/* Writes the names of the shipped profiles (the first folder that has any), sorted and
 * separated by ", ", into buf; returns how many. */
size_t sim_layers_profile_names(char *buf, size_t size);

#endif
