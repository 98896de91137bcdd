/* The fuzz targets' inputs replayed without libFuzzer: a main for the targets in tests/fuzz
 * when they are built by gcc as ordinary tests (the build without -Dfuzz). Each argument is an
 * input file, or a folder whose regular files are inputs (in name order, not recursive); each
 * input goes once through the target's LLVMFuzzerTestOneInput, whose own checks abort on a
 * finding, and the sanitizers of the build report what they find. So every build links the
 * targets (a target that no longer links fails here, not first in the fuzz stage) and replays
 * the inputs that once found a bug (tests/fuzz/regressions/TARGET) and the repository's own
 * files of the target's kind.
 *
 * Usage: fuzz_TARGET_replay PATH...   (exit 0 when every input went through; 1 when a path
 * cannot be read or names no input at all) */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int replay_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        perror(path);
        return -1;
    }
    size_t cap = 4096, size = 0;
    uint8_t *data = malloc(cap);
    size_t got;
    while (data != NULL && (got = fread(data + size, 1, cap - size, f)) > 0) {
        size += got;
        if (size == cap) {
            uint8_t *grown = realloc(data, cap * 2);
            if (grown == NULL)
                free(data);
            data = grown;
            cap *= 2;
        }
    }
    int failed = data == NULL || ferror(f);
    fclose(f);
    if (failed) {
        fprintf(stderr, "%s: cannot be read\n", path);
        free(data);
        return -1;
    }
    /* In an allocation of exactly its size, as libFuzzer passes it: a read past the input's
     * end is then past the allocation, which AddressSanitizer reports. */
    uint8_t *exact = malloc(size > 0 ? size : 1);
    if (exact == NULL) {
        fprintf(stderr, "%s: out of memory\n", path);
        free(data);
        return -1;
    }
    memcpy(exact, data, size);
    free(data);
    LLVMFuzzerTestOneInput(exact, size);
    free(exact);
    return 0;
}

/* Replays the regular files of folder `dir` in name order; returns how many, or -1. */
static long replay_dir(const char *dir)
{
    struct dirent **names;
    int n = scandir(dir, &names, NULL, alphasort);
    if (n < 0) {
        perror(dir);
        return -1;
    }
    long count = 0;
    for (int i = 0; i < n; i++) {
        char path[4096];
        struct stat st;
        int len = snprintf(path, sizeof(path), "%s/%s", dir, names[i]->d_name);
        if (len > 0 && (size_t)len < sizeof(path) && stat(path, &st) == 0 && S_ISREG(st.st_mode)) {
            if (replay_file(path) != 0)
                count = -1;
            else if (count >= 0)
                count++;
        }
        free(names[i]);
    }
    free(names);
    return count;
}

int main(int argc, char **argv)
{
    long inputs = 0;
    for (int i = 1; i < argc; i++) {
        struct stat st;
        if (stat(argv[i], &st) != 0) {
            perror(argv[i]);
            return 1;
        }
        long n = S_ISDIR(st.st_mode) ? replay_dir(argv[i]) : replay_file(argv[i]) == 0 ? 1 : -1;
        if (n < 0)
            return 1;
        inputs += n;
    }
    printf("%ld inputs replayed\n", inputs);
    return inputs > 0 ? 0 : 1;
}
