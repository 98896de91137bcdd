# Sourced by the seed papers' run.sh scripts that take `[--smoke] HETSIM_BINARY ...` (hpsgd,
# ripples): reads those two arguments once for all of them.
#
#   paper_args TAIL "$@"   sets smoke (0 or 1), bin (the binary) and rest (an array: the
#                          arguments after the binary); without a binary, paper_usage.
#   paper_usage TAIL       prints "usage: SCRIPT [--smoke] HETSIM_BINARY TAIL" and exits 2.
paper_usage() {
    echo "usage: $0 [--smoke] HETSIM_BINARY${1:+ $1}" >&2
    exit 2
}

paper_args() {
    local tail=$1
    shift
    smoke=0
    if [ "${1:-}" = --smoke ]; then
        smoke=1
        shift
    fi
    [ $# -ge 1 ] || paper_usage "$tail"
    bin=$1
    shift
    rest=("$@")
}
