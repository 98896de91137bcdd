"""A small network with dropout for hetsim's tests (tests/test_torch.c): every protocol's
chaos runs, the thread-count determinism, the server's failures (die_after)."""
import torch.nn as nn

calls = 0


class Net(nn.Module):
    def __init__(self, features, classes, hidden, dropout, die_after):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(features, hidden), nn.ReLU(), nn.Dropout(dropout),
                                  nn.Linear(hidden, classes))
        self.die_after = die_after

    def forward(self, x):
        global calls
        calls += 1
        if calls == self.die_after:
            raise RuntimeError("deliberately dying at call %d" % calls)
        return self.body(x)


def build(input_shape, classes, hidden=16, dropout=0.2, die_after=0):
    return Net(input_shape[0], classes, hidden, dropout, die_after)
