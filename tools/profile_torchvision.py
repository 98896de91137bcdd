#!/usr/bin/env python3
"""Writes hetsim profiles (data/profiles/<name>.csv) for torchvision's image models.

Each row is one module that holds parameters of its own (a convolution, a batch norm, a
linear layer), in the order a forward pass runs them, counted by the rules of
tools/profile_rules.py on a 3x224x224 input: parameters exactly (their sum is the model's
parameter count); forward FLOPs per sample from each layer's shapes, counting the matrix
products only, 2 per multiply-add, as hetsim's own models do:
    convolution: 2 * C_out * H_out * W_out * (C_in / groups) * k_h * k_w
    linear:      2 * D_in * D_out
    batch norm:  0 (element-wise work: its time is in its bytes)
the layer's kind, and the bytes per sample its own operations and the parameter-free ones
after it (activations, pooling, residual additions) read and write. No weights are loaded:
the models are built with random initialization.

usage: profile_torchvision.py OUTDIR [MODEL[@SIZE]...]   (default: the six shipped models)
MODEL is a torchvision.models builder, resnext101_32x4d or se_resnext101_32x4d (built from
torchvision's ResNet as NVIDIA's DeepLearningExamples define them), or inception_v3 (without
its auxiliary classifier, as timm builds it); @SIZE profiles a SIZExSIZE input instead of
224x224, written to MODEL-SIZE.csv.
Needs python3-torchvision (Debian).
"""
import os
import sys

import torch
import torchvision

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from profile_rules import COLUMNS, layer_rows  # noqa: E402

MODELS = ["resnet18", "resnet50", "resnet101", "vgg16", "mobilenet_v2", "densenet121"]


class SEBottleneck(torchvision.models.resnet.Bottleneck):
    """DeepLearningExamples' SE-ResNeXt block (PyTorch/Classification/ConvNets/
    image_classification/models/resnet.py and common.py): a squeeze-and-excitation of 16
    units on the block's output (spatial mean, linear, ReLU, linear, sigmoid), merged into
    the residual by one multiply-add, then ReLU."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        width = self.conv3.out_channels
        self.squeeze = torch.nn.Linear(width, 16)
        self.expand = torch.nn.Linear(16, width)

    def forward(self, x):
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.relu(self.bn2(self.conv2(out)))
        out = self.bn3(self.conv3(out))
        residual = x if self.downsample is None else self.downsample(x)
        se = torch.sigmoid(self.expand(torch.relu(self.squeeze(torch.mean(out, [2, 3])))))
        return self.relu(torch.addcmul(residual, out, se[:, :, None, None]))


EXTRA = {
    "resnext101_32x4d": lambda: torchvision.models.resnet.ResNet(
        torchvision.models.resnet.Bottleneck, [3, 4, 23, 3], groups=32, width_per_group=4),
    "se_resnext101_32x4d": lambda: torchvision.models.resnet.ResNet(
        SEBottleneck, [3, 4, 23, 3], groups=32, width_per_group=4),
    "inception_v3": lambda: torchvision.models.inception_v3(aux_logits=False,
                                                             init_weights=False),
}


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    out = sys.argv[1]
    for spec in sys.argv[2:] or MODELS:
        name, _, size = spec.partition("@")
        side = int(size) if size else 224
        torch.manual_seed(0)
        model = EXTRA[name]() if name in EXTRA else getattr(torchvision.models, name)()
        rows = layer_rows(model, (3, side, side))
        file = name + ("-%d" % side if size else "")
        with open("%s/%s.csv" % (out, file), "w") as f:
            f.write("# %s from torchvision %s: parameters exact, forward FLOPs per sample from "
                    "the layer shapes on a 3x%dx%d input (matrix products, 2 per "
                    "multiply-add), kinds and bytes per sample by tools/profile_rules.py; "
                    "tools/profile_torchvision.py\n" % (name, torchvision.__version__, side,
                                                        side))
            f.write(",".join(COLUMNS) + "\n")
            for r in rows:
                f.write(",".join(str(r[c]) for c in COLUMNS) + "\n")
        print("%s: %d layers, %d parameters, %.3f GFLOPs and %.1f MB forward per sample"
              % (file, len(rows), sum(r["params"] for r in rows),
                 sum(r["forward_flops"] for r in rows) / 1e9,
                 sum(r["forward_bytes"] + r["elementwise_bytes"] for r in rows) / 1e6))


if __name__ == "__main__":
    main()
