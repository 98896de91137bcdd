#!/usr/bin/env bash
# Fault tests of run directories (sim/rundir.h), through the real binary: kill -9 at several
# points, a file-size limit at several sizes (disk full), unwritable places, a directory
# that is not a run, a reused run directory, a failed run. Each asserts what the run
# directory and its work directory hold afterwards. Needs HETSIM (the binary); runs from
# the source root. Prints "N passed, N failed".
set -u
bin=${HETSIM:?HETSIM must name the hetsim binary}
scn=tests/faults/run.json
tmp=$(mktemp -d /tmp/hetsim-faults-XXXXXX)
trap 'rm -rf "$tmp"' EXIT
passed=0 failed=0
ok() { passed=$((passed + 1)); }
bad() { failed=$((failed + 1)); echo "FAIL: $*"; }
check() { if eval "$2"; then ok; else bad "$1: $2"; fi; }

complete() { # a whole run directory, no work directory beside it
    [ -f "$1/run.json" ] && [ -f "$1/summary.json" ] && [ -f "$1/metrics.csv" ] &&
        [ -f "$1/workers.csv" ] && [ ! -e "$1.partial" ] && ! ls "$1"/*.tmp >/dev/null 2>&1 &&
        [ ! -e "$1/.hetsim-partial" ]
}

# 1. A plain run.
d=$tmp/plain
"$bin" run "$scn" -o "$d" --quiet >/dev/null 2>&1
check "plain run" 'complete "$d"'

# 2. kill -9 at several points of a first run: the directory is absent or complete, never
#    partial; what is left is only the marked work directory, which the next run removes.
for t in 0.02 0.1 0.3 0.6; do
    d=$tmp/kill-$t
    "$bin" run "$scn" -o "$d" --quiet >/dev/null 2>&1 &
    pid=$!
    sleep "$t"
    kill -9 "$pid" 2>/dev/null
    wait "$pid" 2>/dev/null
    check "kill at $t s" '[ ! -e "$d" ] || complete "$d"'
    check "kill at $t s leaves only the work directory" \
        '[ ! -e "$d.partial" ] || [ -f "$d.partial/.hetsim-partial" ]'
    "$bin" run "$scn" -o "$d" --quiet >/dev/null 2>&1
    check "rerun after kill at $t s" 'complete "$d"'
done

# 3. kill -9 of a run replacing a previous one: the previous run stays whole.
d=$tmp/replace-kill
"$bin" run "$scn" -o "$d" --quiet >/dev/null 2>&1
before=$(cat "$d/summary.json" "$d/metrics.csv" | md5sum)
"$bin" run "$scn" -o "$d" --set seed=8 --quiet >/dev/null 2>&1 &
pid=$!
sleep 0.2
kill -9 "$pid" 2>/dev/null
wait "$pid" 2>/dev/null
after=$(cat "$d/summary.json" "$d/metrics.csv" | md5sum)
check "killed replacement" '[ "$before" = "$after" ] || grep -q "\"seed\": 8" "$d/run.json"'
check "killed replacement keeps a whole run" '[ -f "$d/run.json" ] && [ -f "$d/summary.json" ]'

# 4. Disk full: a file-size limit (KiB) at several sizes, with the event trace and the plots
#    on so that every file can be the one that fails. Exit 1, nothing left.
for kib in 1 8 64 512; do
    d=$tmp/full-$kib
    (ulimit -f "$kib"; "$bin" run "$scn" -o "$d" --set output.events=true \
        --set output.plots=true --quiet >/dev/null 2>"$tmp/err")
    rc=$?
    if [ $rc = 0 ]; then
        check "limit $kib KiB, run passed" 'complete "$d"'
    else
        check "limit $kib KiB exits 1" '[ $rc = 1 ]'
        check "limit $kib KiB leaves nothing" '[ ! -e "$d" ] && [ ! -e "$d.partial" ]'
        check "limit $kib KiB says why" 'grep -q "hetsim: " "$tmp/err"'
    fi
done

# 5. Unwritable places: under a regular file; under a read-only directory (not as root,
#    who may write anywhere).
: >"$tmp/afile"
"$bin" run "$scn" -o "$tmp/afile/run" --quiet >/dev/null 2>"$tmp/err"
rc=$?
check "output under a file exits 1" '[ $rc = 1 ] && grep -q "afile" "$tmp/err"'
if [ "$(id -u)" != 0 ]; then
    mkdir "$tmp/ro" && chmod 555 "$tmp/ro"
    "$bin" run "$scn" -o "$tmp/ro/run" --quiet >/dev/null 2>"$tmp/err"
    rc=$?
    check "read-only parent exits 1" '[ $rc = 1 ] && [ ! -e "$tmp/ro/run" ]'
    chmod 755 "$tmp/ro"
fi

# 6. A non-empty directory that is not a run: refused (exit 2), untouched.
d=$tmp/mine
mkdir "$d" && echo precious >"$d/notes.txt"
"$bin" run "$scn" -o "$d" --quiet >/dev/null 2>"$tmp/err"
rc=$?
check "foreign directory exits 2" '[ $rc = 2 ] && grep -q "not empty" "$tmp/err"'
check "foreign directory untouched" '[ "$(ls -A "$d")" = notes.txt ] && [ ! -e "$d.partial" ]'
# ... and a work directory that is not hetsim's.
d=$tmp/fake && mkdir -p "$d.partial" && echo x >"$d.partial/x"
"$bin" run "$scn" -o "$d" --quiet >/dev/null 2>"$tmp/err"
rc=$?
check "foreign work directory exits 2" '[ $rc = 2 ] && [ -f "$d.partial/x" ] && [ ! -e "$d" ]'

# 7. A reused run directory is replaced whole: the old event trace does not survive.
d=$tmp/reuse
"$bin" run "$scn" -o "$d" --set output.events=true --quiet >/dev/null 2>&1
check "first run has events" '[ -f "$d/events.csv" ]'
"$bin" run "$scn" -o "$d" --quiet >/dev/null 2>&1
check "second run replaced the first" 'complete "$d" && [ ! -e "$d/events.csv" ]'

# 8. A failed run (divergence) leaves nothing, and a previous run stays.
d=$tmp/diverge
"$bin" run "$scn" -o "$d" --set workload.lr=1000 --quiet >/dev/null 2>"$tmp/err"
rc=$?
check "diverged run exits 1" '[ $rc = 1 ]'
check "diverged run leaves nothing" '[ ! -e "$d" ] && [ ! -e "$d.partial" ]'

echo "faults: $passed passed, $failed failed"
[ "$failed" = 0 ]
