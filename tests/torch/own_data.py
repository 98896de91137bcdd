"""A module with its own data (tests/test_torch.c): two Gaussian classes in 6 dimensions drawn
from a fixed generator, 600 training and 200 test examples."""
import torch
import torch.nn as nn


def data(shift=2.0):
    g = torch.Generator().manual_seed(11)
    y = torch.randint(0, 2, (800,), generator=g)
    x = torch.randn(800, 6, generator=g) + shift * y[:, None].float()
    return {"train": (x[:600], y[:600]), "test": (x[600:], y[600:])}


def build(input_shape, classes):
    return nn.Linear(input_shape[0], classes)
