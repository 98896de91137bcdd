#!/usr/bin/env python3
"""Writes a scenario where one failure rule takes F of N workers down at one instant.

    tools/failures_scenario.py PROTOCOL N F [AT_S] [RECOVER_S] > scenario.json

A timing-only model (no data), a star network, 1 ms iterations; workers 1..F fail at AT_S
(0.0005 s: during the first iteration) and recover at RECOVER_S if given. The run
stops at AT_S + 0.002 s, or RECOVER_S + 0.002 s, so its time is mostly the failures' handling:
issue 38's measure of the protocols' handling of many failures at one instant.
"""
import json
import sys


def scenario(proto, n, f, at_s=0.0005, recover_s=None):
    rule = {"kind": "failure", "workers": list(range(1, f + 1)), "at_s": at_s}
    if recover_s is not None:
        rule["recover_s"] = recover_s
    end = (recover_s if recover_s is not None else at_s) + 0.002
    return {
        "seed": 1,
        "workers": n,
        "compute": {"iteration_ms": 1},
        "stragglers": [rule],
        "network": {"bandwidth_gbps": 10, "latency_us": 5},
        "workload": {"model": {"name": "none"}, "message_bytes": 1000},
        "protocol": {"name": proto},
        "stop": {"time_s": end},
        "eval": {"every_s": end},
    }


def main(argv):
    if len(argv) < 4 or len(argv) > 6:
        sys.stderr.write(__doc__)
        return 2
    at = float(argv[4]) if len(argv) > 4 else 0.0005
    rec = float(argv[5]) if len(argv) > 5 else None
    json.dump(scenario(argv[1], int(argv[2]), int(argv[3]), at, rec), sys.stdout, indent=1)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
