#!/usr/bin/env python3
"""DiLoCo's claim on our clusters (Douillard et al. 2023, arXiv 2311.08105): final accuracy
within 1 point of All-Reduce at H times fewer bytes per sample, and better than local SGD
(outer lr 1, no momentum: FedAvg) at the same H.

  python3 scenarios/papers/diloco/diloco.py HETSIM [--smoke] [-j JOBS] [-o OUT]

1. Equal samples (the paper compares at equal compute): the cluster of base.json (the
   conformance matrix's: Fashion-MNIST's first 12,000 examples, MLP [32], batch 32, lr 0.05,
   40 ms iterations, 10 Gb/s star, 1 MB messages, no straggler), the workload's (inner)
   momentum 0.9 and 0, every run stopped at 32 epochs, on 8 workers (the paper's main
   setting) and 16; allreduce, and
   diloco and localsgd at H = 8 (diloco's default), 16 and 32, and diloco at H = 8 without
   outer momentum and with the heavy ball instead of Nesterov's; 3 seeds.
2. Equal time, 25 MB messages (All-Reduce spends most of an iteration communicating): 16
   workers, inner momentum 0.9, 30 simulated seconds; allreduce, diloco and localsgd at H = 8; 3 seeds: time to
   0.8, final accuracy, samples/s.
Tables (Markdown) on stdout and in OUT/tables.md. Only Python's standard library is used.
--smoke: one seed, 1 epoch and 3 simulated seconds (CI: everything runs and parses).
"""
import argparse
import csv
import io
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
HS = [8, 16, 32]
WORKERS = [8, 16]
MOMENTA = [0.9, 0.0]
TARGET = 0.8


def protocols():
    """(label, protocol object) of the equal-samples sweep: per H, then the outer optimizer's
    ablation at H = 8 (momentum off; the heavy ball instead of Nesterov's)."""
    out = [("allreduce", {"name": "allreduce"})]
    for h in HS:
        out.append(("diloco-h%d" % h, {"name": "diloco", "local_steps": h}))
        out.append(("localsgd-h%d" % h, {"name": "localsgd", "local_steps": h}))
    out.append(("diloco-h8-m0", {"name": "diloco", "local_steps": 8, "outer_momentum": 0}))
    out.append(("diloco-h8-heavy", {"name": "diloco", "local_steps": 8,
                                    "outer_nesterov": False}))
    return out


def separated(a, b, key):
    """Whether the 95% intervals of a's and b's means of `key` do not overlap."""
    return abs(num(a, key + "_mean") - num(b, key + "_mean")) > (num(a, key + "_ci95") +
                                                                 num(b, key + "_ci95"))


def write_json(path, obj):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        json.dump(obj, f, indent=2)
        f.write("\n")


def sweep(hetsim, out, name, base, zipped, grid, seeds, jobs):
    """Writes OUT/sweeps/NAME.json (and its base) and runs it; returns its directory."""
    write_json(os.path.join(out, "sweeps", name + ".base.json"), base)
    path = os.path.join(out, "sweeps", name + ".json")
    write_json(path, {"base": name + ".base.json", "grid": dict(grid, zip=zipped),
                      "seeds": seeds, "output": {"dir": os.path.join(out, name)}})
    with open(os.path.join(out, "sweeps", name + ".log"), "w") as log:
        r = subprocess.run([hetsim, "sweep", path, "-j", str(jobs)], stdout=subprocess.DEVNULL,
                           stderr=log)
    if r.returncode != 0:
        sys.exit("diloco: %s sweep %s: exit %d" % (hetsim, path, r.returncode))
    return os.path.join(out, name)


def report(hetsim, d):
    r = subprocess.run([hetsim, "report", d, "--by", "name", "--target", str(TARGET), "--format",
                        "csv"], check=True, stdout=subprocess.PIPE, text=True)
    return {row["name"]: row for row in csv.DictReader(io.StringIO(r.stdout))}


def num(row, key):
    try:
        return float(row[key])
    except (KeyError, ValueError, TypeError):
        return float("nan")


def pm(row, key, fmt):
    return (fmt + " ± " + fmt) % (num(row, key + "_mean"), num(row, key + "_ci95"))


def samples_tables(rows, n, m, seeds, epochs):
    ar = rows["n%d-allreduce" % n]
    fa, ba = num(ar, "final_accuracy_mean"), num(ar, "bytes_per_sample_mean")
    lines = ["### %d workers, inner momentum %g, %g epochs (%d seeds)" % (n, m, epochs, seeds), "",
             "| run | final accuracy | vs allreduce (points) | vs localsgd at the same H "
             "(points) | bytes sent per sample | allreduce's / this |",
             "|---|---|---|---|---|---|"]
    claims = []
    for label, _ in protocols():
        r = rows["n%d-%s" % (n, label)]
        f, b = num(r, "final_accuracy_mean"), num(r, "bytes_per_sample_mean")
        vs_ls = "–"
        if label.startswith("diloco"):
            h = int(label.split("-")[1][1:])
            ls = rows["n%d-localsgd-h%d" % (n, h)]
            d = 100 * (f - num(ls, "final_accuracy_mean"))
            vs_ls = "%+.2f" % d
        if label.startswith("diloco") and label.count("-") == 1:
            sep = lambda o: "" if separated(r, o, "final_accuracy") else " (intervals overlap)"
            cell = "N%d m%g H%d" % (n, m, h)
            claims.append([cell, "within 1 point of allreduce",
                           "%+.2f%s" % (100 * (f - fa), sep(ar)), f >= fa - 0.01])
            claims.append([cell, "H times fewer bytes per sample",
                           "%.2fx" % (ba / b), ba / b >= 0.99 * h])
            claims.append([cell, "better than localsgd at the same H",
                           "%+.2f%s" % (d, sep(ls)), d > 0])
        lines.append("| %s | %s | %+.2f | %s | %.0f | %.2f |" % (
            label, pm(r, "final_accuracy", "%.4f"), 100 * (f - fa), vs_ls, b, ba / b))
    return lines + [""], claims


def time_table(rows, seeds, time_s):
    lines = ["### 16 workers, 25 MB messages, %g simulated seconds (%d seeds)" % (time_s, seeds), "",
             "| run | time to %.2f (s) | reached | final accuracy | samples/s | bytes sent per "
             "sample |" % TARGET, "|---|---|---|---|---|---|"]
    for label in ("allreduce", "diloco-h8", "localsgd-h8"):
        r = rows[label]
        ttt = "%.1f ± %.1f" % (num(r, "ttt_mean_s"), num(r, "ttt_ci95_s"))
        if num(r, "reached") == 0:
            ttt = "> %g" % num(r, "censored_after_s")
        lines.append("| %s | %s | %d/%d | %s | %s | %.0f |" % (
            label, ttt, num(r, "reached"), num(r, "runs"), pm(r, "final_accuracy", "%.4f"),
            pm(r, "throughput_sps", "%.0f"), num(r, "bytes_per_sample_mean")))
    return lines + [""]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("hetsim")
    ap.add_argument("--smoke", action="store_true")
    ap.add_argument("-j", "--jobs", type=int, default=2)
    ap.add_argument("-o", "--out", default="out/papers/diloco")
    a = ap.parse_args()
    out = os.path.abspath(a.out)
    with open(os.path.join(HERE, "base.json")) as f:
        base = json.load(f)
    seeds, epochs, time_s = 3, 32, 30
    if a.smoke:
        seeds, epochs, time_s = 1, 1, 3

    # 1. equal samples
    lines, claims = ["## Equal samples", ""], []
    for m in MOMENTA:
        s = json.loads(json.dumps(base))
        s["stop"] = {"epochs": epochs}
        s["workload"]["momentum"] = m
        runs = [(n, label, p) for n in WORKERS for label, p in protocols()]
        zipped = {"name": ["n%d-%s" % (n, label) for n, label, _ in runs],
                  "workers": [n for n, _, _ in runs], "protocol": [p for _, _, p in runs]}
        d = sweep(a.hetsim, out, "samples-m%g" % m, s, zipped, {}, seeds, a.jobs)
        rows = report(a.hetsim, d)
        for n in WORKERS:
            t, c = samples_tables(rows, n, m, seeds, epochs)
            lines += t
            claims += c

    # 2. equal time, 25 MB messages
    s = json.loads(json.dumps(base))
    s["workers"] = 16
    s["stop"] = {"time_s": time_s}
    s["workload"]["message_bytes"] = 25000000
    s["workload"]["momentum"] = MOMENTA[0]
    labels = ["allreduce", "diloco-h8", "localsgd-h8"]
    byname = dict(protocols())
    zipped = {"name": labels, "protocol": [byname[x] for x in labels]}
    rows = report(a.hetsim, sweep(a.hetsim, out, "time-25mb", s, zipped, {}, seeds, a.jobs))
    lines += ["## Equal time", ""] + time_table(rows, seeds, time_s)

    lines += ["## Claims", "", "| setting | claim | measured | |", "|---|---|---|---|"]
    lines += ["| %s | %s | %s | %s |" % (c[0], c[1], c[2], "held" if c[3] else "NOT held")
              for c in claims]
    held = sum(1 for c in claims if c[3])
    lines += ["", "%d of %d claims held." % (held, len(claims)), ""]
    text = "\n".join(lines)
    with open(os.path.join(out, "tables.md"), "w") as f:
        f.write(text)
    sys.stdout.write(text)


if __name__ == "__main__":
    main()
