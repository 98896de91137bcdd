"""The rules that turn a PyTorch module into the rows of a hetsim profile (docs/scenario.md,
Profiles), shared by tools/profile_model.py, tools/profile_torchvision.py (which import them
through tools/profile_rules.py), the model server's compute.profile "module"
(hetsim.profile, docs/torch.md) and whatever else derives a profile from a module, so that
every profile counts alike.

A layer is a module holding parameters of its own (a convolution, a batch norm, a linear
layer), in the order a forward pass runs them. Its row gives, for one sample:
  params             its parameters (elements), exactly;
  forward_flops      its matrix products from its output's shape, 2 FLOPs per multiply-add:
                     convolution 2 * C_out * H_out * W_out * (C_in / groups) * k_h * k_w,
                     linear 2 * rows * D_in * D_out; 0 for the rest (element-wise work);
  kind               what bounds its kernels: conv3x3 (a 3x3 convolution of stride 1,
                     dilation 1 and one group: fast algorithms such as Winograd's apply),
                     depthwise (a convolution with one group per input channel: no
                     tensor-core path), conv (any other convolution), matmul (linear layers),
                     norm (batch, layer, group and instance norms), embedding (lookups), other;
  forward_bytes      the bytes its own operations read and write: every tensor an operation
                     inside the layer takes or returns but its weights and buffers (counted
                     from params), views excluded, in-place operations counting their read
                     and their write, floating-point tensors at 4 bytes an element whatever
                     their type (other tensors at their own size);
  elementwise_bytes  the same for the operations that run outside every layer (activations,
                     pooling, residual additions, dropout, softmax, flattening copies),
                     charged to the layer that ran last before them (those before the first
                     layer to the first).
Bytes are counted on a forward pass in training mode over a batch of two, halved; the
backward pass is not traced (hetsim takes it as twice the forward pass, docs/scenario.md).
"""
import torch
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_flatten

KINDS = ("conv3x3", "conv", "matmul", "norm", "embedding", "other", "depthwise")
COLUMNS = ("name", "params", "forward_flops", "kind", "forward_bytes", "elementwise_bytes")
NORMS = (torch.nn.modules.batchnorm._NormBase, torch.nn.LayerNorm, torch.nn.GroupNorm)


def own_params(mod):
    """Parameters (elements) the module holds itself, not through its children."""
    return sum(p.numel() for p in mod.parameters(recurse=False))


def layer_kind(mod):
    if isinstance(mod, torch.nn.modules.conv._ConvNd):
        if mod.groups > 1 and mod.groups == mod.in_channels:
            return "depthwise"
        fast = (tuple(mod.kernel_size) == (3, 3) and tuple(mod.stride) == (1, 1)
                and tuple(mod.dilation) == (1, 1) and mod.groups == 1)
        return "conv3x3" if fast else "conv"
    if isinstance(mod, torch.nn.Linear):
        return "matmul"
    if isinstance(mod, NORMS):
        return "norm"
    if isinstance(mod, (torch.nn.Embedding, torch.nn.EmbeddingBag)):
        return "embedding"
    return "other"


def layer_flops(mod, output):
    """Forward FLOPs of one sample through `mod`, from its output's shape."""
    if isinstance(mod, torch.nn.Conv2d):
        c_in = mod.in_channels // mod.groups
        k = mod.kernel_size[0] * mod.kernel_size[1]
        return 2 * output.shape[1] * output.shape[2] * output.shape[3] * c_in * k
    if isinstance(mod, torch.nn.Linear):
        rows = output.numel() // output.shape[0] // mod.out_features  # tokens per sample
        return 2 * rows * mod.in_features * mod.out_features
    return 0


def _tensor_bytes(t):
    return t.numel() * (4 if t.is_floating_point() else t.element_size())


class _Counter(TorchDispatchMode):
    """Adds each operation's bytes to the layer running it (or that ran last)."""

    def __init__(self, owned, stack, state):
        super().__init__()
        self.owned, self.stack, self.state = owned, stack, state

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        rets = func._schema.returns
        if rets and all(r.alias_info is not None and not r.alias_info.is_write for r in rets):
            return out  # a view: no data moves
        if func._schema.name.startswith("aten::empty"):
            return out
        n = 0
        for t in tree_flatten((args, kwargs))[0]:
            if isinstance(t, torch.Tensor) and t.storage().data_ptr() not in self.owned:
                n += _tensor_bytes(t)
        for t in tree_flatten(out)[0]:
            if isinstance(t, torch.Tensor):
                n += _tensor_bytes(t)
        layer = next((m for m in reversed(self.stack) if own_params(m) > 0), None)
        if layer is not None:
            self.state["own"][layer] = self.state["own"].get(layer, 0) + n
        else:
            last = self.state["last"]
            self.state["extra"][last] = self.state["extra"].get(last, 0) + n
        return out


def layer_rows(model, sample_shape, batch=2):
    """The profile rows of `model` (dicts with COLUMNS' keys) for inputs of `sample_shape`
    (the dimensions of one sample), from one forward pass in training mode over `batch`
    zero samples. Raises SystemExit when a layer runs twice or a parameter is never used."""
    names = {m: n for n, m in model.named_modules()}
    owned = {t.storage().data_ptr() for t in list(model.parameters()) + list(model.buffers())}
    stack, order, flops = [], [], {}
    state = {"own": {}, "extra": {}, "last": None}

    def pre(mod, inputs):
        stack.append(mod)

    def post(mod, inputs, output):
        stack.pop()
        if own_params(mod) == 0:
            return
        if mod in flops:
            raise SystemExit("module %s runs twice in one forward pass" % names[mod])
        flops[mod] = layer_flops(mod, output)
        order.append(mod)
        state["last"] = mod

    handles = [m.register_forward_pre_hook(pre) for m in model.modules()]
    handles += [m.register_forward_hook(post) for m in model.modules()]
    dtype = next(model.parameters()).dtype
    device = next(model.parameters()).device
    x = torch.zeros((batch,) + tuple(sample_shape), dtype=dtype, device=device)
    was_training = model.training
    model.train()
    try:
        with torch.no_grad(), _Counter(owned, stack, state):
            model(x)
    finally:
        model.train(was_training)
        for h in handles:
            h.remove()
    if not order:
        raise SystemExit("the model has no layer holding parameters")
    extra = state["extra"]
    if None in extra:  # operations before the first layer
        extra[order[0]] = extra.get(order[0], 0) + extra.pop(None)
    rows = [{"name": names[m], "params": own_params(m), "forward_flops": flops[m],
             "kind": layer_kind(m), "forward_bytes": round(state["own"].get(m, 0) / batch),
             "elementwise_bytes": round(extra.get(m, 0) / batch)} for m in order]
    total = sum(p.numel() for p in model.parameters())
    if sum(r["params"] for r in rows) != total:
        raise SystemExit("parameters do not add up: %d of %d (a layer did not run)"
                         % (sum(r["params"] for r in rows), total))
    return rows
