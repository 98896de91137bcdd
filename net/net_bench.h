/* The network's benchmark for `hetsim bench`, in the format of sim/bench.h. */
#ifndef NET_NET_BENCH_H
#define NET_NET_BENCH_H

#include <stdio.h>

#include "sim/err.h"

/* Messages through engine + network, against the bare heap's event rate halved (two events
 * per message, a START and a DONE; a solo, a message alone on its links, costs one, see
 * net/net_solo.h, but these patterns send few: about one message in five of the all-to-all,
 * almost none in the others, whose messages go onto links whose last message ends at that
 * very ns), measured in the same run: a ring of 1024 hosts (one flow per link), an incast of
 * 64 flows into one link, a synchronized incast of 1024 flows into one link (rounds in which
 * all start and end together), a staggered one (latencies 7 ns apart, each sender resending
 * when its message lands) and an all-to-all on a k = 8 fat-tree (128 hosts). */
int sim_bench_network(FILE *out, sim_err *err);

#endif
