#!/usr/bin/env bash
# Moshpit averaging benchmark (PROTOCOLS 5.5, 1.5) and Moshpit SGD training (5.6).
#
#   bash scenarios/papers/moshpit/run.sh [--smoke|--full] [--skip-slow] [--only SCHEME]
#       [HETSIM_BINARY] [-o OUT]
#
# Averaging: one N(0,1) scalar per peer (model "vector"), every peer sits out each round with
# probability p (straggler rule "dropout"); the table gives the mean number of rounds (over
# the seeds, capped at 50) until the variance across peers drops below 1e-4 and below 1e-9,
# for All-Reduce, Gossip (ring), SGP (push-sum, 2 peers, the SGP repository's exponential
# graph), SGP-authors (sgp's schedule "moshpit-averager": the Moshpit authors' own averager,
# whose rows their table reports), random groups of 32 and Moshpit 32x32 (and 8x8x8 for
# N = 512). Default: N in {512, 1024}, p in {0, 0.01}, 3 seeds (a few
# minutes); --full: N in {512, 768, 900, 1024}, p in {0, 0.001, 0.005, 0.01}, 10 seeds (the
# paper's grid; about 22 minutes on a 2-core machine); --smoke: N = 64
# (8x8, groups of 8, 4x4x4), 1 seed, and no training runs. --skip-slow leaves out the
# All-Reduce and Gossip rows (rings of N: most of the wall time) and the training runs;
# --only SCHEME runs that averaging row alone (e.g. SGP-authors).
# Training: train-*.json (16 workers, Fashion-MNIST, one worker 4x slower, dropouts), time to
# the target accuracy per protocol (moshpit: the grid in global rounds, the key form without
# them and a target of 4 waiting through its rounds, and {"name": "moshpit"} at its defaults:
# rounds beside the steps), and a comparison figure under OUT/figures/train. Then the default
# against `overlap` false (the earlier default, issue 39) on train-default-resnet50-v100.json
# (ResNet-50 timing on V100, one worker 4x slower, seeds 1-3) and on README's even cluster
# (scenarios/compare/even-allreduce.json as sweeps/compare/all-even.json runs moshpit, seeds
# 11-15): samples/s against the compute-bound ideal, waiting, groups and time alone.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
mode=default
slow=1
only=""
out=out/papers/moshpit
bin=""
while [ $# -gt 0 ]; do
    case "$1" in
    --smoke) mode=smoke ;;
    --full) mode=full ;;
    --skip-slow) slow=0 ;;
    --only) only=$2; shift ;;
    -o) out=$2; shift ;;
    -*) echo "usage: $0 [--smoke|--full] [--skip-slow] [--only SCHEME] [HETSIM_BINARY] [-o OUT]" >&2; exit 2 ;;
    *) bin=$1 ;;
    esac
    shift
done
if [ -z "$bin" ]; then
    if [ -x build-opt/hetsim ]; then bin=build-opt/hetsim; else bin=build/hetsim; fi
fi
case $mode in
smoke) ns="64"; ps="0 0.01"; seeds=1 ;;
full) ns="512 768 900 1024"; ps="0 0.001 0.005 0.01"; seeds=10 ;;
*) ns="512 1024"; ps="0 0.01"; seeds=3 ;;
esac

# scheme name, scenario, extra --set for the smoke size
schemes() {
    local n=$1
    if [ "$slow" = 1 ]; then
        echo "All-Reduce avg-allreduce"
        echo "Gossip avg-gossip"
    fi
    echo "SGP avg-sgp"
    echo "SGP-authors avg-sgp-authors"
    if [ "$mode" = smoke ]; then
        echo "Random-8 avg-random32 protocol.group_size=8"
        echo "Moshpit-8x8 avg-moshpit32x32 protocol.grid=[8,8]"
        echo "Moshpit-4x4x4 avg-moshpit8x8x8 protocol.grid=[4,4,4]"
    else
        echo "Random-32 avg-random32"
        echo "Moshpit-32x32 avg-moshpit32x32"
        if [ "$n" = 512 ]; then echo "Moshpit-8x8x8 avg-moshpit8x8x8"; fi
    fi
}

mkdir -p "$out"
rows="$out/averaging.tsv"
: >"$rows"
for n in $ns; do
    for p in $ps; do
        while read -r name file extra; do
            for s in $(seq 1 "$seeds"); do
                for bound in 1e-4 1e-9; do
                    dir="$out/avg/$name-n$n-p$p-s$s-$bound"
                    set -- --set workers="$n" --set seed="$s" \
                        --set "stragglers[0].probability=$p" --set stop.consensus="$bound"
                    if [ -n "${extra:-}" ]; then set -- "$@" --set "$extra"; fi
                    "$bin" run "$here/$file.json" "$@" -o "$dir" --quiet
                    printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$name" "$n" "$p" "$s" "$bound" "$dir" >>"$rows"
                done
            done
        done < <(schemes "$n" | awk -v only="$only" 'only == "" || $1 == only')
    done
done

if [ "$mode" != smoke ] && [ "$slow" = 1 ]; then
    for t in allreduce adpsgd sgp moshpit moshpit-async moshpit-default; do
        "$bin" run "$here/train-$t.json" -o "$out/train/$t" --quiet
    done
    for s in 1 2 3; do # resnet50-on-V100 variant (README)
        "$bin" run "$here/train-resnet50-v100.json" -o "$out/train/resnet50-v100/allreduce-s$s" \
            --quiet --set seed="$s" --set 'protocol={"name":"allreduce"}'
        "$bin" run "$here/train-resnet50-v100.json" -o "$out/train/resnet50-v100/moshpit-s$s" \
            --quiet --set seed="$s"
    done
    for ov in true false; do # issue 39: rounds beside the steps (default) or waited through
        for s in 1 2 3; do
            "$bin" run "$here/train-default-resnet50-v100.json" --quiet --set seed="$s" \
                --set protocol.overlap="$ov" -o "$out/train/overlap/resnet50-v100-$ov-s$s"
        done
        for s in 11 12 13 14 15; do
            "$bin" run "$here/../../compare/even-allreduce.json" --quiet --set seed="$s" \
                --set eval.every_s=0.5 --set 'protocol={"name":"moshpit"}' \
                --set protocol.overlap="$ov" -o "$out/train/overlap/even-$ov-s$s"
        done
    done
    "$bin" plot "$out/train/allreduce" "$out/train/adpsgd" "$out/train/sgp" "$out/train/moshpit" \
        "$out/train/moshpit-async" "$out/train/moshpit-default" -o "$out/figures/train" >/dev/null
fi

python3 - "$rows" "$out" "$mode$slow" <<'PY'
import json, os, sys
from collections import defaultdict
rows, out, mode = sys.argv[1], sys.argv[2], sys.argv[3]
res = defaultdict(list)
walls = defaultdict(float)
order = []
for line in open(rows):
    name, n, p, s, bound, d = line.rstrip("\n").split("\t")
    with open(os.path.join(d, "summary.json")) as f:
        j = json.load(f)
    r = j["rounds"] if j["stop_reason"] == "consensus" else 50
    key = (name, int(n), p)
    if key not in order:
        order.append(key)
    res[key + (bound,)].append(r)
    walls[key] += j["wall"]["wall_s"]
ps = []
for k in order:
    if k[2] not in ps:
        ps.append(k[2])
print("Rounds until the variance is below 1e-4 / 1e-9 (mean over seeds, capped at 50); p: dropout")
print("| scheme | N | " + " | ".join(f"p={p}" for p in ps) + " |")
print("|---|---|" + "---|" * len(ps))
seen = []
for (name, n, p) in order:
    if (name, n) in seen:
        continue
    seen.append((name, n))
    cells = []
    for q in ps:
        a, b = res.get((name, n, q, "1e-4")), res.get((name, n, q, "1e-9"))
        cells.append(f"{sum(a)/len(a):.1f} / {sum(b)/len(b):.1f}" if a and b else "-")
    print(f"| {name} | {n} | " + " | ".join(cells) + " |")
print()
print("Wall seconds per (scheme, N, p), all seeds and both bounds:")
for k in order:
    print(f"  {k[0]} N={k[1]} p={k[2]}: {walls[k]:.1f} s")
if mode == "default1" or mode == "full1":
    print()
    print("| protocol | time to target s | final accuracy | iterations | sim time s |")
    print("|---|---|---|---|---|")
    for t in ("allreduce", "adpsgd", "sgp", "moshpit", "moshpit-async", "moshpit-default"):
        with open(os.path.join(out, "train", t, "summary.json")) as f:
            j = json.load(f)
        tt = j["time_to_target_s"]
        print(f"| {t} | {'-' if tt is None else f'{tt:.2f}'} | {j['final_accuracy']:.4f} | {j['iterations']} | {j['sim_time_s']:.2f} |")
    print()
    print("Rounds beside the steps (overlap true, the default) or waited through (false); mean over")
    print("the seeds; ideal: each worker's samples over its computing time, summed")
    print("| cluster | overlap | samples/s | ideal | of ideal | waiting | time to 0.8 s | groups | alone | matchmaking wait s |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    import csv
    for name, seeds in (("resnet50-v100", (1, 2, 3)), ("even", (11, 12, 13, 14, 15))):
        for ov in ("true", "false"):
            acc = defaultdict(list)
            for s in seeds:
                d = os.path.join(out, "train", "overlap", f"{name}-{ov}-s{s}")
                with open(os.path.join(d, "summary.json")) as f:
                    j = json.load(f)
                rows = list(csv.DictReader(open(os.path.join(d, "workers.csv"))))
                busy = sum(float(r["compute_s"]) + float(r["comm_s"]) + float(r["wait_s"]) for r in rows)
                ideal = sum(float(r["samples"]) / float(r["compute_s"]) for r in rows)
                sps = j["samples"] / j["sim_time_s"]
                ttt = next((float(m["time_s"]) for m in csv.DictReader(open(os.path.join(d, "metrics.csv")))
                            if float(m["test_accuracy"]) >= 0.8), float("nan"))
                r = j["protocol_report"]
                for k, v in (("sps", sps), ("ideal", ideal), ("wait", 100 * sum(float(x["wait_s"]) for x in rows) / busy),
                             ("ttt", ttt), ("groups", r["groups"]), ("alone", r["alone"]),
                             ("mm", r["matchmaking_wait_s"])):
                    acc[k].append(v)
            m = {k: sum(v) / len(v) for k, v in acc.items()}
            print(f"| {name} | {ov} | {m['sps']:.0f} | {m['ideal']:.0f} | {100 * m['sps'] / m['ideal']:.0f}% | {m['wait']:.1f}% | {m['ttt']:.2f} | {m['groups']:.0f} | {m['alone']:.0f} | {m['mm']:.1f} |")
PY
