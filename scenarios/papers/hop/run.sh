#!/usr/bin/env bash
# Hop paper trend (PROTOCOLS §3): 16 workers on a ring, Fashion-MNIST, the svm and mlp models,
# each scenario beside its standard-decentralized twin (hop with b = 0, s = 0, no tokens, no
# skipping: PROTOCOLS §3.1). Prints the table of README.md and draws the comparison figures.
#
#   bash scenarios/papers/hop/run.sh [--smoke] [HETSIM_BINARY] [-o OUT]   (from the repository root)
#
# --smoke runs the svm pairs only and draws no figures (a few seconds). Runs go to
# OUT/<scenario> (default out/papers/hop), figures to OUT/figures/<model>-<slowdown>/.
# Exit status 1 when a target of the issue is missed (the table says which).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
smoke=0
out=out/papers/hop
bin=""
while [ $# -gt 0 ]; do
    case "$1" in
    --smoke) smoke=1 ;;
    -o) out=$2; shift ;;
    -*) echo "usage: $0 [--smoke] [HETSIM_BINARY] [-o OUT]" >&2; exit 2 ;;
    *) bin=$1 ;;
    esac
    shift
done
if [ -z "$bin" ]; then
    if [ -x build-opt/hetsim ]; then bin=build-opt/hetsim; else bin=build/hetsim; fi
fi
models="svm mlp"
if [ "$smoke" = 1 ]; then models="svm"; fi

for m in $models; do
    for s in det rand; do
        for p in std hop; do
            "$bin" run "$here/$m-$s-$p.json" -o "$out/$m-$s-$p" --quiet
        done
        if [ "$smoke" = 0 ] && [ "$s" = det ]; then # ablation: the same hop without skipping
            "$bin" run "$here/$m-det-hop.json" -o "$out/$m-det-noskip" --quiet \
                --set name="$m-det-noskip" --set protocol.skip=false
        fi
        if [ "$smoke" = 0 ]; then
            "$bin" plot "$out/$m-$s-std" "$out/$m-$s-hop" -o "$out/figures/$m-$s" >/dev/null
        fi
    done
done

if [ "$smoke" = 0 ]; then # resnet50-on-V100 variant of mlp-det, hop against allreduce (README)
    for s in 1 2 3; do
        "$bin" run "$here/mlp-det-resnet50-v100.json" -o "$out/resnet50-v100/allreduce-s$s" \
            --quiet --set seed="$s" --set 'protocol={"name":"allreduce"}'
        "$bin" run "$here/mlp-det-resnet50-v100.json" -o "$out/resnet50-v100/hop-s$s" \
            --quiet --set seed="$s"
    done
fi

python3 - "$out" $models <<'PY'
import json, os, sys
out, models = sys.argv[1], sys.argv[2:]
def load(n):
    with open(os.path.join(out, n, "summary.json")) as f:
        return json.load(f)
ok = True
print("| model | slowdown | std: time to target s | hop: time to target s | speed-up | std samples/s | hop samples/s | throughput ratio | hop skipped (worker 3) | updates per averaging (hop) | target | met |")
print("|---|---|---|---|---|---|---|---|---|---|---|---|")
for m in models:
    for s in ("det", "rand"):
        a, b = load(f"{m}-{s}-std"), load(f"{m}-{s}-hop")
        ta, tb = a["time_to_target_s"], b["time_to_target_s"]
        speed = ta / tb if ta is not None and tb is not None else None
        ra, rb = a["mean_throughput_sps"], b["mean_throughput_sps"]
        rep = b["protocol_report"]
        if s == "det":
            target = "speed-up >= 1.8"
            met = speed is not None and speed >= 1.8
        else:
            target = "throughput >= 1.2x, target no later"
            met = rb >= 1.2 * ra and tb is not None and (ta is None or tb <= ta)
        ok = ok and met
        fmt = lambda x: "not reached" if x is None else f"{x:.2f}"
        print(f"| {m} | {'one worker 5x' if s == 'det' else '4x w.p. 0.05'} | {fmt(ta)} | {fmt(tb)} | "
              f"{'-' if speed is None else f'{speed:.2f}x'} | {ra:.0f} | {rb:.0f} | {rb / ra:.2f}x | "
              f"{rep['skipped_iterations']:.0f} ({rep['skipped_w3']:.0f}) | {rep['updates_used_mean']:.3f} | "
              f"{target} | {'yes' if met else 'NO'} |")
if os.path.exists(os.path.join(out, f"{models[0]}-det-noskip", "summary.json")):
    print()
    print("| model | one worker 5x: hop without skipping, time to target s | samples/s | speed-up over std |")
    print("|---|---|---|---|")
    for m in models:
        a, c = load(f"{m}-det-std"), load(f"{m}-det-noskip")
        ta, tc = a["time_to_target_s"], c["time_to_target_s"]
        sp = "-" if ta is None or tc is None else f"{ta / tc:.2f}x"
        print(f"| {m} | {'not reached' if tc is None else f'{tc:.2f}'} | {c['mean_throughput_sps']:.0f} | {sp} |")
if os.path.isdir(os.path.join(out, "resnet50-v100")):
    print()
    print("| seed | resnet50/V100 mlp-det: allreduce time to target s | hop | speed-up |")
    print("|---|---|---|---|")
    for s in (1, 2, 3):
        a, b = (load(f"resnet50-v100/{n}-s{s}")["time_to_target_s"] for n in ("allreduce", "hop"))
        print(f"| {s} | {a} | {b} | {'-' if not a or not b else f'{a / b:.2f}x'} |")
sys.exit(0 if ok else 1)
PY
