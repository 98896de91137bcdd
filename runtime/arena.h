/* The run's arena: one zeroed block per run for a protocol's buffers and its per-worker state,
 * sized before anything is allocated and freed at teardown (GSL's workspaces, llm.c's one
 * parameter block).
 *
 * A protocol asks for its buffers in its ops table's `buffers` hook (runtime/proto.h), which
 * the runtime calls twice with the same configured state: first on a sizing arena, which hands
 * out nothing (NULL) and only adds up the bytes asked for, so that the memory guard knows the
 * protocol's share before the run allocates it; then on the run's arena, one block of exactly
 * that size, which hands out each buffer zeroed and 64-byte aligned (as sim_tensor_alloc's) and
 * frees them all when the run ends. The hook therefore asks for the same buffers both times,
 * from the configured state and the model's size alone, and only stores the pointers.
 *
 * Ownership: the runtime creates and destroys arenas; protocols only call sim_arena_alloc,
 * from their buffers hook, and never free what it returns. */
#ifndef RUNTIME_ARENA_H
#define RUNTIME_ARENA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sim/err.h"

enum {
    SIM_ARENA_ALIGN = 64 /* bytes: every buffer starts on a cache line */
};

typedef struct sim_arena sim_arena;

/* A sizing arena: sim_arena_alloc returns NULL and counts the bytes. NULL (and err) when out of
 * memory. */
sim_arena *sim_arena_create_sizing(sim_err *err);

/* The run's arena, one zeroed block of `bytes` (a sizing arena's sim_arena_bytes); pages are
 * resident only once written. NULL (and err) when out of memory. */
sim_arena *sim_arena_create(uint64_t bytes, sim_err *err);

/* Frees the arena and every buffer it handed out (NULL: nothing). */
void sim_arena_destroy(sim_arena *a);

/* Bytes asked for so far, each request rounded up to SIM_ARENA_ALIGN (UINT64_MAX once they
 * overflow). */
uint64_t sim_arena_bytes(const sim_arena *a);

/* True if a request did not fit the run's arena (the hook asked for more than it did on the
 * sizing arena): a protocol's error. */
bool sim_arena_overrun(const sim_arena *a);

/* n elements of `size` bytes, zeroed and SIM_ARENA_ALIGN-aligned, valid until the run's end.
 * NULL on a sizing arena, for n * size == 0, or past the block (sim_arena_overrun). */
void *sim_arena_alloc(sim_arena *a, size_t n, size_t size);

#endif
