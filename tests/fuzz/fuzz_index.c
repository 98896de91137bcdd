/* libFuzzer target: the reader of a sweep's index.csv (app/index.c over the strict reader of
 * results files, outputs/csv.h), which `hetsim report` and `hetsim plot SWEEP_DIR --by` run on
 * whatever directory they are given: the header (point, dir, the swept keys, seed,
 * stop_reason, ...), quoted fields with "" escapes, line ends, blank lines, rows whose field
 * count is not the header's, numbers out of range, repeated points; then what the commands
 * ask of an index (the key columns and their list, a column by name, every cell, whether a
 * row has results). Nothing is run and no run directory is read (fuzz_results reads them).
 *
 * Input: the bytes of index.csv, written as index.csv in a scratch directory.
 *
 * Checked beyond the sanitizers: an index that loads has the header's shape (at least four
 * columns, point and dir first, seed followed by stop_reason), every row's dir is a plain
 * name, every cell of every row is a string cut from the file's bytes, and every key resolves to a
 * key column (but one named point or dir); a refused one has an error that names the index file and
 * says what is wrong, and leaves the index zeroed. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app/index.h"
#include "fuzz_util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *file = fuzz_dir_file("index.csv", data, size);
    char dir[512];
    snprintf(dir, sizeof(dir), "%.*s", (int)(strrchr(file, '/') - file), file);
    app_index ix;
    sim_err err;
    sim_err_clear(&err);
    if (app_index_read(dir, &ix, &err) != SIM_OK) {
        if (err.code == 0 || err.msg[0] == '\0' ||
            (err.code != SIM_ENOMEM && strstr(err.msg, "index.csv") == NULL))
            abort();
        if (ix.csv.text != NULL || ix.csv.cell != NULL || ix.csv.head != NULL || ix.csv.nrows != 0)
            abort();
        return 0;
    }
    const sim_csv *t = &ix.csv;
    if (t->ncols < 4 || strcmp(t->head[0], "point") != 0 || strcmp(t->head[1], "dir") != 0 ||
        strcmp(t->head[ix.nkeys + 2], "seed") != 0 ||
        strcmp(t->head[ix.nkeys + 3], "stop_reason") != 0)
        abort();
    size_t bytes = 0;
    for (size_t r = 0; r < t->nrows; r++) {
        const char *run = app_index_cell(&ix, r, 1);
        if (run[0] == '\0' || strchr(run, '/') != NULL || strcmp(run, "..") == 0)
            abort(); /* a row's run directory is a plain name in the sweep's */
        for (size_t c = 0; c < t->ncols; c++)
            bytes += strlen(app_index_cell(&ix, r, c)); /* each a NUL-terminated string */
        (void)app_index_has_results(&ix, r);
    }
    if (bytes > size)
        abort(); /* cells are cut from the file's bytes: never more than it has */
    char keys[1024];
    app_index_keys(&ix, keys, sizeof(keys));
    int col = -1;
    for (size_t c = 2; c < ix.nkeys + 3; c++) {
        if (app_index_column(&ix, t->head[c]) < 0)
            abort();
        /* A key named twice resolves to its first column, a key column too, unless that is
         * point or dir. */
        int rc = app_index_key_column(&ix, t->head[c], &col, &err);
        if (rc == SIM_OK ? col < 2 || (size_t)col > ix.nkeys + 2
                         : strcmp(t->head[c], "point") != 0 && strcmp(t->head[c], "dir") != 0)
            abort();
    }
    if (app_index_key_column(&ix, "point", &col, &err) == SIM_OK ||
        strstr(err.msg, "no column") == NULL)
        abort();
    app_index_fini(&ix);
    return 0;
}
