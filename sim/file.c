/* The cap of a text input and the reader of a text file whole (sim/file.h). */
#include "sim/file.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
