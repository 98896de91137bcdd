#!/usr/bin/env python3
"""hetsim's Python package (python/hetsim, docs/torch.md): the results API reads a run and a
sweep as pandas DataFrames and runs a scenario given as a dict through the binary; the
package imports from the checkout and installs offline with pip. Skipped (77) without pandas.

usage: test_python.py HETSIM   (from the source root)
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

ROOT = os.getcwd()
sys.path.insert(0, os.path.join(ROOT, "python"))

try:
    import pandas  # noqa: F401
except ImportError:
    print("SKIP: no pandas (install the Debian package python3-pandas)")
    sys.exit(77)

import hetsim  # noqa: E402

HETSIM = None

SCENARIO = {
    "seed": 4, "workers": 3, "compute": {"iteration_ms": 10},
    "workload": {"dataset": {"name": "synthetic", "samples": 600, "test_samples": 100,
                             "dim": 5, "classes": 3},
                 "model": {"name": "softmax"}, "batch": 8},
    "protocol": {"name": "allreduce"}, "stop": {"time_s": 0.3},
    "eval": {"every_s": 0.1, "samples": 100},
}


class ResultsApi(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="hetsim-python-")

    def tearDown(self):
        shutil.rmtree(self.tmp)

    def test_a_scenario_dict_runs_through_the_binary_into_dataframes(self):
        r = hetsim.run(SCENARIO, out=os.path.join(self.tmp, "run"), binary=HETSIM)
        self.assertEqual(list(r.metrics.columns)[:3], ["time_s", "iterations", "samples"])
        self.assertEqual(len(r.metrics), 4)  # evaluations at 0, 0.1, 0.2, 0.3 s
        self.assertEqual(list(r.workers["worker"]), [0, 1, 2])
        self.assertEqual(r.summary["stop_reason"], "time")
        self.assertEqual(r.scenario["name"], "run")  # not the temporary file's
        self.assertEqual(r.scenario["workload"]["lr"], 0.05)  # resolved: defaults filled in
        again = hetsim.load(r.dir)
        self.assertIsInstance(again, hetsim.Run)
        self.assertTrue(again.metrics.equals(r.metrics))
        self.assertEqual([f for f in os.listdir(ROOT) if f.startswith(".hetsim-")], [])

    def test_a_run_json_nested_as_deep_as_hetsim_reads_it_loads(self):
        """A run.json of 1000 levels (hetsim's limit, a PyTorch module's argument 996 levels
        deep) raised RecursionError in Python's decoder, which stops near 990."""
        r = hetsim.run(SCENARIO, out=os.path.join(self.tmp, "run"), binary=HETSIM)
        path = os.path.join(r.dir, "run.json")
        with open(path) as f:
            text = f.read()
        deep = "[" * 998 + "]" * 998
        with open(path, "w") as f:
            f.write(text.replace('"scenario": {', '"scenario": {"x": %s, ' % deep, 1))
        again = hetsim.load(r.dir)
        self.assertEqual(again.scenario["workers"], 3)
        self.assertEqual(len(again.scenario["x"]), 1)

    def test_a_failed_run_raises_with_hetsims_exit_code_and_message(self):
        bad = dict(SCENARIO, workers=0)
        with self.assertRaises(hetsim.RunError) as e:
            hetsim.run(bad, out=os.path.join(self.tmp, "run"), binary=HETSIM)
        self.assertEqual(e.exception.status, 2)
        self.assertIn("$.workers", e.exception.stderr)

    def test_a_sweep_loads_its_index_curves_and_runs(self):
        base = os.path.join(self.tmp, "base.json")
        with open(base, "w") as f:
            json.dump(SCENARIO, f)
        sweep = os.path.join(self.tmp, "sweep.json")
        with open(sweep, "w") as f:
            json.dump({"base": "base.json", "grid": {"protocol.name": ["allreduce", "adpsgd"]},
                       "seeds": 2, "output": {"dir": os.path.join(self.tmp, "out")}}, f)
        subprocess.run([HETSIM, "sweep", sweep, "--quiet"], check=True)
        s = hetsim.load(os.path.join(self.tmp, "out"))
        self.assertIsInstance(s, hetsim.Sweep)
        self.assertEqual(len(s.index), 4)
        self.assertEqual(sorted(set(s.curves["protocol.name"])), ["adpsgd", "allreduce"])
        self.assertEqual(len(s.curves), 4 * 4)
        first = s.run(int(s.index["point"].iloc[0]))
        self.assertEqual(len(first.metrics), 4)
        self.assertEqual(len(list(s.runs())), 4)


def have_pip():
    return subprocess.run([sys.executable, "-m", "pip", "--version"],
                          capture_output=True).returncode == 0


class Install(unittest.TestCase):
    @unittest.skipUnless(have_pip(), "no pip (install the Debian package python3-pip)")
    def test_the_package_installs_offline_with_pip(self):
        tmp = tempfile.mkdtemp(prefix="hetsim-pip-")
        try:
            src = os.path.join(tmp, "python")  # pip builds in place: a copy, not the checkout
            shutil.copytree(os.path.join(ROOT, "python"), src,
                            ignore=shutil.ignore_patterns("__pycache__", "build", "*.egg-info"))
            target = os.path.join(tmp, "site")
            subprocess.run([sys.executable, "-m", "pip", "install", "--no-index", "--quiet",
                            "--disable-pip-version-check", "--target", target, src],
                           check=True, env=dict(os.environ, PIP_ROOT_USER_ACTION="ignore"))
            where = subprocess.run([sys.executable, "-c", "import hetsim, hetsim.server; "
                                    "print(hetsim.__file__)"], cwd=tmp, check=True,
                                   capture_output=True, text=True,
                                   env=dict(os.environ, PYTHONPATH=target)).stdout
            self.assertTrue(where.startswith(target), where)
        finally:
            shutil.rmtree(tmp)


if __name__ == "__main__":
    HETSIM = os.path.abspath(sys.argv.pop(1))
    unittest.main()
