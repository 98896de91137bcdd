/* The cap of a text input and the reader of a text file whole (sim/file.h). */
#include "sim/file.h"

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "sim/fnv.h"

static uint64_t cap_bytes; /* 0 until read (atomically: any thread may be first) */
static char cap_text[160];

uint64_t sim_file_text_cap(void)
{
    uint64_t cap = __atomic_load_n(&cap_bytes, __ATOMIC_ACQUIRE);
    if (cap != 0)
        return cap;
    cap = SIM_FILE_TEXT_CAP;
    const char *v = getenv(SIM_FILE_TEXT_CAP_ENV);
    if (v != NULL && v[0] != '\0' && strspn(v, "0123456789") == strlen(v) && strlen(v) <= 10) {
        uint64_t x = strtoull(v, NULL, 10);
        cap = x >= 1 && x <= SIM_FILE_TEXT_CAP ? x : cap;
    }
    char text[32];
    if (cap % SIM_FILE_TEXT_CAP == 0)
        snprintf(text, sizeof(text), "%" PRIu64 " GiB", cap / SIM_FILE_TEXT_CAP);
    else
        snprintf(text, sizeof(text), "%" PRIu64 " bytes", cap);
    /* Two threads write the same bytes; the cap is published after its text. */
    snprintf(cap_text, sizeof(cap_text),
             "larger than %s, the limit of a text input (a FIFO or a device that never ends?)",
             text);
    __atomic_store_n(&cap_bytes, cap, __ATOMIC_RELEASE);
    return cap;
}

const char *sim_file_cap_text(void)
{
    sim_file_text_cap();
    return cap_text;
}

const char *sim_file_strerror(int e)
{
    return e == EFBIG ? sim_file_cap_text() : strerror(e);
}

int sim_file_read_all(FILE *f, char **out, size_t *len)
{
    uint64_t limit = sim_file_text_cap();
    size_t cap = 4096, n = 0;
    char *buf = malloc(cap);
    int rc = 0;
    *out = NULL;
    *len = 0;
    errno = 0;
    while (buf != NULL) {
        size_t got = fread(buf + n, 1, cap - n - 1, f);
        n += got;
        if (n < cap - 1 || memchr(buf + n - got, '\0', got) != NULL)
            break; /* the end, an error, or a NUL byte: no text file of hetsim's holds one */
        if (n > limit) {
            rc = EFBIG;
            break;
        }
        /* Room for one byte past the cap (which refuses the file) and the zero, no more. */
        size_t bigger = cap <= SIZE_MAX / 2 ? 2 * cap : SIZE_MAX;
        bigger = bigger - 2 > limit ? (size_t)limit + 2 : bigger;
        char *b = realloc(buf, bigger);
        if (b == NULL)
            free(buf);
        buf = b;
        cap = bigger;
    }
    if (buf == NULL)
        return ENOMEM;
    if (rc == 0 && n > limit) /* a cap below the first block */
        rc = EFBIG;
    if (rc == 0 && ferror(f))
        rc = errno != 0 ? errno : EIO;
    if (rc != 0) {
        free(buf);
        return rc;
    }
    buf[n] = '\0';
    *out = buf;
    *len = n;
    return 0;
}

int sim_file_read_sized(FILE *f, char **out, size_t *len)
{
    struct stat st;
    if (fstat(fileno(f), &st) != 0 || !S_ISREG(st.st_mode))
        return sim_file_read_all(f, out, len);
    *out = NULL;
    *len = 0;
    uint64_t size = st.st_size > 0 ? (uint64_t)st.st_size : 0;
    char *buf = size < SIZE_MAX ? malloc((size_t)size + 1) : NULL;
    if (buf == NULL)
        return ENOMEM;
    size_t n = 0;
    errno = 0;
    /* In blocks, to stop at a NUL byte (no text file of hetsim's holds one) and touch only the
     * pages read; never past the size at open (a file that grows is read as it was). */
    while (n < size) {
        size_t want = size - n < SIM_FILE_LINES_BLOCK ? (size_t)(size - n) : SIM_FILE_LINES_BLOCK;
        size_t got = fread(buf + n, 1, want, f);
        n += got;
        if (got < want || memchr(buf + n - got, '\0', got) != NULL)
            break;
    }
    if (ferror(f)) {
        int e = errno != 0 ? errno : EIO;
        free(buf);
        return e;
    }
    buf[n] = '\0';
    *out = buf;
    *len = n;
    return 0;
}

void sim_file_lines_init(sim_file_lines *r, FILE *fp, int hash)
{
    r->fp = fp;
    r->bytes = 0;
    r->cap = sim_file_text_cap();
    r->fnv = SIM_FNV_FILE_OFFSET;
    r->hash = hash;
    r->at = r->end = 0;
}

/* Takes the n bytes at p: counted and hashed. */
static void take(sim_file_lines *r, const char *p, size_t n)
{
    r->bytes += n;
    if (r->hash)
        r->fnv = sim_fnv_bytes(r->fnv, p, n);
    r->at += n;
}

/* Whether a byte is there to take: refills the block when it is empty; false at the end. */
static bool more(sim_file_lines *r)
{
    if (r->at < r->end)
        return true;
    r->at = 0;
    r->end = fread(r->block, 1, sizeof(r->block), r->fp);
    return r->end > 0;
}

size_t sim_file_lines_skip_empty(sim_file_lines *r)
{
    size_t n = 0;
    while (more(r) && r->bytes < r->cap) {
        const char *p = r->block + r->at;
        size_t m = r->end - r->at, k = 0;
        m = m > r->cap - r->bytes ? (size_t)(r->cap - r->bytes) : m;
        while (k < m && p[k] == '\n')
            k++;
        take(r, p, k);
        n += k;
        if (k < m)
            break;
    }
    return n;
}

int sim_file_lines_next(sim_file_lines *r, char *buf, size_t room, size_t *len, int *newline)
{
    size_t l = 0;
    *newline = 0;
    for (;;) {
        if (!more(r))
            break; /* the end, or a read error (ferror) */
        if (r->bytes >= r->cap)
            return SIM_LINE_CAP; /* a byte past the cap */
        const unsigned char *p = (const unsigned char *)r->block + r->at;
        size_t n = r->end - r->at, free_room = room - 1 - l;
        n = n > r->cap - r->bytes ? (size_t)(r->cap - r->bytes) : n;
        /* The bytes of the line that fit, copied and hashed in one pass (short lines: no call). */
        size_t lim = n < free_room ? n : free_room, i = 0;
        if (r->hash) {
            uint64_t h = r->fnv;
            for (; i < lim && p[i] != '\n' && p[i] != '\0'; i++) {
                h = sim_fnv_byte(h, p[i]);
                buf[l + i] = (char)p[i];
            }
            r->fnv = h;
        } else {
            for (; i < lim && p[i] != '\n' && p[i] != '\0'; i++)
                buf[l + i] = (char)p[i];
        }
        r->bytes += i;
        r->at += i;
        l += i;
        if (i == n)
            continue; /* the block's end (or the cap's): more */
        unsigned char c = p[i];
        take(r, (const char *)p + i, 1);
        if (c == '\n') {
            *newline = 1;
            break;
        }
        if (c != '\0')
            return SIM_LINE_LONG; /* the byte after the room */
        buf[l] = '\0';
        *len = l; /* the bytes before the NUL: a UTF-16 mark is told apart (sim_text_wide) */
        return SIM_LINE_NUL;
    }
    buf[l] = '\0';
    *len = l;
    return l > 0 || *newline ? SIM_LINE_OK : SIM_LINE_END;
}

/* ".." stays: what it means depends on links (sim_rundir_follow). An output named "A/." is
 * A itself, not a place inside it (nor has it the work directory "A/..partial"). */
char *sim_file_clean_path(const char *path)
{
    size_t n = strlen(path), len = 0;
    char *s = malloc(n + 2);
    if (s == NULL)
        return NULL;
    if (path[0] == '/')
        s[len++] = '/';
    for (const char *c = path; *c != '\0';) {
        while (*c == '/')
            c++;
        size_t k = strcspn(c, "/");
        if (k == 0 || (k == 1 && c[0] == '.')) {
            c += k;
            continue;
        }
        if (len > 0 && s[len - 1] != '/')
            s[len++] = '/';
        memcpy(s + len, c, k);
        len += k;
        c += k;
    }
    if (len == 0)
        s[len++] = '.';
    s[len] = '\0';
    return s;
}
