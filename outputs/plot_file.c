/* Figure files checked whole before they get their names (see outputs/plot.h): the formats'
 * structure (sim_plot_whole) and the temporary's commit (sim_plot_commit). gnuplot ignores
 * its write errors, so this is the only place a figure cut short by a full disk or a
 * file-size limit is seen. Calls nothing else of the plot module. */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <zlib.h>

#include "outputs/plot.h"

enum {
    PNG_SIG_BYTES = 8,
    FORMAT_HEAD_BYTES = 8,            /* PNG's signature; "%PDF-", "<?xml" are shorter */
    PNG_CHUNK_OVERHEAD = 12,          /* length, type, CRC */
    MAX_FIGURE_BYTES = 256 * 1048576, /* far above any figure the scripts draw */
};

static const unsigned char png_signature[PNG_SIG_BYTES] = { 0x89, 'P',  'N',  'G',
                                                            '\r', '\n', 0x1a, '\n' };

sim_plot_format sim_plot_format_of(const char *name)
{
    static const struct {
        const char *ext;
        sim_plot_format fmt;
    } formats[] = { { ".png", SIM_PLOT_PNG }, { ".pdf", SIM_PLOT_PDF }, { ".svg", SIM_PLOT_SVG } };
    size_t len = name != NULL ? strlen(name) : 0;
    for (size_t i = 0; i < sizeof(formats) / sizeof(formats[0]); i++)
        if (len > 4 && strcmp(name + len - 4, formats[i].ext) == 0)
            return formats[i].fmt;
    return SIM_PLOT_UNKNOWN;
}

static uint32_t be32(const unsigned char *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | (uint32_t)p[3];
}

/* A PNG: the signature, then chunks (length, type, data, CRC of type and data) that fit and
 * check, up to an IEND chunk that ends the file. Returns NULL or what is wrong. */
static const char *png_problem(const unsigned char *d, size_t n)
{
    if (n < PNG_SIG_BYTES || memcmp(d, png_signature, PNG_SIG_BYTES) != 0)
        return "no PNG signature at the start";
    size_t pos = PNG_SIG_BYTES;
    while (n - pos >= PNG_CHUNK_OVERHEAD) {
        uint32_t len = be32(d + pos);
        if (len > 0x7fffffffu) /* the format's own limit */
            return "a chunk length out of range";
        if ((size_t)len > n - pos - PNG_CHUNK_OVERHEAD)
            return "no IEND chunk at the end";
        const unsigned char *type = d + pos + 4;
        uLong crc = crc32(crc32(0L, Z_NULL, 0), type, (uInt)len + 4);
        if ((uint32_t)crc != be32(type + 4 + len))
            return "a chunk whose CRC does not match";
        pos += PNG_CHUNK_OVERHEAD + len;
        if (memcmp(type, "IEND", 4) == 0)
            return pos == n ? NULL : "bytes after the IEND chunk";
    }
    return "no IEND chunk at the end";
}

static bool blank(unsigned char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

/* True if `d` (n bytes), blanks and line ends at its end set aside, ends with `tail`. */
static bool ends_with(const unsigned char *d, size_t n, const char *tail)
{
    while (n > 0 && blank(d[n - 1]))
        n--;
    size_t k = strlen(tail);
    return n >= k && memcmp(d + n - k, tail, k) == 0;
}

static bool starts_with(const unsigned char *d, size_t n, const char *head)
{
    size_t k = strlen(head);
    return n >= k && memcmp(d, head, k) == 0;
}

static const char *pdf_problem(const unsigned char *d, size_t n)
{
    if (!starts_with(d, n, "%PDF-"))
        return "no %PDF- header at the start";
    return ends_with(d, n, "%%EOF") ? NULL : "no %%EOF trailer at the end";
}

static const char *svg_problem(const unsigned char *d, size_t n)
{
    size_t i = starts_with(d, n, "\xef\xbb\xbf") ? 3 : 0;
    while (i < n && blank(d[i]))
        i++;
    if (!starts_with(d + i, n - i, "<?xml") && !starts_with(d + i, n - i, "<svg"))
        return "no <?xml or <svg at the start";
    return ends_with(d, n, "</svg>") ? NULL : "no closing </svg> at the end";
}

bool sim_plot_whole(sim_plot_format fmt, const unsigned char *data, size_t n, const char **why)
{
    const char *problem = "an unknown figure format";
    if (data == NULL || n == 0)
        problem = "empty";
    else if (fmt == SIM_PLOT_PNG)
        problem = png_problem(data, n);
    else if (fmt == SIM_PLOT_PDF)
        problem = pdf_problem(data, n);
    else if (fmt == SIM_PLOT_SVG)
        problem = svg_problem(data, n);
    if (why != NULL)
        *why = problem;
    return problem == NULL;
}

/* Reads the open file `fd` of `size` bytes whole into a new buffer (*out). Returns 0, or an
 * errno value (EIO when the file turns out longer or shorter than `size`). */
static int read_all(int fd, size_t size, unsigned char **out)
{
    unsigned char *buf = malloc(size + 1); /* one more: finds a file grown since measured */
    if (buf == NULL)
        return ENOMEM;
    size_t got = 0;
    while (got < size + 1) {
        ssize_t r = read(fd, buf + got, size + 1 - got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            int e = errno;
            free(buf);
            return e;
        }
        if (r == 0)
            break;
        got += (size_t)r;
    }
    if (got != size) {
        free(buf);
        return EIO;
    }
    *out = buf;
    return 0;
}

/* A figure of `size` bytes that sim_plot_whole refused for `why`. Each format gnuplot draws
 * opens with a header of at most FORMAT_HEAD_BYTES, so a file at least that long that was
 * cut short (a full disk, a file-size limit) still opens with it; one that does not is of
 * another format (a --style copy's own `set terminal`: "cut short ... a full disk", exit 1,
 * was a cause that was not it), said as such, which plot.c's blame_copy names. */
static int not_whole(const char *final, const char *tmp, sim_plot_format fmt, long long size,
                     const char *why, sim_err *err)
{
    static const char *const names[] = {
        [SIM_PLOT_PNG] = "PNG", [SIM_PLOT_PDF] = "PDF", [SIM_PLOT_SVG] = "SVG"
    };
    if (size >= FORMAT_HEAD_BYTES && strstr(why, " at the start") != NULL)
        return sim_err_set(err, SIM_EIO, NULL,
                           "cannot write %s: gnuplot wrote no %s figure to "
                           "%s (%s: the script set a terminal of another format)",
                           final, names[fmt], tmp, why);
    return sim_err_set(err, SIM_EIO, NULL,
                       "cannot write %s: gnuplot cut it short at %lld bytes, %s (a full disk or "
                       "a file-size limit)",
                       final, size, why);
}

/* Checks the figure in `tmp` (format `fmt`) as sim_plot_commit says, fsyncs it. */
static int check_figure(const char *tmp, const char *final, sim_plot_format fmt, sim_err *err)
{
    int fd = open(tmp, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK); /* never through a link */
    if (fd < 0 && errno == ENOENT)
        return sim_err_set(err, SIM_EIO, NULL, "cannot write %s: gnuplot wrote nothing to %s",
                           final, tmp);
    if (fd < 0)
        return sim_err_set(err, SIM_EIO, NULL, "cannot read back %s: %s", tmp, strerror(errno));
    struct stat st;
    unsigned char *data = NULL;
    int rc = SIM_OK, e = fstat(fd, &st) != 0 ? errno : 0;
    if (e != 0)
        rc = sim_err_set(err, SIM_EIO, NULL, "cannot read back %s: %s", tmp, strerror(e));
    else if (!S_ISREG(st.st_mode) || st.st_nlink != 1) /* replaced while gnuplot drew */
        rc = sim_err_set(err, SIM_EIO, NULL, "cannot write %s: %s is no longer a file of its own",
                         final, tmp);
    else if (st.st_size == 0)
        rc = sim_err_set(err, SIM_EIO, NULL, "cannot write %s: gnuplot wrote nothing to %s", final,
                         tmp);
    else if (st.st_size > MAX_FIGURE_BYTES)
        rc = sim_err_set(err, SIM_EIO, NULL, "cannot write %s: %lld bytes, more than a figure has",
                         final, (long long)st.st_size);
    else if ((e = read_all(fd, (size_t)st.st_size, &data)) == ENOMEM)
        rc = sim_err_set(err, SIM_ENOMEM, NULL, "out of memory");
    else if (e == EIO)
        rc = sim_err_set(err, SIM_EIO, NULL, "cannot write %s: its size changed while checked",
                         final);
    else if (e != 0)
        rc = sim_err_set(err, SIM_EIO, NULL, "cannot read back %s: %s", tmp, strerror(e));
    const char *why = NULL;
    if (rc == SIM_OK && !sim_plot_whole(fmt, data, (size_t)st.st_size, &why))
        rc = not_whole(final, tmp, fmt, (long long)st.st_size, why, err);
    /* fsync through a read-only descriptor is fine on Linux; it reports write-back errors. */
    if (rc == SIM_OK && fsync(fd) != 0)
        rc = sim_err_set(err, SIM_EIO, NULL, "cannot write %s: %s", final, strerror(errno));
    free(data);
    close(fd);
    return rc;
}

int sim_plot_commit(const char *tmp, const char *final, sim_err *err)
{
    sim_plot_format fmt = sim_plot_format_of(final);
    int rc = fmt == SIM_PLOT_UNKNOWN
                 ? sim_err_set(err, SIM_EINVAL, NULL,
                               "%s: no known figure format (the name must end in .png, .pdf or "
                               ".svg)",
                               final)
                 : check_figure(tmp, final, fmt, err);
    if (rc == SIM_OK && rename(tmp, final) != 0)
        rc = sim_err_set(err, SIM_EIO, NULL, "cannot rename %s to %s: %s", tmp, final,
                         strerror(errno));
    if (rc != SIM_OK)
        remove(tmp);
    return rc;
}
