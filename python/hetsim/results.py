"""A small results API: hetsim's runs and sweeps as pandas DataFrames, and scenarios given as
dicts run through the binary (docs/torch.md, "Python package").

    import hetsim
    r = hetsim.run({"seed": 1, "workers": 4, ...}, out="out/try")  # a Run
    r.metrics.plot(x="time_s", y="test_accuracy")
    s = hetsim.load_sweep("out/compare/all-slow")
    s.curves.groupby(["name", "time_s"]).test_accuracy.mean()

pandas (Debian: python3-pandas) is imported when a table is first read, so that the model
server, which imports this package, does not need it.
"""
import json
import sys
import os
import shutil
import subprocess
import tempfile


class RunError(RuntimeError):
    """hetsim exited with an error: `status` is its exit code (1: the run failed, 2: bad
    usage or scenario) and `stderr` what it printed."""

    def __init__(self, status, stderr):
        super().__init__("hetsim exited with %d: %s" % (status, stderr.strip()))
        self.status = status
        self.stderr = stderr


def _csv(path):
    import pandas
    return pandas.read_csv(path)


def _json(path):
    # hetsim writes and reads JSON nested up to 1000 levels (its parser's limit); Python's
    # decoder, within its default recursion limit of 1000 frames, raised RecursionError near
    # 990. Decode with room for that depth.
    with open(path) as f:
        text = f.read()
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 4000))
    try:
        return json.loads(text)
    finally:
        sys.setrecursionlimit(limit)


class Run:
    """One run directory: metrics.csv and workers.csv (and events.csv when written) as
    DataFrames, read when first used; summary.json and run.json as dicts."""

    def __init__(self, path):
        if not os.path.isfile(os.path.join(path, "run.json")):
            raise FileNotFoundError("%s holds no hetsim run (no run.json)" % path)
        self.dir = path
        self._tables = {}

    def _table(self, name):
        if name not in self._tables:
            self._tables[name] = _csv(os.path.join(self.dir, name + ".csv"))
        return self._tables[name]

    @property
    def metrics(self):
        return self._table("metrics")

    @property
    def workers(self):
        return self._table("workers")

    @property
    def events(self):
        return self._table("events")

    @property
    def summary(self):
        return _json(os.path.join(self.dir, "summary.json"))

    @property
    def scenario(self):
        """The resolved scenario (run.json's "scenario"), every default filled in."""
        return _json(os.path.join(self.dir, "run.json"))["scenario"]

    def __repr__(self):
        return "hetsim.Run(%r)" % self.dir


class Sweep:
    """One sweep directory: index.csv (a row per point) and curves.csv (a row per point and
    evaluation) as DataFrames; each point's run with run(point)."""

    def __init__(self, path):
        if not os.path.isfile(os.path.join(path, "index.csv")):
            raise FileNotFoundError("%s holds no hetsim sweep (no index.csv)" % path)
        self.dir = path
        self._index = self._curves = None

    @property
    def index(self):
        if self._index is None:
            self._index = _csv(os.path.join(self.dir, "index.csv"))
        return self._index

    @property
    def curves(self):
        if self._curves is None:
            self._curves = _csv(os.path.join(self.dir, "curves.csv"))
        return self._curves

    def run(self, point):
        """The run of point `point` (index.csv's `point` column)."""
        row = self.index[self.index["point"] == point]
        if len(row) != 1:
            raise KeyError("no point %r in %s" % (point, self.dir))
        return Run(os.path.join(self.dir, str(row["dir"].iloc[0])))

    def runs(self):
        """Every point's run, in index order (points without results skipped)."""
        for d in self.index["dir"]:
            path = os.path.join(self.dir, str(d))
            if os.path.isfile(os.path.join(path, "summary.json")):
                yield Run(path)

    def __repr__(self):
        return "hetsim.Sweep(%r)" % self.dir


def load_run(path):
    return Run(path)


def load_sweep(path):
    return Sweep(path)


def load(path):
    """A Run or a Sweep, whichever `path` holds."""
    if os.path.isfile(os.path.join(path, "index.csv")):
        return Sweep(path)
    return Run(path)


def find_binary(binary=None):
    """The hetsim binary: `binary`, else $HETSIM, else `hetsim` on the PATH, else the
    checkout's build/hetsim (this package living in the checkout's python/)."""
    for cand in (binary, os.environ.get("HETSIM"), shutil.which("hetsim")):
        if cand:
            return cand
    here = os.path.dirname(os.path.abspath(__file__))
    local = os.path.join(here, "..", "..", "build", "hetsim")
    if os.access(local, os.X_OK):
        return os.path.normpath(local)
    raise FileNotFoundError("no hetsim binary: pass binary=, set HETSIM or put hetsim on the PATH")


def run(scenario, out=None, base_dir=".", sets=(), threads=None, binary=None):
    """Runs `scenario` (a dict, as a scenario file holds) through the binary and returns its
    Run. Relative paths in it (a module, a data set's dir, a profile) are relative to
    `base_dir`, where the scenario is written for the run (a hidden file, removed after).
    `out`: the run directory (default: a new temporary one); `sets`: "PATH=VALUE" overrides;
    `threads`: --threads. Without a "name", the scenario is named "run" (not after the
    temporary file). Raises RunError when hetsim fails."""
    exe = find_binary(binary)
    scenario = dict(scenario)
    scenario.setdefault("name", "run")
    if out is None:
        out = os.path.join(tempfile.mkdtemp(prefix="hetsim-"), "run")
    fd, path = tempfile.mkstemp(prefix=".hetsim-", suffix=".json", dir=base_dir)
    try:
        with os.fdopen(fd, "w") as f:
            json.dump(scenario, f)
        args = [exe, "run", path, "-o", out, "--quiet"]
        for s in sets:
            args += ["--set", s]
        if threads is not None:
            args += ["--threads", str(threads)]
        p = subprocess.run(args, capture_output=True, text=True)
    finally:
        os.unlink(path)
    if p.returncode != 0:
        raise RunError(p.returncode, p.stderr)
    return Run(out)
