/* Random streams derived from the scenario seed.
 *
 * Every stream is a gsl_rng_mt19937 seeded with a 32-bit value derived from the scenario's
 * root seed and a stream id by SplitMix64. Stream ids are fixed: a few for the network,
 * data partition, model initialization and straggler selection, then one per worker
 * (SIM_STREAM_WORKER + w). mt19937 uses only 32 bits of its seed and treats 0 as 4357, so
 * derived seeds are never 0 and, within one run, never equal: sim_rng_derive re-mixes a
 * seed that collides with an earlier stream's.
 */
#ifndef SIM_RNG_H
#define SIM_RNG_H

#include <stddef.h>
#include <stdint.h>

#include <gsl/gsl_rng.h>

enum sim_stream {
    SIM_STREAM_NET = 0,       /* network draws */
    SIM_STREAM_DATA = 1,      /* data set generation and partition */
    SIM_STREAM_INIT = 2,      /* model initialization */
    SIM_STREAM_STRAGGLER = 3, /* choosing straggler workers by count */
    SIM_STREAM_PROTO = 4,     /* protocol-wide draws (group generators and the like) */
    SIM_STREAM_WORKER = 16    /* worker w uses SIM_STREAM_WORKER + w */
};

/* SplitMix64 of root mixed with stream_id, folded to 32 bits, never 0. */
uint32_t sim_rng_seed(uint64_t root, uint64_t stream_id);

/* Fills seeds[i] for stream ids 0..n-1: sim_rng_seed, re-mixed while it equals 0 or the
 * seed of a lower stream id, so that all n are distinct. Returns 0 or SIM_ENOMEM. */
int sim_rng_derive(uint64_t root, size_t n, uint32_t *seeds);

/* A new mt19937 stream seeded with `seed`, or NULL when out of memory. Free with
 * gsl_rng_free. */
gsl_rng *sim_rng_create(uint32_t seed);

/* n streams in one allocation, stream i seeded with seeds[i]: sim_rng_array_at(arr, i) is a
 * gsl_rng that draws exactly the numbers of sim_rng_create(seeds[i]) (the same mt19937,
 * through GSL's interface) in half its memory (32-bit words, no second allocation), laid out
 * so that a draw touches as few cache lines as it can, and seeded only when first drawn from.
 * Never gsl_rng_free, gsl_rng_clone or gsl_rng_memcpy a stream of the array. */
typedef struct sim_rng_array {
    unsigned char *base; /* the streams' blocks, or NULL */
} sim_rng_array;

/* Fills *arr (its old contents are not freed). Returns 0, or SIM_ENOMEM with *arr empty. */
int sim_rng_array_create(sim_rng_array *arr, size_t n, const uint32_t *seeds);

/* Stream i (< n) of the array. */
gsl_rng *sim_rng_array_at(const sim_rng_array *arr, size_t i);

/* Frees the streams and empties *arr; an empty one is a no-op. */
void sim_rng_array_destroy(sim_rng_array *arr);

#endif
