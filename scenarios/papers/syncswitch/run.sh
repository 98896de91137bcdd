#!/usr/bin/env bash
# Sync-Switch paper trend (PROTOCOLS §6): runs every configuration of this folder and prints
# the table of README.md; with --smoke, a short budget (0.1 epoch) and no figures, for CI.
#
#   scenarios/papers/syncswitch/run.sh [--smoke] [-o OUT]     (from the repository root)
#
# HETSIM names the binary (default build-opt/hetsim, else build/hetsim). Runs go to
# OUT/<cluster>/<run> (default out/papers/syncswitch); figures, a set per cluster and one of
# the momentum policies, to OUT/<cluster>/figures/.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
smoke=0
out=out/papers/syncswitch
while [ $# -gt 0 ]; do
    case "$1" in
    --smoke) smoke=1 ;;
    -o) out=$2; shift ;;
    *) echo "usage: $0 [--smoke] [-o OUT]" >&2; exit 2 ;;
    esac
    shift
done
bin=${HETSIM:-}
if [ -z "$bin" ]; then
    if [ -x build-opt/hetsim ]; then bin=build-opt/hetsim; else bin=build/hetsim; fi
fi
extra=()
if [ "$smoke" = 1 ]; then extra=(--set 'stop={"epochs": 0.1}' --set eval.samples=1000); fi

# name  bsp_fraction  momentum_at_switch  online
runs_common="bsp 1 scale none
asp-keep 0 keep none
asp 0 scale none
ss05 0.05 scale none
ss25 0.25 scale none
ss50 0.5 scale none
ss25-keep 0.25 keep none
ss25-zero 0.25 zero none
ss25-ramp 0.25 ramp none"
runs_transient="ss25-greedy 0.25 scale greedy
ss25-budgeted 0.25 scale budgeted"

runs_servers="bsp 1 scale none
asp 0 scale none
ss25 0.25 scale none
$runs_transient"

run_cluster() { # cluster scenario runs [hetsim options...]
    local cluster=$1 scenario=$2 list=$3
    shift 3
    while read -r name p mom online; do
        "$bin" run "$here/$scenario.json" -o "$out/$cluster/$name" --quiet --set name="$name" \
            --set protocol.bsp_fraction="$p" --set protocol.momentum_at_switch="$mom" \
            --set protocol.online="$online" "$@" "${extra[@]}"
    done <<<"$list"
}

run_cluster jitter jitter "$runs_common"
run_cluster transient transient "$runs_common
$runs_transient"
# The transient cluster with the shards on 8 server hosts instead of colocated: a slowed
# worker's link then delays only its own iterations, not every pull.
run_cluster transient-servers transient "$runs_servers" --set servers=8 \
    --set protocol.placement=servers

# The jitter cluster timed as ResNet-50 on V100s (compute.profile and compute.device: 102 MB
# messages, about 0.09 s a step), pushes and pulls per slice (overlap, the default), then
# whole (overlap false): the softmax model still trains, the profile sets times and sizes.
runs_r50="bsp 1 scale none
asp 0 scale none
ss25 0.25 scale none"
run_cluster resnet50-v100 resnet50-v100 "$runs_r50"
run_cluster resnet50-v100-no-overlap resnet50-v100 "$runs_r50" --set protocol.overlap=false

python3 - "$out" <<'PY'
import json, sys, os
out = sys.argv[1]
def load(c, n):
    with open(os.path.join(out, c, n, "summary.json")) as f:
        d = json.load(f)
    return d, d["protocol_report"]
print("| cluster | run | p | momentum | online | time s | predicted s | pred. err | speed-up vs BSP | final acc | best acc | switch s | online ASP samples |")
print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
for c in ("jitter", "transient", "transient-servers", "resnet50-v100", "resnet50-v100-no-overlap"):
    bsp, _ = load(c, "bsp")
    asp, _ = load(c, "asp")
    names = [n for n in ("bsp", "asp-keep", "asp", "ss05", "ss25", "ss50", "ss25-keep",
                         "ss25-zero", "ss25-ramp", "ss25-greedy", "ss25-budgeted")
             if os.path.exists(os.path.join(out, c, n, "summary.json"))]
    for n in names:
        d, r = load(c, n)
        with open(os.path.join(out, c, n, "run.json")) as f:
            proto = json.load(f)["scenario"]["protocol"]
        p = proto["bsp_fraction"]
        t = d["sim_time_s"]
        pred = p * bsp["sim_time_s"] + (1 - p) * asp["sim_time_s"]
        sw = r["switch_s"]
        print("| %s | %s | %g | %s | %s | %.2f | %.2f | %+.1f%% | %.2fx | %.4f | %.4f | %s | %d |" % (
            c, n, p, proto["momentum_at_switch"], proto["online"], t, pred,
            100 * (t - pred) / pred, bsp["sim_time_s"] / t, d["final_accuracy"],
            d["best_accuracy"], "%.2f" % sw if sw >= 0 else "-", r["samples_online_asp"]))
PY

if [ "$smoke" = 0 ]; then
    for c in jitter transient; do
        "$bin" plot "$out/$c/bsp" "$out/$c/asp-keep" "$out/$c/asp" "$out/$c/ss05" \
            "$out/$c/ss25" "$out/$c/ss50" -o "$out/$c/figures" >/dev/null
        "$bin" plot "$out/$c/bsp" "$out/$c/ss25-keep" "$out/$c/ss25-zero" "$out/$c/ss25" \
            "$out/$c/ss25-ramp" -o "$out/$c/figures/momentum" >/dev/null
    done
fi
