#!/usr/bin/env python3
"""What `hetsim check` recipes catch on this project's goldens.

    power.py OUT [--recipes K:M,K:M,...] [--validate GOLDEN_DIR CHECK_OUT]

Reads the sweeps that tests/golden/power.sh ran into OUT (OUT/NAME-none, NAME-half and
NAME-double: a golden's scenario unchanged, its learning rate halved, doubled; disjoint seed
sets) and, for each recipe (K golden seeds, M check seeds; default 5:2, 5:4, 10:2, 10:4,
20:4), decides every check that can be drawn from them without sharing a seed: goldens are
the chunks of K of the first 30 unchanged seeds, checks the chunks of M of the 30 others
(false alarms) and of the perturbed ones (detections), and 1000 draws of a golden and a check
from the same pools at random (a fixed stream; checks then share seeds from draw to draw, but
every golden the pool allows is drawn). A perturbed point without results (a
run that diverged) is a check that fails, as `hetsim check` exits 1 when a run fails. Prints
a Markdown table per recipe (a row per golden, then all of them) and one of the recipes.

The decision is app/check.c's (test_stats), recomputed from the curves: each run is reduced
to five statistics (mean, final third and second-half row-to-row jitter of the test accuracy,
mean log test loss, mean throughput after row 0); the check passes when, for every statistic
the golden's seeds all have, the mean over the M check runs lies within
q * s * sqrt(1/K + 1/M) of the golden seeds' mean (s their standard deviation, q Student's t
quantile with K - 1 degrees of freedom at upper tail 0.01 / (2 m), m the statistics tested),
or within the scenario's `check` floor when that is wider. --validate compares this with a
real check: GOLDEN_DIR a golden (seed-S/metrics.csv), CHECK_OUT the -o directory of a
`hetsim check` against it (seed-S/metrics.csv, check.csv); prints both sides' figures.
"""
import csv
import functools
import glob
import json
import math
import os
import random
import sys

ALPHA = 0.01
STATS = ["accuracy_mean", "accuracy_final", "accuracy_jitter", "log_loss_mean",
         "throughput_mean"]
FLOORS = {"accuracy_abs": 0.002, "accuracy_rel": 0.0, "loss_abs": 0.0, "loss_rel": 0.005,
          "throughput_abs": 0.0, "throughput_rel": 0.002}
GOLDEN_POOL = 30  # the first 30 unchanged seeds make goldens, the others false-alarm checks
DRAWS = 1000  # resampled checks per golden, recipe and condition


def num(text):
    try:
        return float(text)
    except ValueError:
        return float("nan")


def summaries(rows):
    """The five statistics of one run's rows (dicts with test_accuracy, test_loss and
    throughput_sps as floats), as app/check.c's summary()."""
    n = len(rows)
    acc = [r["test_accuracy"] for r in rows]
    loss = [r["test_loss"] for r in rows]
    tp = [r["throughput_sps"] for r in rows]

    def mean(xs):
        xs = [x for x in xs if not math.isnan(x)]
        return sum(xs) / len(xs) if xs else float("nan")
    jfrom = n // 2 if n // 2 > 0 else 1
    return [mean(acc),
            mean(acc[n - (n // 3 if n // 3 > 0 else 1):]),
            mean([abs(acc[i] - acc[i - 1]) for i in range(jfrom, n)]),
            mean([math.log(max(x, 1e-12)) if not math.isnan(x) else x for x in loss]),
            mean(tp[1:])]


@functools.lru_cache(maxsize=None)
def t_upper_quantile(p, df):
    """The t quantile with df degrees of freedom exceeded with probability p, by bisection on
    the upper tail Q(t) = I_x(df/2, 1/2) / 2, x = df / (df + t^2), the regularized incomplete
    beta function from its continued fraction (modified Lentz)."""
    def betacf(a, b, x):
        tiny, c, d = 1e-300, 1.0, 1.0 - (a + b) * x / (a + 1.0)
        d = 1.0 / (d if abs(d) > tiny else tiny)
        h = d
        for m in range(1, 400):
            for num_, sign in ((m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m)), 1),
                               (-(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1)), 0)):
                d = 1.0 + num_ * d
                d = 1.0 / (d if abs(d) > tiny else tiny)
                c = 1.0 + num_ / c
                c = c if abs(c) > tiny else tiny
                h *= d * c
                if sign == 0 and abs(d * c - 1.0) < 1e-15:
                    return h
        return h

    def ibeta(a, b, x):
        if x <= 0.0:
            return 0.0
        if x >= 1.0:
            return 1.0
        lfront = (math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) +
                  b * math.log1p(-x))
        if x < (a + 1.0) / (a + b + 2.0):
            return math.exp(lfront) * betacf(a, b, x) / a
        return 1.0 - math.exp(lfront) * betacf(b, a, 1.0 - x) / b

    def upper(t):
        return 0.5 * ibeta(df / 2.0, 0.5, df / (df + t * t))
    lo, hi = 0.0, 1.0
    while upper(hi) > p:
        hi *= 2.0
    for _ in range(200):
        mid = (lo + hi) / 2.0
        lo, hi = (mid, hi) if upper(mid) > p else (lo, mid)
    return (lo + hi) / 2.0


def floor_of(st, m, fl):
    if st == 3:
        return math.log1p(fl["loss_rel"] + fl["loss_abs"] / math.exp(m))
    if st == 4:
        return fl["throughput_abs"] + fl["throughput_rel"] * abs(m)
    return fl["accuracy_abs"] + fl["accuracy_rel"] * abs(m)


def decide(golden, runs, fl):
    """(passes, per statistic (golden mean, golden sd, run mean, half-width)) of a check of the
    runs' statistics against the golden's; a run None (failed) fails the check."""
    if any(r is None for r in runs):
        return False, None
    k, m = len(golden), len(runs)
    tested = []
    for st in range(5):
        g = [x[st] for x in golden]
        if any(math.isnan(v) for v in g):
            continue
        mu = sum(g) / k
        sd = math.sqrt(sum((v - mu) ** 2 for v in g) / (k - 1))
        tested.append((st, mu, sd, sum(r[st] for r in runs) / m))
    q = t_upper_quantile(ALPHA / (2.0 * max(len(tested), 1)), k - 1)
    ok, figures = True, {}
    for st, mu, sd, rmean in tested:
        half = max(q * sd * math.sqrt(1.0 / k + 1.0 / m), floor_of(st, mu, fl))
        ok = ok and math.isfinite(rmean) and abs(rmean - mu) <= half
        figures[STATS[st]] = (mu, sd, rmean, half)
    return ok, figures


def read_sweep(d):
    """{seed: statistics, or None for a point without results} of the sweep directory d."""
    runs = {}
    with open(os.path.join(d, "index.csv")) as f:
        for row in csv.DictReader(f):
            runs[int(row["seed"])] = None
    rows = {}
    with open(os.path.join(d, "curves.csv")) as f:
        for row in csv.DictReader(f):
            rows.setdefault(int(row["seed"]), []).append(
                {k: num(row[k]) for k in ("test_accuracy", "test_loss", "throughput_sps")})
    for seed, rs in rows.items():
        runs[seed] = summaries(rs)
    return runs


def floors(name, out):
    fl = dict(FLOORS)
    for scen in glob.glob(os.path.join(out, "sweeps", name + "-none.json")):
        with open(scen) as f:
            base = json.load(f)["base"]
        with open(base) as f:
            fl.update(json.load(f).get("check", {}))
    return fl


def chunks(seeds, size):
    return [seeds[i:i + size] for i in range(0, len(seeds) - size + 1, size)]


def measure(out, recipes):
    names = sorted({os.path.basename(p)[:-len("-none")]
                    for p in glob.glob(os.path.join(out, "*-none"))})
    table = {}  # (recipe, name, cond) -> (failed, checks)
    for name in names:
        fl = floors(name, out)
        none = read_sweep(os.path.join(out, name + "-none"))
        pert = {c: read_sweep(os.path.join(out, "%s-%s" % (name, c))) for c in ("half", "double")}
        ordered = sorted(none)
        gold_pool = [s for s in ordered[:GOLDEN_POOL] if none[s] is not None]
        pools = {"none": ordered[GOLDEN_POOL:], "half": sorted(pert["half"]),
                 "double": sorted(pert["double"])}
        stats = {"none": none, "half": pert["half"], "double": pert["double"]}
        for k, m in recipes:
            for cond, pool in pools.items():
                failed = checks = 0
                for g in chunks(gold_pool, k):
                    golden = [none[s] for s in g]
                    for c in chunks(pool, m):
                        ok, _ = decide(golden, [stats[cond][s] for s in c], fl)
                        failed += not ok
                        checks += 1
                table[(k, m), name, cond] = (failed, checks)
                table[(k, m), name, cond, "drawn"] = resampled(none, stats[cond], k, m, fl,
                                                             cond == "none")
    return names, table


def resampled(none, runs, k, m, fl, same_pool, draws=DRAWS):
    """Failed checks / checks over `draws` draws (a fixed stream: the same table every time)
    of a golden of k unchanged seeds and a check of m seeds of `runs` not among them: a finer
    estimate than the disjoint chunks, whose checks share seeds from draw to draw."""
    rng = random.Random(42 + 1000 * k + m)
    gold = sorted(s for s in none if none[s] is not None)
    pool = sorted(runs)
    failed = 0
    for _ in range(draws):
        g = rng.sample(gold, k)
        rest = [s for s in pool if not (same_pool and s in g)]
        c = rng.sample(rest, m)
        ok, _ = decide([none[s] for s in g], [runs[s] for s in c], fl)
        failed += not ok
    return failed, draws


def cell(failed, checks, bold=False):
    if checks == 0:
        return "n/a"
    text = "%d/%d (%.0f%%)" % (failed, checks, 100.0 * failed / checks)
    return "**%s**" % text if bold else text


def print_tables(names, table, recipes):
    summary = []
    for k, m in recipes:
        print("\nK = %d golden seeds, M = %d check seeds: checks that failed / checks\n" % (k, m))
        print("| golden | false alarms | lr x 0.5 | lr x 2 |")
        print("|---|---|---|---|")
        total = {c: [0, 0] for c in ("none", "half", "double")}
        weakest = {c: (2.0, "") for c in ("half", "double")}
        for name in names:
            cells = []
            for c in ("none", "half", "double"):
                f, n = table[(k, m), name, c]
                total[c][0] += f
                total[c][1] += n
                cells.append(cell(f, n))
                if c != "none" and n > 0 and f / n < weakest[c][0]:
                    weakest[c] = (f / n, name)
            print("| %s | %s |" % (name, " | ".join(cells)))
        print("| **all** | %s |" % " | ".join(cell(*total[c], bold=True)
                                             for c in ("none", "half", "double")))
        summary.append((k, m, total, weakest))
    print("\nRecipes, disjoint chunks: over all goldens (the weakest golden)\n")
    print("| K | M | false alarms | lr x 0.5 caught | lr x 2 caught |")
    print("|---|---|---|---|---|")
    for k, m, total, weakest in summary:
        print("| %d | %d | %s | %s (%s %.0f%%) | %s (%s %.0f%%) |" % (
            k, m, cell(*total["none"]), cell(*total["half"]), weakest["half"][1],
            100 * weakest["half"][0], cell(*total["double"]), weakest["double"][1],
            100 * weakest["double"][0]))
    print("\nRecipes, %d resampled draws per golden: over all goldens (the weakest golden)\n"
          % DRAWS)
    print("| K | M | false alarms | lr x 0.5 caught | lr x 2 caught |")
    print("|---|---|---|---|---|")
    for k, m in recipes:
        cells = []
        for c in ("none", "half", "double"):
            f = sum(table[(k, m), name, c, "drawn"][0] for name in names)
            n = sum(table[(k, m), name, c, "drawn"][1] for name in names)
            low = min(names, key=lambda x: table[(k, m), x, c, "drawn"][0])
            hi = max(names, key=lambda x: table[(k, m), x, c, "drawn"][0])
            pick = hi if c == "none" else low
            cells.append("%s (%s %.1f%%)" % (cell(f, n), pick,
                                             100.0 * table[(k, m), pick, c, "drawn"][0] / DRAWS))
        print("| %d | %d | %s |" % (k, m, " | ".join(cells)))
    for k, m in recipes:
        print("\nK = %d, M = %d, %d resampled draws: failed / checks\n" % (k, m, DRAWS))
        print("| golden | false alarms | lr x 0.5 | lr x 2 |")
        print("|---|---|---|---|")
        for name in names:
            print("| %s | %s |" % (name, " | ".join(
                cell(*table[(k, m), name, c, "drawn"]) for c in ("none", "half", "double"))))


def read_metrics(path):
    with open(path) as f:
        return [{k: num(r[k]) for k in ("test_accuracy", "test_loss", "throughput_sps")}
                for r in csv.DictReader(f)]


def validate(golden_dir, check_out):
    golden = [summaries(read_metrics(p))
              for p in sorted(glob.glob(os.path.join(golden_dir, "seed-*", "metrics.csv")))]
    runs = [summaries(read_metrics(p))
            for p in sorted(glob.glob(os.path.join(check_out, "seed-*", "metrics.csv")))]
    ok, figures = decide(golden, runs, dict(FLOORS))
    with open(os.path.join(check_out, "check.csv")) as f:
        real = {r["statistic"]: r for r in csv.DictReader(f)}
    print("passes: %s" % ok)
    for st, (mu, sd, rmean, half) in figures.items():
        r = real[st]
        print("%-16s golden %.9g / %s  sd %.9g / %s  run %.9g / %s  half %.9g / %s" % (
            st, mu, r["golden_mean"], sd, r["golden_sd"], rmean, r["run_mean"], half,
            r["half_width"]))


def main(argv):
    if len(argv) >= 2 and argv[1] == "--validate":
        validate(argv[2], argv[3])
        return 0
    recipes = [(5, 2), (5, 4), (10, 2), (10, 4), (20, 4)]
    if len(argv) >= 4 and argv[2] == "--recipes":
        recipes = [tuple(int(x) for x in r.split(":")) for r in argv[3].split(",")]
    names, table = measure(argv[1], recipes)
    print_tables(names, table, recipes)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
