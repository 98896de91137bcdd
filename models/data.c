#include "models/data.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_randist.h>

#include "sim/tensor.h"

struct data_sampler {
    const data_set *ds; /* borrowed; must outlive the sampler */
    size_t *order;      /* (n) the worker's example ids in this epoch's order */
    size_t n;           /* examples */
    size_t batch;       /* examples per batch */
    size_t pos;         /* next position in order; n means "start an epoch" */
    uint64_t epoch;     /* epochs started */
};

/* ---- Data sets ---- */

int data_set_alloc(data_set *ds, size_t n, size_t dim, sim_err *err)
{
    memset(ds, 0, sizeof(*ds));
    if (n == 0 || dim == 0 || n > DATA_MAX_FLOATS / dim)
        return sim_err_set(err, SIM_EINVAL, NULL,
                           "data set of %zu examples of %zu features is out of range (1 to %zu "
                           "floats in all)",
                           n, dim, DATA_MAX_FLOATS);
    ds->x = sim_tensor_alloc(n * dim);
    if (ds->x == NULL)
        goto fail_nomem;
    ds->y = calloc(n, sizeof(*ds->y));
    if (ds->y == NULL)
        goto fail_free_x;
    ds->n = n;
    ds->dim = dim;
    ds->c = 1;
    ds->h = 1;
    ds->w = (uint32_t)dim; /* dim <= DATA_MAX_FLOATS < 2^32 */
    return SIM_OK;
fail_free_x:
    sim_tensor_free(ds->x);
    ds->x = NULL;
fail_nomem:
    return sim_err_set(err, SIM_ENOMEM, NULL, "out of memory for %zu examples of %zu features", n,
                       dim);
}

void data_fini(data_set *ds)
{
    if (ds == NULL)
        return;
    sim_tensor_free(ds->x);
    free(ds->y);
    free(ds->label_value);
    memset(ds, 0, sizeof(*ds));
}

void data_gather(const data_set *ds, const size_t *idx, size_t count, float *restrict x,
                 uint8_t *restrict y)
{
    for (size_t i = 0; i < count; i++) {
        sim_tensor_copy(x + i * ds->dim, ds->x + idx[i] * ds->dim, ds->dim);
        y[i] = ds->y[idx[i]];
    }
}

void data_moments(const data_set *ds, double *mean, double *std)
{
    size_t total = ds->n * ds->dim;
    if (total == 0) {
        *mean = 0.0;
        *std = 0.0;
        return;
    }
    double m = sim_tensor_sum(ds->x, total) / (double)total;
    double ss = 0.0;
    for (size_t i = 0; i < total; i++) {
        double d = (double)ds->x[i] - m;
        ss += d * d;
    }
    *mean = m;
    *std = sqrt(ss / (double)total);
}

void data_standardize(data_set *ds, double mean, double std)
{
    size_t total = ds->n * ds->dim;
    for (size_t i = 0; i < total; i++)
        ds->x[i] = (float)(((double)ds->x[i] - mean) / std);
}

/* ---- Synthetic ---- */

int data_synthetic(const data_synthetic_config *cfg, gsl_rng *r, data_set *out, sim_err *err)
{
    memset(out, 0, sizeof(*out));
    if (cfg->classes < 2 || cfg->classes > DATA_MAX_CLASSES)
        return sim_err_set(err, SIM_EINVAL, NULL, "synthetic classes must be 2..%u, got %u",
                           DATA_MAX_CLASSES, cfg->classes);
    if (!(cfg->separation >= 0.0) || !isfinite(cfg->separation))
        return sim_err_set(err, SIM_EINVAL, NULL,
                           "synthetic separation must be finite and >= 0, got %g", cfg->separation);
    data_set ds;
    int rc = data_set_alloc(&ds, cfg->n, cfg->dim, err);
    if (rc != SIM_OK)
        return rc;
    float *centre = sim_tensor_alloc((size_t)cfg->classes * cfg->dim); /* (classes, dim) */
    if (centre == NULL) {
        data_fini(&ds);
        return sim_err_set(err, SIM_ENOMEM, NULL, "out of memory for %u class centres",
                           cfg->classes);
    }
    double spread = cfg->separation / sqrt((double)cfg->dim);
    for (size_t i = 0; i < (size_t)cfg->classes * cfg->dim; i++)
        centre[i] = (float)gsl_ran_gaussian(r, spread);
    for (size_t i = 0; i < ds.n; i++)
        ds.y[i] = (uint8_t)(i % cfg->classes);
    gsl_ran_shuffle(r, ds.y, ds.n, sizeof(*ds.y));
    for (size_t i = 0; i < ds.n; i++) {
        const float *mu = centre + (size_t)ds.y[i] * ds.dim;
        float *row = ds.x + i * ds.dim;
        for (size_t j = 0; j < ds.dim; j++)
            row[j] = mu[j] + (float)gsl_ran_gaussian(r, 1.0);
    }
    sim_tensor_free(centre);
    ds.classes = cfg->classes;
    *out = ds;
    return SIM_OK;
}

/* ---- Partitions ---- */

static int cmp_size(const void *a, const void *b)
{
    size_t x = *(const size_t *)a, y = *(const size_t *)b;
    return (x > y) - (x < y);
}

/* Checks 1 <= workers <= n and allocates the one block of offsets and ids. */
static int partition_alloc(data_partition *p, size_t n, size_t workers, sim_err *err)
{
    memset(p, 0, sizeof(*p));
    if (workers == 0 || workers > n)
        return sim_err_set(err, SIM_EINVAL, NULL,
                           "cannot partition %zu examples over %zu workers: each needs at "
                           "least one",
                           n, workers);
    if (n > SIZE_MAX / sizeof(size_t) - workers - 1)
        return sim_err_set(err, SIM_ENOMEM, NULL, "partition of %zu examples is too large", n);
    p->offset = malloc((workers + 1 + n) * sizeof(size_t));
    if (p->offset == NULL)
        return sim_err_set(err, SIM_ENOMEM, NULL, "out of memory partitioning %zu examples", n);
    p->index = p->offset + workers + 1;
    p->workers = workers;
    p->n = n;
    return SIM_OK;
}

int data_partition_iid(const data_set *ds, size_t workers, gsl_rng *r, data_partition *out,
                       sim_err *err)
{
    int rc = partition_alloc(out, ds->n, workers, err);
    if (rc != SIM_OK)
        return rc;
    size_t n = ds->n;
    for (size_t i = 0; i < n; i++)
        out->index[i] = i;
    gsl_ran_shuffle(r, out->index, n, sizeof(size_t));
    for (size_t w = 0; w <= workers; w++)
        out->offset[w] = w * n / workers;
    for (size_t w = 0; w < workers; w++)
        qsort(out->index + out->offset[w], out->offset[w + 1] - out->offset[w], sizeof(size_t),
              cmp_size);
    return SIM_OK;
}

/* Deals the examples of class c (ids in `ids`, count m, shuffled here) to workers by
 * Dirichlet proportions, recording the owner of each example and counting per worker. */
static void deal_class(size_t *ids, size_t m, size_t workers, const double *alpha, double *theta,
                       gsl_rng *r, size_t *owner, size_t *count)
{
    gsl_ran_shuffle(r, ids, m, sizeof(size_t));
    gsl_ran_dirichlet(r, workers, alpha, theta);
    double total = 0.0;
    for (size_t w = 0; w < workers; w++)
        total += isfinite(theta[w]) && theta[w] > 0.0 ? theta[w] : 0.0;
    double cum = 0.0;
    size_t start = 0;
    for (size_t w = 0; w < workers; w++) {
        double t = isfinite(theta[w]) && theta[w] > 0.0 ? theta[w] : 0.0;
        cum += total > 0.0 ? t / total : (w == 0 ? 1.0 : 0.0); /* all-zero draw: worker 0 */
        size_t end = w + 1 == workers ? m : (size_t)llround(fmin(cum, 1.0) * (double)m);
        if (end < start)
            end = start;
        for (size_t i = start; i < end; i++)
            owner[ids[i]] = w;
        count[w] += end - start;
        start = end;
    }
}

/* Gives each empty worker, in id order, the highest-id example of the largest worker. */
static void fill_empty(size_t n, size_t workers, size_t *owner, size_t *count)
{
    for (size_t w = 0; w < workers; w++) {
        if (count[w] > 0)
            continue;
        size_t donor = 0;
        for (size_t v = 1; v < workers; v++)
            if (count[v] > count[donor])
                donor = v;
        size_t i = n;
        while (i > 0 && owner[i - 1] != donor)
            i--;
        owner[i - 1] = w; /* donor holds >= 2 examples since workers <= n */
        count[donor]--;
        count[w]++;
    }
}

int data_partition_dirichlet(const data_set *ds, size_t workers, double alpha, gsl_rng *r,
                             data_partition *out, sim_err *err)
{
    memset(out, 0, sizeof(*out));
    if (!(alpha > 0.0) || !isfinite(alpha))
        return sim_err_set(err, SIM_EINVAL, NULL, "dirichlet alpha must be finite and > 0, got %g",
                           alpha);
    int rc = partition_alloc(out, ds->n, workers, err);
    if (rc != SIM_OK)
        return rc;
    size_t n = ds->n;
    /* Work arrays: owner (n), class ids (n), count (workers), alpha and theta (workers). */
    size_t *owner = malloc(2 * n * sizeof(size_t));
    size_t *count = calloc(workers, sizeof(size_t));
    double *a = malloc(2 * workers * sizeof(double));
    if (owner == NULL || count == NULL || a == NULL) {
        rc = sim_err_set(err, SIM_ENOMEM, NULL, "out of memory partitioning %zu examples", n);
        goto fail_free_work;
    }
    size_t *ids = owner + n;
    for (size_t w = 0; w < workers; w++)
        a[w] = alpha;
    /* Counting sort by label: ids holds each label's examples in ascending id order. */
    size_t start[DATA_MAX_CLASSES + 1] = { 0 };
    for (size_t i = 0; i < n; i++)
        start[ds->y[i] + 1]++;
    for (size_t c = 0; c < DATA_MAX_CLASSES; c++)
        start[c + 1] += start[c];
    size_t fill[DATA_MAX_CLASSES];
    memcpy(fill, start, sizeof(fill));
    for (size_t i = 0; i < n; i++)
        ids[fill[ds->y[i]]++] = i;
    for (size_t c = 0; c < DATA_MAX_CLASSES; c++)
        if (start[c + 1] > start[c])
            deal_class(ids + start[c], start[c + 1] - start[c], workers, a, a + workers, r, owner,
                       count);
    fill_empty(n, workers, owner, count);
    out->offset[0] = 0;
    for (size_t w = 0; w < workers; w++)
        out->offset[w + 1] = out->offset[w] + count[w];
    for (size_t w = 0; w < workers; w++)
        count[w] = out->offset[w];
    for (size_t i = 0; i < n; i++)
        out->index[count[owner[i]]++] = i;
    free(a);
    free(count);
    free(owner);
    return SIM_OK;
fail_free_work:
    free(a);
    free(count);
    free(owner);
    data_partition_fini(out);
    return rc;
}

void data_partition_fini(data_partition *p)
{
    if (p == NULL)
        return;
    free(p->offset);
    memset(p, 0, sizeof(*p));
}

/* ---- Sampler ---- */

data_sampler *data_sampler_create(const data_set *ds, const size_t *idx, size_t n, size_t batch,
                                  sim_err *err)
{
    if (n == 0 || batch == 0) {
        sim_err_set(err, SIM_EINVAL, NULL,
                    "sampler needs at least one example and a batch >= 1, got %zu and %zu", n,
                    batch);
        return NULL;
    }
    for (size_t i = 0; i < n; i++)
        if (idx[i] >= ds->n) {
            sim_err_set(err, SIM_EINVAL, NULL, "sampler example id %zu is not below %zu", idx[i],
                        ds->n);
            return NULL;
        }
    data_sampler *s = calloc(1, sizeof(*s));
    if (s == NULL)
        goto fail_nomem;
    s->order = malloc(n * sizeof(*s->order));
    if (s->order == NULL)
        goto fail_free_sampler;
    memcpy(s->order, idx, n * sizeof(*s->order));
    s->ds = ds;
    s->n = n;
    s->batch = batch;
    s->pos = n;
    return s;
fail_free_sampler:
    free(s);
fail_nomem:
    sim_err_set(err, SIM_ENOMEM, NULL, "out of memory for a sampler of %zu examples", n);
    return NULL;
}

void data_sampler_destroy(data_sampler *s)
{
    if (s == NULL)
        return;
    free(s->order);
    free(s);
}

uint64_t data_sampler_epoch(const data_sampler *s)
{
    return s->epoch;
}

void data_sampler_next(data_sampler *s, gsl_rng *r, float *restrict x, uint8_t *restrict y,
                       size_t *restrict ids)
{
    for (size_t b = 0; b < s->batch; b++) {
        if (s->pos == s->n) {
            gsl_ran_shuffle(r, s->order, s->n, sizeof(*s->order));
            s->pos = 0;
            s->epoch++;
        }
        size_t id = s->order[s->pos++];
        data_gather(s->ds, &id, 1, x + b * s->ds->dim, y + b);
        if (ids != NULL)
            ids[b] = id;
    }
}

void data_sampler_next_ids(data_sampler *s, gsl_rng *r, size_t *ids)
{
    for (size_t b = 0; b < s->batch; b++) {
        if (s->pos == s->n) {
            gsl_ran_shuffle(r, s->order, s->n, sizeof(*s->order));
            s->pos = 0;
            s->epoch++;
        }
        ids[b] = s->order[s->pos++];
    }
}
