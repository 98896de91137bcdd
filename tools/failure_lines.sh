#!/bin/sh
# Counts, for every protocol, the lines it spends on failure and recovery handling, against its
# lines in all (issue 26: at most 10%). A protocol's files are protocols/NAME.c and its split
# files protocols/NAME_*.[ch]. Failure lines are
#   - the lines of every top-level function whose name says it handles a failure or a recovery:
#     it contains "down", "fetch", "rejoin", "fail", "lost", "restart", "admit", "recover" or
#     "take_over", or ends in "on_up" or "worker_up" (on_up, hps_on_up, worker_up), from its
#     signature to its closing brace;
#   - the lines of the SIM_EV_WORKER_DOWN and SIM_EV_WORKER_UP cases of an event switch, from the
#     case label to the next label;
#   - the lines of every top-level function that only failure lines use: every use of its name
#     (a call, or its address passed on or stored) inside the protocol's files is in a failure
#     function, a WORKER_DOWN/UP case or a table of the kit's recovery service (a top-level
#     `rejoin_ops` initializer: the service calls its owner back only for failures and
#     recoveries; the table's own lines, declarations like a prototype, are not counted), and
#     there is at least one. This is a fixpoint over the uses inside the protocol's files: a
#     helper of a helper of on_down is counted too, and so is every callback the protocol
#     registers with the recovery service, whatever its name. Uses in comments and prototypes
#     do not count, nor does a function's own recursion.
# A function is judged by what uses it, never by where it is registered: a use in any other
# top-level initializer counts as a use outside failure handling only in the protocol's ops
# table (`proto_ops`, the run's entry points) and, in the kit, the hub's table of an instance
# kind (`coll_ops`); any other top-level table that names one of the files' functions stops
# the script (exit 2) until this rule says how to count it. A function nothing in the
# protocol's files uses (called from another module) is not counted unless its name says so.
# A function that both normal and failure lines use (an accessor such as dpsgd's `progress`)
# counts as normal: what only failures need is counted wherever it stands.
# The kit's files are not a protocol's: coll*, graph*, rejoin* and msg.h serve every protocol,
# and ps_server* is the kit's parameter server, which ps and syncswitch drive through
# kit/ps_server.h (its failure handling, a server's take-over and a worker's fetch, is
# the kit's, written once for both). Two lines after the protocols' count them for information
# (not in the exit status): "ps_server" (ps_server*.c) and "kit" (coll*.c, rejoin.c).
#   tools/failure_lines.sh [-v] [PROTOCOL...]
# Run from the repository's root (CI runs it, .ci/run). Without names: every protocol of the
# registry (each `extern const proto_ops proto_NAME;` of protocols/registry.c), then the two
# lines for information. Prints one line per protocol: lines, failure lines, percent; -v lists
# the functions and cases counted (a function counted by its uses says "(used by failure
# lines)"). Exits 1 if some protocol is above 10%, 2 on a table the rule cannot count.
set -u
verbose=0
if [ "${1:-}" = -v ]; then
    verbose=1
    shift
fi
info=0
if [ $# -eq 0 ]; then
    # shellcheck disable=SC2046
    set -- $(sed -n 's/^extern const proto_ops proto_\([a-z0-9_]*\);$/\1/p' protocols/registry.c)
    [ $# -gt 0 ] || { echo "failure_lines.sh: no protocol in protocols/registry.c" >&2; exit 2; }
    info=1
fi

# count FILE...: prints the failure functions and cases (with -v) and then "lines failure".
count() {
    awk -v verbose=$verbose '
        function is_failure(name) {
            return name ~ /down|fetch|rejoin|fail|lost|restart|admit|recover|take_over/ ||
                   name ~ /(^|_)on_up$/ || name ~ /worker_up$/
        }
        # Records the uses of identifiers on code line L ("T" on a top-level initializer).
        function uses(line, l,    id) {
            gsub(/"([^"\\]|\\.)*"/, "\"\"", line)
            gsub(/(->|\.)[ \t]*[A-Za-z_][A-Za-z0-9_]*/, "", line)
            while (match(line, /[A-Za-z_][A-Za-z0-9_]*/)) {
                id = substr(line, RSTART, RLENGTH)
                line = substr(line, RSTART + RLENGTH)
                nu++; uline[nu] = l; uid[nu] = id
            }
        }
        # Closes the open cases indented at least `ind`.
        function close_cases(ind) {
            while (ncs > 0 && cs_ind[ncs] >= ind) ncs--
        }
        # Line L is a failure line: its function is counted, or a case holding it is.
        function failure_line(l,    k, n, ids) {
            if (lfn[l] == "F") return 1
            if (lfn[l] != "" && lfn[l] != "T" && counted[lfn[l]]) return 1
            n = split(lcases[l], ids, " ")
            for (k = 1; k <= n; k++) if (cfail[ids[k]]) return 1
            return 0
        }
        FNR == 1 { infn = 0; pend = 0; incomment = 0; ininit = 0; ncs = 0 }
        { total++; lfn[total] = ""; lcases[total] = "" }
        {
            # The line without its comments.
            code = $0
            if (incomment) {
                if (code ~ /\*\//) { sub(/^.*\*\//, "", code); incomment = 0 } else code = ""
            }
            gsub(/\/\*([^*]|\*+[^*\/])*\*+\//, "", code)
            if (code ~ /\/\*/) { sub(/\/\*.*/, "", code); incomment = 1 }
            sub(/\/\/.*/, "", code)
        }
        # A top-level function: a signature at column 0 with "(", then "{" at column 0 (a line
        # ending in ";" first makes it a prototype).
        !infn && !pend && /^[a-z][a-z0-9_ ]*[ *]+[a-z_][a-z0-9_]*\(/ {
            name = $0
            sub(/\(.*/, "", name)
            sub(/.*[ *]/, "", name)
            pend = 1; pstart = total; pname = name
        }
        pend && code ~ /;[ \t]*$/ { pend = 0; next }
        pend && /^\{/ {
            pend = 0; infn = 1
            nf++; fname[nf] = pname; ffile[nf] = FILENAME; fstart[nf] = FNR - (total - pstart)
            fkey[nf] = is_failure(pname); ffirst[nf] = pstart
            if (!(pname in byname)) byname[pname] = nf
            for (l = pstart; l <= total; l++) lfn[l] = nf
            next
        }
        pend { next }
        infn {
            lfn[total] = nf; flast[nf] = total
            ind = match($0, /[^ ]/) - 1
            if (code ~ /^[ \t]*(case |default:)/) {
                label = code
                sub(/^[ \t]*(case[ \t]+)?/, "", label); sub(/[ \t]*:.*/, "", label)
                if (ncs > 0 && cs_ind[ncs] == ind && cs_only_labels[ncs]) {
                    c = cs_id[ncs]                 # a label falling through: the same case
                } else {
                    close_cases(ind)
                    nc++; c = nc; ncs++; cs_id[ncs] = c; cs_ind[ncs] = ind
                    cfile[c] = FILENAME; cstart[c] = FNR; cfn[c] = nf; clines[c] = 0
                    clabel[c] = $0; sub(/^[ \t]*/, "", clabel[c])
                }
                cs_only_labels[ncs] = 1
                nlab[c]++; lab[c, nlab[c]] = label
            } else if (code ~ /^[ \t]*}/) {
                close_cases(ind)
            } else if (ncs > 0 && cs_ind[ncs] < ind) {
                cs_only_labels[ncs] = 0
            }
            for (k = 1; k <= ncs; k++) { lcases[total] = lcases[total] " " cs_id[k]; clines[cs_id[k]]++ }
            if (/^}/) { infn = 0; ncs = 0; next }
            if (code !~ /^[ \t]*(case |default:)/) uses(code, total)
            next
        }
        # Top level: uses inside an initializer (an ops table, a table of calls).
        # Top level: the lines of an initializer (its type read from its first line).
        !infn && !ininit && code ~ /=[ \t]*(\{.*)?$/ {
            itype = code
            sub(/^[ \t]*(static[ \t]+)?(const[ \t]+)?/, "", itype)
            sub(/[^A-Za-z0-9_].*/, "", itype)
            ininit = itype == "rejoin_ops" ? 2 : 1
        }
        ininit { uses(code, total); lfn[total] = ininit == 2 ? "F" : "T"; ltype[total] = itype }
        ininit && code ~ /;[ \t]*$/ { ininit = 0 }
        END {
            for (u = 1; u <= nu; u++)
                if (lfn[uline[u]] == "T" && ltype[uline[u]] !~ /^(proto_ops|coll_ops)$/ &&
                    uid[u] in byname) {
                    printf "failure_lines.sh: a table of type %s names the function %s: " \
                           "say in tools/failure_lines.sh how its uses count\n", \
                           ltype[uline[u]], uid[u] > "/dev/stderr"
                    exit 2
                }
            for (f = 1; f <= nf; f++) counted[f] = fkey[f]
            for (c = 1; c <= nc; c++) {
                for (k = 1; k <= nlab[c]; k++) {
                    caselabel[lab[c, k]] = 1
                    if (lab[c, k] ~ /^SIM_EV_WORKER_(DOWN|UP)$/) cfail[c] = 1
                }
            }
            # A function is used by the lines that name it outside its body; a case label (a
            # message kind) by the lines that name it outside the cases it labels.
            do {
                changed = 0
                for (f = 1; f <= nf; f++) {
                    if (counted[f]) continue
                    if (used_only_by_failure(fname[f], ffirst[f], flast[f], 0)) {
                        counted[f] = 1; byuse[f] = 1; changed = 1
                    }
                }
                for (c = 1; c <= nc; c++) {
                    if (cfail[c] || clabel[c] ~ /^default/) continue
                    all = 1
                    for (k = 1; k <= nlab[c] && all; k++)
                        all = used_only_by_failure(lab[c, k], 0, 0, c)
                    if (all) { cfail[c] = 1; cbyuse[c] = 1; changed = 1 }
                }
            } while (changed)
            for (l = 1; l <= total; l++) fail += lfn[l] != "F" && failure_line(l)
            if (!verbose) { printf "%d %d\n", total, fail; exit }
            for (f = 1; f <= nf; f++)
                if (counted[f])
                    printf "  %s:%d %s: %d%s\n", ffile[f], fstart[f], fname[f],
                           flast[f] - ffirst[f] + 1, byuse[f] ? " (used by failure lines)" : ""
            for (c = 1; c <= nc; c++) {
                if (!cfail[c] || counted[cfn[c]]) continue
                printf "  %s:%d %s: %d%s\n", cfile[c], cstart[c], clabel[c], clines[c],
                       cbyuse[c] ? " (a kind only failure lines use)" : ""
            }
            printf "%d %d\n", total, fail
        }
        # True if `id` is used at least once outside lines lo..hi (its own body) and outside
        # case `own` (and case labels), and every such use is on a failure line.
        function used_only_by_failure(id, lo, hi, own,    u, l, any) {
            any = 0
            for (u = 1; u <= nu; u++) {
                if (uid[u] != id) continue
                l = uline[u]
                if (l >= lo && l <= hi) continue
                if (own && index(lcases[l] " ", " " own " ")) continue
                if (lfn[l] == "T" || !failure_line(l)) return 0
                any = 1
            }
            return any
        }
    ' "$@"
}

status=0
printf '%-10s %6s %8s %6s\n' protocol lines failure '%'
report() { # NAME FILE...: one line, and with -v the list
    name=$1
    shift
    out=$(count "$@") || exit 2
    total=$(echo "$out" | tail -n 1 | cut -d' ' -f1)
    fail=$(echo "$out" | tail -n 1 | cut -d' ' -f2)
    pct=$(awk -v f="$fail" -v t="$total" 'BEGIN { printf "%.1f", (t > 0 ? 100 * f / t : 0) }')
    printf '%-10s %6d %8d %6s\n' "$name" "$total" "$fail" "$pct"
    [ $verbose = 1 ] && echo "$out" | sed '$d'
    awk -v f="$fail" -v t="$total" 'BEGIN { exit !(10 * f > t) }'
}
for p in "$@"; do
    files=$(ls protocols/"$p".c protocols/"$p"_*.c protocols/"$p"_*.h 2>/dev/null | grep -v ps_server)
    # shellcheck disable=SC2086
    if report "$p" $files; then
        status=1
    fi
done
if [ $info = 1 ]; then
    echo "not protocols (for information):"
    report ps_server kit/ps_server*.c || true
    report kit kit/coll*.c kit/rejoin.c || true
fi
exit $status
