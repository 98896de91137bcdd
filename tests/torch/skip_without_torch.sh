#!/bin/sh
# Runs a test program that needs PyTorch (tests/test_torch.c), or skips it (exit 77, meson's
# skip code) when the interpreter hetsim would use cannot import torch: $HETSIM_PYTHON, else
# /usr/bin/python3, else python3 (models/torch_config.c's order); with HETSIM_NEED_CUDA=1, also
# when PyTorch sees no GPU.
py=${HETSIM_PYTHON:-}
if [ -z "$py" ]; then
    if [ -x /usr/bin/python3 ]; then py=/usr/bin/python3; else py=python3; fi
fi
if ! "$py" -c 'import torch' 2>/dev/null; then
    echo "SKIP: $py cannot import torch (install the Debian package python3-torch)"
    exit 77
fi
if [ "${HETSIM_NEED_CUDA:-0}" = 1 ] &&
    ! "$py" -c 'import sys, torch; sys.exit(0 if torch.cuda.is_available() else 1)' 2>/dev/null; then
    echo "SKIP: PyTorch sees no GPU (torch.cuda.is_available() is False)"
    exit 77
fi
exec "$@"
