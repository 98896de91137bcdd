"""hetsim's Python package (docs/torch.md): the model server that computes a PyTorch
module's gradients for hetsim (hetsim.server, started by hetsim itself; its layer rules in
hetsim.profile, shared with tools/profile_model.py)."""
__version__ = "0.1.0"
