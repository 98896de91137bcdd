/* The butterfly all-reduce's lifecycle, sizes and queries (kit/coll.h); its rounds are
 * in coll_butterfly.c. */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "kit/coll.h"
#include "kit/coll_state.h"
#include "sim/tensor.h"

coll_bfly *coll_bfly_create(coll_hub *hub, uint32_t workers, uint32_t cap, size_t nfloats,
                            uint64_t bytes, coll_input_fn input, coll_output_fn output,
                            coll_done_fn done, void *ud, sim_err *err)
{
    coll_bfly *b = calloc(1, sizeof(*b));
    if (b == NULL) {
        sim_err_set(err, SIM_ENOMEM, NULL, "out of memory");
        return NULL;
    }
    b->hub = hub;
    b->workers = workers;
    b->cap = cap;
    b->nfloats = nfloats;
    b->bytes = bytes;
    b->input = input;
    b->output = output;
    b->done = done;
    b->ud = ud;
    size_t cc = (size_t)cap * cap;
    b->members = calloc(cap, sizeof(*b->members));
    b->weight = calloc(cap, sizeof(*b->weight));
    b->bits = coll_bfly_bits(cap);
    b->index = malloc(((size_t)1 << b->bits) * sizeof(*b->index));
    b->state = calloc(cap, sizeof(*b->state));
    b->got = calloc(cc, sizeof(*b->got));
    b->have = calloc(cc, sizeof(*b->have));
    b->ngot = calloc(cap, sizeof(*b->ngot));
    b->nhave = calloc(cap, sizeof(*b->nhave));
    b->sender_deadline = malloc(cap * sizeof(*b->sender_deadline));
    b->reducer_deadline = malloc(cap * sizeof(*b->reducer_deadline));
    b->sender_timer = calloc(cap, sizeof(*b->sender_timer));
    b->reducer_timer = calloc(cap, sizeof(*b->reducer_timer));
    b->src = calloc(cap, sizeof(*b->src));
    b->wsrc = calloc(cap, sizeof(*b->wsrc));
    b->failed = calloc(cap, sizeof(*b->failed));
    if (nfloats > 0) {
        b->stage = sim_tensor_alloc((size_t)cap * nfloats);
        b->result = sim_tensor_alloc(nfloats);
    }
    if (b->members == NULL || b->weight == NULL || b->index == NULL || b->state == NULL ||
        b->got == NULL || b->have == NULL || b->ngot == NULL || b->nhave == NULL ||
        b->sender_deadline == NULL || b->reducer_deadline == NULL || b->sender_timer == NULL ||
        b->reducer_timer == NULL || b->src == NULL || b->wsrc == NULL || b->failed == NULL ||
        (nfloats > 0 && (b->stage == NULL || b->result == NULL))) {
        sim_err_set(err, SIM_ENOMEM, NULL, "out of memory");
        coll_bfly_destroy(b);
        return NULL;
    }
    for (uint32_t p = 0; p < cap; p++)
        b->sender_deadline[p] = b->reducer_deadline[p] = -1;
    memset(b->index, 0xff, ((size_t)1 << b->bits) * sizeof(*b->index));
    if (coll_hub_add(hub, b, &coll_bfly_ops, &b->channel, err) != SIM_OK) {
        coll_bfly_destroy(b);
        return NULL;
    }
    return b;
}

/* Frees the tables sized by the member count (what a resize replaces). */
static void free_member_tables(coll_bfly *b)
{
    free(b->members);
    free(b->weight);
    free(b->index);
    free(b->state);
    free(b->got);
    free(b->have);
    free(b->ngot);
    free(b->nhave);
    free(b->sender_deadline);
    free(b->reducer_deadline);
    free(b->sender_timer);
    free(b->reducer_timer);
    free(b->src);
    free(b->wsrc);
    free(b->failed);
    sim_tensor_free(b->stage);
}

void coll_bfly_destroy(coll_bfly *b)
{
    if (b == NULL)
        return;
    free_member_tables(b);
    sim_tensor_free(b->result);
    free(b);
}

uint32_t coll_bfly_size(const coll_bfly *b)
{
    return b->n;
}

uint32_t coll_bfly_position(const coll_bfly *b, uint32_t w)
{
    return coll_bfly_find(b, w);
}

bool coll_bfly_round_complete(const coll_bfly *b)
{
    return b->finished == b->n;
}

void coll_bfly_stats(const coll_bfly *b, coll_stats *out)
{
    *out = (coll_stats){
        .stale = b->stale, .dropped = b->dropped, .kept = b->kept, .grown = b->grown
    };
}

uint64_t coll_bfly_memory(uint32_t workers, uint32_t cap, size_t nfloats)
{
    uint64_t c = cap;
    (void)workers; /* nothing is sized by the workers: the index is by the room */
    return c * c * (2 + sizeof(uint32_t)) +
           ((uint64_t)1 << coll_bfly_bits(cap)) * sizeof(uint64_t) +
           c * (3 * sizeof(uint32_t) + 2 * sizeof(double) + 1 + 2 * sizeof(uint32_t) +
                2 * sizeof(sim_time) + 2 * sizeof(sim_event_id) + sizeof(float *)) +
           ((uint64_t)c + 1) * nfloats * sizeof(float) /* stage (cap vectors) and result */ +
           sizeof(coll_bfly);
}

void coll_bfly_set_timeouts(coll_bfly *b, sim_time sender_timeout, sim_time reducer_timeout)
{
    b->sender_timeout = sender_timeout;
    b->reducer_timeout = reducer_timeout;
}

/* Room for `cap` members (more than now): the per-member arrays and the staging rows are
 * allocated anew, empty (the last round's are ignored from now on anyway). */
int coll_bfly_grow(coll_bfly *b, uint32_t cap, sim_err *err)
{
    size_t cc = (size_t)cap * cap;
    void *p[14] = { calloc(cap, sizeof(*b->members)),
                    calloc(cap, sizeof(*b->weight)),
                    malloc(((size_t)1 << coll_bfly_bits(cap)) * sizeof(*b->index)),
                    calloc(cap, sizeof(*b->state)),
                    calloc(cc, sizeof(*b->got)),
                    calloc(cc, sizeof(*b->have)),
                    calloc(cap, sizeof(*b->ngot)),
                    calloc(cap, sizeof(*b->nhave)),
                    malloc(cap * sizeof(*b->sender_deadline)),
                    malloc(cap * sizeof(*b->reducer_deadline)),
                    calloc(cap, sizeof(*b->sender_timer)),
                    calloc(cap, sizeof(*b->reducer_timer)),
                    calloc(cap, sizeof(*b->src)),
                    calloc(cap, sizeof(*b->wsrc)) };
    uint32_t *failed = calloc(cap, sizeof(*b->failed));
    float *stage = b->nfloats > 0 ? sim_tensor_alloc((size_t)cap * b->nfloats) : NULL;
    bool ok = failed != NULL && (b->nfloats == 0 || stage != NULL);
    for (size_t i = 0; i < 14; i++)
        ok = ok && p[i] != NULL;
    if (!ok) {
        for (size_t i = 0; i < 14; i++)
            free(p[i]);
        free(failed);
        sim_tensor_free(stage);
        return sim_err_set(err, SIM_ENOMEM, NULL, "out of memory");
    }
    free_member_tables(b);
    b->members = p[0];
    b->weight = p[1];
    b->index = p[2];
    b->bits = coll_bfly_bits(cap);
    memset(b->index, 0xff, ((size_t)1 << b->bits) * sizeof(*b->index));
    b->state = p[3];
    b->got = p[4];
    b->have = p[5];
    b->ngot = p[6];
    b->nhave = p[7];
    b->sender_deadline = p[8];
    b->reducer_deadline = p[9];
    b->sender_timer = p[10];
    b->reducer_timer = p[11];
    b->src = p[12];
    b->wsrc = p[13];
    b->failed = failed;
    b->stage = stage;
    for (uint32_t q = 0; q < cap; q++)
        b->sender_deadline[q] = b->reducer_deadline[q] = -1;
    b->cap = cap;
    b->grown++;
    return SIM_OK;
}
