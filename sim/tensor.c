#include "sim/tensor.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "sim/fnv.h"
#include "sim/simd.h"

/* Floats per block in sim_tensor_mean: 32 KiB of `out`, which stays in L1/L2 while the k
 * inputs stream past it, four at a time. */
enum {
    MEAN_BLOCK = SIM_TENSOR_MEAN_BLOCK
};

/* Partial sums in the scalar reductions (i mod 8): wide enough for two AVX or four SSE2
 * double vectors, fixed so that the result does not depend on the target. */
enum {
    NPART = 8
};

/* Every element-wise loop runs in two parts: a body whose trip count is a multiple of 16,
 * then a scalar tail of fewer than 16. At -O2 gcc 12 vectorizes only under its "very cheap"
 * cost model, which refuses loops that would need a scalar epilogue; the body meets that
 * rule (and -O3 vectorizes it too), so the kernels run at memory bandwidth at either level.
 * Body and tail do the same operations in the same order, so the split changes no bits. */
static inline size_t vec_len(size_t n)
{
    return n & ~(size_t)15;
}

/* Doublings at most: capacity starts >= 1 and stays below 2^32. */
enum {
    POOL_MAX_CHUNKS = 33
};

/* The block of no floats every sim_tensor_alloc(0) returns: nothing is ever read or written
 * through it, so it is shared, and sim_tensor_free leaves it. */
static _Alignas(64) float empty_block[16];

float *sim_tensor_alloc(size_t n)
{
    if (n == 0)
        return empty_block;
    if (n > (SIZE_MAX - 63) / sizeof(float))
        return NULL;
    size_t bytes = (n * sizeof(float) + 63) & ~(size_t)63;
    float *p = aligned_alloc(64, bytes);
    if (p != NULL)
        memset(p, 0, bytes);
    return p;
}

void sim_tensor_free(float *p)
{
    if (p != empty_block)
        free(p);
}

void sim_tensor_copy(float *restrict out, const float *restrict x, size_t n)
{
    if (n > 0)
        memcpy(out, x, n * sizeof(float));
}

void sim_tensor_zero(float *x, size_t n)
{
    if (n > 0)
        memset(x, 0, n * sizeof(float));
}

SIM_CLONES
void sim_tensor_axpy(float *restrict y, float a, const float *restrict x, size_t n)
{
    size_t m = vec_len(n);
    for (size_t i = 0; i < m; i++)
        y[i] += a * x[i];
    for (size_t i = m; i < n; i++)
        y[i] += a * x[i];
}

SIM_CLONES
void sim_tensor_scale(float *x, float a, size_t n)
{
    size_t m = vec_len(n);
    for (size_t i = 0; i < m; i++)
        x[i] *= a;
    for (size_t i = m; i < n; i++)
        x[i] *= a;
}

SIM_CLONES
void sim_tensor_average(float *restrict out, const float *restrict a, const float *restrict b,
                        size_t n)
{
    size_t m = vec_len(n);
    for (size_t i = 0; i < m; i++)
        out[i] = (a[i] + b[i]) * 0.5f;
    for (size_t i = m; i < n; i++)
        out[i] = (a[i] + b[i]) * 0.5f;
}

SIM_CLONES
void sim_tensor_average_into(float *restrict x, const float *restrict y, size_t n)
{
    size_t m = vec_len(n);
    for (size_t i = 0; i < m; i++)
        x[i] = (x[i] + y[i]) * 0.5f;
    for (size_t i = m; i < n; i++)
        x[i] = (x[i] + y[i]) * 0.5f;
}

SIM_CLONES
void sim_tensor_average_pair(float *restrict x, float *restrict y, size_t n)
{
    size_t m = vec_len(n);
    for (size_t i = 0; i < m; i++)
        x[i] = y[i] = (x[i] + y[i]) * 0.5f;
    for (size_t i = m; i < n; i++)
        x[i] = y[i] = (x[i] + y[i]) * 0.5f;
}

SIM_CLONES
void sim_tensor_triad(float *restrict a, const float *restrict b, const float *restrict c, float s,
                      size_t n)
{
    size_t m = vec_len(n);
    for (size_t i = 0; i < m; i++)
        a[i] = b[i] + s * c[i];
    for (size_t i = m; i < n; i++)
        a[i] = b[i] + s * c[i];
}

/* One pass over a block: o = [o +] w0*x0 + w1*x1 + ... for cnt (1 to 4) inputs, added left
 * to right, so that any grouping of the inputs into passes gives the same bits. `w` NULL
 * means unit weights (no multiplication); `first` starts from the first input instead of o.
 * The block is `groups` groups of 16 floats, each an inner loop of a constant 16 that gcc
 * vectorizes at -O2 even after inlining (where a masked length no longer proves that the
 * trip count is a multiple of the vector width). */
#define BLOCK_LOOP(expr)                         \
    for (size_t g = 0; g < groups * 16; g += 16) \
        for (size_t i = g; i < g + 16; i++)      \
            o[i] = (expr);

static void block_pass(float *restrict o, const float *const *x, const float *w, size_t cnt,
                       int first, size_t groups)
{
    const float *restrict a = x[0];
    const float *restrict b = cnt > 1 ? x[1] : x[0];
    const float *restrict c = cnt > 2 ? x[2] : x[0];
    const float *restrict d = cnt > 3 ? x[3] : x[0];
    float wa = 1.0f, wb = 1.0f, wc = 1.0f, wd = 1.0f;
    if (w != NULL) {
        wa = w[0];
        wb = cnt > 1 ? w[1] : 0.0f;
        wc = cnt > 2 ? w[2] : 0.0f;
        wd = cnt > 3 ? w[3] : 0.0f;
    }
    /* Each case spelled out, so that every loop is a straight expression gcc vectorizes. */
    switch ((int)cnt - 1 + (first ? 0 : 4) + (w != NULL ? 8 : 0)) {
    case 0:
        BLOCK_LOOP(a[i]);
        break;
    case 1:
        BLOCK_LOOP(a[i] + b[i]);
        break;
    case 2:
        BLOCK_LOOP(a[i] + b[i] + c[i]);
        break;
    case 3:
        BLOCK_LOOP(a[i] + b[i] + c[i] + d[i]);
        break;
    case 4:
        BLOCK_LOOP(o[i] + a[i]);
        break;
    case 5:
        BLOCK_LOOP(o[i] + a[i] + b[i]);
        break;
    case 6:
        BLOCK_LOOP(o[i] + a[i] + b[i] + c[i]);
        break;
    case 7:
        BLOCK_LOOP(o[i] + a[i] + b[i] + c[i] + d[i]);
        break;
    case 8:
        BLOCK_LOOP(wa * a[i]);
        break;
    case 9:
        BLOCK_LOOP(wa * a[i] + wb * b[i]);
        break;
    case 10:
        BLOCK_LOOP(wa * a[i] + wb * b[i] + wc * c[i]);
        break;
    case 11:
        BLOCK_LOOP(wa * a[i] + wb * b[i] + wc * c[i] + wd * d[i]);
        break;
    case 12:
        BLOCK_LOOP(o[i] + wa * a[i]);
        break;
    case 13:
        BLOCK_LOOP(o[i] + wa * a[i] + wb * b[i]);
        break;
    case 14:
        BLOCK_LOOP(o[i] + wa * a[i] + wb * b[i] + wc * c[i]);
        break;
    default:
        BLOCK_LOOP(o[i] + wa * a[i] + wb * b[i] + wc * c[i] + wd * d[i]);
        break;
    }
}

#undef BLOCK_LOOP

/* The same sums element by element for the last (fewer than 16) elements, elements
 * [begin, end) of the inputs into dst[0 .. end - begin). */
static void tail_sum(float *restrict dst, const float *const *xs, const float *w, size_t k,
                     size_t begin, size_t end, float divisor)
{
    for (size_t i = begin; i < end; i++) {
        float s = w != NULL ? w[0] * xs[0][i] : xs[0][i];
        for (size_t v = 1; v < k; v++)
            s = s + (w != NULL ? w[v] * xs[v][i] : xs[v][i]);
        dst[i - begin] = divisor != 1.0f ? s / divisor : s;
    }
}

/* Sums the k (weighted) inputs' elements [begin, n) (begin a multiple of MEAN_BLOCK) into out
 * block by block, four inputs per pass and the
 * remainder in one more, then divides by `divisor` unless it is 1. With `scratch` (a block of
 * MEAN_BLOCK floats) each block is summed there and then copied to out, so that out may be one
 * of the inputs: every input's block is read before out's is written. */
static void blocked_sum(float *out, const float *const *xs, const float *w, size_t k, size_t begin,
                        size_t n, float divisor, float *restrict scratch)
{
    const float *x[4];
    for (size_t b0 = begin; b0 < n; b0 += MEAN_BLOCK) {
        size_t m = vec_len(n - b0 < MEAN_BLOCK ? n - b0 : MEAN_BLOCK);
        float *restrict o = scratch != NULL ? scratch : out + b0;
        for (size_t v = 0; v < k && m > 0;) {
            size_t cnt = k - v >= 4 ? 4 : k - v;
            for (size_t j = 0; j < cnt; j++)
                x[j] = xs[v + j] + b0;
            block_pass(o, x, w != NULL ? w + v : NULL, cnt, v == 0, m / 16);
            v += cnt;
        }
        if (divisor != 1.0f)
            for (size_t i = 0; i < m; i++)
                o[i] = o[i] / divisor;
        size_t end = n - b0 < MEAN_BLOCK ? n : b0 + m;
        if (end > b0 + m)
            tail_sum(o + m, xs, w, k, b0 + m, end, divisor);
        if (scratch != NULL)
            memcpy(out + b0, scratch, (end - b0) * sizeof(float));
    }
}

SIM_CLONES
void sim_tensor_mean(float *restrict out, const float *const *xs, size_t k, size_t n)
{
    if (k == 0)
        return;
    blocked_sum(out, xs, NULL, k, 0, n, (float)k, NULL);
}

SIM_CLONES
void sim_tensor_mean_range(float *restrict out, const float *const *xs, size_t k, size_t begin,
                           size_t end)
{
    assert(begin % MEAN_BLOCK == 0 && begin <= end);
    if (k > 0)
        blocked_sum(out, xs, NULL, k, begin, end, (float)k, NULL);
}

SIM_CLONES
void sim_tensor_mean_over(float *out, const float *const *xs, size_t k, size_t n)
{
    static_assert(MEAN_BLOCK * sizeof(float) <= 32768, "a block of scratch on the stack");
    _Alignas(64) float scratch[MEAN_BLOCK];
    if (k > 0)
        blocked_sum(out, xs, NULL, k, 0, n, (float)k, scratch);
}

SIM_CLONES
void sim_tensor_weighted_mean(float *restrict out, const float *const *xs, const float *w, size_t k,
                              size_t n)
{
    if (k == 0)
        return;
    blocked_sum(out, xs, w, k, 0, n, 1.0f, NULL);
}

static double combine(const double *acc)
{
    return ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]));
}

double sim_tensor_dot(const float *x, const float *y, size_t n)
{
    double acc[NPART] = { 0 };
    size_t i = 0;
    for (; i + NPART <= n; i += NPART)
        for (size_t j = 0; j < NPART; j++)
            acc[j] += (double)x[i + j] * (double)y[i + j];
    for (size_t j = 0; i + j < n; j++)
        acc[j] += (double)x[i + j] * (double)y[i + j];
    return combine(acc);
}

double sim_tensor_norm2(const float *x, size_t n)
{
    return sim_tensor_dot(x, x, n);
}

double sim_tensor_sqdist(const float *x, const float *y, size_t n)
{
    double acc[NPART] = { 0 };
    size_t i = 0;
    for (; i + NPART <= n; i += NPART)
        for (size_t j = 0; j < NPART; j++) {
            double d = (double)x[i + j] - (double)y[i + j];
            acc[j] += d * d;
        }
    for (size_t j = 0; i + j < n; j++) {
        double d = (double)x[i + j] - (double)y[i + j];
        acc[j] += d * d;
    }
    return combine(acc);
}

double sim_tensor_sum(const float *x, size_t n)
{
    double acc[NPART] = { 0 };
    size_t i = 0;
    for (; i + NPART <= n; i += NPART)
        for (size_t j = 0; j < NPART; j++)
            acc[j] += (double)x[i + j];
    for (size_t j = 0; i + j < n; j++)
        acc[j] += (double)x[i + j];
    return combine(acc);
}

uint64_t sim_tensor_checksum(const float *x, size_t n)
{
    return sim_fnv_bytes(SIM_FNV_OFFSET, x, n * sizeof(float));
}

bool sim_tensor_all_finite(const float *x, size_t n)
{
    /* An exponent field of all ones (255) means NaN or infinity: (e + 1) >> 8 is then 1.
     * Sixteen lanes of integer flags, each group copied out by memcpy (the defined way to
     * read a float's bits), vectorize at -O2. */
    uint32_t flag[16] = { 0 }, u[16];
    size_t i = 0;
    for (; i + 16 <= n; i += 16) {
        memcpy(u, x + i, sizeof(u));
        for (size_t j = 0; j < 16; j++)
            flag[j] |= (((u[j] >> 23) & 0xffu) + 1) >> 8;
    }
    for (size_t j = 0; i + j < n; j++) {
        memcpy(&u[j], x + i + j, sizeof(u[j]));
        flag[j] |= (((u[j] >> 23) & 0xffu) + 1) >> 8;
    }
    uint32_t bad = 0;
    for (size_t j = 0; j < 16; j++)
        bad |= flag[j];
    return bad == 0;
}

/* ---- Pool ---- */

struct sim_tensor_pool {
    size_t n_floats;               /* floats per buffer as asked */
    size_t stride;                 /* floats per buffer in a chunk, a multiple of 16 (64 bytes) */
    size_t capacity;               /* buffers */
    float **buf;                   /* (capacity) buffer of each handle */
    uint32_t *free_list;           /* (capacity) stack of free handles, top at n_free - 1 */
    size_t n_free;                 /* free handles */
    unsigned char *used;           /* (capacity) 1 while a handle is handed out */
    float *chunk[POOL_MAX_CHUNKS]; /* blocks of buffers: the first, then one per doubling */
    void *raw[POOL_MAX_CHUNKS];    /* each block's allocation (the block is its aligned part) */
    size_t n_chunks;
    size_t peak;
    uint64_t gets, puts, grows;
};

/* Adds `count` buffers (handles capacity..capacity+count-1) in one new chunk. The handle
 * arrays are enlarged first; a failure leaves the pool as it was, if larger arrays. */
static int pool_add(sim_tensor_pool *pool, size_t count)
{
    size_t cap = pool->capacity + count;
    if (cap >= SIM_TENSOR_NO_HANDLE || pool->n_chunks == POOL_MAX_CHUNKS ||
        count > (SIZE_MAX / sizeof(float) - 16) / pool->stride)
        return SIM_ENOMEM;
    float **buf = realloc(pool->buf, cap * sizeof(*buf));
    if (buf == NULL)
        return SIM_ENOMEM;
    pool->buf = buf;
    uint32_t *fr = realloc(pool->free_list, cap * sizeof(*fr));
    if (fr == NULL)
        return SIM_ENOMEM;
    pool->free_list = fr;
    unsigned char *used = realloc(pool->used, cap);
    if (used == NULL)
        return SIM_ENOMEM;
    pool->used = used;
    /* calloc, not sim_tensor_alloc's memset: fresh pages from the system are zero already
     * and stay out of the resident set until a buffer is written, so the pool's memory is
     * what its buffers hold (a buffer of a model slice, a doubling never used), not its
     * capacity. The block is the 64-byte aligned part of the allocation. */
    void *raw = calloc(count * pool->stride + 16, sizeof(float));
    if (raw == NULL)
        return SIM_ENOMEM;
    float *chunk = (float *)(((uintptr_t)raw + 63) & ~(uintptr_t)63);
    pool->raw[pool->n_chunks] = raw;
    pool->chunk[pool->n_chunks++] = chunk;
    /* The new buffers go under the free ones, lowest handle on top of them: the buffers
     * already written are handed out first, and a fresh pool's lowest handle first. */
    memmove(fr + count, fr, pool->n_free * sizeof(*fr));
    for (size_t i = 0; i < count; i++) {
        size_t h = pool->capacity + i;
        pool->buf[h] = chunk + i * pool->stride;
        pool->used[h] = 0;
        fr[count - 1 - i] = (uint32_t)h;
    }
    pool->n_free += count;
    pool->capacity = cap;
    return SIM_OK;
}

sim_tensor_pool *sim_tensor_pool_create(size_t n_floats, size_t initial_count, sim_err *err)
{
    if (n_floats == 0 || initial_count == 0) {
        sim_err_set(err, SIM_EINVAL, NULL,
                    "tensor pool needs n_floats > 0 and count > 0, got %zu and %zu", n_floats,
                    initial_count);
        return NULL;
    }
    if (n_floats > SIZE_MAX / sizeof(float) - 16 || initial_count >= SIM_TENSOR_NO_HANDLE) {
        sim_err_set(err, SIM_EINVAL, NULL, "tensor pool of %zu buffers of %zu floats is too large",
                    initial_count, n_floats);
        return NULL;
    }
    sim_tensor_pool *pool = calloc(1, sizeof(*pool));
    if (pool == NULL)
        goto fail_nomem;
    pool->n_floats = n_floats;
    pool->stride = (n_floats + 15) & ~(size_t)15;
    if (pool_add(pool, initial_count) != SIM_OK)
        goto fail_destroy;
    return pool;
fail_destroy:
    sim_tensor_pool_destroy(pool);
fail_nomem:
    sim_err_set(err, SIM_ENOMEM, NULL,
                "out of memory for a tensor pool of %zu buffers of %zu floats", initial_count,
                n_floats);
    return NULL;
}

void sim_tensor_pool_destroy(sim_tensor_pool *pool)
{
    if (pool == NULL)
        return;
    for (size_t c = 0; c < pool->n_chunks; c++)
        free(pool->raw[c]);
    free(pool->buf);
    free(pool->free_list);
    free(pool->used);
    free(pool);
}

int sim_tensor_pool_reserve(sim_tensor_pool *pool, size_t count, sim_err *err)
{
    while (pool->n_free < count) {
        if (pool_add(pool, pool->capacity) != SIM_OK)
            return sim_err_set(err, SIM_ENOMEM, NULL,
                               "out of memory growing a tensor pool from %zu buffers of %zu floats",
                               pool->capacity, pool->n_floats);
        pool->grows++;
    }
    return SIM_OK;
}

int sim_tensor_pool_get(sim_tensor_pool *pool, uint32_t *handle, sim_err *err)
{
    *handle = SIM_TENSOR_NO_HANDLE;
    int rc = sim_tensor_pool_reserve(pool, 1, err);
    if (rc != SIM_OK)
        return rc;
    uint32_t h = pool->free_list[--pool->n_free];
    pool->used[h] = 1;
    pool->gets++;
    size_t in_use = pool->capacity - pool->n_free;
    if (in_use > pool->peak)
        pool->peak = in_use;
    *handle = h;
    return SIM_OK;
}

float *sim_tensor_pool_data(sim_tensor_pool *pool, uint32_t handle)
{
    assert(handle < pool->capacity && pool->used[handle]);
    return pool->buf[handle];
}

void sim_tensor_pool_put(sim_tensor_pool *pool, uint32_t handle)
{
    assert(handle < pool->capacity && pool->used[handle]);
    pool->used[handle] = 0;
    pool->free_list[pool->n_free++] = handle;
    pool->puts++;
}

void sim_tensor_pool_get_stats(const sim_tensor_pool *pool, sim_tensor_pool_stats *stats)
{
    stats->n_floats = pool->n_floats;
    stats->capacity = pool->capacity;
    stats->in_use = pool->capacity - pool->n_free;
    stats->peak_inuse = pool->peak;
    stats->gets = pool->gets;
    stats->puts = pool->puts;
    stats->grows = pool->grows;
    stats->bytes = pool->capacity * pool->stride * sizeof(float);
}

double sim_tensor_consensus(const float *const *xs, size_t k, size_t n)
{
    enum {
        BLOCK = 512
    }; /* doubles of the block's mean, kept on the stack */
    double mean[BLOCK], sum = 0.0;
    if (k == 0)
        return 0.0;
    for (size_t b0 = 0; b0 < n; b0 += BLOCK) {
        size_t m = n - b0 < BLOCK ? n - b0 : BLOCK;
        for (size_t j = 0; j < m; j++)
            mean[j] = 0.0;
        for (size_t i = 0; i < k; i++)
            for (size_t j = 0; j < m; j++)
                mean[j] += (double)xs[i][b0 + j];
        for (size_t j = 0; j < m; j++)
            mean[j] /= (double)k;
        for (size_t i = 0; i < k; i++)
            for (size_t j = 0; j < m; j++) {
                double d = (double)xs[i][b0 + j] - mean[j];
                sum += d * d;
            }
    }
    return sum / (double)k;
}
