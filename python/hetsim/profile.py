"""The layer rules of hetsim's profiles (docs/scenario.md, compute.profile), shared by
tools/profile_model.py (which also measures times) and the model server's
`compute.profile: "module"` (docs/torch.md).

A layer is a module holding parameters of its own (a convolution, a batch norm, a linear
layer), in the order the forward pass runs them. Its row gives its parameters (exactly) and
its forward FLOPs per sample from its output's shape (matrix products, 2 per multiply-add:
convolutions and linear layers; 0 for the rest). A module that runs twice in one forward pass,
or a parameter no layer ran with, breaks the rules: the rows must add up to the whole model.
"""
import torch


class LayerError(Exception):
    """The module does not follow the layer rules (a message for the user)."""


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


def own_params(mod):
    """Parameters held by `mod` itself (not its children)."""
    return sum(p.numel() for p in mod.parameters(recurse=False))


def layer_modules(model):
    """The modules that are layers, in registration order."""
    return [m for m in model.modules() if own_params(m) > 0]


class LayerWatch:
    """Forward hooks on every layer of `model`: after one forward pass, `order` lists the
    layers as they ran and `flops` gives each one's forward FLOPs per sample. `sync` (or None)
    runs before each time stamp (torch.cuda.synchronize on CUDA devices)."""

    def __init__(self, model, sync=None, clock=None):
        self.names = {m: n for n, m in model.named_modules()}
        self.layers = layer_modules(model)
        self.sync = sync
        self.clock = clock
        self.stamp = {}
        self.flops = {}
        self.repeated = []
        self.handles = [m.register_forward_hook(self._post) for m in self.layers]

    def _post(self, mod, inputs, output):
        if self.sync is not None:
            self.sync()
        if mod in self.stamp:  # against the rules: check_complete says so
            self.repeated.append(self.names[mod])
            self.flops[mod] += layer_flops(mod, output)
            return
        self.stamp[mod] = self.clock() if self.clock is not None else len(self.stamp)
        self.flops[mod] = layer_flops(mod, output)

    def clear(self):
        self.stamp.clear()
        self.repeated = []

    def order(self):
        """The layers in the order the last forward pass ran them."""
        return sorted(self.stamp, key=self.stamp.get)

    def check_complete(self, model):
        """Refuses a model one of whose layers ran twice in the last forward pass, or whose
        layers did not all run (their parameters would be left out)."""
        if self.repeated:
            raise LayerError("module %s runs twice in one forward pass" % self.repeated[0])
        total = sum(p.numel() for p in model.parameters())
        ran = sum(own_params(m) for m in self.stamp)
        if ran != total:
            idle = [self.names[m] for m in self.layers if m not in self.stamp]
            raise LayerError("parameters do not add up (%d of %d): layer %s did not run"
                             % (ran, total, ", ".join(idle[:3]) or "?"))

    def remove(self):
        for h in self.handles:
            h.remove()
        self.handles = []


def module_layers(model, x, strict=True):
    """The rows (name, params, forward FLOPs per sample) of `model` on the batch `x`, in the
    order its forward pass runs them (one forward pass, without gradients), and None; or, when
    the model breaks the rules and not `strict`, one row "model" of all its parameters and the
    FLOPs of the layers that ran, and the rule it breaks (strict: LayerError)."""
    watch = LayerWatch(model)
    try:
        with torch.no_grad():
            model(x)
        try:
            watch.check_complete(model)
        except LayerError as e:
            if strict:
                raise
            total = sum(p.numel() for p in model.parameters())
            return [("model", total, int(sum(watch.flops.values())))], str(e)
        return [(watch.names[m], own_params(m), int(watch.flops[m])) for m in watch.order()], None
    finally:
        watch.remove()
