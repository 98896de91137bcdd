#!/usr/bin/env python3
"""A plain PyTorch training loop on one process: the reference hetsim's runs of a module are
measured against (docs/torch.md, "A walk-through"). It trains a module of hetsim's contract
(docs/torch.md) with torch.optim.SGD on shuffled minibatches for a number of epochs and prints
the test accuracy and loss at the end, on Fashion-MNIST read as hetsim reads it (the Debian
package's IDX files, pixels / 255) or on the module's own data().

usage: plain_loop.py MODULE.py [--data fashion-mnist|module] [--batch 32] [--lr 0.05]
                     [--momentum 0.9] [--epochs 1] [--seed 1] [--test-samples N] [--threads 1]
"""
import argparse
import gzip
import os
import sys

import numpy
import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))
from hetsim import module as contract  # noqa: E402

FMNIST = "/usr/share/datasets/fashion-mnist"


def idx(path, offset):
    with gzip.open(path, "rb") as f:
        return numpy.frombuffer(f.read(), dtype=numpy.uint8, offset=offset)


def fashion_mnist(folder):
    def part(images, labels):
        x = idx(os.path.join(folder, images), 16).astype(numpy.float32) / 255.0
        y = idx(os.path.join(folder, labels), 8).astype(numpy.int64)
        return torch.from_numpy(x).view(-1, 1, 28, 28), torch.from_numpy(y)
    return (part("train-images-idx3-ubyte.gz", "train-labels-idx1-ubyte.gz"),
            part("t10k-images-idx3-ubyte.gz", "t10k-labels-idx1-ubyte.gz"))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("module")
    ap.add_argument("--data", default="fashion-mnist", choices=["fashion-mnist", "module"])
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--lr", type=float, default=0.05)
    ap.add_argument("--momentum", type=float, default=0.9)
    ap.add_argument("--epochs", type=float, default=1.0)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--test-samples", type=int, default=0)
    ap.add_argument("--threads", type=int, default=1)
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    mod = contract.load(a.module)
    task = contract.Task(mod)
    given = {"base_dir": os.path.dirname(os.path.abspath(a.module))}
    if a.data == "module":
        (xtr, ytr), (xte, yte) = contract.data(mod, {}, given)
        if ytr.dim() == 1 and not ytr.is_floating_point():  # as the model server gives it
            given["classes"] = int(ytr.max()) + 1
    else:
        (xtr, ytr), (xte, yte) = fashion_mnist(FMNIST)
        given["classes"] = 10
    given["input_shape"] = tuple(xtr.shape[1:])
    if a.test_samples > 0:
        xte, yte = xte[:a.test_samples], yte[:a.test_samples]
    torch.manual_seed(a.seed)
    net = contract.build(mod, {}, given)
    opt = torch.optim.SGD(net.parameters(), lr=a.lr, momentum=a.momentum)
    g = torch.Generator().manual_seed(a.seed)
    steps = int(round(a.epochs * xtr.shape[0] / a.batch))
    order = torch.randperm(xtr.shape[0], generator=g)
    at = 0
    net.train()
    for _ in range(steps):
        if at + a.batch > order.numel():
            order, at = torch.randperm(xtr.shape[0], generator=g), 0
        idx_ = order[at:at + a.batch]
        at += a.batch
        opt.zero_grad(set_to_none=True)
        task.loss(net(xtr[idx_]), ytr[idx_]).backward()
        opt.step()
    net.eval()
    correct, loss = 0, 0.0
    with torch.no_grad():
        for i in range(0, xte.shape[0], 256):
            out = net(xte[i:i + 256])
            loss += float(task.loss(out, yte[i:i + 256])) * out.shape[0]
            correct += task.correct(out, yte[i:i + 256])
    print("seed %d: %d steps of %d, test accuracy %.4f, test loss %.4f"
          % (a.seed, steps, a.batch, correct / xte.shape[0], loss / xte.shape[0]))


if __name__ == "__main__":
    main()
