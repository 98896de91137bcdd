"""A network whose hidden layer runs twice in one forward pass (tests/test_torch.c): it
trains, timed as one layer, but has no layers by tools/profile_model.py's rules."""
import torch.nn as nn


class Net(nn.Module):
    def __init__(self, features, classes):
        super().__init__()
        self.inp = nn.Linear(features, 8)
        self.hidden = nn.Linear(8, 8)
        self.out = nn.Linear(8, classes)

    def forward(self, x):
        h = self.inp(x).relu()
        h = self.hidden(self.hidden(h).relu()).relu()
        return self.out(h)


def build(input_shape, classes):
    return Net(input_shape[0], classes)
