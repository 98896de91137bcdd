#!/bin/sh
# Runs the seeds from which tests/golden/power.py measures what `hetsim check` recipes
# (K golden seeds, M check seeds) catch: for every golden under ROOT (default
# tests/golden/curves), a sweep of N0 seeds of its unchanged scenario (seeds 2000 up; default
# 50), and N1 seeds of its learning rate halved (3000 up) and doubled (4000 up; default 32):
# seed sets disjoint from each other and from the goldens' own seeds (11-20), so that every
# golden drawn from the first and every check drawn from any of them are independent. Each
# sweep goes to OUT/NAME-none, OUT/NAME-half and OUT/NAME-double (its curves.csv is what
# power.py reads), JOBS runs at a time (default 2). A killed run resumes where it stopped
# (a sweep runs only its missing points). Then prints power.py's table.
#   power.sh HETSIM OUT [N0] [N1] [JOBS] [ROOT]
set -u
hetsim=$1
out=$2
n0=${3:-50}
n1=${4:-32}
jobs=${5:-2}
root=${6:-tests/golden/curves}
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out/sweeps" || exit 1
seeds() { # first count
    awk -v a="$1" -v n="$2" 'BEGIN { for (i = 0; i < n; i++) printf "%s%d", i ? ", " : "", a + i }'
}
for d in "$root"/*/; do
    [ -f "$d/scenario.json" ] || continue
    d=$(cd "$d" && pwd)
    name=$(basename "$d")
    lr=$(sed -n 's/.*"lr": *\([0-9.e-]*\).*/\1/p' "$d/scenario.json" | head -n 1)
    for cond in none half double; do
        case $cond in
        none) f=1 first=2000 n=$n0 ;;
        half) f=0.5 first=3000 n=$n1 ;;
        double) f=2 first=4000 n=$n1 ;;
        esac
        v=$(awk -v a="$lr" -v f="$f" 'BEGIN { print a * f }')
        s="$out/sweeps/$name-$cond.json"
        printf '{ "base": "%s", "grid": { "workload.lr": [%s] }, "seeds": [%s] }\n' \
            "$d/scenario.json" "$v" "$(seeds "$first" "$n")" >"$s"
        "$hetsim" sweep "$s" -j "$jobs" --quiet -o "$out/$name-$cond" >/dev/null ||
            echo "power.sh: sweep $s failed" >&2
    done
done
/usr/bin/env python3 "$here/power.py" "$out"
