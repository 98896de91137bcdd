#!/usr/bin/env python3
"""A sweep's index.csv and curves.csv read by pandas.read_csv with no reshaping: a column
per swept key with its values, seed, and the metrics as numbers. Skipped (exit 77) when
pandas is not installed (Debian: python3-pandas). Usage: tidy_pandas.py HETSIM"""
import os
import subprocess
import sys
import tempfile

try:
    import pandas as pd
except ImportError:
    # Debian's python3-pandas serves Debian's python3: another python3 first on PATH (a
    # pyenv, a venv) does not see it, so the script runs again under the system's.
    system = "/usr/bin/python3"
    if os.path.realpath(sys.executable) != os.path.realpath(system) and os.access(system, os.X_OK) \
            and subprocess.run([system, "-c", "import pandas"], capture_output=True).returncode == 0:
        os.execv(system, [system] + sys.argv)
    print("SKIP: python3-pandas is not installed")
    sys.exit(77)

BASE = """{ "seed": 5, "workers": 4, "compute": { "iteration_ms": 10 },
  "workload": { "dataset": { "name": "synthetic", "samples": 2000, "dim": 20, "classes": 4 },
                "model": { "name": "softmax" }, "batch": 32, "lr": 0.1 },
  "protocol": { "name": "allreduce" },
  "stop": { "time_s": 3 }, "eval": { "every_s": 1, "samples": 500 } }
"""

with tempfile.TemporaryDirectory() as tmp:
    with open(os.path.join(tmp, "base.json"), "w") as f:
        f.write(BASE)
    with open(os.path.join(tmp, "sw.json"), "w") as f:
        f.write('{ "base": "base.json", "grid": { "protocol.name": ["allreduce", "dpsgd"], '
                '"workload.lr": [0.05, 0.1] }, "seeds": 2, "output": { "dir": "%s/out" } }'
                % tmp)
    subprocess.run([sys.argv[1], "sweep", os.path.join(tmp, "sw.json"), "-j", "2",
                    "--quiet"], check=True)
    curves = pd.read_csv(os.path.join(tmp, "out", "curves.csv"))
    index = pd.read_csv(os.path.join(tmp, "out", "index.csv"))
    assert list(curves.columns[:4]) == ["point", "protocol.name", "workload.lr", "seed"], \
        curves.columns
    assert "test_accuracy" in curves.columns and "time_s" in curves.columns
    assert len(curves) == 8 * 4, len(curves)
    assert set(curves["protocol.name"]) == {"allreduce", "dpsgd"}
    assert curves["workload.lr"].dtype.kind == "f" and curves["test_accuracy"].dtype.kind == "f"
    assert curves["seed"].dtype.kind == "i"
    # One groupby gives a mean curve per protocol: no reshaping.
    mean = curves.groupby(["protocol.name", "time_s"])["test_accuracy"].mean()
    assert len(mean) == 2 * 4, mean
    assert list(index.columns[:5]) == ["point", "dir", "protocol.name", "workload.lr", "seed"]
    assert len(index) == 8 and index["final_accuracy"].dtype.kind == "f"
    print("ok: curves.csv %d rows, index.csv %d rows" % (len(curves), len(index)))
