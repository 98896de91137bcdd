# Refused by hetsim (tests/test_torch.c): one score too many per sample.
import torch.nn as nn


def build(input_shape, classes):
    return nn.Linear(input_shape[0], classes + 1)
