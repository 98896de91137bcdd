#define _DEFAULT_SOURCE /* madvise and MADV_HUGEPAGE */
#include "sim/rng.h"

#include <stdlib.h>
#include <sys/mman.h>

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

/* ---- compact mt19937 streams ----
 *
 * The generator of GSL's mt.c (Matsumoto and Nishimura's MT19937 with the 2002 seeding),
 * word for word, on 32-bit words: GSL keeps its 624 words in unsigned longs (5 kB a stream
 * on LP64, plus a second allocation); a run of 1e6 workers has 1e6 streams. Every value is
 * below 2^32 in both, and the tempering masks clear what a 64-bit shift would carry, so the
 * outputs are equal (tests/test_rng.c checks them against gsl_rng_mt19937). */

enum {
    MT_N = 624,
    MT_M = 397,
    MT_UNSEEDED = MT_N + 1 /* mti of a stream whose words are not yet derived from `seed` */
};

typedef struct mt_state {
    uint32_t mti;      /* next word to temper; MT_N: twist first; MT_UNSEEDED: seed first */
    uint32_t seed;     /* the first word: set's seed, or 4357 for 0 (as in GSL) */
    uint32_t mt[MT_N]; /* the generator's words */
} mt_state;

static void mt_seed_words(mt_state *st)
{
    st->mt[0] = st->seed;
    for (uint32_t i = 1; i < MT_N; i++)
        st->mt[i] = 1812433253u * (st->mt[i - 1] ^ (st->mt[i - 1] >> 30)) + i;
}

static inline uint32_t mt_magic(uint32_t y)
{
    return (y & 1u) != 0 ? 0x9908b0dfu : 0u;
}

static void mt_twist(uint32_t *mt)
{
    const uint32_t upper = 0x80000000u, lower = 0x7fffffffu;
    int kk;
    for (kk = 0; kk < MT_N - MT_M; kk++) {
        uint32_t y = (mt[kk] & upper) | (mt[kk + 1] & lower);
        mt[kk] = mt[kk + MT_M] ^ (y >> 1) ^ mt_magic(y);
    }
    for (; kk < MT_N - 1; kk++) {
        uint32_t y = (mt[kk] & upper) | (mt[kk + 1] & lower);
        mt[kk] = mt[kk + (MT_M - MT_N)] ^ (y >> 1) ^ mt_magic(y);
    }
    uint32_t y = (mt[MT_N - 1] & upper) | (mt[0] & lower);
    mt[MT_N - 1] = mt[MT_M - 1] ^ (y >> 1) ^ mt_magic(y);
}

static unsigned long mt_get(void *vstate)
{
    mt_state *st = vstate;
    if (st->mti >= MT_N) {
        /* Seeding waits for the first draw, when the words are about to be twisted: one
         * pass over them while they are in cache, and none for a stream never drawn from. */
        if (st->mti == MT_UNSEEDED)
            mt_seed_words(st);
        mt_twist(st->mt);
        st->mti = 0;
    }
    uint32_t k = st->mt[st->mti++];
    k ^= k >> 11;
    k ^= (k << 7) & 0x9d2c5680u;
    k ^= (k << 15) & 0xefc60000u;
    k ^= k >> 18;
    return k;
}

static double mt_get_double(void *vstate)
{
    return (double)mt_get(vstate) / 4294967296.0;
}

static void mt_set(void *vstate, unsigned long s)
{
    mt_state *st = vstate;
    st->seed = s != 0 ? (uint32_t)s : 4357u; /* GSL: s & 0xffffffff, after 0 -> 4357 */
    st->mti = MT_UNSEEDED;
}

static const gsl_rng_type mt19937_compact = {
    .name = "mt19937",
    .max = 0xffffffffUL,
    .min = 0,
    .size = sizeof(mt_state),
    .set = mt_set,
    .get = mt_get,
    .get_double = mt_get_double,
};

/* Each stream's block: its gsl_rng, then its state, padded to whole cache lines, so that a
 * draw's pointer, index and first words share a line. */
typedef struct mt_block {
    gsl_rng rng;
    mt_state st;
} mt_block;

enum {
    LINE = 64,
    HUGE_PAGE = 2u << 20, /* blocks of this size or more ask for transparent huge pages */
    BLOCK = (sizeof(mt_block) + LINE - 1) / LINE * LINE
};

int sim_rng_array_create(sim_rng_array *arr, size_t n, const uint32_t *seeds)
{
    size_t count = n > 0 ? n : 1;
    arr->base = NULL;
    if (count > SIZE_MAX / BLOCK)
        return SIM_ENOMEM;
    size_t bytes = count * BLOCK;
    /* A run of many workers draws from streams all over the block: huge pages spare the TLB a
     * miss per draw. The kernel may refuse (the advice is then ignored). */
    size_t align = bytes >= HUGE_PAGE ? HUGE_PAGE : LINE;
    void *mem = NULL;
    if (posix_memalign(&mem, align, bytes) != 0)
        return SIM_ENOMEM;
    if (align == HUGE_PAGE)
        (void)madvise(mem, bytes, MADV_HUGEPAGE);
    arr->base = mem;
    for (size_t i = 0; i < n; i++) {
        mt_block *b = (mt_block *)(void *)(arr->base + i * BLOCK);
        b->rng.type = &mt19937_compact;
        b->rng.state = &b->st;
        mt_set(&b->st, seeds[i]);
    }
    return SIM_OK;
}

gsl_rng *sim_rng_array_at(const sim_rng_array *arr, size_t i)
{
    return (gsl_rng *)(void *)(arr->base + i * BLOCK);
}

void sim_rng_array_destroy(sim_rng_array *arr)
{
    free(arr->base);
    arr->base = NULL;
}
