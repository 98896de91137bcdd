/* Whole training iterations for `hetsim bench kernels` (issue 16): one small real-training run
 * per protocol family, synchronous (allreduce), gossip (gossip) and asynchronous pairwise
 * (adpsgd), each printed as a JSON line of sim/bench.h,
 * {"name": "kernels.iteration_<protocol>", "value": <us per iteration>, "unit": "us",
 *  "reference": <forward + backward us>, "ratio": reference / value},
 * so the ratio is the share of an iteration's time that is the model's own gradient math
 * (1.0: no overhead from the runtime, the protocol, the network model or the optimizer).
 *
 * Each run is an in-process scenario built from text: `workers` workers on a 10 Gb/s star
 * (50 us latency), iteration_ms 50 with jitter 0.1, the mlp with one hidden layer of `hidden`
 * units, batch `batch`, lr 0.05, momentum 0.9, weight decay 1e-4, on Fashion-MNIST (its first
 * 8192 training examples) or, when it is not installed or `synthetic` is set, synthetic data of
 * its shape (784 inputs, 10 classes). It stops after `iterations` finished iterations over all
 * workers and evaluates only at its start and end, on 100 test examples. The value is the time
 * of the run's simulation loop (from the first evaluation, after data loading and set-up, to the
 * last, both included) over its finished iterations; the up to `workers` gradients in flight
 * when it stops are not counted, an overstatement of at most workers / iterations (0.7% by
 * default).
 *
 * Times are the thread's CPU time (sim_bench_cpu_now), not wall time: the loop and OpenBLAS
 * (set to one thread) run on the calling thread and never sleep, so on an idle machine the two
 * agree, while on a shared one wall time also counts the spells other processes hold the core,
 * which a single run, unlike the best of many short repetitions, cannot filter out. The
 * reference is forward then backward of the run's model on a random batch of the run's size,
 * the best of `reference_reps` passes timed before the run and as many after it (both ends of
 * a noisy spell are sampled); zeroing the gradient is not timed. The run writes its usual
 * files into a fresh directory made with mkdtemp under `tmp_dir` and removes it afterwards:
 * nothing is left in the user's directories.
 */
#ifndef APP_BENCH_TRAIN_H
#define APP_BENCH_TRAIN_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "sim/err.h"

typedef struct app_bench_train_config {
    uint32_t workers;        /* simulated workers, 2..1024 */
    uint32_t hidden;         /* units of the mlp's hidden layer, 1..4096 */
    uint32_t batch;          /* samples per iteration and worker, 1..4096 */
    uint64_t iterations;     /* finished iterations over all workers that stop a run, >= workers */
    unsigned reference_reps; /* timed forward + backward passes on each side of a run, >= 1 */
    bool synthetic;          /* synthetic data even when Fashion-MNIST is installed */
    const char *tmp_dir;     /* parent of the temporary run directory; NULL: $TMPDIR or /tmp */
} app_bench_train_config;

/* The configuration of `hetsim bench kernels`: 16 workers, hidden 128, batch 32, 2400
 * iterations (about 1 s per run, set-up included, on an idle 2-core machine), 200 reference
 * passes on each side, Fashion-MNIST when installed. */
void app_bench_train_default(app_bench_train_config *cfg);

/* Runs the three families in order (allreduce, gossip, adpsgd) and prints a line for each to
 * `out`. Returns 0; SIM_EINVAL for a configuration out of range (the field named in err->path);
 * SIM_EIO when the temporary directory cannot be made or removed; SIM_ENUMERIC when a run
 * finishes no iteration or a pass gives a non-finite loss; SIM_ENOMEM; or the code of a failed
 * run, with `err` filled. */
int app_bench_train_run(FILE *out, const app_bench_train_config *cfg, sim_err *err);

/* `hetsim bench overlap` (issue 27): three lines of All-Reduce with gradient buckets, timing-only
 * runs with resnet50's profile into a temporary directory under `tmp_dir` (NULL: $TMPDIR or
 * /tmp), removed afterwards.
 *   overlap.allreduce_resnet50_16_iteration: the simulated ms of an iteration with 25 MiB
 *     buckets (16 workers, 150 ms of compute, 10 Gbit/s, 50 us NICs: one ring about as long
 *     as the computation), against the no-overlap closed form C + 2(N-1)(2L + (S/N)/B); the
 *     ratio is the speed-up the overlap gives.
 *   overlap.buckets_1000_workers_cpu: CPU seconds of one round of 1000 workers with 25 MiB
 *     buckets (four rings) against the same round with one ring (bucket_mb 0), both run
 *     now; the ratio is plain / bucketed (0.5: buckets make the simulation twice as slow).
 *   overlap.buckets_1000_workers_cpu_per_event: the same two runs' CPU ns per event processed
 *     (bucketed against plain); a ratio near 1 says the cost follows the events, about one per
 *     ring message, of which four rings send four times as many.
 * Errors as app_bench_train_run's. */
int app_bench_overlap_run(FILE *out, const char *tmp_dir, sim_err *err);

/* `hetsim bench collectives` (issue 41): a 256- and a 1,024-GPU timing-only run, 8 GPUs a host
 * (ib-hdr NICs, NVLink 3 inside, resnet50's profile in DDP's buckets, 100 ms of compute), two
 * lines each:
 *   collectives.hierarchical_N_events_per_iteration: events per iteration of every worker with
 *     the hierarchical all-reduce, against the messages between hosts per iteration in the same
 *     run; the ratio (messages / events) is at least 1 when the simulation costs no more events
 *     than the messages that cross hosts.
 *   collectives.hierarchical_N_cpu_per_iteration: CPU seconds of the loop per iteration, against
 *     the flat ring's on the same cluster, run now; the ratio is ring / hierarchical.
 * Errors as app_bench_train_run's. */
int app_bench_collectives_run(FILE *out, const char *tmp_dir, sim_err *err);

/* `hetsim bench threads` (issue 28): a same-run pair for each of three 16-worker all-reduce
 * runs, a CNN (960 iterations; skipped without Fashion-MNIST installed), an MLP with 256 hidden
 * units (4800 iterations) and a timing-only run (100000 iterations), each timed on one thread
 * (A) and on `threads` (B) in blocks A B B A (CNN: 2 blocks; MLP: 3 and at least 60 s timed;
 * timing-only: 5 and at least 20 s; at most 15), printed as
 * {"name": "threads.<run>", "value": <median s of a run on threads>, "unit": "s",
 *  "reference": <median s of a run on one thread>, "ratio": <median of the blocks' A / B>,
 *  "blocks": <blocks>, "wait": <share of the runs' wall time spent waiting for a core>},
 * the ratio being the speed-up. Times are wall seconds of the simulation loop (summary.json's
 * wall_s), but the timing-only run's, which starts no thread: CPU seconds of its loop on the
 * simulation's thread (unit "cpu s"), which other processes on the machine lengthen far less
 * than its wall time. "wait" is the time the simulation's thread was ready to run while other
 * processes held the cores (Linux's schedstat; 0 where unreadable): near 0 on an idle machine;
 * on a loaded one, the speed-up is less than an idle machine's. Returns 0, or the code of a
 * failed run with `err` filled. */
int app_bench_threads_run(FILE *out, unsigned threads, const char *tmp_dir, sim_err *err);

#endif
