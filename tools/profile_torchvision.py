#!/usr/bin/env python3
"""Writes hetsim profiles (data/profiles/<name>.csv) for torchvision's image models.

Each row is one module that holds parameters of its own (a convolution, a batch norm, a
linear layer), in the order a forward pass runs them. Parameters are counted exactly (their
sum is the model's parameter count); forward FLOPs per sample come from each layer's shapes
on a 3x224x224 input, counting the matrix products only, 2 per multiply-add, as hetsim's own
models do:
    convolution: 2 * C_out * H_out * W_out * (C_in / groups) * k_h * k_w
    linear:      2 * D_in * D_out
    batch norm:  0 (element-wise work, a few percent of the total)
No weights are loaded: the models are built with random initialization.

usage: profile_torchvision.py OUTDIR [MODEL...]   (default: the six shipped models)
Needs python3-torchvision (Debian).
"""
import sys

import torch
import torchvision

from profile_model import layer_flops

MODELS = ["resnet18", "resnet50", "resnet101", "vgg16", "mobilenet_v2", "densenet121"]


def layer_rows(model, shape=(1, 3, 224, 224)):
    rows, seen = [], set()
    names = {m: n for n, m in model.named_modules()}

    def hook(mod, inputs, output):
        if mod in seen:
            raise SystemExit("module %s runs twice in one forward pass" % names[mod])
        seen.add(mod)
        params = sum(p.numel() for p in mod.parameters(recurse=False))
        rows.append((names[mod], params, layer_flops(mod, output)))

    handles = [m.register_forward_hook(hook) for m in model.modules()
               if any(True for _ in m.parameters(recurse=False))]
    model.eval()
    with torch.no_grad():
        model(torch.zeros(shape))
    for h in handles:
        h.remove()
    total = sum(p.numel() for p in model.parameters())
    if sum(r[1] for r in rows) != total:
        raise SystemExit("parameters do not add up: %d of %d" % (sum(r[1] for r in rows), total))
    return rows


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    out = sys.argv[1]
    for name in sys.argv[2:] or MODELS:
        torch.manual_seed(0)
        model = getattr(torchvision.models, name)()
        rows = layer_rows(model)
        with open("%s/%s.csv" % (out, name), "w") as f:
            f.write("# %s from torchvision %s: parameters exact, forward FLOPs per sample from "
                    "the layer shapes on a 3x224x224 input (matrix products, 2 per "
                    "multiply-add); tools/profile_torchvision.py\n" % (name, torchvision.__version__))
            f.write("name,params,forward_flops\n")
            for n, p, fl in rows:
                f.write("%s,%d,%d\n" % (n, p, fl))
        print("%s: %d layers, %d parameters, %.3f GFLOPs forward per sample"
              % (name, len(rows), sum(r[1] for r in rows), sum(r[2] for r in rows) / 1e9))


if __name__ == "__main__":
    main()
