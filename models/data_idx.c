/* IDX reader (the MNIST family's format) and the Fashion-MNIST loader; see models/data.h.
 *
 * An IDX file is a big-endian header, magic 0x000008TD (T = 0x08 unsigned bytes, D = number
 * of dimensions), D 32-bit sizes, then the data in row-major order. zlib's gzread reads
 * gzipped and plain files alike. Byte offsets in messages count uncompressed bytes.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <zlib.h>

#include "models/data.h"
#include "sim/tensor.h"

enum {
    IDX_IMAGES_MAGIC = 0x00000803, /* unsigned bytes, 3 dimensions */
    IDX_LABELS_MAGIC = 0x00000801, /* unsigned bytes, 1 dimension */
    CHUNK_BYTES = 16384            /* pixels converted per read */
};

typedef struct idx_file {
    gzFile f;
    const char *path;
    uint64_t offset; /* uncompressed bytes consumed so far */
} idx_file;

/* Fills `err` with `code`, a fresh message and `file`, and returns `code`. */
__attribute__((format(printf, 4, 5))) static int fail(sim_err *err, int code, const char *file,
                                                      const char *fmt, ...)
{
    char msg[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    sim_err_clear(err);
    sim_err_set(err, code, NULL, "%s", msg);
    sim_err_file(err, file);
    return code;
}

static int idx_open(idx_file *in, const char *path, sim_err *err)
{
    in->path = path;
    in->offset = 0;
    errno = 0;
    in->f = gzopen(path, "rb");
    if (in->f == NULL)
        return fail(err, SIM_EIO, path, "cannot open: %s",
                    errno != 0 ? strerror(errno) : "out of memory");
    gzbuffer(in->f, 1u << 17);
    return SIM_OK;
}

static void idx_close(idx_file *in)
{
    if (in->f != NULL)
        gzclose(in->f);
    in->f = NULL;
}

/* Reads exactly len bytes of `what`, or reports where and why the data ran out. */
static int idx_read(idx_file *in, void *buf, size_t len, const char *what, sim_err *err)
{
    unsigned char *p = buf;
    size_t got = 0;
    int k = 0;
    while (got < len) {
        unsigned chunk = len - got > (1u << 30) ? 1u << 30 : (unsigned)(len - got);
        errno = 0;
        k = gzread(in->f, p + got, chunk);
        if (k <= 0)
            break;
        got += (size_t)k;
    }
    in->offset += got;
    if (got == len)
        return SIM_OK;
    int zerr = Z_OK;
    const char *zmsg = gzerror(in->f, &zerr);
    size_t plen = strlen(in->path); /* zlib prefixes its message with "path: " */
    if (strncmp(zmsg, in->path, plen) == 0 && strncmp(zmsg + plen, ": ", 2) == 0)
        zmsg += plen + 2;
    if (zerr == Z_ERRNO)
        return fail(err, SIM_EIO, in->path, "read error at byte %" PRIu64 " while reading %s: %s",
                    in->offset, what, strerror(errno));
    if (zerr == Z_OK || zerr == Z_BUF_ERROR)
        return fail(err, SIM_EIO, in->path,
                    "truncated at byte %" PRIu64 " while reading %s (%zu of %zu bytes%s%s)",
                    in->offset, what, got, len,
                    zerr == Z_OK ? "" : "; zlib: ", zerr == Z_OK ? "" : zmsg);
    return fail(err, SIM_EIO, in->path,
                "corrupt gzip data near byte %" PRIu64 " while reading %s (zlib: %s)", in->offset,
                what, zmsg);
}

static uint32_t be32(const unsigned char *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | (uint32_t)p[3];
}

/* Reads and checks the images header: count, rows, cols. */
static int images_header(idx_file *in, uint32_t *count, uint32_t *rows, uint32_t *cols,
                         sim_err *err)
{
    unsigned char h[16];
    int rc = idx_read(in, h, sizeof(h), "the 16-byte images header", err);
    if (rc != SIM_OK)
        return rc;
    uint32_t magic = be32(h);
    *count = be32(h + 4);
    *rows = be32(h + 8);
    *cols = be32(h + 12);
    if (magic != IDX_IMAGES_MAGIC)
        return fail(err, SIM_EINVAL, in->path,
                    "bad magic number 0x%08" PRIx32 " at byte 0, expected 0x%08x (IDX images "
                    "of unsigned bytes, 3 dimensions)",
                    magic, IDX_IMAGES_MAGIC);
    if (*count == 0 || *count > DATA_IDX_MAX_COUNT)
        return fail(err, SIM_EINVAL, in->path,
                    "image count %" PRIu32 " at byte 4 is out of range 1..%" PRIu32, *count,
                    DATA_IDX_MAX_COUNT);
    if (*rows == 0 || *rows > DATA_IDX_MAX_SIDE || *cols == 0 || *cols > DATA_IDX_MAX_SIDE)
        return fail(err, SIM_EINVAL, in->path,
                    "image size %" PRIu32 "x%" PRIu32 " at byte 8 is out of range 1..%u per side",
                    *rows, *cols, DATA_IDX_MAX_SIDE);
    return SIM_OK;
}

/* Reads and checks the labels header: count. */
static int labels_header(idx_file *in, uint32_t *count, sim_err *err)
{
    unsigned char h[8];
    int rc = idx_read(in, h, sizeof(h), "the 8-byte labels header", err);
    if (rc != SIM_OK)
        return rc;
    uint32_t magic = be32(h);
    *count = be32(h + 4);
    if (magic != IDX_LABELS_MAGIC)
        return fail(err, SIM_EINVAL, in->path,
                    "bad magic number 0x%08" PRIx32 " at byte 0, expected 0x%08x (IDX labels "
                    "of unsigned bytes, 1 dimension)",
                    magic, IDX_LABELS_MAGIC);
    return SIM_OK;
}

/* Reads n * dim pixels, scaling each byte to [0, 1]. */
static int read_pixels(idx_file *in, float *x, size_t total, sim_err *err)
{
    unsigned char buf[CHUNK_BYTES];
    for (size_t done = 0; done < total;) {
        size_t m = total - done < CHUNK_BYTES ? total - done : CHUNK_BYTES;
        int rc = idx_read(in, buf, m, "pixels", err);
        if (rc != SIM_OK)
            return rc;
        for (size_t i = 0; i < m; i++)
            x[done + i] = (float)buf[i] / 255.0f;
        done += m;
    }
    return SIM_OK;
}

/* With both headers read: allocates, reads labels then pixels into *ds. */
static int read_body(idx_file *img, idx_file *lab, uint32_t rows, uint32_t cols, uint32_t classes,
                     size_t n, data_set *ds, sim_err *err)
{
    size_t dim = (size_t)rows * cols;
    if (n > DATA_MAX_FLOATS / dim)
        return fail(err, SIM_EINVAL, img->path,
                    "%zu images of %" PRIu32 "x%" PRIu32 " exceed the limit of %zu floats", n, rows,
                    cols, DATA_MAX_FLOATS);
    sim_err_clear(err);
    int rc = data_set_alloc(ds, n, dim, err);
    if (rc != SIM_OK) {
        sim_err_file(err, img->path);
        return rc;
    }
    rc = idx_read(lab, ds->y, n, "labels", err);
    if (rc != SIM_OK)
        return rc;
    for (size_t i = 0; i < n; i++)
        if (ds->y[i] >= classes)
            return fail(err, SIM_EINVAL, lab->path,
                        "label %u at byte %zu is out of range 0..%" PRIu32, ds->y[i], 8 + i,
                        classes - 1);
    rc = read_pixels(img, ds->x, n * dim, err);
    if (rc != SIM_OK)
        return rc;
    ds->classes = classes;
    ds->c = 1;
    ds->h = rows;
    ds->w = cols;
    return SIM_OK;
}

int data_load_idx(const char *images_path, const char *labels_path, uint32_t classes,
                  size_t max_samples, data_set *out, sim_err *err)
{
    memset(out, 0, sizeof(*out));
    if (classes == 0 || classes > DATA_MAX_CLASSES)
        return fail(err, SIM_EINVAL, images_path, "classes must be 1..%u, got %" PRIu32,
                    DATA_MAX_CLASSES, classes);
    idx_file img = { 0 }, lab = { 0 };
    uint32_t count, rows, cols, nlabels;
    data_set ds = { 0 };
    int rc = idx_open(&img, images_path, err);
    if (rc != SIM_OK)
        return rc;
    rc = images_header(&img, &count, &rows, &cols, err);
    if (rc != SIM_OK)
        goto fail_close_images;
    rc = idx_open(&lab, labels_path, err);
    if (rc != SIM_OK)
        goto fail_close_images;
    rc = labels_header(&lab, &nlabels, err);
    if (rc != SIM_OK)
        goto fail_close_labels;
    if (nlabels != count) {
        rc = fail(err, SIM_EINVAL, labels_path,
                  "label count %" PRIu32 " at byte 4 does not match the %" PRIu32 " images of %s",
                  nlabels, count, images_path);
        goto fail_close_labels;
    }
    size_t n = max_samples > 0 && max_samples < count ? max_samples : count;
    rc = read_body(&img, &lab, rows, cols, classes, n, &ds, err);
    if (rc != SIM_OK)
        goto fail_free_set;
    idx_close(&lab);
    idx_close(&img);
    *out = ds;
    return SIM_OK;
fail_free_set:
    data_fini(&ds);
fail_close_labels:
    idx_close(&lab);
fail_close_images:
    idx_close(&img);
    return rc;
}

int data_load_fashion_mnist(const char *dir, bool train, size_t max_samples, data_set *out,
                            sim_err *err)
{
    char images[4096], labels[4096];
    const char *base = dir != NULL ? dir : DATA_FASHION_MNIST_DIR;
    const char *set = train ? "train" : "t10k";
    int a = snprintf(images, sizeof(images), "%s/%s-images-idx3-ubyte.gz", base, set);
    int b = snprintf(labels, sizeof(labels), "%s/%s-labels-idx1-ubyte.gz", base, set);
    if (a < 0 || b < 0 || (size_t)a >= sizeof(images) || (size_t)b >= sizeof(labels)) {
        memset(out, 0, sizeof(*out));
        return fail(err, SIM_EINVAL, base, "directory name is too long");
    }
    return data_load_idx(images, labels, 10, max_samples, out, err);
}
