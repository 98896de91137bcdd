"""A user's model module (docs/torch.md, "The module's contract"): loading it, calling its
functions with the scenario's arguments, and checking what they return.

A module is a Python file defining
  build(**args) -> torch.nn.Module             required
  data(**args) -> {"train": (x, y), "test": (x, y)}   optional: the module's own data
  loss(output, target) -> scalar tensor        optional: default cross-entropy
  correct(output, target) -> int               optional: default arg max equal to the label
where args are the scenario's `workload.model` keys but name, module and device, plus, when
the function names them, `input_shape` (a sample's shape), `classes` and `base_dir` (the
scenario file's folder, to resolve paths against).

Every check raises ContractError with a message that names what is wrong, for hetsim to
print after the module's file name.
"""
import importlib.util
import inspect
import os
import sys

import torch
import torch.nn.functional as F

# Arguments hetsim itself gives a function that names them.
RESERVED = ("input_shape", "classes", "base_dir")


class ContractError(Exception):
    """The module does not keep the contract (a one-line message for the user); `key`, when
    not None, is the scenario key at fault (an argument of the module)."""

    def __init__(self, message, key=None):
        super().__init__(message)
        self.key = key


# The module file loaded (load), whose lines errors point at.
_user_file = None


def _where(exc):
    """' (line N)' of the innermost frame of `exc` in the module's file, else ' (FILE, line N)'
    of the innermost frame outside this package."""
    tb = exc.__traceback__
    mine, other = "", ""
    while tb is not None:
        f = tb.tb_frame.f_code.co_filename
        if _user_file is not None and os.path.abspath(f) == _user_file:
            mine = " (line %d)" % tb.tb_lineno
        elif not f.startswith(os.path.dirname(os.path.abspath(__file__))):
            other = " (%s, line %d)" % (os.path.basename(f), tb.tb_lineno)
        tb = tb.tb_next
    if isinstance(exc, SyntaxError) and exc.lineno is not None:
        return " (line %d)" % exc.lineno
    return mine or other


def describe(exc):
    """A one-line description of an exception raised by the module's code."""
    msg = str(exc).strip().splitlines()
    return "%s%s%s" % (type(exc).__name__, ": " + msg[0] if msg else "", _where(exc))


def load(path):
    """Imports the module file `path` under a private name."""
    global _user_file
    if not os.path.isfile(path):
        raise ContractError("cannot read the module file")
    _user_file = os.path.abspath(path)
    spec = importlib.util.spec_from_file_location("hetsim_user_module", path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules["hetsim_user_module"] = mod
    try:
        spec.loader.exec_module(mod)
    except Exception as e:  # anything the module's own code raises
        raise ContractError("does not import: " + describe(e)) from e
    if not callable(getattr(mod, "build", None)):
        raise ContractError("has no build() function (the contract: docs/torch.md)")
    for name in ("data", "loss", "correct"):
        if hasattr(mod, name) and not callable(getattr(mod, name)):
            raise ContractError("%s is not a function" % name)
    return mod


def _accepts(fn):
    """(names it takes by keyword, whether it takes **kwargs)."""
    sig = inspect.signature(fn)
    names = {p.name for p in sig.parameters.values()
             if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)}
    return names, any(p.kind == p.VAR_KEYWORD for p in sig.parameters.values())


def check_args(mod, args):
    """Refuses an argument that neither build() nor data() takes, or that overrides one of
    hetsim's own."""
    fns = [mod.build] + ([mod.data] if callable(getattr(mod, "data", None)) else [])
    for key in args:
        if key in RESERVED:
            raise ContractError("is hetsim's to give to the module (the contract: docs/torch.md)",
                                key)
        if not any(key in _accepts(f)[0] or _accepts(f)[1] for f in fns):
            raise ContractError("not an argument of build() or data() in %s"
                                % os.path.basename(_user_file or "the module"), key)


def call(fn, args, given):
    """Calls `fn` with the arguments it takes among `args` and hetsim's `given`."""
    names, var = _accepts(fn)
    kw = {k: v for k, v in list(given.items()) + list(args.items()) if var or k in names}
    try:
        return fn(**kw)
    except ContractError:
        raise
    except Exception as e:
        raise ContractError("%s() failed: %s" % (fn.__name__, describe(e))) from e


def build(mod, args, given):
    """The network, checked: a module whose parameters and floating buffers are float32."""
    net = call(mod.build, args, given)
    if not isinstance(net, torch.nn.Module):
        raise ContractError("build() returned %s, not a torch.nn.Module" % type(net).__name__)
    params = list(net.named_parameters())
    if not params:
        raise ContractError("build() returned a network without parameters")
    for name, p in params:
        if p.dtype != torch.float32:
            raise ContractError("parameter %s is %s: replicas are float32 (build() may call "
                                ".float())" % (name, str(p.dtype).replace("torch.", "")))
    for name, b in net.named_buffers():
        if b.is_floating_point() and b.dtype != torch.float32:
            raise ContractError("buffer %s is %s: floating buffers must be float32"
                                % (name, str(b.dtype).replace("torch.", "")))
    return net


def _pair(part, what):
    if not isinstance(part, (tuple, list)) or len(part) != 2:
        raise ContractError("data()['%s'] must be a pair (inputs, targets)" % what)
    x, y = part
    for t, n in ((x, "inputs"), (y, "targets")):
        if not isinstance(t, torch.Tensor):
            raise ContractError("data()['%s'] %s are %s, not a tensor"
                                % (what, n, type(t).__name__))
    if x.dtype != torch.float32:
        raise ContractError("data()['%s'] inputs are %s, not float32"
                            % (what, str(x.dtype).replace("torch.", "")))
    if x.dim() < 1 or y.dim() < 1 or x.shape[0] != y.shape[0] or x.shape[0] < 1:
        raise ContractError("data()['%s'] has %s inputs for %s targets"
                            % (what, tuple(x.shape[:1]), tuple(y.shape[:1])))
    return x.contiguous(), y.contiguous()


def data(mod, args, given):
    """The module's own data: ((x, y) train, (x, y) test), checked."""
    d = call(mod.data, args, given)
    if isinstance(d, (tuple, list)) and len(d) == 2:
        d = {"train": d[0], "test": d[1]}
    if not isinstance(d, dict) or "train" not in d or "test" not in d:
        raise ContractError("data() must return {'train': (x, y), 'test': (x, y)}")
    tr, te = _pair(d["train"], "train"), _pair(d["test"], "test")
    if tr[0].shape[1:] != te[0].shape[1:]:
        raise ContractError("data(): test inputs of shape %s, training inputs %s"
                            % (tuple(te[0].shape[1:]), tuple(tr[0].shape[1:])))
    return tr, te


def default_loss(output, target):
    return F.cross_entropy(output, target)


def default_correct(output, target):
    return int((output.argmax(dim=1) == target).sum())


class Task:
    """The module's loss and count of correct predictions (its own, or the defaults), checked
    against one batch's output by check_output."""

    def __init__(self, mod):
        self.custom_loss = callable(getattr(mod, "loss", None))
        self.loss = mod.loss if self.custom_loss else default_loss
        self.correct = mod.correct if callable(getattr(mod, "correct", None)) \
            else default_correct

    def check_output(self, out, y, classes):
        """Refuses an output or loss of the wrong type or shape (the probe's batch)."""
        if not isinstance(out, torch.Tensor):
            raise ContractError("the network returned %s, not a tensor" % type(out).__name__)
        if out.dtype != torch.float32:
            raise ContractError("the network returned %s, not float32"
                                % str(out.dtype).replace("torch.", ""))
        if not self.custom_loss:
            if out.dim() != 2 or out.shape[0] != y.shape[0]:
                raise ContractError("the network returned shape %s for a batch of %d: the "
                                    "default loss needs (batch, classes)"
                                    % (tuple(out.shape), y.shape[0]))
            if classes is not None and out.shape[1] != classes:
                raise ContractError("the network returned %d scores per sample for %d classes"
                                    % (out.shape[1], classes))
        loss = self.loss(out, y)
        if not isinstance(loss, torch.Tensor) or loss.dim() != 0 or \
                loss.dtype != torch.float32:
            raise ContractError("loss() must return a float32 scalar tensor, got %s"
                                % (tuple(loss.shape) if isinstance(loss, torch.Tensor)
                                   else type(loss).__name__))
        return loss
