"""ResNet-20 for CIFAR-10 (He et al., "Deep Residual Learning for Image Recognition", 2016,
section 4.2): a 3x3 convolution of 16 channels, then three stages of three basic blocks (two
3x3 convolutions, each followed by BatchNorm) of 16, 32 and 64 channels, the first block of
the second and third stages halving the image with a stride of 2 and its shortcut padding the
channels with zeros ("option A"), then global average pooling and a dense layer: 20 weight
layers, 269,722 parameters, and BatchNorm's running statistics (each worker's own in hetsim:
docs/torch.md).

data() reads the CIFAR-10 binary version ("cifar-10-batches-bin": data_batch_1.bin ...
data_batch_5.bin and test_batch.bin, each a sequence of 3073-byte records: the label, then
the 32x32 red, green and blue planes), from `dir` (relative to the scenario's folder), and
normalizes each channel by the training set's usual mean and deviation. Training batches are
augmented in the forward pass as the paper's: a random horizontal flip and a random 32x32 crop
of the image padded by 4 pixels, from PyTorch's generator (seeded by hetsim per request).
CIFAR-10 is not packaged: download it from https://www.cs.toronto.edu/~kriz/cifar.html.

    "workload": {"model": {"name": "torch", "module": "resnet20.py",
                           "dir": "cifar-10-batches-bin"}, "batch": 128, ...}
"""
import glob
import os

import numpy
import torch
import torch.nn as nn
import torch.nn.functional as F

MEAN = (0.4914, 0.4822, 0.4465)
STD = (0.2470, 0.2435, 0.2616)
RECORD = 1 + 3 * 32 * 32


def read_batches(files):
    """The records of CIFAR-10 binary files: images (n, 3, 32, 32) float32 in [0, 1], labels."""
    raw = []
    for f in files:
        b = numpy.fromfile(f, dtype=numpy.uint8)
        if b.size == 0 or b.size % RECORD != 0:
            raise ValueError("%s: %d bytes, not a whole number of %d-byte CIFAR-10 records"
                             % (f, b.size, RECORD))
        raw.append(b.reshape(-1, RECORD))
    r = numpy.concatenate(raw)
    y = torch.from_numpy(r[:, 0].astype(numpy.int64))
    if int(y.max()) > 9:
        raise ValueError("labels above 9 in %s" % ", ".join(files))
    x = torch.from_numpy(r[:, 1:].astype(numpy.float32) / 255.0).view(-1, 3, 32, 32)
    return x, y


def normalize(x):
    return (x - torch.tensor(MEAN).view(1, 3, 1, 1)) / torch.tensor(STD).view(1, 3, 1, 1)


def data(dir, base_dir=".", train_samples=0):
    root = os.path.join(base_dir, dir)
    train = sorted(glob.glob(os.path.join(root, "data_batch_*.bin")))
    test = os.path.join(root, "test_batch.bin")
    if not train or not os.path.isfile(test):
        raise FileNotFoundError("%s: no data_batch_*.bin and test_batch.bin (CIFAR-10's binary "
                                "version, https://www.cs.toronto.edu/~kriz/cifar.html)" % root)
    xtr, ytr = read_batches(train)
    xte, yte = read_batches([test])
    if train_samples > 0:
        xtr, ytr = xtr[:train_samples], ytr[:train_samples]
    return {"train": (normalize(xtr), ytr), "test": (normalize(xte), yte)}


class Block(nn.Module):
    def __init__(self, c_in, c_out, stride):
        super().__init__()
        self.conv1 = nn.Conv2d(c_in, c_out, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(c_out)
        self.conv2 = nn.Conv2d(c_out, c_out, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(c_out)
        self.pad = c_out - c_in

    def forward(self, x):
        out = F.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        short = x
        if self.pad > 0:  # option A: subsample, then zero channels
            short = F.pad(x[:, :, ::2, ::2], (0, 0, 0, 0, self.pad // 2, self.pad - self.pad // 2))
        return F.relu(out + short)


class ResNet20(nn.Module):
    def __init__(self, classes, augment, flat):
        super().__init__()
        self.augment, self.flat = augment, flat
        self.conv = nn.Conv2d(3, 16, 3, 1, 1, bias=False)
        self.bn = nn.BatchNorm2d(16)
        blocks, c = [], 16
        for width, stride in ((16, 1), (32, 2), (64, 2)):
            for i in range(3):
                blocks.append(Block(c, width, stride if i == 0 else 1))
                c = width
        self.blocks = nn.Sequential(*blocks)
        self.fc = nn.Linear(64, classes)

    def augmented(self, x):
        """A random horizontal flip and a random crop of the image padded by 4, per sample."""
        n = x.shape[0]
        flip = torch.rand(n) < 0.5
        x = torch.where(flip.view(n, 1, 1, 1).to(x.device), x.flip(3), x)
        padded = F.pad(x, (4, 4, 4, 4))
        dy, dx = torch.randint(0, 9, (n,)), torch.randint(0, 9, (n,))
        return torch.stack([padded[i, :, dy[i]:dy[i] + 32, dx[i]:dx[i] + 32] for i in range(n)])

    def forward(self, x):
        if self.flat:
            x = x.view(-1, 3, 32, 32)
        if self.training and self.augment:
            x = self.augmented(x)
        x = F.relu(self.bn(self.conv(x)))
        x = self.blocks(x)
        return self.fc(F.adaptive_avg_pool2d(x, 1).flatten(1))


def build(input_shape=(3, 32, 32), classes=10, augment=True):
    return ResNet20(classes, augment, len(input_shape) == 1)
