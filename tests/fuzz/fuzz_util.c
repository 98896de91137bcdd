#include "fuzz_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char paths[4][256];

static void remove_files(void)
{
    for (int i = 0; i < 4; i++)
        if (paths[i][0] != '\0')
            unlink(paths[i]);
}

const char *fuzz_file(int slot, const uint8_t *data, size_t size)
{
    if (paths[slot][0] == '\0') {
        const char *tmp = getenv("TMPDIR");
        snprintf(paths[slot], sizeof(paths[slot]), "%s/hetsim-fuzz-%ld-%d",
                 tmp != NULL && tmp[0] != '\0' ? tmp : "/tmp", (long)getpid(), slot);
        static int registered;
        if (!registered && atexit(remove_files) == 0)
            registered = 1;
    }
    FILE *f = fopen(paths[slot], "wb");
    if (f == NULL || (size > 0 && fwrite(data, 1, size, f) != size) || fclose(f) != 0)
        abort();
    return paths[slot];
}

const uint8_t *fuzz_split(const uint8_t *data, size_t size, const char *sep, size_t *head,
                          size_t *tail_size)
{
    size_t n = strlen(sep);
    for (size_t i = 0; i + n <= size; i++)
        if (memcmp(data + i, sep, n) == 0) {
            *head = i;
            *tail_size = size - i - n;
            return data + i + n;
        }
    *head = size;
    *tail_size = 0;
    return data + size;
}
