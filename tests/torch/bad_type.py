# Refused by hetsim (tests/test_torch.c): build() returns no module.
import torch.nn as nn


def build(input_shape, classes):
    return [nn.Linear(input_shape[0], classes)]
