/* libFuzzer target: the LIBSVM reader, on the input as a file, with max_features 4096 and
 * every max_samples from the first byte (0..3). */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "fuzz_util.h"
#include "models/data.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fuzz_file(0, data, size);
    size_t max_samples = size > 0 ? data[0] % 4 : 0;
    data_set ds;
    sim_err err;
    if (data_load_libsvm(path, 4096, max_samples, &ds, &err) == SIM_OK) {
        if (ds.n == 0 || ds.dim == 0 || ds.dim > 4096 || ds.classes == 0 ||
            (max_samples > 0 && ds.n > max_samples))
            abort();
        for (size_t i = 0; i < ds.n; i++)
            if (ds.y[i] >= ds.classes)
                abort();
        for (size_t i = 0; i < ds.n * ds.dim; i++)
            if (!isfinite(ds.x[i]))
                abort();
    }
    data_fini(&ds);
    return 0;
}
