/* The replicas' blocks (models/replica.h): sharing while equal, the one copy on write for
 * every reference (another worker, a pin, a hold), keyed steps, and a model of zero floats. */
#include <stdint.h>
#include <string.h>

#include <check.h>

#include "models/model.h"
#include "models/replica.h"
#include "sim/tensor.h"

static void fill(float *x, size_t n, float base)
{
    for (size_t i = 0; i < n; i++)
        x[i] = base + 0.125f * (float)i;
}

START_TEST(a_hold_keeps_the_bits_of_its_time_while_its_worker_writes)
{
    const size_t P = 37;
    replica *r = replica_create(3, P, true, true, NULL);
    ck_assert_ptr_nonnull(r);
    ck_assert_uint_eq(replica_blocks_in_use(r), 1);
    replica_own(r, 1); /* worker 1 leaves the shared block */
    fill(replica_params(r, 1), P, 2.385f);
    fill(replica_velocity(r, 1), P, -0.75f);
    ck_assert_uint_eq(replica_blocks_in_use(r), 2);
    uint32_t b;
    ck_assert_int_eq(replica_hold(r, 1, &b, NULL), SIM_OK);
    ck_assert_uint_eq(b, replica_block_of(r, 1));
    float before[37], vel[37];
    memcpy(before, replica_block_params(r, b), sizeof(before));
    memcpy(vel, replica_velocity(r, 1), sizeof(vel));
    /* The write moves worker 1 to a copy; the held block stays as it was. */
    replica_own(r, 1);
    ck_assert_uint_ne(replica_block_of(r, 1), b);
    ck_assert_uint_eq(replica_blocks_in_use(r), 3);
    replica_params(r, 1)[5] = 9.5f;
    ck_assert_int_eq(memcmp(replica_block_params(r, b), before, sizeof(before)), 0);
    ck_assert_int_eq(memcmp(replica_params(r, 1), before, 5 * sizeof(float)), 0);
    /* Only a reader stayed behind: the momentum went along with the worker, unchanged. */
    ck_assert_int_eq(memcmp(replica_velocity(r, 1), vel, sizeof(vel)), 0);
    replica_release(r, b);
    ck_assert_uint_eq(replica_blocks_in_use(r), 2);
    replica_destroy(r);
}
END_TEST

START_TEST(a_write_to_an_unreferenced_block_is_in_place)
{
    replica *r = replica_create(2, 8, false, false, NULL);
    uint32_t b = replica_block_of(r, 0);
    replica_own(r, 0);
    ck_assert_uint_eq(replica_block_of(r, 0), b);
    uint32_t h;
    ck_assert_int_eq(replica_hold(r, 0, &h, NULL), SIM_OK);
    replica_release(r, h);
    replica_own(r, 0); /* the hold went: no copy */
    ck_assert_uint_eq(replica_block_of(r, 0), b);
    ck_assert_uint_eq(replica_blocks_in_use(r), 2);
    replica_destroy(r);
}
END_TEST

START_TEST(holds_grow_the_blocks_so_that_every_write_finds_one)
{
    /* Each of 4 workers is held, written, held again, written again: eight held blocks and
     * four workers' own, more than the four blocks the replicas started with. */
    const size_t P = 5;
    replica *r = replica_create(4, P, false, true, NULL);
    uint32_t held[8];
    size_t n = 0;
    for (int round = 0; round < 2; round++)
        for (uint32_t w = 0; w < 4; w++) {
            ck_assert_int_eq(replica_hold(r, w, &held[n++], NULL), SIM_OK);
            replica_own(r, w);
            replica_params(r, w)[0] = (float)(round * 4 + (int)w);
        }
    ck_assert_uint_eq(replica_blocks_in_use(r), 4 + 4 + 1); /* the first round shared one */
    for (size_t i = 0; i < n; i++)
        replica_release(r, held[i]);
    ck_assert_uint_eq(replica_blocks_in_use(r), 4);
    replica_destroy(r);
}
END_TEST

START_TEST(copies_take_blocks_written_before_never_written_ones)
{
    /* adpsgd's start (issue 26): snapshots of the shared block are sent, and released, before
     * the workers first write. The holds grew the blocks; the workers' copies must still take
     * the blocks replica_create wrote (1..9), not the grown ones, which take no memory until
     * written: else about one block per two workers more was resident than the memory check
     * estimates. */
    enum {
        W = 10
    };
    replica *r = replica_create(W, 6, true, true, NULL);
    ck_assert_uint_eq(replica_blocks_written(r), W);
    uint32_t held[W];
    for (uint32_t w = 0; w < W; w++)
        ck_assert_int_eq(replica_hold(r, w, &held[w], NULL), SIM_OK);
    for (uint32_t w = 0; w < W; w++)
        replica_release(r, held[w]);
    for (uint32_t w = 0; w < W; w++) {
        replica_own(r, w);
        ck_assert_uint_lt(replica_block_of(r, w), W);
    }
    ck_assert_uint_eq(replica_blocks_in_use(r), W);
    ck_assert_uint_eq(replica_blocks_written(r), W);
    /* Snapshots written under, one at a time: each copy reuses the block the last released
     * hold gave back, so one block more is written, however many rounds. */
    for (int round = 0; round < 5; round++)
        for (uint32_t w = 0; w < W; w++) {
            uint32_t b;
            ck_assert_int_eq(replica_hold(r, w, &b, NULL), SIM_OK);
            replica_own(r, w);
            replica_release(r, b);
        }
    ck_assert_uint_eq(replica_blocks_in_use(r), W);
    ck_assert_uint_eq(replica_blocks_written(r), W + 1);
    /* replica_reserve writes as many blocks more, the next that copies take. */
    ck_assert_int_eq(replica_reserve(r, 3, NULL), SIM_OK);
    ck_assert_uint_eq(replica_blocks_written(r), W + 1 + 3);
    replica_destroy(r);
}
END_TEST

START_TEST(a_keyed_step_is_taken_once_per_block_and_followed)
{
    replica *r = replica_create(3, 4, false, true, NULL);
    replica_key k = { .key = 7, .grad = NULL, .lr = 0.25, .momentum = 0.0 };
    ck_assert(!replica_keyed_follow(r, 0, &k));
    replica_keyed_fork(r, 0, &k);
    replica_params(r, 0)[0] = 1.5f; /* the step, on 0's new block */
    ck_assert(replica_keyed_follow(r, 1, &k));
    ck_assert(replica_keyed_follow(r, 2, &k));
    ck_assert_uint_eq(replica_block_of(r, 1), replica_block_of(r, 0));
    ck_assert_uint_eq(replica_block_of(r, 2), replica_block_of(r, 0));
    ck_assert_uint_eq(replica_blocks_in_use(r), 1);
    replica_destroy(r);
}
END_TEST

START_TEST(a_model_of_zero_floats_never_copies)
{
    /* The timing-only model: every block is one empty one, and a write, keyed or not, writes
     * nothing, so nothing is ever copied and every worker stays on its first block. */
    ck_assert_uint_eq(model_none.shape->num_params(NULL), 0);
    replica *r = replica_create(3, 0, true, true, NULL);
    ck_assert_ptr_nonnull(r);
    ck_assert_ptr_nonnull(replica_params(r, 2));
    uint32_t b;
    ck_assert_int_eq(replica_hold(r, 2, &b, NULL), SIM_OK);
    replica_own(r, 2);
    sim_tensor_copy(replica_params(r, 2), replica_block_params(r, b), 0);
    ck_assert_uint_eq(replica_block_of(r, 2), b);
    replica_release(r, b);
    replica_key k = { .key = 3, .lr = 0.5 };
    ck_assert(!replica_keyed_follow(r, 1, &k));
    replica_keyed_fork(r, 1, &k);
    ck_assert_uint_eq(replica_blocks_in_use(r), 1);
    ck_assert_int_eq(replica_allow_pins(r, NULL), SIM_OK);
    uint32_t p = replica_pin(r, 0);
    replica_own(r, 0);
    ck_assert_uint_eq(replica_orphans(r), 0);
    replica_unpin(r, p);
    replica_destroy(r);
}
END_TEST

Suite *test_suite(void);
Suite *test_suite(void)
{
    Suite *s = suite_create("replica");
    TCase *tc = tcase_create("blocks");
    tcase_add_test(tc, a_hold_keeps_the_bits_of_its_time_while_its_worker_writes);
    tcase_add_test(tc, a_write_to_an_unreferenced_block_is_in_place);
    tcase_add_test(tc, holds_grow_the_blocks_so_that_every_write_finds_one);
    tcase_add_test(tc, copies_take_blocks_written_before_never_written_ones);
    tcase_add_test(tc, a_keyed_step_is_taken_once_per_block_and_followed);
    tcase_add_test(tc, a_model_of_zero_floats_never_copies);
    suite_add_tcase(s, tc);
    return s;
}
