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

/* The bare binary heap's hold rate (operations per second, the best of five runs) with
 * `pending` entries and exponential increments of a fixed seed: the reference of the engine's
 * and the network's benchmarks (net/net_bench.h). Negative when out of memory. */
double sim_bench_bare_heap(size_t pending);

#endif
