"""The rules that turn a PyTorch module into the rows of a hetsim profile live in hetsim's
Python package, python/hetsim/profile_rules.py, one code for the profile_*.py tools and the
model server's compute.profile "module" (docs/torch.md). This module re-exports them for the
tools, which import profile_rules from this folder."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
from hetsim.profile_rules import (COLUMNS, KINDS, NORMS, layer_flops, layer_kind,  # noqa: E402,F401
                                  layer_rows, own_params)
