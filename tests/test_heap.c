/* The indexed heap (sim/heap.h): order against a sort, positions, the textbook shape, heapsort. */
#include <stdint.h>
#include <stdlib.h>

#include <check.h>

#include "sim/heap.h"
#include "suite.h"

enum {
    N = 500
};

/* Ids 0..N-1 keyed by key[id], ties by id (a total order); positions kept in pos[id]. */
typedef struct keyed {
    double key[N];
    uint32_t pos[N];
    bool in[N];
} keyed;

static bool id_less(const void *ud, const void *a, const void *b)
{
    const keyed *k = ud;
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return k->key[x] < k->key[y] || (k->key[x] == k->key[y] && x < y);
}

static void id_moved(void *ud, const void *item, uint32_t pos)
{
    keyed *k = ud;
    k->pos[*(const uint32_t *)item] = pos;
}

static const sim_heap_ops id_ops = { .size = sizeof(uint32_t), .less = id_less, .moved = id_moved };

static uint32_t item(const sim_heap *h, uint32_t i)
{
    return *(const uint32_t *)sim_heap_at(h, i);
}

/* Every position told is right, and no child comes before its parent. */
static void check_heap(const sim_heap *h, const keyed *k)
{
    for (uint32_t i = 0; i < h->n; i++) {
        ck_assert_uint_eq(k->pos[item(h, i)], i);
        if (i > 0) {
            uint32_t p = item(h, (i - 1) / 2), c = item(h, i);
            ck_assert(!id_less(k, &c, &p));
        }
    }
}

/* The least id in the heap by a scan: the one a pop must give. */
static uint32_t least(const keyed *k)
{
    uint32_t best = UINT32_MAX;
    for (uint32_t id = 0; id < N; id++)
        if (k->in[id] && (best == UINT32_MAX || id_less(k, &id, &best)))
            best = id;
    return best;
}

START_TEST(heap_random_operations_keep_order_and_positions)
{
    static keyed k;
    sim_heap h;
    sim_heap_init(&h, &id_ops, &k);
    ck_assert_int_eq(sim_heap_reserve(&h, N), SIM_OK);
    srand(26);
    for (int step = 0; step < 20000; step++) {
        uint32_t id = (uint32_t)rand() % N;
        double key = (double)(rand() % 40); /* many ties */
        int op = rand() % 4;
        if (!k.in[id] && op != 3) {
            k.key[id] = key;
            k.in[id] = true;
            sim_heap_push(&h, &id);
        } else if (k.in[id] && op == 0) {
            k.in[id] = false;
            sim_heap_remove(&h, k.pos[id]);
        } else if (k.in[id] && op == 1) {
            k.key[id] = key;
            sim_heap_fix(&h, k.pos[id]);
        } else if (h.n > 0 && op == 3) {
            uint32_t want = least(&k), got;
            sim_heap_pop(&h, &got);
            ck_assert_uint_eq(got, want);
            k.in[got] = false;
        }
        if (step % 97 == 0)
            check_heap(&h, &k);
    }
    check_heap(&h, &k);
    while (h.n > 0) {
        uint32_t want = least(&k), got;
        sim_heap_pop(&h, &got);
        ck_assert_uint_eq(got, want);
        k.in[got] = false;
    }
    sim_heap_fini(&h);
}
END_TEST

static bool int_less(const void *ud, const void *a, const void *b)
{
    (void)ud;
    return *(const int *)a < *(const int *)b;
}

static const sim_heap_ops int_ops = { .size = sizeof(int), .less = int_less };

/* The textbook sifts, worked out by hand: the shape the network's queues had. */
START_TEST(heap_has_the_textbook_shape)
{
    sim_heap h;
    sim_heap_init(&h, &int_ops, NULL);
    ck_assert_int_eq(sim_heap_reserve(&h, 8), SIM_OK);
    const int in[] = { 5, 3, 8, 1, 9, 2 };
    for (size_t i = 0; i < 6; i++)
        sim_heap_push(&h, &in[i]);
    const int *a = h.items;
    const int pushed[] = { 1, 3, 2, 5, 9, 8 };
    for (size_t i = 0; i < 6; i++)
        ck_assert_int_eq(a[i], pushed[i]);
    sim_heap_pop(&h, NULL); /* 8 to the root, down past 2 */
    const int popped[] = { 2, 3, 8, 5, 9 };
    for (size_t i = 0; i < 5; i++)
        ck_assert_int_eq(a[i], popped[i]);
    h.n = 0; /* built bottom-up from 4 7 1 6 0 */
    const int raw[] = { 4, 7, 1, 6, 0 };
    for (size_t i = 0; i < 5; i++)
        sim_heap_append(&h, &raw[i]);
    sim_heap_build(&h);
    const int built[] = { 0, 4, 1, 6, 7 };
    for (size_t i = 0; i < 5; i++)
        ck_assert_int_eq(a[i], built[i]);
    sim_heap_fini(&h);
}
END_TEST

START_TEST(heap_sort_leaves_greatest_first)
{
    sim_heap h;
    sim_heap_init(&h, &int_ops, NULL);
    ck_assert_int_eq(sim_heap_reserve(&h, 300), SIM_OK);
    srand(7);
    for (int i = 0; i < 300; i++) {
        int v = rand() % 50;
        sim_heap_append(&h, &v);
    }
    sim_heap_sort(&h);
    ck_assert_uint_eq(h.n, 0);
    const int *a = h.items;
    for (int i = 1; i < 300; i++)
        ck_assert_int_ge(a[i - 1], a[i]);
    h.n = 0;
    sim_heap_sort(&h); /* empty: nothing to do */
    sim_heap_fini(&h);
    sim_heap_fini(&h); /* twice: a no-op */
}
END_TEST

Suite *test_suite(void)
{
    Suite *s = suite_create("heap");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, heap_random_operations_keep_order_and_positions);
    tcase_add_test(tc, heap_has_the_textbook_shape);
    tcase_add_test(tc, heap_sort_leaves_greatest_first);
    suite_add_tcase(s, tc);
    return s;
}
