/* Datasets: readers, synthetic data, partition across workers, minibatch sampling.
 *
 * A data_set holds n examples as one 64-byte aligned block of float features, shape
 * (n, dim) row-major, and one byte of label per example (labels 0..classes-1). Its storage
 * is the caller's struct (init/fini style): every loader fills `*out` only on success, and
 * on failure leaves it zeroed, frees what it allocated and fills `err` with the file, and
 * the line and column (text) or byte offset (binary) where the input went wrong. Malformed
 * input never crashes or aborts, and sizes are checked against fixed bounds before
 * anything is allocated from them. Release a filled set with data_fini.
 *
 * Three sources: Fashion-MNIST (gzipped IDX files as installed by Debian's
 * dataset-fashion-mnist), LIBSVM/SVMlight text files, and Gaussian class clusters drawn from
 * a gsl_rng. A data_partition assigns every example to exactly one worker (iid, or label
 * skew drawn from a Dirichlet distribution), and a data_sampler deals one worker's examples
 * in minibatches, reshuffling every epoch, without allocating after it is created.
 *
 * Everything random takes a `gsl_rng *` (one of the run's streams, see sim/rng.h) and makes
 * a fixed sequence of draws from it, so the same seed gives the same data, partition and
 * batches. The code is split over data.c (sets, synthetic data, partitions, sampler),
 * data_idx.c (IDX and Fashion-MNIST) and data_libsvm.c (LIBSVM); this is their one header.
 */
#ifndef MODELS_DATA_H
#define MODELS_DATA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <gsl/gsl_rng.h>

#include "sim/err.h"

/* Where Debian's dataset-fashion-mnist package installs the four .gz files. */
#define DATA_FASHION_MNIST_DIR "/usr/share/datasets/fashion-mnist"

/* Labels are one byte. */
#define DATA_MAX_CLASSES 256u

/* Most floats a data set may hold (n * dim): 2^30, 4 GiB. A header or file asking for more
 * is refused before allocating. */
#define DATA_MAX_FLOATS ((size_t)1 << 30)

/* Most examples in one IDX file (2^24) and largest image side. */
#define DATA_IDX_MAX_COUNT ((uint32_t)1 << 24)
#define DATA_IDX_MAX_SIDE  4096u

typedef struct data_set {
    float *x;             /* (n, dim) features, row-major, one 64-byte aligned block */
    uint8_t *y;           /* (n) labels, each < classes */
    size_t n;             /* examples */
    size_t dim;           /* features per example, c * h * w */
    uint32_t classes;     /* label count (labels are 0..classes-1) */
    uint32_t c, h, w;     /* shape of one example: channels, height, width; (1, 1, dim) if flat */
    int32_t *label_value; /* (classes) LIBSVM: the file's label of each class; else NULL */
    uint64_t file_fnv;    /* LIBSVM: FNV-1a 64 of every byte of the file as read; else 0 */
} data_set;

typedef struct data_idx_shape {
    uint32_t count;      /* examples (images, and as many labels) */
    uint32_t rows, cols; /* image size */
} data_idx_shape;

typedef struct data_synthetic_config {
    size_t n;          /* examples, >= 1 */
    size_t dim;        /* features, >= 1 */
    uint32_t classes;  /* 2..DATA_MAX_CLASSES */
    double separation; /* >= 0: centre spread in units of the within-class noise (see below) */
} data_synthetic_config;

typedef struct data_partition {
    size_t workers; /* lists */
    size_t n;       /* examples partitioned (the data set's n) */
    size_t *offset; /* (workers + 1) worker w owns index[offset[w] .. offset[w + 1]) */
    size_t *index;  /* (n) example ids, ascending within each worker; same block as offset */
} data_partition;

typedef struct data_sampler data_sampler;

/* ---- Data sets ---- */

/* Allocates zeroed storage for n examples of dim features into *ds (shape (1, 1, dim),
 * classes 0, no label values) after checking 1 <= n, 1 <= dim and n * dim <=
 * DATA_MAX_FLOATS (SIM_EINVAL). SIM_ENOMEM if allocation fails. *ds is zeroed first. */
int data_set_alloc(data_set *ds, size_t n, size_t dim, sim_err *err);

/* Frees what *ds holds and zeroes it. Accepts a zeroed set (and NULL). */
void data_fini(data_set *ds);

/* Copies examples idx[0..count-1] into x (count, dim) and y (count). */
void data_gather(const data_set *ds, const size_t *idx, size_t count, float *restrict x,
                 uint8_t *restrict y);

/* Mean and standard deviation (population) of all features, accumulated in double. */
void data_moments(const data_set *ds, double *mean, double *std);

/* x = (x - mean) / std for every feature, computed in double, stored as float. Use the
 * training set's moments for both training and test sets. std must be > 0. */
void data_standardize(data_set *ds, double mean, double std);

/* ---- Readers ---- */

/* Reads a pair of IDX files, gzipped or plain (zlib reads both): `images_path` of magic
 * 0x00000803 (unsigned bytes, 3 dimensions: count, rows, cols) and `labels_path` of magic
 * 0x00000801 (count). The counts must match; each side is 1..DATA_IDX_MAX_SIDE; count is at
 * most DATA_IDX_MAX_COUNT; every label must be < classes. Pixels are scaled to [0, 1]
 * by (float)byte / 255.0f (no standardization; see data_standardize). Only the first
 * max_samples examples are read (0: all). The set has shape (1, rows, cols). Errors:
 * SIM_EIO for a file that cannot be opened, is truncated or is corrupt (with the byte
 * offset, counted in uncompressed bytes, where the data ran out), SIM_EINVAL for a bad
 * header or label, SIM_ENOMEM. A header announcing more data than its file can hold (a
 * gzip file at most 1032 times its size, deflate's largest ratio) is SIM_EIO before anything
 * is allocated. A file read whole must end where its header says: more data, or any byte
 * after the end of its gzip stream, is SIM_EINVAL. */
int data_load_idx(const char *images_path, const char *labels_path, uint32_t classes,
                  size_t max_samples, data_set *out, sim_err *err);

/* Reads Fashion-MNIST from `dir` (NULL: DATA_FASHION_MNIST_DIR): train-images-idx3-ubyte.gz
 * and train-labels-idx1-ubyte.gz when `train`, else t10k-*; 10 classes of 28x28 images
 * (60000 training and 10000 test examples). As data_load_idx otherwise. */
int data_load_fashion_mnist(const char *dir, bool train, size_t max_samples, data_set *out,
                            sim_err *err);

/* Reads only the headers of the four Fashion-MNIST files in `dir` (NULL: the default) into
 * *train and *test, checking each file's magic and sizes, that each labels file counts as
 * many labels as its images file has images, and that the test images have the training
 * images' size. Errors as data_load_idx, naming the file at fault. */
int data_probe_fashion_mnist(const char *dir, data_idx_shape *train, data_idx_shape *test,
                             sim_err *err);

/* Reads a LIBSVM/SVMlight text file: one example per line, "label idx:val idx:val ...",
 * indices 1-based and strictly ascending, absent features 0. '#' starts a comment to the
 * end of the line; blank and comment-only lines are skipped; an SVMlight "qid:N" right after
 * the label is ignored. dim is the largest index present; an index above max_features (>= 1)
 * is an error. Labels must be integers (as written or of integral value, such as "+1" or "3.0");
 * the distinct values, sorted, become classes 0..classes-1 (so -1/+1 map to 0/1 and 1..K to
 * 0..K-1), at most DATA_MAX_CLASSES of them, and label_value[c] keeps each class's file
 * label. Only the first max_samples examples are read (0: all), but out->file_fnv hashes every
 * byte of the file (a later read of other bytes is another file). Errors name the file and
 * "line L, column C": a bad label or value, an index that is 0, not an integer or not
 * ascending, a missing ':', a too large index, or no examples at all. */
int data_load_libsvm(const char *path, size_t max_features, size_t max_samples, data_set *out,
                     sim_err *err);

/* Draws Gaussian class clusters: class centres first (class by class, coordinate by
 * coordinate, each N(0, separation^2 / dim), so two centres lie about separation * sqrt(2)
 * apart whatever dim), then labels i mod classes shuffled with gsl_ran_shuffle (counts
 * differ by at most 1), then each example's features, its centre plus N(0, 1) noise per
 * coordinate. The same rng state gives the same set. SIM_EINVAL for a bad config. */
int data_synthetic(const data_synthetic_config *cfg, gsl_rng *r, data_set *out, sim_err *err);

/* ---- Partitions ---- */

/* IID: shuffles the example ids 0..n-1 with gsl_ran_shuffle, then gives worker w the
 * contiguous slice [w*n/workers, (w+1)*n/workers) of the shuffled ids (sizes differ by at
 * most 1), each sorted ascending. Needs 1 <= workers <= n (SIM_EINVAL). */
int data_partition_iid(const data_set *ds, size_t workers, gsl_rng *r, data_partition *out,
                       sim_err *err);

/* Label skew: for each label value present, in increasing order, shuffles that label's n_c
 * examples, draws proportions p ~ Dirichlet(alpha, ..., alpha) over the workers
 * (gsl_ran_dirichlet) and gives worker w the examples between the rounded cumulative shares
 * round(n_c * (p_0 + ... + p_{w-1})) and round(n_c * (p_0 + ... + p_w)). Small alpha
 * concentrates each class on few workers. Fix-up: then each worker left empty, in id order,
 * takes one example from the worker holding the most (lowest id on ties), namely that
 * worker's highest example id; so every worker owns at least one example. Needs
 * 1 <= workers <= n and alpha > 0 finite (SIM_EINVAL). */
int data_partition_dirichlet(const data_set *ds, size_t workers, double alpha, gsl_rng *r,
                             data_partition *out, sim_err *err);

/* Frees a partition's block and zeroes it. Accepts a zeroed partition (and NULL). */
void data_partition_fini(data_partition *p);

/* ---- Minibatch sampler ---- */

/* A sampler over the examples idx[0..n-1] of `ds` (copied), dealing batches of `batch`.
 * `ds` must outlive it. Needs n >= 1 and batch >= 1 (SIM_EINVAL). Returns NULL and fills
 * `err` on failure. */
data_sampler *data_sampler_create(const data_set *ds, const size_t *idx, size_t n, size_t batch,
                                  sim_err *err);

/* Frees the sampler. NULL is a no-op. */
void data_sampler_destroy(data_sampler *s);

/* Epochs started so far (0 before the first batch). */
uint64_t data_sampler_epoch(const data_sampler *s);

/* Fills x (batch, dim), y (batch) and, when not NULL, ids (batch) with the next examples.
 * An epoch is one pass over the worker's examples in an order drawn from `r` by
 * gsl_ran_shuffle when the pass starts (the first call starts one); a batch that reaches
 * the end of an epoch continues into the next, so batches are always full and every epoch
 * deals each example exactly once. No allocation. */
void data_sampler_next(data_sampler *s, gsl_rng *r, float *restrict x, uint8_t *restrict y,
                       size_t *restrict ids);

/* data_sampler_next's draw without the copy: the next batch's example ids (batch) only, with
 * the same draws from r; data_gather(ds, ids, batch, x, y) then gives its x and y. */
void data_sampler_next_ids(data_sampler *s, gsl_rng *r, size_t *ids);

#endif
