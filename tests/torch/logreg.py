"""Softmax regression as hetsim's built-in model computes it (tests/test_torch.c): one linear
layer whose parameters, weight (classes, features) then bias, lie as hetsim's softmax's do;
`weights` names a file of float32 values to start from (the built-in model's first ones)."""
import numpy
import torch
import torch.nn as nn


def build(input_shape, classes, weights=None):
    net = nn.Linear(input_shape[0], classes)
    if weights is not None:
        w = torch.from_numpy(numpy.fromfile(weights, dtype=numpy.float32))
        with torch.no_grad():
            n = net.weight.numel()
            net.weight.copy_(w[:n].view_as(net.weight))
            net.bias.copy_(w[n:])
    return net
