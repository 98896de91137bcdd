"""A torch model's layers (docs/torch.md, "Timing"): the rows hetsim.profile_rules gives a
module, which tools/profile_model.py writes into profile CSVs too, so that compute.profile
"module" counts as a measured profile does; or, for a module that breaks those rules (a
module run twice in one forward pass, a parameter no layer runs with), one row of every
parameter with the FLOPs of the passes that ran, and the rule it breaks.
"""
import torch

from hetsim.profile_rules import layer_flops, layer_rows, own_params


def fallback_row(model, sample_shape):
    """One row "model": every parameter, and the forward FLOPs of one sample over every pass
    of a layer (repeated ones included), from a forward pass over two zero samples."""
    flops = [0]

    def post(mod, inputs, output):
        flops[0] += layer_flops(mod, output)

    handles = [m.register_forward_hook(post) for m in model.modules() if own_params(m) > 0]
    p = next(model.parameters())
    x = torch.zeros((2,) + tuple(sample_shape), dtype=p.dtype, device=p.device)
    try:
        with torch.no_grad():
            model(x)
    finally:
        for h in handles:
            h.remove()
    return {"name": "model", "params": sum(q.numel() for q in model.parameters()),
            "forward_flops": flops[0], "kind": "other", "forward_bytes": 0,
            "elementwise_bytes": 0}


def module_layers(model, sample_shape):
    """(rows, None) by the rules, or ([fallback_row], the rule broken)."""
    try:
        return layer_rows(model, sample_shape), None
    except SystemExit as e:  # the rules' refusal
        return [fallback_row(model, sample_shape)], str(e)
