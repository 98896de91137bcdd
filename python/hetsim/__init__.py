"""hetsim's Python package (docs/torch.md): the model server that computes a PyTorch
module's gradients for hetsim (hetsim.server, started by hetsim itself; its layer rules in
hetsim.profile, shared with tools/profile_model.py), and a small results API (hetsim.results):
runs and sweeps as pandas DataFrames, scenarios given as dicts run through the binary.

It imports from the checkout (python/ on sys.path) or installs offline with
`pip install ./python`.
"""
from hetsim.results import (Run, RunError, Sweep, find_binary, load, load_run, load_sweep,
                            run)

__all__ = ["Run", "RunError", "Sweep", "find_binary", "load", "load_run", "load_sweep", "run"]
__version__ = "0.1.0"
