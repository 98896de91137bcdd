"""A small transformer on a synthetic sequence task: which of 8 tokens occurs most often in a
sequence of 16 (ties going to the smallest), from the module's own data, 20,000 training and
2,000 test sequences drawn from a fixed generator. Two pre-norm encoder blocks of width 32
with 4 attention heads, written from nn.Linear layers (so that every layer runs as called,
as hetsim's layer rules need: docs/torch.md), token and position embeddings, mean pooling and
a dense classifier; dropout 0.1. Inputs are the token ids as float32 (the contract's inputs
are float32), turned back into integers in forward().

    "workload": {"model": {"name": "torch", "module": "transformer.py"}, "batch": 16, ...}
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


def data(vocab=8, length=16, train=20000, test=2000, seed=7):
    g = torch.Generator().manual_seed(seed)
    x = torch.randint(0, vocab, (train + test, length), generator=g)
    counts = F.one_hot(x, vocab).sum(1)
    # arg max of the counts, the smallest token on ties (counts are < length + 1).
    y = (counts * (vocab + 1) - torch.arange(vocab)).argmax(1)
    x = x.float()
    return {"train": (x[:train], y[:train]), "test": (x[train:], y[train:])}


class Attention(nn.Module):
    def __init__(self, width, heads, dropout):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(width, 3 * width)
        self.out = nn.Linear(width, width)
        self.drop = nn.Dropout(dropout)

    def forward(self, x):
        b, t, w = x.shape
        q, k, v = self.qkv(x).view(b, t, 3, self.heads, w // self.heads).permute(2, 0, 3, 1, 4)
        a = (q @ k.transpose(-2, -1)) / math.sqrt(w // self.heads)
        y = self.drop(a.softmax(-1)) @ v
        return self.out(y.transpose(1, 2).reshape(b, t, w))


class EncoderBlock(nn.Module):
    def __init__(self, width, heads, hidden, dropout):
        super().__init__()
        self.norm1 = nn.LayerNorm(width)
        self.attn = Attention(width, heads, dropout)
        self.norm2 = nn.LayerNorm(width)
        self.fc1 = nn.Linear(width, hidden)
        self.fc2 = nn.Linear(hidden, width)
        self.drop = nn.Dropout(dropout)

    def forward(self, x):
        x = x + self.drop(self.attn(self.norm1(x)))
        return x + self.drop(self.fc2(F.gelu(self.fc1(self.norm2(x)))))


class Transformer(nn.Module):
    def __init__(self, vocab, length, classes, width, heads, blocks, dropout):
        super().__init__()
        self.tokens = nn.Embedding(vocab, width)
        self.positions = nn.Embedding(length, width)
        self.blocks = nn.Sequential(*[EncoderBlock(width, heads, 2 * width, dropout)
                                      for _ in range(blocks)])
        self.norm = nn.LayerNorm(width)
        self.head = nn.Linear(width, classes)

    def forward(self, x):
        ids = x.long()
        pos = torch.arange(ids.shape[1], device=ids.device)
        h = self.blocks(self.tokens(ids) + self.positions(pos))
        return self.head(self.norm(h).mean(1))


def build(input_shape, classes, vocab=8, width=32, heads=4, blocks=2, dropout=0.1):
    return Transformer(vocab, input_shape[0], classes, width, heads, blocks, dropout)
