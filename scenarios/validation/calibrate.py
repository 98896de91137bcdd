#!/usr/bin/env python3
"""Fits the attainable shares of scenario/device.c's catalogue on the calibration points of
points.csv, and prints them with each calibration point's residual.

usage: calibrate.py HETSIM [--check]

With --check, exits 1 unless HETSIM's catalogue holds what the fit gives, rounded as
scenario/device.c writes it (shares and the 3x3 gain to 3 decimals, the depthwise share to 3
significant digits): the test suite's check (`meson test calibration`).

For every calibration point it reads the scenario (profile, device, precision, batch), the
profile's rows and the device's peaks, bandwidth, memory share and 16-bit vector factor
(`HETSIM list devices`), and times an iteration by the roofline of scenario/roofline.h, mirrored
below (with its fixed time a kernel and the optimizer's step). The unknowns are the shares of
peak of convolutions and of matrix products per (device, precision) that a calibration point
measures, the FP32 gain of 3x3 convolutions (one for every device, as cuDNN picks Winograd's
algorithm for them), one factor that carries the A100's tensor-core shares to the H100, one
that carries the A100's tensor-core convolution shares to the RTX 3090 (fitted on timm's
ResNet-50, the one RTX 3090 point of the calibration; its products keep the A100's) and
the share of the FP32 peak depthwise convolutions attain (one for every device); the shares
no point measures are carried from the nearest calibrated device (SHARES below, and each
catalogue entry's `fit`). They are found by least squares on log(predicted / published)
(Levenberg-Marquardt, numerical derivatives). The other points play no part. Python's
standard library only.
"""
import csv
import json
import math
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
PRECISIONS = ("fp32", "tf32", "fp16", "bf16")

# The unknowns, and which of them each catalogued device and precision uses: (conv, matmul,
# scale). `None`: no fast path, or a precision nobody calibrates (then FP32's shares).
UNKNOWNS = ("v100.conv.fp32", "v100.matmul.fp32", "v100.conv.fp16", "v100.matmul.fp16",
            "a100.conv.tf32", "a100.matmul.tf32", "a100.conv.fp16", "a100.matmul.fp16",
            "p100.conv.fp32", "k80.conv.fp32", "gp102.conv.fp32", "h100.over.a100",
            "rtx3090.conv.over.a100", "conv3x3.gain.fp32", "depthwise.share")
V32 = ("v100.conv.fp32", "v100.matmul.fp32", None)
V16 = ("v100.conv.fp16", "v100.matmul.fp16", None)
ATF = ("a100.conv.tf32", "a100.matmul.tf32", None)
A16 = ("a100.conv.fp16", "a100.matmul.fp16", None)
SHARES = {
    "k80": {"fp32": ("k80.conv.fp32", "k80.conv.fp32", None)},
    "p40": {"fp32": ("gp102.conv.fp32", "gp102.conv.fp32", None)},
    "p100": {p: ("p100.conv.fp32", "p100.conv.fp32", None) for p in ("fp32", "fp16")},
    "1080ti": {"fp32": ("gp102.conv.fp32", "gp102.conv.fp32", None)},
    "v100": {"fp32": V32, "fp16": V16},
    "v100-pcie": {"fp32": V32, "fp16": V16},
    "t4": {"fp32": V32, "fp16": V16},
    "rtx3090": {"fp32": V32, "tf32": ATF[:2] + ("rtx3090.conv.over.a100", None),
                "fp16": A16[:2] + ("rtx3090.conv.over.a100", None),
                "bf16": A16[:2] + ("rtx3090.conv.over.a100", None)},
    "a100": {"fp32": V32, "tf32": ATF, "fp16": A16, "bf16": A16},
    "a100-80gb": {"fp32": V32, "tf32": ATF, "fp16": A16, "bf16": A16},
    "a100-pcie": {"fp32": V32, "tf32": ATF, "fp16": A16, "bf16": A16},
    "h100": {"fp32": V32, "tf32": ATF[:2] + ("h100.over.a100",),
             "fp16": A16[:2] + ("h100.over.a100",), "bf16": A16[:2] + ("h100.over.a100",)},
}
KIND_CONV3X3, KIND_CONV, KIND_DEPTHWISE = "conv3x3", "conv", "depthwise"
KERNEL_S = 3.25e-6    # SIM_ROOFLINE_KERNEL_S
TRANSPOSES = 3.0      # SIM_ROOFLINE_TRANSPOSES
UPDATE_BYTES = 24.0   # SIM_ROOFLINE_UPDATE_BYTES


def devices(hetsim):
    """Peaks (FLOP/s per precision), bandwidth and memory share of each catalogued device."""
    text = subprocess.run([hetsim, "list", "devices"], check=True, stdout=subprocess.PIPE,
                          text=True).stdout.splitlines()
    out, name = {}, None
    for line in text[1:]:
        f = line.split()
        if not line.startswith(" "):
            name = f[0]
            peaks = [0.0 if v == "-" else float(v) * 1e12 for v in f[1:5]]
            out[name] = {"peak": dict(zip(PRECISIONS, peaks)), "mem": float(f[5]) * 1e9}
        elif f[0] == "attainable:":
            out[name]["mem_frac"] = float(f[f.index("memory") + 1].rstrip(";"))
            at = line.find(" at 16 bits")
            out[name]["vector16"] = (float(line[:at].rsplit("x", 1)[1]) if at >= 0 else 0.0)
            for what in ("conv", "matmul"):
                words = line.split(" %s " % what, 1)[1].split(";")[0].split()
                out[name][what] = dict(zip(words[::2], map(float, words[1::2])))
            out[name]["conv3x3"] = float(line.split("convolutions x")[1].split()[0])
            out[name]["depthwise"] = float(line.split("depthwise ")[1].split()[0])
    return out


def mismatches(x, devs):
    """Where the catalogue differs from the fit x, rounded as scenario/device.c writes it."""
    bad = []
    for dev, per in SHARES.items():
        for p in per:
            for what, fitted in zip(("conv", "matmul"), shares(dev, p, x)):
                have = devs[dev][what].get(p)
                if have is None or abs(have - round(fitted, 3)) > 1e-9:
                    bad.append("%s %s %s: %s, the fit %.3f" % (dev, what, p, have, fitted))
        for what, fitted in (("conv3x3", round(x["conv3x3.gain.fp32"], 2)),
                             ("depthwise", float("%.3g" % x["depthwise.share"]))):
            if abs(devs[dev][what] - fitted) > 1e-9:
                bad.append("%s %s: %g, the fit %g" % (dev, what, devs[dev][what], fitted))
    return bad


def profile(scenario_path, name):
    if name.endswith(".csv") or "/" in name:
        path = os.path.join(os.path.dirname(scenario_path), name)
    else:
        path = os.path.join(ROOT, "data", "profiles", name + ".csv")
    with open(path) as f:
        rows = list(csv.DictReader(l for l in f if not l.startswith("#")))
    return [(int(r["params"]), float(r["forward_flops"]), r.get("kind") or "other",
             float(r.get("forward_bytes") or 0), float(r.get("elementwise_bytes") or 0))
            for r in rows]


def iteration_s(rows, rates, mem_bps, elem, batch, transpose=False):
    """sim_roofline_iteration_s (scenario/roofline.c); rates: FLOP/s of conv3x3, conv, depthwise
    and the rest; transpose: NCHW at 16 bits (convolutions pay their transposes)."""
    s = sum(p for p, *_ in rows) * UPDATE_BYTES / mem_bps
    for i, (params, flops, kind, fwd_bytes, ew_bytes) in enumerate(rows):
        r = rates.get(kind, rates["matmul"])
        bytes_s = (fwd_bytes * batch + 4.0 * params) * elem / mem_bps
        own = max(flops * batch / r, bytes_s)
        if transpose and kind in (KIND_CONV3X3, KIND_CONV):
            own += 2.0 * bytes_s + TRANSPOSES * KERNEL_S
        ew = ew_bytes * batch * elem / mem_bps
        ew_kernel = KERNEL_S if ew_bytes > 0 else 0.0
        s += own + ew + KERNEL_S + ew_kernel
        s += (1.0 if i == 0 else 2.0) * (own + KERNEL_S) + 2.0 * (ew + ew_kernel)
    return s


def shares(dev, prec, x):
    """(conv, matmul) of dev at prec: SHARES' (conv, matmul, scale of both) or (conv, matmul,
    scale of conv, scale of matmul)."""
    conv, mm, scale, *mm_scale = SHARES[dev][prec]
    k = x[scale] if scale else 1.0
    kmm = k if not mm_scale else x[mm_scale[0]] if mm_scale[0] else 1.0
    return x[conv] * k, x[mm] * kmm


def predict(point, x, devs):
    d = devs[point["device"]]
    conv, mm = shares(point["device"], point["precision"], x)
    peak = d["peak"][point["precision"]]
    gain = x["conv3x3.gain.fp32"] if point["precision"] == "fp32" else 1.0
    half = point["precision"] in ("fp16", "bf16")
    depthwise = d["peak"]["fp32"] * x["depthwise.share"] * (d["vector16"] if half else 1.0)
    rates = {KIND_CONV3X3: peak * conv * gain, KIND_CONV: peak * conv,
             KIND_DEPTHWISE: depthwise, "matmul": peak * mm}
    s = iteration_s(point["rows"], rates, d["mem"] * d["mem_frac"], 0.5 if half else 1.0,
                    point["batch"], half and point["layout"] == "nchw")
    return point["batch"] / s


def residuals(theta, points, devs):
    x = {u: math.exp(t) for u, t in zip(UNKNOWNS, theta)}
    return [math.log(predict(p, x, devs) / p["published"]) for p in points]


def solve(a, b):
    """Gaussian elimination with partial pivoting: a x = b."""
    n = len(b)
    m = [row[:] + [b[i]] for i, row in enumerate(a)]
    for c in range(n):
        p = max(range(c, n), key=lambda r: abs(m[r][c]))
        m[c], m[p] = m[p], m[c]
        for r in range(c + 1, n):
            f = m[r][c] / m[c][c]
            for k in range(c, n + 1):
                m[r][k] -= f * m[c][k]
    x = [0.0] * n
    for r in reversed(range(n)):
        x[r] = (m[r][n] - sum(m[r][k] * x[k] for k in range(r + 1, n))) / m[r][r]
    return x


def fit(points, devs):
    theta = [math.log(2.0 if u.startswith("conv3x3") else 1.0 if ".over." in u else
                      0.02 if u.startswith("depthwise") else 0.5) for u in UNKNOWNS]
    lam = 1e-3
    for _ in range(200):
        r = residuals(theta, points, devs)
        cost = sum(v * v for v in r)
        jac = []
        for j in range(len(theta)):
            t = theta[:]
            t[j] += 1e-6
            jac.append([(a - b) / 1e-6 for a, b in zip(residuals(t, points, devs), r)])
        n = len(theta)
        jtj = [[sum(jac[i][k] * jac[j][k] for k in range(len(r))) + (lam if i == j else 0.0)
                for j in range(n)] for i in range(n)]
        jtr = [-sum(jac[i][k] * r[k] for k in range(len(r))) for i in range(n)]
        step = solve(jtj, jtr)
        trial = [t + s for t, s in zip(theta, step)]
        if sum(v * v for v in residuals(trial, points, devs)) < cost:
            theta, lam = trial, lam / 3
        else:
            lam *= 10
        if max(abs(s) for s in step) < 1e-12:
            break
    return {u: math.exp(t) for u, t in zip(UNKNOWNS, theta)}


def main():
    if len(sys.argv) not in (2, 3) or sys.argv[2:] not in ([], ["--check"]):
        sys.exit(__doc__)
    devs = devices(sys.argv[1])
    with open(os.path.join(HERE, "points.csv"), newline="") as f:
        rows = [r for r in csv.DictReader(f)
                if r["role"] == "calibration" and r["kind"] == "throughput"]
    points = []
    for r in rows:
        path = os.path.join(HERE, r["scenario"])
        with open(path) as f:
            sc = json.load(f)
        c = sc["compute"]
        points.append({"id": r["id"], "device": c["device"],
                       "precision": c.get("precision", "fp32"), "layout": c.get("layout", "nhwc"),
                       "batch": sc["workload"]["batch"],
                       "published": float(r["published"]),
                       "rows": profile(path, c["profile"])})
    x = fit(points, devs)
    print("fitted on %d calibration points:" % len(points))
    for u in UNKNOWNS:
        print("  %-20s %.4f" % (u, x[u]))
    for p in points:
        print("  %-22s %+.2f%%" % (p["id"], 100 * (predict(p, x, devs) / p["published"] - 1)))
    print("catalogue (conv and matmul shares per fp32, tf32, fp16, bf16):")
    for dev, per in SHARES.items():
        conv = ["%.3f" % shares(dev, p, x)[0] if p in per else "0" for p in PRECISIONS]
        mm = ["%.3f" % shares(dev, p, x)[1] if p in per else "0" for p in PRECISIONS]
        print("  %-10s { %s }, { %s }" % (dev, ", ".join(conv), ", ".join(mm)))
    print("conv3x3 gain in fp32: %.3f" % x["conv3x3.gain.fp32"])
    print("depthwise share of the fp32 peak: %.4f" % x["depthwise.share"])
    bad = mismatches(x, devs) if sys.argv[2:] == ["--check"] else []
    for b in bad:
        sys.stderr.write("calibrate.py: the catalogue differs from the fit: %s\n" % b)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
