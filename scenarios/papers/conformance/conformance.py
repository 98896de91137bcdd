#!/usr/bin/env python3
"""The conformance matrix (issue 23): every protocol at its defaults over one matrix of
clusters, with no per-protocol tuning but the learning rate.

  python3 scenarios/papers/conformance/conformance.py HETSIM [--smoke] [-j JOBS] [-o OUT]

1. Learning rates. On the 16-worker homogeneous cluster (25 MB messages), each protocol runs
   every rate of LRS with SEEDS (5) seeds, once per momentum; `hetsim report --best-over workload.lr`
   picks the rate with the most runs reaching the target, then the shortest mean time to it.
   That rate is the protocol's for the whole matrix at that momentum.
2. The matrix: N in {8, 16, 32} x cluster (homogeneous, one worker 4x slower, every
   iteration 4x slower with probability 0.1) x messages (1 MB, 25 MB) x momentum (0, 0.9),
   SEEDS seeds; and the GPU slice: on 16 workers, each cluster x momentum timed as ResNet-50 on
   V100s (compute.profile resnet50, compute.device v100, the profile's 102 MB messages,
   GPU_TIME_S simulated seconds) while the MLP still learns. Each cell is one sweep
   (OUT/cells/<cell>) over the protocols, at the rates of step 1. The runs whose
   final accuracy or throughput a claim reads (FULL_LENGTH: ps-bsp, ps-asp, syncswitch,
   adpsgd, allreduce, diloco, localsgd-h8) go on to stop.time_s; the others stop at the
   target (their curves up to it, and so their time to target, are the same bits either way:
   runs are deterministic).
3. Tables (Markdown, on stdout and in OUT/tables.md): per cell, `hetsim report` of time to
   target (mean, 95% interval over seeds, reached/seeds), throughput and final accuracy,
   with time-to-target ratios to allreduce and adpsgd; then each paper's claim, held or not,
   per cell where it applies (OUT/claims.csv).

Only Python's standard library is used. --smoke: N = 8, three cells (one of the GPU slice's
timing), one seed, 3 simulated seconds, two rates (CI: checks that everything runs and parses,
not the claims).
"""
import argparse
import csv
import io
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))

# label, protocol object: every protocol at its defaults; ps twice (BSP, its default, and ASP)
PROTOCOLS = [
    ("allreduce", {"name": "allreduce"}),
    ("localsgd", {"name": "localsgd"}),
    ("ps-bsp", {"name": "ps"}),
    ("ps-asp", {"name": "ps", "mode": "asp"}),
    ("syncswitch", {"name": "syncswitch"}),
    ("dpsgd", {"name": "dpsgd"}),
    ("adpsgd", {"name": "adpsgd"}),
    ("gossip", {"name": "gossip"}),
    ("hop", {"name": "hop"}),
    ("hpsgd", {"name": "hpsgd"}),
    ("ripples", {"name": "ripples"}),
    ("moshpit", {"name": "moshpit"}),
    ("sgp", {"name": "sgp"}),
    ("diloco", {"name": "diloco"}),
    ("localsgd-h8", {"name": "localsgd", "local_steps": 8}),
]
# DiLoCo's default H (protocols/diloco.c), at which localsgd-h8 is its local SGD: the claim
# compares them at the same H.
DILOCO_H = 8
LRS = [0.01, 0.05, 0.25]
MOMENTA = [0.0, 0.9]
WORKERS = [8, 16, 32]
# Seeds per protocol and cell, and per rate in step 1: 5 since the second one-piece run
# (README.md, "Seeds"); the first ran 3.
SEEDS = 5
MESSAGES = [("1MB", 1000000), ("25MB", 25000000)]
# The GPU-regime slice (issue 39): the 16-worker cells timed as ResNet-50 (fp32, batch 32) on
# V100s, the profile's 102 MB of gradients as the message (four 25 MiB buckets and DDP's first
# of 1 MiB for allreduce, at its defaults), while the built-in model still learns. Its runs
# last GPU_TIME_S: the 750 compute-bound iterations of the 40 ms cells' 30 s at 87.2 ms an
# iteration (the roofline's ResNet-50 step on a V100 when the slice was designed; the
# calibrated catalogue gives 89.1 ms now, about 730 iterations in 65 s).
GPU = "rn50-v100"
GPU_WORKERS = 16
GPU_COMPUTE = {"jitter_sigma": 0.05, "profile": "resnet50", "device": "v100"}
GPU_TIME_S = 65
SLOWDOWN = 4.0
TARGET = 0.8
# The protocols whose runs always go on to stop.time_s: Sync-Switch's claim reads the final
# accuracies of syncswitch, ps-bsp and ps-asp, AD-PSGD's its throughput, DiLoCo's the final
# accuracies of diloco, allreduce and localsgd-h8. The others stop at the target (the
# matrix's cost: about 40% less simulated time in all).
FULL_LENGTH = ("ps-bsp", "ps-asp", "syncswitch", "adpsgd", "allreduce", "diloco",
               "localsgd-h8")


def clusters(n):
    """name -> the stragglers list of that cluster on n workers."""
    return {
        "homogeneous": [],
        "slow-one": [{"kind": "fixed", "workers": [n - 1], "slowdown": SLOWDOWN}],
        "random": [{"kind": "random", "probability": 0.1, "slowdown": SLOWDOWN}],
    }


def write_json(path, obj):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path + ".tmp", "w") as f:
        json.dump(obj, f, indent=2)
        f.write("\n")
    os.replace(path + ".tmp", path)


def base_scenario():
    with open(os.path.join(HERE, "base.json")) as f:
        return json.load(f)


def sweep(hetsim, sweep_path, jobs):
    """Runs a sweep; its runs' messages go to SWEEP.log beside the sweep file. Exit 1 (some
    points failed, e.g. a rate that diverged: `missing` in index.csv, left out of the
    report) is part of the result; anything else stops the matrix."""
    with open(sweep_path[:-len(".json")] + ".log", "w") as log:
        r = subprocess.run([hetsim, "sweep", sweep_path, "-j", str(jobs)],
                           stdout=subprocess.DEVNULL, stderr=log)
    if r.returncode not in (0, 1):
        sys.exit("conformance: %s sweep %s: exit %d (see %s.log)" %
                 (hetsim, sweep_path, r.returncode, sweep_path[:-len(".json")]))


def report(hetsim, sweep_dir, fmt, best_over=None):
    cmd = [hetsim, "report", sweep_dir, "--by", "name", "--target", str(TARGET),
           "--format", fmt]
    if best_over:
        cmd += ["--best-over", best_over]
    r = subprocess.run(cmd, check=True, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                       text=True)
    return r.stdout


def report_rows(hetsim, sweep_dir, best_over=None):
    return list(csv.DictReader(io.StringIO(report(hetsim, sweep_dir, "csv", best_over))))


def make_sweep(out, name, scenario, protocols, lrs, seeds):
    """Writes OUT/sweeps/NAME.json (and its base) over the protocols (and their rates). With
    one rate per protocol (a cell of the matrix), the protocols of FULL_LENGTH run to
    stop.time_s and the others stop at the target."""
    base = os.path.join(out, "sweeps", name + ".base.json")
    write_json(base, scenario)
    if isinstance(lrs, dict):  # one rate per protocol
        full = {k: v for k, v in scenario["stop"].items() if k != "target_accuracy"}
        early = dict(full, target_accuracy=TARGET)
        grid = {"zip": {"name": [p for p, _ in protocols],
                        "protocol": [o for _, o in protocols],
                        "workload.lr": [lrs[p] for p, _ in protocols],
                        "stop": [full if p in FULL_LENGTH else early for p, _ in protocols]}}
    else:
        grid = {"zip": {"name": [p for p, _ in protocols],
                        "protocol": [o for _, o in protocols]},
                "workload.lr": lrs}
    path = os.path.join(out, "sweeps", name + ".json")
    write_json(path, {"base": os.path.basename(base), "grid": grid, "seeds": seeds,
                      "output": {"dir": os.path.join(out, "cells", name)}})
    return path, os.path.join(out, "cells", name)


def num(row, key):
    try:
        return float(row[key])
    except (KeyError, ValueError, TypeError):
        return float("nan")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("hetsim")
    ap.add_argument("--smoke", action="store_true")
    ap.add_argument("-j", "--jobs", type=int, default=2)
    ap.add_argument("-o", "--out", default="out/papers/conformance")
    ap.add_argument("--workers", default=",".join(str(n) for n in WORKERS),
                    help="the cluster sizes to run, comma-separated (default: 8,16,32)")
    a = ap.parse_args()
    out = os.path.abspath(a.out + ("-smoke" if a.smoke and a.out ==
                                   "out/papers/conformance" else ""))
    seeds, lrs, cells_of = SEEDS, LRS, None
    try:
        workers = [int(x) for x in a.workers.split(",")]
    except ValueError:
        ap.error("--workers takes numbers separated by commas, got %r" % a.workers)
    scenario = base_scenario()
    gpu_time_s = GPU_TIME_S
    if a.smoke:
        seeds, lrs, workers = 1, LRS[:2], [8]
        scenario["stop"]["time_s"] = gpu_time_s = 3
        cells_of = {("homogeneous", "1MB", 0.9), ("slow-one", "25MB", 0.0),
                    ("slow-one", GPU, 0.9)}

    # 1. learning rates
    chosen = {}
    for m in MOMENTA:
        s = json.loads(json.dumps(scenario))
        s["workload"]["momentum"] = m
        name = "lr-m%g" % m
        path, d = make_sweep(out, name, s, PROTOCOLS, lrs, seeds)
        sweep(a.hetsim, path, a.jobs)
        for row in report_rows(a.hetsim, d, "workload.lr"):
            chosen[(row["name"], m)] = float(row["workload.lr"])
    lines = ["## Learning rates (16 workers, homogeneous, 25 MB; best of %s)" %
             ", ".join("%g" % x for x in lrs), "",
             "| protocol | " + " | ".join("momentum %g" % m for m in MOMENTA) + " |",
             "|---|" + "---|" * len(MOMENTA)]
    for p, _ in PROTOCOLS:
        lines.append("| %s | " % p + " | ".join("%g" % chosen.get((p, m), float("nan"))
                                                 for m in MOMENTA) + " |")
    lines.append("")

    # 2. the matrix, 3. its tables
    claims = []
    cells = {}
    for n in workers:
        for cname, stragglers in clusters(n).items():
            for mname in timings(n, a.smoke):
                for m in MOMENTA:
                    if cells_of is not None and (cname, mname, m) not in cells_of:
                        continue
                    cell = "N%d-%s-%s-m%g" % (n, cname, mname, m)
                    s = cell_scenario(scenario, n, stragglers, mname, m, gpu_time_s)
                    rates = {p: chosen[(p, m)] for p, _ in PROTOCOLS}
                    path, d = make_sweep(out, cell, s, PROTOCOLS, rates, seeds)
                    sweep(a.hetsim, path, a.jobs)
                    rows = {r["name"]: r for r in report_rows(a.hetsim, d)}
                    cells[(n, cname, mname, m)] = rows
                    lines += cell_table(cell, rows)
                    claims += cell_claims(n, cname, mname, m, rows)
    claims += adpsgd_loss_claims(cells)
    lines += claims_table(claims)
    text = "\n".join(lines) + "\n"
    with open(os.path.join(out, "tables.md"), "w") as f:
        f.write(text)
    with open(os.path.join(out, "claims.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["cell", "claim", "measured", "held"])
        w.writerows(claims)
    sys.stdout.write(text)


def timings(n, smoke):
    """The cells' timings on n workers: the 40 ms cells' message sizes, and the GPU slice on
    GPU_WORKERS workers (on the smoke form's 8 too, to run its code)."""
    return [mname for mname, _ in MESSAGES] + ([GPU] if n == GPU_WORKERS or smoke else [])


def cell_scenario(scenario, n, stragglers, timing, m, gpu_time_s):
    """The base scenario on n workers with the cluster's stragglers, momentum m and the timing:
    a message size of MESSAGES (40 ms iterations), or the GPU slice (ResNet-50 on V100s, the
    profile's message, gpu_time_s simulated seconds)."""
    s = json.loads(json.dumps(scenario))
    s["workers"] = n
    s["stragglers"] = stragglers
    s["workload"]["momentum"] = m
    s["stop"].pop("target_accuracy", None)
    if timing == GPU:
        s["compute"] = dict(GPU_COMPUTE)
        s["workload"].pop("message_bytes", None)
        s["stop"]["time_s"] = gpu_time_s
    else:
        s["workload"]["message_bytes"] = dict(MESSAGES)[timing]
    return s


def ttt(row):
    """(mean time to target or None, reached, runs, censoring time)"""
    return (num(row, "ttt_mean_s"), int(num(row, "reached")), int(num(row, "runs")),
            num(row, "censored_after_s"))


def ttt_text(row):
    mean, reached, runs, cens = ttt(row)
    if reached == 0:
        return "> %g (0/%d)" % (cens, runs)
    half = num(row, "ttt_ci95_s")
    s = "%.1f" % mean + (" ± %.1f" % half if half == half else "")
    return s + ("" if reached == runs else " (%d/%d)" % (reached, runs))


def ratio(row, ref):
    a, ra, na, _ = ttt(row)
    b, rb, nb, _ = ttt(ref)
    if ra < na or rb < nb or not b:
        return "–"
    return "%.2f" % (a / b)


def final_text(p, r):
    """The mean final accuracy at stop.time_s: of FULL_LENGTH protocols, and of groups where no
    run reached the target (so all went on to the end); the others stopped at the target."""
    _, reached, _, _ = ttt(r)
    if p in FULL_LENGTH or reached == 0:
        return "%.4f" % num(r, "final_accuracy_mean")
    return "–"


def cell_table(cell, rows):
    lines = ["### %s" % cell, "",
             "| protocol | time to %.2f (s) | / allreduce | / adpsgd | samples/s | final accuracy |"
             % TARGET, "|---|---|---|---|---|---|"]
    for p, _ in PROTOCOLS:
        r = rows.get(p)
        if r is None:
            lines.append("| %s | no result | | | | |" % p)
            continue
        lines.append("| %s | %s | %s | %s | %.0f | %s |" % (
            p, ttt_text(r), ratio(r, rows.get("allreduce", r)), ratio(r, rows.get("adpsgd", r)),
            num(r, "throughput_sps_mean"), final_text(p, r)))
    lines.append("")
    return lines


def lower_mean(row):
    """A lower bound of the group's mean time to target: the runs that never reached it
    counted at their censoring time (their true time is later)."""
    mean, reached, runs, cens = ttt(row)
    if runs == 0:
        return float("nan")
    return ((mean * reached if reached else 0.0) + cens * (runs - reached)) / runs


def at_most(a, b, f):
    """Whether group a's mean time to target is at most f times group b's. True or False
    when the runs decide it, None (undecided) when runs that never reached the target leave
    it open: a's mean is known only when all of a's runs reached it, and b's is then bounded
    below by lower_mean(b), its runs that never reached it counted at their censoring time."""
    ta, ra, na, _ = ttt(a)
    tb, rb, nb, _ = ttt(b)
    if ra == na and rb == nb:
        return ta <= f * tb
    if ra == na:  # b partly censored: its true mean is >= lower_mean(b)
        return True if ta <= f * lower_mean(b) else None
    if rb == nb and lower_mean(a) > f * tb:
        return False
    return None


def sooner(a, b):
    """Whether group a reaches the target sooner than b, on the mean over seeds (at_most
    with f = 1; a tie counts as not sooner)."""
    r = at_most(a, b, 1.0)
    ta, ra, na, _ = ttt(a)
    tb, rb, nb, _ = ttt(b)
    if r and ra == na and rb == nb and ta == tb:
        return False
    return r


def cell_claims(n, cname, mname, m, rows):
    cell = "N%d-%s-%s-m%g" % (n, cname, mname, m)
    out = []
    g = rows.get

    def add(claim, measured, held):
        out.append([cell, claim, measured,
                    "undecided" if held is None else "held" if held else "NOT held"])

    ar, rp = g("allreduce"), g("ripples")
    if ar and rp:
        if cname == "homogeneous":
            add("ripples <= 1.1x allreduce (homogeneous)", "%s / %s" % (ttt_text(rp),
                                                                       ttt_text(ar)),
                at_most(rp, ar, 1.1))
        elif cname == "slow-one":
            add("ripples <= 0.5x allreduce (slow worker)", "%s / %s" % (ttt_text(rp),
                                                                       ttt_text(ar)),
                at_most(rp, ar, 0.5))
    if cname == "slow-one" and g("hop") and g("dpsgd"):
        add("hop sooner than dpsgd (slow worker)", "%s / %s" % (ttt_text(g("hop")),
                                                               ttt_text(g("dpsgd"))),
            sooner(g("hop"), g("dpsgd")))
    if cname != "homogeneous" and g("moshpit") and g("sgp"):
        add("moshpit sooner than sgp (heterogeneous)", "%s / %s" % (
            ttt_text(g("moshpit")), ttt_text(g("sgp"))), sooner(g("moshpit"), g("sgp")))
    ss, bsp, asp = g("syncswitch"), g("ps-bsp"), g("ps-asp")
    if ss and bsp and asp:
        fs, fb, fa = (num(x, "final_accuracy_mean") for x in (ss, bsp, asp))
        add("syncswitch sooner than BSP", "%s / %s" % (ttt_text(ss), ttt_text(bsp)),
            sooner(ss, bsp))
        add("syncswitch final within 1 point of BSP, above ASP",
            "%.4f / %.4f / %.4f" % (fs, fb, fa), fs >= fb - 0.01 and fs > fa)
    dl, ls = g("diloco"), g("localsgd-h8")
    if dl and ar and ls:
        fd, fa, fl = (num(x, "final_accuracy_mean") for x in (dl, ar, ls))
        fewer = num(ar, "bytes_per_sample_mean") / num(dl, "bytes_per_sample_mean")
        add("diloco final within 1 point of allreduce at H times fewer bytes per sample",
            "%.4f / %.4f, %.2fx fewer" % (fd, fa, fewer),
            fd >= fa - 0.01 and fewer >= 0.99 * DILOCO_H)
        add("diloco final above localsgd at the same H", "%.4f / %.4f" % (fd, fl), fd > fl)
    if mname != "1MB" and g("hpsgd") and ar:
        add("hpsgd sooner than allreduce (messages of 25 MB or more)", "%s / %s" % (
            ttt_text(g("hpsgd")), ttt_text(ar)), sooner(g("hpsgd"), ar))
    return out


def adpsgd_loss_claims(cells):
    """AD-PSGD's throughput with one worker SLOWDOWN times slower against the homogeneous
    cluster's: the loss should be close to (1 - 1/k)/N, the slow worker's lost share. Close:
    within half the predicted loss either way."""
    out = []
    for (n, cname, mname, m), rows in sorted(cells.items()):
        if cname != "slow-one" or "adpsgd" not in rows:
            continue
        even = cells.get((n, "homogeneous", mname, m), {}).get("adpsgd")
        if even is None:
            continue
        loss = 1 - num(rows["adpsgd"], "throughput_sps_mean") / num(even, "throughput_sps_mean")
        pred = (1 - 1 / SLOWDOWN) / n
        out.append(["N%d-%s-%s-m%g" % (n, cname, mname, m),
                    "adpsgd throughput loss close to (1 - 1/k)/N",
                    "%.3f (predicted %.3f)" % (loss, pred), abs(loss - pred) <= 0.5 * pred])
    return [c[:3] + ["held" if c[3] else "NOT held"] for c in out]


def tally(claims):
    """held / not held / undecided counts of a list of claims"""
    of = [c[3] for c in claims]
    return of.count("held"), of.count("NOT held"), of.count("undecided")


def claims_table(claims):
    """The claims per slice (the 40 ms cells, the GPU slice), then every claim per cell."""
    def gpu(c):
        return ("-%s-" % GPU) in c[0]

    lines = ["## Claims", "",
             "| claim | 40 ms cells: held | not held | undecided | %s: held | not held | "
             "undecided |" % GPU, "|---|---|---|---|---|---|---|"]
    for name in dict.fromkeys(c[1] for c in claims):
        mlp = tally([c for c in claims if c[1] == name and not gpu(c)])
        dev = tally([c for c in claims if c[1] == name and gpu(c)])
        lines.append("| %s | %d | %d | %d | %d | %d | %d |" % ((name,) + mlp + dev))
    lines += ["", "| cell | claim | measured | |", "|---|---|---|---|"]
    for c in claims:
        lines.append("| %s | %s | %s | %s |" % tuple(c))
    lines.append("")
    for label, part in (("In all", claims), ("40 ms cells", [c for c in claims if not gpu(c)]),
                        (GPU, [c for c in claims if gpu(c)])):
        held, not_held, undecided = tally(part)
        lines.append("%s: %d of %d decided claims held; %d undecided." %
                     (label, held, held + not_held, undecided))
    lines += ["", "(Undecided: runs that never reached the target leave the comparison open.)",
              ""]
    return lines


if __name__ == "__main__":
    main()
