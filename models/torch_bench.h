/* `hetsim bench torch` (issue 40): the samples per second of gradients computed through a
 * model server (models/torch.h), each followed by hetsim's SGD step, against a plain PyTorch
 * training loop (forward, backward, torch.optim.SGD) run by the same server on the same
 * network, data and batch, on one core each, measured in the same run: LeNet-5 at batch 32
 * and ResNet-20 at batch 128 (examples/torch/), on synthetic data of their input sizes.
 * Blocks of each alternate, three apiece, and the best block of each is kept. Each case
 * prints three lines in the format of sim/bench.h: NAME (samples per wall second against the
 * plain loop's), NAME_cpu (samples per CPU second, hetsim's thread and the server's process
 * against the server's: what a shared machine's other loads do not change) and NAME_overhead
 * (wall microseconds per request spent outside the server's computation: the copies, the
 * socket and its two wake-ups, hetsim's step; against a plain step's microseconds).
 *
 * Needs a python3 with PyTorch and the examples (the source tree's, or an installed
 * hetsim's share/hetsim/examples/torch). Takes about a minute.
 */
#ifndef MODELS_TORCH_BENCH_H
#define MODELS_TORCH_BENCH_H

#include <stdio.h>

#include "sim/err.h"

/* Prints the lines above. SIM_EIO without the examples or when a server fails, SIM_ESCENARIO
 * when PyTorch is missing, SIM_ENOMEM. */
int torch_bench(FILE *out, sim_err *err);

#endif
