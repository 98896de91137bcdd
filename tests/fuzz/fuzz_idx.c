/* libFuzzer target: the IDX reader. Input: the images file, then "\n--labels\n", then the
 * labels file (either may be gzipped or plain); with no separator the labels file is a
 * fixed good one of 5 labels. The first byte of the input also picks max_samples (0..3). */
#include <stdint.h>
#include <stdlib.h>

#include "fuzz_util.h"
#include "models/data.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const uint8_t labels[] = { 0, 0, 8, 1, 0, 0, 0, 5, 7, 2, 9, 0, 4 };
    size_t head = 0, rest = 0;
    const uint8_t *tail = fuzz_split(data, size, "\n--labels\n", &head, &rest);
    const char *images = fuzz_file(0, data, head);
    const char *lab = head < size ? fuzz_file(1, tail, rest) : fuzz_file(1, labels, sizeof(labels));
    size_t max_samples = size > 0 ? data[0] % 4 : 0;
    data_set ds;
    sim_err err;
    if (data_load_idx(images, lab, 10, max_samples, &ds, &err) == SIM_OK) {
        if (ds.n == 0 || ds.dim != (size_t)ds.h * ds.w || (max_samples > 0 && ds.n > max_samples))
            abort();
        for (size_t i = 0; i < ds.n; i++)
            if (ds.y[i] >= 10)
                abort();
    }
    data_fini(&ds);
    return 0;
}
