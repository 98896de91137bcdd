#include "net/net_bench.h"

#include <stdint.h>
#include <stdlib.h>

#include "net/net.h"
#include "sim/bench.h"
#include "sim/engine.h"

enum net_pattern {
    NET_RING = 0,        /* each delivery at w sends the next step from w to w + 1 */
    NET_INCAST = 1,      /* senders 1..n into host 0, each resending when its message lands */
    NET_INCAST_SYNC = 2, /* senders 1..n into host 0 in rounds: all resend when all landed */
    NET_ALL_TO_ALL = 3   /* host h sends its i-th message (tag i) to h + i once the previous
                            one landed, for i = 1..hosts - 1 */
};

typedef struct netbench {
    sim_net *net;
    uint32_t hosts, senders;
    uint64_t bytes;
    uint64_t delivered, target;
    int pattern; /* enum net_pattern */
} netbench;

/* The next round of a synchronized incast: every sender at once. */
static int incast_round(netbench *b, sim_err *err)
{
    for (uint32_t s = 1; s <= b->senders; s++) {
        sim_net_msg m = { .src = s, .dst = 0, .bytes = b->bytes, .payload = SIM_NET_NO_PAYLOAD };
        int rc = sim_net_send(b->net, &m, err);
        if (rc != SIM_OK)
            return rc;
    }
    return SIM_OK;
}

static int net_dispatch(void *ud, sim_engine *eng, const sim_event *ev, sim_err *err)
{
    netbench *b = ud;
    sim_net_msg msg;
    int rc = sim_net_handle(b->net, ev, &msg, err);
    if (rc <= 0)
        return rc;
    if (++b->delivered >= b->target) {
        sim_engine_stop(eng);
        return 0;
    }
    if (b->pattern == NET_INCAST_SYNC)
        return b->delivered % b->senders == 0 ? incast_round(b, err) : SIM_OK;
    if (b->pattern == NET_ALL_TO_ALL) {
        if (msg.tag + 1 >= b->hosts)
            return SIM_OK;
        sim_net_msg m = { .src = msg.src,
                          .dst = (uint32_t)((msg.src + msg.tag + 1) % b->hosts),
                          .bytes = b->bytes,
                          .tag = msg.tag + 1,
                          .payload = SIM_NET_NO_PAYLOAD };
        return sim_net_send(b->net, &m, err);
    }
    int ring = b->pattern == NET_RING;
    sim_net_msg next = { .src = ring ? msg.dst : msg.src,
                         .dst = ring ? (msg.dst + 1) % b->hosts : msg.dst,
                         .bytes = b->bytes,
                         .payload = SIM_NET_NO_PAYLOAD };
    return sim_net_send(b->net, &next, err);
}

/* Messages per second of wall time through a star of `hosts` 10 Gb/s NICs (k > 0: a k-ary
 * fat-tree of 10 Gb/s, 1 us links). `stagger_ns` spreads the hosts' latencies (host h:
 * 50 us + h * stagger_ns), so that an incast's flows start and end at different instants. */
static double net_rate(uint32_t hosts, uint32_t senders, int pattern, sim_time stagger_ns,
                       uint32_t k, uint64_t target, sim_err *err)
{
    int ring = pattern == NET_RING;
    double *bw = malloc(hosts * sizeof(*bw));
    sim_time *lat = malloc(hosts * sizeof(*lat));
    sim_engine *eng = sim_engine_create(4 * (size_t)hosts, err);
    double rate = -1.0;
    if (bw == NULL || lat == NULL || eng == NULL)
        goto done;
    for (uint32_t h = 0; h < hosts; h++) {
        bw[h] = 1e10;
        lat[h] = 50000 + (sim_time)h * stagger_ns;
    }
    sim_net_config cfg = { .topology = k > 0 ? SIM_TOPO_FAT_TREE : SIM_TOPO_STAR,
                           .nhosts = hosts,
                           .bandwidth_bps = bw,
                           .latency_ns = lat,
                           .rack_size = 1,
                           .uplink_bandwidth_bps = 1e10,
                           .uplink_latency_ns = 1000,
                           .k = k,
                           .oversubscription = 1.0 };
    netbench b = { .net = sim_net_create(&cfg, eng, err),
                   .hosts = hosts,
                   .senders = senders,
                   .bytes = 97656,
                   .target = target,
                   .pattern = pattern };
    if (b.net == NULL)
        goto done;
    for (uint32_t s = 0; s < senders; s++) {
        int shift = ring || pattern == NET_ALL_TO_ALL;
        sim_net_msg m = { .src = shift ? s : s + 1,
                          .dst = shift ? (s + 1) % hosts : 0,
                          .tag = 1,
                          .bytes = b.bytes,
                          .payload = SIM_NET_NO_PAYLOAD };
        sim_net_send(b.net, &m, err);
    }
    double t0 = sim_bench_now();
    if (sim_engine_run(eng, SIM_TIME_NEVER - 1, net_dispatch, &b, err) == SIM_OK)
        rate = (double)b.delivered / (sim_bench_now() - t0);
    sim_net_destroy(b.net);
done:
    sim_engine_destroy(eng);
    free(bw);
    free(lat);
    return rate;
}

int sim_bench_network(FILE *out, sim_err *err)
{
    double ref = sim_bench_bare_heap(2048);
    if (ref < 0)
        return sim_err_set(err, SIM_ENOMEM, NULL, "out of memory");
    /* Two events per message (latency phase, then transfer; a solo has one, but these
     * patterns send few), with about as many pending as a 1024-host ring keeps: the heap's
     * rate halved is the reference. */
    ref /= 2.0;
    static const struct {
        const char *name;
        uint32_t hosts, senders;
        int pattern;
        sim_time stagger_ns;
        uint32_t k;
        uint64_t target;
    } runs[] = {
        { "network.ring_1024.messages", 1024, 1024, NET_RING, 0, 0, 2000000 },
        { "network.incast_64.messages", 65, 64, NET_INCAST, 0, 0, 200000 },
        /* 1024 flows into one link, all starting and ending together: one recomputation per
         * round, not 1024. */
        { "network.incast_sync_1024.messages", 1025, 1024, NET_INCAST_SYNC, 0, 0, 1024 * 200 },
        /* The same with every sender's latency 7 ns apart: each start and end re-rates the
         * flows sharing the link. */
        { "network.incast_staggered_1024.messages", 1025, 1024, NET_INCAST, 7, 0, 1024 * 4 },
        /* A k = 8 fat-tree's 128 hosts, each sending to every other in turn: flows share the
         * aggregation and core links in changing groups. */
        { "network.fat_tree_all_to_all_128.messages", 128, 128, NET_ALL_TO_ALL, 0, 8, 128 * 127 },
    };
    for (size_t i = 0; i < sizeof(runs) / sizeof(runs[0]); i++) {
        double rate = net_rate(runs[i].hosts, runs[i].senders, runs[i].pattern, runs[i].stagger_ns,
                               runs[i].k, runs[i].target, err);
        if (rate < 0)
            return err != NULL ? err->code : SIM_ENOMEM;
        sim_bench_emit(out, runs[i].name, rate, "messages/s", ref);
    }
    return SIM_OK;
}
