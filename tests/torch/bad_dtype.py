# Refused by hetsim (tests/test_torch.c): float64 parameters.
import torch.nn as nn


def build(input_shape, classes):
    return nn.Sequential(nn.Linear(input_shape[0], 4), nn.Linear(4, classes)).double()
