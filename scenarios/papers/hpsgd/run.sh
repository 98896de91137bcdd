#!/usr/bin/env bash
# HPSGD paper trend (PROTOCOLS §7): hpsgd against allreduce and localsgd on a
# communication-heavy cluster (one all-reduce takes about two iterations of compute), with all
# workers alike and with one worker 4x slower. Prints the table of README.md and, without
# --smoke, draws the comparison figures.
#
#   bash scenarios/papers/hpsgd/run.sh [--smoke] HETSIM_BINARY [OUT]   (from the repository root)
#
# Runs go to OUT/<cluster>/<run> (default out/papers/hpsgd), figures to OUT/<cluster>/figures.
# --smoke: 3 simulated seconds, no figures (CI).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../paper_args.sh"
paper_args "[OUT]" "$@"
[ ${#rest[@]} -le 1 ] || paper_usage "[OUT]"
out=${rest[0]:-out/papers/hpsgd}
extra=()
if [ "$smoke" = 1 ]; then extra=(--set stop.time_s=3); fi
target=0.80

# name  protocol
runs='allreduce {"name":"allreduce"}
localsgd {"name":"localsgd","local_steps":4}
hpsgd {"name":"hpsgd","flush":"both"}
hpsgd-newest {"name":"hpsgd","flush":"newest"}'

slow='stragglers=[{"kind":"fixed","workers":[3],"slowdown":4}]'
for cluster in even slow4x; do
    while read -r name proto; do
        sets=(--set "name=$cluster-$name" --set "protocol=$proto")
        if [ "$cluster" = slow4x ]; then sets+=(--set "$slow"); fi
        "$bin" run "$here/comm-heavy.json" -o "$out/$cluster/$name" --quiet "${sets[@]}" \
            "${extra[@]}"
    done <<<"$runs"
    if [ "$smoke" = 0 ]; then
        "$bin" plot "$out/$cluster/allreduce" "$out/$cluster/localsgd" "$out/$cluster/hpsgd" \
            "$out/$cluster/hpsgd-newest" -o "$out/$cluster/figures" >/dev/null
    fi
done

if [ "$smoke" = 0 ]; then # resnet50-on-V100 variant of slow4x (README), seeds 1-3
    for s in 1 2 3; do
        "$bin" run "$here/slow4x-resnet50-v100.json" -o "$out/resnet50-v100/allreduce-s$s" \
            --quiet --set seed="$s" --set 'protocol={"name":"allreduce"}'
        "$bin" run "$here/slow4x-resnet50-v100.json" -o "$out/resnet50-v100/hpsgd-s$s" \
            --quiet --set seed="$s" --set 'protocol={"name":"hpsgd","flush":"both"}'
    done
fi

python3 - "$out" "$target" <<'PY'
import csv, json, os, sys
out, target = sys.argv[1], float(sys.argv[2])
print(f"| cluster | run | iterations | samples/s | comm rounds | local steps per merge "
      f"| staleness (merges) | time to {target:.2f} (s) | acc at 10 s | final acc |")
print("|---|---|---|---|---|---|---|---|---|---|")
for c in ("even", "slow4x"):
    for n in ("allreduce", "localsgd", "hpsgd", "hpsgd-newest"):
        d = os.path.join(out, c, n)
        with open(os.path.join(d, "summary.json")) as f:
            s = json.load(f)
        rep = s.get("protocol_report", {})
        with open(os.path.join(d, "metrics.csv")) as f:
            rows = list(csv.DictReader(f))
        hit = next((float(r["time_s"]) for r in rows if float(r["test_accuracy"]) >= target), None)
        at10 = [float(r["test_accuracy"]) for r in rows if float(r["time_s"]) <= 10.0 + 1e-9]
        rounds = rep.get("merges", rep.get("averaging_rounds", s["iterations"] / s["workers"]))
        steps = rep.get("mean_local_steps_per_merge")
        stale = rep.get("mean_staleness_merges")
        print("| %s | %s | %d | %.0f | %d | %s | %s | %s | %.4f | %.4f |" % (
            c, n, s["iterations"], s["mean_throughput_sps"], rounds,
            "%.2f" % steps if steps is not None else "-",
            "%.2f" % stale if stale is not None else "-",
            "%.0f" % hit if hit is not None else "not reached",
            at10[-1] if at10 else float("nan"), s["final_accuracy"]))
rv = os.path.join(out, "resnet50-v100")
if os.path.isdir(rv):
    def hit(d):
        with open(os.path.join(d, "metrics.csv")) as f:
            return next((float(r["time_s"]) for r in csv.DictReader(f)
                         if float(r["test_accuracy"]) >= target), None)
    print()
    print(f"| seed | resnet50/V100 slow4x: allreduce time to {target:.2f} s | hpsgd | ratio |")
    print("|---|---|---|---|")
    for s in (1, 2, 3):
        a, b = (hit(os.path.join(rv, f"{n}-s{s}")) for n in ("allreduce", "hpsgd"))
        print("| %d | %s | %s | %s |" % (s, a, b, "%.2fx" % (b / a) if a and b else "-"))
PY
