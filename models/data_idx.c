/* IDX reader (the MNIST family's format) and the Fashion-MNIST loader; see models/data.h.
 *
 * An IDX file is a big-endian header, magic 0x000008TD (T = 0x08 unsigned bytes, D = number
 * of dimensions), D 32-bit sizes, then the data in row-major order. A file that starts with
 * the gzip magic bytes is inflated with zlib's inflate (one gzip stream, checksum checked),
 * any other is read as it is. zlib's gzread is not used: it silently ignores junk after a
 * gzip stream. Byte offsets in messages count uncompressed bytes.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <zlib.h>

#include "models/data.h"
#include "sim/file.h"
#include "sim/tensor.h"

enum {
    IDX_IMAGES_MAGIC = 0x00000803, /* unsigned bytes, 3 dimensions */
    IDX_LABELS_MAGIC = 0x00000801, /* unsigned bytes, 1 dimension */
    CHUNK_BYTES = 16384,           /* pixels converted per read */
    DEFLATE_MAX_RATIO = 1032       /* deflate expands a byte into at most 1032 (RFC 1951) */
};

typedef struct idx_file {
    FILE *f;
    const char *path;
    uint64_t offset;               /* uncompressed bytes consumed so far */
    bool gz;                       /* a gzip stream (else the bytes are read as they are) */
    bool ended;                    /* gz: the gzip stream's end (its trailer) was reached */
    bool z_ready;                  /* gz: z holds an inflate state to end */
    uint64_t size;                 /* the file's size in bytes (as stored) */
    z_stream z;                    /* gz: next_in/avail_in also buffer plain files */
    unsigned char in[CHUNK_BYTES]; /* raw bytes read from f */
} idx_file;

/* Fills `err` with `code`, a fresh message and `file`, and returns `code`. */
__attribute__((format(printf, 4, 5))) static int fail(sim_err *err, int code, const char *file,
                                                      const char *fmt, ...)
{
    char msg[SIM_ERR_MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    sim_err_clear(err);
    sim_err_set(err, code, NULL, "%s", msg);
    sim_err_file(err, file);
    return code;
}

/* Refills the raw input buffer when it is empty. Returns 0, or SIM_EIO on a read error. */
static int refill(idx_file *in)
{
    if (in->z.avail_in > 0 || feof(in->f))
        return SIM_OK;
    size_t k = fread(in->in, 1, sizeof(in->in), in->f);
    in->z.next_in = in->in;
    in->z.avail_in = (uInt)k;
    return ferror(in->f) ? SIM_EIO : SIM_OK;
}

/* Opens `path`; a file that starts with the gzip magic bytes is inflated, any other is read
 * as it is (like zlib's gzread). */
static int idx_open(idx_file *in, const char *path, sim_err *err)
{
    memset(in, 0, sizeof(*in));
    in->path = path;
    struct stat st;
    /* A FIFO's open waited for a writer, and a device's read for input (a link to /dev/ptmx
     * was waited on forever); neither can be read from its start again. A directory is left
     * to the read, which names it. */
    if (stat(path, &st) == 0 && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode))
        return fail(err, SIM_EINVAL, path,
                    "not a regular file (%s): IDX files are read from their start more than "
                    "once; copy it into a file",
                    sim_file_kind(st.st_mode));
    errno = 0;
    in->f = fopen(path, "rb");
    if (in->f == NULL)
        return fail(err, SIM_EIO, path, "cannot open: %s",
                    errno != 0 ? strerror(errno) : "out of memory");
    if (fstat(fileno(in->f), &st) == 0 && st.st_size > 0)
        in->size = (uint64_t)st.st_size;
    if (refill(in) != SIM_OK)
        return fail(err, SIM_EIO, path, "read error at byte 0: %s", strerror(errno));
    in->gz = in->z.avail_in >= 2 && in->in[0] == 0x1f && in->in[1] == 0x8b;
    if (!in->gz)
        return SIM_OK;
    if (inflateInit2(&in->z, 16 + MAX_WBITS) != Z_OK) /* gzip only */
        return fail(err, SIM_ENOMEM, path, "out of memory for zlib");
    in->z_ready = true;
    return SIM_OK;
}

static void idx_close(idx_file *in)
{
    if (in->z_ready)
        inflateEnd(&in->z);
    if (in->f != NULL)
        fclose(in->f);
    in->f = NULL;
    in->z_ready = false;
}

/* Moves up to len bytes of data into p; *zerr receives zlib's verdict when it stops short
 * (Z_OK: the data simply ended). Returns the bytes moved, or SIZE_MAX on a read error. */
static size_t pull(idx_file *in, unsigned char *p, size_t len, int *zerr)
{
    size_t got = 0;
    *zerr = Z_OK;
    while (got < len) {
        if (refill(in) != SIM_OK)
            return SIZE_MAX;
        if (!in->gz) {
            size_t m = in->z.avail_in < len - got ? in->z.avail_in : len - got;
            if (m == 0)
                break; /* the end of the file */
            memcpy(p + got, in->z.next_in, m);
            in->z.next_in += m;
            in->z.avail_in -= (uInt)m;
            got += m;
            continue;
        }
        if (in->ended)
            break;
        size_t want = len - got > (1u << 30) ? 1u << 30 : len - got;
        in->z.next_out = p + got;
        in->z.avail_out = (uInt)want;
        int rc = inflate(&in->z, Z_NO_FLUSH);
        got += want - in->z.avail_out;
        if (rc == Z_STREAM_END) {
            in->ended = true;
        } else if (rc == Z_BUF_ERROR && in->z.avail_in == 0 && feof(in->f)) {
            *zerr = Z_BUF_ERROR; /* the file ends inside the stream */
            break;
        } else if (rc != Z_OK && rc != Z_BUF_ERROR) {
            *zerr = rc;
            break;
        }
    }
    return got;
}

/* Reads exactly len bytes of `what`, or reports where and why the data ran out. */
static int idx_read(idx_file *in, void *buf, size_t len, const char *what, sim_err *err)
{
    int zerr = Z_OK;
    errno = 0;
    size_t got = pull(in, buf, len, &zerr);
    if (got == SIZE_MAX)
        return fail(err, SIM_EIO, in->path, "read error at byte %" PRIu64 " while reading %s: %s",
                    in->offset, what, strerror(errno));
    in->offset += got;
    if (got == len)
        return SIM_OK;
    if (zerr == Z_MEM_ERROR)
        return fail(err, SIM_ENOMEM, in->path, "out of memory for zlib while reading %s", what);
    if (zerr == Z_OK || zerr == Z_BUF_ERROR)
        return fail(err, SIM_EIO, in->path,
                    "truncated at byte %" PRIu64 " while reading %s (%zu of %zu bytes%s)",
                    in->offset, what, got, len,
                    zerr == Z_OK ? "" : "; zlib: unexpected end of file");
    return fail(err, SIM_EIO, in->path,
                "corrupt gzip data near byte %" PRIu64 " while reading %s (zlib: %s)", in->offset,
                what, in->z.msg != NULL ? in->z.msg : "unknown error");
}

/* Checks that the file ends where its header says the data ends: no more data, and for a
 * gzip file a complete stream (trailer and checksum) with nothing after it, where zlib's
 * gzread would ignore any junk. */
static int idx_expect_end(idx_file *in, sim_err *err)
{
    unsigned char extra;
    int zerr = Z_OK;
    errno = 0;
    size_t got = pull(in, &extra, 1, &zerr);
    if (got == SIZE_MAX)
        return fail(err, SIM_EIO, in->path, "read error after byte %" PRIu64 ": %s", in->offset,
                    strerror(errno));
    if (got == 1)
        return fail(err, SIM_EINVAL, in->path,
                    "more data after byte %" PRIu64 " than the header announces", in->offset);
    if (zerr == Z_BUF_ERROR)
        return fail(err, SIM_EIO, in->path,
                    "truncated after byte %" PRIu64 " (zlib: unexpected end of file)", in->offset);
    if (zerr != Z_OK)
        return fail(err, SIM_EIO, in->path, "corrupt gzip data after byte %" PRIu64 " (zlib: %s)",
                    in->offset, in->z.msg != NULL ? in->z.msg : "unknown error");
    if (in->gz && (refill(in) != SIM_OK || in->z.avail_in > 0))
        return fail(err, SIM_EINVAL, in->path,
                    "unexpected bytes after the end of the gzip stream (the data ends at byte "
                    "%" PRIu64 ")",
                    in->offset);
    return SIM_OK;
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

/* Refuses a header that announces more bytes than the file can hold (a gzip file at most
 * DEFLATE_MAX_RATIO times its size), before they are allocated. */
static int check_room(const idx_file *in, uint64_t bytes, const char *what, sim_err *err)
{
    uint64_t room = in->size > UINT64_MAX / DEFLATE_MAX_RATIO ? UINT64_MAX
                    : in->gz                                  ? in->size * DEFLATE_MAX_RATIO
                                                              : in->size;
    if (in->size == 0 || bytes <= room)
        return SIM_OK; /* size unknown (a pipe): the reads will tell */
    return fail(err, SIM_EIO, in->path,
                "truncated: the header announces %" PRIu64 " bytes of %s, more than a%s file of "
                "%" PRIu64 " bytes can hold",
                bytes, what, in->gz ? " gzip" : "", in->size);
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
    int rc = check_room(lab, 8 + (uint64_t)n, "labels", err);
    if (rc == SIM_OK)
        rc = check_room(img, 16 + (uint64_t)n * dim, "pixels", err);
    if (rc != SIM_OK)
        return rc;
    sim_err_clear(err);
    rc = data_set_alloc(ds, n, dim, err);
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
    if (rc == SIM_OK && n == count) /* read whole: nothing may follow */
        rc = idx_expect_end(&lab, err);
    if (rc == SIM_OK && n == count)
        rc = idx_expect_end(&img, err);
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

/* The paths of one Fashion-MNIST pair in `dir`; SIM_EINVAL when they do not fit. */
static int fashion_paths(const char *dir, bool train, char *images, char *labels, size_t size,
                         sim_err *err)
{
    const char *base = dir != NULL ? dir : DATA_FASHION_MNIST_DIR;
    const char *set = train ? "train" : "t10k";
    int a = snprintf(images, size, "%s/%s-images-idx3-ubyte.gz", base, set);
    int b = snprintf(labels, size, "%s/%s-labels-idx1-ubyte.gz", base, set);
    if (a < 0 || b < 0 || (size_t)a >= size || (size_t)b >= size)
        return fail(err, SIM_EINVAL, base, "directory name is too long");
    return SIM_OK;
}

/* Reads the headers of one pair: the image count and size, and a matching label count. */
static int probe_pair(const char *images, const char *labels, uint32_t *count, uint32_t *rows,
                      uint32_t *cols, sim_err *err)
{
    idx_file *f = calloc(2, sizeof(*f));
    if (f == NULL)
        return fail(err, SIM_ENOMEM, images, "out of memory");
    uint32_t nlabels = 0;
    int rc = idx_open(&f[0], images, err);
    if (rc == SIM_OK)
        rc = images_header(&f[0], count, rows, cols, err);
    if (rc == SIM_OK)
        rc = idx_open(&f[1], labels, err);
    if (rc == SIM_OK)
        rc = labels_header(&f[1], &nlabels, err);
    if (rc == SIM_OK && nlabels != *count)
        rc = fail(err, SIM_EINVAL, labels,
                  "label count %" PRIu32 " at byte 4 does not match the %" PRIu32 " images of %s",
                  nlabels, *count, images);
    idx_close(&f[1]);
    idx_close(&f[0]);
    free(f);
    return rc;
}

int data_probe_fashion_mnist(const char *dir, data_idx_shape *train, data_idx_shape *test,
                             sim_err *err)
{
    char images[2][4096], labels[2][4096];
    data_idx_shape *shape[2] = { train, test };
    for (int i = 0; i < 2; i++) {
        int rc = fashion_paths(dir, i == 0, images[i], labels[i], sizeof(images[i]), err);
        if (rc == SIM_OK)
            rc = probe_pair(images[i], labels[i], &shape[i]->count, &shape[i]->rows,
                            &shape[i]->cols, err);
        if (rc != SIM_OK)
            return rc;
    }
    if (test->rows != train->rows || test->cols != train->cols)
        return fail(err, SIM_EINVAL, images[1],
                    "image size %" PRIu32 "x%" PRIu32 " at byte 8 does not match the %" PRIu32
                    "x%" PRIu32 " images of %s",
                    test->rows, test->cols, train->rows, train->cols, images[0]);
    return SIM_OK;
}

int data_load_fashion_mnist(const char *dir, bool train, size_t max_samples, data_set *out,
                            sim_err *err)
{
    char images[4096], labels[4096];
    memset(out, 0, sizeof(*out));
    int rc = fashion_paths(dir, train, images, labels, sizeof(images), err);
    if (rc != SIM_OK)
        return rc;
    return data_load_idx(images, labels, 10, max_samples, out, err);
}
