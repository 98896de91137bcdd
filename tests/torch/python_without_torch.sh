#!/bin/sh
# An interpreter without PyTorch (tests/test_torch.c): Debian's python3 without its site
# packages (-S), where python3-torch lives.
exec /usr/bin/python3 -S "$@"
