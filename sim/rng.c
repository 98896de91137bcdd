#include "sim/rng.h"

#include <stdlib.h>
#include <string.h>

#include "sim/err.h"

static uint64_t splitmix64(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static uint32_t fold(uint64_t z)
{
    return (uint32_t)(z ^ (z >> 32));
}

uint32_t sim_rng_seed(uint64_t root, uint64_t stream_id)
{
    uint64_t state = root;
    uint64_t mixed = splitmix64(&state) ^ (stream_id * 0xd1b54a32d192ed03ULL);
    uint32_t seed = fold(splitmix64(&mixed));
    while (seed == 0)
        seed = fold(splitmix64(&mixed));
    return seed;
}

/* Open-addressing set of 32-bit seeds (0 marks an empty slot: seeds are never 0). */
typedef struct seed_set {
    uint32_t *slot;
    size_t mask;
} seed_set;

static int set_insert(seed_set *s, uint32_t seed)
{
    size_t i = (size_t)(seed * 0x9e3779b1u) & s->mask;
    while (s->slot[i] != 0) {
        if (s->slot[i] == seed)
            return 0;
        i = (i + 1) & s->mask;
    }
    s->slot[i] = seed;
    return 1;
}

int sim_rng_derive(uint64_t root, size_t n, uint32_t *seeds)
{
    size_t cap = 16;
    while (cap < 2 * n)
        cap *= 2;
    seed_set set = { calloc(cap, sizeof(uint32_t)), cap - 1 };
    if (set.slot == NULL)
        return SIM_ENOMEM;
    for (size_t i = 0; i < n; i++) {
        uint32_t seed = sim_rng_seed(root, i);
        uint64_t state = ((uint64_t)seed << 32) | i;
        while (!set_insert(&set, seed)) {
            do
                seed = fold(splitmix64(&state));
            while (seed == 0);
        }
        seeds[i] = seed;
    }
    free(set.slot);
    return SIM_OK;
}

gsl_rng *sim_rng_create(uint32_t seed)
{
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    if (r != NULL)
        gsl_rng_set(r, seed);
    return r;
}
