"""Writes a layer profile CSV for tools/profile_model.py, without torch (tested alone).

The output is refused when it is no regular file (a symbolic link, a FIFO, a directory, a
device: open(path, "w") wrote through the link, or waited on the FIFO) or lies inside a hetsim
output, by the marks hetsim itself goes by (docs/usage.md): a run directory (its run.json), a
work directory (.hetsim-partial), a sweep's directory (.hetsim-sweep, or its index.csv), a
golden (seeds and seed-S/fingerprint, or a killed update's GOLDEN.partial by its
.hetsim-golden-partial), a check's output (check.csv) or a plot's folder (.hetsim-plot); and
so is a name like a work directory's or a lock's (X.partial, X.lock), as hetsim refuses it. It is written to a temporary file beside it, then renamed into place: a profile
is whole or absent. Fields go through Python's csv module: a layer name holding a comma or a
quote is quoted, where it shifted its row's columns.
"""
import csv
import os
import stat
import tempfile

HEADER = ["name", "params", "forward_flops", "forward_ms", "backward_ms", "kind",
          "forward_bytes", "elementwise_bytes"]
CHECK_HEADER = "i,statistic,curve,golden_mean,golden_sd,run_mean,half_width,floor,z,ok\n"


def _starts_with(path, head):
    """True if the regular file at path starts with head (a FIFO is never opened)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return False
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return False
        want = head.encode()
        return os.read(fd, len(want)) == want
    finally:
        os.close(fd)


def _is_golden(d):
    try:
        fd = os.open(os.path.join(d, "seeds"), os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return False
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return False
        first = os.read(fd, 64).split(b"\n", 1)[0].strip()
    finally:
        os.close(fd)
    return first.isdigit() and os.path.lexists(
        os.path.join(d, "seed-%d" % int(first), "fingerprint"))


def output_kind(d):
    """The kind of hetsim output the directory d is (outputs/rundir.c's rule), or None."""
    if not os.path.isdir(d):
        return None
    if os.path.lexists(os.path.join(d, ".hetsim-partial")):
        return "work directory"
    if _starts_with(os.path.join(d, "run.json"), '{\n  "hetsim_version"'):
        return "run directory"
    if os.path.lexists(os.path.join(d, ".hetsim-sweep")) or \
            _starts_with(os.path.join(d, "index.csv"), "point,dir,"):
        return "sweep's directory"
    if os.path.lexists(os.path.join(d, ".hetsim-golden-partial")) or _is_golden(d):
        return "golden"
    if _starts_with(os.path.join(d, "check.csv"), CHECK_HEADER):
        return "check's output"
    if os.path.lexists(os.path.join(d, ".hetsim-plot")):
        return "plot's folder"
    return None


def refusal(path):
    """Why the profile may not be written at path, or None."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        st = None
    if st is not None and not stat.S_ISREG(st.st_mode):
        kind = ("a symbolic link" if stat.S_ISLNK(st.st_mode) else
                "a directory" if stat.S_ISDIR(st.st_mode) else
                "a FIFO" if stat.S_ISFIFO(st.st_mode) else "a special file")
        return "%s: not a regular file (%s): name a new file or a regular one" % (path, kind)
    if os.path.basename(path).endswith((".partial", ".lock")):
        return ("%s: names ending in .partial or .lock are hetsim's work directories and locks "
                "(a file there stops every later run into its directory): name another file"
                % path)
    d = os.path.realpath(os.path.dirname(os.path.abspath(path)))
    while True:
        kind = output_kind(d)
        if kind is not None:
            return ("%s: inside a hetsim output, the %s %s: write the profile elsewhere"
                    % (path, kind, d))
        up = os.path.dirname(d)
        if up == d:
            return None
        d = up


def write_profile(path, comment, rows):
    """Writes the profile: `comment` (one line, without its '#'), the header, then rows of
    HEADER's fields. Raises SystemExit with the reason when refused."""
    why = refusal(path)
    if why is not None:
        raise SystemExit(why)
    d = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(dir=d, prefix="." + os.path.basename(path) + ".", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", newline="") as f:
            f.write("# %s\n" % "".join(c if c.isprintable() else " " for c in comment))
            w = csv.writer(f, lineterminator="\n")
            w.writerow(HEADER)
            for r in rows:
                w.writerow(r)
        os.chmod(tmp, 0o666 & ~_umask())
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise


def _umask():
    m = os.umask(0)
    os.umask(m)
    return m
