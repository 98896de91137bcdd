#!/bin/sh
# Tests tools/profile_model.py on CPU with a small model, then runs hetsim on the profile it
# wrote. Needs a python3 with PyTorch (Debian: python3-torch); without one the test is skipped
# (exit 77, meson's skip code), not passed.
# usage: test_profile_model.sh HETSIM   (from the source root)
set -eu
hetsim=$1
py=
for p in /usr/bin/python3 python3; do
    if command -v "$p" >/dev/null 2>&1 && "$p" -c 'import torch' 2>/dev/null; then
        py=$p
        break
    fi
done
if [ -z "$py" ]; then
    echo "SKIP: no python3 with torch (install python3-torch)"
    exit 77
fi
dir=$(mktemp -d /tmp/hetsim-profile-model-XXXXXX)
trap 'rm -rf "$dir"' EXIT
cat >"$dir/tiny.py" <<'PY'
import torch.nn as nn


def make():
    return nn.Sequential(nn.Conv2d(1, 4, 3, padding=1), nn.ReLU(), nn.Flatten(),
                         nn.Linear(4 * 8 * 8, 10))
PY
"$py" tools/profile_model.py "$dir/tiny.py:make" --input 1,8,8 --batch 4 --repeats 3 \
    -o "$dir/tiny.csv"
# Parameters: conv 4*1*3*3 + 4 = 40, linear 256*10 + 10 = 2570. FLOPs: conv 2*4*8*8*9 = 4608,
# linear 2*256*10 = 5120. Bytes a sample (tools/profile_rules.py): the convolution reads 64
# floats and writes 256, 1280 bytes; the ReLU after it reads and writes 256, 2048 bytes
# (flattening is a view); the linear layer reads 256 floats and writes 10, 1064 bytes.
rows=$(grep -v '^#' "$dir/tiny.csv")
echo "$rows" | sed -n 1p |
    grep -qx 'name,params,forward_flops,forward_ms,backward_ms,kind,forward_bytes,elementwise_bytes'
echo "$rows" | sed -n 2p | grep -q '^0,40,4608,[0-9.]*,[0-9.]*,conv3x3,1280,2048$'
echo "$rows" | sed -n 3p | grep -q '^3,2570,5120,[0-9.]*,[0-9.]*,matmul,1064,0$'
[ "$(echo "$rows" | wc -l)" -eq 3 ]
# Every measured time is > 0: the iteration is spread over the two layers.
echo "$rows" | sed 1d | awk -F, '$4 <= 0 || $5 <= 0 { exit 1 }'
cat >"$dir/s.json" <<'JSON'
{"seed": 1, "workers": 2, "compute": {"profile": "tiny.csv"},
 "workload": {"model": {"name": "none"}, "batch": 4},
 "protocol": {"name": "allreduce"}, "stop": {"iterations": 10}}
JSON
"$hetsim" run "$dir/s.json" -o "$dir/out" --quiet
grep -q '"iterations": 10' "$dir/out/summary.json"
# -o inside a run directory or through a symbolic link is refused before the measurements,
# exit 1, nothing written (open(path, "w") wrote into the run, and through the link).
if "$py" tools/profile_model.py "$dir/tiny.py:make" --input 1,8,8 -o "$dir/out/p.csv" \
    2>"$dir/err"; then exit 1; fi
grep -q 'inside a hetsim output, the run directory' "$dir/err"
[ ! -e "$dir/out/p.csv" ]
ln -s tiny.csv "$dir/link.csv"
cp "$dir/tiny.csv" "$dir/before.csv"
if "$py" tools/profile_model.py "$dir/tiny.py:make" --input 1,8,8 -o "$dir/link.csv" \
    2>"$dir/err"; then exit 1; fi
grep -q 'not a regular file (a symbolic link)' "$dir/err"
cmp -s "$dir/tiny.csv" "$dir/before.csv"
echo "profile_model: ok"
