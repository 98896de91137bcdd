# Refused by hetsim (tests/test_torch.c): does not import.
import torch.nn

net = nn.Linear(2, 2)  # noqa: F821


def build():
    return net
