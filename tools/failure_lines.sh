#!/bin/sh
# Counts, for every protocol, the lines it spends on failure and recovery handling, against its
# lines in all (issue 26: at most 10%). A protocol's files are protocols/NAME.c and its split
# files protocols/NAME_*.[ch] (the kit's files, coll*, graph*, rejoin*, msg.h and ps_server*,
# are not a protocol's: ps and syncswitch drive the kit's parameter server). Failure lines are
#   - the lines of every top-level function whose name says it handles a failure or a recovery:
#     it contains "down", "fetch", "rejoin", "fail", "lost", "restart", "admit", "recover" or
#     "take_over", or ends in "on_up" or "worker_up" (on_up, hps_on_up, worker_up), from its
#     signature to its closing brace;
#   - the lines of the SIM_EV_WORKER_DOWN and SIM_EV_WORKER_UP cases of an event switch, from the
#     case label to the next label.
#   tools/failure_lines.sh [-v] [PROTOCOL...]
# Run from the repository's root. Prints one line per protocol: lines, failure lines, percent;
# -v lists the functions and cases counted. Exits 1 if some protocol is above 10%.
set -u
verbose=0
if [ "${1:-}" = -v ]; then
    verbose=1
    shift
fi
[ $# -gt 0 ] || set -- allreduce localsgd ps syncswitch dpsgd adpsgd gossip hop hpsgd ripples \
    moshpit sgp easgd
status=0
printf '%-10s %6s %8s %6s\n' protocol lines failure '%'
for p in "$@"; do
    files=$(ls protocols/"$p".c protocols/"$p"_*.c protocols/"$p"_*.h 2>/dev/null | grep -v ps_server)
    out=$(awk -v verbose=$verbose '
        function is_failure(name) {
            return name ~ /down|fetch|rejoin|fail|lost|restart|admit|recover|take_over/ ||
                   name ~ /(^|_)on_up$/ || name ~ /worker_up$/
        }
        FNR == 1 { infn = 0; incase = 0 }
        { total++ }
        # A top-level function: a signature at column 0 with "(", not a prototype.
        !infn && /^[a-z][a-z0-9_ ]*[ *]+[a-z_][a-z0-9_]*\(/ && $0 !~ /;[ \t]*$/ {
            name = $0
            sub(/\(.*/, "", name)
            sub(/.*[ *]/, "", name)
            infn = 1; fstart = FNR; fname = name; counting = is_failure(name); n = 0
        }
        infn { if (counting) n++ }
        infn && /^}/ {
            if (counting) {
                fail += n
                if (verbose) printf "  %s:%d %s: %d\n", FILENAME, fstart, fname, n
            }
            infn = 0
            next
        }
        # WORKER_DOWN / WORKER_UP cases inside functions not already counted.
        infn && !counting {
            if ($0 ~ /^[ \t]*(case |default:)/) {
                if (incase) {
                    fail += cn
                    if (verbose) printf "  %s:%d %s: %d\n", FILENAME, cstart, clabel, cn
                }
                incase = $0 ~ /case SIM_EV_WORKER_(DOWN|UP):/
                cn = 0; cstart = FNR; clabel = $0; sub(/^[ \t]*/, "", clabel)
            }
            if (incase) cn++
        }
        infn && !counting && /^    }/ && incase {
            fail += cn - 1
            if (verbose) printf "  %s:%d %s: %d\n", FILENAME, cstart, clabel, cn - 1
            incase = 0
        }
        END { printf "%d %d\n", total, fail }
    ' $files)
    total=$(echo "$out" | tail -n 1 | cut -d' ' -f1)
    fail=$(echo "$out" | tail -n 1 | cut -d' ' -f2)
    pct=$(awk -v f="$fail" -v t="$total" 'BEGIN { printf "%.1f", (t > 0 ? 100 * f / t : 0) }')
    printf '%-10s %6d %8d %6s\n' "$p" "$total" "$fail" "$pct"
    [ $verbose = 1 ] && echo "$out" | sed '$d'
    if awk -v f="$fail" -v t="$total" 'BEGIN { exit !(10 * f > t) }'; then
        status=1
    fi
done
exit $status
