/* The random-flow harness of the network's differential tests (tests/test_net_diff.c,
 * test_net_group.c, test_net_solo.c, test_net_hosts.c, test_net_bundle.c): a "side" runs a
 * script of timed actions (sends, capacity changes, failures, probes) on one network (the
 * model, with or without solos and bundles, or the reference tests/net_ref.c in one of its two
 * timings) and records every end, answering every third delivered message; a
 * flow set is a random topology with such a script, drawn with the knobs of a net_draw, its
 * hosts grouped into nodes or not. Functions fail the calling Check test on error,
 * so they may be called only from inside one. */
#ifndef HETSIM_TESTS_NET_HARNESS_H
#define HETSIM_TESTS_NET_HARNESS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <gsl/gsl_rng.h>

#include "net/net.h"
#include "net_ref.h"
#include "sim/engine.h"

enum {
    NH_MAX_HOSTS = 40,
    NH_MAX_ACTS = 160,
    NH_MAX_LOG = 1024,
    NH_MAX_PROBES = 16
};

typedef enum nh_act {
    NH_SEND = 0,
    NH_FACTOR = 1,
    NH_DOWN = 2,
    NH_UP = 3,
    NH_EXTRA = 4, /* extra latency `bytes` ns on host a (the model only) */
    NH_PROBE = 5  /* records the active flows (the model only) */
} nh_act;

typedef struct nh_action {
    sim_time at_ns;
    uint32_t kind; /* NH_* */
    uint32_t a, b; /* send: src, dst; factor, down, up, extra: host */
    uint64_t bytes;
    double factor;
} nh_action;

/* The network a side runs. */
typedef enum nh_impl {
    NH_MODEL = 0,     /* net/net.h, with bundles */
    NH_NO_SOLOS = 1,  /* net/net.h with every message on the START and DONE path */
    NH_REF = 2,       /* tests/net_ref.h, REF_EACH_CHANGE: one recomputation per change */
    NH_PI = 3,        /* tests/net_ref.h, REF_PER_INSTANT: the per-instant solver before groups */
    NH_NO_BUNDLES = 4 /* net/net.h with solos but without bundles */
} nh_impl;

typedef struct nh_side {
    sim_engine *eng;
    sim_net *net; /* exactly one of net and ref */
    ref_net *ref;
    const nh_action *acts;
    bool replies; /* answer every third message (closed-loop traffic) */
    size_t n;     /* ends recorded */
    uint64_t tag[NH_MAX_LOG];
    sim_time at_ns[NH_MAX_LOG];
    uint8_t dropped[NH_MAX_LOG];
    bool reverted; /* NH_REF: a message had its rate changed and changed back at one instant */
    sim_engine_stats after_action; /* the engine's counters right after the last action */
    size_t nprobes;                /* NH_PROBE: per probe, flows active (stats) and listed */
    size_t active[NH_MAX_PROBES], listed[NH_MAX_PROBES];
    double rates[NH_MAX_PROBES][2]; /* the rates of the first two listed */
} nh_side;

/* Runs the script acts[0..nacts) on a new network of kind `impl` until no event is left.
 * With `replies`, every third message (by tag) of more than 1000 bytes is answered with one
 * half its size, tagged from its question's tag so that tags do not depend on the order of
 * ties; a send from action i is tagged 2 i, an answer to tag t 2 t + 1. */
void nh_side_run(nh_side *sd, const sim_net_config *cfg, const nh_action *acts, size_t nacts,
                 nh_impl impl, bool replies);

/* The steps of nh_side_run, for a test that acts between them: a new engine and network;
 * a send now, as an action would send it (returns the network's answer); actions
 * acts[from..to) scheduled (acts becomes the side's script: an action's index is its event's
 * argument); the run, until no event is left. */
void nh_side_open(nh_side *sd, const sim_net_config *cfg, nh_impl impl, bool replies);
int nh_side_send(nh_side *sd, uint32_t src, uint32_t dst, uint64_t bytes, uint64_t tag);
void nh_side_schedule(nh_side *sd, const nh_action *acts, size_t from, size_t to);
void nh_side_go(nh_side *sd);

/* Destroys the side's network and engine, returning their counters first (es may be NULL). */
void nh_side_fini(nh_side *sd, sim_net_stats *st, sim_engine_stats *es);

/* The end of the message tagged `tag` in sd, which must have ended exactly once: its time,
 * and in *dropped (unless NULL) whether it was dropped. */
sim_time nh_end_of(const nh_side *sd, uint64_t tag, bool *dropped);

/* Fails the test unless `on` ended as many messages as `off` (the side run without the
 * feature under test, named `off_name` in the messages), each at the same ns and dropped
 * alike; `k` numbers the flow set in the messages. Returns whether they ended in the same
 * order. */
bool nh_expect_same_ends(const nh_side *on, const nh_side *off, size_t k, const char *off_name);

/* How a flow set is drawn. The draws are made in one order, and a knob that is off draws
 * nothing, so a given knob setting and seed always give the same sets. */
typedef struct nh_draw {
    uint32_t min_hosts;           /* hosts: min_hosts + a draw below host_span */
    uint32_t host_span;           /* ... (at most NH_MAX_HOSTS - min_hosts + 1) */
    uint32_t host_span_fat_tree;  /* ... on a fat tree (k = 4: at most 16 hosts) */
    bool staggered;               /* half the sets start anywhere in 5 ms, half on the grid */
    uint32_t offset_span;         /* grid offsets: drawn below this many ns, or 1 ns if 0 */
    uint32_t min_acts, acts_span; /* actions: min_acts + a draw below acts_span */
    double favour;                /* share of sends to a favourite destination */
    bool favour_half;             /* ... and in half the sets none */
    uint64_t tiny;                /* a seventh size of message, or 0: six sizes */
    double batch;                 /* share of sends that are batches: 2 to 8 sends of one size
                                     at one ns, from one host to one host or from consecutive
                                     hosts to consecutive hosts (0: none, nothing drawn) */
    double p_send, p_send_factor; /* with changes: u < p_send sends, u < p_send_factor a
                                     factor change, else a failure or recovery */
} nh_draw;

/* One random flow set: a topology, link speeds and a script of actions. */
typedef struct nh_flow_set {
    sim_net_config cfg;
    double bw[NH_MAX_HOSTS];
    sim_time lat[NH_MAX_HOSTS];
    nh_action acts[NH_MAX_ACTS];
    size_t nacts;
} nh_flow_set;

/* A flow set with its hosts grouped into nodes (sim_net_config.node_of). */
typedef struct nh_node_set {
    nh_flow_set fs;
    uint32_t node_of[NH_MAX_HOSTS];
    double fbw[NH_MAX_HOSTS];
    sim_time flat[NH_MAX_HOSTS];
} nh_node_set;

/* The scripts of the differentials with and without solos (tests/test_net_solo.c; on nodes,
 * tests/test_net_hosts.c): as tests/test_net_group.c draws them (a coarse grid of times, where
 * starts and ends tie, or staggered ones; sizes and speeds from short lists), but from 2 hosts,
 * with a favourite destination in half the sets only (2 in 5 sends), so that many messages are
 * alone on their links; no seventh size (.tiny 0). */
extern const nh_draw nh_solo_draw;

/* A uniform draw in [0, n). */
size_t nh_pick(gsl_rng *r, size_t n);

/* A differential test's tools, each allocation checked: an MT19937 stream seeded with `seed`
 * (gsl_rng_free it), and `size` zeroed bytes (free them) for a side or a flow set. */
gsl_rng *nh_rng(unsigned long seed);
void *nh_zalloc(size_t size);

/* Destroys both sides (nh_side_fini) and fails the test unless they sent, delivered and
 * dropped as many messages; their counters in *a and *b, their engines' in *ea and *eb. */
void nh_finish_pair(nh_side *on, nh_side *off, sim_net_stats *a, sim_net_stats *b,
                    sim_engine_stats *ea, sim_engine_stats *eb);

/* An incast: n + 1 hosts of 10 Gbit/s and 50 us on a star, the script acts[0..n) (host w + 1
 * sending to host 0, when and what the caller chose) run with replies on two new sides, *a by
 * the network (NH_MODEL) and *b by `ref` (free both after nh_side_fini). */
void nh_incast(const nh_action *acts, size_t n, nh_impl ref, nh_side **a, nh_side **b);

/* Draws a flow set on topology `topo`: speeds and latencies from short lists (or all equal,
 * in half the sets: ties everywhere), times on a coarse grid (400 us steps, some 1 ns off)
 * where starts and ends tie, sizes from a short list; with `changes`, capacity changes,
 * failures and recoveries too. */
void nh_draw_flow_set(nh_flow_set *fs, gsl_rng *r, sim_topology topo, bool changes,
                      const nh_draw *d);

/* Groups the hosts of ns->fs (just drawn) into nodes of 1 to 4 (drawn), each node's NIC its
 * first host's, and fabric links from a short list: more or less than the NICs, or equal. */
void nh_to_nodes(nh_node_set *ns, gsl_rng *r);

#endif
