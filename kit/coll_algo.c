/* All-reduce algorithms of a ring instance besides the flat ring (kit/coll.h, "Algorithms"):
 * hierarchical, double binary trees, and auto's choice. coll.c's ring calls this file at a
 * round's sends, receipts and end; this file calls nothing of coll.c.
 *
 * Message kinds: 0 the flat ring's (coll.c); 1 and 2 hierarchical, over the host's ring and over
 * the hosts' ring; 3 + 2t + d the trees', t the tree and d 0 up (to the parent), 1 down. Every
 * connection carries its messages one at a time and in order, so a receiver counts them. */
#include <math.h>

#include "kit/coll.h"
#include "kit/coll_state.h"

enum {
    KIND_HOST = 1,  /* hierarchical, between members of a host */
    KIND_HOSTS = 2, /* hierarchical, between hosts */
    KIND_TREE = 3,  /* + 2 t + d */
    KIND_RHD = 7    /* + t: halving and doubling's step t between hosts */
};

/* ---- Layout ---------------------------------------------------------------------------- */

/* Tree over nodes 0..n-1 as NCCL builds its binary trees (an in-order tree on the indices:
 * node i's parent is found from its lowest set bit, 0 is the root with the one child below the
 * largest power of two under n): i's parent (UINT32_MAX at the root) and children. */
static void btree(uint32_t n, uint32_t i, uint32_t *parent, uint32_t kids[2], uint8_t *nkids)
{
    *nkids = 0;
    if (i == 0) {
        uint32_t top = 1;
        while (top < n)
            top <<= 1;
        *parent = UINT32_MAX;
        if (n > 1)
            kids[(*nkids)++] = top >> 1;
        return;
    }
    uint32_t low = i & (~i + 1);
    uint32_t up = (i ^ low) | (low << 1);
    *parent = up < n ? up : (i ^ low);
    for (uint32_t half = low >> 1, first = 1; half > 0; half >>= 1) {
        if (first) {
            kids[(*nkids)++] = i - half;
            first = 0;
        }
        if (i + half < n) {
            kids[(*nkids)++] = i + half;
            break;
        }
    }
}

/* Tree t over n nodes: the first as btree, the second its mirror (n even) or the first shifted by
 * one (n odd), so that a node inside one tree is a leaf of the other. */
static void tree_of(uint32_t t, uint32_t n, uint32_t i, uint32_t *parent, uint32_t kids[2],
                    uint8_t *nkids)
{
    if (t == 0) {
        btree(n, i, parent, kids, nkids);
        return;
    }
    bool mirror = n % 2 == 0;
    uint32_t j = mirror ? n - 1 - i : (i + n - 1) % n;
    btree(n, j, parent, kids, nkids);
    if (*parent != UINT32_MAX)
        *parent = mirror ? n - 1 - *parent : (*parent + 1) % n;
    for (uint8_t k = 0; k < *nkids; k++)
        kids[k] = mirror ? n - 1 - kids[k] : (kids[k] + 1) % n;
}

/* Each member's tree connections: hosts numbered in order of first appearance, each host's
 * members a chain in ring order from its head (its first); a head's parent and host children
 * are the heads of its host's parent and children in tree t. Uses r->scratch for the heads. */
static void tree_layout(coll_ring *r)
{
    coll_layout *L = &r->lay;
    uint32_t *head = r->scratch, hosts = 0;
    for (uint32_t p = 0; p < r->n; p++) {
        uint32_t q = 0;
        while (q < hosts && L->node[head[q]] != L->node[p])
            q++;
        coll_algo_pos *a = &L->ap[p];
        for (uint32_t t = 0; t < COLL_TREES; t++) {
            a->nchild[t] = 0;
            a->parent[t] = COLL_NONE;
        }
        if (q == hosts) {
            head[hosts++] = p;
            continue;
        }
        uint32_t prev = p;                      /* the chain's last member so far */
        while (L->node[--prev] != L->node[p]) { /* its host has a member before it */
        }
        for (uint32_t t = 0; t < COLL_TREES; t++) {
            a->parent[t] = prev;
            L->ap[prev].child[t][L->ap[prev].nchild[t]++] = p;
        }
    }
    for (uint32_t q = 0; q < hosts; q++) {
        coll_algo_pos *a = &L->ap[head[q]];
        for (uint32_t t = 0; t < COLL_TREES; t++) {
            uint32_t parent, kids[2];
            uint8_t nkids;
            tree_of(t, hosts, q, &parent, kids, &nkids);
            a->parent[t] = parent == UINT32_MAX ? COLL_NONE : head[parent];
            for (uint8_t k = 0; k < nkids; k++)
                a->child[t][a->nchild[t]++] = head[kids[k]];
        }
    }
}

/* Hosts, members per host and whether they come in equal runs (hierarchical). */
static void count_hosts(coll_ring *r)
{
    coll_layout *L = &r->lay;
    uint32_t run = 0, hosts = 0, ppn = 0;
    L->hier = r->n > 0;
    L->local = 0;
    for (uint32_t p = 0; p < r->n; p++) {
        bool same = p > 0 && L->node[p] == L->node[p - 1];
        run = same ? run + 1 : 1;
        ppn = run > ppn ? run : ppn;
        if (!same) {
            hosts++;
            for (uint32_t q = 0; q + 1 < p && L->hier; q++) /* a host seen before: not a run */
                L->hier = L->node[q] != L->node[p];
            if (p > 0 && L->local == 0)
                L->local = p;
        }
    }
    L->local = L->local == 0 ? r->n : L->local;
    L->hosts = hosts;
    L->ppn = ppn;
    L->hier = L->hier && r->n > 0 && hosts * L->local == r->n && ppn == L->local;
}

/* auto's inputs: the latency of a path inside a host and between hosts, and the bandwidth of
 * the ring's slowest link, from the paths between ring neighbours. */
static void measure(coll_ring *r, sim_ctx *ctx)
{
    coll_layout *L = &r->lay;
    L->lat_intra_s = L->lat_inter_s = 0.0;
    L->bus_bps = INFINITY;
    for (uint32_t p = 0; p < r->n && r->n > 1; p++) {
        uint32_t q = (p + 1) % r->n;
        sim_path path = sim_ctx_path(ctx, r->order[p], r->order[q]);
        double lat = (double)path.latency_ns * 1e-9;
        if (L->node[p] == L->node[q])
            L->lat_intra_s = fmax(L->lat_intra_s, lat);
        else
            L->lat_inter_s = fmax(L->lat_inter_s, lat);
        L->bus_bps = fmin(L->bus_bps, path.bandwidth_bps);
    }
}

void coll_algo_layout(coll_ring *r, sim_ctx *ctx)
{
    coll_layout *L = &r->lay;
    if (L->ap == NULL)
        return;
    for (uint32_t p = 0; p < r->n; p++) {
        L->node[p] = sim_ctx_host(ctx, r->order[p]).node;
        coll_algo_pos *a = &L->ap[p];
        *a = (coll_algo_pos){ 0 };
    }
    count_hosts(r);
    tree_layout(r);
    measure(r, ctx);
}

/* ---- auto: NCCL's tuning model ---------------------------------------------------------- */

/* NCCL's correction of its trees' bandwidth for medium sizes, Simple protocol, by
 * log2(bytes / 64) (NVIDIA/nccl v2.30.7-1, src/graph/tuning.cc, treeCorrectionFactor). */
static const double tree_correction[24] = { .9, .9, .9, .9, .9, .9, .9, .8, .7, .6, .6, .5,
                                            .5, .5, .5, .6, .7, .8, .7, .7, .8, .9, .9, .9 };

/* NCCL's base latency of an all-reduce, ring and tree, Simple protocol: 8.4 us (same file). */
#define BASE_LATENCY_S 8.4e-6

static uint32_t log2i(uint64_t x)
{
    uint32_t l = 0;
    while (x >>= 1)
        l++;
    return l;
}

/* Whether NCCL's model expects the trees to reduce `bytes` sooner than the ring: time = latency
 * + bytes / algorithm bandwidth, the ring's latency 2(n-1) steps (2(h-1) of them between hosts),
 * the trees' 2 ((ppn - 1) steps in a host + log2(h) between hosts); the ring's algorithm
 * bandwidth n / (2(n-1)) of the bus, the trees' half of 0.92 of it, corrected by size. */
static bool tree_sooner(const coll_layout *L, uint32_t n, uint64_t bytes)
{
    uint32_t steps = 2 * (n - 1), inter = L->hosts > 1 ? 2 * (L->hosts - 1) : 0;
    double ring_lat =
        BASE_LATENCY_S + (double)(steps - inter) * L->lat_intra_s + (double)inter * L->lat_inter_s;
    double tree_lat = BASE_LATENCY_S + 2.0 * ((double)(L->ppn - 1) * L->lat_intra_s +
                                              (double)log2i(L->hosts) * L->lat_inter_s);
    double bus = L->bus_bps / 8.0; /* bytes/s */
    double ring_bw = bus * (double)n / (double)steps;
    uint32_t size_log = log2i(bytes >> 6);
    double tree_bw =
        0.92 * bus * 0.5 * (bytes >> 6 > 0 && size_log < 23 ? tree_correction[size_log] : 1.0);
    double ring = ring_lat + (double)bytes / ring_bw, tree = tree_lat + (double)bytes / tree_bw;
    return tree < ring;
}

uint64_t coll_algo_round_bytes(const coll_ring *r, uint32_t round)
{
    return r->round_bytes != NULL ? r->round_bytes[round % r->nround_bytes] : r->bytes;
}

int coll_algo_of(const coll_ring *r, uint32_t round)
{
    const coll_layout *L = &r->lay;
    if (L->ap == NULL || r->n < 2)
        return COLL_ALGO_RING;
    switch (L->algo) {
    case COLL_ALGO_HIERARCHICAL:
        return L->hier ? COLL_ALGO_HIERARCHICAL : COLL_ALGO_RING;
    case COLL_ALGO_HALVING_DOUBLING: /* a power of two of hosts, else the ring between them */
        return !L->hier                    ? COLL_ALGO_RING
               : L->hosts & (L->hosts - 1) ? COLL_ALGO_HIERARCHICAL
                                           : COLL_ALGO_HALVING_DOUBLING;
    case COLL_ALGO_TREE:
        return COLL_ALGO_TREE;
    case COLL_ALGO_AUTO:
        return tree_sooner(L, r->n, coll_algo_round_bytes(r, round)) ? COLL_ALGO_TREE
                                                                     : COLL_ALGO_RING;
    default:
        return COLL_ALGO_RING;
    }
}

/* ---- Hierarchical ------------------------------------------------------------------------- *
 *
 * H hosts of G members each, position p = h G + g. The S bytes are G shards (the first S mod G
 * one byte larger), each of H chunks likewise. Steps 0..G-2 reduce-scatter the shards around the
 * host's ring (member g sends shard g - s, then holds shard g + 1 reduced over the host); then
 * shard g + 1 is all-reduced among the hosts' members g: around their ring, 2(H-1) steps (its
 * chunks as the flat ring sends them), or, halving and doubling, in 2 log2(H) exchanges with a
 * partner (reduce-scatter by recursive halving: exchange k with h xor H / 2^(k+1), sending the
 * half of its chunks that the member does not keep; then all-gather by recursive doubling:
 * exchange k with h xor 2^k, sending the 2^k chunks it has); the last G-1 steps all-gather the
 * shards around the host's ring. Each step waits for the one before it to be delivered and for
 * the step before it from that step's predecessor or partner. With H = 1 or G = 1 the ring form
 * is the flat ring. */

static uint64_t part(uint64_t bytes, uint32_t parts, uint32_t i)
{
    return bytes / parts + (i < bytes % parts ? 1 : 0);
}

/* Bytes of chunks [a, b) of `bytes` cut into n parts (part). */
static uint64_t part_range(uint64_t bytes, uint32_t n, uint32_t a, uint32_t b)
{
    uint32_t r = (uint32_t)(bytes % n), extra = r > a ? (b < r ? b : r) - a : 0;
    return (uint64_t)(b - a) * (bytes / n) + extra;
}

/* Steps between hosts: 2(H-1) around the ring, 2 log2(H) halving and doubling. */
static uint32_t inter_steps(const coll_ring *r, bool rhd)
{
    uint32_t H = r->n / r->lay.local;
    return rhd ? 2 * log2i(H) : 2 * (H - 1);
}

/* Step t between hosts of the member of host h whose shard has `shard` bytes, halving and
 * doubling: its partner host and its bytes. */
static uint32_t rhd_step(uint32_t H, uint32_t h, uint32_t t, uint64_t shard, uint64_t *size)
{
    uint32_t L = log2i(H);
    if (t < L) { /* halving: keep the half of its block holding h, send the other */
        uint32_t d = H >> (t + 1), lo = h & ~(2 * d - 1), from = h & d ? lo : lo + d;
        *size = part_range(shard, H, from, from + d);
        return h ^ d;
    }
    uint32_t d = 1u << (t - L), lo = h & ~(d - 1); /* doubling: send its block of d chunks */
    *size = part_range(shard, H, lo, lo + d);
    return h ^ d;
}

/* Step s of position p: its destination, kind and bytes. */
static uint32_t hier_step(const coll_ring *r, uint32_t p, uint32_t s, uint64_t bytes, bool rhd,
                          uint32_t *kind, uint64_t *size)
{
    uint32_t G = r->lay.local, H = r->n / G, h = p / G, g = p % G, B = inter_steps(r, rhd);
    if (s < G - 1 || s >= G - 1 + B) { /* the host's ring */
        uint32_t u = s < G - 1 ? s : s - B - (G - 1);
        uint32_t shard = s < G - 1 ? (g + G - u % G) % G : (g + 1 + G - u % G) % G;
        *kind = KIND_HOST;
        *size = part(bytes, G, shard);
        return h * G + (g + 1) % G;
    }
    uint32_t t = s - (G - 1);
    uint64_t shard = part(bytes, G, (g + 1) % G);
    if (rhd) {
        *kind = KIND_RHD + t;
        return rhd_step(H, h, t, shard, size) * G + g;
    }
    uint32_t c = t < H - 1 ? (h + H - t % H) % H : (h + 1 + H - (t - (H - 1)) % H) % H;
    *kind = KIND_HOSTS;
    *size = part(shard, H, c);
    return ((h + 1) % H) * G + g;
}

/* Whether position p has received step s (the step before the one it would send). */
static bool hier_got(const coll_ring *r, uint32_t p, uint32_t s, bool rhd)
{
    const coll_algo_pos *a = &r->lay.ap[p];
    uint32_t par = r->m[p].round & 1, G = r->lay.local, B = inter_steps(r, rhd);
    if (s < G - 1)
        return a->hrecv[par][0] >= s + 1;
    if (s >= G - 1 + B)
        return a->hrecv[par][0] >= s - B + 1;
    uint32_t t = s - (G - 1);
    return rhd ? (a->hmask[par] >> t & 1) != 0 : a->hrecv[par][1] >= t + 1;
}

static int hier_send(coll_ring *r, sim_ctx *ctx, uint32_t w, bool rhd, sim_err *err)
{
    uint32_t p = coll_ring_find(r, w);
    coll_ring_pos *a = &r->m[p];
    if (a->busy || a->sent >= 2 * (r->lay.local - 1) + inter_steps(r, rhd))
        return SIM_OK;
    if (a->sent > 0 && !hier_got(r, p, a->sent - 1, rhd))
        return SIM_OK;
    uint32_t kind;
    uint64_t size;
    uint32_t q = hier_step(r, p, a->sent, coll_algo_round_bytes(r, a->round), rhd, &kind, &size);
    msg_hdr h = { .channel = r->channel, .kind = kind, .seq = (uint64_t)r->gen << 32 | a->round };
    int rc = msg_post(ctx, w, r->order[q], size, h, msg_none(), err);
    if (rc != SIM_OK)
        return rc;
    a->sent++;
    a->busy = true;
    return SIM_OK;
}

static bool hier_complete(const coll_ring *r, uint32_t p, bool rhd)
{
    const coll_ring_pos *a = &r->m[p];
    const coll_algo_pos *b = &r->lay.ap[p];
    uint32_t par = a->round & 1, G = r->lay.local, B = inter_steps(r, rhd);
    bool inter = rhd ? b->hmask[par] == (UINT64_C(1) << B) - 1 : b->hrecv[par][1] == B;
    return !a->busy && a->sent == 2 * (G - 1) + B && b->hrecv[par][0] == 2 * (G - 1) && inter;
}

/* ---- Double binary trees -------------------------------------------------------------------- *
 *
 * Tree t reduces half of the bytes (the first the odd byte), in chunks of TREE_CHUNK_BYTES (at
 * most TREE_MAX_CHUNKS, at least one): a member sends chunk c up once it has chunk c from every
 * child, the root's chunk c is then reduced, and a member sends it down to each child once it has
 * it from its parent (the root: once reduced). Both trees, and the chunks, run at once. */

/* NCCL's Simple-protocol step: its 4 MiB buffer over NCCL_STEPS = 8 (NVIDIA/nccl v2.30.7-1,
 * src/init.cc DEFAULT_BUFFSIZE, src/include/device.h). */
#define TREE_CHUNK_BYTES (UINT64_C(1) << 19)
#define TREE_MAX_CHUNKS  64u

static uint64_t tree_bytes(uint64_t bytes, uint32_t t)
{
    return bytes / 2 + (t == 0 ? bytes % 2 : 0);
}

static uint32_t tree_chunks(uint64_t bytes)
{
    uint64_t k = (bytes + TREE_CHUNK_BYTES - 1) / TREE_CHUNK_BYTES;
    return k < 1 ? 1 : k > TREE_MAX_CHUNKS ? TREE_MAX_CHUNKS : (uint32_t)k;
}

/* Chunks received from every child of tree t (the fewest). */
static uint32_t from_children(const coll_algo_pos *a, uint32_t t, uint32_t par, uint32_t k)
{
    uint32_t least = k;
    for (uint8_t j = 0; j < a->nchild[t]; j++)
        least = a->up_recv[t][par][j] < least ? a->up_recv[t][par][j] : least;
    return least;
}

static int tree_post(coll_ring *r, sim_ctx *ctx, uint32_t w, uint32_t q, uint32_t kind,
                     uint64_t size, uint32_t round, sim_err *err)
{
    msg_hdr h = { .channel = r->channel, .kind = kind, .seq = (uint64_t)r->gen << 32 | round };
    return msg_post(ctx, w, r->order[q], size, h, msg_none(), err);
}

static int tree_send(coll_ring *r, sim_ctx *ctx, uint32_t w, uint32_t t, sim_err *err)
{
    uint32_t p = coll_ring_find(r, w), round = r->m[p].round, par = round & 1;
    coll_algo_pos *a = &r->lay.ap[p];
    uint64_t bytes = tree_bytes(coll_algo_round_bytes(r, round), t);
    uint32_t k = tree_chunks(bytes), up = from_children(a, t, par, k);
    int rc = SIM_OK;
    if (a->parent[t] != COLL_NONE && !a->up_busy[t] && a->up_sent[t] < up) {
        rc = tree_post(r, ctx, w, a->parent[t], KIND_TREE + 2 * t, part(bytes, k, a->up_sent[t]),
                       round, err);
        a->up_sent[t]++;
        a->up_busy[t] = true;
    }
    uint32_t down = a->parent[t] == COLL_NONE ? up : a->down_recv[t];
    for (uint8_t j = 0; j < a->nchild[t] && rc == SIM_OK; j++) {
        if (a->down_busy[t][j] || a->down_sent[t][j] >= down)
            continue;
        rc = tree_post(r, ctx, w, a->child[t][j], KIND_TREE + 2 * t + 1,
                       part(bytes, k, a->down_sent[t][j]), round, err);
        a->down_sent[t][j]++;
        a->down_busy[t][j] = true;
    }
    return rc;
}

static bool tree_complete(const coll_ring *r, uint32_t p)
{
    const coll_algo_pos *a = &r->lay.ap[p];
    uint32_t round = r->m[p].round, par = round & 1;
    for (uint32_t t = 0; t < COLL_TREES; t++) {
        uint32_t k = tree_chunks(tree_bytes(coll_algo_round_bytes(r, round), t));
        if (a->parent[t] != COLL_NONE &&
            (a->up_busy[t] || a->up_sent[t] < k || a->down_recv[t] < k))
            return false;
        for (uint8_t j = 0; j < a->nchild[t]; j++)
            if (a->up_recv[t][par][j] < k || a->down_busy[t][j] || a->down_sent[t][j] < k)
                return false;
    }
    return true;
}

/* ---- The ring's calls ------------------------------------------------------------------------ */

int coll_algo_send(coll_ring *r, sim_ctx *ctx, uint32_t w, sim_err *err)
{
    int algo = coll_algo_of(r, r->m[coll_ring_find(r, w)].round);
    if (algo != COLL_ALGO_TREE)
        return hier_send(r, ctx, w, algo == COLL_ALGO_HALVING_DOUBLING, err);
    int rc = SIM_OK;
    for (uint32_t t = 0; t < COLL_TREES && rc == SIM_OK; t++)
        rc = tree_send(r, ctx, w, t, err);
    return rc;
}

bool coll_algo_complete(const coll_ring *r, uint32_t w)
{
    uint32_t p = coll_ring_find(r, w);
    int algo = coll_algo_of(r, r->m[p].round);
    return algo != COLL_ALGO_TREE ? hier_complete(r, p, algo == COLL_ALGO_HALVING_DOUBLING)
                                  : tree_complete(r, p);
}

void coll_algo_round_end(coll_ring *r, uint32_t w)
{
    uint32_t p = coll_ring_find(r, w), par = r->m[p].round & 1;
    coll_algo_pos *a = &r->lay.ap[p];
    a->hrecv[par][0] = a->hrecv[par][1] = 0;
    a->hmask[par] = 0;
    for (uint32_t t = 0; t < COLL_TREES; t++) {
        for (uint32_t j = 0; j < COLL_TREE_CHILDREN; j++) {
            a->up_recv[t][par][j] = 0;
            a->down_sent[t][j] = 0;
        }
        a->down_recv[t] = 0;
        a->up_sent[t] = 0;
    }
}

/* The index of position q among p's children in tree t. */
static uint32_t child_index(const coll_algo_pos *a, uint32_t t, uint32_t q)
{
    uint32_t j = 0;
    while (j < a->nchild[t] && a->child[t][j] != q)
        j++;
    return j;
}

int coll_algo_received(coll_ring *r, uint32_t w, uint32_t src, uint32_t kind, uint32_t round,
                       sim_err *err)
{
    uint32_t pw = coll_ring_find(r, w), ps = coll_ring_find(r, src), cur = r->m[pw].round,
             par = round & 1;
    coll_algo_pos *a = &r->lay.ap[pw], *b = &r->lay.ap[ps];
    bool down = kind >= KIND_TREE && kind < KIND_RHD && (kind - KIND_TREE) % 2 == 1;
    if (!(round == cur || (round == cur + 1 && !down)) || kind >= KIND_RHD + 64)
        return sim_err_set(err, SIM_EINVAL, NULL,
                           "ring: worker %u in round %u got a message of kind %u, round %u", w, cur,
                           kind, round);
    if (kind < KIND_TREE || kind >= KIND_RHD) {
        r->m[ps].busy = false;
        if (kind >= KIND_RHD)
            a->hmask[par] |= UINT64_C(1) << (kind - KIND_RHD);
        else
            a->hrecv[par][kind - KIND_HOST]++;
        return SIM_OK;
    }
    uint32_t t = (kind - KIND_TREE) / 2;
    if (down) {
        a->down_recv[t]++;
        b->down_busy[t][child_index(b, t, pw)] = false;
    } else {
        a->up_recv[t][par][child_index(a, t, ps)]++;
        b->up_busy[t] = false;
    }
    return SIM_OK;
}
