/* Random streams: derivation known answers, distinctness, independence of streams. */
#include <stdlib.h>

#include <check.h>
#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>

#include "sim/err.h"
#include "sim/rng.h"
#include "suite.h"

/* SplitMix64 worked out independently (Python, 64-bit wrap-around) for root 7:
 * z = splitmix64(7); mixed = z ^ (stream * 0xd1b54a32d192ed03); seed = fold(splitmix64(mixed)). */
START_TEST(rng_seed_derivation_matches_known_answers)
{
    ck_assert_uint_eq(sim_rng_seed(7, 0), 0xc61f0cd2u);
    ck_assert_uint_eq(sim_rng_seed(7, 16), 0xc25693bbu);
    ck_assert_uint_eq(sim_rng_seed(2385, 3), 0x66732626u);
}
END_TEST

START_TEST(rng_seeds_are_never_zero_and_depend_on_both_inputs)
{
    for (uint64_t root = 0; root < 50; root++)
        for (uint64_t s = 0; s < 200; s++) {
            ck_assert_uint_ne(sim_rng_seed(root, s), 0);
            ck_assert_uint_ne(sim_rng_seed(root, s), sim_rng_seed(root, s + 1));
            ck_assert_uint_ne(sim_rng_seed(root, s), sim_rng_seed(root + 1, s));
        }
}
END_TEST

/* 300000 streams: with 32-bit seeds about ten birthday collisions are expected among them
 * (n^2 / 2^33), so this exercises the re-mixing that keeps the seeds distinct. */
static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

START_TEST(rng_derived_seeds_are_distinct_for_many_streams)
{
    size_t n = 300000;
    uint32_t *seeds = malloc(n * sizeof(*seeds));
    ck_assert_int_eq(sim_rng_derive(42, n, seeds), 0);
    size_t remixed = 0;
    for (size_t i = 0; i < n; i++)
        remixed += seeds[i] != sim_rng_seed(42, i);
    ck_assert_uint_gt(remixed, 0);
    ck_assert_uint_lt(remixed, 100);
    qsort(seeds, n, sizeof(*seeds), cmp_u32);
    for (size_t i = 1; i < n; i++)
        ck_assert_uint_ne(seeds[i], seeds[i - 1]);
    ck_assert_uint_ne(seeds[0], 0);
    free(seeds);
}
END_TEST

START_TEST(rng_derivation_is_stable_and_prefix_consistent)
{
    uint32_t a[64], b[1000];
    sim_rng_derive(2385, 64, a);
    sim_rng_derive(2385, 1000, b);
    for (size_t i = 0; i < 64; i++)
        ck_assert_uint_eq(a[i], b[i]);
}
END_TEST

START_TEST(rng_streams_are_mt19937_with_the_derived_seed)
{
    gsl_rng *r = sim_rng_create(sim_rng_seed(7, 16));
    gsl_rng *ref = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(ref, 0xc25693bbu);
    ck_assert_str_eq(gsl_rng_name(r), "mt19937");
    for (int i = 0; i < 100; i++)
        ck_assert_uint_eq(gsl_rng_get(r), gsl_rng_get(ref));
    gsl_rng_free(r);
    gsl_rng_free(ref);
}
END_TEST

/* The compact streams of sim_rng_array_create draw what GSL's mt19937 draws with the same
 * seed, through every kind of call the simulator makes, across several twists of the 624
 * words, with the streams of the array interleaved (seed 0 is GSL's 4357). */
START_TEST(rng_array_streams_draw_exactly_what_gsl_mt19937_draws)
{
    const uint32_t seeds[] = { 0, 1, 4357, 2385, 0xc25693bbu, 0xffffffffu, 0x80000000u };
    const size_t n = sizeof(seeds) / sizeof(seeds[0]);
    sim_rng_array arr;
    ck_assert_int_eq(sim_rng_array_create(&arr, n, seeds), SIM_OK);
    gsl_rng *ref[sizeof(seeds) / sizeof(seeds[0])];
    for (size_t i = 0; i < n; i++) {
        ref[i] = gsl_rng_alloc(gsl_rng_mt19937);
        gsl_rng_set(ref[i], seeds[i]);
        ck_assert_str_eq(gsl_rng_name(sim_rng_array_at(&arr, i)), "mt19937");
        ck_assert_uint_eq(gsl_rng_max(sim_rng_array_at(&arr, i)), gsl_rng_max(ref[i]));
        ck_assert_uint_eq(gsl_rng_min(sim_rng_array_at(&arr, i)), gsl_rng_min(ref[i]));
    }
    for (int round = 0; round < 700; round++) {
        for (size_t i = 0; i < n; i++) {
            gsl_rng *a = sim_rng_array_at(&arr, i), *b = ref[i];
            switch ((round + (int)i) % 6) {
            case 0:
                ck_assert_uint_eq(gsl_rng_get(a), gsl_rng_get(b));
                break;
            case 1:
                ck_assert(gsl_rng_uniform(a) == gsl_rng_uniform(b));
                break;
            case 2:
                ck_assert(gsl_rng_uniform_pos(a) == gsl_rng_uniform_pos(b));
                break;
            case 3:
                ck_assert_uint_eq(gsl_rng_uniform_int(a, 1000003), gsl_rng_uniform_int(b, 1000003));
                break;
            case 4:
                ck_assert(gsl_ran_lognormal(a, 0.0, 0.1) == gsl_ran_lognormal(b, 0.0, 0.1));
                break;
            default:
                ck_assert(gsl_ran_gaussian(a, 2.385) == gsl_ran_gaussian(b, 2.385));
                break;
            }
        }
    }
    for (size_t i = 0; i < n; i++)
        gsl_rng_free(ref[i]);
    sim_rng_array_destroy(&arr);
    ck_assert_ptr_null(arr.base);
    sim_rng_array_destroy(&arr);
}
END_TEST

Suite *test_suite(void)
{
    Suite *s = suite_create("rng");
    TCase *tc = tcase_create("derivation");
    tcase_add_test(tc, rng_seed_derivation_matches_known_answers);
    tcase_add_test(tc, rng_seeds_are_never_zero_and_depend_on_both_inputs);
    tcase_add_test(tc, rng_derived_seeds_are_distinct_for_many_streams);
    tcase_add_test(tc, rng_derivation_is_stable_and_prefix_consistent);
    tcase_add_test(tc, rng_streams_are_mt19937_with_the_derived_seed);
    tcase_add_test(tc, rng_array_streams_draw_exactly_what_gsl_mt19937_draws);
    tcase_set_timeout(tc, 30);
    suite_add_tcase(s, tc);
    return s;
}
