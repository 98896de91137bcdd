#!/usr/bin/env bash
# Fault tests of run directories (outputs/rundir.h), through the real binary: kill -9 at several
# points, a file-size limit at several sizes (disk full), unwritable places, a directory
# that is not a run, a reused run directory, a failed run; then figures (outputs/plot.h) under a
# file-size limit and on a small tmpfs, for run, plot, plot --by, sweep and check. Each
# asserts what the run directory and its work directory hold afterwards. Needs HETSIM (the
# binary); runs from the source root. Mounting the tmpfs needs root: elsewhere that part is
# skipped, saying so. Prints "N passed, N failed".
set -u
bin=${HETSIM:?HETSIM must name the hetsim binary}
scn=tests/faults/run.json
tmp=$(mktemp -d /tmp/hetsim-faults-XXXXXX)
mnt=$tmp/mnt
trap 'if mountpoint -q "$mnt" 2>/dev/null; then umount "$mnt"; fi; rm -rf "$tmp"' EXIT
passed=0 failed=0
ok() { passed=$((passed + 1)); }
bad() { failed=$((failed + 1)); echo "FAIL: $*"; }
check() { if eval "$2"; then ok; else bad "$1: $2"; fi; }

png_whole() { # the PNG signature first and the IEND chunk last
    [ "$(head -c 8 "$1" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ] &&
        [ "$(tail -c 12 "$1" | od -An -tx1 | tr -d ' \n')" = 0000000049454e44ae426082 ]
}
figures_whole() { # every PNG under $1 whole, no temporary left
    local f
    while IFS= read -r f; do
        png_whole "$f" || { echo "cut short: $f"; return 1; }
    done < <(find "$1" -name '*.png' 2>/dev/null)
    ! find "$1" -name '*.tmp' 2>/dev/null | grep -q .
}
complete() { # a whole run directory (its figures too), no work directory beside it
    [ -f "$1/run.json" ] && [ -f "$1/summary.json" ] && [ -f "$1/metrics.csv" ] &&
        [ -f "$1/workers.csv" ] && [ ! -e "$1.partial" ] && ! ls "$1"/*.tmp >/dev/null 2>&1 &&
        [ ! -e "$1/.hetsim-partial" ] && figures_whole "$1"
}

# 1. A plain run.
d=$tmp/plain
"$bin" run "$scn" -o "$d" --quiet >/dev/null 2>&1
check "plain run" 'complete "$d"'

# 2. kill -9 at several points of a first run: the directory is absent or complete, never
#    partial; what is left is only the marked work directory, or the empty one of a run killed
#    between its mkdir and its marker (outputs/rundir.c), which the next run removes.
for t in 0.02 0.1 0.3 0.6; do
    d=$tmp/kill-$t
    "$bin" run "$scn" -o "$d" --quiet >/dev/null 2>&1 &
    pid=$!
    sleep "$t"
    kill -9 "$pid" 2>/dev/null
    wait "$pid" 2>/dev/null
    check "kill at $t s" '[ ! -e "$d" ] || complete "$d"'
    check "kill at $t s leaves only the work directory" \
        '[ ! -e "$d.partial" ] || [ -f "$d.partial/.hetsim-partial" ] || [ -z "$(ls -A "$d.partial")" ]'
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

# 5. Unwritable places: under a regular file (bad usage, exit 2: a place that cannot be a
#    directory); under a read-only directory (not as root, who may write anywhere).
: >"$tmp/afile"
"$bin" run "$scn" -o "$tmp/afile/run" --quiet >/dev/null 2>"$tmp/err"
rc=$?
check "output under a file exits 2" '[ $rc = 2 ] && grep -q "afile" "$tmp/err"'
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

# 9. Figures. gnuplot ignores its own write errors (it exits 0 with the PNG cut short), so
#    every figure is checked whole before it gets its name. Under a file-size limit and on a
#    full tmpfs, each command either succeeds with every figure whole, or exits 1 naming the
#    figure and leaves no figure cut short and no temporary; a run also leaves no run
#    directory (and a previous one as it was). The limits and sizes fall inside the figures:
#    the runs' CSV and JSON files are about 1 KiB each.
short=(--set stop.time_s=5 --set eval.every_s=1) # small CSVs, quick runs
src=$tmp/src # a run to plot; then a sweep to plot --by and a golden to check against
"$bin" run "$scn" -o "$src" "${short[@]}" --quiet >/dev/null 2>&1
sweep_json() { # $1: the sweep's output directory
    printf '{ "base": "%s", "grid": { "stop.time_s": [5], "eval.every_s": [1],
  "stop.target_accuracy": [0.5], "output.plots": [true] }, "seeds": 2,
  "output": { "dir": "%s" } }\n' "$PWD/$scn" "$1"
}
sweep_json "$tmp/sweep-src" >"$tmp/sweep.json"
"$bin" sweep "$tmp/sweep.json" -j 2 --quiet >/dev/null 2>&1
"$bin" check "$scn" "${short[@]}" --golden "$tmp/golden" --update >/dev/null 2>&1
check "figure fixtures" 'complete "$src" && [ -f "$tmp/sweep-src/index.csv" ] &&
    [ -f "$tmp/golden/seeds" ] && figures_whole "$tmp/sweep-src"'

# Runs hetsim with the arguments after $1 under a file-size limit of $1 KiB ("-": none),
# its standard error into $tmp/err; leaves the exit status in $rc.
limited() {
    local kib=$1
    shift
    if [ "$kib" = - ]; then
        "$bin" "$@" >/dev/null 2>"$tmp/err"
    else
        (ulimit -f "$kib" && "$bin" "$@" >/dev/null 2>"$tmp/err")
    fi
    rc=$?
}

# One command ($4...) under one fault ($3: a ulimit -f or "-"), writing into $2 (emptied
# first): whole figures or none, exit 0 or 1; the status is left in $rc.
under() {
    local label=$1 where=$2 kib=$3
    shift 3
    rm -rf "${where:?}" "$where.partial"
    limited "$kib" "$@"
    check "$label: whole figures or none" 'figures_whole "$where"'
    check "$label: exits 0 or 1" '[ $rc = 0 ] || [ $rc = 1 ]'
}
says_why() { # the message of a failed command names the file it could not write
    check "$1: names the file" 'grep -Eq "\.(png|csv|json)" "$tmp/err" ||
        { sed "s/^/  stderr: /" "$tmp/err"; false; }'
}

# Each command under one fault ($1: a label, $2: where the outputs go, $3: ulimit or "-").
figure_faults() {
    local tag=$1 at=$2 kib=$3 d before
    d=$at/run
    under "$tag run" "$d" "$kib" run "$scn" -o "$d" "${short[@]}" --set output.plots=true --quiet
    if [ $rc = 0 ]; then
        check "$tag run: complete" 'complete "$d" && [ -f "$d/breakdown.png" ]'
    else
        says_why "$tag run"
        check "$tag run: leaves nothing" '[ ! -e "$d" ] && [ ! -e "$d.partial" ]'
    fi
    rm -rf "${d:?}"
    d=$at/again # a run replacing a previous one: that one stays as it was
    rm -rf "${d:?}" && cp -r "$src" "$d"
    before=$(cat "$d"/* | md5sum)
    limited "$kib" run "$scn" -o "$d" "${short[@]}" --set output.plots=true --set seed=9 --quiet
    check "$tag rerun: the old run or a whole new one" '{ [ $rc = 1 ] &&
        [ "$(cat "$d"/* | md5sum)" = "$before" ]; } || { [ $rc = 0 ] && complete "$d"; }'
    check "$tag rerun: figures" 'figures_whole "$d" && [ ! -e "$d.partial" ]'
    rm -rf "${d:?}"
    d=$at/plot
    under "$tag plot" "$d" "$kib" plot "$src" -o "$d"
    if [ $rc = 0 ]; then
        check "$tag plot: three figures" '[ -f "$d/convergence.png" ] &&
            [ -f "$d/throughput.png" ] && [ -f "$d/breakdown.png" ]'
    else
        says_why "$tag plot"
    fi
    rm -rf "${d:?}"
    d=$at/by
    under "$tag plot --by" "$d" "$kib" plot "$tmp/sweep-src" --by seed -o "$d"
    if [ $rc = 0 ]; then
        check "$tag plot --by: both figures" '[ -f "$d/by-seed.png" ] && [ -f "$d/ttt-by-seed.png" ]'
    else
        says_why "$tag plot --by"
    fi
    rm -rf "${d:?}"
    d=$at/sweep
    sweep_json "$d" >"$tmp/sweep-at.json"
    under "$tag sweep" "$d" "$kib" sweep "$tmp/sweep-at.json" -j 2 --quiet
    [ $rc = 0 ] || says_why "$tag sweep"
    rm -rf "${d:?}"
    d=$at/check # a regression (exit 1), which check.png shows, or a message why it cannot
    under "$tag check" "$d" "$kib" check "$scn" "${short[@]}" --set workload.lr=0.01 --allow-scenario-change \
        --golden "$tmp/golden" -o "$d"
    check "$tag check: exits 1" '[ $rc = 1 ]'
    [ -f "$d/check.png" ] || says_why "$tag check"
    rm -rf "${d:?}"
}

for kib in 8 20 45; do
    mkdir -p "$tmp/limit-$kib"
    figure_faults "ulimit -f $kib" "$tmp/limit-$kib" "$kib"
done

# The same on a small tmpfs (a full disk: ENOSPC, no signal), remounted at several sizes.
mkdir -p "$mnt"
if [ "$(id -u)" = 0 ] && mount -t tmpfs -o size=64k hetsim-faults "$mnt" 2>/dev/null; then
    for kib in 24 56 96; do
        if mount -o remount,size=${kib}k "$mnt" 2>/dev/null; then
            figure_faults "tmpfs $kib KiB" "$mnt" -
        else
            bad "cannot resize the tmpfs to $kib KiB"
        fi
    done
    umount "$mnt"
else
    echo "faults: tmpfs figures skipped (cannot mount a tmpfs: needs root, or refused here)"
fi
# 10. Outputs inside a run directory are refused (exit 2) and change nothing, so the run
#     directory is still replaced whole afterwards (issue 22, item 3). A sweep of one short
#     point serves as the nested output.
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
g=$tmp/golden2
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

# 10b. An output equal to a hetsim directory counts as inside it, and no command replaces a
#      file it does not own (issue 38): check -o GOLDEN, --junit inside a golden or a run,
#      plot of another run -o RUN, plot --by -o RUN, plot -o GOLDEN: exit 2, nothing changed.
#      A run into a link to a run directory replaces the target whole and keeps the link.
digest() { find "$1" -exec stat -c '%n %i %s' {} + | sort | md5sum; }
gbefore=$(digest "$g") rbefore=$(digest "$d")
"$bin" check "$scn" --golden "$g" --set stop.time_s=1 -o "$g" >/dev/null 2>"$tmp/err"
rc=$?
check "check -o the golden exits 2" '[ $rc = 2 ] && grep -q "a hetsim golden directory" "$tmp/err"'
for x in "$g/seeds" "$g/golden.json" "$d/report.xml"; do
    "$bin" check "$scn" --golden "$g" --set stop.time_s=1 -o "$tmp/o38" --junit "$x" >/dev/null \
        2>"$tmp/err"
    rc=$?
    check "--junit $x exits 2" '[ $rc = 2 ] && grep -q "^hetsim: --junit file" "$tmp/err" &&
        [ ! -e "$tmp/o38" ]'
done
"$bin" plot "$src" -o "$d" >/dev/null 2>"$tmp/err"
rc=$?
check "plot of another run into a run exits 2" '[ $rc = 2 ] && grep -q "a hetsim run directory" "$tmp/err"'
"$bin" plot "$tmp/sweep-src" --by seed -o "$d" >/dev/null 2>"$tmp/err"
rc=$?
check "plot --by into a run exits 2" '[ $rc = 2 ]'
"$bin" plot "$src" -o "$g" >/dev/null 2>"$tmp/err"
rc=$?
check "plot into a golden exits 2" '[ $rc = 2 ] && grep -q "a hetsim golden directory" "$tmp/err"'
check "the golden and the run as they were" '[ "$(digest "$g")" = "$gbefore" ] &&
    [ "$(digest "$d")" = "$rbefore" ]'
"$bin" check "$scn" --golden "$g" --set stop.time_s=1 -o "$tmp/o38" >/dev/null 2>"$tmp/err"
rc=$?
check "the golden still checks" '[ $rc = 0 ]'
ln -s runB "$tmp/linkB"
for i in 1 2; do
    "$bin" run "$scn" -o "$tmp/linkB" --set stop.time_s=1 --set seed=$((20 + i)) --quiet \
        >/dev/null 2>"$tmp/err"
    rc=$?
    check "run $i into a link" '[ $rc = 0 ] && [ -L "$tmp/linkB" ] && complete "$d" &&
        grep -q "\"seed\": $((20 + i))" "$d/run.json" && [ ! -e "$tmp/linkB.partial" ] &&
        [ ! -L "$tmp/linkB.partial" ]'
done

# 11. A previous run holding a subdirectory that is not hetsim's (an older hetsim let one
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

# 12. One writer at a time (issue 22, item 4): while a run writes into a directory, a second
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

# 13. A sweep refuses a non-empty directory that is not a sweep's (issue 22, item 5).
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
