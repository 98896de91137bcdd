#!/usr/bin/env bash
# Ripples / Prague paper trend (PROTOCOLS §4.7): 16 workers, Fashion-MNIST with a small MLP,
# messages of a 25 MB CNN, three clusters (homogeneous, one worker 4x slower, random 4x
# slowdowns with probability 0.1), each run by allreduce, ps, adpsgd and ripples at its default
# (groups "auto": the static grid [4, 4] on the homogeneous cluster, Group Division on the
# others) and in each group mode (random, buffer, division over the free workers, the literal
# division (batch "all") with "busy" join and skip, static grid [4, 4]). Prints the table of README.md:
# simulated time to the target accuracy (0.80) and Ripples' ratios against All-Reduce and
# AD-PSGD; draws one comparison figure set per cluster.
#
#   bash scenarios/papers/ripples/run.sh [--smoke] HETSIM_BINARY      (from the repository root)
#
# Runs go to out/papers/ripples/<cluster>/<run>, figures to out/papers/ripples/<cluster>/figures.
# --smoke: the homogeneous cluster only, allreduce and ripples (its default), 3 simulated seconds,
# no figures, into out/papers/ripples-smoke (CI: checks that everything runs, not the trend).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../paper_args.sh"
paper_args "" "$@"
[ ${#rest[@]} -eq 0 ] || paper_usage ""
out=out/papers/ripples

# name protocol groups
runs="allreduce allreduce -
ps ps -
adpsgd adpsgd -
ripples-random ripples random
ripples-buffer ripples buffer
ripples ripples -
ripples-division ripples division
ripples-division-join ripples division-join
ripples-division-skip ripples division-skip
ripples-static ripples static"
clusters="homogeneous slow-one random-slowdowns"
extra=()
if [ "$smoke" = 1 ]; then
    runs="allreduce allreduce -
ripples ripples -"
    clusters=homogeneous
    extra=(--set stop.time_s=3)
    out=out/papers/ripples-smoke
fi

for c in $clusters; do
    dirs=()
    while read -r name proto groups; do
        set=(--set protocol.name="$proto")
        case "$groups" in
        -) ;;
        division-join) set+=(--set protocol.groups=division --set protocol.batch=all) ;;
        division-skip) set+=(--set protocol.groups=division --set protocol.batch=all \
            --set protocol.busy=skip) ;;
        *) set+=(--set protocol.groups="$groups") ;;
        esac
        if [ "$groups" = static ]; then set+=(--set 'protocol.grid=[4, 4]'); fi
        "$bin" run "$here/$c.json" -o "$out/$c/$name" --quiet --set name="$c-$name" "${set[@]}" \
            "${extra[@]}"
        dirs+=("$out/$c/$name")
    done <<<"$runs"
    if [ "$smoke" = 0 ]; then
        "$bin" plot "${dirs[@]}" -o "$out/$c/figures" >/dev/null
    fi
done

if [ "$smoke" = 0 ]; then # resnet50-on-V100 variant of slow-one (README), seeds 1-3
    for s in 1 2 3; do
        "$bin" run "$here/slow-one-resnet50-v100.json" -o "$out/resnet50-v100/allreduce-s$s" \
            --quiet --set seed="$s" --set protocol.name=allreduce
        "$bin" run "$here/slow-one-resnet50-v100.json" -o "$out/resnet50-v100/ripples-s$s" \
            --quiet --set seed="$s" --set protocol.name=ripples --set protocol.groups=division
    done
fi

python3 - "$out" "$clusters" <<'PY'
import json, os, sys
out, clusters = sys.argv[1], sys.argv[2].split()
names = [n for n in ("allreduce", "ps", "adpsgd", "ripples-random", "ripples-buffer",
                     "ripples", "ripples-division", "ripples-division-join", "ripples-division-skip",
                     "ripples-static")]
def load(c, n):
    p = os.path.join(out, c, n, "summary.json")
    if not os.path.exists(p):
        return None
    with open(p) as f:
        return json.load(f)
def fmt(x, spec="%.1f"):
    return "-" if x is None else spec % x
print("| cluster | run | time to 0.80 s | vs All-Reduce | vs AD-PSGD | iterations | final acc |"
      " groups done | groups per step | mean group wait s | conflicts |")
print("|---|---|---|---|---|---|---|---|---|---|---|")
for c in clusters:
    ar = load(c, "allreduce")
    ad = load(c, "adpsgd")
    t_ar = ar and ar.get("time_to_target_s")
    t_ad = ad and ad.get("time_to_target_s")
    for n in names:
        d = load(c, n)
        if d is None:
            continue
        t = d.get("time_to_target_s")
        r = d.get("protocol_report") or {}
        print("| %s | %s | %s | %s | %s | %d | %.4f | %s | %s | %s | %s |" % (
            c, n, fmt(t), fmt(t / t_ar if t and t_ar else None, "%.2fx"),
            fmt(t / t_ad if t and t_ad else None, "%.2fx"), d["iterations"],
            d["final_accuracy"], fmt(r.get("groups_done"), "%d"),
            fmt(r.get("executions_per_step"), "%.2f"),
            fmt(r.get("mean_group_wait_s"), "%.4f"), fmt(r.get("conflicts"), "%d")))
rv = os.path.join(out, "resnet50-v100")
if os.path.isdir(rv):
    print()
    print("| seed | resnet50/V100 slow-one: allreduce time to 0.80 s | ripples (division) | ratio |")
    print("|---|---|---|---|")
    for s in (1, 2, 3):
        a, b = (json.load(open(os.path.join(rv, f"{n}-s{s}", "summary.json")))
                ["time_to_target_s"] for n in ("allreduce", "ripples"))
        print("| %d | %s | %s | %s |" % (s, fmt(a), fmt(b), fmt(b / a if a and b else None, "%.2fx")))
PY
