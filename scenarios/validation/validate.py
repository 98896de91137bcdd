#!/usr/bin/env python3
"""Runs every point of scenarios/validation/points.csv with a hetsim binary and prints the
table: predicted, published, error and role of each point, then the median absolute error
and the worst point of each kind of point (throughput, scaling) in each role (README.md).

usage: validate.py HETSIM [-o OUT] [-j JOBS] [--role ROLE] [--kind KIND] [--check PCT] [ID...]
  HETSIM       the hetsim binary to validate
  -o OUT       where the runs and the tables go (default out/validation): OUT/table.md and
               OUT/table.csv, and one run directory per scenario
  -j JOBS      runs at once (default 1)
  --role ROLE  only the points of this role (calibration, seen, held-out); may be repeated
  --kind KIND  only the throughput or the scaling points
  --check PCT  exit 1 when a point's error exceeds PCT percent either way (the test suite
               checks that the device catalogue reproduces its calibration throughputs)
  ID...        only these points (and their baselines)

A `throughput` point predicts the cluster's samples/s (summary.json's mean_throughput_sps);
a `scaling` point the scaling efficiency throughput(scenario) / (N / N_baseline x
throughput(baseline)), N the scenarios' workers. The error is predicted / published - 1.
Roles: `calibration` (the catalogue is fitted on it), `seen` (held out from the fit, but its
error was seen while the model was being built: the first and second rounds' held-out
throughput points) and `held-out` (never used to fit or choose anything; the throughput ones,
the third round's, were fixed and committed before they were first run).
Python's standard library only; exits 1 when a run fails (or a point is off, --check).
"""
import argparse
import concurrent.futures
import csv
import json
import os
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
KINDS = ("throughput", "scaling")
ROLES = ("calibration", "seen", "held-out")


def read_points(path):
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    ids = set()
    for n, r in enumerate(rows, start=2):
        where = "%s:%d" % (path, n)
        if r["id"] in ids:
            sys.exit("%s: id %s twice" % (where, r["id"]))
        ids.add(r["id"])
        if r["kind"] not in KINDS or r["role"] not in ROLES:
            sys.exit("%s: kind must be one of %s and role one of %s" % (where, KINDS, ROLES))
        if (r["kind"] == "scaling") != (r["baseline"] != ""):
            sys.exit("%s: a scaling point, and only one, names a baseline" % where)
        try:
            r["published"] = float(r["published"])
        except ValueError:
            sys.exit("%s: published: not a number" % where)
    return rows


def run(hetsim, scenario, out):
    """Runs one scenario into OUT/<its name>; returns (throughput, workers)."""
    name = os.path.splitext(os.path.basename(scenario))[0]
    rundir = os.path.join(out, "runs", name)
    p = subprocess.run([hetsim, "run", os.path.join(HERE, scenario), "-o", rundir, "--quiet"],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if p.returncode != 0:
        raise RuntimeError("%s: exit %d: %s" % (scenario, p.returncode, p.stderr.strip()))
    with open(os.path.join(rundir, "summary.json")) as f:
        summary = json.load(f)
    with open(os.path.join(rundir, "run.json")) as f:
        workers = json.load(f)["scenario"]["workers"]
    return summary["mean_throughput_sps"], workers


def predict(points, results):
    for p in points:
        tput, n = results[p["scenario"]]
        if p["kind"] == "throughput":
            p["predicted"] = tput
        else:
            base, n0 = results[p["baseline"]]
            p["predicted"] = tput / (n / n0 * base)
        p["error"] = 100.0 * (p["predicted"] / p["published"] - 1.0)


def summary_lines(points):
    lines = []
    for kind in KINDS:
        for role in ROLES:
            mine = [p for p in points if p["kind"] == kind and p["role"] == role]
            if not mine:
                continue
            worst = max(mine, key=lambda p: abs(p["error"]))
            lines.append("%s %s: %d points, median absolute error %.1f%%, worst %s %+.1f%%"
                         % (kind, role, len(mine),
                            statistics.median(abs(p["error"]) for p in mine), worst["id"],
                            worst["error"]))
    return lines


def fmt(v):
    return "%.4g" % v


def write_tables(points, lines, out):
    cols = ("id", "kind", "predicted", "published", "unit", "error %", "role")
    with open(os.path.join(out, "table.csv"), "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(cols)
        for p in points:
            w.writerow([p["id"], p["kind"], fmt(p["predicted"]), fmt(p["published"]), p["unit"],
                        "%.1f" % p["error"], p["role"]])
    with open(os.path.join(out, "table.md"), "w") as f:
        f.write("| " + " | ".join(cols) + " |\n|" + "---|" * len(cols) + "\n")
        for p in points:
            f.write("| %s | %s | %s | %s | %s | %+.1f | %s |\n"
                    % (p["id"], p["kind"], fmt(p["predicted"]), fmt(p["published"]), p["unit"],
                       p["error"], p["role"]))
        f.write("\n" + "".join("- " + l + "\n" for l in lines))


def main():
    ap = argparse.ArgumentParser(usage=__doc__.split("usage: ")[1].split("\n")[0])
    ap.add_argument("hetsim")
    ap.add_argument("-o", "--out", default=os.path.join("out", "validation"))
    ap.add_argument("-j", "--jobs", type=int, default=1)
    ap.add_argument("--role", choices=ROLES, action="append")
    ap.add_argument("--kind", choices=KINDS)
    ap.add_argument("--check", type=float)
    ap.add_argument("ids", nargs="*")
    a = ap.parse_intermixed_args()
    points = read_points(os.path.join(HERE, "points.csv"))
    if a.ids:
        unknown = set(a.ids) - {p["id"] for p in points}
        if unknown:
            sys.exit("unknown points: %s" % ", ".join(sorted(unknown)))
        points = [p for p in points if p["id"] in a.ids]
    if a.role:
        points = [p for p in points if p["role"] in a.role]
    if a.kind:
        points = [p for p in points if p["kind"] == a.kind]
    scenarios = sorted({p["scenario"] for p in points} | {p["baseline"] for p in points} - {""})
    os.makedirs(os.path.join(a.out, "runs"), exist_ok=True)
    hetsim = os.path.abspath(a.hetsim)
    with concurrent.futures.ThreadPoolExecutor(max(1, a.jobs)) as pool:
        futures = {s: pool.submit(run, hetsim, s, a.out) for s in scenarios}
        try:
            results = {s: f.result() for s, f in futures.items()}
        except RuntimeError as e:
            sys.stderr.write("validate.py: %s\n" % e)
            return 1
    predict(points, results)
    print("%-24s %-10s %10s %10s %6s %8s  %s" % ("id", "kind", "predicted", "published", "unit",
                                                 "error %", "role"))
    for p in points:
        print("%-24s %-10s %10s %10s %6s %+8.1f  %s"
              % (p["id"], p["kind"], fmt(p["predicted"]), fmt(p["published"]), p["unit"],
                 p["error"], p["role"]))
    lines = summary_lines(points)
    print("\n".join(lines))
    write_tables(points, lines, a.out)
    off = [p["id"] for p in points if a.check is not None and abs(p["error"]) > a.check]
    if off:
        sys.stderr.write("validate.py: beyond %g%%: %s\n" % (a.check, ", ".join(off)))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
