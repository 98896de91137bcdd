#!/usr/bin/env bash
# DiLoCo's claim on our clusters (Douillard et al. 2023): see diloco.py, which does the work,
# and README.md, which holds its measured tables.
#
#   bash scenarios/papers/diloco/run.sh [--smoke] HETSIM_BINARY [-j JOBS] [-o OUT]
#
# From the repository root. The full form: 117 runs, about 6 minutes on an idle 2-core machine
# with -j 2 (README.md, "Measured"). --smoke: one seed, 1 epoch and 3 simulated seconds (CI).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
exec python3 "$here/diloco.py" "$@" # it reads [--smoke] HETSIM_BINARY [-j JOBS] [-o OUT]
