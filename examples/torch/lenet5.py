"""LeNet-5 (LeCun et al., 1998) for Fashion-MNIST's 28x28 images: two 5x5 convolutions of 6 and
16 channels, the first padded by 2 pixels (the original took 32x32 inputs), each followed by a
2x2 pooling, then dense layers of 120 and 84 units; ReLU and max pooling, as its common modern
form. 61,706 parameters. With a flat data set (the synthetic one of `hetsim bench torch`,
784 features) the input is first reshaped to an image.

    "model": {"name": "torch", "module": "lenet5.py"}
"""
import torch.nn as nn


def build(input_shape=(1, 28, 28), classes=10):
    layers = []
    if len(input_shape) == 1:
        layers.append(nn.Unflatten(1, (1, 28, 28)))
    layers += [
        nn.Conv2d(1, 6, 5, padding=2), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(6, 16, 5), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(),
        nn.Linear(16 * 5 * 5, 120), nn.ReLU(),
        nn.Linear(120, 84), nn.ReLU(),
        nn.Linear(84, classes),
    ]
    return nn.Sequential(*layers)
