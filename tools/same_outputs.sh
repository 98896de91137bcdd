#!/bin/sh
# Runs scenarios with two hetsim binaries and compares every output file byte for byte
# (summary.json without its "wall" line, the one line that differs between identical runs).
# A refactor must change no result: run this with the binary before and after it.
#   tools/same_outputs.sh OLD_HETSIM NEW_HETSIM [-t SECONDS] [-i KEY] [SCENARIO.json...]
# Without scenarios: every scenario under scenarios/ and tests/golden/curves/. With -t, each
# run stops at that many simulated seconds at most (--set stop.time_s=...), for a quick pass;
# a scenario that refuses the override runs as written. With -i, summary.json's lines naming
# KEY are left out too: a figure the new binary adds on purpose (e.g. -i peer_reads). Prints one line per scenario (same,
# DIFFERS with the first differing file, or the exit codes when a run fails) and exits 1 if
# any differs.
set -u
[ $# -ge 2 ] || { echo "usage: $0 OLD_HETSIM NEW_HETSIM [-t SECONDS] [-i KEY] [SCENARIO.json...]" >&2; exit 2; }
old=$1 new=$2
shift 2
cap=
if [ "${1:-}" = -t ]; then
    cap=$2
    shift 2
fi
ignore='"wall"'
if [ "${1:-}" = -i ]; then
    ignore="\"$2\""
    shift 2
fi
[ $# -gt 0 ] || set -- $(find scenarios tests/golden/curves -name '*.json' ! -path '*/golden/*/golden/*' \
    ! -name 'sweep*.json' | grep -v -e '-sweep\.json$' -e '/sweeps/' | sort)
tmp=$(mktemp -d /tmp/hetsim-same-XXXXXX) || exit 2
trap 'rm -rf "$tmp"' EXIT
status=0
for s in "$@"; do
    grep -q '"grid"' "$s" && grep -q '"base"' "$s" && continue # a sweep file
    set --
    [ -n "$cap" ] && set -- --set "stop.time_s=$cap"
    for side in old new; do
        bin=$old
        [ $side = new ] && bin=$new
        rm -rf "$tmp/$side"
        "$bin" run "$s" -o "$tmp/$side" --quiet "$@" >"$tmp/$side.log" 2>&1
        echo $? >"$tmp/$side.rc"
        if [ "$(cat "$tmp/$side.rc")" = 2 ] && [ -n "$cap" ]; then
            rm -rf "$tmp/$side"
            "$bin" run "$s" -o "$tmp/$side" --quiet >"$tmp/$side.log" 2>&1
            echo $? >"$tmp/$side.rc"
        fi
        [ -f "$tmp/$side/summary.json" ] && sed -i -e '/"wall"/d' -e "/$ignore/d" "$tmp/$side/summary.json"
    done
    if [ "$(cat "$tmp/old.rc")" != "$(cat "$tmp/new.rc")" ]; then
        echo "DIFFERS $s: exit $(cat "$tmp/old.rc") before, $(cat "$tmp/new.rc") after"
        status=1
    elif [ "$(cat "$tmp/old.rc")" != 0 ]; then
        echo "failed  $s: exit $(cat "$tmp/old.rc") on both sides"
    elif d=$(diff -rq "$tmp/old" "$tmp/new" 2>&1); then
        echo "same    $s"
    else
        echo "DIFFERS $s: $(echo "$d" | head -n 1)"
        status=1
    fi
done
exit $status
