"""hetsim's model server (docs/torch.md): computes gradients and evaluations of a user's
PyTorch module for hetsim, which keeps the replicas.

hetsim starts one server per gradient thread as `python3 -m hetsim.server` with three file
descriptors: 3, a stream socket (the control channel); 4, the shared exchange region
(parameters, gradient, floating buffers, sample indices), absent in probe mode; 5, the shared
data region (the scenario's data set, written once by hetsim), absent when the module brings
its own data. Everything bulky travels through the two regions; the socket carries small
fixed-size requests and replies (little-endian):

  request  <IIQqq  op, n, seed, a, b                                          32 bytes
  reply    <iIddqq status, text bytes, loss, seconds, correct, count          40 bytes
           followed by `text bytes` of UTF-8 (a JSON object, or an error message)

The first message is hetsim's configuration (a 4-byte length and a JSON object); the server
answers it with a reply whose text describes the module (probe mode, then it exits) or says it
is ready (serve mode). Status 0 is success; 2, the module does not keep the contract (the text:
{"key": the model section's key at fault or null, "message": why}); 3, PyTorch cannot be
imported. In serve mode an exception raised by the module's
code ends the server: its traceback goes to the server's stderr (hetsim's) and it exits with
status 1; hetsim, reading the end of the socket, fails the run.

Results depend only on the request: one intra-op thread, deterministic algorithms, the
request's seed for any randomness, integer buffers reset before every pass.
"""
import json
import mmap
import os
import socket
import struct
import sys
import time

OP_INIT, OP_GRAD, OP_EVAL, OP_QUIT, OP_BENCH = 1, 2, 3, 4, 5
REQUEST = struct.Struct("<IIQqq")
REPLY = struct.Struct("<iIddqq")
STATUS_OK, STATUS_ERROR, STATUS_CONTRACT, STATUS_NO_TORCH = 0, 1, 2, 3
FD_SOCKET, FD_EXCHANGE, FD_DATA = 3, 4, 5


def send_reply(sock, status=STATUS_OK, text="", loss=0.0, seconds=0.0, correct=0, count=0):
    body = text.encode("utf-8", "replace")
    sock.sendall(REPLY.pack(status, len(body), loss, seconds, correct, count) + body)


def recv_exact(sock, view):
    got = 0
    while got < len(view):
        n = sock.recv_into(view[got:])
        if n == 0:
            return False
        got += n
    return True


def recv_config(sock):
    head = bytearray(4)
    if not recv_exact(sock, memoryview(head)):
        sys.exit(0)
    body = bytearray(struct.unpack("<I", head)[0])
    if not recv_exact(sock, memoryview(body)):
        sys.exit(0)
    # hetsim's parser takes a scenario nested up to 1000 levels (cJSON's limit); Python's
    # decoder, within its default recursion limit of 1000 frames, died near 990 levels of a
    # module's argument with a RecursionError traceback. Decode with room for that depth.
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 4000))
    try:
        return json.loads(body.decode("utf-8"))
    finally:
        sys.setrecursionlimit(limit)


def die_with_parent():
    """Asks the kernel to kill this process when hetsim dies (Linux's PR_SET_PDEATHSIG)."""
    try:
        import ctypes
        ctypes.CDLL(None).prctl(1, 9)
    except Exception:
        pass


def setup_torch(torch):
    torch.set_num_threads(1)
    try:
        torch.set_num_interop_threads(1)
    except RuntimeError:
        pass  # already set: only possible once per process
    torch.use_deterministic_algorithms(True)
    torch.backends.cudnn.benchmark = False


class Slots:
    """The floating state of a network laid out as one flat vector: its parameters (the
    replica) in named_parameters() order, and its floating buffers (each worker's own) in
    named_buffers() order; integer buffers are kept aside, to be reset before every pass."""

    def __init__(self, net):
        self.params = [p for _, p in net.named_parameters()]
        self.bufs, self.ints, seen = [], [], set()
        for _, m in net.named_modules():
            for name, b in m._buffers.items():
                if b is None or id(b) in seen:
                    continue
                seen.add(id(b))
                (self.bufs if b.is_floating_point() else self.ints).append([m, name, b])
        self.ints = [(m, name, b.clone()) for m, name, b in self.ints]
        self.n_params = sum(p.numel() for p in self.params)
        self.n_bufs = sum(b.numel() for _, _, b in self.bufs)

    def write(self, params_out, bufs_out):
        """Copies the network's values into flat float32 tensors."""
        at = 0
        for p in self.params:
            params_out[at:at + p.numel()].copy_(p.detach().reshape(-1))
            at += p.numel()
        at = 0
        for _, _, b in self.bufs:
            bufs_out[at:at + b.numel()].copy_(b.reshape(-1))
            at += b.numel()

    def reset_ints(self):
        for m, name, b in self.ints:
            m._buffers[name].copy_(b)


class Server:
    def __init__(self, cfg, torch):
        from hetsim import module as contract
        from hetsim.profile import module_layers
        self.torch, self.contract, self.cfg = torch, contract, cfg
        self.module_layers = module_layers
        self.device = torch.device(cfg.get("device", "cpu"))
        if self.device.type == "cuda" and not torch.cuda.is_available():
            raise contract.ContractError("PyTorch sees no GPU here (torch.cuda.is_available() "
                                         "is False)", "device")
        if self.device.type == "cuda" and (self.device.index or 0) >= torch.cuda.device_count():
            raise contract.ContractError("PyTorch sees %d GPU(s), no %s"
                                         % (torch.cuda.device_count(), self.device), "device")
        self.mod = contract.load(cfg["module"])
        self.args = cfg.get("args", {})
        contract.check_args(self.mod, self.args)
        self.task = contract.Task(self.mod)
        self.given = {"base_dir": cfg.get("base_dir", ".")}
        if cfg.get("data") is not None:
            self.map_data(cfg["data"])
        else:
            if not callable(getattr(self.mod, "data", None)):
                raise contract.ContractError("has no data() and the scenario no "
                                             "workload.dataset: there is nothing to train on")
            (self.train_x, self.train_y), (self.test_x, self.test_y) = \
                contract.data(self.mod, self.args, self.given)
            self.given["input_shape"] = tuple(self.train_x.shape[1:])
            if self.train_y.dim() == 1 and not self.train_y.is_floating_point():
                self.given["classes"] = int(self.train_y.max()) + 1
            self.classes = None
        self.train_x, self.train_y = self.to_device(self.train_x), self.to_device(self.train_y)
        self.test_x, self.test_y = self.to_device(self.test_x), self.to_device(self.test_y)

    def to_device(self, t):
        return t if self.device.type == "cpu" else t.to(self.device)

    def map_data(self, d):
        """The scenario's data set in the shared region: x (n, D) float32, y (n) uint8."""
        torch = self.torch
        self.data_map = mmap.mmap(FD_DATA, d["bytes"], prot=mmap.PROT_READ)
        c, h, w = d["shape"]
        shape = (w,) if c == 1 and h == 1 else (c, h, w)  # flat features, or images

        def part(n, off_x, off_y):
            x = torch.frombuffer(self.data_map, dtype=torch.float32, count=n * c * h * w,
                                 offset=off_x).view((n,) + shape)
            y = torch.frombuffer(self.data_map, dtype=torch.uint8, count=n,
                                 offset=off_y).long()
            return x, y
        import warnings
        with warnings.catch_warnings():  # a read-only mapping: nothing here writes it
            warnings.simplefilter("ignore")
            self.train_x, self.train_y = part(*d["train"])
            self.test_x, self.test_y = part(*d["test"])
        self.classes = d["classes"]
        self.given["input_shape"] = shape
        self.given["classes"] = self.classes

    def build(self, seed):
        self.torch.manual_seed(seed)
        return self.contract.build(self.mod, self.args, self.given)

    # ---- probe ----

    def probe(self):
        """Checks the module on a batch of two training samples and describes it."""
        torch, contract = self.torch, self.contract
        net = self.build(0).to(self.device)
        slots = Slots(net)
        x, y = self.train_x[:2], self.train_y[:2]
        net.train()
        try:
            out = net(x)
        except Exception as e:
            raise contract.ContractError("the network fails on a batch of 2: "
                                         + contract.describe(e)) from e
        loss = self.task.check_output(out, y, self.classes)
        try:
            loss.backward()
        except Exception as e:
            raise contract.ContractError("backward fails: " + contract.describe(e)) from e
        layers, rules = self.module_layers(net, tuple(x.shape[1:]))
        net.eval()
        with torch.no_grad():
            self.task.check_output(net(x), y, self.classes)
            n = self.task.correct(net(x), y)
        if not isinstance(n, int) or n < 0 or n > 2:
            raise contract.ContractError("correct() must return an int in [0, batch], got %r"
                                         % (n,))
        self.memory_pass(net)
        import resource
        rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
        return {"params": slots.n_params, "buffers": slots.n_bufs,
                "layers": [{"name": (r["name"] or "model")[:63], "params": r["params"],
                            "flops": r["forward_flops"], "kind": r["kind"],
                            "forward_bytes": r["forward_bytes"],
                            "elementwise_bytes": r["elementwise_bytes"]} for r in layers],
                "layer_rules": rules, "classes": int(out.shape[-1]),
                "train": int(self.train_x.shape[0]),
                "test": int(self.test_x.shape[0]), "rss": rss,
                "torch": torch.__version__}

    def memory_pass(self, net):
        """A training pass of the run's batch and an evaluation pass, for the peak memory the
        probe reports (the server's, for hetsim's memory guard)."""
        torch = self.torch
        batch, eval_batch = self.cfg.get("batch", 2), self.cfg.get("eval_batch", 2)
        net.train()
        x, y = self.train_x[:batch], self.train_y[:batch]
        self.task.loss(net(x), y).backward()
        net.eval()
        with torch.no_grad():
            net(self.test_x[:eval_batch])

    # ---- serving ----

    def attach(self, ex):
        """The working network, its state living in the exchange region (views on the CPU,
        copies on a GPU)."""
        torch = self.torch
        m = self.ex_map = mmap.mmap(FD_EXCHANGE, ex["bytes"])

        def view(dtype, n, off):
            return torch.frombuffer(m, dtype=dtype, count=n, offset=off)
        self.net = self.build(0).to(self.device)
        self.slots = Slots(self.net)
        P, NB = self.slots.n_params, self.slots.n_bufs
        self.params = view(torch.float32, P, ex["params"])
        self.grad = view(torch.float32, P, ex["grad"])
        self.bufs = view(torch.float32, max(NB, 1), ex["bufs"])[:NB]
        self.idx = view(torch.int64, ex["idx_n"], ex["idx"])
        self.on_cpu = self.device.type == "cpu"
        at = 0
        for p in self.slots.params:
            n = p.numel()
            if self.on_cpu:
                p.data = self.params[at:at + n].view_as(p)
                p.grad = self.grad[at:at + n].view_as(p)
            at += n
        at = 0
        for slot in self.slots.bufs:
            m, name, b = slot
            n = b.numel()
            if self.on_cpu:
                slot[2] = self.bufs[at:at + n].view_as(b)
                m._buffers[name] = slot[2]
            at += n

    def load_state(self):
        """On a GPU: the request's parameters and buffers into the network."""
        if self.on_cpu:
            return
        at = 0
        with self.torch.no_grad():
            for p in self.slots.params:
                p.copy_(self.params[at:at + p.numel()].view_as(p))
                at += p.numel()
            at = 0
            for m, name, b in self.slots.bufs:
                m._buffers[name].copy_(self.bufs[at:at + b.numel()].view_as(b))
                at += b.numel()

    def store_buffers(self):
        """The buffers after a pass back into the exchange region (a module that assigns a new
        tensor to a buffer, instead of updating it in place, gets its view back)."""
        at = 0
        for slot in self.slots.bufs:
            m, name, view = slot
            cur = m._buffers[name]
            n = view.numel()
            if self.on_cpu:
                if cur is not view:
                    view.copy_(cur)
                    m._buffers[name] = view
            else:
                self.bufs[at:at + n].copy_(cur.reshape(-1).cpu())
            at += n

    def gradient(self, n, seed):
        torch = self.torch
        idx = self.idx[:n].to(self.device) if not self.on_cpu else self.idx[:n]
        x, y = self.train_x.index_select(0, idx), self.train_y.index_select(0, idx)
        self.load_state()
        self.slots.reset_ints()
        self.net.train()
        if self.on_cpu:
            self.grad.zero_()
        else:
            self.net.zero_grad(set_to_none=True)
        torch.manual_seed(seed)
        out = self.net(x)
        loss = self.task.loss(out, y)
        value = float(loss)
        if value == value and abs(value) != float("inf"):
            loss.backward()
        self.store_buffers()
        if not self.on_cpu:
            at = 0
            for p in self.slots.params:
                g = p.grad
                dst = self.grad[at:at + p.numel()]
                dst.copy_(g.reshape(-1).cpu()) if g is not None else dst.zero_()
                at += p.numel()
        return value

    def evaluate(self, first, n):
        torch = self.torch
        x, y = self.test_x[first:first + n], self.test_y[first:first + n]
        self.load_state()
        self.slots.reset_ints()
        self.net.eval()
        with torch.no_grad():
            out = self.net(x)
            return float(self.task.loss(out, y)) * n, int(self.task.correct(out, y))

    def init(self, seed):
        """A fresh network built under `seed`: its parameters and buffers, the initial state."""
        fresh = self.build(seed)
        with self.torch.no_grad():
            Slots(fresh).write(self.params, self.bufs)

    def bench(self, batch, iterations, seed):
        """A plain PyTorch training loop on the same network, data and batch: seconds for
        `iterations` steps (after three unmeasured ones), in wall and CPU time."""
        torch = self.torch
        net = self.build(seed).to(self.device)
        opt = torch.optim.SGD(net.parameters(), lr=0.01, momentum=0.9)
        g = torch.Generator().manual_seed(seed)
        n = self.train_x.shape[0]
        net.train()
        t0 = c0 = 0.0
        for it in range(iterations + 3):
            if it == 3:
                if self.device.type == "cuda":
                    torch.cuda.synchronize()
                t0, c0 = time.perf_counter(), time.process_time()
            idx = torch.randint(n, (batch,), generator=g).to(self.device)
            x, y = self.train_x.index_select(0, idx), self.train_y.index_select(0, idx)
            opt.zero_grad(set_to_none=True)
            self.task.loss(net(x), y).backward()
            opt.step()
        if self.device.type == "cuda":
            torch.cuda.synchronize()
        return time.perf_counter() - t0, time.process_time() - c0

    def serve(self, sock):
        head = bytearray(REQUEST.size)
        view = memoryview(head)
        while recv_exact(sock, view):
            op, n, seed, a, b = REQUEST.unpack(head)
            t0 = time.perf_counter()
            if op == OP_GRAD:
                loss = self.gradient(n, seed)
                send_reply(sock, loss=loss, seconds=time.perf_counter() - t0, count=n)
            elif op == OP_EVAL:
                loss_sum, correct = self.evaluate(a, n)
                send_reply(sock, loss=loss_sum, seconds=time.perf_counter() - t0,
                           correct=correct, count=n)
            elif op == OP_INIT:
                self.init(seed)
                send_reply(sock)
            elif op == OP_BENCH:  # the loop's CPU seconds in the loss's place
                wall, cpu = self.bench(n, a, seed)
                send_reply(sock, loss=cpu, seconds=wall)
            elif op == OP_QUIT:
                send_reply(sock)
                return
            else:
                raise RuntimeError("unknown request %d" % op)


def main():
    die_with_parent()
    import signal
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # ^C is hetsim's to handle; we see its end
    sock = socket.socket(fileno=FD_SOCKET)
    cfg = recv_config(sock)
    try:
        import torch
    except ImportError as e:
        send_reply(sock, STATUS_NO_TORCH, "%s (%s)" % (e, sys.executable))
        return 0
    setup_torch(torch)
    from hetsim.module import ContractError
    try:
        server = Server(cfg, torch)
        if cfg["mode"] == "probe":
            send_reply(sock, text=json.dumps(server.probe()))
            return 0
        server.attach(cfg["exchange"])
    except ContractError as e:
        send_reply(sock, STATUS_CONTRACT, json.dumps({"key": e.key, "message": str(e)}))
        return 0
    send_reply(sock, text=json.dumps({"pid": os.getpid(), "params": server.slots.n_params,
                                      "buffers": server.slots.n_bufs}))
    try:
        server.serve(sock)
    except BaseException:
        # The module's exception: its traceback for hetsim's stderr, then out at once (an
        # interpreter's orderly shutdown with PyTorch loaded takes long), which hetsim reads as
        # the end of the channel.
        import traceback
        traceback.print_exc()
        sys.stderr.flush()
        os._exit(1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
