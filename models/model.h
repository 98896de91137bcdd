/* Models: a table of operations per model, plus the layer kernels the models share.
 *
 * A model is a `model_ops` table (ROSS style) over plain data: a `model_config` giving the
 * input shape and layer sizes, one contiguous float block of parameters, and one float
 * workspace of activations. The parameter block is a sequence of named views (llm.c style),
 * listed by `views` in the order they lie in memory with no gaps, so that gradients,
 * momentum buffers and snapshots share the layout and averaging is a single loop. Every
 * weight matrix is (D_out, D_in) row-major, followed by its bias (D_out); a convolution's
 * weight is (C_out, C_in * k * k) with the input index ordered (c, ki, kj).
 *
 * The caller owns every buffer: it allocates `num_params` floats for the parameters (and as
 * many for gradients), `num_acts(cfg, B)` floats of workspace for a batch of at most B
 * samples, and reuses them every step. `forward` and `backward` allocate nothing, do no I/O
 * and draw no random numbers. `backward` reads what `forward` left in the workspace, so it
 * must follow a forward on the same parameters, inputs and B. It WRITES the gradient of the
 * mean loss over the batch into `grads` (every float of it, so nobody zeroes it first: one
 * model-sized pass less per iteration).
 *
 * After a forward the workspace begins with the scores, (B, classes): class probabilities
 * for the cross-entropy models (softmax, mlp, cnn), raw scores for svm. Their arg max is
 * the predicted class; model_predict and model_count_correct read them.
 *
 * Inputs are float arrays (B, channels * height * width), each sample in channel-major
 * (c, y, x) order; labels are bytes in [0, classes), so classes <= 256.
 *
 * Matrix products go through CBLAS (OpenBLAS in the build), single precision, row-major.
 * Losses are accumulated in double.
 */
#ifndef MODELS_MODEL_H
#define MODELS_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <gsl/gsl_rng.h>

#include "sim/err.h"
#include "sim/layers.h"

/* Most hidden layers an mlp may have. */
#define MODEL_MAX_HIDDEN  8
/* Most parameter views a model has (mlp: a weight and a bias per layer). */
#define MODEL_MAX_VIEWS   (2 * (MODEL_MAX_HIDDEN + 1))
/* Largest number of classes: labels are uint8_t. */
#define MODEL_MAX_CLASSES 256
/* Largest value accepted for any single dimension, which keeps every size product far from
 * overflowing a 64-bit size_t. */
#define MODEL_MAX_DIM     65536
/* Largest input size channels * height * width. */
#define MODEL_MAX_INPUT   (1 << 24)

/* torch: a PyTorch module computed by model servers (models/torch.h, docs/torch.md), as
torch_config_read resolves and probes it. Plain data: copies of a config share no storage. */
typedef struct model_torch_config {
    char module[512];      /* the module file, resolved against the scenario's folder */
    char shown[128];       /* the module as the scenario names it, for messages */
    char base_dir[512];    /* the scenario file's folder (given to the module as base_dir) */
    char args[4096];       /* the model section's other keys, one JSON object */
    char device[32];       /* "cpu" or "cuda[:N]" */
    char python[256];      /* the interpreter the servers run on */
    char pydir[512];       /* the folder holding the hetsim package, "" for an installed one */
    bool own_data;         /* trained on the module's data() (no workload.dataset) */
    size_t params;         /* floats of a replica: the module's parameters */
    size_t buffers;        /* floats of its floating buffers (each worker's own) */
    double flops;          /* forward FLOPs of one sample over its layers */
    uint64_t server_bytes; /* one server's memory but the shared data: the probe's peak
                              resident size (interpreter, PyTorch, network, own data) */
} model_torch_config;

/* Shapes and hyper-parameters of every model; each model reads the fields it needs. */
typedef struct model_config {
    size_t channels; /* input channels; dense models see D = channels * height * width */
    size_t height;   /* input rows (pixels) */
    size_t width;    /* input columns (pixels) */
    size_t classes;  /* output classes, 2..MODEL_MAX_CLASSES */

    size_t n_hidden;                 /* mlp: hidden layers, 0..MODEL_MAX_HIDDEN */
    size_t hidden[MODEL_MAX_HIDDEN]; /* mlp: units of each hidden layer (ReLU) */

    size_t conv1;  /* cnn: output channels of the first convolution */
    size_t conv2;  /* cnn: output channels of the second convolution */
    size_t kernel; /* cnn: side of the square kernels, odd ("same" padding of kernel / 2) */
    size_t dense;  /* cnn: units of the hidden dense layer (ReLU) */

    double svm_margin; /* svm: hinge margin (> 0) */

    size_t dim;       /* vector: parameters (averaging-only runs) */
    bool vector_zero; /* vector: init "zero" instead of N(0, 1) draws */

    model_torch_config torch; /* torch: the module and what its probe found */
} model_config;

/* How init_params fills a view. */
typedef enum model_init {
    MODEL_INIT_ZERO = 0,   /* biases */
    MODEL_INIT_HE = 1,     /* N(0, 2 / fan_in): weights feeding a ReLU */
    MODEL_INIT_GLOROT = 2, /* N(0, 2 / (fan_in + fan_out)): output layers */
} model_init;

/* One named slice of the parameter block: a (rows, cols) row-major matrix. A weight view has
 * rows = D_out (fan-out units) and cols = fan-in; a bias has cols = 1. */
typedef struct model_view {
    const char *name; /* such as "conv1.w" or "fc2.b"; static storage */
    size_t offset;    /* floats from the start of the block */
    size_t rows;      /* output units or channels */
    size_t cols;      /* inputs per unit (fan-in), 1 for a bias */
    model_init init;  /* how init_params fills it */
} model_view;

/* What a model is, beyond its operations (model_ops.flags): the runtime and the protocols ask
 * these, never the model's name. */
enum model_flags {
    MODEL_NO_DATA = 1u << 0,        /* no data set: nothing is drawn, every gradient is zero
                                       and there is nothing to evaluate (vector, none) */
    MODEL_AVERAGING_ONLY = 1u << 1, /* averaging is all there is: each worker starts from its
                                       own draw, and a run reports its averaging rounds and
                                       variance (vector, DESIGN 6b) */
    MODEL_NO_PARAMS = 1u << 2,      /* timing only: zero floats, so every tensor call is a
                                       no-op; no loss, and messages of workload.message_bytes
                                       (none) */
    MODEL_SERVER = 1u << 3          /* computed outside hetsim, by model servers (torch,
                                       models/torch.h): the training state hands them its
                                       initialization, gradients and evaluations; forward and
                                       backward are never called */
};

/* The layout of a model's parameters and workspace, its FLOPs and its initialization: what
 * the models built of the same layers share. Sizes are in floats. All members are non-NULL. */
typedef struct model_shape {
    /* Fills views[0..n) (n <= MODEL_MAX_VIEWS) in memory order and returns n. */
    size_t (*views)(model_view *views, const model_config *cfg);

    size_t (*num_params)(const model_config *cfg);

    /* Workspace floats for a batch of up to B samples (scores, saved activations, backward
     * scratch and the convolution's im2col buffer). */
    size_t (*num_acts)(const model_config *cfg, size_t B);

    /* Floating-point operations of one forward pass on one sample, counting the matrix
     * products only (2 per multiply-add); element-wise work is a few percent. */
    double (*flops_forward)(const model_config *cfg);

    /* Fills flops[l] with the forward FLOPs of one sample through layer l (a weight view and
     * the bias after it, in view order; matrix products only, as flops_forward, whose value
     * is their sum) and returns the number of layers (<= MODEL_MAX_VIEWS). */
    size_t (*layer_flops)(double *flops, const model_config *cfg);

    /* Fills params (num_params floats) view by view with draws from r (gsl_ran_gaussian),
     * weights as the view's init says, biases 0. */
    void (*init_params)(float *params, const model_config *cfg, gsl_rng *r);
} model_shape;

/* Operations of one model. Sizes are in floats. All members are non-NULL but flags. */
typedef struct model_ops {
    const char *name; /* matches "workload": {"model": {"name": ...}} in scenarios */
    unsigned flags;   /* enum model_flags; 0 for a trainable model */

    /* Checks the fields this model reads; SIM_EINVAL with the offending field as the path
     * ("hidden[1]") and a message such as "must be odd, got 4". */
    int (*check)(const model_config *cfg, sim_err *err);

    /* The parameters' layout, sizes, FLOPs and initialization: a table that models of the
     * same layers share (softmax and svm: one linear layer, model_linear_shape). */
    const model_shape *shape;

    /* Runs the batch x (B, D) through the model, leaving scores and saved activations in
     * acts (num_acts(cfg, B) floats), and returns the mean loss over the batch. y (B)
     * holds the labels; with y == NULL only the scores are computed and 0 is returned. */
    double (*forward)(float *acts, const float *params, const float *x, const uint8_t *y, size_t B,
                      const model_config *cfg);

    /* Writes the gradient of forward's mean loss into grads (num_params floats). Needs the acts
     * of a forward on the same params, x, y and B, and uses the rest of acts as scratch
     * (the scores are kept). */
    void (*backward)(float *grads, float *acts, const float *params, const float *x,
                     const uint8_t *y, size_t B, const model_config *cfg);
} model_ops;

extern const model_ops model_softmax, model_svm, model_mlp, model_cnn;
extern const model_ops model_vector; /* averaging-only (DESIGN 6b): found by name, not listed */
extern const model_ops model_none;   /* timing-only, zero floats: found by name, not listed */
extern const model_ops model_torch;  /* PyTorch through model servers: found by name, not listed */

/* Ops that do nothing, for the tables of models without that part (models/none.c, whose table
 * is made of them, defines them): a check that accepts any configuration, no views, no
 * activations, no layers, and a forward whose loss is 0. */
int model_nop_check(const model_config *cfg, sim_err *err);
size_t model_nop_views(model_view *views, const model_config *cfg);
size_t model_nop_acts(const model_config *cfg, size_t B);
size_t model_nop_layer_flops(double *flops, const model_config *cfg);
double model_nop_forward(float *acts, const float *params, const float *x, const uint8_t *y,
                         size_t B, const model_config *cfg);

/* ---- Registry ---- */

/* The model called `name` (the trainable ones, "vector", "none" and "torch"), or NULL when
 * there is none. */
const model_ops *model_find(const char *name);

/* The i-th model in fixed order (softmax, svm, mlp, cnn), or NULL when i is past the end. */
const model_ops *model_at(size_t i);

/* Writes the model names, separated by ", ", into buf (always terminated when size > 0),
 * for messages that list the valid names. */
void model_list(char *buf, size_t size);

/* ---- Configuration ---- */

/* Fills cfg with defaults: a 1x28x28 input, 10 classes, one hidden layer of 256 units,
 * cnn 16 and 32 channels with 5x5 kernels and 128 dense units, svm margin 1. */
void model_config_default(model_config *cfg);

/* Checks the fields every model uses (shape, classes), then the model's own, then that the
 * parameter count fits in an int (CBLAS takes int sizes). Returns 0 or SIM_EINVAL, filling
 * err with the field as the path ("" for the input size and parameter count) and what was
 * expected. Batch sizes passed to forward and backward must also fit in an int. */
int model_check(const model_ops *ops, const model_config *cfg, sim_err *err);

/* ---- Queries ---- */

/* D = channels * height * width. */
size_t model_input_size(const model_config *cfg);

/* Floating-point operations to train on one sample, forward and backward: three times the
 * forward count (the backward pass computes two products per forward one). */
double model_flops_per_sample(const model_ops *ops, const model_config *cfg);

/* The model's layers for the timing (sim/layers.h), finished: one per weight view with the
 * bias view after it, named by the weight view without its ".w", with their parameters and
 * forward FLOPs (layer_flops). SIM_ENOMEM. */
int model_layers(const model_ops *ops, const model_config *cfg, sim_layers *out, sim_err *err);

/* Writes pred (B), the arg max of each sample's scores after a forward (first index on
 * ties). */
void model_predict(uint8_t *pred, const float *acts, size_t B, const model_config *cfg);

/* The number of samples whose predicted class after a forward equals y. */
size_t model_count_correct(const float *acts, const uint8_t *y, size_t B, const model_config *cfg);

/* ---- Helpers and layer kernels shared by the models ---- */

/* n rounded up to a multiple of 16 floats (64 bytes), for aligned workspace views. */
size_t model_align(size_t n);

/* Fills the views of a block from r in view order, as model_ops.init_params says. */
void model_init_views(float *params, const model_view *views, size_t n, gsl_rng *r);

/* out = in w^T + b. */
void model_dense_forward(float *restrict out,      /* (B, D_out) */
                         const float *restrict in, /* (B, D_in) */
                         const float *restrict w,  /* (D_out, D_in) */
                         const float *restrict b,  /* (D_out) */
                         size_t B, size_t D_in, size_t D_out);

/* dw += dout^T in and db += column sums of dout when `accumulate`, or dw = dout^T in and
 * db = column sums of dout (overwritten: no need to zero them first) when not; and din = dout
 * w (overwritten; skipped when din is NULL, as for a first layer). */
void model_dense_backward(float *restrict din,        /* (B, D_in) or NULL */
                          float *restrict dw,         /* (D_out, D_in) */
                          float *restrict db,         /* (D_out) */
                          const float *restrict dout, /* (B, D_out) */
                          const float *restrict in,   /* (B, D_in) */
                          const float *restrict w,    /* (D_out, D_in) */
                          size_t B, size_t D_in, size_t D_out, bool accumulate);

/* The layout of a single linear layer D -> K (softmax regression, linear SVM): a weight
 * "fc.w" (K, D), Glorot-initialized, then a bias "fc.b" (K); scores and scratch of (B, K)
 * each as workspace; 2 D K flops per forward sample. The shape of model_softmax and model_svm. */
extern const model_shape model_linear_shape;

/* x = max(x, 0) in place. */
void model_relu_forward(float *x, size_t n);

/* dx = 0 where the ReLU output y is 0, in place. */
void model_relu_backward(float *restrict dx, const float *restrict y, size_t n);

/* Turns logits into probabilities in place and returns the mean of -log p[y] over the
 * batch (0 when y is NULL), computed stably in double. */
double model_softmax_ce_forward(float *restrict p,         /* (B, K) logits in, probs out */
                                const uint8_t *restrict y, /* (B) or NULL */
                                size_t B, size_t K);

/* dlogits = (p - onehot(y)) / B, overwritten. */
void model_softmax_ce_backward(float *restrict dlogits, /* (B, K) */
                               const float *restrict p, /* (B, K) */
                               const uint8_t *restrict y, size_t B, size_t K);

#endif
