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

# 9. Outputs inside a run directory are refused (exit 2) and change nothing, so the run
#    directory is still replaced whole afterwards (issue 22, item 3). A sweep of one short
#    point serves as the nested output.
sweep=$tmp/sw.json
printf '{ "base": "%s", "grid": { "stop.time_s": [1] }, "seeds": 1 }\n' "$PWD/$scn" >"$sweep"
d=$tmp/runB
"$bin" run "$scn" -o "$d" --set stop.time_s=1 --quiet >/dev/null 2>&1
"$bin" sweep "$sweep" -o "$d/sw" --quiet >/dev/null 2>"$tmp/err"
rc=$?
check "sweep inside a run exits 2" '[ $rc = 2 ] && grep -q "inside .*runB, a hetsim run directory" "$tmp/err"'
"$bin" sweep "$sweep" -o "$d" --quiet >/dev/null 2>"$tmp/err"
rc=$?
check "sweep into a run exits 2" '[ $rc = 2 ] && grep -q "runB" "$tmp/err"'
"$bin" check "$scn" --golden "$d/golden" --update >/dev/null 2>"$tmp/err"
rc=$?
check "golden inside a run exits 2" '[ $rc = 2 ] && grep -q "a hetsim run directory" "$tmp/err"'
"$bin" run "$scn" -o "$d/sub" --quiet >/dev/null 2>"$tmp/err"
rc=$?
check "run inside a run exits 2" '[ $rc = 2 ] && grep -q "a hetsim run directory" "$tmp/err"'
"$bin" plot "$d" -o "$d/figs" >/dev/null 2>"$tmp/err"
rc=$?
check "plot -o inside a run exits 2" '[ $rc = 2 ] && grep -q "a hetsim run directory" "$tmp/err"'
check "refusals left the run as it was" \
    '[ "$(ls -A "$d" | tr "\n" " ")" = "metrics.csv run.json summary.json workers.csv " ]'
for i in 1 2; do
    "$bin" run "$scn" -o "$d" --set stop.time_s=1 --quiet >/dev/null 2>"$tmp/err"
    rc=$?
    check "run $i after the refusals" '[ $rc = 0 ] && complete "$d" && [ ! -e "$d.lock" ]'
done
# ... and inside a work directory, a sweep's or a golden.
mkdir -p "$tmp/w.partial" && : >"$tmp/w.partial/.hetsim-partial"
"$bin" run "$scn" -o "$tmp/w.partial/x" --quiet >/dev/null 2>"$tmp/err"
rc=$?
check "run inside a work directory exits 2" '[ $rc = 2 ] && grep -q "hetsim work directory" "$tmp/err"'
s=$tmp/sweepdir
"$bin" sweep "$sweep" -o "$s" --quiet >/dev/null 2>&1
check "a sweep is marked" '[ -f "$s/.hetsim-sweep" ] && [ -f "$s/index.csv" ] && [ ! -e "$s.lock" ]'
"$bin" check "$scn" --golden "$s/golden" --update >/dev/null 2>"$tmp/err"
rc=$?
check "golden inside a sweep exits 2" '[ $rc = 2 ] && [ ! -e "$s/golden" ]'
"$bin" sweep "$sweep" -o "$s/inner" --quiet >/dev/null 2>"$tmp/err"
rc=$?
check "sweep inside a sweep exits 2" '[ $rc = 2 ] && [ ! -e "$s/inner" ]'
"$bin" run "$scn" -o "$s" --quiet >/dev/null 2>"$tmp/err"
rc=$?
check "run into a sweep exits 2" '[ $rc = 2 ] && [ -f "$s/index.csv" ] && [ ! -e "$s/run.json" ]'
"$bin" sweep "$sweep" -o "$s" --quiet >/dev/null 2>"$tmp/err"
rc=$?
check "the same sweep again exits 0" '[ $rc = 0 ]'
g=$tmp/golden
"$bin" check "$scn" --golden "$g" --update --set stop.time_s=1 >/dev/null 2>&1
check "a golden is written" '[ -f "$g/seeds" ] && [ ! -e "$g.lock" ]'
"$bin" run "$scn" -o "$g/x" --quiet >/dev/null 2>"$tmp/err"
rc=$?
check "run inside a golden exits 2" '[ $rc = 2 ] && [ ! -e "$g/x" ] && grep -q "golden" "$tmp/err"'
"$bin" check "$scn" --golden "$g" --update --set stop.time_s=1 >/dev/null 2>"$tmp/err"
rc=$?
check "a golden is updated again" '[ $rc = 0 ]'
"$bin" check "$scn" --golden "$d" --update --set stop.time_s=1 >/dev/null 2>"$tmp/err"
rc=$?
check "golden into a run exits 2" '[ $rc = 2 ] && [ ! -e "$d/seeds" ] && complete "$d"'

# 10. A previous run holding a subdirectory that is not hetsim's (an older hetsim let one
#     in): refused before anything changes, never half removed; once it is moved away the
#     next run replaces the run. The same for a work directory left with one.
d=$tmp/runC
"$bin" run "$scn" -o "$d" --set stop.time_s=1 --quiet >/dev/null 2>&1
mkdir "$d/sw" && echo mine >"$d/sw/notes"
"$bin" run "$scn" -o "$d" --set stop.time_s=1 --quiet >/dev/null 2>"$tmp/err"
rc=$?
check "a run with a subdirectory is not replaced" \
    '[ $rc = 2 ] && grep -q "subdirectory sw" "$tmp/err" && [ -f "$d/sw/notes" ] && [ -f "$d/run.json" ] && [ ! -e "$d.partial" ]'
mv "$d/sw" "$tmp/sw-moved"
"$bin" run "$scn" -o "$d" --set stop.time_s=1 --quiet >/dev/null 2>&1
check "then replaced" 'complete "$d"'
cp -r "$d" "$d.partial" && mkdir "$d.partial/sw"
"$bin" run "$scn" -o "$d" --set stop.time_s=1 --quiet >/dev/null 2>"$tmp/err"
rc=$?
check "a work directory with a subdirectory is kept" \
    '[ $rc = 2 ] && grep -q "subdirectory sw" "$tmp/err" && [ -f "$d.partial/run.json" ] && [ -f "$d/run.json" ] && [ -f "$d/summary.json" ]'
rmdir "$d.partial/sw"
"$bin" run "$scn" -o "$d" --set stop.time_s=1 --quiet >/dev/null 2>&1
check "then removed" 'complete "$d"'

# 11. One writer at a time (issue 22, item 4): while a run writes into a directory, a second
#     run, sweep or golden update into it is refused (exit 2, naming the directory and the
#     holder's pid) and changes nothing; the first commits its own run alone.
wait_lock() { for _ in $(seq 250); do [ -s "$1.lock" ] && return 0; sleep 0.02; done; return 1; }
d=$tmp/cc
"$bin" run "$scn" -o "$d" --quiet >/dev/null 2>&1 &
pid=$!
wait_lock "$d"
check "the lock names its holder" '[ "$(cat "$d.lock")" = "$pid" ]'
"$bin" run "$scn" -o "$d" --set seed=9 --quiet >/dev/null 2>"$tmp/err"
rc=$?
check "second run exits 2" '[ $rc = 2 ] && grep -q "cc is being written by another hetsim (pid $pid" "$tmp/err"'
"$bin" sweep "$sweep" -o "$d" --quiet >/dev/null 2>"$tmp/err"
rc=$?
check "a sweep into it exits 2" '[ $rc = 2 ] && grep -q "pid $pid" "$tmp/err"'
"$bin" check "$scn" --golden "$d" --update >/dev/null 2>"$tmp/err"
rc=$?
check "a golden update into it exits 2" '[ $rc = 2 ] && grep -q "pid $pid" "$tmp/err"'
check "the first run still writes" '[ -f "$d.partial/.hetsim-partial" ]'
wait "$pid"
rc=$?
check "the first run commits alone" \
    '[ $rc = 0 ] && complete "$d" && grep -q "\"seed\": 7" "$d/run.json" && [ ! -e "$d.lock" ]'
# Two sweeps into one directory: the second is refused while the first holds it.
s=$tmp/sweep2
printf '{ "base": "%s", "grid": { "stop.time_s": [10, 15] }, "seeds": 2 }\n' "$PWD/$scn" >"$tmp/sw2.json"
"$bin" sweep "$tmp/sw2.json" -o "$s" -j 1 --quiet >/dev/null 2>&1 &
pid=$!
wait_lock "$s"
"$bin" sweep "$tmp/sw2.json" -o "$s" -j 1 --quiet >/dev/null 2>"$tmp/err"
rc=$?
check "second sweep exits 2" '[ $rc = 2 ] && grep -q "sweep2 is being written by another hetsim (pid $pid" "$tmp/err"'
wait "$pid"
rc=$?
check "the first sweep has every point" \
    '[ $rc = 0 ] && [ "$(wc -l <"$s/index.csv")" = 5 ] && ! grep -q missing "$s/index.csv"'
# A killed holder's lock file stays; the next writer takes the lock.
d=$tmp/killed-holder
"$bin" run "$scn" -o "$d" --quiet >/dev/null 2>&1 &
pid=$!
wait_lock "$d"
kill -9 "$pid"
wait "$pid" 2>/dev/null
"$bin" run "$scn" -o "$d" --set stop.time_s=1 --quiet >/dev/null 2>"$tmp/err"
rc=$?
check "a dead holder's lock is taken over" '[ $rc = 0 ] && complete "$d" && [ ! -e "$d.lock" ]'

# 12. A sweep refuses a non-empty directory that is not a sweep's (issue 22, item 5).
f=$tmp/foreign
mkdir "$f" && echo data >"$f/index.csv"
"$bin" sweep "$sweep" -o "$f" --quiet >/dev/null 2>"$tmp/err"
rc=$?
check "sweep into a foreign directory exits 2" \
    '[ $rc = 2 ] && grep -q "holds no hetsim sweep" "$tmp/err" && [ "$(cat "$f/index.csv")" = data ] && [ "$(ls -A "$f")" = index.csv ]'
"$bin" sweep "$sweep" -o "$f" --index 0 --quiet >/dev/null 2>"$tmp/err"
rc=$?
check "sweep --index into a foreign directory exits 2" '[ $rc = 2 ] && [ "$(ls -A "$f")" = index.csv ]'

echo "faults: $passed passed, $failed failed"
[ "$failed" = 0 ]
