"""A network with BatchNorm for hetsim's tests (tests/test_torch.c): each worker's running
statistics are its own, and evaluations use their mean."""
import torch.nn as nn


def build(input_shape, classes, hidden=12):
    return nn.Sequential(nn.Linear(input_shape[0], hidden), nn.BatchNorm1d(hidden), nn.ReLU(),
                         nn.Linear(hidden, classes))
