#!/bin/sh
# Checks every golden curve: each folder under tests/golden/curves/ holds scenario.json and
# golden/ (written by `hetsim check scenario.json --golden golden --update`: 10 seeds).
# Adding a protocol's golden is adding its folder. Run from the source root by meson test:
#   check_all.sh HETSIM [ROOT]
set -u
hetsim=$1
root=${2:-tests/golden/curves}
tmp=$(mktemp -d /tmp/hetsim-golden-XXXXXX) || exit 1
trap 'rm -rf "$tmp"' EXIT
n=0
bad=""
for d in "$root"/*/; do
    [ -f "$d/scenario.json" ] || continue
    d=${d%/}
    name=$(basename "$d")
    n=$((n + 1))
    "$hetsim" check "$d/scenario.json" --golden "$d/golden" -o "$tmp/$name" || bad="$bad $name"
done
if [ "$n" = 0 ]; then
    echo "no golden curves under $root" >&2
    exit 1
fi
if [ -n "$bad" ]; then
    echo "golden curves: $n checked, regressions in:$bad" >&2
    echo "(if the change is intended: hetsim check $root/NAME/scenario.json" \
        "--golden $root/NAME/golden --update)" >&2
    exit 1
fi
echo "golden curves: $n checked, no regression (false-alarm rate <= 1% per golden)"
