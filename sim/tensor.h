/* Float tensors: aligned allocation, vector kernels and a pool of message buffers.
 *
 * A tensor is a contiguous block of `float`, 64-byte aligned, with a `size_t` length; models
 * keep all their parameters in one such block, so averaging, axpy and checksums are single
 * loops over it. Kernels take outputs first, then inputs, then sizes. They never allocate,
 * do I/O or draw random numbers, and their results depend only on their inputs: every loop
 * has a fixed order of floating-point operations (no -ffast-math, and ISO C mode keeps gcc
 * from contracting a*b+c into an FMA), so the same inputs give the same bits on every run.
 * Pointers marked `restrict` must not overlap; the kernels that update a vector in place
 * say so. Sums of squares and dot products accumulate in `double`.
 *
 * The pool hands out fixed-size buffers by 32-bit handle so that message snapshots never
 * call malloc in the steady state: it starts with a given number of buffers and doubles when
 * it runs dry. Buffer addresses never move, so a pointer from sim_tensor_pool_data stays
 * valid until the handle is put back.
 */
#ifndef SIM_TENSOR_H
#define SIM_TENSOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sim/err.h"

/* Handle value that names no buffer. */
#define SIM_TENSOR_NO_HANDLE UINT32_MAX

/* ---- Allocation ---- */

/* Allocates `n` zeroed floats, 64-byte aligned, the byte count rounded up to a multiple of
 * 64 (C11 aligned_alloc requires it). n == 0 gives a valid block of no floats (one shared
 * block, which costs nothing and which sim_tensor_free leaves), so that a model of zero floats
 * (the timing-only one) allocates and loops like any other.
 * Returns NULL when out of memory or when the byte count overflows. Free with
 * sim_tensor_free. */
float *sim_tensor_alloc(size_t n);

/* Frees a block from sim_tensor_alloc. NULL is a no-op. */
void sim_tensor_free(float *p);

/* ---- Element-wise kernels (vectorized by gcc 12 at -O2 and -O3, SSE2 upwards) ---- */

/* out = x. */
void sim_tensor_copy(float *restrict out, const float *restrict x, size_t n);

/* x = 0 (all bits zero). */
void sim_tensor_zero(float *x, size_t n);

/* y += a * x (the product is rounded, then the sum). */
void sim_tensor_axpy(float *restrict y, float a, const float *restrict x, size_t n);

/* x *= a, in place. */
void sim_tensor_scale(float *x, float a, size_t n);

/* out = (a + b) * 0.5f. Float addition commutes, so swapping a and b gives the same bits:
 * both endpoints of a pairwise exchange end with identical models. */
void sim_tensor_average(float *restrict out, const float *restrict a, const float *restrict b,
                        size_t n);

/* x = (x + y) * 0.5f in place; bitwise equal to sim_tensor_average(out, x, y, n). */
void sim_tensor_average_into(float *restrict x, const float *restrict y, size_t n);

/* x = y = (x + y) * 0.5 in one pass: the bits of sim_tensor_average_into(x, y) followed by a
 * copy of x into y (a pairwise exchange where both ends keep the average). */
void sim_tensor_average_pair(float *restrict x, float *restrict y, size_t n);

/* a = b + s * c, the STREAM triad: the bandwidth reference for the other kernels. */
void sim_tensor_triad(float *restrict a, const float *restrict b, const float *restrict c, float s,
                      size_t n);

/* ---- Reductions over k vectors ---- */

/* out = (xs[0] + xs[1] + ... + xs[k-1]) / k, element by element. Each element is summed in
 * float in vector-index order, then divided by (float)k; for k == 2 the result equals
 * sim_tensor_average bit for bit. The elements are processed in blocks that stay in cache,
 * each block summing four vectors per pass, which changes the speed but not the order of
 * the additions. `out` must not overlap any xs[v]; the xs may repeat. k == 0 leaves `out`
 * unchanged. */
void sim_tensor_mean(float *restrict out, const float *const *xs, size_t k, size_t n);

/* The floats of one block of sim_tensor_mean. */
#define SIM_TENSOR_MEAN_BLOCK 8192

/* Elements [begin, end) of sim_tensor_mean(out, xs, k, n), bit for bit: begin a multiple of
 * SIM_TENSOR_MEAN_BLOCK, end one too or n. Disjoint ranges may run at once on several threads
 * (the pieces of one mean). */
void sim_tensor_mean_range(float *restrict out, const float *const *xs, size_t k, size_t begin,
                           size_t end);

/* sim_tensor_mean, bit for bit, where `out` may be one of the xs (a worker mixing its own
 * model with its neighbours' in place): each block is summed in a cache-sized scratch and
 * copied out, so no model-sized buffer and no model-sized copy are needed. */
void sim_tensor_mean_over(float *out, const float *const *xs, size_t k, size_t n);

/* out = w[0] * xs[0] + ... + w[k-1] * xs[k-1], element by element, accumulated in float in
 * vector-index order. The weights are floats, used as given: it is a weighted mean when
 * they sum to 1 (the caller normalizes; a double weight would halve the vector width for no
 * gain in a float result). Same blocking and aliasing rules as sim_tensor_mean. */
void sim_tensor_weighted_mean(float *restrict out, const float *const *xs, const float *w, size_t k,
                              size_t n);

/* ---- Reductions to a scalar ---- */

/* Sum of x[i] * y[i], each product and sum in double. The sum runs over 8 interleaved
 * partial sums (i mod 8) added at the end in a fixed order, so it is deterministic. */
double sim_tensor_dot(const float *x, const float *y, size_t n);

/* Sum of x[i]^2 in double (sim_tensor_dot of x with itself). */
double sim_tensor_norm2(const float *x, size_t n);

/* Sum of (x[i] - y[i])^2, the difference and its square in double. */
double sim_tensor_sqdist(const float *x, const float *y, size_t n);

/* Sum of x[i] in double, with the same 8 partial sums as sim_tensor_dot. */
double sim_tensor_sum(const float *x, size_t n);

/* The consensus distance mean_i ||xs[i] - m||^2 of k vectors around their mean m, computed
 * in double (block by block, in a fixed order): exactly 0 for identical vectors, which a
 * float mean would blur by rounding. 0 when k is 0. */
double sim_tensor_consensus(const float *const *xs, size_t k, size_t n);

/* FNV-1a (64-bit) hash of the n * 4 bytes of x as they lie in memory. Equal hashes mean
 * equal bits with overwhelming probability; use it to compare models across runs. */
uint64_t sim_tensor_checksum(const float *x, size_t n);

/* True when no element is NaN or infinite (tested on the exponent bits). */
bool sim_tensor_all_finite(const float *x, size_t n);

/* ---- Buffer pool ---- */

typedef struct sim_tensor_pool sim_tensor_pool;

typedef struct sim_tensor_pool_stats {
    size_t n_floats;   /* floats per buffer */
    size_t capacity;   /* buffers allocated */
    size_t in_use;     /* buffers handed out and not yet put back */
    size_t peak_inuse; /* most buffers ever in use at once */
    uint64_t gets;     /* successful sim_tensor_pool_get calls */
    uint64_t puts;     /* sim_tensor_pool_put calls */
    uint64_t grows;    /* times the pool doubled (each is one allocation) */
    size_t bytes;      /* bytes held in buffers */
} sim_tensor_pool_stats;

/* Creates a pool of `initial_count` zeroed buffers of `n_floats` floats each, each buffer
 * 64-byte aligned. Their pages are the system's fresh zero pages, resident only once written
 * (a buffer holding a slice costs the slice's pages). n_floats must be > 0 and
 * initial_count >= 1 (SIM_EINVAL), and handles must fit below SIM_TENSOR_NO_HANDLE. Returns
 * NULL and fills `err` on failure. */
sim_tensor_pool *sim_tensor_pool_create(size_t n_floats, size_t initial_count, sim_err *err);

/* Frees the pool and all its buffers, handed out or not. NULL is a no-op. */
void sim_tensor_pool_destroy(sim_tensor_pool *pool);

/* Takes a free buffer and stores its handle in *handle. When none is free the pool doubles
 * its capacity (one allocation, counted in stats.grows); if that fails it returns SIM_ENOMEM
 * and sets *handle to SIM_TENSOR_NO_HANDLE. The contents are whatever the buffer last held
 * (zero the first time). Handles are taken lowest first from a fresh pool. */
int sim_tensor_pool_get(sim_tensor_pool *pool, uint32_t *handle, sim_err *err);

/* Makes sure at least `count` buffers are free, doubling the pool as sim_tensor_pool_get
 * does (each doubling counted) until they are: so the next `count` gets cannot fail. New
 * buffers are handed out after the free ones (those already written, resident). SIM_ENOMEM
 * if a doubling fails (the pool keeps what it had). */
int sim_tensor_pool_reserve(sim_tensor_pool *pool, size_t count, sim_err *err);

/* The buffer of a handle that is in use (n_floats floats, 64-byte aligned). The pointer stays
 * valid, even across growth, until the handle is put back. */
float *sim_tensor_pool_data(sim_tensor_pool *pool, uint32_t handle);

/* Returns a buffer to the pool. Putting back a handle that is not in use is a programmer
 * error (assert). The next get returns the most recently put handle (LIFO, cache-warm). */
void sim_tensor_pool_put(sim_tensor_pool *pool, uint32_t handle);

/* Fills *stats with the pool's counters. */
void sim_tensor_pool_get_stats(const sim_tensor_pool *pool, sim_tensor_pool_stats *stats);

#endif
