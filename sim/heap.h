/* An indexed binary min-heap of fixed-size items in an array (the network's queues: links by
 * fair share, a group's members by finishing point, the starts to come by place).
 *
 * The order is the caller's strict weak order `less`; the heap never breaks a tie itself, so
 * a queue whose key is a total order (a unique index as the last key) pops in one order
 * whatever the history. Items are moved by value with memcpy, at most SIM_HEAP_ITEM_MAX bytes
 * each. A heap whose items are ids of the caller's entities keeps their positions through
 * the `moved` hook (told each item's new position whenever one is written), so that an entity
 * whose key changed is fixed, or taken out, where it stands: a plain binary heap with position
 * indices. Sifting is the textbook one, moving a hole and writing the item once: down picks
 * the lesser child (the left one on a tie) and stops when the child is not less than the
 * item; up stops when the item is not less than its parent.
 *
 * The heap allocates only in sim_heap_reserve; every other call works in the storage it has
 * (a push needs room: n < cap). A sim_heap is plain data: items[0..n) may be read in place,
 * e.g. to visit a prefix (position i's children are 2i+1 and 2i+2). */
#ifndef SIM_HEAP_H
#define SIM_HEAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sim/err.h"

#define SIM_HEAP_ITEM_MAX 32 /* largest item, bytes */

typedef struct sim_heap_ops {
    size_t size; /* bytes per item, 1..SIM_HEAP_ITEM_MAX */
    /* Whether item a comes strictly before item b. */
    bool (*less)(const void *ud, const void *a, const void *b);
    /* Told that `item` now lies at position `pos`, or NULL when positions are not kept. */
    void (*moved)(void *ud, const void *item, uint32_t pos);
} sim_heap_ops;

typedef struct sim_heap {
    void *items; /* (cap) items; [0, n) in heap order */
    uint32_t n, cap;
    const sim_heap_ops *ops; /* must outlive the heap */
    void *ud;                /* passed to the ops */
} sim_heap;

/* Makes an empty heap with no storage. */
void sim_heap_init(sim_heap *h, const sim_heap_ops *ops, void *ud);

/* Frees the storage; the heap is then empty, with none. */
void sim_heap_fini(sim_heap *h);

/* Makes room for `cap` items (never shrinks). Returns 0, or SIM_ENOMEM (the heap unchanged). */
int sim_heap_reserve(sim_heap *h, uint32_t cap);

/* Item i (< n). */
static inline void *sim_heap_at(const sim_heap *h, uint32_t i)
{
    return (char *)h->items + (size_t)i * h->ops->size;
}

/* Adds an item (n < cap), sifted up from the end. Returns its position. */
uint32_t sim_heap_push(sim_heap *h, const void *item);

/* Copies the least item to *out (if not NULL) and takes it out (n > 0). */
void sim_heap_pop(sim_heap *h, void *out);

/* Takes out the item at position i (< n): the last item takes its place and is fixed there. */
void sim_heap_remove(sim_heap *h, uint32_t i);

/* Restores the order around position i after its item's key changed either way. */
void sim_heap_fix(sim_heap *h, uint32_t i);

/* Writes an item at the end (n < cap) without ordering it: after a run of appends (or after
 * the caller wrote items[0..n) itself), sim_heap_build orders them. */
void sim_heap_append(sim_heap *h, const void *item);

/* Heap-orders items[0..n) bottom-up (O(n)), after telling `moved` every item's position. */
void sim_heap_build(sim_heap *h);

/* Heapsort: leaves items[0..n) from the greatest to the least by `less`, and the heap empty
 * (n = 0; the sorted items stay in the storage). */
void sim_heap_sort(sim_heap *h);

#endif
