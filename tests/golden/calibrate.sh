#!/bin/sh
# Calibrates `hetsim check` on this project's golden curves: for every golden under ROOT
# (default tests/golden/curves), N seed shifts of the unchanged scenario (default 100; shift j
# checks the 4 seeds (the check's default M) from 1000 + 4j, none of them a golden seed) give
# the false-alarm rate, and P shifts (default 20; the 4 seeds from 5000 + 4j) of each
# perturbation below give its detection rate. tests/golden/power.sh measures the power of
# recipes (K golden seeds, M check seeds) against a halved and a doubled learning rate.
# Writes one line per check as it ends ("golden perturbation seed exit") to RESULTS (default
# calibrate.txt), then prints the table of docs/check.md (markdown). CPU-heavy: JOBS checks
# at a time (default 2).
#   calibrate.sh HETSIM [N] [P] [JOBS] [ROOT] [RESULTS]
#   calibrate.sh --table RESULTS     the table of a results file (of a run cut short, say)
# A perturbation that a scenario cannot take (no straggler, no graph key) is "n/a" for it.
set -u

# The table: false alarms and detections per golden and perturbation, then over all.
table() {
    labels="none lr_x0.8 lr_x1.2 bandwidth_/2 straggler_x2 batch_x2 graph eval.samples_/10"
    printf '| golden |'
    for l in $labels; do
        [ "$l" = none ] && l="false alarms"
        printf ' %s |' "$l"
    done
    printf '\n|---|---|---|---|---|---|---|---|---|\n'
    for name in $(cut -d' ' -f1 "$1" | sort -u) all; do
        [ "$name" = all ] && printf '| **all** |' || printf '| %s |' "$name"
        for l in $labels; do
            awk -v name="$name" -v l="$l" '
                ($1 == name || name == "all") && ($2 == l || (l == "graph" && $2 ~ /^graph/)) \
                    && $4 != 2 { c++; h += ($4 != 0) }
                END {
                    if (c == 0) printf " n/a |"
                    else if (name == "all") printf " **%d/%d (%.1f%%)** |", h, c, 100 * h / c
                    else printf " %d/%d |", h, c
                }' "$1"
        done
        printf '\n'
    done
}

# One check: prints "golden label seed exit".
one() {
    hetsim=$1 d=$2 label=$3 seed=$4 out=$5
    shift 5
    set -- --set "seed=$seed" "$@"
    [ "$label" = none ] || set -- "$@" --allow-scenario-change
    "$hetsim" check "$d/scenario.json" --golden "$d/golden" -o "$out" "$@" >/dev/null 2>&1
    echo "$(basename "$d") $label $seed $?"
    rm -rf "$out"
}

if [ "${1:-}" = --table ]; then
    table "$2"
    exit 0
fi
if [ "${1:-}" = --one ]; then
    shift
    one "$@"
    exit 0
fi
hetsim=$1
n=${2:-100}
p=${3:-20}
jobs=${4:-2}
root=${5:-tests/golden/curves}
results=${6:-calibrate.txt}
tmp=$(mktemp -d /tmp/hetsim-calibrate-XXXXXX) || exit 1
trap 'rm -rf "$tmp"' EXIT

# The resolved value of KEY in a run.json (its first occurrence), or nothing.
value() {
    sed -n "s/^ *\"$2\": \([^,]*\),\{0,1\}\$/\1/p" "$1" | head -n 1 | tr -d '"'
}
scale() {
    awk "BEGIN { print $1 * $2 }"
}

# The job list, a check per line: golden, label, seed, output directory, overrides; in
# rounds (N / P seed shifts of every golden, then one shift of each perturbation), so that a
# run cut short still has every golden and perturbation in its results.
per=$(((n + p - 1) / (p > 0 ? p : 1)))
r=0
while [ $((r * per)) -lt "$n" ] || [ "$r" -lt "$p" ]; do
    for d in "$root"/*/; do
        [ -f "$d/scenario.json" ] || continue
        d=${d%/}
        b=$(basename "$d")
        j=$((r * per))
        while [ "$j" -lt $(((r + 1) * per)) ] && [ "$j" -lt "$n" ]; do
            s=$((1000 + 4 * j))
            echo "$d none $s $tmp/$b-none-$s"
            j=$((j + 1))
        done
        [ "$r" -lt "$p" ] || continue
        run=$(ls -d "$d"/golden/seed-*/run.json | head -n 1)
        lr=$(value "$run" lr)
        batch=$(value "$run" batch)
        bw=$(value "$run" bandwidth_gbps)
        slow=$(value "$run" slowdown)
        graph=$(value "$run" graph)
        samples=$(value "$run" samples)
        to=ring
        [ "$graph" = ring ] && to=exponential
        s=$((5000 + 4 * r))
        o="$tmp/$b-$s"
        echo "$d lr_x0.8 $s $o-lr08 --set workload.lr=$(scale "$lr" 0.8)"
        echo "$d lr_x1.2 $s $o-lr12 --set workload.lr=$(scale "$lr" 1.2)"
        [ -n "$bw" ] && echo "$d bandwidth_/2 $s $o-bw --set network.bandwidth_gbps=$(scale "$bw" 0.5)"
        [ -n "$slow" ] && echo "$d straggler_x2 $s $o-slow --set stragglers[0].slowdown=$(scale "$slow" 2)"
        echo "$d batch_x2 $s $o-batch --set workload.batch=$((batch * 2))"
        [ -n "$graph" ] && echo "$d graph_$to $s $o-graph --set protocol.graph=$to"
        echo "$d eval.samples_/10 $s $o-eval --set eval.samples=$((samples / 10))"
    done
    r=$((r + 1))
done >"$tmp/jobs"

: >"$results"
xargs -P "$jobs" -L 1 sh "$0" --one "$hetsim" <"$tmp/jobs" >>"$results"
table "$results"
