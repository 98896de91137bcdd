/* Moshpit's internals, shared by protocols/moshpit.c (rounds, events), protocols/moshpit_match.c
 * (the key form's matchmaking), protocols/moshpit_groups.c (the groups of a grid or random
 * round, the key update), protocols/moshpit_config.c (configuration) and protocols/moshpit_down.c
 * (failures kept linear) and protocols/moshpit_index.c (the matchmaking's indexes). Not a public
 * header: only those six files include it. Calls run one way:
 * the others call none of moshpit.c's functions (the matchmaking says when it leaves a worker
 * alone, and moshpit.c finishes that worker's round). The protocol itself is described at the top
 * of protocols/moshpit.c. */
#ifndef PROTOCOLS_MOSHPIT_STATE_H
#define PROTOCOLS_MOSHPIT_STATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <gsl/gsl_rng.h>

#include "kit/coll.h"
#include "runtime/proto.h"
#include "sim/engine.h"

#define MP_MAX_DIMS  8
#define MP_MAX_CELLS (1u << 24)

enum {
    PH_IDLE = 0,
    PH_COMPUTE = 1,
    PH_GROUP = 2,
    PH_DONE = 3,
    PH_MATCH = 4 /* key form: looking for a group */
};

/* Key form: matchmaking states of a worker in the round. */
enum {
    KS_OUT = 0,      /* takes no part (down or sitting out) */
    KS_WAIT = 1,     /* takes part, not declared yet (local steps) */
    KS_FOLLOW = 2,   /* asked a leader, no answer yet */
    KS_ACCEPTED = 3, /* accepted by its leader, waits for the group to begin */
    KS_LEAD = 4,     /* leads: accepts followers until full or its time is up */
    KS_GROUP = 5,    /* in a group that began */
    KS_ALONE = 6     /* no group this round (disbanded) */
};

typedef struct moshpit moshpit;

/* The workers a butterfly lists since its last start, each position a node of its worker's
 * list of listings (protocols/moshpit_down.c; heap). */
/* Key form: the matchmaking's indexes (protocols/moshpit_index.c; arena): the declared workers
 * as a treap by (key, expiration, id), a node per worker (its id), each with the key and
 * expiration it was made with; and each worker's askers as a list. */
typedef struct mp_index {
    uint32_t root;
    uint32_t *left, *right;  /* (n) the treap's children, UINT32_MAX: none */
    sim_time *exp;           /* (n) a node's expiration */
    uint32_t *key;           /* (n * (d - 1)) a node's key */
    bool *in;                /* (n) the worker has a node */
    uint32_t *ahead;         /* (n) a worker's first asker, UINT32_MAX: none */
    uint32_t *anext, *aprev; /* (n) the next and previous asker of the same worker */
    uint32_t *under;         /* (n) the worker whose askers list it, UINT32_MAX: none */
    uint32_t *scratch;       /* (n) mp_ix_askers's answer */
} mp_index;

typedef struct mp_listing {
    uint32_t n, cap;
    uint32_t *mem;         /* (cap) worker ids by position */
    uint64_t *next, *prev; /* (cap) the worker's next and previous listing, UINT64_MAX: none */
} mp_listing;

struct moshpit {
    /* configuration */
    uint32_t n;              /* workers */
    uint32_t d;              /* grid axes (grid form) */
    uint32_t m[MP_MAX_DIMS]; /* grid sides */
    uint32_t cells;          /* product of the sides */
    bool random;             /* random groups instead of the grid */
    uint32_t group_size;     /* random: M */
    double alpha;            /* averaging_alpha */
    uint32_t local_steps;    /* SGD steps before each round */
    double sender_ms, reducer_ms;
    /* run */
    coll_hub *hub;
    coll_bfly **bf;             /* (most) one per group of a round (arena) */
    coll_input_fn bfly_input;   /* a butterfly's callbacks, moshpit.c's (set by its start), */
    coll_output_fn bfly_output; /* with which mp_make_bfly (moshpit_config.c) makes one for */
    coll_done_fn bfly_done;     /* moshpit.c and moshpit_match.c alike */
    uint32_t nbf, cap;          /* butterflies, most members of one */
    uint32_t most;              /* butterflies at most: nbf, or n without global rounds in
                                 * the key form, made as groups need them (moshpit_match.c): a slow
                                 * member holds its group's while the others group again */
    uint32_t dims[MP_MAX_DIMS]; /* the sides as the kit's grids (kit/graph.h) take them:
                                 * m reversed (the kit's first axis is the fastest, as
                                 * Moshpit's last is), so Moshpit's axis a is the kit's d-1-a */
    uint32_t *list;             /* (2n) scratch: members (arena) */
    uint32_t *line;             /* (cells) scratch: group of a grid line, or a count (arena) */
    float *avg;                 /* (n * P) butterfly outputs (arena) */
    size_t P;
    uint64_t round;
    uint32_t busy;   /* workers not done with the round */
    uint32_t active; /* butterflies started this round */
    bool idle;       /* nobody was up at the last round start, or, averaging alone, no round
                        could take time (mp_could_group): the next starts at a recovery */
    /* key form (PROTOCOLS 5.2) */
    bool keys;
    uint32_t min_group, target; /* min_group_size, target_group_size (0: none, hivemind's None) */
    uint32_t kside;             /* key form: a key digit's range M, the grid's largest side */
    double mm_ms, req_ms;       /* matchmaking_ms, request_timeout_ms */
    uint32_t room;              /* members a leader's list holds in the arena */
    uint32_t *rooms;            /* (n * room) the leaders' lists at first (arena) */
    uint32_t **heap;            /* (nheap) lists grown past their room (heap, freed by fini) */
    uint32_t nheap, heapcap;
    uint64_t *gid;   /* (most) each group's id (arena) */
    uint32_t *perm;  /* (target, or 2n without one) scratch of the key update
                      * (arena) */
    gsl_rng *krng;   /* seeded by a group id for the key update */
    uint64_t serial; /* groups formed */
    uint64_t repeats, requests, rejects, disbanded, grown;
    bool async;       /* key form, `sync` false: no global rounds (below) */
    uint32_t *freebf; /* (most) async: free butterflies (arena) */
    uint32_t nfree;
    coll_idset inuse;   /* (ids 0..most-1) async: a group runs on the butterfly (arena) */
    uint64_t floor;     /* async: the fewest rounds done by a live worker */
    uint32_t fcount;    /* async: the live workers counted at or below the floor */
    bool fdirty;        /* async: a worker came up since the count: walk them again */
    mp_listing *listed; /* (most) the butterflies' listings (heap, moshpit_down.c) */
    uint32_t *cand;     /* (ncand) scratch of mp_lost_candidates (heap) */
    uint32_t ncand;
    mp_index ix; /* key form: the matchmaking's indexes (moshpit_index.c) */
    /* async, `overlap`: a worker's rounds run beside its local steps (hivemind's background
     * averaging): a round is due every local_steps steps, its input the parameters when it
     * began, its result merged into the parameters as they are when it ends */
    bool overlap;
    bool replace;        /* overlap, merge "replace": x <- x + alpha (avg - x), as the paper's
                          * code; else hivemind's delta rule x <- x + alpha (avg - sent) */
    float *sent;         /* (n * P) overlap: each worker's parameters when its round began */
    uint64_t skipped;    /* overlap: rounds due while the worker's last was still in flight */
    sim_time mm_wait_ns; /* key form: matchmaking with no iteration in flight, summed over
                          * the workers when each is over */
    uint64_t groups, sat_out, alone, failed_members;
};

/* A worker's state (proto_ops.worker_size; mp_at). */
typedef struct mp_worker {
    sim_time expires;              /* key form: declared expiration this round */
    uint64_t last, last_round;     /* key form: serial and round of its last group */
    uint64_t wr;                   /* async: rounds done */
    uint64_t steps;                /* overlap: iterations started, its computations' tag */
    uint64_t lhead;                /* its first listing in a butterfly (moshpit_down.c) */
    sim_time mm_from;              /* key form: when it began matchmaking */
    uint32_t *mem;                 /* key form: a leader's members, itself first (mcap): its
                                    * room in st->rooms, or a heap list once grown past it */
    uint32_t cell;                 /* its cell, a point of the kit's grid dims */
    uint32_t group;                /* butterfly this round, COLL_NONE if none */
    uint32_t left;                 /* local steps left (overlap: before its next round) */
    uint32_t asked;                /* key form: the candidate asked last, COLL_NONE: none yet */
    uint32_t tries;                /* key form: requests sent this round */
    uint32_t mcap;                 /* key form: room in mem: doubles when full (counted) */
    uint32_t nmem;                 /* key form: members in mem */
    uint32_t heap;                 /* key form: mem's index in st->heap + 1, 0: in the arena */
    uint32_t key[MP_MAX_DIMS - 1]; /* key form: d - 1 digits in 0..M-1, oldest first */
    uint8_t phase;                 /* PH_* */
    uint8_t ks;                    /* key form: KS_* */
    bool counted;                  /* async: in the floor's count (moshpit_down.c) */
} mp_worker;

/* Worker w's state, for the handler acting for w or the protocol's bookkeeping on its behalf
 * (sim_ctx_worker); a worker's deliberate reads of another's go through sim_ctx_peer. */
static inline mp_worker *mp_at(const sim_ctx *ctx, uint32_t w)
{
    return sim_ctx_worker(ctx, w);
}

/* ---- configuration (protocols/moshpit_config.c) ---- */

/* Parses and checks $.protocol.* into st (the ops table's configure). */
int mp_configure(void *state, sim_cfg *cfg, const proto_setup *setup, sim_err *err);

/* The default grid of n workers when `grid` is absent: d axes of side m (see the rule in
 * protocols/moshpit_config.c and docs/scenario.md). */
void mp_default_grid(uint32_t n, uint32_t *d, uint32_t *m);

/* The butterflies a round needs and the most members of one, from the configuration. */
void mp_sizes(const moshpit *st, uint32_t *nbf, uint32_t *cap);

/* A butterfly of the run's size, room, timeouts and callbacks (NULL and err when out of
 * memory); moshpit_config.c, below both files that make them. */
coll_bfly *mp_make_bfly(moshpit *st, sim_ctx *ctx, sim_err *err);

/* The memory a run takes outside the arena (the ops table's memory). */
uint64_t mp_memory(const void *state, size_t num_params);

/* The run's buffers in the arena (the ops table's buffers). */
void mp_buffers(void *state, sim_arena *a, size_t num_params);

/* ---- groups (protocols/moshpit_groups.c) ---- */

/* Groups of a grid or random round from the participants in st->list[0..k) (ascending ids):
 * sets st->group[] and starts the butterflies. */
int mp_start_groups(moshpit *st, sim_ctx *ctx, uint32_t k, sim_err *err);

/* Whether a round could take simulated time with the workers up now: in the key form one
 * that may take part (not sure to sit out: sim_ctx_always_dropped) matchmakes; in a grid or
 * random round two of them share a group along some axis (or, random, are two). Else every
 * round until a worker recovers takes no time and changes nothing (averaging alone). */
bool mp_could_group(moshpit *st, const sim_ctx *ctx);

/* Async, averaging alone: whether worker w's rounds all take no time and change nothing (it
 * sits out every one); it then starts none until it recovers, and the round ends count the
 * others' rounds. */
static inline bool mp_never_averages(const moshpit *st, const sim_ctx *ctx, uint32_t w)
{
    return st->async && st->local_steps == 0 && sim_ctx_always_dropped(ctx, w);
}

/* The stuck hook (runtime/proto.h): no round can take time or change anything again, but
 * for a recovery (a failure only takes a worker away). */
bool mp_stuck(const void *state, const sim_ctx *ctx);

/* Key form: member w of butterfly b takes its new newest key digit. */
void mp_update_key(moshpit *st, sim_ctx *ctx, uint32_t w, uint32_t b);

/* ---- events and messages (moshpit.c, moshpit_match.c) ---- */

enum {
    EV_COLL = SIM_EV_USER,           /* the kit's butterfly timers */
    EV_NEXT = SIM_EV_USER + 1,       /* the next round starts (after the last one's event) */
    EV_EXPIRE = SIM_EV_USER + 2,     /* key form: a leader's declared time is up; arg = round */
    EV_REQ_TIMEOUT = SIM_EV_USER + 3 /* key form: a request unanswered; arg = round, attempt */
};

/* Key form messages on channel 0 (seq = round). */
enum {
    MSG_REQUEST = 0, /* follower -> candidate leader */
    MSG_ACCEPT = 1,  /* leader -> follower */
    MSG_REJECT = 2,  /* candidate -> follower: not leading, or full */
    MSG_BEGIN = 3,   /* leader -> follower: the group (order, id) */
    MSG_DISBAND = 4  /* leader -> follower: too few by the declared time */
};

#define MSG_SMALL_BYTES 64 /* a matchmaking message */

/* ---- key form: matchmaking (protocols/moshpit_match.c) ---- */

/* Worker w leaves matchmaking (for a group, alone, or down): unless its rounds overlap its
 * local steps, the time since it began was waiting (no iteration in flight). */
void mp_left_match(moshpit *st, sim_ctx *ctx, uint32_t w);

/* The sequence number of follower f's matchmaking messages: the round (global rounds), or
 * its attempt (async: requests and leaderships so far). */
uint64_t mp_mseq(const moshpit *st, const sim_ctx *ctx, uint32_t f);

/* The timer of follower w's current request: its attempt in the round (global rounds), or
 * its attempt (async). */
msg_timer mp_request_timer(const moshpit *st, const sim_ctx *ctx, uint32_t w);

/* Worker w asks the earliest candidate it has not asked yet, declared under its key before
 * it; with none left it leads. */
int mp_try_next(moshpit *st, sim_ctx *ctx, uint32_t w, sim_err *err);

/* Worker w, ready for the round, declares itself under its key until now + matchmaking. */
int mp_declare(moshpit *st, sim_ctx *ctx, uint32_t w, sim_err *err);

/* The three calls below leave a worker alone this round (*alone) without finishing its round:
 * the matchmaking calls nothing of moshpit.c, whose caller then finishes it (mp_finish). */

/* A leader whose time is up starts its group if large enough, or disbands it (*alone). */
int mp_on_expire(moshpit *st, sim_ctx *ctx, uint32_t c, bool *alone, sim_err *err);

/* A matchmaking message (channel 0) from src reached w (a DISBAND leaves it *alone). */
int mp_on_match_msg(moshpit *st, sim_ctx *ctx, uint32_t w, uint32_t src, msg_hdr h, bool *alone,
                    sim_err *err);

/* Worker d failed during matchmaking: those who asked it look further. */
int mp_match_down(moshpit *st, sim_ctx *ctx, uint32_t d, sim_err *err);

/* Leader d failed after starting its group: follower f, if it has not joined, leaves it
 * (*alone); the caller asks every f in id order. */
int mp_begin_lost(moshpit *st, sim_ctx *ctx, uint32_t d, uint32_t f, bool *alone, sim_err *err);

/* ---- failures kept linear in those of one instant (protocols/moshpit_down.c) ---- */

/* The listings' index and the floor's first walk (the start); the index freed (fini). */
int mp_down_init(moshpit *st, sim_ctx *ctx, sim_err *err);
void mp_down_fini(moshpit *st);

/* Butterfly b is about to start with members m[0..k): its listings change to them. */
int mp_listed(moshpit *st, sim_ctx *ctx, uint32_t b, const uint32_t *m, uint32_t k, sim_err *err);

/* Worker w failed: coll_hub_worker_down over the butterflies listing it, in the same order. */
int mp_bfly_down(moshpit *st, sim_ctx *ctx, uint32_t w, sim_err *err);

/* Leader d failed: the workers mp_begin_lost may leave alone (those waiting for d's BEGIN),
 * in id order, in *out[0..*k) (scratch until the next call). */
int mp_lost_candidates(moshpit *st, sim_ctx *ctx, uint32_t d, const uint32_t **out, uint32_t *k,
                       sim_err *err);

/* ---- key form: the matchmaking's indexes (protocols/moshpit_index.c) ---- */

/* The indexes in the run's arena (from mp_buffers), and made empty (from mp_down_init). */
void mp_ix_buffers(moshpit *st, sim_arena *a);
void mp_ix_init(moshpit *st);

/* Worker w, declared (KS_FOLLOW, KS_ACCEPTED or KS_LEAD), is in the index under its key and
 * expiration as they are now. */
void mp_ix_enter(moshpit *st, sim_ctx *ctx, uint32_t w);

/* The earliest declared worker under w's key before w by (expiration, id), and after
 * (from, prev) unless prev is COLL_NONE; COLL_NONE if none. Reads no peer (uncounted). */
uint32_t mp_ix_next(moshpit *st, sim_ctx *ctx, uint32_t w, uint32_t prev, sim_time from);

/* Worker w asks c now (COLL_NONE: nobody): sets its `asked` and the askers' lists. */
void mp_ix_ask(moshpit *st, sim_ctx *ctx, uint32_t w, uint32_t c);

/* The workers following d (asked it, KS_FOLLOW or KS_ACCEPTED) in id order, in *out
 * (scratch until the next call); their number. */
uint32_t mp_ix_askers(moshpit *st, const sim_ctx *ctx, uint32_t d, const uint32_t **out);

/* Async: worker w's rounds done grew, or it went down: out of the floor's count if above it. */
void mp_floor_leave(moshpit *st, sim_ctx *ctx, uint32_t w);

/* Async: the fewest rounds done by a live worker; each rise is a round end. */
void mp_update_floor(moshpit *st, sim_ctx *ctx);

/* Async: butterfly b runs a group; butterflies whose group is over go back to the pool. */
void mp_use(moshpit *st, uint32_t b);
void mp_release_groups(moshpit *st);

#endif
