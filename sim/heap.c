#include "sim/heap.h"

#include <assert.h>
#include <stdalign.h>
#include <stdlib.h>
#include <string.h>

/* Writes `item` at position i and tells its owner. */
static inline void put(sim_heap *h, uint32_t i, const void *item)
{
    memcpy(sim_heap_at(h, i), item, h->ops->size);
    if (h->ops->moved != NULL)
        h->ops->moved(h->ud, item, i);
}

static inline bool less(const sim_heap *h, const void *a, const void *b)
{
    return h->ops->less(h->ud, a, b);
}

/* Moves the hole at position i down to where `item` belongs and writes it there. */
static void sift_down(sim_heap *h, uint32_t i, const void *item)
{
    for (;;) {
        uint32_t c = 2 * i + 1;
        if (c >= h->n)
            break;
        if (c + 1 < h->n && less(h, sim_heap_at(h, c + 1), sim_heap_at(h, c)))
            c++;
        if (!less(h, sim_heap_at(h, c), item))
            break;
        put(h, i, sim_heap_at(h, c));
        i = c;
    }
    put(h, i, item);
}

/* Moves the hole at position i up while `item` is less than its parent; returns where the hole
 * stopped (nothing written there yet). */
static uint32_t sift_up(sim_heap *h, uint32_t i, const void *item)
{
    while (i > 0 && less(h, item, sim_heap_at(h, (i - 1) / 2))) {
        put(h, i, sim_heap_at(h, (i - 1) / 2));
        i = (i - 1) / 2;
    }
    return i;
}

/* Writes `item` (not stored in the hole's path) into the hole at position i, where it
 * belongs: up, then down from where it stopped. */
static void place(sim_heap *h, uint32_t i, const void *item)
{
    sift_down(h, sift_up(h, i, item), item);
}

void sim_heap_init(sim_heap *h, const sim_heap_ops *ops, void *ud)
{
    assert(ops->size > 0 && ops->size <= SIM_HEAP_ITEM_MAX);
    *h = (sim_heap){ .items = NULL, .n = 0, .cap = 0, .ops = ops, .ud = ud };
}

void sim_heap_fini(sim_heap *h)
{
    free(h->items);
    h->items = NULL;
    h->n = h->cap = 0;
}

int sim_heap_reserve(sim_heap *h, uint32_t cap)
{
    if (cap <= h->cap)
        return SIM_OK;
    void *items = realloc(h->items, (size_t)cap * h->ops->size);
    if (items == NULL)
        return SIM_ENOMEM;
    h->items = items;
    h->cap = cap;
    return SIM_OK;
}

uint32_t sim_heap_push(sim_heap *h, const void *item)
{
    assert(h->n < h->cap);
    uint32_t i = sift_up(h, h->n++, item);
    put(h, i, item);
    return i;
}

void sim_heap_pop(sim_heap *h, void *out)
{
    assert(h->n > 0);
    if (out != NULL)
        memcpy(out, h->items, h->ops->size);
    if (--h->n > 0)
        place(h, 0, sim_heap_at(h, h->n)); /* the last item, read where it lies: never written */
}

void sim_heap_remove(sim_heap *h, uint32_t i)
{
    assert(i < h->n);
    if (i < --h->n)
        place(h, i, sim_heap_at(h, h->n));
}

void sim_heap_fix(sim_heap *h, uint32_t i)
{
    assert(i < h->n);
    alignas(max_align_t) unsigned char item[SIM_HEAP_ITEM_MAX];
    memcpy(item, sim_heap_at(h, i), h->ops->size);
    place(h, i, item);
}

void sim_heap_append(sim_heap *h, const void *item)
{
    assert(h->n < h->cap);
    memcpy(sim_heap_at(h, h->n++), item, h->ops->size);
}

void sim_heap_build(sim_heap *h)
{
    if (h->ops->moved != NULL)
        for (uint32_t i = 0; i < h->n; i++)
            h->ops->moved(h->ud, sim_heap_at(h, i), i);
    alignas(max_align_t) unsigned char item[SIM_HEAP_ITEM_MAX];
    for (uint32_t i = h->n / 2; i-- > 0;) {
        memcpy(item, sim_heap_at(h, i), h->ops->size);
        sift_down(h, i, item);
    }
}

void sim_heap_sort(sim_heap *h)
{
    sim_heap_build(h);
    alignas(max_align_t) unsigned char top[SIM_HEAP_ITEM_MAX];
    while (h->n > 1) {
        memcpy(top, h->items, h->ops->size);
        sim_heap_pop(h, NULL);
        memcpy(sim_heap_at(h, h->n), top, h->ops->size); /* behind the heap: no position */
    }
    h->n = 0;
}
