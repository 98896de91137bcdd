/* Benchmarks for `hetsim bench`: each prints JSON lines
 * {"name": ..., "value": ..., "unit": ..., "reference": ..., "ratio": ...}
 * where the reference is a limit measured in the same run on the same machine (a bare
 * binary heap for the engine), so ratios stay meaningful on noisy shared machines.
 */
#ifndef SIM_BENCH_H
#define SIM_BENCH_H

#include <stdio.h>

#include "sim/err.h"

/* Seconds on the monotonic clock (for timing benchmarks only: never in results). */
double sim_bench_now(void);

/* Seconds of CPU time the calling thread has used (CLOCK_THREAD_CPUTIME_ID): time spent
 * running, not time spent waiting for a core that other processes of a shared machine hold. */
double sim_bench_cpu_now(void);

/* Writes one benchmark line: {"name", "value", "unit", "reference", "ratio"}, for a rate
 * (higher is better): the ratio is value / reference. */
void sim_bench_emit(FILE *out, const char *name, double value, const char *unit, double ref);

/* The same for a duration (lower is better): the ratio is reference / value, so that it
 * still reads as the share of the reference reached (1.0: as fast as the reference). */
void sim_bench_emit_time(FILE *out, const char *name, double value, const char *unit, double ref);

/* The hold model (pop the earliest event, push one at now + Exp) with 1e2, 1e4 and 1e6
 * pending events, against a bare binary heap of (double, uint64) pairs. */
int sim_bench_engine(FILE *out, sim_err *err);

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
