#include "fuzz_util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define DIR_FILES 8

static char paths[4][256];
static char dir[256], dir_files[DIR_FILES][320], subdirs[DIR_FILES][320];

static void remove_files(void)
{
    for (int i = 0; i < 4; i++)
        if (paths[i][0] != '\0')
            unlink(paths[i]);
    for (int i = 0; i < DIR_FILES; i++)
        if (dir_files[i][0] != '\0')
            unlink(dir_files[i]);
    for (int i = 0; i < DIR_FILES; i++)
        if (subdirs[i][0] != '\0')
            rmdir(subdirs[i]);
    if (dir[0] != '\0')
        rmdir(dir);
}

/* Makes the folder of `path` (under the scratch directory) if it is not the scratch
 * directory itself, and notes it for removal. */
static void make_subdir(const char *path)
{
    char sub[320];
    snprintf(sub, sizeof(sub), "%s", path);
    *strrchr(sub, '/') = '\0';
    if (strcmp(sub, dir) == 0)
        return;
    int i = 0;
    while (i < DIR_FILES && subdirs[i][0] != '\0' && strcmp(subdirs[i], sub) != 0)
        i++;
    if (i == DIR_FILES)
        abort();
    memcpy(subdirs[i], sub, sizeof(sub));
    if (mkdir(sub, 0700) != 0 && errno != EEXIST)
        abort();
}

static const char *tmp_dir(void)
{
    const char *tmp = getenv("TMPDIR");
    return tmp != NULL && tmp[0] != '\0' ? tmp : "/tmp";
}

static void register_cleanup(void)
{
    static int registered;
    if (!registered && atexit(remove_files) == 0)
        registered = 1;
}

const char *fuzz_file(int slot, const uint8_t *data, size_t size)
{
    if (paths[slot][0] == '\0') {
        snprintf(paths[slot], sizeof(paths[slot]), "%s/hetsim-fuzz-%ld-%d", tmp_dir(),
                 (long)getpid(), slot);
        register_cleanup();
    }
    FILE *f = fopen(paths[slot], "wb");
    if (f == NULL || (size > 0 && fwrite(data, 1, size, f) != size) || fclose(f) != 0)
        abort();
    return paths[slot];
}

const char *fuzz_dir_file(const char *name, const uint8_t *data, size_t size)
{
    if (dir[0] == '\0') {
        snprintf(dir, sizeof(dir), "%s/hetsim-fuzz-%ld.d", tmp_dir(), (long)getpid());
        if (mkdir(dir, 0700) != 0 && errno != EEXIST)
            abort();
        register_cleanup();
    }
    int i = 0;
    char path[320];
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    while (i < DIR_FILES && dir_files[i][0] != '\0' && strcmp(dir_files[i], path) != 0)
        i++;
    if (i == DIR_FILES)
        abort(); /* more names than the harness keeps */
    memcpy(dir_files[i], path, sizeof(path));
    make_subdir(path);
    if (data == NULL) {
        if (unlink(path) != 0 && errno != ENOENT)
            abort();
        return dir_files[i];
    }
    FILE *f = fopen(path, "wb");
    if (f == NULL || (size > 0 && fwrite(data, 1, size, f) != size) || fclose(f) != 0)
        abort();
    return dir_files[i];
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
