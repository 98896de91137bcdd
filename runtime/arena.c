/* The run's arena (runtime/arena.h): a bump allocator over one calloc'd block. */
#include "runtime/arena.h"

#include <stdlib.h>

struct sim_arena {
    bool sizing;          /* count only */
    bool overrun;         /* a request past the block */
    uint64_t used;        /* bytes asked for, rounded; UINT64_MAX once overflowed */
    uint64_t size;        /* the block's usable bytes (0 when sizing) */
    unsigned char *block; /* calloc'd, SIM_ARENA_ALIGN spare bytes for the alignment */
    unsigned char *base;  /* block aligned up to SIM_ARENA_ALIGN */
};

sim_arena *sim_arena_create_sizing(sim_err *err)
{
    sim_arena *a = calloc(1, sizeof(*a));
    if (a == NULL) {
        sim_err_set(err, SIM_ENOMEM, NULL, "out of memory");
        return NULL;
    }
    a->sizing = true;
    return a;
}

sim_arena *sim_arena_create(uint64_t bytes, sim_err *err)
{
    sim_arena *a = calloc(1, sizeof(*a));
    if (a == NULL || bytes > SIZE_MAX - SIM_ARENA_ALIGN) {
        free(a);
        sim_err_set(err, SIM_ENOMEM, NULL, "out of memory for the protocol's %llu bytes",
                    (unsigned long long)bytes);
        return NULL;
    }
    a->size = bytes;
    if (bytes > 0) {
        /* calloc: fresh pages stay untouched (and not resident) until the protocol writes. */
        a->block = calloc(1, (size_t)bytes + SIM_ARENA_ALIGN);
        if (a->block == NULL) {
            free(a);
            sim_err_set(err, SIM_ENOMEM, NULL, "out of memory for the protocol's %llu bytes",
                        (unsigned long long)bytes);
            return NULL;
        }
        uintptr_t p = (uintptr_t)a->block;
        a->base = a->block + (SIM_ARENA_ALIGN - p % SIM_ARENA_ALIGN) % SIM_ARENA_ALIGN;
    }
    return a;
}

void sim_arena_destroy(sim_arena *a)
{
    if (a == NULL)
        return;
    free(a->block);
    free(a);
}

uint64_t sim_arena_bytes(const sim_arena *a)
{
    return a->used;
}

bool sim_arena_overrun(const sim_arena *a)
{
    return a->overrun;
}

void *sim_arena_alloc(sim_arena *a, size_t n, size_t size)
{
    if (n == 0 || size == 0)
        return NULL;
    uint64_t bytes = UINT64_MAX;
    if ((uint64_t)n <= (UINT64_MAX - SIM_ARENA_ALIGN) / size)
        bytes = ((uint64_t)n * size + SIM_ARENA_ALIGN - 1) / SIM_ARENA_ALIGN * SIM_ARENA_ALIGN;
    uint64_t at = a->used;
    a->used = bytes > UINT64_MAX - at ? UINT64_MAX : at + bytes;
    if (a->sizing)
        return NULL;
    if (a->used > a->size) {
        a->overrun = true;
        return NULL;
    }
    return a->base + at;
}
