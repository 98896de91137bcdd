#!/usr/bin/env python3
"""Writes a hetsim profile (compute.profile, docs/scenario.md) for your own PyTorch model,
with per-layer forward and backward times measured on your device.

usage: profile_model.py FILE.py:FACTORY --input C,H,W [--batch N] [--device cpu|cuda]
                        [--warmup N] [--repeats N] [--dtype float32] -o OUT.csv

FACTORY is a function (or class) in FILE.py that takes no arguments and returns an
nn.Module taking a batch of shape (N, C, H, W) (any input shape: give all its dimensions but
the batch one). A layer is a module holding parameters of its own (a convolution, a batch
norm, a linear layer), in the order the forward pass runs them; its row gives its parameters
(exactly), its forward FLOPs per sample from its shapes (matrix products, 2 per multiply-add:
convolutions and linear layers; 0 for the rest), its measured forward and backward
milliseconds per iteration of --batch samples, the median over --repeats iterations after
--warmup, and its kind and bytes per sample (what a device's roofline times it by when the
scenario names a compute.device), all by the rules of tools/profile_rules.py. The time between two layers (activations, pooling) counts towards the later one
in each pass, so the rows add up to the whole iteration. The backward pass is timed from the
end of the forward pass to each layer's last parameter gradient (tensor hooks), with a
synchronisation at every hook on CUDA devices. The loss is the sum of the outputs: its own
cost is negligible beside the model's.

OUT.csv is written whole (a temporary file beside it, renamed) and refused when it is no
regular file or lies inside a hetsim output (tools/profile_write.py).

Scenarios using the profile then take its measured times as the base iteration time (unless
compute.iteration_ms, gflops or device is given): run them with workload.batch = --batch.
"""
import argparse
import importlib.util
import os
import statistics
import sys
import time

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from profile_rules import layer_flops, layer_rows, own_params  # noqa: E402,F401
from profile_write import refusal, write_profile  # noqa: E402


def profile(model, x, warmup, repeats):
    cuda = x.is_cuda
    sync = torch.cuda.synchronize if cuda else (lambda: None)
    layers = [m for m in model.modules() if own_params(m) > 0]
    names = {m: n for n, m in model.named_modules()}
    flops, fwd_t, bwd_t = {}, {}, {}

    def post(mod, inputs, output):
        sync()
        if mod in fwd_t:
            raise SystemExit("module %s runs twice in one forward pass" % names[mod])
        fwd_t[mod] = time.perf_counter()
        flops[mod] = layer_flops(mod, output)

    def grad_hook(mod):
        def hook(grad):
            sync()
            bwd_t[mod] = time.perf_counter()  # the last of its parameters' gradients
        return hook

    handles = [m.register_forward_hook(post) for m in layers]
    for m in layers:
        for p in m.parameters(recurse=False):
            if p.requires_grad:
                handles.append(p.register_hook(grad_hook(m)))
    fwd_ms = {m: [] for m in layers}
    bwd_ms = {m: [] for m in layers}
    order = None
    model.train()
    for it in range(warmup + repeats):
        model.zero_grad(set_to_none=True)
        fwd_t.clear()
        bwd_t.clear()
        sync()
        t0 = time.perf_counter()
        out = model(x)
        sync()
        t1 = time.perf_counter()
        out.float().sum().backward()
        sync()
        t2 = time.perf_counter()
        if order is None:
            order = sorted(fwd_t, key=fwd_t.get)
        if it < warmup:
            continue
        prev = t0
        for i, m in enumerate(order):
            end = t1 if i == len(order) - 1 else fwd_t[m]
            fwd_ms[m].append((end - prev) * 1e3)
            prev = end
        back = sorted(bwd_t, key=bwd_t.get)
        prev = t1
        for i, m in enumerate(back):
            end = t2 if i == len(back) - 1 else bwd_t[m]
            bwd_ms[m].append((end - prev) * 1e3)
            prev = end
    for h in handles:
        h.remove()
    rows = []
    for m in order:
        b = statistics.median(bwd_ms[m]) if bwd_ms[m] else 0.0
        rows.append((names[m], own_params(m), flops[m], statistics.median(fwd_ms[m]), b))
    total = sum(p.numel() for p in model.parameters())
    if sum(r[1] for r in rows) != total:
        raise SystemExit("parameters do not add up (%d of %d): a layer did not run"
                         % (sum(r[1] for r in rows), total))
    return rows


def load_factory(spec):
    path, _, name = spec.rpartition(":")
    if not path or not name:
        raise SystemExit("expected FILE.py:FACTORY, got %r" % spec)
    mod_spec = importlib.util.spec_from_file_location("user_model", path)
    module = importlib.util.module_from_spec(mod_spec)
    mod_spec.loader.exec_module(module)
    return getattr(module, name)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("factory")
    ap.add_argument("--input", required=True, help="per-sample shape, e.g. 3,224,224")
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--dtype", default="float32")
    ap.add_argument("--warmup", type=int, default=2)
    ap.add_argument("--repeats", type=int, default=10)
    ap.add_argument("-o", "--output", required=True)
    a = ap.parse_args()
    if refusal(a.output) is not None:  # before the measurements, not after them
        raise SystemExit(refusal(a.output))
    torch.manual_seed(0)
    dtype = getattr(torch, a.dtype)
    model = load_factory(a.factory)().to(device=a.device, dtype=dtype)
    shape = [a.batch] + [int(s) for s in a.input.split(",")]
    x = torch.randn(shape, device=a.device, dtype=dtype)
    static = layer_rows(model, shape[1:])
    rows = profile(model, x, a.warmup, max(1, a.repeats))
    if [r[0] for r in rows] != [r["name"] for r in static]:
        raise SystemExit("the layers run in a different order on a second pass")
    comment = ("%s measured on %s (%s, batch %d, median of %d iterations, torch %s); "
               "kinds and bytes by tools/profile_rules.py; tools/profile_model.py"
               % (a.factory, a.device, a.dtype, a.batch, a.repeats, torch.__version__))
    write_profile(a.output, comment,
                  [[n, "%d" % p, "%d" % fl, "%.6f" % fm, "%.6f" % bm, r["kind"],
                    "%d" % r["forward_bytes"], "%d" % r["elementwise_bytes"]]
                   for (n, p, fl, fm, bm), r in zip(rows, static)])
    print("%s: %d layers, %d parameters, %.3f ms per iteration of %d samples"
          % (a.output, len(rows), sum(r[1] for r in rows), sum(r[3] + r[4] for r in rows), a.batch))


if __name__ == "__main__":
    sys.exit(main())
