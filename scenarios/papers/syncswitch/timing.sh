#!/usr/bin/env bash
# Sync-Switch's offline timing policy (PROTOCOLS §6.2.2, [R] that it is a search): run BSP
# once, then candidate BSP fractions from the smallest up, and keep the first whose final
# accuracy is within TOL of BSP's. For a recurring job, pay this search once.
#
#   scenarios/papers/syncswitch/timing.sh SCENARIO.json [TOL] [FRACTIONS...] [-- --set ...]
#
# Defaults: TOL 0.005, fractions 0.02 0.05 0.1 0.25 0.5 0.75. Runs go to out/timing/p<FRACTION>.
set -euo pipefail
scenario=$1
shift
tol=${1:-0.005}
[ $# -gt 0 ] && shift
fractions=()
while [ $# -gt 0 ] && [ "$1" != "--" ]; do fractions+=("$1"); shift; done
[ $# -gt 0 ] && shift # the rest are hetsim options
[ ${#fractions[@]} -eq 0 ] && fractions=(0.02 0.05 0.1 0.25 0.5 0.75)
bin=${HETSIM:-}
if [ -z "$bin" ]; then
    if [ -x build-opt/hetsim ]; then bin=build-opt/hetsim; else bin=build/hetsim; fi
fi
out=${OUT:-out/timing}

final() { # run dir -> "final_accuracy sim_time_s"
    python3 -c 'import json,sys; d=json.load(open(sys.argv[1]+"/summary.json")); print(d["final_accuracy"], d["sim_time_s"])' "$1"
}
run() { # fraction, then hetsim options
    local p=$1
    shift
    "$bin" run "$scenario" -o "$out/p$p" --quiet --set protocol.bsp_fraction="$p" "$@"
}

run 1 "${@}"
read -r bsp_acc bsp_time < <(final "$out/p1")
echo "bsp: accuracy $bsp_acc, time ${bsp_time} s; tolerance $tol"
for p in "${fractions[@]}"; do
    run "$p" "${@}"
    read -r acc t < <(final "$out/p$p")
    echo "p = $p: accuracy $acc, time ${t} s"
    if python3 -c 'import sys; sys.exit(0 if float(sys.argv[1]) >= float(sys.argv[2]) - float(sys.argv[3]) else 1)' "$acc" "$bsp_acc" "$tol"; then
        echo "chosen: bsp_fraction = $p"
        exit 0
    fi
done
echo "no candidate within $tol of BSP: keep bsp_fraction = 1"
