#!/usr/bin/env bash
# The conformance matrix (every protocol at its defaults over one matrix of clusters): see
# conformance.py, which does the work, and README.md, which holds its measured tables.
#
#   bash scenarios/papers/conformance/run.sh [--smoke] HETSIM_BINARY [-j JOBS] [-o OUT]
#
# From the repository root. The full matrix (42 cells): over two hours on a shared 2-core
# machine at load average 15-25 (-j 2, niced); README.md, "Measured", has the figures.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
exec python3 "$here/conformance.py" "$@" # it reads [--smoke] HETSIM_BINARY [-j JOBS] [-o OUT]
